//! Compiles every crate in `tests/guests/` to a wasm32-wasip2 component and generates one path
//! constant per guest plus `foreach_guest!`, which the integration tests use to prove each guest has a
//! test.

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = janua_guest_build::workspace_root(&manifest_dir, 2);
    let guests = janua_guest_build::guests_in(&root.join("tests").join("guests"));
    let paths = janua_guest_build::build_guests(&root, &guests);

    let mut generated = String::new();
    let mut idents = Vec::new();
    for (guest, path) in guests.iter().zip(&paths) {
        let ident = guest.ident();
        writeln!(
            generated,
            "/// Component built from `tests/guests/{}`.\npub const {}: &str = {:?};",
            guest
                .dir
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default(),
            ident.to_uppercase(),
            path.display().to_string()
        )
        .expect("writing to a String cannot fail");
        idents.push(ident);
    }
    writeln!(
        generated,
        "/// Calls `$mac!(ident, PATH)` once per test guest.\n#[macro_export]\nmacro_rules! foreach_guest {{\n    ($mac:ident) => {{"
    )
    .expect("writing to a String cannot fail");
    for ident in &idents {
        writeln!(
            generated,
            "        $mac!({ident}, $crate::{});",
            ident.to_uppercase()
        )
        .expect("writing to a String cannot fail");
    }
    generated.push_str("    };\n}\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    std::fs::write(out.join("guests.rs"), generated).expect("write guests.rs");
    println!("cargo:rerun-if-changed=build.rs");
}
