//! Tokens. Lexing never fails: a character that starts no token becomes
//! [`TokenKind::Unknown`] and the parser reports it.

use crate::diag::Code;
use crate::diag::{Diagnostic, Diagnostics, FileId, Span};
use crate::syntax::scan::{self, Number, NumberError, UnknownEscape};

#[derive(Clone, Debug, PartialEq)]
pub enum TokenKind {
    /// Lower-case identifier: a predicate, a constant, or the keyword `not`.
    Ident(String),
    /// Upper-case or `_`-led identifier.
    Var(String),
    Int(i64),
    Float(f64),
    Str(String),
    /// `#name`
    Directive(String),
    LParen,
    RParen,
    LBrace,
    RBrace,
    Colon,
    Comma,
    Dot,
    If,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Plus,
    Minus,
    Star,
    Slash,
    Unknown(char),
    Eof,
}

impl TokenKind {
    /// How the token is named in "expected …, found …" messages.
    pub fn describe(&self) -> String {
        match self {
            TokenKind::Ident(name) => format!("`{name}`"),
            TokenKind::Var(name) => format!("variable `{name}`"),
            TokenKind::Int(i) => format!("integer `{i}`"),
            TokenKind::Float(x) => format!("number `{x}`"),
            TokenKind::Str(_) => "a string".to_owned(),
            TokenKind::Directive(name) => format!("`#{name}`"),
            TokenKind::LParen => "`(`".to_owned(),
            TokenKind::RParen => "`)`".to_owned(),
            TokenKind::LBrace => "`{`".to_owned(),
            TokenKind::RBrace => "`}`".to_owned(),
            TokenKind::Colon => "`:`".to_owned(),
            TokenKind::Comma => "`,`".to_owned(),
            TokenKind::Dot => "`.`".to_owned(),
            TokenKind::If => "`:-`".to_owned(),
            TokenKind::Eq => "`=`".to_owned(),
            TokenKind::Ne => "`!=`".to_owned(),
            TokenKind::Lt => "`<`".to_owned(),
            TokenKind::Le => "`<=`".to_owned(),
            TokenKind::Gt => "`>`".to_owned(),
            TokenKind::Ge => "`>=`".to_owned(),
            TokenKind::Plus => "`+`".to_owned(),
            TokenKind::Minus => "`-`".to_owned(),
            TokenKind::Star => "`*`".to_owned(),
            TokenKind::Slash => "`/`".to_owned(),
            TokenKind::Unknown(c) => format!("unexpected character `{}`", c.escape_debug()),
            TokenKind::Eof => "end of file".to_owned(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub kind: TokenKind,
    pub span: Span,
    /// Whether a line break separates this token from the previous one.
    pub line_break_before: bool,
    /// Whether the token starts its line (column 1), where a new clause usually begins.
    pub line_start: bool,
}

/// Splits `text` into tokens (always ending with [`TokenKind::Eof`]) and reports malformed
/// numbers and strings.
pub fn lex(file: FileId, text: &str) -> (Vec<Token>, Diagnostics) {
    Lexer {
        file,
        text,
        pos: 0,
        tokens: Vec::new(),
        diagnostics: Diagnostics::default(),
    }
    .run()
}

struct Lexer<'a> {
    file: FileId,
    text: &'a str,
    pos: usize,
    tokens: Vec<Token>,
    diagnostics: Diagnostics,
}

impl Lexer<'_> {
    fn peek(&self) -> Option<char> {
        self.text.get(self.pos..)?.chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn span_from(&self, start: usize) -> Span {
        Span::new(self.file, start..self.pos)
    }

    fn push(&mut self, kind: TokenKind, start: usize) {
        let span = self.span_from(start);
        let previous_end = self.tokens.last().map_or(0, |t| t.span.end);
        let line_break_before = self
            .text
            .get(previous_end..start)
            .is_some_and(|gap| gap.contains('\n'));
        let line_start = start == 0 || self.text[..start].ends_with('\n');
        self.tokens.push(Token {
            kind,
            span,
            line_break_before,
            line_start,
        });
    }

    fn run(mut self) -> (Vec<Token>, Diagnostics) {
        while let Some(c) = self.peek() {
            let start = self.pos;
            match c {
                c if c.is_whitespace() => {
                    self.bump();
                }
                '%' => self.skip_line(),
                'a'..='z' => {
                    let word = self.word();
                    self.push(TokenKind::Ident(word), start);
                }
                'A'..='Z' | '_' => {
                    let word = self.word();
                    self.push(TokenKind::Var(word), start);
                }
                '0'..='9' => self.number(start),
                '"' => self.string(start),
                '#' => {
                    self.bump();
                    let word = self.word();
                    self.push(TokenKind::Directive(word), start);
                }
                _ => self.punctuation(c, start),
            }
        }
        let end = self.text.len();
        self.push(TokenKind::Eof, end);
        (self.tokens, self.diagnostics)
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.bump() {
            if c == '\n' {
                break;
            }
        }
    }

    fn word(&mut self) -> String {
        let start = self.pos;
        self.pos = scan::word_end(self.text, start);
        self.text[start..self.pos].to_owned()
    }

    fn punctuation(&mut self, c: char, start: usize) {
        self.bump();
        let next = self.peek();
        let two = |lexer: &mut Self, kind: TokenKind| {
            lexer.bump();
            kind
        };
        let kind = match (c, next) {
            (':', Some('-')) => two(self, TokenKind::If),
            ('!', Some('=')) => two(self, TokenKind::Ne),
            ('<', Some('=')) => two(self, TokenKind::Le),
            ('>', Some('=')) => two(self, TokenKind::Ge),
            ('(', _) => TokenKind::LParen,
            (')', _) => TokenKind::RParen,
            ('{', _) => TokenKind::LBrace,
            ('}', _) => TokenKind::RBrace,
            (':', _) => TokenKind::Colon,
            (',', _) => TokenKind::Comma,
            ('.', _) => TokenKind::Dot,
            ('=', _) => TokenKind::Eq,
            ('<', _) => TokenKind::Lt,
            ('>', _) => TokenKind::Gt,
            ('+', _) => TokenKind::Plus,
            ('-', _) => TokenKind::Minus,
            ('*', _) => TokenKind::Star,
            ('/', _) => TokenKind::Slash,
            (c, _) => TokenKind::Unknown(c),
        };
        self.push(kind, start);
    }

    fn number(&mut self, start: usize) {
        let (end, value) = scan::number(self.text, start, true);
        self.pos = end;
        let kind = match value {
            Ok(Number::Int(i)) => TokenKind::Int(i),
            Ok(Number::Float(x)) => TokenKind::Float(x),
            Err(error) => {
                self.number_error(start, error.message());
                match error {
                    NumberError::TooLarge => TokenKind::Int(0),
                    NumberError::OutOfRange => TokenKind::Float(0.0),
                }
            }
        };
        self.push(kind, start);
    }

    fn number_error(&mut self, start: usize, message: &str) {
        let span = self.span_from(start);
        self.diagnostics.push(
            Diagnostic::error(Code::E001, message.to_owned()).with_label(span, "this number"),
        );
    }

    fn string(&mut self, start: usize) {
        let (end, value) = scan::quoted(self.text, start, '"', UnknownEscape::Kept);
        self.pos = end;
        match value {
            Ok(value) => self.push(TokenKind::Str(value), start),
            Err(read) => {
                let span = self.span_from(start);
                self.diagnostics.push(
                    Diagnostic::error(Code::E001, "unterminated string")
                        .with_label(span, "this string has no closing `\"` on its line"),
                );
                self.push(TokenKind::Str(read), start);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(text: &str) -> Vec<TokenKind> {
        lex(0, text).0.into_iter().map(|t| t.kind).collect()
    }

    #[test]
    fn rule_tokens() {
        use TokenKind::*;
        assert_eq!(
            kinds("p(X, T-1) :- not q(\"a b\", 2.5), X != 3. % c"),
            vec![
                Ident("p".into()),
                LParen,
                Var("X".into()),
                Comma,
                Var("T".into()),
                Minus,
                Int(1),
                RParen,
                If,
                Ident("not".into()),
                Ident("q".into()),
                LParen,
                Str("a b".into()),
                Comma,
                Float(2.5),
                RParen,
                Comma,
                Var("X".into()),
                Ne,
                Int(3),
                Dot,
                Eof
            ]
        );
    }

    #[test]
    fn integer_followed_by_the_clause_dot_is_not_a_float() {
        assert_eq!(kinds("p(a, 7)."), kinds("p ( a , 7 ) ."));
        assert!(kinds("X = 3.").contains(&TokenKind::Int(3)));
    }

    #[test]
    fn overflow_and_unterminated_strings_are_reported() {
        assert!(lex(0, "99999999999999999999").1.has_errors());
        assert!(lex(0, "\"abc").1.has_errors());
    }
}
