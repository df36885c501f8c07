//! AST → IR: resolves predicates and variables, splits off time terms, classifies
//! built-ins, and reports the errors that need a whole rule in view (time variables,
//! future dependencies, arities, ground facts).

use hashbrown::HashMap;

use super::{Atom, Expr, Fact, Literal, Origin, PredId, Program, Rule, Term, VarId};
use crate::diag::Code;
use crate::diag::{Diagnostic, Diagnostics, Span, closest};
use crate::syntax::ast;
use crate::syntax::ast::{ArithOp, CmpOp};
use crate::value::Value;

/// Lowers a parsed program. Items with errors are left out of the result; every error is
/// reported.
pub fn lower(program: &ast::Program) -> (Program, Diagnostics) {
    let (program, diagnostics, _) = lower_traced(program);
    (program, diagnostics)
}

/// [`lower`], and for each rule of the program the index, among the AST's rules, of the
/// rule it was lowered from (a `#count` lowers to several; a rule with errors to none).
pub fn lower_traced(program: &ast::Program) -> (Program, Diagnostics, Vec<usize>) {
    let mut lowering = Lowering::default();
    let mut traced = Vec::new();
    let rules = program
        .items
        .iter()
        .filter(|item| matches!(item, ast::Item::Rule(_)));
    let mut from = (0..).zip(rules).map(|(i, _)| i);
    for item in &program.items {
        match item {
            ast::Item::Rule(rule) if rule.body.iter().any(is_count) => {
                let at = from.next().unwrap_or_default();
                for (piece, count) in lowering.expand_counts(rule) {
                    if let Some(rule) = lowering.rule(&piece, count.as_ref()) {
                        lowering.program.rules.push(rule);
                        traced.push(at);
                    } else {
                        lowering.rejected.insert(piece.head.predicate.name.clone());
                    }
                }
            }
            ast::Item::Rule(rule) => {
                let at = from.next().unwrap_or_default();
                if let Some(lowered) = lowering.rule(rule, None) {
                    lowering.program.rules.push(lowered);
                    traced.push(at);
                } else {
                    lowering.rejected.insert(rule.head.predicate.name.clone());
                }
            }
            ast::Item::Fact(atom) => {
                if let Some(fact) = lowering.fact(atom) {
                    lowering.program.facts.push(fact);
                }
            }
            ast::Item::Output(names, _) => lowering.outputs.extend(names.iter().cloned()),
        }
    }
    lowering.resolve_outputs();
    let hidden = std::mem::take(&mut lowering.hidden);
    lowering.program.hidden = (hidden.iter())
        .filter_map(|name| lowering.pred_ids.get(name).copied())
        .collect();
    (lowering.program, lowering.diagnostics, traced)
}

#[derive(Default)]
struct Lowering {
    program: Program,
    diagnostics: Diagnostics,
    outputs: Vec<ast::Ident>,
    /// Predicate ids by name ([`Program::pred_id`] is a linear scan: quadratic on large
    /// programs).
    pred_ids: HashMap<String, PredId>,
    /// `#count` literals lowered so far (numbers the predicates they make).
    counts: usize,
    /// The predicates the counts made, by name.
    hidden: Vec<String>,
    /// The heads of rules that did not lower: their errors say what is wrong, so
    /// `#output` naming them is not an unknown predicate as well.
    rejected: std::collections::HashSet<String>,
}

/// What a piece of a rule with `#count` counts, when it is the counting rule itself: the
/// result variable and the counted ones.
type CountSpec = (ast::Ident, Vec<ast::Ident>);

fn is_count(literal: &ast::Literal) -> bool {
    matches!(literal, ast::Literal::Count(_))
}

/// The variables of `literals` in order of first appearance (`_` left out).
fn literal_vars<'a>(literals: impl IntoIterator<Item = &'a ast::Literal>) -> Vec<&'a ast::Ident> {
    fn add<'a>(ident: &'a ast::Ident, out: &mut Vec<&'a ast::Ident>) {
        if ident.name != "_" && !out.iter().any(|v| v.name == ident.name) {
            out.push(ident);
        }
    }
    fn expr_vars<'a>(expr: &'a ast::Expr, out: &mut Vec<&'a ast::Ident>) {
        match expr {
            ast::Expr::Var(ident) => add(ident, out),
            ast::Expr::Const(..) => {}
            ast::Expr::Binary(_, lhs, rhs, _) => {
                expr_vars(lhs, out);
                expr_vars(rhs, out);
            }
            ast::Expr::Call(_, args, _) => args.iter().for_each(|a| expr_vars(a, out)),
        }
    }
    let mut out = Vec::new();
    for literal in literals {
        match literal {
            ast::Literal::Positive(atom) | ast::Literal::Negative(atom, _) => {
                atom.args.iter().for_each(|a| expr_vars(a, &mut out));
            }
            ast::Literal::Builtin(b) => {
                expr_vars(&b.lhs, &mut out);
                expr_vars(&b.rhs, &mut out);
            }
            ast::Literal::Count(count) => {
                add(&count.result, &mut out);
                for v in literal_vars(&count.body) {
                    add(v, &mut out);
                }
            }
        }
    }
    out
}

/// Per-rule state: variable ids and the time variable.
struct RuleScope<'a> {
    time_var: &'a str,
    vars: Vec<String>,
    ids: HashMap<String, VarId>,
}

impl RuleScope<'_> {
    fn var(&mut self, name: &str) -> VarId {
        if let Some(&id) = self.ids.get(name) {
            return id;
        }
        self.vars.push(name.to_owned());
        self.ids.insert(name.to_owned(), self.vars.len() - 1);
        self.vars.len() - 1
    }
}

/// What the last argument of an atom says about time.
enum TimeTerm<'a> {
    /// `V`, `V-k` or `V+k` (signed offset: positive means the past).
    Var(&'a ast::Ident, i128),
    Other(Span),
}

fn time_term(atom: &ast::Atom) -> Option<TimeTerm<'_>> {
    let last = atom.args.last()?;
    Some(match last {
        ast::Expr::Var(ident) => TimeTerm::Var(ident, 0),
        ast::Expr::Binary(op @ (ArithOp::Sub | ArithOp::Add), lhs, rhs, span) => {
            match (&**lhs, &**rhs) {
                (ast::Expr::Var(ident), ast::Expr::Const(Value::Int(k), _)) => {
                    let k = i128::from(*k);
                    TimeTerm::Var(ident, if *op == ArithOp::Sub { k } else { -k })
                }
                _ => TimeTerm::Other(*span),
            }
        }
        other => TimeTerm::Other(other.span()),
    })
}

impl Lowering {
    fn error(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic);
    }

    /// A rule with `#count` literals as rules without: each count becomes a counting rule
    /// `h__countK(G…, N, T) :- N = #count { V… : body }` over the variables G it shares
    /// with the rest of the rule, and the rule reads that predicate in its place. Where
    /// the rest of the rule's positive atoms bind every G, a count over nothing is 0: the
    /// rule is written a second time with `not h__anyK(G…, T), N = 0` instead, and
    /// `h__anyK(G…, T) :- body` says where there is something to count. Where they do not
    /// bind them all, the count's own atoms bind them and a count is never 0. Both
    /// predicates are hidden from the output.
    fn expand_counts(&mut self, rule: &ast::Rule) -> Vec<(ast::Rule, Option<CountSpec>)> {
        let Some(TimeTerm::Var(time, _)) = time_term(&rule.head) else {
            // The head's own errors are reported when the rule is lowered.
            return vec![(rule.clone(), None)];
        };
        let time = ast::Expr::Var(time.clone());
        let mut pieces = Vec::new();
        // The rule's bodies so far (one, then one more per count that may be 0).
        let mut bodies: Vec<Vec<ast::Literal>> = vec![Vec::new()];
        let rest: Vec<&ast::Literal> = rule.body.iter().filter(|l| !is_count(l)).collect();
        for literal in &rule.body {
            let ast::Literal::Count(count) = literal else {
                bodies.iter_mut().for_each(|b| b.push(literal.clone()));
                continue;
            };
            // What the rest of the rule binds: its other literals (of another count, only
            // the result: its counted and inner variables are its own) and its head.
            let mut outside: Vec<&ast::Ident> = literal_vars(rest.iter().copied());
            for other in &rule.body {
                if let ast::Literal::Count(other) = other {
                    if !std::ptr::eq(other, count) {
                        outside.push(&other.result);
                    }
                }
            }
            for arg in &rule.head.args {
                if let ast::Expr::Var(v) = arg {
                    if v.name != "_" && !outside.iter().any(|o| o.name == v.name) {
                        outside.push(v);
                    }
                }
            }
            let inside = literal_vars(&count.body);
            let is_outside = |name: &str| outside.iter().any(|o| o.name == name);
            let mut ok = true;
            for v in &count.counted {
                if is_outside(&v.name) {
                    ok = false;
                    self.error(
                        Diagnostic::error(Code::E002, format!("counted variable `{}` also occurs outside the `#count`", v.name))
                            .with_label(v.span, "counted here")
                            .with_note("the counted variables are the count's own: each value the count's literals give them is counted once")
                            .with_help("rename it inside the count, or count another variable"),
                    );
                } else if !inside.iter().any(|i| i.name == v.name) {
                    ok = false;
                    self.error(
                        Diagnostic::error(
                            Code::E002,
                            format!(
                                "counted variable `{}` does not occur in the count's literals",
                                v.name
                            ),
                        )
                        .with_label(v.span, "nothing binds it"),
                    );
                }
            }
            if inside.iter().any(|i| i.name == count.result.name) {
                ok = false;
                self.error(
                    Diagnostic::error(
                        Code::E002,
                        format!(
                            "`{}` is the count's result and also one of its literals' variables",
                            count.result.name
                        ),
                    )
                    .with_label(count.result.span, "the result"),
                );
            }
            if !ok {
                return Vec::new();
            }
            let group: Vec<ast::Expr> = inside
                .iter()
                .filter(|v| v.name != time_name(&time) && is_outside(&v.name))
                .map(|v| ast::Expr::Var((*v).clone()))
                .collect();
            // The count is taken on its own, so what it shares must be bound inside it.
            let positive = literal_vars(
                (count.body.iter()).filter(|l| matches!(l, ast::Literal::Positive(_))),
            );
            let unbound: Vec<&ast::Ident> = (group.iter())
                .filter_map(|g| match g {
                    ast::Expr::Var(v) if !positive.iter().any(|p| p.name == v.name) => Some(v),
                    _ => None,
                })
                .collect();
            if !unbound.is_empty() {
                for v in unbound {
                    self.error(
                        Diagnostic::error(
                            Code::E003,
                            format!(
                                "`{}` is shared with the rest of the rule, but no positive atom of the `#count` binds it",
                                v.name
                            ),
                        )
                        .with_label(v.span, "only read here")
                        .with_note("a count is taken over what its own atoms give; the variables it shares with the rule group it")
                        .with_help(format!("add an atom that binds `{}` inside the count", v.name)),
                    );
                }
                return Vec::new();
            }
            self.counts += 1;
            let head_name = &rule.head.predicate.name;
            let atom = |suffix: &str, extra: Option<&ast::Ident>| {
                let mut args = group.clone();
                args.extend(extra.map(|r| ast::Expr::Var(r.clone())));
                args.push(time.clone());
                ast::Atom {
                    predicate: ast::Ident {
                        name: format!("{head_name}__{suffix}{}", self.counts),
                        span: count.span,
                    },
                    args,
                    span: count.span,
                }
            };
            let counting = atom("count", Some(&count.result));
            let any = atom("any", None);
            pieces.push((
                ast::Rule {
                    head: counting.clone(),
                    body: count.body.clone(),
                    span: count.span,
                },
                Some((count.result.clone(), count.counted.clone())),
            ));
            let bound_outside = literal_vars(
                rest.iter()
                    .copied()
                    .filter(|l| matches!(l, ast::Literal::Positive(_))),
            );
            let may_be_zero = group.iter().all(|g| match g {
                ast::Expr::Var(v) => bound_outside.iter().any(|b| b.name == v.name),
                _ => false,
            });
            let mut zero_bodies = Vec::new();
            if may_be_zero {
                pieces.push((
                    ast::Rule {
                        head: any.clone(),
                        body: count.body.clone(),
                        span: count.span,
                    },
                    None,
                ));
                for body in &bodies {
                    let mut zero = body.clone();
                    zero.push(ast::Literal::Negative(any.clone(), count.span));
                    zero.push(ast::Literal::Builtin(ast::Builtin {
                        lhs: ast::Expr::Var(count.result.clone()),
                        op: CmpOp::Eq,
                        rhs: ast::Expr::Const(Value::Int(0), count.span),
                        span: count.span,
                    }));
                    zero_bodies.push(zero);
                }
            }
            bodies
                .iter_mut()
                .for_each(|b| b.push(ast::Literal::Positive(counting.clone())));
            bodies.extend(zero_bodies);
            self.hidden.push(counting.predicate.name.clone());
            if may_be_zero {
                self.hidden.push(any.predicate.name.clone());
            }
        }
        for body in bodies {
            pieces.push((
                ast::Rule {
                    head: rule.head.clone(),
                    body,
                    span: rule.span,
                },
                None,
            ));
        }
        pieces
    }

    /// Resolves a predicate, checking its arity (time argument included, as the user
    /// counts) against its first use.
    fn predicate(&mut self, ident: &ast::Ident, args: usize, span: Span) -> Option<PredId> {
        let object_arity = args.saturating_sub(1);
        if let Some(&id) = self.pred_ids.get(&ident.name) {
            let known = &self.program.predicates[id];
            if known.arity != object_arity {
                let first = known.span;
                let expected = known.arity + 1;
                self.error(
                    Diagnostic::error(
                        Code::E007,
                        format!(
                            "`{}` is used with {args} argument{} here but with {expected} before",
                            ident.name,
                            plural(args)
                        ),
                    )
                    .with_label(span, format!("{args} argument{}", plural(args)))
                    .with_label(
                        first,
                        format!("first used with {expected} argument{}", plural(expected)),
                    )
                    .with_note("the arity of a predicate counts its time argument"),
                );
                return None;
            }
            return Some(id);
        }
        self.program.predicates.push(super::Predicate {
            name: ident.name.clone(),
            arity: object_arity,
            span,
        });
        let id = self.program.predicates.len() - 1;
        self.pred_ids.insert(ident.name.clone(), id);
        Some(id)
    }

    fn fact(&mut self, atom: &ast::Atom) -> Option<Fact> {
        let pred = self.predicate(&atom.predicate, atom.args.len(), atom.span);
        let (time_arg, object_args) = atom.args.split_last()?;
        let time = match time_arg {
            ast::Expr::Const(Value::Int(t), _) if *t >= 0 => Some(*t as u64),
            ast::Expr::Var(_) => {
                self.error(
                    Diagnostic::error(Code::E010, format!("fact `{atom}` is not ground"))
                        .with_label(time_arg.span(), "a variable in a fact")
                        .with_help("a fact has constants only, its time last; a rule needs `:-` and a body"),
                );
                None
            }
            other => {
                self.error(
                    Diagnostic::error(
                        Code::E010,
                        "the time of a fact must be a non-negative integer",
                    )
                    .with_label(other.span(), format!("`{other}` is not a time point")),
                );
                None
            }
        };
        let mut args = Vec::with_capacity(object_args.len());
        let mut ok = true;
        for arg in object_args {
            match arg {
                ast::Expr::Const(value, _) => args.push(*value),
                other => {
                    ok = false;
                    self.error(
                        Diagnostic::error(Code::E010, format!("fact `{atom}` is not ground"))
                            .with_label(other.span(), "facts take constants only"),
                    );
                }
            }
        }
        Some(Fact {
            pred: pred?,
            args,
            time: time?,
            span: atom.span,
        })
        .filter(|_| ok)
    }

    /// Lowers `rule`; `count` makes it the counting rule of a `#count` (see
    /// [`Lowering::expand_counts`]).
    fn rule(&mut self, rule: &ast::Rule, count: Option<&CountSpec>) -> Option<Rule> {
        let time_var = self.time_variable(rule)?;
        let mut scope = RuleScope {
            time_var: &time_var.name,
            vars: Vec::new(),
            ids: HashMap::new(),
        };
        let mut ok = true;
        let head = self.atom(&rule.head, &mut scope, true);
        ok &= head.is_some();
        let mut body = Vec::new();
        let mut builtins = Vec::new();
        for literal in &rule.body {
            match literal {
                ast::Literal::Positive(atom) => match self.atom(atom, &mut scope, false) {
                    Some(atom) => body.push(Literal::Positive(atom)),
                    None => ok = false,
                },
                ast::Literal::Negative(atom, _) => match self.atom(atom, &mut scope, false) {
                    Some(atom) => body.push(Literal::Negative(atom)),
                    None => ok = false,
                },
                ast::Literal::Builtin(builtin) => {
                    let lhs = self.expr(&builtin.lhs, &mut scope);
                    let rhs = self.expr(&builtin.rhs, &mut scope);
                    match (lhs, rhs) {
                        (Some(lhs), Some(rhs)) => {
                            builtins.push((builtin.op, lhs, rhs, builtin.span))
                        }
                        _ => ok = false,
                    }
                }
                // Taken apart by `expand_counts` before a rule gets here.
                ast::Literal::Count(count) => {
                    ok = false;
                    self.error(
                        Diagnostic::error(Code::E001, "a `#count` is not allowed here")
                            .with_label(count.span, "here"),
                    );
                }
            }
        }
        if !ok {
            return None;
        }
        body.extend(classify_builtins(&body, builtins));
        let count = count.map(|(result, counted)| super::Count {
            result: scope.var(&result.name),
            counted: counted.iter().map(|v| scope.var(&v.name)).collect(),
        });
        Some(Rule {
            head: head?,
            body,
            vars: scope.vars,
            origin: Origin::File(rule.span),
            count,
        })
    }

    /// Finds the rule's time variable (the head's, else the first body atom's) and checks
    /// that every atom uses that one variable as its last argument and nowhere else.
    fn time_variable<'r>(&mut self, rule: &'r ast::Rule) -> Option<&'r ast::Ident> {
        let atoms: Vec<(&ast::Atom, bool)> = std::iter::once((&rule.head, true))
            .chain(rule.body.iter().filter_map(|l| match l {
                ast::Literal::Positive(a) | ast::Literal::Negative(a, _) => Some((a, false)),
                ast::Literal::Builtin(_) | ast::Literal::Count(_) => None,
            }))
            .collect();
        let mut time_var: Option<&ast::Ident> = None;
        let mut ok = true;
        for &(atom, is_head) in &atoms {
            match time_term(atom) {
                Some(TimeTerm::Var(ident, offset)) => {
                    match time_var {
                        None => time_var = Some(ident),
                        Some(first) if first.name != ident.name => {
                            ok = false;
                            self.error(
                                Diagnostic::error(
                                    Code::E004,
                                    format!(
                                        "more than one time variable: `{}` and `{}`",
                                        first.name, ident.name
                                    ),
                                )
                                .with_label(ident.span, format!("time variable `{}`", ident.name))
                                .with_label(first.span, format!("time variable `{}`", first.name))
                                .with_note("a TD rule has exactly one time variable; every atom reads it at an offset `T-k`")
                                .with_help(format!("write `{}` (or `{}-k`) here", first.name, first.name)),
                            );
                        }
                        Some(_) => {}
                    }
                    ok &= self.check_offset(atom, ident, offset, is_head);
                }
                Some(TimeTerm::Other(span)) => {
                    ok = false;
                    let last = atom
                        .args
                        .last()
                        .map(ToString::to_string)
                        .unwrap_or_default();
                    self.error(
                        Diagnostic::error(
                            Code::E009,
                            format!("the last argument of `{}` must be the time variable", atom.predicate.name),
                        )
                        .with_label(span, format!("`{last}` is not `T` or `T-k`"))
                        .with_note("in TD the last argument of every atom is its time: `T` or `T-k` with a constant k ≥ 0")
                        .with_help("put the time last; use a comparison or an assignment for other arithmetic"),
                    );
                }
                None => ok = false,
            }
        }
        let time_var = time_var?;
        for &(atom, _) in &atoms {
            let object_args = atom.args.split_last().map_or(&[][..], |(_, rest)| rest);
            for arg in object_args {
                if let Some(span) = find_var(arg, &time_var.name) {
                    ok = false;
                    self.error(
                        Diagnostic::error(
                            Code::E005,
                            format!(
                                "time variable `{}` must be the last argument of `{}`",
                                time_var.name, atom.predicate.name
                            ),
                        )
                        .with_label(span, "used as an object argument")
                        .with_label(time_var.span, "it is the time variable here")
                        .with_note("the time variable may appear only as the last argument of atoms, or in comparisons and assignments")
                        .with_help("if the time is data, copy it with an assignment: `S = T`"),
                    );
                }
            }
        }
        ok.then_some(time_var)
    }

    fn check_offset(
        &mut self,
        atom: &ast::Atom,
        var: &ast::Ident,
        offset: i128,
        is_head: bool,
    ) -> bool {
        let span = atom.args.last().map_or(atom.span, ast::Expr::span);
        let name = &var.name;
        if is_head && offset != 0 {
            let diagnostic = if offset < 0 {
                let k = -offset;
                Diagnostic::error(
                    Code::E006,
                    format!("future dependency: the head `{}` is derived at `{name}+{k}`", atom.predicate.name),
                )
                .with_label(span, "derives into the future")
                .with_note("TD programs are forward-propagating: a rule derives its head at `T` from facts at `T-k`, k ≥ 0")
                .with_help(format!("derive the head at `{name}` and shift every body atom back by {k}"))
            } else {
                Diagnostic::error(
                    Code::E009,
                    format!(
                        "the head `{}` must be derived at `{name}`, not `{name}-{offset}`",
                        atom.predicate.name
                    ),
                )
                .with_label(span, "derives into the past")
                .with_help(format!(
                    "derive the head at `{name}` and shift every body atom forward by {offset}"
                ))
            };
            self.error(diagnostic);
            return false;
        }
        if offset < 0 {
            let k = -offset;
            self.error(
                Diagnostic::error(
                    Code::E006,
                    format!("future dependency: `{}` is read at `{name}+{k}`", atom.predicate.name),
                )
                .with_label(span, "reads the future")
                .with_note("TD programs are forward-propagating: every body atom is read at `T-k` with k ≥ 0")
                .with_help(format!("derive the head {k} time point{} later instead", plural(k as usize))),
            );
            return false;
        }
        if offset > i128::from(u32::MAX) {
            self.error(
                Diagnostic::error(Code::E009, format!("time offset {offset} is too large"))
                    .with_label(span, "offsets are limited to 2^32 - 1"),
            );
            return false;
        }
        true
    }

    fn atom(&mut self, atom: &ast::Atom, scope: &mut RuleScope<'_>, is_head: bool) -> Option<Atom> {
        let pred = self.predicate(&atom.predicate, atom.args.len(), atom.span);
        let (time_arg, object_args) = atom.args.split_last()?;
        let offset = match time_term_of(time_arg) {
            Some(k) => u32::try_from(k).ok()?,
            None => return None,
        };
        let mut args = Vec::with_capacity(object_args.len());
        let mut ok = true;
        for arg in object_args {
            match arg {
                ast::Expr::Var(ident) if ident.name == "_" => {
                    if is_head {
                        ok = false;
                        self.error(
                            Diagnostic::error(Code::E002, "`_` in a rule head")
                                .with_label(ident.span, "the head needs a value here")
                                .with_help(
                                    "name a variable bound in the body, or write a constant",
                                ),
                        );
                    }
                    args.push(Term::Wildcard);
                }
                ast::Expr::Var(ident) => args.push(Term::Var(scope.var(&ident.name))),
                ast::Expr::Const(value, _) => args.push(Term::Const(*value)),
                ast::Expr::Binary(_, _, _, span) | ast::Expr::Call(_, _, span) => {
                    ok = false;
                    self.error(
                        Diagnostic::error(Code::E011, "arithmetic in an atom argument")
                            .with_label(*span, "compute this in an assignment")
                            .with_help(format!("write `V = {arg}` in the body and use `V` here")),
                    );
                }
            }
        }
        Some(Atom {
            pred: pred?,
            args,
            offset,
            span: atom.span,
        })
        .filter(|_| ok)
    }

    fn expr(&mut self, expr: &ast::Expr, scope: &mut RuleScope<'_>) -> Option<Expr> {
        Some(match expr {
            ast::Expr::Var(ident) if ident.name == "_" => {
                self.error(
                    Diagnostic::error(Code::E003, "`_` in a comparison or assignment")
                        .with_label(ident.span, "needs a named variable"),
                );
                return None;
            }
            ast::Expr::Var(ident) if ident.name == scope.time_var => Expr::Time,
            ast::Expr::Var(ident) => Expr::Var(scope.var(&ident.name)),
            ast::Expr::Const(value, _) => Expr::Const(*value),
            ast::Expr::Binary(op, lhs, rhs, _) => {
                let lhs = self.expr(lhs, scope);
                let rhs = self.expr(rhs, scope);
                Expr::Binary(*op, Box::new(lhs?), Box::new(rhs?))
            }
            ast::Expr::Call(func, args, _) => {
                let args: Vec<Option<Expr>> = args.iter().map(|a| self.expr(a, scope)).collect();
                Expr::Call(*func, args.into_iter().collect::<Option<_>>()?)
            }
        })
    }

    fn resolve_outputs(&mut self) {
        // `#output` always names at least one predicate, so none collected means none given.
        if self.outputs.is_empty() {
            return;
        }
        let mut outputs = Vec::new();
        for ident in std::mem::take(&mut self.outputs) {
            self.program.output_spans.push(ident.span);
            match self.pred_ids.get(&ident.name).copied() {
                Some(pred) => {
                    if !outputs.contains(&pred) {
                        outputs.push(pred);
                    }
                }
                // A rule of it was rejected, with an error that says why.
                None if self.rejected.contains(&ident.name) => {}
                None => {
                    let mut diagnostic = Diagnostic::warning(
                        Code::W001,
                        format!(
                            "`#output {}`: no rule or fact mentions `{}`",
                            ident.name, ident.name
                        ),
                    )
                    .with_label(ident.span, "unknown predicate");
                    if let Some(close) = closest(
                        &ident.name,
                        self.program.predicates.iter().map(|p| p.name.as_str()),
                    ) {
                        diagnostic = diagnostic.with_help(format!("did you mean `{close}`?"));
                    }
                    self.diagnostics.push(diagnostic);
                }
            }
        }
        self.program.outputs = Some(outputs);
    }
}

/// The name of a time variable expression.
fn time_name(time: &ast::Expr) -> &str {
    match time {
        ast::Expr::Var(ident) => &ident.name,
        _ => "",
    }
}

/// The offset of a well-formed time term (already checked by `time_variable`).
fn time_term_of(expr: &ast::Expr) -> Option<i128> {
    match expr {
        ast::Expr::Var(_) => Some(0),
        ast::Expr::Binary(ArithOp::Sub, _, rhs, _) => match &**rhs {
            ast::Expr::Const(Value::Int(k), _) => Some(i128::from(*k)),
            _ => None,
        },
        _ => None,
    }
}

fn find_var(expr: &ast::Expr, name: &str) -> Option<Span> {
    match expr {
        ast::Expr::Var(ident) if ident.name == name => Some(ident.span),
        ast::Expr::Binary(_, lhs, rhs, _) => find_var(lhs, name).or_else(|| find_var(rhs, name)),
        ast::Expr::Call(_, args, _) => args.iter().find_map(|a| find_var(a, name)),
        _ => None,
    }
}

/// Decides which `=` built-ins are assignments: `V = e` (or `e = V`) where `V` is not yet
/// bound and every variable of `e` is. Repeats so that assignments may chain in any order.
fn classify_builtins(body: &[Literal], builtins: Vec<(CmpOp, Expr, Expr, Span)>) -> Vec<Literal> {
    let mut bound: Vec<VarId> = Vec::new();
    for literal in body {
        if let Literal::Positive(atom) = literal {
            bound.extend(atom.args.iter().filter_map(|t| match t {
                Term::Var(v) => Some(*v),
                _ => None,
            }));
        }
    }
    let all_bound = |expr: &Expr, bound: &[VarId]| {
        let mut vars = Vec::new();
        expr.vars(&mut vars);
        vars.iter().all(|v| bound.contains(v))
    };
    let mut pending: Vec<Option<(CmpOp, Expr, Expr, Span)>> =
        builtins.into_iter().map(Some).collect();
    let mut literals = Vec::new();
    loop {
        let mut progress = false;
        for slot in &mut pending {
            let Some((CmpOp::Eq, lhs, rhs, _)) = slot.as_ref() else {
                continue;
            };
            let assignment = match (lhs, rhs) {
                (Expr::Var(v), e) if !bound.contains(v) && all_bound(e, &bound) => {
                    Some((*v, false))
                }
                (e, Expr::Var(v)) if !bound.contains(v) && all_bound(e, &bound) => Some((*v, true)),
                _ => None,
            };
            if let Some((var, from_rhs_var)) = assignment {
                if let Some((_, lhs, rhs, span)) = slot.take() {
                    let expr = if from_rhs_var { lhs } else { rhs };
                    bound.push(var);
                    literals.push(Literal::Assign { var, expr, span });
                    progress = true;
                }
            }
        }
        if !progress {
            break;
        }
    }
    literals.extend(
        pending
            .into_iter()
            .flatten()
            .map(|(op, lhs, rhs, span)| Literal::Compare { op, lhs, rhs, span }),
    );
    literals
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}
