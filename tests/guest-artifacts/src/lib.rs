//! Paths of the test guests in `tests/guests/`, compiled to wasm32-wasip2 by this crate's build
//! script, and `foreach_guest!`, which makes a guest without a test a compile error in the suite.
#![warn(missing_docs)]

include!(concat!(env!("OUT_DIR"), "/guests.rs"));
