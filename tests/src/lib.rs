//! Shared helpers for the cross-path tests.
