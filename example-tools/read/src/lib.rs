//! The default `Read` tool: text files with `cat -n` line numbers, images as image blocks and
//! Jupyter notebooks cell by cell, read only through the fs grant.
//!
//! Memory stays bounded whatever the file: text is streamed line by line and only the requested
//! window is held (see `text`), images are capped at `MAX_IMAGE_BYTES`, and notebooks at
//! `MAX_NOTEBOOK_BYTES` and parsed without their output payloads (see `notebook`).
//!
//! Every successful read records the digest of the whole file in the session, so edit tools can
//! check that the model saw the file's current content. Bytes are digested as they stream past,
//! so paging through a large file costs no extra pass.

// Native builds exist only for unit tests and do not export the component (see `export!` below),
// so most of the tool is unused there; the wasm build still checks for dead code.
#![cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]

mod magic;
mod notebook;
mod text;

use std::fs::File;
use std::io::{BufRead, BufReader, Read as _};

use janua_sdk::files::{self, ContentDigest};
use janua_sdk::{CapabilityClass, Content, Context, Output, Tool, ToolError};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use crate::magic::{ImageFormat, Sniffed};

/// Lines returned when the call gives no `limit`.
const DEFAULT_LIMIT: u64 = 2000;
/// Bytes sniffed for magic numbers and NUL to tell binary files from text.
const SNIFF_BYTES: usize = 8192;
/// Read buffer size: at least [`SNIFF_BYTES`], and small enough to fit the guest's initial heap
/// (a 64 KiB buffer grew memory on every call, and each growth is an `mprotect` in the host,
/// about 20 µs of a small file's `Read`, BENCHMARKS.md, issue 33).
const BUFFER_BYTES: usize = 16 * 1024;
/// Largest image returned; the host drops larger images, so they are refused here with a reason.
const MAX_IMAGE_BYTES: u64 = 5 << 20;
/// Largest notebook rendered; parsing holds the notebook's text in memory.
const MAX_NOTEBOOK_BYTES: u64 = 100 << 20;

/// Input of `Read`.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadInput {
    /// Path of the file to read: absolute, or relative to the workspace. Must not be blank.
    // In the schema rather than in `validate`: a tool with nothing else to check costs no
    // `validate-input` instance per call.
    #[schemars(regex(pattern = r"\S"))]
    file_path: String,
    /// Line number to start reading from (1 is the first line). Only give it for files too large to
    /// read at once.
    #[schemars(range(min = 0))]
    offset: Option<u64>,
    /// Number of lines to read (default 2000).
    #[schemars(range(min = 1))]
    limit: Option<u64>,
}

struct Read;

impl Tool for Read {
    type Input = ReadInput;
    const NAME: &'static str = "Read";
    const DESCRIPTION: &'static str = "Reads a file from the workspace. Text files: returns up to \
        2000 lines by default, in `cat -n` format with line numbers starting at 1; use `offset` and \
        `limit` to page through longer files. Lines longer than 2000 characters are cut with a \
        marker. Images (PNG, JPEG, GIF, WebP, up to 5 MiB) are returned as images. Jupyter \
        notebooks (.ipynb) are returned whole, each cell with its id, source and text outputs; \
        use those ids with NotebookEdit. Directories and other binary files cannot be read.";
    const CLASS: CapabilityClass = CapabilityClass::Read;
    const READ_ONLY: bool = true;
    const CONCURRENCY_SAFE: bool = true;
    const RULE_FIELD: Option<&'static str> = Some("file_path");

    fn call(input: ReadInput, ctx: &Context) -> Result<Output, ToolError> {
        let path = ctx.resolve_path(&input.file_path);
        let (file, size) = open(&path)?;
        let mut reader = BufReader::with_capacity(BUFFER_BYTES, Digesting::new(file));
        if is_notebook(&path) {
            return read_notebook(reader, size, &path);
        }
        let head = reader
            .fill_buf()
            .map_err(|error| files::io_error(&path, "read", &error))?;
        match classify(&head[..head.len().min(SNIFF_BYTES)]) {
            Class::Image(format) => read_image(reader, size, &path, format),
            Class::Binary(kind) => Err(ToolError::new(
                "binary_file",
                format!(
                    "{path} is a binary file ({kind}, {size} bytes); Read returns text files, \
                     images (PNG, JPEG, GIF, WebP) and Jupyter notebooks only"
                ),
            )),
            Class::Text => {
                let start = input.offset.unwrap_or(1).max(1);
                let limit = input.limit.unwrap_or(DEFAULT_LIMIT);
                let page = text::read_page(&mut reader, start, limit)
                    .map_err(|error| files::io_error(&path, "read", &error))?;
                files::record_read(&path, &reader.into_inner().finish());
                Ok(page.into_output(&path))
            }
        }
    }
}

// Only wasm builds export the component: natively (unit tests) the exported symbol names, which
// contain `:`, cannot go into a linker version script, so the native cdylib would not link.
#[cfg(target_arch = "wasm32")]
janua_sdk::export!(Read);

/// A reader that digests every byte read through it, so the whole-file digest comes for free
/// while streaming.
struct Digesting<R> {
    inner: R,
    digest: ContentDigest,
}

impl<R> Digesting<R> {
    fn new(inner: R) -> Self {
        Self {
            inner,
            digest: ContentDigest::new(),
        }
    }

    /// The digest of everything read so far; the whole file once the reader reached its end.
    fn finish(self) -> String {
        self.digest.finish()
    }
}

impl<R: std::io::Read> std::io::Read for Digesting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let count = self.inner.read(buf)?;
        self.digest.update(&buf[..count]);
        Ok(count)
    }
}

/// How Read treats a file, judged from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Image(ImageFormat),
    Binary(&'static str),
    Text,
}

/// Magic numbers first (a PDF or ZIP may have no NUL early on), then NUL bytes, as `git` and
/// `grep` decide.
fn classify(head: &[u8]) -> Class {
    match magic::sniff(head) {
        Some(Sniffed::Image(format)) => Class::Image(format),
        Some(Sniffed::Binary(kind)) => Class::Binary(kind),
        None if head.contains(&0) => Class::Binary(magic::UNKNOWN_BINARY),
        None => Class::Text,
    }
}

/// Notebooks are recognized by extension, as Jupyter does; the content must then parse.
fn is_notebook(path: &str) -> bool {
    path.rsplit_once('.')
        .is_some_and(|(_, extension)| extension.eq_ignore_ascii_case("ipynb"))
}

fn read_image(
    mut reader: BufReader<Digesting<File>>,
    size: u64,
    path: &str,
    format: ImageFormat,
) -> Result<Output, ToolError> {
    let media_type = format.media_type();
    let too_large = |size: u64| {
        ToolError::new(
            "image_too_large",
            format!(
                "{path} is a {media_type} image of {size} bytes, over the {MAX_IMAGE_BYTES}-byte \
                 (5 MiB) limit for images; Read cannot return it"
            ),
        )
    };
    if size > MAX_IMAGE_BYTES {
        return Err(too_large(size));
    }
    let mut data = Vec::new();
    // One byte past the cap tells a file that grew since `metadata` from one exactly at the cap.
    (&mut reader)
        .take(MAX_IMAGE_BYTES + 1)
        .read_to_end(&mut data)
        .map_err(|error| files::io_error(path, "read", &error))?;
    let length = u64::try_from(data.len()).unwrap_or(u64::MAX);
    if length > MAX_IMAGE_BYTES {
        return Err(too_large(length));
    }
    files::record_read(path, &reader.into_inner().finish());
    let dimensions = magic::dimensions(format, &data);
    let mut file = json!({
        "filePath": path,
        "type": media_type,
        "originalSize": length,
    });
    if let Some((width, height)) = dimensions {
        file["dimensions"] = json!({ "width": width, "height": height });
    }
    Ok(
        Output::text(image_summary(path, media_type, length, dimensions))
            .with_content(Content::Image {
                media_type: media_type.to_owned(),
                data,
            })
            .with_structured(json!({ "type": "image", "file": file })),
    )
}

/// `Image <path>: image/png, 1234 bytes, 64x32 pixels` (pixels omitted when unknown).
fn image_summary(
    path: &str,
    media_type: &str,
    length: u64,
    dimensions: Option<(u32, u32)>,
) -> String {
    let mut summary = format!("Image {path}: {media_type}, {length} bytes");
    if let Some((width, height)) = dimensions {
        summary.push_str(&format!(", {width}x{height} pixels"));
    }
    summary
}

fn read_notebook(
    mut reader: BufReader<Digesting<File>>,
    size: u64,
    path: &str,
) -> Result<Output, ToolError> {
    if size > MAX_NOTEBOOK_BYTES {
        return Err(ToolError::new(
            "file_too_large",
            format!(
                "{path} is a notebook of {size} bytes, over the {MAX_NOTEBOOK_BYTES}-byte \
                 (100 MiB) limit for notebooks; Read cannot render it"
            ),
        ));
    }
    let parsed: Result<notebook::Notebook, _> = serde_json::from_reader(&mut reader);
    let notebook = parsed.map_err(|error| {
        if error.is_io() {
            ToolError::new("io_error", format!("cannot read {path}: {error}"))
        } else {
            ToolError::new(
                "invalid_notebook",
                format!(
                    "{path} is not a valid Jupyter notebook (JSON with a `cells` array): {error}"
                ),
            )
        }
    })?;
    // serde_json reads to the end to reject trailing data; draining makes the digest whole-file
    // even if that ever changes.
    std::io::copy(&mut reader, &mut std::io::sink())
        .map_err(|error| files::io_error(path, "read", &error))?;
    files::record_read(path, &reader.into_inner().finish());
    let count = notebook.cells.len();
    let text = if count == 0 {
        format!("<notice>{path} is a notebook with no cells.</notice>")
    } else {
        notebook::render(&notebook.cells)
    };
    Ok(Output::text(text).with_structured(json!({
        "type": "notebook",
        "file": { "filePath": path, "cells": count },
    })))
}

/// Opens `path` if it is a regular file, returning it with its size.
fn open(path: &str) -> Result<(File, u64), ToolError> {
    // Look before opening: opening a FIFO or a device could block or have side effects.
    let metadata =
        std::fs::metadata(path).map_err(|error| files::io_error(path, "read", &error))?;
    if metadata.is_dir() {
        return Err(ToolError::new(
            "is_directory",
            format!("{path} is a directory, not a file; list it with a directory tool instead"),
        ));
    }
    if !metadata.is_file() {
        return Err(ToolError::new(
            "not_a_regular_file",
            format!(
                "{path} is not a regular file (a FIFO, socket or device); Read reads files only"
            ),
        ));
    }
    let file = File::open(path).map_err(|error| files::io_error(path, "read", &error))?;
    Ok((file, metadata.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_by_magic_then_nul() {
        let cases: &[(&[u8], Class)] = &[
            (b"\x89PNG\r\n\x1a\n\0\0", Class::Image(ImageFormat::Png)),
            (b"%PDF-1.4\nno nul here", Class::Binary("PDF document")),
            (b"\x7fELF\x02\x01\x01\0", Class::Binary("ELF executable")),
            (b"text\0with nul", Class::Binary(magic::UNKNOWN_BINARY)),
            (b"plain text\n", Class::Text),
            (b"", Class::Text),
        ];
        for (head, expected) in cases {
            assert_eq!(classify(head), *expected, "{head:?}");
        }
    }

    #[test]
    fn recognizes_notebooks_by_extension() {
        for (path, expected) in [
            ("/w/a.ipynb", true),
            ("/w/A.IPYNB", true),
            ("/w/a.ipynb.txt", false),
            ("/w/ipynb", false),
            ("/w/a.json", false),
        ] {
            assert_eq!(is_notebook(path), expected, "{path}");
        }
    }

    #[test]
    fn summarizes_images() {
        assert_eq!(
            image_summary("/w/a.png", "image/png", 1234, Some((64, 32))),
            "Image /w/a.png: image/png, 1234 bytes, 64x32 pixels"
        );
        assert_eq!(
            image_summary("/w/a.jpg", "image/jpeg", 9, None),
            "Image /w/a.jpg: image/jpeg, 9 bytes"
        );
    }

    #[test]
    fn digesting_reader_digests_every_byte() {
        let mut reader = BufReader::with_capacity(3, Digesting::new(&b"hello world"[..]));
        let mut first = [0u8; 4];
        std::io::Read::read_exact(&mut reader, &mut first).expect("in-memory read");
        std::io::copy(&mut reader, &mut std::io::sink()).expect("in-memory read");
        assert_eq!(reader.into_inner().finish(), files::digest(b"hello world"));
    }
}
