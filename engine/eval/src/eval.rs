//! Rule evaluation shared by every evaluator that steps through time points itself (the
//! reference evaluator, the dataflow engine's temporal-SCC operator): body planning,
//! nested-loop joins over hash sets with lookups for fully bound atoms, semi-naive
//! stratum fixpoints, and the built-ins' semantics.

use hashbrown::{HashMap, HashSet};

use stgflow_lang::ir::{
    Atom, Expr, Literal, PredId, Program, Rule, Term, VarId, constants, has_constants,
};
use stgflow_lang::stratify::Analysis;
use stgflow_lang::syntax::ast::{ArithOp, CmpOp, Func};
use stgflow_lang::value::{Row, Value};

/// The facts of one predicate at one time point.
pub type Relation = HashSet<Row>;

/// A set of tuples as rules read it.
pub trait Rows {
    fn contains_row(&self, tuple: &[Value]) -> bool;
    fn rows(&self) -> impl Iterator<Item = &[Value]>;
}

impl Rows for Relation {
    fn contains_row(&self, tuple: &[Value]) -> bool {
        self.contains(tuple)
    }

    fn rows(&self) -> impl Iterator<Item = &[Value]> {
        self.iter().map(|t| &t[..])
    }
}

/// A set of tuples kept in a vector while it is small — no hashing, no table — and in a
/// hash set once it holds more than [`SMALL_LIMIT`]: the relations of one key at one time
/// point in the time-stepping operator, which mostly hold none, one or two facts, but can
/// hold many (a component without a key has all its facts under one).
#[derive(Clone, Debug, Default)]
pub struct SmallRelation {
    list: smallvec::SmallVec<[Row; 1]>,
    /// Boxed: a relation this small is mostly a field of a key's state, whose size
    /// decides how many cache lines the key costs.
    set: Option<Box<Relation>>,
}

/// Most tuples a [`SmallRelation`] keeps in its vector.
pub const SMALL_LIMIT: usize = 16;

impl SmallRelation {
    /// Empties the relation; one that has gone over to a hash set keeps it, with its
    /// table, for the time points it is refilled at.
    pub fn clear(&mut self) {
        self.list.clear();
        if let Some(set) = &mut self.set {
            set.clear();
        }
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty() && self.set.as_ref().is_none_or(|set| set.is_empty())
    }

    /// Adds `tuple`; whether it is new. Once the relation has a hash set, everything goes
    /// there and the vector stays empty.
    pub fn insert(&mut self, tuple: Row) -> bool {
        if let Some(set) = &mut self.set {
            return set.insert(tuple);
        }
        if self.contains_row(&tuple) {
            return false;
        }
        if self.list.len() < SMALL_LIMIT {
            self.list.push(tuple);
        } else {
            let mut set: Relation = self.list.drain(..).collect();
            set.insert(tuple);
            self.set = Some(Box::new(set));
        }
        true
    }

    /// Removes `tuple`; whether it was there.
    pub fn remove(&mut self, tuple: &[Value]) -> bool {
        if let Some(set) = &mut self.set {
            return set.remove(tuple);
        }
        match self.list.iter().position(|t| t[..] == *tuple) {
            Some(i) => {
                self.list.swap_remove(i);
                true
            }
            None => false,
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &Row> {
        match &self.set {
            Some(set) => SmallRows::Set(set.iter()),
            None => SmallRows::List(self.list.iter()),
        }
    }
}

impl Rows for SmallRelation {
    fn contains_row(&self, tuple: &[Value]) -> bool {
        match &self.set {
            Some(set) => set.contains(tuple),
            None => self.list.iter().any(|t| t[..] == *tuple),
        }
    }

    fn rows(&self) -> impl Iterator<Item = &[Value]> {
        self.iter().map(|t| &t[..])
    }
}

/// The rows of a [`SmallRelation`]: its vector's, or once it has a hash set, the set's
/// (the vector is then empty): one of the two, not a chain of both, which cost a check of
/// both sides per row on the hot paths.
enum SmallRows<'a> {
    List(std::slice::Iter<'a, Row>),
    Set(hashbrown::hash_set::Iter<'a, Row>),
}

impl<'a> Iterator for SmallRows<'a> {
    type Item = &'a Row;

    fn next(&mut self) -> Option<&'a Row> {
        match self {
            SmallRows::List(rows) => rows.next(),
            SmallRows::Set(rows) => rows.next(),
        }
    }
}

/// Where rules read facts from and write the facts they derive.
pub trait Facts {
    type Relation: Rows;
    /// The facts of `pred` at `time`; `None` when there are none (or the time point does
    /// not exist).
    fn relation(&self, pred: PredId, time: u64) -> Option<&Self::Relation>;
    /// Adds a fact of `pred` at the time point being evaluated; whether it is new.
    fn insert(&mut self, pred: PredId, tuple: Row) -> bool;
}

/// The strata a per-time-point evaluator runs in order: each stratum's rules (by index)
/// and whether they recurse at offset 0.
pub type Strata = Vec<(Vec<usize>, bool)>;

/// Every rule of `program` planned (its recursive atoms those of its own stratum), and the
/// strata of `analysis` in order: what the reference evaluator and `explain` evaluate.
pub fn stratified_plans(program: &Program, analysis: &Analysis) -> (Vec<RulePlan>, Strata) {
    let plans = program
        .rules
        .iter()
        .map(|rule| {
            let stratum = analysis.stratum_of[rule.head.pred];
            RulePlan::new(rule, |p| {
                stratum.is_some() && analysis.stratum_of[p] == stratum
            })
        })
        .collect();
    let strata = analysis
        .strata
        .iter()
        .map(|s| (s.rules.clone(), s.recursive))
        .collect();
    (plans, strata)
}

/// A rule with its body reordered so that each literal's inputs are bound when reached.
#[derive(Clone, Debug)]
pub struct RulePlan {
    pub head: Atom,
    pub body: Vec<Literal>,
    vars: usize,
    /// Body positions of offset-0 atoms of the rule's own stratum (semi-naive deltas).
    recursive: Vec<usize>,
    /// A counting rule's plan (`ir::Rule::count`).
    count: Option<CountPlan>,
    /// The constants of the first body literal, when it is a positive atom: (position,
    /// value).
    first_constants: Vec<(usize, Value)>,
}

/// Most facts [`RulePlan::fire`] looks through for one that matches its first atom's
/// constants before it makes the bindings (a larger relation goes to the join).
const FIRST_ATOM_LOOK: usize = 8;

/// How a counting rule's bindings become its head facts: each binding gives `terms` (the
/// head's terms but the result, then the counted variables); the distinct such tuples
/// are counted per head prefix, and the count goes where the head has the result.
#[derive(Clone, Debug)]
struct CountPlan {
    terms: Vec<Term>,
    result: VarId,
    counted: usize,
}

impl CountPlan {
    fn new(rule: &Rule) -> Option<CountPlan> {
        let count = rule.count.as_ref()?;
        let mut terms: Vec<Term> = (rule.head.args.iter())
            .filter(|t| **t != Term::Var(count.result))
            .cloned()
            .collect();
        terms.extend(count.counted.iter().map(|&v| Term::Var(v)));
        Some(CountPlan {
            terms,
            result: count.result,
            counted: count.counted.len(),
        })
    }

    /// The head facts of the bindings' tuples `rows` (each `terms` under one binding).
    fn heads(&self, head: &[Term], distinct: &HashSet<Row>, out: &mut Vec<Row>) {
        let mut counts: HashMap<Row, i64> = HashMap::new();
        for row in distinct {
            let group = &row[..row.len() - self.counted];
            match counts.get_mut(group) {
                Some(n) => *n += 1,
                None => {
                    counts.insert(Row::from_slice(group), 1);
                }
            }
        }
        for (group, n) in counts {
            let mut rest = group.iter();
            let fact = (head.iter())
                .map(|term| match term {
                    Term::Var(v) if *v == self.result => Some(Value::Int(n)),
                    _ => rest.next().copied(),
                })
                .collect::<Option<Row>>();
            out.extend(fact);
        }
    }
}

/// The head facts of a counting rule from its bindings' tuples (see [`CountPlan`]); for
/// evaluators with joins of their own (the STG interpreter). `None` when `rule` does not
/// count.
pub fn count_heads(rule: &Rule, rows: impl Iterator<Item = Row>, out: &mut Vec<Row>) -> Option<()> {
    let plan = CountPlan::new(rule)?;
    plan.heads(&rule.head.args, &rows.collect(), out);
    Some(())
}

/// The terms a counting rule's join produces per binding (see [`CountPlan`]); the head's
/// arguments for any other rule.
pub fn binding_terms(rule: &Rule) -> Vec<Term> {
    CountPlan::new(rule).map_or_else(|| rule.head.args.clone(), |plan| plan.terms)
}

impl RulePlan {
    /// Plans `rule`; `same_stratum(p)` says whether an offset-0 atom of `p` is recursive.
    pub fn new(rule: &Rule, same_stratum: impl Fn(PredId) -> bool) -> RulePlan {
        let body = order_body(&rule.body, rule.vars.len());
        let recursive = body
            .iter()
            .enumerate()
            .filter_map(|(i, literal)| match literal {
                Literal::Positive(atom) if atom.offset == 0 && same_stratum(atom.pred) => Some(i),
                _ => None,
            })
            .collect();
        let first_constants = match body.first() {
            Some(Literal::Positive(atom)) => constants(&atom.args),
            _ => Vec::new(),
        };
        RulePlan {
            head: rule.head.clone(),
            body,
            vars: rule.vars.len(),
            recursive,
            count: CountPlan::new(rule),
            first_constants,
        }
    }

    /// Derives the rule's head facts at `t`; `delta` replaces the relation read at one body
    /// position (semi-naive).
    pub fn fire(
        &self,
        t: u64,
        delta: Option<(usize, &Relation)>,
        facts: &impl Facts,
        out: &mut Vec<Row>,
    ) {
        // A first positive atom without a matching fact derives nothing: return before the
        // bindings are made (an evaluator that tries every rule of a stratum for one key,
        // as the time-stepping operator does, meets this for most rules: EC's keep rule
        // for each value finds the key's one fact, of another value). A relation of more
        // than a few facts goes to the join.
        if let (Some(Literal::Positive(atom)), None) = (self.body.first(), &self.count) {
            let from_delta = delta.is_some_and(|(at, _)| at == 0);
            let none = || {
                t.checked_sub(u64::from(atom.offset))
                    .and_then(|time| facts.relation(atom.pred, time))
                    .is_none_or(|relation| {
                        let mut rows = relation.rows();
                        (rows.by_ref().take(FIRST_ATOM_LOOK))
                            .all(|row| !has_constants(row, &self.first_constants))
                            && rows.next().is_none()
                    })
            };
            if !from_delta && none() {
                return;
            }
        }
        let mut env: Env = smallvec::smallvec![None; self.vars];
        let start = out.len();
        let mut firing = Firing {
            t,
            delta,
            facts,
            out,
        };
        self.join(0, &mut firing, &mut env);
        if let Some(count) = &self.count {
            // The counted atoms come from lower strata or the past: the count is complete.
            let distinct: HashSet<Row> = out.drain(start..).collect();
            count.heads(&self.head.args, &distinct, out);
        }
    }

    fn join<F: Facts>(
        &self,
        position: usize,
        firing: &mut Firing<'_, F>,
        env: &mut [Option<Value>],
    ) {
        let Some(literal) = self.body.get(position) else {
            let terms = self.count.as_ref().map_or(&self.head.args, |c| &c.terms);
            if let Some(head) = bound_tuple(terms, env) {
                firing.out.push(head);
            }
            return;
        };
        let (t, facts) = (firing.t, firing.facts);
        let at = |atom: &Atom| {
            t.checked_sub(u64::from(atom.offset))
                .and_then(|time| facts.relation(atom.pred, time))
        };
        match literal {
            Literal::Positive(atom) => match firing.delta {
                Some((delta_at, relation)) if delta_at == position => {
                    self.scan(atom, relation, position, firing, env);
                }
                _ => {
                    if let Some(relation) = at(atom) {
                        self.scan(atom, relation, position, firing, env);
                    }
                }
            },
            Literal::Negative(_) => {
                // The negations in a row at once. Where one reads the same atom as the one
                // before from the same relation (a deadline's `not f_t(X, T-k)` for every
                // k inside one run of a key's facts), its answer is that one's.
                let mut next = position;
                let mut before: Option<(&[Term], &F::Relation)> = None;
                while let Some(Literal::Negative(atom)) = self.body.get(next) {
                    next += 1;
                    let Some(relation) = at(atom) else {
                        before = None;
                        continue;
                    };
                    let repeated = before.is_some_and(|(args, checked)| {
                        std::ptr::eq(checked, relation) && args == atom.args.as_slice()
                    });
                    if !repeated && matches_any(&atom.args, relation, env) {
                        return;
                    }
                    before = Some((&atom.args, relation));
                }
                self.join(next, firing, env);
            }
            Literal::Compare { op, lhs, rhs, .. } => {
                if let (Some(a), Some(b)) = (eval(lhs, env, t), eval(rhs, env, t)) {
                    if compare(*op, a, b) {
                        self.join(position + 1, firing, env);
                    }
                }
            }
            Literal::Assign { var, expr, .. } => {
                if let Some(value) = eval(expr, env, t) {
                    let previous = env[*var].replace(value);
                    self.join(position + 1, firing, env);
                    env[*var] = previous;
                }
            }
        }
    }

    /// Joins the positive atom at `position` with `relation`, then the rest of the body.
    fn scan<F: Facts>(
        &self,
        atom: &Atom,
        relation: &impl Rows,
        position: usize,
        firing: &mut Firing<'_, F>,
        env: &mut [Option<Value>],
    ) {
        // Every argument bound: one lookup instead of a scan.
        if let Some(found) = with_bound(&atom.args, env, |tuple| relation.contains_row(tuple)) {
            if found {
                self.join(position + 1, firing, env);
            }
            return;
        }
        let mut newly_bound: smallvec::SmallVec<[VarId; 8]> = smallvec::SmallVec::new();
        for tuple in relation.rows() {
            if unify(&atom.args, tuple, env, &mut newly_bound) {
                self.join(position + 1, firing, env);
            }
            for v in newly_bound.drain(..) {
                env[v] = None;
            }
        }
    }
}

/// A rule's variable bindings.
type Env = smallvec::SmallVec<[Option<Value>; 8]>;

/// One firing of a rule: its time point, the semi-naive delta, where it reads facts and
/// where the head tuples go.
struct Firing<'a, F> {
    t: u64,
    delta: Option<(usize, &'a Relation)>,
    facts: &'a F,
    out: &'a mut Vec<Row>,
}

/// Evaluates the rules of one stratum at `t` to a fixpoint: one round of every rule, then,
/// when the stratum is recursive, semi-naive rounds that join each recursive atom against
/// the previous round's new facts.
pub fn evaluate_stratum(
    plans: &[RulePlan],
    rules: &[usize],
    recursive: bool,
    t: u64,
    facts: &mut impl Facts,
) {
    evaluate_stratum_with(plans, rules, recursive, t, facts, &mut Scratch::default());
}

/// Buffers [`evaluate_stratum_with`] reuses between calls.
#[derive(Debug, Default)]
pub struct Scratch {
    derived: Vec<(PredId, Row)>,
    out: Vec<Row>,
}

/// [`evaluate_stratum`] with its buffers kept in `scratch`: evaluators that
/// call it for many small evaluations (a key at a time) allocate nothing per call.
pub fn evaluate_stratum_with(
    plans: &[RulePlan],
    rules: &[usize],
    recursive: bool,
    t: u64,
    facts: &mut impl Facts,
    scratch: &mut Scratch,
) {
    let Scratch { derived, out } = scratch;
    derived.clear();
    for &r in rules {
        let plan = &plans[r];
        plan.fire(t, None, facts, out);
        derived.extend(out.drain(..).map(|tuple| (plan.head.pred, tuple)));
    }
    let mut delta = insert_new(facts, derived.drain(..), recursive);
    while !delta.is_empty() {
        for &r in rules {
            let plan = &plans[r];
            for &position in &plan.recursive {
                let Literal::Positive(atom) = &plan.body[position] else {
                    continue;
                };
                let Some(changed) = delta.get(&atom.pred) else {
                    continue;
                };
                plan.fire(t, Some((position, changed)), facts, out);
                derived.extend(out.drain(..).map(|tuple| (plan.head.pred, tuple)));
            }
        }
        delta = insert_new(facts, derived.drain(..), true);
    }
}

/// Inserts facts; returns the new ones per predicate when `track` (for the next round).
fn insert_new(
    facts: &mut impl Facts,
    derived: impl Iterator<Item = (PredId, Row)>,
    track: bool,
) -> HashMap<PredId, Relation> {
    let mut delta: HashMap<PredId, Relation> = HashMap::new();
    for (pred, tuple) in derived {
        if track {
            if facts.insert(pred, tuple.clone()) {
                delta.entry(pred).or_default().insert(tuple);
            }
        } else {
            facts.insert(pred, tuple);
        }
    }
    delta
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

/// Where [`unify`] records the variables it binds.
pub(crate) trait Bindings {
    fn bind(&mut self, var: VarId);
}

impl Bindings for Vec<VarId> {
    fn bind(&mut self, var: VarId) {
        self.push(var);
    }
}

impl<const N: usize> Bindings for smallvec::SmallVec<[VarId; N]> {
    fn bind(&mut self, var: VarId) {
        self.push(var);
    }
}

/// Matches `tuple` against `args`, binding unbound variables (recorded in `newly_bound`).
/// Shared by the STG interpreter and `explain`.
pub(crate) fn unify(
    args: &[Term],
    tuple: &[Value],
    env: &mut [Option<Value>],
    newly_bound: &mut impl Bindings,
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
                    newly_bound.bind(*v);
                }
            },
            _ => {}
        }
    }
    true
}

/// The tuple `args` denote under `env`, when every argument is bound.
fn bound_tuple(args: &[Term], env: &[Option<Value>]) -> Option<Row> {
    args.iter()
        .map(|term| match term {
            Term::Var(v) => env[*v],
            Term::Const(c) => Some(*c),
            Term::Wildcard => None,
        })
        .collect()
}

/// Calls `f` with the tuple `args` denote under `env`, when every argument is bound,
/// without allocating for up to 8 arguments (lookups on the hot path).
fn with_bound<R>(args: &[Term], env: &[Option<Value>], f: impl FnOnce(&[Value]) -> R) -> Option<R> {
    const INLINE: usize = 8;
    let value = |term: &Term| match term {
        Term::Var(v) => env[*v],
        Term::Const(c) => Some(*c),
        Term::Wildcard => None,
    };
    if args.len() <= INLINE {
        let mut buffer = [Value::Int(0); INLINE];
        for (slot, term) in buffer.iter_mut().zip(args) {
            *slot = value(term)?;
        }
        Some(f(&buffer[..args.len()]))
    } else {
        let tuple: Vec<Value> = args.iter().map(value).collect::<Option<_>>()?;
        Some(f(&tuple))
    }
}

/// Whether some tuple of `relation` matches `args` under `env` (`_` matches anything).
fn matches_any(args: &[Term], relation: &impl Rows, env: &[Option<Value>]) -> bool {
    match with_bound(args, env, |tuple| relation.contains_row(tuple)) {
        Some(found) => found,
        None => relation.rows().any(|tuple| {
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
        Expr::Call(func, args) => match args.as_slice() {
            [x] => call(*func, eval(x, env, t)?, None),
            [x, y] => call(*func, eval(x, env, t)?, Some(eval(y, env, t)?)),
            _ => None,
        },
    }
}

/// A function over numbers, as Prolog's arithmetic has it: `abs` keeps the kind, `floor`,
/// `ceiling`, `round` and `truncate` give integers (nothing where a float is past them),
/// `float` a float, `min` and `max` whichever argument is the smaller or larger.
pub fn call(func: Func, x: Value, y: Option<Value>) -> Option<Value> {
    // Both bounds are exact in f64; the upper one is excluded.
    let integer = |f: f64| -> Option<Value> {
        (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0)
            .contains(&f)
            .then_some(Value::Int(f as i64))
    };
    match (func, x, y) {
        (_, Value::Sym(_), _) | (_, _, Some(Value::Sym(_))) => None,
        (Func::Min | Func::Max, x, Some(y)) => {
            let ordering = x.compare(y)?;
            let take_x = match func {
                Func::Min => ordering.is_le(),
                _ => ordering.is_ge(),
            };
            Some(if take_x { x } else { y })
        }
        (_, _, Some(_)) | (Func::Min | Func::Max, _, None) => None,
        (Func::Abs, Value::Int(i), _) => i.checked_abs().map(Value::Int),
        (Func::Abs, Value::Float(f), _) => Some(Value::Float(f.abs())),
        (Func::Float, Value::Int(i), _) => Some(Value::Float(i as f64)),
        (Func::Float, Value::Float(f), _) => Some(Value::Float(f)),
        (_, Value::Int(i), _) => Some(Value::Int(i)),
        (Func::Floor, Value::Float(f), _) => integer(f.floor()),
        (Func::Ceiling, Value::Float(f), _) => integer(f.ceil()),
        (Func::Round, Value::Float(f), _) => integer(f.round()),
        (Func::Truncate, Value::Float(f), _) => integer(f.trunc()),
    }
}

/// `+ - * / mod` over numbers: integers stay integers (checked; division truncates, `mod`
/// takes the divisor's sign), anything with a float is a float (`mod` of floats is
/// undefined: nothing).
pub fn arith(op: ArithOp, a: Value, b: Value) -> Option<Value> {
    match (a, b) {
        (Value::Int(x), Value::Int(y)) => match op {
            ArithOp::Add => x.checked_add(y),
            ArithOp::Sub => x.checked_sub(y),
            ArithOp::Mul => x.checked_mul(y),
            ArithOp::Div => x.checked_div(y),
            ArithOp::Mod => x
                .checked_rem_euclid(y)
                .map(|r| if y < 0 && r != 0 { r + y } else { r }),
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
                ArithOp::Mod => return None,
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
