//! The `stgflow` binary end to end: real processes, real files, pipes.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::time::Duration;

mod common;

use common::{free_port, hostfile, lines_of, root, run_cluster, sorted, stgflow, tempdir};

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

/// A file of several blocks parsed on 2 threads gives what it gives read line by line:
/// the same output, then the same error for a bad line in a later block, and the same
/// warning for skipped facts.
#[test]
fn parallel_parsing_of_a_file_equals_reading_it_line_by_line() {
    let dir = tempdir();
    let program = dir.join("p.tdl");
    let stream = dir.join("s.facts");
    std::fs::write(&program, "seen(X, T) :- q(X, Y, T), not q(Y, X, T).\n")
        .unwrap_or_else(|e| panic!("{e}"));
    // About 3 MB: several of the reader's 1 MiB blocks.
    let mut text = String::new();
    for t in 0..2000u32 {
        for k in 0..10 {
            text.push_str(&format!("q(a{k}, b{}, {t}). ", (t + k) % 7));
            text.push_str(&format!("q(b{},a{k},{t}).\n", (t * k) % 7));
            text.push_str(&format!("q(x{k},y,{t}).\nu(x,{t}).\n"));
        }
        if t == 1900 {
            text.push_str("q(c, d 1900).\n");
        }
    }
    let good = dir.join("good.facts");
    std::fs::write(&good, text.replace("q(c, d 1900).\n", "")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(&stream, &text).unwrap_or_else(|e| panic!("{e}"));
    let run = |threads: &str, stream: &std::path::Path| {
        stgflow()
            .args(["run", "--mode", "changes", "--parse-threads", threads])
            .arg(&program)
            .arg(stream)
            .output()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let (line_by_line, parallel) = (run("0", &stream), run("2", &stream));
    assert_eq!(line_by_line.status.code(), Some(1));
    assert_eq!(parallel.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&parallel.stdout);
    assert!(
        stdout.contains("@1899\n"),
        "{}",
        &stdout[stdout.len().saturating_sub(300)..]
    );
    assert!(!stdout.contains("@1900"));
    assert!(line_by_line.stdout == parallel.stdout, "the outputs differ");
    let stderr = String::from_utf8_lossy(&parallel.stderr);
    assert!(stderr.contains("s.facts:57031:8"), "{stderr}");
    assert_eq!(stderr, String::from_utf8_lossy(&line_by_line.stderr));

    let (line_by_line, parallel) = (run("0", &good), run("2", &good));
    assert!(parallel.status.success());
    let stdout = String::from_utf8_lossy(&parallel.stdout);
    assert!(stdout.contains("@1999\n"));
    assert!(line_by_line.stdout == parallel.stdout, "the outputs differ");
    let stderr = String::from_utf8_lossy(&parallel.stderr);
    assert!(stderr.contains("`u`"), "{stderr}");
    assert_eq!(stderr, String::from_utf8_lossy(&line_by_line.stderr));
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
    let lines = lines_of(&mut child);
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

/// `--dump plan` shows inertia lowered to the persistence operator, and with
/// `--no-lowering` (or its old name) the literal rules on the time-stepping operator.
#[test]
fn check_dumps_the_dataflow_plan() {
    let plan = |extra: &[&str]| {
        let output = stgflow()
            .args(["check", "datasets/examples/inertia.tdl", "--dump", "plan"])
            .args(extra)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(output.status.success());
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let lowered = plan(&[]);
    assert!(
        lowered.contains(
            "persist holds: copies r0; keeps r1; terminated by term r2; reads init(T-0) init(T-1); key holds/1 init/1 term/1; exclusive values"
        ),
        "{lowered}"
    );
    let literal = plan(&["--no-lowering"]);
    assert!(
        literal.contains("stepper {holds, term} r0 r1 r2; horizon 1; key holds/1 init/1 term/1"),
        "{literal}"
    );
    assert_eq!(plan(&["--no-window-lowering"]), literal);
}

/// A component that recurses through time without a key says why it runs on one worker
/// (the rule where the key that got furthest stops, or the rule without a positive
/// atom), unless its own facts are keyed apart: then it is a loop through time, sharded
/// by each join's key, and only the literal plan (`--no-lowering`) steps it on one worker.
#[test]
fn check_says_why_a_component_runs_on_one_worker() {
    let dir = common::tempdir();
    let keyed_apart = "a(X, Y, T) :- e(X, Y, T).\na(X, Y, T) :- a(X, Y, T-1), not s(X, T-1).\ns(X, T) :- a(Y, X, T-1), f(X, T).\n";
    for (text, flags, says) in [
        (
            keyed_apart,
            &["--no-lowering"][..],
            "stepper {a, s} r0 r1 r2; horizon 1; key none, so it runs on one worker: no argument of a runs through every rule (the furthest stops at r2,",
        ),
        (
            keyed_apart,
            &[][..],
            "cycle {a, s} r0 r1 r2; horizon 1; fed back a time point later, each join sharded by its own key",
        ),
        (
            "p(T) :- not p(T-1).\n",
            &[][..],
            "stepper {p} r0; horizon 1; key none, so it runs on one worker: r0 has no positive atom to carry one",
        ),
    ] {
        let program = dir.join("p.tdl");
        std::fs::write(&program, text).unwrap_or_else(|e| panic!("{e}"));
        let program = program.to_string_lossy().into_owned();
        let mut args = vec!["check", &program, "--dump", "plan"];
        args.extend(flags);
        let plan = common::stdout_of(&args);
        assert!(plan.contains(says), "{plan}");
    }
}

/// Two processes of a timely cluster on loopback compute the same output as the reference
/// evaluator; process 1 prints nothing.
#[test]
fn two_processes_on_loopback_equal_the_reference() {
    let args: Vec<String> = [
        "run",
        "datasets/examples/device_safety.tdl",
        "datasets/examples/device_safety.facts",
        "--mode",
        "intervals",
    ]
    .map(str::to_owned)
    .to_vec();
    let outputs = run_cluster(&root(), &args, 2, 2);
    for output in &outputs {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let reference = stgflow()
        .args(&args)
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

/// The golden cases of the language (rules without a positive atom, the time as a value,
/// recursion through time) and of sparse timelines (events 10^3 to 10^18 time points
/// apart) on a cluster of two processes of one worker each print their expected output
/// from process 0.
#[test]
fn language_cases_on_two_processes_print_their_expected_output() {
    let dir = root().join("tests/cases/language");
    let mut programs: Vec<std::path::PathBuf> = ["language", "sparse"]
        .iter()
        .flat_map(|cases| {
            let dir = root().join("tests/cases").join(cases);
            std::fs::read_dir(&dir)
                .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
                .filter_map(|entry| entry.ok().map(|e| e.path()))
        })
        .filter(|path| path.extension().is_some_and(|e| e == "tdl"))
        .collect();
    programs.sort();
    assert!(programs.len() >= 13, "{programs:?}");
    for program in programs {
        let beside = |ext: &str| program.with_extension(ext);
        let mut args = vec!["run".to_owned(), program.display().to_string()];
        if beside("facts").exists() {
            args.push(beside("facts").display().to_string());
        }
        if let Ok(extra) = std::fs::read_to_string(beside("args")) {
            args.extend(extra.split_whitespace().map(str::to_owned));
        }
        let expected = std::fs::read_to_string(beside("expected"))
            .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
        let outputs = run_cluster(&dir, &args, 2, 1);
        assert!(
            outputs.iter().all(|o| o.status.success()),
            "{}: {}",
            program.display(),
            String::from_utf8_lossy(&outputs[0].stderr)
        );
        assert_eq!(
            sorted(&String::from_utf8_lossy(&outputs[0].stdout)),
            sorted(&expected),
            "{}",
            program.display()
        );
    }
}

/// A process whose peer never comes gives up with a clear message, within a bounded time.
#[test]
fn a_missing_cluster_peer_is_a_clear_error() {
    let port = free_port();
    let dir = tempdir();
    // Process 1 dials process 0, which is never started.
    let hostfile = hostfile(&dir, &[port, port.wrapping_add(1)]);
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

#[test]
fn a_lars_program_over_a_laser_stream_prints_laser_output() {
    let run = |extra: &[&str]| {
        let output = stgflow()
            .args([
                "run",
                "datasets/examples/network_integrity.lars",
                "datasets/examples/network_integrity.laser",
                "--mode",
                "laser",
            ])
            .args(extra)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let laser = run(&[]);
    let lines: Vec<&str> = laser.lines().collect();
    // One line per time point of the declared timeline 0..=12, in order.
    assert_eq!(lines.len(), 13, "{laser}");
    assert_eq!(lines[0], "0: trusted(d1) unverified(d2) verified(d1)");
    assert_eq!(
        lines[4],
        "4: integrity_threat_of(d1,d2) trusted(d1) unverified(d2) verified(d1)"
    );
    assert_eq!(lines[12], "12:");
    assert_eq!(run(&["--no-lowering", "-w", "2"]), laser);
    assert_eq!(run(&["--engine", "reference"]), laser);
}

/// Standard output as a regular file is written in aligned pieces, not as into a pipe
/// (`stgflow_io::sink::Buffered`): the file's bytes are the pipe's, over an output of
/// many pieces and lines longer than a piece, and with a bad line at the end the file
/// keeps every completed time point's line.
#[test]
fn output_into_a_file_is_the_output_into_a_pipe() {
    let dir = tempdir();
    let program = dir.join("d5.lars");
    std::fs::write(&program, "q(A,B) :- time_win(5,0,1,diamond(p(A,B)))\n")
        .unwrap_or_else(|e| panic!("{e}"));
    let mut stream = String::from("#timeline 0 299\n");
    for t in 0..300 {
        stream.push_str(&format!("{t}:"));
        for i in 0..(if t % 50 == 7 { 2000 } else { 40 }) {
            stream.push_str(&format!(" p(id{},b{})", t * 40 + i, i % 13));
        }
        stream.push('\n');
    }
    let good = dir.join("s.laser");
    std::fs::write(&good, &stream).unwrap_or_else(|e| panic!("{e}"));
    let bad = dir.join("bad.laser");
    std::fs::write(&bad, format!("{stream}300: p(a b)\n")).unwrap_or_else(|e| panic!("{e}"));
    for (input, code) in [(&good, 0), (&bad, 1)] {
        let run = |stdout: Stdio| {
            stgflow()
                .arg("run")
                .arg(&program)
                .arg(input)
                .args(["--mode", "laser"])
                .stdout(stdout)
                .output()
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let piped = run(Stdio::piped());
        assert_eq!(piped.status.code(), Some(code));
        assert!(
            piped.stdout.len() > 20 << 16,
            "{} bytes",
            piped.stdout.len()
        );
        let path = dir.join("out");
        let file = std::fs::File::create(&path).unwrap_or_else(|e| panic!("{e}"));
        let filed = run(Stdio::from(file));
        assert_eq!(filed.status.code(), Some(code));
        let written = std::fs::read(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(written.len(), piped.stdout.len());
        assert!(
            written == piped.stdout,
            "the file's bytes differ from the pipe's"
        );
    }
}

#[test]
fn check_dumps_the_td_translation_of_a_lars_program() {
    let output = stgflow()
        .args([
            "check",
            "datasets/examples/network_integrity.lars",
            "--dump",
            "td",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Example 5 of the paper: rule (9) for T' ↦ T-1, pointing at the user's line. Rules
    // read a rule head's predicate as `…__read`: what the rules derive and the stream's
    // atoms of that name (only the derived ones are printed).
    assert!(stdout.contains(
        "integrity_threat_of(X, Y, Now) :- trusted__box2(X, Now), unverified__read(Y, Now-1), connected(X, Y, Now-1).  % LARS rule 4 (T ↦ Now-1), datasets/examples/network_integrity.lars:27:1"
    ), "{stdout}");
    assert!(
        stdout.contains("unverified__read(X1, T) :- unverified__input(X1, T)."),
        "{stdout}"
    );
    assert!(
        stdout.contains("repair__dia2(X1, T) :- repair(X1, T-2)."),
        "{stdout}"
    );
}

#[test]
fn a_time_variable_used_only_as_a_value_reads_a_window_over_stamped_facts() {
    let dir = tempdir();
    let program = dir.join("at.lars");
    std::fs::write(
        &program,
        "q(T,A) :- time_win(2,0,1,@(T,p(A,B)))\n\
         r(T,A,B) :- time_win(3,0,1,@(T,p(A,B)))\n\
         early(X) :- @(U,ping(X)) and time_win(1,0,1,@(U,pong(X))) and COMP(<=,U,3)\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let output = stgflow()
        .args(["check", "--dump", "td"])
        .arg(&program)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    // T occurs in one `@` only: ♢2 over p stamped with its time point, no instances.
    assert!(
        stdout.contains("q(T, A, Now) :- p__at__dia2(T, A, B, Now)."),
        "{stdout}"
    );
    assert!(
        stdout.contains("p__at(X0, X1, X2, T) :- p(X1, X2, T), X0 = T."),
        "{stdout}"
    );
    assert!(
        stdout.contains("p__at__dia2(X1, X2, X3, T) :- p__at(X1, X2, X3, T-2)."),
        "{stdout}"
    );
    assert!(!stdout.contains("T = Now-"), "{stdout}");
    // A rule that is the window itself defines its head as ♢3 over the stamped atom.
    assert!(
        stdout.contains("r(X1, X2, X3, T) :- p__at(X1, X2, X3, T-3)."),
        "{stdout}"
    );
    // U is read by two `@`s: Algorithm 2's instances, U = Now - i.
    assert!(
        stdout.contains("early(X, T) :- ping(X, T-1), pong(X, T-1), U <= 3, U = T-1."),
        "{stdout}"
    );
}

#[test]
fn ec_diagnostics_point_at_the_event_description() {
    let dir = tempdir();
    let program = dir.join("bad.ec");
    std::fs::write(
        &program,
        "initiatedAt(on(X)=true, T) :- happensAt(press(X), T).\n\
         holdsAt(on(X)=true, T) :- holdsAt(power(X)=true, T).\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let output = stgflow()
        .args(["check", &program.to_string_lossy()])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("E510") && stderr.contains("bad.ec:2:9"),
        "{stderr}"
    );
}
