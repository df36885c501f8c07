//! `--output-dir`: one file per printed predicate, written by the dataflow engine's workers
//! (each its share of the predicates) or by the reference engine. Each TD file holds
//! exactly the lines stdout would print for its predicate, in the same order, for every
//! mode, engine, worker count and cluster; CSV and JSON lines say the same in their own
//! syntax.

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

/// Every file of `dir`, by name, with its text.
fn files(dir: &Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
            (name, text)
        })
        .collect();
    files.sort();
    files
}

/// The files stdout's lines make: each predicate's lines, in stdout's order.
fn split_by_predicate(stdout: &str, names: &[&str]) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = names
        .iter()
        .map(|name| {
            let text: String = stdout
                .lines()
                .filter(|line| predicate_of(line) == *name)
                .map(|line| format!("{line}\n"))
                .collect();
            (format!("{name}.facts"), text)
        })
        .collect();
    files.sort();
    files
}

#[test]
fn td_files_hold_what_stdout_prints_per_predicate_on_every_engine() {
    let dir = tempdir();
    for mode in ["points", "changes", "intervals"] {
        let stdout = run(&[DEVICE_SAFETY[0], DEVICE_SAFETY[1], "--mode", mode]);
        let expected = split_by_predicate(&stdout, &["safe", "trusted"]);
        assert!(
            expected.iter().all(|(_, text)| !text.is_empty()),
            "{mode}: {expected:?}"
        );
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
            assert_eq!(files(&out), expected, "{mode} {engine:?}");
        }
    }
}

/// CTM's own data through a cluster of two processes: the files of process 0 are those of
/// one process with one worker, and those stdout's lines make.
#[test]
fn a_cluster_writes_the_files_one_process_writes_on_real_data() {
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
    let one = dir.join("one");
    let mut with_dir = refs.clone();
    let one_arg = one.to_string_lossy().into_owned();
    with_dir.extend(["--output-dir", &one_arg]);
    assert_eq!(run(&with_dir), "");
    let written = files(&one);
    let names: Vec<&str> = written
        .iter()
        .map(|(name, _)| name.trim_end_matches(".facts"))
        .collect();
    assert!(names.len() >= 2, "CTM prints several predicates: {names:?}");
    assert_eq!(written, split_by_predicate(&stdout, &names));

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
    assert_eq!(files(&two), written);
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
            "arg1,arg2,time,change\n\"a, \"\"quoted\"\" one\",-2,1,1\nplain,1,1,1\n\"a, \"\"quoted\"\" one\",-2,2,-1\n",
        ),
        (
            "csv",
            "points",
            "arg1,arg2,time\n\"a, \"\"quoted\"\" one\",-2,1\nplain,1,1\nplain,1,2\n",
        ),
        (
            "csv",
            "intervals",
            "arg1,arg2,start,end\n\"a, \"\"quoted\"\" one\",-2,1,2\nplain,1,1,3\n",
        ),
        (
            "jsonl",
            "changes",
            "{\"time\":1,\"change\":1,\"args\":[\"a, \\\"quoted\\\" one\",-2]}\n\
             {\"time\":1,\"change\":1,\"args\":[\"plain\",1]}\n\
             {\"time\":2,\"change\":-1,\"args\":[\"a, \\\"quoted\\\" one\",-2]}\n",
        ),
        (
            "jsonl",
            "intervals",
            "{\"start\":1,\"end\":2,\"args\":[\"a, \\\"quoted\\\" one\",-2]}\n\
             {\"start\":1,\"end\":3,\"args\":[\"plain\",1]}\n",
        ),
    ];
    for (format, mode, text) in expected {
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
            assert_eq!(
                files(&out),
                [(format!("q.{format}"), text.to_owned())],
                "{format} {mode} {engine}"
            );
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
