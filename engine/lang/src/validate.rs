//! Checks on the rule model: safety (every head variable, every variable of a negated atom
//! and of a comparison is bound by a positive atom or an assignment) and temporal
//! stratification (Definition 2: no cycle through negation at offset 0).

use std::collections::VecDeque;

use crate::diag::Code;
use crate::diag::{Diagnostic, Diagnostics};
use crate::ir::{Literal, Program, Rule, Term, VarId};
use crate::stratify::{Edge, edges, ordered_sccs};

/// Reports every safety and stratification error in `program`.
pub fn validate(program: &Program) -> Diagnostics {
    let mut diagnostics = Diagnostics::default();
    for rule in &program.rules {
        check_safety(rule, &mut diagnostics);
    }
    check_negation_cycles(program, &mut diagnostics);
    diagnostics
}

fn atom_vars(terms: &[Term]) -> impl Iterator<Item = VarId> + '_ {
    terms.iter().filter_map(|t| match t {
        Term::Var(v) => Some(*v),
        _ => None,
    })
}

fn check_safety(rule: &Rule, diagnostics: &mut Diagnostics) {
    let mut bound = vec![false; rule.vars.len()];
    for literal in &rule.body {
        match literal {
            Literal::Positive(atom) => atom_vars(&atom.args).for_each(|v| bound[v] = true),
            Literal::Assign { var, .. } => bound[*var] = true,
            _ => {}
        }
    }
    if let Some(count) = &rule.count {
        bound[count.result] = true;
    }
    let name = |v: VarId| rule.vars.get(v).map_or("?", String::as_str);
    let mut reported = vec![false; rule.vars.len()];
    for v in atom_vars(&rule.head.args) {
        if !bound[v] && !reported[v] {
            reported[v] = true;
            diagnostics.push(
                Diagnostic::error(Code::E002, format!("unsafe rule: head variable `{}` is not bound", name(v)))
                    .with_label(rule.head.span, format!("`{}` appears in the head", name(v)))
                    .with_note("every head variable must occur in a positive body atom or be assigned (`V = expr`)")
                    .with_help(format!("add a positive atom that binds `{}`", name(v))),
            );
        }
    }
    for literal in &rule.body {
        let (vars, what) = match literal {
            Literal::Negative(atom) => (atom_vars(&atom.args).collect::<Vec<_>>(), "negated atom"),
            Literal::Compare { lhs, rhs, .. } => {
                let mut vars = Vec::new();
                lhs.vars(&mut vars);
                rhs.vars(&mut vars);
                (vars, "comparison")
            }
            Literal::Assign { expr, .. } => {
                let mut vars = Vec::new();
                expr.vars(&mut vars);
                (vars, "assignment")
            }
            Literal::Positive(_) => continue,
        };
        for v in vars {
            if !bound[v] && !reported[v] {
                reported[v] = true;
                let mut diagnostic = Diagnostic::error(
                    Code::E003,
                    format!("variable `{}` in a {what} is not bound by a positive atom", name(v)),
                )
                .with_label(literal.span(), format!("`{}` is unbound here", name(v)))
                .with_note("negation and built-ins only test values; a positive body atom (or an assignment) must bind every variable they use");
                diagnostic = if what == "negated atom" {
                    diagnostic.with_help(format!(
                        "bind `{}` with a positive atom, or write `_` to mean \"for no value\"",
                        name(v)
                    ))
                } else {
                    diagnostic.with_help(format!("bind `{}` with a positive atom first", name(v)))
                };
                diagnostics.push(diagnostic);
            }
        }
    }
}

/// Finds, per offset-0 SCC, a cycle that goes through a negated atom and reports it with
/// the predicates on it and the literals that form it.
fn check_negation_cycles(program: &Program, diagnostics: &mut Diagnostics) {
    let all = edges(program);
    let same_time: Vec<&Edge> = all.iter().filter(|e| e.offset == 0).collect();
    let n = program.predicates.len();
    let sccs = ordered_sccs(n, same_time.iter().map(|e| (e.from, e.to)));
    let mut component = vec![0; n];
    for (c, scc) in sccs.iter().enumerate() {
        for &p in scc {
            component[p] = c;
        }
    }
    let mut reported = vec![false; sccs.len()];
    for negative in same_time.iter().filter(|e| e.negative) {
        let c = component[negative.from];
        if component[negative.to] != c || reported[c] {
            continue;
        }
        reported[c] = true;
        // The cycle: head `to` reads `not from`, and `from` reads (through a path of
        // offset-0 atoms) `to`.
        let path = shortest_path(&same_time, negative.from, negative.to, |p| {
            component[p] == c
        });
        let mut cycle: Vec<&Edge> = vec![negative];
        cycle.extend(path);
        let name = |p| program.pred_name(p);
        let read_as = |edge: &Edge| match (edge.counted, edge.negative) {
            (true, _) => "#count of ",
            (false, true) => "not ",
            (false, false) => "",
        };
        let mut chain = vec![name(negative.to).to_owned()];
        for edge in &cycle {
            chain.push(format!("{}{}", read_as(edge), name(edge.from)));
        }
        // Written as "head ← body": each predicate reads the next.
        let mut diagnostic = Diagnostic::error(
            Code::E008,
            format!(
                "not temporally stratified: cycle through {} at the same time point: {}",
                if cycle.iter().any(|e| e.counted) {
                    "a count"
                } else {
                    "negation"
                },
                chain.join(" ← ")
            ),
        );
        for edge in &cycle {
            let rule = &program.rules[edge.rule];
            let text = program.display_rule(rule).to_string();
            diagnostic = diagnostic.with_label(
                edge.span,
                format!(
                    "`{}` reads {}`{}` at the same time point (rule `{}`)",
                    name(edge.to),
                    read_as(edge),
                    name(edge.from),
                    text
                ),
            );
        }
        diagnostics.push(
            diagnostic
                .with_note(if cycle.iter().any(|e| e.counted) {
                    "a predicate may depend on a count of itself, as on its negation, only through an earlier time point (Definition 2)"
                } else {
                    "a predicate may depend on its own negation only through an earlier time point (Definition 2)"
                })
                .with_help(if cycle.iter().any(|e| e.counted) {
                    "count what holds at an earlier time point (`T-1`), or break the cycle"
                } else {
                    "read the negated atom at an earlier time point (`T-1`), or break the cycle"
                }),
        );
    }
}

/// The edges of a shortest chain in which `from` reads x1, x1 reads x2, …, and the last
/// reads `to` (an edge e says that e.to reads e.from).
fn shortest_path<'a>(
    edges: &[&'a Edge],
    from: usize,
    to: usize,
    inside: impl Fn(usize) -> bool,
) -> Vec<&'a Edge> {
    if from == to {
        return Vec::new();
    }
    let mut previous: std::collections::HashMap<usize, &'a Edge> = std::collections::HashMap::new();
    let mut queue = VecDeque::from([from]);
    while let Some(p) = queue.pop_front() {
        for &edge in edges.iter().filter(|e| e.to == p && inside(e.from)) {
            if edge.from != from && !previous.contains_key(&edge.from) {
                previous.insert(edge.from, edge);
                if edge.from == to {
                    let mut path = Vec::new();
                    let mut at = to;
                    while at != from {
                        let Some(&step) = previous.get(&at) else {
                            break;
                        };
                        path.push(step);
                        at = step.to;
                    }
                    path.reverse();
                    return path;
                }
                queue.push_back(edge.from);
            }
        }
    }
    Vec::new()
}
