//! The plan's types: the components a program's SCCs become ([`Component`]), in
//! evaluation order ([`Plan`]), and what the operators of the larger kinds are told
//! ([`StepperPlan`], [`PersistPlan`], [`CyclePlan`]).

use hashbrown::HashMap;

use stgflow_lang::ir::PredId;
use stgflow_lang::value::Value;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Window {
    /// ⊞d♢: p held somewhere in [T−d, T].
    Diamond(u32),
    /// ⊞d□: p held at every point of [T−d, T].
    Box(u32),
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepperPlan {
    pub preds: Vec<PredId>,
    /// The rules the operator evaluates.
    pub rules: Vec<usize>,
    /// The component's rules that read none of its predicates (nor the time): dataflow
    /// rules in front of the operator, whose facts it takes as input of their heads, so
    /// that neither the key nor the per-key work has to cover them.
    pub starts: Vec<usize>,
    /// The component's rules per offset-0 stratum, in evaluation order, and whether the
    /// stratum recurses at offset 0.
    pub strata: Vec<(Vec<usize>, bool)>,
    /// Predicates defined outside the component that its rules read.
    pub reads: Vec<PredId>,
    /// The key position of every predicate the component reads or defines, when sharded.
    pub key: Option<HashMap<PredId, usize>>,
    /// Positions that refine the key into the key of a key's state: per predicate whose
    /// atoms all carry the refining variables, their positions. A predicate from outside
    /// whose atoms carry none of them (*partial*, read at offset 0 only) is read by every
    /// state of its key (`voted(V, M)` keyed by M and refined by V, with
    /// `status_start(M, null)` partial).
    pub sub_key: Option<HashMap<PredId, Vec<usize>>>,
    /// Predicates from outside, read at offset 0 only, that carry no key and that no
    /// stream fact feeds through the rules (RTEC's background knowledge, `thresholds(
    /// movingMin, M)` beside facts keyed by vessel): every worker holds them all and every
    /// state reads them, so that they do not keep the component from its key.
    pub global: Vec<PredId>,
    /// The largest offset of any body atom: how many past time points a key keeps.
    pub horizon: u32,
    /// A rule reads the time as a value, so results change every time point.
    pub uses_time: bool,
    /// A rule has no positive atom, so the component reads the unit row: it is evaluated
    /// from the timeline's first time point on, input or not (and has no key: such a
    /// rule's facts belong to no input's key).
    pub reads_unit: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Component {
    Window {
        pred: PredId,
        source: PredId,
        window: Window,
    },
    /// `pred(X…, T) :- window(X…, T), not gate(T-gate_offset)` where `window` is the
    /// window over `source` that nothing else reads (see [`crate::plan`]).
    GatedWindow {
        pred: PredId,
        window_pred: PredId,
        source: PredId,
        window: Window,
        gate: PredId,
        gate_offset: u32,
    },
    Dataflow {
        preds: Vec<PredId>,
        rules: Vec<usize>,
        recursive: bool,
    },
    Persist(PersistPlan),
    /// `pred(A…, T) :- source(X…, T), U = T.`: source's facts stamped with the time point
    /// they hold at (LARS's `@(U, p(X…))`), `head` saying where each argument comes from
    /// (see [`crate::plan`]).
    Stamp {
        pred: PredId,
        source: PredId,
        head: Vec<Stamped>,
    },
    /// `pred(G…, N, T) :- N = #count { C… : p(X…, T-k) }` (rule `rule`): counted per group
    /// by the counting operator (see [`crate::plan`]).
    Count {
        pred: PredId,
        rule: usize,
    },
    /// `pred(X…, T) :- source(X…, T), gate(T).`, `pred(X…, T) :- pred(X…, T-1), not
    /// stop(X…, T).` and `stop(X…, T) :- pred(X…, T-1), not source(X…, T).`: a fact of
    /// source that holds where the nullary gate does is held for as long as source holds
    /// it (LARS's `p__since_start`, □ clipped at the timeline start, with the gate the
    /// timeline's first time point), run by `operators::hold` (see [`crate::plan`]).
    Hold {
        pred: PredId,
        stop: PredId,
        source: PredId,
        gate: PredId,
    },
    Stepper(StepperPlan),
    Cycle(CyclePlan),
}

/// A temporal SCC rendered as a loop through time (see [`crate::plan`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CyclePlan {
    /// Its predicates in an order in which each rule reads at offset 0 only predicates
    /// before its head's.
    pub preds: Vec<PredId>,
    /// All its rules.
    pub rules: Vec<usize>,
    /// The largest offset of any body atom.
    pub horizon: u32,
    /// Its predicates in keyed steps, in the order of `preds`: each a time-stepping
    /// operator of its own key that reads the steps before it as they are and the steps
    /// after it a time point late, fed back (see [`crate::plan`]). Empty where some
    /// predicate has no key of its own: the loop is then the dataflow of its rules.
    pub steps: Vec<StepperPlan>,
}

/// Where an argument of a stamped fact comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stamped {
    /// The source fact's argument at this position.
    Arg(usize),
    /// The time point.
    Time,
    Const(Value),
}

/// A temporal SCC lowered to the persistence operator (see [`crate::plan`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PersistPlan {
    /// The predicate that persists.
    pub pred: PredId,
    /// Its rules that read neither it nor `term`: their facts start it (dataflow rules in
    /// front of the operator).
    pub starts: Vec<usize>,
    /// Its start rules that copy one atom of a predicate in `slots` (`h(X, v, T) :-
    /// h_i(X, v, T-1).`): the operator copies the atom's facts itself.
    pub copies: Vec<usize>,
    /// Its rules `pred(P…, T) :- pred(P…, T-1), not s(Q…, T-k), …`: a fact keeps holding
    /// while one of them lets it.
    pub keeps: Vec<usize>,
    /// Predicates of the SCC derived at T from what `pred` held at T-1 (read a point back,
    /// positively), from one another at offset 0 and from outside, and their rules, in an
    /// order in which each rule reads only those before it (RTEC's initiation of a value
    /// by a partial event for every instance that holds another, `voted(_V, M) = null`,
    /// and the terminations it implies). With them, `term` is `None`.
    pub derived: Vec<(PredId, Vec<usize>)>,
    /// Its rules that read a predicate of `derived` (at offset 0, with `derived`'s and
    /// outside atoms): their facts start it at T.
    pub derived_starts: Vec<usize>,
    /// Rules `q(…, T) :- p(…, T).` that copy one predicate into another that only this
    /// operator reads (RTEC's `voted_t(V, M, aye, T) :- voted_i(V, M, nay, T).`), both in
    /// `slots` at the offsets q is read at: the operator copies p's facts into q's slots
    /// itself, and q's component is gone (see `fuse_slot_copies`).
    pub slot_copies: Vec<usize>,
    /// The terminating predicate of the multi-valued form, and its rules.
    pub term: Option<(PredId, Vec<usize>)>,
    /// The predicates from outside the SCC that the keep rules' negations, `term`'s rules
    /// and the copies read, each with its offset: one input of the operator each.
    pub slots: Vec<(PredId, u32)>,
    /// The key position of `pred`, `term` and every predicate in `slots`.
    pub key: HashMap<PredId, usize>,
}

impl PersistPlan {
    /// The predicates of `slots`, each once, in order: the operator's inputs from outside
    /// (tags 1, 2, …; a predicate read at several offsets comes in once).
    pub fn inputs(&self) -> Vec<PredId> {
        let mut preds: Vec<PredId> = self.slots.iter().map(|&(q, _)| q).collect();
        preds.sort_unstable();
        preds.dedup();
        preds
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub components: Vec<Component>,
}
