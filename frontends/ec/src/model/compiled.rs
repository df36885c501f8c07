//! RTEC's compiled form read as its source form.
//!
//! RTEC's compiler rewrites an event description before RTEC runs it, and users keep
//! the compiled files (RTEC's own unit tests load only those): every `initiatedAt`/
//! `terminatedAt` rule takes the cyclic form's window bounds and checks them
//! (`initiatedAt(F=V, T1, T, T2) :- happensAtIE(E, T), T1 =< T, T < T2, …`); conditions
//! name where RTEC keeps what they read (`happensAtIE`, `holdsAtProcessedSimpleFluent(
//! Index, F=V, T)`, `holdsForProcessedSDFluent(Index, F=V, I)`, `holdsAtCyclic`, …); a
//! statically determined fluent's head is `holdsForSDFluent(F=V, I)`; dynamic grounding
//! is `collectGrounds([E, …], D)` with `dgrounded(F=V, D)`. Each is the source clause it
//! was compiled from: the conditions read what they name, the bound checks are the
//! window's own (the source form has none), a rule whose conditions then read no other
//! fluent's initiations is the plain two-argument rule, and `collectGrounds` is RTEC's
//! `dynamicDomain` grown by the events it lists.
//!
//! Pitfall: an index argument (the first of the `…Processed…` conditions) is RTEC's
//! bookkeeping and is dropped; it always repeats an argument of the entity it indexes.

use crate::syntax::{BinOp, Clause, Name, Term};

/// `clauses` with every compiled clause in its source form (see the module docs).
pub(super) fn source_form(clauses: &[Clause]) -> Vec<Clause> {
    let mut out = Vec::with_capacity(clauses.len());
    let mut domains: Vec<String> = Vec::new();
    for clause in clauses {
        if let Some(grounds) = collect_grounds(clause, &mut domains) {
            out.extend(grounds);
            continue;
        }
        let head = match &clause.head {
            Term::Compound(name, args, span) if name.text == "holdsForSDFluent" => {
                Term::Compound(renamed(name, "holdsFor"), args.clone(), *span)
            }
            other => other.clone(),
        };
        let body: Vec<Term> = clause.body.iter().map(condition).collect();
        out.push(without_bound_checks(Clause {
            head,
            body,
            span: clause.span,
        }));
    }
    out
}

/// The source condition of a compiled one.
fn condition(term: &Term) -> Term {
    match term {
        Term::Not(inner, span) => Term::Not(Box::new(condition(inner)), *span),
        Term::Compound(name, args, span) => {
            let source = match (name.text.as_str(), args.as_slice()) {
                ("happensAtIE", [_, _]) => Some(("happensAt", &args[..])),
                ("holdsAtIE", [_, _]) => Some(("holdsAt", &args[..])),
                ("holdsForIESI", [_, _]) => Some(("holdsFor", &args[..])),
                (
                    "happensAtProcessedIE"
                    | "happensAtProcessed"
                    | "happensAtProcessedSimpleFluent"
                    | "happensAtProcessedSDFluent",
                    [_index, _, _],
                ) => Some(("happensAt", &args[1..])),
                (
                    "holdsAtCyclic"
                    | "holdsAtProcessedIE"
                    | "holdsAtProcessedSimpleFluent"
                    | "holdsAtProcessedSDFluent",
                    [_index, _, _],
                ) => Some(("holdsAt", &args[1..])),
                (
                    "holdsForProcessedIE"
                    | "holdsForProcessedSimpleFluent"
                    | "holdsForProcessedSDFluent",
                    [_index, _, _],
                ) => Some(("holdsFor", &args[1..])),
                _ => None,
            };
            match source {
                Some((to, args)) => Term::Compound(renamed(name, to), args.to_vec(), *span),
                // The goals of `findall(V, Goal, L)` and of a conjunction are conditions.
                None => Term::Compound(name.clone(), args.iter().map(condition).collect(), *span),
            }
        }
        Term::List(items, span) => Term::List(items.iter().map(condition).collect(), *span),
        other => other.clone(),
    }
}

/// A compiled `initiatedAt(F=V, T1, T, T2)`/`terminatedAt(…)` rule without its checks
/// `T1 =< T` and `T < T2`; the plain rule `initiatedAt(F=V, T)` where its conditions then
/// read no fluent's initiations or terminations (RTEC's cyclic form proper).
fn without_bound_checks(clause: Clause) -> Clause {
    let Term::Compound(name, args, span) = &clause.head else {
        return clause;
    };
    let (fluent, from, time, to) = match args.as_slice() {
        [fluent, Term::Var(from), Term::Var(time), Term::Var(to)]
            if matches!(name.text.as_str(), "initiatedAt" | "terminatedAt") =>
        {
            (fluent, from, time, to)
        }
        _ => return clause,
    };
    let is_var = |term: &Term, var: &Name| matches!(term, Term::Var(v) if v.text == var.text);
    let checks = |term: &Term| match term {
        Term::Binary(BinOp::Le, lhs, rhs, _) => is_var(lhs, from) && is_var(rhs, time),
        Term::Binary(BinOp::Lt, lhs, rhs, _) => is_var(lhs, time) && is_var(rhs, to),
        _ => false,
    };
    if !clause.body.iter().any(checks) {
        return clause;
    }
    let body: Vec<Term> = clause.body.iter().filter(|t| !checks(t)).cloned().collect();
    let mentions = |term: &Term, var: &Name| term_mentions(term, &var.text);
    let cyclic = body
        .iter()
        .any(|term| mentions(term, from) || mentions(term, to));
    let head = if cyclic {
        clause.head.clone()
    } else {
        Term::Compound(
            name.clone(),
            vec![fluent.clone(), Term::Var(time.clone())],
            *span,
        )
    };
    Clause {
        head,
        body,
        span: clause.span,
    }
}

/// Whether variable `var` occurs in `term`.
fn term_mentions(term: &Term, var: &str) -> bool {
    match term {
        Term::Var(name) => name.text == var,
        Term::Compound(_, args, _) | Term::List(args, _) => {
            args.iter().any(|a| term_mentions(a, var))
        }
        Term::Binary(_, lhs, rhs, _) => term_mentions(lhs, var) || term_mentions(rhs, var),
        Term::Not(inner, _) => term_mentions(inner, var),
        Term::Atom(_) | Term::Int(..) | Term::Float(..) | Term::Str(..) => false,
    }
}

/// `collectGrounds([E1, …], d(X))` as `dynamicDomain(d(_))` (once per domain) and
/// `grounding(Ei) :- d(X).` for each listed event; `None` for any other clause.
fn collect_grounds(clause: &Clause, domains: &mut Vec<String>) -> Option<Vec<Clause>> {
    let Term::Compound(name, args, span) = &clause.head else {
        return None;
    };
    let [Term::List(events, _), domain] = args.as_slice() else {
        return None;
    };
    if name.text != "collectGrounds" || !clause.body.is_empty() {
        return None;
    }
    let (domain_name, arity) = match domain {
        Term::Compound(d, a, _) => (d, a.len()),
        _ => return None,
    };
    let mut out = Vec::new();
    if !domains.contains(&domain_name.text) {
        domains.push(domain_name.text.clone());
        let anonymous = (0..arity)
            .map(|_| Term::Var(renamed(domain_name, "_")))
            .collect();
        out.push(Clause {
            head: Term::Compound(
                renamed(name, "dynamicDomain"),
                vec![Term::Compound(domain_name.clone(), anonymous, *span)],
                *span,
            ),
            body: Vec::new(),
            span: clause.span,
        });
    }
    for event in events {
        out.push(Clause {
            head: Term::Compound(
                renamed(name, "grounding"),
                vec![event.clone()],
                event.span(),
            ),
            body: vec![domain.clone()],
            span: clause.span,
        });
    }
    Some(out)
}

/// `name` spelt `text`, where it was.
fn renamed(name: &Name, text: &str) -> Name {
    Name {
        text: text.to_owned(),
        span: name.span,
    }
}
