//! The run's twin without its trigger: the same model, seed and load, the
//! timeline's `trigger_start` and `trigger_end` entries left out.
//!
//! A run that is still degraded after its trigger is stuck in a storm the
//! trigger started, or it is carrying a load (a flash sale's peak, a daily
//! crest, a planned loss of capacity) that it could not carry untouched
//! either. Only the twin tells the two apart: where it is degraded too, the
//! cause is the load, not the trigger (see [`crate::analysis`]).
//!
//! The twin is run only where it can change the verdict: for a run judged
//! relapsed (a system near its edge may fall into its storm with no
//! trigger at all), and for one judged metastable whose load or capacity
//! may change after the trigger for another reason (a constant load the
//! baseline carried is carried untouched). It costs one more run of those
//! variants.

use crate::analysis::{classify_with_twin, samples_of, Outcome};
use crate::{Simulator, VariantReport};
use stormsim_model::Variant;

/// `report`'s verdict, judged again against the variant's twin without its
/// trigger when that can change it; `report` itself otherwise: a relapse
/// is confirmed only where the twin stayed healthy, and a run stuck after
/// the trigger may be overloaded where the load or capacity may change
/// after it ([`Variant::load_may_change`]). A twin stopped by one of the
/// model's limits is not compared with (its end would read as healthy):
/// the reason says so.
pub fn judge_against_twin(variant: &Variant, mut report: VariantReport) -> VariantReport {
    let (Some(verdict), Some(twin_changes), Some(policy)) = (
        report.verdict.as_ref(),
        variant.without_trigger.as_ref(),
        variant.model.metastability.as_ref(),
    ) else {
        return report;
    };
    let needed = match verdict.outcome {
        Outcome::Relapsed => true,
        Outcome::Metastable => variant.load_may_change,
        _ => false,
    };
    if !needed {
        return report;
    }
    // On the fast path where the twin may take it, as the run itself.
    let twin = crate::fast::try_run(&variant.model, twin_changes, &variant.name)
        .unwrap_or_else(|| Simulator::new(&variant.model, twin_changes).run(&variant.name));
    if let Some(limit) = twin.stopped_by {
        if let Some(v) = report.verdict.as_mut() {
            v.reason.push_str(&format!(
                " (not compared with the same run without the trigger: it stopped at limits.{limit})"
            ));
        }
        return report;
    }
    report.verdict = classify_with_twin(
        &samples_of(&report.series),
        Some(&samples_of(&twin.series)),
        report.series.bucket,
        &variant.changes,
        policy,
    );
    report
}
