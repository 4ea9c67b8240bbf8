//! Helpers shared by the simulator's integration tests.

use stormsim_model::load_model;
use stormsim_sim::analysis::Verdict;
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

/// The bundled model `models/<name>.json`, run with `overrides` at `seed`.
pub fn run_bundled(
    name: &str,
    overrides: &[(String, serde_json::Value)],
    seed: u64,
) -> Vec<VariantReport> {
    let path = format!("{}/../../models/{name}.json", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let model = load_model(&text, overrides, Some(seed)).unwrap_or_else(|e| panic!("{e:?}"));
    stormsim_sim::run_model(&model).variants
}

/// The report of the variant named `name`.
pub fn variant<'a>(reports: &'a [VariantReport], name: &str) -> &'a VariantReport {
    reports
        .iter()
        .find(|v| v.variant == name)
        .unwrap_or_else(|| panic!("no variant {name}"))
}

/// The recovery verdict of the variant named `name`.
pub fn verdict<'a>(reports: &'a [VariantReport], name: &str) -> &'a Verdict {
    variant(reports, name)
        .verdict
        .as_ref()
        .unwrap_or_else(|| panic!("{name}: the model asks for no verdict"))
}

/// Asserts that the variant named `name` ended `outcome`, saying why not.
pub fn assert_outcome(
    reports: &[VariantReport],
    name: &str,
    outcome: stormsim_sim::analysis::Outcome,
    seed: u64,
) {
    let v = verdict(reports, name);
    assert_eq!(v.outcome, outcome, "seed {seed}, {name}: {}", v.reason);
}

/// The 95% Wilson score interval of `k` of `n`.
pub fn wilson(k: usize, n: usize) -> (f64, f64) {
    let (z, n, p) = (1.959_964, n as f64, k as f64 / n as f64);
    let centre = (p + z * z / (2.0 * n)) / (1.0 + z * z / n);
    let half = z / (1.0 + z * z / n) * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt();
    ((centre - half).max(0.0), (centre + half).min(1.0))
}
