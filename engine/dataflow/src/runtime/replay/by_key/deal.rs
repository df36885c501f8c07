//! A part read and its facts dealt out to the shards by key.
//!
//! A fact goes to the shard of its key argument, a fact of a predicate held everywhere to
//! every shard. Where every printed predicate is keyed by its first argument, shards take
//! *ranges* of the keys' order ([`Dealer::by_ranges`]: bounds from a sample of the input,
//! on [`Value::order_prefix64`], so equal prefixes share a shard): within a time point
//! and a predicate, each shard's lines then come before the next shard's, and the output
//! is merged by copying (see [`super::output`]). Otherwise keys are dealt by hash.

use stgflow_io::drive::{FactSource, Fed, RunError, RunSummary, TimePoints, feed};
use stgflow_io::stream::SkipCounts;
use stgflow_lang::ir::{PredId, Program};
use stgflow_lang::value::{Row, Value};

use differential_dataflow::Hashable;
use rayon::prelude::*;

use super::super::Shared;
use super::super::by_time::sources;
use super::super::outbox::PartDone;
use super::super::parts::Cut;
use crate::plan::partition::Shard;

/// Facts sampled per part to find the shards' ranges...
const SAMPLE_PER_PART: usize = 2048;

/// ...from this many parts at most, spread over the input, sampled side by side: a
/// columnar file decodes a page of every column wherever a reader starts.
const SAMPLED_PARTS: usize = 16;

/// Where each fact goes.
#[derive(Debug, Clone)]
pub(in crate::runtime::replay) struct Dealer {
    keys: Vec<Shard>,
    shards: usize,
    /// The shards' ranges of key order: shard i takes the keys whose order prefix has i
    /// bounds at or below it. `None`: by hash.
    bounds: Option<Vec<u64>>,
}

impl Dealer {
    /// Dealing by the hash of each fact's key.
    pub(in crate::runtime::replay) fn by_hash(keys: Vec<Shard>, shards: usize) -> Dealer {
        Dealer {
            keys,
            shards: shards.max(1),
            bounds: None,
        }
    }

    /// Dealing by ranges of the keys' order, found from a sample of `cut`'s input, where
    /// every predicate `program` prints is keyed by its first argument (else by hash).
    pub(in crate::runtime::replay) fn by_ranges(
        keys: Vec<Shard>,
        shards: usize,
        program: &Program,
        cut: &Cut,
    ) -> Dealer {
        let printed_first = (program.output_predicates().into_iter())
            .all(|p| matches!(keys.get(p), Some(Shard::Arg(0) | Shard::Everywhere)));
        let mut dealer = Dealer::by_hash(keys, shards);
        if !printed_first || dealer.shards == 1 {
            return dealer;
        }
        let spots = cut.len().clamp(1, SAMPLED_PARTS);
        let per_spot = SAMPLE_PER_PART * cut.len() / spots;
        let keys = &dealer.keys;
        let mut sample: Vec<u64> = (0..spots)
            .into_par_iter()
            .flat_map_iter(|spot| sample_of(cut, spot * cut.len() / spots, per_spot, keys))
            .collect();
        sample.sort_unstable();
        sample.dedup();
        if sample.len() < dealer.shards {
            return dealer;
        }
        let bounds = (1..dealer.shards)
            .map(|i| sample[i * sample.len() / dealer.shards])
            .collect();
        dealer.bounds = Some(bounds);
        dealer
    }

    /// Whether shards take ranges of the keys' order (their lines of a predicate at a
    /// time point then come in shard order).
    pub(in crate::runtime::replay) fn in_ranges(&self) -> bool {
        self.bounds.is_some()
    }

    pub(in crate::runtime::replay) fn keys(&self) -> &[Shard] {
        &self.keys
    }

    pub(in crate::runtime::replay) fn shards(&self) -> usize {
        self.shards
    }

    /// The shard of a fact of `pred`; `None`: every shard.
    fn shard_of(&self, pred: PredId, row: &Row) -> Option<usize> {
        let Some(Shard::Arg(i)) = self.keys.get(pred) else {
            return None;
        };
        let key: Option<&Value> = row.get(*i);
        Some(match (&self.bounds, key) {
            (Some(bounds), Some(value)) => {
                let prefix = value.order_prefix64();
                bounds.partition_point(|&b| b <= prefix)
            }
            (None, Some(value)) => (value.hashed() % self.shards as u64) as usize,
            (_, None) => 0,
        })
    }
}

/// The order prefixes of the keys of the first `facts` facts of part `part` of `cut`.
fn sample_of(cut: &Cut, part: usize, facts: usize, keys: &[Shard]) -> Vec<u64> {
    let mut sample = Vec::new();
    for (range, file) in cut.ranges[part].iter().zip(&cut.files) {
        let mut part = file.part(stgflow_io::stream::split::PartRange {
            before: range.own.start,
            times: (0, None),
            ..range.clone()
        });
        for _ in 0..facts {
            let Ok(Some(fact)) = part.next_fact() else {
                break;
            };
            if let Some(Shard::Arg(i)) = keys.get(fact.pred) {
                sample.extend(fact.args.get(*i).map(|v| v.order_prefix64()));
            }
        }
    }
    sample
}

/// A shard's facts of one part: the facts in time order, and per time point with facts,
/// where its facts end.
#[derive(Debug, Default)]
pub(super) struct Share {
    pub(super) facts: Vec<(PredId, Row)>,
    pub(super) times: Vec<(u64, usize)>,
}

/// A part read and dealt out.
#[derive(Debug)]
pub(super) struct Dealt {
    /// Per shard, its share (taken by the shard).
    pub(super) shares: Vec<Option<Share>>,
    /// Its time points: from this one up to `through` (excluded).
    pub(super) from: u64,
    pub(super) through: u64,
    /// The run ends with this part: the last, or one that stopped the run.
    pub(super) last: bool,
    /// The output ends with this part: the input ended, or an input error or a stop
    /// ended it ([`RunError::ends_the_output`]).
    pub(super) ended: bool,
    /// What the part did (time points, input facts, skips, the error that stopped it),
    /// until the board takes it.
    pub(super) done: Option<PartDone>,
}

/// Reads part `part` of `cut` and deals its facts out by `dealer`, into `spare` shares
/// first; and whether a fact lay outside the part's range (the part then cannot be
/// trusted).
pub(super) fn deal(
    shared: &Shared,
    cut: &Cut,
    dealer: &Dealer,
    part: usize,
    spare: Vec<Share>,
) -> (Dealt, bool) {
    let (start, end) = cut.times(part);
    let mut files = cut.readers(part);
    let program_times = match cut.warm_from[part] {
        None => (0, end),
        Some(_) => (start, end),
    };
    let mut sources = sources(&shared.program, program_times, &mut files);
    let from = start.max(cut.first);
    let timeline = cut.timeline(part, from);
    // Each share made as big as it will about get (a fact a line): grown by doubling, its
    // copies took fresh pages.
    let lines: usize = (cut.ranges[part].iter())
        .map(|range| range.lines.1.saturating_sub(range.lines.0))
        .sum();
    let mut shares = spare;
    shares.resize_with(dealer.shards, Share::default);
    for share in &mut shares {
        share
            .facts
            .reserve(lines / dealer.shards + lines / (4 * dealer.shards));
    }
    let mut deal = Deal {
        dealer,
        shares,
        through: from,
        summary: RunSummary::default(),
        facts: 0,
    };
    let result = feed(&shared.program, &mut sources, timeline, &mut deal);
    let skipped: Vec<SkipCounts> = sources[1..].iter().map(|s| s.skipped()).collect();
    drop(sources);
    let misplaced = files.iter().any(|f| f.misplaced());
    let (dropped, error) = match result {
        Ok(fed) => (fed.dropped, None),
        Err(error) => (0, Some(error)),
    };
    let last = end.is_none() || error.is_some();
    let dealt = Dealt {
        shares: deal.shares.into_iter().map(Some).collect(),
        from,
        through: deal.through,
        last,
        // An input error or a stop ends the output there, as the input's end does.
        ended: last && error.as_ref().is_none_or(RunError::ends_the_output),
        done: Some(PartDone {
            summary: deal.summary,
            fed: Fed {
                input_facts: deal.facts,
                dropped,
            },
            skipped,
            error,
            ..PartDone::default()
        }),
    };
    (dealt, misplaced)
}

/// The driver's consumer for reading a part in the shards' way: each fact to the share of
/// its key's shard (to every share, a fact held everywhere).
struct Deal<'a> {
    dealer: &'a Dealer,
    shares: Vec<Share>,
    /// Every time point before this one has been read.
    through: u64,
    summary: RunSummary,
    facts: u64,
}

impl TimePoints for Deal<'_> {
    fn complete(&mut self, t: u64, input: Vec<(PredId, Row)>) -> Result<(), RunError> {
        self.facts += input.len() as u64;
        for (pred, row) in input {
            match self.dealer.shard_of(pred, &row) {
                Some(shard) => self.shares[shard].facts.push((pred, row)),
                None => {
                    for share in &mut self.shares {
                        share.facts.push((pred, row.clone()));
                    }
                }
            }
        }
        for share in &mut self.shares {
            let end = share.facts.len();
            if share.times.last().map_or(0, |&(_, e)| e) < end {
                share.times.push((t, end));
            }
        }
        self.summary.time_point(t);
        self.through = t + 1;
        Ok(())
    }

    fn quiet(&mut self, from: u64, to: u64) -> Result<(), RunError> {
        if let Some(stop) = stgflow_io::interrupt::requested() {
            return Err(stop.into());
        }
        self.summary.time_points(from, to);
        self.through = to;
        Ok(())
    }
}
