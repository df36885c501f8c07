//! The front end never panics: random text and soups of RTEC tokens go through parsing,
//! classification, translation and the engine's analysis, and come back as diagnostics.

use proptest::prelude::*;

const TOKENS: [&str; 40] = [
    "initiatedAt",
    "terminatedAt",
    "holdsAt",
    "holdsFor",
    "happensAt",
    "fi",
    "p",
    "initially",
    "union_all",
    "intersect_all",
    "relative_complement_all",
    "complement_all",
    "start",
    "end",
    "inputEntity",
    "outputEntity",
    "points",
    "f",
    "e",
    "X",
    "T",
    "I",
    "_",
    "true",
    "3",
    "(",
    ")",
    "[",
    "]",
    ",",
    ".\n",
    ":-",
    "=",
    "\\+",
    "not",
    "<",
    "is",
    "+",
    "/*",
    "'",
];

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn random_text_never_panics(text in "\\PC{0,200}") {
        let _ = stgflow_ec::compile_str("random.ec", &text);
    }

    #[test]
    fn token_soup_never_panics(tokens in proptest::collection::vec(0..TOKENS.len(), 0..80)) {
        let text: Vec<&str> = tokens.iter().map(|&i| TOKENS[i]).collect();
        let _ = stgflow_ec::compile_str("soup.ec", &text.join(" "));
    }

    #[test]
    fn well_formed_rules_with_random_pieces_never_panic(
        head in 0..4usize, body in proptest::collection::vec(0..6usize, 1..5), value in 0..3usize,
    ) {
        let heads = ["initiatedAt", "terminatedAt", "holdsAt", "holdsFor"];
        let conds = [
            "happensAt(e(X), T)", "\\+ happensAt(e(X), T)", "holdsAt(g(X)=v, T)",
            "not holdsAt(f(X)=w, T)", "holdsFor(g(X)=v, I1)", "union_all([I1], I)",
        ];
        let values = ["v", "w", "V"];
        let body: Vec<&str> = body.iter().map(|&i| conds[i]).collect();
        let last = if head == 3 { "I" } else { "T" };
        let text = format!(
            "{}(f(X)={}, {last}) :- {}.\nfi(f(X)=v, f(X)=w, 2).\np(f(_)=v).\n",
            heads[head], values[value], body.join(", ")
        );
        let _ = stgflow_ec::compile_str("rules.ec", &text);
    }
}
