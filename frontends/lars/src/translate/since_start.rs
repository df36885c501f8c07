//! □ over the whole stream so far, "held at every time point since the timeline's
//! start", which also clips a □ window at the timeline start; and `lars__start`, the
//! timeline's first time point.

use stgflow_lang::diag::Span;
use stgflow_lang::ir::Origin;
use stgflow_lang::syntax::ast as td;
use stgflow_lang::syntax::ast::CmpOp;
use stgflow_lang::value::Value;

use super::Translator;
use super::terms::{object_vars, plain_atom, time_term};
use crate::ast::Rule;

impl Translator {
    /// Defines `name` as "`pred` held at every time point since the timeline's start".
    pub(super) fn define_since_start(
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
}
