//! A shard's output of a part, and the output's bytes made from every shard's.
//!
//! * **Groups** (`changes`, facts dealt to shards by ranges of their first argument's
//!   order, [`super::deal::Dealer`]): each shard formats its own lines, in groups of one
//!   predicate at one time point. Within a time point and a predicate every shard's lines
//!   come before the next shard's, so the merge only copies groups, in order of time
//!   point, predicate and shard: no line is compared.
//! * **Merged** (`changes`, dealt by hash): each shard's changes in output order; the
//!   worker that merges a part sorts each time point's changes from every shard and
//!   formats them.
//! * **Keyed** (points, intervals, `--print-from`: a sink that keeps what its facts hold):
//!   each shard formats its lines with its own sink, each line with a key that orders
//!   it ([`Sink::keyed`]); the merge compares keys.
//! * **Files** (`--output-dir`): each shard writes its own part files, part number its
//!   shard's, given every time point as a keyed sink is; nothing is merged.

use stgflow_io::sink::{KeyedLines, Sink, Template, merge_keyed};
use stgflow_lang::ir::PredId;

use super::super::super::messages::{Update, change};
use super::super::super::order::merge_time_points;
use super::super::outbox::Outbox;

/// How shards format their output (see the module docs).
pub(in crate::runtime::replay) enum Format<'a> {
    Groups(&'a Sink<Vec<u8>>),
    Merged(&'a Sink<Vec<u8>>),
    Keyed(&'a Template),
    /// Each shard's part files, made before the shards start (so that a directory that
    /// cannot be written to fails the run at once), taken by the shard.
    Files(&'a [std::sync::Mutex<Option<Sink<std::io::Sink>>>]),
}

impl Format<'_> {
    /// Whether the end of the output writes lines: the intervals still open.
    pub(in crate::runtime::replay) fn writes_an_end(&self) -> bool {
        match self {
            Format::Groups(_) | Format::Merged(_) => false,
            Format::Keyed(template) => template.writes_an_end(),
            Format::Files(sinks) => (sinks.iter()).any(|sink| {
                (sink.lock().unwrap_or_else(|poisoned| poisoned.into_inner()))
                    .as_ref()
                    .is_some_and(Sink::writes_an_end)
            }),
        }
    }
}

/// A shard's formatted lines of a part, and per group of one predicate at one time point:
/// the time point, the predicate's rank and where its lines end.
pub(super) type Groups = (Vec<u8>, Vec<(u64, usize, usize)>);

/// A shard's output of some time points of a part, in time order.
#[derive(Debug)]
pub(super) enum Output {
    /// Its lines, and per group of one predicate at one time point: the time point, the
    /// predicate's rank and where its lines end.
    Groups(Vec<u8>, Vec<(u64, usize, usize)>),
    Updates(Vec<Update>),
    Lines(KeyedLines),
}

impl Output {
    /// Appends `more`, of later time points.
    pub(super) fn append(&mut self, more: Output) {
        match (self, more) {
            (Output::Groups(text, groups), Output::Groups(more_text, more_groups)) => {
                let base = text.len();
                text.extend_from_slice(&more_text);
                groups.extend(
                    more_groups
                        .into_iter()
                        .map(|(t, r, end)| (t, r, end + base)),
                );
            }
            (Output::Updates(updates), Output::Updates(mut more)) => updates.append(&mut more),
            (Output::Lines(lines), Output::Lines(more)) => {
                let (keys, text) = (lines.keys.len(), lines.text.len());
                lines.keys.extend_from_slice(&more.keys);
                lines.text.extend_from_slice(&more.text);
                (lines.ends).extend(
                    more.ends
                        .into_iter()
                        .map(|(t, k, e)| (t, k + keys, e + text)),
                );
            }
            _ => {}
        }
    }

    /// Splits off the output of time point `bound` and later, which it returns.
    pub(super) fn split_off(&mut self, bound: u64) -> Output {
        match self {
            Output::Groups(text, groups) => {
                let at = groups.partition_point(|g| g.0 < bound);
                let cut = at.checked_sub(1).map_or(0, |g| groups[g].2);
                let rest = groups.split_off(at);
                let rest = rest
                    .into_iter()
                    .map(|(t, r, end)| (t, r, end - cut))
                    .collect();
                Output::Groups(text.split_off(cut), rest)
            }
            Output::Updates(updates) => {
                let at = updates.partition_point(|u| u.1 < bound);
                Output::Updates(updates.split_off(at))
            }
            Output::Lines(lines) => {
                let at = lines.ends.partition_point(|e| e.0 < bound);
                let (keys, text) = at
                    .checked_sub(1)
                    .map_or((0, 0), |i| (lines.ends[i].1, lines.ends[i].2));
                let ends = lines.ends.split_off(at);
                Output::Lines(KeyedLines {
                    text: lines.text.split_off(text),
                    keys: lines.keys.split_off(keys),
                    ends: ends
                        .into_iter()
                        .map(|(t, k, e)| (t, k - keys, e - text))
                        .collect(),
                })
            }
        }
    }
}

/// A shard's own formatting of its output, as `Format` says.
pub(super) enum Formatter {
    Groups(Sink<Vec<u8>>, Vec<(u64, usize, usize)>),
    Merged(Vec<Update>),
    /// A keyed sink and the next time point it writes.
    Keyed(Sink<std::io::Sink>, u64),
    /// A sink writing part files (none for a shard beyond those made), the next time
    /// point it writes (each, as a keyed sink's), and the first error writing them.
    Files(Option<Sink<std::io::Sink>>, u64, Option<std::io::Error>),
}

impl Formatter {
    /// Shard `shard`'s formatter for `format`, its first part starting at `first`.
    pub(super) fn new(format: &Format<'_>, shard: usize, first: u64) -> Formatter {
        match format {
            Format::Files(sinks) => {
                let sink = (sinks[shard].lock())
                    .unwrap_or_else(|poisoned| poisoned.into_inner())
                    .take();
                Formatter::Files(sink, first, None)
            }
            Format::Groups(template) => Formatter::Groups(template.part(None), Vec::new()),
            Format::Merged(_) => Formatter::Merged(Vec::new()),
            Format::Keyed(template) => Formatter::Keyed(Sink::keyed((*template).clone()), first),
        }
    }

    /// Takes the output in `out` (in output order) of every time point before `upto`
    /// (a keyed sink is given every time point, with or without output: one that keeps
    /// what holds prints it at each); `out` keeps what is later.
    pub(super) fn take(&mut self, out: &mut Vec<Update>, upto: u64, rank: &[usize]) {
        let end = out.partition_point(|u| u.1 < upto);
        match self {
            Formatter::Groups(sink, groups) => {
                let mut at = 0;
                while at < end {
                    let ((pred, _), t, _) = out[at];
                    let start = at;
                    while at < end && out[at].1 == t && out[at].0.0 == pred {
                        at += 1;
                    }
                    let changes = out[start..at]
                        .iter()
                        .map(|((pred, row), _, diff)| (*pred as PredId, &row[..], *diff));
                    // A sink writing into memory cannot fail.
                    let _ = sink.emit_sorted(t, changes);
                    let rank = rank.get(pred as usize).copied().unwrap_or(usize::MAX);
                    groups.push((t, rank, sink.written()));
                }
                out.drain(..end);
            }
            Formatter::Merged(taken) => taken.extend(out.drain(..end)),
            Formatter::Files(sink, written, failed) => {
                if let Some(sink) = sink
                    && let Err(e) = emit_each_point(sink, written, &out[..end], upto)
                {
                    failed.get_or_insert(e);
                }
                out.drain(..end);
            }
            Formatter::Keyed(sink, written) => {
                // A sink writing into memory cannot fail.
                let _ = emit_each_point(sink, written, &out[..end], upto);
                out.drain(..end);
            }
        }
    }

    /// How many bytes of output it holds (of a change, about 16).
    pub(super) fn size(&self) -> usize {
        match self {
            Formatter::Groups(sink, _) => sink.written(),
            Formatter::Merged(taken) => taken.len() * 16,
            Formatter::Keyed(sink, _) => sink.keyed_size(),
            Formatter::Files(..) => 0,
        }
    }

    /// Whether a time point without changes writes lines ([`Sink::writes_every_point`]):
    /// only a sink that is given every time point can.
    pub(super) fn writes_every_point(&self) -> bool {
        match self {
            Formatter::Keyed(sink, _) => sink.writes_every_point(),
            Formatter::Files(Some(sink), ..) => sink.writes_every_point(),
            Formatter::Groups(..) | Formatter::Merged(_) | Formatter::Files(None, ..) => false,
        }
    }

    /// The output taken so far; where the input `ended`, with the output's end (the
    /// intervals still open). The bytes of lines go on into a buffer of `outbox`'s.
    pub(super) fn output(&mut self, ended: bool, outbox: &Outbox) -> Output {
        match self {
            Formatter::Groups(sink, groups) => {
                let like = sink.written();
                Output::Groups(sink.take_bytes(outbox.buffer(like)), std::mem::take(groups))
            }
            Formatter::Merged(taken) => Output::Updates(std::mem::take(taken)),
            Formatter::Keyed(sink, _) => {
                if ended {
                    let _ = sink.finish();
                }
                Output::Lines(sink.take_keyed())
            }
            Formatter::Files(sink, _, failed) => {
                if ended && let Some(Err(e)) = sink.as_mut().map(Sink::finish) {
                    failed.get_or_insert(e);
                }
                Output::Groups(Vec::new(), Vec::new())
            }
        }
    }

    /// The first error writing part files, taken.
    pub(super) fn failed(&mut self) -> Option<std::io::Error> {
        match self {
            Formatter::Files(_, _, failed) => failed.take(),
            _ => None,
        }
    }
}

/// Gives `sink` every time point from `written` up to `upto`, each with its changes in
/// `out` (in output order), with or without any ([`Sink::emit_through`]); the first
/// error, if one.
fn emit_each_point<W: std::io::Write>(
    sink: &mut Sink<W>,
    written: &mut u64,
    out: &[Update],
    upto: u64,
) -> std::io::Result<()> {
    let from = *written;
    *written = from.max(upto);
    sink.emit_through((from, upto), out, change, |_, _| {})
        .map(|_| ())
}

/// The bytes of the shards' `outputs` of a part, in order (in a buffer of `outbox`'s,
/// the outputs' own buffers going back to it), and the last time point they hold output
/// of.
pub(super) fn merge(
    format: &Format<'_>,
    outputs: Vec<Output>,
    rank: &[usize],
    outbox: &Outbox,
) -> (Vec<u8>, u64) {
    match format {
        Format::Files(_) => (Vec::new(), 0),
        Format::Groups(_) => {
            let runs: Vec<Groups> = (outputs.into_iter())
                .filter_map(|o| match o {
                    Output::Groups(text, groups) => Some((text, groups)),
                    _ => None,
                })
                .collect();
            let size = runs.iter().map(|(text, _)| text.len()).sum();
            let merged = merge_groups(&runs, outbox.buffer(size));
            for (text, _) in runs {
                outbox.recycle(text);
            }
            merged
        }
        Format::Merged(template) => {
            let mut runs: Vec<Vec<Update>> = (outputs.into_iter())
                .filter_map(|o| match o {
                    Output::Updates(updates) => Some(updates),
                    _ => None,
                })
                .collect();
            let (mut merged, mut order, mut gathered) = (Vec::new(), Vec::new(), Vec::new());
            merge_time_points(&mut runs, rank, &mut order, &mut gathered, &mut merged);
            let mut sink = template.part(None);
            let mut through = 0;
            let mut at = 0;
            while let Some(&(_, t, _)) = merged.get(at) {
                let start = at;
                while merged.get(at).is_some_and(|u| u.1 == t) {
                    at += 1;
                }
                let changes = merged[start..at]
                    .iter()
                    .map(|((pred, row), _, diff)| (*pred as PredId, &row[..], *diff));
                let _ = sink.emit_sorted(t, changes);
                through = t;
            }
            (sink.take_bytes(Vec::new()), through)
        }
        Format::Keyed(_) => {
            let runs: Vec<KeyedLines> = (outputs.into_iter())
                .filter_map(|o| match o {
                    Output::Lines(lines) => Some(lines),
                    _ => None,
                })
                .collect();
            let size = runs.iter().map(|r| r.text.len()).sum();
            let mut bytes = outbox.buffer(size);
            bytes.reserve(size);
            let mut points = Vec::new();
            merge_keyed(&runs, &mut bytes, &mut points);
            let through = (points.iter().rev().map(|&(t, _)| t))
                .find(|&t| t != u64::MAX)
                .unwrap_or(0);
            (bytes, through)
        }
    }
}

/// The shards' groups in order of time point, predicate, and shard, into `bytes`.
fn merge_groups(runs: &[Groups], mut bytes: Vec<u8>) -> (Vec<u8>, u64) {
    bytes.reserve(runs.iter().map(|(text, _)| text.len()).sum());
    let mut at = vec![0usize; runs.len()];
    let head = |at: &[usize], i: usize| runs[i].1.get(at[i]).map(|&(t, rank, _)| (t, rank));
    let mut through = 0;
    while let Some(first) = (0..runs.len()).filter_map(|i| head(&at, i)).min() {
        for (i, (text, groups)) in runs.iter().enumerate() {
            if head(&at, i) == Some(first) {
                let start = at[i].checked_sub(1).map_or(0, |g| groups[g].2);
                bytes.extend_from_slice(&text[start..groups[at[i]].2]);
                at[i] += 1;
            }
        }
        through = first.0;
    }
    (bytes, through)
}
