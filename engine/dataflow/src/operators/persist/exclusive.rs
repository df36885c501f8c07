//! The persistence operator's form for a fluent of exclusive values, the shape Algorithm 3
//! writes for a simple fluent initiated by one event predicate and nothing else:
//!
//! ```text
//! h(F…, V, T)    :- init(F…, V, T-1).
//! h(F…, V, T)    :- h(F…, V, T-1), not term(F…, V, T-1).
//! term(F…, V, T) :- init(F…, W, T), h(F…, V, T), V != W.
//! ```
//!
//! (`datasets/examples/inertia.tdl`; [`Shape::of`] says exactly what is accepted). Per key
//! the operator keeps what h and term hold, the event predicate's facts with two counts
//! (now, and at the key's last evaluation: the facts that start h at the next point), and
//! the facts of h and term given as input. With S(T) the events of T-1 and h's own input
//! facts at T:
//!
//! ```text
//! h(T)    = S(T) ∪ { x ∈ h(T-1) : x ∉ term(T-1) }
//! term(T) = term's own input facts at T ∪ { x ∈ h(T) : an event of T differs from x in V }
//! ```
//!
//! — the general operator's equations for this shape, without its per-slot input
//! counts, queues of facts moved on by an offset, start facts copied from events and a
//! third pass at t + 2 to see the start fact go. An event at t costs a lookup for its +1
//! at t and one for its −1 at t + 1, and an evaluation at each: at t the old value is
//! terminated, at t + 1 the new value holds and the old one and the termination go. A
//! key is evaluated again at the next point only where it has an event it does not hold
//! or holds a terminated fact; otherwise nothing it holds can change until its input does.

use differential_dataflow::Hashable;
use smallvec::SmallVec;

use super::super::Facts;
use super::super::stepping::{
    KeyTable, Keyed, Listed, TimeStepped, Update, list, next_time, operate,
};
use super::key_of;
use super::rules::{CopyRule, Differs, Keep, Probe, Source};
use crate::plan::PersistPlan;
use stgflow_lang::ir::{PredId, Program};
use stgflow_lang::value::{Row, Value};

/// The input tags (as `persist::render` makes them): h's own facts, the event
/// predicate's, term's own.
const OWN: u32 = 0;
const EVENT: u32 = 1;
const OWN_TERM: u32 = 2;

/// A persistence plan of the exclusive form, with its terminating rule.
pub(super) struct Shape {
    pred: PredId,
    term: PredId,
    differs: Differs,
}

impl Shape {
    /// `plan` as the exclusive form: no start rules but one copy of the event predicate
    /// read a point back, that predicate read at offsets 0 and 1 only, one keep rule whose
    /// only negation is `term` over all of h's arguments, and one terminating rule of
    /// [`Differs`]'s form over the event predicate at offset 0. `None` otherwise.
    pub(super) fn of(program: &Program, plan: &PersistPlan) -> Option<Shape> {
        let (term, rules) = plan.term.as_ref()?;
        let [event] = plan.inputs()[..] else {
            return None;
        };
        let now = plan.slots.iter().position(|&s| s == (event, 0))?;
        let before = plan.slots.iter().position(|&s| s == (event, 1))?;
        if !plan.starts.is_empty() || plan.slots.len() != 2 {
            return None;
        }
        let [copy] = plan.copies[..] else {
            return None;
        };
        let copied_slot = program.rules[copy].body.iter().find_map(|l| l.atom());
        if copied_slot.map(|a| (a.pred, a.offset)) != Some(plan.slots[before])
            || !CopyRule::new(program, copy)?.identity
        {
            return None;
        }
        let [keep] = plan.keeps[..] else {
            return None;
        };
        let arity = program.rules[keep].head.args.len();
        let keep = Keep::new(program, keep, Some(*term), &[], &|_| 0);
        let identity = |probes: &[Probe]| {
            probes.len() == arity
                && (probes.iter().enumerate()).all(|(i, p)| matches!(p, Probe::At(j) if *j == i))
        };
        let stops_on_term =
            matches!(&keep.stops[..], [(Source::Terminated, probes)] if identity(probes));
        if !stops_on_term || keep.pattern.iter().any(Option::is_some) {
            return None;
        }
        let [rule] = rules[..] else {
            return None;
        };
        let slot_of = |atom: &stgflow_lang::ir::Atom| {
            (plan.slots.iter())
                .position(|&s| s == (atom.pred, atom.offset))
                .unwrap_or(usize::MAX)
        };
        let differs = Differs::new(program, rule, plan.pred, &slot_of)?;
        (differs.slot == now).then_some(Shape {
            pred: plan.pred,
            term: *term,
            differs,
        })
    }
}

/// Renders the operator for `plan`, of `shape`, over its tagged `source`.
pub(super) fn render<'s>(
    plan: &PersistPlan,
    shape: Shape,
    source: Facts<'s, u64>,
) -> Facts<'s, u64> {
    let position = |p: PredId| plan.key.get(&p).copied().unwrap_or(0);
    let positions: Vec<usize> = [shape.pred, plan.inputs()[0], shape.term]
        .into_iter()
        .map(position)
        .collect();
    let state = State {
        shape,
        key_positions: positions.clone(),
        table: KeyTable::default(),
        stash: super::super::zero_one::Stash::default(),
        changed: Vec::new(),
        last_processed: None,
        work: Vec::new(),
        indices: Vec::new(),
        next_terminated: SmallVec::new(),
    };
    operate(
        source,
        "Persist",
        move |((tag, row), _, _): &Update| key_of(&positions, *tag, row).hashed(),
        state,
    )
}

/// Facts with counts, none of them zero.
type Counts = Vec<(Row, isize)>;

struct KeyState {
    key: Value,
    /// The time point this key was last put on the work list for, plus one (0: never).
    listed: u64,
    held: SmallVec<[Row; 1]>,
    terminated: SmallVec<[Row; 1]>,
    /// The event predicate's facts: (fact, count now, count at the key's last evaluation),
    /// never both zero. Those counted at the last evaluation start h at the next point:
    /// the key's events did not change between that evaluation and the point before this
    /// one, or it would have been evaluated there.
    events: SmallVec<[(Row, isize, isize); 1]>,
    /// h's own input facts, and term's, where there are any (rarely: boxed, the state
    /// is three cache lines without them).
    given: Option<Box<Given>>,
}

/// The input facts of h and of term themselves.
#[derive(Default)]
struct Given {
    own: Counts,
    own_term: Counts,
}

impl KeyState {
    /// h's own input facts that hold.
    fn own(&self) -> impl Iterator<Item = &Row> {
        self.given.iter().flat_map(|given| holding(&given.own))
    }

    /// term's own input facts that hold.
    fn own_term(&self) -> impl Iterator<Item = &Row> {
        self.given.iter().flat_map(|given| holding(&given.own_term))
    }

    /// Adds `diff` to `fact`'s count in h's own input facts (`term` false) or term's.
    fn give(&mut self, term: bool, fact: Row, diff: isize) {
        let given = self.given.get_or_insert_default();
        let counts = if term {
            &mut given.own_term
        } else {
            &mut given.own
        };
        count(counts, fact, diff);
        if given.own.is_empty() && given.own_term.is_empty() {
            self.given = None;
        }
    }
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
        self.held.is_empty()
            | self.terminated.is_empty()
            | self.events.is_empty()
            | self.given.is_none()
    }
}

struct State {
    shape: Shape,
    key_positions: Vec<usize>,
    table: KeyTable<KeyState>,
    stash: super::super::zero_one::Stash<(u32, Row)>,
    /// Keys to evaluate at the point after `last_processed` (see [`State::evaluate`]).
    changed: Vec<usize>,
    last_processed: Option<u64>,
    work: Vec<usize>,
    indices: Vec<usize>,
    next_terminated: SmallVec<[Row; 1]>,
}

/// Adds `diff` to `fact`'s count in `counts`.
fn count(counts: &mut Counts, fact: Row, diff: isize) {
    match counts.iter().position(|(f, _)| *f == fact) {
        Some(i) => {
            counts[i].1 += diff;
            if counts[i].1 == 0 {
                counts.swap_remove(i);
            }
        }
        None => counts.push((fact, diff)),
    }
}

fn holding(counts: &Counts) -> impl Iterator<Item = &Row> {
    counts.iter().filter(|(_, c)| *c > 0).map(|(f, _)| f)
}

impl TimeStepped for State {
    fn stash(&mut self) -> &mut super::super::zero_one::Stash<(u32, Row)> {
        &mut self.stash
    }

    fn next_time(&self, limit: Option<u64>) -> Option<u64> {
        next_time(
            self.stash.first_time(),
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
        self.table.take_keys(
            &changes,
            |tag, row| key_of(positions, tag, row),
            |&key| KeyState {
                key,
                listed: 0,
                held: SmallVec::new(),
                terminated: SmallVec::new(),
                events: SmallVec::new(),
                given: None,
            },
            &mut indices,
            &mut work,
            t,
        );
        for (((tag, row), diff), &index) in changes.drain(..).zip(&indices) {
            let state = &mut self.table.states[index];
            match tag {
                EVENT => match state.events.iter().position(|(f, _, _)| *f == row) {
                    Some(i) => state.events[i].1 += diff,
                    None => state.events.push((row, diff, 0)),
                },
                OWN => state.give(false, row, diff),
                OWN_TERM => state.give(true, row, diff),
                _ => {}
            }
        }
        self.stash.give_back(changes);
        self.indices = indices;
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
    /// The key at `index` at `t` (see the module docs); whether it must be evaluated at
    /// t + 1 although its input does not change there: where it has an event that it does
    /// not hold (which starts at t + 1) or holds a terminated fact (which stops there).
    /// Without either, with the same input, it holds the same at t + 1.
    fn evaluate(&mut self, index: usize, t: u64, out: &mut Vec<Update>) -> bool {
        let Some(state) = self.table.states.get_mut(index) else {
            return false;
        };
        let (pred, term) = (self.shape.pred as u32, self.shape.term as u32);
        let start = out.len();
        let started = |fact: &Row| {
            state
                .events
                .iter()
                .any(|(f, _, before)| *before > 0 && f == fact)
                || state.own().any(|f| f == fact)
        };
        for fact in &state.held {
            if state.terminated.contains(fact) && !started(fact) {
                out.push(((pred, Row::from_slice(fact)), t, -1));
            }
        }
        let stopped = out.len();
        let starts = (state.events.iter())
            .filter(|(_, _, before)| *before > 0)
            .map(|(f, _, _)| f)
            .chain(state.own());
        for fact in starts {
            let new = !state.held.contains(fact)
                && !out[stopped..].iter().any(|((_, f), _, _)| f == fact);
            if new {
                out.push(((pred, Row::from_slice(fact)), t, 1));
            }
        }
        for ((_, fact), _, _) in &out[start..stopped] {
            if let Some(i) = state.held.iter().position(|f| f == fact) {
                state.held.swap_remove(i);
            }
        }
        for ((_, fact), _, _) in &out[stopped..] {
            state.held.push(Row::from_slice(fact));
        }
        // term at t, from what h holds now and the events of t.
        let next = &mut self.next_terminated;
        next.clear();
        next.extend(state.own_term().map(|f| Row::from_slice(f)));
        for x in &state.held {
            let differs = &self.shape.differs;
            let terminated =
                (state.events.iter()).any(|(y, now, _)| *now > 0 && differs.terminates(x, y));
            if terminated && !next.contains(x) {
                next.push(Row::from_slice(x));
            }
        }
        for fact in next.iter() {
            if !state.terminated.contains(fact) {
                out.push(((term, Row::from_slice(fact)), t, 1));
            }
        }
        for fact in &state.terminated {
            if !next.contains(fact) {
                out.push(((term, Row::from_slice(fact)), t, -1));
            }
        }
        std::mem::swap(&mut state.terminated, next);
        // The events of t start h at t + 1.
        state.events.retain(|(_, now, before)| {
            *before = *now;
            *now != 0
        });
        let pending = (state.events.iter()).any(|(f, now, _)| *now > 0 && !state.held.contains(f))
            || state.held.iter().any(|f| state.terminated.contains(f));
        let empty = state.held.is_empty()
            && state.terminated.is_empty()
            && state.events.is_empty()
            && state.given.is_none();
        if empty {
            let key = state.key;
            self.table.remove(&key, index);
            return false;
        }
        pending
    }
}
