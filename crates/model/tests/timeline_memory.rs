//! A timeline holds a checked model per step (a ramp: one per second, up to
//! 10,000 per entry, in every variant). Each step used to hold a whole copy,
//! 13 KB for a two-service model: 200,000 entries of a two-variant model
//! took 5.1 GB to check. A step now shares with the step before it every
//! service, workload and workload call policy it leaves alone.
//!
//! The bytes a loaded model holds are counted by this binary's allocator,
//! per thread, so that the tests running beside each other do not mix their
//! counts.

use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;
use stormsim_model::{load_model, LoadedModel};

struct PerThreadCount;

thread_local! {
    static LIVE_BYTES: Cell<isize> = const { Cell::new(0) };
}

fn count(bytes: isize) {
    // `try_with`: a thread's last deallocations may come after its counter
    // is gone.
    let _ = LIVE_BYTES.try_with(|live| live.set(live.get() + bytes));
}

// SAFETY: every call is passed on to the system allocator unchanged.
unsafe impl GlobalAlloc for PerThreadCount {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: PerThreadCount = PerThreadCount;

/// The model and the bytes it holds once loaded (what loading allocated and
/// did not free).
fn load_counting(doc: &Value) -> (LoadedModel, usize) {
    let text = doc.to_string();
    let before = LIVE_BYTES.with(Cell::get);
    let loaded = load_model(&text, &[], None).expect("a valid model");
    let held = LIVE_BYTES.with(Cell::get) - before;
    (loaded, held as usize)
}

/// Ten services, a chain (each calls the next), and a workload of twenty
/// copies, each with its retry policy: a model whose parts are many, as a
/// real one's are.
fn many_parts(timeline: Vec<Value>) -> Value {
    let services: Vec<Value> = (0..10)
        .map(|i| {
            let mut steps =
                vec![json!({"work": {"kind": "lognormal", "median_ms": 2, "p99_ms": 20}})];
            if i < 9 {
                steps.push(json!({"call": format!("s{}", i + 1), "timeout_ms": 200,
                                  "retry": {"max_attempts": 3}}));
            }
            json!({"name": format!("s{i}"), "workers": 8, "steps": steps})
        })
        .collect();
    json!({
        "name": "many-parts",
        "workloads": [{"name": "users", "count": 20, "target": "s0",
                       "arrival": {"kind": "poisson", "rate_per_s": 100},
                       "duration_s": 20000, "timeout_ms": 1000,
                       "retry": {"max_attempts": 3, "backoff": {"kind": "fixed", "ms": 50},
                                 "retry_on": ["timeout", "rejected"]}}],
        "services": services,
        "timeline": timeline
    })
}

/// Bytes held per timeline step, against the bytes of the model without a
/// timeline. Before the sharing a step held about a whole model, so the
/// ratio was about 1; now a step holds the model's top level and the parts
/// it changes. A third leaves room for allocators and vectors that grow by
/// doubling, and fails on a whole copy per step.
fn assert_a_step_holds_a_fraction(timeline: Vec<Value>, steps: usize, what: &str) {
    let (_, whole) = load_counting(&many_parts(Vec::new()));
    let (loaded, held) = load_counting(&many_parts(timeline));
    assert_eq!(loaded.variants[0].changes.len(), steps);
    let per_step = held.saturating_sub(whole) / steps;
    println!("{what}: the model holds {whole} B, a step {per_step} B");
    assert!(
        per_step * 3 < whole,
        "{what}: a step holds {per_step} B, a third of the whole model is {} B",
        whole / 3
    );
}

#[test]
fn check_timeline_memory_steps_that_change_one_service() {
    let timeline: Vec<Value> = (0..2000)
        .map(|i| {
            json!({"name": format!("t{i}"), "at_s": f64::from(i),
                   "set": {"services[s5].workers": 1 + i % 7}})
        })
        .collect();
    assert_a_step_holds_a_fraction(timeline, 2000, "one service's workers");
}

#[test]
fn check_timeline_memory_a_ramp_of_every_workload_copy() {
    let timeline = vec![json!({"name": "ramp", "at_s": 100, "over_s": 2000,
                               "set": {"workloads[users].arrival.rate_per_s": 300}})];
    assert_a_step_holds_a_fraction(timeline, 2000, "a ramp of the arrival rate");
}

#[test]
fn timeline_steps_share_what_they_leave_alone() {
    let timeline = vec![
        json!({"name": "slow", "at_s": 10, "set": {"services[s3].steps[0].work.median_ms": 10}}),
        json!({"name": "more", "at_s": 20, "set": {"workloads[users].arrival.rate_per_s": 200}}),
    ];
    let (loaded, _) = load_counting(&many_parts(timeline));
    let v = &loaded.variants[0];
    let (start, slow, more) = (&v.model, &v.changes[0].model, &v.changes[1].model);
    for s in 0..10 {
        assert_eq!(
            Arc::ptr_eq(&start.services[s], &slow.services[s]),
            s != 3,
            "s{s}"
        );
        assert!(Arc::ptr_eq(&slow.services[s], &more.services[s]), "s{s}");
    }
    assert_eq!(slow.services[3].steps.len(), 2);
    for w in 0..20 {
        assert!(Arc::ptr_eq(&start.workloads[w], &slow.workloads[w]));
        assert!(!Arc::ptr_eq(&slow.workloads[w], &more.workloads[w]));
        assert!(Arc::ptr_eq(
            &slow.workloads[w].edge,
            &more.workloads[w].edge
        ));
    }
}
