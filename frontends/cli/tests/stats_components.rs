//! `--stats` and `--stats-json` on the dataflow engine: the time each component of the
//! plan (as `check --dump plan` lists them) was scheduled on the workers and the updates it
//! output, then the time outside them.

mod common;

use common::{output_of, stdout_of, tempdir};
use serde_json::Value;

#[test]
fn the_run_report_has_a_time_per_component_of_the_plan() {
    let dir = tempdir();
    let json = dir.join("stats.json");
    let program = "datasets/examples/device_safety.tdl";
    let plan = stdout_of(&["check", program, "--dump", "plan"]);
    let components: Vec<&str> = plan.lines().filter(|l| !l.starts_with('%')).collect();
    assert!(components.len() >= 2, "{plan}");
    for workers in ["1", "2"] {
        let json_arg = json.to_string_lossy();
        let output = output_of(&[
            "run",
            program,
            "datasets/examples/device_safety.facts",
            "-w",
            workers,
            "--mode",
            "changes",
            "--stats-json",
            &json_arg,
        ]);
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let text = std::fs::read_to_string(&json).unwrap_or_else(|e| panic!("{e}"));
        let report: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        let listed = report["components"]
            .as_array()
            .unwrap_or_else(|| panic!("{report}"));
        assert_eq!(listed.len(), components.len() + 1, "{report}");
        for (entry, line) in listed.iter().zip(&components) {
            assert_eq!(entry["component"], *line);
        }
        assert!(
            listed[components.len()]["component"]
                .as_str()
                .is_some_and(|c| c.starts_with("outside"))
        );
        let times: Vec<f64> = listed
            .iter()
            .map(|c| c["time_s"].as_f64().unwrap_or(-1.0))
            .collect();
        assert!(
            times.iter().all(|&t| t >= 0.0) && times.iter().sum::<f64>() > 0.0,
            "{times:?}"
        );
        // Every component here outputs a printed predicate, so in `changes` mode their
        // updates are the output's lines.
        let records: u64 = listed.iter().filter_map(|c| c["records"].as_u64()).sum();
        assert_eq!(Some(records), report["output_lines"].as_u64(), "{report}");
        assert!(listed[components.len()]["records"].is_null());
    }
    // The text report lists them too; without --stats nothing is profiled or printed.
    let output = output_of(&[
        "run",
        program,
        "datasets/examples/device_safety.facts",
        "--stats",
    ]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("components    time scheduled and updates output on the workers"),
        "{stderr}"
    );
    assert!(
        stderr.contains(components[0].chars().take(40).collect::<String>().as_str()),
        "{stderr}"
    );
}
