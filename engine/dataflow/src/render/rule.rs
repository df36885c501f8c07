//! One rule as a dataflow: its positive atoms joined on shared variables, negations as
//! antijoins, comparisons and assignments, the head projected.
//!
//! **One pass per record.** Binding an atom's row, comparisons, assignments, join keys and
//! the head projection are collected per rule ([`Pending`]) and done in one `flat_map`
//! before the next join or at the end; each predicate is read (delayed, entered) and keyed
//! once per scope ([`Reader`]) and shared by the rules that need it.

use differential_dataflow::VecCollection;

use super::Time;
use crate::operators::{Coll, Keyed, records};
use stgflow_eval::eval::{RulePlan, arith, call, compare};
use stgflow_lang::ir::{Atom, Expr, Literal, PredId, Rule, Term, VarId};
use stgflow_lang::value::{Row, Value};

/// Renders one rule: joins its positive atoms on shared variables, filters by negations
/// (antijoins), comparisons and assignments, and projects the head.
///
/// Work on one record at a time — binding the first atom's row, comparisons, assignments,
/// computing a join key, projecting the head — is not an operator each: it is collected
/// in a [`Pending`] and done in the one `flat_map` that comes before the next join or
/// antijoin, or at the end. A rule `q(X) :- p(X, Y), X > 3.` is a single `flat_map`.
///
/// Over 100 lines: one arm per kind of literal, in the order the body is planned.
pub(super) fn render_rule<'s, T: Time>(
    rule: &Rule,
    reader: &Reader<'_, 's, T>,
    unit: Coll<'s, T>,
) -> Coll<'s, T> {
    let mut plan = RulePlan::new(rule, |_| false);
    // Negations after every join: an antijoin keeps its left side and, where a negated
    // fact comes or goes, sends again everything under its key, so it should see the
    // joined bindings, which the atoms that change (a quote that holds) keep few, not
    // those of an atom that hardly does (EC's groundings of every pair of agents).
    plan.body
        .sort_by_key(|literal| matches!(literal, Literal::Negative(_)));
    let vars = rule.vars.len();
    let mut bound = vec![false; vars];
    let from_unit = || Pending {
        records: unit.clone(),
        start: Start::Unit,
        steps: Vec::new(),
    };
    let mut env: Option<Pending<'s, T>> = None;
    // Negations after one another that key the bindings alike are one antijoin against
    // all their facts (an EC deadline's `not s_t(X, T-1), …, not s_t(X, T-d)`): an
    // antijoin's keys are present while any of its facts holds.
    let mut merged = vec![false; plan.body.len()];
    for (i, pair) in plan.body.windows(2).enumerate() {
        if let [Literal::Negative(a), Literal::Negative(b)] = pair {
            merged[i + 1] = negation_key(a) == negation_key(b);
        }
    }
    for (i, literal) in plan.body.iter().enumerate() {
        if merged[i] {
            continue;
        }
        match literal {
            Literal::Positive(atom) => {
                let matcher = AtomMatcher::new(atom, &bound);
                env = Some(match env.take() {
                    None => Pending {
                        records: reader.collection(atom),
                        start: Start::Atom(atom.clone(), matcher),
                        steps: Vec::new(),
                    },
                    Some(pending) => {
                        let key: Vec<usize> = matcher.key.iter().map(|&(i, _)| i).collect();
                        // A join holds each side's values for as long as they hold: each
                        // keeps only what the key does not carry and the rest of the rule
                        // reads. The right side keeps values its atom binds (its key and
                        // constants are in the key and its filter already).
                        let mut sides = Sides::new(rule, &plan.body[i + 1..], &matcher, &bound);
                        let right_kept = sides.kept(&matcher.binds);
                        sides.right = right_kept.iter().map(|&(_, v)| v).collect();
                        let right = reader.keyed(atom, &matcher, key, positions(&right_kept));
                        // The rule's first atom, as read: join the two atoms' keyed rows,
                        // which other rules of the scope share. (The join key's variables
                        // were all bound by that atom.)
                        let plain = pending.plain_atom().and_then(|(first_atom, first)| {
                            let positions = matcher
                                .key
                                .iter()
                                .map(|&(_, v)| {
                                    first.binds.iter().find(|(_, w)| *w == v).map(|&(i, _)| i)
                                })
                                .collect::<Option<Vec<usize>>>()?;
                            Some((first_atom, first, positions))
                        });
                        let records = match plain {
                            Some((first_atom, first, first_key)) => {
                                let left_kept = sides.kept(&first.binds);
                                sides.left = left_kept.iter().map(|&(_, v)| v).collect();
                                let at = positions(&left_kept);
                                let left = reader.keyed(&first_atom, &first, first_key, at);
                                T::join_keyed(left, right, move |key, l, r| {
                                    Some(sides.bindings(key, l, r))
                                })
                            }
                            None => {
                                let (m1, left_of) = (matcher.clone(), sides.left_of());
                                let left = pending
                                    .flat_map(vars, move |e| Some((m1.env_key(&e), left_of(&e))));
                                T::join_keyed(left, right, move |key, l, r| {
                                    Some(sides.bindings(key, l, r))
                                })
                            }
                        };
                        Pending {
                            records,
                            start: Start::Env,
                            steps: Vec::new(),
                        }
                    }
                });
                for v in atom.args.iter().filter_map(var_of) {
                    bound[v] = true;
                }
            }
            Literal::Negative(atom) => {
                let matcher = AtomMatcher::new(atom, &bound);
                let current = env.take().unwrap_or_else(from_unit);
                let keyed = current.flat_map(vars, move |e| Some((matcher.env_key(&e), e)));
                let alike = (plan.body[i + 1..].iter().zip(&merged[i + 1..]))
                    .take_while(|(_, merged)| **merged)
                    .filter_map(|(literal, _)| match literal {
                        Literal::Negative(other) => Some(other),
                        _ => None,
                    });
                let mut blocked = std::iter::once(atom).chain(alike).map(|negated| {
                    let m = AtomMatcher::new(negated, &bound);
                    records::flat_map(reader.collection(negated), move |row| {
                        m.matches(&row).then(|| m.row_key(&row))
                    })
                });
                let first = blocked.next().expect("the negation itself");
                let rest: Vec<_> = blocked.collect();
                let blocked = match rest.is_empty() {
                    true => first,
                    false => first.concatenate(rest),
                };
                env = Some(Pending {
                    records: records::map(T::antijoin(keyed, blocked), |(_, e)| e),
                    start: Start::Env,
                    steps: Vec::new(),
                });
            }
            Literal::Compare { op, lhs, rhs, .. } => {
                let mut current = env.take().unwrap_or_else(from_unit);
                current
                    .steps
                    .push(Step::Compare(*op, lhs.clone(), rhs.clone()));
                env = Some(current);
            }
            Literal::Assign { var, expr, .. } => {
                let mut current = env.take().unwrap_or_else(from_unit);
                current.steps.push(Step::Assign(*var, expr.clone()));
                env = Some(current);
                bound[*var] = true;
            }
        }
    }
    let head: Vec<Term> = rule.head.args.clone();
    env.unwrap_or_else(from_unit).flat_map(vars, move |e| {
        Some(
            head.iter()
                .map(|term| match term {
                    Term::Var(v) => e[*v],
                    Term::Const(c) => *c,
                    Term::Wildcard => Value::Int(0),
                })
                .collect(),
        )
    })
}

/// Which rows a keyed collection of [`Reader::keyed`] holds and how it is keyed: those of
/// `pred` read at `offset` that match `constants` and `repeats`, keyed by the values at
/// `key`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct KeyedId {
    pred: PredId,
    offset: u32,
    key: Vec<usize>,
    constants: Vec<(usize, Value)>,
    repeats: Vec<(usize, usize)>,
    /// The positions each row is cut down to.
    projection: Vec<usize>,
}

/// What the rules of one scope read: each predicate at each offset is read (delayed,
/// entered) once, and each keyed version of it is built once and shared by every join
/// that needs it — the four `distance` rules of CAVIAR, which join `coord` with itself,
/// share one instead of building eight.
pub(super) struct Reader<'r, 's, T: Time> {
    source: &'r dyn Fn(&Atom) -> Coll<'s, T>,
    collections: std::cell::RefCell<hashbrown::HashMap<(PredId, u32), Coll<'s, T>>>,
    keyed: std::cell::RefCell<hashbrown::HashMap<KeyedId, Keyed<'s, T>>>,
}

impl<'r, 's, T: Time> Reader<'r, 's, T> {
    pub(super) fn new(source: &'r dyn Fn(&Atom) -> Coll<'s, T>) -> Self {
        Reader {
            source,
            collections: Default::default(),
            keyed: Default::default(),
        }
    }

    /// `atom`'s predicate read at its offset.
    fn collection(&self, atom: &Atom) -> Coll<'s, T> {
        self.collections
            .borrow_mut()
            .entry((atom.pred, atom.offset))
            .or_insert_with(|| (self.source)(atom))
            .clone()
    }

    /// The rows of `atom` that `matcher` accepts, keyed by the values at `key`, each cut
    /// down to the values at `projection`.
    fn keyed(
        &self,
        atom: &Atom,
        matcher: &AtomMatcher,
        key: Vec<usize>,
        projection: Vec<usize>,
    ) -> Keyed<'s, T> {
        let id = KeyedId {
            pred: atom.pred,
            offset: atom.offset,
            key,
            constants: matcher.constants.clone(),
            repeats: matcher.repeats.clone(),
            projection,
        };
        if let Some(keyed) = self.keyed.borrow().get(&id) {
            return keyed.clone();
        }
        let filter = AtomMatcher {
            key: Vec::new(),
            constants: id.constants.clone(),
            repeats: id.repeats.clone(),
            binds: Vec::new(),
        };
        let positions = id.key.clone();
        let projection = id.projection.clone();
        let keyed = records::flat_map(self.collection(atom), move |row| {
            filter.matches(&row).then(|| {
                let pick = |at: &[usize]| -> Row {
                    at.iter().filter_map(|&i| row.get(i).copied()).collect()
                };
                (pick(&positions), pick(&projection))
            })
        });
        self.keyed.borrow_mut().insert(id, keyed.clone());
        keyed
    }
}

/// Where a [`Pending`]'s records come from.
enum Start {
    /// The records are bindings already.
    Env,
    /// The records are rows of the rule's first atom, to bind into fresh bindings.
    Atom(Atom, AtomMatcher),
    /// The record is the unit row: fresh bindings, nothing bound.
    Unit,
}

/// Per-record work on bindings, done within one `flat_map`.
#[derive(Clone, Debug)]
enum Step {
    Compare(stgflow_lang::syntax::ast::CmpOp, Expr, Expr),
    Assign(VarId, Expr),
}

impl Step {
    /// Applies the step to `env`; false when the record is filtered out.
    fn apply(&self, env: &mut Row) -> bool {
        match self {
            Step::Compare(op, lhs, rhs) => match (eval_row(lhs, env), eval_row(rhs, env)) {
                (Some(a), Some(b)) => compare(*op, a, b),
                _ => false,
            },
            Step::Assign(var, expr) => match eval_row(expr, env) {
                Some(value) => {
                    env[*var] = value;
                    true
                }
                None => false,
            },
        }
    }
}

/// A rule's bindings so far: a collection, and the per-record work still to do on it.
struct Pending<'s, T: Time> {
    records: Coll<'s, T>,
    start: Start,
    steps: Vec<Step>,
}

impl<'s, T: Time> Pending<'s, T> {
    /// The rule's first atom and its matcher, when the records are still its rows as read.
    fn plain_atom(&self) -> Option<(Atom, AtomMatcher)> {
        match &self.start {
            Start::Atom(atom, matcher) if self.steps.is_empty() => {
                Some((atom.clone(), matcher.clone()))
            }
            _ => None,
        }
    }

    /// Does the pending work and then `out` on each record, in one `flat_map`.
    fn flat_map<X: differential_dataflow::Data>(
        self,
        vars: usize,
        out: impl Fn(Row) -> Option<X> + 'static,
    ) -> VecCollection<'s, T, X, isize> {
        let Pending {
            records,
            start,
            steps,
        } = self;
        records::flat_map(records, move |record| {
            let mut env = match &start {
                Start::Env => record,
                Start::Atom(_, matcher) => {
                    matcher.bind(&record, Row::filled(Value::Int(0), vars))?
                }
                Start::Unit => Row::filled(Value::Int(0), vars),
            };
            for step in &steps {
                if !step.apply(&mut env) {
                    return None;
                }
            }
            out(env)
        })
    }
}

fn var_of(term: &Term) -> Option<VarId> {
    match term {
        Term::Var(v) => Some(*v),
        _ => None,
    }
}

/// The variables a negated atom keys the bindings by, in order (all of its variables: a
/// negation reads bound ones only).
fn negation_key(atom: &Atom) -> Vec<VarId> {
    atom.args.iter().filter_map(var_of).collect()
}

/// How an atom's rows meet the bindings so far: which positions are keys (variables bound
/// before the atom), which must equal a constant or an earlier position, which bind.
#[derive(Clone, Debug)]
pub(crate) struct AtomMatcher {
    /// (position, variable) of variables bound before this atom: the join key.
    key: Vec<(usize, VarId)>,
    /// (position, constant).
    constants: Vec<(usize, Value)>,
    /// (position, earlier position) for variables repeated within the atom.
    repeats: Vec<(usize, usize)>,
    /// (position, variable) bound by this atom.
    binds: Vec<(usize, VarId)>,
}

impl AtomMatcher {
    pub(crate) fn new(atom: &Atom, bound: &[bool]) -> AtomMatcher {
        let mut matcher = AtomMatcher::nothing();
        for (position, term) in atom.args.iter().enumerate() {
            match term {
                Term::Const(c) => matcher.constants.push((position, *c)),
                Term::Wildcard => {}
                Term::Var(v) if bound[*v] => matcher.key.push((position, *v)),
                Term::Var(v) => match matcher.binds.iter().find(|(_, w)| w == v) {
                    Some(&(first, _)) => matcher.repeats.push((position, first)),
                    None => matcher.binds.push((position, *v)),
                },
            }
        }
        matcher
    }

    /// A matcher of no atom: every row matches.
    pub(crate) fn nothing() -> AtomMatcher {
        AtomMatcher {
            key: Vec::new(),
            constants: Vec::new(),
            repeats: Vec::new(),
            binds: Vec::new(),
        }
    }

    /// Whether `row` has the atom's constants and its repeated variables alike.
    pub(crate) fn matches(&self, row: &[Value]) -> bool {
        self.constants.iter().all(|&(i, c)| row.get(i) == Some(&c))
            && self.repeats.iter().all(|&(i, j)| row.get(i) == row.get(j))
    }

    fn row_key(&self, row: &[Value]) -> Row {
        self.key
            .iter()
            .filter_map(|&(i, _)| row.get(i).copied())
            .collect()
    }

    fn env_key(&self, env: &[Value]) -> Row {
        self.key.iter().map(|&(_, v)| env[v]).collect()
    }

    /// Binds the atom's new variables from `row` into `env` (after checking the row, and
    /// the key when there is no join).
    fn bind(&self, row: &[Value], mut env: Row) -> Option<Row> {
        if !self.matches(row) {
            return None;
        }
        for &(i, v) in &self.binds {
            env[v] = *row.get(i)?;
        }
        Some(env)
    }
}

/// Which variables of `rule` its head or the literals `rest` read: those a join's sides
/// must carry on.
fn read_after(rest: &[Literal], rule: &Rule) -> Vec<bool> {
    let mut read = vec![false; rule.vars.len()];
    let mut exprs = Vec::new();
    for literal in rest {
        match literal {
            Literal::Positive(atom) | Literal::Negative(atom) => {
                for v in atom.args.iter().filter_map(var_of) {
                    read[v] = true;
                }
            }
            Literal::Compare { lhs, rhs, .. } => {
                lhs.vars(&mut exprs);
                rhs.vars(&mut exprs);
            }
            Literal::Assign { expr, .. } => expr.vars(&mut exprs),
        }
    }
    for v in rule.head.args.iter().filter_map(var_of).chain(exprs) {
        read[v] = true;
    }
    read
}

/// The positions of `kept`.
fn positions(kept: &[(usize, VarId)]) -> Vec<usize> {
    kept.iter().map(|&(i, _)| i).collect()
}

/// What a join's key and the values each side keeps bind, and how they make the rule's
/// bindings again.
struct Sides {
    vars: usize,
    key: Vec<VarId>,
    left: Vec<VarId>,
    right: Vec<VarId>,
    /// Which variables the rest of the rule reads.
    after: Vec<bool>,
}

impl Sides {
    /// The sides of a join with `matcher`'s atom, before the literals `rest` of `rule`,
    /// the variables `bound` so far: the left side keeps the bindings so far that the key
    /// does not carry and the rest of the rule reads; the right side nothing yet.
    fn new(rule: &Rule, rest: &[Literal], matcher: &AtomMatcher, bound: &[bool]) -> Sides {
        let after = read_after(rest, rule);
        let key: Vec<VarId> = matcher.key.iter().map(|&(_, v)| v).collect();
        let left = (0..rule.vars.len())
            .filter(|&v| bound[v] && after[v] && !key.contains(&v))
            .collect();
        Sides {
            vars: rule.vars.len(),
            key,
            left,
            right: Vec::new(),
            after,
        }
    }

    /// Those of an atom's `binds` that the rest of the rule reads and the key does not
    /// carry.
    fn kept(&self, binds: &[(usize, VarId)]) -> Vec<(usize, VarId)> {
        (binds.iter())
            .filter(|&&(_, v)| self.after[v] && !self.key.contains(&v))
            .copied()
            .collect()
    }

    /// The left side's values of a binding.
    fn left_of(&self) -> impl Fn(&Row) -> Row + 'static {
        let left = self.left.clone();
        move |env| left.iter().map(|&v| env[v]).collect()
    }

    /// The bindings of a key and a value of each side; the variables nothing reads any
    /// more are left unbound.
    fn bindings(&self, key: &[Value], left: &[Value], right: &[Value]) -> Row {
        let mut env = Row::filled(Value::Int(0), self.vars);
        let pairs = (self.key.iter().zip(key))
            .chain(self.left.iter().zip(left))
            .chain(self.right.iter().zip(right));
        for (&v, &value) in pairs {
            env[v] = value;
        }
        env
    }
}

/// Evaluates an expression whose variables are bound in `env` (the time variable is never
/// used here: rules that read it run in the stepper).
fn eval_row(expr: &Expr, env: &[Value]) -> Option<Value> {
    match expr {
        Expr::Var(v) => env.get(*v).copied(),
        Expr::Time => None,
        Expr::Const(c) => Some(*c),
        Expr::Binary(op, lhs, rhs) => arith(*op, eval_row(lhs, env)?, eval_row(rhs, env)?),
        Expr::Call(func, args) => match args.as_slice() {
            [x] => call(*func, eval_row(x, env)?, None),
            [x, y] => call(*func, eval_row(x, env)?, Some(eval_row(y, env)?)),
            _ => None,
        },
    }
}
