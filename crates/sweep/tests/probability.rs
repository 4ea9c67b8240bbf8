//! The probability of a storm: splitting against plain Monte Carlo on a
//! case where both are feasible.

use serde_json::Value;
use stormsim_model::{load_model, Problem, Variant};
use stormsim_sweep::probability::{monte_carlo, splitting, SplittingSpec};

/// The Catalog incident at 1/40 scale (200 req/s against 5 workers, a
/// queue of 500, 300 s), its bad deploy lasting `trigger_s`, run with
/// `seed`.
fn small_catalog(trigger_s: f64) -> impl Fn(u64) -> Result<Variant, Vec<Problem>> + Sync {
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/catalog-incident.json"),
    )
    .unwrap();
    let sets: Vec<(String, Value)> = [
        ("workloads[*].arrival.rate_per_s", Value::from(10)),
        ("workloads[*].duration_s", Value::from(300)),
        ("horizon_s", Value::from(300)),
        ("services[catalog].workers", Value::from(5)),
        ("services[catalog].queue_capacity", Value::from(500)),
        ("timeline[1].at_s", Value::from(60.0 + trigger_s)),
        ("timeline[2].at_s", Value::from(240)),
        ("timeline[3].at_s", Value::from(270)),
    ]
    .into_iter()
    .map(|(p, v)| (p.to_string(), v))
    .collect();
    move |seed| {
        let model = load_model(&text, &sets, Some(seed)).map_err(|e| e.problems)?;
        Ok(model.variants.into_iter().next().unwrap())
    }
}

/// Splitting against plain Monte Carlo where both are feasible: the bad
/// deploy lasting 0.9 s storms in about 6% of runs. Their 95% intervals
/// must overlap (two honest intervals of one quantity miss each other in
/// well under 5% of trials), and the splitting estimate must be a real
/// product of stages (it climbed at least one level).
#[test]
fn splitting_agrees_with_monte_carlo_where_both_are_feasible() {
    let make = small_catalog(0.9);
    let mc = monte_carlo(&make, 1000, 600).unwrap();
    let spec = SplittingSpec {
        runs_per_stage: 60,
        repetitions: 4,
        ..SplittingSpec::default()
    };
    let split = splitting(&make, 5000, &spec).unwrap();
    assert!(
        split.ci.0 <= mc.ci.1 && mc.ci.0 <= split.ci.1,
        "splitting {:?} and Monte Carlo {:?} disagree",
        split,
        mc.ci
    );
    assert!(
        split
            .repetitions
            .iter()
            .all(|(_, stages)| stages.len() >= 2 && stages[0].level.is_some()),
        "{split:?}"
    );
    assert!(mc.storms.is_some_and(|s| s > 0), "{mc:?}");
}

/// The validation docs/sweeps.md quotes: splitting and Monte Carlo at
/// three trigger lengths, their estimates, intervals, runs and time
/// (`cargo test --release -p stormsim-sweep --test probability --
/// --ignored --nocapture`, about 3 minutes on two cores).
#[test]
#[ignore = "a measurement of minutes"]
fn splitting_against_monte_carlo_measured() {
    for d in [0.9, 0.7, 0.5] {
        let t = std::time::Instant::now();
        let s = splitting(&small_catalog(d), 5000, &SplittingSpec::default()).unwrap();
        println!(
            "d = {d} s: splitting {:.5} [{:.5}, {:.5}], {} runs, {:.1} s",
            s.estimate,
            s.ci.0,
            s.ci.1,
            s.runs,
            t.elapsed().as_secs_f64()
        );
        for (e, stages) in &s.repetitions {
            let levels: Vec<String> = stages
                .iter()
                .map(|st| match st.level {
                    Some(l) => format!("+{l}: {:.2}", st.share),
                    None => format!("storms: {:.2}", st.share),
                })
                .collect();
            println!("    {e:.5} = {}", levels.join(" × "));
        }
        let t = std::time::Instant::now();
        let mc = monte_carlo(&small_catalog(d), 1000, 2000).unwrap();
        println!(
            "d = {d} s: Monte Carlo {:.5} [{:.5}, {:.5}], 2000 runs, {:.1} s",
            mc.estimate,
            mc.ci.0,
            mc.ci.1,
            t.elapsed().as_secs_f64()
        );
    }
}
