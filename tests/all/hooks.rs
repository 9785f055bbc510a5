//! PreToolUse, PostToolUse and PostToolUseFailure, exercised with in-process hooks that answer in
//! Claude Code's JSON.

use std::sync::{Arc, Mutex};

use janua::{ErrorKind, FnHook, Runtime};

use janua::rules::DecidedBy;

use janua::extensions::HookEvent;
use janua_test_guests::PIPELINE_ECHO;
use serde_json::{Value, json};

use crate::support::{Fixture, call, error_text, ok_text};

async fn echo_runtime(fixture: &Fixture, allowed: &[&str], denied: &[&str]) -> Runtime {
    let plugin = fixture.plugin("echo", PIPELINE_ECHO, "");
    let allowed: Vec<String> = allowed.iter().map(|s| s.to_string()).collect();
    let denied: Vec<String> = denied.iter().map(|s| s.to_string()).collect();
    fixture
        .runtime(&[plugin], |c| {
            c.allowed_tools = allowed;
            c.disallowed_tools = denied;
        })
        .await
}

/// An Echo runtime with one answering PreToolUse hook `(matcher, name)`.
async fn echo_with_pre_hook(
    fixture: &Fixture,
    allowed: &[&str],
    denied: &[&str],
    (matcher, name): (&str, &str),
    answer: Value,
) -> Runtime {
    let mut runtime = echo_runtime(fixture, allowed, denied).await;
    answering(&mut runtime, HookEvent::PreToolUse, matcher, name, answer);
    runtime
}

fn answering(runtime: &mut Runtime, event: HookEvent, matcher: &str, name: &str, answer: Value) {
    runtime
        .add_hook(
            event,
            matcher,
            Arc::new(FnHook::new(name, move |_event: &Value| Ok(answer.clone()))),
        )
        .expect("valid matcher");
}

/// Asserts that the PreToolUse hook `hook` settled the decision of `result`.
fn assert_decided_by_hook(result: &janua::Dispatch, hook: &str) {
    let decision = result
        .outcome
        .decision
        .as_ref()
        .expect("a decision was made");
    assert_eq!(
        decision.decided_by,
        DecidedBy::Hook { hook: hook.into() },
        "{decision:?}"
    );
}

fn pre_decision(decision: &str, reason: &str) -> Value {
    json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": decision, "permissionDecisionReason": reason}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pre_hook_sees_claude_code_event_and_rewrites_input() {
    let fixture = Fixture::new();
    let mut runtime = echo_runtime(&fixture, &["Echo"], &[]).await;
    let seen = Arc::new(Mutex::new(Vec::<Value>::new()));
    let record = Arc::clone(&seen);
    runtime.add_hook(
        HookEvent::PreToolUse,
        "Echo",
        Arc::new(FnHook::new("rewriter", move |event: &Value| {
            record.lock().unwrap().push(event.clone());
            Ok(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "updatedInput": {"text": "rewritten"}}}))
        })),
    ).expect("valid matcher");
    let result = call(&runtime, "Echo", json!({"text": "original", "count": "3"})).await;
    let echoed: Value = serde_json::from_str(&ok_text(&result)).unwrap();
    assert_eq!(echoed["text"], "rewritten");
    assert_eq!(
        result.outcome.input_rewritten_by.as_deref(),
        Some("rewriter")
    );
    let events = seen.lock().unwrap();
    let event = &events[0];
    assert_eq!(event["hook_event_name"], "PreToolUse");
    assert_eq!(event["tool_name"], "Echo");
    assert_eq!(event["tool_use_id"], "toolu_test");
    assert_eq!(
        event["tool_input"],
        json!({"text": "original", "count": 3}),
        "hooks see coerced input"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewrite_that_breaks_the_schema_is_invalid_input() {
    let fixture = Fixture::new();
    let runtime = echo_with_pre_hook(
        &fixture,
        &["Echo"],
        &[],
        ("*", "breaker"),
        json!({"hookSpecificOutput": {"updatedInput": {"count": 1}}}),
    )
    .await;
    let text = error_text(
        &call(&runtime, "Echo", json!({"text": "x"})).await,
        ErrorKind::InvalidInput,
    );
    assert!(
        text.contains("after the PreToolUse hook breaker rewrote it"),
        "{text}"
    );
}

/// Issue 30, point 7: a rewrite goes through what the model's input went through — coercion,
/// the schema and the tool's own `validate-input` — and `janua check` reports the same failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rewrite_is_coerced_and_validated_again() {
    let fixture = Fixture::new();
    let runtime = echo_with_pre_hook(
        &fixture,
        &["Echo", "Picky"],
        &[],
        ("Picky", "shouter"),
        json!({"hookSpecificOutput": {"updatedInput": {"word": "LOUD"}}}),
    )
    .await;
    let result = call(&runtime, "Picky", json!({"word": "quiet"})).await;
    let text = error_text(&result, ErrorKind::ValidationFailed);
    assert!(
        text.contains("after the PreToolUse hook shouter rewrote it") && text.contains("LOUD"),
        "{text}"
    );
    let report = runtime
        .check(
            janua::ToolUse {
                id: "toolu_check".to_owned(),
                name: "Picky".to_owned(),
                input: json!({"word": "quiet"}),
            },
            true,
        )
        .await;
    let stage = report.stage_error.expect("the rewrite fails validation");
    assert_eq!(stage.kind, ErrorKind::ValidationFailed, "{}", stage.message);

    let runtime = echo_with_pre_hook(
        &fixture,
        &["Echo"],
        &[],
        ("Echo", "counter"),
        json!({"hookSpecificOutput": {"updatedInput": {"text": "t", "count": "7"}}}),
    )
    .await;
    let result = call(&runtime, "Echo", json!({"text": "x"})).await;
    let echoed: Value = serde_json::from_str(&ok_text(&result)).unwrap();
    assert_eq!(echoed["count"], 7, "the rewrite was coerced: {echoed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_deny_beats_an_allow_rule() {
    let fixture = Fixture::new();
    let runtime = echo_with_pre_hook(
        &fixture,
        &["Echo"],
        &[],
        ("Echo", "guard"),
        pre_decision("deny", "echo is off today"),
    )
    .await;
    let result = call(&runtime, "Echo", json!({"text": "x"})).await;
    assert!(error_text(&result, ErrorKind::PermissionDenied).contains("echo is off today"));
    assert_decided_by_hook(&result, "guard");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_allow_replaces_the_headless_ask() {
    let fixture = Fixture::new();
    let runtime = echo_with_pre_hook(
        &fixture,
        &[],
        &[],
        ("*", "approver"),
        pre_decision("allow", "fine"),
    )
    .await;
    let result = call(&runtime, "Echo", json!({"text": "hello"})).await;
    ok_text(&result);
    assert_decided_by_hook(&result, "approver");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_allow_does_not_override_a_scoped_deny_rule() {
    let fixture = Fixture::new();
    fixture.write("a.secret", "s\n");
    let mut runtime = fixture
        .runtime(&[], |c| c.disallowed_tools = vec!["Read(*.secret)".into()])
        .await;
    answering(
        &mut runtime,
        HookEvent::PreToolUse,
        "Read",
        "approver",
        pre_decision("allow", "fine"),
    );
    let result = call(&runtime, "Read", json!({"file_path": "a.secret"})).await;
    error_text(&result, ErrorKind::PermissionDenied);
    assert!(matches!(
        result.outcome.decision.unwrap().decided_by,
        DecidedBy::DenyRule { .. }
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_ask_overrides_an_allow_rule_and_headless_denies() {
    let fixture = Fixture::new();
    let runtime = echo_with_pre_hook(
        &fixture,
        &["Echo"],
        &[],
        ("*", "asker"),
        pre_decision("ask", "double-check"),
    )
    .await;
    let text = error_text(
        &call(&runtime, "Echo", json!({"text": "x"})).await,
        ErrorKind::PermissionDenied,
    );
    assert!(text.contains("double-check"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hook_stop_ends_the_call_and_defer_is_settled_by_the_decision() {
    let fixture = Fixture::new();
    let mut runtime = echo_runtime(&fixture, &["Echo"], &[]).await;
    answering(
        &mut runtime,
        HookEvent::PreToolUse,
        "Echo",
        "stopper",
        json!({"continue": false, "stopReason": "enough"}),
    );
    answering(
        &mut runtime,
        HookEvent::PreToolUse,
        "Picky",
        "deferrer",
        pre_decision("defer", ""),
    );
    let stopped = call(&runtime, "Echo", json!({"text": "x"})).await;
    assert!(error_text(&stopped, ErrorKind::HookStopped).contains("enough"));
    assert!(stopped.outcome.decision.is_none());
    let deferred = call(&runtime, "Picky", json!({"word": "x"})).await;
    error_text(&deferred, ErrorKind::Deferred);
    assert_decided_by_hook(&deferred, "deferrer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_or_malformed_pre_hook_fails_closed() {
    let fixture = Fixture::new();
    let mut runtime = echo_runtime(&fixture, &["Echo"], &[]).await;
    runtime
        .add_hook(
            HookEvent::PreToolUse,
            "Echo",
            Arc::new(FnHook::new("broken", |_: &Value| Err("boom".into()))),
        )
        .expect("valid matcher");
    answering(
        &mut runtime,
        HookEvent::PreToolUse,
        "Picky",
        "typo",
        json!({"hookSpecificOutput": {"permissionDecision": "alow"}}),
    );
    let text = error_text(
        &call(&runtime, "Echo", json!({"text": "x"})).await,
        ErrorKind::PermissionDenied,
    );
    assert!(text.contains("broken failed (boom)"), "{text}");
    let text = error_text(
        &call(&runtime, "Picky", json!({"word": "x"})).await,
        ErrorKind::PermissionDenied,
    );
    assert!(text.contains("invalid permissionDecision"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn post_hooks_see_the_response_and_add_context() {
    let fixture = Fixture::new();
    let mut runtime = echo_runtime(&fixture, &["Echo"], &[]).await;
    let seen = Arc::new(Mutex::new(Vec::<Value>::new()));
    for event in [HookEvent::PostToolUse, HookEvent::PostToolUseFailure] {
        let record = Arc::clone(&seen);
        runtime.add_hook(
            event,
            "*",
            Arc::new(FnHook::new("observer", move |event: &Value| {
                record.lock().unwrap().push(event.clone());
                Ok(json!({"hookSpecificOutput": {"additionalContext": format!("seen {}", event["hook_event_name"].as_str().unwrap())}}))
            })),
        ).expect("valid matcher");
    }
    let ok = call(&runtime, "Echo", json!({"text": "x"})).await;
    assert!(
        ok_text(&ok).ends_with("[PostToolUse hook observer] seen PostToolUse"),
        "{}",
        ok_text(&ok)
    );
    let failed = call(&runtime, "Echo", json!({"text": "fail"})).await;
    assert!(error_text(&failed, ErrorKind::ToolFailed).ends_with("seen PostToolUseFailure"));
    // Not fired for failures before the call.
    error_text(
        &call(&runtime, "Echo", json!({})).await,
        ErrorKind::InvalidInput,
    );
    let events = seen.lock().unwrap();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0]["tool_response"]["input"]["text"], "x");
    assert_eq!(
        events[1]["error"],
        "asked_to_fail: the input asked Echo to fail"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn defer_is_a_vote_that_a_deny_vote_beats() {
    let fixture = Fixture::new();
    let mut runtime = echo_runtime(&fixture, &["Echo"], &[]).await;
    answering(
        &mut runtime,
        HookEvent::PreToolUse,
        "Echo",
        "deferrer",
        pre_decision("defer", ""),
    );
    answering(
        &mut runtime,
        HookEvent::PreToolUse,
        "Echo",
        "guard",
        pre_decision("deny", "no"),
    );
    let result = call(&runtime, "Echo", json!({"text": "x"})).await;
    error_text(&result, ErrorKind::PermissionDenied);
    assert_decided_by_hook(&result, "guard");
}

/// Hooks see the path of a read or write tool as an absolute path, as Claude Code's hooks do, and
/// the outcome records the expansion.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hooks_see_absolute_paths_for_path_tools() {
    let fixture = Fixture::new();
    fixture.write("docs/a.md", "hello\n");
    let mut runtime = fixture.runtime(&[], |_| {}).await;
    let seen = Arc::new(Mutex::new(Vec::<Value>::new()));
    let record = Arc::clone(&seen);
    runtime
        .add_hook(
            HookEvent::PreToolUse,
            "Read",
            Arc::new(FnHook::new("observer", move |event: &Value| {
                record.lock().unwrap().push(event["tool_input"].clone());
                Ok(json!({}))
            })),
        )
        .expect("valid matcher");
    let result = call(&runtime, "Read", json!({"file_path": "docs/a.md"})).await;
    assert!(ok_text(&result).contains("hello"));
    let expected = fixture.workspace().join("docs/a.md").display().to_string();
    assert_eq!(seen.lock().unwrap()[0]["file_path"], expected);
    let change = result.outcome.coercions.last().unwrap();
    assert_eq!(change.rule, janua::outcome::CoercionRule::AbsolutePath);
    assert_eq!(change.from, "\"docs/a.md\"");
}
