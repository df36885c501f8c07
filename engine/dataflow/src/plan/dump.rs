//! The plan as text: each component's kind, how many of each, and the line per component
//! that `check --dump plan` prints (with why a stepper has no key).

use hashbrown::HashMap;

use stgflow_lang::ir::{Literal, PredId, Program};

use super::key::{Stuck, follow_key};
use super::{Component, Plan, Stamped, StepperPlan, Window};

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
                    "stepper {{{}}} {}{}; horizon {}; key {}{}{}{}",
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
                    if s.global.is_empty() {
                        String::new()
                    } else {
                        format!("; every worker holds {}", names(&s.global))
                    },
                    if s.uses_time { "; reads the time" } else { "" }
                ),
                Component::Cycle(c) if c.steps.is_empty() => format!(
                    "cycle {{{}}} {}; horizon {}; fed back a time point later, each join sharded by its own key",
                    names(&c.preds),
                    rules(&c.rules),
                    c.horizon
                ),
                Component::Cycle(c) => {
                    let steps: Vec<String> = (c.steps.iter())
                        .map(|s| {
                            format!(
                                "{{{}}} key {}",
                                names(&s.preds),
                                s.key.as_ref().map_or_else(String::new, key)
                            )
                        })
                        .collect();
                    format!(
                        "cycle {{{}}} {}; horizon {}; in keyed steps, each reading the later ones fed back a time point later: {}",
                        names(&c.preds),
                        rules(&c.rules),
                        c.horizon,
                        steps.join(", ")
                    )
                }
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
