//! The hooks in `.pre-commit-hooks.yaml` through the real `pre-commit` tool:
//! runs `scripts/test-pre-commit-hook.sh`, which installs pre-commit from
//! PyPI into venvs under the target directory and drives `pre-commit
//! try-repo` against a throwaway repository: `gitops-lint-system` with the
//! binary these tests built on PATH, `gitops-lint` built by pre-commit with
//! cargo. It fails, never skips, when pre-commit cannot be installed.

use std::path::Path;
use std::process::Command;

#[test]
fn hook_runs_under_real_pre_commit() {
    let root = env!("CARGO_MANIFEST_DIR");
    let bin = env!("CARGO_BIN_EXE_gitops-lint");
    // The target directory these tests were built in (TARGET/debug/gitops-lint),
    // wherever CARGO_TARGET_DIR put it: the script writes only under it.
    let target = Path::new(bin)
        .parent()
        .and_then(Path::parent)
        .expect("the binary is in a profile directory of the target directory");
    let out = Command::new("bash")
        .arg(format!("{root}/scripts/test-pre-commit-hook.sh"))
        .env("CARGO_TARGET_DIR", target)
        .env("GITOPS_LINT_BIN", bin)
        .output()
        .expect("bash runs");
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{log}");
    assert!(log.contains("test-pre-commit-hook: ok"), "{log}");
}

/// The README's pre-commit configuration names both hooks and the minimum
/// pre-commit version the script above checks with pre-commit 3.0.4.
#[test]
fn readme_pre_commit_config_shows_both_hooks_and_the_minimum_version() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md"))
        .expect("README.md");
    let start = readme
        .find("# .pre-commit-config.yaml\n")
        .expect("a .pre-commit-config.yaml example");
    let example = &readme[start..start + readme[start..].find("```").expect("end of block")];
    for line in [
        "minimum_pre_commit_version: \"3.2.0\"",
        "- id: gitops-lint ",
        "- id: gitops-lint-system ",
    ] {
        assert!(example.contains(line), "{line:?} not in\n{example}");
    }
    let hooks = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join(".pre-commit-hooks.yaml"),
    )
    .expect("hooks");
    assert_eq!(
        hooks
            .matches("minimum_pre_commit_version: \"3.2.0\"")
            .count(),
        2
    );
}
