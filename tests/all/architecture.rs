//! The architecture docs/ARCHITECTURE.md draws, held true (issue 32, point 2): the crate graph
//! Cargo resolves, and the layers of the `janua` crate's top-level modules.
//!
//! Why a test over `cargo metadata` and the source, and not `cargo-modules --acyclic`: it runs
//! with the README's test command on a fresh machine (no tool to install), it checks the crates'
//! transitive dependencies (no wasmtime below the permission engine) as well as the modules, and
//! it can name the few edges still pointing up so that the list only shrinks: an edge that is
//! gone must leave the list, and a new upward edge fails.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::Value;

/// The `janua` crate's top-level modules, lowest first: a module may use those before it, never
/// one after it (docs/ARCHITECTURE.md, "Layers").
const LAYERS: &[&str] = &[
    "output",
    "session",
    "registry",
    "settings",
    "delegation",
    "hooks",
    "pipeline",
    "runtime",
    "protocol",
    "authoring",
    "fuzzing",
];

/// Upward edges not cut yet, with why. Each must still exist (the list only shrinks); it is
/// empty since the sub-sessions moved into the pipeline (issue 32, point 3).
const NOT_YET_CUT: &[(&str, &str, &str)] = &[];

/// Crates and the crates they may never reach, directly or not.
const FORBIDDEN: &[(&str, &[&str])] = &[
    (
        "janua-types",
        &[
            "wasmtime",
            "tokio",
            "janua-permissions",
            "janua-confine",
            "janua-sandbox",
            "janua-mcp",
            "janua",
        ],
    ),
    (
        "janua-permissions",
        &[
            "wasmtime",
            "tokio",
            "janua-confine",
            "janua-sandbox",
            "janua-mcp",
            "janua",
        ],
    ),
    (
        "janua-confine",
        &[
            "wasmtime",
            "tokio",
            "janua-permissions",
            "janua-sandbox",
            "janua-mcp",
            "janua",
        ],
    ),
    // The sandbox runs the `process` interface's commands and the browser under janua-confine
    // (docs/ARCHITECTURE.md says why that edge is the one allowed between siblings); it never
    // decides a rule.
    (
        "janua-sandbox",
        &["janua-permissions", "janua-mcp", "janua"],
    ),
    // The MCP client speaks JSON-RPC to servers it starts confined; it runs no guest.
    (
        "janua-mcp",
        &["wasmtime", "janua-permissions", "janua-sandbox", "janua"],
    ),
    // Fuzzing a rule parser links the permission engine, not the runtime (`fuzz/runtime` does).
    (
        "janua-fuzz",
        &["wasmtime", "tokio", "janua-sandbox", "janua-mcp", "janua"],
    ),
];

#[test]
fn the_small_crates_never_reach_the_engine_or_each_other() {
    // Only this platform's dependencies: the others (Windows consoles) are never downloaded.
    let platform = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let output = std::process::Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--offline",
            "--filter-platform",
        ])
        .arg(&platform)
        .current_dir(crate::mcp_support::repo())
        .output()
        .expect("cargo metadata runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let metadata: Value = serde_json::from_slice(&output.stdout).expect("cargo metadata's JSON");
    let names: BTreeMap<&str, &str> = metadata["packages"]
        .as_array()
        .expect("packages")
        .iter()
        .map(|package| {
            (
                package["id"].as_str().expect("id"),
                package["name"].as_str().expect("name"),
            )
        })
        .collect();
    // Normal dependencies only: a crate's tests may use anything.
    let mut depends: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for node in metadata["resolve"]["nodes"].as_array().expect("resolve") {
        let id = node["id"].as_str().expect("id");
        for dependency in node["deps"].as_array().expect("deps") {
            let normal = dependency["dep_kinds"]
                .as_array()
                .expect("dep_kinds")
                .iter()
                .any(|kind| kind["kind"].is_null());
            if normal {
                depends
                    .entry(id)
                    .or_default()
                    .push(dependency["pkg"].as_str().expect("pkg"));
            }
        }
    }
    for (krate, forbidden) in FORBIDDEN {
        let root = names
            .iter()
            .find(|(_, name)| *name == krate)
            .map(|(id, _)| *id)
            .unwrap_or_else(|| panic!("no crate {krate} in the workspace"));
        let mut reached = BTreeSet::new();
        let mut pending = vec![root];
        while let Some(id) = pending.pop() {
            for next in depends.get(id).into_iter().flatten() {
                if reached.insert(names[next]) {
                    pending.push(next);
                }
            }
        }
        for name in *forbidden {
            assert!(
                !reached.contains(name),
                "{krate} reaches {name}, which docs/ARCHITECTURE.md forbids"
            );
        }
    }
}

#[test]
fn the_runtime_modules_form_layers() {
    let source = crate::mcp_support::repo().join("host/src");
    let mut edges: BTreeSet<(String, String)> = BTreeSet::new();
    for file in rust_files(&source) {
        let relative = file.strip_prefix(&source).expect("under host/src");
        let first = relative
            .components()
            .next()
            .expect("a file")
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs").to_owned();
        if ["lib", "main", "cli"].contains(&module.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("a source file");
        for used in modules_used(&text, relative.components().count()) {
            if used != module {
                edges.insert((module.clone(), used));
            }
        }
    }
    let layer = |module: &str| LAYERS.iter().position(|layer| *layer == module);
    let mut upward = BTreeSet::new();
    for (from, to) in &edges {
        let from_layer =
            layer(from).unwrap_or_else(|| panic!("module {from} is not in LAYERS: place it"));
        let Some(to_layer) = layer(to) else {
            // A name that is not a module (a crate-root item): not a layer edge.
            continue;
        };
        if to_layer > from_layer {
            upward.insert((from.as_str(), to.as_str()));
        }
    }
    let allowed: BTreeSet<(&str, &str)> = NOT_YET_CUT
        .iter()
        .map(|(from, to, _)| (*from, *to))
        .collect();
    let new: Vec<_> = upward.difference(&allowed).collect();
    assert!(
        new.is_empty(),
        "modules importing a higher layer (docs/ARCHITECTURE.md, \"Layers\"): {new:?}"
    );
    let cut: Vec<_> = allowed.difference(&upward).collect();
    assert!(
        cut.is_empty(),
        "these upward edges are gone: remove them from NOT_YET_CUT: {cut:?}"
    );
}

/// The top-level modules a file names through `crate::` (also `use crate::{a, b}`) or, from a
/// file `depth` components below `host/src` (`hooks.rs`: 1, `hooks/run.rs`: 2), through as many
/// `super::` as reach the root. Comments are skipped.
fn modules_used(text: &str, depth: usize) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut used = BTreeSet::new();
    // A file `depth` components below `host/src` is a module that many levels below the root.
    let prefixes = ["crate::".to_owned(), "super::".repeat(depth)];
    for prefix in &prefixes {
        for (at, _) in code.match_indices(prefix.as_str()) {
            // `super::super::x` also contains `super::x`; only a match not preceded by
            // another `super::` counts.
            if prefix.starts_with("super") && code[..at].ends_with("super::") {
                continue;
            }
            let rest = &code[at + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let inner = group.split('}').next().unwrap_or("");
                used.extend(inner.split(',').filter_map(module_name));
            } else if let Some(name) = module_name(rest) {
                used.insert(name);
            }
        }
    }
    used
}

/// The lower-case identifier at the start of `text`, if any.
fn module_name(text: &str) -> Option<String> {
    let name: String = text
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
        .collect();
    (!name.is_empty() && name != "self").then_some(name)
}

fn rust_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)
            .expect("a source directory")
            .flatten()
        {
            let path = entry.path();
            if path.is_dir() {
                pending.push(path);
            } else if path.extension().is_some_and(|extension| extension == "rs") {
                files.push(path);
            }
        }
    }
    files
}

#[test]
fn module_names_are_read_from_paths_groups_and_supers() {
    let text = "use crate::pipeline::Stages;\nuse crate::{hooks, runtime::Runtime};\n\
                // crate::protocol in a comment\nlet x = super::super::session::load();";
    let used = modules_used(text, 2);
    let expected: BTreeSet<String> = ["pipeline", "hooks", "runtime", "session"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    assert_eq!(used, expected);
    // From a file one level down, `super::x` is a sibling inside the same module.
    assert!(modules_used("use super::answer;", 2).is_empty());
}

/// The `janua` crate's root holds what an embedder needs and no more (issue 32, point 6): at
/// most 40 names, counting every top-level `pub use` name and public item; the rest lives in
/// the root's public modules, grouped by subject.
#[test]
fn the_library_root_exports_at_most_forty_names() {
    let lib = std::fs::read_to_string(crate::mcp_support::repo().join("host/src/lib.rs"))
        .expect("host/src/lib.rs");
    let mut names = Vec::new();
    let mut statement = String::new();
    for line in lib.lines() {
        if statement.is_empty() && !line.starts_with("pub use ") {
            for item in [
                "pub enum ",
                "pub struct ",
                "pub fn ",
                "pub const ",
                "pub trait ",
            ] {
                if let Some(rest) = line.strip_prefix(item) {
                    names.push(
                        rest.split(['<', '(', ' ', ':', '{'])
                            .next()
                            .unwrap_or("")
                            .to_owned(),
                    );
                }
            }
            continue;
        }
        statement.push_str(line);
        if line.trim_end().ends_with(';') {
            let list = statement
                .trim_start_matches("pub use ")
                .trim_end_matches(';')
                .to_owned();
            let items = match list.split_once('{') {
                Some((_, inner)) => inner.trim_end_matches('}').to_owned(),
                None => list.rsplit("::").next().unwrap_or("").to_owned(),
            };
            names.extend(
                items
                    .split(',')
                    .map(|item| item.rsplit(" as ").next().unwrap_or("").trim().to_owned())
                    .filter(|item| !item.is_empty()),
            );
            statement.clear();
        }
    }
    assert!(names.contains(&"Runtime".to_owned()), "{names:?}");
    assert!(
        names.len() <= 40,
        "the root exports {} names: move some into a module ({names:?})",
        names.len()
    );
}

/// Library code reports typed errors (issue 32, point 5): no `Result<_, String>` in any library
/// crate. The binary's edge (`main.rs`, `cli`) uses `anyhow`; guests and the guest SDK follow the
/// WIT contract, whose `result<_, string>` is the refusal text a model reads.
#[test]
fn library_code_has_no_string_errors() {
    let repo = crate::mcp_support::repo();
    let mut found = Vec::new();
    let mut dirs: Vec<_> = std::fs::read_dir(repo.join("crates"))
        .expect("crates/")
        .flatten()
        .map(|entry| entry.path().join("src"))
        .collect();
    dirs.push(repo.join("host/src"));
    for dir in dirs {
        for file in rust_files(&dir) {
            let relative = file.strip_prefix(&repo).unwrap_or(&file).to_owned();
            let binary_edge = relative.starts_with("host/src/cli")
                || relative == Path::new("host/src/cli.rs")
                || relative == Path::new("host/src/main.rs");
            if binary_edge {
                continue;
            }
            let text = std::fs::read_to_string(&file).expect("a source file");
            for error in string_errors(&text) {
                found.push(format!("{}: {error}", relative.display()));
            }
        }
    }
    assert!(found.is_empty(), "type these errors:\n{}", found.join("\n"));
}

/// Each `Result<T, String>` in `text` (comments left out, across line breaks).
fn string_errors(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .flat_map(|line| line.split_whitespace())
        .collect();
    let mut found = Vec::new();
    let mut rest = code.as_str();
    while let Some(start) = rest.find("Result<") {
        let after = &rest[start + "Result<".len()..];
        let (mut depth, mut last_comma, mut end) = (0usize, None, None);
        for (index, character) in after.char_indices() {
            match character {
                '<' | '(' | '[' => depth += 1,
                ')' | ']' => depth = depth.saturating_sub(1),
                '>' if depth == 0 => {
                    end = Some(index);
                    break;
                }
                '>' => depth -= 1,
                // A trailing comma before `>` ends no argument.
                ',' if depth == 0 && !after[index + 1..].starts_with('>') => {
                    last_comma = Some(index);
                }
                _ => {}
            }
        }
        if let (Some(comma), Some(end)) = (last_comma, end)
            && after[comma + 1..end].trim_end_matches(',') == "String"
        {
            found.push(format!("Result<{}>", &after[..end]));
        }
        rest = after;
    }
    found
}

#[test]
fn string_errors_are_found_across_lines_and_nesting() {
    let text = "fn a() -> Result<(), String> {}\nfn b() -> Result<\n    Vec<(u8, u8)>,\n    String,\n> {}\n\
                fn c() -> Result<Result<String, String>, Failure> {}\n// Result<(), String> in a comment\n\
                fn d() -> Result<String, Error> {}";
    assert_eq!(
        string_errors(text),
        [
            "Result<(),String>",
            "Result<Vec<(u8,u8)>,String,>",
            "Result<String,String>"
        ]
    );
}
