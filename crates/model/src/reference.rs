//! The model-format reference, generated from the serde types' JSON Schema.
