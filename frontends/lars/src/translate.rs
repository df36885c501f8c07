//! Algorithm 2 of the STG paper (pLARS2TD): plain LARS rules → TD rules, as a TD syntax
//! tree whose spans point at the user's LARS text.
//!
//! Per LARS rule, with `T` the rule's evaluation time (named afresh when the rule already
//! has a variable `T`):
//!
//! * every time variable `U` of an `@(U, …)` is grounded by the **first positive**
//!   `time_win(d,0,1,@(U, …))` of the rule; the rule becomes d+1 instances, `U ↦ T-i` for
//!   i = 0..d (one instance per combination when there are several time variables);
//! * `a` → `a(…, T)`; `@(U, a)` → `a(…, T-µ(U))`; `time_win(d,0,1,@(U, a))` →
//!   `a(…, T-µ(U))` when µ(U) ≤ d, else ⊥ (the instance is dropped; under `not` the
//!   literal is dropped instead, ¬⊥ being true);
//! * `time_win(d,0,1,diamond(p(…)))` → `p__diaD(…, T)`, defined once per (p, d) by the
//!   d+1 rules `p__diaD(X…, T) :- p(X…, T-i).` — exactly the ♢ shape the planner lowers to
//!   a delay operator;
//! * `time_win(d,0,1,box(p(…)))` → `p__boxD(…, T)`, see *clipping* below;
//! * `COMP(op, X, Y)` → `X op Y`; `MATH(op, R, X, Y)` → `R = X op Y` (an assignment when R
//!   is not bound otherwise, else a comparison);
//! * a time variable used as a value (in the head, COMP or MATH) gets the assignment
//!   `U = T - µ(U)`: `q(U,A) :- time_win(2,0,1,@(U,p(A)))` reports `q(0,a)` while the
//!   time point 0 is in the window;
//! * except when such a variable occurs in no other `@` than its grounding window: then
//!   `time_win(d,0,1,@(U, p(…)))` → `p__at__diaD(U, …, T)`, ♢d over `p__at(U, X…, T) :-
//!   p(X…, T), U = T` (p's facts stamped with their time point), and the rule is not
//!   instantiated for U. The same facts hold, but the d+1 instances read the time as a
//!   value, which runs on the time-stepping operator and re-evaluates every fact in the
//!   window at every time point; the stamp reads the time once per fact and the window
//!   is a delay operator.
//!
//! **Beyond plain LARS** (Laser's language, LARS's meaning):
//!
//! * a modality outside a window ranges over the whole stream so far: `diamond(p(…))` →
//!   `p__ever`, `e(X…, T) :- p(X…, T).` and `e(X…, T) :- e(X…, T-1).`; `box(p(…))` →
//!   `p__since_start` (below); a time variable grounded only by `@(U, p(…))` outside a
//!   window cannot be instantiated, so every `@` of it reads stamped facts,
//!   `p__at__ever(U, …, T)`;
//! * `@(3, p(…))` → `p__at__ever(3, …, T)` (in a window, `p__at__diaD(3, …, T)`);
//! * the parser reads `not` inside a modality as the dual negated, so nothing is added
//!   here (a clipped □ negated is ♢¬ over the clipped window);
//! * a head `@(T1, h)` with T1 = U + k (U itself, or `MATH(+, T1, U, k)`): the instance
//!   U ↦ T-i derives h at T-i+k, so every time offset of the instance is shifted by k-i
//!   and the head is at the instance's `T`; when every atom is read at U the instances
//!   coincide and one (U ↦ T-k) is made. A negative shift (the head before a time point
//!   the body reads) is E208: TD reads only the past;
//! * a tuple window `tuple_win(n, m(p(…)))` reads `p__tupN(U, X…, T)`: p(X…) given at U
//!   is among the last n atoms of the stream at T (of every predicate: LARS's window). The
//!   stream's atoms are numbered as they are read, and each p atom gives a numbered copy
//!   (`p__seq(I, U, X…)`, [`stgflow_lang::ir::Program::input_sequences`], by the timeline
//!   driver, so every engine sees the same numbers); the atom numbered I is kept until
//!   the driver evicts it when the one numbered I+n arrives (`lars__evictN(I, T)`,
//!   [`stgflow_lang::ir::TupleWindow`]): persistence with its stop; ♢ reads
//!   `p__tupN__dia(X…, T)`, a bare atom `p__tupN__now(X…, T)` (U = T), □
//!   `p__tupN__box(X…, T)` (given at every point since the window's oldest atom, whose
//!   time the driver gives as `lars__tupstartN(U, T)`);
//! * the stream's atoms of a rule head's predicate h go to `h__input` (or nowhere, when
//!   no rule reads h), and rules read `h__read`, h's derived atoms and `h__input`, so the
//!   printed h holds what the rules derive, as Laser prints it.
//!
//! **Clipping at the timeline start.** LARS windows are clipped: at time t the window
//! covers [max(t0, t−d), t]. For ♢ and @ the TD reading already agrees (time points
//! before t0 hold nothing). For □ it does not: the (d+1)-way join needs d earlier points,
//! but LARS's □ holds in the first d points when the atom held at every point since t0.
//! So `p__boxD` is the union of the unclipped window `p__boxD_window` (the □ shape the
//! planner lowers) and `p__since_start`, "p held at every point since the timeline's
//! start", which is recursion through time. Over the stream's atoms (no rule derives p)
//! it is written as a persistence, started at t0 and kept until p no longer holds, that
//! the planner lowers to its hold operator (`plan::Component::Hold`); over a derived p,
//! which may read it
//! back at the same time point, as `p__since_start(X, T) :- p(X, T),
//! p__since_start(X, T-1)` (negating p would be a cycle through negation):
//!
//! ```text
//! p__boxD(X, T)        :- p__boxD_window(X, T).
//! p__boxD(X, T)        :- p__since_start(X, T).
//! p__since_start(X, T) :- p(X, T), lars__start(T).
//! p__since_start(X, T) :- p__since_start(X, T-1), not p__since_start_stop(X, T).
//! p__since_start_stop(X, T) :- p__since_start(X, T-1), not p(X, T).
//! lars__start(T)       :- lars__tick(T), not lars__tick(T-1).
//! lars__tick(T)        :- 0 = 0.
//! ```
//!
//! `lars__tick` holds at every time point of the timeline (a rule without a positive atom
//! holds from the first time point on), so `lars__start` holds at the first one only.
//! Once t ≥ t0 + d, `p__since_start` implies the unclipped window, so the union is exact.
//!
//! A rule that *is* a window — `h(X…) :- time_win(d,0,1,diamond(p(X…)))` (or `box`, or
//! `h(U, X…) :- time_win(d,0,1,@(U, p(X…)))`, ♢d over `p__at`), distinct variables in the
//! same order, h's only rule — defines h directly as the window
//! (Algorithm 2's copy rule `h(X…, T) :- p♢d(X…, T)` inlined), which spares the dataflow a
//! pass over every change of the window.
//!
//! Pitfalls: window predicates are defined over the predicate with distinct variables
//! (constants and repeated variables stay in the reading literal), so one definition
//! serves every use and keeps the shape the planner recognises. Generated names never
//! collide with the user's (a clash gets `_` appended).
//!
//! This file translates the whole program (inputs, what rules read, generated names); its
//! submodules hold a rule's instances (`rules`), heads with `@` (`head`), time windows and
//! modalities (`windows`), □ since the timeline start (`since_start`), tuple windows
//! (`tuples`) and the TD syntax built (`terms`).

use hashbrown::{HashMap, HashSet};
use stgflow_lang::diag::{Diagnostic, Diagnostics};
use stgflow_lang::ir::Origin;
use stgflow_lang::syntax::ast as td;

use crate::ast::{Atom, Extended, Literal, Program};
use crate::codes::Code;

mod head;
mod rules;
mod since_start;
mod terms;
mod tuples;
mod windows;

use terms::definition;

/// The most TD instances one LARS rule may expand to (the product of its grounding
/// windows' sizes + 1).
pub const MAX_INSTANCES: u64 = 10_000;

/// The TD program and the origin of each of its rules, in order.
#[derive(Debug)]
pub struct Translation {
    pub program: td::Program,
    /// One per `td::Item::Rule`, in order.
    pub origins: Vec<Origin>,
    /// Per rule head's predicate, where the stream's atoms of its name go: to a
    /// predicate the rules read besides the derived one, or nowhere (no rule reads it).
    /// The head's own predicate holds only what the rules derive.
    pub inputs: Vec<(String, Option<String>)>,
    /// Per predicate under a tuple window: the predicate its stream atoms are numbered
    /// into (`p__seq(I, U, X…)`, see [`stgflow_lang::ir::Program::input_sequences`]).
    pub sequences: Vec<(String, String)>,
    /// Per tuple window size: the predicates the timeline driver gives its evictions and
    /// its oldest atom's time in (see [`stgflow_lang::ir::TupleWindow`]).
    pub tuple_windows: Vec<(u32, String, String)>,
    /// What rules read of each rule head's predicate read by a rule (`h__read`), with the
    /// head's name: a union that only passes facts through.
    pub reads: Vec<(String, String)>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum WindowKind {
    Diamond,
    Box,
}

/// Translates a parsed, arity-checked LARS program.
pub fn translate(program: &Program) -> (Translation, Diagnostics) {
    let mut translator = Translator {
        user_names: program
            .rules
            .iter()
            .flat_map(|r| {
                std::iter::once(&r.head).chain(
                    r.body
                        .iter()
                        .filter_map(Literal::extended)
                        .map(Extended::atom),
                )
            })
            .map(|a| a.predicate.name.clone())
            .collect(),
        ..Translator::default()
    };
    // A rule head's predicate holds what the rules derive (what is printed, as Laser
    // prints it); rules read that and the stream's atoms of the same name (`h__read`).
    let heads: Vec<(&Atom, usize)> = {
        let mut seen = HashSet::new();
        program
            .rules
            .iter()
            .filter(|r| seen.insert(r.head.predicate.name.as_str()))
            .map(|r| (&r.head, r.number))
            .collect()
    };
    let read: HashSet<&str> = program
        .rules
        .iter()
        .flat_map(|r| r.body.iter().filter_map(Literal::extended))
        .map(|e| e.atom().predicate.name.as_str())
        .collect();
    let mut renamed: HashMap<String, String> = HashMap::new();
    let mut inputs = Vec::new();
    for &(head, number) in &heads {
        let name = &head.predicate.name;
        if read.contains(name.as_str()) {
            let reads = translator.fresh(format!("{name}__read"));
            let input = translator.fresh(format!("{name}__input"));
            translator.union(head, number, &reads, [name.as_str(), input.as_str()]);
            translator.read_names.insert(reads.clone(), name.clone());
            renamed.insert(name.clone(), reads);
            inputs.push((name.clone(), Some(input)));
        } else {
            inputs.push((name.clone(), None));
        }
    }
    // A tuple window counts the stream's atoms: a derived predicate has no stream order.
    for rule in &program.rules {
        for extended in rule.body.iter().filter_map(Literal::extended) {
            if let Extended::Tuples { atom, span, .. } = extended {
                if heads
                    .iter()
                    .any(|(h, _)| h.predicate.name == atom.predicate.name)
                {
                    translator.diagnostics.push(
                        Diagnostic::error(
                            Code::E202,
                            format!("a tuple window over `{}`, which rules derive, is not supported", atom.predicate.name),
                        )
                        .with_label(*span, "the last n atoms of a derived predicate")
                        .with_note("a tuple window holds the last n atoms of the stream in its order; derived atoms are not in the stream")
                        .with_help("use a time window over the derived predicate"),
                    );
                }
            }
        }
    }
    let program = read_as(program, &renamed);
    for rule in &program.rules {
        let head = &rule.head.predicate.name;
        let only_rule = program
            .rules
            .iter()
            .filter(|r| r.head.predicate.name == *head)
            .count()
            == 1;
        if !translator.direct_window(rule, only_rule) {
            translator.rule(rule);
        }
    }
    let outputs: Vec<td::Ident> = heads
        .iter()
        .map(|(head, _)| td::Ident {
            name: head.predicate.name.clone(),
            span: head.predicate.span,
        })
        .collect();
    let mut items = std::mem::take(&mut translator.rules);
    let mut origins = std::mem::take(&mut translator.origins);
    items.append(&mut translator.definitions);
    origins.append(&mut translator.definition_origins);
    let mut items: Vec<td::Item> = items.into_iter().map(td::Item::Rule).collect();
    if let Some(first) = outputs.first() {
        let span = first.span;
        items.push(td::Item::Output(outputs, span));
    }
    let mut sequences: Vec<(String, String)> = translator.sequences.drain().collect();
    sequences.sort();
    let mut tuple_windows: Vec<(u32, String, String)> = (translator.tuple_sizes.drain())
        .map(|(size, (evict, start))| (size, evict, start))
        .collect();
    tuple_windows.sort();
    let mut reads: Vec<(String, String)> = translator.read_names.drain().collect();
    reads.sort();
    (
        Translation {
            program: td::Program { items },
            origins,
            inputs,
            sequences,
            tuple_windows,
            reads,
        },
        translator.diagnostics,
    )
}

/// `program` with every body atom of a predicate in `renamed` reading the new name.
fn read_as(program: &Program, renamed: &HashMap<String, String>) -> Program {
    let mut program = program.clone();
    for rule in &mut program.rules {
        for literal in &mut rule.body {
            let (Literal::Positive(extended) | Literal::Negative(extended, _)) = literal else {
                continue;
            };
            let atom = match extended {
                Extended::Atom(atom)
                | Extended::Window { atom, .. }
                | Extended::Tuples { atom, .. } => atom,
            };
            if let Some(name) = renamed.get(&atom.predicate.name) {
                atom.predicate.name.clone_from(name);
            }
        }
    }
    program
}

#[derive(Default)]
struct Translator {
    user_names: HashSet<String>,
    /// Names given to generated predicates so far.
    generated: HashSet<String>,
    /// The user's name of each `h__read` (what rules read of a rule head's predicate), for
    /// the names of what is defined over it.
    read_names: HashMap<String, String>,
    /// Per (predicate, modality, size): the predicate standing for the window.
    windows: HashMap<(String, WindowKind, Option<u32>), String>,
    /// Per predicate: its numbered stream atoms (`p__seq`), once asked for.
    sequences: HashMap<String, String>,
    /// Per (predicate, size): what a tuple window holds (`p__tupN`), once defined; its ♢
    /// and its atoms now, per (predicate, size, is ♢); and its □.
    tuple_windows: HashMap<(String, u32), String>,
    tuple_reads: HashMap<(String, u32, bool), String>,
    tuple_boxes: HashMap<(String, u32), String>,
    /// Per tuple window size: the driver's evictions and oldest atom's time
    /// (`lars__evictN(I, T)`, `lars__tupstartN(U, T)`), once asked for.
    tuple_sizes: HashMap<u32, (String, String)>,
    /// `p__at` per predicate p, once defined.
    stamps: HashMap<String, String>,
    /// `(tick, start)` once defined.
    start: Option<(String, String)>,
    rules: Vec<td::Rule>,
    origins: Vec<Origin>,
    definitions: Vec<td::Rule>,
    definition_origins: Vec<Origin>,
    diagnostics: Diagnostics,
}

impl Default for Translation {
    fn default() -> Translation {
        Translation {
            program: td::Program { items: Vec::new() },
            origins: Vec::new(),
            inputs: Vec::new(),
            sequences: Vec::new(),
            tuple_windows: Vec::new(),
            reads: Vec::new(),
        }
    }
}

/// How a rule's time variables map to offsets from the evaluation time.
type Mapping = HashMap<String, u32>;

/// A rule's time variables, each with the size of the window that grounds it (`None`:
/// the whole stream so far).
type Groundings = Vec<(String, Option<u32>)>;

/// One instance of a rule: its evaluation time's name, the offsets of its instantiated
/// time variables, the time variables read through stamps, and how many time points
/// after the evaluation time its head holds (a head `@`), which every offset is shifted by
/// so that the head is at the instance's `now`.
struct Frame<'a> {
    now: &'a str,
    mapping: &'a Mapping,
    stamped: &'a HashSet<&'a str>,
    shift: u32,
}

impl Translator {
    /// The user's name for `pred`: the head's name for what rules read of it
    /// (`h__read`), else `pred` itself.
    fn user_name<'a>(&'a self, pred: &'a str) -> &'a str {
        self.read_names.get(pred).map_or(pred, String::as_str)
    }

    fn fresh(&mut self, wanted: String) -> String {
        let mut name = wanted;
        while self.user_names.contains(&name) || self.generated.contains(&name) {
            name.push('_');
        }
        self.generated.insert(name.clone());
        name
    }

    /// `name(X…, T) :- source(X…, T).` for every source: what a head's predicate is read
    /// as, its derived atoms and the stream's.
    /// `number` is the first rule with that head.
    fn union<'s>(
        &mut self,
        head: &Atom,
        number: usize,
        name: &str,
        sources: impl IntoIterator<Item = &'s str>,
    ) {
        let span = head.predicate.span;
        for source in sources {
            self.define(
                definition(name, &[(source, 0)], head.args.len(), span),
                Origin::Generated {
                    by: format!(
                        "LARS rule {number}: `{}` as rules read it, what they derive and the stream's `{}` atoms",
                        head.predicate.name, head.predicate.name
                    ),
                    span: Some(span),
                },
            );
        }
    }

    fn define(&mut self, rule: td::Rule, origin: Origin) {
        self.definitions.push(rule);
        self.definition_origins.push(origin);
    }
}
