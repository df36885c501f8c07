//! `--output-dir`: part files, a directory per printed predicate (`DIR/q/part-00000.facts`),
//! written by the dataflow engine's workers (each its own parts) or by the reference
//! engine (part 0). The parts of a predicate hold exactly the lines stdout would print for
//! it, each part in stdout's order, for every mode, engine, worker count and cluster; CSV
//! and JSON lines say the same in their own syntax.

mod common;

use std::path::Path;

use common::{run_cluster, stgflow, tempdir};

const DEVICE_SAFETY: [&str; 2] = [
    "datasets/examples/device_safety.tdl",
    "datasets/examples/device_safety.facts",
];

/// The predicate a printed line is about: `p(…`, `+p(…`, `-p(…`, `p [..`, `p @..`.
fn predicate_of(line: &str) -> &str {
    let line = line.trim_start_matches(['+', '-']);
    let end = line.find(['(', ' ']).unwrap_or(line.len());
    &line[..end]
}

/// Runs `stgflow run ARGS` from the repository root; returns stdout, failing on an error.
fn run(args: &[&str]) -> String {
    let mut all = vec!["run"];
    all.extend(args);
    common::stdout_of(&all)
}

/// The entries of `dir`, sorted by name.
fn entries(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap_or_else(|e| panic!("{e}")).path())
        .collect();
    paths.sort();
    paths
}

fn name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Every predicate directory of `dir` with its part files' texts, in part order; each part
/// is named `part-NNNNN.<ending>`.
fn parts(dir: &Path, ending: &str) -> Vec<(String, Vec<String>)> {
    entries(dir)
        .iter()
        .map(|predicate| {
            let texts = entries(predicate)
                .iter()
                .map(|part| {
                    let name = name_of(part);
                    let number = (name.strip_prefix("part-"))
                        .and_then(|rest| rest.strip_suffix(&format!(".{ending}")))
                        .unwrap_or_else(|| panic!("{}: not a part file", part.display()));
                    assert!(number.len() == 5 && number.parse::<u32>().is_ok(), "{name}");
                    std::fs::read_to_string(part).unwrap_or_else(|e| panic!("{e}"))
                })
                .collect();
            (name_of(predicate), texts)
        })
        .collect()
}

/// Checks that each predicate's parts hold exactly `expected`'s lines for it (after a
/// `header` each, if any), each part's lines in `expected`'s order, and returns the
/// predicates' names.
fn assert_parts_hold(
    dir: &Path,
    ending: &str,
    header: Option<&str>,
    expected: &[&str],
) -> Vec<String> {
    let mut names = Vec::new();
    let mut all: Vec<&str> = Vec::new();
    let written = parts(dir, ending);
    for (name, texts) in &written {
        assert!(!texts.is_empty(), "{name}: no part");
        // TD lines name their predicate; a CSV or JSON file's lines are its own alone.
        let own: Vec<&str> = (expected.iter().copied())
            .filter(|line| ending != "facts" || predicate_of(line) == name)
            .collect();
        for text in texts {
            let mut lines: Vec<&str> = text.lines().collect();
            if let Some(header) = header {
                assert_eq!(lines.first().copied(), Some(header), "{name}: {text}");
                lines.remove(0);
            }
            // A part's lines are a subsequence of the predicate's lines in stdout's order.
            let mut rest = own.iter();
            for line in &lines {
                assert!(
                    rest.any(|wanted| wanted == line),
                    "{name}: {line:?} out of stdout's order or not printed: {text}"
                );
            }
            all.extend(lines);
        }
        names.push(name.clone());
    }
    let mut expected = expected.to_vec();
    expected.sort_unstable();
    all.sort_unstable();
    // Named, not listed: a long run's lines would bury the message.
    let missing: Vec<&&str> = expected
        .iter()
        .filter(|l| all.binary_search(l).is_err())
        .take(5)
        .collect();
    let extra: Vec<&&str> = all
        .iter()
        .filter(|l| expected.binary_search(l).is_err())
        .take(5)
        .collect();
    assert!(
        all == expected,
        "the parts hold {} lines, stdout {}; missing {missing:?}, not printed {extra:?}",
        all.len(),
        expected.len()
    );
    names
}

#[test]
fn td_parts_hold_what_stdout_prints_per_predicate_on_every_engine() {
    let dir = tempdir();
    for mode in ["points", "changes", "intervals"] {
        let stdout = run(&[DEVICE_SAFETY[0], DEVICE_SAFETY[1], "--mode", mode]);
        let expected: Vec<&str> = stdout.lines().collect();
        for engine in [
            &["--engine", "reference"][..],
            &["-w", "1"],
            &["-w", "2"],
            &["-w", "3"],
            &["-w", "2", "--diff-on-workers"],
        ] {
            let out = dir.join(format!("{mode}{}", engine.join("")));
            let out_arg = out.to_string_lossy().into_owned();
            let printed = run(&[
                &[
                    DEVICE_SAFETY[0],
                    DEVICE_SAFETY[1],
                    "--mode",
                    mode,
                    "--output-dir",
                    &out_arg,
                ][..],
                engine,
            ]
            .concat());
            assert_eq!(printed, "", "{mode} {engine:?}: nothing on stdout");
            let names = assert_parts_hold(&out, "facts", None, &expected);
            assert_eq!(names, ["safe", "trusted"], "{mode} {engine:?}");
        }
    }
}

/// Programs and input split into many parts: a bounded program's parts are ranges of the
/// timeline, whose files in part order are stdout's lines; a recursive one's are its
/// workers' shards of the keys. A later run with fewer parts leaves none of an earlier
/// run's behind.
#[test]
fn many_parts_hold_what_stdout_prints_and_a_rerun_replaces_them() {
    let dir = tempdir();
    let stream = dir.join("e.facts");
    let text: String = (0..20_000)
        .map(|t| format!("e(n{}, {t}).\noff(n{}, {t}).\n", t % 7, t % 5))
        .collect();
    std::fs::write(&stream, text).unwrap_or_else(|e| panic!("{e}"));
    let stream = stream.to_string_lossy().into_owned();
    let out = dir.join("out").to_string_lossy().into_owned();
    let programs = [
        (
            "q(X, T) :- e(X, T - 1).\nr(X, T) :- e(X, T), not e(X, T - 2).\n",
            true,
        ),
        (
            "q(X, T) :- e(X, T).\nq(X, T) :- q(X, T - 1), not off(X, T).\nr(X, T) :- q(X, T), e(X, T).\n",
            false,
        ),
    ];
    for (number, (text, by_time)) in programs.into_iter().enumerate() {
        let program = dir.join(format!("p{number}.tdl"));
        std::fs::write(&program, text).unwrap_or_else(|e| panic!("{e}"));
        let program = program.to_string_lossy().into_owned();
        for mode in ["changes", "points", "intervals"] {
            let stdout = run(&[&program, &stream, "--mode", mode, "-w", "1"]);
            let expected: Vec<&str> = stdout.lines().collect();
            for (workers, part_bytes) in [("3", &["--part-bytes", "4096"][..]), ("1", &[])] {
                let args = [
                    &[
                        program.as_str(),
                        &stream,
                        "--mode",
                        mode,
                        "-w",
                        workers,
                        "--output-dir",
                        &out,
                    ][..],
                    part_bytes,
                ]
                .concat();
                let context = format!("{text:?} {mode} -w {workers} {part_bytes:?}");
                assert_eq!(run(&args), "", "{context}");
                let names = assert_parts_hold(Path::new(&out), "facts", None, &expected);
                assert_eq!(names, ["q", "r"], "{context}");
                let written = parts(Path::new(&out), "facts");
                if part_bytes.is_empty() {
                    continue;
                }
                assert!(written[0].1.len() > 1, "{context}: one part");
                if !by_time || mode == "intervals" {
                    continue;
                }
                // Ranges of the timeline in order are its lines in stdout's order.
                for (name, texts) in &written {
                    let joined: String = texts.concat();
                    let own: String = (stdout.lines())
                        .filter(|line| predicate_of(line) == name)
                        .map(|line| format!("{line}\n"))
                        .collect();
                    assert_eq!(joined, own, "{context} {name}");
                }
            }
        }
    }
}

/// CTM's own data through a cluster of two processes: the parts of process 0 and 1
/// together hold what stdout prints.
#[test]
fn a_cluster_writes_parts_that_hold_what_one_process_prints_on_real_data() {
    let root = common::root();
    let mut streams = common::ctm_streams();
    let description = root.join("../shared/data/rtec/ctm/rtec");
    let program = description
        .join("rules.prolog")
        .to_string_lossy()
        .into_owned();
    let vehicles = description
        .join("vehicles.prolog")
        .to_string_lossy()
        .into_owned();
    let dir = tempdir();
    let mut args = vec![program.clone(), vehicles];
    args.append(&mut streams);
    args.extend(["--mode", "intervals"].map(str::to_owned));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let stdout = run(&refs);
    let expected: Vec<&str> = stdout.lines().collect();
    let one = dir.join("one");
    let mut with_dir = refs.clone();
    let one_arg = one.to_string_lossy().into_owned();
    with_dir.extend(["--output-dir", &one_arg]);
    assert_eq!(run(&with_dir), "");
    let names = assert_parts_hold(&one, "facts", None, &expected);
    assert!(names.len() >= 2, "CTM prints several predicates: {names:?}");

    let two = dir.join("two");
    let mut cluster_args: Vec<String> = vec!["run".to_owned()];
    cluster_args.extend(args.iter().cloned());
    cluster_args.extend([
        "--output-dir".to_owned(),
        two.to_string_lossy().into_owned(),
    ]);
    let outputs = run_cluster(&dir, &cluster_args, 2, 2);
    for output in &outputs {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        assert!(output.stdout.is_empty());
    }
    assert_eq!(assert_parts_hold(&two, "facts", None, &expected), names);
}

#[test]
fn csv_and_json_lines_say_the_same_as_td() {
    let dir = tempdir();
    let program = dir.join("p.tdl");
    let stream = dir.join("e.facts");
    std::fs::write(&program, "q(X, N, T) :- e(X, N, T).\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        &stream,
        "e(plain, 1, 1).\ne(\"a, \\\"quoted\\\" one\", -2, 1).\ne(plain, 1, 2).\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let (program, stream) = (
        program.to_string_lossy().into_owned(),
        stream.to_string_lossy().into_owned(),
    );
    let expected = [
        (
            "csv",
            "changes",
            Some("arg1,arg2,time,change"),
            "\"a, \"\"quoted\"\" one\",-2,1,1\nplain,1,1,1\n\"a, \"\"quoted\"\" one\",-2,2,-1\n",
        ),
        (
            "csv",
            "points",
            Some("arg1,arg2,time"),
            "\"a, \"\"quoted\"\" one\",-2,1\nplain,1,1\nplain,1,2\n",
        ),
        (
            "csv",
            "intervals",
            Some("arg1,arg2,start,end"),
            "\"a, \"\"quoted\"\" one\",-2,1,2\nplain,1,1,3\n",
        ),
        (
            "jsonl",
            "changes",
            None,
            "{\"time\":1,\"change\":1,\"args\":[\"a, \\\"quoted\\\" one\",-2]}\n\
             {\"time\":1,\"change\":1,\"args\":[\"plain\",1]}\n\
             {\"time\":2,\"change\":-1,\"args\":[\"a, \\\"quoted\\\" one\",-2]}\n",
        ),
        (
            "jsonl",
            "intervals",
            None,
            "{\"start\":1,\"end\":2,\"args\":[\"a, \\\"quoted\\\" one\",-2]}\n\
             {\"start\":1,\"end\":3,\"args\":[\"plain\",1]}\n",
        ),
    ];
    for (format, mode, header, text) in expected {
        for engine in ["reference", "dataflow"] {
            let out = dir.join(format!("{format}-{mode}-{engine}"));
            let out_arg = out.to_string_lossy().into_owned();
            // Two workers on the dataflow engine; the reference runs on one thread.
            let workers = if engine == "dataflow" { "2" } else { "1" };
            let args = [
                program.as_str(),
                stream.as_str(),
                "--mode",
                mode,
                "--engine",
                engine,
                "-w",
                workers,
                "--output-dir",
                &out_arg,
                "--output-format",
                format,
            ];
            assert_eq!(run(&args), "");
            let lines: Vec<&str> = text.lines().collect();
            let names = assert_parts_hold(&out, format, header, &lines);
            assert_eq!(names, ["q"], "{format} {mode} {engine}");
        }
    }
}

#[test]
fn output_dir_refuses_what_it_cannot_do() {
    let dir = tempdir();
    let blocked = dir.join("a-file");
    std::fs::write(&blocked, "").unwrap_or_else(|e| panic!("{e}"));
    let inside = blocked.join("sub").to_string_lossy().into_owned();
    let out = dir.join("out").to_string_lossy().into_owned();
    for (args, says) in [
        (vec!["--output-format", "csv"], "--output-dir"),
        (
            vec!["--output-dir", &out, "--mode", "laser"],
            "--mode laser",
        ),
        (vec!["--output-dir", &inside], "cannot create"),
    ] {
        let output = stgflow()
            .args(["run", DEVICE_SAFETY[0], DEVICE_SAFETY[1]])
            .args(&args)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}");
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}
