//! Plugin approvals: what `janua plugin approve` records about a plugin directory (its component
//! digests and its grants in words) and the check that keeps a changed plugin asking for more out
//! of the registry until it is approved again.
//!
//! Grants are compared as sentences ("tool x.wasm: read files under ${WORKSPACE}") rather than as
//! structures: the sentence is what the approver read, and a new sentence is exactly what the
//! refusal must show.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::manifest::Manifest;
use janua_sandbox::{FsAccess, Grants};

/// What an operator approved for one plugin directory (`pluginApprovals` in user settings).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PluginApproval {
    /// The plugin's name from its manifest when it was approved.
    pub plugin: String,
    /// SHA-256 of each component file, by its path in the manifest.
    pub components: BTreeMap<String, String>,
    /// Every grant the manifest asked for, in words.
    pub grants: Vec<String>,
}

impl PluginApproval {
    /// What `dir` asks for now: its manifest's grants and its component files' digests.
    pub(crate) fn of(dir: &Path, manifest: &Manifest) -> Result<Self, UnreadableComponent> {
        let mut components = BTreeMap::new();
        for component in manifest.component_paths() {
            let path = dir.join(component);
            let bytes = match std::fs::read(&path) {
                Ok(bytes) => bytes,
                Err(error) => return Err(UnreadableComponent { path, error }),
            };
            components.insert(
                component.display().to_string(),
                janua_sandbox::hex_digest(&bytes),
            );
        }
        Ok(Self {
            plugin: manifest.plugin.name.clone(),
            components,
            grants: grant_sentences(manifest).into_iter().collect(),
        })
    }

    /// `Err` with the difference when `current` may not load under this approval: it asks for a
    /// grant that was not approved. The issue asks this of changed components; an unchanged
    /// component whose manifest was widened is refused too, or editing `janua.toml` alone would
    /// get around the approval. A rebuilt component asking for nothing new loads: rebuilding a
    /// tool must not need a new approval.
    pub(crate) fn admits(&self, current: &Self) -> Result<(), Outgrown> {
        let approved: BTreeSet<&String> = self.grants.iter().collect();
        let added: Vec<String> = current
            .grants
            .iter()
            .filter(|grant| !approved.contains(grant))
            .cloned()
            .collect();
        if added.is_empty() {
            return Ok(());
        }
        let now: BTreeSet<&String> = current.grants.iter().collect();
        Err(Outgrown {
            added,
            removed: self
                .grants
                .iter()
                .filter(|grant| !now.contains(grant))
                .cloned()
                .collect(),
            changed: current
                .components
                .iter()
                .filter(|(path, digest)| self.components.get(*path) != Some(digest))
                .map(|(path, _)| path.clone())
                .collect(),
        })
    }
}

/// A plugin that asks for grants its approval does not cover.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Outgrown {
    /// Grants asked for now that were not approved.
    pub(crate) added: Vec<String>,
    /// Approved grants no longer asked for.
    pub(crate) removed: Vec<String>,
    /// Components whose digest changed since the approval.
    pub(crate) changed: Vec<String>,
}

impl std::fmt::Display for Outgrown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.changed.is_empty() {
            f.write_str("its components are unchanged, its manifest")?;
        } else {
            write!(
                f,
                "its components changed ({}) and it",
                self.changed.join(", ")
            )?;
        }
        f.write_str(" now asks for more than was approved:")?;
        for grant in &self.added {
            write!(f, "\n  + {grant}")?;
        }
        for grant in &self.removed {
            write!(f, "\n  - {grant}")?;
        }
        f.write_str("\nrun `janua plugin approve` on the directory to load it")
    }
}

impl std::error::Error for Outgrown {}

/// A component file of a plugin could not be read to take its digest.
#[derive(Debug, thiserror::Error)]
#[error("cannot read component {}: {error}", path.display())]
pub(crate) struct UnreadableComponent {
    path: PathBuf,
    error: std::io::Error,
}

/// The key an approval is recorded under: the canonical directory, so two spellings of one
/// directory share an approval and two directories never do.
pub(crate) fn approval_key(dir: &Path) -> PathBuf {
    dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
}

/// Every grant of every component in `manifest`, as one sentence each.
pub(crate) fn grant_sentences(manifest: &Manifest) -> BTreeSet<String> {
    let mut sentences = BTreeSet::new();
    for tool in &manifest.tools {
        let owner = format!("tool {}", tool.component.display());
        sentences.extend(sentences_of(&owner, &tool.grants));
    }
    for hook in &manifest.hooks {
        let owner = format!("hook {}", hook.component.display());
        sentences.extend(sentences_of(&owner, &hook.grants));
    }
    for monitor in &manifest.monitors {
        let owner = format!("monitor {}", monitor.component.display());
        sentences.extend(sentences_of(&owner, &monitor.grants));
    }
    sentences
}

/// One sentence per grant of one component, each starting with `owner`.
fn sentences_of(owner: &str, grants: &Grants) -> Vec<String> {
    let mut sentences = Vec::new();
    for grant in &grants.fs {
        let verb = match grant.access() {
            FsAccess::Read => "read files under",
            FsAccess::ReadWrite => "read, create, change and delete files under",
        };
        sentences.push(format!("{owner}: {verb} {}", grant.location()));
    }
    for grant in &grants.env {
        sentences.push(format!("{owner}: read the environment variable(s) {grant}"));
    }
    for grant in &grants.net {
        sentences.push(format!("{owner}: send HTTP requests to {grant}"));
    }
    for grant in &grants.process {
        sentences.push(format!("{owner}: run the program {grant}"));
    }
    for tool in &grants.delegate {
        sentences.push(format!(
            "{owner}: call the tool(s) {tool} through the pipeline"
        ));
    }
    if grants.browser {
        sentences.push(format!(
            "{owner}: drive a headless browser page (its requests limited to the net grants)"
        ));
    }
    sentences
}

#[cfg(test)]
mod tests {
    use super::*;

    fn approval(digest: &str, grants: &[&str]) -> PluginApproval {
        PluginApproval {
            plugin: "p".into(),
            components: BTreeMap::from([("p.wasm".to_owned(), digest.to_owned())]),
            grants: grants.iter().map(|grant| (*grant).to_owned()).collect(),
        }
    }

    #[test]
    fn a_changed_component_loads_unless_it_asks_for_more() {
        let approved = approval("aa", &["tool p.wasm: read files under ${WORKSPACE}"]);
        let cases: &[(&str, PluginApproval, bool)] = &[
            ("unchanged", approved.clone(), true),
            (
                "same digest, a widened manifest",
                approval(
                    "aa",
                    &["tool p.wasm: send HTTP requests to https://x.example"],
                ),
                false,
            ),
            (
                "rebuilt, same grants",
                approval("bb", &["tool p.wasm: read files under ${WORKSPACE}"]),
                true,
            ),
            ("rebuilt, fewer grants", approval("bb", &[]), true),
            (
                "rebuilt, a new grant",
                approval(
                    "bb",
                    &[
                        "tool p.wasm: read files under ${WORKSPACE}",
                        "tool p.wasm: send HTTP requests to https://x.example",
                    ],
                ),
                false,
            ),
        ];
        for (name, current, admitted) in cases {
            assert_eq!(approved.admits(current).is_ok(), *admitted, "{name}");
        }
        let refusal = approved
            .admits(&approval(
                "bb",
                &["tool p.wasm: send HTTP requests to https://x.example"],
            ))
            .unwrap_err();
        assert_eq!(
            refusal.added,
            ["tool p.wasm: send HTTP requests to https://x.example"]
        );
        let refusal = refusal.to_string();
        assert!(
            refusal.contains("+ tool p.wasm: send HTTP requests to https://x.example"),
            "{refusal}"
        );
        assert!(
            refusal.contains("- tool p.wasm: read files under ${WORKSPACE}"),
            "{refusal}"
        );
        assert!(refusal.contains("p.wasm"), "{refusal}");
    }
}
