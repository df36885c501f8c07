//! Where the parts' output goes: each part's bytes, as its worker makes them, to the
//! thread that writes them, in the parts' order. A part ahead of the one being written
//! waits here for its turn; past a budget of bytes waiting, the worker of such a part
//! waits before it sends more, so memory stays bounded whatever the output's size (the
//! part being written never waits, so the writing always goes on).
//!
//! Byte buffers come back once written ([`Outbox::buffer`], [`Outbox::recycle`]): a
//! buffer freshly allocated by each worker for each piece cost a page fault per page,
//! and with a heap per thread the workers' faults added up.

use std::sync::{Condvar, Mutex, MutexGuard};

use crossbeam_channel::{Receiver, Sender, unbounded};

use super::slots::{Slot, Slots};
use stgflow_io::drive::{Fed, RunError, RunSummary};
use stgflow_io::stream::SkipCounts;

/// Bytes the parts ahead of the one being written may hold.
const BUDGET: usize = 512 << 20;

/// What a worker sends the writer.
pub(super) enum Piece {
    /// Output of part `part`, through time point `through`.
    Bytes {
        part: usize,
        bytes: Vec<u8>,
        through: u64,
    },
    /// Part `part` is done.
    Done { part: usize, done: Box<PartDone> },
}

/// What a part did, besides its output.
#[derive(Debug, Default)]
pub(super) struct PartDone {
    /// Its own time points.
    pub(super) summary: RunSummary,
    /// The input facts of its own time points, and those it dropped (before the
    /// timeline).
    pub(super) fed: Fed,
    /// What its own lines skipped, file by file (each file's counts are added up over the
    /// parts, then the files' in their order, as the sequential driver adds them up).
    pub(super) skipped: Vec<SkipCounts>,
    /// The error that stopped it, after its output of every time point before.
    pub(super) error: Option<RunError>,
    /// A fact lay outside its range: its output and the parts' after it cannot be
    /// trusted.
    pub(super) misplaced: bool,
    /// With `--stats`: per component, its time scheduled and its output updates.
    pub(super) times: Vec<std::time::Duration>,
    pub(super) records: Vec<u64>,
}

/// Where a part evaluated by time sends its output: this process's writer ([`Outbox`]),
/// or process 0's over the cluster's connections (`super::cluster`).
pub(super) trait Out {
    /// Sends output of `part` (see [`Outbox::bytes`]); `false` if the part is not wanted
    /// any more.
    fn bytes<'a>(
        &'a self,
        part: usize,
        bytes: Vec<u8>,
        through: u64,
        slot: &mut Option<Slot<'a>>,
    ) -> bool;
    /// Says that `part` is done.
    fn done(&self, part: usize, done: PartDone);
    /// Whether `part` is still wanted.
    fn wanted(&self, part: usize) -> bool;
    /// An empty byte buffer to fill with about `like` bytes.
    fn buffer(&self, like: usize) -> Vec<u8>;
    /// The workers' turns on the host's cores.
    fn slots(&self) -> &Slots;
}

impl Out for Outbox {
    fn bytes<'a>(
        &'a self,
        part: usize,
        bytes: Vec<u8>,
        through: u64,
        slot: &mut Option<Slot<'a>>,
    ) -> bool {
        Outbox::bytes(self, part, bytes, through, slot)
    }

    fn done(&self, part: usize, done: PartDone) {
        Outbox::done(self, part, done);
    }

    fn wanted(&self, part: usize) -> bool {
        Outbox::wanted(self, part)
    }

    fn buffer(&self, like: usize) -> Vec<u8> {
        Outbox::buffer(self, like)
    }

    fn slots(&self) -> &Slots {
        &self.slots
    }
}

#[derive(Debug)]
struct Flow {
    /// Bytes sent and not written.
    held: usize,
    /// The part being written.
    writing: usize,
    /// Parts from this one on are not wanted any more (a part before stopped the run).
    wanted_below: usize,
}

/// The workers' side and the writer's side of the parts' output.
#[derive(Debug)]
pub(super) struct Outbox {
    sender: Sender<Piece>,
    flow: Mutex<Flow>,
    turn: Condvar,
    /// Emptied byte buffers, to fill again.
    buffers: Mutex<Vec<Vec<u8>>>,
    /// The workers' turns on the cores.
    pub(super) slots: Slots,
}

/// Emptied byte buffers kept at most.
const BUFFERS_KEPT: usize = 64;

impl Outbox {
    /// An outbox whose workers share the host's cores with `processes` processes of
    /// their cluster (themselves included).
    pub(super) fn new(processes: usize) -> (Outbox, Receiver<Piece>) {
        let (sender, receiver) = unbounded();
        let outbox = Outbox {
            sender,
            flow: Mutex::new(Flow {
                held: 0,
                writing: 0,
                wanted_below: usize::MAX,
            }),
            turn: Condvar::new(),
            buffers: Mutex::new(Vec::new()),
            slots: Slots::per_core(processes),
        };
        (outbox, receiver)
    }

    /// An empty byte buffer to fill with about `like` bytes: of those written before,
    /// the smallest with that room, else the largest. Buffers of a size go back to uses
    /// of that size, so that a part's merged output does not end up holding a shard's
    /// few lines while the next merge grows a small buffer again.
    pub(super) fn buffer(&self, like: usize) -> Vec<u8> {
        let mut buffers = self
            .buffers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let fits = (buffers.iter().enumerate())
            .filter(|(_, b)| b.capacity() >= like)
            .min_by_key(|(_, b)| b.capacity());
        let at = match fits {
            Some((at, _)) => Some(at),
            None => (buffers.iter().enumerate())
                .max_by_key(|(_, b)| b.capacity())
                .map(|(at, _)| at),
        };
        at.map(|at| buffers.swap_remove(at)).unwrap_or_default()
    }

    /// Keeps `buffer`'s room for [`Outbox::buffer`].
    pub(super) fn recycle(&self, mut buffer: Vec<u8>) {
        buffer.clear();
        if buffer.capacity() == 0 {
            return;
        }
        let mut buffers = self
            .buffers
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        if buffers.len() < BUFFERS_KEPT {
            buffers.push(buffer);
        }
    }

    fn flow(&self) -> MutexGuard<'_, Flow> {
        self.flow
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Sends output of `part`, waiting while the parts ahead hold more than their
    /// budget (without the caller's `slot` meanwhile); `false` if the part is not wanted
    /// any more.
    pub(super) fn bytes<'a>(
        &'a self,
        part: usize,
        bytes: Vec<u8>,
        through: u64,
        slot: &mut Option<Slot<'a>>,
    ) -> bool {
        let mut flow = self.flow();
        let over = |flow: &Flow| {
            part != flow.writing && part < flow.wanted_below && flow.held + bytes.len() > BUDGET
        };
        if over(&flow) {
            // The slot goes back while this worker waits.
            let held = slot.take().is_some();
            while over(&flow) {
                flow = self
                    .turn
                    .wait(flow)
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
            }
            if held {
                drop(flow);
                *slot = Some(self.slots.take(part));
                flow = self.flow();
            }
        }
        if part >= flow.wanted_below {
            return false;
        }
        flow.held += bytes.len();
        drop(flow);
        let _ = self.sender.send(Piece::Bytes {
            part,
            bytes,
            through,
        });
        true
    }

    /// Passes on a piece of another process's part, at once: the relay that receives them
    /// must never wait, or the pieces of the part being written could wait behind them.
    pub(super) fn forward(&self, piece: Piece) {
        if let Piece::Bytes { bytes, .. } = &piece {
            self.flow().held += bytes.len();
        }
        let _ = self.sender.send(piece);
    }

    /// Says that `part` is done.
    pub(super) fn done(&self, part: usize, done: PartDone) {
        let _ = self.sender.send(Piece::Done {
            part,
            done: Box::new(done),
        });
    }

    /// Whether `part` is still wanted.
    pub(super) fn wanted(&self, part: usize) -> bool {
        part < self.flow().wanted_below
    }

    /// The writer has written `len` bytes.
    pub(super) fn written(&self, len: usize) {
        let mut flow = self.flow();
        flow.held = flow.held.saturating_sub(len);
        self.turn.notify_all();
    }

    /// The writer goes on to `part`.
    pub(super) fn writing(&self, part: usize) {
        self.flow().writing = part;
        self.turn.notify_all();
    }

    /// The parts from `part` on are not wanted: their workers stop.
    pub(super) fn unwanted_from(&self, part: usize) {
        let mut flow = self.flow();
        flow.wanted_below = flow.wanted_below.min(part);
        self.turn.notify_all();
    }
}
