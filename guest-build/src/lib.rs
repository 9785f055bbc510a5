//! Build-script helper: compiles workspace guest crates to `wasm32-wasip2` components.
//!
//! The host's build script (default tools, embedded in the binary) and the test-guest artifacts crate
//! both call [`build_guests`]. Guests build in one nested `cargo build` with their own target directory
//! beside the outer one, so the outer build's lock is never contended and shared guest dependencies
//! compile once. Environment variables the outer cargo sets for build scripts (rustflags, wrappers,
//! jobserver) are removed so that the nested build is an ordinary wasm build.
#![warn(missing_docs)]

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The target every guest is built for.
pub const GUEST_TARGET: &str = "wasm32-wasip2";

/// One guest crate to build.
#[derive(Debug, Clone)]
pub struct Guest {
    /// Cargo package name, e.g. `janua-tool-read`.
    pub package: String,
    /// Directory holding the crate's `Cargo.toml`.
    pub dir: PathBuf,
}

impl Guest {
    /// File name cargo gives the component: the package name with `-` replaced by `_`, plus `.wasm`.
    pub fn artifact_name(&self) -> String {
        format!("{}.wasm", self.package.replace('-', "_"))
    }

    /// Identifier-friendly name: `sandbox-trap` becomes `sandbox_trap`.
    pub fn ident(&self) -> String {
        let dir_name = self
            .dir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        dir_name
            .unwrap_or_else(|| self.package.clone())
            .replace('-', "_")
    }
}

/// Lists the guest crates in `dir`: every subdirectory that has a `Cargo.toml`, sorted by name.
///
/// The package name is read from the `name = "..."` line of `[package]`; guests are our own crates,
/// so this small scan stands in for a full TOML parser in the build script.
pub fn guests_in(dir: &Path) -> Vec<Guest> {
    let mut guests = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        panic!("cannot list guest directory {}", dir.display());
    };
    for entry in entries.flatten() {
        let manifest = entry.path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let package = text
            .lines()
            .map(str::trim)
            .find_map(|line| {
                let rest = line.strip_prefix("name")?.trim_start().strip_prefix('=')?;
                Some(rest.trim().trim_matches('"').to_owned())
            })
            .unwrap_or_else(|| panic!("{} has no package name", manifest.display()));
        guests.push(Guest {
            package,
            dir: entry.path(),
        });
    }
    guests.sort_by(|a, b| a.package.cmp(&b.package));
    guests
}

/// Builds `guests` for [`GUEST_TARGET`] and returns the path of each component, in the same order.
///
/// Emits `cargo:rerun-if-changed` for each guest crate, for the SDK and for the WIT package, so the
/// outer build re-runs exactly when guest inputs change. Panics with an actionable message on failure,
/// which is how a build script reports errors.
pub fn build_guests(workspace_root: &Path, guests: &[Guest]) -> Vec<PathBuf> {
    for guest in guests {
        println!("cargo:rerun-if-changed={}", guest.dir.display());
    }
    // The parent directories too, so that a newly added guest is noticed and built.
    let mut parents: Vec<&Path> = guests
        .iter()
        .filter_map(|guest| guest.dir.parent())
        .collect();
    parents.dedup();
    for parent in parents {
        println!("cargo:rerun-if-changed={}", parent.display());
    }
    for shared in ["guest-sdk", "wit", "Cargo.lock", "Cargo.toml"] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace_root.join(shared).display()
        );
    }
    println!("cargo:rerun-if-env-changed={GUEST_TOOLCHAIN_VAR}");
    let toolchain = env::var(GUEST_TOOLCHAIN_VAR)
        .ok()
        .filter(|name| !name.is_empty());
    ensure_target_installed(workspace_root, toolchain.as_deref());

    let target_dir = guest_target_dir();
    let mut command = match &toolchain {
        // Another toolchain than the outer build's (e.g. a nightly for cargo-fuzz, whose guest
        // target may not be installable) builds the guests; its own cargo and rustc, not ours.
        Some(name) => {
            let mut command = Command::new("rustup");
            command
                .args(["run", name, "cargo"])
                .env_remove("RUSTUP_TOOLCHAIN")
                .env_remove("RUSTC")
                .env_remove("CARGO");
            command
        }
        None => Command::new(env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned())),
    };
    command
        .current_dir(workspace_root)
        .arg("build")
        .arg("--quiet")
        .arg("--profile=guest")
        .arg(format!("--target={GUEST_TARGET}"))
        .arg("--target-dir")
        .arg(&target_dir);
    for guest in guests {
        command.arg("--package").arg(&guest.package);
    }
    // The outer cargo configures build scripts for the host target; none of that applies to guests.
    for var in [
        "CARGO_ENCODED_RUSTFLAGS",
        "RUSTFLAGS",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTC_WRAPPER",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
        "CARGO_PRIMARY_PACKAGE",
        "CARGO_PROFILE_RELEASE_DEBUG",
    ] {
        command.env_remove(var);
    }
    let status = command
        .status()
        .unwrap_or_else(|error| panic!("cannot run cargo to build guests: {error}"));
    assert!(
        status.success(),
        "building guests for {GUEST_TARGET} failed (see the errors above); \
         if the target is missing, run `rustup target add {GUEST_TARGET}`"
    );

    let out = target_dir.join(GUEST_TARGET).join("guest");
    guests
        .iter()
        .map(|guest| {
            let path = out.join(guest.artifact_name());
            assert!(
                path.is_file(),
                "guest build succeeded but {} is missing",
                path.display()
            );
            path
        })
        .collect()
}

/// Names a rustup toolchain that builds the guests instead of the outer build's own, for builds
/// under a toolchain without the guest target (`cargo +nightly fuzz build`).
pub const GUEST_TOOLCHAIN_VAR: &str = "JANUA_GUEST_TOOLCHAIN";

/// The workspace root, given the building crate's manifest directory and its depth below the root.
pub fn workspace_root(manifest_dir: &Path, depth: usize) -> PathBuf {
    let mut root = manifest_dir.to_path_buf();
    for _ in 0..depth {
        root.pop();
    }
    root
}

/// Makes sure the standard library for the guest target is installed, adding it with rustup when
/// it is absent (a pinned toolchain that rustup installed earlier does not gain the targets
/// `rust-toolchain.toml` lists later). Without rustup it fails early, with the installing command.
fn ensure_target_installed(workspace_root: &Path, toolchain: Option<&str>) {
    if target_installed(toolchain) {
        return;
    }
    // One line the user sees: cargo prints a build script's `cargo:warning` lines.
    println!(
        "cargo:warning=the Rust target {GUEST_TARGET} is missing; adding it with `rustup target add {GUEST_TARGET}`"
    );
    let added = add_target_with_rustup(Path::new("rustup"), workspace_root, toolchain);
    // Two build scripts (the host's and the test guests') may add it at once; one's failure is
    // no failure when the other's install landed.
    if target_installed(toolchain) {
        return;
    }
    match added {
        Ok(()) => panic!(
            "`rustup target add {GUEST_TARGET}` succeeded, yet the toolchain building janua's guests \
             still lacks the target. Install it with: rustup target add {GUEST_TARGET}"
        ),
        Err(RustupError::Absent) => panic!(
            "the Rust target {GUEST_TARGET} is not installed; janua's guests need it. \
             Install it with: rustup target add {GUEST_TARGET}"
        ),
        Err(RustupError::Failed(detail)) => panic!(
            "the Rust target {GUEST_TARGET} is not installed and `rustup target add {GUEST_TARGET}` \
             failed ({detail}); janua's guests need it. Install it with: rustup target add {GUEST_TARGET}"
        ),
    }
}

/// Whether the toolchain that builds the guests has the guest target's standard library.
fn target_installed(toolchain: Option<&str>) -> bool {
    let mut rustc = match toolchain {
        Some(name) => {
            let mut command = Command::new("rustup");
            command
                .args(["run", name, "rustc"])
                .env_remove("RUSTUP_TOOLCHAIN");
            command
        }
        None => Command::new(env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned())),
    };
    let output = rustc
        .args(["--print", "target-libdir", "--target", GUEST_TARGET])
        .output();
    match output {
        Ok(output) if output.status.success() => {
            let libdir = String::from_utf8_lossy(&output.stdout).trim().to_owned();
            Path::new(&libdir).is_dir()
        }
        _ => false,
    }
}

/// Why rustup could not add the guest target.
#[derive(Debug, PartialEq, Eq)]
enum RustupError {
    /// There is no `rustup` to run.
    Absent,
    /// rustup ran and failed; its exit status and last line of output.
    Failed(String),
}

/// Runs `<rustup> target add` for the guest target, for `toolchain` or else the toolchain the
/// outer build runs on (rustup's `RUSTUP_TOOLCHAIN`, or the workspace's `rust-toolchain.toml`).
fn add_target_with_rustup(
    rustup: &Path,
    workspace_root: &Path,
    toolchain: Option<&str>,
) -> Result<(), RustupError> {
    let mut rustup = Command::new(rustup);
    rustup.current_dir(workspace_root).args(["target", "add"]);
    if let Some(name) = toolchain {
        rustup
            .args(["--toolchain", name])
            .env_remove("RUSTUP_TOOLCHAIN");
    }
    let output = match rustup.arg(GUEST_TARGET).output() {
        Ok(output) => output,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(RustupError::Absent);
        }
        Err(error) => return Err(RustupError::Failed(format!("cannot run rustup: {error}"))),
    };
    if output.status.success() {
        return Ok(());
    }
    let stderr = String::from_utf8_lossy(&output.stderr);
    let last_line = stderr.lines().rev().find(|line| !line.trim().is_empty());
    Err(RustupError::Failed(format!(
        "{}: {}",
        output.status,
        last_line.unwrap_or("no output")
    )))
}

/// `<outer target dir>/wasm-guests`, derived from `OUT_DIR` (`<target>/<profile>/build/<pkg>/out`).
fn guest_target_dir() -> PathBuf {
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR is set for build scripts"));
    let outer_target = out_dir
        .ancestors()
        .find(|dir| dir.file_name().is_some_and(|name| name == "build"))
        .and_then(Path::parent)
        .and_then(Path::parent)
        .map(Path::to_path_buf)
        .unwrap_or_else(|| out_dir.join("guests"));
    outer_target.join("wasm-guests")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt as _;

    /// Held by each test that writes a script and runs it: a child forked by another test
    /// while a script's write descriptor is open would hold it, and the exec would fail with
    /// ETXTBSY ("Text file busy").
    static SPAWNING: std::sync::Mutex<()> = std::sync::Mutex::new(());

    /// A stand-in `rustup`: a shell script with `body`, in a fresh directory.
    fn fake_rustup(body: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("temp dir");
        let path = dir.path().join("rustup");
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write the script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        (dir, path)
    }

    #[test]
    fn adds_the_guest_target_for_the_named_toolchain_in_the_workspace() {
        let _spawning = SPAWNING.lock().unwrap_or_else(|poison| poison.into_inner());
        let (dir, rustup) = fake_rustup(r#"echo "$PWD $*" > "$(dirname "$0")/called""#);
        add_target_with_rustup(&rustup, dir.path(), Some("nightly")).expect("added");
        let called = std::fs::read_to_string(dir.path().join("called")).expect("it ran");
        let workspace = dir.path().canonicalize().expect("canonical");
        assert_eq!(
            called.trim(),
            format!(
                "{} target add --toolchain nightly {GUEST_TARGET}",
                workspace.display()
            )
        );
        add_target_with_rustup(&rustup, dir.path(), None).expect("added");
        let called = std::fs::read_to_string(dir.path().join("called")).expect("it ran");
        assert!(
            called
                .trim()
                .ends_with(&format!(" target add {GUEST_TARGET}")),
            "{called}"
        );
    }

    #[test]
    fn a_failing_rustup_reports_its_status_and_last_line() {
        let _spawning = SPAWNING.lock().unwrap_or_else(|poison| poison.into_inner());
        let (dir, rustup) = fake_rustup(
            "echo 'info: syncing' >&2; echo 'error: toolchain is not installed' >&2; exit 3",
        );
        let error = add_target_with_rustup(&rustup, dir.path(), None).expect_err("it failed");
        let RustupError::Failed(detail) = error else {
            panic!("{error:?}");
        };
        assert!(detail.contains("exit status: 3"), "{detail}");
        assert!(
            detail.ends_with("error: toolchain is not installed"),
            "{detail}"
        );
    }

    #[test]
    fn no_rustup_is_told_apart_from_a_failing_one() {
        let dir = tempfile::tempdir().expect("temp dir");
        let missing = dir.path().join("no-such-rustup");
        assert_eq!(
            add_target_with_rustup(&missing, dir.path(), None),
            Err(RustupError::Absent)
        );
    }
}
