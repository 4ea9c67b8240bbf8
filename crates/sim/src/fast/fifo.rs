//! A FIFO service of `c` workers, resolved when each request is admitted.
//!
//! In a first-come-first-served queue a request's start depends only on
//! the requests admitted before it: it takes the earliest free worker, at
//! its arrival or when that worker frees up (the Kiefer–Wolfowitz
//! recursion for a c-server queue; Lindley's for one server). So its start
//! and end are known the moment it is admitted, and the queue's length at
//! any later arrival is the number of admitted requests whose start is
//! still ahead: a FIFO of start times, which are non-decreasing.
//!
//! Ties are taken as the general engine's event queue takes them: two
//! things due at one nanosecond go in the order they were scheduled. A
//! worker that frees up at the instant a request arrives (its work's end
//! was scheduled when that work started) is free for it only if its end
//! was scheduled before the request's arrival was (at its send).
//!
//! Workers added by a timeline change at `τ` are workers free from `τ`
//! on: a request that arrived earlier and would still wait at `τ` takes
//! one then, exactly as the general engine hands queued requests to new
//! workers at the change. Workers are never removed here (a scale-down
//! keeps a model on the general engine).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// The workers and the waiting line of one FIFO service.
#[derive(Debug)]
pub(crate) struct FifoServer {
    /// When each worker is next free, and when the event that frees it was
    /// scheduled, as a [`Scheduled`] (a min-heap); `None`: unbounded
    /// workers, every request starts on arrival.
    free_at: Option<BinaryHeap<Reverse<(u64, u64)>>>,
    /// When each request still waiting, or to wait, leaves the line, and
    /// when the event that takes it out was scheduled, ns: non-decreasing,
    /// front first.
    leaves_line: VecDeque<(u64, u64)>,
}

/// Where an admitted request's wait ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Slot {
    /// When a worker is free for it (its arrival if one is free then).
    pub start: u64,
    /// Whether it waits in the line (no worker free on arrival).
    pub waits: bool,
    /// When the event that frees its worker was scheduled ([`Scheduled`]).
    pub freed_by: u64,
}

/// When an event was scheduled, ns plus one; 0: before everything due at
/// its instant (an idle worker from the start, or one a timeline change
/// adds: a change comes first at its instant).
pub(crate) type Scheduled = u64;

/// A [`Scheduled`] for an event scheduled at `t`.
pub(crate) fn scheduled_at(t: u64) -> Scheduled {
    t + 1
}

/// Whether an event scheduled as `by` comes before one scheduled at `t`,
/// both due at one instant.
pub(crate) fn comes_before(by: Scheduled, t: u64) -> bool {
    by <= t
}

impl FifoServer {
    /// `workers` idle workers (`None`: unbounded).
    pub fn new(workers: Option<u64>) -> FifoServer {
        FifoServer {
            free_at: workers.map(|c| (0..c).map(|_| Reverse((0, 0))).collect()),
            leaves_line: VecDeque::new(),
        }
    }

    /// `more` workers join at `at` (a scale-up: the change comes before
    /// everything else due at its instant).
    pub fn add_workers(&mut self, more: u64, at: u64) {
        if let Some(free) = self.free_at.as_mut() {
            free.extend((0..more).map(|_| Reverse((at, 0))));
        }
    }

    /// Requests waiting when a request arrives at `t` (its arrival
    /// scheduled at `sent`): those taken out before gone. Calls come in
    /// non-decreasing `t`.
    pub fn waiting_at(&mut self, t: u64, sent: u64) -> usize {
        while self
            .leaves_line
            .front()
            .is_some_and(|&(leaves, by)| leaves < t || (leaves == t && comes_before(by, sent)))
        {
            self.leaves_line.pop_front();
        }
        self.leaves_line.len()
    }

    /// Where a request arriving at `t` (scheduled at `sent`) would start
    /// (it does not take the worker: [`FifoServer::occupy`] or
    /// [`FifoServer::leave_line`] does).
    pub fn slot_for(&self, t: u64, sent: u64) -> Slot {
        match &self.free_at {
            None => Slot {
                start: t,
                waits: false,
                freed_by: 0,
            },
            Some(free) => {
                let (earliest, by) = free.peek().map_or((u64::MAX, 0), |r| r.0);
                let free_now = earliest < t || (earliest == t && comes_before(by, sent));
                Slot {
                    start: earliest.max(t),
                    waits: !free_now,
                    freed_by: by,
                }
            }
        }
    }

    /// The request in `slot` takes its worker until `end` (its end
    /// scheduled at its start).
    pub fn occupy(&mut self, slot: Slot, end: u64) {
        if slot.waits {
            self.leaves_line.push_back((slot.start, slot.freed_by));
        }
        if let Some(mut earliest) = self.free_at.as_mut().and_then(|f| f.peek_mut()) {
            earliest.0 = (end, scheduled_at(slot.start));
        }
    }

    /// The request in `slot` leaves the line at its start without taking a
    /// worker (dropped there: its deadline is too near).
    pub fn leave_line(&mut self, slot: Slot) {
        if slot.waits {
            self.leaves_line.push_back((slot.start, slot.freed_by));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two workers, requests at 0, 1, 2, 3 of 10 each: the first two start
    /// at once, the next two when those end.
    #[test]
    fn two_workers_serve_in_arrival_order() {
        let mut s = FifoServer::new(Some(2));
        let mut starts = Vec::new();
        for t in 0..4 {
            let slot = s.slot_for(t, t);
            starts.push((slot.start, slot.waits, s.waiting_at(t, t)));
            s.occupy(slot, slot.start + 10);
        }
        assert_eq!(
            starts,
            vec![(0, false, 0), (1, false, 0), (10, true, 0), (11, true, 1)]
        );
        assert_eq!(s.waiting_at(10, 10), 1);
        assert_eq!(s.waiting_at(11, 11), 0);
    }

    /// A worker added at 5 takes the request that would otherwise wait
    /// until 10.
    #[test]
    fn an_added_worker_takes_the_waiting_request_when_it_joins() {
        let mut s = FifoServer::new(Some(1));
        let first = s.slot_for(0, 0);
        s.occupy(first, 10);
        s.add_workers(1, 5);
        let second = s.slot_for(1, 1);
        assert_eq!((second.start, second.waits), (5, true));
        s.occupy(second, 15);
        assert_eq!(s.slot_for(6, 6).start, 10);
    }

    /// A request dropped at its start leaves the worker to the next.
    #[test]
    fn a_dropped_request_leaves_its_worker_free() {
        let mut s = FifoServer::new(Some(1));
        let first = s.slot_for(0, 0);
        s.occupy(first, 10);
        let dropped = s.slot_for(1, 1);
        s.leave_line(dropped);
        assert_eq!(s.slot_for(2, 2).start, 10);
        assert_eq!(s.waiting_at(2, 2), 1);
        assert_eq!(s.waiting_at(10, 10), 0);
    }

    #[test]
    fn unbounded_workers_never_queue() {
        let mut s = FifoServer::new(None);
        for t in [0, 0, 1] {
            let slot = s.slot_for(t, t);
            assert_eq!((slot.start, slot.waits), (t, false));
            s.occupy(slot, t + 100);
        }
        assert_eq!(s.waiting_at(1, 1), 0);
    }
}
