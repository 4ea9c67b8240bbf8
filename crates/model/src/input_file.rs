//! Reading a file the user names as input: a model, a sweep, a trace.
//!
//! Each is read whole into memory before it is parsed, so each is bounded
//! before a byte is read: only a regular file (a pipe may never answer, a
//! device such as `/dev/zero` never ends) of at most
//! [`MAX_INPUT_FILE_BYTES`]. The refusal comes at once, as an I/O error of
//! the kind each caller already reports with the file's name.

use std::io::Read as _;
use std::path::Path;

/// Largest model, sweep or trace file read: 64 MiB. A million trace rates
/// with a timestamp each fit well within it, and so does a model of
/// 10,000 services; the memory a model may ask for once loaded is bounded
/// apart (`--memory-limit-gb`).
pub const MAX_INPUT_FILE_BYTES: u64 = 64 << 20;

/// Why a path is not read as an input file (beside the system's own
/// errors).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputFileError {
    /// A folder, pipe, socket or device.
    NotRegular,
    /// Over [`MAX_INPUT_FILE_BYTES`].
    TooLarge,
    /// Not UTF-8 text.
    NotText,
}

impl std::fmt::Display for InputFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputFileError::NotRegular => f.write_str("not a regular file"),
            InputFileError::TooLarge => write!(
                f,
                "larger than the {MAX_INPUT_FILE_BYTES} bytes (64 MiB) an input file may have"
            ),
            InputFileError::NotText => f.write_str("not UTF-8 text"),
        }
    }
}

impl std::error::Error for InputFileError {}

impl From<InputFileError> for std::io::Error {
    fn from(e: InputFileError) -> std::io::Error {
        let kind = match e {
            InputFileError::NotRegular => std::io::ErrorKind::InvalidInput,
            InputFileError::TooLarge => std::io::ErrorKind::FileTooLarge,
            InputFileError::NotText => std::io::ErrorKind::InvalidData,
        };
        std::io::Error::new(kind, e)
    }
}

/// The text of the input file at `path`: a regular file of at most
/// [`MAX_INPUT_FILE_BYTES`], else an error saying why not (an
/// [`InputFileError`] inside it). Library API: the binary and the Python
/// package read every model, sweep and trace file through here.
pub fn read_input_file(path: &Path) -> std::io::Result<String> {
    if !std::fs::metadata(path)?.is_file() {
        return Err(InputFileError::NotRegular.into());
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_INPUT_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_INPUT_FILE_BYTES {
        return Err(InputFileError::TooLarge.into());
    }
    String::from_utf8(bytes).map_err(|_| InputFileError::NotText.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder and a device are refused before a byte is read; a file is
    /// read whole.
    #[test]
    fn only_a_regular_file_is_read() {
        let dir = std::env::temp_dir();
        let said = |p: &Path| read_input_file(p).map_err(|e| e.to_string());
        assert_eq!(said(&dir), Err("not a regular file".into()));
        #[cfg(unix)]
        assert_eq!(
            said(Path::new("/dev/zero")),
            Err("not a regular file".into())
        );
        let file = dir.join(format!("stormsim-input-{}.json", std::process::id()));
        std::fs::write(&file, "{}").unwrap();
        assert_eq!(said(&file), Ok("{}".into()));
        std::fs::write(&file, [0xff, 0xfe]).unwrap();
        assert_eq!(said(&file), Err("not UTF-8 text".into()));
        std::fs::remove_file(&file).unwrap();
    }
}
