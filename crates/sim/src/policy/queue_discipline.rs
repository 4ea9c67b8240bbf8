//! Which waiting request a freed worker takes: FIFO, LIFO, adaptive LIFO
//! (Facebook's servers under overload: "Fail at Scale", Maurer, ACM Queue
//! 2015) and non-preemptive priority by class (the textbook M/G/1 priority
//! queue whose mean waits Cobham's formula gives).
//!
//! The queue keeps one FIFO lane per priority rank (one lane for every other
//! discipline) and takes from the highest rank that has a request: its
//! oldest, or its newest for LIFO, and for adaptive LIFO while the queue is
//! longer than the threshold. Nothing is ever reordered or preempted.

use std::collections::VecDeque;
use stormsim_model::QueueDiscipline;

/// The requests waiting for a worker at one instance.
#[derive(Clone, Debug)]
pub struct WaitQueue<T> {
    /// `lanes[rank]`, oldest first.
    lanes: Vec<VecDeque<T>>,
    len: usize,
}

impl<T: Copy> Default for WaitQueue<T> {
    fn default() -> Self {
        WaitQueue {
            lanes: vec![VecDeque::new()],
            len: 0,
        }
    }
}

impl<T: Copy> WaitQueue<T> {
    /// A request of priority `rank` (0 first) joins the queue.
    pub fn push(&mut self, item: T, rank: usize) {
        if self.lanes.len() <= rank {
            self.lanes.resize_with(rank + 1, VecDeque::new);
        }
        self.lanes[rank].push_back(item);
        self.len += 1;
    }

    /// The request a freed worker takes under `discipline`, if any waits.
    pub fn pop(&mut self, discipline: &QueueDiscipline) -> Option<T> {
        let newest_first = match discipline {
            QueueDiscipline::Fifo | QueueDiscipline::Priority { .. } => false,
            QueueDiscipline::Lifo => true,
            QueueDiscipline::AdaptiveLifo { above } => self.len > *above as usize,
        };
        let lane = self.lanes.iter_mut().find(|lane| !lane.is_empty())?;
        let item = if newest_first {
            lane.pop_back()
        } else {
            lane.pop_front()
        };
        self.len -= 1;
        item
    }

    /// The request `n` places behind the next one to be served, for a
    /// prefetch hint; only known for a single FIFO lane (`None` otherwise).
    pub fn upcoming_fifo(&self, n: usize, discipline: &QueueDiscipline) -> Option<T> {
        match (discipline, self.lanes.as_slice()) {
            (QueueDiscipline::Fifo, [lane]) => lane.get(n).copied(),
            _ => None,
        }
    }

    /// Requests waiting.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether none waits.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drain(q: &mut WaitQueue<u32>, d: &QueueDiscipline) -> Vec<u32> {
        std::iter::from_fn(|| q.pop(d)).collect()
    }

    fn filled(items: &[(u32, usize)]) -> WaitQueue<u32> {
        let mut q = WaitQueue::default();
        for &(item, rank) in items {
            q.push(item, rank);
        }
        q
    }

    #[test]
    fn fifo_serves_the_oldest_and_lifo_the_newest() {
        let items: Vec<(u32, usize)> = (1..=4).map(|i| (i, 0)).collect();
        assert_eq!(
            drain(&mut filled(&items), &QueueDiscipline::Fifo),
            [1, 2, 3, 4]
        );
        assert_eq!(
            drain(&mut filled(&items), &QueueDiscipline::Lifo),
            [4, 3, 2, 1]
        );
    }

    /// Above the threshold the newest goes first; once the queue is back to
    /// the threshold, the oldest. With `above: 2` and five waiting: 5 (five
    /// wait), 4 (four), 3 (three), then FIFO for the two left: 1, 2.
    #[test]
    fn adaptive_lifo_switches_at_its_threshold() {
        let d = QueueDiscipline::AdaptiveLifo { above: 2 };
        let items: Vec<(u32, usize)> = (1..=5).map(|i| (i, 0)).collect();
        assert_eq!(drain(&mut filled(&items), &d), [5, 4, 3, 1, 2]);
        // At exactly the threshold it is FIFO.
        let mut q = filled(&[(1, 0), (2, 0)]);
        assert_eq!(q.pop(&d), Some(1));
        // Arrivals between pops count: 2 and 3 waiting, then 4 arrives (three
        // wait, above two): the newest, 4.
        q.push(3, 0);
        q.push(4, 0);
        assert_eq!(q.pop(&d), Some(4));
        assert_eq!(drain(&mut q, &d), [2, 3]);
    }

    /// Priority: every request of a higher rank before any of a lower one,
    /// oldest first within a rank, whatever the arrival order.
    #[test]
    fn priority_serves_ranks_in_order_and_each_rank_oldest_first() {
        let d = QueueDiscipline::Priority {
            rank: vec![1, 0],
            ranks: 3,
        };
        let mut q = filled(&[(10, 2), (11, 1), (12, 0), (13, 1), (14, 0), (15, 2)]);
        assert_eq!(q.len(), 6);
        assert_eq!(drain(&mut q, &d), [12, 14, 11, 13, 10, 15]);
        assert!(q.is_empty());
        assert_eq!(d.rank_of(Some(0)), 1);
        assert_eq!(d.rank_of(Some(1)), 0);
        // A class the order does not list, and no class, rank last.
        assert_eq!(d.rank_of(Some(7)), 2);
        assert_eq!(d.rank_of(None), 2);
    }

    #[test]
    fn only_a_single_fifo_lane_gives_a_prefetch_hint() {
        let q = filled(&[(1, 0), (2, 0), (3, 0)]);
        assert_eq!(q.upcoming_fifo(2, &QueueDiscipline::Fifo), Some(3));
        assert_eq!(q.upcoming_fifo(2, &QueueDiscipline::Lifo), None);
    }
}
