//! The stream reader for Laser stream lines (`7: p(a) q`, `#timeline`) on arbitrary bytes: never panics, and hands out facts in
//! time order whatever the lateness.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::Arc;

use stgflow_lars::stream::LaserStream;

#[path = "stream_common.rs"]
mod stream_common;

fuzz_target!(|data: &[u8]| stream_common::read_all(data, Arc::new(LaserStream)));
