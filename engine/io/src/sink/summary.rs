//! An output a front end adds that is written whole at the end, from every interval of
//! the run ([`Summary`]): RTEC's recognitions (`--mode rtec`, `stgflow_ec::Recognitions`)
//! are one. The sink hands it each interval as it closes, then asks for its lines.

use std::io::{self, Write};

use stgflow_lang::ir::PredId;
use stgflow_lang::value::Value;

use super::Sink;

/// Intervals kept to the end and written then, as another reasoner writes them.
pub trait Summary: Send + Sync + std::fmt::Debug {
    /// One maximal interval [start, end) of `pred(args)`, in the input's units (time
    /// points × the sink's time scale); `open_at_the_end`: it still held at the end of
    /// the timeline, which ends it.
    fn interval(&mut self, pred: PredId, args: &[Value], span: (u64, u64), open_at_the_end: bool);

    /// Appends the summary's lines to `out`; `rank` orders predicates by name.
    fn write(&mut self, rank: &[usize], out: &mut Vec<u8>);
}

impl<W: Write> Sink<W> {
    /// Intervals (in [`Mode::Intervals`](super::Mode::Intervals)) are given to `summary`
    /// instead of written, and its lines written at the end.
    pub fn summarised(mut self, summary: Box<dyn Summary>) -> Sink<W> {
        self.summary = Some(summary);
        self
    }

    /// The lines of the [`Sink::summarised`] output, at the end.
    pub(super) fn write_summary(&mut self) -> io::Result<()> {
        let Some(mut summary) = self.summary.take() else {
            return Ok(());
        };
        self.line.clear();
        summary.write(&self.rank, &mut self.line);
        self.out.write_all(&self.line)
    }
}
