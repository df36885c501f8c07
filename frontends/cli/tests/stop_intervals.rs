//! A run cut short by an input error or SIGINT ends its output where it stopped, as the
//! input's end would: in `--mode intervals` the intervals still open are printed, ending
//! after the last complete time point, on every path (one worker, shards, the reference
//! and STG evaluators). The oracle is the same run with `--until` that time point.

mod common;

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{stgflow, tempdir};

const DEVICE_SAFETY: &str = "datasets/examples/device_safety.tdl";

/// The paths a run can take: the threaded worker, shards by key, the two evaluators.
const PATHS: [&[&str]; 4] = [
    &["-w", "1"],
    &["-w", "3"],
    &["--engine", "reference"],
    &["--engine", "stg"],
];

/// At even t device d(t/2 mod 50) is repaired, at odd t the device 25 places on is
/// warned: each device is safe for about 50 time points at a time, and about half of them
/// are safe at any time point, their intervals open when the stream stops.
fn repairs_and_warnings(points: std::ops::Range<u64>) -> String {
    let mut text = String::new();
    for t in points {
        let (event, device) = match t % 2 {
            0 => ("repair", (t / 2) % 50),
            _ => ("warning", (t / 2 + 25) % 50),
        };
        text.push_str(&format!("{event}(d{device}, {t}).\n"));
    }
    text
}

/// The number after `marker` in `text`.
fn number_after(text: &str, marker: &str) -> u64 {
    (text.split(marker).nth(1))
        .map(|rest| {
            rest.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
        })
        .and_then(|digits| digits.parse().ok())
        .unwrap_or_else(|| panic!("no `{marker}` and a number in: {text}"))
}

/// `stgflow run DEVICE_SAFETY stream --mode intervals --until until`, by the reference
/// evaluator: the output of the run cut at `until`.
fn cut_at(stream: &Path, until: u64) -> String {
    let output = stgflow()
        .args(["run", DEVICE_SAFETY])
        .arg(stream)
        .args(["--mode", "intervals", "--engine", "reference", "--until"])
        .arg(until.to_string())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(output.status.success());
    String::from_utf8(output.stdout).unwrap_or_else(|e| panic!("{e}"))
}

/// An input error on the line after time point 19's (which might have gone on): every
/// path prints the intervals of time points 0..=18, those still open ending at 19, exits
/// 1, and `--stats-json` says so. (Short: the STG evaluator's graph grows with the stream
/// under recursion through time.)
#[test]
fn an_input_error_ends_the_open_intervals_at_the_last_complete_time_point() {
    let dir = tempdir();
    let (good, bad) = (dir.join("good.facts"), dir.join("bad.facts"));
    std::fs::write(&good, repairs_and_warnings(0..20)).unwrap_or_else(|e| panic!("{e}"));
    let mut text = repairs_and_warnings(0..20);
    text.push_str("repair(d1 20).\n");
    text.push_str(&repairs_and_warnings(20..40));
    std::fs::write(&bad, text).unwrap_or_else(|e| panic!("{e}"));
    let expected = cut_at(&good, 18);
    assert!(expected.ends_with(",19)\n"), "{expected}");
    for path in PATHS {
        let json = dir.join("stats.json");
        let output = stgflow()
            .args(["run", DEVICE_SAFETY])
            .arg(&bad)
            .args(["--mode", "intervals", "--stats-json"])
            .arg(&json)
            .args(path)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{path:?}: {stderr}");
        assert!(stderr.contains("bad.facts:21:"), "{path:?}: {stderr}");
        assert!(
            String::from_utf8_lossy(&output.stdout) == expected,
            "{path:?}: not the run cut at time point 18"
        );
        let report = std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            report.starts_with("{\"stopped\":\"an input error\",\"last_written\":18,"),
            "{path:?}: {report}"
        );
    }
}

/// SIGINT while the run writes: it exits 130 and its output is exactly the run cut at
/// the time point its message names, the intervals open there included. The test stops
/// reading after the first 64 KiB, so the run waits at the pipe until the signal is sent.
/// (Not the STG evaluator, which stops on its own long before.)
#[test]
fn sigint_ends_the_open_intervals_where_the_run_stopped() {
    let dir = tempdir();
    let stream = dir.join("events.facts");
    std::fs::write(&stream, repairs_and_warnings(0..200_000)).unwrap_or_else(|e| panic!("{e}"));
    for &path in &PATHS[..3] {
        let json = dir.join("stats.json");
        let mut child = stgflow()
            .args(["run", DEVICE_SAFETY])
            .arg(&stream)
            .args(["--mode", "intervals", "--stats-json"])
            .arg(&json)
            .args(path)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let mut stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let mut written = vec![0u8; 1 << 16];
        stdout
            .read_exact(&mut written)
            .unwrap_or_else(|e| panic!("{path:?}: no 64 KiB of output: {e}"));
        let status = Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .unwrap_or_else(|e| panic!("kill: {e}"));
        assert!(status.success());
        stdout
            .read_to_end(&mut written)
            .unwrap_or_else(|e| panic!("{e}"));
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(status) = child.try_wait().unwrap_or_else(|e| panic!("{e}")) {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("{path:?}: no exit within 60 s of SIGINT");
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let mut stderr = String::new();
        if let Some(mut pipe) = child.stderr.take() {
            let _ = pipe.read_to_string(&mut stderr);
        }
        assert_eq!(status.code(), Some(130), "{path:?}: {stderr}");
        let last = number_after(&stderr, "after time point ");
        let written = String::from_utf8(written).unwrap_or_else(|e| panic!("{e}"));
        let expected = cut_at(&stream, last);
        assert!(
            expected.ends_with(&format!(",{})\n", last + 1)),
            "{path:?}: no interval open at {last}"
        );
        assert!(
            written == expected,
            "{path:?}: not the run cut at time point {last}"
        );
        let report = std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            report.contains(&format!("\"stopped\":\"SIGINT\",\"last_written\":{last},")),
            "{path:?}: {report}"
        );
    }
}
