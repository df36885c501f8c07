//! The incremental stratification (Definition 14), temporal SCCs and forgetting horizons
//! (Proposition 1).
//!
//! * **Strata.** P_T is the program without its offset>0 conditions. Its dependency graph
//!   (body predicate → head predicate, offset-0 literals only) is condensed into SCCs and
//!   ordered topologically; each SCC is a stratum. Evaluating the strata in order at every
//!   time point t, with all earlier time points complete, computes the perfect model. A
//!   stratum is *recursive* when its SCC has an offset-0 cycle (positive only: validation
//!   rejects cycles through negation).
//! * **Temporal SCCs.** SCCs of the full dependency graph that contain an edge with offset
//!   > 0 (recursion through time, e.g. EC inertia).
//! * **Horizon** k_p: the largest offset at which p is read by any rule; a fact of p at t
//!   is never read after t + k_p, so evaluators keep max k_p time points of history.

use std::collections::BTreeSet;

use petgraph::algo::kosaraju_scc;
use petgraph::graph::{DiGraph, NodeIndex};

use crate::diag::Span;
use crate::ir::{Literal, PredId, Program};

/// One dependency: `from` is read by a rule whose head is `to`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Edge {
    pub from: PredId,
    pub to: PredId,
    pub offset: u32,
    /// `from` is negated, or counted (a counting rule reads its atoms as strictly as a
    /// negation).
    pub negative: bool,
    /// The edge is a counting rule's.
    pub counted: bool,
    pub rule: usize,
    pub span: Span,
}

/// Every body-atom dependency of the program.
pub fn edges(program: &Program) -> Vec<Edge> {
    let mut edges = Vec::new();
    for (index, rule) in program.rules.iter().enumerate() {
        for literal in &rule.body {
            let (atom, negative) = match literal {
                Literal::Positive(atom) => (atom, false),
                Literal::Negative(atom) => (atom, true),
                _ => continue,
            };
            let counted = rule.count.is_some();
            edges.push(Edge {
                from: atom.pred,
                to: rule.head.pred,
                offset: atom.offset,
                negative: negative || counted,
                counted,
                rule: index,
                span: atom.span,
            });
        }
    }
    edges
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stratum {
    pub preds: Vec<PredId>,
    /// Indices of the rules whose head is in this stratum.
    pub rules: Vec<usize>,
    /// Whether the stratum's predicates depend on each other at offset 0.
    pub recursive: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TemporalScc {
    pub preds: Vec<PredId>,
    /// Every rule whose head is in the SCC.
    pub rules: Vec<usize>,
    /// The rules that close a cycle: head and some body atom both in the SCC.
    pub cycle_rules: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Analysis {
    /// In evaluation order; only predicates that some rule defines.
    pub strata: Vec<Stratum>,
    /// The stratum of each predicate; `None` for input-only predicates (no rule defines
    /// them: they are complete as soon as the input of a time point is).
    pub stratum_of: Vec<Option<usize>>,
    pub temporal_sccs: Vec<TemporalScc>,
    /// k_p per predicate.
    pub horizon: Vec<u32>,
    /// max k_p: how many past time points an evaluator keeps.
    pub max_horizon: u32,
}

/// SCCs of the graph over `n` predicates with `edges`, in topological order (dependencies
/// first), ties broken by the smallest predicate id so the order is stable.
pub fn ordered_sccs(n: usize, edges: impl Iterator<Item = (PredId, PredId)>) -> Vec<Vec<PredId>> {
    let mut graph: DiGraph<PredId, ()> = DiGraph::with_capacity(n, 0);
    for p in 0..n {
        graph.add_node(p);
    }
    let mut pairs: Vec<(PredId, PredId)> = edges.collect();
    pairs.sort_unstable();
    pairs.dedup();
    for &(from, to) in &pairs {
        graph.add_edge(NodeIndex::new(from), NodeIndex::new(to), ());
    }
    // Kosaraju's algorithm in petgraph is iterative; its Tarjan recurses once per node
    // of a chain and overflows the stack on a program of 10,000 chained rules.
    let mut sccs: Vec<Vec<PredId>> = kosaraju_scc(&graph)
        .into_iter()
        .map(|scc| {
            let mut preds: Vec<PredId> = scc.into_iter().map(NodeIndex::index).collect();
            preds.sort_unstable();
            preds
        })
        .collect();
    sccs.sort_by_key(|scc| scc[0]);
    let mut component = vec![0; n];
    for (c, scc) in sccs.iter().enumerate() {
        for &p in scc {
            component[p] = c;
        }
    }
    let mut successors: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); sccs.len()];
    let mut indegree = vec![0usize; sccs.len()];
    for &(from, to) in &pairs {
        let (a, b) = (component[from], component[to]);
        if a != b && successors[a].insert(b) {
            indegree[b] += 1;
        }
    }
    let mut ready: BTreeSet<usize> = (0..sccs.len()).filter(|&c| indegree[c] == 0).collect();
    let mut order = Vec::with_capacity(sccs.len());
    while let Some(c) = ready.pop_first() {
        order.push(c);
        for &next in &successors[c] {
            indegree[next] -= 1;
            if indegree[next] == 0 {
                ready.insert(next);
            }
        }
    }
    order
        .into_iter()
        .map(|c| std::mem::take(&mut sccs[c]))
        .collect()
}

/// Computes the strata, temporal SCCs and horizons of a (validated) program.
pub fn analyse(program: &Program) -> Analysis {
    let n = program.predicates.len();
    let edges = edges(program);
    let same_time = edges
        .iter()
        .filter(|e| e.offset == 0)
        .map(|e| (e.from, e.to));
    let derived = program.derived();
    let sccs: Vec<Vec<PredId>> = ordered_sccs(n, same_time)
        .into_iter()
        .filter(|scc| scc.iter().any(|&p| derived[p]))
        .collect();
    let mut stratum_of = vec![None; n];
    for (s, scc) in sccs.iter().enumerate() {
        for &p in scc {
            stratum_of[p] = Some(s);
        }
    }
    // One pass over the rules and edges each, not one per stratum: a program may have
    // 10,000 strata.
    let mut strata: Vec<Stratum> = sccs
        .into_iter()
        .map(|preds| Stratum {
            preds,
            rules: Vec::new(),
            recursive: false,
        })
        .collect();
    for (r, rule) in program.rules.iter().enumerate() {
        if let Some(s) = stratum_of[rule.head.pred] {
            strata[s].rules.push(r);
        }
    }
    for e in edges.iter().filter(|e| e.offset == 0) {
        if let Some(s) = stratum_of[e.from].filter(|&s| stratum_of[e.to] == Some(s)) {
            strata[s].recursive = true;
        }
    }

    let all = ordered_sccs(n, edges.iter().map(|e| (e.from, e.to)));
    let mut component = vec![0; n];
    for (c, scc) in all.iter().enumerate() {
        for &p in scc {
            component[p] = c;
        }
    }
    // Per component: whether an offset>0 edge stays inside it; per rule: whether a body
    // atom is in its head's component (it closes a cycle). One pass each.
    let mut through_time = vec![false; all.len()];
    for e in &edges {
        if e.offset > 0 && component[e.from] == component[e.to] {
            through_time[component[e.from]] = true;
        }
    }
    let mut closes_cycle = vec![false; program.rules.len()];
    for e in &edges {
        if component[e.from] == component[program.rules[e.rule].head.pred] {
            closes_cycle[e.rule] = true;
        }
    }
    let mut rules_of: Vec<Vec<usize>> = vec![Vec::new(); all.len()];
    for (r, rule) in program.rules.iter().enumerate() {
        if through_time[component[rule.head.pred]] {
            rules_of[component[rule.head.pred]].push(r);
        }
    }
    let temporal_sccs = all
        .iter()
        .enumerate()
        .filter(|(c, _)| through_time[*c])
        .map(|(c, preds)| {
            let rules = std::mem::take(&mut rules_of[c]);
            TemporalScc {
                preds: preds.clone(),
                cycle_rules: rules.iter().copied().filter(|&r| closes_cycle[r]).collect(),
                rules,
            }
        })
        .collect();

    let mut horizon = vec![0u32; n];
    for e in &edges {
        horizon[e.from] = horizon[e.from].max(e.offset);
    }
    let max_horizon = horizon.iter().copied().max().unwrap_or(0);
    Analysis {
        strata,
        stratum_of,
        temporal_sccs,
        horizon,
        max_horizon,
    }
}

impl Analysis {
    /// The `--dump strata` text.
    pub fn dump(&self, program: &Program) -> String {
        let name = |p: PredId| program.pred_name(p).to_owned();
        let names = |preds: &[PredId]| {
            preds
                .iter()
                .map(|&p| name(p))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let mut out = String::from(
            "% incremental stratification (Definition 14): SCCs of the offset-0 dependency graph\n",
        );
        let inputs: Vec<PredId> = (0..self.stratum_of.len())
            .filter(|&p| self.stratum_of[p].is_none())
            .collect();
        out.push_str(&format!(
            "input only: {}\n",
            if inputs.is_empty() {
                "none".to_owned()
            } else {
                names(&inputs)
            }
        ));
        for (s, stratum) in self.strata.iter().enumerate() {
            let kind = if stratum.recursive {
                " (recursive at offset 0)"
            } else {
                ""
            };
            out.push_str(&format!("stratum {s}: {}{kind}\n", names(&stratum.preds)));
            for &r in &stratum.rules {
                out.push_str(&format!(
                    "  r{r}: {}\n",
                    program.display_rule(&program.rules[r])
                ));
            }
        }
        out.push_str("% temporal SCCs: recursion through an offset > 0\n");
        if self.temporal_sccs.is_empty() {
            out.push_str("none\n");
        }
        for scc in &self.temporal_sccs {
            let list = |rules: &[usize]| {
                rules
                    .iter()
                    .map(|r| format!("r{r}"))
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            out.push_str(&format!(
                "{{{}}} defined by {}; cycle through {}\n",
                names(&scc.preds),
                list(&scc.rules),
                list(&scc.cycle_rules)
            ));
        }
        out.push_str(
            "% forgetting horizons k_p (Proposition 1): the largest offset at which p is read\n",
        );
        for (p, k) in self.horizon.iter().enumerate() {
            out.push_str(&format!("{}: {k}\n", name(p)));
        }
        out.push_str(&format!(
            "history kept: {} time point(s)\n",
            self.max_horizon
        ));
        out
    }
}
