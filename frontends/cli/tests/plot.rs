//! `stgflow plot`: a timeline picture of `run --mode intervals` output, as SVG and PNG.

mod common;

use std::path::Path;
use std::process::Output;

use common::{output_of, root, stdout_of, stgflow, tempdir};

/// `stgflow plot INTERVALS --out OUT` with `more` arguments.
fn plot(intervals: &Path, out: &Path, more: &[&str]) -> Output {
    stgflow()
        .arg("plot")
        .arg(intervals)
        .arg("--out")
        .arg(out)
        .args(more)
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn plot_draws_the_device_safety_intervals_as_svg_and_png() {
    let dir = tempdir();
    let run = stgflow()
        .current_dir(root())
        .args([
            "run",
            "datasets/examples/device_safety.tdl",
            "datasets/examples/device_safety.facts",
            "--mode",
            "intervals",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(run.status.success());
    let intervals = dir.join("intervals.txt");
    std::fs::write(&intervals, &run.stdout).unwrap_or_else(|e| panic!("{e}"));
    let facts: std::collections::BTreeSet<String> = String::from_utf8_lossy(&run.stdout)
        .lines()
        .filter_map(|l| l.rsplit_once(" [").map(|(atom, _)| atom.to_owned()))
        .collect();
    assert!(facts.len() >= 4, "{facts:?}");
    let (svg, png) = (dir.join("t.svg"), dir.join("t.png"));
    for out in [&svg, &png] {
        let plot = plot(&intervals, out, &[]);
        assert!(
            plot.status.success(),
            "{}",
            String::from_utf8_lossy(&plot.stderr)
        );
    }
    let text = std::fs::read_to_string(&svg).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains("<svg") && text.contains("</svg>"));
    for fact in &facts {
        assert!(text.contains(fact.as_str()), "the picture names {fact}");
    }
    let bytes = std::fs::read(&png).unwrap_or_else(|e| panic!("{e}"));
    assert!(bytes.len() > 1000 && bytes.starts_with(b"\x89PNG\r\n\x1a\n"));

    // Past the row limit the rest is left out, and both the picture and stderr say so.
    let cut = plot(&intervals, &svg, &["--rows", "2"]);
    let warning = String::from_utf8_lossy(&cut.stderr);
    let more = facts.len() - 2;
    assert!(
        cut.status.success() && warning.contains(&format!("{more} more left out")),
        "{warning}"
    );
    let text = std::fs::read_to_string(&svg).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains(&format!("first 2 facts; {more} more left out")));

    // One predicate's facts within a stretch of time: the others are not drawn.
    let some = plot(
        &intervals,
        &svg,
        &["--predicates", "trusted", "--from", "10", "--until", "13"],
    );
    assert!(
        some.status.success(),
        "{}",
        String::from_utf8_lossy(&some.stderr)
    );
    let text = std::fs::read_to_string(&svg).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains("trusted(d1)"), "{text}");
    assert!(!text.contains("safe(d1)"), "safe is not chosen");
    let none = plot(
        &intervals,
        &svg,
        &["--predicates", "trusted", "--from", "100"],
    );
    assert_eq!(none.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&none.stderr)
            .contains("no intervals of the predicates and times chosen"),
        "{}",
        String::from_utf8_lossy(&none.stderr)
    );
}

#[test]
fn plot_refuses_what_is_not_intervals_and_unknown_picture_kinds() {
    let dir = tempdir();
    let bad = dir.join("bad.txt");
    std::fs::write(&bad, "safe(d1) [2,7)\n+safe(d1) @2\n").unwrap_or_else(|e| panic!("{e}"));
    let out = plot(&bad, &dir.join("t.svg"), &[]);
    let message = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        message.contains("bad.txt:2: expected an interval"),
        "{message}"
    );
    let good = dir.join("good.txt");
    std::fs::write(&good, "safe(d1) [2,7)\n").unwrap_or_else(|e| panic!("{e}"));
    let out = plot(&good, &dir.join("t.jpg"), &[]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("SVG or PNG"));
}

/// `run --plot FILE` draws the intervals the run prints, which still go to stdout.
#[test]
fn run_plot_draws_what_the_run_prints() {
    let dir = tempdir();
    let svg = dir.join("run.svg");
    let svg_arg = svg.to_string_lossy();
    let example = [
        "run",
        "datasets/examples/device_safety.tdl",
        "datasets/examples/device_safety.facts",
    ];
    let printed = stdout_of(&[&example[..], &["--mode", "intervals", "--plot", &svg_arg]].concat());
    assert!(printed.contains("trusted(d1) ["), "{printed}");
    let text = std::fs::read_to_string(&svg).unwrap_or_else(|e| panic!("{e}"));
    assert!(text.contains("trusted(d1)") && text.contains("device_safety.tdl"));
    let refused = output_of(&[&example[..], &["--plot", &svg_arg]].concat());
    assert_eq!(refused.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("needs `--mode intervals`"));
}
