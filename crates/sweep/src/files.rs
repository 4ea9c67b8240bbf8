//! Writing outputs without following links: every file is created new (a
//! temporary name, `O_EXCL`, in the folder it goes to) and renamed into
//! place, so a symlink or a hard link planted at an output's name is
//! replaced, never written through, and an interrupted write never leaves a
//! half-written file under an output's name.

use std::fs::File;
use std::io::Write;
use std::path::Path;

/// The prefix of every temporary file and folder stormsim makes: what an
/// interrupted write leaves behind is recognisable, and cleaned at the next
/// write into the same folder.
pub const TEMP_PREFIX: &str = ".stormsim-tmp-";

/// A new, empty temporary file in `dir`, named [`TEMP_PREFIX`]`XXXXXX`,
/// with the mode a file written directly gets (0666 less the umask: 0644
/// under umask 022), where a temporary file is private (0600): it becomes
/// an output, one the user's team may read.
pub fn temp_file_in(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    builder.prefix(TEMP_PREFIX).rand_bytes(6);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o666));
    }
    builder.tempfile_in(dir)
}

/// The folder a file at `path` goes in (`.` for a bare name).
pub fn folder_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Writes a new file with `write`, then renames it over `path`; returns the
/// file, still open (for appending to it in place).
pub fn write_new_with(
    path: &Path,
    write: impl FnOnce(&mut File) -> std::io::Result<()>,
) -> std::io::Result<File> {
    let mut tmp = temp_file_in(folder_of(path))?;
    write(tmp.as_file_mut())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)
}

/// [`write_new_with`] of whole bytes, closing the file.
pub fn write_new(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_new_with(path, |f| f.write_all(bytes)).map(drop)
}

/// Removes what an interrupted write left in `dir`: files named
/// [`TEMP_PREFIX`]`XXXXXX` (six letters or digits, as [`temp_file_in`] names
/// them). Only regular files are removed, and never through a link.
pub fn remove_leftovers(dir: &Path) -> std::io::Result<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for entry in entries {
        let entry = entry?;
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(TEMP_PREFIX)) else {
            continue;
        };
        let ours = rest.len() == 6 && rest.bytes().all(|b| b.is_ascii_alphanumeric());
        if ours && entry.file_type()?.is_file() {
            match std::fs::remove_file(entry.path()) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
        }
    }
    Ok(())
}
