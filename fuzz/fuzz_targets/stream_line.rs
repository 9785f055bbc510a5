//! Fuzzes the stream-json and JSON-RPC line decoders.
//! The checks live in `warden::fuzzing::stream_line`; the corpus replay test runs them too.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| warden::fuzzing::stream_line(data));
