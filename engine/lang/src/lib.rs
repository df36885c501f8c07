//! # stgflow-lang — the language: Temporal Datalog with stratified negation
//!
//! TD rules `h(X, T) :- b(X, T-k), not c(X, T-k)` with every k ≥ 0, and everything that
//! can be known about a program before it runs. A pipeline of explicit stages, each a
//! module:
//!
//! * [`value`] — constants ([`value::Value`]) and rows of them ([`value::Row`]), the
//!   data every evaluator moves.
//! * [`diag`] — diagnostics with a code, a message, labelled spans and a hint, rendered
//!   with source excerpts; the parser and every later stage report through them and never
//!   panic on user input.
//! * [`syntax`] — the TD surface syntax: a parser that never fails, returning what it
//!   could parse and a diagnostic per error.
//! * [`ir`] — the rule model: predicates and variables resolved, time terms split off as
//!   offsets, built-ins classified; every rule carries an [`ir::Origin`], so an error in a
//!   front end's translation points at the user's own text.
//! * [`validate`] — safety and temporal stratification, with errors that name the
//!   variable or the cycle.
//! * [`stratify`] — the incremental stratification (Definition 14 of the STG paper),
//!   temporal SCCs and forgetting horizons (Proposition 1).
//!
//! [`compile`] is the tail every front end ends with: a TD syntax tree (parsed, or
//! translated from LARS or the Event Calculus) lowered, validated and stratified into a
//! [`Compiled`] program.

pub mod diag;
pub mod ir;
pub mod stratify;
pub mod syntax;
pub mod validate;
pub mod value;

use diag::{Diagnostics, FileId, Sources};

/// A program taken through parse → lower → validate → stratify.
#[derive(Debug)]
pub struct Compiled {
    pub sources: Sources,
    pub file: FileId,
    /// The TD syntax tree: the program as parsed, or a front end's translation (spans
    /// point into the front end's source text).
    pub ast: syntax::ast::Program,
    pub program: ir::Program,
    /// Present when the program has no errors.
    pub analysis: Option<stratify::Analysis>,
    pub diagnostics: Diagnostics,
}

impl Compiled {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.has_errors()
    }

    /// All diagnostics rendered with source excerpts.
    pub fn render_diagnostics(&self, color: bool) -> String {
        self.diagnostics.render(&self.sources, color)
    }
}

/// Compiles TD source text; `name` is how diagnostics refer to the file.
pub fn compile_str(name: &str, text: &str) -> Compiled {
    let mut sources = Sources::new();
    let file = sources.add(name, text);
    let (ast, diagnostics) = syntax::parse(file, text);
    compile(sources, file, ast, Vec::new(), diagnostics)
}

/// Lowers `ast` (a TD program in `file` of `sources`, parsed or translated), validates
/// and stratifies it, adding to the `diagnostics` found before. Validation (safety, cycles
/// through negation) runs on every rule that lowered, errors elsewhere or not, so a file's
/// errors come in one run: each is about its own rule, and dropping the rules that did
/// not lower can only remove cycles, never add one. The analysis runs only on a program
/// without errors.
///
/// `origins` are a front end's provenance for the rules of `ast`, in order (empty for a
/// TD file): lowering gives every rule an [`ir::Origin::File`] and drops the rules it
/// rejects, so each lowered rule takes the origin of the next AST rule with its span.
pub fn compile(
    sources: Sources,
    file: FileId,
    ast: syntax::ast::Program,
    origins: Vec<ir::Origin>,
    mut diagnostics: Diagnostics,
) -> Compiled {
    let (mut program, lowering) = ir::lower(&ast);
    diagnostics.extend(lowering);
    attach_origins(&ast, origins, &mut program);
    diagnostics.extend(validate::validate(&program));
    let analysis = (!diagnostics.has_errors()).then(|| stratify::analyse(&program));
    Compiled {
        sources,
        file,
        ast,
        program,
        analysis,
        diagnostics,
    }
}

/// Replaces the `Origin::File` of each lowered rule with the matching one of `origins`
/// (see [`compile`]): rules are matched to the AST's rules in order, by span.
fn attach_origins(ast: &syntax::ast::Program, origins: Vec<ir::Origin>, program: &mut ir::Program) {
    if origins.is_empty() {
        return;
    }
    let spans = ast.items.iter().filter_map(|item| match item {
        syntax::ast::Item::Rule(rule) => Some(rule.span),
        _ => None,
    });
    let mut candidates = spans.zip(origins);
    for rule in &mut program.rules {
        let span = rule.origin.span();
        for (candidate, origin) in candidates.by_ref() {
            if Some(candidate) == span {
                rule.origin = origin;
                break;
            }
        }
    }
}
