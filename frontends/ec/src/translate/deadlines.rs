//! Deadlines: `fi(F=V, F=V2, D)` as an initiation of F=V2 D time points after one of F=V
//! (Algorithm 3, lines 13 to 17), postponed by `p(F=V)`, and the re-initiations by rules
//! that postpone a deadline under RTEC's timing.

use stgflow_lang::diag::Span;
use stgflow_lang::ir::Origin;
use stgflow_lang::syntax::ast;

use super::terms::{at, fluent_atom, fresh, literal, same_value, var, vars_of};
use super::{Generator, Timing, grounding};
use crate::model::{Arg, FluentTerm, GroundCond, Item};

impl Generator<'_> {
    pub(super) fn deadline(
        &mut self,
        from: &FluentTerm,
        to: &FluentTerm,
        (delay, conds): (u32, &[GroundCond]),
        span: Span,
        items: &[Item],
    ) {
        let postponed = items.iter().any(|item| {
            matches!(item, Item::Postponed(p, _)
                if p.name.text == from.name.text && same_value(&p.value, &from.value))
        });
        let mut taken = Vec::new();
        vars_of(from, &mut taken);
        vars_of(to, &mut taken);
        let time = var(&fresh("T", &taken), span);
        let head = fluent_atom(to, "_i", time.clone());
        let mut body = vec![ast::Literal::Positive(fluent_atom(
            from,
            "_i",
            at(&time, delay, span),
        ))];
        for k in (1..delay).rev() {
            body.push(literal(
                true,
                fluent_atom(from, "_t", at(&time, k, span)),
                span,
            ));
        }
        let name = &from.name.text;
        let early_init = self.early.contains(&(name.clone(), true));
        let early_stop = early_init || self.early.contains(&(name.clone(), false));
        if postponed {
            for k in (1..delay).rev() {
                body.push(literal(
                    true,
                    fluent_atom(from, "_i", at(&time, k, span)),
                    span,
                ));
            }
            // A re-initiation with immediate effect (`from_ie` at s, as one at s − 1)
            // postpones it as well (maritime's `sarMovement` by a `start`).
            if early_init {
                for k in (0..delay.saturating_sub(1)).rev() {
                    body.push(literal(
                        true,
                        fluent_atom(from, "_ie", at(&time, k, span)),
                        span,
                    ));
                }
            }
            // RTEC: "the fluent is extended when the re-initiation takes place at the
            // same time as the deadline" (its `timeoutTreatment.prolog`).
            if self.timing == Timing::Rtec {
                let reinitiated = fluent_atom(from, "_ri", time.clone());
                let entry = (
                    fluent_atom(from, "_i", time.clone()).predicate.name,
                    reinitiated.predicate.name.clone(),
                    from.value.clone(),
                );
                if !self.reinitiated.contains(&entry) {
                    self.reinitiated.push(entry);
                }
                body.push(literal(true, reinitiated, span));
            }
        }
        // Under RTEC's timing, a value initiated with immediate effect (`from_ie` at e
        // holds from e) reaches its deadline at e + delay − 1, as one initiated at e − 1;
        // a termination with immediate effect (`from_te` at s stops it at s) between
        // counts as one at s − 1.
        let mut bodies = vec![body];
        if early_init && delay >= 1 {
            let mut early = vec![ast::Literal::Positive(fluent_atom(
                from,
                "_ie",
                at(&time, delay - 1, span),
            ))];
            early.extend(bodies[0][1..].iter().cloned());
            bodies.push(early);
        }
        if early_stop {
            for body in &mut bodies {
                for k in 0..delay.saturating_sub(1) {
                    body.push(literal(
                        true,
                        fluent_atom(from, "_te", at(&time, k, span)),
                        span,
                    ));
                }
            }
        }
        let by = if postponed {
            "EC fi deadline with p postponement (Algorithm 3, lines 13-17)"
        } else {
            "EC fi deadline (Algorithm 3, lines 13-17)"
        };
        for mut body in bodies {
            body.extend(grounding::conds(conds, &time));
            self.emit(head.clone(), body, span, by.to_owned());
        }
    }

    /// The `f_ri` rules of [`Generator::reinitiated`]: each rule initiating `f_i` with
    /// the value V (or a variable value), written again with the head `f_ri`. The
    /// deadlines' own rules are not among them: only initiations by rules postpone.
    pub(super) fn rule_initiations(&mut self) {
        let mut copies = Vec::new();
        for (rule, origin) in self.rules().zip(&self.out.origins) {
            let Origin::Generated { by, .. } = origin else {
                continue;
            };
            if by.starts_with("EC fi deadline") {
                continue;
            }
            for (initiated, reinitiated, value) in &self.reinitiated {
                if rule.head.predicate.name != *initiated {
                    continue;
                }
                let same = match (rule.head.args.iter().rev().nth(1), value) {
                    (Some(ast::Expr::Const(v, _)), Arg::Const(w, _)) => v == w,
                    (Some(_), _) => true,
                    (None, _) => false,
                };
                if same {
                    let mut copy = rule.clone();
                    copy.head.predicate.name = reinitiated.clone();
                    copies.push((copy, origin.clone()));
                }
            }
        }
        self.emit_copies(
            copies,
            "as an initiation by a rule (RTEC: a re-initiation at a deadline postpones it)",
        );
    }
}
