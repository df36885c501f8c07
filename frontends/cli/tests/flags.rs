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
fn print_from_after_until_or_beside_the_workers_files_is_refused() {
    let output = run(&["run", PROGRAM, STREAM, "--print-from", "9", "--until", "5"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("--print-from 9 is after --until 5"),
        "{}",
        text(&output.stderr)
    );
    let dir = common::tempdir();
    let out = dir.join("out").to_string_lossy().into_owned();
    let output = run(&[
        "run",
        PROGRAM,
        STREAM,
        "--print-from",
        "4",
        "--output-dir",
        &out,
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("--print-from with --output-dir"),
        "{}",
        text(&output.stderr)
    );
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

/// `(time, line)` of each `fact(args,T).` line of `points` output.
fn points(text: &str) -> Vec<(u64, String)> {
    text.lines()
        .map(|line| {
            let (fact, time) = line
                .trim_end_matches(").")
                .rsplit_once(',')
                .unwrap_or_else(|| panic!("not a point: {line}"));
            (
                time.parse().unwrap_or_else(|e| panic!("{e}: {line}")),
                format!("{fact})"),
            )
        })
        .collect()
}

#[test]
fn print_from_evaluates_everything_and_prints_from_t_on() {
    let full = text(&run(&["run", PROGRAM, STREAM, "--mode", "points"]).stdout);
    let full = points(&full);
    let intervals = text(&run(&["run", PROGRAM, STREAM, "--mode", "intervals"]).stdout);
    for from in [0u64, 3, 4, 7, 15, 40] {
        let from_text = from.to_string();
        for engine in [&["-w", "1"][..], &["-w", "2"], &["--engine", "reference"]] {
            let with = |mode: &str| {
                let mut args = vec!["run", PROGRAM, STREAM, "--mode", mode, "--print-from"];
                args.push(&from_text);
                args.extend(engine);
                let output = run(&args);
                assert!(
                    output.status.success(),
                    "{args:?}: {}",
                    text(&output.stderr)
                );
                text(&output.stdout)
            };
            // points: the full run's lines from `from` on.
            let shown = points(&with("points"));
            let expected: Vec<(u64, String)> =
                full.iter().filter(|(t, _)| *t >= from).cloned().collect();
            assert_eq!(shown, expected, "points from {from} {engine:?}");
            // changes: what those points say, starting from nothing before `from`.
            let mut lines = Vec::new();
            let mut before: Vec<&String> = Vec::new();
            let last = full.iter().map(|(t, _)| *t).max().unwrap_or(0);
            for t in from..=last + 1 {
                let now: Vec<&String> = expected
                    .iter()
                    .filter(|(u, _)| *u == t)
                    .map(|(_, f)| f)
                    .collect();
                for fact in now.iter().filter(|f| !before.contains(f)) {
                    lines.push(format!("+{fact} @{t}"));
                }
                for fact in before.iter().filter(|f| !now.contains(f)) {
                    lines.push(format!("-{fact} @{t}"));
                }
                before = now;
            }
            let mut shown: Vec<String> = with("changes").lines().map(str::to_owned).collect();
            shown.sort();
            lines.sort();
            // The run ends at the last time point: the stops after it are not printed.
            lines.retain(|l| !l.ends_with(&format!("@{}", last + 1)));
            assert_eq!(shown, lines, "changes from {from} {engine:?}");
            // intervals: the full run's, cut at `from`.
            let mut cut: Vec<String> = intervals
                .lines()
                .filter_map(|line| {
                    let (fact, span) = line.split_once(" [")?;
                    let (s, e) = span.trim_end_matches(')').split_once(',')?;
                    let (s, e): (u64, u64) = (s.parse().ok()?, e.parse().ok()?);
                    (e > from).then(|| format!("{fact} [{},{e})", s.max(from)))
                })
                .collect();
            cut.sort();
            let mut shown: Vec<String> = with("intervals").lines().map(str::to_owned).collect();
            shown.sort();
            assert_eq!(shown, cut, "intervals from {from} {engine:?}");
        }
    }
}

#[test]
fn explain_takes_tick_and_shows_input_times() {
    let dir = common::tempdir();
    let rules = dir.join("switch.ec");
    std::fs::write(
        &rules,
        "initiatedAt(on(X)=true, T) :- happensAt(press(X), T).\n\
         terminatedAt(on(X)=true, T) :- happensAt(release(X), T).\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let stream = dir.join("switch.csv");
    std::fs::write(&stream, "press|20|20|a\nrelease|70|70|a\n").unwrap_or_else(|e| panic!("{e}"));
    let (rules, stream) = (
        rules.to_string_lossy().into_owned(),
        stream.to_string_lossy().into_owned(),
    );
    let intervals = text(
        &run(&[
            "run",
            "-q",
            &rules,
            &stream,
            "--tick",
            "10",
            "--mode",
            "intervals",
        ])
        .stdout,
    );
    assert_eq!(intervals, "on(a,true) [30,80)\n");
    let output = run(&[
        "explain",
        "-q",
        &rules,
        &stream,
        "on(a,true,50)",
        "--tick",
        "10",
    ]);
    let shown = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(shown.starts_with("on(a, true, 50) holds"), "{shown}");
    for step in [
        "on(a, true, 40)",
        "on(a, true, 30)",
        "on_i(a, true, 20)",
        "press(a, 20)  (input)",
    ] {
        assert!(shown.contains(step), "{step} in {shown}");
    }
    let output = run(&[
        "explain",
        "-q",
        &rules,
        &stream,
        "on(a,true,55)",
        "--tick",
        "10",
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("not a multiple of --tick 10"),
        "{}",
        text(&output.stderr)
    );
}

#[test]
fn explain_summarises_a_long_inertia_chain_and_draws_to_depth() {
    let dir = common::tempdir();
    let program = dir.join("inertia.tdl");
    std::fs::write(
        &program,
        "holds(F, T) :- init(F, T-1).\n\
         holds(F, T) :- holds(F, T-1), not term(F, T-1).\n\
         term(F, T) :- stop(F, T).\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let stream = dir.join("inertia.facts");
    std::fs::write(&stream, "init(f,1).\n").unwrap_or_else(|e| panic!("{e}"));
    let (program, stream) = (
        program.to_string_lossy().into_owned(),
        stream.to_string_lossy().into_owned(),
    );
    // 20,000 time points of inertia: one line for the run, no stack overflow.
    let output = run(&[
        "explain",
        "-q",
        &program,
        &stream,
        "holds(f,20000)",
        "--until",
        "20000",
    ]);
    assert!(output.status.success(), "{}", text(&output.stderr));
    let shown = text(&output.stdout);
    assert!(shown.lines().count() < 12, "{shown}");
    assert!(
        shown.contains(
            "holds(f, 19999) … holds(f, 4): by the same rule at each of these 19996 time points"
        ),
        "{shown}"
    );
    assert!(shown.contains("init(f, 1)  (input)"), "{shown}");
    let output = run(&[
        "explain",
        "-q",
        &program,
        &stream,
        "holds(f,5)",
        "--until",
        "5",
        "--depth",
        "1",
    ]);
    let shown = text(&output.stdout);
    assert!(output.status.success(), "{}", text(&output.stderr));
    assert!(
        shown.contains("deeper than --depth") && !shown.contains("(input)"),
        "{shown}"
    );
}

#[test]
fn stats_report_any_engine_and_json_for_scripts() {
    let dir = common::tempdir();
    for engine in [
        &["-w", "1"][..],
        &["-w", "2"],
        &["--engine", "reference"],
        &["--engine", "stg"],
    ] {
        let json = dir.join("stats.json");
        let json_arg = json.to_string_lossy().into_owned();
        let mut args = vec![
            "run",
            PROGRAM,
            STREAM,
            "--mode",
            "changes",
            "--stats",
            "--stats-json",
            &json_arg,
        ];
        args.extend(engine);
        let output = run(&args);
        let stderr = text(&output.stderr);
        assert!(output.status.success(), "{engine:?}: {stderr}");
        let printed = text(&output.stdout).lines().count();
        assert!(printed > 0);
        for line in [
            "stgflow: run report",
            "time points   15 [1, 15]",
            "input facts   13 read; skipped: 0 of unknown predicates",
            &format!("output        {printed} lines"),
            "peak RSS",
        ] {
            assert!(stderr.contains(line), "{engine:?}: {line} in {stderr}");
        }
        assert_eq!(
            stderr.contains("nodes built"),
            engine == ["--engine", "stg"],
            "{stderr}"
        );
        let json = std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}"));
        for field in [
            "\"time_points\":15,".to_owned(),
            "\"input_facts\":13,".to_owned(),
            format!("\"output_lines\":{printed},"),
            "\"peak_rss_kib\":".to_owned(),
        ] {
            assert!(json.contains(&field), "{field} in {json}");
        }
        // The configuration, for a script that gathers reports.
        let parsed: serde_json::Value =
            serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
        let config = &parsed["config"];
        assert_eq!(config["program"], PROGRAM, "{json}");
        assert_eq!(config["streams"][0], STREAM, "{json}");
        assert_eq!(config["mode"], "changes", "{json}");
        assert_eq!(config["version"], env!("CARGO_PKG_VERSION"), "{json}");
        let expected_engine = if engine[0] == "--engine" {
            engine[1]
        } else {
            "dataflow"
        };
        assert_eq!(config["engine"], expected_engine, "{json}");
        match engine[0] {
            "-w" => assert_eq!(config["workers"].to_string(), engine[1], "{json}"),
            _ => assert!(config["workers"].is_null(), "{json}"),
        }
        assert!(
            config["command"].as_array().is_some_and(|c| c.len() > 3),
            "{json}"
        );
        assert!(
            json.starts_with('{') && json.trim_end().ends_with('}'),
            "{json}"
        );
    }
}

#[test]
fn a_misspelt_predicate_gets_a_did_you_mean() {
    let output = run(&["run", PROGRAM, STREAM, "--output", "trustd"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("no predicate `trustd`; did you mean `trusted`?"),
        "{}",
        text(&output.stderr)
    );
    let output = run(&["explain", PROGRAM, STREAM, "trustd(d1,4)"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(
        text(&output.stderr).contains("no predicate `trustd`; did you mean `trusted`?"),
        "{}",
        text(&output.stderr)
    );
}

/// `explain` reads the stream only up to the fact's time: a fact at t depends on nothing
/// after it, so a malformed line long after t does not stop it, and the answer is the one
/// the whole stream gives where the whole stream reads.
#[test]
fn explain_reads_the_stream_up_to_the_facts_time() {
    let dir = common::tempdir();
    let good =
        std::fs::read_to_string(common::root().join(STREAM)).unwrap_or_else(|e| panic!("{e}"));
    let broken = dir.join("broken.facts");
    std::fs::write(&broken, format!("{good}repair(d1, 40).\nnot a fact\n"))
        .unwrap_or_else(|e| panic!("{e}"));
    let broken = broken.to_string_lossy().into_owned();
    let whole = run(&["explain", PROGRAM, STREAM, "trusted(d1, 5)"]);
    assert!(whole.status.success(), "{}", text(&whole.stderr));
    let early = run(&["explain", PROGRAM, &broken, "trusted(d1, 5)"]);
    assert!(early.status.success(), "{}", text(&early.stderr));
    assert_eq!(text(&early.stdout), text(&whole.stdout));
    // A fact after the malformed line meets it.
    let late = run(&["explain", PROGRAM, &broken, "trusted(d1, 41)"]);
    assert_eq!(late.status.code(), Some(1));
    assert!(
        text(&late.stderr).contains("broken.facts:"),
        "{}",
        text(&late.stderr)
    );
}

/// `check` names a body predicate one letter from a predicate the program reads elsewhere
/// (a typo that would only show as a rule that never fires), and an `#output` of a
/// predicate whose rule it rejected is not also called unknown.
#[test]
fn check_names_a_likely_typo_and_no_knock_on_warning() {
    let dir = common::tempdir();
    let typo = dir.join("typo.tdl");
    std::fs::write(
        &typo,
        "#output rising, low.\n\
         rising(X, T) :- reading(X, T), not reading(X, T-1).\n\
         low(X, T) :- readng(X, T), X < 3.\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let output = run(&["check", &typo.to_string_lossy()]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("[W002]"), "{stderr}");
    assert!(stderr.contains("did you mean `reading`?"), "{stderr}");
    assert!(stderr.contains("typo.tdl:3:14"), "{stderr}");

    let future = dir.join("future.tdl");
    std::fs::write(
        &future,
        "#output rising.\nrising(X, T+1) :- reading(X, T).\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let output = run(&["check", &future.to_string_lossy()]);
    let stderr = text(&output.stderr);
    assert_eq!(output.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("[E006]"), "{stderr}");
    assert!(!stderr.contains("[W001]"), "{stderr}");
}

/// A rule that flips on its own is named by `check` (W003) with the way out (`--tick`);
/// inertia, which changes only at events, is not; `-q` silences the warning.
#[test]
fn check_names_a_rule_that_makes_every_time_point_count() {
    let dir = common::tempdir();
    let blink = dir.join("blink.tdl");
    std::fs::write(
        &blink,
        "#output blink.\n\
         on(X, T) :- start(X, T).\n\
         on(X, T) :- on(X, T-1), not stop(X, T).\n\
         blink(X, T) :- on(X, T), not blink(X, T-1).\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let output = run(&["check", &blink.to_string_lossy()]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(stderr.contains("[W003]"), "{stderr}");
    assert!(stderr.contains("blink.tdl:4:1"), "{stderr}");
    assert!(stderr.contains("--tick"), "{stderr}");
    let output = run(&["check", "-q", &blink.to_string_lossy()]);
    assert!(!text(&output.stderr).contains("[W003]"));

    let inertia = common::root().join("datasets/examples/inertia.tdl");
    let output = run(&["check", &inertia.to_string_lossy()]);
    let stderr = text(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    assert!(!stderr.contains("[W003]"), "{stderr}");
}

/// A large log replayed in the default `points` mode is warned about before it floods the
/// output (W104); `changes`, `-q` and a small log are not. The size at which a log is
/// large is lowered for the test.
#[test]
fn a_large_log_in_points_mode_is_warned_about_before_the_run() {
    let warned = |args: &[&str], large: &str| {
        let output = stgflow()
            .args(["run", PROGRAM, STREAM])
            .args(args)
            .env("STGFLOW_LARGE_INPUT_BYTES", large)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(output.status.success(), "{}", text(&output.stderr));
        text(&output.stderr).contains("warning[W104]")
    };
    assert!(warned(&[], "10"));
    assert!(warned(&["--mode", "points"], "10"));
    assert!(!warned(&["--mode", "changes"], "10"));
    assert!(!warned(&["-q"], "10"));
    assert!(!warned(&[], "1000000"));
}
