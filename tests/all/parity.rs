//! One sequencer (issue 30, point 8): every row of the decision tables (`critical.tsv`,
//! `read_only.tsv`, `edit_commands.tsv`, `fail_closed.tsv`, `directories.tsv`, `limits.tsv`,
//! each on the surface its mode names), every Bash row of
//! the matcher table (`vectors.tsv`) and every row of the hook `if` table (`conditions.tsv`) goes
//! through `Runtime::check` and then through a real call of the built-in tool, and both must reach
//! the same decision, decided by the same rule for the same reason. The tables' own expectations
//! are checked by their unit tests; this suite checks that `check` and a call cannot drift apart.
//!
//! Commands really run when the decision allows them: every table path is moved into the test's
//! temporary directories, and the process sandbox (required) keeps writes inside them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use janua::{Dispatch, PermissionMode, Runtime, ToolUse};
use serde_json::{Value, json};

use crate::support::Fixture;

const DECISION_TABLES: &[(&str, &str)] = &[
    (
        "critical.tsv",
        include_str!("../../crates/permissions/src/critical.tsv"),
    ),
    (
        "read_only.tsv",
        include_str!("../../crates/permissions/src/read_only.tsv"),
    ),
    (
        "edit_commands.tsv",
        include_str!("../../crates/permissions/src/edit_commands.tsv"),
    ),
    (
        "fail_closed.tsv",
        include_str!("../../crates/permissions/src/fail_closed.tsv"),
    ),
    (
        "directories.tsv",
        include_str!("../../crates/permissions/src/directories.tsv"),
    ),
    (
        "limits.tsv",
        include_str!("../../crates/permissions/src/limits.tsv"),
    ),
];

/// One call to decide twice.
struct Row {
    at: String,
    mode: PermissionMode,
    /// The session shell's directory, relative to the workspace.
    directory: String,
    /// `(kind, rule)` pairs: `allow`, `ask` or `deny`.
    rules: Vec<(String, String)>,
    /// The command runs inside janua's kernel view (`+confined`), or the decision alone holds.
    confined: bool,
    tool: String,
    input: Value,
}

/// The temporary directories the tables' paths move into.
struct Places {
    workspace: PathBuf,
    extra: PathBuf,
    tmp: PathBuf,
}

impl Places {
    fn new(fixture: &Fixture) -> Self {
        let root = fixture.outside();
        let places = Self {
            workspace: fixture.workspace(),
            extra: root.join("extra"),
            tmp: root.join("tmp"),
        };
        for dir in [&places.extra, &places.tmp] {
            std::fs::create_dir_all(dir).unwrap();
        }
        places
    }

    /// `text` with the tables' workspace (`/ws/project`, or `/ws` for the matcher and hook
    /// tables), additional directory and `/tmp` replaced by the test's own.
    fn localize(&self, text: &str, workspace: &str) -> String {
        // `/tmp/` first: the test's own directories live under it.
        text.replace("/tmp/", &format!("{}/", self.tmp.to_string_lossy()))
            .replace(workspace, &self.workspace.to_string_lossy())
            .replace("/srv/shared/extra", &self.extra.to_string_lossy())
    }
}

/// The decision-table rows: six fields, or seven with the shell's directory second.
fn decision_rows(places: &Places) -> Vec<Row> {
    let mut rows = Vec::new();
    for (file, text) in DECISION_TABLES {
        for (index, line) in text.lines().enumerate() {
            if line.trim().is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split('\t').collect();
            let (mode, directory, rule, command) = match fields[..] {
                [mode, rule, command, _, _, _] => (mode, ".", rule, command),
                [mode, directory, rule, command, _, _, _] => (mode, directory, rule, command),
                _ => panic!("{file}:{}: malformed row", index + 1),
            };
            let (mode, confined) = match mode.strip_suffix("+confined") {
                Some(mode) => (mode, true),
                None => (mode, false),
            };
            rows.push(Row {
                at: format!("{file}:{}", index + 1),
                mode: mode.parse().expect("a mode"),
                directory: directory.to_owned(),
                rules: rule
                    .split(" ;; ")
                    .filter_map(|rule| rule.split_once(':'))
                    .map(|(kind, text)| (kind.to_owned(), places.localize(text, "/ws/project")))
                    .collect(),
                confined,
                tool: "Bash".to_owned(),
                input: json!({ "command": places.localize(command, "/ws/project") }),
            });
        }
    }
    rows
}

/// The matcher table's Bash rows, each as its rule in the default mode.
fn vector_rows(places: &Places) -> Vec<Row> {
    let text = include_str!("../../crates/permissions/src/vectors.tsv");
    let unescape = |field: &str| {
        field
            .replace("\\\\", "\u{0}")
            .replace("\\n", "\n")
            .replace("\\t", "\t")
            .replace('\u{0}', "\\")
    };
    let mut rows = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let [kind, rule, tool, input, _, _] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("vectors.tsv:{}: malformed row", index + 1);
        };
        if tool != "Bash" || input.starts_with("{\"") || input == "{}" {
            continue;
        }
        rows.push(Row {
            at: format!("vectors.tsv:{}", index + 1),
            mode: PermissionMode::Default,
            directory: ".".to_owned(),
            rules: vec![(kind.to_owned(), places.localize(&unescape(rule), "/ws"))],
            confined: true,
            tool: "Bash".to_owned(),
            input: json!({ "command": places.localize(&unescape(input), "/ws") }),
        });
    }
    rows
}

/// A runtime for `row`: its mode, its rule, its own session (the shell's directory is per
/// session), the additional directory, and `settings` besides.
async fn runtime_for(
    fixture: &Fixture,
    places: &Places,
    row: &Row,
    session: &str,
    settings: Option<Value>,
) -> Option<Runtime> {
    let mut permissions = json!({
        "additionalDirectories": [places.extra.to_string_lossy()],
    });
    for (kind, rule) in &row.rules {
        let list = permissions[kind.as_str()]
            .as_array()
            .cloned()
            .unwrap_or_default();
        permissions[kind.as_str()] =
            json!(list.into_iter().chain([json!(rule)]).collect::<Vec<_>>());
    }
    let mut config = fixture.config();
    config.permission_mode = Some(row.mode);
    config.commands_confined = Some(row.confined);
    config.session_id = Some(session.to_owned());
    config.settings_json = vec![json!({ "permissions": permissions }).to_string()];
    config
        .settings_json
        .extend(settings.map(|value| value.to_string()));
    config.limits.timeout = Duration::from_secs(10);
    // A rule the table keeps only to show that it is refused stops the runtime for check and
    // call alike: nothing to compare.
    Runtime::new(config).await.ok()
}

/// The row's call. A command gets a short time limit: some rows allow programs that never end
/// on their own (`watch ls`).
fn tool_use(row: &Row) -> ToolUse {
    let mut input = row.input.clone();
    if row.tool == "Bash" {
        input["timeout"] = json!(COMMAND_TIMEOUT_MS);
    }
    ToolUse {
        id: "toolu_parity".to_owned(),
        name: row.tool.clone(),
        input,
    }
}

/// The time limit of a command that runs, in milliseconds.
const COMMAND_TIMEOUT_MS: u64 = 2_000;

/// Moves the session's shell to `directory` with a real call, as an earlier call of the
/// session would have.
async fn change_directory(runtime: &Runtime, workspace: &Path, directory: &str) {
    if directory == "." {
        return;
    }
    std::fs::create_dir_all(workspace.join(directory)).unwrap();
    let moved = runtime
        .dispatch(ToolUse {
            id: "toolu_cd".to_owned(),
            name: "Bash".to_owned(),
            input: json!({ "command": format!("cd {directory}") }),
        })
        .await;
    assert!(!moved.block.is_error, "cd {directory}: {:?}", moved.block);
}

/// `None` when check and call agree; a description of the difference otherwise.
fn compare(row: &Row, report: &janua::CheckReport, called: &Dispatch) -> Option<String> {
    let at = &row.at;
    if let Some(stage) = &report.stage_error {
        return (called.error_kind() != Some(stage.kind)).then(|| {
            format!(
                "{at}: check failed at a stage ({}) but the call ended {:?}",
                stage.message,
                called.error_kind()
            )
        });
    }
    let Some(checked) = &report.decision else {
        return Some(format!("{at}: check reached no decision"));
    };
    let reached = called
        .outcome
        .asked
        .as_ref()
        .or(called.outcome.decision.as_ref());
    let Some(reached) = reached else {
        return Some(format!(
            "{at}: the call reached no decision: {:?}",
            called.block
        ));
    };
    (reached.verdict != checked.verdict
        || reached.decided_by != checked.decided_by
        || reached.reason != checked.reason)
        .then(|| {
            format!(
                "{at}: {}: check {:?} by {:?} ({}), call {:?} by {:?} ({})",
                row.input,
                checked.verdict,
                checked.decided_by,
                checked.reason,
                reached.verdict,
                reached.decided_by,
                reached.reason
            )
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_and_a_real_call_decide_every_table_row_alike() {
    let fixture = Fixture::new();
    let places = Places::new(&fixture);
    let mut rows = decision_rows(&places);
    let tables = rows.len();
    rows.extend(vector_rows(&places));
    assert!(
        tables >= 200 && rows.len() >= tables + 100,
        "{tables} table rows, {} in all",
        rows.len()
    );
    let mut differences = Vec::new();
    let mut compared = 0;
    for (number, row) in rows.iter().enumerate() {
        let session = format!("parity-{number}");
        let Some(runtime) = runtime_for(&fixture, &places, row, &session, None).await else {
            continue;
        };
        change_directory(&runtime, &places.workspace, &row.directory).await;
        let report = runtime.check(tool_use(row), true).await;
        let called = runtime.dispatch(tool_use(row)).await;
        compared += 1;
        differences.extend(compare(row, &report, &called));
    }
    assert!(compared >= rows.len() - 10, "{compared} of {}", rows.len());
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// Every hook `if` row: a command hook that denies runs only when its condition touches the
/// call, and `check` (with hooks) and a real call agree on it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn check_and_a_real_call_run_the_same_conditional_hooks() {
    let fixture = Fixture::new();
    let places = Places::new(&fixture);
    let deny = r#"printf '{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"guarded"}}'"#;
    let text = include_str!("../../host/src/hooks/conditions.tsv");
    let mut differences = Vec::new();
    let mut rows = 0;
    for (index, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let [condition, tool, value, expected, _] = line.split('\t').collect::<Vec<_>>()[..] else {
            panic!("conditions.tsv:{}: malformed row", index + 1);
        };
        let field = if tool == "Bash" {
            "command"
        } else {
            "file_path"
        };
        let row = Row {
            at: format!("conditions.tsv:{}", index + 1),
            mode: PermissionMode::Default,
            directory: ".".to_owned(),
            rules: vec![("allow".to_owned(), tool.to_owned())],
            confined: true,
            tool: tool.to_owned(),
            input: json!({ field: places.localize(value, "/ws") }),
        };
        let hooks = json!({"hooks": {"PreToolUse": [{"matcher": tool, "hooks": [
            {"type": "command", "if": places.localize(condition, "/ws"), "command": deny, "timeout": 10}
        ]}]}});
        let session = format!("hooks-{index}");
        let runtime = runtime_for(&fixture, &places, &row, &session, Some(hooks))
            .await
            .expect("the runtime starts");
        let report = runtime.check(tool_use(&row), true).await;
        let called = runtime.dispatch(tool_use(&row)).await;
        rows += 1;
        differences.extend(compare(&row, &report, &called));
        let by_hook = report.decision.as_ref().is_some_and(|decision| {
            matches!(decision.decided_by, janua::rules::DecidedBy::Hook { .. })
        });
        if by_hook != (expected == "yes") {
            differences.push(format!(
                "{}: {condition} on {value}: the hook {} ({:?})",
                row.at,
                if by_hook { "ran" } else { "did not run" },
                report.decision
            ));
        }
    }
    assert!(rows >= 10, "{rows} rows");
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
