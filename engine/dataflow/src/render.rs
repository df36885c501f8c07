//! Renders a [`Plan`] into a timely dataflow over differential collections.
//!
//! * **Time is the timely timestamp.** A fact holding on [a, b) is two updates: +1 at a,
//!   −1 at b. Every predicate's collection is kept 0/1 (`zero_one`; `distinct` inside `iterate`).
//! * **Offsets are delays.** A body atom `p(X, T-k)` reads p's collection delayed by k.
//! * **Components are scopes.** Each component is rendered in its own region; a component
//!   that recurses at offset 0 runs in `iterate` (one `Variable` per predicate).
//! * **Joins and negation.** A positive atom joins the bindings so far on its shared
//!   variables; a negated one is an antijoin against its projection. Over time points they
//!   are the hash-map operators of [`crate::operators::hash_join`] (no history kept); inside `iterate`,
//!   differential's `join_core` and `antijoin` (the projection made 0/1 with `distinct`,
//!   since antijoin multiplies by its counts). Records are exchanged by the join key, so
//!   objects are sharded over workers.
//! * **One pass per record** (see [`rule`]): a rule's per-record work is one `flat_map`
//!   before each join; each predicate is read and keyed once per scope.
//! * **Windows** use the delay operators of [`crate::operators::window`]; **temporal
//!   SCCs** of inertia's shape the persistence operator of [`crate::operators::persist`],
//!   the others the time-stepping operator of [`crate::operators::stepper`]; a predicate
//!   stamped with the time (LARS's `@`) the stamp operator of [`crate::operators::stamp`];
//!   a count over one atom the counting operator of [`crate::operators::count`].

mod rule;
mod time;

pub use time::Time;

use std::cell::Cell;
use std::rc::Rc;

use differential_dataflow::lattice::Lattice;
use differential_dataflow::operators::iterate::Variable;
use differential_dataflow::{AsCollection, VecCollection};
use timely::dataflow::operators::Inspect;
use timely::order::Product;
use timely::progress::Timestamp;

use crate::operators::{
    Coll, Facts, UNIT_TAG, count, cycle, hold, persist, records, stamp, stepper, window,
};
use crate::plan::{Component, CyclePlan, PersistPlan, Plan, Stamped, StepperPlan, Window};
pub(crate) use rule::AtomMatcher;
use rule::{Reader, render_rule};
use stgflow_lang::ir::{Atom, Literal, PredId, Program};
use stgflow_lang::value::Row;
use timely::dataflow::Scope;

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
///
/// With `counting`, each component's output updates on this worker are counted (an
/// `Inspect` on its outputs, which passes the containers on as they are). `at_sink` says
/// which windows leave their 0/1 closure, or their points' retractions too, to the sink.
pub fn render<'s>(
    program: &Program,
    plan: &Plan,
    input: Vec<Coll<'s, u64>>,
    outputs: &[PredId],
    counting: bool,
    at_sink: &AtSink,
) -> Rendered<'s> {
    let mut builder = Builder::new(program, plan, input, (outputs, at_sink));
    let mut operators = Vec::with_capacity(plan.components.len());
    let mut records = Vec::new();
    for component in &plan.components {
        let from = builder.scope.worker().peek_identifier();
        if counting {
            let counter = Rc::new(Cell::new(0));
            records.push(counter.clone());
            builder.counter = Some(counter);
        }
        match component {
            Component::Window {
                pred,
                source,
                window,
            } => builder.window(*pred, *source, *window),
            Component::GatedWindow {
                pred,
                window_pred,
                source,
                window,
                gate,
                gate_offset,
            } => builder.gated_window(*pred, *window_pred, *source, *window, (*gate, *gate_offset)),
            Component::Dataflow {
                preds,
                rules,
                recursive,
            } => builder.dataflow(preds, rules, *recursive),
            Component::Persist(persist_plan) => builder.persist(persist_plan),
            Component::Stamp { pred, source, head } => builder.stamp(*pred, *source, head),
            Component::Count { pred, rule } => builder.count(*pred, *rule),
            Component::Hold {
                pred,
                stop,
                source,
                gate,
            } => builder.hold(*pred, *stop, *source, *gate),
            Component::Stepper(stepper_plan) => builder.stepper(stepper_plan),
            Component::Cycle(cycle_plan) => builder.cycle(cycle_plan),
        }
        operators.push(from..builder.scope.worker().peek_identifier());
    }
    Rendered {
        outputs: builder.outputs(outputs),
        operators,
        records,
    }
}

/// What [`render`] built.
#[allow(
    missing_debug_implementations,
    reason = "differential's collections do not implement Debug"
)]
pub struct Rendered<'s> {
    pub outputs: Vec<Output<'s>>,
    /// Per component of the plan, in order, the range of operator identifiers its
    /// rendering allocated (a worker's identifiers are sequential): a profile attributes
    /// operators to components by them.
    pub operators: Vec<std::ops::Range<usize>>,
    /// With counting, per component, the updates it has output on this worker so far.
    pub records: Vec<Rc<Cell<u64>>>,
}

/// The dataflow as it is built, component by component: what each predicate holds so
/// far, and the tagged streams of the temporal SCCs.
struct Builder<'p, 's> {
    program: &'p Program,
    scope: Scope<'s, u64>,
    /// Each predicate's input facts.
    inputs: Vec<Option<Coll<'s, u64>>>,
    /// The unit row, fed once at the timeline's first time point.
    unit: Coll<'s, u64>,
    /// What each predicate holds, once its component is built.
    holds: Vec<Option<Coll<'s, u64>>>,
    /// Which predicates some component reads.
    read: Vec<bool>,
    /// Which predicates are printed (`render`'s `outputs`).
    printed: Vec<bool>,
    /// Which input predicates come as points ([`fed_as_points`]).
    points: Vec<bool>,
    /// Per predicate, the index in `tagged` of the temporal SCC stream it is output in.
    tagged_in: Vec<Option<usize>>,
    tagged: Vec<Facts<'s, u64>>,
    /// Counts the output updates of the component being built (`render`'s counting).
    counter: Option<Rc<Cell<u64>>>,
    /// What the sink takes over (`render`'s `at_sink`).
    at_sink: &'p AtSink,
}

impl<'p, 's> Builder<'p, 's> {
    fn new(
        program: &'p Program,
        plan: &Plan,
        input: Vec<Coll<'s, u64>>,
        (outputs, at_sink): (&[PredId], &'p AtSink),
    ) -> Self {
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
        // Input-only predicates hold their input facts. The runtime feeds each fact as +1
        // when it starts to hold and −1 when it stops, so these are 0/1 already.
        let derived = program.derived();
        let holds = (0..n)
            .map(|p| (!derived[p]).then(|| inputs[p].clone()).flatten())
            .collect();
        let mut builder = Builder {
            program,
            scope,
            inputs,
            unit: empty(scope),
            holds,
            read: read_by_components(program, &plan.components),
            printed: (0..n).map(|p| outputs.contains(&p)).collect(),
            points: fed_as_points(program, plan, outputs),
            tagged_in: vec![None; n],
            tagged: Vec::new(),
            counter: None,
            at_sink,
        };
        if let Some(unit) = unit {
            builder.unit = unit;
        }
        builder
    }

    /// `collection`, its updates counted for the component being built (with counting).
    fn counted<D: timely::ExchangeData>(
        &self,
        collection: VecCollection<'s, u64, D, isize>,
    ) -> VecCollection<'s, u64, D, isize> {
        let Some(counter) = self.counter.clone() else {
            return collection;
        };
        collection
            .inner
            .inspect_core(move |event| {
                if let Ok((_, data)) = event {
                    counter.set(counter.get() + data.len() as u64);
                }
            })
            .as_collection()
    }

    /// What `pred` holds (nothing, if no component has defined it).
    fn holding(&self, pred: PredId) -> Coll<'s, u64> {
        self.holds[pred]
            .clone()
            .unwrap_or_else(|| empty(self.scope))
    }

    fn window(&mut self, pred: PredId, source: PredId, shape: Window) {
        let points = self.points[source];
        let source = self.holding(source);
        if matches!(self.at_sink.retracted.get(pred), Some(Some(_))) {
            // Its points as they are: the sink takes each back itself.
            self.holds[pred] = Some(self.counted(source));
            return;
        }
        let counted = self.at_sink.closed.get(pred).copied().unwrap_or(false);
        let own = self.inputs[pred].clone();
        let scope = self.scope;
        let held = scope.region_named("Window", |region| {
            let (source, own) = (
                source.enter_region(region),
                own.map(|own| own.enter_region(region)),
            );
            match shape {
                Window::Diamond(d) if counted => window::counted_points(source, own, d),
                _ => window::lower(source, own, shape, points),
            }
            .leave_region(scope)
        });
        self.holds[pred] = Some(self.counted(held));
    }

    fn gated_window(
        &mut self,
        pred: PredId,
        window_pred: PredId,
        source: PredId,
        shape: Window,
        (gate, gate_offset): (PredId, u32),
    ) {
        let source = self.holding(source);
        let gate = delayed(self.holding(gate), gate_offset);
        let (window_own, own) = (self.inputs[window_pred].clone(), self.inputs[pred].clone());
        let scope = self.scope;
        let held = scope.region_named("GatedWindow", |region| {
            window::gated(
                source.enter_region(region),
                window_own.map(|c| c.enter_region(region)),
                own.map(|c| c.enter_region(region)),
                gate.enter_region(region),
                shape,
            )
            .leave_region(scope)
        });
        self.holds[pred] = Some(self.counted(held));
    }

    /// `pred`'s facts as `source`'s stamped with their time points (`operators::stamp`),
    /// with `pred`'s own input facts.
    fn stamp(&mut self, pred: PredId, source: PredId, head: &[Stamped]) {
        let points = self.points[pred];
        let source = self.holding(source);
        let own = self.inputs[pred].clone();
        let scope = self.scope;
        let head = head.to_vec();
        let own = own.unwrap_or_else(|| empty(scope));
        let held = scope.region_named("Stamp", |region| {
            let (source, own) = (source.enter_region(region), own.enter_region(region));
            match points {
                true => stamp::points(source, own, head),
                false => stamp::render(source, own, head),
            }
            .leave_region(scope)
        });
        self.holds[pred] = Some(self.counted(held));
    }

    /// `pred` holding `source`'s facts that hold where `gate` does, for as long as
    /// `source` holds them (`operators::hold`); `stop`, which nothing else reads, is not
    /// built.
    fn hold(&mut self, pred: PredId, stop: PredId, source: PredId, gate: PredId) {
        let (source, gate) = (self.holding(source), self.holding(gate));
        let scope = self.scope;
        let own = self.inputs[pred].clone().unwrap_or_else(|| empty(scope));
        let stop_own = self.inputs[stop].clone().unwrap_or_else(|| empty(scope));
        let held = scope.region_named("Hold", |region| {
            hold::render(
                source.enter_region(region),
                own.enter_region(region),
                stop_own.enter_region(region),
                gate.enter_region(region),
            )
            .leave_region(scope)
        });
        self.holds[pred] = Some(self.counted(held));
    }

    /// Rules with no recursion through time, in a region (`iterate` inside it when they
    /// recurse at offset 0).
    fn dataflow(&mut self, preds: &[PredId], rules: &[usize], recursive: bool) {
        let program = self.program;
        let scope = self.scope;
        let this = &*self;
        let results = scope.region_named("Stratum", |region| {
            let read = |atom: &Atom| -> Coll<'_, u64> {
                delayed(this.holding(atom.pred), atom.offset).enter_region(region)
            };
            let unit_in = this.unit.clone().enter_region(region);
            let own_input = |p: PredId| {
                this.inputs[p]
                    .clone()
                    .unwrap_or_else(|| empty(scope))
                    .enter_region(region)
            };
            let reader = Reader::new(&read);
            let out: Vec<(PredId, Coll<'_, u64>)> = if recursive {
                // The iteration's output, seen at the outer time, may hold a record's −1
                // and +1 of later rounds unconsolidated: windows (which delay only one
                // sign) need consolidated 0/1 changes.
                render_recursive(program, preds, rules, &read, &own_input, unit_in)
                    .into_iter()
                    .map(|(p, c)| (p, u64::zero_one(c)))
                    .collect()
            } else {
                preds
                    .iter()
                    .map(|&p| {
                        let mut parts = vec![own_input(p)];
                        parts.extend(rules_of(program, p, rules, &reader, &unit_in));
                        (p, u64::zero_one(concat_all(parts)))
                    })
                    .collect()
            };
            out.into_iter()
                .map(|(p, c)| (p, c.leave_region(scope)))
                .collect::<Vec<_>>()
        });
        for (p, c) in results {
            self.holds[p] = Some(self.counted(c));
        }
    }

    /// A temporal SCC of inertia's shape on the persistence operator: the start rules that
    /// are not copies as dataflow rules in front of it, its other inputs tagged by slot.
    fn persist(&mut self, persist_plan: &PersistPlan) {
        let program = self.program;
        let pred = persist_plan.pred;
        // The copies are the operator's own (see `operators::persist`).
        let starts = self
            .starts(pred, &persist_plan.starts)
            .unwrap_or_else(|| empty(self.scope));
        let mut sources = vec![records::map(starts, |row| (0, row))];
        // One input per predicate, however many offsets it is read at: the operator
        // applies them.
        let inputs = persist_plan.inputs();
        for (i, &q) in inputs.iter().enumerate() {
            let tag = 1 + i as u32;
            // A predicate the operator copies into its slots itself comes with its own input
            // facts only.
            let filled =
                (persist_plan.slot_copies.iter()).any(|&r| program.rules[r].head.pred == q);
            let facts = if filled {
                self.inputs[q].clone().unwrap_or_else(|| empty(self.scope))
            } else {
                self.holding(q)
            };
            sources.push(records::map(facts, move |row| (tag, row)));
        }
        if let Some((term, _)) = &persist_plan.term {
            if let Some(own) = self.inputs[*term].clone() {
                let tag = 1 + inputs.len() as u32;
                sources.push(records::map(own, move |row| (tag, row)));
            }
        }
        for (i, (derived, _)) in persist_plan.derived.iter().enumerate() {
            if let Some(own) = self.inputs[*derived].clone() {
                let tag = 2 + (inputs.len() + i) as u32;
                sources.push(records::map(own, move |row| (tag, row)));
            }
        }
        // A derived predicate's changes are output where another component reads it or
        // it is printed.
        let emitted: Vec<PredId> = (persist_plan.derived.iter())
            .map(|(d, _)| *d)
            .filter(|&d| self.read[d] || self.printed[d])
            .collect();
        let out = persist::render(program, persist_plan, &emitted, concat_all(sources));
        let preds: Vec<PredId> = std::iter::once(pred)
            .chain(persist_plan.term.as_ref().map(|(t, _)| *t))
            .chain(emitted)
            .collect();
        self.tagged_output(&preds, out);
    }

    /// What a temporal SCC's operator takes as given facts of `pred`: its input facts and
    /// what those of `rules` with `pred`'s head derive (rules that read nothing of the SCC),
    /// rendered as dataflow rules in a region of their own; `None` when there is nothing.
    fn starts(&self, pred: PredId, rules: &[usize]) -> Option<Coll<'s, u64>> {
        let program = self.program;
        let rules: Vec<usize> = rules
            .iter()
            .copied()
            .filter(|&r| program.rules[r].head.pred == pred)
            .collect();
        if rules.is_empty() {
            return self.inputs[pred].clone();
        }
        let scope = self.scope;
        let this = self;
        Some(scope.region_named("Starts", |region| {
            let read = |atom: &Atom| -> Coll<'_, u64> {
                delayed(this.holding(atom.pred), atom.offset).enter_region(region)
            };
            let reader = Reader::new(&read);
            let unit_in = this.unit.clone().enter_region(region);
            let mut parts = Vec::new();
            if let Some(own) = this.inputs[pred].clone() {
                parts.push(own.enter_region(region));
            }
            for &r in &rules {
                parts.push(render_rule(&program.rules[r], &reader, unit_in.clone()));
            }
            concat_all(parts).leave_region(scope)
        }))
    }

    /// A temporal SCC's tagged output: split out only the predicates that later
    /// components read; the rest is captured as it is.
    fn tagged_output(&mut self, preds: &[PredId], out: Facts<'s, u64>) {
        let out = self.counted(out);
        for &p in preds.iter().filter(|&&p| self.read[p]) {
            let tag = p as u32;
            self.holds[p] = Some(records::flat_map(out.clone(), move |(q, row)| {
                (q == tag).then_some(row)
            }));
        }
        for &p in preds {
            self.tagged_in[p] = Some(self.tagged.len());
        }
        self.tagged.push(out);
    }

    /// A count over one atom on the counting operator, over the atom's predicate and
    /// `pred`'s own input facts.
    fn count(&mut self, pred: PredId, rule: usize) {
        let Some(atom) = self.program.rules[rule].body.iter().find_map(|l| l.atom()) else {
            return;
        };
        let counted = self.holding(atom.pred);
        let out = count::render(self.program, pred, rule, counted, self.inputs[pred].clone());
        self.tagged_output(&[pred], out);
    }

    /// A temporal SCC (or rules reading the time) on the time-stepping operator, its
    /// input tagged by predicate.
    fn stepper(&mut self, stepper_plan: &StepperPlan) {
        let mut sources = Vec::new();
        for &q in &stepper_plan.reads {
            sources.push(records::map(self.holding(q), move |row| (q as u32, row)));
        }
        for &p in &stepper_plan.preds {
            if let Some(c) = self.starts(p, &stepper_plan.starts) {
                let channel = stepper::input_channel(p);
                sources.push(records::map(c, move |row| (channel, row)));
            }
        }
        if stepper_plan.reads_unit {
            sources.push(records::map(self.unit.clone(), |row| (UNIT_TAG, row)));
        }
        let source: Facts<'s, u64> = concat_all(sources);
        let out = stepper::render(self.program, stepper_plan, source, None);
        self.tagged_output(&stepper_plan.preds, out);
    }

    /// A temporal SCC without a key as a loop through time: its rules as dataflow rules,
    /// each predicate made 0/1 after those its rules read at offset 0, and each read a
    /// time point back or more through its changes fed back a time point later
    /// (`operators::cycle`).
    fn cycle(&mut self, cycle_plan: &CyclePlan) {
        use timely::dataflow::operators::{ConnectLoop, Feedback};
        if !cycle_plan.steps.is_empty() {
            return self.cycle_in_steps(cycle_plan);
        }
        let program = self.program;
        let scope = self.scope;
        let this = &*self;
        let preds = &cycle_plan.preds;
        let results = scope.region_named("Cycle", |region| {
            // The predicates read a time point back or more, each with its feedback edge.
            let mut handles = Vec::new();
            let mut fed: hashbrown::HashMap<PredId, Coll<'_, u64>> = Default::default();
            let atoms = (cycle_plan.rules.iter())
                .flat_map(|&r| program.rules[r].body.iter().filter_map(|l| l.atom()));
            for atom in atoms.filter(|a| a.offset > 0 && preds.contains(&a.pred)) {
                if !fed.contains_key(&atom.pred) {
                    let (handle, stream) = region.feedback(1);
                    handles.push((atom.pred, handle));
                    fed.insert(atom.pred, stream.as_collection());
                }
            }
            let built: std::cell::RefCell<hashbrown::HashMap<PredId, Coll<'_, u64>>> =
                Default::default();
            let read = |atom: &Atom| -> Coll<'_, u64> {
                match (fed.get(&atom.pred), atom.offset) {
                    (_, 0) if preds.contains(&atom.pred) => built.borrow()[&atom.pred].clone(),
                    (Some(back), k) if k > 0 => delayed(back.clone(), k - 1),
                    _ => delayed(this.holding(atom.pred), atom.offset).enter_region(region),
                }
            };
            let reader = Reader::new(&read);
            let unit_in = this.unit.clone().enter_region(region);
            for &p in preds {
                let mut parts = Vec::new();
                if let Some(own) = this.inputs[p].clone() {
                    parts.push(own.enter_region(region));
                }
                parts.extend(rules_of(program, p, &cycle_plan.rules, &reader, &unit_in));
                let held = match parts.is_empty() {
                    true => empty(scope).enter_region(region),
                    false => u64::zero_one(concat_all(parts)),
                };
                built.borrow_mut().insert(p, held);
            }
            let built = built.into_inner();
            for (p, handle) in handles {
                cycle::next_point(built[&p].clone(), unit_in.clone())
                    .inner
                    .connect_loop(handle);
            }
            (preds.iter())
                .map(|&p| (p, built[&p].clone().leave_region(scope)))
                .collect::<Vec<_>>()
        });
        for (p, c) in results {
            self.holds[p] = Some(self.counted(c));
        }
    }

    /// A loop through time in keyed steps ([`CyclePlan::steps`]): each step the
    /// time-stepping operator over its own key, its start rules as dataflow rules in front
    /// of it, reading the steps before it as they are and those after it a time point late,
    /// through the loop's feedback edges. A step's operator reads a predicate fed back as
    /// it held a time point before, so its rules read it an offset less.
    fn cycle_in_steps(&mut self, cycle_plan: &CyclePlan) {
        use timely::dataflow::operators::{ConnectLoop, Feedback};
        let program = self.program;
        let scope = self.scope;
        let this = &*self;
        let steps = &cycle_plan.steps;
        let step_of = |p: PredId| steps.iter().position(|s| s.preds.contains(&p));
        let results = scope.region_named("Cycle", |region| {
            let unit_in = this.unit.clone().enter_region(region);
            // What a step reads of a later one (a time point back or more, by the order of
            // the steps), each predicate with its feedback edge.
            let mut handles = Vec::new();
            let mut fed: hashbrown::HashMap<PredId, Coll<'_, u64>> = Default::default();
            for (i, step) in steps.iter().enumerate() {
                let atoms = (step.rules.iter().chain(&step.starts))
                    .flat_map(|&r| program.rules[r].body.iter().filter_map(|l| l.atom()));
                for atom in atoms {
                    if step_of(atom.pred).is_some_and(|j| j > i) && !fed.contains_key(&atom.pred) {
                        let (handle, stream) = region.feedback(1);
                        handles.push((atom.pred, handle));
                        fed.insert(atom.pred, stream.as_collection());
                    }
                }
            }
            let built: std::cell::RefCell<hashbrown::HashMap<PredId, Coll<'_, u64>>> =
                Default::default();
            for (i, step) in steps.iter().enumerate() {
                let read = |atom: &Atom| -> Coll<'_, u64> {
                    match step_of(atom.pred) {
                        Some(j) if j < i => {
                            delayed(built.borrow()[&atom.pred].clone(), atom.offset)
                        }
                        // A later step's predicate is read a time point back or more.
                        Some(_) => delayed(fed[&atom.pred].clone(), atom.offset.saturating_sub(1)),
                        None => delayed(this.holding(atom.pred), atom.offset).enter_region(region),
                    }
                };
                let reader = Reader::new(&read);
                let mut sources = Vec::new();
                for &p in &step.preds {
                    let mut parts = Vec::new();
                    if let Some(own) = this.inputs[p].clone() {
                        parts.push(own.enter_region(region));
                    }
                    parts.extend(rules_of(program, p, &step.starts, &reader, &unit_in));
                    if !parts.is_empty() {
                        let channel = stepper::input_channel(p);
                        sources.push(records::map(concat_all(parts), move |row| (channel, row)));
                    }
                }
                let mut lagged = Vec::new();
                for &q in &step.reads {
                    let facts = match step_of(q) {
                        Some(j) if j < i => built.borrow()[&q].clone(),
                        Some(_) => {
                            lagged.push(q);
                            fed[&q].clone()
                        }
                        None => this.holding(q).enter_region(region),
                    };
                    sources.push(records::map(facts, move |row| (q as u32, row)));
                }
                let shifted;
                let rules_read = if lagged.is_empty() {
                    program
                } else {
                    let mut copy = program.clone();
                    for &r in &step.rules {
                        for literal in &mut copy.rules[r].body {
                            if let Literal::Positive(atom) | Literal::Negative(atom) = literal {
                                if lagged.contains(&atom.pred) {
                                    atom.offset = atom.offset.saturating_sub(1);
                                }
                            }
                        }
                    }
                    shifted = copy;
                    &shifted
                };
                if sources.is_empty() {
                    let nothing = empty(scope).enter_region(region);
                    sources.push(records::map(nothing, |row| (0, row)));
                }
                let bound = Some(unit_in.clone());
                let out = stepper::render(rules_read, step, concat_all(sources), bound);
                let mut built = built.borrow_mut();
                for &p in &step.preds {
                    let tag = p as u32;
                    let facts =
                        records::flat_map(out.clone(), move |(q, row)| (q == tag).then_some(row));
                    built.insert(p, facts);
                }
            }
            let built = built.into_inner();
            for (p, handle) in handles {
                cycle::next_point(built[&p].clone(), unit_in.clone())
                    .inner
                    .connect_loop(handle);
            }
            (cycle_plan.preds.iter())
                .map(|&p| (p, built[&p].clone().leave_region(scope)))
                .collect::<Vec<_>>()
        });
        for (p, c) in results {
            self.holds[p] = Some(self.counted(c));
        }
    }

    /// The streams to capture: one per printed predicate, or the tagged stream of its
    /// temporal SCC.
    fn outputs(self, outputs: &[PredId]) -> Vec<Output<'s>> {
        let mut tagged_used = vec![false; self.tagged.len()];
        let mut parts: Vec<Output<'s>> = Vec::new();
        for &p in outputs {
            match self.tagged_in[p] {
                Some(i) => tagged_used[i] = true,
                None => parts.push(Output::Predicate(p as u32, self.holding(p))),
            }
        }
        parts.extend(
            self.tagged
                .into_iter()
                .zip(tagged_used)
                .filter_map(|(stream, used)| used.then_some(Output::Tagged(stream))),
        );
        if parts.is_empty() {
            // Nothing to print (a program without rules): an empty output, not a panic.
            return vec![Output::Predicate(0, empty(self.scope))];
        }
        parts
    }
}

/// A collection with nothing in it.
fn empty(scope: Scope<'_, u64>) -> Coll<'_, u64> {
    VecCollection::new(timely::dataflow::operators::vec::ToStream::to_stream(
        Vec::<(Row, u64, isize)>::new(),
        scope,
    ))
}

/// `c` read `offset` time points later: what holds at t is read at t + offset.
fn delayed(c: Coll<'_, u64>, offset: u32) -> Coll<'_, u64> {
    if offset == 0 {
        return c;
    }
    records::delay(c, u64::from(offset))
}

/// The predicates whose facts flow as *points* — each fact +1 at each time point it is
/// given at or stamped at, nothing when it stops — instead of as changes: those read by
/// ♢ windows alone, printed nowhere, and either no rule's head (the runtime feeds their
/// input as it comes, diffed nowhere) or stamped from such a predicate
/// ([`Component::Stamp`]: a stamped fact holds at one time point, so the stamp of a
/// point is a point, and the stamped predicate's own input facts come as points too). A
/// ♢ window over points takes each fact's retraction d + 1 points after it itself, and
/// a stamp over points keeps no table of what holds: the input is neither diffed against
/// the previous time point nor sent twice (issue 23: ♢ and @ over a stream's atoms,
/// Laser's programs).
pub fn fed_as_points(program: &Program, plan: &Plan, outputs: &[PredId]) -> Vec<bool> {
    let n = program.predicates.len();
    let derived = program.derived();
    let free = |p: PredId| !outputs.contains(&p);
    let is_diamond = |c: &&Component| {
        matches!(
            c,
            Component::Window {
                window: Window::Diamond(_),
                ..
            }
        )
    };
    let by_diamonds_alone = |except: &dyn Fn(&Component) -> bool| {
        let mut windowed = vec![false; n];
        for component in plan.components.iter().filter(is_diamond) {
            if let Component::Window { source, .. } = component {
                windowed[*source] = true;
            }
        }
        let others = plan
            .components
            .iter()
            .filter(|c| !is_diamond(c) && !except(c));
        let read_otherwise = read_by_components(program, others);
        (0..n)
            .map(|p| windowed[p] && !read_otherwise[p])
            .collect::<Vec<bool>>()
    };
    // Stamps whose stamped predicate ♢ windows alone read, over a predicate no rule
    // derives.
    let windowed_alone = by_diamonds_alone(&|_| false);
    let stamps: Vec<(PredId, PredId)> = (plan.components.iter())
        .filter_map(|c| match c {
            Component::Stamp { pred, source, .. }
                if windowed_alone[*pred] && free(*pred) && !derived[*source] =>
            {
                Some((*pred, *source))
            }
            _ => None,
        })
        .collect();
    let is_point_stamp = |c: &Component| matches!(c, Component::Stamp { pred, .. } if stamps.iter().any(|(h, _)| h == pred));
    let mut read_as_stamped = vec![false; n];
    for &(_, source) in &stamps {
        read_as_stamped[source] = true;
    }
    // Read by ♢ windows and those stamps alone (at least one of them).
    let mut windowed = by_diamonds_alone(&is_point_stamp);
    let read = read_by_components(
        program,
        plan.components.iter().filter(|c| !is_point_stamp(c)),
    );
    for p in 0..n {
        windowed[p] |= read_as_stamped[p] && !read[p];
    }
    let mut points: Vec<bool> = (0..n)
        .map(|p| windowed[p] && !derived[p] && free(p))
        .collect();
    for (h, source) in stamps {
        points[h] = points[source];
    }
    points
}

/// What a sink that counts each printed fact's changes and prints the fact while its
/// count is positive ([`stgflow_io::sink::Sink::counts_holding`]: Laser's output) takes
/// over from the workers. A printed ♢ window over points ([`fed_as_points`]) that nothing
/// else reads leaves its 0/1 closure to it ([`window::counted_points`]: each point +n and
/// its −n d + 1 points later, no table); where its predicate takes no input facts
/// ([`Program::takes_input`]: a LARS rule head), its retractions too: its points go to
/// the sink as they are, and the sink takes each back d + 1 time points later itself,
/// by the fact's id there ([`stgflow_io::sink::Sink::retract_points`]). Every process
/// decides alike: the dataflow's shape depends on it.
#[derive(Clone, Debug, Default)]
pub struct AtSink {
    /// Per predicate: its window's 0/1 closure is the sink's.
    pub closed: Vec<bool>,
    /// Per predicate: its points' retractions are the sink's too, each this many time
    /// points after its point.
    pub retracted: Vec<Option<u64>>,
}

impl AtSink {
    /// What the sink takes over for `program`'s `plan`, `points` as [`fed_as_points`]
    /// gives them: nothing where the sink does not count (`counts`).
    pub fn new(
        program: &Program,
        plan: &Plan,
        outputs: &[PredId],
        points: &[bool],
        counts: bool,
    ) -> AtSink {
        let n = program.predicates.len();
        let mut at_sink = AtSink {
            closed: vec![false; n],
            retracted: vec![None; n],
        };
        if !counts {
            return at_sink;
        }
        let read = read_by_components(program, &plan.components);
        for component in &plan.components {
            if let Component::Window {
                pred,
                source,
                window: Window::Diamond(d),
            } = *component
            {
                if points[source] && outputs.contains(&pred) && !read[pred] {
                    at_sink.closed[pred] = true;
                    if !program.takes_input(pred) {
                        at_sink.retracted[pred] = Some(u64::from(d) + 1);
                    }
                }
            }
        }
        at_sink
    }
}

/// Which predicates some of `components` read (the others need no collection of their
/// own unless printed).
fn read_by_components<'a>(
    program: &Program,
    components: impl IntoIterator<Item = &'a Component>,
) -> Vec<bool> {
    let mut read = vec![false; program.predicates.len()];
    // Every predicate the bodies of `rules` read.
    let bodies = |rules: &[usize], read: &mut Vec<bool>| {
        for atom in rules
            .iter()
            .flat_map(|&r| &program.rules[r].body)
            .filter_map(|l| l.atom())
        {
            read[atom.pred] = true;
        }
    };
    for component in components {
        match component {
            Component::Window { source, .. } => read[*source] = true,
            Component::GatedWindow { source, gate, .. } => {
                read[*source] = true;
                read[*gate] = true;
            }
            Component::Dataflow { rules, .. } => bodies(rules, &mut read),
            Component::Persist(persist_plan) => {
                bodies(&persist_plan.starts, &mut read);
                for &(q, _) in &persist_plan.slots {
                    read[q] = true;
                }
            }
            Component::Stamp { source, .. } => read[*source] = true,
            Component::Hold { source, gate, .. } => {
                read[*source] = true;
                read[*gate] = true;
            }
            Component::Count { rule, .. } => bodies(&[*rule], &mut read),
            Component::Cycle(cycle_plan) => bodies(&cycle_plan.rules, &mut read),
            Component::Stepper(stepper_plan) => {
                bodies(&stepper_plan.starts, &mut read);
                for &q in &stepper_plan.reads {
                    read[q] = true;
                }
            }
        }
    }
    read
}

/// Each of `rules` whose head is `pred`, rendered over `reader`.
fn rules_of<'s, T: Time>(
    program: &Program,
    pred: PredId,
    rules: &[usize],
    reader: &Reader<'_, 's, T>,
    unit: &Coll<'s, T>,
) -> Vec<Coll<'s, T>> {
    (rules.iter())
        .filter(|&&r| program.rules[r].head.pred == pred)
        .map(|&r| render_rule(&program.rules[r], reader, unit.clone()))
        .collect()
}

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
            parts.extend(rules_of(program, p, rules, &reader, &unit_inner));
            let result = concat_all(parts).distinct();
            variable.set(result.clone());
            results.push((p, result.leave(outer)));
        }
        results
    })
}
