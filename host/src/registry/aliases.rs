//! Configured tool aliases (`Old=New`), applied exactly one hop.
//!
//! Chasing aliases recursively would allow cycles and make permission matching ambiguous, so a chain
//! (an alias whose target is itself an alias), a cycle, or an alias that shadows a canonical name is
//! rejected when the runtime starts. Permission rules always see the canonical name.

use std::collections::BTreeMap;

/// One alias: calls to `from` go to `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Alias {
    /// The name the model may use.
    pub from: String,
    /// The canonical tool it means.
    pub to: String,
}

/// Why the alias configuration was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AliasError {
    /// Not of the form `Old=New`.
    #[error("alias {0:?} is not of the form OLD=NEW with two tool names")]
    Malformed(String),
    /// Targets of aliases that are aliases themselves.
    #[error("alias chain {0}: aliases apply one hop only, so point each alias directly at a tool")]
    Chain(String),
    /// An alias with the same name as a tool.
    #[error(
        "alias {alias}={target} shadows the tool {alias}; an alias may not reuse a tool's name"
    )]
    Shadows {
        /// The alias name.
        alias: String,
        /// Its target.
        target: String,
    },
    /// One name aliased to two targets.
    #[error("alias {alias} is defined twice, as {first} and as {second}")]
    Conflict {
        /// The alias name.
        alias: String,
        /// First target.
        first: String,
        /// Second target.
        second: String,
    },
    /// The target is not a tool anywhere.
    #[error("alias {alias}={target} points at {target}, which is not a known tool")]
    UnknownTarget {
        /// The alias name.
        alias: String,
        /// Its target.
        target: String,
    },
}

impl std::str::FromStr for Alias {
    type Err = AliasError;

    fn from_str(text: &str) -> Result<Self, AliasError> {
        let (from, to) = text
            .split_once('=')
            .ok_or_else(|| AliasError::Malformed(text.to_owned()))?;
        let valid = |name: &str| {
            !name.is_empty()
                && name.len() <= 64
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        let (from, to) = (from.trim(), to.trim());
        if !valid(from) || !valid(to) || from == to {
            return Err(AliasError::Malformed(text.to_owned()));
        }
        Ok(Alias {
            from: from.to_owned(),
            to: to.to_owned(),
        })
    }
}

/// The validated alias table.
#[derive(Debug, Clone, Default)]
pub(crate) struct Aliases {
    map: BTreeMap<String, String>,
}

impl Aliases {
    /// Validates `aliases` against `is_tool` (every tool known before filtering).
    pub(crate) fn new(
        aliases: &[Alias],
        is_tool: impl Fn(&str) -> bool,
    ) -> Result<Self, AliasError> {
        let mut map: BTreeMap<String, String> = BTreeMap::new();
        for alias in aliases {
            if let Some(first) = map.get(&alias.from)
                && first != &alias.to
            {
                return Err(AliasError::Conflict {
                    alias: alias.from.clone(),
                    first: first.clone(),
                    second: alias.to.clone(),
                });
            }
            map.insert(alias.from.clone(), alias.to.clone());
        }
        for (from, to) in &map {
            if map.contains_key(to) {
                return Err(AliasError::Chain(describe_chain(&map, from)));
            }
        }
        for (from, to) in &map {
            if is_tool(from) {
                return Err(AliasError::Shadows {
                    alias: from.clone(),
                    target: to.clone(),
                });
            }
            if !is_tool(to) {
                return Err(AliasError::UnknownTarget {
                    alias: from.clone(),
                    target: to.clone(),
                });
            }
        }
        Ok(Self { map })
    }

    /// The target of `name` if it is an alias.
    pub(crate) fn target(&self, name: &str) -> Option<&str> {
        self.map.get(name).map(String::as_str)
    }

    /// Every alias name.
    pub(crate) fn names(&self) -> impl Iterator<Item = &String> {
        self.map.keys()
    }
}

/// `A -> B -> C`, or `A -> B -> A (cycle)`, starting at `start`.
fn describe_chain(map: &BTreeMap<String, String>, start: &str) -> String {
    let mut chain = vec![start.to_owned()];
    let mut current = start;
    while let Some(next) = map.get(current) {
        if chain.contains(next) {
            chain.push(format!("{next} (cycle)"));
            break;
        }
        chain.push(next.clone());
        current = next;
    }
    chain.join(" -> ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn aliases(pairs: &[&str]) -> Vec<Alias> {
        pairs.iter().map(|p| p.parse().unwrap()).collect()
    }

    fn is_tool(name: &str) -> bool {
        matches!(name, "Read" | "Write")
    }

    #[test]
    fn one_hop_alias_resolves() {
        let table = Aliases::new(&aliases(&["Cat=Read"]), is_tool).unwrap();
        assert_eq!(table.target("Cat"), Some("Read"));
        assert_eq!(table.target("Read"), None);
    }

    #[test]
    fn rejects_bad_configurations_with_names() {
        let cases: &[(&[&str], &str)] = &[
            (&["A=B", "B=Read"], "A -> B -> Read"),
            (&["A=B", "B=A"], "(cycle)"),
            (&["Read=Write"], "shadows the tool Read"),
            (&["Cat=Nope"], "not a known tool"),
            (&["Cat=Read", "Cat=Write"], "defined twice"),
        ];
        for (pairs, expected) in cases {
            let error = Aliases::new(&aliases(pairs), is_tool)
                .unwrap_err()
                .to_string();
            assert!(error.contains(expected), "{pairs:?}: {error}");
        }
    }

    #[test]
    fn rejects_malformed_text() {
        for bad in ["Cat", "=Read", "Cat=", "Cat=Cat", "a b=Read", "Cat=Re;ad"] {
            assert!(bad.parse::<Alias>().is_err(), "{bad}");
        }
    }
}
