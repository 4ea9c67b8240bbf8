//! Per-bucket time series of a run: what an operator's dashboard would show.
//!
//! Counters go to the bucket of the event's time; gauges (queue, in flight) are
//! sampled at each bucket's start; busy time is integrated exactly, so
//! utilisation is the true mean over the bucket. Memory grows with buckets, not
//! with requests.

use crate::metrics::{FailureCounts, LatencyRecorder, Outcome};
use stormsim_engine::{SimDuration, SimTime};

/// Run-wide counters of one bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GlobalBucket {
    /// Logical requests that arrived.
    pub requests: u64,
    /// Logical requests answered with success (goodput), in full or degraded.
    pub succeeded: u64,
    /// Of those, answered degraded by a fallback.
    pub degraded: u64,
    /// Logical requests answered with an error, by reason.
    pub failures: FailureCounts,
    /// Sum of the latencies of the requests answered in the bucket, ns.
    pub latency_sum_ns: u128,
    /// Most zombie requests alive at once during the bucket (its start
    /// included): tries over for their sender whose work still runs
    /// ([`crate::zombie`]). A peak, not a sample, so that short-lived zombies
    /// show.
    pub zombies: u64,
}

impl GlobalBucket {
    /// Requests answered in the bucket.
    pub fn answered(&self) -> u64 {
        self.succeeded + self.failures.total()
    }

    /// Mean latency of the requests answered in the bucket, ms (`None` if none).
    pub fn mean_latency_ms(&self) -> Option<f64> {
        let n = self.answered();
        (n > 0).then(|| self.latency_sum_ns as f64 / n as f64 / 1e6)
    }
}

/// One service's counters and gauges in one bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ServiceBucket {
    /// First attempts received.
    pub offered_first: u64,
    /// Retries received.
    pub offered_retry: u64,
    /// Handlers completed.
    pub completed: u64,
    /// Of those, after the caller had left.
    pub wasted: u64,
    /// Handlers stopped by cancellation.
    pub cancelled: u64,
    /// Refused by a full queue.
    pub rejected: u64,
    /// Refused or dropped by admission control.
    pub shed: u64,
    /// Admitted arrivals that found every worker busy and waited in the queue
    /// (P(wait) counted per request; in memory, not in timeseries.csv).
    pub queued: u64,
    /// Handlers that got a worker, at once or from the queue.
    pub started: u64,
    /// Their waits for it, summed, ns.
    pub wait_ns: u128,
    /// The handlers completed in the bucket: their times from getting a
    /// worker to completing, summed, ns (a handler that calls others
    /// includes its waits for them).
    pub service_ns: u128,
    /// Waiting requests at the bucket's start.
    pub queue: u64,
    /// Requests holding a worker or waiting for one, at the bucket's start.
    pub in_flight: u64,
    /// Worker-nanoseconds busy during the bucket.
    pub busy_ns: u128,
    /// Worker-nanoseconds up during the bucket: its workers over its
    /// instances up, integrated over the bucket's time, within the run;
    /// [`ServiceBucket::UNBOUNDED`] if they were unbounded for some of it
    /// (read through [`ServiceBucket::worker_ns_up`]; not an `Option`, which
    /// would cost 16 bytes more in each of up to 10⁷ rows).
    pub worker_ns: u128,
    /// Breakers guarding calls to this service that are open at the bucket's start.
    pub breakers_open: u32,
    /// Retry-budget tokens on the edges to this service at the bucket's start,
    /// summed (`None` without budgets).
    pub budget_tokens: Option<f64>,
}

/// A service's `cpu` in one bucket: kept apart from [`ServiceBucket`], for
/// the services that have one only, so that a model without a cpu keeps
/// its rows as small as before.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CpuBucket {
    /// Core-nanoseconds of work its cores did during the bucket: the busy
    /// cores' time, where [`ServiceBucket::busy_ns`] is the busy workers'
    /// (threads').
    pub cores_busy_ns: u128,
    /// Core-nanoseconds up during the bucket, over its instances up, within
    /// the run.
    pub core_ns: u128,
}

/// A service's state at a bucket's start.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Gauges {
    pub queue: u64,
    pub in_flight: u64,
    pub breakers_open: u32,
    pub budget_tokens: Option<f64>,
}

impl ServiceBucket {
    /// [`ServiceBucket::worker_ns`] of a bucket with unbounded workers.
    pub const UNBOUNDED: u128 = u128::MAX;

    /// Worker-nanoseconds up in the bucket, if bounded and any.
    pub fn worker_ns_up(&self) -> Option<u128> {
        (self.worker_ns != Self::UNBOUNDED && self.worker_ns > 0).then_some(self.worker_ns)
    }

    /// All attempts received.
    pub fn offered(&self) -> u64 {
        self.offered_first + self.offered_retry
    }

    /// Mean wait for a worker of the handlers that got one in the bucket, ms.
    pub fn mean_wait_ms(&self) -> Option<f64> {
        (self.started > 0).then(|| self.wait_ns as f64 / self.started as f64 / 1e6)
    }

    /// Mean service time of the handlers completed in the bucket, ms.
    pub fn mean_service_ms(&self) -> Option<f64> {
        (self.completed > 0).then(|| self.service_ns as f64 / self.completed as f64 / 1e6)
    }
}

/// One workload's latency quantiles in one bucket.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WorkloadBucket {
    /// Median latency of its requests answered in the bucket, ms (`None`:
    /// none answered).
    pub p50_ms: Option<f64>,
    /// Their 99th percentile, ms.
    pub p99_ms: Option<f64>,
    /// How many were answered (in memory, not in timeseries.csv).
    pub answered: u64,
    /// The sum of their latencies, ns: exact per-workload means, as the
    /// validation of priority queues needs (in memory only).
    pub latency_sum_ns: u128,
    /// Its logical requests that arrived in the bucket (in memory only: the
    /// recovery analysis holds each workload to its own share of successes).
    pub requests: u64,
    /// Of its requests answered in the bucket, those that succeeded (in
    /// memory only).
    pub succeeded: u64,
    /// Of those, answered degraded by a fallback (in memory only: a
    /// recovery is judged on full answers).
    pub degraded: u64,
}

/// The time series of one run.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeSeries {
    /// Bucket width.
    pub bucket: SimDuration,
    /// Services per bucket.
    pub services: usize,
    /// Run-wide rows, one per bucket.
    pub global: Vec<GlobalBucket>,
    /// Per-service rows: `per_service[b * services + s]`.
    pub per_service: Vec<ServiceBucket>,
    /// Each service's place among those with a `cpu` (a timeline cannot add
    /// or remove one), `None` without.
    cpu_place: Vec<Option<usize>>,
    /// Services with a `cpu`.
    cpus: usize,
    /// Per-cpu rows: `per_cpu[b * cpus + place]`.
    per_cpu: Vec<CpuBucket>,
    /// Where the open bucket's rows start in `per_service`: the handlers
    /// count into them once or twice per attempt, and this spares each a
    /// multiplication.
    open_row: usize,
    /// Workloads per bucket.
    pub workloads: usize,
    /// Per-workload rows of the closed buckets: `per_workload[b * workloads
    /// + w]` (the open bucket's are filled when it closes).
    pub per_workload: Vec<WorkloadBucket>,
    /// The latencies answered in the open bucket, per workload.
    open_latencies: Vec<OpenLatencies>,
    /// When the run ended (`None` while it runs): the last bucket ends there,
    /// which may cut it short.
    ended: Option<SimTime>,
}

/// Most latencies of one workload a bucket keeps one by one (8 MB): its
/// quantiles are exact up to this many answers, and from an HDR histogram
/// (within 0.1%) past it. Kept one by one without a bound, a workload
/// answered a billion times in one bucket (a closed loop of users who never
/// pause) held 8 GB.
pub const MAX_EXACT_LATENCIES: usize = 1 << 20;

/// The latencies one workload's requests answered in the open bucket: each
/// one, ns, up to [`MAX_EXACT_LATENCIES`], then their histogram.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct OpenLatencies {
    exact: Vec<u64>,
    past_exact: Option<Box<PastExact>>,
    /// Requests that arrived in the open bucket.
    pub(crate) requests: u64,
    /// Requests answered with success in the open bucket.
    pub(crate) succeeded: u64,
    /// Of those, degraded.
    pub(crate) degraded: u64,
}

/// A bucket's latencies past [`MAX_EXACT_LATENCIES`]: all of them in a
/// histogram, their count and sum exact.
#[derive(Clone, Debug, PartialEq)]
struct PastExact {
    histogram: LatencyRecorder,
    answered: u64,
    sum_ns: u128,
}

impl OpenLatencies {
    #[inline]
    pub(crate) fn record(&mut self, latency: SimDuration) {
        match &mut self.past_exact {
            Some(past) => {
                past.histogram.record(latency);
                past.answered += 1;
                past.sum_ns += u128::from(latency.as_nanos());
            }
            None if self.exact.len() < MAX_EXACT_LATENCIES => self.exact.push(latency.as_nanos()),
            None => self.overflow(latency),
        }
    }

    /// One answer too many to keep one by one: they go into a histogram.
    #[cold]
    fn overflow(&mut self, latency: SimDuration) {
        let mut past = PastExact {
            histogram: LatencyRecorder::default(),
            answered: self.exact.len() as u64,
            sum_ns: sum_ns(&self.exact),
        };
        for &ns in &self.exact {
            past.histogram.record(SimDuration(ns));
        }
        self.exact = Vec::new();
        self.past_exact = Some(Box::new(past));
        self.record(latency);
    }

    /// The bucket's row, and a fresh start for the next.
    pub(crate) fn close(&mut self) -> WorkloadBucket {
        let requests = std::mem::take(&mut self.requests);
        let succeeded = std::mem::take(&mut self.succeeded);
        let degraded = std::mem::take(&mut self.degraded);
        if let Some(past) = self.past_exact.take() {
            let q = past.histogram.quantiles();
            return WorkloadBucket {
                p50_ms: q.map(|q| q.p50),
                p99_ms: q.map(|q| q.p99),
                answered: past.answered,
                latency_sum_ns: past.sum_ns,
                requests,
                succeeded,
                degraded,
            };
        }
        let row = WorkloadBucket {
            p50_ms: nearest_rank(&mut self.exact, 0.50),
            p99_ms: nearest_rank(&mut self.exact, 0.99),
            answered: self.exact.len() as u64,
            latency_sum_ns: sum_ns(&self.exact),
            requests,
            succeeded,
            degraded,
        };
        self.exact.clear();
        row
    }
}

fn sum_ns(latencies: &[u64]) -> u128 {
    latencies.iter().map(|&l| u128::from(l)).sum()
}

/// What a closed bucket had of a service's workers and cores.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct BucketCapacity {
    /// Worker-nanoseconds up (`None`: unbounded for some of the bucket).
    pub worker_ns: Option<u128>,
    /// Core-nanoseconds up.
    pub core_ns: u128,
}

impl TimeSeries {
    /// `has_cpu` says, per service, whether it has a `cpu`.
    pub(crate) fn new(
        bucket: SimDuration,
        has_cpu: impl Iterator<Item = bool>,
        workloads: usize,
    ) -> TimeSeries {
        let mut cpus = 0;
        let cpu_place: Vec<Option<usize>> = has_cpu
            .map(|has| {
                has.then(|| {
                    cpus += 1;
                    cpus - 1
                })
            })
            .collect();
        TimeSeries {
            bucket,
            services: cpu_place.len(),
            global: Vec::new(),
            per_service: Vec::new(),
            cpu_place,
            cpus,
            per_cpu: Vec::new(),
            open_row: 0,
            workloads,
            per_workload: Vec::new(),
            open_latencies: vec![OpenLatencies::default(); workloads],
            ended: None,
        }
    }

    /// The series of a run measured whole ([`crate::fast`]): its rows,
    /// every bucket closed, for services without a `cpu`; it ended at `end`.
    pub(crate) fn from_rows(
        bucket: SimDuration,
        services: usize,
        global: Vec<GlobalBucket>,
        per_service: Vec<ServiceBucket>,
        per_workload: Vec<WorkloadBucket>,
        end: SimTime,
    ) -> TimeSeries {
        let workloads = per_workload.len() / global.len().max(1);
        debug_assert_eq!(per_service.len(), global.len() * services);
        TimeSeries {
            bucket,
            services,
            open_row: per_service.len().saturating_sub(services),
            global,
            per_service,
            cpu_place: vec![None; services],
            cpus: 0,
            per_cpu: Vec::new(),
            workloads,
            per_workload,
            open_latencies: vec![OpenLatencies::default(); workloads],
            ended: Some(end),
        }
    }

    /// The run ended at `end`, inside the last bucket (or at its end).
    pub(crate) fn end_at(&mut self, end: SimTime) {
        self.ended = Some(end);
    }

    /// How long bucket `b` lasted, ns: the bucket width, but the last one
    /// only up to the run's end, which a horizon off the grid, a limit or a
    /// run left to drain may put inside it. A mean over the bucket divides
    /// by this, so that a bucket cut short is not read as idle for the rest.
    pub fn width_ns(&self, b: usize) -> u64 {
        let width = self.bucket.as_nanos();
        match self.ended {
            Some(end) if b + 1 == self.len() => {
                let start = width.saturating_mul(b as u64);
                end.as_nanos().saturating_sub(start).min(width)
            }
            _ => width,
        }
    }

    /// An integral over bucket `b` (busy worker- or core-nanoseconds) as a
    /// mean over its [width](Self::width_ns); none over a last bucket of no
    /// width: a run that ended on the instant the bucket starts (its events
    /// at that instant are counted in it, but a mean over no time is none).
    pub fn mean_over_bucket(&self, b: usize, integral_ns: u128) -> Option<f64> {
        match self.width_ns(b) {
            0 => None,
            width => Some(integral_ns as f64 / width as f64),
        }
    }

    /// Workload `w` in bucket `b` (closed buckets only; see
    /// `TimeSeries::close`).
    pub fn workload(&self, b: usize, w: usize) -> WorkloadBucket {
        self.per_workload
            .get(b * self.workloads + w)
            .copied()
            .unwrap_or_default()
    }

    /// Closes the open bucket: its per-workload quantiles are computed and
    /// its latencies let go. Opening the next bucket does this; the run's end
    /// does it for the last.
    pub(crate) fn close(&mut self) {
        if self.per_workload.len() >= self.global.len() * self.workloads {
            return;
        }
        for latencies in &mut self.open_latencies {
            self.per_workload.push(latencies.close());
        }
    }

    /// Buckets recorded.
    pub fn len(&self) -> usize {
        self.global.len()
    }

    /// Whether no bucket was recorded.
    pub fn is_empty(&self) -> bool {
        self.global.is_empty()
    }

    /// Start of bucket `b`, seconds.
    pub fn start_s(&self, b: usize) -> f64 {
        (self.bucket.as_nanos() as f64 * b as f64) / 1e9
    }

    /// Bucket width, seconds.
    pub fn bucket_s(&self) -> f64 {
        self.bucket.as_nanos() as f64 / 1e9
    }

    /// Service `s` in bucket `b`.
    pub fn service(&self, b: usize, s: usize) -> &ServiceBucket {
        &self.per_service[b * self.services + s]
    }

    /// Whether service `s` has a `cpu`.
    pub fn has_cpu(&self, s: usize) -> bool {
        self.cpu_place[s].is_some()
    }

    /// Service `s`'s cpu in bucket `b`, if it has one.
    pub fn cpu(&self, b: usize, s: usize) -> Option<&CpuBucket> {
        self.cpu_place[s].map(|place| &self.per_cpu[b * self.cpus + place])
    }

    /// The bucket index of an instant.
    pub(crate) fn index(&self, t: SimTime) -> usize {
        (t.as_nanos() / self.bucket.as_nanos().max(1)) as usize
    }

    /// The first instant not in an open bucket (the start of bucket `len()`,
    /// as [`TimeSeries::index`] counts): the run loop compares each event's
    /// time with it instead of dividing.
    pub(crate) fn first_unopened_instant(&self) -> SimTime {
        SimTime(
            self.bucket
                .as_nanos()
                .max(1)
                .saturating_mul(self.len() as u64),
        )
    }

    /// The start of bucket `b`.
    pub(crate) fn boundary(&self, b: usize) -> SimTime {
        SimTime(self.bucket.as_nanos().saturating_mul(b as u64))
    }

    /// Opens bucket `b`, with its gauges sampled now (its start).
    pub(crate) fn open(&mut self, zombies: u64, gauges: impl Iterator<Item = Gauges>) {
        self.close();
        self.global.push(GlobalBucket {
            zombies,
            ..GlobalBucket::default()
        });
        self.open_row = self.per_service.len();
        for (g, place) in gauges.zip(&self.cpu_place) {
            if place.is_some() {
                self.per_cpu.push(CpuBucket::default());
            }
            self.per_service.push(ServiceBucket {
                queue: g.queue,
                in_flight: g.in_flight,
                breakers_open: g.breakers_open,
                budget_tokens: g.budget_tokens,
                ..ServiceBucket::default()
            });
        }
    }

    pub(crate) fn global_mut(&mut self) -> &mut GlobalBucket {
        self.global.last_mut().expect("a bucket is open")
    }

    /// Service `s` in the open bucket.
    #[inline]
    pub(crate) fn service_mut(&mut self, s: usize) -> &mut ServiceBucket {
        &mut self.per_service[self.open_row + s]
    }

    /// Closes bucket `b`'s time integrals for service `s`: its workers' and
    /// cores' time busy, and the time they were up.
    pub(crate) fn close_service(
        &mut self,
        b: usize,
        s: usize,
        busy_ns: u128,
        cores_busy_ns: u128,
        capacity: BucketCapacity,
    ) {
        let x = &mut self.per_service[b * self.services + s];
        x.busy_ns = busy_ns;
        x.worker_ns = capacity.worker_ns.unwrap_or(ServiceBucket::UNBOUNDED);
        if let Some(place) = self.cpu_place[s] {
            let cpu = &mut self.per_cpu[b * self.cpus + place];
            cpu.cores_busy_ns = cores_busy_ns;
            cpu.core_ns = capacity.core_ns;
        }
    }

    /// A logical request of (reported) workload `workload` arrived.
    pub(crate) fn request_started(&mut self, workload: usize) {
        self.global_mut().requests += 1;
        if let Some(open) = self.open_latencies.get_mut(workload) {
            open.requests += 1;
        }
    }

    pub(crate) fn answered(&mut self, workload: usize, latency: SimDuration, outcome: Outcome) {
        let degraded = u64::from(outcome.degraded_by() != 0);
        if let Some(latencies) = self.open_latencies.get_mut(workload) {
            latencies.record(latency);
            latencies.succeeded += u64::from(outcome.is_success());
            latencies.degraded += degraded;
        }
        let g = self.global_mut();
        g.latency_sum_ns += u128::from(latency.as_nanos());
        match outcome {
            Outcome::Ok => g.succeeded += 1,
            Outcome::Degraded(_) => {
                g.succeeded += 1;
                g.degraded += 1;
            }
            Outcome::Failed(reason) => g.failures.add(reason),
        }
    }
}

/// The nearest-rank `p`-quantile of `values` (the smallest value with at
/// least a share `p` of them at or below it), in ms; `None` for no values.
/// Reorders `values`.
fn nearest_rank(values: &mut [u64], p: f64) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let rank = ((p * values.len() as f64).ceil() as usize).clamp(1, values.len());
    let (_, v, _) = values.select_nth_unstable(rank - 1);
    Some(*v as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        let mut v: Vec<u64> = (1..=100).map(|ms| ms * 1_000_000).collect();
        assert_eq!(nearest_rank(&mut v, 0.5), Some(50.0));
        assert_eq!(nearest_rank(&mut v, 0.99), Some(99.0));
        let mut one = vec![7_000_000];
        assert_eq!(nearest_rank(&mut one, 0.5), Some(7.0));
        assert_eq!(nearest_rank(&mut one, 0.99), Some(7.0));
        // 1, 2, 3: the median is 2; p99 is the largest.
        let mut three = vec![3_000_000, 1_000_000, 2_000_000];
        assert_eq!(nearest_rank(&mut three, 0.5), Some(2.0));
        assert_eq!(nearest_rank(&mut three, 0.99), Some(3.0));
        assert_eq!(nearest_rank(&mut [], 0.5), None);
    }

    /// A bucket's quantiles are of the answers in that bucket only.
    #[test]
    fn each_bucket_has_its_own_quantiles() {
        let mut ts = TimeSeries::new(SimDuration::from_secs(1), std::iter::empty(), 2);
        ts.open(0, std::iter::empty());
        for ms in [10.0, 20.0, 30.0] {
            ts.answered(0, SimDuration::from_ms(ms), Outcome::Ok);
        }
        ts.open(0, std::iter::empty());
        ts.answered(1, SimDuration::from_ms(5.0), Outcome::Ok);
        ts.close();
        ts.close(); // closing twice changes nothing
        assert_eq!(ts.workload(0, 0).p50_ms, Some(20.0));
        assert_eq!(ts.workload(0, 1).p50_ms, None);
        assert_eq!(ts.workload(1, 0), WorkloadBucket::default());
        assert_eq!(ts.workload(1, 1).p99_ms, Some(5.0));
        assert_eq!(ts.per_workload.len(), 4);
    }

    /// A bucket keeps at most `MAX_EXACT_LATENCIES` latencies one by one;
    /// past them its quantiles come from an HDR histogram, within its 0.1%,
    /// while the count and the mean stay exact, and the next bucket is
    /// exact again.
    #[test]
    fn a_bucket_past_its_exact_latencies_keeps_a_histogram() {
        let mut ts = TimeSeries::new(SimDuration::from_secs(1), std::iter::empty(), 1);
        ts.open(0, std::iter::empty());
        // 1 µs, 2 µs, ..., n µs: the median is n/2 µs, the 99th percentile 0.99 n.
        let n = MAX_EXACT_LATENCIES as u64 + 1000;
        for us in 1..=n {
            ts.answered(0, SimDuration(us * 1000), Outcome::Ok);
        }
        assert!(ts.open_latencies[0].exact.capacity() == 0, "let go of");
        ts.open(0, std::iter::empty());
        ts.answered(0, SimDuration::from_ms(3.0), Outcome::Ok);
        ts.close();
        let full = ts.workload(0, 0);
        let near = |got: Option<f64>, want_ms: f64| {
            let got = got.unwrap();
            assert!(
                (got - want_ms).abs() <= 0.001 * want_ms,
                "{got} against {want_ms}"
            );
        };
        near(full.p50_ms, n as f64 / 2.0 / 1000.0);
        near(full.p99_ms, 0.99 * n as f64 / 1000.0);
        assert_eq!(full.answered, n);
        assert_eq!(
            full.latency_sum_ns,
            u128::from(n) * u128::from(n + 1) / 2 * 1000
        );
        assert_eq!(ts.workload(1, 0).p50_ms, Some(3.0));
        assert_eq!(ts.workload(1, 0).answered, 1);
    }
}
