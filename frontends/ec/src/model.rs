//! Clauses → an event description: what each clause means in ECDE.
//!
//! | clause | meaning |
//! |---|---|
//! | `initiatedAt(F=V, T) :- …` / `terminatedAt(F=V, T) :- …` | simple fluent (schema 10) |
//! | `holdsAt(F=V, T) :- …` | statically determined fluent (schema 17) |
//! | `holdsFor(F=V, I) :- holdsFor(…, I1), …, union_all([I1,I2], I)` | statically determined fluent, RTEC's interval form |
//! | `fi(F=V, F=V2, D).` / `p(F=V).` | delayed initiation after `D` time points / its postponement |
//! | `initially(F=V).` | `F=V` holds at time point 0 |
//! | `event/1`, `inputEntity/1`, `outputEntity/1`, `points/1`, `buildFromPoints/1`, `collectIntervals/1`, `simpleFluent/1`, `sDFluent/1` | RTEC declarations |
//! | `grounding(E) :- conds.`, `dynamicDomain(d(_)).` | what exists (see `translate::grounding`) |
//! | `vehicle(75, bus).`, `role_of(A, chair) :- person(A), 0 is A mod 10.` | background knowledge |
//!
//! Bodies of time-point rules hold `[not] happensAt(E, T)` (E may be `start(F=V)` or
//! `end(F=V)`), `[not] holdsAt(F=V, T)`, background predicates (`role_of(C, chair)`) and
//! comparisons or assignments (`X < Y`, `D is X*2`, `R is A mod 10`). RTEC's `grounding/1`
//! and `dynamicDomain/1` are read, with ground facts and rules of other predicates (its
//! background knowledge); its other bookkeeping declarations (`index/2`,
//! `cachingOrder/1`, …) are accepted and ignored with a warning. A compound argument of
//! an event or fluent is flattened into its name ([`FluentTerm`]). RTEC's compiled form
//! is read as the source it was compiled from ([`compiled`]).
//!
//! Pitfall: Prolog's `_Name` is an ordinary variable here (as in TD); only `_` is anonymous.

mod compiled;

pub use stgflow_io::sink::{Printed, Shape};
use stgflow_lang::diag::{Diagnostic, Diagnostics, Span};
use stgflow_lang::syntax::ast;
use stgflow_lang::value::Value;

use crate::codes::Code;
use crate::syntax::{BinOp, Clause, Name, Term};

/// An argument of an event or fluent: a variable (`_` anonymous) or a constant.
#[derive(Clone, Debug, PartialEq)]
pub enum Arg {
    Var(Name),
    Const(Value, Span),
}

impl Arg {
    pub fn span(&self) -> Span {
        match self {
            Arg::Var(name) => name.span,
            Arg::Const(_, span) => *span,
        }
    }
}

/// `f(args) = value`. A compound term among the arguments is flattened: its functor
/// joins the name (`per(close_ballot(C, M))` is `per__close_ballot` with arguments C, M)
/// and `printed` says how RTEC writes it.
#[derive(Clone, Debug, PartialEq)]
pub struct FluentTerm {
    pub name: Name,
    pub args: Vec<Arg>,
    pub value: Arg,
    pub span: Span,
    pub printed: Option<Printed>,
}

/// `e(args)`, compound arguments flattened as in [`FluentTerm`].
#[derive(Clone, Debug, PartialEq)]
pub struct EventTerm {
    pub name: Name,
    pub args: Vec<Arg>,
    pub span: Span,
    pub printed: Option<Printed>,
}

/// What `happensAt` refers to.
#[derive(Clone, Debug, PartialEq)]
pub enum Happening {
    Event(EventTerm),
    /// `start(F=V)`: the first time point of each maximal interval of `F=V`.
    Start(FluentTerm),
    /// `end(F=V)`: the first time point after each maximal interval of `F=V`.
    End(FluentTerm),
    /// RTEC's `startI(F=V)`: the first time point of each maximal interval of `F=V` in
    /// either reading (RTEC's `start` happens the point before it).
    StartI(FluentTerm),
}

/// What a [`Cond::Holds`] reads of its fluent at its time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// `holdsAt(F=V, T)`.
    Holds,
    /// `initiatedAt(F=V, T1, T, T2)` in RTEC's cyclic form: F=V is initiated at T (by
    /// any of its rules, `fi` included).
    Initiated,
    /// `terminatedAt(F=V, T1, T, T2)` in RTEC's cyclic form.
    Terminated,
}

/// A condition of a time-point rule.
#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    Happens {
        negated: bool,
        what: Happening,
        time: ast::Expr,
        span: Span,
    },
    Holds {
        negated: bool,
        fluent: FluentTerm,
        time: ast::Expr,
        span: Span,
        /// What is read of the fluent at the time: that it holds (`holdsAt`), or, in
        /// RTEC's cyclic form, that it is initiated or terminated there.
        reads: Reads,
    },
    Builtin(ast::Builtin),
    /// `[not] b(args)`: a background predicate, which holds at every time point.
    Background {
        negated: bool,
        atom: EventTerm,
        span: Span,
    },
    /// `findall(V, Goal, L), length(L, N)`: N is the number of distinct values of the
    /// template's variables for which the goal holds (a TD `#count`).
    Count {
        result: Name,
        counted: Vec<Name>,
        body: Vec<Cond>,
        span: Span,
    },
}

/// A rule about one time point: `head(F=V, T) :- conds`.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeRule {
    pub head: FluentTerm,
    pub time: ast::Expr,
    pub body: Vec<Cond>,
    pub span: Span,
}

/// A condition of a `holdsFor` rule.
#[derive(Clone, Debug, PartialEq)]
pub enum IntervalCond {
    HoldsFor {
        fluent: FluentTerm,
        list: Name,
    },
    Union {
        inputs: Vec<Name>,
        out: Name,
    },
    Intersect {
        inputs: Vec<Name>,
        out: Name,
    },
    RelativeComplement {
        base: Name,
        subtract: Vec<Name>,
        out: Name,
    },
    Complement {
        inputs: Vec<Name>,
        out: Name,
    },
    Builtin(ast::Builtin),
}

#[derive(Clone, Debug, PartialEq)]
pub struct IntervalRule {
    pub head: FluentTerm,
    pub list: Name,
    pub body: Vec<IntervalCond>,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeclKind {
    Event,
    Input,
    Output,
    Points,
    Intervals,
    /// `simpleFluent/1`: the kind follows from the rules; RTEC ends a value of the fluent
    /// where another value declared so is initiated.
    Simple,
    /// `sDFluent/1`: the kind follows from the rules.
    Kind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Entity {
    Event(EventTerm),
    Fluent(FluentTerm),
}

impl Entity {
    pub fn name(&self) -> &Name {
        match self {
            Entity::Event(e) => &e.name,
            Entity::Fluent(f) => &f.name,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Item {
    Initiated(TimeRule),
    Terminated(TimeRule),
    HoldsAt(TimeRule),
    HoldsFor(IntervalRule),
    /// `fi(F=V, F=V2, D)`, as a fact or a rule whose conditions are background knowledge
    /// (`fi(status(M)=voting, status(M)=voted, 10) :- motion(M).`): the deadline applies
    /// where they hold.
    Fi {
        from: FluentTerm,
        to: FluentTerm,
        delay: u32,
        conds: Vec<GroundCond>,
        span: Span,
    },
    Postponed(FluentTerm, Span),
    Initially(FluentTerm, Span),
    Declare(DeclKind, Entity, Span),
    /// A derived event: `happensAt(E, T) :- conds`.
    Happens(EventRule),
    /// A time-independent fact of RTEC's background knowledge (`vehicle(75, bus).`).
    Background {
        name: Name,
        args: Vec<Arg>,
        span: Span,
    },
    /// RTEC's `grounding(Entity) :- conds.`: the instances of an entity that exist,
    /// those of the background facts (and dynamic domains) that the conditions select.
    Grounding {
        entity: Entity,
        body: Vec<GroundCond>,
        span: Span,
    },
    /// RTEC's `dynamicDomain(d(_, …)).`: the domain d grows with the input entities
    /// whose grounding reads it.
    DynamicDomain(EventTerm, Span),
    /// A rule of background knowledge: `head :- conds.` over background predicates.
    BackgroundRule {
        head: EventTerm,
        body: Vec<GroundCond>,
        span: Span,
    },
}

/// A condition of a `grounding` declaration.
#[derive(Clone, Debug, PartialEq)]
pub enum GroundCond {
    /// A background or domain predicate.
    Atom(EventTerm),
    Builtin(ast::Builtin),
}

/// `happensAt(E, T) :- conds`: the event E happens at T where the conditions hold.
#[derive(Clone, Debug, PartialEq)]
pub struct EventRule {
    pub head: EventTerm,
    pub time: ast::Expr,
    pub body: Vec<Cond>,
    pub span: Span,
}

/// Reads clauses as ECDE items; every clause that does not fit is reported.
pub fn classify(clauses: &[Clause]) -> (Vec<Item>, Diagnostics) {
    let mut diagnostics = Diagnostics::default();
    let mut items = Vec::new();
    for clause in &compiled::source_form(clauses) {
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
        match item(clause, &mut diagnostics) {
            Ok(Some(item)) => items.push(item),
            Ok(None) => {}
            Err(diagnostic) => diagnostics.push(diagnostic),
        }
    }
    (items, diagnostics)
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
    let flat = args.iter().all(|a| {
        matches!(
            a,
            Term::Atom(_) | Term::Int(..) | Term::Float(..) | Term::Str(..) | Term::Var(_)
        )
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

type Read<T> = Result<T, Diagnostic>;

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

                    Term::Not(inner, _) => match &**inner {
                        Term::Binary(BinOp::Eq, lhs, rhs, _) if matches!(&**rhs, Term::List(items, _) if items.is_empty()) =>
                        {
                            let Term::Var(name) = &**lhs else {
                                return Err(optimisation_check(term));
                            };
                            checked.push((name.clone(), term.span()));
                        }
                        _ => return Err(optimisation_check(term)),
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

fn fluent_term(term: &Term) -> Read<FluentTerm> {
    let Term::Binary(BinOp::Eq, fluent, value, span) = term else {
        return Err(
            Diagnostic::error(Code::E504, format!("expected `F=V`, found `{term}`"))
                .with_label(term.span(), "a fluent with its value")
                .with_help(format!("every fluent has a value, e.g. `{term}=true`")),
        );
    };
    let (name, args, printed) = functor(fluent, "a fluent")?;
    Ok(FluentTerm {
        name,
        args,
        value: arg(value)?,
        span: *span,
        printed,
    })
}

fn event_term(term: &Term) -> Read<EventTerm> {
    let (name, args, printed) = functor(term, "an event")?;
    Ok(EventTerm {
        name,
        args,
        span: term.span(),
        printed,
    })
}

/// The name and arguments of an event or fluent, compound arguments flattened (see
/// [`FluentTerm`]); how RTEC prints it where one was.
fn functor(term: &Term, what: &str) -> Read<(Name, Vec<Arg>, Option<Printed>)> {
    let Some((name, args)) = term.functor() else {
        return Err(
            Diagnostic::error(Code::E504, format!("expected {what}, found `{term}`"))
                .with_label(term.span(), format!("not {what}"))
                .with_help("events and fluents are names with arguments: `walking(Id)`"),
        );
    };
    let mut flat = name.clone();
    let mut out = Vec::new();
    let mut shapes = Vec::new();
    let compound = flatten(args, &mut flat.text, &mut out, &mut shapes)?;
    let printed = compound.then(|| Printed {
        name: name.text.clone(),
        args: shapes,
    });
    Ok((flat, out, printed))
}

/// Appends `args` to `out`, a compound term's functor to `name` and its arguments in
/// its place (recursively), and each argument's shape to `shapes`; whether one was
/// compound.
fn flatten(
    args: &[Term],
    name: &mut String,
    out: &mut Vec<Arg>,
    shapes: &mut Vec<Shape>,
) -> Read<bool> {
    let mut compound = false;
    for term in args {
        match term {
            Term::Compound(inner, inner_args, _) => {
                compound = true;
                name.push_str("__");
                name.push_str(&inner.text);
                let mut nested = Vec::new();
                flatten(inner_args, name, out, &mut nested)?;
                shapes.push(Shape::Term(inner.text.clone(), nested));
            }
            other => {
                out.push(arg(other)?);
                shapes.push(Shape::Arg);
            }
        }
    }
    Ok(compound)
}

fn arg(term: &Term) -> Read<Arg> {
    Ok(match term {
        Term::Var(name) => Arg::Var(name.clone()),
        Term::Atom(name) => Arg::Const(Value::sym(&name.text), name.span),
        Term::Int(i, span) => Arg::Const(Value::Int(*i), *span),
        Term::Float(x, span) => Arg::Const(Value::Float(*x), *span),
        Term::Str(text, span) => Arg::Const(Value::sym(text), *span),
        Term::Binary(BinOp::Eq, ..) => {
            return Err(
                Diagnostic::error(Code::E505, format!("`{term}` cannot be an argument"))
                    .with_label(term.span(), "a fluent-value pair is an argument of `start` and `end` only")
                    .with_help("write `happensAt(start(F=V), T)` or `end(F=V)`; RTEC's `startI`/`endI` are not supported"),
            );
        }
        other => {
            return Err(
                Diagnostic::error(Code::E505, format!("`{other}` cannot be an argument"))
                    .with_label(other.span(), "lists and arithmetic are not arguments")
                    .with_help("compute the value in an assignment `V is …` and pass V"),
            );
        }
    })
}

/// A value expression of a built-in (or a time term).
fn expr(term: &Term) -> Read<ast::Expr> {
    Ok(match term {
        Term::Var(name) => ast::Expr::Var(ident(name)),
        Term::Atom(name) => ast::Expr::Const(Value::sym(&name.text), name.span),
        Term::Int(i, span) => ast::Expr::Const(Value::Int(*i), *span),
        Term::Float(x, span) => ast::Expr::Const(Value::Float(*x), *span),
        Term::Str(text, span) => ast::Expr::Const(Value::sym(text), *span),
        Term::Binary(
            op @ (BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod),
            lhs,
            rhs,
            span,
        ) => {
            let op = match op {
                BinOp::Add => ast::ArithOp::Add,
                BinOp::Sub => ast::ArithOp::Sub,
                BinOp::Mul => ast::ArithOp::Mul,
                BinOp::Mod => ast::ArithOp::Mod,
                _ => ast::ArithOp::Div,
            };
            ast::Expr::Binary(op, Box::new(expr(lhs)?), Box::new(expr(rhs)?), *span)
        }
        other => {
            return Err(
                Diagnostic::error(Code::E505, format!("`{other}` is not a value")).with_label(
                    other.span(),
                    "expected a variable, a constant or arithmetic",
                ),
            );
        }
    })
}

pub fn ident(name: &Name) -> ast::Ident {
    ast::Ident {
        name: name.text.clone(),
        span: name.span,
    }
}

fn builtin(term: &Term) -> Option<Read<ast::Builtin>> {
    // `\+ X=Y` (`not(X=Y)`) is `X != Y`, and so on: a comparison's negation is the
    // comparison of the other sense.
    let (negated, term) = match term {
        Term::Not(inner, _) => (true, &**inner),
        Term::Compound(name, args, _) if name.text == "not" && args.len() == 1 => (true, &args[0]),
        other => (false, other),
    };
    let Term::Binary(op, lhs, rhs, span) = term else {
        return None;
    };
    let op = match (op, negated) {
        (BinOp::Eq | BinOp::Is, false) | (BinOp::Ne, true) => ast::CmpOp::Eq,
        (BinOp::Ne, false) | (BinOp::Eq | BinOp::Is, true) => ast::CmpOp::Ne,
        (BinOp::Lt, false) | (BinOp::Ge, true) => ast::CmpOp::Lt,
        (BinOp::Le, false) | (BinOp::Gt, true) => ast::CmpOp::Le,
        (BinOp::Gt, false) | (BinOp::Le, true) => ast::CmpOp::Gt,
        (BinOp::Ge, false) | (BinOp::Lt, true) => ast::CmpOp::Ge,
        _ => return None,
    };
    Some((|| {
        Ok(ast::Builtin {
            lhs: expr(lhs)?,
            op,
            rhs: expr(rhs)?,
            span: *span,
        })
    })())
}

/// The conditions of a rule in RTEC's cyclic form (`initiatedAt(F=V, T1, T, T2)`):
/// `initiatedAt(G=W, T1, T, T2)` and `terminatedAt(G=W, T1, T, T2)`, with the head's
/// T1, T and T2, read G=W's initiations and terminations at T; the others are
/// conditions at T as in `initiatedAt/2`, and read neither T1 nor T2 (the window's
/// bounds, which a stream has no use for).
fn cyclic_conds(terms: &[Term], from: &Term, time: &Term, to: &Term) -> Read<Vec<Cond>> {
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
fn bounds_reach_back(term: &Term, from: &str, to: &str) -> bool {
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
fn conds(terms: &[Term]) -> Read<Vec<Cond>> {
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

fn cond(term: &Term) -> Read<Cond> {
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

fn interval_cond(term: &Term) -> Read<IntervalCond> {
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
    }
    if let Some(builtin) = builtin(term) {
        if let Term::Binary(_, _, rhs, _) = term {
            if matches!(&**rhs, Term::List(..)) {
                return Err(optimisation_check(term));
            }
        }
        return Ok(IntervalCond::Builtin(builtin?));
    }
    if let Term::Not(..) = term {
        return Err(optimisation_check(term));
    }
    let list_var = |t: &Term| match t {
        Term::Var(name) => Ok(name.clone()),
        other => Err(Diagnostic::error(
            Code::E507,
            format!("expected the variable of a list of intervals, found `{other}`"),
        )
        .with_label(other.span(), "expected a variable")),
    };
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
                let known = [
                    "holdsFor",
                    "union_all",
                    "intersect_all",
                    "relative_complement_all",
                    "complement_all",
                ];
                if let Some(close) = closest(&name.text, known.into_iter()) {
                    diagnostic = diagnostic.with_help(format!("did you mean `{close}`?"));
                }
            }
            Err(diagnostic)
        }
    }
}

/// The lists of a holdsFor rule whose emptiness makes its result `out` empty: `out`, the
/// inputs of an `intersect_all` and the base of a `relative_complement_all` that make one
/// of them, and the one input of a `union_all` of one.
fn needed_lists(body: &[IntervalCond], out: &Name) -> Vec<String> {
    let mut needed = vec![out.text.clone()];
    for cond in body.iter().rev() {
        let (inputs, made): (Vec<&Name>, &Name) = match cond {
            IntervalCond::Intersect { inputs, out } => (inputs.iter().collect(), out),
            IntervalCond::RelativeComplement { base, out, .. } => (vec![base], out),
            IntervalCond::Union { inputs, out } if inputs.len() == 1 => {
                (inputs.iter().collect(), out)
            }
            _ => continue,
        };
        if needed.contains(&made.text) {
            needed.extend(inputs.iter().map(|n| n.text.clone()));
        }
    }
    needed
}

/// The cut anywhere but after RTEC's optimisation checks.
fn cut_error(at: Span) -> Diagnostic {
    Diagnostic::error(Code::E501, "the cut `!` is not supported here")
        .with_label(at, "not part of ECDE")
        .with_note("a cut is read only in RTEC's optimisation checks of holdsFor rules (`\\+ I=[], !`), where it changes nothing")
}

fn optimisation_check(term: &Term) -> Diagnostic {
    Diagnostic::error(
        Code::E507,
        format!("`{term}` is not supported in a holdsFor rule"),
    )
    .with_label(term.span(), "a test on a list of intervals")
    .with_help("RTEC's optional optimisation checks (`\\+ I=[]`) are not needed; drop them")
}

/// The candidate nearest to `name` by edit distance (the engine's, so that every
/// language suggests names alike).
pub use stgflow_lang::diag::closest;
