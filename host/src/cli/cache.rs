//! `janua cache {info,clear,prewarm}`: the on-disk cache of compiled components.

use std::path::Path;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use serde_json::json;

/// Arguments of `janua cache`.
#[derive(Debug, Args)]
pub(crate) struct CacheArgs {
    #[command(subcommand)]
    action: CacheAction,
    /// Print a JSON object instead of text.
    #[arg(long)]
    json: bool,
}

/// What to do with the cache.
#[derive(Debug, Subcommand)]
enum CacheAction {
    /// Where the cache is and what it holds.
    Info,
    /// Remove every compiled component and cached description (the next start compiles again).
    Clear,
    /// Compile every tool of the effective registry now, so no first call waits for it.
    Prewarm,
}

impl CacheArgs {
    /// True for the actions that need the effective registry (the others only the cache).
    pub(crate) fn needs_runtime(&self) -> bool {
        matches!(self.action, CacheAction::Prewarm)
    }
}

/// `info` and `clear`, on the cache directory alone.
pub(crate) fn run_offline(args: &CacheArgs, dir: Option<&Path>) -> anyhow::Result<ExitCode> {
    let Some(dir) = dir else {
        anyhow::bail!(
            "no compile cache: --no-cache was given, or no cache directory is known (set JANUA_CACHE_DIR or --cache-dir)"
        );
    };
    match args.action {
        CacheAction::Info => {
            let info = janua::sandbox::cache_info(dir)?;
            if args.json {
                println!("{}", serde_json::to_string(&info)?);
            } else {
                match &info.dir {
                    Some(path) => println!("cache:         {}", path.display()),
                    None => println!("cache:         disabled (see the warning above)"),
                }
                println!("compiled:      {} components", info.artifacts);
                println!("descriptions:  {}", info.descriptions);
                println!(
                    "size:          {:.1} MiB",
                    info.bytes as f64 / (1 << 20) as f64
                );
                if info.stale_dirs > 0 {
                    println!(
                        "stale:         {} directories of other versions (janua cache clear removes them)",
                        info.stale_dirs
                    );
                }
            }
        }
        CacheAction::Clear => {
            let removed = janua::sandbox::clear_cache(dir)?;
            if args.json {
                println!("{}", json!({"removed": removed}));
            } else {
                println!("removed {removed} files from {}", dir.display());
            }
        }
        CacheAction::Prewarm => unreachable!("prewarm needs the runtime"),
    }
    Ok(ExitCode::SUCCESS)
}

/// `prewarm`: compiles what the runtime has not loaded yet.
pub(crate) fn prewarm(runtime: &janua::Runtime, args: &CacheArgs) -> anyhow::Result<ExitCode> {
    let started = std::time::Instant::now();
    let loaded = runtime.prewarm()?;
    let tools = runtime.tools().len();
    if args.json {
        println!(
            "{}",
            json!({"loaded": loaded, "tools": tools, "millis": started.elapsed().as_millis()})
        );
    } else {
        println!(
            "{loaded} components loaded for {tools} tools in {} ms",
            started.elapsed().as_millis()
        );
    }
    Ok(ExitCode::SUCCESS)
}
