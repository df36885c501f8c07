//! The corpus of bad input, run through the real `stgflow` binary: every case exits with
//! the expected code and diagnostic, never prints `panicked`, and keeps the output of
//! the time points completed before the failure.
//!
//! A case is every program under `tests/cases/**` whose name contains `.fail.` or
//! `.warn.` (and every program under `tests/cases/bad_input/`), with beside it:
//! * the stream: `NAME.facts`, `NAME.csv` or `NAME.laser` (passed as a file), or
//!   `NAME.stdin` (piped to stdin; give `-` in the arguments);
//! * `NAME.args`: extra arguments on one line (`--strict`, `--lateness 2`, …);
//! * `NAME.expected`: `exit: N`, `--- stdout` (compared as sorted lines: what was printed
//!   before the run stopped), `--- stderr` (exact).
//!
//! A name with `.fail.` must exit non-zero, any other zero. Cases too big or too odd to
//! keep as files (10,000 rules, a megabyte line) are [`generated`] into a scratch
//! directory laid out like `tests/cases`, with their `.expected` in `tests/cases/`.
//! Paths in diagnostics are relative to the cases directory, as a user in it sees them.
//!
//! `UPDATE_EXPECT=1 cargo test -p stgflow-cli --test corpus` rewrites the expected files;
//! review the diff.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use assert_cmd::cargo::CommandCargoExt;

const PROGRAM_EXTENSIONS: [&str; 3] = ["tdl", "lars", "ec"];
const STREAM_EXTENSIONS: [&str; 3] = ["facts", "csv", "laser"];

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/cases")
}

/// A case: its program, relative to `root`.
struct Case {
    root: PathBuf,
    program: PathBuf,
}

fn collect(root: &Path, dir: &Path, out: &mut Vec<Case>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(root, &path, out);
            continue;
        }
        let name = path.to_string_lossy().into_owned();
        let is_program = path
            .extension()
            .is_some_and(|e| PROGRAM_EXTENSIONS.iter().any(|p| e == *p));
        let in_corpus = name.contains(".fail.")
            || name.contains(".warn.")
            || path.starts_with(root.join("bad_input"));
        if is_program && in_corpus {
            out.push(Case {
                root: root.to_owned(),
                program: path.strip_prefix(root).unwrap_or(&path).to_owned(),
            });
        }
    }
}

/// `NAME.ext` beside `NAME.tdl` (`Path::with_extension` would drop a `.fail` in NAME).
fn beside(program: &Path, ext: &str) -> PathBuf {
    let text = program.to_string_lossy();
    let stem = PROGRAM_EXTENSIONS
        .iter()
        .find_map(|p| text.strip_suffix(&format!(".{p}")))
        .unwrap_or(&text);
    PathBuf::from(format!("{stem}.{ext}"))
}

fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    lines.sort_unstable();
    lines
}

/// Runs a case; returns what it printed, rendered like `.expected`.
fn run(case: &Case) -> (i32, String) {
    let root = &case.root;
    let mut command = Command::cargo_bin("stgflow").unwrap_or_else(|e| panic!("{e}"));
    command.current_dir(root).arg("run").arg(&case.program);
    for ext in STREAM_EXTENSIONS {
        let stream = beside(&case.program, ext);
        if root.join(&stream).exists() {
            command.arg(&stream);
        }
    }
    if let Ok(extra) = std::fs::read_to_string(root.join(beside(&case.program, "args"))) {
        command.args(extra.split_whitespace());
    }
    let stdin = std::fs::read(root.join(beside(&case.program, "stdin"))).ok();
    command
        .env("NO_COLOR", "1")
        .env_remove("RUST_BACKTRACE")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start stgflow: {e}"));
    if let (Some(bytes), Some(mut pipe)) = (stdin, child.stdin.take()) {
        // The run may stop before reading everything: a closed pipe is fine.
        let _ = pipe.write_all(&bytes);
    }
    let output = child
        .wait_with_output()
        .unwrap_or_else(|e| panic!("stgflow did not finish: {e}"));
    // A signal (a crash, an abort on stack overflow) has no exit code.
    let code = output.status.code().unwrap_or(-1);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut text = format!("exit: {code}\n--- stdout\n");
    for line in sorted_lines(&stdout) {
        text.push_str(line);
        text.push('\n');
    }
    text.push_str("--- stderr\n");
    text.push_str(&String::from_utf8_lossy(&output.stderr));
    (code, text)
}

/// Cases generated at test time, as (path under the cases directory, bytes).
fn generated() -> Vec<(&'static str, Vec<u8>)> {
    let mut chain = String::from("r0(X, T) :- p(X, T).\n");
    for i in 1..10_000 {
        chain.push_str(&format!("r{i}(X, T) :- r{}(X, T), p(X, T).\n", i - 1));
    }
    let mut unsafe_last = chain.clone();
    unsafe_last.push_str("r10000(X, Y, T) :- r9999(X, T).\n");
    let long_fact_line = "p(a, 1). ".repeat(100_000);
    let mut long_bad_line = "p(a, 1). ".repeat(100_000);
    long_bad_line.push_str("p(a 2).\n");
    vec![
        // 10,000 rules in 10,000 strata: checks and runs in well under a second.
        ("bad_input/rules_10000.warn.tdl", chain.into_bytes()),
        (
            "bad_input/rules_10000.warn.facts",
            b"p(a, 1).\np(b, 2).\n".to_vec(),
        ),
        (
            "bad_input/rules_10000.warn.args",
            b"--engine reference --output r9999".to_vec(),
        ),
        // The error in rule 10,001 is found and located.
        (
            "bad_input/rules_10000_unsafe.fail.tdl",
            unsafe_last.into_bytes(),
        ),
        // A line of 900 kB: 100,000 facts of one time point.
        (
            "bad_input/long_line.warn.tdl",
            b"q(X, T) :- p(X, T).\n".to_vec(),
        ),
        (
            "bad_input/long_line.warn.facts",
            long_fact_line.into_bytes(),
        ),
        // A malformed fact at the end of a line of 900 kB.
        (
            "bad_input/long_bad_line.fail.tdl",
            b"q(X, T) :- p(X, T).\n".to_vec(),
        ),
        (
            "bad_input/long_bad_line.fail.facts",
            long_bad_line.into_bytes(),
        ),
    ]
}

/// Writes the generated cases under a scratch directory laid out like `tests/cases`.
fn write_generated() -> PathBuf {
    let root = Path::new(env!("CARGO_TARGET_TMPDIR")).join("corpus");
    for (path, bytes) in generated() {
        let path = root.join(path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(&path, bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    }
    root
}

#[test]
fn bad_input_corpus_exits_with_the_expected_code_and_diagnostic() {
    let cases_root = cases_dir().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let mut cases = Vec::new();
    collect(&cases_root, &cases_root, &mut cases);
    let generated_root = write_generated();
    collect(&generated_root, &generated_root, &mut cases);
    assert!(cases.len() >= 40, "only {} corpus cases", cases.len());
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for case in &cases {
        let (code, actual) = run(case);
        let name = case.program.display().to_string();
        if actual.contains("panicked") || code < 0 || code == 101 {
            failures.push(format!("{name}: crashed (exit {code})\n{actual}"));
            continue;
        }
        if name.contains(".fail.") != (code != 0) {
            failures.push(format!(
                "{name}: exit {code} does not fit the name\n{actual}"
            ));
            continue;
        }
        // Expected files of generated cases live in the cases directory too.
        let expected_path = cases_root.join(beside(&case.program, "expected"));
        let expected = std::fs::read_to_string(&expected_path).ok();
        if expected
            .as_deref()
            .is_some_and(|e| e.trim_end() == actual.trim_end())
        {
            continue;
        }
        if update {
            std::fs::write(&expected_path, &actual)
                .unwrap_or_else(|e| panic!("write {}: {e}", expected_path.display()));
        } else {
            failures.push(format!(
                "{name}\n--- expected\n{}\n--- actual\n{actual}",
                expected.as_deref().unwrap_or("(no .expected file)")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus case(s) differ (UPDATE_EXPECT=1 to refresh):\n\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n")
    );
}
