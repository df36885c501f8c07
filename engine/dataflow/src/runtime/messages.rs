//! What the calling thread and the workers of process 0 send each other.

use std::sync::Arc;

use stgflow_io::drive::Fed;
use stgflow_io::sink::KeyedLines;
use stgflow_io::stream::blocks::{BlockSummary, RawBlock, SentSummary};
use stgflow_io::stream::{FactReader, InputFact};
use stgflow_lang::value::{Row, Value};

/// An output update: a fact tagged with its predicate, the time, +1 or −1.
pub(super) type Update = ((u32, Row), u64, isize);

/// The most time points back any rule of `program` reads: past a quiet stretch's first
/// time point by more than this, output comes from the program changing on its own, not
/// from the input before the stretch.
pub(super) fn reach(program: &stgflow_lang::ir::Program) -> u64 {
    let atoms = (program.rules.iter()).flat_map(|rule| rule.body.iter().filter_map(|l| l.atom()));
    atoms.map(|atom| u64::from(atom.offset)).max().unwrap_or(0)
}

/// An update taken apart for a sink ([`stgflow_io::sink::Sink::emit_through`]).
pub(super) fn change(update: &Update) -> (u64, stgflow_lang::ir::PredId, &[Value], isize) {
    let ((pred, row), t, diff) = update;
    (*t, *pred as stgflow_lang::ir::PredId, &row[..], *diff)
}

/// An input record: a fact's arguments and a time it holds at, with +1 (a point, which
/// [`crate::operators::points::changes`] turns into changes); for the unit row, its change.
pub(super) type Change = (Row, u64, isize);

/// Most batches queued for each worker.
pub(super) const IN_FLIGHT: usize = 4;

/// Most emptied output buffers kept per worker to hand back to the workers: as many as can
/// be on their way to one worker (its queued batches, the one it works on, the one being
/// filled), so that none is dropped and allocated afresh (fresh pages are zeroed on first
/// touch).
pub(super) const SPARE_BUFFERS: usize = IN_FLIGHT + 2;

/// What the workers of different processes tell each other when every process reads
/// its own blocks of the input ([`super::reading`]), through the control dataflow: from
/// the calling thread of process 0 by way of its worker 0 ([`ToWorker::Relay`]) to a
/// worker of another process, and back to worker 0.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(super) enum Control {
    /// Parse block `seq` of source `source`, which the worker's own process cuts from its
    /// own copy of the file; the bytes must hash to `checksum` (the same file).
    Parse {
        source: usize,
        seq: u64,
        checksum: u64,
    },
    /// Introduce that block's facts in `bounds` (see [`ToWorker::Commit`]), or drop them
    /// (`keep` false: the block was read again on process 0, or not at all).
    Commit {
        source: usize,
        seq: u64,
        keep: bool,
        bounds: (u64, Option<u64>),
    },
    /// Advance the input to `to`; `finish`: and close it.
    Advance { to: u64, finish: bool },
    /// To worker 0: what the block held.
    Parsed {
        source: usize,
        seq: u64,
        summary: SentSummary,
    },
    /// To worker 0: a worker of another process could not read its block.
    Failed { error: String },
    /// To worker 0, told to finish: the input facts a worker of another process
    /// introduced and dropped.
    Done { input_facts: u64, dropped: u64 },
}

pub(super) enum ToWorker {
    Feed {
        /// The batch's facts by input channel: one vector per predicate, then the unit
        /// row's (see [`Batch`]); empty for every worker but the one a batch goes to.
        parts: Vec<Vec<Change>>,
        advance_to: u64,
        /// The timeline's first time point (see [`in_output_order`]).
        first: u64,
        /// An emptied output buffer for the worker to fill next (its allocation reused).
        recycled: Vec<Update>,
    },
    Finish {
        advance_to: u64,
        first: u64,
    },
    /// Parse this block of a file on its own, keep its facts and say what it held
    /// ([`FromWorker::Parsed`]); reading on the workers ([`super::reading`]).
    Parse {
        source: usize,
        seq: u64,
        block: RawBlock,
        like: Arc<FactReader<std::io::Empty>>,
    },
    /// Introduce the facts of a block parsed here before (or `facts`, where the calling
    /// thread parsed it again), those in `bounds` (from, and until if any): earlier ones are
    /// dropped and counted, later ones left out.
    Commit {
        source: usize,
        seq: u64,
        facts: Option<Vec<InputFact>>,
        bounds: (u64, Option<u64>),
    },
    /// To worker 0 of process 0: send `control` to the worker of global index `target`
    /// (of another process) through the control dataflow.
    Relay {
        target: usize,
        control: Control,
    },
    /// To a worker of another process than 0, from its own calling thread: block `seq` of
    /// source `source`, as that process cuts its copy of the file (`None`: it has no such
    /// block), and how to parse it.
    Block {
        source: usize,
        seq: u64,
        block: Result<RawBlock, String>,
        like: Arc<FactReader<std::io::Empty>>,
    },
}

pub(super) enum FromWorker {
    Output {
        /// The local index of the worker that sends it.
        worker: usize,
        upto: u64,
        /// The worker's output before `upto` not sent before, in output order
        /// ([`in_output_order`]) where `sorted`; else as it came, for the calling thread
        /// to sort (every batch it may send ahead was waiting for the worker: see
        /// [`super::OutputSort`]).
        updates: Vec<Update>,
        sorted: bool,
    },
    /// With the output formatted on the workers ([`stgflow_io::sink::Sink::keyed`]): the
    /// worker's lines before `upto` not sent before, each with its key, in order.
    Lines {
        worker: usize,
        upto: u64,
        lines: KeyedLines,
    },
    Done {
        worker: usize,
        /// The input facts this worker introduced and dropped (reading on the workers).
        fed: Fed,
        /// With `--stats`: the time each component was scheduled on this worker, then
        /// the time outside them.
        times: Vec<std::time::Duration>,
        /// With `--stats`: the updates each component output on this worker.
        records: Vec<u64>,
    },
    /// What a block said when parsed on its own ([`ToWorker::Parse`]); `again`: read it
    /// again on the calling thread (a worker of another process had an error in it and
    /// sent only that it had one).
    Parsed {
        source: usize,
        seq: u64,
        summary: BlockSummary,
        again: bool,
    },
    /// From a worker of another process than 0 to its calling thread: it needs block
    /// `seq` of source `source` ([`ToWorker::Block`]).
    NeedBlock {
        worker: usize,
        source: usize,
        seq: u64,
    },
    /// A worker could not create or write its output files.
    Failed { error: String },
    /// A worker of another process could not read a block of the input (see
    /// [`Control::Failed`]).
    ReadFailed { error: String },
}
