//! Entry points for the fuzz targets of `fuzz/` that reach the permission engine, and the replay
//! of their committed corpora (`fuzz/corpus/<target>`, `fuzz/regressions/<target>`).
//!
//! Each function feeds arbitrary bytes to one parser a model or a repository can reach and
//! panics only when an invariant of that parser breaks; a parser's own typed error is a pass.
//! Built only for the fuzz crate (feature `fuzzing`) and this crate's tests, so the fuzz targets
//! and the stable replay run exactly the same checks without linking the runtime above.

use std::path::{Component, Path};

use crate::{Rule, RuleContext, RuleKind, RuleSource, split_command};

/// The rule parser: any text, as any rule kind, parses or fails with a typed error; a parsed
/// rule reparses to the same text.
pub fn rule_parser(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let context = RuleContext {
        cwd: "/ws".into(),
        home: Some("/home/u".into()),
    };
    for kind in [RuleKind::Allow, RuleKind::Ask, RuleKind::Deny] {
        if let Ok(rule) = Rule::parse(text, kind, RuleSource::CommandLine, &context) {
            let again = Rule::parse(rule.text(), kind, RuleSource::CommandLine, &context)
                .expect("a parsed rule reparses");
            assert_eq!(again.text(), rule.text());
        }
    }
}

/// The shell splitter Bash rules rely on: any command line splits or is reported opaque.
pub fn shell_splitter(data: &[u8]) {
    let Ok(command) = std::str::from_utf8(data) else {
        return;
    };
    let (subcommands, opaque) = split_command(command);
    if opaque.is_none() {
        // Every simple command a line holds is at most as long as the line (plus the
        // separators a subshell's unwrapping may add).
        for sub in subcommands {
            assert!(sub.len() <= command.len() + 8 * command.matches('(').count() + 8);
        }
    }
}

/// Lexical path normalization: the first line is the working directory, the rest the path. The
/// result is absolute, holds no `.` or `..`, never climbs above `/`, and normalizing it again
/// changes nothing.
pub fn path_normalization(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (cwd, path) = text.split_once('\n').unwrap_or(("/ws", text));
    let cwd = if cwd.starts_with('/') {
        cwd.to_owned()
    } else {
        format!("/{cwd}")
    };
    let normalized = crate::paths::normalize(Path::new(&cwd), path);
    assert!(normalized.is_absolute(), "{normalized:?} is not absolute");
    assert!(
        normalized
            .components()
            .all(|part| !matches!(part, Component::CurDir | Component::ParentDir)),
        "{normalized:?} keeps a `.` or `..`"
    );
    let spelled = normalized.to_string_lossy().into_owned();
    if normalized.to_str().is_some() {
        let again = crate::paths::normalize(Path::new("/"), &spelled);
        assert_eq!(again, normalized, "normalization is not idempotent");
    }
}

/// One fuzz target: its name (the `fuzz/corpus/<name>` directory) and its entry point.
pub type Target = (&'static str, fn(&[u8]));

/// This crate's fuzz targets by name.
pub const TARGETS: &[Target] = &[
    ("rule_parser", rule_parser),
    ("shell_splitter", shell_splitter),
    ("path_normalization", path_normalization),
];

/// Runs `target` on every committed seed and regression input under `fuzz_dir` (the directory
/// holding `corpus/` and `regressions/`), so a fixed crash stays fixed on the stable toolchain.
/// Panics naming the input that fails, or when a target has fewer than five inputs.
pub fn replay(fuzz_dir: &Path, (name, target): Target) {
    let mut replayed = 0;
    for kind in ["corpus", "regressions"] {
        let dir = fuzz_dir.join(kind).join(name);
        let entries =
            std::fs::read_dir(&dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display()));
        for entry in entries {
            let path = entry.expect("a directory entry").path();
            if path.file_name().is_some_and(|file| file == ".gitkeep") {
                continue;
            }
            let data = std::fs::read(&path).expect("a readable fuzz input");
            let outcome = std::panic::catch_unwind(|| target(&data));
            assert!(outcome.is_ok(), "{name} fails on {}", path.display());
            replayed += 1;
        }
    }
    assert!(replayed >= 5, "{name} has only {replayed} seeds");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_seed_and_regression_passes_its_target() {
        let fuzz_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz");
        for target in TARGETS {
            replay(&fuzz_dir, *target);
        }
    }
}
