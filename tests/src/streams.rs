//! Generated streams as the readers meet them in files: a case's stream with lines the
//! program does not know, lines of a wrong arity, comments and up to two errors (a time
//! going back, a malformed line), dealt out over 1–3 files that each stay in time order;
//! and timelines cut by `--from`/`--until`.

use stgflow_io::drive::Timeline;

use crate::generate::Rng;

/// The time a generated stream line is at (its last argument).
pub fn time_of(line: &str) -> u64 {
    let inner = line.trim_end_matches(['.', ')']);
    let last = inner.rsplit([',', '(']).next().unwrap_or("0");
    last.trim().parse().unwrap_or(0)
}

/// The most time points [`stretched`] puts between two of `program`'s `stream`: 10⁵, or
/// 10² where its facts may change at every time point on their own (on every path, a
/// stretch then costs its length): a rule reads the time as a value, `check` names one
/// (W003), or the reference evaluator, run on through 64 quiet time points after the
/// stream, still finds changes past its last event and the generated programs' reach.
pub fn sparse_gap(program: &str, stream: &str) -> u64 {
    const SMALL: u64 = 100;
    let compiled = stgflow_lang::compile_str("generated.tdl", program);
    let ticking = compiled.diagnostics.iter().any(|d| d.code == "W003");
    if ticking || compiled.program.rules.iter().any(|rule| rule.reads_time()) {
        return SMALL;
    }
    let last = stream.lines().map(time_of).max().unwrap_or(0);
    let timeline = Timeline {
        from: None,
        until: Some(last + 64),
    };
    let mode = (true, stgflow_io::sink::Mode::Changes);
    let changes = crate::run_in(program, stream, timeline, &crate::Engine::Reference, mode);
    let late = |line: &str| {
        (line.rsplit('@').next())
            .and_then(|t| t.trim().parse::<u64>().ok())
            .is_some_and(|t| t > last + 32)
    };
    match changes {
        Ok(text) if text.lines().any(late) => SMALL,
        _ => 100_000,
    }
}

/// `stream` (a generated one: a fact per line, its time last, in time order) with its
/// time points pulled apart: the first stays, and each later one comes 1 to `max_gap`
/// time points after the one before.
pub fn stretched(stream: &str, rng: &mut Rng, max_gap: u64) -> String {
    let mut out = String::with_capacity(stream.len() * 2);
    let mut times: Option<(u64, u64)> = None;
    for line in stream.lines() {
        let t = time_of(line);
        let moved = match times {
            Some((was, to)) if t == was => to,
            Some((_, to)) => to + 1 + rng.next_u64() % max_gap,
            None => t,
        };
        times = Some((t, moved));
        let at = line
            .trim_end_matches(['.', ')'])
            .rfind([',', '('])
            .map_or(0, |i| i + 1);
        out.push_str(&line[..at]);
        out.push_str(&moved.to_string());
        out.push_str(").\n");
    }
    out
}

/// `stream` with lines the program does not know, lines of a wrong arity and, sometimes,
/// an error, its lines dealt out over 1–3 files (each stays in time order).
pub fn streams_of(stream: &str, rng: &mut Rng) -> Vec<String> {
    let files = 1 + rng.below(3);
    let mut out = vec![String::new(); files];
    // Up to two errors, which of them comes first decided by time, then by file.
    let lines = stream.lines().count() + 1;
    let mut errors: Vec<usize> = Vec::new();
    for _ in 0..2 {
        if rng.chance(35) {
            errors.push(rng.below(lines));
        }
    }
    for (n, line) in stream.lines().enumerate() {
        let t = time_of(line);
        let file = rng.below(files);
        let mut push = |text: String| {
            out[file].push_str(&text);
            out[file].push('\n');
        };
        if let Some(at) = errors.iter().position(|&e| e == n) {
            errors.swap_remove(at);
            push(match rng.below(3) {
                0 => format!("e1(a, {}).", t.saturating_sub(1 + rng.below(3) as u64)),
                1 => "e1(a,,3).".to_owned(),
                _ => format!("e1(a) {t}."),
            });
        }
        if rng.chance(10) {
            push(format!("zz{}(a, {t}).", rng.below(20)));
        }
        if rng.chance(5) {
            push(format!("e1(a, b, c, {t})."));
        }
        if rng.chance(5) {
            push("% a comment".to_owned());
        }
        push(line.to_owned());
    }
    out
}

/// A timeline cut by `--from` and `--until` now and then.
pub fn timeline(rng: &mut Rng) -> Timeline {
    let bound = |rng: &mut Rng| rng.chance(30).then(|| rng.below(12) as u64);
    let (from, until) = (bound(rng), bound(rng));
    match (from, until) {
        (Some(from), Some(until)) if from > until => Timeline {
            from: Some(until),
            until: Some(from),
        },
        _ => Timeline { from, until },
    }
}
