//! The whole validation suite, shortened to run in a few seconds: every model
//! of `models/validation/` with fewer and shorter replications. The intervals
//! widen to match (they come from the spread between replications, never from
//! a tolerance chosen here), and every row must still pass.

use std::path::PathBuf;
use stormsim_validate::{run_suite, Options, Quantity, ValidateError};

fn models() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../models/validation")
}

#[test]
fn every_row_of_the_shortened_suite_passes() {
    // An eighth of each arrival window still leaves every run at least twice
    // its warm-up (M/M/1 at ρ = 0.95: 250 s of arrivals, 78 s of warm-up).
    let options = Options {
        replications: 8,
        duration_scale: 0.125,
    };
    let validation = run_suite(&models(), &options).expect("the suite runs");
    let table = validation.table();
    // Five queues at three utilisations, LIFO at two, two priority classes at
    // two splits (with W1 and W2 besides), M/M/1 and M/G/1 processor sharing
    // at two (W and Little's law), two job sizes under processor sharing at
    // one (with W1 and W2 besides); Little's law on every one.
    assert_eq!(
        validation.rows.len(),
        4 * 12 + 2 * 3 + 2 * 4 + 2 * 6 + 2 * 2 * 2 + 4,
        "{table}"
    );
    let little = validation
        .rows
        .iter()
        .filter(|r| r.quantity == Quantity::Little)
        .count();
    assert_eq!(little, 24, "{table}");
    // The rows that tell a discipline from FIFO: the priority classes, and
    // the job sizes under processor sharing.
    let classes = validation
        .rows
        .iter()
        .filter(|r| matches!(r.quantity, Quantity::ClassTimeInSystem(_)))
        .count();
    assert_eq!(classes, 6, "{table}");
    assert!(validation.all_pass(), "a row failed:\n{table}");
}

#[test]
fn a_run_too_short_for_its_warm_up_is_refused() {
    let options = Options {
        replications: 2,
        duration_scale: 0.01,
    };
    match run_suite(&models(), &options) {
        Err(ValidateError::TooShort { warm_up_s, .. }) => assert!(warm_up_s > 0.0),
        other => panic!("expected TooShort, got {other:?}"),
    }
}

#[test]
fn one_replication_has_no_interval() {
    let options = Options {
        replications: 1,
        ..Options::default()
    };
    assert!(matches!(
        run_suite(&models(), &options),
        Err(ValidateError::Replications(1))
    ));
}
