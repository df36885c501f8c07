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
//! The items and their parts are defined here; the reading is in modules: `read` (each
//! clause by its head), `conditions` (the bodies of rules) and `terms` (events, fluents,
//! arguments, values).
//!
//! Pitfall: Prolog's `_Name` is an ordinary variable here (as in TD); only `_` is anonymous.

mod compiled;
mod conditions;
mod open;
mod read;
mod terms;

pub use crate::recognitions::{Printed, Shape};
pub(crate) use open::close_open_background;
pub use read::classify;
use stgflow_lang::diag::Span;
use stgflow_lang::syntax::ast;
use stgflow_lang::value::Value;
pub(crate) use terms::expr_vars;
pub use terms::ident;

use crate::syntax::Name;

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
    /// `intDurGreater(I, D, O)`, RTEC's maritime helper: the intervals of I longer than D
    /// time points (an interval still open at the end: longer by then).
    LongerThan {
        input: Name,
        duration: u32,
        out: Name,
    },
    Builtin(ast::Builtin),
    /// Background knowledge (`oneIsTug(V1, V2)`, `\+ oneIsTug(V1, V2)`): which
    /// instances of the rule hold, at every time point alike.
    Background {
        negated: bool,
        atom: EventTerm,
        span: Span,
    },
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

/// The candidate nearest to `name` by edit distance (the engine's, so that every
/// language suggests names alike).
pub use stgflow_lang::diag::closest;
