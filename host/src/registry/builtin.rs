//! The built-in tool set: components embedded in the binary at build time, with the grants warden
//! declares for them.

use std::sync::Arc;

use super::{ComponentEntry, RegisteredTool, RegistryError, ToolSource, builtin_limits, load};
use crate::sandbox::Sandbox;
use crate::sandbox::grants::{FsAccess, FsGrant, Grants, NetGrant};
use crate::sandbox::limits::Limits;

include!(concat!(env!("OUT_DIR"), "/embedded_tools.rs"));

/// The grants warden gives the embedded component built from `example-tools/<crate_dir>`.
fn grants_for(crate_dir: &str) -> Grants {
    let workspace = |access| Grants {
        fs: vec![FsGrant::new("${WORKSPACE}", access).expect("valid built-in grant")],
        env: Vec::new(),
        net: Vec::new(),
    };
    match crate_dir {
        // Read, Glob, Grep: the workspace (and additional directories), read-only. No environment.
        "read" | "glob" | "grep" => workspace(FsAccess::Read),
        // Write, Edit, NotebookEdit: read-write, narrowed per call to the directory of the file the
        // decision allowed (see `pipeline/execute.rs`).
        "write" | "edit" | "notebook_edit" => workspace(FsAccess::ReadWrite),
        // WebFetch: no files, no environment; any http or https destination, every request still
        // checked against the permission rules and the private-address policy (`sandbox/http.rs`).
        "web_fetch" => Grants {
            net: ["http://*:*", "https://*:*"]
                .into_iter()
                .map(|pattern| {
                    NetGrant::try_from(pattern.to_owned()).expect("valid built-in grant")
                })
                .collect(),
            ..Grants::default()
        },
        _ => Grants::default(),
    }
}

/// Loads every embedded component and describes its tools.
pub(super) async fn load(
    sandbox: &Sandbox,
    operator_limits: Limits,
) -> Result<Vec<RegisteredTool>, RegistryError> {
    let mut tools = Vec::new();
    for (crate_dir, wasm) in EMBEDDED_COMPONENTS {
        let label = format!("built-in component {crate_dir}");
        let component = ComponentEntry {
            loaded: sandbox.load(wasm, &label)?,
            grants: grants_for(crate_dir),
            limits: builtin_limits(operator_limits),
            source: ToolSource::BuiltIn,
            plugin_data: None,
        };
        tools.extend(load::describe(sandbox, Arc::new(component), &label).await?);
    }
    Ok(tools)
}
