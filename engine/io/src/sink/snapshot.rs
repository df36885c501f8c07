//! The output mode a front end adds ([`Snapshot`]): each time point written whole from
//! the texts of every fact that holds, kept sorted from one time point to the next.

use std::io::{self, Write};

use stgflow_lang::ir::PredId;
use stgflow_lang::value::Value;

use super::{Mode, Sink};

/// An output mode a front end adds: each time point is written whole, from every fact
/// that holds at it (another reasoner's own output, to `diff` against it).
///
/// A line lists the texts of the facts that hold, sorted as bytes. The sink keeps those
/// texts sorted from one time point to the next and changes them only where a fact starts
/// or stops holding: a line costs its bytes, not a sort of everything that holds (a line
/// lists every fact in the window, most of which did not change).
pub trait Snapshot: Send + Sync + std::fmt::Debug {
    /// Appends the text of one fact, its predicate's name and its arguments, to `out`.
    fn atom(&self, name: &str, args: &[Value], out: &mut Vec<u8>);

    /// Appends the start of the line of the time point printed as `shown` (the time point
    /// times the sink's time scale) to `line`. The sink then appends, for every fact that
    /// holds there in the byte order of their texts, [`Snapshot::separator`] and the
    /// fact's text, and ends the line with [`Snapshot::end`].
    fn start(&self, shown: u64, line: &mut Vec<u8>);

    /// What goes before each fact's text.
    fn separator(&self) -> &'static [u8];

    /// What ends a line.
    fn end(&self) -> &'static [u8];
}

impl<W: Write> Sink<W> {
    /// Whether the changes of a time point may come to [`Sink::emit_sorted`] in any order
    /// and not consolidated (a fact's changes within it adding up to its net change): a
    /// [`Snapshot`] counts each fact's changes itself, and orders them itself.
    pub fn in_any_order(&self) -> bool {
        matches!(self.mode, Mode::Snapshot(_))
    }

    /// Whether the sink counts each fact's changes and prints the fact while its count
    /// is positive, once: its changes need not be 0/1 (a [`Snapshot`]'s texts count, see
    /// `texts`). A fact may then come with a count for each reason it holds (each point
    /// of it in a ♢ window), and its changes from several workers.
    pub fn counts_holding(&self) -> bool {
        matches!(self.mode, Mode::Snapshot(_))
    }

    /// Where the sink counts ([`Sink::counts_holding`]): the facts of each predicate with
    /// a hold here come as points, +n at the time point t a fact is given at, and the sink
    /// takes each back itself at t + hold (a ♢ window of hold − 1 over them, whose
    /// retractions the workers then neither make nor send). Such a predicate must have no
    /// other changes (an input fact's −1, say), every change of its facts being +n.
    pub fn retract_points(&mut self, holds: Vec<Option<u64>>) {
        if self.counts_holding() {
            self.point_holds = holds;
        }
    }

    /// The changes at `t` for [`Mode::Snapshot`], in any order: each fact's text counted
    /// in (+) or out (−), then the time point's line where it is printed.
    pub(super) fn write_snapshot_changes<'a>(
        &mut self,
        t: u64,
        changes: impl Iterator<Item = (PredId, &'a [Value], isize)>,
    ) -> io::Result<()> {
        let Mode::Snapshot(snapshot) = &self.mode else {
            return Ok(());
        };
        for (pred, args, diff) in changes {
            let name = &self.names[pred];
            let render = |text: &mut Vec<u8>| snapshot.atom(name, args, text);
            match self.point_holds.get(pred).copied().flatten() {
                Some(hold) if diff > 0 => {
                    let until = t.saturating_add(hold);
                    self.snapshot.change_point(pred, args, diff, until, render);
                }
                _ => self.snapshot.change(pred, args, diff, render),
            }
        }
        self.snapshot.retract(t);
        self.last_time = Some(t);
        if !self.printed(t) {
            return Ok(());
        }
        self.line.clear();
        self.keyed_start(0);
        self.write_snapshot(t)?;
        self.keyed_time_point(0);
        self.out.write_all(&self.line)?;
        if self.flush_each {
            self.flush()?;
        }
        Ok(())
    }

    /// The time point's line for [`Mode::Snapshot`]: its start and its texts written out,
    /// straight from where they are kept (not copied into the line buffer first), its end
    /// left in the line buffer; all of it there for a worker's keyed lines.
    fn write_snapshot(&mut self, t: u64) -> io::Result<()> {
        let Mode::Snapshot(snapshot) = &self.mode else {
            return Ok(());
        };
        snapshot.start(t.saturating_mul(self.time_scale), &mut self.line);
        let texts = self.snapshot.line();
        if self.keyed.is_some() {
            self.line.extend_from_slice(texts);
        } else {
            self.out.write_all(&self.line)?;
            self.out.write_all(texts)?;
            self.line.clear();
        }
        self.line.extend_from_slice(snapshot.end());
        Ok(())
    }
}
