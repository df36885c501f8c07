//! Time windows and modalities: `time_win(d,0,1,…)` over ♢, □ and `@`, and ♢ and □
//! over the whole stream so far, each a predicate defined once per (predicate, modality,
//! size); `@` read through stamped facts where its time is a value; and rules that are a
//! window defined as the window itself.

use hashbrown::HashSet;
use stgflow_lang::diag::Span;
use stgflow_lang::ir::Origin;
use stgflow_lang::syntax::ast as td;
use stgflow_lang::syntax::ast::CmpOp;
use stgflow_lang::value::Value;

use super::terms::{definition, object_vars, plain_atom, td_atom, time_term, var_expr};
use super::{Frame, Translator, WindowKind};
use crate::ast::{Atom, Extended, Ident, Literal, Modality, Rule, Term, Time};

impl Translator {
    /// The TD atom for an extended atom in `frame`; `None` for ⊥.
    pub(super) fn extended(
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
    pub(super) fn direct_window(&mut self, rule: &Rule, only_rule: bool) -> bool {
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

    /// `p__at(U, X…, T) :- p(X…, T), U = T.`: p's facts stamped with the time point they
    /// hold at, defined on first use (see [`stamped_vars`](super::rules::stamped_vars)).
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
}
