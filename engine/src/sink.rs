//! Output: what holds, per time point, in one of three modes.
//!
//! * `points`: `trusted(a,4).` for every fact at every time point it holds;
//! * `changes`: `+trusted(a) @4` when a fact starts to hold, `-trusted(a) @6` when it
//!   stops (nothing is retracted at the end of the timeline);
//! * `intervals`: `trusted(a) [4,6)` per maximal interval, right-open, printed when it
//!   closes; an interval still open at the end of the timeline ends at the last time
//!   point + 1.
//!
//! Within a time point lines are sorted (predicate name, then arguments), so output is
//! deterministic whatever the evaluator's order.

use std::cmp::Ordering;
use std::io::{self, Write};

use hashbrown::HashMap;

use crate::ir::{PredId, Program};
use crate::reference::Tuple;
use crate::value::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Mode {
    #[default]
    Points,
    Changes,
    Intervals,
}

/// A sink writing one mode of output.
#[derive(Debug)]
pub struct Sink<W: Write> {
    out: W,
    mode: Mode,
    names: Vec<String>,
    /// Rank of each predicate by name, for sorting.
    rank: Vec<usize>,
    /// Facts holding at the previous time point (changes), sorted.
    previous: Vec<(PredId, Tuple)>,
    /// Start of the current interval of each holding fact (intervals).
    open: HashMap<(PredId, Tuple), u64>,
    last_time: Option<u64>,
    /// Flush after every time point (live streams).
    pub flush_each: bool,
    line: String,
}

impl<W: Write> Sink<W> {
    pub fn new(out: W, mode: Mode, program: &Program) -> Sink<W> {
        let names: Vec<String> = program.predicates.iter().map(|p| p.name.clone()).collect();
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by(|&a, &b| names[a].cmp(&names[b]));
        let mut rank = vec![0; names.len()];
        for (r, p) in order.into_iter().enumerate() {
            rank[p] = r;
        }
        Sink {
            out,
            mode,
            names,
            rank,
            previous: Vec::new(),
            open: HashMap::new(),
            last_time: None,
            flush_each: false,
            line: String::new(),
        }
    }

    fn order(&self, a: &(PredId, Tuple), b: &(PredId, Tuple)) -> Ordering {
        self.rank[a.0]
            .cmp(&self.rank[b.0])
            .then_with(|| a.1.cmp(&b.1))
    }

    /// Writes `pred(args` (no closing parenthesis) into the line buffer.
    fn write_atom(&mut self, pred: PredId, args: &[Value], close_empty: bool) {
        use std::fmt::Write as _;
        self.line.push_str(&self.names[pred]);
        if args.is_empty() && !close_empty {
            return;
        }
        self.line.push('(');
        for (i, value) in args.iter().enumerate() {
            if i > 0 {
                self.line.push(',');
            }
            let _ = write!(self.line, "{value}");
        }
    }

    /// Records the facts that hold at `t` (any order, no duplicates). Time points must
    /// come in increasing order.
    pub fn emit(&mut self, t: u64, mut facts: Vec<(PredId, Tuple)>) -> io::Result<()> {
        use std::fmt::Write as _;
        facts.sort_unstable_by(|a, b| self.order(a, b));
        self.line.clear();
        match self.mode {
            Mode::Points => {
                for (pred, args) in &facts {
                    self.write_atom(*pred, args, true);
                    if !args.is_empty() {
                        self.line.push(',');
                    }
                    let _ = writeln!(self.line, "{t}).");
                }
            }
            Mode::Changes => {
                let previous = std::mem::take(&mut self.previous);
                let (mut i, mut j) = (0, 0);
                while i < previous.len() || j < facts.len() {
                    let ordering = match (previous.get(i), facts.get(j)) {
                        (Some(a), Some(b)) => self.order(a, b),
                        (Some(_), None) => Ordering::Less,
                        _ => Ordering::Greater,
                    };
                    let (sign, (pred, args)) = match ordering {
                        Ordering::Equal => {
                            i += 1;
                            j += 1;
                            continue;
                        }
                        Ordering::Less => {
                            i += 1;
                            ('-', &previous[i - 1])
                        }
                        Ordering::Greater => {
                            j += 1;
                            ('+', &facts[j - 1])
                        }
                    };
                    self.line.push(sign);
                    self.write_atom(*pred, args, false);
                    if !args.is_empty() {
                        self.line.push(')');
                    }
                    let _ = writeln!(self.line, " @{t}");
                }
                self.previous = facts;
            }
            Mode::Intervals => {
                let mut holding: HashMap<(PredId, Tuple), u64> =
                    HashMap::with_capacity(facts.len());
                for fact in facts {
                    let start = self.open.remove(&fact).unwrap_or(t);
                    holding.insert(fact, start);
                }
                let mut closed: Vec<((PredId, Tuple), u64)> =
                    std::mem::replace(&mut self.open, holding)
                        .into_iter()
                        .collect();
                closed.sort_unstable_by(|a, b| a.1.cmp(&b.1).then_with(|| self.order(&a.0, &b.0)));
                for ((pred, args), start) in &closed {
                    self.write_interval(*pred, args, *start, t);
                }
            }
        }
        self.last_time = Some(t);
        self.out.write_all(self.line.as_bytes())?;
        if self.flush_each {
            self.out.flush()?;
        }
        Ok(())
    }

    fn write_interval(&mut self, pred: PredId, args: &[Value], start: u64, end: u64) {
        use std::fmt::Write as _;
        self.write_atom(pred, args, false);
        if !args.is_empty() {
            self.line.push(')');
        }
        let _ = writeln!(self.line, " [{start},{end})");
    }

    /// Ends the output: closes open intervals at the last time point + 1, and flushes.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.mode == Mode::Intervals {
            if let Some(last) = self.last_time {
                self.line.clear();
                let mut open: Vec<((PredId, Tuple), u64)> =
                    std::mem::take(&mut self.open).into_iter().collect();
                open.sort_unstable_by(|a, b| a.1.cmp(&b.1).then_with(|| self.order(&a.0, &b.0)));
                for ((pred, args), start) in &open {
                    self.write_interval(*pred, args, *start, last + 1);
                }
                self.out.write_all(self.line.as_bytes())?;
            }
        }
        self.out.flush()
    }

    /// Flushes what was written so far (on errors, before exiting).
    pub fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    pub fn into_inner(self) -> W {
        self.out
    }
}
