//! The abstract syntax tree, with byte spans. `Display` prints it back in canonical form
//! (`stgflow check --dump ast`).

use std::fmt;

use crate::diag::Span;
use crate::value::Value;

#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub items: Vec<Item>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Rule(Rule),
    /// An atom without a body: a fact of the program (it must be ground).
    Fact(Atom),
    /// `#output p, q.`
    Output(Vec<Ident>, Span),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub head: Atom,
    pub body: Vec<Literal>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Atom {
    pub predicate: Ident,
    /// All arguments as written; the last one is the time term.
    pub args: Vec<Expr>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Positive(Atom),
    Negative(Atom, Span),
    /// `lhs op rhs`: a comparison, or an assignment when `op` is `=` and one side is a
    /// variable that nothing else binds (decided during lowering).
    Builtin(Builtin),
    /// `N = #count { V… : literals }`: N is the number of distinct values of V… that the
    /// literals give, with the rule's other variables as bound outside (lowered to a
    /// counting rule, `ir::Rule::count`).
    Count(CountLit),
}

#[derive(Clone, Debug, PartialEq)]
pub struct CountLit {
    pub result: Ident,
    pub counted: Vec<Ident>,
    pub body: Vec<Literal>,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Builtin {
    pub lhs: Expr,
    pub op: CmpOp,
    pub rhs: Expr,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArithOp {
    Add,
    Sub,
    Mul,
    Div,
    /// `mod`: the remainder of integer division with the divisor's sign (Prolog's).
    Mod,
}

/// An arithmetic function, named as Prolog names it: `abs(X)`, `min(X, Y)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Func {
    Abs,
    /// The greatest integer at or below.
    Floor,
    /// The least integer at or above.
    Ceiling,
    /// The nearest integer, halves away from zero.
    Round,
    /// The integer toward zero.
    Truncate,
    /// The value as a float.
    Float,
    Min,
    Max,
}

impl Func {
    /// Every function, for messages and lookups.
    pub const ALL: [Func; 8] = [
        Func::Abs,
        Func::Floor,
        Func::Ceiling,
        Func::Round,
        Func::Truncate,
        Func::Float,
        Func::Min,
        Func::Max,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Func::Abs => "abs",
            Func::Floor => "floor",
            Func::Ceiling => "ceiling",
            Func::Round => "round",
            Func::Truncate => "truncate",
            Func::Float => "float",
            Func::Min => "min",
            Func::Max => "max",
        }
    }

    /// The function of `name`, if one.
    pub fn named(name: &str) -> Option<Func> {
        Func::ALL.into_iter().find(|f| f.name() == name)
    }

    /// How many arguments it takes.
    pub fn arity(self) -> usize {
        match self {
            Func::Min | Func::Max => 2,
            _ => 1,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Var(Ident),
    Const(Value, Span),
    Binary(ArithOp, Box<Expr>, Box<Expr>, Span),
    Call(Func, Vec<Expr>, Span),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Var(ident) => ident.span,
            Expr::Const(_, span) | Expr::Binary(_, _, _, span) | Expr::Call(_, _, span) => *span,
        }
    }
}

impl Literal {
    /// The atoms of the literal, a count's included.
    pub fn atoms(&self) -> Vec<&Atom> {
        match self {
            Literal::Positive(atom) | Literal::Negative(atom, _) => vec![atom],
            Literal::Builtin(_) => Vec::new(),
            Literal::Count(count) => count.body.iter().flat_map(Literal::atoms).collect(),
        }
    }

    /// [`Literal::atoms`], to change.
    pub fn atoms_mut(&mut self) -> Vec<&mut Atom> {
        match self {
            Literal::Positive(atom) | Literal::Negative(atom, _) => vec![atom],
            Literal::Builtin(_) => Vec::new(),
            Literal::Count(count) => count.body.iter_mut().flat_map(Literal::atoms_mut).collect(),
        }
    }

    pub fn span(&self) -> Span {
        match self {
            Literal::Positive(atom) => atom.span,
            Literal::Negative(_, span) => *span,
            Literal::Builtin(builtin) => builtin.span,
            Literal::Count(count) => count.span,
        }
    }
}

impl fmt::Display for CmpOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            CmpOp::Eq => "=",
            CmpOp::Ne => "!=",
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Gt => ">",
            CmpOp::Ge => ">=",
        })
    }
}

impl fmt::Display for ArithOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ArithOp::Add => "+",
            ArithOp::Sub => "-",
            ArithOp::Mul => "*",
            ArithOp::Div => "/",
            ArithOp::Mod => "mod",
        })
    }
}

impl ArithOp {
    pub fn precedence(self) -> u8 {
        match self {
            ArithOp::Add | ArithOp::Sub => 1,
            ArithOp::Mul | ArithOp::Div | ArithOp::Mod => 2,
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Expr::Var(ident) => f.write_str(&ident.name),
            Expr::Const(value, _) => write!(f, "{value}"),
            Expr::Binary(op, lhs, rhs, _) => {
                write_operand(f, lhs, op.precedence(), false)?;
                if matches!(op, ArithOp::Sub | ArithOp::Add)
                    && matches!(**lhs, Expr::Var(_))
                    && matches!(**rhs, Expr::Const(Value::Int(_), _))
                {
                    // Time terms read best unspaced: `T-1`.
                    write!(f, "{op}")?;
                } else {
                    write!(f, " {op} ")?;
                }
                write_operand(f, rhs, op.precedence(), true)
            }
            Expr::Call(func, args, _) => {
                write!(f, "{}(", func.name())?;
                for (i, arg) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{arg}")?;
                }
                f.write_str(")")
            }
        }
    }
}

fn write_operand(f: &mut fmt::Formatter<'_>, expr: &Expr, outer: u8, right: bool) -> fmt::Result {
    let needs_parens = match expr {
        Expr::Binary(op, ..) => op.precedence() < outer || (right && op.precedence() == outer),
        _ => false,
    };
    if needs_parens {
        write!(f, "({expr})")
    } else {
        write!(f, "{expr}")
    }
}

impl fmt::Display for Atom {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}(", self.predicate.name)?;
        for (i, arg) in self.args.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{arg}")?;
        }
        f.write_str(")")
    }
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Positive(atom) => write!(f, "{atom}"),
            Literal::Negative(atom, _) => write!(f, "not {atom}"),
            Literal::Builtin(b) => write!(f, "{} {} {}", b.lhs, b.op, b.rhs),
            Literal::Count(count) => {
                let counted: Vec<&str> = count.counted.iter().map(|v| v.name.as_str()).collect();
                write!(
                    f,
                    "{} = #count {{ {} : ",
                    count.result.name,
                    counted.join(", ")
                )?;
                for (i, literal) in count.body.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{literal}")?;
                }
                f.write_str(" }")
            }
        }
    }
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Item::Rule(rule) => {
                write!(f, "{} :- ", rule.head)?;
                for (i, literal) in rule.body.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{literal}")?;
                }
                f.write_str(".")
            }
            Item::Fact(atom) => write!(f, "{atom}."),
            Item::Output(preds, _) => {
                let names: Vec<&str> = preds.iter().map(|p| p.name.as_str()).collect();
                write!(f, "#output {}.", names.join(", "))
            }
        }
    }
}
