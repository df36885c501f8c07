//! A component's key: per predicate the argument position that one variable of every rule
//! sits at, found by following the variable from heads to bodies ([`find_key`]), and the
//! positions that refine a stepper's key into its states' keys ([`find_sub_key`]).

use hashbrown::{HashMap, HashSet};

use stgflow_lang::ir::{Literal, PredId, Program, Rule, Term, VarId};

/// A key position per predicate such that every rule's head and body atoms all carry one
/// shared variable at those positions; `None` when there is none. Every rule must have a
/// positive atom (which binds the key, so that a derived fact's key is the key of the
/// facts it came from).
pub(super) fn find_key(program: &Program, rules: &[usize]) -> Option<HashMap<PredId, usize>> {
    let first = program.rules.get(*rules.first()?)?.head.pred;
    (0..program.predicates[first].arity)
        .find_map(|start| follow_key(program, rules, first, start, |_| true).ok())
}

/// [`find_key`] where the atoms of `skipped` need not carry the key; every rule still has
/// a positive atom that does, which binds it.
pub(super) fn find_key_without(
    program: &Program,
    rules: &[usize],
    skipped: &[PredId],
) -> Option<HashMap<PredId, usize>> {
    let first = program.rules.get(*rules.first()?)?.head.pred;
    let bound = |key: &HashMap<PredId, usize>| {
        rules.iter().all(|&r| {
            program.rules[r].body.iter().any(|literal| {
                matches!(literal, Literal::Positive(atom)
                    if key.contains_key(&atom.pred) && !skipped.contains(&atom.pred))
            })
        })
    };
    (0..program.predicates[first].arity).find_map(|start| {
        follow_key(program, rules, first, start, |p| !skipped.contains(&p))
            .ok()
            .filter(bound)
    })
}

/// The key that starts at position `start` of `first`, in the atoms of the predicates that
/// `carries` accepts, or where it stops.
pub(super) fn follow_key(
    program: &Program,
    rules: &[usize],
    first: PredId,
    start: usize,
    carries: impl Fn(PredId) -> bool,
) -> Result<HashMap<PredId, usize>, Stuck> {
    follow(program, rules, first, start, |rule, key, positions| {
        (rule.body.iter().filter_map(Literal::atom))
            .filter(|atom| carries(atom.pred))
            .all(|atom| {
                atom.args
                    .iter()
                    .position(|t| *t == Term::Var(key))
                    .is_some_and(|at| *positions.entry(atom.pred).or_insert(at) == at)
            })
    })
}

/// Where [`follow`] stopped: after `settled` rules, at rule `at` (a head without the
/// variable, or one `visit` refused), or with rules the variable never reached (`None`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Stuck {
    pub(super) settled: usize,
    pub(super) at: Option<usize>,
}

/// Follows the variable at position `start` of `first`'s heads through `rules`, from
/// heads to bodies: each rule whose head predicate has a position, once, until every rule
/// is reached. `visit(rule, var, positions)` reads the rule's body (recording where it
/// finds the variable) and says whether the variable goes on. `None` where a head has no
/// variable there, `visit` refuses, or a rule is never reached.
fn follow(
    program: &Program,
    rules: &[usize],
    first: PredId,
    start: usize,
    mut visit: impl FnMut(&Rule, VarId, &mut HashMap<PredId, usize>) -> bool,
) -> Result<HashMap<PredId, usize>, Stuck> {
    let mut positions: HashMap<PredId, usize> = HashMap::from([(first, start)]);
    let mut settled: HashSet<usize> = HashSet::new();
    while settled.len() < rules.len() {
        let mut progress = false;
        for &r in rules {
            let rule = &program.rules[r];
            let Some(&head_position) = positions.get(&rule.head.pred) else {
                continue;
            };
            if !settled.insert(r) {
                continue;
            }
            progress = true;
            let stuck = Stuck {
                settled: settled.len() - 1,
                at: Some(r),
            };
            let Some(Term::Var(var)) = rule.head.args.get(head_position) else {
                return Err(stuck);
            };
            if !visit(rule, *var, &mut positions) {
                return Err(stuck);
            }
        }
        if !progress {
            // Rules whose head never got a position: the variable does not reach them.
            return Err(Stuck {
                settled: settled.len(),
                at: None,
            });
        }
    }
    Ok(positions)
}

/// Per predicate, the refining positions of a key
/// ([`StepperPlan::sub_key`](super::StepperPlan::sub_key)).
type SubKey = HashMap<PredId, Vec<usize>>;

/// The positions that refine `key` (see
/// [`StepperPlan::sub_key`](super::StepperPlan::sub_key)): every variable at a
/// fixed position of every predicate of `internal`, and of every predicate from outside
/// either at a fixed position or absent (read at offset 0 only, the same predicates for
/// every variable), other than the key's; `None` when there is none.
pub(super) fn find_sub_key(
    program: &Program,
    rules: &[usize],
    key: &HashMap<PredId, usize>,
    internal: &HashSet<PredId>,
) -> Option<SubKey> {
    let first = program.rules.get(*rules.first()?)?.head.pred;
    // The positions found so far, and the partial predicates (the same for each).
    let mut found: Option<(SubKey, HashSet<PredId>)> = None;
    for start in 0..program.predicates[first].arity {
        if key.get(&first) == Some(&start) {
            continue;
        }
        let Some((positions, partial)) = sub_component(program, rules, internal, first, start)
        else {
            continue;
        };
        match &mut found {
            None => {
                let positions = positions.into_iter().map(|(p, i)| (p, vec![i])).collect();
                found = Some((positions, partial));
            }
            Some((all, known)) if *known == partial => {
                for (p, i) in positions {
                    all.entry(p).or_default().push(i);
                }
            }
            Some(_) => {}
        }
    }
    found.map(|(positions, _)| positions)
}

/// One refining variable, the one at `start` of `first`'s heads: its position in every
/// predicate that carries it, and the predicates from outside that do not.
fn sub_component(
    program: &Program,
    rules: &[usize],
    internal: &HashSet<PredId>,
    first: PredId,
    start: usize,
) -> Option<(HashMap<PredId, usize>, HashSet<PredId>)> {
    let mut partial: HashSet<PredId> = HashSet::new();
    let positions = follow(program, rules, first, start, |rule, var, positions| {
        let mut carried = false;
        for literal in &rule.body {
            let Some(atom) = literal.atom() else {
                continue;
            };
            match atom.args.iter().position(|t| *t == Term::Var(var)) {
                Some(at) => {
                    if partial.contains(&atom.pred)
                        || *positions.entry(atom.pred).or_insert(at) != at
                    {
                        return false;
                    }
                    carried |= matches!(literal, Literal::Positive(_));
                }
                None => {
                    let outside = !internal.contains(&atom.pred);
                    if !outside || atom.offset > 0 || positions.contains_key(&atom.pred) {
                        return false;
                    }
                    partial.insert(atom.pred);
                }
            }
        }
        // A state's facts come from its own facts: a positive atom binds the variable.
        carried
    })
    .ok()?;
    Some((positions, partial))
}

#[cfg(test)]
mod tests {
    use stgflow_lang::compile_str;

    use super::super::tests::plan_of;
    use crate::plan::{Component, plan};

    #[test]
    fn inertia_is_a_stepper_sharded_by_the_fluent() {
        let text = "holds(F, V, T) :- init(F, V, T-1).\n\
                    holds(F, V, T) :- holds(F, V, T-1), not term(F, V, T-1).\n";
        let compiled = compile_str("t.tdl", text);
        let program = &compiled.program;
        let analysis = compiled.analysis.as_ref().expect("no errors");
        let literal = plan(program, analysis, false);
        let [Component::Stepper(stepper)] = literal.components.as_slice() else {
            panic!("{literal:?}")
        };
        let key = stepper.key.clone().unwrap_or_default();
        assert_eq!(key.get(&program.pred_id("holds").unwrap_or(99)), Some(&0));
        assert_eq!(key.get(&program.pred_id("term").unwrap_or(99)), Some(&0));
        assert_eq!(stepper.horizon, 1);
    }

    #[test]
    fn a_negation_without_the_key_is_unsharded() {
        let (_, plan) = plan_of("s(X, T) :- s(X, T-1), not alarm(T-1).\ns(X, T) :- r(X, T).\n");
        let [Component::Stepper(stepper)] = plan.components.as_slice() else {
            panic!("{plan:?}")
        };
        assert_eq!(stepper.key, None);
    }
}
