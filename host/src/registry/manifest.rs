//! `warden.toml`: a plugin directory's manifest. Parsed strictly (unknown fields are errors) and every
//! error names the file and, where the parser knows it, the line.
//!
//! ```toml
//! [plugin]
//! name = "example"
//!
//! [[tool]]
//! component = "example.wasm"
//! grants = { fs = [{ path = "${WORKSPACE}", access = "read" }], env = ["LANG"], net = ["https://api.example.com"] }
//! limits = { memory_mib = 64, timeout_ms = 5000 }
//! ```

use std::path::{Component, Path, PathBuf};

use serde::Deserialize;

use crate::sandbox::grants::Grants;
use crate::sandbox::limits::DeclaredLimits;

/// The manifest file name in a plugin directory.
pub(crate) const MANIFEST_FILE: &str = "warden.toml";

/// A manifest that could not be used.
#[derive(Debug, thiserror::Error)]
#[error("{}: {message}", path.display())]
pub struct ManifestError {
    /// The manifest file.
    pub path: PathBuf,
    /// What is wrong, with the line when known.
    pub message: String,
}

impl ManifestError {
    pub(crate) fn at(path: &Path, message: String) -> Self {
        Self {
            path: path.to_path_buf(),
            message,
        }
    }
}

/// A parsed manifest.
#[derive(Debug)]
pub(crate) struct Manifest {
    pub(crate) path: PathBuf,
    pub(crate) plugin: PluginMeta,
    pub(crate) tools: Vec<ToolComponent>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawManifest {
    plugin: PluginMeta,
    #[serde(default, rename = "tool")]
    tools: Vec<ToolComponent>,
}

/// `[plugin]`: who the plugin is.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PluginMeta {
    /// Lower-case name; also names the plugin's data directory.
    pub(crate) name: String,
    #[serde(default)]
    #[expect(dead_code, reason = "shown by later listing commands")]
    pub(crate) version: Option<String>,
    #[serde(default)]
    #[expect(dead_code, reason = "shown by later listing commands")]
    pub(crate) description: Option<String>,
}

/// `[[tool]]`: one tool component and its declared grants and limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolComponent {
    /// Path of the `.wasm` file, relative to the plugin directory.
    pub(crate) component: PathBuf,
    /// What the component may touch (its ceiling).
    #[serde(default)]
    pub(crate) grants: Grants,
    /// Limits that lower the operator's.
    #[serde(default)]
    pub(crate) limits: DeclaredLimits,
}

impl Manifest {
    /// Reads and checks `dir/warden.toml`.
    pub(crate) fn read(dir: &Path) -> Result<Self, ManifestError> {
        let path = dir.join(MANIFEST_FILE);
        let text = std::fs::read_to_string(&path).map_err(|error| {
            ManifestError::at(&path, format!("cannot read the plugin manifest: {error}"))
        })?;
        Self::parse(&path, &text)
    }

    fn parse(path: &Path, text: &str) -> Result<Self, ManifestError> {
        let raw: RawManifest = toml::from_str(text).map_err(|error| {
            let location = error
                .span()
                .map(|span| {
                    let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                    format!("line {line}: ")
                })
                .unwrap_or_default();
            ManifestError::at(path, format!("{location}{}", error.message()))
        })?;
        let name_ok = !raw.plugin.name.is_empty()
            && raw.plugin.name.len() <= 64
            && raw
                .plugin
                .name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
        if !name_ok {
            return Err(ManifestError::at(
                path,
                format!(
                    "plugin name {:?} must be 1-64 lower-case letters, digits, '-' or '_'",
                    raw.plugin.name
                ),
            ));
        }
        if raw.tools.is_empty() {
            return Err(ManifestError::at(
                path,
                "the manifest lists no [[tool]] components".to_owned(),
            ));
        }
        for tool in &raw.tools {
            if let Some(problem) = tool.limits.problem() {
                return Err(ManifestError::at(
                    path,
                    format!("component {}: {problem}", tool.component.display()),
                ));
            }
            let inside = tool
                .component
                .components()
                .all(|part| matches!(part, Component::Normal(_)));
            if !inside {
                return Err(ManifestError::at(
                    path,
                    format!(
                        "component path {} must be relative to the plugin directory, without '..'",
                        tool.component.display()
                    ),
                ));
            }
        }
        Ok(Self {
            path: path.to_path_buf(),
            plugin: raw.plugin,
            tools: raw.tools,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Manifest, ManifestError> {
        Manifest::parse(Path::new("/p/warden.toml"), text)
    }

    #[test]
    fn parses_a_full_manifest() {
        let manifest = parse(
            r#"
[plugin]
name = "demo"

[[tool]]
component = "demo.wasm"
grants = { fs = [{ path = "${WORKSPACE}", access = "read-write" }], env = ["LANG"], net = ["https://*.example.com", "http://127.0.0.1:8080"] }
limits = { memory_mib = 64 }
"#,
        )
        .unwrap();
        assert_eq!(manifest.tools.len(), 1);
        assert_eq!(manifest.tools[0].grants.fs.len(), 1);
        assert_eq!(manifest.tools[0].grants.net.len(), 2);
        assert_eq!(manifest.tools[0].limits.memory_mib, Some(64));
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let cases: &[(&str, &str)] = &[
            ("[plugin]\nname = \"demo\"\nbogus = 1\n", "line 3"),
            (
                "[plugin]\nname = \"demo\"\n[[tool]]\ncomponent = \"x.wasm\"\ngrants = { fs = [{ path = \"/etc\", access = \"read\" }] }\n",
                "line 5",
            ),
            (
                "[plugin]\nname = \"Demo!\"\n[[tool]]\ncomponent = \"x.wasm\"\n",
                "plugin name",
            ),
            ("[plugin]\nname = \"demo\"\n", "no [[tool]]"),
            (
                "[plugin]\nname = \"demo\"\n[[tool]]\ncomponent = \"../x.wasm\"\n",
                "relative",
            ),
            ("[plugin\n", "line 1"),
            (
                "[plugin]\nname = \"demo\"\n[[tool]]\ncomponent = \"x.wasm\"\ngrants = { net = [\"ftp://x.com\"] }\n",
                "net grant \"ftp://x.com\"",
            ),
            (
                "[plugin]\nname = \"demo\"\n[[tool]]\ncomponent = \"x.wasm\"\nlimits = { output_chars = 10 }\n",
                "output_chars must be at least 1000",
            ),
            (
                "[plugin]\nname = \"demo\"\n[[tool]]\ncomponent = \"x.wasm\"\nlimits = { timeout_ms = 0 }\n",
                "timeout_ms must be at least 1",
            ),
        ];
        for (text, expected) in cases {
            let message = parse(text).unwrap_err().to_string();
            assert!(message.starts_with("/p/warden.toml: "), "{message}");
            assert!(message.contains(expected), "{text:?}: {message}");
        }
    }
}
