//! Golden cases for `stgflow explain`: every program under `tests/cases/explain/` with a
//! `NAME.queries` file (one fact per line) is explained fact by fact through the command
//! line (in-process), and the output compared with `NAME.explained`. The stream is
//! `NAME.facts`, `NAME.csv` or `NAME.laser`; `--from`/`--until` are taken from `NAME.args`.
//! `UPDATE_EXPECT=1 cargo test -p stgflow-tests --test explain` rewrites the expected files.

use std::path::{Path, PathBuf};

fn explain_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("cases")
        .join("explain")
}

fn explain(dir: &Path, program: &str, stem: &str, fact: &str) -> String {
    let mut args = vec![
        "stgflow".to_owned(),
        "explain".to_owned(),
        program.to_owned(),
    ];
    for ext in ["facts", "csv", "laser"] {
        if dir.join(format!("{stem}.{ext}")).exists() {
            args.push(format!("{stem}.{ext}"));
        }
    }
    if let Ok(extra) = std::fs::read_to_string(dir.join(format!("{stem}.args"))) {
        let words: Vec<&str> = extra.split_whitespace().collect();
        for pair in words.windows(2) {
            if matches!(pair[0], "--from" | "--until") {
                args.extend(pair.iter().map(|w| (*w).to_owned()));
            }
        }
    }
    args.push(fact.to_owned());
    let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
    let streams = stgflow_cli::Streams::default();
    let code = stgflow_cli::run(args, std::io::empty(), &mut stdout, &mut stderr, streams);
    format!(
        "$ stgflow explain {program} … '{fact}'   (exit {code})\n{}{}",
        String::from_utf8_lossy(&stdout),
        String::from_utf8_lossy(&stderr)
    )
}

#[test]
fn explain_golden_cases() {
    let dir = explain_dir();
    std::env::set_current_dir(&dir).unwrap_or_else(|e| panic!("cd {}: {e}", dir.display()));
    let mut entries: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("tests/cases/explain")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "queries"))
        .collect();
    entries.sort();
    assert!(
        entries.len() >= 4,
        "too few explain cases: {}",
        entries.len()
    );
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failures = Vec::new();
    for queries in entries {
        let stem = queries
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let program = ["tdl", "lars", "ec"]
            .iter()
            .map(|ext| format!("{stem}.{ext}"))
            .find(|p| dir.join(p).exists())
            .unwrap_or_else(|| panic!("no program for {stem}"));
        let text = std::fs::read_to_string(&queries).unwrap_or_default();
        let mut actual = String::new();
        for fact in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            actual.push_str(&explain(&dir, &program, &stem, fact));
        }
        let expected_path = dir.join(format!("{stem}.explained"));
        let expected = std::fs::read_to_string(&expected_path).unwrap_or_default();
        if expected == actual {
            continue;
        }
        if update {
            std::fs::write(&expected_path, &actual).expect("write .explained");
        } else {
            failures.push(format!(
                "{stem}\n--- expected\n{expected}\n--- actual\n{actual}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Example 1 materialised up to `through` (every time point with `None`).
fn example1_materialised<'p>(
    compiled: &'p stgflow_lang::Compiled,
    stream: &str,
    through: Option<u64>,
) -> stgflow_eval::explain::Materialised<'p> {
    let analysis = compiled.analysis.as_ref().expect("valid");
    let reader = stgflow_io::stream::FactReader::new(
        stream.as_bytes(),
        "example1.facts",
        std::sync::Arc::new(stgflow_io::stream::td::Td),
        stgflow_io::stream::Schema::new(&compiled.program),
    );
    let mut sources: Vec<Box<dyn stgflow_io::drive::FactSource + '_>> = vec![Box::new(reader)];
    stgflow_eval::explain::materialise(
        &compiled.program,
        analysis,
        &mut sources,
        stgflow_io::drive::Timeline::default(),
        through,
    )
    .expect("runs")
}

/// What a derivation must be: the fact's own rule, body facts at their times, negated
/// conditions absent, input facts at the leaves.
#[test]
fn example_1_derivation_of_trusted_a_4_is_a_real_derivation() {
    let dir = explain_dir();
    let program = std::fs::read_to_string(dir.join("example1.tdl")).expect("program");
    let compiled = stgflow_lang::compile_str("example1.tdl", &program);
    let stream = std::fs::read_to_string(dir.join("example1.facts")).expect("stream");
    let materialised = example1_materialised(&compiled, &stream, None);
    let fact = stgflow_eval::explain::parse_fact(&compiled.program, "trusted(a, 4)").expect("fact");
    let stgflow_eval::explain::Answer::Holds(derivation) = materialised.explain(&fact) else {
        panic!("trusted(a,4) holds");
    };
    let stgflow_eval::explain::Derivation::Rule { rule, body, .. } = derivation else {
        panic!("derived by a rule");
    };
    assert_eq!(rule, 2);
    let times: Vec<u64> = body
        .iter()
        .filter_map(|step| match step {
            stgflow_eval::explain::Step::Holds(d) => Some(d.fact().time),
            _ => None,
        })
        .collect();
    assert_eq!(times, vec![4, 3, 2]);
    let unknown =
        stgflow_eval::explain::parse_fact(&compiled.program, "trusted(a, 6)").expect("fact");
    assert!(matches!(
        materialised.explain(&unknown),
        stgflow_eval::explain::Answer::DoesNotHold(..)
    ));
}

/// Explaining a fact evaluates the stream up to its time only, with the answer of the
/// whole run: for every fact of example 1 at every time point (and past the stream's end,
/// where nothing holds), held or not.
#[test]
fn explaining_up_to_the_facts_time_gives_the_whole_runs_answer() {
    let dir = explain_dir();
    let program = std::fs::read_to_string(dir.join("example1.tdl")).expect("program");
    let compiled = stgflow_lang::compile_str("example1.tdl", &program);
    let stream = std::fs::read_to_string(dir.join("example1.facts")).expect("stream");
    let materialise = |through: Option<u64>| example1_materialised(&compiled, &stream, through);
    let whole = materialise(None);
    let last = whole.last.expect("a timeline");
    let mut held = 0;
    for t in 0..=last + 2 {
        let cut = materialise(Some(t));
        for pred in ["safe", "trusted"] {
            for device in ["a", "b", "c"] {
                let text = format!("{pred}({device}, {t})");
                let fact =
                    stgflow_eval::explain::parse_fact(&compiled.program, &text).expect("fact");
                let answer = whole.explain(&fact);
                held += usize::from(matches!(answer, stgflow_eval::explain::Answer::Holds(_)));
                assert_eq!(cut.explain(&fact), answer, "{text}");
            }
        }
    }
    assert!(held > 5, "the example derives facts: {held}");
}
