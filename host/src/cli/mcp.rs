//! `janua mcp serve`: the effective registry as an MCP server on stdio (docs/MCP.md).

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};

use janua::Runtime;

use janua::serve::{HttpServe, McpServeOptions};

/// Arguments of `janua mcp`.
#[derive(Debug, Args)]
pub(crate) struct McpArgs {
    #[command(subcommand)]
    command: McpCommand,
}

#[derive(Debug, Subcommand)]
enum McpCommand {
    /// Serve the effective registry to an MCP client over stdin and stdout until stdin closes.
    Serve(ServeArgs),
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// Most calls running at once; a call that is not concurrency-safe runs alone.
    #[arg(long = "max-concurrency", value_name = "N", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=256))]
    max_concurrency: u64,
    /// How often a call sent with a progressToken gets a progress notification, in milliseconds.
    #[arg(long = "progress-interval-ms", value_name = "MS", default_value_t = 1000, value_parser = clap::value_parser!(u64).range(10..))]
    progress_interval_ms: u64,
    /// How long a permission question waits for the client's elicitation answer, in seconds.
    #[arg(long = "elicitation-timeout", value_name = "SECONDS", default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    elicitation_timeout: u64,
    /// Serve Streamable HTTP on this loopback address (e.g. 127.0.0.1:8931, port 0 picks one)
    /// instead of stdio; the URL and the bearer token are printed on stderr.
    #[arg(long = "http", value_name = "ADDR")]
    http: Option<std::net::SocketAddr>,
    /// Reload the plugin directories when they change and send notifications/tools/list_changed.
    #[arg(long)]
    watch: bool,
    /// How often --watch looks at the plugin directories, in milliseconds.
    #[arg(long = "watch-interval-ms", value_name = "MS", default_value_t = 500, value_parser = clap::value_parser!(u64).range(10..))]
    watch_interval_ms: u64,
}

/// Runs the subcommand; the server returns when its input ends.
pub(crate) async fn run(runtime: Runtime, args: &McpArgs) -> anyhow::Result<ExitCode> {
    match &args.command {
        McpCommand::Serve(args) => {
            let options = McpServeOptions {
                max_concurrency: usize::try_from(args.max_concurrency).unwrap_or(1),
                progress_interval: Duration::from_millis(args.progress_interval_ms),
                elicitation_timeout: Duration::from_secs(args.elicitation_timeout),
                watch_plugins: args
                    .watch
                    .then(|| Duration::from_millis(args.watch_interval_ms)),
            };
            if let Some(address) = args.http {
                let http = HttpServe::new(address)?;
                let token = http.token.clone();
                let shutdown = super::shutdown_signal()?;
                let ready = Box::new(move |bound: std::net::SocketAddr| {
                    eprintln!("janua: MCP server listening on http://{bound}/mcp");
                    eprintln!("janua: bearer token: {token}");
                });
                janua::serve::serve_mcp_http(runtime, options, http, ready, shutdown).await?;
                return Ok(ExitCode::SUCCESS);
            }
            let input = Box::new(std::io::BufReader::new(std::io::stdin()));
            let output = Box::new(std::io::stdout());
            janua::serve::serve_mcp(runtime, options, input, output).await;
            Ok(ExitCode::SUCCESS)
        }
    }
}
