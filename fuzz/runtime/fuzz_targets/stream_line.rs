//! Fuzzes the stream-json and JSON-RPC line decoders.
//! The checks live in `janua::fuzzing::stream_line`; the corpus replay in `janua` runs them too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| janua::fuzzing::stream_line(data));
