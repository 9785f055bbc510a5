//! Process grants: which programs a component may run through the host's `process` interface, with
//! which arguments, and which extra environment variables it may set for them.

use std::fmt;
use std::path::PathBuf;

use serde::Deserialize;

use super::{EnvGrant, GrantError};

/// One program a component may run.
///
/// In a manifest: `process = [{ program = "/bin/bash", args = ["-c", "*"], env = ["NODE_ENV"] }]`.
/// Arguments match position by position: each pattern is a `*` glob over one argument, and the
/// count must be equal. Programs are absolute paths compared exactly, so `PATH` cannot swap them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, try_from = "RawProcessGrant")]
pub struct ProcessGrant {
    program: PathBuf,
    args: Vec<String>,
    env: Vec<EnvGrant>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawProcessGrant {
    program: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: Vec<EnvGrant>,
}

impl TryFrom<RawProcessGrant> for ProcessGrant {
    type Error = GrantError;

    fn try_from(raw: RawProcessGrant) -> Result<Self, GrantError> {
        Self::new(&raw.program, raw.args, raw.env)
    }
}

impl ProcessGrant {
    /// A grant of `program` (an absolute path) with positional argument patterns `args`.
    pub fn new(program: &str, args: Vec<String>, env: Vec<EnvGrant>) -> Result<Self, GrantError> {
        let path = PathBuf::from(program);
        if !path.is_absolute() || program.contains("..") {
            return Err(GrantError::ProcessProgram {
                program: program.to_owned(),
            });
        }
        Ok(Self {
            program: path,
            args,
            env,
        })
    }

    /// True when this grant covers running `program` with `args`.
    pub fn covers(&self, program: &str, args: &[String]) -> bool {
        self.program.as_os_str() == program
            && self.args.len() == args.len()
            && self
                .args
                .iter()
                .zip(args)
                .all(|(pattern, arg)| janua_types::wildcard::matches(pattern, arg))
    }

    /// True when this grant lets a run set variable `name`.
    pub fn allows_env(&self, name: &str) -> bool {
        self.env.iter().any(|grant| grant.matches(name))
    }
}

impl fmt::Display for ProcessGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.program.display())?;
        for arg in &self.args {
            write!(f, " {arg}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_match_exactly_and_arguments_by_position() {
        let grant = ProcessGrant::new("/bin/bash", vec!["-c".into(), "*".into()], Vec::new())
            .expect("valid grant");
        let args = |list: &[&str]| list.iter().map(|arg| (*arg).to_owned()).collect::<Vec<_>>();
        for (program, arguments, expected) in [
            ("/bin/bash", args(&["-c", "ls -la"]), true),
            ("/bin/bash", args(&["-c", ""]), true),
            ("/bin/bash", args(&["-x", "ls"]), false),
            ("/bin/bash", args(&["-c"]), false),
            ("/bin/bash", args(&["-c", "ls", "extra"]), false),
            ("bash", args(&["-c", "ls"]), false),
            ("/usr/bin/bash", args(&["-c", "ls"]), false),
        ] {
            assert_eq!(
                grant.covers(program, &arguments),
                expected,
                "{program} {arguments:?}"
            );
        }
    }

    #[test]
    fn relative_programs_are_refused() {
        for program in ["bash", "./bash", "/bin/../bin/bash"] {
            assert!(ProcessGrant::new(program, Vec::new(), Vec::new()).is_err());
        }
    }
}
