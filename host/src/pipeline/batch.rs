//! Closing a batch: the `tool_use` blocks of one assistant message have all finished. The batch
//! budget comes first: once the results reach it (estimated tokens, in call order), each later
//! successful result is saved to the session's `tool-results/` and replaced by its path and
//! size, so one message cannot flood the context. Then the PostToolBatch hooks see every call
//! with the result content the model will see, and may add context or stop the agent loop
//! (`decision: "block"` or `continue: false`). Monitors get `batch_finished`. Running the calls
//! themselves is the caller's business.

use serde::Serialize;
use serde_json::{Value, json};

use super::Services;
use super::outcome::Dispatch;
use crate::hooks::{PostAnswer, Reply, cap_text};
use janua_types::HookEvent;

/// What a batch produced.
#[derive(Debug, Clone, Serialize)]
pub struct BatchDispatch {
    /// One result per call, in the order of the calls.
    pub results: Vec<Dispatch>,
    /// Context PostToolBatch hooks added, in hook order.
    pub additional_context: Vec<String>,
    /// Messages hooks addressed to the user.
    pub system_messages: Vec<String>,
    /// Why the agent loop should stop, when a hook or a call asked it to.
    pub stop: Option<String>,
    /// PostToolBatch hooks that failed.
    pub warnings: Vec<String>,
}

/// The default batch budget in estimated tokens.
pub(crate) const DEFAULT_BATCH_TOKENS: u64 = 100_000;

/// Saves every successful result after the budget is reached to a file, leaving its path.
fn apply_budget(results: &mut [Dispatch], results_dir: Option<&std::path::Path>, budget: u64) {
    let Some(dir) = results_dir else {
        return;
    };
    let mut used = 0u64;
    for result in results {
        let tokens = result.outcome.estimated_tokens;
        // Errors stay inline (they are short), and so do results with images (a file would lose
        // them).
        let has_images = matches!(
            &result.block.content,
            janua_types::ResultContent::Blocks(blocks)
                if blocks.iter().any(|block| matches!(block, janua_types::ContentBlock::Image { .. }))
        );
        if used.saturating_add(tokens) <= budget || result.block.is_error || has_images {
            used = used.saturating_add(tokens);
            continue;
        }
        let text = result.block.text();
        // A result already cut and saved keeps its file (the whole output); otherwise what the
        // model would have seen is saved.
        let saved = match &result.outcome.saved_to {
            Some(path) => Ok(path.clone()),
            None => std::fs::create_dir_all(dir).and_then(|()| {
                let path = crate::output::result_file(dir, &result.outcome.tool_use_id);
                janua_types::write_whole(&path, text.as_bytes()).map(|()| path)
            }),
        };
        let notice = match saved {
            Ok(path) => {
                let notice = format!(
                    "[janua: this batch's results passed its budget of {budget} estimated tokens, so this result ({} characters, {} lines, about {tokens} tokens) was saved to {}; read it with Read, using offset and limit]",
                    text.chars().count(),
                    text.lines().count(),
                    path.display()
                );
                result.outcome.saved_to = Some(path);
                notice
            }
            Err(error) => {
                result.outcome.warnings.push(format!(
                    "the batch budget could not save this result in {}: {error}",
                    dir.display()
                ));
                continue;
            }
        };
        result.outcome.estimated_tokens = u64::try_from(notice.len().div_ceil(4)).unwrap_or(0);
        used = used.saturating_add(result.outcome.estimated_tokens);
        result.block.content = janua_types::ResultContent::Text(notice);
        result
            .outcome
            .warnings
            .push("moved to a file by the batch budget".to_owned());
    }
}

/// Applies the batch budget, runs the PostToolBatch hooks over `results` and tells the
/// monitors.
pub(crate) async fn finish_batch(
    services: &Services<'_>,
    mut results: Vec<Dispatch>,
    token_budget: u64,
) -> BatchDispatch {
    apply_budget(
        &mut results,
        services.grant_context.session_results.as_deref(),
        token_budget,
    );
    let mut batch = BatchDispatch {
        stop: results
            .iter()
            .find_map(|result| result.outcome.stop.clone()),
        results,
        additional_context: Vec::new(),
        system_messages: Vec::new(),
        warnings: Vec::new(),
    };
    let ids: Vec<&str> = batch
        .results
        .iter()
        .map(|result| result.outcome.tool_use_id.as_str())
        .collect();
    if services.hooks.handles(HookEvent::PostToolBatch) {
        let calls: Vec<Value> = batch
            .results
            .iter()
            .map(|result| {
                json!({
                    "tool_name": result.outcome.tool.as_deref().unwrap_or(&result.outcome.requested),
                    "tool_input": result.outcome.input,
                    "tool_use_id": result.outcome.tool_use_id,
                    "tool_response": result.block.text(),
                })
            })
            .collect();
        let payload = json!({
            "session_id": services.session_id,
            "cwd": services.grant_context.workspace.to_string_lossy(),
            "permission_mode": services.policy.mode.as_str(),
            "hook_event_name": HookEvent::PostToolBatch.as_str(),
            "tool_calls": calls,
        });
        let env = services.hook_env();
        let ran = services
            .hooks
            .run(&env, HookEvent::PostToolBatch, None, None, move || payload)
            .await;
        for ran in ran {
            let name = &ran.hook.name;
            let answer = match ran.reply {
                Reply::Answer(value) => PostAnswer::from_json(&value, HookEvent::PostToolBatch)
                    .map_err(|error| error.to_string()),
                Reply::Plain(_) => continue,
                Reply::Block(reason) => Ok(PostAnswer {
                    feedback: Some(reason),
                    ..PostAnswer::default()
                }),
                Reply::NonBlocking(problem) | Reply::Failed(problem) => Err(problem),
            };
            match answer {
                Ok(answer) => {
                    if let Some(context) = answer.additional_context {
                        batch.additional_context.push(cap_text(
                            context,
                            services.session_dir,
                            name,
                        ));
                    }
                    if let Some(message) = answer.common.system_message {
                        batch
                            .system_messages
                            .push(cap_text(message, services.session_dir, name));
                    }
                    let stop = answer.common.stop.or(answer.feedback);
                    if batch.stop.is_none()
                        && let Some(reason) = stop
                    {
                        batch.stop = Some(format!(
                            "the PostToolBatch hook {name} stopped the loop: {}",
                            cap_text(reason, services.session_dir, name)
                        ));
                    }
                }
                Err(problem) => batch
                    .warnings
                    .push(format!("the PostToolBatch hook {name} failed: {problem}")),
            }
        }
    }
    services
        .monitors
        .emit("batch_finished", json!({ "tool_use_ids": ids }));
    batch
}
