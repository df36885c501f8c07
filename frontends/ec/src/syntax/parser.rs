//! Operator-precedence parsing of Prolog clauses, recovering at the next clause end.

use stgflow_lang::diag::{Diagnostic, Diagnostics, FileId};

use super::lexer::{Tok, Token, lex};
use super::{BinOp, Clause, Consult, Name, Term};
use crate::codes::Code;

/// Parses RTEC clauses. Returns every clause that parsed, the files its directives load,
/// and a diagnostic per error.
pub fn parse(file: FileId, text: &str) -> Parsed {
    let (tokens, mut diagnostics) = lex(file, text);
    let mut parser = Parser { tokens, pos: 0 };
    let mut clauses = Vec::new();
    let mut consults = Vec::new();
    while parser.peek().tok != Tok::Eof {
        if parser.peek().tok == Tok::If {
            match parser.directive() {
                Ok(loads) => consults.extend(loads),
                Err(diagnostic) => diagnostics.push(diagnostic),
            }
            continue;
        }
        match parser.clause() {
            Ok(clause) => clauses.push(clause),
            Err(diagnostic) => {
                diagnostics.push(diagnostic);
                parser.recover();
            }
        }
    }
    Parsed {
        clauses,
        consults,
        diagnostics,
    }
}

/// What [`parse`] read from a file.
#[derive(Debug, Default)]
pub struct Parsed {
    pub clauses: Vec<Clause>,
    /// The files its directives load, in order.
    pub consults: Vec<Consult>,
    pub diagnostics: Diagnostics,
}

/// The Prolog directives that load files: `:- [File, …]`, and these with one file or a list.
const LOADERS: [&str; 3] = ["consult", "ensure_loaded", "include"];

type Parse<T> = Result<T, Diagnostic>;

/// Nesting deeper than this is reported instead of recursing further.
const MAX_DEPTH: usize = 64;

/// RTEC's interval manipulation (name and arity), which an application's files may define
/// again for Prolog (maritime's `compare.prolog`): stgflow reads these conditions itself.
const INTERVAL_PREDICATES: [(&str, usize); 6] = [
    ("union_all", 2),
    ("intersect_all", 2),
    ("relative_complement_all", 3),
    ("complement_all", 2),
    ("intDurGreater", 3),
    ("intDurLess", 3),
];

/// Priority of an argument: below the `,` operator.
const ARG: u16 = 999;

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> &Token {
        let last = self.tokens.len().saturating_sub(1);
        &self.tokens[self.pos.min(last)]
    }

    fn bump(&mut self) -> Token {
        let token = self.peek().clone();
        if token.tok != Tok::Eof {
            self.pos += 1;
        }
        token
    }

    fn recover(&mut self) {
        loop {
            match self.bump().tok {
                Tok::End | Tok::Eof => return,
                _ => {}
            }
        }
    }

    fn expected(&self, what: &str) -> Diagnostic {
        let token = self.peek();
        let mut diagnostic = Diagnostic::error(
            Code::E501,
            format!("expected {what}, found {}", token.tok.describe()),
        )
        .with_label(token.span, format!("expected {what} here"));
        if token.tok == Tok::Eof {
            diagnostic = diagnostic.with_help("every clause ends with `.`");
        } else if matches!(what, "`,` or `.`" | "`.`") && token.line_break_before {
            diagnostic = diagnostic
                .with_help("a clause ends with `.`; did you forget it on the line above?");
        }
        diagnostic
    }

    /// A Prolog directive (`:- dynamic initiatedAt/4.`): the files it loads (`:-
    /// ['areas.prolog'].`, `consult`, `ensure_loaded`, `include`), or skipped to its end
    /// with W503 for the declarations of Prolog's own bookkeeping and E501 for any other
    /// (it would run code).
    fn directive(&mut self) -> Result<Vec<Consult>, Diagnostic> {
        let start = self.bump().span;
        let loads = match &self.peek().tok {
            Tok::LBracket => true,
            Tok::Name(name) => {
                LOADERS.contains(&name.as_str())
                    && self.tokens.get(self.pos + 1).map(|t| &t.tok) == Some(&Tok::LParen)
            }
            _ => false,
        };
        if loads {
            let at = self.pos;
            if let Ok(term) = self.term(ARG, 0) {
                if self.peek().tok == Tok::End {
                    self.bump();
                    return consulted(&term);
                }
            }
            self.pos = at;
        }
        let name = match &self.peek().tok {
            Tok::Name(name) => Some(name.clone()),
            _ => None,
        };
        let end = loop {
            let token = self.bump();
            if matches!(token.tok, Tok::End | Tok::Eof) {
                break token.span;
            }
        };
        let span = start.to(end);
        Err(match name.as_deref() {
            Some(kind @ ("dynamic" | "discontiguous" | "multifile" | "use_module")) => {
                Diagnostic::warning(Code::W503, format!("the Prolog directive `:- {kind} …` is ignored"))
                    .with_label(span, "Prolog's bookkeeping, which ECDE does not need")
            }
            _ => Diagnostic::error(Code::E501, "a Prolog directive is not part of ECDE")
                .with_label(span, "code Prolog runs when it loads the file")
                .with_help("give the files it would load as more program files, after the event description"),
        })
    }

    fn clause(&mut self) -> Parse<Clause> {
        let start = self.peek().span;
        let head = self.term(ARG, 0)?;
        if let Some((name, args)) = head.functor()
            && self.peek().tok == Tok::If
            && INTERVAL_PREDICATES.contains(&(name.text.as_str(), args.len()))
        {
            // The caller skips the body, which may be any Prolog (maritime's
            // `compare.prolog` defines them with `findall` and `->`).
            return Err(Diagnostic::warning(
                Code::W508,
                format!(
                    "this definition of `{}/{}` is not read",
                    name.text,
                    args.len()
                ),
            )
            .with_label(head.span(), "a predicate of RTEC's interval manipulation")
            .with_note(match name.text.as_str() {
                "intDurLess" => {
                    "stgflow reads RTEC's interval manipulation itself; this one it does not read yet (E507 where a rule uses it)"
                }
                "intDurGreater" => {
                    "stgflow reads it itself as the last operation of a holdsFor rule, as RTEC's maritime helpers define it (an interval still open at the end measured up to the last time point)"
                }
                _ => "stgflow reads it itself where it is a condition of a holdsFor rule, as RTEC defines it",
            }));
        }
        let mut body = Vec::new();
        if self.peek().tok == Tok::If {
            self.bump();
            body.push(self.term(ARG, 0)?);
            while self.peek().tok == Tok::Comma {
                self.bump();
                body.push(self.term(ARG, 0)?);
            }
        }
        match self.peek().tok {
            Tok::End => {
                let end = self.bump();
                Ok(Clause {
                    head,
                    body,
                    span: start.to(end.span),
                })
            }
            Tok::Op(";") | Tok::Op("->") | Tok::Op("|") => {
                let token = self.peek().clone();
                Err(Diagnostic::error(
                    Code::E501,
                    format!("{} is not supported", token.tok.describe()),
                )
                .with_label(
                    token.span,
                    "disjunction and if-then-else are not part of ECDE",
                )
                .with_help("write one rule per alternative"))
            }
            _ if body.is_empty() => Err(self.expected("`:-` or `.`")),
            _ => Err(self.expected("`,` or `.`")),
        }
    }

    /// A term whose operators bind at priority `max` or tighter.
    fn term(&mut self, max: u16, depth: usize) -> Parse<Term> {
        if depth > MAX_DEPTH {
            return Err(Diagnostic::error(Code::E501, "term nested too deeply")
                .with_label(self.peek().span, "here"));
        }
        let mut lhs = self.prefix(max, depth)?;
        let mut left_priority = 0;
        loop {
            let (op, text) = match &self.peek().tok {
                Tok::Op(text) => match BinOp::from_op(text) {
                    Some(op) => (op, *text),
                    None => return Ok(lhs),
                },
                Tok::Name(name) if name == "is" => (BinOp::Is, "is"),
                Tok::Name(name) if name == "mod" => (BinOp::Mod, "mod"),
                _ => return Ok(lhs),
            };
            let priority = op.priority();
            if priority > max {
                return Ok(lhs);
            }
            // Comparisons do not chain (xfx); arithmetic is left-associative (yfx).
            if priority == 700 && left_priority == 700 {
                let token = self.peek().clone();
                return Err(Diagnostic::error(
                    Code::E501,
                    format!("comparison `{text}` after another comparison"),
                )
                .with_label(token.span, "comparisons do not chain")
                .with_help("split it in two: `A < B, B < C`"));
            }
            self.bump();
            let rhs_max = if priority == 700 { 699 } else { priority - 1 };
            let rhs = self.term(rhs_max, depth + 1)?;
            let span = lhs.span().to(rhs.span());
            lhs = Term::Binary(op, Box::new(lhs), Box::new(rhs), span);
            left_priority = priority;
        }
    }

    fn prefix(&mut self, max: u16, depth: usize) -> Parse<Term> {
        let token = self.peek().clone();
        let is_not = match &token.tok {
            Tok::Op("\\+") => true,
            Tok::Name(name) if name == "not" => !matches!(
                self.tokens.get(self.pos + 1).map(|t| &t.tok),
                Some(Tok::LParen)
            ),
            _ => false,
        };
        if is_not {
            self.bump();
            let inner = self.term(max.min(900), depth + 1)?;
            let span = token.span.to(inner.span());
            return Ok(Term::Not(Box::new(inner), span));
        }
        if token.tok == Tok::Op("-") {
            self.bump();
            let operand = self.prefix(200, depth + 1)?;
            let span = token.span.to(operand.span());
            return Ok(match operand {
                Term::Int(i, _) if i.checked_neg().is_some() => Term::Int(-i, span),
                Term::Float(x, _) => Term::Float(-x, span),
                other => Term::Binary(
                    BinOp::Sub,
                    Box::new(Term::Int(0, token.span)),
                    Box::new(other),
                    span,
                ),
            });
        }
        self.primary(depth)
    }

    fn primary(&mut self, depth: usize) -> Parse<Term> {
        let token = self.bump();
        match token.tok {
            Tok::Var(text) => Ok(Term::Var(Name {
                text,
                span: token.span,
            })),
            Tok::Int(i) => Ok(Term::Int(i, token.span)),
            Tok::Float(x) => Ok(Term::Float(x, token.span)),
            Tok::Str(text) => Ok(Term::Str(text, token.span)),
            Tok::Name(text) => {
                let name = Name {
                    text,
                    span: token.span,
                };
                if self.peek().tok != Tok::LParen {
                    return Ok(Term::Atom(name));
                }
                self.bump();
                let (args, close) = self.sequence(Tok::RParen, "`,` or `)`", depth)?;
                let span = name.span.to(close);
                if args.is_empty() {
                    return Err(Diagnostic::error(
                        Code::E501,
                        format!("`{}()` has no arguments", name.text),
                    )
                    .with_label(span, "empty argument list")
                    .with_help(format!("write `{}` without parentheses", name.text)));
                }
                Ok(Term::Compound(name, args, span))
            }
            Tok::LParen => {
                let inner = self.term(1200, depth + 1)?;
                if self.peek().tok == Tok::Comma {
                    // `(A, B, …)`: Prolog's conjunction (or pair), the term `','(A, B, …)`.
                    self.bump();
                    let (mut rest, close) = self.sequence(Tok::RParen, "`,` or `)`", depth)?;
                    let mut items = vec![inner];
                    items.append(&mut rest);
                    let comma = Name {
                        text: ",".to_owned(),
                        span: token.span,
                    };
                    return Ok(Term::Compound(comma, items, token.span.to(close)));
                }
                if self.peek().tok != Tok::RParen {
                    return Err(self.expected("`)`"));
                }
                self.bump();
                Ok(inner)
            }
            Tok::LBracket => {
                let (items, close) = self.sequence(Tok::RBracket, "`,` or `]`", depth)?;
                Ok(Term::List(items, token.span.to(close)))
            }
            // The cut: the model accepts it in RTEC's optimisation checks only.
            Tok::Op("!") => Ok(Term::Atom(Name {
                text: "!".to_owned(),
                span: token.span,
            })),
            // An operator as an argument, an atom (`compare(>, D, 2)`).
            Tok::Op(op) if matches!(self.peek().tok, Tok::Comma | Tok::RParen) => {
                Ok(Term::Atom(Name {
                    text: op.to_owned(),
                    span: token.span,
                }))
            }
            tok => {
                self.pos -= usize::from(tok != Tok::Eof);
                Err(self.expected("a term"))
            }
        }
    }

    /// Comma-separated terms up to `close` (which may come at once).
    fn sequence(
        &mut self,
        close: Tok,
        what: &str,
        depth: usize,
    ) -> Parse<(Vec<Term>, stgflow_lang::diag::Span)> {
        let mut items = Vec::new();
        if self.peek().tok == close {
            return Ok((items, self.bump().span));
        }
        loop {
            items.push(self.term(ARG, depth + 1)?);
            match &self.peek().tok {
                Tok::Comma => {
                    self.bump();
                }
                tok if *tok == close => return Ok((items, self.bump().span)),
                _ => return Err(self.expected(what)),
            }
        }
    }
}

/// The files a loading directive's term names: a list of file names, or a loader
/// (`consult(F)`, …) of one name or of a list.
fn consulted(term: &Term) -> Result<Vec<Consult>, Diagnostic> {
    let files = match term {
        Term::Compound(name, args, _) if LOADERS.contains(&name.text.as_str()) => {
            match args.as_slice() {
                [Term::List(items, _)] => items.as_slice(),
                one => one,
            }
        }
        Term::List(items, _) => items.as_slice(),
        other => std::slice::from_ref(other),
    };
    files
        .iter()
        .map(|file| match file {
            Term::Atom(name) => Ok(Consult {
                path: name.text.clone(),
                span: name.span,
            }),
            Term::Str(path, span) => Ok(Consult {
                path: path.clone(),
                span: *span,
            }),
            other => Err(
                Diagnostic::error(Code::E501, format!("`{other}` is not a file name")).with_label(
                    other.span(),
                    "expected a quoted file name, as in `:- ['areas.prolog'].`",
                ),
            ),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> Vec<Clause> {
        let Parsed {
            clauses,
            diagnostics,
            ..
        } = parse(0, text);
        assert!(!diagnostics.has_errors(), "{diagnostics:?}");
        clauses
    }

    #[test]
    fn rules_facts_lists_and_operators() {
        let clauses = parse_ok(
            "initiatedAt(f(X)=v, T) :- happensAt(e(X), T), \\+ holdsAt(g(X)=true, T), D is X*2+1, D =< 3.\n\
             fi(f(X)=v, f(X)=w, 3).\n\
             holdsFor(h(X)=true, I) :- holdsFor(g(X)=true, I1), union_all([I1, I1], I).\n",
        );
        let printed: Vec<String> = clauses
            .iter()
            .map(|c| {
                let body: Vec<String> = c.body.iter().map(ToString::to_string).collect();
                format!("{} :- {}", c.head, body.join(", "))
            })
            .collect();
        assert_eq!(
            printed,
            [
                "initiatedAt(f(X)=v, T) :- happensAt(e(X), T), \\+ holdsAt(g(X)=true, T), D is X*2+1, D=<3",
                "fi(f(X)=v, f(X)=w, 3) :- ",
                "holdsFor(h(X)=true, I) :- holdsFor(g(X)=true, I1), union_all([I1, I1], I)",
            ]
        );
    }

    #[test]
    fn recovers_and_reports_every_error() {
        let Parsed {
            clauses,
            diagnostics,
            ..
        } = parse(0, "p(X Y).\nok(a).\nq :- a ; b.\nr(X :- a.\n");
        assert_eq!(clauses.len(), 1);
        assert_eq!(diagnostics.0.len(), 3);
    }

    #[test]
    fn the_cut_is_a_term_for_the_model_to_judge() {
        let Parsed {
            clauses,
            diagnostics,
            ..
        } = parse(0, "r :- a, !, b.\n");
        assert!(!diagnostics.has_errors());
        let body: Vec<String> = clauses[0].body.iter().map(|t| t.to_string()).collect();
        assert_eq!(body, ["a", "!", "b"]);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let text = format!("p({}1{}).", "(".repeat(10_000), ")".repeat(10_000));
        assert!(parse(0, &text).diagnostics.has_errors());
        let text = format!("p({}).", "f(".repeat(10_000));
        assert!(parse(0, &text).diagnostics.has_errors());
    }

    #[test]
    fn prolog_directives_load_files_or_are_skipped_with_a_warning_or_an_error() {
        let text = ":- dynamic initiatedAt/4, holdsForSDFluent/2.\n\
                    initially(f=a).\n\
                    :- ['./areas/ports.prolog', \"b.pl\"].\n\
                    :- consult(c).\n\
                    :- ensure_loaded([d, 'e f']).\n\
                    :- initialization(main).\n\
                    :- [X].\n\
                    initially(g=b).\n";
        let Parsed {
            clauses,
            consults,
            diagnostics,
        } = parse(0, text);
        // The clauses after each directive are read.
        assert_eq!(clauses.len(), 2, "{clauses:?}");
        let paths: Vec<&str> = consults.iter().map(|c| c.path.as_str()).collect();
        assert_eq!(paths, ["./areas/ports.prolog", "b.pl", "c", "d", "e f"]);
        assert_eq!(
            &text[consults[0].span.start..consults[0].span.end],
            "'./areas/ports.prolog'"
        );
        let found: Vec<(&str, bool)> = diagnostics.iter().map(|d| (d.code, d.is_error())).collect();
        assert_eq!(found, [("W503", false), ("E501", true), ("E501", true)]);
    }

    #[test]
    fn a_parenthesised_conjunction_is_one_term_and_an_operator_may_be_an_argument() {
        let clauses = parse_ok("p((a, B, 1), >) :- compare(>, B, 2).\n");
        assert_eq!(clauses.len(), 1);
        assert_eq!(clauses[0].head.to_string(), "p(,(a, B, 1), >)");
        assert_eq!(clauses[0].body[0].to_string(), "compare(>, B, 2)");
    }
}
