//! The shape recognisers: which components have a shape that an operator of its own runs
//! (a window, a gated window, a stamp, a count, a hold, persistence, a loop through time)
//! and what that operator is told; [`crate::plan`]'s module docs describe each shape.

use hashbrown::HashSet;

use stgflow_lang::ir::{Atom, Literal, PredId, Program, Rule, Term, VarId};

use super::key::{find_key, follow_key};
use super::{Component, CyclePlan, PersistPlan, Stamped, StepperPlan, Window};

/// Whether `rule` counts over one atom and nothing else, its head's variables but the
/// count (which it has once) bound by that atom, as the lowering of `#count` writes it (a
/// count component, see [`crate::plan`]).
pub(super) fn counts_over_one_atom(rule: &Rule) -> bool {
    let (Some(count), [Literal::Positive(atom)]) = (&rule.count, &rule.body[..]) else {
        return false;
    };
    let in_atom = |v: &VarId| atom.args.contains(&Term::Var(*v));
    let result = Term::Var(count.result);
    (rule.head.args.iter()).all(|term| match term {
        Term::Var(v) => *term == result || in_atom(v),
        Term::Const(_) | Term::Wildcard => false,
    }) && rule.head.args.iter().filter(|t| **t == result).count() == 1
        && count.counted.iter().all(in_atom)
        && !in_atom(&count.result)
}

/// `q(X…, T) :- w(X…, T), not g(T-k)` (either order, the X… distinct variables, g without
/// arguments): (w, g, k).
pub(super) fn gate_shape(rule: &Rule) -> Option<(PredId, PredId, u32)> {
    let head = &rule.head.args;
    if !distinct_vars(head) {
        return None;
    }
    let (window, gate) = match rule.body.as_slice() {
        [Literal::Positive(w), Literal::Negative(g)]
        | [Literal::Negative(g), Literal::Positive(w)] => (w, g),
        _ => return None,
    };
    (window.offset == 0
        && window.args == *head
        && gate.args.is_empty()
        && window.pred != rule.head.pred)
        .then_some((window.pred, gate.pred, gate.offset))
}

/// Whether the component's own predicates share a key, the atoms from outside aside
/// (voting's `status` has none only for `role_of(C, chair)` beside `close_ballot(C, M)`).
/// A loop through time costs a round of progress through all its operators per time
/// point, where the stepper takes the time points it has in one go: it is kept unless
/// the component's own facts are keyed apart (NetBill's contracts by two agents and
/// suspensions by one), and so too many to step through whole at every time point.
fn own_key(program: &Program, stepper: &StepperPlan) -> bool {
    // Facts without arguments are few whatever the log, and on one worker either way.
    if stepper
        .preds
        .iter()
        .all(|&p| program.predicates[p].arity == 0)
    {
        return true;
    }
    let Some(first) = stepper.rules.first().map(|&r| program.rules[r].head.pred) else {
        return false;
    };
    (0..program.predicates[first].arity).any(|start| {
        follow_key(program, &stepper.rules, first, start, |p| {
            stepper.preds.contains(&p)
        })
        .is_ok()
    })
}

/// A stepper without a key as a loop through time (see [`crate::plan`]): `None` where it
/// has a key, its own predicates would share one, it reads the time, or it recurses at
/// offset 0.
pub(super) fn cycle_shape(program: &Program, stepper: &StepperPlan) -> Option<CyclePlan> {
    if stepper.key.is_some() || stepper.uses_time || own_key(program, stepper) {
        return None;
    }
    let mut rules: Vec<usize> = stepper
        .rules
        .iter()
        .chain(&stepper.starts)
        .copied()
        .collect();
    rules.sort_unstable();
    // Each predicate after those its rules read at offset 0 (Kahn's order).
    let preds = &stepper.preds;
    let before = |p: PredId| -> Vec<PredId> {
        let mut read: Vec<PredId> = (rules.iter().map(|&r| &program.rules[r]))
            .filter(|rule| rule.head.pred == p)
            .flat_map(|rule| rule.body.iter().filter_map(Literal::atom))
            .filter(|atom| atom.offset == 0 && preds.contains(&atom.pred))
            .map(|atom| atom.pred)
            .collect();
        read.sort_unstable();
        read.dedup();
        read
    };
    let mut order: Vec<PredId> = Vec::with_capacity(preds.len());
    while order.len() < preds.len() {
        let next = (preds.iter().copied())
            .find(|&p| !order.contains(&p) && before(p).iter().all(|q| order.contains(q)))?;
        order.push(next);
    }
    Some(CyclePlan {
        preds: order,
        rules,
        horizon: stepper.horizon,
        steps: Vec::new(),
    })
}

/// The SCC `scc` with rules `rules` as a [`PersistPlan`], when it has the shape (either of
/// two predicates may be the one that persists).
pub(super) fn persist_shape(
    program: &Program,
    scc: &[PredId],
    rules: &[usize],
) -> Option<PersistPlan> {
    match *scc {
        [pred] => persist_as(program, rules, pred, None, &[]),
        [a, b] => persist_as(program, rules, a, Some(b), &[])
            .or_else(|| persist_as(program, rules, b, Some(a), &[])),
        _ => None,
    }
    .or_else(|| {
        // One predicate persists; the others are derived from it a point back.
        (scc.len() > 1)
            .then(|| {
                scc.iter().find_map(|&pred| {
                    let derived: Vec<PredId> = scc.iter().copied().filter(|&p| p != pred).collect();
                    persist_as(program, rules, pred, None, &derived)
                })
            })
            .flatten()
    })
}

/// The SCC `scc` (its rules `rules`) as a [`Component::Hold`], where it has that shape
/// and nothing outside it reads or prints the stop predicate.
pub(super) fn hold_shape(program: &Program, scc: &[PredId], rules: &[usize]) -> Option<Component> {
    let (&[a, b], &[_, _, _]) = (scc, rules) else {
        return None;
    };
    let outside_reads = |q: PredId| {
        program.output_predicates().contains(&q)
            || (0..program.rules.len()).any(|r| {
                !rules.contains(&r)
                    && (program.rules[r].body.iter().filter_map(Literal::atom)).any(|x| x.pred == q)
            })
    };
    fn atom(literal: &Literal, positive: bool) -> Option<&Atom> {
        match (literal, positive) {
            (Literal::Positive(atom), true) | (Literal::Negative(atom), false) => Some(atom),
            _ => None,
        }
    }
    // Both literals of a two-literal body, whichever order they are written in.
    let two = |r: usize, first: &dyn Fn(&Literal) -> bool| -> Option<(&Literal, &Literal)> {
        let rule = &program.rules[r];
        match rule.body.as_slice() {
            [x, y] if rule.count.is_none() && first(x) => Some((x, y)),
            [x, y] if rule.count.is_none() && first(y) => Some((y, x)),
            _ => None,
        }
    };
    [(a, b), (b, a)].into_iter().find_map(|(pred, stop)| {
        let of = |p: PredId| -> Vec<usize> {
            (rules.iter().copied())
                .filter(|&r| program.rules[r].head.pred == p)
                .collect()
        };
        let (&[x, y], &[stop_rule]) = (&of(pred)[..], &of(stop)[..]) else {
            return None;
        };
        let head = |r: usize| &program.rules[r].head.args;
        let same =
            |r: usize, atom: &Atom, offset: u32| atom.args == *head(r) && atom.offset == offset;
        // pred(X…, T) :- pred(X…, T-1), not stop(X…, T).
        let keep = |r: usize| {
            let (held, not_stopped) = two(r, &|l| atom(l, true).is_some_and(|x| x.pred == pred))?;
            let not_stopped = atom(not_stopped, false)?;
            (same(r, atom(held, true)?, 1) && not_stopped.pred == stop && same(r, not_stopped, 0))
                .then_some(())
        };
        // pred(X…, T) :- source(X…, T), gate(T).
        let start = |r: usize| {
            let gated = |l: &Literal| atom(l, true).is_some_and(|x| x.args.is_empty());
            let (gate, source) = two(r, &gated)?;
            let (gate, source) = (atom(gate, true)?, atom(source, true)?);
            (same(r, source, 0) && gate.offset == 0 && !source.args.is_empty())
                .then_some((source.pred, gate.pred))
        };
        let (source, gate) = match (start(x), start(y)) {
            (Some(found), None) if keep(y).is_some() => found,
            (None, Some(found)) if keep(x).is_some() => found,
            _ => return None,
        };
        // stop(X…, T) :- pred(X…, T-1), not source(X…, T).
        let (held, not_source) = two(stop_rule, &|l| {
            atom(l, true).is_some_and(|x| x.pred == pred)
        })?;
        let not_source = atom(not_source, false)?;
        // Every head distinct variables: the operator holds a fact of source as it is.
        let plain =
            |r: usize| pattern(head(r)) && head(r).iter().all(|t| matches!(t, Term::Var(_)));
        let fits = same(stop_rule, atom(held, true)?, 1)
            && not_source.pred == source
            && same(stop_rule, not_source, 0)
            && [x, y, stop_rule].into_iter().all(plain)
            && ![pred, stop].contains(&source)
            && ![pred, stop, source].contains(&gate)
            && !outside_reads(stop);
        fits.then_some(Component::Hold {
            pred,
            stop,
            source,
            gate,
        })
    })
}

/// `derived`'s rules (among `rules`) in an order in which each reads at offset 0 only
/// the predicates before it; `None` where they read one another in a cycle.
fn derived_order(
    program: &Program,
    rules: &[usize],
    derived: &[PredId],
) -> Option<Vec<(PredId, Vec<usize>)>> {
    let rules_of = |p: PredId| -> Vec<usize> {
        (rules.iter().copied())
            .filter(|&r| program.rules[r].head.pred == p)
            .collect()
    };
    let mut order: Vec<(PredId, Vec<usize>)> = Vec::new();
    while order.len() < derived.len() {
        let ready = derived.iter().copied().find(|&p| {
            !order.iter().any(|(q, _)| *q == p)
                && rules_of(p).iter().all(|&r| {
                    (program.rules[r].body.iter().filter_map(Literal::atom)).all(|a| {
                        !derived.contains(&a.pred) || order.iter().any(|(q, _)| *q == a.pred)
                    })
                })
        })?;
        order.push((ready, rules_of(ready)));
    }
    Some(order)
}

/// `rules` as `pred`'s start and keep rules and `term`'s rules, or `None`.
fn persist_as(
    program: &Program,
    rules: &[usize],
    pred: PredId,
    term: Option<PredId>,
    derived: &[PredId],
) -> Option<PersistPlan> {
    let is_derived = |p: PredId| derived.contains(&p);
    let internal = |p: PredId| p == pred || Some(p) == term || is_derived(p);
    let (mut starts, mut keeps, mut term_rules) = (Vec::new(), Vec::new(), Vec::new());
    let (mut derived_rules, mut derived_starts) = (Vec::new(), Vec::new());
    let mut slots: Vec<(PredId, u32)> = Vec::new();
    let mut slot = |atom: &Atom| {
        if !slots.contains(&(atom.pred, atom.offset)) {
            slots.push((atom.pred, atom.offset));
        }
    };
    for &r in rules {
        let rule = &program.rules[r];
        let mut atoms = rule.body.iter().filter_map(Literal::atom);
        if rule.head.pred == pred && !atoms.any(|a| internal(a.pred)) {
            starts.push(r);
            continue;
        }
        if !pattern(&rule.head.args) {
            return None;
        }
        let reads = |p: &dyn Fn(PredId) -> bool| {
            (rule.body.iter().filter_map(Literal::atom)).any(|a| p(a.pred))
        };
        let derived_start = rule.head.pred == pred && !reads(&|p| p == pred) && reads(&is_derived);
        if is_derived(rule.head.pred) || derived_start {
            // derived(…, T) :- pred(…, T-1), derived(…, T), outside atoms, comparisons;
            // pred(…, T) :- derived(…, T), outside atoms, comparisons.
            for literal in &rule.body {
                match literal {
                    Literal::Positive(a) if a.pred == pred && a.offset == 1 => {
                        if !is_derived(rule.head.pred) {
                            return None;
                        }
                    }
                    Literal::Positive(a) | Literal::Negative(a) if is_derived(a.pred) => {
                        if a.offset != 0 {
                            return None;
                        }
                    }
                    Literal::Positive(a) | Literal::Negative(a) if !internal(a.pred) => slot(a),
                    Literal::Positive(_) | Literal::Negative(_) => return None,
                    Literal::Compare { .. } | Literal::Assign { .. } => {}
                }
            }
            if is_derived(rule.head.pred) {
                derived_rules.push(r);
            } else {
                derived_starts.push(r);
            }
            continue;
        }
        let mut own = 0;
        if rule.head.pred == pred {
            // pred(P…, T) :- pred(P…, T-1), not s(Q…, T-k), …
            for literal in &rule.body {
                match literal {
                    Literal::Positive(a)
                        if a.pred == pred && a.offset == 1 && a.args == rule.head.args =>
                    {
                        own += 1;
                    }
                    Literal::Negative(a)
                        if a.pred != pred && over_head(&a.args, &rule.head.args) =>
                    {
                        if Some(a.pred) == term {
                            if a.offset != 1 {
                                return None;
                            }
                        } else if is_derived(a.pred) {
                            if a.offset != 0 {
                                return None;
                            }
                        } else {
                            slot(a);
                        }
                    }
                    _ => return None,
                }
            }
            keeps.push(r);
        } else {
            // term(…, T) :- pred(…, T), outside atoms, comparisons.
            for literal in &rule.body {
                match literal {
                    Literal::Positive(a) if a.pred == pred && a.offset == 0 => own += 1,
                    Literal::Positive(a) | Literal::Negative(a) if !internal(a.pred) => slot(a),
                    Literal::Positive(_) | Literal::Negative(_) => return None,
                    Literal::Compare { .. } | Literal::Assign { .. } => {}
                }
            }
            term_rules.push(r);
        }
        if own != 1 {
            return None;
        }
    }
    if keeps.is_empty() || (term.is_some() && term_rules.is_empty()) {
        return None;
    }
    let derived = derived_order(program, &derived_rules, derived)?;
    if derived.iter().any(|(_, rules)| rules.is_empty()) {
        return None;
    }
    let keyed: Vec<usize> = (keeps.iter().chain(&term_rules))
        .chain(&derived_rules)
        .chain(&derived_starts)
        .copied()
        .collect();
    let key = find_key(program, &keyed)?;
    // Start rules that copy one atom, keyed as the rest: done in the operator, on the
    // atom's facts, instead of as dataflow rules (a delay and a map each) in front of it.
    let (copies, starts): (Vec<usize>, Vec<usize>) = starts.into_iter().partition(|&r| {
        let with = [keyed.as_slice(), &[r]].concat();
        copy_of(&program.rules[r]).is_some() && find_key(program, &with).is_some()
    });
    let (mut copies, mut starts) = (copies, starts);
    let all: Vec<usize> = keyed.iter().chain(&copies).copied().collect();
    let key = match find_key(program, &all) {
        Some(all) => all,
        None => {
            starts.append(&mut copies);
            key
        }
    };
    for &r in &copies {
        if let Some((atom, _)) = copy_of(&program.rules[r]) {
            slot(atom);
        }
    }
    let (mut key, mut derived_starts) = (key, derived_starts);
    if !derived.is_empty() {
        // The operator evaluates rules per key already: the start rules keyed as the rest
        // are evaluated there too, on their atoms' facts, instead of in front of it.
        // (`all` holds the derived starts and the copies already.)
        let inside: Vec<usize> = (starts.iter().copied())
            .filter(|&r| find_key(program, &[all.as_slice(), &[r]].concat()).is_some())
            .collect();
        let with = [all.as_slice(), &inside].concat();
        if let (false, Some(all)) = (inside.is_empty(), find_key(program, &with)) {
            key = all;
            starts.retain(|r| !inside.contains(r));
            for &r in &inside {
                program.rules[r]
                    .body
                    .iter()
                    .filter_map(Literal::atom)
                    .for_each(&mut slot);
            }
            derived_starts.extend(inside);
        }
    }
    Some(PersistPlan {
        pred,
        starts,
        copies,
        keeps,
        derived,
        derived_starts,
        slot_copies: Vec::new(),
        term: term.map(|t| (t, term_rules)),
        slots,
        key,
    })
}

/// A rule `h(…, T) :- p(…, T-k).` whose body atom has distinct variables and constants and
/// whose head has only those variables and constants: the atom, and per head argument the
/// body position it copies (`None`: the head's constant).
pub fn copy_of(rule: &Rule) -> Option<(&Atom, Vec<Option<usize>>)> {
    let [Literal::Positive(atom)] = rule.body.as_slice() else {
        return None;
    };
    if !pattern(&atom.args) {
        return None;
    }
    let positions = rule
        .head
        .args
        .iter()
        .map(|t| match t {
            Term::Var(_) => atom.args.iter().position(|a| a == t).map(Some),
            Term::Const(_) => Some(None),
            Term::Wildcard => None,
        })
        .collect::<Option<Vec<_>>>()?;
    Some((atom, positions))
}

/// Whether `args` are distinct variables and constants.
fn pattern(args: &[Term]) -> bool {
    let mut seen = HashSet::new();
    args.iter().all(|t| match t {
        Term::Var(v) => seen.insert(*v),
        Term::Const(_) => true,
        Term::Wildcard => false,
    })
}

/// Whether every variable of `args` is one of `head`'s.
fn over_head(args: &[Term], head: &[Term]) -> bool {
    args.iter()
        .all(|t| !matches!(t, Term::Var(_)) || head.contains(t))
}

/// Whether `args` are distinct variables.
fn distinct_vars(args: &[Term]) -> bool {
    let mut seen = HashSet::new();
    args.iter()
        .all(|t| matches!(t, Term::Var(v) if seen.insert(*v)))
}

/// Recognises `h(A…, T) :- p(X…, T), U = T.` (either order; X… distinct variables, each
/// of them once and U in A…, the rest of A… constants; p not h): (p, where each of A… comes
/// from). Every argument of p reaches the head, so distinct facts of p stamp distinct
/// facts of h.
pub(super) fn stamp_shape(program: &Program, rules: &[usize]) -> Option<(PredId, Vec<Stamped>)> {
    let [r] = rules else { return None };
    let rule = &program.rules[*r];
    let (atom, stamp) = match rule.body.as_slice() {
        [Literal::Positive(atom), Literal::Assign { var, expr, .. }]
        | [Literal::Assign { var, expr, .. }, Literal::Positive(atom)]
            if *expr == stgflow_lang::ir::Expr::Time =>
        {
            (atom, *var)
        }
        _ => return None,
    };
    if atom.offset != 0 || atom.pred == rule.head.pred || !distinct_vars(&atom.args) {
        return None;
    }
    let position = |v: VarId| {
        atom.args
            .iter()
            .position(|t| matches!(t, Term::Var(w) if *w == v))
    };
    let head: Vec<Stamped> = rule
        .head
        .args
        .iter()
        .map(|t| match t {
            Term::Var(v) if *v == stamp => Some(Stamped::Time),
            Term::Var(v) => position(*v).map(Stamped::Arg),
            Term::Const(c) => Some(Stamped::Const(*c)),
            Term::Wildcard => None,
        })
        .collect::<Option<_>>()?;
    // Each argument of p once (the operator finds a stamped fact's source fact by them).
    let every_arg =
        (0..atom.args.len()).all(|i| head.iter().filter(|a| **a == Stamped::Arg(i)).count() == 1);
    (every_arg && head.contains(&Stamped::Time)).then_some((atom.pred, head))
}

/// Recognises ⊞d♢ p and ⊞d□ p definitions.
pub(super) fn window_shape(program: &Program, rules: &[usize]) -> Option<(PredId, Window)> {
    let head_args = &program.rules[rules[0]].head.args;
    if !distinct_vars(head_args) {
        return None;
    }
    let single_atoms: Option<Vec<(PredId, u32)>> = rules
        .iter()
        .map(|&r| {
            let rule = &program.rules[r];
            match rule.body.as_slice() {
                [Literal::Positive(atom)]
                    if rule.head.args == *head_args && atom.args == *head_args =>
                {
                    Some((atom.pred, atom.offset))
                }
                _ => None,
            }
        })
        .collect();
    if let Some(atoms) = single_atoms {
        let source = atoms[0].0;
        let mut offsets: Vec<u32> = atoms.iter().map(|&(_, k)| k).collect();
        offsets.sort_unstable();
        let d = u32::try_from(offsets.len()).ok()?.checked_sub(1)?;
        let head = program.rules[rules[0]].head.pred;
        if source != head
            && atoms.iter().all(|&(p, _)| p == source)
            && offsets.iter().copied().eq(0..=d)
        {
            return Some((source, Window::Diamond(d)));
        }
        return None;
    }
    let [r] = rules else { return None };
    let rule = &program.rules[*r];
    if rule.head.args != *head_args {
        return None;
    }
    let mut source = None;
    let mut offsets = Vec::new();
    for literal in &rule.body {
        let Literal::Positive(atom) = literal else {
            return None;
        };
        if atom.args != *head_args
            || source.is_some_and(|s| s != atom.pred)
            || atom.pred == rule.head.pred
        {
            return None;
        }
        source = Some(atom.pred);
        offsets.push(atom.offset);
    }
    offsets.sort_unstable();
    let d = u32::try_from(offsets.len()).ok()?.checked_sub(1)?;
    (d > 0 && offsets.iter().copied().eq(0..=d)).then_some((source?, Window::Box(d)))
}

#[cfg(test)]
mod tests {
    use stgflow_lang::ir::Program;
    use stgflow_lang::value::Value;

    use super::super::tests::plan_of;
    use crate::plan::{Component, Plan, Stamped, Window, plan};

    /// Predicates derived from the persisting one a point back (RTEC's `voted`) go into its
    /// operator; read a point back themselves, or in a cycle at once, they do not.
    #[test]
    fn predicates_derived_from_the_persisting_one_a_point_back_are_lowered_with_it() {
        let id = |program: &Program, name: &str| program.pred_id(name).unwrap_or(99);
        // RTEC's `voted`: `ie` and `te` read h a point back (and each other at once).
        let (program, plan) = plan_of(
            "ie(V, M, n, T) :- reset(M, T), h(V, M, O, T-1), O != n.\n\
             te(V, M, a, T) :- ie(V, M, n, T).\n\
             h(V, M, a, T) :- hi(V, M, a, T-1), not ht(V, M, a, T-1).\n\
             h(V, M, a, T) :- h(V, M, a, T-1), not ht(V, M, a, T-1), not te(V, M, a, T).\n\
             h(V, M, n, T) :- ie(V, M, n, T), not te(V, M, n, T).\n\
             h(V, M, n, T) :- h(V, M, n, T-1), not te(V, M, n, T).\n",
        );
        let Some(Component::Persist(persist)) = plan.components.last() else {
            panic!("{plan:?}")
        };
        assert_eq!(persist.pred, id(&program, "h"));
        assert_eq!(
            persist.derived,
            vec![(id(&program, "ie"), vec![0]), (id(&program, "te"), vec![1])]
        );
        // The start from `hi` is keyed as the rest: evaluated in the operator.
        assert_eq!(persist.derived_starts, vec![4, 2]);
        assert!(persist.starts.is_empty() && persist.term.is_none());
        assert_eq!(persist.keeps, vec![3, 5]);
        assert_eq!(persist.key.get(&id(&program, "reset")), Some(&0));
        on_the_stepper(&[
            // A derived predicate read a point back.
            "d(X, T) :- h(X, T-1), e(X, T).\nh(X, T) :- d(X, T-1).\nh(X, T) :- h(X, T-1), not d(X, T).\n",
            // Derived predicates that read each other at once, in a cycle.
            "d(X, T) :- h(X, T-1), c(X, T).\nc(X, T) :- d(X, T), e(X, T).\n\
             h(X, T) :- h(X, T-1), not d(X, T).\n",
        ]);
    }

    /// Asserts that each of `programs` plans a component on the stepper.
    fn on_the_stepper(programs: &[&str]) {
        for program in programs {
            let (_, plan) = plan_of(program);
            assert!(
                plan.components
                    .iter()
                    .any(|c| matches!(c, Component::Stepper(_))),
                "{program}: {plan:?}"
            );
        }
    }

    /// Inertia's shapes are lowered to the persistence operator: one predicate with start
    /// and keep rules, with or without a terminating predicate in its SCC; other temporal
    /// SCCs stay on the stepper.
    #[test]
    fn inertia_shapes_are_lowered_to_persistence() {
        let id = |program: &Program, name: &str| program.pred_id(name).unwrap_or(99);
        let (program, plan) = plan_of(
            "holds(F, V, T) :- init(F, V, T-1).\n\
             holds(F, V, T) :- holds(F, V, T-1), not term(F, V, T-1).\n\
             term(F, V, T) :- init(F, W, T), holds(F, V, T), V != W.\n",
        );
        let [Component::Persist(persist)] = plan.components.as_slice() else {
            panic!("{plan:?}")
        };
        assert_eq!(persist.pred, id(&program, "holds"));
        assert_eq!(persist.term, Some((id(&program, "term"), vec![2])));
        assert_eq!(
            (persist.copies.as_slice(), persist.keeps.as_slice()),
            (&[0][..], &[1][..])
        );
        assert!(persist.starts.is_empty());
        // init at T for term, at T-1 for the copy.
        assert_eq!(
            persist.slots,
            vec![(id(&program, "init"), 0), (id(&program, "init"), 1)]
        );
        assert_eq!(persist.key.get(&id(&program, "init")), Some(&0));
        // The per-value form: `stop` is outside, read one point back.
        let (program, plan) = plan_of(
            "p(X, a, T) :- on(X, T-1).\np(X, a, T) :- p(X, a, T-1), not stop(X, _, T-1).\n\
             stop(X, Y, T) :- off(X, Y, T).\n",
        );
        let Some(Component::Persist(persist)) = plan.components.last() else {
            panic!("{plan:?}")
        };
        assert_eq!(
            (persist.term.clone(), persist.slots.clone()),
            (
                None,
                vec![(id(&program, "stop"), 1), (id(&program, "on"), 1)]
            )
        );
        on_the_stepper(&[
            // The negation reads a variable the head does not have.
            "p(X, T) :- p(X, T-1), q(X, Y, T), not stop(Y, T-1).\n",
            // Two points back.
            "p(X, T) :- p(X, T-2), not stop(X, T-1).\np(X, T) :- on(X, T).\n",
            // No key.
            "p(X, T) :- p(X, T-1), not alarm(T-1).\np(X, T) :- on(X, T).\n",
            // The time as a value.
            "p(X, T) :- p(X, T-1), not stop(X, T-1).\np(X, T) :- on(X, T), T > 3.\n",
        ]);
    }

    #[test]
    fn a_stamp_is_its_own_component_and_its_near_misses_step() {
        let id = |program: &Program, name: &str| program.pred_id(name).unwrap_or(99);
        let (program, planned) = plan_of("h(Y, U, k, X, T) :- U = T, p(X, Y, T).\n");
        assert_eq!(
            planned.components,
            [Component::Stamp {
                pred: id(&program, "h"),
                source: id(&program, "p"),
                head: vec![
                    Stamped::Arg(1),
                    Stamped::Time,
                    Stamped::Const(Value::sym("k")),
                    Stamped::Arg(0),
                ],
            }]
        );
        assert_eq!(
            planned.dump(&program).lines().nth(1),
            Some("stamp h(#2, T, k, #1) from p(#1, #2) at T")
        );
        for other in [
            // A projection: two facts of p would stamp one of h; an argument twice.
            "h(U, X, T) :- p(X, Y, T), U = T.\n",
            "h(U, X, X, T) :- p(X, T), U = T.\n",
            // The past, a constant in the atom, a time plus one, no time in the head.
            "h(U, X, T) :- p(X, T-1), U = T.\n",
            "h(U, X, T) :- p(X, a, T), U = T.\n",
            "h(U, X, T) :- p(X, T), U = T + 1.\n",
            "h(X, T) :- p(X, T), U = T.\n",
            // Another literal, another rule.
            "h(U, X, T) :- p(X, T), U = T, not q(X, T).\n",
            "h(U, X, T) :- p(X, T), U = T.\nh(U, X, T) :- q(X, T), U = T.\n",
        ] {
            let (_, planned) = plan_of(other);
            assert!(
                planned
                    .components
                    .iter()
                    .all(|c| !matches!(c, Component::Stamp { .. })),
                "{other}: {planned:?}"
            );
        }
        // Without lowering, the rule runs as written.
        let compiled = stgflow_lang::compile_str("t.tdl", "h(U, X, T) :- p(X, T), U = T.\n");
        let analysis = compiled.analysis.as_ref().expect("valid");
        let literal = plan(&compiled.program, analysis, false);
        assert!(matches!(literal.components[..], [Component::Stepper(_)]));
    }

    /// LARS's since-start shape is a hold component; with its stop predicate printed, or
    /// its start gated by a predicate with arguments, it is not.
    #[test]
    fn a_fact_held_since_a_gate_is_a_hold() {
        let rules = "t(T) :- 0 = 0.\ns(T) :- t(T), not t(T-1).\nh(X, Y, T) :- p(X, Y, T), s(T).\nh(X, Y, T) :- h(X, Y, T-1), not g(X, Y, T).\ng(X, Y, T) :- h(X, Y, T-1), not p(X, Y, T).\n";
        let (program, planned) = plan_of(&format!("#output h.\n{rules}"));
        let id = |name: &str| program.pred_id(name).unwrap_or(99);
        assert!(planned.components.contains(&Component::Hold {
            pred: id("h"),
            stop: id("g"),
            source: id("p"),
            gate: id("s"),
        }));
        let holds = |planned: &Plan| {
            (planned.components.iter()).any(|c| matches!(c, Component::Hold { .. }))
        };
        let (_, planned) = plan_of(&format!("#output h, g.\n{rules}"));
        assert!(!holds(&planned), "{planned:?}");
        let gated_by_x = rules.replace("p(X, Y, T), s(T)", "p(X, Y, T), r(X, T)");
        let (_, planned) = plan_of(&format!("#output h.\n{gated_by_x}"));
        assert!(!holds(&planned), "{planned:?}");
    }

    #[test]
    fn windows_are_recognised() {
        let (_, plan) = plan_of(
            "q(A, B, T) :- p(A, B, T).\nq(A, B, T) :- p(A, B, T-1).\nq(A, B, T) :- p(A, B, T-2).\n",
        );
        assert!(matches!(
            plan.components.as_slice(),
            [Component::Window {
                window: Window::Diamond(2),
                ..
            }]
        ));
        let (_, plan) = plan_of("b(A, T) :- p(A, T), p(A, T-1), p(A, T-2), p(A, T-3).\n");
        assert!(matches!(
            plan.components.as_slice(),
            [Component::Window {
                window: Window::Box(3),
                ..
            }]
        ));
        let (_, plan) = plan_of("q(A, T) :- p(A, T).\nq(A, T) :- p(A, T-2).\n");
        assert!(matches!(
            plan.components.as_slice(),
            [Component::Dataflow { .. }]
        ));
    }
}
