//! The stream reader for RTEC pipe records (`name|arrival|time|…`) on arbitrary bytes: never panics, and hands out facts in
//! time order whatever the lateness.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "stream_common.rs"]
mod stream_common;

fuzz_target!(|data: &[u8]| stream_common::read_all(data, stream_common::rtec()));
