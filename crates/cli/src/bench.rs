//! `stormsim bench`: how fast the simulator runs a model, on one thread.
//!
//! Speed is a feature here (sweeps run thousands of models), so it is measured
//! by a command, not by timed tests: events per second, logical requests and
//! attempts simulated per second, and memory per request in flight (peak
//! resident memory over the peak number of unanswered requests).

use anyhow::{bail, Result};
use std::time::Instant;
use stormsim_model::LoadedModel;
use stormsim_sim::{fast, run_variant, Simulator};

/// Peak resident set size of this process, in bytes (Linux; `None` elsewhere).
fn peak_rss_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Runs the named variants (all if none) one after another on this thread and
/// prints one line per variant plus a total, then which engine ran each
/// and, for the general engine, why not the fast path. `general`: every
/// variant on the general engine.
pub fn bench(model: &LoadedModel, only: &[String], general: bool) -> Result<()> {
    if let Some(message) = model.unknown_variants(only) {
        bail!("{message}");
    }
    let chosen: Vec<_> = model
        .variants
        .iter()
        .filter(|v| only.is_empty() || only.contains(&v.name))
        .collect();
    println!(
        "{:<26} {:>12} {:>9} {:>12} {:>12} {:>12} {:>10} {:>10}",
        "variant",
        "events",
        "wall s",
        "events/s",
        "requests/s",
        "attempts/s",
        "peak RSS",
        "B/in-flight"
    );
    let (mut events, mut wall) = (0u64, 0.0);
    let mut breakdowns = Vec::new();
    let mut engines = Vec::new();
    for v in chosen {
        let t0 = Instant::now();
        let r = if general {
            Simulator::new(&v.model, &v.changes).run(&v.name)
        } else {
            run_variant(v)
        };
        let secs = t0.elapsed().as_secs_f64();
        let attempts: u64 = r
            .services
            .iter()
            .filter(|s| s.name == r.focus)
            .map(|s| s.calls)
            .sum();
        let rss = peak_rss_bytes();
        let per_request = rss
            .zip(Some(r.peak_requests_in_flight).filter(|n| *n > 0))
            .map_or("-".to_string(), |(b, n)| format!("{}", b / n));
        println!(
            "{:<26} {:>12} {:>9.2} {:>12.0} {:>12.0} {:>12.0} {:>9}M {:>10}",
            r.variant,
            r.events,
            secs,
            r.events as f64 / secs,
            r.requests as f64 / secs,
            attempts as f64 / secs,
            rss.map_or("-".into(), |b| format!(
                "{:.0}",
                b as f64 / (1 << 20) as f64
            )),
            per_request
        );
        events += r.events;
        wall += secs;
        breakdowns.push((r.variant.clone(), r.events, r.events_by_kind.clone()));
        engines.push((r.variant.clone(), engine_of(v, &r, general)));
    }
    println!(
        "{:<26} {:>12} {:>9.2} {:>12.0}",
        "total (one thread)",
        events,
        wall,
        events as f64 / wall
    );
    // Where the events go: the kinds a change to the engine would remove.
    for (variant, total, kinds) in breakdowns {
        let parts: Vec<String> = kinds
            .iter()
            .map(|(kind, n)| {
                format!(
                    "{kind} {:.1} M ({:.0}%)",
                    *n as f64 / 1e6,
                    100.0 * *n as f64 / total.max(1) as f64
                )
            })
            .collect();
        println!("{variant} events by kind: {}", parts.join(", "));
    }
    for (variant, engine) in engines {
        println!("{variant} engine: {engine}");
    }
    Ok(())
}

/// Which engine ran `variant` (its report `r`), and every precondition of
/// the fast path it failed.
fn engine_of(
    variant: &stormsim_model::Variant,
    r: &stormsim_sim::VariantReport,
    general: bool,
) -> String {
    if general {
        return "general engine (asked for: --general)".into();
    }
    fast::Engine::of(&variant.model, &variant.changes, r).describe(true)
}

/// The classic hold model on the engine alone: with `pending` events queued,
/// pop the earliest and push one at now + an exponential delay, `ops` times.
/// Reports nanoseconds per hold operation, through the heap
/// (`schedule`) and through a constant-delay lane (`schedule_constant`).
pub fn hold(sizes: &[usize], ops: usize) {
    use stormsim_engine::{EventQueue, SimDuration, StreamKey};
    println!(
        "{:>10} {:>16} {:>16}",
        "pending", "heap ns/hold", "lane ns/hold"
    );
    for &pending in sizes {
        let mut rng = StreamKey::root(1).label("hold").rng();
        let mut heap: EventQueue<u32> = EventQueue::new();
        for i in 0..pending {
            heap.schedule_in(SimDuration(rng.exponential(1e6) as u64), i as u32);
        }
        let t0 = Instant::now();
        for _ in 0..ops {
            let (_, e) = heap.pop().expect("the queue is never empty");
            heap.schedule_in(SimDuration(rng.exponential(1e6) as u64), e);
        }
        let heap_ns = t0.elapsed().as_nanos() as f64 / ops as f64;
        // A lane: every event after the same constant delay (a timeout).
        let mut lane: EventQueue<u32> = EventQueue::new();
        let delay = SimDuration(1_000_000);
        for i in 0..pending {
            lane.schedule(stormsim_engine::SimTime(i as u64), i as u32);
        }
        let t0 = Instant::now();
        for _ in 0..ops {
            let (_, e) = lane.pop().expect("the queue is never empty");
            lane.schedule_constant(delay, e);
        }
        let lane_ns = t0.elapsed().as_nanos() as f64 / ops as f64;
        println!("{pending:>10} {heap_ns:>16.1} {lane_ns:>16.1}");
    }
}
