//! The `janua` Python package (`python/`): its pytest suite run against the real `janua` binary,
//! with the Python, pytest and agent SDKs (anthropic, openai-agents; pinned) the MCP suites'
//! setup installs (`tests/mcp/setup.sh`). Their runners drive the package against the scripted
//! model API stub on loopback (`tests/model-api/stub.py`); a missing SDK fails the suite. The
//! package (`py.typed`) also passes `mypy --strict`.

use std::process::Command;

use crate::mcp_support::{repo, tools_dir};
use crate::support::{cache_dir, janua_bin};

#[test]
fn the_python_package_passes_its_suite_against_the_real_binary() {
    let python = tools_dir().join("venv/bin/python");
    let home = tempfile::tempdir().unwrap();
    let output = Command::new(&python)
        .args(["-m", "pytest", "-q", "-p", "no:cacheprovider"])
        .arg(repo().join("python/tests"))
        .current_dir(home.path())
        .env("PYTHONPATH", repo().join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .env("JANUA_BIN", janua_bin())
        .env("JANUA_CACHE_DIR", cache_dir())
        .env("HOME", home.path())
        .env("XDG_STATE_HOME", home.path().join("state"))
        .env("XDG_CONFIG_HOME", home.path().join("config"))
        .output()
        .expect("run pytest");
    assert!(
        output.status.success(),
        "pytest failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_python_package_type_checks_strictly() {
    let output = Command::new(tools_dir().join("venv/bin/mypy"))
        .args(["--strict", "--cache-dir=/dev/null", "janua"])
        .current_dir(repo().join("python"))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .expect("run mypy");
    assert!(
        output.status.success(),
        "mypy --strict failed:\n{}\n{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
