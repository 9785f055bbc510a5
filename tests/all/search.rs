//! The built-in Glob and Grep tools: ordering, caps, ignore files, every Grep output mode and
//! option, paging, and the errors the model sees.

use std::path::Path;
use std::time::{Duration, SystemTime};

use janua::{Dispatch, ErrorKind};
use serde_json::{Value, json};

use crate::support::{Fixture, call, error_text, ok_text};

/// Sets the modification time of `path` to `seconds` after an arbitrary fixed instant.
fn set_mtime(path: &Path, seconds: u64) {
    let file = std::fs::File::options()
        .write(true)
        .open(path)
        .expect("open for set_modified");
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + seconds))
        .expect("set mtime");
}

/// Writes `name` with `text` and modification time `seconds`.
fn write_at(fixture: &Fixture, name: &str, text: impl AsRef<[u8]>, seconds: u64) {
    let path = fixture.write(name, text);
    set_mtime(&path, seconds);
}

/// `text` with the workspace prefix shortened to `./`, so expected outputs stay readable.
fn short(fixture: &Fixture, text: &str) -> String {
    text.replace(&format!("{}/", fixture.workspace().display()), "./")
}

fn structured(dispatch: &Dispatch) -> Value {
    dispatch
        .outcome
        .structured
        .clone()
        .expect("structured output")
}

/// Asserts a `tool_failed` outcome whose tool error kind is `kind`; returns the text.
fn tool_error(dispatch: &Dispatch, kind: &str) -> String {
    let text = error_text(dispatch, ErrorKind::ToolFailed);
    assert_eq!(
        dispatch
            .outcome
            .error
            .as_ref()
            .expect("error")
            .tool_error_kind
            .as_deref(),
        Some(kind),
        "{text}"
    );
    text
}

/// A workspace for Grep: sources, a gitignored log, a dotfile, `.git/` and a binary file.
fn grep_fixture() -> Fixture {
    let fixture = Fixture::new();
    write_at(&fixture, ".gitignore", "*.log\n", 1);
    write_at(
        &fixture,
        "a.rs",
        "fn main() {\n    let x = 1;\n    println!(\"hello\");\n}\n",
        10,
    );
    write_at(&fixture, "b.rs", "// hello hello\nfn helper() {}\n", 30);
    write_at(&fixture, "notes.md", "Hello world\n", 20);
    write_at(&fixture, ".hidden/h.txt", "hello hidden\n", 5);
    write_at(&fixture, "ignored.log", "hello ignored\n", 40);
    write_at(&fixture, ".git/config", "hello git\n", 40);
    write_at(&fixture, "bin.dat", b"hello\0binary\n", 40);
    fixture
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn glob_lists_files_newest_first_relative_to_the_search_dir() {
    let fixture = Fixture::new();
    write_at(&fixture, "a.rs", "", 100);
    write_at(&fixture, "b.rs", "", 300);
    write_at(&fixture, "src/c.rs", "", 200);
    write_at(&fixture, "src/same_b.rs", "", 50);
    write_at(&fixture, "src/same_a.rs", "", 50);
    write_at(&fixture, "notes.md", "", 400);
    let runtime = fixture.runtime(&[], |_| {}).await;

    let result = call(&runtime, "Glob", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(
        short(&fixture, &ok_text(&result)),
        "./b.rs\n./src/c.rs\n./a.rs\n./src/same_a.rs\n./src/same_b.rs"
    );
    let structured = structured(&result);
    assert_eq!(structured["numFiles"], 5);
    assert_eq!(structured["totalFiles"], 5);
    assert_eq!(structured["truncated"], false);
    assert_eq!(
        structured["filenames"][0],
        fixture.workspace().join("b.rs").display().to_string()
    );
    assert!(structured["durationMs"].is_u64());

    // `*` never crosses `/`: a top-level pattern lists top-level files only.
    let top = ok_text(&call(&runtime, "Glob", json!({"pattern": "*.rs"})).await);
    assert_eq!(short(&fixture, &top), "./b.rs\n./a.rs");
    let in_src = ok_text(&call(&runtime, "Glob", json!({"pattern": "*.rs", "path": "src"})).await);
    assert_eq!(
        short(&fixture, &in_src),
        "./src/c.rs\n./src/same_a.rs\n./src/same_b.rs"
    );
    let absolute = format!("{}/src/c*.rs", fixture.workspace().display());
    let text = ok_text(&call(&runtime, "Glob", json!({"pattern": absolute})).await);
    assert_eq!(short(&fixture, &text), "./src/c.rs");
    let none = ok_text(&call(&runtime, "Glob", json!({"pattern": "**/*.py"})).await);
    assert_eq!(none, "No files found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn glob_caps_at_100_files_and_says_so() {
    let fixture = Fixture::new();
    for n in 0..120 {
        write_at(&fixture, &format!("gen/f{n:03}.txt"), "", n);
    }
    let runtime = fixture.runtime(&[], |_| {}).await;
    let result = call(&runtime, "Glob", json!({"pattern": "gen/*.txt"})).await;
    let text = short(&fixture, &ok_text(&result));
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 101, "{text}");
    assert_eq!(lines[0], "./gen/f119.txt");
    assert_eq!(lines[99], "./gen/f020.txt");
    assert_eq!(
        lines[100],
        "(Results are truncated: showing the 100 most recently modified of 120 matching files. \
         Use a more specific pattern or path.)"
    );
    let structured = structured(&result);
    assert_eq!(structured["numFiles"], 100);
    assert_eq!(structured["totalFiles"], 120);
    assert_eq!(structured["truncated"], true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn glob_honours_gitignore_unless_no_ignore_and_never_lists_dot_git() {
    let fixture = Fixture::new();
    // A plain directory, not a git repository: ignore files apply anyway.
    write_at(&fixture, ".gitignore", "build/\n*.log\n", 1);
    write_at(&fixture, "app.js", "", 2);
    write_at(&fixture, ".env", "", 3);
    write_at(&fixture, "build/out.js", "", 4);
    write_at(&fixture, "debug.log", "", 5);
    write_at(&fixture, ".git/HEAD", "", 6);
    let runtime = fixture.runtime(&[], |_| {}).await;

    let honoured = ok_text(&call(&runtime, "Glob", json!({"pattern": "**/*"})).await);
    assert_eq!(short(&fixture, &honoured), "./.env\n./app.js\n./.gitignore");
    let all = ok_text(
        &call(
            &runtime,
            "Glob",
            json!({"pattern": "**/*", "no_ignore": true}),
        )
        .await,
    );
    assert_eq!(
        short(&fixture, &all),
        "./debug.log\n./build/out.js\n./.env\n./app.js\n./.gitignore"
    );

    // The operator's `respectGitignore: false` makes that the default; a call can still ask.
    let lenient = fixture
        .runtime(&[], |config| {
            config
                .settings_json
                .push(r#"{"respectGitignore": false}"#.to_owned());
        })
        .await;
    let listed = call(&lenient, "Glob", json!({"pattern": "**/*"})).await;
    assert_eq!(short(&fixture, &ok_text(&listed)), short(&fixture, &all));
    let default = listed
        .outcome
        .coercions
        .iter()
        .find(|change| change.pointer == "/no_ignore")
        .expect("the default is reported as a coercion");
    assert_eq!(default.to, "true");
    let asked = ok_text(
        &call(
            &lenient,
            "Glob",
            json!({"pattern": "**/*", "no_ignore": false}),
        )
        .await,
    );
    assert_eq!(short(&fixture, &asked), "./.env\n./app.js\n./.gitignore");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn glob_errors_are_specific() {
    let fixture = Fixture::new();
    fixture.write("file.txt", "x");
    let runtime = fixture.runtime(&[], |_| {}).await;
    let text = tool_error(
        &call(
            &runtime,
            "Glob",
            json!({"pattern": "*", "path": "file.txt"}),
        )
        .await,
        "not_a_directory",
    );
    assert!(text.contains("is a file, not a directory"), "{text}");
    tool_error(
        &call(&runtime, "Glob", json!({"pattern": "*", "path": "missing"})).await,
        "not_found",
    );
    let text = error_text(
        &call(&runtime, "Glob", json!({"pattern": "src/[a"})).await,
        ErrorKind::ValidationFailed,
    );
    assert!(text.contains("invalid glob pattern \"src/[a\""), "{text}");
    let text = error_text(
        &call(&runtime, "Glob", json!({"pattern": "/elsewhere/*.rs"})).await,
        ErrorKind::ValidationFailed,
    );
    assert!(
        text.contains("is not inside the search directory"),
        "{text}"
    );
    error_text(
        &call(&runtime, "Glob", json!({"pattern": "*", "bogus": 1})).await,
        ErrorKind::InvalidInput,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_lists_matching_files_newest_first_skipping_ignored_git_and_binary() {
    let fixture = grep_fixture();
    let runtime = fixture.runtime(&[], |_| {}).await;
    let result = call(&runtime, "Grep", json!({"pattern": "hello"})).await;
    assert_eq!(
        short(&fixture, &ok_text(&result)),
        "Found 3 files\n./b.rs\n./a.rs\n./.hidden/h.txt"
    );
    let structured = structured(&result);
    assert_eq!(structured["mode"], "files_with_matches");
    assert_eq!(structured["numFiles"], 3);
    assert_eq!(
        structured["filenames"][0],
        fixture.workspace().join("b.rs").display().to_string()
    );
    let insensitive =
        ok_text(&call(&runtime, "Grep", json!({"pattern": "hello", "-i": true})).await);
    assert_eq!(
        short(&fixture, &insensitive),
        "Found 4 files\n./b.rs\n./notes.md\n./a.rs\n./.hidden/h.txt"
    );
    let none = ok_text(&call(&runtime, "Grep", json!({"pattern": "absent"})).await);
    assert_eq!(none, "No matches found");
    // Named explicitly, an ignored file is searched; a binary one is not.
    let named = ok_text(
        &call(
            &runtime,
            "Grep",
            json!({"pattern": "hello", "path": "ignored.log"}),
        )
        .await,
    );
    assert_eq!(short(&fixture, &named), "Found 1 file\n./ignored.log");
    let binary = ok_text(
        &call(
            &runtime,
            "Grep",
            json!({"pattern": "hello", "path": "bin.dat"}),
        )
        .await,
    );
    assert_eq!(
        binary,
        "No matches found\n(The file is binary (it contains a NUL byte), so it was not searched.)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_content_mode_prints_lines_with_numbers_and_context() {
    let fixture = grep_fixture();
    write_at(&fixture, "gaps.txt", "m1\nx\nx\nx\nm2\n", 50);
    let runtime = fixture.runtime(&[], |_| {}).await;
    let content = |extra: Value| {
        let mut input = json!({"pattern": "hello", "output_mode": "content", "glob": "*.rs"});
        for (key, value) in extra.as_object().expect("object") {
            input[key] = value.clone();
        }
        input
    };

    let result = call(&runtime, "Grep", content(json!({}))).await;
    assert_eq!(
        short(&fixture, &ok_text(&result)),
        "./a.rs:3:    println!(\"hello\");\n./b.rs:1:// hello hello"
    );
    let structured = structured(&result);
    assert_eq!(structured["mode"], "content");
    assert_eq!(structured["numLines"], 2);
    assert_eq!(
        short(&fixture, structured["content"].as_str().expect("content")),
        "./a.rs:3:    println!(\"hello\");\n./b.rs:1:// hello hello"
    );

    let plain = ok_text(&call(&runtime, "Grep", content(json!({"-n": false}))).await);
    assert_eq!(
        short(&fixture, &plain),
        "./a.rs:    println!(\"hello\");\n./b.rs:// hello hello"
    );
    let around = ok_text(&call(&runtime, "Grep", content(json!({"-C": 1}))).await);
    assert_eq!(
        short(&fixture, &around),
        "./a.rs-2-    let x = 1;\n./a.rs:3:    println!(\"hello\");\n./a.rs-4-}\n--\n\
         ./b.rs:1:// hello hello\n./b.rs-2-fn helper() {}"
    );
    // -A/-B override -C.
    let before = ok_text(
        &call(
            &runtime,
            "Grep",
            content(json!({"glob": "a.rs", "-C": 5, "-B": 2, "-A": 0})),
        )
        .await,
    );
    assert_eq!(
        short(&fixture, &before),
        "./a.rs-1-fn main() {\n./a.rs-2-    let x = 1;\n./a.rs:3:    println!(\"hello\");"
    );
    let after = ok_text(&call(&runtime, "Grep", content(json!({"glob": "b.rs", "-A": 1}))).await);
    assert_eq!(
        short(&fixture, &after),
        "./b.rs:1:// hello hello\n./b.rs-2-fn helper() {}"
    );
    let gaps = ok_text(
        &call(
            &runtime,
            "Grep",
            json!({"pattern": "^m", "output_mode": "content", "path": "gaps.txt", "-C": 1}),
        )
        .await,
    );
    assert_eq!(
        short(&fixture, &gaps),
        "./gaps.txt:1:m1\n./gaps.txt-2-x\n--\n./gaps.txt-4-x\n./gaps.txt:5:m2"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_count_mode_counts_occurrences() {
    let fixture = grep_fixture();
    let runtime = fixture.runtime(&[], |_| {}).await;
    let result = call(
        &runtime,
        "Grep",
        json!({"pattern": "hello", "output_mode": "count"}),
    )
    .await;
    assert_eq!(
        short(&fixture, &ok_text(&result)),
        "./.hidden/h.txt:1\n./a.rs:1\n./b.rs:2\nFound 4 total occurrences across 3 files"
    );
    let structured = structured(&result);
    assert_eq!(structured["mode"], "count");
    assert_eq!(structured["numMatches"], 4);
    assert_eq!(structured["numFiles"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_filters_by_glob_and_type() {
    let fixture = grep_fixture();
    write_at(&fixture, "web/app.ts", "hello ts\n", 60);
    write_at(&fixture, "web/view.tsx", "hello tsx\n", 70);
    write_at(&fixture, "web/app.min.js", "hello min\n", 80);
    let runtime = fixture.runtime(&[], |_| {}).await;
    let cases = [
        (
            json!({"glob": "*.{ts,tsx}"}),
            "Found 2 files\n./web/view.tsx\n./web/app.ts",
        ),
        (json!({"glob": "web/*.ts"}), "Found 1 file\n./web/app.ts"),
        (
            json!({"glob": "!*.rs"}),
            "Found 4 files\n./web/app.min.js\n./web/view.tsx\n./web/app.ts\n./.hidden/h.txt",
        ),
        (json!({"type": "rust"}), "Found 2 files\n./b.rs\n./a.rs"),
        (
            json!({"type": "md", "-i": true}),
            "Found 1 file\n./notes.md",
        ),
    ];
    for (filter, expected) in cases {
        let mut input = filter.clone();
        input["pattern"] = json!("hello");
        let text = ok_text(&call(&runtime, "Grep", input).await);
        assert_eq!(short(&fixture, &text), expected, "{filter}");
    }
    let text = error_text(
        &call(
            &runtime,
            "Grep",
            json!({"pattern": "x", "type": "rustlang"}),
        )
        .await,
        ErrorKind::ValidationFailed,
    );
    assert!(text.contains("unknown file type \"rustlang\""), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_multiline_matches_across_lines_only_when_asked() {
    let fixture = grep_fixture();
    let runtime = fixture.runtime(&[], |_| {}).await;
    let text = ok_text(
        &call(
            &runtime,
            "Grep",
            json!({"pattern": "main.*let", "multiline": true, "output_mode": "content"}),
        )
        .await,
    );
    assert_eq!(
        short(&fixture, &text),
        "./a.rs:1:fn main() {\n./a.rs:2:    let x = 1;"
    );
    let single = ok_text(&call(&runtime, "Grep", json!({"pattern": "main.*let"})).await);
    assert_eq!(single, "No matches found");
    let text = error_text(
        &call(&runtime, "Grep", json!({"pattern": "main\\(\\) \\{\\n"})).await,
        ErrorKind::ValidationFailed,
    );
    assert!(text.contains("set multiline to true"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_pages_with_head_limit_and_offset() {
    let fixture = Fixture::new();
    let lines: String = (1..=57).map(|n| format!("hit {n}\n")).collect();
    write_at(&fixture, "many.txt", lines, 1);
    for n in 1..=3 {
        write_at(&fixture, &format!("f{n}.txt"), "hit\n", 10 + n);
    }
    let runtime = fixture.runtime(&[], |_| {}).await;

    let result = call(
        &runtime,
        "Grep",
        json!({"pattern": "hit", "path": "many.txt", "output_mode": "content",
               "head_limit": 10, "offset": 10}),
    )
    .await;
    let expected: Vec<String> = (11..=20)
        .map(|n| format!("./many.txt:{n}:hit {n}"))
        .collect();
    assert_eq!(
        short(&fixture, &ok_text(&result)),
        format!(
            "{}\n(Showing entries 11-20 of 57; use offset to see more)",
            expected.join("\n")
        )
    );
    let structured = structured(&result);
    assert_eq!(structured["numLines"], 10);
    assert_eq!(structured["appliedLimit"], 10);
    assert_eq!(structured["appliedOffset"], 10);

    let tail = ok_text(
        &call(
            &runtime,
            "Grep",
            json!({"pattern": "hit", "path": "many.txt", "output_mode": "content", "offset": 55}),
        )
        .await,
    );
    assert_eq!(
        short(&fixture, &tail),
        "./many.txt:56:hit 56\n./many.txt:57:hit 57\n(Showing entries 56-57 of 57)"
    );
    let files = ok_text(
        &call(
            &runtime,
            "Grep",
            json!({"pattern": "hit", "head_limit": 2, "offset": 1}),
        )
        .await,
    );
    assert_eq!(
        short(&fixture, &files),
        "Found 4 files\n./f2.txt\n./f1.txt\n(Showing entries 2-3 of 4; use offset to see more)"
    );
    let counts = ok_text(
        &call(
            &runtime,
            "Grep",
            json!({"pattern": "hit", "output_mode": "count", "head_limit": 1}),
        )
        .await,
    );
    assert_eq!(
        short(&fixture, &counts),
        "./f1.txt:1\nFound 60 total occurrences across 4 files\n\
         (Showing entries 1-1 of 4; use offset to see more)"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_rejects_bad_input_before_running() {
    let fixture = grep_fixture();
    let runtime = fixture.runtime(&[], |_| {}).await;
    let text = error_text(
        &call(&runtime, "Grep", json!({"pattern": "(unclosed"})).await,
        ErrorKind::ValidationFailed,
    );
    assert!(
        text.contains("invalid regular expression \"(unclosed\""),
        "{text}"
    );
    // Context flags outside content mode are ignored, as Claude Code ignores them.
    let listed = ok_text(
        &call(
            &runtime,
            "Grep",
            json!({"pattern": "hello", "-A": 2, "-n": true}),
        )
        .await,
    );
    assert!(listed.starts_with("Found "), "{listed}");
    error_text(
        &call(&runtime, "Grep", json!({"pattern": ""})).await,
        ErrorKind::ValidationFailed,
    );
    error_text(
        &call(&runtime, "Grep", json!({"pattern": "x", "-C": -1})).await,
        ErrorKind::InvalidInput,
    );
    error_text(
        &call(
            &runtime,
            "Grep",
            json!({"pattern": "x", "output_mode": "lines"}),
        )
        .await,
        ErrorKind::InvalidInput,
    );
    tool_error(
        &call(&runtime, "Grep", json!({"pattern": "x", "path": "missing"})).await,
        "not_found",
    );
}
