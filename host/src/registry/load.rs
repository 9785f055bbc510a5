//! Turns a loaded component into registered tools: calls `describe`, checks each spec (name, schema)
//! and compiles its JSON Schema validator once.

use std::sync::Arc;

use janua_types::{CapabilityClass, ToolSpec};

use super::{ComponentEntry, RegisteredTool, RegistryError, ToolSource};
use janua_sandbox::ResolvedGrants;
use janua_sandbox::{
    CallSetup, FileAccess, GuestReply, GuestRequest, Sandbox, WitCapabilityClass, WitToolSpec,
};

/// The component's tools: what `describe` answers (with no grants at all), validated, from the
/// cache when this exact component was described before (`cached`, from [`cached_specs`]), each
/// with its compiled validator.
pub(super) async fn describe(
    sandbox: &Sandbox,
    component: Arc<ComponentEntry>,
    label: &str,
    cached: Option<Vec<ToolSpec>>,
) -> Result<Vec<RegisteredTool>, RegistryError> {
    describe_specs(sandbox, &component, label, cached)
        .await?
        .into_iter()
        .map(|spec| register(spec, &component, label))
        .collect()
}

/// What `describe` answered for the component `digest` before, if the cache holds it.
pub(super) fn cached_specs(sandbox: &Sandbox, digest: &str) -> Option<Vec<ToolSpec>> {
    sandbox
        .cache()
        .description(digest)
        .and_then(|value| serde_json::from_value::<Vec<ToolSpec>>(value).ok())
        .filter(|specs| !specs.is_empty())
}

/// What `describe` answers for `component` (`cached`, when [`cached_specs`] had it), with each
/// read-only claim weighed against the component's grants, without compiling validators (a
/// built-in that is not selected never needs one).
pub(super) async fn describe_specs(
    sandbox: &Sandbox,
    component: &ComponentEntry,
    label: &str,
    cached: Option<Vec<ToolSpec>>,
) -> Result<Vec<ToolSpec>, RegistryError> {
    let digest = &component.loaded.digest;
    let mut specs = match cached {
        Some(specs) => specs,
        None => {
            let specs = run_describe(sandbox, component, label)
                .await
                .map_err(|problem| RegistryError::Describe {
                    label: label.to_owned(),
                    problem,
                })?;
            sandbox
                .cache()
                .store_description(digest, &serde_json::to_value(&specs).unwrap_or_default());
            specs
        }
    };
    for spec in &mut specs {
        // A tool's claim to be read-only is honoured only if its grants cannot write, nor send
        // anything anywhere (a request can carry data out, and the default mode would allow a
        // read-only tool without a rule), nor run programs (a program can write the
        // workspace), except in built-ins, whose code is ours (TaskOutput shares Bash's
        // component).
        spec.read_only &= !component.grants.can_write()
            && component.grants.net.is_empty()
            && (component.grants.process.is_empty()
                || matches!(component.source, ToolSource::BuiltIn));
    }
    Ok(specs)
}

/// `spec` as a tool of `component`, with its JSON Schema validator compiled once.
pub(super) fn register(
    spec: ToolSpec,
    component: &Arc<ComponentEntry>,
    label: &str,
) -> Result<RegisteredTool, RegistryError> {
    let validator =
        jsonschema::validator_for(&spec.input_schema).map_err(|error| RegistryError::Describe {
            label: label.to_owned(),
            problem: DescribeError::InvalidSchema {
                tool: spec.name.clone(),
                reason: error.to_string(),
            },
        })?;
    Ok(RegisteredTool::new(
        spec,
        validator,
        super::Backend::Component(Arc::clone(component)),
    ))
}

/// What is wrong with a component's `describe`: it failed, or a tool it described cannot be
/// registered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DescribeError {
    /// `describe` trapped, timed out or could not start.
    #[error("describe failed: {0}")]
    Failed(String),
    /// The guest answered something other than tool specs.
    #[error("describe returned an unexpected reply")]
    UnexpectedReply,
    /// No tools at all.
    #[error("the component describes no tools")]
    NoTools,
    /// More tools than one component may describe.
    #[error("the component describes {0} tools; at most {MAX_TOOLS_PER_COMPONENT} are accepted")]
    TooManyTools(usize),
    /// The same name twice.
    #[error("tool {0:?} is described twice")]
    DescribedTwice(String),
    /// A name outside `^[a-zA-Z0-9_-]{1,64}$`.
    #[error("tool name {0:?} must match ^[a-zA-Z0-9_-]{{1,64}}$")]
    BadName(String),
    /// A description past the cap.
    #[error(
        "tool {tool}: its description has {chars} characters; at most {MAX_DESCRIPTION_CHARS} are accepted"
    )]
    LongDescription {
        /// The tool.
        tool: String,
        /// Its description's length.
        chars: usize,
    },
    /// An input schema past the cap.
    #[error(
        "tool {tool}: its input schema has {bytes} bytes; at most {MAX_SCHEMA_BYTES} are accepted"
    )]
    LargeSchema {
        /// The tool.
        tool: String,
        /// The schema's length.
        bytes: usize,
    },
    /// An input schema that is not JSON.
    #[error("tool {tool}: input schema is not JSON: {reason}")]
    SchemaNotJson {
        /// The tool.
        tool: String,
        /// The parser's message.
        reason: String,
    },
    /// An input schema that does not describe an object.
    #[error("tool {0}: the input schema must describe an object (\"type\": \"object\")")]
    SchemaNotObject(String),
    /// An input schema the validator cannot compile.
    #[error("tool {tool}: invalid input schema: {reason}")]
    InvalidSchema {
        /// The tool.
        tool: String,
        /// The compiler's message.
        reason: String,
    },
}

/// Most tools one component may describe; more is a broken or hostile plugin, and every tool costs
/// a compiled validator and room in every model request.
const MAX_TOOLS_PER_COMPONENT: usize = 256;
/// Longest tool description, in characters: it is sent with every model request.
const MAX_DESCRIPTION_CHARS: usize = 32 * 1024;
/// Largest input schema, in bytes of its JSON text.
const MAX_SCHEMA_BYTES: usize = 256 * 1024;

/// Runs the component's `describe` and checks each spec.
async fn run_describe(
    sandbox: &Sandbox,
    component: &ComponentEntry,
    label: &str,
) -> Result<Vec<ToolSpec>, DescribeError> {
    let no_grants = ResolvedGrants::default();
    let run = sandbox
        .run(
            &component.loaded,
            CallSetup::new(&no_grants, component.limits, label, &FileAccess::default()),
            GuestRequest::Describe,
        )
        .await;
    let specs = match run.reply {
        Ok(GuestReply::Specs(specs)) => specs,
        Ok(_) => return Err(DescribeError::UnexpectedReply),
        Err(failure) => return Err(DescribeError::Failed(format!("{failure:?}"))),
    };
    if specs.is_empty() {
        return Err(DescribeError::NoTools);
    }
    if specs.len() > MAX_TOOLS_PER_COMPONENT {
        return Err(DescribeError::TooManyTools(specs.len()));
    }
    let mut seen = std::collections::HashSet::new();
    if let Some(twice) = specs.iter().find(|spec| !seen.insert(spec.name.as_str())) {
        return Err(DescribeError::DescribedTwice(twice.name.clone()));
    }
    specs.into_iter().map(convert).collect()
}

fn convert(spec: WitToolSpec) -> Result<ToolSpec, DescribeError> {
    let valid_name = !spec.name.is_empty()
        && spec.name.len() <= 64
        && spec
            .name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if !valid_name {
        return Err(DescribeError::BadName(spec.name));
    }
    let description_chars = spec.description.chars().count();
    if description_chars > MAX_DESCRIPTION_CHARS {
        return Err(DescribeError::LongDescription {
            tool: spec.name,
            chars: description_chars,
        });
    }
    if spec.input_schema.len() > MAX_SCHEMA_BYTES {
        return Err(DescribeError::LargeSchema {
            bytes: spec.input_schema.len(),
            tool: spec.name,
        });
    }
    let input_schema: serde_json::Value =
        serde_json::from_str(&spec.input_schema).map_err(|error| DescribeError::SchemaNotJson {
            tool: spec.name.clone(),
            reason: error.to_string(),
        })?;
    if input_schema.get("type").and_then(|t| t.as_str()) != Some("object") {
        return Err(DescribeError::SchemaNotObject(spec.name));
    }
    let class = match spec.class {
        WitCapabilityClass::Read => CapabilityClass::Read,
        WitCapabilityClass::Write => CapabilityClass::Write,
        WitCapabilityClass::Process => CapabilityClass::Process,
        WitCapabilityClass::Network => CapabilityClass::Network,
        WitCapabilityClass::Mcp => CapabilityClass::Mcp,
        WitCapabilityClass::Agent => CapabilityClass::Agent,
        WitCapabilityClass::External => CapabilityClass::External,
    };
    Ok(ToolSpec {
        name: spec.name,
        description: spec.description,
        input_schema,
        class,
        read_only: spec.read_only,
        concurrency_safe: spec.concurrency_safe,
        rule_field: spec.rule_field,
        validates_input: spec.validates_input,
    })
}
