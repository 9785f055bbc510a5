//! Fuzzes the shell splitter Bash rules rely on: any command line must split or be reported
//! opaque, never panic or overflow the stack.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|command: &str| {
    let (subcommands, opaque) = warden::split_command(command);
    if opaque.is_none() {
        // Every simple command a line holds is at most as long as the line.
        for sub in subcommands {
            assert!(sub.len() <= command.len() + 8 * command.matches('(').count() + 8);
        }
    }
});
