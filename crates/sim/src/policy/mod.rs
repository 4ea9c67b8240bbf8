//! The policy layers of a call edge and of a service, each a small state machine
//! with pure methods, tested alone. [`crate::call`] composes the edge's layers in
//! the order of S5 and DESIGN.md, outside in: total deadline → retry loop
//! (backoff, jitter, budget) → circuit breaker (asked once per attempt) →
//! per-attempt timeout → the call.

pub mod backoff;
pub mod balancer;
pub mod breaker;
pub mod budget;
pub mod concurrency;
pub mod deadline;
pub mod rate_limit;
pub mod retry;

use stormsim_engine::SimDuration;
use stormsim_model::{BreakerSpec, BudgetSpec, SlidingWindowType};

/// The budget a model asks for.
pub fn budget_config(spec: &BudgetSpec) -> budget::RetryBudgetConfig {
    use budget::*;
    match *spec {
        BudgetSpec::TokenBucket { ratio, max_tokens } => {
            RetryBudgetConfig::TokenBucket(TokenBucketConfig { max_tokens, ratio })
        }
        BudgetSpec::GrpcThrottling {
            max_tokens,
            token_ratio,
        } => RetryBudgetConfig::GrpcThrottling(GrpcThrottlingConfig {
            max_tokens,
            token_ratio,
        }),
        BudgetSpec::Finagle {
            ttl_s,
            min_retries_per_sec,
            percent_can_retry,
        } => RetryBudgetConfig::Finagle(FinagleBudgetConfig {
            ttl: SimDuration::from_ms(ttl_s * 1000.0),
            min_retries_per_sec,
            percent_can_retry,
        }),
        BudgetSpec::Envoy {
            budget_percent,
            min_retry_concurrency,
        } => RetryBudgetConfig::Envoy(EnvoyBudgetConfig {
            budget_percent,
            min_retry_concurrency,
        }),
    }
}

/// The breaker a model asks for.
pub fn breaker_config(spec: &BreakerSpec) -> breaker::BreakerConfig {
    use breaker::*;
    match *spec {
        BreakerSpec::Resilience4j {
            failure_rate_threshold,
            slow_call_rate_threshold,
            slow_call_duration_threshold_ms,
            sliding_window_type,
            sliding_window_size,
            minimum_number_of_calls,
            wait_duration_in_open_state_ms,
            permitted_number_of_calls_in_half_open_state,
            automatic_transition_from_open_to_half_open_enabled,
            max_wait_duration_in_half_open_state_ms,
        } => BreakerConfig {
            failure_detection: match sliding_window_type {
                SlidingWindowType::CountBased => FailureDetection::CountBased {
                    sliding_window_size,
                },
                SlidingWindowType::TimeBased => FailureDetection::TimeBased {
                    sliding_window_size,
                },
            },
            failure_rate_threshold,
            slow_call_rate_threshold,
            slow_call_duration_threshold: SimDuration::from_ms(slow_call_duration_threshold_ms),
            minimum_number_of_calls,
            wait_duration_in_open_state: SimDuration::from_ms(wait_duration_in_open_state_ms),
            automatic_transition_from_open_to_half_open_enabled,
            half_open_rule: HalfOpenRule::Rates {
                permitted_number_of_calls_in_half_open_state,
            },
            max_wait_duration_in_half_open_state: SimDuration::from_ms(
                max_wait_duration_in_half_open_state_ms,
            ),
        },
        BreakerSpec::Consecutive {
            failure_threshold,
            cooldown_ms,
            max_concurrent_probes,
            successes_to_close,
        } => {
            let mut config =
                BreakerConfig::s5_consecutive(failure_threshold, SimDuration::from_ms(cooldown_ms));
            config.half_open_rule = HalfOpenRule::ConsecutiveSuccesses {
                max_concurrent_probes,
                successes_to_close,
            };
            config
        }
    }
}
