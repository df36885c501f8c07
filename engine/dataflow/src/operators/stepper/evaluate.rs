//! One key's evaluation at a time point in the time-stepping operator
//! ([`State::evaluate`]): the rules over its runs of facts ([`KeyView`]), the changes
//! against the time point before, and the later time points those changes wake it at
//! ([`Trigger`]).

use std::cmp::Reverse;
use std::collections::VecDeque;

use hashbrown::HashSet;

use super::super::stepping::{Inputs, Update, diff};
use super::{Slot, State};
use crate::plan::StepperPlan;
use stgflow_eval::eval::{Facts as FactStore, Rows, SmallRelation, evaluate_stratum_with};
use stgflow_lang::ir::{Literal, PredId, Program, has_constants};
use stgflow_lang::value::{Row, Value};

/// What a change of a local predicate at s makes necessary: evaluating its key at s +
/// `offset`, where a rule reads it (see the [module docs](super)), unless one of `guards`
/// (the rule's positive atoms read at least as far back) has no fact there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Trigger {
    pub(super) offset: u64,
    pub(super) guards: Vec<Guard>,
}

/// A positive atom of a rule: its local predicate, its offset and its constants.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub(super) struct Guard {
    pub(super) local: usize,
    pub(super) offset: u64,
    pub(super) constants: Vec<(usize, Value)>,
}

impl Guard {
    /// Whether the atom may find a fact when its rule is evaluated at `t` or at t − 1,
    /// both read off `runs` (time points before the first run hold nothing).
    fn may_match(&self, runs: &VecDeque<(u64, Slot)>, t: u64) -> bool {
        let read = |time: u64| {
            at(runs, time)
                .and_then(|slot| slot.get(self.local))
                .is_some_and(|relation| {
                    relation
                        .rows()
                        .any(|row| has_constants(row, &self.constants))
                })
        };
        let Some(now) = t.checked_sub(self.offset) else {
            return false;
        };
        read(now) || now.checked_sub(1).is_some_and(read)
    }
}

/// The slot `runs` hold at `time`: the last run starting at or before it.
fn at(runs: &VecDeque<(u64, Slot)>, time: u64) -> Option<&Slot> {
    runs.iter()
        .rev()
        .find(|(start, _)| *start <= time)
        .map(|(_, slot)| slot)
}

/// Each local predicate's triggers: for every body atom read k ≥ 1 time points back, a
/// trigger at k guarded by the rule's positive atoms read k or more points back.
pub(super) fn triggers(
    program: &Program,
    plan: &StepperPlan,
    local_of: &[Option<usize>],
    locals: usize,
) -> Vec<Vec<Trigger>> {
    let mut triggers: Vec<Vec<Trigger>> = vec![Vec::new(); locals];
    // Each trigger once, found by hash: a long deadline's rule gives thousands.
    let mut seen: HashSet<(usize, Trigger)> = HashSet::new();
    for &r in &plan.rules {
        let rule = &program.rules[r];
        for atom in rule.body.iter().filter_map(Literal::atom) {
            let Some(local) = local_of.get(atom.pred).copied().flatten() else {
                continue;
            };
            if atom.offset == 0 {
                continue;
            }
            let guards = rule
                .body
                .iter()
                .filter_map(|literal| match literal {
                    Literal::Positive(b) if b.offset >= atom.offset => Some(b),
                    _ => None,
                })
                .filter_map(|b| {
                    Some(Guard {
                        local: local_of.get(b.pred).copied().flatten()?,
                        offset: u64::from(b.offset),
                        constants: stgflow_lang::ir::constants(&b.args),
                    })
                })
                .collect();
            let trigger = Trigger {
                offset: u64::from(atom.offset),
                guards,
            };
            if seen.insert((local, trigger.clone())) {
                triggers[local].push(trigger);
            }
        }
    }
    triggers
}

impl State {
    /// Evaluates the key at `index` at `t`: its facts there, their changes against t − 1
    /// (the output), and the later time points those changes wake it at.
    ///
    /// Over 100 lines: the steps of one key's time point (a new run, evaluate, diff,
    /// wake-ups, drop what is no longer read, forget an empty key), in order.
    pub(super) fn evaluate(&mut self, index: usize, t: u64, out: &mut Vec<Update>) {
        if !self.table.states.get(index).is_some_and(|s| s.live) {
            return;
        }
        self.drop_runs(index, t);
        let mut slot = self
            .spare_slots
            .pop()
            .unwrap_or_else(|| vec![SmallRelation::default(); self.locals]);
        let state = &mut self.table.states[index];
        // Only inputs that no rule reads at offset 0 changed, and nothing woke the key: the
        // rules see at t what they saw at t − 1, so they derive what they derived (nothing,
        // for a new key). The component's own facts are copied, the inputs recorded for
        // the rules that read them later.
        let full = state.full == t + 1 || self.uses_time;
        for (local, fact, count) in state.inputs.iter() {
            if count > 0 && (full || self.internal[local].is_none()) {
                if let Some(relation) = slot.get_mut(local) {
                    relation.insert(Row::from_slice(fact));
                }
            }
        }
        if !full {
            if let Some((_, before)) = state.runs.back() {
                for (local, relation) in slot.iter_mut().enumerate() {
                    if self.internal[local].is_some() {
                        relation.clone_from(&before[local]);
                    }
                }
            }
        }
        state.runs.push_back((t, slot));
        if full {
            let mut view = KeyView {
                runs: &mut state.runs,
                local_of: &self.local_of,
            };
            for (rules, recursive) in &self.strata {
                evaluate_stratum_with(
                    &self.plans,
                    rules,
                    *recursive,
                    t,
                    &mut view,
                    &mut self.scratch,
                );
            }
        }
        // What changed against t − 1, which the run before holds (nothing for a new key).
        self.changed.clear();
        let len = state.runs.len();
        let empty = SmallRelation::default();
        for local in 0..self.locals {
            if !full && self.internal[local].is_some() {
                continue;
            }
            let now = &state.runs[len - 1].1[local];
            let before = match len {
                2.. => &state.runs[len - 2].1[local],
                _ => &empty,
            };
            let changed = match self.internal[local] {
                Some(pred) => diff(pred, before, now, t, out),
                None => {
                    now.iter().count() != before.iter().count()
                        || now.iter().any(|f| !before.contains_row(f))
                }
            };
            if changed {
                self.changed.push(local);
            }
        }
        self.wake_at.clear();
        for &local in &self.changed {
            for trigger in &self.triggers[local] {
                let at = t + trigger.offset;
                if trigger.guards.iter().all(|g| g.may_match(&state.runs, at)) {
                    self.wake_at.push(at);
                }
            }
        }
        // Any fact the rules can still read, at t or up to `horizon` points back: what the
        // key held at t − 1 is read at t + 1 by an atom at offset 2.
        let holds_anything = || {
            state.runs.iter().any(|(_, slot)| {
                slot.iter()
                    .enumerate()
                    .any(|(local, r)| !self.partial_local[local] && !r.is_empty())
            })
        };
        if self.uses_time && holds_anything() {
            // Rules that read the time as a value derive something new every time point.
            self.wake_at.push(t + 1);
        }
        let unchanged = self.changed.is_empty();
        self.wake_at.sort_unstable();
        self.wake_at.dedup();
        for &at in &self.wake_at {
            self.wakeups.push(Reverse((at, index)));
            state.wake_until = state.wake_until.max(at);
        }
        if unchanged {
            // t repeats t − 1: the run before holds on.
            if let Some((_, slot)) = state.runs.pop_back() {
                self.recycle(slot);
            }
        }
        self.drop_runs(index, t + 1);
        let state = &mut self.table.states[index];
        let wake_until = state.wake_until;
        if wake_until > t {
            return;
        }
        if state.runs.len() > 1 {
            // Nothing wakes the key before its older runs fall out of the horizon: wake it
            // then, to drop them (and the key, once it holds nothing).
            let at = state
                .runs
                .back()
                .map_or(t, |(start, _)| start + self.horizon);
            state.wake_until = at.max(t + 1);
            self.wakeups.push(Reverse((state.wake_until, index)));
            return;
        }
        let state = &self.table.states[index];
        let empty = state.runs.iter().all(|(_, slot)| self.holds_nothing(slot));
        let partial = &self.partial_local;
        if !empty || !state.inputs.iter().all(|(local, _, _)| partial[local]) {
            return;
        }
        let state = &mut self.table.states[index];
        state.live = false;
        let key = std::mem::take(&mut state.key);
        let runs = std::mem::take(&mut state.runs);
        state.inputs = Inputs::default();
        self.table.remove(&key, index);
        for (_, slot) in runs {
            self.recycle(slot);
        }
        if let (Some(value), Some(_)) = (key.first(), &self.keys.sub_positions) {
            if let Some(group) = self.groups.get_mut(value) {
                group.members.retain(|&i| i != index);
                if group.members.is_empty() && group.facts.is_empty() {
                    self.groups.remove(value);
                }
            }
        }
    }
}

/// A key's time points as a fact store for [`evaluate_stratum`]: each time point's facts
/// are its run's; facts derived go to the last run, the time point being evaluated.
struct KeyView<'a> {
    runs: &'a mut VecDeque<(u64, Slot)>,
    local_of: &'a [Option<usize>],
}

impl FactStore for KeyView<'_> {
    type Relation = SmallRelation;

    fn relation(&self, pred: PredId, time: u64) -> Option<&SmallRelation> {
        let local = self.local_of.get(pred).copied().flatten()?;
        at(self.runs, time)?.get(local)
    }

    fn insert(&mut self, pred: PredId, tuple: Row) -> bool {
        let Some(local) = self.local_of.get(pred).copied().flatten() else {
            return false;
        };
        self.runs
            .back_mut()
            .and_then(|(_, slot)| slot.get_mut(local))
            .is_some_and(|relation| relation.insert(tuple))
    }
}
