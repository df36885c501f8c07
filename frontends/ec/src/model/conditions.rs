//! The conditions of rules: those of time-point rules (RTEC's cyclic form and `findall`
//! counts included) and those of `holdsFor` rules, with the errors in them.

use stgflow_lang::diag::{Diagnostic, Span};

use super::read::Read;
use super::terms::{builtin, event_term, expr, fluent_term};
use super::{Cond, Happening, IntervalCond, Reads, closest};
use crate::codes::Code;
use crate::syntax::{BinOp, Name, Term};

/// The conditions of a rule in RTEC's cyclic form (`initiatedAt(F=V, T1, T, T2)`):
/// `initiatedAt(G=W, T1, T, T2)` and `terminatedAt(G=W, T1, T, T2)`, with the head's
/// T1, T and T2, read G=W's initiations and terminations at T; the others are
/// conditions at T as in `initiatedAt/2`, and read neither T1 nor T2 (the window's
/// bounds, which a stream has no use for).
pub(super) fn cyclic_conds(terms: &[Term], from: &Term, time: &Term, to: &Term) -> Read<Vec<Cond>> {
    let (Term::Var(from_name), Term::Var(to_name)) = (from, to) else {
        let at = if matches!(from, Term::Var(_)) {
            to
        } else {
            from
        };
        return Err(Diagnostic::error(
            Code::E504,
            "the first and last time arguments of RTEC's cyclic form must be variables",
        )
        .with_label(at.span(), "expected the variable of the window's bound")
        .with_note("`initiatedAt(F=V, T1, T, T2)`: F=V is initiated at T, within (T1, T2]"));
    };
    let bounds = [from_name.text.as_str(), to_name.text.as_str()];
    let mut plain = Vec::new();
    let mut out = Vec::new();
    for term in terms {
        let (negated, inner) = match term {
            Term::Not(inner, _) => (true, &**inner),
            other => (false, other),
        };
        match inner.functor() {
            Some((name, [fluent, t1, t, t2]))
                if (name.text == "initiatedAt" || name.text == "terminatedAt")
                    && same_var(t1, from)
                    && same_var(t, time)
                    && same_var(t2, to) =>
            {
                out.push(Cond::Holds {
                    negated,
                    fluent: fluent_term(fluent)?,
                    time: expr(t)?,
                    span: term.span(),
                    reads: if name.text == "initiatedAt" {
                        Reads::Initiated
                    } else {
                        Reads::Terminated
                    },
                });
            }
            _ => {
                if let Some(bound) = mentions(term, &bounds) {
                    return Err(Diagnostic::error(
                        Code::E504,
                        format!("`{bound}`, a bound of RTEC's cyclic form, is read by `{term}`"),
                    )
                    .with_label(term.span(), "expected `initiatedAt(G=W, T1, T, T2)`, `terminatedAt(…)` with the head's times, or a condition at T")
                    .with_note("the window's bounds (T1, T2] are RTEC's; a stream evaluates every time point once, so a condition may not read them"));
                }
                plain.push(term.clone());
            }
        }
    }
    out.extend(conds(&plain)?);
    Ok(out)
}

/// Whether `term` is `T1 =< -1` or `-1 < T2` (either way round): a condition that the
/// window (T1, T2] reaches back to time -1, where RTEC's cyclic form writes `initially`.
pub(super) fn bounds_reach_back(term: &Term, from: &str, to: &str) -> bool {
    let minus_one = |t: &Term| match t {
        Term::Int(-1, _) => true,
        Term::Binary(BinOp::Sub, zero, one, _) => {
            matches!((&**zero, &**one), (Term::Int(0, _), Term::Int(1, _)))
        }
        _ => false,
    };
    let var = |t: &Term, name: &str| matches!(t, Term::Var(v) if v.text == name);
    match term {
        Term::Binary(BinOp::Le, a, b, _) => var(a, from) && minus_one(b),
        Term::Binary(BinOp::Ge, a, b, _) => minus_one(a) && var(b, from),
        Term::Binary(BinOp::Lt, a, b, _) => minus_one(a) && var(b, to),
        Term::Binary(BinOp::Gt, a, b, _) => var(a, to) && minus_one(b),
        _ => false,
    }
}

/// Whether `a` and `b` are the same variable.
fn same_var(a: &Term, b: &Term) -> bool {
    matches!((a, b), (Term::Var(x), Term::Var(y)) if x.text == y.text)
}

/// The first of `names` that occurs as a variable in `term`.
fn mentions<'n>(term: &Term, names: &[&'n str]) -> Option<&'n str> {
    match term {
        Term::Var(name) => names.iter().find(|n| **n == name.text).copied(),
        Term::Atom(_) | Term::Int(..) | Term::Float(..) | Term::Str(..) => None,
        Term::Compound(_, args, _) | Term::List(args, _) => {
            args.iter().find_map(|a| mentions(a, names))
        }
        Term::Binary(_, lhs, rhs, _) => mentions(lhs, names).or_else(|| mentions(rhs, names)),
        Term::Not(inner, _) => mentions(inner, names),
    }
}

/// The conditions of a time-point rule's body: each term a condition, but a `findall`
/// and the `length` of its list, which are one count ([`Cond::Count`]).
pub(super) fn conds(terms: &[Term]) -> Read<Vec<Cond>> {
    let mut out = Vec::new();
    let mut lengths_taken: Vec<usize> = Vec::new();
    for (i, term) in terms.iter().enumerate() {
        if lengths_taken.contains(&i) {
            continue;
        }
        let Some((name, [template, goal, list])) = term.functor() else {
            out.push(cond(term)?);
            continue;
        };
        if name.text != "findall" {
            out.push(cond(term)?);
            continue;
        }
        let Term::Var(list) = list else {
            return Err(Diagnostic::error(
                Code::E506,
                "the list of a `findall` must be a variable",
            )
            .with_label(list.span(), "expected a variable"));
        };
        let length = (terms.iter().enumerate().skip(i + 1)).find_map(|(j, t)| match t.functor() {
            Some((n, [Term::Var(l), Term::Var(count)]))
                if n.text == "length" && l.text == list.text =>
            {
                Some((j, count.clone()))
            }
            _ => None,
        });
        let Some((j, result)) = length else {
            return Err(Diagnostic::error(
                Code::E506,
                format!("`findall` into `{}` without `length({}, N)`", list.text, list.text),
            )
            .with_label(term.span(), "a list of what holds")
            .with_note("a findall's list is read only by its length: TD counts (`#count`), it has no lists")
            .with_help(format!("write `length({}, N)` after it and compare N", list.text)));
        };
        lengths_taken.push(j);
        let mut counted = Vec::new();
        template_vars(template, &mut counted)?;
        out.push(Cond::Count {
            result,
            counted,
            body: vec![cond(goal)?],
            span: term.span().to(terms[j].span()),
        });
    }
    Ok(out)
}

/// The variables of a findall's template (a variable, or a term of variables), in order.
fn template_vars(template: &Term, out: &mut Vec<Name>) -> Read<()> {
    match template {
        Term::Var(name) if name.text == "_" => Err(Diagnostic::error(
            Code::E506,
            "`_` as a findall template counts nothing",
        )
        .with_label(name.span, "name what is counted")),
        Term::Var(name) => {
            if !out.iter().any(|n| n.text == name.text) {
                out.push(name.clone());
            }
            Ok(())
        }
        Term::Compound(_, args, _) | Term::List(args, _) => {
            args.iter().try_for_each(|arg| template_vars(arg, out))
        }
        Term::Atom(_) | Term::Int(..) | Term::Float(..) | Term::Str(..) => Ok(()),
        other => Err(Diagnostic::error(
            Code::E506,
            "a findall template is a variable or a term of variables",
        )
        .with_label(other.span(), "not a template")),
    }
}

pub(super) fn cond(term: &Term) -> Read<Cond> {
    if let Term::Atom(name) = term {
        if name.text == "!" {
            return Err(cut_error(name.span));
        }
    }
    let (negated, inner, span) = match term {
        Term::Not(inner, span) => (true, &**inner, *span),
        Term::Compound(name, args, span) if name.text == "not" && args.len() == 1 => {
            (true, &args[0], *span)
        }
        other => (false, other, other.span()),
    };
    if let Some(builtin) = builtin(term) {
        return Ok(Cond::Builtin(builtin?));
    }
    match inner.functor() {
        Some((name, [what, time])) if name.text == "happensAt" => {
            let what = match what {
                Term::Compound(kind, args, _)
                    if ["start", "end", "startI"].contains(&kind.text.as_str())
                        && args.len() == 1 =>
                {
                    let fluent = fluent_term(&args[0])?;
                    match kind.text.as_str() {
                        "start" => Happening::Start(fluent),
                        "end" => Happening::End(fluent),
                        _ => Happening::StartI(fluent),
                    }
                }
                other => Happening::Event(event_term(other)?),
            };
            Ok(Cond::Happens {
                negated,
                what,
                time: expr(time)?,
                span,
            })
        }
        Some((name, [fluent, time])) if name.text == "holdsAt" => Ok(Cond::Holds {
            negated,
            fluent: fluent_term(fluent)?,
            time: expr(time)?,
            span,
            reads: Reads::Holds,
        }),
        Some((name, _))
            if !["holdsFor", "findall", "length", "happensAt", "holdsAt"]
                .contains(&name.text.as_str())
                && closest(&name.text, ["happensAt", "holdsAt"].into_iter()).is_none() =>
        {
            // Whether it names background knowledge is known once every clause is read.
            Ok(Cond::Background {
                negated,
                atom: event_term(inner)?,
                span,
            })
        }
        _ => Err(not_a_condition(inner)),
    }
}

/// E506: `inner` is no condition of a time-point rule.
pub(crate) fn not_a_condition(inner: &Term) -> Diagnostic {
    let mut diagnostic = Diagnostic::error(
        Code::E506,
        format!("`{inner}` is not a condition of a time-point rule"),
    )
    .with_label(
        inner.span(),
        "expected happensAt(E, T), holdsAt(F=V, T), background knowledge or a comparison",
    );
    if let Some((name, _)) = inner.functor() {
        if name.text == "holdsFor" {
            diagnostic = diagnostic.with_help(
                "holdsFor conditions belong in `holdsFor(F=V, I) :- …` rules; here write `holdsAt(F=V, T)`",
            );
        } else if name.text == "findall" || name.text == "length" {
            diagnostic = diagnostic.with_note(
                "a findall is read only as `findall(V, Goal, L), length(L, N)` in a time-point rule's body: the count of what holds",
            );
        } else if let Some(close) = closest(&name.text, ["happensAt", "holdsAt"].into_iter()) {
            diagnostic = diagnostic.with_help(format!("did you mean `{close}`?"));
        }
    }
    diagnostic
}

pub(super) fn interval_cond(term: &Term) -> Read<IntervalCond> {
    if let Some((name, [_, _, _])) = term.functor() {
        if name.text == "findall" {
            // RTEC's idiom for selecting intervals by their length (`member`, `E - S`).
            return Err(Diagnostic::error(
                Code::E507,
                "a `findall` over the intervals of a list is not supported in a holdsFor rule",
            )
            .with_label(term.span(), "it reads each interval's start and end")
            .with_note("an interval's end, and so its length, is known only once it has ended; a stream says what holds at each time point as it comes, so a condition on it would depend on the future")
            .with_help("for a minimum duration, use a deadline instead: `fi(F=V, F=V2, D)` initiates F=V2 D time points after F=V unless F=V ends first"));
        }
        if name.text == "intDurLess" {
            // RTEC's maritime helper (`compare.prolog`): the intervals shorter than a
            // duration.
            return Err(Diagnostic::error(
                Code::E507,
                "`intDurLess` over a list of intervals is not supported yet",
            )
            .with_label(term.span(), "it keeps the intervals of a list shorter than a duration")
            .with_note("an interval is known to be shorter than D only once it has ended: its recognition would come after every time point it covers")
            .with_help("for intervals longer than a duration, `intDurGreater(I, D, O)` is read"));
        }
    }
    if let Some((name, [input, duration, out])) = term.functor() {
        if name.text == "intDurGreater" {
            return longer_than(input, duration, out);
        }
    }
    if let Some(builtin) = builtin(term) {
        if let Term::Binary(_, _, rhs, _) = term {
            if matches!(&**rhs, Term::List(..)) {
                return Err(optimisation_check(term));
            }
        }
        return Ok(IntervalCond::Builtin(builtin?));
    }
    let (negated, inner) = match term {
        Term::Not(inner, _) => (true, &**inner),
        Term::Compound(name, args, _) if name.text == "not" && args.len() == 1 => (true, &args[0]),
        other => (false, other),
    };
    if is_background_of_interval_rule(inner) {
        return Ok(IntervalCond::Background {
            negated,
            atom: event_term(inner)?,
            span: term.span(),
        });
    }
    if negated {
        return Err(optimisation_check(term));
    }
    let list_of_vars = |t: &Term| match t {
        Term::List(items, _) => items.iter().map(list_var).collect::<Read<Vec<Name>>>(),
        other => Err(Diagnostic::error(
            Code::E507,
            format!("expected a list of interval variables `[I1, I2]`, found `{other}`"),
        )
        .with_label(other.span(), "expected `[I1, …]`")),
    };
    match term.functor() {
        Some((name, [fluent, list])) if name.text == "holdsFor" => Ok(IntervalCond::HoldsFor {
            fluent: fluent_term(fluent)?,
            list: list_var(list)?,
        }),
        Some((name, [inputs, out])) if name.text == "union_all" => Ok(IntervalCond::Union {
            inputs: list_of_vars(inputs)?,
            out: list_var(out)?,
        }),
        Some((name, [inputs, out])) if name.text == "intersect_all" => {
            Ok(IntervalCond::Intersect {
                inputs: list_of_vars(inputs)?,
                out: list_var(out)?,
            })
        }
        Some((name, [base, subtract, out])) if name.text == "relative_complement_all" => {
            Ok(IntervalCond::RelativeComplement {
                base: list_var(base)?,
                subtract: list_of_vars(subtract)?,
                out: list_var(out)?,
            })
        }
        Some((name, [inputs, out])) if name.text == "complement_all" => {
            Ok(IntervalCond::Complement {
                inputs: list_of_vars(inputs)?,
                out: list_var(out)?,
            })
        }
        _ => {
            let mut diagnostic = Diagnostic::error(
                Code::E507,
                format!("`{term}` is not a condition of a holdsFor rule"),
            )
            .with_label(
                term.span(),
                "expected holdsFor, union_all, intersect_all, relative_complement_all, complement_all or a comparison",
            );
            if let Some((name, _)) = term.functor() {
                if let Some(close) = closest(&name.text, INTERVAL_OPERATIONS.into_iter()) {
                    diagnostic = diagnostic.with_help(format!("did you mean `{close}`?"));
                }
            }
            Err(diagnostic)
        }
    }
}

/// `intDurGreater(I, D, O)`: D a number of time points, or a variable a background fact
/// gives (replaced by its number when the rule was read).
fn longer_than(input: &Term, duration: &Term, out: &Term) -> Read<IntervalCond> {
    let duration = match duration {
        Term::Int(d, span) => u32::try_from(*d).map_err(|_| {
            Diagnostic::error(
                Code::E504,
                format!("the duration {d} is not a number of time points"),
            )
            .with_label(*span, "expected 0 or more, below 2^32")
        })?,
        other => {
            return Err(Diagnostic::error(
                Code::E504,
                format!("expected a duration, found `{other}`"),
            )
            .with_label(other.span(), "a number of time points")
            .with_help("give it as a number, or by a background fact the rule's conditions read (`thresholds(trawlingTime, 900).`)"));
        }
    };
    Ok(IntervalCond::LongerThan {
        input: list_var(input)?,
        duration,
        out: list_var(out)?,
    })
}

/// The variable that names a list of intervals.
fn list_var(t: &Term) -> Read<Name> {
    match t {
        Term::Var(name) => Ok(name.clone()),
        other => Err(Diagnostic::error(
            Code::E507,
            format!("expected the variable of a list of intervals, found `{other}`"),
        )
        .with_label(other.span(), "expected a variable")),
    }
}

/// The names a holdsFor rule's conditions take: its interval operations.
const INTERVAL_OPERATIONS: [&str; 5] = [
    "holdsFor",
    "union_all",
    "intersect_all",
    "relative_complement_all",
    "complement_all",
];

/// Whether `term` is background knowledge as a condition of a holdsFor rule: an atom
/// that names no interval operation (nor one misspelt) nor anything else RTEC reads there.
fn is_background_of_interval_rule(term: &Term) -> bool {
    let other = ["findall", "intDurGreater", "intDurLess", "member", "length"];
    term.functor().is_some_and(|(name, _)| {
        !INTERVAL_OPERATIONS.contains(&name.text.as_str())
            && !other.contains(&name.text.as_str())
            && closest(&name.text, INTERVAL_OPERATIONS.into_iter()).is_none()
    })
}

/// The lists of a holdsFor rule whose emptiness makes its result `out` empty: `out`, the
/// inputs of an `intersect_all` and the base of a `relative_complement_all` that make one
/// of them, and the one input of a `union_all` of one.
pub(super) fn needed_lists(body: &[IntervalCond], out: &Name) -> Vec<String> {
    let mut needed = vec![out.text.clone()];
    for cond in body.iter().rev() {
        let (inputs, made): (Vec<&Name>, &Name) = match cond {
            IntervalCond::Intersect { inputs, out } => (inputs.iter().collect(), out),
            IntervalCond::RelativeComplement { base, out, .. } => (vec![base], out),
            IntervalCond::Union { inputs, out } if inputs.len() == 1 => {
                (inputs.iter().collect(), out)
            }
            IntervalCond::LongerThan { input, out, .. } => (vec![input], out),
            _ => continue,
        };
        if needed.contains(&made.text) {
            needed.extend(inputs.iter().map(|n| n.text.clone()));
        }
    }
    needed
}

/// The cut anywhere but after RTEC's optimisation checks.
pub(super) fn cut_error(at: Span) -> Diagnostic {
    Diagnostic::error(Code::E501, "the cut `!` is not supported here")
        .with_label(at, "not part of ECDE")
        .with_note("a cut is read only in RTEC's optimisation checks of holdsFor rules (`\\+ I=[], !`), where it changes nothing")
}

pub(super) fn optimisation_check(term: &Term) -> Diagnostic {
    Diagnostic::error(
        Code::E507,
        format!("`{term}` is not supported in a holdsFor rule"),
    )
    .with_label(term.span(), "a test on a list of intervals")
    .with_help("RTEC's optional optimisation checks (`\\+ I=[]`) are not needed; drop them")
}
