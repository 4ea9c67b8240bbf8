//! The stormsim world: workloads, services, call edges with their policy layers,
//! and the metrics and reports of a run.
//!
//! A run is a pure function of `(model, seed)`: no wall clock, no threads, no
//! hash-map iteration, and every random draw keyed by what it is about.
#![warn(missing_docs)]

mod call;
pub mod metrics;
pub mod policy;
pub mod report;
mod service;
mod simulator;
mod world;

pub use report::{RunReport, ServiceReport, VariantReport};
pub use simulator::{Event, LimitHit, Simulator};
use stormsim_model::{LoadedModel, Model};

/// Runs one variant.
pub fn run_variant(name: &str, model: &Model) -> VariantReport {
    Simulator::new(model).run(name)
}

/// Runs every variant of a model, in order.
pub fn run_model(model: &LoadedModel) -> RunReport {
    RunReport {
        model: model.name.clone(),
        description: model.description.clone(),
        seed: model.seed,
        variants: model
            .variants
            .iter()
            .map(|v| run_variant(&v.name, &v.model))
            .collect(),
    }
}
