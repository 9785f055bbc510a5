//! Fuzzes the plugin manifest (`janua.toml`) parser.
//! The checks live in `janua::fuzzing::manifest`; the corpus replay in `janua` runs them too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| janua::fuzzing::manifest(data));
