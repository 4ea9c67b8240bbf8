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

/// The stopping rule on a real model whose share of storms is known: the
/// bad deploy lasting 1.15 s storms in 27% of runs (54 of 200 in
/// `crates/cli/tests/golden/fifo-margin.csv`). 200 probes against 0.5, each
/// on seeds of its own (first look at 4, batches of 4, cap 64): how many
/// claim the wrong side, and the replications they use. docs/sweeps.md
/// quotes it (`cargo test --release -p stormsim-sweep --test probability
/// the_stopping_rule_on_a_model -- --ignored --nocapture`).
#[test]
#[ignore = "a measurement of minutes"]
fn the_stopping_rule_on_a_model_that_storms_in_27_percent_of_runs() {
    use stormsim_sim::analysis::Outcome;
    use stormsim_sweep::stopping::{wilson, Rule, StopSpec, Stopped};
    let make = small_catalog(1.15);
    let rule = Rule::new(
        4,
        Some(&StopSpec {
            max_replications: 64,
            batch: Some(4),
            half_width: None,
        }),
    );
    let (mut wrong, mut used, mut capped) = (0, 0u64, 0);
    let probes = 200u64;
    for probe in 0..probes {
        let (mut n, mut storms, mut batch) = (0u32, 0usize, rule.first);
        loop {
            for _ in 0..batch {
                let seed = 1_000_000 + probe * 64 + u64::from(n);
                let v = make(seed).unwrap();
                let report = stormsim_sim::trajectory::Trajectory::start(&v).finish();
                storms += usize::from(
                    report
                        .verdict
                        .is_some_and(|v| v.outcome == Outcome::Metastable),
                );
                n += 1;
            }
            let ci = wilson(storms, n as usize, rule.z());
            match rule.look(n, Some(ci), 0.5) {
                Some(Stopped::Sure) => {
                    wrong += usize::from(ci.0 >= 0.5);
                    break;
                }
                Some(_) => {
                    capped += 1;
                    break;
                }
                None => batch = rule.next_batch(n),
            }
        }
        used += u64::from(n);
    }
    println!(
        "{wrong} of {probes} probes claimed the wrong side, {capped} reached the cap, {:.1} replications on average",
        used as f64 / probes as f64
    );
    assert!(wrong as f64 / probes as f64 <= 0.05 + 4.0 * (0.05f64 * 0.95 / 200.0).sqrt());
}
