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
    /// summary; else the error, as the failure the command exits with.
    pub(crate) fn report(
        &mut self,
        result: Result<Outcome, RunError>,
        args: &RunArgs,
        program: &Program,
        started: Instant,
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
                Ok(())
            }
            Err(RunError::Output(e)) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
            Err(RunError::Output(e)) => {
                Err(Failure::Message(format!("cannot write the output: {e}")))
            }
            Err(RunError::Stream(e)) => {
                let _ = writeln!(self.stderr, "{e}");
                Err(Failure::Reported)
            }
            Err(RunError::Cluster(message)) => Err(Failure::Message(message)),
            Err(RunError::Evaluation(error)) => Err(Failure::Message(error.to_string())),
            Err(RunError::Interrupted(signal)) => {
                if !self.quiet {
                    let name = match signal {
                        2 => "SIGINT",
                        15 => "SIGTERM",
                        _ => "a signal",
                    };
                    let _ = writeln!(
                        self.stderr,
                        "stgflow: stopped by {name}; the output of every completed time point was written"
                    );
                }
                Err(Failure::Exit(128 + signal))
            }
        }
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
