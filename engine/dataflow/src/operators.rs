//! The dataflow's own operators, one per file, each over totally ordered time points (a
//! timely timestamp `u64`) and consolidated 0/1 collections:
//!
//! * [`points`] — input facts as they hold per time point turned into changes, on every
//!   worker.
//! * [`zero_one`] — a collection made 0/1 (present or not) per time point, in one count
//!   table; also the delays of the ♢/□ windows ([`window`]).
//! * [`hash_join`] — joins and antijoins over time points, keeping no history (a record
//!   stays in the table exactly while it holds).
//! * [`window`] — ♢d and □d windows lowered to delays, and the gated window that fuses a
//!   window with `… , not g(T-k)`.
//! * [`records`] — per-record maps and delays, a message at a time (no staging by stamp).
//! * [`persist`] — a predicate that holds until stopped (EC inertia), one state per key.
//! * [`count`] — a count over one atom, kept per group.
//! * [`stamp`] — a predicate's facts stamped with the time point they hold at (LARS's `@`).
//! * [`stepper`] — the time-stepping operator for recursion through time and rules that
//!   read the time as a value.
//! * `stepping` — what the operators that take a time point at a time share (`stepper`,
//!   `persist`, `count`): buffering by time point, the table of keys' states, input counts.
//!
//! **Pitfalls they share.** Each keeps a capability at its input frontier and moves it up
//! as the frontier advances ([`follow_frontier`]), except the joins and `zero_one`, which
//! run inside loops through time too and hold one only while they have work buffered
//! ([`Pending`]); a binary operator may output at the earlier of its inputs' frontiers
//! ([`limit`]). Their inputs must be consolidated 0/1
//! changes (+1 when a record starts to hold, −1 when it stops): a −1 before its +1, or a
//! count above 1, is read as it comes.

pub mod count;
pub mod cycle;
pub mod hash_join;
pub mod hold;
pub mod persist;
pub mod points;
pub mod records;
mod slab;
pub mod stamp;
pub mod stepper;
mod stepping;
pub mod window;
pub mod zero_one;

#[cfg(test)]
mod testing;

use differential_dataflow::VecCollection;
use stgflow_lang::value::Row;

/// A collection of rows of one predicate.
pub type Coll<'s, T> = VecCollection<'s, T, Row, isize>;

/// A collection of facts tagged with their predicate.
pub type Facts<'s, T> = VecCollection<'s, T, (u32, Row), isize>;

/// Records keyed for a join: (key, record).
pub type Keyed<'s, T> = VecCollection<'s, T, (Row, Row), isize>;

/// The tag of the unit row in the input: the runtime feeds `(UNIT_TAG, [])` once, at the
/// first time point of the timeline, and never retracts it. It is the start of rules
/// without a positive atom (`tick(T) :- 0 = 0.`), so such a rule holds from the first time
/// point on and not before: the time points before the timeline do not exist, and
/// `first(T) :- tick(T), not tick(T-1).` holds at the first time point only, as in the
/// reference evaluator. (A unit row at time 0 made `tick(T-1)` true at the start.)
pub const UNIT_TAG: u32 = u32::MAX;

/// Keeps `emptied` (cleared) in `pool` for reuse, when it has an allocation and `pool`
/// holds fewer than `most`: buffers that grow to a batch's size once, instead of again for
/// every batch (fresh memory costs page faults).
pub(crate) fn keep_spare<T>(pool: &mut Vec<Vec<T>>, mut emptied: Vec<T>, most: usize) {
    emptied.clear();
    if emptied.capacity() > 0 && pool.len() < most {
        pool.push(emptied);
    }
}

/// The earliest time either input of a binary operator may still send: `None` once both
/// are closed.
pub(crate) fn limit(
    a: &timely::progress::frontier::MutableAntichain<u64>,
    b: &timely::progress::frontier::MutableAntichain<u64>,
) -> Option<u64> {
    match (a.frontier().first(), b.frontier().first()) {
        (Some(&x), Some(&y)) => Some(x.min(y)),
        (x, y) => x.or(y).copied(),
    }
}

/// Moves an operator's capability up to its input frontier `limit` (the earliest time it
/// may still output at), or drops it once the input is closed (`None`).
pub(crate) fn follow_frontier(
    capability: &mut Option<timely::dataflow::operators::Capability<u64>>,
    limit: Option<u64>,
) {
    match limit {
        Some(f) => {
            if let Some(cap) = capability.as_mut() {
                if *cap.time() < f {
                    cap.downgrade(&f);
                }
            }
        }
        None => *capability = None,
    }
}

/// An operator's capability held only while it has work buffered, at the earliest time of
/// that work. Inside a loop through time (`cycle`), a capability held at the input
/// frontier would imply the next time point around the loop, which would step on through
/// every time point with nothing to do, and for ever once the input closed.
#[derive(Default)]
pub(crate) struct Pending(Option<timely::dataflow::operators::Capability<u64>>);

impl Pending {
    /// Keeps a capability for a message's time, unless one as early is held.
    pub(crate) fn note(&mut self, message: &timely::dataflow::operators::InputCapability<u64>) {
        let Some(&least) = message.least() else {
            return;
        };
        if self.0.as_ref().is_none_or(|held| least < *held.time()) {
            self.0 = message.retain_least(0);
        }
    }

    /// The capability, while there is work.
    pub(crate) fn get(&self) -> Option<&timely::dataflow::operators::Capability<u64>> {
        self.0.as_ref()
    }

    /// Moves the capability up to `next`, the earliest time of the work still buffered, or
    /// lets it go where there is none.
    pub(crate) fn settle(&mut self, next: Option<u64>) {
        match next {
            Some(t) => {
                if let Some(held) = self.0.as_mut() {
                    if *held.time() < t {
                        held.downgrade(&t);
                    }
                }
            }
            None => self.0 = None,
        }
    }
}
