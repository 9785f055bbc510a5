//! Fuzzes the permission-rule parser.
//! The checks live in `janua::fuzzing::rule_parser`; the corpus replay test runs them too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| janua::fuzzing::rule_parser(data));
