//! RTEC's surface syntax: Prolog clauses over terms.
//!
//! ```text
//! initiatedAt(safety(X)=verified, T) :- happensAt(repair(X), T).
//! fi(safety(X)=verified, safety(X)=trusted, 3).
//! ```
//!
//! The parser knows Prolog's term syntax only (names, variables, numbers, compound terms,
//! lists, the operators `=`, `\=`, `<`, `=<`, `is`, `+`, `*`, …, `\+` and `not`); what a
//! clause means in the Event Calculus is decided by [`crate::model`]. It never fails and
//! never panics: [`parse`] returns every clause it could read and a diagnostic per error,
//! recovering at the next clause-ending `.`.

mod lexer;
mod parser;

use std::fmt;

use stgflow_lang::diag::Span;

pub use lexer::{Tok, Token, lex};
pub use parser::{Parsed, parse};

/// A file that a directive loads (`:- ['areas.prolog'].`), as written, and where.
#[derive(Clone, Debug, PartialEq)]
pub struct Consult {
    pub path: String,
    pub span: Span,
}

/// A name with the span it was written at.
#[derive(Clone, Debug, PartialEq)]
pub struct Name {
    pub text: String,
    pub span: Span,
}

/// Binary operators of the term syntax.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `=`, `==`, `=:=`
    Eq,
    /// `\=`, `\==`, `=\=`, `!=`
    Ne,
    /// `<`, `@<`
    Lt,
    /// `=<`, `<=`, `@=<`
    Le,
    /// `>`, `@>`
    Gt,
    /// `>=`, `@>=`
    Ge,
    /// `is`
    Is,
    Add,
    Sub,
    Mul,
    Div,
    /// `mod`
    Mod,
}

impl BinOp {
    pub fn from_op(op: &str) -> Option<BinOp> {
        Some(match op {
            "=" | "==" | "=:=" => BinOp::Eq,
            "\\=" | "\\==" | "=\\=" | "!=" => BinOp::Ne,
            "<" | "@<" => BinOp::Lt,
            "=<" | "<=" | "@=<" => BinOp::Le,
            ">" | "@>" => BinOp::Gt,
            ">=" | "@>=" => BinOp::Ge,
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "/" => BinOp::Div,
            _ => return None,
        })
    }

    /// Prolog's priority: comparisons 700, `+ -` 500, `* /` 400.
    pub fn priority(self) -> u16 {
        match self {
            BinOp::Add | BinOp::Sub => 500,
            BinOp::Mul | BinOp::Div | BinOp::Mod => 400,
            _ => 700,
        }
    }
}

impl fmt::Display for BinOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BinOp::Eq => "=",
            BinOp::Ne => "\\=",
            BinOp::Lt => "<",
            BinOp::Le => "=<",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Is => "is",
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => " mod ",
        })
    }
}

/// A Prolog term.
#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    Var(Name),
    /// A name without arguments: a constant, or an event/fluent of arity 0.
    Atom(Name),
    Int(i64, Span),
    Float(f64, Span),
    Str(String, Span),
    /// `name(arg, …)`; the span covers the whole term.
    Compound(Name, Vec<Term>, Span),
    List(Vec<Term>, Span),
    Binary(BinOp, Box<Term>, Box<Term>, Span),
    /// `\+ t` or `not t`.
    Not(Box<Term>, Span),
}

impl Term {
    pub fn span(&self) -> Span {
        match self {
            Term::Var(name) | Term::Atom(name) => name.span,
            Term::Int(_, span)
            | Term::Float(_, span)
            | Term::Str(_, span)
            | Term::Compound(_, _, span)
            | Term::List(_, span)
            | Term::Binary(_, _, _, span)
            | Term::Not(_, span) => *span,
        }
    }

    /// The functor name and arguments of an atom or compound term.
    pub fn functor(&self) -> Option<(&Name, &[Term])> {
        match self {
            Term::Atom(name) => Some((name, &[])),
            Term::Compound(name, args, _) => Some((name, args)),
            _ => None,
        }
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Var(name) | Term::Atom(name) => f.write_str(&name.text),
            Term::Int(i, _) => write!(f, "{i}"),
            Term::Float(x, _) => write!(f, "{x:?}"),
            Term::Str(text, _) => write!(f, "{text:?}"),
            Term::Compound(name, args, _) => {
                write!(f, "{}(", name.text)?;
                write_list(f, args)?;
                f.write_str(")")
            }
            Term::List(items, _) => {
                f.write_str("[")?;
                write_list(f, items)?;
                f.write_str("]")
            }
            Term::Binary(BinOp::Is, lhs, rhs, _) => write!(f, "{lhs} is {rhs}"),
            Term::Binary(op, lhs, rhs, _) => write!(f, "{lhs}{op}{rhs}"),
            Term::Not(inner, _) => write!(f, "\\+ {inner}"),
        }
    }
}

fn write_list(f: &mut fmt::Formatter<'_>, items: &[Term]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(", ")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

/// `head.` or `head :- body.`
#[derive(Clone, Debug, PartialEq)]
pub struct Clause {
    pub head: Term,
    pub body: Vec<Term>,
    pub span: Span,
}
