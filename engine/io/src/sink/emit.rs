//! What a sink is given, time point by time point: the facts that hold, their changes
//! (in any order, or in output order as the workers deliver them) and quiet stretches;
//! written from them as points or changes lines, and intervals closed.

use std::io::{self, Write};

use hashbrown::HashMap;

use stgflow_lang::ir::PredId;
use stgflow_lang::value::{Row, Value};

use super::values::push_u64;
use super::{Encoding, Mode, Sink};

impl<W: Write> Sink<W> {
    /// Records the facts that hold at `t` (any order, no duplicates). Time points must
    /// come in increasing order.
    pub fn emit(&mut self, t: u64, facts: Vec<(PredId, Row)>) -> io::Result<()> {
        let mut now: HashMap<(PredId, Row), ()> = facts.into_iter().map(|f| (f, ())).collect();
        let mut changes: Vec<((PredId, Row), isize)> = Vec::new();
        for fact in self.holding.keys() {
            if now.remove(fact).is_none() {
                changes.push((fact.clone(), -1));
            }
        }
        changes.extend(now.into_keys().map(|fact| (fact, 1)));
        if matches!(self.mode, Mode::Snapshot(_)) {
            // Its changes keep nothing per fact: what holds is kept here.
            for (fact, diff) in &changes {
                if *diff > 0 {
                    self.holding.insert(fact.clone(), t);
                } else {
                    self.holding.remove(fact);
                }
            }
        }
        self.emit_changes(t, changes)
    }

    /// Records what changed at `t`: +1 for a fact that starts to hold, −1 for one that
    /// stops. Time points must come in increasing order; every time point of the timeline
    /// must be given, with or without changes.
    pub fn emit_changes(
        &mut self,
        t: u64,
        mut changes: Vec<((PredId, Row), isize)>,
    ) -> io::Result<()> {
        changes.sort_unstable_by(|a, b| self.order(&a.0, &b.0).then(b.1.cmp(&a.1)));
        self.write_changes(t, changes)
    }

    /// [`Sink::emit_changes`] for changes already in output order.
    fn write_changes(&mut self, t: u64, changes: Vec<((PredId, Row), isize)>) -> io::Result<()> {
        if matches!(self.mode, Mode::Snapshot(_)) {
            let changes = changes
                .iter()
                .map(|((pred, row), diff)| (*pred, &row[..], *diff));
            return self.write_snapshot_changes(t, changes);
        }
        self.line.clear();
        self.keyed_start(0);
        let printed = self.printed(t);
        // The first time point printed after `print_from`: `changes` starts with what holds.
        let first = printed && !self.printing() && self.print_from.is_some();
        let lines = printed && !first;
        let mut closed: Vec<((PredId, Row), u64)> = Vec::new();
        for (fact, diff) in changes {
            if diff > 0 {
                let hashbrown::hash_map::Entry::Vacant(entry) = self.holding.entry(fact.clone())
                else {
                    continue;
                };
                entry.insert(t);
                if !matches!(self.mode, Mode::Changes) || !lines {
                    continue;
                }
                self.fact_line(fact.0, &fact.1, t, 1)?;
            } else {
                let Some(start) = self.holding.remove(&fact) else {
                    continue;
                };
                match self.mode {
                    Mode::Changes if lines => self.fact_line(fact.0, &fact.1, t, -1)?,
                    Mode::Intervals if printed => closed.push((fact, start)),
                    Mode::Points | Mode::Snapshot(_) | Mode::Changes | Mode::Intervals => {}
                }
            }
        }
        if first && matches!(self.mode, Mode::Changes) {
            self.write_holding(t, 1)?;
        }
        if !printed {
            self.passed(t);
            return Ok(());
        }
        match self.mode {
            Mode::Points => self.write_holding(t, 0)?,
            Mode::Intervals => {
                closed.sort_unstable_by(|a, b| a.1.cmp(&b.1).then_with(|| self.order(&a.0, &b.0)));
                for ((pred, args), start) in &closed {
                    self.write_interval(*pred, args, (*start, t), t)?;
                }
            }
            Mode::Snapshot(_) | Mode::Changes => {}
        }
        self.passed(t);
        self.keyed_time_point(0);
        self.out.write_all(&self.line)?;
        if self.flush_each {
            self.flush()?;
        }
        Ok(())
    }

    /// A line for every fact that holds, in output order, at `t` with change `diff` (0: a
    /// point).
    fn write_holding(&mut self, t: u64, diff: isize) -> io::Result<()> {
        // Out of `self` while its lines are written (each borrows `self`).
        let holding = std::mem::take(&mut self.holding);
        let mut facts: Vec<&(PredId, Row)> = holding.keys().collect();
        facts.sort_unstable_by(|a, b| self.order(a, b));
        let written = facts
            .into_iter()
            .try_for_each(|(pred, args)| self.fact_line(*pred, args, t, diff));
        self.holding = holding;
        written
    }

    /// Records what changed at `t`, given **consolidated and in output order**: each fact
    /// at most once, sorted by [`name_ranks`](super::name_ranks) of its predicate, then its
    /// arguments, with a difference of +1 when it starts to hold and −1 when it stops — as
    /// the dataflow runtime's workers deliver it. In `changes` mode the lines are written
    /// straight from the slice (nothing is kept per fact); a [`Snapshot`](super::Snapshot)
    /// takes them in any order and not consolidated ([`Sink::in_any_order`]); the other
    /// modes go through [`Sink::emit_changes`], without its sort.
    pub fn emit_sorted<'a>(
        &mut self,
        t: u64,
        changes: impl Iterator<Item = (PredId, &'a [Value], isize)>,
    ) -> io::Result<()> {
        if matches!(self.mode, Mode::Snapshot(_)) {
            return self.write_snapshot_changes(t, changes);
        }
        // Until `print_from` has been reached the facts are kept, to start from what holds.
        let keep = self.print_from.is_some() && !self.printing();
        if !matches!(self.mode, Mode::Changes) || keep {
            let owned = changes
                .map(|(pred, args, diff)| ((pred, Row::from(args)), diff))
                .collect();
            return self.write_changes(t, owned);
        }
        if !self.files.is_empty() || self.encoding == Encoding::Records {
            // A line at a time, through the encoding: a file's line goes to its
            // predicate's file as it is made (nothing is kept per fact, so a part's first
            // time point retracts what its warm-up made), a record to the output.
            self.line.clear();
            self.keyed_start(0);
            for (pred, args, diff) in changes {
                self.fact_line(pred, args, t, diff)?;
            }
            self.passed(t);
            self.keyed_time_point(0);
            self.out.write_all(&self.line)?;
            if self.flush_each {
                self.flush()?;
            }
            return Ok(());
        }
        self.line.clear();
        // ` @t` and the newline end every line of the time point: formatted once, at the
        // start of the buffer (not written), and copied from there.
        self.line.extend_from_slice(b" @");
        push_u64(&mut self.line, t.saturating_mul(self.time_scale));
        self.line.push(b'\n');
        let end = self.line.len();
        self.keyed_start(end);
        for (pred, args, diff) in changes {
            self.line.push(if diff > 0 { b'+' } else { b'-' });
            self.write_atom(pred, args);
            self.line.extend_from_within(..end);
            self.keyed_line(t, pred, args, None);
        }
        self.passed(t);
        self.keyed_time_point(end);
        self.out.write_all(&self.line[end..])?;
        if self.flush_each {
            self.out.flush()?;
        }
        Ok(())
    }

    /// Time points `from..to` have no changes: as [`Sink::emit_sorted`] with none at each,
    /// costing the lines it writes. Only `points` while something holds and a front
    /// end's snapshot write at every time point; otherwise a quiet stretch costs nothing
    /// per time point, however long (sparse timestamps: epoch milliseconds).
    pub fn quiet(&mut self, from: u64, to: u64) -> io::Result<()> {
        if from >= to {
            return Ok(());
        }
        if self.writes_every_point() && self.printed(to - 1) {
            for t in from..to {
                self.emit_sorted(t, std::iter::empty())?;
            }
            return Ok(());
        }
        // The first time point printed after `print_from` prints what holds then.
        let first = (self.print_from)
            .filter(|&p| !self.printing() && p < to)
            .map(|p| p.max(from));
        if let Some(first) = first {
            if from < first {
                self.passed(first - 1);
            }
            self.emit_sorted(first, std::iter::empty())?;
            return self.quiet(first + 1, to);
        }
        self.passed(to - 1);
        if self.flush_each {
            self.flush()?;
        }
        Ok(())
    }

    /// Whether a time point without changes writes lines: in `points` while something
    /// holds, and a front end's snapshot. A quiet stretch then costs its length, and is
    /// fed in short batches, so that a stop request is seen between them.
    pub fn writes_every_point(&self) -> bool {
        match self.mode {
            Mode::Snapshot(_) => true,
            Mode::Points => !self.holding.is_empty(),
            Mode::Changes | Mode::Intervals => false,
        }
    }

    /// Gives the sink the time points `from..to`: each with its changes among `updates`
    /// (sorted by time, then in output order, none before `from`; `change` takes one
    /// apart into its time, predicate, arguments and difference), the stretches between
    /// them each as one ([`Sink::quiet`]). `counted` is told each stretch of time points
    /// given. Returns how many of `updates` lie before `to`.
    pub fn emit_through<'u, U>(
        &mut self,
        (from, to): (u64, u64),
        updates: &'u [U],
        change: impl Fn(&'u U) -> (u64, PredId, &'u [Value], isize),
        mut counted: impl FnMut(u64, u64),
    ) -> io::Result<usize> {
        let (mut t, mut at) = (from, 0);
        while t < to {
            let start = at;
            while updates.get(at).is_some_and(|u| change(u).0 == t) {
                at += 1;
            }
            if start == at {
                let next = updates.get(at).map_or(to, |u| change(u).0.min(to));
                self.quiet(t, next)?;
                counted(t, next);
                t = next;
                continue;
            }
            let changes = updates[start..at].iter().map(|u| {
                let (_, pred, args, diff) = change(u);
                (pred, args, diff)
            });
            self.emit_sorted(t, changes)?;
            counted(t, t + 1);
            t += 1;
        }
        Ok(at)
    }

    /// Whether the sink writes changes (`+p(a) @t`), which it makes from what it is given
    /// alone, keeping nothing per fact.
    pub fn writes_changes(&self) -> bool {
        matches!(self.mode, Mode::Changes)
    }
}
