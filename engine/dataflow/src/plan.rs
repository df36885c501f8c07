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
//!   on; without, it runs on the stepper as written).

pub mod partition;

use hashbrown::{HashMap, HashSet};

use stgflow_lang::ir::{Atom, Literal, PredId, Program, Rule, Term, VarId};
use stgflow_lang::stratify::{Analysis, edges, ordered_sccs};
use stgflow_lang::value::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// ⊞d♢: p held somewhere in [T−d, T].
    Diamond(u32),
    /// ⊞d□: p held at every point of [T−d, T].
    Box(u32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepperPlan {
    pub preds: Vec<PredId>,
    /// The rules the operator evaluates.
    pub rules: Vec<usize>,
    /// The component's rules that read none of its predicates (nor the time): dataflow
    /// rules in front of the operator, whose facts it takes as input of their heads, so
    /// that neither the key nor the per-key work has to cover them.
    pub starts: Vec<usize>,
    /// The component's rules per offset-0 stratum, in evaluation order, and whether the
    /// stratum recurses at offset 0.
    pub strata: Vec<(Vec<usize>, bool)>,
    /// Predicates defined outside the component that its rules read.
    pub reads: Vec<PredId>,
    /// The key position of every predicate the component reads or defines, when sharded.
    pub key: Option<HashMap<PredId, usize>>,
    /// Positions that refine the key into the key of a key's state: per predicate whose
    /// atoms all carry the refining variables, their positions. A predicate from outside
    /// whose atoms carry none of them (*partial*, read at offset 0 only) is read by every
    /// state of its key (`voted(V, M)` keyed by M and refined by V, with
    /// `status_start(M, null)` partial).
    pub sub_key: Option<HashMap<PredId, Vec<usize>>>,
    /// The largest offset of any body atom: how many past time points a key keeps.
    pub horizon: u32,
    /// A rule reads the time as a value, so results change every time point.
    pub uses_time: bool,
    /// A rule has no positive atom, so the component reads the unit row: it is evaluated
    /// from the timeline's first time point on, input or not (and has no key: such a
    /// rule's facts belong to no input's key).
    pub reads_unit: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Component {
    Window {
        pred: PredId,
        source: PredId,
        window: Window,
    },
    /// `pred(X…, T) :- window(X…, T), not gate(T-gate_offset)` where `window` is the
    /// window over `source` that nothing else reads (see the module docs).
    GatedWindow {
        pred: PredId,
        window_pred: PredId,
        source: PredId,
        window: Window,
        gate: PredId,
        gate_offset: u32,
    },
    Dataflow {
        preds: Vec<PredId>,
        rules: Vec<usize>,
        recursive: bool,
    },
    Persist(PersistPlan),
    /// `pred(A…, T) :- source(X…, T), U = T.`: source's facts stamped with the time point
    /// they hold at (LARS's `@(U, p(X…))`), `head` saying where each argument comes from
    /// (see the module docs).
    Stamp {
        pred: PredId,
        source: PredId,
        head: Vec<Stamped>,
    },
    /// `pred(G…, N, T) :- N = #count { C… : p(X…, T-k) }` (rule `rule`): counted per group
    /// by the counting operator (see the module docs).
    Count {
        pred: PredId,
        rule: usize,
    },
    /// `pred(X…, T) :- source(X…, T), gate(T).`, `pred(X…, T) :- pred(X…, T-1), not
    /// stop(X…, T).` and `stop(X…, T) :- pred(X…, T-1), not source(X…, T).`: a fact of
    /// source that holds where the nullary gate does is held for as long as source holds
    /// it (LARS's `p__since_start`, □ clipped at the timeline start, with the gate the
    /// timeline's first time point), run by `operators::hold` (see the module docs).
    Hold {
        pred: PredId,
        stop: PredId,
        source: PredId,
        gate: PredId,
    },
    Stepper(StepperPlan),
    Cycle(CyclePlan),
}

/// A temporal SCC rendered as a loop through time (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CyclePlan {
    /// Its predicates in an order in which each rule reads at offset 0 only predicates
    /// before its head's.
    pub preds: Vec<PredId>,
    /// All its rules.
    pub rules: Vec<usize>,
    /// The largest offset of any body atom.
    pub horizon: u32,
}

/// Where an argument of a stamped fact comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stamped {
    /// The source fact's argument at this position.
    Arg(usize),
    /// The time point.
    Time,
    Const(Value),
}

/// A temporal SCC lowered to the persistence operator (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersistPlan {
    /// The predicate that persists.
    pub pred: PredId,
    /// Its rules that read neither it nor `term`: their facts start it (dataflow rules in
    /// front of the operator).
    pub starts: Vec<usize>,
    /// Its start rules that copy one atom of a predicate in `slots` (`h(X, v, T) :-
    /// h_i(X, v, T-1).`): the operator copies the atom's facts itself.
    pub copies: Vec<usize>,
    /// Its rules `pred(P…, T) :- pred(P…, T-1), not s(Q…, T-k), …`: a fact keeps holding
    /// while one of them lets it.
    pub keeps: Vec<usize>,
    /// Predicates of the SCC derived at T from what `pred` held at T-1 (read a point back,
    /// positively), from one another at offset 0 and from outside, and their rules, in an
    /// order in which each rule reads only those before it (RTEC's initiation of a value
    /// by a partial event for every instance that holds another, `voted(_V, M) = null`,
    /// and the terminations it implies). With them, `term` is `None`.
    pub derived: Vec<(PredId, Vec<usize>)>,
    /// Its rules that read a predicate of `derived` (at offset 0, with `derived`'s and
    /// outside atoms): their facts start it at T.
    pub derived_starts: Vec<usize>,
    /// Rules `q(…, T) :- p(…, T).` that copy one predicate into another that only this
    /// operator reads (RTEC's `voted_t(V, M, aye, T) :- voted_i(V, M, nay, T).`), both in
    /// `slots` at the offsets q is read at: the operator copies p's facts into q's slots
    /// itself, and q's component is gone (see `fuse_slot_copies`).
    pub slot_copies: Vec<usize>,
    /// The terminating predicate of the multi-valued form, and its rules.
    pub term: Option<(PredId, Vec<usize>)>,
    /// The predicates from outside the SCC that the keep rules' negations, `term`'s rules
    /// and the copies read, each with its offset: one input of the operator each.
    pub slots: Vec<(PredId, u32)>,
    /// The key position of `pred`, `term` and every predicate in `slots`.
    pub key: HashMap<PredId, usize>,
}

impl PersistPlan {
    /// The predicates of `slots`, each once, in order: the operator's inputs from outside
    /// (tags 1, 2, …; a predicate read at several offsets comes in once).
    pub fn inputs(&self) -> Vec<PredId> {
        let mut preds: Vec<PredId> = self.slots.iter().map(|&(q, _)| q).collect();
        preds.sort_unstable();
        preds.dedup();
        preds
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub components: Vec<Component>,
}

impl Component {
    /// The kind's name, as `Plan::dump` starts its line.
    pub fn kind(&self) -> &'static str {
        match self {
            Component::Window { .. } => "window",
            Component::GatedWindow { .. } => "gated window",
            Component::Dataflow { .. } => "dataflow",
            Component::Persist(_) => "persist",
            Component::Stamp { .. } => "stamp",
            Component::Count { .. } => "count",
            Component::Hold { .. } => "hold",
            Component::Stepper(_) => "stepper",
            Component::Cycle(_) => "cycle",
        }
    }
}

impl Plan {
    /// How many components of each kind, in order of first appearance.
    pub fn kinds(&self) -> Vec<(&'static str, usize)> {
        let mut kinds: Vec<(&'static str, usize)> = Vec::new();
        for component in &self.components {
            let kind = component.kind();
            match kinds.iter_mut().find(|(k, _)| *k == kind) {
                Some((_, n)) => *n += 1,
                None => kinds.push((kind, 1)),
            }
        }
        kinds
    }

    /// The plan as text, one component per line in evaluation order, rules by their
    /// index (`check --dump plan`).
    pub fn dump(&self, program: &Program) -> String {
        self.dump_noting(program, |_| None)
    }

    /// [`Plan::dump`], with what `note` says of a component at the end of its line (what
    /// the operators make of it, which the plan does not know).
    pub fn dump_noting(
        &self,
        program: &Program,
        note: impl Fn(&Component) -> Option<String>,
    ) -> String {
        let name = |p: &PredId| program.pred_name(*p).to_owned();
        let names = |ps: &[PredId]| ps.iter().map(name).collect::<Vec<_>>().join(", ");
        let rules = |rs: &[usize]| {
            rs.iter()
                .map(|r| format!("r{r}"))
                .collect::<Vec<_>>()
                .join(" ")
        };
        let window = |w: &Window| match w {
            Window::Diamond(d) => format!("⊞{d}♢"),
            Window::Box(d) => format!("⊞{d}□"),
        };
        let key = |key: &HashMap<PredId, usize>| {
            let mut parts: Vec<String> = key
                .iter()
                .map(|(p, i)| format!("{}/{}", name(p), i + 1))
                .collect();
            parts.sort();
            parts.join(" ")
        };
        let mut text = String::from(
            "% dataflow plan: components in evaluation order (window, gated window, dataflow, persist, hold, stamp, count, stepper, cycle)\n",
        );
        for component in &self.components {
            let line = match component {
                Component::Window {
                    pred,
                    source,
                    window: w,
                } => format!("window {} = {} {}", name(pred), window(w), name(source)),
                Component::Hold {
                    pred,
                    stop,
                    source,
                    gate,
                } => format!(
                    "hold {}: {} where {} holds, while it holds (stops: {})",
                    name(pred),
                    name(source),
                    name(gate),
                    name(stop)
                ),
                Component::GatedWindow {
                    pred,
                    window_pred,
                    source,
                    window: w,
                    gate,
                    gate_offset,
                } => format!(
                    "gated window {} = {} = {} {}, not {}(T-{gate_offset})",
                    name(pred),
                    name(window_pred),
                    window(w),
                    name(source),
                    name(gate)
                ),
                Component::Dataflow {
                    preds,
                    rules: rs,
                    recursive,
                } => format!(
                    "dataflow {{{}}} {}{}",
                    names(preds),
                    rules(rs),
                    if *recursive { " (iterate)" } else { "" }
                ),
                Component::Persist(p) => {
                    let reads: Vec<String> = p
                        .slots
                        .iter()
                        .map(|(q, k)| format!("{}(T-{k})", name(q)))
                        .collect();
                    let mut term = p.term.as_ref().map_or(String::new(), |(t, rs)| {
                        format!("; terminated by {} {}", name(t), rules(rs))
                    });
                    for (d, rs) in &p.derived {
                        term.push_str(&format!("; derives {} {}", name(d), rules(rs)));
                    }
                    if !p.slot_copies.is_empty() {
                        term.push_str(&format!("; fills its slots by {}", rules(&p.slot_copies)));
                    }
                    if !p.derived_starts.is_empty() {
                        term.push_str(&format!("; starts from them {}", rules(&p.derived_starts)));
                    }
                    let mut starts = String::new();
                    for (what, rs) in [("copies", &p.copies), ("starts", &p.starts)] {
                        if !rs.is_empty() {
                            starts.push_str(&format!("{what} {}; ", rules(rs)));
                        }
                    }
                    format!(
                        "persist {}: {starts}keeps {}{term}; reads {}; key {}",
                        name(&p.pred),
                        rules(&p.keeps),
                        reads.join(" "),
                        key(&p.key)
                    )
                }
                Component::Stamp { pred, source, head } => {
                    let args: Vec<String> = head
                        .iter()
                        .map(|a| match a {
                            Stamped::Arg(i) => format!("#{}", i + 1),
                            Stamped::Time => "T".to_owned(),
                            Stamped::Const(v) => v.to_string(),
                        })
                        .collect();
                    let arity = head.iter().filter(|a| matches!(a, Stamped::Arg(_))).count();
                    let source_args: Vec<String> = (1..=arity).map(|i| format!("#{i}")).collect();
                    format!(
                        "stamp {}({}) from {}({}) at T",
                        name(pred),
                        args.join(", "),
                        name(source),
                        source_args.join(", ")
                    )
                }
                Component::Count { pred, rule } => {
                    let source = program.rules[*rule].body.iter().find_map(Literal::atom);
                    let source = source.map_or(String::new(), |atom| {
                        format!(" over {}(T-{})", name(&atom.pred), atom.offset)
                    });
                    format!("count {} r{rule}{source}", name(pred))
                }
                Component::Stepper(s) => format!(
                    "stepper {{{}}} {}{}; horizon {}; key {}{}{}",
                    names(&s.preds),
                    rules(&s.rules),
                    if s.starts.is_empty() {
                        String::new()
                    } else {
                        format!("; starts {}", rules(&s.starts))
                    },
                    s.horizon,
                    s.key.as_ref().map_or_else(
                        || format!(
                            "none, so it runs on one worker: {}",
                            why_unkeyed(program, s)
                        ),
                        key
                    ),
                    s.sub_key.as_ref().map_or(String::new(), |sub| {
                        let mut parts: Vec<String> = sub
                            .iter()
                            .map(|(p, is)| {
                                let is: Vec<String> =
                                    is.iter().map(|i| (i + 1).to_string()).collect();
                                format!("{}/{}", name(p), is.join(","))
                            })
                            .collect();
                        parts.sort();
                        format!("; states by {}", parts.join(" "))
                    }),
                    if s.uses_time { "; reads the time" } else { "" }
                ),
                Component::Cycle(c) => format!(
                    "cycle {{{}}} {}; horizon {}; fed back a time point later, each join sharded by its own key",
                    names(&c.preds),
                    rules(&c.rules),
                    c.horizon
                ),
            };
            text.push_str(&line);
            if let Some(note) = note(component) {
                text.push_str("; ");
                text.push_str(&note);
            }
            text.push('\n');
        }
        text
    }
}

/// Whether `rule` counts over one atom and nothing else, its head's variables but the
/// count (which it has once) bound by that atom, as the lowering of `#count` writes it (a
/// count component, see the module docs).
fn counts_over_one_atom(rule: &Rule) -> bool {
    let (Some(count), [Literal::Positive(atom)]) = (&rule.count, &rule.body[..]) else {
        return false;
    };
    let in_atom = |v: &VarId| atom.args.contains(&Term::Var(*v));
    let result = Term::Var(count.result);
    (rule.head.args.iter()).all(|term| match term {
        Term::Var(v) => *term == result || in_atom(v),
        Term::Const(_) | Term::Wildcard => false,
    }) && rule.head.args.iter().filter(|t| **t == result).count() == 1
        && count.counted.iter().all(in_atom)
        && !in_atom(&count.result)
}

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
                .flatten();
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

/// `q(X…, T) :- w(X…, T), not g(T-k)` (either order, the X… distinct variables, g without
/// arguments): (w, g, k).
fn gate_shape(rule: &Rule) -> Option<(PredId, PredId, u32)> {
    let head = &rule.head.args;
    if !distinct_vars(head) {
        return None;
    }
    let (window, gate) = match rule.body.as_slice() {
        [Literal::Positive(w), Literal::Negative(g)]
        | [Literal::Negative(g), Literal::Positive(w)] => (w, g),
        _ => return None,
    };
    (window.offset == 0
        && window.args == *head
        && gate.args.is_empty()
        && window.pred != rule.head.pred)
        .then_some((window.pred, gate.pred, gate.offset))
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
    let key = if reads_unit {
        None
    } else {
        find_key(program, &rules)
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
        horizon,
        uses_time,
        reads_unit,
    }
}

/// A key position per predicate such that every rule's head and body atoms all carry one
/// shared variable at those positions; `None` when there is none. Every rule must have a
/// positive atom (which binds the key, so that a derived fact's key is the key of the
/// facts it came from).
fn find_key(program: &Program, rules: &[usize]) -> Option<HashMap<PredId, usize>> {
    let first = program.rules.get(*rules.first()?)?.head.pred;
    (0..program.predicates[first].arity)
        .find_map(|start| follow_key(program, rules, first, start, |_| true).ok())
}

/// The key that starts at position `start` of `first`, in the atoms of the predicates that
/// `carries` accepts, or where it stops.
fn follow_key(
    program: &Program,
    rules: &[usize],
    first: PredId,
    start: usize,
    carries: impl Fn(PredId) -> bool,
) -> Result<HashMap<PredId, usize>, Stuck> {
    follow(program, rules, first, start, |rule, key, positions| {
        (rule.body.iter().filter_map(Literal::atom))
            .filter(|atom| carries(atom.pred))
            .all(|atom| {
                atom.args
                    .iter()
                    .position(|t| *t == Term::Var(key))
                    .is_some_and(|at| *positions.entry(atom.pred).or_insert(at) == at)
            })
    })
}

/// Whether the component's own predicates share a key, the atoms from outside aside
/// (voting's `status` has none only for `role_of(C, chair)` beside `close_ballot(C, M)`).
/// A loop through time costs a round of progress through all its operators per time
/// point, where the stepper takes the time points it has in one go: it is kept unless
/// the component's own facts are keyed apart (NetBill's contracts by two agents and
/// suspensions by one), and so too many to step through whole at every time point.
fn own_key(program: &Program, stepper: &StepperPlan) -> bool {
    // Facts without arguments are few whatever the log, and on one worker either way.
    if stepper
        .preds
        .iter()
        .all(|&p| program.predicates[p].arity == 0)
    {
        return true;
    }
    let Some(first) = stepper.rules.first().map(|&r| program.rules[r].head.pred) else {
        return false;
    };
    (0..program.predicates[first].arity).any(|start| {
        follow_key(program, &stepper.rules, first, start, |p| {
            stepper.preds.contains(&p)
        })
        .is_ok()
    })
}

/// A stepper without a key as a loop through time (see the module docs): `None` where it
/// has a key, its own predicates would share one, it reads the time, or it recurses at
/// offset 0.
fn cycle_shape(program: &Program, stepper: &StepperPlan) -> Option<CyclePlan> {
    if stepper.key.is_some() || stepper.uses_time || own_key(program, stepper) {
        return None;
    }
    let mut rules: Vec<usize> = stepper
        .rules
        .iter()
        .chain(&stepper.starts)
        .copied()
        .collect();
    rules.sort_unstable();
    // Each predicate after those its rules read at offset 0 (Kahn's order).
    let preds = &stepper.preds;
    let before = |p: PredId| -> Vec<PredId> {
        let mut read: Vec<PredId> = (rules.iter().map(|&r| &program.rules[r]))
            .filter(|rule| rule.head.pred == p)
            .flat_map(|rule| rule.body.iter().filter_map(Literal::atom))
            .filter(|atom| atom.offset == 0 && preds.contains(&atom.pred))
            .map(|atom| atom.pred)
            .collect();
        read.sort_unstable();
        read.dedup();
        read
    };
    let mut order: Vec<PredId> = Vec::with_capacity(preds.len());
    while order.len() < preds.len() {
        let next = (preds.iter().copied())
            .find(|&p| !order.contains(&p) && before(p).iter().all(|q| order.contains(q)))?;
        order.push(next);
    }
    Some(CyclePlan {
        preds: order,
        rules,
        horizon: stepper.horizon,
    })
}

/// Why the stepper component of `rules` has no key, for `check --dump plan`: of the
/// variables at the first head's positions, the one that runs through the most rules, and
/// the rule that stops it.
fn why_unkeyed(program: &Program, plan: &StepperPlan) -> String {
    if plan.reads_unit {
        let rule = plan
            .rules
            .iter()
            .find(|&&r| !program.rules[r].has_positive_atom());
        return match rule {
            Some(r) => format!("r{r} has no positive atom to carry one"),
            None => "a rule has no positive atom to carry one".to_owned(),
        };
    }
    let Some(first) = plan.rules.first().map(|&r| program.rules[r].head.pred) else {
        return "no rules".to_owned();
    };
    let best = (0..program.predicates[first].arity)
        .filter_map(|start| follow_key(program, &plan.rules, first, start, |_| true).err())
        .max_by_key(|stuck| stuck.settled);
    let name = program.pred_name(first);
    match best {
        None => format!("{name} has no arguments"),
        Some(Stuck { at: Some(r), .. }) => format!(
            "no argument of {name} runs through every rule (the furthest stops at r{r}, whose atoms do not all carry it, each at one position; `check --dump ir` lists r{r})"
        ),
        Some(Stuck { at: None, .. }) => {
            format!("no argument of {name} reaches every rule through the rules' heads")
        }
    }
}

/// Where [`follow`] stopped: after `settled` rules, at rule `at` (a head without the
/// variable, or one `visit` refused), or with rules the variable never reached (`None`).
#[derive(Clone, Copy, Debug)]
struct Stuck {
    settled: usize,
    at: Option<usize>,
}

/// Follows the variable at position `start` of `first`'s heads through `rules`, from
/// heads to bodies: each rule whose head predicate has a position, once, until every rule
/// is reached. `visit(rule, var, positions)` reads the rule's body (recording where it
/// finds the variable) and says whether the variable goes on. `None` where a head has no
/// variable there, `visit` refuses, or a rule is never reached.
fn follow(
    program: &Program,
    rules: &[usize],
    first: PredId,
    start: usize,
    mut visit: impl FnMut(&Rule, VarId, &mut HashMap<PredId, usize>) -> bool,
) -> Result<HashMap<PredId, usize>, Stuck> {
    let mut positions: HashMap<PredId, usize> = HashMap::from([(first, start)]);
    let mut settled: HashSet<usize> = HashSet::new();
    while settled.len() < rules.len() {
        let mut progress = false;
        for &r in rules {
            let rule = &program.rules[r];
            let Some(&head_position) = positions.get(&rule.head.pred) else {
                continue;
            };
            if !settled.insert(r) {
                continue;
            }
            progress = true;
            let stuck = Stuck {
                settled: settled.len() - 1,
                at: Some(r),
            };
            let Some(Term::Var(var)) = rule.head.args.get(head_position) else {
                return Err(stuck);
            };
            if !visit(rule, *var, &mut positions) {
                return Err(stuck);
            }
        }
        if !progress {
            // Rules whose head never got a position: the variable does not reach them.
            return Err(Stuck {
                settled: settled.len(),
                at: None,
            });
        }
    }
    Ok(positions)
}

/// Per predicate, the refining positions of a key ([`StepperPlan::sub_key`]).
type SubKey = HashMap<PredId, Vec<usize>>;

/// The positions that refine `key` (see [`StepperPlan::sub_key`]): every variable at a
/// fixed position of every predicate of `internal`, and of every predicate from outside
/// either at a fixed position or absent (read at offset 0 only, the same predicates for
/// every variable), other than the key's; `None` when there is none.
fn find_sub_key(
    program: &Program,
    rules: &[usize],
    key: &HashMap<PredId, usize>,
    internal: &HashSet<PredId>,
) -> Option<SubKey> {
    let first = program.rules.get(*rules.first()?)?.head.pred;
    // The positions found so far, and the partial predicates (the same for each).
    let mut found: Option<(SubKey, HashSet<PredId>)> = None;
    for start in 0..program.predicates[first].arity {
        if key.get(&first) == Some(&start) {
            continue;
        }
        let Some((positions, partial)) = sub_component(program, rules, internal, first, start)
        else {
            continue;
        };
        match &mut found {
            None => {
                let positions = positions.into_iter().map(|(p, i)| (p, vec![i])).collect();
                found = Some((positions, partial));
            }
            Some((all, known)) if *known == partial => {
                for (p, i) in positions {
                    all.entry(p).or_default().push(i);
                }
            }
            Some(_) => {}
        }
    }
    found.map(|(positions, _)| positions)
}

/// One refining variable, the one at `start` of `first`'s heads: its position in every
/// predicate that carries it, and the predicates from outside that do not.
fn sub_component(
    program: &Program,
    rules: &[usize],
    internal: &HashSet<PredId>,
    first: PredId,
    start: usize,
) -> Option<(HashMap<PredId, usize>, HashSet<PredId>)> {
    let mut partial: HashSet<PredId> = HashSet::new();
    let positions = follow(program, rules, first, start, |rule, var, positions| {
        let mut carried = false;
        for literal in &rule.body {
            let Some(atom) = literal.atom() else {
                continue;
            };
            match atom.args.iter().position(|t| *t == Term::Var(var)) {
                Some(at) => {
                    if partial.contains(&atom.pred)
                        || *positions.entry(atom.pred).or_insert(at) != at
                    {
                        return false;
                    }
                    carried |= matches!(literal, Literal::Positive(_));
                }
                None => {
                    let outside = !internal.contains(&atom.pred);
                    if !outside || atom.offset > 0 || positions.contains_key(&atom.pred) {
                        return false;
                    }
                    partial.insert(atom.pred);
                }
            }
        }
        // A state's facts come from its own facts: a positive atom binds the variable.
        carried
    })
    .ok()?;
    Some((positions, partial))
}

/// The SCC `scc` with rules `rules` as a [`PersistPlan`], when it has the shape (either of
/// two predicates may be the one that persists).
fn persist_shape(program: &Program, scc: &[PredId], rules: &[usize]) -> Option<PersistPlan> {
    match *scc {
        [pred] => persist_as(program, rules, pred, None, &[]),
        [a, b] => persist_as(program, rules, a, Some(b), &[])
            .or_else(|| persist_as(program, rules, b, Some(a), &[])),
        _ => None,
    }
    .or_else(|| {
        // One predicate persists; the others are derived from it a point back.
        (scc.len() > 1)
            .then(|| {
                scc.iter().find_map(|&pred| {
                    let derived: Vec<PredId> = scc.iter().copied().filter(|&p| p != pred).collect();
                    persist_as(program, rules, pred, None, &derived)
                })
            })
            .flatten()
    })
}

/// The SCC `scc` (its rules `rules`) as a [`Component::Hold`], where it has that shape
/// and nothing outside it reads or prints the stop predicate.
fn hold_shape(program: &Program, scc: &[PredId], rules: &[usize]) -> Option<Component> {
    let (&[a, b], &[_, _, _]) = (scc, rules) else {
        return None;
    };
    let outside_reads = |q: PredId| {
        program.output_predicates().contains(&q)
            || (0..program.rules.len()).any(|r| {
                !rules.contains(&r)
                    && (program.rules[r].body.iter().filter_map(Literal::atom)).any(|x| x.pred == q)
            })
    };
    fn atom(literal: &Literal, positive: bool) -> Option<&Atom> {
        match (literal, positive) {
            (Literal::Positive(atom), true) | (Literal::Negative(atom), false) => Some(atom),
            _ => None,
        }
    }
    // Both literals of a two-literal body, whichever order they are written in.
    let two = |r: usize, first: &dyn Fn(&Literal) -> bool| -> Option<(&Literal, &Literal)> {
        let rule = &program.rules[r];
        match rule.body.as_slice() {
            [x, y] if rule.count.is_none() && first(x) => Some((x, y)),
            [x, y] if rule.count.is_none() && first(y) => Some((y, x)),
            _ => None,
        }
    };
    [(a, b), (b, a)].into_iter().find_map(|(pred, stop)| {
        let of = |p: PredId| -> Vec<usize> {
            (rules.iter().copied())
                .filter(|&r| program.rules[r].head.pred == p)
                .collect()
        };
        let (&[x, y], &[stop_rule]) = (&of(pred)[..], &of(stop)[..]) else {
            return None;
        };
        let head = |r: usize| &program.rules[r].head.args;
        let same =
            |r: usize, atom: &Atom, offset: u32| atom.args == *head(r) && atom.offset == offset;
        // pred(X…, T) :- pred(X…, T-1), not stop(X…, T).
        let keep = |r: usize| {
            let (held, not_stopped) = two(r, &|l| atom(l, true).is_some_and(|x| x.pred == pred))?;
            let not_stopped = atom(not_stopped, false)?;
            (same(r, atom(held, true)?, 1) && not_stopped.pred == stop && same(r, not_stopped, 0))
                .then_some(())
        };
        // pred(X…, T) :- source(X…, T), gate(T).
        let start = |r: usize| {
            let gated = |l: &Literal| atom(l, true).is_some_and(|x| x.args.is_empty());
            let (gate, source) = two(r, &gated)?;
            let (gate, source) = (atom(gate, true)?, atom(source, true)?);
            (same(r, source, 0) && gate.offset == 0 && !source.args.is_empty())
                .then_some((source.pred, gate.pred))
        };
        let (source, gate) = match (start(x), start(y)) {
            (Some(found), None) if keep(y).is_some() => found,
            (None, Some(found)) if keep(x).is_some() => found,
            _ => return None,
        };
        // stop(X…, T) :- pred(X…, T-1), not source(X…, T).
        let (held, not_source) = two(stop_rule, &|l| {
            atom(l, true).is_some_and(|x| x.pred == pred)
        })?;
        let not_source = atom(not_source, false)?;
        // Every head distinct variables: the operator holds a fact of source as it is.
        let plain =
            |r: usize| pattern(head(r)) && head(r).iter().all(|t| matches!(t, Term::Var(_)));
        let fits = same(stop_rule, atom(held, true)?, 1)
            && not_source.pred == source
            && same(stop_rule, not_source, 0)
            && [x, y, stop_rule].into_iter().all(plain)
            && ![pred, stop].contains(&source)
            && ![pred, stop, source].contains(&gate)
            && !outside_reads(stop);
        fits.then_some(Component::Hold {
            pred,
            stop,
            source,
            gate,
        })
    })
}

/// `derived`'s rules (among `rules`) in an order in which each reads at offset 0 only
/// the predicates before it; `None` where they read one another in a cycle.
fn derived_order(
    program: &Program,
    rules: &[usize],
    derived: &[PredId],
) -> Option<Vec<(PredId, Vec<usize>)>> {
    let rules_of = |p: PredId| -> Vec<usize> {
        (rules.iter().copied())
            .filter(|&r| program.rules[r].head.pred == p)
            .collect()
    };
    let mut order: Vec<(PredId, Vec<usize>)> = Vec::new();
    while order.len() < derived.len() {
        let ready = derived.iter().copied().find(|&p| {
            !order.iter().any(|(q, _)| *q == p)
                && rules_of(p).iter().all(|&r| {
                    (program.rules[r].body.iter().filter_map(Literal::atom)).all(|a| {
                        !derived.contains(&a.pred) || order.iter().any(|(q, _)| *q == a.pred)
                    })
                })
        })?;
        order.push((ready, rules_of(ready)));
    }
    Some(order)
}

/// `rules` as `pred`'s start and keep rules and `term`'s rules, or `None`.
fn persist_as(
    program: &Program,
    rules: &[usize],
    pred: PredId,
    term: Option<PredId>,
    derived: &[PredId],
) -> Option<PersistPlan> {
    let is_derived = |p: PredId| derived.contains(&p);
    let internal = |p: PredId| p == pred || Some(p) == term || is_derived(p);
    let (mut starts, mut keeps, mut term_rules) = (Vec::new(), Vec::new(), Vec::new());
    let (mut derived_rules, mut derived_starts) = (Vec::new(), Vec::new());
    let mut slots: Vec<(PredId, u32)> = Vec::new();
    let mut slot = |atom: &Atom| {
        if !slots.contains(&(atom.pred, atom.offset)) {
            slots.push((atom.pred, atom.offset));
        }
    };
    for &r in rules {
        let rule = &program.rules[r];
        let mut atoms = rule.body.iter().filter_map(Literal::atom);
        if rule.head.pred == pred && !atoms.any(|a| internal(a.pred)) {
            starts.push(r);
            continue;
        }
        if !pattern(&rule.head.args) {
            return None;
        }
        let reads = |p: &dyn Fn(PredId) -> bool| {
            (rule.body.iter().filter_map(Literal::atom)).any(|a| p(a.pred))
        };
        let derived_start = rule.head.pred == pred && !reads(&|p| p == pred) && reads(&is_derived);
        if is_derived(rule.head.pred) || derived_start {
            // derived(…, T) :- pred(…, T-1), derived(…, T), outside atoms, comparisons;
            // pred(…, T) :- derived(…, T), outside atoms, comparisons.
            for literal in &rule.body {
                match literal {
                    Literal::Positive(a) if a.pred == pred && a.offset == 1 => {
                        if !is_derived(rule.head.pred) {
                            return None;
                        }
                    }
                    Literal::Positive(a) | Literal::Negative(a) if is_derived(a.pred) => {
                        if a.offset != 0 {
                            return None;
                        }
                    }
                    Literal::Positive(a) | Literal::Negative(a) if !internal(a.pred) => slot(a),
                    Literal::Positive(_) | Literal::Negative(_) => return None,
                    Literal::Compare { .. } | Literal::Assign { .. } => {}
                }
            }
            if is_derived(rule.head.pred) {
                derived_rules.push(r);
            } else {
                derived_starts.push(r);
            }
            continue;
        }
        let mut own = 0;
        if rule.head.pred == pred {
            // pred(P…, T) :- pred(P…, T-1), not s(Q…, T-k), …
            for literal in &rule.body {
                match literal {
                    Literal::Positive(a)
                        if a.pred == pred && a.offset == 1 && a.args == rule.head.args =>
                    {
                        own += 1;
                    }
                    Literal::Negative(a)
                        if a.pred != pred && over_head(&a.args, &rule.head.args) =>
                    {
                        if Some(a.pred) == term {
                            if a.offset != 1 {
                                return None;
                            }
                        } else if is_derived(a.pred) {
                            if a.offset != 0 {
                                return None;
                            }
                        } else {
                            slot(a);
                        }
                    }
                    _ => return None,
                }
            }
            keeps.push(r);
        } else {
            // term(…, T) :- pred(…, T), outside atoms, comparisons.
            for literal in &rule.body {
                match literal {
                    Literal::Positive(a) if a.pred == pred && a.offset == 0 => own += 1,
                    Literal::Positive(a) | Literal::Negative(a) if !internal(a.pred) => slot(a),
                    Literal::Positive(_) | Literal::Negative(_) => return None,
                    Literal::Compare { .. } | Literal::Assign { .. } => {}
                }
            }
            term_rules.push(r);
        }
        if own != 1 {
            return None;
        }
    }
    if keeps.is_empty() || (term.is_some() && term_rules.is_empty()) {
        return None;
    }
    let derived = derived_order(program, &derived_rules, derived)?;
    if derived.iter().any(|(_, rules)| rules.is_empty()) {
        return None;
    }
    let keyed: Vec<usize> = (keeps.iter().chain(&term_rules))
        .chain(&derived_rules)
        .chain(&derived_starts)
        .copied()
        .collect();
    let key = find_key(program, &keyed)?;
    // Start rules that copy one atom, keyed as the rest: done in the operator, on the
    // atom's facts, instead of as dataflow rules (a delay and a map each) in front of it.
    let (copies, starts): (Vec<usize>, Vec<usize>) = starts.into_iter().partition(|&r| {
        let with = [keyed.as_slice(), &[r]].concat();
        copy_of(&program.rules[r]).is_some() && find_key(program, &with).is_some()
    });
    let (mut copies, mut starts) = (copies, starts);
    let all: Vec<usize> = keyed.iter().chain(&copies).copied().collect();
    let key = match find_key(program, &all) {
        Some(all) => all,
        None => {
            starts.append(&mut copies);
            key
        }
    };
    for &r in &copies {
        if let Some((atom, _)) = copy_of(&program.rules[r]) {
            slot(atom);
        }
    }
    let (mut key, mut derived_starts) = (key, derived_starts);
    if !derived.is_empty() {
        // The operator evaluates rules per key already: the start rules keyed as the rest
        // are evaluated there too, on their atoms' facts, instead of in front of it.
        // (`all` holds the derived starts and the copies already.)
        let inside: Vec<usize> = (starts.iter().copied())
            .filter(|&r| find_key(program, &[all.as_slice(), &[r]].concat()).is_some())
            .collect();
        let with = [all.as_slice(), &inside].concat();
        if let (false, Some(all)) = (inside.is_empty(), find_key(program, &with)) {
            key = all;
            starts.retain(|r| !inside.contains(r));
            for &r in &inside {
                program.rules[r]
                    .body
                    .iter()
                    .filter_map(Literal::atom)
                    .for_each(&mut slot);
            }
            derived_starts.extend(inside);
        }
    }
    Some(PersistPlan {
        pred,
        starts,
        copies,
        keeps,
        derived,
        derived_starts,
        slot_copies: Vec::new(),
        term: term.map(|t| (t, term_rules)),
        slots,
        key,
    })
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

/// A rule `h(…, T) :- p(…, T-k).` whose body atom has distinct variables and constants and
/// whose head has only those variables and constants: the atom, and per head argument the
/// body position it copies (`None`: the head's constant).
pub fn copy_of(rule: &Rule) -> Option<(&Atom, Vec<Option<usize>>)> {
    let [Literal::Positive(atom)] = rule.body.as_slice() else {
        return None;
    };
    if !pattern(&atom.args) {
        return None;
    }
    let positions = rule
        .head
        .args
        .iter()
        .map(|t| match t {
            Term::Var(_) => atom.args.iter().position(|a| a == t).map(Some),
            Term::Const(_) => Some(None),
            Term::Wildcard => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some((atom, positions))
}

/// Whether `args` are distinct variables and constants.
fn pattern(args: &[Term]) -> bool {
    let mut seen = HashSet::new();
    args.iter().all(|t| match t {
        Term::Var(v) => seen.insert(*v),
        Term::Const(_) => true,
        Term::Wildcard => false,
    })
}

/// Whether every variable of `args` is one of `head`'s.
fn over_head(args: &[Term], head: &[Term]) -> bool {
    args.iter()
        .all(|t| !matches!(t, Term::Var(_)) || head.contains(t))
}

/// Whether `args` are distinct variables.
fn distinct_vars(args: &[Term]) -> bool {
    let mut seen = HashSet::new();
    args.iter()
        .all(|t| matches!(t, Term::Var(v) if seen.insert(*v)))
}

/// Recognises `h(A…, T) :- p(X…, T), U = T.` (either order; X… distinct variables, each
/// of them once and U in A…, the rest of A… constants; p not h): (p, where each of A… comes
/// from). Every argument of p reaches the head, so distinct facts of p stamp distinct
/// facts of h.
fn stamp_shape(program: &Program, rules: &[usize]) -> Option<(PredId, Vec<Stamped>)> {
    let [r] = rules else { return None };
    let rule = &program.rules[*r];
    let (atom, stamp) = match rule.body.as_slice() {
        [Literal::Positive(atom), Literal::Assign { var, expr, .. }]
        | [Literal::Assign { var, expr, .. }, Literal::Positive(atom)]
            if *expr == stgflow_lang::ir::Expr::Time =>
        {
            (atom, *var)
        }
        _ => return None,
    };
    if atom.offset != 0 || atom.pred == rule.head.pred || !distinct_vars(&atom.args) {
        return None;
    }
    let position = |v: VarId| {
        atom.args
            .iter()
            .position(|t| matches!(t, Term::Var(w) if *w == v))
    };
    let head: Vec<Stamped> = rule
        .head
        .args
        .iter()
        .map(|t| match t {
            Term::Var(v) if *v == stamp => Some(Stamped::Time),
            Term::Var(v) => position(*v).map(Stamped::Arg),
            Term::Const(c) => Some(Stamped::Const(*c)),
            Term::Wildcard => None,
        })
        .collect::<Option<_>>()?;
    // Each argument of p once (the operator finds a stamped fact's source fact by them).
    let every_arg =
        (0..atom.args.len()).all(|i| head.iter().filter(|a| **a == Stamped::Arg(i)).count() == 1);
    (every_arg && head.contains(&Stamped::Time)).then_some((atom.pred, head))
}

/// Recognises ⊞d♢ p and ⊞d□ p definitions.
fn window_shape(program: &Program, rules: &[usize]) -> Option<(PredId, Window)> {
    let head_args = &program.rules[rules[0]].head.args;
    if !distinct_vars(head_args) {
        return None;
    }
    let single_atoms: Option<Vec<(PredId, u32)>> = rules
        .iter()
        .map(|&r| {
            let rule = &program.rules[r];
            match rule.body.as_slice() {
                [Literal::Positive(atom)]
                    if rule.head.args == *head_args && atom.args == *head_args =>
                {
                    Some((atom.pred, atom.offset))
                }
                _ => None,
            }
        })
        .collect();
    if let Some(atoms) = single_atoms {
        let source = atoms[0].0;
        let mut offsets: Vec<u32> = atoms.iter().map(|&(_, k)| k).collect();
        offsets.sort_unstable();
        let d = u32::try_from(offsets.len()).ok()?.checked_sub(1)?;
        let head = program.rules[rules[0]].head.pred;
        if source != head
            && atoms.iter().all(|&(p, _)| p == source)
            && offsets.iter().copied().eq(0..=d)
        {
            return Some((source, Window::Diamond(d)));
        }
        return None;
    }
    let [r] = rules else { return None };
    let rule = &program.rules[*r];
    if rule.head.args != *head_args {
        return None;
    }
    let mut source = None;
    let mut offsets = Vec::new();
    for literal in &rule.body {
        let Literal::Positive(atom) = literal else {
            return None;
        };
        if atom.args != *head_args
            || source.is_some_and(|s| s != atom.pred)
            || atom.pred == rule.head.pred
        {
            return None;
        }
        source = Some(atom.pred);
        offsets.push(atom.offset);
    }
    offsets.sort_unstable();
    let d = u32::try_from(offsets.len()).ok()?.checked_sub(1)?;
    (d > 0 && offsets.iter().copied().eq(0..=d)).then_some((source?, Window::Box(d)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use stgflow_lang::compile_str;

    fn plan_of(text: &str) -> (Program, Plan) {
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
    fn inertia_is_a_stepper_sharded_by_the_fluent() {
        let text = "holds(F, V, T) :- init(F, V, T-1).\n\
                    holds(F, V, T) :- holds(F, V, T-1), not term(F, V, T-1).\n";
        let compiled = compile_str("t.tdl", text);
        let program = &compiled.program;
        let analysis = compiled.analysis.as_ref().expect("no errors");
        let literal = plan(program, analysis, false);
        let [Component::Stepper(stepper)] = literal.components.as_slice() else {
            panic!("{literal:?}")
        };
        let key = stepper.key.clone().unwrap_or_default();
        assert_eq!(key.get(&program.pred_id("holds").unwrap_or(99)), Some(&0));
        assert_eq!(key.get(&program.pred_id("term").unwrap_or(99)), Some(&0));
        assert_eq!(stepper.horizon, 1);
    }

    /// Predicates derived from the persisting one a point back (RTEC's `voted`) go into its
    /// operator; read a point back themselves, or in a cycle at once, they do not.
    #[test]
    fn predicates_derived_from_the_persisting_one_a_point_back_are_lowered_with_it() {
        let id = |program: &Program, name: &str| program.pred_id(name).unwrap_or(99);
        // RTEC's `voted`: `ie` and `te` read h a point back (and each other at once).
        let (program, plan) = plan_of(
            "ie(V, M, n, T) :- reset(M, T), h(V, M, O, T-1), O != n.\n\
             te(V, M, a, T) :- ie(V, M, n, T).\n\
             h(V, M, a, T) :- hi(V, M, a, T-1), not ht(V, M, a, T-1).\n\
             h(V, M, a, T) :- h(V, M, a, T-1), not ht(V, M, a, T-1), not te(V, M, a, T).\n\
             h(V, M, n, T) :- ie(V, M, n, T), not te(V, M, n, T).\n\
             h(V, M, n, T) :- h(V, M, n, T-1), not te(V, M, n, T).\n",
        );
        let Some(Component::Persist(persist)) = plan.components.last() else {
            panic!("{plan:?}")
        };
        assert_eq!(persist.pred, id(&program, "h"));
        assert_eq!(
            persist.derived,
            vec![(id(&program, "ie"), vec![0]), (id(&program, "te"), vec![1])]
        );
        // The start from `hi` is keyed as the rest: evaluated in the operator.
        assert_eq!(persist.derived_starts, vec![4, 2]);
        assert!(persist.starts.is_empty() && persist.term.is_none());
        assert_eq!(persist.keeps, vec![3, 5]);
        assert_eq!(persist.key.get(&id(&program, "reset")), Some(&0));
        on_the_stepper(&[
            // A derived predicate read a point back.
            "d(X, T) :- h(X, T-1), e(X, T).\nh(X, T) :- d(X, T-1).\nh(X, T) :- h(X, T-1), not d(X, T).\n",
            // Derived predicates that read each other at once, in a cycle.
            "d(X, T) :- h(X, T-1), c(X, T).\nc(X, T) :- d(X, T), e(X, T).\n\
             h(X, T) :- h(X, T-1), not d(X, T).\n",
        ]);
    }

    /// Asserts that each of `programs` plans a component on the stepper.
    fn on_the_stepper(programs: &[&str]) {
        for program in programs {
            let (_, plan) = plan_of(program);
            assert!(
                plan.components
                    .iter()
                    .any(|c| matches!(c, Component::Stepper(_))),
                "{program}: {plan:?}"
            );
        }
    }

    /// Inertia's shapes are lowered to the persistence operator: one predicate with start
    /// and keep rules, with or without a terminating predicate in its SCC; other temporal
    /// SCCs stay on the stepper.
    #[test]
    fn inertia_shapes_are_lowered_to_persistence() {
        let id = |program: &Program, name: &str| program.pred_id(name).unwrap_or(99);
        let (program, plan) = plan_of(
            "holds(F, V, T) :- init(F, V, T-1).\n\
             holds(F, V, T) :- holds(F, V, T-1), not term(F, V, T-1).\n\
             term(F, V, T) :- init(F, W, T), holds(F, V, T), V != W.\n",
        );
        let [Component::Persist(persist)] = plan.components.as_slice() else {
            panic!("{plan:?}")
        };
        assert_eq!(persist.pred, id(&program, "holds"));
        assert_eq!(persist.term, Some((id(&program, "term"), vec![2])));
        assert_eq!(
            (persist.copies.as_slice(), persist.keeps.as_slice()),
            (&[0][..], &[1][..])
        );
        assert!(persist.starts.is_empty());
        // init at T for term, at T-1 for the copy.
        assert_eq!(
            persist.slots,
            vec![(id(&program, "init"), 0), (id(&program, "init"), 1)]
        );
        assert_eq!(persist.key.get(&id(&program, "init")), Some(&0));
        // The per-value form: `stop` is outside, read one point back.
        let (program, plan) = plan_of(
            "p(X, a, T) :- on(X, T-1).\np(X, a, T) :- p(X, a, T-1), not stop(X, _, T-1).\n\
             stop(X, Y, T) :- off(X, Y, T).\n",
        );
        let Some(Component::Persist(persist)) = plan.components.last() else {
            panic!("{plan:?}")
        };
        assert_eq!(
            (persist.term.clone(), persist.slots.clone()),
            (
                None,
                vec![(id(&program, "stop"), 1), (id(&program, "on"), 1)]
            )
        );
        on_the_stepper(&[
            // The negation reads a variable the head does not have.
            "p(X, T) :- p(X, T-1), q(X, Y, T), not stop(Y, T-1).\n",
            // Two points back.
            "p(X, T) :- p(X, T-2), not stop(X, T-1).\np(X, T) :- on(X, T).\n",
            // No key.
            "p(X, T) :- p(X, T-1), not alarm(T-1).\np(X, T) :- on(X, T).\n",
            // The time as a value.
            "p(X, T) :- p(X, T-1), not stop(X, T-1).\np(X, T) :- on(X, T), T > 3.\n",
        ]);
    }

    #[test]
    fn a_stamp_is_its_own_component_and_its_near_misses_step() {
        let id = |program: &Program, name: &str| program.pred_id(name).unwrap_or(99);
        let (program, planned) = plan_of("h(Y, U, k, X, T) :- U = T, p(X, Y, T).\n");
        assert_eq!(
            planned.components,
            [Component::Stamp {
                pred: id(&program, "h"),
                source: id(&program, "p"),
                head: vec![
                    Stamped::Arg(1),
                    Stamped::Time,
                    Stamped::Const(Value::sym("k")),
                    Stamped::Arg(0),
                ],
            }]
        );
        assert_eq!(
            planned.dump(&program).lines().nth(1),
            Some("stamp h(#2, T, k, #1) from p(#1, #2) at T")
        );
        for other in [
            // A projection: two facts of p would stamp one of h; an argument twice.
            "h(U, X, T) :- p(X, Y, T), U = T.\n",
            "h(U, X, X, T) :- p(X, T), U = T.\n",
            // The past, a constant in the atom, a time plus one, no time in the head.
            "h(U, X, T) :- p(X, T-1), U = T.\n",
            "h(U, X, T) :- p(X, a, T), U = T.\n",
            "h(U, X, T) :- p(X, T), U = T + 1.\n",
            "h(X, T) :- p(X, T), U = T.\n",
            // Another literal, another rule.
            "h(U, X, T) :- p(X, T), U = T, not q(X, T).\n",
            "h(U, X, T) :- p(X, T), U = T.\nh(U, X, T) :- q(X, T), U = T.\n",
        ] {
            let (_, planned) = plan_of(other);
            assert!(
                planned
                    .components
                    .iter()
                    .all(|c| !matches!(c, Component::Stamp { .. })),
                "{other}: {planned:?}"
            );
        }
        // Without lowering, the rule runs as written.
        let compiled = stgflow_lang::compile_str("t.tdl", "h(U, X, T) :- p(X, T), U = T.\n");
        let analysis = compiled.analysis.as_ref().expect("valid");
        let literal = plan(&compiled.program, analysis, false);
        assert!(matches!(literal.components[..], [Component::Stepper(_)]));
    }

    #[test]
    fn a_negation_without_the_key_is_unsharded() {
        let (_, plan) = plan_of("s(X, T) :- s(X, T-1), not alarm(T-1).\ns(X, T) :- r(X, T).\n");
        let [Component::Stepper(stepper)] = plan.components.as_slice() else {
            panic!("{plan:?}")
        };
        assert_eq!(stepper.key, None);
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

    /// LARS's since-start shape is a hold component; with its stop predicate printed, or
    /// its start gated by a predicate with arguments, it is not.
    #[test]
    fn a_fact_held_since_a_gate_is_a_hold() {
        let rules = "t(T) :- 0 = 0.\ns(T) :- t(T), not t(T-1).\nh(X, Y, T) :- p(X, Y, T), s(T).\nh(X, Y, T) :- h(X, Y, T-1), not g(X, Y, T).\ng(X, Y, T) :- h(X, Y, T-1), not p(X, Y, T).\n";
        let (program, planned) = plan_of(&format!("#output h.\n{rules}"));
        let id = |name: &str| program.pred_id(name).unwrap_or(99);
        assert!(planned.components.contains(&Component::Hold {
            pred: id("h"),
            stop: id("g"),
            source: id("p"),
            gate: id("s"),
        }));
        let holds = |planned: &Plan| {
            (planned.components.iter()).any(|c| matches!(c, Component::Hold { .. }))
        };
        let (_, planned) = plan_of(&format!("#output h, g.\n{rules}"));
        assert!(!holds(&planned), "{planned:?}");
        let gated_by_x = rules.replace("p(X, Y, T), s(T)", "p(X, Y, T), r(X, T)");
        let (_, planned) = plan_of(&format!("#output h.\n{gated_by_x}"));
        assert!(!holds(&planned), "{planned:?}");
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

    #[test]
    fn windows_are_recognised() {
        let (_, plan) = plan_of(
            "q(A, B, T) :- p(A, B, T).\nq(A, B, T) :- p(A, B, T-1).\nq(A, B, T) :- p(A, B, T-2).\n",
        );
        assert!(matches!(
            plan.components.as_slice(),
            [Component::Window {
                window: Window::Diamond(2),
                ..
            }]
        ));
        let (_, plan) = plan_of("b(A, T) :- p(A, T), p(A, T-1), p(A, T-2), p(A, T-3).\n");
        assert!(matches!(
            plan.components.as_slice(),
            [Component::Window {
                window: Window::Box(3),
                ..
            }]
        ));
        let (_, plan) = plan_of("q(A, T) :- p(A, T).\nq(A, T) :- p(A, T-2).\n");
        assert!(matches!(
            plan.components.as_slice(),
            [Component::Dataflow { .. }]
        ));
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
