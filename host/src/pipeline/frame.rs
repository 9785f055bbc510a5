//! The per-call frame: everything one call gathers on its way through the stages (the outcome
//! the caller gets, the output rules, the notes for the model) and where in its batch it runs.
//!
//! The session's services ([`super::Services`]) are shared by every call and never change
//! during one; the frame belongs to one call and only the sequencer (`pipeline.rs`) writes it,
//! from what each stage returns. What hooks said besides their verdict reaches it through
//! [`Frame::absorb`], the one place warnings, messages for the user and a stop are merged.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use janua_sandbox::DEFAULT_OUTPUT_CHARS;
use janua_types::ToolUse;

use super::outcome::Outcome;

/// Where in its batch a call runs.
#[derive(Clone, Copy, Default)]
pub(crate) struct Placement<'a> {
    /// False when the call is one of several in its batch, or nested: a PreToolUse `defer` is
    /// then ignored (nobody could resume it alone).
    pub(crate) allow_defer: bool,
    /// The batch's interrupt flag: once set, the call ends `cancelled` before it runs.
    pub(crate) batch_interrupt: Option<&'a AtomicBool>,
    /// True when other calls of the same task run beside this one (a group of concurrency-safe
    /// calls in a batch, or the calls nested in such a call): its guests then take a thread of
    /// their own, so the group uses every core instead of running one guest after another.
    pub(crate) beside_others: bool,
}

impl Placement<'_> {
    /// A call nested in another (the `delegate` import, a sub-agent's call): never deferred, and
    /// interrupted only through its caller's cancel flag, never its caller's batch.
    pub(crate) fn nested(beside_others: bool) -> Placement<'static> {
        Placement {
            allow_defer: false,
            batch_interrupt: None,
            beside_others,
        }
    }
}

/// How the output stage renders one call's result.
pub(crate) struct OutputRules {
    /// Characters returned inline.
    pub(crate) limit: usize,
    /// Strip terminal escape sequences (unless the tool's manifest keeps them).
    pub(crate) strip_escapes: bool,
}

/// What hooks of one stage said besides their verdict.
#[derive(Debug, Default)]
pub(crate) struct HookEffects {
    /// Failures that were ignored and answers that were not used.
    pub(crate) warnings: Vec<String>,
    /// Messages for the user.
    pub(crate) system_messages: Vec<String>,
    /// A hook stopped the agent (`continue: false`, `interrupt`), with this reason.
    pub(crate) stop: Option<String>,
}

/// One call's state between the stages.
pub(crate) struct Frame<'p> {
    /// Where the call runs in its batch.
    pub(crate) placement: Placement<'p>,
    /// Set to cancel the call (by its caller, the batch or a monitor).
    pub(crate) cancel: Arc<AtomicBool>,
    /// What the caller gets besides the result block; filled in stage by stage.
    pub(crate) outcome: Outcome,
    /// How the result is rendered: the tool's inline limit once it is resolved.
    pub(crate) output: OutputRules,
    /// Texts for the model next to the result (hooks' context and feedback), in order.
    pub(crate) notes: Vec<String>,
}

impl<'p> Frame<'p> {
    /// The frame of `call` before any stage ran.
    pub(crate) fn new(call: &ToolUse, placement: Placement<'p>, cancel: Arc<AtomicBool>) -> Self {
        Self {
            placement,
            cancel,
            outcome: Outcome {
                tool_use_id: call.id.clone(),
                requested: call.name.clone(),
                ..Outcome::default()
            },
            output: OutputRules {
                limit: DEFAULT_OUTPUT_CHARS,
                strip_escapes: true,
            },
            notes: Vec::new(),
        }
    }

    /// Merges what a stage's hooks said: warnings and messages in order, and the first stop.
    pub(crate) fn absorb(&mut self, effects: HookEffects) {
        self.outcome.warnings.extend(effects.warnings);
        self.outcome.system_messages.extend(effects.system_messages);
        if self.outcome.stop.is_none() {
            self.outcome.stop = effects.stop;
        }
    }

    /// True once this call, its batch or (for a nested call) its caller was cancelled; an
    /// interrupted batch or caller also sets the call's own flag, so its guest stops.
    pub(crate) fn cancelled(&self, caller_cancelled: bool) -> bool {
        let interrupted = caller_cancelled
            || self
                .placement
                .batch_interrupt
                .is_some_and(|flag| flag.load(Ordering::Relaxed));
        if interrupted {
            self.cancel.store(true, Ordering::Relaxed);
        }
        interrupted || self.cancel.load(Ordering::Relaxed)
    }
}
