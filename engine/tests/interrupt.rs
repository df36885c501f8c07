//! Stop requests ([`stgflow_io::interrupt`]) are process-wide, so they are tested in a
//! binary of their own.

use std::io::{self, Read};

use stgflow_io::interrupt::{Interruptible, Stop, request, requested};

/// A reader that never returns: it blocks its thread, not the `Interruptible`.
struct Never;

impl Read for Never {
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        loop {
            std::thread::park();
        }
    }
}

#[test]
fn reads_through_ends_and_a_stop_wakes_a_blocked_read() {
    let mut reader = Interruptible::new(io::Cursor::new(b"a(1).\nb(2).\n".to_vec()));
    let mut text = String::new();
    reader
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(text, "a(1).\nb(2).\n");
    assert_eq!(requested(), None);

    let waker = std::thread::spawn(|| {
        std::thread::sleep(std::time::Duration::from_millis(50));
        request(Stop::Signal(15));
        request(Stop::Signal(2));
    });
    let mut reader = Interruptible::new(Never);
    let mut buffer = [0u8; 8];
    let error = reader.read(&mut buffer).err();
    assert_eq!(error.map(|e| e.kind()), Some(io::ErrorKind::Other));
    waker.join().unwrap_or_else(|_| panic!("the waker failed"));
    // The first reason wins.
    assert_eq!(requested(), Some(Stop::Signal(15)));
}
