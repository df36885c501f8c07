//! The dataflow engine in-process, per operator: the ♢ and □ window operators over
//! workers × window size, the same windows as literal rules, the time-stepping operator
//! (EC inertia) over workers, and a same-time recursive stratum (reachability over a
//! slowly changing graph, `iterate`). Each iteration compiles the program, reads the
//! stream, evaluates every time point and formats the output in `changes` mode to nowhere.
//!
//! Run it with
//!
//! ```text
//! cargo bench -p stgflow-bench --bench dataflow
//! ```
//!
//! and one group or size with a regex filter, e.g.
//! `cargo bench -p stgflow-bench --bench dataflow -- 'window_diamond/workers_1/window_10'`.
//! Streams are generated once per size, outside the timed loop; throughput is counted in
//! input facts, and an untimed run first checks that every generated fact is read.
//!
//! Pitfall: each iteration starts and stops timely workers (threads), a fixed cost of
//! about a millisecond that the small sizes show; the large sizes are what the issue-3
//! targets are about (`scripts/bench-dataflow.sh` runs those through the binary).

use std::hint::black_box;

use criterion::{
    BenchmarkGroup, BenchmarkId, Criterion, Throughput, criterion_group, criterion_main,
    measurement::WallTime,
};
use stgflow_bench::run_dataflow;
use stgflow_bench::workload::Workload;
use stgflow_datasets::{Graph, Inertia, UniqueAtoms, examples, graph, inertia, unique_atoms};
use stgflow_io::sink::Mode;

mod common;
use common::configure;

fn generated(
    write: impl FnOnce(
        &mut Vec<u8>,
    ) -> Result<stgflow_datasets::Summary, stgflow_datasets::GenerateError>,
) -> (Vec<u8>, u64) {
    let mut stream = Vec::new();
    match write(&mut stream) {
        Ok(summary) => (stream, summary.facts),
        Err(error) => panic!("generating a stream: {error}"),
    }
}

/// Benchmarks `program` over `stream` as `id`, after checking one run reads every fact.
fn bench_run(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: BenchmarkId,
    program: &str,
    stream: &[u8],
    facts: u64,
    workers: usize,
    lower: bool,
) {
    match run_dataflow("bench.tdl", program, stream, Mode::Changes, workers, lower) {
        Ok(summary) => assert_eq!(summary.input_facts, facts, "facts read"),
        Err(error) => panic!("{error:#}"),
    }
    group.throughput(Throughput::Elements(facts));
    group.bench_with_input(id, stream, |b, stream| {
        b.iter(|| {
            run_dataflow(
                "bench.tdl",
                program,
                black_box(stream),
                Mode::Changes,
                workers,
                lower,
            )
        })
    });
}

fn windows(c: &mut Criterion) {
    // 100 new atoms per time point over 1000 time points: 10⁵ facts.
    let (stream, facts) = generated(|out| {
        unique_atoms(
            &UniqueAtoms {
                atoms_per_point: 100,
                constants: stgflow_datasets::Constants::Integers,
                time_points: 1000,
                start: 0,
                extra_every: 0,
            },
            out,
        )
    });
    for workload in [Workload::Diamond, Workload::Box] {
        let mut group = c.benchmark_group(format!("window_{workload}"));
        configure(&mut group);
        for workers in [1, 2] {
            for window in [10, 100] {
                bench_run(
                    &mut group,
                    BenchmarkId::new(format!("workers_{workers}"), format!("window_{window}")),
                    &workload.program(window),
                    &stream,
                    facts,
                    workers,
                    true,
                );
            }
        }
        group.finish();
    }
    let mut group = c.benchmark_group("window_diamond_literal_rules");
    configure(&mut group);
    for window in [10, 100] {
        bench_run(
            &mut group,
            BenchmarkId::new("workers_1", format!("window_{window}")),
            &Workload::Diamond.program(window),
            &stream,
            facts,
            1,
            false,
        );
    }
    group.finish();
}

fn stepper(c: &mut Criterion) {
    let mut group = c.benchmark_group("stepper_inertia");
    configure(&mut group);
    for fluents in [1000, 100_000] {
        let (stream, facts) = generated(|out| {
            inertia(
                &Inertia {
                    fluents,
                    values: 3,
                    events_per_point: 10,
                    time_points: 2000,
                    start: 0,
                    seed: 1,
                },
                out,
            )
        });
        for workers in [1, 2] {
            bench_run(
                &mut group,
                BenchmarkId::new(format!("workers_{workers}"), format!("fluents_{fluents}")),
                examples::INERTIA_TDL,
                &stream,
                facts,
                workers,
                true,
            );
        }
    }
    group.finish();
}

fn recursion(c: &mut Criterion) {
    let mut group = c.benchmark_group("iterate_reach");
    configure(&mut group);
    let program = include_str!("../../datasets/bench/reach.tdl");
    for nodes in [50, 200] {
        let (stream, facts) = generated(|out| {
            graph(
                &Graph {
                    nodes,
                    edges: nodes + nodes / 2,
                    changes: 2,
                    time_points: 50,
                    start: 0,
                    seed: 1,
                },
                out,
            )
        });
        for workers in [1, 2] {
            bench_run(
                &mut group,
                BenchmarkId::new(format!("workers_{workers}"), format!("nodes_{nodes}")),
                program,
                &stream,
                facts,
                workers,
                true,
            );
        }
    }
    group.finish();
}

criterion_group!(benches, windows, stepper, recursion);
criterion_main!(benches);
