//! Egalitarian processor sharing: the work of the requests in service on one
//! instance shares its `cores`. With `n` jobs in the set each progresses at
//! `min(1, cores / n)` ns of work per ns of real time — the fluid model of a
//! time-sliced CPU (L. Kleinrock, "Time-shared systems: a theoretical
//! treatment", JACM 1967; *Queueing Systems* vol. 2, §4.4), with `cores: 1`
//! the M/G/1-PS queue.
//!
//! Every job in the set progresses at the same rate, so one number says how
//! far they all got: a virtual time `V` that advances at that rate. A job that
//! joins at `V₀` with `w` of work finishes when `V` reaches its finish tag
//! `F = V₀ + w`, whatever joins or leaves meanwhile; the jobs are kept in
//! `(F, insertion)` order, so the next to finish is the first, and its real
//! finish instant is `now + (F − V) / rate` until the set changes again.
//!
//! Times are whole nanoseconds and `V` is an `f64` of work-nanoseconds: every
//! operation is an IEEE one in a fixed order, so a run repeats bit for bit. A
//! finish instant is rounded up to the next nanosecond; a job counts as
//! finished once `V` is within a slack of its tag (a millionth of a
//! nanosecond, plus 10⁻¹³ of `V`), so that rounding noise in `V` never
//! pushes a finish a nanosecond late. `V` restarts at 0 whenever the set
//! empties, which keeps it small and its rounding finer.

use std::collections::BTreeMap;
use stormsim_engine::{SimDuration, SimTime};

/// Absolute part of the slack, work-ns, within which a job's tag counts as
/// reached: far below a nanosecond, far above `f64` noise while `V` is small.
const TOLERANCE: f64 = 1e-6;
/// Relative part of the slack (of `V`): when `V` is large its own rounding
/// grows with it.
const RELATIVE_TOLERANCE: f64 = 1e-13;

/// A job in the set, as [`ProcessorSharing::start`] returned it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JobId(pub u64);

/// A finish tag: a finite, non-negative work-ns, ordered as a number.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Tag(f64);

impl Eq for Tag {}
impl PartialOrd for Tag {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Tag {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// The jobs sharing one instance's cores, each carrying an `item` (what to
/// do when it finishes).
#[derive(Clone, Debug)]
pub struct ProcessorSharing<T> {
    cores: u32,
    /// Work each job in the set has received since the set was last empty,
    /// ns, as of `at`.
    virtual_ns: f64,
    at: SimTime,
    /// By `(finish tag, insertion sequence)`: the next to finish first.
    jobs: BTreeMap<(Tag, u64), T>,
    /// Each job's finish tag, by insertion sequence (its [`JobId`]).
    tags: BTreeMap<u64, Tag>,
    next_seq: u64,
    /// Work done by the cores since the set was made, core-ns, as of `at`:
    /// `min(n, cores)` cores busy for each ns, an exact integer (the busy
    /// cores' time, where a service's `busy` counts threads).
    work_done_ns: u128,
}

impl<T: Copy> ProcessorSharing<T> {
    /// An idle set of `cores` (at least 1).
    pub fn new(cores: u32) -> ProcessorSharing<T> {
        ProcessorSharing {
            cores: cores.max(1),
            virtual_ns: 0.0,
            at: SimTime::ZERO,
            jobs: BTreeMap::new(),
            tags: BTreeMap::new(),
            next_seq: 0,
            work_done_ns: 0,
        }
    }

    /// Jobs in the set.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    /// Whether no job is in the set.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// The cores shared.
    pub fn cores(&self) -> u32 {
        self.cores
    }

    /// Work-ns per ns each job receives now: `min(1, cores / n)`.
    pub fn rate(&self) -> f64 {
        let n = self.jobs.len() as u64;
        if n <= u64::from(self.cores) {
            1.0
        } else {
            f64::from(self.cores) / n as f64
        }
    }

    /// Cores busy now: `min(n, cores)`.
    fn busy_cores(&self) -> u64 {
        (self.jobs.len() as u64).min(u64::from(self.cores))
    }

    /// Work the cores have done from the set's making to `now` (not before
    /// its last change), core-ns: the integral of the busy cores over time.
    pub fn work_done_ns_at(&self, now: SimTime) -> u128 {
        let since = (now.max(self.at) - self.at).as_nanos();
        self.work_done_ns + u128::from(self.busy_cores()) * u128::from(since)
    }

    /// Brings `V` up to `now` at the rate in force since the last change.
    fn advance(&mut self, now: SimTime) {
        debug_assert!(now >= self.at, "processor sharing moved back in time");
        if self.jobs.is_empty() {
            self.virtual_ns = 0.0;
        } else if now > self.at {
            self.virtual_ns += (now - self.at).as_nanos() as f64 * self.rate();
            self.work_done_ns = self.work_done_ns_at(now);
        }
        self.at = now;
    }

    /// How close to its tag `V` must be for a job to count as finished.
    fn slack(&self) -> f64 {
        TOLERANCE + self.virtual_ns * RELATIVE_TOLERANCE
    }

    /// A job of `work` joins the set at `now`.
    pub fn start(&mut self, now: SimTime, work: SimDuration, item: T) -> JobId {
        self.advance(now);
        let tag = Tag(self.virtual_ns + work.as_nanos() as f64);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.jobs.insert((tag, seq), item);
        self.tags.insert(seq, tag);
        JobId(seq)
    }

    /// Takes `job` out of the set at `now`, unfinished (cancelled, or at its
    /// limit); `None` if it is not in the set.
    pub fn remove(&mut self, now: SimTime, job: JobId) -> Option<T> {
        self.advance(now);
        let tag = self.tags.remove(&job.0)?;
        self.jobs.remove(&(tag, job.0))
    }

    /// From `now` on, the set shares `cores` (at least 1): the work done so
    /// far was done at the old rate.
    pub fn set_cores(&mut self, now: SimTime, cores: u32) {
        self.advance(now);
        self.cores = cores.max(1);
    }

    /// When the next job finishes if the set does not change, rounded up to
    /// a whole nanosecond, never before the set's last change; `None` if the
    /// set is empty.
    pub fn next_finish(&self) -> Option<SimTime> {
        let (&(tag, _), _) = self.jobs.first_key_value()?;
        // Aim a little short of the tag, by half the slack `pop_finished`
        // allows, so that the rounding of `V` on the way cannot leave it a
        // hair short when the instant comes.
        let left = tag.0 - self.virtual_ns - self.slack() / 2.0;
        if left <= 0.0 {
            return Some(self.at);
        }
        let ns = (left / self.rate()).ceil();
        Some(if ns >= u64::MAX as f64 {
            SimTime::NEVER
        } else {
            self.at + SimDuration(ns as u64)
        })
    }

    /// The next job finished by `now`, taken out of the set; `None` if none
    /// is. Call until `None`: jobs that finish at one instant come out in
    /// `(tag, insertion)` order.
    pub fn pop_finished(&mut self, now: SimTime) -> Option<T> {
        self.advance(now);
        let (&(tag, seq), _) = self.jobs.first_key_value()?;
        if tag.0 - self.virtual_ns > self.slack() {
            return None;
        }
        // Exactly at its tag: the others' progress is counted from there.
        self.virtual_ns = self.virtual_ns.max(tag.0);
        self.tags.remove(&seq);
        self.jobs.remove(&(tag, seq))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn at_ms(ms: f64) -> SimTime {
        SimTime((ms * MS as f64).round() as u64)
    }

    fn work_ms(ms: f64) -> SimDuration {
        SimDuration((ms * MS as f64).round() as u64)
    }

    /// Runs the set to its end as the simulator does (a timer at each next
    /// finish), returning `(item, finish instant in ns)` in finish order.
    fn drain(ps: &mut ProcessorSharing<char>) -> Vec<(char, u64)> {
        let mut out = Vec::new();
        while let Some(t) = ps.next_finish() {
            while let Some(item) = ps.pop_finished(t) {
                out.push((item, t.as_nanos()));
            }
        }
        out
    }

    /// One core, 4 ms and 2 ms of work from 0: each at half speed until the
    /// 2 ms job is done at 4 ms (each got 2 ms), then the 4 ms job alone at
    /// full speed for its last 2 ms: 6 ms.
    #[test]
    fn one_core_two_jobs() {
        let mut ps = ProcessorSharing::new(1);
        ps.start(SimTime::ZERO, work_ms(4.0), 'a');
        ps.start(SimTime::ZERO, work_ms(2.0), 'b');
        assert_eq!(ps.rate(), 0.5);
        assert_eq!(ps.next_finish(), Some(at_ms(4.0)));
        assert_eq!(ps.pop_finished(at_ms(3.9)), None);
        assert_eq!(drain(&mut ps), vec![('b', 4 * MS), ('a', 6 * MS)]);
        assert!(ps.is_empty());
    }

    /// One core, 4 ms and 2 ms from 0, a third of 1 ms at 2 ms: by then each
    /// got 1 ms (V = 1). Three share the core: the 2 ms job and the new one
    /// each need 1 ms more at a third of the core, done at 5 ms together (the
    /// older first); the 4 ms job has 2 ms left alone: 7 ms, the total work.
    #[test]
    fn one_core_a_third_job_midway() {
        let mut ps = ProcessorSharing::new(1);
        ps.start(SimTime::ZERO, work_ms(4.0), 'a');
        ps.start(SimTime::ZERO, work_ms(2.0), 'b');
        assert_eq!(ps.pop_finished(at_ms(2.0)), None);
        ps.start(at_ms(2.0), work_ms(1.0), 'c');
        assert_eq!(
            drain(&mut ps),
            vec![('b', 5 * MS), ('c', 5 * MS), ('a', 7 * MS)]
        );
    }

    /// Two cores, three jobs of 3, 3 and 6 ms from 0: each at two thirds of a
    /// core until the short ones are done (V = 3 at 4.5 ms), then the long
    /// one alone on a core of its own for its last 3 ms: 7.5 ms.
    #[test]
    fn two_cores_three_jobs() {
        let mut ps = ProcessorSharing::new(2);
        for (item, ms) in [('a', 3.0), ('b', 3.0), ('c', 6.0)] {
            ps.start(SimTime::ZERO, work_ms(ms), item);
        }
        assert_eq!(ps.rate(), 2.0 / 3.0);
        assert_eq!(
            drain(&mut ps),
            vec![('a', 4_500_000), ('b', 4_500_000), ('c', 7_500_000)]
        );
    }

    /// Up to `cores` jobs run at full speed, as if alone.
    #[test]
    fn as_many_jobs_as_cores_do_not_slow() {
        let mut ps = ProcessorSharing::new(4);
        for (item, ms) in [('a', 1.0), ('b', 2.0), ('c', 3.0), ('d', 4.0)] {
            ps.start(SimTime::ZERO, work_ms(ms), item);
        }
        assert_eq!(
            drain(&mut ps),
            vec![('a', MS), ('b', 2 * MS), ('c', 3 * MS), ('d', 4 * MS)]
        );
    }

    /// One core, 4 ms and 2 ms from 0; the 4 ms job leaves at 1 ms
    /// (cancelled): the 2 ms job got 0.5 ms and does its last 1.5 ms alone,
    /// done at 2.5 ms. Removing it again finds nothing.
    #[test]
    fn a_removal_speeds_up_the_rest() {
        let mut ps = ProcessorSharing::new(1);
        let a = ps.start(SimTime::ZERO, work_ms(4.0), 'a');
        ps.start(SimTime::ZERO, work_ms(2.0), 'b');
        assert_eq!(ps.remove(at_ms(1.0), a), Some('a'));
        assert_eq!(ps.remove(at_ms(1.0), a), None);
        assert_eq!(drain(&mut ps), vec![('b', 2_500_000)]);
    }

    /// One core, two 4 ms jobs from 0; at 2 ms (each got 1 ms) a second core
    /// comes: each does its last 3 ms at full speed, done at 5 ms.
    #[test]
    fn more_cores_midway() {
        let mut ps = ProcessorSharing::new(1);
        ps.start(SimTime::ZERO, work_ms(4.0), 'a');
        ps.start(SimTime::ZERO, work_ms(4.0), 'b');
        ps.set_cores(at_ms(2.0), 2);
        assert_eq!(drain(&mut ps), vec![('a', 5 * MS), ('b', 5 * MS)]);
    }

    /// Three 1 ms jobs on one core end together at 3 ms, although a third
    /// is not exact in binary; three 1 ns jobs on two cores end at 1.5 ns,
    /// rounded up to 2 ns; work of 0 ends at once.
    #[test]
    fn rounding_never_makes_a_finish_late() {
        let mut ps = ProcessorSharing::new(1);
        for item in ['a', 'b', 'c'] {
            ps.start(SimTime::ZERO, work_ms(1.0), item);
        }
        assert_eq!(
            drain(&mut ps),
            vec![('a', 3 * MS), ('b', 3 * MS), ('c', 3 * MS)]
        );
        let mut ps = ProcessorSharing::new(2);
        for item in ['a', 'b', 'c'] {
            ps.start(SimTime(10), SimDuration(1), item);
        }
        assert_eq!(drain(&mut ps), vec![('a', 12), ('b', 12), ('c', 12)]);
        ps.start(SimTime(20), SimDuration::ZERO, 'z');
        assert_eq!(drain(&mut ps), vec![('z', 20)]);
    }

    /// Many jobs arriving and leaving at odd instants: the set is work
    /// conserving (a busy core is never idle), so one core with jobs that
    /// never leave it idle ends at the sum of their work.
    #[test]
    fn one_core_ends_at_the_total_work() {
        let mut ps = ProcessorSharing::new(1);
        let mut total = 0u64;
        let mut out = Vec::new();
        let mut now = SimTime::ZERO;
        for i in 0..200u64 {
            let work = SimDuration(1_000_003 + (i * 7_919) % 3_000_017);
            total += work.as_nanos();
            ps.start(now, work, i);
            now = SimTime(now.as_nanos() + 333_331);
            while ps.next_finish().is_some_and(|t| t <= now) {
                let t = ps.next_finish().unwrap();
                while let Some(i) = ps.pop_finished(t) {
                    out.push(i);
                }
            }
        }
        let mut end = now;
        while let Some(t) = ps.next_finish() {
            while let Some(i) = ps.pop_finished(t) {
                out.push(i);
                end = t;
            }
        }
        assert_eq!(out.len(), 200);
        // Rounded up once per finish at most.
        let end = end.as_nanos();
        assert!((total..=total + 200).contains(&end), "{end} vs {total}");
        // The cores' work is the jobs' work (rounded up the same way) and,
        // on one core never idle, the time it took.
        assert_eq!(ps.work_done_ns_at(SimTime(end)), u128::from(end));
    }

    /// The cores' work is the busy cores' time: two 4 ms jobs on one core
    /// keep it busy 8 ms; on four cores, 2 busy for 4 ms, the other two idle;
    /// a core added midway (`more_cores_midway`) adds its 3 ms; a job removed
    /// unfinished counts the work it got; an idle set does no work, and the
    /// work is read at any instant without moving the set.
    #[test]
    fn the_work_done_is_the_busy_cores_time() {
        let mut ps = ProcessorSharing::new(1);
        ps.start(SimTime::ZERO, work_ms(4.0), 'a');
        ps.start(SimTime::ZERO, work_ms(4.0), 'b');
        assert_eq!(ps.work_done_ns_at(at_ms(1.0)), u128::from(MS));
        drain(&mut ps);
        assert_eq!(ps.work_done_ns_at(at_ms(100.0)), u128::from(8 * MS));

        let mut ps = ProcessorSharing::new(4);
        ps.start(SimTime::ZERO, work_ms(4.0), 'a');
        ps.start(SimTime::ZERO, work_ms(4.0), 'b');
        drain(&mut ps);
        assert_eq!(ps.work_done_ns_at(at_ms(9.0)), u128::from(8 * MS));

        let mut ps = ProcessorSharing::new(1);
        ps.start(SimTime::ZERO, work_ms(4.0), 'a');
        ps.start(SimTime::ZERO, work_ms(4.0), 'b');
        ps.set_cores(at_ms(2.0), 2);
        assert_eq!(ps.work_done_ns_at(at_ms(3.0)), u128::from(4 * MS));
        drain(&mut ps);
        assert_eq!(ps.work_done_ns_at(at_ms(5.0)), u128::from(8 * MS));

        let mut ps = ProcessorSharing::new(1);
        let a = ps.start(SimTime::ZERO, work_ms(4.0), 'a');
        ps.start(SimTime::ZERO, work_ms(2.0), 'b');
        ps.remove(at_ms(1.0), a);
        drain(&mut ps);
        // 'a' got 0.5 ms, 'b' its 2 ms: busy from 0 to 2.5 ms.
        assert_eq!(ps.work_done_ns_at(at_ms(50.0)), 2_500_000);
    }
}
