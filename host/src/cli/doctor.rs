//! `warden doctor [--json]`: what this machine supports for confining child processes.

use std::process::ExitCode;

use clap::Args;
use serde_json::json;

use warden::KernelSupport;

/// Arguments of `warden doctor`.
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
    if args.json {
        println!(
            "{}",
            json!({
                "landlock_abi": support.landlock_abi,
                "network_namespace": support.network_namespace.is_ok(),
                "network_namespace_error": support.network_namespace.as_ref().err(),
                "bash": shell,
                "process_sandbox": missing.is_none(),
                "missing": missing,
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
        println!(
            "/bin/bash:           {}",
            if shell { "present" } else { "missing" }
        );
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
