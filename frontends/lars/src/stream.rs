//! Laser's stream format: an optional `#timeline START END` before the first time point,
//! then lines `t: atom atom …` with atoms `p(a,b)` or `s` written without spaces; other
//! lines starting with `#` and blank lines are ignored. Names are whatever comes before
//! `(`: IRIs (`http://ex.org/p#q(http://ex.org/s0,o1)`) and names such as `p*2` too, and
//! a name in single quotes reads as the same name unquoted. Arguments are numbers when they
//! parse as numbers, symbols otherwise. The usual atom (integers and bare symbols) is
//! read byte by byte; anything else by the general reader, which also reports errors.

use stgflow_io::stream::cursor::{simple_args, word_end};
use stgflow_io::stream::{Format, ReaderState, StreamError};
use stgflow_lang::value::{Row, Value};

/// The Laser stream format (`.laser`, `.stream` files).
#[derive(Clone, Copy, Debug, Default)]
pub struct LaserStream;

impl Format for LaserStream {
    fn name(&self) -> &'static str {
        "laser"
    }

    fn about(&self) -> &'static str {
        "Laser streams: `#timeline 0 99`, then `7: p(a,b) q(c) s`"
    }

    fn extensions(&self) -> &'static [&'static str] {
        &[".laser", ".stream"]
    }

    fn parse_line(&self, text: &str, state: &mut ReaderState) -> Result<(), Box<StreamError>> {
        parse_line(text, state)
    }
}

fn parse_line(text: &str, state: &mut ReaderState) -> Result<(), Box<StreamError>> {
    let trimmed = text.trim_start();
    let indent = text.len() - trimmed.len();
    if trimmed.is_empty() {
        return Ok(());
    }
    if let Some(rest) = trimmed.strip_prefix("#timeline") {
        return parse_timeline(text, rest, text.len() - rest.len(), state);
    }
    if trimmed.starts_with('#') {
        return Ok(());
    }
    let Some(colon) = trimmed.find(':') else {
        return Err(state.error(
            text,
            indent,
            "expected `t: atom atom …`".to_owned(),
            Some("Laser stream lines start with the time point and a colon".to_owned()),
        ));
    };
    let time_text = trimmed[..colon].trim();
    let Ok(time) = time_text.parse::<u64>() else {
        return Err(state.error(
            text,
            indent,
            format!("the time must be a non-negative integer, found `{time_text}`"),
            Some("Laser stream lines read `t: p(a,b) q(c)`".to_owned()),
        ));
    };
    let Some(time) = state.advance(text, time, indent, 0)? else {
        // A late line: its atoms are counted as skipped.
        state.count_late(text[indent + colon + 1..].split_whitespace().count() as u64);
        return Ok(());
    };
    for atom in text[indent + colon + 1..].split_ascii_whitespace() {
        // Byte offset of this atom in the line, for errors: `atom` is a part of `text`.
        let at = (atom.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
        let (name, args) = match simple_atom(atom) {
            Some(parsed) => parsed,
            None => {
                let (name, args) = atom_of(state, text, atom, at)?;
                (name, Row::from_slice(&args))
            }
        };
        state.queue(text, at, name, args, time, time + 1)?;
    }
    Ok(())
}

fn parse_timeline(
    text: &str,
    rest: &str,
    at: usize,
    state: &mut ReaderState,
) -> Result<(), Box<StreamError>> {
    if state.has_times() || state.declared_timeline().is_some() {
        return Err(state.error(
            text,
            0,
            "`#timeline` must come once, before the first time point".to_owned(),
            None,
        ));
    }
    let bounds: Vec<Option<u64>> = rest.split_whitespace().map(|n| n.parse().ok()).collect();
    let [Some(start), Some(end)] = bounds[..] else {
        return Err(state.error(
            text,
            at,
            "expected `#timeline START END` with two non-negative integers".to_owned(),
            None,
        ));
    };
    if end < start {
        return Err(state.error(
            text,
            at,
            format!("the timeline ends ({end}) before it starts ({start})"),
            None,
        ));
    }
    state.declare_timeline(text, at, start, end)
}

/// Splits `p(a,b)` into its name and arguments.
fn atom_of<'t>(
    state: &ReaderState,
    text: &str,
    atom: &'t str,
    at: usize,
) -> Result<(&'t str, smallvec::SmallVec<[Value; 8]>), Box<StreamError>> {
    let (name, args) = match atom.find('(') {
        None => (atom, None),
        Some(open) => {
            let Some(inner) = atom[open + 1..].strip_suffix(')') else {
                return Err(state.error(
                    text,
                    at + atom.len(),
                    format!("expected `)` at the end of `{atom}`"),
                    Some("atoms are written without spaces: `p(a,b)`".to_owned()),
                ));
            };
            (&atom[..open], Some(inner))
        }
    };
    // Any name Laser reads: `p`, `p*2`, an IRI `http://ex.org/p#q`, or one in quotes
    // (`'p*2'`, as programs write it), which reads as the same name unquoted.
    let name = match name.strip_prefix('\'') {
        Some(quoted) => quoted.strip_suffix('\'').unwrap_or(""),
        None => name,
    };
    let valid_name = !name.is_empty()
        && !name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit() || b == b'-' || b == b'"')
        && !name.contains(['\'', ')']);
    if !valid_name {
        return Err(state.error(
            text,
            at,
            format!("`{name}` is not a predicate name"),
            Some(
                "a predicate name is written before `(` and does not start with a digit".to_owned(),
            ),
        ));
    }
    let args = match args {
        None | Some("") => smallvec::SmallVec::new(),
        Some(inner) => {
            let mut values = smallvec::SmallVec::new();
            let mut offset = at + name.len() + 1;
            for arg in inner.split(',') {
                if arg.is_empty() || arg.contains(['(', ')']) {
                    return Err(state.error(
                        text,
                        offset,
                        format!("malformed argument in `{atom}`"),
                        Some("arguments are constants separated by `,` without spaces".to_owned()),
                    ));
                }
                values.push(Value::parse_loose(arg));
                offset += arg.len() + 1;
            }
            values
        }
    };
    Ok((name, args))
}

/// The usual Laser atom, `p` or `p(c1,…,cn)` with a name of letters, digits and `_` and
/// constants that are plain integers or bare symbols, read byte by byte; `None` for
/// anything else, which [`atom_of`] then reads (and reports).
fn simple_atom(atom: &str) -> Option<(&str, Row)> {
    let bytes = atom.as_bytes();
    if !bytes.first()?.is_ascii_alphabetic() {
        return None;
    }
    let name_end = word_end(bytes, 0);
    let name = &atom[..name_end];
    if name_end == bytes.len() {
        return Some((name, Row::new()));
    }
    if bytes[name_end] != b'(' {
        return None;
    }
    let (args, close) = simple_args(atom, name_end + 1)?;
    (close + 1 == bytes.len()).then(|| (name, Row::from(args)))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;
    use stgflow_io::stream::blocks::{Parallelism, compare_with_sequential};
    use stgflow_io::stream::{FactReader, Formats, Schema, Tolerance};
    use stgflow_lang::compile_str;

    fn formats() -> Formats {
        let mut formats = Formats::builtin();
        formats.register(Arc::new(LaserStream));
        formats
    }

    proptest! {
        /// Whatever atom the byte-level Laser fast path accepts, the general reader
        /// splits into the same name and arguments.
        #[test]
        fn simple_laser_atoms_read_as_the_general_reader_reads_them(
            atom in "[pqA(][a-zA-Z0-9_(),.-]{0,12}",
        ) {
            let compiled = compile_str("p.tdl", "q(X, Y, T) :- p(X, Y, T).");
            let reader =
                FactReader::new(&b""[..], "in", Arc::new(LaserStream), Schema::new(&compiled.program));
            if let Some((name, args)) = simple_atom(&atom) {
                let general = atom_of(&reader, &atom, &atom, 0);
                prop_assert!(general.is_ok(), "{atom}: {general:?}");
                let (general_name, general_args) = general.unwrap_or_else(|_| unreachable!());
                prop_assert_eq!(name, general_name);
                prop_assert_eq!(&args[..], &general_args[..]);
            }
        }
    }

    /// Every fact the reader gives until its first error: predicate name, arguments, time.
    fn read_all<R: std::io::BufRead>(
        reader: &mut FactReader<R>,
        program: &stgflow_lang::ir::Program,
    ) -> Vec<(String, Vec<Value>, u64)> {
        let mut facts = Vec::new();
        while let Ok(Some(fact)) = reader.next_fact() {
            facts.push((
                program.pred_name(fact.pred).to_owned(),
                fact.args.to_vec(),
                fact.time,
            ));
        }
        facts
    }

    /// The code and column of the first error in a Laser stream `text`.
    fn first_error(
        text: &str,
        program: &stgflow_lang::ir::Program,
    ) -> Option<(&'static str, usize)> {
        let mut reader = FactReader::new(
            text.as_bytes(),
            "in",
            Arc::new(LaserStream),
            Schema::new(program),
        );
        std::iter::from_fn(|| reader.next_fact().transpose())
            .find_map(Result::err)
            .map(|e| (e.code, e.column))
    }

    #[test]
    fn laser_lines_with_a_declared_timeline() {
        let compiled = compile_str("p.tdl", "q(X, Y, T) :- p(X, Y, T). r(T) :- s(T).");
        let text = "#timeline 0 9\n# note\n1: p(a,2) s\n\n3:\n4: s p(\"x\",-2.5) unknown(z)\n";
        let mut reader = FactReader::new(
            text.as_bytes(),
            "in.laser",
            formats().for_path("in.laser"),
            Schema::new(&compiled.program),
        );
        let facts = read_all(&mut reader, &compiled.program);
        assert_eq!(reader.declared_timeline(), Some((0, 9)));
        assert_eq!(reader.skipped.unknown, 1);
        assert_eq!(
            facts,
            [
                ("p".to_owned(), vec![Value::sym("a"), Value::Int(2)], 1),
                ("s".to_owned(), vec![], 1),
                ("s".to_owned(), vec![], 4),
                (
                    "p".to_owned(),
                    vec![Value::sym("\"x\""), Value::Float(-2.5)],
                    4
                ),
            ]
        );
        for (bad, column) in [
            ("1: p(a,b\n", 9),
            ("x: p(a)\n", 1),
            ("1 p(a)\n", 1),
            ("2: p(a)\n#timeline 0 3\n", 1),
            ("#timeline 5\n", 10),
            ("1: p(a,,b)\n", 8),
        ] {
            assert_eq!(
                first_error(bad, &compiled.program),
                Some(("E101", column)),
                "{bad}"
            );
        }
    }

    #[test]
    fn iris_and_quoted_names_read_as_written() {
        let compiled = crate::compile_str(
            "p.lars",
            "h(X) :- 'http://ex.org/p#q'(X,Y)\nk(X) :- 'p*2'(X)\n",
        );
        assert!(
            !compiled.has_errors(),
            "{}",
            compiled.render_diagnostics(false)
        );
        let text = "#timeline 0 3\n1: http://ex.org/p#q(http://ex.org/s0,o1) p*2(a)\n2: 'p*2'(b) 'http://ex.org/p#q'(s,7)\n";
        let mut reader = FactReader::new(
            text.as_bytes(),
            "in.laser",
            Arc::new(LaserStream),
            Schema::new(&compiled.program),
        );
        let facts = read_all(&mut reader, &compiled.program);
        assert_eq!(
            facts,
            [
                (
                    "http://ex.org/p#q".to_owned(),
                    vec![Value::sym("http://ex.org/s0"), Value::sym("o1")],
                    1
                ),
                ("p*2".to_owned(), vec![Value::sym("a")], 1),
                ("p*2".to_owned(), vec![Value::sym("b")], 2),
                (
                    "http://ex.org/p#q".to_owned(),
                    vec![Value::sym("s"), Value::Int(7)],
                    2
                ),
            ]
        );
        for bad in ["1: 7p(a)\n", "1: 'p(a)\n"] {
            assert_eq!(
                first_error(bad, &compiled.program).map(|(code, _)| code),
                Some("E101"),
                "{bad}"
            );
        }
    }

    fn laser_line(time: u64) -> impl Strategy<Value = String> {
        let back = time.saturating_sub(2);
        prop_oneof![
            6 => proptest::collection::vec(0..4u8, 0..4).prop_map(move |atoms| {
                let atoms: Vec<String> = atoms
                    .iter()
                    .map(|a| match a {
                        0 => "s".to_owned(),
                        1 => format!("p(a,{a})"),
                        2 => "u(1)".to_owned(),
                        _ => "p(b,c)".to_owned(),
                    })
                    .collect();
                format!("{time}: {}", atoms.join(" "))
            }),
            1 => Just("# a comment".to_owned()),
            1 => Just(format!("#timeline 0 {}", time + 5)),
            1 => Just(format!("{back}: s")),
            1 => Just(format!("{time}: p(a")),
        ]
    }

    /// Laser lines at times that mostly stay or move on by one.
    fn laser_stream() -> impl Strategy<Value = String> {
        proptest::collection::vec(0..3u64, 0..40).prop_flat_map(|steps| {
            let mut time = 0;
            let lines: Vec<BoxedStrategy<String>> = steps
                .iter()
                .map(|step| {
                    time += u64::from(*step == 2);
                    laser_line(time).boxed()
                })
                .collect();
            lines.prop_map(|lines| lines.join("\n") + "\n")
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]

        /// Cut into blocks of a few bytes and parsed on 1–3 threads, a Laser stream
        /// reads as line by line: the same facts, error, skip counts and timeline (a
        /// `#timeline` after the first time point is an error in both).
        #[test]
        fn laser_streams_read_alike_in_blocks_and_line_by_line(
            text in laser_stream(),
            threads in 1..4usize,
            block_bytes in 1..80usize,
            strict in any::<bool>(),
        ) {
            let compiled = compile_str("p.tdl", "q(X, Y, T) :- p(X, Y, T). r(T) :- s(T).");
            let like = FactReader::new(std::io::empty(), "in", Arc::new(LaserStream), Schema::new(&compiled.program))
                .with_tolerance(Tolerance { strict, ..Tolerance::default() });
            let parallelism = Parallelism { threads, block_bytes };
            compare_with_sequential(&text, &like, parallelism).map_err(TestCaseError::fail)?;
        }
    }
}
