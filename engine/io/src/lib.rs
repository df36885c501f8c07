//! # stgflow-io — facts in, facts out
//!
//! What every evaluator shares around its evaluation, and what front ends extend:
//!
//! * [`stream`] — input streams read line by line (or in blocks, on threads), in the
//!   formats registered with it, with the stream contract checked: time order (or
//!   lateness within a bound), known predicates and arities, errors with
//!   file:line:column.
//! * [`drive`] — the timeline driver: merges sources by time and hands every time point
//!   of the timeline to an [`drive::Evaluator`] or any other [`drive::TimePoints`]; what a
//!   run did ([`drive::RunSummary`]) and what stopped it ([`drive::RunError`]).
//! * [`sink`] — output modes (`points`, `changes`, `intervals`, and snapshots a front end
//!   adds), deterministic within a time point.
//! * [`interrupt`] — stopping early and cleanly, on a signal or a lost cluster peer.
//! * [`merge`] — the k-way merge of workers' sorted runs (a tournament tree).
//! * `draw` (feature `draw`) — the font and colours stgflow's pictures share.
//!
//! Nothing here evaluates rules or knows a front end's language.

#[cfg(feature = "draw")]
pub mod draw;
pub mod drive;
pub mod interrupt;
pub mod merge;
pub mod sink;
pub mod stream;
