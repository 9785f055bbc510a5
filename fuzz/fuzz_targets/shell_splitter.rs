//! Fuzzes the shell splitter Bash rules rely on.
//! The checks live in `warden::fuzzing::shell_splitter`; the corpus replay test runs them too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| warden::fuzzing::shell_splitter(data));
