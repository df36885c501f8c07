//! Tokens of RTEC's Prolog-style syntax. Lexing never fails: a character that starts no
//! token becomes [`Tok::Unknown`] and the parser reports it.
//!
//! Pitfall: `.` ends a clause only when followed by white space, `%` or the end of the
//! text; `2.5` is a number and `7.` the integer 7 then the end of a clause.

use crate::codes::Code;
use stgflow_lang::diag::{Diagnostic, Diagnostics, FileId, Span};
use stgflow_lang::syntax::scan::{self, Number, NumberError, UnknownEscape};

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// Lower-case name or `'quoted atom'`.
    Name(String),
    /// Upper-case or `_`-led name.
    Var(String),
    Int(i64),
    Float(f64),
    /// `"string"`
    Str(String),
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    /// The `.` that ends a clause.
    End,
    If,
    /// A symbolic operator: `=`, `\=`, `<`, `=<`, `\+`, `+`, `;`, `!`, …
    Op(&'static str),
    Unknown(char),
    Eof,
}

impl Tok {
    /// How the token is named in "expected …, found …" messages.
    pub fn describe(&self) -> String {
        match self {
            Tok::Name(name) => format!("`{name}`"),
            Tok::Var(name) => format!("variable `{name}`"),
            Tok::Int(i) => format!("integer `{i}`"),
            Tok::Float(x) => format!("number `{x}`"),
            Tok::Str(_) => "a string".to_owned(),
            Tok::LParen => "`(`".to_owned(),
            Tok::RParen => "`)`".to_owned(),
            Tok::LBracket => "`[`".to_owned(),
            Tok::RBracket => "`]`".to_owned(),
            Tok::Comma => "`,`".to_owned(),
            Tok::End => "`.`".to_owned(),
            Tok::If => "`:-`".to_owned(),
            Tok::Op(op) => format!("`{op}`"),
            Tok::Unknown(c) => format!("unexpected character `{}`", c.escape_debug()),
            Tok::Eof => "end of file".to_owned(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Token {
    pub tok: Tok,
    pub span: Span,
    /// Whether a line break separates this token from the previous one.
    pub line_break_before: bool,
}

/// Symbolic operators, longest first so that `=<` wins over `=`.
const OPERATORS: [&str; 22] = [
    "=:=", "=\\=", "\\==", "@=<", "@>=", "=<", ">=", "<=", "==", "\\=", "!=", "\\+", "@<", "@>",
    "->", "=", "<", ">", "+", "-", "*", "/",
];

/// Splits `text` into tokens (always ending with [`Tok::Eof`]) and reports malformed
/// numbers, strings and comments.
pub fn lex(file: FileId, text: &str) -> (Vec<Token>, Diagnostics) {
    let mut lexer = Lexer {
        file,
        text,
        pos: 0,
        tokens: Vec::new(),
        diagnostics: Diagnostics::default(),
    };
    lexer.run();
    (lexer.tokens, lexer.diagnostics)
}

struct Lexer<'a> {
    file: FileId,
    text: &'a str,
    pos: usize,
    tokens: Vec<Token>,
    diagnostics: Diagnostics,
}

impl Lexer<'_> {
    fn rest(&self) -> &str {
        self.text.get(self.pos..).unwrap_or_default()
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn push(&mut self, tok: Tok, start: usize) {
        let previous_end = self.tokens.last().map_or(0, |t| t.span.end);
        let line_break_before = self
            .text
            .get(previous_end..start)
            .is_some_and(|gap| gap.contains('\n'));
        self.tokens.push(Token {
            tok,
            span: Span::new(self.file, start..self.pos),
            line_break_before,
        });
    }

    fn error(&mut self, start: usize, message: &str, label: &str) {
        let span = Span::new(
            self.file,
            start..self.pos.max(start + 1).min(self.text.len()),
        );
        self.diagnostics.push(
            Diagnostic::error(Code::E501, message.to_owned()).with_label(span, label.to_owned()),
        );
    }

    fn run(&mut self) {
        while let Some(c) = self.peek() {
            let start = self.pos;
            match c {
                c if c.is_whitespace() => {
                    self.bump();
                }
                '%' => self.skip_line(),
                '/' if self.rest().starts_with("/*") => self.block_comment(start),
                'a'..='z' => {
                    let word = self.word();
                    self.push(Tok::Name(word), start);
                }
                'A'..='Z' | '_' => {
                    let word = self.word();
                    self.push(Tok::Var(word), start);
                }
                '0'..='9' => self.number(start),
                '"' | '\'' => self.quoted(c, start),
                '.' => {
                    self.bump();
                    let ends = self.peek().is_none_or(|n| n.is_whitespace() || n == '%');
                    self.push(if ends { Tok::End } else { Tok::Unknown('.') }, start);
                }
                '(' | ')' | '[' | ']' | ',' | ';' | '!' | '|' => {
                    self.bump();
                    let tok = match c {
                        '(' => Tok::LParen,
                        ')' => Tok::RParen,
                        '[' => Tok::LBracket,
                        ']' => Tok::RBracket,
                        ',' => Tok::Comma,
                        ';' => Tok::Op(";"),
                        '!' if self.peek() == Some('=') => {
                            self.bump();
                            Tok::Op("!=")
                        }
                        '!' => Tok::Op("!"),
                        _ => Tok::Op("|"),
                    };
                    self.push(tok, start);
                }
                ':' if self.rest().starts_with(":-") => {
                    self.pos += 2;
                    self.push(Tok::If, start);
                }
                _ => {
                    let rest = self.rest();
                    if let Some(op) = OPERATORS.iter().find(|op| rest.starts_with(**op)) {
                        self.pos += op.len();
                        self.push(Tok::Op(op), start);
                    } else {
                        self.bump();
                        self.push(Tok::Unknown(c), start);
                    }
                }
            }
        }
        let end = self.text.len();
        self.push(Tok::Eof, end);
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.bump() {
            if c == '\n' {
                break;
            }
        }
    }

    fn block_comment(&mut self, start: usize) {
        self.pos += 2;
        match self.rest().find("*/") {
            Some(end) => self.pos += end + 2,
            None => {
                self.pos = start + 2;
                self.error(
                    start,
                    "unterminated comment",
                    "this `/*` has no closing `*/`",
                );
                self.pos = self.text.len();
            }
        }
    }

    fn word(&mut self) -> String {
        let start = self.pos;
        self.pos = scan::word_end(self.text, start);
        self.text[start..self.pos].to_owned()
    }

    fn number(&mut self, start: usize) {
        let (end, value) = scan::number(self.text, start, false);
        self.pos = end;
        let tok = match value {
            Ok(Number::Int(i)) => Tok::Int(i),
            Ok(Number::Float(x)) => Tok::Float(x),
            Err(error) => {
                self.error(start, error.message(), "this number");
                match error {
                    NumberError::TooLarge => Tok::Int(0),
                    NumberError::OutOfRange => Tok::Float(0.0),
                }
            }
        };
        self.push(tok, start);
    }

    fn quoted(&mut self, quote: char, start: usize) {
        let (end, value) = scan::quoted(self.text, start, quote, UnknownEscape::Dropped);
        self.pos = end;
        match value {
            Ok(value) if quote == '"' => self.push(Tok::Str(value), start),
            Ok(value) => self.push(Tok::Name(value), start),
            Err(read) => {
                self.error(
                    start,
                    "unterminated quoted text",
                    &format!("this has no closing `{quote}` on its line"),
                );
                self.push(Tok::Str(read), start);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(text: &str) -> Vec<Tok> {
        lex(0, text).0.into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn rtec_rule_tokens() {
        use Tok::*;
        assert_eq!(
            toks("initiatedAt(f(X)=true, T) :- \\+ happensAt(e(X), T), X =< 2.5. /* c */ % c"),
            vec![
                Name("initiatedAt".into()),
                LParen,
                Name("f".into()),
                LParen,
                Var("X".into()),
                RParen,
                Op("="),
                Name("true".into()),
                Comma,
                Var("T".into()),
                RParen,
                If,
                Op("\\+"),
                Name("happensAt".into()),
                LParen,
                Name("e".into()),
                LParen,
                Var("X".into()),
                RParen,
                Comma,
                Var("T".into()),
                RParen,
                Comma,
                Var("X".into()),
                Op("=<"),
                Float(2.5),
                End,
                Eof
            ]
        );
    }

    #[test]
    fn clause_end_needs_space_after_the_dot() {
        assert_eq!(
            toks("p(7).q"),
            vec![
                Tok::Name("p".into()),
                Tok::LParen,
                Tok::Int(7),
                Tok::RParen,
                Tok::Unknown('.'),
                Tok::Name("q".into()),
                Tok::Eof
            ]
        );
        assert!(toks("fi(a, b, 3).").contains(&Tok::Int(3)));
    }

    #[test]
    fn unterminated_comment_and_quote_are_reported() {
        assert!(lex(0, "/* never closed").1.has_errors());
        assert!(lex(0, "'abc").1.has_errors());
        assert!(lex(0, "99999999999999999999").1.has_errors());
    }
}
