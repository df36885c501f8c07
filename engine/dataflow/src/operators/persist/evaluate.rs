//! A time point of the persistence operator: its changes applied to the keys' inputs
//! ([`apply`], and through the slots' delays), and each key that may change evaluated
//! ([`State::evaluate`]), its derived predicates first ([`State::derive`]).

use super::super::stepping::{Inputs, TimeStepped, Update, diff, list, next_time};
use super::rules::{Derived, Inverse, Keep, Need, Probed, Source, Virtual, probe_row, probed};
use super::{KeyState, Pending, START, SlotUse, State, key_of};
use stgflow_eval::eval::{Facts as FactStore, Rows, SmallRelation};
use stgflow_lang::ir::PredId;
use stgflow_lang::value::{Row, Value};

/// Whether the key's input `local` holds `row`: as its own fact, or as the copy of a
/// source fact it holds (`virtuals`).
fn holds_in(state: &KeyState, virtuals: &[Vec<Virtual>], local: usize, row: &[Value]) -> bool {
    state.inputs.holds(local, row)
        || (virtuals.get(local).into_iter().flatten()).any(|v| {
            v.source_of(row)
                .is_some_and(|source| state.inputs.holds(v.from, &source))
        })
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
    fn stash(&mut self) -> &mut super::super::zero_one::Stash<(u32, Row)> {
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
