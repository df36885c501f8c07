//! What a run reports on stderr besides its output: skipped input (warnings), the STG
//! engine's counters and graph, the `-v` summary, and why a run stopped.

use std::io;
use std::time::Instant;

use stgflow_engine::Outcome;
use stgflow_io::drive::{RunError, RunSummary};
use stgflow_io::stream::{Code, SkipCounts, UNKNOWN_NAMES_KEPT};
use stgflow_lang::ir::Program;

use crate::args::RunArgs;
use crate::{Context, Failure, plural};

impl Context<'_> {
    /// Reports a run's `result`: on success the STG report, the skips and the `-v`
    /// summary; else the error, as the failure the command exits with (a stop names the
    /// last time point written, `last_written`, where known).
    pub(crate) fn report(
        &mut self,
        result: Result<Outcome, RunError>,
        args: &RunArgs,
        program: &Program,
        (started, lines): (Instant, u64),
        last_written: Option<u64>,
    ) -> Result<(), Failure> {
        match result {
            Ok(outcome) => {
                if let Some(report) = &outcome.stg {
                    self.report_stg(report, args, program)?;
                }
                if !self.quiet {
                    self.report_skips(&outcome.summary.skipped, program);
                }
                if self.verbose {
                    self.report_summary(&outcome.summary, started);
                }
                if args.stats || args.stats_json.is_some() {
                    let mut report = RunReport::new(&outcome.summary, started, lines);
                    report.config = configuration(args);
                    if let Some(spread) = &outcome.spread {
                        report.spread = Some(spread.detail.clone());
                        report.threads = (spread.threads.iter())
                            .map(|(name, cpu)| (name.clone(), cpu.as_secs_f64()))
                            .collect();
                    }
                    self.write_report(&report, args)?;
                }
                Ok(())
            }
            Err(error) => {
                let failure = self.failure(&error, last_written);
                self.report_stopped(&error, args, (started, lines), last_written)?;
                failure
            }
        }
    }

    /// What a run that did not end says of why, on stderr, and its exit.
    fn failure(&mut self, error: &RunError, last_written: Option<u64>) -> Result<(), Failure> {
        match error {
            RunError::Output(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            RunError::Output(e) => Err(Failure::Message(format!("cannot write the output: {e}"))),
            RunError::Stream(e) => {
                let _ = writeln!(self.stderr, "{e}");
                Err(Failure::Reported)
            }
            RunError::Cluster(message) => Err(Failure::Message(message.clone())),
            RunError::Evaluation(error) => Err(Failure::Message(error.to_string())),
            &RunError::Interrupted(signal) => {
                if !self.quiet {
                    let name = match signal {
                        2 => "SIGINT",
                        15 => "SIGTERM",
                        _ => "a signal",
                    };
                    let written = match last_written {
                        Some(t) => format!(
                            " after time point {t}; the output of every time point up to it was written"
                        ),
                        None => "; the output of every completed time point was written".to_owned(),
                    };
                    let _ = writeln!(self.stderr, "stgflow: stopped by {name}{written}");
                }
                Err(Failure::Exit(128 + signal))
            }
        }
    }

    /// `--stats` and `--stats-json` of a run that did not end (a signal, an input error, a
    /// failed write): what it took until then, why it stopped and the last time point
    /// whose output was written. A reader that went away (a closed pipe) is an end.
    fn report_stopped(
        &mut self,
        error: &RunError,
        args: &RunArgs,
        (started, lines): (Instant, u64),
        last_written: Option<u64>,
    ) -> Result<(), Failure> {
        let why = match error {
            RunError::Output(e) if e.kind() == io::ErrorKind::BrokenPipe => return Ok(()),
            RunError::Output(_) => "the output could not be written",
            RunError::Stream(_) => "an input error",
            RunError::Cluster(_) => "a failure of the cluster",
            RunError::Evaluation(_) => "an evaluation error",
            RunError::Interrupted(2) => "SIGINT",
            RunError::Interrupted(15) => "SIGTERM",
            RunError::Interrupted(_) => "a signal",
        };
        if !args.stats && args.stats_json.is_none() {
            return Ok(());
        }
        let summary = RunSummary {
            last: last_written,
            ..RunSummary::default()
        };
        let mut report = RunReport::new(&summary, started, lines);
        report.config = configuration(args);
        report.stopped = Some((why.to_owned(), last_written));
        self.write_report(&report, args)
    }

    /// `--stats` (on stderr) and `--stats-json` (into its file), as asked.
    fn write_report(&mut self, report: &RunReport, args: &RunArgs) -> Result<(), Failure> {
        if args.stats {
            let _ = self.stderr.write_all(report.text().as_bytes());
        }
        if let Some(path) = &args.stats_json {
            std::fs::write(path, report.json())
                .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
        }
        Ok(())
    }

    /// `-v`'s one line: time points, input facts, skips, time taken.
    fn report_summary(&mut self, summary: &RunSummary, started: Instant) {
        let span = match (summary.first, summary.last) {
            (Some(first), Some(last)) => format!("[{first}, {last}]"),
            _ => "(empty)".to_owned(),
        };
        let _ = writeln!(
            self.stderr,
            "stgflow: {} time point{} {span}, {} input fact{}, {} of unknown predicates, {} outside the timeline, {:.3} s",
            summary.time_points,
            plural(summary.time_points as usize),
            summary.input_facts,
            plural(summary.input_facts as usize),
            summary.skipped.unknown,
            summary.dropped,
            started.elapsed().as_secs_f64()
        );
    }

    /// `--stats` and `--dump-stg` after an STG run.
    fn report_stg(
        &mut self,
        outcome: &stgflow_engine::StgReport,
        args: &RunArgs,
        program: &stgflow_lang::ir::Program,
    ) -> Result<(), Failure> {
        if args.stats {
            let stats = outcome.stats;
            let _ = writeln!(
                self.stderr,
                "stgflow: stg: {} nodes built, {} removed by MIN DATALOG, {} forgotten, {} iterations",
                stats.nodes_built, stats.removed_by_min_datalog, stats.forgotten, stats.iterations
            );
        }
        if let (Some(path), Some(graph)) = (&args.dump_stg, &outcome.graph) {
            std::fs::write(path, stgflow_eval::stg::to_dot(graph, program))
                .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
        }
        Ok(())
    }

    /// Warns about input facts that were read but not used: wrong arity (W101), unknown
    /// predicates (W102), later than `--lateness` under `--skip-late` (W103).
    fn report_skips(&mut self, skipped: &SkipCounts, program: &Program) {
        let mut wrong: Vec<_> = skipped.wrong_arity.iter().collect();
        wrong.sort();
        for (name, (arity, count, first)) in wrong {
            let _ = writeln!(
                self.stderr,
                "warning[{}]: skipped {count} input fact{} of `{name}` with the wrong number of arguments (the first at {first}, with {arity}); the program uses `{name}` with {}",
                Code::W101,
                plural(*count as usize),
                program
                    .pred_id(name)
                    .map_or(0, |p| program.predicates[p].arity + 1),
            );
        }
        if skipped.unknown > 0 {
            let mut names: Vec<_> = skipped.unknown_names.iter().collect();
            names.sort();
            let mut listed: Vec<String> = names
                .iter()
                .map(|(name, (count, first))| format!("`{name}` ({count}, first at {first})"))
                .collect();
            if names.len() >= UNKNOWN_NAMES_KEPT {
                listed.push("…".to_owned());
            }
            let _ = writeln!(
                self.stderr,
                "warning[{}]: skipped {} input fact{} of predicates the program does not use: {}; `--strict` makes this an error",
                Code::W102,
                skipped.unknown,
                plural(skipped.unknown as usize),
                listed.join(", "),
            );
        }
        if skipped.late > 0 {
            let _ = writeln!(
                self.stderr,
                "warning[{}]: skipped {} input fact{} later than the lateness allows (first at {})",
                Code::W103,
                skipped.late,
                plural(skipped.late as usize),
                skipped.first_late.as_deref().unwrap_or("?"),
            );
        }
    }
}

/// A writer that counts the lines written through it (`--stats`' output lines), when
/// `lines` is given: without `--stats` the output is not read again. Where the output is
/// binary records (`records`), it counts records, each what a line would say.
pub(crate) struct Lines<W> {
    pub(crate) inner: W,
    pub(crate) lines: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
    pub(crate) records: Option<stgflow_io::sink::records::Tally>,
    /// A copy of everything written (`run --plot` draws it afterwards).
    pub(crate) copy: Option<std::rc::Rc<std::cell::RefCell<Vec<u8>>>>,
}

impl<W: io::Write> io::Write for Lines<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let written = self.inner.write(buf)?;
        if let Some(lines) = &self.lines {
            let counted = match &mut self.records {
                Some(tally) => tally.count(&buf[..written]),
                None => buf[..written].iter().filter(|&&b| b == b'\n').count() as u64,
            };
            lines.fetch_add(counted, std::sync::atomic::Ordering::Relaxed);
        }
        if let Some(copy) = &self.copy {
            copy.borrow_mut().extend_from_slice(&buf[..written]);
        }
        Ok(written)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// `--stats` and `--stats-json`: what a run did, and what it cost.
struct RunReport {
    time_points: u64,
    first: Option<u64>,
    last: Option<u64>,
    input_facts: u64,
    unknown: u64,
    wrong_arity: u64,
    late: u64,
    outside: u64,
    output_lines: u64,
    wall: f64,
    user: f64,
    system: f64,
    peak_rss_kib: u64,
    /// Long symbols (IRIs, long names) made, and freed once no fact could hold them.
    long_symbols: (u64, u64),
    /// The dataflow engine's components: their time on the workers of process 0 and their
    /// output updates.
    components: Vec<(String, f64, Option<u64>)>,
    /// How the dataflow engine spread the run over its workers.
    spread: Option<String>,
    /// The CPU time of each thread that took part (of process 0), busiest first.
    threads: Vec<(String, f64)>,
    /// What was run, as a JSON object ([`configuration`]).
    config: String,
    /// Why a run that did not end stopped, and the last time point whose output was
    /// written; the counts of the input are then unknown.
    stopped: Option<(String, Option<u64>)>,
}

impl RunReport {
    fn new(summary: &RunSummary, started: Instant, output_lines: u64) -> RunReport {
        // RUSAGE_SELF: every thread of this process (the workers included).
        let (user, system, peak_rss_kib) =
            match nix::sys::resource::getrusage(nix::sys::resource::UsageWho::RUSAGE_SELF) {
                Ok(usage) => {
                    let seconds =
                        |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
                    (
                        seconds(usage.user_time()),
                        seconds(usage.system_time()),
                        u64::try_from(usage.max_rss()).unwrap_or(0),
                    )
                }
                Err(_) => (0.0, 0.0, 0),
            };
        RunReport {
            time_points: summary.time_points,
            first: summary.first,
            last: summary.last,
            input_facts: summary.input_facts,
            unknown: summary.skipped.unknown,
            wrong_arity: summary
                .skipped
                .wrong_arity
                .values()
                .map(|(_, n, _)| n)
                .sum(),
            late: summary.skipped.late,
            outside: summary.dropped,
            output_lines,
            wall: started.elapsed().as_secs_f64(),
            user,
            system,
            peak_rss_kib,
            long_symbols: stgflow_lang::value::symbols::counts(),
            components: summary
                .components
                .iter()
                .map(|c| (c.name.clone(), c.time.as_secs_f64(), c.records))
                .collect(),
            spread: None,
            threads: Vec::new(),
            config: "null".to_owned(),
            stopped: None,
        }
    }

    /// The busiest thread and its share of the CPU time, where the threads are known: what
    /// bounds a run's speed on as many cores as it has threads.
    fn busiest(&self) -> Option<(&str, f64, f64)> {
        let (name, cpu) = self.threads.first()?;
        let total = (self.user + self.system).max(1e-9);
        Some((name, *cpu, cpu / total))
    }

    fn rate(&self) -> f64 {
        if self.wall > 0.0 {
            self.input_facts as f64 / self.wall
        } else {
            0.0
        }
    }

    /// The JSON fields of what the run took: its output, time and memory.
    fn resources_json(&self) -> String {
        format!(
            "\"output_lines\":{},\"wall_s\":{:.6},\"cpu_s\":{:.6},\"user_s\":{:.6},\"system_s\":{:.6},\"peak_rss_kib\":{},\"long_symbols\":{},\"long_symbols_freed\":{}",
            self.output_lines,
            self.wall,
            self.user + self.system,
            self.user,
            self.system,
            self.peak_rss_kib,
            self.long_symbols.0,
            self.long_symbols.1,
        )
    }

    /// The lines on what the run took: its output, time and memory.
    fn resources(&self) -> String {
        format!(
            "  output        {} lines\n\
             \x20 wall time     {:.3} s\n\
             \x20 CPU time      {:.3} s (user {:.3} s, system {:.3} s)\n\
             \x20 peak RSS      {:.1} MB\n\
             \x20 long symbols  {} made, {} freed (IRIs and names over 14 bytes)\n",
            self.output_lines,
            self.wall,
            self.user + self.system,
            self.user,
            self.system,
            self.peak_rss_kib as f64 / 1024.0,
            self.long_symbols.0,
            self.long_symbols.1,
        )
    }

    fn text(&self) -> String {
        if let Some((why, last)) = &self.stopped {
            let written = last.map_or_else(
                || "no time point's output written".to_owned(),
                |t| format!("the output written through time point {t}"),
            );
            return format!(
                "stgflow: run report\n  stopped       by {why}; {written}\n{}",
                self.resources()
            );
        }
        let span = match (self.first, self.last) {
            (Some(first), Some(last)) => format!(" [{first}, {last}]"),
            _ => String::new(),
        };
        let mut components = String::new();
        if !self.components.is_empty() {
            let total: f64 = self
                .components
                .iter()
                .map(|(_, t, _)| t)
                .sum::<f64>()
                .max(1e-9);
            components.push_str(
                "  components    time scheduled and updates output on the workers, summed over them:\n",
            );
            for (name, time, records) in &self.components {
                let shown: String = name.chars().take(80).collect();
                let more = if shown.len() < name.len() { "…" } else { "" };
                let records = records.map_or_else(String::new, |n| n.to_string());
                components.push_str(&format!(
                    "    {:>9.3} s {:>5.1} % {records:>11}  {shown}{more}\n",
                    time,
                    100.0 * time / total
                ));
            }
        }
        let report = format!(
            "stgflow: run report\n\
             \x20 time points   {}{span}\n\
             \x20 input facts   {} read; skipped: {} of unknown predicates, {} of the wrong arity, {} late; {} outside the timeline\n\
             {}\
             \x20 input rate    {:.0} facts/s\n",
            self.time_points,
            self.input_facts,
            self.unknown,
            self.wrong_arity,
            self.late,
            self.outside,
            self.resources(),
            self.rate(),
        );
        let mut spread = String::new();
        if let Some(detail) = &self.spread {
            spread.push_str(&format!("  parallel      {detail}\n"));
        }
        if let Some((name, cpu, share)) = self.busiest() {
            spread.push_str(&format!(
                "  threads       {} recorded; the busiest, {name}, {cpu:.3} s of CPU ({:.1} % of the run's): on as many cores, the run takes at least that long\n",
                self.threads.len(),
                100.0 * share
            ));
        }
        report + &spread + &components
    }

    fn json(&self) -> String {
        let optional = |t: Option<u64>| t.map_or("null".to_owned(), |t| t.to_string());
        let components: Vec<String> = self
            .components
            .iter()
            .map(|(name, time, records)| {
                format!(
                    "{{\"component\":{},\"time_s\":{time:.6},\"records\":{}}}",
                    stgflow_io::sink::json_string(name),
                    optional(*records)
                )
            })
            .collect();
        let threads: Vec<String> = (self.threads.iter())
            .map(|(name, cpu)| {
                format!(
                    "{{\"thread\":{},\"cpu_s\":{cpu:.6}}}",
                    stgflow_io::sink::json_string(name)
                )
            })
            .collect();
        let spread = self
            .spread
            .as_deref()
            .map_or("null".to_owned(), stgflow_io::sink::json_string);
        let busiest_share = self
            .busiest()
            .map_or("null".to_owned(), |(_, _, share)| format!("{share:.4}"));
        if let Some((why, last)) = &self.stopped {
            return format!(
                "{{\"stopped\":{},\"last_written\":{},{},\"config\":{}}}\n",
                stgflow_io::sink::json_string(why),
                optional(*last),
                self.resources_json(),
                self.config,
            );
        }
        format!(
            "{{\"time_points\":{},\"first\":{},\"last\":{},\"input_facts\":{},\"skipped\":{{\"unknown\":{},\"wrong_arity\":{},\"late\":{}}},\"outside_timeline\":{},{},\"input_facts_per_s\":{:.1},\"components\":[{}],\"parallel\":{spread},\"threads\":[{}],\"busiest_share\":{busiest_share},\"config\":{}}}\n",
            self.time_points,
            optional(self.first),
            optional(self.last),
            self.input_facts,
            self.unknown,
            self.wrong_arity,
            self.late,
            self.outside,
            self.resources_json(),
            self.rate(),
            components.join(","),
            threads.join(","),
            self.config,
        )
    }
}

/// What a run was, for `--stats-json`: stgflow's version, the command line, and what the
/// engine made of it (the engine, the workers and processes, the output mode, the files).
fn configuration(args: &RunArgs) -> String {
    let lower = |debug: String| debug.to_lowercase();
    serde_json::json!({
        "version": env!("CARGO_PKG_VERSION"),
        "command": std::env::args().collect::<Vec<String>>(),
        "program": args.program.to_string_lossy(),
        "background": args.background.iter().map(|p| p.to_string_lossy()).collect::<Vec<_>>(),
        "streams": args.streams,
        "engine": lower(format!("{:?}", args.engine)),
        // The other engines run on one thread.
        "workers": (args.engine == crate::args::EngineKind::Dataflow).then(|| args.workers()),
        "processes": args.processes,
        "mode": lower(format!("{:?}", args.mode)),
    })
    .to_string()
}
