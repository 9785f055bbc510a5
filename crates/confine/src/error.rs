//! Why a child could not be confined or started. Each variant says what the operator (or the
//! embedder) can do about it; janua turns them into a tool's `process` error or a hook's failure.

use std::path::PathBuf;

/// Why a child could not be confined or started.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// The operator's mode requires a sandbox this kernel cannot give (or forces it off); the
    /// message names what is missing and the way out.
    #[error("{0}")]
    Unavailable(String),
    /// The Landlock rules could not be built.
    #[error("cannot build Landlock rules: {0}")]
    Landlock(String),
    /// The program path, an argument or an environment variable holds a NUL byte, which no
    /// `execve` can carry.
    #[error("{0} holds a NUL byte")]
    Nul(&'static str),
    /// More descriptors than a child can be passed besides stdin, stdout and stderr.
    #[error("a child can be passed at most {max} descriptors, not {asked}")]
    TooManyDescriptors {
        /// How many were passed.
        asked: usize,
        /// The most a child takes.
        max: usize,
    },
    /// A step on the host's side failed (a pipe, a descriptor, a thread).
    #[error("cannot {what}: {source}")]
    Host {
        /// The step, as a verb phrase.
        what: &'static str,
        /// The system's error.
        source: std::io::Error,
    },
    /// The child could not be started or confined: the error of the step that failed in it.
    #[error("cannot start {}: {source}", program.display())]
    Start {
        /// The program.
        program: PathBuf,
        /// The system's error of the failed step.
        source: std::io::Error,
    },
}

impl ConfineError {
    /// A host-side step that failed with `source`.
    pub(crate) fn host(what: &'static str, source: std::io::Error) -> Self {
        Self::Host { what, source }
    }
}
