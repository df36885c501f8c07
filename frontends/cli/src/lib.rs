//! The `stgflow` command line: `run` evaluates a TD program over streams, `check`
//! validates it and prints what the compiler sees.
//!
//! Exit codes: 0 success, 1 an invalid program, bad input or an I/O failure (the output of
//! every completed time point is written first), 2 a usage error.
//!
//! The command's parts, one file each: [`args`] (the flags), `run`, `check` and
//! `explain` (the commands), `report` (what a run says besides its output); `completions`
//! and `man` print a shell's completion script and the manual page from the same flags.

pub mod args;
mod check;
mod domains;
mod explain;
mod fingerprint;
mod plot;
mod report;
pub mod reserve;
mod run;

use std::collections::HashSet;
use std::ffi::OsString;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::sync::Arc;

use clap::Parser;
use stgflow_io::stream::Formats;
use stgflow_lang::{Compiled, compile_str};

use args::{Cli, Command, formats};

/// What `main` found the process's standard streams to be, and the tables a caller in the
/// same process hands over as streams.
#[derive(Clone, Debug, Default)]
pub struct Streams {
    /// Whether stderr takes colours (a terminal, and `NO_COLOR` unset).
    pub color: bool,
    /// Whether stdout is a regular file: a run's output is then written in pieces ending
    /// on multiples of its buffer's size (`stgflow_io::sink::Buffered`).
    pub stdout_file: bool,
    /// Whether a run's `points`, `changes` or `intervals` output goes to stdout as binary
    /// records (`stgflow_io::sink::records`) rather than text: for a caller in the same
    /// process that reads it back as columns. Other output stays text.
    pub records: bool,
    /// Streams already in memory as Arrow record batches (a caller's tables), each read
    /// where the command line names it as a stream, as an Arrow file's rows would be.
    pub tables: Vec<StreamTable>,
}

/// A table handed over as a stream (see [`Streams::tables`]).
#[derive(Clone, Debug)]
pub struct StreamTable {
    /// The name the command line gives it among the streams (and errors name it by).
    pub name: String,
    pub schema: arrow_schema::SchemaRef,
    pub batches: Vec<arrow_array::RecordBatch>,
}

/// Runs the command line `args`; returns the exit code.
pub fn run(
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
    stdin: impl BufRead,
    mut stdout: impl Write,
    mut stderr: impl Write,
    streams: Streams,
) -> i32 {
    let color = streams.color;
    let cli = match Cli::try_parse_from(bare_h_asks_for_help(args)) {
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
        grounded: Vec::new(),
        printed: Vec::new(),
        longer: Vec::new(),
        ec_timing: cli.ec_timing,
        ec_domains: cli.ec_domains,
        tuple_window: match cli.tuple_window {
            args::TupleWindow::Laser => stgflow_lars::TupleReading::Laser,
            args::TupleWindow::Exact => stgflow_lars::TupleReading::Exact,
        },
        domains: Vec::new(),
        rtec_file: false,
        timeline_start: 0,
        window_after: None,
        stderr: &mut stderr,
        color,
        stdout_file: streams.stdout_file,
        records: streams.records,
        tables: streams.tables,
        quiet: cli.verbosity.quiet,
        verbose: cli.verbosity.verbose,
    };
    let result = match cli.command {
        Command::Run(mut args) => {
            args.background = take_background(&args.program, &mut args.streams);
            context.run(args, stdin, &mut stdout)
        }
        Command::Check(args) => context.check(args, &mut stdout),
        Command::Explain(mut args) => {
            args.background = take_background(&args.program, &mut args.rest);
            context.explain(args, &mut stdout)
        }
        Command::Plot(args) => context.plot(args),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            clap_complete::generate(shell, &mut command, "stgflow", &mut stdout);
            Ok(())
        }
        Command::Man { command } => manual(command.as_deref(), &mut stdout),
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

/// Writes the manual page of stgflow, or of its command `name` (as `stgflow-NAME`).
fn manual(name: Option<&str>, out: &mut impl Write) -> Result<(), Failure> {
    let top = <Cli as clap::CommandFactory>::command();
    let (page, title) = match name {
        None => (top, "stgflow".to_owned()),
        Some(name) => {
            let Some(command) = top.find_subcommand(name) else {
                let known: Vec<String> = top
                    .get_subcommands()
                    .map(|c| c.get_name().to_owned())
                    .collect();
                return Err(Failure::Message(format!(
                    "no command `{name}`; the commands are {}",
                    known.join(", ")
                )));
            };
            let page = command
                .clone()
                .bin_name(format!("stgflow {name}"))
                .version(env!("CARGO_PKG_VERSION"));
            (page, format!("stgflow-{name}"))
        }
    };
    clap_mangen::Man::new(page)
        .title(title)
        .render(out)
        .map_err(|e| Failure::Message(format!("cannot write the manual page: {e}")))
}

pub(crate) enum Failure {
    /// Already printed (diagnostics).
    Reported,
    Message(String),
    /// Already printed; exit with this code (128 + a signal's number).
    Exit(i32),
}

/// What the command is running with: the formats known, where diagnostics go, verbosity.
pub(crate) struct Context<'a> {
    /// The stream formats known: [`formats`], and an `.ec` program's RTEC records (which
    /// `.csv` files are then read as).
    formats: Formats,
    /// An event description's grounded fluent-value pairs (`EcProgram::grounded`), which
    /// `--mode rtec` prints alone of their fluents.
    grounded: Vec<(String, Option<stgflow_lang::value::Value>)>,
    /// How an event description's fluents with compound arguments are written in RTEC's
    /// form (`EcProgram::printed`).
    printed: Vec<(String, stgflow_ec::recognitions::Printed)>,
    /// An event description's fluents kept by `intDurGreater`, with their durations in
    /// time points (`EcProgram::longer`): `--mode rtec` writes their intervals from
    /// their starts.
    longer: Vec<(String, u32)>,
    /// `--ec-timing`, if given.
    ec_timing: Option<args::EcTiming>,
    /// `--ec-domains`, if given.
    ec_domains: Option<args::EcDomains>,
    /// `--tuple-window`.
    tuple_window: stgflow_lars::TupleReading,
    /// An event description's dynamic domains (`EcProgram::domains`), for reading them
    /// ahead from the stream files.
    domains: Vec<stgflow_ec::translate::DomainRule>,
    /// Whether the program is in RTEC's own files (`.prolog`, `.pl`).
    rtec_file: bool,
    /// The first time point of the timeline (`--from`, in time points): an event
    /// description's background knowledge holds from it.
    timeline_start: u64,
    /// `--window rtec`: RTEC's records at this time (in input units) or before are not read.
    window_after: Option<u64>,
    stderr: &'a mut dyn Write,
    color: bool,
    /// [`Streams::stdout_file`].
    stdout_file: bool,
    /// [`Streams::records`].
    records: bool,
    /// [`Streams::tables`].
    tables: Vec<StreamTable>,
    quiet: bool,
    verbose: bool,
}

impl Context<'_> {
    /// The table handed over as the stream `name`, if one was.
    pub(crate) fn table(&self, name: &str) -> Option<&StreamTable> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// Whether the stream `name` is columnar: a table handed over, or a Parquet or Arrow
    /// file.
    pub(crate) fn is_columnar(&self, name: &str) -> bool {
        self.table(name).is_some() || stgflow_io::stream::columnar::is_columnar(name)
    }

    /// Compiles the program at `path`; `background` are more files of it (only an event
    /// description has them: RTEC's background knowledge).
    pub(crate) fn compile(
        &mut self,
        path: &std::path::Path,
        background: &[PathBuf],
    ) -> Result<Compiled, Failure> {
        let name = path.display().to_string();
        let text = read_program(path)?;
        let compiled = if is_event_description(path) {
            let mut files = vec![(name.clone(), text)];
            for more in background {
                files.push((more.display().to_string(), read_program(more)?));
            }
            let files: Vec<(&str, &str)> = files
                .iter()
                .map(|(n, t)| (n.as_str(), t.as_str()))
                .collect();
            let rtec_file = path
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("prolog") || e.eq_ignore_ascii_case("pl"));
            let timing = match self.ec_timing {
                Some(args::EcTiming::Rtec) => stgflow_ec::Timing::Rtec,
                Some(args::EcTiming::Paper) => stgflow_ec::Timing::Paper,
                None if rtec_file => stgflow_ec::Timing::Rtec,
                None => stgflow_ec::Timing::Paper,
            };
            let options = stgflow_ec::Options {
                timing,
                start: self.timeline_start,
            };
            let mut loaded: HashSet<PathBuf> = std::iter::once(path)
                .chain(background.iter().map(PathBuf::as_path))
                .filter_map(|p| p.canonicalize().ok())
                .collect();
            let ec = stgflow_ec::compile_files_loading(&files, options, &mut |from, file| {
                load_consulted(&mut loaded, from, file)
            });
            self.formats
                .register(Arc::new(ec.records(true).after(self.window_after)));
            self.grounded = ec.grounded;
            self.printed = ec.printed;
            self.longer = ec.longer;
            self.domains = ec.domains;
            self.rtec_file = rtec_file;
            ec.compiled
        } else if let Some(more) = background.first() {
            return Err(Failure::Message(format!(
                "{}: only an event description (`.ec`, `.prolog`, `.pl`) is given in several files; {name} is not one",
                more.display()
            )));
        } else if is_lars_program(path) {
            stgflow_lars::compile_str_reading(&name, &text, self.tuple_window)
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
}

/// Whether `path` is a plain LARS program (`.lars`, Laser's syntax).
fn is_lars_program(path: &std::path::Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("lars"))
}

/// `-h` is timely's `--hostfile FILE` on `run`; given bare (last, or before another
/// flag) it asks for help there too, as it does everywhere else, instead of failing for
/// the file it lacks.
fn bare_h_asks_for_help(
    args: impl IntoIterator<Item = impl Into<OsString> + Clone>,
) -> Vec<OsString> {
    let mut args: Vec<OsString> = args.into_iter().map(Into::into).collect();
    for i in 0..args.len() {
        let next_is_a_value = args
            .get(i + 1)
            .is_some_and(|next| !next.to_string_lossy().starts_with('-'));
        if args[i] == "-h" && !next_is_a_value {
            args[i] = OsString::from("--help");
        }
    }
    args
}

/// Whether `path` is an Event Calculus description in RTEC's syntax (`.ec`, or RTEC's
/// own `.prolog` and `.pl` files).
fn is_event_description(path: &std::path::Path) -> bool {
    path.extension().is_some_and(|e| {
        ["ec", "prolog", "pl"]
            .iter()
            .any(|known| e.eq_ignore_ascii_case(known))
    })
}

/// The leading entries of `rest` that are more files of the event description `program`
/// (RTEC's background knowledge), taken out of `rest`; none for other programs.
pub(crate) fn take_background(program: &std::path::Path, rest: &mut Vec<String>) -> Vec<PathBuf> {
    if !is_event_description(program) {
        return Vec::new();
    }
    let more = rest
        .iter()
        .take_while(|s| is_event_description(std::path::Path::new(s)))
        .count();
    rest.drain(..more).map(PathBuf::from).collect()
}

/// The file that a directive of the event description `from` loads (`:-
/// ['areas.prolog'].`), as Prolog finds it: a relative path from `from`'s folder, with
/// `.pl` or `.prolog` added where the name as written is no file; `None` where it was
/// loaded before (`loaded`).
fn load_consulted(
    loaded: &mut HashSet<PathBuf>,
    from: &str,
    file: &str,
) -> Result<Option<(String, String)>, String> {
    let folder = std::path::Path::new(from)
        .parent()
        .unwrap_or(std::path::Path::new(""));
    let written = folder.join(file);
    let found = std::iter::once(written.clone())
        .chain(["pl", "prolog"].map(|extension| folder.join(format!("{file}.{extension}"))))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| {
            format!(
                "no file {} (nor with `.pl` or `.prolog`)",
                written.display()
            )
        })?;
    let key = found
        .canonicalize()
        .map_err(|e| format!("{}: {e}", found.display()))?;
    if !loaded.insert(key) {
        return Ok(None);
    }
    let text = read_text(&found)?;
    Ok(Some((found.display().to_string(), text)))
}

/// A program file's text; an error names where the file stops being UTF-8.
fn read_program(path: &std::path::Path) -> Result<String, Failure> {
    read_text(path).map_err(Failure::Message)
}

/// A program file's text, or what keeps it from being read: the file's name, and where
/// it is not UTF-8.
fn read_text(path: &std::path::Path) -> Result<String, String> {
    let name = path.display().to_string();
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read {name}: {e}"))?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line = valid.iter().filter(|&&b| b == b'\n').count() + 1;
        let line_start = valid.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let column = String::from_utf8_lossy(&valid[line_start..])
            .chars()
            .count()
            + 1;
        format!(
            "{name}:{line}:{column}: invalid UTF-8 (byte {}); programs must be UTF-8 text",
            valid.len()
        )
    })
}

pub(crate) fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
