//! The limits of analysis, as data: each part of a command line whose effect is not known before
//! it runs, and how far it could reach. The parts are found where a command is read
//! (`target.rs`, `programs.rs`); they are decided in one place, `decision/fail_closed.rs`.
//!
//! What is unknown: text past a limit or that does not parse, words built when the line runs
//! (`$(…)`, variables, `eval` of them), code handed to an interpreter (`python3 -c`, a heredoc or
//! pipe into one, a script that is not a readable shell script), an option of the program table
//! whose value cannot be read, and files named by a pattern or expansion. What a known program
//! does by itself (make reading its Makefile, a compiler, a test runner) is that program's, and
//! its rules cover it. A directory a program walks (`grep -r src`, `rm -r build`) is placed, not
//! unknown: the part reaches only below it.

use std::path::PathBuf;

/// How far a part reaches into the file system.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// Nowhere.
    Nothing,
    /// These paths (every spelling of each: lexical and with links resolved) and everything
    /// below them.
    Under(Vec<PathBuf>),
    /// Any file.
    Anywhere,
}

/// One part of a command whose effect is not known before it runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unknown {
    /// What it is, in words (`python3 runs a code string`).
    pub what: String,
    /// True when it may run any program: any Bash rule could match what it runs.
    pub runs: bool,
    /// The files it may read.
    pub reads: Scope,
    /// The files it may change.
    pub writes: Scope,
    /// True when it may reach names that start with a dot directly inside its directories (a
    /// walk reaches them; a glob such as `*.o` that bash expands without them does not): every
    /// protected name starts with one.
    pub dot_names: bool,
}

impl Unknown {
    /// A part that may run any program and read or change any file.
    pub fn anything(what: impl Into<String>) -> Self {
        Self {
            what: what.into(),
            runs: true,
            reads: Scope::Anywhere,
            writes: Scope::Anywhere,
            dot_names: true,
        }
    }

    /// A part that reads files within `scope`.
    pub fn reads(what: impl Into<String>, scope: Scope, dot_names: bool) -> Self {
        Self {
            what: what.into(),
            runs: false,
            reads: scope,
            writes: Scope::Nothing,
            dot_names,
        }
    }

    /// A part that changes files within `scope`.
    pub fn writes(what: impl Into<String>, scope: Scope, dot_names: bool) -> Self {
        Self {
            what: what.into(),
            runs: false,
            reads: Scope::Nothing,
            writes: scope,
            dot_names,
        }
    }
}
