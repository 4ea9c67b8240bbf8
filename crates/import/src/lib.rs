//! From what people already run to a model. Platform teams already write
//! their retry, timeout and breaker settings down (Envoy and Istio
//! configuration, resilience4j's `application.yml`, gRPC service configs) and
//! already collect traces (OpenTelemetry, Jaeger); this crate turns both into
//! model JSON a user can check, run and edit, and says what it could not
//! carry over instead of dropping it.
//!
//! - [`config`]: resilience settings from configuration files, as model
//!   fragments or a model skeleton;
//! - [`traces`]: a whole model (services, call edges, work distributions,
//!   arrival rate, error shares) inferred from spans.
//!
//! The output is plain JSON in the model format (`docs/model-format.md`):
//! this crate does not depend on the simulator, only the tests load what it
//! writes.

pub mod config;
mod imported;
pub mod traces;

pub use imported::{ImportError, Imported, Problem, Source, Unmapped};

/// Imports `inputs` (each a file's name, for messages, and its text) as
/// `source` says.
pub fn import(source: Source, inputs: &[(String, String)]) -> Result<Imported, ImportError> {
    match source {
        Source::Envoy | Source::Istio | Source::Resilience4j | Source::Grpc => {
            config::import(source, inputs)
        }
        Source::Otlp | Source::Jaeger => traces::import(source, inputs),
    }
}
