//! Replays every committed fuzz seed and every regression input through the same checks the
//! fuzz targets run (`janua::fuzzing`), on the stable toolchain, so a fixed crash stays fixed.

use std::path::Path;

#[test]
fn every_fuzz_seed_and_regression_passes_its_target() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz");
    for (name, target) in janua::fuzzing::TARGETS {
        let mut replayed = 0;
        for kind in ["corpus", "regressions"] {
            let dir = root.join(kind).join(name);
            let entries = std::fs::read_dir(&dir)
                .unwrap_or_else(|error| panic!("{}: {error}", dir.display()));
            for entry in entries {
                let path = entry.expect("directory entry").path();
                if path.file_name().is_some_and(|file| file == ".gitkeep") {
                    continue;
                }
                let data = std::fs::read(&path).expect("read a fuzz input");
                let outcome = std::panic::catch_unwind(|| target(&data));
                assert!(outcome.is_ok(), "{name} fails on {}", path.display());
                replayed += 1;
            }
        }
        assert!(replayed >= 5, "{name} has only {replayed} seeds");
    }
}
