//! Reading a stream, nothing else: the unique-atoms stream (1,000 new `p(n,n,t).` facts per
//! time point, 1,000 time points, 10⁶ facts) parsed line by line on the calling thread
//! ([`FactReader`]) and in blocks on a rayon pool of 1, 2 and 4 threads
//! ([`ParallelReader`]), every fact taken by the calling thread. This is the input path of
//! batch replay without the evaluation: how fast the parsing alone can feed the workers.
//!
//! Run it with
//!
//! ```text
//! cargo bench -p stgflow-bench --bench reading
//! ```

use std::hint::black_box;
use std::io;
use std::sync::Arc;

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use stgflow_datasets::{UniqueAtoms, unique_atoms};
use stgflow_io::drive::FactSource;
use stgflow_io::stream::blocks::{ParallelReader, Parallelism};
use stgflow_io::stream::td::Td;
use stgflow_io::stream::{FactReader, Schema};
use stgflow_lang::compile_str;

mod common;
use common::configure;

/// Takes every fact of `source`; the number taken.
fn count(source: &mut dyn FactSource) -> u64 {
    let mut facts = 0;
    while let Some(fact) = source
        .next_fact()
        .unwrap_or_else(|e| panic!("reading: {e}"))
    {
        black_box(&fact);
        facts += 1;
    }
    facts
}

fn reading(c: &mut Criterion) {
    let mut td = Vec::new();
    let summary = unique_atoms(
        &UniqueAtoms {
            atoms_per_point: 1000,
            constants: stgflow_datasets::Constants::Integers,
            time_points: 1000,
            start: 0,
            extra_every: 0,
        },
        &mut td,
    )
    .unwrap_or_else(|e| panic!("generating the stream: {e}"));
    let td: Arc<[u8]> = td.into();
    let compiled = compile_str("copy.tdl", "q(X, Y, T) :- p(X, Y, T).");
    let schema = Schema::new(&compiled.program);
    let sequential = || FactReader::new(&td[..], "in", std::sync::Arc::new(Td), schema.clone());
    let parallel = |threads| {
        let like = FactReader::new(io::empty(), "in", std::sync::Arc::new(Td), schema.clone());
        let parallelism = Parallelism {
            threads,
            ..Parallelism::default()
        };
        ParallelReader::spawn(io::Cursor::new(td.clone()), like, parallelism)
            .unwrap_or_else(|e| panic!("{e}"))
    };
    // Both read every fact.
    assert_eq!(count(&mut sequential()), summary.facts);
    assert_eq!(count(&mut parallel(2)), summary.facts);

    let mut group = c.benchmark_group("reading");
    configure(&mut group);
    group.throughput(Throughput::Elements(summary.facts));
    group.bench_function("sequential", |b| b.iter(|| count(&mut sequential())));
    for threads in [1, 2, 4] {
        group.bench_with_input(
            BenchmarkId::new("parallel", threads),
            &threads,
            |b, &threads| b.iter(|| count(&mut parallel(threads))),
        );
    }
    group.finish();
}

criterion_group!(benches, reading);
criterion_main!(benches);
