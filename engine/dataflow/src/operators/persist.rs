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
//! touched. Nor is a key whose state changed at T-1 but which holds no terminated fact
//! there: with its input as it was, the same facts start, nothing stops and `term`
//! derives what it derived. And `term` is derived again only where the key's facts or
//! the input its rules read (not the start facts) changed. An inertia event costs two
//! hash lookups (its +1 at t and its −1 at t + 1) and three passes over its key's few
//! facts: at t (the old value terminated), t + 1 (the new value holds, the old one and
//! the termination go) and t + 2 (the start fact goes; the value persists).
//!
//! The terminating rule of the multi-valued form (`term(F, V, T) :- init(F, W, T),
//! h(F, V, T), V != W.`, [`Differs`]) is applied as a comparison of each held fact with
//! each fact of its slot; other terminating rules run through [`RulePlan`]. Where that
//! rule, one start rule from the same event a point back and one keep rule are all the
//! component has (EC's simple fluent as Algorithm 3 writes it), [`exclusive`] runs it in a
//! form of its own, with two evaluations per event and none of the general form's
//! bookkeeping.
//!
//! **Derived predicates** (`plan.derived`, RTEC's `voted_ie`/`voted_te`): with D(T)
//! what they hold at T,
//!
//! ```text
//! D(T)    = their own input facts at T ∪ what their rules derive, in order, from h(T-1),
//!           the slots at T and D(T) so far
//! h(T)    = S(T) ∪ what `plan.derived_starts` derive from D(T) and the slots
//!           ∪ { x ∈ h(T-1) : some keep rule matches x and none of its negations finds a
//!                            fact (D's at T, the others' as above) }
//! ```
//!
//! A key whose facts changed at T is evaluated at T + 1 (D reads them there). The start
//! rules keyed as the rest are among `derived_starts`, evaluated on their slots' facts in
//! the operator rather than as dataflow rules in front. Where every keep rule's negations
//! name every argument of the facts it keeps (`Inverse`), the facts that may stop are
//! found from the negated facts, so that a key of many facts (voting's motion, with every
//! voter's `voted`) is not read whole at each of its time points.
//!
//! **Input.** One tagged stream: tag 0 the start facts (changes of the start rules that
//! are rendered as dataflow rules in front of this operator, and of the predicate's own
//! input), tag 1 + i the facts of `plan.inputs()[i]` as given, once however many slots
//! (offsets) read the predicate, with a terminating predicate the next tag its own
//! input facts, and the tags after that the derived predicates' own. All are exchanged by
//! the key's hash, so a key's facts meet on one worker. A fact is applied to its offset-0
//! slot as it is taken and put on a queue per offset k ≥ 1 with its key's index, to be
//! applied at t + k without a second lookup (no delay operator in front). A start rule
//! that copies one atom (`plan.copies`) is applied to its slot's facts there: what it
//! derives is a start fact. A slot that `plan.slot_copies` fill (a predicate only this
//! operator reads, copied from another) takes its own input facts on its tag, and the
//! copies of its sources' facts as they are applied — or, where only negations naming
//! every argument read it, none: its facts are looked for as their sources (`Virtual`).
//!
//! **Memory.** At 10⁵ keys in random order the states (216 bytes each; the exclusive
//! form's 192, three cache lines) and the key table fall out of the caches. A time
//! point's changes are taken in short passes — look up every key by its fingerprint,
//! load every state, compare the keys, apply the changes — so that the CPU waits for a
//! time point's cache misses together rather than one after the other (see
//! `stepping::KeyTable`).
//!
//! **Output.** The changes of the predicate, of `term` and of the derived predicates that
//! another component reads or that are printed (`emitted`), tagged with their ids.

use differential_dataflow::Hashable;

use std::collections::VecDeque;

use super::Facts;
use super::stepping::{Inputs, KeyTable, Keyed, Listed, Update, operate};
use crate::plan::PersistPlan;
use stgflow_eval::eval::{RulePlan, SmallRelation};
use stgflow_lang::ir::{Atom, Literal, PredId, Program};
use stgflow_lang::value::{Row, Value};

/// The tag of the start facts.
const START: usize = 0;

mod evaluate;
mod exclusive;
mod rules;

use rules::{CopyRule, Derived, Differs, Inverse, Keep, Probe, Source, TermRules, Unless, Virtual};

/// Whether `plan` runs in the form for a fluent of exclusive values ([`exclusive`]).
pub fn is_exclusive(program: &Program, plan: &PersistPlan) -> bool {
    exclusive::Shape::of(program, plan).is_some()
}

/// Renders the operator for `plan` over its tagged `source` (see the module docs).
///
/// `emitted`: the predicates of `plan.derived` whose changes are output (read by another
/// component or printed); the others are the operator's own.
pub fn render<'s>(
    program: &Program,
    plan: &PersistPlan,
    emitted: &[PredId],
    source: Facts<'s, u64>,
) -> Facts<'s, u64> {
    if let Some(shape) = exclusive::Shape::of(program, plan) {
        return exclusive::render(plan, shape, source);
    }
    let state = State::new(program, plan, emitted);
    let positions = state.key_positions.clone();
    operate(
        source,
        "Persist",
        move |((tag, row), _, _): &Update| key_of(&positions, *tag, row).hashed(),
        state,
    )
}

/// The key of a fact with input tag `tag`: the value at its slot's key position.
fn key_of(positions: &[usize], tag: u32, row: &Row) -> Value {
    positions
        .get(tag as usize)
        .and_then(|&i| row.get(i).copied())
        .unwrap_or(Value::Int(0))
}

impl Keyed<Value> for KeyState {
    fn key(&self) -> &Value {
        &self.key
    }
}

impl Listed for KeyState {
    fn listed(&mut self) -> &mut u64 {
        &mut self.listed
    }

    fn touch(&self) -> bool {
        self.held.is_empty() | self.terminated.is_empty() | self.inputs.is_empty()
    }
}

struct KeyState {
    key: Value,
    /// The time point this key was last put on the work list for, plus one (0: never).
    listed: u64,
    /// How many of its facts are on their way to a later time point (`Delay`): a key
    /// with some is not removed, its index stays its own.
    pending: u32,
    /// Whether input that `term`'s rules read (not a start fact) changed at the time point
    /// being taken: with it and the predicate's facts as they were, `term` holds what it
    /// held.
    read_changed: bool,
    /// What the predicate holds for this key.
    held: SmallRelation,
    /// How many of them no keep rule applies to.
    unkept: u32,
    /// What `term` holds for this key.
    terminated: SmallRelation,
    /// What each predicate of `plan.derived` holds for this key (none without them).
    derived: Vec<SmallRelation>,
    /// Input counts by (local, fact): local 0 the start facts, 1 + s slot s's facts,
    /// 1 + slots `term`'s own, 2 + slots + i derived predicate i's own.
    inputs: Inputs,
}

/// The facts of one input predicate read at offset k ≥ 1, on their way to the time point
/// they hold at for that slot: in the order they were taken, so in time order.
struct Delay {
    offset: u64,
    queue: VecDeque<Pending>,
}

struct Pending {
    at: u64,
    index: u32,
    slot: u32,
    row: Row,
    diff: isize,
}

/// What one slot's facts are used for.
struct SlotUse {
    /// The copies of its facts that start the predicate.
    copies: Vec<CopyRule>,
    /// Whether its facts are kept (a keep rule's negation or `term` reads them).
    stored: bool,
    /// The copies of its facts into other slots (`plan.slot_copies`), with their slot.
    feeds: Vec<(CopyRule, usize)>,
}

struct State {
    pred: PredId,
    keeps: Vec<Keep>,
    term: Option<TermRules>,
    /// Every keep rule's negations read backwards (see [`Inverse`]), when each can be: a
    /// key's facts that may stop are then found from the facts that stop them, instead of
    /// each held fact being checked.
    inverses: Option<Vec<Inverse>>,
    /// Buffer: the held facts that may stop.
    candidates: Vec<Row>,
    /// Per input local of a slot that `plan.slot_copies` fill and that is not made: the
    /// copies into it, read backwards.
    virtuals: Vec<Vec<Virtual>>,
    /// The predicates of `plan.derived`, in order, and the rules of `plan.derived_starts`
    /// (but those applied as [`Unless`]) as one more, whose facts start the persisting one.
    derived_preds: Vec<Derived>,
    derived_starts: Derived,
    /// Those of `plan.derived_starts` that are applied as [`Unless`] instead.
    unless: Vec<Unless>,
    /// Per slot, whether the derived predicates' rules or their start rules read it.
    derive_reads: Vec<bool>,
    /// Buffers: what the derived predicates hold at the time point being evaluated, and
    /// what their start rules start.
    next_derived: Vec<SmallRelation>,
    started: SmallRelation,
    slots: Vec<(PredId, u32)>,
    /// The key position of each input tag's facts.
    key_positions: Vec<usize>,
    /// Per input tag of a predicate from outside (tag 1 + i): its slots, (offset, slot).
    readings: Vec<Vec<(u64, usize)>>,
    /// The input tag of `term`'s own facts (past the predicates').
    own_tag: usize,
    uses: Vec<SlotUse>,
    delays: Vec<Delay>,
    table: KeyTable<KeyState>,
    /// Keys whose state changed at `last_processed` and that hold a terminated fact:
    /// evaluated at the next time point (see [`State::evaluate`]).
    changed: Vec<usize>,
    stash: super::zero_one::Stash<(u32, Row)>,
    last_processed: Option<u64>,
    work: Vec<usize>,
    /// The key indices of a time point's changes.
    indices: Vec<usize>,
    /// Buffers for what `term` holds next and for its rules' inputs.
    next_terminated: SmallRelation,
    relations: Vec<SmallRelation>,
    derived: Vec<Row>,
}

impl State {
    fn new(program: &Program, plan: &PersistPlan, emitted: &[PredId]) -> State {
        let slot_index =
            |slot: &(PredId, u32)| plan.slots.iter().position(|s| s == slot).unwrap_or(0);
        let tag_of = |slot: &(PredId, u32)| 1 + slot_index(slot);
        let term_pred = plan.term.as_ref().map(|(t, _)| *t);
        let derived: Vec<PredId> = plan.derived.iter().map(|(d, _)| *d).collect();
        let keeps: Vec<Keep> = plan
            .keeps
            .iter()
            .map(|&r| Keep::new(program, r, term_pred, &derived, &tag_of))
            .collect();
        let inverses = (keeps.iter().map(Inverse::of))
            .collect::<Option<Vec<Vec<Inverse>>>>()
            .map(|all| all.into_iter().flatten().collect());
        let slot_of = |atom: &Atom| slot_index(&(atom.pred, atom.offset));
        let (mut unless, mut planned) = (Vec::new(), Vec::new());
        for &r in &plan.derived_starts {
            let in_slot = |a: &Atom| plan.slots.iter().position(|&s| s == (a.pred, a.offset));
            match Unless::new(program, r, &in_slot) {
                Some(u) => unless.push(u),
                None => planned.push(r),
            }
        }
        let derive_reads: Vec<bool> = (plan.slots.iter())
            .map(|slot| {
                (plan.derived.iter().flat_map(|(_, rules)| rules))
                    .chain(&planned)
                    .any(|&r| {
                        (program.rules[r].body.iter().filter_map(Literal::atom))
                            .any(|a| (a.pred, a.offset) == *slot)
                    })
            })
            .collect();
        let derived_preds: Vec<Derived> = (plan.derived.iter())
            .map(|(pred, rules)| {
                let mut d = Derived::new(program, *pred, rules, plan.pred, &derived, &slot_of);
                d.emit = emitted.contains(pred);
                d
            })
            .collect();
        let derived_starts =
            Derived::new(program, plan.pred, &planned, plan.pred, &derived, &slot_of);
        let term = plan.term.as_ref().map(|(term, rules)| {
            let (mut differs, mut plans, mut needs) = (Vec::new(), Vec::new(), Vec::new());
            for &r in rules {
                if let Some(d) = Differs::new(program, r, plan.pred, &slot_of) {
                    differs.push(d);
                    continue;
                }
                plans.push(RulePlan::new(&program.rules[r], |_| false));
                needs.push(
                    program.rules[r]
                        .body
                        .iter()
                        .filter_map(|l| match l {
                            Literal::Positive(a) if a.pred != plan.pred => Some(slot_of(a)),
                            _ => None,
                        })
                        .collect::<Vec<_>>(),
                );
            }
            let reads_slots = !plans.is_empty();
            TermRules {
                pred: *term,
                differs,
                plans,
                needs,
                reads_slots,
            }
        });
        let position = |p: PredId| plan.key.get(&p).copied().unwrap_or(0);
        let inputs = plan.inputs();
        let mut key_positions = vec![position(plan.pred)];
        key_positions.extend(inputs.iter().map(|&p| position(p)));
        if let Some((term, _)) = &plan.term {
            key_positions.push(position(*term));
        } else if !derived.is_empty() {
            // The derived predicates' own facts come after `term`'s tag, unused.
            key_positions.push(0);
        }
        key_positions.extend(derived.iter().map(|&d| position(d)));
        let readings = inputs
            .iter()
            .map(|&p| {
                let mut slots: Vec<(u64, usize)> = (plan.slots.iter().enumerate())
                    .filter(|(_, (q, _))| *q == p)
                    .map(|(s, &(_, k))| (u64::from(k), s))
                    .collect();
                slots.sort_unstable();
                slots
            })
            .collect();
        let mut uses: Vec<SlotUse> = plan
            .slots
            .iter()
            .map(|slot| {
                let read = |r: &usize| {
                    program.rules[*r]
                        .body
                        .iter()
                        .filter_map(Literal::atom)
                        .any(|a| (a.pred, a.offset) == *slot)
                };
                let term_rules = plan.term.iter().flat_map(|(_, rules)| rules);
                let derived_rules = plan.derived.iter().flat_map(|(_, rules)| rules);
                SlotUse {
                    copies: Vec::new(),
                    feeds: Vec::new(),
                    stored: (plan.keeps.iter().chain(term_rules))
                        .chain(derived_rules)
                        .chain(&plan.derived_starts)
                        .any(read),
                }
            })
            .collect();
        for &r in &plan.copies {
            let rule = &program.rules[r];
            let slot = rule.body.iter().find_map(|l| match l {
                Literal::Positive(atom) => Some((atom.pred, atom.offset)),
                _ => None,
            });
            if let (Some(slot), Some(copy)) = (slot, CopyRule::new(program, r)) {
                uses[slot_index(&slot)].copies.push(copy);
            }
        }
        // A slot that copies fill and only negations naming every argument read (keep rules'
        // and start rules' [`Unless`]) is not made: its facts are looked for as their
        // sources (`virtuals`). Others are filled as the sources' facts come in (`feeds`).
        let started_from: Vec<bool> = uses.iter().map(|u| !u.copies.is_empty()).collect();
        let named_only = |local: usize| {
            let named = |probes: &[Probe]| probes.iter().all(|p| !matches!(p, Probe::Any));
            let keeps_name = (keeps.iter().flat_map(|k| &k.stops)).all(|(source, probes)| {
                !matches!(source, Source::Tag(t) if *t == local) || named(probes)
            });
            let starts_name = (unless.iter().flat_map(|u| &u.stops))
                .all(|(t, probes)| *t != local || named(probes));
            // Read by a start rule (copied, or as an `Unless`), or copied into another slot:
            // its facts are needed as they are.
            let (pred, _) = plan.slots[local - 1];
            let read_as_start = unless.iter().any(|u| u.local == local)
                || started_from[local - 1]
                || (plan.slot_copies.iter()).any(|&r| {
                    (program.rules[r].body.iter().filter_map(Literal::atom)).any(|a| a.pred == pred)
                });
            plan.term.is_none()
                && keeps_name
                && starts_name
                && !read_as_start
                && derive_reads.get(local - 1) == Some(&false)
        };
        let mut virtuals: Vec<Vec<Virtual>> = (0..=plan.slots.len()).map(|_| Vec::new()).collect();
        for (to, &(q, k)) in plan.slots.iter().enumerate() {
            let copies: Vec<(usize, usize)> = (plan.slot_copies.iter())
                .filter(|&&r| program.rules[r].head.pred == q)
                .filter_map(|&r| {
                    let (atom, _) = crate::plan::copy_of(&program.rules[r])?;
                    let from = plan.slots.iter().position(|&s| s == (atom.pred, k))?;
                    Some((r, from))
                })
                .collect();
            let read_back: Option<Vec<Virtual>> = (copies.iter())
                .map(|&(r, from)| Virtual::new(&program.rules[r], 1 + from))
                .collect();
            match read_back {
                Some(read_back) if !copies.is_empty() && named_only(1 + to) => {
                    for &(_, from) in &copies {
                        uses[from].stored = true;
                    }
                    virtuals[1 + to] = read_back;
                }
                _ => {
                    for (r, from) in copies {
                        if let Some(copy) = CopyRule::new(program, r) {
                            uses[from].feeds.push((copy, to));
                        }
                    }
                }
            }
        }
        let mut offsets: Vec<u64> = plan
            .slots
            .iter()
            .map(|&(_, k)| u64::from(k))
            .filter(|&k| k > 0)
            .collect();
        offsets.sort_unstable();
        offsets.dedup();
        State {
            pred: plan.pred,
            own_tag: 1 + inputs.len(),
            readings,
            uses,
            delays: offsets
                .into_iter()
                .map(|offset| Delay {
                    offset,
                    queue: VecDeque::new(),
                })
                .collect(),
            keeps,
            virtuals,
            inverses,
            candidates: Vec::new(),
            term,
            next_derived: vec![SmallRelation::default(); derived_preds.len()],
            derived_preds,
            derived_starts,
            unless,
            derive_reads,
            started: SmallRelation::default(),
            slots: plan.slots.clone(),
            key_positions,
            table: KeyTable::default(),
            changed: Vec::new(),
            stash: super::zero_one::Stash::default(),
            last_processed: None,
            work: Vec::new(),
            indices: Vec::new(),
            next_terminated: SmallRelation::default(),
            relations: vec![SmallRelation::default(); plan.slots.len()],
            derived: Vec::new(),
        }
    }

    /// The first time point with input: buffered, or on its way to a slot.
    fn first_input(&self) -> Option<u64> {
        let delayed = self
            .delays
            .iter()
            .filter_map(|d| d.queue.front().map(|p| p.at));
        self.stash.first_time().into_iter().chain(delayed).min()
    }
}
