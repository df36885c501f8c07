//! The front ends end to end, in-process: a plain LARS program in Laser's syntax over a
//! Laser stream (Laser's ⊞n ♢ micro-benchmark), and RTEC's own CAVIAR event description
//! (`../shared/data/rtec/caviar/rtec/`, with `datasets/ec/caviar_distance.ec`) over the RTEC
//! excerpt in `datasets/ec/caviar/`, its dynamic domains grown as the stream goes (the
//! CLI reads them ahead from files; in-process there are no files). Each iteration compiles
//! (parse, translate by Algorithm 2 or 3, validate, stratify), reads the stream, evaluates
//! every time point and formats the output (`changes` for LARS, `intervals` for EC) to
//! nowhere.
//!
//! Run it with
//!
//! ```text
//! cargo bench -p stgflow-bench --bench frontends
//! ```
//!
//! and one case with a regex filter, e.g. `-- 'lars_diamond/workers_1/window_10'`.
//! Throughput is counted in input facts (LARS) or RTEC records read (EC); an untimed run
//! first checks the counts.

use std::hint::black_box;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use stgflow_bench::{Engine, Input, run_compiled};
use stgflow_datasets::convert::{Format, convert_td};
use stgflow_datasets::{UniqueAtoms, unique_atoms};
use stgflow_io::sink::Mode;
use stgflow_io::stream::Schema;

mod common;
use common::configure;

fn lars(c: &mut Criterion) {
    let mut td = Vec::new();
    let summary = unique_atoms(
        &UniqueAtoms {
            atoms_per_point: 100,
            constants: stgflow_datasets::Constants::Integers,
            time_points: 1000,
            start: 0,
            extra_every: 0,
        },
        &mut td,
    )
    .unwrap_or_else(|e| panic!("generating the stream: {e}"));
    let td = String::from_utf8(td).unwrap_or_else(|e| panic!("{e}"));
    let mut laser = Vec::new();
    convert_td(&td, Format::Laser, None, &mut laser).unwrap_or_else(|e| panic!("{e}"));
    let mut group = c.benchmark_group("lars_diamond");
    configure(&mut group);
    for workers in [1, 2] {
        for window in [10, 100] {
            let text = format!("q(A,B) :- time_win({window},0,1,diamond(p(A,B)))\n");
            let run = |bytes: &[u8]| {
                let compiled = stgflow_lars::compile_str("diamond.lars", &text);
                let schema = Schema::new(&compiled.program);
                let input = Input {
                    bytes,
                    format: std::sync::Arc::new(stgflow_lars::stream::LaserStream),
                    tick: 1,
                };
                run_compiled(
                    "diamond.lars",
                    &compiled,
                    &schema,
                    &[input],
                    Mode::Changes,
                    &Engine::dataflow(workers, true),
                )
            };
            match run(&laser) {
                Ok(run) => assert_eq!(run.input_facts, summary.facts, "facts read"),
                Err(error) => panic!("{error:#}"),
            }
            group.throughput(Throughput::Elements(summary.facts));
            group.bench_with_input(
                BenchmarkId::new(format!("workers_{workers}"), format!("window_{window}")),
                &laser,
                |b, laser| b.iter(|| run(black_box(laser))),
            );
        }
    }
    group.finish();
}

fn ec(c: &mut Criterion) {
    // The checkout this was built in, else the current directory's (a bench binary
    // copied to another machine runs from the repository root there).
    let root = [concat!(env!("CARGO_MANIFEST_DIR"), "/.."), ".", ".."]
        .into_iter()
        .find(|dir| {
            std::path::Path::new(dir)
                .join("datasets/ec/caviar_distance.ec")
                .is_file()
        })
        .unwrap_or_else(|| panic!("datasets/ec not found; run from the repository root"));
    let read = |path: &str| {
        std::fs::read(format!("{root}/{path}")).unwrap_or_else(|e| panic!("{root}/{path}: {e}"))
    };
    let text = |path: &str| String::from_utf8(read(path)).unwrap_or_else(|e| panic!("{e}"));
    // RTEC's own CAVIAR description and ids, and the distances RTEC computes in Prolog.
    let description = [
        (
            "rules.prolog",
            text("../shared/data/rtec/caviar/rtec/rules.prolog"),
        ),
        (
            "list-of-ids.prolog",
            text("../shared/data/rtec/caviar/rtec/list-of-ids.prolog"),
        ),
        ("caviar_distance.ec", text("datasets/ec/caviar_distance.ec")),
    ];
    let files: Vec<(&str, &str)> = description.iter().map(|(n, t)| (*n, t.as_str())).collect();
    let options = stgflow_ec::Options {
        timing: stgflow_ec::Timing::Rtec,
        start: 0,
    };
    let appearance = read("datasets/ec/caviar/appearance.csv");
    let movement = read("datasets/ec/caviar/movementB.csv");
    let records = (appearance.iter().chain(&movement))
        .filter(|&&b| b == b'\n')
        .count() as u64;
    let mut group = c.benchmark_group("ec_caviar_excerpt");
    configure(&mut group);
    let engines = [
        ("reference", Engine::Reference),
        ("dataflow_workers_1", Engine::dataflow(1, true)),
        ("dataflow_workers_2", Engine::dataflow(2, true)),
    ];
    for (name, engine) in engines {
        let run = || {
            let ec = stgflow_ec::compile_files_with(&files, options);
            let schema = Schema::new(&ec.compiled.program);
            let records = std::sync::Arc::new(ec.records(true));
            let inputs = [&appearance, &movement].map(|bytes| Input {
                bytes,
                format: records.clone(),
                tick: 40,
            });
            run_compiled(
                "rules.prolog",
                &ec.compiled,
                &schema,
                &inputs,
                Mode::Intervals,
                &engine,
            )
        };
        if let Err(error) = run() {
            panic!("{error:#}");
        }
        group.throughput(Throughput::Elements(records));
        group.bench_function(BenchmarkId::new("engine", name), |b| b.iter(run));
    }
    group.finish();
}

criterion_group!(benches, lars, ec);
criterion_main!(benches);
