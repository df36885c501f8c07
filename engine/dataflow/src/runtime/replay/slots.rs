//! How many parts are evaluated at once: no more than the machine has cores. A worker
//! takes a slot for its part (replay by time) and gives it back after; with more workers
//! than cores, the others wait their turn instead of taking turns on the cores mid-part,
//! each evicting the others' working sets from the caches and each holding its part's
//! unwritten output meanwhile. Every worker still evaluates its share of the parts; a
//! worker that waits for its turn to write gives its slot back meanwhile. Shards (replay
//! by key) take none: they go through the parts in step, each part's share small.

use std::sync::{Condvar, Mutex, MutexGuard};

/// The slots (see the module docs).
#[derive(Debug)]
pub(super) struct Slots {
    state: Mutex<State>,
    freed: Condvar,
}

#[derive(Debug)]
struct State {
    free: usize,
    /// The parts waiting for a slot: the earliest go first, so that the part being
    /// written is never behind later ones.
    waiting: std::collections::BTreeSet<usize>,
}

/// A slot taken; given back when dropped.
#[derive(Debug)]
pub(super) struct Slot<'a> {
    slots: &'a Slots,
}

impl Slots {
    /// As many slots as the machine has cores (at least one), shared out among the
    /// `processes` of a cluster that run on the same host.
    pub(super) fn per_core(processes: usize) -> Slots {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let cores = (cores / processes.max(1)).max(1);
        Slots {
            state: Mutex::new(State {
                free: cores,
                waiting: Default::default(),
            }),
            freed: Condvar::new(),
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Takes a slot for part `part`, waiting for one while earlier parts wait.
    pub(super) fn take(&self, part: usize) -> Slot<'_> {
        let mut state = self.state();
        state.waiting.insert(part);
        let turn = |state: &State| state.waiting.iter().take(state.free).any(|&p| p == part);
        while !turn(&state) {
            state = self
                .freed
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        state.waiting.remove(&part);
        state.free -= 1;
        Slot { slots: self }
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.slots.state().free += 1;
        self.slots.freed.notify_all();
    }
}
