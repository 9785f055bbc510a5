//! Small helpers every layer uses: lower-case hex, the wall clock in milliseconds, and writing a
//! file whole (atomically and synced, or atomically only).

use std::io::Write as _;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Lower-case hex of `bytes`.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// Milliseconds since the Unix epoch (0 for a clock set before it).
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|elapsed| u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX))
        .unwrap_or(0)
}

/// Writes `bytes` to `path` through a temporary file in the same directory, synced, and a
/// rename, so readers see the old or the new content, never a mix.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_through_rename(path, bytes, true)
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, without
/// syncing: while the machine runs, readers see no file or the whole file, never part of it; after
/// a crash of the machine (not of janua) the file may be missing, empty or short. For files the
/// session only reads back, such as saved tool results, where a sync per file was most of a large
/// batch's cost.
pub fn write_whole(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_through_rename(path, bytes, false)
}

fn write_through_rename(path: &Path, bytes: &[u8], sync: bool) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut file = tempfile::NamedTempFile::new_in(dir)?;
    file.write_all(bytes)?;
    if sync {
        file.as_file().sync_all()?;
    }
    file.persist(path).map_err(|error| error.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_is_lower_case_and_two_digits_per_byte() {
        assert_eq!(hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        assert_eq!(hex(&[]), "");
    }

    #[test]
    fn both_whole_writes_replace_the_whole_file_and_leave_no_temporary_file() {
        type WholeWrite = fn(&Path, &[u8]) -> std::io::Result<()>;
        let writers: [(&str, WholeWrite); 2] = [
            ("write_atomically", write_atomically),
            ("write_whole", write_whole),
        ];
        for (name, write) in writers {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("state.json");
            write(&path, b"first, longer content").unwrap();
            write(&path, b"second").unwrap();
            assert_eq!(std::fs::read(&path).unwrap(), b"second", "{name}");
            assert_eq!(
                std::fs::read_dir(dir.path()).unwrap().count(),
                1,
                "{name}: no temporary file left"
            );
        }
    }
}
