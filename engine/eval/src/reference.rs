//! The reference evaluator: the oracle every other evaluation path is tested against.
//!
//! Deliberately simple and single-threaded, straight from the perfect-model semantics:
//! for each time point t in order, for each stratum of the incremental stratification in
//! order, evaluate the stratum's rules to a fixpoint (semi-naive when the stratum is
//! recursive at offset 0) over hash sets of tuples ([`crate::eval`]). Atoms at offset k
//! read the facts of t − k, which are complete; negation reads lower strata (offset 0) or
//! the past.
//!
//! Memory is bounded by the forgetting horizon (Proposition 1): only the last
//! max k_p + 1 time points are kept, whatever the stream length.
//!
//! Time points before the first evaluated one do not exist: an atom read before the start
//! of the timeline has no facts.

use std::collections::VecDeque;

use crate::eval::Relation;
use crate::eval::{Facts, RulePlan, Strata, evaluate_stratum, stratified_plans};
use stgflow_io::drive::{Evaluator, RunError};
use stgflow_lang::ir::{PredId, Program};
use stgflow_lang::stratify::Analysis;
use stgflow_lang::value::Row;

/// The facts of one time point, per predicate.
type Slot = Vec<Relation>;

#[derive(Debug)]
pub struct Reference {
    plans: Vec<RulePlan>,
    /// Rule indices per stratum, in evaluation order, with whether the stratum recurses.
    strata: Strata,
    history: History,
    /// A rule reads the time as a value: a time point's facts may differ from the last
    /// one's however long nothing comes in.
    reads_time: bool,
    /// The latest time points stepped one after the other without input.
    quiet_run: usize,
}

/// The last `keep` time points, oldest first.
#[derive(Debug)]
struct History {
    slots: VecDeque<Slot>,
    keep: usize,
    predicates: usize,
    current: Option<u64>,
}

impl Facts for History {
    type Relation = Relation;

    fn relation(&self, pred: PredId, time: u64) -> Option<&Relation> {
        let back = usize::try_from(self.current?.checked_sub(time)?).ok()?;
        let index = self.slots.len().checked_sub(1 + back)?;
        self.slots.get(index)?.get(pred)
    }

    fn insert(&mut self, pred: PredId, tuple: Row) -> bool {
        self.slots
            .back_mut()
            .and_then(|slot| slot.get_mut(pred))
            .is_some_and(|relation| relation.insert(tuple))
    }
}

impl Reference {
    pub fn new(program: &Program, analysis: &Analysis) -> Reference {
        let (plans, strata) = stratified_plans(program, analysis);
        let keep = analysis.max_horizon as usize + 1;
        Reference {
            reads_time: program.rules.iter().any(|rule| rule.reads_time()),
            quiet_run: 0,
            plans,
            strata,
            history: History {
                slots: VecDeque::with_capacity(keep),
                keep,
                predicates: program.predicates.len(),
                current: None,
            },
        }
    }
}

impl Evaluator for Reference {
    fn step(
        &mut self,
        t: u64,
        input: Vec<(PredId, Row)>,
        outputs: &[PredId],
        out: &mut Vec<(PredId, Row)>,
    ) -> Result<(), RunError> {
        let history = &mut self.history;
        debug_assert!(
            history.current.is_none_or(|c| c + 1 == t),
            "time points must be consecutive"
        );
        history.current = Some(t);
        if history.slots.len() == history.keep {
            // Reuse the oldest slot's allocations for the new time point.
            let mut slot = history.slots.pop_front().unwrap_or_default();
            slot.iter_mut().for_each(Relation::clear);
            history.slots.push_back(slot);
        } else {
            history
                .slots
                .push_back(vec![Relation::new(); history.predicates]);
        }
        self.quiet_run = if input.is_empty() {
            self.quiet_run + 1
        } else {
            0
        };
        for (pred, tuple) in input {
            history.insert(pred, tuple);
        }
        for (rules, recursive) in &self.strata {
            evaluate_stratum(&self.plans, rules, *recursive, t, history);
        }
        if let Some(slot) = history.slots.back() {
            for &pred in outputs {
                out.extend(slot[pred].iter().map(|tuple| (pred, tuple.clone())));
            }
        }
        Ok(())
    }

    /// Every time point kept was stepped without input and holds the same facts: a time
    /// point's facts are made from those of the kept ones alone (the time itself read by
    /// no rule), so every later one without input holds them too.
    fn settled(&self) -> bool {
        let slots = &self.history.slots;
        !self.reads_time
            && self.quiet_run >= self.history.keep
            && slots.len() == self.history.keep
            && slots.iter().all(|slot| Some(slot) == slots.back())
    }

    fn skip(&mut self, to: u64) {
        self.history.current = Some(to - 1);
    }
}
