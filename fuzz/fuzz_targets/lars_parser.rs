//! The LARS front end (Laser syntax → TD by Algorithm 2) and the engine's analysis on
//! arbitrary text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let compiled = stgflow_lars::compile_str("fuzz.lars", text);
    let _ = compiled.render_diagnostics(false);
});
