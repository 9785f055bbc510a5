//! `--tools`: which built-in tools are registered (`""` none, `default` the ordinary set, or a list).

use super::RegistryError;

/// A selection from the built-in set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ToolSelection {
    /// The ordinary set (every built-in tool).
    #[default]
    Default,
    /// No built-in tools.
    None,
    /// Exactly these tools.
    List(Vec<String>),
}

impl std::str::FromStr for ToolSelection {
    type Err = std::convert::Infallible;

    /// Parses the `--tools` value: empty, `default`, or names separated by commas or spaces.
    fn from_str(value: &str) -> Result<Self, Self::Err> {
        let trimmed = value.trim();
        Ok(match trimmed {
            "" => ToolSelection::None,
            "default" => ToolSelection::Default,
            list => ToolSelection::List(
                list.split([',', ' '])
                    .map(str::trim)
                    .filter(|name| !name.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ),
        })
    }
}

impl ToolSelection {
    /// The chosen names from `available`; an unknown name is an error listing what exists.
    pub(crate) fn choose(&self, available: &[String]) -> Result<Vec<String>, RegistryError> {
        match self {
            ToolSelection::Default => Ok(available.to_vec()),
            ToolSelection::None => Ok(Vec::new()),
            ToolSelection::List(names) => {
                let unknown: Vec<&str> = names
                    .iter()
                    .filter(|name| !available.contains(name))
                    .map(String::as_str)
                    .collect();
                if unknown.is_empty() {
                    Ok(names.clone())
                } else {
                    let mut sorted = available.to_vec();
                    sorted.sort();
                    Err(RegistryError::UnknownSelection {
                        unknown: unknown.join(", "),
                        available: sorted.join(", "),
                    })
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_form() {
        let cases: &[(&str, ToolSelection)] = &[
            ("", ToolSelection::None),
            ("  ", ToolSelection::None),
            ("default", ToolSelection::Default),
            ("Read", ToolSelection::List(vec!["Read".into()])),
            (
                "Read, Edit Glob",
                ToolSelection::List(vec!["Read".into(), "Edit".into(), "Glob".into()]),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(
                &text.parse::<ToolSelection>().unwrap(),
                expected,
                "{text:?}"
            );
        }
    }

    #[test]
    fn unknown_names_are_an_error_naming_what_exists() {
        let available = vec!["Read".to_owned()];
        let error = ToolSelection::List(vec!["Raed".into()])
            .choose(&available)
            .unwrap_err();
        let message = error.to_string();
        assert!(
            message.contains("Raed") && message.contains("Read"),
            "{message}"
        );
    }
}
