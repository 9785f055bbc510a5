//! `janua example [NAME DIR]`: writes a shipped example hook or monitor as a plugin directory
//! (without arguments: lists them).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;

/// Arguments of `janua example`.
#[derive(Debug, Args)]
pub(crate) struct ExampleArgs {
    /// The example, e.g. hook-bash-guard or monitor-audit; omit to list them.
    #[arg(requires = "dir")]
    name: Option<String>,
    /// The plugin directory to create (must not exist or be empty).
    dir: Option<PathBuf>,
}

/// Lists or writes an example.
pub(crate) fn run(args: &ExampleArgs) -> anyhow::Result<ExitCode> {
    let (Some(name), Some(dir)) = (&args.name, &args.dir) else {
        for name in janua::extensions::example_names() {
            println!("{name}");
        }
        return Ok(ExitCode::SUCCESS);
    };
    let manifest = janua::extensions::write_example(name, dir)
        .with_context(|| format!("cannot write the example {name} to {}", dir.display()))?;
    println!(
        "wrote {}; load it with --plugins {}",
        manifest.display(),
        dir.display()
    );
    Ok(ExitCode::SUCCESS)
}
