//! WASM hooks from plugin manifests (`[[hooks]]`), exercised with the real `hooks-scripted` guest:
//! every decision path and its precedence, rewrites, conflicts, failures, `if`, matchers, the
//! hook's own sandbox, defer and resume, PermissionRequest, PermissionDenied, PostToolUse output
//! replacement, PostToolBatch, session events and the output cap.

use janua::{ErrorKind, Runtime, RuntimeConfig};

use janua::rules::DecidedBy;
use janua_test_guests::{HOOKS_SCRIPTED, PIPELINE_ECHO};
use serde_json::{Value, json};

use crate::support::{Fixture, call, error_text, janua_bin, ok_text};

/// `value` as a TOML inline value (the manifest's `config`); JSON null has no TOML form.
pub(crate) fn toml_inline(value: &Value) -> String {
    match value {
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(key, value)| format!("{} = {}", json!(key), toml_inline(value)))
                .collect();
            format!("{{ {} }}", fields.join(", "))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(toml_inline).collect::<Vec<_>>().join(", ")
        ),
        Value::Null => panic!("TOML has no null"),
        other => other.to_string(),
    }
}

/// A `[[hooks]]` table for the scripted guest, named `name`.
pub(crate) fn hook(
    name: &str,
    events: &[&str],
    matcher: &str,
    config: Value,
    extra: &str,
) -> String {
    format!(
        "[[hooks]]\ncomponent = \"ext.wasm\"\nname = \"{name}\"\nevents = {}\nmatcher = \"{matcher}\"\nconfig = {}\n{extra}\n",
        json!(events),
        toml_inline(&config)
    )
}

fn pre(decision: &str, reason: &str) -> Value {
    json!({"behaviour": "answer", "answer": {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": decision, "permissionDecisionReason": reason}}})
}

/// A runtime with the Echo/Picky plugin and a hook plugin made of `tables`.
async fn with_hooks(
    fixture: &Fixture,
    tables: &[String],
    configure: impl FnOnce(&mut RuntimeConfig),
) -> Runtime {
    let echo = fixture.plugin("echo", PIPELINE_ECHO, "");
    let hooks = fixture.extension_plugin("hooks", HOOKS_SCRIPTED, &tables.join("\n"));
    fixture.runtime(&[echo, hooks], configure).await
}

fn allow_echo(config: &mut RuntimeConfig) {
    config.allowed_tools = vec!["Echo".into(), "Picky".into()];
}

fn decided_by(result: &janua::Dispatch) -> DecidedBy {
    result
        .outcome
        .decision
        .as_ref()
        .expect("a decision was made")
        .decided_by
        .clone()
}

/// The named test of the `hooks-scripted` guest: a WASM hook receives Claude Code's event shape,
/// with its manifest `config`, for PreToolUse and PostToolUse.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn hooks_scripted() {
    let fixture = Fixture::new();
    let runtime = with_hooks(
        &fixture,
        &[hook(
            "echoer",
            &["PreToolUse", "PostToolUse"],
            "Echo",
            json!({"behaviour": "echo", "marker": 7}),
            "",
        )],
        allow_echo,
    )
    .await;
    let result = call(&runtime, "Echo", json!({"text": "hi", "count": "2"})).await;
    assert_eq!(result.outcome.additional_context.len(), 2);
    let pre: Value = serde_json::from_str(
        result.outcome.additional_context[0]
            .strip_prefix("[PreToolUse hook echoer] ")
            .unwrap(),
    )
    .unwrap();
    assert_eq!(pre["hook_event_name"], "PreToolUse");
    assert_eq!(pre["tool_name"], "Echo");
    assert_eq!(pre["tool_use_id"], "toolu_test");
    assert_eq!(pre["tool_input"], json!({"text": "hi", "count": 2}));
    assert_eq!(pre["permission_mode"], "default");
    assert_eq!(pre["session_id"], runtime.session().id());
    assert_eq!(pre["cwd"], fixture.workspace().display().to_string());
    assert_eq!(pre["config"]["marker"], 7);
    let post_text = &result.outcome.additional_context[1];
    let post: Value = serde_json::from_str(
        post_text
            .strip_prefix("[PostToolUse hook echoer] ")
            .unwrap(),
    )
    .unwrap();
    assert_eq!(post["hook_event_name"], "PostToolUse");
    assert_eq!(post["tool_response"]["input"]["text"], "hi");
    assert!(post["duration_ms"].is_u64());
}

/// deny > defer > ask > allow across hooks, whatever their order; a hook allow never beats an
/// ask rule.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn votes_combine_deny_defer_ask_allow() {
    let cases: &[(&[&str], Option<ErrorKind>, &str)] = &[
        (&["allow"], None, "allow"),
        (&["allow", "ask"], Some(ErrorKind::PermissionDenied), "ask"),
        (
            &["ask", "deny", "allow"],
            Some(ErrorKind::PermissionDenied),
            "deny",
        ),
        (
            &["allow", "defer", "ask"],
            Some(ErrorKind::Deferred),
            "defer",
        ),
        (
            &["defer", "deny"],
            Some(ErrorKind::PermissionDenied),
            "deny",
        ),
    ];
    for (votes, expected, winner) in cases {
        let fixture = Fixture::new();
        let tables: Vec<String> = votes
            .iter()
            .map(|vote| {
                hook(
                    vote,
                    &["PreToolUse"],
                    "Echo",
                    pre(vote, &format!("{vote} says so")),
                    "",
                )
            })
            .collect();
        // No allow rule: without hooks, Echo (write class) would be asked and denied headless.
        let runtime = with_hooks(&fixture, &tables, |_| {}).await;
        let result = call(&runtime, "Echo", json!({"text": "x"})).await;
        match expected {
            None => {
                ok_text(&result);
            }
            Some(kind) => {
                let text = error_text(&result, *kind);
                if *winner == "deny" {
                    assert!(
                        text.contains(&format!("{winner} says so")),
                        "{votes:?}: {text}"
                    );
                }
            }
        }
        match decided_by(&result) {
            DecidedBy::Hook { hook } => assert_eq!(hook, *winner, "{votes:?}"),
            // An ask vote goes to the prompter, and nobody can answer headless.
            DecidedBy::NoPrompter => {
                assert_eq!(*winner, "ask");
                assert!(
                    result.block.text().contains("ask says so"),
                    "{votes:?}: {}",
                    result.block.text()
                );
            }
            other => panic!("{votes:?}: decided by {other:?}"),
        }
    }

    let fixture = Fixture::new();
    let runtime = with_hooks(
        &fixture,
        &[hook(
            "approver",
            &["PreToolUse"],
            "Echo",
            pre("allow", "fine"),
            "",
        )],
        |config| {
            config.settings_json = vec![r#"{"permissions": {"ask": ["Echo"]}}"#.to_owned()];
        },
    )
    .await;
    let result = call(&runtime, "Echo", json!({"text": "x"})).await;
    error_text(&result, ErrorKind::PermissionDenied);
    assert!(
        matches!(decided_by(&result), DecidedBy::NoPrompter),
        "{:?}",
        result.outcome.decision
    );
}

/// A rewrite replaces the whole input before the decision, which sees the rewritten input; two
/// different rewrites deny the call, two equal ones apply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewrites_are_seen_by_the_decision_and_conflicts_deny() {
    let fixture = Fixture::new();
    let rewrite = |name: &str, text: &str| {
        hook(
            name,
            &["PreToolUse"],
            "Echo",
            json!({"behaviour": "rewrite", "set": {"text": text}}),
            "",
        )
    };
    let runtime = with_hooks(&fixture, &[rewrite("one", "blocked now")], |config| {
        allow_echo(config);
        config.disallowed_tools = vec!["Echo(text:blocked*)".into()];
    })
    .await;
    let result = call(&runtime, "Echo", json!({"text": "harmless"})).await;
    error_text(&result, ErrorKind::PermissionDenied);
    assert!(matches!(decided_by(&result), DecidedBy::DenyRule { .. }));
    assert_eq!(
        result.outcome.input.as_ref().unwrap()["text"],
        "blocked now"
    );
    assert_eq!(result.outcome.input_rewritten_by.as_deref(), Some("one"));

    let fixture = Fixture::new();
    let runtime = with_hooks(
        &fixture,
        &[rewrite("one", "a"), rewrite("two", "b")],
        allow_echo,
    )
    .await;
    let text = error_text(
        &call(&runtime, "Echo", json!({"text": "x"})).await,
        ErrorKind::HookConflict,
    );
    assert!(
        text.contains("one and two rewrote the input differently"),
        "{text}"
    );

    let fixture = Fixture::new();
    let runtime = with_hooks(
        &fixture,
        &[rewrite("one", "same"), rewrite("two", "same")],
        allow_echo,
    )
    .await;
    let result = call(&runtime, "Echo", json!({"text": "x"})).await;
    assert!(ok_text(&result).contains("\"text\":\"same\""));
    assert_eq!(
        result.outcome.input_rewritten_by.as_deref(),
        Some("one, two")
    );
}

/// A hook that traps, loops past its timeout, answers garbage or reports an error denies a
/// PreToolUse call (fail closed) unless declared `on-error = "ignore"`; after the call the same
/// failures are warnings.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_hooks_deny_policy_events_and_are_ignored_after_the_call() {
    let cases = [
        ("trap", "trapped"),
        ("loop", "timed out"),
        ("garbage", "not JSON"),
        ("err", "scripted failure"),
    ];
    for (behaviour, symptom) in cases {
        let fixture = Fixture::new();
        let config = json!({"behaviour": behaviour});
        let tables = [
            hook(
                "gate",
                &["PreToolUse"],
                "Echo",
                config.clone(),
                "timeout = 1",
            ),
            hook(
                "lenient",
                &["PreToolUse"],
                "Picky",
                config.clone(),
                "timeout = 1\non-error = \"ignore\"",
            ),
            hook("after", &["PostToolUse"], "*", config, "timeout = 1"),
        ];
        let runtime = with_hooks(&fixture, &tables, allow_echo).await;
        let denied = call(&runtime, "Echo", json!({"text": "x"})).await;
        let text = error_text(&denied, ErrorKind::PermissionDenied);
        assert!(
            text.contains("the PreToolUse hook gate failed") && text.contains(symptom),
            "{behaviour}: {text}"
        );
        let allowed = call(&runtime, "Picky", json!({"word": "x"})).await;
        ok_text(&allowed);
        let warnings = allowed.outcome.warnings.join("\n");
        assert!(
            warnings.contains("lenient failed and is ignored") && warnings.contains(symptom),
            "{behaviour}: {warnings}"
        );
        assert!(
            warnings.contains("the PostToolUse hook after failed"),
            "{behaviour}: {warnings}"
        );
    }
}

/// `if` runs a hook only for calls its rule touches; matchers select tools as Claude Code reads
/// them (exact lists, or an unanchored regex).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn if_rules_and_matchers_select_calls() {
    let fixture = Fixture::new();
    let tables = [
        hook(
            "only-danger",
            &["PreToolUse"],
            "Echo",
            pre("deny", "danger"),
            "if = \"Echo(text:danger*)\"",
        ),
        hook(
            "regex",
            &["PreToolUse"],
            "^Pick.$",
            pre("deny", "regex hit"),
            "",
        ),
        hook(
            "list",
            &["PreToolUse"],
            "Nothing, Other",
            pre("deny", "list hit"),
            "",
        ),
        // A `/` path in a plugin's `if` is anchored at the workspace, not the plugin directory.
        hook(
            "docs-only",
            &["PreToolUse"],
            "Read",
            pre("deny", "docs are off"),
            "if = \"Read(/docs/**)\"",
        ),
    ];
    fixture.write("docs/a.md", "doc\n");
    fixture.write("notes.md", "note\n");
    let runtime = with_hooks(&fixture, &tables, allow_echo).await;
    ok_text(&call(&runtime, "Echo", json!({"text": "calm"})).await);
    ok_text(&call(&runtime, "Read", json!({"file_path": "notes.md"})).await);
    let text = error_text(
        &call(&runtime, "Read", json!({"file_path": "docs/a.md"})).await,
        ErrorKind::PermissionDenied,
    );
    assert!(text.contains("docs are off"), "{text}");
    let text = error_text(
        &call(&runtime, "Echo", json!({"text": "danger zone"})).await,
        ErrorKind::PermissionDenied,
    );
    assert!(text.contains("danger"), "{text}");
    let text = error_text(
        &call(&runtime, "Picky", json!({"word": "x"})).await,
        ErrorKind::PermissionDenied,
    );
    assert!(text.contains("regex hit"), "{text}");

    let report = runtime.extensions();
    let covers = |name: &str| {
        report
            .hooks
            .iter()
            .find(|hook| hook.name == name)
            .unwrap()
            .covers
            .clone()
    };
    assert_eq!(covers("regex"), ["Picky"]);
    assert!(covers("list").is_empty());
    let unanchored = janua::extensions::Matcher::parse("Edit.*").unwrap();
    assert!(unanchored.matches("NotebookEdit"));
}

/// A hook runs in its own sandbox: without grants it cannot read the workspace or see the host's
/// environment; its grants open exactly what they name, and nothing outside the workspace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_reaches_only_what_its_grants_name() {
    let fixture = Fixture::new();
    let inside = fixture.write("inside.txt", "INSIDE-text\n");
    let secret = fixture.outside().join("secret.txt");
    let probe = |path: &std::path::Path| json!({"behaviour": "probe", "path": path.display().to_string(), "env": "PATH"});
    let grants =
        "grants = { fs = [{ path = \"${WORKSPACE}\", access = \"read\" }], env = [\"PATH\"] }";
    let tables = [
        hook("bare", &["PreToolUse"], "Echo", probe(&inside), ""),
        hook("granted", &["PreToolUse"], "Picky", probe(&inside), grants),
        hook("escaping", &["PreToolUse"], "Picky", probe(&secret), grants),
    ];
    let runtime = with_hooks(&fixture, &tables, allow_echo).await;
    let bare = call(&runtime, "Echo", json!({"text": "x"})).await;
    let context = bare.outcome.additional_context.join("\n");
    assert!(context.contains("read: error:"), "{context}");
    assert!(context.contains("env: unset"), "{context}");
    assert!(!context.contains("INSIDE"), "{context}");
    let granted = call(&runtime, "Picky", json!({"word": "x"})).await;
    let context = granted.outcome.additional_context;
    assert_eq!(context.len(), 2, "{context:?}");
    assert!(context[0].contains("read: ok:INSIDE-text"), "{context:?}");
    assert!(context[0].contains("env: set:"), "{context:?}");
    assert!(context[1].contains("read: error:"), "{context:?}");
    assert!(!context[1].contains("TOPSECRET"), "{context:?}");
}

/// A deferred call is stored in the session and resumed through the whole pipeline, PreToolUse
/// again included; in a batch of several calls a defer is ignored with a warning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defer_stores_the_call_and_resume_runs_it_again() {
    let fixture = Fixture::new();
    let echo = fixture.plugin("echo", PIPELINE_ECHO, "");
    let deferring = fixture.extension_plugin(
        "deferring",
        HOOKS_SCRIPTED,
        &hook("later", &["PreToolUse"], "Echo", pre("defer", ""), ""),
    );
    let approving = fixture.extension_plugin(
        "approving",
        HOOKS_SCRIPTED,
        &hook(
            "now",
            &["PreToolUse"],
            "Echo",
            json!({"behaviour": "echo"}),
            "",
        ),
    );
    let run = |plugins: &[&std::path::Path], args: &[&str]| {
        let mut command = std::process::Command::new(janua_bin());
        command
            .arg("--cwd")
            .arg(fixture.workspace())
            .arg("--state-dir")
            .arg(fixture.state_dir())
            .arg("--cache-dir")
            .arg(crate::support::cache_dir())
            .arg("--no-user-settings")
            .args(["--allowedTools", "Echo", "--session", "s1"]);
        for plugin in plugins {
            command.arg("--plugins").arg(plugin);
        }
        command.args(args).output().expect("run janua")
    };
    let first = run(
        &[&echo, &deferring],
        &[
            "call",
            "Echo",
            "--id",
            "toolu_d1",
            "--input",
            r#"{"text":"later"}"#,
            "--outcome",
        ],
    );
    assert_eq!(first.status.code(), Some(1));
    let printed: Value = serde_json::from_slice(&first.stdout).unwrap();
    assert_eq!(printed["outcome"]["error"]["kind"], "deferred");
    assert_eq!(
        printed["outcome"]["deferred"],
        json!({"id": "toolu_d1", "name": "Echo", "input": {"text": "later"}})
    );
    assert!(
        printed["tool_result"]["content"]
            .as_str()
            .unwrap()
            .contains("--resume-deferred toolu_d1")
    );

    let resumed = run(
        &[&echo, &approving],
        &["call", "--resume-deferred", "toolu_d1", "--outcome"],
    );
    assert_eq!(
        resumed.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&resumed.stderr)
    );
    let printed: Value = serde_json::from_slice(&resumed.stdout).unwrap();
    assert_eq!(printed["tool_result"]["tool_use_id"], "toolu_d1");
    let context = printed["outcome"]["additional_context"][0]
        .as_str()
        .unwrap();
    assert!(
        context.contains("\"hook_event_name\":\"PreToolUse\""),
        "{context}"
    );
    // Resumed once: the call is no longer waiting.
    let again = run(
        &[&echo, &approving],
        &["call", "--resume-deferred", "toolu_d1"],
    );
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("holds no deferred call"));

    let fixture = Fixture::new();
    let runtime = with_hooks(
        &fixture,
        &[hook("later", &["PreToolUse"], "Echo", pre("defer", ""), "")],
        allow_echo,
    )
    .await;
    let batch = runtime
        .dispatch_batch(crate::support::batch(&[
            ("a", "Echo", json!({"text": "1"})),
            ("b", "Echo", json!({"text": "2"})),
        ]))
        .await;
    for result in &batch.results {
        ok_text(result);
        assert!(
            result
                .outcome
                .warnings
                .iter()
                .any(|w| w.contains("only a batch of one call can be deferred")),
            "{:?}",
            result.outcome.warnings
        );
    }
}

/// PermissionRequest hooks answer an `ask` before the prompter: allow (adding session rules),
/// deny with a message, or allow a rewrite that is checked again against the deny rules.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_request_hooks_answer_asks() {
    let answer = |decision: Value| {
        json!({"behaviour": "answer", "answer": {"hookSpecificOutput": {
            "hookEventName": "PermissionRequest", "decision": decision}}})
    };
    let fixture = Fixture::new();
    let tables = [hook(
        "granter",
        &["PermissionRequest"],
        "Echo",
        answer(json!({"behavior": "allow", "updatedPermissions": [
            {"type": "addRules", "rules": [{"toolName": "Echo"}], "behavior": "allow", "destination": "session"}]})),
        "",
    )];
    let runtime = with_hooks(&fixture, &tables, |_| {}).await;
    let result = call(&runtime, "Echo", json!({"text": "x"})).await;
    ok_text(&result);
    assert_eq!(
        decided_by(&result),
        DecidedBy::PermissionHook {
            hook: "granter".into()
        }
    );
    let rules: Vec<String> = runtime
        .policy()
        .session_rules()
        .iter()
        .map(|rule| rule.text().to_owned())
        .collect();
    assert_eq!(rules, ["Echo"]);
    let second = call(&runtime, "Echo", json!({"text": "y"})).await;
    assert!(matches!(decided_by(&second), DecidedBy::AllowRule { .. }));

    let fixture = Fixture::new();
    let tables = [
        hook(
            "refuser",
            &["PermissionRequest"],
            "Picky",
            answer(json!({"behavior": "deny", "message": "not on Fridays"})),
            "",
        ),
        hook(
            "rewriter",
            &["PermissionRequest"],
            "Echo",
            answer(json!({"behavior": "allow", "updatedInput": {"text": "blocked by rule"}})),
            "",
        ),
    ];
    let runtime = with_hooks(&fixture, &tables, |config| {
        config.disallowed_tools = vec!["Echo(text:blocked*)".into()];
        config.settings_json = vec![r#"{"permissions": {"ask": ["Picky"]}}"#.to_owned()];
    })
    .await;
    let text = error_text(
        &call(&runtime, "Picky", json!({"word": "x"})).await,
        ErrorKind::PermissionDenied,
    );
    assert!(text.contains("not on Fridays"), "{text}");
    let result = call(&runtime, "Echo", json!({"text": "fine"})).await;
    error_text(&result, ErrorKind::PermissionDenied);
    assert!(matches!(decided_by(&result), DecidedBy::DenyRule { .. }));

    // A failing PermissionRequest hook denies (unless ignored, when the ask goes on to the
    // prompter); a hook cannot add rules for other tools.
    let fixture = Fixture::new();
    let tables = [
        hook(
            "crasher",
            &["PermissionRequest"],
            "Echo",
            json!({"behaviour": "trap"}),
            "",
        ),
        hook(
            "lenient",
            &["PermissionRequest"],
            "Picky",
            json!({"behaviour": "garbage"}),
            "on-error = \"ignore\"",
        ),
        hook(
            "overreach",
            &["PermissionRequest"],
            "Picky",
            answer(json!({"behavior": "allow", "updatedPermissions": [
                {"type": "addRules", "rules": [{"toolName": "Bash"}], "behavior": "allow", "destination": "session"}]})),
            "",
        ),
    ];
    let runtime = with_hooks(&fixture, &tables, |config| {
        config.settings_json = vec![r#"{"permissions": {"ask": ["Picky"]}}"#.to_owned()];
    })
    .await;
    let crashed = call(&runtime, "Echo", json!({"text": "x"})).await;
    let text = error_text(&crashed, ErrorKind::PermissionDenied);
    assert!(
        text.contains("PermissionRequest hook crasher failed"),
        "{text}"
    );
    let picky = call(&runtime, "Picky", json!({"word": "x"})).await;
    ok_text(&picky);
    let warnings = picky.outcome.warnings.join("\n");
    assert!(
        warnings.contains("lenient failed and is ignored"),
        "{warnings}"
    );
    assert!(warnings.contains("\"Bash\" is ignored"), "{warnings}");
    assert!(runtime.policy().session_rules().is_empty());
}

/// PermissionDenied hooks may tell the model it can retry.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_denied_hooks_can_invite_a_retry() {
    let fixture = Fixture::new();
    let tables = [hook(
        "coach",
        &["PermissionDenied"],
        "*",
        json!({"behaviour": "answer", "answer": {"hookSpecificOutput": {
            "hookEventName": "PermissionDenied", "retry": true, "additionalContext": "ask the user first"}}}),
        "",
    )];
    let runtime = with_hooks(&fixture, &tables, |config| {
        config.disallowed_tools = vec!["Echo(text:no*)".into()];
        allow_echo(config);
    })
    .await;
    let text = error_text(
        &call(&runtime, "Echo", json!({"text": "nope"})).await,
        ErrorKind::PermissionDenied,
    );
    assert!(
        text.contains("[PermissionDenied hook coach] you may retry this call"),
        "{text}"
    );
    assert!(text.contains("ask the user first"), "{text}");
}

/// `updatedToolOutput` replaces what the model sees only when it has the shape of the tool's
/// structured result; `decision: "block"` adds feedback next to the result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_tool_use_replaces_output_that_fits_and_adds_feedback() {
    let post = |answer: Value| json!({"behaviour": "answer", "answer": answer});
    let fixture = Fixture::new();
    let tables = [
        hook(
            "redactor",
            &["PostToolUse"],
            "Echo",
            post(
                json!({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                "updatedToolOutput": {"input": {"text": "[redacted]"}, "call_id": "c"}}}),
            ),
            "",
        ),
        hook(
            "misfit",
            &["PostToolUse"],
            "Picky",
            post(json!({"decision": "block", "reason": "double-check this",
                "hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": 42}})),
            "",
        ),
    ];
    let runtime = with_hooks(&fixture, &tables, allow_echo).await;
    let result = call(&runtime, "Echo", json!({"text": "secret"})).await;
    let text = ok_text(&result);
    assert!(
        text.contains("[redacted]") && !text.contains("secret"),
        "{text}"
    );
    assert_eq!(
        result.outcome.structured.as_ref().unwrap()["input"]["text"],
        "[redacted]"
    );
    let result = call(&runtime, "Picky", json!({"word": "kept"})).await;
    let text = ok_text(&result);
    assert!(
        text.contains("[PostToolUse hook misfit] double-check this"),
        "{text}"
    );
    assert!(
        result
            .outcome
            .warnings
            .iter()
            .any(|w| w.contains("misfit's updatedToolOutput is ignored")),
        "{:?}",
        result.outcome.warnings
    );
}

/// Hook text past 10,000 characters is saved whole in the session directory; the result keeps
/// a preview and the path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_hook_context_is_saved_to_a_file() {
    let fixture = Fixture::new();
    let long = format!("{}END", "context ".repeat(1_600));
    let tables = [hook(
        "verbose",
        &["PreToolUse"],
        "Echo",
        json!({"behaviour": "answer", "answer": {"hookSpecificOutput": {
            "hookEventName": "PreToolUse", "additionalContext": long}}}),
        "",
    )];
    let runtime = with_hooks(&fixture, &tables, allow_echo).await;
    let result = call(&runtime, "Echo", json!({"text": "x"})).await;
    let context = &result.outcome.additional_context[0];
    assert!(context.len() < 3_000, "{}", context.len());
    let path = context
        .rsplit("all of it is in ")
        .next()
        .unwrap()
        .trim_end_matches(']');
    assert!(path.starts_with(&runtime.session().dir().display().to_string()));
    assert_eq!(std::fs::read_to_string(path).unwrap(), long);
}

/// A hook answering 100 MB of context runs out of its memory limit building the answer: the
/// policy hook failed, so the call is denied (fail closed) with a message saying why, and calls the
/// hook does not match are served as usual.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hook_answering_100_mb_fails_closed_within_its_memory_limit() {
    let fixture = Fixture::new();
    let tables = [hook(
        "flood",
        &["PreToolUse"],
        "Echo",
        json!({"behaviour": "flood"}),
        "",
    )];
    let runtime = with_hooks(&fixture, &tables, allow_echo).await;
    let result = call(&runtime, "Echo", json!({"text": "x"})).await;
    let text = error_text(&result, ErrorKind::PermissionDenied);
    assert!(
        text.contains("the PreToolUse hook flood failed")
            && text.contains("memory limit of 256 MiB reached"),
        "{text}"
    );
    assert!(text.len() < 1_000, "{}", text.len());
    ok_text(&call(&runtime, "Picky", json!({"word": "x"})).await);
}

/// PostToolBatch hooks see every call of the batch with the content the model sees, and may stop
/// the loop; SessionStart and SessionEnd hooks run with their source and reason.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn batch_and_session_hooks() {
    let fixture = Fixture::new();
    let tables = [
        hook(
            "batcher",
            &["PostToolBatch"],
            "",
            json!({"behaviour": "echo"}),
            "",
        ),
        hook(
            "stopper",
            &["PostToolBatch"],
            "",
            json!({"behaviour": "answer", "answer": {"decision": "block", "reason": "review first"}}),
            "",
        ),
        hook(
            "starter",
            &["SessionStart"],
            "startup",
            json!({"behaviour": "echo"}),
            "",
        ),
        hook(
            "resumer",
            &["SessionStart"],
            "resume",
            json!({"behaviour": "echo"}),
            "",
        ),
        hook(
            "ender",
            &["SessionEnd"],
            "*",
            json!({"behaviour": "trap"}),
            "",
        ),
    ];
    let runtime = with_hooks(&fixture, &tables, allow_echo).await;
    let started = runtime.start_session().await;
    assert_eq!(started.source, "startup");
    assert_eq!(started.additional_context.len(), 1, "{started:?}");
    assert!(started.additional_context[0].contains("\"source\":\"startup\""));
    let batch = runtime
        .dispatch_batch(crate::support::batch(&[
            ("one", "Echo", json!({"text": "a"})),
            ("two", "Picky", json!({"word": "b"})),
        ]))
        .await;
    assert_eq!(batch.additional_context.len(), 1);
    let event: Value = serde_json::from_str(&batch.additional_context[0]).unwrap();
    let calls = event["tool_calls"].as_array().unwrap();
    assert_eq!(calls.len(), 2);
    assert_eq!(calls[0]["tool_use_id"], "one");
    assert_eq!(calls[1]["tool_name"], "Picky");
    assert!(
        calls[0]["tool_response"]
            .as_str()
            .unwrap()
            .contains("\"a\"")
    );
    assert!(batch.stop.as_deref().unwrap().contains("review first"));
    let ended = runtime.end_session("other").await;
    assert!(
        ended
            .warnings
            .iter()
            .any(|w| w.contains("SessionEnd hook ender failed")),
        "{:?}",
        ended.warnings
    );
}

/// A hook without a `name` is named after its plugin and its place in `[[hooks]]`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unnamed_hook_is_named_after_its_plugin_and_table() {
    let fixture = Fixture::new();
    let unnamed = "[[hooks]]\ncomponent = \"ext.wasm\"\nevents = [\"PreToolUse\"]\n";
    let tables = [
        hook("first", &["PreToolUse"], "Echo", json!({}), ""),
        unnamed.to_owned(),
    ];
    let runtime = with_hooks(&fixture, &tables, allow_echo).await;
    let names: Vec<String> = runtime
        .extensions()
        .hooks
        .iter()
        .map(|hook| hook.name.clone())
        .collect();
    assert_eq!(names, ["first", "hooks/hooks[1]"]);
}
