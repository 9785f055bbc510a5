//! Entry points for the fuzz targets of `fuzz/runtime/` (the parsers of the runtime: plugin
//! manifests, settings files, stream-json and JSON-RPC lines, input coercion), and the replay of
//! their committed corpora.
//!
//! Each function feeds arbitrary bytes to one parser a model, a plugin or a repository can reach
//! and panics only when an invariant of that parser breaks; a parser's own typed error is a pass.
//! Built only with the feature `fuzzing` (the fuzz crate) and for this crate's tests: it is not
//! part of the API. The permission engine's targets live in `janua_permissions::fuzzing`.

use std::path::Path;

use serde_json::Value;

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

/// One fuzz target: its name (the `fuzz/runtime/corpus/<name>` directory) and its entry point.
pub type Target = janua_permissions::fuzzing::Target;

/// This crate's fuzz targets by name.
pub const TARGETS: &[Target] = &[
    ("manifest", manifest),
    ("settings", settings),
    ("stream_line", stream_line),
    ("coercion", coercion),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_seed_and_regression_passes_its_target() {
        let fuzz_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/runtime");
        for target in TARGETS {
            janua_permissions::fuzzing::replay(&fuzz_dir, *target);
        }
    }
}
