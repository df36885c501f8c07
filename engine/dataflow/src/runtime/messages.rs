//! What the calling thread and worker 0 send each other.

use stgflow_lang::value::Row;

/// An output update: a fact tagged with its predicate, the time, +1 or −1.
pub(super) type Update = ((u32, Row), u64, isize);

/// An input change: a fact's arguments, the time, +1 or −1.
pub(super) type Change = (Row, u64, isize);

/// Most batches queued for worker 0.
pub(super) const IN_FLIGHT: usize = 4;

/// Most emptied output buffers kept to hand back to worker 0: as many as can be on their
/// way (the queued batches, the one worker 0 works on, the one being filled), so that none
/// is dropped and allocated afresh (fresh pages are zeroed on first touch).
pub(super) const SPARE_BUFFERS: usize = IN_FLIGHT + 2;

pub(super) enum ToWorker {
    Feed {
        /// The batch's changes by input channel: one vector per predicate, then the unit
        /// row's (see [`Batch`]).
        parts: Vec<Vec<Change>>,
        advance_to: u64,
        /// The timeline's first time point (see [`in_output_order`]).
        first: u64,
        /// An emptied output buffer for worker 0 to fill next (its allocation reused).
        recycled: Vec<Update>,
    },
    Finish {
        advance_to: u64,
        first: u64,
    },
}

pub(super) enum FromWorker {
    Output {
        upto: u64,
        /// Everything before `upto` not sent before, in output order ([`in_output_order`]).
        updates: Vec<Update>,
    },
    Done,
}
