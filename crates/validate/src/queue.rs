//! Which textbook queue a validation model is, read off the checked model
//! itself: the analytic values then come from the very numbers the simulator
//! ran (a variant's arrival rate, the service distribution's parameters), and
//! a model outside what the formulas cover is refused instead of compared
//! with the wrong formula.

use crate::formulas::{
    cobham_wait, erlang_b, erlang_c, mmc_mean_wait, pollaczek_khinchine_wait, relaxation_time,
    Moments,
};
use stormsim_model::{Admission, Arrival, Dist, Model, QueueDiscipline, Step};

/// Warm-up discarded at the start of every run, in relaxation times: after
/// five, what is left of the start-empty bias is under 1% of what it was.
pub const WARM_UP_RELAXATIONS: f64 = 5.0;

/// A quantity the suite measures, with its closed form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Quantity {
    /// Mean time in system W (wait plus service), ms.
    TimeInSystem,
    /// Mean wait in queue Wq, ms.
    Wait,
    /// Probability that an arrival waits (all servers busy).
    WaitProbability,
    /// Probability that an arrival is lost (all servers busy, no queue).
    Blocking,
    /// Little's law on the run itself: time-average requests in the system
    /// over arrival rate × mean time in system; 1 when L = λW.
    Little,
    /// Mean time in system of the requests of one priority rank (0 is served
    /// first), or under processor sharing of one workload (in file order),
    /// ms.
    ClassTimeInSystem(usize),
}

impl Quantity {
    /// Short label, as in the table.
    pub fn label(self) -> String {
        match self {
            Quantity::TimeInSystem => "W ms".into(),
            Quantity::Wait => "Wq ms".into(),
            Quantity::WaitProbability => "P(wait)".into(),
            Quantity::Blocking => "P(block)".into(),
            Quantity::Little => "L/(λW)".into(),
            Quantity::ClassTimeInSystem(k) => format!("W{} ms", k + 1),
        }
    }

    /// Column-friendly name, as in `validation.csv`.
    pub fn key(self) -> String {
        match self {
            Quantity::TimeInSystem => "w_ms".into(),
            Quantity::Wait => "wq_ms".into(),
            Quantity::WaitProbability => "p_wait".into(),
            Quantity::Blocking => "p_block".into(),
            Quantity::Little => "little_ratio".into(),
            Quantity::ClassTimeInSystem(k) => format!("w{}_ms", k + 1),
        }
    }
}

/// A single-station queue with Poisson arrivals: M/G/1, M/M/c, or a loss
/// system M/G/c/c, served FIFO or LIFO; an M/G/1 with non-preemptive
/// priority classes; or an M/G/1 processor-sharing queue (a `cpu` of one
/// core, unbounded workers), whose workloads may each have work of their own.
/// Times in ms.
#[derive(Clone, Debug, PartialEq)]
pub struct Queue {
    /// Arrival rate λ, per ms (every class together).
    pub rate: f64,
    /// Which waiting request goes next: `FIFO`, `LIFO`, `priority`; or `PS`,
    /// every request in service sharing one core.
    pub discipline: &'static str,
    /// With priority classes: each rank's workload index and arrival rate
    /// per ms, highest priority first. Under processor sharing with several
    /// workloads: each workload's, in file order.
    pub classes: Vec<(usize, f64)>,
    /// Under processor sharing with several workloads: each one's mean work,
    /// ms, in the order of `classes`.
    pub class_work: Vec<f64>,
    /// Servers c (workers).
    pub servers: u32,
    /// No waiting room: arrivals that find every server busy are lost.
    pub loss: bool,
    /// The service time's moments.
    pub service: Moments,
    /// Kendall's letter for the service distribution: M, D or G.
    pub service_kind: char,
    /// Arrivals stop at this time, ms.
    pub arrivals_until: f64,
    /// Width of a time-series bucket, ms.
    pub bucket: f64,
}

impl Queue {
    /// Reads the queue off a checked model, or says every reason it is not
    /// one of the queues the formulas cover.
    pub fn from_model(model: &Model) -> Result<Queue, String> {
        let mut why = Vec::new();
        let priority = model
            .services
            .first()
            .and_then(|s| match &s.queue_discipline {
                QueueDiscipline::Priority { rank, .. } => Some(rank.clone()),
                _ => None,
            });
        let sharing = model.services.first().is_some_and(|s| s.cpu.is_some());
        let workloads_ok = match &priority {
            // Under processor sharing, workloads of distinct classes may each
            // have a step of their own.
            None if sharing => {
                let mut classes: Vec<Option<u8>> =
                    model.workloads.iter().map(|w| w.class).collect();
                classes.sort();
                classes.dedup();
                model.workloads.len() == 1
                    || (classes.len() == model.workloads.len()
                        && classes.iter().all(Option::is_some))
            }
            None => model.workloads.len() == 1,
            // One workload per class, each of a distinct, ranked class.
            Some(rank) => {
                let mut ranks: Vec<Option<u8>> = model
                    .workloads
                    .iter()
                    .map(|w| w.class.and_then(|c| rank.get(usize::from(c)).copied()))
                    .collect();
                ranks.sort();
                ranks.dedup();
                model.workloads.len() >= 2
                    && ranks.len() == model.workloads.len()
                    && ranks
                        .iter()
                        .all(|r| r.is_some_and(|r| usize::from(r) < rank.len()))
            }
        };
        if !workloads_ok || model.services.len() != 1 {
            why.push(
                "needs one service and one workload, or, with priority classes, one workload per ranked class"
                    .to_string(),
            );
        }
        if model.horizon.is_some() {
            why.push("a horizon would leave requests unanswered and bias the means".into());
        }
        if model.network.constant().is_none_or(|d| d.as_nanos() != 0) {
            why.push("the network must add no latency".into());
        }
        let (Some(workload), Some(service)) = (model.workloads.first(), model.services.first())
        else {
            return Err(why.join("; "));
        };
        let mut rates = Vec::new();
        for w in &model.workloads {
            rates.push(match w.arrival {
                Arrival::Poisson { mean_gap_ns } => 1e6 / mean_gap_ns,
                _ => {
                    why.push("arrivals must be Poisson".into());
                    f64::NAN
                }
            });
            if w.duration != workload.duration || w.max_requests.is_some() {
                why.push("arrivals must be bounded by `duration_s` alone, the same for all".into());
            }
            let edge = &w.edge;
            if w.deadline.is_some()
                || !edge.attempt_timeout.is_infinite()
                || edge.retry.max_attempts != 1
                || edge.breaker.is_some()
                || edge.bulkhead.is_some()
                || edge.rate_limit.is_some()
                || edge.throttle.is_some()
            {
                why.push("the caller must wait for every answer: no deadline, timeout, retry or client policy".into());
            }
        }
        why.dedup();
        let rate: f64 = rates.iter().sum();
        let arrivals_until = workload.duration.map(|d| d.as_ms());
        if arrivals_until.is_none() {
            why.push("arrivals must be bounded by `duration_s`".into());
        }
        let (discipline, classes) = match (&service.queue_discipline, &priority) {
            // No request ever waits: the queue's order does not matter.
            (QueueDiscipline::Fifo, _) if sharing => {
                let classes = if model.workloads.len() > 1 {
                    rates.iter().copied().enumerate().collect()
                } else {
                    Vec::new()
                };
                ("PS", classes)
            }
            (QueueDiscipline::Fifo, _) => ("FIFO", Vec::new()),
            (QueueDiscipline::Lifo, _) => ("LIFO", Vec::new()),
            (QueueDiscipline::Priority { .. }, Some(rank)) => {
                let mut classes: Vec<(u8, usize, f64)> = model
                    .workloads
                    .iter()
                    .enumerate()
                    .filter_map(|(i, w)| {
                        let r = w.class.and_then(|c| rank.get(usize::from(c)).copied())?;
                        Some((r, i, rates[i]))
                    })
                    .collect();
                classes.sort_by_key(|c| c.0);
                (
                    "priority",
                    classes.into_iter().map(|(_, i, r)| (i, r)).collect(),
                )
            }
            _ => {
                why.push("the queue discipline must be FIFO, LIFO or by priority".into());
                ("?", Vec::new())
            }
        };
        if discipline == "priority" && service.workers != 1 {
            why.push(
                "Cobham's formula is for one server: priority classes need `workers: 1`".into(),
            );
        }
        if service.instances != 1 || service.instances_down != 0 {
            why.push("the service must have one instance, up".into());
        }
        // Classes give every service a threshold per class; none set is none.
        let admission = Admission {
            shed_classes: Vec::new(),
            ..service.admission.clone()
        };
        let sheds = service
            .admission
            .shed_classes
            .iter()
            .any(|&t| t != u32::MAX);
        if admission != Admission::default() || sheds || service.default_deadline.is_some() {
            why.push("the service must admit every request the queue has room for".into());
        }
        let loss = match service.queue_capacity {
            0 => true,
            usize::MAX => false,
            _ => {
                why.push(
                    "the queue must be unbounded, or absent (capacity 0, a loss system)".into(),
                );
                false
            }
        };
        // Under processor sharing with several workloads: the one work step
        // each runs.
        let mut class_work = Vec::new();
        let dist = match service.steps.as_slice() {
            _ if !classes.is_empty() && discipline == "PS" => {
                for &(w, _) in &classes {
                    let class = model.workloads[w].class;
                    let runs: Vec<&Step> = service
                        .steps
                        .iter()
                        .zip(&service.only_classes)
                        .filter(|(_, only)| {
                            only.as_ref()
                                .is_none_or(|o| class.is_some_and(|c| o.contains(&c)))
                        })
                        .map(|(step, _)| step)
                        .collect();
                    match runs.as_slice() {
                        [Step::Work { dist, .. }] => class_work.push(Moments::of(dist)),
                        _ => why.push(format!(
                            "workload {:?} must run one `work` step",
                            model.workload_name(w)
                        )),
                    }
                }
                None
            }
            [Step::Work { dist, .. }] if service.only_classes.iter().all(Option::is_none) => {
                Some(dist)
            }
            _ => {
                why.push("the handler must be one `work` step, run for every request".into());
                None
            }
        };
        let service_kind = match dist {
            Some(Dist::Exponential { .. }) => 'M',
            Some(Dist::Constant(_)) => 'D',
            _ => 'G',
        };
        let servers = match service.cpu {
            Some(cpu) => {
                if service.workers != u32::MAX {
                    why.push("processor sharing needs unbounded workers: every request shares the core at once".into());
                }
                if cpu.cores != 1 {
                    why.push("processor sharing is covered on one core (M/G/1-PS)".into());
                }
                1
            }
            None => service.workers,
        };
        if servers == u32::MAX {
            why.push("the number of workers must be bounded".into());
        }
        if !loss && servers > 1 && service_kind != 'M' {
            why.push("several servers with a queue need exponential service (M/M/c): M/G/c has no closed form".into());
        }
        // With work per workload, the service time is their mixture by rate.
        let mixed = (!class_work.is_empty() && class_work.len() == classes.len()).then(|| {
            let weight = |k: usize| classes[k].1 / rate;
            Moments {
                mean: (0..classes.len())
                    .map(|k| weight(k) * class_work[k].mean)
                    .sum(),
                second: (0..classes.len())
                    .map(|k| weight(k) * class_work[k].second)
                    .sum(),
            }
        });
        let queue = Queue {
            rate,
            discipline,
            classes,
            class_work: class_work.iter().map(|m| m.mean).collect(),
            servers,
            loss,
            service: dist.map(Moments::of).or(mixed).unwrap_or(Moments {
                mean: f64::NAN,
                second: f64::NAN,
            }),
            service_kind,
            arrivals_until: arrivals_until.unwrap_or(0.0),
            bucket: model.bucket.as_ms(),
        };
        if why.is_empty() && !loss && queue.utilisation() >= 1.0 {
            why.push(format!(
                "utilisation {:.3} ≥ 1: the queue has no steady state",
                queue.utilisation()
            ));
        }
        if why.is_empty() {
            Ok(queue)
        } else {
            Err(why.join("; "))
        }
    }

    /// Kendall's notation: M/M/1, M/D/1, M/G/1, M/M/4, M/M/5/5, and the
    /// discipline when it is not FIFO (M/M/1 LIFO, M/M/1 priority).
    pub fn notation(&self) -> String {
        let c = self.servers;
        let kendall = if self.loss {
            format!("M/{}/{c}/{c}", self.service_kind)
        } else {
            format!("M/{}/{c}", self.service_kind)
        };
        match self.discipline {
            "FIFO" => kendall,
            other => format!("{kendall} {other}"),
        }
    }

    /// Offered load a = λ·E[S], Erlangs.
    pub fn offered(&self) -> f64 {
        self.rate * self.service.mean
    }

    /// Offered load per server ρ = λ·E[S]/c (for a loss system, what the
    /// servers would carry if nothing were lost).
    pub fn utilisation(&self) -> f64 {
        self.offered() / f64::from(self.servers)
    }

    /// What the run should discard before measuring, ms.
    pub fn warm_up(&self) -> f64 {
        let relaxation = if self.loss {
            // A loss system forgets its start as its requests in service end.
            self.service.mean * ((1.0 + self.service.scv()) / 2.0).max(1.0)
        } else {
            relaxation_time(self.servers, self.utilisation(), self.service)
        };
        WARM_UP_RELAXATIONS * relaxation
    }

    /// The quantities measured on this queue, with their analytic values.
    pub fn expected(&self) -> Vec<(Quantity, f64)> {
        let a = self.offered();
        if self.loss {
            return vec![
                (Quantity::Blocking, erlang_b(self.servers, a)),
                (Quantity::Little, 1.0),
            ];
        }
        if self.discipline == "PS" {
            // Nobody waits; work of size x takes x / (1 − ρ) on average,
            // whatever the distribution of work beyond its mean.
            let stretch = 1.0 / (1.0 - self.utilisation());
            let mut expected = vec![
                (Quantity::TimeInSystem, self.service.mean * stretch),
                (Quantity::Little, 1.0),
            ];
            for (k, work) in self.class_work.iter().enumerate() {
                expected.push((Quantity::ClassTimeInSystem(k), work * stretch));
            }
            return expected;
        }
        let (wait, p_wait) = if self.servers == 1 {
            // Any M/G/1: PASTA and L = λW on the server give P(busy) = ρ.
            (pollaczek_khinchine_wait(self.rate, self.service), a)
        } else {
            (
                mmc_mean_wait(self.servers, a, self.service.mean),
                erlang_c(self.servers, a),
            )
        };
        // Any order that does not look at service times (LIFO, priority
        // with class-blind service) leaves the mean wait, P(wait) and L as
        // FIFO has them (Kleinrock's conservation law); priority classes
        // share it by Cobham's formula.
        let mut expected = vec![
            (Quantity::TimeInSystem, wait + self.service.mean),
            (Quantity::Wait, wait),
            (Quantity::WaitProbability, p_wait),
            (Quantity::Little, 1.0),
        ];
        let rates: Vec<f64> = self.classes.iter().map(|c| c.1).collect();
        for k in 0..self.classes.len() {
            expected.push((
                Quantity::ClassTimeInSystem(k),
                cobham_wait(&rates, self.service, k) + self.service.mean,
            ));
        }
        expected
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stormsim_model::load_model;

    fn queue_of(json: &str) -> Result<Queue, String> {
        let loaded = load_model(json, &[], None).expect("a valid model");
        Queue::from_model(&loaded.variants[0].model)
    }

    #[test]
    fn reads_an_mmc_queue() {
        let q = queue_of(
            r#"{"name": "q", "workloads": [{"name": "a", "target": "s", "duration_s": 10,
                "arrival": {"kind": "poisson", "rate_per_s": 320}}],
                "services": [{"name": "s", "workers": 4,
                "steps": [{"work": {"kind": "exponential", "mean_ms": 10}}]}]}"#,
        )
        .expect("an M/M/4 queue");
        assert_eq!(q.notation(), "M/M/4");
        assert!((q.utilisation() - 0.8).abs() < 1e-12);
        assert!((q.arrivals_until - 10_000.0).abs() < 1e-9);
        let expected = q.expected();
        assert_eq!(expected.len(), 4);
        assert!((expected[2].1 - erlang_c(4, 3.2)).abs() < 1e-12);
    }

    #[test]
    fn refuses_what_the_formulas_do_not_cover() {
        let why = queue_of(
            r#"{"name": "q", "workloads": [{"name": "a", "target": "s", "requests": 10,
                "timeout_ms": 50, "arrival": {"kind": "constant", "rate_per_s": 200}}],
                "services": [{"name": "s", "workers": 4, "queue_capacity": 3,
                "steps": [{"work": {"kind": "constant", "ms": 10}}]}]}"#,
        )
        .expect_err("not a textbook queue");
        for reason in ["Poisson", "duration_s", "timeout", "unbounded", "M/G/c"] {
            assert!(why.contains(reason), "{reason:?} missing from {why:?}");
        }
    }

    /// Two workloads of their own work on one shared core: the service time
    /// is their mixture by rate, and each workload's W is its work stretched
    /// by 1/(1 − ρ).
    #[test]
    fn reads_a_processor_sharing_queue_with_job_sizes() {
        let q = queue_of(
            r#"{"name": "q", "workloads": [
                {"name": "small", "target": "s", "class": "small", "duration_s": 10,
                 "arrival": {"kind": "poisson", "rate_per_s": 200}},
                {"name": "large", "target": "s", "class": "large", "duration_s": 10,
                 "arrival": {"kind": "poisson", "rate_per_s": 4}}],
                "services": [{"name": "s", "cpu": {"cores": 1}, "steps": [
                {"work": {"kind": "constant", "ms": 2}, "only_classes": ["small"]},
                {"work": {"kind": "constant", "ms": 100}, "only_classes": ["large"]}]}]}"#,
        )
        .expect("an M/G/1-PS queue");
        assert_eq!(q.notation(), "M/G/1 PS");
        assert!((q.utilisation() - 0.8).abs() < 1e-12);
        assert!((q.service.second - 200.0).abs() < 1e-9);
        let expected = q.expected();
        let w = |quantity| expected.iter().find(|e| e.0 == quantity).unwrap().1;
        assert!((w(Quantity::TimeInSystem) - 0.8 / 0.204 / 0.2).abs() < 1e-9);
        assert!((w(Quantity::ClassTimeInSystem(0)) - 10.0).abs() < 1e-9);
        assert!((w(Quantity::ClassTimeInSystem(1)) - 500.0).abs() < 1e-9);
        assert_eq!(expected.len(), 4);
    }

    #[test]
    fn processor_sharing_is_covered_on_one_core_with_unbounded_workers() {
        let why = queue_of(
            r#"{"name": "q", "workloads": [{"name": "a", "target": "s", "duration_s": 10,
                "arrival": {"kind": "poisson", "rate_per_s": 50}}],
                "services": [{"name": "s", "workers": 8, "cpu": {"cores": 2},
                "steps": [{"work": {"kind": "exponential", "mean_ms": 10}}]}]}"#,
        )
        .expect_err("not M/G/1-PS");
        for reason in ["unbounded workers", "one core"] {
            assert!(why.contains(reason), "{reason:?} missing from {why:?}");
        }
    }
}
