//! Hostile guest: `Flood` tries to overwhelm the host through its outputs: a gigantic text, a million
//! content parts, many large images, an image whose media type is a novel, a gigantic error, floods of
//! log and progress calls, huge stdout/stderr, and unbounded recursion.

use janua_sdk::{Content, Context, LogLevel, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;

/// Input of `Flood`.
#[derive(Deserialize, JsonSchema)]
struct FloodInput {
    /// `text`, `parts`, `images`, `media_type`, `error`, `log`, `progress`, `stdio`, `recurse` or `recurse_padded`.
    mode: String,
    /// How many parts, images or host calls.
    count: Option<u64>,
    /// Size in characters or bytes of each.
    size: Option<u64>,
}

struct Flood;

impl Tool for Flood {
    type Input = FloodInput;
    const NAME: &'static str = "Flood";
    const DESCRIPTION: &'static str = "Produces as much output as it can.";
    const READ_ONLY: bool = true;

    fn call(input: FloodInput, _ctx: &Context) -> Result<Output, ToolError> {
        let count = usize::try_from(input.count.unwrap_or(1)).unwrap_or(usize::MAX);
        let size = usize::try_from(input.size.unwrap_or(1)).unwrap_or(usize::MAX);
        match input.mode.as_str() {
            "text" => Ok(Output::text("x".repeat(size))),
            "parts" => Ok(Output {
                content: (0..count).map(|_| Content::Text("y".to_owned())).collect(),
                structured: None,
            }),
            "images" => Ok(Output {
                content: (0..count)
                    .map(|index| Content::Image {
                        media_type: "image/png".to_owned(),
                        data: vec![u8::try_from(index % 251).unwrap_or(0); size],
                    })
                    .collect(),
                structured: None,
            }),
            "media_type" => Ok(Output::text("see the image").with_content(Content::Image {
                media_type: "z".repeat(size),
                data: vec![0x89, b'P', b'N', b'G'],
            })),
            "error" => Err(ToolError::new("k".repeat(size), "m".repeat(size))),
            "log" => {
                let line = "l".repeat(size);
                for _ in 0..count {
                    janua_sdk::log(LogLevel::Error, &line);
                }
                Ok(Output::text("logged"))
            }
            "progress" => {
                let line = "p".repeat(size);
                for _ in 0..count {
                    janua_sdk::progress(&line);
                }
                Ok(Output::text("progressed"))
            }
            "stdio" => {
                use std::io::Write as _;
                let chunk = "o".repeat(64 << 10);
                let mut stdout = std::io::stdout();
                let mut stderr = std::io::stderr();
                for _ in 0..count {
                    let _ = stdout.write_all(chunk.as_bytes());
                    let _ = stderr.write_all(chunk.as_bytes());
                }
                let _ = stderr.write_all(b"STDERR-TAIL-MARKER");
                let _ = stderr.flush();
                panic!("stdio flood done");
            }
            "recurse" => Ok(Output::text(format!("depth {}", recurse(0)))),
            "recurse_padded" => Ok(Output::text(format!("depth {}", recurse_padded(0)))),
            other => Err(ToolError::new("bad_mode", format!("unknown mode {other}"))),
        }
    }
}

/// Recurses until wasmtime's stack guard stops it: scalar locals only, so nothing lands on the
/// shadow stack in linear memory.
fn recurse(depth: u64) -> u64 {
    if depth == u64::MAX {
        return depth;
    }
    recurse(depth.wrapping_add(1)).rotate_left(3) ^ depth
}

/// Recurses with a padded frame, so the shadow stack in linear memory runs out first.
fn recurse_padded(depth: u64) -> u64 {
    if depth == u64::MAX {
        return 0;
    }
    let pad = std::hint::black_box([depth; 32]);
    let deeper = recurse_padded(std::hint::black_box(depth + 1));
    deeper.wrapping_add(pad[usize::try_from(depth % 32).unwrap_or(0)])
}

janua_sdk::export!(Flood);
