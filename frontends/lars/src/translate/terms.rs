//! The TD syntax the translation builds: terms, time offsets from the evaluation time,
//! atoms with the user's spans, and the generated definitions over a predicate.

use stgflow_lang::diag::Span;
use stgflow_lang::syntax::ast as td;
use stgflow_lang::syntax::ast::ArithOp;
use stgflow_lang::value::Value;

use crate::ast::{Atom, Term};

/// `name(X1, …, Xn, T) :- source(X1, …, Xn, T-k).` joined over every `(source, k)`.
pub(super) fn definition(
    name: &str,
    sources: &[(&str, u32)],
    arity: usize,
    span: Span,
) -> td::Rule {
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
pub(super) fn prefixed(first: &[&str], vars: &[td::Expr], span: Span) -> Vec<td::Expr> {
    first
        .iter()
        .map(|name| var_expr(name, span))
        .chain(vars.iter().cloned())
        .collect()
}

/// The variables `X1, …, Xn` of a generated definition over an n-ary predicate.
pub(super) fn object_vars(arity: usize, span: Span) -> Vec<td::Expr> {
    (1..=arity)
        .map(|i| var_expr(&format!("X{i}"), span))
        .collect()
}

pub(super) fn term(term: &Term) -> td::Expr {
    match term {
        Term::Var(ident) => td::Expr::Var(td::Ident {
            name: ident.name.clone(),
            span: ident.span,
        }),
        Term::Const(value, span) => td::Expr::Const(*value, *span),
    }
}

pub(super) fn var_expr(name: &str, span: Span) -> td::Expr {
    td::Expr::Var(td::Ident {
        name: name.to_owned(),
        span,
    })
}

/// `now` or `now-k`.
pub(super) fn time_term(now: &str, k: u32, span: Span) -> td::Expr {
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

pub(super) fn plain_atom(
    pred: &str,
    mut args: Vec<td::Expr>,
    time: td::Expr,
    span: Span,
) -> td::Atom {
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
pub(super) fn td_atom(atom: &Atom, pred: &str, now: &str, k: u32) -> td::Atom {
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
