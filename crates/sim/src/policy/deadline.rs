//! Deadline budgets: how much time an attempt may take, and what it tells the
//! callee.
//!
//! Semantics follow gRPC: a deadline travels as a *relative* remaining time
//! (`grpc-timeout`), re-derived at every hop from when the request arrives, and
//! every outgoing attempt is bounded by it. On top, the S1 gateway's rules: a cap
//! on the first attempt so a retry has room, a margin subtracted from what is
//! sent down (Envoy's `grpc_timeout_header_offset`), and a minimum budget below
//! which nothing is sent.

use stormsim_engine::{SimDuration, SimTime};
use stormsim_model::DeadlinePolicy;

/// What the deadline layer decides before an attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttemptPlan {
    /// Send the attempt.
    Send {
        /// Give up on the attempt after this long (`INFINITE`: never).
        timeout: SimDuration,
        /// The timeout is the request's deadline, so its expiry is reported as
        /// `deadline_exceeded` rather than `timeout`.
        ends_at_deadline: bool,
        /// The budget sent to the callee, if the edge propagates deadlines.
        budget: Option<SimDuration>,
    },
    /// Too little time remains: fail with `deadline_exceeded`, send nothing.
    TooLate,
}

/// Plans attempt number `attempt` (1-based) of a call made at `now` by a request
/// whose deadline is `deadline`, on an edge with a per-attempt timeout.
pub fn plan_attempt(
    now: SimTime,
    deadline: Option<SimTime>,
    attempt: u32,
    policy: &DeadlinePolicy,
    attempt_timeout: SimDuration,
) -> AttemptPlan {
    let mut timeout = attempt_timeout;
    let mut ends_at_deadline = false;
    if let Some(deadline) = deadline {
        let remaining = deadline.saturating_since(now);
        if remaining == SimDuration::ZERO || remaining < policy.min_budget {
            return AttemptPlan::TooLate;
        }
        if remaining <= timeout {
            timeout = remaining;
            ends_at_deadline = true;
        }
    }
    if attempt == 1 && policy.first_attempt_cap < timeout {
        timeout = policy.first_attempt_cap;
        ends_at_deadline = false;
    }
    let budget =
        (policy.propagate && !timeout.is_infinite()).then(|| timeout.saturating_sub(policy.margin));
    // The deadline leaves nothing after the margin: the callee could only
    // fail (S3: keep enough to return a clean error rather than send a
    // request with no time). A static timeout or cap no longer than the
    // margin is the configuration's business: it is sent as it is.
    if ends_at_deadline && budget == Some(SimDuration::ZERO) {
        return AttemptPlan::TooLate;
    }
    AttemptPlan::Send {
        timeout,
        ends_at_deadline,
        budget,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(x: f64) -> SimDuration {
        SimDuration::from_ms(x)
    }
    fn at(x: f64) -> SimTime {
        SimTime::ZERO + ms(x)
    }

    /// S1 scenario 4: deadline 250 ms, first attempt capped at 120 ms, 5 ms
    /// margin, nothing sent below 30 ms.
    const S1: DeadlinePolicy = DeadlinePolicy {
        propagate: true,
        margin: SimDuration(5_000_000),
        first_attempt_cap: SimDuration(120_000_000),
        min_budget: SimDuration(30_000_000),
        absolute: false,
        subtract_elapsed: true,
    };

    #[test]
    fn first_attempt_is_capped_and_the_budget_sent_down_keeps_a_margin() {
        let plan = plan_attempt(at(0.0), Some(at(250.0)), 1, &S1, SimDuration::INFINITE);
        assert_eq!(
            plan,
            AttemptPlan::Send {
                timeout: ms(120.0),
                ends_at_deadline: false,
                budget: Some(ms(115.0))
            }
        );
    }

    #[test]
    fn second_attempt_gets_all_that_remains() {
        let plan = plan_attempt(at(117.0), Some(at(250.0)), 2, &S1, SimDuration::INFINITE);
        assert_eq!(
            plan,
            AttemptPlan::Send {
                timeout: ms(133.0),
                ends_at_deadline: true,
                budget: Some(ms(128.0))
            }
        );
    }

    #[test]
    fn nothing_is_sent_below_the_minimum_budget_or_past_the_deadline() {
        assert_eq!(
            plan_attempt(at(221.0), Some(at(250.0)), 2, &S1, SimDuration::INFINITE),
            AttemptPlan::TooLate
        );
        assert_eq!(
            plan_attempt(
                at(250.0),
                Some(at(250.0)),
                2,
                &DeadlinePolicy::NONE,
                ms(10.0)
            ),
            AttemptPlan::TooLate
        );
    }

    #[test]
    fn nothing_is_sent_when_the_margin_eats_the_whole_budget() {
        let margin_only = DeadlinePolicy {
            margin: ms(100.0),
            ..DeadlinePolicy::NONE
        };
        let propagating = DeadlinePolicy {
            propagate: true,
            ..margin_only
        };
        assert_eq!(
            plan_attempt(
                at(29_950.0),
                Some(at(30_000.0)),
                2,
                &propagating,
                ms(30_000.0)
            ),
            AttemptPlan::TooLate
        );
        // Not propagated, the margin plays no part: the attempt goes.
        assert!(matches!(
            plan_attempt(
                at(29_950.0),
                Some(at(30_000.0)),
                2,
                &margin_only,
                ms(30_000.0)
            ),
            AttemptPlan::Send { .. }
        ));
    }

    #[test]
    fn without_a_deadline_only_the_attempt_timeout_applies() {
        assert_eq!(
            plan_attempt(at(5.0), None, 1, &S1, ms(300.0)),
            AttemptPlan::Send {
                timeout: ms(120.0),
                ends_at_deadline: false,
                budget: Some(ms(115.0))
            }
        );
        assert_eq!(
            plan_attempt(
                at(5.0),
                None,
                2,
                &DeadlinePolicy::NONE,
                SimDuration::INFINITE
            ),
            AttemptPlan::Send {
                timeout: SimDuration::INFINITE,
                ends_at_deadline: false,
                budget: None
            }
        );
    }

    #[test]
    fn a_shorter_attempt_timeout_wins_over_the_deadline() {
        assert_eq!(
            plan_attempt(
                at(0.0),
                Some(at(250.0)),
                2,
                &DeadlinePolicy::NONE,
                ms(100.0)
            ),
            AttemptPlan::Send {
                timeout: ms(100.0),
                ends_at_deadline: false,
                budget: None
            }
        );
    }
}
