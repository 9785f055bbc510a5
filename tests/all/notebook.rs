//! The built-in NotebookEdit tool: replace, insert and delete leave a valid nbformat-4 notebook,
//! cells are named as Read shows them, and refusals (not read, unknown cell) come before the
//! permission prompt.

use janua::{Dispatch, ErrorKind, PermissionMode, Runtime};
use serde_json::{Value, json};

use crate::support::{Fixture, call, error_text, ok_text};

/// A runtime where write-class tools inside the workspace run without asking.
async fn editing_runtime(fixture: &Fixture) -> Runtime {
    fixture
        .runtime(&[], |config| {
            config.permission_mode = Some(PermissionMode::AcceptEdits);
        })
        .await
}

/// The absolute path of `name` in the workspace, as the tools spell it in messages.
fn shown(fixture: &Fixture, name: &str) -> String {
    fixture.workspace().join(name).display().to_string()
}

/// An nbformat 4.5 notebook with three cells (ids intro, calc, plot), written the way Jupyter
/// writes it (one-space indentation, trailing newline), with a metadata key order that is not
/// sorted so that preserved order is visible.
fn sample_notebook() -> String {
    let text = r##"{
 "metadata": {
  "kernelspec": {"name": "python3", "display_name": "Python 3"},
  "language_info": {"name": "python"}
 },
 "nbformat": 4,
 "nbformat_minor": 5,
 "cells": [
  {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Analysis\n", "Intro text"]},
  {"cell_type": "code", "execution_count": 7, "id": "calc", "metadata": {"tags": ["x"]},
   "outputs": [{"output_type": "stream", "name": "stdout", "text": ["42\n"]}],
   "source": ["x = 6 * 7\n", "print(x)"]},
  {"cell_type": "code", "execution_count": 8, "id": "plot", "metadata": {},
   "outputs": [], "source": "plot(x)"}
 ]
}
"##;
    text.to_owned()
}

/// The notebook at `name`, checked to be nbformat 4 with a `cells` array of objects.
fn parsed(fixture: &Fixture, name: &str) -> Value {
    let bytes = std::fs::read(fixture.workspace().join(name)).expect("read notebook");
    let notebook: Value = serde_json::from_slice(&bytes).expect("the notebook is valid JSON");
    assert_eq!(notebook["nbformat"], 4, "{notebook}");
    let cells = notebook["cells"].as_array().expect("cells is an array");
    for cell in cells {
        let kind = cell["cell_type"].as_str().expect("every cell has a type");
        assert!(cell["metadata"].is_object(), "{cell}");
        assert!(
            cell["source"].is_array() || cell["source"].is_string(),
            "{cell}"
        );
        // nbformat: code cells have outputs and execution_count; the others have neither.
        let code = kind == "code";
        assert_eq!(cell.get("outputs").is_some(), code, "{cell}");
        assert_eq!(cell.get("execution_count").is_some(), code, "{cell}");
    }
    notebook
}

fn ids(notebook: &Value) -> Vec<String> {
    notebook["cells"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|cell| cell["id"].as_str().unwrap_or("<none>").to_owned())
        .collect()
}

fn source(cell: &Value) -> String {
    match &cell["source"] {
        Value::String(text) => text.clone(),
        Value::Array(lines) => lines.iter().filter_map(Value::as_str).collect(),
        other => panic!("source is {other}"),
    }
}

async fn read(runtime: &Runtime, name: &str) -> String {
    ok_text(&call(runtime, "Read", json!({"file_path": name})).await)
}

async fn notebook_edit(runtime: &Runtime, input: Value) -> Dispatch {
    call(runtime, "NotebookEdit", input).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replace_insert_and_delete_keep_a_valid_notebook() {
    let fixture = Fixture::new();
    fixture.write("nb.ipynb", sample_notebook());
    let runtime = editing_runtime(&fixture).await;
    let path = shown(&fixture, "nb.ipynb");
    let listing = read(&runtime, "nb.ipynb").await;
    assert!(
        listing.contains("<cell id=\"calc\" type=\"code\" index=\"1\">"),
        "{listing}"
    );

    // Replace: new source as nbformat lines, stale outputs cleared, other fields kept.
    let replaced = notebook_edit(
        &runtime,
        json!({"notebook_path": "nb.ipynb", "cell_id": "calc", "new_source": "y = 2\nprint(y)\n"}),
    )
    .await;
    let text = ok_text(&replaced);
    assert!(
        text.starts_with(&format!("Replaced cell calc (code) in {path}")),
        "{text}"
    );
    assert!(text.contains("3 cells"), "{text}");
    assert_eq!(
        replaced.outcome.structured,
        Some(
            json!({"notebookPath": path, "cellId": "calc", "editMode": "replace",
                    "cellType": "code", "cells": 3})
        )
    );
    let notebook = parsed(&fixture, "nb.ipynb");
    let calc = &notebook["cells"][1];
    assert_eq!(calc["source"], json!(["y = 2\n", "print(y)\n"]));
    assert_eq!(calc["outputs"], json!([]));
    assert_eq!(calc["execution_count"], Value::Null);
    assert_eq!(calc["metadata"], json!({"tags": ["x"]}));
    // The file is written as nbformat writes it: sorted keys, one-space indent, final newline.
    let written = std::fs::read_to_string(fixture.workspace().join("nb.ipynb")).unwrap();
    assert!(written.starts_with("{\n \"cells\": [\n  {\n"), "{written}");
    assert!(written.ends_with("}\n"), "{written}");
    let at = |key: &str| written.find(&format!("\n \"{key}\": ")).unwrap();
    assert!(
        at("cells") < at("metadata") && at("nbformat") < at("nbformat_minor"),
        "{written}"
    );

    // Insert after a cell: a fresh 8-hex id, no Read needed in between (the edit recorded its
    // own write).
    let inserted = notebook_edit(
        &runtime,
        json!({"notebook_path": "nb.ipynb", "cell_id": "intro", "new_source": "## Method",
               "cell_type": "markdown", "edit_mode": "insert"}),
    )
    .await;
    let text = ok_text(&inserted);
    let structured = inserted.outcome.structured.clone().unwrap();
    let new_id = structured["cellId"].as_str().unwrap().to_owned();
    assert_eq!(new_id.len(), 8, "{new_id}");
    assert!(
        new_id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)),
        "{new_id}"
    );
    assert!(
        text.contains(&format!("Inserted markdown cell {new_id} after intro")),
        "{text}"
    );
    assert_eq!(structured["cells"], 4);
    let notebook = parsed(&fixture, "nb.ipynb");
    assert_eq!(ids(&notebook), ["intro", new_id.as_str(), "calc", "plot"]);
    assert_eq!(source(&notebook["cells"][1]), "## Method");

    // Insert at the start (no cell_id).
    let first = notebook_edit(
        &runtime,
        json!({"notebook_path": "nb.ipynb", "new_source": "import os",
               "cell_type": "code", "edit_mode": "insert"}),
    )
    .await;
    let text = ok_text(&first);
    assert!(text.contains("at the start"), "{text}");
    let notebook = parsed(&fixture, "nb.ipynb");
    let all = ids(&notebook);
    assert_eq!(all.len(), 5);
    assert_eq!(&all[1..], ["intro", new_id.as_str(), "calc", "plot"]);
    let unique: std::collections::HashSet<&String> = all.iter().collect();
    assert_eq!(unique.len(), 5, "ids are unique: {all:?}");
    assert_eq!(notebook["cells"][0]["outputs"], json!([]));

    // Delete.
    let deleted = notebook_edit(
        &runtime,
        json!({"notebook_path": "nb.ipynb", "cell_id": "plot", "new_source": "",
               "edit_mode": "delete"}),
    )
    .await;
    let text = ok_text(&deleted);
    assert!(
        text.starts_with(&format!("Deleted cell plot from {path}")),
        "{text}"
    );
    assert!(text.contains("4 cells"), "{text}");
    let notebook = parsed(&fixture, "nb.ipynb");
    assert_eq!(ids(&notebook).len(), 4);
    assert!(!ids(&notebook).contains(&"plot".to_owned()));

    // Read renders the result, so the model sees the new ids.
    let listing = read(&runtime, "nb.ipynb").await;
    assert!(
        listing.contains(&format!(
            "<cell id=\"{new_id}\" type=\"markdown\" index=\"2\">\n## Method\n</cell>"
        )),
        "{listing}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cells_without_ids_are_named_by_index() {
    let fixture = Fixture::new();
    fixture.write(
        "old.ipynb",
        r#"{"cells": [
            {"cell_type": "markdown", "metadata": {}, "source": ["a"]},
            {"cell_type": "code", "execution_count": 1, "metadata": {}, "outputs": [], "source": ["b"]}
        ], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}"#,
    );
    let runtime = editing_runtime(&fixture).await;
    let listing = read(&runtime, "old.ipynb").await;
    assert!(
        listing.contains("<cell id=\"cell-1\" type=\"code\" index=\"1\">"),
        "{listing}"
    );

    // Converting code to markdown drops outputs and execution_count.
    let converted = notebook_edit(
        &runtime,
        json!({"notebook_path": "old.ipynb", "cell_id": "cell-1", "new_source": "*b*",
               "cell_type": "markdown"}),
    )
    .await;
    assert!(ok_text(&converted).contains("Replaced cell cell-1 (markdown)"));
    let notebook = parsed(&fixture, "old.ipynb");
    assert_eq!(
        notebook["cells"][1],
        json!({"cell_type": "markdown", "metadata": {}, "source": ["*b*"]})
    );

    // nbformat 4.4 cells get no id.
    let inserted = notebook_edit(
        &runtime,
        json!({"notebook_path": "old.ipynb", "cell_id": "cell-0", "new_source": "c",
               "cell_type": "code", "edit_mode": "insert"}),
    )
    .await;
    assert!(ok_text(&inserted).contains("Inserted code cell cell-1 after cell-0"));
    let notebook = parsed(&fixture, "old.ipynb");
    assert_eq!(ids(&notebook), ["<none>", "<none>", "<none>"]);
    assert_eq!(source(&notebook["cells"][1]), "c");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn editing_without_a_current_read_is_refused_before_the_prompt() {
    let fixture = Fixture::new();
    fixture.write("nb.ipynb", sample_notebook());
    let runtime = editing_runtime(&fixture).await;
    let input = json!({"notebook_path": "nb.ipynb", "cell_id": "calc", "new_source": "z"});

    let refused = notebook_edit(&runtime, input.clone()).await;
    let text = error_text(&refused, ErrorKind::ValidationFailed);
    assert!(text.contains("has not been read"), "{text}");
    assert!(
        refused.outcome.decision.is_none(),
        "refused before the permission decision"
    );
    assert_eq!(
        std::fs::read_to_string(fixture.workspace().join("nb.ipynb")).unwrap(),
        sample_notebook()
    );

    // Read, then change the file behind the model's back: refused again.
    read(&runtime, "nb.ipynb").await;
    fixture.write("nb.ipynb", sample_notebook().replace("plot(x)", "plot(y)"));
    let stale = notebook_edit(&runtime, input.clone()).await;
    let text = error_text(&stale, ErrorKind::ValidationFailed);
    assert!(text.contains("changed on disk"), "{text}");

    // Reading again makes the edit possible.
    read(&runtime, "nb.ipynb").await;
    ok_text(&notebook_edit(&runtime, input).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_edits_are_refused_listing_valid_ids() {
    let fixture = Fixture::new();
    fixture.write("nb.ipynb", sample_notebook());
    fixture.write("notes.txt", "text\n");
    let runtime = editing_runtime(&fixture).await;
    read(&runtime, "nb.ipynb").await;

    let unknown = notebook_edit(
        &runtime,
        json!({"notebook_path": "nb.ipynb", "cell_id": "nope", "new_source": "x"}),
    )
    .await;
    let text = error_text(&unknown, ErrorKind::ValidationFailed);
    assert!(
        text.contains("no cell has id \"nope\"; valid ids: intro, calc, plot"),
        "{text}"
    );

    let untyped = notebook_edit(
        &runtime,
        json!({"notebook_path": "nb.ipynb", "new_source": "x", "edit_mode": "insert"}),
    )
    .await;
    let text = error_text(&untyped, ErrorKind::ValidationFailed);
    assert!(text.contains("needs cell_type"), "{text}");

    let raw = notebook_edit(
        &runtime,
        json!({"notebook_path": "nb.ipynb", "cell_id": "calc", "new_source": "x", "cell_type": "raw"}),
    )
    .await;
    error_text(&raw, ErrorKind::InvalidInput);

    read(&runtime, "notes.txt").await;
    let not_notebook = notebook_edit(
        &runtime,
        json!({"notebook_path": "notes.txt", "cell_id": "cell-0", "new_source": "x"}),
    )
    .await;
    let text = error_text(&not_notebook, ErrorKind::ValidationFailed);
    assert!(text.contains("not a Jupyter notebook"), "{text}");

    // A symlink is refused: the atomic replace would turn it into a plain file.
    // Relative: WASI never follows an absolute symlink, even to a file inside the preopen.
    std::os::unix::fs::symlink("nb.ipynb", fixture.workspace().join("link.ipynb")).unwrap();
    read(&runtime, "link.ipynb").await;
    let linked = notebook_edit(
        &runtime,
        json!({"notebook_path": "link.ipynb", "cell_id": "calc", "new_source": "x"}),
    )
    .await;
    let text = error_text(&linked, ErrorKind::ValidationFailed);
    assert!(text.contains("is a symbolic link"), "{text}");

    // Nothing was written.
    assert_eq!(
        std::fs::read_to_string(fixture.workspace().join("nb.ipynb")).unwrap(),
        sample_notebook()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn notebook_edit_asks_in_default_mode() {
    let fixture = Fixture::new();
    fixture.write("nb.ipynb", sample_notebook());
    // Default mode with no prompter: an `ask` decision denies.
    let runtime = fixture.runtime(&[], |_| {}).await;
    read(&runtime, "nb.ipynb").await;
    let denied = notebook_edit(
        &runtime,
        json!({"notebook_path": "nb.ipynb", "cell_id": "calc", "new_source": "z"}),
    )
    .await;
    error_text(&denied, ErrorKind::PermissionDenied);
    assert_eq!(
        std::fs::read_to_string(fixture.workspace().join("nb.ipynb")).unwrap(),
        sample_notebook()
    );
}
