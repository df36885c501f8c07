//! A naive oracle, written independently of the reference evaluator's join machinery:
//! at each time point, for each stratum, every rule is grounded over the active domain
//! (every value of a fact in the horizon, and every constant of the program) and checked
//! literal by literal against the definition, repeating until nothing new is derived. It
//! keeps every time point (no forgetting) and is exponential in the number of variables:
//! for small generated cases only.

use std::collections::{BTreeMap, BTreeSet};

use stgflow_eval::eval::{compare, eval};
use stgflow_io::stream::td::Td;
use stgflow_io::stream::{FactReader, Schema};
use stgflow_lang::compile_str;
use stgflow_lang::ir::{Literal, PredId, Program, Rule, Term};
use stgflow_lang::value::Value;

type Facts = BTreeMap<(PredId, u64), BTreeSet<Vec<Value>>>;

/// Every fact of every predicate at every time point of the timeline, as `points` lines.
pub fn naive(program_text: &str, stream_text: &str) -> Result<BTreeSet<String>, String> {
    let compiled = compile_str("generated.tdl", program_text);
    if compiled.has_errors() {
        return Err(compiled.render_diagnostics(false));
    }
    let program = &compiled.program;
    let analysis = compiled.analysis.as_ref().ok_or("no analysis")?;
    let mut facts: Facts = BTreeMap::new();
    for fact in &program.facts {
        facts
            .entry((fact.pred, fact.time))
            .or_default()
            .insert(fact.args.clone());
    }
    let mut reader = FactReader::new(
        stream_text.as_bytes(),
        "stream",
        std::sync::Arc::new(Td),
        Schema::new(program),
    );
    while let Some(fact) = reader.next_fact().map_err(|e| e.to_string())? {
        facts
            .entry((fact.pred, fact.time))
            .or_default()
            .insert(fact.args.to_vec());
    }
    let times: Vec<u64> = facts.keys().map(|&(_, t)| t).collect();
    let (Some(&start), Some(&end)) = (times.iter().min(), times.iter().max()) else {
        return Ok(BTreeSet::new());
    };
    let constants = program_constants(program);
    for t in start..=end {
        for stratum in &analysis.strata {
            loop {
                let domain = active_domain(&facts, &constants, t, analysis.max_horizon);
                let mut new = Vec::new();
                for &r in &stratum.rules {
                    let rule = &program.rules[r];
                    ground(rule, &domain, t, start, &facts, &mut new);
                }
                let mut changed = false;
                for (pred, tuple) in new {
                    changed |= facts.entry((pred, t)).or_default().insert(tuple);
                }
                if !changed {
                    break;
                }
            }
        }
    }
    let mut lines = BTreeSet::new();
    for (&(pred, t), tuples) in &facts {
        for tuple in tuples {
            let mut args: Vec<String> = tuple.iter().map(ToString::to_string).collect();
            args.push(t.to_string());
            lines.insert(format!("{}({}).", program.pred_name(pred), args.join(",")));
        }
    }
    Ok(lines)
}

fn program_constants(program: &Program) -> BTreeSet<Value> {
    let mut constants = BTreeSet::new();
    for rule in &program.rules {
        for literal in std::iter::once(&rule.head).chain(rule.body.iter().filter_map(Literal::atom))
        {
            for term in &literal.args {
                if let Term::Const(value) = term {
                    constants.insert(*value);
                }
            }
        }
    }
    constants
}

fn active_domain(facts: &Facts, constants: &BTreeSet<Value>, t: u64, horizon: u32) -> Vec<Value> {
    let mut domain = constants.clone();
    for (&(_, time), tuples) in facts {
        if time <= t && time + u64::from(horizon) >= t {
            for tuple in tuples {
                domain.extend(tuple.iter().copied());
            }
        }
    }
    domain.into_iter().collect()
}

/// Adds to `out` the head of every grounding of `rule` at `t` whose body holds.
fn ground(
    rule: &Rule,
    domain: &[Value],
    t: u64,
    start: u64,
    facts: &Facts,
    out: &mut Vec<(PredId, Vec<Value>)>,
) {
    let assigned: Vec<usize> = rule
        .body
        .iter()
        .filter_map(|l| match l {
            Literal::Assign { var, .. } => Some(*var),
            _ => None,
        })
        .collect();
    let result = rule.count.as_ref().map(|c| c.result);
    let free: Vec<usize> = (0..rule.vars.len())
        .filter(|v| !assigned.contains(v) && Some(*v) != result)
        .collect();
    // A counting rule: per value of the head's other terms, the distinct values of the
    // counted variables over every grounding whose body holds.
    let mut counted: BTreeMap<Vec<Value>, BTreeSet<Vec<Value>>> = BTreeMap::new();
    let mut choice = vec![0usize; free.len()];
    if !free.is_empty() && domain.is_empty() {
        return;
    }
    loop {
        let mut env: Vec<Option<Value>> = vec![None; rule.vars.len()];
        for (slot, &v) in free.iter().enumerate() {
            env[v] = Some(domain[choice[slot]]);
        }
        let satisfied = assign_all(rule, &mut env, t)
            && rule.body.iter().all(|l| holds(l, &env, t, start, facts));
        if let (true, Some(count)) = (satisfied, &rule.count) {
            let group: Option<Vec<Value>> = (rule.head.args.iter())
                .filter(|term| **term != Term::Var(count.result))
                .map(|term| match term {
                    Term::Var(v) => env[*v],
                    Term::Const(c) => Some(*c),
                    Term::Wildcard => None,
                })
                .collect();
            let values: Option<Vec<Value>> = count.counted.iter().map(|&v| env[v]).collect();
            if let (Some(group), Some(values)) = (group, values) {
                counted.entry(group).or_default().insert(values);
            }
        } else if satisfied {
            let head: Option<Vec<Value>> = rule
                .head
                .args
                .iter()
                .map(|term| match term {
                    Term::Var(v) => env[*v],
                    Term::Const(c) => Some(*c),
                    Term::Wildcard => None,
                })
                .collect();
            if let Some(head) = head {
                out.push((rule.head.pred, head));
            }
        }
        // Next grounding (odometer order).
        let mut slot = 0;
        loop {
            if slot == choice.len() {
                if let Some(count) = &rule.count {
                    for (group, values) in counted {
                        let mut rest = group.into_iter();
                        let head: Option<Vec<Value>> = (rule.head.args.iter())
                            .map(|term| match term {
                                Term::Var(v) if *v == count.result => {
                                    Some(Value::Int(values.len() as i64))
                                }
                                _ => rest.next(),
                            })
                            .collect();
                        out.extend(head.map(|h| (rule.head.pred, h)));
                    }
                }
                return;
            }
            choice[slot] += 1;
            if choice[slot] < domain.len() {
                break;
            }
            choice[slot] = 0;
            slot += 1;
        }
    }
}

/// Computes assigned variables (assignments may chain, in any order).
fn assign_all(rule: &Rule, env: &mut [Option<Value>], t: u64) -> bool {
    for _ in 0..rule.body.len() {
        for literal in &rule.body {
            if let Literal::Assign { var, expr, .. } = literal {
                if env[*var].is_none() {
                    env[*var] = eval(expr, env, t);
                }
            }
        }
    }
    rule.body.iter().all(|l| match l {
        Literal::Assign { var, .. } => env[*var].is_some(),
        _ => true,
    })
}

fn exists(
    pred: PredId,
    args: &[Term],
    offset: u32,
    env: &[Option<Value>],
    t: u64,
    start: u64,
    facts: &Facts,
) -> bool {
    let Some(time) = t
        .checked_sub(u64::from(offset))
        .filter(|&time| time >= start)
    else {
        return false;
    };
    facts.get(&(pred, time)).is_some_and(|tuples| {
        tuples.iter().any(|tuple| {
            tuple.len() == args.len()
                && args.iter().zip(tuple).all(|(term, value)| match term {
                    Term::Var(v) => env[*v] == Some(*value),
                    Term::Const(c) => c == value,
                    Term::Wildcard => true,
                })
        })
    })
}

fn holds(literal: &Literal, env: &[Option<Value>], t: u64, start: u64, facts: &Facts) -> bool {
    match literal {
        Literal::Positive(atom) => exists(atom.pred, &atom.args, atom.offset, env, t, start, facts),
        Literal::Negative(atom) => {
            !exists(atom.pred, &atom.args, atom.offset, env, t, start, facts)
        }
        Literal::Compare { op, lhs, rhs, .. } => match (eval(lhs, env, t), eval(rhs, env, t)) {
            (Some(a), Some(b)) => compare(*op, a, b),
            _ => false,
        },
        Literal::Assign { var, expr, .. } => eval(expr, env, t) == env[*var],
    }
}
