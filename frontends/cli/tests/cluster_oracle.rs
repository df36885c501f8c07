//! The dataflow engine on loopback clusters against the reference, on generated programs
//! and streams (`stgflow_tests::generate`): 2 processes of 1 worker and 3 processes of 2
//! workers print byte for byte what the reference prints. Process 0 reads, and its
//! workers feed the dataflow; with 3 processes the facts are diffed after an exchange by
//! hash on every worker of every process (`--diff-on-workers`); with 2 × 2 and 3 × 2
//! every process cuts its own copy of the file into blocks and its workers parse those
//! process 0 gives them and introduce their facts (`--read-on-workers`). Each worker's
//! output comes back to process 0.

mod common;

use common::{run_cluster, stgflow, tempdir};
use proptest::prelude::*;
use stgflow_tests::generate::case;

fn check(seed: u64) -> Result<(), String> {
    let case = case(seed);
    let dir = tempdir();
    std::fs::write(dir.join("program.tdl"), &case.program).map_err(|e| e.to_string())?;
    std::fs::write(dir.join("stream.facts"), &case.stream).map_err(|e| e.to_string())?;
    let reference = stgflow()
        .current_dir(&*dir)
        .args([
            "run",
            "program.tdl",
            "stream.facts",
            "--engine",
            "reference",
        ])
        .output()
        .map_err(|e| e.to_string())?;
    if !reference.status.success() {
        return Err(format!(
            "seed {seed}: the reference failed: {}",
            String::from_utf8_lossy(&reference.stderr)
        ));
    }
    let args: Vec<String> = ["run", "program.tdl", "stream.facts"]
        .map(str::to_owned)
        .to_vec();
    // 2 × 1 with the input diffed on the calling thread, 3 × 2 on the workers of every
    // process after an exchange, 2 × 2 and 3 × 2 read (parsed) on the workers of process 0.
    let configs = [
        (2, 1, None),
        (3, 2, Some("--diff-on-workers")),
        (2, 2, Some("--read-on-workers")),
        (3, 2, Some("--read-on-workers")),
    ];
    for (processes, workers, flag) in configs {
        let mut args = args.clone();
        args.extend(flag.map(str::to_owned));
        if flag == Some("--read-on-workers") {
            // Many blocks for the workers to parse, not one the calling thread reads.
            args.extend(["--block-bytes".to_owned(), "40".to_owned()]);
        }
        let outputs = run_cluster(&dir, &args, processes, workers);
        for (index, output) in outputs.iter().enumerate() {
            if !output.status.success() {
                return Err(format!(
                    "seed {seed}, process {index} of {processes}: {}",
                    String::from_utf8_lossy(&output.stderr)
                ));
            }
        }
        if outputs[0].stdout != reference.stdout {
            return Err(format!(
                "seed {seed}, {processes} processes × {workers} workers {flag:?}\n--- program\n{}--- stream\n{}--- reference\n{}--- cluster\n{}",
                case.program,
                case.stream,
                String::from_utf8_lossy(&reference.stdout),
                String::from_utf8_lossy(&outputs[0].stdout)
            ));
        }
        if outputs[1..].iter().any(|o| !o.stdout.is_empty()) {
            return Err(format!("seed {seed}: only process 0 prints"));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn clusters_of_2_and_3_processes_print_what_the_reference_prints(seed in any::<u64>()) {
        check(seed).map_err(TestCaseError::fail)?;
    }
}
