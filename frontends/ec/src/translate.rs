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
//! The translation by construct, each a module: `names` (what the description says about
//! each name, checked before any rule is written), `simple` (initiations, terminations,
//! `initially`, inertia), `intervals` (`holdsFor`), `deadlines` (`fi`, `p`), `cyclic`
//! (RTEC's cyclic form), `timing` (the timing of `start`/`end`, [`Timing`]), `terms` (TD
//! atoms and literals) and [`grounding`] (RTEC's grounding, background knowledge and
//! fluents split by value); the other items (`happensAt`, `holdsAt`, background rules) and
//! the outputs are here.
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

mod cyclic;
mod deadlines;
mod grounding;
mod intervals;
mod names;
mod naming;
mod simple;
mod terms;
mod timing;
pub use grounding::DomainRule;
pub use timing::Timing;

use crate::records::RtecShape;
use hashbrown::HashSet;
use stgflow_lang::diag::{Diagnostic, Diagnostics, FileId, Span};
use stgflow_lang::ir::Origin;
use stgflow_lang::syntax::ast;
use stgflow_lang::value::Value;

use crate::codes::Code;
use crate::model::{Arg, DeclKind, Entity, Item, ident};
use names::Names;
use terms::{event_atom, fluent_atom, same_value, var};
use timing::{late_events, rtec_early, shift_back};

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
    /// The statically determined fluents kept by their intervals' duration
    /// (`intDurGreater`), by TD predicate, with the duration D in time points: each of
    /// their intervals is derived D time points after it starts.
    pub longer: Vec<(String, u32)>,
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
            longer: Vec::new(),
            domains: Vec::new(),
            diagnostics: Diagnostics::default(),
        }
    }
}

/// The predicate the translation invents for the user's `name` with `suffix` (see
/// `naming`): its final name is given once every rule is written.
pub(crate) fn invented_name(name: &str, suffix: &str) -> String {
    terms::invented(name, suffix)
}

pub fn translate(items: &[Item], file: FileId, options: crate::Options) -> Translation {
    let mut names = Names::default();
    for item in items {
        names.register(item);
    }
    names.check_kinds();
    names.check_inputs();
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
        longer: Vec::new(),
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
    generator.check_longer();
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
    naming::by_arity(&mut out, &names.background);
    naming::resolve(&mut out, names.all());
    out
}

struct Generator<'a> {
    names: &'a Names,
    out: &'a mut Translation,
    file: FileId,
    /// The fluent-value pairs whose grounded instances a rule reads
    /// ([`grounded_pred`](terms::grounded_pred)).
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
    /// The fluents kept by `intDurGreater`, their durations and rules' spans, checked once
    /// every rule is written ([`Generator::check_longer`]).
    longer: Vec<intervals::Longer>,
    /// The statically determined fluents a rule of which was dropped as never computed
    /// (W504): no `#output` of theirs where no rule is left, which would only repeat it.
    never_computed: Vec<String>,
}

impl Generator<'_> {
    /// The rules written so far, in order (one per `self.out.origins`).
    fn rules(&self) -> impl Iterator<Item = &ast::Rule> {
        self.out.program.items.iter().filter_map(|item| match item {
            ast::Item::Rule(rule) => Some(rule),
            _ => None,
        })
    }

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

    /// Emits copies of rules already emitted, each with its original's provenance and
    /// `how` it is read again.
    fn emit_copies(&mut self, copies: Vec<(ast::Rule, Origin)>, how: &str) {
        for (rule, origin) in copies {
            let by = match origin {
                Origin::Generated { by, .. } => by,
                _ => String::new(),
            };
            let span = rule.span;
            self.emit(rule.head, rule.body, span, format!("{by}, {how}"));
        }
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
