//! A capped capture pipe for guest stdout and stderr.
//!
//! wasmtime's `MemoryOutputPipe` traps the guest once full (a chatty guest would die from logging).
//! This pipe keeps the first `capacity` bytes, counts the rest and always accepts writes.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

/// Shared capture buffer; clones write to and read from the same buffer.
#[derive(Clone)]
pub(crate) struct CappedPipe {
    inner: Arc<Mutex<Captured>>,
    capacity: usize,
}

#[derive(Default)]
struct Captured {
    bytes: Vec<u8>,
    dropped: u64,
}

impl CappedPipe {
    /// A pipe keeping at most `capacity` bytes.
    pub(crate) fn new(capacity: usize) -> Self {
        Self {
            inner: Arc::default(),
            capacity,
        }
    }

    /// The captured text (lossy UTF-8) and the number of bytes dropped past the cap.
    pub(crate) fn contents(&self) -> (String, u64) {
        let captured = self
            .inner
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        (
            String::from_utf8_lossy(&captured.bytes).into_owned(),
            captured.dropped,
        )
    }

    fn write(&self, data: &[u8]) {
        let mut captured = self
            .inner
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let room = self.capacity.saturating_sub(captured.bytes.len());
        let kept = data.len().min(room);
        captured.bytes.extend_from_slice(&data[..kept]);
        captured.dropped += (data.len() - kept) as u64;
    }
}

impl IsTerminal for CappedPipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for CappedPipe {
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl tokio::io::AsyncWrite for CappedPipe {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.write(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_head_and_counts_the_rest() {
        let pipe = CappedPipe::new(4);
        pipe.write(b"abc");
        pipe.write(b"defgh");
        assert_eq!(pipe.contents(), ("abcd".to_owned(), 4));
    }
}
