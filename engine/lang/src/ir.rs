//! The rule model every later stage works on: predicates resolved to ids, variables to
//! per-rule ids, the time term split off each atom as an offset, built-ins classified as
//! comparisons or assignments. Every rule carries an [`Origin`], so that errors found after
//! translation (LARS, EC) still point at the user's text.

mod lower;

use std::fmt;

pub use lower::{lower, lower_traced};

use crate::diag::Span;
use crate::syntax::ast::{ArithOp, CmpOp, Func};
use crate::value::Value;

pub type PredId = usize;
pub type VarId = usize;

/// Where a rule came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Written by the user at this span.
    File(Span),
    /// Produced by a translation (`by` says which, e.g. "LARS rule 3, window ⊞2♢"),
    /// pointing at the user's text it came from when there is one.
    Generated { by: String, span: Option<Span> },
}

impl Origin {
    pub fn span(&self) -> Option<Span> {
        match self {
            Origin::File(span) => Some(*span),
            Origin::Generated { span, .. } => *span,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Predicate {
    pub name: String,
    /// Number of object arguments (the time argument is not counted).
    pub arity: usize,
    /// Where the predicate is first mentioned.
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Term {
    Var(VarId),
    Const(Value),
    /// `_`: any value (in positive atoms), or "no value at all" inside a negation.
    Wildcard,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Atom {
    pub pred: PredId,
    pub args: Vec<Term>,
    /// `k` in `T-k`: the atom is read `k` time points in the past.
    pub offset: u32,
    pub span: Span,
}

/// The positions and values of the constants among `args`.
pub fn constants(args: &[Term]) -> Vec<(usize, Value)> {
    args.iter()
        .enumerate()
        .filter_map(|(i, t)| match t {
            Term::Const(c) => Some((i, *c)),
            Term::Var(_) | Term::Wildcard => None,
        })
        .collect()
}

/// Whether `row` has each of `constants` ([`constants`]) at its position: whether a fact
/// can match the atom they are of.
pub fn has_constants(row: &[Value], constants: &[(usize, Value)]) -> bool {
    constants.iter().all(|(i, c)| row.get(*i) == Some(c))
}

#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    Var(VarId),
    /// The rule's time variable used as a value.
    Time,
    Const(Value),
    Binary(ArithOp, Box<Expr>, Box<Expr>),
    Call(Func, Vec<Expr>),
}

impl Expr {
    /// Whether the time variable occurs in the expression.
    pub fn reads_time(&self) -> bool {
        match self {
            Expr::Time => true,
            Expr::Var(_) | Expr::Const(_) => false,
            Expr::Binary(_, lhs, rhs) => lhs.reads_time() || rhs.reads_time(),
            Expr::Call(_, args) => args.iter().any(Expr::reads_time),
        }
    }

    pub fn vars(&self, out: &mut Vec<VarId>) {
        match self {
            Expr::Var(v) => out.push(*v),
            Expr::Time | Expr::Const(_) => {}
            Expr::Binary(_, lhs, rhs) => {
                lhs.vars(out);
                rhs.vars(out);
            }
            Expr::Call(_, args) => args.iter().for_each(|a| a.vars(out)),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Positive(Atom),
    Negative(Atom),
    Compare {
        op: CmpOp,
        lhs: Expr,
        rhs: Expr,
        span: Span,
    },
    /// `var = expr` where nothing else binds `var`.
    Assign {
        var: VarId,
        expr: Expr,
        span: Span,
    },
}

impl Literal {
    pub fn span(&self) -> Span {
        match self {
            Literal::Positive(atom) | Literal::Negative(atom) => atom.span,
            Literal::Compare { span, .. } | Literal::Assign { span, .. } => *span,
        }
    }

    pub fn atom(&self) -> Option<&Atom> {
        match self {
            Literal::Positive(atom) | Literal::Negative(atom) => Some(atom),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    pub head: Atom,
    pub body: Vec<Literal>,
    /// Variable names, indexed by [`VarId`].
    pub vars: Vec<String>,
    pub origin: Origin,
    /// A counting rule (`h(G…, N, T) :- N = #count { C… : body }.`): its head holds, for
    /// each value of the other head variables that the body binds, the number of distinct
    /// values the body gives the counted variables. `None` for every other rule.
    pub count: Option<Count>,
}

/// What a counting rule counts (see [`Rule::count`]). The body's atoms are read like
/// negated ones: from lower strata or the past, so the count is complete when taken.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Count {
    /// The head variable that holds the count; no body literal mentions it.
    pub result: VarId,
    /// The variables whose distinct values are counted, in the order written.
    pub counted: Vec<VarId>,
}

impl Rule {
    /// Whether a positive atom starts the rule's bindings. A rule without one
    /// (`tick(T) :- 0 = 0.`, `p(T) :- not p(T-1).`) starts from the unit row instead, at
    /// every time point of the timeline, whether or not any input arrives.
    pub fn has_positive_atom(&self) -> bool {
        self.body
            .iter()
            .any(|literal| matches!(literal, Literal::Positive(_)))
    }

    /// Whether a comparison or an assignment reads the time as a value (`S = T * 10`,
    /// `T >= 2`): then the rule's results may change at every time point.
    pub fn reads_time(&self) -> bool {
        self.body.iter().any(|literal| match literal {
            Literal::Compare { lhs, rhs, .. } => lhs.reads_time() || rhs.reads_time(),
            Literal::Assign { expr, .. } => expr.reads_time(),
            Literal::Positive(_) | Literal::Negative(_) => false,
        })
    }
}

/// A tuple window of `size` atoms: the last `size` atoms of the stream in arrival order
/// (LARS's window, Def. 4 of the Laser paper: every atom of the stream counts), and with
/// `whole_points`, every other atom of the oldest one's time point too (Laser's reading:
/// which of a time point's atoms stay does not hang on their order in its line). At each
/// time point with stream atoms, the timeline driver gives `evict(I)` for each numbered
/// atom ([`Program::input_sequences`]) that leaves the window there (the atom numbered
/// I + `size` arrived, or with `whole_points` the last atom of I's time point), and,
/// where the program reads it (□), `start(U)`: the time point of the window's oldest atom.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TupleWindow {
    pub size: u32,
    pub evict: PredId,
    pub start: Option<PredId>,
    pub whole_points: bool,
}

/// A ground fact given in the program.
#[derive(Clone, Debug, PartialEq)]
pub struct Fact {
    pub pred: PredId,
    pub args: Vec<Value>,
    pub time: u64,
    pub span: Span,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct Program {
    pub predicates: Vec<Predicate>,
    pub rules: Vec<Rule>,
    pub facts: Vec<Fact>,
    /// Predicates named by `#output`, in order; `None` when the program has no `#output`.
    pub outputs: Option<Vec<PredId>>,
    /// Span of each `#output` name, for the unknown-predicate warning.
    pub output_spans: Vec<Span>,
    /// Names that a stream's facts are read under other than the predicates' own: facts
    /// of the name go to the predicate given, or are not read (`None`). A front end's way
    /// to keep input apart from what rules derive (LARS: the stream's atoms of a rule
    /// head's predicate are read by the rules, but only derived atoms are printed).
    pub input_names: Vec<(String, Option<PredId>)>,
    /// Predicates whose stream facts are also numbered: each fact of the first, read from
    /// a stream, also gives at its time a fact of the second with its arrival number among
    /// all the stream's atoms (from 1, in stream order: time, then source, then line; the
    /// atoms of every predicate count, those the program does not know too), its time,
    /// then its arguments (LARS tuple windows: the last n atoms of the stream).
    pub input_sequences: Vec<(PredId, PredId)>,
    /// LARS tuple windows by size, with what the timeline driver gives at each time point
    /// with stream atoms (see [`TupleWindow`]). Where there are any, the stream's atoms that
    /// no predicate takes (unknown names, other arities) are counted, not only skipped.
    pub tuple_windows: Vec<TupleWindow>,
    /// Predicates a front end made to pass facts through (a union of others: LARS's
    /// `h__read`), with the name explanations show for them: `explain` shows the fact a
    /// passing one came from instead of the step through it.
    pub passes_through: Vec<(PredId, String)>,
    /// Predicates the lowering made (`#count`'s), left out of the output when the program
    /// has no `#output`.
    pub hidden: Vec<PredId>,
}

impl Program {
    pub fn pred_id(&self, name: &str) -> Option<PredId> {
        self.predicates.iter().position(|p| p.name == name)
    }

    pub fn pred_name(&self, pred: PredId) -> &str {
        self.predicates.get(pred).map_or("?", |p| p.name.as_str())
    }

    /// Adds a predicate (or returns the existing id of that name).
    pub fn intern_pred(&mut self, name: &str, arity: usize, span: Span) -> PredId {
        self.pred_id(name).unwrap_or_else(|| {
            self.predicates.push(Predicate {
                name: name.to_owned(),
                arity,
                span,
            });
            self.predicates.len() - 1
        })
    }

    /// Whether some rule has `pred` in its head.
    pub fn is_derived(&self, pred: PredId) -> bool {
        self.rules.iter().any(|r| r.head.pred == pred)
    }

    /// Whether each predicate is derived ([`Program::is_derived`] for all at once).
    pub fn derived(&self) -> Vec<bool> {
        let mut derived = vec![false; self.predicates.len()];
        for rule in &self.rules {
            if let Some(slot) = derived.get_mut(rule.head.pred) {
                *slot = true;
            }
        }
        derived
    }

    /// Whether facts of `pred` may come from outside the rules: from a stream (under the
    /// predicate's own name unless [`Program::input_names`] reads that name elsewhere,
    /// or under a name it reads into `pred`), as numbered stream atoms
    /// ([`Program::input_sequences`]), or from the program's own facts.
    pub fn takes_input(&self, pred: PredId) -> bool {
        let Some(predicate) = self.predicates.get(pred) else {
            return false;
        };
        let renamed = (self.input_names.iter()).any(|(name, _)| *name == predicate.name);
        let read_into = (self.input_names.iter()).any(|(_, target)| *target == Some(pred));
        !renamed
            || read_into
            || self
                .input_sequences
                .iter()
                .any(|&(_, numbered)| numbered == pred)
            || self.facts.iter().any(|fact| fact.pred == pred)
    }

    /// The predicates to print: `#output` if given, else every predicate a rule defines.
    pub fn output_predicates(&self) -> Vec<PredId> {
        match &self.outputs {
            Some(outputs) => outputs.clone(),
            None => {
                let derived = self.derived();
                (0..self.predicates.len())
                    .filter(|&p| derived[p] && !self.hidden.contains(&p))
                    .collect()
            }
        }
    }

    /// Renders `rule` in TD syntax.
    pub fn display_rule<'a>(&'a self, rule: &'a Rule) -> RuleDisplay<'a> {
        RuleDisplay {
            program: self,
            rule,
        }
    }
}

/// `Display` for a rule, in TD syntax (assignments written `V := expr`).
#[derive(Debug)]
pub struct RuleDisplay<'a> {
    program: &'a Program,
    rule: &'a Rule,
}

impl RuleDisplay<'_> {
    fn atom(&self, f: &mut fmt::Formatter<'_>, atom: &Atom) -> fmt::Result {
        write!(f, "{}(", self.program.pred_name(atom.pred))?;
        for arg in &atom.args {
            match arg {
                Term::Var(v) => write!(f, "{}, ", self.var(*v))?,
                Term::Const(value) => write!(f, "{value}, ")?,
                Term::Wildcard => f.write_str("_, ")?,
            }
        }
        if atom.offset == 0 {
            f.write_str("T)")
        } else {
            write!(f, "T-{})", atom.offset)
        }
    }

    fn var(&self, v: VarId) -> &str {
        self.rule.vars.get(v).map_or("?", String::as_str)
    }

    fn expr(&self, f: &mut fmt::Formatter<'_>, expr: &Expr, outer: u8, right: bool) -> fmt::Result {
        match expr {
            Expr::Var(v) => f.write_str(self.var(*v)),
            Expr::Time => f.write_str("T"),
            Expr::Const(value) => write!(f, "{value}"),
            Expr::Binary(op, lhs, rhs) => {
                let p = op.precedence();
                let parens = p < outer || (right && p == outer);
                if parens {
                    f.write_str("(")?;
                }
                self.expr(f, lhs, p, false)?;
                write!(f, " {op} ")?;
                self.expr(f, rhs, p, true)?;
                if parens {
                    f.write_str(")")?;
                }
                Ok(())
            }
            Expr::Call(func, args) => {
                write!(f, "{}(", func.name())?;
                for (i, arg) in args.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    self.expr(f, arg, 0, false)?;
                }
                f.write_str(")")
            }
        }
    }
}

impl fmt::Display for RuleDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.atom(f, &self.rule.head)?;
        if let Some(count) = &self.rule.count {
            let counted: Vec<&str> = count.counted.iter().map(|&v| self.var(v)).collect();
            write!(
                f,
                " :- {} = #count {{ {} : ",
                self.var(count.result),
                counted.join(", ")
            )?;
        }
        for (i, literal) in self.rule.body.iter().enumerate() {
            let open = if self.rule.count.is_some() {
                ""
            } else {
                " :- "
            };
            f.write_str(if i == 0 { open } else { ", " })?;
            match literal {
                Literal::Positive(atom) => self.atom(f, atom)?,
                Literal::Negative(atom) => {
                    f.write_str("not ")?;
                    self.atom(f, atom)?;
                }
                Literal::Compare { op, lhs, rhs, .. } => {
                    self.expr(f, lhs, 0, false)?;
                    write!(f, " {op} ")?;
                    self.expr(f, rhs, 0, false)?;
                }
                Literal::Assign { var, expr, .. } => {
                    write!(f, "{} := ", self.var(*var))?;
                    self.expr(f, expr, 0, false)?;
                }
            }
        }
        if self.rule.count.is_some() {
            f.write_str(" }")?;
        }
        f.write_str(".")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A predicate takes input under its own name unless the program reads that name
    /// elsewhere, and under a name read into it, as numbered atoms, or from the
    /// program's own facts.
    #[test]
    fn a_predicate_takes_input_unless_its_name_is_read_elsewhere() {
        let mut program = Program::default();
        let p = program.intern_pred("p", 1, Span::default());
        let q = program.intern_pred("q", 1, Span::default());
        let n = program.intern_pred("n", 2, Span::default());
        assert!(program.takes_input(p) && program.takes_input(q));
        program.input_names = vec![("q".to_owned(), None), ("n".to_owned(), None)];
        assert!(program.takes_input(p));
        assert!(!program.takes_input(q) && !program.takes_input(n));
        program.input_names.push(("q_in".to_owned(), Some(q)));
        assert!(program.takes_input(q));
        program.input_sequences = vec![(p, n)];
        assert!(program.takes_input(n));
        program.input_sequences.clear();
        program.facts.push(Fact {
            pred: n,
            args: vec![Value::Int(1)],
            time: 0,
            span: Span::default(),
        });
        assert!(program.takes_input(n));
        assert!(!program.takes_input(PredId::MAX), "no such predicate");
    }
}
