//! Laser's rule syntax: one rule per line, `head :- body`, literals joined by `and`.
//!
//! ```text
//! # comment lines start with '#'
//! q(A,B) :- time_win(10,0,1,diamond(p(A,B))) and not(s)
//! r(A,C) :- time_win(3,0,1,diamond(p(A,B))) and time_win(1,0,1,diamond(p(B,C)))
//! steam(V) :- time_win(0,0,1,diamond(temp(V))) and COMP(>=,V,100)
//! late(T,X) :- time_win(5,0,1,@(T,ping(X))) and MATH(+,U,T,1) and COMP(<,U,4)
//! ```
//!
//! Variables start upper-case (or `_`), predicates and symbolic constants lower-case or
//! in single quotes (`'p*2'`, `'http://ex.org/p#q'`); numbers are integers or floats,
//! optionally negative; `"quoted"` constants are symbols. A rule may end with `.`. Line
//! breaks end rules, so a rule cannot span lines.
//!
//! Besides plain LARS's windows, Laser's wider forms: `time_win(n,0,1, a)` over a bare
//! atom, `diamond(a)`, `box(a)` and `@(T, a)` outside a window, `@(3, a)` at a time point,
//! `not(a)` inside `diamond`/`box` (read as the dual negated), `@(T, h)` as a head, an
//! atom in parentheses, and tuple windows `tuple_win(n, m(a))` or `tuple_win(n,0,1,
//! m(a))` with m `diamond`, `box`, `@(T, …)` or none.
//!
//! The parser never panics and never stops at the first error: a malformed line is
//! reported (code E201, file:line:column, excerpt, hint) and parsing resumes at the next
//! line. Constructs not supported — nested modalities, `not` inside `@` or a tuple window
//! —
//! are recognised and rejected with E202 naming the construct.

use stgflow_lang::diag::{Diagnostic, Diagnostics, FileId, Span};
use stgflow_lang::syntax::ast::{ArithOp, CmpOp};
use stgflow_lang::syntax::scan::{self, Number, NumberError, UnknownEscape};
use stgflow_lang::value::Value;

use crate::ast::{Atom, Extended, Ident, Literal, Modality, Program, Rule, Term, Time};
use crate::codes::Code;

/// The largest window size accepted (`time_win(n,…)`): the literal translation of ⊞n♢
/// has n+1 rules.
pub const MAX_WINDOW: u32 = 100_000;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// Lower-case identifier.
    Ident(String),
    /// Upper-case identifier or `_…`.
    Var(String),
    Int(i64),
    Float(f64),
    Str(String),
    /// `'p*2'`, `'http://ex.org/p'`: a name (of a predicate or a constant) quoted.
    Quoted(String),
    LParen,
    RParen,
    Comma,
    Implies,
    At,
    Dot,
    /// `= != < <= > >= + - * /`
    Op(&'static str),
    /// A character that starts no token, or a malformed one (the message says which).
    Bad(String),
}

impl Tok {
    fn describe(&self) -> String {
        match self {
            Tok::Ident(s) | Tok::Var(s) => format!("`{s}`"),
            Tok::Int(i) => format!("`{i}`"),
            Tok::Float(x) => format!("`{x}`"),
            Tok::Str(s) => format!("\"{s}\""),
            Tok::Quoted(s) => format!("'{s}'"),
            Tok::LParen => "`(`".into(),
            Tok::RParen => "`)`".into(),
            Tok::Comma => "`,`".into(),
            Tok::Implies => "`:-`".into(),
            Tok::At => "`@`".into(),
            Tok::Dot => "`.`".into(),
            Tok::Op(op) => format!("`{op}`"),
            Tok::Bad(text) => text.clone(),
        }
    }
}

/// Lexes one line (without its newline); `base` is the line's byte offset in the file.
fn lex_line(file: FileId, line: &str, base: usize) -> Vec<(Tok, Span)> {
    let mut out = Vec::new();
    let bytes = line.as_bytes();
    let mut i = 0;
    while i < line.len() {
        let Some(c) = line[i..].chars().next() else {
            break;
        };
        let start = i;
        let span = |end: usize| Span::new(file, base + start..base + end);
        if c.is_whitespace() {
            i += c.len_utf8();
            continue;
        }
        if c == '#' {
            break;
        }
        let next = bytes.get(i + 1).copied();
        let (tok, end) = match c {
            '(' => (Tok::LParen, i + 1),
            ')' => (Tok::RParen, i + 1),
            ',' => (Tok::Comma, i + 1),
            '@' => (Tok::At, i + 1),
            '.' => (Tok::Dot, i + 1),
            ':' if next == Some(b'-') => (Tok::Implies, i + 2),
            '!' if next == Some(b'=') => (Tok::Op("!="), i + 2),
            '<' if next == Some(b'=') => (Tok::Op("<="), i + 2),
            '>' if next == Some(b'=') => (Tok::Op(">="), i + 2),
            '<' => (Tok::Op("<"), i + 1),
            '>' => (Tok::Op(">"), i + 1),
            '=' if next == Some(b'>') => (Tok::Op("=>"), i + 2),
            '=' if next == Some(b'<') => (Tok::Op("=<"), i + 2),
            '=' => (Tok::Op("="), i + 1),
            '+' => (Tok::Op("+"), i + 1),
            '*' => (Tok::Op("*"), i + 1),
            '/' => (Tok::Op("/"), i + 1),
            '-' if next.is_some_and(|b| b.is_ascii_digit()) => number(line, i),
            '-' => (Tok::Op("-"), i + 1),
            '0'..='9' => number(line, i),
            'a'..='z' | 'A'..='Z' | '_' => {
                let end = scan::word_end(line, i);
                let word = line[i..end].to_owned();
                if c.is_ascii_lowercase() {
                    (Tok::Ident(word), end)
                } else {
                    (Tok::Var(word), end)
                }
            }
            '"' => string(line, i, '"'),
            '\'' => match string(line, i, '\'') {
                (Tok::Str(name), end) => (Tok::Quoted(name), end),
                other => other,
            },
            other => (
                Tok::Bad(format!("`{}`", other.escape_debug())),
                i + other.len_utf8(),
            ),
        };
        out.push((tok, span(end)));
        i = end;
    }
    out
}

fn number(line: &str, start: usize) -> (Tok, usize) {
    let (end, value) = scan::number(line, start, false);
    let text = &line[start..end];
    let tok = match value {
        Ok(Number::Int(i)) => Tok::Int(i),
        Ok(Number::Float(x)) => Tok::Float(x),
        Err(NumberError::OutOfRange) => Tok::Bad(format!("the number `{text}`")),
        Err(NumberError::TooLarge) => {
            Tok::Bad(format!("the number `{text}`, too large for 64 bits"))
        }
    };
    (tok, end)
}

/// A string or a quoted name, from its opening `quote` to the closing one.
fn string(line: &str, start: usize, quote: char) -> (Tok, usize) {
    match scan::quoted(line, start, quote, UnknownEscape::Dropped) {
        (end, Ok(value)) => (Tok::Str(value), end),
        (_, Err(_)) => {
            let what = if quote == '"' {
                "an unterminated string"
            } else {
                "an unterminated quoted name"
            };
            (Tok::Bad(what.to_owned()), line.len())
        }
    }
}

/// Parses a LARS program. Never fails: returns every rule it could read and a diagnostic
/// for each malformed line.
pub fn parse(file: FileId, text: &str) -> (Program, Diagnostics) {
    let mut program = Program::default();
    let mut diagnostics = Diagnostics::default();
    let mut base = 0;
    let mut number = 0;
    for raw in text.split_inclusive('\n') {
        let line = raw.trim_end_matches(['\n', '\r']);
        let tokens = lex_line(file, line, base);
        let line_end = Span::new(file, base + line.len()..base + line.len());
        base += raw.len();
        if tokens.is_empty() {
            continue;
        }
        number += 1;
        let mut parser = LineParser {
            tokens: &tokens,
            pos: 0,
            line_end,
        };
        match parser.rule(number) {
            Ok(rule) => program.rules.push(rule),
            Err(diagnostic) => diagnostics.push(*diagnostic),
        }
    }
    (program, diagnostics)
}

type Parsed<T> = Result<T, Box<Diagnostic>>;

struct LineParser<'a> {
    tokens: &'a [(Tok, Span)],
    pos: usize,
    /// An empty span at the end of the line, for "found the end of the line".
    line_end: Span,
}

impl LineParser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.pos).map(|(t, _)| t)
    }

    fn peek_at(&self, ahead: usize) -> Option<&Tok> {
        self.tokens.get(self.pos + ahead).map(|(t, _)| t)
    }

    fn span(&self) -> Span {
        self.tokens.get(self.pos).map_or(self.line_end, |(_, s)| *s)
    }

    fn prev_span(&self) -> Span {
        self.pos
            .checked_sub(1)
            .and_then(|i| self.tokens.get(i))
            .map_or(self.line_end, |(_, s)| *s)
    }

    fn found(&self) -> String {
        self.peek()
            .map_or_else(|| "the end of the line".to_owned(), Tok::describe)
    }

    fn expected(&self, what: &str) -> Box<Diagnostic> {
        let found = self.found();
        let mut diagnostic =
            Diagnostic::error(Code::E201, format!("expected {what}, found {found}"))
                .with_label(self.span(), format!("expected {what}"));
        if let Some(Tok::Bad(_)) = self.peek() {
            diagnostic =
                diagnostic.with_note("LARS rules use identifiers, numbers, `( ) , @ :-` and the operators of COMP and MATH");
        }
        Box::new(diagnostic)
    }

    fn eat(&mut self, tok: &Tok) -> bool {
        if self.peek() == Some(tok) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: &Tok, what: &str) -> Parsed<Span> {
        if self.eat(tok) {
            Ok(self.prev_span())
        } else {
            Err(self.expected(what))
        }
    }

    fn rule(&mut self, number: usize) -> Parsed<Rule> {
        let start = self.span();
        let (head, head_time) = self.head()?;
        if !self.eat(&Tok::Implies) {
            let mut diagnostic = self.expected("`:-`");
            if self.peek().is_none() {
                diagnostic = Box::new(diagnostic.with_help(
                    "a LARS rule is `head :- body` on one line; facts belong in the stream",
                ));
            }
            return Err(diagnostic);
        }
        let mut body = vec![self.literal()?];
        loop {
            match self.peek() {
                None => break,
                Some(Tok::Dot) if self.pos + 1 == self.tokens.len() => {
                    self.pos += 1;
                    break;
                }
                Some(Tok::Ident(word)) if word == "and" => {
                    self.pos += 1;
                    body.push(self.literal()?);
                }
                Some(Tok::Comma) => {
                    return Err(Box::new(
                        Diagnostic::error(Code::E201, "expected `and`, found `,`")
                            .with_label(self.span(), "literals are joined by `and`")
                            .with_help("write `a and b` for a conjunction, as Laser does"),
                    ));
                }
                Some(_) => return Err(self.expected("`and` or the end of the line")),
            }
        }
        let span = start.to(self.prev_span());
        Ok(Rule {
            number,
            head,
            head_time,
            body,
            span,
        })
    }

    /// The head: an atom, or `@(T, atom)`.
    fn head(&mut self) -> Parsed<(Atom, Option<Time>)> {
        match self.peek() {
            Some(Tok::At) => {
                self.pos += 1;
                let (time, atom) = self.at("a rule head")?;
                Ok((atom, Some(time)))
            }
            Some(Tok::Ident(word)) if is_operator_word(word) => Err(Box::new(
                Diagnostic::error(
                    Code::E202,
                    format!("`{word}` in a rule head is not supported"),
                )
                .with_label(self.span(), "the head must be an atom or `@(T, atom)`")
                .with_help("window operators and modalities belong in the body"),
            )),
            _ => Ok((self.atom()?, None)),
        }
    }

    /// `p(a,X)`, `'p*2'(X)`, `alarm`, or an atom in parentheses, `(p(X))`.
    fn atom(&mut self) -> Parsed<Atom> {
        if self.peek() == Some(&Tok::LParen) {
            self.pos += 1;
            let atom = self.atom()?;
            self.expect(&Tok::RParen, "`)`")?;
            return Ok(atom);
        }
        let name = match self.peek().cloned() {
            Some(Tok::Ident(name) | Tok::Quoted(name)) => name,
            _ => {
                let mut diagnostic = self.expected("an atom such as `p(a,X)`");
                if let Some(Tok::Var(_)) = self.peek() {
                    diagnostic = Box::new(diagnostic.with_help(
                        "predicate names start with a lower-case letter, or are quoted: `'P'(X)`",
                    ));
                }
                return Err(diagnostic);
            }
        };
        let predicate = Ident {
            name,
            span: self.span(),
        };
        self.pos += 1;
        let mut args = Vec::new();
        if self.eat(&Tok::LParen) && !self.eat(&Tok::RParen) {
            loop {
                args.push(self.term()?);
                if self.eat(&Tok::Comma) {
                    continue;
                }
                self.expect(&Tok::RParen, "`,` or `)`")?;
                break;
            }
        }
        let span = predicate.span.to(self.prev_span());
        Ok(Atom {
            predicate,
            args,
            span,
        })
    }

    fn term(&mut self) -> Parsed<Term> {
        let span = self.span();
        let term = match self.peek().cloned() {
            Some(Tok::Var(name)) => Term::Var(Ident { name, span }),
            Some(Tok::Ident(name) | Tok::Quoted(name) | Tok::Str(name)) => {
                Term::Const(Value::sym(&name), span)
            }
            Some(Tok::Int(i)) => Term::Const(Value::Int(i), span),
            Some(Tok::Float(x)) => Term::Const(Value::Float(x), span),
            _ => {
                let mut diagnostic = self.expected("a variable or a constant");
                if matches!(self.peek(), Some(Tok::Ident(_)))
                    || self.peek_at(1) == Some(&Tok::LParen)
                {
                    diagnostic = Box::new(diagnostic.with_note(
                        "arguments are variables or constants; nested terms are not plain LARS",
                    ));
                }
                return Err(diagnostic);
            }
        };
        self.pos += 1;
        if self.peek() == Some(&Tok::LParen) {
            return Err(Box::new(
                Diagnostic::error(Code::E202, "nested terms are not supported")
                    .with_label(span.to(self.span()), "a function term")
                    .with_note("arguments of LARS atoms are variables or constants"),
            ));
        }
        Ok(term)
    }

    fn literal(&mut self) -> Parsed<Literal> {
        let start = self.span();
        match self.peek().cloned() {
            Some(Tok::Ident(word)) if word == "not" && self.peek_at(1) == Some(&Tok::LParen) => {
                self.pos += 2;
                if let Some(Tok::Ident(inner)) = self.peek() {
                    if inner == "not" {
                        return Err(Box::new(
                            Diagnostic::error(
                                Code::E202,
                                "double negation `not(not(…))` is not supported",
                            )
                            .with_label(self.span(), "negation inside a negation")
                            .with_help("write the literal without both `not`s"),
                        ));
                    }
                }
                let (inner, negated) = self.extended()?;
                self.expect(&Tok::RParen, "`)` closing `not(`")?;
                let span = start.to(self.prev_span());
                Ok(if negated {
                    Literal::Positive(inner)
                } else {
                    Literal::Negative(inner, span)
                })
            }
            Some(Tok::Var(word)) if word == "COMP" && self.peek_at(1) == Some(&Tok::LParen) => {
                self.pos += 2;
                let op = self.comparison()?;
                self.expect(&Tok::Comma, "`,`")?;
                let lhs = self.term()?;
                self.expect(&Tok::Comma, "`,`")?;
                let rhs = self.term()?;
                self.expect(&Tok::RParen, "`)`")?;
                Ok(Literal::Compare {
                    op,
                    lhs,
                    rhs,
                    span: start.to(self.prev_span()),
                })
            }
            Some(Tok::Var(word)) if word == "MATH" && self.peek_at(1) == Some(&Tok::LParen) => {
                self.pos += 2;
                let op = self.arithmetic()?;
                self.expect(&Tok::Comma, "`,`")?;
                let result = self.term()?;
                self.expect(&Tok::Comma, "`,`")?;
                let lhs = self.term()?;
                self.expect(&Tok::Comma, "`,`")?;
                let rhs = self.term()?;
                self.expect(&Tok::RParen, "`)`")?;
                Ok(Literal::Math {
                    op,
                    result,
                    lhs,
                    rhs,
                    span: start.to(self.prev_span()),
                })
            }
            _ => {
                let (extended, negated) = self.extended()?;
                let span = start.to(self.prev_span());
                Ok(if negated {
                    Literal::Negative(extended, span)
                } else {
                    Literal::Positive(extended)
                })
            }
        }
    }

    fn comparison(&mut self) -> Parsed<CmpOp> {
        let op = match self.peek() {
            Some(Tok::Op("=")) => CmpOp::Eq,
            Some(Tok::Op("!=")) => CmpOp::Ne,
            Some(Tok::Op("<")) => CmpOp::Lt,
            Some(Tok::Op("<=")) => CmpOp::Le,
            Some(Tok::Op(">")) => CmpOp::Gt,
            Some(Tok::Op(">=")) => CmpOp::Ge,
            Some(Tok::Op(swapped @ ("=>" | "=<"))) => {
                let meant = if *swapped == "=>" { ">=" } else { "<=" };
                return Err(Box::new(
                    self.expected("a comparison (`=`, `!=`, `<`, `<=`, `>`, `>=`)")
                        .with_help(format!("did you mean `{meant}`?")),
                ));
            }
            _ => {
                return Err(Box::new(
                    self.expected("a comparison (`=`, `!=`, `<`, `<=`, `>`, `>=`)")
                        .with_help("COMP(op, X, Y) holds when X op Y"),
                ));
            }
        };
        self.pos += 1;
        Ok(op)
    }

    fn arithmetic(&mut self) -> Parsed<ArithOp> {
        let op = match self.peek() {
            Some(Tok::Op("+")) => ArithOp::Add,
            Some(Tok::Op("-")) => ArithOp::Sub,
            Some(Tok::Op("*")) => ArithOp::Mul,
            Some(Tok::Op("/")) => ArithOp::Div,
            _ => {
                return Err(Box::new(
                    self.expected("an arithmetic operator (`+`, `-`, `*`, `/`)")
                        .with_help("MATH(op, R, X, Y) holds when R = X op Y"),
                ));
            }
        };
        self.pos += 1;
        Ok(op)
    }

    /// `@(T, a)` after the `@`, with T a time variable or a time point; `place` names
    /// where it stands, for errors.
    fn at(&mut self, place: &str) -> Parsed<(Time, Atom)> {
        self.expect(&Tok::LParen, "`(` after `@`")?;
        let time = match self.peek().cloned() {
            Some(Tok::Var(name)) if name != "_" => Time::Var(Ident {
                name,
                span: self.span(),
            }),
            Some(Tok::Int(t)) if t >= 0 => Time::Const(t as u64, self.span()),
            _ => {
                return Err(Box::new(
                    self.expected("a time variable or a time point").with_help(
                        "`@(T, p(X))` binds the time variable `T` to a time point where p(X) holds; `@(3, p(X))` reads the time point 3",
                    ),
                ));
            }
        };
        self.pos += 1;
        self.expect(&Tok::Comma, "`,`")?;
        if matches!(self.peek(), Some(Tok::Ident(word)) if word == "not") {
            return Err(Box::new(
                Diagnostic::error(
                    Code::E202,
                    format!("`not` inside `@` in {place} is not supported"),
                )
                .with_label(self.span(), "a negation inside `@(…)`")
                .with_help("write `not(@(T, a))` in a rule body"),
            ));
        }
        self.no_operator_inside("@")?;
        let atom = self.atom()?;
        self.expect(&Tok::RParen, "`)`")?;
        Ok((time, atom))
    }

    /// Rejects a window or modality where only an atom may stand.
    fn no_operator_inside(&self, outer: &str) -> Parsed<()> {
        let nested = match self.peek() {
            Some(Tok::Ident(word)) if is_operator_word(word) => format!("`{word}`"),
            Some(Tok::At) => "`@`".to_owned(),
            _ => return Ok(()),
        };
        Err(Box::new(
            Diagnostic::error(
                Code::E202,
                format!("{nested} inside `{outer}(…)` is not supported"),
            )
            .with_label(self.span(), "nested operator")
            .with_note("a modality (`diamond`, `box`, `@`) applies to an atom or to `not(atom)`, inside a window or on its own"),
        ))
    }

    /// An extended atom, and whether it is negated inside (`time_win(2,0,1,diamond(not(a)))`
    /// is `not(time_win(2,0,1,box(a)))`).
    fn extended(&mut self) -> Parsed<(Extended, bool)> {
        let start = self.span();
        match self.peek().cloned() {
            Some(Tok::Ident(word))
                if word == "time_win" && self.peek_at(1) == Some(&Tok::LParen) =>
            {
                self.pos += 2;
                self.window(start)
            }
            Some(Tok::Ident(word))
                if word == "tuple_win" && self.peek_at(1) == Some(&Tok::LParen) =>
            {
                self.pos += 2;
                self.tuple_window(start)
            }
            _ => self.modality(start, None),
        }
    }

    /// What stands in a window of `size` (`None`: outside a window): `diamond(a)`,
    /// `box(a)`, `@(T,a)`, `a`, each over `not(a)` too (except `@`).
    fn modality(&mut self, start: Span, size: Option<u32>) -> Parsed<(Extended, bool)> {
        let window = |modality, atom, span| Extended::Window {
            size,
            modality,
            atom,
            span,
        };
        match self.peek().cloned() {
            Some(Tok::At) => {
                self.pos += 1;
                let place = if size.is_some() {
                    "a window"
                } else {
                    "a rule body"
                };
                let (time, atom) = self.at(place)?;
                Ok((
                    window(Modality::At(time), atom, start.to(self.prev_span())),
                    false,
                ))
            }
            Some(Tok::Ident(word))
                if (word == "diamond" || word == "box")
                    && self.peek_at(1) == Some(&Tok::LParen) =>
            {
                self.pos += 2;
                let negated = self.eat_not();
                self.no_operator_inside(&word)?;
                let atom = self.atom()?;
                if negated {
                    self.expect(&Tok::RParen, "`)` closing `not(`")?;
                }
                self.expect(&Tok::RParen, "`)`")?;
                // ♢¬a is ¬□a and □¬a is ¬♢a, over the same window.
                let modality = if (word == "diamond") != negated {
                    Modality::Diamond
                } else {
                    Modality::Box
                };
                Ok((window(modality, atom, start.to(self.prev_span())), negated))
            }
            Some(Tok::Ident(word))
                if word == "not" && size.is_some() && self.peek_at(1) == Some(&Tok::LParen) =>
            {
                self.pos += 2;
                let atom = self.atom()?;
                self.expect(&Tok::RParen, "`)` closing `not(`")?;
                Ok((Extended::Atom(atom), true))
            }
            Some(Tok::Ident(word)) if is_operator_word(&word) && size.is_some() => Err(Box::new(
                Diagnostic::error(
                    Code::E202,
                    format!("`{word}` inside a time window is not supported"),
                )
                .with_label(self.span(), "nested operator")
                .with_help(
                    "inside `time_win(n,0,1,…)` write `diamond(a)`, `box(a)`, `@(T,a)` or an atom",
                ),
            )),
            _ => Ok((Extended::Atom(self.atom()?), false)),
        }
    }

    /// `tuple_win(` already read: `tuple_win(n, m(a))` or `tuple_win(n,0,1, m(a))`, with m
    /// `diamond`, `@(T, …)` or none.
    fn tuple_window(&mut self, start: Span) -> Parsed<(Extended, bool)> {
        let size = match self.peek() {
            Some(Tok::Int(n)) if (1..=i64::from(MAX_WINDOW)).contains(n) => *n as u32,
            _ => {
                return Err(Box::new(
                    self.expected("a tuple window size (a positive integer)")
                        .with_note("`tuple_win(n, …)` holds the last n atoms of the stream"),
                ));
            }
        };
        self.pos += 1;
        self.expect(&Tok::Comma, "`,`")?;
        // Laser also writes `tuple_win(n,0,1, …)`.
        if matches!(self.peek(), Some(Tok::Int(0))) && self.peek_at(1) == Some(&Tok::Comma) {
            self.pos += 2;
            match self.peek() {
                Some(Tok::Int(1)) => self.pos += 1,
                _ => return Err(self.expected("`1` (the step of `tuple_win(n,0,1, …)`)")),
            }
            self.expect(&Tok::Comma, "`,`")?;
        }
        let inner = self.span();
        let (extended, negated) = self.modality(inner, Some(size))?;
        self.expect(&Tok::RParen, "`)` closing `tuple_win(`")?;
        let span = start.to(self.prev_span());
        let unsupported = |what: &str| {
            Err(Box::new(
                Diagnostic::error(
                    Code::E202,
                    format!("{what} in a tuple window is not supported"),
                )
                .with_label(span, "a tuple-based window")
                .with_note(
                    "inside `tuple_win(n, …)` write an atom, `diamond(a)`, `box(a)` or `@(T, a)`",
                ),
            ))
        };
        if negated {
            return unsupported("`not`");
        }
        let (modality, atom) = match extended {
            Extended::Atom(atom) => (None, atom),
            Extended::Window {
                modality: Modality::At(Time::Const(..)),
                ..
            } => return unsupported("`@` at a time point written as a number"),
            Extended::Window { modality, atom, .. } => (Some(modality), atom),
            Extended::Tuples { .. } => return unsupported("a tuple window"),
        };
        Ok((
            Extended::Tuples {
                size,
                modality,
                atom,
                span,
            },
            false,
        ))
    }

    /// Eats `not(` where it comes next.
    fn eat_not(&mut self) -> bool {
        let is_not = matches!(self.peek(), Some(Tok::Ident(word)) if word == "not")
            && self.peek_at(1) == Some(&Tok::LParen);
        if is_not {
            self.pos += 2;
        }
        is_not
    }

    /// `time_win(` already read.
    fn window(&mut self, start: Span) -> Parsed<(Extended, bool)> {
        let size_span = self.span();
        let size = match self.peek() {
            Some(Tok::Int(n)) if (0..=i64::from(MAX_WINDOW)).contains(n) => *n as u32,
            Some(Tok::Int(n)) => {
                return Err(Box::new(
                    Diagnostic::error(Code::E202, format!("window size {n} is out of range"))
                        .with_label(size_span, format!("not in 0..={MAX_WINDOW}"))
                        .with_note("the literal translation of a window of size n has n+1 rules or an (n+1)-way join"),
                ));
            }
            _ => return Err(self.expected("a window size (a non-negative integer)")),
        };
        self.pos += 1;
        for expected in [0, 1] {
            self.expect(&Tok::Comma, "`,`")?;
            let span = self.span();
            match self.peek() {
                Some(Tok::Int(n)) if *n == expected => self.pos += 1,
                Some(Tok::Int(n)) => {
                    let what = if expected == 0 { "end offset" } else { "step" };
                    return Err(Box::new(
                        Diagnostic::error(
                            Code::E202,
                            format!("time_win with {what} {n} is not supported"),
                        )
                        .with_label(span, format!("only {expected} is supported here"))
                        .with_note("only sliding windows over the last n time points, `time_win(n,0,1,…)`, are plain LARS time windows"),
                    ));
                }
                _ => return Err(self.expected("an integer")),
            }
        }
        self.expect(&Tok::Comma, "`,`")?;
        let inner = self.span();
        let (extended, negated) = self.modality(inner, Some(size))?;
        self.expect(&Tok::RParen, "`)` closing `time_win(`")?;
        let extended = match extended {
            Extended::Window {
                size,
                modality,
                atom,
                ..
            } => Extended::Window {
                size,
                modality,
                atom,
                span: start.to(self.prev_span()),
            },
            atom => atom,
        };
        Ok((extended, negated))
    }
}

fn is_operator_word(word: &str) -> bool {
    matches!(word, "time_win" | "tuple_win" | "diamond" | "box" | "not")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> Program {
        let (program, diagnostics) = parse(0, text);
        assert!(!diagnostics.has_errors(), "{diagnostics:?}");
        program
    }

    fn first_error(text: &str) -> (String, String) {
        let (_, diagnostics) = parse(0, text);
        let d = diagnostics.iter().next().cloned();
        d.map(|d| (d.code.to_owned(), d.message))
            .unwrap_or_default()
    }

    #[test]
    fn the_issue_examples_print_back_as_written() {
        let text = "q(A,B) :- time_win(10,0,1,diamond(p(A,B))) and not(s)\n\
                    r(A,C) :- time_win(3,0,1,diamond(p(A,B))) and time_win(1,0,1,diamond(p(B,C)))\n\
                    # a comment\n\
                    \n\
                    steam(V) :- time_win(0,0,1,diamond(temp(V))) and COMP(>=,V,100)\n\
                    q(T,A,B) :- time_win(2,0,1,@(T,p(A,B))) and MATH(-,D,T,-1)\n\
                    alarm :- time_win(4,0,1,box(s)) and @(T,x(\"a b\",2.5)) and time_win(1,0,1,@(T,y)).\n";
        let program = parse_ok(text);
        let printed: Vec<String> = program.rules.iter().map(ToString::to_string).collect();
        assert_eq!(
            printed,
            [
                "q(A,B) :- time_win(10,0,1,diamond(p(A,B))) and not(s)",
                "r(A,C) :- time_win(3,0,1,diamond(p(A,B))) and time_win(1,0,1,diamond(p(B,C)))",
                "steam(V) :- time_win(0,0,1,diamond(temp(V))) and COMP(>=,V,100)",
                "q(T,A,B) :- time_win(2,0,1,@(T,p(A,B))) and MATH(-,D,T,-1)",
                "alarm :- time_win(4,0,1,box(s)) and @(T,x(\"a b\",2.5)) and time_win(1,0,1,@(T,y))",
            ]
        );
        assert_eq!(program.rules[2].number, 3);
    }

    #[test]
    fn every_bad_line_is_reported_and_the_rest_parsed() {
        let (program, diagnostics) = parse(
            0,
            "a :- b and\nc :- d\ne :- f, g\nh :- tuple_win(3, @(2,i))\nj :- time_win(2,0,1,diamond(box(k)))\nl :- m\n",
        );
        assert_eq!(program.rules.len(), 2);
        let codes: Vec<&str> = diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, ["E201", "E201", "E202", "E202"]);
    }

    #[test]
    fn unsupported_constructs_are_named() {
        assert_eq!(
            first_error("a :- tuple_win(3,diamond(not(b)))").1,
            "`not` in a tuple window is not supported"
        );
        assert_eq!(
            first_error("a :- diamond(box(b))").1,
            "`box` inside `diamond(…)` is not supported"
        );
        assert_eq!(
            first_error("a :- time_win(2,0,1,@(T,not(b)))").1,
            "`not` inside `@` in a window is not supported"
        );
        assert_eq!(
            first_error("a :- time_win(3,1,1,diamond(b))").1,
            "time_win with end offset 1 is not supported"
        );
        assert_eq!(
            first_error("a :- time_win(3,0,1,diamond(box(b)))").1,
            "`box` inside `diamond(…)` is not supported"
        );
        assert_eq!(
            first_error("a :- time_win(999999999,0,1,diamond(b))").0,
            "E202"
        );
    }

    #[test]
    fn malformed_input_never_panics() {
        for text in [
            "",
            ":-",
            "a :-",
            "a(",
            "a :- b(X",
            "a :- \"x",
            "a :- 99999999999999999999",
            "a :- COMP(",
            "a :- MATH(+,",
            "é :- ü",
            "a :- @(",
            "a :- time_win(",
            "a :- not(",
            "p(X) :- q(X) and",
        ] {
            let _ = parse(0, text);
        }
    }
}
