//! Stream formats behind one trait, and the table of those a run knows.
//!
//! A format reads one line at a time: it splits the line into facts and hands each to the
//! [`ReaderState`] (`accept` for a fact at one time, `queue` for one that holds on an
//! interval), which checks order, lateness, predicates and arities the same way for
//! every format. A front end adds the formats its users' streams come in with
//! [`Formats::register`].

use std::sync::Arc;

use super::{ReaderState, StreamError};

/// A stream format: how one line becomes facts.
pub trait Format: Send + Sync + std::fmt::Debug {
    /// The name `--format` takes (`td`, `csv`).
    fn name(&self) -> &'static str;

    /// What `--format`'s help says of it, in a few words.
    fn about(&self) -> &'static str;

    /// File name endings that mean this format, lower case with the dot (`.csv`); a file
    /// whose name ends in none of a table's formats' is read as its default format.
    fn extensions(&self) -> &'static [&'static str] {
        &[]
    }

    /// Whether a line reads the same whatever the lines before it held, apart from the
    /// time order and a declared timeline (which [`super::blocks`] carries from block to
    /// block), so that a file can be parsed in blocks on several threads. A format whose
    /// lines queue facts for later time points (intervals) cannot.
    fn reads_in_blocks(&self) -> bool {
        true
    }

    /// Parses `text`, one line without its line end (the state knows its number), into
    /// facts handed to `state`; a malformed line is an error located in `text`.
    fn parse_line(&self, text: &str, state: &mut ReaderState) -> Result<(), Box<StreamError>>;
}

/// The formats a run knows: the built-in ones and those the front ends register, by name
/// and by file name ending; the first registered is the default.
#[derive(Clone, Debug)]
pub struct Formats {
    formats: Vec<Arc<dyn Format>>,
}

impl Formats {
    /// TD facts (the default) and CSV.
    pub fn builtin() -> Formats {
        Formats {
            formats: vec![Arc::new(super::td::Td), Arc::new(super::csv::Csv)],
        }
    }

    /// Adds `format`; a format registered later wins a name or a file name ending over
    /// one registered before.
    pub fn register(&mut self, format: Arc<dyn Format>) {
        self.formats.push(format);
    }

    /// The format named `name`.
    pub fn named(&self, name: &str) -> Option<Arc<dyn Format>> {
        self.formats
            .iter()
            .rev()
            .find(|f| f.name() == name)
            .cloned()
    }

    /// The format a file's name implies: the last registered whose ending it has, else
    /// the default.
    pub fn for_path(&self, path: &str) -> Arc<dyn Format> {
        let lower = path.to_ascii_lowercase();
        self.formats
            .iter()
            .rev()
            .find(|f| f.extensions().iter().any(|e| lower.ends_with(e)))
            .or(self.formats.first())
            .cloned()
            .unwrap_or_else(|| Arc::new(super::td::Td))
    }

    /// Every format, in registration order, later ones of a name replacing earlier ones.
    pub fn all(&self) -> Vec<Arc<dyn Format>> {
        let mut all: Vec<Arc<dyn Format>> = Vec::new();
        for format in &self.formats {
            match all.iter_mut().find(|f| f.name() == format.name()) {
                Some(known) => *known = format.clone(),
                None => all.push(format.clone()),
            }
        }
        all
    }
}
