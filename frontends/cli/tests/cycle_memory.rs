//! A cyclic description (a component whose own facts are keyed apart, which the engine
//! runs as a loop through time) over a long generated stream keeps a flat peak memory:
//! what holds stays bounded, so more than three times the time points may not cost more
//! room.

mod common;

use common::{output_of, tempdir};
use serde_json::Value;

/// Contracts between two agents, obligations and suspensions of one: NetBill's shape.
const PROGRAM: &str = "\
c_i(M, C, T) :- accept(C, M, T), offer(M, C, T-1), not s(M, T), not s(C, T).
c_end(M, C, T) :- c_i(M, C, T-3), not c_t(M, C, T-2), not c_t(M, C, T-1).
c_t(M, C, T) :- c_end(M, C, T).
c_t(M, C, T) :- cancel(M, C, T).
c(M, C, T) :- c_i(M, C, T-1), not c_t(M, C, T-1).
c(M, C, T) :- c(M, C, T-1), not c_t(M, C, T-1).
o_i(C, T) :- c_i(_M, C, T).
o_t(A, T) :- pay(A, T).
o(A, T) :- o_i(A, T-1), not o_t(A, T-1).
o(A, T) :- o(A, T-1), not o_t(A, T-1).
s_i(C, T) :- c_end(_M, C, T), o(C, T).
s_t(A, T) :- s_i(A, T-2), not s_i(A, T).
s(A, T) :- s_i(A, T-1), not s_t(A, T-1).
s(A, T) :- s(A, T-1), not s_t(A, T-1).
";

/// `points` time points of 40 agents' offers, acceptances, payments and cancellations:
/// one event every few points, from a fixed seed.
fn stream(points: u64) -> String {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: u64| {
        state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (state >> 33) % n
    };
    let mut text = String::new();
    let mut accept = None;
    for t in 0..points {
        if let Some((m, c)) = accept.take() {
            text.push_str(&format!("accept(c{c}, m{m}, {t}).\n"));
        }
        if next(4) != 0 {
            continue;
        }
        let (m, c) = (next(40), next(40));
        match next(4) {
            0 | 1 => {
                text.push_str(&format!("offer(m{m}, c{c}, {t}).\n"));
                accept = Some((m, c));
            }
            2 => text.push_str(&format!("pay(c{c}, {t}).\n")),
            _ => text.push_str(&format!("cancel(m{m}, c{c}, {t}).\n")),
        }
    }
    text
}

fn path(p: &std::path::Path) -> String {
    p.to_string_lossy().into_owned()
}

/// The peak RSS, in KiB, of a run of `program` over `points` time points, from
/// `--stats-json`.
fn peak_rss_kib(program: &std::path::Path, points: u64) -> u64 {
    let dir = tempdir();
    let (facts, json) = (dir.join("s.facts"), dir.join("s.json"));
    std::fs::write(&facts, stream(points)).unwrap_or_else(|e| panic!("{e}"));
    let output = output_of(&[
        "run",
        &path(program),
        &path(&facts),
        "--mode",
        "changes",
        "-w",
        "2",
        "--stats-json",
        &path(&json),
    ]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("+s("),
        "suspensions happen"
    );
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_default())
        .unwrap_or_else(|e| panic!("{e}"));
    report["peak_rss_kib"]
        .as_u64()
        .unwrap_or_else(|| panic!("{report}"))
}

#[test]
fn a_cyclic_description_over_100000_time_points_keeps_a_flat_peak_memory() {
    let dir = tempdir();
    let program = dir.join("c.tdl");
    std::fs::write(&program, PROGRAM).unwrap_or_else(|e| panic!("{e}"));
    let plan = common::stdout_of(&["check", &path(&program), "--dump", "plan"]);
    assert!(plan.lines().any(|l| l.starts_with("cycle {")), "{plan}");
    // Past the first tens of thousands of points the tables have grown to the live
    // state's size; a fact kept per time point would add megabytes from here on.
    let short = peak_rss_kib(&program, 30_000);
    let long = peak_rss_kib(&program, 100_000);
    assert!(
        long <= short + short / 4 + 8192,
        "peak RSS {long} KiB over 10^5 time points against {short} KiB over 3·10^4"
    );
}
