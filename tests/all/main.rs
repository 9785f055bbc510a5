//! janua's integration suite: real guests built from `tests/guests/` and `example-tools/`, a real
//! wasmtime engine, real files in temporary directories and the real `janua` binary.

mod architecture;
mod bash;
mod browser;
mod cache;
mod claude_code;
mod claude_hook;
mod cli;
mod command_hooks;
mod delegation;
mod edit;
mod faults;
mod files;
mod grants;
mod hook_plugins;
mod hooks;
mod limits;
mod mcp_client;
mod mcp_hostile;
mod mcp_server;
mod mcp_support;
mod monitors;
mod notebook;
mod parity;
mod permissions;
mod pipeline;
mod plugin_authoring;
mod python_package;
mod read;
mod redteam;
mod registry;
mod sandbox;
mod sandbox_command;
mod search;
mod stream;
mod support;
mod web_fetch;

/// Every test guest must have a test of the same name; a guest without one fails to compile here.
mod guest_coverage {
    macro_rules! assert_tested {
        ($guest:ident, $path:expr) => {
            const _: fn() = crate::tested::$guest;
        };
    }
    janua_test_guests::foreach_guest!(assert_tested);
}

/// The test named after each guest.
mod tested {
    pub(crate) use crate::bash::redteam_process;
    pub(crate) use crate::browser::browser_probe;
    pub(crate) use crate::delegation::delegate_probe;
    pub(crate) use crate::files::files_write_scope;
    pub(crate) use crate::grants::{grants_env, grants_fs_escape};
    pub(crate) use crate::hook_plugins::hooks_scripted;
    pub(crate) use crate::monitors::monitors_scripted;
    pub(crate) use crate::permissions::perm_standins;
    pub(crate) use crate::pipeline::pipeline_echo;
    pub(crate) use crate::redteam::{
        redteam_contract, redteam_fs_tricks, redteam_http, redteam_net, redteam_output_flood,
    };
    pub(crate) use crate::sandbox::{sandbox_hog, sandbox_spin, sandbox_trap};
}
