//! The input cut into parts by time: each part a range of time points, and in every file
//! the lines of those time points (with, before them, the lines of the time points a part
//! reads to warm up). The cuts are found by searching the files, not by reading them;
//! only the count of each part's lines (for the line numbers of errors and warnings) reads
//! every byte, on the workers, each its share.

use std::io;

use stgflow_io::drive::Timeline;
use stgflow_io::stream::split::{PartRange, SplitFile};
use stgflow_lang::ir::Program;

/// The input's parts (see the module docs).
#[derive(Debug)]
pub(super) struct Cut {
    pub(super) files: Vec<SplitFile>,
    /// The first time point of the timeline.
    pub(super) first: u64,
    /// The last time point, where the timeline or a file says; `None`: the input's last.
    pub(super) until: Option<u64>,
    /// Per part, its first time point (the first part's is `first`).
    pub(super) starts: Vec<u64>,
    /// Per part, the first time point it evaluates, its warm-up's; `None` for a part
    /// that reads from the input's start.
    pub(super) warm_from: Vec<Option<u64>>,
    /// Per part, where it reads in each file, in the order of `files`.
    pub(super) ranges: Vec<Vec<PartRange>>,
    /// The number of its first part among the run's (the rest of a run read as one part
    /// is numbered as the part it starts at: its part files' number).
    pub(super) first_part: usize,
}

impl Cut {
    /// The number of parts.
    pub(super) fn len(&self) -> usize {
        self.starts.len()
    }

    /// The time points part `k` owns: from its first to the next part's (excluded;
    /// `None`: on to the end).
    pub(super) fn times(&self, k: usize) -> (u64, Option<u64>) {
        (self.starts[k], self.starts.get(k + 1).copied())
    }

    /// The first time point part `k` evaluates: its warm-up's, or the timeline's.
    pub(super) fn evaluated_from(&self, k: usize) -> u64 {
        self.warm_from[k].unwrap_or(self.first)
    }

    /// Readers of part `k`'s lines, one per file, each over its range there.
    pub(super) fn readers(&self, k: usize) -> Vec<stgflow_io::stream::split::Part> {
        (self.ranges[k].iter())
            .zip(&self.files)
            .map(|(range, file)| file.part(range.clone()))
            .collect()
    }

    /// The timeline of part `k` evaluated from `from`: up to the part's last time point,
    /// or for the last part to the run's end.
    pub(super) fn timeline(&self, k: usize, from: u64) -> Timeline {
        let (_, end) = self.times(k);
        Timeline {
            from: Some(from),
            until: match end {
                Some(end) => Some(end - 1),
                None => self.until,
            },
        }
    }

    /// The part that reads the rest of the input from part `k` on, as one: where the
    /// parts cannot be trusted past it (see [`stgflow_io::stream::split::Part::misplaced`]).
    pub(super) fn rest_from(&self, k: usize) -> Cut {
        let ranges = self.ranges[k]
            .iter()
            .zip(&self.files)
            .map(|(range, file)| PartRange {
                own: range.own.start..file.len(),
                times: (range.times.0, None),
                ..range.clone()
            })
            .collect();
        Cut {
            files: self.files.clone(),
            first: self.first,
            until: self.until,
            starts: vec![self.starts[k]],
            warm_from: vec![self.warm_from[k]],
            ranges: vec![ranges],
            first_part: self.first_part + k,
        }
    }
}

/// The program's facts' first and last time points.
fn program_times(program: &Program) -> Option<(u64, u64)> {
    let first = program.facts.iter().map(|f| f.time).min()?;
    let last = program.facts.iter().map(|f| f.time).max()?;
    Some((first, last))
}

/// Where the input's timeline starts and ends: its first time point, its last where the
/// timeline or a file declares one, and its last time point with input otherwise.
#[derive(Clone, Copy, Debug)]
pub(super) struct Bounds {
    pub(super) first: u64,
    pub(super) until: Option<u64>,
    pub(super) last: u64,
}

impl Bounds {
    /// The time points from the first to the last.
    pub(super) fn span(&self) -> u64 {
        self.last.saturating_sub(self.first).saturating_add(1)
    }
}

/// The bounds of the timeline of `files` and `program`'s facts, as the driver would find
/// them reading every source; `None` when there is no input at all.
pub(super) fn bounds(
    files: &[SplitFile],
    program: &Program,
    timeline: Timeline,
) -> io::Result<Option<Bounds>> {
    // The files' last times are looked for beside their heads (a columnar file decodes
    // a page of every column for each); they are needed where no timeline is declared.
    let (heads, lasts) = std::thread::scope(|scope| {
        let lasts = scope.spawn(|| {
            (files.iter())
                .map(SplitFile::last_time)
                .collect::<io::Result<Vec<_>>>()
        });
        let heads = files.iter().map(SplitFile::head).collect::<Vec<_>>();
        (heads, lasts.join())
    });
    let mut firsts = Vec::new();
    let mut declared: Vec<(u64, u64)> = Vec::new();
    for head in heads {
        let head = head?;
        firsts.extend(head.first);
        declared.extend(head.timeline);
    }
    let facts = program_times(program);
    let first = timeline
        .from
        .or(declared.iter().map(|d| d.0).min())
        .or(firsts.iter().copied().chain(facts.map(|f| f.0)).min());
    let Some(first) = first else {
        return Ok(None);
    };
    let until = timeline.until.or(declared.iter().map(|d| d.1).max());
    let last = match until {
        Some(until) => until,
        None => {
            let lasts = lasts.map_err(|_| io::Error::other("a thread failed"))??;
            let last = lasts.into_iter().fold(facts.map(|f| f.1), Option::max);
            last.unwrap_or(first)
        }
    };
    Ok(Some(Bounds { first, until, last }))
}

/// Cuts the input of `files` (and `program`'s facts) within `bounds` into at most `wanted`
/// parts of about equal size, each warmed up by the `warm` time points before it.
pub(super) fn cut(
    files: Vec<SplitFile>,
    bounds: Bounds,
    wanted: usize,
    warm: u64,
) -> io::Result<Cut> {
    let Bounds { first, until, last } = bounds;
    let starts = boundaries(&files, first, last, wanted)?;
    let warm_from: Vec<Option<u64>> = (starts.iter().enumerate())
        .map(|(k, &start)| (k > 0).then(|| start.saturating_sub(warm).max(first)))
        .collect();
    let mut ranges: Vec<Vec<PartRange>> = vec![Vec::with_capacity(files.len()); starts.len()];
    for file in &files {
        let mut offsets = vec![0u64];
        for &start in &starts[1..] {
            let from = *offsets.last().unwrap_or(&0);
            offsets.push(file.offset_of(start, from..file.len())?);
        }
        offsets.push(file.len());
        for (k, &start) in starts.iter().enumerate() {
            let own = offsets[k]..offsets[k + 1];
            let before = match warm_from[k] {
                None => 0,
                Some(warm) => file.offset_of(warm, 0..own.start)?,
            };
            ranges[k].push(PartRange {
                before,
                own,
                lines: (0, 0),
                warm_from: warm_from[k].unwrap_or(first),
                // The first part reads its lines from the file's start: facts before
                // the timeline are the driver's to drop, not misplaced.
                times: (if k == 0 { 0 } else { start }, starts.get(k + 1).copied()),
            });
        }
    }
    Ok(Cut {
        files,
        first,
        until,
        starts,
        warm_from,
        ranges,
        first_part: 0,
    })
}

/// The first time point of each part: the timeline's first, then the times found at
/// equal fractions of the largest file's lines between `first` and `last`.
fn boundaries(files: &[SplitFile], first: u64, last: u64, wanted: usize) -> io::Result<Vec<u64>> {
    let mut starts = vec![first];
    let Some(largest) = files.iter().max_by_key(|f| f.weight()) else {
        return Ok(starts);
    };
    if wanted <= 1 || last <= first {
        return Ok(starts);
    }
    let lo = largest.offset_of(first, 0..largest.len())?;
    let hi = largest.offset_of(last.saturating_add(1), lo..largest.len())?;
    for k in 1..wanted {
        let at = lo + (hi - lo) * k as u64 / wanted as u64;
        let Some(time) = largest.time_near(at)? else {
            break;
        };
        if time > *starts.last().unwrap_or(&first) && time <= last {
            starts.push(time);
        }
    }
    Ok(starts)
}

/// Sets each part's line counts (the lines before its own lines, and before the next
/// part's) from the lines of each part's own bytes, counted on `threads` threads.
pub(super) fn count_lines(cut: &mut Cut, threads: usize) -> io::Result<()> {
    // The last part's own lines come before no other part's.
    let jobs: Vec<(usize, usize)> = (0..cut.len().saturating_sub(1))
        .flat_map(|k| (0..cut.files.len()).map(move |f| (k, f)))
        .collect();
    let threads = threads.clamp(1, jobs.len().max(1));
    let counts: Vec<io::Result<Vec<(usize, usize, usize)>>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|i| {
                let (cut, jobs) = (&*cut, &jobs);
                scope.spawn(move || {
                    jobs.iter()
                        .skip(i)
                        .step_by(threads)
                        .map(|&(k, f)| {
                            let own = cut.ranges[k][f].own.clone();
                            Ok((k, f, cut.files[f].lines(own)?))
                        })
                        .collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(io::Error::other("a thread failed")))
            })
            .collect()
    });
    let mut per_part = vec![vec![0usize; cut.files.len()]; cut.len()];
    for result in counts {
        for (k, f, n) in result? {
            per_part[k][f] = n;
        }
    }
    let mut before = vec![0usize; cut.files.len()];
    for (ranges, counts) in cut.ranges.iter_mut().zip(&per_part) {
        for ((range, before), own) in ranges.iter_mut().zip(&mut before).zip(counts) {
            range.lines = (*before, *before + own);
            *before += own;
        }
    }
    Ok(())
}
