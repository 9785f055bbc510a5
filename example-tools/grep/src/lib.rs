//! The default `Grep` tool: searches file contents with a regular expression, ripgrep style, built
//! on ripgrep's own crates (`ignore` for the walk, `grep-regex` and `grep-searcher` for matching).
//!
//! The walk is sequential (guests have no threads), never follows symlinks, honours `.gitignore`
//! and `.ignore` files, includes dotfiles and always skips `.git/`. Paths the host hides (operator
//! deny rules) look absent, so they are skipped silently. Files with a NUL byte are binary and are
//! skipped. Memory stays bounded: files are streamed one at a time, only the requested page of
//! output is held, and the page itself is capped at `MAX_OUTPUT_LINES` lines and
//! `MAX_OUTPUT_BYTES` bytes; totals are still counted exactly so paging notes are accurate.

// Native builds exist only for unit tests and do not export the component (see `export!` below),
// so most of the tool is unused there; the wasm build still checks for dead code.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::ErrorKind;
use std::path::Path;
use std::time::SystemTime;

use globset::{GlobBuilder, GlobMatcher};
use grep_matcher::Matcher as _;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkContext, SinkMatch};
use ignore::WalkBuilder;
use ignore::types::{Types, TypesBuilder};
use janua_sdk::{CapabilityClass, Context, Output, Tool, ToolError, files};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// Output lines (or entries) held for one call; more are counted but not returned.
const MAX_OUTPUT_LINES: usize = 100_000;
/// Bytes of output text held for one call, so long lines cannot exhaust guest memory.
const MAX_OUTPUT_BYTES: usize = 8 * 1024 * 1024;
/// Files ranked by modification time in `files_with_matches` mode (bounds the heap).
const MAX_RANKED_FILES: u64 = 200_000;
/// Characters kept of one output line; the rest is replaced by [`LINE_CUT_MARKER`].
const MAX_LINE_CHARS: usize = 2000;
const LINE_CUT_MARKER: &str = "… [line cut]";
/// Largest `-A`/`-B`/`-C` accepted; context is buffered, so it must stay modest.
const MAX_CONTEXT: u64 = 10_000;
/// Heap one file's search may use (its longest line, or the whole file when multiline).
const SEARCH_HEAP_LIMIT: usize = 64 * 1024 * 1024;
/// Compiled-regex and lazy-DFA budgets: ripgrep's defaults assume far more memory than a guest has.
const REGEX_SIZE_LIMIT: usize = 32 * 1024 * 1024;
/// Walk entries between two checks of the host's cancellation flag.
const CANCEL_CHECK_EVERY: u64 = 256;

/// What `Grep` returns.
#[derive(Deserialize, JsonSchema, Clone, Copy, Debug, Default, PartialEq, Eq)]
#[serde(rename_all = "snake_case")]
pub enum OutputMode {
    /// Paths of the files that match, newest first.
    #[default]
    FilesWithMatches,
    /// The matching lines, as `path:line:text`.
    Content,
    /// The number of matches in each file, as `path:count`.
    Count,
}

impl OutputMode {
    fn as_str(self) -> &'static str {
        match self {
            OutputMode::FilesWithMatches => "files_with_matches",
            OutputMode::Content => "content",
            OutputMode::Count => "count",
        }
    }
}

/// Input of `Grep`.
#[derive(Deserialize, JsonSchema, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct GrepInput {
    /// The regular expression to search file contents for, in ripgrep (Rust regex) syntax, e.g.
    /// `log.*Error` or `fn\s+\w+`. Escape regex metacharacters to find them literally:
    /// `interface\{\}` finds `interface{}`.
    pub pattern: String,
    /// File or directory to search in: absolute, or relative to the workspace. Defaults to the
    /// workspace.
    pub path: Option<String>,
    /// Glob that files must match, e.g. `*.js` or `*.{ts,tsx}`. A glob without `/` is matched
    /// against the file name, one with `/` against the path relative to the search directory.
    /// Several globs may be separated by spaces or commas; prefix one with `!` to exclude.
    pub glob: Option<String>,
    /// File type to search, by ripgrep type name, e.g. `rust`, `js`, `ts`, `py`, `go`, `java`.
    /// More efficient than `glob` for standard file types.
    #[serde(rename = "type")]
    pub file_type: Option<String>,
    /// Output mode: `files_with_matches` lists matching file paths (the default), `content`
    /// shows matching lines (supports `-n`, `-A`, `-B`, `-C`), `count` shows match counts per file.
    #[serde(default)]
    pub output_mode: OutputMode,
    /// Case-insensitive search.
    #[serde(rename = "-i", default)]
    pub case_insensitive: bool,
    /// Show line numbers in the output. Only with `output_mode: "content"`; defaults to true.
    #[serde(rename = "-n")]
    pub line_numbers: Option<bool>,
    /// Number of lines to show after each match. Only with `output_mode: "content"`.
    #[serde(rename = "-A")]
    pub after: Option<u64>,
    /// Number of lines to show before each match. Only with `output_mode: "content"`.
    #[serde(rename = "-B")]
    pub before: Option<u64>,
    /// Number of lines to show before and after each match (`-A`/`-B` override it). Only with
    /// `output_mode: "content"`.
    #[serde(rename = "-C")]
    pub context: Option<u64>,
    /// Limit the output to the first N lines (content), files (files_with_matches) or entries
    /// (count), like `| head -N`. Omit it, or pass 0, for no limit.
    pub head_limit: Option<u64>,
    /// Skip the first N lines/files/entries before applying `head_limit`, like
    /// `| tail -n +N+1 | head -N`. Defaults to 0.
    #[serde(default)]
    pub offset: u64,
    /// Multiline mode: `.` matches newlines and patterns may span lines, e.g.
    /// `struct \{[\s\S]*?field`. Defaults to false.
    #[serde(default)]
    pub multiline: bool,
}

struct Grep;

impl Tool for Grep {
    type Input = GrepInput;
    const NAME: &'static str = "Grep";
    const DESCRIPTION: &'static str = "A powerful search tool built on ripgrep's engine. Searches \
        file contents with a regular expression (ripgrep syntax: `log.*Error`, `function\\s+\\w+`; \
        escape literal braces, e.g. `interface\\{\\}`). Filter files with `glob` (e.g. `*.js`, \
        `*.{ts,tsx}`) or `type` (e.g. `js`, `py`, `rust`). Output modes: `files_with_matches` \
        (default) lists matching files newest first, `content` shows matching lines with optional \
        context (`-A`, `-B`, `-C`) and line numbers (`-n`), `count` shows match counts per file. \
        Page long results with `head_limit` and `offset`. Patterns match within single lines \
        unless `multiline` is true. Respects `.gitignore`, includes dotfiles, skips `.git/` and \
        binary files. Use this instead of running grep or rg in a shell.";
    const CLASS: CapabilityClass = CapabilityClass::Read;
    const READ_ONLY: bool = true;
    const CONCURRENCY_SAFE: bool = true;
    const RULE_FIELD: Option<&'static str> = Some("path");

    fn call(input: GrepInput, ctx: &Context) -> Result<Output, ToolError> {
        grep(input, ctx, &janua_sdk::cancelled)
    }
}

impl janua_sdk::Validate for Grep {
    fn validate(input: &GrepInput, _ctx: &Context) -> Result<(), String> {
        check_input(input)?;
        build_matcher(&input.pattern, input.case_insensitive, input.multiline)?;
        if let Some(glob) = &input.glob {
            GlobFilter::new(glob)?;
        }
        if let Some(name) = &input.file_type {
            build_types(name)?;
        }
        Ok(())
    }
}

// Only wasm builds export the component: natively (unit tests) the exported symbol names, which
// contain `:`, cannot go into a linker version script, so the native cdylib would not link.
#[cfg(target_arch = "wasm32")]
janua_sdk::export!(Grep);

/// Performs a call. `cancelled` is the host's flag, passed in so unit tests can search real
/// directories natively.
fn grep(
    input: GrepInput,
    ctx: &Context,
    cancelled: &dyn Fn() -> bool,
) -> Result<Output, ToolError> {
    let invalid = |message| ToolError::new("invalid_pattern", message);
    let matcher =
        build_matcher(&input.pattern, input.case_insensitive, input.multiline).map_err(invalid)?;
    let glob = input
        .glob
        .as_deref()
        .map(GlobFilter::new)
        .transpose()
        .map_err(invalid)?;
    let types = input
        .file_type
        .as_deref()
        .map(build_types)
        .transpose()
        .map_err(invalid)?;
    let root = match &input.path {
        Some(path) => ctx.resolve_path(path),
        None => ctx.resolve_path(&ctx.cwd),
    };
    let metadata =
        std::fs::metadata(&root).map_err(|error| files::io_error(&root, "read", &error))?;
    if !metadata.is_dir() && !metadata.is_file() {
        return Err(ToolError::new(
            "not_a_regular_file",
            format!("{root} is not a regular file or directory (a FIFO, socket or device)"),
        ));
    }
    let options = Options::from_input(&input);
    let mut search = Search::new(options, matcher);
    let filter = FileFilter { glob, types };
    search.run(&root, metadata.is_dir(), &filter, cancelled)?;
    Ok(search.into_output(metadata.is_dir()))
}

/// Checks what the schema cannot express and needs no files.
fn check_input(input: &GrepInput) -> Result<(), String> {
    if input.pattern.is_empty() {
        return Err("pattern is empty; give a regular expression to search for".to_owned());
    }
    if let Some(path) = &input.path
        && path.trim().is_empty()
    {
        return Err("path is empty; omit it to search the workspace".to_owned());
    }
    if input
        .glob
        .as_deref()
        .is_some_and(|glob| glob.trim().is_empty())
    {
        return Err("glob is empty; omit it to search every file".to_owned());
    }
    // -n, -A, -B and -C outside content mode are ignored, as Claude Code ignores them: models send
    // them with the default mode, and refusing would cost a retry for nothing.
    for (name, value) in [
        ("-A", input.after),
        ("-B", input.before),
        ("-C", input.context),
    ] {
        if value.is_some_and(|lines| lines > MAX_CONTEXT) {
            return Err(format!(
                "{name} is larger than {MAX_CONTEXT} lines; ask for less context, or Read the file"
            ));
        }
    }
    Ok(())
}

/// Builds the matcher the way ripgrep does: `^`/`$` match at line boundaries, and unless
/// multiline is on, matches never span a line break (which lets the searcher go line by line).
fn build_matcher(
    pattern: &str,
    case_insensitive: bool,
    multiline: bool,
) -> Result<RegexMatcher, String> {
    let build = |multiline: bool| {
        let mut builder = RegexMatcherBuilder::new();
        builder
            .case_insensitive(case_insensitive)
            .multi_line(true)
            .dot_matches_new_line(multiline)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_SIZE_LIMIT)
            // Binary detection stops at NUL, so a pattern needing NUL could never match.
            .ban_byte(Some(0));
        if !multiline {
            builder.line_terminator(Some(b'\n'));
        }
        builder.build(pattern)
    };
    build(multiline).map_err(|error| {
        let hint = if !multiline && build(true).is_ok() {
            "; the pattern can match a line break, so set multiline to true to search across lines"
        } else {
            ""
        };
        format!("invalid regular expression {pattern:?}: {error}{hint}")
    })
}

/// The selected ripgrep file type; unknown names list valid ones.
fn build_types(name: &str) -> Result<Types, String> {
    let mut builder = TypesBuilder::new();
    builder.add_defaults();
    let known: Vec<String> = builder
        .definitions()
        .iter()
        .map(|def| def.name().to_owned())
        .collect();
    if !known.iter().any(|known| known == name) {
        return Err(unknown_type_message(name, &known));
    }
    builder.select(name);
    builder
        .build()
        .map_err(|error| format!("invalid file type {name:?}: {error}"))
}

fn unknown_type_message(name: &str, known: &[String]) -> String {
    const COMMON: [&str; 12] = [
        "rust", "js", "ts", "py", "go", "java", "c", "cpp", "md", "json", "yaml", "sh",
    ];
    let lower = name.to_ascii_lowercase();
    let mut suggestions: Vec<&str> = known
        .iter()
        .map(String::as_str)
        .filter(|known| {
            !lower.is_empty() && (known.contains(lower.as_str()) || lower.contains(*known))
        })
        .take(8)
        .collect();
    for common in COMMON {
        if !suggestions.contains(&common) {
            suggestions.push(common);
        }
    }
    format!(
        "unknown file type {name:?}; use a ripgrep type name such as {}, or use glob instead",
        suggestions.join(", ")
    )
}

/// The `glob` filter: include and exclude globs, matched against the file name or, for globs
/// with a `/`, against the path relative to the search directory.
#[derive(Debug)]
struct GlobFilter {
    include: Vec<(GlobMatcher, bool)>,
    exclude: Vec<(GlobMatcher, bool)>,
}

impl GlobFilter {
    fn new(globs: &str) -> Result<Self, String> {
        let mut filter = GlobFilter {
            include: Vec::new(),
            exclude: Vec::new(),
        };
        for glob in split_globs(globs) {
            let (negated, glob) = match glob.strip_prefix('!') {
                Some(rest) => (true, rest),
                None => (false, glob),
            };
            let glob = glob.strip_prefix("./").unwrap_or(glob);
            let by_path = glob.contains('/');
            let glob = glob.strip_prefix('/').unwrap_or(glob);
            if glob.is_empty() {
                return Err(format!("glob {globs:?} has an empty pattern"));
            }
            let matcher = GlobBuilder::new(glob)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|error| format!("invalid glob {glob:?}: {}", error.kind()))?
                .compile_matcher();
            if negated {
                filter.exclude.push((matcher, by_path));
            } else {
                filter.include.push((matcher, by_path));
            }
        }
        Ok(filter)
    }

    fn accepts(&self, relative: &str) -> bool {
        let name = relative.rsplit('/').next().unwrap_or(relative);
        let hit = |(matcher, by_path): &(GlobMatcher, bool)| {
            matcher.is_match(if *by_path { relative } else { name })
        };
        !self.exclude.iter().any(hit) && (self.include.is_empty() || self.include.iter().any(hit))
    }
}

/// Splits a `glob` field into globs: whitespace separates globs, and so do commas outside braces
/// (`*.ts,*.tsx` is two globs; `*.{ts,tsx}` is one).
fn split_globs(globs: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    for word in globs.split_whitespace() {
        let mut depth = 0usize;
        let mut start = 0;
        for (index, character) in word.char_indices() {
            match character {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                ',' if depth == 0 => {
                    parts.push(&word[start..index]);
                    start = index + 1;
                }
                _ => {}
            }
        }
        parts.push(&word[start..]);
    }
    parts.retain(|part| !part.is_empty());
    parts
}

/// Filters applied to files found by walking (never to a file the call names explicitly).
struct FileFilter {
    glob: Option<GlobFilter>,
    types: Option<Types>,
}

impl FileFilter {
    fn accepts(&self, relative: &str) -> bool {
        if let Some(types) = &self.types
            && !types.matched(relative, false).is_whitelist()
        {
            return false;
        }
        self.glob.as_ref().is_none_or(|glob| glob.accepts(relative))
    }
}

/// The call's settings once defaults are applied.
#[derive(Debug, Clone, Copy)]
struct Options {
    mode: OutputMode,
    line_numbers: bool,
    before: usize,
    after: usize,
    multiline: bool,
    page: Page,
}

impl Options {
    fn from_input(input: &GrepInput) -> Self {
        let lines = |value: Option<u64>| usize::try_from(value.unwrap_or(0)).unwrap_or(usize::MAX);
        Self {
            mode: input.output_mode,
            line_numbers: input.line_numbers.unwrap_or(true),
            before: lines(input.before.or(input.context)),
            after: lines(input.after.or(input.context)),
            multiline: input.multiline,
            page: Page {
                offset: input.offset,
                limit: input.head_limit.filter(|&limit| limit > 0),
            },
        }
    }
}

/// The slice of output entries the caller asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Page {
    offset: u64,
    limit: Option<u64>,
}

impl Page {
    /// True when the entry at `index` (0-based, over all output) falls in the page.
    fn contains(&self, index: u64) -> bool {
        index >= self.offset && self.limit.is_none_or(|limit| index - self.offset < limit)
    }
}

/// Output entries of the page, plus the count of all entries.
#[derive(Debug, Default)]
struct Collector {
    page: Option<Page>,
    total: u64,
    kept: Vec<String>,
    kept_bytes: usize,
    /// True once an entry inside the page was dropped by the memory caps.
    capped: bool,
}

/// A collector's state before a file, restored if the file turns out to be binary.
#[derive(Debug, Clone, Copy)]
struct Checkpoint {
    total: u64,
    kept: usize,
    kept_bytes: usize,
    capped: bool,
}

impl Collector {
    fn new(page: Page) -> Self {
        Self {
            page: Some(page),
            ..Self::default()
        }
    }

    /// Counts one entry and keeps it when it is inside the page and the caps allow; `make` runs
    /// only for kept entries.
    fn offer(&mut self, make: impl FnOnce() -> String) {
        let index = self.total;
        self.total += 1;
        if !self.page.is_some_and(|page| page.contains(index)) {
            return;
        }
        if self.capped || self.kept.len() >= MAX_OUTPUT_LINES {
            self.capped = true;
            return;
        }
        let entry = make();
        if self.kept_bytes + entry.len() + 1 > MAX_OUTPUT_BYTES {
            self.capped = true;
            return;
        }
        self.kept_bytes += entry.len() + 1;
        self.kept.push(entry);
    }

    fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            total: self.total,
            kept: self.kept.len(),
            kept_bytes: self.kept_bytes,
            capped: self.capped,
        }
    }

    fn restore(&mut self, checkpoint: Checkpoint) {
        self.total = checkpoint.total;
        self.kept.truncate(checkpoint.kept);
        self.kept_bytes = checkpoint.kept_bytes;
        self.capped = checkpoint.capped;
    }
}

/// Keeps the `capacity` newest files (ties by path) without holding the rest.
struct Newest {
    capacity: usize,
    // A max-heap whose top is the worst entry kept, so it is the one evicted.
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

/// One call's search state across files.
struct Search {
    options: Options,
    matcher: RegexMatcher,
    searcher: Searcher,
    /// Content lines or count entries.
    collector: Collector,
    /// Matching files for `files_with_matches`.
    newest: Newest,
    files_matched: u64,
    occurrences: u64,
    /// The explicitly named file was binary, so it was not searched.
    root_was_binary: bool,
    /// Files that could not be searched for reasons other than being hidden or gone.
    failed: u64,
    first_failure: Option<String>,
}

impl Search {
    fn new(options: Options, matcher: RegexMatcher) -> Self {
        let searcher = SearcherBuilder::new()
            .line_number(true)
            .multi_line(options.multiline)
            .before_context(if options.mode == OutputMode::Content {
                options.before
            } else {
                0
            })
            .after_context(if options.mode == OutputMode::Content {
                options.after
            } else {
                0
            })
            .binary_detection(BinaryDetection::quit(0))
            .heap_limit(Some(SEARCH_HEAP_LIMIT))
            .build();
        let page = options.page;
        let ranked = page
            .offset
            .saturating_add(
                page.limit
                    .unwrap_or(MAX_OUTPUT_LINES as u64)
                    .min(MAX_OUTPUT_LINES as u64),
            )
            .min(MAX_RANKED_FILES);
        Self {
            options,
            matcher,
            searcher,
            collector: Collector::new(page),
            newest: Newest::new(usize::try_from(ranked).unwrap_or(usize::MAX)),
            files_matched: 0,
            occurrences: 0,
            root_was_binary: false,
            failed: 0,
            first_failure: None,
        }
    }

    fn run(
        &mut self,
        root: &str,
        is_dir: bool,
        filter: &FileFilter,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<(), ToolError> {
        if !is_dir {
            let binary = self.search_file(root)?;
            self.root_was_binary = binary;
            return Ok(());
        }
        let root_path = Path::new(root);
        let mut builder = WalkBuilder::new(root_path);
        builder
            .standard_filters(true)
            .hidden(false)
            .require_git(false)
            .follow_links(false)
            .sort_by_file_name(|a, b| a.cmp(b))
            .filter_entry(|entry| entry.file_name() != ".git");
        for (seen, entry) in builder.build().enumerate() {
            if seen as u64 % CANCEL_CHECK_EVERY == CANCEL_CHECK_EVERY - 1 && cancelled() {
                return Err(ToolError::new("cancelled", "the search was cancelled"));
            }
            // Hidden (denied) and vanished paths surface as errors; they are simply not searched.
            let Ok(entry) = entry else { continue };
            // Symlinks are never followed, and only regular files are searched.
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                continue;
            }
            let Some(path) = entry.path().to_str() else {
                continue;
            };
            let relative = entry
                .path()
                .strip_prefix(root_path)
                .ok()
                .and_then(Path::to_str)
                .unwrap_or(path);
            if !filter.accepts(relative) {
                continue;
            }
            self.search_file(path)?;
        }
        Ok(())
    }

    /// Searches one file and folds its results in; returns true when it was skipped as binary.
    fn search_file(&mut self, path: &str) -> Result<bool, ToolError> {
        let checkpoint = self.collector.checkpoint();
        let mut sink = FileSink {
            options: self.options,
            matcher: &self.matcher,
            path,
            collector: &mut self.collector,
            separate_from_previous: checkpoint.total > 0,
            started: false,
            matched: false,
            occurrences: 0,
            binary: false,
        };
        let result = self.searcher.search_path(&self.matcher, path, &mut sink);
        let FileSink {
            matched,
            occurrences,
            binary,
            ..
        } = sink;
        if let Err(error) = result {
            self.collector.restore(checkpoint);
            if !matches!(
                error.kind(),
                ErrorKind::NotFound | ErrorKind::PermissionDenied
            ) {
                self.failed += 1;
                self.first_failure
                    .get_or_insert_with(|| format!("{path}: {error}"));
            }
            return Ok(false);
        }
        if binary {
            self.collector.restore(checkpoint);
            return Ok(true);
        }
        if !matched {
            return Ok(false);
        }
        self.files_matched += 1;
        self.occurrences += occurrences;
        match self.options.mode {
            OutputMode::FilesWithMatches => {
                let modified = std::fs::metadata(path)
                    .and_then(|metadata| metadata.modified())
                    .unwrap_or(SystemTime::UNIX_EPOCH);
                self.newest.push(modified, path.to_owned());
            }
            OutputMode::Count => self.collector.offer(|| format!("{path}:{occurrences}")),
            OutputMode::Content => {}
        }
        Ok(false)
    }

    fn into_output(self, is_dir: bool) -> Output {
        let page = self.options.page;
        let mut fields = Map::new();
        fields.insert("mode".to_owned(), json!(self.options.mode.as_str()));
        let (body, shown, total, capped) = match self.options.mode {
            OutputMode::FilesWithMatches => {
                let skip = usize::try_from(page.offset).unwrap_or(usize::MAX);
                let filenames: Vec<String> =
                    self.newest.into_sorted().into_iter().skip(skip).collect();
                let shown = filenames.len() as u64;
                let capped = page.limit.is_none_or(|limit| limit > shown)
                    && page.offset.saturating_add(shown) < self.files_matched;
                let text = render_files(&filenames, self.files_matched);
                fields.insert("numFiles".to_owned(), json!(shown));
                fields.insert("totalFiles".to_owned(), json!(self.files_matched));
                fields.insert("filenames".to_owned(), json!(filenames));
                (text, shown, self.files_matched, capped)
            }
            OutputMode::Content => {
                let shown = self.collector.kept.len() as u64;
                let content = self.collector.kept.join("\n");
                let text = if self.collector.total == 0 {
                    "No matches found".to_owned()
                } else {
                    // Empty when offset is past the end; the paging note then explains.
                    content.clone()
                };
                fields.insert("numFiles".to_owned(), json!(self.files_matched));
                fields.insert("content".to_owned(), json!(content));
                fields.insert("numLines".to_owned(), json!(shown));
                (text, shown, self.collector.total, self.collector.capped)
            }
            OutputMode::Count => {
                let shown = self.collector.kept.len() as u64;
                let content = self.collector.kept.join("\n");
                let text = render_count(&content, self.occurrences, self.files_matched);
                fields.insert("numFiles".to_owned(), json!(shown));
                fields.insert("totalFiles".to_owned(), json!(self.files_matched));
                fields.insert("content".to_owned(), json!(content));
                fields.insert("numMatches".to_owned(), json!(self.occurrences));
                (text, shown, self.collector.total, self.collector.capped)
            }
        };
        if let Some(limit) = page.limit
            && total > page.offset.saturating_add(limit)
        {
            fields.insert("appliedLimit".to_owned(), json!(limit));
        }
        if page.offset > 0 {
            fields.insert("appliedOffset".to_owned(), json!(page.offset));
        }
        let mut parts = vec![body];
        parts.extend(paging_note(page.offset, shown, total, capped));
        if !is_dir && self.root_was_binary {
            parts.push(
                "(The file is binary (it contains a NUL byte), so it was not searched.)".to_owned(),
            );
        }
        if let Some(failure) = self.first_failure {
            parts.push(format!(
                "({} could not be searched, e.g. {failure})",
                plural(self.failed, "file", "files")
            ));
        }
        parts.retain(|part| !part.is_empty());
        Output::text(parts.join("\n")).with_structured(Value::Object(fields))
    }
}

/// Receives one file's matches and context lines from the searcher.
struct FileSink<'a> {
    options: Options,
    matcher: &'a RegexMatcher,
    path: &'a str,
    collector: &'a mut Collector,
    /// Output from earlier files precedes this one, so a context separator goes first.
    separate_from_previous: bool,
    started: bool,
    matched: bool,
    occurrences: u64,
    binary: bool,
}

impl FileSink<'_> {
    fn context_enabled(&self) -> bool {
        self.options.before > 0 || self.options.after > 0
    }

    fn emit(&mut self, separator: char, number: Option<u64>, line: &[u8]) {
        if !self.started {
            self.started = true;
            if self.separate_from_previous && self.context_enabled() {
                self.collector.offer(|| "--".to_owned());
            }
        }
        let number = number.filter(|_| self.options.line_numbers);
        let path = self.path;
        self.collector
            .offer(|| format_line(path, separator, number, line));
    }
}

impl Sink for &mut FileSink<'_> {
    type Error = std::io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, Self::Error> {
        self.matched = true;
        match self.options.mode {
            // One match is enough to list the file.
            OutputMode::FilesWithMatches => Ok(false),
            OutputMode::Count => {
                let mut found = 0u64;
                self.matcher
                    .find_iter(mat.bytes(), |_| {
                        found += 1;
                        true
                    })
                    .map_err(std::io::Error::other)?;
                self.occurrences += found.max(1);
                Ok(true)
            }
            OutputMode::Content => {
                let first = mat.line_number();
                for (index, line) in mat.lines().enumerate() {
                    let number = first.map(|first| first + index as u64);
                    self.emit(':', number, line);
                }
                Ok(true)
            }
        }
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, Self::Error> {
        self.emit('-', context.line_number(), context.bytes());
        Ok(true)
    }

    fn context_break(&mut self, _searcher: &Searcher) -> Result<bool, Self::Error> {
        self.collector.offer(|| "--".to_owned());
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, Self::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// One output line: `path:12:text` for matches and `path-12-text` for context (no number without
/// `-n`), with the line terminator removed and the text cut at [`MAX_LINE_CHARS`].
fn format_line(path: &str, separator: char, number: Option<u64>, line: &[u8]) -> String {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let text = cut_line(&String::from_utf8_lossy(line));
    match number {
        Some(number) => format!("{path}{separator}{number}{separator}{text}"),
        None => format!("{path}{separator}{text}"),
    }
}

fn cut_line(text: &str) -> String {
    match text.char_indices().nth(MAX_LINE_CHARS) {
        Some((index, _)) => format!("{}{LINE_CUT_MARKER}", &text[..index]),
        None => text.to_owned(),
    }
}

fn plural(count: u64, one: &str, many: &str) -> String {
    format!("{count} {}", if count == 1 { one } else { many })
}

fn render_files(filenames: &[String], total: u64) -> String {
    if total == 0 {
        return "No matches found".to_owned();
    }
    let mut text = format!("Found {}", plural(total, "file", "files"));
    for name in filenames {
        text.push('\n');
        text.push_str(name);
    }
    text
}

fn render_count(content: &str, occurrences: u64, files: u64) -> String {
    if files == 0 {
        return "No matches found".to_owned();
    }
    let summary = format!(
        "Found {} across {}",
        plural(occurrences, "total occurrence", "total occurrences"),
        plural(files, "file", "files")
    );
    if content.is_empty() {
        summary
    } else {
        format!("{content}\n{summary}")
    }
}

/// The note saying which slice of the output this is, when offset, head_limit or the memory caps
/// left anything out.
fn paging_note(offset: u64, shown: u64, total: u64, capped: bool) -> Option<String> {
    if total == 0 || (offset == 0 && shown == total) {
        return None;
    }
    if shown == 0 {
        return Some(if offset >= total {
            format!("(Offset {offset} is past the end: there are {total} entries)")
        } else {
            format!(
                "(Offset {offset} is beyond what one call can page through; narrow the search \
                 with path, glob or type)"
            )
        });
    }
    let last = offset + shown;
    let mut note = format!("(Showing entries {}-{last} of {total}", offset + 1);
    if last < total {
        note.push_str("; use offset to see more");
    }
    if capped {
        note.push_str(&format!(
            ". Output stops at {MAX_OUTPUT_LINES} lines or {} MiB per call",
            MAX_OUTPUT_BYTES / (1024 * 1024)
        ));
    }
    note.push(')');
    Some(note)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    fn input(value: Value) -> GrepInput {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn input_uses_claude_code_field_names_and_defaults() {
        let parsed = input(json!({
            "pattern": "x", "-i": true, "-n": false, "-A": 1, "-B": 2, "-C": 3,
            "output_mode": "content", "type": "rust", "head_limit": 5, "offset": 2,
            "multiline": true, "glob": "*.rs", "path": "src"
        }));
        assert!(parsed.case_insensitive && parsed.multiline);
        assert_eq!(parsed.output_mode, OutputMode::Content);
        assert_eq!(parsed.file_type.as_deref(), Some("rust"));
        let defaults = input(json!({"pattern": "x"}));
        assert_eq!(defaults.output_mode, OutputMode::FilesWithMatches);
        assert_eq!(defaults.offset, 0);
        assert!(serde_json::from_value::<GrepInput>(json!({"pattern": "x", "bogus": 1})).is_err());
        assert!(serde_json::from_value::<GrepInput>(json!({"pattern": "x", "-A": -1})).is_err());
    }

    #[test]
    fn schema_names_fields_like_claude_code_and_documents_each() {
        let schema = serde_json::to_value(schemars::schema_for!(GrepInput)).unwrap();
        let properties = schema["properties"].as_object().unwrap();
        let mut names: Vec<&str> = properties.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            [
                "-A",
                "-B",
                "-C",
                "-i",
                "-n",
                "glob",
                "head_limit",
                "multiline",
                "offset",
                "output_mode",
                "path",
                "pattern",
                "type"
            ]
        );
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
    fn context_flags_combine_like_ripgrep() {
        for (flags, before, after) in [
            (json!({"-C": 3}), 3, 3),
            (json!({"-C": 3, "-A": 1}), 3, 1),
            (json!({"-C": 3, "-B": 0}), 0, 3),
            (json!({"-A": 2}), 0, 2),
            (json!({}), 0, 0),
        ] {
            let mut value = flags.clone();
            value["pattern"] = json!("x");
            value["output_mode"] = json!("content");
            let options = Options::from_input(&input(value));
            assert_eq!((options.before, options.after), (before, after), "{flags}");
        }
        let options = Options::from_input(&input(json!({"pattern": "x", "head_limit": 0})));
        assert_eq!(options.page.limit, None, "head_limit 0 means no limit");
        assert!(options.line_numbers);
    }

    #[test]
    fn validation_explains_what_to_fix() {
        for (value, fragment) in [
            (json!({"pattern": ""}), "pattern is empty"),
            (json!({"pattern": "x", "path": " "}), "path is empty"),
            (json!({"pattern": "x", "glob": ""}), "glob is empty"),
            (
                json!({"pattern": "x", "output_mode": "content", "-C": 20000}),
                "-C is larger than 10000 lines",
            ),
        ] {
            let error = check_input(&input(value.clone())).unwrap_err();
            assert!(error.contains(fragment), "{value}: {error}");
        }
        check_input(&input(
            json!({"pattern": "x", "output_mode": "count", "-A": 1, "-n": true}),
        ))
        .expect("context flags outside content mode are ignored");
        check_input(&input(
            json!({"pattern": "x", "output_mode": "content", "-n": false, "-C": 2}),
        ))
        .unwrap();
    }

    #[test]
    fn matcher_errors_name_the_problem() {
        for (pattern, multiline, fragment) in [
            (
                "(unclosed",
                false,
                "invalid regular expression \"(unclosed\"",
            ),
            ("a\\nb", false, "set multiline to true"),
            ("[z-a]", false, "invalid regular expression"),
            ("a\\x00", false, "invalid regular expression"),
        ] {
            let error = build_matcher(pattern, false, multiline).unwrap_err();
            assert!(error.contains(fragment), "{pattern}: {error}");
        }
        build_matcher("a\\nb", false, true).unwrap();
        let insensitive = build_matcher("hello", true, false).unwrap();
        assert!(insensitive.is_match(b"say HeLLo").unwrap());
        let anchored = build_matcher("^fn", false, false).unwrap();
        let mut lines = 0;
        anchored
            .find_iter(b"fn a\nfn b\n  fn c\n", |_| {
                lines += 1;
                true
            })
            .unwrap();
        assert_eq!(lines, 2, "^ anchors at every line start");
    }

    #[test]
    fn types_resolve_and_unknown_types_suggest_names() {
        let rust = build_types("rust").unwrap();
        assert!(rust.matched("src/main.rs", false).is_whitelist());
        assert!(!rust.matched("main.py", false).is_whitelist());
        let error = build_types("rustlang").unwrap_err();
        assert!(
            error.starts_with("unknown file type \"rustlang\""),
            "{error}"
        );
        assert!(error.contains("rust") && error.contains("py"), "{error}");
    }

    #[test]
    fn glob_filters_match_names_or_relative_paths() {
        for (globs, path, expected) in [
            ("*.js", "a.js", true),
            ("*.js", "deep/dir/a.js", true),
            ("*.js", "a.ts", false),
            ("*.{ts,tsx}", "src/a.tsx", true),
            ("*.ts,*.tsx", "src/a.tsx", true),
            ("*.ts *.tsx", "src/a.ts", true),
            ("src/*.rs", "src/a.rs", true),
            ("src/*.rs", "src/x/a.rs", false),
            ("src/**/*.rs", "src/x/a.rs", true),
            ("src/*.rs", "lib/src/a.rs", false),
            ("!*.min.js", "a.min.js", false),
            ("!*.min.js", "a.js", true),
            ("*.js !*.min.js", "a.min.js", false),
            ("*.js !*.min.js", "a.js", true),
            ("./src/*.rs", "src/a.rs", true),
        ] {
            let filter = GlobFilter::new(globs).unwrap();
            assert_eq!(filter.accepts(path), expected, "{globs} vs {path}");
        }
        let error = GlobFilter::new("src/[a").unwrap_err();
        assert!(error.contains("invalid glob \"src/[a\""), "{error}");
        assert!(GlobFilter::new("!").is_err());
    }

    #[test]
    fn split_globs_respects_braces() {
        assert_eq!(
            split_globs("*.{ts,tsx} a,b  c"),
            ["*.{ts,tsx}", "a", "b", "c"]
        );
        assert_eq!(split_globs(" , "), Vec::<&str>::new());
    }

    #[test]
    fn collector_keeps_only_the_page_and_rolls_back() {
        let mut collector = Collector::new(Page {
            offset: 2,
            limit: Some(2),
        });
        for entry in ["a", "b", "c", "d", "e"] {
            collector.offer(|| entry.to_owned());
        }
        assert_eq!(collector.kept, ["c", "d"]);
        assert_eq!(collector.total, 5);
        assert!(!collector.capped);
        let checkpoint = collector.checkpoint();
        collector.offer(|| "f".to_owned());
        collector.restore(checkpoint);
        assert_eq!(collector.total, 5);

        let mut unlimited = Collector::new(Page {
            offset: 0,
            limit: None,
        });
        for _ in 0..MAX_OUTPUT_LINES + 5 {
            unlimited.offer(String::new);
        }
        assert_eq!(unlimited.kept.len(), MAX_OUTPUT_LINES);
        assert_eq!(unlimited.total, MAX_OUTPUT_LINES as u64 + 5);
        assert!(unlimited.capped);
    }

    #[test]
    fn lines_are_formatted_like_ripgrep_and_cut() {
        for (separator, number, line, expected) in [
            (':', Some(3), &b"hit\n"[..], "/ws/a:3:hit"),
            ('-', Some(4), b"ctx\r\n", "/ws/a-4-ctx"),
            (':', None, b"hit", "/ws/a:hit"),
            ('-', None, b"ctx\n", "/ws/a-ctx"),
            (':', Some(1), b"bad \xff byte", "/ws/a:1:bad \u{fffd} byte"),
        ] {
            assert_eq!(format_line("/ws/a", separator, number, line), expected);
        }
        let long = "é".repeat(MAX_LINE_CHARS + 10);
        let cut = cut_line(&long);
        assert_eq!(
            cut.chars().count(),
            MAX_LINE_CHARS + LINE_CUT_MARKER.chars().count()
        );
        assert!(cut.ends_with("… [line cut]"));
        assert_eq!(cut_line("short"), "short");
    }

    #[test]
    fn summaries_and_paging_notes_are_exact() {
        assert_eq!(render_files(&[], 0), "No matches found");
        assert_eq!(render_files(&["/a".to_owned()], 1), "Found 1 file\n/a");
        assert_eq!(
            render_files(&["/a".to_owned(), "/b".to_owned()], 5),
            "Found 5 files\n/a\n/b"
        );
        assert_eq!(render_count("", 0, 0), "No matches found");
        assert_eq!(
            render_count("/a:2\n/b:1", 3, 2),
            "/a:2\n/b:1\nFound 3 total occurrences across 2 files"
        );
        assert_eq!(
            render_count("/a:1", 1, 1),
            "/a:1\nFound 1 total occurrence across 1 file"
        );
        for (offset, shown, total, capped, expected) in [
            (0, 5, 5, false, None),
            (0, 0, 0, false, None),
            (
                10,
                10,
                57,
                false,
                Some("(Showing entries 11-20 of 57; use offset to see more)"),
            ),
            (50, 7, 57, false, Some("(Showing entries 51-57 of 57)")),
            (
                0,
                10,
                57,
                false,
                Some("(Showing entries 1-10 of 57; use offset to see more)"),
            ),
            (
                60,
                0,
                57,
                false,
                Some("(Offset 60 is past the end: there are 57 entries)"),
            ),
            (
                0,
                100_000,
                100_005,
                true,
                Some(
                    "(Showing entries 1-100000 of 100005; use offset to see more. Output stops at \
                     100000 lines or 8 MiB per call)",
                ),
            ),
        ] {
            assert_eq!(
                paging_note(offset, shown, total, capped).as_deref(),
                expected,
                "{offset} {shown} {total}"
            );
        }
    }

    /// A real directory tree: `(relative path, content, mtime in seconds)`.
    fn tree(files: &[(&str, &[u8], u64)]) -> (tempfile::TempDir, String) {
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

    fn context(root: &str) -> Context {
        Context {
            call_id: "toolu_test".to_owned(),
            session_id: "session".to_owned(),
            cwd: root.to_owned(),
            deadline_ms: 30_000,
            plugin_data: None,
            tmp: None,
        }
    }

    /// Runs a call natively; returns the text with `root/` shortened to `./` for readability.
    fn run(root: &str, value: Value) -> (String, Value) {
        let output = grep(input(value), &context(root), &|| false).unwrap();
        let [janua_sdk::Content::Text(text)] = output.content.as_slice() else {
            panic!("one text part expected: {output:?}");
        };
        (
            text.replace(&format!("{root}/"), "./"),
            output.structured.unwrap(),
        )
    }

    fn sample() -> (tempfile::TempDir, String) {
        tree(&[
            (".gitignore", b"*.log\n", 1),
            (
                "a.rs",
                b"fn main() {\n    let x = 1;\n    println!(\"hello\");\n}\n",
                10,
            ),
            ("b.rs", b"// hello hello\nfn helper() {}\n", 30),
            ("notes.md", b"Hello world\n", 20),
            (".hidden/h.txt", b"hello hidden\n", 5),
            ("ignored.log", b"hello ignored\n", 40),
            (".git/config", b"hello git\n", 40),
            ("bin.dat", b"hello\0binary\n", 40),
        ])
    }

    #[test]
    fn files_with_matches_lists_newest_first_and_skips_ignored_git_and_binary() {
        let (_dir, root) = sample();
        let (text, structured) = run(&root, json!({"pattern": "hello"}));
        assert_eq!(text, "Found 3 files\n./b.rs\n./a.rs\n./.hidden/h.txt");
        assert_eq!(structured["mode"], "files_with_matches");
        assert_eq!(structured["numFiles"], 3);
        assert_eq!(structured["filenames"][0], format!("{root}/b.rs"));
        let (text, _) = run(&root, json!({"pattern": "hello", "-i": true}));
        assert_eq!(
            text,
            "Found 4 files\n./b.rs\n./notes.md\n./a.rs\n./.hidden/h.txt"
        );
        let (text, _) = run(&root, json!({"pattern": "nothing here"}));
        assert_eq!(text, "No matches found");
    }

    #[test]
    fn content_mode_prints_ripgrep_style_lines_with_context() {
        let (_dir, root) = sample();
        let (text, structured) = run(
            &root,
            json!({"pattern": "hello", "output_mode": "content", "glob": "*.rs"}),
        );
        assert_eq!(
            text,
            "./a.rs:3:    println!(\"hello\");\n./b.rs:1:// hello hello"
        );
        assert_eq!(structured["numLines"], 2);
        assert_eq!(structured["numFiles"], 2);
        let (text, _) = run(
            &root,
            json!({"pattern": "hello", "output_mode": "content", "type": "rust", "-n": false}),
        );
        assert_eq!(
            text,
            "./a.rs:    println!(\"hello\");\n./b.rs:// hello hello"
        );
        let (text, _) = run(
            &root,
            json!({"pattern": "hello", "output_mode": "content", "glob": "*.rs", "-C": 1}),
        );
        assert_eq!(
            text,
            "./a.rs-2-    let x = 1;\n./a.rs:3:    println!(\"hello\");\n./a.rs-4-}\n--\n\
             ./b.rs:1:// hello hello\n./b.rs-2-fn helper() {}"
        );
        let (text, _) = run(
            &root,
            json!({"pattern": "hello", "output_mode": "content", "glob": "a.rs", "-B": 2, "-A": 0}),
        );
        assert_eq!(
            text,
            "./a.rs-1-fn main() {\n./a.rs-2-    let x = 1;\n./a.rs:3:    println!(\"hello\");"
        );
    }

    #[test]
    fn context_groups_within_a_file_are_separated() {
        let (_dir, root) = tree(&[("c.txt", b"m1\nx\nx\nx\nm2\n", 0)]);
        let (text, _) = run(
            &root,
            json!({"pattern": "^m", "output_mode": "content", "path": "c.txt", "-C": 1}),
        );
        assert_eq!(
            text,
            "./c.txt:1:m1\n./c.txt-2-x\n--\n./c.txt-4-x\n./c.txt:5:m2"
        );
    }

    #[test]
    fn count_mode_counts_occurrences_per_file() {
        let (_dir, root) = sample();
        let (text, structured) = run(&root, json!({"pattern": "hello", "output_mode": "count"}));
        assert_eq!(
            text,
            "./.hidden/h.txt:1\n./a.rs:1\n./b.rs:2\nFound 4 total occurrences across 3 files"
        );
        assert_eq!(structured["numMatches"], 4);
        assert_eq!(structured["numFiles"], 3);
    }

    #[test]
    fn filters_apply_to_walked_files_but_not_to_a_named_file() {
        let (_dir, root) = sample();
        let (text, _) = run(&root, json!({"pattern": "(?i)hello", "type": "md"}));
        assert_eq!(text, "Found 1 file\n./notes.md");
        let (text, _) = run(&root, json!({"pattern": "hello", "glob": "!*.rs"}));
        assert_eq!(text, "Found 1 file\n./.hidden/h.txt");
        let (text, _) = run(
            &root,
            json!({"pattern": "hello", "path": "ignored.log", "glob": "*.rs"}),
        );
        assert_eq!(text, "Found 1 file\n./ignored.log");
        let (text, _) = run(&root, json!({"pattern": "hello", "path": "bin.dat"}));
        assert_eq!(
            text,
            "No matches found\n(The file is binary (it contains a NUL byte), so it was not searched.)"
        );
        let error = grep(
            input(json!({"pattern": "x", "path": "missing"})),
            &context(&root),
            &|| false,
        )
        .unwrap_err();
        assert_eq!(error.kind, "not_found");
        let error = grep(
            input(json!({"pattern": "x", "type": "nope"})),
            &context(&root),
            &|| false,
        )
        .unwrap_err();
        assert_eq!(error.kind, "invalid_pattern");
    }

    #[test]
    fn multiline_patterns_span_lines() {
        let (_dir, root) = sample();
        let (text, _) = run(
            &root,
            json!({"pattern": "main\\(\\) \\{\\n\\s+let", "multiline": true, "output_mode": "content"}),
        );
        assert_eq!(text, "./a.rs:1:fn main() {\n./a.rs:2:    let x = 1;");
        let (text, _) = run(
            &root,
            json!({"pattern": "main.*let", "multiline": true, "output_mode": "count"}),
        );
        assert_eq!(text, "./a.rs:1\nFound 1 total occurrence across 1 file");
        let (text, _) = run(&root, json!({"pattern": "main.*let"}));
        assert_eq!(text, "No matches found");
    }

    #[test]
    fn head_limit_and_offset_page_exactly() {
        let lines: String = (1..=57).map(|n| format!("hit {n}\n")).collect();
        let (_dir, root) = tree(&[("many.txt", lines.as_bytes(), 0)]);
        let (text, structured) = run(
            &root,
            json!({"pattern": "hit", "output_mode": "content", "head_limit": 10, "offset": 10}),
        );
        let expected: Vec<String> = (11..=20)
            .map(|n| format!("./many.txt:{n}:hit {n}"))
            .collect();
        assert_eq!(
            text,
            format!(
                "{}\n(Showing entries 11-20 of 57; use offset to see more)",
                expected.join("\n")
            )
        );
        assert_eq!(structured["numLines"], 10);
        assert_eq!(structured["appliedLimit"], 10);
        assert_eq!(structured["appliedOffset"], 10);
        let (text, structured) = run(
            &root,
            json!({"pattern": "hit", "output_mode": "content", "offset": 55}),
        );
        assert_eq!(
            text,
            "./many.txt:56:hit 56\n./many.txt:57:hit 57\n(Showing entries 56-57 of 57)"
        );
        assert!(structured.get("appliedLimit").is_none());
        let (text, _) = run(
            &root,
            json!({"pattern": "hit", "output_mode": "content", "offset": 80}),
        );
        assert_eq!(text, "(Offset 80 is past the end: there are 57 entries)");
    }

    #[test]
    fn paging_applies_to_files_and_count_entries() {
        let (_dir, root) = tree(&[("f1", b"x\n", 1), ("f2", b"x\nx\n", 2), ("f3", b"x\n", 3)]);
        let (text, structured) = run(&root, json!({"pattern": "x", "head_limit": 2}));
        assert_eq!(
            text,
            "Found 3 files\n./f3\n./f2\n(Showing entries 1-2 of 3; use offset to see more)"
        );
        assert_eq!(structured["numFiles"], 2);
        assert_eq!(structured["totalFiles"], 3);
        let (text, _) = run(
            &root,
            json!({"pattern": "x", "output_mode": "count", "offset": 1, "head_limit": 1}),
        );
        assert_eq!(
            text,
            "./f2:2\nFound 4 total occurrences across 3 files\n(Showing entries 2-2 of 3; use offset \
             to see more)"
        );
    }

    #[test]
    fn long_lines_are_cut() {
        let line = format!("needle {}\n", "y".repeat(5000));
        let (_dir, root) = tree(&[("long.txt", line.as_bytes(), 0)]);
        let (text, _) = run(
            &root,
            json!({"pattern": "needle", "output_mode": "content"}),
        );
        let expected = format!(
            "./long.txt:1:needle {}… [line cut]",
            "y".repeat(MAX_LINE_CHARS - 7)
        );
        assert_eq!(text, expected);
    }

    #[test]
    fn search_stops_when_cancelled() {
        let names: Vec<String> = (0..300).map(|n| format!("f{n}")).collect();
        let spec: Vec<(&str, &[u8], u64)> = names
            .iter()
            .map(|name| (name.as_str(), &b"x"[..], 0))
            .collect();
        let (_dir, root) = tree(&spec);
        let error = grep(input(json!({"pattern": "x"})), &context(&root), &|| true).unwrap_err();
        assert_eq!(error.kind, "cancelled");
    }

    #[test]
    fn newest_orders_by_mtime_then_path() {
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
    }
}
