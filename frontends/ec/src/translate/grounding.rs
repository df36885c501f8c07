//! RTEC's background knowledge and grounding, and fluents with values of both kinds.
//!
//! | RTEC | TD |
//! |---|---|
//! | `vehicle(75, bus).` (read by a grounding or a rule) | `vehicle(75, bus, 0).` (at the timeline's first time point) and `vehicle(X1, X2, T) :- vehicle(X1, X2, T-1).`: it holds at every time point |
//! | `dynamicDomain(vehicle(_, _)).` with `grounding(stop_enter(Id, Type, _, _)) :- vehicle(Id, Type).` (an input entity) | `vehicle(Id, Type, T) :- stop_enter(Id, Type, _, _, T).`: the domain grows with the input, and keeps what it had |
//! | `grounding(punctuality(Id, Type)=punctual) :- vehicle(Id, Type).` | `punctuality__grounded(Id, Type, punctual, T) :- vehicle(Id, Type, T).`, made where a rule reads it |
//!
//! What RTEC grounds decides what exists:
//! * a simple fluent with grounding declarations has the values they name (and those its
//!   initiations and `initially` write as constants): an initiation of any other value
//!   (CTM's `internal_temperature=warm`) starts nothing and ends nothing;
//! * `initially(f(_, …)=v)` holds from the first time point at which an instance is
//!   grounded (the timeline's first for background facts, the first appearance in the
//!   input for a dynamic domain);
//! * a `holdsFor` disjunct that binds a head variable by no positive condition
//!   (`complement_all`) ranges over the grounded instances.
//!
//! A fluent whose values are defined by rules of both kinds (CTM's punctuality: `punctual`
//! by initiations, `non_punctual` as its complement), or one with a statically determined
//! value that reads the fluent itself (CAVIAR's `close_34=false`, the complement of
//! `close_34=true`), is a TD predicate per part — `f__simple` for the simple values,
//! `f__v` for each statically determined value v — and `f` is their union: a condition
//! on a constant value reads the part that defines it, one on a variable value reads `f`.
//! So a complement is stratified below what it complements.

use stgflow_lang::diag::{Diagnostic, Span};
use stgflow_lang::syntax::ast;
use stgflow_lang::value::Value;

use super::Generator;
use super::terms::{
    arg_expr, at, atom, event_atom, fluent_atom, grounded_pred, invented, literal, simple_part, var,
};
use crate::codes::Code;
use crate::model::{Arg, Cond, Entity, EventTerm, FluentTerm, GroundCond, IntervalCond, Item};

/// A rule by which a dynamic domain grows with the input: `id(P, T) :- appear(P, T).`
/// RTEC fills the domain for a window from the input entities of the whole window, so
/// a caller that has the input ahead (files) can give each entity from the timeline's
/// start with [`DomainRule::entity`] (`stgflow run --ec-domains input`).
#[derive(Clone, Debug, PartialEq)]
pub struct DomainRule {
    /// The domain's atom, its time last.
    pub head: ast::Atom,
    /// The input entity's atom, its time last.
    pub source: ast::Atom,
}

impl DomainRule {
    /// The domain's name.
    pub fn domain(&self) -> &str {
        &self.head.predicate.name
    }

    /// The input predicate the domain is read from.
    pub fn input(&self) -> &str {
        &self.source.predicate.name
    }

    /// [`DomainRule::entity`] into `out` (emptied first): whether the fact adds one.
    pub fn entity_into(&self, args: &[Value], out: &mut Vec<Value>) -> bool {
        out.clear();
        let Some((_, pattern)) = self.source.args.split_last() else {
            return false;
        };
        let Some((_, head)) = self.head.args.split_last() else {
            return false;
        };
        if pattern.len() != args.len() {
            return false;
        }
        let bound = |name: &str| {
            pattern
                .iter()
                .zip(args)
                .find(|(expr, _)| matches!(expr, ast::Expr::Var(v) if v.name == name))
                .map(|(_, value)| *value)
        };
        for (expr, value) in pattern.iter().zip(args) {
            match expr {
                ast::Expr::Const(c, _) if c == value => {}
                ast::Expr::Var(name) if name.name == "_" => {}
                // A variable given twice must be given the same value.
                ast::Expr::Var(name) if bound(&name.name) == Some(*value) => {}
                _ => return false,
            }
        }
        for expr in head {
            match expr {
                ast::Expr::Const(c, _) => out.push(*c),
                ast::Expr::Var(name) if name.name == "_" => return false,
                ast::Expr::Var(name) => match bound(&name.name) {
                    Some(value) => out.push(value),
                    None => return false,
                },
                ast::Expr::Binary(..) | ast::Expr::Call(..) => return false,
            }
        }
        true
    }

    /// The domain entity that an input fact of [`DomainRule::input`] with `args` (its
    /// time left out) adds, if it matches the source's constants and repeated variables.
    pub fn entity(&self, args: &[Value]) -> Option<Vec<Value>> {
        let mut entity = Vec::new();
        self.entity_into(args, &mut entity).then_some(entity)
    }
}

impl Generator<'_> {
    /// Background facts that a grounding or a domain reads, the domains that grow with
    /// the input, and the grounded instances that rules read (see the module docs);
    /// W507 for background facts nothing reads.
    pub(super) fn background(&mut self, items: &[Item]) {
        let dynamic: Vec<(&str, usize)> = items
            .iter()
            .filter_map(|item| match item {
                Item::DynamicDomain(domain, _) => {
                    Some((domain.name.text.as_str(), domain.args.len()))
                }
                _ => None,
            })
            .collect();
        let mut read: Vec<(String, usize, Span)> = Vec::new();
        let mut note_read = |name: &str, arity: usize, span: Span| {
            if !read.iter().any(|(n, a, _)| n == name && *a == arity) {
                read.push((name.to_owned(), arity, span));
            }
        };
        for item in items {
            match item {
                Item::Grounding { body, .. }
                | Item::BackgroundRule { body, .. }
                | Item::Fi { conds: body, .. } => {
                    for cond in body {
                        if let GroundCond::Atom(a) = cond {
                            note_read(&a.name.text, a.args.len(), a.name.span);
                        }
                    }
                }
                Item::Initiated(rule) | Item::Terminated(rule) | Item::HoldsAt(rule) => {
                    note_conds(&rule.body, &mut note_read)
                }
                Item::Happens(rule) => note_conds(&rule.body, &mut note_read),
                Item::HoldsFor(rule) => {
                    for cond in &rule.body {
                        if let IntervalCond::Background { atom: a, .. } = cond {
                            note_read(&a.name.text, a.args.len(), a.name.span);
                        }
                    }
                }
                Item::DynamicDomain(domain, _) => {
                    note_read(&domain.name.text, domain.args.len(), domain.name.span)
                }
                _ => {}
            }
        }
        let mut unread: Vec<(String, usize, Span, usize)> = Vec::new();
        for item in items {
            let Item::Background { name, args, span } = item else {
                continue;
            };
            if read
                .iter()
                .any(|(n, a, _)| *n == name.text && *a == args.len())
            {
                if args.iter().any(|a| matches!(a, Arg::Var(_))) {
                    // A pattern: its conditions are inlined (`Names::pattern`).
                    continue;
                }
                let args = args.iter().map(arg_expr).collect();
                let start = i64::try_from(self.start).unwrap_or(i64::MAX);
                let time = ast::Expr::Const(Value::Int(start), *span);
                let fact = atom(name.text.clone(), args, time, name.span);
                self.out.program.items.push(ast::Item::Fact(fact));
                continue;
            }
            match unread
                .iter_mut()
                .find(|(n, a, _, _)| *n == name.text && *a == args.len())
            {
                Some((_, _, _, count)) => *count += 1,
                None => unread.push((name.text.clone(), args.len(), name.span, 1)),
            }
        }
        for (name, arity, span, count) in unread {
            let facts = if count == 1 { "fact" } else { "facts" };
            self.out.diagnostics.push(
                Diagnostic::warning(
                    Code::W507,
                    format!("background knowledge `{name}/{arity}` ({count} {facts}) is not read"),
                )
                .with_label(span, "a time-independent fact")
                .with_note("background facts are read by RTEC's grounding declarations; no grounding reads this one, and as a condition of a rule they are not supported yet (E506)"),
            );
        }
        // What holds from where it is given on: facts and dynamic domains (a rule's head
        // is derived at every time point from them).
        let given = |name: &str, arity: usize| {
            dynamic.iter().any(|(n, a)| *n == name && *a == arity)
                || items.iter().any(|item| {
                    matches!(item, Item::Background { name: n, args, .. }
                        if n.text == name && args.len() == arity
                            && !args.iter().any(|a| matches!(a, Arg::Var(_))))
                })
        };
        for (name, arity, span) in read.iter().filter(|(n, a, _)| given(n, *a)) {
            let xs: Vec<ast::Expr> = (1..=*arity).map(|i| var(&format!("X{i}"), *span)).collect();
            let time = var("T", *span);
            self.emit(
                atom(name.clone(), xs.clone(), time.clone(), *span),
                vec![ast::Literal::Positive(atom(
                    name.clone(),
                    xs,
                    at(&time, 1, *span),
                    *span,
                ))],
                *span,
                format!("RTEC background knowledge and domains hold from where they are given on: `{name}`"),
            );
        }
        for item in items {
            let Item::Grounding { entity, body, span } = item else {
                continue;
            };
            if !self.is_input(entity, items) {
                continue;
            }
            for cond in body {
                let GroundCond::Atom(domain) = cond else {
                    continue;
                };
                let is_dynamic = dynamic
                    .iter()
                    .any(|(n, a)| *n == domain.name.text && *a == domain.args.len());
                if is_dynamic && bound_by(domain, entity) {
                    let time = var("T", *span);
                    let head = event_atom(domain, time.clone());
                    let source = match entity {
                        Entity::Event(event) => event_atom(event, time),
                        Entity::Fluent(fluent) => fluent_atom(fluent, "", time),
                    };
                    self.out.domains.push(DomainRule {
                        head: head.clone(),
                        source: source.clone(),
                    });
                    self.emit(
                        head,
                        vec![ast::Literal::Positive(source)],
                        *span,
                        format!(
                            "RTEC dynamic domain `{}` from its input entity `{}`",
                            domain.name.text,
                            entity.name().text
                        ),
                    );
                }
            }
        }
        let needed = std::mem::take(&mut self.grounded_read);
        for item in items {
            let Item::Grounding {
                entity: Entity::Fluent(fluent),
                body,
                span,
            } = item
            else {
                continue;
            };
            let Arg::Const(value, _) = &fluent.value else {
                continue;
            };
            if !needed.contains(&(fluent.name.text.clone(), *value)) {
                continue;
            }
            let time = var("T", *span);
            let conds = conds(body, &time);
            self.emit(
                grounded_atom(fluent, time),
                conds,
                *span,
                format!("RTEC grounding of `{}={value}`", fluent.name.text),
            );
        }
    }

    /// Whether `entity` comes from the input: an event no rule derives, a fluent no rule
    /// defines.
    fn is_input(&self, entity: &Entity, items: &[Item]) -> bool {
        match entity {
            Entity::Event(event) => !items.iter().any(|item| {
                matches!(item, Item::Happens(rule) if rule.head.name.text == event.name.text)
            }),
            Entity::Fluent(fluent) => self
                .names
                .fluents
                .get(&fluent.name.text)
                .is_some_and(|info| info.defined.is_none()),
        }
    }

    /// `f__grounded(args…, v, time)`: the grounded instances of `fluent` = v where a
    /// grounding declaration names that pair, else those of the fluent's first grounded
    /// value (CTM grounds `passenger_density(Id, Type)=high` only, and its `initially`
    /// gives `=low` to the same instances); marks the pair read.
    pub(super) fn grounded(&mut self, fluent: &FluentTerm, time: ast::Expr) -> Option<ast::Atom> {
        let info = self.names.fluents.get(&fluent.name.text)?;
        let value = match &fluent.value {
            Arg::Const(value, _) if info.grounded.contains(value) => *value,
            _ => *info.grounded.first()?,
        };
        let pair = (fluent.name.text.clone(), value);
        if !self.grounded_read.contains(&pair) {
            self.grounded_read.push(pair);
        }
        let mut instance = fluent.clone();
        instance.value = Arg::Const(value, fluent.value.span());
        Some(grounded_atom(&instance, time))
    }

    /// `f__grounded(args…, v, time)` where a grounding declaration names `fluent` = v
    /// itself (a constant v); marks the pair read.
    pub(super) fn grounded_exactly(
        &mut self,
        fluent: &FluentTerm,
        time: ast::Expr,
    ) -> Option<ast::Atom> {
        let Arg::Const(value, _) = &fluent.value else {
            return None;
        };
        let info = self.names.fluents.get(&fluent.name.text)?;
        if !info.grounded.contains(value) {
            return None;
        }
        self.grounded(fluent, time)
    }

    /// Splits every fluent with values of both kinds, or with a statically determined
    /// value whose rules read the fluent (CAVIAR's `close_34=false`, the complement of
    /// `close_34=true`), into its parts and their union (see the module docs). Runs on
    /// the translated rules: a head or a condition on a constant value goes to the part
    /// that defines the value, a condition on a variable value stays on the union, a
    /// head with a variable value is simple.
    pub(super) fn split(&mut self) {
        let names = self.names;
        let reads_itself = |name: &str, statics: &[Value]| {
            self.out.program.items.iter().any(|item| match item {
                ast::Item::Rule(rule) => {
                    rule.head.predicate.name == name
                        && matches!(rule.head.args.iter().rev().nth(1),
                            Some(ast::Expr::Const(v, _)) if statics.contains(v))
                        && (rule.body.iter().flat_map(ast::Literal::atoms))
                            .any(|a| a.predicate.name == name)
                }
                _ => false,
            })
        };
        let split: Vec<(&str, &[Value], usize, Span, bool)> = names
            .fluent_order
            .iter()
            .filter_map(|name| {
                let info = names.fluents.get(name)?;
                let statics = info.statics.values.as_slice();
                let needed = !statics.is_empty()
                    && !info.statics.variable
                    && (info.mixed() || reads_itself(name, statics));
                needed.then(|| {
                    let span = info.defined.map_or(info.first, |d| d.1);
                    let simple = info.simple.first.is_some();
                    (name.as_str(), statics, info.arity, span, simple)
                })
            })
            .collect();
        if split.is_empty() {
            return;
        }
        let part = |atom: &mut ast::Atom, head: bool| {
            let Some(&(name, statics, arity, _, _)) =
                split.iter().find(|(n, ..)| *n == atom.predicate.name)
            else {
                return;
            };
            match atom.args.get(arity) {
                Some(ast::Expr::Const(value, _)) if statics.contains(value) => {
                    atom.predicate.name = static_part(name, statics, *value);
                }
                Some(ast::Expr::Const(..)) => atom.predicate.name = simple_part(name),
                _ if head => atom.predicate.name = simple_part(name),
                _ => {}
            }
        };
        for item in &mut self.out.program.items {
            if let ast::Item::Rule(rule) = item {
                part(&mut rule.head, true);
                for atom in rule.body.iter_mut().flat_map(ast::Literal::atoms_mut) {
                    part(atom, false);
                }
            }
        }
        for (name, statics, arity, span, simple) in split {
            let mut args: Vec<ast::Expr> =
                (1..=arity).map(|i| var(&format!("X{i}"), span)).collect();
            args.push(var("V", span));
            let time = var("T", span);
            let parts = simple
                .then(|| simple_part(name))
                .into_iter()
                .chain(statics.iter().map(|v| static_part(name, statics, *v)));
            for from in parts {
                self.emit(
                    atom(name.to_owned(), args.clone(), time.clone(), span),
                    vec![literal(
                        false,
                        atom(from, args.clone(), time.clone(), span),
                        span,
                    )],
                    span,
                    format!("`{name}`: the union of the predicates of its values"),
                );
            }
        }
    }
}

/// Notes the background predicates that `body` reads.
fn note_conds(body: &[Cond], note_read: &mut impl FnMut(&str, usize, Span)) {
    for cond in body {
        if let Cond::Background { atom: a, .. } = cond {
            note_read(&a.name.text, a.args.len(), a.name.span);
        }
    }
}

/// The TD literals of background conditions, read at `time`.
pub(super) fn conds(body: &[GroundCond], time: &ast::Expr) -> Vec<ast::Literal> {
    body.iter()
        .map(|cond| match cond {
            GroundCond::Atom(a) => ast::Literal::Positive(event_atom(a, time.clone())),
            GroundCond::Builtin(builtin) => ast::Literal::Builtin(builtin.clone()),
        })
        .collect()
}

/// Whether every variable of `domain`'s arguments is an argument of `entity`.
fn bound_by(domain: &EventTerm, entity: &Entity) -> bool {
    let args: Vec<&Arg> = match entity {
        Entity::Event(event) => event.args.iter().collect(),
        Entity::Fluent(fluent) => fluent.args.iter().chain([&fluent.value]).collect(),
    };
    domain.args.iter().all(|arg| match arg {
        Arg::Var(name) => {
            name.text != "_"
                && args
                    .iter()
                    .any(|a| matches!(a, Arg::Var(other) if other.text == name.text))
        }
        Arg::Const(..) => true,
    })
}

/// `f__grounded(args…, value, time)`.
fn grounded_atom(fluent: &FluentTerm, time: ast::Expr) -> ast::Atom {
    let mut args: Vec<ast::Expr> = fluent.args.iter().map(arg_expr).collect();
    args.push(arg_expr(&fluent.value));
    atom(grounded_pred(&fluent.name.text), args, time, fluent.span)
}

/// The TD predicate of a split fluent's statically determined value `value` (one of
/// `statics`): `f__v` for a plain symbol v, else by its place.
fn static_part(name: &str, statics: &[Value], value: Value) -> String {
    let text = value.to_string();
    let plain = text
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
    if plain && !text.is_empty() {
        return invented(name, &format!("__{text}"));
    }
    let place = statics.iter().position(|v| *v == value).unwrap_or(0);
    invented(name, &format!("__value{place}"))
}

impl super::Names {
    /// Whether every instance of `atom` (a positive condition of a rule for `head`) is a
    /// grounded instance of `head`'s pair, so that the rule needs no grounded condition:
    /// `atom`'s pair is itself restricted to its grounding (a defined pair with one, or an
    /// input entity whose grounding reads only dynamic domains, which its instances
    /// extend), and that grounding is `head`'s, its arguments mapped through the rule's
    /// variables (CTM: every pair is grounded by `vehicle(Id, Type)`). Groundings with
    /// comparisons or variables of their own are not compared.
    pub(super) fn implies_grounding(&self, atom: &FluentTerm, head: &FluentTerm) -> bool {
        let (Some(of_atom), Some(of_head)) = (self.only_grounding(atom), self.only_grounding(head))
        else {
            return false;
        };
        let restricted = match self.fluents.get(&atom.name.text) {
            Some(info) if info.defined.is_some() => true,
            Some(_) => of_atom.1.iter().all(|cond| {
                matches!(cond, GroundCond::Atom(a)
                    if self.dynamic.iter().any(|(n, k)| *n == a.name.text && *k == a.args.len()))
            }),
            None => false,
        };
        if !restricted {
            return false;
        }
        // Both bodies with each variable replaced by the rule variable at its place in
        // the entity it grounds.
        let in_rule = |(entity, body): &(Entity, Vec<GroundCond>), used: &FluentTerm| {
            let Entity::Fluent(declared) = entity else {
                return None;
            };
            let mut conds = Vec::new();
            for cond in body {
                let GroundCond::Atom(a) = cond else {
                    return None;
                };
                let args = a
                    .args
                    .iter()
                    .map(|arg| match arg {
                        Arg::Var(v) => {
                            let at = declared
                                .args
                                .iter()
                                .position(|d| matches!(d, Arg::Var(w) if w.text == v.text))?;
                            match used.args.get(at)? {
                                Arg::Var(name) if name.text != "_" => Some(name.text.clone()),
                                _ => None,
                            }
                        }
                        Arg::Const(c, _) => Some(c.to_string()),
                    })
                    .collect::<Option<Vec<String>>>()?;
                conds.push(format!("{}({})", a.name.text, args.join(",")));
            }
            conds.sort();
            Some(conds)
        };
        match (in_rule(of_atom, atom), in_rule(of_head, head)) {
            (Some(a), Some(h)) => a == h,
            _ => false,
        }
    }

    /// The one grounding declaration of `fluent`'s pair (a constant value), if it has
    /// exactly one.
    fn only_grounding(&self, fluent: &FluentTerm) -> Option<&(Entity, Vec<GroundCond>)> {
        let Arg::Const(value, _) = &fluent.value else {
            return None;
        };
        let mut found = self.groundings.iter().filter(|(entity, _)| {
            matches!(entity, Entity::Fluent(f)
                if f.name.text == fluent.name.text
                    && matches!(&f.value, Arg::Const(v, _) if v == value))
        });
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The domain rules of a description, by the input each reads.
    fn domain_rules(text: &str) -> Vec<DomainRule> {
        let ec = crate::compile_str("d.prolog", text);
        assert!(!ec.compiled.has_errors(), "{:?}", ec.compiled.diagnostics);
        ec.domains
    }

    #[test]
    fn a_domain_entity_is_what_the_input_fact_binds() {
        let rules = domain_rules(
            "initiatedAt(f(A)=true, T) :- happensAt(pair(A, B, go), T).\n\
             initiatedAt(f(A)=true, T) :- happensAt(self(A, A), T).\n\
             dynamicDomain(link(_, _)).\n\
             dynamicDomain(node(_)).\n\
             grounding(pair(A, B, go)) :- link(B, A).\n\
             grounding(self(A, A)) :- node(A).\n",
        );
        let rule = |input: &str| {
            rules
                .iter()
                .find(|r| r.input() == input)
                .unwrap_or_else(|| panic!("no rule reads {input}: {rules:?}"))
        };
        let (a, b, go, stop) = (
            Value::sym("a"),
            Value::sym("b"),
            Value::sym("go"),
            Value::sym("stop"),
        );
        let pair = rule("pair");
        assert_eq!(pair.domain(), "link");
        assert_eq!(pair.entity(&[a, b, go]), Some(vec![b, a]));
        // A constant of the entity must match, and the arity too.
        assert_eq!(pair.entity(&[a, b, stop]), None);
        assert_eq!(pair.entity(&[a, b]), None);
        // A variable written twice binds one value.
        let repeated = rule("self");
        assert_eq!(repeated.domain(), "node");
        assert_eq!(repeated.entity(&[a, a]), Some(vec![a]));
        assert_eq!(repeated.entity(&[a, b]), None);
    }
}

#[cfg(test)]
mod pattern_tests {
    /// The one error of compiling `text`: its code and message.
    fn only_error(text: &str) -> (String, String) {
        let ec = crate::compile_str("p.prolog", text);
        let errors: Vec<(String, String)> = (ec.compiled.diagnostics.iter())
            .filter(|d| d.is_error())
            .map(|d| (d.code.to_owned(), d.message.clone()))
            .collect();
        assert_eq!(errors.len(), 1, "{errors:?}");
        errors[0].clone()
    }

    #[test]
    fn a_fact_with_variables_is_inlined_where_it_is_the_only_clause_of_its_predicate() {
        let rules = "initiatedAt(paid(C)=true, T) :- happensAt(pay(C, G, P), T), price(G, P).\n\
                     initiatedAt(odd(C)=true, T) :- happensAt(pay(C, G, P), T), \\+ price(G, P).\n";
        let ec = crate::compile_str("p.prolog", &format!("{rules}price(_, 10).\n"));
        assert!(!ec.compiled.has_errors(), "{:?}", ec.compiled.diagnostics);
        let program = &ec.compiled.program;
        let translated: Vec<String> = (program.rules.iter())
            .map(|rule| program.display_rule(rule).to_string())
            .filter(|rule| rule.contains("pay("))
            .collect();
        let has = |head: &str, comparison: &str| {
            (translated.iter()).any(|r| r.starts_with(head) && r.contains(comparison))
        };
        assert_eq!(translated.len(), 2, "{translated:?}");
        assert!(has("paid_i(", "P = 10"), "{translated:?}");
        assert!(has("odd_i(", "P != 10"), "{translated:?}");
        // With another fact it is a disjunction.
        let (code, message) = only_error(&format!("{rules}price(_, 10).\nprice(book, 12).\n"));
        assert_eq!(code, "E506");
        assert!(
            message.contains("`price/2` is given by a fact with variables and by other clauses"),
            "{message}"
        );
        // The negation of two comparisons is a disjunction too.
        let (code, message) = only_error(
            "initiatedAt(odd(C)=true, T) :- happensAt(pay(C, G, P), T), \\+ price(G, G, P).\n\
             price(X, X, 10).\n",
        );
        assert_eq!(code, "E506");
        assert!(
            message.contains("negates a fact with variables that makes several comparisons"),
            "{message}"
        );
    }
}
