//! Stream formats other reasoners read, and conversion from TD facts into them.
//!
//! * [`Format::Td`] — `p(a,b,7).`, the time last (stgflow's own).
//! * [`Format::Laser`] — the Laser reasoner's stream files: `#timeline START END`, then one
//!   line per time point of the timeline, `7: p(a,b) q(c) s` (`7:` alone when nothing
//!   arrives; 0-ary atoms bare).
//! * [`Format::Rtec`] — RTEC's pipe-separated input, every fact as an event
//!   `name|arrival|time|arg…` with the arrival equal to the time.
//!
//! [`Converter`] turns facts into a format as they come, so a generator can write 10⁸
//! facts in any format without holding them; [`ConvertingWriter`] wraps it as a
//! [`Write`] that takes TD text, which is how the generators use it. [`parse_td`] reads
//! TD facts as users write them (several per line, spaces, `%` comments, quoted strings).
//!
//! Pitfall: a Laser stream's header needs the timeline before the first fact, so a
//! Laser [`Converter`] is given the timeline up front; time points with no facts in it
//! still get their `t:` line, and a fact outside it is an error rather than a silently
//! different stream.

use std::io::{self, Write};

/// A stream format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Td,
    Laser,
    Rtec,
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "td" => Ok(Format::Td),
            "laser" => Ok(Format::Laser),
            "rtec" => Ok(Format::Rtec),
            _ => Err(format!(
                "unknown stream format `{s}` (expected td, laser or rtec)"
            )),
        }
    }
}

/// A TD fact as text: the predicate, the object arguments as written, the time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fact<'a> {
    pub pred: &'a str,
    pub args: Vec<&'a str>,
    pub time: u64,
}

/// A TD stream that does not parse, or a fact a format cannot hold.
#[derive(Debug, thiserror::Error)]
pub enum ConvertError {
    #[error("line {line}, column {column}: {message}")]
    Syntax {
        line: usize,
        column: usize,
        message: String,
    },
    #[error("a fact at time {time} is outside the timeline [{from}, {until}]")]
    OutsideTimeline { time: u64, from: u64, until: u64 },
    #[error("time goes backwards: {time} after {previous}")]
    Backwards { time: u64, previous: u64 },
    #[error("the Laser format needs the timeline (first and last time point)")]
    NoTimeline,
    #[error("cannot write the stream: {0}")]
    Io(#[from] io::Error),
}

/// Parses TD facts: `pred(arg, …, TIME).`, any number per line, `%` comments.
pub fn parse_td(text: &str) -> Result<Vec<Fact<'_>>, ConvertError> {
    let mut facts = Vec::new();
    for (n, line) in text.lines().enumerate() {
        parse_td_line(line, n + 1, &mut facts)?;
    }
    Ok(facts)
}

fn parse_td_line<'a>(
    line: &'a str,
    number: usize,
    facts: &mut Vec<Fact<'a>>,
) -> Result<(), ConvertError> {
    let error = |at: usize, message: &str| ConvertError::Syntax {
        line: number,
        column: line[..at.min(line.len())].chars().count() + 1,
        message: message.to_owned(),
    };
    let bytes = line.as_bytes();
    let mut at = 0;
    let skip_space = |at: &mut usize| {
        while *at < bytes.len() && bytes[*at].is_ascii_whitespace() {
            *at += 1;
        }
    };
    loop {
        skip_space(&mut at);
        if at >= bytes.len() || bytes[at] == b'%' {
            return Ok(());
        }
        let start = at;
        while at < bytes.len() && (bytes[at].is_ascii_alphanumeric() || bytes[at] == b'_') {
            at += 1;
        }
        if at == start {
            return Err(error(at, "expected a predicate name"));
        }
        let pred = &line[start..at];
        skip_space(&mut at);
        if bytes.get(at) != Some(&b'(') {
            return Err(error(at, "expected `(` after the predicate name"));
        }
        at += 1;
        let mut args = Vec::new();
        loop {
            skip_space(&mut at);
            let start = at;
            if bytes.get(at) == Some(&b'"') {
                at += 1;
                while at < bytes.len() && bytes[at] != b'"' {
                    at += if bytes[at] == b'\\' { 2 } else { 1 };
                }
                if at >= bytes.len() {
                    return Err(error(start, "unterminated string"));
                }
                at += 1;
            } else {
                while at < bytes.len()
                    && !matches!(bytes[at], b',' | b')')
                    && !bytes[at].is_ascii_whitespace()
                {
                    at += 1;
                }
            }
            if at == start {
                return Err(error(at, "expected an argument"));
            }
            args.push(&line[start..at]);
            skip_space(&mut at);
            match bytes.get(at) {
                Some(b',') => at += 1,
                Some(b')') => {
                    at += 1;
                    break;
                }
                _ => return Err(error(at, "expected `,` or `)`")),
            }
        }
        skip_space(&mut at);
        if bytes.get(at) != Some(&b'.') {
            return Err(error(at, "expected `.` after the fact"));
        }
        at += 1;
        let time_text = args.pop().unwrap_or_default();
        let time = time_text.parse().map_err(|_| {
            error(
                start,
                "the last argument must be the time, a natural number",
            )
        })?;
        facts.push(Fact { pred, args, time });
    }
}

/// Writes facts in a format as they come, in time order.
#[derive(Debug)]
pub struct Converter<W: Write> {
    format: Format,
    out: W,
    timeline: Option<(u64, u64)>,
    /// The time point whose line is open (Laser), or of the last fact.
    current: Option<u64>,
    line: Vec<u8>,
}

impl<W: Write> Converter<W> {
    /// A converter to `format`; the Laser format needs `timeline` (first, last).
    pub fn new(format: Format, out: W, timeline: Option<(u64, u64)>) -> Result<Self, ConvertError> {
        let mut converter = Converter {
            format,
            out,
            timeline,
            current: None,
            line: Vec::with_capacity(1 << 16),
        };
        if format == Format::Laser {
            let (from, until) = timeline.ok_or(ConvertError::NoTimeline)?;
            writeln!(converter.out, "#timeline {from} {until}")?;
        }
        Ok(converter)
    }

    pub fn push(&mut self, fact: &Fact<'_>) -> Result<(), ConvertError> {
        if let Some(previous) = self.current
            && fact.time < previous
        {
            return Err(ConvertError::Backwards {
                time: fact.time,
                previous,
            });
        }
        if let Some((from, until)) = self.timeline
            && !(from..=until).contains(&fact.time)
        {
            return Err(ConvertError::OutsideTimeline {
                time: fact.time,
                from,
                until,
            });
        }
        match self.format {
            Format::Td => {
                self.line.extend_from_slice(fact.pred.as_bytes());
                self.line.push(b'(');
                for arg in &fact.args {
                    self.line.extend_from_slice(arg.as_bytes());
                    self.line.push(b',');
                }
                self.line
                    .extend_from_slice(fact.time.to_string().as_bytes());
                self.line.extend_from_slice(b").\n");
            }
            Format::Rtec => {
                let time = fact.time.to_string();
                self.line.extend_from_slice(fact.pred.as_bytes());
                for part in [time.as_str(), time.as_str()]
                    .into_iter()
                    .chain(fact.args.iter().copied())
                {
                    self.line.push(b'|');
                    self.line.extend_from_slice(part.as_bytes());
                }
                self.line.push(b'\n');
            }
            Format::Laser => {
                self.open_laser_line(fact.time)?;
                self.line.push(b' ');
                self.line.extend_from_slice(fact.pred.as_bytes());
                if !fact.args.is_empty() {
                    self.line.push(b'(');
                    self.line.extend_from_slice(fact.args.join(",").as_bytes());
                    self.line.push(b')');
                }
            }
        }
        self.current = Some(fact.time);
        if self.line.len() >= 1 << 16 {
            self.out.write_all(&self.line)?;
            self.line.clear();
        }
        Ok(())
    }

    /// Ends the open Laser lines up to `time` (empty ones included) and opens `time`'s.
    fn open_laser_line(&mut self, time: u64) -> Result<(), ConvertError> {
        let first = match self.current {
            Some(current) if current == time => return Ok(()),
            Some(current) => {
                self.line.push(b'\n');
                current + 1
            }
            None => self.timeline.ok_or(ConvertError::NoTimeline)?.0,
        };
        for empty in first..time {
            self.line
                .extend_from_slice(format!("{empty}:\n").as_bytes());
            if self.line.len() >= 1 << 16 {
                self.out.write_all(&self.line)?;
                self.line.clear();
            }
        }
        self.line.extend_from_slice(format!("{time}:").as_bytes());
        Ok(())
    }

    /// Writes what is left (the empty Laser lines up to the end of the timeline too).
    pub fn finish(mut self) -> Result<W, ConvertError> {
        if self.format == Format::Laser
            && let Some((from, until)) = self.timeline
        {
            let next = match self.current {
                Some(current) => {
                    self.line.push(b'\n');
                    current + 1
                }
                None => from,
            };
            for empty in next..=until {
                self.line
                    .extend_from_slice(format!("{empty}:\n").as_bytes());
            }
        }
        self.out.write_all(&self.line)?;
        self.out.flush()?;
        Ok(self.out)
    }
}

/// Converts a TD stream's text to `format`; the Laser timeline defaults to the first and
/// last time in the stream.
pub fn convert_td(
    text: &str,
    format: Format,
    timeline: Option<(u64, u64)>,
    out: impl Write,
) -> Result<usize, ConvertError> {
    let facts = parse_td(text)?;
    let timeline = match (format, timeline) {
        (Format::Laser, None) => {
            let first = facts.first().map_or(0, |f| f.time);
            Some((first, facts.iter().map(|f| f.time).max().unwrap_or(first)))
        }
        (_, timeline) => timeline,
    };
    let mut converter = Converter::new(format, out, timeline)?;
    for fact in &facts {
        converter.push(fact)?;
    }
    converter.finish()?;
    Ok(facts.len())
}

/// A [`Write`] that takes TD fact text (complete facts, any split into writes) and writes
/// it on in another format.
#[derive(Debug)]
pub struct ConvertingWriter<W: Write> {
    converter: Converter<W>,
    pending: Vec<u8>,
    line: usize,
}

impl<W: Write> ConvertingWriter<W> {
    pub fn new(format: Format, out: W, timeline: Option<(u64, u64)>) -> Result<Self, ConvertError> {
        Ok(ConvertingWriter {
            converter: Converter::new(format, out, timeline)?,
            pending: Vec::new(),
            line: 0,
        })
    }

    fn convert_line(&mut self, line: &[u8]) -> io::Result<()> {
        self.line += 1;
        let text =
            std::str::from_utf8(line).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
        let mut facts = Vec::new();
        parse_td_line(text, self.line, &mut facts).map_err(io::Error::other)?;
        for fact in &facts {
            self.converter.push(fact).map_err(|e| match e {
                ConvertError::Io(e) => e,
                other => io::Error::other(other),
            })?;
        }
        Ok(())
    }

    /// Converts a last line without a newline and ends the output.
    pub fn finish(mut self) -> Result<W, ConvertError> {
        if !self.pending.is_empty() {
            let line = std::mem::take(&mut self.pending);
            self.convert_line(&line)?;
        }
        self.converter.finish()
    }
}

impl<W: Write> Write for ConvertingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while let Some(newline) = rest.iter().position(|&b| b == b'\n') {
            if self.pending.is_empty() {
                self.convert_line(&rest[..newline])?;
            } else {
                self.pending.extend_from_slice(&rest[..newline]);
                let line = std::mem::take(&mut self.pending);
                self.convert_line(&line)?;
            }
            rest = &rest[newline + 1..];
        }
        self.pending.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const STREAM: &str = "p(a, b, 1). s(1).  % two facts\n\np(\"x y\",c,3).\n";

    #[test]
    fn td_facts_parse_with_spaces_comments_and_strings() {
        let facts = parse_td(STREAM).unwrap();
        assert_eq!(
            facts,
            vec![
                Fact {
                    pred: "p",
                    args: vec!["a", "b"],
                    time: 1
                },
                Fact {
                    pred: "s",
                    args: vec![],
                    time: 1
                },
                Fact {
                    pred: "p",
                    args: vec!["\"x y\"", "c"],
                    time: 3
                },
            ]
        );
    }

    #[test]
    fn td_syntax_errors_are_located() {
        let error = parse_td("p(a,1).\np(a,b 2).\n").unwrap_err().to_string();
        assert_eq!(error, "line 2, column 7: expected `,` or `)`");
        let error = parse_td("p(a,x).").unwrap_err().to_string();
        assert_eq!(
            error,
            "line 1, column 1: the last argument must be the time, a natural number"
        );
        let error = parse_td("p(a,1)").unwrap_err().to_string();
        assert_eq!(error, "line 1, column 7: expected `.` after the fact");
    }

    #[test]
    fn laser_lines_cover_the_whole_timeline() {
        let mut out = Vec::new();
        convert_td(STREAM, Format::Laser, Some((0, 4)), &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "#timeline 0 4\n0:\n1: p(a,b) s\n2:\n3: p(\"x y\",c)\n4:\n"
        );
    }

    #[test]
    fn laser_timeline_defaults_to_the_stream_and_outside_is_an_error() {
        let mut out = Vec::new();
        convert_td(STREAM, Format::Laser, None, &mut out).unwrap();
        assert!(
            String::from_utf8(out)
                .unwrap()
                .starts_with("#timeline 1 3\n1: p(a,b) s\n2:\n")
        );
        let error = convert_td(STREAM, Format::Laser, Some((2, 3)), Vec::new()).unwrap_err();
        assert_eq!(
            error.to_string(),
            "a fact at time 1 is outside the timeline [2, 3]"
        );
    }

    #[test]
    fn rtec_events_have_arrival_and_time() {
        let mut out = Vec::new();
        convert_td(STREAM, Format::Rtec, None, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "p|1|1|a|b\ns|1|1\np|3|3|\"x y\"|c\n"
        );
    }

    #[test]
    fn converting_writer_takes_facts_split_across_writes() {
        let mut writer = ConvertingWriter::new(Format::Rtec, Vec::new(), None).unwrap();
        writer.write_all(b"p(1,1,0).\np(2,").unwrap();
        writer.write_all(b"2,0).\np(3,3,1).").unwrap();
        let out = writer.finish().unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "p|0|0|1|1\np|0|0|2|2\np|1|1|3|3\n"
        );
    }

    #[test]
    fn time_going_backwards_is_an_error() {
        let error = convert_td("p(1).\np(0).\n", Format::Rtec, None, Vec::new()).unwrap_err();
        assert_eq!(error.to_string(), "time goes backwards: 0 after 1");
    }
}
