//! # stgflow-dataflow — the parallel engine
//!
//! A TD program as a timely/differential dataflow, sharded over worker threads and
//! processes:
//!
//! * [`plan`] — which rules run as differential operators, which are windows lowered to
//!   delay operators, which run in the time-stepping operator (recursion through time,
//!   the time as a value), and how each is keyed.
//! * [`render`] — the plan as a dataflow: time is the timely timestamp, offsets are
//!   delays, components are scopes, joins and negation are hash-map operators.
//! * [`runtime`] — the workers, the cluster, feeding input changes in and output out in
//!   order.

pub mod operators;
pub mod plan;
pub mod render;
pub mod runtime;
