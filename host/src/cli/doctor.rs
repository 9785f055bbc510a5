//! `janua doctor [--json]`: what this machine supports for confining child processes, and
//! whether the Browser tool has a browser.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use janua::sandbox::KernelSupport;

/// Arguments of `janua doctor`.
#[derive(Debug, Args)]
pub(crate) struct DoctorArgs {
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// Prints the report; exit code 1 when Bash would refuse to run (`sandbox_unavailable`).
pub(crate) fn run(args: &DoctorArgs) -> ExitCode {
    let support = KernelSupport::probe();
    let shell = std::path::Path::new("/bin/bash").exists();
    let missing = support.missing();
    let browser = janua::sandbox::find_browser();
    let browser_version = browser.as_ref().ok().and_then(|path| version_of(path));
    // Which Chromium the Browser tool will start, and why that one.
    let chosen_by = if std::env::var_os("JANUA_BROWSER").is_some_and(|path| !path.is_empty()) {
        "named by JANUA_BROWSER"
    } else {
        "the first installed of the standard paths"
    };
    if args.json {
        println!(
            "{}",
            json!({
                "landlock_abi": support.landlock_abi,
                "network_namespace": support.network_namespace.is_ok(),
                "network_namespace_error": support.network_namespace.as_ref().err().map(ToString::to_string),
                "view_namespaces": support.view_namespaces.is_ok(),
                "view_namespaces_error": support.view_namespaces.as_ref().err().map(ToString::to_string),
                "user_namespace": support.user_namespace.is_ok(),
                "user_namespace_error": support.user_namespace.as_ref().err().map(ToString::to_string),
                "bash": shell,
                "process_sandbox": missing.is_none(),
                "missing": missing,
                "browser": browser.as_ref().ok(),
                "browser_version": browser_version,
                "browser_chosen_by": browser.is_ok().then_some(chosen_by),
                "browser_error": browser.as_ref().err().map(ToString::to_string),
            })
        );
    } else {
        let landlock = match support.landlock_abi {
            0 => "unavailable".to_owned(),
            abi => format!("ABI {abi}"),
        };
        let namespaces = match &support.network_namespace {
            Ok(()) => "available".to_owned(),
            Err(error) => format!("unavailable ({error})"),
        };
        println!("Landlock:            {landlock}");
        println!("network namespaces:  {namespaces}");
        match &support.view_namespaces {
            Ok(()) => println!(
                "view namespaces:     mount, IPC and PID available (a root of the grants; deny rules enforced by the kernel)"
            ),
            Err(error) => println!("view namespaces:     unavailable ({error})"),
        }
        // SAFETY: geteuid cannot fail.
        let root = unsafe { libc::geteuid() } == 0;
        match (&support.user_namespace, root) {
            (Ok(()), true) => {
                println!("user namespaces:     available (not needed: janua runs as root)")
            }
            (Ok(()), false) => {
                println!("user namespaces:     available (the others are made under one)")
            }
            (Err(error), true) => println!(
                "user namespaces:     unavailable ({error}; not needed: janua runs as root)"
            ),
            (Err(error), false) => println!("user namespaces:     unavailable ({error})"),
        }
        println!(
            "/bin/bash:           {}",
            if shell { "present" } else { "missing" }
        );
        match (&browser, &browser_version) {
            (Ok(path), Some(version)) => {
                println!(
                    "browser:             {version} ({}, {chosen_by})",
                    path.display()
                );
            }
            (Ok(path), None) => println!(
                "browser:             {} ({chosen_by}; it did not say its version)",
                path.display()
            ),
            (Err(error), _) => println!(
                "browser:             unavailable: {error}\n                     the Browser tool answers browser_unavailable"
            ),
        }
        match &missing {
            None => println!("process sandbox:     ready: Bash runs confined"),
            Some(missing) => println!(
                "process sandbox:     unavailable: {missing}\n                     Bash refuses to run (sandbox_unavailable) unless you pass --unsandboxed-process"
            ),
        }
    }
    if missing.is_none() && shell {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// What `path --version` prints, first line, when it prints anything.
fn version_of(path: &std::path::Path) -> Option<String> {
    let output = std::process::Command::new(path)
        .arg("--version")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let line = text.lines().next()?.trim();
    (!line.is_empty()).then(|| line.to_owned())
}
