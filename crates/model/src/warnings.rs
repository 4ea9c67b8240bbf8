//! What a valid model says that will not happen: not an error (the model
//! runs, and means something), but worth a line from `check`. Warnings never
//! change an exit code.

use crate::{LoadedModel, Model, Problem, Step};

/// Every warning of a loaded model, each at the JSON path it is about (with
/// the variants it holds in, when not all of them), in model order.
pub fn warnings(loaded: &LoadedModel) -> Vec<Problem> {
    let mut found: Vec<(Problem, Vec<&str>)> = Vec::new();
    for variant in &loaded.variants {
        // A timeline change may add the replicas a hedge needs: it warns only
        // if no model of the run lets it fire.
        let models: Vec<&Model> = std::iter::once(&variant.model)
            .chain(variant.changes.iter().map(|c| &c.model))
            .collect();
        for problem in hedges_that_never_fire(&models) {
            match found.iter_mut().find(|(p, _)| *p == problem) {
                Some((_, names)) => names.push(&variant.name),
                None => found.push((problem, vec![&variant.name])),
            }
        }
    }
    let all = loaded.variants.len();
    found
        .into_iter()
        .map(|(mut p, names)| {
            if names.len() < all {
                p.message = format!("{} (variants: {})", p.message, names.join(", "));
            }
            p
        })
        .collect()
}

/// A hedge goes to another replica than those its try is on: where the
/// callee has one (of its shard, for a fan-out's child), no hedge is ever
/// sent.
fn hedges_that_never_fire(models: &[&Model]) -> Vec<Problem> {
    let first = models[0];
    let mut out = Vec::new();
    for (s, service) in first.services.iter().enumerate() {
        let calls = service.steps.iter().enumerate().flat_map(|(j, step)| {
            let at = match step {
                Step::Parallel(_) => format!("steps[{j}].parallel.branches"),
                _ => format!("steps[{j}]"),
            };
            let parallel = matches!(step, Step::Parallel(_));
            (step.calls().iter().enumerate()).map(move |(b, call)| {
                let at = if parallel {
                    format!("{at}[{b}]")
                } else {
                    at.clone()
                };
                (at, call)
            })
        });
        for (at, policy) in calls {
            if policy.hedge.is_none() {
                continue;
            }
            let fan_out = policy.fan_out.is_some();
            let never = models.iter().all(|m| {
                let callee = &m.services[policy.to];
                let choices = if fan_out {
                    callee.replicas()
                } else {
                    callee.instances
                };
                choices <= 1
            });
            if never {
                let callee = &first.services[policy.to];
                let what = if fan_out {
                    format!("each shard of {:?} has one replica", callee.name)
                } else {
                    format!("{:?} has one instance", callee.name)
                };
                out.push(Problem::new(
                    format!("services[{}].{at}.hedge", first.services[s].name),
                    format!(
                        "this hedge never fires: a hedge goes to another replica than its try's, and {what}"
                    ),
                ));
            }
        }
    }
    out
}
