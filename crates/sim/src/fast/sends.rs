//! The order of sends: each workload's next arrival and the retries waiting
//! for their backoff, merged by a small tournament.
//!
//! Retries after the same cause and attempt number with a fixed backoff
//! come in the order they are due: each such group is a FIFO lane. The
//! rest (jittered backoffs) wait in a heap. A tournament heap holds one
//! entry per source head; an entry whose source has moved on since (a
//! voided arrival, a heap whose top changed) is skipped when it surfaces.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// Where a send stands among those due at one instant: its instant, when
/// it was scheduled, and the order it was scheduled in (the event queue's
/// order among events due at one instant).
pub(crate) type Order = (u64, u64, u64);

/// Lanes per cause of a retry (refused, timed out, dropped at dequeue) and
/// attempt number: the first few attempts; the rest share the heap.
const LANE_ATTEMPTS: usize = 4;
pub(crate) const CAUSES: usize = 3;

/// Sends waiting to go, in order. `T`: what a send carries.
pub(crate) struct Sends<T> {
    /// Each workload's next arrival.
    arrivals: Vec<Option<(Order, T)>>,
    lanes: Vec<VecDeque<(Order, T)>>,
    heap: BinaryHeap<Reverse<Keyed<T>>>,
    /// `(head's order, source)`: sources `0..w` the workloads, then the
    /// lanes, then the heap.
    tournament: BinaryHeap<Reverse<(Order, u32)>>,
}

/// A heap entry ordered by its order alone.
struct Keyed<T>(Order, T);

impl<T> PartialEq for Keyed<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0
    }
}
impl<T> Eq for Keyed<T> {}
impl<T> PartialOrd for Keyed<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Keyed<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.cmp(&other.0)
    }
}

impl<T: Copy> Sends<T> {
    pub fn new(workloads: usize) -> Sends<T> {
        Sends {
            arrivals: vec![None; workloads],
            lanes: (0..LANE_ATTEMPTS * CAUSES)
                .map(|_| VecDeque::new())
                .collect(),
            heap: BinaryHeap::new(),
            tournament: BinaryHeap::new(),
        }
    }

    fn lane_source(&self, lane: usize) -> u32 {
        (self.arrivals.len() + lane) as u32
    }

    fn heap_source(&self) -> u32 {
        (self.arrivals.len() + self.lanes.len()) as u32
    }

    /// Workload `w`'s next arrival is `send` (or none), replacing the one
    /// it had.
    pub fn set_arrival(&mut self, w: usize, next: Option<(Order, T)>) {
        self.arrivals[w] = next;
        if let Some((order, _)) = next {
            self.tournament.push(Reverse((order, w as u32)));
        }
    }

    /// A retry of attempt number `attempt` after `cause`, due at `order`.
    pub fn push_retry(&mut self, cause: usize, attempt: u32, order: Order, send: T) {
        let attempt = attempt as usize;
        if (1..=LANE_ATTEMPTS).contains(&attempt) {
            let lane = cause * LANE_ATTEMPTS + attempt - 1;
            let queue = &mut self.lanes[lane];
            match queue.back() {
                None => {
                    queue.push_back((order, send));
                    let source = self.lane_source(lane);
                    self.tournament.push(Reverse((order, source)));
                    return;
                }
                Some((last, _)) if *last <= order => {
                    queue.push_back((order, send));
                    return;
                }
                Some(_) => {}
            }
        }
        let top_before = self.heap.peek().map(|r| r.0 .0);
        self.heap.push(Reverse(Keyed(order, send)));
        if top_before.is_none_or(|top| order < top) {
            let source = self.heap_source();
            self.tournament.push(Reverse((order, source)));
        }
    }

    /// The head of `source`, if it has one.
    fn head(&self, source: u32) -> Option<Order> {
        let s = source as usize;
        let w = self.arrivals.len();
        if s < w {
            self.arrivals[s].map(|(o, _)| o)
        } else if s < w + self.lanes.len() {
            self.lanes[s - w].front().map(|(o, _)| *o)
        } else {
            self.heap.peek().map(|r| r.0 .0)
        }
    }

    /// The earliest send, and whether it is workload `w`'s arrival
    /// (`Some(w)`) or a retry; left in place.
    pub fn peek(&mut self) -> Option<(Order, Option<usize>)> {
        while let Some(&Reverse((order, source))) = self.tournament.peek() {
            if self.head(source) == Some(order) {
                let w = (source as usize) < self.arrivals.len();
                return Some((order, w.then_some(source as usize)));
            }
            self.tournament.pop();
        }
        None
    }

    /// Takes the earliest send, which [`Sends::peek`] just returned. A
    /// source with a head left takes the top of the tournament in place:
    /// one sift down, not a pop and a push.
    pub fn pop(&mut self) -> T {
        let w = self.arrivals.len();
        let lanes = self.lanes.len();
        let mut top = self.tournament.peek_mut().expect("a send was peeked");
        let s = (top.0).1 as usize;
        if s < w {
            std::collections::binary_heap::PeekMut::pop(top);
            return self.arrivals[s].take().expect("a live arrival").1;
        }
        let (send, next) = if s < w + lanes {
            let (_, send) = self.lanes[s - w].pop_front().expect("a live lane");
            (send, self.lanes[s - w].front().map(|(o, _)| *o))
        } else {
            let Reverse(Keyed(_, send)) = self.heap.pop().expect("a live heap");
            (send, self.heap.peek().map(|r| r.0 .0))
        };
        match next {
            Some(order) => (top.0).0 = order,
            None => {
                std::collections::binary_heap::PeekMut::pop(top);
            }
        }
        send
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(s: &mut Sends<u32>) -> Vec<u32> {
        let mut out = Vec::new();
        while s.peek().is_some() {
            out.push(s.pop());
        }
        out
    }

    /// Arrivals, lanes and the heap interleave by (instant, scheduled, seq).
    #[test]
    fn sends_come_in_order_from_every_source() {
        let mut s = Sends::new(2);
        s.set_arrival(0, Some(((5, 0, 1), 50)));
        s.set_arrival(1, Some(((3, 0, 2), 30)));
        s.push_retry(0, 2, (4, 1, 3), 40);
        s.push_retry(0, 2, (9, 2, 4), 90);
        // Out of order for its lane: the heap.
        s.push_retry(0, 2, (6, 3, 5), 60);
        s.push_retry(1, 9, (1, 0, 6), 10);
        assert_eq!(drain(&mut s), vec![10, 30, 40, 50, 60, 90]);
    }

    /// A replaced arrival's old entry is skipped.
    #[test]
    fn a_voided_arrival_never_goes() {
        let mut s = Sends::new(1);
        s.set_arrival(0, Some(((5, 0, 1), 5)));
        s.set_arrival(0, Some(((7, 1, 2), 7)));
        assert_eq!(s.peek(), Some(((7, 1, 2), Some(0))));
        assert_eq!(drain(&mut s), vec![7]);
    }

    /// Ties at one instant go in the order they were scheduled.
    #[test]
    fn ties_go_by_when_they_were_scheduled() {
        let mut s = Sends::new(1);
        s.push_retry(1, 2, (10, 4, 9), 2);
        s.push_retry(0, 2, (10, 3, 8), 1);
        s.set_arrival(0, Some(((10, 5, 1), 3)));
        assert_eq!(drain(&mut s), vec![1, 2, 3]);
    }
}
