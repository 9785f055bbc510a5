//! Fuzzes the permission-rule parser: any text, as any rule kind, must parse or fail with a
//! typed error, never panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use warden::{Rule, RuleContext, RuleKind, RuleSource};

fuzz_target!(|text: &str| {
    let context = RuleContext {
        cwd: "/ws".into(),
        home: Some("/home/u".into()),
    };
    for kind in [RuleKind::Allow, RuleKind::Ask, RuleKind::Deny] {
        if let Ok(rule) = Rule::parse(text, kind, RuleSource::CommandLine, &context) {
            // A parsed rule reparses to the same text.
            let again = Rule::parse(rule.text(), kind, RuleSource::CommandLine, &context)
                .expect("a parsed rule reparses");
            assert_eq!(again.text(), rule.text());
        }
    }
});
