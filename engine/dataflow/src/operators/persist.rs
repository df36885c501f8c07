//! The persistence operator: a temporal SCC of EC inertia's shape (see
//! [`crate::plan::PersistPlan`]) without evaluating its rules per time point.
//!
//! With S the facts the start rules derive at T (and the predicate's own input facts),
//! what holds at T is
//!
//! ```text
//! h(T)    = S(T) ∪ { x ∈ h(T-1) : some keep rule matches x and none of its negations
//!                                  finds a fact (term's at T-1, the others' at T-k) }
//! term(T) = what term's rules derive from h(T) and the facts outside at T
//! ```
//!
//! per key, from the key's input at T and its own state at T-1. So a key whose input did
//! not change at T and whose state did not change at T-1 keeps its state at T: it is not
//! touched. An event costs a hash lookup per input change and an evaluation at each time
//! point where its key's input or state changed (an inertia event: t, t + 1 and t + 2),
//! each a pass over the key's few facts in place of the stepper's evaluation of every
//! rule of the component over the horizon's slots.
//!
//! **Input.** One tagged stream: tag 0 the start facts (changes of the start rules that
//! are rendered as dataflow rules in front of this operator, and of the predicate's own
//! input), tag 1 + i the facts of `plan.slots[i]` as given (the operator moves them on by
//! the slot's offset: no delay operator in front), and, with a terminating predicate, the
//! next tag its own input facts. All are exchanged by the key's hash, so a key's facts
//! meet on one worker. A start rule that copies one atom (`plan.copies`) is applied to its
//! slot's facts as they come in: what it derives is a start fact.
//!
//! **Output.** The changes of the predicate and of `term`, tagged with their ids.

use differential_dataflow::{AsCollection, Hashable};
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::Operator;

use super::Facts;
use super::stepper::{Inputs, KeyTable, TimeStepped, Update, diff, next_time, step_through};
use crate::plan::PersistPlan;
use stgflow_eval::eval::{Facts as FactStore, Rows, RulePlan, SmallRelation};
use stgflow_lang::ir::{Literal, PredId, Program, Term};
use stgflow_lang::value::{Row, Value};

/// The tag of the start facts.
const START: usize = 0;

/// Renders the operator for `plan` over its tagged `source` (see the module docs).
pub fn render<'s>(program: &Program, plan: &PersistPlan, source: Facts<'s, u64>) -> Facts<'s, u64> {
    let mut state = State::new(program, plan);
    let positions = state.key_positions.clone();
    source
        .inner
        .unary_frontier::<CapacityContainerBuilder<Vec<Update>>, _, _, _>(
            Exchange::new(move |((tag, row), _, _): &Update| {
                key_of(&positions, *tag, row).hashed()
            }),
            "Persist",
            move |capability, _info| {
                let mut capability = Some(capability);
                move |(input, frontier), output| {
                    input.for_each(|_, data| state.stash_moved_on(data));
                    let limit = frontier.frontier().first().copied();
                    step_through(&mut state, &mut capability, limit, output);
                }
            },
        )
        .as_collection()
}

/// The key of a fact with input tag `tag`: the value at its slot's key position.
fn key_of(positions: &[usize], tag: u32, row: &Row) -> Value {
    positions
        .get(tag as usize)
        .and_then(|&i| row.get(i).copied())
        .unwrap_or(Value::Int(0))
}

/// One argument of a negation, read off a fact of the persisting predicate.
#[derive(Clone, Debug)]
enum Probe {
    /// The fact's value at this position.
    At(usize),
    Is(Value),
    /// `_`: any value.
    Any,
}

/// Where a keep rule's negation looks.
#[derive(Clone, Copy, Debug)]
enum Source {
    /// The facts of an input tag.
    Tag(usize),
    /// What `term` held at T-1.
    Terminated,
}

/// A keep rule: the facts it applies to, and the negations that stop them.
struct Keep {
    /// `Some(c)` where the head has the constant c.
    pattern: Vec<Option<Value>>,
    stops: Vec<(Source, Vec<Probe>)>,
}

impl Keep {
    fn new(
        program: &Program,
        rule: usize,
        term: Option<PredId>,
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
                } else {
                    Source::Tag(tag_of(&(atom.pred, atom.offset)))
                };
                (source, probes)
            })
            .collect();
        Keep { pattern, stops }
    }

    fn matches(&self, fact: &[Value]) -> bool {
        self.pattern.len() == fact.len()
            && self
                .pattern
                .iter()
                .zip(fact)
                .all(|(p, v)| p.is_none_or(|c| c == *v))
    }
}

/// Whether `row` is what `probes` ask for, read off `fact`.
fn probed(probes: &[Probe], fact: &[Value], row: &[Value]) -> bool {
    probes.len() == row.len()
        && probes.iter().zip(row).all(|(probe, v)| match probe {
            Probe::At(i) => fact.get(*i) == Some(v),
            Probe::Is(c) => c == v,
            Probe::Any => true,
        })
}

/// A start rule that copies one atom (`plan::copy_of`): the facts of its slot that match
/// the atom's constants start the fact it projects.
struct Copy {
    /// (position, constant) of the atom's constants.
    filter: Vec<(usize, Value)>,
    /// Per head argument: the atom's position it copies, or the head's constant.
    project: Vec<Probe>,
}

impl Copy {
    fn new(program: &Program, rule: usize) -> Option<Copy> {
        let rule = &program.rules[rule];
        let (atom, positions) = crate::plan::copy_of(rule)?;
        let filter = crate::plan::constants(&atom.args);
        let project = positions
            .iter()
            .zip(&rule.head.args)
            .map(|(position, head)| match (position, head) {
                (Some(i), _) => Probe::At(*i),
                (None, Term::Const(c)) => Probe::Is(*c),
                (None, _) => Probe::Any,
            })
            .collect();
        Some(Copy { filter, project })
    }

    /// The fact `row` starts, if it matches.
    fn apply(&self, row: &[Value]) -> Option<Row> {
        if !self.filter.iter().all(|(i, c)| row.get(*i) == Some(c)) {
            return None;
        }
        self.project
            .iter()
            .map(|p| match p {
                Probe::At(i) => row.get(*i).copied(),
                Probe::Is(c) => Some(*c),
                Probe::Any => None,
            })
            .collect()
    }
}

struct KeyState {
    key: Value,
    /// The time point this key was last put on the work list for, plus one (0: never).
    listed: u64,
    /// What the predicate holds for this key.
    held: SmallRelation,
    /// What `term` holds for this key.
    terminated: SmallRelation,
    /// Input counts by (tag, fact).
    inputs: Inputs,
}

/// `term`'s rules, planned, with what they read.
struct TermRules {
    pred: PredId,
    plans: Vec<RulePlan>,
    /// Per rule, the tags of its positive atoms from outside: with none of them holding a
    /// fact for a key, the rule derives nothing there.
    needs: Vec<Vec<usize>>,
    /// The tag of `term`'s own input facts.
    own: usize,
}

struct State {
    pred: PredId,
    keeps: Vec<Keep>,
    term: Option<TermRules>,
    slots: Vec<(PredId, u32)>,
    /// The key position of each tag's facts.
    key_positions: Vec<usize>,
    /// Per tag: how far its facts are moved on in time (its slot's offset).
    offsets: Vec<u64>,
    /// The offsets above 0, each once.
    distinct_offsets: Vec<u64>,
    /// Facts of one offset on their way to the stash, and the others.
    shifted: Vec<Update>,
    rest: Vec<Update>,
    /// Per tag: the copies of its facts that start the predicate.
    copies: Vec<Vec<Copy>>,
    /// Per tag: whether its facts are kept (a keep rule's negation or `term` reads them).
    stored: Vec<bool>,
    table: KeyTable<KeyState>,
    /// Keys whose state changed at `last_processed`: evaluated at the next time point.
    changed: Vec<usize>,
    stash: super::zero_one::Stash<(u32, Row)>,
    last_processed: Option<u64>,
    work: Vec<usize>,
    /// Buffers for what `term` holds next and for its rules' inputs.
    next_terminated: SmallRelation,
    relations: Vec<SmallRelation>,
    derived: Vec<Row>,
}

impl State {
    fn new(program: &Program, plan: &PersistPlan) -> State {
        let tag_of =
            |slot: &(PredId, u32)| 1 + plan.slots.iter().position(|s| s == slot).unwrap_or(0);
        let term_pred = plan.term.as_ref().map(|(t, _)| *t);
        let keeps = plan
            .keeps
            .iter()
            .map(|&r| Keep::new(program, r, term_pred, &tag_of))
            .collect();
        let own = 1 + plan.slots.len();
        let term = plan.term.as_ref().map(|(term, rules)| TermRules {
            pred: *term,
            plans: rules
                .iter()
                .map(|&r| RulePlan::new(&program.rules[r], |_| false))
                .collect(),
            needs: rules
                .iter()
                .map(|&r| {
                    program.rules[r]
                        .body
                        .iter()
                        .filter_map(|l| match l {
                            Literal::Positive(a) if a.pred != plan.pred => {
                                Some(tag_of(&(a.pred, a.offset)))
                            }
                            _ => None,
                        })
                        .collect()
                })
                .collect(),
            own,
        });
        let position = |p: PredId| plan.key.get(&p).copied().unwrap_or(0);
        let mut key_positions = vec![position(plan.pred)];
        key_positions.extend(plan.slots.iter().map(|&(p, _)| position(p)));
        if let Some((term, _)) = &plan.term {
            key_positions.push(position(*term));
        }
        let tags = key_positions.len();
        let mut offsets = vec![0; tags];
        for (i, &(_, offset)) in plan.slots.iter().enumerate() {
            offsets[1 + i] = u64::from(offset);
        }
        let mut copies: Vec<Vec<Copy>> = (0..tags).map(|_| Vec::new()).collect();
        for &r in &plan.copies {
            let rule = &program.rules[r];
            let slot = rule.body.iter().find_map(|l| match l {
                Literal::Positive(atom) => Some((atom.pred, atom.offset)),
                _ => None,
            });
            if let (Some(slot), Some(copy)) = (slot, Copy::new(program, r)) {
                copies[tag_of(&slot)].push(copy);
            }
        }
        let mut stored = vec![true; tags];
        for (i, slot) in plan.slots.iter().enumerate() {
            let read = |r: &usize| {
                program.rules[*r]
                    .body
                    .iter()
                    .filter_map(Literal::atom)
                    .any(|a| (a.pred, a.offset) == *slot)
            };
            let term_rules = plan.term.iter().flat_map(|(_, rules)| rules);
            stored[1 + i] = plan.keeps.iter().chain(term_rules).any(read);
        }
        let mut distinct_offsets: Vec<u64> = offsets.iter().copied().filter(|&k| k > 0).collect();
        distinct_offsets.sort_unstable();
        distinct_offsets.dedup();
        State {
            pred: plan.pred,
            offsets,
            distinct_offsets,
            shifted: Vec::new(),
            rest: Vec::new(),
            copies,
            stored,
            keeps,
            term,
            slots: plan.slots.clone(),
            key_positions,
            table: KeyTable::default(),
            changed: Vec::new(),
            stash: super::zero_one::Stash::default(),
            last_processed: None,
            work: Vec::new(),
            next_terminated: SmallRelation::default(),
            relations: vec![SmallRelation::default(); plan.slots.len()],
            derived: Vec::new(),
        }
    }

    /// Buffers `data` by time point, each fact moved on by its slot's offset (a slot
    /// read k points back holds at t + k what was given at t). The facts of one offset
    /// are buffered together, so that the stash sees runs of equal times (a fact read at
    /// two offsets comes in twice, one after the other).
    fn stash_moved_on(&mut self, data: &mut Vec<Update>) {
        let offsets = &self.offsets;
        let offset = |tag: u32| offsets.get(tag as usize).copied().unwrap_or(0);
        for &k in &self.distinct_offsets {
            for update in data.drain(..) {
                if offset(update.0.0) == k {
                    self.shifted.push(update);
                } else {
                    self.rest.push(update);
                }
            }
            std::mem::swap(data, &mut self.rest);
            self.stash.add(&mut self.shifted, &|t, _| t + k);
        }
        self.stash.add(data, &|t, _| t);
    }
}

impl TimeStepped for State {
    fn next_time(&self, limit: Option<u64>) -> Option<u64> {
        next_time(
            self.stash.first_time(),
            !self.changed.is_empty(),
            self.last_processed,
            limit,
        )
    }

    fn process(&mut self, t: u64, out: &mut Vec<Update>) {
        let mut work = std::mem::take(&mut self.work);
        work.clear();
        let mut changes = self.stash.take(t);
        for ((tag, row), diff) in changes.drain(..) {
            let key = key_of(&self.key_positions, tag, &row);
            let index = self.table.index(key, |&key| KeyState {
                key,
                listed: 0,
                held: SmallRelation::default(),
                terminated: SmallRelation::default(),
                inputs: Inputs::default(),
            });
            let state = &mut self.table.states[index];
            if state.listed != t + 1 {
                state.listed = t + 1;
                work.push(index);
            }
            let tag = tag as usize;
            for copy in self.copies.get(tag).into_iter().flatten() {
                if let Some(started) = copy.apply(&row) {
                    state.inputs.add(START, started, diff);
                }
            }
            if self.stored.get(tag).copied().unwrap_or(true) {
                state.inputs.add(tag, row, diff);
            }
        }
        self.stash.give_back(changes);
        // Keys whose state changed at t − 1 (`next_time` makes t the next time point).
        for index in std::mem::take(&mut self.changed) {
            let state = &mut self.table.states[index];
            if state.listed != t + 1 {
                state.listed = t + 1;
                work.push(index);
            }
        }
        for &index in &work {
            if self.evaluate(index, t, out) {
                self.changed.push(index);
            }
        }
        self.work = work;
        self.last_processed = Some(t);
    }
}

impl State {
    /// The key at `index` at `t`: its new state, and the changes to it; whether it changed.
    /// The state is updated in place: of what the key held, only the facts that stop are
    /// touched, and only the facts that start are copied in.
    fn evaluate(&mut self, index: usize, t: u64, out: &mut Vec<Update>) -> bool {
        let Some(state) = self.table.states.get_mut(index) else {
            return false;
        };
        let start = out.len();
        let pred = self.pred as u32;
        // What stops: held at t − 1, not started at t, and no keep rule lets it through.
        for fact in state.held.iter() {
            if !started(&state.inputs, fact) && !kept(&self.keeps, state, fact) {
                out.push(((pred, fact.clone()), t, -1));
            }
        }
        let stopped = out.len();
        for (tag, fact, count) in state.inputs.iter() {
            if tag == START && count > 0 && !state.held.contains_row(fact) {
                out.push(((pred, fact.clone()), t, 1));
            }
        }
        for ((_, fact), _, diff) in &out[start..] {
            if *diff > 0 {
                state.held.insert(fact.clone());
            }
        }
        for ((_, fact), _, _) in &out[start..stopped] {
            state.held.remove(fact);
        }
        if let Some(term) = &self.term {
            let next = &mut self.next_terminated;
            next.clear();
            let mut reads_any = false;
            for relation in &mut self.relations {
                relation.clear();
            }
            for (tag, fact, count) in state.inputs.iter() {
                if count <= 0 || tag == START {
                    continue;
                }
                if tag == term.own {
                    next.insert(fact.clone());
                } else if let Some(relation) = self.relations.get_mut(tag - 1) {
                    relation.insert(fact.clone());
                    reads_any = true;
                }
            }
            let view = TermView {
                pred: self.pred,
                held: &state.held,
                slots: &self.slots,
                relations: &self.relations,
                t,
            };
            for (plan, needs) in term.plans.iter().zip(&term.needs) {
                // A rule that reads a fact from outside derives nothing without one.
                let idle = !needs.is_empty()
                    && (!reads_any || needs.iter().any(|&tag| self.relations[tag - 1].is_empty()));
                if idle {
                    continue;
                }
                plan.fire(t, None, &view, &mut self.derived);
                for fact in self.derived.drain(..) {
                    next.insert(fact);
                }
            }
            if diff(term.pred, &state.terminated, next, t, out) {
                std::mem::swap(&mut state.terminated, next);
            }
        }
        let changed = out.len() > start;
        if !changed
            && state.held.is_empty()
            && state.terminated.is_empty()
            && state.inputs.is_empty()
        {
            state.held = SmallRelation::default();
            state.terminated = SmallRelation::default();
            let key = state.key;
            self.table.remove(&key, index);
        }
        changed
    }
}

/// Whether `fact` is among the key's start facts.
fn started(inputs: &Inputs, fact: &[Value]) -> bool {
    inputs
        .iter()
        .any(|(tag, row, count)| tag == START && count > 0 && row[..] == *fact)
}

/// Whether a keep rule lets `fact`, held at T-1, hold at T.
fn kept(keeps: &[Keep], state: &KeyState, fact: &[Value]) -> bool {
    keeps.iter().any(|keep| {
        keep.matches(fact)
            && !keep.stops.iter().any(|(source, probes)| match source {
                Source::Terminated => state.terminated.rows().any(|row| probed(probes, fact, row)),
                Source::Tag(tag) => state
                    .inputs
                    .iter()
                    .any(|(t, row, count)| t == *tag && count > 0 && probed(probes, fact, row)),
            })
    })
}

/// A key's facts at T as `term`'s rules read them: the predicate's new state, and each
/// slot's facts.
struct TermView<'a> {
    pred: PredId,
    held: &'a SmallRelation,
    slots: &'a [(PredId, u32)],
    relations: &'a [SmallRelation],
    t: u64,
}

impl FactStore for TermView<'_> {
    type Relation = SmallRelation;

    fn relation(&self, pred: PredId, time: u64) -> Option<&SmallRelation> {
        let offset = u32::try_from(self.t.checked_sub(time)?).ok()?;
        if pred == self.pred && offset == 0 {
            return Some(self.held);
        }
        let i = self.slots.iter().position(|&s| s == (pred, offset))?;
        self.relations.get(i)
    }

    fn insert(&mut self, _: PredId, _: Row) -> bool {
        false
    }
}
