//! Regenerates the sweep file format's reference from its serde types:
//! `docs/sweep-format.md` and `docs/sweep.schema.json` at the workspace root.
//!
//! ```text
//! cargo run -p stormsim-sweep --example gen_sweep_reference
//! ```

use stormsim_sweep::reference::REFERENCE;

fn main() -> std::io::Result<()> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for line in REFERENCE.regenerate(&root)? {
        println!("{line}");
    }
    Ok(())
}
