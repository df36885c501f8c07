//! The `stgflow-datasets` command: writes seeded TD fact streams for stgflow's benchmarks.
//!
//! Example: `stgflow-datasets device-fleet --devices 10 --time-points 1000000 --out /tmp/fleet.facts`

use std::fs::File;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use stgflow_datasets::{
    DeviceFleet, GenerateError, Inertia, OnePerPoint, Summary, UniqueAtoms, device_fleet, inertia,
    one_per_point, unique_atoms,
};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Writes seeded TD fact streams (`pred(arg,…,time).`, one per line, ordered by time).
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
}

#[derive(Debug, Args)]
struct UniqueAtomsArgs {
    /// New atoms per time point.
    #[arg(long, default_value_t = 1000, value_name = "R")]
    atoms_per_point: u64,
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
            write_stream(&cli.command, file)
        }
        None => write_stream(&cli.command, io::stdout().lock()),
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
                time_points: args.time.time_points,
                start: args.time.start,
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
        Command::OnePerPoint(args) => {
            let config = OnePerPoint {
                time_points: args.time.time_points,
                start: args.time.start,
            };
            one_per_point(&config, out)
        }
    }
}
