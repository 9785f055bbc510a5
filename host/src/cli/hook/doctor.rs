//! `janua hook doctor --claude`: whether Claude Code will run janua's hook on every tool call,
//! and a decision through it. Every set-up that lets a call run without janua's answer fails
//! (exit 1) with the fix; facts that change nothing are only printed.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use janua::claude::{ClaudeScope, RegisteredHook, registered_claude_hooks};

/// The first Claude Code version whose hooks honour `"onFailure": "block"`.
const ON_FAILURE_SINCE: [u64; 3] = [2, 1, 295];

/// The report: lines to print, and whether any is a failure.
#[derive(Default)]
struct Report {
    failed: bool,
}

impl Report {
    fn fine(&mut self, line: String) {
        println!("ok: {line}");
    }

    fn note(&mut self, line: String) {
        println!("note: {line}");
    }

    fn fail(&mut self, line: String, fix: &str) {
        self.failed = true;
        println!("FAIL: {line}\n  fix: {fix}");
    }
}

/// One settings file Claude Code reads, by scope.
struct ScopeFile {
    label: String,
    path: PathBuf,
    managed: bool,
}

/// Runs every check for `project`, with Claude Code's managed settings in `managed_dir`.
pub(super) fn run(
    project: &Path,
    managed_dir: &Path,
    self_test_command: Option<String>,
) -> ExitCode {
    let mut report = Report::default();
    check_claude_version(&mut report);
    let files = scope_files(project, managed_dir);
    let mut registered: Vec<(String, bool, RegisteredHook)> = Vec::new();
    let mut disabled_by = Vec::new();
    let mut managed_only = None;
    for file in &files {
        let Ok(text) = std::fs::read_to_string(&file.path) else {
            continue;
        };
        let value: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        if value["disableAllHooks"] == true {
            disabled_by.push((file.label.clone(), file.managed));
        }
        if file.managed && value["allowManagedHooksOnly"] == true {
            managed_only = Some(file.label.clone());
        }
        let found = registered_claude_hooks(&text);
        if found.is_empty() {
            report.note(format!("{}: janua's hook not registered", file.label));
        }
        for hook in found {
            report.note(format!(
                "{}: {} (matcher {:?}) runs {}",
                file.label, hook.event, hook.matcher, hook.runs
            ));
            registered.push((file.label.clone(), file.managed, hook));
        }
    }
    let installed_managed = registered.iter().any(|(_, managed, _)| *managed);
    // What Claude Code will actually run: with allowManagedHooksOnly, only managed handlers.
    let effective: Vec<&(String, bool, RegisteredHook)> = registered
        .iter()
        .filter(|(_, managed, _)| managed_only.is_none() || *managed)
        .collect();
    if let Some(file) = &managed_only
        && !installed_managed
        && !registered.is_empty()
    {
        report.fail(
            format!(
                "{file} sets allowManagedHooksOnly, so janua's user or project hook never runs"
            ),
            "sudo janua hook install --claude --scope managed",
        );
    }
    for event in ["PreToolUse", "PermissionRequest"] {
        let handlers: Vec<&RegisteredHook> = effective
            .iter()
            .map(|(_, _, hook)| hook)
            .filter(|hook| hook.event == event)
            .collect();
        if handlers.is_empty() {
            report.fail(
                format!("no janua handler for {event}: Claude Code decides those calls without janua"),
                "janua hook install --claude (add --scope managed so no repository can switch it off)",
            );
            continue;
        }
        if !handlers.iter().any(|hook| hook.matches_every_tool()) {
            let matchers: Vec<&str> = handlers.iter().map(|hook| hook.matcher.as_str()).collect();
            report.fail(
                format!("janua's {event} handler matches only {matchers:?}: other tools (Monitor, Write, MCP tools) never reach janua"),
                "janua hook install --claude (it registers the matcher \"*\")",
            );
        }
        if handlers.iter().any(|hook| hook.asynchronous) {
            report.fail(
                format!(
                    "a janua {event} handler is \"async\": Claude Code does not wait for its answer"
                ),
                "janua hook install --claude (it registers a synchronous handler)",
            );
        }
        if handlers.iter().any(|hook| !hook.blocks_on_failure) {
            report.fail(
                format!("a janua {event} handler has no \"onFailure\": \"block\": if janua cannot run (missing binary, crash, timeout), Claude Code runs the call"),
                "janua hook install --claude (it writes \"onFailure\": \"block\")",
            );
        }
    }
    for (file, managed) in &disabled_by {
        if *managed || !installed_managed {
            report.fail(
                format!("{file} sets disableAllHooks: Claude Code runs no hook, janua's included"),
                if *managed {
                    "remove disableAllHooks from the managed settings"
                } else {
                    "remove it, or install janua where no repository can switch it off: sudo janua hook install --claude --scope managed"
                },
            );
        } else {
            report.note(format!(
                "{file} sets disableAllHooks; janua's managed hook still runs"
            ));
        }
    }
    check_trust(&mut report, project);
    // A decision through the registered command, as Claude Code would run it. An `http`
    // handler needs `janua hook serve` running; the self-test goes through a command.
    let command = effective
        .iter()
        .map(|(_, _, hook)| hook.runs.clone())
        .find(|runs| !runs.starts_with("http://"))
        .or(self_test_command);
    if let Some(command) = command {
        let event = serde_json::json!({
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "rm -rf ~"}, "cwd": project, "permission_mode": "default",
        });
        match self_test(&command, &event.to_string(), project) {
            Ok(decision) if decision == "ask" || decision == "deny" => {
                report.fine(format!(
                    "self-test: `rm -rf ~` through `{command}` answered {decision}"
                ));
            }
            Ok(decision) => report.fail(
                format!(
                    "self-test: `rm -rf ~` through `{command}` answered {decision:?}, expected ask or deny"
                ),
                "reinstall janua's hook: janua hook install --claude",
            ),
            Err(problem) => report.fail(
                format!("self-test: `{command}` failed: {problem}"),
                "reinstall janua's hook: janua hook install --claude",
            ),
        }
    }
    if report.failed {
        ExitCode::from(1)
    } else {
        println!("janua's hook runs on every Claude Code tool call");
        ExitCode::SUCCESS
    }
}

/// The settings files Claude Code reads, with the scope each is in: managed (drop-ins and the
/// base file), user (`$CLAUDE_CONFIG_DIR` honoured), project, local.
fn scope_files(project: &Path, managed_dir: &Path) -> Vec<ScopeFile> {
    let mut files: Vec<ScopeFile> =
        janua::config::claude_managed_files(&managed_dir.join("managed-settings.json"))
            .into_iter()
            .map(|path| ScopeFile {
                label: format!("managed settings {}", path.display()),
                path,
                managed: true,
            })
            .collect();
    for scope in [ClaudeScope::User, ClaudeScope::Project, ClaudeScope::Local] {
        if let Some(path) = scope.path(project, managed_dir) {
            files.push(ScopeFile {
                label: format!("{} settings {}", scope.name(), path.display()),
                path,
                managed: false,
            });
        }
    }
    files
}

/// Claude Code on `PATH`, new enough to honour `"onFailure": "block"`.
fn check_claude_version(report: &mut Report) {
    let output = std::process::Command::new("claude")
        .arg("--version")
        .output();
    let Ok(output) = output
        .as_ref()
        .map_err(ToString::to_string)
        .and_then(|output| {
            if output.status.success() {
                Ok(output)
            } else {
                Err(format!("exit {:?}", output.status.code()))
            }
        })
    else {
        report.fail(
            "claude: not found on PATH (or it failed): janua cannot tell whether Claude Code honours \"onFailure\"".to_owned(),
            "install Claude Code 2.1.295 or later, or put it on PATH",
        );
        return;
    };
    let text = String::from_utf8_lossy(&output.stdout);
    let version: Option<Vec<u64>> = text.split_whitespace().next().map(|word| {
        word.split('.')
            .filter_map(|part| part.parse().ok())
            .collect()
    });
    match version.filter(|parts| parts.len() == 3) {
        Some(parts) if parts.as_slice() >= ON_FAILURE_SINCE.as_slice() => report.fine(format!(
            "claude {}: honours \"onFailure\": \"block\" (a hook that cannot run blocks the call)",
            text.trim()
        )),
        Some(_) => report.fail(
            format!(
                "claude {}: too old for \"onFailure\" (needs 2.1.295 or later): if janua cannot run, Claude Code runs the call",
                text.trim()
            ),
            "update Claude Code",
        ),
        None => report.fail(
            format!("claude: version {:?} not understood", text.trim()),
            "install Claude Code 2.1.295 or later",
        ),
    }
}

/// Whether Claude Code recorded its trust dialog as accepted for `project`: hooks run only then.
fn check_trust(report: &mut Report, project: &Path) {
    match claude_trust(project) {
        Some(true) => report.fine(format!(
            "Claude Code trusts {}: its hooks run",
            project.display()
        )),
        Some(false) => report.note(format!(
            "Claude Code has not trusted {} yet: hooks run once its trust dialog is accepted (and nothing runs before)",
            project.display()
        )),
        None => report.note(format!(
            "Claude Code's trust for {}: no record in {}",
            project.display(),
            claude_state_path().map_or_else(|| "~/.claude.json".to_owned(), |path| path.display().to_string())
        )),
    }
}

/// Claude Code's state file: `$CLAUDE_CONFIG_DIR/.claude.json` when that is set, else
/// `~/.claude.json`.
fn claude_state_path() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|value| !value.is_empty());
    if let Some(dir) = non_empty("CLAUDE_CONFIG_DIR") {
        return Some(PathBuf::from(dir).join(".claude.json"));
    }
    non_empty("HOME").map(|home| PathBuf::from(home).join(".claude.json"))
}

/// Whether Claude Code recorded its trust dialog as accepted for `project` (best effort: `None`
/// when there is no record).
fn claude_trust(project: &Path) -> Option<bool> {
    let text = std::fs::read_to_string(claude_state_path()?).ok()?;
    let state: serde_json::Value = serde_json::from_str(&text).ok()?;
    state["projects"][project.to_string_lossy().as_ref()]["hasTrustDialogAccepted"].as_bool()
}

/// Runs `command` as Claude Code runs a command hook (`sh -c`) with `event` on stdin; the
/// `permissionDecision` it printed.
fn self_test(command: &str, event: &str, project: &Path) -> Result<String, String> {
    use std::io::Write as _;
    let mut child = std::process::Command::new("/bin/sh")
        .args(["-c", command])
        .current_dir(project)
        .env("CLAUDE_PROJECT_DIR", project)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .map_err(|error| error.to_string())?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(event.as_bytes())
            .map_err(|error| error.to_string())?;
    }
    let output = child
        .wait_with_output()
        .map_err(|error| error.to_string())?;
    if !output.status.success() {
        return Err(format!(
            "exit {:?}: {}",
            output.status.code(),
            String::from_utf8_lossy(&output.stderr).trim()
        ));
    }
    let answer: serde_json::Value = serde_json::from_slice(&output.stdout).map_err(|_| {
        format!(
            "no answer on stdout ({:?})",
            String::from_utf8_lossy(&output.stdout)
        )
    })?;
    Ok(answer["hookSpecificOutput"]["permissionDecision"]
        .as_str()
        .unwrap_or_default()
        .to_owned())
}
