//! Shared by the stream reader targets: the first byte picks the reader's options (tick,
//! lateness, skip-late, strict), the rest is the stream; every fact is read until the end
//! or the first error.

#![allow(dead_code, reason = "each stream target includes this module and uses a part of it")]

use std::sync::Arc;

use stgflow_ec::records::{RtecRecords, RtecShape};
use stgflow_io::stream::{FactReader, Format, Schema, Tolerance};

const PROGRAM: &str = "q(X, Y, T) :- p(X, Y, T). r(T) :- s(T). o(T) :- appear(X, T), \
                       walking(X, V, T), fast(X, Y, V, T).";

/// RTEC records with a point and an interval fluent, as the fuzzed program declares.
pub fn rtec() -> Arc<dyn Format> {
    Arc::new(RtecRecords::new(
        [
            ("walking".to_owned(), RtecShape::Point),
            ("fast".to_owned(), RtecShape::Interval),
        ],
        false,
    ))
}

pub fn read_all(data: &[u8], format: Arc<dyn Format>) {
    let Some((&options, stream)) = data.split_first() else {
        return;
    };
    let compiled = stgflow_lang::compile_str("fuzz.tdl", PROGRAM);
    let schema = Schema::new(&compiled.program);
    let tolerance = Tolerance {
        lateness: u64::from(options & 0x7),
        skip_late: options & 0x8 != 0,
        strict: options & 0x10 != 0,
    };
    let tick = if options & 0x20 != 0 { 40 } else { 1 };
    let mut reader = FactReader::new(stream, "fuzz", format, schema)
        .with_tick(tick)
        .with_tolerance(tolerance);
    // An interval may expand to very many time points: stop after a bounded number of
    // facts (the reader hands them out lazily, so this bounds the work).
    let mut last = 0;
    for _ in 0..100_000 {
        match reader.next_fact() {
            Ok(Some(fact)) => {
                assert!(fact.time >= last, "facts out of order: {} after {last}", fact.time);
                last = fact.time;
            }
            Ok(None) | Err(_) => break,
        }
    }
    let _ = reader.declared_timeline();
}
