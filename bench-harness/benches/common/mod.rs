//! What the criterion benches share (a module of each bench target, not a target itself).

use std::time::Duration;

use criterion::{BenchmarkGroup, SamplingMode, measurement::WallTime};

/// The allocator the `stgflow` binary runs with (mimalloc, `engine/alloc`), so that a
/// bench measures what a run costs, not the system allocator's share.
#[global_allocator]
static GLOBAL: stgflow_alloc::Allocator = stgflow_alloc::Allocator;

/// Whole runs take milliseconds to seconds: flat sampling, 10 samples, 1 s warm-up, 3 s.
pub fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group
        .sampling_mode(SamplingMode::Flat)
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3));
}
