//! Recursive descent over the tokens, recovering at the next `.` after an error.

use super::ast::{
    ArithOp, Atom, Builtin, CmpOp, CountLit, Expr, Func, Ident, Item, Literal, Program, Rule,
};
use super::lexer::{Token, TokenKind, lex};
use crate::diag::Code;
use crate::diag::{Diagnostic, Diagnostics, FileId, Span};
use crate::value::Value;

/// Parses a TD program. Returns every item that parsed and a diagnostic per error.
pub fn parse(file: FileId, text: &str) -> (Program, Diagnostics) {
    let (tokens, mut diagnostics) = lex(file, text);
    let mut parser = Parser {
        tokens,
        pos: 0,
        diagnostics: Diagnostics::default(),
    };
    let mut items = Vec::new();
    while !parser.at(&TokenKind::Eof) {
        let start = parser.pos;
        match parser.item() {
            Ok(item) => items.push(item),
            Err(diagnostic) => {
                parser.diagnostics.push(diagnostic);
                parser.recover(start);
            }
        }
    }
    diagnostics.extend(parser.diagnostics);
    (Program { items }, diagnostics)
}

type Parse<T> = Result<T, Diagnostic>;

/// Nesting deeper than this is reported instead of recursing further (no stack overflow
/// on hostile input).
const MAX_DEPTH: usize = 64;

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
    diagnostics: Diagnostics,
}

impl Parser {
    fn peek(&self) -> &Token {
        let last = self.tokens.len().saturating_sub(1);
        &self.tokens[self.pos.min(last)]
    }

    fn peek_kind_at(&self, ahead: usize) -> &TokenKind {
        let last = self.tokens.len().saturating_sub(1);
        &self.tokens[(self.pos + ahead).min(last)].kind
    }

    fn at(&self, kind: &TokenKind) -> bool {
        &self.peek().kind == kind
    }

    fn bump(&mut self) -> Token {
        let token = self.peek().clone();
        if token.kind != TokenKind::Eof {
            self.pos += 1;
        }
        token
    }

    /// Skips to just after the next `.`, or to the end — or to a name or directive at the
    /// start of a line past the failed item's first token: the next clause, when the
    /// failed one lacks its `.` (else that clause was lost too, and a warning about what
    /// it mentioned was wrong).
    fn recover(&mut self, item_start: usize) {
        loop {
            let token = self.peek();
            let next_clause = token.line_start
                && matches!(token.kind, TokenKind::Ident(_) | TokenKind::Directive(_));
            if next_clause && self.pos > item_start {
                return;
            }
            match self.bump().kind {
                TokenKind::Dot | TokenKind::Eof => return,
                _ => {}
            }
        }
    }

    fn expected(&self, what: &str) -> Diagnostic {
        let token = self.peek();
        let mut diagnostic = Diagnostic::error(
            Code::E001,
            format!("expected {what}, found {}", token.kind.describe()),
        )
        .with_label(token.span, format!("expected {what} here"));
        if token.kind == TokenKind::Eof {
            diagnostic = diagnostic.with_help("every rule and fact ends with `.`");
        } else if what.contains("`.`") && token.line_start {
            diagnostic = diagnostic
                .with_help("a rule or fact ends with `.`; did you forget it on the line above?");
        }
        diagnostic
    }

    fn expect(&mut self, kind: TokenKind, what: &str) -> Parse<Token> {
        if self.at(&kind) {
            Ok(self.bump())
        } else {
            let mut diagnostic = self.expected(what);
            if kind == TokenKind::Dot && self.peek().line_break_before {
                diagnostic = diagnostic.with_help(
                    "a rule or fact ends with `.`; did you forget it on the line above?",
                );
            }
            Err(diagnostic)
        }
    }

    fn item(&mut self) -> Parse<Item> {
        let start = self.peek().span;
        match self.peek().kind.clone() {
            TokenKind::Directive(name) => self.directive(&name),
            TokenKind::Ident(_) => {
                let head = self.atom(0)?;
                match self.bump().kind {
                    TokenKind::Dot => Ok(Item::Fact(head)),
                    TokenKind::If => {
                        let body = self.body()?;
                        let end = self.expect(TokenKind::Dot, "`,` or `.`")?;
                        Ok(Item::Rule(Rule {
                            head,
                            body,
                            span: start.to(end.span),
                        }))
                    }
                    _ => {
                        self.pos -= 1;
                        Err(self.expected("`:-` or `.` after the head atom"))
                    }
                }
            }
            TokenKind::Var(name) => Err(Diagnostic::error(
                Code::E001,
                format!("expected a rule, a fact or a directive, found variable `{name}`"),
            )
            .with_label(start, "a rule starts with its head atom")
            .with_help("predicate names start with a lower-case letter")),
            _ => Err(self.expected("a rule, a fact or a directive")),
        }
    }

    fn directive(&mut self, name: &str) -> Parse<Item> {
        let directive = self.bump();
        if name != "output" {
            return Err(
                Diagnostic::error(Code::E001, format!("unknown directive `#{name}`"))
                    .with_label(directive.span, "not a directive")
                    .with_help("the TD language has one directive: `#output p, q.`"),
            );
        }
        let mut preds = Vec::new();
        loop {
            let token = self.bump();
            match token.kind {
                TokenKind::Ident(name) => preds.push(Ident {
                    name,
                    span: token.span,
                }),
                _ => {
                    self.pos -= usize::from(token.kind != TokenKind::Eof);
                    return Err(self.expected("a predicate name"));
                }
            }
            if self.at(&TokenKind::Comma) {
                self.bump();
                continue;
            }
            let end = self.expect(TokenKind::Dot, "`,` or `.`")?;
            return Ok(Item::Output(preds, directive.span.to(end.span)));
        }
    }

    fn atom(&mut self, depth: usize) -> Parse<Atom> {
        let token = self.bump();
        let TokenKind::Ident(name) = token.kind else {
            self.pos -= usize::from(token.kind != TokenKind::Eof);
            return Err(self.expected("a predicate name"));
        };
        let predicate = Ident {
            name,
            span: token.span,
        };
        if !self.at(&TokenKind::LParen) {
            return Err(self.expected("`(`").with_help(format!(
                "every atom takes the time as its last argument, e.g. `{}(T)`",
                predicate.name
            )));
        }
        self.bump();
        let mut args = Vec::new();
        if self.at(&TokenKind::RParen) {
            let close = self.bump();
            return Err(Diagnostic::error(
                Code::E001,
                format!("atom `{}` has no arguments", predicate.name),
            )
            .with_label(predicate.span.to(close.span), "no time argument")
            .with_help(format!(
                "every atom takes the time as its last argument, e.g. `{}(T)`",
                predicate.name
            )));
        }
        loop {
            args.push(self.expr(depth + 1)?);
            match self.peek().kind {
                TokenKind::Comma => {
                    self.bump();
                }
                TokenKind::RParen => {
                    let close = self.bump();
                    return Ok(Atom {
                        span: predicate.span.to(close.span),
                        predicate,
                        args,
                    });
                }
                _ => return Err(self.expected("`,` or `)`")),
            }
        }
    }

    fn body(&mut self) -> Parse<Vec<Literal>> {
        let mut body = vec![self.literal()?];
        while self.at(&TokenKind::Comma) {
            self.bump();
            body.push(self.literal()?);
        }
        Ok(body)
    }

    fn literal(&mut self) -> Parse<Literal> {
        match (self.peek().kind.clone(), self.peek_kind_at(1)) {
            (TokenKind::Ident(word), TokenKind::Ident(_)) if word == "not" => {
                let not = self.bump();
                let atom = self.atom(0)?;
                let span = not.span.to(atom.span);
                Ok(Literal::Negative(atom, span))
            }
            (TokenKind::Ident(word), TokenKind::LParen)
                if Func::named(&word).is_some() && self.call_in_arithmetic() =>
            {
                self.builtin()
            }
            (TokenKind::Ident(_), TokenKind::LParen) => Ok(Literal::Positive(self.atom(0)?)),
            (TokenKind::Ident(word), _) if word == "not" => {
                self.bump();
                Err(self.expected("an atom after `not`"))
            }
            (TokenKind::Var(_), TokenKind::Eq) if matches!(self.peek_kind_at(2), TokenKind::Directive(d) if d == "count") => {
                self.count()
            }
            _ => self.builtin(),
        }
    }

    /// Whether the call that starts here (`abs(…)`) is followed by an operator or a
    /// comparison: a function's value in a comparison, not an atom of that name.
    fn call_in_arithmetic(&self) -> bool {
        let mut depth = 0usize;
        for ahead in 1.. {
            match self.peek_kind_at(ahead) {
                TokenKind::LParen => depth += 1,
                TokenKind::RParen => {
                    depth -= 1;
                    if depth == 0 {
                        return matches!(
                            self.peek_kind_at(ahead + 1),
                            TokenKind::Eq
                                | TokenKind::Ne
                                | TokenKind::Lt
                                | TokenKind::Le
                                | TokenKind::Gt
                                | TokenKind::Ge
                                | TokenKind::Plus
                                | TokenKind::Minus
                                | TokenKind::Star
                                | TokenKind::Slash
                        );
                    }
                }
                TokenKind::Eof | TokenKind::Dot => return false,
                _ => {}
            }
        }
        false
    }

    /// `N = #count { V… : literal, … }`.
    fn count(&mut self) -> Parse<Literal> {
        let result = self.bump();
        let TokenKind::Var(name) = result.kind else {
            return Err(self.expected("a variable"));
        };
        self.bump(); // `=`
        self.bump(); // `#count`
        self.expect(TokenKind::LBrace, "`{` after `#count`")?;
        let mut counted = Vec::new();
        loop {
            let token = self.bump();
            match token.kind {
                TokenKind::Var(var) => counted.push(Ident {
                    name: var,
                    span: token.span,
                }),
                _ => {
                    self.pos -= 1;
                    return Err(self.expected("a variable to count").with_help(
                        "write `N = #count { V : p(V, T) }`: the variables before `:` are counted",
                    ));
                }
            }
            if self.at(&TokenKind::Comma) {
                self.bump();
                continue;
            }
            break;
        }
        self.expect(TokenKind::Colon, "`,` or `:` after the counted variables")?;
        let mut body = vec![self.literal()?];
        while self.at(&TokenKind::Comma) {
            self.bump();
            body.push(self.literal()?);
        }
        let end = self.expect(TokenKind::RBrace, "`,` or `}`")?;
        if let Some(nested) = body.iter().find(|l| matches!(l, Literal::Count(_))) {
            return Err(
                Diagnostic::error(Code::E001, "a `#count` inside a `#count`")
                    .with_label(nested.span(), "nested here")
                    .with_help("count into a predicate of its own first, then count that"),
            );
        }
        Ok(Literal::Count(CountLit {
            result: Ident {
                name,
                span: result.span,
            },
            counted,
            body,
            span: result.span.to(end.span),
        }))
    }

    fn builtin(&mut self) -> Parse<Literal> {
        let lhs = self.expr(0)?;
        let op = match self.peek().kind {
            TokenKind::Eq => CmpOp::Eq,
            TokenKind::Ne => CmpOp::Ne,
            TokenKind::Lt => CmpOp::Lt,
            TokenKind::Le => CmpOp::Le,
            TokenKind::Gt => CmpOp::Gt,
            TokenKind::Ge => CmpOp::Ge,
            _ => {
                let mut diagnostic =
                    self.expected("a comparison (`=`, `!=`, `<`, `<=`, `>`, `>=`)");
                if let Expr::Const(Value::Sym(sym), _) = &lhs {
                    diagnostic = diagnostic
                        .with_help(format!("an atom needs arguments: `{}(…, T)`", sym.as_str()));
                }
                return Err(diagnostic);
            }
        };
        self.bump();
        let rhs = self.expr(0)?;
        let span = lhs.span().to(rhs.span());
        Ok(Literal::Builtin(Builtin { lhs, op, rhs, span }))
    }

    fn expr(&mut self, depth: usize) -> Parse<Expr> {
        self.binary(depth, 1)
    }

    fn binary(&mut self, depth: usize, min_precedence: u8) -> Parse<Expr> {
        let mut lhs = self.unary(depth)?;
        loop {
            let op = match self.peek().kind {
                TokenKind::Plus => ArithOp::Add,
                TokenKind::Minus => ArithOp::Sub,
                TokenKind::Star => ArithOp::Mul,
                TokenKind::Slash => ArithOp::Div,
                TokenKind::Ident(ref word) if word == "mod" => ArithOp::Mod,
                _ => return Ok(lhs),
            };
            if op.precedence() < min_precedence {
                return Ok(lhs);
            }
            self.bump();
            let rhs = self.binary(depth + 1, op.precedence() + 1)?;
            let span = lhs.span().to(rhs.span());
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs), span);
        }
    }

    /// The arguments of a call of `func` (its name at `start`), after the name.
    fn call(&mut self, func: Func, start: Span, depth: usize) -> Parse<Expr> {
        self.expect(TokenKind::LParen, "`(`")?;
        let mut args = vec![self.expr(depth + 1)?];
        while self.at(&TokenKind::Comma) {
            self.bump();
            args.push(self.expr(depth + 1)?);
        }
        let close = self.peek().span;
        self.expect(TokenKind::RParen, "`)`")?;
        let span = start.to(close);
        if args.len() != func.arity() {
            return Err(Diagnostic::error(
                Code::E001,
                format!(
                    "`{}` takes {} argument{}, not {}",
                    func.name(),
                    func.arity(),
                    if func.arity() == 1 { "" } else { "s" },
                    args.len()
                ),
            )
            .with_label(span, "this call"));
        }
        Ok(Expr::Call(func, args, span))
    }

    fn unary(&mut self, depth: usize) -> Parse<Expr> {
        if depth > MAX_DEPTH {
            return Err(
                Diagnostic::error(Code::E001, "expression nested too deeply")
                    .with_label(self.peek().span, "here"),
            );
        }
        let token = self.bump();
        match token.kind {
            TokenKind::Var(name) => Ok(Expr::Var(Ident {
                name,
                span: token.span,
            })),
            TokenKind::Ident(name) => {
                if let (Some(func), true) = (Func::named(&name), self.at(&TokenKind::LParen)) {
                    return self.call(func, token.span, depth);
                }
                if self.at(&TokenKind::LParen) {
                    return Err(Diagnostic::error(
                        Code::E001,
                        format!("nested term `{name}(…)` is not allowed here"),
                    )
                    .with_label(token.span.to(self.peek().span), "function symbols are not part of TD")
                    .with_help("arguments are variables or constants; flatten the term into extra arguments")
                    .with_note(format!(
                        "the arithmetic functions are {}, in assignments and comparisons",
                        Func::ALL.map(|f| format!("`{}`", f.name())).join(", ")
                    )));
                }
                Ok(Expr::Const(Value::sym(&name), token.span))
            }
            TokenKind::Str(text) => Ok(Expr::Const(Value::sym(&text), token.span)),
            TokenKind::Int(i) => Ok(Expr::Const(Value::Int(i), token.span)),
            TokenKind::Float(x) => Ok(Expr::Const(Value::Float(x), token.span)),
            TokenKind::Minus => {
                let operand = self.unary(depth + 1)?;
                let span = token.span.to(operand.span());
                Ok(match operand {
                    Expr::Const(Value::Int(i), _) if i.checked_neg().is_some() => {
                        Expr::Const(Value::Int(-i), span)
                    }
                    Expr::Const(Value::Float(x), _) => Expr::Const(Value::Float(-x), span),
                    other => Expr::Binary(
                        ArithOp::Sub,
                        Box::new(Expr::Const(Value::Int(0), token.span)),
                        Box::new(other),
                        span,
                    ),
                })
            }
            TokenKind::LParen => {
                let inner = self.expr(depth + 1)?;
                self.expect(TokenKind::RParen, "`)`")?;
                Ok(inner)
            }
            kind => {
                self.pos -= usize::from(kind != TokenKind::Eof);
                Err(self.expected("a variable, a constant or `(`"))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(text: &str) -> Program {
        let (program, diagnostics) = parse(0, text);
        assert!(!diagnostics.has_errors(), "{diagnostics:?}");
        program
    }

    /// Each item of `text`, parsed and printed back.
    fn printed(text: &str) -> Vec<String> {
        (parse_ok(text).items.iter())
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn example_1_round_trips() {
        let text = "safe(X, T) :- repair(X, T-1).\n\
                    safe(X, T) :- safe(X, T-1), not warning(X, T-1).\n\
                    trusted(X, T) :- safe(X, T), safe(X, T-1), safe(X, T-2).\n\
                    #output trusted.\n";
        assert_eq!(
            printed(text),
            vec![
                "safe(X, T) :- repair(X, T-1).",
                "safe(X, T) :- safe(X, T-1), not warning(X, T-1).",
                "trusted(X, T) :- safe(X, T), safe(X, T-1), safe(X, T-2).",
                "#output trusted.",
            ]
        );
    }

    #[test]
    fn builtins_and_precedence() {
        let program =
            parse_ok("d(S, D, T) :- t(S, V, T), t(S, W, T-1), D = (V - W) * 2 + 1, D >= -3.");
        assert_eq!(
            program.items[0].to_string(),
            "d(S, D, T) :- t(S, V, T), t(S, W, T-1), D = (V - W) * 2 + 1, D >= -3."
        );
    }

    #[test]
    fn functions_round_trip_and_take_their_arity() {
        let text = "d(A, T) :- t(X, Y, T), abs(X - Y) > 2, A = min(floor(X / 2), max(Y, 0)).\n\
                    abs(X, T) :- t(X, _, T).";
        assert_eq!(
            printed(text),
            [
                "d(A, T) :- t(X, Y, T), abs(X - Y) > 2, A = min(floor(X / 2), max(Y, 0)).",
                "abs(X, T) :- t(X, _, T).",
            ]
        );
        let (_, diagnostics) = parse(0, "d(A, T) :- t(X, T), A = min(X).");
        let messages: Vec<String> = diagnostics.0.iter().map(|d| d.message.clone()).collect();
        assert_eq!(messages, ["`min` takes 2 arguments, not 1"]);
    }

    #[test]
    fn recovers_and_reports_every_error() {
        let (program, diagnostics) =
            parse(0, "p(X T) :- q(X, T).\nok(T) :- a(T).\nr(X, T) :- ,.\n");
        assert_eq!(program.items.len(), 1);
        assert_eq!(diagnostics.0.len(), 2);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let text = format!(
            "p(T) :- X = {}1{}, q(X, T).",
            "(".repeat(10_000),
            ")".repeat(10_000)
        );
        let (_, diagnostics) = parse(0, &text);
        assert!(diagnostics.has_errors());
    }
}
