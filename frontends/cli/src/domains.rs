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
use std::io::BufReader;

use stgflow_io::stream::{FactReader, Schema, Tolerance};
use stgflow_lang::ir::{Fact, PredId, Program};
use stgflow_lang::value::Value;

use crate::args::EcDomains;
use crate::{Context, Failure};

/// How the stream files are read ahead: their format, RTEC's clock tick, the run's
/// tolerance and its last time point (in time points).
pub(crate) struct Ahead<'a> {
    pub(crate) streams: &'a [String],
    pub(crate) format: Option<&'a str>,
    pub(crate) tick: u64,
    pub(crate) tolerance: Tolerance,
    pub(crate) until: Option<u64>,
}

impl Context<'_> {
    /// Adds to `program`, from the time point after the timeline's first, every entity its dynamic
    /// domains collect from the stream files (see the module docs); nothing when the
    /// domains are read as the stream goes (`--ec-domains stream`, `.ec` by default, and
    /// by default where a stream is stdin or a pipe, which cannot be read twice). The
    /// number of entities added.
    pub(crate) fn read_domains_ahead(
        &mut self,
        program: &mut Program,
        ahead: &Ahead<'_>,
    ) -> Result<usize, Failure> {
        if self.domains.is_empty() {
            return Ok(0);
        }
        let reading = match self.ec_domains {
            Some(reading) => reading,
            None if self.rtec_file => EcDomains::Input,
            None => EcDomains::Stream,
        };
        if reading == EcDomains::Stream {
            return Ok(0);
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
            return Ok(0);
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
        let schema = Schema::new(program);
        let tolerance = Tolerance {
            skip_late: true,
            ..ahead.tolerance
        };
        let mut entities: HashSet<(PredId, Vec<Value>)> = HashSet::new();
        let mut found = Vec::new();
        for stream in ahead.streams {
            let format = self.stream_format(ahead.format, stream);
            let (file, _) = crate::run::open_input(stream, None)?;
            let mut reader =
                FactReader::new(BufReader::new(file), stream.clone(), format, schema.clone())
                    .with_tick(ahead.tick)
                    .with_tolerance(tolerance);
            // A fact that cannot be read ends this file's reading ahead; the run reports
            // it where it is, after printing what comes before it.
            while let Ok(Some(fact)) = reader.next_fact() {
                if fact.time < self.timeline_start || ahead.until.is_some_and(|u| fact.time > u) {
                    continue;
                }
                for (_, domain, rule) in rules.iter().filter(|(input, ..)| *input == fact.pred) {
                    if let Some(entity) = rule.entity(&fact.args) {
                        let key = (*domain, entity);
                        if !entities.contains(&key) {
                            found.push((key.clone(), rule.head.span));
                            entities.insert(key);
                        }
                    }
                }
            }
        }
        // RTEC's window (Ts, Te] is open on the left: the timeline's first time point is
        // its Ts, at which background knowledge already holds, and the domain holds from
        // the window's first time point, the next.
        let from = self.timeline_start.saturating_add(1);
        let added = found.len();
        for ((pred, args), span) in found {
            program.facts.push(Fact {
                pred,
                args,
                time: from,
                span,
            });
        }
        Ok(added)
    }
}
