//! When `start`/`end` happen ([`Timing`]), and under RTEC's timing which rules are
//! evaluated one time point late: those triggered by a `start`/`end` or by an event
//! that is itself known late.

use stgflow_lang::diag::Span;
use stgflow_lang::syntax::ast;

use super::terms::{at, expr_vars};
use crate::model::{Cond, Happening, Item, TimeRule};

/// When `start(F=V)` and `end(F=V)` happen, and so when a rule they trigger takes effect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timing {
    /// The paper's reading: `start` at the first time point where F=V holds, `end` at
    /// the first where it no longer does; what they initiate holds from the point after.
    #[default]
    Paper,
    /// RTEC's: `start` at the last time point before F=V holds, `end` at the last where
    /// it holds, so what they initiate or terminate takes effect at the time point the
    /// paper's `start`/`end` happen at. A rule they trigger is evaluated one point late,
    /// its other conditions read one point back, its effect immediate (`f_ie`/`f_te`):
    /// the same intervals as RTEC's, without looking ahead. And, as in RTEC, a value
    /// initiated where it is also terminated does not start (two values initiated at
    /// once end each other).
    Rtec,
}

/// The derived events (`happensAt` rules) that, in RTEC's timing, happen one time point
/// before they are known: every rule deriving one has a positive `start`/`end` condition
/// or one on another such event. Such a rule is evaluated as [`rtec_early`] says (its
/// other conditions one point back), and a rule it triggers is as well.
pub(super) fn late_events(items: &[Item]) -> Vec<String> {
    let rules: Vec<&crate::model::EventRule> = (items.iter())
        .filter_map(|item| match item {
            Item::Happens(rule) => Some(rule),
            _ => None,
        })
        .collect();
    let mut late: Vec<String> = Vec::new();
    loop {
        let mut grew = false;
        for rule in &rules {
            let name = &rule.head.name.text;
            if late.contains(name) {
                continue;
            }
            let triggered = |rule: &&crate::model::EventRule| {
                rule.head.name.text != *name || triggers(&rule.body, &late)
            };
            if rules.iter().all(triggered) {
                late.push(name.clone());
                grew = true;
            }
        }
        if !grew {
            return late;
        }
    }
}

/// Whether `conds` have a positive `start`/`end` happening, or one of a `late` event.
fn triggers(conds: &[Cond], late: &[String]) -> bool {
    conds.iter().any(
        |cond| matches!(cond, Cond::Happens { negated: false, what, .. } if is_trigger(what, late)),
    )
}

fn is_trigger(what: &Happening, late: &[String]) -> bool {
    match what {
        Happening::Start(_) | Happening::End(_) => true,
        // `f_start` at the interval's first point, with no effect before its own.
        Happening::StartI(_) => false,
        Happening::Event(event) => late.contains(&event.name.text),
    }
}

/// Under [`Timing::Rtec`], a rule triggered by a `start`/`end` happening (a positive
/// condition) as it is evaluated one time point late: the happening read at T, every
/// other condition at T-1 (see [`Timing::Rtec`]). `None` for other rules, and where the
/// rule's time is not a plain variable or a comparison reads it.
pub(super) fn rtec_early(rule: &TimeRule, late: &[String]) -> Option<TimeRule> {
    let ast::Expr::Var(time) = &rule.time else {
        return None;
    };
    if !triggers(&rule.body, late) {
        return None;
    }
    let mut early = rule.clone();
    if !shift_back(&mut early.body, time, rule.span, late) {
        return None;
    }
    Some(early)
}

/// Reads every condition of `conds` at `time` one point earlier but the start/end
/// happenings and the `late` events (see [`rtec_early`]); false where a condition is not read at `time` itself
/// or a comparison reads it.
pub(super) fn shift_back(
    conds: &mut [Cond],
    time: &ast::Ident,
    span: Span,
    late: &[String],
) -> bool {
    for cond in conds {
        let (at_time, triggers) = match cond {
            Cond::Count { body, .. } => {
                if !shift_back(body, time, span, late) {
                    return false;
                }
                continue;
            }
            Cond::Happens { what, time, .. } => (time, is_trigger(what, late)),
            Cond::Holds { time, .. } => (time, false),
            Cond::Background { .. } => continue,
            Cond::Builtin(builtin) => {
                let mut vars = Vec::new();
                expr_vars(&builtin.lhs, &mut vars);
                expr_vars(&builtin.rhs, &mut vars);
                if vars.contains(&time.name) {
                    return false;
                }
                continue;
            }
        };
        if !matches!(at_time, ast::Expr::Var(v) if v.name == time.name) {
            return false;
        }
        if !triggers {
            *at_time = at(at_time, 1, span);
        }
    }
    true
}
