//! `janua plugin new|build|check|approve`: the plugin author's and approver's loop.
//!
//! `new` writes a crate from the templates beside this file; `build` runs cargo for
//! `wasm32-wasip2` and places the component where `janua.toml` names it; `check` and `approve`
//! are library calls ([`janua::plugins::check_plugin`], [`janua::plugins::approve_plugin`]).

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context as _, bail};
use clap::{Args, Subcommand, ValueEnum};

const CARGO_TEMPLATE: &str = include_str!("plugin/Cargo.toml.in");
const TOOL_SOURCE: &str = include_str!("plugin/tool.rs.in");
const HOOK_SOURCE: &str = include_str!("plugin/hook.rs.in");
const MONITOR_SOURCE: &str = include_str!("plugin/monitor.rs.in");
const TOOL_MANIFEST: &str = include_str!("plugin/tool.toml.in");
const HOOK_MANIFEST: &str = include_str!("plugin/hook.toml.in");
const MONITOR_MANIFEST: &str = include_str!("plugin/monitor.toml.in");

/// The target every component is built for.
const WASM_TARGET: &str = "wasm32-wasip2";

/// Arguments of `janua plugin`.
#[derive(Debug, Args)]
pub(crate) struct PluginArgs {
    #[command(subcommand)]
    command: PluginCommand,
}

#[derive(Debug, Subcommand)]
enum PluginCommand {
    /// Create a plugin crate (Cargo.toml, src/lib.rs, janua.toml) that builds and checks as is.
    New(NewArgs),
    /// Build a plugin crate for wasm32-wasip2 and place the component next to janua.toml.
    Build(BuildArgs),
    /// Load every component of a plugin directory, list its specs and grants, and lint it.
    Check(CheckArgs),
    /// Record a plugin directory's component digests and grants as approved in user settings.
    Approve(ApproveArgs),
}

/// What `janua plugin new` creates.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum Kind {
    Tool,
    Hook,
    Monitor,
}

#[derive(Debug, Args)]
struct NewArgs {
    /// The plugin name: lower-case letters, digits and '-', starting with a letter.
    name: String,
    /// What the plugin's component is.
    #[arg(long, value_enum, default_value_t = Kind::Tool)]
    kind: Kind,
    /// The directory to create (default: ./NAME); it must not exist or be empty.
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// The janua-sdk crate to build against (default: the one this janua was built with).
    #[arg(long, value_name = "DIR")]
    sdk: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct BuildArgs {
    /// The plugin crate (default: the current directory).
    #[arg(default_value = ".")]
    dir: PathBuf,
}

#[derive(Debug, Args)]
struct CheckArgs {
    /// The plugin directory.
    dir: PathBuf,
    /// Print the report as JSON instead of text.
    #[arg(long)]
    json: bool,
}

#[derive(Debug, Args)]
struct ApproveArgs {
    /// The plugin directory.
    dir: PathBuf,
    /// The settings file to record the approval in (default: the user settings file).
    #[arg(long = "settings-file", value_name = "FILE")]
    settings_file: Option<PathBuf>,
}

/// Runs `janua plugin ...`; `base` is the runtime configuration the global flags describe.
pub(crate) async fn run(
    args: &PluginArgs,
    base: impl FnOnce() -> anyhow::Result<janua::RuntimeConfig>,
) -> anyhow::Result<ExitCode> {
    match &args.command {
        PluginCommand::New(args) => new(args),
        PluginCommand::Build(args) => build(&args.dir),
        PluginCommand::Check(args) => {
            let report = janua::plugins::check_plugin(&args.dir, base()?).await;
            if args.json {
                println!("{}", serde_json::to_string_pretty(&report)?);
            } else {
                print_report(&args.dir, &report);
            }
            Ok(if report.has_errors() {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            })
        }
        PluginCommand::Approve(args) => approve(args),
    }
}

fn new(args: &NewArgs) -> anyhow::Result<ExitCode> {
    let name = &args.name;
    let valid = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !valid {
        bail!(
            "plugin name {name:?}: use 1-64 lower-case letters, digits and '-', starting with a letter"
        );
    }
    let dir = args.dir.clone().unwrap_or_else(|| PathBuf::from(name));
    if std::fs::read_dir(&dir).is_ok_and(|mut entries| entries.next().is_some()) {
        bail!("{} exists and is not empty", dir.display());
    }
    let sdk = match &args.sdk {
        Some(sdk) => sdk.clone(),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../guest-sdk"),
    };
    let sdk = sdk.canonicalize().with_context(|| {
        format!(
            "the janua-sdk crate is not at {}; pass --sdk with the guest-sdk directory of a janua checkout",
            sdk.display()
        )
    })?;
    let type_name: String = name
        .split('-')
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map_or_else(String::new, |first| {
                first.to_ascii_uppercase().to_string() + chars.as_str()
            })
        })
        .collect();
    let wasm = format!("{}.wasm", name.replace('-', "_"));
    let fill = |template: &str| {
        template
            .replace("{{name}}", name)
            .replace("{{crate}}", name)
            .replace("{{type}}", &type_name)
            .replace("{{wasm}}", &wasm)
            .replace("{{sdk}}", &sdk.display().to_string().replace('\\', "/"))
    };
    let (source, manifest) = match args.kind {
        Kind::Tool => (TOOL_SOURCE, TOOL_MANIFEST),
        Kind::Hook => (HOOK_SOURCE, HOOK_MANIFEST),
        Kind::Monitor => (MONITOR_SOURCE, MONITOR_MANIFEST),
    };
    std::fs::create_dir_all(dir.join("src"))
        .with_context(|| format!("cannot create {}", dir.display()))?;
    for (file, text) in [
        ("Cargo.toml", fill(CARGO_TEMPLATE)),
        ("src/lib.rs", fill(source)),
        ("janua.toml", fill(manifest)),
        (".gitignore", "/target\n".to_owned()),
    ] {
        let path = dir.join(file);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    println!(
        "created {} ({} {type_name}); next: janua plugin build {0} && janua plugin check {0}",
        dir.display(),
        match args.kind {
            Kind::Tool => "tool",
            Kind::Hook => "hook",
            Kind::Monitor => "monitor",
        }
    );
    Ok(ExitCode::SUCCESS)
}

fn build(dir: &Path) -> anyhow::Result<ExitCode> {
    let cargo_toml = dir.join("Cargo.toml");
    if !cargo_toml.is_file() {
        bail!(
            "{} has no Cargo.toml; `janua plugin new NAME` creates a plugin crate",
            dir.display()
        );
    }
    let components = janua::plugins::manifest_components(dir)?;
    check_target_installed(dir)?;
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut child = Command::new(cargo)
        .current_dir(dir)
        .args([
            "build",
            "--release",
            "--target",
            WASM_TARGET,
            "--message-format=json-render-diagnostics",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .context("cannot run cargo")?;
    let stdout = child.stdout.take().context("cargo's output")?;
    let mut artifacts: Vec<PathBuf> = Vec::new();
    for line in std::io::BufRead::lines(std::io::BufReader::new(stdout)) {
        let Ok(message) = serde_json::from_str::<serde_json::Value>(&line?) else {
            continue;
        };
        let is_cdylib = message["target"]["kind"]
            .as_array()
            .is_some_and(|kinds| kinds.iter().any(|kind| kind == "cdylib"));
        if message["reason"] == "compiler-artifact" && is_cdylib {
            let files = message["filenames"].as_array().cloned().unwrap_or_default();
            artifacts.extend(
                files
                    .iter()
                    .filter_map(|file| file.as_str())
                    .filter(|file| file.ends_with(".wasm"))
                    .map(PathBuf::from),
            );
        }
    }
    if !child.wait().context("cargo")?.success() {
        bail!("cargo build failed for {}", dir.display());
    }
    if artifacts.is_empty() {
        bail!(
            "cargo built no .wasm library in {}: the crate needs `crate-type = [\"cdylib\"]`",
            dir.display()
        );
    }
    for artifact in &artifacts {
        let file_name = artifact.file_name().unwrap_or_default();
        let destination = components
            .iter()
            .find(|component| component.file_name() == Some(file_name))
            .or_else(|| (components.len() == 1 && artifacts.len() == 1).then(|| &components[0]))
            .with_context(|| {
                format!(
                    "janua.toml names no component {}; add a [[tool]], [[hooks]] or [[monitors]] entry with component = \"{}\"",
                    file_name.to_string_lossy(),
                    file_name.to_string_lossy()
                )
            })?;
        let destination = dir.join(destination);
        let bytes = std::fs::read(artifact)
            .with_context(|| format!("cannot read {}", artifact.display()))?;
        let temporary = destination.with_extension("wasm.partial");
        let written = std::fs::write(&temporary, &bytes)
            .and_then(|()| std::fs::rename(&temporary, &destination));
        if let Err(error) = written {
            // Nothing half-written is left beside the manifest; the old component stays.
            let _ = std::fs::remove_file(&temporary);
            return Err(error).with_context(|| format!("cannot write {}", destination.display()));
        }
        println!(
            "built {}: {} bytes, sha256 {}",
            destination.display(),
            bytes.len(),
            janua::plugins::component_digest(&bytes)
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Fails with the command to run when the toolchain `dir` builds with lacks the wasm target:
/// cargo's own message ("can't find crate for `core`") does not say what to do.
fn check_target_installed(dir: &Path) -> anyhow::Result<()> {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let output = Command::new(rustc)
        .current_dir(dir)
        .args(["--print", "sysroot"])
        .output()
        .context("cannot run rustc; install Rust from https://rustup.rs")?;
    let sysroot = PathBuf::from(String::from_utf8_lossy(&output.stdout).trim());
    if !sysroot.join("lib/rustlib").join(WASM_TARGET).is_dir() {
        bail!(
            "the {WASM_TARGET} target is not installed for the toolchain at {}: run `rustup target add {WASM_TARGET}`",
            sysroot.display()
        );
    }
    Ok(())
}

fn print_report(dir: &Path, report: &janua::plugins::PluginReport) {
    println!(
        "plugin {} ({})",
        report.plugin.as_deref().unwrap_or("?"),
        dir.display()
    );
    for tool in &report.tools {
        let spec = &tool.spec;
        let mut traits = vec![spec.class.as_str()];
        if spec.read_only {
            traits.push("read-only");
        }
        if spec.concurrency_safe {
            traits.push("concurrency-safe");
        }
        println!("tool {} [{}]", spec.name, traits.join(", "));
        println!("  {}", spec.description);
        println!("  input schema: {}", spec.input_schema);
        if let Some(field) = &spec.rule_field {
            println!(
                "  rules match field {field:?}: {}({field} pattern)",
                spec.name
            );
        }
        println!("  component sha256 {}", tool.digest);
    }
    for hook in &report.hooks {
        println!(
            "hook {} on {} for {}",
            hook.name,
            hook.events.join(", "),
            hook.matcher
        );
    }
    for monitor in &report.monitors {
        let events = monitor
            .events
            .as_ref()
            .map_or_else(|| "every event".to_owned(), |events| events.join(", "));
        println!("monitor {} on {events}", monitor.name);
    }
    if report.grants.is_empty() {
        println!("grants: none (the components can reach nothing outside their input)");
    } else {
        println!("grants:");
        for grant in &report.grants {
            println!("  {grant}");
        }
    }
    let mut errors = 0;
    let mut warnings = 0;
    for finding in &report.findings {
        match finding.severity {
            janua::plugins::Severity::Error => {
                errors += 1;
                println!("error: {}", finding.message);
            }
            janua::plugins::Severity::Warning => {
                warnings += 1;
                println!("warning: {}", finding.message);
            }
        }
    }
    println!("{errors} error(s), {warnings} warning(s)");
}

fn approve(args: &ApproveArgs) -> anyhow::Result<ExitCode> {
    let settings = match &args.settings_file {
        Some(file) => file.clone(),
        None => janua::config::user_settings_path().context(
            "no user settings file: set HOME or XDG_CONFIG_HOME, or pass --settings-file",
        )?,
    };
    let approval = janua::plugins::approve_plugin(&args.dir, &settings)?;
    println!(
        "approved plugin {} ({}) in {}",
        approval.plugin,
        args.dir.display(),
        settings.display()
    );
    for (component, digest) in &approval.components {
        println!("  {component}: sha256 {digest}");
    }
    if approval.grants.is_empty() {
        println!("  grants: none");
    }
    for grant in &approval.grants {
        println!("  {grant}");
    }
    Ok(ExitCode::SUCCESS)
}
