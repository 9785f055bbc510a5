//! `GrepContext`: an example workflow tool built on `delegate`. It calls Grep for the pattern,
//! then Read for the lines around each of the first matches, and returns one report. Each step is
//! a full janua call: the operator's hooks, rules and permission decision apply to it, and it
//! holds at most this tool's own grants (see `janua.toml`).

use janua_sdk::{CapabilityClass, Context, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

/// Input of `GrepContext`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GrepContextInput {
    /// The regular expression to find (Grep's syntax).
    pub pattern: String,
    /// Directory or file to search; defaults to the workspace.
    pub path: Option<String>,
    /// Glob that files must match, e.g. `*.rs`.
    pub glob: Option<String>,
    /// Lines of context before and after each match (default 2, at most 20).
    pub context_lines: Option<u64>,
    /// Matches to show with context (default 5, at most 50).
    pub max_matches: Option<u64>,
}

/// One match Grep reported.
#[derive(Debug, PartialEq, Eq)]
pub struct Match {
    /// The file.
    pub path: String,
    /// Its 1-based line number.
    pub line: u64,
}

/// The matches in Grep's content output (`path:line:text` lines), in order. Grep's own format is
/// fixed by janua's Grep tool, so a small scan is enough; a path holding `:<digits>:` is read
/// at its first such spot.
pub fn parse_matches(output: &str) -> Vec<Match> {
    output
        .lines()
        .filter_map(|line| {
            let bytes = line.as_bytes();
            let mut start = 0;
            while let Some(offset) = line[start..].find(':') {
                let colon = start + offset;
                let digits = bytes[colon + 1..]
                    .iter()
                    .take_while(|byte| byte.is_ascii_digit())
                    .count();
                if digits > 0 && bytes.get(colon + 1 + digits) == Some(&b':') && colon > 0 {
                    let number = line[colon + 1..colon + 1 + digits].parse().ok()?;
                    return Some(Match {
                        path: line[..colon].to_owned(),
                        line: number,
                    });
                }
                start = colon + 1;
            }
            None
        })
        .collect()
}

/// The tool.
pub struct GrepContext;

impl Tool for GrepContext {
    type Input = GrepContextInput;
    const NAME: &'static str = "GrepContext";
    const DESCRIPTION: &'static str = "Finds a pattern in the workspace and shows the lines around each match. \
        Runs Grep, then Read for each of the first matches, under your permissions.";
    const CLASS: CapabilityClass = CapabilityClass::Read;
    const READ_ONLY: bool = true;
    const CONCURRENCY_SAFE: bool = true;

    fn call(input: GrepContextInput, _ctx: &Context) -> Result<Output, ToolError> {
        let context = input.context_lines.unwrap_or(2).min(20);
        let max_matches = input.max_matches.unwrap_or(5).clamp(1, 50);
        let mut grep = json!({
            "pattern": input.pattern,
            "output_mode": "content",
            "-n": true,
            "head_limit": max_matches,
        });
        if let Some(path) = &input.path {
            grep["path"] = json!(path);
        }
        if let Some(glob) = &input.glob {
            grep["glob"] = json!(glob);
        }
        let found = janua_sdk::delegate::call("Grep", &grep);
        if found.is_error {
            return Err(ToolError::new(
                found.error_kind.as_deref().unwrap_or("grep_failed"),
                format!("the Grep step failed: {}", found.text),
            ));
        }
        let matches = parse_matches(&found.text);
        if matches.is_empty() {
            return Ok(
                Output::text(format!("No matches. (Grep said: {})", found.text))
                    .with_structured(json!({"matches": []})),
            );
        }
        let mut sections = Vec::new();
        let mut report = Vec::new();
        for found in matches.iter().take(max_matches as usize) {
            let offset = found.line.saturating_sub(context).max(1);
            let read = janua_sdk::delegate::call(
                "Read",
                &json!({
                    "file_path": found.path,
                    "offset": offset,
                    "limit": 2 * context + 1,
                }),
            );
            let status = if read.is_error {
                read.error_kind
                    .clone()
                    .unwrap_or_else(|| "error".to_owned())
            } else {
                "ok".to_owned()
            };
            sections.push(format!(
                "== {}:{} ({status}) ==\n{}",
                found.path, found.line, read.text
            ));
            report.push(json!({
                "path": found.path,
                "line": found.line,
                "read": status,
                "tool_use_id": read.tool_use_id,
            }));
        }
        Ok(Output::text(sections.join("\n\n")).with_structured(json!({"matches": report})))
    }
}

// Only wasm builds export the component: natively (unit tests) the exported symbol names, which
// contain `:`, cannot go into a linker version script.
#[cfg(target_arch = "wasm32")]
janua_sdk::export!(GrepContext);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_are_read_from_grep_content_lines() {
        let table: &[(&str, &[(&str, u64)])] = &[
            ("/w/a.rs:12:fn main() {}", &[("/w/a.rs", 12)]),
            (
                "/w/a.rs:3:x: 1:2:\n/w/b.rs:40:y",
                &[("/w/a.rs", 3), ("/w/b.rs", 40)],
            ),
            ("/w/dir:odd/c.txt:7:text", &[("/w/dir:odd/c.txt", 7)]),
            ("No matches found", &[]),
            ("/w/a.rs-11-context line", &[]),
            (":5:no path", &[]),
        ];
        for (output, expected) in table {
            let expected: Vec<Match> = expected
                .iter()
                .map(|(path, line)| Match {
                    path: (*path).to_owned(),
                    line: *line,
                })
                .collect();
            assert_eq!(parse_matches(output), expected, "{output:?}");
        }
    }
}
