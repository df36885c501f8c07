//! The LARS front end never panics: random text and soups of Laser tokens go through
//! parsing, the LARS checks, Algorithm 2 and the engine's analysis, and come back as
//! diagnostics.

use proptest::prelude::*;

const TOKENS: &[&str] = &[
    "q",
    "p",
    "s",
    "A",
    "B",
    "T",
    "U",
    "(",
    ")",
    ",",
    " :- ",
    " and ",
    "not",
    "time_win",
    "tuple_win",
    "diamond",
    "box",
    "@",
    "COMP",
    "MATH",
    "<",
    "=",
    "+",
    "10",
    "0",
    "1",
    "-2",
    "99999999999999999999",
    "4294967296",
    "\n",
    " ",
    "#",
    "%",
    "\"",
    "é",
    "\u{0}",
    "((",
    "))",
];

fn compile(text: &str) {
    let compiled = stgflow_lars::compile_str("fuzz.lars", text);
    let _ = compiled.render_diagnostics(false);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        compile(&text);
    }

    #[test]
    fn token_soup_never_panics(tokens in proptest::collection::vec(proptest::sample::select(TOKENS), 0..80)) {
        compile(&tokens.concat());
        compile(&tokens.join(" "));
    }

    #[test]
    fn windows_with_random_sizes_never_panic(
        size in prop_oneof![0u64..20, Just(u64::from(u32::MAX)), Just(u64::MAX)],
        op in 0..4usize, negated in any::<bool>(),
    ) {
        let inner = ["diamond(p(A))", "box(p(A))", "@(U,p(A))", "p(A)"][op];
        let not = if negated { " and not(s)" } else { "" };
        compile(&format!("q(A) :- time_win({size},0,1,{inner}) and r(A){not}\n"));
    }
}
