//! The reference evaluator: the oracle every other evaluation path is tested against.
//!
//! Deliberately simple and single-threaded, straight from the perfect-model semantics:
//! for each time point t in order, for each stratum of the incremental stratification in
//! order, evaluate the stratum's rules to a fixpoint (semi-naive when the stratum is
//! recursive at offset 0) over hash sets of tuples. Atoms at offset k read the facts of
//! t − k, which are complete; negation reads lower strata (offset 0) or the past.
//!
//! Memory is bounded by the forgetting horizon (Proposition 1): only the last
//! max k_p + 1 time points are kept, whatever the stream length.
//!
//! Time points before the first evaluated one do not exist: an atom read before the start
//! of the timeline has no facts.

use std::collections::VecDeque;

use hashbrown::HashSet;

use crate::ir::{Atom, Expr, Literal, PredId, Program, Term, VarId};
use crate::stratify::Analysis;
use crate::syntax::ast::{ArithOp, CmpOp};
use crate::value::Value;

/// A fact's object arguments.
pub type Tuple = Box<[Value]>;

/// An evaluator steps through consecutive time points.
pub trait Evaluator {
    /// Evaluates time point `t` (the first call may use any `t`; later calls must use the
    /// next time point) with the input facts that hold at `t`, and appends to `out` the
    /// facts of `outputs` that hold at `t`.
    fn step(
        &mut self,
        t: u64,
        input: Vec<(PredId, Tuple)>,
        outputs: &[PredId],
        out: &mut Vec<(PredId, Tuple)>,
    );
}

type Relation = HashSet<Tuple>;

/// The facts of one time point, per predicate.
type Slot = Vec<Relation>;

#[derive(Debug)]
pub struct Reference {
    rules: Vec<RulePlan>,
    /// Rule indices per stratum, in evaluation order, with whether the stratum recurses.
    strata: Vec<(Vec<usize>, bool)>,
    predicates: usize,
    /// The last `max_horizon + 1` time points, oldest first.
    history: VecDeque<Slot>,
    keep: usize,
    current: Option<u64>,
}

/// A rule with its body reordered so that each literal's inputs are bound when reached.
#[derive(Debug)]
struct RulePlan {
    head: Atom,
    body: Vec<Literal>,
    vars: usize,
    /// Body positions of offset-0 atoms of the rule's own stratum (semi-naive deltas).
    recursive: Vec<usize>,
}

impl Reference {
    pub fn new(program: &Program, analysis: &Analysis) -> Reference {
        let rules = program
            .rules
            .iter()
            .map(|rule| {
                let body = order_body(&rule.body, rule.vars.len());
                let stratum = analysis.stratum_of[rule.head.pred];
                let recursive = body
                    .iter()
                    .enumerate()
                    .filter_map(|(i, literal)| match literal {
                        Literal::Positive(atom)
                            if atom.offset == 0
                                && stratum.is_some()
                                && analysis.stratum_of[atom.pred] == stratum =>
                        {
                            Some(i)
                        }
                        _ => None,
                    })
                    .collect();
                RulePlan {
                    head: rule.head.clone(),
                    body,
                    vars: rule.vars.len(),
                    recursive,
                }
            })
            .collect();
        let strata = analysis
            .strata
            .iter()
            .map(|s| (s.rules.clone(), s.recursive))
            .collect();
        let keep = analysis.max_horizon as usize + 1;
        Reference {
            rules,
            strata,
            predicates: program.predicates.len(),
            history: VecDeque::with_capacity(keep),
            keep,
            current: None,
        }
    }

    /// The facts of `pred` at `time`, if that time point is still in memory.
    fn relation(&self, pred: PredId, time: u64) -> Option<&Relation> {
        let current = self.current?;
        let back = usize::try_from(current.checked_sub(time)?).ok()?;
        let index = self.history.len().checked_sub(1 + back)?;
        self.history.get(index)?.get(pred)
    }

    /// Evaluates one rule; `delta` replaces the relation at body position `delta.0`.
    fn fire(
        &self,
        rule: &RulePlan,
        t: u64,
        delta: Option<(usize, &Relation)>,
        out: &mut Vec<Tuple>,
    ) {
        let mut env: Vec<Option<Value>> = vec![None; rule.vars];
        self.join(rule, 0, t, delta, &mut env, out);
    }

    fn join(
        &self,
        rule: &RulePlan,
        position: usize,
        t: u64,
        delta: Option<(usize, &Relation)>,
        env: &mut Vec<Option<Value>>,
        out: &mut Vec<Tuple>,
    ) {
        let Some(literal) = rule.body.get(position) else {
            let head: Option<Tuple> = rule
                .head
                .args
                .iter()
                .map(|term| match term {
                    Term::Var(v) => env[*v],
                    Term::Const(value) => Some(*value),
                    Term::Wildcard => None,
                })
                .collect();
            if let Some(head) = head {
                out.push(head);
            }
            return;
        };
        match literal {
            Literal::Positive(atom) => {
                let relation = match delta {
                    Some((at, relation)) if at == position => Some(relation),
                    _ => t
                        .checked_sub(u64::from(atom.offset))
                        .and_then(|time| self.relation(atom.pred, time)),
                };
                let Some(relation) = relation else { return };
                // Every argument bound: one lookup instead of a scan.
                if let Some(tuple) = bound_tuple(&atom.args, env) {
                    if relation.contains(&tuple) {
                        self.join(rule, position + 1, t, delta, env, out);
                    }
                    return;
                }
                let mut newly_bound: Vec<VarId> = Vec::with_capacity(atom.args.len());
                for tuple in relation {
                    if unify(&atom.args, tuple, env, &mut newly_bound) {
                        self.join(rule, position + 1, t, delta, env, out);
                    }
                    for v in newly_bound.drain(..) {
                        env[v] = None;
                    }
                }
            }
            Literal::Negative(atom) => {
                let found = t
                    .checked_sub(u64::from(atom.offset))
                    .and_then(|time| self.relation(atom.pred, time))
                    .is_some_and(|relation| matches_any(&atom.args, relation, env));
                if !found {
                    self.join(rule, position + 1, t, delta, env, out);
                }
            }
            Literal::Compare { op, lhs, rhs, .. } => {
                if let (Some(a), Some(b)) = (eval(lhs, env, t), eval(rhs, env, t)) {
                    if compare(*op, a, b) {
                        self.join(rule, position + 1, t, delta, env, out);
                    }
                }
            }
            Literal::Assign { var, expr, .. } => {
                if let Some(value) = eval(expr, env, t) {
                    let previous = env[*var].replace(value);
                    self.join(rule, position + 1, t, delta, env, out);
                    env[*var] = previous;
                }
            }
        }
    }

    fn evaluate_stratum(&mut self, rules: &[usize], recursive: bool, t: u64) {
        let mut derived: Vec<(PredId, Tuple)> = Vec::new();
        for &r in rules {
            let rule = &self.rules[r];
            let mut out = Vec::new();
            self.fire(rule, t, None, &mut out);
            derived.extend(out.into_iter().map(|tuple| (rule.head.pred, tuple)));
        }
        let mut delta = self.insert_new(derived);
        while recursive && delta.iter().any(|relation| !relation.is_empty()) {
            let mut derived = Vec::new();
            for &r in rules {
                let rule = &self.rules[r];
                for &position in &rule.recursive {
                    let Literal::Positive(atom) = &rule.body[position] else {
                        continue;
                    };
                    let Some(changed) = delta.get(atom.pred).filter(|d| !d.is_empty()) else {
                        continue;
                    };
                    let mut out = Vec::new();
                    self.fire(rule, t, Some((position, changed)), &mut out);
                    derived.extend(out.into_iter().map(|tuple| (rule.head.pred, tuple)));
                }
            }
            delta = self.insert_new(derived);
        }
    }

    /// Adds facts to the current time point; returns those that were new, per predicate.
    fn insert_new(&mut self, facts: Vec<(PredId, Tuple)>) -> Vec<Relation> {
        let mut delta: Vec<Relation> = vec![Relation::new(); self.predicates];
        let Some(slot) = self.history.back_mut() else {
            return delta;
        };
        for (pred, tuple) in facts {
            if slot[pred].insert(tuple.clone()) {
                delta[pred].insert(tuple);
            }
        }
        delta
    }
}

impl Evaluator for Reference {
    fn step(
        &mut self,
        t: u64,
        input: Vec<(PredId, Tuple)>,
        outputs: &[PredId],
        out: &mut Vec<(PredId, Tuple)>,
    ) {
        debug_assert!(
            self.current.is_none_or(|c| c + 1 == t),
            "time points must be consecutive"
        );
        self.current = Some(t);
        if self.history.len() == self.keep {
            // Reuse the oldest slot's allocations for the new time point.
            let mut slot = self.history.pop_front().unwrap_or_default();
            slot.iter_mut().for_each(Relation::clear);
            self.history.push_back(slot);
        } else {
            self.history
                .push_back(vec![Relation::new(); self.predicates]);
        }
        self.insert_new(input);
        for s in 0..self.strata.len() {
            let (rules, recursive) = std::mem::take(&mut self.strata[s]);
            self.evaluate_stratum(&rules, recursive, t);
            self.strata[s] = (rules, recursive);
        }
        if let Some(slot) = self.history.back() {
            for &pred in outputs {
                out.extend(slot[pred].iter().map(|tuple| (pred, tuple.clone())));
            }
        }
    }
}

/// Orders a body so that every negation, comparison and assignment comes right after the
/// atoms that bind its inputs, and atoms sharing bound variables come early.
fn order_body(body: &[Literal], vars: usize) -> Vec<Literal> {
    let mut bound = vec![false; vars];
    let mut remaining: Vec<&Literal> = body.iter().collect();
    let mut ordered = Vec::with_capacity(body.len());
    let inputs_bound = |literal: &Literal, bound: &[bool]| -> bool {
        let mut needed = Vec::new();
        match literal {
            Literal::Negative(atom) => needed.extend(atom.args.iter().filter_map(var_of)),
            Literal::Compare { lhs, rhs, .. } => {
                lhs.vars(&mut needed);
                rhs.vars(&mut needed);
            }
            Literal::Assign { expr, .. } => expr.vars(&mut needed),
            Literal::Positive(_) => return true,
        }
        needed.iter().all(|&v| bound[v])
    };
    while !remaining.is_empty() {
        let filter = remaining
            .iter()
            .position(|l| !matches!(l, Literal::Positive(_)) && inputs_bound(l, &bound));
        let pick = filter.unwrap_or_else(|| {
            // The positive atom with the most bound variables (ties: written order).
            remaining
                .iter()
                .enumerate()
                .filter(|(_, l)| matches!(l, Literal::Positive(_)))
                .max_by_key(|(i, l)| {
                    let bound_args = l.atom().map_or(0, |a| {
                        a.args
                            .iter()
                            .filter_map(var_of)
                            .filter(|&v| bound[v])
                            .count()
                    });
                    (bound_args, std::cmp::Reverse(*i))
                })
                .map_or(0, |(i, _)| i)
        });
        let literal = remaining.remove(pick);
        match literal {
            Literal::Positive(atom) => atom
                .args
                .iter()
                .filter_map(var_of)
                .for_each(|v| bound[v] = true),
            Literal::Assign { var, .. } => bound[*var] = true,
            _ => {}
        }
        ordered.push(literal.clone());
    }
    ordered
}

fn var_of(term: &Term) -> Option<VarId> {
    match term {
        Term::Var(v) => Some(*v),
        _ => None,
    }
}

/// Matches `tuple` against `args`, binding unbound variables (recorded in `newly_bound`).
fn unify(
    args: &[Term],
    tuple: &[Value],
    env: &mut [Option<Value>],
    newly_bound: &mut Vec<VarId>,
) -> bool {
    if args.len() != tuple.len() {
        return false;
    }
    for (term, &value) in args.iter().zip(tuple) {
        match term {
            Term::Const(c) if *c != value => return false,
            Term::Var(v) => match env[*v] {
                Some(bound) if bound != value => return false,
                Some(_) => {}
                None => {
                    env[*v] = Some(value);
                    newly_bound.push(*v);
                }
            },
            _ => {}
        }
    }
    true
}

/// The tuple `args` denote under `env`, when every argument is bound.
fn bound_tuple(args: &[Term], env: &[Option<Value>]) -> Option<Tuple> {
    args.iter()
        .map(|term| match term {
            Term::Var(v) => env[*v],
            Term::Const(c) => Some(*c),
            Term::Wildcard => None,
        })
        .collect()
}

/// Whether some tuple of `relation` matches `args` under `env` (`_` matches anything).
fn matches_any(args: &[Term], relation: &Relation, env: &[Option<Value>]) -> bool {
    match bound_tuple(args, env) {
        Some(tuple) => relation.contains(&tuple),
        None => relation.iter().any(|tuple| {
            args.iter()
                .zip(tuple.iter())
                .all(|(term, value)| match term {
                    Term::Var(v) => env[*v] == Some(*value),
                    Term::Const(c) => c == value,
                    Term::Wildcard => true,
                })
        }),
    }
}

/// Evaluates an expression; `None` when an input is unbound, not a number, or the
/// arithmetic fails (overflow, division by zero).
pub fn eval(expr: &Expr, env: &[Option<Value>], t: u64) -> Option<Value> {
    match expr {
        Expr::Var(v) => env.get(*v).copied().flatten(),
        Expr::Time => i64::try_from(t).ok().map(Value::Int),
        Expr::Const(value) => Some(*value),
        Expr::Binary(op, lhs, rhs) => arith(*op, eval(lhs, env, t)?, eval(rhs, env, t)?),
    }
}

/// `+ - * /` over numbers: integers stay integers (checked; division truncates), anything
/// with a float is a float.
pub fn arith(op: ArithOp, a: Value, b: Value) -> Option<Value> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => match op {
            ArithOp::Add => x.checked_add(y),
            ArithOp::Sub => x.checked_sub(y),
            ArithOp::Mul => x.checked_mul(y),
            ArithOp::Div => x.checked_div(y),
        }
        .map(Value::Int),
        (Value::Sym(_), _) | (_, Value::Sym(_)) => None,
        (a, b) => {
            let (x, y) = (to_f64(a)?, to_f64(b)?);
            let result = match op {
                ArithOp::Add => x + y,
                ArithOp::Sub => x - y,
                ArithOp::Mul => x * y,
                ArithOp::Div => x / y,
            };
            result.is_finite().then_some(Value::Float(result))
        }
    }
}

fn to_f64(value: Value) -> Option<f64> {
    match value {
        Value::Int(i) => Some(i as f64),
        Value::Float(f) => Some(f),
        Value::Sym(_) => None,
    }
}

/// The comparison built-ins: numeric across ints and floats, text order between symbols;
/// values of different kinds are unequal and unordered.
pub fn compare(op: CmpOp, a: Value, b: Value) -> bool {
    use std::cmp::Ordering::{Equal, Greater, Less};
    if let (Value::Sym(x), Value::Sym(y)) = (a, b) {
        if matches!(op, CmpOp::Eq | CmpOp::Ne) {
            return (x == y) == (op == CmpOp::Eq);
        }
    }
    let ordering = a.compare(b);
    match op {
        CmpOp::Eq => ordering == Some(Equal),
        CmpOp::Ne => ordering != Some(Equal),
        CmpOp::Lt => ordering == Some(Less),
        CmpOp::Le => matches!(ordering, Some(Less | Equal)),
        CmpOp::Gt => ordering == Some(Greater),
        CmpOp::Ge => matches!(ordering, Some(Greater | Equal)),
    }
}
