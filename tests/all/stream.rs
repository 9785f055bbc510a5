//! `janua run` driven as a child process over pipes: batches in order, permission questions over
//! the stream, cancel, interrupt and SIGINT, malformed lines, and every line checked against
//! `docs/protocol.schema.json`. Plus the batch scheduler through the library.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use janua::{ErrorKind, FnHook, ToolUse};

use janua::extensions::HookEvent;
use janua_test_guests::{PIPELINE_ECHO, SANDBOX_SPIN};
use serde_json::{Value, json};

use crate::support::{Fixture, cache_dir, error_text, janua_bin, ok_text};

const SCHEMA: &str = include_str!("../../docs/protocol.schema.json");

/// The schema's validator for `definition` (`output` or `input`).
fn validator(definition: &str) -> jsonschema::Validator {
    let mut schema: Value = serde_json::from_str(SCHEMA).expect("the schema is JSON");
    schema["$ref"] = json!(format!("#/$defs/{definition}"));
    jsonschema::validator_for(&schema).expect("the schema compiles")
}

/// A `janua run` child.
struct Stream {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<String>,
    output: jsonschema::Validator,
    input: jsonschema::Validator,
}

impl Stream {
    fn start(fixture: &Fixture, global: &[&str]) -> Self {
        Self::start_with(fixture, global, &[])
    }

    /// `janua GLOBAL... run --progress-interval-ms 100 RUN...`.
    fn start_with(fixture: &Fixture, global: &[&str], run: &[&str]) -> Self {
        Self::start_env(fixture, global, run, &[])
    }

    /// As [`Stream::start_with`], with `env` added to the child's environment.
    fn start_env(
        fixture: &Fixture,
        global: &[&str],
        run: &[&str],
        env: &[(&str, &std::path::Path)],
    ) -> Self {
        let mut child = Command::new(janua_bin())
            .envs(env.iter().copied())
            .arg("--cwd")
            .arg(fixture.workspace())
            .arg("--state-dir")
            .arg(fixture.state_dir())
            .arg("--cache-dir")
            .arg(cache_dir())
            .arg("--no-user-settings")
            .args(global)
            .arg("run")
            .arg("--progress-interval-ms")
            .arg("100")
            .args(run)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start janua run");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Self {
            child,
            stdin,
            lines,
            output: validator("output"),
            input: validator("input"),
        }
    }

    /// Sends a protocol message (checked against the input schema first).
    fn send(&mut self, message: Value) {
        assert!(
            self.input.is_valid(&message),
            "not a valid input line: {message}"
        );
        self.send_raw(&message.to_string());
    }

    fn send_raw(&mut self, text: &str) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{text}").expect("write a line");
        stdin.flush().expect("flush");
    }

    /// The next output line, checked against the output schema.
    fn next(&self) -> Value {
        let line = self
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("an output line within 60 s");
        let value: Value = serde_json::from_str(&line).expect("every output line is JSON");
        let errors: Vec<String> = self
            .output
            .iter_errors(&value)
            .map(|error| format!("{error} at {}", error.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{line}\nviolates the schema: {errors:?}");
        value
    }

    /// Reads lines until one matches `wanted`, returning it.
    fn until(&self, wanted: impl Fn(&Value) -> bool) -> Value {
        loop {
            let line = self.next();
            if wanted(&line) {
                return line;
            }
        }
    }

    /// Closes stdin and returns the remaining lines and the exit code.
    fn finish(mut self) -> (Vec<Value>, Option<i32>) {
        self.stdin.take();
        let mut rest = Vec::new();
        while let Ok(line) = self.lines.recv_timeout(Duration::from_secs(60)) {
            let value: Value = serde_json::from_str(&line).expect("JSON");
            assert!(self.output.is_valid(&value), "{line}");
            rest.push(value);
        }
        let status = self.child.wait().expect("janua exits");
        (rest, status.code())
    }
}

fn is(kind: &str) -> impl Fn(&Value) -> bool + '_ {
    move |line: &Value| line["type"] == kind
}

fn tool_use(id: &str, name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "id": id, "name": name, "input": input})
}

fn assistant(blocks: Vec<Value>) -> Value {
    json!({"type": "assistant", "message": {"role": "assistant", "content": blocks}})
}

/// Results come back in the order of the calls, the Write runs after the reads before it and
/// before the read after it; malformed lines are answered and the session goes on.
#[test]
fn a_batch_keeps_its_order_and_bad_lines_are_answered() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "alpha\n");
    fixture.write("b.txt", "beta\n");
    let mut stream = Stream::start(&fixture, &["--allowedTools", "Write"]);
    let init = stream.next();
    assert_eq!(init["subtype"], "init");
    assert!(
        init["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == "Read")
    );
    stream.send_raw("this is not json");
    stream.send_raw(r#"{"type":"tool_use","name":"Read"}"#);
    let first = stream.next();
    assert_eq!(
        (first["type"].as_str(), first["line"].as_u64()),
        (Some("error"), Some(1))
    );
    let second = stream.next();
    assert_eq!(second["line"], 2);
    assert!(second["message"].as_str().unwrap().contains("\"id\""));
    stream.send(assistant(vec![
        json!({"type": "text", "text": "reading"}),
        tool_use("r1", "Read", json!({"file_path": "a.txt"})),
        tool_use("r2", "Read", json!({"file_path": "b.txt"})),
        tool_use(
            "w1",
            "Write",
            json!({"file_path": "c.txt", "content": "gamma\n"}),
        ),
        tool_use("r3", "Read", json!({"file_path": "c.txt"})),
    ]));
    let user = stream.until(is("user"));
    let content = user["message"]["content"].as_array().unwrap();
    let ids: Vec<&str> = content
        .iter()
        .map(|block| block["tool_use_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["r1", "r2", "w1", "r3"]);
    assert!(content[0]["content"].as_str().unwrap().contains("alpha"));
    assert!(
        content[3]["content"].as_str().unwrap().contains("gamma"),
        "{user}"
    );
    let result = stream.next();
    assert_eq!(result["type"], "result");
    assert_eq!(
        (result["batch"].as_u64(), result["num_calls"].as_u64()),
        (Some(1), Some(4))
    );
    assert_eq!(result["errors"], 0);
    // A bare tool_use block is a batch of its own.
    stream.send(tool_use("g1", "Glob", json!({"pattern": "*.txt"})));
    let user = stream.until(is("user"));
    assert_eq!(user["message"]["content"][0]["tool_use_id"], "g1");
    let (rest, code) = stream.finish();
    assert_eq!(code, Some(0));
    assert!(
        rest.iter().any(|line| line["subtype"] == "session_end"),
        "{rest:?}"
    );
}

/// An `ask` becomes a `control_request`; the agent loop's answer decides the call.
#[test]
fn permission_requests_go_over_the_stream() {
    let fixture = Fixture::new();
    let mut stream = Stream::start(&fixture, &[]);
    stream.next();
    stream.send(tool_use(
        "w1",
        "Write",
        json!({"file_path": "yes.txt", "content": "ok\n"}),
    ));
    let request = stream.until(is("control_request"));
    assert_eq!(request["request"]["tool_name"], "Write");
    assert_eq!(request["request"]["input"]["content"], "ok\n");
    let id = request["request_id"].as_str().unwrap().to_owned();
    stream.send(json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": id, "response": {"behavior": "allow"}}}));
    let user = stream.until(is("user"));
    assert_eq!(user["message"]["content"][0]["is_error"], false, "{user}");
    assert!(fixture.workspace().join("yes.txt").exists());

    stream.send(tool_use(
        "w2",
        "Write",
        json!({"file_path": "no.txt", "content": "x"}),
    ));
    let request = stream.until(is("control_request"));
    let id = request["request_id"].as_str().unwrap().to_owned();
    stream.send(json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": id, "response": {"behavior": "deny", "message": "not that file"}}}));
    let user = stream.until(is("user"));
    let block = &user["message"]["content"][0];
    assert_eq!(block["is_error"], true);
    assert!(
        block["content"].as_str().unwrap().contains("not that file"),
        "{block}"
    );
    let result = stream.next();
    assert_eq!(result["denials"][0]["tool_use_id"], "w2");
    assert!(!fixture.workspace().join("no.txt").exists());
    // An answer nobody asked for is an error line.
    stream.send(json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": "req_999", "response": {"behavior": "allow"}}}));
    assert!(
        stream.next()["message"]
            .as_str()
            .unwrap()
            .contains("req_999")
    );
    let (_, code) = stream.finish();
    assert_eq!(code, Some(0));
}

fn spin_plugin(fixture: &Fixture) -> String {
    fixture
        .plugin("spin", SANDBOX_SPIN, "limits = { timeout_ms = 120000 }")
        .display()
        .to_string()
}

/// A `janua run` with the Spin plugin, a batch of a looping Spin and a Read sent, and the
/// Spin known to be running (its first `tool_progress` line read).
fn spinning(fixture: &Fixture) -> Stream {
    fixture.write("a.txt", "alpha\n");
    let plugin = spin_plugin(fixture);
    let mut stream = Stream::start(fixture, &["--plugins", &plugin]);
    stream.next();
    stream.send(assistant(vec![
        tool_use("s1", "Spin", json!({})),
        tool_use("r1", "Read", json!({"file_path": "a.txt"})),
    ]));
    let progress = stream.until(is("tool_progress"));
    assert_eq!(progress["tool_use_id"], "s1");
    stream
}

/// The text of each `tool_result` in a `user` line.
fn result_texts(user: &Value) -> Vec<&str> {
    user["message"]["content"]
        .as_array()
        .expect("content blocks")
        .iter()
        .map(|block| block["content"].as_str().expect("text content"))
        .collect()
}

/// A `cancel` line interrupts a looping guest mid-batch; the rest of the batch still runs.
#[test]
fn a_cancel_line_stops_a_looping_guest_mid_batch() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "alpha\n");
    let plugin = spin_plugin(&fixture);
    let mut stream = Stream::start(&fixture, &["--plugins", &plugin]);
    stream.next();
    stream.send(assistant(vec![
        tool_use("s1", "Spin", json!({})),
        tool_use("r1", "Read", json!({"file_path": "a.txt"})),
    ]));
    let progress = stream.until(is("tool_progress"));
    assert_eq!(progress["tool_use_id"], "s1");
    stream.send(json!({"type": "cancel", "tool_use_id": "s1"}));
    let user = stream.until(is("user"));
    let content = &user["message"]["content"];
    assert!(
        content[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("cancelled: "),
        "{user}"
    );
    assert!(
        content[0]["content"]
            .as_str()
            .unwrap()
            .contains("agent loop")
    );
    assert_eq!(content[1]["is_error"], false);
    let (_, code) = stream.finish();
    assert_eq!(code, Some(0));
}

/// SIGINT with calls in flight: every unfinished call gets a `cancelled` result, the batch's
/// lines are written, and the process exits cleanly.
#[test]
fn sigint_cancels_unfinished_calls_and_exits_cleanly() {
    let fixture = Fixture::new();
    let mut stream = spinning(&fixture);
    let pid = i32::try_from(stream.child.id()).unwrap();
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
    let user = stream.until(is("user"));
    let texts = result_texts(&user);
    assert!(
        texts.iter().all(|text| text.starts_with("cancelled: ")),
        "{texts:?}"
    );
    assert!(texts[1].contains("before it started"), "{texts:?}");
    let result = stream.next();
    assert_eq!(result["errors"], 2);
    let end = stream.next();
    assert_eq!(end["subtype"], "session_end");
    let status = stream.child.wait().expect("janua exits");
    assert_eq!(status.code(), Some(0));
}

/// Hook lines appear when asked for.
#[test]
fn hook_events_are_written_when_asked_for() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "alpha\n");
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [
        {"type": "command", "command": "exit 0"}]}]}})
    .to_string();
    let mut stream = Stream::start_with(
        &fixture,
        &["--settings", &settings],
        &["--include-hook-events"],
    );
    let init = stream.next();
    assert_eq!(init["hooks"]["hooks"][0]["kind"], "command");
    stream.send(tool_use("r1", "Read", json!({"file_path": "a.txt"})));
    let started = stream.until(|line| line["subtype"] == "hook_started");
    assert_eq!(started["hook_event"], "PreToolUse");
    assert_eq!(started["tool_use_id"], "r1");
    let response = stream.until(|line| line["subtype"] == "hook_response");
    assert_eq!(response["outcome"], "plain");
    stream.until(is("result"));
    let (_, code) = stream.finish();
    assert_eq!(code, Some(0));
}

/// A counting barrier with a deadline: `wait` is true once `parties` callers arrived in time.
struct Rendezvous {
    arrived: Mutex<usize>,
    all_here: Condvar,
    parties: usize,
}

impl Rendezvous {
    fn wait(&self, timeout: Duration) -> bool {
        let mut arrived = self.arrived.lock().unwrap();
        *arrived += 1;
        self.all_here.notify_all();
        let (arrived, _) = self
            .all_here
            .wait_timeout_while(arrived, timeout, |arrived| *arrived < self.parties)
            .unwrap();
        *arrived >= self.parties
    }
}

/// Consecutive concurrency-safe calls run together (three reads meet at a rendezvous only one
/// concurrent run could reach), and the `interrupt` flag answers calls that have not started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrency_safe_calls_run_together_and_an_interrupt_cancels_the_rest() {
    let fixture = Fixture::new();
    for name in ["a", "b", "c"] {
        fixture.write(&format!("{name}.txt"), name);
    }
    let mut runtime = fixture
        .runtime(&[], |config| config.allowed_tools = vec!["Write".into()])
        .await;
    let meeting = Arc::new(Rendezvous {
        arrived: Mutex::new(0),
        all_here: Condvar::new(),
        parties: 3,
    });
    let hook_meeting = Arc::clone(&meeting);
    runtime
        .add_hook(
            HookEvent::PreToolUse,
            "Read",
            Arc::new(FnHook::new("rendezvous", move |event: &Value| {
                if event["tool_input"]["file_path"]
                    .as_str()
                    .unwrap_or_default()
                    .ends_with("d.txt")
                {
                    return Ok(json!({}));
                }
                if hook_meeting.wait(Duration::from_secs(10)) {
                    Ok(json!({}))
                } else {
                    Err("the reads did not run together".into())
                }
            })),
        )
        .expect("valid matcher");
    let calls = |names: &[(&str, &str)]| -> Vec<ToolUse> {
        names
            .iter()
            .map(|(id, file)| ToolUse {
                id: (*id).to_owned(),
                name: if file.starts_with("write:") {
                    "Write"
                } else {
                    "Read"
                }
                .to_owned(),
                input: match file.strip_prefix("write:") {
                    Some(path) => json!({"file_path": path, "content": "dee"}),
                    None => json!({"file_path": file}),
                },
            })
            .collect()
    };
    let batch = runtime
        .dispatch_batch(calls(&[
            ("r1", "a.txt"),
            ("r2", "b.txt"),
            ("r3", "c.txt"),
            ("w1", "write:d.txt"),
            ("r4", "d.txt"),
        ]))
        .await;
    let ids: Vec<&str> = batch
        .results
        .iter()
        .map(|result| result.outcome.tool_use_id.as_str())
        .collect();
    assert_eq!(ids, ["r1", "r2", "r3", "w1", "r4"]);
    for result in &batch.results {
        ok_text(result);
    }
    assert!(ok_text(&batch.results[4]).contains("dee"));

    let options = janua::BatchOptions {
        interrupt: Arc::new(std::sync::atomic::AtomicBool::new(true)),
        ..janua::BatchOptions::default()
    };
    let interrupted = runtime
        .dispatch_batch_with(calls(&[("r5", "d.txt")]), &options)
        .await;
    let text = error_text(&interrupted.results[0], ErrorKind::Cancelled);
    assert!(text.contains("before it started"), "{text}");

    // One id twice in a batch: the second call is refused, the first runs.
    let doubled = runtime
        .dispatch_batch(calls(&[("same", "d.txt"), ("same", "a.txt")]))
        .await;
    ok_text(&doubled.results[0]);
    let text = error_text(&doubled.results[1], ErrorKind::InvalidInput);
    assert!(text.contains("appears more than once"), "{text}");
}

/// The peak resident memory of process `pid` in KiB (`VmHWM`), or its current one (`VmRSS`).
fn memory_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("the field is there")
}

/// A 200 MB output goes to the session's file while the host stays under 100 MB above idle, and
/// the path the model sees reads back with Read and offset/limit.
#[test]
fn a_200_mb_output_is_externalized_in_bounded_memory() {
    let fixture = Fixture::new();
    let mut stream = Stream::start(
        &fixture,
        &["--allowedTools", "Bash", "--max-process-output-mib", "256"],
    );
    stream.next();
    // Warm up the components the calls use, then measure the idle footprint.
    stream.send(tool_use("w0", "Bash", json!({"command": "true"})));
    stream.until(is("result"));
    stream.send(tool_use("w1", "Read", json!({"file_path": "/nonexistent"})));
    stream.until(is("result"));
    let pid = stream.child.id();
    let idle = memory_kib(pid, "VmRSS:");
    stream.send(tool_use(
        "big",
        "Bash",
        json!({"command": "yes janua-line | head -c 200000000"}),
    ));
    let user = stream.until(is("user"));
    stream.next();
    let peak = memory_kib(pid, "VmHWM:");
    eprintln!("janua run: idle {idle} KiB, peak {peak} KiB around a 200 MB command output");
    assert!(
        peak.saturating_sub(idle) < 100 * 1024,
        "peak {peak} KiB vs idle {idle} KiB"
    );
    let text = user["message"]["content"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.len() < 200_000, "{} bytes inline", text.len());
    let path = text
        .split_whitespace()
        .find(|word| word.contains("/tool-results/"))
        .map(|word| {
            word.trim_matches(|c: char| {
                !(c.is_alphanumeric() || c == '/' || c == '.' || c == '-' || c == '_')
            })
        })
        .expect("the result names the file")
        .trim_end_matches('.')
        .to_owned();
    assert!(
        std::fs::metadata(&path).unwrap().len() >= 200_000_000,
        "{path}"
    );
    stream.send(tool_use(
        "back",
        "Read",
        json!({"file_path": path, "offset": 2, "limit": 1}),
    ));
    let back = stream.until(is("user"));
    let read = back["message"]["content"][0]["content"].as_str().unwrap();
    assert_eq!(back["message"]["content"][0]["is_error"], false, "{read}");
    assert!(read.contains("2\tjanua-line"), "{read}");
    let (_, code) = stream.finish();
    assert_eq!(code, Some(0));
}

/// Text is normalized for the model (escape sequences stripped, `\r\n` to `\n`, bytes that are
/// not UTF-8 replaced and counted), a long success is saved whole for Read, and past the batch
/// budget later results are moved to files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_output_layer_normalizes_externalizes_and_keeps_the_batch_budget() {
    let fixture = Fixture::new();
    let echo = fixture.plugin("echo", janua_test_guests::PIPELINE_ECHO, "");
    let runtime = fixture
        .runtime(&[echo], |config| {
            config.allowed_tools = vec!["Bash".into(), "Echo".into()];
        })
        .await;
    let colored = crate::support::call(
        &runtime,
        "Bash",
        json!({"command": "printf '\\033[1;31mred\\033[0m\\r\\nnext\\377line\\n'"}),
    )
    .await;
    let text = ok_text(&colored);
    assert!(text.contains("red\nnext\u{fffd}line"), "{text:?}");
    assert!(!text.contains('\u{1b}') && !text.contains('\r'), "{text:?}");
    let normalization = colored
        .outcome
        .normalization
        .expect("normalization reported");
    assert_eq!(normalization.escape_sequences_stripped, 2);
    assert_eq!(normalization.carriage_returns_converted, 1);
    assert_eq!(normalization.replacement_characters, 1);

    let big = crate::support::call(&runtime, "Echo", json!({"text": "big", "count": 45_000})).await;
    let text = ok_text(&big);
    let saved = runtime.session().results_dir().join("toolu_test.txt");
    assert!(
        text.contains(&saved.display().to_string()),
        "{}",
        &text[text.len() - 300..]
    );
    let read = crate::support::call(
        &runtime,
        "Read",
        json!({"file_path": saved.display().to_string(), "limit": 1}),
    )
    .await;
    assert!(ok_text(&read).contains("xxxxxxxx"));

    // The settings' toolOutputChars sets a tool's inline limit.
    let narrow = fixture
        .runtime(
            &[fixture.plugin("echo", janua_test_guests::PIPELINE_ECHO, "")],
            |config| {
                config.allowed_tools = vec!["Echo".into()];
                config.settings_json = vec![r#"{"toolOutputChars": {"Echo": 5000}}"#.to_owned()];
            },
        )
        .await;
    let cut = crate::support::call(&narrow, "Echo", json!({"text": "big", "count": 45_000})).await;
    assert!(ok_text(&cut).chars().count() <= 5_000);
    assert_eq!(cut.outcome.truncation.unwrap().total_chars, 45_000);

    let calls: Vec<ToolUse> = (0..3)
        .map(|index| ToolUse {
            id: format!("b{index}"),
            name: "Echo".into(),
            input: json!({"text": "big", "count": 20_000}),
        })
        .collect();
    let options = janua::BatchOptions {
        token_budget: 8_000,
        ..janua::BatchOptions::default()
    };
    let batch = runtime.dispatch_batch_with(calls, &options).await;
    assert_eq!(batch.results[0].block.text().len(), 20_000);
    for moved in &batch.results[1..] {
        let text = moved.block.text();
        assert!(
            text.starts_with("[janua: this batch's results passed its budget of 8000"),
            "{text}"
        );
        let path = runtime
            .session()
            .results_dir()
            .join(format!("{}.txt", moved.outcome.tool_use_id));
        assert_eq!(std::fs::read_to_string(path).unwrap().len(), 20_000);
    }
}

/// An `interrupt` line cancels the running call and the calls of its batch that have not
/// started; a `cancel` line reaches a call that is still queued behind another.
#[test]
fn interrupt_and_cancel_reach_running_and_queued_calls() {
    let fixture = Fixture::new();
    let mut stream = spinning(&fixture);
    stream.send(json!({"type": "interrupt"}));
    let user = stream.until(is("user"));
    let texts = result_texts(&user);
    assert!(
        texts[0].starts_with("cancelled: ") && texts[0].contains("interrupted"),
        "{texts:?}"
    );
    assert!(texts[1].starts_with("cancelled: "), "{texts:?}");

    // Spin runs alone; the Read queued behind it is cancelled before it starts.
    stream.send(assistant(vec![
        tool_use("s2", "Spin", json!({})),
        tool_use("r2", "Read", json!({"file_path": "a.txt"})),
    ]));
    stream.until(is("tool_progress"));
    stream.send(json!({"type": "cancel", "tool_use_id": "r2"}));
    stream.send(json!({"type": "cancel", "tool_use_id": "s2"}));
    let user = stream.until(is("user"));
    let content = &user["message"]["content"];
    assert!(
        content[0]["content"]
            .as_str()
            .unwrap()
            .starts_with("cancelled: ")
    );
    assert!(
        content[1]["content"]
            .as_str()
            .unwrap()
            .starts_with("cancelled: "),
        "{user}"
    );
    let (_, code) = stream.finish();
    assert_eq!(code, Some(0));
}

/// SIGINT while a permission question waits: the question is dropped, the call is denied (nobody
/// can answer any more), and the session still ends cleanly.
#[test]
fn sigint_during_a_permission_question_ends_the_session() {
    let fixture = Fixture::new();
    let mut stream = Stream::start(&fixture, &[]);
    stream.next();
    stream.send(tool_use(
        "w1",
        "Write",
        json!({"file_path": "x.txt", "content": "x"}),
    ));
    stream.until(is("control_request"));
    // SAFETY: signalling our own child process.
    unsafe {
        libc::kill(i32::try_from(stream.child.id()).unwrap(), libc::SIGINT);
    }
    let user = stream.until(is("user"));
    assert_eq!(user["message"]["content"][0]["is_error"], true, "{user}");
    stream.until(|line| line["subtype"] == "session_end");
    let status = stream.child.wait().expect("janua exits");
    assert_eq!(status.code(), Some(0));
    assert!(!fixture.workspace().join("x.txt").exists());
}

/// Load: 10,000 calls through `janua run` at concurrency 64, mixed `Read`s, `Grep`s, a failing
/// `Read` of a missing file, a denied `WebFetch` and a few sandboxed `Bash` commands, in ten
/// batches. Every `tool_use_id` is answered exactly once with the outcome its kind implies, the
/// host's peak RSS stays bounded, and no call's temporary directory or child process outlives it.
#[test]
fn ten_thousand_mixed_calls_at_concurrency_64_are_each_answered_once() {
    const BATCHES: usize = 10;
    const PER_BATCH: usize = 1_000;
    let fixture = Fixture::new();
    fixture.write("small.txt", "one needle here\n");
    fixture.write("src/lib.rs", "fn needle() {}\n");
    let tmp = fixture.root().join("tmpdir");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut stream = Stream::start_env(
        &fixture,
        &[
            "--allowedTools",
            "Bash(echo:*)",
            "--disallowedTools",
            "WebFetch(domain:example.com)",
        ],
        &["--max-concurrency", "64"],
        &[("TMPDIR", &tmp)],
    );
    stream.next();
    let pid = stream.child.id();
    // The expected outcome of call `n`: `None` for success, or the error kind.
    let kind_of = |n: usize| match n % 100 {
        0 => ("Bash", json!({"command": "echo load"}), None),
        1..=9 => (
            "Read",
            json!({"file_path": "missing.txt"}),
            Some("tool_failed"),
        ),
        10..=14 => (
            "WebFetch",
            json!({"url": "https://example.com/", "prompt": "x"}),
            Some("permission_denied"),
        ),
        15..=49 => ("Grep", json!({"pattern": "needle"}), None),
        _ => ("Read", json!({"file_path": "small.txt"}), None),
    };
    let mut answered = std::collections::HashMap::<String, usize>::new();
    for batch in 0..BATCHES {
        let blocks = (0..PER_BATCH)
            .map(|index| {
                let n = batch * PER_BATCH + index;
                let (name, input, _) = kind_of(n);
                tool_use(&format!("load{n}"), name, input)
            })
            .collect();
        stream.send(assistant(blocks));
        let user = stream.until(is("user"));
        let result = stream.until(is("result"));
        assert_eq!(result["num_calls"], PER_BATCH, "{result}");
        let outcomes = user["outcomes"].as_array().expect("outcomes");
        for (block, outcome) in user["message"]["content"]
            .as_array()
            .expect("content")
            .iter()
            .zip(outcomes)
        {
            let id = block["tool_use_id"].as_str().expect("id").to_owned();
            let n: usize = id.trim_start_matches("load").parse().expect("our id");
            let (name, _, expected) = kind_of(n);
            let kind = outcome["error"]["kind"].as_str();
            assert_eq!(kind, expected, "{id} ({name}): {block}");
            *answered.entry(id).or_default() += 1;
        }
    }
    assert_eq!(answered.len(), BATCHES * PER_BATCH, "lost results");
    assert!(
        answered.values().all(|&count| count == 1),
        "duplicated results"
    );
    let children: Vec<String> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(Result::ok)
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
        .filter(|stat| {
            stat.rsplit_once(')')
                .and_then(|(_, rest)| rest.split_whitespace().nth(1))
                == Some(pid.to_string().as_str())
        })
        .collect();
    assert!(
        children.is_empty(),
        "children outlive their calls: {children:?}"
    );
    let peak = memory_kib(pid, "VmHWM:");
    eprintln!("load: 10000 mixed calls at concurrency 64, peak RSS {peak} KiB");
    assert!(peak < 512 * 1024, "peak RSS {peak} KiB");
    let (_, code) = stream.finish();
    assert_eq!(code, Some(0));
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().collect();
    assert!(left.is_empty(), "temporary files left: {left:?}");
}

/// `--watch`: a plugin directory that changes is reloaded; the call running when it changes
/// finishes on the component it started with, new calls get the new tools, a `system` line says
/// so, and a broken change leaves the old tools in place.
#[test]
fn watch_reloads_a_changed_plugin_while_the_running_call_finishes_on_the_old_one() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin("swap", SANDBOX_SPIN, "limits = { timeout_ms = 4000 }");
    let plugin_text = plugin.display().to_string();
    let mut stream = Stream::start_with(
        &fixture,
        &[
            "--plugins",
            &plugin_text,
            "--tools",
            "",
            "--allowedTools",
            "Echo",
        ],
        &["--watch", "--watch-interval-ms", "50"],
    );
    stream.next();
    stream.send(assistant(vec![tool_use("s1", "Spin", json!({}))]));
    let progress = stream.until(is("tool_progress"));
    assert_eq!(progress["tool_use_id"], "s1");

    // The directory now holds Echo instead of Spin (swapped in one rename, as a build would).
    std::fs::copy(PIPELINE_ECHO, plugin.join("tool.wasm.partial")).expect("copy guest");
    std::fs::rename(plugin.join("tool.wasm.partial"), plugin.join("tool.wasm")).expect("swap");
    let (mut changed, mut spin_result) = (None, None);
    while changed.is_none() || spin_result.is_none() {
        let line = stream.next();
        if line["subtype"] == "tools_changed" {
            changed = Some(line);
        } else if line["type"] == "user" {
            spin_result = Some(line);
        }
    }
    let changed = changed.expect("a tools_changed line");
    assert_eq!(changed["tools"], json!(["Echo", "Picky"]), "{changed}");
    let spin_result = spin_result.expect("Spin's result");
    let texts = result_texts(&spin_result);
    assert!(
        texts[0].starts_with("timeout"),
        "the running Spin ends on its own component: {spin_result}"
    );

    stream.send(assistant(vec![
        tool_use("e1", "Echo", json!({"text": "from the new component"})),
        tool_use("s2", "Spin", json!({})),
    ]));
    let user = stream.until(is("user"));
    let texts = result_texts(&user);
    assert!(texts[0].contains("from the new component"), "{user}");
    assert!(texts[1].starts_with("unknown_tool"), "{user}");

    std::fs::write(plugin.join("janua.toml"), "[plugin]\nname = ").expect("break manifest");
    let failed = stream.until(|line| line["subtype"] == "tools_reload_failed");
    assert_eq!(failed["tools"], json!(["Echo", "Picky"]), "{failed}");
    assert!(
        failed["error"]
            .as_str()
            .unwrap_or("")
            .contains("janua.toml"),
        "{failed}"
    );
    stream.send(assistant(vec![tool_use(
        "e2",
        "Echo",
        json!({"text": "still here"}),
    )]));
    let user = stream.until(is("user"));
    assert!(result_texts(&user)[0].contains("still here"), "{user}");
    let (_, code) = stream.finish();
    assert_eq!(code, Some(0));
}
