//! The parser, the whole compile pipeline and the stream readers (TD facts, CSV, RTEC
//! records, Laser lines; with and without lateness, `--skip-late`, `--strict`, a clock
//! tick) never panic, whatever the input: random bytes, random token soup, and mutations
//! of valid programs and streams. The readers also always hand out facts in time order.

use proptest::prelude::*;
use std::sync::Arc;

use stgflow_ec::records::{RtecRecords, RtecShape};
use stgflow_io::stream::csv::Csv;
use stgflow_io::stream::td::Td;
use stgflow_io::stream::{FactReader, Format, Schema, Tolerance};
use stgflow_lang::compile_str;
use stgflow_lars::stream::LaserStream;

const TOKENS: &[&str] = &[
    "p",
    "q",
    "not",
    "X",
    "Y",
    "T",
    "_",
    "(",
    ")",
    ",",
    ".",
    ":-",
    "T-1",
    "T+1",
    "-",
    "+",
    "*",
    "/",
    "=",
    "!=",
    "<",
    "<=",
    ">",
    ">=",
    "#output",
    "#x",
    "0",
    "7",
    "-3",
    "2.5",
    "1e9",
    "\"s\"",
    "\"",
    "%",
    "\n",
    " ",
    "99999999999999999999",
    "ä",
    "\u{0}",
    "((",
    "))",
];

const VALID: &str = "safe(X, T) :- repair(X, T-1).\n\
                     safe(X, T) :- safe(X, T-1), not warning(X, T-1).\n\
                     trusted(X, T) :- safe(X, T), safe(X, T-1), D = X + 1, D > 2.\n\
                     #output trusted.\n";

/// Every stream format, RTEC records with a point and an interval fluent.
fn formats() -> [Arc<dyn Format>; 4] {
    let records = RtecRecords::new(
        [
            ("walking".to_owned(), RtecShape::Point),
            ("fast".to_owned(), RtecShape::Interval),
        ],
        false,
    );
    [
        Arc::new(Td),
        Arc::new(Csv),
        Arc::new(records),
        Arc::new(LaserStream),
    ]
}

fn compile_everything(text: &str) {
    let compiled = compile_str("fuzz.tdl", text);
    let _ = compiled.render_diagnostics(false);
    for format in formats() {
        let mut reader = FactReader::new(
            text.as_bytes(),
            "fuzz",
            format,
            Schema::new(&compiled.program),
        );
        while let Ok(Some(_)) = reader.next_fact() {}
    }
}

/// Reads `bytes` in every format with the reader options `options` picks (as the fuzz
/// targets do), checking that facts come out in time order; at most `limit` facts (an
/// RTEC interval may hold for a very long time).
fn read_every_format(bytes: &[u8], options: u8) {
    let compiled = compile_str(
        "p.tdl",
        "q(X, Y, T) :- p(X, Y, T). r(T) :- s(T). o(T) :- appear(X, T), walking(X, V, T), fast(X, Y, V, T).",
    );
    for format in formats() {
        let schema = Schema::new(&compiled.program);
        let tolerance = Tolerance {
            lateness: u64::from(options & 0x7),
            skip_late: options & 0x8 != 0,
            strict: options & 0x10 != 0,
        };
        let tick = if options & 0x20 != 0 { 40 } else { 1 };
        let mut reader = FactReader::new(bytes, "raw", format.clone(), schema)
            .with_tick(tick)
            .with_tolerance(tolerance);
        let mut last = 0;
        for _ in 0..10_000 {
            match reader.next_fact() {
                Ok(Some(fact)) => {
                    assert!(fact.time >= last, "{format:?}: {} after {last}", fact.time);
                    last = fact.time;
                }
                Ok(None) | Err(_) => break,
            }
        }
    }
}

/// Pieces of stream lines in every format.
const STREAM_TOKENS: &[&str] = &[
    "p(a, 1, 3).",
    "s(3).",
    "s(",
    "p(",
    "3",
    "-1",
    "99999999999999999999",
    "18446744073709551615",
    "9223372036854775807",
    ",",
    "|",
    ":",
    ".",
    " ",
    "\n",
    "\"",
    "#timeline",
    "#timeline 0 5\n",
    "1: p(a,2) s\n",
    "2:",
    "s",
    "p(a,b)",
    "3,p,a,b\n",
    "4,s\n",
    "time,pred\n",
    "appear|0|0|id0\n",
    "fast|9|2|6|very|id0|bus\n",
    "walking|3|3|true|id0\n",
    "fast|0|1|9223372036854775807|v|a|b\n",
    "zz(1).",
    "p(a, 2).",
    "%",
    "\u{0}",
    "é",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        compile_everything(&String::from_utf8_lossy(&bytes));
        // The stream readers also see the raw bytes (invalid UTF-8 included).
        let compiled = compile_str("p.tdl", "q(X, T) :- p(X, T).");
        let mut reader = FactReader::new(&bytes[..], "raw", Arc::new(Td), Schema::new(&compiled.program));
        while let Ok(Some(_)) = reader.next_fact() {}
    }

    #[test]
    fn random_bytes_never_panic_any_stream_reader(
        bytes in proptest::collection::vec(any::<u8>(), 0..400), options in any::<u8>(),
    ) {
        read_every_format(&bytes, options);
    }

    #[test]
    fn stream_token_soup_never_panics_any_reader(
        tokens in proptest::collection::vec(proptest::sample::select(STREAM_TOKENS), 0..60),
        options in any::<u8>(),
    ) {
        read_every_format(tokens.concat().as_bytes(), options);
        read_every_format(tokens.join(" ").as_bytes(), options);
    }

    #[test]
    fn token_soup_never_panics(tokens in proptest::collection::vec(proptest::sample::select(TOKENS), 0..80)) {
        compile_everything(&tokens.join(" "));
        compile_everything(&tokens.concat());
    }

    #[test]
    fn mutated_valid_programs_never_panic(cut in 0..VALID.len(), insert in proptest::sample::select(TOKENS)) {
        let mut text = VALID.as_bytes().to_vec();
        text.splice(cut..cut, insert.bytes());
        compile_everything(&String::from_utf8_lossy(&text));
        let truncated = String::from_utf8_lossy(&VALID.as_bytes()[..cut]).into_owned();
        compile_everything(&truncated);
    }
}
