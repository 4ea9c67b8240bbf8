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
//! metastable or relapsed, of a variant whose load or capacity may change
//! after the trigger for another reason (the model crate resolves its
//! timeline without the trigger only then; a constant load the baseline
//! carried is carried untouched). It costs one more run of those variants.

use crate::analysis::{classify_with_twin, samples_of};
use crate::{Simulator, VariantReport};
use stormsim_model::Variant;

/// `report`'s verdict, judged again against the variant's twin without its
/// trigger when that can change it; `report` itself otherwise.
pub fn judge_against_twin(variant: &Variant, mut report: VariantReport) -> VariantReport {
    let (Some(verdict), Some(twin_changes), Some(policy)) = (
        report.verdict.as_ref(),
        variant.without_trigger.as_ref(),
        variant.model.metastability.as_ref(),
    ) else {
        return report;
    };
    if !verdict.needs_twin() {
        return report;
    }
    let twin = Simulator::new(&variant.model, twin_changes).run(&variant.name);
    report.verdict = classify_with_twin(
        &samples_of(&report.series),
        Some(&samples_of(&twin.series)),
        report.series.bucket,
        &variant.changes,
        policy,
    );
    report
}
