//! A malformed or out-of-order line, located.

use std::fmt;

/// A malformed or out-of-order line.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub struct StreamError {
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
