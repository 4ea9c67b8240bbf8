//! Resilience settings from configuration files: Envoy, Istio, resilience4j
//! and gRPC service configs.

use crate::{ImportError, Imported, Problem, Source};

/// Imports configuration files of one kind.
pub fn import(source: Source, inputs: &[(String, String)]) -> Result<Imported, ImportError> {
    Err(ImportError::Invalid(
        inputs
            .iter()
            .map(|(file, _)| Problem {
                file: file.clone(),
                path: String::new(),
                message: format!("importing {source:?} configuration is not implemented yet"),
            })
            .collect(),
    ))
}
