//! Output formatted on the workers: a worker's sink keeps each line with a key that
//! orders it among every worker's lines ([`KeyedLines`]), and [`merge_keyed`] merges the
//! workers' lines into the bytes one sink would write.

use std::io::{self, Write};

use stgflow_lang::ir::PredId;
use stgflow_lang::value::Value;

use super::{Encoding, Mode, Sink};

/// The settings of a sink that workers copy to format their own shares of the output,
/// in the same order ([`Sink::template`], [`Sink::keyed`]).
#[derive(Clone, Debug)]
pub struct Template {
    mode: Mode,
    names: Vec<String>,
    rank: Vec<usize>,
    time_scale: u64,
    encoding: Encoding,
    /// Whether each line gets its key (see [`Sink::template`]).
    keys: bool,
    print_from: Option<u64>,
}

impl Template {
    /// Whether the end of the output writes lines (the intervals still open).
    pub fn writes_an_end(&self) -> bool {
        matches!(self.mode, Mode::Intervals)
    }
}

/// Output lines formatted on a worker, each with a key that orders it among every
/// worker's lines ([`Sink::keyed`]): merged on the keys, the workers' lines are the bytes
/// one sink would write for all of their facts.
#[derive(Debug, Default)]
pub struct KeyedLines {
    /// The lines, one after another.
    pub text: Vec<u8>,
    /// Their keys, one after another: byte strings that compare as the lines are
    /// ordered within their time point.
    pub keys: Vec<u8>,
    /// Per line, in order: its time point ([`u64::MAX`] for what the end of the output
    /// writes, after every time point), and where its key and its text end.
    pub ends: Vec<(u64, usize, usize)>,
}

/// Merges workers' lines ([`KeyedLines`], each run in order) onto `out` in order: by
/// time point, then by key. `points` gets each time point that has lines, with where its
/// lines end in `out`.
pub fn merge_keyed(runs: &[KeyedLines], out: &mut Vec<u8>, points: &mut Vec<(u64, usize)>) {
    let mut note = |time: u64, out: &Vec<u8>| match points.last_mut() {
        Some((last, end)) if *last == time => *end = out.len(),
        _ => points.push((time, out.len())),
    };
    let busy: Vec<&KeyedLines> = runs.iter().filter(|r| !r.is_empty()).collect();
    if busy.is_empty() {
        return;
    }
    if let [only] = busy.as_slice() {
        // One worker's lines are in order already: whole time points at a time.
        let mut from = 0;
        for i in 0..only.len() {
            let (time, _, end) = only.ends[i];
            if only.ends.get(i + 1).is_none_or(|next| next.0 != time) {
                out.extend_from_slice(&only.text[from..end]);
                note(time, out);
                from = end;
            }
        }
        return;
    }
    let mut at = vec![0usize; busy.len()];
    let before = |at: &[usize], a: usize, b: usize| {
        let head = |run: usize| {
            let lines: &KeyedLines = busy[run];
            (at[run] < lines.len()).then(|| {
                let (time, key, _) = lines.line(at[run]);
                (time, key)
            })
        };
        match (head(a), head(b)) {
            (Some(x), Some(y)) => x < y,
            (x, _) => x.is_some(),
        }
    };
    let mut tree = crate::merge::Tournament::new(busy.len(), |a, b| before(&at, a, b));
    loop {
        let run = tree.winner();
        if at[run] == busy[run].len() {
            return;
        }
        let (time, _, text) = busy[run].line(at[run]);
        out.extend_from_slice(text);
        note(time, out);
        at[run] += 1;
        tree.replay(|a, b| before(&at, a, b));
    }
}

impl KeyedLines {
    /// Line `i`: its time point, key and text.
    pub fn line(&self, i: usize) -> (u64, &[u8], &[u8]) {
        let (time, key_end, text_end) = self.ends[i];
        let (key_start, text_start) = match i {
            0 => (0, 0),
            _ => (self.ends[i - 1].1, self.ends[i - 1].2),
        };
        (
            time,
            &self.keys[key_start..key_end],
            &self.text[text_start..text_end],
        )
    }

    pub fn len(&self) -> usize {
        self.ends.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

impl Sink<io::Sink> {
    /// A worker's sink: it formats what it is given as `template`'s sink would, but keeps
    /// each line with its key ([`Sink::take_keyed`]) instead of writing it; the end of the
    /// output ([`Sink::finish`]) comes at time point [`u64::MAX`].
    pub fn keyed(template: Template) -> Sink<io::Sink> {
        let mut sink = Sink::with_names(io::sink(), template.mode, template.names, template.rank);
        sink.time_scale = template.time_scale;
        sink.encoding = template.encoding;
        sink.keyed = Some((KeyedLines::default(), 0));
        sink.keys = template.keys;
        sink.print_from = template.print_from;
        sink
    }
}

impl<W: Write> Sink<W> {
    /// The settings a worker's sink copies ([`Sink::keyed`]), where the output can be
    /// formatted on the workers: points, changes or intervals in TD lines to one output,
    /// written as it goes (no files, no RTEC form). Each worker's sink must see every
    /// change of the facts it formats. Without `keys` the lines have none (one worker's
    /// lines need no merging).
    pub fn template(&self, keys: bool) -> Option<Template> {
        let plain = matches!(self.mode, Mode::Points | Mode::Changes | Mode::Intervals)
            && matches!(self.encoding, Encoding::Td | Encoding::Records)
            && self.files.is_empty()
            && self.summary.is_none();
        plain.then(|| Template {
            mode: self.mode.clone(),
            names: self.names.clone(),
            rank: self.rank.clone(),
            time_scale: self.time_scale,
            encoding: self.encoding,
            keys,
            print_from: self.print_from,
        })
    }

    /// How many bytes of lines a worker's sink ([`Sink::keyed`]) holds.
    pub fn keyed_size(&self) -> usize {
        self.keyed.as_ref().map_or(0, |(lines, _)| lines.text.len())
    }

    /// The lines formatted so far by a worker's sink ([`Sink::keyed`]).
    pub fn take_keyed(&mut self) -> KeyedLines {
        self.keyed
            .as_mut()
            .map(|(lines, _)| std::mem::take(lines))
            .unwrap_or_default()
    }

    /// Writes lines formatted by workers ([`Sink::keyed`]) as they are, at time point `t`
    /// (which then counts as written; flushed on a live stream).
    pub fn write_formatted(&mut self, t: u64, text: &[u8]) -> io::Result<()> {
        self.out.write_all(text)?;
        if t != u64::MAX {
            self.last_time = Some(t);
            if self.flush_each {
                self.out.flush()?;
            }
        }
        Ok(())
    }

    /// For a worker's sink: the line that ends here in the line buffer, of the time point
    /// `t`, ordered by `key` (the predicate's rank, `start` for an interval, the
    /// arguments).
    pub(super) fn keyed_line(&mut self, t: u64, pred: PredId, args: &[Value], start: Option<u64>) {
        let Some((lines, from)) = &mut self.keyed else {
            return;
        };
        let text_end = lines.text.len() + self.line.len() - *from;
        if self.keys {
            if let Some(start) = start {
                lines.keys.extend_from_slice(&start.to_be_bytes());
            }
            let rank = self.rank.get(pred).copied().unwrap_or(usize::MAX);
            lines.keys.extend_from_slice(&(rank as u64).to_be_bytes());
            for value in args {
                value.push_order_key(&mut lines.keys);
            }
        }
        lines.ends.push((t, lines.keys.len(), text_end));
    }

    /// For a worker's sink: this time point's lines start at `from` in the line buffer.
    pub(super) fn keyed_start(&mut self, from: usize) {
        if let Some((_, start)) = &mut self.keyed {
            *start = from;
        }
    }

    /// For a worker's sink: the lines of the line buffer from `from` on are this time
    /// point's; they move to the keyed lines.
    pub(super) fn keyed_time_point(&mut self, from: usize) {
        if let Some((lines, _)) = &mut self.keyed {
            lines.text.extend_from_slice(&self.line[from..]);
            self.line.truncate(from);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sink::name_ranks;
    use stgflow_lang::compile_str;
    use stgflow_lang::value::Row;

    /// What one sink writes for a run's changes, in `mode`: each time point's changes
    /// consolidated and in output order, as the dataflow's workers deliver them.
    fn written(sink: &mut Sink<Vec<u8>>, run: &[Vec<(PredId, Row, isize)>]) -> Vec<u8> {
        for (t, changes) in run.iter().enumerate() {
            let changes = changes.iter().map(|(p, row, d)| (*p, &row[..], *d));
            sink.emit_sorted(t as u64, changes)
                .expect("a write to memory");
        }
        sink.finish().expect("a write to memory");
        std::mem::take(&mut sink.out)
    }

    proptest::proptest! {
        /// Every fact's changes given to one of 1–19 workers' sinks ([`Sink::keyed`]) by
        /// the fact's hash, the workers' lines merged on their keys are what one sink
        /// writes for all the facts, in points, changes and intervals.
        #[test]
        fn workers_lines_merged_on_their_keys_are_one_sinks_bytes(
            flips in proptest::collection::vec((0usize..3, 0i64..4, 0usize..12), 0..60),
            workers in 1usize..20,
            scale in 1u64..3,
        ) {
            let program = compile_str(
                "p.tdl",
                "b(X, T) :- e(X, T).\nab(X, Y, T) :- e(X, T), e(Y, T).\na(T) :- e(0, T).\n",
            )
            .program;
            let names = ["b", "ab", "a"];
            let preds: Vec<PredId> = names.iter().map(|n| program.pred_id(n).expect("a predicate of the program")).collect();
            // Each flip turns a fact on or off at a time point; facts by predicate arity.
            let mut holding: std::collections::BTreeSet<(PredId, Row)> = Default::default();
            let mut run: Vec<Vec<(PredId, Row, isize)>> = vec![Vec::new(); 12];
            let mut flips = flips;
            flips.sort_by_key(|f| f.2);
            for (which, x, t) in flips {
                let pred = preds[which];
                let row: Row = match which {
                    0 => [Value::Int(x)].into_iter().collect(),
                    1 => [Value::Int(x), Value::sym(["a", "b\u{0}", "ccc"][x as usize % 3])].into_iter().collect(),
                    _ => Row::new(),
                };
                let fact = (pred, row);
                if run[t].iter().any(|(p, r, _)| (*p, r.clone()) == fact) {
                    continue;
                }
                let diff = if holding.remove(&fact) { -1 } else { holding.insert(fact.clone()); 1 };
                run[t].push((fact.0, fact.1, diff));
            }
            let rank = name_ranks(&program);
            for changes in &mut run {
                changes.sort_by(|a, b| (rank[a.0], &a.1).cmp(&(rank[b.0], &b.1)));
            }
            for mode in [Mode::Points, Mode::Changes, Mode::Intervals] {
                let mut one = Sink::new(Vec::new(), mode.clone(), &program);
                one.time_scale = scale;
                let expected = written(&mut one, &run);
                let template = one.template(true).expect("a sink with a template");
                let owner = |fact: &(PredId, Row)| {
                    use std::hash::{Hash, Hasher};
                    let mut hasher = std::hash::DefaultHasher::new();
                    fact.hash(&mut hasher);
                    (hasher.finish() % workers as u64) as usize
                };
                let shares: Vec<KeyedLines> = (0..workers)
                    .map(|w| {
                        let mut sink = Sink::keyed(template.clone());
                        for (t, changes) in run.iter().enumerate() {
                            let mine = changes
                                .iter()
                                .filter(|(p, r, _)| owner(&(*p, r.clone())) == w)
                                .map(|(p, row, d)| (*p, &row[..], *d));
                            sink.emit_sorted(t as u64, mine).expect("a write to memory");
                        }
                        sink.finish().expect("a write to memory");
                        sink.take_keyed()
                    })
                    .collect();
                let (mut merged, mut points) = (Vec::new(), Vec::new());
                merge_keyed(&shares, &mut merged, &mut points);
                proptest::prop_assert_eq!(
                    String::from_utf8_lossy(&merged),
                    String::from_utf8_lossy(&expected),
                    "{:?} on {} workers", mode, workers
                );
                let times: Vec<u64> = points.iter().map(|p| p.0).collect();
                proptest::prop_assert!(times.windows(2).all(|w| w[0] < w[1]), "{:?}", times);
            }
        }
    }
}
