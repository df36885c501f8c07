//! Window operators: ⊞d♢ and ⊞d□ in O(1) work per change of the windowed predicate
//! instead of d+1 delayed copies (♢) or a (d+1)-way join (□).
//!
//! The input must be **consolidated and 0/1**: a fact holding on [a, b) is exactly +1 at a
//! and −1 at b. The predicates' collections are `distinct` outputs, so they are.
//!
//! * ♢d p holds at t when p held somewhere in [t−d, t]: on [a, b+d). Delaying only the
//!   retractions by d gives that; overlapping intervals then count 2, so `distinct`.
//! * □d p holds at t when p held at every point of [t−d, t]: on [a+d, b) when b > a+d.
//!   Delaying only the insertions by d gives that — but when b ≤ a+d the −1 at b comes
//!   before the +1 at a+d and the count goes negative in between. `distinct` would turn
//!   that −1 into a fact; `threshold(count > 0)` is the right closure. Both closures are
//!   [`super::zero_one`], which counts over totally ordered time points and keeps only
//!   positive counts.
//!
//! * Input facts of the window's own predicate are counted in the same table, each d + 1
//!   times under □ ([`own_weight`]): more than a □ count can dip below zero.
//! * A **gated window** ([`gated`]) is a window fused with the one rule that reads it,
//!   `q(X…) :- w(X…), not g`: one table for the window and the antijoin, and q's 0/1
//!   closure in the same operator.
//!
//! Both clip at the start of the timeline as the literal rules do: time points before the
//! first one hold nothing.

use differential_dataflow::AsCollection;
use differential_dataflow::consolidation::consolidate_updates_from;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Pipeline;
use timely::dataflow::operators::Concat;
use timely::dataflow::operators::generic::Operator;
use timely::dataflow::operators::vec::Map;

use super::zero_one::{Presence, Stash, Tagged, mark, over_gate, send_first};
use super::{Coll, Row};
use crate::plan::Window;

/// When a change of the windowed predicate takes effect in the window: ♢ delays the
/// retractions by d, □ the insertions.
fn retime(window: Window) -> impl Fn(u64, isize) -> u64 + Clone + 'static {
    move |time, diff| match window {
        Window::Diamond(d) if diff < 0 => time + u64::from(d),
        Window::Box(d) if diff > 0 => time + u64::from(d),
        _ => time,
    }
}

/// Lowers a window over the 0/1 collection `source`, united with `own` (input facts of the
/// window's own predicate), if any: [`super::zero_one::zero_one_by`] delays each change of
/// `source` as it buffers it, in the same operator as the closure. With `points`, `source`
/// is a ♢ window's input fed as points (`render::fed_as_points`): each fact holds at the
/// time point it is given at, and [`super::zero_one::zero_one_points`] retracts it d + 1
/// points later.
pub fn lower<'s>(
    source: Coll<'s, u64>,
    own: Option<Coll<'s, u64>>,
    window: Window,
    points: bool,
) -> Coll<'s, u64> {
    match window {
        Window::Diamond(d) if points => {
            super::zero_one::zero_one_points(source, own, u64::from(d) + 1)
        }
        _ => super::zero_one::zero_one_by(source, own, own_weight(window), retime(window)),
    }
}

/// A ♢ window of `d` over `source` fed as points (`render::fed_as_points`), its 0/1
/// closure left to a sink that counts ([`stgflow_io::sink::Sink::counts_holding`]): each
/// point +n at t passes as it is, and its −n follows at t + d + 1, united with `own`
/// (input facts of the window's own predicate, changes) as they are. A fact the window
/// holds counts once for each of its points in the window (and once more while it is an
/// own fact), and the sink prints it while its count is positive; no table of what
/// holds, no exchange by hash (a fact's changes may come from several workers: the sink
/// adds them up). [`lower`]'s 0/1 closure would keep a second count table of every fact
/// the sink counts anyway, hashed and probed twice per point.
pub fn counted_points<'s>(
    source: Coll<'s, u64>,
    own: Option<Coll<'s, u64>>,
    d: u32,
) -> Coll<'s, u64> {
    let hold = u64::from(d) + 1;
    // The retractions to come, by time point, and a time point's as they go out.
    let mut stash: Stash<Row> = Stash::default();
    let mut retractions: Vec<(Row, u64, isize)> = Vec::new();
    let mut out: Vec<(Row, u64, isize)> = Vec::new();
    let counted = source
        .inner
        .unary_frontier::<CapacityContainerBuilder<Vec<(Row, u64, isize)>>, _, _, _>(
            Pipeline,
            "CountedPoints",
            move |capability, _info| {
                let mut capability = Some(capability);
                move |(input, frontier), output| {
                    input.for_each(|time, data| {
                        retractions.extend(
                            (data.iter())
                                .map(|(row, t, n)| (row.clone(), t.saturating_add(hold), -n)),
                        );
                        stash.add(&mut retractions, &|t, _| t);
                        output.session(&time).give_container(data);
                    });
                    let limit = frontier.frontier().first().copied();
                    let mut first = None;
                    while let Some(time) = stash.first_time() {
                        if limit.is_some_and(|f| time >= f) {
                            break;
                        }
                        let mut due = stash.take(time);
                        if capability.is_some() {
                            out.extend(due.drain(..).map(|(row, n)| (row, time, n)));
                            mark(&mut first, time, &out);
                        }
                        due.clear();
                        stash.give_back(due);
                    }
                    send_first(output, capability.as_ref(), &mut first, &mut out);
                    super::follow_frontier(&mut capability, limit);
                }
            },
        );
    match own {
        Some(own) => counted.concat(own.inner),
        None => counted,
    }
    .as_collection()
}

/// How many times a fact of the window's own predicate counts in the window's table: more
/// than the window's count can dip below zero. A ♢ count never does. A □ count at t is −1
/// for each interval of the source (0/1, so separated by gaps) that started after t − d
/// and ended by t — at most ⌈d/2⌉ of them — and +1 for the one interval, if any, that
/// covers [t − d, t]; so an own fact counts d + 1 times.
fn own_weight(window: Window) -> isize {
    match window {
        Window::Diamond(_) => 1,
        Window::Box(d) => isize::try_from(d).map_or(isize::MAX / 4, |d| d + 1),
    }
}

/// Where a record of [`gated`]'s input comes from.
const FROM_SOURCE: u8 = 0;
const FROM_WINDOW_OWN: u8 = 1;
const FROM_OWN: u8 = 2;

/// [`crate::plan::Component::GatedWindow`], `q(X…) :- w(X…), not g` with w the window
/// over `source`, in one operator, where the window, the antijoin and q's 0/1 closure took
/// three: q holds x at t when w does and g does not, or when x is one of q's own input
/// facts (`own`). `window_own` are w's own input facts (counted in with the window, see
/// [`own_weight`]), `gate` g's 0/1 collection (already delayed by the rule's offset).
///
/// The window's count table ([`Presence`]) is the big one; q's own facts have their own
/// (mostly empty) table; g, which has no arguments, is one count, broadcast to every
/// worker. A time point is taken in steps, each over the others' state as it is: the
/// gate (where it flips, every windowed record not also q's own flips: the antijoin's
/// cost; where it opens, over the window as it is after the time point's changes), the
/// window, q's own facts. Where q's own facts changed, the time point's output is
/// consolidated (a record may flip in two steps, and back).
pub fn gated<'s>(
    source: Coll<'s, u64>,
    window_own: Option<Coll<'s, u64>>,
    own: Option<Coll<'s, u64>>,
    gate: Coll<'s, u64>,
    window: Window,
) -> Coll<'s, u64> {
    let retime = retime(window);
    let tag = |from: u8| move |(row, time, diff): (Row, u64, isize)| ((from, row), time, diff);
    let mut tagged = source.inner.map(tag(FROM_SOURCE));
    if let Some(window_own) = window_own {
        tagged = tagged.concat(window_own.inner.map(tag(FROM_WINDOW_OWN)));
    }
    if let Some(own) = own {
        tagged = tagged.concat(own.inner.map(tag(FROM_OWN)));
    }
    let window_own_weight = own_weight(window);
    let mut tables = Tables::default();
    let intake = move |data: &mut Vec<Tagged>| {
        for ((from, _), time, diff) in data.iter_mut() {
            match *from {
                FROM_SOURCE => *time = retime(*time, *diff),
                FROM_WINDOW_OWN => *diff *= window_own_weight,
                _ => {}
            }
        }
    };
    over_gate(
        tagged,
        gate,
        "GatedWindow",
        intake,
        move |time, gated, updates, out| {
            let start = out.len();
            if tables.step(time, gated, updates, out) {
                // This time point's records only: the earlier ones stay in order.
                consolidate_updates_from(out, start);
            }
        },
    )
}

/// [`gated`]'s count tables.
#[derive(Default)]
struct Tables {
    /// The window over the source, with w's own facts counted in ([`own_weight`]).
    windowed: Presence<Row>,
    /// q's own input facts.
    own: Presence<Row>,
    /// A time point's changes of q's own facts, set aside while the window's go in.
    own_updates: Vec<(Row, isize)>,
}

/// Whether `table` holds `record`, without hashing when it is empty.
fn holds(table: &Presence<Row>, record: &Row) -> bool {
    !table.is_empty() && table.is_present(record)
}

impl Tables {
    /// Takes time point `time` in, the gate going from `gated_before` to `gated`: pushes
    /// q's flips to `out`; returns whether they may need consolidating.
    fn step(
        &mut self,
        time: u64,
        (gated_before, gated): (bool, bool),
        updates: &mut Vec<((u8, Row), isize)>,
        out: &mut Vec<(Row, u64, isize)>,
    ) -> bool {
        let Tables {
            windowed,
            own,
            own_updates,
        } = self;
        // The gate closing q, over the window as it was: what it showed goes. (Its
        // changes then show nothing.)
        if gated && !gated_before {
            for record in windowed.present() {
                if !holds(own, record) {
                    out.push((record.clone(), time, -1));
                }
            }
        }
        for ((from, row), diff) in updates.drain(..) {
            if from == FROM_OWN {
                own_updates.push((row, diff));
            } else {
                windowed.add(row, diff);
            }
        }
        let shown = |w: bool, o: bool| (w && !gated) || o;
        if gated_before && !gated {
            // The gate opening, over the window as it is now: what it holds shows. (Shown
            // over the window as it was and then changed, a fact leaving the window here
            // would be +1 and −1, and the time point's output sorted to cancel them.)
            windowed.settle();
            for record in windowed.present() {
                if !holds(own, record) {
                    out.push((record.clone(), time, 1));
                }
            }
        } else {
            // The window, over q's own facts as they were.
            windowed.flips(|record, sign| {
                let o = holds(own, &record);
                if shown(sign < 0, o) != shown(sign > 0, o) {
                    out.push((record, time, sign));
                }
            });
        }
        let mixed = !own_updates.is_empty();
        // q's own facts, over the window as it is.
        for (row, diff) in own_updates.drain(..) {
            own.add(row, diff);
        }
        own.flips(|record, sign| {
            let w = holds(windowed, &record);
            if shown(w, sign < 0) != shown(w, sign > 0) {
                out.push((record, time, sign));
            }
        });
        mixed
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use stgflow_lang::value::Row;

    use super::{Coll, counted_points, gated, lower};
    use crate::operators::testing::{
        Held, Snapshot, assert_same_at_every_time, at, changes, held, int_rows, run, set, snapshots,
    };
    use crate::plan::Window;

    const END: u64 = 30;
    const RECORDS: usize = 3;

    fn universe() -> Vec<Row> {
        int_rows(RECORDS)
    }

    /// ♢d or □d (d from 0 to 4).
    fn window() -> impl Strategy<Value = Window> {
        prop_oneof![
            (0..5u32).prop_map(Window::Diamond),
            (1..5u32).prop_map(Window::Box)
        ]
    }

    /// The d + 1 copies of `source` record `r` delayed by 0..=d, at `t`: ♢ is any of them,
    /// □ all of them. Before the timeline nothing holds, so □d holds from d on at the
    /// earliest, as the literal rule `w(X, T) :- p(X, T), …, p(X, T-d)` does.
    fn windowed(source: &Held, window: Window, r: usize, t: i64) -> bool {
        let copies = |d: u32| (0..=i64::from(d)).map(move |k| at(source, r, t - k));
        match window {
            Window::Diamond(d) => copies(d).any(|held| held),
            Window::Box(d) => copies(d).all(|held| held),
        }
    }

    /// What `lower` holds at each time point: the window over `source`, or w's own facts.
    fn window_reference(source: &Held, own: Option<&Held>, window: Window) -> Vec<Snapshot<Row>> {
        let universe = universe();
        (0..END as i64)
            .map(|t| {
                set((0..RECORDS)
                    .filter(|&r| {
                        windowed(source, window, r, t) || own.is_some_and(|own| at(own, r, t))
                    })
                    .map(|r| universe[r].clone()))
            })
            .collect()
    }

    /// `source` as points: each record +1 at every time point it holds at, as the runtime
    /// feeds a predicate of `render::fed_as_points`.
    fn points(source: &Held) -> Vec<(Row, u64, isize)> {
        let universe = universe();
        (0..END)
            .flat_map(|t| {
                (0..RECORDS)
                    .filter(move |&r| source[r][t as usize])
                    .map(move |r| (r, t))
            })
            .map(|(r, t)| (universe[r].clone(), t, 1))
            .collect()
    }

    /// `window` over the source's updates `fed` and w's own facts (changes of what `own`
    /// holds), on `workers` workers fed `batch` time points at a time.
    fn run_over(
        workers: usize,
        fed: Vec<(Row, u64, isize)>,
        own: Option<&Held>,
        batch: u64,
        window: impl for<'s> Fn(Coll<'s, u64>, Option<Coll<'s, u64>>) -> Coll<'s, u64>
        + Send
        + Sync
        + 'static,
    ) -> Vec<(Row, u64, isize)> {
        let mut inputs = vec![fed];
        inputs.extend(own.map(|own| changes(&universe(), own)));
        run(workers, inputs, END, batch, move |mut inputs| {
            let own = if inputs.len() > 1 { inputs.pop() } else { None };
            window(inputs.pop().expect("a source"), own)
        })
    }

    /// `lower` against the reference, its source fed as points where `points` and the
    /// window is a ♢.
    fn check_lower(
        workers: usize,
        source: &Held,
        own: Option<&Held>,
        (window, points): (Window, bool),
        batch: u64,
    ) {
        let points = points && matches!(window, Window::Diamond(_));
        let fed = if points {
            self::points(source)
        } else {
            changes(&universe(), source)
        };
        let output = run_over(workers, fed, own, batch, move |source, own| {
            lower(source, own, window, points)
        });
        assert_same_at_every_time(
            &snapshots(&output, END),
            &window_reference(source, own, window),
        );
    }

    /// `counted_points` against the reference: at each time point no count is below
    /// zero, and the records whose count is positive are the ♢ window's and w's own facts.
    /// The source's points at time points that are multiples of `doubled` come twice
    /// (the same fact given twice at one time point).
    fn check_counted(
        workers: usize,
        source: &Held,
        own: Option<&Held>,
        (d, doubled): (u32, u64),
        batch: u64,
    ) {
        let fed = points(source);
        let twice = fed.iter().filter(|(_, t, _)| t % doubled == 0).cloned();
        let fed = fed.iter().cloned().chain(twice).collect();
        let output = run_over(workers, fed, own, batch, move |source, own| {
            counted_points(source, own, d)
        });
        let counts = snapshots(&output, END);
        for (t, snapshot) in counts.iter().enumerate() {
            assert!(
                snapshot.values().all(|&count| count > 0),
                "a count below zero at time point {t}: {snapshot:?}"
            );
        }
        let held: Vec<_> = counts
            .into_iter()
            .map(|snapshot| set(snapshot.into_keys()))
            .collect();
        assert_same_at_every_time(&held, &window_reference(source, own, Window::Diamond(d)));
    }

    /// A gated window's inputs: the source, w's and q's own facts, and the gate g (one
    /// record, the empty row).
    #[derive(Clone, Debug)]
    struct GatedInputs {
        source: Held,
        window_own: Option<Held>,
        own: Option<Held>,
        gate: Held,
    }

    fn gated_inputs() -> impl Strategy<Value = GatedInputs> {
        (
            held(RECORDS, END, 6, 6),
            prop::option::of(held(RECORDS, END, 12, 3)),
            prop::option::of(held(RECORDS, END, 12, 3)),
            held(1, END, 5, 5),
        )
            .prop_map(|(source, window_own, own, gate)| GatedInputs {
                source,
                window_own,
                own,
                gate,
            })
    }

    /// `q(X, T) :- w(X, T), not g(T-k)` with w the window over the source (or w's own
    /// facts), united with q's own facts, at each time point.
    fn gated_reference(inputs: &GatedInputs, window: Window, k: u64) -> Vec<Snapshot<Row>> {
        let universe = universe();
        let k = k as i64;
        (0..END as i64)
            .map(|t| {
                let gated = at(&inputs.gate, 0, t - k);
                set((0..RECORDS)
                    .filter(|&r| {
                        let w = windowed(&inputs.source, window, r, t)
                            || inputs.window_own.as_ref().is_some_and(|o| at(o, r, t));
                        let own = inputs.own.as_ref().is_some_and(|o| at(o, r, t));
                        (w && !gated) || own
                    })
                    .map(|r| universe[r].clone()))
            })
            .collect()
    }

    /// The gate reaches the operator delayed by the rule's offset k, as `render` delays it.
    fn check_gated(workers: usize, inputs: &GatedInputs, window: Window, k: u64, batch: u64) {
        let universe = universe();
        let none = || Vec::new();
        let fed = vec![
            changes(&universe, &inputs.source),
            inputs
                .window_own
                .as_ref()
                .map_or_else(none, |o| changes(&universe, o)),
            inputs
                .own
                .as_ref()
                .map_or_else(none, |o| changes(&universe, o)),
            changes(&[Row::new()], &inputs.gate),
        ];
        let (has_window_own, has_own) = (inputs.window_own.is_some(), inputs.own.is_some());
        let output = run(workers, fed, END, batch, move |mut fed| {
            let gate = fed.pop().expect("four inputs").delay(move |t| t + k);
            let own = fed.pop().filter(|_| has_own);
            let window_own = fed.pop().filter(|_| has_window_own);
            gated(
                fed.pop().expect("four inputs"),
                window_own,
                own,
                gate,
                window,
            )
        });
        assert_same_at_every_time(
            &snapshots(&output, END),
            &gated_reference(inputs, window, k),
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]

        #[test]
        fn lower_matches_delayed_copies_up_to_d_4_30_time_points_1_worker(
            source in held(RECORDS, END, 6, 6),
            own in prop::option::of(held(RECORDS, END, 12, 3)),
            window in window(),
            points in any::<bool>(),
            batch in 1..4u64,
        ) {
            check_lower(1, &source, own.as_ref(), (window, points), batch);
        }

        #[test]
        fn lower_matches_delayed_copies_up_to_d_4_30_time_points_3_workers(
            source in held(RECORDS, END, 6, 6),
            own in prop::option::of(held(RECORDS, END, 12, 3)),
            window in window(),
            points in any::<bool>(),
            batch in 1..4u64,
        ) {
            check_lower(3, &source, own.as_ref(), (window, points), batch);
        }

        /// The counts summed over every worker's output, as the sink sums them.
        #[test]
        fn counted_points_hold_where_delayed_copies_do_up_to_d_4_on_1_to_3_workers(
            source in held(RECORDS, END, 6, 6),
            own in prop::option::of(held(RECORDS, END, 12, 3)),
            d in 0..5u32,
            doubled in 1..5u64,
            workers in 1..=3usize,
            batch in 1..4u64,
        ) {
            check_counted(workers, &source, own.as_ref(), (d, doubled), batch);
        }

        #[test]
        fn gated_matches_delayed_copies_and_gate_up_to_d_4_k_2_30_time_points_1_worker(
            inputs in gated_inputs(),
            window in window(),
            k in 0..3u64,
            batch in 1..4u64,
        ) {
            check_gated(1, &inputs, window, k, batch);
        }

        #[test]
        fn gated_matches_delayed_copies_and_gate_up_to_d_4_k_2_30_time_points_3_workers(
            inputs in gated_inputs(),
            window in window(),
            k in 0..3u64,
            batch in 1..4u64,
        ) {
            check_gated(3, &inputs, window, k, batch);
        }
    }
}
