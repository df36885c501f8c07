//! The parser, the whole compile pipeline and the stream readers never panic, whatever
//! the input: random bytes, random token soup, and mutations of valid programs.

use proptest::prelude::*;
use stgflow_engine::compile_str;
use stgflow_engine::stream::{FactReader, Schema, StreamFormat};

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

fn compile_everything(text: &str) {
    let compiled = compile_str("fuzz.tdl", text);
    let _ = compiled.render_diagnostics(false);
    let mut reader = FactReader::new(
        text.as_bytes(),
        "fuzz",
        StreamFormat::Td,
        Schema::new(&compiled.program),
    );
    while let Ok(Some(_)) = reader.next_fact() {}
    let mut reader = FactReader::new(
        text.as_bytes(),
        "fuzz",
        StreamFormat::Csv,
        Schema::new(&compiled.program),
    );
    while let Ok(Some(_)) = reader.next_fact() {}
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..400)) {
        compile_everything(&String::from_utf8_lossy(&bytes));
        // The stream readers also see the raw bytes (invalid UTF-8 included).
        let compiled = compile_str("p.tdl", "q(X, T) :- p(X, T).");
        let mut reader = FactReader::new(&bytes[..], "raw", StreamFormat::Td, Schema::new(&compiled.program));
        while let Ok(Some(_)) = reader.next_fact() {}
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
