//! The `stgflow` command. Everything but process setup lives in the library, so that the
//! golden tests drive the same code in-process.

use std::io::{BufReader, IsTerminal};

use stgflow_io::interrupt::{self, Interruptible, Stop};

#[global_allocator]
static GLOBAL: stgflow_alloc::Allocator = stgflow_alloc::Allocator;

fn main() {
    let color = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
    watch_signals();
    // stdin is read on its own thread (once read at all), so that a signal wakes a run
    // waiting for a live stream's next line.
    let stdin = BufReader::with_capacity(1 << 16, Interruptible::new(std::io::stdin()));
    // Unlocked handles (stdout as its file where it has one): worker threads (and timely)
    // may write too; holding the locks for the whole run would deadlock them.
    let (stdout, stdout_file) = stdout();
    let stderr = std::io::stderr();
    // `explain` runs on a thread with a deep stack: it follows a fact back through every
    // time point it held (a derivation per time point of an inertia chain, recursively),
    // and a fact held over tens of thousands of points overflows the main thread's
    // stack. The stack is reserved, not touched. Only `explain`: `run` is slower on a
    // spawned thread (its calling thread feeds and merges; why is not known).
    let explain = std::env::args_os()
        .skip(1)
        .find(|a| !a.to_string_lossy().starts_with('-'))
        .is_some_and(|a| a == "explain");
    let streams = stgflow_cli::Streams {
        color,
        stdout_file,
        records: false,
        tables: Vec::new(),
    };
    let command = move || stgflow_cli::run(std::env::args_os(), stdin, stdout, stderr, streams);
    let code = if explain {
        match std::thread::Builder::new()
            .name("stgflow".to_owned())
            .stack_size(STACK)
            .spawn(command)
        {
            Ok(handle) => handle.join().unwrap_or(101),
            Err(e) => {
                eprintln!("stgflow: cannot start the command's thread: {e}");
                1
            }
        }
    } else {
        command()
    };
    std::process::exit(code);
}

/// Standard output as its file, where it has one: the run's output goes through a buffer
/// of its own (`stgflow_io::sink::Buffered`), whose writes end wherever its pieces do, and
/// std's `Stdout`, a line buffer, would write each such write up to its last newline and
/// the rest (often a time point's `t:`) in a `write` call of its own, of a few bytes.
/// With it, whether it is a regular file (`stgflow_cli::Streams::stdout_file`).
fn stdout() -> (Box<dyn std::io::Write + Send>, bool) {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        if let Ok(fd) = std::io::stdout().as_fd().try_clone_to_owned() {
            let file = std::fs::File::from(fd);
            let regular = file.metadata().is_ok_and(|meta| meta.is_file());
            return (
                Box::new(stgflow_cli::reserve::Reserving::new(file)),
                regular,
            );
        }
    }
    (Box::new(std::io::stdout()), false)
}

/// The stack of `explain`'s thread (see `main`).
const STACK: usize = 1 << 30;

/// How long a run has, after a signal, to stop cleanly.
const GRACE: std::time::Duration = std::time::Duration::from_secs(10);

/// SIGINT and SIGTERM: during a run, the run stops before the next time point, writes
/// and flushes the output of every completed one and exits with 130 or 143. A second
/// signal, one outside a run, or a run still going after [`GRACE`] ends the process with
/// that code at once.
fn watch_signals() {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("stgflow:signals".to_owned())
        .spawn(move || {
            for signal in signals.forever() {
                if !interrupt::listening() || interrupt::requested().is_some() {
                    std::process::exit(128 + signal);
                }
                interrupt::request(Stop::Signal(signal));
                // A worker in one long step (building a huge dataflow, say) cannot stop
                // at once; the output written so far is flushed (see the runtime), and
                // after a grace period the process ends anyway.
                let _ = std::thread::Builder::new()
                    .name("stgflow:grace".to_owned())
                    .spawn(move || {
                        std::thread::sleep(GRACE);
                        eprintln!(
                            "stgflow: the run did not stop within {} s of the signal; exiting",
                            GRACE.as_secs()
                        );
                        std::process::exit(128 + signal);
                    });
            }
        });
}
