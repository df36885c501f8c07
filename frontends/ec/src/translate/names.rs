//! What the description says about each event and fluent name: arities, kinds, values,
//! declarations and groundings, collected before any rule is written, with the errors
//! found there (arities, names used twice, kinds of fluent, background patterns).

use hashbrown::HashMap;
use stgflow_lang::diag::{Diagnostic, Diagnostics, Span};
use stgflow_lang::syntax::ast;
use stgflow_lang::value::Value;

use super::terms::arg_expr;
use crate::codes::Code;
use crate::model::{
    Arg, Cond, DeclKind, Entity, EventTerm, FluentTerm, GroundCond, Happening, IntervalCond, Item,
};
use crate::records::RtecShape;
use crate::syntax::Name;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Simple,
    Static,
}

#[derive(Debug)]
pub(super) struct FluentInfo {
    pub(super) arity: usize,
    pub(super) first: Span,
    pub(super) defined: Option<(Kind, Span)>,
    pub(super) values: Vec<Value>,
    declared_input: bool,
    shape: Option<RtecShape>,
    output: bool,
    pub(super) uses_start: bool,
    pub(super) uses_end: bool,
    pub(super) initially: bool,
    /// The values defined by initiations, terminations, `fi`, `p` and `initially`.
    pub(super) simple: Part,
    /// The values defined by `holdsAt` and `holdsFor` rules.
    pub(super) statics: Part,
    /// The constant values of RTEC `grounding` declarations of the fluent.
    pub(super) grounded: Vec<Value>,
    /// Whether a `grounding` declaration names the fluent with a variable value
    /// (`grounding(location(P)=Place) :- place(Place).`): RTEC prints every value.
    pub(super) grounded_any: bool,
    /// Whether a `simpleFluent` declaration names one of the fluent's values as a
    /// constant (`simpleFluent(location(_)=home).`): RTEC's breaking points of a value
    /// are the initiations of the other values declared so.
    pub(super) declared_values: bool,
}

/// The values of a fluent that rules of one kind define.
#[derive(Debug, Default)]
pub(super) struct Part {
    /// The first definition's span.
    pub(super) first: Option<Span>,
    pub(super) values: Vec<Value>,
    /// Whether one definition has a variable value.
    pub(super) variable: bool,
    /// The fluent's name in the first definition.
    name_at: Option<Span>,
}

impl FluentInfo {
    /// Whether the fluent has simple values and statically determined ones: its TD
    /// predicate is then the union of one per part (`grounding::split`).
    pub(super) fn mixed(&self) -> bool {
        self.simple.first.is_some() && self.statics.first.is_some()
    }
}

/// Every event and fluent name with what the description says about it.
#[derive(Debug, Default)]
pub(super) struct Names {
    pub(super) fluent_order: Vec<String>,
    pub(super) fluents: HashMap<String, FluentInfo>,
    events: HashMap<String, (usize, Span)>,
    /// RTEC's grounding declarations, and its dynamic domains (name, arity).
    pub(super) groundings: Vec<(Entity, Vec<GroundCond>)>,
    pub(super) dynamic: Vec<(String, usize)>,
    /// How RTEC writes the fluents and events with compound arguments, by TD name.
    pub(super) printed: Vec<(String, crate::model::Printed)>,
    /// The background predicates given by facts or rules (name, arity).
    pub(super) background: Vec<(String, usize)>,
    /// Background facts with variables (`price(_, 10).`), which hold for every value of
    /// them: a condition on one is its comparisons, inlined (name, arguments).
    patterns: Vec<(String, Vec<Arg>, Span)>,
    /// Whether a name is used at two arities or as two things (E508, E509).
    pub(super) clashed: bool,
    pub(super) diagnostics: Diagnostics,
}

impl Names {
    pub(super) fn register(&mut self, item: &Item) {
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
    pub(super) fn pattern(
        &self,
        atom: &EventTerm,
        negated: bool,
        span: Span,
    ) -> Option<Vec<ast::Literal>> {
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
    pub(super) fn check_patterns(&mut self, items: &[Item]) {
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
                Item::HoldsFor(rule) => {
                    for cond in &rule.body {
                        if let IntervalCond::Background {
                            negated: true,
                            atom,
                            span,
                        } = cond
                        {
                            negated.push((atom.clone(), *span));
                        }
                    }
                    continue;
                }
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
    pub(super) fn is_background(&self, name: &str, arity: usize) -> bool {
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
    pub(super) fn check_kinds(&mut self) {
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

    /// Reports input declarations of defined fluents.
    pub(super) fn check_inputs(&mut self) {
        for name in &self.fluent_order {
            let Some(info) = self.fluents.get(name) else {
                continue;
            };
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
    }

    /// Every event and fluent name of the description.
    pub(super) fn all(&self) -> impl Iterator<Item = &str> {
        (self.fluents.keys())
            .chain(self.events.keys())
            .map(String::as_str)
    }

    pub(super) fn shapes(&self) -> Vec<(String, RtecShape)> {
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
    pub(super) fn kind(&self, name: &str) -> Option<Kind> {
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
