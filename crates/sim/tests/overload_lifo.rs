//! `models/overload-lifo.json`: 8 workers of 20 ms (400 requests/s) offered
//! 600/s for a minute, clients that give up after 1 s. FIFO serves every
//! request behind the backlog, so those it answers in time took most of the
//! second; LIFO and adaptive LIFO serve the freshest, so their answered p99
//! stays near the service time's and fewer workers' time goes to callers that
//! left. Adaptive LIFO orders as FIFO while the queue is short.

use crate::common;

use common::{run_bundled, variant};

/// The margins are wide (a p99 of ~800 ms against ~150 ms), so the claims
/// hold on each seed tried, not on one.
#[test]
fn lifo_keeps_the_answered_tail_short_in_an_overload() {
    for seed in [1, 2, 3] {
        let reports = run_bundled("overload-lifo", &[], seed);
        let p99 = |name: &str| variant(&reports, name).ok_latency_ms.as_ref().unwrap().p99;
        let answered = |name: &str| variant(&reports, name).succeeded;
        let wasted = |name: &str| variant(&reports, name).services[0].wasted;
        for name in ["lifo", "adaptive-lifo"] {
            assert!(
                p99(name) * 3.0 < p99("fifo"),
                "seed {seed}: {name} p99 {} vs fifo {}",
                p99(name),
                p99("fifo")
            );
            assert!(answered(name) > answered("fifo"), "seed {seed}: {name}");
            assert!(wasted(name) * 5 < wasted("fifo"), "seed {seed}: {name}");
        }
        // Before the overload the queue stays under adaptive LIFO's
        // threshold: it serves exactly as FIFO does, bucket for bucket.
        let (fifo, adaptive) = (
            &variant(&reports, "fifo").series,
            &variant(&reports, "adaptive-lifo").series,
        );
        let before = (55.0 / fifo.bucket_s()) as usize;
        assert_eq!(
            fifo.global[..before],
            adaptive.global[..before],
            "seed {seed}"
        );
    }
}
