//! Hostile guest against the plugin contract itself, written on the raw bindings so it can break
//! every promise the SDK keeps.
//!
//! `describe` misbehaves as its baked-in mode says: the bytes after `JANUA-MODE:` in the data
//! segment, which a test patches in the `.wasm` (same length, so nothing else moves) to pick one of
//! `ok______` (one valid tool), `panic___`, `slow____` (never returns), `many____` (10,000 tools),
//! `dup_____` (two tools of one name), `ctrl____` (a name with a control character), `long____` (a
//! 65-character name), `notjson_` (a schema that is not JSON), `notobj__` (a schema of a string),
//! `bigdesc_` (a 10 MB description) or `bigschm_` (a 10 MB schema).
//!
//! The one valid tool, `Contract`, misbehaves in `validate-input` or `call` by its input's `mode`:
//! `panic_validate`, `panic_call`, `bad_utf8_stdout` (invalid UTF-8 on stdout, then a panic),
//! `stdout_gib` (1 GiB to stdout, then success), `result_100mb` (a 100 MB text result), or
//! anything else for a plain `ok`.

use std::io::Write as _;

use janua_sdk::__private::bindings::janua::plugin::types::CapabilityClass;
use janua_sdk::__private::{
    CallContext, ContentRecord, Guest, ToolErrorRecord, ToolOutput, ToolSpec,
};

/// The mode marker; `black_box` keeps the optimizer from folding the default into the code.
static MODE: [u8; 19] = *b"JANUA-MODE:ok______";

fn mode() -> String {
    let bytes = std::hint::black_box(&MODE);
    String::from_utf8_lossy(&bytes["JANUA-MODE:".len()..])
        .trim_end_matches('_')
        .to_owned()
}

const SCHEMA: &str = r#"{"type":"object","properties":{"mode":{"type":"string"}},"required":["mode"],"additionalProperties":false}"#;

fn spec(name: String, description: String, schema: String) -> ToolSpec {
    ToolSpec {
        name,
        description,
        input_schema: schema,
        class: CapabilityClass::Read,
        read_only: true,
        concurrency_safe: true,
        rule_field: None,
        validates_input: true,
    }
}

fn valid() -> ToolSpec {
    spec(
        "Contract".into(),
        "Breaks the contract on request.".into(),
        SCHEMA.into(),
    )
}

fn input_mode(input: &str) -> String {
    serde_json::from_str::<serde_json::Value>(input)
        .ok()
        .and_then(|value| value["mode"].as_str().map(str::to_owned))
        .unwrap_or_default()
}

struct Contract;

impl Guest for Contract {
    fn describe() -> Vec<ToolSpec> {
        match mode().as_str() {
            "panic" => panic!("describe panics on purpose"),
            "slow" => loop {
                std::hint::spin_loop();
            },
            "many" => (0..10_000)
                .map(|n| spec(format!("T{n}"), "one of many".into(), SCHEMA.into()))
                .collect(),
            "dup" => vec![valid(), valid()],
            "ctrl" => vec![spec("Bell\u{7}".into(), "x".into(), SCHEMA.into())],
            "long" => vec![spec("L".repeat(65), "x".into(), SCHEMA.into())],
            "notjson" => vec![spec("NotJson".into(), "x".into(), "{not json".into())],
            "notobj" => vec![spec(
                "NotObj".into(),
                "x".into(),
                r#"{"type":"string"}"#.into(),
            )],
            "bigdesc" => vec![spec("BigDesc".into(), "d".repeat(10 << 20), SCHEMA.into())],
            "bigschm" => {
                let padding = "p".repeat(10 << 20);
                let schema = format!(r#"{{"type":"object","description":"{padding}"}}"#);
                vec![spec("BigSchema".into(), "x".into(), schema)]
            }
            _ => vec![valid()],
        }
    }

    fn validate_input(_tool: String, input: String, _ctx: CallContext) -> Result<(), String> {
        if input_mode(&input) == "panic_validate" {
            panic!("validate-input panics on purpose");
        }
        Ok(())
    }

    fn call(
        _tool: String,
        input: String,
        _ctx: CallContext,
    ) -> Result<ToolOutput, ToolErrorRecord> {
        let text = match input_mode(&input).as_str() {
            "panic_call" => panic!("call panics on purpose"),
            "bad_utf8_stdout" => {
                let mut stdout = std::io::stdout();
                let _ = stdout.write_all(&[0xff, 0xfe, b'\n', 0xc3, 0x28]);
                let _ = stdout.flush();
                panic!("after invalid UTF-8 on stdout");
            }
            "stdout_gib" => {
                let chunk = vec![b'o'; 1 << 20];
                let mut stdout = std::io::stdout();
                for _ in 0..1024 {
                    let _ = stdout.write_all(&chunk);
                }
                "wrote 1 GiB".to_owned()
            }
            "result_100mb" => "r".repeat(100 << 20),
            _ => "ok".to_owned(),
        };
        Ok(ToolOutput {
            content: vec![ContentRecord::Text(text)],
            structured: None,
        })
    }
}

janua_sdk::__private::export_component!(Contract);
