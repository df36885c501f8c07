//! Standard output's file with its disk space reserved ahead of the writes.
//!
//! Laser's output repeats every fact of a window at every time point, so it runs to
//! hundreds of megabytes, and written into an ext4 file with delayed allocation each
//! 4 KiB page reserves its blocks on its own (`ext4_da_write_begin`). Space reserved
//! beforehand in large extents (`fallocate`, keeping the file's size) spares that
//! per-page work. What is reserved past the last byte written is given back when the
//! output ends, so the file takes the space its bytes need; a process killed before then
//! leaves it reserved past the file's end (`du` counts it; the file's contents and size
//! are unaffected).
//!
//! Only for a regular file written at its end and not opened to append: giving back the
//! space past the end cuts the file at its size, which would race with another process
//! appending to it.

use std::fs::File;
use std::io::{self, Seek, Write};
use std::os::fd::AsFd;

use nix::fcntl::{FallocateFlags, fallocate};

/// The least and the most reserved at once: each reservation is what was written so far,
/// within these bounds, so that a short output reserves little.
const LEAST: u64 = 1 << 20;
const MOST: u64 = 64 << 20;

/// A file whose space is reserved ahead of the writes (see the module docs).
#[derive(Debug)]
pub struct Reserving {
    file: File,
    /// Where the file's writes go next, and where reserved space ends.
    at: u64,
    reserved: u64,
    /// Where the writes began: what was written is `at - start`.
    start: u64,
    /// Whether space is still reserved: not after a reservation failed (a file system
    /// without `fallocate`, say), nor for a file written elsewhere than at its end.
    on: bool,
}

impl Reserving {
    /// `file`, its space reserved ahead of the writes where it is a regular file written
    /// at its end and not opened to append; where not, it is written as it is.
    pub fn new(mut file: File) -> Reserving {
        let at = file.stream_position().unwrap_or(0);
        let on = file.metadata().is_ok_and(|m| m.is_file() && m.len() == at) && !appends(&file);
        Reserving {
            file,
            at,
            reserved: at,
            start: at,
            on,
        }
    }

    /// Reserves space for `len` more bytes at `at`, and more ahead.
    fn reserve(&mut self, len: u64) {
        let end = self.at.saturating_add(len);
        if !self.on || end <= self.reserved {
            return;
        }
        let ahead = (self.at - self.start).clamp(LEAST, MOST);
        let to = end.saturating_add(ahead);
        let (Ok(from), Ok(span)) = (
            i64::try_from(self.reserved),
            i64::try_from(to - self.reserved),
        ) else {
            self.on = false;
            return;
        };
        match fallocate(
            self.file.as_fd(),
            FallocateFlags::FALLOC_FL_KEEP_SIZE,
            from,
            span,
        ) {
            Ok(()) => self.reserved = to,
            Err(_) => self.on = false,
        }
    }
}

impl Write for Reserving {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.reserve(buf.len() as u64);
        let written = self.file.write(buf)?;
        self.at += written as u64;
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

impl Drop for Reserving {
    /// Gives back what was reserved past the file's end: the file is cut to its size
    /// now (which other writers to the same open file, standard error, say, may have
    /// moved past `at`), which keeps its bytes and frees the blocks past them (ext4
    /// leaves blocks past the end to a cut; punching a hole there does nothing).
    fn drop(&mut self) {
        if self.reserved <= self.start {
            return;
        }
        if let Ok(meta) = self.file.metadata() {
            let _ = self.file.set_len(meta.len());
        }
    }
}

/// Whether `file` was opened to append.
fn appends(file: &File) -> bool {
    use nix::fcntl::{FcntlArg, OFlag, fcntl};
    fcntl(file.as_fd(), FcntlArg::F_GETFL).map_or(true, |flags| {
        OFlag::from_bits_truncate(flags).contains(OFlag::O_APPEND)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    /// Written in pieces past several reservations: the file holds exactly the bytes
    /// written, and once the writer is dropped it takes no more space than they need
    /// (rounded up to its blocks).
    #[test]
    fn the_file_holds_what_was_written_and_gives_back_the_rest() {
        let dir = std::env::temp_dir().join(format!("stgflow-reserve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out");
        let mut want = Vec::new();
        {
            let mut out = Reserving::new(File::create(&path).unwrap());
            for i in 0..3000u32 {
                let line = format!("{i}: {}\n", "p(a,b) ".repeat((i % 300) as usize));
                out.write_all(line.as_bytes()).unwrap();
                want.extend_from_slice(line.as_bytes());
            }
            // Where the file system reserves space at all (ext4, xfs and tmpfs do).
            let probe = File::create(dir.join("probe")).unwrap();
            let flags = FallocateFlags::FALLOC_FL_KEEP_SIZE;
            if fallocate(probe.as_fd(), flags, 0, 4096).is_ok() {
                assert!(
                    out.reserved >= out.at,
                    "space is reserved ahead of the writes"
                );
            }
        }
        let got = std::fs::read(&path).unwrap();
        assert_eq!(got.len(), want.len());
        assert!(got == want, "the file's bytes are those written");
        let meta = std::fs::metadata(&path).unwrap();
        // st_blocks counts 512-byte units; allow one file-system block of rounding.
        assert!(
            meta.blocks() * 512 <= want.len() as u64 + meta.blksize(),
            "{} bytes allocated for {} written",
            meta.blocks() * 512,
            want.len()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file opened to append, or written before its end, reserves nothing.
    #[test]
    fn appending_or_overwriting_reserves_nothing() {
        let dir = std::env::temp_dir().join(format!("stgflow-reserve-a-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("out");
        std::fs::write(&path, b"before\n").unwrap();
        let appending = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        assert!(!Reserving::new(appending).on);
        let overwriting = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        assert!(!Reserving::new(overwriting).on);
        let mut out = Reserving::new(File::create(&path).unwrap());
        assert!(out.on);
        out.write_all(b"after\n").unwrap();
        drop(out);
        assert_eq!(std::fs::read(&path).unwrap(), b"after\n");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
