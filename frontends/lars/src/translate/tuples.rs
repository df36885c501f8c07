//! Tuple windows, `tuple_win(n, …)`: the last n atoms of the stream, kept from their
//! numbered copies until the timeline driver evicts them, and read through ♢, □, `@` or
//! as the atoms given now.

use stgflow_lang::diag::Span;
use stgflow_lang::ir::Origin;
use stgflow_lang::syntax::ast as td;
use stgflow_lang::syntax::ast::CmpOp;

use super::terms::{object_vars, plain_atom, prefixed, td_atom, time_term, var_expr};
use super::{Frame, Translator};
use crate::ast::{Atom, Ident, Modality, Rule, Term, Time};

impl Translator {
    /// The TD atom for `tuple_win(size, modality(atom))` in `frame`.
    pub(super) fn tuples(
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
}
