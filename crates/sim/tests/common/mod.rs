//! Helpers shared by the simulator's integration tests.
#![allow(dead_code)]

use stormsim_model::load_model;
use stormsim_sim::report::AttemptRecord;
use stormsim_sim::{ServiceReport, Simulator, VariantReport};

/// Runs the first variant of the model in `text`, keeping one record per
/// attempt: for tests that check exact instants on hand-built timelines.
pub fn run_recording_attempts(text: &str) -> (VariantReport, Vec<AttemptRecord>) {
    let model = load_model(text, &[], None).unwrap_or_else(|e| panic!("{e:?}"));
    let v = &model.variants[0];
    let mut report = Simulator::new(&v.model, &v.changes)
        .record_attempts()
        .run(&v.name);
    let records = std::mem::take(&mut report.attempts);
    (report, records)
}

/// The report of the service named `name`.
pub fn service<'a>(r: &'a VariantReport, name: &str) -> &'a ServiceReport {
    r.services
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no service {name:?}"))
}

/// An instant in milliseconds.
pub fn ms(t: stormsim_engine::SimTime) -> f64 {
    t.as_nanos() as f64 / 1e6
}
