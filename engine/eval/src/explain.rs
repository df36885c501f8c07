//! Why a fact holds, or why it does not: `stgflow explain PROGRAM STREAM 'trusted(a,4)'`.
//!
//! The program is materialised over the whole stream with the reference machinery
//! ([`crate::eval`]), keeping every time point (explanations are for small inputs). A
//! derivation is then searched top-down: a rule whose head matches the fact, a binding of
//! its body under which every positive condition holds at its time point, every negated
//! condition is absent and every built-in is true, and, recursively, a derivation of each
//! positive condition of a derived predicate, down to input facts.
//!
//! * **Every tree is a real derivation.** Under offset-0 recursion a fact could be
//!   "derived" from itself; the search refuses a fact already on the path, so what it
//!   prints is well-founded. It backtracks over rules and bindings until every branch
//!   bottoms out in input facts.
//! * **Rules are shown as written.** Each step names the TD rule, its location, and for
//!   rules a front end produced ([`stgflow_lang::ir::Origin::Generated`]) the LARS or EC rule the
//!   user wrote, as text.
//! * **A fact that does not hold** gets, per rule that could derive it, the condition that
//!   failed under the binding that got furthest (e.g. "`not uvf(a, 4)` fails: `uvf(a, 4)`
//!   holds"), or why no rule applies.
//! * A fact that is both in the input and derivable is explained as input.

mod json;

use std::collections::BTreeSet;
use std::fmt::Write as _;

use hashbrown::HashMap;

use crate::eval::{Facts, Relation, RulePlan, compare, eval, evaluate_stratum, stratified_plans};
use stgflow_io::drive::{FactSource, RunError, TimePoints, Timeline, feed};
use stgflow_lang::diag::Sources;
use stgflow_lang::ir::{Atom, Literal, Origin, PredId, Program, Term};
use stgflow_lang::stratify::Analysis;
use stgflow_lang::value::Row;
use stgflow_lang::value::Value;

pub use json::render_json;

#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    #[error("cannot read the fact `{0}`: write it as `pred(arg, …, time)` with the time last")]
    Syntax(String),
    #[error("the program has no predicate `{0}`{1}")]
    UnknownPredicate(String, String),
    #[error("`{name}` has {expected} argument(s) with the time, not {found}")]
    Arity {
        name: String,
        expected: usize,
        found: usize,
    },
    #[error(transparent)]
    Run(#[from] RunError),
}

/// A ground fact at a time point.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroundFact {
    pub pred: PredId,
    pub args: Row,
    pub time: u64,
}

/// `; did you mean `p`?` for the predicate of `program` nearest to `name`, or nothing.
pub fn did_you_mean(program: &Program, name: &str) -> String {
    let names = program.predicates.iter().map(|p| p.name.as_str());
    stgflow_lang::diag::closest(name, names)
        .map_or(String::new(), |close| format!("; did you mean `{close}`?"))
}

/// Parses `trusted(a, 4)` (time last) against `program`'s predicates.
pub fn parse_fact(program: &Program, text: &str) -> Result<GroundFact, ExplainError> {
    let syntax = || ExplainError::Syntax(text.to_owned());
    let text = text.trim().trim_end_matches('.');
    let open = text.find('(').ok_or_else(syntax)?;
    let inner = text[open + 1..].strip_suffix(')').ok_or_else(syntax)?;
    let name = text[..open].trim();
    let mut parts: Vec<&str> = inner.split(',').map(str::trim).collect();
    let time: u64 = parts
        .pop()
        .and_then(|t| t.parse().ok())
        .ok_or_else(syntax)?;
    let pred = program.pred_id(name).ok_or_else(|| {
        ExplainError::UnknownPredicate(name.to_owned(), did_you_mean(program, name))
    })?;
    let arity = program.predicates[pred].arity;
    if parts.len() == 1 && parts[0].is_empty() && arity == 0 {
        parts.clear();
    }
    if parts.len() != arity {
        return Err(ExplainError::Arity {
            name: name.to_owned(),
            expected: arity + 1,
            found: parts.len() + 1,
        });
    }
    let args = parts
        .iter()
        .map(|p| {
            let unquoted = p
                .strip_prefix('"')
                .and_then(|p| p.strip_suffix('"'))
                .unwrap_or(p);
            if unquoted.len() != p.len() {
                Value::sym(unquoted)
            } else {
                Value::parse_loose(p)
            }
        })
        .collect();
    Ok(GroundFact { pred, args, time })
}

/// Everything that held at every time point of a run.
#[derive(Debug)]
pub struct Materialised<'p> {
    program: &'p Program,
    facts: HashMap<(PredId, u64), Relation>,
    input: HashMap<(PredId, u64), Relation>,
    pub first: Option<u64>,
    pub last: Option<u64>,
    /// Input time units per time point (`--tick`): the times the reasons name are
    /// multiplied by it, as `run` prints them.
    pub time_scale: u64,
}

struct Collector<'a, 'p> {
    plans: &'a [RulePlan],
    strata: &'a [(Vec<usize>, bool)],
    state: Materialised<'p>,
    current: u64,
    /// The last time point wanted: nothing after it can change what held before.
    through: Option<u64>,
}

/// The collector's way to end the run at its last time point wanted.
#[derive(Debug, thiserror::Error)]
#[error("the time point explained was reached")]
struct Reached;

impl Facts for Collector<'_, '_> {
    type Relation = Relation;

    fn relation(&self, pred: PredId, time: u64) -> Option<&Relation> {
        self.state.facts.get(&(pred, time))
    }

    fn insert(&mut self, pred: PredId, tuple: Row) -> bool {
        self.state
            .facts
            .entry((pred, self.current))
            .or_default()
            .insert(tuple)
    }
}

impl TimePoints for Collector<'_, '_> {
    fn complete(&mut self, t: u64, input: Vec<(PredId, Row)>) -> Result<(), RunError> {
        self.current = t;
        self.state.first.get_or_insert(t);
        self.state.last = Some(t);
        for (pred, tuple) in input {
            self.state
                .input
                .entry((pred, t))
                .or_default()
                .insert(tuple.clone());
            self.insert(pred, tuple);
        }
        let (plans, strata) = (self.plans, self.strata);
        for (rules, recursive) in strata {
            evaluate_stratum(plans, rules, *recursive, t, self);
        }
        if self.through.is_some_and(|through| t >= through) {
            return Err(RunError::Evaluation(Box::new(Reached)));
        }
        Ok(())
    }
}

/// Evaluates `program` over `sources`, keeping every time point up to `through` (all of
/// them with `None`): a fact at t depends on nothing after t, so explaining it needs no
/// more. The timeline is the run's: it is not cut at `through`, only not read past it.
pub fn materialise<'p>(
    program: &'p Program,
    analysis: &Analysis,
    sources: &mut [Box<dyn FactSource + '_>],
    timeline: Timeline,
    through: Option<u64>,
) -> Result<Materialised<'p>, RunError> {
    let (plans, strata) = stratified_plans(program, analysis);
    let mut collector = Collector {
        plans: &plans,
        strata: &strata,
        state: Materialised {
            program,
            facts: HashMap::new(),
            input: HashMap::new(),
            first: None,
            last: None,
            time_scale: 1,
        },
        current: 0,
        through,
    };
    match feed(program, sources, timeline, &mut collector) {
        Ok(_) => Ok(collector.state),
        Err(RunError::Evaluation(e)) if e.is::<Reached>() => Ok(collector.state),
        Err(e) => Err(e),
    }
}

/// A derivation tree.
#[derive(Clone, Debug, PartialEq)]
pub enum Derivation {
    /// The fact is in the input.
    Input(GroundFact),
    Rule {
        fact: GroundFact,
        rule: usize,
        body: Vec<Step>,
    },
}

impl Derivation {
    pub fn fact(&self) -> &GroundFact {
        match self {
            Derivation::Input(fact) | Derivation::Rule { fact, .. } => fact,
        }
    }
}

/// One body condition of a rule instance.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    Holds(Derivation),
    /// A negated condition: no fact matched (`None` arguments were wildcards).
    Absent {
        pred: PredId,
        args: Vec<Option<Value>>,
        time: u64,
    },
    /// A comparison or assignment, instantiated.
    Builtin(String),
}

/// Why a fact does not hold.
#[derive(Clone, Debug, PartialEq)]
pub enum NotHolding {
    /// The time point is not on the timeline.
    OutsideTimeline,
    /// No rule defines the predicate, and the fact is not in the input.
    NotInInput,
    /// Per rule with this head predicate: what failed.
    Rules(Vec<(usize, String)>),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    Holds(Derivation),
    DoesNotHold(GroundFact, NotHolding),
}

type Env = Vec<Option<Value>>;

/// The reason given for a rule whose head cannot be the fact (not printed).
const HEAD_MISMATCH: &str = "its head does not match";

impl Materialised<'_> {
    fn holds(&self, pred: PredId, args: &[Value], time: u64) -> bool {
        self.facts
            .get(&(pred, time))
            .is_some_and(|r| r.contains(args))
    }

    fn relation(&self, atom: &Atom, t: u64) -> Option<(&Relation, u64)> {
        let time = t.checked_sub(u64::from(atom.offset))?;
        self.facts.get(&(atom.pred, time)).map(|r| (r, time))
    }

    /// Explains `fact`: a derivation when it holds, the reasons when it does not.
    pub fn explain(&self, fact: &GroundFact) -> Answer {
        if self.holds(fact.pred, &fact.args, fact.time) {
            let mut path = Vec::new();
            if let Some(derivation) = self.derive(fact, &mut path) {
                return Answer::Holds(derivation);
            }
        }
        let outside = match (self.first, self.last) {
            (Some(first), Some(last)) => fact.time < first || fact.time > last,
            _ => true,
        };
        let reason = if outside {
            NotHolding::OutsideTimeline
        } else if !self.program.is_derived(fact.pred) {
            NotHolding::NotInInput
        } else {
            NotHolding::Rules(
                self.program
                    .rules
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| r.head.pred == fact.pred)
                    .map(|(i, _)| (i, self.failure(i, fact)))
                    .collect(),
            )
        };
        Answer::DoesNotHold(fact.clone(), reason)
    }

    fn derive(&self, fact: &GroundFact, path: &mut Vec<GroundFact>) -> Option<Derivation> {
        if self
            .input
            .get(&(fact.pred, fact.time))
            .is_some_and(|r| r.contains(&fact.args))
        {
            return Some(Derivation::Input(fact.clone()));
        }
        if path.contains(fact) {
            return None;
        }
        path.push(fact.clone());
        let mut found = None;
        for (index, rule) in self.program.rules.iter().enumerate() {
            if rule.head.pred != fact.pred {
                continue;
            }
            let mut env: Env = vec![None; rule.vars.len()];
            if !crate::eval::unify(&rule.head.args, &fact.args, &mut env, &mut Vec::new()) {
                continue;
            }
            if let Some(count) = &rule.count {
                found = self.counted(index, count, fact, &mut env, path);
                if found.is_some() {
                    break;
                }
                continue;
            }
            let mut result = None;
            self.solutions(index, fact.time, &mut env, &mut |env| {
                result = self.instance(index, fact, env, path);
                result.is_some()
            });
            if let Some(derivation) = result {
                found = Some(derivation);
                break;
            }
        }
        path.pop();
        found
    }

    /// A counting rule's fact: one instance of the body per value counted, after a step
    /// that says what was counted; `None` unless the count is the fact's.
    fn counted(
        &self,
        rule_index: usize,
        count: &stgflow_lang::ir::Count,
        fact: &GroundFact,
        env: &mut Env,
        path: &mut Vec<GroundFact>,
    ) -> Option<Derivation> {
        let rule = &self.program.rules[rule_index];
        let result = env[count.result].take()?;
        let mut seen: Vec<Vec<Option<Value>>> = Vec::new();
        let mut body = Vec::new();
        let mut failed = false;
        self.solutions(rule_index, fact.time, env, &mut |env| {
            let counted: Vec<Option<Value>> = count.counted.iter().map(|&v| env[v]).collect();
            if !seen.contains(&counted) {
                match self.instance(rule_index, fact, env, path) {
                    Some(Derivation::Rule { body: steps, .. }) => body.extend(steps),
                    _ => failed = true,
                }
                seen.push(counted);
            }
            false
        });
        if failed || Value::Int(seen.len() as i64) != result {
            return None;
        }
        let names: Vec<&str> = count
            .counted
            .iter()
            .map(|&v| rule.vars[v].as_str())
            .collect();
        body.insert(
            0,
            Step::Builtin(format!(
                "{} = {result}: the number of distinct values of ({}) below",
                rule.vars[count.result],
                names.join(", ")
            )),
        );
        Some(Derivation::Rule {
            fact: fact.clone(),
            rule: rule_index,
            body,
        })
    }

    /// The rule instance under `env`, with a derivation of each positive condition.
    fn instance(
        &self,
        rule_index: usize,
        fact: &GroundFact,
        env: &Env,
        path: &mut Vec<GroundFact>,
    ) -> Option<Derivation> {
        let rule = &self.program.rules[rule_index];
        let mut body = Vec::with_capacity(rule.body.len());
        for literal in &rule.body {
            let step = match literal {
                Literal::Positive(atom) => {
                    let time = fact.time.checked_sub(u64::from(atom.offset))?;
                    // A wildcard stands for any value: try the matching facts in order.
                    let (relation, _) = self.relation(atom, fact.time)?;
                    let mut matching: Vec<&Row> = relation
                        .iter()
                        .filter(|tuple| {
                            atom.args.iter().zip(tuple.iter()).all(|(term, value)| {
                                value_of(term, env).is_none_or(|bound| bound == *value)
                            })
                        })
                        .collect();
                    matching.sort();
                    let derivation = matching.into_iter().find_map(|args| {
                        let body_fact = GroundFact {
                            pred: atom.pred,
                            args: args.clone(),
                            time,
                        };
                        self.derive(&body_fact, path)
                    })?;
                    Step::Holds(derivation)
                }
                Literal::Negative(atom) => match fact.time.checked_sub(u64::from(atom.offset)) {
                    Some(time) => Step::Absent {
                        pred: atom.pred,
                        args: atom.args.iter().map(|t| value_of(t, env)).collect(),
                        time,
                    },
                    // Time points before 0 do not exist: nothing holds there.
                    None => Step::Builtin(format!(
                        "not {}(…) at {}-{}  (before time point 0)",
                        self.program.pred_name(atom.pred),
                        fact.time,
                        atom.offset
                    )),
                },
                Literal::Compare { op, lhs, rhs, .. } => {
                    let (a, b) = (eval(lhs, env, fact.time)?, eval(rhs, env, fact.time)?);
                    Step::Builtin(format!("{a} {op} {b}"))
                }
                Literal::Assign { var, expr, .. } => {
                    let value = eval(expr, env, fact.time)?;
                    Step::Builtin(format!("{} = {value}", rule.vars[*var]))
                }
            };
            body.push(step);
        }
        Some(Derivation::Rule {
            fact: fact.clone(),
            rule: rule_index,
            body,
        })
    }

    /// Calls `accept` with every binding of the body of `rule` from position `at` on that
    /// satisfies it at `t`, until `accept` returns true (then returns true).
    fn solutions(
        &self,
        rule: usize,
        t: u64,
        env: &mut Env,
        accept: &mut dyn FnMut(&Env) -> bool,
    ) -> bool {
        let body = &self.program.rules[rule].body;
        let order = crate::stg::evaluation_order(body, env.len());
        self.solve(body, &order, 0, t, env, accept)
    }

    fn solve(
        &self,
        body: &[Literal],
        order: &[usize],
        step: usize,
        t: u64,
        env: &mut Env,
        accept: &mut dyn FnMut(&Env) -> bool,
    ) -> bool {
        let Some(&position) = order.get(step) else {
            return accept(env);
        };
        match &body[position] {
            Literal::Positive(atom) => {
                let Some((relation, _)) = self.relation(atom, t) else {
                    return false;
                };
                let mut tuples: Vec<&Row> = relation.iter().collect();
                tuples.sort();
                for tuple in tuples {
                    let mut newly = Vec::new();
                    let found = crate::eval::unify(&atom.args, tuple, env, &mut newly)
                        && self.solve(body, order, step + 1, t, env, accept);
                    for v in newly {
                        env[v] = None;
                    }
                    if found {
                        return true;
                    }
                }
                false
            }
            Literal::Negative(atom) => {
                !self.blocked(atom, t, env) && self.solve(body, order, step + 1, t, env, accept)
            }
            Literal::Compare { op, lhs, rhs, .. } => match (eval(lhs, env, t), eval(rhs, env, t)) {
                (Some(a), Some(b)) if compare(*op, a, b) => {
                    self.solve(body, order, step + 1, t, env, accept)
                }
                _ => false,
            },
            Literal::Assign { var, expr, .. } => {
                let Some(value) = eval(expr, env, t) else {
                    return false;
                };
                let previous = env[*var].replace(value);
                let found = self.solve(body, order, step + 1, t, env, accept);
                env[*var] = previous;
                found
            }
        }
    }

    /// The facts that make a negated atom fail under `env`, if any.
    fn blocked(&self, atom: &Atom, t: u64, env: &Env) -> bool {
        self.blocking(atom, t, env).is_some()
    }

    fn blocking(&self, atom: &Atom, t: u64, env: &Env) -> Option<Row> {
        let (relation, _) = self.relation(atom, t)?;
        let mut matching: Vec<&Row> = relation
            .iter()
            .filter(|tuple| {
                atom.args
                    .iter()
                    .zip(tuple.iter())
                    .all(|(term, value)| match term {
                        Term::Var(v) => env[*v] == Some(*value),
                        Term::Const(c) => c == value,
                        Term::Wildcard => true,
                    })
            })
            .collect();
        matching.sort();
        matching.first().map(|t| (*t).clone())
    }

    /// What fails in `rule` for `fact`: the first condition that no binding gets past,
    /// under the binding that gets furthest.
    fn failure(&self, rule_index: usize, fact: &GroundFact) -> String {
        let rule = &self.program.rules[rule_index];
        let mut env: Env = vec![None; rule.vars.len()];
        if !crate::eval::unify(&rule.head.args, &fact.args, &mut env, &mut Vec::new()) {
            return HEAD_MISMATCH.to_owned();
        }
        let order = crate::stg::evaluation_order(&rule.body, env.len());
        // The binding that reaches the furthest position, found by a search that records
        // its deepest step.
        let mut best: (usize, Env) = (0, env.clone());
        self.furthest(&rule.body, &order, 0, fact.time, &mut env, &mut best);
        let (step, env) = best;
        let Some(&position) = order.get(step) else {
            return "every condition holds, but a condition's derivation fails".to_owned();
        };
        let program = self.program;
        match &rule.body[position] {
            Literal::Positive(atom) => format!(
                "`{}` does not hold",
                atom_text(program, atom, &env, fact.time, self.time_scale)
            ),
            Literal::Negative(atom) => {
                let shown = atom_text(program, atom, &env, fact.time, self.time_scale);
                match self.blocking(atom, fact.time, &env) {
                    Some(tuple) => format!(
                        "`not {shown}` fails: `{}` holds",
                        fact_text(
                            program,
                            atom.pred,
                            &tuple,
                            (fact.time - u64::from(atom.offset)) * self.time_scale
                        )
                    ),
                    None => format!("`not {shown}` fails"),
                }
            }
            Literal::Compare { op, lhs, rhs, .. } => {
                match (eval(lhs, &env, fact.time), eval(rhs, &env, fact.time)) {
                    (Some(a), Some(b)) => format!("`{a} {op} {b}` is false"),
                    _ => "a comparison cannot be evaluated".to_owned(),
                }
            }
            Literal::Assign { var, .. } => {
                format!("`{}` cannot be computed", rule.vars[*var])
            }
        }
    }

    fn furthest(
        &self,
        body: &[Literal],
        order: &[usize],
        step: usize,
        t: u64,
        env: &mut Env,
        best: &mut (usize, Env),
    ) {
        if step > best.0 {
            *best = (step, env.clone());
        }
        let Some(&position) = order.get(step) else {
            return;
        };
        match &body[position] {
            Literal::Positive(atom) => {
                let Some((relation, _)) = self.relation(atom, t) else {
                    return;
                };
                let mut tuples: Vec<&Row> = relation.iter().collect();
                tuples.sort();
                for tuple in tuples {
                    let mut newly = Vec::new();
                    if crate::eval::unify(&atom.args, tuple, env, &mut newly) {
                        self.furthest(body, order, step + 1, t, env, best);
                    }
                    for v in newly {
                        env[v] = None;
                    }
                }
            }
            Literal::Negative(atom) => {
                if !self.blocked(atom, t, env) {
                    self.furthest(body, order, step + 1, t, env, best);
                }
            }
            Literal::Compare { op, lhs, rhs, .. } => {
                if let (Some(a), Some(b)) = (eval(lhs, env, t), eval(rhs, env, t)) {
                    if compare(*op, a, b) {
                        self.furthest(body, order, step + 1, t, env, best);
                    }
                }
            }
            Literal::Assign { var, expr, .. } => {
                if let Some(value) = eval(expr, env, t) {
                    let previous = env[*var].replace(value);
                    self.furthest(body, order, step + 1, t, env, best);
                    env[*var] = previous;
                }
            }
        }
    }
}

fn value_of(term: &Term, env: &Env) -> Option<Value> {
    match term {
        Term::Var(v) => env[*v],
        Term::Const(c) => Some(*c),
        Term::Wildcard => None,
    }
}

/// `p(a, 4)`.
pub fn fact_text(program: &Program, pred: PredId, args: &[Value], time: u64) -> String {
    let mut parts: Vec<String> = args.iter().map(ToString::to_string).collect();
    parts.push(time.to_string());
    // A predicate the stream's facts are read into under another name shows that name.
    let name = program
        .input_names
        .iter()
        .find(|(_, target)| *target == Some(pred))
        .map_or_else(|| program.pred_name(pred), |(name, _)| name.as_str());
    format!("{name}({})", parts.join(", "))
}

/// An atom instantiated under `env` at `t` (unbound variables keep their names), its
/// time in units of `scale` per time point.
fn atom_text(program: &Program, atom: &Atom, env: &Env, t: u64, scale: u64) -> String {
    let mut parts: Vec<String> = atom
        .args
        .iter()
        .map(|term| match term {
            Term::Var(v) => env[*v].map_or_else(|| "_".to_owned(), |value| value.to_string()),
            Term::Const(c) => c.to_string(),
            Term::Wildcard => "_".to_owned(),
        })
        .collect();
    parts.push(match t.checked_sub(u64::from(atom.offset)) {
        Some(time) => (time * scale).to_string(),
        None => format!("{}-{}", t * scale, u64::from(atom.offset) * scale),
    });
    format!("{}({})", program.pred_name(atom.pred), parts.join(", "))
}

/// How a rule is shown: its TD text and location, and for a translated rule the user's
/// rule it came from.
pub fn rule_text(program: &Program, sources: &Sources, rule: usize) -> Vec<String> {
    let Some(r) = program.rules.get(rule) else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    match &r.origin {
        Origin::File(span) => lines.push(format!(
            "rule r{rule} ({}): {}",
            sources.locate(*span),
            program.display_rule(r)
        )),
        Origin::Generated { by, span } => {
            lines.push(format!("rule r{rule}: {}", program.display_rule(r)));
            match span {
                Some(span) => lines.push(format!(
                    "  from {by} ({}): {}",
                    sources.locate(*span),
                    source_text(sources, *span)
                )),
                None => lines.push(format!("  from {by}")),
            }
        }
    }
    lines
}

/// The user's text at `span`, on one line.
fn source_text(sources: &Sources, span: stgflow_lang::diag::Span) -> String {
    sources
        .text(span.file)
        .get(span.range())
        .unwrap_or("")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// Renders an answer as an indented tree.
pub fn render(program: &Program, sources: &Sources, answer: &Answer) -> String {
    render_scaled(program, sources, answer, 1, None)
}

/// [`render`] with times in units of `scale` per time point (`--tick`), as `run` prints
/// them, and the tree drawn `depth` levels deep at most (`--depth`).
pub fn render_scaled(
    program: &Program,
    sources: &Sources,
    answer: &Answer,
    scale: u64,
    depth: Option<usize>,
) -> String {
    let mut text = String::new();
    match answer {
        Answer::Holds(derivation) => {
            let _ = writeln!(
                text,
                "{} holds",
                fact_text(
                    program,
                    derivation.fact().pred,
                    &derivation.fact().args,
                    derivation.fact().time * scale
                )
            );
            let mut shown = BTreeSet::new();
            let at = Scaled {
                program,
                sources,
                scale,
                depth,
            };
            at.derivation(derivation, "", &mut shown, &mut text);
        }
        Answer::DoesNotHold(fact, reason) => {
            let shown = fact_text(program, fact.pred, &fact.args, fact.time * scale);
            let _ = writeln!(text, "{shown} does not hold");
            match reason {
                NotHolding::OutsideTimeline => {
                    let _ = writeln!(text, "  time {} is not on the timeline", fact.time * scale);
                }
                NotHolding::NotInInput => {
                    let _ = writeln!(
                        text,
                        "  `{}` is an input predicate and {shown} is not in the input",
                        program.pred_name(fact.pred)
                    );
                }
                NotHolding::Rules(rules) => {
                    let matching = rules.iter().filter(|(_, why)| why != HEAD_MISMATCH);
                    if matching.clone().next().is_none() {
                        let _ = writeln!(text, "  no rule's head matches it");
                    }
                    for (rule, why) in matching {
                        for line in rule_text(program, sources, *rule) {
                            let _ = writeln!(text, "  {line}");
                        }
                        let _ = writeln!(text, "    at {}: {why}", fact.time * scale);
                    }
                }
            }
        }
    }
    text
}

/// What renders a derivation: the program, its sources, the time scale, and how deep
/// the tree is drawn.
struct Scaled<'a> {
    program: &'a Program,
    sources: &'a Sources,
    scale: u64,
    depth: Option<usize>,
}

/// Below a derivation of a fact by a rule, how many time points in a row the same fact
/// holds by the same rule (a fact kept by inertia), and the derivation where that ends.
fn chain(derivation: &Derivation) -> (usize, &Derivation) {
    let Derivation::Rule { rule, fact, .. } = derivation else {
        return (0, derivation);
    };
    let mut steps = 0;
    let mut at = derivation;
    while let Derivation::Rule { body, .. } = at {
        let mut held = body.iter().filter_map(|step| match step {
            Step::Holds(inner) => Some(inner),
            _ => None,
        });
        let (Some(inner), None) = (held.next(), held.next()) else {
            break;
        };
        match inner {
            Derivation::Rule {
                rule: r, fact: f, ..
            } if r == rule && f.pred == fact.pred && f.args == fact.args => {
                steps += 1;
                at = inner;
            }
            _ => break,
        }
    }
    (steps, at)
}

impl Scaled<'_> {
    fn fact(&self, f: &GroundFact) -> String {
        fact_text(self.program, f.pred, &f.args, f.time * self.scale)
    }

    fn derivation(
        &self,
        derivation: &Derivation,
        prefix: &str,
        shown: &mut BTreeSet<GroundFact>,
        text: &mut String,
    ) {
        let Derivation::Rule { rule, body, fact } = derivation else {
            let _ = writeln!(text, "{prefix}input");
            return;
        };
        for (i, line) in rule_text(self.program, self.sources, *rule)
            .iter()
            .enumerate()
        {
            let by = if i == 0 { "by " } else { "" };
            let _ = writeln!(text, "{prefix}{by}{line}");
        }
        shown.insert(fact.clone());
        let level = prefix.chars().count() / 3;
        if self.depth.is_some_and(|depth| level >= depth) {
            let _ = writeln!(text, "{prefix}└─ …  (deeper than --depth)");
            return;
        }
        // A fact kept by the same rule over many time points (inertia): one line for the
        // run, then the derivation where it starts.
        let (steps, start) = chain(derivation);
        if steps >= 3 {
            let start_fact = start.fact();
            let _ = writeln!(
                text,
                "{prefix}├─ {} … {}: by the same rule at each of these {} time points, each from the time point before, every negated condition absent",
                self.fact(&GroundFact {
                    time: fact.time - 1,
                    ..fact.clone()
                }),
                self.fact(&GroundFact {
                    time: start_fact.time + 1,
                    ..fact.clone()
                }),
                steps - 1
            );
            let _ = writeln!(text, "{prefix}└─ {}", self.fact(start_fact));
            shown.insert(start_fact.clone());
            let child = format!("{prefix}   ");
            // The start's own derivation: the same rule, from what held before it.
            self.derivation(start, &child, shown, text);
            return;
        }
        self.steps(body, prefix, shown, text);
    }

    /// A negated condition that no fact matched, `_` for its wildcards.
    fn absent(&self, pred: PredId, args: &[Option<Value>], time: u64) -> String {
        let parts: Vec<String> = args
            .iter()
            .map(|a| a.map_or_else(|| "_".to_owned(), |v| v.to_string()))
            .chain(std::iter::once((time * self.scale).to_string()))
            .collect();
        let name = self
            .program
            .passes_through
            .iter()
            .find(|(p, _)| *p == pred)
            .map_or_else(|| self.program.pred_name(pred), |(_, name)| name.as_str());
        format!("{name}({})", parts.join(", "))
    }

    /// `derivation`, or, where it only passes a fact through (a predicate of
    /// `Program::passes_through` derived from one fact), the derivation it passes.
    fn through<'d>(&self, mut derivation: &'d Derivation) -> &'d Derivation {
        while let Derivation::Rule { fact, body, .. } = derivation {
            let passing = self
                .program
                .passes_through
                .iter()
                .any(|(p, _)| *p == fact.pred);
            match body.as_slice() {
                [Step::Holds(inner)] if passing => derivation = inner,
                _ => break,
            }
        }
        derivation
    }

    /// The conditions of a derivation, as branches under `prefix`.
    fn steps(
        &self,
        body: &[Step],
        prefix: &str,
        shown: &mut BTreeSet<GroundFact>,
        text: &mut String,
    ) {
        for (i, step) in body.iter().enumerate() {
            let last = i + 1 == body.len();
            let (branch, indent) = if last {
                ("└─ ", "   ")
            } else {
                ("├─ ", "│  ")
            };
            let child = format!("{prefix}{indent}");
            match step {
                Step::Holds(inner) => {
                    let inner = self.through(inner);
                    if let Derivation::Input(f) = inner {
                        let _ = writeln!(text, "{prefix}{branch}{}  (input)", self.fact(f));
                        continue;
                    }
                    let f = inner.fact();
                    let label = self.fact(f);
                    if shown.contains(f) {
                        let _ = writeln!(text, "{prefix}{branch}{label}  (derived above)");
                    } else {
                        let _ = writeln!(text, "{prefix}{branch}{label}");
                        self.derivation(inner, &child, shown, text);
                    }
                }
                Step::Absent { pred, args, time } => {
                    let absent = self.absent(*pred, args, *time);
                    let _ = writeln!(text, "{prefix}{branch}not {absent}  (absent)");
                }
                Step::Builtin(shown_builtin) => {
                    let _ = writeln!(text, "{prefix}{branch}{shown_builtin}");
                }
            }
        }
    }
}
