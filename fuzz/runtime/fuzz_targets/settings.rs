//! Fuzzes the settings-file parser a repository controls.
//! The checks live in `janua::fuzzing::settings`; the corpus replay in `janua` runs them too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| janua::fuzzing::settings(data));
