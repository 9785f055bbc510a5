//! The `janua` binary: parses the command line and maps outcomes to exit codes (0 success, 1 error
//! result, 2 usage or configuration error).

mod cli;

use std::process::ExitCode;

use clap::Parser as _;

fn main() -> ExitCode {
    // Before anything else: what janua's parent left inheritable is never passed on.
    if let Err(error) = janua::sandbox::close_inherited_descriptors() {
        eprintln!("janua: error: cannot mark inherited descriptors close-on-exec: {error}");
        return ExitCode::from(2);
    }
    let cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() {
                ExitCode::from(2)
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    match cli.run() {
        Ok(code) => code,
        Err(error) => {
            eprintln!("janua: error: {error:#}");
            ExitCode::from(2)
        }
    }
}
