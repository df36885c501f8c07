//! The `stgflow-bench` command: scaling sweeps with plots, and comparisons with peer
//! reasoners. See `BENCHMARKS.md` for the recorded runs and their command lines.
//!
//! Example: `stgflow-bench sweep --workload diamond --window 10,100 --workers 1,2 --out /tmp/sweep`

use std::ffi::OsString;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, anyhow, bail};
use clap::{Args, Parser, Subcommand};
use stgflow_bench::compare::{self, Comparison, Kind, Peer};
use stgflow_bench::measure::{self, Wrapper};
use stgflow_bench::sweep::{self, Grid, InputMode, Setup};
use stgflow_bench::workload::Workload;
use stgflow_bench::{plot, report};

#[global_allocator]
static GLOBAL: stgflow_alloc::Allocator = stgflow_alloc::Allocator;

/// Benchmarks the `stgflow` binary: sweeps over workers, processes, window sizes, rates
/// and stream lengths (CSV, plots, a markdown report), and side-by-side comparisons with
/// peer reasoners.
#[derive(Debug, Parser)]
#[command(name = "stgflow-bench", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run workloads over a grid; write OUT/results.csv, OUT/latencies.csv, OUT/plots/
    /// and OUT/report.md.
    ///
    /// Example: stgflow-bench sweep --workload diamond,box --window 10,100 --workers 1,2 --rate 1000 --length 1000
    Sweep(SweepArgs),
    /// Run stgflow and peer reasoners on one program and stream; diff the answers and
    /// tabulate time and memory. Exit code 1 when a peer's answers differ.
    ///
    /// Example: stgflow-bench compare --program q.tdl --stream s.facts --peer laser='pypy3 laser.py {program} {stream}' --peer-program laser=q.lars
    Compare(CompareArgs),
    /// Redraw the plots and the report of a sweep directory from its results.csv (and
    /// latencies.csv), e.g. after copying results back from a server.
    ///
    /// Example: stgflow-bench replot target/sweeps/workers
    Replot(ReplotArgs),
    /// Run a command and write its wall time, CPU time and peak RSS to FILE (used by
    /// sweep and compare for each process they start).
    #[command(hide = true)]
    MeasureOne {
        file: PathBuf,
        /// Kill the command (and what it started) after this many seconds.
        #[arg(long, value_name = "SECONDS")]
        timeout: Option<f64>,
        #[arg(last = true, required = true)]
        command: Vec<OsString>,
    },
}

#[derive(Debug, Args)]
struct ReplotArgs {
    /// The sweep's output directory.
    dir: PathBuf,
    /// Picture size in pixels, legend included (WIDTHxHEIGHT).
    #[arg(long, default_value = "960x540", value_parser = picture_size)]
    size: (u32, u32),
    /// Picture formats: svg, png, pdf, or several.
    #[arg(long, value_delimiter = ',', default_value = "svg,png,pdf")]
    format: Vec<plot::Format>,
    /// Only these plots: throughput_vs_workers, throughput_vs_window,
    /// throughput_vs_length, memory_vs_length, latency_cdf (default: every plot the
    /// results support).
    #[arg(long, value_delimiter = ',', value_name = "PLOT")]
    only: Vec<String>,
}

fn picture_size(text: &str) -> Result<(u32, u32), String> {
    let bad = || format!("expected WIDTHxHEIGHT in pixels (at least 320x200), got `{text}`");
    let (width, height) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let size: (u32, u32) = (
        width.trim().parse().map_err(|_| bad())?,
        height.trim().parse().map_err(|_| bad())?,
    );
    if size.0 < 320 || size.1 < 200 || size.0 > 20_000 || size.1 > 20_000 {
        return Err(bad());
    }
    Ok(size)
}

#[derive(Debug, Args)]
struct SweepArgs {
    /// Workloads: diamond, box, inertia, tick, device-safety (TD, generated);
    /// lars-diamond, lars-box, lars-at, lars-diamond-not (LARS over Laser stream files,
    /// batch mode only); caviar, ctm, voting (RTEC's recorded data, batch mode only);
    /// netbill (RTEC's NetBill over a narrative of RTEC's generator per --length, made
    /// by scripts/peers/netbill_data.sh; batch mode only);
    /// own (--program and --stream, batch mode only). Default: diamond, or own when
    /// --program is given.
    #[arg(long, value_delimiter = ',')]
    workload: Vec<Workload>,
    /// The `own` workload's program (TD, LARS or an event description).
    #[arg(long, value_name = "FILE", requires = "stream")]
    program: Option<PathBuf>,
    /// The `own` workload's input streams (repeatable), as `stgflow run` reads them.
    #[arg(long, value_name = "FILE", requires = "program")]
    stream: Vec<PathBuf>,
    /// Worker threads per process (`-w`).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    workers: Vec<usize>,
    /// Processes in a loopback timely cluster (`-n`).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    processes: Vec<usize>,
    /// Window sizes (diamond, box).
    #[arg(long, value_delimiter = ',', default_value = "10")]
    window: Vec<u64>,
    /// Rates: atoms (diamond, box), events (inertia) or devices (device-safety) per time point.
    #[arg(long, value_delimiter = ',', default_value = "1000")]
    rate: Vec<u64>,
    /// Stream lengths in time points.
    #[arg(long, value_delimiter = ',', default_value = "1000")]
    length: Vec<u64>,
    /// Input modes: batch (a file argument), streaming (stdin, per-time-point latency).
    #[arg(long, value_delimiter = ',', default_value = "batch")]
    mode: Vec<InputMode>,
    /// Runs per grid point (medians are reported).
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Kill a run that takes longer than this many seconds (and stop with an error that
    /// names it).
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Streaming mode: time points per second fed (default: as fast as stgflow reads).
    #[arg(long, value_name = "POINTS_PER_S")]
    pace: Option<f64>,
    /// stgflow's output mode for every run: changes, points, intervals or laser.
    #[arg(long, default_value = "changes", value_name = "MODE")]
    output: String,
    /// RTEC's data, for the recorded workloads caviar, ctm, voting and netbill.
    #[arg(long, default_value = "../shared/data/rtec", value_name = "DIR")]
    data: PathBuf,
    /// Output directory (streams are cached in OUT/streams).
    #[arg(long, default_value = "target/sweep")]
    out: PathBuf,
    /// An extra `stgflow run` argument for every run (repeatable), e.g.
    /// `--stgflow-arg=--read-on-workers`; recorded in meta.txt with the command.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    stgflow_arg: Vec<String>,
    #[command(flatten)]
    binary: Binary,
}

#[derive(Debug, Args)]
struct CompareArgs {
    /// stgflow's program (TD, or LARS/EC where stgflow reads them).
    #[arg(long)]
    program: PathBuf,
    /// stgflow's input (repeatable); one TD file is converted to each peer's format
    /// unless the peer has its own input (--peer-stream).
    #[arg(long, required = true)]
    stream: Vec<PathBuf>,
    /// A peer's own input file, instead of the converted stream: NAME=FILE (repeatable).
    #[arg(long, value_name = "NAME=FILE", value_parser = name_value)]
    peer_stream: Vec<(String, String)>,
    /// A peer: NAME=COMMAND, with {program} and {stream} in COMMAND. Repeatable.
    #[arg(long, value_name = "NAME=CMD", value_parser = name_value)]
    peer: Vec<(String, String)>,
    /// A peer's kind (laser, rtec, td or csv) when its name is not one: NAME=KIND.
    #[arg(long, value_name = "NAME=KIND", value_parser = name_value)]
    peer_kind: Vec<(String, String)>,
    /// A peer's own program file: NAME=FILE (default: --program).
    #[arg(long, value_name = "NAME=FILE", value_parser = name_value)]
    peer_program: Vec<(String, String)>,
    /// Runs per system (medians are reported).
    #[arg(long, default_value_t = 3)]
    repeat: usize,
    /// Kill a run (stgflow's or a peer's) that takes longer than this many seconds, and
    /// stop with an error that names it.
    #[arg(long, value_name = "SECONDS")]
    timeout: Option<f64>,
    /// Diff only the predicates both sides print.
    #[arg(long)]
    common_only: bool,
    /// Where converted streams, raw outputs and table.md go.
    #[arg(long, default_value = "target/compare")]
    out: PathBuf,
    #[command(flatten)]
    binary: Binary,
    /// Extra arguments for `stgflow run` (after `--`), e.g. `-- -w 2`.
    #[arg(last = true)]
    stgflow_args: Vec<OsString>,
}

#[derive(Debug, Args)]
struct Binary {
    /// The stgflow binary (default: `stgflow` beside this program, e.g. target/release/).
    #[arg(long, value_name = "PATH")]
    stgflow: Option<PathBuf>,
}

/// What `stgflow --version` says.
fn version_of(stgflow: &Path) -> Option<String> {
    let output = std::process::Command::new(stgflow)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    output.status.success().then(|| text.trim().to_owned())
}

/// The commit checked out where the binary was built (the git checkout around it, with
/// `-dirty` for uncommitted changes), if it is in one.
fn commit_of(stgflow: &Path) -> Option<String> {
    let dir = stgflow.canonicalize().ok()?.parent()?.to_path_buf();
    let git = |args: &[&str]| {
        let output = std::process::Command::new("git")
            .current_dir(&dir)
            .args(args)
            .output()
            .ok()?;
        output
            .status
            .success()
            .then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
    };
    let commit = git(&["rev-parse", "--short=12", "HEAD"])?;
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    Some(if dirty {
        format!("{commit}-dirty")
    } else {
        commit
    })
}

fn name_value(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_owned(), value.to_owned())),
        _ => Err(format!("expected NAME=VALUE, got `{text}`")),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::MeasureOne {
            file,
            timeout,
            command,
        } => {
            let timeout = timeout.and_then(|s| Duration::try_from_secs_f64(s).ok());
            return measure::measure_one(&file, timeout, &command);
        }
        Command::Sweep(args) => run_sweep(args),
        Command::Compare(args) => run_compare(args),
        Command::Replot(args) => replot(&args),
    };
    match result {
        Ok(code) => code,
        // 2, as for usage errors: `compare` keeps 1 for "the answers differ", like diff.
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::from(2)
        }
    }
}

/// The stgflow binary: `--stgflow`, else `stgflow` beside this executable.
fn locate_stgflow(binary: &Binary) -> anyhow::Result<PathBuf> {
    let path = match &binary.stgflow {
        Some(path) => path.clone(),
        None => std::env::current_exe()
            .context("cannot find this executable")?
            .with_file_name("stgflow"),
    };
    if !path.is_file() {
        bail!(
            "no stgflow binary at {} (build it with `cargo build --release -p stgflow-cli`, or pass --stgflow)",
            path.display()
        );
    }
    Ok(path)
}

fn wrapper(out: &Path, timeout: Option<f64>) -> anyhow::Result<Wrapper> {
    let timeout = match timeout {
        Some(seconds) => Some(
            Duration::try_from_secs_f64(seconds)
                .ok()
                .filter(|d| !d.is_zero())
                .with_context(|| {
                    format!("--timeout {seconds}: not a positive number of seconds")
                })?,
        ),
        None => None,
    };
    Ok(Wrapper {
        harness: std::env::current_exe().context("cannot find this executable")?,
        scratch: out.join("scratch"),
        timeout,
    })
}

fn run_sweep(args: SweepArgs) -> anyhow::Result<ExitCode> {
    let command_line = std::env::args().collect::<Vec<_>>().join(" ");
    let setup = Setup {
        stgflow: locate_stgflow(&args.binary)?,
        wrapper: wrapper(&args.out, args.timeout)?,
        out: args.out.clone(),
    };
    let workloads = match (args.workload.is_empty(), args.program.is_some()) {
        (true, true) => vec![Workload::Own],
        (true, false) => vec![Workload::Diamond],
        (false, _) => args.workload,
    };
    let grid = Grid {
        workloads,
        workers: args.workers,
        processes: args.processes,
        windows: args.window,
        rates: args.rate,
        lengths: args.length,
        modes: args.mode,
        repeat: args.repeat,
        pace: args.pace,
        data: args.data,
        output: args.output.clone(),
        extra: args.stgflow_arg.clone(),
        own: args
            .program
            .clone()
            .map(|program| (program, args.stream.clone())),
    };
    let mut stderr = std::io::stderr();
    let rows = sweep::run_grid(&setup, &grid, |row| {
        let _ = writeln!(
            stderr,
            "{} w={} r={} L={} {}w×{}p {} #{}: {:.3} s, {:.2} M facts/s, {:.1} MiB{}",
            row.workload,
            row.window,
            row.rate,
            row.length,
            row.workers,
            row.processes,
            row.mode.name(),
            row.repeat,
            row.usage.wall.as_secs_f64(),
            row.facts_per_s() / 1e6,
            row.usage.peak_rss_kib as f64 / 1024.0,
            row.latency_p50_us
                .map_or(String::new(), |p| format!(", latency p50 {p:.0} µs")),
        );
    })?;
    let header = report::Header {
        command: command_line,
        date: today(),
        machine: report::Machine::this().describe(),
        stgflow: version_of(&setup.stgflow),
        commit: commit_of(&setup.stgflow),
        output: Some(args.output.clone()),
    };
    let provenance = sweep::Provenance {
        stgflow: header.stgflow.clone(),
        commit: header.commit.clone(),
        output: header.output.clone(),
        machine: Some(header.machine.clone()),
        program: (args.program.as_deref())
            .and_then(Path::file_name)
            .map(|name| name.to_string_lossy().into_owned()),
    };
    sweep::write_csv(&rows, &provenance, &args.out.join("results.csv"))?;
    sweep::write_latencies(&rows, &args.out.join("latencies.csv"))?;
    let meta = args.out.join("meta.txt");
    std::fs::write(&meta, header.to_text())
        .with_context(|| format!("cannot write {}", meta.display()))?;
    let options = plot::Options {
        program: provenance.program.clone(),
        ..plot::Options::default()
    };
    let report_path = write_report(&args.out, &header, &rows, &options)?;
    eprintln!(
        "wrote {} runs to {}, the report to {}",
        rows.len(),
        args.out.join("results.csv").display(),
        report_path.display()
    );
    let _ = std::fs::remove_dir_all(args.out.join("scratch"));
    // The generated streams and programs, where a run made none (one's own program).
    for made in ["streams", "programs"] {
        let _ = std::fs::remove_dir(args.out.join(made));
    }
    Ok(ExitCode::SUCCESS)
}

/// Draws the plots of `rows` and writes `dir/report.md`; returns the report's path.
fn write_report(
    dir: &Path,
    header: &report::Header,
    rows: &[sweep::Row],
    options: &plot::Options,
) -> anyhow::Result<PathBuf> {
    let medians = sweep::medians(rows);
    let drawn = plot::draw_all(rows, &dir.join("plots"), options)?;
    let path = dir.join("report.md");
    let program = options.program.as_deref();
    std::fs::write(&path, report::markdown(header, &medians, &drawn, program))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

fn replot(args: &ReplotArgs) -> anyhow::Result<ExitCode> {
    let dir = &args.dir;
    let latencies = dir.join("latencies.csv");
    let (rows, provenance) = sweep::read_results(
        &dir.join("results.csv"),
        latencies.exists().then_some(latencies.as_path()),
    )?;
    let meta = dir.join("meta.txt");
    let header = std::fs::read_to_string(&meta)
        .ok()
        .and_then(|text| report::Header::from_text(&text))
        .unwrap_or_else(|| report::Header {
            command: "(unknown: no meta.txt)".to_owned(),
            date: "(unknown)".to_owned(),
            machine: provenance.machine.unwrap_or_else(|| "(unknown)".to_owned()),
            stgflow: provenance.stgflow,
            commit: provenance.commit,
            output: provenance.output,
        });
    let options = plot::Options {
        size: args.size,
        formats: args.format.clone(),
        only: (!args.only.is_empty()).then(|| args.only.clone()),
        program: provenance.program,
    };
    if options.only.is_some() {
        // Some plots redrawn: the report still names them all.
        plot::draw_all(&rows, &dir.join("plots"), &options)?;
        eprintln!("redrew the plots asked for, of {} runs", rows.len());
        return Ok(ExitCode::SUCCESS);
    }
    let path = write_report(dir, &header, &rows, &options)?;
    eprintln!("redrew {} runs into {}", rows.len(), path.display());
    Ok(ExitCode::SUCCESS)
}

fn run_compare(args: CompareArgs) -> anyhow::Result<ExitCode> {
    let lookup = |pairs: &[(String, String)], name: &str| {
        pairs
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.clone())
    };
    let mut peers = Vec::new();
    for (name, command) in &args.peer {
        let kind: Kind = match lookup(&args.peer_kind, name) {
            Some(kind) => kind
                .parse()
                .map_err(|e: String| anyhow!("--peer-kind {name}: {e}"))?,
            None => name.parse().map_err(|_| {
                anyhow!(
                    "peer `{name}`: give its kind with --peer-kind {name}=laser, rtec, td or csv"
                )
            })?,
        };
        peers.push(Peer {
            name: name.clone(),
            kind,
            command: command.clone(),
            program: lookup(&args.peer_program, name).map(PathBuf::from),
            streams: args
                .peer_stream
                .iter()
                .filter(|(n, _)| n == name)
                .map(|(_, file)| PathBuf::from(file))
                .collect(),
        });
    }
    let comparison = Comparison {
        stgflow: locate_stgflow(&args.binary)?,
        program: args.program,
        streams: args.stream,
        stgflow_args: args.stgflow_args,
        peers,
        repeat: args.repeat,
        common_only: args.common_only,
        out: args.out.clone(),
    };
    let outcomes = compare::run(&comparison, &wrapper(&args.out, args.timeout)?)?;
    let table = compare::table(&outcomes);
    print!("{table}");
    let path = args.out.join("table.md");
    std::fs::write(&path, &table).with_context(|| format!("cannot write {}", path.display()))?;
    let _ = std::fs::remove_dir_all(args.out.join("scratch"));
    let all_equal = outcomes
        .iter()
        .all(|o| o.diff.as_ref().is_none_or(compare::Diff::is_equal));
    Ok(if all_equal {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Today's date (UTC) as YYYY-MM-DD.
fn today() -> String {
    let days = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() / 86_400) as i64;
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}
