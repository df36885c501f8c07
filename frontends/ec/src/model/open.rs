//! Background rules whose head has a variable that their body does not bind
//! (`oneIsTug(V1, _V2) :- vesselType(V1, tug).`, "for any V2" to Prolog) hold for more
//! values than any table holds. Each clause of such a predicate becomes a rule of its own
//! over the head variables its body binds (`oneIsTug_1(V1) :- vesselType(V1, tug).`, an
//! invented name), and each condition on the predicate reads those: a negated condition
//! is the negation of each of them, and a rule with a held one is copied once per clause,
//! each copy reading its clause's rule (rules of one head are a union, as the clauses
//! are to Prolog).

use stgflow_lang::diag::Span;

use super::terms::expr_vars;
use super::{
    Arg, Cond, EventRule, EventTerm, GroundCond, IntervalCond, IntervalRule, Item, TimeRule,
};

/// The items with every condition on an open background predicate (see the module docs)
/// read through its clauses' rules.
pub(crate) fn close_open_background(items: Vec<Item>) -> Vec<Item> {
    let open = open_predicates(&items);
    if open.is_empty() {
        return items;
    }
    let mut out = Vec::new();
    for item in items {
        match item {
            Item::BackgroundRule { head, .. } if open.iter().any(|p| p.is(&head)) => {}
            other => out.extend(expand(other, &open)),
        }
    }
    for predicate in &open {
        out.extend(predicate.rules.iter().cloned());
    }
    out
}

/// The most copies one item is expanded into; an item that would need more is left as it
/// is, and its condition then names no background knowledge (E506).
const MAX_COPIES: usize = 64;

/// A background predicate with a clause whose head has a variable its body does not bind.
struct Open {
    name: String,
    arity: usize,
    /// Per clause: the head positions its body binds, in order.
    bound: Vec<Vec<usize>>,
    /// Per clause, its rule over those positions, named apart.
    rules: Vec<Item>,
}

impl Open {
    fn is(&self, atom: &EventTerm) -> bool {
        atom.name.text == self.name && atom.args.len() == self.arity
    }

    /// The atom of clause `i`'s rule for a condition on `atom`.
    fn clause_atom(&self, i: usize, atom: &EventTerm) -> EventTerm {
        let mut read = atom.clone();
        read.name.text = clause_name(&self.name, i);
        read.args = (self.bound[i].iter())
            .filter_map(|&at| atom.args.get(at).cloned())
            .collect();
        read
    }
}

/// The invented name of clause `i`'s rule (`oneIsTug_1`).
fn clause_name(name: &str, i: usize) -> String {
    crate::translate::invented_name(name, &format!("_{}", i + 1))
}

/// The open background predicates of `items`: defined by rules only, every head argument
/// a variable, and some head variable bound by no condition.
fn open_predicates(items: &[Item]) -> Vec<Open> {
    let mut open: Vec<Open> = Vec::new();
    let rules = items.iter().filter_map(|item| match item {
        Item::BackgroundRule { head, body, span } => Some((head, body, *span)),
        _ => None,
    });
    for (head, body, span) in rules {
        let mut bound_vars = Vec::new();
        for cond in body {
            cond_vars(cond, &mut bound_vars);
        }
        let positions: Option<Vec<Option<usize>>> = head
            .args
            .iter()
            .enumerate()
            .map(|(at, arg)| match arg {
                Arg::Var(name) => Some(bound_vars.contains(&name.text).then_some(at)),
                Arg::Const(..) => None,
            })
            .collect();
        let key = (head.name.text.clone(), head.args.len());
        let Some(positions) = positions else {
            // A constant in the head: left to the translation.
            open.retain(|p| (p.name.clone(), p.arity) != key);
            continue;
        };
        let bound: Vec<usize> = positions.into_iter().flatten().collect();
        let index = match open.iter().position(|p| (p.name.clone(), p.arity) == key) {
            Some(index) => index,
            None => {
                open.push(Open {
                    name: key.0,
                    arity: key.1,
                    bound: Vec::new(),
                    rules: Vec::new(),
                });
                open.len() - 1
            }
        };
        let predicate = &mut open[index];
        let i = predicate.bound.len();
        let mut rule_head = head.clone();
        rule_head.name.text = clause_name(&predicate.name, i);
        rule_head.args = bound.iter().map(|&at| head.args[at].clone()).collect();
        predicate.rules.push(Item::BackgroundRule {
            head: rule_head,
            body: body.clone(),
            span,
        });
        predicate.bound.push(bound);
    }
    // Only those with an unbound head variable, and given by no fact.
    open.retain(|p| {
        p.bound.iter().any(|b| b.len() < p.arity)
            && !items.iter().any(|item| {
                matches!(item, Item::Background { name, args, .. }
                    if name.text == p.name && args.len() == p.arity)
            })
    });
    open
}

/// The variables a background rule's condition names.
fn cond_vars(cond: &GroundCond, out: &mut Vec<String>) {
    match cond {
        GroundCond::Atom(atom) => {
            for arg in &atom.args {
                if let Arg::Var(name) = arg {
                    out.push(name.text.clone());
                }
            }
        }
        GroundCond::Builtin(builtin) => {
            expr_vars(&builtin.lhs, out);
            expr_vars(&builtin.rhs, out);
        }
    }
}

/// `item` with its conditions on `open` predicates read through their clauses' rules:
/// one item, or a copy per combination of the clauses of its held conditions.
fn expand(item: Item, open: &[Open]) -> Vec<Item> {
    match item {
        Item::HoldsFor(rule) => copies(&rule.body, open, interval_atom, interval, |body| {
            Item::HoldsFor(IntervalRule {
                body,
                ..rule.clone()
            })
        }),
        Item::Initiated(rule) => time_rules(rule, open, Item::Initiated),
        Item::Terminated(rule) => time_rules(rule, open, Item::Terminated),
        Item::HoldsAt(rule) => time_rules(rule, open, Item::HoldsAt),
        Item::Happens(rule) => copies(&rule.body, open, time_atom, background, |body| {
            Item::Happens(EventRule {
                body,
                ..rule.clone()
            })
        }),
        Item::Grounding { entity, body, span } => {
            copies(&body, open, ground_atom, held_atom, |body| {
                Item::Grounding {
                    entity: entity.clone(),
                    body,
                    span,
                }
            })
        }
        Item::BackgroundRule { head, body, span } => {
            copies(&body, open, ground_atom, held_atom, |body| {
                Item::BackgroundRule {
                    head: head.clone(),
                    body,
                    span,
                }
            })
        }
        other => vec![other],
    }
}

/// A time-point rule as [`expand`] makes it, each copy of the rule's kind (`make`).
fn time_rules(rule: TimeRule, open: &[Open], make: fn(TimeRule) -> Item) -> Vec<Item> {
    copies(&rule.body, open, time_atom, background, |body| {
        make(TimeRule {
            body,
            ..rule.clone()
        })
    })
}

/// The items `item` makes of `body`'s alternatives (see [`alternatives`]), or of `body`
/// itself where it has none or too many.
fn copies<C: Clone>(
    body: &[C],
    open: &[Open],
    atom_of: impl Fn(&C) -> Option<(&EventTerm, bool, Span)>,
    make: impl Fn(EventTerm, bool, Span) -> C,
    item: impl Fn(Vec<C>) -> Item,
) -> Vec<Item> {
    match alternatives(body, open, atom_of, make) {
        Some(bodies) if bodies.len() <= MAX_COPIES => bodies.into_iter().map(item).collect(),
        _ => vec![item(body.to_vec())],
    }
}

/// A time-point rule's background condition.
fn background(atom: EventTerm, negated: bool, span: Span) -> Cond {
    Cond::Background {
        negated,
        atom,
        span,
    }
}

/// A holdsFor rule's background condition.
fn interval(atom: EventTerm, negated: bool, span: Span) -> IntervalCond {
    IntervalCond::Background {
        negated,
        atom,
        span,
    }
}

/// A background atom of a grounding declaration's or a background rule's conditions
/// (never negated).
fn ground_atom(cond: &GroundCond) -> Option<(&EventTerm, bool, Span)> {
    match cond {
        GroundCond::Atom(atom) => Some((atom, false, atom.span)),
        GroundCond::Builtin(_) => None,
    }
}

/// A grounding declaration's or a background rule's atom (never negated).
fn held_atom(atom: EventTerm, _negated: bool, _span: Span) -> GroundCond {
    GroundCond::Atom(atom)
}

/// The background atom of a holdsFor rule's condition, negated or not, and its span.
fn interval_atom(cond: &IntervalCond) -> Option<(&EventTerm, bool, Span)> {
    match cond {
        IntervalCond::Background {
            negated,
            atom,
            span,
        } => Some((atom, *negated, *span)),
        _ => None,
    }
}

/// The background atom of a time-point rule's condition, negated or not, and its span.
fn time_atom(cond: &Cond) -> Option<(&EventTerm, bool, Span)> {
    match cond {
        Cond::Background {
            negated,
            atom,
            span,
        } => Some((atom, *negated, *span)),
        _ => None,
    }
}

/// The bodies `body` stands for with its conditions on `open` predicates read through
/// their clauses' rules (`None` where it has none): a negated one as the negations of
/// every clause's atom, a held one as one body per clause.
fn alternatives<C: Clone>(
    body: &[C],
    open: &[Open],
    atom_of: impl Fn(&C) -> Option<(&EventTerm, bool, Span)>,
    make: impl Fn(EventTerm, bool, Span) -> C,
) -> Option<Vec<Vec<C>>> {
    let mut bodies: Vec<Vec<C>> = vec![Vec::new()];
    let mut changed = false;
    for cond in body {
        let found = atom_of(cond).and_then(|(atom, negated, span)| {
            open.iter()
                .find(|p| p.is(atom))
                .map(|p| (p, atom, negated, span))
        });
        let Some((predicate, atom, negated, span)) = found else {
            bodies.iter_mut().for_each(|b| b.push(cond.clone()));
            continue;
        };
        changed = true;
        let clauses = 0..predicate.bound.len();
        if negated {
            for body in &mut bodies {
                body.extend(
                    clauses
                        .clone()
                        .map(|i| make(predicate.clause_atom(i, atom), true, span)),
                );
            }
        } else {
            let mut more = Vec::new();
            for body in &bodies {
                for i in clauses.clone() {
                    let mut copy = body.clone();
                    copy.push(make(predicate.clause_atom(i, atom), false, span));
                    more.push(copy);
                }
                if more.len() > MAX_COPIES {
                    break;
                }
            }
            bodies = more;
        }
    }
    changed.then_some(bodies)
}
