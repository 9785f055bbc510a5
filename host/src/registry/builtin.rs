//! The built-in tool set: components embedded in the binary at build time, with the grants janua
//! declares for them.

use std::sync::Arc;
use std::time::Duration;

use super::{ComponentEntry, RegisteredTool, RegistryError, ToolSource, builtin_limits, load};
use janua_sandbox::Limits;
use janua_sandbox::{ComponentKind, LoadedComponent, Sandbox, Wasm};
use janua_sandbox::{FsAccess, FsGrant, Grants, NetGrant, ProcessGrant};
use janua_types::ToolSpec;

include!(concat!(env!("OUT_DIR"), "/embedded_tools.rs"));

/// The grants janua gives the embedded component built from `example-tools/<crate_dir>`.
fn grants_for(crate_dir: &str) -> Grants {
    let workspace = |access| Grants {
        fs: vec![FsGrant::new("${WORKSPACE}", access).expect("valid built-in grant")],
        ..Grants::default()
    };
    match crate_dir {
        // Read, Glob, Grep: the workspace (and additional directories), read-only. No environment.
        "read" | "glob" | "grep" => workspace(FsAccess::Read),
        // Write, Edit, NotebookEdit: read-write, narrowed per call to the directory of the file the
        // decision allowed (see `pipeline/execute.rs`).
        "write" | "edit" | "notebook_edit" => workspace(FsAccess::ReadWrite),
        // Bash, TaskOutput, TaskStop: no files through WASI at all; `/bin/bash -c <script>` through
        // the process sandbox, which bounds what the script touches (see `sandbox/process`).
        "bash" => Grants {
            process: vec![
                ProcessGrant::new(
                    "/bin/bash",
                    vec!["-c".to_owned(), "*".to_owned()],
                    Vec::new(),
                )
                .expect("valid built-in grant"),
            ],
            ..Grants::default()
        },
        // WebFetch: no files, no environment; any http or https destination, every request still
        // checked against the permission rules and the private-address policy (`sandbox/http.rs`).
        // Browser: no files, no environment; the `browser` interface, whose page reaches any http
        // or https destination only through the same checks as WebFetch (`sandbox/browser.rs`).
        "browser" => Grants {
            net: ["http://*:*", "https://*:*"]
                .into_iter()
                .map(|pattern| {
                    NetGrant::try_from(pattern.to_owned()).expect("valid built-in grant")
                })
                .collect(),
            browser: true,
            ..Grants::default()
        },
        "web_fetch" => Grants {
            net: ["http://*:*", "https://*:*"]
                .into_iter()
                .map(|pattern| {
                    NetGrant::try_from(pattern.to_owned()).expect("valid built-in grant")
                })
                .collect(),
            ..Grants::default()
        },
        _ => Grants::default(),
    }
}

/// The call budget of Bash's longest command (600 s) plus room to report it.
const BASH_CALL_TIMEOUT: Duration = Duration::from_secs(610);
/// Browser's call budget: a page and several steps of up to 15 s each by default.
const BROWSER_CALL_TIMEOUT: Duration = Duration::from_secs(120);

/// The limits of the embedded component built from `example-tools/<crate_dir>`: the operator's,
/// except that Bash's call lasts at least as long as the longest command timeout it accepts
/// (the command's own `timeout` then bounds it), and Browser's at least two minutes (each step
/// has its own limit).
fn limits_for(crate_dir: &str, operator_limits: Limits) -> Limits {
    let mut limits = builtin_limits(operator_limits);
    match crate_dir {
        "bash" => limits.timeout = limits.timeout.max(BASH_CALL_TIMEOUT),
        "browser" => limits.timeout = limits.timeout.max(BROWSER_CALL_TIMEOUT),
        _ => {}
    }
    limits
}

/// A built-in tool as described, before it is registered: only selected tools are registered,
/// and their validators are compiled at their first call.
pub(super) struct DescribedBuiltin {
    pub(super) spec: ToolSpec,
    component: Arc<ComponentEntry>,
}

impl DescribedBuiltin {
    /// The tool, its validator compiled when first used (the schemas of the built-ins ship in
    /// the binary and are tested, so none fails to compile).
    pub(super) fn register(self) -> RegisteredTool {
        RegisteredTool::compiled_on_use(self.spec, super::Backend::Component(self.component))
    }
}

/// Loads every embedded component and describes its tools. Start-up is what users wait for: a
/// component whose description is cached is not even loaded until its first call; the others
/// (the first run, or after an upgrade) are compiled on every core at once, with progress on a
/// terminal, and described concurrently. Each description is read once, and no validator is
/// compiled here: validators and their patterns' regexes were a quarter of an MCP server's
/// start-up CPU, most of it for tools `--tools` left out (BENCHMARKS.md, issue 33 step 5).
pub(super) async fn load(
    sandbox: &Sandbox,
    operator_limits: Limits,
) -> Result<Vec<DescribedBuiltin>, RegistryError> {
    let label = |crate_dir: &str| format!("built-in component {crate_dir}");
    let components: Vec<LoadedComponent> = EMBEDDED_COMPONENTS
        .iter()
        .map(|(crate_dir, wasm, digest)| {
            sandbox.lazy(
                Wasm::Embedded(wasm),
                Some(digest),
                &label(crate_dir),
                ComponentKind::Tool,
            )
        })
        .collect();
    let cached: Vec<Option<Vec<ToolSpec>>> = EMBEDDED_COMPONENTS
        .iter()
        .zip(&components)
        .map(|((crate_dir, _, _), component)| {
            recorded_specs(crate_dir).or_else(|| load::cached_specs(sandbox, &component.digest))
        })
        .collect();
    let uncached: Vec<&LoadedComponent> = components
        .iter()
        .zip(&cached)
        .filter(|(_, specs)| specs.is_none())
        .map(|(component, _)| component)
        .collect();
    compile_all(sandbox, &uncached)?;
    let loaded = components.into_iter().zip(cached);
    let mut described = Vec::new();
    for ((crate_dir, _, _), (loaded, cached)) in EMBEDDED_COMPONENTS.iter().zip(loaded) {
        let component = ComponentEntry {
            loaded,
            grants: grants_for(crate_dir),
            limits: limits_for(crate_dir, operator_limits),
            source: ToolSource::BuiltIn,
            plugin_data: None,
            keep_escapes: false,
        };
        described.push(async move {
            let label = label(crate_dir);
            let specs = load::describe_specs(sandbox, &component, &label, cached).await?;
            let component = Arc::new(component);
            Ok::<_, RegistryError>(
                specs
                    .into_iter()
                    .map(|spec| DescribedBuiltin {
                        spec,
                        component: Arc::clone(&component),
                    })
                    .collect::<Vec<_>>(),
            )
        });
    }
    let mut tools = Vec::new();
    for listed in futures_util::future::join_all(described).await {
        tools.extend(listed?);
    }
    Ok(tools)
}

/// What each embedded component's `describe` answers, recorded in the binary
/// (`builtin_tools.json`, kept equal to the components by a test that rewrites it with
/// `BLESS=1`), so that no built-in is compiled before its first call: deciding alone (`janua
/// check`, the Claude Code hook) never compiles anything, however cold the cache.
static RECORDED_SPECS: std::sync::LazyLock<std::collections::BTreeMap<String, Vec<ToolSpec>>> =
    std::sync::LazyLock::new(|| {
        // Unreadable (which the test rules out) only means describing each component as before.
        serde_json::from_str(include_str!("builtin_tools.json")).unwrap_or_default()
    });

/// The recorded description of the embedded component built from `example-tools/<crate_dir>`.
fn recorded_specs(crate_dir: &str) -> Option<Vec<ToolSpec>> {
    RECORDED_SPECS
        .get(crate_dir)
        .filter(|specs| !specs.is_empty())
        .cloned()
}

/// Compiles (or loads from the cache) and links `components` on every core, reporting progress on
/// a terminal: the first run's Cranelift compilation takes seconds, and silence would look hung.
pub(crate) fn compile_all(
    sandbox: &Sandbox,
    components: &[&LoadedComponent],
) -> Result<(), RegistryError> {
    use std::io::IsTerminal as _;
    use std::sync::atomic::{AtomicUsize, Ordering};
    if components.is_empty() {
        return Ok(());
    }
    let show = std::io::stderr().is_terminal()
        && components
            .iter()
            .any(|component| !sandbox.has_compiled(&component.digest));
    let total = components.len();
    let done = AtomicUsize::new(0);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let next = AtomicUsize::new(0);
    let failures: std::sync::Mutex<Vec<RegistryError>> = std::sync::Mutex::default();
    std::thread::scope(|scope| {
        for _ in 0..threads.min(total) {
            scope.spawn(|| {
                while let Some(component) = components.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Err(error) = sandbox.prepare(component) {
                        failures
                            .lock()
                            .unwrap_or_else(|poison| poison.into_inner())
                            .push(error.into());
                    }
                    let finished = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if show {
                        eprint!(
                            "\rjanua: compiling components ({finished}/{total}, first run or new version)"
                        );
                        if finished == total {
                            eprintln!();
                        }
                    }
                }
            });
        }
    });
    match failures
        .into_inner()
        .unwrap_or_else(|poison| poison.into_inner())
        .into_iter()
        .next()
    {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// The example hooks and monitors shipped in the binary: (crate directory name, artifact file name,
/// component bytes, `janua.toml`).
pub(crate) fn example_extensions()
-> &'static [(&'static str, &'static str, &'static [u8], &'static str)] {
    EMBEDDED_EXTENSIONS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The recorded descriptions are what the components describe now; `BLESS=1` rewrites them.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn recorded_descriptions_match_the_components() {
        let cache =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/tmp/component-cache");
        let sandbox = Sandbox::engine_on_demand(Some(&cache));
        let mut described = std::collections::BTreeMap::new();
        for (crate_dir, wasm, digest) in EMBEDDED_COMPONENTS {
            let component = ComponentEntry {
                loaded: sandbox.lazy(
                    Wasm::Embedded(wasm),
                    Some(digest),
                    crate_dir,
                    ComponentKind::Tool,
                ),
                grants: Grants::default(),
                limits: builtin_limits(Limits::default()),
                source: ToolSource::BuiltIn,
                plugin_data: None,
                keep_escapes: false,
            };
            compile_all(&sandbox, &[&component.loaded]).expect("the built-in compiles");
            let specs = load::describe_specs(&sandbox, &component, crate_dir, None)
                .await
                .expect("the built-in describes its tools");
            described.insert((*crate_dir).to_owned(), specs);
        }
        let text = serde_json::to_string_pretty(&described).unwrap() + "\n";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/registry/builtin_tools.json");
        if std::env::var_os("BLESS").is_some() {
            std::fs::write(&path, &text).unwrap();
        }
        let recorded = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            recorded == text,
            "{} differs from what the built-in components describe: rerun with BLESS=1 to record it",
            path.display()
        );
        let read: std::collections::BTreeMap<String, Vec<ToolSpec>> =
            serde_json::from_str(&recorded).expect("the record reads back");
        assert_eq!(read.len(), EMBEDDED_COMPONENTS.len());
    }
}
