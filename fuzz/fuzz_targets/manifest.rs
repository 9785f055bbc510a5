//! Fuzzes the plugin manifest (`warden.toml`) parser.
//! The checks live in `warden::fuzzing::manifest`; the corpus replay test runs them too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| warden::fuzzing::manifest(data));
