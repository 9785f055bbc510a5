//! A capped capture pipe for guest stdout and stderr.
//!
//! wasmtime's `MemoryOutputPipe` traps the guest once full (a chatty guest would die from logging).
//! This pipe keeps `capacity` bytes (the head and the tail of the output), counts what it drops in
//! between and always accepts writes. It
//! implements the WASI p2 stream directly, so a write is a copy into a buffer, with no adapter task.

use std::collections::VecDeque;
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

/// The first quarter of the capacity keeps the head of the output, the rest keeps its tail: a
/// guest's last words (a panic message) survive any flood before them.
#[derive(Default)]
struct Captured {
    head: Vec<u8>,
    tail: VecDeque<u8>,
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

    /// The captured text (lossy UTF-8), with a marker where bytes were dropped, and the number of
    /// bytes dropped.
    pub(crate) fn contents(&self) -> (String, u64) {
        let captured = self
            .inner
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let mut text = String::from_utf8_lossy(&captured.head).into_owned();
        if captured.dropped > 0 {
            text.push_str(&format!("\n[... {} bytes dropped ...]\n", captured.dropped));
        }
        let (first, second) = captured.tail.as_slices();
        text.push_str(&String::from_utf8_lossy(&[first, second].concat()));
        (text, captured.dropped)
    }

    fn append(&self, data: &[u8]) {
        let mut captured = self
            .inner
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        let head_capacity = self.capacity / 4;
        let tail_capacity = self.capacity - head_capacity;
        let room = head_capacity.saturating_sub(captured.head.len());
        let (to_head, rest) = data.split_at(data.len().min(room));
        captured.head.extend_from_slice(to_head);
        // Only the last `tail_capacity` bytes of `rest` can survive; skip the others at once.
        let skipped = rest.len().saturating_sub(tail_capacity);
        let rest = &rest[skipped..];
        let overflow = (captured.tail.len() + rest.len()).saturating_sub(tail_capacity);
        captured.tail.drain(..overflow);
        captured.tail.extend(rest);
        captured.dropped += (skipped + overflow) as u64;
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
    fn keeps_everything_under_the_capacity() {
        let pipe = CappedPipe::new(16);
        pipe.append(b"abc");
        pipe.append(b"def");
        assert_eq!(pipe.contents(), ("abcdef".to_owned(), 0));
    }

    #[test]
    fn keeps_the_head_and_the_tail_and_counts_the_rest() {
        let pipe = CappedPipe::new(8);
        pipe.append(b"ab");
        pipe.append(b"0123456789");
        pipe.append(b"xyz");
        // Head: 2 bytes; tail: the last 6 bytes; 7 dropped in between.
        assert_eq!(
            pipe.contents(),
            ("ab\n[... 7 bytes dropped ...]\n789xyz".to_owned(), 7)
        );
    }
}
