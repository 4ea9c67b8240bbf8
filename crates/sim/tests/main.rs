//! The simulator's claims, one module each: a bundled model's story (its
//! verdicts and figures), a mechanism's semantics, a policy's behaviour
//! against its library, queueing theory, and the verdict's error rates.
//! Linked as one test binary, so that the simulator is linked once rather
//! than once per file, and the claims run side by side on every core.

mod common;

mod admission_work;
mod at_once_delivery;
mod bulkhead;
mod cache_stampede;
mod catalog_incident;
mod circuit_breaker;
mod congestive_collapse;
mod cpu_saturation;
mod deadline_budgets;
mod deadline_chain;
mod edge_and_class_metrics;
mod error_spike;
mod fallback_regressions;
mod fallbacks;
mod fast_path;
mod forked_variants;
mod fuzz_models;
mod hardening;
mod hedge_budgets;
mod hedge_failures;
mod instances;
mod load_shapes;
mod load_shedding;
mod mechanisms;
mod overload_lifo;
mod parallel;
mod parallel_page;
mod processor_sharing;
mod queueing_theory;
mod retry_amplification;
mod retry_budgets;
mod run_limits;
mod summed_copies;
mod tail_at_scale;
mod thundering_herd;
mod timeline_and_retry_after;
mod verdicts;
mod verdicts_under_load;
