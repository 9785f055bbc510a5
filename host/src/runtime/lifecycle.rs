//! The session's beginning and end: SessionStart and SessionEnd hooks, the monitors' first and
//! last events, and draining the monitors when the session ends.

use super::Runtime;
use crate::hooks::MonitorStats;
use janua_types::HookEvent;

/// What the SessionStart hooks said.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SessionStartReport {
    /// `startup` for a new session, `resume` for an existing one.
    pub source: String,
    /// Context for the model, in hook order.
    pub additional_context: Vec<String>,
    /// Messages for the user.
    pub system_messages: Vec<String>,
    /// A hook asked to stop the agent.
    pub stop: Option<String>,
    /// Hooks that failed.
    pub warnings: Vec<String>,
}

/// What ending the session reported.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct SessionEndReport {
    /// Hooks that failed, and monitors that dropped events or failed.
    pub warnings: Vec<String>,
    /// Every monitor's counters.
    pub monitors: Vec<MonitorStats>,
}

impl Runtime {
    /// Starts the session: runs the SessionStart hooks (matcher on `startup` or `resume`) and
    /// tells the monitors. Only the first call does anything.
    pub async fn start_session(&self) -> SessionStartReport {
        use std::sync::atomic::Ordering;
        let source = if self.resumed { "resume" } else { "startup" };
        let mut report = SessionStartReport {
            source: source.to_owned(),
            ..SessionStartReport::default()
        };
        if self.started.swap(true, Ordering::Relaxed) {
            return report;
        }
        self.monitors
            .emit("session_start", serde_json::json!({ "source": source }));
        let answers = self
            .session_hooks(HookEvent::SessionStart, "source", source)
            .await;
        for (name, answer) in answers {
            match answer {
                Ok(answer) => {
                    let session_dir = self.session.dir();
                    if let Some(context) = answer.additional_context {
                        report.additional_context.push(crate::hooks::cap_text(
                            context,
                            session_dir,
                            &name,
                        ));
                    }
                    if let Some(message) = answer.common.system_message {
                        report.system_messages.push(crate::hooks::cap_text(
                            message,
                            session_dir,
                            &name,
                        ));
                    }
                    if report.stop.is_none() {
                        report.stop = answer.common.stop;
                    }
                }
                Err(problem) => report
                    .warnings
                    .push(format!("the SessionStart hook {name} failed: {problem}")),
            }
        }
        report
    }

    /// Ends the session: runs the SessionEnd hooks (matcher on `reason`), tells the monitors,
    /// then waits (at most 5 s) for them to finish their queues and reports their counters.
    pub async fn end_session(&self, reason: &str) -> SessionEndReport {
        use std::sync::atomic::Ordering;
        let mut report = SessionEndReport::default();
        if self.ended.swap(true, Ordering::Relaxed) {
            return report;
        }
        for (name, answer) in self
            .session_hooks(HookEvent::SessionEnd, "reason", reason)
            .await
        {
            if let Err(problem) = answer {
                report
                    .warnings
                    .push(format!("the SessionEnd hook {name} failed: {problem}"));
            }
        }
        self.monitors
            .emit("session_end", serde_json::json!({ "reason": reason }));
        // Background tasks and MCP servers die with the session even when something still holds
        // the runtime.
        self.shell.stop_all();
        self.browser.shutdown();
        for server in &self.mcp_servers {
            server.stop().await;
        }
        let closing = self.monitors.clone();
        // Waiting for monitors blocks; keep it off the async workers.
        let monitors =
            tokio::task::spawn_blocking(move || closing.close(std::time::Duration::from_secs(5)))
                .await
                .unwrap_or_default();
        for stats in &monitors {
            if stats.dropped > 0 {
                report.warnings.push(format!(
                    "monitor {} missed {} events: its queue was full",
                    stats.name, stats.dropped
                ));
            }
            if stats.failures > 0 {
                report.warnings.push(format!(
                    "monitor {} failed on {} events (see the log)",
                    stats.name, stats.failures
                ));
            }
        }
        report.monitors = monitors;
        if let Err(error) = self.session.save() {
            report.warnings.push(error.to_string());
        }
        report
    }

    /// Runs the hooks of a session event; each answer, by hook name.
    async fn session_hooks(
        &self,
        event: HookEvent,
        field: &str,
        value: &str,
    ) -> Vec<(
        String,
        Result<crate::hooks::SessionAnswer, SessionHookFailed>,
    )> {
        if !self.hooks.handles(event) {
            return Vec::new();
        }
        let services = self.services();
        let env = services.hook_env();
        let payload = serde_json::json!({
            "session_id": self.session.id(),
            "cwd": self.workspace().to_string_lossy(),
            "permission_mode": self.policy.mode.as_str(),
            "hook_event_name": event.as_str(),
            field: value,
        });
        self.hooks
            .run(&env, event, Some(value), None, move || payload)
            .await
            .into_iter()
            .map(|ran| {
                let answer = match ran.reply {
                    crate::hooks::Reply::Answer(answer) => {
                        crate::hooks::SessionAnswer::from_json(&answer, event)
                            .map_err(SessionHookFailed::Answer)
                    }
                    crate::hooks::Reply::Plain(text) => Ok(crate::hooks::SessionAnswer {
                        // Plain stdout of a SessionStart command is context, as in Claude Code.
                        additional_context: (!text.is_empty()).then_some(text),
                        ..Default::default()
                    }),
                    crate::hooks::Reply::Block(problem)
                    | crate::hooks::Reply::NonBlocking(problem)
                    | crate::hooks::Reply::Failed(problem) => Err(SessionHookFailed::Hook(problem)),
                };
                (ran.hook.name.clone(), answer)
            })
            .collect()
    }
}

/// Why a session hook gave no usable answer.
#[derive(Debug, thiserror::Error)]
enum SessionHookFailed {
    /// Its answer is not a valid answer for the event.
    #[error(transparent)]
    Answer(crate::hooks::AnswerError),
    /// It blocked, failed or reported an error, in its own words.
    #[error("{0}")]
    Hook(String),
}
