//! TD facts: `p(a, b, 7).`, the time last; several facts per line, spaces and `%`
//! comments allowed. The usual line, `p(12,ab_3,7).`, is read byte by byte; anything else
//! by the general parser, which also reports the errors.

use stgflow_lang::value::{Row, Value};

use super::cursor::{Cursor, simple_args, word_end};
use super::{Format, ReaderState, StreamError};

/// The TD fact format, the default.
#[derive(Clone, Copy, Debug, Default)]
pub struct Td;

impl Format for Td {
    fn name(&self) -> &'static str {
        "td"
    }

    fn about(&self) -> &'static str {
        "TD facts: `p(a, b, 7).`"
    }

    fn parse_line(&self, text: &str, state: &mut ReaderState) -> Result<(), Box<StreamError>> {
        if let Some((name, args, time)) = simple_fact(text) {
            return state.accept(text, name, Row::from_slice(&args), time, 0);
        }
        parse_general(text, state)
    }
}

/// The usual TD fact line, `name(c1,…,cn,T).` with no spaces and constants that are plain
/// integers or bare symbols, read byte by byte: the name, the arguments and the time.
/// `None` for anything else — spaces, quotes, signs, floats, comments, several facts on a
/// line, every error — which the general parser then reads (and reports) from the start.
pub(crate) fn simple_fact(text: &str) -> Option<(&str, smallvec::SmallVec<[Value; 8]>, u64)> {
    let bytes = text.as_bytes();
    if !bytes.first()?.is_ascii_lowercase() {
        return None;
    }
    let name_end = word_end(bytes, 0);
    if bytes.get(name_end) != Some(&b'(') {
        return None;
    }
    let (mut args, close): (smallvec::SmallVec<[Value; 8]>, usize) =
        simple_args(text, name_end + 1)?;
    if &bytes[close + 1..] != b"." {
        return None;
    }
    let name = &text[..name_end];
    match args.pop()? {
        Value::Int(time) => Some((name, args, time as u64)),
        _ => None,
    }
}

/// Any TD line: several facts, spaces, comments, every kind of constant, and the
/// errors.
pub(crate) fn parse_general(text: &str, state: &mut ReaderState) -> Result<(), Box<StreamError>> {
    let mut cursor = Cursor { text, pos: 0 };
    loop {
        cursor.skip_space();
        if cursor.at_end() || cursor.peek() == Some('%') {
            return Ok(());
        }
        let start = cursor.pos;
        let name = cursor.identifier().ok_or_else(|| {
            state.error(
                text,
                cursor.pos,
                "expected a fact such as `p(a, 7).`".to_owned(),
                None,
            )
        })?;
        cursor.skip_space();
        if !cursor.eat('(') {
            return Err(state.error(
                text,
                cursor.pos,
                format!("expected `(` after `{name}`"),
                Some(format!("a fact has its time last: `{name}(…, 7).`")),
            ));
        }
        // Inline for the usual few arguments: one allocation per fact, its own.
        let mut args: smallvec::SmallVec<[Value; 8]> = smallvec::SmallVec::new();
        let mut last_at;
        loop {
            cursor.skip_space();
            let at = cursor.pos;
            let value = cursor
                .constant()
                .map_err(|message| state.error(text, at, message, None))?;
            args.push(value);
            last_at = at;
            cursor.skip_space();
            if cursor.eat(',') {
                continue;
            }
            if cursor.eat(')') {
                break;
            }
            return Err(state.error(text, cursor.pos, "expected `,` or `)`".to_owned(), None));
        }
        cursor.skip_space();
        if !cursor.eat('.') {
            return Err(state.error(
                text,
                cursor.pos,
                "expected `.` after the fact".to_owned(),
                Some("every fact ends with `.`".to_owned()),
            ));
        }
        let time = args.pop().unwrap_or(Value::Int(-1));
        let time = time_of(state, text, time, last_at)?;
        state.accept(text, name, Row::from_slice(&args), time, start)?;
    }
}

fn time_of(
    state: &ReaderState,
    text: &str,
    value: Value,
    at: usize,
) -> Result<u64, Box<StreamError>> {
    match value {
        Value::Int(t) if t >= 0 => Ok(t as u64),
        other => Err(state.error(
            text,
            at,
            format!("the time must be a non-negative integer, found `{other}`"),
            Some("the last argument of a fact is its time point".to_owned()),
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::stream::tests::read_all;
    use crate::stream::{FactReader, InputFact, Schema};
    use stgflow_lang::compile_str;

    proptest::proptest! {
        /// Whatever line the byte-level fast path accepts, the general parser reads as
        /// the same fact (and it accepts the usual lines).
        #[test]
        fn simple_td_facts_read_as_the_general_parser_reads_them(
            line in "[pqs(][a-z0-9_(),. -]{0,14}",
        ) {
            let compiled = compile_str("p.tdl", "q(X, Y, T) :- p(X, Y, T). r(T) :- s(T).");
            let schema = Schema::new(&compiled.program);
            let mut reader = FactReader::new(&b""[..], "in", Arc::new(Td), schema);
            let general = parse_general(&line, &mut reader);
            if let Some((name, args, time)) = simple_fact(&line) {
                proptest::prop_assert!(general.is_ok(), "{line}: {general:?}");
                let facts: Vec<InputFact> = reader.pending.drain(..).collect();
                match reader.schema.lookup(name) {
                    Some((pred, arity)) if arity == args.len() => {
                        proptest::prop_assert_eq!(facts.len(), 1, "{}", line);
                        proptest::prop_assert_eq!(facts[0].pred, pred);
                        proptest::prop_assert_eq!(&facts[0].args[..], &args[..]);
                        proptest::prop_assert_eq!(facts[0].time, time);
                    }
                    _ => proptest::prop_assert!(facts.is_empty(), "{}", line),
                }
            }
        }
    }

    #[test]
    fn simple_td_fact_takes_the_usual_lines_only() {
        let (name, args, time) = simple_fact("p(12,ab_3,7).").unwrap_or_else(|| panic!());
        assert_eq!(
            (name, &args[..], time),
            ("p", &[Value::Int(12), Value::sym("ab_3")][..], 7)
        );
        for general in [
            "p(1, 2).",
            "p(1,2). % c",
            "p(-1,2).",
            "p(1.5,2).",
            "p(\"a\",2).",
            "p(1,2)",
            "p(a,b).",
            "p(1,2).q(3).",
            "P(1,2).",
            "p(12a,2).",
        ] {
            assert!(simple_fact(general).is_none(), "{general}");
        }
    }

    #[test]
    fn td_facts_several_per_line_with_comments() {
        let facts = read_all(
            "p(a, 1, 3). s(3).  % c\n\np(\"x y\", -2.5, 4).\n",
            Arc::new(Td),
        )
        .unwrap_or_default();
        assert_eq!(facts.len(), 3);
        assert_eq!(facts[2].args[..], [Value::sym("x y"), Value::Float(-2.5)]);
        assert_eq!(facts[2].time, 4);
    }

    #[test]
    fn a_fact_ending_in_an_integer_then_dot_reads_the_integer() {
        let facts = read_all("s(7).", Arc::new(Td)).unwrap_or_default();
        assert_eq!(facts[0].time, 7);
    }

    #[test]
    fn a_time_above_the_largest_is_an_error() {
        let huge = read_all("p(a, b, 9223372036854775808).", Arc::new(Td)).err();
        assert!(huge.is_some_and(|e| e.message.contains("too large")));
    }
}
