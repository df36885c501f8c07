//! The output's order: what the sink writes within a time point, sorted and consolidated
//! on each worker ([`in_output_order`]), the workers' sorted runs merged on the calling
//! thread ([`merge_runs`]).

use super::messages::Update;
use stgflow_io::merge::Tournament;
use stgflow_lang::value::Value;

/// What [`in_output_order`] sorts per update: its packed key, the order prefix of its
/// second argument, and its index.
pub(super) type OrderKey = (u128, u64, u32);

/// Moves a batch of output, `updates`, onto the end of `into` in the order the [`stgflow_io::sink::Sink`]
/// writes it — by time, predicate name ([`stgflow_io::sink::name_ranks`]), arguments — and
/// consolidated: one update per fact and time point, none that cancel out. Nothing should
/// be stamped before the timeline's first point `first` (the unit row starts there);
/// should anything be, it takes effect there. Done on every worker for its own output,
/// so that the calling thread only merges — or, where
/// that worker is the slower of the two, on the calling thread for it
/// ([`super::OutputSort`]).
///
/// Sorts (key, index) pairs, not the 64-byte updates: the key packs the time (relative to
/// the batch's first), the predicate's rank and [`stgflow_lang::value::Value::order_prefix64`] of the first
/// argument, so most comparisons are one integer comparison; `order` is scratch space.
/// Where keys tie and the first arguments are equal, the second argument's order prefix
/// decides before the rows are compared: LARS's `@(T, p(A, B))` stamps a time point's
/// facts with one time, and comparing their names' texts would be the common case.
pub(super) fn in_output_order(
    updates: &mut Vec<Update>,
    rank: &[usize],
    first: u64,
    order: &mut Vec<OrderKey>,
    into: &mut Vec<Update>,
) {
    for (_, time, _) in updates.iter_mut() {
        *time = (*time).max(first);
    }
    let rank_of = |p: u32| rank.get(p as usize).copied().unwrap_or(usize::MAX);
    let start = into.len();
    let indexable = rank.len() < 1 << 16 && u32::try_from(updates.len()).is_ok();
    // A key per update: the predicate's rank (an unknown one last, as `rank_of` has it)
    // and the first argument's order prefix, under `time_bits`; equal keys fall back to
    // the arguments.
    let key = |((p, row), _, _): &Update, time_bits: u128, i: usize| {
        let prefix = row.first().map_or(0, |v| v.order_prefix64());
        let second = row.get(1).map_or(0, |v| v.order_prefix64());
        let rank = rank_of(*p).min(0xFFFF) as u128;
        (
            time_bits | (rank << 64) | u128::from(prefix),
            second,
            i as u32,
        )
    };
    let by_key = |updates: &[Update], order: &mut [OrderKey]| {
        order.sort_unstable_by_key(|&(key, _, _)| key);
        for tied in order.chunk_by_mut(|a, b| a.0 == b.0) {
            if tied.len() > 1 {
                by_rows(updates, tied);
            }
        }
    };
    let in_time_order = |updates: &[Update]| updates.windows(2).all(|w| w[0].1 <= w[1].1);
    if indexable && !in_time_order(updates) && updates.len() > 1 << 10 {
        // Runs from several workers (output exchanged to this one), each in time order:
        // a stable sort by time merges them in a few passes, moving each update once or
        // twice, and each time point is then sorted on its own, in cache, as below (a
        // sort of the whole batch reads the updates its comparisons fall back on all over
        // memory).
        updates.sort_by_key(|u| u.1);
    }
    if indexable && in_time_order(updates) {
        // In time order (one operator's output, time point by time point): each time
        // point is sorted on its own, in cache, and moved out before the next.
        let mut from = 0;
        while let Some(&(_, time, _)) = updates.get(from) {
            let to = from
                + updates[from..]
                    .iter()
                    .position(|u| u.1 != time)
                    .unwrap_or(updates.len() - from);
            order.clear();
            order.extend((from..to).map(|i| key(&updates[i], 0, i)));
            by_key(updates, order);
            move_in_order(order, updates, into, start);
            from = to;
        }
    } else {
        let base = updates.iter().map(|u| u.1).min().unwrap_or(0);
        let span = updates.iter().map(|u| u.1 - base).max().unwrap_or(0);
        order.clear();
        if indexable && span < 1 << 16 {
            order.extend(
                updates
                    .iter()
                    .enumerate()
                    .map(|(i, u)| key(u, u128::from(u.1 - base) << 80, i)),
            );
            by_key(updates, order);
        } else {
            updates.sort_unstable_by(|((p, row), t, _), ((q, other), u, _)| {
                t.cmp(u)
                    .then_with(|| rank_of(*p).cmp(&rank_of(*q)))
                    .then_with(|| row.cmp(other))
            });
            order.extend((0..updates.len()).map(|i| (0, 0, i as u32)));
        }
        move_in_order(order, updates, into, start);
    }
    if into.len() > start && into.last().is_some_and(|u| u.2 == 0) {
        into.pop();
    }
    updates.clear();
}

/// Moves a batch of output, `updates`, onto the end of `into` in time order, as it is
/// within a time point and not consolidated: for a sink that takes a time point's changes
/// in any order ([`stgflow_io::sink::Sink::in_any_order`]; Laser's lines sort and count
/// their texts themselves, and sorting the updates was a tenth of ♢10's CPU). A time
/// before `first` is moved to it, as [`in_output_order`] does.
pub(super) fn in_time_order(updates: &mut Vec<Update>, first: u64, into: &mut Vec<Update>) {
    for (_, time, _) in updates.iter_mut() {
        *time = (*time).max(first);
    }
    // One operator's output comes time point by time point; runs from several (or from
    // several workers) are merged by a stable sort.
    if !updates.windows(2).all(|w| w[0].1 <= w[1].1) {
        updates.sort_by_key(|u| u.1);
    }
    // Moved whole where `into` is empty (it takes the buffer, `updates` its room): no
    // copy of the batch's output.
    if into.is_empty() {
        std::mem::swap(into, updates);
    } else {
        into.append(updates);
    }
}

/// [`merge_runs`] for runs in time order only ([`in_time_order`]): their updates onto the
/// end of `into` in time order, each run's order kept within a time point.
pub(super) fn merge_by_time(runs: &mut [Vec<Update>], into: &mut Vec<Update>) {
    let start = into.len();
    for run in runs.iter_mut() {
        into.append(run);
    }
    into[start..].sort_by_key(|u| u.1);
}

/// Merges the workers' `runs` (each in output order, as [`in_output_order`] leaves it)
/// onto the end of `into` in output order, adding up equal updates and dropping those
/// that cancel out; empties the runs. Each comparison is first one of packed keys (time,
/// then rank and order prefix), as in [`in_output_order`].
pub(super) fn merge_runs(runs: &mut [Vec<Update>], rank: &[usize], into: &mut Vec<Update>) {
    let rank_of = |p: u32| rank.get(p as usize).copied().unwrap_or(usize::MAX);
    let key = |((p, row), time, _): &Update| {
        let prefix = row.first().map_or(0, |v| v.order_prefix64());
        (
            *time,
            (rank_of(*p).min(0xFFFF) as u128) << 64 | u128::from(prefix),
        )
    };
    let busy: Vec<usize> = (0..runs.len()).filter(|&i| !runs[i].is_empty()).collect();
    if busy.len() <= 1 {
        if let Some(&only) = busy.first() {
            into.append(&mut runs[only]);
        }
        return;
    }
    into.reserve(busy.iter().map(|&i| runs[i].len()).sum());
    let start = into.len();
    let mut at = vec![0usize; runs.len()];
    // Each run's head's key; a run that ran out has none. The head that comes first is
    // found by a tournament (a scan of every head cost 15 comparisons per update at 16
    // workers).
    let mut heads: Vec<Option<(u64, u128)>> = runs.iter().map(|run| run.first().map(key)).collect();
    let before =
        |runs: &[Vec<Update>], heads: &[Option<(u64, u128)>], at: &[usize], a: usize, b: usize| {
            match (heads[a], heads[b]) {
                (Some(k), Some(l)) => k
                    .cmp(&l)
                    .then_with(|| runs[a][at[a]].0.1.cmp(&runs[b][at[b]].0.1))
                    .is_lt(),
                (k, _) => k.is_some(),
            }
        };
    let mut tree = Tournament::new(runs.len(), |a, b| before(runs, &heads, &at, a, b));
    loop {
        let i = tree.winner();
        if heads[i].is_none() {
            break;
        }
        let ((pred, row), time, diff) = &mut runs[i][at[i]];
        match into[start..].last_mut() {
            Some(last) if last.1 == *time && last.0.0 == *pred && last.0.1 == *row => {
                last.2 += *diff;
                if last.2 == 0 {
                    into.pop();
                }
            }
            _ => into.push(((*pred, std::mem::take(row)), *time, *diff)),
        }
        at[i] += 1;
        heads[i] = runs[i].get(at[i]).map(key);
        tree.replay(|a, b| before(runs, &heads, &at, a, b));
    }
    for run in runs.iter_mut() {
        run.clear();
    }
}

/// [`merge_runs`] for runs that each hold few updates per time point (shards of a
/// sparse output): each time point's updates are gathered from the runs that have some
/// and sorted there on packed keys ([`in_output_order`]), where a tournament over the
/// runs cost several comparisons per update. Empties the runs.
pub(super) fn merge_time_points(
    runs: &mut [Vec<Update>],
    rank: &[usize],
    order: &mut Vec<OrderKey>,
    gathered: &mut Vec<Update>,
    into: &mut Vec<Update>,
) {
    let busy: Vec<usize> = (0..runs.len()).filter(|&i| !runs[i].is_empty()).collect();
    if busy.len() <= 1 {
        if let Some(&only) = busy.first() {
            into.append(&mut runs[only]);
        }
        return;
    }
    let mut at = vec![0usize; runs.len()];
    gathered.clear();
    gathered.reserve(busy.iter().map(|&i| runs[i].len()).sum());
    let head = |runs: &[Vec<Update>], at: &[usize], i: usize| runs[i].get(at[i]).map(|u| u.1);
    while let Some(t) = busy.iter().filter_map(|&i| head(runs, &at, i)).min() {
        for &i in &busy {
            let run = &mut runs[i];
            while let Some(update) = run.get_mut(at[i]).filter(|u| u.1 == t) {
                gathered.push(((update.0.0, std::mem::take(&mut update.0.1)), t, update.2));
                at[i] += 1;
            }
        }
    }
    let first = gathered.first().map_or(0, |u| u.1);
    in_output_order(gathered, rank, first, order, into);
    for run in runs.iter_mut() {
        run.clear();
    }
}

/// Moves `updates` in `order` onto `into`, adding up equal ones and dropping those that
/// cancel out (`into[start..]` is this batch's part).
/// The most tied updates [`by_rows`] sorts without reading their texts out first.
const FEW_TIED: usize = 8;

/// Sorts `tied`, whose packed keys are equal, by the updates' rows: the first arguments,
/// then the second's order prefix, then the rows.
///
/// Where the first arguments are symbols (IRIs share their first bytes, so their packed
/// keys tie), each text is found in the symbol table once, not in every comparison, and
/// the bytes the run's texts all share are skipped: the next 8 bytes of each order most
/// pairs with one integer comparison.
fn by_rows(updates: &[Update], tied: &mut [OrderKey]) {
    let row = |i: u32| &updates[i as usize].0.1;
    // A few tied updates (most often one fact from two rules) sort in place; reading the
    // texts out first pays for itself over longer runs.
    let texts: Option<Vec<&[u8]>> = (tied.len() > FEW_TIED)
        .then(|| {
            tied.iter()
                .map(|&(_, _, i)| match row(i).first() {
                    Some(Value::Sym(s)) => Some(s.as_bytes()),
                    _ => None,
                })
                .collect()
        })
        .flatten();
    let Some(texts) = texts else {
        tied.sort_unstable_by(|&(_, x2, i), &(_, y2, j)| {
            row(i)
                .first()
                .cmp(&row(j).first())
                .then(x2.cmp(&y2))
                .then_with(|| row(i).cmp(row(j)))
        });
        return;
    };
    let shared = texts.iter().skip(1).fold(texts[0].len(), |shared, text| {
        texts[0][..shared]
            .iter()
            .zip(*text)
            .take_while(|(a, b)| a == b)
            .count()
    });
    // A symbol orders as its text, and texts that share their first `shared` bytes as
    // the rest; the next 8 bytes, zero-padded, order them wherever they differ.
    let next8 = |text: &[u8]| {
        let rest = &text[shared..];
        let mut bytes = [0u8; 8];
        let head = &rest[..rest.len().min(8)];
        bytes[..head.len()].copy_from_slice(head);
        u64::from_be_bytes(bytes)
    };
    // Small pairs sort fast; what ties on them is looked up by the pair's place.
    let mut keyed: Vec<(u64, u32)> = (0..tied.len())
        .map(|at| (next8(texts[at]), at as u32))
        .collect();
    keyed.sort_unstable_by(|&(x, a), &(y, b)| {
        x.cmp(&y).then_with(|| {
            let ((_, x2, i), (_, y2, j)) = (tied[a as usize], tied[b as usize]);
            texts[a as usize][shared..]
                .cmp(&texts[b as usize][shared..])
                .then(x2.cmp(&y2))
                .then_with(|| row(i).cmp(row(j)))
        })
    });
    let sorted: Vec<OrderKey> = keyed.iter().map(|&(_, at)| tied[at as usize]).collect();
    tied.copy_from_slice(&sorted);
}

fn move_in_order(order: &[OrderKey], updates: &mut [Update], into: &mut Vec<Update>, start: usize) {
    for &(_, _, i) in order {
        let ((pred, row), time, diff) = &mut updates[i as usize];
        if let Some(last) = into[start..].last_mut() {
            if last.1 == *time && last.0.0 == *pred && last.0.1 == *row {
                last.2 += *diff;
                continue;
            }
            if last.2 == 0 {
                into.pop();
            }
        }
        into.push(((*pred, std::mem::take(row)), *time, *diff));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stgflow_lang::value::Row;

    /// The order `in_output_order` must produce, by a plain sort and consolidation.
    fn expected(updates: &[Update], rank: &[usize]) -> Vec<Update> {
        let mut sorted = updates.to_vec();
        sorted.sort_by(|((p, row), t, _), ((q, other), u, _)| {
            (t, rank[*p as usize], row).cmp(&(u, rank[*q as usize], other))
        });
        let mut out: Vec<Update> = Vec::new();
        for update in sorted {
            match out.last_mut() {
                Some(last) if last.0 == update.0 && last.1 == update.1 => last.2 += update.2,
                _ => out.push(update),
            }
        }
        out.retain(|u| u.2 != 0);
        out
    }

    /// Updates over `times`, with predicates out of name order, values of every kind,
    /// long symbols sharing a prefix, duplicates and cancelling pairs.
    fn updates(times: &[u64]) -> Vec<Update> {
        let values = [
            Value::sym("bbbbbbbbbb1"),
            Value::Int(-3),
            Value::sym("bbbbbbbbbb0"),
            Value::Float(2.5),
            Value::Int(1 << 40),
            Value::sym("a"),
            Value::sym("http://example.org/stream/event#10"),
            Value::sym("http://example.org/stream/event#1"),
        ];
        let mut out = Vec::new();
        for (i, &t) in times.iter().enumerate() {
            for (j, &v) in values.iter().enumerate() {
                let pred = ((i + j) % 3) as u32;
                let row: Row = [v, Value::Int((j % 2) as i64)].into_iter().collect();
                out.push(((pred, row.clone()), t, 1));
                if j % 3 == 0 {
                    out.push(((pred, row), t, -1));
                } else if j % 3 == 1 {
                    out.push(((pred, row), t, 1));
                }
            }
            out.push(((1, Row::new()), t, 1));
            // Equal first arguments whose second ones decide (two sharing a long prefix),
            // and first arguments sharing a prefix whose second ones are in the other
            // order.
            for pair in [
                [Value::Int(5), Value::sym("bbbbbbbbbb1")],
                [Value::Int(5), Value::sym("bbbbbbbbbb0")],
                [Value::Int(5), Value::Int(2)],
                [Value::sym("bbbbbbbbbb1"), Value::sym("a")],
                [Value::sym("bbbbbbbbbb0"), Value::sym("z")],
            ] {
                out.push(((2, pair.into_iter().collect()), t, 1));
            }
        }
        out.reverse();
        out
    }

    #[test]
    fn output_order_is_time_name_rank_arguments_consolidated_with_and_without_packed_keys() {
        // Predicate 0 sorts last by name, predicate 2 first.
        let rank = [2, 1, 0];
        for (times, in_time_order) in [
            (vec![7, 3, 5, 3, 9], false),
            (vec![0, 1 << 20, 5, 70_000, 1 << 20], false),
            // Time point by time point, as one operator's output comes.
            (vec![7, 3, 5, 3, 9], true),
            (vec![0, 1 << 20, 5, 70_000, 1 << 20], true),
        ] {
            let mut batch = updates(&times);
            if in_time_order {
                batch.sort_by_key(|u| u.1);
            }
            let want = expected(&batch, &rank);
            let mut into = vec![((0, Row::new()), 0, 1)];
            let mut order = Vec::new();
            in_output_order(&mut batch, &rank, 0, &mut order, &mut into);
            assert!(batch.is_empty());
            assert_eq!(into[0], ((0, Row::new()), 0, 1), "what was there stays");
            assert_eq!(&into[1..], &want[..], "times {times:?}, {in_time_order}");
        }
    }

    #[test]
    fn many_tied_symbols_sort_by_their_texts_past_what_they_share() {
        let rank = [1, 0];
        let mut batch = Vec::new();
        for i in (0..60u64).rev() {
            // Texts that share 32 bytes, one the other's prefix, one with a NUL past it,
            // equal first arguments whose second ones decide, and repeats that cancel.
            let first = match i % 5 {
                0 => "http://example.org/stream/event#".to_owned(),
                1 => format!("http://example.org/stream/event#{}\0", i % 3),
                _ => format!("http://example.org/stream/event#{}", i % 17 * 7),
            };
            for second in [
                Value::sym("x"),
                Value::sym("http://example.org/o#10"),
                Value::Int(2),
            ] {
                let row: Row = [Value::sym(&first), second].into_iter().collect();
                let pred = (i % 2) as u32;
                batch.push(((pred, row.clone()), 4 + i % 2, 1));
                if i % 4 == 0 {
                    batch.push(((pred, row), 4 + i % 2, -1));
                }
            }
        }
        for in_time_order in [false, true] {
            let mut batch = batch.clone();
            if in_time_order {
                batch.sort_by_key(|u| u.1);
            }
            let want = expected(&batch, &rank);
            let (mut order, mut into) = (Vec::new(), Vec::new());
            in_output_order(&mut batch, &rank, 0, &mut order, &mut into);
            assert_eq!(into, want, "{in_time_order}");
        }
    }

    #[test]
    fn merged_runs_are_in_output_order_and_consolidated() {
        let rank = [2, 1, 0];
        let batch = updates(&[7, 3, 5, 3, 9, 0, 70_000]);
        let want = expected(&batch, &rank);
        for workers in (1..=5).chain([16, 17]) {
            // Each worker's share, in output order, as each worker sends it.
            let mut runs: Vec<Vec<Update>> = (0..workers)
                .map(|w| {
                    let mut share: Vec<Update> = batch
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| i % workers == w)
                        .map(|(_, u)| u.clone())
                        .collect();
                    let (mut order, mut sorted) = (Vec::new(), Vec::new());
                    in_output_order(&mut share, &rank, 0, &mut order, &mut sorted);
                    sorted
                })
                .collect();
            let mut into = vec![((0, Row::new()), 0, 1)];
            merge_runs(&mut runs, &rank, &mut into);
            assert!(runs.iter().all(Vec::is_empty));
            assert_eq!(into[0], ((0, Row::new()), 0, 1), "what was there stays");
            assert_eq!(&into[1..], &want[..], "{workers} workers");
        }
    }

    #[test]
    fn output_before_the_first_time_point_takes_effect_there() {
        let mut batch = vec![((0, Row::new()), 2, 1), ((0, Row::new()), 5, -1)];
        let (mut order, mut into) = (Vec::new(), Vec::new());
        in_output_order(&mut batch, &[0], 5, &mut order, &mut into);
        assert!(
            into.is_empty(),
            "+1 and −1 both land at 5 and cancel: {into:?}"
        );
    }
}
