//! A malformed or out-of-order line, located.

use std::fmt;

use stgflow_lang::diag::{Diagnostic, Sources, Span};

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
        W104 => "a large log replayed in `points` mode, which prints every fact at every time point",
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

/// At most this many characters of a line are shown in an error's excerpt, around the
/// column on a long line.
const EXCERPT: usize = 200;

impl StreamError {
    /// The error as a [`Diagnostic`] over an excerpt of its line (registered in
    /// `sources`), for the renderer program errors go through too.
    pub fn to_diagnostic(&self, sources: &mut Sources) -> Diagnostic {
        let code = Code::from_code(self.code).unwrap_or(Code::E101);
        let mut diagnostic = {
            let column = self.column.saturating_sub(1);
            let skip = column.saturating_sub(EXCERPT - 50);
            // Control characters (binary input) are never written to the terminal: each
            // shows as U+FFFD, one character for one, so the column stays where it was.
            let shown: String = self
                .text
                .chars()
                .skip(skip)
                .take(EXCERPT)
                .map(|c| {
                    if c.is_control() && c != '\t' {
                        '\u{FFFD}'
                    } else {
                        c
                    }
                })
                .collect();
            let file = sources.add_excerpt(&self.file, (self.line, skip + 1), shown.as_str());
            // The byte of the column in the excerpt; past its end, its last character.
            let at = shown
                .char_indices()
                .nth(column - skip)
                .map_or(shown.len(), |(i, _)| i);
            let end = shown[at..].chars().next().map_or(at, |c| at + c.len_utf8());
            Diagnostic::error(code, self.message.clone()).with_label(Span::new(file, at..end), "")
        };
        if let Some(help) = &self.help {
            diagnostic = diagnostic.with_help(help.clone());
        }
        diagnostic
    }

    /// The error rendered as program errors are, with an excerpt of its line.
    pub fn render(&self, color: bool) -> String {
        let mut sources = Sources::new();
        self.to_diagnostic(&mut sources).render(&sources, color)
    }
}

impl fmt::Display for StreamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.render(false).trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deep in a long file and far along a long line, the excerpt keeps the file's line
    /// and column, cut around the column.
    #[test]
    fn an_error_deep_in_a_long_line_renders_as_a_diagnostic_at_its_line_and_column() {
        let text = format!("{}p(a b, 7).", "q(x, 1). ".repeat(40));
        let error = StreamError {
            code: Code::E101.as_str(),
            file: "big.facts".to_owned(),
            line: 57_031,
            column: 365,
            message: "expected `,` or `)`".to_owned(),
            text,
            help: None,
        };
        let mut sources = Sources::new();
        let diagnostic = error.to_diagnostic(&mut sources);
        assert_eq!(diagnostic.code, "E101");
        let primary = diagnostic.primary_span().unwrap_or_default();
        assert_eq!(sources.locate(primary), "big.facts:57031:365");
        let rendered = error.to_string();
        assert!(
            rendered.starts_with("error[E101]: expected `,` or `)`\n  --> big.facts:57031:365\n"),
            "{rendered}"
        );
        let line = rendered.lines().nth(3).unwrap_or_default();
        assert!(
            line.starts_with("57031 | …") && line.ends_with("p(a b, 7)."),
            "{line}"
        );
        let caret = rendered.lines().nth(4).unwrap_or_default();
        let at = line.chars().position(|c| c == 'b').unwrap_or_default();
        assert_eq!(caret.chars().position(|c| c == '^'), Some(at), "{rendered}");
    }
}
