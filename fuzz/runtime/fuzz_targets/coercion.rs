//! Fuzzes input coercion toward a tool's JSON Schema.
//! The checks live in `janua::fuzzing::coercion`; the corpus replay in `janua` runs them too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| janua::fuzzing::coercion(data));
