//! Regenerates the model format's reference from its serde types:
//! `docs/model-format.md` and `docs/model.schema.json` at the workspace root.
//!
//! ```text
//! cargo run -p stormsim-model --example gen_reference
//! ```

use stormsim_model::reference::REFERENCE;

fn main() -> std::io::Result<()> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for line in REFERENCE.regenerate(&root)? {
        println!("{line}");
    }
    Ok(())
}
