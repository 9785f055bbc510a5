//! Environment grants: variable names, or globs with `*`, copied from the host's environment.

use std::fmt;

use serde::Deserialize;

/// One allowed environment variable name or `*` glob (`LANG`, `LC_*`).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(try_from = "String")]
pub struct EnvGrant(String);

impl TryFrom<String> for EnvGrant {
    type Error = super::GrantError;

    fn try_from(pattern: String) -> Result<Self, super::GrantError> {
        let valid = !pattern.is_empty()
            && pattern
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '*');
        if valid {
            Ok(Self(pattern))
        } else {
            Err(super::GrantError::EnvPattern { pattern })
        }
    }
}

impl EnvGrant {
    /// True when `name` matches this grant.
    pub fn matches(&self, name: &str) -> bool {
        janua_types::wildcard::matches(&self.0, name)
    }
}

impl fmt::Display for EnvGrant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The variables of `vars` that some grant matches.
pub(crate) fn select(
    grants: &[EnvGrant],
    vars: impl Iterator<Item = (String, String)>,
) -> Vec<(String, String)> {
    if grants.is_empty() {
        return Vec::new();
    }
    vars.filter(|(name, _)| grants.iter().any(|grant| grant.matches(name)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grant(pattern: &str) -> EnvGrant {
        EnvGrant::try_from(pattern.to_owned()).expect("valid pattern")
    }

    #[test]
    fn matches_names_and_globs() {
        let cases: &[(&str, &str, bool)] = &[
            ("HOME", "HOME", true),
            ("HOME", "HOMEDIR", false),
            ("LC_*", "LC_ALL", true),
            ("LC_*", "LANG", false),
            ("*_TOKEN", "GITHUB_TOKEN", true),
            ("*", "ANYTHING", true),
            ("A*B*C", "AxxBxxC", true),
            ("A*B*C", "AxxBxx", false),
        ];
        for (pattern, name, expected) in cases {
            assert_eq!(
                grant(pattern).matches(name),
                *expected,
                "{pattern} vs {name}"
            );
        }
    }

    #[test]
    fn rejects_patterns_with_other_characters() {
        for bad in ["", "A=B", "PATH;rm", "?", "A B"] {
            assert!(EnvGrant::try_from(bad.to_owned()).is_err(), "{bad}");
        }
    }

    #[test]
    fn selects_only_granted_variables() {
        let vars = vec![
            ("KEEP".to_owned(), "1".to_owned()),
            ("SECRET".to_owned(), "2".to_owned()),
        ];
        let chosen = select(&[grant("KEEP")], vars.into_iter());
        assert_eq!(chosen, vec![("KEEP".to_owned(), "1".to_owned())]);
    }
}
