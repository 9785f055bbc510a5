//! `janua audit verify FILE`: checks the hash chain of the example audit monitor's log.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

/// Arguments of `janua audit`.
#[derive(Debug, Args)]
pub(crate) struct AuditArgs {
    #[command(subcommand)]
    command: AuditCommand,
}

#[derive(Debug, Subcommand)]
enum AuditCommand {
    /// Check that every line's `prev` is the SHA-256 of the line before it (exit 1 if not).
    Verify {
        /// The JSONL log the audit monitor wrote.
        file: PathBuf,
    },
}

/// Runs the subcommand.
pub(crate) fn run(args: &AuditArgs) -> ExitCode {
    match &args.command {
        AuditCommand::Verify { file } => match janua::extensions::verify_audit_log(file) {
            Ok(summary) => {
                println!(
                    "{}: chain intact, {} lines; last line SHA-256 {}",
                    file.display(),
                    summary.lines,
                    summary.last_hash
                );
                ExitCode::SUCCESS
            }
            Err(error) => {
                println!("{error}");
                ExitCode::from(1)
            }
        },
    }
}
