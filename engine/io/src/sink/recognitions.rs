//! RTEC's form of the intervals (`--mode rtec`): every fact's intervals kept to the end
//! and written then, one `recognitions(predictions, …)` line per fact, with RTEC's names
//! and compound arguments where a predicate was flattened from them.

use std::io::{self, Write};

use hashbrown::HashMap;

use stgflow_lang::ir::PredId;
use stgflow_lang::value::{Row, Value};

use super::Sink;
use super::values::{push_u64, push_value};

/// RTEC's recognitions so far: each fact's intervals, (start, end).
pub(super) type Recognised = HashMap<(PredId, Row), Vec<(u64, u64)>>;
pub(super) type Recognition = ((PredId, Row), Vec<(u64, u64)>);

impl<W: Write> Sink<W> {
    /// Writes intervals (in [`Mode::Intervals`](super::Mode::Intervals)) as RTEC writes its
    /// recognitions, at the end: one line per fact, its last argument the value,
    /// `recognitions(predictions, F,[[Args…],Value],[(S,E),…]).` (a fact without arguments
    /// has the value `true`), intervals in time order, lines in output order.
    pub fn recognitions(mut self) -> Sink<W> {
        self.recognitions = Some(HashMap::new());
        self
    }

    /// With [`Sink::recognitions`]: the predicates written with RTEC's name and compound
    /// arguments ([`Printed`]).
    pub fn printed_as(mut self, printed: Vec<(PredId, Printed)>) -> Sink<W> {
        for (pred, how) in printed {
            if self.printed.len() <= pred {
                self.printed.resize(pred + 1, None);
            }
            self.printed[pred] = Some(how);
        }
        self
    }

    /// With [`Sink::recognitions`]: only the facts whose predicate and value (last
    /// argument) are among `pairs` (a value `None`: any) are written — the fluent-value pairs RTEC computes,
    /// where an event description's grounding declarations name them.
    pub fn recognised(mut self, pairs: Vec<(PredId, Option<Value>)>) -> Sink<W> {
        self.recognised = Some(pairs);
        self
    }

    /// The lines of [`Sink::recognitions`]: one per fact, in order, its intervals by start.
    pub(super) fn write_recognitions(&mut self, mut all: Vec<Recognition>) -> io::Result<()> {
        all.sort_unstable_by(|(a, _), (b, _)| (self.rank[a.0], &a.1).cmp(&(self.rank[b.0], &b.1)));
        self.line.clear();
        for ((pred, args), intervals) in &mut all {
            let pred = *pred;
            intervals.sort_unstable();
            let printed = self.printed.get(pred).and_then(Option::as_ref);
            self.line.extend_from_slice(b"recognitions(predictions,");
            let name = printed.map_or(self.names[pred].as_str(), |p| p.name.as_str());
            self.line.extend_from_slice(name.as_bytes());
            self.line.extend_from_slice(b",[[");
            let (objects, value) = match args.split_last() {
                Some((value, objects)) => (objects, Some(*value)),
                None => (&args[..], None),
            };
            match printed {
                Some(printed) => push_shaped(&mut self.line, &printed.args, &mut objects.iter()),
                None => {
                    for (k, object) in objects.iter().enumerate() {
                        if k > 0 {
                            self.line.push(b',');
                        }
                        push_value(&mut self.line, *object);
                    }
                }
            }
            self.line.extend_from_slice(b"],");
            match value {
                Some(value) => push_value(&mut self.line, value),
                None => self.line.extend_from_slice(b"true"),
            }
            self.line.extend_from_slice(b"],[");
            for (k, (start, end)) in intervals.iter().enumerate() {
                if k > 0 {
                    self.line.push(b',');
                }
                self.line.push(b'(');
                push_u64(&mut self.line, *start);
                self.line.push(b',');
                push_u64(&mut self.line, *end);
                self.line.push(b')');
            }
            self.line.extend_from_slice(b"]).\n");
        }
        self.out.write_all(&self.line)
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
    use crate::sink::Mode;
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
        let mut sink = Sink::new(Vec::new(), Mode::Intervals, &compiled.program).recognitions();
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
        assert!(sink.out.is_empty());
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
