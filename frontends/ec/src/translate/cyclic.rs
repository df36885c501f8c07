//! RTEC's cyclic form: a condition `initiatedAt(F=V, T1, T, T2)` reads `f_ci`, every
//! rule initiating F=V written again without the condition on its grounded instances.

use stgflow_lang::syntax::ast;

use super::Generator;
use super::terms::{grounded_pred, invented};
use crate::model::{Cond, Item, Reads};

impl Generator<'_> {
    /// `f_ci`, what RTEC's cyclic form reads as `initiatedAt(F=V, T1, T, T2)`: every
    /// rule initiating `f_i` (its deadlines included), written again without the
    /// condition on the pair's grounded instances. RTEC evaluates the initiating rules'
    /// bodies there, for instances its grounding declarations do not name as well.
    pub(super) fn cyclic_initiations(&mut self, items: &[Item]) {
        let mut read: Vec<String> = Vec::new();
        for item in items {
            if let Item::Initiated(rule) | Item::Terminated(rule) = item {
                collect_initiations_read(&rule.body, &mut read);
            }
        }
        if read.is_empty() {
            return;
        }
        let mut copies = Vec::new();
        for (rule, origin) in self.rules().zip(&self.out.origins) {
            let Some(fluent) =
                (read.iter()).find(|name| rule.head.predicate.name == invented(name, "_i"))
            else {
                continue;
            };
            let mut copy = rule.clone();
            copy.head.predicate.name = invented(fluent, "_ci");
            let grounded = grounded_pred(fluent);
            copy.body.retain(|literal| {
                !matches!(literal, ast::Literal::Positive(a) if a.predicate.name == grounded)
            });
            copies.push((copy, origin.clone()));
        }
        self.emit_copies(copies, "as RTEC's cyclic form reads it (grounded or not)");
    }
}

/// The (TD) names of the fluents whose initiations `conds` read in RTEC's cyclic form.
fn collect_initiations_read(conds: &[Cond], out: &mut Vec<String>) {
    for cond in conds {
        match cond {
            Cond::Holds {
                fluent,
                reads: Reads::Initiated,
                ..
            } if !out.contains(&fluent.name.text) => out.push(fluent.name.text.clone()),
            Cond::Count { body, .. } => collect_initiations_read(body, out),
            _ => {}
        }
    }
}
