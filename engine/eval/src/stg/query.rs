//! The query a node expresses, for the MIN DATALOG step: a node's rule with every p-edge
//! replaced by the query of the node it comes from (the TG rewriting that replaces
//! intensional predicates by extensional ones, following the graph), and containment
//! between two such queries.
//!
//! * **What is extensional.** Positive atoms of input-only predicates, and the stream facts
//!   of a derived predicate (an input node), stay atoms `p@t(…)` with their absolute time.
//!   Negated conditions are not unfolded at all: an n-edge's sources are complete lower
//!   strata (or the past), so `not p@t(…)` is treated as extensional (Algorithm 4, line 21).
//! * **Bounded unfolding.** A node whose own query has more than [`INLINE_LIMIT`] literals
//!   is not inlined: the edge stays an opaque atom naming the node, which only matches the
//!   same node. Without the bound a query through recursion in time (EC inertia) grows
//!   with the stream. Every decision is per node, so two queries that share an ancestor
//!   treat it alike.
//! * **Containment is a homomorphism test** (head to head, every literal of the general
//!   query onto a literal of the specific one, negations onto equal negations,
//!   built-ins onto equal built-ins). That is sufficient for containment of conjunctive
//!   queries with safe negation, not necessary: a pitfall only in that some subsumed nodes
//!   stay, never in that a needed node goes. The search is capped at [`SEARCH_LIMIT`]
//!   steps, and gives up ("not contained") beyond it.

use stgflow_lang::ir::{Atom, Expr, Literal, PredId, Rule, Term};
use stgflow_lang::syntax::ast::{ArithOp, CmpOp, Func};
use stgflow_lang::value::Value;

/// Queries with more literals than this are referred to by node, not inlined.
pub const INLINE_LIMIT: usize = 32;
/// Steps of the homomorphism search before it gives up.
pub const SEARCH_LIMIT: usize = 20_000;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QTerm {
    Var(u32),
    Const(Value),
    /// A wildcard inside a negation: "no fact with any value here".
    Any,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QExpr {
    Term(QTerm),
    Binary(ArithOp, Box<QExpr>, Box<QExpr>),
    Call(Func, Vec<QExpr>),
}

/// Where a positive extensional atom's facts come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// The stream's facts of a predicate at a time point.
    Stream(PredId, u64),
    /// Whatever this node holds (not inlined).
    Node(usize),
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum QLit {
    Pos(Source, Vec<QTerm>),
    Neg(PredId, u64, Vec<QTerm>),
    Cmp(CmpOp, QExpr, QExpr),
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Query {
    pub head: Vec<QTerm>,
    pub lits: Vec<QLit>,
    pub vars: u32,
    /// Two constants had to be equal: the query has no answers.
    pub unsatisfiable: bool,
}

/// What a node's positive body atom reads.
#[derive(Debug)]
pub enum Input<'a> {
    /// A node whose query is inlined.
    Inline(&'a Query),
    /// An opaque node or the stream.
    Opaque(Source),
}

/// Builds the query of a node for `rule` at time `t`; `input(i)` says what the positive
/// atom at body position `i` reads when it reads a derived predicate (`None`: the stream).
pub fn build<'a>(rule: &Rule, t: u64, input: impl Fn(usize) -> Option<Input<'a>>) -> Query {
    let mut builder = Builder {
        subst: (0..rule.vars.len()).map(|_| None).collect(),
        unsatisfiable: false,
    };
    let mut lits = Vec::new();
    for (i, literal) in rule.body.iter().enumerate() {
        match literal {
            Literal::Positive(atom) => {
                let args: Vec<QTerm> = atom.args.iter().map(|a| builder.term(a, false)).collect();
                // Before the timeline's start nothing holds.
                let Some(time) = t.checked_sub(u64::from(atom.offset)) else {
                    builder.unsatisfiable = true;
                    continue;
                };
                match input(i) {
                    Some(Input::Inline(query)) => builder.inline(query, &args, &mut lits),
                    Some(Input::Opaque(source)) => lits.push(QLit::Pos(source, args)),
                    None => lits.push(QLit::Pos(Source::Stream(atom.pred, time), args)),
                }
            }
            // A negated condition before time point 0 always holds: no literal.
            Literal::Negative(atom) => lits.extend(negation(atom, t, &mut builder)),
            Literal::Compare { op, lhs, rhs, .. } => {
                lits.push(QLit::Cmp(*op, builder.expr(lhs, t), builder.expr(rhs, t)));
            }
            Literal::Assign { var, expr, .. } => lits.push(QLit::Cmp(
                CmpOp::Eq,
                QExpr::Term(QTerm::Var(*var as u32)),
                builder.expr(expr, t),
            )),
        }
    }
    let head: Vec<QTerm> = rule
        .head
        .args
        .iter()
        .map(|a| builder.term(a, false))
        .collect();
    builder.finish(head, lits)
}

fn negation(atom: &Atom, t: u64, builder: &mut Builder) -> Option<QLit> {
    let time = t.checked_sub(u64::from(atom.offset))?;
    let args = atom.args.iter().map(|a| builder.term(a, true)).collect();
    Some(QLit::Neg(atom.pred, time, args))
}

struct Builder {
    /// Binding of each variable (rule variables first, then fresh ones).
    subst: Vec<Option<QTerm>>,
    unsatisfiable: bool,
}

impl Builder {
    fn fresh(&mut self) -> QTerm {
        self.subst.push(None);
        QTerm::Var((self.subst.len() - 1) as u32)
    }

    fn term(&mut self, term: &Term, negated: bool) -> QTerm {
        match term {
            Term::Var(v) => QTerm::Var(*v as u32),
            Term::Const(c) => QTerm::Const(*c),
            Term::Wildcard if negated => QTerm::Any,
            Term::Wildcard => self.fresh(),
        }
    }

    fn expr(&mut self, expr: &Expr, t: u64) -> QExpr {
        match expr {
            Expr::Var(v) => QExpr::Term(QTerm::Var(*v as u32)),
            Expr::Time => QExpr::Term(QTerm::Const(Value::Int(i64::try_from(t).unwrap_or(-1)))),
            Expr::Const(c) => QExpr::Term(QTerm::Const(*c)),
            Expr::Binary(op, lhs, rhs) => QExpr::Binary(
                *op,
                Box::new(self.expr(lhs, t)),
                Box::new(self.expr(rhs, t)),
            ),
            Expr::Call(func, args) => {
                QExpr::Call(*func, args.iter().map(|a| self.expr(a, t)).collect())
            }
        }
    }

    fn resolve(&self, term: &QTerm) -> QTerm {
        let mut term = term.clone();
        while let QTerm::Var(v) = term {
            match self.subst.get(v as usize).and_then(Clone::clone) {
                Some(bound) => term = bound,
                None => break,
            }
        }
        term
    }

    fn unify(&mut self, a: &QTerm, b: &QTerm) {
        let (a, b) = (self.resolve(a), self.resolve(b));
        match (a, b) {
            (x, y) if x == y => {}
            (QTerm::Var(v), other) | (other, QTerm::Var(v)) => {
                self.subst[v as usize] = Some(other);
            }
            _ => self.unsatisfiable = true,
        }
    }

    /// Appends `query` with its variables renamed apart and its head unified with `args`.
    fn inline(&mut self, query: &Query, args: &[QTerm], lits: &mut Vec<QLit>) {
        if query.unsatisfiable {
            self.unsatisfiable = true;
        }
        let base = self.subst.len() as u32;
        for _ in 0..query.vars {
            self.subst.push(None);
        }
        let rename = |term: &QTerm| match term {
            QTerm::Var(v) => QTerm::Var(v + base),
            other => other.clone(),
        };
        for (head, arg) in query.head.iter().zip(args) {
            let head = rename(head);
            self.unify(&head, arg);
        }
        lits.extend(query.lits.iter().map(|lit| map_lit(lit, &rename)));
    }

    fn finish(self, head: Vec<QTerm>, lits: Vec<QLit>) -> Query {
        let apply = |term: &QTerm| self.resolve(term);
        let head: Vec<QTerm> = head.iter().map(apply).collect();
        let mut out: Vec<QLit> = Vec::with_capacity(lits.len());
        for lit in &lits {
            let lit = map_lit(lit, &apply);
            if !out.contains(&lit) {
                out.push(lit);
            }
        }
        // Number the variables that remain densely, in order of appearance.
        let mut names: Vec<Option<u32>> = vec![None; self.subst.len()];
        let mut next = 0u32;
        let mut dense = |term: &QTerm| match term {
            QTerm::Var(v) => {
                let slot = &mut names[*v as usize];
                QTerm::Var(*slot.get_or_insert_with(|| {
                    next += 1;
                    next - 1
                }))
            }
            other => other.clone(),
        };
        let head = head.iter().map(&mut dense).collect();
        let lits = out.iter().map(|l| map_lit_mut(l, &mut dense)).collect();
        Query {
            head,
            lits,
            vars: next,
            unsatisfiable: self.unsatisfiable,
        }
    }
}

fn map_lit(lit: &QLit, f: &impl Fn(&QTerm) -> QTerm) -> QLit {
    let mut g = |t: &QTerm| f(t);
    map_lit_mut(lit, &mut g)
}

fn map_lit_mut(lit: &QLit, f: &mut impl FnMut(&QTerm) -> QTerm) -> QLit {
    match lit {
        QLit::Pos(source, args) => QLit::Pos(*source, args.iter().map(&mut *f).collect()),
        QLit::Neg(pred, time, args) => QLit::Neg(*pred, *time, args.iter().map(&mut *f).collect()),
        QLit::Cmp(op, lhs, rhs) => QLit::Cmp(*op, map_expr(lhs, f), map_expr(rhs, f)),
    }
}

fn map_expr(expr: &QExpr, f: &mut impl FnMut(&QTerm) -> QTerm) -> QExpr {
    match expr {
        QExpr::Term(term) => QExpr::Term(f(term)),
        QExpr::Binary(op, lhs, rhs) => {
            QExpr::Binary(*op, Box::new(map_expr(lhs, f)), Box::new(map_expr(rhs, f)))
        }
        QExpr::Call(func, args) => {
            QExpr::Call(*func, args.iter().map(|a| map_expr(a, f)).collect())
        }
    }
}

/// Whether every answer of `specific` is an answer of `general` (by a homomorphism from
/// `general` onto `specific`; see the module doc).
pub fn contained_in(specific: &Query, general: &Query) -> bool {
    if specific.unsatisfiable {
        return true;
    }
    if general.unsatisfiable || specific.head.len() != general.head.len() {
        return false;
    }
    // Cheap necessary condition: every kind of literal of `general` occurs in `specific`.
    if !general
        .lits
        .iter()
        .all(|g| specific.lits.iter().any(|s| same_shape(g, s)))
    {
        return false;
    }
    let mut search = Search {
        specific,
        general,
        map: vec![None; general.vars as usize],
        steps: 0,
    };
    let mut bound = Vec::new();
    for (g, s) in general.head.iter().zip(&specific.head) {
        if !search.match_term(g, s, &mut bound) {
            return false;
        }
    }
    // Literals with the fewest candidates first.
    let mut order: Vec<usize> = (0..general.lits.len()).collect();
    order.sort_by_key(|&i| {
        let lit = &general.lits[i];
        specific.lits.iter().filter(|s| same_shape(lit, s)).count()
    });
    search.literals(&order)
}

fn same_shape(a: &QLit, b: &QLit) -> bool {
    match (a, b) {
        (QLit::Pos(x, xs), QLit::Pos(y, ys)) => x == y && xs.len() == ys.len(),
        (QLit::Neg(p, t, xs), QLit::Neg(q, u, ys)) => p == q && t == u && xs.len() == ys.len(),
        (QLit::Cmp(o, ..), QLit::Cmp(p, ..)) => o == p,
        _ => false,
    }
}

struct Search<'q> {
    specific: &'q Query,
    general: &'q Query,
    map: Vec<Option<QTerm>>,
    steps: usize,
}

impl Search<'_> {
    fn match_term(&mut self, general: &QTerm, specific: &QTerm, bound: &mut Vec<u32>) -> bool {
        match general {
            QTerm::Var(v) => match &self.map[*v as usize] {
                Some(image) => image == specific,
                None if *specific == QTerm::Any => false,
                None => {
                    self.map[*v as usize] = Some(specific.clone());
                    bound.push(*v);
                    true
                }
            },
            other => other == specific,
        }
    }

    fn match_expr(&mut self, general: &QExpr, specific: &QExpr, bound: &mut Vec<u32>) -> bool {
        match (general, specific) {
            (QExpr::Term(g), QExpr::Term(s)) => self.match_term(g, s, bound),
            (QExpr::Binary(o, gl, gr), QExpr::Binary(p, sl, sr)) => {
                o == p && self.match_expr(gl, sl, bound) && self.match_expr(gr, sr, bound)
            }
            (QExpr::Call(g, gs), QExpr::Call(s, ss)) => {
                g == s
                    && gs.len() == ss.len()
                    && gs.iter().zip(ss).all(|(g, s)| self.match_expr(g, s, bound))
            }
            _ => false,
        }
    }

    fn match_lit(&mut self, general: &QLit, specific: &QLit, bound: &mut Vec<u32>) -> bool {
        let terms = |s: &mut Self, gs: &[QTerm], ss: &[QTerm], bound: &mut Vec<u32>| {
            gs.iter().zip(ss).all(|(g, t)| s.match_term(g, t, bound))
        };
        match (general, specific) {
            (QLit::Pos(x, gs), QLit::Pos(y, ss)) => x == y && terms(self, gs, ss, bound),
            (QLit::Neg(p, t, gs), QLit::Neg(q, u, ss)) => {
                p == q && t == u && terms(self, gs, ss, bound)
            }
            (QLit::Cmp(o, gl, gr), QLit::Cmp(p, sl, sr)) => {
                o == p && self.match_expr(gl, sl, bound) && self.match_expr(gr, sr, bound)
            }
            _ => false,
        }
    }

    fn literals(&mut self, order: &[usize]) -> bool {
        let Some((&first, rest)) = order.split_first() else {
            return true;
        };
        let general = &self.general.lits[first];
        for specific in &self.specific.lits {
            self.steps += 1;
            if self.steps > SEARCH_LIMIT {
                return false;
            }
            if !same_shape(general, specific) {
                continue;
            }
            let mut bound = Vec::new();
            let matched = self.match_lit(general, specific, &mut bound) && self.literals(rest);
            if matched {
                return true;
            }
            for v in bound {
                self.map[v as usize] = None;
            }
            if self.steps > SEARCH_LIMIT {
                return false;
            }
        }
        false
    }
}
