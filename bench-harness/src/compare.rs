//! `stgflow-bench compare`: stgflow and peer reasoners on the same program and stream,
//! outputs normalised and diffed, time and memory side by side.
//!
//! A peer is a shell command template, `NAME=CMD`, in which `{program}` is replaced by
//! the peer's program (`--peer-program NAME=FILE`, else the stgflow program) and
//! `{stream}` by the stream converted to the peer's format (`{stream0}`, `{stream1}`, …
//! name the files one by one). A peer can be given its own input instead
//! (`--peer-stream NAME=FILE`, repeatable), e.g. RTEC's own data files, which stgflow
//! reads too; conversion needs the stgflow stream to be one TD file. The peer's *kind*
//! says how to convert and how to read what it prints:
//!
//! * `laser` — input as a Laser stream file (`#timeline A B`, `t: p(a,b) s`); output as
//!   Laser prints it, `t: atom atom …` per time point. stgflow runs with `--mode points`
//!   and `p(a,b,7).` becomes the pair (7, `p(a,b)`).
//! * `rtec` — input as RTEC pipe-separated events (`p|T|T|a|b`); output as maximal
//!   intervals, one fluent-value pair per line: `F=V` followed by its intervals, written
//!   `[(S,E),…]` or `[[S,E],…]`, or RTEC's recognitions file,
//!   `recognitions(App,f,[[a],v],[(S,E),…]).`. stgflow runs with `--mode intervals`, and
//!   `f(a,v) [S,E)` is compared with `f(a)=v` holding over (S,E): the value becomes the
//!   last argument.
//!
//! * `td` — input stgflow's own TD streams; output TD facts `p(a,b,7).` (what holds at
//!   each time point), compared with stgflow's `--mode points`.
//! * `csv` — input the stream as CSV lines `time,pred,arg…`; output the same shape (a
//!   `time,pred…` header skipped), compared with stgflow's `--mode points`.
//!
//! Output lines a kind does not read as answers (past its known chatter) are counted and
//! reported with the first of them, not dropped silently; differences are listed in time
//! order.
//!
//! The kind defaults to the peer's name when that is `laser` or `rtec`
//! (`--peer-kind NAME=KIND` otherwise). Outputs are compared as sets; the exit code is 0
//! when every peer agrees with stgflow and 1 when one differs, like `diff`.
//!
//! Pitfall: a peer is timed as a whole, interpreter start-up and program loading
//! included (PyPy's JIT warm-up for Laser, SWI-Prolog's compilation for RTEC); stgflow is
//! timed the same way, so the ratios compare what a user waits for, not inner loops.

use std::collections::BTreeSet;
use std::ffi::OsString;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use anyhow::{Context, anyhow, bail};
use stgflow_datasets::convert::{self, Format};

use crate::measure::{Usage, Wrapper};

/// How a peer reads streams and prints answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Laser,
    Rtec,
    Td,
    Csv,
}

impl std::str::FromStr for Kind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "laser" => Ok(Kind::Laser),
            "rtec" => Ok(Kind::Rtec),
            "td" => Ok(Kind::Td),
            "csv" => Ok(Kind::Csv),
            _ => Err(format!(
                "unknown peer kind `{s}` (expected laser, rtec, td or csv)"
            )),
        }
    }
}

impl Kind {
    /// The stgflow output mode a peer of this kind is compared with.
    fn mode(self) -> &'static str {
        match self {
            Kind::Rtec => "intervals",
            Kind::Laser | Kind::Td | Kind::Csv => "points",
        }
    }
}

/// A peer reasoner.
#[derive(Clone, Debug)]
pub struct Peer {
    pub name: String,
    pub kind: Kind,
    /// The command template, with `{program}` and `{stream}`.
    pub command: String,
    pub program: Option<PathBuf>,
    /// The peer's own input files; empty: the stgflow stream, converted.
    pub streams: Vec<PathBuf>,
}

/// What to compare.
#[derive(Clone, Debug)]
pub struct Comparison {
    pub stgflow: PathBuf,
    pub program: PathBuf,
    /// stgflow's input files (one TD file when a peer's input is converted from it).
    pub streams: Vec<PathBuf>,
    /// Extra `stgflow run` arguments (e.g. `-w 2`).
    pub stgflow_args: Vec<OsString>,
    pub peers: Vec<Peer>,
    pub repeat: usize,
    /// Compare only predicates both sides print (a peer may print helper fluents that
    /// stgflow's program does not output, or the other way round).
    pub common_only: bool,
    /// Converted streams and raw outputs go here.
    pub out: PathBuf,
}

/// One system's result.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub name: String,
    /// Median over the repeats.
    pub usage: Usage,
    /// The normalised answers.
    pub answers: BTreeSet<String>,
    /// Against stgflow (`None` for stgflow itself).
    pub diff: Option<Diff>,
    /// Lines of the output that were neither answers nor known chatter, and the first.
    pub unread: Unread,
}

/// Output lines not read as answers.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Unread {
    pub lines: usize,
    pub first: Option<String>,
}

impl Unread {
    fn add(&mut self, line: &str) {
        self.lines += 1;
        self.first.get_or_insert_with(|| line.trim().to_owned());
    }
}

/// Answers one side has and the other has not.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diff {
    pub only_peer: Vec<String>,
    pub only_stgflow: Vec<String>,
}

impl Diff {
    /// The answers each side has alone, each list in time order (an answer's time is its
    /// leading `t:` or, for an interval, its start).
    pub fn between(stgflow: &BTreeSet<String>, peer: &BTreeSet<String>) -> Diff {
        let in_time_order = |mut answers: Vec<String>| {
            answers.sort_by_cached_key(|a| (time_of(a), a.clone()));
            answers
        };
        Diff {
            only_peer: in_time_order(peer.difference(stgflow).cloned().collect()),
            only_stgflow: in_time_order(stgflow.difference(peer).cloned().collect()),
        }
    }

    pub fn is_equal(&self) -> bool {
        self.only_peer.is_empty() && self.only_stgflow.is_empty()
    }
}

/// A normalised answer's time: `7: p(a)` → 7, `f(a,v) 3 5` → 3 (its start).
fn time_of(answer: &str) -> u64 {
    match answer.split_once(": ") {
        Some((time, _)) if time.bytes().all(|b| b.is_ascii_digit()) => time.parse().unwrap_or(0),
        _ => answer
            .rsplit(' ')
            .nth(1)
            .and_then(|start| start.parse().ok())
            .unwrap_or(0),
    }
}

/// Runs stgflow and every peer; the first outcome is stgflow's.
/// Over 100 lines: each peer's run (input, command, answer) in turn, side by side.
pub fn run(comparison: &Comparison, wrapper: &Wrapper) -> anyhow::Result<Vec<Outcome>> {
    if comparison.repeat == 0 {
        bail!("--repeat must be at least 1");
    }
    for dir in [&comparison.out, &wrapper.scratch] {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let kinds: BTreeSet<Kind> = comparison.peers.iter().map(|p| p.kind).collect();
    let mut outcomes = Vec::new();
    // stgflow once per output mode the peers need (intervals for RTEC, points otherwise).
    let mut stgflow_answers = Vec::new();
    for kind in kinds
        .iter()
        .copied()
        .chain(comparison.peers.is_empty().then_some(Kind::Laser))
    {
        // Peers of kinds compared with the same output share one stgflow run.
        if stgflow_answers.iter().any(|(mode, _)| *mode == kind.mode()) {
            continue;
        }
        let mode = kind.mode();
        let mut args: Vec<OsString> = vec!["run".into(), comparison.program.clone().into()];
        args.extend(comparison.streams.iter().map(|s| s.as_os_str().to_owned()));
        args.extend(["--mode".into(), mode.into(), "-q".into()]);
        args.extend(comparison.stgflow_args.iter().cloned());
        let output = comparison.out.join(format!("stgflow.{mode}.out"));
        let usage = timed(comparison, wrapper, &comparison.stgflow, &args, &output)?;
        let text = read(&output)?;
        let answers = match kind {
            Kind::Rtec => normalise_stgflow_intervals(&text)?,
            Kind::Laser | Kind::Td | Kind::Csv => normalise_stgflow_points(&text)?,
        };
        if outcomes.is_empty() {
            outcomes.push(Outcome {
                name: "stgflow".into(),
                usage,
                answers: answers.clone(),
                diff: None,
                unread: Unread::default(),
            });
        }
        stgflow_answers.push((kind.mode(), answers));
    }
    for peer in &comparison.peers {
        let streams = match (peer.streams.is_empty(), peer.kind) {
            (false, _) => peer.streams.clone(),
            (true, Kind::Laser) => vec![convert_stream(comparison, Format::Laser, "laser")?],
            (true, Kind::Rtec) => vec![convert_stream(comparison, Format::Rtec, "rtec")?],
            // A TD peer reads stgflow's own streams.
            (true, Kind::Td) => comparison.streams.clone(),
            (true, Kind::Csv) => vec![csv_stream(comparison)?],
        };
        let program = peer.program.as_ref().unwrap_or(&comparison.program);
        let mut command = peer
            .command
            .replace("{program}", &shell_quote(program))
            .replace(
                "{stream}",
                &streams
                    .iter()
                    .map(|s| shell_quote(s))
                    .collect::<Vec<_>>()
                    .join(" "),
            );
        for (i, stream) in streams.iter().enumerate() {
            command = command.replace(&format!("{{stream{i}}}"), &shell_quote(stream));
        }
        let output = comparison.out.join(format!("{}.out", peer.name));
        let args: Vec<OsString> = vec!["-c".into(), command.into()];
        let usage = timed(comparison, wrapper, Path::new("/bin/sh"), &args, &output)
            .with_context(|| format!("running peer `{}`", peer.name))?;
        let text = read(&output)?;
        let mut unread = Unread::default();
        let answers = match peer.kind {
            Kind::Laser => normalise_laser_counting(&text, &mut unread),
            Kind::Rtec => normalise_rtec_counting(&text, &mut unread),
            Kind::Td => Ok(normalise_td_counting(&text, &mut unread)),
            Kind::Csv => Ok(normalise_csv_counting(&text, &mut unread)),
        }
        .with_context(|| {
            format!(
                "reading the output of peer `{}` ({})",
                peer.name,
                output.display()
            )
        })?;
        let reference = stgflow_answers
            .iter()
            .find(|(mode, _)| *mode == peer.kind.mode())
            .map(|(_, answers)| answers)
            .ok_or_else(|| anyhow!("no stgflow run for kind {:?}", peer.kind))?;
        let diff = if comparison.common_only {
            let (ours, theirs) = common_predicates(reference, &answers);
            Diff::between(&ours, &theirs)
        } else {
            Diff::between(reference, &answers)
        };
        outcomes.push(Outcome {
            name: peer.name.clone(),
            usage,
            diff: Some(diff),
            answers,
            unread,
        });
    }
    Ok(outcomes)
}

/// The predicate of a normalised answer: `7: p(a)` → `p`, `f(a,v) 3 5` → `f`.
fn predicate(answer: &str) -> &str {
    let atom = match answer.split_once(": ") {
        Some((time, atom)) if time.bytes().all(|b| b.is_ascii_digit()) => atom,
        _ => answer,
    };
    atom.split(['(', ' ']).next().unwrap_or(atom)
}

/// Both answer sets restricted to the predicates that occur in both.
fn common_predicates(
    ours: &BTreeSet<String>,
    theirs: &BTreeSet<String>,
) -> (BTreeSet<String>, BTreeSet<String>) {
    let names = |set: &BTreeSet<String>| -> BTreeSet<String> {
        set.iter().map(|a| predicate(a).to_owned()).collect()
    };
    let shared: BTreeSet<String> = names(ours).intersection(&names(theirs)).cloned().collect();
    let keep = |set: &BTreeSet<String>| -> BTreeSet<String> {
        set.iter()
            .filter(|a| shared.contains(predicate(a)))
            .cloned()
            .collect()
    };
    (keep(ours), keep(theirs))
}

/// Converts stgflow's one TD stream to a peer's format in the output directory.
fn convert_stream(
    comparison: &Comparison,
    format: Format,
    extension: &str,
) -> anyhow::Result<PathBuf> {
    let [stream] = comparison.streams.as_slice() else {
        bail!(
            "converting the input for a peer needs exactly one TD stream (or give the peer its own with --peer-stream)"
        );
    };
    let text = std::fs::read_to_string(stream)
        .with_context(|| format!("cannot read {}", stream.display()))?;
    not_td(stream, &text)?;
    let converted = comparison.out.join(format!("stream.{extension}"));
    let file = std::fs::File::create(&converted)
        .with_context(|| format!("cannot create {}", converted.display()))?;
    convert::convert_td(&text, format, None, std::io::BufWriter::new(file))
        .with_context(|| format!("converting {}", stream.display()))?;
    Ok(converted)
}

/// An error that says what to do when stgflow's `stream`, to be converted for a peer, is
/// a Laser or CSV stream rather than TD (stgflow reads those, the conversion does not).
fn not_td(stream: &Path, text: &str) -> anyhow::Result<()> {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let laser = first.starts_with("#timeline")
        || first
            .split_once(':')
            .is_some_and(|(t, _)| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()));
    let ending = stream.extension().and_then(|e| e.to_str()).unwrap_or("");
    let kind = match ending {
        "laser" => Some("a Laser stream"),
        "csv" => Some("a CSV stream"),
        _ if laser => Some("a Laser stream"),
        _ => None,
    };
    match kind {
        Some(kind) => bail!(
            "{} is {kind}, and only a TD stream is converted for a peer: give the peer its own input with --peer-stream NAME={} (stgflow reads it as --stream)",
            stream.display(),
            stream.display()
        ),
        None => Ok(()),
    }
}

/// Runs a command `repeat` times with stdout to `output`; the median usage.
fn timed(
    comparison: &Comparison,
    wrapper: &Wrapper,
    program: &Path,
    args: &[OsString],
    output: &Path,
) -> anyhow::Result<Usage> {
    let mut runs = Vec::new();
    for _ in 0..comparison.repeat {
        let file = std::fs::File::create(output)
            .with_context(|| format!("cannot create {}", output.display()))?;
        let usage = wrapper
            .spawn(program, args, Stdio::null(), file.into(), Stdio::piped())?
            .finish()?;
        runs.push(usage);
    }
    Usage::median(&runs).context("no run (`--repeat 0`)")
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

fn shell_quote(path: &Path) -> String {
    format!("'{}'", path.display().to_string().replace('\'', r"'\''"))
}

/// `p(a,b,7).` lines → `7: p(a,b)`; 0-ary `s(7).` → `7: s`.
pub fn normalise_stgflow_points(text: &str) -> anyhow::Result<BTreeSet<String>> {
    let mut answers = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let facts =
            convert::parse_td(line).map_err(|e| anyhow!("stgflow output line {}: {e}", n + 1))?;
        for fact in facts {
            answers.insert(laser_answer(fact.time, fact.pred, &fact.args));
        }
    }
    Ok(answers)
}

fn laser_answer(time: u64, pred: &str, args: &[&str]) -> String {
    if args.is_empty() {
        format!("{time}: {pred}")
    } else {
        format!("{time}: {pred}({})", args.join(","))
    }
}

/// Laser's `t: a b c` lines → `t: a`, `t: b`, `t: c`. Atoms are taken as printed, with
/// spaces after commas removed; other lines (headers, timing) are ignored.
pub fn normalise_laser(text: &str) -> anyhow::Result<BTreeSet<String>> {
    normalise_laser_counting(text, &mut Unread::default())
}

/// [`normalise_laser`], counting in `unread` the lines that are neither answers nor
/// Laser's known chatter (blank lines, `#` headers, its timing lines).
fn normalise_laser_counting(text: &str, unread: &mut Unread) -> anyhow::Result<BTreeSet<String>> {
    let mut answers = BTreeSet::new();
    for line in text.lines() {
        let chatter = |line: &str| {
            let line = line.trim();
            line.is_empty() || line.starts_with('#') || line.starts_with("took ")
        };
        let Some((time, atoms)) = line.split_once(':') else {
            if !chatter(line) {
                unread.add(line);
            }
            continue;
        };
        let Ok(time) = time.trim().parse::<u64>() else {
            if !chatter(line) {
                unread.add(line);
            }
            continue;
        };
        for atom in split_atoms(atoms) {
            answers.insert(format!("{time}: {atom}"));
        }
    }
    Ok(answers)
}

/// Splits `p(a, b) q(c) s` into atoms at spaces outside parentheses, dropping the spaces
/// inside.
fn split_atoms(text: &str) -> Vec<String> {
    let mut atoms = Vec::new();
    let mut atom = String::new();
    let mut depth = 0usize;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ => {}
        }
        if c.is_whitespace() {
            if depth == 0 && !atom.is_empty() {
                atoms.push(std::mem::take(&mut atom));
            }
            continue;
        }
        atom.push(c);
    }
    if !atom.is_empty() {
        atoms.push(atom);
    }
    atoms
}

/// A TD peer's output, `p(a,b,7).` facts (several per line allowed), → `7: p(a,b)`; a
/// line that does not parse is counted in `unread`.
fn normalise_td_counting(text: &str, unread: &mut Unread) -> BTreeSet<String> {
    let mut answers = BTreeSet::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match convert::parse_td(line) {
            Ok(facts) => {
                for fact in facts {
                    answers.insert(laser_answer(fact.time, fact.pred, &fact.args));
                }
            }
            Err(_) => unread.add(line),
        }
    }
    answers
}

/// A CSV peer's output, `time,pred,arg…` lines (a `time,pred…` header skipped), →
/// `7: p(a,b)`; a line without a time and a predicate is counted in `unread`.
fn normalise_csv_counting(text: &str, unread: &mut Unread) -> BTreeSet<String> {
    let mut answers = BTreeSet::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        match fields.as_slice() {
            [time, pred, args @ ..] if !pred.is_empty() => match time.parse::<u64>() {
                Ok(time) => {
                    answers.insert(laser_answer(time, pred, args));
                }
                Err(_) if *time == "time" => {}
                Err(_) => unread.add(line),
            },
            _ => unread.add(line),
        }
    }
    answers
}

/// stgflow's one TD stream as CSV (`time,pred,arg…`), for a CSV peer.
fn csv_stream(comparison: &Comparison) -> anyhow::Result<PathBuf> {
    let [stream] = comparison.streams.as_slice() else {
        bail!("a CSV peer without --peer-stream needs stgflow's stream to be one TD file");
    };
    let text = read(stream)?;
    not_td(stream, &text)?;
    let facts = convert::parse_td(&text).map_err(|e| anyhow!("{}: {e}", stream.display()))?;
    let mut csv = String::new();
    for fact in facts {
        let _ = write!(csv, "{},{}", fact.time, fact.pred);
        for arg in &fact.args {
            let _ = write!(csv, ",{arg}");
        }
        csv.push('\n');
    }
    let path = comparison.out.join("stream.csv");
    std::fs::write(&path, csv).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

/// stgflow's `f(a,v) [S,E)` lines → `f(a,v) S E`.
pub fn normalise_stgflow_intervals(text: &str) -> anyhow::Result<BTreeSet<String>> {
    let mut answers = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let (atom, interval) = line
            .rsplit_once(" [")
            .ok_or_else(|| anyhow!("stgflow output line {}: expected `atom [S,E)`", n + 1))?;
        let (start, end) = interval
            .trim_end_matches(')')
            .split_once(',')
            .ok_or_else(|| anyhow!("stgflow output line {}: expected `[S,E)`", n + 1))?;
        answers.insert(format!(
            "{} {} {}",
            atom.replace(' ', ""),
            start.trim(),
            end.trim()
        ));
    }
    Ok(answers)
}

/// RTEC-style `f(a)=v` + intervals `[(S,E),…]` or `[[S,E],…]` → `f(a,v) S E` per
/// interval; lines without `=` are ignored.
pub fn normalise_rtec(text: &str) -> anyhow::Result<BTreeSet<String>> {
    normalise_rtec_counting(text, &mut Unread::default())
}

/// [`normalise_rtec`], counting in `unread` the non-blank lines that hold no intervals.
fn normalise_rtec_counting(text: &str, unread: &mut Unread) -> anyhow::Result<BTreeSet<String>> {
    let mut answers = BTreeSet::new();
    for (n, line) in text.lines().enumerate() {
        if let Some(rest) = line.trim().strip_prefix("recognitions(") {
            insert_recognitions(rest, n + 1, &mut answers)?;
            continue;
        }
        let Some(list_at) = line.find('[') else {
            if !line.trim().is_empty() {
                unread.add(line);
            }
            continue;
        };
        let head = line[..list_at].trim().trim_end_matches([':', ',']).trim();
        let head = head.strip_prefix("holdsFor(").unwrap_or(head);
        let Some((fluent, value)) = head.rsplit_once('=') else {
            unread.add(line);
            continue;
        };
        let fluent = fluent.replace(' ', "");
        let value = value.trim();
        let atom = match fluent.strip_suffix(')') {
            Some(open) => format!("{open},{value})"),
            None => format!("{fluent}({value})"),
        };
        let numbers: Vec<&str> = line[list_at..]
            .split(|c: char| !(c.is_ascii_alphanumeric()))
            .filter(|s| !s.is_empty())
            .collect();
        if numbers.len() % 2 != 0 {
            bail!("line {}: an odd number of interval ends", n + 1);
        }
        for pair in numbers.chunks(2) {
            answers.insert(format!("{atom} {} {}", pair[0], pair[1]));
        }
    }
    Ok(answers)
}

/// `App,f,[[a,b],v],[(S,E),…]).` (RTEC's recognitions file, after `recognitions(`) →
/// `f(a,b,v) S E` per interval; an open end (`inf`) is kept as the word.
fn insert_recognitions(
    rest: &str,
    line: usize,
    answers: &mut BTreeSet<String>,
) -> anyhow::Result<()> {
    let malformed =
        || anyhow!("line {line}: expected `recognitions(App,f,[[args],value],[(S,E),…]).`");
    let (_, rest) = rest.split_once(',').ok_or_else(malformed)?;
    let (name, rest) = rest.split_once(",[[").ok_or_else(malformed)?;
    let (args, rest) = rest.split_once("],").ok_or_else(malformed)?;
    let (value, intervals) = rest.split_once("],").ok_or_else(malformed)?;
    let mut fields: Vec<&str> = args
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .collect();
    fields.push(value.trim());
    let atom = format!("{}({})", name.trim(), fields.join(","));
    let ends: Vec<&str> = intervals
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|s| !s.is_empty())
        .collect();
    if ends.len() % 2 != 0 {
        return Err(malformed());
    }
    for pair in ends.chunks(2) {
        answers.insert(format!("{atom} {} {}", pair[0], pair[1]));
    }
    Ok(())
}

/// The side-by-side table (markdown), with ratios against stgflow and each diff's first
/// lines.
pub fn table(outcomes: &[Outcome]) -> String {
    let mut text = String::from(
        "| system | wall s | CPU s | peak RSS MiB | wall vs stgflow | answers | output |\n|---|---:|---:|---:|---:|---:|---|\n",
    );
    let base = outcomes
        .first()
        .map_or(1.0, |o| o.usage.wall.as_secs_f64().max(1e-9));
    for outcome in outcomes {
        let verdict = match &outcome.diff {
            None => "reference".to_owned(),
            Some(diff) if diff.is_equal() => "equal".to_owned(),
            Some(diff) => format!(
                "DIFFERS: {} only in {}, {} only in stgflow",
                diff.only_peer.len(),
                outcome.name,
                diff.only_stgflow.len()
            ),
        };
        let _ = writeln!(
            text,
            "| {} | {:.3} | {:.3} | {:.1} | {:.2}× | {} | {verdict} |",
            outcome.name,
            outcome.usage.wall.as_secs_f64(),
            outcome.usage.cpu.as_secs_f64(),
            outcome.usage.peak_rss_kib as f64 / 1024.0,
            outcome.usage.wall.as_secs_f64() / base,
            outcome.answers.len(),
        );
    }
    for outcome in outcomes.iter().filter(|o| o.unread.lines > 0) {
        let _ = writeln!(
            text,
            "\n`{}` printed {} line(s) that were not read as answers; the first: `{}`",
            outcome.name,
            outcome.unread.lines,
            outcome.unread.first.as_deref().unwrap_or("")
        );
    }
    for outcome in outcomes {
        let Some(diff) = outcome.diff.as_ref().filter(|d| !d.is_equal()) else {
            continue;
        };
        let _ = writeln!(
            text,
            "\n`{}` against stgflow (first 10 each, in time order):",
            outcome.name
        );
        for answer in diff.only_peer.iter().take(10) {
            let _ = writeln!(text, "    > {answer}");
        }
        for answer in diff.only_stgflow.iter().take(10) {
            let _ = writeln!(text, "    < {answer}");
        }
    }
    text
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn laser_lines_and_stgflow_points_meet() {
        let ours = normalise_stgflow_points("q(1,2,0).\nalarm(2).\nq(3,4,2).\n").unwrap();
        let theirs =
            normalise_laser("#timeline 0 2\n0: q(1, 2)\n1:\n2: alarm q(3,4)\ntook 3 ms\n").unwrap();
        assert_eq!(ours, set(&["0: q(1,2)", "2: alarm", "2: q(3,4)"]));
        assert_eq!(ours, theirs);
    }

    #[test]
    fn rtec_intervals_and_stgflow_intervals_meet() {
        let ours = normalise_stgflow_intervals(
            "moving(id1,id2,true) [10,20)\nmoving(id1,id2,true) [30,31)\n",
        )
        .unwrap();
        let theirs =
            normalise_rtec("holdsFor(moving(id1, id2)=true, [(10,20),(30,31)]).\n").unwrap();
        assert_eq!(
            ours,
            set(&["moving(id1,id2,true) 10 20", "moving(id1,id2,true) 30 31"])
        );
        assert_eq!(ours, theirs);
        let nested = normalise_rtec("moving(id1,id2)=true: [[10,20],[30,31]]\n").unwrap();
        assert_eq!(nested, theirs);
        let recognitions =
            normalise_rtec("recognitions(caviar,moving,[[id1,id2],true],[(10,20),(30,31)]).\n")
                .unwrap();
        assert_eq!(recognitions, theirs);
        assert!(normalise_rtec("f=v [(1,2),(3)]").is_err());
    }

    #[test]
    fn common_predicates_drop_what_one_side_never_prints() {
        assert_eq!(predicate("7: p(a,b)"), "p");
        assert_eq!(predicate("7: alarm"), "alarm");
        assert_eq!(predicate("f(a,v) 3 5"), "f");
        let (ours, theirs) = common_predicates(
            &set(&["f(a,v) 1 2", "g(a,v) 1 2"]),
            &set(&["f(a,v) 1 3", "helper(a,v) 0 9"]),
        );
        assert_eq!(ours, set(&["f(a,v) 1 2"]));
        assert_eq!(theirs, set(&["f(a,v) 1 3"]));
    }

    #[test]
    fn td_and_csv_peers_meet_stgflow_points_and_count_what_they_cannot_read() {
        let ours = normalise_stgflow_points("q(1,2,0).\nalarm(2).\n").unwrap();
        let mut unread = Unread::default();
        let td = normalise_td_counting("q(1, 2, 0). alarm(2).\nwarming up\n", &mut unread);
        assert_eq!((td, unread.lines), (ours.clone(), 1));
        assert_eq!(unread.first.as_deref(), Some("warming up"));
        let mut unread = Unread::default();
        let csv = normalise_csv_counting("time,pred,a,b\n0,q,1,2\n2,alarm\noops\n", &mut unread);
        assert_eq!((csv, unread.lines), (ours, 1));
        let mut unread = Unread::default();
        let laser = normalise_laser_counting(
            "#timeline 0 2\n0: q(1,2)\nerror: boom\ntook 3 ms\n",
            &mut unread,
        );
        assert_eq!((laser.unwrap().len(), unread.lines), (1, 1));
        let mut unread = Unread::default();
        normalise_rtec_counting("moving(a)=true: [[1,2]]\n% some warning\n", &mut unread).unwrap();
        assert_eq!(unread.lines, 1);
    }

    #[test]
    fn a_laser_or_csv_stream_to_convert_points_at_peer_stream() {
        let laser = not_td(Path::new("s.txt"), "#timeline 0 9\n0: p(a)\n").unwrap_err();
        assert!(
            laser.to_string().contains("a Laser stream")
                && laser.to_string().contains("--peer-stream NAME=s.txt")
        );
        assert!(not_td(Path::new("s"), "3: p(a)\n").is_err());
        assert!(
            not_td(Path::new("s.csv"), "3,p,a\n")
                .unwrap_err()
                .to_string()
                .contains("a CSV stream")
        );
        assert!(not_td(Path::new("s.facts"), "p(a, 3).\n").is_ok());
    }

    #[test]
    fn diffs_are_listed_in_time_order() {
        let diff = Diff::between(
            &set(&["10: p", "2: p", "f(a) 11 12", "f(a) 3 4"]),
            &BTreeSet::new(),
        );
        assert_eq!(
            diff.only_stgflow,
            ["2: p", "f(a) 3 4", "10: p", "f(a) 11 12"]
        );
    }

    #[test]
    fn diffs_name_both_sides() {
        let diff = Diff::between(&set(&["a", "b"]), &set(&["b", "c"]));
        assert_eq!(diff.only_peer, vec!["c"]);
        assert_eq!(diff.only_stgflow, vec!["a"]);
        assert!(!diff.is_equal());
        assert!(Diff::between(&set(&["a"]), &set(&["a"])).is_equal());
    }

    #[test]
    fn shell_quoting_survives_quotes() {
        assert_eq!(shell_quote(Path::new("/tmp/it's")), r"'/tmp/it'\''s'");
    }
}
