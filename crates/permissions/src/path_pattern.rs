//! Read/Edit path specifiers with gitignore semantics, anchored as Claude Code anchors them:
//! `//abs`, `~/home`, `/relative-to-the-settings-scope`, `./` or bare = relative to the working
//! directory. A bare name (no `/`) matches at any depth; deny and ask rules also match a
//! single-segment directory pattern (`secrets/**`) at any depth, allow rules only at the working
//! directory. `*` stays within a path segment, `**` crosses segments.

use std::path::{Path, PathBuf};

use std::sync::atomic::{AtomicU32, Ordering};

use globset::{Glob, GlobBuilder, GlobMatcher};

use crate::rules::SpecifierError;

/// Numbers every compiled pattern, so that a [`super::path_index::PathIndex`] can name it.
static NEXT_ID: AtomicU32 = AtomicU32::new(0);

/// Where relative rule paths are anchored.
#[derive(Debug, Clone)]
pub struct Anchors<'a> {
    /// The working directory (`./x`, `x`).
    pub cwd: &'a Path,
    /// `$HOME` (`~/x`); `None` makes `~/` rules an error.
    pub home: Option<&'a Path>,
    /// The settings scope's root (`/x`).
    pub scope_root: &'a Path,
}

/// A compiled path specifier.
#[derive(Debug, Clone)]
pub struct PathPattern {
    id: u32,
    globs: Vec<Glob>,
    matchers: Vec<GlobMatcher>,
}

impl PathPattern {
    /// Compiles `specifier`; `broad` is true for deny and ask rules.
    pub(crate) fn compile(
        specifier: &str,
        broad: bool,
        anchors: &Anchors<'_>,
    ) -> Result<Self, SpecifierError> {
        let (base, relative, any_depth_allowed) = if let Some(rest) = specifier.strip_prefix("//") {
            (PathBuf::from("/"), rest, false)
        } else if specifier == "~" || specifier.starts_with("~/") {
            let home = anchors.home.ok_or(SpecifierError::NoHome)?;
            (
                home.to_path_buf(),
                specifier[1..].trim_start_matches('/'),
                false,
            )
        } else if let Some(rest) = specifier.strip_prefix('/') {
            (anchors.scope_root.to_path_buf(), rest, false)
        } else if let Some(rest) = specifier.strip_prefix("./") {
            (anchors.cwd.to_path_buf(), rest, false)
        } else {
            (anchors.cwd.to_path_buf(), specifier, true)
        };
        let directory = relative.ends_with('/');
        let mut segments = clean_segments(relative.trim_end_matches('/'))?;
        let base = climb(&base, &mut segments);
        let mut pattern_segments: Vec<String> = Vec::new();
        let single_segment_dir = segments.len() == 2 && segments[1] == "**";
        if any_depth_allowed && (segments.len() == 1 || (broad && single_segment_dir)) {
            pattern_segments.push("**".to_owned());
        }
        pattern_segments.extend(segments.iter().cloned());
        let base = lexical(&base);
        let mut prefix = globset::escape(&base.to_string_lossy());
        if !prefix.ends_with('/') {
            prefix.push('/');
        }
        let body = pattern_segments.join("/");
        let mut patterns = vec![format!("{prefix}{body}")];
        if directory {
            // `dir/`: the directory and everything under it.
            patterns.push(format!("{prefix}{body}/**"));
        }
        if let Some(root) = body.strip_suffix("/**") {
            // `dir/**` also covers `dir` itself (a Glob or Grep rooted there).
            patterns.push(format!("{prefix}{root}"));
        }
        if body.is_empty() || body == "**" {
            patterns.push(prefix.trim_end_matches('/').to_owned());
        }
        let globs = patterns
            .iter()
            .filter(|pattern| !pattern.is_empty())
            .map(|pattern| {
                GlobBuilder::new(pattern)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                    .map_err(SpecifierError::Glob)
            })
            .collect::<Result<Vec<_>, _>>()?;
        let matchers = globs.iter().map(Glob::compile_matcher).collect();
        Ok(Self {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            globs,
            matchers,
        })
    }

    /// This pattern's number, unique in the process.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// The globs it matches with (any one matching is a match).
    pub fn globs(&self) -> &[Glob] {
        &self.globs
    }

    /// True when the absolute, normalized `path` matches.
    pub fn matches(&self, path: &Path) -> bool {
        self.matchers.iter().any(|matcher| matcher.is_match(path))
    }

    /// True when the pattern could match `dir` or some path below it: what a program that
    /// reads or changes a whole tree (`grep -r dir`, `rm -r dir`) could reach. Answered from the
    /// globs' segments, never from the disk: a file that does not exist yet may be made there.
    pub fn could_match_under(&self, dir: &Path) -> bool {
        if self.matches(dir) {
            return true;
        }
        let dir: Vec<String> = dir
            .components()
            .filter_map(|part| match part {
                std::path::Component::Normal(name) => Some(name.to_string_lossy().into_owned()),
                _ => None,
            })
            .collect();
        let dir: Vec<&str> = dir.iter().map(String::as_str).collect();
        self.globs.iter().any(|glob| {
            let segments: Vec<&str> = glob
                .glob()
                .split('/')
                .filter(|segment| !segment.is_empty())
                .collect();
            reaches_below(&segments, &dir)
        })
    }
}

/// True when the glob `segments` can match a path that starts with all of `dir` and goes on
/// below it. `**` takes any number of segments; any other segment is matched as a glob of its
/// own (a segment that does not compile counts as matching: doubt reaches further, never less).
fn reaches_below(segments: &[&str], dir: &[&str]) -> bool {
    let Some((first, rest)) = segments.split_first() else {
        return false;
    };
    let Some((head, below)) = dir.split_first() else {
        // All of `dir` is matched: any segment left can match something under it.
        return true;
    };
    if *first == "**" {
        return rest.is_empty() || reaches_below(rest, dir) || reaches_below(segments, below);
    }
    let matched = GlobBuilder::new(first)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_or(true, |glob| glob.compile_matcher().is_match(head));
    matched && reaches_below(rest, below)
}

/// Splits a rule path into segments, dropping empty and `.` segments and applying `..` to
/// literal segments.
fn clean_segments(relative: &str) -> Result<Vec<String>, SpecifierError> {
    let mut segments: Vec<String> = Vec::new();
    for segment in relative.split('/') {
        match segment {
            "" | "." => {}
            ".." => match segments.last().map(String::as_str) {
                Some(last) if !last.contains(['*', '?', '[', '{']) => {
                    segments.pop();
                }
                Some(_) => return Err(SpecifierError::DotDotAfterWildcard),
                None => segments.push("..".to_owned()),
            },
            other => segments.push(other.to_owned()),
        }
    }
    Ok(segments)
}

/// `path` with `.` and `..` resolved lexically.
fn lexical(path: &Path) -> PathBuf {
    let mut normalized = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::ParentDir => {
                normalized.pop();
            }
            std::path::Component::CurDir => {}
            other => normalized.push(other.as_os_str()),
        }
    }
    normalized
}

/// `base` with the rule's leading `..` segments applied (a rule such as `../shared/**` anchored at
/// the working directory).
fn climb(base: &Path, segments: &mut Vec<String>) -> PathBuf {
    let mut base = base.to_path_buf();
    while segments.first().is_some_and(|s| s == "..") {
        segments.remove(0);
        base.pop();
    }
    base
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(specifier: &str, broad: bool, path: &str) -> bool {
        let anchors = Anchors {
            cwd: Path::new("/ws/project"),
            home: Some(Path::new("/home/alice")),
            scope_root: Path::new("/home/alice/.config/janua"),
        };
        PathPattern::compile(specifier, broad, &anchors)
            .unwrap()
            .matches(Path::new(path))
    }

    #[test]
    fn anchors_and_depth() {
        let cases = [
            // `//` is the filesystem root.
            ("//etc/passwd", false, "/etc/passwd", true),
            (
                "//Users/alice/secrets/**",
                false,
                "/Users/alice/secrets/a/b",
                true,
            ),
            // `~/` is home.
            (
                "~/Documents/*.pdf",
                false,
                "/home/alice/Documents/x.pdf",
                true,
            ),
            (
                "~/Documents/*.pdf",
                false,
                "/home/alice/Documents/sub/x.pdf",
                false,
            ),
            // `/` is the settings scope, not the filesystem root.
            (
                "/secrets/**",
                false,
                "/home/alice/.config/janua/secrets/k",
                true,
            ),
            ("/secrets/**", false, "/secrets/k", false),
            // Bare names match at any depth under the working directory, not above it.
            (".env", false, "/ws/project/.env", true),
            (".env", false, "/ws/project/a/b/.env", true),
            (".env", false, "/ws/.env", false),
            ("*.env", false, "/ws/project/deep/x.env", true),
            // `./` anchors at the working directory.
            ("./.env", false, "/ws/project/.env", true),
            ("./.env", false, "/ws/project/a/.env", false),
            // `*` stays within a segment; `**` crosses.
            ("src/*.ts", false, "/ws/project/src/a.ts", true),
            ("src/*.ts", false, "/ws/project/src/sub/a.ts", false),
            ("src/**/*.ts", false, "/ws/project/src/sub/a.ts", true),
            ("src/**/*.ts", false, "/ws/project/src/a.ts", true),
            // Single-segment directory patterns: allow anchored, deny at any depth.
            ("secrets/**", false, "/ws/project/secrets/k", true),
            ("secrets/**", false, "/ws/project/a/secrets/k", false),
            ("secrets/**", true, "/ws/project/a/secrets/k", true),
            (
                "src/components/**",
                true,
                "/ws/project/x/src/components/a",
                false,
            ),
            // `dir/**` covers the directory itself; `dir/` too.
            ("secrets/**", true, "/ws/project/secrets", true),
            ("build/", true, "/ws/project/build", true),
            ("build/", true, "/ws/project/x/build/out.o", true),
            // Duplicate slashes and dots in rules are normalized.
            ("src//./a.ts", false, "/ws/project/src/a.ts", true),
            ("../shared/**", false, "/ws/shared/x", true),
            // Escaped metacharacters are literal.
            ("file\\[1\\].txt", false, "/ws/project/file[1].txt", true),
            ("file\\[1\\].txt", false, "/ws/project/file1.txt", false),
            ("//**/.env", true, "/anywhere/.env", true),
        ];
        for (specifier, broad, path, expected) in cases {
            assert_eq!(
                check(specifier, broad, path),
                expected,
                "{specifier} (broad {broad}) vs {path}"
            );
        }
    }

    #[test]
    fn patterns_that_could_match_below_a_directory() {
        let anchors = Anchors {
            cwd: Path::new("/ws"),
            home: None,
            scope_root: Path::new("/ws"),
        };
        let cases = [
            ("./.env", "/ws", true),
            ("./.env", "/ws/src", false),
            ("./.env", "/ws/.env", true),
            (".env", "/ws/src", true),
            (".env", "/elsewhere", false),
            ("./secrets/**", "/ws/secrets", true),
            ("./secrets/**", "/ws/secrets/a", true),
            ("./secrets/**", "/ws", true),
            ("./secrets/**", "/ws/src", false),
            ("src/*.key", "/ws/src", true),
            ("src/*.key", "/ws/src/sub", false),
            ("src/*.key", "/ws/other", false),
            ("//**/.ssh/**", "/home", true),
            ("./a/*/c", "/ws/a/b", true),
            ("./a/*/c", "/ws/a/b/d", false),
        ];
        for (specifier, dir, expected) in cases {
            let pattern = PathPattern::compile(specifier, true, &anchors).unwrap();
            assert_eq!(
                pattern.could_match_under(Path::new(dir)),
                expected,
                "{specifier} under {dir}"
            );
        }
    }

    #[test]
    fn home_rules_need_home() {
        let anchors = Anchors {
            cwd: Path::new("/ws"),
            home: None,
            scope_root: Path::new("/ws"),
        };
        assert!(PathPattern::compile("~/x", false, &anchors).is_err());
    }
}
