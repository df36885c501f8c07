//! Background rules whose head has a variable that their body does not bind
//! (`oneIsTug(V1, _V2) :- vesselType(V1, tug).`, "for any V2" to Prolog) hold for more
//! values than any table holds, and rules of comparisons only (`inRange(V, Min, Max) :-
//! V > Min, V < Max.`) bind nothing at all. Each clause of such a predicate is read where
//! the predicate is a condition: a clause with an atom as a rule of its own over the head
//! variables its body binds (`oneIsTug_1(V1) :- vesselType(V1, tug).`, an invented name),
//! a clause of comparisons as its comparisons on the condition's arguments. A held
//! condition is one of its clauses (the rule that reads it copied once per clause: rules
//! of one head are a union, as the clauses are to Prolog); a negated one is every
//! clause's negation (a rule's atom negated; comparisons as one copy per comparison,
//! reversed).

use stgflow_lang::diag::Span;
use stgflow_lang::syntax::ast;
use stgflow_lang::value::Value;

use super::terms::expr_vars;
use super::{
    Arg, Cond, EventRule, EventTerm, GroundCond, IntervalCond, IntervalRule, Item, TimeRule,
};

/// The items with every condition on an open background predicate (see the module docs)
/// read through its clauses' rules. Again while some are found: a rule that calls one of
/// comparisons only (maritime's `absoluteAngleDiff`, which calls `fmod`) is of comparisons
/// only once that call is read.
pub(crate) fn close_open_background(mut items: Vec<Item>) -> Vec<Item> {
    for _ in 0..MAX_ROUNDS {
        let open = open_predicates(&items);
        if open.is_empty() {
            break;
        }
        items = close(items, open);
    }
    items
}

/// The most rounds of [`close_open_background`]: calls nested deeper are left as they are.
const MAX_ROUNDS: usize = 8;

fn close(items: Vec<Item>, open: Vec<Open>) -> Vec<Item> {
    let mut out = Vec::new();
    for item in items {
        match item {
            Item::BackgroundRule { head, .. } if open.iter().any(|p| p.is(&head)) => {}
            other => out.extend(expand(other, &open)),
        }
    }
    for predicate in open {
        out.extend(predicate.rules);
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
    clauses: Vec<Clause>,
    /// The rules of its clauses that are read as rules, named apart.
    rules: Vec<Item>,
}

/// How a clause of an open predicate is read where the predicate is a condition.
enum Clause {
    /// Through a rule of its own over the head positions its body binds, in order.
    Rule(Vec<usize>),
    /// A body of comparisons only (`inRange(V, Min, Max) :- V > Min, V < Max.`): the
    /// comparisons themselves, on the condition's arguments, over the head's variables.
    Inline(Vec<String>, Vec<ast::Builtin>),
}

impl Open {
    fn is(&self, atom: &EventTerm) -> bool {
        atom.name.text == self.name && atom.args.len() == self.arity
    }

    /// The atom of clause `i`'s rule for a condition on `atom`.
    fn clause_atom(&self, i: usize, bound: &[usize], atom: &EventTerm) -> EventTerm {
        let mut read = atom.clone();
        read.name.text = clause_name(&self.name, i);
        read.args = (bound.iter())
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
/// a variable, and some head variable bound by no condition, or some body of comparisons
/// only.
fn open_predicates(items: &[Item]) -> Vec<Open> {
    let mut open: Vec<Open> = Vec::new();
    let mut closed: Vec<(String, usize)> = Vec::new();
    let rules = items.iter().filter_map(|item| match item {
        Item::BackgroundRule { head, body, span } => Some((head, body, *span)),
        _ => None,
    });
    for (head, body, span) in rules {
        let key = (head.name.text.clone(), head.args.len());
        let head_vars: Option<Vec<String>> = (head.args.iter())
            .map(|arg| match arg {
                Arg::Var(name) => Some(name.text.clone()),
                Arg::Const(..) => None,
            })
            .collect();
        let Some(head_vars) = head_vars else {
            // A constant in the head: left to the translation.
            closed.push(key);
            continue;
        };
        let comparisons: Option<Vec<ast::Builtin>> = (body.iter())
            .map(|cond| match cond {
                GroundCond::Builtin(builtin) => Some(builtin.clone()),
                GroundCond::Atom(_) => None,
            })
            .collect();
        let index = match open.iter().position(|p| (p.name.clone(), p.arity) == key) {
            Some(index) => index,
            None => {
                open.push(Open {
                    name: key.0,
                    arity: key.1,
                    clauses: Vec::new(),
                    rules: Vec::new(),
                });
                open.len() - 1
            }
        };
        let predicate = &mut open[index];
        let i = predicate.clauses.len();
        if let (Some(comparisons), false) = (comparisons, body.is_empty()) {
            predicate
                .clauses
                .push(Clause::Inline(head_vars, comparisons));
            continue;
        }
        let mut bound_vars = Vec::new();
        for cond in body {
            cond_vars(cond, &mut bound_vars);
        }
        let bound: Vec<usize> = (0..head_vars.len())
            .filter(|&at| bound_vars.contains(&head_vars[at]))
            .collect();
        let mut rule_head = head.clone();
        rule_head.name.text = clause_name(&predicate.name, i);
        rule_head.args = bound.iter().map(|&at| head.args[at].clone()).collect();
        predicate.rules.push(Item::BackgroundRule {
            head: rule_head,
            body: body.clone(),
            span,
        });
        predicate.clauses.push(Clause::Rule(bound));
    }
    // Only those with a clause to read apart, and given by no fact.
    open.retain(|p| {
        let apart = |c: &Clause| match c {
            Clause::Rule(bound) => bound.len() < p.arity,
            Clause::Inline(..) => true,
        };
        p.clauses.iter().any(apart)
            && !closed.contains(&(p.name.clone(), p.arity))
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
        Item::HoldsFor(rule) => copies(&rule.body, open, INTERVAL, |body| {
            Item::HoldsFor(IntervalRule {
                body,
                ..rule.clone()
            })
        }),
        Item::Initiated(rule) => time_rules(rule, open, Item::Initiated),
        Item::Terminated(rule) => time_rules(rule, open, Item::Terminated),
        Item::HoldsAt(rule) => time_rules(rule, open, Item::HoldsAt),
        Item::Happens(rule) => copies(&rule.body, open, TIME, |body| {
            Item::Happens(EventRule {
                body,
                ..rule.clone()
            })
        }),
        Item::Grounding { entity, body, span } => {
            copies(&body, open, GROUND, |body| Item::Grounding {
                entity: entity.clone(),
                body,
                span,
            })
        }
        Item::BackgroundRule { head, body, span } => {
            copies(&body, open, GROUND, |body| Item::BackgroundRule {
                head: head.clone(),
                body,
                span,
            })
        }
        other => vec![other],
    }
}

/// A time-point rule as [`expand`] makes it, each copy of the rule's kind (`make`).
fn time_rules(rule: TimeRule, open: &[Open], make: fn(TimeRule) -> Item) -> Vec<Item> {
    copies(&rule.body, open, TIME, |body| {
        make(TimeRule {
            body,
            ..rule.clone()
        })
    })
}

/// How conditions of one kind are read and made: the background atom of one, a
/// background condition, a comparison.
type Reading<C> = (
    fn(&C) -> Option<(&EventTerm, bool, Span)>,
    fn(EventTerm, bool, Span) -> C,
    fn(ast::Builtin) -> C,
);

const TIME: Reading<Cond> = (time_atom, background, Cond::Builtin);
const INTERVAL: Reading<IntervalCond> = (interval_atom, interval, IntervalCond::Builtin);
const GROUND: Reading<GroundCond> = (ground_atom, held_atom, GroundCond::Builtin);

/// The items `item` makes of `body`'s alternatives (see [`alternatives`]), or of `body`
/// itself where it has none or too many.
fn copies<C: Clone>(
    body: &[C],
    open: &[Open],
    (atom_of, make, compare): Reading<C>,
    item: impl Fn(Vec<C>) -> Item,
) -> Vec<Item> {
    match alternatives(body, open, atom_of, make, compare) {
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
/// their clauses (`None` where it has none, or one that cannot be read so): a held one as
/// one body per clause, a negated one as the negation of every clause (a rule's atom
/// negated; a body of comparisons as one body per comparison, that comparison reversed).
fn alternatives<C: Clone>(
    body: &[C],
    open: &[Open],
    atom_of: impl Fn(&C) -> Option<(&EventTerm, bool, Span)>,
    make: impl Fn(EventTerm, bool, Span) -> C,
    compare: impl Fn(ast::Builtin) -> C,
) -> Option<Vec<Vec<C>>> {
    let mut bodies: Vec<Vec<C>> = vec![Vec::new()];
    let mut changed = false;
    for (n, cond) in body.iter().enumerate() {
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
        // Each clause read on `atom`'s arguments: alternatives, each a conjunction.
        let read = |i: usize, clause: &Clause| -> Option<Vec<Vec<C>>> {
            match (clause, negated) {
                (Clause::Rule(bound), _) => Some(vec![vec![make(
                    predicate.clause_atom(i, bound, atom),
                    negated,
                    span,
                )]]),
                (Clause::Inline(head, comparisons), false) => {
                    let suffix = format!("_{}{n}", predicate.name);
                    let read = comparisons
                        .iter()
                        .map(|c| substitute(c, head, atom, &suffix));
                    Some(vec![read.map(&compare).collect()])
                }
                (Clause::Inline(head, comparisons), true) => {
                    // Reversing a comparison that binds a variable of its own means nothing.
                    let mut vars = Vec::new();
                    for c in comparisons {
                        expr_vars(&c.lhs, &mut vars);
                        expr_vars(&c.rhs, &mut vars);
                    }
                    if vars.iter().any(|v| !head.contains(v)) {
                        return None;
                    }
                    Some(
                        (comparisons.iter())
                            .map(|c| vec![compare(reversed(substitute(c, head, atom, "")))])
                            .collect(),
                    )
                }
            }
        };
        // Held: one of the clauses; negated: every clause's negation.
        let mut options: Vec<Vec<C>> = if negated {
            vec![Vec::new()]
        } else {
            Vec::new()
        };
        for (i, clause) in predicate.clauses.iter().enumerate() {
            let alternatives = read(i, clause)?;
            options = if negated {
                product(&options, &alternatives)
            } else {
                options.into_iter().chain(alternatives).collect()
            };
        }
        bodies = product(&bodies, &options);
        if bodies.len() > MAX_COPIES {
            return None;
        }
    }
    changed.then_some(bodies)
}

/// Every conjunction of one of `left` and one of `right`.
fn product<C: Clone>(left: &[Vec<C>], right: &[Vec<C>]) -> Vec<Vec<C>> {
    let mut out = Vec::new();
    for l in left {
        for r in right {
            out.push(l.iter().chain(r).cloned().collect());
        }
        if out.len() > MAX_COPIES {
            break;
        }
    }
    out
}

/// `comparison` of a clause whose head's variables are `head`, on the arguments of
/// `atom`: each head variable the argument in its place, each other variable renamed
/// with `suffix` (apart from the rule's own).
fn substitute(
    comparison: &ast::Builtin,
    head: &[String],
    atom: &EventTerm,
    suffix: &str,
) -> ast::Builtin {
    let expr = |e: &ast::Expr| on_arguments(e, head, atom, suffix);
    ast::Builtin {
        lhs: expr(&comparison.lhs),
        rhs: expr(&comparison.rhs),
        ..comparison.clone()
    }
}

fn on_arguments(e: &ast::Expr, head: &[String], atom: &EventTerm, suffix: &str) -> ast::Expr {
    match e {
        ast::Expr::Var(ident) => match head.iter().position(|h| *h == ident.name) {
            Some(at) => match atom.args.get(at) {
                Some(Arg::Var(name)) => ast::Expr::Var(super::ident(name)),
                // Prolog's arithmetic reads `inf` as infinity (`inRange(S, Max, inf)`).
                Some(Arg::Const(value, span)) if *value == Value::sym("inf") => {
                    ast::Expr::Const(Value::Float(f64::INFINITY), *span)
                }
                Some(Arg::Const(value, span)) => ast::Expr::Const(*value, *span),
                None => e.clone(),
            },
            None => ast::Expr::Var(ast::Ident {
                name: format!("{}{suffix}", ident.name),
                span: ident.span,
            }),
        },
        ast::Expr::Const(..) => e.clone(),
        ast::Expr::Binary(op, lhs, rhs, span) => ast::Expr::Binary(
            *op,
            Box::new(on_arguments(lhs, head, atom, suffix)),
            Box::new(on_arguments(rhs, head, atom, suffix)),
            *span,
        ),
        ast::Expr::Call(func, args, span) => ast::Expr::Call(
            *func,
            args.iter()
                .map(|a| on_arguments(a, head, atom, suffix))
                .collect(),
            *span,
        ),
    }
}

/// The comparison of the other sense (`X > Y` for `X =< Y`).
fn reversed(comparison: ast::Builtin) -> ast::Builtin {
    let op = match comparison.op {
        ast::CmpOp::Eq => ast::CmpOp::Ne,
        ast::CmpOp::Ne => ast::CmpOp::Eq,
        ast::CmpOp::Lt => ast::CmpOp::Ge,
        ast::CmpOp::Le => ast::CmpOp::Gt,
        ast::CmpOp::Gt => ast::CmpOp::Le,
        ast::CmpOp::Ge => ast::CmpOp::Lt,
    };
    ast::Builtin { op, ..comparison }
}
