//! A malformed or out-of-order line, located.

use std::fmt;

stgflow_lang::error_codes! {
    /// The codes of stream errors and of the warnings about skipped input.
    pub enum Code {
        E101 => "a malformed stream line (a time above 2^63 - 1 included)",
        E102 => "a time going backwards, or more than `--lateness` late",
        E103 => "a stream that cannot be read",
        E104 => "under `--strict`: a stream fact of a predicate the program does not use",
        E105 => "under `--strict`: a stream fact with the wrong number of arguments",
        W101 => "stream facts skipped: the wrong number of arguments",
        W102 => "stream facts skipped: a predicate the program does not use",
        W103 => "stream facts skipped: later than `--lateness` (with `--skip-late`)",
    }
}

/// A malformed or out-of-order line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct StreamError {
    /// The error's code ([`Code`]).
    pub code: &'static str,
    pub file: String,
    pub line: usize,
    /// 1-based, in characters.
    pub column: usize,
    pub message: String,
    /// The offending line, for the excerpt.
    pub text: String,
    pub help: Option<String>,
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "error[{}]: {}", self.code, self.message)?;
        writeln!(f, "  --> {}:{}:{}", self.file, self.line, self.column)?;
        let number = self.line.to_string();
        let pad = " ".repeat(number.len());
        // At most EXCERPT characters of the line, around the column on a long line.
        const EXCERPT: usize = 200;
        let column = self.column.saturating_sub(1);
        let skip = column.saturating_sub(EXCERPT - 50);
        let mut shown: String = self.text.chars().skip(skip).take(EXCERPT).collect();
        let mut caret = column - skip;
        if skip > 0 {
            shown.insert(0, '…');
            caret += 1;
        }
        writeln!(f, "{pad} |")?;
        writeln!(f, "{number} | {shown}")?;
        write!(f, "{pad} | {}^", " ".repeat(caret))?;
        if let Some(help) = &self.help {
            write!(f, "\n{pad} = help: {help}")?;
        }
        Ok(())
    }
}
