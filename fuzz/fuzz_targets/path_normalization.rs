//! Fuzzes lexical path normalization under rules and grants.
//! The checks live in `janua::fuzzing::path_normalization`; the corpus replay test runs them too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| janua::fuzzing::path_normalization(data));
