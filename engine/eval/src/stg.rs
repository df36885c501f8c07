//! Streaming Trigger Graphs: Algorithm 4 (STGmat) of the STG paper, as written, for users
//! who study the algorithm (`--engine stg`, `--dump-stg`). The reference evaluator and the
//! dataflow engine compute the same facts faster; this module builds the graph.
//!
//! # What is built
//!
//! * **Nodes** (Definition 11) are labelled with a rule and a time point; ids count from 1
//!   in creation order, as the paper numbers them (v1, v2, …; Figure 1's v1–v14 exactly —
//!   from the tr nodes of t = 3 on the figure draws a selection, so its v19 is v22 here).
//!   A node holds the facts its rule derives from the facts of the nodes on its incoming
//!   edges.
//! * **p-edges** `u →j v`: the j-th body condition of rule(v) (counted over the whole
//!   body from 1, as in Figure 1) reads node u, whose head predicate and time match it.
//!   **n-edges** `U →j {v}`: the j-th condition is negated; U is every node of its
//!   predicate at its time point, all in lower strata or the past, hence complete.
//! * **Strata** are the paper's B_t^j: the SCCs of the incremental stratification
//!   ([`stgflow_lang::stratify`]) grouped by the number of negations below them, so Example 7 has
//!   B_t^1 = {vf, uvf} and B_t^2 = {sf, tr}. Rules run in program order within a stratum.
//! * **Iterations** k count globally. In each, a rule whose positive conditions all lie in
//!   a lower stratum or in the past gets a node for every *consistent* tuple of nodes
//!   (Definition 16); any other rule for every *k-compatible* tuple (Definition 15: all
//!   nodes from before k, at least one from k − 1). Extensional rules (no derived
//!   predicate in the body) get one node per time point. A tuple already used for a rule
//!   at this time point is not used again.
//! * **Counting rules** (`#count`, not in the paper): a counting rule's node reads every
//!   node of its atoms' predicates at their time points, as an n-edge does (they lie in
//!   lower strata or the past, hence complete), one node per time point; it is no
//!   conjunctive query, so MIN DATALOG leaves it.
//! * **MIN DATALOG** (line 21): each node of iteration k whose query is contained in the
//!   query of another node of the same predicate and time is removed before it is
//!   materialised (equivalent queries: the younger goes). Queries unfold p-edges and keep
//!   n-edges as extensional literals ([`query`]).
//! * **Materialisation restricted to new tuples** (line 22): only facts not already in
//!   I^{k−1} are new; a k-compatible tuple through the rule head's own SCC needs a node
//!   of k − 1 with new facts (semi-naive), which is what ends a stratum's repeat loop
//!   under offset-0 recursion. Nodes themselves hold all the facts of Definition 12, not
//!   only the new ones: storing only new facts and removing nodes by query containment do
//!   not go together — a node whose query contains another's holds less than its query
//!   says when an input's facts were first stored elsewhere, and the fact is lost (the
//!   LARS property test found it: a d1 node empty because its fact sat in a sibling, and
//!   the sibling's consumer removed as contained in the empty one's).
//! * **Forgetting** (Proposition 1): a node of predicate p built at t is removed at time
//!   point t + k_p + 1, and so are the stream's facts.
//!
//! # Where this differs from the text, and pitfalls
//!
//! * Atoms of input-only predicates are read from the stream S≤t directly (the paper's
//!   extensional rules do the same); a derived predicate's own stream facts form an *input
//!   node* at their time point, which edges may point at like any other node.
//! * A stratum's repeat loop runs until an iteration adds no node, not until I^k = I^{k−1}:
//!   Figure 1 has the tr nodes of t = 4 although the sf nodes they read are empty. To keep
//!   that finite under offset-0 recursion, a k-compatible tuple needs one node of k − 1
//!   that has new facts or lies outside the rule head's own SCC (a node without new facts
//!   in a recursive position cannot feed anything new: the semi-naive argument).
//! * **The graph grows with the stream.** Recursion through time (sf ← sf@T−1) adds one
//!   node per time point per surviving node of the past, and MIN DATALOG removes none of
//!   them (Figure 1 already shows two sf nodes at t = 3); joins of such predicates
//!   multiply. The engine stops with [`StgError::TooLarge`] when one time point builds more
//!   than [`Options::max_nodes_per_time_point`] nodes. It is meant for small streams.

mod dot;
pub mod query;

use hashbrown::{HashMap, HashSet};

use crate::eval::{Relation, binding_terms, compare, count_heads, eval};
use stgflow_io::drive::{Evaluator, RunError};
use stgflow_lang::ir::{Literal, PredId, Program, Term, VarId};
use stgflow_lang::stratify::Analysis;
use stgflow_lang::value::Row;

pub use dot::to_dot;
use query::{Input, Query, Source};

/// A node's id: 1, 2, … in creation order.
pub type NodeId = usize;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// Keep a record of every node built (for `--dump-stg`).
    pub record: bool,
    /// Stop with [`StgError::TooLarge`] when one time point builds more nodes than this.
    pub max_nodes_per_time_point: usize,
    /// Use no node that holds no facts as the source of a p-edge. Not in the paper (Figure
    /// 1 has such nodes: v7 reads the empty v3); it changes no fact, since a node's facts
    /// never change once materialised, and it keeps the graph proportional to the facts
    /// instead of exponential in the stream under recursion through time.
    pub skip_empty_nodes: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            record: false,
            max_nodes_per_time_point: 10_000,
            skip_empty_nodes: false,
        }
    }
}

/// What the graph did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub nodes_built: u64,
    pub removed_by_min_datalog: u64,
    pub forgotten: u64,
    /// Iterations k of the repeat loop, over all time points and strata.
    pub iterations: u64,
}

/// One node as it was built, for dumps.
#[derive(Clone, Debug, PartialEq)]
pub struct NodeRecord {
    pub id: NodeId,
    /// `None` for an input node (a derived predicate's stream facts).
    pub rule: Option<usize>,
    pub pred: PredId,
    pub time: u64,
    /// The paper's stratum index j of B_t^j, from 1 (0 for input nodes).
    pub stratum: usize,
    pub iteration: u64,
    /// `(position, u)`: u →position v.
    pub p_edges: Vec<(usize, NodeId)>,
    /// `(position, U)`: U →position {v}.
    pub n_edges: Vec<(usize, Vec<NodeId>)>,
    /// The facts it holds (new ones only), sorted.
    pub facts: Vec<Row>,
    /// Removed by MIN DATALOG because its query is contained in this node's.
    pub removed_by: Option<NodeId>,
    /// The time point at which it is forgotten.
    pub forget_at: u64,
}

/// Every node built, in creation order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Graph {
    pub nodes: Vec<NodeRecord>,
}

#[derive(Debug, thiserror::Error)]
pub enum StgError {
    #[error(
        "the streaming trigger graph built more than {limit} nodes at time point {time}; \
         Algorithm 4 grows with the stream under recursion through time (use --engine reference or dataflow)"
    )]
    TooLarge { time: u64, limit: usize },
}

/// A rule, prepared.
#[derive(Debug)]
struct RuleInfo {
    head: PredId,
    /// Body positions of positive atoms of derived predicates (the p-edges).
    edges: Vec<usize>,
    /// Per edge: an offset-0 atom of the head's own SCC.
    recursive: Vec<bool>,
    /// Body positions of negative atoms of derived predicates (the n-edges).
    negations: Vec<usize>,
    /// Every positive derived condition is in a lower stratum or the past (Definition 16
    /// applies instead of Definition 15).
    consistency: bool,
    /// Body positions in evaluation order: each filter after what binds its inputs.
    order: Vec<usize>,
    stratum: usize,
}

#[derive(Debug)]
struct Node {
    rule: Option<usize>,
    pred: PredId,
    time: u64,
    iteration: u64,
    /// The node read at each body position (p-edges).
    inputs: Vec<Option<NodeId>>,
    n_edges: Vec<(usize, Vec<NodeId>)>,
    /// Definition 12's facts (all of them, not only the new ones: see the module doc).
    facts: Relation,
    /// Some fact in `facts` was not in I^{k−1}.
    new: bool,
    query: Option<Query>,
}

/// The state of Algorithm 4 between time points.
#[derive(Debug)]
pub struct Stg<'p> {
    program: &'p Program,
    rules: Vec<RuleInfo>,
    /// Rule indices per stratum B_t^j, in program order.
    strata: Vec<Vec<usize>>,
    horizon: Vec<u32>,
    derived: Vec<bool>,
    /// The stratum B_t^j of each derived predicate.
    stratum_of: Vec<Option<usize>>,
    nodes: HashMap<NodeId, Node>,
    by_pred_time: HashMap<(PredId, u64), Vec<NodeId>>,
    /// S≤t, as far as it is still needed.
    stream: HashMap<(PredId, u64), Relation>,
    /// I: what holds, per predicate and time point.
    model: HashMap<(PredId, u64), Relation>,
    next_id: NodeId,
    iteration: u64,
    /// (rule, tuple) pairs used at the current time point.
    used: HashSet<(usize, Vec<NodeId>)>,
    built_now: usize,
    limit: usize,
    skip_empty: bool,
    stats: Stats,
    record: Option<Vec<NodeRecord>>,
}

impl<'p> Stg<'p> {
    pub fn new(program: &'p Program, analysis: &Analysis, options: &Options) -> Stg<'p> {
        let derived: Vec<bool> = (0..program.predicates.len())
            .map(|p| analysis.stratum_of.get(p).copied().flatten().is_some())
            .collect();
        let levels = paper_strata(program, analysis);
        let mut strata = vec![Vec::new(); levels.iter().copied().max().map_or(0, |m| m + 1)];
        let rules: Vec<RuleInfo> = program
            .rules
            .iter()
            .enumerate()
            .map(|(index, rule)| {
                let scc = analysis.stratum_of[rule.head.pred];
                let stratum = scc.map_or(0, |s| levels[s]);
                strata[stratum].push(index);
                let level_of = |p: PredId| analysis.stratum_of[p].map(|s| levels[s]);
                let mut edges = Vec::new();
                let mut recursive = Vec::new();
                let mut negations = Vec::new();
                let mut consistency = true;
                for (i, literal) in rule.body.iter().enumerate() {
                    match literal {
                        // A count reads all its atoms' facts: every node, as a negation.
                        Literal::Positive(atom) if derived[atom.pred] && rule.count.is_some() => {
                            negations.push(i)
                        }
                        Literal::Positive(atom) if derived[atom.pred] => {
                            edges.push(i);
                            recursive
                                .push(atom.offset == 0 && analysis.stratum_of[atom.pred] == scc);
                            if atom.offset == 0 && level_of(atom.pred) == Some(stratum) {
                                consistency = false;
                            }
                        }
                        Literal::Negative(atom) if derived[atom.pred] => negations.push(i),
                        _ => {}
                    }
                }
                RuleInfo {
                    head: rule.head.pred,
                    edges,
                    recursive,
                    negations,
                    consistency,
                    order: evaluation_order(&rule.body, rule.vars.len()),
                    stratum,
                }
            })
            .collect();
        let stratum_of = analysis
            .stratum_of
            .iter()
            .map(|s| s.map(|s| levels[s]))
            .collect();
        Stg {
            program,
            rules,
            strata,
            horizon: analysis.horizon.clone(),
            derived,
            stratum_of,
            nodes: HashMap::new(),
            by_pred_time: HashMap::new(),
            stream: HashMap::new(),
            model: HashMap::new(),
            next_id: 1,
            iteration: 0,
            used: HashSet::new(),
            built_now: 0,
            limit: options.max_nodes_per_time_point,
            skip_empty: options.skip_empty_nodes,
            stats: Stats::default(),
            record: options.record.then(Vec::new),
        }
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// Every node built so far, when recording.
    pub fn graph(&self) -> Option<Graph> {
        self.record.as_ref().map(|nodes| Graph {
            nodes: nodes.clone(),
        })
    }

    /// Evaluates time point `t` (consecutive after the first call) with its input facts;
    /// appends the facts of `outputs` that hold at `t`. An error stops the graph.
    pub fn step_graph(
        &mut self,
        t: u64,
        input: Vec<(PredId, Row)>,
        outputs: &[PredId],
        out: &mut Vec<(PredId, Row)>,
    ) -> Result<(), StgError> {
        self.forget(t);
        self.used.clear();
        self.built_now = 0;
        let mut derived_input: Vec<PredId> = Vec::new();
        for (pred, tuple) in input {
            if self.derived.get(pred).copied().unwrap_or(false) && !derived_input.contains(&pred) {
                derived_input.push(pred);
            }
            self.stream
                .entry((pred, t))
                .or_default()
                .insert(tuple.clone());
            self.model.entry((pred, t)).or_default().insert(tuple);
        }
        derived_input.sort_unstable();
        for pred in derived_input {
            let facts = self.stream.get(&(pred, t)).cloned().unwrap_or_default();
            self.add_node(None, pred, t, Vec::new(), Vec::new(), None, facts);
        }
        for stratum in 0..self.strata.len() {
            self.run_stratum(stratum, t)?;
        }
        for &pred in outputs {
            if let Some(facts) = self.model.get(&(pred, t)) {
                out.extend(facts.iter().map(|tuple| (pred, tuple.clone())));
            }
        }
        Ok(())
    }

    /// Proposition 1: nodes of p built at t' go at t' + k_p + 1; so do stream facts.
    fn forget(&mut self, t: u64) {
        let horizon = &self.horizon;
        let gone = |pred: PredId, time: u64| time + u64::from(horizon[pred]) < t;
        let mut forgotten: Vec<NodeId> = Vec::new();
        self.by_pred_time.retain(|&(pred, time), ids| {
            if gone(pred, time) {
                forgotten.append(ids);
                false
            } else {
                true
            }
        });
        for id in &forgotten {
            self.nodes.remove(id);
        }
        self.stats.forgotten += forgotten.len() as u64;
        self.stream.retain(|&(pred, time), _| !gone(pred, time));
        self.model.retain(|&(pred, time), _| !gone(pred, time));
    }

    fn run_stratum(&mut self, stratum: usize, t: u64) -> Result<(), StgError> {
        // Input nodes of this stratum's predicates count as built just before it, so that
        // k-compatible tuples (which need a node of k − 1) can start from them.
        for (&(pred, time), ids) in &self.by_pred_time {
            if time == t && self.stratum_of[pred] == Some(stratum) {
                for id in ids {
                    if let Some(node) = self.nodes.get_mut(id).filter(|n| n.rule.is_none()) {
                        node.iteration = self.iteration;
                    }
                }
            }
        }
        loop {
            self.iteration += 1;
            self.stats.iterations += 1;
            let k = self.iteration;
            let mut built = Vec::new();
            for index in 0..self.strata[stratum].len() {
                let r = self.strata[stratum][index];
                self.build_for_rule(r, t, k, &mut built)?;
            }
            if built.is_empty() {
                return Ok(());
            }
            self.min_datalog(&built);
            self.materialise(&built, t);
        }
    }

    /// Lines 8–20 for one rule: its nodes at iteration k.
    fn build_for_rule(
        &mut self,
        r: usize,
        t: u64,
        k: u64,
        built: &mut Vec<NodeId>,
    ) -> Result<(), StgError> {
        let program = self.program;
        let rule = &program.rules[r];
        let info = &self.rules[r];
        let time_of = |position: usize| {
            rule.body[position]
                .atom()
                .and_then(|a| t.checked_sub(u64::from(a.offset)))
                .map(|time| (a_pred(&rule.body[position]), time))
        };
        let candidates: Vec<Vec<NodeId>> = info
            .edges
            .iter()
            .map(|&position| {
                time_of(position)
                    .and_then(|key| self.by_pred_time.get(&key))
                    .map(|ids| {
                        ids.iter()
                            .copied()
                            .filter(|id| {
                                self.nodes.get(id).is_some_and(|n| {
                                    n.iteration < k && !(self.skip_empty && n.facts.is_empty())
                                })
                            })
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect();
        let n_edges: Vec<(usize, Vec<NodeId>)> = info
            .negations
            .iter()
            .map(|&position| {
                let sources = time_of(position)
                    .and_then(|key| self.by_pred_time.get(&key))
                    .cloned()
                    .unwrap_or_default();
                (position, sources)
            })
            .collect();
        let sizes: Vec<usize> = candidates.iter().map(Vec::len).collect();
        let mut tuples: Vec<Vec<NodeId>> = Vec::new();
        if sizes.iter().all(|&n| n > 0) {
            // The first position varies slowest.
            let mut digits = vec![0usize; candidates.len()];
            loop {
                let tuple: Vec<NodeId> =
                    digits.iter().zip(&candidates).map(|(&d, c)| c[d]).collect();
                let usable = info.consistency
                    || tuple.iter().zip(&info.recursive).any(|(id, &recursive)| {
                        self.nodes
                            .get(id)
                            .is_some_and(|n| n.iteration + 1 == k && (!recursive || n.new))
                    });
                if usable && !self.used.contains(&(r, tuple.clone())) {
                    tuples.push(tuple);
                }
                if !advance(&mut digits, &sizes) {
                    break;
                }
            }
        }
        let head = info.head;
        let edges = info.edges.clone();
        let body_len = rule.body.len();
        for tuple in tuples {
            self.used.insert((r, tuple.clone()));
            let mut inputs = vec![None; body_len];
            for (&position, &id) in edges.iter().zip(&tuple) {
                inputs[position] = Some(id);
            }
            // A count is not a conjunctive query: no other node's contains it.
            let query = (rule.count.is_none()).then(|| self.query_of(r, t, &inputs));
            let id = self.add_node(
                Some(r),
                head,
                t,
                inputs,
                n_edges.clone(),
                query,
                Relation::new(),
            );
            built.push(id);
            self.built_now += 1;
            if self.built_now > self.limit {
                return Err(StgError::TooLarge {
                    time: t,
                    limit: self.limit,
                });
            }
        }
        Ok(())
    }

    fn query_of(&self, r: usize, t: u64, inputs: &[Option<NodeId>]) -> Query {
        query::build(&self.program.rules[r], t, |position| {
            let id = inputs.get(position).copied().flatten()?;
            let node = self.nodes.get(&id)?;
            Some(match &node.query {
                Some(query) if query.lits.len() <= query::INLINE_LIMIT => Input::Inline(query),
                Some(_) => Input::Opaque(Source::Node(id)),
                None => Input::Opaque(Source::Stream(node.pred, node.time)),
            })
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn add_node(
        &mut self,
        rule: Option<usize>,
        pred: PredId,
        time: u64,
        inputs: Vec<Option<NodeId>>,
        n_edges: Vec<(usize, Vec<NodeId>)>,
        query: Option<Query>,
        facts: Relation,
    ) -> NodeId {
        let id = self.next_id;
        self.next_id += 1;
        self.stats.nodes_built += 1;
        if let Some(record) = &mut self.record {
            record.push(NodeRecord {
                id,
                rule,
                pred,
                time,
                stratum: rule.map_or(0, |r| self.rules[r].stratum + 1),
                iteration: self.iteration,
                p_edges: inputs
                    .iter()
                    .enumerate()
                    .filter_map(|(i, u)| u.map(|u| (i + 1, u)))
                    .collect(),
                n_edges: n_edges.iter().map(|(i, u)| (i + 1, u.clone())).collect(),
                facts: sorted(&facts),
                removed_by: None,
                forget_at: time + u64::from(self.horizon[pred]) + 1,
            });
        }
        self.nodes.insert(
            id,
            Node {
                rule,
                pred,
                time,
                iteration: self.iteration,
                inputs,
                n_edges,
                new: !facts.is_empty(),
                facts,
                query,
            },
        );
        self.by_pred_time.entry((pred, time)).or_default().push(id);
        id
    }

    /// Line 21: removes each node of this iteration whose query another node's contains.
    fn min_datalog(&mut self, built: &[NodeId]) {
        for &v in built {
            let Some(node) = self.nodes.get(&v) else {
                continue;
            };
            let Some(query) = &node.query else { continue };
            let peers = self
                .by_pred_time
                .get(&(node.pred, node.time))
                .map(Vec::as_slice)
                .unwrap_or_default();
            let general = peers.iter().copied().find(|&w| {
                w != v
                    && self
                        .nodes
                        .get(&w)
                        .and_then(|n| n.query.as_ref())
                        .is_some_and(|other| {
                            query::contained_in(query, other)
                                && (w < v || !query::contained_in(other, query))
                        })
            });
            if let Some(w) = general {
                let key = (node.pred, node.time);
                self.nodes.remove(&v);
                if let Some(ids) = self.by_pred_time.get_mut(&key) {
                    ids.retain(|&id| id != v);
                }
                self.stats.removed_by_min_datalog += 1;
                if let Some(record) = &mut self.record {
                    if let Some(entry) = record.get_mut(v - 1) {
                        entry.removed_by = Some(w);
                    }
                }
            }
        }
    }

    /// Line 22: each remaining node of this iteration gets its facts; those not in I^{k−1}
    /// are new, and join I.
    fn materialise(&mut self, built: &[NodeId], t: u64) {
        let mut derived: Vec<(NodeId, Relation, bool)> = Vec::new();
        for &id in built {
            let Some(node) = self.nodes.get(&id) else {
                continue;
            };
            let Some(r) = node.rule else { continue };
            let mut out = Vec::new();
            self.fire(r, node, t, &mut out);
            let old = self.model.get(&(node.pred, t));
            let new = out
                .iter()
                .any(|tuple| !old.is_some_and(|o| o.contains(tuple)));
            derived.push((id, out.into_iter().collect(), new));
        }
        for (id, facts, new) in derived {
            let Some(node) = self.nodes.get_mut(&id) else {
                continue;
            };
            let relation = self.model.entry((node.pred, t)).or_default();
            relation.extend(facts.iter().cloned());
            if let Some(record) = &mut self.record {
                if let Some(entry) = record.get_mut(id - 1) {
                    entry.facts = sorted(&facts);
                }
            }
            node.facts = facts;
            node.new = new;
        }
    }

    /// Definition 12: the facts of `node`'s rule over the nodes on its edges.
    fn fire(&self, r: usize, node: &Node, t: u64, out: &mut Vec<Row>) {
        let rule = &self.program.rules[r];
        let reads: Vec<Vec<&Relation>> = rule
            .body
            .iter()
            .enumerate()
            .map(|(i, literal)| {
                let Some(atom) = literal.atom() else {
                    return Vec::new();
                };
                if let Some(id) = node.inputs[i] {
                    return self.nodes.get(&id).map(|u| &u.facts).into_iter().collect();
                }
                if let Some((_, sources)) = node.n_edges.iter().find(|(p, _)| *p == i) {
                    return sources
                        .iter()
                        .filter_map(|id| self.nodes.get(id).map(|u| &u.facts))
                        .collect();
                }
                t.checked_sub(u64::from(atom.offset))
                    .and_then(|time| self.stream.get(&(atom.pred, time)))
                    .into_iter()
                    .collect()
            })
            .collect();
        let mut env = vec![None; rule.vars.len()];
        let terms = binding_terms(rule);
        let join = Join {
            body: &rule.body,
            order: &self.rules[r].order,
            reads: &reads,
            head: &terms,
            t,
        };
        if rule.count.is_some() {
            let mut bindings = Vec::new();
            join.run(0, &mut env, &mut bindings);
            count_heads(rule, bindings.into_iter(), out);
        } else {
            join.run(0, &mut env, out);
        }
    }
}

/// The next tuple of an odometer over `sizes`; false after the last.
fn advance(digits: &mut [usize], sizes: &[usize]) -> bool {
    for i in (0..digits.len()).rev() {
        digits[i] += 1;
        if digits[i] < sizes[i] {
            return true;
        }
        digits[i] = 0;
    }
    false
}

fn a_pred(literal: &Literal) -> PredId {
    literal.atom().map_or(0, |a| a.pred)
}

fn sorted(facts: &Relation) -> Vec<Row> {
    let mut facts: Vec<Row> = facts.iter().cloned().collect();
    facts.sort();
    facts
}

/// The paper's strata: SCC s goes to level max over its offset-0 conditions on another
/// SCC s' of level(s') (+1 through negation).
fn paper_strata(program: &Program, analysis: &Analysis) -> Vec<usize> {
    let mut level = vec![0usize; analysis.strata.len()];
    for (s, stratum) in analysis.strata.iter().enumerate() {
        for &r in &stratum.rules {
            let rule = &program.rules[r];
            for literal in &rule.body {
                // A count's atoms are read whole, as a negation's: from a stratum below.
                let (atom, negative) = match literal {
                    Literal::Positive(atom) => (atom, rule.count.is_some()),
                    Literal::Negative(atom) => (atom, true),
                    _ => continue,
                };
                if atom.offset > 0 {
                    continue;
                }
                if let Some(other) = analysis.stratum_of[atom.pred].filter(|&o| o != s) {
                    level[s] = level[s].max(level[other] + usize::from(negative));
                }
            }
        }
    }
    level
}

/// Positive atoms in body order, every other literal as soon as its inputs are bound (never
/// before: a negation over an unbound variable would block nothing).
pub(crate) fn evaluation_order(body: &[Literal], vars: usize) -> Vec<usize> {
    let mut bound = vec![false; vars];
    let mut order = Vec::with_capacity(body.len());
    let mut placed = vec![false; body.len()];
    let ready = |literal: &Literal, bound: &[bool]| {
        let mut needed = Vec::new();
        match literal {
            Literal::Negative(atom) => needed.extend(atom.args.iter().filter_map(var_of)),
            Literal::Compare { lhs, rhs, .. } => {
                lhs.vars(&mut needed);
                rhs.vars(&mut needed);
            }
            Literal::Assign { expr, .. } => expr.vars(&mut needed),
            Literal::Positive(_) => return false,
        }
        needed
            .iter()
            .all(|&v| bound.get(v).copied().unwrap_or(false))
    };
    loop {
        let mut progress = false;
        for (i, literal) in body.iter().enumerate() {
            if !placed[i] && ready(literal, &bound) {
                placed[i] = true;
                order.push(i);
                if let Literal::Assign { var, .. } = literal {
                    bound[*var] = true;
                }
                progress = true;
            }
        }
        if progress {
            continue;
        }
        // Nothing else is ready: the next positive atom binds more. A negation or filter
        // placed before its variables are bound would read them as unbound (a negation
        // then blocks nothing: `d2(C) :- not d1(C), e(A), d1(C).` derived d2), so one is
        // placed early only when no positive atom is left (an unsafe rule).
        let Some(i) = (0..body.len())
            .find(|&i| !placed[i] && matches!(body[i], Literal::Positive(_)))
            .or_else(|| (0..body.len()).find(|&i| !placed[i]))
        else {
            break;
        };
        placed[i] = true;
        order.push(i);
        if let Literal::Positive(atom) = &body[i] {
            atom.args
                .iter()
                .filter_map(var_of)
                .for_each(|v| bound[v] = true);
        }
    }
    order
}

fn var_of(term: &Term) -> Option<VarId> {
    match term {
        Term::Var(v) => Some(*v),
        _ => None,
    }
}

/// A nested-loop join of one node's rule over the relations it reads.
struct Join<'a> {
    body: &'a [Literal],
    order: &'a [usize],
    /// Per body position: the relations a positive atom reads (at most one) or a negation
    /// looks into (their union).
    reads: &'a [Vec<&'a Relation>],
    head: &'a [Term],
    t: u64,
}

impl Join<'_> {
    fn run(
        &self,
        step: usize,
        env: &mut Vec<Option<stgflow_lang::value::Value>>,
        out: &mut Vec<Row>,
    ) {
        let Some(&position) = self.order.get(step) else {
            let head: Option<Row> = self
                .head
                .iter()
                .map(|term| match term {
                    Term::Var(v) => env[*v],
                    Term::Const(c) => Some(*c),
                    Term::Wildcard => None,
                })
                .collect();
            out.extend(head);
            return;
        };
        match &self.body[position] {
            Literal::Positive(atom) => {
                for relation in &self.reads[position] {
                    for tuple in relation.iter() {
                        let mut newly = Vec::new();
                        if crate::eval::unify(&atom.args, tuple, env, &mut newly) {
                            self.run(step + 1, env, out);
                        }
                        for v in newly {
                            env[v] = None;
                        }
                    }
                }
            }
            Literal::Negative(atom) => {
                let blocked = self.reads[position].iter().any(|relation| {
                    relation.iter().any(|tuple| {
                        atom.args
                            .iter()
                            .zip(tuple.iter())
                            .all(|(term, value)| match term {
                                Term::Var(v) => env[*v] == Some(*value),
                                Term::Const(c) => c == value,
                                Term::Wildcard => true,
                            })
                    })
                });
                if !blocked {
                    self.run(step + 1, env, out);
                }
            }
            Literal::Compare { op, lhs, rhs, .. } => {
                if let (Some(a), Some(b)) = (eval(lhs, env, self.t), eval(rhs, env, self.t)) {
                    if compare(*op, a, b) {
                        self.run(step + 1, env, out);
                    }
                }
            }
            Literal::Assign { var, expr, .. } => {
                if let Some(value) = eval(expr, env, self.t) {
                    let previous = env[*var].replace(value);
                    self.run(step + 1, env, out);
                    env[*var] = previous;
                }
            }
        }
    }
}

/// The graph as an evaluator for [`stgflow_io::drive::drive`]: a time point that builds too
/// many nodes stops the run with [`RunError::Evaluation`].
impl Evaluator for Stg<'_> {
    fn step(
        &mut self,
        t: u64,
        input: Vec<(PredId, Row)>,
        outputs: &[PredId],
        out: &mut Vec<(PredId, Row)>,
    ) -> Result<(), RunError> {
        self.step_graph(t, input, outputs, out)
            .map_err(|error| RunError::Evaluation(Box::new(error)))
    }
}
