//! RTEC's own files (issue 22): an event description given as RTEC's `rules.prolog` and
//! its background knowledge, unchanged, printed with `--mode rtec` and compared with RTEC's
//! recognised intervals on the same data (`../shared/data/rtec/<app>/rtec/`, how RTEC was
//! run: `../shared/data/README.md`).

mod common;

use std::collections::BTreeMap;

use common::{root, stgflow, tempdir};

/// The intervals of each fluent-value pair of `recognitions(predictions,F,[[Args…],V],
/// [(S,E),…]).` lines, clipped to [1, end + 1): RTEC's window is (0, END], and an interval
/// open at END ends at END + 1.
fn recognitions(text: &str, end: u64) -> BTreeMap<String, Vec<(u64, u64)>> {
    let mut pairs = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("recognitions(")) {
        let (pair, intervals) = line
            .split_once(",[(")
            .unwrap_or_else(|| panic!("not a recognition: {line}"));
        let intervals = intervals.trim_end_matches(")]).");
        let clipped: Vec<(u64, u64)> = intervals
            .split("),(")
            .map(|interval| {
                let (s, e) = interval
                    .split_once(',')
                    .unwrap_or_else(|| panic!("not an interval: {interval} in {line}"));
                let number = |n: &str| {
                    n.trim()
                        .parse::<u64>()
                        .unwrap_or_else(|e| panic!("{n}: {e} in {line}"))
                };
                (number(s).max(1), number(e).min(end + 1))
            })
            .filter(|(s, e)| s < e)
            .collect();
        if !clipped.is_empty() {
            pairs.insert(pair.to_owned(), clipped);
        }
    }
    pairs
}

#[test]
fn toy_from_rtecs_own_files_unchanged_gives_rtecs_intervals() {
    let toy = root().join("../shared/data/rtec/toy");
    let output = stgflow()
        .arg("run")
        .arg(toy.join("rtec/rules.prolog"))
        .arg(toy.join("rtec/toy_var_domain.prolog"))
        .arg(toy.join("toy_data.csv"))
        .args(["--mode", "rtec", "-q"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let ours = recognitions(&String::from_utf8_lossy(&output.stdout), 21);
    let expected = std::fs::read_to_string(toy.join("rtec/rtec-recognised-intervals.txt"))
        .unwrap_or_else(|e| panic!("{e}"));
    let theirs = recognitions(&expected, 21);
    assert_eq!(theirs.len(), 4, "RTEC's file: {theirs:?}");
    assert_eq!(ours, theirs);
}

#[test]
fn background_files_are_read_in_order_and_their_diagnostics_name_them() {
    let dir = tempdir();
    let rules = dir.join("rules.prolog");
    let knowledge = dir.join("knowledge.pl");
    std::fs::write(
        &rules,
        "initiatedAt(rich(X)=true, T) :- happensAt(win(X), T).\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        &knowledge,
        "person(chris).\nperson(pat).\n\nterminatedAt(rich(X)=true, T) :- happensAt(lose(X), T).\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let stream = dir.join("data.csv");
    std::fs::write(&stream, "win|2|2|chris\nlose|5|5|chris\n").unwrap_or_else(|e| panic!("{e}"));
    let output = stgflow()
        .arg("run")
        .args([&rules, &knowledge, &stream])
        .args(["--mode", "intervals"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    // The termination in the second file is part of the description.
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "rich(chris,true) [3,6)\n"
    );
    assert!(
        stderr.contains("[W507]") && stderr.contains("knowledge.pl:1:1"),
        "{stderr}"
    );
    assert!(stderr.contains("`person/1` (2 facts)"), "{stderr}");

    // An error in the second file names it, line and column.
    std::fs::write(
        &knowledge,
        "person(chris).\ninitiatedAt(rich(X)=true) :- happensAt(win(X), T).\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let output = stgflow()
        .args(["check"])
        .args([&rules, &knowledge])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(stderr.contains("knowledge.pl:2:"), "{stderr}");
}

#[test]
fn only_an_event_description_takes_more_program_files() {
    let dir = tempdir();
    let knowledge = dir.join("knowledge.pl");
    std::fs::write(&knowledge, "person(chris).\n").unwrap_or_else(|e| panic!("{e}"));
    let output = stgflow()
        .args(["check", "datasets/examples/device_safety.tdl"])
        .arg(&knowledge)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("only an event description"), "{stderr}");
}

#[test]
fn rtec_mode_is_one_file_not_one_per_predicate() {
    let dir = tempdir();
    let toy = root().join("../shared/data/rtec/toy");
    let output = stgflow()
        .arg("run")
        .arg(toy.join("rtec/rules.prolog"))
        .arg(toy.join("toy_data.csv"))
        .args(["--mode", "rtec", "-q", "--output-dir"])
        .arg(dir.join("out"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("--mode rtec"), "{stderr}");
}
