//! Golden cases: every program under `tests/cases/**` is run through the `stgflow` command
//! line (in-process) and its output compared with the `.expected` file beside it.
//!
//! Every case without `.fail.`/`.warn.` also runs with `-w 2`, `-w 3`, `--engine
//! reference` and `--engine stg` (Algorithm 4; with `--stg-skip-empty` where the graph as
//! written outgrows its budget), which must print the same as the default dataflow engine
//! on one worker. (`frontends/cli/tests/cli.rs` runs the `language` cases on a cluster of
//! two processes.)
//!
//! A case `NAME.tdl` (or an Event Calculus description `NAME.ec`, or a LARS program
//! `NAME.lars`) may have beside it `NAME.facts`, `NAME.csv` or `NAME.laser` (the stream),
//! `NAME.args` (extra arguments, one line), `NAME.stg-skip-empty` (an empty file: the STG
//! run skips empty nodes from the start, for graphs that outgrow the budget as written),
//! `NAME.sparse` (an empty file: a timeline too long for the STG engine, which evaluates
//! every time point; not run there) and `NAME.expected`:
//! * normal cases: the expected stdout, compared order-insensitively;
//! * cases whose name contains `.fail.` or `.warn.`: `exit: N`, then `--- stdout`
//!   (order-insensitive) and `--- stderr` (exact): the diagnostic text users see.
//!
//! `UPDATE_EXPECT=1 cargo test -p stgflow-tests --test golden` rewrites the expected files;
//! review the diff before committing.

use std::path::{Path, PathBuf};

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("cases")
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            // The bad-input corpus runs through the real binary (stgflow-cli's
            // `tests/corpus.rs`), with stdin and generated cases this runner lacks.
            if !path.ends_with("bad_input") {
                collect(&path, out);
            }
        } else if path
            .extension()
            .is_some_and(|e| e == "tdl" || e == "ec" || e == "lars")
        {
            out.push(path);
        }
    }
}

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

/// Runs the command line with `relative` paths resolved against the cases directory,
/// with `extra` arguments appended.
fn run_case(program: &Path, extra: &[&str]) -> Outcome {
    let root = cases_dir();
    let relative = |p: &Path| {
        p.strip_prefix(&root)
            .unwrap_or(p)
            .to_string_lossy()
            .into_owned()
    };
    let mut args = vec!["stgflow".to_owned(), "run".to_owned(), relative(program)];
    for ext in ["facts", "csv", "laser"] {
        let stream = beside(program, ext);
        if stream.exists() {
            args.push(relative(&stream));
        }
    }
    if let Ok(extra) = std::fs::read_to_string(beside(program, "args")) {
        args.extend(extra.split_whitespace().map(str::to_owned));
    }
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let streams = stgflow_cli::Streams::default();
    let code = stgflow_cli::run(args, std::io::empty(), &mut stdout, &mut stderr, streams);
    Outcome {
        code,
        stdout: String::from_utf8_lossy(&stdout).into_owned(),
        stderr: String::from_utf8_lossy(&stderr).into_owned(),
    }
}

/// `NAME.ext` beside `NAME.tdl` (`Path::with_extension` would drop a `.fail` in NAME).
fn beside(program: &Path, ext: &str) -> PathBuf {
    let text = program.to_string_lossy();
    PathBuf::from(format!(
        "{}.{ext}",
        text.strip_suffix(".tdl")
            .or_else(|| text.strip_suffix(".ec"))
            .or_else(|| text.strip_suffix(".lars"))
            .unwrap_or(&text)
    ))
}

fn sorted_lines(text: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    lines.sort_unstable();
    lines
}

fn is_diagnostic_case(program: &Path) -> bool {
    let name = program
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.contains(".fail.") || name.contains(".warn.")
}

fn render(program: &Path, outcome: &Outcome) -> String {
    if is_diagnostic_case(program) {
        let stdout: Vec<&str> = sorted_lines(&outcome.stdout);
        let mut text = format!("exit: {}\n--- stdout\n", outcome.code);
        for line in stdout {
            text.push_str(line);
            text.push('\n');
        }
        text.push_str("--- stderr\n");
        text.push_str(&outcome.stderr);
        text
    } else {
        outcome.stdout.clone()
    }
}

fn matches(program: &Path, expected: &str, actual: &str) -> bool {
    if is_diagnostic_case(program) {
        expected.trim_end() == actual.trim_end()
    } else {
        sorted_lines(expected) == sorted_lines(actual)
    }
}

#[test]
fn golden_cases() {
    // Paths in diagnostics are relative to the cases directory, as a user in it sees them.
    let root = cases_dir();
    std::env::set_current_dir(&root).unwrap_or_else(|e| panic!("cd {}: {e}", root.display()));
    let mut programs = Vec::new();
    collect(&root, &mut programs);
    assert!(
        programs.len() >= 20,
        "too few golden cases found: {}",
        programs.len()
    );
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for program in &programs {
        let outcome = run_case(program, &[]);
        // Every engine must print the same: the dataflow engine on 2 and 3 workers, the
        // reference evaluator and the STG engine too.
        if !is_diagnostic_case(program) {
            let parallel = ["2", "3"].into_iter().find_map(|workers| {
                let run = run_case(program, &["-w", workers]);
                (sorted_lines(&run.stdout) != sorted_lines(&outcome.stdout))
                    .then_some((workers, run.stdout))
            });
            if let Some((workers, stdout)) = parallel {
                failures.push(format!(
                    "{}: the dataflow engine on 1 and on {workers} workers differs\n--- {workers} workers\n{stdout}\n--- 1 worker\n{}",
                    program.display(),
                    outcome.stdout
                ));
                continue;
            }
            let reference = run_case(program, &["--engine", "reference"]);
            if sorted_lines(&reference.stdout) != sorted_lines(&outcome.stdout) {
                failures.push(format!(
                    "{}: the reference evaluator and the dataflow engine differ\n--- reference\n{}\n--- dataflow\n{}",
                    program.display(),
                    reference.stdout,
                    outcome.stdout
                ));
                continue;
            }
            // And Algorithm 4, except over a sparse timeline (a `NAME.sparse` beside the
            // case: the STG engine evaluates every time point, as the paper's algorithm
            // does): as written, or, when that graph outgrows its budget (or the case says
            // it does, with a `NAME.stg-skip-empty` beside it: building the graph as
            // written up to the budget would take the test tens of seconds), with empty
            // nodes skipped.
            let sparse = beside(program, "sparse").exists();
            let skip = beside(program, "stg-skip-empty").exists();
            let stg = (!sparse).then(|| {
                let stg = if skip {
                    run_case(program, &["--engine", "stg", "--stg-skip-empty"])
                } else {
                    run_case(program, &["--engine", "stg"])
                };
                if !skip && stg.stderr.contains("built more than") {
                    return run_case(program, &["--engine", "stg", "--stg-skip-empty"]);
                }
                stg
            });
            if let Some(stg) = stg
                && sorted_lines(&stg.stdout) != sorted_lines(&outcome.stdout)
            {
                failures.push(format!(
                    "{}: the STG engine and the dataflow engine differ\n--- stg\n{}{}\n--- dataflow\n{}",
                    program.display(),
                    stg.stdout,
                    stg.stderr,
                    outcome.stdout
                ));
                continue;
            }
        }
        let actual = render(program, &outcome);
        let expected_path = beside(program, "expected");
        let expected = std::fs::read_to_string(&expected_path).ok();
        let ok = expected
            .as_deref()
            .is_some_and(|e| matches(program, e, &actual));
        if !is_diagnostic_case(program) && outcome.code != 0 {
            failures.push(format!(
                "{}: exit {}\n{}",
                program.display(),
                outcome.code,
                outcome.stderr
            ));
            continue;
        }
        if is_diagnostic_case(program) && actual.contains("panicked") {
            failures.push(format!("{}: panicked\n{actual}", program.display()));
            continue;
        }
        if ok {
            continue;
        }
        if update {
            std::fs::write(&expected_path, &actual)
                .unwrap_or_else(|e| panic!("write {}: {e}", expected_path.display()));
        } else {
            failures.push(format!(
                "{}\n--- expected\n{}\n--- actual\n{actual}",
                program.display(),
                expected.as_deref().unwrap_or("(no .expected file)")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} golden case(s) differ (UPDATE_EXPECT=1 to refresh):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
