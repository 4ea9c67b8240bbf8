//! Regenerates the model-format reference from the serde types:
//! `docs/model-format.md` and `docs/model.schema.json` at the workspace root.
//!
//! ```text
//! cargo run -p stormsim-model --example gen_reference
//! ```

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use stormsim_model::reference;

/// Writes `text` to `path` atomically: a temporary file beside it, then a rename.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("file");
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn main() -> std::io::Result<()> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    for (relative, text) in [
        (reference::MARKDOWN_PATH, reference::markdown()),
        (reference::SCHEMA_PATH, reference::json_schema()),
    ] {
        let path = root.join(relative);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        let unchanged = fs::read_to_string(&path).is_ok_and(|old| old == text);
        if unchanged {
            println!("{relative}: up to date");
        } else {
            write_atomically(&path, &text)?;
            println!("{relative}: written");
        }
    }
    Ok(())
}
