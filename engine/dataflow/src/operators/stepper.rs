//! The time-stepping operator for temporal SCCs (recursion through time, e.g. EC inertia
//! `holds(F, T) :- holds(F, T-1), not term(F, T-1)`) and for rules that read the time as a
//! value.
//!
//! A differential `Variable` with a step of one time point would serialise the whole
//! dataflow on time (every time point a round of the iteration, for every key). Instead this
//! operator buffers its input until the frontier passes a time point, then evaluates the
//! component's rules for that time point with [`stgflow_eval::eval`] — per stratum, semi-naive —
//! and emits the differences against the previous time point.
//!
//! **Delta-driven.** State is kept per *key* (the value at the component's key position,
//! see [`crate::plan`]). A key is evaluated at t only where something its rules read may
//! differ from t − 1: its input changed at t, or some predicate changed at t − k that a
//! rule reads k ≥ 1 points back (a *trigger*). The rules are the same at every time point,
//! so where nothing they read differs, what they derive does not either: the key keeps
//! what it held. A trigger is dropped where the rule cannot fire at t nor at t − 1: one of
//! its positive atoms read k or more points back (already known) finds no fact matching
//! its constants at either. So an EC deadline `fi` (`s_i(X, v', T) :- s_i(X, v, T-d),
//! not s_t(X, v, T-d+1), …, not s_t(X, v, T-1)`) wakes a key d points after an
//! initiation of v, not at each of the d points after every termination. A key's facts
//! are kept as runs of equal time points over the horizon (the largest offset read);
//! a key that holds nothing, has no input and nothing to wake it is dropped. Rules that
//! read the time as a value change every time point, so their keys are evaluated at every
//! point while they hold anything. Where a key's input changed at t only in predicates
//! that no rule reads at offset 0 (a vote read one point back), and nothing woke it, its
//! rules see at t what they saw at t − 1: the change is recorded (a run with the new
//! input and the key's own facts copied), and the rules are evaluated when it is read.
//! An input fact that matches the constants of none of the atoms reading it (EC's
//! `status_start(M, voting)` where only `status_start(M, null)` is read) is dropped as
//! it comes in: voting's partial `status_start` facts woke every voter's state of a
//! motion at each change of its status, twice as many evaluations as the votes made.
//!
//! **Refined keys.** Where every rule also carries other variables at fixed positions
//! ([`crate::plan::StepperPlan::sub_key`]), a key's facts are split into states by those
//! values too (`voted(V, M)`: a state per voter and motion, not per motion), so that an
//! evaluation touches one voter's facts. Facts of predicates from outside that carry
//! none of them (*partial*: `status_start(M, null)`, read at offset 0 only) go to every
//! state of their key, and a new state starts with those held.
//!
//! **Rules without a positive atom** (`p(T) :- not p(T-1).`, `d(T) :- T >= 0.`) have no
//! input to put their key on the work list: the component then reads the unit row, fed
//! once at the timeline's first time point, as an input fact of its one key (such a
//! component has no key, see [`crate::plan`]). Without it the rule fired only from the
//! first time point where some other input of the component changed.
//!
//! **Layout.** Keys map to indices into a slab of key states (one hash lookup per input
//! change); the keys to evaluate are lists of indices, marked by the time point they were
//! listed for. A key's relations at a time point ([`SmallRelation`]) and its input counts
//! are short vectors, scanned instead of hashed, until they hold more than
//! [`SMALL_LIMIT`](stgflow_eval::eval::SMALL_LIMIT) entries, when they become hash
//! tables (a component without a key keeps everything under one). Rule evaluation reuses
//! its buffers across keys
//! ([`evaluate_stratum_with`](stgflow_eval::eval::evaluate_stratum_with)).
//!
//! **Sharding.** With a key, input is exchanged by the key's hash and every worker runs
//! the operator for its keys. Without one, everything goes to worker 0.
//!
//! **Pitfall.** The operator keeps a capability at the input frontier and downgrades it as
//! the frontier advances; it outputs at time t only once t is complete. Times that no key
//! needs are skipped.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use hashbrown::HashMap;
use timely::dataflow::operators::core::OkErr;
use timely::dataflow::operators::vec::Broadcast;

use super::Facts;
use super::stepping::{
    Inputs, KeyTable, Keyed, Listed, TimeStepped, Update, list, next_time, operate, operate_looped,
    operate_split,
};
use crate::plan::StepperPlan;
use stgflow_eval::eval::{RulePlan, Scratch, SmallRelation};
use stgflow_lang::ir::{Literal, PredId, Program, has_constants};
use stgflow_lang::value::Row;
use stgflow_lang::value::Value;

mod evaluate;
mod keys;

use evaluate::{Trigger, triggers};
use keys::Keys;

/// Tags of input facts of the component's own predicates carry this bit.
const INPUT_BIT: u32 = 1 << 31;

/// The tag under which input facts of an internal predicate `p` enter the operator.
pub fn input_channel(p: PredId) -> u32 {
    INPUT_BIT | p as u32
}

/// Buffered input: per time point, tagged facts with their differences.
type Stash = super::zero_one::Stash<(u32, Row)>;

/// Renders the operator for `plan` over its tagged `source`; returns its predicates'
/// facts, tagged, as differences over time. Inside a loop through time it is given the
/// unit row as `bound` (see `stepping::operate_looped`), and then runs without refining
/// its key or holding facts on every worker.
pub fn render<'s>(
    program: &Program,
    plan: &StepperPlan,
    source: Facts<'s, u64>,
    bound: Option<super::Coll<'s, u64>>,
) -> Facts<'s, u64> {
    let keys = Keys::new(program, plan);
    let router = keys.clone();
    let state = State::new(program, plan, keys);
    if let Some(bound) = bound {
        debug_assert!(plan.sub_key.is_none() && plan.global.is_empty());
        return operate_looped(
            source,
            bound,
            move |((tag, row), _, _): &Update| router.route(*tag, row),
            state,
        );
    }
    let mut global = vec![false; program.predicates.len()];
    for &p in &plan.global {
        global[p] = true;
    }
    let split = router.sub_positions.is_some() || !plan.global.is_empty();
    if !split || source.inner.scope().peers() == 1 {
        return operate(
            source,
            "Stepper",
            move |((tag, row), _, _): &Update| router.route(*tag, row),
            state,
        );
    }
    // Refined keys: a state's facts go to the worker of its key and refinement (voting's
    // `voted(V, M)` by voter and motion, not by motion: its three query motions put every
    // vote on one worker); the partial facts, which every state of their key reads, and
    // the global ones, which every state reads, to every worker.
    let classify = router.clone();
    let (full, partial) = source.inner.ok_err(move |update| {
        let tag = update.0.0;
        let is_global = tag & INPUT_BIT == 0 && global.get(tag as usize) == Some(&true);
        match classify.refinement(tag) {
            Some(_) if !is_global => Ok(update),
            _ => Err(update),
        }
    });
    operate_split(
        full,
        partial.broadcast(),
        "Stepper",
        move |((tag, row), _, _): &Update| router.route(*tag, row),
        state,
    )
}

/// The worker a fact goes to: the hash of its key value, or worker 0 without a key.
impl Keyed<Row> for KeyState {
    fn key(&self) -> &Row {
        &self.key
    }
}

struct KeyState {
    /// The key's value, then the values of the refining positions (`StepperPlan::sub_key`).
    key: Row,
    /// The time point this key was last put on the work list for, plus one (0: never).
    listed: u64,
    /// The time point at which its rules must be evaluated, plus one: where it is listed
    /// for another time point, its input changed there only in what no rule reads at
    /// offset 0, and the changes are recorded instead (see [`State::evaluate`]).
    full: u64,
    /// Whether the key is in the table: a removed key's index may still be on the wake-up
    /// list.
    live: bool,
    /// The key's facts over the time points its rules can still read, as runs of equal
    /// time points, oldest first, each with its first time point; the last holds up to the
    /// latest time point evaluated, and on until the key is evaluated again.
    runs: VecDeque<(u64, Slot)>,
    /// The latest time point a wake-up is set for.
    wake_until: u64,
    inputs: Inputs,
}

/// A key's facts at one time point, by local predicate.
type Slot = Vec<SmallRelation>;

struct State {
    plans: Vec<RulePlan>,
    strata: Vec<(Vec<usize>, bool)>,
    local_of: Vec<Option<usize>>,
    locals: usize,
    /// Per local index: the predicate, when it is one of the component's own (its changes
    /// are the output).
    internal: Vec<Option<PredId>>,
    /// The local index of the unit row, when the component reads it (a rule without a
    /// positive atom): fed once at the first time point and never retracted, it has the
    /// component's one key evaluated there.
    unit_local: Option<usize>,
    /// Per local index: whether a change of it at t needs the rules evaluated at t — some
    /// rule reads it at offset 0, or it is one of the component's own (its facts are the
    /// output). A change of any other input is only recorded at t ([`State::evaluate`]).
    read_now: Vec<bool>,
    /// Per local index of an input from outside: the constants of each atom that reads
    /// it, when every such atom has some. A fact that matches none of them can never be
    /// read, and is dropped as it comes in (`status_start(M, voting)` where the rules read
    /// only `status_start(M, null)`: a partial fact that would wake every state of M).
    /// `None`: every fact is kept.
    wanted: Vec<Option<Vec<Constants>>>,
    triggers: Vec<Vec<Trigger>>,
    keys: Keys,
    /// Per local index: whether it is a partial predicate's, whose facts every state of
    /// their key reads (see [`Group`]).
    partial_local: Vec<bool>,
    /// Per key value with partial facts or refined states: those facts and states.
    groups: HashMap<Value, Group>,
    /// Per local index: whether it is a global predicate's (`StepperPlan::global`), whose
    /// facts every state reads; and those facts.
    global_local: Vec<bool>,
    global_facts: Inputs,
    horizon: u64,
    uses_time: bool,
    /// The keys' states (one hash lookup per input change).
    table: KeyTable<KeyState, Row>,
    /// Keys to evaluate at later time points even without input: (time point, index).
    wakeups: BinaryHeap<Reverse<(u64, usize)>>,
    stash: Stash,
    last_processed: Option<u64>,
    /// Emptied slots, for the next runs to fill.
    spare_slots: Vec<Slot>,
    /// The keys to evaluate at the time point being processed.
    work: Vec<usize>,
    /// The local indices that changed in the key being evaluated, and the time points
    /// they wake it at.
    changed: Vec<usize>,
    wake_at: Vec<u64>,
    scratch: Scratch,
}

/// An atom's constants: (position, value).
type Constants = Vec<(usize, Value)>;

/// Most emptied slots kept for reuse.
const MAX_SPARE_SLOTS: usize = 1024;

/// With a refined key: a key value's partial facts (read at offset 0 only, so only what
/// holds now matters) and the states that read them. A partial fact goes to every member's
/// input; a new state starts with the facts held.
#[derive(Default)]
struct Group {
    facts: Inputs,
    members: Vec<usize>,
}

impl State {
    fn new(program: &Program, plan: &StepperPlan, keys: Keys) -> State {
        let n = program.predicates.len();
        let mut local_of = vec![None; n];
        let mut locals = 0;
        for &p in plan.preds.iter().chain(&plan.reads) {
            local_of[p] = Some(locals);
            locals += 1;
        }
        let unit_local = plan.reads_unit.then(|| {
            locals += 1;
            locals - 1
        });
        let mut partial_local = vec![false; locals];
        if let Some(sub) = &keys.sub_positions {
            for &p in plan.preds.iter().chain(&plan.reads) {
                if let (Some(local), None) = (local_of[p], &sub[p]) {
                    partial_local[local] = true;
                }
            }
        }
        let mut global_local = vec![false; locals];
        for &p in &plan.global {
            if let Some(local) = local_of[p] {
                global_local[local] = true;
                // A state that holds nothing else holds nothing of its own.
                partial_local[local] = true;
            }
        }
        let mut internal = vec![None; locals];
        for &p in &plan.preds {
            if let Some(local) = local_of[p] {
                internal[local] = Some(p);
            }
        }
        let mut read_now: Vec<bool> = internal.iter().map(Option::is_some).collect();
        let mut wanted: Vec<Option<Vec<Constants>>> = internal
            .iter()
            .map(|p| p.is_none().then(Vec::new))
            .collect();
        if let Some(unit) = unit_local {
            read_now[unit] = true;
            wanted[unit] = None;
        }
        for &r in &plan.rules {
            for atom in program.rules[r].body.iter().filter_map(Literal::atom) {
                let Some(local) = local_of[atom.pred] else {
                    continue;
                };
                if atom.offset == 0 {
                    read_now[local] = true;
                }
                let constants = stgflow_lang::ir::constants(&atom.args);
                if constants.is_empty() {
                    wanted[local] = None;
                } else if let Some(patterns) = &mut wanted[local] {
                    patterns.push(constants);
                }
            }
        }
        // Plans are indexed by position in `plan.rules`; strata refer to program rule ids.
        let index_of = |r: usize| plan.rules.iter().position(|&x| x == r);
        let plans = plan
            .rules
            .iter()
            .map(|&r| {
                let rule = &program.rules[r];
                let stratum = plan.strata.iter().position(|(rules, _)| rules.contains(&r));
                let same = |p: PredId| {
                    plan.strata.iter().position(|(rules, _)| {
                        rules.iter().any(|&q| program.rules[q].head.pred == p)
                    }) == stratum
                };
                RulePlan::new(rule, same)
            })
            .collect();
        let strata = plan
            .strata
            .iter()
            .map(|(rules, recursive)| {
                (
                    rules.iter().filter_map(|&r| index_of(r)).collect(),
                    *recursive,
                )
            })
            .collect();
        State {
            plans,
            strata,
            triggers: triggers(program, plan, &local_of, locals),
            local_of,
            locals,
            internal,
            unit_local,
            read_now,
            wanted,
            keys,
            partial_local,
            groups: HashMap::new(),
            global_local,
            global_facts: Inputs::default(),
            horizon: u64::from(plan.horizon),
            uses_time: plan.uses_time,
            table: KeyTable::default(),
            wakeups: BinaryHeap::new(),
            stash: Stash::default(),
            last_processed: None,
            spare_slots: Vec::new(),
            work: Vec::new(),
            changed: Vec::new(),
            wake_at: Vec::new(),
            scratch: Scratch::default(),
        }
    }

    /// The local index that facts tagged `tag` are kept under.
    fn local_of_tag(&self, tag: u32) -> Option<usize> {
        if tag == super::UNIT_TAG {
            return self.unit_local;
        }
        self.local_of
            .get((tag & !INPUT_BIT) as usize)
            .copied()
            .flatten()
    }

    /// Whether `slot` holds nothing but partial facts.
    fn holds_nothing(&self, slot: &Slot) -> bool {
        slot.iter()
            .enumerate()
            .all(|(local, relation)| self.partial_local[local] || relation.is_empty())
    }

    /// Keeps `slot` for reuse, emptied.
    fn recycle(&mut self, mut slot: Slot) {
        if self.spare_slots.len() < MAX_SPARE_SLOTS && slot.len() == self.locals {
            slot.iter_mut().for_each(SmallRelation::clear);
            self.spare_slots.push(slot);
        }
    }

    /// Drops the runs of the key at `index` that no time point from `from` on reads:
    /// those before the one that holds at `from − horizon`.
    fn drop_runs(&mut self, index: usize, from: u64) {
        let oldest = from.saturating_sub(self.horizon);
        loop {
            let runs = &mut self.table.states[index].runs;
            if runs.len() < 2 || runs[1].0 > oldest {
                return;
            }
            if let Some((_, slot)) = runs.pop_front() {
                self.recycle(slot);
            }
        }
    }
}

impl Listed for KeyState {
    fn listed(&mut self) -> &mut u64 {
        &mut self.listed
    }

    fn touch(&self) -> bool {
        self.runs.is_empty() | self.inputs.is_empty()
    }
}

impl TimeStepped for State {
    fn stash(&mut self) -> &mut super::zero_one::Stash<(u32, Row)> {
        &mut self.stash
    }

    fn next_time(&self, limit: Option<u64>) -> Option<u64> {
        // Once the input is closed there are no more time points to wake keys at.
        let woken = limit.and(self.wakeups.peek().map(|Reverse((t, _))| *t));
        let first = match (self.stash.first_time(), woken) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        next_time(first, false, self.last_processed, limit)
    }

    fn process(&mut self, t: u64, out: &mut Vec<Update>) {
        let mut work = std::mem::take(&mut self.work);
        work.clear();
        let mut changes = self.stash.take(t);
        for ((tag, row), diff) in changes.drain(..) {
            let Some(local) = self.local_of_tag(tag) else {
                continue;
            };
            if let Some(patterns) = &self.wanted[local] {
                if !patterns.iter().any(|pattern| has_constants(&row, pattern)) {
                    continue;
                }
            }
            if self.global_local[local] {
                // A global fact: every state reads it.
                let full = if self.read_now[local] { t + 1 } else { 0 };
                for (index, state) in self.table.states.iter_mut().enumerate() {
                    if state.live {
                        state.inputs.add(local, Row::from_slice(&row), diff);
                        list(&mut work, state, index, t);
                        state.full = state.full.max(full);
                    }
                }
                self.global_facts.add(local, row, diff);
                continue;
            }
            let value = self.keys.key_value(tag, &row);
            let Some(key) = self.keys.state_key(value, tag, &row) else {
                // A partial fact: every state of its key reads it.
                let group = self.groups.entry(value).or_default();
                let full = if self.read_now[local] { t + 1 } else { 0 };
                for &index in &group.members {
                    let state = &mut self.table.states[index];
                    state.inputs.add(local, Row::from_slice(&row), diff);
                    list(&mut work, state, index, t);
                    state.full = state.full.max(full);
                }
                group.facts.add(local, row, diff);
                if group.facts.is_empty() && group.members.is_empty() {
                    self.groups.remove(&value);
                }
                continue;
            };
            let mut made = false;
            let index = self.table.index(key, |key| {
                made = true;
                KeyState {
                    key: key.clone(),
                    listed: 0,
                    full: 0,
                    live: true,
                    runs: VecDeque::new(),
                    wake_until: 0,
                    inputs: Inputs::default(),
                }
            });
            let state = &mut self.table.states[index];
            if made && !self.global_facts.is_empty() {
                // A new state reads the global facts held.
                for (l, fact, count) in self.global_facts.iter() {
                    state.inputs.add(l, Row::from_slice(fact), count);
                }
                state.full = t + 1;
            }
            if made && self.keys.sub_positions.is_some() {
                // A new state of a refined key: it reads the partial facts held.
                let group = self.groups.entry(value).or_default();
                group.members.push(index);
                for (l, fact, count) in group.facts.iter() {
                    state.inputs.add(l, Row::from_slice(fact), count);
                }
                if !group.facts.is_empty() {
                    state.full = t + 1;
                }
            }
            list(&mut work, state, index, t);
            if self.read_now[local] {
                state.full = t + 1;
            }
            state.inputs.add(local, row, diff);
        }
        self.stash.give_back(changes);
        while let Some(&Reverse((at, index))) = self.wakeups.peek() {
            if at > t {
                break;
            }
            self.wakeups.pop();
            if let Some(state) = self.table.states.get_mut(index) {
                if state.live {
                    list(&mut work, state, index, t);
                    state.full = t + 1;
                }
            }
        }
        for &index in &work {
            self.evaluate(index, t, out);
        }
        self.work = work;
        self.last_processed = Some(t);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;
    use stgflow_eval::reference::Reference;
    use stgflow_io::drive::Evaluator;
    use stgflow_lang::compile_str;
    use stgflow_lang::ir::{PredId, Program};
    use stgflow_lang::stratify::Analysis;
    use stgflow_lang::value::{Row, Value};

    use super::{input_channel, render};
    use crate::operators::UNIT_TAG;
    use crate::operators::testing::{
        Held, Snapshot, Update, assert_same_at_every_time, at, changes, held, run, set, snapshots,
    };
    use crate::plan::{Component, StepperPlan, plan};

    const END: u64 = 30;
    /// Records per input predicate: its rows over the values 0, 1, 2, at most this many.
    const RECORDS: usize = 9;
    /// Input predicates a test program may have, and how many of them its own.
    const INPUTS: usize = 3;

    /// EC inertia, keyed by the fluent.
    const INERTIA: &str = "holds(F, T) :- init(F, T-1).\n\
                           holds(F, T) :- holds(F, T-1), not term(F, T-1).\n";
    /// EC inertia with a value: facts of one fluent have several rows, which must all
    /// meet on the fluent's worker.
    const INERTIA_VALUES: &str = "holds(F, V, T) :- init(F, V, T-1).\n\
                                  holds(F, V, T) :- holds(F, V, T-1), not term(F, T-1).\n";
    /// A negation without the key: no key, everything on worker 0.
    const UNKEYED: &str = "s(X, T) :- s(X, T-1), not alarm(T-1).\ns(X, T) :- r(X, T).\n";
    /// A rule without a positive atom: the component reads the unit row.
    const UNIT: &str = "p(T) :- not p(T-1).\n";
    /// Two predicates, two time points back: a key's horizon is 2.
    const HORIZON_2: &str = "a(X, T) :- b(X, T-2), not c(X, T-1).\n\
                             b(X, T) :- a(X, T-1).\nb(X, T) :- i(X, T).\n";
    /// Reads an input 3 time points back, unkeyed: keys go quiescent and must still see
    /// it when they wake.
    const LOOKBACK_3: &str = "p0(Z, T) :- p0(Z, T-1), e0(T-3), e1(T).\np0(Z, T) :- i(Z, T).\n";
    /// The time as a value: keys stay active while they hold anything.
    const TIME_AS_VALUE: &str = "stamped(E, S, T) :- event(E, T), S = T * 10, T >= 2.\n";
    /// A deadline (Algorithm 3's `fi`): an initiation of value 0 initiates 1 three points
    /// later unless 0 was terminated in between. The negations at T-2 and T-1 wake a key
    /// only where `s_i(X, 0, _)` held three points before (the triggers' guards).
    const DEADLINE: &str = "s_i(X, 1, T) :- s_i(X, 0, T-3), not s_t(X, 0, T-2), not s_t(X, 0, T-1).\n\
                            s_i(X, 0, T) :- go(X, T), not s(X, 0, T).\n\
                            s(X, V, T) :- s_i(X, V, T-1).\n\
                            s(X, V, T) :- s(X, V, T-1), not s_t(X, V, T-1).\n\
                            s_t(X, 0, T) :- s_i(X, 1, T).\n\
                            s_t(X, 1, T) :- s_i(X, 0, T).\n\
                            s_t(X, V, T) :- halt(X, V, T).\n";
    /// Keyed by M, each state by (V, M): `reset(M)` and `open(M)` are partial, read by
    /// every state of their M (one positive, one negated).
    const REFINED: &str = "held(V, M, T) :- start(V, M, T-1).\n\
                           held(V, M, T) :- held(V, M, T-1), not stop(V, M, T-1).\n\
                           stop(V, M, T) :- reset(M, T), held(V, M, T).\n\
                           stop(V, M, T) :- held(V, M, T), start(V, M, T), not open(M, T).\n";

    /// Voting's `voted` as RTEC's timing writes it: keyed by M, each state by (V, M);
    /// `reset(M, 2)` a partial fact with a constant (`reset(M, 0)` and `reset(M, 1)` are
    /// dropped as they come), `stop_at` read one point back only (its changes recorded,
    /// not evaluated, where nothing else changed), `cleared` at once from the state at T-1.
    const VOTED: &str = "held(V, M, T) :- start(V, M, T-1), not stop_at(V, M, 1, T-1).\n\
                         held(V, M, T) :- held(V, M, T-1), not stop_at(V, M, 1, T-1), not cleared(V, M, T).\n\
                         cleared(V, M, T) :- reset(M, 2, T), held(V, M, T-1).\n";

    /// A compiled program that plans as one time-stepping component.
    struct Case {
        program: Program,
        analysis: Analysis,
        plan: StepperPlan,
    }

    fn case(text: &str) -> Case {
        let compiled = compile_str("t.tdl", text);
        assert!(
            !compiled.has_errors(),
            "{}",
            compiled.render_diagnostics(false)
        );
        let analysis = compiled.analysis.expect("a program without errors");
        let planned = plan(&compiled.program, &analysis, false);
        let [Component::Stepper(stepper)] = planned.components.as_slice() else {
            panic!("not one time-stepping component: {planned:?}")
        };
        Case {
            plan: stepper.clone(),
            program: compiled.program,
            analysis,
        }
    }

    /// Up to `RECORDS` rows of `arity` values from 0, 1, 2.
    fn rows(arity: usize) -> Vec<Row> {
        let mut rows: Vec<Row> = vec![Row::new()];
        for _ in 0..arity {
            rows = rows
                .into_iter()
                .flat_map(|row| {
                    (0..3).map(move |v| {
                        let mut row = row.clone();
                        row.push(Value::Int(v));
                        row
                    })
                })
                .collect();
        }
        rows.truncate(RECORDS);
        rows
    }

    /// One input of the operator: a predicate, the tag it enters under, its records and
    /// where each holds.
    struct Input<'a> {
        pred: PredId,
        tag: u32,
        rows: Vec<Row>,
        held: &'a Held,
    }

    /// The component's inputs as `render` feeds them: the predicates it reads, then the
    /// input facts of its own predicates (sparser), each with one of `held`.
    fn inputs<'a>(case: &Case, reads: &'a [Held], own: &'a [Held]) -> Vec<Input<'a>> {
        let arity = |p: PredId| case.program.predicates[p].arity;
        let read = case.plan.reads.iter().zip(reads).map(|(&p, held)| Input {
            pred: p,
            tag: p as u32,
            rows: rows(arity(p)),
            held,
        });
        let owned = case.plan.preds.iter().zip(own).map(|(&p, held)| Input {
            pred: p,
            tag: input_channel(p),
            rows: rows(arity(p)),
            held,
        });
        assert!(case.plan.reads.len() <= reads.len() && case.plan.preds.len() <= own.len());
        read.chain(owned).collect()
    }

    /// The reference evaluator's facts of the component's predicates at each time point.
    fn reference(case: &Case, inputs: &[Input<'_>]) -> Vec<Snapshot<(u32, Row)>> {
        let mut reference = Reference::new(&case.program, &case.analysis);
        (0..END)
            .map(|t| {
                let mut facts = Vec::new();
                for input in inputs {
                    for (r, row) in input.rows.iter().enumerate() {
                        if at(input.held, r, t as i64) {
                            facts.push((input.pred, row.clone()));
                        }
                    }
                }
                let mut out = Vec::new();
                reference
                    .step(t, facts, &case.plan.preds, &mut out)
                    .expect("the reference evaluates");
                set(out.into_iter().map(|(p, row)| (p as u32, row)))
            })
            .collect()
    }

    fn check(text: &str, workers: usize, reads: &[Held], own: &[Held], batch: u64) {
        check_holding(text, workers, (reads, own), batch, false);
    }

    /// [`check`] with the operator as it runs inside a loop through time (`looped`): a
    /// capability held only while it has work.
    fn check_holding(
        text: &str,
        workers: usize,
        (reads, own): (&[Held], &[Held]),
        batch: u64,
        looped: bool,
    ) {
        let case = case(text);
        let inputs = inputs(&case, reads, own);
        let mut fed: Vec<Update<(u32, Row)>> = Vec::new();
        for input in &inputs {
            let tagged: Vec<(u32, Row)> = input
                .rows
                .iter()
                .map(|row| (input.tag, row.clone()))
                .collect();
            fed.extend(changes(&tagged, input.held));
        }
        if case.plan.reads_unit {
            // Once, at the timeline's first time point, never retracted (`runtime::feeder`).
            fed.push(((UNIT_TAG, Row::new()), 0, 1));
        }
        fed.sort_by_key(|(_, t, _)| *t);
        let expected = reference(&case, &inputs);
        let Case { program, plan, .. } = case;
        let (program, plan) = (Arc::new(program), Arc::new(plan));
        let output = run(workers, vec![fed], END, batch, move |mut fed| {
            let source = fed.pop().expect("one input");
            // In a loop the operator reads where the input has got to (the runtime's unit
            // row): here, the input itself.
            let bound = looped
                .then(|| crate::operators::records::flat_map(source.clone(), |_| None::<Row>));
            render(&program, &plan, source, bound)
        });
        assert_same_at_every_time(&snapshots(&output, END), &expected);
    }

    /// Inputs for up to `INPUTS` read predicates and `INPUTS` own ones, the own ones rarer.
    fn held_inputs() -> impl Strategy<Value = (Vec<Held>, Vec<Held>)> {
        (
            prop::collection::vec(held(RECORDS, END, 6, 6), INPUTS),
            prop::collection::vec(held(RECORDS, END, 20, 2), INPUTS),
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]

        #[test]
        fn inertia_keyed_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(INERTIA, 1, &reads, &own, batch);
        }

        #[test]
        fn inertia_keyed_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(INERTIA, 3, &reads, &own, batch);
        }

        #[test]
        fn inertia_with_values_keyed_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(INERTIA_VALUES, 1, &reads, &own, batch);
        }

        #[test]
        fn inertia_with_values_keyed_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(INERTIA_VALUES, 3, &reads, &own, batch);
        }

        #[test]
        fn unkeyed_negation_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(UNKEYED, 1, &reads, &own, batch);
        }

        #[test]
        fn unkeyed_negation_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(UNKEYED, 3, &reads, &own, batch);
        }

        #[test]
        fn no_positive_atom_with_unit_row_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(UNIT, 1, &reads, &own, batch);
        }

        #[test]
        fn no_positive_atom_with_unit_row_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(UNIT, 3, &reads, &own, batch);
        }

        #[test]
        fn horizon_2_two_predicates_keyed_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(HORIZON_2, 1, &reads, &own, batch);
        }

        #[test]
        fn horizon_2_two_predicates_keyed_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(HORIZON_2, 3, &reads, &own, batch);
        }

        #[test]
        fn lookback_3_unkeyed_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(LOOKBACK_3, 1, &reads, &own, batch);
        }

        #[test]
        fn deadline_keyed_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(DEADLINE, 1, &reads, &own, batch);
        }

        #[test]
        fn deadline_keyed_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(DEADLINE, 3, &reads, &own, batch);
        }

        #[test]
        fn refined_key_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(REFINED, 1, &reads, &own, batch);
        }

        #[test]
        fn refined_key_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(REFINED, 3, &reads, &own, batch);
        }

        #[test]
        fn voted_refined_with_constants_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(VOTED, 1, &reads, &own, batch);
        }

        #[test]
        fn voted_refined_with_constants_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(VOTED, 3, &reads, &own, batch);
        }

        #[test]
        fn deadline_in_a_loop_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check_holding(DEADLINE, 3, (&reads, &own), batch, true);
        }

        #[test]
        fn inertia_with_values_in_a_loop_matches_the_reference_30_time_points_2_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check_holding(INERTIA_VALUES, 2, (&reads, &own), batch, true);
        }

        #[test]
        fn lookback_3_in_a_loop_matches_the_reference_30_time_points_1_worker(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check_holding(LOOKBACK_3, 1, (&reads, &own), batch, true);
        }

        #[test]
        fn time_as_value_keyed_matches_the_reference_30_time_points_3_workers(
            (reads, own) in held_inputs(), batch in 1..4u64,
        ) {
            check(TIME_AS_VALUE, 3, &reads, &own, batch);
        }
    }

    #[test]
    fn test_programs_plan_as_intended() {
        assert!(case(INERTIA).plan.key.is_some());
        assert!(case(INERTIA_VALUES).plan.key.is_some());
        assert!(case(UNKEYED).plan.key.is_none());
        let unit = case(UNIT).plan;
        assert!(unit.reads_unit && unit.key.is_none());
        let horizon_2 = case(HORIZON_2).plan;
        assert_eq!((horizon_2.horizon, horizon_2.preds.len()), (2, 2));
        assert!(horizon_2.key.is_some());
        let lookback = case(LOOKBACK_3).plan;
        assert_eq!((lookback.horizon, lookback.key.is_none()), (3, true));
        let time = case(TIME_AS_VALUE).plan;
        assert!(time.uses_time && time.key.is_some());
        let deadline = case(DEADLINE).plan;
        assert_eq!((deadline.horizon, deadline.preds.len()), (3, 3));
        assert!(deadline.key.is_some() && deadline.sub_key.is_none());
        let refined = case(REFINED);
        let name = |p: PredId| refined.program.pred_name(p).to_owned();
        let mut sub: Vec<(String, Vec<usize>)> = refined
            .plan
            .sub_key
            .iter()
            .flatten()
            .map(|(&p, is)| (name(p), is.clone()))
            .collect();
        sub.sort();
        let expected = [("held", 0), ("start", 0), ("stop", 0)];
        let expected: Vec<(String, Vec<usize>)> = expected
            .iter()
            .map(|(p, i)| (p.to_string(), vec![*i]))
            .collect();
        assert_eq!(sub, expected, "reset and open are partial");
        let voted = case(VOTED);
        let name = |p: PredId| voted.program.pred_name(p).to_owned();
        let mut partial: Vec<String> = voted
            .plan
            .reads
            .iter()
            .filter(|p| !voted.plan.sub_key.iter().flatten().any(|(q, _)| q == *p))
            .map(|&p| name(p))
            .collect();
        partial.sort();
        assert_eq!(
            partial,
            ["reset"],
            "reset is partial, refined by V elsewhere"
        );
    }

    #[test]
    fn triggers_are_guarded_by_positive_atoms_read_as_far_back() {
        let deadline = case(DEADLINE);
        let local = |name: &str| {
            let p = deadline
                .program
                .pred_id(name)
                .expect("a predicate of the program");
            deadline
                .plan
                .preds
                .iter()
                .chain(&deadline.plan.reads)
                .position(|&q| q == p)
        };
        let keys = super::Keys::new(&deadline.program, &deadline.plan);
        let state = super::State::new(&deadline.program, &deadline.plan, keys);
        let s_t = local("s_t").expect("s_t is local");
        let s_i = local("s_i").expect("s_i is local");
        // s_t is read at T-2 and T-1 by the deadline rule, guarded by s_i(X, 0, T-3), and
        // at T-1 by the keep rule, guarded by s(X, V, T-1).
        let mut offsets: Vec<(u64, usize)> = state.triggers[s_t]
            .iter()
            .map(|t| (t.offset, t.guards.len()))
            .collect();
        offsets.sort_unstable();
        assert_eq!(offsets, [(1, 1), (1, 1), (2, 1)]);
        let guarded = state.triggers[s_t]
            .iter()
            .find(|t| t.offset == 2)
            .expect("T-2");
        assert_eq!(guarded.guards[0].local, s_i);
        assert_eq!(guarded.guards[0].offset, 3);
        assert_eq!(guarded.guards[0].constants, [(1, Value::Int(0))]);
    }
}
