//! `janua run`: a long-lived session over newline-delimited JSON on stdin and stdout
//! (docs/PROTOCOL.md). SIGINT and SIGTERM interrupt the calls in flight, write their results and
//! end the session cleanly.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;

use janua::Runtime;

use janua::serve::StreamOptions;

/// Arguments of `janua run`.
#[derive(Debug, Args)]
pub(crate) struct RunArgs {
    /// Most concurrency-safe calls of a batch running at once.
    #[arg(long = "max-concurrency", value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=256))]
    max_concurrency: u64,
    /// Write system/hook_started and system/hook_response lines.
    #[arg(long = "include-hook-events")]
    include_hook_events: bool,
    /// How often a running call gets a tool_progress line, in milliseconds.
    #[arg(long = "progress-interval-ms", value_name = "MS", default_value_t = 5000, value_parser = clap::value_parser!(u64).range(10..))]
    progress_interval_ms: u64,
    /// Estimated tokens a batch returns inline; later results are saved to files.
    #[arg(long = "batch-token-budget", value_name = "TOKENS", default_value_t = 100_000, value_parser = clap::value_parser!(u64).range(1000..))]
    batch_token_budget: u64,
    /// Reload the plugin directories when they change: new calls get the new tools, calls in
    /// flight finish on the old ones, and a system/tools_changed line announces it.
    #[arg(long)]
    watch: bool,
    /// How often --watch looks at the plugin directories, in milliseconds.
    #[arg(long = "watch-interval-ms", value_name = "MS", default_value_t = 500, value_parser = clap::value_parser!(u64).range(10..))]
    watch_interval_ms: u64,
}

/// Serves the session until stdin ends or a signal arrives.
pub(crate) async fn run(runtime: Runtime, args: &RunArgs) -> anyhow::Result<ExitCode> {
    let options = StreamOptions {
        max_concurrency: usize::try_from(args.max_concurrency).unwrap_or(1),
        include_hook_events: args.include_hook_events,
        progress_interval: Duration::from_millis(args.progress_interval_ms),
        token_budget: args.batch_token_budget,
        watch_plugins: args
            .watch
            .then(|| Duration::from_millis(args.watch_interval_ms)),
    };
    // Installed now, before SessionStart hooks run: a signal during them must still end the
    // session cleanly.
    let shutdown = super::shutdown_signal()?;
    let input = Box::new(std::io::BufReader::new(std::io::stdin()));
    let output = Box::new(std::io::stdout());
    janua::serve::serve_stream(runtime, options, input, output, shutdown).await;
    Ok(ExitCode::SUCCESS)
}
