//! Compiles the default tools in `example-tools/` to wasm32-wasip2 components and generates
//! `embedded_tools.rs`, which embeds them in the `janua` binary (tools in `EMBEDDED_COMPONENTS`,
//! example hooks and monitors in `EMBEDDED_EXTENSIONS`).

use std::fmt::Write as _;

use sha2::Digest as _;
use std::path::PathBuf;

fn main() {
    let manifest_dir = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let root = janua_guest_build::workspace_root(&manifest_dir, 1);
    let guests = janua_guest_build::guests_in(&root.join("example-tools"));
    let paths = janua_guest_build::build_guests(&root, &guests);

    // `hook-*`, `monitor-*` and `workflow-*` crates are examples, shipped for `janua example`; every
    // other crate is a default tool.
    let extension = |ident: &str| {
        ident.starts_with("hook_")
            || ident.starts_with("monitor_")
            || ident.starts_with("workflow_")
    };
    let mut generated = String::new();
    for (name, doc, want_extension) in [
        (
            "EMBEDDED_COMPONENTS",
            "Default tool components embedded in the binary: (crate directory name, component bytes).",
            false,
        ),
        (
            "EMBEDDED_EXTENSIONS",
            "Example hook and monitor components: (crate directory name, component bytes).",
            true,
        ),
    ] {
        if want_extension {
            writeln!(
                generated,
                "/// {doc} Each entry: (crate directory name, artifact file name, component bytes, its\n/// `janua.toml`).\npub(crate) static {name}: &[(&str, &str, &[u8], &str)] = &["
            )
        } else {
            writeln!(
                generated,
                "/// {doc} Each entry: (crate directory name, component bytes, their SHA-256 in hex,\n/// computed here so that start-up does not hash megabytes).\npub(crate) static {name}: &[(&str, &[u8], &str)] = &["
            )
        }
        .expect("writing to a String cannot fail");
        for (guest, path) in guests.iter().zip(&paths) {
            if extension(&guest.ident()) != want_extension {
                continue;
            }
            if want_extension {
                let manifest = guest.dir.join("janua.toml");
                println!("cargo:rerun-if-changed={}", manifest.display());
                writeln!(
                    generated,
                    "    ({:?}, {:?}, include_bytes!({:?}), include_str!({:?})),",
                    guest.ident(),
                    guest.artifact_name(),
                    path.display().to_string(),
                    manifest.display().to_string()
                )
            } else {
                let bytes = std::fs::read(path).expect("read the built component");
                let digest: String = sha2::Sha256::digest(&bytes)
                    .iter()
                    .map(|byte| format!("{byte:02x}"))
                    .collect();
                writeln!(
                    generated,
                    "    ({:?}, include_bytes!({:?}), {digest:?}),",
                    guest.ident(),
                    path.display().to_string()
                )
            }
            .expect("writing to a String cannot fail");
        }
        generated.push_str("];\n");
    }
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("set by cargo"));
    std::fs::write(out.join("embedded_tools.rs"), generated).expect("write embedded_tools.rs");
    println!("cargo:rerun-if-changed=build.rs");
}
