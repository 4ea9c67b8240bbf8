//! The stormsim world: workloads, services, call edges with their policy layers,
//! and the metrics and reports of a run.
//!
//! A run is a pure function of `(model, seed)`: no wall clock, no threads, no
//! hash-map iteration, and every random draw keyed by what it is about.
#![warn(missing_docs)]

pub mod analysis;
mod arrivals;
mod attempts;
mod cache;
mod call;
mod cpu;
mod events;
mod fallback;
pub mod fast;
pub mod fork;
pub mod hosts;
mod join;
pub mod layout;
mod measurements;
pub mod memory;
pub mod metrics;
pub mod policy;
mod policy_state;
pub mod report;
mod service;
mod simulator;
pub mod timeseries;
mod topology;
pub mod trajectory;
pub mod twin;
mod world;
pub mod zombie;

pub use report::LimitHit;
pub use report::{RunReport, ServiceReport, VariantReport, WorkloadReport};
pub use simulator::{Event, Simulator, MAX_SERIES_ROWS};
use stormsim_model::{LoadedModel, Variant};

/// Runs one variant, its timeline included, and judges its recovery (with
/// its twin without the trigger where that can change the verdict:
/// [`twin`]).
pub fn run_variant(variant: &Variant) -> VariantReport {
    twin::judge_against_twin(variant, run_alone(variant))
}

/// Runs one variant, its verdict judged from its own run alone: on the
/// fast path where it may take it ([`fast`]), on the general engine
/// otherwise.
fn run_alone(variant: &Variant) -> VariantReport {
    fast::try_run(&variant.model, &variant.changes, &variant.name)
        .unwrap_or_else(|| Simulator::new(&variant.model, &variant.changes).run(&variant.name))
}

/// Runs every variant of a model, in order, on this thread. Library API: with
/// [`RunReport::summary_csv`] and [`RunReport::timeseries_csv`], what
/// `stormsim run` writes.
pub fn run_model(model: &LoadedModel) -> RunReport {
    report_of(model, model.variants.iter().map(run_variant).collect())
}

/// [`run_model`], the variants in parallel on the current rayon pool, each
/// variant that shares its past with an earlier one continuing that run
/// ([`fork`]): the same report, whatever the thread count (each run is a
/// function of its variant and the seed alone, and the reports are
/// collected in file order). Library API: the Python package runs a model
/// through here.
pub fn run_model_parallel(model: &LoadedModel) -> RunReport {
    report_of(model, fork::run_variants(&model.variants, &|_| {}))
}

fn report_of(model: &LoadedModel, variants: Vec<VariantReport>) -> RunReport {
    RunReport {
        model: model.name.clone(),
        description: model.description.clone(),
        seed: model.seed,
        variants,
    }
}
