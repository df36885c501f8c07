//! # stgflow-ec
//!
//! The Event Calculus with delayed effects (ECDE, §3.2 of the STG paper) in the syntax of
//! the RTEC recogniser, compiled to TD by Algorithm 3 (§4).
//!
//! ```text
//! initiatedAt(safety(X)=verified, T) :- happensAt(repair(X), T).
//! initiatedAt(safety(X)=unverified, T) :- happensAt(warning(X), T).
//! fi(safety(X)=verified, safety(X)=trusted, 3).
//! ```
//!
//! The stages, each a module:
//!
//! * [`syntax`] — Prolog clauses over terms; never panics, recovers at the next clause.
//! * [`model`] — what each clause means: simple fluent rules (schema 10), statically
//!   determined fluents (schema 17 and RTEC's `holdsFor` form), `fi`/`p`/`initially`,
//!   RTEC declarations.
//! * [`translate`] — Algorithm 3 into a TD AST whose spans point at the EC text, with an
//!   [`Origin::Generated`] per rule, and how RTEC records of the input entities are laid
//!   out.
//!
//! [`compile_str`] then runs the engine's own lowering, validation and stratification, so
//! the result is an ordinary [`Compiled`] (its `ast` is the translated TD program) and
//! errors found after translation point at the user's EC clause.
//!
//! Semantics, as in the paper and RTEC: a fluent initiated at T holds from T+1; a
//! termination at T stops it from T+1; a simple fluent has at most one value at a time;
//! `fi(F=V, F=V2, D)` initiates `F=V2` D time points after an initiation of `F=V` unless
//! `F=V` is terminated in between (or, with `p(F=V)`, initiated again in between).

pub mod codes;
pub mod model;
pub mod recognitions;
pub mod records;
pub mod syntax;
pub mod translate;

use crate::records::RtecShape;
pub use crate::translate::Timing;
use stgflow_lang::Compiled;
use stgflow_lang::diag::Sources;

/// A compiled event description.
#[derive(Debug)]
pub struct EcProgram {
    /// The translated TD program, taken through the engine's analysis.
    pub compiled: Compiled,
    /// How RTEC records of each input fluent are laid out (input events are the default
    /// shape and are not listed).
    pub shapes: Vec<(String, RtecShape)>,
    /// The fluent-value pairs RTEC computes for the fluents its grounding declarations
    /// name (`--mode rtec` prints only those of such a fluent).
    pub grounded: Vec<(String, Option<stgflow_lang::value::Value>)>,
    /// How RTEC writes the fluents with compound arguments (`--mode rtec`), by TD name.
    pub printed: Vec<(String, model::Printed)>,
    /// The fluents kept by `intDurGreater`, each with its duration in time points
    /// ([`translate::Translation::longer`]).
    pub longer: Vec<(String, u32)>,
    /// The rules by which the dynamic domains grow with the input (RTEC's
    /// `dynamicDomain`), for a caller that reads the input ahead.
    pub domains: Vec<translate::DomainRule>,
}

/// Compiles an event description; `name` is how diagnostics refer to the file.
pub fn compile_str(name: &str, text: &str) -> EcProgram {
    compile_files(&[(name, text)])
}

/// Compiles an event description given in several files, `(name, text)` each: RTEC's
/// rules and its background knowledge, read as one list of clauses in the order given.
/// Diagnostics name the file each clause is in; the first file is the program's.
pub fn compile_files(files: &[(&str, &str)]) -> EcProgram {
    compile_files_with(files, Options::default())
}

/// How a description is read.
#[derive(Clone, Copy, Debug, Default)]
pub struct Options {
    /// When `start`/`end` happen (RTEC's files are read with [`Timing::Rtec`]).
    pub timing: Timing,
    /// The timeline's first time point (`--from`): background knowledge holds from it.
    pub start: u64,
}

/// [`compile_files`] read as `options` say. A directive that loads a file (`:-
/// ['areas.prolog'].`) is an error here: [`compile_files_loading`] loads them.
pub fn compile_files_with(files: &[(&str, &str)], options: Options) -> EcProgram {
    compile_files_loading(files, options, &mut |_, path| {
        Err(format!(
            "no file is loaded here: give `{path}` as one more program file"
        ))
    })
}

/// How a caller loads the file a directive names: `load(from, path)`, with `from` the
/// loading file's name, gives the file's name for diagnostics and its text; `None` where
/// it was loaded before, an error message where it cannot be read.
pub type Load<'a> = dyn FnMut(&str, &str) -> Result<Option<(String, String)>, String> + 'a;

/// [`compile_files_with`], where each file a directive loads (`:- ['areas.prolog'].`,
/// `consult`, `ensure_loaded`, `include`: RTEC's `loadStaticData.prolog`) is read through
/// `load` and its clauses join the description's, right after the loading file's.
pub fn compile_files_loading(
    files: &[(&str, &str)],
    options: Options,
    load: &mut Load<'_>,
) -> EcProgram {
    let mut sources = Sources::new();
    let mut clauses = Vec::new();
    let mut diagnostics = stgflow_lang::diag::Diagnostics::default();
    let mut first = None;
    // Files still to read, the next on top: a file's loads go before the files after it.
    let mut pending: Vec<(String, String)> = (files.iter().rev())
        .map(|&(name, text)| (name.to_owned(), text.to_owned()))
        .collect();
    while let Some((name, text)) = pending.pop() {
        let file = sources.add(&name, &text);
        first.get_or_insert(file);
        if let Some(at) = pre_processing(&text) {
            // Prolog code RTEC runs before each query: one error, not one per clause.
            diagnostics.push(
                stgflow_lang::diag::Diagnostic::error(
                    codes::Code::E503,
                    "this file is RTEC's pre-processing, Prolog code that stgflow cannot run",
                )
                .with_label(
                    stgflow_lang::diag::Span::new(file, at..at + "preProcessing".len()),
                    "`preProcessing/1`: run by RTEC before each query",
                )
                .with_help("define what it computes in ECDE and give that file instead (for CAVIAR's `distance`: datasets/ec/caviar_distance.ec)"),
            );
            continue;
        }
        let parsed = syntax::parse(file, &text);
        clauses.extend(parsed.clauses);
        diagnostics.extend(parsed.diagnostics);
        for consult in parsed.consults.iter().rev() {
            match load(&name, &consult.path) {
                Ok(Some(loaded)) => pending.push(loaded),
                Ok(None) => {}
                Err(message) => diagnostics.push(
                    stgflow_lang::diag::Diagnostic::error(
                        codes::Code::E514,
                        format!("cannot load `{}`: {message}", consult.path),
                    )
                    .with_label(consult.span, "the file this directive loads"),
                ),
            }
        }
    }
    let file = first.unwrap_or_else(|| sources.add("", ""));
    let (items, classified) = model::classify(&clauses);
    let items = model::close_open_background(items);
    diagnostics.extend(classified);
    // Every clause that could be read is translated, so that the errors of the later
    // stages come in the same run. A clause with an error is left out, so the warnings
    // that follow from it (a `p` whose `fi` was left out) are not reported.
    let had_errors = diagnostics.has_errors();
    let translation = translate::translate(&items, file, options);
    for diagnostic in translation.diagnostics.iter() {
        if diagnostic.is_error() || !had_errors {
            diagnostics.push(diagnostic.clone());
        }
    }
    EcProgram {
        compiled: stgflow_lang::compile(
            sources,
            file,
            translation.program,
            translation.origins,
            diagnostics,
        ),
        shapes: translation.shapes,
        grounded: translation.grounded,
        printed: translation.printed,
        longer: translation.longer,
        domains: translation.domains,
    }
}

/// Where `text` defines RTEC's `preProcessing/1` (a clause at the start of a line): the
/// byte offset of the name. Read off the text, as Prolog code need not parse as ECDE.
fn pre_processing(text: &str) -> Option<usize> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start().len();
        if line.trim_start().starts_with("preProcessing(") {
            return Some(offset + indent);
        }
        offset += line.len();
    }
    None
}

impl EcProgram {
    /// The format of RTEC records of this description's input entities; with
    /// `claims_csv`, `.csv` files are read as such records.
    pub fn records(&self, claims_csv: bool) -> records::RtecRecords {
        records::RtecRecords::new(self.shapes.iter().cloned(), claims_csv)
    }
}
