//! Jupyter notebooks rendered as text: every cell with its id, type and index, then the text of its
//! outputs.
//!
//! The notebook is deserialized into a narrow model rather than a `serde_json::Value`: output
//! payloads Read never shows (base64 images, HTML) are skipped while parsing, so a large notebook
//! costs little more memory than its text.

use std::fmt::{self, Write as _};

use serde::Deserialize;
use serde::de::{self, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// Characters kept of one output; the rest is replaced by a marker.
pub(crate) const MAX_OUTPUT_CHARS: usize = 2000;

/// The parts of a notebook Read shows.
#[derive(Debug, Deserialize)]
pub(crate) struct Notebook {
    pub(crate) cells: Vec<Cell>,
}

/// One cell. `id` and `cell_type` are kept as raw values so that an odd notebook (a numeric id) is
/// still shown rather than refused.
#[derive(Debug, Deserialize)]
pub(crate) struct Cell {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    cell_type: Option<Value>,
    #[serde(default)]
    source: Text,
    #[serde(default)]
    outputs: Vec<CellOutput>,
}

/// One output of a code cell.
#[derive(Debug, Deserialize)]
struct CellOutput {
    #[serde(default)]
    output_type: Option<String>,
    /// `stream` outputs.
    #[serde(default)]
    text: Text,
    /// `execute_result` and `display_data` outputs.
    #[serde(default)]
    data: OutputData,
    /// `error` outputs.
    #[serde(default)]
    ename: Option<String>,
    #[serde(default)]
    evalue: Option<String>,
}

/// Multiline text as nbformat stores it: a string, or a list of strings to concatenate.
#[derive(Debug, Default, PartialEq, Eq)]
struct Text(String);

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;

        impl<'de> Visitor<'de> for TextVisitor {
            type Value = Text;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a string or a list of strings")
            }

            fn visit_str<E: de::Error>(self, value: &str) -> Result<Text, E> {
                Ok(Text(value.to_owned()))
            }

            fn visit_string<E: de::Error>(self, value: String) -> Result<Text, E> {
                Ok(Text(value))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Text, E> {
                Ok(Text::default())
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Text, A::Error> {
                let mut text = String::new();
                while let Some(part) = seq.next_element::<String>()? {
                    text.push_str(&part);
                }
                Ok(Text(text))
            }
        }

        deserializer.deserialize_any(TextVisitor)
    }
}

/// The `data` bundle of an output: its `text/plain` form, and the names of the other media types
/// (whose payloads are skipped unparsed).
#[derive(Debug, Default)]
struct OutputData {
    text_plain: Option<String>,
    others: Vec<String>,
}

impl<'de> Deserialize<'de> for OutputData {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct DataVisitor;

        impl<'de> Visitor<'de> for DataVisitor {
            type Value = OutputData;

            fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
                formatter.write_str("a map of media types to data")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OutputData, A::Error> {
                let mut data = OutputData::default();
                while let Some(key) = map.next_key::<String>()? {
                    if key == "text/plain" {
                        data.text_plain = Some(map.next_value::<Text>()?.0);
                    } else {
                        map.next_value::<IgnoredAny>()?;
                        data.others.push(key);
                    }
                }
                Ok(data)
            }
        }

        deserializer.deserialize_map(DataVisitor)
    }
}

/// The label of cell `index`: its `id`, or `cell-N` for cells without one (nbformat < 4.5).
/// NotebookEdit accepts the same form.
fn cell_label(cell: &Cell, index: usize) -> String {
    match &cell.id {
        Some(Value::String(id)) => id.clone(),
        _ => format!("cell-{index}"),
    }
}

/// Renders every cell as `<cell id=".." type=".." index="N">`, its source, its outputs under an
/// `Outputs:` line, and `</cell>`.
pub(crate) fn render(cells: &[Cell]) -> String {
    let mut text = String::new();
    for (index, cell) in cells.iter().enumerate() {
        let cell_type = match &cell.cell_type {
            Some(Value::String(kind)) => kind.as_str(),
            _ => "unknown",
        };
        let _ = writeln!(
            text,
            "<cell id=\"{}\" type=\"{}\" index=\"{index}\">",
            attribute(&cell_label(cell, index)),
            attribute(cell_type)
        );
        push_block(&mut text, &cell.source.0);
        let outputs: Vec<String> = cell.outputs.iter().flat_map(render_output).collect();
        if !outputs.is_empty() {
            text.push_str("Outputs:\n");
            for output in outputs {
                push_block(&mut text, &output);
            }
        }
        text.push_str("</cell>\n");
    }
    text
}

/// The text parts of one output, each capped at [`MAX_OUTPUT_CHARS`].
fn render_output(output: &CellOutput) -> Vec<String> {
    match output.output_type.as_deref() {
        Some("stream") => vec![cap(&output.text.0)],
        Some("execute_result" | "display_data") => {
            let mut parts = Vec::new();
            if let Some(text) = &output.data.text_plain {
                parts.push(cap(text));
            }
            for media_type in &output.data.others {
                // Images are always named so the model knows a figure exists; other rich forms
                // (HTML, JSON) only when no plain-text form stands in for them.
                if media_type.starts_with("image/") || output.data.text_plain.is_none() {
                    parts.push(format!("[{media_type} output omitted]"));
                }
            }
            parts
        }
        Some("error") => {
            let name = output.ename.as_deref().unwrap_or("Error");
            let value = output.evalue.as_deref().unwrap_or("");
            vec![cap(&format!("{name}: {value}"))]
        }
        _ => Vec::new(),
    }
}

/// `text` cut to [`MAX_OUTPUT_CHARS`] characters with a marker saying how much was cut.
fn cap(text: &str) -> String {
    match text.char_indices().nth(MAX_OUTPUT_CHARS) {
        None => text.to_owned(),
        Some((index, _)) => format!(
            "{}… [output cut: showed the first {MAX_OUTPUT_CHARS} of {} characters]",
            &text[..index],
            text.chars().count()
        ),
    }
}

/// Appends `block` so that it ends with exactly the newline it had, or one added.
fn push_block(text: &mut String, block: &str) {
    if block.is_empty() {
        return;
    }
    text.push_str(block);
    if !block.ends_with('\n') {
        text.push('\n');
    }
}

/// Escapes `"`, `&` and `<` so an odd id or type cannot break the cell tag.
fn attribute(value: &str) -> String {
    value
        .replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(json: &str) -> Notebook {
        serde_json::from_str(json).expect("test notebook parses")
    }

    #[test]
    fn renders_cells_sources_and_outputs() {
        let cases = [
            (
                r##"{"cells":[{"cell_type":"markdown","id":"m1","metadata":{},"source":["# Title\n","text"]}]}"##,
                "<cell id=\"m1\" type=\"markdown\" index=\"0\">\n# Title\ntext\n</cell>\n",
            ),
            (
                r#"{"cells":[{"cell_type":"code","source":"x = 1\n","outputs":[]},{"cell_type":"raw","source":[]}]}"#,
                "<cell id=\"cell-0\" type=\"code\" index=\"0\">\nx = 1\n</cell>\n\
                 <cell id=\"cell-1\" type=\"raw\" index=\"1\">\n</cell>\n",
            ),
            (
                r#"{"cells":[{"cell_type":"code","id":"c","source":"print(1)","execution_count":1,"outputs":[
                    {"output_type":"stream","name":"stdout","text":["1\n","2\n"]},
                    {"output_type":"execute_result","execution_count":1,"data":{"text/plain":["3"],"text/html":"<b>3</b>"},"metadata":{}},
                    {"output_type":"display_data","data":{"image/png":"iVBORw0KGgo=","text/plain":"<Figure>"},"metadata":{}},
                    {"output_type":"display_data","data":{"text/html":"<p>x</p>"},"metadata":{}},
                    {"output_type":"error","ename":"ValueError","evalue":"bad","traceback":["\u001b[0m..."]}
                ]}]}"#,
                "<cell id=\"c\" type=\"code\" index=\"0\">\nprint(1)\nOutputs:\n1\n2\n3\n\
                 <Figure>\n[image/png output omitted]\n[text/html output omitted]\n\
                 ValueError: bad\n</cell>\n",
            ),
            (
                r#"{"cells":[{"cell_type":"code","id":"a\"b","source":"","outputs":[]}]}"#,
                "<cell id=\"a&quot;b\" type=\"code\" index=\"0\">\n</cell>\n",
            ),
            (r#"{"cells":[]}"#, ""),
        ];
        for (json, expected) in cases {
            assert_eq!(render(&parse(json).cells), expected, "{json}");
        }
    }

    #[test]
    fn caps_each_output() {
        let long = "y".repeat(MAX_OUTPUT_CHARS + 5);
        let json = format!(
            r#"{{"cells":[{{"cell_type":"code","source":"","outputs":[{{"output_type":"stream","text":"{long}"}}]}}]}}"#
        );
        let text = render(&parse(&json).cells);
        assert!(
            text.contains(&format!(
                "… [output cut: showed the first 2000 of {} characters]",
                MAX_OUTPUT_CHARS + 5
            )),
            "{text}"
        );
        let output = text
            .split_once("Outputs:\n")
            .map_or("", |(_, output)| output);
        assert_eq!(output.matches('y').count(), MAX_OUTPUT_CHARS);
        assert_eq!(cap("short"), "short");
    }

    #[test]
    fn rejects_what_is_not_a_notebook() {
        for json in [
            "{",
            r#"{"nbformat":4}"#,
            r#"{"cells":{}}"#,
            r#"{"cells":[{"source":5}]}"#,
        ] {
            assert!(serde_json::from_str::<Notebook>(json).is_err(), "{json}");
        }
    }
}
