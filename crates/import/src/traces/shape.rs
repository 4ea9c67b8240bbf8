//! The shape of one execution's handler, read off the timing of its calls:
//! repeated attempts of one call (retries), calls that overlap (parallel),
//! and the order of the rest.

use super::graph::{union_ns, Call, Exec};
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// One logical call: its first attempt and any retries.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Logical {
    pub callee: usize,
    /// Indexes into the execution's calls, in time order.
    pub attempts: Vec<usize>,
    pub start_ns: u64,
    pub end_ns: u64,
    /// Its last attempt failed: the call failed.
    pub failed: bool,
}

/// An execution's calls as steps.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Shape {
    pub logicals: Vec<Logical>,
    /// Steps in order, each the logical calls (indexes into `logicals`) that
    /// ran at the same time: one for a plain call, several for a parallel
    /// step or a fan-out.
    pub steps: Vec<Vec<usize>>,
    /// The execution's own time: its span less the union of its logical
    /// calls, each from its first attempt's start to its last's end (the
    /// waits between attempts are the retry policy's backoff in the model,
    /// not work).
    pub own_ns: u64,
}

impl Shape {
    /// The handler's outline: each step's callees, sorted (a parallel
    /// step's branches are a set, whichever started first).
    pub(crate) fn signature(&self) -> Vec<Vec<usize>> {
        self.steps
            .iter()
            .map(|step| {
                let mut callees: Vec<usize> =
                    step.iter().map(|&l| self.logicals[l].callee).collect();
                callees.sort_unstable();
                callees
            })
            .collect()
    }
}

/// Reads `exec`'s calls as logical calls and steps.
///
/// A call is a retry of an earlier call to the same callee when that one
/// failed, had ended when this one started, and nothing else started in
/// between (a retry is what a client does next after a failure). Logical
/// calls whose intervals overlap are one parallel step (sweeping in order of
/// start: a call that starts before every call of the current step has
/// ended joins it); a call that starts after they all ended begins the next
/// step.
pub(crate) fn shape(exec: &Exec) -> Shape {
    let calls = &exec.calls;
    let mut order: Vec<usize> = (0..calls.len()).collect();
    order.sort_by_key(|&i| (calls[i].start_ns, calls[i].end_ns, calls[i].callee, i));
    let mut logicals: Vec<Logical> = Vec::new();
    // The failed logical calls that a later call may still retry, by their
    // end: once a call that is not one of its attempts starts at or after a
    // failure's end, that failure is never retried (the client did
    // something else first), so each entry is looked at about once, however
    // many calls an execution makes.
    let mut retryable: BinaryHeap<Reverse<(u64, usize)>> = BinaryHeap::new();
    // The logical calls of the calls read so far that started at the same
    // instant as the current one: the first, and whether there were others.
    let mut same_start: Option<(u64, usize, bool)> = None;
    for &i in &order {
        let c: &Call = &calls[i];
        // Every failure that ended by this call's start: the one it retries,
        // if any, and the rest never retried after it.
        let mut due = Vec::new();
        while let Some(&Reverse((end, k))) = retryable.peek() {
            if end > c.start_ns {
                break;
            }
            retryable.pop();
            let l = &logicals[k];
            if l.failed && l.end_ns == end {
                due.push(k);
            }
        }
        let retry_of = due
            .into_iter()
            .filter(|&k| logicals[k].callee == c.callee)
            .max_by_key(|&k| (logicals[k].end_ns, k));
        let k = match retry_of {
            Some(k) => {
                let l = &mut logicals[k];
                l.attempts.push(i);
                l.end_ns = c.end_ns;
                l.failed = c.error;
                k
            }
            None => {
                logicals.push(Logical {
                    callee: c.callee,
                    attempts: vec![i],
                    start_ns: c.start_ns,
                    end_ns: c.end_ns,
                    failed: c.error,
                });
                logicals.len() - 1
            }
        };
        // A call that started at this instant, before this one and not an
        // attempt of the same logical call, already came after a failure
        // that ends now (a zero-length attempt).
        let others_now = match same_start {
            Some((t, first, many)) if t == c.start_ns => many || first != k,
            _ => false,
        };
        same_start = match same_start {
            Some((t, first, many)) if t == c.start_ns => Some((t, first, many || first != k)),
            _ => Some((c.start_ns, k, false)),
        };
        if c.error && !(others_now && c.end_ns == c.start_ns) {
            retryable.push(Reverse((c.end_ns, k)));
        }
    }
    let mut by_start: Vec<usize> = (0..logicals.len()).collect();
    by_start.sort_by_key(|&l| (logicals[l].start_ns, logicals[l].end_ns, l));
    let mut steps: Vec<Vec<usize>> = Vec::new();
    let mut step_end = 0u64;
    for l in by_start {
        let lg = &logicals[l];
        match steps.last_mut() {
            Some(step) if lg.start_ns < step_end => {
                step.push(l);
                step_end = step_end.max(lg.end_ns);
            }
            _ => {
                steps.push(vec![l]);
                step_end = lg.end_ns;
            }
        }
    }
    let own_ns = exec
        .duration_ns()
        .saturating_sub(union_ns(logicals.iter().map(|l| (l.start_ns, l.end_ns))));
    Shape {
        logicals,
        steps,
        own_ns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::traces::span::Kind;

    fn call(callee: usize, start_ms: u64, end_ms: u64, error: bool) -> Call {
        Call {
            callee,
            start_ns: start_ms * 1_000_000,
            end_ns: end_ms * 1_000_000,
            error,
            network_ns: None,
        }
    }

    fn exec(calls: Vec<Call>) -> Exec {
        Exec {
            service: 0,
            kind: Kind::Server,
            start_ns: 0,
            end_ns: 1_000_000_000,
            error: false,
            caller: None,
            calls,
        }
    }

    /// The retry reading as it was first written: for each call, every
    /// logical call and every earlier call looked at (time in the square
    /// of the calls, or worse).
    fn reference_attempts(exec: &Exec) -> Vec<Vec<usize>> {
        let calls = &exec.calls;
        let mut order: Vec<usize> = (0..calls.len()).collect();
        order.sort_by_key(|&i| (calls[i].start_ns, calls[i].end_ns, calls[i].callee, i));
        let mut logicals: Vec<Logical> = Vec::new();
        for (pos, &i) in order.iter().enumerate() {
            let c = &calls[i];
            let retry_of = logicals
                .iter()
                .enumerate()
                .filter(|(_, l)| l.callee == c.callee && l.failed && l.end_ns <= c.start_ns)
                .filter(|(_, l)| {
                    !order[..pos].iter().any(|&j| {
                        calls[j].start_ns >= l.end_ns
                            && calls[j].start_ns <= c.start_ns
                            && !l.attempts.contains(&j)
                    })
                })
                .max_by_key(|(k, l)| (l.end_ns, *k))
                .map(|(k, _)| k);
            match retry_of {
                Some(k) => {
                    let l = &mut logicals[k];
                    l.attempts.push(i);
                    l.end_ns = c.end_ns;
                    l.failed = c.error;
                }
                None => logicals.push(Logical {
                    callee: c.callee,
                    attempts: vec![i],
                    start_ns: c.start_ns,
                    end_ns: c.end_ns,
                    failed: c.error,
                }),
            }
        }
        logicals.into_iter().map(|l| l.attempts).collect()
    }

    #[test]
    fn regression_retries_read_in_time_near_linear_in_the_calls() {
        // The same logical calls as the quadratic reading, on random calls
        // dense in ties and zero-length attempts.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        let mut next = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..3000 {
            let n = 1 + next(12);
            let calls: Vec<Call> = (0..n)
                .map(|_| {
                    let start = next(8);
                    call(next(3) as usize, start, start + next(4), next(2) == 0)
                })
                .collect();
            let e = exec(calls);
            let got: Vec<Vec<usize>> = shape(&e).logicals.into_iter().map(|l| l.attempts).collect();
            assert_eq!(got, reference_attempts(&e), "{:#?}", e.calls);
        }
        // 10⁵ failed attempts one after another: one logical call.
        let many: Vec<Call> = (0..100_000)
            .map(|i| call(1, 2 * i, 2 * i + 1, true))
            .collect();
        assert_eq!(shape(&exec(many)).logicals.len(), 1);
    }

    #[test]
    fn overlapping_calls_are_one_parallel_step_and_sequential_ones_are_steps_in_order() {
        // B and C overlap, then D, then two Bs that overlap each other.
        let e = exec(vec![
            call(2, 50, 60, false),
            call(1, 10, 30, false),
            call(2, 20, 40, false),
            call(3, 45, 48, false),
            call(1, 52, 70, false),
        ]);
        let s = shape(&e);
        assert_eq!(s.signature(), vec![vec![1, 2], vec![3], vec![1, 2]]);
        assert!(s.logicals.iter().all(|l| l.attempts.len() == 1));
    }

    #[test]
    fn a_call_after_a_failed_one_to_the_same_callee_is_a_retry() {
        let e = exec(vec![
            call(1, 0, 10, true),
            call(1, 15, 25, true),
            call(1, 30, 40, false),
            call(2, 45, 50, false),
        ]);
        let s = shape(&e);
        assert_eq!(s.signature(), vec![vec![1], vec![2]]);
        assert_eq!(s.logicals[0].attempts, vec![0, 1, 2]);
        assert!(!s.logicals[0].failed);
        // The 5 ms waits between attempts are backoff, not own time: the
        // span's 1000 ms less B's 0–40 and C's 45–50.
        assert_eq!(s.own_ns, 955_000_000);
    }

    #[test]
    fn a_repeat_after_a_success_or_after_another_call_is_no_retry() {
        // B succeeds, then B again: two calls. B fails, C, then B: no retry
        // either (the client did something else first).
        let e = exec(vec![
            call(1, 0, 10, false),
            call(1, 15, 25, false),
            call(1, 30, 40, true),
            call(2, 41, 45, false),
            call(1, 50, 60, false),
        ]);
        let s = shape(&e);
        assert_eq!(
            s.signature(),
            vec![vec![1], vec![1], vec![1], vec![2], vec![1]]
        );
    }

    #[test]
    fn a_retried_branch_stays_one_branch_of_its_parallel_step() {
        // B and C together; B fails and is retried while C still runs.
        let e = exec(vec![
            call(1, 0, 10, true),
            call(2, 0, 50, false),
            call(1, 12, 30, false),
        ]);
        let s = shape(&e);
        assert_eq!(s.signature(), vec![vec![1, 2]]);
        assert_eq!(s.logicals[0].attempts.len(), 2);
    }
}
