//! Claude Code's tools as janua decides them: the table in `tools.tsv` (one row per way a tool
//! is decided, with the Claude Code version it was checked against) and the janua call each row
//! builds from Claude Code's input. It does not decide: `claude_hook.rs` does, with these calls.

use std::sync::LazyLock;

use serde_json::{Map, Value};

use janua_types::ToolUse;

/// How one row decides a Claude Code tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum DecidedAs {
    /// As this janua tool, with the input the row builds.
    Tool(String),
    /// Only by rules naming the Claude Code tool: it has no files, commands or network of its own.
    Named,
    /// janua cannot tell what the tool touches: asked whenever a deny rule is set.
    Unclassified,
}

/// Where a field of janua's input comes from.
#[derive(Debug, Clone, PartialEq)]
enum Source {
    /// Claude Code's field at this dotted path.
    Field(Vec<String>),
    /// A constant.
    Constant(Value),
}

/// One row of `tools.tsv`.
#[derive(Debug, Clone)]
pub(super) struct ToolRow {
    /// Claude Code's name (`mcp__*` for every MCP tool).
    pub(super) tool: String,
    /// How the row decides.
    pub(super) decided_as: DecidedAs,
    input: Vec<(String, Source)>,
    /// With `--sandbox-bash`: the field that runs under `janua sandbox`.
    pub(super) wrap: Option<String>,
    /// With `--sandbox-bash`: fields removed from the rewritten input.
    pub(super) strip: Vec<String>,
    /// The tool runs commands `janua sandbox` cannot confine (with `--sandbox-bash`, asked).
    pub(super) unconfined: bool,
}

/// The table, read once. It is janua's own data, checked by a unit test.
static TABLE: LazyLock<Vec<ToolRow>> = LazyLock::new(|| {
    parse_table(include_str!("tools.tsv")).unwrap_or_else(|error| panic!("tools.tsv: {error}"))
});

/// Every row for Claude Code's `tool`; an empty list for a tool janua does not know, which the
/// caller decides as [`DecidedAs::Unclassified`].
pub(super) fn rows_for(tool: &str) -> Vec<&'static ToolRow> {
    let exact: Vec<&ToolRow> = TABLE.iter().filter(|row| row.tool == tool).collect();
    if !exact.is_empty() {
        return exact;
    }
    TABLE
        .iter()
        .filter(|row| {
            row.tool
                .strip_suffix('*')
                .is_some_and(|prefix| tool.starts_with(prefix) && tool.len() > prefix.len())
        })
        .collect()
}

/// Claude Code's matcher for the tools whose command `--sandbox-bash` runs under `janua sandbox`
/// (`Bash|Monitor`).
pub(super) fn command_tools_matcher() -> String {
    let mut tools: Vec<&str> = Vec::new();
    for row in TABLE.iter().filter(|row| row.wrap.is_some()) {
        if !tools.contains(&row.tool.as_str()) {
            tools.push(&row.tool);
        }
    }
    tools.join("|")
}

impl ToolRow {
    /// janua's call for Claude Code's `input`, when the row applies (its first field is
    /// present); for a row decided as a janua tool only.
    pub(super) fn janua_call(&self, id: &str, input: &Value) -> Option<ToolUse> {
        let DecidedAs::Tool(name) = &self.decided_as else {
            return None;
        };
        let mut fields = Map::new();
        for (index, (field, source)) in self.input.iter().enumerate() {
            let value = match source {
                Source::Constant(value) => Some(value.clone()),
                Source::Field(path) => path
                    .iter()
                    .try_fold(input, |value, key| value.get(key))
                    .filter(|value| !value.is_null())
                    .cloned(),
            };
            match value {
                Some(value) => {
                    fields.insert(field.clone(), value);
                }
                None if index == 0 => return None,
                None => {}
            }
        }
        Some(ToolUse {
            id: id.to_owned(),
            name: name.clone(),
            input: Value::Object(fields),
        })
    }

    /// The top-level fields of Claude Code's input this row reads or rewrites.
    fn reads(&self) -> impl Iterator<Item = &str> {
        self.input
            .iter()
            .filter_map(|(_, source)| match source {
                Source::Field(path) => path.first().map(String::as_str),
                Source::Constant(_) => None,
            })
            .chain(self.wrap.as_deref())
            .chain(self.strip.iter().map(String::as_str))
    }
}

/// Fields of Claude Code's `input` that no row in `rows` reads: the decision is made without
/// them (said on standard error).
pub(super) fn unread_fields(rows: &[&ToolRow], input: &Value) -> Vec<String> {
    let Some(fields) = input.as_object() else {
        return Vec::new();
    };
    let mut unread: Vec<String> = fields
        .keys()
        .filter(|key| !rows.iter().any(|row| row.reads().any(|read| read == *key)))
        .cloned()
        .collect();
    unread.sort();
    unread
}

/// What is wrong with a line of the table.
#[derive(Debug, thiserror::Error)]
#[error("line {line}: {problem}")]
pub(super) struct TableError {
    line: usize,
    problem: String,
}

// A hand-written reader: five tab-separated columns, of which two hold `name=value` words; a CSV
// crate would add a dependency for no gain.
fn parse_table(text: &str) -> Result<Vec<ToolRow>, TableError> {
    let mut rows = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let fail = |problem: String| TableError {
            line: index + 1,
            problem,
        };
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let columns: Vec<&str> = line.split('\t').collect();
        let [tool, decided, input, sandbox, checked] = columns[..] else {
            return Err(fail(format!("{} columns, not 5", columns.len())));
        };
        if checked.split('.').count() != 3 {
            return Err(fail(format!("{checked:?} is not a Claude Code version")));
        }
        let decided_as = match decided {
            "named" => DecidedAs::Named,
            "unclassified" => DecidedAs::Unclassified,
            tool => DecidedAs::Tool(tool.to_owned()),
        };
        let mut fields = Vec::new();
        for word in input.split(' ').filter(|word| *word != "-") {
            let (field, source) = word
                .split_once('=')
                .ok_or_else(|| fail(format!("{word:?} is not field=source")))?;
            let source = match serde_json::from_str::<Value>(source) {
                Ok(value) if !source.starts_with('-') => Source::Constant(value),
                _ => Source::Field(source.split('.').map(str::to_owned).collect()),
            };
            fields.push((field.to_owned(), source));
        }
        if matches!(decided_as, DecidedAs::Tool(_)) == fields.is_empty() {
            return Err(fail(
                "a row decided as a janua tool needs input, and only such a row".to_owned(),
            ));
        }
        let (mut wrap, mut strip, mut unconfined) = (None, Vec::new(), false);
        for word in sandbox.split(' ').filter(|word| *word != "-") {
            match word.split_once(':') {
                Some(("wrap", field)) => wrap = Some(field.to_owned()),
                Some(("strip", field)) => strip.push(field.to_owned()),
                None if word == "unconfined" => unconfined = true,
                _ => {
                    return Err(fail(format!(
                        "{word:?} is not wrap:F, strip:F or unconfined"
                    )));
                }
            }
        }
        rows.push(ToolRow {
            tool: tool.to_owned(),
            decided_as,
            input: fields,
            wrap,
            strip,
            unconfined,
        });
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_table_reads_and_names_each_tool_once_per_way() {
        assert!(TABLE.len() > 40);
        let mut seen = std::collections::HashSet::new();
        for row in TABLE.iter() {
            assert!(
                seen.insert((row.tool.clone(), format!("{:?}", row.decided_as))),
                "{} twice",
                row.tool
            );
        }
        for (tool, decided) in [
            ("Bash", vec![DecidedAs::Tool("Bash".into())]),
            (
                "Monitor",
                vec![
                    DecidedAs::Tool("Bash".into()),
                    DecidedAs::Tool("WebFetch".into()),
                ],
            ),
            ("MultiEdit", vec![DecidedAs::Tool("Write".into())]),
            ("mcp__github__create_issue", vec![DecidedAs::Named]),
            ("PowerShell", vec![DecidedAs::Unclassified]),
            ("mcp__", vec![]),
            ("SomethingNew", vec![]),
        ] {
            let rows: Vec<DecidedAs> = rows_for(tool)
                .iter()
                .map(|row| row.decided_as.clone())
                .collect();
            assert_eq!(rows, decided, "{tool}");
        }
    }

    #[test]
    fn builds_janua_calls_from_claude_code_input() {
        let cases = [
            (
                "Bash",
                json!({"command": "ls", "description": "d", "dangerouslyDisableSandbox": true, "future": 1}),
                vec![Some(json!({"command": "ls", "description": "d"}))],
                vec!["future"],
            ),
            (
                "Monitor",
                json!({"command": "tail -f log", "description": "d", "timeout_ms": 5, "persistent": false}),
                vec![Some(json!({"command": "tail -f log"})), None],
                vec!["description", "persistent", "timeout_ms"],
            ),
            (
                "Monitor",
                json!({"ws": {"url": "wss://h/x"}, "description": "d"}),
                vec![None, Some(json!({"url": "wss://h/x", "prompt": ""}))],
                vec!["description"],
            ),
            (
                "MultiEdit",
                json!({"file_path": "/p/a", "edits": []}),
                vec![Some(json!({"file_path": "/p/a", "content": ""}))],
                vec!["edits"],
            ),
            (
                "Read",
                json!({"file_path": "/p/a", "pages": "1-2"}),
                vec![Some(json!({"file_path": "/p/a"}))],
                vec!["pages"],
            ),
            ("Read", json!({"path": "/p/a"}), vec![None], vec!["path"]),
            (
                "Grep",
                json!({"pattern": "x", "-i": true, "-o": true}),
                vec![Some(json!({"pattern": "x", "-i": true}))],
                vec!["-o"],
            ),
        ];
        for (tool, input, expected, unread) in cases {
            let rows = rows_for(tool);
            let built: Vec<Option<Value>> = rows
                .iter()
                .map(|row| row.janua_call("t", &input).map(|call| call.input))
                .collect();
            assert_eq!(built, expected, "{tool} {input}");
            assert_eq!(unread_fields(&rows, &input), unread, "{tool} {input}");
        }
    }

    #[test]
    fn rejects_malformed_rows() {
        for bad in [
            "Bash\tBash\tcommand=command\t-",
            "Bash\tBash\t-\t-\t2.1.332",
            "X\tnamed\ta=b\t-\t2.1.332",
            "Bash\tBash\tcommand\t-\t2.1.332",
            "Bash\tBash\tcommand=command\tcover:command\t2.1.332",
            "Bash\tBash\tcommand=command\t-\tlatest",
        ] {
            assert!(parse_table(bad).is_err(), "{bad:?}");
        }
    }
}
