//! Constants of every kind — integers, floats, bare names short enough to live in a value
//! and longer, quoted strings, IRIs over 100 bytes — come out as they went in: read from
//! a stream, through a cluster of two processes (values cross between them as text), and
//! printed; and a long IRI reads and prints in every input format and output mode.

mod common;

use std::path::Path;

use common::{run_cluster, sorted, stgflow, tempdir};
use proptest::prelude::*;
use stgflow_lang::value::Value;

fn constant() -> impl Strategy<Value = Value> {
    prop_oneof![
        any::<i64>().prop_map(Value::Int),
        (-1e6f64..1e6).prop_map(Value::Float),
        "[a-z][a-z0-9_]{0,24}".prop_map(|s| Value::sym(&s)),
        "[ -~]{0,30}".prop_map(|s| Value::sym(&s)),
        "[a-z]{1,6}".prop_map(|s| {
            Value::sym(&format!(
                "http://example.org/{}/stream#{s}",
                s.repeat(100 / s.len() + 1)
            ))
        }),
    ]
}

/// The TD stream `p(x, y, t).` of `pairs` at time points 0, 1, …, and the lines
/// `q(x,y,t).` the program prints for it.
fn stream_and_expected(pairs: &[(Value, Value)]) -> (String, Vec<String>) {
    let mut stream = String::new();
    let mut expected = Vec::new();
    for (t, (x, y)) in pairs.iter().enumerate() {
        stream.push_str(&format!("p({x}, {y}, {t}).\n"));
        expected.push(format!("q({x},{y},{t})."));
    }
    expected.sort();
    expected.dedup();
    (stream, expected)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    #[test]
    fn constants_of_every_kind_round_trip_through_two_processes(
        pairs in proptest::collection::vec((constant(), constant()), 1..8),
    ) {
        let dir = tempdir();
        std::fs::write(dir.join("p.tdl"), "q(X, Y, T) :- p(X, Y, T).\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let (stream, expected) = stream_and_expected(&pairs);
        std::fs::write(dir.join("s.facts"), &stream).unwrap_or_else(|e| panic!("{e}"));
        let args: Vec<String> = ["run", "p.tdl", "s.facts"].map(str::to_owned).to_vec();
        let outputs = run_cluster(&dir, &args, 2, 1);
        prop_assert!(
            outputs.iter().all(|o| o.status.success()),
            "{}\n{stream}",
            String::from_utf8_lossy(&outputs[0].stderr)
        );
        prop_assert_eq!(sorted(&String::from_utf8_lossy(&outputs[0].stdout)), expected, "{}", stream);
    }
}

/// A 120-byte IRI.
fn iri() -> String {
    let iri = format!(
        "http://example.org/{}/resource#event-1",
        "a-long-path-segment/".repeat(5)
    );
    assert!(iri.len() > 100, "{}", iri.len());
    iri
}

fn run(dir: &Path, stream: &str, format: &str, mode: &str) -> String {
    let output = stgflow()
        .current_dir(dir)
        .args(["run", "p.tdl", stream, "--format", format, "--mode", mode])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        output.status.success(),
        "{format} {mode}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn an_iri_over_100_bytes_reads_and_prints_in_every_format_and_mode() {
    let iri = iri();
    let dir = tempdir();
    std::fs::write(
        dir.join("p.tdl"),
        "q(X, T) :- p(X, T).\nr(T) :- s(T).\n#output q.\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let streams = [
        ("td", format!("p(\"{iri}\", 1).\ns(2).\n")),
        ("csv", format!("1,p,{iri}\n2,s\n")),
        ("laser", format!("#timeline 1 2\n1: p({iri})\n2: s\n")),
        ("rtec", format!("p|1|1|{iri}\ns|2|2\n")),
    ];
    for (format, text) in &streams {
        let file = format!("s.{format}");
        std::fs::write(dir.join(&file), text).unwrap_or_else(|e| panic!("{e}"));
        let quoted = format!("\"{iri}\"");
        assert_eq!(
            run(&dir, &file, format, "points"),
            format!("q({quoted},1).\n"),
            "{format}"
        );
        assert_eq!(
            run(&dir, &file, format, "changes"),
            format!("+q({quoted}) @1\n-q({quoted}) @2\n"),
            "{format}"
        );
        assert_eq!(
            run(&dir, &file, format, "intervals"),
            format!("q({quoted}) [1,2)\n"),
            "{format}"
        );
        assert_eq!(
            run(&dir, &file, format, "laser"),
            format!("1: q({iri})\n2:\n"),
            "{format}"
        );
    }
}

/// A long IRI that leaves the window, stays away while thousands of fresh IRIs come and
/// go (the table of long symbols frees them, and gives their slots to others), and comes
/// back: printed as it went in, on every path, and the fresh ones are freed.
#[test]
fn an_iri_that_leaves_the_window_and_comes_back_prints_as_it_went_in() {
    let dir = tempdir();
    std::fs::write(
        dir.join("p.tdl"),
        "q(X, T) :- p(X, T).\nq(X, T) :- p(X, T-1).\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let back = iri();
    let mut stream = String::new();
    let mut facts: Vec<(String, u64)> = vec![(back.clone(), 0), (back.clone(), 1600)];
    for t in 1..1500u64 {
        for i in 0..8 {
            facts.push((format!("http://example.org/stream/events#event-{t}-{i}"), t));
        }
    }
    facts.sort_by_key(|(_, t)| *t);
    for (iri, t) in &facts {
        stream.push_str(&format!("p(\"{iri}\", {t}).\n"));
    }
    std::fs::write(dir.join("s.facts"), &stream).unwrap_or_else(|e| panic!("{e}"));
    // The timeline ends at the last fact's time point, 1600.
    let mut points: Vec<String> = facts
        .iter()
        .flat_map(|(iri, t)| [(iri, *t), (iri, t + 1)])
        .filter(|&(_, t)| t <= 1600)
        .map(|(iri, t)| format!("q(\"{iri}\",{t})."))
        .collect();
    points.sort();
    let runs: [&[&str]; 5] = [
        &["s.facts"],
        &["s.facts", "-w", "1"],
        &["s.facts", "-w", "3"],
        &["-"],
        &["s.facts", "--engine", "reference"],
    ];
    for args in runs {
        let output = stgflow()
            .current_dir(&dir)
            .args([
                "run",
                "p.tdl",
                "--mode",
                "points",
                "--stats-json",
                "stats.json",
            ])
            .args(args)
            .stdin(std::fs::File::open(dir.join("s.facts")).unwrap_or_else(|e| panic!("{e}")))
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let printed = sorted(&String::from_utf8_lossy(&output.stdout));
        assert_eq!(printed.len(), points.len(), "{args:?}");
        assert!(printed == points, "{args:?}: the output differs");
        let stats =
            std::fs::read_to_string(dir.join("stats.json")).unwrap_or_else(|e| panic!("{e}"));
        let freed: u64 = stats
            .split("\"long_symbols_freed\":")
            .nth(1)
            .and_then(|rest| rest.split([',', '}']).next())
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no count of freed symbols in {stats}"));
        assert!(
            freed > 6_000,
            "{args:?}: {freed} of 11,993 long symbols freed"
        );
    }
}
