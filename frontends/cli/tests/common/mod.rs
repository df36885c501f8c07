//! What the end-to-end tests of the `stgflow` binary share.

#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::sync::mpsc;

use assert_cmd::cargo::CommandCargoExt;

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// RTEC's city transport records (`../shared/data/rtec/ctm`, one file per event type), as
/// paths from the repository root.
pub fn ctm_streams() -> Vec<String> {
    [
        "abrupt_acceleration",
        "abrupt_deceleration",
        "internal_temperature_change",
        "noise_level_change",
        "passenger_density_change",
        "sharp_turn",
        "stop_enter_leave",
    ]
    .iter()
    .map(|name| {
        root()
            .join(format!("../shared/data/rtec/ctm/{name}.csv"))
            .to_string_lossy()
            .into_owned()
    })
    .collect()
}

/// The `stgflow` binary, run from the repository root.
pub fn stgflow() -> Command {
    let mut command =
        Command::cargo_bin("stgflow").unwrap_or_else(|e| panic!("no stgflow binary: {e}"));
    command.current_dir(root());
    command
}

/// `stgflow ARGS` from the repository root, whatever its exit status.
pub fn output_of(args: &[&str]) -> std::process::Output {
    stgflow()
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run stgflow {args:?}: {e}"))
}

/// `stgflow ARGS` from the repository root: its stdout, failing the test on an error.
pub fn stdout_of(args: &[&str]) -> String {
    let output = stgflow()
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap_or_else(|e| panic!("{e}"))
}

pub fn sorted(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

/// A fresh directory under the system's temporary directory, removed with everything in
/// it when the guard is dropped (a failed test leaves nothing behind either).
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn tempdir() -> TempDir {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "stgflow-cli-test-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    TempDir(dir)
}

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// A hostfile in `dir` listing `ports` on loopback, one process per port.
pub fn hostfile(dir: &Path, ports: &[u16]) -> PathBuf {
    let path = dir.join("hosts");
    let text: String = ports.iter().map(|p| format!("127.0.0.1:{p}\n")).collect();
    std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
    path
}

/// Lines of `child`'s stdout, read on a thread, as they come.
pub fn lines_of(child: &mut Child) -> mpsc::Receiver<String> {
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    receiver
}

/// Runs `stgflow` with `args` (from `dir`) as a loopback cluster of `processes` processes
/// of `workers` workers each, and waits at most 60 s for all of them; returns each
/// process's output, in process order. A port found free can be taken before its process
/// listens on it (by another test's connections, say): a cluster that could not listen
/// runs again on fresh ports.
pub fn run_cluster(
    dir: &Path,
    args: &[String],
    processes: usize,
    workers: usize,
) -> Vec<std::process::Output> {
    let taken = |outputs: &[std::process::Output]| {
        (outputs.iter()).any(|o| {
            let stderr = String::from_utf8_lossy(&o.stderr);
            stderr.contains("cannot listen on") && stderr.contains("Address already in use")
        })
    };
    let mut outputs = run_cluster_once(dir, args, processes, workers);
    for _ in 0..4 {
        if !taken(&outputs) {
            break;
        }
        outputs = run_cluster_once(dir, args, processes, workers);
    }
    outputs
}

fn run_cluster_once(
    dir: &Path,
    args: &[String],
    processes: usize,
    workers: usize,
) -> Vec<std::process::Output> {
    use std::process::Stdio;
    use std::time::{Duration, Instant};
    let ports: Vec<u16> = (0..processes).map(|_| free_port()).collect();
    let hosts = tempdir();
    let hostfile = hostfile(&hosts, &ports);
    let spawn = |index: usize| {
        let (n, w) = (processes.to_string(), workers.to_string());
        stgflow()
            .current_dir(dir)
            .args(args)
            .args(["-w", &w, "-n", &n, "-p", &index.to_string(), "-h"])
            .arg(&hostfile)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let mut children: Vec<Child> = (0..processes).map(spawn).collect();
    // Each child's stdout and stderr are read as they come, so that one with more output
    // than a pipe holds does not block on it (and the cluster with it).
    let drain = |pipe: Option<Box<dyn std::io::Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let readers: Vec<_> = children
        .iter_mut()
        .map(|c| {
            let out = c
                .stdout
                .take()
                .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>);
            let err = c
                .stderr
                .take()
                .map(|p| Box::new(p) as Box<dyn std::io::Read + Send>);
            (drain(out), drain(err))
        })
        .collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut statuses = vec![None; children.len()];
    while statuses.iter().any(Option::is_none) {
        for (child, status) in children.iter_mut().zip(&mut statuses) {
            if status.is_none() {
                *status = child.try_wait().ok().flatten();
            }
        }
        if Instant::now() > deadline {
            for child in &mut children {
                let _ = child.kill();
                let _ = child.wait();
            }
            panic!("the cluster did not finish within 60 s: {args:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    statuses
        .into_iter()
        .zip(readers)
        .map(|(status, (out, err))| std::process::Output {
            status: status.unwrap_or_else(|| panic!("exited")),
            stdout: out.join().unwrap_or_default(),
            stderr: err.join().unwrap_or_default(),
        })
        .collect()
}
