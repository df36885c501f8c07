//! Flag traps found trying the command line as a new user would (the user-features issue,
//! item 4): each fails on the code before the fix.

mod common;

use std::process::Output;

use common::stgflow;

const PROGRAM: &str = "datasets/examples/device_safety.tdl";
const STREAM: &str = "datasets/examples/device_safety.facts";

fn run(args: &[&str]) -> Output {
    stgflow()
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn a_bare_h_shows_the_help_and_h_with_a_file_is_still_the_hostfile() {
    for args in [
        &["run", "-h"][..],
        &["run", PROGRAM, "-h"],
        &["run", PROGRAM, "-h", "--mode", "changes"],
    ] {
        let output = run(args);
        assert!(
            output.status.success(),
            "{args:?}: {}",
            text(&output.stderr)
        );
        assert!(
            text(&output.stdout).contains("Usage: stgflow run"),
            "{args:?}: {}",
            text(&output.stdout)
        );
    }
    let output = run(&[
        "run",
        PROGRAM,
        STREAM,
        "-h",
        "/nonexistent/hosts",
        "-n",
        "2",
    ]);
    assert!(!output.status.success());
    assert!(
        text(&output.stderr).contains("/nonexistent/hosts"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn zero_workers_or_processes_are_refused() {
    for flag in ["-w", "-n"] {
        let output = run(&["run", PROGRAM, STREAM, flag, "0"]);
        assert_eq!(output.status.code(), Some(2), "{flag} 0");
        assert!(
            text(&output.stderr).contains("must be at least 1"),
            "{}",
            text(&output.stderr)
        );
    }
}

#[test]
fn an_empty_timeline_is_an_error_not_an_empty_run() {
    for command in ["run", "explain"] {
        let mut args = vec![command, PROGRAM, STREAM];
        if command == "explain" {
            args.push("safe(d1,2)");
        }
        args.extend(["--from", "10", "--until", "5"]);
        let output = run(&args);
        assert_eq!(output.status.code(), Some(1), "{command}");
        assert!(
            text(&output.stderr).contains("--from 10 is after --until 5"),
            "{}",
            text(&output.stderr)
        );
    }
}

#[test]
fn workers_on_a_single_threaded_engine_are_refused() {
    for engine in ["stg", "reference"] {
        let output = run(&["run", PROGRAM, STREAM, "--engine", engine, "-w", "4"]);
        assert_eq!(output.status.code(), Some(1), "{engine}");
        assert!(
            text(&output.stderr).contains("dataflow engine's"),
            "{}",
            text(&output.stderr)
        );
    }
}

#[test]
fn check_verbose_summarises_and_quiet_prints_nothing() {
    let output = run(&["check", "-v", PROGRAM]);
    assert!(output.status.success());
    let stderr = text(&output.stderr);
    assert!(
        stderr.contains("3 rules, 4 predicates, 2 strata, history of 2 time points; 2 input-only predicates, 1 temporal SCC")
            && stderr.contains("dataflow plan: 1 persist, 1 window"),
        "{stderr}"
    );
    let output = run(&["check", "-q", PROGRAM]);
    assert!(output.status.success());
    assert_eq!(text(&output.stdout), "");
    assert_eq!(text(&output.stderr), "");
}
