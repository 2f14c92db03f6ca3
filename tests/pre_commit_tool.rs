//! The hook in `.pre-commit-hooks.yaml` through the real `pre-commit` tool:
//! runs `scripts/test-pre-commit-hook.sh`, which installs pre-commit from
//! PyPI into a venv under the target directory and drives `pre-commit
//! try-repo` against a throwaway repository. It fails, never skips, when
//! pre-commit cannot be installed.

use std::process::Command;

#[test]
fn hook_runs_under_real_pre_commit() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("bash")
        .arg(format!("{root}/scripts/test-pre-commit-hook.sh"))
        .env_remove("CARGO_TARGET_DIR")
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
