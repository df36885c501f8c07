//! A head `@(T1, h)`: its time as a time variable of the body plus a constant, and the
//! heads that would hold before a time point their body reads (E208).

use stgflow_lang::diag::{Diagnostic, Span};
use stgflow_lang::syntax::ast::ArithOp;
use stgflow_lang::value::Value;

use super::{Groundings, Translator};
use crate::ast::{Extended, Literal, Rule, Term, Time};
use crate::codes::Code;

/// A head `@(T1, h)` with T1 = `base` + `offset`; `relative_only` when every atom of the
/// body is read at `base` (`@(base, …)`), so the evaluation time does not matter.
pub(super) struct HeadTime {
    pub(super) base: String,
    pub(super) offset: i64,
    pub(super) relative_only: bool,
    pub(super) span: Span,
}

impl Translator {
    /// The time of a head `@(T1, h)`: T1 is a time variable of the body, or `MATH(+, T1,
    /// T, k)` (or `-`) of one; `Err` after reporting otherwise.
    pub(super) fn head_time(
        &mut self,
        rule: &Rule,
        groundings: &Groundings,
    ) -> Result<Option<HeadTime>, ()> {
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
    pub(super) fn head_before_body(&mut self, rule: &Rule, head: &HeadTime) {
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
}
