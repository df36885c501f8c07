//! `zero_one`: makes a collection over totally ordered time points 0/1 — a record is
//! present (count 1) exactly while its accumulated count is positive.
//!
//! Differential's `distinct_total` does this with an arrangement: batches are sorted,
//! merged and their histories replayed, for every update. Over time
//! points, which are totally ordered, a hash map of the current counts suffices: buffer
//! the updates until the frontier passes a time point, apply that time point's net
//! changes in time order, and emit +1 when a count becomes positive and −1 when it stops
//! being positive. The map holds only records whose count is not zero, so memory follows
//! what holds now, not the stream.
//!
//! Records are exchanged by hash, so each record's count lives on one worker. Positive,
//! not non-zero: a collection whose count dips below zero (the □ window's insertions are
//! delayed past their retractions) reads as absent there, as `threshold(count > 0)` would.

use std::collections::VecDeque;
use std::hash::{BuildHasher, Hash};

use differential_dataflow::{AsCollection, ExchangeData, Hashable, VecCollection};
use hashbrown::DefaultHashBuilder;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::Capability;
use timely::dataflow::operators::generic::{Operator, OutputBuilderSession};
use timely::dataflow::operators::vec::ToStream;

use super::slab::Slab;

/// The 0/1 version of `collection` (see the module doc).
pub fn zero_one<'s, D>(
    collection: VecCollection<'s, u64, D, isize>,
) -> VecCollection<'s, u64, D, isize>
where
    D: ExchangeData + Hash + Eq,
{
    zero_one_by(collection, None, 1, |time, _| time)
}

/// The 0/1 version of `collection`, with each change moved to `retime(time, diff)` (not
/// earlier than `time`) first, united with `own` as it is: a window's delay and its
/// closure in one operator (`own` holds the input facts of the window's own predicate).
/// `own`'s changes count `own_weight` times: more than `collection`'s retimed count can
/// dip below zero, so that an own fact holds wherever it holds.
pub fn zero_one_by<'s, D>(
    collection: VecCollection<'s, u64, D, isize>,
    own: Option<VecCollection<'s, u64, D, isize>>,
    own_weight: isize,
    retime: impl Fn(u64, isize) -> u64 + 'static,
) -> VecCollection<'s, u64, D, isize>
where
    D: ExchangeData + Hash + Eq,
{
    let retimed = Retimed {
        stash: Stash::default(),
        retime,
    };
    zero_one_with(collection, own, own_weight, retimed)
}

/// The 0/1 version of `collection` read as *points* — each record +n at its time, and
/// −n `hold` time points later — united with `own` (changes) as it is: a ♢ window of
/// `hold − 1` over facts fed as points (`render::fed_as_points`), its retractions made
/// here rather than diffed and sent by the runtime.
pub fn zero_one_points<'s, D>(
    collection: VecCollection<'s, u64, D, isize>,
    own: Option<VecCollection<'s, u64, D, isize>>,
    hold: u64,
) -> VecCollection<'s, u64, D, isize>
where
    D: ExchangeData + Hash + Eq,
{
    let points = Points {
        stash: Stash::default(),
        expiring: VecDeque::new(),
        retracted: Vec::new(),
        hold,
    };
    zero_one_with(collection, own, 1, points)
}

/// How [`zero_one_with`] keeps its main input's changes until their time points pass, and
/// counts them in.
trait Intake<D> {
    /// Takes a message of changes in; leaves `data` empty.
    fn take_in(&mut self, data: &mut Vec<(D, u64, isize)>);
    /// The earliest time point with changes kept.
    fn first_time(&self) -> Option<u64>;
    /// Counts the changes of `time` (the earliest kept) into `counts`.
    fn count(&mut self, time: u64, counts: &mut Presence<D>);
}

/// Each change at `retime(time, diff)`.
struct Retimed<D, F> {
    stash: Stash<D>,
    retime: F,
}

impl<D: Hash + Eq + Clone, F: Fn(u64, isize) -> u64> Intake<D> for Retimed<D, F> {
    fn take_in(&mut self, data: &mut Vec<(D, u64, isize)>) {
        self.stash.add(data, &self.retime);
    }

    fn first_time(&self) -> Option<u64> {
        self.stash.first_time()
    }

    fn count(&mut self, time: u64, counts: &mut Presence<D>) {
        let mut updates = self.stash.take(time);
        for (record, diff) in updates.drain(..) {
            counts.add(record, diff);
        }
        self.stash.give_back(updates);
    }
}

/// Points: a record +n at t is −n at t + `hold`. The −n is kept as the record's slot in
/// the count table, not as a copy of the record: the slot stays while the −n is to come
/// ([`Presence::add_expiring`]), so it is counted out without a copy, a hash or a probe
/// (a copy allocates for rows past two values, as `@`'s stamped facts are). A point of a
/// negative n, which the runtime never sends, is retracted as a copy.
struct Points<D> {
    stash: Stash<D>,
    /// Time, slot and n of each point's −n to come, in time order (points are counted in
    /// time order, and all `hold` later).
    expiring: VecDeque<(u64, u32, isize)>,
    /// Retractions of negative points, as copies.
    retracted: Vec<(D, u64, isize)>,
    hold: u64,
}

impl<D: Hash + Eq + Clone> Intake<D> for Points<D> {
    fn take_in(&mut self, data: &mut Vec<(D, u64, isize)>) {
        self.stash.add(data, &|time, _| time);
    }

    fn first_time(&self) -> Option<u64> {
        let expiring = self.expiring.front().map(|(time, _, _)| *time);
        sooner(self.stash.first_time(), expiring)
    }

    fn count(&mut self, time: u64, counts: &mut Presence<D>) {
        let until = time.saturating_add(self.hold);
        let mut updates = self.stash.take(time);
        for (record, diff) in updates.drain(..) {
            if diff > 0 {
                let slot = counts.add_expiring(record, diff);
                self.expiring.push_back((until, slot, diff));
            } else {
                self.retracted.push((record.clone(), until, -diff));
                counts.add(record, diff);
            }
        }
        self.stash.give_back(updates);
        self.stash.add(&mut self.retracted, &|time, _| time);
        while let Some(&(_, slot, diff)) = self.expiring.front().filter(|e| e.0 == time) {
            self.expiring.pop_front();
            counts.expire(slot, diff);
        }
    }
}

/// [`zero_one_by`] and [`zero_one_points`]: `intake` keeps the changes of `collection`
/// and counts them in; `own`'s, kept apart, count `own_weight` times.
fn zero_one_with<'s, D>(
    collection: VecCollection<'s, u64, D, isize>,
    own: Option<VecCollection<'s, u64, D, isize>>,
    own_weight: isize,
    mut intake: impl Intake<D> + 'static,
) -> VecCollection<'s, u64, D, isize>
where
    D: ExchangeData + Hash + Eq,
{
    let own = own.map_or_else(
        || Vec::<(D, u64, isize)>::new().to_stream(collection.inner.scope()),
        |own| own.inner,
    );
    let mut own_stash: Stash<D> = Stash::default();
    let mut counts: Presence<D> = Presence::default();
    // A time point's output; kept between time points for its allocation.
    let mut out: Vec<(D, u64, isize)> = Vec::new();
    let route = |(data, _, _): &(D, u64, isize)| data.hashed();
    collection
        .inner
        .binary_frontier::<_, CapacityContainerBuilder<Vec<(D, u64, isize)>>, _, _, _, _>(
            own,
            Exchange::new(route),
            Exchange::new(route),
            "ZeroOne",
            move |_initial, _info| {
                let mut pending = super::Pending::default();
                move |(input, frontier), (own, own_frontier), output| {
                    input.for_each(|capability, data| {
                        pending.note(&capability);
                        intake.take_in(data)
                    });
                    own.for_each(|capability, data| {
                        pending.note(&capability);
                        if own_weight != 1 {
                            data.iter_mut().for_each(|(_, _, diff)| *diff *= own_weight);
                        }
                        own_stash.add(data, &|time, _| time)
                    });
                    let limit = super::limit(frontier, own_frontier);
                    let mut first = None;
                    while let Some(time) = sooner(intake.first_time(), own_stash.first_time()) {
                        if limit.is_some_and(|f| time >= f) {
                            break;
                        }
                        intake.count(time, &mut counts);
                        let mut updates = own_stash.take(time);
                        for (record, diff) in updates.drain(..) {
                            counts.add(record, diff);
                        }
                        counts.flips(|record, sign| out.push((record, time, sign)));
                        mark(&mut first, time, &out);
                        own_stash.give_back(updates);
                    }
                    send_first(output, pending.get(), &mut first, &mut out);
                    pending.settle(sooner(intake.first_time(), own_stash.first_time()));
                }
            },
        )
        .as_collection()
}

/// Buffered updates by time point (after a retiming), kept as the messages brought them:
/// a few runs, each sorted by time, taken from the front.
///
/// Every operator over time points stashes every time point of its input, and CTM has
/// 31,000 active time points through ~40 components, so what a time point costs here is
/// paid millions of times. A vector per time point (a deque of them, emptied vectors kept
/// for reuse) cost an allocation per operator and time point once a batch held more time
/// points than the spares, since a batch's time points are all buffered before the
/// frontier passes the first. A message's records come in time order (an operator sends
/// what an activation computed, time points in order: `send_first`), so its vector is
/// kept as it is, as a run, without copying a record; a message that continues the last
/// run (none of its times before the run's last) is appended to that run instead. Only a
/// message that starts before the last run's end starts a new one, and a retimed message
/// (a window's delays) is sorted by time first, stably. Records of one time point come
/// out in the order they arrived: a run receives records only while it is the last one,
/// so an earlier run's records at a time point arrived before a later run's.
pub(super) struct Stash<D> {
    runs: Vec<VecDeque<(D, u64, isize)>>,
    spare: Vec<Vec<(D, isize)>>,
}

/// Most emptied vectors a [`Stash`] keeps.
const SPARE_VECTORS: usize = 64;

/// Most records' room an operator keeps between time points, in a spare vector or its
/// output buffer: the room of the usual time points, not of the largest one seen (EC's
/// groundings of every pair of agents all start at the first).
const KEPT_ROOM: usize = 1 << 12;

impl<D> Default for Stash<D> {
    fn default() -> Stash<D> {
        Stash {
            runs: Vec::new(),
            spare: Vec::new(),
        }
    }
}

impl<D> Stash<D> {
    /// Takes a batch of updates in, each at `retime(time, diff)`; leaves `data` empty.
    pub(super) fn add(
        &mut self,
        data: &mut Vec<(D, u64, isize)>,
        retime: &impl Fn(u64, isize) -> u64,
    ) {
        let mut sorted = true;
        let mut last = 0;
        for (_, time, diff) in data.iter_mut() {
            *time = retime(*time, *diff);
            sorted &= *time >= last;
            last = *time;
        }
        if !sorted {
            in_time_order(data);
        }
        let Some(&(_, first, _)) = data.first() else {
            return;
        };
        match self.runs.last_mut() {
            Some(run) if run.back().is_some_and(|(_, end, _)| *end <= first) => {
                run.extend(data.drain(..));
            }
            _ => self.runs.push(VecDeque::from(std::mem::take(data))),
        }
    }

    /// The earliest buffered time point.
    pub(super) fn first_time(&self) -> Option<u64> {
        self.runs
            .iter()
            .filter_map(|run| run.front().map(|(_, time, _)| *time))
            .min()
    }

    /// Removes and returns the updates at `time` (none when there are none), in the order
    /// they arrived; hand the emptied vector to [`Stash::give_back`].
    pub(super) fn take(&mut self, time: u64) -> Vec<(D, isize)> {
        let mut updates = self.spare.pop().unwrap_or_default();
        let mut exhausted = false;
        for run in &mut self.runs {
            match run.front() {
                Some((_, t, _)) if *t == time => {
                    while run.front().is_some_and(|(_, t, _)| *t == time) {
                        if let Some((record, _, diff)) = run.pop_front() {
                            updates.push((record, diff));
                        }
                    }
                }
                // Not taken from the earliest: the time point's records are in the run's
                // middle.
                Some((_, t, _)) if *t < time => {
                    let from = run.partition_point(|(_, t, _)| *t < time);
                    let to = run.partition_point(|(_, t, _)| *t <= time);
                    updates.extend(run.drain(from..to).map(|(record, _, diff)| (record, diff)));
                }
                _ => {}
            }
            exhausted |= run.is_empty();
        }
        if exhausted {
            self.runs.retain(|run| !run.is_empty());
        }
        updates
    }

    /// Keeps an emptied vector for a later time point, unless a rare large time point
    /// grew it: every operator would keep that room for the rest of the run.
    pub(super) fn give_back(&mut self, updates: Vec<(D, isize)>) {
        if updates.capacity() <= KEPT_ROOM {
            super::keep_spare(&mut self.spare, updates, SPARE_VECTORS);
        }
    }
}

/// Sorts `data` by time, stably. A window's retiming delays insertions and retractions
/// each by their own amount, so a message in time order becomes two sequences in time
/// order, its insertions and its retractions, interleaved: those are merged in one pass,
/// cheaper than a sort; anything else is sorted.
fn in_time_order<D>(data: &mut Vec<(D, u64, isize)>) {
    let sorted = |sign: bool| {
        let mut times = data.iter().filter(|u| (u.2 > 0) == sign).map(|u| u.1);
        let mut last = 0;
        times.all(|t| std::mem::replace(&mut last, t) <= t)
    };
    if !(sorted(true) && sorted(false)) {
        data.sort_by_key(|(_, time, _)| *time);
        return;
    }
    // Each update with its place in the message, which breaks ties between the two.
    let (mut inserted, mut retracted): (Vec<_>, Vec<_>) =
        data.drain(..).enumerate().partition(|(_, u)| u.2 > 0);
    let key = |(at, u): &(usize, (D, u64, isize))| (u.1, *at);
    let (mut a, mut b) = (
        inserted.drain(..).peekable(),
        retracted.drain(..).peekable(),
    );
    loop {
        let next = match (a.peek(), b.peek()) {
            (Some(x), Some(y)) if key(x) <= key(y) => a.next(),
            (Some(_), Some(_)) => b.next(),
            (Some(_), None) => a.next(),
            (None, _) => b.next(),
        };
        let Some((_, update)) = next else { break };
        data.push(update);
    }
}

/// A record of one of several inputs, tagged with which.
pub(super) type Tagged = ((u8, super::Row), u64, isize);

/// An operator over the tagged records of several inputs (`tagged`, exchanged by their
/// rows) and a nullary gate (`gate`, broadcast), time point by time point in order: each
/// message is prepared by `intake` and stashed; at each time point with records or a
/// change of the gate, `step(time, (open before, open now), records, out)` pushes the
/// time point's output to `out` (`window::gated`, `hold::render`).
pub(super) fn over_gate<'s>(
    tagged: timely::dataflow::StreamVec<'s, u64, Tagged>,
    gate: super::Coll<'s, u64>,
    name: &str,
    mut intake: impl FnMut(&mut Vec<Tagged>) + 'static,
    mut step: impl FnMut(
        u64,
        (bool, bool),
        &mut Vec<((u8, super::Row), isize)>,
        &mut Vec<(super::Row, u64, isize)>,
    ) + 'static,
) -> super::Coll<'s, u64> {
    use timely::dataflow::channels::pact::Pipeline;
    use timely::dataflow::operators::vec::Broadcast;
    let mut stash: Stash<(u8, super::Row)> = Stash::default();
    // The gate's changes by time point, and its count.
    let mut changes: std::collections::BTreeMap<u64, isize> = std::collections::BTreeMap::new();
    let mut count: isize = 0;
    let mut out: Vec<(super::Row, u64, isize)> = Vec::new();
    tagged
        .binary_frontier::<_, CapacityContainerBuilder<Vec<(super::Row, u64, isize)>>, _, _, _, _>(
            gate.inner.broadcast(),
            Exchange::new(|((_, row), _, _): &Tagged| row.hashed()),
            Pipeline,
            name,
            move |capability, _info| {
                let mut capability = Some(capability);
                move |(input, frontier), (gate, gate_frontier), output| {
                    input.for_each(|_, data| {
                        intake(data);
                        stash.add(data, &|time, _| time);
                    });
                    gate.for_each(|_, data| {
                        for (_, time, diff) in data.drain(..) {
                            *changes.entry(time).or_default() += diff;
                        }
                    });
                    let limit = super::limit(frontier, gate_frontier);
                    let mut first = None;
                    loop {
                        let next = match (stash.first_time(), changes.keys().next()) {
                            (Some(a), Some(&b)) => a.min(b),
                            (a, b) => match a.or(b.copied()) {
                                Some(t) => t,
                                None => break,
                            },
                        };
                        if limit.is_some_and(|f| next >= f) || capability.is_none() {
                            break;
                        }
                        let before = count > 0;
                        count += changes.remove(&next).unwrap_or(0);
                        let mut updates = stash.take(next);
                        step(next, (before, count > 0), &mut updates, &mut out);
                        stash.give_back(updates);
                        mark(&mut first, next, &out);
                    }
                    send_first(output, capability.as_ref(), &mut first, &mut out);
                    super::follow_frontier(&mut capability, limit);
                }
            },
        )
        .as_collection()
}

/// The earliest time point buffered in either stash (of a binary operator's two inputs).
pub(super) fn earliest<A, B>(a: &Stash<A>, b: &Stash<B>) -> Option<u64> {
    sooner(a.first_time(), b.first_time())
}

/// The earlier of two time points, either of which may be none.
fn sooner(a: Option<u64>, b: Option<u64>) -> Option<u64> {
    a.into_iter().chain(b).min()
}

/// Counts of records, changed a time point at a time, that report which records became
/// present (count positive) or stopped being present over the time point. The records
/// live in a [`Slab`] in arrival order (see there why); the touched records of a time point
/// are listed by slot, so the end of the time point visits them without hashing.
pub(super) struct Presence<D> {
    entries: Slab<Counted<D>>,
    hasher: DefaultHashBuilder,
    /// Slots of the records changed in the current time point.
    touched: Vec<u32>,
}

impl<D> Counted<D> {
    /// Marks the record changed in the current time point, noting whether it was present
    /// before; true where it was not marked yet.
    fn touch(&mut self) -> bool {
        let newly = !self.touched;
        if newly {
            self.touched = true;
            self.before = self.count > 0;
        }
        newly
    }
}

struct Counted<D> {
    record: D,
    count: isize,
    hash: u64,
    /// Whether the record is in the current time point's `touched` list.
    touched: bool,
    /// Whether the record was present before the current time point.
    before: bool,
    /// How many of the record's changes are to be taken back by its slot
    /// ([`Presence::add_expiring`]): its slot is kept while any is.
    expiring: u32,
}

impl<D> Default for Presence<D> {
    fn default() -> Presence<D> {
        Presence {
            entries: Slab::default(),
            hasher: DefaultHashBuilder::default(),
            touched: Vec::new(),
        }
    }
}

impl<D: Hash + Eq + Clone> Presence<D> {
    /// Adds `diff` to `record`'s count in the current time point.
    pub(super) fn add(&mut self, record: D, diff: isize) {
        self.add_counting(record, diff, 0);
    }

    /// Adds `diff` to `record`'s count as [`Presence::add`] does, to be taken back later
    /// by [`Presence::expire`] with the slot returned: the slot keeps the record until
    /// then, whatever its count.
    pub(super) fn add_expiring(&mut self, record: D, diff: isize) -> u32 {
        self.add_counting(record, diff, 1)
    }

    /// Takes back `diff` of the record in `slot`, added by [`Presence::add_expiring`].
    pub(super) fn expire(&mut self, slot: u32, diff: isize) {
        let Some(counted) = self.entries.get_mut(slot) else {
            return;
        };
        let newly_touched = counted.touch();
        counted.count -= diff;
        counted.expiring = counted.expiring.saturating_sub(1);
        if newly_touched {
            self.touched.push(slot);
        }
    }

    fn add_counting(&mut self, record: D, diff: isize, expiring: u32) -> u32 {
        let hash = self.hasher.hash_one(&record);
        let mut newly_touched = false;
        let (slot, inserted) = self.entries.change_or_insert(
            hash,
            record,
            |c, record| c.hash == hash && c.record == *record,
            |c| c.hash,
            |record| Counted {
                record,
                count: diff,
                hash,
                touched: true,
                before: false,
                expiring,
            },
            |counted| {
                newly_touched = counted.touch();
                counted.count += diff;
                counted.expiring += expiring;
                false
            },
        );
        if inserted || newly_touched {
            self.touched.push(slot);
        }
        slot
    }

    /// Whether `record`'s count is positive (before the current time point's changes
    /// when asked before any of them).
    pub(super) fn is_present(&self, record: &D) -> bool {
        let hash = self.hasher.hash_one(record);
        self.entries
            .find(hash, |c| c.hash == hash && &c.record == record)
            .is_some_and(|c| c.count > 0)
    }

    /// The records whose count is positive (before the current time point's changes when
    /// asked before any of them).
    pub(super) fn present(&self) -> impl Iterator<Item = &D> {
        self.entries
            .iter()
            .filter(|c| c.count > 0)
            .map(|c| &c.record)
    }

    /// Whether no record has a count.
    pub(super) fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Ends the current time point: calls `f(record, +1)` for each record that became
    /// present in it and `f(record, −1)` for each that stopped being present, and forgets
    /// records whose count is back to zero.
    pub(super) fn flips(&mut self, f: impl FnMut(D, isize)) {
        self.end_point(Some(f));
    }

    /// Ends the current time point as [`Presence::flips`] does, reporting nothing (and
    /// copying no record to report it).
    pub(super) fn settle(&mut self) {
        self.end_point(None::<fn(D, isize)>);
    }

    fn end_point(&mut self, mut f: Option<impl FnMut(D, isize)>) {
        for slot in self.touched.drain(..) {
            let Some(counted) = self.entries.get_mut(slot) else {
                continue;
            };
            let (before, after) = (counted.before, counted.count > 0);
            if counted.count == 0 && counted.expiring == 0 {
                // Left marked as touched: it goes, and a byte stored into it just before
                // the slab moves it out would stall the move's wider loads (store
                // forwarding).
                let hash = counted.hash;
                if let Some(counted) = self.entries.remove(slot, hash) {
                    if let (true, Some(f)) = (before, f.as_mut()) {
                        f(counted.record, -1);
                    }
                }
                continue;
            }
            counted.touched = false;
            let Some(f) = f.as_mut() else { continue };
            match (before, after) {
                (false, true) => f(counted.record.clone(), 1),
                (true, false) => f(counted.record.clone(), -1),
                _ => {}
            }
        }
    }
}

/// An operator's output of updates of `D` over time points.
pub(super) type Output<'a, D> =
    OutputBuilderSession<'a, u64, CapacityContainerBuilder<Vec<(D, u64, isize)>>>;

/// Notes that `out` holds the records of the time points up to `time`: the activation's
/// output goes out as one message, at the first time point that had any ([`send_first`]).
pub(super) fn mark<D>(first: &mut Option<u64>, time: u64, out: &[(D, u64, isize)]) {
    if first.is_none() && !out.is_empty() {
        *first = Some(time);
    }
}

/// Sends an activation's output, time points in order, as one message at its first time
/// point ([`mark`]). A message per time point would cost progress updates in every
/// operator downstream, which timely's progress tracking sorts; the records keep their
/// own times, which every operator here buffers by (`Stash`), as the runtime's capture
/// does.
pub(super) fn send_first<D: ExchangeData>(
    output: &mut Output<'_, D>,
    capability: Option<&Capability<u64>>,
    first: &mut Option<u64>,
    out: &mut Vec<(D, u64, isize)>,
) {
    match (first.take(), capability) {
        (Some(time), Some(cap)) => send_at(output, cap, time, out),
        _ => out.clear(),
    }
}

/// Sends `out` at `time`, when there is anything to send: a capability is taken only for
/// time points with output, since each costs progress updates in every operator
/// downstream. The vector itself is sent (no record is copied into a container builder);
/// `out` starts again at its size, up to [`KEPT_ROOM`].
pub(super) fn send_at<D: ExchangeData>(
    output: &mut Output<'_, D>,
    capability: &Capability<u64>,
    time: u64,
    out: &mut Vec<(D, u64, isize)>,
) {
    if !out.is_empty() {
        let size = out.len();
        output
            .session(&capability.delayed(&time))
            .give_container(out);
        // Sending may hand back another container, emptied: an exchange to other workers
        // hands back the one it split, as large as the largest message, not kept here.
        if out.capacity() > KEPT_ROOM {
            *out = Vec::with_capacity(size.min(KEPT_ROOM));
        } else {
            out.clear();
            out.reserve(size.min(KEPT_ROOM));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stgflow_lang::value::Row;
    use stgflow_lang::value::Value;

    fn row(i: i64) -> Row {
        [Value::Int(i), Value::Int(-i)].into_iter().collect()
    }

    /// Flips of one time point, sorted.
    fn flips(presence: &mut Presence<Row>, changes: &[(i64, isize)]) -> Vec<(Row, isize)> {
        for &(i, diff) in changes {
            presence.add(row(i), diff);
        }
        let mut out = Vec::new();
        presence.flips(|record, sign| out.push((record, sign)));
        out.sort();
        out
    }

    #[test]
    fn an_entry_with_a_two_value_row_is_one_cache_line() {
        assert_eq!(std::mem::size_of::<Option<Counted<Row>>>(), 64);
    }

    #[test]
    fn presence_flips_once_per_record_and_time_point_and_reuses_emptied_entries() {
        let mut presence: Presence<Row> = Presence::default();
        assert_eq!(
            flips(&mut presence, &[(1, 1), (2, 1), (2, 1)]),
            [(row(1), 1), (row(2), 1)]
        );
        assert_eq!(flips(&mut presence, &[(1, -1), (1, 1), (2, -1)]), []);
        assert_eq!(
            flips(&mut presence, &[(2, -1), (3, 1), (3, -1)]),
            [(row(2), -1)]
        );
        // Records 2 and 3 are gone; 4 and 5 take their entries.
        assert_eq!(presence.entries.slots(), 3);
        assert_eq!(
            flips(&mut presence, &[(1, -1), (4, 1), (5, 1), (2, 1)]),
            [(row(1), -1), (row(2), 1), (row(4), 1), (row(5), 1)]
        );
        assert_eq!(presence.entries.slots(), 4, "three emptied entries reused");
        assert!(presence.is_present(&row(2)) && !presence.is_present(&row(1)));
        assert!(presence.is_present(&row(4)) && presence.is_present(&row(5)));
        assert_eq!(
            flips(&mut presence, &[(4, -1), (2, -1), (6, 1)]),
            [(row(2), -1), (row(4), -1), (row(6), 1)]
        );
        assert!(!presence.is_present(&row(4)) && presence.is_present(&row(5)));
    }

    #[test]
    fn an_expiring_record_keeps_its_slot_until_taken_back() {
        let mut presence: Presence<Row> = Presence::default();
        let slot = presence.add_expiring(row(1), 2);
        assert_eq!(flips(&mut presence, &[]), [(row(1), 1)]);
        // Its count back to 0 before it is taken back: absent, its slot kept.
        assert_eq!(flips(&mut presence, &[(1, -2)]), [(row(1), -1)]);
        assert_eq!(flips(&mut presence, &[(2, 1)]), [(row(2), 1)]);
        assert_eq!(presence.entries.slots(), 2, "record 1's slot not reused");
        assert_eq!(flips(&mut presence, &[(1, 2)]), [(row(1), 1)]);
        presence.expire(slot, 2);
        assert_eq!(flips(&mut presence, &[]), [(row(1), -1)]);
        assert!(!presence.is_present(&row(1)));
        assert_eq!(flips(&mut presence, &[(3, 1)]), [(row(3), 1)]);
        assert_eq!(presence.entries.slots(), 2, "record 1's slot reused");
    }

    #[test]
    fn presence_counts_below_zero_read_as_absent() {
        let mut presence: Presence<Row> = Presence::default();
        assert_eq!(flips(&mut presence, &[(1, -1)]), []);
        assert!(!presence.is_present(&row(1)));
        assert_eq!(flips(&mut presence, &[(1, 1)]), []);
        assert_eq!(flips(&mut presence, &[(1, 1)]), [(row(1), 1)]);
    }

    mod against_counts {
        use proptest::prelude::*;
        use stgflow_lang::value::Row;

        use super::super::{zero_one, zero_one_by};
        use crate::operators::testing::{
            Held, Snapshot, Update, assert_same_at_every_time, at, changes, held, int_rows, run,
            set, snapshots,
        };

        const END: u64 = 30;
        const RECORDS: usize = 4;

        fn universe() -> Vec<Row> {
            int_rows(RECORDS)
        }

        /// A sum of 0/1 collections, the last one negated: counts above 1 (as where two
        /// rules derive a fact) and below 0 (as under a □ window's delayed insertions).
        fn signed_sum(parts: &[Held]) -> Vec<Update<Row>> {
            let mut updates = Vec::new();
            for (i, part) in parts.iter().enumerate() {
                let sign = if i + 1 == parts.len() { -1 } else { 1 };
                updates.extend(
                    changes(&universe(), part)
                        .into_iter()
                        .map(|(r, t, d)| (r, t, sign * d)),
                );
            }
            updates.sort_by_key(|(_, t, _)| *t);
            updates
        }

        /// At each time point, the records whose count, accumulated from `updates` moved to
        /// `retime(time, diff)` plus `own_weight` times `own`, is positive.
        fn positive_counts(
            updates: &[Update<Row>],
            retime: impl Fn(u64, isize) -> u64,
            own: Option<(&Held, isize)>,
        ) -> Vec<Snapshot<Row>> {
            let universe = universe();
            (0..END)
                .map(|t| {
                    set(universe.iter().enumerate().filter_map(|(i, record)| {
                        let moved: isize = updates
                            .iter()
                            .filter(|(r, time, diff)| r == record && retime(*time, *diff) <= t)
                            .map(|(_, _, diff)| diff)
                            .sum();
                        let own = own.map_or(0, |(held, weight)| {
                            weight * isize::from(at(held, i, t as i64))
                        });
                        (moved + own > 0).then(|| record.clone())
                    }))
                })
                .collect()
        }

        fn check_zero_one(workers: usize, parts: &[Held], batch: u64) {
            let updates = signed_sum(parts);
            let output = run(workers, vec![updates.clone()], END, batch, |mut inputs| {
                zero_one(inputs.pop().expect("one input"))
            });
            assert_same_at_every_time(
                &snapshots(&output, END),
                &positive_counts(&updates, |t, _| t, None),
            );
        }

        /// `zero_one_by` delaying insertions by `up` and retractions by `down`, with `own`
        /// counted `own_weight` times.
        fn check_zero_one_by(
            workers: usize,
            parts: &[Held],
            own: &Held,
            (up, down, own_weight): (u64, u64, isize),
            batch: u64,
        ) {
            let updates = signed_sum(parts);
            let retime = move |t: u64, diff: isize| t + if diff > 0 { up } else { down };
            let inputs = vec![updates.clone(), changes(&universe(), own)];
            let output = run(workers, inputs, END, batch, move |mut inputs| {
                let own = inputs.pop();
                let collection = inputs.pop().expect("two inputs");
                zero_one_by(collection, own, own_weight, retime)
            });
            assert_same_at_every_time(
                &snapshots(&output, END),
                &positive_counts(&updates, retime, Some((own, own_weight))),
            );
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(128))]

            #[test]
            fn zero_one_is_positive_counts_of_3_summed_inputs_30_time_points_1_worker(
                parts in prop::collection::vec(held(RECORDS, END, 5, 5), 3),
                batch in 1..4u64,
            ) {
                check_zero_one(1, &parts, batch);
            }

            #[test]
            fn zero_one_is_positive_counts_of_3_summed_inputs_30_time_points_3_workers(
                parts in prop::collection::vec(held(RECORDS, END, 5, 5), 3),
                batch in 1..4u64,
            ) {
                check_zero_one(3, &parts, batch);
            }

            #[test]
            fn zero_one_by_is_positive_counts_of_retimed_2_summed_inputs_and_weighted_own_30_time_points_1_worker(
                parts in prop::collection::vec(held(RECORDS, END, 5, 5), 2),
                own in held(RECORDS, END, 10, 3),
                shape in (0..4u64, 0..4u64, 1..4isize),
                batch in 1..4u64,
            ) {
                check_zero_one_by(1, &parts, &own, shape, batch);
            }

            #[test]
            fn zero_one_by_is_positive_counts_of_retimed_2_summed_inputs_and_weighted_own_30_time_points_2_workers(
                parts in prop::collection::vec(held(RECORDS, END, 5, 5), 2),
                own in held(RECORDS, END, 10, 3),
                shape in (0..4u64, 0..4u64, 1..4isize),
                batch in 1..4u64,
            ) {
                check_zero_one_by(2, &parts, &own, shape, batch);
            }
        }
    }

    proptest::proptest! {
        /// A stash gives back, time point by time point from the earliest, what a map of
        /// time points to updates holds, for batches of updates at any times (runs of
        /// rising times, delays' later ones, times before the latest), retimed or not,
        /// taken between batches up to a bound, as the operators take them.
        #[test]
        fn a_stash_takes_what_a_map_by_time_holds(
            batches in proptest::collection::vec(
                (proptest::collection::vec((0u64..40, 0i64..5, proptest::bool::ANY), 0..20), 0u64..45),
                1..12,
            ),
        ) {
            let retime = |time: u64, diff: isize| if diff < 0 { time + 3 } else { time };
            let mut stash: Stash<i64> = Stash::default();
            let mut model: std::collections::BTreeMap<u64, Vec<(i64, isize)>> =
                std::collections::BTreeMap::new();
            let mut taken = 0u64;
            for (batch, bound) in batches {
                let mut data: Vec<(i64, u64, isize)> = batch
                    .iter()
                    .map(|&(time, record, negative)| {
                        (record, taken + time, if negative { -1 } else { 1 })
                    })
                    .collect();
                for &(record, time, diff) in &data {
                    model.entry(retime(time, diff)).or_default().push((record, diff));
                }
                stash.add(&mut data, &retime);
                proptest::prop_assert!(data.is_empty());
                let bound = taken + bound;
                while let Some(first) = stash.first_time().filter(|&t| t < bound) {
                    proptest::prop_assert_eq!(Some(first), model.keys().next().copied());
                    let updates = stash.take(first);
                    proptest::prop_assert_eq!(Some(&updates), model.get(&first));
                    model.remove(&first);
                    stash.give_back(updates);
                    taken = first;
                }
                proptest::prop_assert_eq!(stash.first_time(), model.keys().next().copied());
            }
            proptest::prop_assert!(stash.take(u64::MAX).is_empty());
        }
    }
}
