//! Fuzzes the permission-rule parser.
//! The checks live in `janua_permissions::fuzzing::rule_parser`, which also replays the corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| janua_permissions::fuzzing::rule_parser(data));
