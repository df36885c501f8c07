//! An answer as JSON (`stgflow explain --json`), the same tree the text shows: each
//! derivation with its fact and rule and its conditions, a fact derived earlier in the
//! tree named once (`derived_above`), a fact kept by the same rule over many time points
//! summarised as a `chain` with the derivation where it starts, and the tree cut at
//! `--depth` (`deeper`).

use std::collections::BTreeSet;
use std::fmt::Write as _;

use stgflow_io::sink::json_string as quoted;
use stgflow_lang::diag::Sources;
use stgflow_lang::ir::Program;

use super::{
    Answer, Derivation, GroundFact, HEAD_MISMATCH, NotHolding, Scaled, Step, chain, rule_text,
};

/// `answer` as one JSON object (and a newline), times in units of `scale` per time point,
/// at most `depth` levels deep.
pub fn render_json(
    program: &Program,
    sources: &Sources,
    answer: &Answer,
    scale: u64,
    depth: Option<usize>,
) -> String {
    let at = Scaled {
        program,
        sources,
        scale,
        depth,
    };
    let mut out = String::new();
    match answer {
        Answer::Holds(derivation) => {
            let mut shown = BTreeSet::new();
            let _ = write!(
                out,
                "{{\"fact\":{},\"holds\":true,\"derivation\":{}}}",
                quoted(&at.fact(derivation.fact())),
                at.json(derivation, 0, &mut shown)
            );
        }
        Answer::DoesNotHold(fact, reason) => {
            let reason = match reason {
                NotHolding::OutsideTimeline => "\"outside the timeline\"".to_owned(),
                NotHolding::NotInInput => "\"an input predicate, not in the input\"".to_owned(),
                NotHolding::Rules(rules) => {
                    let failed: Vec<String> = rules
                        .iter()
                        .filter(|(_, why)| why != HEAD_MISMATCH)
                        .map(|(rule, why)| {
                            format!(
                                "{{\"rule\":{},\"why\":{}}}",
                                quoted(&rule_text(program, sources, *rule).join(" ")),
                                quoted(why)
                            )
                        })
                        .collect();
                    format!("{{\"rules\":[{}]}}", failed.join(","))
                }
            };
            let _ = write!(
                out,
                "{{\"fact\":{},\"holds\":false,\"reason\":{reason}}}",
                quoted(&at.fact(fact))
            );
        }
    }
    out.push('\n');
    out
}

impl Scaled<'_> {
    /// A derivation `level` levels down.
    fn json(
        &self,
        derivation: &Derivation,
        level: usize,
        shown: &mut BTreeSet<GroundFact>,
    ) -> String {
        let Derivation::Rule { rule, body, fact } = derivation else {
            return format!(
                "{{\"fact\":{},\"input\":true}}",
                quoted(&self.fact(derivation.fact()))
            );
        };
        shown.insert(fact.clone());
        let head = format!(
            "\"fact\":{},\"rule\":{}",
            quoted(&self.fact(fact)),
            quoted(&rule_text(self.program, self.sources, *rule).join(" "))
        );
        if self.depth.is_some_and(|depth| level >= depth) {
            return format!("{{{head},\"deeper\":true}}");
        }
        let (steps, start) = chain(derivation);
        if steps >= 3 {
            let start_fact = start.fact();
            shown.insert(start_fact.clone());
            return format!(
                "{{{head},\"chain\":{{\"from\":{},\"to\":{},\"time_points\":{}}},\"start\":{}}}",
                (start_fact.time + 1) * self.scale,
                (fact.time - 1) * self.scale,
                steps - 1,
                self.json(start, level + 1, shown)
            );
        }
        let conditions: Vec<String> = body
            .iter()
            .map(|step| self.json_step(step, level, shown))
            .collect();
        format!("{{{head},\"body\":[{}]}}", conditions.join(","))
    }

    fn json_step(&self, step: &Step, level: usize, shown: &mut BTreeSet<GroundFact>) -> String {
        match step {
            Step::Holds(inner) => {
                let inner = self.through(inner);
                let fact = quoted(&self.fact(inner.fact()));
                match inner {
                    Derivation::Input(_) => format!("{{\"input\":{fact}}}"),
                    _ if shown.contains(inner.fact()) => format!("{{\"derived_above\":{fact}}}"),
                    _ => format!("{{\"holds\":{}}}", self.json(inner, level + 1, shown)),
                }
            }
            Step::Absent { pred, args, time } => {
                format!(
                    "{{\"absent\":{}}}",
                    quoted(&self.absent(*pred, args, *time))
                )
            }
            Step::Builtin(text) => format!("{{\"builtin\":{}}}", quoted(text)),
        }
    }
}
