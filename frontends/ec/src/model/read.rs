//! Each clause read as an ECDE item by its head: rules, `fi`/`p`/`initially` facts, RTEC's
//! declarations and background knowledge, with the errors in clause heads and shapes.

use stgflow_lang::diag::{Diagnostic, Diagnostics, Span};

use super::compiled;
use super::conditions::{
    bounds_reach_back, cond, conds, cut_error, cyclic_conds, interval_cond, needed_lists,
    optimisation_check,
};
use super::terms::{arg, builtin, event_term, expr, fluent_term, functor};
use super::{Arg, DeclKind, Entity, EventRule, GroundCond, IntervalRule, Item, TimeRule, closest};
use crate::codes::Code;
use crate::syntax::{BinOp, Clause, Name, Term};
use stgflow_lang::value::Value;

/// Reads clauses as ECDE items; every clause that does not fit is reported.
pub fn classify(clauses: &[Clause]) -> (Vec<Item>, Diagnostics) {
    let mut diagnostics = Diagnostics::default();
    let mut items = Vec::new();
    // `fi` rules whose delay a background fact gives, read once every fact is known.
    let mut deferred = Vec::new();
    for clause in &compiled::source_form(clauses) {
        // `p :- fail.` holds for nothing: it says nothing (RTEC's `buildFromPoints(_) :-
        // fail.`, a declaration that no entity is one).
        if (clause.body.iter())
            .any(|goal| matches!(goal, Term::Atom(n) if n.text == "fail" || n.text == "false"))
        {
            continue;
        }
        if background_fact(clause) {
            if let Ok((name, args, _)) = functor(&clause.head, "a fact") {
                items.push(Item::Background {
                    name,
                    args,
                    span: clause.span,
                });
            }
            continue;
        }
        if delay_variable(clause).is_some() {
            deferred.push(clause.clone());
            continue;
        }
        match item(clause, &mut diagnostics) {
            Ok(Some(item)) => items.push(item),
            Ok(None) => {}
            Err(diagnostic) => diagnostics.push(diagnostic),
        }
    }
    for clause in deferred {
        let read = with_delay_of_background(clause, &items)
            .and_then(|clause| item(&clause, &mut diagnostics));
        match read {
            Ok(Some(item)) => items.push(item),
            Ok(None) => {}
            Err(diagnostic) => diagnostics.push(diagnostic),
        }
    }
    (items, diagnostics)
}

/// The variable that a `fi` rule's delay is (`fi(F=V, F=V2, D) :- thresholds(crs, D).`),
/// or a holdsFor rule's duration (`intDurGreater(I, D, O)` after `thresholds(t, D)`): a
/// number that background facts give.
fn delay_variable(clause: &Clause) -> Option<&Name> {
    match clause.head.functor() {
        Some((name, [_, _, Term::Var(delay)])) if name.text == "fi" && !clause.body.is_empty() => {
            Some(delay)
        }
        Some((name, [_, _])) if name.text == "holdsFor" => {
            clause.body.iter().find_map(|goal| match goal.functor() {
                Some((name, [_, Term::Var(duration), _])) if name.text == "intDurGreater" => {
                    Some(duration)
                }
                _ => None,
            })
        }
        _ => None,
    }
}

/// A `fi` rule whose delay, or a holdsFor rule whose duration, is a variable, with the
/// number that the background facts its conditions read give it (RTEC's maritime
/// thresholds): one value, or an error.
fn with_delay_of_background(mut clause: Clause, items: &[Item]) -> Read<Clause> {
    let Some(delay) = delay_variable(&clause).cloned() else {
        return Ok(clause);
    };
    let deadline = clause
        .head
        .functor()
        .is_some_and(|(name, _)| name.text == "fi");
    let (what, label) = if deadline {
        ("delay", "a deadline's delay: a number of time points")
    } else {
        (
            "duration",
            "an interval's duration: a number of time points",
        )
    };
    let mut values: Vec<Value> = Vec::new();
    for goal in &clause.body {
        let Some((name, args)) = goal.functor() else {
            continue;
        };
        let Some(at) = args
            .iter()
            .position(|a| matches!(a, Term::Var(v) if v.text == delay.text))
        else {
            continue;
        };
        let wanted: Vec<Option<Arg>> = args.iter().map(|a| arg(a).ok()).collect();
        for item in items {
            let Item::Background {
                name: fact,
                args: given,
                ..
            } = item
            else {
                continue;
            };
            let matches = fact.text == name.text
                && given.len() == wanted.len()
                && given.iter().zip(&wanted).all(|(g, w)| match (g, w) {
                    (Arg::Const(g, _), Some(Arg::Const(w, _))) => g == w,
                    _ => true,
                });
            if let (true, Some(Arg::Const(value, _))) = (matches, given.get(at)) {
                if !values.contains(value) {
                    values.push(*value);
                }
            }
        }
    }
    match values.as_slice() {
        [Value::Int(points)] => {
            let number = Term::Int(*points, delay.span);
            if deadline {
                if let Term::Compound(_, args, _) = &mut clause.head {
                    args[2] = number;
                }
            } else {
                for goal in &mut clause.body {
                    if let Term::Compound(name, args, _) = goal {
                        if name.text == "intDurGreater"
                            && matches!(&args[1], Term::Var(v) if v.text == delay.text)
                        {
                            args[1] = number.clone();
                        }
                    }
                }
            }
            Ok(clause)
        }
        [] => Err(Diagnostic::error(
            Code::E504,
            format!("no background fact gives the {what} `{}`", delay.text),
        )
        .with_label(delay.span, label)
        .with_help("give it as a number, or by a background fact the rule's conditions read (`thresholds(crs, 1800).`)")),
        [value] => Err(Diagnostic::error(
            Code::E504,
            format!("the background facts give the {what} `{}` the value {value}", delay.text),
        )
        .with_label(delay.span, label)),
        several => Err(Diagnostic::error(
            Code::E504,
            format!(
                "the background facts give the {what} `{}` {} values: {}",
                delay.text,
                several.len(),
                several.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            ),
        )
        .with_label(delay.span, if deadline { "a deadline has one delay" } else { "a duration is one number" })),
    }
}

/// Whether `clause` is a fact whose head is no ECDE clause or RTEC declaration
/// (`person(chris).`, `vehicle(75, bus).` in RTEC's background files, or a pattern with
/// variables, `price(_, 10).`).
fn background_fact(clause: &Clause) -> bool {
    let Some((name, args)) = clause.head.functor() else {
        return false;
    };
    let known = HEADS.contains(&name.text.as_str())
        || IGNORED.contains(&name.text.as_str())
        || DECLARATIONS.contains(&name.text.as_str());
    // Variables make a pattern (`price(_, 10).`: every goods' price is 10).
    // A ground term of operators (`cargo-hazarda(major)`) is one constant.
    let flat = args.iter().all(|a| {
        matches!(
            a,
            Term::Atom(_) | Term::Int(..) | Term::Float(..) | Term::Str(..) | Term::Var(_)
        ) || matches!(a, Term::Binary(..)) && arg(a).is_ok()
    });
    // A name close to a clause head is a misspelt clause (E503 says which), not knowledge.
    let misspelt = closest(&name.text, HEADS.iter().copied()).is_some();
    clause.body.is_empty() && !known && !misspelt && flat
}

/// RTEC's declarations of entities that the translation reads.
const DECLARATIONS: [&str; 10] = [
    "grounding",
    "dynamicDomain",
    "event",
    "inputEntity",
    "outputEntity",
    "points",
    "buildFromPoints",
    "collectIntervals",
    "simpleFluent",
    "sDFluent",
];

pub(super) type Read<T> = Result<T, Diagnostic>;

const HEADS: [&str; 11] = [
    "initiatedAt",
    "terminatedAt",
    "holdsAt",
    "holdsFor",
    "fi",
    "p",
    "initially",
    "outputEntity",
    "happensAt",
    "initiates",
    "terminates",
];

/// RTEC declarations that the translation does not need.
const IGNORED: [&str; 9] = [
    "index",
    "cachingOrder",
    "cachingOrder2",
    "dgrounded",
    "cyclic",
    "internalEntity",
    "maxDuration",
    "needsGrounding",
    "temporalDistance",
];

/// What one clause means, by its head. Over 100 lines: one arm per RTEC clause kind.
fn item(clause: &Clause, diagnostics: &mut Diagnostics) -> Read<Option<Item>> {
    let Some((name, args)) = clause.head.functor() else {
        return Err(Diagnostic::error(
            Code::E503,
            format!("`{}` cannot head a clause", clause.head),
        )
        .with_label(clause.head.span(), "expected initiatedAt, terminatedAt, holdsAt, holdsFor, fi, p, initially or a declaration"));
    };
    let fact = clause.body.is_empty();
    let span = clause.span;
    let item = match (name.text.as_str(), args, fact) {
        ("initiatedAt" | "terminatedAt" | "holdsAt", [fluent, time], false) => {
            let rule = TimeRule {
                head: fluent_term(fluent)?,
                time: expr(time)?,
                body: conds(&clause.body)?,
                span,
            };
            match name.text.as_str() {
                "initiatedAt" => Item::Initiated(rule),
                "terminatedAt" => Item::Terminated(rule),
                _ => Item::HoldsAt(rule),
            }
        }
        // RTEC's `initially` in the cyclic form: initiated at -1, before the first time
        // point, where the window (T1, T2] reaches back to it.
        ("initiatedAt", [fluent, Term::Var(from), Term::Int(-1, _), Term::Var(to)], false)
            if clause
                .body
                .iter()
                .all(|c| bounds_reach_back(c, &from.text, &to.text)) =>
        {
            Item::Initially(fluent_term(fluent)?, span)
        }
        // RTEC's cyclic form: `initiatedAt(F=V, T1, T, T2) :- conds`, F=V initiated at
        // T in (T1, T2] where its conditions hold; `initiatedAt(G=W, T1, T, T2)` and
        // `terminatedAt(…)` among them read G=W's initiations and terminations at T.
        ("initiatedAt" | "terminatedAt", [fluent, from, time, to], false) => {
            let rule = TimeRule {
                head: fluent_term(fluent)?,
                time: expr(time)?,
                body: cyclic_conds(&clause.body, from, time, to)?,
                span,
            };
            match name.text.as_str() {
                "initiatedAt" => Item::Initiated(rule),
                _ => Item::Terminated(rule),
            }
        }
        // RTEC's backward-compatible form: `initiates(E, F=V, T) :- conds` is
        // `initiatedAt(F=V, T) :- happensAt(E, T), conds`.
        ("initiates" | "terminates", [event, fluent, time], _) => {
            let happens = Term::Compound(
                Name {
                    text: "happensAt".to_owned(),
                    span: name.span,
                },
                vec![event.clone(), time.clone()],
                event.span(),
            );
            let mut body = vec![cond(&happens)?];
            body.extend(conds(&clause.body)?);
            let rule = TimeRule {
                head: fluent_term(fluent)?,
                time: expr(time)?,
                body,
                span,
            };
            match name.text.as_str() {
                "initiates" => Item::Initiated(rule),
                _ => Item::Terminated(rule),
            }
        }
        ("happensAt", [event, time], false) => {
            if let Term::Compound(kind, _, _) = event {
                if kind.text == "start" || kind.text == "end" {
                    return Err(Diagnostic::error(
                        Code::E504,
                        format!("`{}(…)` cannot be derived by a rule", kind.text),
                    )
                    .with_label(event.span(), "the start or end of a fluent's interval")
                    .with_note("it happens where the fluent starts or stops holding; define the fluent instead"));
                }
            }
            Item::Happens(EventRule {
                head: event_term(event)?,
                time: expr(time)?,
                body: conds(&clause.body)?,
                span,
            })
        }
        ("holdsFor", [fluent, Term::List(items, _)], true) if items.is_empty() => {
            diagnostics.push(
                Diagnostic::warning(Code::W502, "`holdsFor(…, [])` adds nothing and is ignored")
                    .with_label(span, "an empty list of intervals")
                    .with_note("RTEC writes it after a cut as the fallback of its optimisation checks; the translation needs neither"),
            );
            return Ok(None);
        }
        ("holdsFor", [fluent, Term::Var(list)], false) => {
            // RTEC's optimisation checks (`\+ I=[], !`) are left out where they change
            // nothing: where an empty I makes the result empty.
            let mut checked = Vec::new();
            let mut cut = None;
            let mut body = Vec::new();
            for term in &clause.body {
                match term {
                    Term::Atom(name) if name.text == "!" => cut = Some(name.span),
                    // `I \= []`, the same check as `\+ I=[]`.
                    Term::Binary(BinOp::Ne, lhs, rhs, _) if matches!(&**rhs, Term::List(items, _) if items.is_empty()) =>
                    {
                        let Term::Var(name) = &**lhs else {
                            return Err(optimisation_check(term));
                        };
                        checked.push((name.clone(), term.span()));
                    }

                    Term::Not(inner, _) => match &**inner {
                        Term::Binary(BinOp::Eq, lhs, rhs, _) if matches!(&**rhs, Term::List(items, _) if items.is_empty()) =>
                        {
                            let Term::Var(name) = &**lhs else {
                                return Err(optimisation_check(term));
                            };
                            checked.push((name.clone(), term.span()));
                        }
                        // `\+ oneIsTug(V1, V2)`: background knowledge that must not hold.
                        _ => body.push(interval_cond(term)?),
                    },
                    other => body.push(interval_cond(other)?),
                }
            }
            if let (Some(at), true) = (cut, checked.is_empty()) {
                return Err(cut_error(at));
            }
            let needed = needed_lists(&body, list);
            if let Some((name, at)) = checked.iter().find(|(n, _)| !needed.contains(&n.text)) {
                return Err(Diagnostic::error(
                    Code::E507,
                    format!("`\\+ {}=[]` is not an optimisation check here", name.text),
                )
                .with_label(*at, "an empty list here does not make the result empty")
                .with_note("it is left out only where the list feeds `intersect_all` or is the base of `relative_complement_all` on the way to the result; elsewhere it depends on the whole window, which a stream cannot wait for"));
            }
            Item::HoldsFor(IntervalRule {
                head: fluent_term(fluent)?,
                list: list.clone(),
                body,
                span,
            })
        }
        ("holdsFor", [_, other], false) => {
            return Err(Diagnostic::error(
                Code::E504,
                "the second argument of a `holdsFor` head must be a variable",
            )
            .with_label(
                other.span(),
                "expected the variable of the list of intervals",
            ));
        }
        ("fi", [from, to, delay], fact) => {
            let delay = match delay {
                Term::Int(d, _) if *d >= 1 && *d <= i64::from(u32::MAX) => *d as u32,
                other => {
                    return Err(Diagnostic::error(
                        Code::E504,
                        "the delay of `fi` must be a positive integer",
                    )
                    .with_label(
                        other.span(),
                        format!("`{other}` is not a number of time points ≥ 1"),
                    ));
                }
            };
            Item::Fi {
                from: fluent_term(from)?,
                to: fluent_term(to)?,
                delay,
                conds: if fact {
                    Vec::new()
                } else {
                    deadline_conds(from, &clause.body)?
                },
                span,
            }
        }
        ("p", [fluent], true) => Item::Postponed(fluent_term(fluent)?, span),
        ("initially", [fluent], true) => Item::Initially(fluent_term(fluent)?, span),
        ("grounding", [entity], _) => Item::Grounding {
            entity: entity_of(entity)?,
            body: ground_body(clause)?,
            span,
        },
        ("dynamicDomain", [domain], true) => Item::DynamicDomain(event_term(domain)?, span),
        (declaration, [entity], true) if DECLARATIONS.contains(&declaration) => {
            let kind = match name.text.as_str() {
                "event" => DeclKind::Event,
                "inputEntity" => DeclKind::Input,
                "outputEntity" => DeclKind::Output,
                "points" | "buildFromPoints" => DeclKind::Points,
                "collectIntervals" => DeclKind::Intervals,
                "simpleFluent" => DeclKind::Simple,
                _ => DeclKind::Kind,
            };
            Item::Declare(kind, entity_of(entity)?, span)
        }
        (ignored, _, _) if IGNORED.contains(&ignored) => {
            diagnostics.push(
                Diagnostic::warning(Code::W503, format!("RTEC's `{ignored}` declaration is ignored"))
                    .with_label(name.span, "not needed by the translation")
                    .with_note("the translation grounds nothing in advance: variables range over what the input brings"),
            );
            return Ok(None);
        }
        (known, _, _) if HEADS.contains(&known) || known == "event" || known == "inputEntity" => {
            return Err(shape_error(name, args.len(), fact, span));
        }
        // Background knowledge as a rule (`role_of(A, chair) :- person(A), 0 is A mod
        // 10.`): conditions on other background predicates and comparisons only.
        (other, _, false)
            if closest(other, HEADS.iter().copied()).is_none()
                && clause.body.iter().all(background_cond) =>
        {
            Item::BackgroundRule {
                head: event_term(&clause.head)?,
                body: ground_body(clause)?,
                span,
            }
        }
        (other, _, _) => {
            let mut diagnostic = Diagnostic::error(
                Code::E503,
                format!("`{other}/{}` is not an ECDE clause", args.len()),
            )
            .with_label(name.span, "unknown clause head")
            .with_note("clauses are initiatedAt, terminatedAt, holdsAt, holdsFor and happensAt rules, initiates/terminates, fi/p/initially facts and RTEC declarations");
            if let Some(close) = closest(other, HEADS.iter().copied()) {
                diagnostic = diagnostic.with_help(format!("did you mean `{close}`?"));
            }
            return Err(diagnostic);
        }
    };
    Ok(Some(item))
}

/// Whether `term` can be a condition of background knowledge: a comparison, or an atom
/// that is no Event Calculus predicate.
fn background_cond(term: &Term) -> bool {
    if builtin(term).is_some() {
        return true;
    }
    term.functor().is_some_and(|(name, _)| {
        !HEADS.contains(&name.text.as_str())
            && !["holdsFor", "findall", "length", "not", "\\+"].contains(&name.text.as_str())
    })
}

fn entity_of(entity: &Term) -> Read<Entity> {
    Ok(match entity {
        Term::Binary(BinOp::Eq, ..) => Entity::Fluent(fluent_term(entity)?),
        other => Entity::Event(event_term(other)?),
    })
}

/// The conditions of a grounding declaration or a background rule.
fn ground_body(clause: &Clause) -> Read<Vec<GroundCond>> {
    clause.body.iter().map(ground_cond).collect()
}

/// A condition of a `grounding` declaration: a background or domain atom, or a
/// comparison (`P1 @< P2`).
fn ground_cond(term: &Term) -> Read<GroundCond> {
    if let Some(builtin) = builtin(term) {
        return Ok(GroundCond::Builtin(builtin?));
    }
    match term.functor() {
        Some(_) => Ok(GroundCond::Atom(event_term(term)?)),
        None => Err(Diagnostic::error(
            Code::E506,
            format!("`{term}` is not a condition of a grounding declaration"),
        )
        .with_label(
            term.span(),
            "expected a background fact's predicate or a comparison",
        )),
    }
}

/// The conditions of a `fi` rule: background knowledge and comparisons; RTEC's
/// `grounding(F=V)` of the rule's own pair (`fi(rich(X)=true, rich(X)=false, 4) :-
/// grounding(rich(X)=true).`) says what every pair's rules already say, and is left out.
fn deadline_conds(from: &Term, body: &[Term]) -> Read<Vec<GroundCond>> {
    let mut conds = Vec::new();
    for term in body {
        if let Term::Compound(name, args, _) = term {
            if name.text == "grounding" {
                match args.as_slice() {
                    [pair] if pair.to_string() == from.to_string() => continue,
                    _ => {
                        return Err(Diagnostic::error(
                            Code::E504,
                            format!("`{term}` in a `fi` rule grounds another pair than its own"),
                        )
                        .with_label(term.span(), format!("expected `grounding({from})`"))
                        .with_note("a `fi` rule's conditions say where its deadline applies: background knowledge, comparisons, or the grounding of its own pair"));
                    }
                }
            }
        }
        conds.push(ground_cond(term)?);
    }
    Ok(conds)
}

fn shape_error(name: &Name, arity: usize, fact: bool, span: Span) -> Diagnostic {
    let expected = match name.text.as_str() {
        "initiatedAt" | "terminatedAt" => "a rule `NAME(F=V, T) :- happensAt(E, T), …`",
        "initiates" | "terminates" => "`NAME(E, F=V, T)`, a fact or a rule",
        "happensAt" => "a rule `happensAt(E, T) :- happensAt(E1, T), …`",
        "holdsAt" => "a rule `holdsAt(F=V, T) :- holdsAt(F1=V1, T), …`",
        "holdsFor" => "a rule `holdsFor(F=V, I) :- holdsFor(F1=V1, I1), …, union_all([I1, …], I)`",
        "fi" => "`fi(F=V, F=V2, D).`, a fact or a rule on background knowledge",
        "p" => "a fact `p(F=V).`",
        "initially" => "a fact `initially(F=V).`",
        _ => "a fact `NAME(Entity).`",
    };
    Diagnostic::error(
        Code::E504,
        format!(
            "`{}` written as a {} with {arity} argument{}",
            name.text,
            if fact { "fact" } else { "rule" },
            if arity == 1 { "" } else { "s" }
        ),
    )
    .with_label(
        span,
        format!("expected {}", expected.replace("NAME", &name.text)),
    )
}
