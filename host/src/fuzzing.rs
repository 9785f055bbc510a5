//! Entry points for the fuzz targets in `fuzz/` and for the corpus replay test.
//!
//! Each function feeds arbitrary bytes to one parser a model, a plugin or a repository can reach
//! and panics only when an invariant of that parser breaks; a parser's own typed error is a pass.
//! They live in the library (hidden from the docs) so that the fuzz targets and the stable
//! `fuzz_corpus` integration test run exactly the same checks.

use std::path::{Component, Path};

use serde_json::Value;

use janua_permissions::{Rule, RuleContext, RuleKind, RuleSource, split_command};

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
    let normalized = janua_permissions::paths::normalize(Path::new(&cwd), path);
    assert!(normalized.is_absolute(), "{normalized:?} is not absolute");
    assert!(
        normalized
            .components()
            .all(|part| !matches!(part, Component::CurDir | Component::ParentDir)),
        "{normalized:?} keeps a `.` or `..`"
    );
    let spelled = normalized.to_string_lossy().into_owned();
    if normalized.to_str().is_some() {
        let again = janua_permissions::paths::normalize(Path::new("/"), &spelled);
        assert_eq!(again, normalized, "normalization is not idempotent");
    }
}

/// The plugin manifest (`janua.toml`) parser: any text parses or fails with a typed error.
pub fn manifest(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("/plugins/fuzzed/janua.toml");
    if let Err(error) = crate::registry::Manifest::parse(path, text) {
        // The message names the file, so a user knows which manifest to fix.
        assert!(error.to_string().contains("janua.toml"), "{error}");
    }
}

/// The settings-file parser: any text parses or fails with a typed error naming the file.
pub fn settings(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("/repo/.janua/settings.json");
    let mut warnings = Vec::new();
    if let Err(error) = crate::settings::Settings::parse(text, path, &mut warnings) {
        assert!(error.to_string().contains("settings.json"), "{error}");
    }
}

/// The two line decoders a peer feeds: `janua run`'s stream-json input and MCP's JSON-RPC.
pub fn stream_line(data: &[u8]) {
    let _ = janua_mcp::jsonrpc::parse(data);
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = crate::protocol::messages::parse_line(text);
    }
}

/// Input coercion toward a schema: the first line is the schema, the rest the input, both
/// JSON. Coercion never panics, and a coercion that reports no change leaves the input as it was.
pub fn coercion(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let (schema, input) = text.split_once('\n').unwrap_or((text, "{}"));
    let (Ok(schema), Ok(input)) = (
        serde_json::from_str::<Value>(schema),
        serde_json::from_str::<Value>(input),
    ) else {
        return;
    };
    let (coerced, changes) = crate::pipeline::coerce::coerce(&schema, input.clone());
    if changes.is_empty() {
        assert_eq!(
            coerced, input,
            "coercion changed the input without saying so"
        );
    }
}

/// One fuzz target: its name (the `fuzz/corpus/<name>` directory) and its entry point.
pub type Target = (&'static str, fn(&[u8]));

/// Every fuzz target by name, for the corpus replay.
pub const TARGETS: &[Target] = &[
    ("rule_parser", rule_parser),
    ("shell_splitter", shell_splitter),
    ("path_normalization", path_normalization),
    ("manifest", manifest),
    ("settings", settings),
    ("stream_line", stream_line),
    ("coercion", coercion),
];
