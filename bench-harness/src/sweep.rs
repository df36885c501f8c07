//! `stgflow-bench sweep`: runs workloads over a grid of workers × processes × window sizes
//! × rates × stream lengths × input modes, each point `repeat` times, and records one CSV
//! row per run.
//!
//! Every run is the real binary on real files: `stgflow run PROGRAM STREAM --mode changes`
//! with stdout discarded (batch), or the stream written to its stdin time point by time
//! point with the output read back (streaming, for latency). A cluster run starts
//! `processes` copies on loopback ports with a fresh hostfile; its wall time is until the
//! last one exits, its CPU time the sum and its peak RSS the largest process's.
//!
//! Streams are generated once per (stream kind, rate, length) into `OUT/streams/` and
//! reused by later sweeps into the same directory.

use std::ffi::OsString;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use anyhow::{Context, bail};

use crate::measure::{self, Usage, Wrapper};
use crate::workload::Workload;

/// How the stream reaches `stgflow`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum InputMode {
    /// The stream file is an argument (`stgflow run P S`).
    Batch,
    /// The stream is written to stdin one time point at a time (`stgflow run P -`).
    Streaming,
}

impl InputMode {
    pub fn name(self) -> &'static str {
        match self {
            InputMode::Batch => "batch",
            InputMode::Streaming => "streaming",
        }
    }
}

impl std::str::FromStr for InputMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "batch" => Ok(InputMode::Batch),
            "streaming" => Ok(InputMode::Streaming),
            _ => Err(format!(
                "unknown input mode `{s}` (expected batch or streaming)"
            )),
        }
    }
}

/// The grid of a sweep.
#[derive(Clone, Debug)]
pub struct Grid {
    pub workloads: Vec<Workload>,
    pub workers: Vec<usize>,
    pub processes: Vec<usize>,
    pub windows: Vec<u64>,
    pub rates: Vec<u64>,
    pub lengths: Vec<u64>,
    pub modes: Vec<InputMode>,
    pub repeat: usize,
    /// Time points per second fed in streaming mode; unpaced when `None`.
    pub pace: Option<f64>,
    /// Where the recorded workloads' RTEC data is (`caviar/`, `ctm/`, `voting/`).
    pub data: PathBuf,
    /// stgflow's output mode (`--mode`); streaming runs need `changes`.
    pub output: String,
    /// Extra `stgflow run` arguments for every run (`--stgflow-arg`).
    pub extra: Vec<String>,
    /// The `own` workload's program and streams (`--program`, `--stream`).
    pub own: Option<(PathBuf, Vec<PathBuf>)>,
}

/// One run: the grid point, what it read and what it cost.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    pub workload: Workload,
    /// 0 for workloads without a window.
    pub window: u64,
    /// 0 for workloads without a rate.
    pub rate: u64,
    pub length: u64,
    pub workers: usize,
    pub processes: usize,
    pub mode: InputMode,
    pub repeat: usize,
    pub input_facts: u64,
    pub usage: Usage,
    /// Per-time-point output latency in streaming mode (µs).
    pub latency_p50_us: Option<f64>,
    pub latency_p99_us: Option<f64>,
    /// Every latency sample (streaming mode), for the CDF plot; not written to the CSV.
    pub latencies_us: Vec<f64>,
}

impl Row {
    pub fn facts_per_s(&self) -> f64 {
        self.input_facts as f64 / self.usage.wall.as_secs_f64().max(1e-9)
    }

    /// Everything but the repeat index: rows with equal keys are repeats of one point.
    pub fn key(&self) -> (Workload, u64, u64, u64, usize, usize, InputMode) {
        (
            self.workload,
            self.window,
            self.rate,
            self.length,
            self.workers,
            self.processes,
            self.mode,
        )
    }
}

/// `results.csv`'s header: the run's columns, then what ran it ([`Provenance`]).
pub const CSV_HEADER: &str = "workload,window,rate,length,workers,processes,mode,repeat,input_facts,wall_s,cpu_s,peak_rss_kib,facts_per_s,latency_p50_us,latency_p99_us,stgflow,commit,output,machine,program";

/// The header of sweeps recorded before the `program` column; still read.
const CSV_HEADER_WITHOUT_PROGRAM: &str = "workload,window,rate,length,workers,processes,mode,repeat,input_facts,wall_s,cpu_s,peak_rss_kib,facts_per_s,latency_p50_us,latency_p99_us,stgflow,commit,output,machine";

/// The header of sweeps recorded before the provenance columns; still read.
const CSV_HEADER_WITHOUT_PROVENANCE: &str = "workload,window,rate,length,workers,processes,mode,repeat,input_facts,wall_s,cpu_s,peak_rss_kib,facts_per_s,latency_p50_us,latency_p99_us";

/// What ran a sweep, on every line of its `results.csv` (so a row copied elsewhere still
/// says what produced it): `stgflow --version`, the commit it was built from, the
/// output mode, the machine and the `own` workload's program (its file name). Empty
/// where unknown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Provenance {
    pub stgflow: Option<String>,
    pub commit: Option<String>,
    pub output: Option<String>,
    pub machine: Option<String>,
    pub program: Option<String>,
}

impl Provenance {
    /// The five CSV fields (a comma in a value becomes a semicolon, a line break a space).
    fn fields(&self) -> String {
        let field = |v: &Option<String>| {
            v.as_deref()
                .unwrap_or("")
                .replace(',', ";")
                .replace(['\n', '\r'], " ")
        };
        format!(
            "{},{},{},{},{}",
            field(&self.stgflow),
            field(&self.commit),
            field(&self.output),
            field(&self.machine),
            field(&self.program)
        )
    }

    fn parse(fields: &[&str]) -> Provenance {
        let field = |i: usize| {
            fields
                .get(i)
                .filter(|v| !v.is_empty())
                .map(|v| (*v).to_owned())
        };
        Provenance {
            stgflow: field(0),
            commit: field(1),
            output: field(2),
            machine: field(3),
            program: field(4),
        }
    }
}

/// The row's own columns as CSV (no newline; [`write_csv`] adds the provenance).
pub fn csv_line(row: &Row) -> String {
    let optional = |v: Option<f64>| v.map_or(String::new(), |v| format!("{v:.1}"));
    let [window, rate, length] = parameters(row);
    format!(
        "{},{window},{rate},{length},{},{},{},{},{},{:.6},{:.6},{},{:.1},{},{}",
        row.workload,
        row.workers,
        row.processes,
        row.mode.name(),
        row.repeat,
        row.input_facts,
        row.usage.wall.as_secs_f64(),
        row.usage.cpu.as_secs_f64(),
        row.usage.peak_rss_kib,
        row.facts_per_s(),
        optional(row.latency_p50_us),
        optional(row.latency_p99_us),
    )
}

/// A row's window, rate and length as written: empty where the workload has none (one's
/// own program has none of them).
fn parameters(row: &Row) -> [String; 3] {
    let written = |applies: bool, value: u64| match applies {
        true => value.to_string(),
        false => String::new(),
    };
    [
        written(row.workload.has_window(), row.window),
        written(row.workload.has_rate(), row.rate),
        written(row.workload.has_length(), row.length),
    ]
}

/// Where a sweep finds `stgflow` and leaves its files.
#[derive(Clone, Debug)]
pub struct Setup {
    pub stgflow: PathBuf,
    pub wrapper: Wrapper,
    pub out: PathBuf,
}

/// Runs the whole grid, calling `progress` with each finished row (and writing nothing
/// itself but streams and programs under `setup.out`).
/// Over 100 lines: the grid's loops, nested in the order the rows are written.
pub fn run_grid(
    setup: &Setup,
    grid: &Grid,
    mut progress: impl FnMut(&Row),
) -> anyhow::Result<Vec<Row>> {
    if grid.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    if grid.output != "changes" && grid.modes.contains(&InputMode::Streaming) {
        bail!("streaming runs measure latency on `--mode changes` output; use --output changes");
    }
    let streams = setup.out.join("streams");
    let programs = setup.out.join("programs");
    for dir in [&streams, &programs, &setup.wrapper.scratch] {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut rows = Vec::new();
    for &workload in &grid.workloads {
        let windows = if workload.has_window() {
            grid.windows.clone()
        } else {
            vec![0]
        };
        let rates = if workload.has_rate() {
            grid.rates.clone()
        } else {
            vec![0]
        };
        let lengths = if workload.has_length() {
            grid.lengths.clone()
        } else {
            vec![0]
        };
        for &window in &windows {
            let mut program = match (workload, &grid.own) {
                (Workload::Own, Some((program, _))) => program.clone(),
                (Workload::Own, None) => bail!("the `own` workload needs --program and --stream"),
                _ if workload.recorded().is_some() => PathBuf::new(),
                _ => {
                    let program = programs.join(workload.program_file(window));
                    std::fs::write(&program, workload.program(window))
                        .with_context(|| format!("cannot write {}", program.display()))?;
                    program
                }
            };
            for &rate in &rates {
                for &length in &lengths {
                    let own = grid.own.as_ref().filter(|_| workload == Workload::Own);
                    let (stream_files, input_facts, extra) = match workload.recorded() {
                        None if own.is_some() => {
                            let files = own.map(|(_, streams)| streams.clone()).unwrap_or_default();
                            let records = count_records(&files)?;
                            (files, records, Vec::new())
                        }
                        Some(recorded) => {
                            let files: Vec<PathBuf> = (workload.recorded_files(&recorded, length))
                                .iter()
                                .map(|f| grid.data.join(recorded.dir).join(f))
                                .collect();
                            let records = count_records(&files)?;
                            // RTEC's rules are the program; its background knowledge
                            // (and the repository's file for what RTEC computes in
                            // Prolog) comes before the streams.
                            let (rules, more) = recorded
                                .program_files(&grid.data, &programs)
                                .with_context(|| {
                                    format!("{workload}: RTEC's files in {}", grid.data.display())
                                })?;
                            program = rules;
                            let extra = recorded.args.iter().map(|a| (*a).to_owned()).collect();
                            ([more, files].concat(), records, extra)
                        }
                        None => {
                            let stream = workload.stream_path(&streams, rate, length);
                            let facts = ensure_stream(workload, rate, length, &stream)?;
                            (vec![stream], facts, Vec::new())
                        }
                    };
                    let extra = [extra, grid.extra.clone()].concat();
                    for &mode in &grid.modes {
                        let points = match mode {
                            InputMode::Streaming
                                if workload.recorded().is_some()
                                    || workload.is_lars()
                                    || workload == Workload::Own =>
                            {
                                bail!(
                                    "{workload}: streaming mode needs a generated TD stream; run recorded, LARS and own workloads in batch mode"
                                )
                            }
                            InputMode::Streaming => measure::time_points(&stream_files[0])?,
                            InputMode::Batch => Vec::new(),
                        };
                        for &processes in &grid.processes {
                            for &workers in &grid.workers {
                                for repeat in 0..grid.repeat {
                                    let point = Point {
                                        output: &grid.output,
                                        program: &program,
                                        streams: &stream_files,
                                        extra: &extra,
                                        workers,
                                        processes,
                                    };
                                    let (usage, latencies) = match mode {
                                        InputMode::Batch => (run_batch(setup, &point)?, Vec::new()),
                                        InputMode::Streaming => {
                                            run_streaming(setup, &point, &points, grid.pace)?
                                        }
                                    };
                                    let row = Row {
                                        workload,
                                        window,
                                        rate,
                                        length,
                                        workers,
                                        processes,
                                        mode,
                                        repeat,
                                        input_facts,
                                        usage,
                                        latency_p50_us: measure::quantile(&latencies, 0.5),
                                        latency_p99_us: measure::quantile(&latencies, 0.99),
                                        latencies_us: latencies,
                                    };
                                    progress(&row);
                                    rows.push(row);
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    Ok(rows)
}

/// The number of records (non-empty lines) in `files`.
fn count_records(files: &[PathBuf]) -> anyhow::Result<u64> {
    let mut records = 0;
    for file in files {
        let bytes = std::fs::read(file).with_context(|| {
            format!(
                "cannot read {} (recorded workloads read RTEC's data, see --data; `own` reads --stream)",
                file.display()
            )
        })?;
        records += bytes
            .split(|&b| b == b'\n')
            .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
            .count() as u64;
    }
    Ok(records)
}

/// Generates the stream unless a complete one is already there; returns its fact count.
fn ensure_stream(workload: Workload, rate: u64, length: u64, path: &Path) -> anyhow::Result<u64> {
    // The count is written after the stream, so a present count means a complete stream.
    let count = path.with_extension("count");
    if let Ok(text) = std::fs::read_to_string(&count)
        && let Ok(facts) = text.trim().parse()
        && path.exists()
    {
        return Ok(facts);
    }
    let summary = workload.write_stream(rate, length, path)?;
    std::fs::write(&count, format!("{}\n", summary.facts))
        .with_context(|| format!("cannot write {}", count.display()))?;
    Ok(summary.facts)
}

struct Point<'a> {
    /// `--mode` of the run.
    output: &'a str,
    program: &'a Path,
    streams: &'a [PathBuf],
    /// Extra `stgflow run` arguments (e.g. `--tick 40`).
    extra: &'a [String],
    workers: usize,
    processes: usize,
}

impl Point<'_> {
    /// `stgflow run` arguments for process `index`, reading the streams, or stdin when
    /// `stdin` is set.
    fn args(&self, stdin: bool, index: usize, hostfile: &Path) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["run".into(), self.program.into()];
        if stdin {
            args.push("-".into());
        } else {
            args.extend(self.streams.iter().map(|s| s.as_os_str().to_owned()));
        }
        args.extend(self.extra.iter().map(OsString::from));
        args.extend([
            "--mode".into(),
            self.output.into(),
            "-q".into(),
            "-w".into(),
            self.workers.to_string().into(),
        ]);
        if self.processes > 1 {
            args.extend([
                "-n".into(),
                self.processes.to_string().into(),
                "-p".into(),
                index.to_string().into(),
                "-h".into(),
                hostfile.into(),
                "--connect-timeout".into(),
                "60".into(),
            ]);
        }
        args
    }
}

/// Starts processes 1.. of a cluster (their output is empty by design) and returns them.
fn start_peers(
    setup: &Setup,
    point: &Point<'_>,
    hostfile: &Path,
) -> anyhow::Result<Vec<measure::Measured>> {
    if point.processes > 1 {
        measure::loopback_hostfile(point.processes, hostfile)?;
    }
    (1..point.processes)
        .map(|index| {
            setup.wrapper.spawn(
                &setup.stgflow,
                &point.args(false, index, hostfile),
                Stdio::null(),
                Stdio::null(),
                Stdio::piped(),
            )
        })
        .collect()
}

/// Combines the processes of one cluster run: wall of the slowest, CPU summed, the
/// largest peak RSS. When process 0 failed, the others are stopped rather than left to
/// wait for it until their connect timeout.
fn combine(first: anyhow::Result<Usage>, peers: Vec<measure::Measured>) -> anyhow::Result<Usage> {
    let mut total = match first {
        Ok(usage) => usage,
        Err(error) => {
            peers.into_iter().for_each(measure::Measured::kill);
            return Err(error);
        }
    };
    for peer in peers {
        let usage = peer.finish()?;
        total.wall = total.wall.max(usage.wall);
        total.cpu += usage.cpu;
        total.peak_rss_kib = total.peak_rss_kib.max(usage.peak_rss_kib);
    }
    Ok(total)
}

fn run_batch(setup: &Setup, point: &Point<'_>) -> anyhow::Result<Usage> {
    let hostfile = setup.wrapper.scratch.join("hosts");
    let peers = start_peers(setup, point, &hostfile)?;
    let first = setup
        .wrapper
        .spawn(
            &setup.stgflow,
            &point.args(false, 0, &hostfile),
            Stdio::null(),
            Stdio::null(),
            Stdio::piped(),
        )
        .and_then(measure::Measured::finish);
    combine(first, peers)
}

fn run_streaming(
    setup: &Setup,
    point: &Point<'_>,
    points: &[(u64, Vec<u8>)],
    pace: Option<f64>,
) -> anyhow::Result<(Usage, Vec<f64>)> {
    let hostfile = setup.wrapper.scratch.join("hosts");
    let peers = start_peers(setup, point, &hostfile)?;
    let mut first = match setup.wrapper.spawn(
        &setup.stgflow,
        &point.args(true, 0, &hostfile),
        Stdio::piped(),
        Stdio::piped(),
        Stdio::piped(),
    ) {
        Ok(first) => first,
        Err(error) => return combine(Err(error), peers).map(|usage| (usage, Vec::new())),
    };
    let (Some(stdin), Some(stdout)) = (first.stdin(), first.stdout()) else {
        first.kill();
        return combine(
            Err(anyhow::anyhow!("the streaming run has no pipes")),
            peers,
        )
        .map(|usage| (usage, Vec::new()));
    };
    let latencies = measure::stream_through(points, stdin, stdout, pace);
    let usage = combine(first.finish(), peers)?;
    Ok((usage, latencies?))
}

/// Writes `rows` as CSV to `path`, each line ending in `provenance`.
pub fn write_csv(rows: &[Row], provenance: &Provenance, path: &Path) -> anyhow::Result<()> {
    let mut text = String::from(CSV_HEADER);
    text.push('\n');
    let provenance = provenance.fields();
    for row in rows {
        let _ = writeln!(text, "{},{provenance}", csv_line(row));
    }
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))
}

/// Writes every latency sample as `workload,window,rate,length,workers,processes,latency_us`
/// (streaming rows only), so the CDF can be redrawn by other tools.
pub fn write_latencies(rows: &[Row], path: &Path) -> anyhow::Result<()> {
    let mut out = std::io::BufWriter::new(
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?,
    );
    writeln!(
        out,
        "workload,window,rate,length,workers,processes,repeat,latency_us"
    )?;
    for row in rows.iter().filter(|r| r.mode == InputMode::Streaming) {
        let [window, rate, length] = parameters(row);
        for latency in &row.latencies_us {
            writeln!(
                out,
                "{},{window},{rate},{length},{},{},{},{latency:.1}",
                row.workload, row.workers, row.processes, row.repeat
            )?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Reads back a sweep's `results.csv` (with or without the provenance columns) and,
/// where given, its `latencies.csv`; the provenance is the first row's (empty for a file
/// without the columns).
pub fn read_results(
    results: &Path,
    latencies: Option<&Path>,
) -> anyhow::Result<(Vec<Row>, Provenance)> {
    let text = std::fs::read_to_string(results)
        .with_context(|| format!("cannot read {}", results.display()))?;
    let mut lines = text.lines().enumerate();
    let columns = match lines.next() {
        Some((_, header))
            if [
                CSV_HEADER,
                CSV_HEADER_WITHOUT_PROGRAM,
                CSV_HEADER_WITHOUT_PROVENANCE,
            ]
            .contains(&header) =>
        {
            header.split(',').count()
        }
        _ => bail!(
            "{}: not a stgflow-bench results file (header differs)",
            results.display()
        ),
    };
    let mut rows = Vec::new();
    let mut provenance = None;
    for (n, line) in lines {
        let at = |e: String| anyhow::anyhow!("{}:{}: {e}", results.display(), n + 1);
        let fields: Vec<&str> = line.split(',').collect();
        if fields.len() != columns {
            return Err(at(format!("expected {columns} fields")));
        }
        rows.push(parse_row(&fields).map_err(at)?);
        provenance.get_or_insert_with(|| Provenance::parse(&fields[RUN_COLUMNS..]));
    }
    if let Some(path) = latencies {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        for (n, line) in text.lines().enumerate().skip(1) {
            let fields: Vec<&str> = line.split(',').collect();
            let bad = || anyhow::anyhow!("{}:{}: malformed latency line", path.display(), n + 1);
            if fields.len() != 8 {
                return Err(bad());
            }
            let latency: f64 = fields[7].parse().map_err(|_| bad())?;
            let row = rows
                .iter_mut()
                .find(|r| {
                    let [window, rate, length] = parameters(r);
                    r.mode == InputMode::Streaming
                        && [
                            r.workload.to_string(),
                            window,
                            rate,
                            length,
                            r.workers.to_string(),
                            r.processes.to_string(),
                            r.repeat.to_string(),
                        ]
                        .iter()
                        .zip(&fields[..7])
                        .all(|(a, b)| a == b)
                })
                .ok_or_else(bad)?;
            row.latencies_us.push(latency);
        }
    }
    Ok((rows, provenance.unwrap_or_default()))
}

/// The columns of a run, before the provenance.
const RUN_COLUMNS: usize = 15;

/// A run from the first [`RUN_COLUMNS`] of `fields`.
fn parse_row(fields: &[&str]) -> Result<Row, String> {
    fn number<T: std::str::FromStr>(text: &str, what: &str) -> Result<T, String> {
        text.parse()
            .map_err(|_| format!("{what}: `{text}` is not a number"))
    }
    let optional = |text: &str, what: &str| -> Result<Option<f64>, String> {
        if text.is_empty() {
            Ok(None)
        } else {
            number(text, what).map(Some)
        }
    };
    // Empty where the workload has none.
    let parameter = |text: &str, what: &str| match text {
        "" => Ok(0),
        text => number(text, what),
    };
    Ok(Row {
        workload: fields[0].parse()?,
        window: parameter(fields[1], "window")?,
        rate: parameter(fields[2], "rate")?,
        length: parameter(fields[3], "length")?,
        workers: number(fields[4], "workers")?,
        processes: number(fields[5], "processes")?,
        mode: fields[6].parse()?,
        repeat: number(fields[7], "repeat")?,
        input_facts: number(fields[8], "input_facts")?,
        usage: Usage {
            wall: Duration::from_secs_f64(number(fields[9], "wall_s")?),
            cpu: Duration::from_secs_f64(number(fields[10], "cpu_s")?),
            peak_rss_kib: number(fields[11], "peak_rss_kib")?,
        },
        latency_p50_us: optional(fields[13], "latency_p50_us")?,
        latency_p99_us: optional(fields[14], "latency_p99_us")?,
        latencies_us: Vec::new(),
    })
}

/// The median of the repeats of each grid point, in first-seen order: one row per point,
/// with the median wall time (its facts/s follows), CPU time and peak RSS, and the
/// latencies of all repeats pooled.
pub fn medians(rows: &[Row]) -> Vec<Row> {
    repeats(rows).iter().map(|group| median_of(group)).collect()
}

/// The runs of `rows` grouped by grid point (equal [`Row::key`]s), in first-seen order.
pub fn repeats(rows: &[Row]) -> Vec<Vec<&Row>> {
    let mut groups: Vec<Vec<&Row>> = Vec::new();
    for row in rows {
        match groups.iter_mut().find(|g| g[0].key() == row.key()) {
            Some(group) => group.push(row),
            None => groups.push(vec![row]),
        }
    }
    groups
}

/// One row for the repeats of a grid point (not empty): see [`medians`].
pub fn median_of(group: &[&Row]) -> Row {
    let median = |f: &dyn Fn(&Row) -> f64| {
        let values: Vec<f64> = group.iter().map(|r| f(r)).collect();
        measure::median(&values).unwrap_or(0.0)
    };
    let latencies: Vec<f64> = group
        .iter()
        .flat_map(|r| r.latencies_us.iter().copied())
        .collect();
    Row {
        repeat: group.len(),
        usage: Usage {
            wall: Duration::from_secs_f64(median(&|r| r.usage.wall.as_secs_f64())),
            cpu: Duration::from_secs_f64(median(&|r| r.usage.cpu.as_secs_f64())),
            peak_rss_kib: median(&|r| r.usage.peak_rss_kib as f64) as u64,
        },
        latency_p50_us: measure::quantile(&latencies, 0.5),
        latency_p99_us: measure::quantile(&latencies, 0.99),
        latencies_us: latencies,
        ..group[0].clone()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn row(workers: usize, repeat: usize, wall_ms: u64) -> Row {
        Row {
            workload: Workload::Diamond,
            window: 10,
            rate: 100,
            length: 1000,
            workers,
            processes: 1,
            mode: InputMode::Batch,
            repeat,
            input_facts: 100_000,
            usage: Usage {
                wall: Duration::from_millis(wall_ms),
                cpu: Duration::from_millis(wall_ms),
                peak_rss_kib: 1000 + wall_ms,
            },
            latency_p50_us: None,
            latency_p99_us: None,
            latencies_us: Vec::new(),
        }
    }

    #[test]
    fn medians_group_repeats_of_a_point() {
        let rows = [
            row(1, 0, 300),
            row(2, 0, 200),
            row(1, 1, 100),
            row(1, 2, 200),
        ];
        let medians = medians(&rows);
        assert_eq!(medians.len(), 2);
        assert_eq!(medians[0].workers, 1);
        assert_eq!(medians[0].repeat, 3);
        assert_eq!(medians[0].usage.wall, Duration::from_millis(200));
        assert_eq!(medians[1].usage.wall, Duration::from_millis(200));
        assert!((medians[0].facts_per_s() - 500_000.0).abs() < 1.0);
    }

    #[test]
    fn results_read_back_as_written() {
        let dir = std::env::temp_dir().join(format!("stgflow-sweep-csv-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut streaming = row(1, 0, 100);
        streaming.mode = InputMode::Streaming;
        streaming.latencies_us = vec![12.5, 30.0];
        streaming.latency_p50_us = Some(12.5);
        streaming.latency_p99_us = Some(30.0);
        let rows = vec![row(2, 0, 250), streaming];
        let provenance = Provenance {
            stgflow: Some("stgflow 0.1.0".into()),
            commit: Some("67d5a06-dirty".into()),
            output: Some("changes".into()),
            machine: Some("box — 2 CPUs (a CPU), 24 GiB".into()),
            program: Some("mine.tdl".into()),
        };
        write_csv(&rows, &provenance, &dir.join("results.csv")).unwrap();
        write_latencies(&rows, &dir.join("latencies.csv")).unwrap();
        let text = std::fs::read_to_string(dir.join("results.csv")).unwrap();
        assert!(
            text.lines().skip(1).all(|l| l.ends_with(
                ",stgflow 0.1.0,67d5a06-dirty,changes,box — 2 CPUs (a CPU); 24 GiB,mine.tdl"
            )),
            "{text}"
        );
        let back =
            read_results(&dir.join("results.csv"), Some(&dir.join("latencies.csv"))).unwrap();
        let mut unquoted = provenance;
        unquoted.machine = Some("box — 2 CPUs (a CPU); 24 GiB".into());
        assert_eq!(back, (rows.clone(), unquoted));
        // A sweep recorded before the provenance columns still reads, with none.
        let old: String = text
            .lines()
            .map(|l| l.rsplitn(6, ',').last().unwrap().to_owned() + "\n")
            .collect();
        assert!(old.starts_with(&format!("{CSV_HEADER_WITHOUT_PROVENANCE}\n")));
        std::fs::write(dir.join("old.csv"), old).unwrap();
        let back = read_results(&dir.join("old.csv"), None).unwrap();
        assert_eq!(back.1, Provenance::default());
        assert_eq!(back.0.len(), 2);
        std::fs::write(dir.join("bad.csv"), format!("{CSV_HEADER}\ndiamond,1\n")).unwrap();
        let error = read_results(&dir.join("bad.csv"), None)
            .unwrap_err()
            .to_string();
        assert!(error.ends_with("bad.csv:2: expected 20 fields"), "{error}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn csv_lines_match_the_header() {
        let line = csv_line(&row(2, 1, 250));
        assert_eq!(line.split(',').count(), RUN_COLUMNS);
        assert_eq!(
            CSV_HEADER.split(',').count(),
            RUN_COLUMNS + Provenance::default().fields().split(',').count()
        );
        assert!(CSV_HEADER.starts_with(CSV_HEADER_WITHOUT_PROGRAM));
        assert!(CSV_HEADER_WITHOUT_PROGRAM.starts_with(CSV_HEADER_WITHOUT_PROVENANCE));
        // One's own program has no window, rate or length: the fields are empty.
        let mut own = row(2, 1, 250);
        own.workload = Workload::Own;
        assert!(
            csv_line(&own).starts_with("own,,,,2,1,"),
            "{}",
            csv_line(&own)
        );
        assert!(
            line.starts_with("diamond,10,100,1000,2,1,batch,1,100000,0.250000,"),
            "{line}"
        );
        assert!(line.ends_with(",400000.0,,"), "{line}");
    }
}
