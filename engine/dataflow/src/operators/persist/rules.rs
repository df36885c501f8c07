//! The persistence operator's rules read as data: the keep rules and their negations
//! ([`Keep`], read backwards as [`Inverse`]), the start rules that copy one atom
//! ([`CopyRule`], [`Unless`], [`Virtual`]), and the rules of `term` ([`TermRules`],
//! [`Differs`]) and of the derived predicates ([`Derived`]).

use smallvec::SmallVec;

use stgflow_eval::eval::{RulePlan, compare};
use stgflow_lang::ir::{Atom, Expr, Literal, PredId, Program, Term, VarId};
use stgflow_lang::syntax::ast::CmpOp;
use stgflow_lang::value::{Row, Value};

/// One argument of a negation, read off a fact of the persisting predicate.
#[derive(Clone, Debug)]
pub(super) enum Probe {
    /// The fact's value at this position.
    At(usize),
    Is(Value),
    /// `_`: any value.
    Any,
}

/// Where a keep rule's negation looks.
#[derive(Clone, Copy, Debug)]
pub(super) enum Source {
    /// The facts of an input tag.
    Tag(usize),
    /// What `term` held at T-1.
    Terminated,
    /// What a predicate of `plan.derived` (this index) holds at T.
    Derived(usize),
}

/// A keep rule's negation read backwards: the one held fact that a fact of its source can
/// stop (see [`State::evaluate`](super::State::evaluate)).
pub(super) struct Inverse {
    pub(super) source: Source,
    /// (position, constant) that the source's fact must have.
    pub(super) constants: Vec<(usize, Value)>,
    /// Per argument of the held fact: where it comes from.
    pub(super) fact: Vec<Probe>,
}

impl Inverse {
    /// `keep`'s negations read backwards, where each names every argument of the facts
    /// the rule keeps that is not its head's constant; `None` where one does not.
    pub(super) fn of(keep: &Keep) -> Option<Vec<Inverse>> {
        (keep.stops.iter())
            .map(|(source, probes)| {
                let constants = (probes.iter().enumerate())
                    .filter_map(|(j, p)| match p {
                        Probe::Is(c) => Some((j, *c)),
                        _ => None,
                    })
                    .collect();
                let fact = (keep.pattern.iter().enumerate())
                    .map(|(i, constant)| match constant {
                        Some(c) => Some(Probe::Is(*c)),
                        None => (probes.iter())
                            .position(|p| matches!(p, Probe::At(k) if *k == i))
                            .map(Probe::At),
                    })
                    .collect::<Option<Vec<Probe>>>()?;
                Some(Inverse {
                    source: *source,
                    constants,
                    fact,
                })
            })
            .collect()
    }

    /// The held fact that `row`, a fact of the source, may stop.
    pub(super) fn stops(&self, row: &[Value]) -> Option<Row> {
        if !stgflow_lang::ir::has_constants(row, &self.constants) {
            return None;
        }
        probe_row(&self.fact, row)
    }
}

/// A keep rule: the facts it applies to, and the negations that stop them.
pub(super) struct Keep {
    /// `Some(c)` where the head has the constant c.
    pub(super) pattern: Vec<Option<Value>>,
    pub(super) stops: Vec<(Source, Vec<Probe>)>,
}

impl Keep {
    pub(super) fn new(
        program: &Program,
        rule: usize,
        term: Option<PredId>,
        derived: &[PredId],
        tag_of: &dyn Fn(&(PredId, u32)) -> usize,
    ) -> Keep {
        let rule = &program.rules[rule];
        let head = &rule.head.args;
        let pattern = head
            .iter()
            .map(|t| match t {
                Term::Const(c) => Some(*c),
                Term::Var(_) | Term::Wildcard => None,
            })
            .collect();
        let stops = rule
            .body
            .iter()
            .filter_map(|literal| match literal {
                Literal::Negative(atom) => Some(atom),
                _ => None,
            })
            .map(|atom| {
                let probes = atom
                    .args
                    .iter()
                    .map(|t| match t {
                        Term::Var(_) => head
                            .iter()
                            .position(|h| h == t)
                            .map_or(Probe::Any, Probe::At),
                        Term::Const(c) => Probe::Is(*c),
                        Term::Wildcard => Probe::Any,
                    })
                    .collect();
                let source = if Some(atom.pred) == term {
                    Source::Terminated
                } else if let Some(i) = derived.iter().position(|&d| d == atom.pred) {
                    Source::Derived(i)
                } else {
                    Source::Tag(tag_of(&(atom.pred, atom.offset)))
                };
                (source, probes)
            })
            .collect();
        Keep { pattern, stops }
    }

    pub(super) fn matches(&self, fact: &[Value]) -> bool {
        self.pattern.len() == fact.len()
            && self
                .pattern
                .iter()
                .zip(fact)
                .all(|(p, v)| p.is_none_or(|c| c == *v))
    }
}

/// A row looked for, on the stack.
pub(super) type Probed = SmallVec<[Value; 4]>;

/// The one row `probes` ask for, read off `fact`, where they name every argument (what
/// copies, negations read backwards and virtual slots all build).
///
/// Checked first, then built from an iterator of known length: collecting `Option`s
/// directly grows the row a value at a time.
pub(super) fn probe_row<C: FromIterator<Value>>(probes: &[Probe], fact: &[Value]) -> Option<C> {
    let names = |probe: &Probe| match probe {
        Probe::At(i) => *i < fact.len(),
        Probe::Is(_) => true,
        Probe::Any => false,
    };
    probes.iter().all(names).then(|| {
        probes
            .iter()
            .map(|probe| match probe {
                Probe::At(i) => fact[*i],
                Probe::Is(c) => *c,
                // Ruled out above.
                Probe::Any => Value::Int(0),
            })
            .collect()
    })
}

/// Whether `row` is what `probes` ask for, read off `fact`.
pub(super) fn probed(probes: &[Probe], fact: &[Value], row: &[Value]) -> bool {
    probes.len() == row.len()
        && probes.iter().zip(row).all(|(probe, v)| match probe {
            Probe::At(i) => fact.get(*i) == Some(v),
            Probe::Is(c) => c == v,
            Probe::Any => true,
        })
}

/// A start rule that copies one atom (`plan::copy_of`): the facts of its slot that match
/// the atom's constants start the fact it projects.
#[derive(Clone)]
pub(super) struct CopyRule {
    /// (position, constant) of the atom's constants.
    pub(super) filter: Vec<(usize, Value)>,
    /// Per head argument: the atom's position it copies, or the head's constant.
    pub(super) project: Vec<Probe>,
    /// Whether what it starts is the fact itself (`h(X, Y, T) :- h_i(X, Y, T-1).`).
    pub(super) identity: bool,
}

impl CopyRule {
    pub(super) fn new(program: &Program, rule: usize) -> Option<CopyRule> {
        CopyRule::from_rule(&program.rules[rule])
    }

    pub(super) fn from_rule(rule: &stgflow_lang::ir::Rule) -> Option<CopyRule> {
        let (atom, positions) = crate::plan::copy_of(rule)?;
        let filter = stgflow_lang::ir::constants(&atom.args);
        let project = positions
            .iter()
            .zip(&rule.head.args)
            .map(|(position, head)| match (position, head) {
                (Some(i), _) => Probe::At(*i),
                (None, Term::Const(c)) => Probe::Is(*c),
                (None, _) => Probe::Any,
            })
            .collect::<Vec<_>>();
        let identity = filter.is_empty()
            && project.len() == atom.args.len()
            && (project.iter().enumerate()).all(|(i, p)| matches!(p, Probe::At(j) if *j == i));
        Some(CopyRule {
            filter,
            project,
            identity,
        })
    }

    /// The fact `row` starts, if it matches.
    pub(super) fn apply(&self, row: &[Value]) -> Option<Row> {
        if !stgflow_lang::ir::has_constants(row, &self.filter) {
            return None;
        }
        probe_row(&self.project, row)
    }
}

/// A start rule `h(P…, T) :- s(X…, T-k), not q(Q…, T-j), ….` of `plan.derived_starts`
/// whose negations read the head's variables only (and `_`): each fact of s's slot
/// starts its projection unless a negation finds a fact, read off the key's input
/// without a rule evaluation.
pub(super) struct Unless {
    /// The input local of s's slot.
    pub(super) local: usize,
    pub(super) copy: CopyRule,
    /// The negations: the input local of their slot, their probes over the started fact.
    pub(super) stops: Vec<(usize, Vec<Probe>)>,
}

impl Unless {
    /// `rule` as an [`Unless`], where its atoms are all in slots (`slot_of`).
    pub(super) fn new(
        program: &Program,
        rule: usize,
        slot_of: &dyn Fn(&Atom) -> Option<usize>,
    ) -> Option<Unless> {
        let rule = &program.rules[rule];
        let (first, rest) = rule.body.split_first()?;
        let Literal::Positive(atom) = first else {
            return None;
        };
        let copy_rule = stgflow_lang::ir::Rule {
            body: vec![first.clone()],
            ..rule.clone()
        };
        let copy = CopyRule::from_rule(&copy_rule)?;
        let head = &rule.head.args;
        let stops = rest
            .iter()
            .map(|literal| {
                let Literal::Negative(negated) = literal else {
                    return None;
                };
                let probes = (negated.args.iter())
                    .map(|t| match t {
                        Term::Var(_) => match head.iter().position(|h| h == t) {
                            Some(i) => Some(Probe::At(i)),
                            // A variable of s the head drops: not a probe of the started fact.
                            None if atom.args.contains(t) => None,
                            None => Some(Probe::Any),
                        },
                        Term::Const(c) => Some(Probe::Is(*c)),
                        Term::Wildcard => Some(Probe::Any),
                    })
                    .collect::<Option<Vec<Probe>>>()?;
                Some((1 + slot_of(negated)?, probes))
            })
            .collect::<Option<Vec<_>>>()?;
        Some(Unless {
            local: 1 + slot_of(atom)?,
            copy,
            stops,
        })
    }
}

/// A copy into a slot (`plan.slot_copies`) that is not made (see
/// [`State::virtuals`](super::State::virtuals)): a fact of the slot is looked for as the
/// source fact it is copied from.
pub(super) struct Virtual {
    /// The source slot's input local.
    pub(super) from: usize,
    pub(super) copy: CopyRule,
    /// The head's constants, (position, value): a fact without them is no copy's.
    pub(super) constants: Vec<(usize, Value)>,
    /// Per argument of the source fact: where it is in the copied fact, or its constant.
    pub(super) back: Vec<Probe>,
}

impl Virtual {
    /// `rule` (a copy, `plan::copy_of`) read backwards from slot local `from`, where
    /// every argument of its source atom is a constant or reaches the head.
    pub(super) fn new(rule: &stgflow_lang::ir::Rule, from: usize) -> Option<Virtual> {
        let (atom, positions) = crate::plan::copy_of(rule)?;
        let constants = (positions.iter().zip(&rule.head.args).enumerate())
            .filter_map(|(i, (position, arg))| match (position, arg) {
                (None, Term::Const(c)) => Some((i, *c)),
                _ => None,
            })
            .collect();
        let back = (atom.args.iter().enumerate())
            .map(|(j, arg)| match arg {
                Term::Const(c) => Some(Probe::Is(*c)),
                _ => positions.iter().position(|&p| p == Some(j)).map(Probe::At),
            })
            .collect::<Option<Vec<Probe>>>()?;
        Some(Virtual {
            from,
            copy: CopyRule::from_rule(rule)?,
            constants,
            back,
        })
    }

    /// The source fact that `row` would be copied from.
    pub(super) fn source_of(&self, row: &[Value]) -> Option<Probed> {
        if !stgflow_lang::ir::has_constants(row, &self.constants) {
            return None;
        }
        probe_row(&self.back, row)
    }
}

/// `term`'s rules, planned, with what they read.
pub(super) struct TermRules {
    pub(super) pred: PredId,
    /// Rules of the shape [`Differs`] describes, applied as such.
    pub(super) differs: Vec<Differs>,
    pub(super) plans: Vec<RulePlan>,
    /// Per rule of `plans`, the slots of its positive atoms from outside: with none of
    /// them holding a fact for a key, the rule derives nothing there.
    pub(super) needs: Vec<Vec<usize>>,
    /// Whether some rule of `plans` reads a slot: their facts are gathered per slot.
    pub(super) reads_slots: bool,
}

/// A terminating rule of the multi-valued form, `term(X…, T) :- h(X…, T), s(…, T-k),
/// V != W.`, with `h`'s arguments distinct variables, the head's the same, and `s`'s
/// variables `h`'s but for W at one position: a held fact x is terminated by a fact y of
/// the slot that agrees with x where they share a variable and whose W differs from x's V.
pub(super) struct Differs {
    pub(super) slot: usize,
    /// (position in s, position in h) of their shared variables.
    pub(super) joins: Vec<(usize, usize)>,
    /// s's constants.
    pub(super) constants: Vec<(usize, Value)>,
    /// (position of W in s, position of V in h).
    pub(super) differ: (usize, usize),
    pub(super) arity: usize,
}

impl Differs {
    pub(super) fn new(
        program: &Program,
        rule: usize,
        pred: PredId,
        slot_of: &dyn Fn(&Atom) -> usize,
    ) -> Option<Differs> {
        let rule = &program.rules[rule];
        let mut own = None;
        let mut outside = None;
        let mut compared = None;
        for literal in &rule.body {
            match literal {
                Literal::Positive(a) if a.pred == pred && own.is_none() => own = Some(a),
                Literal::Positive(a) if a.pred != pred && outside.is_none() => outside = Some(a),
                Literal::Compare {
                    op: CmpOp::Ne,
                    lhs: Expr::Var(a),
                    rhs: Expr::Var(b),
                    ..
                } if compared.is_none() => compared = Some((*a, *b)),
                _ => return None,
            }
        }
        let (own, outside, (a, b)) = (own?, outside?, compared?);
        let vars: Vec<VarId> = own
            .args
            .iter()
            .map(|t| match t {
                Term::Var(v) => Some(*v),
                _ => None,
            })
            .collect::<Option<_>>()?;
        let distinct = vars.iter().enumerate().all(|(i, v)| !vars[..i].contains(v));
        if own.offset != 0 || !distinct || rule.head.args != own.args {
            return None;
        }
        let in_own = |v: VarId| vars.iter().position(|&w| w == v);
        let (v, w) = match (in_own(a), in_own(b)) {
            (Some(i), None) => (i, b),
            (None, Some(i)) => (i, a),
            _ => return None,
        };
        let (mut joins, mut constants, mut at_w) = (Vec::new(), Vec::new(), None);
        for (j, term) in outside.args.iter().enumerate() {
            match term {
                Term::Var(x) if *x == w => {
                    if at_w.replace(j).is_some() {
                        return None;
                    }
                }
                Term::Var(x) => joins.push((j, in_own(*x)?)),
                Term::Const(c) => constants.push((j, *c)),
                Term::Wildcard => {}
            }
        }
        Some(Differs {
            slot: slot_of(outside),
            joins,
            constants,
            differ: (at_w?, v),
            arity: outside.args.len(),
        })
    }

    /// Whether `y`, a fact of the slot, terminates the held fact `x`.
    pub(super) fn terminates(&self, x: &[Value], y: &[Value]) -> bool {
        y.len() == self.arity
            && self.joins.iter().all(|&(j, i)| y.get(j) == x.get(i))
            && self.constants.iter().all(|(j, c)| y.get(*j) == Some(c))
            && match (y.get(self.differ.0), x.get(self.differ.1)) {
                (Some(&w), Some(&v)) => compare(CmpOp::Ne, v, w),
                _ => false,
            }
    }
}

/// A predicate of `plan.derived`: its rules, and whether its changes are output.
pub(super) struct Derived {
    pub(super) pred: PredId,
    pub(super) plans: Vec<RulePlan>,
    /// Per rule, what its positive atoms read ([`needs_of`]).
    pub(super) needs: Vec<Vec<Need>>,
    pub(super) emit: bool,
}

impl Derived {
    /// `pred` with its `rules` planned, not output; `own` the persisting predicate,
    /// `derived` the derived ones.
    pub(super) fn new(
        program: &Program,
        pred: PredId,
        rules: &[usize],
        own: PredId,
        derived: &[PredId],
        slot_of: &dyn Fn(&Atom) -> usize,
    ) -> Derived {
        Derived {
            pred,
            plans: (rules.iter())
                .map(|&r| RulePlan::new(&program.rules[r], |_| false))
                .collect(),
            needs: (rules.iter())
                .map(|&r| needs_of(&program.rules[r], own, derived, slot_of))
                .collect(),
            emit: false,
        }
    }
}

/// What a positive atom of a derived predicate's rule reads: without a fact there, the
/// rule derives nothing.
#[derive(Clone, Copy)]
pub(super) enum Need {
    Slot(usize),
    Derived(usize),
}

/// What `rule`'s positive atoms read, but for the persisting predicate's (`pred`).
pub(super) fn needs_of(
    rule: &stgflow_lang::ir::Rule,
    pred: PredId,
    derived: &[PredId],
    slot_of: &dyn Fn(&Atom) -> usize,
) -> Vec<Need> {
    rule.body
        .iter()
        .filter_map(|l| match l {
            Literal::Positive(a) if a.pred != pred => {
                Some(match derived.iter().position(|&d| d == a.pred) {
                    Some(i) => Need::Derived(i),
                    None => Need::Slot(slot_of(a)),
                })
            }
            _ => None,
        })
        .collect()
}
