//! Statically determined fluents in RTEC's interval form: a `holdsFor` rule read as a
//! Boolean formula over fluent-value pairs, in disjunctive normal form, one `holdsAt`
//! rule (schema 17) per disjunct.

use hashbrown::HashMap;
use stgflow_lang::diag::{Diagnostic, Diagnostics, Span};
use stgflow_lang::syntax::ast;

use super::Generator;
use super::terms::{
    at, atom, atom_vars, expr_vars, fluent_atom, fresh, invented, literal, var, vars_of,
};
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
        // `intDurGreater`'s result and its duration.
        let mut longer: Option<(String, u32)> = None;
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
                IntervalCond::LongerThan {
                    input,
                    duration,
                    out,
                } => {
                    longer = Some((out.text.clone(), *duration));
                    Some((out, lookup(input, &lists, &mut self.out.diagnostics)))
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
        if let Some((out, _)) = &longer {
            if let Some(at) = rule.body.iter().find_map(|cond| reading(cond, out)) {
                self.out.diagnostics.push(longer_read_again(at, out));
                return;
            }
        }
        // An `intDurGreater` whose result is not the rule's says nothing of it.
        let longer = longer.filter(|(out, _)| *out == rule.list.text);
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
        // Under `intDurGreater`, the formula's intervals are those of `f_all`, and the
        // fluent is `f_all` over the duration's window ([`Generator::longer_than`]).
        let all = if longer.is_some() { "_all" } else { "" };
        let head = fluent_atom(&rule.head, all, time.clone());
        let mut emitted = false;
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
            emitted = true;
        }
        if let (Some((_, duration)), true) = (longer, emitted) {
            self.longer_than(rule, duration);
        }
    }

    /// `intDurGreater(I, D, O)` as the result of a holdsFor rule for f: the rule's
    /// formula defines `f_all`, and f is `f_all` over the duration's window, written once
    /// for all of f's rules ([`Generator::check_longer`]).
    fn longer_than(&mut self, rule: &IntervalRule, duration: u32) {
        let name = &rule.head.name.text;
        let arity = rule.head.args.len();
        if !(self.longer.iter()).any(|l| l.name == *name && l.duration == duration) {
            self.longer.push(Longer {
                name: name.clone(),
                arity,
                duration,
                span: rule.span,
            });
        }
    }

    /// The rule of each fluent f kept by `intDurGreater`: f holds where `f_all` has held for
    /// the last D + 1 time points, a □ window. That is each interval longer than D less
    /// its first D time points (one still open at the end measured up to it). Each of f's
    /// intervals is so derived D time points after it starts, and `--mode rtec` writes it
    /// from its start ([`Translation::longer`]).
    ///
    /// f must be read by no rule and defined by those rules alone: a rule reading it at a
    /// time point would read it before it is known there, and its intervals are moved
    /// back as a whole.
    pub(super) fn check_longer(&mut self) {
        let longer = std::mem::take(&mut self.longer);
        for (i, l) in longer.iter().enumerate() {
            let rules = self.rules();
            let mut problem = (longer[..i].iter().find(|o| o.name == l.name))
                .map(|other| (other.span, "keeps it by another duration"));
            for rule in rules {
                if problem.is_some() {
                    break;
                }
                if rule.head.predicate.name == l.name {
                    problem = Some((rule.span, "defines it"));
                } else if (rule.body.iter().flat_map(ast::Literal::atoms))
                    .any(|a| a.predicate.name == l.name)
                {
                    problem = Some((rule.span, "reads it"));
                }
            }
            if let Some((at, what)) = problem {
                self.out.diagnostics.push(
                    Diagnostic::error(
                        Code::E507,
                        format!("`{}` keeps intervals by their duration (intDurGreater), and another rule {what}: not supported yet", l.name),
                    )
                    .with_label(l.span, format!("each interval of `{}` is known only {} time points after it starts", l.name, l.duration))
                    .with_label(at, "here")
                    .with_note("a rule reads a fluent at each time point as the stream passes it; an interval longer than the duration is known to be one only later than its first time points"),
                );
                continue;
            }
            if longer[i + 1..].iter().any(|o| o.name == l.name) {
                continue;
            }
            let span = l.span;
            let args: Vec<ast::Expr> = (1..=l.arity)
                .map(|k| var(&format!("X{k}"), span))
                .chain(std::iter::once(var("V", span)))
                .collect();
            let time = var("T", span);
            let all = invented(&l.name, "_all");
            let body = (0..=l.duration)
                .map(|k| {
                    ast::Literal::Positive(atom(
                        all.clone(),
                        args.clone(),
                        at(&time, k, span),
                        span,
                    ))
                })
                .collect();
            self.emit(
                atom(l.name.clone(), args.clone(), time.clone(), span),
                body,
                span,
                format!("EC intDurGreater: the intervals longer than {} time points, each from {} time points after it starts", l.duration, l.duration),
            );
            self.out.longer.push((l.name.clone(), l.duration));
        }
    }
}

/// A fluent kept by `intDurGreater` ([`Generator::longer_than`]): its name, arity (less
/// the value), duration and rule.
pub(super) struct Longer {
    name: String,
    arity: usize,
    duration: u32,
    span: Span,
}

/// Where `cond` makes its list, if it reads the list of intervals `name`.
fn reading(cond: &IntervalCond, name: &str) -> Option<Span> {
    let (reads, out) = match cond {
        IntervalCond::Union { inputs, out }
        | IntervalCond::Intersect { inputs, out }
        | IntervalCond::Complement { inputs, out } => (inputs.iter().any(|i| i.text == name), out),
        IntervalCond::RelativeComplement {
            base,
            subtract,
            out,
        } => (
            base.text == name || subtract.iter().any(|i| i.text == name),
            out,
        ),
        IntervalCond::LongerThan { input, out, .. } => (input.text == name, out),
        _ => return None,
    };
    reads.then_some(out.span)
}

/// `intDurGreater`'s result `out`, read by another interval operation of its rule at `at`.
fn longer_read_again(at: Span, out: &str) -> Diagnostic {
    Diagnostic::error(
        Code::E507,
        format!("the intervals `{out}` that `intDurGreater` keeps are read again: not supported yet"),
    )
    .with_label(at, "read here")
    .with_note("an interval is known to be longer than the duration only that long after it starts; `intDurGreater` is read as the last operation of its holdsFor rule")
}
