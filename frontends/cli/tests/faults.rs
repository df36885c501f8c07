//! Faults end to end (issue 8): signals, lost and misconfigured cluster peers, byte-identical
//! output, and a long soak run (`#[ignore]`). Real processes on loopback; every test ends
//! by itself, killing what it started if a deadline passes.

mod common;

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::{free_port, hostfile, lines_of, root, stgflow, tempdir};

const DEVICE_SAFETY: &str = "datasets/examples/device_safety.tdl";

/// Sends `signal` (a `kill` name: TERM, INT, KILL) to `child`.
fn signal(child: &Child, signal: &str) {
    let status = Command::new("kill")
        .arg(format!("-{signal}"))
        .arg(child.id().to_string())
        .status()
        .unwrap_or_else(|e| panic!("kill: {e}"));
    assert!(status.success(), "kill -{signal} failed");
}

/// Waits for `child` to exit within `limit`; kills it and fails the test otherwise.
fn exit_within(child: &mut Child, limit: Duration, what: &str) -> ExitStatus {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(status) = child.try_wait().unwrap_or_else(|e| panic!("{e}")) {
            return status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what} did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn stderr_of(child: &mut Child) -> String {
    let mut text = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut stderr, &mut text);
    }
    text
}

/// `child`'s stdout in chunks, read on a thread that blocks until the test takes each chunk:
/// a test that stops reading stops the child's output at the pipe, so an endless run
/// writes only what the test asked for.
fn chunks_of(child: &mut Child) -> mpsc::Receiver<Vec<u8>> {
    let mut stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let (sender, receiver) = mpsc::sync_channel(0);
    std::thread::spawn(move || {
        let mut buffer = vec![0u8; 1 << 16];
        loop {
            match std::io::Read::read(&mut stdout, &mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    if sender.send(buffer[..n].to_vec()).is_err() {
                        break;
                    }
                }
            }
        }
    });
    receiver
}

/// A program whose output never ends: five devices repaired at 0 stay safe, and
/// `--until` makes the timeline 10^9 points long.
fn endless(dir: &Path) -> (std::path::PathBuf, Vec<&'static str>) {
    let stream = dir.join("repairs.facts");
    let facts: String = (1..=5).map(|d| format!("repair(d{d}, 0).\n")).collect();
    std::fs::write(&stream, facts).unwrap_or_else(|e| panic!("{e}"));
    (stream, vec!["--until", "1000000000"])
}

/// The time of a `pred(args,T).` line.
fn time_of(line: &str) -> u64 {
    line.trim_end_matches(").")
        .rsplit(',')
        .next()
        .and_then(|t| t.trim().parse().ok())
        .unwrap_or_else(|| panic!("no time in `{line}`"))
}

/// SIGTERM while a live stream waits for its next line: every completed time point is
/// printed, the one being read is not, and the exit code is 143 — for both engines.
#[test]
fn sigterm_on_a_waiting_live_stream_keeps_completed_time_points_and_exits_143() {
    for engine in ["dataflow", "reference"] {
        let mut child = stgflow()
            .args(["run", DEVICE_SAFETY, "-", "--engine", engine])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let mut stdin = child.stdin.take().unwrap_or_else(|| panic!("no stdin"));
        let lines = lines_of(&mut child);
        // Time point 4 starts, so 1..=3 are complete; d3 would be safe from 4 on.
        stdin
            .write_all(b"repair(d1,1).\nwarning(d2,2).\nrepair(d3,3).\nrepair(d1,4).\n")
            .and_then(|()| stdin.flush())
            .unwrap_or_else(|e| panic!("{e}"));
        let mut seen = Vec::new();
        while seen.last().map(String::as_str) != Some("safe(d1,3).") {
            seen.push(
                lines
                    .recv_timeout(Duration::from_secs(30))
                    .unwrap_or_else(|e| panic!("{engine}: no output for time point 3: {e}")),
            );
        }
        signal(&child, "TERM");
        let status = exit_within(&mut child, Duration::from_secs(20), "the live run");
        seen.extend(lines.iter());
        assert_eq!(
            status.code(),
            Some(143),
            "{engine}: {}",
            stderr_of(&mut child)
        );
        assert_eq!(seen, ["safe(d1,2).", "safe(d1,3)."], "{engine}");
        let stderr = stderr_of(&mut child);
        assert!(stderr.contains("stopped by SIGTERM"), "{engine}: {stderr}");
        assert!(!stderr.contains("panicked"), "{engine}: {stderr}");
        drop(stdin);
    }
}

/// SIGINT during batch replay: the run stops within seconds with 130, and what it wrote
/// ends at a complete time point — exactly the output of the same run cut at that point.
/// `--stats-json` is written all the same, with why the run stopped and that time point.
/// Its stdout is a pipe the test reads, so the endless run writes about as much as the test
/// takes (a file filled at full speed reached gigabytes on a loaded machine).
#[test]
fn sigint_during_batch_replay_ends_at_a_complete_time_point_and_exits_130() {
    let dir = tempdir();
    let (stream, until) = endless(&dir);
    for engine in ["dataflow", "reference"] {
        let mut child = stgflow()
            .args(["run", DEVICE_SAFETY, "--engine", engine])
            .arg(&stream)
            .args(&until)
            .arg("--stats-json")
            .arg(dir.join(format!("{engine}.json")))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}"));
        let chunks = chunks_of(&mut child);
        let mut bytes = Vec::new();
        while bytes.len() < 200_000 {
            match chunks.recv_timeout(Duration::from_secs(60)) {
                Ok(chunk) => bytes.extend(chunk),
                Err(e) => {
                    let _ = child.kill();
                    panic!("{engine}: 200,000 bytes of output not within 60 s: {e}");
                }
            }
        }
        signal(&child, "INT");
        // Drain what the run writes until it stops; it must close stdout within 30 s.
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match chunks.recv_timeout(left) {
                Ok(chunk) => bytes.extend(chunk),
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    let _ = child.kill();
                    panic!("{engine}: the batch run wrote on for 30 s after SIGINT");
                }
            }
        }
        let status = exit_within(&mut child, Duration::from_secs(30), "the batch run");
        let stderr = stderr_of(&mut child);
        assert_eq!(status.code(), Some(130), "{engine}: {stderr}");
        assert!(stderr.contains("stopped by SIGINT"), "{engine}: {stderr}");
        let written = String::from_utf8(bytes).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            written.ends_with('\n'),
            "{engine}: the output ends mid-line"
        );
        // The message names the last time point written: the output is the run cut there.
        let named: u64 = (stderr.split("after time point ").nth(1))
            .and_then(|rest| rest.split(';').next())
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(|| panic!("{engine}: no time point named: {stderr}"));
        let last = time_of(
            written
                .lines()
                .last()
                .unwrap_or_else(|| panic!("no output")),
        );
        assert!(
            named >= last,
            "{engine}: {named} before the last line's {last}"
        );
        let report = std::fs::read_to_string(dir.join(format!("{engine}.json")))
            .unwrap_or_else(|e| panic!("{engine}: no --stats-json after SIGINT: {e}"));
        assert!(
            report.contains(&format!("\"stopped\":\"SIGINT\",\"last_written\":{named},")),
            "{engine}: {report}"
        );
        let last = named;
        let cut = stgflow()
            .args(["run", DEVICE_SAFETY, "--engine", "reference"])
            .arg(&stream)
            .args(["--until", &last.to_string()])
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(cut.status.success());
        assert!(
            written == String::from_utf8_lossy(&cut.stdout),
            "{engine}: the interrupted output is not the run cut at time point {last}"
        );
    }
}

/// An input error ends the run with its diagnostic and exit 1, and `--stats` and
/// `--stats-json` report it: why, and the last time point whose output was written.
#[test]
fn an_input_error_is_reported_in_the_stats_with_the_last_time_point_written() {
    let dir = tempdir();
    let (program, stream) = (dir.join("q.tdl"), dir.join("bad.facts"));
    std::fs::write(&program, "q(X, T) :- p(X, T).\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&stream, "p(a, 1).\np(b, 2).\np(c, 3).\np(d 4).\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let json = dir.join("stats.json");
    for engine in ["dataflow", "reference"] {
        let output = stgflow()
            .arg("run")
            .args([&program, &stream])
            .args(["--engine", engine, "--stats", "--stats-json"])
            .arg(&json)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{engine}: {stderr}");
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "q(a,1).\nq(b,2).\n"
        );
        assert!(stderr.contains("bad.facts:4:5"), "{engine}: {stderr}");
        assert!(
            stderr.contains(
                "stopped       by an input error; the output written through time point 2"
            ),
            "{engine}: {stderr}"
        );
        let report = std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}"));
        assert!(
            report.starts_with("{\"stopped\":\"an input error\",\"last_written\":2,"),
            "{engine}: {report}"
        );
    }
}

/// Starts process `index` of a two-process cluster running `args`.
fn cluster_process(args: &[&str], hosts: &Path, index: usize, stdin: Stdio) -> Child {
    stgflow()
        .args(args)
        .args(["-n", "2", "-p", &index.to_string()])
        .arg("-h")
        .arg(hosts)
        .stdin(stdin)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Killing either process of a running two-process cluster makes the other exit 1 within
/// seconds with a message naming the lost peer, and no panic output.
#[test]
fn a_cluster_peer_that_dies_mid_run_stops_the_other_with_a_clear_error() {
    let dir = tempdir();
    let (stream, until) = endless(&dir);
    let stream = stream.to_string_lossy().into_owned();
    let mut args = vec![
        "run",
        DEVICE_SAFETY,
        stream.as_str(),
        "-w",
        "2",
        "--connect-timeout",
        "20",
    ];
    args.extend(&until);
    for victim in [1, 0] {
        let hosts = hostfile(&dir, &[free_port(), free_port()]);
        let mut children = [
            cluster_process(&args, &hosts, 0, Stdio::null()),
            cluster_process(&args, &hosts, 1, Stdio::null()),
        ];
        // Process 0 prints once the cluster is up and running.
        let lines = lines_of(&mut children[0]);
        lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("the cluster printed nothing: {e}"));
        let survivor = 1 - victim;
        children[victim]
            .kill()
            .unwrap_or_else(|e| panic!("cannot kill: {e}"));
        let _ = children[victim].wait();
        let status = exit_within(
            &mut children[survivor],
            Duration::from_secs(30),
            &format!("process {survivor} after process {victim} died"),
        );
        let stderr = stderr_of(&mut children[survivor]);
        assert_eq!(status.code(), Some(1), "{stderr}");
        assert!(
            stderr.contains("lost the connection to a cluster peer"),
            "{stderr}"
        );
        assert!(!stderr.contains("panicked"), "{stderr}");
    }
}

/// Process 0 waiting for a live stream's next line notices a dead peer at once, without
/// more input.
#[test]
fn a_dead_peer_wakes_a_process_waiting_for_live_input() {
    let dir = tempdir();
    let hosts = hostfile(&dir, &[free_port(), free_port()]);
    let args = ["run", DEVICE_SAFETY, "-", "--connect-timeout", "20"];
    let mut first = cluster_process(&args, &hosts, 0, Stdio::piped());
    let mut second = cluster_process(&args, &hosts, 1, Stdio::null());
    let mut stdin = first.stdin.take().unwrap_or_else(|| panic!("no stdin"));
    let lines = lines_of(&mut first);
    // Time point 2 completes time point 1: the cluster is up once it prints.
    stdin
        .write_all(b"repair(d1,0).\nrepair(d1,1).\nrepair(d1,2).\n")
        .and_then(|()| stdin.flush())
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        lines
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|e| panic!("no output: {e}")),
        "safe(d1,1)."
    );
    second.kill().unwrap_or_else(|e| panic!("cannot kill: {e}"));
    let _ = second.wait();
    let status = exit_within(&mut first, Duration::from_secs(30), "process 0");
    let stderr = stderr_of(&mut first);
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("lost the connection to a cluster peer"),
        "{stderr}"
    );
    drop(stdin);
}

fn cluster_output(args: &[&str], hosts: &Path, index: usize) -> Output {
    let child = cluster_process(args, hosts, index, Stdio::null());
    let mut child = child;
    exit_within(&mut child, Duration::from_secs(60), "a cluster process");
    child.wait_with_output().unwrap_or_else(|e| panic!("{e}"))
}

/// A port held by another program, a process started with another `-w`, and a malformed
/// hostfile: each process exits 1 within the connect timeout and says what is wrong.
#[test]
fn misconfigured_clusters_fail_fast_with_a_clear_error() {
    let dir = tempdir();
    let args = [
        "run",
        DEVICE_SAFETY,
        "datasets/examples/device_safety.facts",
        "--connect-timeout",
        "3",
    ];
    // Another program listens on process 0's port and never answers.
    let squatter = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let port = squatter
        .local_addr()
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"));
    let hosts = hostfile(&dir, &[port, free_port()]);
    let started = Instant::now();
    let zero = cluster_output(&args, &hosts, 0);
    let one = cluster_output(&args, &hosts, 1);
    let text = |o: &Output| String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(zero.status.code(), Some(1));
    assert!(text(&zero).contains("cannot listen on"), "{}", text(&zero));
    assert_eq!(one.status.code(), Some(1));
    assert!(
        text(&one).contains("but not stgflow process 0 (no answer in time)"),
        "{}",
        text(&one)
    );
    assert!(started.elapsed() < Duration::from_secs(40));
    drop(squatter);

    // Process 1 started with -w 1 against process 0's -w 2.
    let hosts = hostfile(&dir, &[free_port(), free_port()]);
    let mut zero_args = args.to_vec();
    zero_args.extend(["-w", "2"]);
    let zero = cluster_process(&zero_args, &hosts, 0, Stdio::null());
    let mut one_args = args.to_vec();
    one_args.extend(["-w", "1"]);
    let one = cluster_output(&one_args, &hosts, 1);
    let mut zero = zero;
    exit_within(&mut zero, Duration::from_secs(30), "process 0");
    let zero = zero.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(zero.status.code(), Some(1));
    assert!(
        text(&zero).contains("cannot join (it runs with -w 1 and this process with -w 2"),
        "{}",
        text(&zero)
    );
    assert_eq!(one.status.code(), Some(1));
    assert!(
        text(&one).contains("it runs with -w 2 and this process with -w 1"),
        "{}",
        text(&one)
    );

    let bad = dir.join("bad-hosts");
    std::fs::write(&bad, "127.0.0.1:4000\nlocalhost\n").unwrap_or_else(|e| panic!("{e}"));
    let output = cluster_output(&args, &bad, 1);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output).contains("bad-hosts:2: `localhost` is not a `host:port` address"),
        "{}",
        text(&output)
    );
}

/// The output is byte-identical for 1, 2 and 3 workers and across repeated runs, in every
/// output mode, for a TD program, a LARS program and an EC description; formatted on the
/// workers (`--format-on-workers`) too.
#[test]
fn output_is_byte_identical_across_workers_and_runs() {
    rtec_data_is_byte_identical_on_workers_and_processes();
    let dir = tempdir();
    let fleet = dir.join("fleet.facts");
    let mut facts = String::new();
    let mut state = 7u64;
    for t in 0..400 {
        for d in 0..20 {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            match state >> 60 {
                0 => facts.push_str(&format!("repair(d{d},{t}).\n")),
                1 => facts.push_str(&format!("warning(d{d},{t}).\n")),
                _ => {}
            }
        }
    }
    std::fs::write(&fleet, facts).unwrap_or_else(|e| panic!("{e}"));
    let fleet = fleet.to_string_lossy().into_owned();
    // A LARS program over a Laser stream: a window, a box and negation.
    let lars = dir.join("w.lars");
    std::fs::write(
        &lars,
        "q(A,B) :- time_win(10,0,1,diamond(p(A,B))) and not(s)\n\
         r(A) :- time_win(3,0,1,box(p(A,A)))\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let laser = dir.join("w.laser");
    let mut text = String::from("#timeline 0 299\n");
    for t in 0..300u64 {
        let atoms: Vec<String> = (0..6)
            .filter(|i| (t * 7 + i * 13) % 5 < 2)
            .map(|i| format!("p({},{})", i % 3, i % 2 + i % 3 / 2))
            .chain((t % 17 == 0).then(|| "s".to_owned()))
            .collect();
        text.push_str(&format!("{t}: {}\n", atoms.join(" ")));
    }
    std::fs::write(&laser, text).unwrap_or_else(|e| panic!("{e}"));
    let (lars, laser) = (
        lars.to_string_lossy().into_owned(),
        laser.to_string_lossy().into_owned(),
    );
    let runs: Vec<Vec<&str>> = vec![
        vec![DEVICE_SAFETY, &fleet, "--mode", "points"],
        vec![DEVICE_SAFETY, &fleet, "--mode", "changes"],
        vec![DEVICE_SAFETY, &fleet, "--mode", "intervals"],
        vec![DEVICE_SAFETY, &fleet, "--mode", "laser"],
        vec![&lars, &laser, "--mode", "laser"],
        vec![&lars, &laser, "--mode", "intervals"],
        vec![
            "../shared/data/rtec/caviar/rtec/rules.prolog",
            "../shared/data/rtec/caviar/rtec/list-of-ids.prolog",
            "datasets/ec/caviar_distance.ec",
            "datasets/ec/caviar/appearance.csv",
            "datasets/ec/caviar/movementB.csv",
            "--tick",
            "40",
            "--mode",
            "intervals",
        ],
    ];
    // Formatted on the workers (where the mode allows it), the same bytes again.
    let formatted: Vec<Vec<&str>> = runs
        .iter()
        .filter(|run| !run.contains(&"laser"))
        .map(|run| [&run[..], &["--format-on-workers", "--batch-points", "7"]].concat())
        .collect();
    for run in runs.into_iter().chain(formatted) {
        let outputs: Vec<Vec<u8>> = ["1", "2", "3", "4", "2"]
            .iter()
            .map(|workers| stdout_on(&run, workers))
            .collect();
        assert!(
            outputs[0].len() > 100,
            "{run:?}: too little output to compare"
        );
        for (i, output) in outputs.iter().enumerate().skip(1) {
            assert!(
                *output == outputs[0],
                "{run:?}: run {i} differs from the run with one worker"
            );
        }
    }
}

/// The stdout of `stgflow run RUN -w WORKERS`, which must succeed.
fn stdout_on<S: AsRef<std::ffi::OsStr> + std::fmt::Debug>(run: &[S], workers: &str) -> Vec<u8> {
    let output = stgflow()
        .arg("run")
        .args(run)
        .args(["-w", workers])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        output.status.success(),
        "{run:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// RTEC's own CAVIAR, CTM and voting data and event descriptions (`../shared/data/rtec`):
/// the same bytes on 1, 2 and 4 workers and on a cluster of 2 processes of 2 workers, with
/// the input read and the output formatted on the calling thread, and on the workers
/// (`--read-on-workers --format-on-workers`).
fn rtec_data_is_byte_identical_on_workers_and_processes() {
    let data = root().join("../shared/data/rtec");
    let path = |file: &str| data.join(file).to_string_lossy().into_owned();
    let ctm = common::ctm_streams();
    let runs: Vec<Vec<String>> = vec![
        vec![
            path("caviar/rtec/rules.prolog"),
            path("caviar/rtec/list-of-ids.prolog"),
            root()
                .join("datasets/ec/caviar_distance.ec")
                .to_string_lossy()
                .into_owned(),
            path("caviar/appearance.csv"),
            path("caviar/movementB.csv"),
            "--tick".to_owned(),
            "40".to_owned(),
        ],
        vec![
            path("voting/rtec/rules.prolog"),
            path("voting/rtec/voting_static_generator.prolog"),
            path("voting/voting.csv"),
        ],
        [
            vec![
                path("ctm/rtec/rules.prolog"),
                path("ctm/rtec/vehicles.prolog"),
            ],
            ctm,
        ]
        .concat(),
    ];
    for mut run in runs {
        run.extend(["--mode".to_owned(), "intervals".to_owned()]);
        // The whole way on the workers: read, diffed, evaluated and formatted there.
        let on_workers = [
            run.clone(),
            vec![
                "--read-on-workers".to_owned(),
                "--format-on-workers".to_owned(),
            ],
        ]
        .concat();
        let mut outputs: Vec<Vec<u8>> = [(&run, "1"), (&run, "2"), (&run, "4")]
            .into_iter()
            .chain([(&on_workers, "2"), (&on_workers, "4")])
            .map(|(run, workers)| stdout_on(run, workers))
            .collect();
        for run in [&run, &on_workers] {
            let dir = tempdir();
            let cluster_args: Vec<String> = [vec!["run".to_owned()], run.clone()].concat();
            let cluster = common::run_cluster(&dir, &cluster_args, 2, 2);
            assert!(
                cluster.iter().all(|o| o.status.success()),
                "{run:?} on 2 processes"
            );
            outputs.push(cluster[0].stdout.clone());
        }
        assert!(
            outputs[0].len() > 1000,
            "{run:?}: too little output to compare"
        );
        let names = [
            "-w 2",
            "-w 4",
            "-w 2 --read-on-workers --format-on-workers",
            "-w 4 --read-on-workers --format-on-workers",
            "-n 2",
            "-n 2 --read-on-workers --format-on-workers",
        ];
        for (output, name) in outputs.iter().skip(1).zip(names) {
            assert!(
                *output == outputs[0],
                "{run:?}: the run on {name} differs from -w 1"
            );
        }
    }
}

/// Resident set size of process `pid` in KiB (Linux).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// 10^7 time points through stdin, one line each, in live mode, every line with a fresh
/// identifier and a fresh IRI (events seen once, in a window of two time points): the RSS
/// at the end is within 1.5× of the RSS after the first 10^5. Run it in release:
/// `cargo test --release -p stgflow-cli --test faults -- --ignored --nocapture soak`.
/// `STGFLOW_SOAK_POINTS` shortens it.
#[test]
#[ignore = "a soak test: minutes in release"]
fn soak_ten_million_time_points_through_stdin_in_flat_memory() {
    let points: u64 = std::env::var("STGFLOW_SOAK_POINTS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000_000);
    let dir = tempdir();
    let program = dir.join("soak.tdl");
    let device_safety = std::fs::read_to_string(root().join(DEVICE_SAFETY))
        .unwrap_or_else(|e| panic!("{DEVICE_SAFETY}: {e}"));
    std::fs::write(
        &program,
        format!(
            "{device_safety}\nrecent(E, T) :- seen(E, T).\nrecent(E, T) :- seen(E, T-1).\n#output recent.\n"
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut child = stgflow()
        .arg("run")
        .arg(&program)
        .args(["-", "--mode", "changes"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let pid = child.id();
    let stdout = child.stdout.take().unwrap_or_else(|| panic!("no stdout"));
    let reader = std::thread::spawn(move || {
        let mut lines = 0u64;
        for line in BufReader::new(stdout).lines() {
            if line.is_err() {
                break;
            }
            lines += 1;
        }
        lines
    });
    let mut stdin =
        std::io::BufWriter::new(child.stdin.take().unwrap_or_else(|| panic!("no stdin")));
    let started = Instant::now();
    let mut early = 0;
    let mut state = 1u64;
    for t in 0..points {
        // Ten devices; a repair or a warning on one of them at most time points.
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let device = (state >> 40) % 10;
        let what = if (state >> 33) & 1 == 0 {
            "repair"
        } else {
            "warning"
        };
        writeln!(
            stdin,
            "{what}(d{device},{t}). seen(ev{t},{t}). seen(\"http://example.org/soak/events#event-{t}\",{t})."
        )
            .unwrap_or_else(|e| panic!("{e}"));
        if t == 100_000 {
            stdin.flush().unwrap_or_else(|e| panic!("{e}"));
            std::thread::sleep(Duration::from_millis(500));
            early = rss_kib(pid);
        }
        if t % 1_000_000 == 0 && t > 0 {
            eprintln!(
                "soak: {t} time points, {:.0} s, RSS {} KiB",
                started.elapsed().as_secs_f64(),
                rss_kib(pid)
            );
        }
    }
    stdin.flush().unwrap_or_else(|e| panic!("{e}"));
    std::thread::sleep(Duration::from_millis(500));
    let late = rss_kib(pid);
    drop(stdin);
    let status = child.wait().unwrap_or_else(|e| panic!("{e}"));
    let lines = reader
        .join()
        .unwrap_or_else(|_| panic!("the reader failed"));
    eprintln!(
        "soak: {points} time points in {:.1} s; RSS after 10^5: {early} KiB, at the end: {late} KiB; {lines} output lines",
        started.elapsed().as_secs_f64()
    );
    assert!(status.success());
    assert!(early > 0 && late > 0, "no RSS readings");
    assert!(
        late as f64 <= 1.5 * early as f64,
        "RSS grew from {early} KiB to {late} KiB"
    );
    assert!(lines > points / 10, "too little output: {lines} lines");
}

/// Read on the workers, an error deep in the second of two files — in a block far from the
/// first, with unknown predicates before it — stops the run as the sequential reader does:
/// the same stdout (every time point before it), the same message on stderr (file, line,
/// column, and the skip warnings), the same exit status, on 1, 2 and 3 workers; and a
/// file without errors, cut by `--from` and `--until`, gives the same output and summary.
#[test]
fn an_error_deep_in_a_file_read_on_the_workers_is_the_sequential_error() {
    let dir = tempdir();
    let (mut first, mut second) = (String::new(), String::new());
    for t in 0..20_000u64 {
        first.push_str(&format!("warning(d{},{t}).\n", t % 7));
        if t % 3 == 0 {
            second.push_str(&format!("repair(d{},{t}).\n", t % 5));
        }
        if t % 1000 == 0 {
            second.push_str(&format!("unknown{}(x,{t}).\n", t / 1000 % 4));
        }
        if t == 15_000 {
            second.push_str("repair(d1,,15000).\n");
        }
    }
    let clean = second.replace("repair(d1,,15000).\n", "");
    let path = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{e}"));
        path.to_string_lossy().into_owned()
    };
    let (a, b, c) = (
        path("a.facts", &first),
        path("b.facts", &second),
        path("c.facts", &clean),
    );
    let run = |args: &[&str]| -> Output {
        stgflow()
            .current_dir(root())
            .args(["run", DEVICE_SAFETY])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let cases: [&[&str]; 2] = [
        &[&a, &b, "--mode", "changes"],
        &[
            &a, &c, "--mode", "changes", "--from", "300", "--until", "17000", "--stats",
        ],
    ];
    for case in cases {
        let expected = run(&[case, &["-w", "1"]].concat());
        for workers in ["1", "2", "3"] {
            let on_workers = ["-w", workers, "--read-on-workers", "--block-bytes", "4096"];
            let actual = run(&[case, &on_workers].concat());
            assert_eq!(
                (actual.status.code(), &actual.stdout),
                (expected.status.code(), &expected.stdout),
                "{case:?} on {workers} worker(s): exit status or stdout"
            );
            assert_eq!(
                stable_stderr(&actual),
                stable_stderr(&expected),
                "{case:?} on {workers} worker(s)"
            );
        }
        // Two processes, each reading its own blocks of the files: process 0 prints the
        // same, stops at the same error, and counts every process's facts.
        let args: Vec<String> = ["run", DEVICE_SAFETY]
            .iter()
            .chain(case)
            .chain(&["--read-on-workers", "--block-bytes", "4096"])
            .map(|a| (*a).to_owned())
            .collect();
        let cluster = common::run_cluster(&root(), &args, 2, 2);
        let actual = &cluster[0];
        assert_eq!(
            (actual.status.code(), &actual.stdout),
            (expected.status.code(), &expected.stdout),
            "{case:?} on 2 processes: exit status or stdout"
        );
        assert_eq!(
            stable_stderr(actual),
            stable_stderr(&expected),
            "{case:?} on 2 processes"
        );
    }
    let failed = run(&[&a, &b, "--read-on-workers", "-w", "2"]);
    let message = String::from_utf8_lossy(&failed.stderr);
    assert!(
        !failed.status.success() && message.contains("b.facts:5018:11"),
        "{message}"
    );
    assert!(
        failed.stdout.len() > 10_000,
        "the time points before the error were printed"
    );
    let cut = run(&[
        &a,
        &c,
        "--from",
        "300",
        "--until",
        "17000",
        "--stats",
        "--read-on-workers",
    ]);
    let report = String::from_utf8_lossy(&cut.stderr);
    assert!(
        report.contains("outside the timeline") && report.contains("skipped: 18 of unknown"),
        "{report}"
    );
    assert!(cut.stdout.len() > 10_000, "{report}");
}

/// A run's stderr without what differs from run to run: times and memory (the
/// components' times too).
fn stable_stderr(output: &Output) -> Vec<String> {
    // How the run spread over the threads is the engine's choice, and their times vary.
    let varies = [
        "wall time",
        "CPU time",
        "peak RSS",
        "input rate",
        " %  ",
        "  parallel ",
        "  threads ",
    ];
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .filter(|l| !varies.iter().any(|v| l.contains(v)))
        .map(str::to_owned)
        .collect()
}
