//! The reference evaluator end to end on the device-fleet workload: compile
//! `datasets/examples/device_safety.tdl`, read the stream, evaluate every time point,
//! format the output in `changes` mode (written to nowhere).
//!
//! Run it with
//!
//! ```text
//! cargo bench -p stgflow-bench --bench reference
//! ```
//!
//! and one size with a regex filter, e.g. `cargo bench -p stgflow-bench --bench reference -- 'devices/10$'`.
//! The stream (1000 time points, rates 0.01/0.01, seed 1) is generated once per size,
//! outside the timed loop; throughput is counted in input facts. This measures the
//! single-threaded oracle, not a dataflow engine. Recorded medians are in BENCHMARKS.md.
//!
//! Pitfall: criterion runs at least 10 iterations whatever `measurement_time` says. The
//! reference evaluator joins by scanning, so its cost per time point grows with the square
//! of the facts holding at it; at 1000 devices one iteration takes seconds and that size
//! alone takes about a minute (criterion warns that it cannot finish in the target time).

use std::hint::black_box;
use std::time::Duration;

use criterion::{
    BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main,
};
use stgflow_bench::run_reference;
use stgflow_datasets::{DeviceFleet, device_fleet, examples};
use stgflow_io::sink::Mode;

const TIME_POINTS: u64 = 1000;

fn device_fleet_stream(devices: u64) -> (Vec<u8>, u64) {
    let config = DeviceFleet {
        devices,
        time_points: TIME_POINTS,
        ..DeviceFleet::default()
    };
    let mut stream = Vec::new();
    match device_fleet(&config, &mut stream) {
        Ok(summary) => (stream, summary.facts),
        Err(error) => panic!("generating {devices} devices: {error}"),
    }
}

fn reference_device_fleet(c: &mut Criterion) {
    let mut group = c.benchmark_group("reference_device_fleet_1000_points");
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
    for devices in [10, 100, 1000] {
        let (stream, facts) = device_fleet_stream(devices);
        // One untimed run checks that every generated fact is read, so the throughput is honest.
        match run_reference(
            "device_safety.tdl",
            examples::DEVICE_SAFETY_TDL,
            &stream,
            Mode::Changes,
        ) {
            Ok(summary) => assert_eq!(summary.input_facts, facts, "facts read"),
            Err(error) => panic!("{error:#}"),
        }
        group.throughput(Throughput::Elements(facts));
        group.bench_with_input(
            BenchmarkId::new("devices", devices),
            &stream,
            |b, stream| {
                b.iter(|| {
                    run_reference(
                        "device_safety.tdl",
                        examples::DEVICE_SAFETY_TDL,
                        black_box(stream),
                        Mode::Changes,
                    )
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, reference_device_fleet);
criterion_main!(benches);
