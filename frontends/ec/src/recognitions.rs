//! RTEC's recognitions (`--mode rtec`): every fluent-value pair's intervals kept to the
//! end of the run and written then, one `recognitions(predictions, …)` line per pair as
//! RTEC writes its result file, with RTEC's names and compound arguments where a
//! predicate was flattened from them. A [`Summary`] the sink is given.

use hashbrown::HashMap;

use stgflow_io::sink::{Summary, push_u64, push_value};
use stgflow_lang::ir::{PredId, Program};
use stgflow_lang::value::{Row, Value};

/// RTEC's recognitions of a run, as [`Summary`] takes them.
#[derive(Debug, Default)]
pub struct Recognitions {
    names: Vec<String>,
    /// How RTEC writes a predicate, by predicate.
    printed: Vec<Option<Printed>>,
    /// The (predicate, value) pairs written (`None`: every value of the predicate); every
    /// pair where `None`.
    recognised: Option<Vec<(PredId, Option<Value>)>>,
    /// RTEC's window (`--window rtec`): an interval still open at the end ends at the last
    /// time + 1 in the input's own units (RTEC's END + 1), not at the next time point;
    /// the time points' unit in the input's (the clock tick).
    window_tick: Option<u64>,
    /// By predicate, how long before it is derived each interval starts, in the input's
    /// units: a fluent kept by `intDurGreater` ([`Recognitions::starting_earlier`]).
    earlier: Vec<u64>,
    /// The intervals so far by fact.
    intervals: HashMap<Fact, Intervals>,
}

/// A fact: its predicate and arguments.
type Fact = (PredId, Row);

/// A fact's intervals, (start, end) each.
type Intervals = Vec<(u64, u64)>;

impl Recognitions {
    /// The recognitions of `program`'s facts: a fact's last argument is its value (a fact
    /// without arguments has the value `true`).
    pub fn new(program: &Program) -> Recognitions {
        Recognitions {
            names: program.predicates.iter().map(|p| p.name.clone()).collect(),
            ..Recognitions::default()
        }
    }

    /// The predicates written with RTEC's name and compound arguments ([`Printed`]).
    pub fn printed_as(mut self, printed: Vec<(PredId, Printed)>) -> Recognitions {
        for (pred, how) in printed {
            if self.printed.len() <= pred {
                self.printed.resize(pred + 1, None);
            }
            self.printed[pred] = Some(how);
        }
        self
    }

    /// Only the facts whose predicate and value (last argument) are among `pairs` (a
    /// value `None`: any) are written: the fluent-value pairs RTEC computes, where an
    /// event description's grounding declarations name them.
    pub fn recognised(mut self, pairs: Vec<(PredId, Option<Value>)>) -> Recognitions {
        self.recognised = Some(pairs);
        self
    }

    /// The predicates each of whose intervals starts `by` input units before it is
    /// derived (`intDurGreater`'s duration: its intervals are derived once they have lasted
    /// longer), each with `by`.
    pub fn starting_earlier(mut self, earlier: Vec<(PredId, u64)>) -> Recognitions {
        for (pred, by) in earlier {
            if self.earlier.len() <= pred {
                self.earlier.resize(pred + 1, 0);
            }
            self.earlier[pred] = by;
        }
        self
    }

    /// RTEC's window (T, END]: an interval still open at the end ends at END + 1 in the
    /// input's units, `tick` of them a time point.
    pub fn in_rtecs_window(mut self, tick: u64) -> Recognitions {
        self.window_tick = Some(tick);
        self
    }
}

impl Summary for Recognitions {
    fn interval(&mut self, pred: PredId, args: &[Value], (start, end): (u64, u64), open: bool) {
        let end = match self.window_tick {
            Some(tick) if open => end - tick + 1,
            _ => end,
        };
        let earlier = self.earlier.get(pred).copied().unwrap_or(0);
        // RTEC measures an interval still open at the end up to the last time point, not
        // past it: one that has lasted long enough only with the last time point is not
        // long enough to RTEC.
        if earlier > 0 && open && self.window_tick.is_some() && start + 1 == end {
            return;
        }
        let start = start.saturating_sub(earlier);
        (self.intervals.entry((pred, Row::from(args))).or_default()).push((start, end));
    }

    /// One line per fact, its intervals in time order, lines in output order:
    /// `recognitions(predictions, F,[[Args…],Value],[(S,E),…]).`
    fn write(&mut self, rank: &[usize], line: &mut Vec<u8>) {
        let mut all: Vec<(Fact, Intervals)> =
            std::mem::take(&mut self.intervals).into_iter().collect();
        if let Some(pairs) = &self.recognised {
            all.retain(|((pred, row), _)| {
                let value = row.last().copied();
                (pairs.iter()).any(|(p, v)| p == pred && (v.is_none() || *v == value))
            });
        }
        all.sort_unstable_by(|(a, _), (b, _)| (rank[a.0], &a.1).cmp(&(rank[b.0], &b.1)));
        for ((pred, args), intervals) in &mut all {
            let pred = *pred;
            intervals.sort_unstable();
            let printed = self.printed.get(pred).and_then(Option::as_ref);
            line.extend_from_slice(b"recognitions(predictions,");
            let name = printed.map_or(self.names[pred].as_str(), |p| p.name.as_str());
            line.extend_from_slice(name.as_bytes());
            line.extend_from_slice(b",[[");
            let (objects, value) = match args.split_last() {
                Some((value, objects)) => (objects, Some(*value)),
                None => (&args[..], None),
            };
            match printed {
                Some(printed) => push_shaped(line, &printed.args, &mut objects.iter()),
                None => {
                    for (k, object) in objects.iter().enumerate() {
                        if k > 0 {
                            line.push(b',');
                        }
                        push_value(line, *object);
                    }
                }
            }
            line.extend_from_slice(b"],");
            match value {
                Some(value) => push_value(line, value),
                None => line.extend_from_slice(b"true"),
            }
            line.extend_from_slice(b"],[");
            for (k, (start, end)) in intervals.iter().enumerate() {
                if k > 0 {
                    line.push(b',');
                }
                line.push(b'(');
                push_u64(line, *start);
                line.push(b',');
                push_u64(line, *end);
                line.push(b')');
            }
            line.extend_from_slice(b"]).\n");
        }
    }
}

/// How `--mode rtec` writes a predicate whose RTEC fluent had compound arguments
/// (`per(close_ballot(C, M))=true`, flattened to `per__close_ballot(C, M, true)`): its
/// name and the shape of its object arguments.
#[derive(Clone, Debug, PartialEq)]
pub struct Printed {
    pub name: String,
    pub args: Vec<Shape>,
}

/// An argument as written: one of the flattened arguments, or a compound term.
#[derive(Clone, Debug, PartialEq)]
pub enum Shape {
    Arg,
    Term(String, Vec<Shape>),
}

/// Appends `shapes` filled with `values` in order.
fn push_shaped(line: &mut Vec<u8>, shapes: &[Shape], values: &mut std::slice::Iter<'_, Value>) {
    for (k, shape) in shapes.iter().enumerate() {
        if k > 0 {
            line.push(b',');
        }
        match shape {
            Shape::Arg => {
                if let Some(value) = values.next() {
                    push_value(line, *value);
                }
            }
            Shape::Term(name, inner) => {
                line.extend_from_slice(name.as_bytes());
                line.push(b'(');
                push_shaped(line, inner, values);
                line.push(b')');
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stgflow_io::sink::{Mode, Sink};
    use stgflow_lang::compile_str;

    #[test]
    fn recognitions_are_rtecs_lines_one_per_fact_written_at_the_end() {
        let text = "loc(X, V, T) :- go(X, V, T).\nalarm(T) :- ring(T).\n";
        let compiled = compile_str("p.tdl", text);
        let id = |name: &str| compiled.program.pred_id(name).unwrap_or_default();
        let (loc, alarm) = (id("loc"), id("alarm"));
        let pub_ = (
            loc,
            Row::from_slice(&[Value::sym("chris"), Value::sym("pub")]),
        );
        let work = (loc, Row::from_slice(&[Value::sym("chris"), Value::Int(7)]));
        let ring = (alarm, Row::new());
        let recognitions = Box::new(Recognitions::new(&compiled.program));
        let mut sink =
            Sink::new(Vec::new(), Mode::Intervals, &compiled.program).summarised(recognitions);
        sink.time_scale = 10;
        for (t, facts) in [
            (1, vec![pub_.clone(), ring.clone()]),
            (2, vec![work.clone()]),
            (3, vec![pub_.clone(), work.clone()]),
            (4, vec![pub_.clone()]),
        ] {
            sink.emit(t, facts).unwrap_or_default();
        }
        // Nothing before the end: RTEC writes its file once the window is done.
        sink.flush().unwrap_or_default();
        assert_eq!(sink.written(), 0);
        sink.finish().unwrap_or_default();
        let printed = String::from_utf8(sink.into_inner()).unwrap_or_default();
        assert_eq!(
            printed,
            "recognitions(predictions,alarm,[[],true],[(10,20)]).\n\
             recognitions(predictions,loc,[[chris],7],[(20,40)]).\n\
             recognitions(predictions,loc,[[chris],pub],[(10,20),(30,50)]).\n"
        );
    }
}
