//! The default `NotebookEdit` tool: replaces, inserts or deletes one cell of a Jupyter notebook
//! (nbformat 4) the model has read.
//!
//! Cells are named as Read shows them: by their `id`, or `cell-N` (0-based index) in notebooks
//! older than nbformat 4.5, whose cells have no ids. The notebook is rewritten the way nbformat
//! writes it (sorted keys, one-space indentation, trailing newline), so a notebook saved by Jupyter
//! shows only the edit in a diff.
//!
//! Every check runs in `validate` too, as a dry run of the same edit, so the user is never asked to
//! approve an edit that cannot apply; and again in `call`, because the file may change while the
//! user decides.

// Natively only the unit tests use the crate; the Tool impl is reached through the wasm export.
#![cfg_attr(not(target_family = "wasm"), allow(dead_code))]

mod edit;

use janua_sdk::{CapabilityClass, Context, Output, Tool, ToolError, files};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::edit::{Applied, Edit, EditMode};

/// Notebooks larger than this are refused: the file, its parsed form and the new file are all held
/// in memory. Read refuses the same size, so no larger notebook can pass read-before-edit anyway.
const MAX_NOTEBOOK_BYTES: u64 = 100 << 20;

/// Input of `NotebookEdit`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct NotebookEditInput {
    /// Path of the Jupyter notebook (.ipynb) to edit: absolute, or relative to the workspace.
    notebook_path: String,
    /// The id of the cell to edit, as Read shows it in `<cell id="...">` (`cell-N` for cells
    /// without an id, N counting from 0). When inserting, the new cell goes after this cell, or at
    /// the start of the notebook if cell_id is not given.
    cell_id: Option<String>,
    /// The new source of the cell (ignored when deleting).
    new_source: String,
    /// The type of the cell (code or markdown). If not given, a replaced cell keeps its type.
    /// Required when inserting.
    cell_type: Option<CellTypeInput>,
    /// The edit to make: replace (the default), insert or delete.
    edit_mode: Option<EditModeInput>,
}

/// `cell_type` values.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
enum CellTypeInput {
    Code,
    Markdown,
}

/// `edit_mode` values.
#[derive(Debug, Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
enum EditModeInput {
    Replace,
    Insert,
    Delete,
}

impl NotebookEditInput {
    fn edit(&self) -> Edit<'_> {
        Edit {
            mode: match self.edit_mode {
                None | Some(EditModeInput::Replace) => EditMode::Replace,
                Some(EditModeInput::Insert) => EditMode::Insert,
                Some(EditModeInput::Delete) => EditMode::Delete,
            },
            cell_id: self.cell_id.as_deref(),
            source: &self.new_source,
            cell_type: self.cell_type.map(|cell_type| match cell_type {
                CellTypeInput::Code => edit::CellType::Code,
                CellTypeInput::Markdown => edit::CellType::Markdown,
            }),
        }
    }
}

struct NotebookEdit;

impl Tool for NotebookEdit {
    type Input = NotebookEditInput;
    const NAME: &'static str = "NotebookEdit";
    const DESCRIPTION: &'static str = "Edits one cell of a Jupyter notebook (.ipynb file): \
        replaces its source (edit_mode replace, the default), inserts a new cell after it \
        (edit_mode insert; without cell_id the new cell goes first; cell_type is required), or \
        deletes it (edit_mode delete). Name cells by the id Read shows in <cell id=\"...\">. \
        Read the notebook first: the edit is refused if it was not read in this session or \
        changed since. Replacing a code cell clears its outputs and execution count.";
    const CLASS: CapabilityClass = CapabilityClass::Write;
    const READ_ONLY: bool = false;
    const CONCURRENCY_SAFE: bool = false;
    const RULE_FIELD: Option<&'static str> = Some("notebook_path");

    fn call(input: NotebookEditInput, ctx: &Context) -> Result<Output, ToolError> {
        let path = ctx.resolve_path(&input.notebook_path);
        check_extension(&path)?;
        let edit = input.edit();
        let bytes = load(&path)?;
        files::check_read_before_edit(&path, &bytes)?;
        let mut notebook = parse(&bytes, &path)?;
        drop(bytes);
        let applied = edit::apply(&mut notebook, &edit, &path)
            .map_err(|error| ToolError::new(error.kind(), error.message()))?;
        let new_bytes = edit::serialize(&notebook).map_err(|error| {
            ToolError::new("io_error", format!("cannot serialize {path}: {error}"))
        })?;
        drop(notebook);
        files::write_atomically(&path, &new_bytes)
            .map_err(|error| files::io_error(&path, "write", &error))?;
        files::record_read(&path, &files::digest(&new_bytes));
        Ok(output(&path, edit.mode, &applied))
    }
}

impl janua_sdk::Validate for NotebookEdit {
    fn validate(input: &NotebookEditInput, ctx: &Context) -> Result<(), String> {
        // The same steps as call, short of writing: each failure becomes validation_failed.
        let path = ctx.resolve_path(&input.notebook_path);
        check_extension(&path).map_err(|error| error.message)?;
        let edit = input.edit();
        edit.check().map_err(|error| error.message().to_owned())?;
        let bytes = load(&path).map_err(|error| error.message)?;
        files::check_read_before_edit(&path, &bytes).map_err(|error| error.message)?;
        let mut notebook = parse(&bytes, &path).map_err(|error| error.message)?;
        drop(bytes);
        edit::apply(&mut notebook, &edit, &path)
            .map(drop)
            .map_err(|error| error.message().to_owned())
    }
}

// Only wasm builds export the component: natively (unit tests) the exported symbol names, which
// contain `:`, cannot go into a linker version script, so the native cdylib would not link.
#[cfg(target_family = "wasm")]
janua_sdk::export!(NotebookEdit);

/// NotebookEdit edits notebooks only; other files go through Edit.
fn check_extension(path: &str) -> Result<(), ToolError> {
    let is_notebook = path
        .rsplit_once('.')
        .is_some_and(|(_, extension)| extension.eq_ignore_ascii_case("ipynb"));
    if is_notebook {
        Ok(())
    } else {
        Err(ToolError::new(
            "not_a_notebook",
            format!("{path} is not a Jupyter notebook (.ipynb); use Edit for other files"),
        ))
    }
}

/// Reads the notebook's bytes, refusing what is not a regular file or is too large.
fn load(path: &str) -> Result<Vec<u8>, ToolError> {
    // Look before reading: reading a FIFO would block.
    let Some(metadata) = files::editable(path, "NotebookEdit")? else {
        return Err(ToolError::new(
            "not_found",
            format!(
                "{path} does not exist or is outside the directories this tool may use; \
                 NotebookEdit edits existing notebooks"
            ),
        ));
    };
    if metadata.len() > MAX_NOTEBOOK_BYTES {
        return Err(ToolError::new(
            "file_too_large",
            format!(
                "{path} is {} bytes, over the {MAX_NOTEBOOK_BYTES}-byte (100 MiB) limit for \
                 notebooks",
                metadata.len()
            ),
        ));
    }
    std::fs::read(path).map_err(|error| files::io_error(path, "read", &error))
}

fn parse(bytes: &[u8], path: &str) -> Result<Value, ToolError> {
    serde_json::from_slice(bytes).map_err(|error| {
        ToolError::new(
            "invalid_notebook",
            format!("{path} is not valid JSON, so not a Jupyter notebook: {error}"),
        )
    })
}

/// The result text and structured result.
fn output(path: &str, mode: EditMode, applied: &Applied) -> Output {
    Output::text(summary(path, mode, applied)).with_structured(json!({
        "notebookPath": path,
        "cellId": applied.cell_id,
        "editMode": mode.as_str(),
        "cellType": applied.cell_type,
        "cells": applied.cells,
    }))
}

fn summary(path: &str, mode: EditMode, applied: &Applied) -> String {
    let Applied {
        cell_id,
        cell_type,
        cells,
        ..
    } = applied;
    let action = match mode {
        EditMode::Replace => format!("Replaced cell {cell_id} ({cell_type}) in {path}"),
        EditMode::Insert => match &applied.after {
            Some(after) => format!("Inserted {cell_type} cell {cell_id} after {after} in {path}"),
            None => format!("Inserted {cell_type} cell {cell_id} at the start of {path}"),
        },
        EditMode::Delete => format!("Deleted cell {cell_id} from {path}"),
    };
    let plural = if *cells == 1 { "" } else { "s" };
    format!("{action}; the notebook now has {cells} cell{plural}.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn applied(cell_id: &str, after: Option<&str>, cell_type: &str, cells: usize) -> Applied {
        Applied {
            cell_id: cell_id.to_owned(),
            after: after.map(str::to_owned),
            cell_type: cell_type.to_owned(),
            cells,
        }
    }

    #[test]
    fn summarizes_each_mode() {
        let cases = [
            (
                EditMode::Replace,
                applied("a1", None, "code", 3),
                "Replaced cell a1 (code) in /w/n.ipynb; the notebook now has 3 cells.",
            ),
            (
                EditMode::Insert,
                applied("0f3a9c1e", Some("a1"), "markdown", 4),
                "Inserted markdown cell 0f3a9c1e after a1 in /w/n.ipynb; the notebook now has 4 \
                 cells.",
            ),
            (
                EditMode::Insert,
                applied("cell-0", None, "code", 1),
                "Inserted code cell cell-0 at the start of /w/n.ipynb; the notebook now has 1 \
                 cell.",
            ),
            (
                EditMode::Delete,
                applied("a1", None, "code", 0),
                "Deleted cell a1 from /w/n.ipynb; the notebook now has 0 cells.",
            ),
        ];
        for (mode, applied, expected) in cases {
            assert_eq!(summary("/w/n.ipynb", mode, &applied), expected);
        }
    }

    #[test]
    fn maps_input_to_edits() {
        let cases = [
            (
                json!({"notebook_path": "n.ipynb", "new_source": "x", "cell_id": "a"}),
                EditMode::Replace,
                None,
            ),
            (
                json!({"notebook_path": "n.ipynb", "new_source": "x", "edit_mode": "insert",
                       "cell_type": "markdown"}),
                EditMode::Insert,
                Some(edit::CellType::Markdown),
            ),
            (
                json!({"notebook_path": "n.ipynb", "new_source": "", "edit_mode": "delete",
                       "cell_id": "a", "cell_type": "code"}),
                EditMode::Delete,
                Some(edit::CellType::Code),
            ),
        ];
        for (input, mode, cell_type) in cases {
            let input: NotebookEditInput =
                serde_json::from_value(input.clone()).expect("valid input");
            let edit = input.edit();
            assert_eq!((edit.mode, edit.cell_type), (mode, cell_type));
        }
        for bad in [
            json!({"notebook_path": "n.ipynb", "new_source": "x", "edit_mode": "append"}),
            json!({"notebook_path": "n.ipynb", "new_source": "x", "cell_type": "raw"}),
            json!({"notebook_path": "n.ipynb", "new_source": "x", "cell_number": 1}),
            json!({"notebook_path": "n.ipynb"}),
        ] {
            assert!(
                serde_json::from_value::<NotebookEditInput>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn schema_inlines_the_enums() {
        let schema = serde_json::to_value(schemars::schema_for!(NotebookEditInput))
            .expect("schema serializes");
        let properties = &schema["properties"];
        assert_eq!(
            schema["required"],
            json!(["notebook_path", "new_source"]),
            "{schema}"
        );
        assert_eq!(schema["additionalProperties"], json!(false), "{schema}");
        assert!(schema.get("$defs").is_none(), "{schema}");
        for (field, values) in [
            ("cell_type", json!(["code", "markdown"])),
            ("edit_mode", json!(["replace", "insert", "delete"])),
        ] {
            let text = properties[field].to_string();
            for value in values.as_array().into_iter().flatten() {
                assert!(text.contains(&value.to_string()), "{field}: {text}");
            }
        }
    }

    #[test]
    fn only_ipynb_files_are_notebooks() {
        for (path, ok) in [
            ("/w/a.ipynb", true),
            ("/w/a.IPYNB", true),
            ("/w/a.py", false),
            ("/w/ipynb", false),
        ] {
            assert_eq!(check_extension(path).is_ok(), ok, "{path}");
        }
    }
}
