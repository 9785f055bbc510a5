//! Shared fixtures: workspaces in temporary directories, plugin directories holding real test
//! guests, and runtimes whose compiled components are cached across tests.

use std::path::{Path, PathBuf};

use janua::{Dispatch, Runtime, RuntimeConfig, ToolUse};
use serde_json::Value;
use tempfile::TempDir;

/// Compiled components shared by every test (and by the binary in CLI tests).
pub(crate) fn cache_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("component-cache")
}

/// A temporary workspace plus a state directory and an "outside" directory next to it.
pub(crate) struct Fixture {
    root: TempDir,
}

impl Fixture {
    pub(crate) fn new() -> Self {
        let root = tempfile::tempdir().expect("create temp dir");
        for dir in ["workspace", "state", "outside", "plugins"] {
            std::fs::create_dir_all(root.path().join(dir)).expect("create fixture dir");
        }
        std::fs::write(
            root.path().join("outside/secret.txt"),
            "TOPSECRET-outside\n",
        )
        .expect("write secret");
        Self { root }
    }

    /// The workspace directory (canonical).
    pub(crate) fn workspace(&self) -> PathBuf {
        std::fs::canonicalize(self.root.path().join("workspace")).expect("canonical workspace")
    }

    /// The directory beside the workspace holding `secret.txt`.
    pub(crate) fn outside(&self) -> PathBuf {
        std::fs::canonicalize(self.root.path().join("outside")).expect("canonical outside")
    }

    /// `$XDG_CONFIG_HOME` for binaries the tests run: user settings live in `janua/` under it.
    pub(crate) fn config_home(&self) -> PathBuf {
        self.root.path().join("config")
    }

    pub(crate) fn state_dir(&self) -> PathBuf {
        self.root.path().join("state")
    }

    /// Writes `text` to `name` inside the workspace.
    pub(crate) fn write(&self, name: &str, text: impl AsRef<[u8]>) -> PathBuf {
        let path = self.workspace().join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("create parent");
        }
        std::fs::write(&path, text).expect("write workspace file");
        path
    }

    /// A plugin directory named `name` holding `guest` and a manifest whose `[[tool]]` table has
    /// `extra` appended (grants, limits).
    pub(crate) fn plugin(&self, name: &str, guest: &str, extra: &str) -> PathBuf {
        let dir = self.root.path().join("plugins").join(name);
        std::fs::create_dir_all(&dir).expect("create plugin dir");
        std::fs::copy(guest, dir.join("tool.wasm")).expect("copy guest");
        std::fs::write(
            dir.join("janua.toml"),
            format!(
                "[plugin]\nname = \"{name}\"\n\n[[tool]]\ncomponent = \"tool.wasm\"\n{extra}\n"
            ),
        )
        .expect("write manifest");
        dir
    }

    /// A plugin directory named `name` holding `guest` as `ext.wasm` and a manifest whose body
    /// after `[plugin]` is `body` (`[[hooks]]` and `[[monitors]]` tables naming `ext.wasm`).
    pub(crate) fn extension_plugin(&self, name: &str, guest: &str, body: &str) -> PathBuf {
        let dir = self.root.path().join("plugins").join(name);
        std::fs::create_dir_all(&dir).expect("create plugin dir");
        std::fs::copy(guest, dir.join("ext.wasm")).expect("copy guest");
        std::fs::write(
            dir.join("janua.toml"),
            format!("[plugin]\nname = \"{name}\"\n\n{body}\n"),
        )
        .expect("write manifest");
        dir
    }

    /// The fixture's root directory (holds `workspace`, `state`, `outside`, `plugins`).
    pub(crate) fn root(&self) -> &Path {
        self.root.path()
    }

    /// A runtime configuration for this fixture.
    pub(crate) fn config(&self) -> RuntimeConfig {
        let mut config = RuntimeConfig::new(self.workspace());
        config.state_dir = Some(self.state_dir());
        config.cache_dir = Some(cache_dir());
        config
    }

    /// A runtime with `plugins` and `configure` applied.
    pub(crate) async fn runtime(
        &self,
        plugins: &[PathBuf],
        configure: impl FnOnce(&mut RuntimeConfig),
    ) -> Runtime {
        let mut config = self.config();
        config.plugin_dirs = plugins.to_vec();
        configure(&mut config);
        Runtime::new(config).await.expect("runtime starts")
    }
}

/// Dispatches `name` with `input`.
pub(crate) async fn call(runtime: &Runtime, name: &str, input: Value) -> Dispatch {
    runtime
        .dispatch(ToolUse {
            id: "toolu_test".to_owned(),
            name: name.to_owned(),
            input,
        })
        .await
}

/// The `tool_use` blocks `(id, name, input)` of one assistant message.
pub(crate) fn batch(calls: &[(&str, &str, Value)]) -> Vec<ToolUse> {
    calls
        .iter()
        .map(|(id, name, input)| ToolUse {
            id: (*id).to_owned(),
            name: (*name).to_owned(),
            input: input.clone(),
        })
        .collect()
}

/// The text of a result block.
pub(crate) fn text(dispatch: &Dispatch) -> String {
    dispatch.block.text()
}

/// Asserts `dispatch` succeeded and returns its text.
pub(crate) fn ok_text(dispatch: &Dispatch) -> String {
    assert!(
        !dispatch.block.is_error,
        "expected success, got {:?}",
        dispatch.block
    );
    text(dispatch)
}

/// Asserts `dispatch` failed with `kind` and returns its text.
pub(crate) fn error_text(dispatch: &Dispatch, kind: janua::ErrorKind) -> String {
    assert!(
        dispatch.block.is_error,
        "expected {kind}, got success: {:?}",
        dispatch.block
    );
    assert_eq!(dispatch.error_kind(), Some(kind), "{:?}", dispatch.block);
    let text = text(dispatch);
    assert!(text.starts_with(&format!("{kind}: ")), "{text}");
    text
}

/// The path of the built binary.
pub(crate) fn janua_bin() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_janua"))
}

/// Holds `count` idle connections to `port` on loopback (none sends a byte) while `during`
/// runs, and returns what it returned with the CPU time the process `pid` spent meanwhile.
pub(crate) fn with_idle_connections<T>(
    port: u16,
    count: usize,
    pid: u32,
    during: impl FnOnce() -> T,
) -> (T, std::time::Duration) {
    // One flood at a time: they share this process's open-file limit.
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _turn = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poison| poison.into_inner());
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    // This process holds them all: its own limit must allow it, whatever the server's is.
    // SAFETY: getrlimit/setrlimit on this process with a stack struct.
    unsafe {
        let mut limit: libc::rlimit = std::mem::zeroed();
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 {
            let wanted = (count as libc::rlim_t + 256).min(limit.rlim_max);
            if limit.rlim_cur < wanted {
                limit.rlim_cur = wanted;
                libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
            }
        }
    }
    let mut idle = Vec::with_capacity(count);
    for _ in 0..count {
        match std::net::TcpStream::connect_timeout(&address, std::time::Duration::from_secs(2)) {
            Ok(stream) => idle.push(stream),
            // A server that no longer takes connections: the assertion below says so, at once.
            Err(_) => break,
        }
    }
    assert!(idle.len() > count / 2, "only {} connected", idle.len());
    let before = cpu_time(pid);
    let result = during();
    let spent = cpu_time(pid).saturating_sub(before);
    drop(idle);
    (result, spent)
}

/// The user and system CPU time process `pid` has used (`/proc/PID/stat`).
pub(crate) fn cpu_time(pid: u32) -> std::time::Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // Fields after the command name, which is in parentheses and may hold spaces.
    let fields: Vec<&str> = stat
        .rsplit_once(") ")
        .map(|(_, rest)| rest.split(' ').collect())
        .unwrap_or_default();
    let ticks: u64 = [11, 12]
        .iter()
        .filter_map(|index| fields.get(*index)?.parse::<u64>().ok())
        .sum();
    // The kernel's USER_HZ is 100 on every Linux janua supports.
    std::time::Duration::from_millis(ticks * 10)
}

/// One HTTP/1.1 POST of `body` to `path` at `address`, with `headers` (and a JSON content type,
/// `Connection: close`), given up after `limit` when one is given: the status (0 when the reply
/// has none) and the body.
pub(crate) fn http_post(
    address: std::net::SocketAddr,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
    limit: Option<std::time::Duration>,
) -> std::io::Result<(u16, String)> {
    use std::io::{Read as _, Write as _};
    let mut stream = match limit {
        Some(limit) => std::net::TcpStream::connect_timeout(&address, limit)?,
        None => std::net::TcpStream::connect(address)?,
    };
    stream.set_read_timeout(limit)?;
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n",
        body.len()
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes())?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let status = response
        .split_whitespace()
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    let body = response
        .split_once("\r\n\r\n")
        .map(|(_, body)| body.to_owned())
        .unwrap_or_default();
    Ok((status, body))
}
