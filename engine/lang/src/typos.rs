//! A predicate that looks like a misspelling of another (W002): read once in a rule,
//! defined nowhere, and one letter away from a predicate the program uses elsewhere. The
//! program is valid either way (a predicate no rule defines is input), so it is a warning;
//! without it the typo only shows as a rule that never fires.

use crate::diag::{Code, Diagnostic, Diagnostics, edit_distance};
use crate::ir::{Literal, PredId, Program};

/// Warns about each predicate of `program` that is mentioned once, in a rule's body, with
/// no rule, fact or `#output` of it, where another predicate the program defines or
/// mentions more than once is one edit away (not in a digit: `p1` beside `p2` is meant).
/// Names shorter than [`SHORTEST`] are left alone: `p` beside `q` is meant too.
pub fn typos(program: &Program) -> Diagnostics {
    let long = |name: &str| name.chars().count() >= SHORTEST;
    let mut diagnostics = Diagnostics::default();
    let n = program.predicates.len();
    let mut mentions = vec![0usize; n];
    let mut defined = vec![false; n];
    for rule in &program.rules {
        defined[rule.head.pred] = true;
        mentions[rule.head.pred] += 1;
        for atom in rule.body.iter().filter_map(Literal::atom) {
            mentions[atom.pred] += 1;
        }
    }
    for fact in &program.facts {
        defined[fact.pred] = true;
    }
    for &p in program.outputs.iter().flatten() {
        defined[p] = true;
    }
    let hidden = |p: PredId| program.hidden.contains(&p);
    for p in (0..n).filter(|&p| mentions[p] == 1 && !defined[p] && !hidden(p)) {
        let name = &program.predicates[p].name;
        if !long(name) {
            continue;
        }
        let known = (0..n)
            .filter(|&q| q != p && (defined[q] || mentions[q] > 1) && !hidden(q))
            .map(|q| program.predicates[q].name.as_str())
            .filter(|other| long(other) && edit_distance(name, other) == 1)
            .filter(|other| !differ_in_a_digit(name, other))
            .min();
        let Some(known) = known else {
            continue;
        };
        diagnostics.push(
            Diagnostic::warning(
                Code::W002,
                format!("`{name}` is read here and nowhere else, and nothing defines it"),
            )
            .with_label(program.predicates[p].span, "read once, defined nowhere")
            .with_help(format!("did you mean `{known}`?"))
            .with_note(format!(
                "a predicate no rule defines is input; if `{name}` is, this warning can be ignored"
            )),
        );
    }
    diagnostics
}

/// The fewest letters of a name a typo is looked for in.
const SHORTEST: usize = 4;

/// Whether `a` and `b` (one edit apart) differ in a digit: numbered names (`p1`, `p2`).
fn differ_in_a_digit(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    let prefix = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    let suffix = (a[prefix..].iter().rev())
        .zip(b[prefix..].iter().rev())
        .take_while(|(x, y)| x == y)
        .count();
    (a[prefix..a.len() - suffix].iter())
        .chain(&b[prefix..b.len() - suffix])
        .any(u8::is_ascii_digit)
}

#[cfg(test)]
mod tests {
    fn warnings(text: &str) -> Vec<String> {
        let compiled = crate::compile_str("p.tdl", text);
        (compiled.diagnostics.iter())
            .filter(|d| d.code == "W002")
            .map(|d| format!("{} | {}", d.message, d.help.clone().unwrap_or_default()))
            .collect()
    }

    #[test]
    fn a_misspelled_input_read_once_is_named_with_the_predicate_it_looks_like() {
        let text = "rising(X, T) :- reading(X, T), not reading(X, T-1).\n\
                    low(X, T) :- readng(X, T), X < 3.\n";
        assert_eq!(
            warnings(text),
            [
                "`readng` is read here and nowhere else, and nothing defines it | did you mean `reading`?"
            ]
        );
    }

    #[test]
    fn numbered_names_inputs_read_again_and_far_names_are_not_typos() {
        for text in [
            // Numbered inputs.
            "q(X, T) :- p1(X, T), p2(X, T-1), p2(X, T).\n",
            // Read in two rules: deliberate.
            "a(X, T) :- readng(X, T).\nb(X, T) :- readng(X, T), reading(X, T), reading(X, T-1).\n",
            // Short names.
            "q(X, T) :- p(X, T), r(X, T), r(X, T-1).\n",
            // Two letters away.
            "a(X, T) :- raeding(X, T).\nb(X, T) :- reading(X, T), reading(X, T-1).\n",
            // The near name is read once too: neither is known better.
            "a(X, T) :- readng(X, T), reading(X, T).\n",
        ] {
            assert_eq!(warnings(text), Vec::<String>::new(), "{text}");
        }
    }

    #[test]
    fn a_near_name_that_a_rule_defines_counts() {
        assert_eq!(
            warnings("safety(X, T) :- repair(X, T-1).\nok(X, T) :- safty(X, T).\n").len(),
            1
        );
    }
}
