//! # stgflow-eval — evaluators that step through time points themselves
//!
//! * [`eval`] — rule evaluation over hash sets: body planning, nested-loop joins with
//!   lookups for fully bound atoms, semi-naive stratum fixpoints, and the built-ins'
//!   semantics; shared by the evaluators below and by the dataflow engine's
//!   time-stepping operator.
//! * [`reference`] — the reference evaluator: per time point, per stratum, semi-naive,
//!   keeping only the forgetting horizon. The oracle for every other evaluation path.
//! * [`stg`] — Streaming Trigger Graphs: the paper's Algorithm 4 as written (nodes,
//!   p-/n-edges, k-compatibility, consistency, MIN DATALOG, forgetting), with a DOT dump.
//! * [`explain`] — derivation trees of facts (and why a fact does not hold), each TD rule
//!   with the front-end rule it came from.

pub mod eval;
pub mod explain;
pub mod reference;
pub mod stg;
