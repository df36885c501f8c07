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
//!   window at every time point (Laser's `@` micro-benchmark: 0.03 M atoms/s at d = 10);
//!   the stamp reads the time once per fact and the window is a delay operator.
//!
//! **Clipping at the timeline start.** LARS windows are clipped: at time t the window
//! covers [max(t0, t−d), t]. For ♢ and @ the TD reading already agrees (time points
//! before t0 hold nothing). For □ it does not: the (d+1)-way join needs d earlier points,
//! but LARS's □ holds in the first d points when the atom held at every point since t0.
//! So `p__boxD` is the union of the unclipped window `p__boxD_window` (the □ shape the
//! planner lowers) and `p__since_start`, "p held at every point since the timeline's
//! start", which is recursion through time:
//!
//! ```text
//! p__boxD(X, T)        :- p__boxD_window(X, T).
//! p__boxD(X, T)        :- p__since_start(X, T).
//! p__since_start(X, T) :- p(X, T), lars__start(T).
//! p__since_start(X, T) :- p(X, T), p__since_start(X, T-1).
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

use crate::ast::{Atom, Extended, Ident, Literal, Modality, Program, Rule, Term};
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
    let mut outputs: Vec<td::Ident> = Vec::new();
    for rule in &program.rules {
        if !outputs.iter().any(|o| o.name == rule.head.predicate.name) {
            outputs.push(td::Ident {
                name: rule.head.predicate.name.clone(),
                span: rule.head.predicate.span,
            });
        }
    }
    let mut items = std::mem::take(&mut translator.rules);
    let mut origins = std::mem::take(&mut translator.origins);
    items.append(&mut translator.definitions);
    origins.append(&mut translator.definition_origins);
    let mut items: Vec<td::Item> = items.into_iter().map(td::Item::Rule).collect();
    if let Some(first) = outputs.first() {
        let span = first.span;
        items.push(td::Item::Output(outputs, span));
    }
    (
        Translation {
            program: td::Program { items },
            origins,
        },
        translator.diagnostics,
    )
}

#[derive(Default)]
struct Translator {
    user_names: HashSet<String>,
    /// Names given to generated predicates so far.
    generated: HashSet<String>,
    windows: HashMap<(String, WindowKind, u32), String>,
    since_start: HashMap<String, String>,
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
        }
    }
}

/// How a rule's time variables map to offsets from the evaluation time.
type Mapping = HashMap<String, u32>;

impl Translator {
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
        let stamped = stamped_vars(rule, &groundings);
        groundings.retain(|(var, _)| !stamped.contains(var.as_str()));
        let instances: u64 = groundings.iter().map(|(_, d)| u64::from(*d) + 1).product();
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
            self.instance(rule, &now, &mapping, &groundings, &stamped);
            let mut carry = true;
            for (var, d) in groundings.iter().rev() {
                let Some(offset) = mapping.get_mut(var) else {
                    break;
                };
                if *offset < *d {
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
    /// window that grounds it; `None` (after reporting) when one is ungrounded or misused.
    fn groundings(&mut self, rule: &Rule) -> Option<Vec<(String, u32)>> {
        let mut time_vars: Vec<&crate::ast::Ident> = Vec::new();
        for extended in rule.body.iter().filter_map(Literal::extended) {
            let time = match extended {
                Extended::At { time, .. }
                | Extended::Window {
                    modality: Modality::At(time),
                    ..
                } => time,
                _ => continue,
            };
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
            let grounding = rule.body.iter().find_map(|literal| match literal {
                Literal::Positive(Extended::Window {
                    size,
                    modality: Modality::At(t),
                    ..
                }) if t.name == time.name => Some(*size),
                _ => None,
            });
            match grounding {
                Some(d) => groundings.push((time.name.clone(), d)),
                None => {
                    ok = false;
                    self.diagnostics.push(
                        Diagnostic::error(
                            Code::E203,
                            format!("time variable `{}` is not grounded by a positive `time_win(d,0,1,@({}, …))`", time.name, time.name),
                        )
                        .with_label(time.span, "which time points may this be?")
                        .with_note("in plain LARS a time variable ranges over a window: a positive `time_win(d,0,1,@(T,a))` in the same rule binds T to the last d+1 time points (Definition 10)")
                        .with_help(format!("add `time_win(d,0,1,@({},…))` for the window you mean", time.name)),
                    );
                }
            }
        }
        ok.then_some(groundings)
    }

    fn instance(
        &mut self,
        rule: &Rule,
        now: &str,
        mapping: &Mapping,
        groundings: &[(String, u32)],
        stamped: &HashSet<&str>,
    ) {
        let mut body: Vec<td::Literal> = Vec::new();
        for literal in &rule.body {
            match literal {
                Literal::Positive(extended) => {
                    match self.extended(rule, extended, now, mapping, stamped) {
                        Some(atom) => body.push(td::Literal::Positive(atom)),
                        // ⊥: this instance can never fire.
                        None => return,
                    }
                }
                Literal::Negative(extended, span) => {
                    // ¬⊥ is true: drop the literal.
                    if let Some(atom) = self.extended(rule, extended, now, mapping, stamped) {
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
            let offset = mapping.get(var).copied().unwrap_or(0);
            body.push(td::Literal::Builtin(td::Builtin {
                lhs: td::Expr::Var(td::Ident {
                    name: var.clone(),
                    span,
                }),
                op: CmpOp::Eq,
                rhs: time_term(now, offset, span),
                span,
            }));
        }
        let head = td_atom(&rule.head, &rule.head.predicate.name, now, 0);
        let mut by = format!("LARS rule {}", rule.number);
        if !groundings.is_empty() {
            let shown: Vec<String> = groundings
                .iter()
                .map(|(var, _)| {
                    let k = mapping.get(var).copied().unwrap_or(0);
                    if k == 0 {
                        format!("{var} ↦ {now}")
                    } else {
                        format!("{var} ↦ {now}-{k}")
                    }
                })
                .collect();
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

    /// The TD atom for an extended atom under `mapping`; `None` for ⊥.
    fn extended(
        &mut self,
        rule: &Rule,
        extended: &Extended,
        now: &str,
        mapping: &Mapping,
        stamped: &HashSet<&str>,
    ) -> Option<td::Atom> {
        match extended {
            Extended::Atom(atom) => Some(td_atom(atom, &atom.predicate.name, now, 0)),
            Extended::Window {
                size,
                modality: Modality::At(time),
                atom,
                span,
            } if stamped.contains(time.name.as_str()) => {
                let stamp = self.stamp(rule, atom, *span);
                let mut args = vec![Term::Var(time.clone())];
                args.extend(atom.args.iter().cloned());
                let stamped_atom = Atom {
                    predicate: Ident {
                        name: stamp,
                        span: atom.predicate.span,
                    },
                    args,
                    span: atom.span,
                };
                let name = self.window(rule, &stamped_atom, WindowKind::Diamond, *size, *span);
                Some(td_atom(&stamped_atom, &name, now, 0))
            }
            Extended::At { time, atom, .. } => {
                let offset = mapping.get(&time.name).copied().unwrap_or(0);
                Some(td_atom(atom, &atom.predicate.name, now, offset))
            }
            Extended::Window {
                size,
                modality: Modality::At(time),
                atom,
                ..
            } => {
                let offset = mapping.get(&time.name).copied().unwrap_or(0);
                (offset <= *size).then(|| td_atom(atom, &atom.predicate.name, now, offset))
            }
            Extended::Window {
                size,
                modality,
                atom,
                span,
            } => {
                let kind = if *modality == Modality::Box {
                    WindowKind::Box
                } else {
                    WindowKind::Diamond
                };
                let name = self.window(rule, atom, kind, *size, *span);
                Some(td_atom(atom, &name, now, 0))
            }
        }
    }

    /// The predicate standing for ⊞d♢ p or ⊞d□ p, defined on first use.
    fn window(&mut self, rule: &Rule, atom: &Atom, kind: WindowKind, d: u32, span: Span) -> String {
        let pred = atom.predicate.name.clone();
        let key = (pred.clone(), kind, d);
        if let Some(name) = self.windows.get(&key) {
            return name.clone();
        }
        let stem = match kind {
            WindowKind::Diamond => format!("{pred}__dia{d}"),
            WindowKind::Box => format!("{pred}__box{d}"),
        };
        let name = self.fresh(stem);
        self.define_window(rule, &name, &pred, atom.args.len(), kind, d, span);
        self.windows.insert(key, name.clone());
        name
    }

    /// Defines `name` as ⊞d♢ `pred` or ⊞d□ `pred` (clipped).
    #[allow(clippy::too_many_arguments)]
    fn define_window(
        &mut self,
        rule: &Rule,
        name: &str,
        pred: &str,
        arity: usize,
        kind: WindowKind,
        d: u32,
        span: Span,
    ) {
        let origin = |what: String| Origin::Generated {
            by: format!("LARS rule {}: {what}", rule.number),
            span: Some(span),
        };
        match kind {
            WindowKind::Diamond => {
                for i in 0..=d {
                    self.define(
                        definition(name, &[(pred, i)], arity, span),
                        origin(format!("window ⊞{d}♢ {pred} (Algorithm 2, line 22)")),
                    );
                }
            }
            WindowKind::Box if d == 0 => {
                self.define(
                    definition(name, &[(pred, 0)], arity, span),
                    origin(format!("window ⊞0□ {pred} (Algorithm 2, line 26)")),
                );
            }
            WindowKind::Box => {
                let window = self.fresh(format!("{pred}__box{d}_window"));
                let offsets: Vec<(&str, u32)> = (0..=d).map(|i| (pred, i)).collect();
                self.define(
                    definition(&window, &offsets, arity, span),
                    origin(format!("window ⊞{d}□ {pred} (Algorithm 2, line 26)")),
                );
                let since = self.since_start(rule, pred, arity, span);
                for source in [&window, &since] {
                    self.define(
                        definition(name, &[(source.as_str(), 0)], arity, span),
                        origin(format!(
                            "window ⊞{d}□ {pred}, clipped at the timeline start"
                        )),
                    );
                }
            }
        }
    }

    /// A rule `h(X…) :- time_win(d,0,1,diamond(p(X…)))` (or `box`), distinct variables in
    /// the same order, that is h's only rule: h is the window itself. Defining it directly
    /// inlines Algorithm 2's copy rule `h(X…,T) :- p♢d(X…,T)`, which would cost the
    /// dataflow one more 0/1 pass over every change of the window (Laser's micro-benchmark
    /// programs are exactly this shape).
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
            Modality::At(time) => (WindowKind::Diamond, Some(Term::Var(time.clone()))),
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
        if !only_rule || !distinct || !same_vars || head.predicate.name == atom.predicate.name {
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

    /// `p__since_start`: p held at every time point since the timeline's start.
    fn since_start(&mut self, rule: &Rule, pred: &str, arity: usize, span: Span) -> String {
        if let Some(name) = self.since_start.get(pred) {
            return name.clone();
        }
        let start = self.start(rule, span);
        let name = self.fresh(format!("{pred}__since_start"));
        let origin = Origin::Generated {
            by: format!(
                "LARS rule {}: {pred} held at every time point since the timeline start (□ clipping)",
                rule.number
            ),
            span: Some(span),
        };
        let vars = object_vars(arity, span);
        let base = td::Rule {
            head: plain_atom(&name, vars.clone(), time_term("T", 0, span), span),
            body: vec![
                td::Literal::Positive(plain_atom(
                    pred,
                    vars.clone(),
                    time_term("T", 0, span),
                    span,
                )),
                td::Literal::Positive(plain_atom(
                    &start,
                    Vec::new(),
                    time_term("T", 0, span),
                    span,
                )),
            ],
            span,
        };
        let step = td::Rule {
            head: plain_atom(&name, vars.clone(), time_term("T", 0, span), span),
            body: vec![
                td::Literal::Positive(plain_atom(
                    pred,
                    vars.clone(),
                    time_term("T", 0, span),
                    span,
                )),
                td::Literal::Positive(plain_atom(&name, vars, time_term("T", 1, span), span)),
            ],
            span,
        };
        self.define(base, origin.clone());
        self.define(step, origin);
        self.since_start.insert(pred.to_owned(), name.clone());
        name
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
        let name = self.fresh(format!("{pred}__at"));
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
                match e {
                    Extended::At { time, .. }
                    | Extended::Window {
                        modality: Modality::At(time),
                        ..
                    } => {
                        used.insert(time.name.as_str());
                    }
                    _ => {}
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
fn stamped_vars<'r>(rule: &'r Rule, groundings: &[(String, u32)]) -> HashSet<&'r str> {
    let used = values_used(rule);
    let occurrences = |var: &str| {
        rule.body
            .iter()
            .filter_map(Literal::extended)
            .filter(|extended| match extended {
                Extended::At { time, .. }
                | Extended::Window {
                    modality: Modality::At(time),
                    ..
                } => time.name == var,
                _ => false,
            })
            .count()
    };
    used.into_iter()
        .filter(|var| groundings.iter().any(|(g, _)| g == var) && occurrences(var) == 1)
        .collect()
}

fn values_used(rule: &Rule) -> HashSet<&str> {
    let mut used: HashSet<&str> = rule
        .head
        .args
        .iter()
        .filter_map(Term::var)
        .map(|v| v.name.as_str())
        .collect();
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
        Literal::Positive(Extended::Window {
            modality: Modality::At(t),
            ..
        }) if t.name == var => Some(t.span),
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
