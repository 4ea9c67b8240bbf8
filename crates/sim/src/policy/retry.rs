//! The retry loop's decision after a failed attempt: retry, or give up.
//!
//! Attempts are counted as resilience4j's `maxAttempts` counts them: the first
//! attempt included, so `max_attempts: 3` is one try and two retries. Only the
//! outcomes on the policy's explicit whitelist are retried (S5: timeouts, 503,
//! never other 4xx); an open breaker's fast failure never is, so the loop exits
//! at once. The budget (collective) and the deadline (also while sleeping) are
//! asked by the caller of [`RetryRule::decide`], which owns their state.

use crate::metrics::FailReason;
use stormsim_model::{RetryPolicy, RetryableOutcome};

/// What to do after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryDecision {
    /// Retry (if the budget agrees), after the backoff.
    Retry,
    /// Stop; the call fails with the last attempt's reason.
    GiveUp,
}

/// The outcome a retry policy (or a hedge's `non_fatal`) may name for this
/// failure; `None` for the caller's own refusals (an open breaker, a full
/// bulkhead, its throttle), which no policy retries.
pub fn outcome_of(reason: FailReason) -> Option<RetryableOutcome> {
    Some(match reason {
        FailReason::Timeout => RetryableOutcome::Timeout,
        FailReason::DeadlineExceeded => RetryableOutcome::DeadlineExceeded,
        FailReason::Rejected => RetryableOutcome::Rejected,
        FailReason::Error => RetryableOutcome::Error,
        FailReason::ConnectionRefused => RetryableOutcome::ConnectionRefused,
        FailReason::RateLimited => RetryableOutcome::RateLimited,
        FailReason::BreakerOpen | FailReason::BulkheadFull | FailReason::Throttled => return None,
    })
}

/// Whether the policy retries this outcome at all.
pub fn is_retryable(policy: &RetryPolicy, reason: FailReason) -> bool {
    outcome_of(reason).is_some_and(|outcome| policy.retry_on.contains(&outcome))
}

/// A retry policy's decision, made ready when the model loads: its attempts,
/// and its whitelist as one bit per outcome, so that judging a failed attempt
/// scans no list.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryRule {
    max_attempts: u32,
    /// Bit `o as u8`: outcome `o` is retried.
    retried: u8,
}

impl RetryRule {
    /// The rule of `policy`.
    pub fn of(policy: &RetryPolicy) -> RetryRule {
        RetryRule {
            max_attempts: policy.max_attempts,
            retried: policy.retry_on.iter().fold(0, |bits, &o| bits | bit(o)),
        }
    }

    /// Decides after attempt number `attempts_made` (1-based) failed with
    /// `reason`: as [`is_retryable`] and `max_attempts` say.
    pub fn decide(self, attempts_made: u32, reason: FailReason) -> RetryDecision {
        let retried = outcome_of(reason).is_some_and(|o| self.retried & bit(o) != 0);
        if attempts_made < self.max_attempts && retried {
            RetryDecision::Retry
        } else {
            RetryDecision::GiveUp
        }
    }
}

/// An outcome's bit in [`RetryRule::retried`]. Spelled out per outcome, so
/// that an outcome added to the model fails to compile here instead of
/// shifting past the `u8`.
fn bit(outcome: RetryableOutcome) -> u8 {
    match outcome {
        RetryableOutcome::Timeout => 1,
        RetryableOutcome::DeadlineExceeded => 1 << 1,
        RetryableOutcome::Rejected => 1 << 2,
        RetryableOutcome::Error => 1 << 3,
        RetryableOutcome::ConnectionRefused => 1 << 4,
        RetryableOutcome::RateLimited => 1 << 5,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stormsim_engine::SimDuration;
    use stormsim_model::Backoff;

    fn decide(policy: &RetryPolicy, attempts_made: u32, reason: FailReason) -> RetryDecision {
        let rule = RetryRule::of(policy);
        let decision = rule.decide(attempts_made, reason);
        // The rule says what the policy's list says.
        let listed = attempts_made < policy.max_attempts && is_retryable(policy, reason);
        assert_eq!(decision == RetryDecision::Retry, listed);
        decision
    }

    fn policy(max_attempts: u32, retry_on: Vec<RetryableOutcome>) -> RetryPolicy {
        RetryPolicy {
            max_attempts,
            backoff: Backoff::Fixed(SimDuration::from_ms(500.0)),
            retry_on,
            ..RetryPolicy::none()
        }
    }

    #[test]
    fn max_attempts_counts_the_first_attempt() {
        let p = policy(3, vec![RetryableOutcome::Timeout]);
        assert_eq!(decide(&p, 1, FailReason::Timeout), RetryDecision::Retry);
        assert_eq!(decide(&p, 2, FailReason::Timeout), RetryDecision::Retry);
        assert_eq!(decide(&p, 3, FailReason::Timeout), RetryDecision::GiveUp);
        assert_eq!(
            decide(&RetryPolicy::none(), 1, FailReason::Timeout),
            RetryDecision::GiveUp
        );
    }

    #[test]
    fn only_whitelisted_outcomes_are_retried_and_an_open_breaker_never() {
        let p = policy(
            3,
            vec![RetryableOutcome::Timeout, RetryableOutcome::Rejected],
        );
        assert_eq!(decide(&p, 1, FailReason::Rejected), RetryDecision::Retry);
        assert_eq!(decide(&p, 1, FailReason::Error), RetryDecision::GiveUp);
        assert_eq!(
            decide(&p, 1, FailReason::DeadlineExceeded),
            RetryDecision::GiveUp
        );
        let everything = policy(
            3,
            vec![
                RetryableOutcome::Timeout,
                RetryableOutcome::DeadlineExceeded,
                RetryableOutcome::Rejected,
                RetryableOutcome::Error,
            ],
        );
        assert_eq!(
            decide(&everything, 1, FailReason::BreakerOpen),
            RetryDecision::GiveUp
        );
    }
}
