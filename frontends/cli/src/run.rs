//! `stgflow run`: evaluates a program over its streams and prints what holds.

use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use stgflow_engine::Engine;
use stgflow_io::drive::{FactSource, ProgramFacts, RunError, Splitting, Timeline};
use stgflow_io::sink::{BUFFER, Buffered, Encoding, Files, Mode, Sink};
use stgflow_io::stream::blocks::{ParallelReader, Parallelism};
use stgflow_io::stream::columnar::{self, Columnar, RowFile};
use stgflow_io::stream::split::{SplitFile, Splittable};
use stgflow_io::stream::{FactReader, Format, InputFact, Schema, SkipCounts, StreamError};
use stgflow_lang::Compiled;
use stgflow_lang::ir::Program;
use stgflow_lang::value::symbols::Clock;

use crate::args::{EngineKind, OutputFormat, OutputMode, RunArgs, Window};
use crate::{Context, Failure};

impl Context<'_> {
    pub(crate) fn run(
        &mut self,
        mut args: RunArgs,
        stdin: impl BufRead,
        stdout: &mut dyn Write,
    ) -> Result<(), Failure> {
        let started = Instant::now();
        if args.engine != EngineKind::Stg && (args.dump_stg.is_some() || args.stg_skip_empty) {
            return Err(Failure::Message(
                "--dump-stg and --stg-skip-empty need --engine stg".to_owned(),
            ));
        }
        if args.engine != EngineKind::Dataflow
            && (args.workers.is_some_and(|w| w > 1)
                || args.processes > 1
                || args.hostfile.is_some())
        {
            return Err(Failure::Message(
                "-w, -n and -h are the dataflow engine's; --engine reference and --engine stg run on one thread".to_owned(),
            ));
        }
        if let Some(out) = &args.plot {
            if args.mode != OutputMode::Intervals || args.output_dir.is_some() {
                return Err(Failure::Message(
                    "--plot draws the intervals printed: it needs `--mode intervals` and stdout (no --output-dir); `stgflow plot FILE` draws a file of them".to_owned(),
                ));
            }
            crate::plot::check_picture(out)?;
        }
        if args.window == Window::Rtec {
            // RTEC's window (T, END]: nothing read at T, nothing printed before the next.
            let after = args.from.unwrap_or(0);
            self.window_after = Some(after);
            let next = (after / args.tick + 1).saturating_mul(args.tick);
            args.print_from = Some(args.print_from.map_or(next, |t| t.max(next)));
        }
        timeline_is_not_empty("--from", args.from, args.until)?;
        timeline_is_not_empty("--print-from", args.print_from, args.until)?;
        if args.print_from.is_some()
            && args.output_dir.is_some()
            && args.engine == EngineKind::Dataflow
        {
            return Err(Failure::Message(
                "--print-from with --output-dir: the dataflow engine's workers write the files and do not hold back what comes before it yet; use --engine reference, or print to stdout".to_owned(),
            ));
        }
        self.timeline_start = args.from.map_or(0, |t| t / args.tick);
        let mut compiled = self.compile_with_outputs(&args)?;
        let ahead = crate::domains::Ahead {
            streams: &args.streams,
            format: args.format.as_deref(),
            tick: args.tick,
            tolerance: args.tolerance.tolerance(),
            until: args.until.map(|t| t / args.tick),
            threads: args.parse_threads,
        };
        self.read_domains_ahead(&mut compiled, &ahead)?;
        let program = &compiled.program;
        let Some(analysis) = &compiled.analysis else {
            return Err(Failure::Reported);
        };
        // The bytes read of the stream files, for the progress line.
        let read = Arc::new(AtomicU64::new(0));
        // Output written time point by time point lets the stream's long symbols go once
        // no fact holds them; intervals and RTEC's recognitions keep facts to the end.
        let clock = matches!(
            args.mode,
            OutputMode::Points | OutputMode::Changes | OutputMode::Laser
        )
        .then(Clock::new);
        let (mut sources, live) = self.open_sources(&args, program, stdin, &read, clock.clone())?;
        if !live && !self.quiet {
            self.warn_of_a_flood(&args);
        }
        let bar = (!live && !self.quiet && io::stderr().is_terminal() && !args.streams.is_empty())
            .then(|| progress_bar(input_size(&args.streams)));
        if let Some(bar) = &bar {
            sources = with_progress(sources, bar, &read);
        }
        let files = args
            .output_dir
            .as_deref()
            .map(|dir| output_files(dir, &args, live))
            .transpose()?;
        // Part files an earlier run left; in a cluster, process 0 clears them before the
        // others connect (on one machine they share the directory).
        if let (Some(files), 0) = (&files, args.process) {
            files
                .clear(program)
                .map_err(|e| Failure::Message(format!("--output-dir: {e}")))?;
        }
        let timeline = Timeline {
            from: args.from.map(|t| t / args.tick),
            until: args.until.map(|t| t / args.tick),
        };
        // From here a signal stops the run cleanly (see `stgflow_io::interrupt`).
        let listening = stgflow_io::interrupt::listen();
        let identity = cluster_identity(&args, program)?;
        let engine = engine_of(&args, live, files.clone(), identity);
        let lines = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let copy = args.plot.as_ref().map(|_| std::rc::Rc::default());
        let counted = crate::report::Lines {
            inner: stdout,
            lines: (args.stats || args.stats_json.is_some()).then(|| lines.clone()),
            records: self.records.then(Default::default),
            copy: copy.clone(),
        };
        // A pipe's reader sees the output in pieces of `BUFFER`; a live run flushes every
        // time point.
        let out = if self.records {
            // Records go to a reader in this process: a time point's at once, uncopied.
            Buffered::plain(1, counted)
        } else if self.stdout_file {
            Buffered::aligned(BUFFER, counted)
        } else {
            Buffered::plain(BUFFER, counted)
        };
        let mut sink = match files {
            // The dataflow engine's workers write the files; the others write them here.
            Some(files) if !matches!(engine, Engine::Dataflow(_)) => files
                .sink(out, program, 0, |_| true)
                .map_err(|e| Failure::Message(format!("--output-dir: {e}")))?,
            _ if args.mode == OutputMode::Rtec => {
                let grounded: Vec<_> = self
                    .grounded
                    .iter()
                    .filter_map(|(name, value)| Some((program.pred_id(name)?, *value)))
                    .collect();
                let printed = self
                    .printed
                    .iter()
                    .filter_map(|(name, how)| Some((program.pred_id(name)?, how.clone())))
                    .collect();
                let earlier = (self.longer.iter())
                    .filter_map(|(name, d)| {
                        Some((program.pred_id(name)?, u64::from(*d) * args.tick))
                    })
                    .collect();
                let mut recognitions = stgflow_ec::recognitions::Recognitions::new(program)
                    .printed_as(printed)
                    .starting_earlier(earlier);
                if !grounded.is_empty() {
                    recognitions = recognitions.recognised(grounded);
                }
                if args.window == Window::Rtec {
                    recognitions = recognitions.in_rtecs_window(args.tick);
                }
                Sink::new(out, Mode::Intervals, program).summarised(Box::new(recognitions))
            }
            _ => {
                let mode = mode_of(args.mode);
                let encoding = match mode {
                    Mode::Points | Mode::Changes | Mode::Intervals if self.records => {
                        Encoding::Records
                    }
                    _ => Encoding::Td,
                };
                Sink::new(out, mode, program).encoded(encoding)
            }
        };
        if let Some(clock) = clock {
            sink = sink.clocked(clock);
        }
        sink.flush_each = live;
        sink.time_scale = args.tick;
        sink.print_from = args.print_from.map(|t| t / args.tick);
        let result = stgflow_engine::run(
            program,
            analysis,
            &mut sources,
            timeline,
            &engine,
            &mut sink,
        );
        let last_written = sink.last_written();
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
        let lines = lines.load(std::sync::atomic::Ordering::Relaxed);
        // `--plot`: the intervals printed, drawn (also after an input error: what was
        // printed before it).
        if let (Some(out), Some(copy)) = (&args.plot, copy) {
            let text = String::from_utf8_lossy(&copy.borrow()).into_owned();
            let title = args.program.display().to_string();
            let picture = crate::plot::Picture {
                out,
                rows: 300,
                width: 1200,
                title: &title,
                select: crate::plot::Select::default(),
            };
            if let Err(Failure::Message(message)) =
                self.draw_timeline(&text, "the run's output", &picture)
            {
                let _ = writeln!(self.stderr, "error: --plot: {message}");
            }
        }
        self.report(result, &args, program, (started, lines), last_written)
    }

    /// Warns (W104) before a large log is replayed in `points` mode: it prints every fact
    /// at every time point, which over a long log is orders of magnitude more than the log
    /// (a fact that holds for a million time points is a million lines).
    fn warn_of_a_flood(&mut self, args: &RunArgs) {
        // Overridden by tests, which use small logs.
        let large = std::env::var("STGFLOW_LARGE_INPUT_BYTES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(LARGE_INPUT);
        let size = input_size(&args.streams).unwrap_or(0);
        if args.mode != OutputMode::Points || args.streams.is_empty() || size < large {
            return;
        }
        let _ = writeln!(
            self.stderr,
            "warning[{}]: `--mode points` (the default) prints every fact at every time point it holds: over {} MB of log, that can be orders of magnitude more than the log; `--mode changes` prints when each fact starts and stops holding, `--mode intervals` each interval it holds (README: \"Replaying a large log\")",
            stgflow_io::stream::Code::W104,
            size / 1_000_000
        );
    }

    /// Compiles the program, with `--output`'s predicates as its outputs if given.
    fn compile_with_outputs(&mut self, args: &RunArgs) -> Result<Compiled, Failure> {
        let mut compiled = self.compile(&args.program, &args.background)?;
        if !args.output.is_empty() {
            let mut outputs = Vec::new();
            for name in &args.output {
                let Some(pred) = compiled.program.pred_id(name.trim()) else {
                    return Err(Failure::Message(format!(
                        "--output: the program has no predicate `{}`{}",
                        name.trim(),
                        stgflow_eval::explain::did_you_mean(&compiled.program, name.trim())
                    )));
                };
                outputs.push(pred);
            }
            compiled.program.outputs = Some(outputs);
        }
        Ok(compiled)
    }

    /// The program's own facts and a reader per stream; whether one of them is stdin (a
    /// live stream). With `clock`, the readers stamp their long symbols for it.
    fn open_sources<'p>(
        &self,
        args: &RunArgs,
        program: &'p Program,
        stdin: impl BufRead + 'p,
        read: &Arc<AtomicU64>,
        clock: Option<Clock>,
    ) -> Result<(Vec<Box<dyn FactSource + 'p>>, bool), Failure> {
        let schema = match clock {
            Some(clock) => Schema::new(program).stamping(program, clock),
            None => Schema::new(program),
        };
        let mut sources: Vec<Box<dyn FactSource + 'p>> = vec![Box::new(ProgramFacts::new(program))];
        let mut stdin = Some(stdin);
        let mut live = false;
        for stream in &args.streams {
            let format = self.stream_format(args.format.as_deref(), stream);
            let name = if stream == "-" { "<stdin>" } else { stream };
            // The reader's settings, for whichever input it reads.
            let like = FactReader::new(io::empty(), name, format, schema.clone())
                .with_tick(args.tick)
                .with_tolerance(args.tolerance.tolerance());
            if stream == "-" {
                let Some(input) = stdin.take() else {
                    return Err(Failure::Message(
                        "`-` (stdin) is given more than once".to_owned(),
                    ));
                };
                live = true;
                sources.push(Box::new(like.with_input(input)));
            } else if let Some(table) = self.table(stream) {
                let batches = table.batches.clone();
                let rows = splits(args).then(|| {
                    let like = like.with_input(io::empty());
                    RowFile::of_batches(&table.schema, batches.clone(), like)
                });
                let whole = Columnar::of_batches(&table.schema, batches, like);
                sources.push(in_parts(whole, rows.flatten()));
            } else if columnar::is_columnar(stream) {
                std::fs::metadata(stream)
                    .map_err(|e| Failure::Message(format!("cannot open {stream}: {e}")))?;
                let rows =
                    splits(args).then(|| RowFile::open(stream, like.with_input(io::empty())).ok());
                sources.push(in_parts(Columnar::open(stream, like), rows.flatten()));
            } else {
                sources.push(open_file(stream, like, args, read)?);
            }
        }
        Ok((sources, live))
    }

    /// A stream's format: `--format`, else by the file name's ending (before `.gz` or
    /// `.zst`).
    pub(crate) fn stream_format(&self, given: Option<&str>, stream: &str) -> Arc<dyn Format> {
        given
            .and_then(|name| self.formats.named(name))
            .unwrap_or_else(|| self.formats.for_path(Compression::of(stream).1))
    }
}

/// How a stream file is compressed, by its name's ending.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    /// The compression of `stream`, and its name without the compression's ending.
    pub(crate) fn of(stream: &str) -> (Compression, &str) {
        let lower = stream.to_ascii_lowercase();
        for (ending, compression) in [(".gz", Compression::Gzip), (".zst", Compression::Zstd)] {
            if lower.ends_with(ending) {
                return (compression, &stream[..stream.len() - ending.len()]);
            }
        }
        (Compression::None, stream)
    }
}

/// The file `stream`, read decompressed when its name ends in `.gz` (gzip, several members
/// in turn) or `.zst` (zstandard); and whether it is a regular file (not a pipe, which may
/// be a live stream).
/// The bytes read from it, before decompression, are added to `read`, if given.
pub(crate) fn open_input(
    stream: &str,
    read: Option<&Arc<AtomicU64>>,
) -> Result<(Box<dyn io::Read + Send>, bool), Failure> {
    let file =
        File::open(stream).map_err(|e| Failure::Message(format!("cannot open {stream}: {e}")))?;
    let regular = file.metadata().is_ok_and(|m| m.is_file());
    let file = Counted {
        inner: file,
        read: read.cloned(),
    };
    let reader: Box<dyn io::Read + Send> = match Compression::of(stream).0 {
        Compression::None => Box::new(file),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(BufReader::new(file))),
        Compression::Zstd => Box::new(Zstd(
            ruzstd::decoding::StreamingDecoder::new(BufReader::new(file))
                .map_err(|e| Failure::Message(format!("{stream}: not a zstandard file: {e}")))?,
        )),
    };
    Ok((reader, regular))
}

/// A zstandard decoder with its errors in words (the decoder's are its types' debug text).
struct Zstd<R>(R);

impl<R: io::Read> io::Read for Zstd<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.0.read(buf).map_err(|e| {
            let text = e.to_string();
            let why = if text.contains("UnexpectedEof") {
                "the zstandard data ends in the middle of a block (a file cut short?)".to_owned()
            } else {
                let what = text.split(':').next().unwrap_or("damaged data").trim();
                format!("the zstandard data is damaged ({})", what.to_lowercase())
            };
            io::Error::new(e.kind(), why)
        })
    }
}

/// A reader that counts the bytes it reads (for the progress line).
struct Counted<R> {
    inner: R,
    read: Option<Arc<AtomicU64>>,
}

impl<R: io::Read> io::Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        if let Some(read) = &self.read {
            read.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(n)
    }
}

/// The size of the stream files together, if each is a regular file (the progress line's
/// length: the bytes read of them, before decompression).
/// Input bytes from which a replay in `points` mode is warned about (W104).
const LARGE_INPUT: u64 = 256 << 20;

fn input_size(streams: &[String]) -> Option<u64> {
    streams
        .iter()
        .map(|stream| {
            let meta = std::fs::metadata(stream).ok()?;
            (stream != "-" && meta.is_file()).then_some(meta.len())
        })
        .sum()
}

/// Whether a stream can be read in parts by time: where no fact can come late (each part
/// is read on its own, from where its time points start).
fn splits(args: &RunArgs) -> bool {
    args.tolerance.tolerance().lateness == 0
}

/// A columnar stream read `whole`, which can also be read in parts by rows where `rows`
/// is given.
fn in_parts<'p>(whole: Columnar, rows: Option<RowFile>) -> Box<dyn FactSource + 'p> {
    match rows {
        Some(rows) => Box::new(Splittable::new(Box::new(whole), SplitFile::rows(rows))),
        None => Box::new(whole),
    }
}

/// A reader of the file `stream` as `like` reads: in blocks on parsing threads when it is
/// a regular file in a format that reads in blocks, else line by line (a pipe or device
/// may be a live stream).
fn open_file<'p>(
    stream: &str,
    like: FactReader<io::Empty>,
    args: &RunArgs,
    read: &Arc<AtomicU64>,
) -> Result<Box<dyn FactSource + 'p>, Failure> {
    let (file, regular) = open_input(stream, Some(read))?;
    let tolerance = args.tolerance.tolerance();
    // A plain file in a format whose lines read alone can also be read in parts by time,
    // each part where it lies (the dataflow engine's replay by parts).
    let split = (regular
        && Compression::of(stream).0 == Compression::None
        && ParallelReader::supports(like.format().as_ref(), tolerance))
    .then(|| File::open(stream).and_then(|f| SplitFile::new(f, like.with_input(io::empty()))))
    .transpose()
    .map_err(|e| Failure::Message(format!("cannot open {stream}: {e}")))?;
    let source = whole_file(stream, file, regular, like, args)?;
    Ok(match split {
        Some(split) => Box::new(Splittable::new(source, split)),
        None => source,
    })
}

/// A reader of the file `stream` (opened as `file`) read whole: in blocks on parsing
/// threads when it is a regular file in a format that reads in blocks, else line by line.
fn whole_file<'p>(
    stream: &str,
    file: Box<dyn io::Read + Send>,
    regular: bool,
    like: FactReader<io::Empty>,
    args: &RunArgs,
) -> Result<Box<dyn FactSource + 'p>, Failure> {
    let parallelism = Parallelism {
        threads: args.parse_threads.unwrap_or_else(|| {
            Parallelism::default()
                .threads
                .saturating_sub(args.workers() + 1)
        }),
        ..Parallelism::default()
    };
    let tolerance = args.tolerance.tolerance();
    // Read on the workers, the file goes to them in blocks whatever the threads left here.
    let on_workers = args.read_on_workers && args.engine == EngineKind::Dataflow;
    let parallelism = if on_workers {
        Parallelism::on_workers()
    } else {
        parallelism
    };
    let parallelism = Parallelism {
        block_bytes: args.block_bytes.unwrap_or(parallelism.block_bytes),
        ..parallelism
    };
    if regular
        && (parallelism.threads > 0 || on_workers)
        && ParallelReader::supports(like.format().as_ref(), tolerance)
    {
        let reader = ParallelReader::spawn(file, like, parallelism)
            .map_err(|e| Failure::Message(format!("cannot start reading {stream}: {e}")))?;
        return Ok(Box::new(reader));
    }
    Ok(Box::new(
        like.with_input(BufReader::with_capacity(1 << 16, file)),
    ))
}

/// `--from T --until U` (or `--print-from T`) with T after U: a timeline without a time
/// point to print is a mistake, not a run that prints nothing.
pub(crate) fn timeline_is_not_empty(
    flag: &str,
    from: Option<u64>,
    until: Option<u64>,
) -> Result<(), Failure> {
    match (from, until) {
        (Some(from), Some(until)) if from > until => Err(Failure::Message(format!(
            "{flag} {from} is after --until {until}: the timeline has no time point to print"
        ))),
        _ => Ok(()),
    }
}

/// The sink's mode for `--mode`.
fn mode_of(mode: OutputMode) -> Mode {
    match mode {
        OutputMode::Points => Mode::Points,
        OutputMode::Changes => Mode::Changes,
        OutputMode::Intervals | OutputMode::Rtec => Mode::Intervals,
        OutputMode::Laser => Mode::Snapshot(Arc::new(stgflow_lars::output::LaserOutput)),
    }
}

/// `--output-dir` and `--output-format`, the directory created if missing.
fn output_files(dir: &std::path::Path, args: &RunArgs, live: bool) -> Result<Files, Failure> {
    if args.mode == OutputMode::Laser {
        return Err(Failure::Message(
            "--output-dir: `--mode laser` writes each time point whole, not per predicate"
                .to_owned(),
        ));
    }
    if args.mode == OutputMode::Rtec {
        return Err(Failure::Message(
            "--output-dir: `--mode rtec` writes RTEC's one file of recognitions; use `--mode intervals` for a file per predicate"
                .to_owned(),
        ));
    }
    std::fs::create_dir_all(dir).map_err(|e| {
        Failure::Message(format!(
            "--output-dir: cannot create {}: {e}",
            dir.display()
        ))
    })?;
    let encoding = match args.output_format {
        OutputFormat::Td => Encoding::Td,
        OutputFormat::Csv => Encoding::Csv,
        OutputFormat::Jsonl => Encoding::Jsonl,
    };
    Ok(Files {
        dir: dir.to_path_buf(),
        encoding,
        mode: mode_of(args.mode),
        time_scale: args.tick,
        flush_each: live,
    })
}

/// What a cluster process proves to the others: its fingerprint and, with
/// `--cluster-key-file`, that it holds the key (nothing for a single process).
fn cluster_identity(
    args: &RunArgs,
    program: &stgflow_lang::ir::Program,
) -> Result<
    (
        stgflow_engine::Fingerprint,
        Option<stgflow_engine::ClusterKey>,
    ),
    Failure,
> {
    if args.processes <= 1 {
        return Ok(Default::default());
    }
    let key = match &args.cluster_key_file {
        None => None,
        Some(path) => {
            let bytes = std::fs::read(path).map_err(|e| {
                Failure::Message(format!(
                    "--cluster-key-file: cannot read {}: {e}",
                    path.display()
                ))
            })?;
            // A key written with a line end is the same key.
            let end = bytes.trim_ascii_end().len();
            let key = stgflow_engine::ClusterKey::new(bytes[..end].to_vec()).ok_or_else(|| {
                Failure::Message(format!("--cluster-key-file: {} is empty", path.display()))
            })?;
            Some(key)
        }
    };
    Ok((crate::fingerprint::of(args, program), key))
}

/// The engine `--engine` and its flags ask for; the dataflow engine's workers write
/// `files`, if given.
fn engine_of(
    args: &RunArgs,
    live: bool,
    files: Option<Files>,
    (fingerprint, key): (
        stgflow_engine::Fingerprint,
        Option<stgflow_engine::ClusterKey>,
    ),
) -> Engine {
    match args.engine {
        EngineKind::Reference => Engine::Reference,
        EngineKind::Stg => Engine::Stg(stgflow_engine::StgOptions {
            record: args.dump_stg.is_some(),
            skip_empty_nodes: args.stg_skip_empty,
            ..stgflow_engine::StgOptions::default()
        }),
        EngineKind::Dataflow => Engine::Dataflow(stgflow_engine::DataflowOptions {
            cluster: stgflow_engine::Cluster {
                workers: args.workers(),
                processes: args.processes,
                process: args.process,
                hostfile: args.hostfile.clone(),
                connect_timeout: std::time::Duration::from_secs(args.connect_timeout),
                fingerprint,
                key,
            },
            lower: !args.no_lowering,
            live,
            batch_points: args.batch_points,
            diff_on_workers: args.diff_on_workers,
            read_on_workers: args.read_on_workers,
            format_on_workers: args.format_on_workers,
            stats: args.stats || args.stats_json.is_some(),
            files,
            part_bytes: args.part_bytes,
            ..stgflow_engine::DataflowOptions::default()
        }),
    }
}

/// A progress line on stderr, for batch replay on a terminal.
/// With the input's `size` known, it shows how much of it is read and an ETA.
fn progress_bar(size: Option<u64>) -> indicatif::ProgressBar {
    let (bar, template) = match size {
        Some(size) => (
            indicatif::ProgressBar::new(size),
            "{spinner} [{elapsed_precise}] {percent:>3}% of {total_bytes}, ETA {eta} · {msg}",
        ),
        None => (
            indicatif::ProgressBar::new_spinner(),
            "{spinner} [{elapsed_precise}] {msg}",
        ),
    };
    bar.set_style(
        indicatif::ProgressStyle::with_template(template)
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(std::time::Duration::from_millis(200));
    bar
}

/// `sources`, each reporting to `bar` the facts read from all of them together.
fn with_progress<'a>(
    sources: Vec<Box<dyn FactSource + 'a>>,
    bar: &indicatif::ProgressBar,
    read: &Arc<AtomicU64>,
) -> Vec<Box<dyn FactSource + 'a>> {
    let facts = std::rc::Rc::new(std::cell::Cell::new(0));
    sources
        .into_iter()
        .map(|inner| -> Box<dyn FactSource + 'a> {
            Box::new(Progress {
                inner,
                bar: bar.clone(),
                facts: facts.clone(),
                read: read.clone(),
                started: Instant::now(),
            })
        })
        .collect()
}

/// A source that reports its progress on a terminal progress line (batch replay only).
struct Progress<'a> {
    inner: Box<dyn FactSource + 'a>,
    bar: indicatif::ProgressBar,
    /// Facts read from all sources together.
    facts: std::rc::Rc<std::cell::Cell<u64>>,
    /// Bytes read of the stream files together.
    read: Arc<AtomicU64>,
    started: Instant,
}

impl FactSource for Progress<'_> {
    fn next_fact(&mut self) -> Result<Option<InputFact>, Box<StreamError>> {
        let fact = self.inner.next_fact()?;
        if let Some(fact) = &fact {
            let facts = self.facts.get() + 1;
            self.facts.set(facts);
            if facts % 65_536 == 0 {
                self.bar.set_position(self.read.load(Ordering::Relaxed));
                let rate = facts as f64 / self.started.elapsed().as_secs_f64().max(1e-9);
                self.bar.set_message(format!(
                    "time point {}, {:.2} M facts, {:.2} M/s",
                    fact.time,
                    facts as f64 / 1e6,
                    rate / 1e6
                ));
            }
        }
        Ok(fact)
    }

    fn skipped(&self) -> SkipCounts {
        self.inner.skipped()
    }

    fn declared_timeline(&self) -> Option<(u64, u64)> {
        self.inner.declared_timeline()
    }

    fn splitting(&self) -> Option<Splitting> {
        self.inner.splitting()
    }

    /// Read on the workers, the progress line counts the bytes handed to them.
    fn raw_blocks(&mut self) -> Option<stgflow_io::stream::blocks::RawBlocks> {
        let (bar, started, read) = (self.bar.clone(), self.started, self.read.clone());
        let raw = self.inner.raw_blocks()?;
        Some(raw.observed(move |_| {
            let read = read.load(Ordering::Relaxed);
            bar.set_position(read);
            let rate = read as f64 / started.elapsed().as_secs_f64().max(1e-9);
            bar.set_message(format!(
                "{:.1} MB read, to the workers, {:.1} MB/s",
                read as f64 / 1e6,
                rate / 1e6
            ));
        }))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    /// The progress line's length is the stream files' size, and what it counts is the
    /// bytes read of them, compressed as they are on disk.
    #[test]
    fn the_progress_line_knows_the_input_size_and_counts_the_bytes_read() {
        let dir = std::env::temp_dir().join(format!("stgflow-progress-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let text: String = (0..5000).map(|t| format!("p(a,{t}).\n")).collect();
        let plain = dir.join("s.facts");
        std::fs::write(&plain, &text).unwrap_or_else(|e| panic!("{e}"));
        let gz = dir.join("s.facts.gz");
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        std::io::Write::write_all(&mut encoder, text.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        let compressed = encoder.finish().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(&gz, &compressed).unwrap_or_else(|e| panic!("{e}"));
        let (plain, gz) = (
            plain.to_string_lossy().into_owned(),
            gz.to_string_lossy().into_owned(),
        );
        let both = [plain.clone(), gz.clone()];
        let size = (text.len() + compressed.len()) as u64;
        assert_eq!(input_size(&both), Some(size));
        assert_eq!(input_size(&[plain.clone(), "-".to_owned()]), None);
        let read = Arc::new(AtomicU64::new(0));
        for stream in &both {
            let (mut input, regular) =
                open_input(stream, Some(&read)).unwrap_or_else(|_| panic!("cannot open {stream}"));
            let mut out = String::new();
            input
                .read_to_string(&mut out)
                .unwrap_or_else(|e| panic!("{e}"));
            assert!(regular && out == text, "{stream} reads as the text");
        }
        assert_eq!(read.load(Ordering::Relaxed), size);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
