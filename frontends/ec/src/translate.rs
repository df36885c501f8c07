//! Algorithm 3 (EC2TD): an event description → a TD program, as a TD AST whose spans
//! point at the user's EC text, plus an [`Origin`] per generated rule.
//!
//! Predicates (the paper's f^h, f^i, f^t):
//!
//! | ECDE | TD |
//! |---|---|
//! | `happensAt(e(X), T)` | `e(X, T)` |
//! | `holdsAt(f(X)=v, T)` | `f(X, v, T)` (the value is the last object argument) |
//! | `initiatedAt(f(X)=v, T)` / `terminatedAt(f(X)=v, T)` | `f_i(X, v, T)` / `f_t(X, v, T)` |
//! | `happensAt(start(f(X)=v), T)` / `end(…)` | `f_start(X, v, T)` / `f_end(X, v, T)` |
//! | `initially(f(a)=v).` | the fact `f_initially(a, v, 0).` and `f(X, V, T) :- f_initially(X, V, T).` |
//!
//! Per simple fluent f and value v (the values are the constants written as values of f
//! anywhere in the description — Algorithm 3's grounding):
//! rule 14 `f(X, v, T) :- f_i(X, v, T-1).`, rule 15 `f(X, v, T) :- f(X, v, T-1), not
//! f_t(X, v, T-1).`, and per other value v' rule 16 `f_t(X, v, T) :- f_i(X, v', T).`
//! When some initiation of f has a *variable* value, the values cannot be listed; then
//! the three rules are written once with a value variable and rule 16 becomes
//! `f_t(X, V, T) :- f_i(X, V2, T), f(X, V, T), V != V2.` (a value that does not hold
//! needs no termination: inertia only reads f_t where f holds).
//!
//! `fi(f(X)=v, f(X)=v2, d)` becomes `f_i(X, v2, T) :- f_i(X, v, T-d), not f_t(X, v,
//! T-d+1), …, not f_t(X, v, T-1)` (lines 13–17), with `not f_i(X, v, T-k)` for every
//! 0 < k < d when `p(f(X)=v)` is declared (an intermediate initiation postpones).
//!
//! `holdsFor` rules are read as Boolean formulas over fluent-value pairs (`union_all` is
//! ∨, `intersect_all` ∧, `relative_complement_all(I, L, J)` is I ∧ ¬(∨L),
//! `complement_all(L, J)` ¬(∨L)); the formula is put in disjunctive normal form and each
//! disjunct becomes one `holdsAt` rule (schema 17) — the equivalence the paper cites.
//!
//! RTEC's grounding, background knowledge, fluents split by value and the timing of
//! `start`/`end` ([`Timing`]) are in [`grounding`].
//!
//! Pitfalls:
//! * Without grounding declarations, a variable of an `initiatedAt`/`terminatedAt` head
//!   that no condition binds (RTEC's `initiatedAt(meeting(P1,_P2)=false, T) :-
//!   happensAt(start(running(P1)=true), T).`) is bound by the instances of the fluent
//!   that hold another value at T (for `terminatedAt`, the value itself): the rule then
//!   terminates what holds exactly as in RTEC, but the initiated value does not start for
//!   instances that held nothing (W504). With a grounding declaration of the pair, the
//!   grounded instances bind it, as in RTEC.
//! * `complement_all` alone has no positive condition; without a grounding of its pair
//!   its rule is unsafe (E002): TD cannot enumerate "every instance that does not hold".

mod grounding;
pub use grounding::DomainRule;

use crate::records::RtecShape;
use hashbrown::{HashMap, HashSet};
use stgflow_lang::diag::{Diagnostic, Diagnostics, FileId, Span};
use stgflow_lang::ir::Origin;
use stgflow_lang::syntax::ast;
use stgflow_lang::value::Value;

use crate::codes::Code;
use crate::model::{
    Arg, Cond, DeclKind, Entity, EventTerm, FluentTerm, GroundCond, Happening, IntervalCond,
    IntervalRule, Item, Reads, TimeRule, ident,
};
use crate::syntax::Name;

/// The translated program.
#[derive(Debug)]
pub struct Translation {
    pub program: ast::Program,
    /// One per `ast::Item::Rule` of `program`, in order.
    pub origins: Vec<Origin>,
    /// How RTEC records of the input entities are laid out.
    pub shapes: Vec<(String, RtecShape)>,
    /// The fluent-value pairs that RTEC's grounding declarations make it compute (and
    /// print), by fluent (`None`: every value); a fluent not listed has no grounding.
    pub grounded: Vec<(String, Option<Value>)>,
    /// How RTEC writes the fluents with compound arguments, by TD predicate.
    pub printed: Vec<(String, crate::model::Printed)>,
    /// The rules by which the dynamic domains grow with the input, one per input entity
    /// a grounding declaration reads a domain for.
    pub domains: Vec<DomainRule>,
    pub diagnostics: Diagnostics,
}

impl Default for Translation {
    fn default() -> Translation {
        Translation {
            program: ast::Program { items: Vec::new() },
            origins: Vec::new(),
            shapes: Vec::new(),
            grounded: Vec::new(),
            printed: Vec::new(),
            domains: Vec::new(),
            diagnostics: Diagnostics::default(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Simple,
    Static,
}

#[derive(Debug)]
struct FluentInfo {
    arity: usize,
    first: Span,
    defined: Option<(Kind, Span)>,
    values: Vec<Value>,
    declared_input: bool,
    shape: Option<RtecShape>,
    output: bool,
    uses_start: bool,
    uses_end: bool,
    initially: bool,
    /// The values defined by initiations, terminations, `fi`, `p` and `initially`.
    simple: Part,
    /// The values defined by `holdsAt` and `holdsFor` rules.
    statics: Part,
    /// The constant values of RTEC `grounding` declarations of the fluent.
    grounded: Vec<Value>,
    /// Whether a `grounding` declaration names the fluent with a variable value
    /// (`grounding(location(P)=Place) :- place(Place).`): RTEC prints every value.
    grounded_any: bool,
    /// Whether a `simpleFluent` declaration names one of the fluent's values as a
    /// constant (`simpleFluent(location(_)=home).`): RTEC's breaking points of a value
    /// are the initiations of the other values declared so.
    declared_values: bool,
}

/// The values of a fluent that rules of one kind define.
#[derive(Debug, Default)]
struct Part {
    /// The first definition's span.
    first: Option<Span>,
    values: Vec<Value>,
    /// Whether one definition has a variable value.
    variable: bool,
    /// The fluent's name in the first definition.
    name_at: Option<Span>,
}

impl FluentInfo {
    /// Whether the fluent has simple values and statically determined ones: its TD
    /// predicate is then the union of one per part (`grounding::split`).
    fn mixed(&self) -> bool {
        self.simple.first.is_some() && self.statics.first.is_some()
    }
}

/// The TD predicate of a split fluent's simple values.
fn simple_part(name: &str) -> String {
    format!("{name}__simple")
}

/// The TD predicate of the instances of a fluent-value pair that RTEC's `grounding`
/// declarations make exist.
fn grounded_pred(name: &str) -> String {
    format!("{name}__grounded")
}

/// Disjuncts beyond this are reported rather than generated.
const MAX_DISJUNCTS: usize = 1024;

/// When `start(F=V)` and `end(F=V)` happen, and so when a rule they trigger takes effect.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Timing {
    /// The paper's reading: `start` at the first time point where F=V holds, `end` at
    /// the first where it no longer does; what they initiate holds from the point after.
    #[default]
    Paper,
    /// RTEC's: `start` at the last time point before F=V holds, `end` at the last where
    /// it holds, so what they initiate or terminate takes effect at the time point the
    /// paper's `start`/`end` happen at. A rule they trigger is evaluated one point late,
    /// its other conditions read one point back, its effect immediate (`f_ie`/`f_te`):
    /// the same intervals as RTEC's, without looking ahead. And, as in RTEC, a value
    /// initiated where it is also terminated does not start (two values initiated at
    /// once end each other).
    Rtec,
}

pub fn translate(items: &[Item], file: FileId, options: crate::Options) -> Translation {
    let mut names = Names::default();
    for item in items {
        names.register(item);
    }
    names.check_kinds();
    names.check_generated();
    names.check_patterns(items);
    let mut out = Translation {
        diagnostics: std::mem::take(&mut names.diagnostics),
        ..Translation::default()
    };
    // With errors in the kinds of fluents or in `fi`, the rules are still translated, so
    // that their own errors come in the same run; with a name used at two arities or as
    // two things (E508, E509) they are not: every TD rule that mentions it would report
    // the same again.
    if names.clashed {
        return out;
    }
    let mut generator = Generator {
        names: &names,
        out: &mut out,
        file,
        grounded_read: Vec::new(),
        timing: options.timing,
        start: options.start,
        early: Vec::new(),
        late: match options.timing {
            Timing::Rtec => late_events(items),
            Timing::Paper => Vec::new(),
        },
        reinitiated: Vec::new(),
        never_computed: Vec::new(),
    };
    if generator.timing == Timing::Rtec {
        // Which fluents have immediate effects, known before any rule is written: a
        // deadline (`fi`) written before the rules reads them.
        for item in items {
            if let Item::Initiated(rule) | Item::Terminated(rule) = item {
                if rtec_early(rule, &generator.late).is_some() {
                    let entry = (
                        rule.head.name.text.clone(),
                        matches!(item, Item::Initiated(_)),
                    );
                    if !generator.early.contains(&entry) {
                        generator.early.push(entry);
                    }
                }
            }
        }
    }
    for item in items {
        generator.item(item, items);
    }
    generator.rule_initiations();
    generator.cyclic_initiations(items);
    generator.per_fluent();
    generator.background(items);
    generator.split();
    if !generator.out.diagnostics.has_errors() {
        generator.outputs(items);
    }
    out.shapes = names.shapes();
    out.printed = std::mem::take(&mut names.printed);
    for name in &names.fluent_order {
        if let Some(info) = names.fluents.get(name) {
            if info.defined.is_some() {
                if info.grounded_any {
                    out.grounded.push((name.clone(), None));
                } else {
                    (out.grounded).extend(info.grounded.iter().map(|v| (name.clone(), Some(*v))));
                }
            }
        }
    }
    out
}

/// Every event and fluent name with what the description says about it.
#[derive(Debug, Default)]
struct Names {
    fluent_order: Vec<String>,
    fluents: HashMap<String, FluentInfo>,
    events: HashMap<String, (usize, Span)>,
    /// RTEC's grounding declarations, and its dynamic domains (name, arity).
    groundings: Vec<(Entity, Vec<GroundCond>)>,
    dynamic: Vec<(String, usize)>,
    /// How RTEC writes the fluents and events with compound arguments, by TD name.
    printed: Vec<(String, crate::model::Printed)>,
    /// The background predicates given by facts or rules (name, arity).
    background: Vec<(String, usize)>,
    /// Background facts with variables (`price(_, 10).`), which hold for every value of
    /// them: a condition on one is its comparisons, inlined (name, arguments).
    patterns: Vec<(String, Vec<Arg>, Span)>,
    /// Whether a name is used at two arities or as two things (E508, E509).
    clashed: bool,
    diagnostics: Diagnostics,
}

impl Names {
    fn register(&mut self, item: &Item) {
        match item {
            Item::Initiated(rule) | Item::Terminated(rule) => {
                self.define(&rule.head, Kind::Simple, rule.span);
                self.conds(&rule.body);
            }
            Item::HoldsAt(rule) => {
                self.define(&rule.head, Kind::Static, rule.span);
                self.conds(&rule.body);
            }
            Item::HoldsFor(rule) => {
                self.define(&rule.head, Kind::Static, rule.span);
                for cond in &rule.body {
                    if let IntervalCond::HoldsFor { fluent, .. } = cond {
                        self.fluent(fluent);
                    }
                }
            }
            Item::Fi { from, to, span, .. } => {
                self.define(from, Kind::Simple, *span);
                self.define(to, Kind::Simple, *span);
                if from.name.text != to.name.text {
                    self.diagnostics.push(
                        Diagnostic::error(
                            Code::E512,
                            format!(
                                "`fi` relates two fluents, `{}` and `{}`",
                                from.name.text, to.name.text
                            ),
                        )
                        .with_label(to.name.span, "a different fluent")
                        .with_label(from.name.span, "the fluent initiated first")
                        .with_note("a delayed effect changes the value of the same fluent: `fi(F=V, F=V2, D)`"),
                    );
                }
            }
            Item::Postponed(fluent, span) => self.define(fluent, Kind::Simple, *span),
            Item::Initially(fluent, span) => {
                self.define(fluent, Kind::Simple, *span);
                if let Some(info) = self.fluents.get_mut(&fluent.name.text) {
                    info.initially = true;
                }
            }
            Item::Declare(kind, entity, span) => self.declare(*kind, entity, *span),
            Item::Happens(rule) => {
                self.event(&rule.head);
                self.conds(&rule.body);
            }
            Item::DynamicDomain(domain, _) => {
                self.dynamic
                    .push((domain.name.text.clone(), domain.args.len()));
            }
            Item::Grounding { entity, body, .. } => {
                self.groundings.push((entity.clone(), body.clone()));
                self.ground(entity);
            }
            Item::Background { name, args, span } => {
                self.note_background(&name.text, args.len());
                if args.iter().any(|a| matches!(a, Arg::Var(_))) {
                    self.patterns.push((name.text.clone(), args.clone(), *span));
                }
            }
            Item::BackgroundRule { head, .. } => {
                self.note_background(&head.name.text, head.args.len())
            }
        }
    }

    /// A condition on a background pattern (`price(GD, Price)` with the fact
    /// `price(_, 10).`) as the comparisons the pattern makes (`Price = 10`); its
    /// negation where it makes at most one. `None` where the predicate has no pattern.
    /// A predicate with a pattern and other facts or rules is a disjunction, which a
    /// list of comparisons is not: E506 (see [`Names::check_patterns`]).
    fn pattern(&self, atom: &EventTerm, negated: bool, span: Span) -> Option<Vec<ast::Literal>> {
        let (_, pattern, _) = self
            .patterns
            .iter()
            .find(|(n, a, _)| *n == atom.name.text && a.len() == atom.args.len())?;
        let mut equal: Vec<(ast::Expr, ast::Expr)> = Vec::new();
        let mut seen: Vec<(&str, &Arg)> = Vec::new();
        for (given, arg) in pattern.iter().zip(&atom.args) {
            match given {
                Arg::Const(..) => equal.push((arg_expr(arg), arg_expr(given))),
                Arg::Var(name) if name.text == "_" => {}
                Arg::Var(name) => match seen.iter().find(|(n, _)| *n == name.text) {
                    Some((_, first)) => equal.push((arg_expr(arg), arg_expr(first))),
                    None => seen.push((&name.text, arg)),
                },
            }
        }
        let comparison = |(lhs, rhs): (ast::Expr, ast::Expr), op| {
            ast::Literal::Builtin(ast::Builtin { lhs, op, rhs, span })
        };
        let one = || ast::Expr::Const(Value::Int(1), span);
        Some(match (negated, equal.len()) {
            (false, _) => equal
                .into_iter()
                .map(|pair| comparison(pair, ast::CmpOp::Eq))
                .collect(),
            // `not p(…)` of a pattern that holds for every value never holds.
            (true, 0) => vec![comparison(
                (one(), ast::Expr::Const(Value::Int(0), span)),
                ast::CmpOp::Eq,
            )],
            (true, 1) => equal
                .into_iter()
                .map(|pair| comparison(pair, ast::CmpOp::Ne))
                .collect(),
            (true, _) => return None,
        })
    }

    /// E506 where a background pattern cannot be inlined: its predicate has other facts
    /// or rules too (a disjunction), or a negated condition reads it that makes more than
    /// one comparison (the negation is a disjunction).
    fn check_patterns(&mut self, items: &[Item]) {
        for (name, args, span) in &self.patterns {
            let other = items.iter().find_map(|item| match item {
                Item::Background {
                    name: n,
                    args: a,
                    span: at,
                } if n.text == *name && a.len() == args.len() && at != span => Some(*at),
                Item::BackgroundRule { head, span: at, .. }
                    if head.name.text == *name && head.args.len() == args.len() =>
                {
                    Some(*at)
                }
                _ => None,
            });
            if let Some(at) = other {
                self.diagnostics.push(
                    Diagnostic::error(
                        Code::E506,
                        format!("`{name}/{}` is given by a fact with variables and by other clauses", args.len()),
                    )
                    .with_label(*span, "a fact with variables: it holds for every value of them")
                    .with_label(at, "another clause of the same predicate")
                    .with_note("a condition on a fact with variables is read as the comparisons it makes; with other clauses it would be a disjunction, which is not supported"),
                );
            }
        }
        let mut negated = Vec::new();
        for item in items {
            let body = match item {
                Item::Initiated(rule) | Item::Terminated(rule) | Item::HoldsAt(rule) => &rule.body,
                Item::Happens(rule) => &rule.body,
                _ => continue,
            };
            collect_negated_background(body, &mut negated);
        }
        for (atom, span) in negated {
            if self.pattern(&atom, true, span).is_none()
                && self
                    .patterns
                    .iter()
                    .any(|(n, a, _)| *n == atom.name.text && a.len() == atom.args.len())
            {
                self.diagnostics.push(
                    Diagnostic::error(
                        Code::E506,
                        format!("`\\+ {}(…)` negates a fact with variables that makes several comparisons", atom.name.text),
                    )
                    .with_label(span, "its negation is a disjunction of comparisons")
                    .with_help("write the comparison it should fail, e.g. `Price \\= 10`"),
                );
            }
        }
    }

    fn note_background(&mut self, name: &str, arity: usize) {
        if !self.is_background(name, arity) {
            self.background.push((name.to_owned(), arity));
        }
    }

    /// Registers what a grounding declaration names.
    fn ground(&mut self, entity: &Entity) {
        match entity {
            Entity::Event(event) => self.event(event),
            Entity::Fluent(fluent) => {
                if self.fluent(fluent) {
                    if let Some(info) = self.fluents.get_mut(&fluent.name.text) {
                        match &fluent.value {
                            Arg::Const(value, _) if !info.grounded.contains(value) => {
                                info.grounded.push(*value)
                            }
                            Arg::Const(..) => {}
                            Arg::Var(_) => info.grounded_any = true,
                        }
                    }
                }
            }
        }
    }

    fn conds(&mut self, conds: &[Cond]) {
        for cond in conds {
            match cond {
                Cond::Count { body, .. } => self.conds(body),
                Cond::Happens { what, .. } => match what {
                    Happening::Event(event) => self.event(event),
                    Happening::Start(fluent)
                    | Happening::End(fluent)
                    | Happening::StartI(fluent) => {
                        self.fluent(fluent);
                        if let Some(info) = self.fluents.get_mut(&fluent.name.text) {
                            if matches!(what, Happening::Start(_) | Happening::StartI(_)) {
                                info.uses_start = true;
                            } else {
                                info.uses_end = true;
                            }
                        }
                    }
                },
                Cond::Holds { fluent, .. } => {
                    self.fluent(fluent);
                }
                Cond::Builtin(_) | Cond::Background { .. } => {}
            }
        }
    }

    /// Whether `name/arity` is background knowledge: facts, rules or a dynamic domain.
    fn is_background(&self, name: &str, arity: usize) -> bool {
        self.background
            .iter()
            .any(|(n, a)| n == name && *a == arity)
            || self.dynamic.iter().any(|(n, a)| n == name && *a == arity)
    }

    fn arity_error(&mut self, name: &Name, arity: usize, first: (usize, Span), what: &str) {
        self.clashed = true;
        self.diagnostics.push(
            Diagnostic::error(
                Code::E508,
                format!(
                    "{what} `{}` has {arity} argument{} here but {} before",
                    name.text,
                    plural(arity),
                    first.0
                ),
            )
            .with_label(name.span, format!("{arity} argument{}", plural(arity)))
            .with_label(first.1, format!("first used with {}", first.0)),
        );
    }

    fn event(&mut self, event: &EventTerm) {
        self.note_printed(&event.name.text, event.printed.as_ref());
        let arity = event.args.len();
        if let Some(info) = self.fluents.get(&event.name.text) {
            let first = info.first;
            self.clash(&event.name, first);
            return;
        }
        match self.events.get(&event.name.text) {
            Some(&(known, first)) if known != arity => {
                self.arity_error(&event.name, arity, (known, first), "event");
            }
            Some(_) => {}
            None => {
                self.events
                    .insert(event.name.text.clone(), (arity, event.name.span));
            }
        }
    }

    fn clash(&mut self, name: &Name, first: Span) {
        self.clashed = true;
        self.diagnostics.push(
            Diagnostic::error(
                Code::E509,
                format!("`{}` is used both as an event and as a fluent", name.text),
            )
            .with_label(name.span, "here")
            .with_label(first, "first used here as the other kind")
            .with_help("events and fluents need different names"),
        );
    }

    /// Records how RTEC writes `name` (a TD name) where it had compound arguments.
    fn note_printed(&mut self, name: &str, printed: Option<&crate::model::Printed>) {
        if let Some(printed) = printed {
            if !self.printed.iter().any(|(n, _)| n == name) {
                self.printed.push((name.to_owned(), printed.clone()));
            }
        }
    }

    /// Registers a mention of a fluent; returns whether it is consistent.
    fn fluent(&mut self, fluent: &FluentTerm) -> bool {
        self.note_printed(&fluent.name.text, fluent.printed.as_ref());
        let name = &fluent.name.text;
        if let Some(&(_, first)) = self.events.get(name) {
            self.clash(&fluent.name, first);
            return false;
        }
        let arity = fluent.args.len();
        let info = match self.fluents.get_mut(name) {
            Some(info) => info,
            None => {
                self.fluent_order.push(name.clone());
                self.fluents.entry(name.clone()).or_insert(FluentInfo {
                    arity,
                    first: fluent.name.span,
                    defined: None,
                    values: Vec::new(),
                    declared_input: false,
                    shape: None,
                    output: false,
                    uses_start: false,
                    uses_end: false,
                    initially: false,
                    simple: Part::default(),
                    statics: Part::default(),
                    grounded: Vec::new(),
                    grounded_any: false,
                    declared_values: false,
                })
            }
        };
        if info.arity != arity {
            let first = (info.arity, info.first);
            self.arity_error(&fluent.name, arity, first, "fluent");
            return false;
        }
        if let Arg::Const(value, _) = &fluent.value {
            if !info.values.contains(value) {
                info.values.push(*value);
            }
        }
        true
    }

    /// A definition of `head`'s value by a rule of `kind`. A fluent may have simple values
    /// and statically determined ones (RTEC defines each fluent-value pair on its own:
    /// CTM's `punctuality=punctual` by initiations, `=non_punctual` as its complement),
    /// but not one value of both kinds ([`Names::check_kinds`]).
    fn define(&mut self, head: &FluentTerm, kind: Kind, span: Span) {
        if !self.fluent(head) {
            return;
        }
        let Some(info) = self.fluents.get_mut(&head.name.text) else {
            return;
        };
        let value = match &head.value {
            Arg::Const(value, _) => Some(*value),
            Arg::Var(_) => None,
        };
        let part = match kind {
            Kind::Simple => &mut info.simple,
            Kind::Static => &mut info.statics,
        };
        part.first.get_or_insert(span);
        match value {
            Some(value) if !part.values.contains(&value) => part.values.push(value),
            Some(_) => {}
            None => part.variable = true,
        }
        if info.defined.is_none() {
            info.defined = Some((kind, span));
        }
        part.name_at.get_or_insert(head.name.span);
    }

    /// E510 for a fluent with a value defined by both kinds of rule, or a variable value
    /// that may be one the other kind defines: a statically determined one, or a simple
    /// one where no grounding declaration says which values exist.
    fn check_kinds(&mut self) {
        for name in &self.fluent_order {
            let Some(info) = self.fluents.get(name) else {
                continue;
            };
            let (Some(simple), Some(statics)) = (info.simple.first, info.statics.first) else {
                continue;
            };
            let clash = info.statics.variable
                || (info.simple.variable && info.grounded.is_empty())
                || info
                    .simple
                    .values
                    .iter()
                    .any(|v| info.statics.values.contains(v));
            if !clash {
                continue;
            }
            let describe = |k: Kind| match k {
                Kind::Simple => "a simple fluent (initiatedAt/terminatedAt/fi/initially)",
                Kind::Static => "a statically determined fluent (holdsAt/holdsFor)",
            };
            // The first definition of the kind that came second, against the first one.
            let simple_first = info.defined.is_some_and(|d| d.0 == Kind::Simple);
            let (later, at, first, known) = if simple_first {
                (Kind::Static, info.statics.name_at, simple, Kind::Simple)
            } else {
                (Kind::Simple, info.simple.name_at, statics, Kind::Static)
            };
            let at = at.unwrap_or(info.first);
            self.diagnostics.push(
                Diagnostic::error(
                    Code::E510,
                    format!("`{name}` is defined as two kinds of fluent"),
                )
                .with_label(at, format!("here as {}", describe(later)))
                .with_label(first, format!("here as {}", describe(known)))
                .with_help(
                    "give the two definitions different names, or define each value by one kind",
                ),
            );
        }
    }

    fn declare(&mut self, kind: DeclKind, entity: &Entity, span: Span) {
        match entity {
            Entity::Event(event) => {
                self.event(event);
                if kind == DeclKind::Output {
                    self.diagnostics.push(
                        Diagnostic::warning(
                            Code::W506,
                            format!(
                                "output event `{}` is not supported and is ignored",
                                event.name.text
                            ),
                        )
                        .with_label(span, "only fluents are output")
                        .with_help("define a fluent and declare it with `outputEntity(F=V)`"),
                    );
                }
            }
            Entity::Fluent(fluent) => {
                if !self.fluent(fluent) {
                    return;
                }
                let Some(info) = self.fluents.get_mut(&fluent.name.text) else {
                    return;
                };
                match kind {
                    DeclKind::Input => info.declared_input = true,
                    DeclKind::Output => info.output = true,
                    DeclKind::Points => info.shape = Some(RtecShape::Point),
                    DeclKind::Intervals => info.shape = Some(RtecShape::Interval),
                    DeclKind::Simple => {
                        info.declared_values |= matches!(fluent.value, Arg::Const(..));
                    }
                    DeclKind::Event | DeclKind::Kind => {}
                }
            }
        }
    }

    /// Reports names that the translation's own predicates would take, and input
    /// declarations of defined fluents.
    fn check_generated(&mut self) {
        let mut generated: Vec<(String, &'static str, String)> = Vec::new();
        for name in &self.fluent_order {
            let Some(info) = self.fluents.get(name) else {
                continue;
            };
            let simple = info.simple.first.is_some();
            for (suffix, needed) in [
                ("_i", simple),
                ("_t", simple),
                ("_start", info.uses_start),
                ("_end", info.uses_end),
                ("_initially", info.initially),
            ] {
                if needed {
                    generated.push((format!("{name}{suffix}"), suffix, name.clone()));
                }
            }
            if let (true, Some((_, span))) = (info.declared_input, info.defined) {
                self.diagnostics.push(
                    Diagnostic::error(
                        Code::E510,
                        format!("`{name}` is declared an input entity but is defined by rules"),
                    )
                    .with_label(span, "defined here")
                    .with_help("input entities come from the stream only; drop the rules or the declaration"),
                );
            }
        }
        for (taken, suffix, fluent) in generated {
            let span = self
                .fluents
                .get(&taken)
                .map(|i| i.first)
                .or_else(|| self.events.get(&taken).map(|e| e.1));
            if let Some(span) = span {
                self.clashed = true;
                self.diagnostics.push(
                    Diagnostic::error(
                        Code::E509,
                        format!("the name `{taken}` is taken by the translation"),
                    )
                    .with_label(span, "this name")
                    .with_note(format!(
                        "`{fluent}{suffix}` is the TD predicate the translation generates for fluent `{fluent}`"
                    ))
                    .with_help("rename it"),
                );
            }
        }
    }

    fn shapes(&self) -> Vec<(String, RtecShape)> {
        let mut shapes = Vec::new();
        for name in &self.fluent_order {
            let Some(info) = self.fluents.get(name) else {
                continue;
            };
            if info.defined.is_some() {
                continue;
            }
            let shape = match (info.shape, info.declared_input) {
                (Some(shape), _) => shape,
                // RTEC's default for declared input fluents.
                (None, true) => RtecShape::Interval,
                (None, false) => RtecShape::Point,
            };
            shapes.push((name.clone(), shape));
        }
        shapes
    }

    /// `Simple` for a fluent with simple values (a mixed one too), else `Static` if it is
    /// defined.
    fn kind(&self, name: &str) -> Option<Kind> {
        let info = self.fluents.get(name)?;
        if info.simple.first.is_some() {
            return Some(Kind::Simple);
        }
        info.defined.map(|d| d.0)
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// A Boolean formula over fluent-value pairs (a `holdsFor` rule's list of intervals).
#[derive(Clone, Debug)]
enum Formula {
    Atom(FluentTerm),
    And(Vec<Formula>),
    Or(Vec<Formula>),
    Not(Box<Formula>),
}

type Conjunct = Vec<(bool, FluentTerm)>;

/// Disjunctive normal form of `formula` (negated when `negate`); `None` when it has more
/// than [`MAX_DISJUNCTS`] disjuncts.
fn dnf(formula: &Formula, negate: bool) -> Option<Vec<Conjunct>> {
    match formula {
        Formula::Atom(fluent) => Some(vec![vec![(!negate, fluent.clone())]]),
        Formula::Not(inner) => dnf(inner, !negate),
        Formula::And(parts) | Formula::Or(parts) => {
            let conjunction = matches!(formula, Formula::And(_)) != negate;
            let mut result: Vec<Conjunct> = if conjunction {
                vec![Vec::new()]
            } else {
                Vec::new()
            };
            for part in parts {
                let part = dnf(part, negate)?;
                if conjunction {
                    let mut product = Vec::new();
                    for left in &result {
                        for right in &part {
                            product.push(left.iter().chain(right).cloned().collect());
                        }
                    }
                    result = product;
                } else {
                    result.extend(part);
                }
                if result.len() > MAX_DISJUNCTS {
                    return None;
                }
            }
            Some(result)
        }
    }
}

struct Generator<'a> {
    names: &'a Names,
    out: &'a mut Translation,
    file: FileId,
    /// The fluent-value pairs whose grounded instances a rule reads ([`grounded_pred`]).
    grounded_read: Vec<(String, Value)>,
    timing: Timing,
    /// The timeline's first time point, where background facts are given.
    start: u64,
    /// The fluents with immediate initiations (`true`) or terminations (`false`), under
    /// [`Timing::Rtec`].
    early: Vec<(String, bool)>,
    /// Under [`Timing::Rtec`], the derived events that every rule of theirs triggers on a
    /// `start`/`end` (or another such event): known one time point after they happen, as
    /// `start`/`end` are (see [`late_events`]).
    late: Vec<String>,
    /// Under [`Timing::Rtec`], the postponable values (`p(F=V)` with a deadline) whose
    /// initiations by their own rules are also written as `f_ri` (the TD names of `f_i`
    /// and `f_ri`, and V): a re-initiation at the deadline itself postpones it, as in
    /// RTEC, and `f_i` may not read its own negation at the same time point.
    reinitiated: Vec<(String, String, Arg)>,
    /// The statically determined fluents a rule of which was dropped as never computed
    /// (W504): no `#output` of theirs where no rule is left, which would only repeat it.
    never_computed: Vec<String>,
}

/// The derived events (`happensAt` rules) that, in RTEC's timing, happen one time point
/// before they are known: every rule deriving one has a positive `start`/`end` condition
/// or one on another such event. Such a rule is evaluated as [`rtec_early`] says (its
/// other conditions one point back), and a rule it triggers is as well.
fn late_events(items: &[Item]) -> Vec<String> {
    let rules: Vec<&crate::model::EventRule> = (items.iter())
        .filter_map(|item| match item {
            Item::Happens(rule) => Some(rule),
            _ => None,
        })
        .collect();
    let mut late: Vec<String> = Vec::new();
    loop {
        let mut grew = false;
        for rule in &rules {
            let name = &rule.head.name.text;
            if late.contains(name) {
                continue;
            }
            let triggered = |rule: &&crate::model::EventRule| {
                rule.head.name.text != *name || triggers(&rule.body, &late)
            };
            if rules.iter().all(triggered) {
                late.push(name.clone());
                grew = true;
            }
        }
        if !grew {
            return late;
        }
    }
}

/// Whether `conds` have a positive `start`/`end` happening, or one of a `late` event.
fn triggers(conds: &[Cond], late: &[String]) -> bool {
    conds.iter().any(
        |cond| matches!(cond, Cond::Happens { negated: false, what, .. } if is_trigger(what, late)),
    )
}

fn is_trigger(what: &Happening, late: &[String]) -> bool {
    match what {
        Happening::Start(_) | Happening::End(_) => true,
        // `f_start` at the interval's first point, with no effect before its own.
        Happening::StartI(_) => false,
        Happening::Event(event) => late.contains(&event.name.text),
    }
}

fn var(name: &str, span: Span) -> ast::Expr {
    ast::Expr::Var(ast::Ident {
        name: name.to_owned(),
        span,
    })
}

/// `T` or `T-k`.
fn at(time: &ast::Expr, k: u32, span: Span) -> ast::Expr {
    if k == 0 {
        return time.clone();
    }
    ast::Expr::Binary(
        ast::ArithOp::Sub,
        Box::new(time.clone()),
        Box::new(ast::Expr::Const(Value::Int(i64::from(k)), span)),
        span,
    )
}

fn arg_expr(arg: &Arg) -> ast::Expr {
    match arg {
        Arg::Var(name) => ast::Expr::Var(ident(name)),
        Arg::Const(value, span) => ast::Expr::Const(*value, *span),
    }
}

fn atom(pred: String, mut args: Vec<ast::Expr>, time: ast::Expr, span: Span) -> ast::Atom {
    args.push(time);
    ast::Atom {
        predicate: ast::Ident { name: pred, span },
        args,
        span,
    }
}

/// `f<suffix>(args…, value, time)` for a fluent term.
fn fluent_atom(fluent: &FluentTerm, suffix: &str, time: ast::Expr) -> ast::Atom {
    let mut args: Vec<ast::Expr> = fluent.args.iter().map(arg_expr).collect();
    args.push(arg_expr(&fluent.value));
    atom(
        format!("{}{suffix}", fluent.name.text),
        args,
        time,
        fluent.span,
    )
}

/// `e(args…, time)` for an event term (or a background atom, which has the same form).
fn event_atom(event: &EventTerm, time: ast::Expr) -> ast::Atom {
    atom(
        event.name.text.clone(),
        event.args.iter().map(arg_expr).collect(),
        time,
        event.span,
    )
}

fn vars_of(fluent: &FluentTerm, out: &mut Vec<String>) {
    for arg in fluent.args.iter().chain(std::iter::once(&fluent.value)) {
        if let Arg::Var(name) = arg {
            if !out.contains(&name.text) {
                out.push(name.text.clone());
            }
        }
    }
}

fn expr_vars(expr: &ast::Expr, out: &mut Vec<String>) {
    match expr {
        ast::Expr::Var(ident) => out.push(ident.name.clone()),
        ast::Expr::Const(..) => {}
        ast::Expr::Binary(_, lhs, rhs, _) => {
            expr_vars(lhs, out);
            expr_vars(rhs, out);
        }
    }
}

/// A variable name not used by `taken`.
fn fresh(base: &str, taken: &[String]) -> String {
    let mut name = base.to_owned();
    while taken.contains(&name) {
        name.push('_');
    }
    name
}

impl Generator<'_> {
    fn emit(&mut self, head: ast::Atom, body: Vec<ast::Literal>, span: Span, by: String) {
        self.out
            .program
            .items
            .push(ast::Item::Rule(ast::Rule { head, body, span }));
        self.out.origins.push(Origin::Generated {
            by,
            span: Some(span),
        });
    }

    fn item(&mut self, item: &Item, items: &[Item]) {
        match item {
            Item::Initiated(rule) | Item::Terminated(rule) => {
                let initiated = matches!(item, Item::Initiated(_));
                match (self.timing, rtec_early(rule, &self.late)) {
                    (Timing::Rtec, Some(early)) => {
                        let entry = (early.head.name.text.clone(), initiated);
                        if !self.early.contains(&entry) {
                            self.early.push(entry);
                        }
                        self.effect(&early, initiated, true);
                    }
                    _ => self.effect(rule, initiated, false),
                }
            }
            Item::HoldsAt(rule) => {
                let head = fluent_atom(&rule.head, "", rule.time.clone());
                let body = self.body(&rule.body, &rule.time);
                self.emit(
                    head,
                    body,
                    rule.span,
                    "EC holdsAt rule (schema 17)".to_owned(),
                );
            }
            Item::HoldsFor(rule) => self.intervals(rule),
            Item::Fi {
                from,
                to,
                delay,
                conds,
                span,
            } => self.deadline(from, to, (*delay, conds), *span, items),
            Item::Postponed(fluent, span) => {
                let matched = items.iter().any(|item| {
                    matches!(item, Item::Fi { from, .. }
                        if from.name.text == fluent.name.text && same_value(&from.value, &fluent.value))
                });
                if !matched {
                    self.out.diagnostics.push(
                        Diagnostic::warning(
                            Code::W505,
                            format!("`p({}=…)` postpones nothing", fluent.name.text),
                        )
                        .with_label(*span, "no `fi` starts from this fluent-value pair")
                        .with_help("`p(F=V)` applies to `fi(F=V, F=V2, D)` facts"),
                    );
                }
            }
            Item::Initially(fluent, span) => self.initially(fluent, *span),
            Item::BackgroundRule { head, body, span } => {
                let time = var("T", *span);
                let head = event_atom(head, time.clone());
                let body = grounding::conds(body, &time);
                self.emit(
                    head,
                    body,
                    *span,
                    "RTEC background knowledge (a rule), at every time point".to_owned(),
                );
            }
            Item::Declare(..)
            | Item::Background { .. }
            | Item::Grounding { .. }
            | Item::DynamicDomain(..) => {}
            Item::Happens(rule) => {
                let head = event_atom(&rule.head, rule.time.clone());
                let mut conds = rule.body.clone();
                if let (true, ast::Expr::Var(time)) =
                    (self.late.contains(&rule.head.name.text), &rule.time)
                {
                    // Known a point after it happens: what it reads besides its trigger,
                    // it reads there.
                    if !shift_back(&mut conds, time, rule.span, &self.late) {
                        conds = rule.body.clone();
                    }
                }
                let body = self.body(&conds, &rule.time);
                self.emit(
                    head,
                    body,
                    rule.span,
                    "EC derived event (happensAt rule)".to_owned(),
                );
            }
        }
    }

    /// The TD literals of `conds`; background knowledge is read at `time`.
    fn body(&mut self, conds: &[Cond], time: &ast::Expr) -> Vec<ast::Literal> {
        let mut unknown = Vec::new();
        let body = body_literals(self.names, conds, time, &mut unknown);
        for fact in unknown {
            let mut diagnostic = Diagnostic::error(
                Code::E506,
                format!(
                    "`{}/{}` is not a condition of a time-point rule",
                    fact.name.text,
                    fact.args.len()
                ),
            )
            .with_label(
                fact.span,
                "expected happensAt(E, T), holdsAt(F=V, T), background knowledge or a comparison",
            )
            .with_note("no background fact or rule defines it");
            let known = self.names.background.iter().map(|(n, _)| n.as_str());
            if let Some(close) =
                crate::model::closest(&fact.name.text, known.chain(["happensAt", "holdsAt"]))
            {
                diagnostic = diagnostic.with_help(format!("did you mean `{close}`?"));
            }
            self.out.diagnostics.push(diagnostic);
        }
        body
    }

    /// One initiation or termination rule, by Algorithm 3's cases (simple fluent, delayed
    /// effect, the value incompatibility it implies). Over 100 lines: one case per
    /// shape, each a few lines, read best beside the others.
    /// `early`: a rule [`rtec_early`] made, whose effect is immediate (`f_ie`/`f_te`) and
    /// whose other conditions, and the instances that bind its head, are read one time
    /// point back.
    fn effect(&mut self, rule: &TimeRule, initiated: bool, early: bool) {
        let suffix = match (initiated, early) {
            (true, false) => "_i",
            (false, false) => "_t",
            (true, true) => "_ie",
            (false, true) => "_te",
        };
        let state_time = if early {
            at(&rule.time, 1, rule.span)
        } else {
            rule.time.clone()
        };
        let schema = if initiated {
            "EC initiatedAt rule (schema 10)"
        } else {
            "EC terminatedAt rule (schema 10)"
        };
        let mut body = self.body(&rule.body, &state_time);
        let mut bound = Vec::new();
        for cond in &rule.body {
            match cond {
                Cond::Happens {
                    negated: false,
                    what,
                    ..
                } => match what {
                    Happening::Event(event) => {
                        for arg in &event.args {
                            if let Arg::Var(name) = arg {
                                bound.push(name.text.clone());
                            }
                        }
                    }
                    Happening::Start(fluent)
                    | Happening::End(fluent)
                    | Happening::StartI(fluent) => {
                        vars_of(fluent, &mut bound);
                    }
                },
                Cond::Holds {
                    negated: false,
                    fluent,
                    ..
                } => vars_of(fluent, &mut bound),
                Cond::Background {
                    negated: false,
                    atom,
                    ..
                } => {
                    for arg in &atom.args {
                        if let Arg::Var(name) = arg {
                            bound.push(name.text.clone());
                        }
                    }
                }
                Cond::Builtin(builtin) if builtin.op == ast::CmpOp::Eq => {
                    expr_vars(&builtin.lhs, &mut bound);
                    expr_vars(&builtin.rhs, &mut bound);
                }
                _ => {}
            }
        }
        // Name the head's anonymous arguments so that they can be bound.
        let mut head = rule.head.clone();
        let mut taken = Vec::new();
        vars_of(&head, &mut taken);
        taken.extend(bound.iter().cloned());
        let mut unbound: Vec<String> = Vec::new();
        for (i, arg) in head.args.iter_mut().enumerate() {
            if let Arg::Var(name) = arg {
                if name.text == "_" {
                    name.text = fresh(&format!("Any{}", i + 1), &taken);
                    taken.push(name.text.clone());
                    unbound.push(format!("`_` (argument {})", i + 1));
                } else if !bound.contains(&name.text) {
                    unbound.push(format!("`{}`", name.text));
                }
            }
        }
        // A termination of whatever value holds (RTEC's `terminatedAt(f(X)=_V, T)`): the
        // value is bound below by the value that holds, like the arguments.
        if let (false, Arg::Var(name)) = (initiated, &mut head.value) {
            if name.text == "_" {
                name.text = fresh("AnyValue", &taken);
                taken.push(name.text.clone());
                unbound.push("`_` (the value)".to_owned());
            } else if !bound.contains(&name.text) {
                unbound.push(format!("`{}`", name.text));
            }
        }
        let head_atom = fluent_atom(&head, suffix, rule.time.clone());
        if unbound.is_empty() {
            // RTEC initiates a grounded pair only for its grounded instances (known by
            // the time point the rule is evaluated at: a domain only grows).
            if initiated {
                if let Some(grounded) = self.grounded_exactly(&head, rule.time.clone()) {
                    body.push(ast::Literal::Positive(grounded));
                }
            }
            self.emit(head_atom, body, rule.span, schema.to_owned());
            return;
        }
        // RTEC grounds the head's free variables over the pair's grounding declaration.
        if let Some(grounded) = self.grounded_exactly(&head, rule.time.clone()) {
            body.push(ast::Literal::Positive(grounded));
            let by = format!("{schema}, head variables bound by RTEC's grounding");
            self.emit(head_atom, body, rule.span, by);
            return;
        }
        let fluent = &head.name.text;
        // A termination ends the instances that hold the value, all it can affect: RTEC's
        // meaning exactly. An initiation starts nothing for an instance holding no value.
        if initiated {
            self.out.diagnostics.push(
                Diagnostic::warning(
                    Code::W504,
                    format!(
                        "{} of `{fluent}` not bound by the rule's conditions",
                        unbound.join(", ")
                    ),
                )
                .with_label(rule.head.span, "RTEC grounds these over its declared domain; TD has none")
                .with_note(format!("the rule applies to the instances of `{fluent}` that hold another value at that time point: it terminates that value, as in RTEC, but the new value does not start for instances that held no value"))
                .with_help("bind the variables with a condition, e.g. `holdsAt(F=V, T)`, to make the intent explicit"),
            );
        }
        let info = self.names.fluents.get(fluent);
        let by = format!("{schema}, unbound head variables bound by `{fluent}`");
        if !initiated {
            body.push(ast::Literal::Positive(fluent_atom(
                &head,
                "",
                state_time.clone(),
            )));
            self.emit(head_atom, body, rule.span, by);
            return;
        }
        match info {
            Some(info) if !info.simple.variable => {
                for value in &info.values {
                    if matches!(&head.value, Arg::Const(v, _) if v == value) {
                        continue;
                    }
                    let mut other = head.clone();
                    other.value = Arg::Const(*value, head.span);
                    let mut body = body.clone();
                    body.push(ast::Literal::Positive(fluent_atom(
                        &other,
                        "",
                        state_time.clone(),
                    )));
                    self.emit(head_atom.clone(), body, rule.span, by.clone());
                }
            }
            _ => {
                let value = fresh("Other", &taken);
                let mut other = head.clone();
                other.value = Arg::Var(Name {
                    text: value.clone(),
                    span: head.span,
                });
                body.push(ast::Literal::Positive(fluent_atom(
                    &other,
                    "",
                    state_time.clone(),
                )));
                body.push(ast::Literal::Builtin(ast::Builtin {
                    lhs: var(&value, head.span),
                    op: ast::CmpOp::Ne,
                    rhs: arg_expr(&head.value),
                    span: head.span,
                }));
                self.emit(head_atom, body, rule.span, by);
            }
        }
    }

    /// A `holdsFor` rule: each interval operation as TD rules. Over 100 lines: one arm
    /// per operation (union, intersection, complements), read best side by side.
    fn intervals(&mut self, rule: &IntervalRule) {
        let mut lists: HashMap<String, Formula> = HashMap::new();
        let mut builtins = Vec::new();
        let mut taken = Vec::new();
        vars_of(&rule.head, &mut taken);
        let mut ok = true;
        let lookup = |name: &Name,
                      lists: &HashMap<String, Formula>,
                      diagnostics: &mut Diagnostics| {
            let found = lists.get(&name.text).cloned();
            if found.is_none() {
                diagnostics.push(
                    Diagnostic::error(
                        Code::E511,
                        format!(
                            "the list of intervals `{}` is not defined before its use",
                            name.text
                        ),
                    )
                    .with_label(name.span, "not defined by an earlier condition")
                    .with_help("define it with `holdsFor(F=V, I)` or an interval operation first"),
                );
            }
            found
        };
        for cond in &rule.body {
            let defined = match cond {
                IntervalCond::HoldsFor { fluent, list } => {
                    vars_of(fluent, &mut taken);
                    Some((list, Some(Formula::Atom(fluent.clone()))))
                }
                IntervalCond::Union { inputs, out } | IntervalCond::Intersect { inputs, out } => {
                    let parts: Option<Vec<Formula>> = inputs
                        .iter()
                        .map(|i| lookup(i, &lists, &mut self.out.diagnostics))
                        .collect();
                    let formula = parts.map(|parts| {
                        if matches!(cond, IntervalCond::Union { .. }) {
                            Formula::Or(parts)
                        } else {
                            Formula::And(parts)
                        }
                    });
                    Some((out, formula))
                }
                IntervalCond::RelativeComplement {
                    base,
                    subtract,
                    out,
                } => {
                    let base = lookup(base, &lists, &mut self.out.diagnostics);
                    let parts: Option<Vec<Formula>> = subtract
                        .iter()
                        .map(|i| lookup(i, &lists, &mut self.out.diagnostics))
                        .collect();
                    let formula = base.zip(parts).map(|(base, parts)| {
                        Formula::And(vec![base, Formula::Not(Box::new(Formula::Or(parts)))])
                    });
                    Some((out, formula))
                }
                IntervalCond::Complement { inputs, out } => {
                    let parts: Option<Vec<Formula>> = inputs
                        .iter()
                        .map(|i| lookup(i, &lists, &mut self.out.diagnostics))
                        .collect();
                    Some((out, parts.map(|p| Formula::Not(Box::new(Formula::Or(p))))))
                }
                IntervalCond::Builtin(builtin) => {
                    expr_vars(&builtin.lhs, &mut taken);
                    expr_vars(&builtin.rhs, &mut taken);
                    builtins.push(builtin.clone());
                    None
                }
            };
            match defined {
                Some((name, Some(formula))) => {
                    lists.insert(name.text.clone(), formula);
                }
                Some((_, None)) => ok = false,
                None => {}
            }
        }
        if !ok {
            return;
        }
        let Some(formula) = lookup(&rule.list, &lists, &mut self.out.diagnostics) else {
            return;
        };
        let Some(conjuncts) = dnf(&formula, false) else {
            self.out.diagnostics.push(
                Diagnostic::error(
                    Code::E511,
                    format!(
                        "this holdsFor rule expands to more than {MAX_DISJUNCTS} holdsAt rules"
                    ),
                )
                .with_label(rule.span, "too many alternatives")
                .with_help("split it into several fluents"),
            );
            return;
        };
        let time = var(&fresh("T", &taken), rule.list.span);
        let head = fluent_atom(&rule.head, "", time.clone());
        let count = conjuncts.len();
        for (i, mut conjunct) in conjuncts.into_iter().enumerate() {
            // Positive conditions first: they bind what the negations test.
            conjunct.sort_by_key(|(positive, _)| !*positive);
            let mut body: Vec<ast::Literal> = conjunct
                .iter()
                .map(|(positive, fluent)| {
                    literal(
                        !positive,
                        fluent_atom(fluent, "", time.clone()),
                        fluent.span,
                    )
                })
                .collect();
            body.extend(builtins.iter().cloned().map(ast::Literal::Builtin));
            // RTEC computes a grounded pair for its grounded instances only; a disjunct
            // that binds a head variable by no positive condition (a complement) ranges
            // over them, or over the fluent's grounded instances of another value.
            let mut bound = Vec::new();
            for (_, fluent) in conjunct.iter().filter(|(positive, _)| *positive) {
                vars_of(fluent, &mut bound);
            }
            let mut needed = Vec::new();
            vars_of(&rule.head, &mut needed);
            let unsafe_ = needed.iter().any(|v| !bound.contains(v));
            let implied = conjunct.iter().any(|(positive, atom)| {
                *positive && self.names.implies_grounding(atom, &rule.head)
            });
            let grounded = match self.grounded_exactly(&rule.head, time.clone()) {
                Some(_) if implied => None,
                Some(grounded) => Some(grounded),
                None if unsafe_ => self.grounded(&rule.head, time.clone()),
                None => None,
            };
            if let Some(grounded) = grounded {
                body.insert(0, ast::Literal::Positive(grounded));
            } else if unsafe_ && !self.names.groundings.is_empty() {
                // RTEC computes only what its grounding declarations name; no instance of
                // this pair is named, so none is computed (voting's `pow(propose(_P, M))`).
                self.out.diagnostics.push(
                    Diagnostic::warning(
                        Code::W504,
                        format!(
                            "`{}` is never computed: a variable of its head is bound by no condition and no grounding declaration names it",
                            rule.head.name.text
                        ),
                    )
                    .with_label(rule.head.span, "RTEC computes the grounded pairs only")
                    .with_help("add a `grounding(…)` declaration for it, as RTEC would need to compute it"),
                );
                self.never_computed.push(rule.head.name.text.clone());
                continue;
            }
            self.emit(
                head.clone(),
                body,
                rule.span,
                format!(
                    "EC holdsFor rule as holdsAt rules (schema 17), disjunct {} of {count}",
                    i + 1
                ),
            );
        }
    }

    /// The `f_ri` rules of [`Generator::reinitiated`]: each rule initiating `f_i` with
    /// the value V (or a variable value), written again with the head `f_ri`. The
    /// deadlines' own rules are not among them: only initiations by rules postpone.
    fn rule_initiations(&mut self) {
        let mut copies = Vec::new();
        let rules = self.out.program.items.iter().filter_map(|item| match item {
            ast::Item::Rule(rule) => Some(rule),
            _ => None,
        });
        for (rule, origin) in rules.zip(&self.out.origins) {
            let Origin::Generated { by, .. } = origin else {
                continue;
            };
            if by.starts_with("EC fi deadline") {
                continue;
            }
            for (initiated, reinitiated, value) in &self.reinitiated {
                if rule.head.predicate.name != *initiated {
                    continue;
                }
                let same = match (rule.head.args.iter().rev().nth(1), value) {
                    (Some(ast::Expr::Const(v, _)), Arg::Const(w, _)) => v == w,
                    (Some(_), _) => true,
                    (None, _) => false,
                };
                if same {
                    let mut copy = rule.clone();
                    copy.head.predicate.name = reinitiated.clone();
                    copies.push((copy, origin.clone()));
                }
            }
        }
        for (rule, origin) in copies {
            let by = match origin {
                Origin::Generated { by, .. } => by,
                _ => String::new(),
            };
            let span = rule.span;
            self.emit(
                rule.head,
                rule.body,
                span,
                format!("{by}, as an initiation by a rule (RTEC: a re-initiation at a deadline postpones it)"),
            );
        }
    }

    /// `f_ci`, what RTEC's cyclic form reads as `initiatedAt(F=V, T1, T, T2)`: every
    /// rule initiating `f_i` (its deadlines included), written again without the
    /// condition on the pair's grounded instances. RTEC evaluates the initiating rules'
    /// bodies there, for instances its grounding declarations do not name as well.
    fn cyclic_initiations(&mut self, items: &[Item]) {
        let mut read: Vec<String> = Vec::new();
        for item in items {
            if let Item::Initiated(rule) | Item::Terminated(rule) = item {
                collect_initiations_read(&rule.body, &mut read);
            }
        }
        if read.is_empty() {
            return;
        }
        let mut copies = Vec::new();
        let rules = self.out.program.items.iter().filter_map(|item| match item {
            ast::Item::Rule(rule) => Some(rule),
            _ => None,
        });
        for (rule, origin) in rules.zip(&self.out.origins) {
            let Some(fluent) =
                (read.iter()).find(|name| rule.head.predicate.name == format!("{name}_i"))
            else {
                continue;
            };
            let mut copy = rule.clone();
            copy.head.predicate.name = format!("{fluent}_ci");
            let grounded = grounded_pred(fluent);
            copy.body.retain(|literal| {
                !matches!(literal, ast::Literal::Positive(a) if a.predicate.name == grounded)
            });
            copies.push((copy, origin.clone()));
        }
        for (rule, origin) in copies {
            let by = match origin {
                Origin::Generated { by, .. } => by,
                _ => String::new(),
            };
            let span = rule.span;
            self.emit(
                rule.head,
                rule.body,
                span,
                format!("{by}, as RTEC's cyclic form reads it (grounded or not)"),
            );
        }
    }

    fn deadline(
        &mut self,
        from: &FluentTerm,
        to: &FluentTerm,
        (delay, conds): (u32, &[GroundCond]),
        span: Span,
        items: &[Item],
    ) {
        let postponed = items.iter().any(|item| {
            matches!(item, Item::Postponed(p, _)
                if p.name.text == from.name.text && same_value(&p.value, &from.value))
        });
        let mut taken = Vec::new();
        vars_of(from, &mut taken);
        vars_of(to, &mut taken);
        let time = var(&fresh("T", &taken), span);
        let head = fluent_atom(to, "_i", time.clone());
        let mut body = vec![ast::Literal::Positive(fluent_atom(
            from,
            "_i",
            at(&time, delay, span),
        ))];
        for k in (1..delay).rev() {
            body.push(literal(
                true,
                fluent_atom(from, "_t", at(&time, k, span)),
                span,
            ));
        }
        if postponed {
            for k in (1..delay).rev() {
                body.push(literal(
                    true,
                    fluent_atom(from, "_i", at(&time, k, span)),
                    span,
                ));
            }
            // RTEC: "the fluent is extended when the re-initiation takes place at the
            // same time as the deadline" (its `timeoutTreatment.prolog`).
            if self.timing == Timing::Rtec {
                let reinitiated = fluent_atom(from, "_ri", time.clone());
                let entry = (
                    fluent_atom(from, "_i", time.clone()).predicate.name,
                    reinitiated.predicate.name.clone(),
                    from.value.clone(),
                );
                if !self.reinitiated.contains(&entry) {
                    self.reinitiated.push(entry);
                }
                body.push(literal(true, reinitiated, span));
            }
        }
        // Under RTEC's timing, a value initiated with immediate effect (`from_ie` at e
        // holds from e) reaches its deadline at e + delay − 1, as one initiated at e − 1;
        // a termination with immediate effect (`from_te` at s stops it at s) between
        // counts as one at s − 1.
        let name = &from.name.text;
        let early_init = self.early.contains(&(name.clone(), true));
        let early_stop = early_init || self.early.contains(&(name.clone(), false));
        let mut bodies = vec![body];
        if early_init && delay >= 1 {
            let mut early = vec![ast::Literal::Positive(fluent_atom(
                from,
                "_ie",
                at(&time, delay - 1, span),
            ))];
            early.extend(bodies[0][1..].iter().cloned());
            bodies.push(early);
        }
        if early_stop {
            for body in &mut bodies {
                for k in 0..delay.saturating_sub(1) {
                    body.push(literal(
                        true,
                        fluent_atom(from, "_te", at(&time, k, span)),
                        span,
                    ));
                }
            }
        }
        let by = if postponed {
            "EC fi deadline with p postponement (Algorithm 3, lines 13-17)"
        } else {
            "EC fi deadline (Algorithm 3, lines 13-17)"
        };
        for mut body in bodies {
            body.extend(grounding::conds(conds, &time));
            self.emit(head.clone(), body, span, by.to_owned());
        }
    }

    fn initially(&mut self, fluent: &FluentTerm, span: Span) {
        let ground = fluent
            .args
            .iter()
            .chain(std::iter::once(&fluent.value))
            .all(|a| matches!(a, Arg::Const(..)));
        if ground {
            let fact = fluent_atom(fluent, "_initially", ast::Expr::Const(Value::Int(0), span));
            self.out.program.items.push(ast::Item::Fact(fact));
            return;
        }
        // RTEC grounds `initially(f(_, …)=v)` over the pair's declared instances: each
        // holds v from the first time point at which it is grounded.
        let mut named = fluent.clone();
        let mut taken = Vec::new();
        vars_of(&named, &mut taken);
        for (i, arg) in named.args.iter_mut().enumerate() {
            if let Arg::Var(name) = arg {
                if name.text == "_" {
                    name.text = fresh(&format!("X{}", i + 1), &taken);
                    taken.push(name.text.clone());
                }
            }
        }
        let time = var(&fresh("T", &taken), span);
        let grounded = self.grounded(&named, time.clone());
        let before = self.grounded(&named, at(&time, 1, span));
        let (Some(grounded), Some(before)) = (grounded, before) else {
            self.out.diagnostics.push(
                Diagnostic::error(Code::E513, "`initially` needs a ground fluent-value pair")
                    .with_label(fluent.span, "has a variable")
                    .with_help("write the constants: `initially(light(kitchen)=off).`, or declare the pair's instances: `grounding(light(Room)=off) :- room(Room).`"),
            );
            return;
        };
        self.emit(
            fluent_atom(&named, "_initially", time),
            vec![
                ast::Literal::Positive(grounded),
                literal(true, before, span),
            ],
            span,
            "EC initially over the pair's grounded instances (RTEC grounding)".to_owned(),
        );
    }

    /// Inertia, value incompatibility, start/end events and `initially` per fluent.
    /// Over 100 lines: the per-fluent rules are emitted in the order the translation
    /// documents them, one block each.
    fn per_fluent(&mut self) {
        for name in &self.names.fluent_order {
            let Some(info) = self.names.fluents.get(name) else {
                continue;
            };
            let span = info.defined.map_or(info.first, |d| d.1);
            let xs: Vec<String> = (1..=info.arity).map(|i| format!("X{i}")).collect();
            let time = var("T", span);
            let instance = |value: ast::Expr, suffix: &str, k: u32| {
                let mut args: Vec<ast::Expr> = xs.iter().map(|x| var(x, span)).collect();
                args.push(value);
                atom(format!("{name}{suffix}"), args, at(&time, k, span), span)
            };
            if self.names.kind(name) == Some(Kind::Simple) {
                // Rules 14–16 once with a value variable, or once per listed value: the
                // values RTEC's grounding declarations name, or else every constant
                // written as a value of the fluent; never a statically determined one.
                let mut values: Vec<Value> = if info.grounded.is_empty() {
                    info.values.clone()
                } else {
                    let mut values = info.grounded.clone();
                    values.extend(
                        info.simple
                            .values
                            .iter()
                            .filter(|v| !info.grounded.contains(v)),
                    );
                    values
                };
                values.retain(|v| !info.statics.values.contains(v));
                let any_value =
                    info.grounded.is_empty() && (info.simple.variable || values.is_empty());
                let instances: Vec<(ast::Expr, Option<Value>, String)> = if any_value {
                    vec![(var("V", span), None, format!("`{name}`, any value"))]
                } else {
                    values
                        .iter()
                        .map(|value| {
                            let v = ast::Expr::Const(*value, span);
                            (v, Some(*value), format!("`{name}={value}`"))
                        })
                        .collect()
                };
                // Immediate initiations and terminations (RTEC's timing of start/end):
                // `f_ie` holds what takes effect at T itself, `f_te` what stops at T.
                let early_init = self.early.contains(&(name.clone(), true));
                let early_stop = early_init || self.early.contains(&(name.clone(), false));
                // RTEC: an initiation at a time point where the value is also
                // terminated starts nothing (voting's simultaneous aye and nay).
                let rtec = self.timing == Timing::Rtec;
                // RTEC: F=V is broken where F=W is initiated for a value W of a
                // `simpleFluent(F=W)` declaration other than V. Its compiler declares the
                // values of the rules' heads, and a head's variable value as its grounding
                // declares it: a fluent grounded with a variable value only (`grounding(
                // location(P)=Place) :- place(Place).`) is declared `simpleFluent(
                // location(_)=_)`, which breaks nothing, so its values do not end each
                // other (rule 16 is not written), as RTEC's own runs show — unless the
                // description declares its values itself (`simpleFluent(location(_)=home).`,
                // as RTEC's unit tests do).
                let independent =
                    rtec && info.grounded_any && info.grounded.is_empty() && !info.declared_values;
                for (v, value, which) in &instances {
                    // Rule 14 from `f<initiated>` read `k` points back.
                    let start = |initiated: &str, terminated: &str, k: u32| {
                        let mut body =
                            vec![ast::Literal::Positive(instance(v.clone(), initiated, k))];
                        if rtec {
                            body.push(literal(true, instance(v.clone(), terminated, k), span));
                        }
                        body
                    };
                    let by = format!("EC inertia (rule 14) for {which}");
                    self.emit(instance(v.clone(), "", 0), start("_i", "_t", 1), span, by);
                    if early_init {
                        let by = format!(
                            "EC inertia (rule 14), initiated by a start/end at RTEC's time, for {which}"
                        );
                        self.emit(instance(v.clone(), "", 0), start("_ie", "_te", 0), span, by);
                    }
                    let mut keep = vec![
                        ast::Literal::Positive(instance(v.clone(), "", 1)),
                        literal(true, instance(v.clone(), "_t", 1), span),
                    ];
                    if early_stop {
                        keep.push(literal(true, instance(v.clone(), "_te", 0), span));
                    }
                    self.emit(
                        instance(v.clone(), "", 0),
                        keep,
                        span,
                        format!("EC inertia (rule 15) for {which}"),
                    );
                    if independent {
                        continue;
                    }
                    if early_init {
                        let incompatible = |other: ast::Expr| {
                            let mut body =
                                vec![ast::Literal::Positive(instance(other.clone(), "_ie", 0))];
                            match value {
                                Some(_) => {}
                                None => {
                                    body.push(ast::Literal::Positive(instance(v.clone(), "", 1)));
                                    body.push(ast::Literal::Builtin(ast::Builtin {
                                        lhs: v.clone(),
                                        op: ast::CmpOp::Ne,
                                        rhs: other,
                                        span,
                                    }));
                                }
                            }
                            body
                        };
                        let others: Vec<ast::Expr> = match value {
                            Some(value) => values
                                .iter()
                                .filter(|o| *o != value)
                                .map(|o| ast::Expr::Const(*o, span))
                                .collect(),
                            None => vec![var("V2", span)],
                        };
                        for other in others {
                            self.emit(
                                instance(v.clone(), "_te", 0),
                                incompatible(other),
                                span,
                                format!(
                                    "EC value incompatibility (rule 16), immediate, for {which}"
                                ),
                            );
                        }
                    }
                    let Some(value) = value else {
                        self.emit(
                            instance(v.clone(), "_t", 0),
                            vec![
                                ast::Literal::Positive(instance(var("V2", span), "_i", 0)),
                                ast::Literal::Positive(instance(v.clone(), "", 0)),
                                ast::Literal::Builtin(ast::Builtin {
                                    lhs: v.clone(),
                                    op: ast::CmpOp::Ne,
                                    rhs: var("V2", span),
                                    span,
                                }),
                            ],
                            span,
                            format!("EC value incompatibility (rule 16) for {which}"),
                        );
                        continue;
                    };
                    for other in values.iter().filter(|o| *o != value) {
                        self.emit(
                            instance(v.clone(), "_t", 0),
                            vec![ast::Literal::Positive(instance(
                                ast::Expr::Const(*other, span),
                                "_i",
                                0,
                            ))],
                            span,
                            format!(
                                "EC value incompatibility (rule 16) for `{name}={value}` and `{name}={other}`"
                            ),
                        );
                    }
                }
            }
            let v = var("V", span);
            if info.uses_start {
                self.emit(
                    instance(v.clone(), "_start", 0),
                    vec![
                        ast::Literal::Positive(instance(v.clone(), "", 0)),
                        literal(true, instance(v.clone(), "", 1), span),
                    ],
                    span,
                    format!("EC start event of `{name}`"),
                );
            }
            if info.uses_end {
                self.emit(
                    instance(v.clone(), "_end", 0),
                    vec![
                        ast::Literal::Positive(instance(v.clone(), "", 1)),
                        literal(true, instance(v.clone(), "", 0), span),
                    ],
                    span,
                    format!("EC end event of `{name}`"),
                );
            }
            if info.initially {
                self.emit(
                    instance(v.clone(), "", 0),
                    vec![ast::Literal::Positive(instance(v, "_initially", 0))],
                    span,
                    format!("EC initially for `{name}`"),
                );
            }
        }
    }

    /// `#output` for the declared output fluents, else for every defined fluent.
    fn outputs(&mut self, items: &[Item]) {
        let mut outputs: Vec<ast::Ident> = Vec::new();
        let mut span = None;
        for item in items {
            if let Item::Declare(DeclKind::Output, Entity::Fluent(fluent), decl_span) = item {
                span.get_or_insert(*decl_span);
                if !outputs.iter().any(|o| o.name == fluent.name.text) {
                    outputs.push(ident(&fluent.name));
                }
            }
        }
        if outputs.is_empty() {
            for name in &self.names.fluent_order {
                if let Some(info) = self.names.fluents.get(name) {
                    if let Some((_, defined)) = info.defined {
                        span.get_or_insert(defined);
                        outputs.push(ast::Ident {
                            name: name.clone(),
                            span: info.first,
                        });
                    }
                }
            }
        }
        {
            let defined: HashSet<&str> = (self.out.program.items.iter())
                .filter_map(|item| match item {
                    ast::Item::Rule(rule) => Some(rule.head.predicate.name.as_str()),
                    _ => None,
                })
                .collect();
            let dropped = |name: &str| self.never_computed.iter().any(|n| n == name);
            outputs.retain(|o| defined.contains(o.name.as_str()) || !dropped(&o.name));
        }
        if !outputs.is_empty() {
            let span = span.unwrap_or_else(|| Span::new(self.file, 0..0));
            self.out
                .program
                .items
                .push(ast::Item::Output(outputs, span));
        }
    }
}

/// The (TD) names of the fluents whose initiations `conds` read in RTEC's cyclic form.
fn collect_initiations_read(conds: &[Cond], out: &mut Vec<String>) {
    for cond in conds {
        match cond {
            Cond::Holds {
                fluent,
                reads: Reads::Initiated,
                ..
            } if !out.contains(&fluent.name.text) => out.push(fluent.name.text.clone()),
            Cond::Count { body, .. } => collect_initiations_read(body, out),
            _ => {}
        }
    }
}

/// The negated background conditions of `conds`, counts' bodies included.
fn collect_negated_background(conds: &[Cond], out: &mut Vec<(EventTerm, Span)>) {
    for cond in conds {
        match cond {
            Cond::Background {
                negated: true,
                atom,
                span,
            } => out.push((atom.clone(), *span)),
            Cond::Count { body, .. } => collect_negated_background(body, out),
            _ => {}
        }
    }
}

/// The TD literals of `conds` (see [`Generator::body`]); the background atoms that name
/// no background knowledge go to `unknown`.
fn body_literals(
    names: &Names,
    conds: &[Cond],
    time: &ast::Expr,
    unknown: &mut Vec<EventTerm>,
) -> Vec<ast::Literal> {
    conds
        .iter()
        .flat_map(|cond| match cond {
            Cond::Happens {
                negated,
                what,
                time,
                span,
            } => {
                let atom = match what {
                    Happening::Event(event) => event_atom(event, time.clone()),
                    Happening::Start(fluent) | Happening::StartI(fluent) => {
                        fluent_atom(fluent, "_start", time.clone())
                    }
                    Happening::End(fluent) => fluent_atom(fluent, "_end", time.clone()),
                };
                vec![literal(*negated, atom, *span)]
            }
            Cond::Holds {
                negated,
                fluent,
                time,
                span,
                reads,
            } => {
                let suffix = match reads {
                    Reads::Holds => "",
                    // See `Generator::cyclic_initiations`.
                    Reads::Initiated => "_ci",
                    Reads::Terminated => "_t",
                };
                vec![literal(
                    *negated,
                    fluent_atom(fluent, suffix, time.clone()),
                    *span,
                )]
            }
            Cond::Builtin(builtin) => vec![ast::Literal::Builtin(builtin.clone())],
            Cond::Background {
                negated,
                atom: fact,
                span,
            } => {
                if !names.is_background(&fact.name.text, fact.args.len()) {
                    unknown.push(fact.clone());
                }
                if let Some(inlined) = names.pattern(fact, *negated, *span) {
                    return inlined;
                }
                vec![literal(*negated, event_atom(fact, time.clone()), *span)]
            }
            Cond::Count {
                result,
                counted,
                body,
                span,
            } => vec![ast::Literal::Count(ast::CountLit {
                result: crate::model::ident(result),
                counted: counted.iter().map(crate::model::ident).collect(),
                body: body_literals(names, body, time, unknown),
                span: *span,
            })],
        })
        .collect()
}

/// Under [`Timing::Rtec`], a rule triggered by a `start`/`end` happening (a positive
/// condition) as it is evaluated one time point late: the happening read at T, every
/// other condition at T-1 (see [`Timing::Rtec`]). `None` for other rules, and where the
/// rule's time is not a plain variable or a comparison reads it.
fn rtec_early(rule: &TimeRule, late: &[String]) -> Option<TimeRule> {
    let ast::Expr::Var(time) = &rule.time else {
        return None;
    };
    if !triggers(&rule.body, late) {
        return None;
    }
    let mut early = rule.clone();
    if !shift_back(&mut early.body, time, rule.span, late) {
        return None;
    }
    Some(early)
}

/// Reads every condition of `conds` at `time` one point earlier but the start/end
/// happenings and the `late` events (see [`rtec_early`]); false where a condition is not read at `time` itself
/// or a comparison reads it.
fn shift_back(conds: &mut [Cond], time: &ast::Ident, span: Span, late: &[String]) -> bool {
    for cond in conds {
        let (at_time, triggers) = match cond {
            Cond::Count { body, .. } => {
                if !shift_back(body, time, span, late) {
                    return false;
                }
                continue;
            }
            Cond::Happens { what, time, .. } => (time, is_trigger(what, late)),
            Cond::Holds { time, .. } => (time, false),
            Cond::Background { .. } => continue,
            Cond::Builtin(builtin) => {
                let mut vars = Vec::new();
                expr_vars(&builtin.lhs, &mut vars);
                expr_vars(&builtin.rhs, &mut vars);
                if vars.contains(&time.name) {
                    return false;
                }
                continue;
            }
        };
        if !matches!(at_time, ast::Expr::Var(v) if v.name == time.name) {
            return false;
        }
        if !triggers {
            *at_time = at(at_time, 1, span);
        }
    }
    true
}

fn same_value(a: &Arg, b: &Arg) -> bool {
    match (a, b) {
        (Arg::Const(x, _), Arg::Const(y, _)) => x == y,
        (Arg::Var(_), Arg::Var(_)) => true,
        _ => false,
    }
}

fn literal(negated: bool, atom: ast::Atom, span: Span) -> ast::Literal {
    if negated {
        ast::Literal::Negative(atom, span)
    } else {
        ast::Literal::Positive(atom)
    }
}
