//! The project a Claude Code hook event is decided for: fixed for the session, never taken from
//! a `cwd` the model's `cd` moves. It reads no settings; `claude_hook.rs` does, for this project.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{ClaudeHookOptions, ClaudeHookRequest};

/// The project of each Claude Code session a long-lived janua has seen, so that a model's `cd`
/// never moves the settings a call is decided by.
#[derive(Debug, Default)]
pub struct SessionProjects {
    projects: Mutex<Pins>,
}

/// Each session's project and when it was last used.
#[derive(Debug, Default)]
struct Pins {
    by_session: HashMap<String, (PathBuf, u64)>,
    clock: u64,
}

/// Sessions remembered at most: past it the least recently used quarter is forgotten (a
/// forgotten session's project is found again from its transcript path), so the sessions in use
/// stay pinned.
const MAX_SESSIONS: usize = 16_384;

impl SessionProjects {
    fn pinned(&self, session: &str) -> Option<PathBuf> {
        let mut pins = self.lock();
        pins.clock += 1;
        let now = pins.clock;
        pins.by_session.get_mut(session).map(|(project, used)| {
            *used = now;
            project.clone()
        })
    }

    fn pin(&self, session: &str, project: &Path) {
        let mut pins = self.lock();
        if pins.by_session.len() >= MAX_SESSIONS {
            let mut ages: Vec<u64> = pins.by_session.values().map(|(_, used)| *used).collect();
            ages.sort_unstable();
            let cutoff = ages[MAX_SESSIONS / 4];
            pins.by_session.retain(|_, (_, used)| *used > cutoff);
        }
        pins.clock += 1;
        let now = pins.clock;
        pins.by_session
            .insert(session.to_owned(), (project.to_path_buf(), now));
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Pins> {
        self.projects
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
    }
}

/// The project of the session `request` belongs to: `--cwd`, `$CLAUDE_PROJECT_DIR` (Claude Code
/// sets it for command hooks; not read by `hook serve`), the project pinned for the session,
/// else the farthest of the event's `cwd` and its parents that Claude Code's transcript path
/// names; the event's `cwd`
/// alone only when Claude Code sent no transcript path of that shape. `Err` when the transcript names none of
/// them: the model's `cd` left the project before janua saw the session.
pub(super) fn session_project(
    base: &Path,
    request: &ClaudeHookRequest,
    options: &ClaudeHookOptions,
) -> Result<PathBuf, UnplacedSession> {
    if options.keep_workspace {
        return Ok(base.to_path_buf());
    }
    let pins = options.session_projects.as_deref();
    // A command hook's own environment, set by Claude Code for this session; never a
    // long-lived server's, which would pin every session to wherever it was started.
    if pins.is_none()
        && let Some(project) = std::env::var_os("CLAUDE_PROJECT_DIR").filter(|dir| !dir.is_empty())
    {
        return Ok(PathBuf::from(project));
    }
    if let Some(project) = pins
        .zip(request.session_id.as_deref())
        .and_then(|(pins, session)| pins.pinned(session))
    {
        return Ok(project);
    }
    let Some(cwd) = &request.cwd else {
        return Ok(base.to_path_buf());
    };
    let project = match &request.transcript_path {
        Some(transcript) if recorded_project(transcript).is_some() => {
            project_named_by(cwd, transcript).ok_or_else(|| UnplacedSession {
                cwd: cwd.clone(),
                transcript: transcript.clone(),
            })?
        }
        _ => cwd.clone(),
    };
    if let (Some(pins), Some(session)) = (pins, request.session_id.as_deref()) {
        pins.pin(session, &project);
    }
    Ok(project)
}

/// The name of the project directory Claude Code keeps `transcript` in
/// (`…/projects/NAME/SESSION.jsonl`); `None` for a path of another shape.
fn recorded_project(transcript: &Path) -> Option<&str> {
    let directory = transcript.parent()?;
    if directory.parent()?.file_name()? != "projects" {
        return None;
    }
    directory.file_name()?.to_str()
}

/// A session janua first sees outside the project its transcript names: the model's `cd` left
/// the project before janua could fix it.
#[derive(Debug, thiserror::Error)]
#[error(
    "none of {} and its parents is the project Claude Code's transcript {} belongs to",
    cwd.display(),
    transcript.display()
)]
pub(super) struct UnplacedSession {
    cwd: PathBuf,
    transcript: PathBuf,
}

/// The farthest of `cwd`'s parents (or `cwd` itself) whose name under Claude Code's `projects`
/// directory is the directory `transcript` is in: the model can make directories below the
/// project, never above it, so a name it made to match (past 200 characters only a 32-bit hash
/// tells two names apart) is never preferred to the project's own.
fn project_named_by(cwd: &Path, transcript: &Path) -> Option<PathBuf> {
    let recorded = recorded_project(transcript)?;
    let mut ancestors: Vec<&Path> = cwd.ancestors().collect();
    ancestors.reverse();
    ancestors
        .into_iter()
        .find(|candidate| claude_project_name(&candidate.to_string_lossy()) == recorded)
        .map(Path::to_path_buf)
}

/// The name Claude Code gives the project `path` under its `projects` directory: every UTF-16
/// unit that is not an ASCII letter or digit becomes `-`; a name past 200 units is cut there and
/// followed by `-` and the path's 32-bit string hash (`h = 31 h + unit`), unsigned, in base 36.
fn claude_project_name(path: &str) -> String {
    const LONGEST: usize = 200;
    let name: String = path
        .encode_utf16()
        .map(|unit| match char::from_u32(u32::from(unit)) {
            Some(c) if c.is_ascii_alphanumeric() => c,
            _ => '-',
        })
        .collect();
    if name.len() <= LONGEST {
        return name;
    }
    let hash = path.encode_utf16().fold(0i32, |hash, unit| {
        hash.wrapping_mul(31).wrapping_add(i32::from(unit))
    });
    let mut magnitude = i64::from(hash).unsigned_abs();
    let mut digits = Vec::new();
    loop {
        digits.push(char::from_digit((magnitude % 36) as u32, 36).unwrap_or('0'));
        magnitude /= 36;
        if magnitude == 0 {
            break;
        }
    }
    let hash: String = digits.into_iter().rev().collect();
    format!("{}-{hash}", &name[..LONGEST])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sessions_in_use_stay_pinned_past_the_cap() {
        let pins = SessionProjects::default();
        pins.pin("active", Path::new("/project"));
        for index in 0..(MAX_SESSIONS * 2) {
            pins.pin(&format!("flood-{index}"), Path::new("/elsewhere"));
            if index % 1000 == 0 {
                assert!(pins.pinned("active").is_some(), "lost at {index}");
            }
        }
        assert_eq!(
            pins.pinned("active").as_deref(),
            Some(Path::new("/project"))
        );
        assert!(pins.lock().by_session.len() <= MAX_SESSIONS);
    }

    #[test]
    fn finds_the_project_claude_codes_transcript_names() {
        let transcript = |name: &str| PathBuf::from(format!("/h/.claude/projects/{name}/s.jsonl"));
        let cases = [
            ("/tmp/exp/proj/sub", "-tmp-exp-proj", Some("/tmp/exp/proj")),
            ("/tmp/exp/proj", "-tmp-exp-proj", Some("/tmp/exp/proj")),
            ("/tmp/exp.proj/a/b", "-tmp-exp-proj", Some("/tmp/exp.proj")),
            ("/home/zoë/p", "-home-zo--p", Some("/home/zoë/p")),
            ("/elsewhere", "-tmp-exp-proj", None),
            ("/tmp/exp/project", "-tmp-exp-proj", None),
        ];
        for (cwd, name, expected) in cases {
            assert_eq!(
                project_named_by(Path::new(cwd), &transcript(name)),
                expected.map(PathBuf::from),
                "{cwd} {name}"
            );
        }
        let long = format!("/{}", "d".repeat(250));
        let name = claude_project_name(&long);
        assert_eq!(name.len(), 200 + 1 + name[201..].len());
        assert_ne!(name, claude_project_name(&format!("{long}/sub")));
        assert_eq!(
            project_named_by(Path::new(&format!("{long}/sub")), &transcript(&name)),
            Some(PathBuf::from(&long))
        );
        // The hashes Claude Code 2.1.332's own function gives these paths.
        assert_eq!(
            claude_project_name(&"a".repeat(201)),
            format!("{}-rkvsv5", "a".repeat(200))
        );
        assert!(name.ends_with("-bagbv5"), "{name}");
        // A transcript outside a `projects` directory names no project.
        assert_eq!(recorded_project(Path::new("/tmp/t.jsonl")), None);
    }
}
