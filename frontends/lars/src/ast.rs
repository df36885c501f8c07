//! The plain LARS rule model as parsed, with byte spans into the program text.
//!
//! Time variables (the `T` of `@(T, a)`) are ordinary [`Term::Var`]s here; which
//! variables are time variables is decided by [`crate::translate`].

use std::fmt;

use stgflow_lang::diag::Span;
use stgflow_lang::syntax::ast::{ArithOp, CmpOp};
use stgflow_lang::value::Value;

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Program {
    pub rules: Vec<Rule>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// 1-based number of the rule in the file (comment and blank lines not counted).
    pub number: usize,
    pub head: Atom,
    /// `@(T, h)` in the head: h holds at T rather than at the evaluation time.
    pub head_time: Option<Time>,
    pub body: Vec<Literal>,
    /// The whole rule, head to last literal.
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    Var(Ident),
    Const(Value, Span),
}

impl Term {
    pub fn span(&self) -> Span {
        match self {
            Term::Var(ident) => ident.span,
            Term::Const(_, span) => *span,
        }
    }

    pub fn var(&self) -> Option<&Ident> {
        match self {
            Term::Var(ident) => Some(ident),
            Term::Const(..) => None,
        }
    }
}

/// `p(a, X)`, or `alarm` (0-ary).
#[derive(Clone, Debug, PartialEq)]
pub struct Atom {
    pub predicate: Ident,
    pub args: Vec<Term>,
    pub span: Span,
}

/// The time of an `@`: a time variable, or a time point written as a number.
#[derive(Clone, Debug, PartialEq)]
pub enum Time {
    Var(Ident),
    Const(u64, Span),
}

impl Time {
    pub fn var(&self) -> Option<&Ident> {
        match self {
            Time::Var(ident) => Some(ident),
            Time::Const(..) => None,
        }
    }

    pub fn span(&self) -> Span {
        match self {
            Time::Var(ident) => ident.span,
            Time::Const(_, span) => *span,
        }
    }
}

/// The modality of a window, or of an operator written without one.
#[derive(Clone, Debug, PartialEq)]
pub enum Modality {
    /// `diamond(a)`: a holds somewhere in the window.
    Diamond,
    /// `box(a)`: a holds at every time point of the window.
    Box,
    /// `@(T, a)`: a holds at the time point T of the window (a variable T is bound).
    At(Time),
}

/// An extended atom (Definition 9 of the STG paper).
#[derive(Clone, Debug, PartialEq)]
pub enum Extended {
    /// `a`: a holds now (also `time_win(n,0,1, a)`: a window does not change what holds
    /// now).
    Atom(Atom),
    /// `time_win(size,0,1, modality(a))`, or `modality(a)` outside a window (`size` is
    /// `None`): the window of the whole stream so far, from the timeline's start.
    Window {
        size: Option<u32>,
        modality: Modality,
        atom: Atom,
        span: Span,
    },
    /// `tuple_win(size, modality(a))` (or `tuple_win(size,0,1, …)`): the window of the
    /// last `size` atoms of the stream (of every predicate), read for a; `modality` `None`
    /// for a bare atom (a now, among them). `diamond`, `box` and `@(T, …)` are the modalities here.
    Tuples {
        size: u32,
        modality: Option<Modality>,
        atom: Atom,
        span: Span,
    },
}

impl Extended {
    pub fn atom(&self) -> &Atom {
        match self {
            Extended::Atom(atom)
            | Extended::Window { atom, .. }
            | Extended::Tuples { atom, .. } => atom,
        }
    }

    pub fn span(&self) -> Span {
        match self {
            Extended::Atom(atom) => atom.span,
            Extended::Window { span, .. } | Extended::Tuples { span, .. } => *span,
        }
    }

    /// The time of an `@`, windowed or not.
    pub fn time(&self) -> Option<&Time> {
        match self {
            Extended::Window {
                modality: Modality::At(time),
                ..
            }
            | Extended::Tuples {
                modality: Some(Modality::At(time)),
                ..
            } => Some(time),
            _ => None,
        }
    }

    /// The time variable of an `@`, windowed or not.
    pub fn time_var(&self) -> Option<&Ident> {
        self.time().and_then(Time::var)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Positive(Extended),
    /// `not(e)`; the span covers `not(…)`.
    Negative(Extended, Span),
    /// `COMP(op, X, Y)`.
    Compare {
        op: CmpOp,
        lhs: Term,
        rhs: Term,
        span: Span,
    },
    /// `MATH(op, R, X, Y)`: R = X op Y.
    Math {
        op: ArithOp,
        result: Term,
        lhs: Term,
        rhs: Term,
        span: Span,
    },
}

impl Literal {
    pub fn span(&self) -> Span {
        match self {
            Literal::Positive(e) => e.span(),
            Literal::Negative(_, span)
            | Literal::Compare { span, .. }
            | Literal::Math { span, .. } => *span,
        }
    }

    /// The extended atom of a positive or negated literal.
    pub fn extended(&self) -> Option<&Extended> {
        match self {
            Literal::Positive(e) | Literal::Negative(e, _) => Some(e),
            _ => None,
        }
    }
}

impl fmt::Display for Term {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Term::Var(ident) => f.write_str(&ident.name),
            Term::Const(value, _) => write!(f, "{value}"),
        }
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = &self.predicate.name;
        let plain = name.bytes().next().is_some_and(|b| b.is_ascii_lowercase())
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        if plain {
            f.write_str(name)?;
        } else {
            write!(f, "'{name}'")?;
        }
        if self.args.is_empty() {
            return Ok(());
        }
        f.write_str("(")?;
        for (i, arg) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{arg}")?;
        }
        f.write_str(")")
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Time::Var(ident) => f.write_str(&ident.name),
            Time::Const(t, _) => write!(f, "{t}"),
        }
    }
}

impl fmt::Display for Extended {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (size, modality, atom) = match self {
            Extended::Atom(atom) => return write!(f, "{atom}"),
            Extended::Tuples {
                size,
                modality,
                atom,
                ..
            } => {
                return match modality {
                    None => write!(f, "tuple_win({size},{atom})"),
                    Some(Modality::Diamond) => write!(f, "tuple_win({size},diamond({atom}))"),
                    Some(Modality::Box) => write!(f, "tuple_win({size},box({atom}))"),
                    Some(Modality::At(time)) => write!(f, "tuple_win({size},@({time},{atom}))"),
                };
            }
            Extended::Window {
                size,
                modality,
                atom,
                ..
            } => (size, modality, atom),
        };
        if let Some(size) = size {
            write!(f, "time_win({size},0,1,")?;
        }
        match modality {
            Modality::Diamond => write!(f, "diamond({atom})")?,
            Modality::Box => write!(f, "box({atom})")?,
            Modality::At(time) => write!(f, "@({time},{atom})")?,
        }
        if size.is_some() {
            f.write_str(")")?;
        }
        Ok(())
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Positive(e) => write!(f, "{e}"),
            Literal::Negative(e, _) => write!(f, "not({e})"),
            Literal::Compare { op, lhs, rhs, .. } => write!(f, "COMP({op},{lhs},{rhs})"),
            Literal::Math {
                op,
                result,
                lhs,
                rhs,
                ..
            } => write!(f, "MATH({op},{result},{lhs},{rhs})"),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.head_time {
            Some(time) => write!(f, "@({time},{}) :- ", self.head)?,
            None => write!(f, "{} :- ", self.head)?,
        }
        for (i, literal) in self.body.iter().enumerate() {
            if i > 0 {
                f.write_str(" and ")?;
            }
            write!(f, "{literal}")?;
        }
        Ok(())
    }
}
