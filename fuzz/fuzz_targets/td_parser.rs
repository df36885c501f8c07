//! The TD parser and the whole compile pipeline (lowering, validation, stratification,
//! diagnostics rendering) on arbitrary text.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let compiled = stgflow_lang::compile_str("fuzz.tdl", text);
    let _ = compiled.render_diagnostics(false);
});
