//! Stage 1: resolve the canonical name (one alias hop) and check the effective registry.

use std::sync::Arc;

use janua_types::ErrorKind;

use super::outcome::{AliasHop, Failure};
use crate::registry::{RegisteredTool, Registry};

/// The registered tool `name` means, and the alias hop taken to get there.
pub(crate) fn resolve(
    registry: &Registry,
    name: &str,
) -> Result<(Arc<RegisteredTool>, Option<AliasHop>), Failure> {
    if let Some(tool) = registry.get(name) {
        return Ok((Arc::clone(tool), None));
    }
    if let Some(target) = registry.aliases().target(name) {
        // One hop only: the target must be a registered tool, never another alias.
        if let Some(tool) = registry.get(target) {
            let hop = AliasHop {
                from: name.to_owned(),
                to: target.to_owned(),
            };
            return Ok((Arc::clone(tool), Some(hop)));
        }
        return Err(Failure::new(
            ErrorKind::UnknownTool,
            format!("{name} is an alias of {target}, which is not available in this session"),
        ));
    }
    let suggestions = registry.close_matches(name);
    let hint = if suggestions.is_empty() {
        let available: Vec<&str> = registry.tools().map(|t| t.spec.name.as_str()).collect();
        if available.is_empty() {
            " No tools are available.".to_owned()
        } else {
            format!(" Available tools: {}.", available.join(", "))
        }
    } else {
        format!(" Did you mean {}?", suggestions.join(" or "))
    };
    Err(Failure::new(
        ErrorKind::UnknownTool,
        format!("No tool named {name:?} is available.{hint}"),
    ))
}
