//! The example hooks and monitors built from `example-tools/hook-*` and `example-tools/monitor-*`
//! ship inside the binary, so `warden example NAME DIR` can write a ready plugin directory
//! (component plus `warden.toml`) without a Rust toolchain.

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
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join(artifact), wasm)?;
    let manifest_path = dir.join("warden.toml");
    std::fs::write(&manifest_path, manifest)?;
    Ok(manifest_path)
}
