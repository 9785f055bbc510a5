//! The default `Glob` tool: lists the files under a directory whose relative path matches a
//! gitignore-style glob, newest first.
//!
//! The walk is sequential (guests have no threads), never follows symlinks, honours `.gitignore`
//! and `.ignore` files unless asked not to, includes dotfiles and always skips `.git/`. Paths the
//! host hides (operator deny rules) look absent, so walk errors are skipped silently. Memory stays
//! bounded whatever the tree: only the `MAX_RESULTS` newest matches are held.

// Native builds exist only for unit tests and do not export the component (see `export!` below),
// so most of the tool is unused there; the wasm build still checks for dead code.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::Path;
use std::time::{Instant, SystemTime};

use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use janua_sdk::{CapabilityClass, Context, Output, Tool, ToolError, files};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Files returned at most; the rest are counted, not listed.
const MAX_RESULTS: usize = 100;
/// Walk entries between two checks of the host's cancellation flag.
const CANCEL_CHECK_EVERY: u64 = 256;

/// Input of `Glob`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobInput {
    /// The glob pattern to match files against, e.g. `**/*.rs`, `src/**/*.ts` or `*.md`. It is
    /// matched against each file's path relative to the search directory: `*` and `?` never cross
    /// a `/` (so `*.md` matches top-level files only), `**` crosses directories, and `{a,b}` and
    /// `[abc]` work as in gitignore. An absolute pattern must lie under the search directory.
    pub pattern: String,
    /// The directory to search in: absolute, or relative to the workspace. Omit it to search the
    /// workspace. Do not pass "undefined" or "null"; just leave the field out.
    pub path: Option<String>,
    /// When true, `.gitignore` and `.ignore` files are not honoured, so ignored files (build
    /// output, dependencies) are listed too. Defaults to false.
    #[serde(default)]
    pub no_ignore: bool,
}

struct Glob;

impl Tool for Glob {
    type Input = GlobInput;
    const NAME: &'static str = "Glob";
    const DESCRIPTION: &'static str = "Fast file pattern matching that works with any codebase \
        size. Supports glob patterns like `**/*.js` or `src/**/*.ts`, matched against paths \
        relative to the search directory (`*.md` matches only top-level files; use `**/*.md` for \
        all). Returns matching file paths (files only, not directories) sorted by modification \
        time, newest first, at most 100. Files ignored by `.gitignore` are skipped unless \
        `no_ignore` is true; dotfiles are included and `.git/` is always skipped. Use it to find \
        files by name; use Grep to search file contents.";
    const CLASS: CapabilityClass = CapabilityClass::Read;
    const READ_ONLY: bool = true;
    const CONCURRENCY_SAFE: bool = true;
    const RULE_FIELD: Option<&'static str> = Some("path");

    fn call(input: GlobInput, ctx: &Context) -> Result<Output, ToolError> {
        let started = Instant::now();
        let search_dir = search_dir(&input, ctx);
        let pattern = compile(&input.pattern, &search_dir)
            .map_err(|message| ToolError::new("invalid_pattern", message))?;
        check_directory(&search_dir)?;
        let found = walk(
            &search_dir,
            &pattern,
            input.no_ignore,
            &janua_sdk::cancelled,
        )?;
        Ok(render(found, started))
    }
}

impl janua_sdk::Validate for Glob {
    fn validate(input: &GlobInput, ctx: &Context) -> Result<(), String> {
        if let Some(path) = &input.path
            && path.trim().is_empty()
        {
            return Err("path is empty; omit it to search the workspace".to_owned());
        }
        let search_dir = search_dir(input, ctx);
        compile(&input.pattern, &search_dir).map(|_| ())
    }
}

// Only wasm builds export the component: natively (unit tests) the exported symbol names, which
// contain `:`, cannot go into a linker version script, so the native cdylib would not link.
#[cfg(target_arch = "wasm32")]
janua_sdk::export!(Glob);

fn search_dir(input: &GlobInput, ctx: &Context) -> String {
    match &input.path {
        Some(path) => ctx.resolve_path(path),
        None => ctx.resolve_path(&ctx.cwd),
    }
}

/// A pattern ready to match relative paths, plus the literal directories it starts with, which
/// let the walk skip subtrees that cannot hold a match.
#[derive(Debug)]
struct Pattern {
    matcher: GlobMatcher,
    literal_dirs: Vec<String>,
}

/// Validates and compiles `pattern` for a search of `search_dir`; the error is for the model.
fn compile(pattern: &str, search_dir: &str) -> Result<Pattern, String> {
    let relative = relative_pattern(pattern, search_dir)?;
    let matcher = GlobBuilder::new(&relative)
        .literal_separator(true)
        .backslash_escape(true)
        .build()
        .map_err(|error| format!("invalid glob pattern {pattern:?}: {}", error.kind()))?
        .compile_matcher();
    Ok(Pattern {
        literal_dirs: literal_dirs(&relative),
        matcher,
    })
}

/// Rewrites the model's pattern as one relative to `search_dir`: absolute patterns lose the
/// search-directory prefix, `./` prefixes go, and a trailing `/` means "everything under".
fn relative_pattern(pattern: &str, search_dir: &str) -> Result<String, String> {
    if pattern.trim().is_empty() {
        return Err("pattern is empty; give a glob such as **/*.rs".to_owned());
    }
    let mut relative = if pattern.starts_with('/') {
        let normalized = janua_sdk::files::normalize(pattern);
        let prefix = if search_dir == "/" {
            "/".to_owned()
        } else {
            format!("{search_dir}/")
        };
        match normalized.strip_prefix(&prefix) {
            Some(rest) if !rest.is_empty() => rest.to_owned(),
            _ => {
                return Err(format!(
                    "the absolute pattern {pattern:?} is not inside the search directory \
                     {search_dir}; set path to a directory that contains it, or give a pattern \
                     relative to the search directory"
                ));
            }
        }
    } else {
        let mut rest = pattern;
        while let Some(stripped) = rest.strip_prefix("./") {
            rest = stripped.trim_start_matches('/');
        }
        rest.to_owned()
    };
    if relative.trim_end_matches('/').is_empty() || relative == "." {
        return Err(format!(
            "pattern {pattern:?} names the search directory itself; give a file pattern such as \
             **/*"
        ));
    }
    if pattern.ends_with('/') {
        relative = format!("{}/**", relative.trim_end_matches('/'));
    }
    if relative.split('/').any(|part| part == "..") {
        return Err(format!(
            "pattern {pattern:?} contains `..`; patterns match paths inside the search directory, \
             so set path to search another directory"
        ));
    }
    Ok(relative)
}

/// The leading components of a relative pattern that hold no glob syntax, excluding the last
/// component (which names files, not a directory to descend into).
fn literal_dirs(relative: &str) -> Vec<String> {
    let parts: Vec<&str> = relative.split('/').collect();
    let directories = &parts[..parts.len().saturating_sub(1)];
    directories
        .iter()
        .take_while(|part| !part.is_empty() && !part.contains(['*', '?', '[', ']', '{', '}', '\\']))
        .map(|part| (*part).to_owned())
        .collect()
}

/// True when a directory at `relative_dir` (relative to the search directory, `/`-separated)
/// can contain files the pattern matches: it must agree with the pattern's literal directories
/// as far as both go.
fn could_contain(literal_dirs: &[String], relative_dir: &str) -> bool {
    relative_dir
        .split('/')
        .filter(|part| !part.is_empty())
        .zip(literal_dirs)
        .all(|(part, literal)| part == literal)
}

fn check_directory(path: &str) -> Result<(), ToolError> {
    let metadata =
        std::fs::metadata(path).map_err(|error| files::io_error(path, "read", &error))?;
    if metadata.is_dir() {
        Ok(())
    } else {
        Err(ToolError::new(
            "not_a_directory",
            format!(
                "{path} is a file, not a directory; set path to the directory to search, or use \
                 Read to read this file"
            ),
        ))
    }
}

/// The newest matches (at most [`MAX_RESULTS`]) and how many files matched in all.
#[derive(Debug, PartialEq)]
struct Found {
    newest: Vec<String>,
    total: u64,
}

/// Keeps the `capacity` best entries seen, best meaning newest and then smallest path, without
/// holding the rest.
struct Newest {
    capacity: usize,
    // A max-heap of ranks whose top is the worst entry kept, so it is the one evicted.
    heap: BinaryHeap<(Reverse<SystemTime>, String)>,
}

impl Newest {
    fn new(capacity: usize) -> Self {
        Self {
            capacity,
            heap: BinaryHeap::new(),
        }
    }

    fn push(&mut self, modified: SystemTime, path: String) {
        if self.capacity == 0 {
            return;
        }
        let rank = (Reverse(modified), path);
        if self.heap.len() < self.capacity {
            self.heap.push(rank);
        } else if self.heap.peek().is_some_and(|worst| rank < *worst) {
            self.heap.pop();
            self.heap.push(rank);
        }
    }

    fn into_sorted(self) -> Vec<String> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|(_, path)| path)
            .collect()
    }
}

/// Walks `search_dir` for files matching `pattern`. `cancelled` is the host's flag, passed in so
/// unit tests can walk real directories natively.
fn walk(
    search_dir: &str,
    pattern: &Pattern,
    no_ignore: bool,
    cancelled: &dyn Fn() -> bool,
) -> Result<Found, ToolError> {
    let root = Path::new(search_dir);
    let literal = pattern.literal_dirs.clone();
    let filter_root = root.to_path_buf();
    let mut builder = WalkBuilder::new(root);
    builder
        .standard_filters(!no_ignore)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(move |entry| {
            if entry.file_name() == ".git" {
                return false;
            }
            if entry.depth() == 0 || !entry.file_type().is_some_and(|kind| kind.is_dir()) {
                return true;
            }
            let relative = entry
                .path()
                .strip_prefix(&filter_root)
                .unwrap_or(entry.path());
            could_contain(&literal, &relative.to_string_lossy())
        });
    let mut newest = Newest::new(MAX_RESULTS);
    let mut total = 0u64;
    for (seen, entry) in builder.build().enumerate() {
        if seen as u64 % CANCEL_CHECK_EVERY == CANCEL_CHECK_EVERY - 1 && cancelled() {
            return Err(ToolError::new("cancelled", "the search was cancelled"));
        }
        // Hidden (denied) and vanished paths surface as errors; they are simply not listed.
        let Ok(entry) = entry else { continue };
        // Symlinks are never followed, and only regular files are listed.
        if !entry.file_type().is_some_and(|kind| kind.is_file()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let Some(relative) = relative.to_str() else {
            continue;
        };
        if !pattern.matcher.is_match(relative) {
            continue;
        }
        let Ok(metadata) = entry.metadata() else {
            continue;
        };
        total += 1;
        let modified = metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH);
        newest.push(modified, join(search_dir, relative));
    }
    Ok(Found {
        newest: newest.into_sorted(),
        total,
    })
}

fn join(dir: &str, relative: &str) -> String {
    if dir.ends_with('/') {
        format!("{dir}{relative}")
    } else {
        format!("{dir}/{relative}")
    }
}

fn render(found: Found, started: Instant) -> Output {
    let text = render_text(&found);
    let structured = json!({
        "filenames": found.newest,
        "numFiles": found.newest.len(),
        "totalFiles": found.total,
        "truncated": found.total > found.newest.len() as u64,
        "durationMs": u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
    });
    Output::text(text).with_structured(structured)
}

fn render_text(found: &Found) -> String {
    if found.newest.is_empty() {
        return "No files found".to_owned();
    }
    let mut text = found.newest.join("\n");
    let shown = found.newest.len() as u64;
    if found.total > shown {
        text.push_str(&format!(
            "\n(Results are truncated: showing the {shown} most recently modified of {} matching \
             files. Use a more specific pattern or path.)",
            found.total
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn matches(pattern: &str, path: &str) -> bool {
        compile(pattern, "/ws").unwrap().matcher.is_match(path)
    }

    #[test]
    fn patterns_match_relative_paths_with_literal_separators() {
        for (pattern, path, expected) in [
            ("*.md", "README.md", true),
            ("*.md", "docs/guide.md", false),
            ("**/*.md", "README.md", true),
            ("**/*.md", "docs/deep/guide.md", true),
            ("src/**/*.ts", "src/a.ts", true),
            ("src/**/*.ts", "src/x/y/a.ts", true),
            ("src/**/*.ts", "lib/src/a.ts", false),
            ("*.{ts,tsx}", "a.tsx", true),
            ("?.rs", "a.rs", true),
            ("?.rs", "ab.rs", false),
            ("src/", "src/x/a.rs", true),
            ("./src/*.rs", "src/a.rs", true),
            ("/ws/src/*.rs", "src/a.rs", true),
            ("/ws/**/*.rs", "deep/a.rs", true),
            ("/ws/./src/../lib/*.rs", "lib/a.rs", true),
            (".github/**", ".github/workflows/ci.yml", true),
        ] {
            assert_eq!(matches(pattern, path), expected, "{pattern} vs {path}");
        }
    }

    #[test]
    fn schema_names_fields_like_claude_code_and_documents_each() {
        let schema = serde_json::to_value(schemars::schema_for!(GlobInput)).unwrap();
        let properties = schema["properties"].as_object().unwrap();
        let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["no_ignore", "path", "pattern"]);
        for (name, property) in properties {
            assert!(
                property["description"].is_string(),
                "{name} has no description"
            );
        }
        assert_eq!(schema["required"], json!(["pattern"]));
        assert_eq!(schema["additionalProperties"], json!(false));
    }

    #[test]
    fn bad_patterns_are_explained() {
        for (pattern, fragment) in [
            ("", "pattern is empty"),
            ("   ", "pattern is empty"),
            ("src/[a", "invalid glob pattern"),
            ("{a,b", "invalid glob pattern"),
            ("/elsewhere/*.rs", "not inside the search directory /ws"),
            ("/ws", "not inside the search directory"),
            ("/wsx/*.rs", "not inside the search directory"),
            ("../*.rs", "contains `..`"),
            ("a/../../b", "contains `..`"),
            (".", "names the search directory itself"),
            ("./", "names the search directory itself"),
        ] {
            let error = compile(pattern, "/ws").unwrap_err();
            assert!(error.contains(fragment), "{pattern}: {error}");
        }
    }

    #[test]
    fn absolute_patterns_work_from_the_root() {
        let pattern = compile("/etc/*.conf", "/").unwrap();
        assert!(pattern.matcher.is_match("etc/a.conf"));
        assert_eq!(pattern.literal_dirs, ["etc"]);
    }

    #[test]
    fn literal_dirs_stop_at_glob_syntax_and_exclude_the_file_part() {
        for (relative, expected) in [
            ("*.md", vec![]),
            ("src/**/*.ts", vec!["src"]),
            ("src/lib/main.rs", vec!["src", "lib"]),
            ("a/b*/c/*.rs", vec!["a"]),
            ("{a,b}/c.rs", vec![]),
            ("src/**", vec!["src"]),
        ] {
            assert_eq!(literal_dirs(relative), expected, "{relative}");
        }
    }

    #[test]
    fn could_contain_prunes_only_disagreeing_directories() {
        let literal = vec!["src".to_owned(), "lib".to_owned()];
        for (dir, expected) in [
            ("src", true),
            ("src/lib", true),
            ("src/lib/deep", true),
            ("src/other", false),
            ("docs", false),
        ] {
            assert_eq!(could_contain(&literal, dir), expected, "{dir}");
        }
        assert!(could_contain(&[], "anything/at/all"));
    }

    #[test]
    fn newest_keeps_the_most_recent_and_breaks_ties_by_path() {
        let at = |seconds| SystemTime::UNIX_EPOCH + Duration::from_secs(seconds);
        let mut newest = Newest::new(3);
        for (seconds, path) in [
            (10, "b"),
            (30, "c"),
            (20, "z"),
            (20, "a"),
            (5, "old"),
            (30, "a"),
        ] {
            newest.push(at(seconds), path.to_owned());
        }
        assert_eq!(newest.into_sorted(), ["a", "c", "a"]);
        let mut none = Newest::new(0);
        none.push(at(1), "x".to_owned());
        assert!(none.into_sorted().is_empty());
    }

    #[test]
    fn text_lists_paths_and_notes_truncation() {
        let none = Found {
            newest: vec![],
            total: 0,
        };
        assert_eq!(render_text(&none), "No files found");
        let all = Found {
            newest: vec!["/ws/a".to_owned(), "/ws/b".to_owned()],
            total: 2,
        };
        assert_eq!(render_text(&all), "/ws/a\n/ws/b");
        let cut = Found {
            newest: vec!["/ws/a".to_owned()],
            total: 7,
        };
        assert_eq!(
            render_text(&cut),
            "/ws/a\n(Results are truncated: showing the 1 most recently modified of 7 matching \
             files. Use a more specific pattern or path.)"
        );
    }

    /// A real directory tree: `(relative path, content, mtime in seconds)`.
    fn tree(files: &[(&str, &str, u64)]) -> (tempfile::TempDir, String) {
        let dir = tempfile::tempdir().unwrap();
        for (relative, content, seconds) in files {
            let path = dir.path().join(relative);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, content).unwrap();
            let file = std::fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000 + seconds))
                .unwrap();
        }
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let root = root.to_str().unwrap().to_owned();
        (dir, root)
    }

    fn run(root: &str, pattern: &str, no_ignore: bool) -> Found {
        let pattern = compile(pattern, root).unwrap();
        walk(root, &pattern, no_ignore, &|| false).unwrap()
    }

    fn relative(root: &str, found: &Found) -> Vec<String> {
        found
            .newest
            .iter()
            .map(|path| path.strip_prefix(&format!("{root}/")).unwrap().to_owned())
            .collect()
    }

    #[test]
    fn walk_orders_by_mtime_and_honours_ignore_files() {
        let (_dir, root) = tree(&[
            (".gitignore", "build/\n*.log\n", 1),
            ("old.rs", "", 10),
            ("new.rs", "", 30),
            ("same_b.rs", "", 20),
            ("same_a.rs", "", 20),
            ("src/deep/lib.rs", "", 25),
            ("build/gen.rs", "", 99),
            ("debug.log", "", 99),
            (".hidden/cfg.rs", "", 5),
            (".git/HEAD.rs", "", 99),
        ]);
        let found = run(&root, "**/*.rs", false);
        assert_eq!(
            relative(&root, &found),
            [
                "new.rs",
                "src/deep/lib.rs",
                "same_a.rs",
                "same_b.rs",
                "old.rs",
                ".hidden/cfg.rs"
            ]
        );
        assert_eq!(found.total, 6);
        let all = run(&root, "**/*", true);
        let listed = relative(&root, &all);
        assert!(listed.contains(&"build/gen.rs".to_owned()), "{listed:?}");
        assert!(listed.contains(&"debug.log".to_owned()), "{listed:?}");
        assert!(
            !listed.iter().any(|path| path.starts_with(".git/")),
            "{listed:?}"
        );
        assert_eq!(
            relative(&root, &run(&root, "*.log", false)),
            Vec::<String>::new()
        );
        assert_eq!(
            relative(&root, &run(&root, "*.rs", false)).len(),
            4,
            "top level only"
        );
        assert_eq!(
            relative(&root, &run(&root, "src/**/*.rs", false)),
            ["src/deep/lib.rs"]
        );
    }

    #[test]
    fn walk_lists_regular_files_only_and_caps_results() {
        let files: Vec<(String, u64)> = (0..(MAX_RESULTS as u64 + 20))
            .map(|n| (format!("f{n:03}.txt"), n))
            .collect();
        let spec: Vec<(&str, &str, u64)> = files
            .iter()
            .map(|(name, n)| (name.as_str(), "", *n))
            .collect();
        let (_dir, root) = tree(&spec);
        std::fs::create_dir(format!("{root}/dir.txt")).unwrap();
        std::os::unix::fs::symlink(format!("{root}/f000.txt"), format!("{root}/link.txt")).unwrap();
        let found = run(&root, "*.txt", false);
        assert_eq!(found.total, MAX_RESULTS as u64 + 20);
        assert_eq!(found.newest.len(), MAX_RESULTS);
        assert_eq!(found.newest[0], format!("{root}/f119.txt"));
        assert_eq!(found.newest[MAX_RESULTS - 1], format!("{root}/f020.txt"));
    }

    #[test]
    fn the_search_path_must_be_an_existing_directory() {
        let (_dir, root) = tree(&[("file.txt", "", 0)]);
        check_directory(&root).unwrap();
        let file = check_directory(&format!("{root}/file.txt")).unwrap_err();
        assert_eq!(file.kind, "not_a_directory");
        let missing = check_directory(&format!("{root}/missing")).unwrap_err();
        assert_eq!(missing.kind, "not_found");
    }

    #[test]
    fn walk_stops_when_cancelled() {
        let names: Vec<String> = (0..300).map(|n| format!("f{n}")).collect();
        let spec: Vec<(&str, &str, u64)> =
            names.iter().map(|name| (name.as_str(), "", 0)).collect();
        let (_dir, root) = tree(&spec);
        let pattern = compile("*", &root).unwrap();
        let error = walk(&root, &pattern, false, &|| true).unwrap_err();
        assert_eq!(error.kind, "cancelled");
    }

    #[test]
    fn join_handles_the_root() {
        assert_eq!(join("/", "a/b"), "/a/b");
        assert_eq!(join("/ws", "a/b"), "/ws/a/b");
    }
}
