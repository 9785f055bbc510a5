//! The notebook edit itself, on a parsed `serde_json::Value`: format checks, cell lookup, source
//! splitting, cell-type conversion and serialization. No I/O, so every rule is unit tested natively
//! and `validate` can run the very same edit as a dry run.

use janua_sdk::files;
use serde::Serialize as _;
use serde_json::ser::PrettyFormatter;
use serde_json::{Map, Value, json};

/// Ids listed when a cell is not found.
const MAX_LISTED_IDS: usize = 10;

/// A cell type the model may ask for (`raw` cells can be edited, not created).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CellType {
    Code,
    Markdown,
}

impl CellType {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            CellType::Code => "code",
            CellType::Markdown => "markdown",
        }
    }
}

/// What to do with the cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EditMode {
    Replace,
    Insert,
    Delete,
}

impl EditMode {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            EditMode::Replace => "replace",
            EditMode::Insert => "insert",
            EditMode::Delete => "delete",
        }
    }
}

/// One requested edit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Edit<'a> {
    pub(crate) mode: EditMode,
    pub(crate) cell_id: Option<&'a str>,
    pub(crate) source: &'a str,
    pub(crate) cell_type: Option<CellType>,
}

/// Why an edit cannot apply; each maps to a tool error kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EditError {
    /// The input lacks what its mode needs (`invalid_input`).
    Input(String),
    /// The file is not an nbformat-4 notebook (`invalid_notebook`).
    Notebook(String),
    /// No cell has the given id (`cell_not_found`).
    CellNotFound(String),
}

impl EditError {
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            EditError::Input(_) => "invalid_input",
            EditError::Notebook(_) => "invalid_notebook",
            EditError::CellNotFound(_) => "cell_not_found",
        }
    }

    pub(crate) fn message(&self) -> &str {
        match self {
            EditError::Input(message)
            | EditError::Notebook(message)
            | EditError::CellNotFound(message) => message,
        }
    }
}

/// What an applied edit did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Applied {
    /// The label of the replaced, inserted or deleted cell.
    pub(crate) cell_id: String,
    /// For inserts: the label of the cell the new one follows, `None` at the start.
    pub(crate) after: Option<String>,
    /// The type of that cell (after the edit; for deletes, what it was).
    pub(crate) cell_type: String,
    /// Cells in the notebook after the edit.
    pub(crate) cells: usize,
}

impl Edit<'_> {
    /// Checks what the mode requires of the input, before any file is touched.
    pub(crate) fn check(&self) -> Result<(), EditError> {
        match self.mode {
            EditMode::Insert if self.cell_type.is_none() => Err(EditError::Input(
                "edit_mode insert needs cell_type (code or markdown) for the new cell".to_owned(),
            )),
            EditMode::Replace | EditMode::Delete if self.cell_id.is_none() => {
                Err(EditError::Input(format!(
                    "edit_mode {} needs cell_id: the id of the cell (as Read shows it in \
                     <cell id=\"...\">)",
                    self.mode.as_str()
                )))
            }
            _ => Ok(()),
        }
    }
}

/// Applies `edit` to `notebook` (the parsed file at `path`, which seeds new cell ids).
pub(crate) fn apply(notebook: &mut Value, edit: &Edit, path: &str) -> Result<Applied, EditError> {
    edit.check()?;
    let has_ids = check_format(notebook).map_err(EditError::Notebook)?;
    let Some(cells) = notebook.get_mut("cells").and_then(Value::as_array_mut) else {
        return Err(EditError::Notebook(
            "the notebook has no `cells` array".to_owned(),
        ));
    };
    let target = match edit.cell_id {
        Some(id) => Some(
            find_cell(cells, id).ok_or_else(|| EditError::CellNotFound(not_found(cells, id)))?,
        ),
        None => None,
    };
    match (edit.mode, target) {
        (EditMode::Insert, _) => {
            // check() guarantees a type for inserts; code is only a fallback for the type system.
            let cell_type = edit.cell_type.unwrap_or(CellType::Code);
            let at = target.map_or(0, |index| index + 1);
            let after = target.map(|index| cell_label(&cells[index], index));
            let id = has_ids.then(|| fresh_id(cells, path, at, edit.source));
            let label = id.clone().unwrap_or_else(|| format!("cell-{at}"));
            cells.insert(at, new_cell(cell_type, edit.source, id));
            Ok(Applied {
                cell_id: label,
                after,
                cell_type: cell_type.as_str().to_owned(),
                cells: cells.len(),
            })
        }
        (EditMode::Replace, Some(index)) => {
            let label = cell_label(&cells[index], index);
            let cell = cells[index]
                .as_object_mut()
                .ok_or_else(|| EditError::Notebook(format!("cell {label} is not a JSON object")))?;
            let cell_type = replace_cell(cell, edit.source, edit.cell_type);
            Ok(Applied {
                cell_id: label,
                after: None,
                cell_type,
                cells: cells.len(),
            })
        }
        (EditMode::Delete, Some(index)) => {
            let label = cell_label(&cells[index], index);
            let removed = cells.remove(index);
            Ok(Applied {
                cell_id: label,
                after: None,
                cell_type: type_of(&removed).to_owned(),
                cells: cells.len(),
            })
        }
        // check() guarantees a cell id for replace and delete.
        (EditMode::Replace | EditMode::Delete, None) => Err(EditError::Input(
            "cell_id is required for replace and delete".to_owned(),
        )),
    }
}

/// Checks the notebook is nbformat 4 with a `cells` array; returns whether cells carry ids
/// (nbformat 4.5 and later).
pub(crate) fn check_format(notebook: &Value) -> Result<bool, String> {
    let Some(object) = notebook.as_object() else {
        return Err("the file is JSON but not an object, so not a Jupyter notebook".to_owned());
    };
    match object.get("nbformat").and_then(Value::as_u64) {
        Some(4) => {}
        Some(other) => {
            return Err(format!(
                "the notebook is nbformat {other}; NotebookEdit edits nbformat 4 notebooks only \
                 (convert it with `jupyter nbconvert --to notebook`)"
            ));
        }
        None => {
            return Err(
                "the notebook has no integer `nbformat` field; NotebookEdit edits nbformat 4 \
                 notebooks only"
                    .to_owned(),
            );
        }
    }
    if !object.get("cells").is_some_and(Value::is_array) {
        return Err("the notebook has no `cells` array".to_owned());
    }
    let minor = object
        .get("nbformat_minor")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    Ok(minor >= 5)
}

/// The cell's `id` when it has a string one.
fn id_of(cell: &Value) -> Option<&str> {
    cell.get("id").and_then(Value::as_str)
}

/// The label Read shows for cell `index`: its id, or `cell-N` when it has none.
pub(crate) fn cell_label(cell: &Value, index: usize) -> String {
    id_of(cell).map_or_else(|| format!("cell-{index}"), str::to_owned)
}

/// The index of the cell whose `id` is `id`, else of the cell `cell-N` names. Real ids win, so a
/// cell literally named `cell-3` is found by its name.
pub(crate) fn find_cell(cells: &[Value], id: &str) -> Option<usize> {
    cells
        .iter()
        .position(|cell| id_of(cell) == Some(id))
        .or_else(|| parse_index(id).filter(|&index| index < cells.len()))
}

/// `N` of `cell-N` (digits only).
fn parse_index(id: &str) -> Option<usize> {
    let digits = id.strip_prefix("cell-")?;
    if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The message for an unknown cell id, listing up to [`MAX_LISTED_IDS`] valid ones.
pub(crate) fn not_found(cells: &[Value], id: &str) -> String {
    if cells.is_empty() {
        return format!(
            "no cell has id {id:?}: the notebook has no cells; insert one with edit_mode insert \
             and no cell_id"
        );
    }
    let listed: Vec<String> = cells
        .iter()
        .enumerate()
        .take(MAX_LISTED_IDS)
        .map(|(index, cell)| cell_label(cell, index))
        .collect();
    let more = if cells.len() > MAX_LISTED_IDS {
        format!(", … ({} cells in all)", cells.len())
    } else {
        String::new()
    };
    format!(
        "no cell has id {id:?}; valid ids: {}{more}. Read the notebook to see its cells",
        listed.join(", ")
    )
}

/// The cell's type, or `unknown`.
fn type_of(cell: &Value) -> &str {
    cell.get("cell_type")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
}

/// `source` as nbformat stores it: a list of lines, each keeping its `\n` (so only the last may
/// lack one), as Jupyter writes it.
pub(crate) fn split_source(source: &str) -> Value {
    Value::Array(
        source
            .split_inclusive('\n')
            .map(|line| Value::String(line.to_owned()))
            .collect(),
    )
}

/// Replaces the cell's source, converting it to `cell_type` when that differs; returns the type
/// it ends with. A code cell's outputs and execution count describe the old source, so they go.
pub(crate) fn replace_cell(
    cell: &mut Map<String, Value>,
    source: &str,
    cell_type: Option<CellType>,
) -> String {
    cell.insert("source".to_owned(), split_source(source));
    if let Some(cell_type) = cell_type
        && cell.get("cell_type").and_then(Value::as_str) != Some(cell_type.as_str())
    {
        convert(cell, cell_type);
    }
    let current = cell
        .get("cell_type")
        .and_then(Value::as_str)
        .unwrap_or("unknown")
        .to_owned();
    if current == "code" {
        cell.insert("outputs".to_owned(), json!([]));
        cell.insert("execution_count".to_owned(), Value::Null);
    }
    current
}

/// Makes `cell` a `cell_type` cell with the fields nbformat requires of it: code cells need
/// `outputs` and `execution_count` and may not have `attachments`; the others may not have the
/// first two.
pub(crate) fn convert(cell: &mut Map<String, Value>, cell_type: CellType) {
    cell.insert(
        "cell_type".to_owned(),
        Value::String(cell_type.as_str().to_owned()),
    );
    match cell_type {
        CellType::Code => {
            cell.remove("attachments");
            cell.insert("outputs".to_owned(), json!([]));
            cell.insert("execution_count".to_owned(), Value::Null);
        }
        CellType::Markdown => {
            cell.remove("outputs");
            cell.remove("execution_count");
        }
    }
}

/// A new cell, its keys in the sorted order Jupyter writes.
pub(crate) fn new_cell(cell_type: CellType, source: &str, id: Option<String>) -> Value {
    let mut cell = Map::new();
    cell.insert(
        "cell_type".to_owned(),
        Value::String(cell_type.as_str().to_owned()),
    );
    if cell_type == CellType::Code {
        cell.insert("execution_count".to_owned(), Value::Null);
    }
    if let Some(id) = id {
        cell.insert("id".to_owned(), Value::String(id));
    }
    cell.insert("metadata".to_owned(), json!({}));
    if cell_type == CellType::Code {
        cell.insert("outputs".to_owned(), json!([]));
    }
    cell.insert("source".to_owned(), split_source(source));
    Value::Object(cell)
}

/// A new cell id: 8 lowercase hex characters, unique in `cells`. Derived from the path, position
/// and source, so the same edit gives the same id (tests can rely on it) while different cells
/// almost never collide; a collision just tries the next seed.
pub(crate) fn fresh_id(cells: &[Value], path: &str, index: usize, source: &str) -> String {
    let mut attempt = 0u64;
    loop {
        let seed = format!("{path}\0{index}\0{attempt}\0{source}");
        let digest = files::digest(seed.as_bytes());
        let id = digest.get(..8).unwrap_or(&digest);
        if !cells.iter().any(|cell| id_of(cell) == Some(id)) {
            return id.to_owned();
        }
        attempt += 1;
    }
}

/// The notebook as Jupyter writes it: one-space indentation and a trailing newline.
pub(crate) fn serialize(notebook: &Value) -> Result<Vec<u8>, serde_json::Error> {
    let mut out = Vec::new();
    let mut serializer =
        serde_json::Serializer::with_formatter(&mut out, PrettyFormatter::with_indent(b" "));
    notebook.serialize(&mut serializer)?;
    out.push(b'\n');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notebook(minor: u64, cells: Value) -> Value {
        json!({
            "cells": cells,
            "metadata": {"kernelspec": {"name": "python3"}},
            "nbformat": 4,
            "nbformat_minor": minor,
        })
    }

    fn three_cells() -> Value {
        notebook(
            5,
            json!([
                {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title"]},
                {"cell_type": "code", "execution_count": 3, "id": "calc", "metadata": {"tags": []},
                 "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}],
                 "source": ["x = 1\n", "print(x)"]},
                {"cell_type": "raw", "id": "cell-0", "metadata": {}, "source": "raw"},
            ]),
        )
    }

    fn edit<'a>(
        mode: EditMode,
        cell_id: Option<&'a str>,
        source: &'a str,
        cell_type: Option<CellType>,
    ) -> Edit<'a> {
        Edit {
            mode,
            cell_id,
            source,
            cell_type,
        }
    }

    #[test]
    fn splits_source_into_nbformat_lines() {
        let cases: &[(&str, Value)] = &[
            ("", json!([])),
            ("one", json!(["one"])),
            ("a\nb", json!(["a\n", "b"])),
            ("a\nb\n", json!(["a\n", "b\n"])),
            ("\n\n", json!(["\n", "\n"])),
            ("crlf\r\nx", json!(["crlf\r\n", "x"])),
        ];
        for (source, expected) in cases {
            assert_eq!(split_source(source), *expected, "{source:?}");
        }
    }

    #[test]
    fn finds_cells_by_id_then_index_form() {
        let Value::Array(cells) = three_cells()["cells"].clone() else {
            panic!("cells is an array");
        };
        let cases = [
            ("intro", Some(0)),
            ("calc", Some(1)),
            // A real id beats the index form.
            ("cell-0", Some(2)),
            ("cell-1", Some(1)),
            ("cell-3", None),
            ("cell-", None),
            ("cell-+1", None),
            ("cell-x", None),
            ("missing", None),
        ];
        for (id, expected) in cases {
            assert_eq!(find_cell(&cells, id), expected, "{id}");
        }
    }

    #[test]
    fn not_found_lists_at_most_ten_ids() {
        let many: Vec<Value> = (0..12)
            .map(|n| json!({"cell_type": "code", "id": format!("id{n}")}))
            .collect();
        let cases = [
            (
                vec![json!({"id": "a"}), json!({})],
                "no cell has id \"zz\"; valid ids: a, cell-1. Read the notebook to see its cells",
            ),
            (
                many,
                "no cell has id \"zz\"; valid ids: id0, id1, id2, id3, id4, id5, id6, id7, id8, \
                 id9, … (12 cells in all). Read the notebook to see its cells",
            ),
            (
                Vec::new(),
                "no cell has id \"zz\": the notebook has no cells; insert one with edit_mode \
                 insert and no cell_id",
            ),
        ];
        for (cells, expected) in cases {
            assert_eq!(not_found(&cells, "zz"), expected);
        }
    }

    #[test]
    fn checks_the_format() {
        let cases = [
            (
                json!({"nbformat": 4, "nbformat_minor": 5, "cells": []}),
                Ok(true),
            ),
            (
                json!({"nbformat": 4, "nbformat_minor": 4, "cells": []}),
                Ok(false),
            ),
            (json!({"nbformat": 4, "cells": []}), Ok(false)),
            (json!({"nbformat": 3, "worksheets": []}), Err("nbformat 3")),
            (json!({"cells": []}), Err("no integer `nbformat`")),
            (json!({"nbformat": 4, "cells": {}}), Err("no `cells` array")),
            (json!([1, 2]), Err("not an object")),
        ];
        for (notebook, expected) in cases {
            match (check_format(&notebook), expected) {
                (Ok(has_ids), Ok(want)) => assert_eq!(has_ids, want, "{notebook}"),
                (Err(message), Err(want)) => assert!(message.contains(want), "{message}"),
                (got, want) => panic!("{notebook}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn converts_between_cell_types() {
        let code = || {
            json!({"cell_type": "code", "execution_count": 2, "id": "c", "metadata": {},
                   "outputs": [{"output_type": "stream"}], "source": "old"})
        };
        let markdown = || {
            json!({"cell_type": "markdown", "attachments": {"a.png": {}}, "id": "m",
                   "metadata": {}, "source": "old"})
        };
        let cases = [
            // Replacing code clears stale outputs, keeping key order.
            (
                code(),
                None,
                json!({"cell_type": "code", "execution_count": null, "id": "c", "metadata": {},
                       "outputs": [], "source": ["new"]}),
            ),
            (
                code(),
                Some(CellType::Markdown),
                json!({"cell_type": "markdown", "id": "c", "metadata": {}, "source": ["new"]}),
            ),
            (
                markdown(),
                Some(CellType::Code),
                json!({"cell_type": "code", "id": "m", "metadata": {}, "source": ["new"],
                       "outputs": [], "execution_count": null}),
            ),
            (
                markdown(),
                Some(CellType::Markdown),
                json!({"cell_type": "markdown", "attachments": {"a.png": {}}, "id": "m",
                       "metadata": {}, "source": ["new"]}),
            ),
        ];
        for (cell, cell_type, expected) in cases {
            let Value::Object(mut cell) = cell else {
                panic!("test cells are objects");
            };
            replace_cell(&mut cell, "new", cell_type);
            let got = Value::Object(cell);
            // Compare the text too: the serialized form is what lands in the file.
            assert_eq!(got.to_string(), expected.to_string());
        }
    }

    #[test]
    fn applies_replace_insert_and_delete() {
        struct Case {
            edit: Edit<'static>,
            applied: Result<(&'static str, Option<&'static str>, &'static str), &'static str>,
            ids: &'static [&'static str],
        }
        let cases = [
            Case {
                edit: edit(EditMode::Replace, Some("calc"), "y = 2", None),
                applied: Ok(("calc", None, "code")),
                ids: &["intro", "calc", "cell-0"],
            },
            Case {
                edit: edit(
                    EditMode::Replace,
                    Some("cell-1"),
                    "# x",
                    Some(CellType::Markdown),
                ),
                applied: Ok(("calc", None, "markdown")),
                ids: &["intro", "calc", "cell-0"],
            },
            Case {
                edit: edit(EditMode::Insert, None, "import os", Some(CellType::Code)),
                applied: Ok(("NEW", None, "code")),
                ids: &["NEW", "intro", "calc", "cell-0"],
            },
            Case {
                edit: edit(
                    EditMode::Insert,
                    Some("calc"),
                    "text",
                    Some(CellType::Markdown),
                ),
                applied: Ok(("NEW", Some("calc"), "markdown")),
                ids: &["intro", "calc", "NEW", "cell-0"],
            },
            Case {
                edit: edit(EditMode::Delete, Some("intro"), "", None),
                applied: Ok(("intro", None, "markdown")),
                ids: &["calc", "cell-0"],
            },
            Case {
                edit: edit(EditMode::Insert, Some("calc"), "x", None),
                applied: Err("invalid_input"),
                ids: &["intro", "calc", "cell-0"],
            },
            Case {
                edit: edit(EditMode::Replace, None, "x", None),
                applied: Err("invalid_input"),
                ids: &["intro", "calc", "cell-0"],
            },
            Case {
                edit: edit(EditMode::Delete, Some("gone"), "", None),
                applied: Err("cell_not_found"),
                ids: &["intro", "calc", "cell-0"],
            },
        ];
        for case in cases {
            let mut notebook = three_cells();
            let result = apply(&mut notebook, &case.edit, "/w/n.ipynb");
            let new_id = match (&result, case.applied) {
                (Ok(applied), Ok((cell_id, after, cell_type))) => {
                    if cell_id != "NEW" {
                        assert_eq!(applied.cell_id, cell_id, "{:?}", case.edit);
                    }
                    assert_eq!(applied.after.as_deref(), after, "{:?}", case.edit);
                    assert_eq!(applied.cell_type, cell_type, "{:?}", case.edit);
                    assert_eq!(applied.cells, case.ids.len(), "{:?}", case.edit);
                    applied.cell_id.clone()
                }
                (Err(error), Err(kind)) => {
                    assert_eq!(error.kind(), kind, "{:?}", case.edit);
                    String::new()
                }
                (got, _) => panic!("{:?}: got {got:?}", case.edit),
            };
            let ids: Vec<String> = notebook["cells"]
                .as_array()
                .map(|cells| {
                    cells
                        .iter()
                        .enumerate()
                        .map(|(index, cell)| cell_label(cell, index))
                        .collect()
                })
                .unwrap_or_default();
            let expected: Vec<String> = case
                .ids
                .iter()
                .map(|id| {
                    if *id == "NEW" {
                        new_id.clone()
                    } else {
                        (*id).to_owned()
                    }
                })
                .collect();
            assert_eq!(ids, expected, "{:?}", case.edit);
        }
    }

    #[test]
    fn inserted_cells_get_fresh_ids_only_from_nbformat_4_5() {
        let mut modern = three_cells();
        let applied = apply(
            &mut modern,
            &edit(
                EditMode::Insert,
                Some("intro"),
                "a\nb",
                Some(CellType::Code),
            ),
            "/w/n.ipynb",
        )
        .expect("insert applies");
        assert_eq!(applied.cell_id.len(), 8);
        assert!(
            applied
                .cell_id
                .bytes()
                .all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte)),
            "{}",
            applied.cell_id
        );
        assert_eq!(
            modern["cells"][1].to_string(),
            json!({"cell_type": "code", "execution_count": null, "id": applied.cell_id,
                   "metadata": {}, "outputs": [], "source": ["a\n", "b"]})
            .to_string()
        );

        let mut old = notebook(
            4,
            json!([{"cell_type": "markdown", "metadata": {}, "source": []}]),
        );
        let applied = apply(
            &mut old,
            &edit(
                EditMode::Insert,
                Some("cell-0"),
                "t",
                Some(CellType::Markdown),
            ),
            "/w/n.ipynb",
        )
        .expect("insert applies");
        assert_eq!(applied.cell_id, "cell-1");
        assert_eq!(applied.after.as_deref(), Some("cell-0"));
        assert_eq!(
            old["cells"][1],
            json!({"cell_type": "markdown", "metadata": {}, "source": ["t"]})
        );
    }

    #[test]
    fn fresh_ids_avoid_existing_ones() {
        let first = fresh_id(&[], "/w/n.ipynb", 0, "x");
        let taken = vec![json!({"id": first.clone()})];
        let second = fresh_id(&taken, "/w/n.ipynb", 0, "x");
        assert_ne!(first, second);
        assert_eq!(second.len(), 8);
    }

    #[test]
    fn serializes_like_jupyter() {
        let notebook = json!({"cells": [{"cell_type": "markdown", "source": ["é\n", "b"]}],
                              "metadata": {}, "nbformat": 4, "nbformat_minor": 5});
        let text = String::from_utf8(serialize(&notebook).expect("serializes"))
            .expect("serde_json writes UTF-8");
        assert_eq!(
            text,
            "{\n \"cells\": [\n  {\n   \"cell_type\": \"markdown\",\n   \"source\": [\n    \
             \"é\\n\",\n    \"b\"\n   ]\n  }\n ],\n \"metadata\": {},\n \"nbformat\": 4,\n \
             \"nbformat_minor\": 5\n}\n"
        );
    }

    #[test]
    fn keys_come_out_sorted_as_nbformat_writes_them() {
        let text = r#"{"nbformat": 4, "nbformat_minor": 5, "metadata": {"z": 1, "a": 2},
                       "cells": [{"source": "s", "metadata": {}, "id": "k", "cell_type": "markdown"}]}"#;
        let mut notebook: Value = serde_json::from_str(text).expect("test notebook parses");
        apply(
            &mut notebook,
            &edit(EditMode::Replace, Some("k"), "t", None),
            "/w/n.ipynb",
        )
        .expect("replace applies");
        let keys: Vec<&String> = notebook
            .as_object()
            .map(|object| object.keys().collect())
            .unwrap_or_default();
        assert_eq!(keys, ["cells", "metadata", "nbformat", "nbformat_minor"]);
        assert_eq!(
            notebook["cells"][0].to_string(),
            r#"{"cell_type":"markdown","id":"k","metadata":{},"source":["t"]}"#
        );
        assert_eq!(notebook["metadata"].to_string(), r#"{"a":2,"z":1}"#);
    }
}
