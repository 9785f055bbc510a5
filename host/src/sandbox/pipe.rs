//! A capped capture pipe for guest stdout and stderr.
//!
//! wasmtime's `MemoryOutputPipe` traps the guest once full (a chatty guest would die from logging).
//! This pipe keeps the first `capacity` bytes, counts the rest and always accepts writes. It
//! implements the WASI p2 stream directly, so a write is a copy into a buffer, with no adapter task.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamResult};

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

    fn append(&self, data: &[u8]) {
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

    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(self.clone())
    }
}

/// Permit handed to the guest per write; any size works because writes never fail.
const WRITE_PERMIT: usize = 64 << 10;

#[async_trait::async_trait]
impl OutputStream for CappedPipe {
    fn write(&mut self, bytes: bytes::Bytes) -> StreamResult<()> {
        self.append(&bytes);
        Ok(())
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        Ok(WRITE_PERMIT)
    }
}

#[async_trait::async_trait]
impl Pollable for CappedPipe {
    async fn ready(&mut self) {}
}

impl tokio::io::AsyncWrite for CappedPipe {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.append(buf);
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
        pipe.append(b"abc");
        pipe.append(b"defgh");
        assert_eq!(pipe.contents(), ("abcd".to_owned(), 4));
    }
}
