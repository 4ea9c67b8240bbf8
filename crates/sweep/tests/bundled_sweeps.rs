//! Every sweep file shipped in models/ loads: its model, its axes and the model
//! of every one of its points are valid (a typo fails here, not after an hour).

use std::path::Path;
use stormsim_sweep::Sweep;

#[test]
fn every_bundled_sweep_file_loads() {
    let models = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models");
    let mut sweeps: Vec<_> = std::fs::read_dir(&models)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".sweep.json"))
        .collect();
    sweeps.sort();
    assert!(
        sweeps.len() >= 3,
        "the phase diagram, the queue sweep and its search: {sweeps:?}"
    );
    for path in sweeps {
        if let Err(e) = Sweep::load(&path) {
            panic!("{}: {e}", path.display());
        }
    }
}
