//! The output folder: who may write into it, what in it is stormsim's, and
//! how a run's outputs replace the last ones all at once.
//!
//! - One writer at a time: every command that writes into a folder holds an
//!   exclusive lock on the folder itself ([`OutputLock`]) and a second one is
//!   refused, naming the folder.
//! - What stormsim wrote is listed in the folder's [`MANIFEST_FILE`]; only
//!   those files are ever replaced or removed, and a file of the user's at a
//!   name stormsim would write is never overwritten, even with `--force`. A
//!   folder without a manifest is the user's, whatever it holds; a manifest
//!   lists only files that are there (see [`settle`]).
//! - A run writes everything into a new folder beside the output folder
//!   (`.stormsim-tmp-<name>-XXXXXX`, the name cut and hashed where it
//!   would be too long: [`tag`]), then swaps the two in one step: a run
//!   killed at any moment leaves the folder holding one run or the other,
//!   never a mix, and the next write into the folder removes what it left.

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};
use stormsim_sweep::files::{remove_leftovers, write_new, TEMP_PREFIX};

/// The list of the files stormsim wrote in an output folder.
pub const MANIFEST_FILE: &str = ".stormsim-manifest.json";

/// What a folder holds, as its manifest says.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A model's run (`stormsim run`).
    Run,
    /// A sweep's tables (`sweep`, `merge`, `search`).
    Sweep,
}

/// The contents of [`MANIFEST_FILE`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always `stormsim`.
    pub tool: String,
    /// A run's folder or a sweep's.
    pub kind: Kind,
    /// The model's or the sweep's name.
    pub name: String,
    /// The files stormsim wrote here, by name, sorted.
    pub files: BTreeSet<String>,
}

impl Manifest {
    /// An empty manifest of `kind` for `name`.
    pub fn new(kind: Kind, name: &str) -> Manifest {
        Manifest {
            tool: "stormsim".into(),
            kind,
            name: name.into(),
            files: BTreeSet::new(),
        }
    }

    /// Writes the manifest into `dir` (a new file renamed into place).
    pub fn write(&self, dir: &Path) -> Result<()> {
        let mut text = serde_json::to_string_pretty(self)?;
        text.push('\n');
        let path = dir.join(MANIFEST_FILE);
        write_new(&path, text.as_bytes())
            .with_context(|| format!("cannot write {}", path.display()))
    }
}

/// The tables a run may write; its charts are [`crate::output::CHARTS`],
/// its page [`RUN_PAGE`].
const RUN_TABLES: [&str; 7] = [
    "summary.json",
    "summary.csv",
    "summary.tidy.csv",
    "timeseries.csv",
    "timeseries.tidy.csv.gz",
    "latency.csv",
    "attempts.csv",
];

/// The run's page, written with the charts.
pub const RUN_PAGE: &str = "index.html";

/// Every file a run may write (besides the manifest).
pub fn run_files() -> Vec<&'static str> {
    let mut files = RUN_TABLES.to_vec();
    files.extend(crate::output::CHARTS);
    files.push(RUN_PAGE);
    files
}

/// The files `sweep`, `merge`, `search` and `margin` may write (besides the manifest).
pub const SWEEP_FILES: [&str; 12] = [
    stormsim_sweep::resume::PARTIAL_FILE,
    stormsim_sweep::resume::RESULTS_FILE,
    "aggregate.csv",
    crate::sweep_charts::SPEC_FILE,
    crate::sweep_charts::SWEEP_CHART,
    "search.csv",
    crate::sweep_charts::SEARCH_CHART,
    crate::margin_cmd::MARGIN_TABLE,
    crate::margin_cmd::MARGIN_PROBES,
    crate::margin_cmd::MARGIN_CHART,
    crate::sweep_charts::PAGE,
    stormsim_sweep::inputs::INPUTS_FILE,
];

/// A folder's manifest; `None` for a folder without one. A folder without a
/// manifest is never taken for stormsim's, whatever it holds: a run's
/// `summary.json` or a sweep's `sweep.json` copied into a folder of the
/// user's says nothing of who wrote the files beside it.
pub fn read_manifest(dir: &Path) -> Option<Manifest> {
    let text = stormsim_model::read_input_file(&dir.join(MANIFEST_FILE)).ok()?;
    serde_json::from_str(&text).ok()
}

/// Adds `files` to the manifest of `dir` (which has one) before they are
/// written, so that a write cut short leaves nothing unclaimed.
pub fn claim(dir: &Path, files: &[&str]) -> Result<()> {
    let Some(mut manifest) = read_manifest(dir) else {
        bail!("{} has no {MANIFEST_FILE} to claim files in", dir.display());
    };
    let before = manifest.files.len();
    manifest.files.extend(files.iter().map(|f| f.to_string()));
    if manifest.files.len() == before {
        return Ok(());
    }
    manifest.write(dir)
}

/// Drops from the manifest of `dir` the files that are not there: those
/// claimed but never written (a chart the data does not allow, the partial
/// results renamed to the whole), or removed since. The manifest then lists
/// only what stormsim wrote and is there, and a file of the user's saved
/// later at such a name is not taken for stormsim's. Call with `dir` locked.
pub fn settle(dir: &Path) -> Result<()> {
    let Some(mut manifest) = read_manifest(dir) else {
        return Ok(());
    };
    let before = manifest.files.len();
    manifest
        .files
        .retain(|f| dir.join(f).symlink_metadata().is_ok());
    if manifest.files.len() == before {
        return Ok(());
    }
    manifest.write(dir)
}

/// Removes the file `name` of `dir` if stormsim wrote it (its manifest
/// lists it), and unlists it; a file of the user's at that name stays.
pub fn remove_owned(dir: &Path, name: &str) -> Result<()> {
    let Some(mut manifest) = read_manifest(dir) else {
        return Ok(());
    };
    if !manifest.files.remove(name) {
        return Ok(());
    }
    let path = dir.join(name);
    match std::fs::remove_file(&path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(e).with_context(|| format!("cannot remove the stale {}", path.display()))
        }
        _ => {}
    }
    manifest.write(dir)
}

/// Whether `dir` is missing, empty, or holds stormsim's outputs of `kind`
/// for `name` (its earlier ones, which a new write may replace); else why not.
pub fn check_owner(dir: &Path, kind: Kind, name: &str) -> std::result::Result<(), String> {
    if std::fs::read_dir(dir).map_or(true, |mut entries| entries.next().is_none()) {
        return Ok(());
    }
    let what = |kind: Kind| match kind {
        Kind::Run => "the outputs of the model",
        Kind::Sweep => "the results of the sweep",
    };
    match read_manifest(dir) {
        Some(m) if m.kind == kind && m.name == name => Ok(()),
        Some(m) => Err(format!(
            "{} holds {} {:?}, not {} {name:?}: choose another --out, or pass --force to write into it",
            dir.display(),
            what(m.kind),
            m.name,
            what(kind)
        )),
        None => Err(format!(
            "{} is not empty and holds no stormsim outputs: choose another --out, or pass --force to write into it (your files stay)",
            dir.display()
        )),
    }
}

/// The names among `names` that hold something in `dir` that stormsim did
/// not write (not in its manifest): writing them would destroy the user's.
pub fn foreign_at(dir: &Path, names: &[&str]) -> Vec<String> {
    let owned = read_manifest(dir).map(|m| m.files).unwrap_or_default();
    names
        .iter()
        .filter(|n| !owned.contains(**n) && dir.join(n).symlink_metadata().is_ok())
        .map(|n| n.to_string())
        .collect()
}

/// Refuses when `dir` holds something not stormsim's at a name in `names`.
pub fn refuse_foreign(dir: &Path, names: &[&str]) -> std::result::Result<(), String> {
    let foreign = foreign_at(dir, names);
    if foreign.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} holds {} that stormsim did not write (not in its {MANIFEST_FILE}), where it would write: it never replaces a file of yours, even with --force; move {} away or choose another --out",
        dir.display(),
        foreign.join(", "),
        if foreign.len() == 1 { "it" } else { "them" }
    ))
}

/// An exclusive lock on an output folder, held while a command writes into
/// it: a second writer is refused instead of mixing its rows with the
/// first's. The lock is on the folder itself (released when dropped, or when
/// the process dies), so it leaves no file behind. The folder's manifest is
/// settled ([`settle`]) when the lock is taken and again when it is
/// released, however the command ended: what it claimed and did not write
/// is not left listed.
///
/// A folder the lock made that is still empty when it is released (the
/// command failed, or was refused, before writing anything) is removed.
pub struct OutputLock {
    dir: PathBuf,
    /// Whether the folder was made by [`OutputLock::acquire`].
    created: bool,
    _folder: File,
}

impl Drop for OutputLock {
    fn drop(&mut self) {
        // A failure leaves names listed that the next lock settles.
        let _ = settle(&self.dir);
        if self.created {
            // Removes only an empty folder.
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

impl OutputLock {
    /// Creates `dir` if need be and locks it, or says that another stormsim
    /// holds it.
    pub fn acquire(dir: &Path) -> Result<std::result::Result<OutputLock, String>> {
        let created = std::fs::symlink_metadata(dir).is_err();
        std::fs::create_dir_all(dir)
            .with_context(|| format!("cannot create the output folder {}", dir.display()))?;
        let folder = File::open(dir).with_context(|| format!("cannot open {}", dir.display()))?;
        match folder.try_lock() {
            Ok(()) => {
                settle(dir)?;
                Ok(Ok(OutputLock {
                    dir: dir.to_path_buf(),
                    created,
                    _folder: folder,
                }))
            }
            Err(std::fs::TryLockError::WouldBlock) => Ok(Err(format!(
                "another stormsim is writing into {} (it holds the folder's lock): wait for it to finish, or choose another --out",
                dir.display()
            ))),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(e).with_context(|| format!("cannot lock {}", dir.display()))
            }
        }
    }
}

/// Removes the temporary files an interrupted write left in `dir`.
pub fn clean_leftovers(dir: &Path) -> Result<()> {
    remove_leftovers(dir).with_context(|| {
        format!(
            "cannot remove the leftovers of an interrupted write in {}",
            dir.display()
        )
    })
}

/// `dir` (which exists: it is locked) as a canonical path: `.` and `..`
/// resolved, and a link to a folder followed, so that the run is written
/// beside the folder the link names, and swapped in there.
fn resolved(dir: &Path) -> Result<(PathBuf, String)> {
    let abs = dir
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", dir.display()))?;
    let Some(name) = abs.file_name().and_then(|n| n.to_str()).map(str::to_string) else {
        bail!(
            "{} cannot be an output folder: it has no name of its own (a run is written beside it, then swapped in)",
            dir.display()
        );
    };
    Ok((abs, name))
}

/// The prefix of the folders a run of `dir` is written into, in its parent.
fn staging_prefix(name: &str) -> String {
    format!("{TEMP_PREFIX}{}-", tag(name))
}

/// The prefix of the folder the last outputs are moved aside to where the
/// file system cannot exchange two folders (see [`exchange`]).
fn aside_prefix(name: &str) -> String {
    format!("{ASIDE_PREFIX}{}-", tag(name))
}

/// The start of the name of a folder of last outputs moved aside.
const ASIDE_PREFIX: &str = ".stormsim-old-";

/// The longest file name most file systems allow, in bytes.
const MAX_FILE_NAME_BYTES: usize = 255;

/// What in a temporary folder's name says which output folder it is for:
/// the output folder's name, or, where that would make the temporary name
/// longer than a file name may be (an output folder's name of 235 to 255
/// bytes), its first bytes, `~` and a hash of the whole name. A run into a
/// folder of any legal name thus never fails, after simulating, on a name
/// the user never gave.
fn tag(name: &str) -> String {
    // The prefixes are as long as each other; then `-` and six characters.
    const ROOM: usize = MAX_FILE_NAME_BYTES - TEMP_PREFIX.len() - 1 - 6;
    const _: () = assert!(ASIDE_PREFIX.len() == TEMP_PREFIX.len());
    if name.len() <= ROOM {
        return name.to_string();
    }
    let mut keep = ROOM - 17;
    while !name.is_char_boundary(keep) {
        keep -= 1;
    }
    format!(
        "{}~{:016x}",
        &name[..keep],
        stormsim_sweep::inputs::fnv1a64(name.as_bytes())
    )
}

/// Whether `entry` (a name in the output folder's parent) is `prefix` then
/// six letters or digits, and nothing else (`a`'s are not `a-b`'s).
fn is_named(entry: &str, prefix: &str) -> bool {
    entry
        .strip_prefix(prefix)
        .is_some_and(|rest| rest.len() == 6 && rest.bytes().all(|b| b.is_ascii_alphanumeric()))
}

/// Whether `entry` is a folder a write of the output folder named `name` left.
fn is_staging_of(entry: &str, name: &str) -> bool {
    is_named(entry, &staging_prefix(name))
}

/// A run's outputs being written: a new folder beside the output folder,
/// swapped into its place by [`Staging::publish`]. Dropped unpublished (a
/// failed run), it is removed and the output folder is as it was.
///
/// Where the output folder is a mount point (a container's volume), or its
/// parent cannot be written, nothing can be swapped in its place: the new
/// folder is made inside it instead, and each output renamed into place on
/// its own (each file whole, the set not in one step).
pub struct Staging {
    dir: Option<tempfile::TempDir>,
    out: PathBuf,
    /// The output folder's name.
    name: String,
    /// Whether the outputs are written inside the output folder.
    in_place: bool,
}

/// Whether `dir` is on another file system than `parent` (a mount point).
fn is_mount_point(dir: &Path, parent: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(dir), std::fs::metadata(parent)) {
            (Ok(a), Ok(b)) => a.dev() != b.dev(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = (dir, parent);
        false
    }
}

/// Removes the folder `path`, left by an interrupted run, if it is still there.
fn remove_leftover_folder(path: &Path) -> Result<()> {
    match std::fs::remove_dir_all(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e).with_context(|| {
            format!(
                "cannot remove {}, left by an interrupted run",
                path.display()
            )
        }),
        _ => Ok(()),
    }
}

impl Staging {
    /// Removes what interrupted writes of `out` left beside it, then makes
    /// the folder a new run of `out` is written into. Call with `out` locked.
    pub fn begin(out: &Path) -> Result<Staging> {
        Staging::begin_with(out, false)
    }

    /// [`Staging::begin`], writing inside the output folder with `in_place`
    /// (else only where it must).
    fn begin_with(out: &Path, in_place: bool) -> Result<Staging> {
        let (out, name) = resolved(out)?;
        let parent = out
            .parent()
            .expect("an absolute path with a name has a parent");
        for entry in std::fs::read_dir(parent)
            .with_context(|| format!("cannot read {}", parent.display()))?
        {
            let entry = entry?;
            let file_name = entry.file_name();
            let Some(entry_name) = file_name.to_str() else {
                continue;
            };
            if is_named(entry_name, &aside_prefix(&name)) && entry.file_type()?.is_dir() {
                // The last outputs, moved aside by a swap cut short before
                // the new ones came in: put back (over the empty folder the
                // lock made), or, the new ones being in place, removed.
                let empty = std::fs::read_dir(&out).is_ok_and(|mut e| e.next().is_none());
                let done = if empty {
                    std::fs::rename(entry.path(), &out)
                } else {
                    std::fs::remove_dir_all(entry.path())
                };
                done.with_context(|| {
                    format!(
                        "cannot restore {}, left by an interrupted run",
                        entry.path().display()
                    )
                })?;
                continue;
            }
            if is_staging_of(entry_name, &name) && entry.file_type()?.is_dir() {
                remove_leftover_folder(&entry.path())?;
            }
        }
        // And what an interrupted write in place left inside it.
        for entry in
            std::fs::read_dir(&out).with_context(|| format!("cannot read {}", out.display()))?
        {
            let entry = entry?;
            let ours = entry
                .file_name()
                .to_str()
                .is_some_and(|n| is_staging_of(n, &name));
            if ours && entry.file_type()?.is_dir() {
                remove_leftover_folder(&entry.path())?;
            }
        }
        let new_folder = |at: &Path| {
            tempfile::Builder::new()
                .prefix(&staging_prefix(&name))
                .rand_bytes(6)
                .tempdir_in(at)
        };
        let beside = if in_place || is_mount_point(&out, parent) {
            None
        } else {
            new_folder(parent).ok()
        };
        let (dir, in_place) = match beside {
            Some(dir) => (dir, false),
            None => (
                new_folder(&out).with_context(|| {
                    format!(
                        "cannot create a folder for the outputs in {}",
                        out.display()
                    )
                })?,
                true,
            ),
        };
        Ok(Staging {
            dir: Some(dir),
            out,
            name,
            in_place,
        })
    }

    /// Where the outputs are written.
    pub fn path(&self) -> &Path {
        self.dir.as_ref().expect("unpublished").path()
    }

    /// Puts the outputs in place of the output folder's, in one step: the
    /// files of the output folder that stormsim did not write are carried
    /// over first (hard links, so nothing is copied and nothing of the
    /// user's is ever only in a temporary folder), the manifest `manifest`
    /// written, then the two folders are exchanged and the old one removed.
    pub fn publish(mut self, manifest: &Manifest) -> Result<()> {
        let staging = self.dir.take().expect("published once").keep();
        let owned = read_manifest(&self.out)
            .map(|m| m.files)
            .unwrap_or_default();
        if self.in_place {
            return publish_in_place(&staging, &self.out, &owned, manifest);
        }
        if let Ok(entries) = std::fs::read_dir(&self.out) {
            for entry in entries {
                let entry = entry?;
                let name = entry.file_name();
                let keep = name
                    .to_str()
                    .is_none_or(|n| !owned.contains(n) && n != MANIFEST_FILE);
                if keep && !manifest.files.iter().any(|f| f.as_str() == name) {
                    carry(&entry.path(), &staging.join(&name))?;
                }
            }
        }
        manifest.write(&staging)?;
        // The new folder has the old one's permissions, as if written there.
        if let Ok(meta) = std::fs::metadata(&self.out) {
            std::fs::set_permissions(&staging, meta.permissions())
                .with_context(|| format!("cannot set the permissions of {}", staging.display()))?;
        }
        if std::env::var_os("STORMSIM_TEST_DIE_BEFORE_SWAP").is_some() {
            // For the tests of an interrupted write: as a kill -9 here would.
            std::process::abort();
        }
        let old = exchange(&staging, &self.out, &self.name).with_context(|| {
            format!("cannot put the outputs in place at {}", self.out.display())
        })?;
        // A failure to remove the old outputs leaves a folder the next run
        // removes.
        let _ = std::fs::remove_dir_all(old);
        Ok(())
    }
}

/// [`Staging::publish`] inside the output folder: the manifest first claims
/// every name about to change, then each output is renamed into place, the
/// last run's files this one did not write are removed, and the manifest
/// says what is there.
fn publish_in_place(
    staging: &Path,
    out: &Path,
    owned: &BTreeSet<String>,
    manifest: &Manifest,
) -> Result<()> {
    let mut claimed = manifest.clone();
    claimed.files.extend(owned.iter().cloned());
    claimed.write(out)?;
    for file in &manifest.files {
        std::fs::rename(staging.join(file), out.join(file))
            .with_context(|| format!("cannot put {} in place in {}", file, out.display()))?;
    }
    for stale in owned.difference(&manifest.files) {
        let path = out.join(stale);
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e)
                    .with_context(|| format!("cannot remove the stale {}", path.display()))
            }
            _ => {}
        }
    }
    manifest.write(out)?;
    let _ = std::fs::remove_dir_all(staging);
    Ok(())
}

/// Puts `from` (the user's file, link or folder) at `to` too, without
/// copying a regular file's bytes where a hard link can be made.
fn carry(from: &Path, to: &Path) -> Result<()> {
    let meta = from.symlink_metadata()?;
    let failed = || format!("cannot carry {} over into the new outputs", from.display());
    if meta.file_type().is_symlink() {
        #[cfg(unix)]
        std::os::unix::fs::symlink(std::fs::read_link(from)?, to).with_context(failed)?;
    } else if meta.is_dir() {
        std::fs::create_dir(to).with_context(failed)?;
        for entry in std::fs::read_dir(from).with_context(failed)? {
            let entry = entry?;
            carry(&entry.path(), &to.join(entry.file_name()))?;
        }
    } else if std::fs::hard_link(from, to).is_err() {
        std::fs::copy(from, to).with_context(failed)?;
    }
    Ok(())
}

/// Exchanges the folders `new` and `out` atomically (`renameat2` with
/// `RENAME_EXCHANGE`) and returns where the old outputs now are (`new`).
/// Where the file system cannot, renames the old folder aside
/// (`.stormsim-old-<name>-XXXXXX`, which the next run puts back if the new
/// one never came in) and the new one in, and returns the aside folder.
fn exchange(new: &Path, out: &Path, name: &str) -> std::io::Result<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let c = |p: &Path| CString::new(p.as_os_str().as_bytes()).map_err(std::io::Error::other);
        let (a, b) = (c(new)?, c(out)?);
        // SAFETY: both are valid NUL-terminated paths that outlive the call.
        let rc = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                a.as_ptr(),
                libc::AT_FDCWD,
                b.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if rc == 0 {
            return Ok(new.to_path_buf());
        }
        let err = std::io::Error::last_os_error();
        if !matches!(err.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
            return Err(err);
        }
    }
    swap_by_renames(new, out, name)
}

/// [`exchange`] by two renames: the old folder aside, the new one in.
fn swap_by_renames(new: &Path, out: &Path, name: &str) -> std::io::Result<PathBuf> {
    let parent = out.parent().unwrap_or(Path::new("."));
    // A name of our own, made and removed so that the rename can take it.
    let aside = tempfile::Builder::new()
        .prefix(&aside_prefix(name))
        .rand_bytes(6)
        .tempdir_in(parent)?
        .keep();
    std::fs::remove_dir(&aside)?;
    std::fs::rename(out, &aside)?;
    std::fs::rename(new, out)?;
    Ok(aside)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Only the folders a write of this very name left are its leftovers:
    /// those of an output folder whose name extends it are not.
    #[test]
    fn leftovers_are_told_apart_by_name() {
        assert!(is_staging_of(".stormsim-tmp-a-x1Y2z3", "a"));
        assert!(!is_staging_of(".stormsim-tmp-a-b-x1Y2z3", "a"));
        assert!(is_staging_of(".stormsim-tmp-a-b-x1Y2z3", "a-b"));
        assert!(!is_staging_of(".stormsim-tmp-a-x1Y2z3.old", "a"));
        assert!(is_named(".stormsim-old-a-x1Y2z3", &aside_prefix("a")));
        assert!(!is_staging_of("a-x1Y2z3", "a"));
    }

    /// A folder the lock made is removed if nothing was written into it; a
    /// folder that was there stays.
    #[test]
    fn a_lock_leaves_no_empty_folder_it_made() {
        let parent = tempfile::tempdir().unwrap();
        let new = parent.path().join("new");
        drop(OutputLock::acquire(&new).unwrap().unwrap());
        assert!(!new.exists());
        std::fs::create_dir(&new).unwrap();
        drop(OutputLock::acquire(&new).unwrap().unwrap());
        assert!(new.exists());
        let made = parent.path().join("made");
        let lock = OutputLock::acquire(&made).unwrap().unwrap();
        std::fs::write(made.join("a.csv"), "").unwrap();
        drop(lock);
        assert!(made.join("a.csv").exists());
    }

    /// An output folder's name of up to 255 bytes gives temporary names of
    /// at most 255 bytes, told apart by a hash where they are cut.
    #[test]
    fn temporary_names_fit_a_file_name() {
        let (a, b) = ("é".repeat(127), format!("{}x", "é".repeat(127)));
        assert_eq!((a.len(), b.len()), (254, 255));
        for name in [&a, &b] {
            let staging = format!("{}x1Y2z3", staging_prefix(name));
            assert!(staging.len() <= MAX_FILE_NAME_BYTES, "{}", staging.len());
            assert!(aside_prefix(name).len() + 6 <= MAX_FILE_NAME_BYTES);
            assert!(is_staging_of(&staging, name));
        }
        assert_ne!(staging_prefix(&a), staging_prefix(&b));
        let short = "d".repeat(234);
        assert_eq!(staging_prefix(&short), format!("{TEMP_PREFIX}{short}-"));
    }

    /// Where folders cannot be exchanged, the old one goes aside and the
    /// new one in; a run cut short between the two renames has its last
    /// outputs put back by the next.
    #[test]
    fn a_swap_by_renames_cut_short_is_undone() {
        let parent = tempfile::tempdir().unwrap();
        let (out, new) = (parent.path().join("out"), parent.path().join("new"));
        for (dir, file) in [(&out, "old.txt"), (&new, "new.txt")] {
            std::fs::create_dir(dir).unwrap();
            std::fs::write(dir.join(file), file).unwrap();
        }
        let aside = swap_by_renames(&new, &out, "out").unwrap();
        assert!(out.join("new.txt").exists() && aside.join("old.txt").exists());
        // Cut short: the aside folder is there, the output folder empty.
        std::fs::remove_dir_all(&out).unwrap();
        std::fs::create_dir(&out).unwrap();
        let staging = Staging::begin(&out).unwrap();
        assert!(out.join("old.txt").exists(), "the last outputs are back");
        assert!(!aside.exists());
        drop(staging);
        assert_eq!(std::fs::read_dir(parent.path()).unwrap().count(), 1);
    }

    /// Written in place (a mount point): the last run's files this one did
    /// not write go, the user's stay, and nothing is left behind.
    #[test]
    fn a_run_written_in_place_replaces_only_its_own_files() {
        let parent = tempfile::tempdir().unwrap();
        let out = parent.path().join("out");
        std::fs::create_dir(&out).unwrap();
        let mut last = Manifest::new(Kind::Run, "m");
        last.files
            .extend(["a.csv".to_string(), "stale.svg".to_string()]);
        for f in ["a.csv", "stale.svg", "notes.txt"] {
            std::fs::write(out.join(f), "old").unwrap();
        }
        last.write(&out).unwrap();
        let staging = Staging::begin_with(&out, true).unwrap();
        assert!(staging.path().starts_with(&out));
        std::fs::write(staging.path().join("a.csv"), "new").unwrap();
        let mut now = Manifest::new(Kind::Run, "m");
        now.files.insert("a.csv".into());
        staging.publish(&now).unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        assert_eq!(names, [MANIFEST_FILE, "a.csv", "notes.txt"]);
        assert_eq!(std::fs::read_to_string(out.join("a.csv")).unwrap(), "new");
        assert_eq!(read_manifest(&out).unwrap(), now);
    }

    /// A folder without a manifest is the user's, even with a run's
    /// summary.json copied into it: none of its files is stormsim's.
    #[test]
    fn a_folder_without_a_manifest_owns_nothing() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("summary.json"),
            r#"{"tool": "stormsim", "model": "m"}"#,
        )
        .unwrap();
        std::fs::write(dir.path().join("index.html"), "mine").unwrap();
        assert_eq!(read_manifest(dir.path()), None);
        assert!(check_owner(dir.path(), Kind::Run, "m").is_err());
        assert_eq!(
            foreign_at(dir.path(), &["summary.json", "index.html", "load.svg"]),
            ["summary.json", "index.html"]
        );
    }

    /// A manifest settles to the files that are there, and only a listed
    /// file is removed.
    #[test]
    fn a_manifest_lists_only_what_is_there() {
        let dir = tempfile::tempdir().unwrap();
        let mut m = Manifest::new(Kind::Sweep, "s");
        m.files
            .extend(["a.csv".to_string(), "sweep.svg".to_string()]);
        m.write(dir.path()).unwrap();
        std::fs::write(dir.path().join("a.csv"), "ours").unwrap();
        settle(dir.path()).unwrap();
        let files = |d: &Path| {
            read_manifest(d)
                .unwrap()
                .files
                .into_iter()
                .collect::<Vec<_>>()
        };
        assert_eq!(files(dir.path()), ["a.csv"]);
        std::fs::write(dir.path().join("sweep.svg"), "mine").unwrap();
        remove_owned(dir.path(), "sweep.svg").unwrap();
        assert!(dir.path().join("sweep.svg").exists(), "the user's stays");
        remove_owned(dir.path(), "a.csv").unwrap();
        assert!(!dir.path().join("a.csv").exists());
        assert!(files(dir.path()).is_empty());
    }
}
