//! The `stgflow-datasets` command: writes seeded streams for stgflow's benchmarks, as TD
//! facts, Laser stream files or RTEC pipe-separated events (`--format`).
//!
//! Example: `stgflow-datasets device-fleet --devices 10 --time-points 1000000 --out /tmp/fleet.facts`

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use stgflow_datasets::convert::{ConvertError, ConvertingWriter, Format};
use stgflow_datasets::{
    Constants, DeviceFleet, GenerateError, Graph, Inertia, OnePerPoint, Summary, TrafficLights,
    UniqueAtoms, device_fleet, graph, inertia, one_per_point, traffic_lights, unique_atoms,
};

#[global_allocator]
static GLOBAL: stgflow_alloc::Allocator = stgflow_alloc::Allocator;

/// Writes seeded streams, ordered by time: TD facts (`pred(arg,…,time).`, one per line),
/// Laser stream files or RTEC pipe-separated events.
///
/// The same arguments give the same stream on every machine.
#[derive(Debug, Parser)]
#[command(name = "stgflow-datasets", version, propagate_version = true)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Write the stream to FILE instead of stdout.
    #[arg(short, long, global = true, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print what was written (facts, time span, rate) on stderr.
    #[arg(short, long, global = true)]
    verbose: bool,
    /// Output format: `td` facts, `laser` (`#timeline A B`, then `t: p(a,b) s` per time
    /// point) or `rtec` (`name|time|time|arg…`).
    #[arg(long, global = true, default_value = "td", value_parser = parse_format)]
    format: Format,
}

fn parse_format(text: &str) -> Result<Format, String> {
    text.parse()
}

#[derive(Debug, Subcommand)]
enum Command {
    /// `repair(dI,T).` and `warning(dI,T).` for datasets/examples/device_safety.tdl.
    ///
    /// Each device gets a repair with probability --repair-rate and a warning with
    /// probability --warning-rate at every time point. Time taken is proportional to the
    /// facts written, so long sparse streams are cheap.
    ///
    /// Example: stgflow-datasets device-fleet --devices 10 --time-points 1000000
    DeviceFleet(DeviceFleetArgs),
    /// `tick(c,T).` at every time point: the smallest stream that covers every point.
    ///
    /// Example: stgflow-datasets one-per-point --time-points 1000000
    OnePerPoint(OnePerPointArgs),
    /// `p(N,N,T).`: --atoms-per-point new unique atoms per time point (Laser's
    /// micro-benchmark streams).
    ///
    /// Example: stgflow-datasets unique-atoms --atoms-per-point 1000 --time-points 10000
    UniqueAtoms(UniqueAtomsArgs),
    /// `init(fF,vV,T).`: --events-per-point events on random fluents (EC inertia).
    ///
    /// Example: stgflow-datasets inertia --fluents 100000 --events-per-point 10 --time-points 1000000
    Inertia(InertiaArgs),
    /// `e(nX,nY,T).`: a slowly changing random graph, every edge listed at every time
    /// point, for same-time recursion (datasets/bench/reach.tdl).
    ///
    /// Example: stgflow-datasets graph --nodes 1000 --edges 2000 --changes 10 --time-points 1000
    Graph(GraphArgs),
    /// `red(lI,T).`: the starting facts of datasets/examples/traffic_lights.tdl for many
    /// lights, out of phase; run the program with `--until`.
    ///
    /// Example: stgflow-datasets traffic-lights --lights 1000
    TrafficLights(TrafficLightsArgs),
}

#[derive(Debug, Args)]
struct GraphArgs {
    /// Number of nodes, named n0, n1, ….
    #[arg(long, default_value_t = 1000, value_name = "N")]
    nodes: u64,
    /// Number of edges (duplicates collapse).
    #[arg(long, default_value_t = 2000, value_name = "M")]
    edges: u64,
    /// Edges replaced from one time point to the next.
    #[arg(long, default_value_t = 10, value_name = "C")]
    changes: u64,
    #[command(flatten)]
    time: TimeArgs,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Debug, Args)]
struct TrafficLightsArgs {
    /// Number of lights, named l0, l1, ….
    #[arg(long, default_value_t = 1000, value_name = "N")]
    lights: u64,
    /// First time point.
    #[arg(long, default_value_t = 0, value_name = "S")]
    start: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum ConstantsArg {
    Integers,
    Names,
    Iris,
}

#[derive(Debug, Args)]
struct UniqueAtomsArgs {
    /// New atoms per time point.
    #[arg(long, default_value_t = 1000, value_name = "R")]
    atoms_per_point: u64,
    /// The atoms' arguments: integers (`p(17,17,T).`), fresh names (`p(id17,b17,T).`) or
    /// fresh IRIs (quoted, longer than a value holds inline).
    #[arg(long, value_enum, default_value_t = ConstantsArg::Integers)]
    constants: ConstantsArg,
    /// Also write the 0-ary atom `s(T).` every K time points (0: never).
    #[arg(long, default_value_t = 0, value_name = "K")]
    extra_every: u64,
    #[command(flatten)]
    time: TimeArgs,
}

#[derive(Debug, Args)]
struct InertiaArgs {
    /// Number of fluents, named f0, f1, ….
    #[arg(long, default_value_t = 100_000, value_name = "N")]
    fluents: u64,
    /// Number of values per fluent, named v0, v1, ….
    #[arg(long, default_value_t = 3, value_name = "V")]
    values: u64,
    /// Events per time point.
    #[arg(long, default_value_t = 10, value_name = "E")]
    events_per_point: u64,
    #[command(flatten)]
    time: TimeArgs,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Debug, Args)]
struct DeviceFleetArgs {
    /// Number of devices, named d0, d1, ….
    #[arg(long, default_value_t = 100, value_name = "N")]
    devices: u64,
    #[command(flatten)]
    time: TimeArgs,
    /// Probability of a repair per device per time point.
    #[arg(long, default_value_t = 0.01, value_name = "P")]
    repair_rate: f64,
    /// Probability of a warning per device per time point.
    #[arg(long, default_value_t = 0.01, value_name = "P")]
    warning_rate: f64,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

#[derive(Debug, Args)]
struct OnePerPointArgs {
    #[command(flatten)]
    time: TimeArgs,
}

#[derive(Debug, Args)]
struct TimeArgs {
    /// Number of time points.
    #[arg(long, default_value_t = 1000, value_name = "T")]
    time_points: u64,
    /// First time point.
    #[arg(long, default_value_t = 0, value_name = "S")]
    start: u64,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match generate(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn generate(cli: &Cli) -> anyhow::Result<()> {
    let started = Instant::now();
    let result = match &cli.out {
        Some(path) => {
            let file =
                File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            write_in_format(cli, io::BufWriter::with_capacity(1 << 16, file))
        }
        None => write_in_format(cli, io::stdout().lock()),
    };
    let summary = match result {
        Ok(summary) => summary,
        // A reader that has seen enough (`| head`) is not a failure.
        Err(GenerateError::Io(error)) if error.kind() == io::ErrorKind::BrokenPipe => return Ok(()),
        Err(error) => return Err(error.into()),
    };
    if cli.verbose {
        let seconds = started.elapsed().as_secs_f64();
        let span = match (summary.first, summary.last) {
            (Some(first), Some(last)) => format!("[{first}, {last}]"),
            _ => "(empty)".to_owned(),
        };
        let _ = writeln!(
            io::stderr(),
            "stgflow-datasets: {} facts, times {span}, {seconds:.3} s, {:.2} M facts/s",
            summary.facts,
            summary.facts as f64 / seconds.max(1e-9) / 1e6,
        );
    }
    Ok(())
}

/// Writes the stream in `cli.format`: TD straight from the generator, other formats
/// through a converter.
fn write_in_format(cli: &Cli, out: impl Write) -> Result<Summary, GenerateError> {
    if cli.format == Format::Td {
        return write_stream(&cli.command, out);
    }
    let timeline = timeline(&cli.command);
    let converted = |error: ConvertError| match error {
        ConvertError::Io(error) => GenerateError::Io(error),
        other => GenerateError::Io(io::Error::other(other)),
    };
    let mut writer = ConvertingWriter::new(cli.format, out, timeline).map_err(converted)?;
    let summary = write_stream(&cli.command, &mut writer)?;
    writer.finish().map_err(converted)?;
    Ok(summary)
}

/// The timeline a Laser header announces: the generator's time points.
fn timeline(command: &Command) -> Option<(u64, u64)> {
    let time = match command {
        Command::DeviceFleet(args) => &args.time,
        Command::OnePerPoint(args) => &args.time,
        Command::UniqueAtoms(args) => &args.time,
        Command::Inertia(args) => &args.time,
        Command::Graph(args) => &args.time,
        Command::TrafficLights(args) => return Some((args.start, args.start + 3)),
    };
    let last = time.start.checked_add(time.time_points.checked_sub(1)?)?;
    Some((time.start, last))
}

fn write_stream(command: &Command, out: impl Write) -> Result<Summary, GenerateError> {
    match command {
        Command::DeviceFleet(args) => {
            let config = DeviceFleet {
                devices: args.devices,
                time_points: args.time.time_points,
                start: args.time.start,
                repair_rate: args.repair_rate,
                warning_rate: args.warning_rate,
                seed: args.seed,
            };
            device_fleet(&config, out)
        }
        Command::UniqueAtoms(args) => unique_atoms(
            &UniqueAtoms {
                atoms_per_point: args.atoms_per_point,
                constants: match args.constants {
                    ConstantsArg::Integers => Constants::Integers,
                    ConstantsArg::Names => Constants::Names,
                    ConstantsArg::Iris => Constants::Iris,
                },
                time_points: args.time.time_points,
                start: args.time.start,
                extra_every: args.extra_every,
            },
            out,
        ),
        Command::Inertia(args) => inertia(
            &Inertia {
                fluents: args.fluents,
                values: args.values,
                events_per_point: args.events_per_point,
                time_points: args.time.time_points,
                start: args.time.start,
                seed: args.seed,
            },
            out,
        ),
        Command::Graph(args) => graph(
            &Graph {
                nodes: args.nodes,
                edges: args.edges,
                changes: args.changes,
                time_points: args.time.time_points,
                start: args.time.start,
                seed: args.seed,
            },
            out,
        ),
        Command::TrafficLights(args) => traffic_lights(
            &TrafficLights {
                lights: args.lights,
                start: args.start,
            },
            out,
        ),
        Command::OnePerPoint(args) => {
            let config = OnePerPoint {
                time_points: args.time.time_points,
                start: args.time.start,
            };
            one_per_point(&config, out)
        }
    }
}
