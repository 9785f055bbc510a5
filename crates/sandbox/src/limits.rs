//! Hard limits of one call: wall-clock time, linear memory, captured stdio and inline output.

use std::time::Duration;

use serde::Deserialize;

/// Default wall-clock limit of one call.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default linear-memory limit of one call.
pub const DEFAULT_MEMORY_BYTES: u64 = 256 << 20;
/// The largest memory limit anyone may configure; the pooling allocator reserves slots this big.
pub const MAX_MEMORY_BYTES: u64 = 2 << 30;
/// Bytes of guest stdout and of stderr kept per call; the rest is counted and dropped.
pub const DEFAULT_STDIO_BYTES: usize = 64 << 10;
/// Characters of output returned inline to the model.
pub const DEFAULT_OUTPUT_CHARS: usize = 30_000;

/// The limits that apply to one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock budget, enforced by epoch interruption.
    pub timeout: Duration,
    /// Linear memory the guest may grow to, in bytes.
    pub memory_bytes: u64,
    /// Captured bytes of stdout and of stderr.
    pub stdio_bytes: usize,
    /// Characters returned inline before truncation.
    pub output_chars: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            timeout: DEFAULT_TIMEOUT,
            memory_bytes: DEFAULT_MEMORY_BYTES,
            stdio_bytes: DEFAULT_STDIO_BYTES,
            output_chars: DEFAULT_OUTPUT_CHARS,
        }
    }
}

/// Limits a manifest declares for its component; each can only lower the operator's limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeclaredLimits {
    /// Memory in MiB.
    pub memory_mib: Option<u64>,
    /// Timeout in milliseconds.
    pub timeout_ms: Option<u64>,
    /// Inline output characters.
    pub output_chars: Option<usize>,
}

/// Smallest inline output budget: room for real content beside the truncation marker.
pub const MIN_OUTPUT_CHARS: usize = 1000;
/// The most characters any result may return inline, whatever a manifest or setting says.
pub const MAX_OUTPUT_CHARS: usize = 150_000;

impl DeclaredLimits {
    /// What is wrong with these limits, if anything.
    pub fn problem(&self) -> Option<String> {
        if self.memory_mib == Some(0) {
            return Some("limits.memory_mib must be at least 1".to_owned());
        }
        if self.timeout_ms == Some(0) {
            return Some("limits.timeout_ms must be at least 1".to_owned());
        }
        if self
            .output_chars
            .is_some_and(|chars| chars < MIN_OUTPUT_CHARS)
        {
            return Some(format!(
                "limits.output_chars must be at least {MIN_OUTPUT_CHARS}"
            ));
        }
        None
    }
}

impl Limits {
    /// The effective limits: the operator's, lowered by what the component declares.
    pub fn narrowed_by(self, declared: &DeclaredLimits) -> Limits {
        Limits {
            timeout: declared.timeout_ms.map_or(self.timeout, |ms| {
                self.timeout.min(Duration::from_millis(ms))
            }),
            memory_bytes: declared
                .memory_mib
                .map_or(self.memory_bytes, |mib| self.memory_bytes.min(mib << 20)),
            stdio_bytes: self.stdio_bytes,
            output_chars: declared
                .output_chars
                .map_or(self.output_chars, |chars| self.output_chars.min(chars)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn declared_limits_only_lower_the_operator_limits() {
        let operator = Limits::default();
        let declared = DeclaredLimits {
            memory_mib: Some(4096),
            timeout_ms: Some(1000),
            output_chars: None,
        };
        let effective = operator.narrowed_by(&declared);
        assert_eq!(effective.memory_bytes, DEFAULT_MEMORY_BYTES);
        assert_eq!(effective.timeout, Duration::from_secs(1));
        assert_eq!(effective.output_chars, DEFAULT_OUTPUT_CHARS);
    }
}
