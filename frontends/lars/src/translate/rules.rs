//! Algorithm 2 per rule: the rule's time variables grounded by its windows, and one TD
//! rule per instance (per combination of their time points), each literal translated in
//! the instance's frame.

use hashbrown::HashSet;
use stgflow_lang::diag::{Diagnostic, Span};
use stgflow_lang::ir::Origin;
use stgflow_lang::syntax::ast as td;
use stgflow_lang::syntax::ast::CmpOp;

use super::terms::{td_atom, term, time_term};
use super::{Frame, Groundings, MAX_INSTANCES, Mapping, Translator};
use crate::ast::{Extended, Ident, Literal, Modality, Rule, Term, Time};
use crate::codes::Code;

impl Translator {
    pub(super) fn rule(&mut self, rule: &Rule) {
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
pub(super) fn stamped_vars<'r>(rule: &'r Rule, groundings: &Groundings) -> HashSet<&'r str> {
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
