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

use hashbrown::{HashMap, HashSet};
use stgflow_lang::diag::{Diagnostic, Diagnostics, Span};
use stgflow_lang::ir::Origin;
use stgflow_lang::syntax::ast as td;
use stgflow_lang::syntax::ast::{ArithOp, CmpOp};
use stgflow_lang::value::Value;

use crate::ast::{Atom, Extended, Ident, Literal, Modality, Program, Rule, Term, Time};
use crate::codes::Code;

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

/// A head `@(T1, h)` with T1 = `base` + `offset`; `relative_only` when every atom of the
/// body is read at `base` (`@(base, …)`), so the evaluation time does not matter.
struct HeadTime {
    base: String,
    offset: i64,
    relative_only: bool,
    span: Span,
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

    fn rule(&mut self, rule: &Rule) {
        let Some(mut groundings) = self.groundings(rule) else {
            return;
        };
        let Ok(head_time) = self.head_time(rule, &groundings) else {
            return;
        };
        let mut stamped = stamped_vars(rule, &groundings);
        if let Some(head) = &head_time {
            stamped.remove(head.base.as_str());
            // Every atom read at the head's time: one instance, shifted by the offset.
            if head.relative_only {
                groundings = vec![(head.base.clone(), Some(0))];
            }
        }
        groundings.retain(|(var, _)| !stamped.contains(var.as_str()));
        let instances: u64 = groundings
            .iter()
            .map(|(_, d)| u64::from(d.unwrap_or(0)) + 1)
            .product();
        if instances > MAX_INSTANCES {
            self.diagnostics.push(
                Diagnostic::error(
                    Code::E207,
                    format!("rule {} expands to {instances} TD rules (at most {MAX_INSTANCES})", rule.number),
                )
                .with_label(rule.span, "one instance per combination of its `@` time points")
                .with_note("Algorithm 2 makes d+1 instances for each time variable grounded by `time_win(d,0,1,@(T,…))`")
                .with_help("use smaller windows, or `diamond` where the time point itself is not needed"),
            );
            return;
        }
        let now = now_name(rule);
        let mut mapping: Mapping = groundings.iter().map(|(v, _)| (v.clone(), 0)).collect();
        // Odometer over the mappings, first time variable slowest.
        loop {
            let shift = match &head_time {
                None => Some(0),
                Some(head) => {
                    let at = i64::from(mapping.get(&head.base).copied().unwrap_or(0));
                    u32::try_from(head.offset - at).ok()
                }
            };
            let Some(shift) = shift else {
                if let Some(head) = &head_time {
                    self.head_before_body(rule, head);
                }
                return;
            };
            let frame = Frame {
                now: &now,
                mapping: &mapping,
                stamped: &stamped,
                shift,
            };
            self.instance(rule, &frame, &groundings);
            let mut carry = true;
            for (var, d) in groundings.iter().rev() {
                let Some(offset) = mapping.get_mut(var) else {
                    break;
                };
                if *offset < d.unwrap_or(0) {
                    *offset += 1;
                    carry = false;
                    break;
                }
                *offset = 0;
            }
            if carry {
                break;
            }
        }
    }

    /// The rule's time variables, in order of appearance, each with the size of the
    /// window that grounds it (`None`: an `@` outside a window, over the whole stream so
    /// far); `None` (after reporting) when one is ungrounded or misused.
    fn groundings(&mut self, rule: &Rule) -> Option<Groundings> {
        let mut time_vars: Vec<&Ident> = Vec::new();
        for time in rule
            .body
            .iter()
            .filter_map(Literal::extended)
            .filter_map(Extended::time_var)
        {
            if !time_vars.iter().any(|t| t.name == time.name) {
                time_vars.push(time);
            }
        }
        let mut ok = true;
        // A time variable is a time, not an object: it may not be an atom argument.
        for extended in rule.body.iter().filter_map(Literal::extended) {
            for arg in &extended.atom().args {
                let Some(var) = arg.var() else { continue };
                if let Some(time) = time_vars.iter().find(|t| t.name == var.name) {
                    ok = false;
                    self.diagnostics.push(
                        Diagnostic::error(
                            Code::E204,
                            format!("time variable `{}` used as an atom argument", var.name),
                        )
                        .with_label(var.span, "an argument of an atom")
                        .with_label(time.span, format!("`{}` is a time variable here", var.name))
                        .with_note("the variable of `@(T, …)` stands for a time point; it may be used as a value in the head, COMP and MATH")
                        .with_help(format!("copy it with `MATH(+,V,{},0)` and use `V` in the atom, or rename one of the two", var.name)),
                    );
                }
            }
        }
        let mut groundings = Vec::new();
        for time in time_vars {
            let positive = |literal: &Literal| match literal {
                Literal::Positive(Extended::Window {
                    size,
                    modality: Modality::At(Time::Var(t)),
                    ..
                }) if t.name == time.name => Some(*size),
                _ => None,
            };
            let sizes: Vec<Option<u32>> = rule.body.iter().filter_map(positive).collect();
            let in_tuples = rule.body.iter().any(|literal| {
                matches!(literal, Literal::Positive(e @ Extended::Tuples { .. }) if e.time_var().is_some_and(|t| t.name == time.name))
            });
            // The first window grounds it; an `@` outside a window only when no window
            // does (the whole stream so far); a tuple window's `@` binds it to the times
            // of the atoms it holds, which reads it as a value (as `None` does).
            let grounding = if in_tuples {
                Some(None)
            } else {
                sizes
                    .iter()
                    .find(|size| size.is_some())
                    .or_else(|| sizes.first())
                    .copied()
            };
            match grounding {
                Some(d) => groundings.push((time.name.clone(), d)),
                None => {
                    ok = false;
                    self.diagnostics.push(
                        Diagnostic::error(
                            Code::E203,
                            format!("time variable `{}` is not grounded by a positive `@({}, …)`", time.name, time.name),
                        )
                        .with_label(time.span, "which time points may this be?")
                        .with_note("a time variable ranges over the time points where a positive `@(T, a)` of the same rule holds: in a window, `time_win(d,0,1,@(T,a))`, the last d+1 of them (Definition 10); on its own, every one so far")
                        .with_help(format!("add `time_win(d,0,1,@({},…))` for the window you mean", time.name)),
                    );
                }
            }
        }
        ok.then_some(groundings)
    }

    /// The time of a head `@(T1, h)`: T1 is a time variable of the body, or `MATH(+, T1,
    /// T, k)` (or `-`) of one; `Err` after reporting otherwise.
    fn head_time(&mut self, rule: &Rule, groundings: &Groundings) -> Result<Option<HeadTime>, ()> {
        let Some(time) = &rule.head_time else {
            return Ok(None);
        };
        let grounded = |name: &str| groundings.iter().any(|(g, _)| g == name);
        let found = match time {
            Time::Var(var) if grounded(&var.name) => Some((var.name.clone(), 0)),
            Time::Var(var) => rule.body.iter().find_map(|literal| {
                let Literal::Math {
                    op,
                    result,
                    lhs,
                    rhs,
                    ..
                } = literal
                else {
                    return None;
                };
                if result.var().is_none_or(|r| r.name != var.name) {
                    return None;
                }
                let int = |term: &Term| match term {
                    Term::Const(Value::Int(k), _) => Some(*k),
                    _ => None,
                };
                let time_var =
                    |term: &Term| term.var().map(|v| v.name.clone()).filter(|v| grounded(v));
                match op {
                    ArithOp::Add => time_var(lhs)
                        .zip(int(rhs))
                        .or_else(|| time_var(rhs).zip(int(lhs))),
                    ArithOp::Sub => time_var(lhs).zip(int(rhs).and_then(i64::checked_neg)),
                    _ => None,
                }
            }),
            Time::Const(..) => None,
        };
        let Some((base, offset)) = found else {
            self.diagnostics.push(
                Diagnostic::error(Code::E208, format!("the time `{time}` of the head `@({time}, …)` is not a time variable of the body plus a constant"))
                    .with_label(time.span(), "when does the head hold?")
                    .with_note("a head `@(T1, h)` holds at T1 = T + k, where T is grounded by a positive `@(T, …)` of the body and T1 is T or given by `MATH(+,T1,T,k)`")
                    .with_help("derive the atom now and read it back with `@` or a window in the rules that use it"),
            );
            return Err(());
        };
        // Every atom read at `base`, and every negated window over it at least as wide as
        // the narrowest positive one: then the body holds at some evaluation time exactly
        // when it holds at `base` itself (a narrower negated window would hold at a later
        // evaluation time, once `base` has left it, which is up to the timeline's end).
        // A tuple window keeps an atom for an unknown number of time points: as
        // narrow as can be (0) when positive; negated, it holds again once the atom has
        // left the window, so it is read at the evaluation time.
        let size_of = |e: &Extended| match e {
            Extended::Window { size, .. } => *size,
            Extended::Tuples { .. } => Some(0),
            Extended::Atom(_) => None,
        };
        let narrowest = rule
            .body
            .iter()
            .filter_map(|l| match l {
                Literal::Positive(e) => size_of(e),
                _ => None,
            })
            .min();
        let relative_only = rule.body.iter().all(|literal| match literal {
            Literal::Positive(e) => e.time_var().is_some_and(|v| v.name == base),
            Literal::Negative(e, _) => {
                e.time_var().is_some_and(|v| v.name == base)
                    && !matches!(e, Extended::Tuples { .. })
                    && match (size_of(e), narrowest) {
                        (None, _) => true,
                        (Some(e), Some(m)) => e >= m,
                        (Some(_), None) => false,
                    }
            }
            _ => true,
        });
        let head = HeadTime {
            base,
            offset,
            relative_only,
            span: time.span(),
        };
        if offset < 0
            || (!relative_only
                && groundings
                    .iter()
                    .any(|(g, d)| *g == head.base && d.is_none()))
        {
            self.head_before_body(rule, &head);
            return Err(());
        }
        Ok(Some(head))
    }

    /// Reports a head `@` that would hold before a time point its body reads.
    fn head_before_body(&mut self, rule: &Rule, head: &HeadTime) {
        let mut diagnostic = Diagnostic::error(
            Code::E208,
            format!(
                "rule {} derives `{}` at a time before its body holds: not forward-propagating",
                rule.number, rule.head.predicate.name
            ),
        )
        .with_label(head.span, "the head's time");
        if !head.relative_only {
            if let Some(now) = rule
                .body
                .iter()
                .filter_map(Literal::extended)
                .find(|e| e.time_var().is_none_or(|v| v.name != head.base))
            {
                diagnostic = diagnostic.with_label(
                    now.span(),
                    "read at the evaluation time, which may come after the head's time",
                );
            }
        }
        self.diagnostics.push(
            diagnostic
                .with_note("the head's time may not come before any time point the body reads: a head at T1 is derived from what held until T1 (TD rules read only the past)")
                .with_help("read every atom at the head's time (`@(T, …)`), or give the head a time at or after the window's end (`MATH(+,T1,T,k)` with k at least the window size)"),
        );
    }

    fn instance(&mut self, rule: &Rule, frame: &Frame<'_>, groundings: &Groundings) {
        let mut body: Vec<td::Literal> = Vec::new();
        for literal in &rule.body {
            match literal {
                Literal::Positive(extended) => match self.extended(rule, extended, frame) {
                    Some(atom) => body.push(td::Literal::Positive(atom)),
                    // ⊥: this instance can never fire.
                    None => return,
                },
                Literal::Negative(extended, span) => {
                    // ¬⊥ is true: drop the literal.
                    if let Some(atom) = self.extended(rule, extended, frame) {
                        body.push(td::Literal::Negative(atom, *span));
                    }
                }
                Literal::Compare { op, lhs, rhs, span } => {
                    body.push(td::Literal::Builtin(td::Builtin {
                        lhs: term(lhs),
                        op: *op,
                        rhs: term(rhs),
                        span: *span,
                    }));
                }
                Literal::Math {
                    op,
                    result,
                    lhs,
                    rhs,
                    span,
                } => body.push(td::Literal::Builtin(td::Builtin {
                    lhs: term(result),
                    op: CmpOp::Eq,
                    rhs: td::Expr::Binary(*op, Box::new(term(lhs)), Box::new(term(rhs)), *span),
                    span: *span,
                })),
            }
        }
        // Time variables used as values get their time point: `U = T - µ(U)`.
        let used = values_used(rule);
        for (var, _) in groundings {
            if !used.contains(var.as_str()) {
                continue;
            }
            let span = time_span(rule, var).unwrap_or(rule.span);
            let offset = frame.mapping.get(var).copied().unwrap_or(0) + frame.shift;
            body.push(td::Literal::Builtin(td::Builtin {
                lhs: td::Expr::Var(td::Ident {
                    name: var.clone(),
                    span,
                }),
                op: CmpOp::Eq,
                rhs: time_term(frame.now, offset, span),
                span,
            }));
        }
        let head = td_atom(&rule.head, &rule.head.predicate.name, frame.now, 0);
        let now = frame.now;
        let mut by = format!("LARS rule {}", rule.number);
        let mut shown: Vec<String> = groundings
            .iter()
            .map(|(var, _)| {
                let k = frame.mapping.get(var).copied().unwrap_or(0) + frame.shift;
                if k == 0 {
                    format!("{var} ↦ {now}")
                } else {
                    format!("{var} ↦ {now}-{k}")
                }
            })
            .collect();
        if frame.shift > 0 {
            shown.push(format!(
                "the head at {now}, {} after the evaluation time",
                frame.shift
            ));
        }
        if !shown.is_empty() {
            by.push_str(&format!(" ({})", shown.join(", ")));
        }
        self.rules.push(td::Rule {
            head,
            body,
            span: rule.span,
        });
        self.origins.push(Origin::Generated {
            by,
            span: Some(rule.span),
        });
    }

    /// The TD atom for an extended atom in `frame`; `None` for ⊥.
    fn extended(
        &mut self,
        rule: &Rule,
        extended: &Extended,
        frame: &Frame<'_>,
    ) -> Option<td::Atom> {
        let (size, modality, atom, span) = match extended {
            Extended::Atom(atom) => {
                return Some(td_atom(atom, &atom.predicate.name, frame.now, frame.shift));
            }
            Extended::Tuples {
                size,
                modality,
                atom,
                span,
            } => return Some(self.tuples(rule, *size, modality.as_ref(), atom, *span, frame)),
            Extended::Window {
                size,
                modality,
                atom,
                span,
            } => (*size, modality, atom, *span),
        };
        let kind = match modality {
            Modality::Diamond => WindowKind::Diamond,
            Modality::Box => WindowKind::Box,
            Modality::At(time) => {
                let time_arg = match time {
                    Time::Var(var) if !frame.stamped.contains(var.name.as_str()) => {
                        let offset = frame.mapping.get(&var.name).copied().unwrap_or(0);
                        if size.is_some_and(|d| offset > d) {
                            return None;
                        }
                        return Some(td_atom(
                            atom,
                            &atom.predicate.name,
                            frame.now,
                            offset + frame.shift,
                        ));
                    }
                    Time::Var(var) => Term::Var(var.clone()),
                    Time::Const(t, span) => {
                        Term::Const(Value::Int(i64::try_from(*t).unwrap_or(i64::MAX)), *span)
                    }
                };
                // ♢ over the atom's facts stamped with their time point, the time read
                // as the first argument.
                let stamp = self.stamp(rule, atom, span);
                let mut args = vec![time_arg];
                args.extend(atom.args.iter().cloned());
                let stamped_atom = Atom {
                    predicate: Ident {
                        name: stamp,
                        span: atom.predicate.span,
                    },
                    args,
                    span: atom.span,
                };
                let name = self.window(rule, &stamped_atom, WindowKind::Diamond, size, span);
                return Some(td_atom(&stamped_atom, &name, frame.now, frame.shift));
            }
        };
        let name = self.window(rule, atom, kind, size, span);
        Some(td_atom(atom, &name, frame.now, frame.shift))
    }

    /// The predicate standing for ⊞d♢ p or ⊞d□ p (`size` `None`: over the whole stream so
    /// far), defined on first use.
    fn window(
        &mut self,
        rule: &Rule,
        atom: &Atom,
        kind: WindowKind,
        size: Option<u32>,
        span: Span,
    ) -> String {
        self.window_of(
            rule,
            &atom.predicate.name,
            atom.args.len(),
            kind,
            size,
            span,
        )
    }

    /// [`Self::window`] over `pred`, of `arity`.
    fn window_of(
        &mut self,
        rule: &Rule,
        pred: &str,
        arity: usize,
        kind: WindowKind,
        size: Option<u32>,
        span: Span,
    ) -> String {
        let key = (pred.to_owned(), kind, size);
        if let Some(name) = self.windows.get(&key) {
            return name.clone();
        }
        let user = self.user_name(pred);
        let stem = match (kind, size) {
            (WindowKind::Diamond, Some(d)) => format!("{user}__dia{d}"),
            (WindowKind::Box, Some(d)) => format!("{user}__box{d}"),
            (WindowKind::Diamond, None) => format!("{user}__ever"),
            (WindowKind::Box, None) => format!("{user}__since_start"),
        };
        let name = self.fresh(stem);
        // Recorded first: a clipped □ reads the □ over the whole stream of the same atom.
        self.windows.insert(key, name.clone());
        self.define_window(rule, &name, pred, arity, kind, size, span);
        name
    }

    /// Defines `name` as ⊞d♢ `pred` or ⊞d□ `pred` (clipped), or, for `size` `None`, ♢ or □
    /// over the whole stream so far.
    #[allow(clippy::too_many_arguments)]
    fn define_window(
        &mut self,
        rule: &Rule,
        name: &str,
        pred: &str,
        arity: usize,
        kind: WindowKind,
        size: Option<u32>,
        span: Span,
    ) {
        // Windows over what rules read of a head's predicate are named by the user's name.
        let user = self.user_name(pred).to_owned();
        let origin = |what: String| Origin::Generated {
            by: format!("LARS rule {}: {what}", rule.number),
            span: Some(span),
        };
        match (kind, size) {
            (WindowKind::Diamond, Some(d)) => {
                for i in 0..=d {
                    self.define(
                        definition(name, &[(pred, i)], arity, span),
                        origin(format!("window ⊞{d}♢ {user} (Algorithm 2, line 22)")),
                    );
                }
            }
            (WindowKind::Box, Some(0)) => {
                self.define(
                    definition(name, &[(pred, 0)], arity, span),
                    origin(format!("window ⊞0□ {user} (Algorithm 2, line 26)")),
                );
            }
            (WindowKind::Box, Some(d)) => {
                let window = self.fresh(format!("{user}__box{d}_window"));
                let offsets: Vec<(&str, u32)> = (0..=d).map(|i| (pred, i)).collect();
                self.define(
                    definition(&window, &offsets, arity, span),
                    origin(format!("window ⊞{d}□ {user} (Algorithm 2, line 26)")),
                );
                let since = self.window_of(rule, pred, arity, WindowKind::Box, None, span);
                for source in [&window, &since] {
                    self.define(
                        definition(name, &[(source.as_str(), 0)], arity, span),
                        origin(format!(
                            "window ⊞{d}□ {user}, clipped at the timeline start"
                        )),
                    );
                }
            }
            (WindowKind::Diamond, None) => {
                let ever = origin(format!(
                    "♢ {user} over the whole stream: {user} held at some time point so far"
                ));
                self.define(definition(name, &[(pred, 0)], arity, span), ever.clone());
                self.define(definition(name, &[(name, 1)], arity, span), ever);
            }
            (WindowKind::Box, None) => self.define_since_start(rule, name, pred, arity, span),
        }
    }

    /// A rule `h(X…) :- time_win(d,0,1,diamond(p(X…)))` (or `box`, or either outside a
    /// window), distinct variables in the same order, that is h's only rule: h is the
    /// window itself. Defining it directly inlines Algorithm 2's copy rule `h(X…,T) :-
    /// p♢d(X…,T)`, which would cost the dataflow one more 0/1 pass over every change of
    /// the window (Laser's micro-benchmark programs are exactly this shape).
    fn direct_window(&mut self, rule: &Rule, only_rule: bool) -> bool {
        let [
            Literal::Positive(Extended::Window {
                size,
                modality,
                atom,
                span,
            }),
        ] = rule.body.as_slice()
        else {
            return false;
        };
        // `h(U, X…) :- time_win(d,0,1,@(U, p(X…)))` is ♢d over p stamped with its time.
        let (kind, time) = match modality {
            Modality::Diamond => (WindowKind::Diamond, None),
            Modality::Box => (WindowKind::Box, None),
            Modality::At(Time::Var(time)) => (WindowKind::Diamond, Some(Term::Var(time.clone()))),
            Modality::At(Time::Const(..)) => return false,
        };
        let head = &rule.head;
        let mut seen = HashSet::new();
        let distinct = head.args.iter().all(|t| {
            t.var()
                .is_some_and(|v| v.name != "_" && seen.insert(v.name.as_str()))
        });
        let read: Vec<&Term> = time.iter().chain(&atom.args).collect();
        let same_vars = head.args.len() == read.len()
            && head
                .args
                .iter()
                .zip(&read)
                .all(|(h, a)| h.var().zip(a.var()).is_some_and(|(h, a)| h.name == a.name));
        if !only_rule
            || rule.head_time.is_some()
            || !distinct
            || !same_vars
            || head.predicate.name == atom.predicate.name
        {
            return false;
        }
        let source = match time {
            Some(_) => self.stamp(rule, atom, *span),
            None => atom.predicate.name.clone(),
        };
        let name = head.predicate.name.clone();
        self.define_window(rule, &name, &source, read.len(), kind, *size, *span);
        true
    }

    /// Defines `name` as "`pred` held at every time point since the timeline's start".
    fn define_since_start(
        &mut self,
        rule: &Rule,
        name: &str,
        pred: &str,
        arity: usize,
        span: Span,
    ) {
        let start = self.start(rule, span);
        let user = self.user_name(pred);
        let origin = Origin::Generated {
            by: format!(
                "LARS rule {}: {user} held at every time point since the timeline start (□ over the whole stream, or clipping)",
                rule.number
            ),
            span: Some(span),
        };
        let vars = object_vars(arity, span);
        let at = |offset| time_term("T", offset, span);
        // p at T, which both rules read where p is derived, the start rule else; and this
        // a point back, which every rule but the start reads.
        let held = td::Literal::Positive(plain_atom(pred, vars.clone(), at(0), span));
        let before = td::Literal::Positive(plain_atom(name, vars.clone(), at(1), span));
        let base = td::Rule {
            head: plain_atom(name, vars.clone(), at(0), span),
            body: vec![
                held.clone(),
                td::Literal::Positive(plain_atom(&start, Vec::new(), at(0), span)),
            ],
            span,
        };
        // Over the stream's atoms only (no rule derives p, so p cannot depend on this):
        // kept while p holds, the keep rule of a persistence that `stop` ends where p no
        // longer holds, the shape the planner lowers to its hold operator (rather than the
        // time-stepping operator, which evaluates every key of p at every time point, or
        // the persistence operator, with a join of p with the start in front). Over a
        // derived p, which may read this back at the same time point, negating p would be
        // a cycle through negation: p is read positively.
        if self.generated.contains(pred) || self.read_names.contains_key(pred) {
            let step = td::Rule {
                head: plain_atom(name, vars.clone(), at(0), span),
                body: vec![held, before],
                span,
            };
            self.define(base, origin.clone());
            self.define(step, origin);
            return;
        }
        let stop = self.fresh(format!("{name}_stop"));
        let keep = td::Rule {
            head: plain_atom(name, vars.clone(), at(0), span),
            body: vec![
                before.clone(),
                td::Literal::Negative(plain_atom(&stop, vars.clone(), at(0), span), span),
            ],
            span,
        };
        let ends = td::Rule {
            head: plain_atom(&stop, vars.clone(), at(0), span),
            body: vec![
                before,
                td::Literal::Negative(plain_atom(pred, vars, at(0), span), span),
            ],
            span,
        };
        self.define(base, origin.clone());
        self.define(keep, origin.clone());
        self.define(ends, origin);
    }

    /// `lars__start`: holds at the first time point of the timeline only.
    fn start(&mut self, rule: &Rule, span: Span) -> String {
        if let Some((_, start)) = &self.start {
            return start.clone();
        }
        let tick = self.fresh("lars__tick".to_owned());
        let start = self.fresh("lars__start".to_owned());
        let origin = Origin::Generated {
            by: format!(
                "LARS rule {}: the timeline's first time point (□ clipping)",
                rule.number
            ),
            span: Some(span),
        };
        let zero = td::Expr::Const(Value::Int(0), span);
        self.define(
            td::Rule {
                head: plain_atom(&tick, Vec::new(), time_term("T", 0, span), span),
                body: vec![td::Literal::Builtin(td::Builtin {
                    lhs: zero.clone(),
                    op: CmpOp::Eq,
                    rhs: zero,
                    span,
                })],
                span,
            },
            origin.clone(),
        );
        self.define(
            td::Rule {
                head: plain_atom(&start, Vec::new(), time_term("T", 0, span), span),
                body: vec![
                    td::Literal::Positive(plain_atom(
                        &tick,
                        Vec::new(),
                        time_term("T", 0, span),
                        span,
                    )),
                    td::Literal::Negative(
                        plain_atom(&tick, Vec::new(), time_term("T", 1, span), span),
                        span,
                    ),
                ],
                span,
            },
            origin,
        );
        self.start = Some((tick, start.clone()));
        start
    }

    /// `p__at(U, X…, T) :- p(X…, T), U = T.`: p's facts stamped with the time point they
    /// hold at, defined on first use (see [`stamped_vars`]).
    fn stamp(&mut self, rule: &Rule, atom: &Atom, span: Span) -> String {
        let pred = atom.predicate.name.clone();
        if let Some(name) = self.stamps.get(&pred) {
            return name.clone();
        }
        let user = self.user_name(&pred);
        let name = self.fresh(format!("{user}__at"));
        let vars = object_vars(atom.args.len(), span);
        let mut head_args = vec![var_expr("X0", span)];
        head_args.extend(vars.iter().cloned());
        let stamp = td::Rule {
            head: plain_atom(&name, head_args, time_term("T", 0, span), span),
            body: vec![
                td::Literal::Positive(plain_atom(&pred, vars, time_term("T", 0, span), span)),
                td::Literal::Builtin(td::Builtin {
                    lhs: var_expr("X0", span),
                    op: CmpOp::Eq,
                    rhs: time_term("T", 0, span),
                    span,
                }),
            ],
            span,
        };
        self.define(
            stamp,
            Origin::Generated {
                by: format!(
                    "LARS rule {}: {pred} stamped with its time point (a time variable used as a value)",
                    rule.number
                ),
                span: Some(span),
            },
        );
        self.stamps.insert(pred, name.clone());
        name
    }

    /// The TD atom for `tuple_win(size, modality(atom))` in `frame`.
    fn tuples(
        &mut self,
        rule: &Rule,
        size: u32,
        modality: Option<&Modality>,
        atom: &Atom,
        span: Span,
        frame: &Frame<'_>,
    ) -> td::Atom {
        let pred = &atom.predicate.name;
        let arity = atom.args.len();
        let window = self.tuple_window(rule, pred, arity, size, span);
        let read = |name: &str, args: Vec<Term>| {
            td_atom(
                &Atom {
                    predicate: Ident {
                        name: name.to_owned(),
                        span: atom.predicate.span,
                    },
                    args,
                    span: atom.span,
                },
                name,
                frame.now,
                frame.shift,
            )
        };
        match modality {
            Some(Modality::At(Time::Var(var))) => {
                let mut args = vec![Term::Var(var.clone())];
                args.extend(atom.args.iter().cloned());
                read(&window, args)
            }
            Some(Modality::Diamond) | None => {
                let diamond = modality.is_some();
                let key = (pred.clone(), size, diamond);
                let name = match self.tuple_reads.get(&key) {
                    Some(name) => name.clone(),
                    None => {
                        let stem = if diamond { "dia" } else { "now" };
                        let name = self.fresh(format!("{pred}__tup{size}__{stem}"));
                        // `name(X…, T) :- p__tupN(U, X…, T)` (♢), with `U = T` for the
                        // atoms given now.
                        let vars = object_vars(arity, span);
                        let mut window_args = vec![var_expr("X0", span)];
                        window_args.extend(vars.iter().cloned());
                        let mut body = vec![td::Literal::Positive(plain_atom(
                            &window,
                            window_args,
                            time_term("T", 0, span),
                            span,
                        ))];
                        if !diamond {
                            body.push(td::Literal::Builtin(td::Builtin {
                                lhs: var_expr("X0", span),
                                op: CmpOp::Eq,
                                rhs: time_term("T", 0, span),
                                span,
                            }));
                        }
                        self.define(
                            td::Rule {
                                head: plain_atom(&name, vars, time_term("T", 0, span), span),
                                body,
                                span,
                            },
                            Origin::Generated {
                                by: format!(
                                    "LARS rule {}: an atom of `{pred}`{} among the last {size} atoms of the stream",
                                    rule.number,
                                    if diamond { "" } else { " given now" }
                                ),
                                span: Some(span),
                            },
                        );
                        self.tuple_reads.insert(key, name.clone());
                        name
                    }
                };
                read(&name, atom.args.clone())
            }
            Some(Modality::Box) => {
                let name = self.tuple_box(rule, pred, arity, size, &window, span);
                read(&name, atom.args.clone())
            }
            // The parser admits no `@` at a number in a tuple window.
            Some(Modality::At(Time::Const(..))) => read(&window, Vec::new()),
        }
    }

    /// `p__tupN__box(X…, T)`: p(X…) holds at every time point of the tuple window's
    /// timeline [t', T], t' the time of its oldest atom (`lars__tupstartN(t', T)`, from the
    /// timeline driver). The atoms after the oldest one are all in the window (it holds the
    /// last ones), so that is: p(X…) given at every point from t' to T, and its atom at t'
    /// still in the window (`p__tupN_cont`, kept only for atoms in the window).
    fn tuple_box(
        &mut self,
        rule: &Rule,
        pred: &str,
        arity: usize,
        size: u32,
        window: &str,
        span: Span,
    ) -> String {
        let key = (pred.to_owned(), size);
        if let Some(name) = self.tuple_boxes.get(&key) {
            return name.clone();
        }
        let (_, start) = self.tuple_size(size);
        let cont = self.fresh(format!("{pred}__tup{size}_cont"));
        let name = self.fresh(format!("{pred}__tup{size}__box"));
        let origin = Origin::Generated {
            by: format!(
                "LARS rule {}: □ over the last {size} atoms of the stream, `{pred}` at each point",
                rule.number
            ),
            span: Some(span),
        };
        let vars = object_vars(arity, span);
        let t = |k| time_term("T", k, span);
        let stamped = prefixed(&["U"], &vars, span);
        let at = |pred: &str, args: Vec<td::Expr>, k| {
            td::Literal::Positive(plain_atom(pred, args, t(k), span))
        };
        let rules = [
            // p__tupN_cont(U, X…, T) :- p__tupN(U, X…, T), U = T.
            td::Rule {
                head: plain_atom(&cont, stamped.clone(), t(0), span),
                body: vec![
                    at(window, stamped.clone(), 0),
                    td::Literal::Builtin(td::Builtin {
                        lhs: var_expr("U", span),
                        op: CmpOp::Eq,
                        rhs: t(0),
                        span,
                    }),
                ],
                span,
            },
            // p__tupN_cont(U, X…, T) :- p__tupN_cont(U, X…, T-1), p(X…, T), p__tupN(U, X…, T).
            td::Rule {
                head: plain_atom(&cont, stamped.clone(), t(0), span),
                body: vec![
                    at(&cont, stamped.clone(), 1),
                    at(pred, vars.clone(), 0),
                    at(window, stamped.clone(), 0),
                ],
                span,
            },
            // p__tupN__box(X…, T) :- lars__tupstartN(U, T), p__tupN_cont(U, X…, T).
            td::Rule {
                head: plain_atom(&name, vars.clone(), t(0), span),
                body: vec![
                    at(&start, vec![var_expr("U", span)], 0),
                    at(&cont, stamped, 0),
                ],
                span,
            },
        ];
        for rule in rules {
            self.define(rule, origin.clone());
        }
        self.tuple_boxes.insert(key, name.clone());
        name
    }

    /// The predicates the timeline driver gives a tuple window of `size` atoms in: its
    /// evictions (`lars__evictN(I, T)`: the atom numbered I left the window at T) and its
    /// oldest atom's time (`lars__tupstartN(U, T)`), one pair per size.
    fn tuple_size(&mut self, size: u32) -> (String, String) {
        if let Some(names) = self.tuple_sizes.get(&size) {
            return names.clone();
        }
        let names = (
            self.fresh(format!("lars__evict{size}")),
            self.fresh(format!("lars__tupstart{size}")),
        );
        self.tuple_sizes.insert(size, names.clone());
        names
    }

    /// `p__tupN(U, X…, T)`: p(X…) given at U is among the last `size` atoms of the stream at
    /// T. Defined over the stream's numbered p atoms (`p__seq(I, U, X…)`, numbered among all
    /// the stream's atoms as they are read): the atom numbered I is kept from its time until
    /// the timeline driver evicts it (`lars__evictN(I, T)`, when the atom numbered I+n
    /// arrives) — persistence, with the eviction as its stop.
    fn tuple_window(
        &mut self,
        rule: &Rule,
        pred: &str,
        arity: usize,
        size: u32,
        span: Span,
    ) -> String {
        let key = (pred.to_owned(), size);
        if let Some(name) = self.tuple_windows.get(&key) {
            return name.clone();
        }
        let sequence = match self.sequences.get(pred) {
            Some(name) => name.clone(),
            None => {
                let name = self.fresh(format!("{pred}__seq"));
                self.sequences.insert(pred.to_owned(), name.clone());
                name
            }
        };
        let (evict, _) = self.tuple_size(size);
        let kept = self.fresh(format!("{pred}__kept{size}"));
        let name = self.fresh(format!("{pred}__tup{size}"));
        let origin = Origin::Generated {
            by: format!(
                "LARS rule {}: the `{pred}` atoms among the last {size} atoms of the stream (a tuple window)",
                rule.number
            ),
            span: Some(span),
        };
        let vars = object_vars(arity, span);
        let numbered = |number: &str| prefixed(&[number, "U"], &vars, span);
        let t = |k| time_term("T", k, span);
        let at = |pred: &str, args: Vec<td::Expr>, k| {
            td::Literal::Positive(plain_atom(pred, args, t(k), span))
        };
        let not_evicted = td::Literal::Negative(
            plain_atom(&evict, vec![var_expr("I", span)], t(0), span),
            span,
        );
        let rules = [
            // p__keptN(I, U, X…, T) :- p__seq(I, U, X…, T), p(X…, T), not lars__evictN(I, T).
            // (p holds where its numbered copy is given; read here, p is a predicate of
            // the program, so that the stream's p atoms are read and numbered.)
            td::Rule {
                head: plain_atom(&kept, numbered("I"), t(0), span),
                body: vec![
                    at(&sequence, numbered("I"), 0),
                    at(pred, vars.clone(), 0),
                    not_evicted.clone(),
                ],
                span,
            },
            // p__keptN(I, U, X…, T) :- p__keptN(I, U, X…, T-1), not lars__evictN(I, T).
            td::Rule {
                head: plain_atom(&kept, numbered("I"), t(0), span),
                body: vec![at(&kept, numbered("I"), 1), not_evicted],
                span,
            },
            // p__tupN(U, X…, T) :- p__keptN(I, U, X…, T).
            td::Rule {
                head: plain_atom(&name, numbered("I").split_off(1), t(0), span),
                body: vec![at(&kept, numbered("I"), 0)],
                span,
            },
        ];
        for rule in rules {
            self.define(rule, origin.clone());
        }
        self.tuple_windows.insert(key, name.clone());
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

/// `name(X1, …, Xn, T) :- source(X1, …, Xn, T-k).` joined over every `(source, k)`.
fn definition(name: &str, sources: &[(&str, u32)], arity: usize, span: Span) -> td::Rule {
    let vars = object_vars(arity, span);
    td::Rule {
        head: plain_atom(name, vars.clone(), time_term("T", 0, span), span),
        body: sources
            .iter()
            .map(|(source, k)| {
                td::Literal::Positive(plain_atom(
                    source,
                    vars.clone(),
                    time_term("T", *k, span),
                    span,
                ))
            })
            .collect(),
        span,
    }
}

/// The variables named `first` (an atom's number, its time), then `vars`.
fn prefixed(first: &[&str], vars: &[td::Expr], span: Span) -> Vec<td::Expr> {
    first
        .iter()
        .map(|name| var_expr(name, span))
        .chain(vars.iter().cloned())
        .collect()
}

/// The variables `X1, …, Xn` of a generated definition over an n-ary predicate.
fn object_vars(arity: usize, span: Span) -> Vec<td::Expr> {
    (1..=arity)
        .map(|i| var_expr(&format!("X{i}"), span))
        .collect()
}

/// A name for the evaluation time that the rule does not use: `T`, else `Now`, `T0`, ….
fn now_name(rule: &Rule) -> String {
    let mut used: HashSet<&str> = HashSet::new();
    let mut terms: Vec<&Term> = rule.head.args.iter().collect();
    for literal in &rule.body {
        match literal {
            Literal::Positive(e) | Literal::Negative(e, _) => {
                terms.extend(e.atom().args.iter());
                if let Some(time) = e.time_var() {
                    used.insert(time.name.as_str());
                }
            }
            Literal::Compare { lhs, rhs, .. } => terms.extend([lhs, rhs]),
            Literal::Math {
                result, lhs, rhs, ..
            } => terms.extend([result, lhs, rhs]),
        }
    }
    used.extend(
        terms
            .into_iter()
            .filter_map(Term::var)
            .map(|v| v.name.as_str()),
    );
    ["T", "Now"]
        .into_iter()
        .map(str::to_owned)
        .chain((0..).map(|i| format!("T{i}")))
        .find(|name| !used.contains(name.as_str()))
        .unwrap_or_else(|| "T".to_owned())
}

/// Variables used as values: in the head, COMP and MATH.
/// The time variables among `groundings` that the rule uses as values and that occur in
/// no `@` but their grounding `time_win(d,0,1,@(U, p(…)))`. Such a window reads as
/// `p__at__diaD(U, …)`: ♢d over p's facts stamped with their time point (`p__at`), which
/// binds U itself. Algorithm 2's d+1 instances with `U = T - i` hold the same facts, but
/// the planner has to run them as rules reading the time, on the time-stepping operator,
/// which re-evaluates every fact in the window at every time point (O(d) per fact);
/// stamping reads the time once per fact and the window is the O(1) delay operator.
fn stamped_vars<'r>(rule: &'r Rule, groundings: &Groundings) -> HashSet<&'r str> {
    let used = values_used(rule);
    let occurrences = |var: &str| {
        rule.body
            .iter()
            .filter_map(Literal::extended)
            .filter(|extended| extended.time_var().is_some_and(|t| t.name == var))
            .count()
    };
    let mut stamped: HashSet<&str> = used
        .into_iter()
        .filter(|var| {
            groundings.iter().any(|(g, d)| g == var && d.is_some()) && occurrences(var) == 1
        })
        .collect();
    // A time variable over the whole stream cannot be instantiated: every `@` of it reads
    // stamped facts.
    for extended in rule.body.iter().filter_map(Literal::extended) {
        if let Some(var) = extended.time_var() {
            if groundings
                .iter()
                .any(|(g, d)| *g == var.name && d.is_none())
            {
                stamped.insert(var.name.as_str());
            }
        }
    }
    stamped
}

fn values_used(rule: &Rule) -> HashSet<&str> {
    let mut used: HashSet<&str> = rule
        .head
        .args
        .iter()
        .filter_map(Term::var)
        .map(|v| v.name.as_str())
        .collect();
    // A tuple window's `@(U, …)` reads U as a value (the atom's time).
    used.extend(rule.body.iter().filter_map(|literal| match literal {
        Literal::Positive(e @ Extended::Tuples { .. })
        | Literal::Negative(e @ Extended::Tuples { .. }, _) => {
            e.time_var().map(|t| t.name.as_str())
        }
        _ => None,
    }));
    for literal in &rule.body {
        let terms: Vec<&Term> = match literal {
            Literal::Compare { lhs, rhs, .. } => vec![lhs, rhs],
            Literal::Math {
                result, lhs, rhs, ..
            } => vec![result, lhs, rhs],
            _ => continue,
        };
        used.extend(
            terms
                .into_iter()
                .filter_map(Term::var)
                .map(|v| v.name.as_str()),
        );
    }
    used
}

/// Where the rule grounds `var` (its `@(var, …)` in the first positive window).
fn time_span(rule: &Rule, var: &str) -> Option<Span> {
    rule.body.iter().find_map(|literal| match literal {
        Literal::Positive(extended) => extended
            .time_var()
            .filter(|t| t.name == var)
            .map(|t| t.span),
        _ => None,
    })
}

fn term(term: &Term) -> td::Expr {
    match term {
        Term::Var(ident) => td::Expr::Var(td::Ident {
            name: ident.name.clone(),
            span: ident.span,
        }),
        Term::Const(value, span) => td::Expr::Const(*value, *span),
    }
}

fn var_expr(name: &str, span: Span) -> td::Expr {
    td::Expr::Var(td::Ident {
        name: name.to_owned(),
        span,
    })
}

/// `now` or `now-k`.
fn time_term(now: &str, k: u32, span: Span) -> td::Expr {
    let var = var_expr(now, span);
    if k == 0 {
        var
    } else {
        td::Expr::Binary(
            ArithOp::Sub,
            Box::new(var),
            Box::new(td::Expr::Const(Value::Int(i64::from(k)), span)),
            span,
        )
    }
}

fn plain_atom(pred: &str, mut args: Vec<td::Expr>, time: td::Expr, span: Span) -> td::Atom {
    args.push(time);
    td::Atom {
        predicate: td::Ident {
            name: pred.to_owned(),
            span,
        },
        args,
        span,
    }
}

/// The TD atom `pred(args of atom…, now-k)`, with the user's spans.
fn td_atom(atom: &Atom, pred: &str, now: &str, k: u32) -> td::Atom {
    let mut args: Vec<td::Expr> = atom.args.iter().map(term).collect();
    args.push(time_term(now, k, atom.span));
    td::Atom {
        predicate: td::Ident {
            name: pred.to_owned(),
            span: atom.predicate.span,
        },
        args,
        span: atom.span,
    }
}
