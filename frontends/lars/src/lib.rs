//! # stgflow-lars — not built yet
//!
//! This crate will hold the plain LARS front end: a parser for the Laser reasoner's rule
//! syntax and its translation to TD by Algorithm 2 of the STG paper (issue 4). It has no
//! functionality yet; it exists so that the workspace has its final layout and the
//! dependency rule "front ends depend on the engine's IR only" is fixed from the start.
