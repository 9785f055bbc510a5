//! The limits of analysis end to end, as a user meets them: a trusted project's
//! `.janua/settings.json` allows `Bash` and `Edit` broadly and denies `Bash(rm *)`,
//! `Read(./.env)` and `Edit(./secrets/**)`; every case goes through `janua check` (the hook
//! surface and the kernel view's) and through a real `janua call Bash`, whose side effects are
//! looked for on disk. Each case sits beside its control.

use serde_json::{Value, json};

use crate::cli::{janua, json_stdout};
use crate::support::Fixture;

const SECRET: &str = "DOTENV_SECRET_4711";

/// A workspace whose project settings (`.janua/settings.json`, the file users write) hold
/// `permissions`.
fn workspace_with(permissions: Value) -> Fixture {
    let fixture = Fixture::new();
    write_permissions(&fixture, permissions);
    fixture
}

/// Writes `permissions` to the fixture's project settings.
fn write_permissions(fixture: &Fixture, permissions: Value) {
    fixture.write(
        ".janua/settings.json",
        json!({ "permissions": permissions }).to_string(),
    );
}

/// A workspace with `.env`, `secrets/k`, `src/lib.rs`, a `victim` file and the project's rules.
fn project() -> Fixture {
    let fixture = Fixture::new();
    fixture.write(".env", format!("TOKEN={SECRET}\n"));
    fixture.write("secrets/k", "key\n");
    fixture.write("src/lib.rs", "// TODO: more\n");
    fixture.write("victim", "still here\n");
    write_permissions(
        &fixture,
        json!({
            "allow": ["Bash", "Edit", "Read", "Write"],
            "deny": ["Bash(rm *)", "Read(./.env)", "Edit(./secrets/**)"],
        }),
    );
    fixture
}

/// `janua check Bash` on `surface`: the decision and its reason.
fn check(fixture: &Fixture, command: &str, surface: &str, args: &[&str]) -> (String, String) {
    let input = json!({ "command": command }).to_string();
    let mut all = vec!["--trust-workspace"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["check", "Bash", "--surface", surface, "--input", &input]);
    let output = janua(fixture, &all);
    let printed = json_stdout(&output);
    assert_eq!(output.status.code(), Some(0), "{printed}");
    assert_eq!(printed["surface"], surface, "{printed}");
    (
        printed["decision"].as_str().unwrap_or_default().to_owned(),
        printed["reason"].as_str().unwrap_or_default().to_owned(),
    )
}

/// A real `janua call Bash`: the result block.
fn call(fixture: &Fixture, command: &str, args: &[&str]) -> Value {
    let input = json!({ "command": command }).to_string();
    let mut all = vec!["--trust-workspace"];
    all.extend_from_slice(args);
    all.extend_from_slice(&["call", "Bash", "--input", &input]);
    json_stdout(&janua(fixture, &all))
}

/// True for janua's `permission_denied` result (not a command that ran and failed).
fn denied(block: &Value) -> bool {
    block["is_error"] == true
        && block["content"]
            .as_str()
            .is_some_and(|text| text.starts_with("permission_denied: "))
}

#[test]
fn padding_past_the_length_limit_does_not_walk_around_a_deny_rule() {
    let fixture = project();
    let padded = format!("echo {} >/dev/null; rm -rf victim", "x".repeat(10_001));
    let (decision, reason) = check(&fixture, &padded, "hook", &[]);
    assert_eq!(decision, "deny", "{reason}");
    assert!(reason.contains("Bash(rm *)"), "{reason}");
    let block = call(&fixture, &padded, &[]);
    assert!(denied(&block), "{}", block["content"]);
    assert!(fixture.workspace().join("victim").exists());
    // The control: the same padding around a harmless command runs under the bare allow.
    let harmless = format!("echo {} >/dev/null; echo done", "x".repeat(10_001));
    let (decision, reason) = check(&fixture, &harmless, "hook", &[]);
    assert_eq!(
        decision, "deny",
        "{reason}: a deny rule could match unparsed text"
    );
    let no_deny = workspace_with(json!({"allow": ["Bash"]}));
    let (decision, reason) = check(&no_deny, &harmless, "hook", &[]);
    assert_eq!(decision, "allow", "{reason}");
}

#[test]
fn substitutions_and_code_strings_meet_the_deny_rules() {
    let fixture = project();
    for command in [
        "sh -c \"$(echo rm) -rf victim\"",
        "bash -c 'eval \"$(printf rm) victim\"'",
        "python3 -c \"import os; os.remove('victim')\"",
        "tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec='rm -f victim' src",
        "git -c core.pager='rm -f victim' log",
    ] {
        let (decision, reason) = check(&fixture, command, "hook", &[]);
        assert_eq!(decision, "deny", "{command}: {reason}");
        // Bash deny rules hold inside the kernel view too.
        let (decision, reason) = check(&fixture, command, "confined", &[]);
        assert_eq!(decision, "deny", "{command}: {reason}");
        let block = call(&fixture, command, &[]);
        assert!(denied(&block), "{command}: {block}");
        assert!(fixture.workspace().join("victim").exists(), "{command}");
    }
    // Controls: an expansion in an argument is not a program; with no deny rule a code string
    // breaks nothing, so the allow rule decides.
    let open = workspace_with(json!({"allow": ["Bash"]}));
    for (fixture, command) in [
        (&fixture, "echo $(echo 42)"),
        (&open, "python3 -c 'print(6 * 7)'"),
    ] {
        let (decision, reason) = check(fixture, command, "hook", &[]);
        assert_eq!(decision, "allow", "{command}: {reason}");
        let block = call(fixture, command, &[]);
        assert_eq!(block["is_error"], false, "{command}: {block}");
        assert!(block["content"].as_str().unwrap_or_default().contains("42"));
    }
}

#[test]
fn a_script_on_disk_is_read_like_a_code_string() {
    let fixture = project();
    fixture.write("clean.sh", "#!/bin/sh\nrm -f victim\n");
    fixture.write("build.sh", "#!/bin/sh\necho built\n");
    let script = fixture.workspace().join("clean.sh");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    for command in [
        "sh clean.sh",
        "bash ./clean.sh",
        "source clean.sh",
        "./clean.sh",
    ] {
        let (decision, reason) = check(&fixture, command, "hook", &[]);
        assert_eq!(decision, "deny", "{command}: {reason}");
        let block = call(&fixture, command, &[]);
        assert!(denied(&block), "{command}: {block}");
        assert!(fixture.workspace().join("victim").exists(), "{command}");
    }
    // A script the line itself writes cannot be read before it runs.
    let (decision, reason) = check(
        &fixture,
        "echo 'echo hi' > new.sh && sh new.sh",
        "hook",
        &[],
    );
    assert_eq!(decision, "deny", "{reason}");
    // The control: a script that breaks no rule runs, and make is make's own.
    fixture.write("Makefile", "hello:\n\t@echo made\n");
    for (command, printed) in [("sh build.sh", "built"), ("make -s hello", "made")] {
        let (decision, reason) = check(&fixture, command, "hook", &[]);
        assert_eq!(decision, "allow", "{command}: {reason}");
        let block = call(&fixture, command, &[]);
        assert_eq!(block["is_error"], false, "{command}: {block}");
        assert!(
            block["content"]
                .as_str()
                .unwrap_or_default()
                .contains(printed),
            "{command}: {block}"
        );
    }
}

#[test]
fn read_denies_see_directories_and_code_strings_and_the_kernel_view_counts() {
    let fixture = project();
    // Placed, not unknown: nothing under src can be .env.
    let (decision, reason) = check(&fixture, "grep -r TODO src", "hook", &[]);
    assert_eq!(decision, "allow", "{reason}");
    for command in ["grep -r DOTENV .", "cat .en?"] {
        let (decision, reason) = check(&fixture, command, "hook", &[]);
        assert_eq!(decision, "deny", "{command}: {reason}");
        assert!(reason.contains("Read(./.env)"), "{command}: {reason}");
    }
    // In janua's own Bash the view masks .env: the command runs and the secret stays hidden (a
    // project without a Bash deny rule, which a code string could always break).
    let fixture = Fixture::new();
    fixture.write(".env", format!("TOKEN={SECRET}\n"));
    write_permissions(
        &fixture,
        json!({"allow": ["Bash"], "deny": ["Read(./.env)"]}),
    );
    let (decision, reason) = check(
        &fixture,
        "python3 -c \"print(open('.env').read())\"",
        "hook",
        &[],
    );
    assert_eq!(decision, "deny", "{reason}");
    assert!(reason.contains("Read(./.env)"), "{reason}");
    for command in [
        "grep -r TOKEN . || true",
        "python3 -c \"print(open('.env').read())\" 2>&1 || true",
    ] {
        let (decision, reason) = check(&fixture, command, "confined", &[]);
        assert_eq!(decision, "allow", "{command}: {reason}");
        let block = call(&fixture, command, &[]);
        let text = block["content"].as_str().unwrap_or_default();
        assert!(!text.contains(SECRET), "{command}: {text}");
        assert_eq!(block["is_error"], false, "{command}: {block}");
    }
}

#[test]
fn edit_denies_see_programs_that_change_files_and_redirects_are_writes() {
    let fixture = project();
    for command in [
        "find secrets -delete",
        "mv secrets /tmp/janua-moved-secrets",
        "git rm -r secrets",
        "echo x > secrets/k",
        "truncate -s 0 secrets/k",
    ] {
        let (decision, reason) = check(&fixture, command, "hook", &[]);
        assert_eq!(decision, "deny", "{command}: {reason}");
        assert!(reason.contains("Edit(./secrets/**)"), "{command}: {reason}");
        let block = call(&fixture, command, &[]);
        assert!(denied(&block), "{command}: {block}");
        assert_eq!(
            std::fs::read_to_string(fixture.workspace().join("secrets/k")).unwrap(),
            "key\n",
            "{command}"
        );
    }
    // The control: a redirect into a workspace file under the broad Edit allow.
    for command in ["echo hi >> notes.txt", "ls > listing.txt 2>&1"] {
        let (decision, reason) = check(&fixture, command, "hook", &[]);
        assert_eq!(decision, "allow", "{command}: {reason}");
        let block = call(&fixture, command, &[]);
        assert_eq!(block["is_error"], false, "{command}: {block}");
    }
    assert_eq!(
        std::fs::read_to_string(fixture.workspace().join("notes.txt")).unwrap(),
        "hi\n"
    );
    // Without an Edit allow, the reason names the redirect, not a missing Bash rule.
    let bare = workspace_with(json!({"allow": ["Bash"]}));
    let (decision, reason) = check(&bare, "echo hi >> notes.txt", "hook", &[]);
    assert_eq!(decision, "ask", "{reason}");
    assert!(
        reason.contains("notes.txt") && reason.contains("Edit allow"),
        "{reason}"
    );
}

#[test]
fn a_prefix_allow_never_approves_an_option_that_runs_a_program() {
    let fixture = Fixture::new();
    fixture.write("x", "x\n");
    fixture.write("e.sh", "#!/bin/sh\ntouch ran\n");
    let script = fixture.workspace().join("e.sh");
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    write_permissions(
        &fixture,
        json!({"allow": ["Bash(tar *)"], "defaultMode": "dontAsk"}),
    );
    let command = "tar -cf /dev/null --checkpoint=1 --checkpoint-action=exec=./e.sh x";
    let (decision, reason) = check(&fixture, command, "hook", &[]);
    assert_eq!(decision, "deny", "{reason}");
    let block = call(&fixture, command, &[]);
    assert!(denied(&block), "{block}");
    assert!(!fixture.workspace().join("ran").exists());
    // The control: the same allow rule approves a plain archive.
    let (decision, reason) = check(&fixture, "tar -cf out.tar x", "hook", &[]);
    assert_eq!(decision, "allow", "{reason}");
}

/// Disguises of `rm -rf victim` the property test generates, through `check` and a real call, in
/// the most permissive mode: none is allowed and the file survives every one.
#[test]
fn generated_disguises_are_stopped_through_check_and_a_real_call() {
    let fixture = Fixture::new();
    fixture.write("victim", "still here\n");
    write_permissions(
        &fixture,
        json!({"allow": ["Bash"], "deny": ["Bash(rm *)"], "defaultMode": "bypassPermissions"}),
    );
    let core = "rm -rf victim";
    for command in [
        format!("echo {} >/dev/null; {core}", "x".repeat(10_001)),
        format!("bash -c \"$(echo '{core}')\""),
        "timeout 5 $(echo rm) -rf victim".to_owned(),
        "strace -f -o /dev/null $(echo rm) -rf victim".to_owned(),
        format!("perl -e 'system(q{{{core}}})'"),
        format!("node -e 'require(\"child_process\").execSync(\"{core}\")'"),
        format!("echo '{core}' | sh"),
        format!("bash <<'EOF'\n{core}\nEOF"),
        format!("env PAGER='{core}' git -p help"),
        format!("awk 'BEGIN {{system(\"{core}\")}}'"),
        format!("ssh -o ProxyCommand='{core}' host.invalid"),
        format!("find . -maxdepth 0 -exec sh -c '{core}' \\;"),
    ] {
        let (decision, reason) = check(&fixture, &command, "hook", &[]);
        assert_ne!(decision, "allow", "{command}: {reason}");
        let block = call(&fixture, &command, &[]);
        assert_eq!(block["is_error"], true, "{command}: {block}");
        assert!(
            fixture.workspace().join("victim").exists(),
            "{command}: {block}"
        );
    }
}

/// A link to, or a copy of, a system program (made in an earlier call, where nothing broke a
/// rule) is that program to deny rules: `./rr victim` with `rr -> rm`, `./rmcopy victim`.
#[test]
fn links_and_copies_of_a_denied_program_are_that_program() {
    let fixture = project();
    let rm = ["/usr/bin/rm", "/bin/rm"]
        .into_iter()
        .map(std::path::Path::new)
        .find(|path| path.exists())
        .expect("rm");
    let ws = fixture.workspace();
    std::os::unix::fs::symlink(rm, ws.join("rr")).unwrap();
    std::fs::copy(rm, ws.join("rmcopy")).unwrap();
    for command in ["./rr victim", "./rmcopy victim"] {
        let (decision, reason) = check(&fixture, command, "hook", &[]);
        assert_eq!(decision, "deny", "{command}: {reason}");
        assert!(reason.contains("Bash(rm *)"), "{command}: {reason}");
        let block = call(&fixture, command, &[]);
        assert!(denied(&block), "{command}: {block}");
        assert!(ws.join("victim").exists(), "{command}");
    }
    // The control: a copy of another program runs.
    let echo = ["/usr/bin/echo", "/bin/echo"]
        .into_iter()
        .map(std::path::Path::new)
        .find(|path| path.exists())
        .expect("echo");
    std::fs::copy(echo, ws.join("say")).unwrap();
    let (decision, reason) = check(&fixture, "./say hello", "hook", &[]);
    assert_eq!(decision, "allow", "{reason}");
}
