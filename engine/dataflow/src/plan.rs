//! The dataflow plan: which rules run as differential operators, which run in the
//! time-stepping operator, and which predicates are windows.
//!
//! The program's predicates are grouped into the SCCs of the *full* dependency graph
//! (every offset), in topological order, so that every edge between components goes
//! forward, at any offset (a delay). Each component is one of:
//!
//! * **Window** — a predicate defined exactly as LARS's ⊞d♢ p (d+1 rules
//!   `q(X, T) :- p(X, T-i)`, i = 0..d) or ⊞d□ p (one rule `q(X, T) :- p(X, T), …,
//!   p(X, T-d)`): lowered to an O(1)-per-change delay operator (see `operators::window`) instead of d+1
//!   delayed copies or a (d+1)-way join.
//!   A window read only by one rule `q(X…, T) :- w(X…, T), not g(T-k)` (its own arguments
//!   in order, g without arguments), and not printed, is fused with that rule into a
//!   **gated window** for q: one operator and one count table, where the window, the
//!   antijoin and q's 0/1 closure took three (LARS's `… and not(s)`).
//! * **Dataflow** — rules with no recursion through time: rendered as joins, antijoins,
//!   maps and filters over differential collections; `iterate` when the component recurses
//!   at offset 0.
//! * **Persist** — a temporal SCC of the shape the Event Calculus's inertia takes (the
//!   paper's rules 14–16): a predicate h whose rules either start it (bodies that read
//!   neither h nor the SCC's other predicate) or keep it, `h(P…, T) :- h(P…, T-1),
//!   not s(Q…, T-k), …` (P… distinct variables and constants, the negations over P…'s
//!   variables, constants and `_`), and optionally one terminating predicate `term`,
//!   negated at T-1 in the keep rules, whose rules read h at offset 0 and predicates
//!   outside (the multi-valued form `term(F, V, T) :- init(F, W, T), h(F, V, T), V != W.`).
//!   Lowered to one operator with one state per key (see `operators::persist`) that is
//!   touched only when the key's input or state changed; the start rules are dataflow
//!   rules in front of it. Instead of `term`, the SCC may hold predicates *derived* from
//!   h a point back (bodies that read h at T-1, one another at offset 0 in an order, and
//!   predicates outside): RTEC's initiation of a value by a partial event for every
//!   instance that holds another (`voted_ie(V, M, null, T) :- status_start(M, null, T),
//!   voted(V, M, O, T-1), O != null.`) and the terminations it implies (`voted_te`); h's
//!   rules may then start it from them at offset 0 and negate them at offset 0 in the
//!   keep rules. The operator derives them per key, and evaluates the start rules keyed
//!   as the rest itself.
//! * **Count** — a counting rule over one atom and nothing else, `h(G…, N, T) :- N =
//!   #count { C… : p(X…, T-k) }` (what the lowering of `#count` writes for a count over one
//!   atom: voting's `#count { V : voted(V, M, aye, T-1) }`): the counting operator keeps
//!   each group's distinct counted values (see `operators::count`) and changes the
//!   group's fact where the count changes, where the time-stepping operator counted the
//!   group's facts again at every time point at which one of them changed.
//! * **Stepper** — a temporal SCC (a cycle through an offset > 0, such as EC inertia), or
//!   rules that use the time as a value: evaluated per time point, in time order, by a
//!   dedicated operator (see `operators::stepper`). When every rule of the component shares a
//!   variable that sits at one fixed argument position of each predicate it reads or
//!   defines, that position is the component's *key*: facts are sharded by it across
//!   workers and a key is re-evaluated only where something it reads changed. Variables
//!   that every rule carries at fixed positions, except in atoms from outside that carry
//!   none of them, refine the key's state (`sub_key`). Rules that read none of the
//!   component's predicates (nor the time) are its *starts*: dataflow rules in front of
//!   the operator, whose facts it takes as input (with lowering on).
//! * **Cycle** — a temporal SCC that would be a stepper without a key (NetBill's
//!   contracts keyed by merchant, consumer and goods, its suspensions by agent), reads no
//!   time as a value, counts nothing and does not recurse at offset 0: rendered as the
//!   dataflow of its rules with each predicate's changes fed back a time point later
//!   (`operators::cycle`), so each join runs on its own key, sharded across workers, and a
//!   time point costs what changed at it rather than everything that holds (with lowering
//!   on; without, it runs on the stepper as written). Where its predicates fall into
//!   *steps* that each have a key of their own (NetBill: suspensions by agent; contracts
//!   and the merchant's obligations by merchant; the consumer's obligations and the
//!   suspensions' events by agent), each step is a stepper over its key inside the loop,
//!   its rules that read only other steps as dataflow rules in front of it: the steps in
//!   an order in which each reads at offset 0 only those before it, a step reading a later
//!   one's predicates fed back a time point late ([`CyclePlan::steps`]). A time point then
//!   takes a round through a few operators rather than through every rule's.

mod dump;
mod key;
pub mod partition;
mod shapes;
mod types;

use hashbrown::HashSet;

use stgflow_lang::ir::{Literal, PredId, Program};
use stgflow_lang::stratify::{Analysis, edges, ordered_sccs};

pub use shapes::copy_of;
pub use types::{Component, CyclePlan, PersistPlan, Plan, Stamped, StepperPlan, Window};

use key::{find_key, find_sub_key};
use shapes::{
    counts_over_one_atom, cycle_shape, gate_shape, hold_shape, persist_shape, stamp_shape,
    window_shape,
};

/// Plans `program`; `lower` turns the detection of windows and persistence on (without it
/// every rule runs as written: `--no-lowering`).
pub fn plan(program: &Program, analysis: &Analysis, lower: bool) -> Plan {
    let n = program.predicates.len();
    let all_edges = edges(program);
    let sccs = ordered_sccs(n, all_edges.iter().map(|e| (e.from, e.to)));
    let redundant = redundant_rules(program);
    let mut components = Vec::new();
    for scc in sccs {
        let rules: Vec<usize> = (0..program.rules.len())
            .filter(|&r| scc.contains(&program.rules[r].head.pred) && !redundant.contains(&r))
            .collect();
        if rules.is_empty() {
            continue;
        }
        let temporal = all_edges
            .iter()
            .any(|e| e.offset > 0 && scc.contains(&e.from) && scc.contains(&e.to));
        let uses_time = rules.iter().any(|&r| program.rules[r].reads_time());
        // Counting rules are evaluated per key by the time-stepping operator, which
        // evaluates rules with the reference evaluator's plans (counts included).
        let counts = rules.iter().any(|&r| program.rules[r].count.is_some());
        if temporal && !uses_time && lower && !counts {
            if let Some(hold) = hold_shape(program, &scc, &rules) {
                components.push(hold);
                continue;
            }
            if let Some(persist) = persist_shape(program, &scc, &rules) {
                components.push(Component::Persist(persist));
                continue;
            }
        }
        if lower && uses_time && !temporal && !counts && scc.len() == 1 {
            if let Some((source, head)) = stamp_shape(program, &rules) {
                components.push(Component::Stamp {
                    pred: scc[0],
                    source,
                    head,
                });
                continue;
            }
        }
        if let (&[rule], true) = (&rules[..], lower && counts && !temporal && !uses_time) {
            if scc.len() == 1 && counts_over_one_atom(&program.rules[rule]) {
                components.push(Component::Count { pred: scc[0], rule });
                continue;
            }
        }
        if temporal || uses_time || counts {
            let stepper = stepper(program, analysis, scc, rules, uses_time, lower);
            let cycle = (lower && !counts)
                .then(|| cycle_shape(program, &stepper))
                .flatten()
                .map(|mut cycle| {
                    cycle.steps = cycle_steps(program, analysis, &cycle).unwrap_or_default();
                    cycle
                });
            components.push(match cycle {
                Some(cycle) => Component::Cycle(cycle),
                None => Component::Stepper(stepper),
            });
            continue;
        }
        if lower && scc.len() == 1 {
            if let Some((source, window)) = window_shape(program, &rules) {
                components.push(Component::Window {
                    pred: scc[0],
                    source,
                    window,
                });
                continue;
            }
        }
        let recursive = all_edges
            .iter()
            .any(|e| e.offset == 0 && scc.contains(&e.from) && scc.contains(&e.to));
        components.push(Component::Dataflow {
            preds: scc,
            rules,
            recursive,
        });
    }
    if lower {
        fuse_gates(program, &mut components);
        fuse_slot_copies(program, &mut components);
    }
    Plan { components }
}

/// Fuses each window that only the rule `q(X…, T) :- w(X…, T), not g(T-k)` reads, and
/// that is not printed, with that rule (see [`Component::GatedWindow`]). The fused
/// component takes the rule's place, after g's.
fn fuse_gates(program: &Program, components: &mut Vec<Component>) {
    let outputs = program.output_predicates();
    let mut readers = vec![0usize; program.predicates.len()];
    for literal in program.rules.iter().flat_map(|r| &r.body) {
        if let Some(atom) = literal.atom() {
            readers[atom.pred] += 1;
        }
    }
    let mut i = 0;
    while i < components.len() {
        let Component::Dataflow {
            preds,
            rules,
            recursive: false,
        } = &components[i]
        else {
            i += 1;
            continue;
        };
        let ([pred], [rule]) = (preds.as_slice(), rules.as_slice()) else {
            i += 1;
            continue;
        };
        let Some((window_pred, gate, gate_offset)) = gate_shape(&program.rules[*rule]) else {
            i += 1;
            continue;
        };
        let window_at = components[..i]
            .iter()
            .enumerate()
            .find_map(|(at, c)| match c {
                Component::Window {
                    pred: w,
                    source,
                    window,
                } if *w == window_pred => Some((at, *source, *window)),
                _ => None,
            });
        let fusable = readers[window_pred] == 1
            && !outputs.contains(&window_pred)
            && gate != window_pred
            && gate != *pred;
        let (Some((window_at, source, window)), true) = (window_at, fusable) else {
            i += 1;
            continue;
        };
        components[i] = Component::GatedWindow {
            pred: *pred,
            window_pred,
            source,
            window,
            gate,
            gate_offset,
        };
        components.remove(window_at);
    }
}

/// Rules another rule makes redundant (the MIN DATALOG step, syntactically): same head
/// and a body that contains every literal of the other rule's body, written with the same
/// variable names. Whatever such a rule derives, the smaller one derives too: its extra
/// literals only restrict. Of two identical rules the later one goes.
pub fn redundant_rules(program: &Program) -> HashSet<usize> {
    let shapes: Vec<(String, HashSet<String>)> = program
        .rules
        .iter()
        .map(|rule| {
            let text = program.display_rule(rule).to_string();
            let (head, body) = text.split_once(" :- ").unwrap_or((text.as_str(), ""));
            let body = body.trim_end_matches('.');
            // Literals are separated by ", " outside parentheses.
            let mut literals = HashSet::new();
            let (mut depth, mut start) = (0usize, 0usize);
            for (i, c) in body.char_indices() {
                match c {
                    '(' => depth += 1,
                    ')' => depth = depth.saturating_sub(1),
                    ',' if depth == 0 => {
                        literals.insert(body[start..i].trim().to_owned());
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            if !body.is_empty() {
                literals.insert(body[start..].trim().to_owned());
            }
            (head.to_owned(), literals)
        })
        .collect();
    let mut redundant = HashSet::new();
    for (a, (head_a, body_a)) in shapes.iter().enumerate() {
        for (b, (head_b, body_b)) in shapes.iter().enumerate() {
            // A count over more conditions is another count, not a weaker rule.
            let counts = program.rules[a].count.is_some() || program.rules[b].count.is_some();
            if a == b
                || counts
                || head_a != head_b
                || redundant.contains(&b)
                || !body_b.is_subset(body_a)
            {
                continue;
            }
            // Identical bodies: keep the first of the two.
            if body_a.len() == body_b.len() && a < b {
                continue;
            }
            redundant.insert(a);
            break;
        }
    }
    redundant
}

fn stepper(
    program: &Program,
    analysis: &Analysis,
    preds: Vec<PredId>,
    rules: Vec<usize>,
    uses_time: bool,
    lower: bool,
) -> StepperPlan {
    let internal: HashSet<PredId> = preds.iter().copied().collect();
    let (starts, rules): (Vec<usize>, Vec<usize>) = rules.into_iter().partition(|&r| {
        let rule = &program.rules[r];
        lower
            && rule.count.is_none()
            && !rule.reads_time()
            && !rule
                .body
                .iter()
                .filter_map(Literal::atom)
                .any(|a| internal.contains(&a.pred))
    });
    let strata = analysis
        .strata
        .iter()
        .filter(|s| s.preds.iter().any(|p| internal.contains(p)))
        .map(|s| {
            (
                s.rules
                    .iter()
                    .copied()
                    .filter(|r| rules.contains(r))
                    .collect(),
                s.recursive,
            )
        })
        .collect();
    let mut reads: Vec<PredId> = Vec::new();
    let mut horizon = 0;
    for &r in &rules {
        for atom in program.rules[r].body.iter().filter_map(Literal::atom) {
            horizon = horizon.max(atom.offset);
            if !internal.contains(&atom.pred) && !reads.contains(&atom.pred) {
                reads.push(atom.pred);
            }
        }
    }
    let reads_unit = rules.iter().any(|&r| !program.rules[r].has_positive_atom());
    let mut global = Vec::new();
    let key = if reads_unit {
        None
    } else {
        find_key(program, &rules).or_else(|| {
            let candidates = global_candidates(program, &rules, &reads);
            let key = key::find_key_without(program, &rules, &candidates)?;
            global = candidates
                .into_iter()
                .filter(|p| !key.contains_key(p))
                .collect();
            Some(key)
        })
    };
    let sub_key = key
        .as_ref()
        .and_then(|key| find_sub_key(program, &rules, key, &internal));
    StepperPlan {
        preds,
        rules,
        starts,
        strata,
        reads,
        key,
        sub_key,
        global,
        horizon,
        uses_time,
        reads_unit,
    }
}

/// A loop through time cut into keyed steps (see [`CyclePlan::steps`]): predicates taken
/// in an order in which each comes after those its rules read at offset 0, each joining
/// the step being built where the step keeps a key, with the positions it had, and every
/// predicate of it has one; else starting the next, alone or beside a predicate that
/// reads it. `None` where a predicate has a key neither way.
fn cycle_steps(
    program: &Program,
    analysis: &Analysis,
    cycle: &CyclePlan,
) -> Option<Vec<StepperPlan>> {
    let rules_of = |preds: &[PredId]| -> Vec<usize> {
        (cycle.rules.iter().copied())
            .filter(|&r| preds.contains(&program.rules[r].head.pred))
            .collect()
    };
    // The key is followed from the first rule's head to the bodies: a predicate that the
    // others' rules do not read is reached only from its own rules, so each predicate's
    // rules are tried first in turn.
    let keyed = |preds: &[PredId], before: Option<&StepperPlan>| -> Option<StepperPlan> {
        preds.iter().rev().find_map(|&first| {
            let mut rules = rules_of(preds);
            rules.sort_by_key(|&r| program.rules[r].head.pred != first);
            let plan = stepper(program, analysis, preds.to_vec(), rules, false, true);
            let key = plan.key.as_ref()?;
            let kept = before.is_none_or(|before| {
                (before.key.iter().flatten()).all(|(p, at)| key.get(p).is_none_or(|k| k == at))
            });
            let all = preds.iter().all(|p| key.contains_key(p));
            let plain = plan.global.is_empty() && !plan.reads_unit;
            // A step's states are its key's: refinement would broadcast the partial facts
            // on a second input (see `stepping::operate_looped`).
            (kept && all && plain).then_some(StepperPlan {
                sub_key: None,
                ..plan
            })
        })
    };
    // A predicate is ready once those its rules read at offset 0 are placed.
    let reads_now = |p: PredId| -> Vec<PredId> {
        (rules_of(&[p]).iter().map(|&r| &program.rules[r]))
            .flat_map(|rule| rule.body.iter().filter_map(Literal::atom))
            .filter(|atom| atom.offset == 0 && atom.pred != p && cycle.preds.contains(&atom.pred))
            .map(|atom| atom.pred)
            .collect()
    };
    let mut placed: Vec<PredId> = Vec::new();
    let mut steps: Vec<StepperPlan> = Vec::new();
    while placed.len() < cycle.preds.len() {
        let ready = |placed: &[PredId], p: PredId| {
            !placed.contains(&p) && reads_now(p).iter().all(|q| placed.contains(q))
        };
        let first = (cycle.preds.iter().copied()).find(|&p| ready(&placed, p))?;
        placed.push(first);
        // A predicate whose rules all read other steps (EC's `_i` of an obligation, read
        // by its own `_t` and inertia) has a key only beside a predicate that reads it.
        let (mut members, mut step) = match keyed(&[first], None) {
            Some(step) => (vec![first], step),
            None => (cycle.preds.iter().copied()).find_map(|p| {
                let pair = [first, p];
                let plan = ready(&placed, p).then(|| keyed(&pair, None)).flatten()?;
                Some((pair.to_vec(), plan))
            })?,
        };
        if let Some(&second) = members.get(1) {
            placed.push(second);
        }
        loop {
            let joining = (cycle.preds.iter().copied()).find_map(|p| {
                if !ready(&placed, p) {
                    return None;
                }
                let mut more = members.clone();
                more.push(p);
                keyed(&more, Some(&step)).map(|plan| (p, more, plan))
            });
            let Some((p, more, plan)) = joining else {
                break;
            };
            placed.push(p);
            members = more;
            step = plan;
        }
        steps.push(step);
    }
    // A loop of one step is the stepper itself, keyed: `cycle_shape` took only steppers
    // without a key.
    (steps.len() > 1).then_some(steps)
}

/// The predicates of `reads` that `rules` read at offset 0 only and whose facts come from
/// the program alone: given as its facts, or derived by rules that read only such
/// predicates, without the time as a value or a count (RTEC's background knowledge). A
/// stream may still give facts of one: they are read all the same, each waking every key.
fn global_candidates(program: &Program, rules: &[usize], reads: &[PredId]) -> Vec<PredId> {
    let n = program.predicates.len();
    let mut fixed = vec![false; n];
    for fact in &program.facts {
        fixed[fact.pred] = true;
    }
    for rule in &program.rules {
        fixed[rule.head.pred] = true;
    }
    loop {
        let mut changed = false;
        for rule in &program.rules {
            let head = rule.head.pred;
            let reads_other = rule.reads_time()
                || rule.count.is_some()
                || (rule.body.iter().filter_map(Literal::atom)).any(|a| !fixed[a.pred]);
            if fixed[head] && reads_other {
                fixed[head] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // Without facts of its own, a predicate is fixed only where some rule derives it from
    // others (not a stream predicate kept by a persistence rule of its own).
    let derived_from_facts = |p: PredId| {
        program.facts.iter().any(|f| f.pred == p)
            || (program.rules.iter())
                .filter(|r| r.head.pred == p)
                .any(|r| r.body.iter().filter_map(Literal::atom).any(|a| a.pred != p))
    };
    let at_zero_only = |p: PredId| {
        rules.iter().all(|&r| {
            (program.rules[r].body.iter().filter_map(Literal::atom))
                .all(|a| a.pred != p || a.offset == 0)
        })
    };
    (reads.iter().copied())
        .filter(|&p| fixed[p] && derived_from_facts(p) && at_zero_only(p))
        .collect()
}

/// Moves into each persistence operator the predicates that it alone reads and that copy
/// another predicate ([`PersistPlan::slot_copies`]): a dataflow component whose rules all
/// copy one atom of another predicate at offset 0, not printed, read by no rule the
/// operator does not evaluate itself nor by a window or a stamp, keyed as the rest.
fn fuse_slot_copies(program: &Program, components: &mut Vec<Component>) {
    let outputs = program.output_predicates();
    let mut c = 0;
    while c < components.len() {
        let Component::Persist(persist) = &components[c] else {
            c += 1;
            continue;
        };
        let fusable = persist.inputs().into_iter().find_map(|q| {
            let at = components[..c].iter().position(|component| {
                matches!(component, Component::Dataflow { preds, recursive: false, .. } if preds[..] == [q])
            })?;
            let Component::Dataflow { rules, .. } = &components[at] else {
                return None;
            };
            let slot_copy = |r: usize| {
                let (atom, _) = copy_of(&program.rules[r])?;
                (atom.offset == 0 && atom.pred != q).then_some(atom.pred)
            };
            let sources = rules.iter().map(|&r| slot_copy(r)).collect::<Option<Vec<_>>>()?;
            let inside: Vec<usize> = (persist.keeps.iter())
                .chain(persist.term.iter().flat_map(|(_, rules)| rules))
                .chain(persist.derived.iter().flat_map(|(_, rules)| rules))
                .chain(&persist.derived_starts)
                .chain(&persist.copies)
                .chain(&persist.slot_copies)
                .copied()
                .collect();
            let read_outside = (0..program.rules.len()).any(|r| {
                !inside.contains(&r)
                    && (program.rules[r].body.iter().filter_map(Literal::atom)).any(|a| a.pred == q)
            }) || components.iter().any(|component| match component {
                Component::Window { source, .. }
                | Component::GatedWindow { source, .. }
                | Component::Stamp { source, .. } => *source == q,
                _ => false,
            });
            if read_outside || outputs.contains(&q) || sources.contains(&persist.pred) {
                return None;
            }
            // Each source fact's key where its copy has the operator's key.
            let mut key = persist.key.clone();
            let key_q = *key.get(&q)?;
            for &r in rules {
                let (atom, positions) = copy_of(&program.rules[r])?;
                let key_p = (*positions.get(key_q)?)?;
                if *key.entry(atom.pred).or_insert(key_p) != key_p {
                    return None;
                }
            }
            Some((at, q, rules.clone(), sources, key))
        });
        let Some((at, q, rules, sources, key)) = fusable else {
            c += 1;
            continue;
        };
        let Component::Persist(persist) = &mut components[c] else {
            c += 1;
            continue;
        };
        let offsets: Vec<u32> = (persist.slots.iter())
            .filter(|&&(p, _)| p == q)
            .map(|&(_, k)| k)
            .collect();
        for p in sources {
            for &k in &offsets {
                if !persist.slots.contains(&(p, k)) {
                    persist.slots.push((p, k));
                }
            }
        }
        persist.slot_copies.extend(rules);
        persist.key = key;
        components.remove(at);
        c = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stgflow_lang::compile_str;

    pub(super) fn plan_of(text: &str) -> (Program, Plan) {
        let compiled = compile_str("t.tdl", text);
        assert!(
            !compiled.has_errors(),
            "{}",
            compiled.render_diagnostics(false)
        );
        let analysis = compiled
            .analysis
            .as_ref()
            .map(|a| plan(&compiled.program, a, true));
        (
            compiled.program,
            analysis.unwrap_or(Plan { components: vec![] }),
        )
    }

    #[test]
    fn rules_with_a_larger_body_than_another_are_dropped() {
        let compiled = compile_str(
            "t.tdl",
            "q(X, T) :- p(X, T).\nq(X, T) :- p(X, T), r(X, T-1).\nq(X, T) :- p(X, T).\ns(X, T) :- p(X, T), r(X, T).\n",
        );
        let redundant = redundant_rules(&compiled.program);
        assert_eq!(redundant, HashSet::from([1, 2]));
    }

    /// The predicates whose facts flow as points: read by ♢ windows alone (or stamped,
    /// the stamp read by ♢ windows alone), no rule's head, printed nowhere.
    #[test]
    fn what_diamond_windows_alone_read_flows_as_points() {
        let points = |text: &str, printed: &[&str], want: &[&str]| {
            let (program, plan) = plan_of(text);
            let id = |name: &&str| program.pred_id(name).expect("a predicate of the program");
            let outputs: Vec<PredId> = printed.iter().map(id).collect();
            let flows = crate::render::fed_as_points(&program, &plan, &outputs);
            let got: Vec<&str> = (0..program.predicates.len())
                .filter(|&p| flows[p])
                .map(|p| program.predicates[p].name.as_str())
                .collect();
            assert_eq!(got, want, "{text} printing {printed:?}");
        };
        let diamond = "q(A, T) :- p(A, T).\nq(A, T) :- p(A, T-1).\n";
        points(diamond, &["q"], &["p"]);
        points(diamond, &["q", "p"], &[]);
        points(
            &format!("{diamond}r(A, T) :- p(A, T), s(A, T).\n"),
            &["q", "r"],
            &[],
        );
        // A gated ♢ window takes changes (points gain nothing there: its gate's flips
        // dominate).
        let gated = "#output q.\nw(A, T) :- p(A, T).\nw(A, T) :- p(A, T-1).\nq(A, T) :- w(A, T), not s(T).\n";
        points(gated, &["q"], &[]);
        let boxed = "b(A, T) :- p(A, T), p(A, T-1).\n";
        points(boxed, &["b"], &[]);
        let stamped = "h(U, A, T) :- p(A, T), U = T.\nq(U, A, T) :- h(U, A, T).\nq(U, A, T) :- h(U, A, T-1).\n";
        points(stamped, &["q"], &["h", "p"]);
        points(stamped, &["q", "h"], &[]);
        points(
            &format!("{stamped}r(U, A, T) :- h(U, A, T), s(A, T).\n"),
            &["q", "r"],
            &[],
        );
        points(
            &format!("{stamped}r(A, T) :- p(A, T), s(A, T).\n"),
            &["q", "r"],
            &[],
        );
        points(
            &format!("{stamped}q2(A, T) :- p(A, T).\nq2(A, T) :- p(A, T-3).\n"),
            &["q", "q2"],
            &[],
        );
        points(
            &format!("{stamped}q2(A, T) :- p(A, T).\nq2(A, T) :- p(A, T-1).\n"),
            &["q", "q2"],
            &["h", "p"],
        );
    }

    /// A window that only `q(X…) :- w(X…), not g` reads, and that is not printed, is fused
    /// with that rule; read twice, or printed, it is not.
    #[test]
    fn a_window_read_only_under_a_gate_is_fused_with_it() {
        let window = "w(A, B, T) :- p(A, B, T).\nw(A, B, T) :- p(A, B, T-1).\n";
        let (program, plan) = plan_of(&format!(
            "{window}s(T) :- g(T).\nq(A, B, T) :- not s(T-1), w(A, B, T).\n#output q.\n"
        ));
        let id = |name: &str| {
            program
                .predicates
                .iter()
                .position(|p| p.name == name)
                .unwrap_or_else(|| panic!("no predicate {name}"))
        };
        // In the rule's place, after the gate's own component.
        assert_eq!(
            plan.components.last(),
            Some(&Component::GatedWindow {
                pred: id("q"),
                window_pred: id("w"),
                source: id("p"),
                window: Window::Diamond(1),
                gate: id("s"),
                gate_offset: 1,
            })
        );
        assert!(
            !plan
                .components
                .iter()
                .any(|c| matches!(c, Component::Window { pred, .. } if *pred == id("w")))
        );
        for other in [
            "q(A, B, T) :- w(A, B, T), not s(T).\nr(A, T) :- w(A, A, T).\n#output q, r.\n",
            "q(A, B, T) :- w(A, B, T), not s(T).\n#output q, w.\n",
            "q(B, A, T) :- w(A, B, T), not s(T).\n#output q.\n",
            "q(A, B, T) :- w(A, B, T), not s(A, T).\n#output q.\n",
        ] {
            let (_, plan) = plan_of(&format!("{window}{other}"));
            assert!(
                !plan
                    .components
                    .iter()
                    .any(|c| matches!(c, Component::GatedWindow { .. })),
                "{other}"
            );
        }
    }
}
