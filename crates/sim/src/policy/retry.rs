//! The retry loop: after a failed attempt, try again (after how long) or give up.
//!
//! Attempts are counted as resilience4j's `maxAttempts` counts them: the first
//! attempt included, so `max_attempts: 3` is one try and two retries. Every
//! failure is retryable for now (timeouts, 503 rejections, errors from below), as
//! in the S1 article's loops; a deadline stops the loop, also while it sleeps (the
//! sleep is cut at the deadline by the caller of [`decide`]).

use stormsim_engine::SimDuration;
use stormsim_model::RetryPolicy;

/// What to do after a failed attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetryDecision {
    /// Send the next attempt after this wait.
    RetryAfter(SimDuration),
    /// Stop; the call fails with the last attempt's reason.
    GiveUp,
}

/// Decides after attempt number `attempts_made` (1-based) failed.
pub fn decide(policy: &RetryPolicy, attempts_made: u32) -> RetryDecision {
    if attempts_made < policy.max_attempts {
        RetryDecision::RetryAfter(policy.backoff)
    } else {
        RetryDecision::GiveUp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_attempts_counts_the_first_attempt() {
        let p = RetryPolicy {
            max_attempts: 3,
            backoff: SimDuration::from_ms(500.0),
        };
        assert_eq!(
            decide(&p, 1),
            RetryDecision::RetryAfter(SimDuration::from_ms(500.0))
        );
        assert_eq!(
            decide(&p, 2),
            RetryDecision::RetryAfter(SimDuration::from_ms(500.0))
        );
        assert_eq!(decide(&p, 3), RetryDecision::GiveUp);
    }

    #[test]
    fn one_attempt_means_no_retry() {
        let p = RetryPolicy {
            max_attempts: 1,
            backoff: SimDuration::ZERO,
        };
        assert_eq!(decide(&p, 1), RetryDecision::GiveUp);
    }
}
