//! Fuzzes lexical path normalization under rules and grants.
//! The checks live in `janua_permissions::fuzzing::path_normalization`, which also replays the corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| janua_permissions::fuzzing::path_normalization(data));
