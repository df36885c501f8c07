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
//! * [`reach`] — how long a constant read in a predicate's facts can be held, by which
//!   a stream's long symbols are freed.
//! * [`typos`] and [`ticking`] — warnings about a valid program: a predicate that looks
//!   misspelt, a rule that makes every time point of the timeline cost.
//!
//! [`compile`] is the tail every front end ends with: a TD syntax tree (parsed, or
//! translated from LARS or the Event Calculus) lowered, validated and stratified into a
//! [`Compiled`] program.

pub mod diag;
pub mod ir;
pub mod reach;
pub mod stratify;
pub mod syntax;
pub mod ticking;
pub mod typos;
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
/// TD file): lowering gives every rule an [`ir::Origin::File`], and each lowered rule
/// takes the origin of the AST rule it came from instead.
pub fn compile(
    sources: Sources,
    file: FileId,
    ast: syntax::ast::Program,
    origins: Vec<ir::Origin>,
    mut diagnostics: Diagnostics,
) -> Compiled {
    let (mut program, lowering, traced) = ir::lower_traced(&ast);
    diagnostics.extend(lowering);
    // Only a TD file as written: a front end's translation has names of its own making.
    let written = origins.is_empty();
    attach_origins(origins, &traced, &mut program);
    diagnostics.extend(validate::validate(&program));
    if written {
        diagnostics.extend(typos::typos(&program));
    }
    let analysis = (!diagnostics.has_errors()).then(|| stratify::analyse(&program));
    if analysis.is_some() {
        diagnostics.extend(ticking::ticking(&program));
    }
    Compiled {
        sources,
        file,
        ast,
        program,
        analysis,
        diagnostics,
    }
}

/// Gives each lowered rule the origin of the AST rule it was lowered from (`traced`,
/// see [`ir::lower_traced`]): a `#count` lowers to several rules, which all take its
/// origin; an AST rule with errors lowers to none.
fn attach_origins(origins: Vec<ir::Origin>, traced: &[usize], program: &mut ir::Program) {
    if origins.is_empty() {
        return;
    }
    for (rule, &from) in program.rules.iter_mut().zip(traced) {
        if let Some(origin) = origins.get(from) {
            rule.origin = origin.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A front end's origins follow the rules they belong to past a `#count`, which lowers
    /// to several rules, and past a rule that does not lower.
    #[test]
    fn origins_follow_their_rules_past_counts_and_rejected_rules() {
        let text = "n(M, N, T) :- m(M, T), N = #count { V : v(V, M, T) }.\n\
                    bad(X, T) :- q(X, S).\n\
                    p(X, T) :- q(X, T).\n";
        let mut sources = Sources::new();
        let file = sources.add("p.tdl", text);
        let (ast, diagnostics) = syntax::parse(file, text);
        let origins = ["count", "bad", "copy"]
            .map(|by| ir::Origin::Generated {
                by: by.to_owned(),
                span: None,
            })
            .to_vec();
        let compiled = compile(sources, file, ast, origins, diagnostics);
        let by: Vec<(String, &str)> = (compiled.program.rules.iter())
            .map(|rule| {
                let head = &compiled.program.predicates[rule.head.pred].name;
                let by = match &rule.origin {
                    ir::Origin::Generated { by, .. } => by.as_str(),
                    ir::Origin::File(_) => "file",
                };
                (head.clone(), by)
            })
            .collect();
        assert!(by.len() > 2, "the count lowers to several rules: {by:?}");
        assert!(
            by.iter().all(|(head, _)| head != "bad"),
            "two time variables: not lowered"
        );
        for (head, by) in &by {
            let expected = if head == "p" { "copy" } else { "count" };
            assert_eq!(*by, expected, "{head}: {by:?}");
        }
    }
}
