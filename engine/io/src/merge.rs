//! A k-way merge's choice of the run whose head comes first: a tournament (loser) tree.
//!
//! The workers' sorted output runs are merged by one thread; a scan of every run's head
//! per merged item costs k − 1 comparisons, which at many workers makes that thread the
//! run's bottleneck. The tree keeps the loser of each match and replays only the
//! winner's path: ⌈log₂ k⌉ comparisons per item.

/// The order of `k` runs' heads, kept as a loser tree. The caller owns the runs and
/// compares them: `before(a, b)` says whether run `a`'s head comes strictly before run
/// `b`'s (an exhausted run's never does). Equal heads come out by run index, so the
/// merge is deterministic.
#[derive(Debug)]
pub struct Tournament {
    /// `losers[0]`: the winner; `losers[n]` for an inner node n (1..k): the run that lost
    /// there. Run j's leaf is node k + j; node n's parent is n / 2.
    losers: Vec<usize>,
}

impl Tournament {
    /// Plays the tournament of runs `0..k` (k ≥ 1).
    pub fn new(k: usize, mut before: impl FnMut(usize, usize) -> bool) -> Tournament {
        let mut first = |a: usize, b: usize| before(a, b) || (a < b && !before(b, a));
        let mut winners = vec![0; 2 * k.max(1)];
        let mut losers = vec![0; k.max(1)];
        for j in 0..k {
            winners[k + j] = j;
        }
        for n in (1..k).rev() {
            let (a, b) = (winners[2 * n], winners[2 * n + 1]);
            let (win, lose) = if first(a, b) { (a, b) } else { (b, a) };
            winners[n] = win;
            losers[n] = lose;
        }
        if k > 1 {
            losers[0] = winners[1];
        }
        Tournament { losers }
    }

    /// The run whose head comes first.
    pub fn winner(&self) -> usize {
        self.losers[0]
    }

    /// The winner's head changed (it was taken, and the run moved on or ran out): plays
    /// its path to the root again.
    pub fn replay(&mut self, mut before: impl FnMut(usize, usize) -> bool) {
        let k = self.losers.len();
        let mut current = self.losers[0];
        let mut node = (current + k) / 2;
        while node >= 1 {
            let other = self.losers[node];
            if before(other, current) || (other < current && !before(current, other)) {
                self.losers[node] = current;
                current = other;
            }
            node /= 2;
        }
        self.losers[0] = current;
    }
}

#[cfg(test)]
mod tests {
    use super::Tournament;

    proptest::proptest! {
        /// Merging sorted runs of small numbers (many ties, empty runs) through the tree
        /// gives every item in order, equal items by run index: what sorting the items
        /// tagged with their run gives.
        #[test]
        fn a_tournament_merges_sorted_runs_as_a_stable_sort_by_run(
            runs in proptest::collection::vec(proptest::collection::vec(0u8..6, 0..12), 1..20),
        ) {
            let runs: Vec<Vec<u8>> = runs
                .into_iter()
                .map(|mut run| {
                    run.sort_unstable();
                    run
                })
                .collect();
            let mut at = vec![0usize; runs.len()];
            let before = |at: &[usize], a: usize, b: usize| match (runs[a].get(at[a]), runs[b].get(at[b])) {
                (Some(x), Some(y)) => x < y,
                (Some(_), None) => true,
                (None, _) => false,
            };
            let mut tree = Tournament::new(runs.len(), |a, b| before(&at, a, b));
            let mut merged = Vec::new();
            loop {
                let run = tree.winner();
                let Some(&item) = runs[run].get(at[run]) else { break };
                merged.push((item, run));
                at[run] += 1;
                tree.replay(|a, b| before(&at, a, b));
            }
            let mut want: Vec<(u8, usize)> = runs
                .iter()
                .enumerate()
                .flat_map(|(run, items)| items.iter().map(move |&item| (item, run)))
                .collect();
            want.sort();
            proptest::prop_assert_eq!(merged, want);
        }
    }
}
