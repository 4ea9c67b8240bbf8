//! S5's Catalog incident (models/catalog-incident.json): the model's claims,
//! checked on a copy scaled down 4× so that CI runs it in seconds.
//!
//! Scaling: every client's rate, Catalog's workers and its queue divided by 4
//! keep utilisation (60%), the bad deploy's overload, and the full queue's wait
//! (queue / capacity ≈ 1.49 s, over the 1 s timeout) unchanged, so the mean
//! dynamics in seconds are the same while the event count drops 4×. The
//! intervention is moved from T+41 min to T+14 min (the storm it ends is the
//! same), the scale-outs to T+9 min, and the horizon to 1200 s.
//!
//! Why not 10×: a smaller system fluctuates more, and a metastable state's
//! lifetime shrinks with the system's size. At 1/10 scale the marginal
//! `deadline-shedding-late` storm escapes by chance within the run; at 1/4 and
//! at full scale it does not.
//!
//! The claims are regime claims with wide, analytic margins: in a storm every
//! logical request makes exactly 3 attempts, so the offered load is 3λ; the
//! Poisson noise of a mean over hundreds of seconds at λ = 800/s is under 0.2%,
//! far inside the 5% used below.

use serde_json::{json, Value};
use stormsim_model::{load_model, ParamPath};
use stormsim_sim::{run_variant, VariantReport};

/// The scale divisor.
const SCALE: u64 = 4;
/// Total arrival rate of the scaled model.
const LAMBDA: f64 = 8000.0 / SCALE as f64;

fn set(doc: &mut Value, path: &str, value: Value) {
    ParamPath::parse(path).unwrap().set(doc, value).unwrap();
}

fn scaled_model() -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../models/catalog-incident.json"
    );
    let mut doc: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    set(
        &mut doc,
        "workloads[*].arrival.rate_per_s",
        json!(LAMBDA / 20.0),
    );
    set(&mut doc, "workloads[*].duration_s", json!(1200));
    set(&mut doc, "horizon_s", json!(1200));
    set(&mut doc, "services[catalog].workers", json!(200 / SCALE));
    set(
        &mut doc,
        "services[catalog].queue_capacity",
        json!(20000 / SCALE),
    );
    set(&mut doc, "timeline[2].at_s", json!(900));
    set(&mut doc, "timeline[3].at_s", json!(1020));
    for v in doc["variants"].as_array_mut().unwrap() {
        let sets = v["set"].as_object_mut().unwrap();
        if let Some(q) = sets.get_mut("services[catalog].queue_capacity") {
            *q = json!(q.as_u64().unwrap() / SCALE);
        }
        if let Some(entry) = sets.get_mut("timeline[+]") {
            let workers = &mut entry["set"]["services[catalog].workers"];
            *workers = json!(workers.as_u64().unwrap() / SCALE);
            // Before the (earlier) intervention, as in the full model.
            entry["at_s"] = json!(600);
        }
    }
    doc.to_string()
}

fn run_all() -> Vec<VariantReport> {
    let model = load_model(&scaled_model(), &[], None).expect("the scaled model is valid");
    let variants = &model.variants;
    let half = variants.len() / 2;
    std::thread::scope(|s| {
        let a = s.spawn(|| variants[..half].iter().map(run_variant).collect::<Vec<_>>());
        let b = s.spawn(|| variants[half..].iter().map(run_variant).collect::<Vec<_>>());
        let mut out = a.join().unwrap();
        out.extend(b.join().unwrap());
        out
    })
}

fn by_name<'a>(reports: &'a [VariantReport], name: &str) -> &'a VariantReport {
    reports
        .iter()
        .find(|r| r.variant == name)
        .unwrap_or_else(|| panic!("variant {name}"))
}

#[test]
fn the_incident_and_its_counterfactuals() {
    let reports = run_all();
    let verdict = |name: &str| {
        let r = by_name(&reports, name);
        let rec = r
            .verdict
            .as_ref()
            .expect("the model asks for a recovery analysis");
        (
            r,
            rec.metastable()
                .unwrap_or_else(|| panic!("{name}: {:?}: {}", rec.outcome, rec.reason)),
            rec.recovered_by.clone().unwrap_or_default(),
        )
    };

    // As it happened: the load triples, the storm outlives the rollback, and only
    // the operators' intervention ends it.
    let (baseline, metastable, by) = verdict("baseline");
    assert!(metastable, "baseline must be metastable");
    assert_eq!(by, "retries off, 30% dropped");
    let storm = baseline.storm_offered_rps.unwrap();
    assert!(
        (storm / (3.0 * LAMBDA) - 1.0).abs() < 0.05,
        "storm load {storm}, expected 3λ"
    );
    assert!(
        baseline.peak_offered_rps > storm,
        "fixed backoff makes waves above the mean"
    );
    // And it stays recovered once traffic and retries are restored: the last
    // minute's goodput is the offered rate (±5%).
    let series = &baseline.series;
    let tail = &series.global[series.len() - 60..];
    let goodput = tail.iter().map(|g| g.succeeded as f64).sum::<f64>() / 60.0;
    assert!(
        (goodput / LAMBDA - 1.0).abs() < 0.05,
        "goodput after restore {goodput}"
    );

    // Jitter alone: less spiky, still metastable.
    let (jitter, metastable, _) = verdict("full-jitter");
    assert!(metastable);
    assert!(jitter.peak_offered_rps < baseline.peak_offered_rps);

    // A 10% retry budget: load stays near 1.1λ and the system recovers at the
    // rollback.
    let (budget, metastable, by) = verdict("retry-budget");
    assert!(!metastable && by == "trigger end");
    assert!(budget.storm_offered_rps.unwrap() < 1.15 * LAMBDA);
    assert!(budget.verdict.as_ref().unwrap().recovery_s.unwrap() <= 60.0);

    // Dropping what cannot be answered in time recovers by itself; dropping only
    // what is already late does not.
    assert!(!verdict("deadline-shedding").1);
    assert!(verdict("deadline-shedding-late").1);

    // Client breakers give Catalog room: recovered at the rollback.
    assert!(!verdict("circuit-breaker").1);

    // Scale-out ends the storm only when it is big enough.
    assert_eq!(verdict("scale-out").2, "scale-out to 400 workers");
    assert_eq!(verdict("scale-out-small").2, "retries off, 30% dropped");

    // A queue holding less than a timeout of work: no metastability.
    assert!(!verdict("small-queue").1);
}
