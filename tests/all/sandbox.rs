//! Hostile guests: a crash, an infinite loop and a memory hog each end in a typed error result, and
//! the host keeps serving afterwards.

use std::time::{Duration, Instant};

use janua::ErrorKind;
use janua_test_guests::{PIPELINE_ECHO, SANDBOX_HOG, SANDBOX_SPIN, SANDBOX_TRAP};
use serde_json::json;

use crate::support::{Fixture, call, error_text, ok_text};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn sandbox_trap() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "still serving\n");
    let plugin = fixture.plugin("trap", SANDBOX_TRAP, "");
    let runtime = fixture.runtime(&[plugin], |_| {}).await;
    let text = error_text(
        &call(&runtime, "Trap", json!({})).await,
        ErrorKind::ToolFailed,
    );
    assert!(text.contains("Trap crashed: wasm trap"), "{text}");
    assert!(
        text.contains("guest panicked on purpose"),
        "the guest's panic message is reported: {text}"
    );
    assert!(
        ok_text(&call(&runtime, "Read", json!({"file_path": "a.txt"})).await)
            .contains("still serving")
    );
    // The same component runs again in a fresh store.
    error_text(
        &call(&runtime, "Trap", json!({})).await,
        ErrorKind::ToolFailed,
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn sandbox_spin() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "after the loop\n");
    let plugin = fixture.plugin("spin", SANDBOX_SPIN, "");
    let runtime = fixture
        .runtime(&[plugin], |c| c.limits.timeout = Duration::from_secs(1))
        .await;
    let started = Instant::now();
    let text = error_text(&call(&runtime, "Spin", json!({})).await, ErrorKind::Timeout);
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_secs(2),
        "stopped within deadline + 1 s, took {elapsed:?}"
    );
    assert!(
        elapsed >= Duration::from_millis(900),
        "not before the deadline, took {elapsed:?}"
    );
    assert!(text.contains("did not finish within 1 s"), "{text}");
    assert!(
        ok_text(&call(&runtime, "Read", json!({"file_path": "a.txt"})).await)
            .contains("after the loop")
    );
}

/// A guest with no files, processes or delegation runs on the calling task (no thread hand-off).
/// Spinning there, it must still leave the worker to other tasks and their timers at every epoch
/// tick: on a one-worker runtime, ten 20 ms sleeps finish while it spins out its 1.5 s deadline.
/// (Woken the plain way, the spinning task would run again at once and the timers would wait for
/// tokio's periodic driver check, about 0.6 s each.)
#[tokio::test(flavor = "multi_thread", worker_threads = 1)]
async fn an_inline_guest_spinning_leaves_the_worker_to_timers() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin("spin", SANDBOX_SPIN, "");
    let runtime = fixture
        .runtime(&[plugin], |c| {
            c.limits.timeout = Duration::from_millis(1500)
        })
        .await;
    let sleeper = tokio::spawn(async {
        let started = Instant::now();
        for _ in 0..10 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        started.elapsed()
    });
    // Both on the worker (the test body itself runs on its own thread).
    let spin = tokio::spawn(async move { call(&runtime, "Spin", json!({})).await });
    let (result, slept) = tokio::join!(spin, sleeper);
    error_text(&result.expect("spin task"), ErrorKind::Timeout);
    let slept = slept.expect("sleeper task");
    assert!(
        slept < Duration::from_millis(1400),
        "the sleeps finished while the guest spun: {slept:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_timeout_only_lowers_the_operators() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin("spin", SANDBOX_SPIN, "limits = { timeout_ms = 300 }");
    let runtime = fixture.runtime(&[plugin], |_| {}).await;
    let started = Instant::now();
    error_text(&call(&runtime, "Spin", json!({})).await, ErrorKind::Timeout);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_a_call_interrupts_the_guest() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin("spin", SANDBOX_SPIN, "");
    let runtime = fixture.runtime(&[plugin], |_| {}).await;
    let cancel = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = std::sync::Arc::clone(&cancel);
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        flag.store(true, std::sync::atomic::Ordering::Relaxed);
    });
    let call = janua::ToolUse {
        id: "t".into(),
        name: "Spin".into(),
        input: json!({}),
    };
    let result = runtime.dispatch_cancellable(call, cancel).await;
    error_text(&result, ErrorKind::Cancelled);
}

/// A dispatch whose future is dropped mid-call (its caller timed out) still stops the guest,
/// releases the call's cancel handle and reports `tool_finished`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_dispatch_stops_its_guest_and_reports_the_call_finished() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin("spin", SANDBOX_SPIN, "");
    let runtime = fixture.runtime(&[plugin], |_| {}).await;
    let events = std::sync::Arc::new(std::sync::Mutex::new(Vec::<serde_json::Value>::new()));
    let sink = std::sync::Arc::clone(&events);
    runtime.set_event_sink(std::sync::Arc::new(move |event: &serde_json::Value| {
        sink.lock().unwrap().push(event.clone());
    }));
    let call = janua::ToolUse {
        id: "dropped".into(),
        name: "Spin".into(),
        input: json!({}),
    };
    let timed_out = tokio::time::timeout(Duration::from_millis(300), runtime.dispatch(call)).await;
    assert!(timed_out.is_err(), "the spinning guest ended on its own");
    assert!(
        !runtime.cancel("dropped", "late"),
        "the dropped call's cancel handle is still registered"
    );
    let finished: Vec<serde_json::Value> = events
        .lock()
        .unwrap()
        .iter()
        .filter(|event| event["event"] == "tool_finished" && event["tool_use_id"] == "dropped")
        .cloned()
        .collect();
    assert_eq!(finished.len(), 1, "{finished:?}");
    assert_eq!(finished[0]["error_kind"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn sandbox_hog() {
    let fixture = Fixture::new();
    let hog = fixture.plugin("hog", SANDBOX_HOG, "");
    let echo = fixture.plugin("echo", PIPELINE_ECHO, "");
    let runtime = fixture
        .runtime(&[hog, echo], |c| {
            c.limits.memory_bytes = 64 << 20;
            c.allowed_tools = vec!["Echo".into()];
        })
        .await;
    let text = error_text(
        &call(&runtime, "Hog", json!({})).await,
        ErrorKind::ResourceExhausted,
    );
    assert!(text.contains("memory limit of 64 MiB reached"), "{text}");
    ok_text(&call(&runtime, "Echo", json!({"text": "alive"})).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_memory_limit_applies() {
    let fixture = Fixture::new();
    let hog = fixture.plugin("hog", SANDBOX_HOG, "limits = { memory_mib = 16 }");
    let runtime = fixture.runtime(&[hog], |_| {}).await;
    let text = error_text(
        &call(&runtime, "Hog", json!({})).await,
        ErrorKind::ResourceExhausted,
    );
    assert!(text.contains("memory limit of 16 MiB"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_looping_validate_input_times_out() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin("spin", SANDBOX_SPIN, "");
    let runtime = fixture
        .runtime(&[plugin], |c| c.limits.timeout = Duration::from_millis(500))
        .await;
    let started = Instant::now();
    error_text(
        &call(&runtime, "SpinCheck", json!({})).await,
        ErrorKind::Timeout,
    );
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_cannot_raise_the_operators_memory_limit() {
    let fixture = Fixture::new();
    let hog = fixture.plugin("hog", SANDBOX_HOG, "limits = { memory_mib = 1024 }");
    let runtime = fixture
        .runtime(&[hog], |c| c.limits.memory_bytes = 32 << 20)
        .await;
    let text = error_text(
        &call(&runtime, "Hog", json!({})).await,
        ErrorKind::ResourceExhausted,
    );
    assert!(text.contains("memory limit of 32 MiB"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn oversized_structured_results_are_dropped_with_a_warning() {
    let fixture = Fixture::new();
    let echo = fixture.plugin("echo", PIPELINE_ECHO, "");
    let runtime = fixture
        .runtime(&[echo], |c| c.allowed_tools = vec!["Echo".into()])
        .await;
    let input = json!({"text": "huge_structured", "count": 9 << 20});
    let result = call(&runtime, "Echo", input).await;
    assert_eq!(ok_text(&result), "huge");
    assert!(result.outcome.structured.is_none());
    assert!(
        result
            .outcome
            .warnings
            .iter()
            .any(|w| w.contains("over the 8388608-byte cap")),
        "{:?}",
        result.outcome.warnings
    );
}

/// Opening a FIFO nobody writes to would hold the guest inside a host call, beyond the epoch
/// deadline's reach, and a guest's file calls run on the calling thread. So the filesystem layer
/// opens only regular files and directories: the hostile open is refused at once (not a 500 ms
/// timeout), in both runtime flavours (multi-thread runs it in place, current-thread on the
/// blocking pool), and the host keeps serving.
async fn a_fifo_open_is_refused_at_once() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "still here\n");
    let fifo = fixture.workspace().join("pipe");
    let status = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo");
    assert!(status.success());
    let plugin = fixture.plugin(
        "escape",
        janua_test_guests::GRANTS_FS_ESCAPE,
        "grants = { fs = [{ path = \"${WORKSPACE}\", access = \"read\" }] }",
    );
    let runtime = fixture
        .runtime(&[plugin], |c| c.limits.timeout = Duration::from_millis(500))
        .await;
    let result = call(&runtime, "Peek", json!({ "target": "pipe" })).await;
    let text = error_text(&result, ErrorKind::ToolFailed);
    assert!(text.to_lowercase().contains("not supported"), "{text}");
    assert!(
        ok_text(&call(&runtime, "Read", json!({"file_path": "a.txt"})).await)
            .contains("still here")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fifo_open_is_refused_at_once_in_place() {
    a_fifo_open_is_refused_at_once().await;
}

#[tokio::test(flavor = "current_thread")]
async fn a_fifo_open_is_refused_at_once_on_the_blocking_pool() {
    a_fifo_open_is_refused_at_once().await;
}

/// More concurrent calls than the instance pool holds: the extra ones wait for a slot until their
/// own deadline and then end as `resource_exhausted` (never a crash or an endless wait), and the
/// host serves normally afterwards. The crowd spins for 3 s while the late callers allow themselves
/// only 300 ms, so no slot can come free in time for them whatever the machine's speed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pool_exhaustion_is_resource_exhausted_and_recoverable() {
    let fixture = Fixture::new();
    fixture.write("a.txt", "after the crowd\n");
    let spin = fixture.plugin("spin", SANDBOX_SPIN, "");
    let echo = fixture.plugin("echo", PIPELINE_ECHO, "limits = { timeout_ms = 300 }");
    let runtime = std::sync::Arc::new(
        fixture
            .runtime(&[spin, echo], |c| {
                c.limits.timeout = Duration::from_secs(3);
                c.allowed_tools = vec!["Echo".into()];
            })
            .await,
    );
    let spawn = |tool: &'static str, input: serde_json::Value| {
        let runtime = std::sync::Arc::clone(&runtime);
        tokio::spawn(async move { call(&runtime, tool, input).await.error_kind() })
    };
    // The pool holds 32 instances, 8 of them kept for monitors and nested calls.
    let crowd: Vec<_> = (0..26).map(|_| spawn("Spin", json!({}))).collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let late: Vec<_> = (0..6)
        .map(|_| spawn("Echo", json!({"text": "late"})))
        .collect();
    let mut late_kinds = Vec::new();
    for task in late {
        late_kinds.push(task.await.unwrap());
    }
    assert!(
        late_kinds
            .iter()
            .all(|kind| *kind == Some(ErrorKind::ResourceExhausted)),
        "every late caller finds the pool full: {late_kinds:?}"
    );
    let mut crowd_kinds = Vec::new();
    for task in crowd {
        crowd_kinds.push(task.await.unwrap());
    }
    let timed_out = crowd_kinds
        .iter()
        .filter(|kind| **kind == Some(ErrorKind::Timeout))
        .count();
    assert!(
        crowd_kinds.iter().all(|kind| matches!(
            kind,
            Some(ErrorKind::Timeout | ErrorKind::ResourceExhausted)
        )),
        "{crowd_kinds:?}"
    );
    assert!(
        timed_out >= 24,
        "the pool's free slots all ran: {crowd_kinds:?}"
    );
    assert!(
        ok_text(&call(&runtime, "Read", json!({"file_path": "a.txt"})).await)
            .contains("after the crowd")
    );
    assert!(ok_text(&call(&runtime, "Echo", json!({"text": "again"})).await).contains("again"));
}
