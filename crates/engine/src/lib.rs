//! The discrete-event kernel of stormsim.
//!
//! It knows nothing of services or requests: it offers virtual time
//! ([`SimTime`], [`SimDuration`]), an [`EventQueue`] that delivers events in
//! `(time, insertion sequence)` order with O(1) cancellable timers, and keyed
//! random streams ([`StreamKey`]) so that a run is a pure function of
//! `(model, seed)`, and the [`Slab`] its entities live in.
#![warn(missing_docs)]

mod queue;
mod rng;
mod slab;
mod time;

pub use queue::{EventQueue, TimerHandle};
pub use rng::{mix, StreamKey, StreamRng};
pub use slab::{prefetch, Key, Slab};
pub use time::{SimDuration, SimTime};
