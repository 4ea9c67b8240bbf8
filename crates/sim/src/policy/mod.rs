//! The policy layers of a call edge, each a small state machine with pure
//! methods, tested alone. [`crate::call`] composes them in the order of S5 and
//! DESIGN.md, outside in: total deadline → retry loop → per-attempt timeout →
//! the call.

pub mod deadline;
pub mod retry;
