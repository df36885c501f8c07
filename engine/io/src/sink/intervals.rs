//! The lines of `intervals`: a fact's maximal interval, right-open, written when it
//! closes (or at the end of the output), or given to a [`super::Summary`].

use std::io::{self, Write};

use stgflow_lang::ir::PredId;
use stgflow_lang::value::Value;

use super::records::{Kind, push_record};
use super::values::push_u64;
use super::{Encoding, OPEN_AT_THE_END, Sink};

impl<W: Write> Sink<W> {
    /// The line of `pred(args)` over [start, end), written at time point `written` (the
    /// end of the output's: [`u64::MAX`]).
    pub(super) fn write_interval(
        &mut self,
        pred: PredId,
        args: &[Value],
        (start, end): (u64, u64),
        written: u64,
    ) -> io::Result<()> {
        let at = self.line.len();
        let began = start;
        let start = self.print_from.map_or(start, |from| start.max(from));
        if end <= start {
            return Ok(());
        }
        let scale = self.time_scale;
        let (start, end) = (start.saturating_mul(scale), end.saturating_mul(scale));
        if let Some(summary) = &mut self.summary {
            summary.interval(pred, args, (start, end), written == OPEN_AT_THE_END);
            return Ok(());
        }
        match self.encoding {
            Encoding::Td => {
                self.write_atom(pred, args);
                self.line.extend_from_slice(b" [");
                push_u64(&mut self.line, start);
                self.line.push(b',');
                push_u64(&mut self.line, end);
                self.line.extend_from_slice(b")\n");
            }
            Encoding::Csv => {
                self.write_args(args);
                push_u64(&mut self.line, start);
                self.line.push(b',');
                push_u64(&mut self.line, end);
                self.line.push(b'\n');
            }
            Encoding::Jsonl => {
                self.line.extend_from_slice(b"{\"start\":");
                push_u64(&mut self.line, start);
                self.line.extend_from_slice(b",\"end\":");
                push_u64(&mut self.line, end);
                self.line.push(b',');
                self.write_args(args);
            }
            Encoding::Records => {
                let name = &self.names[pred];
                push_record(&mut self.line, Kind::Interval, (start, end), name, args);
            }
        }
        self.keyed_line(written, pred, args, Some(began));
        self.end_line(pred, at)
    }
}
