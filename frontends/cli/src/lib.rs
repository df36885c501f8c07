//! The `stgflow` command line: `run` evaluates a TD program over streams, `check`
//! validates it and prints what the compiler sees.
//!
//! Exit codes: 0 success, 1 an invalid program, bad input or an I/O failure (the output of
//! every completed time point is written first), 2 a usage error.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use clap::{Args, Parser, Subcommand, ValueEnum};
use stgflow_engine::Engine;
use stgflow_eval::stg;
use stgflow_io::drive::{FactSource, ProgramFacts, RunError, Timeline};
use stgflow_io::sink::{Mode, Sink};
use stgflow_io::stream::{
    Code, FactReader, Format, Formats, Schema, SkipCounts, Tolerance, UNKNOWN_NAMES_KEPT,
    blocks::{ParallelReader, Parallelism},
};
use stgflow_lang::{Compiled, compile_str};

/// stgflow: Temporal Datalog stream reasoning.
///
/// Programs are Temporal Datalog (TD) rules whose last argument is the time:
/// `safe(X, T) :- safe(X, T-1), not warning(X, T-1).` Streams are facts with the time
/// last (`warning(d1, 7).`) or CSV lines `time,pred,arg1,…`, ordered by time.
#[derive(Debug, Parser)]
#[command(name = "stgflow", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    verbosity: Verbosity,
}

#[derive(Debug, Args)]
struct Verbosity {
    /// Print a summary of the run (time points, facts, time taken) on stderr.
    #[arg(short, long, global = true, conflicts_with = "quiet")]
    verbose: bool,
    /// Print errors only, no warnings.
    #[arg(short, long, global = true)]
    quiet: bool,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Evaluate PROGRAM over the STREAM files and print what holds.
    ///
    /// Example: stgflow run datasets/examples/device_safety.tdl datasets/examples/device_safety.facts
    Run(RunArgs),
    /// Validate PROGRAM and optionally print a stage of its compilation.
    ///
    /// Example: stgflow check datasets/examples/device_safety.tdl --dump strata
    Check(CheckArgs),
    /// Explain why a fact holds (its derivation, down to input facts) or why it does not.
    ///
    /// Example: stgflow explain datasets/examples/device_safety.tdl datasets/examples/device_safety.facts 'trusted(d1,4)'
    Explain(ExplainArgs),
}

#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
struct RunArgs {
    /// The TD program (`.tdl`), an Event Calculus description in RTEC's syntax (`.ec`),
    /// or a plain LARS program in Laser's syntax (`.lars`). Facts written in it are input
    /// too.
    program: PathBuf,
    /// Input streams, merged by time; `-` reads stdin (each time point is printed as soon
    /// as a later one arrives). With none, only the program's own facts are input.
    streams: Vec<String>,
    /// Which evaluator runs the program.
    #[arg(long, value_enum, default_value_t = EngineKind::Dataflow)]
    engine: EngineKind,
    /// Worker threads per process (dataflow engine).
    #[arg(short = 'w', long, default_value_t = 1, value_name = "N")]
    workers: usize,
    /// Number of processes in a timely cluster (dataflow engine); start one per process
    /// with the same arguments and its own `-p`.
    #[arg(short = 'n', long, default_value_t = 1, value_name = "N")]
    processes: usize,
    /// This process's index in the cluster, from 0; process 0 reads the input and
    /// prints the output.
    #[arg(short = 'p', long, default_value_t = 0, value_name = "I")]
    process: usize,
    /// File with one `host:port` per line, one line per process (default: 127.0.0.1
    /// from port 2101 up).
    #[arg(short = 'h', long, value_name = "FILE")]
    hostfile: Option<PathBuf>,
    /// Seconds a cluster process waits for the others to connect before giving up.
    #[arg(long, default_value_t = 30, value_name = "SECS")]
    connect_timeout: u64,
    /// Run LARS-style window definitions (♢/□) as literal rules instead of the delay
    /// operators (for checking that both agree).
    #[arg(long)]
    no_window_lowering: bool,
    /// Batch replay (dataflow engine): most time points handed to the workers at once.
    /// Larger batches cost fewer rounds of coordination; smaller ones keep less history
    /// in the joins' arrangements between compactions.
    #[arg(long, default_value_t = stgflow_engine::DataflowOptions::default().batch_points, value_name = "N")]
    batch_points: u64,
    /// Batch replay: threads that parse each input file, a block of lines at a time, ahead
    /// of the evaluation. By default, the cores left over by the workers and the thread
    /// that feeds them (none on 2 cores with `-w 1`). 0 reads files line by line on the
    /// calling thread, as stdin is; so are RTEC records and `--lateness`.
    #[arg(long, value_name = "N")]
    parse_threads: Option<usize>,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    help: Option<bool>,
    /// How to print what holds.
    #[arg(long, value_enum, default_value_t = OutputMode::Points)]
    mode: OutputMode,
    /// Predicates to print, comma-separated. Default: `#output` in the program, else
    /// every predicate a rule defines.
    #[arg(long, value_delimiter = ',', value_name = "PRED,…")]
    output: Vec<String>,
    /// Stream format; by default `.csv` files are CSV (RTEC records when the program is an
    /// `.ec` event description), `.laser` and `.stream` files Laser streams, and
    /// everything else TD facts.
    #[arg(long, value_parser = format_names())]
    format: Option<String>,
    /// Input time units per time point: time t of the input is time point t / N, and
    /// printed times are multiplied back (RTEC's `clock_tick`; 40 for CAVIAR).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    tick: u64,
    /// First time point of the timeline (default: the first time in the input).
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u64).range(..=stgflow_io::stream::MAX_TIME))]
    from: Option<u64>,
    /// Last time point of the timeline (default: the last time in the input).
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u64).range(..=stgflow_io::stream::MAX_TIME))]
    until: Option<u64>,
    #[command(flatten)]
    tolerance: ToleranceArgs,
    /// Write the streaming trigger graph as Graphviz DOT (`--engine stg`): every node
    /// built, with its rule, time and forget time, p-edges and n-edges.
    #[arg(long, value_name = "FILE.dot")]
    dump_stg: Option<PathBuf>,
    /// Print the streaming trigger graph's counters on stderr (`--engine stg`): nodes
    /// built, removed by MIN DATALOG, forgotten.
    #[arg(long)]
    stats: bool,
    /// With `--engine stg`: use no empty node as an edge source (not in the paper; the
    /// same facts from a graph that grows with the facts, not exponentially with the
    /// stream).
    #[arg(long)]
    stg_skip_empty: bool,
}

/// How a run treats input that breaks the stream contract.
#[derive(Debug, Args)]
struct ToleranceArgs {
    /// Accept facts up to N time points behind the latest time seen in their stream:
    /// they are held back until the stream has moved N time points past them (so output
    /// for time t comes once time t+N has been read). Later facts are an error.
    #[arg(long, default_value_t = 0, value_name = "N", value_parser = clap::value_parser!(u64).range(..=stgflow_io::stream::MAX_TIME))]
    lateness: u64,
    /// Skip facts later than `--lateness` allows, and report how many (a warning),
    /// instead of stopping with an error.
    #[arg(long)]
    skip_late: bool,
    /// Stop with an error on a fact of a predicate the program does not use, or with the
    /// wrong number of arguments (by default such facts are skipped and counted in a
    /// warning).
    #[arg(long)]
    strict: bool,
}

impl ToleranceArgs {
    fn tolerance(&self) -> Tolerance {
        Tolerance {
            lateness: self.lateness,
            skip_late: self.skip_late,
            strict: self.strict,
        }
    }
}

#[derive(Debug, Args)]
struct ExplainArgs {
    /// The TD program (`.tdl`), Event Calculus description (`.ec`) or LARS program
    /// (`.lars`).
    program: PathBuf,
    /// The input streams, then the fact to explain with its time last: `trusted(a,4)`.
    #[arg(required = true, num_args = 1.., value_name = "STREAM… FACT")]
    rest: Vec<String>,
    /// Stream format (as for `run`).
    #[arg(long, value_parser = format_names())]
    format: Option<String>,
    /// First time point of the timeline.
    #[arg(long, value_name = "T")]
    from: Option<u64>,
    /// Last time point of the timeline.
    #[arg(long, value_name = "T")]
    until: Option<u64>,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// The TD program (`.tdl`), Event Calculus description (`.ec`) or LARS program
    /// (`.lars`).
    program: PathBuf,
    /// Print a stage: `ast` (as parsed), `td` (the TD program, a front end's translation,
    /// each rule with its origin), `ir` (the rule model), `strata` (incremental
    /// stratification, temporal SCCs, forgetting horizons). Repeatable.
    #[arg(long, value_enum)]
    dump: Vec<Dump>,
}

/// Evaluators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum EngineKind {
    /// The parallel engine on timely/differential dataflow (`-w`, `-n/-p/-h`).
    Dataflow,
    /// The single-threaded reference evaluator (semi-naive per time point, per stratum).
    Reference,
    /// Streaming Trigger Graphs: the paper's Algorithm 4 as written (`--dump-stg`,
    /// `--stats`); for studying the algorithm on small streams.
    Stg,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum OutputMode {
    /// `trusted(a,4).` — every fact at every time point it holds.
    Points,
    /// `+trusted(a) @4` / `-trusted(a) @6` — when facts start and stop holding.
    Changes,
    /// `trusted(a) [4,6)` — maximal right-open intervals.
    Intervals,
    /// `4: trusted(a) trusted(b)` — Laser's output: every time point, atoms sorted as text.
    Laser,
}

/// The stream formats every run knows: TD facts and CSV, Laser streams, RTEC records (of
/// events only, unless the program is an event description that declares fluents).
fn formats() -> Formats {
    let mut formats = Formats::builtin();
    formats.register(Arc::new(stgflow_lars::stream::LaserStream));
    formats.register(Arc::new(stgflow_ec::records::RtecRecords::default()));
    formats
}

/// `--format`'s values: the names of [`formats`], each with what it reads.
fn format_names() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        formats()
            .all()
            .into_iter()
            .map(|f| clap::builder::PossibleValue::new(f.name()).help(f.about())),
    )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum Dump {
    Ast,
    Td,
    Ir,
    Strata,
}

/// Runs the command line `args`; returns the exit code.
pub fn run(
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    stdin: impl BufRead,
    mut stdout: impl Write,
    mut stderr: impl Write,
    color: bool,
) -> i32 {
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let code = if error.use_stderr() { 2 } else { 0 };
            let text = if color {
                error.render().ansi().to_string()
            } else {
                error.render().to_string()
            };
            if error.use_stderr() {
                let _ = write!(stderr, "{text}");
            } else {
                let _ = write!(stdout, "{text}");
            }
            return code;
        }
    };
    let mut context = Context {
        formats: formats(),
        stderr: &mut stderr,
        color,
        quiet: cli.verbosity.quiet,
        verbose: cli.verbosity.verbose,
    };
    let result = match cli.command {
        Command::Run(args) => context.run(args, stdin, &mut stdout),
        Command::Check(args) => context.check(args, &mut stdout),
        Command::Explain(args) => context.explain(args, &mut stdout),
    };
    match result {
        Ok(()) => 0,
        Err(Failure::Reported) => 1,
        Err(Failure::Exit(code)) => code,
        Err(Failure::Message(message)) => {
            let _ = writeln!(context.stderr, "error: {message}");
            1
        }
    }
}

enum Failure {
    /// Already printed (diagnostics).
    Reported,
    Message(String),
    /// Already printed; exit with this code (128 + a signal's number).
    Exit(i32),
}

struct Context<'a> {
    /// The stream formats known: [`formats`], and an `.ec` program's RTEC records (which
    /// `.csv` files are then read as).
    formats: Formats,
    stderr: &'a mut dyn Write,
    color: bool,
    quiet: bool,
    verbose: bool,
}

impl Context<'_> {
    fn compile(&mut self, path: &PathBuf) -> Result<Compiled, Failure> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|e| Failure::Message(format!("cannot read {name}: {e}")))?;
        let text = String::from_utf8(bytes).map_err(|e| {
            let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
            let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
            let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
            let column = String::from_utf8_lossy(&valid[line_start..])
                .chars()
                .count()
                + 1;
            Failure::Message(format!(
                "{name}:{line}:{column}: invalid UTF-8 (byte {}); programs must be UTF-8 text",
                valid.len()
            ))
        })?;
        let compiled = if is_event_description(path) {
            let ec = stgflow_ec::compile_str(&name, &text);
            self.formats.register(Arc::new(ec.records(true)));
            ec.compiled
        } else if is_lars_program(path) {
            stgflow_lars::compile_str(&name, &text)
        } else {
            compile_str(&name, &text)
        };
        let errors = compiled.has_errors();
        if errors || !self.quiet {
            let text = compiled.render_diagnostics(self.color);
            let _ = self.stderr.write_all(text.as_bytes());
        }
        if errors {
            let count = compiled.diagnostics.iter().filter(|d| d.is_error()).count();
            let _ = writeln!(
                self.stderr,
                "error: {name}: {count} error{} found",
                if count == 1 { "" } else { "s" }
            );
            return Err(Failure::Reported);
        }
        Ok(compiled)
    }

    fn check(&mut self, args: CheckArgs, stdout: &mut dyn Write) -> Result<(), Failure> {
        let compiled = self.compile(&args.program)?;
        let program = &compiled.program;
        let Some(analysis) = &compiled.analysis else {
            return Err(Failure::Reported);
        };
        let mut text = String::new();
        for dump in &args.dump {
            match dump {
                Dump::Ast => {
                    for item in &compiled.ast.items {
                        let span = match item {
                            stgflow_lang::syntax::ast::Item::Rule(rule) => rule.span,
                            stgflow_lang::syntax::ast::Item::Fact(atom) => atom.span,
                            stgflow_lang::syntax::ast::Item::Output(_, span) => *span,
                        };
                        text.push_str(&format!("{item}  % {}\n", compiled.sources.locate(span)));
                    }
                }
                Dump::Td => text.push_str(&dump_td(&compiled)),
                Dump::Ir => text.push_str(&dump_ir(&compiled)),
                Dump::Strata => text.push_str(&analysis.dump(program)),
            }
        }
        if args.dump.is_empty() {
            text = format!(
                "ok: {} rule{}, {} predicate{}, {} strat{}, history of {} time point{}\n",
                program.rules.len(),
                plural(program.rules.len()),
                program.predicates.len(),
                plural(program.predicates.len()),
                analysis.strata.len(),
                if analysis.strata.len() == 1 {
                    "um"
                } else {
                    "a"
                },
                analysis.max_horizon,
                plural(analysis.max_horizon as usize),
            );
        }
        stdout
            .write_all(text.as_bytes())
            .map_err(|e| Failure::Message(format!("cannot write the output: {e}")))
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
            std::fs::write(path, stg::to_dot(graph, program))
                .map_err(|e| Failure::Message(format!("cannot write {}: {e}", path.display())))?;
        }
        Ok(())
    }

    fn explain(&mut self, args: ExplainArgs, stdout: &mut dyn Write) -> Result<(), Failure> {
        use stgflow_eval::explain;
        let compiled = self.compile(&args.program)?;
        let program = &compiled.program;
        let Some(analysis) = &compiled.analysis else {
            return Err(Failure::Reported);
        };
        let Some((fact_text, streams)) = args.rest.split_last() else {
            return Err(Failure::Message("explain: which fact?".to_owned()));
        };
        let fact =
            explain::parse_fact(program, fact_text).map_err(|e| Failure::Message(e.to_string()))?;
        let schema = Schema::new(program);
        let mut sources: Vec<Box<dyn FactSource + '_>> = vec![Box::new(ProgramFacts::new(program))];
        for stream in streams {
            let format = self.stream_format(args.format.as_deref(), stream);
            let file = File::open(stream)
                .map_err(|e| Failure::Message(format!("cannot open {stream}: {e}")))?;
            sources.push(Box::new(FactReader::new(
                BufReader::new(file),
                stream.clone(),
                format,
                schema.clone(),
            )));
        }
        let timeline = Timeline {
            from: args.from,
            until: args.until,
        };
        let materialised = match explain::materialise(program, analysis, &mut sources, timeline) {
            Ok(materialised) => materialised,
            Err(RunError::Stream(e)) => {
                let _ = writeln!(self.stderr, "{e}");
                return Err(Failure::Reported);
            }
            Err(e) => return Err(Failure::Message(e.to_string())),
        };
        let answer = materialised.explain(&fact);
        let text = explain::render(program, &compiled.sources, &answer);
        stdout
            .write_all(text.as_bytes())
            .map_err(|e| Failure::Message(format!("cannot write the output: {e}")))
    }

    fn run(
        &mut self,
        args: RunArgs,
        stdin: impl BufRead,
        stdout: &mut dyn Write,
    ) -> Result<(), Failure> {
        let started = Instant::now();
        if args.engine != EngineKind::Stg
            && (args.dump_stg.is_some() || args.stats || args.stg_skip_empty)
        {
            return Err(Failure::Message(
                "--dump-stg, --stats and --stg-skip-empty need --engine stg".to_owned(),
            ));
        }
        let mut compiled = self.compile(&args.program)?;
        if !args.output.is_empty() {
            let mut outputs = Vec::new();
            for name in &args.output {
                let Some(pred) = compiled.program.pred_id(name.trim()) else {
                    return Err(Failure::Message(format!(
                        "--output: the program has no predicate `{}`",
                        name.trim()
                    )));
                };
                outputs.push(pred);
            }
            compiled.program.outputs = Some(outputs);
        }
        let program = &compiled.program;
        let Some(analysis) = &compiled.analysis else {
            return Err(Failure::Reported);
        };
        let schema = Schema::new(program);
        let mut sources: Vec<Box<dyn FactSource + '_>> = vec![Box::new(ProgramFacts::new(program))];
        let mut stdin = Some(stdin);
        let mut live = false;
        for stream in &args.streams {
            let format = self.stream_format(args.format.as_deref(), stream);
            let tolerance = args.tolerance.tolerance();
            let name = if stream == "-" { "<stdin>" } else { stream };
            // The reader's settings, for whichever input it reads.
            let like = FactReader::new(io::empty(), name, format, schema.clone())
                .with_tick(args.tick)
                .with_tolerance(tolerance);
            if stream == "-" {
                let Some(input) = stdin.take() else {
                    return Err(Failure::Message(
                        "`-` (stdin) is given more than once".to_owned(),
                    ));
                };
                live = true;
                sources.push(Box::new(like.with_input(input)));
            } else {
                let file = File::open(stream)
                    .map_err(|e| Failure::Message(format!("cannot open {stream}: {e}")))?;
                let parallelism = Parallelism {
                    threads: args.parse_threads.unwrap_or_else(|| {
                        Parallelism::default()
                            .threads
                            .saturating_sub(args.workers + 1)
                    }),
                    ..Parallelism::default()
                };
                // A pipe or device may be a live stream: it is read line by line.
                let regular = file.metadata().is_ok_and(|m| m.is_file());
                if regular
                    && parallelism.threads > 0
                    && ParallelReader::supports(like.format().as_ref(), tolerance)
                {
                    let reader = ParallelReader::spawn(file, like, parallelism).map_err(|e| {
                        Failure::Message(format!("cannot start reading {stream}: {e}"))
                    })?;
                    sources.push(Box::new(reader));
                } else {
                    sources.push(Box::new(
                        like.with_input(BufReader::with_capacity(1 << 16, file)),
                    ));
                }
            }
        }
        // A progress line on stderr for batch replay on a terminal.
        let bar = (!live
            && !self.quiet
            && std::io::stderr().is_terminal()
            && !args.streams.is_empty())
        .then(|| {
            let bar = indicatif::ProgressBar::new_spinner();
            bar.set_style(
                indicatif::ProgressStyle::with_template("{spinner} [{elapsed_precise}] {msg}")
                    .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(std::time::Duration::from_millis(200));
            bar
        });
        if let Some(bar) = &bar {
            let facts = std::rc::Rc::new(std::cell::Cell::new(0));
            sources = sources
                .into_iter()
                .map(|inner| -> Box<dyn FactSource + '_> {
                    Box::new(Progress {
                        inner,
                        bar: bar.clone(),
                        facts: facts.clone(),
                        started: Instant::now(),
                    })
                })
                .collect();
        }
        let mode = match args.mode {
            OutputMode::Points => Mode::Points,
            OutputMode::Changes => Mode::Changes,
            OutputMode::Intervals => Mode::Intervals,
            OutputMode::Laser => Mode::Snapshot(Arc::new(stgflow_lars::output::LaserOutput)),
        };
        let mut sink = Sink::new(io::BufWriter::with_capacity(1 << 16, stdout), mode, program);
        sink.flush_each = live;
        sink.time_scale = args.tick;
        let timeline = Timeline {
            from: args.from.map(|t| t / args.tick),
            until: args.until.map(|t| t / args.tick),
        };
        // From here a signal stops the run cleanly (see `stgflow_io::interrupt`).
        let listening = stgflow_io::interrupt::listen();
        let engine = match args.engine {
            EngineKind::Reference => Engine::Reference,
            EngineKind::Stg => Engine::Stg(stgflow_engine::StgOptions {
                record: args.dump_stg.is_some(),
                skip_empty_nodes: args.stg_skip_empty,
                ..stgflow_engine::StgOptions::default()
            }),
            EngineKind::Dataflow => Engine::Dataflow(stgflow_engine::DataflowOptions {
                cluster: stgflow_engine::Cluster {
                    workers: args.workers,
                    processes: args.processes,
                    process: args.process,
                    hostfile: args.hostfile.clone(),
                    connect_timeout: std::time::Duration::from_secs(args.connect_timeout),
                },
                lower_windows: !args.no_window_lowering,
                live,
                batch_points: args.batch_points,
                ..stgflow_engine::DataflowOptions::default()
            }),
        };
        let result = stgflow_engine::run(
            program,
            analysis,
            &mut sources,
            timeline,
            &engine,
            &mut sink,
        );
        drop(sink);
        drop(listening);
        // A run that finished after a signal arrived still reports the signal.
        let result = match (result, stgflow_io::interrupt::requested()) {
            (Ok(_), Some(stgflow_io::interrupt::Stop::Signal(signal))) => {
                Err(RunError::Interrupted(signal))
            }
            (result, _) => result,
        };
        if let Some(bar) = bar {
            bar.finish_and_clear();
        }
        match result {
            Ok(outcome) => {
                if let Some(report) = &outcome.stg {
                    self.report_stg(report, &args, program)?;
                }
                let summary = outcome.summary;
                if !self.quiet {
                    self.report_skips(&summary.skipped, program);
                }
                if self.verbose {
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
}

impl Context<'_> {
    /// A stream's format: `--format`, else by the file name's ending.
    fn stream_format(&self, given: Option<&str>, stream: &str) -> Arc<dyn Format> {
        given
            .and_then(|name| self.formats.named(name))
            .unwrap_or_else(|| self.formats.for_path(stream))
    }

    /// Warns about input facts that were read but not used: wrong arity (W101), unknown
    /// predicates (W102), later than `--lateness` under `--skip-late` (W103).
    fn report_skips(&mut self, skipped: &SkipCounts, program: &stgflow_lang::ir::Program) {
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

/// A source that reports its progress on a terminal progress line (batch replay only).
struct Progress<'a> {
    inner: Box<dyn FactSource + 'a>,
    bar: indicatif::ProgressBar,
    /// Facts read from all sources together.
    facts: std::rc::Rc<std::cell::Cell<u64>>,
    started: Instant,
}

impl FactSource for Progress<'_> {
    fn next_fact(
        &mut self,
    ) -> Result<Option<stgflow_io::stream::InputFact>, Box<stgflow_io::stream::StreamError>> {
        let fact = self.inner.next_fact()?;
        if let Some(fact) = &fact {
            let facts = self.facts.get() + 1;
            self.facts.set(facts);
            if facts % 65_536 == 0 {
                let rate = facts as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
                self.bar.set_message(format!(
                    "time point {}, {facts} facts, {:.2} M facts/s",
                    fact.time,
                    rate / 1e6
                ));
            }
        }
        Ok(fact)
    }

    fn skipped(&self) -> stgflow_io::stream::SkipCounts {
        self.inner.skipped()
    }

    fn declared_timeline(&self) -> Option<(u64, u64)> {
        self.inner.declared_timeline()
    }
}

fn dump_ir(compiled: &Compiled) -> String {
    let program = &compiled.program;
    let mut text = String::from("% predicates: name/arity (time counted)\n");
    for (p, predicate) in program.predicates.iter().enumerate() {
        let kind = if program.is_derived(p) {
            "derived"
        } else {
            "input"
        };
        text.push_str(&format!(
            "{}/{} {kind}\n",
            predicate.name,
            predicate.arity + 1
        ));
    }
    text.push_str("% rules (assignments written `V := expr`)\n");
    for (r, rule) in program.rules.iter().enumerate() {
        let mut location = rule
            .origin
            .span()
            .map(|s| compiled.sources.locate(s))
            .unwrap_or_default();
        if let stgflow_lang::ir::Origin::Generated { by, .. } = &rule.origin {
            location = format!("{by}, from {location}");
        }
        text.push_str(&format!(
            "r{r}: {}  % {location}\n",
            program.display_rule(rule)
        ));
    }
    if !program.facts.is_empty() {
        text.push_str("% facts\n");
        for fact in &program.facts {
            let mut args: Vec<String> = fact.args.iter().map(ToString::to_string).collect();
            args.push(fact.time.to_string());
            text.push_str(&format!(
                "{}({}).\n",
                program.pred_name(fact.pred),
                args.join(", ")
            ));
        }
    }
    let outputs: Vec<&str> = program
        .output_predicates()
        .iter()
        .map(|&p| program.pred_name(p))
        .collect();
    let source = if program.outputs.is_some() {
        "#output"
    } else {
        "every derived predicate"
    };
    text.push_str(&format!("% output ({source}): {}\n", outputs.join(", ")));
    text
}

/// Whether `path` is a plain LARS program (`.lars`, Laser's syntax).
fn is_lars_program(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("lars"))
}

/// The TD program as compiled: a TD file as parsed, or a front end's translation, each
/// rule with where it came from.
fn dump_td(compiled: &Compiled) -> String {
    use stgflow_lang::ir::Origin;
    use stgflow_lang::syntax::ast::Item;
    let rules = compiled
        .ast
        .items
        .iter()
        .filter(|i| matches!(i, Item::Rule(_)))
        .count();
    // Lowering keeps rules in order; their origins line up when none was dropped.
    let origins: Vec<&Origin> = if rules == compiled.program.rules.len() {
        compiled.program.rules.iter().map(|r| &r.origin).collect()
    } else {
        Vec::new()
    };
    let mut text = String::new();
    let mut next = 0;
    for item in &compiled.ast.items {
        let note = match item {
            Item::Rule(rule) => {
                next += 1;
                match origins.get(next - 1) {
                    Some(Origin::Generated { by, span }) => match span {
                        Some(span) => format!("{by}, {}", compiled.sources.locate(*span)),
                        None => by.clone(),
                    },
                    _ => compiled.sources.locate(rule.span),
                }
            }
            Item::Fact(atom) => compiled.sources.locate(atom.span),
            Item::Output(_, span) => compiled.sources.locate(*span),
        };
        text.push_str(&format!("{item}  % {note}\n"));
    }
    text
}

/// Whether `path` is an Event Calculus description (`.ec`, RTEC syntax).
fn is_event_description(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("ec"))
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
