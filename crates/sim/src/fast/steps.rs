//! Counts that rise and fall at known instants (zombies alive, requests in
//! flight), kept as their steps per bucket and swept when a bucket closes:
//! the count at each bucket's start, and its peak inside the bucket.
//!
//! The fast path learns of a step when it resolves the attempt behind it,
//! before the steps due earlier are all known; a bucket's steps are all
//! known once every send before its end is resolved, and only then is it
//! swept.

/// One count's steps, by bucket.
#[derive(Debug)]
pub(crate) struct Steps {
    rises: Vec<Vec<u64>>,
    falls: Vec<Vec<u64>>,
    /// The count at the start of the next bucket to close (signed: a
    /// fall at the instant of its own rise comes first).
    alive: i64,
}

impl Steps {
    pub fn new(buckets: usize) -> Steps {
        Steps {
            rises: vec![Vec::new(); buckets],
            falls: vec![Vec::new(); buckets],
            alive: 0,
        }
    }

    /// The count rises by one at `t`, in bucket `b`.
    pub fn rise(&mut self, b: usize, t: u64) {
        self.rises[b].push(t);
    }

    /// The count falls by one at `t`, in bucket `b`.
    pub fn fall(&mut self, b: usize, t: u64) {
        self.falls[b].push(t);
    }

    /// Closes bucket `b` (buckets close in order): the count at its start,
    /// and its most just after a rise inside it (the count at its start if
    /// none). A fall at the instant of a rise comes first.
    pub fn close(&mut self, b: usize) -> (u64, u64) {
        let mut rises = std::mem::take(&mut self.rises[b]);
        let mut falls = std::mem::take(&mut self.falls[b]);
        // Rises mostly come in order already; the sort sees the runs.
        rises.sort_unstable();
        falls.sort_unstable();
        let at_start = self.alive;
        let mut peak = at_start;
        let mut f = 0;
        for rise in rises {
            while f < falls.len() && falls[f] <= rise {
                self.alive -= 1;
                f += 1;
            }
            self.alive += 1;
            peak = peak.max(self.alive);
        }
        self.alive -= (falls.len() - f) as i64;
        (at_start.max(0) as u64, peak.max(0) as u64)
    }

    /// The count now, past the buckets closed.
    pub fn alive(&self) -> u64 {
        self.alive.max(0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peaks_and_counts_carry_across_buckets() {
        let mut s = Steps::new(3);
        // Bucket 0: up at 1, 2, 3; down at 2 (before the rise at 2), 5.
        for t in [3, 1, 2] {
            s.rise(0, t);
        }
        s.fall(0, 5);
        s.fall(0, 2);
        assert_eq!(s.close(0), (0, 2));
        assert_eq!(s.alive(), 1);
        // Bucket 1: only falls: the peak is the count at its start.
        s.fall(1, 12);
        assert_eq!(s.close(1), (1, 1));
        assert_eq!(s.close(2), (0, 0));
    }
}
