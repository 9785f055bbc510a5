//! Parsing hook answers (Claude Code's hook output JSON) into typed results.
//!
//! Unknown fields are ignored, as Claude Code does, so hooks written for it work unchanged; values of
//! the wrong type are errors, because a misspelt decision must not read as "no objection".

use serde::Deserialize;

use crate::permissions::VoteKind;

/// Fields every hook answer may carry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct HookAnswer {
    /// `false` stops the agent after this hook.
    #[serde(rename = "continue")]
    pub continue_: Option<bool>,
    /// Why it stopped (shown to the user).
    pub stop_reason: Option<String>,
    /// Top-level decision: `block` (PostToolUse) or legacy `approve`/`block` (PreToolUse).
    pub decision: Option<String>,
    /// Reason for `decision`.
    pub reason: Option<String>,
    /// Event-specific fields.
    pub hook_specific_output: Option<SpecificOutput>,
}

/// `hookSpecificOutput`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct SpecificOutput {
    /// `allow`, `deny`, `ask` or `defer`.
    pub permission_decision: Option<String>,
    /// Reason for the decision.
    pub permission_decision_reason: Option<String>,
    /// Replaces the whole input.
    pub updated_input: Option<serde_json::Value>,
    /// Text added next to the tool result.
    pub additional_context: Option<String>,
}

/// A PreToolUse answer, interpreted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreAnswer {
    /// Stop the agent (`continue: false`) with this reason.
    pub stop: Option<String>,
    /// Defer the call to the caller.
    pub defer: bool,
    /// The permission vote and its reason.
    pub vote: Option<(VoteKind, Option<String>)>,
    /// Replacement input.
    pub updated_input: Option<serde_json::Value>,
    /// Context for the model.
    pub additional_context: Option<String>,
}

/// A PostToolUse / PostToolUseFailure answer, interpreted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostAnswer {
    /// Feedback added next to the result (`decision: "block"` + `reason`).
    pub feedback: Option<String>,
    /// Context for the model.
    pub additional_context: Option<String>,
}

fn parse(value: &serde_json::Value) -> Result<HookAnswer, String> {
    if value.is_null() {
        return Ok(HookAnswer::default());
    }
    serde_json::from_value(value.clone()).map_err(|error| format!("invalid hook answer: {error}"))
}

impl PreAnswer {
    /// Interprets a PreToolUse answer.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, String> {
        let answer = parse(value)?;
        let mut pre = PreAnswer::default();
        if answer.continue_ == Some(false) {
            pre.stop = Some(
                answer
                    .stop_reason
                    .unwrap_or_else(|| "a hook stopped the run".to_owned()),
            );
            return Ok(pre);
        }
        let specific = answer.hook_specific_output.unwrap_or_default();
        let reason = specific.permission_decision_reason.or(answer.reason);
        let decision = specific
            .permission_decision
            .or_else(|| match answer.decision.as_deref() {
                Some("approve") => Some("allow".to_owned()),
                Some("block") => Some("deny".to_owned()),
                _ => None,
            });
        match decision.as_deref() {
            None => {}
            Some("allow") => pre.vote = Some((VoteKind::Allow, reason)),
            Some("deny") => pre.vote = Some((VoteKind::Deny, reason)),
            Some("ask") => pre.vote = Some((VoteKind::Ask, reason)),
            Some("defer") => {
                pre.defer = true;
                return Ok(pre);
            }
            Some(other) => {
                return Err(format!(
                    "invalid permissionDecision {other:?}; expected allow, deny, ask or defer"
                ));
            }
        }
        if let Some(input) = specific.updated_input {
            if !input.is_object() {
                return Err("updatedInput must be a JSON object (the whole new input)".to_owned());
            }
            pre.updated_input = Some(input);
        }
        pre.additional_context = specific.additional_context;
        Ok(pre)
    }
}

impl PostAnswer {
    /// Interprets a PostToolUse or PostToolUseFailure answer.
    pub fn from_json(value: &serde_json::Value) -> Result<Self, String> {
        let answer = parse(value)?;
        let feedback = match answer.decision.as_deref() {
            Some("block") => Some(
                answer
                    .reason
                    .unwrap_or_else(|| "a PostToolUse hook flagged this result".to_owned()),
            ),
            Some(other) => return Err(format!("invalid decision {other:?}; expected \"block\"")),
            None => None,
        };
        Ok(PostAnswer {
            feedback,
            additional_context: answer
                .hook_specific_output
                .and_then(|specific| specific.additional_context),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn pre_answers_table() {
        let cases: Vec<(serde_json::Value, Result<PreAnswer, &str>)> = vec![
            (json!({}), Ok(PreAnswer::default())),
            (json!(null), Ok(PreAnswer::default())),
            (
                json!({"continue": false, "stopReason": "halt"}),
                Ok(PreAnswer {
                    stop: Some("halt".into()),
                    ..Default::default()
                }),
            ),
            (
                json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "no"}}),
                Ok(PreAnswer {
                    vote: Some((VoteKind::Deny, Some("no".into()))),
                    ..Default::default()
                }),
            ),
            (
                json!({"hookSpecificOutput": {"permissionDecision": "defer"}}),
                Ok(PreAnswer {
                    defer: true,
                    ..Default::default()
                }),
            ),
            (
                json!({"decision": "block", "reason": "legacy"}),
                Ok(PreAnswer {
                    vote: Some((VoteKind::Deny, Some("legacy".into()))),
                    ..Default::default()
                }),
            ),
            (
                json!({"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"a": 1}}}),
                Ok(PreAnswer {
                    vote: Some((VoteKind::Allow, None)),
                    updated_input: Some(json!({"a": 1})),
                    ..Default::default()
                }),
            ),
            (
                json!({"hookSpecificOutput": {"permissionDecision": "alow"}}),
                Err("invalid permissionDecision"),
            ),
            (
                json!({"hookSpecificOutput": {"updatedInput": "x"}}),
                Err("updatedInput must be"),
            ),
            (json!({"continue": "no"}), Err("invalid hook answer")),
        ];
        for (value, expected) in cases {
            let got = PreAnswer::from_json(&value);
            match (got, expected) {
                (Ok(got), Ok(expected)) => assert_eq!(got, expected, "{value}"),
                (Err(got), Err(expected)) => assert!(got.contains(expected), "{value}: {got}"),
                (got, expected) => panic!("{value}: got {got:?}, expected {expected:?}"),
            }
        }
    }

    #[test]
    fn post_answers_read_block_and_context() {
        let answer = PostAnswer::from_json(&json!({
            "decision": "block",
            "reason": "looks wrong",
            "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "note"}
        }))
        .unwrap();
        assert_eq!(answer.feedback.as_deref(), Some("looks wrong"));
        assert_eq!(answer.additional_context.as_deref(), Some("note"));
        assert!(PostAnswer::from_json(&json!({"decision": "maybe"})).is_err());
    }
}
