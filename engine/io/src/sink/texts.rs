//! The texts of the facts that hold, kept in byte order from one time point to the next,
//! for a [`super::Snapshot`] line (Laser's output: at ♢10 over 100 new atoms per time
//! point, a line of 1,100 atoms of which 200 change; at ♢100, 10,100 of which 200).
//!
//! Each fact that holds has an id: its predicate and values, its text's bytes (buffers
//! reused once the fact stops holding) and its count (a line prints the text once while
//! the count is positive: a ♢ window's fact may count once per point of it in the window,
//! [`super::Sink::counts_holding`]), found by the hash of its predicate and values (its
//! text is made once, where it starts to hold: finding it by its text would make it again
//! for every change, and hash and compare its bytes). The ids in byte order (of their
//! texts, then by id) are a vector, and the last line's bytes are kept with where each
//! id's part of them ends. A time point's changes only count and collect; the line is
//! then made from the last one: its bytes between the changes copied in runs, the time
//! point's new texts (sorted, each placed by a search of the old order from the place of
//! the one before it) and the texts whose count changed written in, the texts that
//! stopped left out (their places found the same way, in their texts' order; texts
//! compared by their first 16 bytes first, since texts like `q(id1234…` share their first
//! 8). Each search tries the positions 0, 1, 3, 7, … past where the last one ended before
//! a binary search (`gallop`), not a binary search of the whole order per stopped text
//! and of the rest per new one: @100's texts that stop or start together are one run
//! (`q(T,…)` for one T), and ♢100's, sorted, within cache of each other. Writing every
//! text anew from its own buffer would read ten thousand buffers for a line at ♢100,
//! where two hundred texts change. Where the changes are many for the line's length (a
//! gate closing: every text stops), a search per change costs more than that, and the
//! line is written anew, text by text, without the ends. A search tree of the texts
//! (`BTreeMap`) would compare texts twenty-odd times per change and walk its nodes for
//! every line.

use std::collections::VecDeque;
use std::hash::BuildHasher;

use hashbrown::{DefaultHashBuilder, HashTable};
use stgflow_lang::ir::PredId;
use stgflow_lang::value::Value;

#[derive(Debug, Default)]
pub(super) struct SortedTexts {
    /// What goes before each text in a line.
    separator: &'static [u8],
    /// Each id's text as a line has it, after the separator, with zeros after it up to a
    /// multiple of [`CHUNK`] bytes: a line copies it in chunks of that constant size, not
    /// with a `memcpy` call per text of a dozen bytes. `lens` has how much of it counts.
    texts: Vec<Vec<u8>>,
    lens: Vec<usize>,
    /// Each id's text's first 16 bytes, big-endian (zeros after a shorter text): texts
    /// compare by them first, and by their bytes only where they are equal.
    prefixes: Vec<u128>,
    /// Each id's fact's count (the fact holds while it is positive); 0 for a free id or
    /// one whose fact stopped holding in this time point; below 0 only within a time
    /// point.
    counts: Vec<isize>,
    /// Each id's fact: its predicate and its values (buffers reused with the id).
    preds: Vec<PredId>,
    keys: Vec<Vec<Value>>,
    /// Ids of held facts by the hash of their predicate and values, and each id's hash.
    by_fact: HashTable<u32>,
    hashes: Vec<u64>,
    hasher: DefaultHashBuilder,
    /// Points to take back ([`SortedTexts::change_point`]): when, whose id, and how many,
    /// in runs each in time order (one per hold, as the points come in time order).
    retracting: Vec<VecDeque<(u64, u32, isize)>>,
    /// The held ids in their texts' byte order, as of the last line.
    order: Vec<u32>,
    /// The last line's bytes (each id's separator and text, in `order`), and where each
    /// id's part ends in them.
    body: Vec<u8>,
    ends: Vec<usize>,
    /// Whether `ends` are kept: only where the last line was made with few changes for
    /// its length (a line made with many writes its texts and nothing else).
    with_ends: bool,
    /// Ids of this time point's new facts, of facts that stopped holding, and of facts in
    /// `order` whose count changed sign but not to 0 (`recounted` marks them, by id).
    added: Vec<u32>,
    stopped: Vec<u32>,
    changed: Vec<u32>,
    recounted: Vec<bool>,
    /// Ids free for new facts (their buffers kept), and scratch for the next order, body
    /// and ends.
    free: Vec<u32>,
    next: Vec<u32>,
    next_body: Vec<u8>,
    next_ends: Vec<usize>,
    /// Scratch: the ids whose places a line searches for, in their texts' order.
    searched: Vec<u32>,
}

/// The bytes a line copies of a text at a time.
const CHUNK: usize = 16;

impl SortedTexts {
    /// No texts; a line puts `separator` before each.
    pub(super) fn new(separator: &'static [u8]) -> SortedTexts {
        SortedTexts {
            separator,
            ..SortedTexts::default()
        }
    }

    /// `diff` more of the fact `pred(args)` holds (less where it is negative); `render`
    /// appends its text, called only where the fact is new. A line prints the fact once
    /// while its count is positive, whatever the count. The changes of a time point may
    /// come in any order: a fact's count may dip below zero within it, and a fact that
    /// stops and starts again takes a new id. A fact whose count is still below zero when
    /// the line is made does not hold and is forgotten, as if 0. Facts are found by their
    /// predicate and values, not their texts: a fact's text is made once, when it starts
    /// to hold, not again for each change (two facts with one text are two ids next to
    /// each other in the order, and a line has that text twice).
    pub(super) fn change(
        &mut self,
        pred: PredId,
        args: &[Value],
        diff: isize,
        render: impl FnOnce(&mut Vec<u8>),
    ) {
        self.count_in(pred, args, diff, render);
    }

    /// `n` more of the fact `pred(args)` hold, as [`SortedTexts::change`], until the time
    /// point `until`, at which [`SortedTexts::retract`] takes them back by the fact's id,
    /// without finding it again (a ♢ window's point, its retraction made here: see
    /// [`super::Sink::retract_points`]). `until` is after the time point of the change.
    pub(super) fn change_point(
        &mut self,
        pred: PredId,
        args: &[Value],
        n: isize,
        until: u64,
        render: impl FnOnce(&mut Vec<u8>),
    ) {
        let Some(id) = self.count_in(pred, args, n, render) else {
            return;
        };
        let retracting = &mut self.retracting;
        match retracting
            .iter_mut()
            .find(|run| run.back().is_none_or(|back| back.0 <= until))
        {
            Some(run) => run.push_back((until, id, n)),
            None => retracting.push(VecDeque::from([(until, id, n)])),
        }
    }

    /// Takes back the points due at time point `time` or before
    /// ([`SortedTexts::change_point`]): a fact whose count comes to 0 stops holding.
    /// Called at every time point, after the points of the time points before it came in.
    pub(super) fn retract(&mut self, time: u64) {
        for run in &mut self.retracting {
            while let Some(&(_, id, n)) = run.front().filter(|(until, ..)| *until <= time) {
                run.pop_front();
                let count = &mut self.counts[id as usize];
                *count -= n;
                if *count == 0 {
                    // A count that comes to 0 has no point left to take back: the id is
                    // freed with the others that stopped.
                    let hash = self.hashes[id as usize];
                    if let Ok(entry) = self.by_fact.find_entry(hash, |&other| other == id) {
                        entry.remove();
                    }
                    self.stopped.push(id);
                }
            }
        }
    }

    /// [`SortedTexts::change`]: the id of the fact where it holds a count other than 0
    /// after the change.
    fn count_in(
        &mut self,
        pred: PredId,
        args: &[Value],
        diff: isize,
        render: impl FnOnce(&mut Vec<u8>),
    ) -> Option<u32> {
        if diff == 0 {
            return None;
        }
        let hash = fact_hash(&self.hasher, pred, args);
        let (keys, preds) = (&self.keys, &self.preds);
        let same = |&id: &u32| preds[id as usize] == pred && keys[id as usize] == args;
        if let Ok(entry) = self.by_fact.find_entry(hash, same) {
            let id = *entry.get();
            let count = &mut self.counts[id as usize];
            let held = *count > 0;
            *count += diff;
            if *count == 0 {
                // It stops holding: it leaves the table, so starting again it takes a
                // new id.
                entry.remove();
                self.stopped.push(id);
                return None;
            }
            if (*count > 0) != held {
                self.recount(id);
            }
            return Some(id);
        }
        let id = match self.free.pop() {
            Some(id) => id,
            None => {
                self.texts.push(Vec::new());
                self.lens.push(0);
                self.prefixes.push(0);
                self.counts.push(0);
                self.recounted.push(false);
                self.keys.push(Vec::new());
                self.preds.push(0);
                self.hashes.push(0);
                u32::try_from(self.texts.len() - 1).unwrap_or(u32::MAX)
            }
        };
        let key = &mut self.keys[id as usize];
        key.clear();
        key.extend_from_slice(args);
        self.preds[id as usize] = pred;
        let buffer = &mut self.texts[id as usize];
        buffer.clear();
        buffer.extend_from_slice(self.separator);
        render(buffer);
        self.lens[id as usize] = buffer.len();
        let text = &buffer[self.separator.len()..];
        let mut prefix = [0; 16];
        let first = text.len().min(16);
        prefix[..first].copy_from_slice(&text[..first]);
        self.prefixes[id as usize] = u128::from_be_bytes(prefix);
        buffer.resize(buffer.len().next_multiple_of(CHUNK), 0);
        self.counts[id as usize] = diff;
        self.hashes[id as usize] = hash;
        let hashes = &self.hashes;
        self.by_fact
            .insert_unique(hash, id, |&id| hashes[id as usize]);
        self.added.push(id);
        Some(id)
    }

    /// Marks `id`, whose count changed sign but not to 0, for the next line (a text new
    /// at this time point is written whole anyway).
    fn recount(&mut self, id: u32) {
        if let Some(marked) = self.recounted.get_mut(id as usize) {
            if !*marked {
                *marked = true;
                self.changed.push(id);
            }
        }
    }

    /// For every fact that holds, the separator and its text, in byte order.
    pub(super) fn line(&mut self) -> &[u8] {
        if !self.added.is_empty() || !self.stopped.is_empty() || !self.changed.is_empty() {
            self.rebuild();
        }
        &self.body
    }

    /// Takes this time point's changes into the order, the line's bytes and their ends
    /// (see the module docs): the old order's positions that change (a text stopped, or
    /// its count changed) found by searches in their texts' order (`gallop`), like the
    /// new texts' places, and everything between them copied in bulk.
    fn rebuild(&mut self) {
        let (texts, lens, skip) = (&self.texts, &self.lens, self.separator.len());
        let prefixes = &self.prefixes;
        let cmp = |a: &u32, b: &u32| {
            (prefixes[*a as usize].cmp(&prefixes[*b as usize]))
                .then_with(|| text_of(texts, lens, skip, *a).cmp(text_of(texts, lens, skip, *b)))
                // Two facts with one text: by id, so that each has one place in the order.
                .then(a.cmp(b))
        };
        // A text that started and stopped within the time point is in neither; one whose
        // count is below 0 is forgotten.
        let (counts, by_fact, hashes) = (&mut self.counts, &mut self.by_fact, &self.hashes);
        let free = &mut self.free;
        self.added.retain(|&id| {
            let count = &mut counts[id as usize];
            if *count < 0 {
                let hash = hashes[id as usize];
                if let Ok(entry) = by_fact.find_entry(hash, |&other| other == id) {
                    entry.remove();
                }
                *count = 0;
                free.push(id);
            }
            *count > 0
        });
        let counts = &self.counts;
        self.added.sort_unstable_by(cmp);
        let order = &self.order;
        // Few changes for the line's length: the changed positions found by searches
        // (each about the logarithm of the gap between changes) and the rest copied in
        // bulk; else every text written anew, which costs less than a search per change
        // (a gate closing: every text stops). With `gallop`'s searches ♢10's lines
        // (1,100 texts, 200 changes) are copied in bulk.
        let changes = self.stopped.len() + self.changed.len() + self.added.len();
        let gap = order.len() / changes.max(1) + 1;
        let searches = changes * (usize::BITS - gap.leading_zeros()) as usize;
        let few = searches < order.len();
        let in_bulk = few && self.with_ends;
        // The changed positions, searched for in their texts' order, each search from
        // where the last one ended.
        let mut marked = Vec::new();
        if in_bulk {
            let searched = &mut self.searched;
            searched.clear();
            searched.extend(self.stopped.iter().chain(&self.changed));
            searched.sort_unstable_by(cmp);
            let mut from = 0;
            for id in searched.iter() {
                let at = gallop(order, from, |old| cmp(old, id).is_lt());
                if order.get(at) == Some(id) {
                    marked.push(at);
                }
                from = at;
            }
            marked.dedup();
        }
        // The new line is at most the old one and the new and recounted texts that now
        // hold, and its last text's chunks reach at most one chunk past its end: the
        // buffer is that long before the copies, which need not check for room.
        let grown: usize = (self.added.iter().chain(&self.changed))
            .filter(|&&id| counts[id as usize] > 0)
            .map(|&id| lens[id as usize])
            .sum();
        self.next_body.resize(self.body.len() + grown + CHUNK, 0);
        let mut line = Line {
            texts,
            lens,
            counts,
            order,
            body: &self.body,
            ends: &self.ends,
            next_order: &mut self.next,
            next_body: &mut self.next_body,
            written: 0,
            next_ends: &mut self.next_ends,
            with_ends: few,
            copied: 0,
        };
        line.next_order.clear();
        line.next_ends.clear();
        let (mut marks, mut from) = (marked.into_iter().peekable(), 0);
        for &id in &self.added {
            let at = gallop(order, from, |old| cmp(old, &id).is_lt());
            if in_bulk {
                while let Some(mark) = marks.next_if(|&mark| mark < at) {
                    line.change(mark);
                }
                line.copy_to(at);
            } else {
                line.rewrite(from..at);
            }
            line.write(id);
            from = at;
        }
        if in_bulk {
            for mark in marks {
                line.change(mark);
            }
            line.copy_to(order.len());
        } else {
            line.rewrite(from..order.len());
        }
        let written = line.written;
        self.next_body.truncate(written);
        std::mem::swap(&mut self.order, &mut self.next);
        std::mem::swap(&mut self.body, &mut self.next_body);
        std::mem::swap(&mut self.ends, &mut self.next_ends);
        self.with_ends = few;
        self.added.clear();
        for id in self.changed.drain(..) {
            self.recounted[id as usize] = false;
        }
        // A text that stops leaves the table, so starting again it takes a new id.
        self.free.append(&mut self.stopped);
    }
}

/// The next line as [`SortedTexts::rebuild`] makes it from the last: the old order's
/// positions before `copied` are taken.
struct Line<'a> {
    texts: &'a [Vec<u8>],
    lens: &'a [usize],
    counts: &'a [isize],
    order: &'a [u32],
    body: &'a [u8],
    ends: &'a [usize],
    next_order: &'a mut Vec<u32>,
    /// The new line's bytes, the first `written` of them so far: long enough for the
    /// whole line and one chunk more (see [`SortedTexts::rebuild`]).
    next_body: &'a mut Vec<u8>,
    written: usize,
    next_ends: &'a mut Vec<usize>,
    /// Whether the new line's ends are kept.
    with_ends: bool,
    copied: usize,
}

impl Line<'_> {
    /// Where the old line's part for `position` starts.
    fn start(&self, position: usize) -> usize {
        position.checked_sub(1).map_or(0, |p| self.ends[p])
    }

    /// Copies the old order's positions from `copied` up to `to`, unchanged: their ids,
    /// their bytes and their ends (shifted by what the new line gained or lost before
    /// them), each in one go.
    fn copy_to(&mut self, to: usize) {
        if to <= self.copied {
            return;
        }
        let (from, until) = (self.start(self.copied), self.start(to));
        let shift = self.written.wrapping_sub(from);
        self.next_order
            .extend_from_slice(&self.order[self.copied..to]);
        let at = self.written;
        self.written += until - from;
        self.next_body[at..self.written].copy_from_slice(&self.body[from..until]);
        (self.next_ends).extend(
            self.ends[self.copied..to]
                .iter()
                .map(|&end| end.wrapping_add(shift)),
        );
        self.copied = to;
    }

    /// Writes the texts of the old order's positions `positions` anew, those still held.
    fn rewrite(&mut self, positions: std::ops::Range<usize>) {
        for &id in &self.order[positions.clone()] {
            if self.counts[id as usize] > 0 {
                self.write(id);
            }
        }
        self.copied = positions.end;
    }

    /// The old order's position `position`, which changed: left out where its text
    /// stopped, written anew where its count changed.
    fn change(&mut self, position: usize) {
        self.copy_to(position);
        let id = self.order[position];
        if self.counts[id as usize] > 0 {
            self.write(id);
        }
        self.copied = position + 1;
    }

    /// Writes `id`'s separator and text (a fact that holds): its chunks whole, each a
    /// copy of a constant size, the next text overwriting the zeros past its end.
    fn write(&mut self, id: u32) {
        let (padded, len) = (&self.texts[id as usize], self.lens[id as usize]);
        let at = self.written;
        let room = &mut self.next_body[at..at + padded.len()];
        for (to, chunk) in room.chunks_exact_mut(CHUNK).zip(padded.chunks_exact(CHUNK)) {
            to.copy_from_slice(chunk);
        }
        self.written = at + len;
        self.next_order.push(id);
        if self.with_ends {
            self.next_ends.push(self.written);
        }
    }
}

/// The hash a fact `pred(args)` is found by in [`SortedTexts::by_fact`].
fn fact_hash(hasher: &DefaultHashBuilder, pred: PredId, args: &[Value]) -> u64 {
    hasher.hash_one((pred, args))
}

/// The first position at or after `from` in `order` whose id is not `before` (`order`
/// partitioned by `before` from `from` on): positions `from`, `from + 1`, `from + 3`, …
/// tried until one is not before, then a binary search between the last two. A search
/// that ends near where the last one did, as the searches of a time point's changes in
/// their texts' order do, costs a comparison or two, not a search of the whole order:
/// @100's texts that stop together are one run, `q(T,…)` for one T, as are those that
/// start together.
fn gallop(order: &[u32], from: usize, before: impl Fn(&u32) -> bool) -> usize {
    let (mut low, mut step) = (from, 1);
    let high = loop {
        let probe = from.saturating_add(step - 1);
        match order.get(probe) {
            Some(id) if before(id) => {
                low = probe + 1;
                step = step.saturating_mul(2);
            }
            Some(_) => break probe,
            None => break order.len(),
        }
    };
    let low = low.min(high);
    low + order[low..high].partition_point(before)
}

/// The text of `id` in `texts` (see [`SortedTexts::texts`]): `lens[id]` bytes, the first
/// `skip` (the separator) left out.
fn text_of<'t>(texts: &'t [Vec<u8>], lens: &[usize], skip: usize, id: u32) -> &'t [u8] {
    let id = id as usize;
    texts[id].get(skip..lens[id]).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BTreeMap;

    /// Runs `points` of changes (a fact's number, and whether one more or one fewer of it
    /// holds, in any order: a fact's count may dip below 0 within a time point, and rise
    /// past 1) through [`SortedTexts`], the facts' texts made by `text` (two facts may have
    /// one text): each line is the sorted texts of the facts whose count is positive, each
    /// fact's once, a fact's count below 0 at the end of a time point forgotten.
    fn check(
        points: Vec<Vec<(u16, bool)>>,
        text: impl Fn(u16) -> Vec<u8>,
    ) -> Result<(), TestCaseError> {
        let mut texts = SortedTexts::new(b" ");
        let mut facts: BTreeMap<u16, isize> = BTreeMap::new();
        for changes in points {
            for (n, add) in changes {
                let diff = if add { 1 } else { -1 };
                // Facts of two predicates, one of them with two values.
                let (pred, args) = match n % 2 {
                    0 => (0, vec![Value::Int(i64::from(n))]),
                    _ => (1, vec![Value::sym(&format!("a{n}")), Value::Int(7)]),
                };
                texts.change(pred, &args, diff, |line| line.extend(text(n)));
                *facts.entry(n).or_default() += diff;
            }
            facts.retain(|_, count| *count > 0);
            let line = texts.line().to_vec();
            let mut reference: Vec<Vec<u8>> = facts.keys().map(|&n| text(n)).collect();
            reference.sort();
            let mut want = Vec::new();
            for text in &reference {
                want.push(b' ');
                want.extend_from_slice(text);
            }
            prop_assert_eq!(
                String::from_utf8_lossy(&line),
                String::from_utf8_lossy(&want)
            );
        }
        Ok(())
    }

    /// Time points of points (a fact's number and how many times it is given there),
    /// each taken back `hold` time points later by [`SortedTexts::retract`], facts 10 and
    /// 11 with one text: each line is the sorted texts of the facts given within the last
    /// `hold` time points, each fact's once.
    fn check_points(points: Vec<Vec<(u16, isize)>>, hold: u64) -> Result<(), TestCaseError> {
        let text = |n: u16| format!("p(a{})", n.min(10)).into_bytes();
        let mut texts = SortedTexts::new(b" ");
        for (t, given) in points.iter().enumerate() {
            let t = t as u64;
            for &(n, copies) in given {
                let args = [Value::Int(i64::from(n))];
                texts.change_point(0, &args, copies, t + hold, |line| line.extend(text(n)));
            }
            texts.retract(t);
            let line = texts.line().to_vec();
            let recent = points[(t + 1).saturating_sub(hold) as usize..=t as usize].iter();
            let facts: std::collections::BTreeSet<u16> =
                recent.flatten().map(|&(n, _)| n).collect();
            let mut reference: Vec<Vec<u8>> = facts.into_iter().map(text).collect();
            reference.sort();
            let want: Vec<u8> = reference
                .iter()
                .flat_map(|t| [&b" "[..], t].concat())
                .collect();
            prop_assert_eq!(
                String::from_utf8_lossy(&line),
                String::from_utf8_lossy(&want),
                "time point {}",
                t
            );
        }
        Ok(())
    }

    proptest! {
        /// The search from a position finds what a binary search of the rest finds.
        #[test]
        fn gallop_finds_the_partition_point(
            mut order in prop::collection::vec(0u32..50, 0..200),
            from in 0usize..201,
            target in 0u32..51,
        ) {
            order.sort_unstable();
            let from = from.min(order.len());
            let want = from + order[from..].partition_point(|&x| x < target);
            prop_assert_eq!(gallop(&order, from, |&x| x < target), want);
        }

        /// Points of facts from a small set (so a fact is given again while it holds, and
        /// taken back at the time point it is given again), held 1–4 time points.
        #[test]
        fn points_hold_until_taken_back(
            points in prop::collection::vec(
                prop::collection::vec((0u16..12, 1isize..3), 0..8),
                1..40,
            ),
            hold in 1u64..5,
        ) {
            check_points(points, hold)?;
        }

        /// Time points of changes to texts from a small set (so texts repeat, stop and
        /// start again within a time point), each line written anew.
        #[test]
        fn lines_are_the_held_texts_in_byte_order(
            points in prop::collection::vec(
                prop::collection::vec((0u16..12, any::<bool>()), 0..20),
                1..30,
            ),
        ) {
            // Up to three chunks long, some a multiple of one; facts 10 and 11 have one text.
            check(points, |n| {
                let n = n.min(10);
                format!("p(a{n},{})", "b".repeat(3 * n as usize)).into_bytes()
            })?;
        }

        /// Long lines filled at the first time point, then few changes per time point, so
        /// that lines are made from the last one's bytes, with lines written anew between
        /// them (a burst of changes), texts equal in their first 16 bytes (and in the first
        /// 8) and shorter ones.
        #[test]
        fn lines_made_from_the_last_are_the_held_texts_in_byte_order(
            fill in prop::collection::vec(0u16..400, 100..300),
            points in prop::collection::vec(
                prop::collection::vec((0u16..400, any::<bool>()), 0..6),
                1..40,
            ),
            burst in prop::collection::vec((0u16..400, any::<bool>()), 0..150),
        ) {
            let mut points = points;
            let middle = points.len() / 2;
            points.insert(middle, burst);
            points.insert(0, fill.into_iter().map(|n| (n, true)).collect());
            check(points, |n| match n % 3 {
                // Facts 0, 3, 6 and 9 have one text, as do 12, 15, 18 and 21, …
                0 => format!("q(id{})", n / 12).into_bytes(),
                1 => format!("p{n}").into_bytes(),
                _ if n % 2 == 0 => format!("q(id{},b{n})", n / 7).into_bytes(),
                _ => format!("q(identifier_{},b{n})", n / 7).into_bytes(),
            })?;
        }
    }
}
