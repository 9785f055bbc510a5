//! `janua hooks [--json]`: every loaded hook and monitor with its source, events, matcher (and
//! the tools it selects), `if` rule, timeout, failure policy and grants, and every configured one
//! that was NOT loaded, with the reason. Users of other runtimes report hooks silently not firing;
//! this is where janua says why.

use std::process::ExitCode;

use clap::Args;

use janua::Runtime;

use janua::extensions::ExtensionsReport;

/// Arguments of `janua hooks`.
#[derive(Debug, Args)]
pub(crate) struct HooksArgs {
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

/// Prints the report.
pub(crate) fn run(runtime: &Runtime, args: &HooksArgs) -> anyhow::Result<ExitCode> {
    let report = runtime.extensions();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_report(&report);
    }
    Ok(ExitCode::SUCCESS)
}

fn print_report(report: &ExtensionsReport) {
    if let Some(scope) = &report.disabled_by {
        println!("Configured hooks and monitors are off: disableAllHooks is true in {scope}.\n");
    }
    if report.hooks.is_empty() {
        println!("Hooks: none loaded.");
    } else {
        println!("Hooks (run in parallel; answers combine in this order):");
    }
    for hook in &report.hooks {
        println!(
            "  {} [{}] from {} ({})",
            hook.name,
            hook.kind,
            hook.source,
            if hook.trusted { "trusted" } else { "untrusted" }
        );
        println!("    events:   {}", hook.events.join(", "));
        let covers = if hook.covers.is_empty() {
            "no registered tool".to_owned()
        } else {
            hook.covers.join(", ")
        };
        println!(
            "    matcher:  {} ({}; selects {covers})",
            hook.matcher, hook.matcher_kind
        );
        if let Some(condition) = &hook.condition {
            println!("    if:       {condition}");
        }
        if let Some(command) = &hook.command {
            println!("    command:  {command}");
        }
        println!(
            "    timeout:  {} ms; on error: {}",
            hook.timeout_ms,
            match hook.on_error {
                janua::extensions::OnError::Deny => "deny the call",
                janua::extensions::OnError::Ignore => "ignore",
            }
        );
        println!("    grants:   {}", hook.grants);
    }
    if report.monitors.is_empty() {
        println!("Monitors: none loaded.");
    } else {
        println!("Monitors:");
    }
    for monitor in &report.monitors {
        println!("  {} from {}", monitor.name, monitor.source);
        println!(
            "    events:   {}",
            monitor
                .events
                .as_ref()
                .map_or_else(|| "all".to_owned(), |events| events.join(", "))
        );
        println!(
            "    queue:    {}; timeout {} ms per event",
            monitor.queue, monitor.timeout_ms
        );
        println!("    grants:   {}", monitor.grants);
    }
    if !report.skipped.is_empty() {
        println!("Not loaded:");
        for skipped in &report.skipped {
            println!(
                "  {} ({}): {}",
                skipped.what, skipped.source, skipped.reason
            );
        }
    }
}
