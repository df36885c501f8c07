//! The Event Calculus front end (RTEC syntax → TD by Algorithm 3) and the engine's
//! analysis on arbitrary text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let ec = stgflow_ec::compile_str("fuzz.ec", text);
    let _ = ec.compiled.render_diagnostics(false);
});
