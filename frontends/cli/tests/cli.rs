//! The `stgflow` binary end to end: real processes, real files, pipes.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn stgflow() -> Command {
    let mut command =
        Command::cargo_bin("stgflow").unwrap_or_else(|e| panic!("no stgflow binary: {e}"));
    command.current_dir(root());
    command
}

fn sorted(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

#[test]
fn device_safety_example_runs_end_to_end() {
    let output = stgflow()
        .args([
            "run",
            "datasets/examples/device_safety.tdl",
            "datasets/examples/device_safety.facts",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let expected =
        std::fs::read_to_string(root().join("tests/cases/examples/device_safety.expected"))
            .unwrap_or_default();
    assert!(!expected.is_empty());
    assert_eq!(
        sorted(&String::from_utf8_lossy(&output.stdout)),
        sorted(&expected)
    );
}

#[test]
fn help_explains_the_commands() {
    let output = stgflow()
        .arg("--help")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("run") && text.contains("check"), "{text}");
    let output = stgflow()
        .args(["run", "--help"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let text = String::from_utf8_lossy(&output.stdout);
    for flag in [
        "--engine", "--mode", "--output", "--format", "--from", "--until",
    ] {
        assert!(text.contains(flag), "{flag} missing from run --help");
    }
}

#[test]
fn an_invalid_program_exits_1_with_a_located_diagnostic() {
    let dir = tempdir();
    let program = dir.join("bad.tdl");
    std::fs::write(&program, "p(X, T) :- q(T).\n").unwrap_or_else(|e| panic!("{e}"));
    let output = stgflow()
        .arg("run")
        .arg(&program)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("E002") && stderr.contains("bad.tdl:1:1"),
        "{stderr}"
    );
    assert!(!stderr.contains("panicked"));
}

#[test]
fn usage_errors_exit_2() {
    let output = stgflow()
        .args(["run"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(output.status.code(), Some(2));
    let output = stgflow()
        .args(["run", "x.tdl", "--mode", "sideways"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn a_missing_file_is_a_clear_error() {
    let output = stgflow()
        .args(["run", "no/such/program.tdl"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("cannot read no/such/program.tdl"));
}

#[test]
fn a_bad_line_keeps_the_output_of_completed_time_points() {
    let dir = tempdir();
    let program = dir.join("p.tdl");
    let stream = dir.join("s.facts");
    std::fs::write(&program, "seen(X, T) :- q(X, T).\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&stream, "q(a, 1).\nq(b, 2).\nq(c, 3).\nq(d 4).\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let output = stgflow()
        .arg("run")
        .arg(&program)
        .arg(&stream)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(output.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "seen(a,1).\nseen(b,2).\n"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("s.facts:4:5"), "{stderr}");
}

/// Feeds stdin one time point at a time and reads each time point's output before
/// sending the next but one.
#[test]
fn live_stdin_prints_each_time_point_once_the_next_arrives() {
    let dir = tempdir();
    let program = dir.join("p.tdl");
    std::fs::write(
        &program,
        "up(X, T) :- tick(X, T).\ntwice(X, T) :- tick(X, T), tick(X, T-1).\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut child = stgflow()
        .arg("run")
        .arg(&program)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let (lines_tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if lines_tx.send(line).is_err() {
                break;
            }
        }
    });
    let receive = |expected: &str| {
        let line = lines
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|e| panic!("no output for `{expected}`: {e}"));
        assert_eq!(line, expected);
    };
    writeln!(stdin, "tick(c, 1).").unwrap_or_else(|e| panic!("{e}"));
    stdin.flush().unwrap_or_else(|e| panic!("{e}"));
    for t in 2..=5u64 {
        writeln!(stdin, "tick(c, {t}).").unwrap_or_else(|e| panic!("{e}"));
        stdin.flush().unwrap_or_else(|e| panic!("{e}"));
        // Time point t-1 is complete now; its output must arrive before we send t+1.
        let done = t - 1;
        if done > 1 {
            receive(&format!("twice(c,{done})."));
        }
        receive(&format!("up(c,{done})."));
    }
    drop(stdin);
    receive("twice(c,5).");
    receive("up(c,5).");
    let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
    assert!(status.success());
}

#[test]
fn a_closed_stdout_ends_the_run_quietly() {
    let dir = tempdir();
    let program = dir.join("p.tdl");
    std::fs::write(&program, "on(T) :- not off(T).\n").unwrap_or_else(|e| panic!("{e}"));
    let mut child = stgflow()
        .arg("run")
        .arg(&program)
        .args(["--from", "0", "--until", "100000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let mut first = String::new();
    BufReader::new(stdout)
        .read_line(&mut first)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(first, "on(0).\n");
    let output = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    assert!(output.status.success(), "{:?}", output.status);
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn check_dumps_the_stages() {
    let output = stgflow()
        .args([
            "check",
            "datasets/examples/device_safety.tdl",
            "--dump",
            "strata",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(output.status.success());
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("input only: repair, warning"), "{text}");
    assert!(text.contains("stratum 0: safe"), "{text}");
    assert!(
        text.contains("{safe} defined by r0 r1; cycle through r1"),
        "{text}"
    );
    assert!(text.contains("safe: 2"), "{text}");
}

fn tempdir() -> PathBuf {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "stgflow-cli-test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    dir
}

/// Two processes of a timely cluster on loopback compute the same output as the reference
/// evaluator; process 1 prints nothing.
#[test]
fn two_processes_on_loopback_equal_the_reference() {
    let ports: Vec<u16> = (0..2)
        .map(|_| {
            std::net::TcpListener::bind("127.0.0.1:0")
                .and_then(|l| l.local_addr())
                .map(|a| a.port())
                .unwrap_or_else(|e| panic!("{e}"))
        })
        .collect();
    let dir = tempdir();
    let hostfile = dir.join("hosts");
    std::fs::write(
        &hostfile,
        format!("127.0.0.1:{}\n127.0.0.1:{}\n", ports[0], ports[1]),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let args = [
        "run",
        "datasets/examples/device_safety.tdl",
        "datasets/examples/device_safety.facts",
        "--mode",
        "intervals",
    ];
    let spawn = |index: usize| {
        stgflow()
            .args(args)
            .args(["-w", "2", "-n", "2", "-p", &index.to_string(), "-h"])
            .arg(&hostfile)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let mut children = vec![spawn(0), spawn(1)];
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while children
        .iter_mut()
        .any(|c| c.try_wait().ok().flatten().is_none())
    {
        if std::time::Instant::now() > deadline {
            for child in &mut children {
                let _ = child.kill();
                let _ = child.wait();
            }
            panic!("the cluster did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let outputs: Vec<std::process::Output> = children
        .into_iter()
        .map(|c| c.wait_with_output().unwrap_or_else(|e| panic!("{e}")))
        .collect();
    for output in &outputs {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let reference = stgflow()
        .args(args)
        .args(["--engine", "reference"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let expected = String::from_utf8_lossy(&reference.stdout).into_owned();
    assert!(expected.contains("trusted(d1) [4,7)"), "{expected}");
    assert_eq!(
        sorted(&String::from_utf8_lossy(&outputs[0].stdout)),
        sorted(&expected)
    );
    assert!(
        outputs[1].stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&outputs[1].stdout)
    );
}

/// A process whose peer never comes gives up with a clear message, within a bounded time.
#[test]
fn a_missing_cluster_peer_is_a_clear_error() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"));
    let dir = tempdir();
    let hostfile = dir.join("hosts");
    // Process 1 dials process 0, which is never started.
    std::fs::write(
        &hostfile,
        format!("127.0.0.1:{port}\n127.0.0.1:{}\n", port.wrapping_add(1)),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let started = std::time::Instant::now();
    let output = stgflow()
        .args([
            "run",
            "datasets/examples/device_safety.tdl",
            "-n",
            "2",
            "-p",
            "1",
            "--connect-timeout",
            "2",
            "-h",
        ])
        .arg(&hostfile)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("cannot connect to process 0"), "{stderr}");
    assert!(started.elapsed() < Duration::from_secs(30));
}
