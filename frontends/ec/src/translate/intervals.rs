//! Statically determined fluents in RTEC's interval form: a `holdsFor` rule read as a
//! Boolean formula over fluent-value pairs, in disjunctive normal form, one `holdsAt`
//! rule (schema 17) per disjunct.

use hashbrown::HashMap;
use stgflow_lang::diag::{Diagnostic, Diagnostics};
use stgflow_lang::syntax::ast;

use super::Generator;
use super::terms::{atom_vars, expr_vars, fluent_atom, fresh, literal, var, vars_of};
use crate::codes::Code;
use crate::model::{Cond, FluentTerm, IntervalCond, IntervalRule};
use crate::syntax::Name;

/// Disjuncts beyond this are reported rather than generated.
const MAX_DISJUNCTS: usize = 1024;

/// A Boolean formula over fluent-value pairs (a `holdsFor` rule's list of intervals).
#[derive(Clone, Debug)]
enum Formula {
    Atom(FluentTerm),
    And(Vec<Formula>),
    Or(Vec<Formula>),
    Not(Box<Formula>),
}

type Conjunct = Vec<(bool, FluentTerm)>;

/// Disjunctive normal form of `formula` (negated when `negate`); `None` when it has more
/// than [`MAX_DISJUNCTS`] disjuncts.
fn dnf(formula: &Formula, negate: bool) -> Option<Vec<Conjunct>> {
    match formula {
        Formula::Atom(fluent) => Some(vec![vec![(!negate, fluent.clone())]]),
        Formula::Not(inner) => dnf(inner, !negate),
        Formula::And(parts) | Formula::Or(parts) => {
            let conjunction = matches!(formula, Formula::And(_)) != negate;
            let mut result: Vec<Conjunct> = if conjunction {
                vec![Vec::new()]
            } else {
                Vec::new()
            };
            for part in parts {
                let part = dnf(part, negate)?;
                if conjunction {
                    let mut product = Vec::new();
                    for left in &result {
                        for right in &part {
                            product.push(left.iter().chain(right).cloned().collect());
                        }
                    }
                    result = product;
                } else {
                    result.extend(part);
                }
                if result.len() > MAX_DISJUNCTS {
                    return None;
                }
            }
            Some(result)
        }
    }
}

impl Generator<'_> {
    /// A `holdsFor` rule: each interval operation as TD rules. Over 100 lines: one arm
    /// per operation (union, intersection, complements), read best side by side.
    pub(super) fn intervals(&mut self, rule: &IntervalRule) {
        let mut lists: HashMap<String, Formula> = HashMap::new();
        let mut builtins = Vec::new();
        let mut background = Vec::new();
        let mut taken = Vec::new();
        vars_of(&rule.head, &mut taken);
        let mut ok = true;
        let lookup = |name: &Name,
                      lists: &HashMap<String, Formula>,
                      diagnostics: &mut Diagnostics| {
            let found = lists.get(&name.text).cloned();
            if found.is_none() {
                diagnostics.push(
                    Diagnostic::error(
                        Code::E511,
                        format!(
                            "the list of intervals `{}` is not defined before its use",
                            name.text
                        ),
                    )
                    .with_label(name.span, "not defined by an earlier condition")
                    .with_help("define it with `holdsFor(F=V, I)` or an interval operation first"),
                );
            }
            found
        };
        for cond in &rule.body {
            let defined = match cond {
                IntervalCond::HoldsFor { fluent, list } => {
                    vars_of(fluent, &mut taken);
                    Some((list, Some(Formula::Atom(fluent.clone()))))
                }
                IntervalCond::Union { inputs, out } | IntervalCond::Intersect { inputs, out } => {
                    let parts: Option<Vec<Formula>> = inputs
                        .iter()
                        .map(|i| lookup(i, &lists, &mut self.out.diagnostics))
                        .collect();
                    let formula = parts.map(|parts| {
                        if matches!(cond, IntervalCond::Union { .. }) {
                            Formula::Or(parts)
                        } else {
                            Formula::And(parts)
                        }
                    });
                    Some((out, formula))
                }
                IntervalCond::RelativeComplement {
                    base,
                    subtract,
                    out,
                } => {
                    let base = lookup(base, &lists, &mut self.out.diagnostics);
                    let parts: Option<Vec<Formula>> = subtract
                        .iter()
                        .map(|i| lookup(i, &lists, &mut self.out.diagnostics))
                        .collect();
                    let formula = base.zip(parts).map(|(base, parts)| {
                        Formula::And(vec![base, Formula::Not(Box::new(Formula::Or(parts)))])
                    });
                    Some((out, formula))
                }
                IntervalCond::Complement { inputs, out } => {
                    let parts: Option<Vec<Formula>> = inputs
                        .iter()
                        .map(|i| lookup(i, &lists, &mut self.out.diagnostics))
                        .collect();
                    Some((out, parts.map(|p| Formula::Not(Box::new(Formula::Or(p))))))
                }
                IntervalCond::Builtin(builtin) => {
                    expr_vars(&builtin.lhs, &mut taken);
                    expr_vars(&builtin.rhs, &mut taken);
                    builtins.push(builtin.clone());
                    None
                }
                IntervalCond::Background {
                    negated,
                    atom,
                    span,
                } => {
                    atom_vars(atom, &mut taken);
                    background.push(Cond::Background {
                        negated: *negated,
                        atom: atom.clone(),
                        span: *span,
                    });
                    None
                }
            };
            match defined {
                Some((name, Some(formula))) => {
                    lists.insert(name.text.clone(), formula);
                }
                Some((_, None)) => ok = false,
                None => {}
            }
        }
        if !ok {
            return;
        }
        let Some(formula) = lookup(&rule.list, &lists, &mut self.out.diagnostics) else {
            return;
        };
        let Some(conjuncts) = dnf(&formula, false) else {
            self.out.diagnostics.push(
                Diagnostic::error(
                    Code::E511,
                    format!(
                        "this holdsFor rule expands to more than {MAX_DISJUNCTS} holdsAt rules"
                    ),
                )
                .with_label(rule.span, "too many alternatives")
                .with_help("split it into several fluents"),
            );
            return;
        };
        let time = var(&fresh("T", &taken), rule.list.span);
        let head = fluent_atom(&rule.head, "", time.clone());
        // Background knowledge holds at every time point: the same literals in every
        // disjunct, the positive ones binding what they name.
        let background_literals = self.body(&background, &time);
        let mut background_bound = Vec::new();
        for cond in &background {
            if let Cond::Background {
                negated: false,
                atom,
                ..
            } = cond
            {
                atom_vars(atom, &mut background_bound);
            }
        }
        let count = conjuncts.len();
        for (i, mut conjunct) in conjuncts.into_iter().enumerate() {
            // Positive conditions first: they bind what the negations test.
            conjunct.sort_by_key(|(positive, _)| !*positive);
            let mut body: Vec<ast::Literal> = conjunct
                .iter()
                .map(|(positive, fluent)| {
                    literal(
                        !positive,
                        fluent_atom(fluent, "", time.clone()),
                        fluent.span,
                    )
                })
                .collect();
            body.extend(background_literals.iter().cloned());
            body.extend(builtins.iter().cloned().map(ast::Literal::Builtin));
            // RTEC computes a grounded pair for its grounded instances only; a disjunct
            // that binds a head variable by no positive condition (a complement) ranges
            // over them, or over the fluent's grounded instances of another value.
            let mut bound = background_bound.clone();
            for (_, fluent) in conjunct.iter().filter(|(positive, _)| *positive) {
                vars_of(fluent, &mut bound);
            }
            let mut needed = Vec::new();
            vars_of(&rule.head, &mut needed);
            let unsafe_ = needed.iter().any(|v| !bound.contains(v));
            let implied = conjunct.iter().any(|(positive, atom)| {
                *positive && self.names.implies_grounding(atom, &rule.head)
            });
            let grounded = match self.grounded_exactly(&rule.head, time.clone()) {
                Some(_) if implied => None,
                Some(grounded) => Some(grounded),
                None if unsafe_ => self.grounded(&rule.head, time.clone()),
                None => None,
            };
            if let Some(grounded) = grounded {
                body.insert(0, ast::Literal::Positive(grounded));
            } else if unsafe_ && !self.names.groundings.is_empty() {
                // RTEC computes only what its grounding declarations name; no instance of
                // this pair is named, so none is computed (voting's `pow(propose(_P, M))`).
                self.out.diagnostics.push(
                    Diagnostic::warning(
                        Code::W504,
                        format!(
                            "`{}` is never computed: a variable of its head is bound by no condition and no grounding declaration names it",
                            rule.head.name.text
                        ),
                    )
                    .with_label(rule.head.span, "RTEC computes the grounded pairs only")
                    .with_help("add a `grounding(…)` declaration for it, as RTEC would need to compute it"),
                );
                self.never_computed.push(rule.head.name.text.clone());
                continue;
            }
            self.emit(
                head.clone(),
                body,
                rule.span,
                format!(
                    "EC holdsFor rule as holdsAt rules (schema 17), disjunct {} of {count}",
                    i + 1
                ),
            );
        }
    }
}
