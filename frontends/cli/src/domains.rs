//! An event description's dynamic domains read ahead from the stream files
//! (`--ec-domains input`, the default for RTEC's own files).
//!
//! RTEC fills a dynamic domain (`dynamicDomain(id(_))`) for a window from the input
//! entities of the whole window, and holds it over the window from its start: CAVIAR's
//! `close_34(P1, P2)=false` (a complement over `id`) holds from the window's start for
//! ids that appear only later in it. A stream read as it comes knows an entity from its
//! first appearance on. Run over files, the whole input is RTEC's one window, so the
//! files are read once before the run and each entity is given from the window's first
//! time point: RTEC's window (Ts, Te] is open on the left, and the timeline's first time
//! point plays its Ts (background knowledge holds there already).

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom};

use hashbrown::HashMap;
use stgflow_io::stream::{FactReader, Schema, Tolerance};
use stgflow_lang::Compiled;
use stgflow_lang::diag::Span;
use stgflow_lang::ir::{Fact, Literal, Origin, PredId, Program};
use stgflow_lang::value::Value;

use crate::args::EcDomains;
use crate::{Context, Failure};

/// How the stream files are read ahead: their format, RTEC's clock tick, the run's
/// tolerance, its last time point (in time points) and the threads that read.
pub(crate) struct Ahead<'a> {
    pub(crate) streams: &'a [String],
    pub(crate) format: Option<&'a str>,
    pub(crate) tick: u64,
    pub(crate) tolerance: Tolerance,
    pub(crate) until: Option<u64>,
    /// Threads that read ahead (`--parse-threads`; by default every core).
    pub(crate) threads: Option<usize>,
}

impl Context<'_> {
    /// Adds to `compiled`'s program, from the time point after the timeline's first, every
    /// entity its dynamic domains collect from the stream files and the program's own
    /// facts (see the module docs), and drops the rules by which they grow; nothing when
    /// the domains are read as the stream goes (`--ec-domains stream`, `.ec` by default,
    /// and by default where a stream is stdin or a pipe, which cannot be read twice). The
    /// number of entities added.
    pub(crate) fn read_domains_ahead(
        &mut self,
        compiled: &mut Compiled,
        ahead: &Ahead<'_>,
    ) -> Result<usize, Failure> {
        let Some(found) = self.domain_entities(&compiled.program, ahead)? else {
            return Ok(0);
        };
        let program = &mut compiled.program;
        let added = found.len();
        for ((pred, args), (time, span)) in found {
            program.facts.push(Fact {
                pred,
                args,
                time,
                span,
            });
        }
        let growing = self.growth_rules(program);
        if !growing.is_empty() {
            let mut index = 0;
            program.rules.retain(|_| {
                index += 1;
                !growing.contains(&(index - 1))
            });
            if compiled.analysis.is_some() {
                compiled.analysis = Some(stgflow_lang::stratify::analyse(program));
            }
        }
        Ok(added)
    }

    /// The indices of `program`'s rules by which a dynamic domain grows with its input
    /// entities, as the translation wrote them ([`stgflow_ec::translate::DomainRule`]):
    /// the domain's atom from the one input atom, at the same time point.
    fn growth_rules(&self, program: &Program) -> HashSet<usize> {
        program
            .rules
            .iter()
            .enumerate()
            .filter(|(_, rule)| {
                let [Literal::Positive(source)] = rule.body.as_slice() else {
                    return false;
                };
                matches!(rule.origin, Origin::Generated { .. })
                    && rule.count.is_none()
                    && source.offset == 0
                    && self.domains.iter().any(|domain| {
                        program.pred_id(domain.domain()) == Some(rule.head.pred)
                            && program.pred_id(domain.input()) == Some(source.pred)
                            && domain.source.span == source.span
                    })
            })
            .map(|(index, _)| index)
            .collect()
    }

    /// Each entity the dynamic domains collect over the whole input, with the time point
    /// it is given at and where its rule is; `None` where the domains are read as the
    /// stream goes.
    fn domain_entities(
        &mut self,
        program: &Program,
        ahead: &Ahead<'_>,
    ) -> Result<Option<Vec<Entity>>, Failure> {
        if self.domains.is_empty() {
            return Ok(None);
        }
        let reading = match self.ec_domains {
            Some(reading) => reading,
            None if self.rtec_file => EcDomains::Input,
            None => EcDomains::Stream,
        };
        if reading == EcDomains::Stream {
            return Ok(None);
        }
        let once = ahead
            .streams
            .iter()
            .find(|stream| *stream == "-" || !std::fs::metadata(stream).is_ok_and(|m| m.is_file()));
        if let Some(stream) = once {
            let name = if stream == "-" { "stdin" } else { stream };
            if self.ec_domains.is_some() {
                return Err(Failure::Message(format!(
                    "--ec-domains input reads the stream files before the run, and {name} cannot be read twice; give --ec-domains stream (each entity from its first appearance on)"
                )));
            }
            if !self.quiet {
                let _ = writeln!(
                    self.stderr,
                    "warning: {name} is read as it comes, so the dynamic domains hold each entity from its first appearance on (--ec-domains stream), not from the timeline's start as RTEC's window does"
                );
            }
            return Ok(None);
        }
        // The rules of each input predicate, by the domain each adds to.
        let rules: Vec<(PredId, PredId, &stgflow_ec::translate::DomainRule)> = self
            .domains
            .iter()
            .filter_map(|rule| {
                Some((
                    program.pred_id(rule.input())?,
                    program.pred_id(rule.domain())?,
                    rule,
                ))
            })
            .collect();
        // RTEC's window (Ts, Te] is open on the left: the timeline's first time point is
        // its Ts, at which background knowledge already holds, and the domain holds from
        // the window's first time point, the next. An entity named at Ts itself holds
        // there, as the rule that grows the domain gives it.
        let from = self.timeline_start.saturating_add(1);
        let start = self.timeline_start;
        let collector = Collector {
            rules: &rules,
            start,
            from,
            until: ahead.until,
        };
        let mut found = Found::default();
        let mut entity = Vec::new();
        for fact in &program.facts {
            collector.collect(&mut found, &mut entity, (fact.pred, &fact.args, fact.time));
        }
        if let Some(stream) = (ahead.streams.iter()).find(|s| self.is_columnar(s)) {
            return Err(Failure::Message(format!(
                "{stream}: a columnar (Parquet or Arrow) stream is not read ahead for RTEC's dynamic domains; run with `--ec-domains stream`"
            )));
        }
        let schema = Schema::new(program);
        let tolerance = Tolerance {
            skip_late: true,
            ..ahead.tolerance
        };
        let formats: Vec<_> = ahead
            .streams
            .iter()
            .map(|stream| self.stream_format(ahead.format, stream))
            .collect();
        // The files in parts (a large plain file in one part per core, so that one file
        // is read on every core too), a part at a time per thread, every core (nothing
        // else runs yet); the parts' entities then taken in order, as one thread reading
        // the files in turn would find them.
        let threads = (ahead.threads)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .max(1);
        let parts = parts(ahead.streams, threads);
        let read_one = |part: &Part| -> Result<PartRead, Failure> {
            let stream = &ahead.streams[part.file];
            let input: Box<dyn std::io::Read + Send> = match &part.bytes {
                None => crate::run::open_input(stream, None)?.0,
                Some(bytes) => {
                    let mut file = std::fs::File::open(stream)
                        .map_err(|e| Failure::Message(format!("cannot open {stream}: {e}")))?;
                    file.seek(SeekFrom::Start(bytes.start))
                        .map_err(|e| Failure::Message(format!("cannot read {stream}: {e}")))?;
                    Box::new(file.take(bytes.end - bytes.start))
                }
            };
            let mut reader = FactReader::new(
                BufReader::new(input),
                stream.clone(),
                formats[part.file].clone(),
                schema.clone(),
            )
            .with_tick(ahead.tick)
            .with_tolerance(tolerance);
            let mut found = Found::default();
            let mut entity = Vec::new();
            // A fact that cannot be read ends this file's reading ahead; the run reports
            // it where it is, after printing what comes before it.
            let ended = loop {
                match reader.next_fact() {
                    Ok(Some(fact)) => collector.collect(
                        &mut found,
                        &mut entity,
                        (fact.pred, &fact.args, fact.time),
                    ),
                    Ok(None) => break true,
                    Err(_) => break false,
                }
            };
            Ok(PartRead {
                found,
                times: reader.times_read(),
                ended,
                declares: reader.declared_timeline().is_some(),
            })
        };
        let next = std::sync::atomic::AtomicUsize::new(0);
        let mut per_part: Vec<(usize, Result<PartRead, Failure>)> = std::thread::scope(|scope| {
            let take = || {
                let mut mine = Vec::new();
                loop {
                    let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(part) = parts.get(index) else {
                        return mine;
                    };
                    mine.push((index, read_one(part)));
                }
            };
            let helpers: Vec<_> = (1..threads.min(parts.len()))
                .map(|_| scope.spawn(take))
                .collect();
            let mut all = take();
            for helper in helpers {
                all.extend(helper.join().unwrap_or_default());
            }
            all
        });
        if per_part.len() < parts.len() {
            return Err(Failure::Message(
                "a thread reading the stream files ahead failed".to_owned(),
            ));
        }
        per_part.sort_unstable_by_key(|(index, _)| *index);
        let mut read = per_part.into_iter().map(|(_, read)| read);
        for (file, count) in parts_per_file(&parts) {
            let reads = read.by_ref().take(count).collect::<Result<Vec<_>, _>>()?;
            let reads = match as_one_reader(&reads) {
                Some(taken) => reads.into_iter().take(taken).collect(),
                // Read again as a whole: a later part is not what it would be after the
                // parts before it.
                None => vec![read_one(&Part { file, bytes: None })?],
            };
            for part in reads {
                for ((domain, values), (time, span)) in part.found.entities {
                    found.add(domain, &values, time, span);
                }
            }
        }
        Ok(Some(found.entities))
    }
}

/// A plain stream file at least this large is read ahead in parts, one per core.
const PART_BYTES: u64 = 1 << 18;

/// A part of a stream file read ahead on its own: the file's index and, for a part of a
/// plain file, the byte range of its whole lines (`None`: the whole file).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Part {
    file: usize,
    bytes: Option<std::ops::Range<u64>>,
}

/// What reading one part ahead found.
struct PartRead {
    found: Found,
    /// The first and the latest time point of its lines (`ReaderState::times_read`).
    times: Option<(u64, u64)>,
    /// Whether it was read to its end (not stopped by a fact that cannot be read).
    ended: bool,
    /// Whether it declares a timeline.
    declares: bool,
}

/// The parts `streams` are read ahead in with `threads` threads: each file whole, or,
/// where there are fewer files than threads, each plain file of [`PART_BYTES`] or more in
/// as many parts as there are threads per file, cut at line ends. In file order, each
/// file's parts in order.
fn parts(streams: &[String], threads: usize) -> Vec<Part> {
    let per_file = threads.div_ceil(streams.len().max(1));
    let mut parts = Vec::new();
    for (file, stream) in streams.iter().enumerate() {
        let plain = crate::run::Compression::of(stream).0 == crate::run::Compression::None;
        let size = std::fs::metadata(stream)
            .ok()
            .filter(|m| m.is_file() && plain)
            .map(|m| m.len());
        let cuts = match size {
            Some(size) if per_file > 1 && size >= PART_BYTES => line_ends(stream, size, per_file),
            _ => None,
        };
        let Some(cuts) = cuts else {
            parts.push(Part { file, bytes: None });
            continue;
        };
        let mut from = 0;
        for to in cuts {
            if to > from {
                parts.push(Part {
                    file,
                    bytes: Some(from..to),
                });
                from = to;
            }
        }
    }
    parts
}

/// The ends of `count` parts of about equal size of the file `stream` of `size` bytes,
/// each just after a line end (the last at `size`); `None` if it cannot be read.
fn line_ends(stream: &str, size: u64, count: usize) -> Option<Vec<u64>> {
    let mut file = BufReader::new(std::fs::File::open(stream).ok()?);
    let mut ends = Vec::with_capacity(count);
    let mut line = Vec::new();
    for k in 1..count as u64 {
        let at = size * k / count as u64;
        if ends.last().is_some_and(|&end| end >= at) {
            continue;
        }
        file.seek(SeekFrom::Start(at)).ok()?;
        line.clear();
        let rest = file.read_until(b'\n', &mut line).ok()? as u64;
        ends.push((at + rest).min(size));
    }
    ends.push(size);
    Some(ends)
}

/// Each file's index and how many of `parts` are its, in order.
fn parts_per_file(parts: &[Part]) -> Vec<(usize, usize)> {
    let mut counts: Vec<(usize, usize)> = Vec::new();
    for part in parts {
        match counts.last_mut() {
            Some((file, count)) if *file == part.file => *count += 1,
            _ => counts.push((part.file, 1)),
        }
    }
    counts
}

/// How many of one file's parts, read each on its own, one reader of the whole file reads
/// alike (up to and with the first that does not end, where that reader stops too); `None`
/// where a later part may read differently after the ones before it: its first time is
/// behind the latest before it (its lines may be late), it declares a timeline, or it does
/// not end (its error may depend on what comes before it).
fn as_one_reader(reads: &[PartRead]) -> Option<usize> {
    let mut latest: Option<u64> = None;
    for (index, read) in reads.iter().enumerate() {
        if index > 0 {
            let behind = read
                .times
                .zip(latest)
                .is_some_and(|((first, _), latest)| first < latest);
            if behind || read.declares || !read.ended {
                return None;
            }
        }
        if !read.ended {
            return Some(index + 1);
        }
        latest = latest.max(read.times.map(|(_, last)| last));
    }
    Some(reads.len())
}

/// What reading ahead collects: the domains' rules by input predicate, and the window.
struct Collector<'a> {
    rules: &'a [(PredId, PredId, &'a stgflow_ec::translate::DomainRule)],
    /// The timeline's first time point, and the next (the window's first).
    start: u64,
    from: u64,
    until: Option<u64>,
}

impl Collector<'_> {
    /// Adds to `found` the entities a fact of `pred` with `args` at `time` gives.
    fn collect(
        &self,
        found: &mut Found,
        entity: &mut Vec<Value>,
        (pred, args, time): (PredId, &[Value], u64),
    ) {
        if time < self.start || self.until.is_some_and(|u| time > u) {
            return;
        }
        for (_, domain, rule) in self.rules.iter().filter(|(input, ..)| *input == pred) {
            if rule.entity_into(args, entity) {
                found.add(*domain, entity, time.min(self.from), rule.head.span);
            }
        }
    }
}

/// A domain entity read ahead: the domain, its arguments, the time point it is given at
/// and where the rule that collects it is.
type Entity = ((PredId, Vec<Value>), (u64, Span));

/// The entities read ahead, each once, in the order first found; by domain, then by the
/// entity's values (looked up without copying them: most records name an entity seen
/// before).
#[derive(Default)]
struct Found {
    entities: Vec<Entity>,
    index: HashMap<PredId, HashMap<Vec<Value>, usize>>,
}

impl Found {
    fn add(&mut self, domain: PredId, entity: &[Value], time: u64, span: Span) {
        let index = self.index.entry(domain).or_default();
        match index.get(entity) {
            Some(&at) => {
                let given = &mut self.entities[at].1.0;
                *given = (*given).min(time);
            }
            None => {
                index.insert(entity.to_vec(), self.entities.len());
                self.entities
                    .push(((domain, entity.to_vec()), (time, span)));
            }
        }
    }
}
