//! Stage 7: call the tool in a fresh sandbox with only its effective grants and limits. A
//! write-class tool's write access is narrowed to the directory of the file the decision allowed.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use super::Services;
use super::frame::Frame;
use super::outcome::Failure;
use crate::output::head_and_tail;
use crate::registry::{Backend, RegisteredTool};
use janua_sandbox::DEFAULT_OUTPUT_CHARS;
use janua_sandbox::NetPolicy;
use janua_sandbox::ProcessAccess;
use janua_sandbox::{
    CallContext, CallSetup, GuestFailure, GuestReply, GuestRequest, NetOutcome, WitContent,
};
use janua_types::CapabilityClass;
use janua_types::ErrorKind;

/// Largest structured result kept; larger ones are dropped with a warning (the content remains).
const MAX_STRUCTURED_BYTES: usize = 8 << 20;
/// Largest inline image; larger ones are replaced by a note.
const MAX_IMAGE_BYTES: usize = 5 << 20;
/// Most images in one result, and their total size: base64 inflates by 4/3, and the whole request
/// to a model API must stay well under 32 MB.
const MAX_IMAGES: usize = 20;
const MAX_TOTAL_IMAGE_BYTES: usize = 15 << 20;
/// Media types model APIs accept for images. The type is guest text, so nothing else passes.
const IMAGE_TYPES: [&str; 4] = ["image/png", "image/jpeg", "image/gif", "image/webp"];
/// Characters of a tool's own error message kept in the outcome (head and tail).
pub(crate) const MAX_ERROR_CHARS: usize = 2 * DEFAULT_OUTPUT_CHARS;
/// Characters of a tool's own error kind kept.
const MAX_ERROR_KIND_CHARS: usize = 64;

/// A successful call's raw output.
pub(crate) struct Executed {
    pub(crate) content: Vec<WitContent>,
    pub(crate) structured: Option<String>,
    pub(crate) progress: Vec<String>,
    pub(crate) warnings: Vec<String>,
}

impl Executed {
    /// Applies the size caps that keep host memory proportional to the limits, not to the guest.
    fn bounded(
        content: Vec<WitContent>,
        structured: Option<String>,
        progress: Vec<String>,
    ) -> Self {
        let mut warnings = Vec::new();
        let structured = structured.filter(|text| {
            let keep = text.len() <= MAX_STRUCTURED_BYTES;
            if !keep {
                warnings.push(format!(
                    "the structured result ({} bytes) is over the {MAX_STRUCTURED_BYTES}-byte cap and was dropped",
                    text.len()
                ));
            }
            keep
        });
        let mut image_count = 0usize;
        let mut image_bytes = 0usize;
        let content = content
            .into_iter()
            .map(|part| match part {
                WitContent::Image(image) => {
                    let problem = if !IMAGE_TYPES.contains(&image.media_type.as_str()) {
                        Some("its media type is not image/png, image/jpeg, image/gif or image/webp".to_owned())
                    } else if image.data.len() > MAX_IMAGE_BYTES {
                        Some(format!("it is over the {MAX_IMAGE_BYTES}-byte cap per image"))
                    } else if image_count == MAX_IMAGES
                        || image_bytes + image.data.len() > MAX_TOTAL_IMAGE_BYTES
                    {
                        Some(format!(
                            "the result already holds {image_count} images ({image_bytes} bytes; at most {MAX_IMAGES} and {MAX_TOTAL_IMAGE_BYTES} bytes)"
                        ))
                    } else {
                        None
                    };
                    match problem {
                        None => {
                            image_count += 1;
                            image_bytes += image.data.len();
                            WitContent::Image(image)
                        }
                        Some(problem) => WitContent::Text(format!(
                            "[image omitted ({} bytes): {problem}]",
                            image.data.len()
                        )),
                    }
                }
                other => other,
            })
            .collect();
        Self {
            content,
            structured,
            progress,
            warnings,
        }
    }
}

/// The file a write-class tool's call changes: its path field, made absolute and normalized
/// lexically (the same spelling the guest SDK uses).
pub(crate) fn write_target(
    services: &Services<'_>,
    tool: &RegisteredTool,
    input: &serde_json::Value,
) -> Option<PathBuf> {
    if tool.spec.class != CapabilityClass::Write {
        return None;
    }
    let raw = input.get(tool.path_field()?)?.as_str()?;
    let joined = services.grant_context.workspace.join(raw);
    let mut path = PathBuf::from("/");
    for part in joined.components() {
        match part {
            Component::Normal(name) => path.push(name),
            Component::ParentDir => {
                path.pop();
            }
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    Some(path)
}

/// Runs the tool. The `${TMP}` directory, if the grants use it, lives exactly as long as the call.
/// With a `write_target`, the tool may write only in the closest existing directory to it; a
/// write-class tool without one may write nothing.
pub(crate) async fn run(
    services: &Services<'_>,
    frame: &Frame<'_>,
    tool: &RegisteredTool,
    input: String,
    ctx: CallContext,
    write_target: Option<&Path>,
) -> Result<Executed, (Failure, Vec<String>)> {
    let cancel = Arc::clone(&frame.cancel);
    let beside_others = frame.placement.beside_others;
    let component = match &tool.backend {
        Backend::Component(component) => component,
        Backend::Mcp(mcp, _) => return call_mcp(mcp, &input, &cancel).await,
        Backend::Agent(_) => {
            let input: serde_json::Value = serde_json::from_str(&input).unwrap_or_default();
            let timeout = services.timeout(tool);
            let agent = super::delegate::AgentCall {
                call_id: &ctx.call_id,
                input: &input,
                timeout,
                beside_others,
            };
            return match super::delegate::run_agent(services, agent, cancel).await {
                Ok(text) => Ok(Executed::bounded(
                    vec![WitContent::Text(text)],
                    None,
                    Vec::new(),
                )),
                Err(failure) => Err((failure, Vec::new())),
            };
        }
    };
    let mut context = tool.grant_context(services.grant_context);
    if let Some(data) = &context.plugin_data
        && component.grants.uses_plugin_data()
        && let Err(error) = std::fs::create_dir_all(data)
    {
        let failure = Failure::new(
            ErrorKind::Internal,
            format!(
                "cannot create the plugin data directory {}: {error}",
                data.display()
            ),
        );
        return Err((failure, Vec::new()));
    }
    let tmp = if component.grants.uses_tmp() {
        match tempfile::Builder::new().prefix("janua-call-").tempdir() {
            Ok(dir) => Some(dir),
            Err(error) => {
                let failure = Failure::new(
                    ErrorKind::Internal,
                    format!("cannot create the call's temporary directory: {error}"),
                );
                return Err((failure, Vec::new()));
            }
        }
    } else {
        None
    };
    context.tmp = tmp.as_ref().map(|dir| dir.path().to_path_buf());
    let mut ctx = ctx;
    let path_text = |path: &std::path::Path| path.to_string_lossy().into_owned();
    if component.grants.uses_plugin_data() {
        ctx.plugin_data = context.plugin_data.as_deref().map(path_text);
    }
    ctx.tmp = context.tmp.as_deref().map(path_text);
    let mut grants = component
        .grants
        .resolve(&context, tool.reads_session_results());
    let mut files = services.files.clone();
    match write_target {
        Some(target) => {
            grants.narrow_writes_to(target);
            files.write_scope = Some(target.to_path_buf());
        }
        // No path the permission decision could have looked at: nothing may be written.
        None if tool.spec.class == CapabilityClass::Write => grants.make_read_only(),
        None => {}
    }
    // Under a delegating caller, the tool holds at most what the caller holds.
    let ceiling = services.scope.ceiling.as_deref();
    let mut effective = component.grants.clone();
    if let Some(ceiling) = ceiling {
        grants = ceiling.narrow(grants);
        effective.process = ceiling.process(&effective.process);
        effective.net = ceiling.net(&effective.net);
        effective.delegate = ceiling.delegate(&effective.delegate);
        effective.browser &= ceiling.browser;
    }
    let process = (!effective.process.is_empty()).then(|| ProcessAccess {
        grants: effective.process.clone(),
        shell: Arc::clone(services.shell),
        owner: component.loaded.digest.clone(),
    });
    let net = net_policy(services, tool, &effective.net, &input);
    let browser = effective.browser.then(|| {
        janua_sandbox::BrowserAccess::new(
            Arc::clone(services.browser),
            net.clone(),
            tokio::runtime::Handle::current(),
            services.files.hidden.clone(),
        )
    });
    let timeout = services.timeout(tool);
    if timeout.is_zero() {
        return Err((
            Failure::new(
                ErrorKind::Timeout,
                "the delegating call's deadline left no time for this call",
            ),
            Vec::new(),
        ));
    }
    let mut limits = component.limits;
    limits.timeout = timeout;
    let nested = (!effective.delegate.is_empty()).then(|| super::delegate::NestedCalls {
        services,
        caller: ctx.call_id.clone(),
        ceiling: Arc::new(crate::delegation::Ceiling::of_call(&grants, &effective)),
        cancel: Arc::clone(&cancel),
        beside_others,
    });
    let on_progress = services.monitors.progress_sink(&ctx.call_id);
    let request = GuestRequest::Call {
        tool: tool.spec.name.clone(),
        input,
        ctx,
    };
    let run = tool
        .run_guest(
            component,
            services.sandbox,
            CallSetup::new(&grants, limits, &tool.spec.name, &files)
                .cancel(cancel)
                .process(process)
                .net(net)
                .browser(browser)
                .on_progress(on_progress)
                .delegator(
                    nested
                        .as_ref()
                        .map(|nested| nested as &dyn janua_sandbox::Delegator),
                )
                .own_thread(beside_others),
            request,
        )
        .await;
    drop(tmp);
    match run.reply {
        Ok(GuestReply::Called(Ok(output))) => Ok(Executed::bounded(
            output.content,
            output.structured,
            run.progress,
        )),
        Ok(GuestReply::Called(Err(error))) => {
            // Both strings are guest text: bound them before they reach the outcome or hooks.
            let kind: String = error
                .kind
                .chars()
                .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
                .take(MAX_ERROR_KIND_CHARS)
                .collect();
            let kind = if kind.is_empty() {
                "error".to_owned()
            } else {
                kind
            };
            let (message, _) = head_and_tail(&error.message, MAX_ERROR_CHARS);
            let failure = net_failure(&run.net, &kind, &message).unwrap_or(Failure {
                kind: ErrorKind::ToolFailed,
                message: format!("{kind}: {message}"),
                tool_error_kind: Some(kind),
            });
            Err((failure, run.progress))
        }
        Ok(_) => Err((
            Failure::new(ErrorKind::Internal, "call returned an unexpected reply"),
            run.progress,
        )),
        Err(failure) => Err((failure_from_guest(&tool.spec.name, failure), run.progress)),
    }
}

/// Sends the call to the tool's MCP server. A server's own error result is `tool_failed`.
async fn call_mcp(
    mcp: &janua_mcp::McpTool,
    input: &str,
    cancel: &AtomicBool,
) -> Result<Executed, (Failure, Vec<String>)> {
    let arguments: serde_json::Value = serde_json::from_str(input).unwrap_or_default();
    match mcp.call(&arguments, cancel).await {
        Ok(converted) if converted.is_error => {
            let text = converted
                .content
                .iter()
                .filter_map(|part| match part {
                    janua_mcp::Part::Text(text) => Some(text.as_str()),
                    janua_mcp::Part::Image { .. } => None,
                })
                .collect::<Vec<_>>()
                .join("\n");
            let (message, _) = head_and_tail(&text, MAX_ERROR_CHARS);
            Err((
                Failure::new(
                    ErrorKind::ToolFailed,
                    format!(
                        "the MCP server {} reported an error: {message}",
                        mcp.connection.name()
                    ),
                ),
                Vec::new(),
            ))
        }
        Ok(converted) => Ok(Executed::bounded(
            converted.content.into_iter().map(wit_content).collect(),
            converted.structured,
            Vec::new(),
        )),
        Err(error) => Err((
            Failure::new(
                error.kind,
                format!("MCP server {}: {}", mcp.connection.name(), error.message),
            ),
            Vec::new(),
        )),
    }
}

/// An MCP result part as the content parts guests return.
fn wit_content(part: janua_mcp::Part) -> WitContent {
    match part {
        janua_mcp::Part::Text(text) => WitContent::Text(text),
        janua_mcp::Part::Image { media_type, data } => {
            WitContent::Image(janua_sandbox::WitImage { media_type, data })
        }
    }
}

/// What the call's outgoing HTTP requests may reach: the component's net grants, checked against
/// the permission rules with the host the decision looked at (the rule field's URL). `None` for a
/// component without net grants: every request is refused.
fn net_policy(
    services: &Services<'_>,
    tool: &RegisteredTool,
    grants: &[janua_sandbox::NetGrant],
    input: &str,
) -> Option<Arc<NetPolicy>> {
    if grants.is_empty() {
        return None;
    }
    let decided = tool.spec.rule_field.as_deref().and_then(|field| {
        let input: serde_json::Value = serde_json::from_str(input).ok()?;
        janua_types::url_host(input.get(field)?.as_str()?)
    });
    Some(Arc::new(NetPolicy {
        grants: grants.to_vec(),
        hosts: services.policy.host_check(&tool.spec.name, decided),
        settings: Arc::clone(&services.net.settings),
        proxy: Arc::clone(&services.net.proxy),
    }))
}

/// A tool error caused by the host's outgoing-request policy: the policy's own words decide the
/// kind (`permission_denied` for a refusal, `timeout` for a request stopped at its deadline), so
/// a guest cannot claim either without the host having refused or stopped something.
fn net_failure(net: &NetOutcome, kind: &str, message: &str) -> Option<Failure> {
    if let Some(reason) = net.refused.first() {
        return Some(Failure {
            kind: ErrorKind::PermissionDenied,
            message: format!(
                "the request was refused by janua's network policy: {reason} (the tool said: {kind}: {message})"
            ),
            tool_error_kind: Some(kind.to_owned()),
        });
    }
    net.timed_out.then(|| Failure {
        kind: ErrorKind::Timeout,
        message: format!("{kind}: {message}"),
        tool_error_kind: Some(kind.to_owned()),
    })
}

/// Maps a sandbox failure to the stable outcome.
pub(crate) fn failure_from_guest(tool: &str, failure: GuestFailure) -> Failure {
    match failure {
        GuestFailure::Trap(message) => {
            Failure::new(ErrorKind::ToolFailed, format!("{tool} crashed: {message}"))
        }
        GuestFailure::Timeout(limit) => Failure::new(
            ErrorKind::Timeout,
            format!(
                "{tool} did not finish within {} and was stopped",
                describe_duration(limit)
            ),
        ),
        GuestFailure::Cancelled => {
            Failure::new(ErrorKind::Cancelled, format!("{tool} was cancelled"))
        }
        GuestFailure::ResourceExhausted(message) => Failure::new(
            ErrorKind::ResourceExhausted,
            format!("{tool} was stopped: {message}"),
        ),
        GuestFailure::Setup(message) => Failure::new(
            ErrorKind::Internal,
            format!("cannot set up the sandbox for {tool}: {message}"),
        ),
    }
}

fn describe_duration(duration: Duration) -> String {
    if duration.subsec_millis() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} ms", duration.as_millis())
    }
}
