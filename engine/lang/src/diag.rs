//! Diagnostics: errors and warnings with a code, a message, labelled source spans, notes
//! and a hint, rendered with source excerpts by ariadne.
//!
//! Every stage that looks at user text (the parser, validation, the stream readers, the
//! front ends) reports through [`Diagnostic`]; nothing panics on user input. Spans are byte
//! ranges into a file registered in [`Sources`].

mod codes;

use std::fmt;
use std::ops::Range;

pub use codes::{Code, ErrorCode};

use ariadne::{Config, IndexType, Label as AriadneLabel, Report, ReportKind};

/// Index of a file in [`Sources`].
pub type FileId = usize;

/// A byte range in one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Span {
    pub file: FileId,
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(file: FileId, range: Range<usize>) -> Span {
        Span {
            file,
            start: range.start,
            end: range.end,
        }
    }

    /// The smallest span covering both (same file assumed).
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn range(self) -> Range<usize> {
        self.start..self.end
    }
}

#[derive(Debug)]
struct SourceFile {
    name: String,
    text: String,
    line_starts: Vec<usize>,
    /// The line and column the text starts at, from 1: an excerpt of a longer file (a
    /// stream's line) starts where it was cut.
    first_line: usize,
    first_column: usize,
    /// Registered as an excerpt ([`Sources::add_excerpt`]).
    excerpt: bool,
}

/// The texts that diagnostics point into.
#[derive(Debug, Default)]
pub struct Sources {
    files: Vec<SourceFile>,
}

impl Sources {
    pub fn new() -> Sources {
        Sources::default()
    }

    /// Registers a file and returns its id.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<String>) -> FileId {
        let file = self.add_excerpt(name, (1, 1), text);
        self.files[file].excerpt = false;
        file
    }

    /// Registers an excerpt of a file, `text`, that starts at `(line, column)` of it (from
    /// 1): diagnostics locate and number its lines as in the whole file.
    pub fn add_excerpt(
        &mut self,
        name: impl Into<String>,
        (first_line, first_column): (usize, usize),
        text: impl Into<String>,
    ) -> FileId {
        let text = text.into();
        let line_starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        self.files.push(SourceFile {
            name: name.into(),
            text,
            line_starts,
            first_line: first_line.max(1),
            first_column: first_column.max(1),
            excerpt: true,
        });
        self.files.len() - 1
    }

    pub fn name(&self, file: FileId) -> &str {
        self.files
            .get(file)
            .map_or("<unknown>", |f| f.name.as_str())
    }

    pub fn text(&self, file: FileId) -> &str {
        self.files.get(file).map_or("", |f| f.text.as_str())
    }

    /// 1-based line and column (in characters) of a byte offset.
    pub fn line_col(&self, file: FileId, offset: usize) -> (usize, usize) {
        let Some(source) = self.files.get(file) else {
            return (0, 0);
        };
        let line = source
            .line_starts
            .partition_point(|&start| start <= offset)
            .max(1);
        let line_start = source.line_starts[line - 1];
        let end = offset.min(source.text.len());
        let column = source
            .text
            .get(line_start..end)
            .map_or(end - line_start, |s| s.chars().count());
        let shift = if line == 1 {
            source.first_column - 1
        } else {
            0
        };
        (line + source.first_line - 1, column + 1 + shift)
    }

    /// `file:line:column` of a span's start.
    pub fn locate(&self, span: Span) -> String {
        let (line, column) = self.line_col(span.file, span.start);
        format!("{}:{line}:{column}", self.name(span.file))
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    Warning,
    Error,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One error or warning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable code, e.g. `E003`, from one of the layers' tables ([`ErrorCode`]).
    pub code: &'static str,
    pub message: String,
    /// The first label is the primary location.
    pub labels: Vec<Label>,
    pub notes: Vec<String>,
    pub help: Option<String>,
}

impl Diagnostic {
    pub fn error(code: impl ErrorCode, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            code: code.as_str(),
            message: message.into(),
            labels: Vec::new(),
            notes: Vec::new(),
            help: None,
        }
    }

    pub fn warning(code: impl ErrorCode, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, message)
        }
    }

    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    pub fn primary_span(&self) -> Option<Span> {
        self.labels.first().map(|label| label.span)
    }

    /// Renders with a source excerpt and a caret under each label.
    pub fn render(&self, sources: &Sources, color: bool) -> String {
        let kind = match self.severity {
            Severity::Error => ReportKind::Error,
            Severity::Warning => ReportKind::Warning,
        };
        let Some(primary) = self.primary_span() else {
            return self.render_plain();
        };
        if let Some(excerpt) = sources.files.get(primary.file).filter(|f| f.excerpt) {
            return self.render_excerpt(sources, excerpt, primary);
        }
        let location = sources.locate(primary);
        let file_key = |span: Span| (sources.name(span.file).to_owned(), span.range());
        let mut report = Report::build(kind, file_key(primary))
            .with_config(
                Config::default()
                    .with_color(color)
                    .with_index_type(IndexType::Byte),
            )
            .with_code(self.code)
            .with_message(format!("{} ({location})", self.message));
        for label in &self.labels {
            report.add_label(AriadneLabel::new(file_key(label.span)).with_message(&label.message));
        }
        for note in &self.notes {
            report.add_note(note);
        }
        if let Some(help) = &self.help {
            report.set_help(help);
        }
        let mut files: Vec<FileId> = self.labels.iter().map(|l| l.span.file).collect();
        files.sort_unstable();
        files.dedup();
        let cache = ariadne::FnCache::new(
            (move |id: &String| Err(format!("no source `{id}`"))) as fn(&String) -> _,
        )
        .with_sources(
            files
                .into_iter()
                .filter_map(|f| sources.files.get(f))
                .map(|f| {
                    let source = ariadne::Source::from(f.text.clone())
                        .with_display_line_offset(f.first_line - 1);
                    (f.name.clone(), source)
                })
                .collect(),
        );
        let mut out = Vec::new();
        match report.finish().write(cache, &mut out) {
            Ok(()) => String::from_utf8_lossy(&out).into_owned(),
            Err(_) => self.render_plain(),
        }
    }

    /// A diagnostic on one line of a file too long to hold (a stream's line): the line as
    /// registered, with a caret under the primary label's start. Ariadne numbers lines
    /// from the start of the text it is given, so it cannot show line 57031 of a stream
    /// from that line alone.
    fn render_excerpt(&self, sources: &Sources, excerpt: &SourceFile, primary: Span) -> String {
        let mut text = format!("{self}\n  --> {}\n", sources.locate(primary));
        let number = excerpt.first_line.to_string();
        let pad = " ".repeat(number.len());
        let line = excerpt.text.lines().next().unwrap_or_default();
        let mut caret = line
            .get(..primary.start.min(line.len()))
            .map_or(0, |s| s.chars().count());
        let cut = if excerpt.first_column > 1 {
            caret += 1;
            "…"
        } else {
            ""
        };
        text.push_str(&format!(
            "{pad} |\n{number} | {cut}{line}\n{pad} | {}^",
            " ".repeat(caret)
        ));
        for note in &self.notes {
            text.push_str(&format!("\n{pad} = note: {note}"));
        }
        if let Some(help) = &self.help {
            text.push_str(&format!("\n{pad} = help: {help}"));
        }
        text.push('\n');
        text
    }

    fn render_plain(&self) -> String {
        let mut text = format!("{self}\n");
        for note in &self.notes {
            text.push_str(&format!("  note: {note}\n"));
        }
        if let Some(help) = &self.help {
            text.push_str(&format!("  help: {help}\n"));
        }
        text
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let kind = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        write!(f, "{kind}[{}]: {}", self.code, self.message)
    }
}

/// Diagnostics collected by a stage; errors and warnings travel together.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn push(&mut self, diagnostic: Diagnostic) {
        self.0.push(diagnostic);
    }

    pub fn has_errors(&self) -> bool {
        self.0.iter().any(Diagnostic::is_error)
    }

    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter()
    }

    pub fn render(&self, sources: &Sources, color: bool) -> String {
        self.0.iter().map(|d| d.render(sources, color)).collect()
    }
}

/// The candidate nearest to `name` by edit distance, if it is close enough to be a typo.
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    candidates
        .map(|c| (edit_distance(name, c), c))
        .filter(|&(d, c)| d > 0 && d <= 2.max(c.len() / 3))
        // Ties go to the first name in order, not to whichever a hash map yields first.
        .min_by_key(|&(d, c)| (d, c))
        .map(|(_, c)| c)
}

pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = previous + usize::from(ca != cb);
            previous = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(previous + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_col_counts_from_one_in_characters() {
        let mut sources = Sources::new();
        let f = sources.add("a.tdl", "ab\ncé d\n");
        assert_eq!(sources.line_col(f, 0), (1, 1));
        assert_eq!(sources.line_col(f, 3), (2, 1));
        assert_eq!(sources.line_col(f, 7), (2, 4));
        assert_eq!(sources.locate(Span::new(f, 7..8)), "a.tdl:2:4");
    }

    #[test]
    fn rendering_shows_code_location_excerpt_and_help() {
        let mut sources = Sources::new();
        let f = sources.add("p.tdl", "p(X, T) :- q(T).\n");
        let text = Diagnostic::error(Code::E002, "unsafe variable `X`")
            .with_label(Span::new(f, 2..3), "not bound by a positive atom")
            .with_help("bind it")
            .render(&sources, false);
        assert!(text.contains("[E002]"), "{text}");
        assert!(text.contains("p.tdl:1:3"), "{text}");
        assert!(text.contains("p(X, T) :- q(T)."), "{text}");
        assert!(text.contains("bind it"), "{text}");
    }
}
