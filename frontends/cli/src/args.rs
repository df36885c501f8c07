//! The command line's arguments: the commands and their flags (clap derive).

use std::path::PathBuf;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand, ValueEnum};
use stgflow_io::stream::{Formats, Tolerance};

/// stgflow: Temporal Datalog stream reasoning.
///
/// Programs are Temporal Datalog (TD) rules whose last argument is the time:
/// `safe(X, T) :- safe(X, T-1), not warning(X, T-1).` Streams are facts with the time
/// last (`warning(d1, 7).`) or CSV lines `time,pred,arg1,…`, ordered by time.
#[derive(Debug, Parser)]
#[command(name = "stgflow", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    #[command(flatten)]
    pub(crate) verbosity: Verbosity,
    /// When an event description's `start(F=V)` and `end(F=V)` happen: `rtec` (at the
    /// last time point before F=V holds, and the last at which it holds: what they
    /// trigger takes effect at once) or `paper` (at the first point at which F=V holds,
    /// and the first at which it no longer does). Default: `rtec` for RTEC's files
    /// (`.prolog`, `.pl`), `paper` for `.ec`.
    #[arg(long, value_enum, global = true, value_name = "READING")]
    pub(crate) ec_timing: Option<EcTiming>,
    /// Which entities an event description's dynamic domains (RTEC's `dynamicDomain`)
    /// hold: `input` (RTEC's, over one window of all the input: every entity the stream
    /// files name, from the timeline's first time point; the files are read once before
    /// the run for them) or `stream` (each entity from the first time point at which the
    /// input names it, as a live stream knows it). Default: `input` for RTEC's files
    /// (`.prolog`, `.pl`) when every stream is a file, else `stream`.
    #[arg(long, value_enum, global = true, value_name = "READING")]
    pub(crate) ec_domains: Option<EcDomains>,
    /// Which atoms a LARS program's tuple window of n holds: `laser` (Laser's, the
    /// default: every atom of the time point evaluated, and whole earlier time points
    /// while their atoms number at most n; the order of a line's atoms does not matter) or
    /// `exact` (the last n atoms in the stream's order, LARS's window cut inside a time
    /// point).
    #[arg(
        long,
        value_enum,
        global = true,
        value_name = "READING",
        default_value = "laser"
    )]
    pub(crate) tuple_window: TupleWindow,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum EcDomains {
    Input,
    Stream,
}

/// How a LARS program's tuple windows read the stream (`stgflow_lars::TupleReading`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum TupleWindow {
    Laser,
    Exact,
}

/// Which input records a run reads: all of them, or those of RTEC's window.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum Window {
    /// Every record, from the timeline's first time point on.
    All,
    /// RTEC's window (T, END], open on the left (T: `--from`, else 0).
    Rtec,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum EcTiming {
    Rtec,
    Paper,
}

#[derive(Debug, Args)]
pub(crate) struct Verbosity {
    /// Print a summary of the run (time points, facts, time taken) on stderr.
    #[arg(short, long, global = true, conflicts_with = "quiet")]
    pub(crate) verbose: bool,
    /// Print errors only, no warnings.
    #[arg(short, long, global = true)]
    pub(crate) quiet: bool,
}

// `run`'s arguments are the largest; the command is parsed once.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub(crate) enum Command {
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
    /// Draw a timeline of recognised intervals (one row per fact, a bar per interval) as
    /// SVG or PNG, from `run --mode intervals` output.
    ///
    /// Example: stgflow run datasets/examples/device_safety.tdl datasets/examples/device_safety.facts --mode intervals > i.txt && stgflow plot i.txt --out timeline.svg
    Plot(PlotArgs),
    /// Print a completion script for SHELL on stdout.
    ///
    /// Example: stgflow completions bash > ~/.local/share/bash-completion/completions/stgflow
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff) on stdout: stgflow's, or a command's.
    ///
    /// Example: stgflow man run > ~/.local/share/man/man1/stgflow-run.1
    Man {
        /// The command whose page to print (`run`, `check`, `explain`, …).
        command: Option<String>,
    },
}

#[derive(Debug, Args)]
#[command(disable_help_flag = true)]
pub(crate) struct RunArgs {
    /// The TD program (`.tdl`), an Event Calculus description in RTEC's syntax (`.ec`,
    /// `.prolog`, `.pl`), or a plain LARS program in Laser's syntax (`.lars`). Facts
    /// written in it are input too.
    pub(crate) program: PathBuf,
    /// Input streams, merged by time; `-` reads stdin (each time point is printed as soon
    /// as a later one arrives). With none, only the program's own facts are input. After
    /// an event description, the files that come first and end in `.ec`, `.prolog` or
    /// `.pl` are more of it (RTEC's background knowledge), not streams.
    pub(crate) streams: Vec<String>,
    /// The event description's further files, taken from the front of `streams`.
    #[arg(skip)]
    pub(crate) background: Vec<PathBuf>,
    /// Which evaluator runs the program.
    #[arg(long, value_enum, default_value_t = EngineKind::Dataflow)]
    pub(crate) engine: EngineKind,
    /// Worker threads per process (dataflow engine); by default, the machine's cores.
    #[arg(short = 'w', long, value_name = "N", value_parser = at_least_one)]
    pub(crate) workers: Option<usize>,
    /// Number of processes in a timely cluster (dataflow engine); start one per process
    /// with the same arguments and its own `-p`.
    #[arg(short = 'n', long, default_value_t = 1, value_name = "N", value_parser = at_least_one)]
    pub(crate) processes: usize,
    /// This process's index in the cluster, from 0; process 0 reads the input and
    /// prints the output.
    #[arg(short = 'p', long, default_value_t = 0, value_name = "I")]
    pub(crate) process: usize,
    /// File with one `host:port` per line, one line per process (default: 127.0.0.1
    /// from port 2101 up). A bare `-h` (last, or before another flag) shows this help.
    #[arg(short = 'h', long, value_name = "FILE")]
    pub(crate) hostfile: Option<PathBuf>,
    /// Seconds a cluster process waits for the others to connect before giving up.
    #[arg(long, default_value_t = 30, value_name = "SECS")]
    pub(crate) connect_timeout: u64,
    /// A file holding a secret that every process of the cluster holds: each proves to
    /// the others that it holds it (a challenge and response, the key never sent), and
    /// a process that cannot is refused. For clusters whose ports others can reach.
    #[arg(
        long,
        value_name = "FILE",
        env = "STGFLOW_CLUSTER_KEY_FILE",
        hide_env_values = true
    )]
    pub(crate) cluster_key_file: Option<PathBuf>,
    /// Run every rule as written: window definitions (♢/□) as literal rules instead of
    /// the delay operators, and persistence (EC inertia) on the time-stepping operator
    /// instead of its own (for checking that they agree; `check --dump plan` shows what is
    /// lowered).
    #[arg(long, alias = "no-window-lowering")]
    pub(crate) no_lowering: bool,
    // The engine's own tuning, hidden: settings for experiments with the threaded path
    // (replay by parts takes none of them; `ARCHITECTURE.md` says what each does).
    /// Threaded path: most time points handed to the workers at once.
    #[arg(long, default_value_t = stgflow_engine::DataflowOptions::default().batch_points, value_name = "N", hide = true)]
    pub(crate) batch_points: u64,
    /// Threaded path: diff each time point's input on the workers, after an exchange by
    /// hash, instead of on the thread that reads.
    #[arg(long, hide = true)]
    pub(crate) diff_on_workers: bool,
    /// Threaded path: every worker parses its share of each file's blocks of lines and
    /// introduces the facts itself.
    #[arg(long, hide = true)]
    pub(crate) read_on_workers: bool,
    /// Threaded path: every worker formats its own share of the output into keyed lines,
    /// which the thread that writes merges.
    #[arg(long, hide = true)]
    pub(crate) format_on_workers: bool,
    /// Threads that parse a file read whole ahead of the evaluation, and that read an RTEC
    /// description's dynamic domains ahead (by default, the cores the workers leave).
    #[arg(long, value_name = "N", hide = true)]
    pub(crate) parse_threads: Option<usize>,
    /// With `--mode intervals`: draw the intervals printed as a timeline picture, SVG or
    /// PNG by FILE's ending (as `stgflow plot` draws a file of them; at most 300 facts).
    #[arg(long, value_name = "FILE")]
    pub(crate) plot: Option<PathBuf>,
    /// Bytes per block of an input file read in blocks (on the parsing threads or the
    /// workers); for tests that cut small files into many blocks.
    #[arg(long, value_name = "N", hide = true)]
    pub(crate) block_bytes: Option<usize>,
    /// Replay by parts: about this many input bytes per part, where not the engine's
    /// choice (for experiments).
    #[arg(long, value_name = "N", hide = true)]
    pub(crate) part_bytes: Option<u64>,
    /// Print help.
    #[arg(long, action = clap::ArgAction::Help)]
    pub(crate) help: Option<bool>,
    /// How to print what holds.
    #[arg(long, value_enum, default_value_t = OutputMode::Points)]
    pub(crate) mode: OutputMode,
    /// Predicates to print, comma-separated. Default: `#output` in the program, else
    /// every predicate a rule defines.
    #[arg(long, value_delimiter = ',', value_name = "PRED,…")]
    pub(crate) output: Vec<String>,
    /// Write the output into DIR (created if missing) instead of printing it: a directory
    /// per printed predicate, of part files `DIR/p/part-00000.facts` (`.csv`, `.jsonl`),
    /// each in time order, written by the workers in parallel (in a cluster, every
    /// process its own parts); together they hold what would be printed. Part files an
    /// earlier run left are removed. Not with `--mode laser`.
    #[arg(long, value_name = "DIR")]
    pub(crate) output_dir: Option<std::path::PathBuf>,
    /// With `--output-dir`: the files' lines as TD (`td`, as printed), CSV after a header
    /// (`csv`: the arguments, then the time and the change, or the interval's ends) or
    /// JSON objects (`jsonl`).
    #[arg(long, value_enum, requires = "output_dir", default_value_t = OutputFormat::Td)]
    pub(crate) output_format: OutputFormat,
    /// Stream format; by default `.csv` files are CSV (RTEC records when the program is an
    /// `.ec` event description), `.laser` and `.stream` files Laser streams, and
    /// everything else TD facts.
    #[arg(long, value_parser = format_names())]
    pub(crate) format: Option<String>,
    /// Input time units per time point: time t of the input is time point t / N, and
    /// printed times are multiplied back (RTEC's `clock_tick`; 40 for CAVIAR).
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) tick: u64,
    /// First time point of the timeline (default: the first time in the input).
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u64).range(..=stgflow_io::stream::MAX_TIME))]
    pub(crate) from: Option<u64>,
    /// Last time point of the timeline (default: the last time in the input).
    #[arg(long, value_name = "T", value_parser = clap::value_parser!(u64).range(..=stgflow_io::stream::MAX_TIME))]
    pub(crate) until: Option<u64>,
    /// Evaluate from the start of the timeline, print from T on: what holds before T is
    /// computed (recursion through time, windows) but not written; `changes` starts at T
    /// with every fact that holds there, and intervals start no earlier than T.
    #[arg(long, value_name = "T")]
    pub(crate) print_from: Option<u64>,
    /// `rtec`: the timeline as RTEC's window (T, END], T being `--from` or 0, to compare
    /// with RTEC's own output as it is: RTEC records at T or before are not read (the
    /// dynamic domains included), and output starts at the next time point.
    #[arg(long, value_enum, default_value = "all", value_name = "WINDOW")]
    pub(crate) window: Window,
    #[command(flatten)]
    pub(crate) tolerance: ToleranceArgs,
    /// Write the streaming trigger graph as Graphviz DOT (`--engine stg`): every node
    /// built, with its rule, time and forget time, p-edges and n-edges.
    #[arg(long, value_name = "FILE.dot")]
    pub(crate) dump_stg: Option<PathBuf>,
    /// Print a run report on stderr: time points, input facts read and skipped, output
    /// lines, wall and CPU time, peak RSS, input rate; with `--engine stg` also the
    /// streaming trigger graph's counters (nodes built, removed by MIN DATALOG,
    /// forgotten).
    #[arg(long)]
    pub(crate) stats: bool,
    /// Write the run report as one JSON object to FILE (for scripts).
    #[arg(long, value_name = "FILE")]
    pub(crate) stats_json: Option<PathBuf>,
    /// With `--engine stg`: use no empty node as an edge source (not in the paper; the
    /// same facts from a graph that grows with the facts, not exponentially with the
    /// stream).
    #[arg(long)]
    pub(crate) stg_skip_empty: bool,
}

/// How a run treats input that breaks the stream contract.
#[derive(Debug, Args)]
pub(crate) struct ToleranceArgs {
    /// Accept facts up to N time points behind the latest time seen in their stream:
    /// they are held back until the stream has moved N time points past them (so output
    /// for time t comes once time t+N has been read). Later facts are an error.
    #[arg(long, default_value_t = 0, value_name = "N", value_parser = clap::value_parser!(u64).range(..=stgflow_io::stream::MAX_TIME))]
    pub(crate) lateness: u64,
    /// Skip facts later than `--lateness` allows, and report how many (a warning),
    /// instead of stopping with an error.
    #[arg(long)]
    pub(crate) skip_late: bool,
    /// Stop with an error on a fact of a predicate the program does not use, or with the
    /// wrong number of arguments (by default such facts are skipped and counted in a
    /// warning).
    #[arg(long)]
    pub(crate) strict: bool,
}

impl RunArgs {
    /// The dataflow engine's worker threads per process: `-w`, or the machine's cores.
    pub(crate) fn workers(&self) -> usize {
        self.workers
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    }
}

impl ToleranceArgs {
    pub(crate) fn tolerance(&self) -> Tolerance {
        Tolerance {
            lateness: self.lateness,
            skip_late: self.skip_late,
            strict: self.strict,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct ExplainArgs {
    /// The TD program (`.tdl`), Event Calculus description (`.ec`, `.prolog`, `.pl`) or
    /// LARS program (`.lars`).
    pub(crate) program: PathBuf,
    /// The input streams, then the fact to explain with its time last: `trusted(a,4)`.
    /// After an event description, its further files (RTEC's background knowledge) come
    /// first, as for `run`.
    #[arg(required = true, num_args = 1.., value_name = "STREAM… FACT")]
    pub(crate) rest: Vec<String>,
    /// The event description's further files, taken from the front of `rest`.
    #[arg(skip)]
    pub(crate) background: Vec<PathBuf>,
    /// Stream format (as for `run`).
    #[arg(long, value_parser = format_names())]
    pub(crate) format: Option<String>,
    /// First time point of the timeline.
    #[arg(long, value_name = "T")]
    pub(crate) from: Option<u64>,
    /// Last time point of the timeline.
    #[arg(long, value_name = "T")]
    pub(crate) until: Option<u64>,
    /// Draw the derivation at most N levels deep (deeper conditions show as `…`).
    #[arg(long, value_name = "N")]
    pub(crate) depth: Option<usize>,
    /// Print the answer as one JSON object: the same tree, each derivation with its fact,
    /// rule and conditions (`holds`, `input`, `absent`, `builtin`, `derived_above`), runs
    /// kept by the same rule as a `chain`, `deeper` where `--depth` cuts it.
    #[arg(long)]
    pub(crate) json: bool,
    /// Input time units per time point, as for `run` (RTEC's clock tick): the fact's time
    /// and every time shown are in input units.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) tick: u64,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// The TD program (`.tdl`), Event Calculus description (`.ec`, `.prolog`, `.pl`) or
    /// LARS program (`.lars`).
    pub(crate) program: PathBuf,
    /// More files of the event description: RTEC's background knowledge.
    #[arg(value_name = "MORE")]
    pub(crate) background: Vec<PathBuf>,
    /// Print a stage: `ast` (as parsed), `td` (the TD program, a front end's translation,
    /// each rule with its origin), `ir` (the rule model), `strata` (incremental
    /// stratification, temporal SCCs, forgetting horizons), `plan` (the dataflow engine's
    /// components: windows, persistence and steppers, with the rules each runs).
    /// Repeatable.
    #[arg(long, value_enum)]
    pub(crate) dump: Vec<Dump>,
    /// With `--dump plan`: the plan `run --no-lowering` uses.
    #[arg(long, alias = "no-window-lowering")]
    pub(crate) no_lowering: bool,
}

/// Evaluators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum EngineKind {
    /// The parallel engine on timely/differential dataflow (`-w`, `-n/-p/-h`); a stretch
    /// of time points without events costs what happens in it, not its length.
    Dataflow,
    /// The single-threaded reference evaluator (semi-naive per time point, per stratum;
    /// a stretch without events skipped once what holds stops changing).
    Reference,
    /// Streaming Trigger Graphs: the paper's Algorithm 4 as written (`--dump-stg`,
    /// `--stats`); for studying the algorithm on small streams. It evaluates every time
    /// point of the timeline, however sparse the events.
    Stg,
}

/// `--output-format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub(crate) enum OutputFormat {
    Td,
    Csv,
    Jsonl,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputMode {
    /// `trusted(a,4).` — every fact at every time point it holds.
    Points,
    /// `+trusted(a) @4` / `-trusted(a) @6` — when facts start and stop holding.
    Changes,
    /// `trusted(a) [4,6)` — maximal right-open intervals.
    Intervals,
    /// `4: trusted(a) trusted(b)` — Laser's output: every time point, atoms sorted as text.
    Laser,
    /// `recognitions(predictions,location,[[chris],pub],[(18,22)]).` — RTEC's recognised
    /// intervals, one line per fluent-value pair, written at the end of the input (an
    /// event description's fluents: the last argument is the value).
    Rtec,
}

/// The stream formats every run knows: TD facts and CSV, Laser streams, RTEC records (of
/// events only, unless the program is an event description that declares fluents).
pub(crate) fn formats() -> Formats {
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
pub(crate) enum Dump {
    Ast,
    Td,
    Ir,
    Strata,
    Plan,
}

/// A count of at least one (`-w`, `-n`): zero workers or processes run nothing.
fn at_least_one(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(0) => Err("must be at least 1".to_owned()),
        Ok(n) => Ok(n),
        Err(e) => Err(e.to_string()),
    }
}

#[derive(Debug, Args)]
pub(crate) struct PlotArgs {
    /// A file of intervals as `run --mode intervals` writes them (`atom [start,end)`).
    pub(crate) intervals: PathBuf,
    /// The picture: SVG or PNG, by its ending.
    #[arg(long, short, default_value = "timeline.svg", value_name = "FILE")]
    pub(crate) out: PathBuf,
    /// Most facts drawn (a row each); the rest are left out, and the picture says how many.
    #[arg(long, default_value_t = 300, value_name = "N")]
    pub(crate) rows: usize,
    /// Width in pixels.
    #[arg(long, default_value_t = 1200, value_name = "PX")]
    pub(crate) width: u32,
    /// The title (default: the file's name).
    #[arg(long)]
    pub(crate) title: Option<String>,
    /// Only these predicates' facts, comma-separated.
    #[arg(long, value_delimiter = ',', value_name = "P,Q")]
    pub(crate) predicates: Vec<String>,
    /// Only from this time on: intervals are cut there.
    #[arg(long, value_name = "T")]
    pub(crate) from: Option<u64>,
    /// Only up to this time (included): intervals are cut after it.
    #[arg(long, value_name = "T")]
    pub(crate) until: Option<u64>,
}
