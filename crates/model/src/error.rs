//! Errors in a model file: every problem names its JSON path and what was
//! expected, and all problems are reported at once.

use std::fmt;

/// The path of a problem of a model document as a whole (a required field
/// missing, an array where the model's object should be).
pub const TOP_LEVEL: &str = "(top level)";

/// One problem in a model: where, and what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Problem {
    /// JSON path (`services[1].steps[0].call`); [`TOP_LEVEL`] for the model as
    /// a whole; empty where no path applies (invalid JSON: its line and column
    /// are in the message).
    pub path: String,
    /// What was expected and what was found.
    pub message: String,
}

impl Problem {
    /// A problem at `path`.
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Problem {
        Problem {
            path: path.into(),
            message: message.into(),
        }
    }

    /// The same problem, located inside `prefix` (e.g. a variant).
    pub fn within(mut self, prefix: &str) -> Problem {
        self.path = match (prefix.is_empty(), self.path.is_empty()) {
            (true, _) => self.path,
            (false, true) => prefix.to_string(),
            (false, false) => format!("{prefix}: {}", self.path),
        };
        self
    }
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// A model that cannot be run, with every problem found.
#[derive(Debug, thiserror::Error)]
pub struct ModelError {
    /// The problems, in document order where possible.
    pub problems: Vec<Problem>,
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, p) in self.problems.iter().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "{p}")?;
        }
        Ok(())
    }
}

impl From<Vec<Problem>> for ModelError {
    fn from(problems: Vec<Problem>) -> Self {
        ModelError { problems }
    }
}
