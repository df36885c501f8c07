//! Live streams through a pipe (issue 20, item 4): every time point before the latest time
//! read is complete and printed at once, gaps included — before the next line arrives, on a
//! signal, on an input error, and in `intervals` mode. Each test writes part of a stream,
//! waits (with a deadline) for the output that part completes, and only then writes on; a
//! run that holds the output back until the next line fails at the deadline.

mod common;

use std::io::Write;
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc::Receiver;
use std::time::{Duration, Instant};

use common::{lines_of, stgflow};

const DEVICE_SAFETY: &str = "datasets/examples/device_safety.tdl";

/// How long a test waits for a line the input so far completes.
const PATIENCE: Duration = Duration::from_secs(30);

/// The engines every test runs on: both dataflow shapes (and with the output formatted
/// on the workers), the reference and the STG.
const ENGINES: [&[&str]; 5] = [
    &["--engine", "dataflow", "-w", "1"],
    &["--engine", "dataflow", "-w", "2"],
    &["--engine", "dataflow", "-w", "2", "--format-on-workers"],
    &["--engine", "reference"],
    &["--engine", "stg"],
];

/// A live run of device_safety.tdl over stdin with `extra` flags.
struct Live {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    seen: Vec<String>,
    what: String,
}

impl Live {
    fn start(extra: &[&str]) -> Live {
        let mut child = stgflow()
            .args(["run", DEVICE_SAFETY, "-"])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let stdin = child.stdin.take();
        let lines = lines_of(&mut child);
        Live {
            child,
            stdin,
            lines,
            seen: Vec::new(),
            what: extra.join(" "),
        }
    }

    /// Writes `text` to the run's stdin, without closing it.
    fn write(&mut self, text: &str) {
        let stdin = self
            .stdin
            .as_mut()
            .unwrap_or_else(|| panic!("stdin closed"));
        stdin
            .write_all(text.as_bytes())
            .and_then(|()| stdin.flush())
            .unwrap_or_else(|e| panic!("{}: {e}", self.what));
    }

    /// Waits until the run has printed `line` (collecting what comes before it).
    fn expect(&mut self, line: &str) {
        let deadline = Instant::now() + PATIENCE;
        while !self.seen.iter().any(|seen| seen == line) {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(next) => self.seen.push(next),
                Err(_) => {
                    let _ = self.child.kill();
                    panic!(
                        "{}: `{line}` not printed while the next line is awaited; printed so far: {:?}",
                        self.what, self.seen
                    );
                }
            }
        }
    }

    /// Closes stdin (unless `signal` is given, which is sent instead) and waits for the
    /// exit; returns the exit code, everything printed, and stderr.
    fn end(mut self, signal: Option<&str>) -> (Option<i32>, Vec<String>, String) {
        match signal {
            Some(name) => {
                let status = std::process::Command::new("kill")
                    .arg(format!("-{name}"))
                    .arg(self.child.id().to_string())
                    .status()
                    .unwrap_or_else(|e| panic!("kill: {e}"));
                assert!(status.success(), "kill -{name} failed");
            }
            None => drop(self.stdin.take()),
        }
        let deadline = Instant::now() + PATIENCE;
        let status = loop {
            if let Some(status) = self.child.try_wait().unwrap_or_else(|e| panic!("{e}")) {
                break status;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("{}: the run did not exit", self.what);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        self.seen.extend(self.lines.iter());
        let mut stderr = String::new();
        if let Some(mut pipe) = self.child.stderr.take() {
            let _ = std::io::Read::read_to_string(&mut pipe, &mut stderr);
        }
        drop(self.stdin.take());
        (status.code(), self.seen, stderr)
    }
}

/// Input at 1, then 10: time points 2..9 are complete once 10 is read, so `+safe(d1) @2`
/// is printed then, not when a later time arrives.
#[test]
fn a_gap_is_printed_when_the_time_after_it_is_read() {
    for engine in ENGINES {
        let mut live = Live::start(&[engine, &["--mode", "changes"]].concat());
        live.write("repair(d1,1).\nrepair(d3,10).\n");
        live.expect("+trusted(d1) @4");
        live.write("repair(d3,20).\n");
        live.expect("+safe(d3) @11");
        let (code, seen, stderr) = live.end(None);
        assert_eq!(code, Some(0), "{engine:?}: {stderr}");
        assert_eq!(
            seen,
            [
                "+safe(d1) @2",
                "+trusted(d1) @4",
                "+safe(d3) @11",
                "+trusted(d3) @13"
            ],
            "{engine:?}"
        );
    }
}

/// Input at 1 and 3, then SIGTERM while the run waits for more: time point 2 is complete
/// and printed; 3 (which may still get facts) is not; the exit code is 143.
#[test]
fn sigterm_after_a_gap_keeps_the_time_points_in_it() {
    for engine in ENGINES {
        let mut live = Live::start(engine);
        live.write("repair(d1,1).\nrepair(d3,3).\n");
        live.expect("safe(d1,2).");
        let (code, seen, stderr) = live.end(Some("TERM"));
        assert_eq!(code, Some(143), "{engine:?}: {stderr}");
        assert_eq!(seen, ["safe(d1,2)."], "{engine:?}");
        assert!(
            stderr.contains("stopped by SIGTERM"),
            "{engine:?}: {stderr}"
        );
    }
}

/// Input at 1 and 5, then a time going back to 3: E102 stops the run (exit 1), after the
/// complete time points 1..=4 have been printed.
#[test]
fn a_time_going_back_stops_the_run_after_the_complete_time_points() {
    for engine in ENGINES {
        let mut live = Live::start(engine);
        live.write("repair(d1,1).\nrepair(d3,5).\n");
        live.expect("safe(d1,4).");
        live.write("repair(d3,3).\n");
        let (code, seen, stderr) = live.end(None);
        assert_eq!(code, Some(1), "{engine:?}: {stderr}");
        assert_eq!(
            seen,
            [
                "safe(d1,2).",
                "safe(d1,3).",
                "safe(d1,4).",
                "trusted(d1,4)."
            ],
            "{engine:?}"
        );
        assert!(stderr.contains("error[E102]"), "{engine:?}: {stderr}");
        assert!(stderr.contains("<stdin>:3:1"), "{engine:?}: {stderr}");
    }
}

/// `--mode intervals` on a live stream: each interval is printed when it closes, not at the
/// end of the input.
#[test]
fn intervals_are_printed_as_they_close_on_a_live_stream() {
    for engine in ENGINES {
        let mut live = Live::start(&[engine, &["--mode", "intervals"]].concat());
        live.write("repair(d1,1).\nwarning(d1,3).\nrepair(d3,10).\n");
        live.expect("safe(d1) [2,4)");
        live.write("repair(d3,12).\nwarning(d3,14).\nrepair(d3,20).\n");
        live.expect("trusted(d3) [13,15)");
        let (code, seen, stderr) = live.end(None);
        assert_eq!(code, Some(0), "{engine:?}: {stderr}");
        assert_eq!(
            seen,
            ["safe(d1) [2,4)", "safe(d3) [11,15)", "trusted(d3) [13,15)"],
            "{engine:?}"
        );
    }
}

/// `--output-dir` on a live stream (one part, part 0): each file is flushed at every time point, so what the
/// input so far completes is in the files before the next line arrives.
#[test]
fn output_files_are_written_as_time_points_complete_on_a_live_stream() {
    for engine in ENGINES {
        let dir = common::tempdir();
        let out = dir.join("out").to_string_lossy().into_owned();
        let flags = [engine, &["--mode", "changes", "--output-dir", &out]].concat();
        let mut live = Live::start(&flags);
        live.write("repair(d1,1).\nrepair(d3,10).\n");
        let file = dir.join("out/trusted/part-00000.facts");
        let deadline = Instant::now() + PATIENCE;
        while std::fs::read_to_string(&file).unwrap_or_default() != "+trusted(d1) @4\n" {
            assert!(
                Instant::now() < deadline,
                "{engine:?}: {} holds {:?} while the next line is awaited",
                file.display(),
                std::fs::read_to_string(&file)
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let (code, seen, stderr) = live.end(None);
        assert_eq!(code, Some(0), "{engine:?}: {stderr}");
        assert!(seen.is_empty(), "{engine:?}: nothing on stdout: {seen:?}");
        assert_eq!(
            std::fs::read_to_string(dir.join("out/safe/part-00000.facts")).unwrap_or_default(),
            "+safe(d1) @2\n",
            "{engine:?}"
        );
    }
}
