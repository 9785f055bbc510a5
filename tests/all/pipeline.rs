//! One test per pipeline outcome, driven through the library with real guests.

use janua::{ErrorKind, Runtime};

use janua::outcome::CoercionRule;

use janua::rules::DecidedBy;
use janua_test_guests::PIPELINE_ECHO;
use serde_json::json;

use crate::support::{Fixture, call, error_text, ok_text};

async fn echo_runtime(
    fixture: &Fixture,
    configure: impl FnOnce(&mut janua::RuntimeConfig),
) -> Runtime {
    let plugin = fixture.plugin("echo", PIPELINE_ECHO, "");
    fixture.runtime(&[plugin], configure).await
}

/// The guest carries two tools (Echo, Picky): both are registered from one component.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn pipeline_echo() {
    let fixture = Fixture::new();
    let runtime = echo_runtime(&fixture, |c| c.allowed_tools = vec!["Echo".into()]).await;
    let names: Vec<String> = runtime.tools().into_iter().map(|t| t.spec.name).collect();
    assert_eq!(
        names,
        [
            "Bash",
            "Browser",
            "Echo",
            "Edit",
            "Glob",
            "Grep",
            "NotebookEdit",
            "Picky",
            "Read",
            "TaskOutput",
            "TaskStop",
            "WebFetch",
            "Write"
        ]
    );
    let result = call(&runtime, "Echo", json!({"text": "hi"})).await;
    let output: serde_json::Value = serde_json::from_str(&ok_text(&result)).unwrap();
    assert_eq!(output["text"], "hi");
    assert_eq!(result.block.tool_use_id, "toolu_test");
    assert_eq!(
        result.outcome.structured.as_ref().unwrap()["call_id"],
        "toolu_test"
    );
    assert_eq!(result.outcome.progress, ["echoing"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn success_returns_a_tool_result_block() {
    let fixture = Fixture::new();
    fixture.write("notes.txt", "alpha\nbeta\n");
    let runtime = fixture.runtime(&[], |_| {}).await;
    let result = call(&runtime, "Read", json!({"file_path": "notes.txt"})).await;
    let block = serde_json::to_value(&result.block).unwrap();
    assert_eq!(
        block,
        json!({
            "type": "tool_result",
            "tool_use_id": "toolu_test",
            "content": "     1\talpha\n     2\tbeta\n",
            "is_error": false
        })
    );
    let decision = result.outcome.decision.unwrap();
    assert_eq!(decision.decided_by, DecidedBy::ReadOnlyInWorkspace);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_tool_names_close_matches() {
    let fixture = Fixture::new();
    let runtime = fixture.runtime(&[], |_| {}).await;
    let text = error_text(
        &call(&runtime, "Raed", json!({})).await,
        ErrorKind::UnknownTool,
    );
    assert!(text.contains("Did you mean Read?"), "{text}");
    let text = error_text(
        &call(&runtime, "Zzzzzz", json!({})).await,
        ErrorKind::UnknownTool,
    );
    assert!(
        text.contains(
            "Available tools: Bash, Browser, Edit, Glob, Grep, NotebookEdit, Read, TaskOutput, TaskStop, WebFetch, Write."
        ),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alias_resolves_one_hop_and_is_reported() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "via alias\n");
    let runtime = fixture
        .runtime(&[], |c| c.aliases = vec!["Cat=Read".parse().unwrap()])
        .await;
    let result = call(&runtime, "Cat", json!({"file_path": "a.txt"})).await;
    assert!(ok_text(&result).contains("via alias"));
    let hop = result.outcome.alias.unwrap();
    assert_eq!((hop.from.as_str(), hop.to.as_str()), ("Cat", "Read"));
    assert_eq!(result.outcome.tool.as_deref(), Some("Read"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alias_chain_cycle_and_shadowing_are_rejected_at_start() {
    let fixture = Fixture::new();
    let cases: &[(&[&str], &str)] = &[
        (&["Cat=Dog", "Dog=Read"], "alias chain Cat -> Dog -> Read"),
        (&["A=B", "B=A"], "(cycle)"),
        (&["Read=Echo"], "shadows the tool Read"),
        (&["Cat=Nothing"], "not a known tool"),
    ];
    for (aliases, expected) in cases {
        let mut config = fixture.config();
        config.aliases = aliases.iter().map(|a| a.parse().unwrap()).collect();
        let error = janua::Runtime::new(config).await.err().expect("rejected");
        let message = error.to_string();
        assert!(message.contains(expected), "{aliases:?}: {message}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn alias_to_a_denied_tool_does_not_bypass_the_deny() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "hidden\n");
    let runtime = fixture
        .runtime(&[], |c| {
            c.aliases = vec!["Cat=Read".parse().unwrap()];
            c.disallowed_tools = vec!["Read".into()];
        })
        .await;
    let result = call(&runtime, "Cat", json!({"file_path": "a.txt"})).await;
    let text = error_text(&result, ErrorKind::UnknownTool);
    assert!(!text.contains("hidden"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn coercion_is_applied_and_reported() {
    let fixture = Fixture::new();
    let runtime = echo_runtime(&fixture, |c| c.allowed_tools = vec!["Echo".into()]).await;
    let result = call(
        &runtime,
        "Echo",
        json!({"text": "x", "count": "42", "loud": "true", "tags": "solo", "meta": "{\"key\":\"k\"}"}),
    )
    .await;
    let echoed: serde_json::Value = serde_json::from_str(&ok_text(&result)).unwrap();
    assert_eq!(
        echoed,
        json!({"text": "x", "count": 42, "loud": true, "tags": ["solo"], "meta": {"key": "k"}})
    );
    let rules: Vec<(String, CoercionRule)> = result
        .outcome
        .coercions
        .iter()
        .map(|c| (c.pointer.clone(), c.rule))
        .collect();
    assert_eq!(
        rules,
        [
            ("/count".to_owned(), CoercionRule::StringToInteger),
            ("/loud".to_owned(), CoercionRule::StringToBoolean),
            ("/meta".to_owned(), CoercionRule::JsonStringToObject),
            ("/tags".to_owned(), CoercionRule::WrapInArray),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_input_lists_every_violation_with_its_pointer() {
    let fixture = Fixture::new();
    let runtime = echo_runtime(&fixture, |c| c.allowed_tools = vec!["Echo".into()]).await;
    let result = call(
        &runtime,
        "Echo",
        json!({"count": "many", "loud": 3, "extra": 1}),
    )
    .await;
    let text = error_text(&result, ErrorKind::InvalidInput);
    for expected in [
        "/count",
        "/loud",
        "\"text\" is a required property",
        "extra",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in {text}");
    }
    assert!(text.contains("4 violations"), "{text}");
    assert!(
        result.outcome.decision.is_none(),
        "no decision is made for invalid input"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validation_failed_carries_the_tools_message() {
    let fixture = Fixture::new();
    let runtime = echo_runtime(&fixture, |_| {}).await;
    let text = error_text(
        &call(&runtime, "Picky", json!({"word": "Hello"})).await,
        ErrorKind::ValidationFailed,
    );
    assert!(
        text.contains("word must be lower case, got \"Hello\""),
        "{text}"
    );
    let ok = call(&runtime, "Picky", json!({"word": "hello"})).await;
    assert_eq!(ok_text(&ok), "accepted hello");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_denied_by_a_deny_rule_names_the_rule() {
    let fixture = Fixture::new();
    fixture.write("keys.secret", "sk-123\n");
    fixture.write("ok.txt", "fine\n");
    let runtime = fixture
        .runtime(&[], |c| c.disallowed_tools = vec!["Read(*.secret)".into()])
        .await;
    let result = call(&runtime, "Read", json!({"file_path": "keys.secret"})).await;
    let text = error_text(&result, ErrorKind::PermissionDenied);
    assert!(
        text.contains("Read(*.secret)") && !text.contains("sk-123"),
        "{text}"
    );
    assert!(matches!(
        result.outcome.decision.unwrap().decided_by,
        DecidedBy::DenyRule { .. }
    ));
    assert!(
        ok_text(&call(&runtime, "Read", json!({"file_path": "ok.txt"})).await).contains("fine")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_ask_is_denied_with_what_would_allow_it() {
    let fixture = Fixture::new();
    let runtime = echo_runtime(&fixture, |_| {}).await;
    let result = call(&runtime, "Echo", json!({"text": "hi"})).await;
    let text = error_text(&result, ErrorKind::PermissionDenied);
    assert!(text.contains("--allowedTools Echo"), "{text}");
    assert!(text.contains("is not read-only"), "{text}");
    assert_eq!(
        result.outcome.decision.unwrap().decided_by,
        DecidedBy::NoPrompter
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allow_rule_lets_a_writing_tool_run_and_a_deny_rule_still_wins() {
    let fixture = Fixture::new();
    let runtime = echo_runtime(&fixture, |c| {
        c.allowed_tools = vec!["Echo".into()];
        c.disallowed_tools = vec!["Read(*.md), Picky(*)".into()];
    })
    .await;
    let result = call(&runtime, "Echo", json!({"text": "hi"})).await;
    ok_text(&result);
    assert!(matches!(
        result.outcome.decision.unwrap().decided_by,
        DecidedBy::AllowRule { .. }
    ));
    // `Picky(*)` is a bare-name deny: the tool is gone from the registry.
    error_text(
        &call(&runtime, "Picky", json!({"word": "a"})).await,
        ErrorKind::UnknownTool,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tools_own_error_is_a_tool_failed_result_with_its_kind() {
    let fixture = Fixture::new();
    let runtime = echo_runtime(&fixture, |c| c.allowed_tools = vec!["Echo".into()]).await;
    let result = call(&runtime, "Echo", json!({"text": "fail"})).await;
    let text = error_text(&result, ErrorKind::ToolFailed);
    assert!(
        text.contains("asked_to_fail: the input asked Echo to fail"),
        "{text}"
    );
    assert_eq!(
        result.outcome.error.unwrap().tool_error_kind.as_deref(),
        Some("asked_to_fail")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn long_output_is_cut_at_the_inline_limit_with_an_exact_marker() {
    let fixture = Fixture::new();
    let runtime = echo_runtime(&fixture, |c| c.allowed_tools = vec!["Echo".into()]).await;
    let result = call(&runtime, "Echo", json!({"text": "big", "count": 45_000})).await;
    let text = ok_text(&result);
    assert!(text.chars().count() <= 30_000, "{}", text.chars().count());
    let cut = result.outcome.truncation.unwrap();
    assert_eq!(cut.total_chars, 45_000);
    assert_eq!(cut.kept_chars + cut.cut_chars, 45_000);
    assert!(
        text.contains(&format!(
            "kept the first {} of 45000 characters; {} characters were cut",
            cut.kept_chars, cut.cut_chars
        )),
        "{}",
        &text[text.len() - 200..]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn consecutive_calls_share_the_default_session_and_ids_separate_sessions() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "x\n");
    for _ in 0..2 {
        let runtime = fixture.runtime(&[], |_| {}).await;
        call(&runtime, "Read", json!({"file_path": "a.txt"})).await;
    }
    let runtime = fixture.runtime(&[], |_| {}).await;
    assert_eq!(runtime.session().id(), "default");
    assert_eq!(runtime.session().calls(), 2);
    assert!(
        !runtime.session().dir().starts_with(fixture.workspace()),
        "state lives outside the workspace"
    );
    let other = fixture
        .runtime(&[], |c| c.session_id = Some("run-7".into()))
        .await;
    assert_eq!(other.session().calls(), 0);
    assert_ne!(other.session().dir(), runtime.session().dir());
}

/// One runtime serves concurrent dispatches; every result answers its own call.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_dispatches_keep_their_own_inputs_and_ids() {
    let fixture = Fixture::new();
    let runtime = std::sync::Arc::new(
        echo_runtime(&fixture, |c| c.allowed_tools = vec!["Echo".into()]).await,
    );
    let tasks: Vec<_> = (0..16)
        .map(|n| {
            let runtime = std::sync::Arc::clone(&runtime);
            tokio::spawn(async move {
                let call = janua::ToolUse {
                    id: format!("toolu_{n}"),
                    name: "Echo".into(),
                    input: json!({"text": format!("call {n}")}),
                };
                (n, runtime.dispatch(call).await)
            })
        })
        .collect();
    for task in tasks {
        let (n, result) = task.await.unwrap();
        assert_eq!(result.block.tool_use_id, format!("toolu_{n}"));
        let echoed: serde_json::Value = serde_json::from_str(&ok_text(&result)).unwrap();
        assert_eq!(echoed["text"], format!("call {n}"));
    }
}
