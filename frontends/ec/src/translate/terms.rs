//! EC terms and conditions as TD atoms and literals, and the names of the predicates the
//! translation adds for a fluent.

use stgflow_lang::diag::{Diagnostic, Span};
use stgflow_lang::syntax::ast;
use stgflow_lang::value::Value;

use super::Generator;
use super::names::Names;
use crate::codes::Code;
pub(super) use crate::model::expr_vars;
use crate::model::{Arg, Cond, EventTerm, FluentTerm, Happening, Reads, ident};

/// Ends the user's name in a predicate the translation invents for it (`f` and `_i` in
/// `f_i`): [`super::naming::resolve`] makes each such name one that no name of the
/// description takes, the plain `f_i` wherever it is free.
pub(super) const INVENTED: char = '\u{1}';

/// The predicate the translation invents for the user's `name` with `suffix` (`_i`,
/// `__grounded`, …), marked as invented (see [`INVENTED`]).
pub(super) fn invented(name: &str, suffix: &str) -> String {
    format!("{name}{INVENTED}{suffix}")
}

/// The TD predicate of a split fluent's simple values.
pub(super) fn simple_part(name: &str) -> String {
    invented(name, "__simple")
}

/// The TD predicate of the instances of a fluent-value pair that RTEC's `grounding`
/// declarations make exist.
pub(super) fn grounded_pred(name: &str) -> String {
    invented(name, "__grounded")
}

pub(super) fn var(name: &str, span: Span) -> ast::Expr {
    ast::Expr::Var(ast::Ident {
        name: name.to_owned(),
        span,
    })
}

/// `T` or `T-k`.
pub(super) fn at(time: &ast::Expr, k: u32, span: Span) -> ast::Expr {
    if k == 0 {
        return time.clone();
    }
    ast::Expr::Binary(
        ast::ArithOp::Sub,
        Box::new(time.clone()),
        Box::new(ast::Expr::Const(Value::Int(i64::from(k)), span)),
        span,
    )
}

pub(super) fn arg_expr(arg: &Arg) -> ast::Expr {
    match arg {
        Arg::Var(name) => ast::Expr::Var(ident(name)),
        Arg::Const(value, span) => ast::Expr::Const(*value, *span),
    }
}

pub(super) fn atom(
    pred: String,
    mut args: Vec<ast::Expr>,
    time: ast::Expr,
    span: Span,
) -> ast::Atom {
    args.push(time);
    ast::Atom {
        predicate: ast::Ident { name: pred, span },
        args,
        span,
    }
}

/// `f<suffix>(args…, value, time)` for a fluent term.
pub(super) fn fluent_atom(fluent: &FluentTerm, suffix: &str, time: ast::Expr) -> ast::Atom {
    let mut args: Vec<ast::Expr> = fluent.args.iter().map(arg_expr).collect();
    args.push(arg_expr(&fluent.value));
    let name = match suffix {
        "" => fluent.name.text.clone(),
        _ => invented(&fluent.name.text, suffix),
    };
    atom(name, args, time, fluent.span)
}

/// `e(args…, time)` for an event term (or a background atom, which has the same form).
pub(super) fn event_atom(event: &EventTerm, time: ast::Expr) -> ast::Atom {
    atom(
        event.name.text.clone(),
        event.args.iter().map(arg_expr).collect(),
        time,
        event.span,
    )
}

pub(super) fn vars_of(fluent: &FluentTerm, out: &mut Vec<String>) {
    args_vars(
        fluent.args.iter().chain(std::iter::once(&fluent.value)),
        out,
    );
}

/// The variables of an event's or a background atom's arguments, each once.
pub(super) fn atom_vars(atom: &EventTerm, out: &mut Vec<String>) {
    args_vars(atom.args.iter(), out);
}

fn args_vars<'a>(args: impl Iterator<Item = &'a Arg>, out: &mut Vec<String>) {
    for arg in args {
        if let Arg::Var(name) = arg {
            if !out.contains(&name.text) {
                out.push(name.text.clone());
            }
        }
    }
}

/// A variable name not used by `taken`.
pub(super) fn fresh(base: &str, taken: &[String]) -> String {
    let mut name = base.to_owned();
    while taken.contains(&name) {
        name.push('_');
    }
    name
}

impl Generator<'_> {
    /// The TD literals of `conds`; background knowledge is read at `time`.
    pub(super) fn body(&mut self, conds: &[Cond], time: &ast::Expr) -> Vec<ast::Literal> {
        let mut unknown = Vec::new();
        let body = body_literals(self.names, conds, time, &mut unknown);
        for fact in unknown {
            let mut diagnostic = Diagnostic::error(
                Code::E506,
                format!(
                    "`{}/{}` is not a condition of a time-point rule",
                    fact.name.text,
                    fact.args.len()
                ),
            )
            .with_label(
                fact.span,
                "expected happensAt(E, T), holdsAt(F=V, T), background knowledge or a comparison",
            )
            .with_note("no background fact or rule defines it");
            let known = self.names.background.iter().map(|(n, _)| n.as_str());
            if let Some(close) =
                crate::model::closest(&fact.name.text, known.chain(["happensAt", "holdsAt"]))
            {
                diagnostic = diagnostic.with_help(format!("did you mean `{close}`?"));
            }
            self.out.diagnostics.push(diagnostic);
        }
        body
    }
}

/// The TD literals of `conds` (see [`Generator::body`]); the background atoms that name
/// no background knowledge go to `unknown`.
fn body_literals(
    names: &Names,
    conds: &[Cond],
    time: &ast::Expr,
    unknown: &mut Vec<EventTerm>,
) -> Vec<ast::Literal> {
    conds
        .iter()
        .flat_map(|cond| match cond {
            Cond::Happens {
                negated,
                what,
                time,
                span,
            } => {
                let atom = match what {
                    Happening::Event(event) => event_atom(event, time.clone()),
                    Happening::Start(fluent) | Happening::StartI(fluent) => {
                        fluent_atom(fluent, "_start", time.clone())
                    }
                    Happening::End(fluent) => fluent_atom(fluent, "_end", time.clone()),
                };
                vec![literal(*negated, atom, *span)]
            }
            Cond::Holds {
                negated,
                fluent,
                time,
                span,
                reads,
            } => {
                let suffix = match reads {
                    Reads::Holds => "",
                    // See `Generator::cyclic_initiations`.
                    Reads::Initiated => "_ci",
                    Reads::Terminated => "_t",
                };
                vec![literal(
                    *negated,
                    fluent_atom(fluent, suffix, time.clone()),
                    *span,
                )]
            }
            Cond::Builtin(builtin) => vec![ast::Literal::Builtin(builtin.clone())],
            Cond::Background {
                negated,
                atom: fact,
                span,
            } => {
                if !names.is_background(&fact.name.text, fact.args.len()) {
                    unknown.push(fact.clone());
                }
                if let Some(inlined) = names.pattern(fact, *negated, *span) {
                    return inlined;
                }
                vec![literal(*negated, event_atom(fact, time.clone()), *span)]
            }
            Cond::Count {
                result,
                counted,
                body,
                span,
            } => vec![ast::Literal::Count(ast::CountLit {
                result: crate::model::ident(result),
                counted: counted.iter().map(crate::model::ident).collect(),
                body: body_literals(names, body, time, unknown),
                span: *span,
            })],
        })
        .collect()
}

pub(super) fn same_value(a: &Arg, b: &Arg) -> bool {
    match (a, b) {
        (Arg::Const(x, _), Arg::Const(y, _)) => x == y,
        (Arg::Var(_), Arg::Var(_)) => true,
        _ => false,
    }
}

pub(super) fn literal(negated: bool, atom: ast::Atom, span: Span) -> ast::Literal {
    if negated {
        ast::Literal::Negative(atom, span)
    } else {
        ast::Literal::Positive(atom)
    }
}
