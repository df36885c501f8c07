//! How long a constant read in a predicate's facts can be held: a fact of `p` at t
//! derives facts at most `dist(p, q)` time points later along the rules (the offsets
//! `k` of the atoms read, summed over a path), each kept `k_q` time points past its own
//! and retracted one point after it ends. Where `p` leads into a recursion (through time
//! or within a time point), or the program has tuple windows (which hold atoms however
//! old), a constant can be held for ever. The table of long symbols frees a stream's
//! symbols by this bound ([`crate::value::symbols`]).

use crate::ir::{Literal, PredId, Program};
use crate::stratify::ordered_sccs;

/// Time points past the last one a derived fact can hold at: its retraction one point
/// later (`changes`), and the point its state is dropped at.
const SETTLE: u64 = 2;

/// For each predicate, how many time points after a fact of it a constant of the fact
/// can still be held; `None`: for ever.
pub fn symbol_reach(program: &Program) -> Vec<Option<u64>> {
    let n = program.predicates.len();
    if !program.tuple_windows.is_empty() {
        return vec![None; n];
    }
    // (body predicate, head predicate, offset), and how far back each predicate is read.
    let mut edges = Vec::new();
    let mut kept = vec![0u64; n];
    for rule in &program.rules {
        for literal in &rule.body {
            if let Literal::Positive(atom) | Literal::Negative(atom) = literal {
                edges.push((atom.pred, rule.head.pred, u64::from(atom.offset)));
                kept[atom.pred] = kept[atom.pred].max(u64::from(atom.offset));
            }
        }
    }
    let sccs = ordered_sccs(n, edges.iter().map(|&(from, to, _)| (from, to)));
    let mut successors: Vec<Vec<(PredId, u64)>> = vec![Vec::new(); n];
    for &(from, to, offset) in &edges {
        successors[from].push((to, offset));
    }
    // Heads before the predicates they read: the reverse of the dependency order.
    let mut reach: Vec<Option<u64>> = vec![None; n];
    for scc in sccs.iter().rev() {
        let recursive = scc.len() > 1 || successors[scc[0]].iter().any(|&(to, _)| to == scc[0]);
        if recursive {
            continue;
        }
        let p = scc[0];
        reach[p] = successors[p]
            .iter()
            .try_fold(kept[p], |most, &(to, offset)| {
                Some(most.max(reach[to]?.checked_add(offset)?))
            });
    }
    reach
        .into_iter()
        .map(|r| r.and_then(|r| r.checked_add(SETTLE)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reach_of(source: &str) -> Vec<(String, Option<u64>)> {
        let compiled = crate::compile_str("reach.tdl", source);
        assert!(
            !compiled.has_errors(),
            "{}",
            compiled.render_diagnostics(false)
        );
        let reach = symbol_reach(&compiled.program);
        compiled
            .program
            .predicates
            .iter()
            .zip(reach)
            .map(|(p, r)| (p.name.clone(), r))
            .collect()
    }

    #[test]
    fn reach_sums_offsets_and_kept_points_and_stops_at_recursion() {
        let reach = reach_of(
            "q(A, B, T) :- p(A, B, T).\nq(A, B, T) :- p(A, B, T-1).\n\
             r(A, T) :- q(A, B, T-3), not s(B, T-2).\n\
             safe(X, T) :- repair(X, T-1).\nsafe(X, T) :- safe(X, T-1), not warning(X, T-1).\n",
        );
        let of = |name: &str| reach.iter().find(|(n, _)| n == name).and_then(|(_, r)| *r);
        // p → q (1) → r (3): 4 points on; q is read 3 back; r is read by nothing.
        assert_eq!(of("r"), Some(SETTLE));
        assert_eq!(of("q"), Some(3 + SETTLE));
        assert_eq!(of("p"), Some(1 + 3 + SETTLE));
        assert_eq!(of("s"), Some(2 + SETTLE));
        assert_eq!(of("safe"), None);
        assert_eq!(of("repair"), None);
        assert_eq!(of("warning"), None);
    }
}
