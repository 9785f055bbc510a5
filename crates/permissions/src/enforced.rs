//! What of the rules the kernel can hold a child process to (issue 31, point 2): the paths of
//! `Read(...)` deny rules become masks and those of `Edit(...)` deny rules read-only mounts in
//! the child's own mount namespace (`janua-confine`'s `view.rs`), together with the protected
//! paths. Only deny rules count: an ask rule the user answered must not turn the approved command
//! into one that cannot do what it was approved for.
//!
//! A rule's compiled globs are read back into three shapes a mount can express; a glob with a
//! wildcard elsewhere (`src/*.key`, `**/*.pem`) is not enforced by the kernel, only by the
//! decision, and is listed so `janua doctor` and the docs can say so.

use std::path::PathBuf;

use janua_types::{Enforceable, Reach};

use super::Policy;
use super::rules::{Family, RuleKind};

impl Policy {
    /// The deny rules' paths the kernel can enforce for a child.
    pub fn enforceable(&self) -> Enforceable {
        let mut enforceable = Enforceable::default();
        for rule in self.rules(RuleKind::Deny) {
            let (Some(family), Some(pattern)) = (rule.family(), rule.path_pattern()) else {
                continue;
            };
            let list = match family {
                Family::Read => &mut enforceable.hidden,
                Family::Edit => &mut enforceable.read_only,
            };
            let reaches: Option<Vec<Reach>> = pattern
                .globs()
                .iter()
                .map(|glob| reach(glob.glob()))
                .collect();
            match reaches {
                Some(reaches) => {
                    for reach in reaches {
                        if !list.contains(&reach) {
                            list.push(reach);
                        }
                    }
                }
                None => enforceable.decision_only.push(rule.text().to_owned()),
            }
        }
        enforceable
    }
}

impl Policy {
    /// True when the kernel view holds a child to `rule`, a Read or Edit deny rule whose every
    /// glob a mount expresses: a command run inside the view cannot break it.
    pub fn kernel_enforces(&self, rule: &super::Rule) -> bool {
        rule.kind() == RuleKind::Deny
            && rule.family().is_some()
            && rule.path_pattern().is_some_and(|pattern| {
                pattern
                    .globs()
                    .iter()
                    .all(|glob| reach(glob.glob()).is_some())
            })
    }
}

/// The shape of one absolute glob: a literal path, `literal/**`, or `literal/**/name`.
fn reach(glob: &str) -> Option<Reach> {
    let literal = |text: &str| !text.contains(['*', '?', '[', ']', '{', '}', '\\']);
    if literal(glob) {
        return Some(Reach::Path(PathBuf::from(glob)));
    }
    if let Some(dir) = glob.strip_suffix("/**")
        && literal(dir)
    {
        return Some(Reach::Tree(PathBuf::from(dir)));
    }
    let (under, name) = glob.split_once("/**/")?;
    let (name, tree) = match name.strip_suffix("/**") {
        Some(name) => (name, true),
        None => (name, false),
    };
    (literal(under) && literal(name) && !name.contains('/')).then(|| Reach::Named {
        under: PathBuf::from(under),
        name: name.to_owned(),
        tree,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Rule, RuleContext, RuleSource};

    #[test]
    fn deny_rules_become_reaches_a_mount_expresses() {
        let mut policy = Policy::new(RuleContext {
            cwd: "/ws".into(),
            home: Some("/home/u".into()),
        });
        for (text, kind) in [
            ("Read(.env)", RuleKind::Deny),
            ("Read(secrets/**)", RuleKind::Deny),
            ("Read(//etc/app.key)", RuleKind::Deny),
            ("Edit(src/generated/**)", RuleKind::Deny),
            ("Edit(*.lock)", RuleKind::Deny),
            ("Read(docs/**)", RuleKind::Ask),
            ("Edit(README.md)", RuleKind::Allow),
        ] {
            let rule = Rule::parse(text, kind, RuleSource::CommandLine, policy.context()).unwrap();
            policy.add(rule);
        }
        let enforceable = policy.enforceable();
        let named = Reach::Named {
            under: "/ws".into(),
            name: ".env".into(),
            tree: false,
        };
        assert!(enforceable.hidden.contains(&named), "{enforceable:?}");
        assert!(
            enforceable
                .hidden
                .contains(&Reach::Path("/etc/app.key".into())),
            "{enforceable:?}"
        );
        assert!(
            enforceable.hidden.iter().any(
                |reach| matches!(reach, Reach::Named { name, tree: true, .. } if name == "secrets")
            ),
            "{enforceable:?}"
        );
        assert!(
            enforceable
                .read_only
                .contains(&Reach::Tree("/ws/src/generated".into())),
            "{enforceable:?}"
        );
        assert_eq!(enforceable.decision_only, ["Edit(*.lock)"]);
        assert!(
            !enforceable
                .hidden
                .iter()
                .any(|reach| format!("{reach:?}").contains("docs")),
            "ask rules are not enforced by the kernel"
        );
    }
}
