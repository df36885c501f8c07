//! The terms of clauses as the model's: events and fluents (compound arguments flattened),
//! their arguments, value expressions and comparisons.

use stgflow_lang::diag::Diagnostic;
use stgflow_lang::syntax::ast;
use stgflow_lang::value::Value;

use super::read::Read;
use super::{Arg, EventTerm, FluentTerm, Printed, Shape};
use crate::codes::Code;
use crate::syntax::{BinOp, Name, Term};

pub(super) fn fluent_term(term: &Term) -> Read<FluentTerm> {
    let Term::Binary(BinOp::Eq, fluent, value, span) = term else {
        return Err(
            Diagnostic::error(Code::E504, format!("expected `F=V`, found `{term}`"))
                .with_label(term.span(), "a fluent with its value")
                .with_help(format!("every fluent has a value, e.g. `{term}=true`")),
        );
    };
    let (name, args, printed) = functor(fluent, "a fluent")?;
    Ok(FluentTerm {
        name,
        args,
        value: arg(value)?,
        span: *span,
        printed,
    })
}

pub(super) fn event_term(term: &Term) -> Read<EventTerm> {
    let (name, args, printed) = functor(term, "an event")?;
    Ok(EventTerm {
        name,
        args,
        span: term.span(),
        printed,
    })
}

/// The name and arguments of an event or fluent, compound arguments flattened (see
/// [`FluentTerm`]); how RTEC prints it where one was.
pub(super) fn functor(term: &Term, what: &str) -> Read<(Name, Vec<Arg>, Option<Printed>)> {
    let Some((name, args)) = term.functor() else {
        return Err(
            Diagnostic::error(Code::E504, format!("expected {what}, found `{term}`"))
                .with_label(term.span(), format!("not {what}"))
                .with_help("events and fluents are names with arguments: `walking(Id)`"),
        );
    };
    let mut flat = name.clone();
    let mut out = Vec::new();
    let mut shapes = Vec::new();
    let compound = flatten(args, &mut flat.text, &mut out, &mut shapes)?;
    let printed = compound.then(|| Printed {
        name: name.text.clone(),
        args: shapes,
    });
    Ok((flat, out, printed))
}

/// Appends `args` to `out`, a compound term's functor to `name` and its arguments in
/// its place (recursively), and each argument's shape to `shapes`; whether one was
/// compound.
fn flatten(
    args: &[Term],
    name: &mut String,
    out: &mut Vec<Arg>,
    shapes: &mut Vec<Shape>,
) -> Read<bool> {
    let mut compound = false;
    for term in args {
        match term {
            Term::Compound(inner, inner_args, _) => {
                compound = true;
                name.push_str("__");
                name.push_str(&inner.text);
                let mut nested = Vec::new();
                flatten(inner_args, name, out, &mut nested)?;
                shapes.push(Shape::Term(inner.text.clone(), nested));
            }
            other => {
                out.push(arg(other)?);
                shapes.push(Shape::Arg);
            }
        }
    }
    Ok(compound)
}

pub(super) fn arg(term: &Term) -> Read<Arg> {
    Ok(match term {
        Term::Var(name) => Arg::Var(name.clone()),
        Term::Atom(name) => Arg::Const(Value::sym(&name.text), name.span),
        Term::Int(i, span) => Arg::Const(Value::Int(*i), *span),
        Term::Float(x, span) => Arg::Const(Value::Float(*x), *span),
        Term::Str(text, span) => Arg::Const(Value::sym(text), *span),
        // An atom's argument is never evaluated in Prolog: `cargo-hazarda(major)` in
        // RTEC's vessel data is a term, one constant as it is written.
        Term::Binary(BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod, ..)
            if is_ground(term) =>
        {
            Arg::Const(Value::sym(&term.to_string()), term.span())
        }
        Term::Binary(BinOp::Eq, ..) => {
            return Err(
                Diagnostic::error(Code::E505, format!("`{term}` cannot be an argument"))
                    .with_label(term.span(), "a fluent-value pair is an argument of `start` and `end` only")
                    .with_help("write `happensAt(start(F=V), T)` or `end(F=V)`; RTEC's `startI`/`endI` are not supported"),
            );
        }
        other => {
            return Err(
                Diagnostic::error(Code::E505, format!("`{other}` cannot be an argument"))
                    .with_label(other.span(), "lists and arithmetic are not arguments")
                    .with_help("compute the value in an assignment `V is …` and pass V"),
            );
        }
    })
}

/// The variables of a value expression, in order (repeated where they repeat).
pub(crate) fn expr_vars(expr: &ast::Expr, out: &mut Vec<String>) {
    match expr {
        ast::Expr::Var(ident) => out.push(ident.name.clone()),
        ast::Expr::Const(..) => {}
        ast::Expr::Binary(_, lhs, rhs, _) => {
            expr_vars(lhs, out);
            expr_vars(rhs, out);
        }
        ast::Expr::Call(_, args, _) => args.iter().for_each(|a| expr_vars(a, out)),
    }
}

/// Whether `term` has no variable.
fn is_ground(term: &Term) -> bool {
    match term {
        Term::Var(_) => false,
        Term::Atom(_) | Term::Int(..) | Term::Float(..) | Term::Str(..) => true,
        Term::Compound(_, args, _) | Term::List(args, _) => args.iter().all(is_ground),
        Term::Binary(_, lhs, rhs, _) => is_ground(lhs) && is_ground(rhs),
        Term::Not(inner, _) => is_ground(inner),
    }
}

/// A value expression of a built-in (or a time term).
pub(super) fn expr(term: &Term) -> Read<ast::Expr> {
    Ok(match term {
        Term::Var(name) => ast::Expr::Var(ident(name)),
        // Prolog's arithmetic reads `inf` as infinity: `Speed < inf` holds for every speed
        // (RTEC's maritime `inRange(Speed, Max, inf)`).
        Term::Atom(name) if name.text == "inf" => {
            ast::Expr::Const(Value::Float(f64::INFINITY), name.span)
        }
        Term::Atom(name) => ast::Expr::Const(Value::sym(&name.text), name.span),
        Term::Int(i, span) => ast::Expr::Const(Value::Int(*i), *span),
        Term::Float(x, span) => ast::Expr::Const(Value::Float(*x), *span),
        Term::Str(text, span) => ast::Expr::Const(Value::sym(text), *span),
        Term::Binary(
            op @ (BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod),
            lhs,
            rhs,
            span,
        ) => {
            let op = match op {
                BinOp::Add => ast::ArithOp::Add,
                BinOp::Sub => ast::ArithOp::Sub,
                BinOp::Mul => ast::ArithOp::Mul,
                BinOp::Mod => ast::ArithOp::Mod,
                _ => ast::ArithOp::Div,
            };
            let mut left = expr(lhs)?;
            if op == ast::ArithOp::Div {
                // Prolog's `/` does not truncate (`7/2` is 3.5): TD's does on integers.
                left = ast::Expr::Call(ast::Func::Float, vec![left], lhs.span());
            }
            ast::Expr::Binary(op, Box::new(left), Box::new(expr(rhs)?), *span)
        }
        Term::Compound(name, args, span)
            if ast::Func::named(&name.text).is_some_and(|f| f.arity() == args.len()) =>
        {
            let func = ast::Func::named(&name.text).expect("checked in the guard");
            let args = args.iter().map(expr).collect::<Read<Vec<_>>>()?;
            ast::Expr::Call(func, args, *span)
        }
        other => {
            return Err(
                Diagnostic::error(Code::E505, format!("`{other}` is not a value")).with_label(
                    other.span(),
                    "expected a variable, a constant or arithmetic",
                ),
            );
        }
    })
}

pub fn ident(name: &Name) -> ast::Ident {
    ast::Ident {
        name: name.text.clone(),
        span: name.span,
    }
}

pub(super) fn builtin(term: &Term) -> Option<Read<ast::Builtin>> {
    // `\+ X=Y` (`not(X=Y)`) is `X != Y`, and so on: a comparison's negation is the
    // comparison of the other sense.
    let (negated, term) = match term {
        Term::Not(inner, _) => (true, &**inner),
        Term::Compound(name, args, _) if name.text == "not" && args.len() == 1 => (true, &args[0]),
        other => (false, other),
    };
    let Term::Binary(op, lhs, rhs, span) = term else {
        return None;
    };
    let op = match (op, negated) {
        (BinOp::Eq | BinOp::Is, false) | (BinOp::Ne, true) => ast::CmpOp::Eq,
        (BinOp::Ne, false) | (BinOp::Eq | BinOp::Is, true) => ast::CmpOp::Ne,
        (BinOp::Lt, false) | (BinOp::Ge, true) => ast::CmpOp::Lt,
        (BinOp::Le, false) | (BinOp::Gt, true) => ast::CmpOp::Le,
        (BinOp::Gt, false) | (BinOp::Le, true) => ast::CmpOp::Gt,
        (BinOp::Ge, false) | (BinOp::Lt, true) => ast::CmpOp::Ge,
        _ => return None,
    };
    Some((|| {
        Ok(ast::Builtin {
            lhs: expr(lhs)?,
            op,
            rhs: expr(rhs)?,
            span: *span,
        })
    })())
}
