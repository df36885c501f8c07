//! Laser's own output, for `diff` against it: one line per time point, `t: ` and the atoms
//! that hold at t (`p(a,b)`, `s`), sorted as strings and separated by single spaces; `t:`
//! alone when none hold. Symbols are printed bare, as Laser prints them.

use stgflow_io::sink::{Snapshot, push_u64, push_value};
use stgflow_lang::value::Value;

/// The `laser` output mode.
#[derive(Clone, Copy, Debug, Default)]
pub struct LaserOutput;

impl Snapshot for LaserOutput {
    fn atom(&self, name: &str, args: &[Value], atom: &mut Vec<u8>) {
        atom.extend_from_slice(name.as_bytes());
        if args.is_empty() {
            return;
        }
        atom.push(b'(');
        for (i, value) in args.iter().enumerate() {
            if i > 0 {
                atom.push(b',');
            }
            match value {
                Value::Sym(sym) => atom.extend_from_slice(sym.as_bytes()),
                other => push_value(atom, *other),
            }
        }
        atom.push(b')');
    }

    fn start(&self, shown: u64, line: &mut Vec<u8>) {
        push_u64(line, shown);
        line.push(b':');
    }

    fn separator(&self) -> &'static [u8] {
        b" "
    }

    fn end(&self) -> &'static [u8] {
        b"\n"
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use stgflow_io::sink::{Mode, Sink};
    use stgflow_lang::compile_str;
    use stgflow_lang::ir::{PredId, Program};
    use stgflow_lang::value::Row;

    /// What the `laser` mode prints for `points`, the facts of `program` that hold at
    /// each time point.
    fn printed(program: &Program, points: Vec<(u64, Vec<(PredId, Row)>)>) -> String {
        let mut sink = Sink::new(Vec::new(), Mode::Snapshot(Arc::new(LaserOutput)), program);
        for (t, facts) in points {
            sink.emit(t, facts).unwrap_or_default();
        }
        sink.finish().unwrap_or_default();
        String::from_utf8(sink.into_inner()).unwrap_or_default()
    }

    #[test]
    fn laser_mode_prints_every_time_point_sorted_as_text() {
        let compiled = compile_str("p.tdl", "q(X, T) :- p(X, T). alarm(T) :- s(T).");
        let q = compiled.program.pred_id("q").unwrap_or_default();
        let alarm = compiled.program.pred_id("alarm").unwrap_or_default();
        let fact = |x: Value| (q, Row::from_slice(&[x]));
        let points = vec![
            (
                3,
                vec![
                    fact(Value::sym("b")),
                    fact(Value::Int(10)),
                    fact(Value::sym("A b")),
                ],
            ),
            (4, vec![]),
            (5, vec![(alarm, Row::new()), fact(Value::Int(9))]),
        ];
        assert_eq!(
            printed(&compiled.program, points),
            "3: q(10) q(A b) q(b)\n4:\n5: alarm q(9)\n"
        );
    }

    #[test]
    fn facts_of_the_same_text_are_each_printed_while_they_hold() {
        // The integer 7 and the symbol "7" print alike: the line has the text twice while
        // both hold, once when one stops, and again when one starts after both stopped.
        let compiled = compile_str("p.tdl", "q(X, T) :- p(X, T).");
        let q = compiled.program.pred_id("q").unwrap_or_default();
        let fact = |x: Value| (q, Row::from_slice(&[x]));
        let points = vec![
            (0, vec![fact(Value::Int(7)), fact(Value::sym("a"))]),
            (1, vec![fact(Value::Int(7)), fact(Value::sym("7"))]),
            (2, vec![fact(Value::sym("7"))]),
            (3, vec![fact(Value::sym("b"))]),
            (4, vec![fact(Value::sym("b")), fact(Value::Int(7))]),
        ];
        assert_eq!(
            printed(&compiled.program, points),
            "0: q(7) q(a)\n1: q(7) q(7)\n2: q(7)\n3: q(b)\n4: q(7) q(b)\n"
        );
    }
}
