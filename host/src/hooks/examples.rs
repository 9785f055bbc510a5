//! The example hooks and monitors built from `example-tools/hook-*` and `example-tools/monitor-*`
//! ship inside the binary, so `janua example NAME DIR` can write a ready plugin directory
//! (component plus `janua.toml`) without a Rust toolchain.

use std::path::{Path, PathBuf};

use crate::registry::example_extensions;

/// The names of the shipped examples (`hook-bash-guard`, `monitor-audit`, ...).
pub fn example_names() -> Vec<String> {
    example_extensions()
        .iter()
        .map(|(ident, ..)| ident.replace('_', "-"))
        .collect()
}

/// Writes the example `name` as a plugin directory at `dir` (created; it must not exist yet or
/// be empty) and returns the manifest's path.
pub fn write_example(name: &str, dir: &Path) -> Result<PathBuf, std::io::Error> {
    let ident = name.replace('-', "_");
    let Some((_, artifact, wasm, manifest)) = example_extensions()
        .iter()
        .find(|(candidate, ..)| *candidate == ident)
    else {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            format!(
                "no example named {name:?}; the examples are {}",
                example_names().join(", ")
            ),
        ));
    };
    if dir.exists() && std::fs::read_dir(dir)?.next().is_some() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::AlreadyExists,
            format!("{} is not empty; choose a new directory", dir.display()),
        ));
    }
    let created = !dir.exists();
    std::fs::create_dir_all(dir)?;
    let manifest_path = dir.join("janua.toml");
    let written = janua_types::write_atomically(&dir.join(artifact), wasm)
        .and_then(|()| janua_types::write_atomically(&manifest_path, manifest.as_bytes()));
    if let Err(error) = written {
        // Nothing half-written: a directory holding a component without its manifest (or the
        // other way round) would be a broken plugin.
        let _ = std::fs::remove_file(dir.join(artifact));
        let _ = std::fs::remove_file(&manifest_path);
        if created {
            let _ = std::fs::remove_dir(dir);
        }
        return Err(error);
    }
    Ok(manifest_path)
}
