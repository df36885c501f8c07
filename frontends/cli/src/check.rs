//! `stgflow check`: validates a program and prints a stage of its compilation.

use std::io::Write;

use stgflow_lang::Compiled;

use crate::args::{CheckArgs, Dump};
use crate::{Context, Failure, plural};

impl Context<'_> {
    pub(crate) fn check(&mut self, args: CheckArgs, stdout: &mut dyn Write) -> Result<(), Failure> {
        let started = std::time::Instant::now();
        let compiled = self.compile(&args.program, &args.background)?;
        let program = &compiled.program;
        let Some(analysis) = &compiled.analysis else {
            return Err(Failure::Reported);
        };
        let mut text = String::new();
        for dump in &args.dump {
            match dump {
                Dump::Ast => {
                    for item in &compiled.ast.items {
                        let span = match item {
                            stgflow_lang::syntax::ast::Item::Rule(rule) => rule.span,
                            stgflow_lang::syntax::ast::Item::Fact(atom) => atom.span,
                            stgflow_lang::syntax::ast::Item::Output(_, span) => *span,
                        };
                        text.push_str(&format!("{item}  % {}\n", compiled.sources.locate(span)));
                    }
                }
                Dump::Td => text.push_str(&dump_td(&compiled)),
                Dump::Ir => text.push_str(&dump_ir(&compiled)),
                Dump::Strata => text.push_str(&analysis.dump(program)),
                Dump::Plan => {
                    text.push_str(&stgflow_engine::dataflow_plan(
                        program,
                        analysis,
                        !args.no_lowering,
                    ));
                    text.push_str(&stgflow_engine::dataflow_partitioning(program));
                }
            }
        }
        if self.verbose {
            self.summarise(&compiled, analysis, &args, started);
        }
        if args.dump.is_empty() && !self.quiet {
            text = format!("ok: {}\n", shape(program, analysis));
        }
        stdout
            .write_all(text.as_bytes())
            .map_err(|e| Failure::Message(format!("cannot write the output: {e}")))
    }

    /// `check -v`: what the program became, on stderr: its rules and predicates, its
    /// strata and recursion through time, and the dataflow engine's components by kind.
    fn summarise(
        &mut self,
        compiled: &stgflow_lang::Compiled,
        analysis: &stgflow_lang::stratify::Analysis,
        args: &CheckArgs,
        started: std::time::Instant,
    ) {
        let program = &compiled.program;
        let derived = program.derived();
        let inputs = derived.iter().filter(|d| !**d).count();
        let kinds = stgflow_engine::dataflow_plan_kinds(program, analysis, !args.no_lowering);
        let components: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
        let _ = writeln!(
            self.stderr,
            "check: {}: {}; {inputs} input-only predicate{}, {} temporal SCC{}; dataflow plan: {}; {:.1} ms",
            args.program.display(),
            shape(program, analysis),
            plural(inputs),
            analysis.temporal_sccs.len(),
            plural(analysis.temporal_sccs.len()),
            components.join(", "),
            started.elapsed().as_secs_f64() * 1e3,
        );
    }
}

fn dump_ir(compiled: &Compiled) -> String {
    let program = &compiled.program;
    let mut text = String::from("% predicates: name/arity (time counted)\n");
    for (p, predicate) in program.predicates.iter().enumerate() {
        let kind = if program.is_derived(p) {
            "derived"
        } else {
            "input"
        };
        text.push_str(&format!(
            "{}/{} {kind}\n",
            predicate.name,
            predicate.arity + 1
        ));
    }
    text.push_str("% rules (assignments written `V := expr`)\n");
    for (r, rule) in program.rules.iter().enumerate() {
        let mut location = rule
            .origin
            .span()
            .map(|s| compiled.sources.locate(s))
            .unwrap_or_default();
        if let stgflow_lang::ir::Origin::Generated { by, .. } = &rule.origin {
            location = format!("{by}, from {location}");
        }
        text.push_str(&format!(
            "r{r}: {}  % {location}\n",
            program.display_rule(rule)
        ));
    }
    if !program.facts.is_empty() {
        text.push_str("% facts\n");
        for fact in &program.facts {
            let mut args: Vec<String> = fact.args.iter().map(ToString::to_string).collect();
            args.push(fact.time.to_string());
            text.push_str(&format!(
                "{}({}).\n",
                program.pred_name(fact.pred),
                args.join(", ")
            ));
        }
    }
    let outputs: Vec<&str> = program
        .output_predicates()
        .iter()
        .map(|&p| program.pred_name(p))
        .collect();
    let source = if program.outputs.is_some() {
        "#output"
    } else {
        "every derived predicate"
    };
    text.push_str(&format!("% output ({source}): {}\n", outputs.join(", ")));
    text
}

/// The TD program as compiled: a TD file as parsed, or a front end's translation, each
/// rule with where it came from.
fn dump_td(compiled: &Compiled) -> String {
    use stgflow_lang::ir::Origin;
    use stgflow_lang::syntax::ast::Item;
    let rules = compiled
        .ast
        .items
        .iter()
        .filter(|i| matches!(i, Item::Rule(_)))
        .count();
    // Lowering keeps rules in order; their origins line up when none was dropped.
    let origins: Vec<&Origin> = if rules == compiled.program.rules.len() {
        compiled.program.rules.iter().map(|r| &r.origin).collect()
    } else {
        Vec::new()
    };
    let mut text = String::new();
    let mut next = 0;
    for item in &compiled.ast.items {
        let note = match item {
            Item::Rule(rule) => {
                next += 1;
                match origins.get(next - 1) {
                    Some(Origin::Generated { by, span }) => match span {
                        Some(span) => format!("{by}, {}", compiled.sources.locate(*span)),
                        None => by.clone(),
                    },
                    _ => compiled.sources.locate(rule.span),
                }
            }
            Item::Fact(atom) => compiled.sources.locate(atom.span),
            Item::Output(_, span) => compiled.sources.locate(*span),
        };
        text.push_str(&format!("{item}  % {note}\n"));
    }
    text
}

/// "3 rules, 4 predicates, 2 strata, history of 2 time points".
fn shape(
    program: &stgflow_lang::ir::Program,
    analysis: &stgflow_lang::stratify::Analysis,
) -> String {
    format!(
        "{} rule{}, {} predicate{}, {} strat{}, history of {} time point{}",
        program.rules.len(),
        plural(program.rules.len()),
        program.predicates.len(),
        plural(program.predicates.len()),
        analysis.strata.len(),
        if analysis.strata.len() == 1 {
            "um"
        } else {
            "a"
        },
        analysis.max_horizon,
        plural(analysis.max_horizon as usize),
    )
}
