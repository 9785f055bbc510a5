//! The default `WebFetch` tool: fetches a URL through `wasi:http` and returns the page, HTML
//! converted to Markdown inside the guest.
//!
//! The component has no network of its own: every request (each redirect hop is a new one) goes
//! through the host's outgoing-request policy, which checks the scheme, the component's net grant,
//! the permission rules and the addresses the host resolves, caps the response size and the time
//! (see the host's `sandbox/http.rs`). Same-host redirects are followed here, at most
//! [`MAX_REDIRECTS`]; a redirect to another host is not followed but reported.
//!
//! There is no model in janua, so `prompt` is not applied to the page: it is echoed as context
//! above the converted page, and the host's output budget bounds what the model sees.

// Native builds exist only for unit tests and do not export the component (see `export!` below),
// so the network half of the tool is unused there; the wasm build still checks for dead code.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

#[cfg(target_arch = "wasm32")]
mod fetch;
mod page;

use janua_sdk::{CapabilityClass, Context, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

/// Redirects followed (same host only) before the tool gives up.
pub const MAX_REDIRECTS: usize = 10;
/// Longest URL accepted, in bytes.
const MAX_URL_BYTES: usize = 8192;
/// Longest prompt echoed, in characters.
const MAX_PROMPT_CHARS: usize = 4000;

/// Input of `WebFetch`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct FetchInput {
    /// The URL to fetch: `http://` or `https://`.
    url: String,
    /// What to look for in the page. Echoed above the page as context: janua runs no model.
    prompt: String,
}

struct WebFetch;

impl Tool for WebFetch {
    type Input = FetchInput;
    const NAME: &'static str = "WebFetch";
    const DESCRIPTION: &'static str = "Fetches a URL (http or https) and returns its content: HTML \
        converted to Markdown, other text as is. janua runs no model, so `prompt` is not applied \
        to the page: it is echoed above the page as context, and long pages are cut to the output \
        budget (the full text is saved where the result says). Redirects on the same host are \
        followed; a redirect to another host is not followed, and the result names where it \
        points (fetch that URL if it should be read). Each host must be allowed by the permission \
        rules; private and loopback addresses are refused unless the operator allows them. \
        Responses over 10 MiB are cut; requests time out after 30 s.";
    const CLASS: CapabilityClass = CapabilityClass::Network;
    const READ_ONLY: bool = true;
    const CONCURRENCY_SAFE: bool = true;
    const RULE_FIELD: Option<&'static str> = Some("url");

    fn call(input: FetchInput, _ctx: &Context) -> Result<Output, ToolError> {
        let url = page::parse_url(&input.url)
            .map_err(|message| ToolError::new("invalid_url", message))?;
        let prompt: String = input.prompt.chars().take(MAX_PROMPT_CHARS).collect();
        run(url, &prompt)
    }
}

impl janua_sdk::Validate for WebFetch {
    fn validate(input: &FetchInput, _ctx: &Context) -> Result<(), String> {
        page::parse_url(&input.url).map(|_| ())
    }
}

#[cfg(target_arch = "wasm32")]
fn run(url: url::Url, prompt: &str) -> Result<Output, ToolError> {
    let fetched = fetch::follow(url)?;
    Ok(Output::text(page::render(&fetched, prompt)))
}

#[cfg(not(target_arch = "wasm32"))]
fn run(_url: url::Url, _prompt: &str) -> Result<Output, ToolError> {
    Err(ToolError::new(
        "unsupported",
        "WebFetch fetches only when built as a component",
    ))
}

// Only wasm builds export the component: natively (unit tests) the exported symbol names, which
// contain `:`, cannot go into a linker version script, so the native cdylib would not link.
#[cfg(target_arch = "wasm32")]
janua_sdk::export!(WebFetch);
