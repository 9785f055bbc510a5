//! Turns a finished command or a task status into what the model sees, under Claude Code's output
//! rules: a success up to [`INLINE_CHARS`] inline, else the output file's path and a preview; a
//! failure as a head-and-tail excerpt of at most [`FAILURE_CHARS`].

use janua_sdk::process::{Finished, TaskStatus};
use janua_sdk::{Output, ToolError};
use serde_json::json;

/// Characters of a successful command's output returned inline.
pub(crate) const INLINE_CHARS: usize = 30_000;
/// Characters of preview when a successful command's output is saved to a file instead.
pub(crate) const PREVIEW_CHARS: usize = 2_000;
/// Characters of a failed command's output returned, as head and tail.
pub(crate) const FAILURE_CHARS: usize = 10_000;

/// Commands whose exit code 1 means "nothing found" or "differs", not failure.
const EXIT_ONE_IS_SUCCESS: &[&str] = &["grep", "rg", "egrep", "fgrep", "find", "diff", "test", "["];
/// Two-word commands with the same meaning.
const EXIT_ONE_IS_SUCCESS_GIT: &[&str] = &["diff", "grep"];

/// The result of a finished foreground command.
pub(crate) fn finished(
    command: &str,
    timeout_ms: u64,
    finished: &Finished,
) -> Result<Output, ToolError> {
    let code = finished.exit_code;
    let interpretation = match code {
        Some(1) if exit_one_is_success(command) => {
            Some("exit code 1: no match or difference, not an error")
        }
        _ => None,
    };
    let success = !finished.timed_out
        && !finished.cancelled
        && !finished.output_capped
        && (code == Some(0) || interpretation.is_some());
    let mut structured = json!({
        "stdout": "",
        "exitCode": code,
        "signal": finished.signal,
        "interrupted": finished.timed_out || finished.cancelled,
        "timedOutAfterMs": finished.timed_out.then_some(timeout_ms),
        "outputCapped": finished.output_capped,
        // The host makes the file with the first byte of output: none for a silent command.
        "persistedOutputPath": (!finished.output_path.is_empty()).then_some(&finished.output_path),
        "persistedOutputSize": finished.output_bytes,
        "returnCodeInterpretation": interpretation,
        "cwd": finished.cwd,
    });
    let notice = finished
        .notice
        .as_deref()
        .map(|notice| format!("\n{notice}"))
        .unwrap_or_default();
    if success {
        let text = if chars(&finished.output_head) <= INLINE_CHARS
            && finished.output_tail.is_empty()
        {
            finished.output_head.clone()
        } else {
            let preview: String = finished.output_head.chars().take(PREVIEW_CHARS).collect();
            format!(
                "{preview}\n\n[Output too large to return inline: {} bytes in all, saved to {}. \
                 Read or Grep that file for the rest.]",
                finished.output_bytes, finished.output_path
            )
        };
        let text = match interpretation {
            Some(meaning) => format!("{text}\n[{meaning}]"),
            None => text,
        };
        structured["stdout"] = json!(text);
        return Ok(Output::text(format!("{text}{notice}")).with_structured(structured));
    }
    let (kind, headline) = if finished.timed_out {
        (
            "command_timed_out",
            format!(
                "Command timed out after {timeout_ms} ms and was killed, with every process it started."
            ),
        )
    } else if finished.cancelled {
        (
            "command_cancelled",
            "Command was cancelled and killed.".to_owned(),
        )
    } else if finished.output_capped {
        (
            "output_limit",
            format!(
                "Command was killed: its output passed the {}-byte cap (kept in {}).",
                finished.output_bytes, finished.output_path
            ),
        )
    } else if let Some(signal) = finished.signal {
        (
            "command_failed",
            format!("Command was killed by signal {signal}."),
        )
    } else {
        (
            "command_failed",
            format!("Exit code {}", code.unwrap_or(-1)),
        )
    };
    let excerpt = excerpt(finished);
    Err(ToolError::new(
        kind,
        format!("{headline}\n{excerpt}{notice}"),
    ))
}

/// At most [`FAILURE_CHARS`]: the whole output, or its start and end with a marker between.
fn excerpt(finished: &Finished) -> String {
    let head = &finished.output_head;
    let whole = finished.output_tail.is_empty();
    if whole && chars(head) <= FAILURE_CHARS {
        return head.clone();
    }
    let half = FAILURE_CHARS / 2;
    let start: String = head.chars().take(half).collect();
    let end_source = if whole { head } else { &finished.output_tail };
    let count = chars(end_source);
    let end: String = end_source
        .chars()
        .skip(count.saturating_sub(half))
        .collect();
    format!(
        "{start}\n\n[... output cut: {} bytes in all; the whole output is in {} ...]\n\n{end}",
        finished.output_bytes, finished.output_path
    )
}

fn chars(text: &str) -> usize {
    text.chars().count()
}

/// True when the command's first word (after `VAR=value` assignments) treats exit code 1 as an
/// answer: `grep`, `rg`, `find`, `diff`, `test`, `[`, `git diff`, `git grep`.
pub(crate) fn exit_one_is_success(command: &str) -> bool {
    let mut words = command
        .split_whitespace()
        .skip_while(|word| word.contains('=') && !word.starts_with('='));
    let Some(first) = words.next() else {
        return false;
    };
    let program = first.rsplit('/').next().unwrap_or(first);
    if program == "git" {
        return words
            .next()
            .is_some_and(|sub| EXIT_ONE_IS_SUCCESS_GIT.contains(&sub));
    }
    EXIT_ONE_IS_SUCCESS.contains(&program)
}

/// A background task's status.
pub(crate) fn task(status: &TaskStatus) -> Output {
    let state = match &status.finished {
        None => "running".to_owned(),
        Some(finished) => match (finished.exit_code, finished.signal) {
            (Some(code), _) => format!("exited with code {code}"),
            (None, Some(signal)) => format!("killed by signal {signal}"),
            (None, None) => "ended".to_owned(),
        },
    };
    let output = if status.new_output.is_empty() {
        "(no new output)".to_owned()
    } else {
        status.new_output.clone()
    };
    // What the host did when the task ended (a protected path it made, set aside) is the
    // model's to know, as for a foreground command.
    let notice = status
        .finished
        .as_ref()
        .and_then(|finished| finished.notice.as_deref())
        .map(|notice| format!("\n{notice}"))
        .unwrap_or_default();
    let saved = if status.output_path.is_empty() {
        "no output so far".to_owned()
    } else {
        format!(
            "{} bytes of output so far, in {}",
            status.output_bytes, status.output_path
        )
    };
    let text = format!(
        "Task {} ({state}): {}\n{output}\n[{saved}]{notice}",
        status.id, status.label
    );
    Output::text(text).with_structured(json!({
        "task_id": status.id,
        "status": if status.finished.is_some() { "completed" } else { "running" },
        "exitCode": status.finished.as_ref().and_then(|finished| finished.exit_code),
        "output": status.new_output,
        "outputBytes": status.output_bytes,
        "outputPath": (!status.output_path.is_empty()).then_some(&status.output_path),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_one_means_success_only_for_search_and_compare_commands() {
        for (command, expected) in [
            ("grep foo file", true),
            ("LC_ALL=C grep -r x .", true),
            ("/usr/bin/rg pattern", true),
            ("find . -name x", true),
            ("diff a b", true),
            ("test -f x", true),
            ("[ -f x ]", true),
            ("git diff --quiet", true),
            ("git grep needle", true),
            ("git status", false),
            ("pgrep sshd", false),
            ("jq -e .x", false),
            ("cmp a b", false),
            ("", false),
        ] {
            assert_eq!(exit_one_is_success(command), expected, "{command:?}");
        }
    }

    fn finished_with(head: &str, tail: &str, bytes: u64, code: i32) -> Finished {
        Finished {
            exit_code: Some(code),
            signal: None,
            timed_out: false,
            cancelled: false,
            output_capped: false,
            output_head: head.to_owned(),
            output_tail: tail.to_owned(),
            output_bytes: bytes,
            output_path: "/state/out.log".to_owned(),
            cwd: "/ws".to_owned(),
            notice: None,
        }
    }

    #[test]
    fn large_successful_output_is_a_preview_and_the_file_path() {
        let head = "x".repeat(INLINE_CHARS + 1);
        let output = finished(
            "cat big",
            1000,
            &finished_with(&head, "", head.len() as u64, 0),
        )
        .unwrap();
        let text = format!("{:?}", output);
        assert!(text.contains("/state/out.log"), "{text}");
        assert!(
            text.len() < INLINE_CHARS / 2,
            "a preview, not the whole output"
        );
    }

    #[test]
    fn failures_keep_head_and_tail() {
        let head = format!("FIRST{}", "a".repeat(FAILURE_CHARS * 2));
        let tail = format!("{}LAST", "b".repeat(100));
        let error = finished("make", 1000, &finished_with(&head, &tail, 999_999, 2)).unwrap_err();
        assert_eq!(error.kind, "command_failed");
        assert!(error.message.starts_with("Exit code 2"));
        assert!(error.message.contains("FIRST") && error.message.contains("LAST"));
        assert!(error.message.chars().count() < FAILURE_CHARS + 500);
    }
}
