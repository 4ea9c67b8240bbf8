//! What an import gives back, and why it can fail.

use serde::Serialize;

/// Where the input comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    /// Envoy cluster and route configuration (YAML or JSON).
    Envoy,
    /// Istio `VirtualService` and `DestinationRule` resources (YAML).
    Istio,
    /// resilience4j instances in a Spring Boot `application.yml`.
    Resilience4j,
    /// A gRPC service config (JSON).
    Grpc,
    /// OpenTelemetry traces as OTLP JSON (the collector's file exporter).
    Otlp,
    /// Jaeger's JSON (its UI's and API's export).
    Jaeger,
}

/// The result of an import.
#[derive(Clone, Debug, Serialize)]
pub struct Imported {
    /// Model JSON: a whole model, or the fragments the input describes.
    pub model: serde_json::Value,
    /// Whether [`Imported::model`] is a whole model that `stormsim check`
    /// can take as it is (else fragments to paste into one).
    pub whole_model: bool,
    /// What the input says that the model cannot carry, each named by
    /// where it is in the input: never dropped silently.
    pub unmapped: Vec<Unmapped>,
    /// What was inferred, and from how much of the input (lines for a
    /// person to read).
    pub notes: Vec<String>,
}

/// A setting of the input that has no counterpart in the model.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Unmapped {
    /// The file it is in.
    pub file: String,
    /// Where in the file, as a path of keys (`clusters[0].circuit_breakers.thresholds[0].max_pending_requests`).
    pub path: String,
    /// Why it does not map, and what the model does instead.
    pub message: String,
}

/// A problem with the input that stops the import.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Problem {
    /// The file it is in.
    pub file: String,
    /// Where in the file.
    pub path: String,
    /// What is wrong.
    pub message: String,
}

/// Why an import failed.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// The input cannot be read as its source's format: every problem found.
    #[error("{} problem(s) in the input", .0.len())]
    Invalid(Vec<Problem>),
}
