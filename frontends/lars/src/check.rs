//! Checks on the LARS program itself, before translation, so that their errors speak
//! LARS (the user's predicates, arities without a time argument, `not(…)`):
//!
//! * **arities** (E206): a predicate is used with one number of arguments throughout;
//! * **global stratification** (E205): no predicate depends on itself through `not`, at
//!   any time distance. Laser and the STG paper take plain LARS programs to be globally
//!   stratified; windows do not break a cycle (every time window contains the current
//!   time point, so a cycle through a window is a cycle at the same time point too).
//!   The error names the cycle and points at every rule on it.

use hashbrown::HashMap;
use stgflow_lang::diag::{Diagnostic, Diagnostics, Span};

use crate::ast::{Atom, Literal, Program};
use crate::codes::Code;

/// Reports predicates used with different numbers of arguments.
pub fn arities(program: &Program) -> Diagnostics {
    let mut diagnostics = Diagnostics::default();
    let mut first: HashMap<&str, (usize, Span)> = HashMap::new();
    let atoms = program.rules.iter().flat_map(|rule| {
        std::iter::once(&rule.head).chain(
            rule.body
                .iter()
                .filter_map(Literal::extended)
                .map(crate::ast::Extended::atom),
        )
    });
    for atom in atoms {
        let name = atom.predicate.name.as_str();
        let arity = atom.args.len();
        match first.get(name) {
            None => {
                first.insert(name, (arity, atom.span));
            }
            Some(&(known, span)) if known != arity => diagnostics.push(
                Diagnostic::error(
                    Code::E206,
                    format!(
                        "`{name}` is used with {arity} argument{} here but with {known} before",
                        plural(arity)
                    ),
                )
                .with_label(atom.span, format!("{arity} argument{}", plural(arity)))
                .with_label(
                    span,
                    format!("first used with {known} argument{}", plural(known)),
                )
                .with_help("a predicate has one arity; rename one of the two if they differ"),
            ),
            Some(_) => {}
        }
    }
    diagnostics
}

/// One dependency: `head` reads `body` in rule `rule` at `span`.
struct Edge<'a> {
    head: &'a str,
    body: &'a str,
    negative: bool,
    span: Span,
    rule: usize,
}

/// Reports a cycle through negation (the program is not globally stratified).
pub fn stratification(program: &Program) -> Diagnostics {
    let mut edges: Vec<Edge<'_>> = Vec::new();
    for rule in &program.rules {
        for literal in &rule.body {
            let (atom, negative): (&Atom, bool) = match literal {
                Literal::Positive(e) => (e.atom(), false),
                Literal::Negative(e, _) => (e.atom(), true),
                _ => continue,
            };
            edges.push(Edge {
                head: &rule.head.predicate.name,
                body: &atom.predicate.name,
                negative,
                span: literal.span(),
                rule: rule.number,
            });
        }
    }
    let mut diagnostics = Diagnostics::default();
    let mut reported: Vec<&str> = Vec::new();
    for edge in edges.iter().filter(|e| e.negative) {
        // A negative edge (head reads `not body`) lies on a cycle when body depends on head.
        if reported.contains(&edge.head) {
            continue;
        }
        let Some(path) = path(&edges, edge.body, edge.head) else {
            continue;
        };
        // The cycle: head reads body through `not`, body reads … reads head.
        let mut cycle: Vec<&Edge<'_>> = vec![edge];
        cycle.extend(path);
        let names: Vec<&str> = cycle.iter().map(|e| e.head).collect();
        reported.extend(names.iter().copied());
        let shown = {
            let mut text: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            text.push(format!("`{}`", names[0]));
            text.join(" → ")
        };
        let mut diagnostic = Diagnostic::error(
            Code::E205,
            format!("not globally stratified: {shown} depends on itself through `not`"),
        );
        for e in &cycle {
            let how = if e.negative {
                "through `not`"
            } else {
                "positively"
            };
            diagnostic = diagnostic.with_label(
                e.span,
                format!(
                    "rule {}: `{}` depends on `{}` {how}",
                    e.rule, e.head, e.body
                ),
            );
        }
        diagnostics.push(
            diagnostic
                .with_note("plain LARS programs must be globally stratified (as in Laser): no predicate may depend on its own negation, whatever the windows")
                .with_help("break the cycle, e.g. by deriving one of these predicates from input predicates only"),
        );
    }
    diagnostics
}

/// The dependency edges along which `to` reaches `from` (`from` depends on … on `to`),
/// listed from `from` on; `None` when `from` does not depend on `to`. Breadth-first, so
/// the cycle named is a shortest one.
fn path<'e, 'a>(edges: &'e [Edge<'a>], from: &str, to: &str) -> Option<Vec<&'e Edge<'a>>> {
    // `x` depends on `y` when an edge has head x, body y. Walk from `from` down to `to`.
    if from == to {
        return Some(Vec::new());
    }
    let mut parent: HashMap<&str, usize> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([from]);
    while let Some(current) = queue.pop_front() {
        for (i, edge) in edges.iter().enumerate() {
            if edge.head != current || edge.body == from || parent.contains_key(edge.body) {
                continue;
            }
            parent.insert(edge.body, i);
            if edge.body == to {
                let mut out = Vec::new();
                let mut at = to;
                while at != from {
                    let e = &edges[parent[at]];
                    out.push(e);
                    at = e.head;
                }
                out.reverse();
                return Some(out);
            }
            queue.push_back(edge.body);
        }
    }
    None
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::parse;

    fn messages(text: &str) -> Vec<String> {
        let (program, _) = parse(0, text);
        let mut all = arities(&program);
        all.extend(stratification(&program));
        all.iter().map(|d| d.message.clone()).collect()
    }

    #[test]
    fn a_cycle_through_not_is_named() {
        assert_eq!(
            messages("ok :- not(alarm)\nalarm :- time_win(3,0,1,diamond(ok))\n"),
            ["not globally stratified: `ok` → `alarm` → `ok` depends on itself through `not`"]
        );
        assert_eq!(
            messages("p(X) :- q(X) and not(time_win(2,0,1,box(p(X))))\n"),
            ["not globally stratified: `p` → `p` depends on itself through `not`"]
        );
    }

    #[test]
    fn negation_of_a_lower_stratum_and_positive_recursion_are_fine() {
        assert!(messages("alarm :- time_win(1,0,1,diamond(s))\nok :- not(alarm)\n").is_empty());
        assert!(
            messages(
                "r(X,Y) :- e(X,Y)\nr(X,Z) :- r(X,Y) and e(Y,Z)\nn(X) :- e(X,Y) and not(r(Y,X))\n"
            )
            .is_empty()
        );
    }

    #[test]
    fn arity_mismatches_are_reported() {
        assert_eq!(
            messages("q(A) :- p(A,B) and time_win(2,0,1,diamond(p(A)))\n"),
            ["`p` is used with 1 argument here but with 2 before"]
        );
    }
}
