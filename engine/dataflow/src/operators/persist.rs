//! The persistence operator: a temporal SCC of EC inertia's shape (see
//! [`crate::plan::PersistPlan`]) without evaluating its rules per time point.
//!
//! With S the facts the start rules derive at T (and the predicate's own input facts),
//! what holds at T is
//!
//! ```text
//! h(T)    = S(T) ∪ { x ∈ h(T-1) : some keep rule matches x and none of its negations
//!                                  finds a fact (term's at T-1, the others' at T-k) }
//! term(T) = what term's rules derive from h(T) and the facts outside at T
//! ```
//!
//! per key, from the key's input at T and its own state at T-1. So a key whose input did
//! not change at T and whose state did not change at T-1 keeps its state at T: it is not
//! touched. Nor is a key whose state changed at T-1 but which holds no terminated fact
//! there: with its input as it was, the same facts start, nothing stops and `term`
//! derives what it derived. And `term` is derived again only where the key's facts or
//! the input its rules read (not the start facts) changed. An inertia event costs two
//! hash lookups (its +1 at t and its −1 at t + 1) and three passes over its key's few
//! facts: at t (the old value terminated), t + 1 (the new value holds, the old one and
//! the termination go) and t + 2 (the start fact goes; the value persists).
//!
//! The terminating rule of the multi-valued form (`term(F, V, T) :- init(F, W, T),
//! h(F, V, T), V != W.`, [`Differs`]) is applied as a comparison of each held fact with
//! each fact of its slot; other terminating rules run through [`RulePlan`]. Where that
//! rule, one start rule from the same event a point back and one keep rule are all the
//! component has (EC's simple fluent as Algorithm 3 writes it), [`exclusive`] runs it in a
//! form of its own, with two evaluations per event and none of the general form's
//! bookkeeping.
//!
//! **Derived predicates** (`plan.derived`, RTEC's `voted_ie`/`voted_te`): with D(T)
//! what they hold at T,
//!
//! ```text
//! D(T)    = their own input facts at T ∪ what their rules derive, in order, from h(T-1),
//!           the slots at T and D(T) so far
//! h(T)    = S(T) ∪ what `plan.derived_starts` derive from D(T) and the slots
//!           ∪ { x ∈ h(T-1) : some keep rule matches x and none of its negations finds a
//!                            fact (D's at T, the others' as above) }
//! ```
//!
//! A key whose facts changed at T is evaluated at T + 1 (D reads them there). The start
//! rules keyed as the rest are among `derived_starts`, evaluated on their slots' facts in
//! the operator rather than as dataflow rules in front. Where every keep rule's negations
//! name every argument of the facts it keeps (`Inverse`), the facts that may stop are
//! found from the negated facts, so that a key of many facts (voting's motion, with every
//! voter's `voted`) is not read whole at each of its time points.
//!
//! **Input.** One tagged stream: tag 0 the start facts (changes of the start rules that
//! are rendered as dataflow rules in front of this operator, and of the predicate's own
//! input), tag 1 + i the facts of `plan.inputs()[i]` as given, once however many slots
//! (offsets) read the predicate, with a terminating predicate the next tag its own
//! input facts, and the tags after that the derived predicates' own. All are exchanged by
//! the key's hash, so a key's facts meet on one worker. A fact is applied to its offset-0
//! slot as it is taken and put on a queue per offset k ≥ 1 with its key's index, to be
//! applied at t + k without a second lookup (no delay operator in front). A start rule
//! that copies one atom (`plan.copies`) is applied to its slot's facts there: what it
//! derives is a start fact. A slot that `plan.slot_copies` fill (a predicate only this
//! operator reads, copied from another) takes its own input facts on its tag, and the
//! copies of its sources' facts as they are applied — or, where only negations naming
//! every argument read it, none: its facts are looked for as their sources (`Virtual`).
//!
//! **Memory.** At 10⁵ keys in random order the states (216 bytes each; the exclusive
//! form's 192, three cache lines) and the key table fall out of the caches. A time
//! point's changes are taken in short passes — look up every key by its fingerprint,
//! load every state, compare the keys, apply the changes — so that the CPU waits for a
//! time point's cache misses together rather than one after the other (see
//! `stepper::KeyTable`).
//!
//! **Output.** The changes of the predicate, of `term` and of the derived predicates that
//! another component reads or that are printed (`emitted`), tagged with their ids.

use differential_dataflow::Hashable;
use smallvec::SmallVec;

use std::collections::VecDeque;

use super::Facts;
use super::stepper::{
    Inputs, KeyTable, Keyed, Listed, TimeStepped, Update, diff, list, next_time, operate,
};
use crate::plan::PersistPlan;
use stgflow_eval::eval::{Facts as FactStore, Rows, RulePlan, SmallRelation, compare};
use stgflow_lang::ir::{Atom, Expr, Literal, PredId, Program, Term, VarId};
use stgflow_lang::syntax::ast::CmpOp;
use stgflow_lang::value::{Row, Value};

/// The tag of the start facts.
const START: usize = 0;

mod exclusive;

/// Whether `plan` runs in the form for a fluent of exclusive values ([`exclusive`]).
pub fn is_exclusive(program: &Program, plan: &PersistPlan) -> bool {
    exclusive::Shape::of(program, plan).is_some()
}

/// Renders the operator for `plan` over its tagged `source` (see the module docs).
///
/// `emitted`: the predicates of `plan.derived` whose changes are output (read by another
/// component or printed); the others are the operator's own.
pub fn render<'s>(
    program: &Program,
    plan: &PersistPlan,
    emitted: &[PredId],
    source: Facts<'s, u64>,
) -> Facts<'s, u64> {
    if let Some(shape) = exclusive::Shape::of(program, plan) {
        return exclusive::render(plan, shape, source);
    }
    let state = State::new(program, plan, emitted);
    let positions = state.key_positions.clone();
    operate(
        source,
        "Persist",
        move |((tag, row), _, _): &Update| key_of(&positions, *tag, row).hashed(),
        state,
    )
}

/// The key of a fact with input tag `tag`: the value at its slot's key position.
fn key_of(positions: &[usize], tag: u32, row: &Row) -> Value {
    positions
        .get(tag as usize)
        .and_then(|&i| row.get(i).copied())
        .unwrap_or(Value::Int(0))
}

/// One argument of a negation, read off a fact of the persisting predicate.
#[derive(Clone, Debug)]
enum Probe {
    /// The fact's value at this position.
    At(usize),
    Is(Value),
    /// `_`: any value.
    Any,
}

/// Where a keep rule's negation looks.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// The facts of an input tag.
    Tag(usize),
    /// What `term` held at T-1.
    Terminated,
    /// What a predicate of `plan.derived` (this index) holds at T.
    Derived(usize),
}

/// A keep rule's negation read backwards: the one held fact that a fact of its source can
/// stop (see [`State::evaluate`]).
struct Inverse {
    source: Source,
    /// (position, constant) that the source's fact must have.
    constants: Vec<(usize, Value)>,
    /// Per argument of the held fact: where it comes from.
    fact: Vec<Probe>,
}

impl Inverse {
    /// `keep`'s negations read backwards, where each names every argument of the facts
    /// the rule keeps that is not its head's constant; `None` where one does not.
    fn of(keep: &Keep) -> Option<Vec<Inverse>> {
        (keep.stops.iter())
            .map(|(source, probes)| {
                let constants = (probes.iter().enumerate())
                    .filter_map(|(j, p)| match p {
                        Probe::Is(c) => Some((j, *c)),
                        _ => None,
                    })
                    .collect();
                let fact = (keep.pattern.iter().enumerate())
                    .map(|(i, constant)| match constant {
                        Some(c) => Some(Probe::Is(*c)),
                        None => (probes.iter())
                            .position(|p| matches!(p, Probe::At(k) if *k == i))
                            .map(Probe::At),
                    })
                    .collect::<Option<Vec<Probe>>>()?;
                Some(Inverse {
                    source: *source,
                    constants,
                    fact,
                })
            })
            .collect()
    }

    /// The held fact that `row`, a fact of the source, may stop.
    fn stops(&self, row: &[Value]) -> Option<Row> {
        if !stgflow_lang::ir::has_constants(row, &self.constants) {
            return None;
        }
        probe_row(&self.fact, row)
    }
}

/// A keep rule: the facts it applies to, and the negations that stop them.
struct Keep {
    /// `Some(c)` where the head has the constant c.
    pattern: Vec<Option<Value>>,
    stops: Vec<(Source, Vec<Probe>)>,
}

impl Keep {
    fn new(
        program: &Program,
        rule: usize,
        term: Option<PredId>,
        derived: &[PredId],
        tag_of: &dyn Fn(&(PredId, u32)) -> usize,
    ) -> Keep {
        let rule = &program.rules[rule];
        let head = &rule.head.args;
        let pattern = head
            .iter()
            .map(|t| match t {
                Term::Const(c) => Some(*c),
                Term::Var(_) | Term::Wildcard => None,
            })
            .collect();
        let stops = rule
            .body
            .iter()
            .filter_map(|literal| match literal {
                Literal::Negative(atom) => Some(atom),
                _ => None,
            })
            .map(|atom| {
                let probes = atom
                    .args
                    .iter()
                    .map(|t| match t {
                        Term::Var(_) => head
                            .iter()
                            .position(|h| h == t)
                            .map_or(Probe::Any, Probe::At),
                        Term::Const(c) => Probe::Is(*c),
                        Term::Wildcard => Probe::Any,
                    })
                    .collect();
                let source = if Some(atom.pred) == term {
                    Source::Terminated
                } else if let Some(i) = derived.iter().position(|&d| d == atom.pred) {
                    Source::Derived(i)
                } else {
                    Source::Tag(tag_of(&(atom.pred, atom.offset)))
                };
                (source, probes)
            })
            .collect();
        Keep { pattern, stops }
    }

    fn matches(&self, fact: &[Value]) -> bool {
        self.pattern.len() == fact.len()
            && self
                .pattern
                .iter()
                .zip(fact)
                .all(|(p, v)| p.is_none_or(|c| c == *v))
    }
}

/// A row looked for, on the stack.
type Probed = SmallVec<[Value; 4]>;

/// The one row `probes` ask for, read off `fact`, where they name every argument (what
/// copies, negations read backwards and virtual slots all build).
///
/// Checked first, then built from an iterator of known length: collecting `Option`s
/// directly grows the row a value at a time.
fn probe_row<C: FromIterator<Value>>(probes: &[Probe], fact: &[Value]) -> Option<C> {
    let names = |probe: &Probe| match probe {
        Probe::At(i) => *i < fact.len(),
        Probe::Is(_) => true,
        Probe::Any => false,
    };
    probes.iter().all(names).then(|| {
        probes
            .iter()
            .map(|probe| match probe {
                Probe::At(i) => fact[*i],
                Probe::Is(c) => *c,
                // Ruled out above.
                Probe::Any => Value::Int(0),
            })
            .collect()
    })
}

/// Whether `row` is what `probes` ask for, read off `fact`.
fn probed(probes: &[Probe], fact: &[Value], row: &[Value]) -> bool {
    probes.len() == row.len()
        && probes.iter().zip(row).all(|(probe, v)| match probe {
            Probe::At(i) => fact.get(*i) == Some(v),
            Probe::Is(c) => c == v,
            Probe::Any => true,
        })
}

/// A start rule that copies one atom (`plan::copy_of`): the facts of its slot that match
/// the atom's constants start the fact it projects.
#[derive(Clone)]
struct Copy {
    /// (position, constant) of the atom's constants.
    filter: Vec<(usize, Value)>,
    /// Per head argument: the atom's position it copies, or the head's constant.
    project: Vec<Probe>,
    /// Whether what it starts is the fact itself (`h(X, Y, T) :- h_i(X, Y, T-1).`).
    identity: bool,
}

impl Copy {
    fn new(program: &Program, rule: usize) -> Option<Copy> {
        Copy::from_rule(&program.rules[rule])
    }

    fn from_rule(rule: &stgflow_lang::ir::Rule) -> Option<Copy> {
        let (atom, positions) = crate::plan::copy_of(rule)?;
        let filter = stgflow_lang::ir::constants(&atom.args);
        let project = positions
            .iter()
            .zip(&rule.head.args)
            .map(|(position, head)| match (position, head) {
                (Some(i), _) => Probe::At(*i),
                (None, Term::Const(c)) => Probe::Is(*c),
                (None, _) => Probe::Any,
            })
            .collect::<Vec<_>>();
        let identity = filter.is_empty()
            && project.len() == atom.args.len()
            && (project.iter().enumerate()).all(|(i, p)| matches!(p, Probe::At(j) if *j == i));
        Some(Copy {
            filter,
            project,
            identity,
        })
    }

    /// The fact `row` starts, if it matches.
    fn apply(&self, row: &[Value]) -> Option<Row> {
        if !stgflow_lang::ir::has_constants(row, &self.filter) {
            return None;
        }
        probe_row(&self.project, row)
    }
}

/// A start rule `h(P…, T) :- s(X…, T-k), not q(Q…, T-j), ….` of `plan.derived_starts`
/// whose negations read the head's variables only (and `_`): each fact of s's slot
/// starts its projection unless a negation finds a fact, read off the key's input
/// without a rule evaluation.
struct Unless {
    /// The input local of s's slot.
    local: usize,
    copy: Copy,
    /// The negations: the input local of their slot, their probes over the started fact.
    stops: Vec<(usize, Vec<Probe>)>,
}

impl Unless {
    /// `rule` as an [`Unless`], where its atoms are all in slots (`slot_of`).
    fn new(
        program: &Program,
        rule: usize,
        slot_of: &dyn Fn(&Atom) -> Option<usize>,
    ) -> Option<Unless> {
        let rule = &program.rules[rule];
        let (first, rest) = rule.body.split_first()?;
        let Literal::Positive(atom) = first else {
            return None;
        };
        let copy_rule = stgflow_lang::ir::Rule {
            body: vec![first.clone()],
            ..rule.clone()
        };
        let copy = Copy::from_rule(&copy_rule)?;
        let head = &rule.head.args;
        let stops = rest
            .iter()
            .map(|literal| {
                let Literal::Negative(negated) = literal else {
                    return None;
                };
                let probes = (negated.args.iter())
                    .map(|t| match t {
                        Term::Var(_) => match head.iter().position(|h| h == t) {
                            Some(i) => Some(Probe::At(i)),
                            // A variable of s the head drops: not a probe of the started fact.
                            None if atom.args.contains(t) => None,
                            None => Some(Probe::Any),
                        },
                        Term::Const(c) => Some(Probe::Is(*c)),
                        Term::Wildcard => Some(Probe::Any),
                    })
                    .collect::<Option<Vec<Probe>>>()?;
                Some((1 + slot_of(negated)?, probes))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Unless {
            local: 1 + slot_of(atom)?,
            copy,
            stops,
        })
    }
}

/// A copy into a slot (`plan.slot_copies`) that is not made (see [`State::virtuals`]): a
/// fact of the slot is looked for as the source fact it is copied from.
struct Virtual {
    /// The source slot's input local.
    from: usize,
    copy: Copy,
    /// The head's constants, (position, value): a fact without them is no copy's.
    constants: Vec<(usize, Value)>,
    /// Per argument of the source fact: where it is in the copied fact, or its constant.
    back: Vec<Probe>,
}

impl Virtual {
    /// `rule` (a copy, `plan::copy_of`) read backwards from slot local `from`, where
    /// every argument of its source atom is a constant or reaches the head.
    fn new(rule: &stgflow_lang::ir::Rule, from: usize) -> Option<Virtual> {
        let (atom, positions) = crate::plan::copy_of(rule)?;
        let constants = (positions.iter().zip(&rule.head.args).enumerate())
            .filter_map(|(i, (position, arg))| match (position, arg) {
                (None, Term::Const(c)) => Some((i, *c)),
                _ => None,
            })
            .collect();
        let back = (atom.args.iter().enumerate())
            .map(|(j, arg)| match arg {
                Term::Const(c) => Some(Probe::Is(*c)),
                _ => positions.iter().position(|&p| p == Some(j)).map(Probe::At),
            })
            .collect::<Option<Vec<Probe>>>()?;
        Some(Virtual {
            from,
            copy: Copy::from_rule(rule)?,
            constants,
            back,
        })
    }

    /// The source fact that `row` would be copied from.
    fn source_of(&self, row: &[Value]) -> Option<Probed> {
        if !stgflow_lang::ir::has_constants(row, &self.constants) {
            return None;
        }
        probe_row(&self.back, row)
    }
}

/// Whether the key's input `local` holds `row`: as its own fact, or as the copy of a
/// source fact it holds (`virtuals`).
fn holds_in(state: &KeyState, virtuals: &[Vec<Virtual>], local: usize, row: &[Value]) -> bool {
    state.inputs.holds(local, row)
        || (virtuals.get(local).into_iter().flatten()).any(|v| {
            v.source_of(row)
                .is_some_and(|source| state.inputs.holds(v.from, &source))
        })
}

impl Keyed<Value> for KeyState {
    fn key(&self) -> &Value {
        &self.key
    }
}

impl Listed for KeyState {
    fn listed(&mut self) -> &mut u64 {
        &mut self.listed
    }

    fn touch(&self) -> bool {
        self.held.is_empty() | self.terminated.is_empty() | self.inputs.is_empty()
    }
}

struct KeyState {
    key: Value,
    /// The time point this key was last put on the work list for, plus one (0: never).
    listed: u64,
    /// How many of its facts are on their way to a later time point (`Delay`): a key
    /// with some is not removed, its index stays its own.
    pending: u32,
    /// Whether input that `term`'s rules read (not a start fact) changed at the time point
    /// being taken: with it and the predicate's facts as they were, `term` holds what it
    /// held.
    read_changed: bool,
    /// What the predicate holds for this key.
    held: SmallRelation,
    /// How many of them no keep rule applies to.
    unkept: u32,
    /// What `term` holds for this key.
    terminated: SmallRelation,
    /// What each predicate of `plan.derived` holds for this key (none without them).
    derived: Vec<SmallRelation>,
    /// Input counts by (local, fact): local 0 the start facts, 1 + s slot s's facts,
    /// 1 + slots `term`'s own, 2 + slots + i derived predicate i's own.
    inputs: Inputs,
}

/// The facts of one input predicate read at offset k ≥ 1, on their way to the time point
/// they hold at for that slot: in the order they were taken, so in time order.
struct Delay {
    offset: u64,
    queue: VecDeque<Pending>,
}

struct Pending {
    at: u64,
    index: u32,
    slot: u32,
    row: Row,
    diff: isize,
}

/// What one slot's facts are used for.
struct SlotUse {
    /// The copies of its facts that start the predicate.
    copies: Vec<Copy>,
    /// Whether its facts are kept (a keep rule's negation or `term` reads them).
    stored: bool,
    /// The copies of its facts into other slots (`plan.slot_copies`), with their slot.
    feeds: Vec<(Copy, usize)>,
}

/// `term`'s rules, planned, with what they read.
struct TermRules {
    pred: PredId,
    /// Rules of the shape [`Differs`] describes, applied as such.
    differs: Vec<Differs>,
    plans: Vec<RulePlan>,
    /// Per rule of `plans`, the slots of its positive atoms from outside: with none of
    /// them holding a fact for a key, the rule derives nothing there.
    needs: Vec<Vec<usize>>,
    /// Whether some rule of `plans` reads a slot: their facts are gathered per slot.
    reads_slots: bool,
}

/// A terminating rule of the multi-valued form, `term(X…, T) :- h(X…, T), s(…, T-k),
/// V != W.`, with `h`'s arguments distinct variables, the head's the same, and `s`'s
/// variables `h`'s but for W at one position: a held fact x is terminated by a fact y of
/// the slot that agrees with x where they share a variable and whose W differs from x's V.
struct Differs {
    slot: usize,
    /// (position in s, position in h) of their shared variables.
    joins: Vec<(usize, usize)>,
    /// s's constants.
    constants: Vec<(usize, Value)>,
    /// (position of W in s, position of V in h).
    differ: (usize, usize),
    arity: usize,
}

impl Differs {
    fn new(
        program: &Program,
        rule: usize,
        pred: PredId,
        slot_of: &dyn Fn(&Atom) -> usize,
    ) -> Option<Differs> {
        let rule = &program.rules[rule];
        let mut own = None;
        let mut outside = None;
        let mut compared = None;
        for literal in &rule.body {
            match literal {
                Literal::Positive(a) if a.pred == pred && own.is_none() => own = Some(a),
                Literal::Positive(a) if a.pred != pred && outside.is_none() => outside = Some(a),
                Literal::Compare {
                    op: CmpOp::Ne,
                    lhs: Expr::Var(a),
                    rhs: Expr::Var(b),
                    ..
                } if compared.is_none() => compared = Some((*a, *b)),
                _ => return None,
            }
        }
        let (own, outside, (a, b)) = (own?, outside?, compared?);
        let vars: Vec<VarId> = own
            .args
            .iter()
            .map(|t| match t {
                Term::Var(v) => Some(*v),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let distinct = vars.iter().enumerate().all(|(i, v)| !vars[..i].contains(v));
        if own.offset != 0 || !distinct || rule.head.args != own.args {
            return None;
        }
        let in_own = |v: VarId| vars.iter().position(|&w| w == v);
        let (v, w) = match (in_own(a), in_own(b)) {
            (Some(i), None) => (i, b),
            (None, Some(i)) => (i, a),
            _ => return None,
        };
        let (mut joins, mut constants, mut at_w) = (Vec::new(), Vec::new(), None);
        for (j, term) in outside.args.iter().enumerate() {
            match term {
                Term::Var(x) if *x == w => {
                    if at_w.replace(j).is_some() {
                        return None;
                    }
                }
                Term::Var(x) => joins.push((j, in_own(*x)?)),
                Term::Const(c) => constants.push((j, *c)),
                Term::Wildcard => {}
            }
        }
        Some(Differs {
            slot: slot_of(outside),
            joins,
            constants,
            differ: (at_w?, v),
            arity: outside.args.len(),
        })
    }

    /// Whether `y`, a fact of the slot, terminates the held fact `x`.
    fn terminates(&self, x: &[Value], y: &[Value]) -> bool {
        y.len() == self.arity
            && self.joins.iter().all(|&(j, i)| y.get(j) == x.get(i))
            && self.constants.iter().all(|(j, c)| y.get(*j) == Some(c))
            && match (y.get(self.differ.0), x.get(self.differ.1)) {
                (Some(&w), Some(&v)) => compare(CmpOp::Ne, v, w),
                _ => false,
            }
    }
}

/// A predicate of `plan.derived`: its rules, and whether its changes are output.
struct Derived {
    pred: PredId,
    plans: Vec<RulePlan>,
    /// Per rule, what its positive atoms read ([`needs_of`]).
    needs: Vec<Vec<Need>>,
    emit: bool,
}

impl Derived {
    /// `pred` with its `rules` planned, not output; `own` the persisting predicate,
    /// `derived` the derived ones.
    fn new(
        program: &Program,
        pred: PredId,
        rules: &[usize],
        own: PredId,
        derived: &[PredId],
        slot_of: &dyn Fn(&Atom) -> usize,
    ) -> Derived {
        Derived {
            pred,
            plans: (rules.iter())
                .map(|&r| RulePlan::new(&program.rules[r], |_| false))
                .collect(),
            needs: (rules.iter())
                .map(|&r| needs_of(&program.rules[r], own, derived, slot_of))
                .collect(),
            emit: false,
        }
    }
}

/// What a positive atom of a derived predicate's rule reads: without a fact there, the
/// rule derives nothing.
#[derive(Clone, Copy)]
enum Need {
    Slot(usize),
    Derived(usize),
}

/// What `rule`'s positive atoms read, but for the persisting predicate's (`pred`).
fn needs_of(
    rule: &stgflow_lang::ir::Rule,
    pred: PredId,
    derived: &[PredId],
    slot_of: &dyn Fn(&Atom) -> usize,
) -> Vec<Need> {
    rule.body
        .iter()
        .filter_map(|l| match l {
            Literal::Positive(a) if a.pred != pred => {
                Some(match derived.iter().position(|&d| d == a.pred) {
                    Some(i) => Need::Derived(i),
                    None => Need::Slot(slot_of(a)),
                })
            }
            _ => None,
        })
        .collect()
}

struct State {
    pred: PredId,
    keeps: Vec<Keep>,
    term: Option<TermRules>,
    /// Every keep rule's negations read backwards (see [`Inverse`]), when each can be: a
    /// key's facts that may stop are then found from the facts that stop them, instead of
    /// each held fact being checked.
    inverses: Option<Vec<Inverse>>,
    /// Buffer: the held facts that may stop.
    candidates: Vec<Row>,
    /// Per input local of a slot that `plan.slot_copies` fill and that is not made: the
    /// copies into it, read backwards.
    virtuals: Vec<Vec<Virtual>>,
    /// The predicates of `plan.derived`, in order, and the rules of `plan.derived_starts`
    /// (but those applied as [`Unless`]) as one more, whose facts start the persisting one.
    derived_preds: Vec<Derived>,
    derived_starts: Derived,
    /// Those of `plan.derived_starts` that are applied as [`Unless`] instead.
    unless: Vec<Unless>,
    /// Per slot, whether the derived predicates' rules or their start rules read it.
    derive_reads: Vec<bool>,
    /// Buffers: what the derived predicates hold at the time point being evaluated, and
    /// what their start rules start.
    next_derived: Vec<SmallRelation>,
    started: SmallRelation,
    slots: Vec<(PredId, u32)>,
    /// The key position of each input tag's facts.
    key_positions: Vec<usize>,
    /// Per input tag of a predicate from outside (tag 1 + i): its slots, (offset, slot).
    readings: Vec<Vec<(u64, usize)>>,
    /// The input tag of `term`'s own facts (past the predicates').
    own_tag: usize,
    uses: Vec<SlotUse>,
    delays: Vec<Delay>,
    table: KeyTable<KeyState>,
    /// Keys whose state changed at `last_processed` and that hold a terminated fact:
    /// evaluated at the next time point (see [`State::evaluate`]).
    changed: Vec<usize>,
    stash: super::zero_one::Stash<(u32, Row)>,
    last_processed: Option<u64>,
    work: Vec<usize>,
    /// The key indices of a time point's changes.
    indices: Vec<usize>,
    /// Buffers for what `term` holds next and for its rules' inputs.
    next_terminated: SmallRelation,
    relations: Vec<SmallRelation>,
    derived: Vec<Row>,
}

impl State {
    fn new(program: &Program, plan: &PersistPlan, emitted: &[PredId]) -> State {
        let slot_index =
            |slot: &(PredId, u32)| plan.slots.iter().position(|s| s == slot).unwrap_or(0);
        let tag_of = |slot: &(PredId, u32)| 1 + slot_index(slot);
        let term_pred = plan.term.as_ref().map(|(t, _)| *t);
        let derived: Vec<PredId> = plan.derived.iter().map(|(d, _)| *d).collect();
        let keeps: Vec<Keep> = plan
            .keeps
            .iter()
            .map(|&r| Keep::new(program, r, term_pred, &derived, &tag_of))
            .collect();
        let inverses = (keeps.iter().map(Inverse::of))
            .collect::<Option<Vec<Vec<Inverse>>>>()
            .map(|all| all.into_iter().flatten().collect());
        let slot_of = |atom: &Atom| slot_index(&(atom.pred, atom.offset));
        let (mut unless, mut planned) = (Vec::new(), Vec::new());
        for &r in &plan.derived_starts {
            let in_slot = |a: &Atom| plan.slots.iter().position(|&s| s == (a.pred, a.offset));
            match Unless::new(program, r, &in_slot) {
                Some(u) => unless.push(u),
                None => planned.push(r),
            }
        }
        let derive_reads: Vec<bool> = (plan.slots.iter())
            .map(|slot| {
                (plan.derived.iter().flat_map(|(_, rules)| rules))
                    .chain(&planned)
                    .any(|&r| {
                        (program.rules[r].body.iter().filter_map(Literal::atom))
                            .any(|a| (a.pred, a.offset) == *slot)
                    })
            })
            .collect();
        let derived_preds: Vec<Derived> = (plan.derived.iter())
            .map(|(pred, rules)| {
                let mut d = Derived::new(program, *pred, rules, plan.pred, &derived, &slot_of);
                d.emit = emitted.contains(pred);
                d
            })
            .collect();
        let derived_starts =
            Derived::new(program, plan.pred, &planned, plan.pred, &derived, &slot_of);
        let term = plan.term.as_ref().map(|(term, rules)| {
            let (mut differs, mut plans, mut needs) = (Vec::new(), Vec::new(), Vec::new());
            for &r in rules {
                if let Some(d) = Differs::new(program, r, plan.pred, &slot_of) {
                    differs.push(d);
                    continue;
                }
                plans.push(RulePlan::new(&program.rules[r], |_| false));
                needs.push(
                    program.rules[r]
                        .body
                        .iter()
                        .filter_map(|l| match l {
                            Literal::Positive(a) if a.pred != plan.pred => Some(slot_of(a)),
                            _ => None,
                        })
                        .collect::<Vec<_>>(),
                );
            }
            let reads_slots = !plans.is_empty();
            TermRules {
                pred: *term,
                differs,
                plans,
                needs,
                reads_slots,
            }
        });
        let position = |p: PredId| plan.key.get(&p).copied().unwrap_or(0);
        let inputs = plan.inputs();
        let mut key_positions = vec![position(plan.pred)];
        key_positions.extend(inputs.iter().map(|&p| position(p)));
        if let Some((term, _)) = &plan.term {
            key_positions.push(position(*term));
        } else if !derived.is_empty() {
            // The derived predicates' own facts come after `term`'s tag, unused.
            key_positions.push(0);
        }
        key_positions.extend(derived.iter().map(|&d| position(d)));
        let readings = inputs
            .iter()
            .map(|&p| {
                let mut slots: Vec<(u64, usize)> = (plan.slots.iter().enumerate())
                    .filter(|(_, (q, _))| *q == p)
                    .map(|(s, &(_, k))| (u64::from(k), s))
                    .collect();
                slots.sort_unstable();
                slots
            })
            .collect();
        let mut uses: Vec<SlotUse> = plan
            .slots
            .iter()
            .map(|slot| {
                let read = |r: &usize| {
                    program.rules[*r]
                        .body
                        .iter()
                        .filter_map(Literal::atom)
                        .any(|a| (a.pred, a.offset) == *slot)
                };
                let term_rules = plan.term.iter().flat_map(|(_, rules)| rules);
                let derived_rules = plan.derived.iter().flat_map(|(_, rules)| rules);
                SlotUse {
                    copies: Vec::new(),
                    feeds: Vec::new(),
                    stored: (plan.keeps.iter().chain(term_rules))
                        .chain(derived_rules)
                        .chain(&plan.derived_starts)
                        .any(read),
                }
            })
            .collect();
        for &r in &plan.copies {
            let rule = &program.rules[r];
            let slot = rule.body.iter().find_map(|l| match l {
                Literal::Positive(atom) => Some((atom.pred, atom.offset)),
                _ => None,
            });
            if let (Some(slot), Some(copy)) = (slot, Copy::new(program, r)) {
                uses[slot_index(&slot)].copies.push(copy);
            }
        }
        // A slot that copies fill and only negations naming every argument read (keep rules'
        // and start rules' [`Unless`]) is not made: its facts are looked for as their
        // sources (`virtuals`). Others are filled as the sources' facts come in (`feeds`).
        let started_from: Vec<bool> = uses.iter().map(|u| !u.copies.is_empty()).collect();
        let named_only = |local: usize| {
            let named = |probes: &[Probe]| probes.iter().all(|p| !matches!(p, Probe::Any));
            let keeps_name = (keeps.iter().flat_map(|k| &k.stops)).all(|(source, probes)| {
                !matches!(source, Source::Tag(t) if *t == local) || named(probes)
            });
            let starts_name = (unless.iter().flat_map(|u| &u.stops))
                .all(|(t, probes)| *t != local || named(probes));
            // Read by a start rule (copied, or as an `Unless`), or copied into another slot:
            // its facts are needed as they are.
            let (pred, _) = plan.slots[local - 1];
            let read_as_start = unless.iter().any(|u| u.local == local)
                || started_from[local - 1]
                || (plan.slot_copies.iter()).any(|&r| {
                    (program.rules[r].body.iter().filter_map(Literal::atom)).any(|a| a.pred == pred)
                });
            plan.term.is_none()
                && keeps_name
                && starts_name
                && !read_as_start
                && derive_reads.get(local - 1) == Some(&false)
        };
        let mut virtuals: Vec<Vec<Virtual>> = (0..=plan.slots.len()).map(|_| Vec::new()).collect();
        for (to, &(q, k)) in plan.slots.iter().enumerate() {
            let copies: Vec<(usize, usize)> = (plan.slot_copies.iter())
                .filter(|&&r| program.rules[r].head.pred == q)
                .filter_map(|&r| {
                    let (atom, _) = crate::plan::copy_of(&program.rules[r])?;
                    let from = plan.slots.iter().position(|&s| s == (atom.pred, k))?;
                    Some((r, from))
                })
                .collect();
            let read_back: Option<Vec<Virtual>> = (copies.iter())
                .map(|&(r, from)| Virtual::new(&program.rules[r], 1 + from))
                .collect();
            match read_back {
                Some(read_back) if !copies.is_empty() && named_only(1 + to) => {
                    for &(_, from) in &copies {
                        uses[from].stored = true;
                    }
                    virtuals[1 + to] = read_back;
                }
                _ => {
                    for (r, from) in copies {
                        if let Some(copy) = Copy::new(program, r) {
                            uses[from].feeds.push((copy, to));
                        }
                    }
                }
            }
        }
        let mut offsets: Vec<u64> = plan
            .slots
            .iter()
            .map(|&(_, k)| u64::from(k))
            .filter(|&k| k > 0)
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        State {
            pred: plan.pred,
            own_tag: 1 + inputs.len(),
            readings,
            uses,
            delays: offsets
                .into_iter()
                .map(|offset| Delay {
                    offset,
                    queue: VecDeque::new(),
                })
                .collect(),
            keeps,
            virtuals,
            inverses,
            candidates: Vec::new(),
            term,
            next_derived: vec![SmallRelation::default(); derived_preds.len()],
            derived_preds,
            derived_starts,
            unless,
            derive_reads,
            started: SmallRelation::default(),
            slots: plan.slots.clone(),
            key_positions,
            table: KeyTable::default(),
            changed: Vec::new(),
            stash: super::zero_one::Stash::default(),
            last_processed: None,
            work: Vec::new(),
            indices: Vec::new(),
            next_terminated: SmallRelation::default(),
            relations: vec![SmallRelation::default(); plan.slots.len()],
            derived: Vec::new(),
        }
    }

    /// The first time point with input: buffered, or on its way to a slot.
    fn first_input(&self) -> Option<u64> {
        let delayed = self
            .delays
            .iter()
            .filter_map(|d| d.queue.front().map(|p| p.at));
        self.stash.first_time().into_iter().chain(delayed).min()
    }
}

/// Adds a fact of slot `slot`, as it holds for that slot at the time being taken, to a
/// key's input: its copies as start facts, itself where it is read.
fn apply(uses: &[SlotUse], state: &mut KeyState, slot: usize, row: Row, diff: isize) {
    let Some(slot_use) = uses.get(slot) else {
        return;
    };
    for (copy, to) in &slot_use.feeds {
        if let Some(copied) = copy.apply(&row) {
            apply(uses, state, *to, copied, diff);
        }
    }
    let inputs = &mut state.inputs;
    if let ([copy], false) = (&slot_use.copies[..], slot_use.stored) {
        // The one use of the fact: moved, not copied, where it is itself the start fact.
        if copy.identity {
            inputs.add(START, row, diff);
        } else if let Some(started) = copy.apply(&row) {
            inputs.add(START, started, diff);
        }
        return;
    }
    for copy in &slot_use.copies {
        if let Some(started) = copy.apply(&row) {
            inputs.add(START, started, diff);
        }
    }
    if slot_use.stored {
        inputs.add(1 + slot, row, diff);
        state.read_changed = true;
    }
}

impl TimeStepped for State {
    fn stash(&mut self) -> &mut super::zero_one::Stash<(u32, Row)> {
        &mut self.stash
    }

    fn next_time(&self, limit: Option<u64>) -> Option<u64> {
        next_time(
            self.first_input(),
            !self.changed.is_empty(),
            self.last_processed,
            limit,
        )
    }

    fn process(&mut self, t: u64, out: &mut Vec<Update>) {
        let mut work = std::mem::take(&mut self.work);
        work.clear();
        let mut changes = self.stash.take(t);
        let mut indices = std::mem::take(&mut self.indices);
        let positions = &self.key_positions;
        let derived = self.derived_preds.len();
        self.table.take_keys(
            &changes,
            |tag, row| key_of(positions, tag, row),
            |&key| KeyState {
                key,
                listed: 0,
                pending: 0,
                read_changed: false,
                held: SmallRelation::default(),
                unkept: 0,
                terminated: SmallRelation::default(),
                derived: vec![SmallRelation::default(); derived],
                inputs: Inputs::default(),
            },
            &mut indices,
            &mut work,
            t,
        );
        for (((tag, row), diff), &index) in changes.drain(..).zip(&indices) {
            let state = &mut self.table.states[index];
            let tag = tag as usize;
            if tag == START {
                state.inputs.add(START, row, diff);
                continue;
            }
            if tag == self.own_tag {
                state.inputs.add(1 + self.slots.len(), row, diff);
                state.read_changed = true;
                continue;
            }
            if tag > self.own_tag {
                // A derived predicate's own fact.
                state
                    .inputs
                    .add(1 + self.slots.len() + tag - self.own_tag, row, diff);
                continue;
            }
            let Some(readings) = self.readings.get(tag - 1) else {
                continue;
            };
            // A fact read at several offsets: each but the last gets a copy.
            let mut row = Some(row);
            for (i, &(offset, slot)) in readings.iter().enumerate() {
                let Some(fact) = (if i + 1 == readings.len() {
                    row.take()
                } else {
                    row.as_deref().map(|f| Row::from_slice(f))
                }) else {
                    break;
                };
                if offset == 0 {
                    apply(&self.uses, state, slot, fact, diff);
                } else if let Some(delay) = self.delays.iter_mut().find(|d| d.offset == offset) {
                    state.pending += 1;
                    delay.queue.push_back(Pending {
                        at: t + offset,
                        index: index as u32,
                        slot: slot as u32,
                        row: fact,
                        diff,
                    });
                }
            }
        }
        self.stash.give_back(changes);
        self.indices = indices;
        for delay in &mut self.delays {
            while delay.queue.front().is_some_and(|p| p.at == t) {
                let Some(pending) = delay.queue.pop_front() else {
                    break;
                };
                let index = pending.index as usize;
                let state = &mut self.table.states[index];
                state.pending -= 1;
                list(&mut work, state, index, t);
                apply(
                    &self.uses,
                    state,
                    pending.slot as usize,
                    pending.row,
                    pending.diff,
                );
            }
        }
        // Keys whose state changed at t − 1 (`next_time` makes t the next time point).
        // Emptied, not dropped: it is refilled below, at every time point.
        for index in self.changed.drain(..) {
            list(&mut work, &mut self.table.states[index], index, t);
        }
        for &index in &work {
            if self.evaluate(index, t, out) {
                self.changed.push(index);
            }
        }
        self.work = work;
        self.last_processed = Some(t);
    }
}

impl State {
    /// The key at `index` at `t`: its new state, and the changes to it; whether it must be
    /// evaluated at t + 1 although its input does not change there. That is where its
    /// state changed and it holds a terminated fact: with its input, its facts and `term`'s
    /// the same at t + 1 as at t, it holds the same at t + 1, and with no terminated fact
    /// at t nothing it holds stops at t + 1 unless its input changes.
    ///
    /// The state is updated in place: of what the key held, only the facts that stop are
    /// touched, and only the facts that start are copied in.
    fn evaluate(&mut self, index: usize, t: u64, out: &mut Vec<Update>) -> bool {
        if !(self.derived_preds.is_empty()
            && self.derived_starts.plans.is_empty()
            && self.unless.is_empty())
        {
            self.derive(index, t);
        }
        let Some(state) = self.table.states.get_mut(index) else {
            return false;
        };
        let start = out.len();
        let pred = self.pred as u32;
        // What stops: held at t − 1, not started at t, and no keep rule lets it through.
        // Where every negation can be read backwards and a keep rule applies to every held
        // fact, only the facts that a negation's fact names can stop.
        let derived = &self.next_derived;
        let stops = |fact: &[Value]| {
            !started(&state.inputs, fact)
                && !self.started.contains_row(fact)
                && !kept(&self.keeps, state, &self.virtuals, derived, fact)
        };
        match &self.inverses {
            Some(inverses) if state.unkept == 0 => {
                let candidates = &mut self.candidates;
                candidates.clear();
                let mut named = |inverse: &Inverse, row: &[Value]| {
                    if let Some(fact) = inverse.stops(row) {
                        if state.held.contains_row(&fact) {
                            candidates.push(fact);
                        }
                    }
                };
                for inverse in inverses {
                    match inverse.source {
                        Source::Terminated => {
                            state.terminated.iter().for_each(|r| named(inverse, r));
                        }
                        Source::Derived(i) => derived[i].iter().for_each(|r| named(inverse, r)),
                        Source::Tag(_) => {}
                    }
                }
                // The inputs once, for every negation that reads them, and for every one that
                // reads the slots they are copied into but that are not made.
                for (local, row, _) in state.inputs.iter().filter(|&(_, _, c)| c > 0) {
                    for inverse in inverses {
                        if matches!(inverse.source, Source::Tag(tag) if tag == local) {
                            named(inverse, row);
                        }
                    }
                    for (into, virtuals) in self.virtuals.iter().enumerate() {
                        for copy in virtuals.iter().filter(|v| v.from == local) {
                            let Some(copied) = copy.copy.apply(row) else {
                                continue;
                            };
                            for inverse in inverses {
                                if matches!(inverse.source, Source::Tag(tag) if tag == into) {
                                    named(inverse, &copied);
                                }
                            }
                        }
                    }
                }
                candidates.sort_unstable();
                candidates.dedup();
                for fact in candidates.drain(..) {
                    if stops(&fact) {
                        out.push(((pred, fact), t, -1));
                    }
                }
            }
            _ => {
                for fact in state.held.iter() {
                    if stops(fact) {
                        out.push(((pred, Row::from_slice(fact)), t, -1));
                    }
                }
            }
        }
        let stopped = out.len();
        for (local, fact, count) in state.inputs.iter() {
            if local == START && count > 0 && !state.held.contains_row(fact) {
                out.push(((pred, Row::from_slice(fact)), t, 1));
            }
        }
        for fact in self.started.iter() {
            if !state.held.contains_row(fact) && !started(&state.inputs, fact) {
                out.push(((pred, Row::from_slice(fact)), t, 1));
            }
        }
        let unkept = |fact: &[Value]| u32::from(!self.keeps.iter().any(|k| k.matches(fact)));
        for ((_, fact), _, diff) in &out[start..] {
            if *diff > 0 {
                state.held.insert(Row::from_slice(fact));
                state.unkept += unkept(fact);
            }
        }
        for ((_, fact), _, _) in &out[start..stopped] {
            state.held.remove(fact);
            state.unkept -= unkept(fact);
        }
        let read_changed = std::mem::take(&mut state.read_changed);
        if let Some(term) = self
            .term
            .as_ref()
            .filter(|_| read_changed || out.len() > start)
        {
            let next = &mut self.next_terminated;
            next.clear();
            let own = 1 + self.slots.len();
            let mut reads_any = false;
            if term.reads_slots {
                for relation in &mut self.relations {
                    relation.clear();
                }
            }
            for (local, fact, count) in state.inputs.iter() {
                if count <= 0 || local == START {
                    continue;
                }
                if local == own {
                    next.insert(Row::from_slice(fact));
                    continue;
                }
                reads_any = true;
                for differs in term.differs.iter().filter(|d| 1 + d.slot == local) {
                    for x in state.held.iter() {
                        if differs.terminates(x, fact) {
                            next.insert(Row::from_slice(x));
                        }
                    }
                }
                if term.reads_slots {
                    if let Some(relation) = self.relations.get_mut(local - 1) {
                        relation.insert(Row::from_slice(fact));
                    }
                }
            }
            if !term.plans.is_empty() {
                let view = KeyView {
                    pred: self.pred,
                    held: &state.held,
                    own_offset: 0,
                    slots: &self.slots,
                    relations: &self.relations,
                    derived: &[],
                    now: &[],
                    t,
                };
                for (plan, needs) in term.plans.iter().zip(&term.needs) {
                    // A rule that reads a fact from outside derives nothing without one.
                    let idle = !needs.is_empty()
                        && (!reads_any || needs.iter().any(|&s| self.relations[s].is_empty()));
                    if idle {
                        continue;
                    }
                    plan.fire(t, None, &view, &mut self.derived);
                    for fact in self.derived.drain(..) {
                        next.insert(fact);
                    }
                }
            }
            if diff(term.pred, &state.terminated, next, t, out) {
                std::mem::swap(&mut state.terminated, next);
            }
        }
        let changed = out.len() > start;
        // What the derived predicates hold is the key's, for the output's changes and for
        // the key to stay while it holds some.
        let mut derives = false;
        for ((d, now), next) in (self.derived_preds.iter())
            .zip(&mut state.derived)
            .zip(&mut self.next_derived)
        {
            if d.emit {
                diff(d.pred as PredId, now, next, t, out);
            }
            std::mem::swap(now, next);
            derives |= !now.is_empty();
        }
        if !changed
            && !derives
            && state.pending == 0
            && state.held.is_empty()
            && state.terminated.is_empty()
            && state.inputs.is_empty()
        {
            state.held = SmallRelation::default();
            state.terminated = SmallRelation::default();
            let key = state.key;
            self.table.remove(&key, index);
            return false;
        }
        // What changed at t is read at t + 1 by the derived predicates' rules.
        changed && (!state.terminated.is_empty() || !self.derived_preds.is_empty())
    }

    /// What the derived predicates hold for the key at `index` at `t` (`next_derived`),
    /// from what it held at t − 1 and its input at t, and what their start rules start
    /// (`started`).
    fn derive(&mut self, index: usize, t: u64) {
        self.started.clear();
        let Some(state) = self.table.states.get(index) else {
            return;
        };
        for relation in self.relations.iter_mut().chain(&mut self.next_derived) {
            relation.clear();
        }
        let own = 2 + self.slots.len();
        for (local, fact, count) in state.inputs.iter() {
            if count <= 0 || local == START {
                continue;
            }
            let relation = match local.checked_sub(own) {
                Some(i) => self.next_derived.get_mut(i),
                None if self.derive_reads.get(local - 1) == Some(&true) => {
                    self.relations.get_mut(local - 1)
                }
                None => None,
            };
            if let Some(relation) = relation {
                relation.insert(Row::from_slice(fact));
            }
        }
        // A rule that reads a fact from outside, or of a derived predicate, derives nothing
        // without one.
        let relations = &self.relations;
        let idle = |needs: &[Need], now: &[SmallRelation]| {
            needs.iter().any(|need| match *need {
                Need::Slot(s) => relations[s].is_empty(),
                Need::Derived(i) => now[i].is_empty(),
            })
        };
        // Each derived predicate's rules in order, then their start rules.
        for (i, d) in (self.derived_preds.iter())
            .chain([&self.derived_starts])
            .enumerate()
        {
            let view = KeyView {
                pred: self.pred,
                held: &state.held,
                own_offset: 1,
                slots: &self.slots,
                relations,
                derived: &self.derived_preds,
                now: &self.next_derived,
                t,
            };
            for (plan, needs) in d.plans.iter().zip(&d.needs) {
                if !idle(needs, &self.next_derived) {
                    plan.fire(t, None, &view, &mut self.derived);
                }
            }
            let into = match self.next_derived.get_mut(i) {
                Some(relation) => relation,
                None => &mut self.started,
            };
            for row in self.derived.drain(..) {
                into.insert(row);
            }
        }
        for (local, row, count) in state.inputs.iter() {
            for unless in self.unless.iter().filter(|u| u.local == local && count > 0) {
                let Some(fact) = unless.copy.apply(row) else {
                    continue;
                };
                let stopped = unless.stops.iter().any(|(tag, probes)| {
                    match probe_row::<Probed>(probes, &fact) {
                        Some(negated) => holds_in(state, &self.virtuals, *tag, &negated),
                        None => (state.inputs.iter())
                            .any(|(t, r, c)| t == *tag && c > 0 && probed(probes, &fact, r)),
                    }
                });
                if !stopped {
                    self.started.insert(fact);
                }
            }
        }
    }
}

/// A key's facts as `term`'s rules and the derived predicates' read them: what the
/// persisting predicate holds `own_offset` points back (`term`'s: its new state; the
/// derived predicates': what it held at T-1), each slot's facts at T, and the derived
/// predicates' at T.
struct KeyView<'a> {
    pred: PredId,
    held: &'a SmallRelation,
    own_offset: u32,
    slots: &'a [(PredId, u32)],
    relations: &'a [SmallRelation],
    derived: &'a [Derived],
    now: &'a [SmallRelation],
    t: u64,
}

impl FactStore for KeyView<'_> {
    type Relation = SmallRelation;

    fn relation(&self, pred: PredId, time: u64) -> Option<&SmallRelation> {
        let offset = u32::try_from(self.t.checked_sub(time)?).ok()?;
        if pred == self.pred {
            return (offset == self.own_offset).then_some(self.held);
        }
        if let Some(i) = self.derived.iter().position(|d| d.pred == pred) {
            return (offset == 0).then(|| &self.now[i]);
        }
        let i = self.slots.iter().position(|&s| s == (pred, offset))?;
        self.relations.get(i)
    }

    fn insert(&mut self, _: PredId, _: Row) -> bool {
        false
    }
}

/// Whether `fact` is among the key's start facts.
fn started(inputs: &Inputs, fact: &[Value]) -> bool {
    inputs.holds(START, fact)
}

/// Whether a keep rule lets `fact`, held at T-1, hold at T (`derived`: what the derived
/// predicates hold at T).
fn kept(
    keeps: &[Keep],
    state: &KeyState,
    virtuals: &[Vec<Virtual>],
    derived: &[SmallRelation],
    fact: &[Value],
) -> bool {
    keeps.iter().any(|keep| {
        keep.matches(fact)
            && !keep.stops.iter().any(|(source, probes)| {
                match (source, probe_row::<Probed>(probes, fact)) {
                    // Probes that name every argument find one fact: looked up, not scanned for.
                    (Source::Terminated, Some(row)) => state.terminated.contains_row(&row),
                    (Source::Derived(i), Some(row)) => derived[*i].contains_row(&row),
                    (Source::Tag(tag), Some(row)) => holds_in(state, virtuals, *tag, &row),
                    (Source::Terminated, None) => {
                        state.terminated.rows().any(|row| probed(probes, fact, row))
                    }
                    (Source::Derived(i), None) => {
                        derived[*i].rows().any(|row| probed(probes, fact, row))
                    }
                    (Source::Tag(tag), None) => state
                        .inputs
                        .iter()
                        .any(|(t, row, count)| t == *tag && count > 0 && probed(probes, fact, row)),
                }
            })
    })
}
