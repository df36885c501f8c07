//! # stgflow-ec — not built yet
//!
//! This crate will hold the Event Calculus front end: a parser for event descriptions in
//! the RTEC recogniser's syntax and their translation to TD by Algorithm 3 of the STG
//! paper (issue 5). It has no functionality yet; it exists so that the workspace has its
//! final layout and the dependency rule "front ends depend on the engine's IR only" is
//! fixed from the start.
