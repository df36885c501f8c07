//! Simple fluents: initiations and terminations (schema 10), `initially`, and the rules
//! written once per fluent: inertia and value incompatibility (rules 14 to 16), and the
//! `start`/`end` events of every fluent read so.

use stgflow_lang::diag::{Diagnostic, Span};
use stgflow_lang::syntax::ast;
use stgflow_lang::value::Value;

use super::names::Kind;
use super::terms::{
    arg_expr, at, atom, expr_vars, fluent_atom, fresh, invented, literal, var, vars_of,
};
use super::{Generator, Timing};
use crate::codes::Code;
use crate::model::{Arg, Cond, FluentTerm, Happening, TimeRule};
use crate::syntax::Name;

impl Generator<'_> {
    /// One initiation or termination rule, by Algorithm 3's cases (simple fluent, delayed
    /// effect, the value incompatibility it implies). Over 100 lines: one case per
    /// shape, each a few lines, read best beside the others.
    /// `early`: a rule [`rtec_early`](super::timing::rtec_early) made, whose effect is
    /// immediate (`f_ie`/`f_te`) and whose other conditions, and the instances that bind its
    /// head, are read one time point back.
    pub(super) fn effect(&mut self, rule: &TimeRule, initiated: bool, early: bool) {
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

    pub(super) fn initially(&mut self, fluent: &FluentTerm, span: Span) {
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
    pub(super) fn per_fluent(&mut self) {
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
                let name = match suffix {
                    "" => name.clone(),
                    _ => invented(name, suffix),
                };
                atom(name, args, at(&time, k, span), span)
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
                // as RTEC's unit tests do). The values its rules' heads name are declared
                // all the same, and break any value (maritime's `movingSpeed=below`, whose
                // terminations name `movingSpeed(V)=_Status`, ends `movingSpeed=normal`).
                let declared_by_heads =
                    rtec && info.grounded_any && info.grounded.is_empty() && !info.declared_values;
                // The values whose initiation breaks another, where not every value does.
                let breaking: Option<Vec<ast::Expr>> = declared_by_heads.then(|| {
                    (info.simple.values.iter())
                        .map(|w| ast::Expr::Const(*w, span))
                        .collect()
                });
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
                    let mut from_initiation = start("_i", "_t", 1);
                    if rtec && early_stop {
                        // A termination at the same time point that takes effect at once
                        // (an `end` at RTEC's time, known a point later) stops it too.
                        from_initiation.push(literal(true, instance(v.clone(), "_te", 0), span));
                    }
                    self.emit(instance(v.clone(), "", 0), from_initiation, span, by);
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
                    if breaking.as_ref().is_some_and(Vec::is_empty) {
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
                        let others: Vec<ast::Expr> = match (value, &breaking) {
                            (Some(value), _) => values
                                .iter()
                                .filter(|o| *o != value)
                                .map(|o| ast::Expr::Const(*o, span))
                                .collect(),
                            (None, Some(breaking)) => breaking.clone(),
                            (None, None) => vec![var("V2", span)],
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
                        let breakers = breaking.clone().unwrap_or_else(|| vec![var("V2", span)]);
                        for other in breakers {
                            self.emit(
                                instance(v.clone(), "_t", 0),
                                vec![
                                    ast::Literal::Positive(instance(other.clone(), "_i", 0)),
                                    ast::Literal::Positive(instance(v.clone(), "", 0)),
                                    ast::Literal::Builtin(ast::Builtin {
                                        lhs: v.clone(),
                                        op: ast::CmpOp::Ne,
                                        rhs: other,
                                        span,
                                    }),
                                ],
                                span,
                                format!("EC value incompatibility (rule 16) for {which}"),
                            );
                        }
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
}
