//! The TD surface syntax: lexer, parser and AST.
//!
//! ```text
//! % device safety (paper, Example 1)
//! safe(X, T)    :- repair(X, T-1).
//! safe(X, T)    :- safe(X, T-1), not warning(X, T-1).
//! trusted(X, T) :- safe(X, T), safe(X, T-1), safe(X, T-2).
//! #output trusted.
//! ```
//!
//! The parser never fails and never panics: [`parse`] returns every item it could read
//! plus a diagnostic for each error, recovering at the next `.`. Checks that need the
//! whole rule (safety, time variables, arities) belong to `ir` lowering and `validate`.

pub mod ast;
mod lexer;
mod parser;
pub mod scan;

pub use lexer::{Token, TokenKind, lex};
pub use parser::parse;
