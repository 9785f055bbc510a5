//! A child's output (stdout and stderr on one pipe, so they interleave as printed) copied to a file
//! in the session, with the head and tail kept in memory and a cap past which the child is killed.

use std::collections::VecDeque;
use std::io::{Read as _, Write as _};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};

/// Bytes of the output's start kept in memory.
pub const HEAD_BYTES: usize = 128 << 10;
/// Bytes of the output's end kept in memory.
pub const TAIL_BYTES: usize = 16 << 10;
/// Default cap on one command's output; the child is killed past it.
pub const DEFAULT_OUTPUT_CAP: u64 = 64 << 20;

/// What has been captured so far; shared between the copying thread and readers.
#[derive(Debug, Default)]
pub struct Captured {
    /// The first bytes of the output.
    pub head: Vec<u8>,
    /// The last bytes of the output (the same bytes as the head when the output is short).
    pub tail: VecDeque<u8>,
    /// Every byte the child wrote, counted.
    pub bytes: u64,
    /// The output passed the cap (and the child's group was killed).
    pub capped: bool,
    /// The pipe reached end of file (every writer is gone).
    pub closed: bool,
    /// Writing the file failed; the capture goes on in memory.
    pub file_error: Option<String>,
    /// The file exists: it is made with the first byte of output.
    pub file_made: bool,
}

/// A spool: the file, and the capture behind a lock with a condition for "more arrived".
#[derive(Debug)]
pub struct Spool {
    /// The file the whole output goes to (up to the cap).
    pub path: PathBuf,
    /// What was captured so far.
    pub captured: Mutex<Captured>,
    /// Signalled whenever more arrives or the pipe closes.
    pub changed: Condvar,
}

impl Spool {
    /// Starts copying `reader` into `path` on a thread. `on_cap` runs once if the output passes
    /// `cap` bytes (it kills the child's group). The file is made with the first byte of output,
    /// on that thread: a command that prints nothing leaves no file behind, and the file's
    /// making (an inode allocation, ≈0.1 ms of CPU) runs beside the command, not before it.
    pub fn start(
        reader: std::io::PipeReader,
        path: PathBuf,
        cap: u64,
        on_cap: impl FnOnce() + Send + 'static,
    ) -> std::io::Result<Arc<Self>> {
        let mut file: Option<std::fs::File> = None;
        let spool = Arc::new(Self {
            path,
            captured: Mutex::new(Captured::default()),
            changed: Condvar::new(),
        });
        let shared = Arc::clone(&spool);
        super::workers::run(move || {
            let mut reader = reader;
            let mut on_cap = Some(on_cap);
            let mut buffer = vec![0u8; 64 << 10];
            loop {
                let read = match reader.read(&mut buffer) {
                    Ok(0) => break,
                    Ok(read) => read,
                    Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(_) => break,
                };
                let mut captured = shared.lock();
                let room = cap.saturating_sub(captured.bytes);
                let keep = &buffer[..read.min(usize::try_from(room).unwrap_or(usize::MAX))];
                if captured.file_error.is_none() && !keep.is_empty() {
                    let written = match &mut file {
                        Some(file) => file.write_all(keep),
                        None => std::fs::File::options()
                            .write(true)
                            .create_new(true)
                            .open(&shared.path)
                            .and_then(|made| {
                                captured.file_made = true;
                                file.insert(made).write_all(keep)
                            }),
                    };
                    if let Err(error) = written {
                        captured.file_error = Some(error.to_string());
                    }
                }
                captured.record(keep);
                if keep.len() < read && !captured.capped {
                    captured.capped = true;
                    if let Some(kill) = on_cap.take() {
                        kill();
                    }
                }
                drop(captured);
                shared.changed.notify_all();
            }
            shared.lock().closed = true;
            shared.changed.notify_all();
        })?;
        Ok(spool)
    }

    /// The capture, locked.
    pub fn lock(&self) -> std::sync::MutexGuard<'_, Captured> {
        self.captured
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }

    /// Waits until the pipe closes or `until` passes; true when it closed.
    pub fn wait_closed(&self, until: std::time::Instant) -> bool {
        let mut captured = self.lock();
        while !captured.closed {
            let Some(left) = until.checked_duration_since(std::time::Instant::now()) else {
                return false;
            };
            captured = self
                .changed
                .wait_timeout(captured, left)
                .unwrap_or_else(|poison| poison.into_inner())
                .0;
        }
        true
    }
}

impl Captured {
    fn record(&mut self, bytes: &[u8]) {
        let head_room = HEAD_BYTES.saturating_sub(self.head.len());
        self.head
            .extend_from_slice(&bytes[..bytes.len().min(head_room)]);
        self.tail.extend(bytes);
        let excess = self.tail.len().saturating_sub(TAIL_BYTES);
        self.tail.drain(..excess);
        self.bytes += bytes.len() as u64;
    }

    /// The head as text, and the tail as text when the output is longer than the head.
    pub fn texts(&self) -> (String, String) {
        let head = String::from_utf8_lossy(&self.head).into_owned();
        let tail = if self.bytes > self.head.len() as u64 {
            let (front, back) = self.tail.as_slices();
            let mut bytes = front.to_vec();
            bytes.extend_from_slice(back);
            String::from_utf8_lossy(&bytes).into_owned()
        } else {
            String::new()
        };
        (head, tail)
    }
}

/// Reads `path` from byte `from`, at most `limit` bytes, as lossy text.
pub fn read_from(path: &std::path::Path, from: u64, limit: usize) -> String {
    use std::io::Seek as _;
    let Ok(mut file) = std::fs::File::open(path) else {
        return String::new();
    };
    if file.seek(std::io::SeekFrom::Start(from)).is_err() {
        return String::new();
    }
    let mut bytes = Vec::new();
    let _ = file.take(limit as u64).read_to_end(&mut bytes);
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_keep_both_ends() {
        let mut captured = Captured::default();
        let chunk = vec![b'a'; HEAD_BYTES];
        captured.record(&chunk);
        captured.record(b"middle");
        captured.record(&vec![b'z'; TAIL_BYTES]);
        let (head, tail) = captured.texts();
        assert_eq!(head.len(), HEAD_BYTES);
        assert!(head.bytes().all(|byte| byte == b'a'));
        assert_eq!(tail.len(), TAIL_BYTES);
        assert!(tail.bytes().all(|byte| byte == b'z'));
        assert_eq!(captured.bytes, (HEAD_BYTES + 6 + TAIL_BYTES) as u64);
    }

    #[test]
    fn short_output_has_no_tail() {
        let mut captured = Captured::default();
        captured.record(b"hello\n");
        assert_eq!(captured.texts(), ("hello\n".to_owned(), String::new()));
    }
}
