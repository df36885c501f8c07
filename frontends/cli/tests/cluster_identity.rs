//! A cluster's processes prove to each other that they run the same computation (the
//! program, the options, the version, the input files) and, with `--cluster-key-file`,
//! that they hold the same key; a process that differs is refused at set-up, with what
//! differs named, instead of every process waiting for ever.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::time::{Duration, Instant};

use common::{free_port, hostfile, stgflow, tempdir};

const PROGRAM: &str = "datasets/examples/device_safety.tdl";
const STREAM: &str = "datasets/examples/device_safety.facts";

/// A process of a two-process cluster: `stgflow run ARGS -n 2 -p INDEX -h HOSTS`, with
/// `env` set.
fn start(args: &[&str], hosts: &Path, index: usize, env: &[(&str, &str)]) -> Child {
    let mut command = stgflow();
    command
        .arg("run")
        .args(args)
        .args(["-w", "1", "--connect-timeout", "8", "-n", "2", "-p"])
        .arg(index.to_string())
        .arg("-h")
        .arg(hosts)
        .env_remove("STGFLOW_CLUSTER_KEY_FILE")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (name, value) in env {
        command.env(name, value);
    }
    command.spawn().unwrap_or_else(|e| panic!("{e}"))
}

/// Waits for `child` for at most `limit`, killing it past that.
fn finish(mut child: Child, limit: Duration, what: &str) -> Output {
    let started = Instant::now();
    while child.try_wait().unwrap_or_else(|e| panic!("{e}")).is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("{what} still runs after {limit:?}: a cluster that hangs");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap_or_else(|e| panic!("{e}"))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// A copy of the example program with one offset changed, as a user who forgot to copy
/// the edited program to one machine would run.
fn edited_program(dir: &Path) -> PathBuf {
    let text =
        std::fs::read_to_string(common::root().join(PROGRAM)).unwrap_or_else(|e| panic!("{e}"));
    let edited = text.replacen("safe(X, T-1), not warning", "safe(X, T-2), not warning", 1);
    assert_ne!(edited, text, "the program has the rule the test edits");
    let path = dir.join("edited.tdl");
    std::fs::write(&path, edited).unwrap_or_else(|e| panic!("{e}"));
    path
}

/// The same stream with one more fact: another file of the same name elsewhere.
fn other_stream(dir: &Path) -> PathBuf {
    let mut text =
        std::fs::read_to_string(common::root().join(STREAM)).unwrap_or_else(|e| panic!("{e}"));
    text.push_str("repair(d9, 20).\n");
    let path = dir.join("other.facts");
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    path
}

/// A process's arguments, its environment, and what the error says differs.
type Case<'a> = (&'a [&'a str], &'a [(&'a str, &'a str)], &'a str);

#[test]
fn processes_that_differ_are_refused_naming_what_differs() {
    let dir = tempdir();
    let edited = edited_program(&dir);
    let edited = edited.to_string_lossy().into_owned();
    let other = other_stream(&dir);
    let other = other.to_string_lossy().into_owned();
    let same = [PROGRAM, STREAM];
    let cases: [Case<'_>; 5] = [
        (&[&edited, STREAM], &[], "another program"),
        (
            &[PROGRAM, STREAM, "--mode", "changes"],
            &[],
            "other options",
        ),
        (&[PROGRAM, STREAM, "--until", "9"], &[], "other options"),
        (
            &same,
            &[("STGFLOW_CLUSTER_VERSION", "0.0.1-other")],
            "another version of stgflow",
        ),
        (&[PROGRAM, &other], &[], "other input files"),
    ];
    for (args, env, says) in cases {
        let hosts = hostfile(&dir, &[free_port(), free_port()]);
        let started = Instant::now();
        let zero = start(&same, &hosts, 0, &[]);
        let one = start(args, &hosts, 1, env);
        let one = finish(one, Duration::from_secs(10), "process 1");
        let zero = finish(zero, Duration::from_secs(10), "process 0");
        assert!(started.elapsed() < Duration::from_secs(10), "{says}");
        for (output, which) in [(&zero, "process 0"), (&one, "process 1")] {
            assert_eq!(
                output.status.code(),
                Some(1),
                "{says}: {which}: {}",
                stderr(output)
            );
            assert!(
                stderr(output).contains(says),
                "{says}: {which}: {}",
                stderr(output)
            );
            assert!(output.stdout.is_empty(), "{says}: {which} printed");
            assert!(!stderr(output).contains("panicked"), "{}", stderr(output));
        }
    }
}

/// With a key, a process that has none or another is refused and the cluster goes on
/// waiting for its own; the one that holds the key then joins, and the run's output is
/// one process's.
#[test]
fn a_cluster_key_refuses_strangers_and_admits_its_own() {
    let dir = tempdir();
    let key = dir.join("key");
    let wrong = dir.join("wrong");
    std::fs::write(&key, "a shared secret\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&wrong, "another secret\n").unwrap_or_else(|e| panic!("{e}"));
    let (key, wrong) = (key.to_string_lossy(), wrong.to_string_lossy());
    let alone = common::stdout_of(&["run", PROGRAM, STREAM, "-w", "1"]);
    let hosts = hostfile(&dir, &[free_port(), free_port()]);
    let keyed = [PROGRAM, STREAM, "--cluster-key-file", &key];
    let zero = start(&keyed, &hosts, 0, &[]);
    // A stranger without the key, then one with another key (given by the environment).
    let none = finish(
        start(&[PROGRAM, STREAM], &hosts, 1, &[]),
        Duration::from_secs(10),
        "a process without the key",
    );
    assert_eq!(none.status.code(), Some(1), "{}", stderr(&none));
    assert!(stderr(&none).contains("cluster key"), "{}", stderr(&none));
    let other = finish(
        start(
            &[PROGRAM, STREAM],
            &hosts,
            1,
            &[("STGFLOW_CLUSTER_KEY_FILE", &wrong)],
        ),
        Duration::from_secs(10),
        "a process with another key",
    );
    assert_eq!(other.status.code(), Some(1), "{}", stderr(&other));
    assert!(
        stderr(&other).contains("the keys differ"),
        "{}",
        stderr(&other)
    );
    let one = finish(
        start(&keyed, &hosts, 1, &[]),
        Duration::from_secs(10),
        "process 1",
    );
    let zero = finish(zero, Duration::from_secs(10), "process 0");
    assert_eq!(one.status.code(), Some(0), "{}", stderr(&one));
    assert_eq!(zero.status.code(), Some(0), "{}", stderr(&zero));
    assert_eq!(String::from_utf8_lossy(&zero.stdout), alone);
}

/// Process 1 holding a key that process 0 lacks, and process 0 waiting alone for a peer
/// that never comes after a wrong one was refused: each ends within the timeout, saying
/// why.
#[test]
fn a_key_on_one_side_only_or_a_refused_peer_ends_the_run_with_why() {
    let dir = tempdir();
    let key = dir.join("key");
    std::fs::write(&key, "secret").unwrap_or_else(|e| panic!("{e}"));
    let key = key.to_string_lossy().into_owned();
    let hosts = hostfile(&dir, &[free_port(), free_port()]);
    let zero = start(&[PROGRAM, STREAM], &hosts, 0, &[]);
    let one = start(
        &[PROGRAM, STREAM, "--cluster-key-file", &key],
        &hosts,
        1,
        &[],
    );
    for (output, what) in [
        (
            finish(one, Duration::from_secs(10), "process 1"),
            "process 1",
        ),
        (
            finish(zero, Duration::from_secs(10), "process 0"),
            "process 0",
        ),
    ] {
        assert_eq!(output.status.code(), Some(1), "{what}: {}", stderr(&output));
        assert!(
            stderr(&output).contains("cluster key"),
            "{what}: {}",
            stderr(&output)
        );
    }

    let hosts = hostfile(&dir, &[free_port(), free_port()]);
    let zero = start(
        &[PROGRAM, STREAM, "--cluster-key-file", &key],
        &hosts,
        0,
        &[],
    );
    let stranger = finish(
        start(&[PROGRAM, STREAM], &hosts, 1, &[]),
        Duration::from_secs(10),
        "the stranger",
    );
    assert_eq!(stranger.status.code(), Some(1));
    let zero = finish(zero, Duration::from_secs(15), "process 0");
    assert_eq!(zero.status.code(), Some(1));
    let text = stderr(&zero);
    assert!(text.contains("waited 8 s for process(es) 1"), "{text}");
    assert!(text.contains("refused a peer at 127.0.0.1:"), "{text}");
}

/// A connection that never greets is not a peer: process 0 drops it and, with nobody
/// else coming, ends at its connect timeout.
#[test]
fn a_silent_connection_does_not_hold_the_cluster() {
    let dir = tempdir();
    let port = free_port();
    let hosts = hostfile(&dir, &[port, free_port()]);
    let started = Instant::now();
    let zero = start(&[PROGRAM, STREAM], &hosts, 0, &[]);
    let address = format!("127.0.0.1:{port}");
    let silent = loop {
        match std::net::TcpStream::connect(&address) {
            Ok(stream) => break stream,
            Err(_) if started.elapsed() < Duration::from_secs(5) => {
                std::thread::sleep(Duration::from_millis(20));
            }
            Err(e) => panic!("process 0 does not listen: {e}"),
        }
    };
    let zero = finish(zero, Duration::from_secs(15), "process 0");
    drop(silent);
    assert_eq!(zero.status.code(), Some(1));
    assert!(
        stderr(&zero).contains("waited 8 s for process(es) 1"),
        "{}",
        stderr(&zero)
    );
    assert!(started.elapsed() < Duration::from_secs(12));
}
