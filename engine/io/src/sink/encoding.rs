//! The three encodings of a line ([`Encoding`]: TD, CSV, JSON lines) and the lines of a
//! fact, at a time point or as a change, written in the sink's encoding.

use std::io::{self, Write};

use stgflow_lang::ir::PredId;
use stgflow_lang::value::Value;

use super::Sink;
use super::records::{Kind, push_record};
use super::values::{push_csv_value, push_json_value, push_u64, push_value};

/// How a line of output is written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Encoding {
    /// TD text: `p(a,4).`, `+p(a) @4`, `p(a) [4,6)`.
    #[default]
    Td,
    /// Comma-separated values after a header: the arguments, then the time (`a,4`), the
    /// time and the change (`a,4,1`), or the interval's ends (`a,4,6`).
    Csv,
    /// One JSON object per line: `{"time":4,"args":["a"]}`, with `"change":1` or −1, or
    /// `"start"` and `"end"` for an interval.
    Jsonl,
    /// Binary records for a caller in the same process, read back as typed columns
    /// ([`super::records`]); not a file format.
    Records,
}

impl Encoding {
    /// The encoding called `name` (`td`, `csv`, `jsonl`).
    pub fn named(name: &str) -> Option<Encoding> {
        match name {
            "td" => Some(Encoding::Td),
            "csv" => Some(Encoding::Csv),
            "jsonl" => Some(Encoding::Jsonl),
            _ => None,
        }
    }

    /// The ending of a file in this encoding.
    pub fn extension(self) -> &'static str {
        match self {
            Encoding::Td => "facts",
            Encoding::Csv => "csv",
            Encoding::Jsonl => "jsonl",
            Encoding::Records => "records",
        }
    }
}

impl<W: Write> Sink<W> {
    /// Appends the arguments in the sink's encoding: `a,b` in TD (after `p(`) and CSV, a
    /// JSON array otherwise.
    pub(super) fn write_args(&mut self, args: &[Value]) {
        match self.encoding {
            Encoding::Td => {
                for (i, value) in args.iter().enumerate() {
                    if i > 0 {
                        self.line.push(b',');
                    }
                    push_value(&mut self.line, *value);
                }
            }
            Encoding::Csv => {
                for value in args {
                    push_csv_value(&mut self.line, *value);
                    self.line.push(b',');
                }
            }
            Encoding::Jsonl => {
                self.line.extend_from_slice(b"\"args\":[");
                for (i, value) in args.iter().enumerate() {
                    if i > 0 {
                        self.line.push(b',');
                    }
                    push_json_value(&mut self.line, *value);
                }
                self.line.extend_from_slice(b"]}\n");
            }
            // A record writes its arguments itself.
            Encoding::Records => {}
        }
    }

    /// One line for `pred(args)`: a change at `t` (`diff` ±1), or the fact holding at `t`
    /// (`diff` 0).
    pub(super) fn fact_line(
        &mut self,
        pred: PredId,
        args: &[Value],
        t: u64,
        diff: isize,
    ) -> io::Result<()> {
        let start = self.line.len();
        let shown = t.saturating_mul(self.time_scale);
        match self.encoding {
            Encoding::Td if diff == 0 => {
                self.line.extend_from_slice(self.names[pred].as_bytes());
                self.line.push(b'(');
                for value in args {
                    push_value(&mut self.line, *value);
                    self.line.push(b',');
                }
                push_u64(&mut self.line, shown);
                self.line.extend_from_slice(b").\n");
            }
            Encoding::Td => {
                self.line.push(if diff > 0 { b'+' } else { b'-' });
                self.write_atom(pred, args);
                self.line.extend_from_slice(b" @");
                push_u64(&mut self.line, shown);
                self.line.push(b'\n');
            }
            Encoding::Csv => {
                self.write_args(args);
                push_u64(&mut self.line, shown);
                match diff {
                    0 => {}
                    d if d > 0 => self.line.extend_from_slice(b",1"),
                    _ => self.line.extend_from_slice(b",-1"),
                }
                self.line.push(b'\n');
            }
            Encoding::Jsonl => {
                self.line.extend_from_slice(b"{\"time\":");
                push_u64(&mut self.line, shown);
                match diff {
                    0 => self.line.push(b','),
                    d if d > 0 => self.line.extend_from_slice(b",\"change\":1,"),
                    _ => self.line.extend_from_slice(b",\"change\":-1,"),
                }
                self.write_args(args);
            }
            Encoding::Records => {
                let kind = match diff {
                    0 => Kind::Point,
                    d if d > 0 => Kind::Start,
                    _ => Kind::End,
                };
                push_record(&mut self.line, kind, (shown, 0), &self.names[pred], args);
            }
        }
        self.keyed_line(t, pred, args, None);
        self.end_line(pred, start)
    }

    /// Writes `pred(args)` (`pred` alone without arguments) into the line buffer.
    pub(super) fn write_atom(&mut self, pred: PredId, args: &[Value]) {
        self.line.extend_from_slice(self.names[pred].as_bytes());
        if args.is_empty() {
            return;
        }
        self.line.push(b'(');
        for (i, value) in args.iter().enumerate() {
            if i > 0 {
                self.line.push(b',');
            }
            push_value(&mut self.line, *value);
        }
        self.line.push(b')');
    }
}
