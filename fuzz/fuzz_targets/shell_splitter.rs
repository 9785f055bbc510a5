//! Fuzzes the shell splitter Bash rules rely on.
//! The checks live in `janua_permissions::fuzzing::shell_splitter`, which also replays the corpus.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(
    // libFuzzer's hook aborts on every panic, even one the splitter catches: brush-parser unwraps
    // in places (integer parses) and the walker turns those panics into an opaque command. With
    // the default hook back, a caught panic is a pass and an uncaught one still aborts, because
    // it cannot unwind out of the fuzzer's `extern "C"` entry point.
    init: drop(std::panic::take_hook()),
    |data: &[u8]| janua_permissions::fuzzing::shell_splitter(data)
);
