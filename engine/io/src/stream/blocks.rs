//! Batch replay with the parsing done in parallel: a [`FactSource`] over a file that reads
//! it in blocks of whole lines and parses the blocks on a pool of threads, several at once,
//! while the caller takes the facts of the blocks before.
//!
//! * A reader thread (`stgflow:read`) reads the input in blocks of about
//!   [`Parallelism::block_bytes`], each ending at a line end, and counts their lines. For
//!   each block it hands the caller, in order over a bounded crossbeam channel, the
//!   receiving end of a one-shot channel, and gives the block to the pool, whose task
//!   parses it and sends the result there. The bound is the number of blocks in flight,
//!   so memory stays bounded however far the parsing runs ahead of the evaluation.
//! * A block is parsed by an ordinary [`FactReader`] over its bytes, starting at its first
//!   line (so errors name the file's line), but without knowing what the blocks before it
//!   held: it starts with no latest time and no declared timeline. That changes nothing
//!   unless the block's first time is behind the latest time before it, the block
//!   declares a `#timeline` after earlier input, or the block has an error (whose message
//!   may name an earlier line); in those cases the caller parses the block again, on its
//!   own thread, with the state of the blocks before it. So facts, errors (file, line,
//!   column, message) and skip counts are those of the sequential reader; tests compare
//!   them on generated streams cut into small blocks.
//! * Only what a line alone decides is parsed ahead: formats that read in blocks
//!   ([`super::Format::reads_in_blocks`]) with no lateness ([`ParallelReader::supports`]).
//!   Facts that hold on intervals and late facts are held back across lines by the
//!   reader, so those streams use the sequential [`FactReader`].
//! * Nothing starts before the first fact is asked for. A caller that parses the blocks
//!   elsewhere (the dataflow workers) takes them unparsed instead
//!   ([`FactSource::raw_blocks`]: [`RawBlocks`]), parses each with [`parse_block`] and
//!   takes them back in order through a [`BlockOrder`], as this reader does.
//! * The reader thread is not joined when the source is dropped early: it may be waiting
//!   on input that never ends. It stops at its next block, when it finds the channel
//!   closed.

use std::io::{self, Read};
use std::sync::Arc;

use crossbeam_channel::{Receiver, Sender, bounded};

use super::Code;
use super::{FactReader, Format, InputFact, SkipCounts, StreamError, Tolerance};
use crate::drive::FactSource;
use stgflow_lang::ir::PredId;
use stgflow_lang::value::Row;

/// How a [`ParallelReader`] splits its work.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Parallelism {
    /// Threads in the parsing pool.
    pub threads: usize,
    /// Bytes per block (each block is extended to its line's end).
    pub block_bytes: usize,
}

impl Default for Parallelism {
    fn default() -> Parallelism {
        Parallelism {
            threads: std::thread::available_parallelism().map_or(1, |n| n.get()),
            block_bytes: 1 << 20,
        }
    }
}

impl Parallelism {
    /// Blocks for readers elsewhere ([`FactSource::raw_blocks`]: the dataflow workers):
    /// 256 KiB, a quarter of the default. Each block's facts go in as one step of the
    /// dataflow: its operators' vectors then stay small enough to be reused, and a step's
    /// fixed cost is still spread over many facts.
    pub fn on_workers() -> Parallelism {
        Parallelism {
            threads: 1,
            block_bytes: 1 << 18,
        }
    }
}

/// The part of a reader's state that carries from one block to the next.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Carried {
    /// The latest time point seen, and its line.
    latest: Option<(u64, usize)>,
    /// The stream's declared timeline.
    timeline: Option<(u64, u64)>,
}

/// A block of whole lines of a file, not parsed yet: what [`RawBlocks`] hands out, for a
/// reader elsewhere (a dataflow worker) to parse with [`parse_block`].
#[derive(Clone, Debug)]
pub struct RawBlock {
    pub bytes: Arc<Vec<u8>>,
    /// Lines of the file before the block.
    pub lines_before: usize,
    /// Lines in the block (about the facts it holds: their vector is made that big).
    pub lines: usize,
}

/// A block parsed on its own ([`parse_block`]): its facts and what its [`BlockOrder`]
/// needs to know of it.
#[derive(Debug)]
pub struct ParsedBlock {
    pub facts: Vec<InputFact>,
    pub summary: BlockSummary,
}

/// What a block parsed on its own says besides its facts.
#[derive(Debug)]
pub struct BlockSummary {
    /// The error that ended the block, if any (after its facts).
    pub error: Option<Box<StreamError>>,
    /// The block's first time point (of a fact or not).
    first: Option<u64>,
    /// The times of the block's first and last facts.
    pub first_fact: Option<u64>,
    pub last: Option<u64>,
    /// The state at the block's end, as parsed on its own.
    end: Carried,
    pub skipped: SkipCounts,
}

/// A [`BlockSummary`] as it travels between processes (a block parsed by a worker of
/// another process): its error only as whether it had one, for the reader that takes the
/// block back reads such a block again itself ([`BlockOrder::take_until`]).
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SentSummary {
    pub errored: bool,
    first: Option<u64>,
    first_fact: Option<u64>,
    last: Option<u64>,
    latest: Option<(u64, usize)>,
    timeline: Option<(u64, u64)>,
    skipped: super::SentSkips,
}

impl BlockSummary {
    /// The summary to send to another process.
    pub fn sent(&self) -> SentSummary {
        let skipped = &self.skipped;
        SentSummary {
            errored: self.error.is_some(),
            first: self.first,
            first_fact: self.first_fact,
            last: self.last,
            latest: self.end.latest,
            timeline: self.end.timeline,
            skipped: skipped.into(),
        }
    }
}

impl SentSummary {
    /// The summary sent, without its error (see [`SentSummary::errored`]).
    pub fn received(self) -> BlockSummary {
        BlockSummary {
            error: None,
            first: self.first,
            first_fact: self.first_fact,
            last: self.last,
            end: Carried {
                latest: self.latest,
                timeline: self.timeline,
            },
            skipped: self.skipped.into(),
        }
    }
}

impl RawBlock {
    /// A hash of the block's bytes: another process that cuts the same file into blocks
    /// checks that its block is the same.
    pub fn checksum(&self) -> u64 {
        use std::hash::{BuildHasher, Hasher};
        let mut hasher =
            std::hash::BuildHasherDefault::<std::hash::DefaultHasher>::default().build_hasher();
        hasher.write(&self.bytes);
        hasher.write_usize(self.lines_before);
        hasher.finish()
    }
}

/// A parsed block with its bytes, as the parsing pool hands it to a [`ParallelReader`].
struct Chunk {
    block: RawBlock,
    parsed: ParsedBlock,
}

enum Block {
    Parsed(Receiver<Chunk>),
    /// Not parsed: for [`RawBlocks`].
    Raw(RawBlock),
    /// The input could not be read.
    Failed(Box<StreamError>),
}

/// Reads one file's facts in order, parsing blocks of it on a pool of threads (see the module
/// docs). Nothing starts before the first fact is asked for, or before the blocks are taken
/// unparsed ([`FactSource::raw_blocks`]) for readers elsewhere to parse.
pub struct ParallelReader {
    /// A reader over no input with the settings every block's reader copies.
    like: Arc<FactReader<io::Empty>>,
    /// The input and how to split it, until the reading starts.
    unstarted: Option<(Box<dyn Read + Send>, Parallelism)>,
    blocks: Option<Receiver<Block>>,
    facts: std::vec::IntoIter<InputFact>,
    error: Option<Box<StreamError>>,
    done: bool,
    order: BlockOrder,
}

impl std::fmt::Debug for ParallelReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParallelReader")
            .field("name", &self.like.name)
            .finish()
    }
}

impl ParallelReader {
    /// Whether a stream read as `format` under `tolerance` can be parsed in parallel.
    pub fn supports(format: &dyn Format, tolerance: Tolerance) -> bool {
        format.reads_in_blocks() && tolerance.lateness == 0
    }

    /// A reader of `input` as `like` would read it (its name, format, schema, tick and
    /// tolerance; see [`ParallelReader::supports`]); it starts at the first fact asked for.
    pub fn spawn<R: Read + Send + 'static>(
        input: R,
        like: FactReader<io::Empty>,
        parallelism: Parallelism,
    ) -> io::Result<ParallelReader> {
        Ok(ParallelReader {
            like: Arc::new(like),
            unstarted: Some((Box::new(input), parallelism)),
            blocks: None,
            facts: Vec::new().into_iter(),
            error: None,
            done: false,
            order: BlockOrder::default(),
        })
    }

    /// Starts the reader thread (and the parsing pool, unless the blocks go out raw).
    fn start(&mut self, raw: bool) -> Option<Receiver<Block>> {
        let (input, parallelism) = self.unstarted.take()?;
        let threads = parallelism.threads.max(1);
        let pool = if raw {
            None
        } else {
            match Pool::new(threads) {
                Ok(pool) => Some(pool),
                Err(e) => {
                    self.error = Some(failure(&self.like, format!("cannot start parsing: {e}")));
                    return None;
                }
            }
        };
        // Blocks in flight: each thread's, the next each would take, and the caller's.
        let (sender, blocks) = bounded(2 * threads + 1);
        let reader = Reader {
            input,
            like: self.like.clone(),
            pool,
            block_bytes: parallelism.block_bytes.max(1),
            out: sender,
        };
        let spawned = std::thread::Builder::new()
            .name("stgflow:read".to_owned())
            .spawn(move || reader.run());
        if let Err(e) = spawned {
            self.error = Some(failure(&self.like, format!("cannot start reading: {e}")));
            return None;
        }
        Some(blocks)
    }

    /// Takes a parsed block in (see [`BlockOrder::take`]).
    fn take(&mut self, chunk: Chunk) {
        let Chunk { block, parsed } = chunk;
        let taken = self.order.take(&self.like, &block, parsed.summary);
        self.facts = taken.facts.unwrap_or(parsed.facts).into_iter();
        self.error = taken.error;
    }
}

impl FactSource for ParallelReader {
    fn take_at(
        &mut self,
        time: u64,
        out: &mut Vec<(PredId, Row)>,
    ) -> Result<Option<InputFact>, Box<StreamError>> {
        crate::drive::take_queued(self, |reader| reader.facts.next(), time, out)
    }

    fn next_fact(&mut self) -> Result<Option<InputFact>, Box<StreamError>> {
        if self.unstarted.is_some() {
            self.blocks = self.start(false);
            self.done = self.blocks.is_none() && self.error.is_none();
        }
        loop {
            if let Some(fact) = self.facts.next() {
                return Ok(Some(fact));
            }
            if let Some(error) = self.error.take() {
                self.done = true;
                return Err(error);
            }
            let Some(blocks) = self.blocks.as_ref().filter(|_| !self.done) else {
                return Ok(None);
            };
            match blocks.recv() {
                Ok(Block::Parsed(chunk)) => match chunk.recv() {
                    Ok(chunk) => self.take(chunk),
                    Err(_) => {
                        self.done = true;
                        return Err(failure(&self.like, "a parsing thread failed".to_owned()));
                    }
                },
                // Raw blocks go to `RawBlocks`, never here.
                Ok(Block::Raw(_)) => self.done = true,
                Ok(Block::Failed(error)) => self.error = Some(error),
                Err(_) => self.done = true,
            }
        }
    }

    fn skipped(&self) -> SkipCounts {
        self.order.skipped.clone()
    }

    fn declared_timeline(&self) -> Option<(u64, u64)> {
        self.order.carried.timeline
    }

    fn raw_blocks(&mut self) -> Option<RawBlocks> {
        let blocks = self.start(true)?;
        self.done = true;
        Some(RawBlocks {
            like: self.like.clone(),
            blocks,
            observer: None,
        })
    }
}

/// A file's blocks of whole lines, unparsed, in order (from
/// [`FactSource::raw_blocks`]): a reader thread reads them ahead, a bounded number at a
/// time. Whoever parses them ([`parse_block`]) takes them back in order through a
/// [`BlockOrder`], so that the facts, errors and skip counts are the sequential reader's.
pub struct RawBlocks {
    like: Arc<FactReader<io::Empty>>,
    blocks: Receiver<Block>,
    /// Told of every block handed out (a progress line).
    observer: Option<Observer>,
}

/// What [`RawBlocks::observed`] tells of each block.
type Observer = Box<dyn FnMut(&RawBlock)>;

impl std::fmt::Debug for RawBlocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawBlocks")
            .field("name", &self.like.name)
            .finish()
    }
}

impl RawBlocks {
    /// These blocks, telling `observer` of each as it is handed out.
    pub fn observed(self, observer: impl FnMut(&RawBlock) + 'static) -> RawBlocks {
        RawBlocks {
            observer: Some(Box::new(observer)),
            ..self
        }
    }

    /// The reader whose settings every block's reader copies.
    pub fn like(&self) -> &Arc<FactReader<io::Empty>> {
        &self.like
    }
}

impl Iterator for RawBlocks {
    type Item = Result<RawBlock, Box<StreamError>>;

    /// The next block, waiting for the reader thread; `None` at the end of the file, an
    /// error where it could not be read further.
    fn next(&mut self) -> Option<Self::Item> {
        match self.blocks.recv() {
            Ok(Block::Raw(block)) => {
                if let Some(observer) = self.observer.as_mut() {
                    observer(&block);
                }
                Some(Ok(block))
            }
            Ok(Block::Failed(error)) => Some(Err(error)),
            Ok(Block::Parsed(_)) => Some(Err(failure(
                &self.like,
                "blocks were parsed that should not have been".to_owned(),
            ))),
            Err(_) => None,
        }
    }
}

/// A file's blocks taken back in order after each was parsed on its own: where that may
/// have read a block differently from the sequential reader, the block is parsed again
/// with the state of the blocks before it (see the module docs). Holds that state and the
/// skip counts so far.
#[derive(Clone, Debug, Default)]
pub struct BlockOrder {
    carried: Carried,
    skipped: SkipCounts,
}

/// A block as the sequential reader reads it ([`BlockOrder::take`]).
#[derive(Debug)]
pub struct Taken {
    /// The block's facts where they differ from those parsed on its own (it was parsed
    /// again); `None`: those stand.
    pub facts: Option<Vec<InputFact>>,
    /// The error that ends the file in this block.
    pub error: Option<Box<StreamError>>,
    /// The times of the block's first and last facts.
    pub first: Option<u64>,
    pub last: Option<u64>,
    /// What is left of the block unread, after a stop ([`BlockOrder::take_until`]).
    pub rest: Option<RawBlock>,
}

impl BlockOrder {
    /// Takes the next block in, with what parsing it on its own said (`summary`).
    pub fn take(
        &mut self,
        like: &FactReader<io::Empty>,
        block: &RawBlock,
        summary: BlockSummary,
    ) -> Taken {
        let BlockSummary {
            error,
            first,
            first_fact,
            last,
            end,
            skipped,
        } = summary;
        let before = self.carried;
        let behind = first
            .zip(before.latest)
            .is_some_and(|(first, (latest, _))| first < latest);
        let fresh = before == Carried::default();
        if !fresh && (error.is_some() || behind || end.timeline.is_some()) {
            return self.take_until(like, block, |_| false);
        }
        // The block on its own saw the same times; a latest time it shares with the
        // blocks before was first seen before it.
        if let Some((time, line)) = end.latest {
            if before.latest.is_none_or(|(latest, _)| time > latest) {
                self.carried.latest = Some((time, line));
            }
        }
        if end.timeline.is_some() {
            self.carried.timeline = end.timeline;
        }
        self.skipped.merge(skipped);
        Taken {
            facts: None,
            error,
            first: first_fact,
            last,
            rest: None,
        }
    }

    /// Takes the next block in by parsing it again with the state of the blocks before
    /// it, up to the line of the first fact `stop` holds for: the facts up to it and the
    /// rest of its line, the rest of the block left unread (as the sequential reader leaves
    /// a file once it has read that fact) in [`Taken::rest`].
    pub fn take_until(
        &mut self,
        like: &FactReader<io::Empty>,
        block: &RawBlock,
        stop: impl Fn(&InputFact) -> bool,
    ) -> Taken {
        let mut reader = block_reader(like, &block.bytes, block.lines_before, self.carried);
        let (facts, error) = read_all(&mut reader, block.lines, stop);
        self.carried = Carried {
            latest: reader.latest,
            timeline: reader.timeline,
        };
        self.skipped.merge(std::mem::take(&mut reader.skipped));
        let rest = (!reader.input.is_empty()).then(|| RawBlock {
            bytes: Arc::new(reader.input.to_vec()),
            lines_before: reader.line,
            lines: block.lines.saturating_sub(reader.line - block.lines_before),
        });
        Taken {
            first: facts.first().map(|f| f.time),
            last: facts.last().map(|f| f.time),
            facts: Some(facts),
            error,
            rest,
        }
    }

    /// What the blocks taken so far skipped.
    pub fn skipped(&self) -> &SkipCounts {
        &self.skipped
    }

    /// The timeline the blocks taken so far declare.
    pub fn declared_timeline(&self) -> Option<(u64, u64)> {
        self.carried.timeline
    }
}

/// The parsing threads: a rayon pool, its jobs taken in the order given (earlier blocks
/// are wanted first); its threads end once it is dropped and the jobs given are done.
/// Jobs are not bounded here: the reader gives one per block it has handed the caller,
/// and those are bounded.
struct Pool(rayon::ThreadPool);

impl Pool {
    fn new(threads: usize) -> io::Result<Pool> {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .thread_name(|i| format!("stgflow:parse-{i}"))
            .build()
            .map(Pool)
            .map_err(io::Error::other)
    }

    fn spawn(&self, job: impl FnOnce() + Send + 'static) {
        self.0.spawn_fifo(job);
    }
}

/// The reader thread's side.
struct Reader<R> {
    input: R,
    like: Arc<FactReader<io::Empty>>,
    /// Where the blocks are parsed; `None`: they go out raw.
    pool: Option<Pool>,
    block_bytes: usize,
    out: Sender<Block>,
}

impl<R: Read> Reader<R> {
    fn run(mut self) {
        let mut carry: Vec<u8> = Vec::new();
        let mut lines_before = 0;
        loop {
            let mut bytes = std::mem::take(&mut carry);
            let wanted = self.block_bytes;
            bytes.reserve(wanted);
            let (at_end, failed) = match (&mut self.input)
                .take(wanted as u64)
                .read_to_end(&mut bytes)
            {
                Ok(read) => (read < wanted, None),
                // What was read before the failure is in `bytes`: its whole lines go first.
                Err(e) => (false, Some(e)),
            };
            if !at_end {
                // Cut after the last line end; a block without one waits for more.
                match bytes.iter().rposition(|&b| b == b'\n') {
                    Some(last) => carry = bytes.split_off(last + 1),
                    None if failed.is_none() => {
                        carry = bytes;
                        continue;
                    }
                    None => bytes.clear(),
                }
            }
            if !bytes.is_empty() {
                let lines = bytes.iter().filter(|&&b| b == b'\n').count();
                let block = RawBlock {
                    bytes: Arc::new(bytes),
                    lines_before,
                    lines,
                };
                lines_before += lines;
                let sent = match &self.pool {
                    None => self.out.send(Block::Raw(block)),
                    Some(pool) => {
                        let (sender, receiver) = bounded(1);
                        let like = self.like.clone();
                        pool.spawn(move || {
                            let parsed = parse_block(&like, &block);
                            let _ = sender.send(Chunk { block, parsed });
                        });
                        self.out.send(Block::Parsed(receiver))
                    }
                };
                if sent.is_err() {
                    // The caller is gone.
                    return;
                }
            }
            if let Some(e) = failed {
                let mut error = failure(&self.like, format!("cannot read input: {e}"));
                error.line = lines_before + 1;
                let _ = self.out.send(Block::Failed(error));
                return;
            }
            if at_end {
                return;
            }
        }
    }
}

/// Parses `block` on its own, with `like`'s settings, starting at its first line (so errors
/// name the file's line) with no latest time and no declared timeline.
pub fn parse_block(like: &FactReader<io::Empty>, block: &RawBlock) -> ParsedBlock {
    let mut reader = block_reader(like, &block.bytes, block.lines_before, Carried::default());
    let (facts, error) = read_all(&mut reader, block.lines, |_| false);
    let summary = BlockSummary {
        error,
        first: reader.first,
        first_fact: facts.first().map(|f| f.time),
        last: facts.last().map(|f| f.time),
        end: Carried {
            latest: reader.latest,
            timeline: reader.timeline,
        },
        skipped: std::mem::take(&mut reader.skipped),
    };
    ParsedBlock { facts, summary }
}

/// A reader of `bytes`, which start after line `lines_before`, with `like`'s settings and
/// the state `carried`.
fn block_reader<'b>(
    like: &FactReader<io::Empty>,
    bytes: &'b [u8],
    lines_before: usize,
    carried: Carried,
) -> FactReader<&'b [u8]> {
    let mut reader = like.with_input(bytes);
    reader.line = lines_before;
    reader.latest = carried.latest;
    reader.timeline = carried.timeline;
    reader
}

/// Every fact up to the end, the first error, or the first fact `stop` holds for (with it);
/// room for `lines` facts at first (a vector that grows by doubling takes fresh pages).
fn read_all(
    reader: &mut FactReader<&[u8]>,
    lines: usize,
    stop: impl Fn(&InputFact) -> bool,
) -> (Vec<InputFact>, Option<Box<StreamError>>) {
    let mut facts = Vec::with_capacity(lines);
    loop {
        match reader.next_fact() {
            Ok(Some(fact)) => {
                let last = stop(&fact);
                facts.push(fact);
                if last {
                    // The rest of its line: parsed with it, handed out before the next.
                    facts.extend(reader.pending.drain(..));
                    return (facts, None);
                }
            }
            Ok(None) => return (facts, None),
            Err(error) => return (facts, Some(error)),
        }
    }
}

/// An input failure (E103) in `like`'s file.
fn failure(like: &FactReader<io::Empty>, message: String) -> Box<StreamError> {
    Box::new(StreamError {
        code: Code::E103.as_str(),
        file: like.name.clone(),
        line: like.line + 1,
        column: 1,
        message,
        text: String::new(),
        help: None,
    })
}

/// What a source hands out: its facts, the error that ended it, its skip counts and its
/// declared timeline.
type Drained = (
    Vec<InputFact>,
    Option<Box<StreamError>>,
    SkipCounts,
    Option<(u64, u64)>,
);

fn drain(source: &mut dyn FactSource) -> Drained {
    let mut facts = Vec::new();
    let error = loop {
        match source.next_fact() {
            Ok(Some(fact)) => facts.push(fact),
            Ok(None) => break None,
            Err(error) => break Some(error),
        }
    };
    (facts, error, source.skipped(), source.declared_timeline())
}

/// Reads `text` as `like` would, line by line and in blocks with `parallelism`; `Err`
/// says how the two differ. A format that reads in blocks must read every stream alike
/// both ways, errors and skip counts included: its tests check that here.
pub fn compare_with_sequential(
    text: &str,
    like: &FactReader<io::Empty>,
    parallelism: Parallelism,
) -> Result<(), String> {
    let expected = drain(&mut like.with_input(text.as_bytes()));
    let blocks = || {
        ParallelReader::spawn(
            io::Cursor::new(text.as_bytes().to_vec()),
            like.with_input(io::empty()),
            parallelism,
        )
        .map_err(|e| e.to_string())
    };
    let got = drain(&mut blocks()?);
    // A time point at a time (`FactSource::take_at`, as the feeding loop reads), line by
    // line and in blocks.
    let by_time = drain_by_time(&mut like.with_input(text.as_bytes()));
    let blocks_by_time = drain_by_time(&mut blocks()?);
    let name = like.format().name();
    for (how, got) in [
        ("in blocks", got),
        ("by time point", by_time),
        ("in blocks by time point", blocks_by_time),
    ] {
        if got != expected {
            return Err(format!(
                "{name} {parallelism:?}:\n{text}\n--- {how}\n{got:?}\n--- line by line\n{expected:?}"
            ));
        }
    }
    Ok(())
}

/// [`drain`] through [`FactSource::take_at`]: the first fact of each time point, then the
/// rest of it in one call.
fn drain_by_time(source: &mut dyn FactSource) -> Drained {
    let mut facts = Vec::new();
    let mut head = source.next_fact();
    let error = loop {
        match head {
            Ok(Some(fact)) => {
                let time = fact.time;
                let mut at = vec![(fact.pred, fact.args)];
                head = source.take_at(time, &mut at);
                let at = at.into_iter();
                facts.extend(at.map(|(pred, args)| InputFact { pred, args, time }));
            }
            Ok(None) => break None,
            Err(error) => break Some(error),
        }
    };
    (facts, error, source.skipped(), source.declared_timeline())
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::stream::Schema;
    use crate::stream::csv::Csv;
    use crate::stream::td::Td;
    use stgflow_lang::compile_str;

    fn like(format: Arc<dyn Format>, tolerance: Tolerance) -> FactReader<io::Empty> {
        let compiled = compile_str("p.tdl", "q(X, Y, T) :- p(X, Y, T). r(T) :- s(T).");
        FactReader::new(io::empty(), "in", format, Schema::new(&compiled.program))
            .with_tolerance(tolerance)
    }

    fn both(text: &str, format: Arc<dyn Format>, tolerance: Tolerance, parallelism: Parallelism) {
        compare_with_sequential(text, &like(format, tolerance), parallelism)
            .unwrap_or_else(|e| panic!("{e}"));
    }

    /// A TD line: mostly ordered facts, sometimes spaces, several facts, comments,
    /// unknown predicates, wrong arities, a time behind, or a malformed line.
    fn td_line(time: u64) -> impl Strategy<Value = String> {
        let back = time.saturating_sub(2);
        prop_oneof![
            6 => (0..3u8, 0..3u8).prop_map(move |(a, b)| format!("p(c{a},{b},{time}).")),
            2 => Just(format!("s({time}).")),
            1 => Just(format!("p( a , 1 , {time} ).  q(b, \"x y\", {time}). % two")),
            1 => Just("% a comment".to_owned()),
            1 => Just(String::new()),
            1 => (0..20u8).prop_map(move |k| format!("u{k}(a,{time}).")),
            1 => Just(format!("p(a,{time}).")),
            1 => Just(format!("p(a,b,{back}).")),
            1 => Just("p(a,,3).".to_owned()),
        ]
    }

    fn csv_line(time: u64) -> impl Strategy<Value = String> {
        prop_oneof![
            6 => (0..3u8).prop_map(move |a| format!("{time},p,c{a},\"q, {a}\"")),
            1 => Just("time,pred,arg".to_owned()),
            1 => Just(format!("{time},u,1")),
            1 => Just(format!("{},s", time.saturating_sub(2))),
            1 => Just(format!("{time},p,\"open")),
        ]
    }

    /// Lines at times that mostly stay or move on by one.
    fn stream(line: fn(u64) -> BoxedStrategy<String>) -> impl Strategy<Value = String> {
        proptest::collection::vec((0..3u64, any::<u64>()), 0..40).prop_flat_map(move |steps| {
            let mut time = 0;
            let lines: Vec<BoxedStrategy<String>> = steps
                .iter()
                .map(|(step, _)| {
                    time += u64::from(*step == 2);
                    line(time)
                })
                .collect();
            lines.prop_map(|lines| {
                let mut text = lines.join("\n");
                text.push('\n');
                text
            })
        })
    }

    fn parallelism() -> impl Strategy<Value = Parallelism> {
        (1..4usize, 1..80usize).prop_map(|(threads, block_bytes)| Parallelism {
            threads,
            block_bytes,
        })
    }

    fn tolerance() -> impl Strategy<Value = Tolerance> {
        (any::<bool>(), any::<bool>()).prop_map(|(skip_late, strict)| Tolerance {
            lateness: 0,
            skip_late,
            strict,
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Cut into blocks of a few bytes and parsed on 1–3 threads, a stream reads as
        /// the sequential reader reads it: the same facts, the same error (file, line,
        /// column, message), the same skip counts and timeline.
        #[test]
        fn parallel_reading_equals_sequential_reading(
            td in stream(|t| td_line(t).boxed()),
            csv in stream(|t| csv_line(t).boxed()),
            parallelism in parallelism(),
            tolerance in tolerance(),
        ) {
            both(&td, Arc::new(Td), tolerance, parallelism);
            both(&csv, Arc::new(Csv), tolerance, parallelism);
        }
    }

    #[test]
    fn a_block_behind_the_one_before_is_the_sequential_error() {
        // Block 2 starts behind block 1's latest time: on its own it reads fine.
        let text = "p(a,1,5).\np(a,1,3).\n";
        let template = like(Arc::new(Td), Tolerance::default());
        let parallelism = Parallelism {
            threads: 2,
            block_bytes: 4,
        };
        let mut reader = ParallelReader::spawn(
            io::Cursor::new(text.as_bytes().to_vec()),
            template,
            parallelism,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let (facts, error, _, _) = drain(&mut reader);
        assert_eq!(facts.len(), 1);
        let error = error.unwrap_or_else(|| panic!("no error"));
        assert_eq!((error.code, error.line), ("E102", 2));
        assert!(error.message.contains("(line 1)"), "{}", error.message);
        both(text, Arc::new(Td), Tolerance::default(), parallelism);
    }

    /// The unknown predicate names kept are the first ones in the file, whichever block
    /// they were parsed in.
    #[test]
    fn the_unknown_names_kept_are_the_first_in_the_file() {
        let text: String = (0..40).map(|k| format!("u{k}(a,1).\n")).collect();
        for (threads, block_bytes) in [(1, 25), (3, 25), (2, 120), (2, 200)] {
            let parallelism = Parallelism {
                threads,
                block_bytes,
            };
            both(&text, Arc::new(Td), Tolerance::default(), parallelism);
        }
    }

    #[test]
    fn a_file_without_a_final_line_end_and_lines_longer_than_a_block() {
        let long: String = (0..50).map(|i| format!("p(a,{i},2). ")).collect();
        let text = format!("p(a,1,1).\n{long}\np(b,1,3).");
        for block_bytes in [1, 7, 64, 1 << 20] {
            let parallelism = Parallelism {
                threads: 2,
                block_bytes,
            };
            both(&text, Arc::new(Td), Tolerance::default(), parallelism);
        }
        let template = like(Arc::new(Td), Tolerance::default());
        let mut reader = ParallelReader::spawn(
            io::Cursor::new(text.into_bytes()),
            template,
            Parallelism {
                threads: 2,
                block_bytes: 5,
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let (facts, error, _, _) = drain(&mut reader);
        assert_eq!((facts.len(), error), (52, None));
    }

    /// An input that fails to read part-way: the facts before, then the error.
    #[test]
    fn a_read_failure_ends_the_stream_with_an_error_after_the_facts_before() {
        struct Failing(io::Cursor<Vec<u8>>);
        impl Read for Failing {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                match self.0.read(buf)? {
                    0 => Err(io::Error::other("disk on fire")),
                    n => Ok(n),
                }
            }
        }
        let text = "p(a,1,1).\np(a,1,2).\n".as_bytes().to_vec();
        let template = like(Arc::new(Td), Tolerance::default());
        let parallelism = Parallelism {
            threads: 1,
            block_bytes: 10,
        };
        let mut reader =
            ParallelReader::spawn(Failing(io::Cursor::new(text)), template, parallelism)
                .unwrap_or_else(|e| panic!("{e}"));
        let (facts, error, _, _) = drain(&mut reader);
        assert_eq!(facts.len(), 2);
        let error = error.unwrap_or_else(|| panic!("no error"));
        assert_eq!((error.code, error.line), ("E103", 3));
        assert!(error.message.contains("disk on fire"));
    }
}
