//! Parsing hook answers (Claude Code's hook output JSON) into typed results, one type per event.
//!
//! Unknown fields are ignored, as Claude Code does, so hooks written for it work unchanged; values of
//! the wrong type are errors, because a misspelt decision must not read as "no objection". A hook
//! that fails to parse is a failed hook: the caller applies its `on-error` policy.

use serde::Deserialize;
use serde_json::Value;

use janua_permissions::VoteKind;

/// Fields every hook answer may carry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RawAnswer {
    /// `false` stops the agent after this hook.
    #[serde(rename = "continue")]
    continue_: Option<bool>,
    /// Why it stopped (shown to the user).
    stop_reason: Option<String>,
    /// A warning for the user.
    system_message: Option<String>,
    /// Top-level decision: `block` (post events) or legacy `approve`/`block` (PreToolUse).
    decision: Option<String>,
    /// Reason for `decision`.
    reason: Option<String>,
    /// Event-specific fields.
    hook_specific_output: Option<SpecificOutput>,
}

/// `hookSpecificOutput`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct SpecificOutput {
    /// The event the answer is for; when present it must be the event that ran the hook.
    hook_event_name: Option<String>,
    /// PreToolUse: `allow`, `deny`, `ask` or `defer`.
    permission_decision: Option<String>,
    /// Reason for the decision.
    permission_decision_reason: Option<String>,
    /// PreToolUse: replaces the whole input.
    updated_input: Option<Value>,
    /// Text added next to the tool result.
    additional_context: Option<String>,
    /// PermissionRequest: the decision object.
    decision: Option<RequestDecision>,
    /// PermissionDenied: the model may retry.
    retry: Option<bool>,
    /// PostToolUse: what the model sees instead of the tool's output.
    updated_tool_output: Option<Value>,
}

/// PermissionRequest's `hookSpecificOutput.decision`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RequestDecision {
    behavior: Option<String>,
    updated_input: Option<Value>,
    #[serde(default)]
    updated_permissions: Vec<PermissionUpdate>,
    message: Option<String>,
    interrupt: Option<bool>,
}

/// One `updatedPermissions` entry.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct PermissionUpdate {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    rules: Vec<RuleValue>,
    behavior: Option<String>,
    destination: Option<String>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct RuleValue {
    tool_name: String,
    rule_content: Option<String>,
}

/// What every answer may say besides its event's own fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Common {
    /// `continue: false`: stop the agent, with this reason.
    pub stop: Option<String>,
    /// `systemMessage`: a warning for the user.
    pub system_message: Option<String>,
}

/// A PreToolUse answer, interpreted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PreAnswer {
    /// Stop and warning.
    pub common: Common,
    /// The permission vote and its reason (`Defer` included).
    pub vote: Option<(VoteKind, Option<String>)>,
    /// Replacement input (ignored with a defer vote, as in Claude Code).
    pub updated_input: Option<Value>,
    /// Context for the model.
    pub additional_context: Option<String>,
}

/// A PermissionRequest answer, interpreted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestAnswer {
    /// Stop and warning.
    pub common: Common,
    /// `Some(true)` allow, `Some(false)` deny, `None` no answer.
    pub allow: Option<bool>,
    /// Replacement input (allow only).
    pub updated_input: Option<Value>,
    /// Allow rules to add to the session, as rule text (`Bash(git status)`).
    pub add_rules: Vec<String>,
    /// Updates janua does not apply, described for a warning.
    pub ignored_updates: Vec<String>,
    /// The deny message for the model.
    pub message: Option<String>,
    /// Deny and stop the agent.
    pub interrupt: bool,
}

/// A PermissionDenied answer, interpreted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeniedAnswer {
    /// Stop and warning.
    pub common: Common,
    /// The model may retry the call.
    pub retry: bool,
    /// Context for the model.
    pub additional_context: Option<String>,
}

/// A PostToolUse, PostToolUseFailure or PostToolBatch answer, interpreted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PostAnswer {
    /// Stop and warning.
    pub common: Common,
    /// Feedback added next to the result (`decision: "block"` + `reason`); for PostToolBatch it
    /// also stops the agent loop.
    pub feedback: Option<String>,
    /// Context for the model.
    pub additional_context: Option<String>,
    /// `updatedToolOutput` (PostToolUse only).
    pub updated_output: Option<Value>,
}

/// A SessionStart or SessionEnd answer, interpreted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionAnswer {
    /// Stop and warning.
    pub common: Common,
    /// Context for the model (SessionStart).
    pub additional_context: Option<String>,
}

/// A hook answer janua cannot use, and why: the hook counts as failed (per its `on-error` for
/// policy events, a warning for the others).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AnswerError {
    /// The answer is JSON but not an object.
    #[error("a hook answer must be a JSON object")]
    NotAnObject,
    /// A field has the wrong type or shape.
    #[error("invalid hook answer: {0}")]
    Malformed(String),
    /// `hookSpecificOutput.hookEventName` names another event than the one the hook ran for.
    #[error("hookSpecificOutput.hookEventName is {named:?}, but the hook ran for {ran_for}")]
    OtherEvent {
        /// The event the answer names.
        named: String,
        /// The event(s) the hook ran for.
        ran_for: String,
    },
    /// A PreToolUse top-level `decision` other than the deprecated `approve` or `block`.
    #[error(
        "invalid decision {0:?}; PreToolUse takes hookSpecificOutput.permissionDecision (or the deprecated decision \"approve\" or \"block\")"
    )]
    PreDecision(String),
    /// A `permissionDecision` other than allow, deny, ask or defer.
    #[error("invalid permissionDecision {0:?}; expected allow, deny, ask or defer")]
    PermissionDecision(String),
    /// A PreToolUse `updatedInput` that is not an object.
    #[error("updatedInput must be a JSON object (the whole new input)")]
    UpdatedInputNotObject,
    /// A PermissionRequest `decision.behavior` other than allow or deny.
    #[error("invalid decision.behavior {0:?}; expected allow or deny")]
    Behavior(String),
    /// A PermissionRequest `decision.updatedInput` that is not an object.
    #[error("decision.updatedInput must be a JSON object (the whole new input)")]
    RequestInputNotObject,
    /// A post-event `decision` other than `block`.
    #[error("invalid decision {0:?}; expected \"block\"")]
    PostDecision(String),
}

/// Parses the common fields. `events` are the event names the answer may be for: an answer whose
/// `hookEventName` names another event was written for a different event and is refused.
fn parse(value: &Value, events: &[&str]) -> Result<(RawAnswer, Common), AnswerError> {
    if value.is_null() {
        return Ok((RawAnswer::default(), Common::default()));
    }
    if !value.is_object() {
        return Err(AnswerError::NotAnObject);
    }
    let raw: RawAnswer = serde_json::from_value(value.clone())
        .map_err(|error| AnswerError::Malformed(error.to_string()))?;
    if let Some(name) = raw
        .hook_specific_output
        .as_ref()
        .and_then(|specific| specific.hook_event_name.as_deref())
        && !events.contains(&name)
    {
        return Err(AnswerError::OtherEvent {
            named: name.to_owned(),
            ran_for: events.join(" or "),
        });
    }
    let common = Common {
        stop: (raw.continue_ == Some(false)).then(|| {
            raw.stop_reason
                .clone()
                .unwrap_or_else(|| "a hook stopped the run".to_owned())
        }),
        system_message: raw.system_message.clone(),
    };
    Ok((raw, common))
}

impl PreAnswer {
    /// Interprets a PreToolUse answer.
    pub fn from_json(value: &Value) -> Result<Self, AnswerError> {
        let (answer, common) = parse(value, &["PreToolUse"])?;
        let specific = answer.hook_specific_output.unwrap_or_default();
        let reason = specific.permission_decision_reason.or(answer.reason);
        // The deprecated top-level form: `approve` or `block`; anything else is a mistake, and a
        // mistaken policy answer must not read as "no objection".
        let legacy = match answer.decision.as_deref() {
            None => None,
            Some("approve") => Some("allow".to_owned()),
            Some("block") => Some("deny".to_owned()),
            Some(other) => {
                return Err(AnswerError::PreDecision(other.to_owned()));
            }
        };
        let decision = specific.permission_decision.or(legacy);
        let vote = match decision.as_deref() {
            None => None,
            Some("allow") => Some((VoteKind::Allow, reason)),
            Some("deny") => Some((VoteKind::Deny, reason)),
            Some("ask") => Some((VoteKind::Ask, reason)),
            Some("defer") => Some((VoteKind::Defer, None)),
            Some(other) => {
                return Err(AnswerError::PermissionDecision(other.to_owned()));
            }
        };
        let updated_input = match specific.updated_input {
            Some(input) if !input.is_object() => {
                return Err(AnswerError::UpdatedInputNotObject);
            }
            Some(_) if matches!(vote, Some((VoteKind::Defer, _))) => None,
            other => other,
        };
        Ok(PreAnswer {
            common,
            vote,
            updated_input,
            additional_context: specific.additional_context,
        })
    }
}

impl RequestAnswer {
    /// Interprets a PermissionRequest answer.
    pub fn from_json(value: &Value) -> Result<Self, AnswerError> {
        let (answer, common) = parse(value, &["PermissionRequest"])?;
        let mut request = RequestAnswer {
            common,
            ..RequestAnswer::default()
        };
        let Some(decision) = answer.hook_specific_output.and_then(|s| s.decision) else {
            return Ok(request);
        };
        match decision.behavior.as_deref() {
            None => return Ok(request),
            Some("allow") => request.allow = Some(true),
            Some("deny") => request.allow = Some(false),
            Some(other) => {
                return Err(AnswerError::Behavior(other.to_owned()));
            }
        }
        if request.allow == Some(true) {
            if let Some(input) = decision.updated_input {
                if !input.is_object() {
                    return Err(AnswerError::RequestInputNotObject);
                }
                request.updated_input = Some(input);
            }
            for update in decision.updated_permissions {
                let behavior = update.behavior.as_deref().unwrap_or("allow");
                let destination = update.destination.as_deref().unwrap_or("session");
                if update.kind != "addRules" || behavior != "allow" {
                    request.ignored_updates.push(format!(
                        "{} ({behavior}): janua applies only addRules with behavior allow",
                        update.kind
                    ));
                    continue;
                }
                if destination != "session" {
                    request.ignored_updates.push(format!(
                        "addRules to {destination}: applied to the session only"
                    ));
                }
                for rule in update.rules {
                    request.add_rules.push(match rule.rule_content {
                        Some(content) => format!("{}({content})", rule.tool_name),
                        None => rule.tool_name,
                    });
                }
            }
        } else {
            request.message = decision.message;
            request.interrupt = decision.interrupt.unwrap_or(false);
        }
        Ok(request)
    }
}

impl DeniedAnswer {
    /// Interprets a PermissionDenied answer.
    pub fn from_json(value: &Value) -> Result<Self, AnswerError> {
        let (answer, common) = parse(value, &["PermissionDenied"])?;
        let specific = answer.hook_specific_output.unwrap_or_default();
        Ok(DeniedAnswer {
            common,
            retry: specific.retry.unwrap_or(false),
            additional_context: specific.additional_context,
        })
    }
}

impl PostAnswer {
    /// Interprets an answer to `event` (PostToolUse, PostToolUseFailure or PostToolBatch).
    pub fn from_json(value: &Value, event: janua_types::HookEvent) -> Result<Self, AnswerError> {
        let (answer, common) = parse(value, &[event.as_str()])?;
        let feedback = match answer.decision.as_deref() {
            Some("block") => Some(
                answer
                    .reason
                    .unwrap_or_else(|| "a hook flagged this result".to_owned()),
            ),
            Some(other) => return Err(AnswerError::PostDecision(other.to_owned())),
            None => None,
        };
        let specific = answer.hook_specific_output.unwrap_or_default();
        Ok(PostAnswer {
            common,
            feedback,
            additional_context: specific.additional_context,
            updated_output: specific.updated_tool_output,
        })
    }
}

impl SessionAnswer {
    /// Interprets an answer to `event` (SessionStart or SessionEnd).
    pub fn from_json(value: &Value, event: janua_types::HookEvent) -> Result<Self, AnswerError> {
        let (answer, common) = parse(value, &[event.as_str()])?;
        Ok(SessionAnswer {
            common,
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
        let cases: Vec<(Value, Result<PreAnswer, &str>)> = vec![
            (json!({}), Ok(PreAnswer::default())),
            (json!(null), Ok(PreAnswer::default())),
            (
                json!({"continue": false, "stopReason": "halt"}),
                Ok(PreAnswer {
                    common: Common {
                        stop: Some("halt".into()),
                        system_message: None,
                    },
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
                json!({"hookSpecificOutput": {"permissionDecision": "defer", "updatedInput": {"a": 1}}}),
                Ok(PreAnswer {
                    vote: Some((VoteKind::Defer, None)),
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
                json!({"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"a": 1}}, "systemMessage": "hi"}),
                Ok(PreAnswer {
                    common: Common {
                        stop: None,
                        system_message: Some("hi".into()),
                    },
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
            (json!([1, 2]), Err("must be a JSON object")),
            (
                json!({"decision": "deny"}),
                Err("invalid decision \"deny\""),
            ),
            (
                json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "permissionDecision": "allow"}}),
                Err("hookEventName is \"PostToolUse\""),
            ),
        ];
        for (value, expected) in cases {
            let got = PreAnswer::from_json(&value);
            match (got, expected) {
                (Ok(got), Ok(expected)) => assert_eq!(got, expected, "{value}"),
                (Err(got), Err(expected)) => {
                    assert!(got.to_string().contains(expected), "{value}: {got}")
                }
                (got, expected) => panic!("{value}: got {got:?}, expected {expected:?}"),
            }
        }
    }

    #[test]
    fn post_answers_read_block_context_and_output() {
        let answer = PostAnswer::from_json(
            &json!({
                "decision": "block",
                "reason": "looks wrong",
                "hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": "note", "updatedToolOutput": "short"}
            }),
            janua_types::HookEvent::PostToolUse,
        )
        .unwrap();
        assert_eq!(answer.feedback.as_deref(), Some("looks wrong"));
        assert_eq!(answer.additional_context.as_deref(), Some("note"));
        assert_eq!(answer.updated_output, Some(json!("short")));
        assert!(
            PostAnswer::from_json(
                &json!({"decision": "maybe"}),
                janua_types::HookEvent::PostToolUse
            )
            .is_err()
        );
    }

    #[test]
    fn permission_request_answers() {
        let allow = RequestAnswer::from_json(&json!({"hookSpecificOutput": {
            "hookEventName": "PermissionRequest",
            "decision": {
                "behavior": "allow",
                "updatedInput": {"command": "ls"},
                "updatedPermissions": [
                    {"type": "addRules", "rules": [{"toolName": "Bash", "ruleContent": "ls"}], "behavior": "allow", "destination": "session"},
                    {"type": "setMode", "mode": "acceptEdits", "destination": "session"}
                ]
            }
        }}))
        .unwrap();
        assert_eq!(allow.allow, Some(true));
        assert_eq!(allow.updated_input, Some(json!({"command": "ls"})));
        assert_eq!(allow.add_rules, vec!["Bash(ls)".to_owned()]);
        assert_eq!(allow.ignored_updates.len(), 1);

        let deny = RequestAnswer::from_json(&json!({"hookSpecificOutput": {
            "decision": {"behavior": "deny", "message": "not today", "interrupt": true}
        }}))
        .unwrap();
        assert_eq!(deny.allow, Some(false));
        assert_eq!(deny.message.as_deref(), Some("not today"));
        assert!(deny.interrupt);

        assert_eq!(RequestAnswer::from_json(&json!({})).unwrap().allow, None);
        assert!(
            RequestAnswer::from_json(
                &json!({"hookSpecificOutput": {"decision": {"behavior": "maybe"}}})
            )
            .is_err()
        );
    }

    #[test]
    fn denied_and_session_answers() {
        let denied = DeniedAnswer::from_json(
            &json!({"hookSpecificOutput": {"hookEventName": "PermissionDenied", "retry": true}}),
        )
        .unwrap();
        assert!(denied.retry);
        let session = SessionAnswer::from_json(
            &json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "branch main"}}),
            janua_types::HookEvent::SessionStart,
        )
        .unwrap();
        assert_eq!(session.additional_context.as_deref(), Some("branch main"));
    }
}
