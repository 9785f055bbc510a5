//! The host's `browser` capability: a headless Chromium per session, a fresh page per call, for
//! components whose grants say `browser = true`.
//!
//! - `launch.rs` finds and starts the browser under the process sandbox, with no network;
//! - `cdp.rs` speaks the DevTools protocol to it over a pipe;
//! - `intercept.rs` answers every request a page makes, under the call's net policy;
//! - `page.rs` opens a call's page and runs the operations on it.
//!
//! The browser starts at a session's first browser call, in a fresh profile under the session
//! directory, and is killed with its whole process group (and the profile removed) when the
//! session ends. A call's page lives in a browser context of its own, closed when the call ends,
//! so calls share no cookies or storage.

mod cdp;
mod intercept;
mod launch;
mod page;

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub use launch::{NoBrowser, find_browser};
pub(crate) use page::PageInfo;

use super::http::NetPolicy;
use janua_confine::ProcessSandbox;

/// Time kept back from the call's deadline, so a step stopped at its own limit leaves the guest
/// time to report it.
const DEADLINE_MARGIN: Duration = Duration::from_millis(300);

/// Refused main documents kept per call for the pipeline.
const MAX_BLOCKED: usize = 8;

/// Why a browser request failed (the `browser-error` of the WIT interface).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum BrowserError {
    /// The component has no browser grant.
    #[error("{0}")]
    NotGranted(String),
    /// No browser, or it could not start or stopped answering.
    #[error("{0}")]
    Unavailable(String),
    /// The network policy refused the page.
    #[error("{0}")]
    Blocked(String),
    /// The step ran out of time.
    #[error("{0}")]
    Timeout(String),
    /// No element matches, or the selector is not valid.
    #[error("{0}")]
    NoElement(String),
    /// The page's script threw, or an expression would have had side effects.
    #[error("{0}")]
    ScriptError(String),
    /// `open` has not been called in this call.
    #[error("{0}")]
    NoPage(String),
    /// Anything else.
    #[error("{0}")]
    Failed(String),
}

/// Where a session's browser runs and what it may read.
#[derive(Debug, Clone)]
pub struct BrowserConfig {
    /// The session directory; profiles are made under its `browser/`.
    pub session_dir: PathBuf,
    /// Directories `file://` pages may show and the browser may read: the workspace and the
    /// additional directories.
    pub file_roots: Vec<PathBuf>,
    /// The deny rules' paths, enforced by the browser's view of `file_roots`.
    pub enforceable: janua_types::Enforceable,
    /// The operator's process-sandbox mode.
    pub sandbox: ProcessSandbox,
    /// The embedder's browser; `None`: [`find_browser`] at each start.
    pub executable: Option<PathBuf>,
}

/// A running browser: killed, profile removed, when the last holder drops it.
pub(crate) struct RunningBrowser {
    process: Mutex<launch::BrowserProcess>,
    connection: Arc<cdp::Connection>,
    profile: PathBuf,
    /// A browser-level command ran out of time: the next call starts a new browser.
    stuck: AtomicBool,
    /// Removed when the browser is dropped, after the process is killed.
    _scratch: tempfile::TempDir,
}

impl RunningBrowser {
    /// True while the browser process runs (its pipe may close a moment after it dies).
    fn alive(&self) -> bool {
        self.process
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .alive()
    }

    fn stop(&self) {
        self.process
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .kill();
        if let Err(error) = std::fs::remove_dir_all(&self.profile)
            && error.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(
                target: "janua::browser",
                "cannot remove the browser profile {}: {error}",
                self.profile.display()
            );
        }
    }
}

impl Drop for RunningBrowser {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A session's browser, started on first use.
pub struct BrowserService {
    config: BrowserConfig,
    running: Mutex<Option<Arc<RunningBrowser>>>,
    started: AtomicU32,
    ended: AtomicBool,
}

impl BrowserService {
    /// A service that has started nothing yet.
    pub fn new(config: BrowserConfig) -> Self {
        let file_roots = config
            .file_roots
            .iter()
            .map(|root| std::fs::canonicalize(root).unwrap_or_else(|_| root.clone()))
            .collect();
        Self {
            config: BrowserConfig {
                file_roots,
                ..config
            },
            running: Mutex::default(),
            started: AtomicU32::new(0),
            ended: AtomicBool::new(false),
        }
    }

    /// The running browser, started (again, if it died or stopped answering) when needed; a
    /// start waits for the browser until `until` at most.
    fn browser(&self, until: Instant) -> Result<Arc<RunningBrowser>, BrowserError> {
        if self.config.sandbox != ProcessSandbox::Required {
            // Without the namespace the browser's own network (WebSockets, WebRTC, prefetches
            // the interception does not see) would reach the host's; no browser rather than that.
            return Err(BrowserError::Unavailable(
                "the browser runs only under the process sandbox (janua doctor); it is off here"
                    .to_owned(),
            ));
        }
        let mut running = self
            .running
            .lock()
            .unwrap_or_else(|poison| poison.into_inner());
        // Checked under the lock, so no browser starts after `shutdown` took it.
        if self.ended.load(Ordering::Relaxed) {
            return Err(BrowserError::Unavailable(
                "the session has ended".to_owned(),
            ));
        }
        if let Some(browser) = running.as_ref()
            && browser.connection.closed().is_none()
            && !browser.stuck.load(Ordering::Relaxed)
            && browser.alive()
        {
            return Ok(Arc::clone(browser));
        }
        if let Some(dead) = running.take() {
            dead.stop();
        }
        let executable = match &self.config.executable {
            Some(path) if path.is_file() => path.clone(),
            Some(path) => {
                return Err(BrowserError::Unavailable(format!(
                    "the configured browser {} is not a file",
                    path.display()
                )));
            }
            None => find_browser().map_err(|error| BrowserError::Unavailable(error.to_string()))?,
        };
        let number = self.started.fetch_add(1, Ordering::Relaxed);
        let profile = self
            .config
            .session_dir
            .join("browser")
            .join(format!("profile-{}-{number}", std::process::id()));
        let scratch = tempfile::Builder::new()
            .prefix("janua-browser-")
            .tempdir()
            .map_err(|error| {
                BrowserError::Unavailable(format!(
                    "cannot create the browser's scratch directory: {error}"
                ))
            })?;
        let launched = launch::launch(&launch::LaunchConfig {
            executable,
            profile: profile.clone(),
            scratch: scratch.path().to_path_buf(),
            read_dirs: self.config.file_roots.clone(),
            enforceable: self.config.enforceable.clone(),
            sandbox: self.config.sandbox,
            until,
        });
        let (process, connection) = match launched {
            Ok(launched) => launched,
            Err(error) => {
                let _ = std::fs::remove_dir_all(&profile);
                return Err(BrowserError::Unavailable(error.to_string()));
            }
        };
        tracing::info!(target: "janua::browser", "browser started (pid {})", process.pid());
        let browser = Arc::new(RunningBrowser {
            process: Mutex::new(process),
            connection,
            profile,
            stuck: AtomicBool::new(false),
            _scratch: scratch,
        });
        *running = Some(Arc::clone(&browser));
        Ok(browser)
    }

    /// Kills the browser and removes its profile; no browser starts after this.
    pub fn shutdown(&self) {
        self.ended.store(true, Ordering::Relaxed);
        let running = self
            .running
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .take();
        if let Some(browser) = running {
            browser.stop();
        }
    }
}

impl Drop for BrowserService {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// What one call may do with the browser.
pub struct BrowserAccess {
    /// The session's browser.
    pub service: Arc<BrowserService>,
    /// What the page's requests may reach; `None` refuses them all.
    pub policy: Option<Arc<NetPolicy>>,
    /// The runtime the page's request interception runs on.
    pub runtime: tokio::runtime::Handle,
    /// Paths the session's Read deny rules hide; `file://` never shows them.
    pub hidden: Option<super::HiddenPaths>,
    page: Option<page::Page>,
    /// A step was refused by the policy (the main document) or ran out of time: evidence the
    /// pipeline needs before it calls the tool's error `permission_denied` or `timeout`.
    blocked: Vec<String>,
    timed_out: bool,
}

/// One browser request's controls: the call's cancellation flag and deadline.
pub(crate) struct BrowserLink<'a> {
    pub access: Option<&'a mut BrowserAccess>,
    pub cancel: &'a AtomicBool,
    pub deadline: Instant,
}

impl BrowserAccess {
    /// Access for one call.
    pub fn new(
        service: Arc<BrowserService>,
        policy: Option<Arc<NetPolicy>>,
        runtime: tokio::runtime::Handle,
        hidden: Option<super::HiddenPaths>,
    ) -> Self {
        Self {
            service,
            policy,
            runtime,
            hidden,
            page: None,
            blocked: Vec::new(),
            timed_out: false,
        }
    }

    /// What the pipeline reads after the call: main documents the policy refused, and whether a
    /// step ran out of time.
    pub fn outcome(&self) -> (Vec<String>, bool) {
        (self.blocked.clone(), self.timed_out)
    }
}

impl BrowserLink<'_> {
    fn until(&self, timeout_ms: u64) -> Instant {
        let last = self
            .deadline
            .checked_sub(DEADLINE_MARGIN)
            .unwrap_or(self.deadline);
        // The guest chooses `timeout_ms`: a huge one must not overflow the clock.
        Instant::now()
            .checked_add(Duration::from_millis(timeout_ms.max(1)))
            .map_or(last, |asked| asked.min(last))
    }

    fn access(&mut self) -> Result<&mut BrowserAccess, BrowserError> {
        self.access.as_deref_mut().ok_or_else(|| {
            BrowserError::NotGranted(
                "this component's grants do not include the browser (`browser = true` in janua.toml)"
                    .to_owned(),
            )
        })
    }

    /// Records what the pipeline must know about `result` and passes it on.
    fn note<T>(&mut self, result: Result<T, BrowserError>) -> Result<T, BrowserError> {
        if let Some(access) = self.access.as_deref_mut() {
            match &result {
                Err(BrowserError::Blocked(reason)) if access.blocked.len() < MAX_BLOCKED => {
                    access.blocked.push(reason.clone());
                }
                Err(BrowserError::Timeout(_)) => access.timed_out = true,
                _ => {}
            }
        }
        result
    }

    /// Navigates the call's page (opening it first) to `url`.
    pub(crate) fn open(&mut self, url: &str, timeout_ms: u64) -> Result<PageInfo, BrowserError> {
        let until = self.until(timeout_ms);
        let deadline = self.deadline;
        let cancel = self.cancel;
        let result = (|| {
            let access = self.access()?;
            // A browser that died since the last call (killed, crashed) is noticed here at the
            // latest: its page cannot open, so one new browser is started and asked again.
            for attempt in 0..2 {
                if access.page.is_some() {
                    break;
                }
                let browser = access.service.browser(until)?;
                let opened = page::Page::open(
                    Arc::clone(&browser),
                    page::PageSetup {
                        runtime: &access.runtime,
                        policy: access.policy.clone(),
                        files: intercept::FileScope {
                            roots: access.service.config.file_roots.clone(),
                            hidden: access.hidden.clone(),
                        },
                        call_deadline: deadline,
                    },
                    until,
                );
                match opened {
                    Ok(page) => access.page = Some(page),
                    Err(BrowserError::Unavailable(_) | BrowserError::Timeout(_))
                        if attempt == 0
                            && (browser.connection.closed().is_some()
                                || browser.stuck.load(Ordering::Relaxed)
                                || !browser.alive()) => {}
                    Err(error) => return Err(error),
                }
            }
            let page = access.page.as_ref().ok_or_else(no_page)?;
            page.navigate(url, until, &|| cancel.load(Ordering::Relaxed))
        })();
        self.note(result)
    }

    /// Runs `step` on the call's open page.
    fn on_page<T>(
        &mut self,
        timeout_ms: u64,
        step: impl FnOnce(&page::Page, Instant, &dyn Fn() -> bool) -> Result<T, BrowserError>,
    ) -> Result<T, BrowserError> {
        let until = self.until(timeout_ms);
        let cancel = self.cancel;
        let result = (|| {
            let access = self.access()?;
            let page = access.page.as_ref().ok_or_else(no_page)?;
            step(page, until, &|| cancel.load(Ordering::Relaxed))
        })();
        self.note(result)
    }

    /// Waits for `selector`.
    pub(crate) fn wait_for_selector(
        &mut self,
        selector: &str,
        timeout_ms: u64,
    ) -> Result<(), BrowserError> {
        self.on_page(timeout_ms, |page, until, stop| {
            page.wait_for_selector(selector, until, stop)
        })
    }

    /// Waits for `idle_ms` without requests.
    pub(crate) fn wait_for_network_idle(
        &mut self,
        idle_ms: u64,
        timeout_ms: u64,
    ) -> Result<(), BrowserError> {
        self.on_page(timeout_ms, |page, until, stop| {
            page.wait_for_network_idle(Duration::from_millis(idle_ms), until, stop)
        })
    }

    /// The page's (or an element's) text.
    pub(crate) fn text(
        &mut self,
        selector: Option<&str>,
        timeout_ms: u64,
    ) -> Result<String, BrowserError> {
        self.on_page(timeout_ms, |page, until, _| page.text(selector, until))
    }

    /// The page's accessibility tree.
    pub(crate) fn accessibility_tree(&mut self, timeout_ms: u64) -> Result<String, BrowserError> {
        self.on_page(timeout_ms, |page, until, _| page.accessibility_tree(until))
    }

    /// Clicks `selector`.
    pub(crate) fn click(&mut self, selector: &str, timeout_ms: u64) -> Result<(), BrowserError> {
        self.on_page(timeout_ms, |page, until, stop| {
            page.click(selector, until, stop)
        })
    }

    /// Types `text` into `selector`.
    pub(crate) fn type_text(
        &mut self,
        selector: &str,
        text: &str,
        timeout_ms: u64,
    ) -> Result<(), BrowserError> {
        self.on_page(timeout_ms, |page, until, stop| {
            page.type_text(selector, text, until, stop)
        })
    }

    /// Evaluates a side-effect-free expression; the value as JSON text.
    pub(crate) fn evaluate(
        &mut self,
        expression: &str,
        timeout_ms: u64,
    ) -> Result<String, BrowserError> {
        self.on_page(timeout_ms, |page, until, _| {
            page.evaluate(expression, until)
                .map(|value| value.to_string())
        })
    }

    /// A PNG of the viewport.
    pub(crate) fn screenshot(&mut self, timeout_ms: u64) -> Result<Vec<u8>, BrowserError> {
        self.on_page(timeout_ms, |page, until, _| page.screenshot(until))
    }

    /// What the policy refused in this call.
    pub(crate) fn refused(&mut self) -> Vec<String> {
        self.access
            .as_deref()
            .and_then(|access| access.page.as_ref())
            .map(page::Page::refused)
            .unwrap_or_default()
    }
}

fn no_page() -> BrowserError {
    BrowserError::NoPage("no page is open in this call: call open(url) first".to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_step_never_outlives_the_call_and_huge_limits_do_not_overflow() {
        let cancel = AtomicBool::new(false);
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut link = BrowserLink {
            access: None,
            cancel: &cancel,
            deadline,
        };
        assert_eq!(link.until(u64::MAX), deadline - DEADLINE_MARGIN);
        assert!(link.until(100) < deadline - Duration::from_secs(9));
        let refused = link.open("http://127.0.0.1/", 1000).unwrap_err();
        assert!(
            matches!(refused, BrowserError::NotGranted(message) if message.contains("browser = true"))
        );
        assert!(matches!(
            link.text(None, 1000),
            Err(BrowserError::NotGranted(_))
        ));
        assert!(link.refused().is_empty());
    }
}
