//! Renders a [`Plan`] into a timely dataflow over differential collections.
//!
//! * **Time is the timely timestamp.** A fact holding on [a, b) is two updates: +1 at a,
//!   −1 at b. Every predicate's collection is kept 0/1 (`zero_one`; `distinct` inside `iterate`).
//! * **Offsets are delays.** A body atom `p(X, T-k)` reads p's collection delayed by k.
//! * **Components are scopes.** Each component is rendered in its own region; a component
//!   that recurses at offset 0 runs in `iterate` (one `Variable` per predicate).
//! * **Joins and negation.** A positive atom joins the bindings so far on its shared
//!   variables; a negated one is an antijoin against its projection. Over time points they
//!   are the hash-map operators of [`hash_join`] (no history kept); inside `iterate`,
//!   differential's `join_core` and `antijoin` (the projection made 0/1 with `distinct`,
//!   since antijoin multiplies by its counts). Records are exchanged by the join key, so
//!   objects are sharded over workers.
//! * **One pass per record.** Binding an atom's row, comparisons, assignments, join keys
//!   and the head projection are collected per rule ([`Pending`]) and done in one
//!   `flat_map` before the next join or at the end; each predicate is read (delayed,
//!   entered) and keyed once per scope ([`Reader`]) and shared by the rules that need it.
//! * **Windows** use the delay operators of [`window`]; **temporal SCCs** the time-stepping
//!   operator of [`stepper`].

pub mod hash_join;
mod slab;
pub mod stepper;
pub mod window;
pub mod zero_one;

use differential_dataflow::VecCollection;
use differential_dataflow::lattice::Lattice;
use differential_dataflow::operators::iterate::Variable;
use timely::order::Product;
use timely::progress::Timestamp;

use crate::plan::{Component, Plan};
use stgflow_eval::eval::{RulePlan, arith, compare};
use stgflow_lang::ir::{Atom, Expr, Literal, PredId, Program, Rule, Term, VarId};
use stgflow_lang::value::{Row, Value};

/// A collection of rows of one predicate.
pub type Coll<'s, T> = VecCollection<'s, T, Row, isize>;

/// A collection of facts tagged with their predicate.
pub type Facts<'s, T> = VecCollection<'s, T, (u32, Row), isize>;

/// Timestamps the rules are rendered at, with the cheapest way to make a collection 0/1:
/// [`zero_one::zero_one`] for the totally ordered time points, `distinct` inside
/// `iterate`.
pub trait Time: Timestamp + Lattice {
    fn zero_one<
        's,
        D: differential_dataflow::ExchangeData + differential_dataflow::Hashable + std::hash::Hash,
    >(
        collection: VecCollection<'s, Self, D, isize>,
    ) -> VecCollection<'s, Self, D, isize>;

    /// `logic(key, left value, right value)` for each pair of records with equal keys.
    fn join_keyed<'s, L>(left: Keyed<'s, Self>, right: Keyed<'s, Self>, logic: L) -> Coll<'s, Self>
    where
        L: FnMut(&Row, &Row, &Row) -> Option<Row> + 'static;

    /// The records of `left` whose key is not in `keys` (any counts: present means
    /// positive).
    fn antijoin<'s>(left: Keyed<'s, Self>, keys: Coll<'s, Self>) -> Keyed<'s, Self>;
}

/// Records keyed for a join: (key, record).
pub type Keyed<'s, T> = VecCollection<'s, T, (Row, Row), isize>;

impl Time for u64 {
    fn zero_one<
        's,
        D: differential_dataflow::ExchangeData + differential_dataflow::Hashable + std::hash::Hash,
    >(
        collection: VecCollection<'s, u64, D, isize>,
    ) -> VecCollection<'s, u64, D, isize> {
        zero_one::zero_one(collection)
    }

    fn join_keyed<'s, L>(left: Keyed<'s, u64>, right: Keyed<'s, u64>, logic: L) -> Coll<'s, u64>
    where
        L: FnMut(&Row, &Row, &Row) -> Option<Row> + 'static,
    {
        hash_join::join(left, right, logic)
    }

    fn antijoin<'s>(left: Keyed<'s, u64>, keys: Coll<'s, u64>) -> Keyed<'s, u64> {
        hash_join::antijoin(left, keys)
    }
}

impl Time for Product<u64, u64> {
    fn zero_one<
        's,
        D: differential_dataflow::ExchangeData + differential_dataflow::Hashable + std::hash::Hash,
    >(
        collection: VecCollection<'s, Product<u64, u64>, D, isize>,
    ) -> VecCollection<'s, Product<u64, u64>, D, isize> {
        collection.distinct()
    }

    fn join_keyed<'s, L>(
        left: Keyed<'s, Product<u64, u64>>,
        right: Keyed<'s, Product<u64, u64>>,
        logic: L,
    ) -> Coll<'s, Product<u64, u64>>
    where
        L: FnMut(&Row, &Row, &Row) -> Option<Row> + 'static,
    {
        left.arrange_by_key()
            .join_core(right.arrange_by_key(), logic)
    }

    fn antijoin<'s>(
        left: Keyed<'s, Product<u64, u64>>,
        keys: Coll<'s, Product<u64, u64>>,
    ) -> Keyed<'s, Product<u64, u64>> {
        // Differential's antijoin multiplies by the keys' counts: make them 0/1.
        left.antijoin(keys.distinct())
    }
}

/// One output stream of [`render`].
#[allow(
    missing_debug_implementations,
    reason = "differential's collections do not implement Debug"
)]
pub enum Output<'s> {
    /// The 0/1 collection of one predicate, with the predicate's id; the runtime's capture
    /// tags its rows.
    Predicate(u32, Coll<'s, u64>),
    /// The facts of a temporal SCC's predicates, tagged with their ids, straight from its
    /// operator; the capture keeps those of the output predicates. Splitting the stream by
    /// predicate cost a copy and a filter pass per predicate over all of it.
    Tagged(Facts<'s, u64>),
}

/// Builds the dataflow for `program`. `input` holds one collection per predicate (its
/// input facts), then the unit row's (see [`UNIT_TAG`]); the result holds the facts of
/// every predicate of `outputs` (and possibly of others, in [`Output::Tagged`] streams).
/// The runtime feeds each input collection from its own input handle and captures each
/// output: no operator splits a tagged input or tags the output.
pub fn render<'s>(
    program: &Program,
    plan: &Plan,
    input: Vec<Coll<'s, u64>>,
    outputs: &[PredId],
) -> Vec<Output<'s>> {
    let n = program.predicates.len();
    assert_eq!(
        input.len(),
        n + 1,
        "one input per predicate, then the unit row"
    );
    let scope = input[n].scope();
    let mut streams = input;
    let unit = streams.pop();
    let inputs: Vec<Option<Coll<'s, u64>>> = streams.into_iter().map(Some).collect();
    let empty = || -> Coll<'s, u64> {
        VecCollection::<'s, u64, Row, isize>::new(
            timely::dataflow::operators::vec::ToStream::to_stream(
                Vec::<(Row, u64, isize)>::new(),
                scope,
            ),
        )
    };
    // Input-only predicates hold their input facts. The runtime feeds each fact as +1
    // when it starts to hold and −1 when it stops, so these are 0/1 already.
    let mut holds: Vec<Option<Coll<'s, u64>>> = vec![None; n];
    let derived = program.derived();
    for p in 0..n {
        if !derived[p] {
            holds[p] = inputs[p].clone();
        }
    }
    let unit = unit.unwrap_or_else(empty);
    let read = read_by_components(program, plan);
    // Per predicate, the index in `tagged` of the temporal SCC stream it is output in.
    let mut tagged_in: Vec<Option<usize>> = vec![None; n];
    let mut tagged: Vec<Facts<'s, u64>> = Vec::new();
    for component in &plan.components {
        match component {
            Component::Window {
                pred,
                source,
                window,
            } => {
                let source = holds[*source].clone().unwrap_or_else(empty);
                let own = inputs[*pred].clone();
                holds[*pred] = Some(scope.region_named("Window", |region| {
                    let own = own.map(|own| own.enter_region(region));
                    window::lower(source.enter_region(region), own, *window).leave_region(scope)
                }));
            }
            Component::GatedWindow {
                pred,
                window_pred,
                source,
                window,
                gate,
                gate_offset,
            } => {
                let source = holds[*source].clone().unwrap_or_else(empty);
                let gate = delayed(holds[*gate].clone().unwrap_or_else(empty), *gate_offset);
                let (window_own, own) = (inputs[*window_pred].clone(), inputs[*pred].clone());
                holds[*pred] = Some(scope.region_named("GatedWindow", |region| {
                    window::gated(
                        source.enter_region(region),
                        window_own.map(|c| c.enter_region(region)),
                        own.map(|c| c.enter_region(region)),
                        gate.enter_region(region),
                        *window,
                    )
                    .leave_region(scope)
                }));
            }
            Component::Dataflow {
                preds,
                rules,
                recursive,
            } => {
                let results = scope.region_named("Stratum", |region| {
                    let read = |atom: &Atom| -> Coll<'_, u64> {
                        delayed(holds[atom.pred].clone().unwrap_or_else(empty), atom.offset)
                            .enter_region(region)
                    };
                    let unit_in = unit.clone().enter_region(region);
                    let own_input =
                        |p: PredId| inputs[p].clone().unwrap_or_else(empty).enter_region(region);
                    let reader = Reader::new(&read);
                    let out: Vec<(PredId, Coll<'_, u64>)> = if *recursive {
                        // The iteration's output, seen at the outer time, may hold a
                        // record's −1 and +1 of later rounds unconsolidated: windows
                        // (which delay only one sign) need consolidated 0/1 changes.
                        render_recursive(program, preds, rules, &read, &own_input, unit_in)
                            .into_iter()
                            .map(|(p, c)| (p, u64::zero_one(c)))
                            .collect()
                    } else {
                        preds
                            .iter()
                            .map(|&p| {
                                let mut parts = vec![own_input(p)];
                                for &r in rules.iter().filter(|&&r| program.rules[r].head.pred == p)
                                {
                                    parts.push(render_rule(
                                        &program.rules[r],
                                        &reader,
                                        unit_in.clone(),
                                    ));
                                }
                                (p, u64::zero_one(concat_all(parts)))
                            })
                            .collect()
                    };
                    out.into_iter()
                        .map(|(p, c)| (p, c.leave_region(scope)))
                        .collect::<Vec<_>>()
                });
                for (p, c) in results {
                    holds[p] = Some(c);
                }
            }
            Component::Stepper(stepper_plan) => {
                let mut sources = Vec::new();
                for &q in &stepper_plan.reads {
                    let c = holds[q].clone().unwrap_or_else(empty);
                    sources.push(c.map(move |row| (q as u32, row)));
                }
                for &p in &stepper_plan.preds {
                    if let Some(c) = inputs[p].clone() {
                        let channel = stepper::input_channel(p);
                        sources.push(c.map(move |row| (channel, row)));
                    }
                }
                if stepper_plan.reads_unit {
                    sources.push(unit.clone().map(|row| (UNIT_TAG, row)));
                }
                let source: Facts<'s, u64> = concat_all(sources);
                let out = stepper::render(program, stepper_plan, source);
                // Split out only the predicates that later components read.
                for &p in stepper_plan.preds.iter().filter(|&&p| read[p]) {
                    let tag = p as u32;
                    holds[p] = Some(
                        out.clone()
                            .filter(move |(q, _)| *q == tag)
                            .map(|(_, row)| row),
                    );
                }
                for &p in &stepper_plan.preds {
                    tagged_in[p] = Some(tagged.len());
                }
                tagged.push(out);
            }
        }
    }
    let mut tagged_used = vec![false; tagged.len()];
    let mut parts: Vec<Output<'s>> = Vec::new();
    for &p in outputs {
        match tagged_in[p] {
            Some(i) => tagged_used[i] = true,
            None => parts.push(Output::Predicate(
                p as u32,
                holds[p].clone().unwrap_or_else(empty),
            )),
        }
    }
    parts.extend(
        tagged
            .into_iter()
            .zip(tagged_used)
            .filter_map(|(stream, used)| used.then_some(Output::Tagged(stream))),
    );
    if parts.is_empty() {
        // Nothing to print (a program without rules): an empty output, not a panic.
        return vec![Output::Predicate(0, empty())];
    }
    parts
}

/// `c` read `offset` time points later: what holds at t is read at t + offset.
fn delayed(c: Coll<'_, u64>, offset: u32) -> Coll<'_, u64> {
    if offset == 0 {
        return c;
    }
    let k = u64::from(offset);
    c.delay(move |t| t + k)
}

/// Which predicates some component of `plan` reads (the others need no collection of
/// their own unless printed).
fn read_by_components(program: &Program, plan: &Plan) -> Vec<bool> {
    let mut read = vec![false; program.predicates.len()];
    for component in &plan.components {
        match component {
            Component::Window { source, .. } => read[*source] = true,
            Component::GatedWindow { source, gate, .. } => {
                read[*source] = true;
                read[*gate] = true;
            }
            Component::Dataflow { rules, .. } => {
                for literal in rules.iter().flat_map(|&r| &program.rules[r].body) {
                    if let Some(atom) = literal.atom() {
                        read[atom.pred] = true;
                    }
                }
            }
            Component::Stepper(stepper_plan) => {
                for &q in &stepper_plan.reads {
                    read[q] = true;
                }
            }
        }
    }
    read
}

/// Keeps `emptied` (cleared) in `pool` for reuse, when it has an allocation and `pool`
/// holds fewer than `most`: buffers that grow to a batch's size once, instead of again for
/// every batch (fresh memory costs page faults).
pub(crate) fn keep_spare<T>(pool: &mut Vec<Vec<T>>, mut emptied: Vec<T>, most: usize) {
    emptied.clear();
    if emptied.capacity() > 0 && pool.len() < most {
        pool.push(emptied);
    }
}

/// The earliest time either input of a binary operator may still send: `None` once both
/// are closed.
fn limit(
    a: &timely::progress::frontier::MutableAntichain<u64>,
    b: &timely::progress::frontier::MutableAntichain<u64>,
) -> Option<u64> {
    match (a.frontier().first(), b.frontier().first()) {
        (Some(&x), Some(&y)) => Some(x.min(y)),
        (x, y) => x.or(y).copied(),
    }
}

/// Moves an operator's capability up to its input frontier `limit` (the earliest time it
/// may still output at), or drops it once the input is closed (`None`).
fn follow_frontier(
    capability: &mut Option<timely::dataflow::operators::Capability<u64>>,
    limit: Option<u64>,
) {
    match limit {
        Some(f) => {
            if let Some(cap) = capability.as_mut() {
                if *cap.time() < f {
                    cap.downgrade(&f);
                }
            }
        }
        None => *capability = None,
    }
}

/// The tag of the unit row in the input: the runtime feeds `(UNIT_TAG, [])` once, at the
/// first time point of the timeline, and never retracts it. It is the start of rules
/// without a positive atom (`tick(T) :- 0 = 0.`), so such a rule holds from the first time
/// point on and not before: the time points before the timeline do not exist, and
/// `first(T) :- tick(T), not tick(T-1).` holds at the first time point only, as in the
/// reference evaluator. (A unit row at time 0 made `tick(T-1)` true at the start.)
pub const UNIT_TAG: u32 = u32::MAX;

fn concat_all<'s, T: Timestamp + Lattice, D: differential_dataflow::Data>(
    mut parts: Vec<VecCollection<'s, T, D, isize>>,
) -> VecCollection<'s, T, D, isize> {
    let first = parts.remove(0);
    first.concatenate(parts)
}

/// A component that recurses at offset 0: one variable per predicate, iterated to a
/// fixpoint at each time.
fn render_recursive<'s>(
    program: &Program,
    preds: &[PredId],
    rules: &[usize],
    read: &dyn Fn(&Atom) -> Coll<'s, u64>,
    own_input: &dyn Fn(PredId) -> Coll<'s, u64>,
    unit: Coll<'s, u64>,
) -> Vec<(PredId, Coll<'s, u64>)> {
    let outer = unit.scope();
    outer.iterative::<u64, _, _>(|inner| {
        let step = Product::new(Default::default(), 1);
        let mut variables = Vec::new();
        let mut current: Vec<(PredId, Coll<'_, Product<u64, u64>>)> = Vec::new();
        for &p in preds {
            let (variable, collection) = Variable::new(inner, step);
            variables.push((p, variable));
            current.push((p, collection));
        }
        let unit_inner = unit.enter(inner);
        let lookup = |atom: &Atom| -> Coll<'_, Product<u64, u64>> {
            if atom.offset == 0 {
                if let Some((_, c)) = current.iter().find(|(p, _)| *p == atom.pred) {
                    return c.clone();
                }
            }
            read(atom).enter(inner)
        };
        let reader = Reader::new(&lookup);
        let mut results = Vec::new();
        for (p, variable) in variables {
            let mut parts = vec![own_input(p).enter(inner)];
            for &r in rules.iter().filter(|&&r| program.rules[r].head.pred == p) {
                parts.push(render_rule(&program.rules[r], &reader, unit_inner.clone()));
            }
            let result = concat_all(parts).distinct();
            variable.set(result.clone());
            results.push((p, result.leave(outer)));
        }
        results
    })
}

/// Renders one rule: joins its positive atoms on shared variables, filters by negations
/// (antijoins), comparisons and assignments, and projects the head.
///
/// Work on one record at a time — binding the first atom's row, comparisons, assignments,
/// computing a join key, projecting the head — is not an operator each: it is collected
/// in a [`Pending`] and done in the one `flat_map` that comes before the next join or
/// antijoin, or at the end. A rule `q(X) :- p(X, Y), X > 3.` is a single `flat_map`.
fn render_rule<'s, T: Time>(
    rule: &Rule,
    reader: &Reader<'_, 's, T>,
    unit: Coll<'s, T>,
) -> Coll<'s, T> {
    let plan = RulePlan::new(rule, |_| false);
    let vars = rule.vars.len();
    let mut bound = vec![false; vars];
    let from_unit = || Pending {
        records: unit.clone(),
        start: Start::Unit,
        steps: Vec::new(),
    };
    let mut env: Option<Pending<'s, T>> = None;
    for literal in &plan.body {
        match literal {
            Literal::Positive(atom) => {
                let matcher = AtomMatcher::new(atom, &bound);
                env = Some(match env.take() {
                    None => Pending {
                        records: reader.collection(atom),
                        start: Start::Atom(atom.clone(), matcher),
                        steps: Vec::new(),
                    },
                    Some(pending) => {
                        let key: Vec<usize> = matcher.key.iter().map(|&(i, _)| i).collect();
                        let right = reader.keyed(atom, &matcher, key);
                        // The rule's first atom, as read: join the two atoms' keyed rows,
                        // which other rules of the scope share. (The join key's variables
                        // were all bound by that atom.)
                        let plain = pending.plain_atom().and_then(|(first_atom, first)| {
                            let positions = matcher
                                .key
                                .iter()
                                .map(|&(_, v)| {
                                    first.binds.iter().find(|(_, w)| *w == v).map(|&(i, _)| i)
                                })
                                .collect::<Option<Vec<usize>>>()?;
                            Some((first_atom, first, positions))
                        });
                        let records = match plain {
                            Some((first_atom, first, positions)) => {
                                let left = reader.keyed(&first_atom, &first, positions);
                                T::join_keyed(left, right, move |_key, row0, row1| {
                                    let env = first
                                        .bind(row0, smallvec::smallvec![Value::Int(0); vars])?;
                                    matcher.bind(row1, env)
                                })
                            }
                            None => {
                                let m1 = matcher.clone();
                                let left =
                                    pending.flat_map(vars, move |e| Some((m1.env_key(&e), e)));
                                T::join_keyed(left, right, move |_key, e, row| {
                                    matcher.bind(row, e.clone())
                                })
                            }
                        };
                        Pending {
                            records,
                            start: Start::Env,
                            steps: Vec::new(),
                        }
                    }
                });
                for v in atom.args.iter().filter_map(var_of) {
                    bound[v] = true;
                }
            }
            Literal::Negative(atom) => {
                let matcher = AtomMatcher::new(atom, &bound);
                let current = env.take().unwrap_or_else(from_unit);
                let (m1, m2) = (matcher.clone(), matcher);
                let keyed = current.flat_map(vars, move |e| Some((m1.env_key(&e), e)));
                let blocked = reader
                    .collection(atom)
                    .flat_map(move |row| m2.matches(&row).then(|| m2.row_key(&row)));
                env = Some(Pending {
                    records: T::antijoin(keyed, blocked).map(|(_, e)| e),
                    start: Start::Env,
                    steps: Vec::new(),
                });
            }
            Literal::Compare { op, lhs, rhs, .. } => {
                let mut current = env.take().unwrap_or_else(from_unit);
                current
                    .steps
                    .push(Step::Compare(*op, lhs.clone(), rhs.clone()));
                env = Some(current);
            }
            Literal::Assign { var, expr, .. } => {
                let mut current = env.take().unwrap_or_else(from_unit);
                current.steps.push(Step::Assign(*var, expr.clone()));
                env = Some(current);
                bound[*var] = true;
            }
        }
    }
    let head: Vec<Term> = rule.head.args.clone();
    env.unwrap_or_else(from_unit).flat_map(vars, move |e| {
        Some(
            head.iter()
                .map(|term| match term {
                    Term::Var(v) => e[*v],
                    Term::Const(c) => *c,
                    Term::Wildcard => Value::Int(0),
                })
                .collect(),
        )
    })
}

/// Which rows a keyed collection of [`Reader::keyed`] holds and how it is keyed: those of
/// `pred` read at `offset` that match `constants` and `repeats`, keyed by the values at
/// `key`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct KeyedId {
    pred: PredId,
    offset: u32,
    key: Vec<usize>,
    constants: Vec<(usize, Value)>,
    repeats: Vec<(usize, usize)>,
}

/// What the rules of one scope read: each predicate at each offset is read (delayed,
/// entered) once, and each keyed version of it is built once and shared by every join
/// that needs it — the four `distance` rules of CAVIAR, which join `coord` with itself,
/// share one instead of building eight.
struct Reader<'r, 's, T: Time> {
    source: &'r dyn Fn(&Atom) -> Coll<'s, T>,
    collections: std::cell::RefCell<hashbrown::HashMap<(PredId, u32), Coll<'s, T>>>,
    keyed: std::cell::RefCell<hashbrown::HashMap<KeyedId, Keyed<'s, T>>>,
}

impl<'r, 's, T: Time> Reader<'r, 's, T> {
    fn new(source: &'r dyn Fn(&Atom) -> Coll<'s, T>) -> Self {
        Reader {
            source,
            collections: Default::default(),
            keyed: Default::default(),
        }
    }

    /// `atom`'s predicate read at its offset.
    fn collection(&self, atom: &Atom) -> Coll<'s, T> {
        self.collections
            .borrow_mut()
            .entry((atom.pred, atom.offset))
            .or_insert_with(|| (self.source)(atom))
            .clone()
    }

    /// The rows of `atom` that `matcher` accepts, keyed by the values at `key`.
    fn keyed(&self, atom: &Atom, matcher: &AtomMatcher, key: Vec<usize>) -> Keyed<'s, T> {
        let id = KeyedId {
            pred: atom.pred,
            offset: atom.offset,
            key,
            constants: matcher.constants.clone(),
            repeats: matcher.repeats.clone(),
        };
        if let Some(keyed) = self.keyed.borrow().get(&id) {
            return keyed.clone();
        }
        let filter = AtomMatcher {
            key: Vec::new(),
            constants: id.constants.clone(),
            repeats: id.repeats.clone(),
            binds: Vec::new(),
        };
        let positions = id.key.clone();
        let keyed = self.collection(atom).flat_map(move |row| {
            filter.matches(&row).then(|| {
                let key: Row = positions
                    .iter()
                    .filter_map(|&i| row.get(i).copied())
                    .collect();
                (key, row)
            })
        });
        self.keyed.borrow_mut().insert(id, keyed.clone());
        keyed
    }
}

/// Where a [`Pending`]'s records come from.
enum Start {
    /// The records are bindings already.
    Env,
    /// The records are rows of the rule's first atom, to bind into fresh bindings.
    Atom(Atom, AtomMatcher),
    /// The record is the unit row: fresh bindings, nothing bound.
    Unit,
}

/// Per-record work on bindings, done within one `flat_map`.
#[derive(Clone, Debug)]
enum Step {
    Compare(stgflow_lang::syntax::ast::CmpOp, Expr, Expr),
    Assign(VarId, Expr),
}

impl Step {
    /// Applies the step to `env`; false when the record is filtered out.
    fn apply(&self, env: &mut Row) -> bool {
        match self {
            Step::Compare(op, lhs, rhs) => match (eval_row(lhs, env), eval_row(rhs, env)) {
                (Some(a), Some(b)) => compare(*op, a, b),
                _ => false,
            },
            Step::Assign(var, expr) => match eval_row(expr, env) {
                Some(value) => {
                    env[*var] = value;
                    true
                }
                None => false,
            },
        }
    }
}

/// A rule's bindings so far: a collection, and the per-record work still to do on it.
struct Pending<'s, T: Time> {
    records: Coll<'s, T>,
    start: Start,
    steps: Vec<Step>,
}

impl<'s, T: Time> Pending<'s, T> {
    /// The rule's first atom and its matcher, when the records are still its rows as read.
    fn plain_atom(&self) -> Option<(Atom, AtomMatcher)> {
        match &self.start {
            Start::Atom(atom, matcher) if self.steps.is_empty() => {
                Some((atom.clone(), matcher.clone()))
            }
            _ => None,
        }
    }

    /// Does the pending work and then `out` on each record, in one `flat_map`.
    fn flat_map<X: differential_dataflow::Data>(
        self,
        vars: usize,
        out: impl Fn(Row) -> Option<X> + 'static,
    ) -> VecCollection<'s, T, X, isize> {
        let Pending {
            records,
            start,
            steps,
        } = self;
        records.flat_map(move |record| {
            let mut env = match &start {
                Start::Env => record,
                Start::Atom(_, matcher) => {
                    matcher.bind(&record, smallvec::smallvec![Value::Int(0); vars])?
                }
                Start::Unit => smallvec::smallvec![Value::Int(0); vars],
            };
            for step in &steps {
                if !step.apply(&mut env) {
                    return None;
                }
            }
            out(env)
        })
    }
}

fn var_of(term: &Term) -> Option<VarId> {
    match term {
        Term::Var(v) => Some(*v),
        _ => None,
    }
}

/// How an atom's rows meet the bindings so far: which positions are keys (variables bound
/// before the atom), which must equal a constant or an earlier position, which bind.
#[derive(Clone, Debug)]
struct AtomMatcher {
    /// (position, variable) of variables bound before this atom: the join key.
    key: Vec<(usize, VarId)>,
    /// (position, constant).
    constants: Vec<(usize, Value)>,
    /// (position, earlier position) for variables repeated within the atom.
    repeats: Vec<(usize, usize)>,
    /// (position, variable) bound by this atom.
    binds: Vec<(usize, VarId)>,
}

impl AtomMatcher {
    fn new(atom: &Atom, bound: &[bool]) -> AtomMatcher {
        let mut matcher = AtomMatcher {
            key: Vec::new(),
            constants: Vec::new(),
            repeats: Vec::new(),
            binds: Vec::new(),
        };
        for (position, term) in atom.args.iter().enumerate() {
            match term {
                Term::Const(c) => matcher.constants.push((position, *c)),
                Term::Wildcard => {}
                Term::Var(v) if bound[*v] => matcher.key.push((position, *v)),
                Term::Var(v) => match matcher.binds.iter().find(|(_, w)| w == v) {
                    Some(&(first, _)) => matcher.repeats.push((position, first)),
                    None => matcher.binds.push((position, *v)),
                },
            }
        }
        matcher
    }

    fn matches(&self, row: &[Value]) -> bool {
        self.constants.iter().all(|&(i, c)| row.get(i) == Some(&c))
            && self.repeats.iter().all(|&(i, j)| row.get(i) == row.get(j))
    }

    fn row_key(&self, row: &[Value]) -> Row {
        self.key
            .iter()
            .filter_map(|&(i, _)| row.get(i).copied())
            .collect()
    }

    fn env_key(&self, env: &[Value]) -> Row {
        self.key.iter().map(|&(_, v)| env[v]).collect()
    }

    /// Binds the atom's new variables from `row` into `env` (after checking the row, and
    /// the key when there is no join).
    fn bind(&self, row: &[Value], mut env: Row) -> Option<Row> {
        if !self.matches(row) {
            return None;
        }
        for &(i, v) in &self.binds {
            env[v] = *row.get(i)?;
        }
        Some(env)
    }
}

/// Evaluates an expression whose variables are bound in `env` (the time variable is never
/// used here: rules that read it run in the stepper).
fn eval_row(expr: &Expr, env: &[Value]) -> Option<Value> {
    match expr {
        Expr::Var(v) => env.get(*v).copied(),
        Expr::Time => None,
        Expr::Const(c) => Some(*c),
        Expr::Binary(op, lhs, rhs) => arith(*op, eval_row(lhs, env)?, eval_row(rhs, env)?),
    }
}
