//! Delegated work: the `delegate` import (real guests calling real tools through the pipeline),
//! `Runtime::fork` and its widening checks, and the Agent tool driven over stream-json with an
//! external runner under the process sandbox.

use std::sync::{Arc, Mutex};

use janua::{ErrorKind, FnHook, ForkError, Grants, Narrowing, PermissionMode, ToolUse};

use janua::extensions::HookEvent;
use janua_test_guests::{DELEGATE_PROBE, GRANTS_ENV};
use serde_json::{Value, json};

use crate::support::{Fixture, cache_dir, call, error_text, janua_bin};

/// The probe plugin, granted `grants` (a TOML inline table's body).
fn probe(fixture: &Fixture, grants: &str) -> std::path::PathBuf {
    fixture.plugin("probe", DELEGATE_PROBE, &format!("grants = {{ {grants} }}"))
}

/// The structured result of a successful call.
fn structured(dispatch: &janua::Dispatch) -> Value {
    assert!(!dispatch.block.is_error, "{}", dispatch.block.text());
    dispatch
        .outcome
        .structured
        .clone()
        .expect("a structured result")
}

/// Every lifecycle event the runtime emits, collected.
fn collect_events(runtime: &janua::Runtime) -> Arc<Mutex<Vec<Value>>> {
    let events: Arc<Mutex<Vec<Value>>> = Arc::default();
    let sink = Arc::clone(&events);
    runtime.set_event_sink(Arc::new(move |event: &Value| {
        sink.lock().unwrap().push(event.clone());
    }));
    events
}

/// The guest delegates a Read through the whole pipeline: it succeeds, and the nested call's
/// events and hook input name the delegating call as parent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn delegate_probe() {
    let fixture = Fixture::new();
    fixture.write("notes.txt", "alpha\nbeta\n");
    let plugin = probe(
        &fixture,
        r#"delegate = ["Read"], fs = [{ path = "${WORKSPACE}", access = "read" }]"#,
    );
    let mut runtime = fixture
        .runtime(&[plugin], |config| {
            config.allowed_tools = vec!["Delegate".to_owned()];
        })
        .await;
    let hook_inputs: Arc<Mutex<Vec<Value>>> = Arc::default();
    let seen = Arc::clone(&hook_inputs);
    runtime
        .add_hook(
            HookEvent::PreToolUse,
            "Read",
            Arc::new(FnHook::new("spy", move |event: &Value| {
                seen.lock().unwrap().push(event.clone());
                Ok(json!({}))
            })),
        )
        .unwrap();
    let events = collect_events(&runtime);
    let result = call(
        &runtime,
        "Delegate",
        json!({"tool": "Read", "input": {"file_path": "notes.txt"}}),
    )
    .await;
    let report = structured(&result);
    assert_eq!(report["is_error"], false, "{report}");
    assert_eq!(report["tool_use_id"], "toolu_test.1");
    assert!(
        report["text"].as_str().unwrap().contains("beta"),
        "{report}"
    );

    let hook_inputs = hook_inputs.lock().unwrap();
    assert_eq!(
        hook_inputs.len(),
        1,
        "the PreToolUse hook ran for the nested Read"
    );
    assert_eq!(hook_inputs[0]["parent_tool_use_id"], "toolu_test");
    assert_eq!(hook_inputs[0]["tool_use_id"], "toolu_test.1");
    assert_eq!(hook_inputs[0]["delegation_depth"], 1);

    let events = events.lock().unwrap();
    let nested: Vec<&Value> = events
        .iter()
        .filter(|event| event["tool_use_id"] == "toolu_test.1")
        .collect();
    let kinds: Vec<&str> = nested.iter().filter_map(|e| e["event"].as_str()).collect();
    for kind in ["hook_started", "decision", "tool_started", "tool_finished"] {
        assert!(kinds.contains(&kind), "no nested {kind} in {kinds:?}");
    }
    for event in &nested {
        assert_eq!(event["parent_tool_use_id"], "toolu_test", "{event}");
    }
    let parent_started = events
        .iter()
        .find(|e| e["event"] == "tool_started" && e["tool_use_id"] == "toolu_test")
        .expect("the parent started");
    assert!(parent_started.get("parent_tool_use_id").is_none());
    let reported = events
        .iter()
        .find(|e| e["event"] == "nested_result")
        .expect("a nested_result event");
    assert_eq!(reported["tool_use"]["name"], "Read");
    assert_eq!(reported["tool_result"]["tool_use_id"], "toolu_test.1");
}

/// The parent's deny rule stops the delegated call; a tool the `delegate` grant does not name is
/// refused; a bare-name deny removes the tool for nested calls too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn delegated_calls_obey_the_parents_deny_rules_and_the_delegate_grant() {
    let fixture = Fixture::new();
    fixture.write("secret.txt", "hunter2\n");
    fixture.write("open.txt", "fine\n");
    let plugin = probe(
        &fixture,
        r#"delegate = ["Read", "Grep", "Glob", "Cat*"], fs = [{ path = "${WORKSPACE}", access = "read" }]"#,
    );
    let runtime = fixture
        .runtime(&[plugin], |config| {
            config.allowed_tools = vec!["Delegate".to_owned(), "Write".to_owned()];
            config.aliases = vec![
                "CatInto=Write".parse().unwrap(),
                "Cat=Read".parse().unwrap(),
            ];
            config.disallowed_tools = vec!["Read(./secret.txt)".to_owned(), "Glob".to_owned()];
        })
        .await;
    let delegate = |tool: &str, input: Value| {
        let runtime = &runtime;
        let tool = tool.to_owned();
        async move {
            let result = call(runtime, "Delegate", json!({"tool": tool, "input": input})).await;
            structured(&result)
        }
    };
    let denied = delegate("Read", json!({"file_path": "secret.txt"})).await;
    assert_eq!(denied["error_kind"], "permission_denied", "{denied}");
    assert!(!denied["text"].as_str().unwrap().contains("hunter2"));
    let allowed = delegate("Read", json!({"file_path": "open.txt"})).await;
    assert_eq!(allowed["is_error"], false, "{allowed}");
    let removed = delegate("Glob", json!({"pattern": "*"})).await;
    assert_eq!(removed["error_kind"], "unknown_tool", "{removed}");
    let not_granted = delegate("Write", json!({"file_path": "x", "content": "y"})).await;
    assert_eq!(
        not_granted["error_kind"], "permission_denied",
        "{not_granted}"
    );
    assert!(
        not_granted["text"].as_str().unwrap().contains("delegate"),
        "{not_granted}"
    );
    // The grant is checked against the tool an alias resolves to: `Cat*` does not let the
    // probe reach Write through `CatInto`, while `Cat` (an alias of Read) is Read.
    let smuggled = delegate("CatInto", json!({"file_path": "x", "content": "y"})).await;
    assert_eq!(smuggled["error_kind"], "permission_denied", "{smuggled}");
    assert!(
        smuggled["text"]
            .as_str()
            .unwrap()
            .contains("`delegate` grant"),
        "{smuggled}"
    );
    assert!(!fixture.workspace().join("x").exists());
    let aliased = delegate("Cat", json!({"file_path": "open.txt"})).await;
    assert_eq!(aliased["is_error"], false, "{aliased}");
    // Oversized names and inputs are refused before the host parses them.
    let huge = delegate("Read", json!({"file_path": "x".repeat(5 << 20)})).await;
    assert_eq!(huge["error_kind"], "invalid_input", "{}", huge["text"]);
    assert!(
        huge["text"].as_str().unwrap().contains("at most"),
        "{}",
        huge["text"]
    );
    let long_name = delegate(&"R".repeat(300), json!({})).await;
    assert_eq!(long_name["error_kind"], "invalid_input", "{long_name}");
    let unknown = delegate("Nope", json!({})).await;
    assert_eq!(unknown["error_kind"], "permission_denied", "{unknown}");
}

/// A callee holds at most its caller's grants: Read cannot reach past the caller's directory, and
/// a plugin whose own manifest grants an environment variable sees none when the caller has none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_callee_cannot_exceed_its_callers_grants() {
    let fixture = Fixture::new();
    fixture.write("public/readme.txt", "public words\n");
    fixture.write("private/key.txt", "private words\n");
    let plugin = probe(
        &fixture,
        r#"delegate = ["Read", "EnvPeek", "FileProbe"], fs = [{ path = "${WORKSPACE}/public", access = "read" }]"#,
    );
    let env_plugin = fixture.plugin(
        "env",
        GRANTS_ENV,
        r#"grants = { env = ["HOME"], fs = [{ path = "${WORKSPACE}", access = "read" }] }"#,
    );
    let runtime = fixture
        .runtime(&[plugin, env_plugin], |config| {
            config.allowed_tools = vec!["Delegate".to_owned(), "EnvPeek".to_owned()];
        })
        .await;
    let delegate = |tool: &str, input: Value| {
        let runtime = &runtime;
        let tool = tool.to_owned();
        async move {
            structured(&call(runtime, "Delegate", json!({"tool": tool, "input": input})).await)
        }
    };
    let inside = delegate("Read", json!({"file_path": "public/readme.txt"})).await;
    assert_eq!(inside["is_error"], false, "{inside}");
    let outside = delegate("Read", json!({"file_path": "private/key.txt"})).await;
    assert_eq!(outside["error_kind"], "permission_denied", "{outside}");
    assert!(!outside["text"].as_str().unwrap().contains("private words"));
    // Read alone may read it: the ceiling, not Read's own grants, stopped the nested call.
    let direct = call(&runtime, "Read", json!({"file_path": "private/key.txt"})).await;
    assert!(!direct.block.is_error, "{}", direct.block.text());

    // EnvPeek's manifest grants HOME; called directly it sees it, delegated it does not.
    let home = std::env::var("HOME").expect("HOME is set");
    let direct = call(&runtime, "EnvPeek", json!({"name": "HOME"})).await;
    let seen: Value = serde_json::from_str(&direct.block.text()).unwrap();
    assert_eq!(seen["value"], home);
    let nested = delegate("EnvPeek", json!({"name": "HOME"})).await;
    assert_eq!(nested["is_error"], false, "{nested}");
    let seen: Value = serde_json::from_str(nested["text"].as_str().unwrap()).unwrap();
    assert_eq!(seen["value"], Value::Null, "{seen}");
    assert_eq!(seen["names"], json!([]), "{seen}");
}

/// A tool that delegates to itself is stopped at the depth limit with
/// `delegation_depth_exceeded`, whatever the limit is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_depth_bomb_stops_at_the_limit() {
    for limit in [3u32, 1, 0] {
        let fixture = Fixture::new();
        let plugin = probe(&fixture, r#"delegate = ["Recurse"]"#);
        let runtime = fixture
            .runtime(&[plugin], |config| {
                config.allowed_tools = vec!["Recurse".to_owned()];
                config.max_delegation_depth = limit;
            })
            .await;
        let events = collect_events(&runtime);
        let mut node = structured(&call(&runtime, "Recurse", json!({"level": 0})).await);
        let mut levels = 0;
        while node.get("level").is_some() {
            assert_eq!(node["level"], levels, "{node}");
            levels += 1;
            node = node["child"].clone();
        }
        assert_eq!(levels, limit + 1, "levels run with limit {limit}");
        assert_eq!(node["error_kind"], "delegation_depth_exceeded", "{node}");
        let deepest = events
            .lock()
            .unwrap()
            .iter()
            .filter(|event| event["event"] == "tool_started")
            .filter_map(|event| event["delegation_depth"].as_u64())
            .max()
            .unwrap_or(0);
        assert_eq!(
            deepest,
            u64::from(limit),
            "nested calls ran at most {limit} deep"
        );
    }
}

/// `Runtime::fork` keeps or narrows, and refuses to widen: a tool, an allow rule, a mode or a
/// grant the parent lacks is an error at fork time; what the fork keeps works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fork_rejects_widening_and_narrows_what_it_keeps() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "a\n");
    fixture.write("b.txt", "b\n");
    let runtime = fixture
        .runtime(&[], |config| {
            config.allowed_tools = vec!["Bash(echo *)".to_owned()];
        })
        .await;
    let widen = |narrowing: Narrowing| runtime.fork(narrowing).err().expect("refused");
    assert!(matches!(
        widen(Narrowing {
            tools: Some(vec!["Teleport".into()]),
            ..Default::default()
        }),
        ForkError::UnknownTool { .. }
    ));
    assert!(matches!(
        widen(Narrowing {
            allow: Some(vec!["Write".into()]),
            ..Default::default()
        }),
        ForkError::WidensAllow { .. }
    ));
    assert!(matches!(
        widen(Narrowing {
            mode: Some(PermissionMode::BypassPermissions),
            ..Default::default()
        }),
        ForkError::WidensMode { .. }
    ));
    let write: Grants = toml_grants(r#"env = ["AWS_SECRET_ACCESS_KEY"]"#);
    assert!(matches!(
        widen(Narrowing {
            grants: Some(write),
            ..Default::default()
        }),
        ForkError::WidensGrant { .. }
    ));
    assert!(matches!(
        widen(Narrowing {
            deny: vec!["Read(".into()],
            ..Default::default()
        }),
        ForkError::Rule { .. }
    ));

    let fork = runtime
        .fork(Narrowing {
            agent_id: Some("explorer".into()),
            tools: Some(vec!["Read".into(), "Bash".into(), "Grep".into()]),
            allow: Some(vec!["Bash(echo *)".into()]),
            deny: vec!["Read(./b.txt)".into()],
            mode: Some(PermissionMode::Plan),
            ..Default::default()
        })
        .expect("a narrowing fork");
    assert_eq!(fork.tools(), ["Bash", "Grep", "Read"]);
    assert_eq!(fork.agent_id(), Some("explorer"));
    let events = collect_events(&runtime);
    let run = |name: &str, input: Value| {
        fork.dispatch(ToolUse {
            id: format!("f-{name}"),
            name: name.into(),
            input,
        })
    };
    let read = run("Read", json!({"file_path": "a.txt"})).await;
    assert!(!read.block.is_error, "{}", read.block.text());
    error_text(
        &run("Read", json!({"file_path": "b.txt"})).await,
        ErrorKind::PermissionDenied,
    );
    // The fork's Read deny rule hides the file from every guest's view, as a root one does.
    let grep = run(
        "Grep",
        json!({"pattern": "^[ab]$", "output_mode": "files_with_matches"}),
    )
    .await;
    assert!(!grep.block.is_error, "{}", grep.block.text());
    assert!(grep.block.text().contains("a.txt"), "{}", grep.block.text());
    assert!(
        !grep.block.text().contains("b.txt"),
        "{}",
        grep.block.text()
    );
    error_text(
        &run("Glob", json!({"pattern": "*"})).await,
        ErrorKind::UnknownTool,
    );
    // The parent still has both: the fork narrowed only itself.
    assert!(
        !call(&runtime, "Read", json!({"file_path": "b.txt"}))
            .await
            .block
            .is_error
    );
    let agent_events: Vec<Value> = events
        .lock()
        .unwrap()
        .iter()
        .filter(|event| event["tool_use_id"] == "f-Read")
        .cloned()
        .collect();
    assert!(!agent_events.is_empty());
    assert!(
        agent_events
            .iter()
            .all(|event| event["agent_id"] == "explorer")
    );

    // A fork of the fork can narrow further, never back.
    let widened = fork.fork(Narrowing {
        tools: Some(vec!["Glob".into()]),
        ..Default::default()
    });
    assert!(matches!(widened, Err(ForkError::UnknownTool { .. })));
    let widened = fork.fork(Narrowing {
        mode: Some(PermissionMode::Default),
        ..Default::default()
    });
    assert!(matches!(widened, Err(ForkError::WidensMode { .. })));
    let narrower = fork
        .fork(Narrowing {
            tools: Some(vec!["Read".into()]),
            ..Default::default()
        })
        .expect("narrower");
    assert_eq!(narrower.depth(), 2);
    error_text(
        &narrower
            .dispatch(ToolUse {
                id: "n1".into(),
                name: "Read".into(),
                input: json!({"file_path": "b.txt"}),
            })
            .await,
        ErrorKind::PermissionDenied,
    );
    let deeper = narrower.fork(Narrowing::default()).expect("depth 3");
    assert!(matches!(
        deeper.fork(Narrowing::default()),
        Err(ForkError::DepthExceeded { depth: 4, limit: 3 })
    ));

    // A grant ceiling narrows the tools' own grants.
    let ceiling = runtime
        .fork(Narrowing {
            grants: Some(toml_grants(
                r#"fs = [{ path = "${WORKSPACE}/sub", access = "read" }]"#,
            )),
            ..Default::default()
        })
        .expect("a ceiling inside the workspace");
    error_text(
        &ceiling
            .dispatch(ToolUse {
                id: "c1".into(),
                name: "Read".into(),
                input: json!({"file_path": "a.txt"}),
            })
            .await,
        ErrorKind::PermissionDenied,
    );
}

fn toml_grants(text: &str) -> Grants {
    toml::from_str(text).expect("grants parse")
}

/// The example workflow: Grep, then Read of each match's context, each a delegated call. An ask
/// rule on one file stops only that Read (nobody can answer here); a deny rule hides its file
/// from Grep's view altogether.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_workflow_greps_then_reads_each_match() {
    let fixture = Fixture::new();
    fixture.write("src/one.rs", "a\nb\n// TODO first\nc\nd\n");
    fixture.write("src/two.rs", "// TODO second\nz\n");
    fixture.write("src/three.rs", "// TODO third\n");
    let dir = fixture.root().join("grep-context");
    janua::extensions::write_example("workflow-grep-context", &dir)
        .expect("the example is shipped");
    let runtime = fixture
        .runtime(&[dir], |config| {
            config.allowed_tools = vec!["GrepContext".to_owned()];
            config.disallowed_tools = vec!["Read(./src/three.rs)".to_owned()];
            config.settings_json =
                vec![json!({"permissions": {"ask": ["Read(./src/two.rs)"]}}).to_string()];
        })
        .await;
    let result = call(
        &runtime,
        "GrepContext",
        json!({"pattern": "TODO", "context_lines": 1}),
    )
    .await;
    let report = structured(&result);
    let matches = report["matches"].as_array().expect("matches");
    assert_eq!(matches.len(), 2, "{report}");
    let by_file = |name: &str| {
        matches
            .iter()
            .find(|entry| entry["path"].as_str().unwrap().ends_with(name))
            .unwrap_or_else(|| panic!("{name} in {report}"))
            .clone()
    };
    assert_eq!(by_file("one.rs")["read"], "ok");
    assert_eq!(by_file("one.rs")["line"], 3);
    assert_eq!(by_file("two.rs")["read"], "permission_denied");
    let text = result.block.text();
    assert!(text.contains("TODO first"), "{text}");
    assert!(
        !text.contains("TODO second"),
        "the refused Read showed nothing: {text}"
    );
    assert!(
        !text.contains("three.rs"),
        "the denied file is hidden: {text}"
    );
}

/// The Agent tool over stream-json: the runner (a real child process under the process sandbox)
/// gets a sub-session narrowed to the tools the call names, its calls run the pipeline and show
/// up under the Agent call, and `Task(...)` deny rules match `subagent_type`.
#[test]
fn the_agent_runner_gets_a_narrowed_session_and_its_calls_appear_under_the_parent() {
    let fixture = Fixture::new();
    fixture.write("notes.txt", "sub-agent notes\n");
    let runner = fixture.write(".runner/runner.py", include_str!("../agent/runner.py"));
    // The system interpreter: the runner reads only system directories and the files its
    // command names, so a python3 found through a shim under $HOME could not start.
    let command = format!("/usr/bin/python3 {}", runner.display());
    let input = [
        json!({"type": "tool_use", "id": "toolu_agent", "name": "Agent", "input": {
            "description": "read notes", "prompt": "read:notes.txt", "subagent_type": "explore",
            "tools": ["Read"]}}),
        json!({"type": "tool_use", "id": "toolu_denied", "name": "Agent", "input": {
            "description": "x", "prompt": "read:notes.txt", "subagent_type": "general"}}),
        json!({"type": "tool_use", "id": "toolu_crash", "name": "Agent", "input": {
            "description": "x", "prompt": "crash", "subagent_type": "explore"}}),
        json!({"type": "tool_use", "id": "toolu_widen", "name": "Agent", "input": {
            "description": "x", "prompt": "p", "tools": ["Teleport"]}}),
        json!({"type": "tool_use", "id": "toolu_garbage", "name": "Agent", "input": {
            "description": "x", "prompt": "garbage"}}),
    ];
    let stdin: String = input.iter().map(|line| format!("{line}\n")).collect();
    let output = std::process::Command::new(janua_bin())
        .arg("--cwd")
        .arg(fixture.workspace())
        .arg("--state-dir")
        .arg(fixture.state_dir())
        .arg("--cache-dir")
        .arg(cache_dir())
        .arg("--no-user-settings")
        .args(["--agent-runner", &command])
        .args([
            "--allowedTools",
            "Agent",
            "--disallowedTools",
            "Task(general)",
        ])
        .arg("run")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(stdin.as_bytes())?;
            child.wait_with_output()
        })
        .expect("run janua");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON line"))
        .collect();
    let schema: Value =
        serde_json::from_str(include_str!("../../docs/protocol.schema.json")).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    for line in &lines {
        assert!(validator.is_valid(line), "not a valid output line: {line}");
    }
    let nested: Vec<&Value> = lines
        .iter()
        .filter(|line| line["parent_tool_use_id"] == "toolu_agent")
        .collect();
    let uses: Vec<&Value> = nested
        .iter()
        .filter(|line| line["type"] == "assistant")
        .map(|line| &line["message"]["content"][0])
        .collect();
    assert_eq!(uses.len(), 2, "{nested:?}");
    assert_eq!(uses[0]["name"], "Read");
    assert_eq!(uses[1]["name"], "Glob");
    let kinds: Vec<&Value> = nested
        .iter()
        .filter(|line| line["type"] == "user")
        .map(|line| &line["error_kind"])
        .collect();
    assert_eq!(kinds, [&Value::Null, &json!("unknown_tool")]);
    assert!(
        nested
            .iter()
            .all(|line| line["agent_id"] == "agent-toolu_agent")
    );

    let results: Vec<&Value> = lines
        .iter()
        .filter(|line| line["type"] == "user" && line.get("outcomes").is_some())
        .flat_map(|line| line["message"]["content"].as_array().unwrap())
        .collect();
    let result = |id: &str| {
        *results
            .iter()
            .find(|block| block["tool_use_id"] == id)
            .unwrap_or_else(|| panic!("no result for {id}"))
    };
    let agent = result("toolu_agent");
    assert_eq!(agent["is_error"], false, "{agent}");
    let said: Value = serde_json::from_str(agent["content"].as_str().unwrap()).unwrap();
    assert_eq!(
        said["tools"],
        json!(["Read"]),
        "the runner saw only the narrowed set"
    );
    assert_eq!(said["parent_tool_use_id"], "toolu_agent");
    assert_eq!(said["subagent_type"], "explore");
    assert!(
        said["read"]["content"]
            .as_str()
            .unwrap()
            .contains("sub-agent notes"),
        "{said}"
    );
    assert_eq!(said["glob"]["error_kind"], "unknown_tool");
    assert!(
        said["direct"].as_str().unwrap().starts_with("denied"),
        "the runner read the workspace past the rules: {said}"
    );

    let denied = result("toolu_denied");
    assert_eq!(denied["is_error"], true);
    assert!(
        denied["content"]
            .as_str()
            .unwrap()
            .contains("Task(general)")
            || denied["content"]
                .as_str()
                .unwrap()
                .contains("Agent(general)"),
        "{denied}"
    );
    let crashed = result("toolu_crash");
    assert_eq!(crashed["is_error"], true);
    assert!(
        crashed["content"]
            .as_str()
            .unwrap()
            .contains("giving up on purpose"),
        "{crashed}"
    );
    let garbage = result("toolu_garbage");
    assert_eq!(garbage["is_error"], true);
    assert!(
        garbage["content"].as_str().unwrap().contains("not JSON"),
        "{garbage}"
    );
    let widened = result("toolu_widen");
    assert_eq!(widened["is_error"], true);
    assert!(
        widened["content"].as_str().unwrap().contains("Teleport"),
        "{widened}"
    );
}

/// A nested call gets at most a share of its caller's remaining time: Bash delegated by a tool
/// with a 2 s limit is stopped at about 1.8 s, long before its own limits, and the caller still
/// answers with the nested result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nested_call_gets_a_share_of_the_callers_deadline() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin(
        "probe",
        DELEGATE_PROBE,
        "grants = { delegate = [\"Bash\"], process = [{ program = \"/bin/bash\", args = [\"-c\", \"*\"] }] }\nlimits = { timeout_ms = 2000 }",
    );
    let runtime = fixture
        .runtime(&[plugin], |config| {
            config.allowed_tools = vec!["Delegate".to_owned(), "Bash(sleep *)".to_owned()];
        })
        .await;
    let started = std::time::Instant::now();
    let result = call(
        &runtime,
        "Delegate",
        json!({"tool": "Bash", "input": {"command": "sleep 30"}}),
    )
    .await;
    let report = structured(&result);
    assert_eq!(report["is_error"], true, "{report}");
    assert!(
        report["text"].as_str().unwrap().contains("timed out"),
        "{report}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the nested Bash was not cut to the caller's deadline"
    );
}

/// The share bounds the whole nested call: a PreToolUse hook that would wait 30 s is cut off at
/// the share, not only the nested tool's own run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_share_bounds_a_nested_calls_hooks_too() {
    let fixture = Fixture::new();
    fixture.write("open.txt", "fine\n");
    let plugin = fixture.plugin(
        "probe",
        DELEGATE_PROBE,
        "grants = { delegate = [\"Read\"], fs = [{ path = \"${WORKSPACE}\", access = \"read\" }] }\nlimits = { timeout_ms = 1500 }",
    );
    let hook = json!({"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [
        {"type": "command", "command": "sleep 30", "timeout": 60}]}]}})
    .to_string();
    let runtime = fixture
        .runtime(&[plugin], |config| {
            config.allowed_tools = vec!["Delegate".to_owned()];
            config.settings_json = vec![hook];
        })
        .await;
    let started = std::time::Instant::now();
    let result = call(
        &runtime,
        "Delegate",
        json!({"tool": "Read", "input": {"file_path": "open.txt"}}),
    )
    .await;
    let report = structured(&result);
    assert_eq!(report["error_kind"], "timeout", "{report}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "the nested call's hook ran past the caller's deadline: {:?}",
        started.elapsed()
    );
}

/// An embedder's own runner gets the request and a narrowed sub-session; a component may not
/// reach the Agent tool through `delegate` (its runner cannot be held to the caller's grants).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_embedders_runner_works_through_its_sub_session() {
    struct Scripted {
        seen: Mutex<Vec<(Vec<String>, janua::AgentRequest)>>,
    }
    impl janua::AgentRunner for Scripted {
        fn run<'s>(
            &'s self,
            request: janua::AgentRequest,
            session: &'s janua::SubSession<'s>,
        ) -> std::pin::Pin<
            Box<
                dyn std::future::Future<Output = Result<janua::AgentReport, janua::AgentError>>
                    + Send
                    + 's,
            >,
        > {
            Box::pin(async move {
                self.seen
                    .lock()
                    .unwrap()
                    .push((session.tools(), request.clone()));
                let read = session
                    .dispatch(ToolUse {
                        id: "inner".into(),
                        name: "Read".into(),
                        input: json!({"file_path": "notes.txt"}),
                    })
                    .await;
                if read.block.is_error {
                    return Err(janua::AgentError(read.block.text()));
                }
                Ok(janua::AgentReport {
                    result: format!("{} read: {}", request.agent_id, read.block.text()),
                })
            })
        }
    }
    let fixture = Fixture::new();
    fixture.write("notes.txt", "embedded notes\n");
    let plugin = probe(&fixture, r#"delegate = ["Agent"]"#);
    let mut runtime = fixture
        .runtime(&[plugin], |config| {
            config.agent_tool = true;
            config.allowed_tools = vec!["Agent".to_owned(), "Delegate".to_owned()];
        })
        .await;
    let runner = Arc::new(Scripted {
        seen: Mutex::default(),
    });
    runtime.set_agent_runner(runner.clone());
    let result = call(
        &runtime,
        "Agent",
        json!({"description": "d", "prompt": "p", "tools": ["Read", "Glob"]}),
    )
    .await;
    assert!(!result.block.is_error, "{}", result.block.text());
    assert!(result.block.text().contains("agent-toolu_test read:"));
    assert!(result.block.text().contains("embedded notes"));
    {
        let seen = runner.seen.lock().unwrap();
        assert_eq!(seen[0].0, ["Glob", "Read"]);
        assert_eq!(seen[0].1.parent_tool_use_id, "toolu_test");
        let names: Vec<&str> = seen[0]
            .1
            .tools
            .iter()
            .filter_map(|tool| tool["name"].as_str())
            .collect();
        assert_eq!(names, ["Glob", "Read"]);
    }

    let refused = structured(
        &call(
            &runtime,
            "Delegate",
            json!({"tool": "Agent", "input": {"description": "d", "prompt": "p"}}),
        )
        .await,
    );
    assert_eq!(refused["error_kind"], "permission_denied", "{refused}");
    assert_eq!(
        runner.seen.lock().unwrap().len(),
        1,
        "the runner never ran for it"
    );
}
