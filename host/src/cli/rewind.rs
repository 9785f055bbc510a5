//! `janua rewind [--list | --to N | --last]`: lists the session's checkpoints, or restores the
//! workspace to the state before one of them.

use std::path::Path;
use std::process::ExitCode;

use anyhow::Context as _;
use clap::Args;
use serde_json::json;

use janua::Session;

use janua::state::{Checkpoint, FileState, MAX_CHECKPOINTS};

/// Arguments of `janua rewind`.
#[derive(Debug, Args)]
pub(crate) struct RewindArgs {
    /// List the checkpoints (the default).
    #[arg(long, conflicts_with_all = ["to", "last"])]
    list: bool,
    /// Restore every file changed at or after checkpoint N to its state before N.
    #[arg(long, value_name = "N", conflicts_with = "last")]
    to: Option<u64>,
    /// Undo the last checkpoint only.
    #[arg(long)]
    last: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
}

/// Runs the command against the session of `workspace`.
pub(crate) fn run(
    args: &RewindArgs,
    workspace: &Path,
    state_dir: Option<&Path>,
    session_id: Option<&str>,
) -> anyhow::Result<ExitCode> {
    let workspace = std::fs::canonicalize(workspace)
        .with_context(|| format!("cannot open the workspace {}", workspace.display()))?;
    let (session, warnings) = Session::open(state_dir, &workspace, session_id)?;
    for warning in warnings {
        eprintln!("janua: warning: {warning}");
    }
    let checkpoints = session.checkpoints();
    let list = checkpoints.list()?;
    let target = match (args.to, args.last) {
        (Some(number), _) => Some(number),
        (None, true) => match list.last() {
            Some(last) => Some(last.number),
            None => anyhow::bail!("session {} has no checkpoints to undo", session.id()),
        },
        (None, false) => None,
    };
    let Some(number) = target else {
        print_list(&list, checkpoints.storage_bytes(), args.json);
        return Ok(ExitCode::SUCCESS);
    };
    if !list.iter().any(|checkpoint| checkpoint.number == number) {
        let known = match (list.first(), list.last()) {
            (Some(first), Some(last)) => format!("checkpoints {}-{}", first.number, last.number),
            _ => "no checkpoints".to_owned(),
        };
        anyhow::bail!(
            "session {} has no checkpoint {number} (it has {known}); see `janua rewind --list`",
            session.id()
        );
    }
    let report = checkpoints.rewind(number)?;
    if args.json {
        println!("{}", json!({ "rewound_to": number, "report": report }));
    } else {
        println!(
            "Rewound to before checkpoint {number}: undid {} checkpoint(s), restored {} file(s).",
            report.undone,
            report.restored.len()
        );
        for path in &report.restored {
            println!("  restored {}", path.display());
        }
        for skipped in &report.skipped {
            println!("  skipped  {}: {}", skipped.path.display(), skipped.reason);
        }
    }
    Ok(if report.skipped.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

fn print_list(list: &[Checkpoint], storage_bytes: u64, as_json: bool) {
    if as_json {
        println!(
            "{}",
            json!({
                "checkpoints": list,
                "storage_bytes": storage_bytes,
                "max_checkpoints": MAX_CHECKPOINTS,
            })
        );
        return;
    }
    if list.is_empty() {
        println!("No checkpoints in this session.");
        return;
    }
    for checkpoint in list {
        println!(
            "{:>4}  {:<12} {:<8} {}  ({})",
            checkpoint.number,
            checkpoint.tool,
            describe(&checkpoint.before),
            checkpoint.path.display(),
            checkpoint.call_id
        );
    }
    println!(
        "{} checkpoint(s) (the newest {MAX_CHECKPOINTS} are kept), {storage_bytes} bytes of storage. \
         Undo with `janua rewind --to N` or `--last`.",
        list.len()
    );
}

/// What the file was before the change, in one word.
fn describe(state: &FileState) -> &'static str {
    match state {
        FileState::Absent => "created",
        FileState::File { .. } => "changed",
        FileState::TooLarge { .. } => "large",
        FileState::Symlink => "symlink",
        FileState::Other => "special",
    }
}
