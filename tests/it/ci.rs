//! Situations CI checkouts create, each with real git repositories: a
//! shallow clone without the base commit, a detached HEAD, no `origin/HEAD`,
//! no base branch at all. Each must either work and say what it compared, or
//! stop with exit status 2 and one message saying what to do.

use crate::common;

use std::path::Path;

use assert_cmd::Command;
use common::{git, APP, PVC};
use gitops_lint::source::write_commit;

/// An origin repository: `main` holds the app with its PVC (base); `change`
/// (one commit ahead) deletes the PVC. Returns (origin dir, base, head).
fn origin(tmp: &Path, main: &str) -> (std::path::PathBuf, String, String) {
    origin_with(tmp, main, &[])
}

/// [`origin`] with `extra` files committed at both revisions.
fn origin_with(
    tmp: &Path,
    main: &str,
    extra: &[(&str, &str)],
) -> (std::path::PathBuf, String, String) {
    let dir = tmp.join("origin");
    let files = |with_pvc: bool| {
        let mut f = vec![
            ("apps/payments.yaml".to_string(), APP.as_bytes().to_vec()),
            // The clones' remote is a file:// URL: name the Applications' URL.
            (
                ".gitops-lint.yaml".to_string(),
                b"repoUrls: [https://git.example.com/gitops.git]\n".to_vec(),
            ),
            (
                "payments/cm.yaml".to_string(),
                b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n".to_vec(),
            ),
        ];
        if with_pvc {
            f.push(("payments/pvc.yaml".to_string(), PVC.as_bytes().to_vec()));
        }
        f.extend(
            extra
                .iter()
                .map(|(p, t)| ((*p).to_string(), t.as_bytes().to_vec())),
        );
        f
    };
    let base = write_commit(&dir, main, None, &files(true), "base").expect("base");
    let head = write_commit(&dir, "change", Some(main), &files(false), "drop pvc").expect("head");
    (dir, base, head)
}

fn clone(tmp: &Path, origin: &Path, extra: &[&str]) -> std::path::PathBuf {
    let url = format!("file://{}", origin.display());
    let mut args = vec!["clone", "-q"];
    args.extend_from_slice(extra);
    args.push(&url);
    args.push("clone");
    git(tmp, &args);
    tmp.join("clone")
}

fn lint(dir: &Path, args: &[&str]) -> (i32, String, String) {
    let out = Command::cargo_bin("gitops-lint")
        .expect("binary")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn shallow_clone_without_the_base_commit_names_the_fix() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (origin, base, _) = origin(tmp.path(), "main");
    let dir = clone(tmp.path(), &origin, &["--depth", "1", "--branch", "change"]);
    let range = format!("{base}..HEAD");
    let (code, stdout, stderr) = lint(&dir, &["diff", &range]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(stderr.contains("shallow clone"), "{stderr}");
    assert!(stderr.contains("fetch-depth: 0"), "{stderr}");
    assert!(stderr.contains("git fetch --unshallow"), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    // After unshallowing, the same command works and finds the prune.
    git(&dir, &["fetch", "-q", "--unshallow"]);
    let (code, stdout, _) = lint(&dir, &["diff", &range, "--format", "json"]);
    assert_eq!(code, 1, "{stdout}");
    assert!(stdout.contains("\"GL001\""));
}

#[test]
fn shallow_clone_with_no_base_branch_names_the_fix() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (origin, _, _) = origin(tmp.path(), "trunk");
    let dir = clone(tmp.path(), &origin, &["--depth", "1", "--branch", "change"]);
    git(&dir, &["remote", "set-head", "origin", "-d"]);
    let (code, _, stderr) = lint(&dir, &["diff"]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("pass a range such as `main..HEAD`"),
        "{stderr}"
    );
    assert!(stderr.contains("fetch-depth: 0"), "{stderr}");
    assert!(
        stderr.contains("github.event.pull_request.base.sha"),
        "{stderr}"
    );
}

#[test]
fn detached_head_compares_with_the_default_base_and_says_so() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (origin, _, head) = origin(tmp.path(), "main");
    let dir = clone(tmp.path(), &origin, &[]);
    git(&dir, &["checkout", "-q", "--detach", &head]);
    let (code, stdout, stderr) = lint(&dir, &["diff"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("note: no range given: comparing `origin/HEAD...HEAD` (HEAD is detached"),
        "{stdout}"
    );
    assert!(stdout.contains("PersistentVolumeClaim payments/ledger"));
}

#[test]
fn missing_origin_head_falls_back_to_origin_main() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (origin, _, _) = origin(tmp.path(), "main");
    let dir = clone(tmp.path(), &origin, &["--branch", "change"]);
    git(&dir, &["remote", "set-head", "origin", "-d"]);
    let (code, stdout, stderr) = lint(&dir, &["diff"]);
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(
        stdout.contains("note: no range given: comparing `origin/main...HEAD`"),
        "{stdout}"
    );
}

#[test]
fn no_base_branch_at_all_is_exit_two_with_advice() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (origin, _, _) = origin(tmp.path(), "trunk");
    let dir = clone(tmp.path(), &origin, &["--branch", "change"]);
    git(&dir, &["remote", "set-head", "origin", "-d"]);
    let (code, stdout, stderr) = lint(&dir, &["diff"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.starts_with("gitops-lint: error: no base revision given and none of `origin/HEAD`"),
        "{stderr}"
    );
    // Not shallow: no unshallow advice.
    assert!(!stderr.contains("unshallow"), "{stderr}");
    // The advice works.
    let (code, _, _) = lint(&dir, &["diff", "origin/trunk...HEAD"]);
    assert_eq!(code, 1);
}

#[test]
fn invalid_configuration_is_exit_two_with_every_problem() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (origin, _, _) = origin_with(
        tmp.path(),
        "main",
        &[(
            "ci/cfg.yaml",
            "rules:\n  ignore: [GL999]\nstatefulKind: [Cluster]\n",
        )],
    );
    let (code, _, stderr) = lint(
        &origin,
        &["diff", "main..change", "--config", "ci/cfg.yaml"],
    );
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("ci/cfg.yaml:2:3: rules.ignore: unknown rule `GL999`"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "ci/cfg.yaml:3:1: unknown key `statefulKind` (did you mean `statefulKinds`?)"
        ),
        "{stderr}"
    );
}

#[test]
fn two_formats_on_stdout_is_a_usage_error() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (origin, _, _) = origin(tmp.path(), "main");
    let (code, stdout, stderr) = lint(
        &origin,
        &[
            "diff",
            "main..change",
            "--format",
            "json",
            "--format",
            "github",
        ],
    );
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stderr.contains("json and github would all write to standard output"),
        "{stderr}"
    );
    assert!(stdout.is_empty());
}

#[test]
fn ignore_paths_never_hide_a_prune() {
    let tmp = tempfile::tempdir().expect("tmp");
    let (origin, _, _) = origin_with(
        tmp.path(),
        "main",
        &[(
            "ci/cfg.yaml",
            "repoUrls: [https://git.example.com/gitops.git]\nignorePaths: ['payments/**']\n",
        )],
    );
    let cfg = origin.join("ci/cfg.yaml");
    let cfg = cfg.to_str().expect("utf-8");
    let (code, stdout, stderr) = lint(&origin, &["diff", "main..change", "--config", cfg]);
    // A pull request could move an app's inputs under an ignored path: what
    // a sync deletes is reported wherever its file is.
    assert_eq!(code, 1, "{stdout}{stderr}");
    assert!(stdout.contains("GL001"), "{stdout}");
    assert!(
        stdout.contains("PersistentVolumeClaim payments/ledger (removed)"),
        "{stdout}"
    );
}
