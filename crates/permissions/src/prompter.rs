//! Prompters: who answers an `ask`. With none available, `ask` becomes a denial that says what
//! would allow the call. The stream-json prompter (`control_request`) implements the same trait.

use std::io::{BufRead, Write};
use std::sync::Mutex;

use serde::Serialize;

use super::bash::allow_form;
use super::rules::{Family, is_shell_tool};
use super::shell::join;
use super::target::Target;

/// What a prompter is asked.
#[derive(Debug, Clone, Serialize)]
pub struct PermissionRequest {
    /// Canonical tool name.
    pub tool: String,
    /// The input the tool would receive.
    pub input: serde_json::Value,
    /// Why the engine asks.
    pub reason: String,
    /// The allow rules "allow always" would add (empty when no exact rule can be written, e.g. a
    /// value holding `*`).
    pub suggestions: Vec<String>,
}

/// A prompter's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptAnswer {
    /// Allow this call.
    Allow,
    /// Allow this call and add the request's suggested rules to the session.
    AllowAlways,
    /// Deny this call, with a message for the model.
    Deny(String),
    /// Nobody can answer (headless).
    Unavailable,
}

/// Answers permission requests (a TTY, a stream-json peer, a hook).
pub trait Prompter: Send + Sync {
    /// Answers `request`.
    fn ask(&self, request: &PermissionRequest) -> PromptAnswer;
}

/// The headless prompter: nobody can answer, so every `ask` is denied.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPrompter;

impl Prompter for NoPrompter {
    fn ask(&self, _request: &PermissionRequest) -> PromptAnswer {
        PromptAnswer::Unavailable
    }
}

type Terminal = (Box<dyn BufRead + Send>, Box<dyn Write + Send>);

/// An interactive prompt: the question on one stream (stderr), the answer from another (the
/// controlling terminal), one call at a time.
pub struct TtyPrompter {
    terminal: Mutex<Terminal>,
}

impl TtyPrompter {
    /// A prompter reading answers from `input` and writing questions to `output`.
    pub fn new(input: Box<dyn BufRead + Send>, output: Box<dyn Write + Send>) -> Self {
        Self {
            terminal: Mutex::new((input, output)),
        }
    }

    /// A prompter on the controlling terminal, when stderr is one and `/dev/tty` can be opened.
    pub fn from_terminal() -> Option<Self> {
        use std::io::IsTerminal as _;
        if !std::io::stderr().is_terminal() {
            return None;
        }
        let tty = std::fs::File::open("/dev/tty").ok()?;
        Some(Self::new(
            Box::new(std::io::BufReader::new(tty)),
            Box::new(std::io::stderr()),
        ))
    }
}

impl Prompter for TtyPrompter {
    fn ask(&self, request: &PermissionRequest) -> PromptAnswer {
        let Ok(mut terminal) = self.terminal.lock() else {
            return PromptAnswer::Unavailable;
        };
        let (input, output) = &mut *terminal;
        let shown_input = serde_json::to_string_pretty(&request.input).unwrap_or_default();
        let always = if request.suggestions.is_empty() {
            "allow always is not offered: no exact rule can be written for this input".to_owned()
        } else {
            format!("2 allow always (adds {})", request.suggestions.join(", "))
        };
        for _attempt in 0..3 {
            let written = writeln!(
                output,
                "\njanua: {tool} wants to run\n{shown_input}\nwhy it asks: {reason}\n  1 allow once\n  {always}\n  3 deny\nanswer [1/2/3]: ",
                tool = request.tool,
                reason = request.reason,
            )
            .and_then(|()| output.flush());
            if written.is_err() {
                return PromptAnswer::Unavailable;
            }
            let mut line = String::new();
            match input.read_line(&mut line) {
                Ok(0) | Err(_) => return PromptAnswer::Deny("denied: no answer".to_owned()),
                Ok(_) => {}
            }
            match line.trim().to_ascii_lowercase().as_str() {
                "1" | "y" | "yes" => return PromptAnswer::Allow,
                "2" | "a" | "always" if !request.suggestions.is_empty() => {
                    return PromptAnswer::AllowAlways;
                }
                "3" | "n" | "no" | "d" | "deny" => {
                    return PromptAnswer::Deny("the user denied this call".to_owned());
                }
                _ => {}
            }
        }
        PromptAnswer::Deny("denied: no valid answer".to_owned())
    }
}

/// The exact allow rules that would cover this call next time: one per subcommand for shell
/// tools (at most five), the absolute path for path tools, the value for plugin tools, the bare
/// name otherwise. Values holding `*` get no suggestion, since `*` would widen the rule.
pub fn suggest_rule(tool: &str, target: &Target) -> Vec<String> {
    match target {
        Target::Command(command) => {
            if command.parsed.opaque.is_some() {
                return Vec::new();
            }
            let mut rules = Vec::new();
            for sub in &command.parsed.subcommands {
                let Some(form) = allow_form(sub) else {
                    return Vec::new();
                };
                let text = join(&form);
                if text.contains('*') || text.contains(')') || text.starts_with("argv:") {
                    return Vec::new();
                }
                let rule = format!("{tool}({text})");
                if !rules.contains(&rule) {
                    rules.push(rule);
                }
            }
            if rules.len() > 5 {
                return Vec::new();
            }
            rules
        }
        Target::Path(path) => {
            let escaped = globset::escape(&path.lexical.to_string_lossy());
            let family = match Family::of(tool) {
                Some(Family::Edit) => "Edit",
                Some(Family::Read) => "Read",
                None => tool,
            };
            vec![format!("{family}(/{escaped})")]
        }
        Target::Field(value) | Target::Url { url: value, .. } => {
            if value.contains(['*', ')']) || is_shell_tool(tool) {
                Vec::new()
            } else {
                vec![format!("{tool}({value})")]
            }
        }
        Target::None => vec![tool.to_owned()],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;
    use std::sync::Arc;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn request(suggestions: &[&str]) -> PermissionRequest {
        PermissionRequest {
            tool: "Echo".into(),
            input: serde_json::json!({"text": "hi"}),
            reason: "Echo is not read-only".into(),
            suggestions: suggestions.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn tty_answers() {
        let cases = [
            ("1\n", &["Echo(hi)"][..], PromptAnswer::Allow),
            ("2\n", &["Echo(hi)"][..], PromptAnswer::AllowAlways),
            ("y\n", &[][..], PromptAnswer::Allow),
            (
                "3\n",
                &[][..],
                PromptAnswer::Deny("the user denied this call".into()),
            ),
            ("", &[][..], PromptAnswer::Deny("denied: no answer".into())),
            (
                "x\nx\nx\n",
                &[][..],
                PromptAnswer::Deny("denied: no valid answer".into()),
            ),
            // "always" is not offered without a suggestion, so it is not a valid answer.
            ("2\n1\n", &[][..], PromptAnswer::Allow),
        ];
        for (typed, suggestions, expected) in cases {
            let output = Shared::default();
            let prompter = TtyPrompter::new(
                Box::new(Cursor::new(typed.as_bytes().to_vec())),
                Box::new(output.clone()),
            );
            assert_eq!(prompter.ask(&request(suggestions)), expected, "{typed:?}");
            let shown = String::from_utf8(output.0.lock().unwrap().clone()).unwrap();
            assert!(shown.contains("Echo wants to run"), "{shown}");
            assert!(shown.contains("\"text\": \"hi\""), "{shown}");
            assert!(shown.contains("Echo is not read-only"), "{shown}");
        }
    }

    #[test]
    fn suggestions_are_exact() {
        let cwd = std::path::Path::new("/ws");
        let bash = |command: &str| {
            Target::new(
                "Bash",
                Some("command"),
                false,
                &serde_json::json!({ "command": command }),
                cwd,
                None,
            )
        };
        assert_eq!(
            suggest_rule("Bash", &bash("git status && timeout 5 npm test")),
            ["Bash(git status)", "Bash(npm test)"]
        );
        assert!(suggest_rule("Bash", &bash("ls *.rs")).is_empty());
        assert!(suggest_rule("Bash", &bash("PATH=/x ls")).is_empty());
        let path = Target::new(
            "Write",
            Some("file_path"),
            true,
            &serde_json::json!({"file_path": "a[1].txt"}),
            cwd,
            None,
        );
        assert_eq!(suggest_rule("Write", &path), ["Edit(//ws/a[[]1[]].txt)"]);
        assert_eq!(
            suggest_rule("Echo", &Target::Field("hi".into())),
            ["Echo(hi)"]
        );
        assert!(suggest_rule("Echo", &Target::Field("h*".into())).is_empty());
    }
}
