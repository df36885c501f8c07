//! The dataflow engine on loopback clusters against the reference, on generated programs
//! and streams (`stgflow_tests::generate`): 2 processes of 1 worker and 3 processes of 2
//! workers print byte for byte what the reference prints. Process 0 reads, and its
//! workers feed the dataflow; with 3 processes the facts are diffed after an exchange by
//! hash on every worker of every process (`--diff-on-workers`); with 2 × 2 and 3 × 2
//! every process cuts its own copy of the file into blocks and its workers parse those
//! process 0 gives them and introduce their facts (`--read-on-workers`). Each worker's
//! output comes back to process 0. Laser's programs in `--mode laser` likewise. Where a
//! program's horizon is bounded, 2 × 2 and 3 × 1 replay the input by parts of a few
//! bytes, each process evaluating its own parts from its own copy of the file. A quarter
//! of the streams have their time points pulled up to 10⁵ apart.

mod common;

use common::{run_cluster, stgflow, tempdir};
use proptest::prelude::*;
use stgflow_tests::generate::{Rng, case};
use stgflow_tests::streams::{sparse_gap, stretched};

fn check(seed: u64) -> Result<(), String> {
    let case = case(seed);
    // A quarter of the streams pulled apart (`stgflow_tests::streams::stretched`), in
    // `changes`: the processes skip quiet stretches as the reference does.
    if seed % 4 == 0 {
        let mut rng = Rng::new(seed ^ 0x5ba5e);
        let stream = stretched(
            &case.stream,
            &mut rng,
            sparse_gap(&case.program, &case.stream),
        );
        let files = [("program.tdl", &case.program), ("stream.facts", &stream)];
        return check_files(seed, files, &["--mode", "changes"]);
    }
    let files = [
        ("program.tdl", &case.program),
        ("stream.facts", &case.stream),
    ];
    check_files(seed, files, &[])
}

/// Laser's shapes of program (`stgflow_tests::lars::window_case`: ♢ and @ windows over a
/// stream's atoms, printed, whose 0/1 closure and retractions the sink takes over,
/// `render::AtSink`) in `--mode laser`: each process decides alike, and the points of
/// every worker of every process reach process 0's sink, which takes them back.
fn check_laser(seed: u64) -> Result<(), String> {
    let case = stgflow_tests::lars::window_case(seed);
    let files = [
        ("program.lars", &case.program),
        ("stream.laser", &case.stream),
    ];
    check_files(seed, files, &["--mode", "laser"])
}

/// The program and stream `files` (names and texts) run with `flags` on clusters, against
/// the reference.
fn check_files(seed: u64, files: [(&str, &String); 2], flags: &[&str]) -> Result<(), String> {
    let dir = tempdir();
    for (name, text) in files {
        std::fs::write(dir.join(name), text).map_err(|e| e.to_string())?;
    }
    let (program, stream) = (files[0].0, files[1].0);
    let reference = stgflow()
        .current_dir(&*dir)
        .args(["run", program, stream, "--engine", "reference"])
        .args(flags)
        .output()
        .map_err(|e| e.to_string())?;
    if !reference.status.success() {
        return Err(format!(
            "seed {seed}: the reference failed: {}",
            String::from_utf8_lossy(&reference.stderr)
        ));
    }
    let mut args: Vec<String> = ["run", program, stream].map(str::to_owned).to_vec();
    args.extend(flags.iter().map(|flag| (*flag).to_owned()));
    // 2 × 1 with the input diffed on the calling thread, 3 × 2 on the workers of every
    // process after an exchange, 2 × 2 and 3 × 2 read (parsed) on the workers of process 0
    // (many blocks for the workers to parse, not one the calling thread reads); 2 × 2 and
    // 3 × 1 by parts of a few bytes where the program's horizon is bounded.
    let configs: [(usize, usize, &[&str]); 6] = [
        (2, 1, &[]),
        (3, 2, &["--diff-on-workers"]),
        (2, 2, &["--read-on-workers", "--block-bytes", "40"]),
        (3, 2, &["--read-on-workers", "--block-bytes", "40"]),
        (2, 2, &["--part-bytes", "30"]),
        (3, 1, &["--part-bytes", "20"]),
    ];
    for (processes, workers, flag) in configs {
        let mut args = args.clone();
        args.extend(flag.iter().map(|f| (*f).to_owned()));
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
                files[0].1,
                files[1].1,
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    #[test]
    fn clusters_print_lasers_lines_of_windows_closed_in_the_sink_as_the_reference(seed in any::<u64>()) {
        check_laser(seed).map_err(TestCaseError::fail)?;
    }
}
