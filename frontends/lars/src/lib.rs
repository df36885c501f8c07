//! # stgflow-lars — plain LARS, in the Laser reasoner's syntax, compiled to TD
//!
//! A front end: it reads Laser rules (`q(A,B) :- time_win(10,0,1,diamond(p(A,B))) and
//! not(s)`), checks them as LARS, translates them to TD by Algorithm 2 of the STG paper
//! and hands the result to the engine's own lowering, validation and stratification, so
//! that the result is an ordinary [`stgflow_lang::Compiled`]. The engine knows nothing
//! about LARS; this crate knows nothing about evaluation.
//!
//! The stages, each a module:
//!
//! * [`syntax`] — the line-based parser (never panics; E201 syntax errors, E202
//!   constructs not supported: nested modalities, `@` at a number in a tuple window).
//! * [`check`] — LARS-level checks: arities (E206) and global stratification (E205, the
//!   cycle through `not` named with the user's rules).
//! * [`translate`] — Algorithm 2 into a TD syntax tree (E203 ungrounded time variables,
//!   E204 time variables as atom arguments, E207 too many instances, E208 a head `@`
//!   that is not forward-propagating), clipping □ windows at the timeline start. Every
//!   TD rule gets an [`Origin::Generated`] naming its LARS rule and pointing at the
//!   user's text.
//!
//! ## Semantics (LARS's, where Laser's implementation differs)
//!
//! * Windows are clipped at the start of the timeline: `time_win(n,0,1,box(a))` holds at
//!   t < t0+n when a held at every time point since t0.
//! * Laser's wider language, as LARS defines it: a window over a bare atom is the atom
//!   now; `diamond`, `box` and `@` outside a window range over the whole stream so far;
//!   `@(3, a)` reads the time point 3; `not` inside a modality is the dual negated
//!   (♢¬a = ¬□a, □¬a = ¬♢a, over the same window); a head `@(T1, h)` holds h at T1 = T
//!   + k for a body time T, and must not come before a time point the body reads.
//! * Negation is stratified globally and evaluated per stratum: `ok :- not(alarm)` with
//!   `alarm :- time_win(1,0,1,diamond(s))` reports `ok` exactly when `alarm` does not
//!   hold (Laser can put both in one stratum and report `ok` while `alarm` holds).
//! * `not(r(A,B))` with A, B bound by positive literals fails only for the bound
//!   instance (Laser fails the rule whenever any `r` atom holds).
//! * The stream's atoms of a rule head's predicate are read by the rules with the derived
//!   ones, but only derived atoms are printed (as Laser prints them):
//!   [`translate::Translation::inputs`] sends them to a predicate of their own.
//! * A tuple window counts the atoms of the stream, of every predicate (those the program
//!   does not know too). By default it reads them as Laser does ([`TupleReading::Laser`]):
//!   every atom of the evaluation time, and whole earlier time points while the atoms from
//!   there up to the evaluation time number at most n, so it can hold more than n atoms,
//!   and which it holds does not hang on the order of a time point's atoms in its line.
//!   [`TupleReading::Exact`] (`--tuple-window exact`) holds the last n atoms in stream
//!   order, cut inside a time point where the n-th last atom is (LARS's window, Def. 4 of
//!   the Laser paper, with the stream's order as its deterministic choice). One over a
//!   derived predicate is rejected (E202).
//! * `MATH` follows the engine's arithmetic: integers stay integers (division truncates,
//!   overflow and division by zero derive nothing); a float operand makes a float.
//!
//! The output predicates are the LARS rule heads (a `#output` in the translation), so the
//! generated window predicates are never printed.

pub mod ast;
pub mod check;
pub mod codes;
pub mod output;
pub mod stream;
pub mod syntax;
pub mod translate;

use stgflow_lang::Compiled;
use stgflow_lang::diag::Sources;
use stgflow_lang::ir::Origin;

/// Which atoms a tuple window of n holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TupleReading {
    /// Laser's: every atom of the time point evaluated, and whole earlier time points
    /// while their atoms up to it number at most n. What a time point holds does not
    /// hang on the order of its atoms in its line.
    #[default]
    Laser,
    /// LARS's window with the stream's order as its choice: the last n atoms.
    Exact,
}

/// Compiles LARS source text; `name` is how diagnostics refer to the file. Tuple windows
/// read as Laser's ([`TupleReading::Laser`]).
///
/// `Compiled::ast` holds the TD translation (print its items for `--dump td`), whose
/// spans point at the LARS text; `Compiled::program` its IR, every rule with an
/// [`Origin::Generated`].
pub fn compile_str(name: &str, text: &str) -> Compiled {
    compile_str_reading(name, text, TupleReading::default())
}

/// [`compile_str`] with tuple windows read as `reading` says.
pub fn compile_str_reading(name: &str, text: &str, reading: TupleReading) -> Compiled {
    let mut sources = Sources::new();
    let file = sources.add(name, text);
    let (lars, mut diagnostics) = syntax::parse(file, text);
    diagnostics.extend(check::arities(&lars));
    if !diagnostics.has_errors() {
        diagnostics.extend(check::stratification(&lars));
    }
    let translation = if diagnostics.has_errors() {
        translate::Translation::default()
    } else {
        let (translation, errors) = translate::translate(&lars);
        // A partial translation would only add follow-on errors (`#output` of rules left
        // out): report the LARS errors alone.
        if errors.has_errors() {
            diagnostics.extend(errors);
            translate::Translation::default()
        } else {
            translation
        }
    };
    let mut compiled = stgflow_lang::compile(
        sources,
        file,
        translation.program,
        translation.origins,
        diagnostics,
    );
    let program = &mut compiled.program;
    program.input_names = translation
        .inputs
        .into_iter()
        .map(|(name, target)| {
            let target = target.and_then(|t| program.pred_id(&t));
            (name, target)
        })
        .collect();
    program.passes_through = translation
        .reads
        .iter()
        .filter_map(|(read, name)| Some((program.pred_id(read)?, name.clone())))
        .collect();
    program.input_sequences = translation
        .sequences
        .iter()
        .filter_map(|(source, target)| Some((program.pred_id(source)?, program.pred_id(target)?)))
        .collect();
    program.tuple_windows = (translation.tuple_windows.iter())
        .filter_map(|(size, evict, start)| {
            Some(stgflow_lang::ir::TupleWindow {
                size: *size,
                evict: program.pred_id(evict)?,
                start: program.pred_id(start),
                whole_points: reading == TupleReading::Laser,
            })
        })
        .collect();
    compiled
}

/// Whether `origin` is a rule this front end generated.
pub fn is_generated(origin: &Origin) -> bool {
    matches!(origin, Origin::Generated { by, .. } if by.starts_with("LARS rule"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn td(text: &str) -> Vec<String> {
        let compiled = compile_str("t.lars", text);
        assert!(
            !compiled.has_errors(),
            "{}",
            compiled.render_diagnostics(false)
        );
        compiled.ast.items.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn example_2_translates_to_the_rules_of_examples_4_and_5() {
        let rules = td("verified(X) :- time_win(2,0,1,diamond(repair(X)))\n\
             threat(X,Y) :- time_win(2,0,1,box(trusted(X))) and time_win(2,0,1,@(U,unverified(Y))) and time_win(2,0,1,@(U,connected(X,Y)))\n");
        assert_eq!(
            rules,
            [
                // Rule (9), Example 4: one instance per T ↦ T-i; Example 5 shows T-1.
                "threat(X, Y, T) :- trusted__box2(X, T), unverified(Y, T), connected(X, Y, T).",
                "threat(X, Y, T) :- trusted__box2(X, T), unverified(Y, T-1), connected(X, Y, T-1).",
                "threat(X, Y, T) :- trusted__box2(X, T), unverified(Y, T-2), connected(X, Y, T-2).",
                // Rule (6), Example 5: verified is ⊞2♢ repair (the copy rule
                // `verified(X, T) :- repair♢2(X, T)` inlined).
                "verified(X1, T) :- repair(X1, T).",
                "verified(X1, T) :- repair(X1, T-1).",
                "verified(X1, T) :- repair(X1, T-2).",
                "trusted__box2_window(X1, T) :- trusted(X1, T), trusted(X1, T-1), trusted(X1, T-2).",
                "lars__tick(T) :- 0 = 0.",
                "lars__start(T) :- lars__tick(T), not lars__tick(T-1).",
                "trusted__since_start(X1, T) :- trusted(X1, T), lars__start(T).",
                "trusted__since_start(X1, T) :- trusted__since_start(X1, T-1), not trusted__since_start_stop(X1, T).",
                "trusted__since_start_stop(X1, T) :- trusted__since_start(X1, T-1), not trusted(X1, T).",
                "trusted__box2(X1, T) :- trusted__box2_window(X1, T).",
                "trusted__box2(X1, T) :- trusted__since_start(X1, T).",
                "#output verified, threat.",
            ]
        );
    }

    #[test]
    fn a_time_variable_used_as_a_value_is_assigned_and_windows_disable_instances() {
        let rules = td("q(T,A) :- time_win(1,0,1,@(T,p(A))) and time_win(0,0,1,@(T,r(A)))\n");
        assert_eq!(
            rules,
            [
                "q(T, A, Now) :- p(A, Now), r(A, Now), T = Now.",
                "#output q.",
            ]
        );
    }

    #[test]
    fn negated_extended_atoms() {
        let rules = td(
            "q(A) :- p(A) and not(time_win(1,0,1,@(U,s(A)))) and time_win(1,0,1,@(U,p(A))) and not(@(U,r))\n",
        );
        assert_eq!(
            rules,
            [
                "q(A, T) :- p(A, T), not s(A, T), p(A, T), not r(T).",
                "q(A, T) :- p(A, T), not s(A, T-1), p(A, T-1), not r(T-1).",
                "#output q.",
            ]
        );
    }

    #[test]
    fn laser_forms_translate_as_lars_defines_them() {
        let rules = td(
            "@(T,high(V)) :- time_win(2,0,1,@(T,a(V))) and COMP(>=,V,18)\n\
             @(T1,due(X)) :- time_win(1,0,1,@(T,o(X))) and paid(X) and MATH(+,T1,T,1)\n\
             e(X) :- diamond(p(X)) and box(not(s(X))) and time_win(3,0,1,r(X)) and @(4,p(X))\n",
        );
        assert_eq!(
            rules,
            [
                // Every atom read at the head's time: one instance.
                "high(V, Now) :- a(V, Now), V >= 18.",
                // T ↦ Now holds `due` at Now+1, T ↦ Now-1 at Now: each instance shifted.
                "due(X, Now) :- o(X, Now-1), paid(X, Now-1), T1 = T+1, T = Now-1.",
                "due(X, Now) :- o(X, Now-1), paid(X, Now), T1 = T+1, T = Now-1.",
                // ♢ and □¬ (= ¬♢) over the whole stream, a window over a bare atom, `@` at
                // a number.
                "e(X, T) :- p__ever(X, T), not s__ever(X, T), r(X, T), p__at__ever(4, X, T).",
                "p__ever(X1, T) :- p(X1, T).",
                "p__ever(X1, T) :- p__ever(X1, T-1).",
                "s__ever(X1, T) :- s(X1, T).",
                "s__ever(X1, T) :- s__ever(X1, T-1).",
                "p__at(X0, X1, T) :- p(X1, T), X0 = T.",
                "p__at__ever(X1, X2, T) :- p__at(X1, X2, T).",
                "p__at__ever(X1, X2, T) :- p__at__ever(X1, X2, T-1).",
                "#output high, due, e.",
            ]
        );
    }

    #[test]
    fn every_rule_carries_its_lars_origin() {
        let compiled = compile_str(
            "t.lars",
            "a :- time_win(3,0,1,box(b))\nc(X) :- d(X) and not(a)\n",
        );
        assert!(!compiled.has_errors());
        assert!(
            compiled
                .program
                .rules
                .iter()
                .all(|r| is_generated(&r.origin) && r.origin.span().is_some())
        );
        let second = compiled
            .program
            .rules
            .iter()
            .find(|r| compiled.program.pred_name(r.head.pred) == "c");
        assert_eq!(
            second.map(|r| compiled.sources.locate(r.origin.span().unwrap_or_default())),
            Some("t.lars:2:1".to_owned())
        );
    }

    #[test]
    fn errors_are_reported_in_lars_terms() {
        let compiled = compile_str(
            "t.lars",
            "q(T) :- not(@(T,p))\nr(A) :- time_win(2,0,1,@(A,s(A)))\n",
        );
        let codes: Vec<&str> = compiled.diagnostics.iter().map(|d| d.code).collect();
        assert_eq!(codes, ["E203", "E204"]);
    }
}
