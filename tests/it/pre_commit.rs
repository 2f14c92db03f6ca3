//! `gitops-lint pre-commit`: HEAD against the staged index, in real
//! repositories driven with the git command line.

use crate::common;

use std::path::Path;

use assert_cmd::Command;
use common::{git, APP, PVC};

fn write(dir: &Path, path: &str, text: &str) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

fn repo() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("tmp");
    git(tmp.path(), &["init", "-q", "-b", "main"]);
    write(tmp.path(), "apps/payments.yaml", APP);
    write(tmp.path(), "payments/pvc.yaml", PVC);
    write(
        tmp.path(),
        "payments/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
    );
    tmp
}

fn pre_commit(dir: &Path) -> (i32, String) {
    let out = Command::cargo_bin("gitops-lint")
        .expect("binary")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .current_dir(dir)
        .args(["pre-commit", "--format", "json"])
        .output()
        .expect("runs");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn initial_commit_with_no_head_works() {
    let tmp = repo();
    git(tmp.path(), &["add", "-A"]);
    let (code, out) = pre_commit(tmp.path());
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    assert_eq!(v["base"], "EMPTY");
    assert_eq!(v["head"], "INDEX");
    assert_eq!(v["apps"][0]["name"], "payments");
    // The empty base is not linted as an implicit app beside the real one.
    assert_eq!(v["apps"].as_array().map(Vec::len), Some(1), "{out}");
    assert!(!v["notes"].to_string().contains("implicit"), "{out}");
}

/// Argo CD introduced by a commit into a repository of plain manifests:
/// the base's implicit app is not listed beside the new Application.
#[test]
fn first_application_added_to_plain_manifests_lists_only_real_apps() {
    let tmp = repo();
    std::fs::remove_file(tmp.path().join("apps/payments.yaml")).expect("rm");
    git(tmp.path(), &["add", "-A"]);
    git(tmp.path(), &["commit", "-q", "-m", "plain manifests"]);
    write(tmp.path(), "apps/payments.yaml", APP);
    git(tmp.path(), &["add", "-A"]);
    let (code, out) = pre_commit(tmp.path());
    assert_eq!(code, 0, "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let names: Vec<&str> = v["apps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["name"].as_str())
        .collect();
    assert_eq!(names, ["payments"], "{out}");
    assert!(!v["notes"].to_string().contains("implicit"), "{out}");
}

#[test]
fn only_staged_deletions_count() {
    let tmp = repo();
    git(tmp.path(), &["add", "-A"]);
    git(tmp.path(), &["commit", "-q", "-m", "base"]);
    // Deleted in the working tree only: not part of the commit, not reported.
    std::fs::remove_file(tmp.path().join("payments/pvc.yaml")).expect("rm");
    let (code, out) = pre_commit(tmp.path());
    assert_eq!(code, 0, "{out}");
    assert!(!out.contains("GL001"), "{out}");
    // Staged: the commit would delete the PVC.
    git(tmp.path(), &["rm", "-q", "payments/pvc.yaml"]);
    let (code, out) = pre_commit(tmp.path());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("\"GL001\""), "{out}");
    // Restored in the working tree but still staged as deleted: still reported.
    write(tmp.path(), "payments/pvc.yaml", PVC);
    let (code, _) = pre_commit(tmp.path());
    assert_eq!(code, 1);
}
