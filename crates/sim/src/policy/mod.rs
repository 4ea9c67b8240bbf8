//! The policy layers of a call edge and of a service, each a small state machine
//! with pure methods, tested alone. `call.rs` composes the edge's layers in
//! the order of S5 and DESIGN.md, outside in: total deadline → retry loop
//! (backoff, jitter, budget) → circuit breaker (asked once per attempt) →
//! per-attempt timeout → the call.

pub mod backoff;
pub mod balancer;
pub mod breaker;
pub mod budget;
pub mod concurrency;
pub mod deadline;
pub mod hedge;
pub mod processor_sharing;
pub mod queue_discipline;
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
        BudgetSpec::RetryCircuitBreaker {
            max_failure_rate,
            window,
        } => RetryBudgetConfig::RetryCircuitBreaker(RetryCircuitBreakerConfig {
            max_failure_rate,
            window,
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

/// The rate limiter a model asks for.
pub fn rate_limiter(spec: &stormsim_model::RateLimitSpec) -> rate_limit::RateLimiter {
    use rate_limit::RateLimiterConfig as C;
    use stormsim_model::RateLimitSpec as S;
    rate_limit::RateLimiter::new(match *spec {
        S::TokenBucket { rate_per_s, burst } => C::TokenBucket { rate_per_s, burst },
        S::FixedWindow { limit, window_ms } => C::FixedWindow {
            limit,
            window: SimDuration::from_ms(window_ms),
        },
        S::SlidingWindow { limit, window_ms } => C::SlidingWindow {
            limit,
            window: SimDuration::from_ms(window_ms),
        },
        S::Resilience4j {
            limit_for_period,
            limit_refresh_period_ms,
            timeout_ms,
        } => C::Resilience4j {
            limit_for_period,
            limit_refresh_period: SimDuration::from_ms(limit_refresh_period_ms),
            timeout: SimDuration::from_ms(timeout_ms),
        },
    })
}

/// A client-side adaptive throttle: Google SRE's or Envoy's admission control.
#[derive(Clone)]
pub enum Throttle {
    /// SRE client-side throttling.
    Sre(rate_limit::AdaptiveThrottle),
    /// Envoy admission control.
    Envoy(rate_limit::AdmissionControl),
}

impl Throttle {
    /// The throttle a model asks for.
    pub fn new(spec: &stormsim_model::ThrottleSpec) -> Throttle {
        use stormsim_model::ThrottleSpec as S;
        match *spec {
            S::Sre { k, window_s } => {
                let window = SimDuration::from_ms(window_s * 1000.0);
                // One bucket per second of window, at least one.
                let buckets = (window_s.round() as u32).max(1);
                Throttle::Sre(rate_limit::AdaptiveThrottle::new(
                    rate_limit::AdaptiveThrottleConfig { window, buckets, k },
                ))
            }
            S::EnvoyAdmissionControl {
                sampling_window_s,
                sr_threshold,
                aggression,
                max_rejection_probability,
            } => Throttle::Envoy(rate_limit::AdmissionControl::new(
                rate_limit::AdmissionControlConfig {
                    sampling_window: SimDuration::from_ms(sampling_window_s * 1000.0),
                    sr_threshold,
                    aggression,
                    max_rejection_probability,
                    ..Default::default()
                },
            )),
        }
    }

    /// Reject this attempt locally?
    pub fn should_reject(
        &mut self,
        now: stormsim_engine::SimTime,
        rng: &mut stormsim_engine::StreamRng,
    ) -> bool {
        match self {
            Throttle::Sre(t) => t.should_reject(now, rng),
            Throttle::Envoy(t) => t.should_reject(now, rng),
        }
    }

    /// An attempt ended. `accepted`: the callee took it (it did not refuse it as
    /// overloaded, and it did not time out); `success`: it succeeded.
    pub fn record(&mut self, now: stormsim_engine::SimTime, accepted: bool, success: bool) {
        match self {
            Throttle::Sre(t) => {
                if accepted {
                    t.record_accept(now)
                }
            }
            Throttle::Envoy(t) => t.record(now, success),
        }
    }
}

/// The concurrency limit a model asks for.
pub fn concurrency_limit(
    spec: &stormsim_model::ConcurrencyLimitSpec,
) -> concurrency::ConcurrencyLimit {
    use concurrency::*;
    use stormsim_model::ConcurrencyLimitSpec as S;
    ConcurrencyLimit::new(match *spec {
        S::Fixed { limit } => LimitConfig::Fixed { limit },
        S::Aimd {
            initial_limit,
            min_limit,
            max_limit,
            backoff_ratio,
            timeout_ms,
        } => LimitConfig::Aimd(AimdConfig {
            initial_limit,
            min_limit,
            max_limit,
            backoff_ratio,
            timeout: SimDuration::from_ms(timeout_ms),
        }),
        S::Gradient2 {
            initial_limit,
            min_limit,
            max_concurrency,
            smoothing,
            rtt_tolerance,
        } => LimitConfig::Gradient2(Gradient2Config {
            initial_limit,
            min_limit,
            max_concurrency,
            smoothing,
            rtt_tolerance,
            ..Default::default()
        }),
    })
}

/// CoDel as a model asks for it.
pub fn codel(spec: &stormsim_model::CodelSpec) -> concurrency::CoDel {
    concurrency::CoDel::new(concurrency::CoDelConfig {
        target: SimDuration::from_ms(spec.target_ms),
        interval: SimDuration::from_ms(spec.interval_ms),
    })
}

/// The balancer a model asks for.
pub fn balancer_kind(kind: stormsim_model::BalancerKind) -> balancer::BalancerKind {
    use stormsim_model::BalancerKind as K;
    match kind {
        K::RoundRobin => balancer::BalancerKind::RoundRobin,
        K::Random => balancer::BalancerKind::Random,
        K::LeastOutstanding => balancer::BalancerKind::LeastOutstanding,
        K::PowerOfTwoChoices => balancer::BalancerKind::PowerOfTwoChoices,
    }
}

/// Outlier detection as a model asks for it.
pub fn outlier_config(
    spec: &stormsim_model::OutlierDetectionSpec,
) -> balancer::OutlierDetectionConfig {
    balancer::OutlierDetectionConfig {
        consecutive_5xx: spec.consecutive_5xx,
        interval: SimDuration::from_ms(spec.interval_ms),
        base_ejection_time: SimDuration::from_ms(spec.base_ejection_time_ms),
        max_ejection_time: SimDuration::from_ms(
            spec.max_ejection_time_ms.max(spec.base_ejection_time_ms),
        ),
        max_ejection_percent: spec.max_ejection_percent,
        always_eject_one_host: spec.always_eject_one_host,
    }
}
