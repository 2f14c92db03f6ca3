//! Runs that must not pass quietly: Applications that all name a repository
//! this one is not recognised as, an empty range, edits left out of a diff,
//! and a tool asked for by path that does not exist.

use crate::common;

use std::path::Path;

use assert_cmd::Command;
use common::git;

fn bin() -> Command {
    let mut cmd = Command::cargo_bin("gitops-lint").expect("the gitops-lint binary is built");
    cmd.env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"));
    cmd.env("NO_COLOR", "1").env_remove("GITOPS_LINT_BLESS");
    // Runs as at a person's terminal, whether or not these tests run in CI
    // (CI skips the working tree's status: see the test of it below).
    for var in ["CI", "GITHUB_ACTIONS", "PRE_COMMIT"] {
        cmd.env_remove(var);
    }
    cmd
}

const UPSTREAM: &str = "https://github.com/acme/platform-gitops.git";
const MIRROR: &str = "https://gitlab.example.com/mirror/platform-gitops.git";

fn app(name: &str, repo_url: &str, path: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: argocd
spec:
  project: default
  source:
    repoURL: {repo_url}
    targetRevision: main
    path: {path}
  destination:
    server: https://kubernetes.default.svc
    namespace: {name}
  syncPolicy:
    automated: {{prune: true}}
"
    )
}

const PVC: &str = "apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ledger
  namespace: payments
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
";

fn write(dir: &Path, path: &str, text: &str) {
    let p = dir.join(path);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

/// A repository whose `payments` app (from `repo_url`, automated prune)
/// holds a PVC on `main`, and branch `cleanup` that deletes it. `extra`
/// files are committed on `main` too. The remote `origin` is `remote`.
fn repository(repo_url: &str, remote: Option<&str>, extra: &[(&str, &str)]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("temp dir");
    let d = tmp.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(
        d,
        "apps/payments.yaml",
        &app("payments", repo_url, "workloads/payments"),
    );
    write(d, "workloads/payments/ledger-pvc.yaml", PVC);
    write(
        d,
        "workloads/payments/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: payments}\n",
    );
    for (p, t) in extra {
        write(d, p, t);
    }
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    git(d, &["checkout", "-q", "-b", "cleanup"]);
    git(d, &["rm", "-q", "workloads/payments/ledger-pvc.yaml"]);
    git(d, &["commit", "-q", "-m", "remove the ledger"]);
    git(d, &["checkout", "-q", "main"]);
    if let Some(url) = remote {
        git(d, &["remote", "add", "origin", url]);
    }
    tmp
}

fn run(dir: &Path, args: &[&str]) -> (Option<i32>, String, String) {
    let out = bin()
        .args(args)
        .arg("--repo")
        .arg(dir)
        .output()
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A mirror whose Applications name the upstream URL: nothing renders, and
/// the run fails saying which URLs it compared and what to write.
#[test]
fn applications_that_all_name_another_repository_fail_the_run() {
    let repo = repository(UPSTREAM, Some(MIRROR), &[]);
    for args in [
        &["diff", "main..cleanup"][..],
        &["diff", "main..cleanup", "--format", "json"],
        &["check", "main"],
    ] {
        let (code, stdout, stderr) = run(repo.path(), args);
        assert_eq!(
            code,
            Some(2),
            "{args:?}: stdout:\n{stdout}\nstderr:\n{stderr}"
        );
        assert!(
            stdout.is_empty(),
            "{args:?}: no report that looks like a pass: {stdout}"
        );
        assert_eq!(stderr.lines().count(), 1, "{args:?}: one line: {stderr}");
        for needle in [
            "no Application renders from this repository",
            UPSTREAM,
            MIRROR,
            "repoUrls: [https://github.com/acme/platform-gitops.git]",
        ] {
            assert!(stderr.contains(needle), "{args:?}: `{needle}` in {stderr}");
        }
    }
}

/// The fix the message gives works: with `repoUrls` the PVC deletion is found.
#[test]
fn repo_urls_in_the_configuration_make_the_mirror_lintable() {
    let config = format!("repoUrls: [{UPSTREAM}]\n");
    let repo = repository(UPSTREAM, Some(MIRROR), &[(".gitops-lint.yaml", &config)]);
    let (code, stdout, stderr) = run(repo.path(), &["diff", "main..cleanup"]);
    assert_eq!(code, Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("GL001"), "{stdout}");
    assert!(
        stdout.contains("PersistentVolumeClaim payments/ledger"),
        "{stdout}"
    );
}

/// When the remote is the URL the Applications name, nothing changes.
#[test]
fn a_matching_remote_lints_as_before() {
    let repo = repository(UPSTREAM, Some(UPSTREAM), &[]);
    let (code, stdout, stderr) = run(repo.path(), &["diff", "main..cleanup"]);
    assert_eq!(code, Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("PersistentVolumeClaim payments/ledger"),
        "{stdout}"
    );
}

/// One app from this repository is enough: others naming other
/// repositories are external as before, and the run judges what it reads.
#[test]
fn one_app_from_this_repository_is_enough() {
    let other = app("vendor", "https://github.com/vendor/agent.git", "deploy");
    let repo = repository(UPSTREAM, Some(UPSTREAM), &[("apps/vendor.yaml", &other)]);
    // `--verbose`: the change does not touch `vendor`, which a human diff
    // otherwise only counts.
    let (code, stdout, stderr) = run(repo.path(), &["diff", "main..cleanup", "--verbose"]);
    assert_eq!(code, Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("vendor"), "{stdout}");
    assert!(stdout.contains("external"), "{stdout}");
}

/// Applications that only install charts from Helm repositories involve no
/// git repository at all: nothing is misrecognised, so nothing is refused.
#[test]
fn helm_repository_charts_only_are_not_refused() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let d = tmp.path();
    git(d, &["init", "-q", "-b", "main"]);
    write(
        d,
        "apps/ingress.yaml",
        "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ingress, namespace: argocd}
spec:
  source: {repoURL: https://kubernetes.github.io/ingress-nginx, chart: ingress-nginx, targetRevision: 4.11.0}
  destination: {server: https://kubernetes.default.svc, namespace: ingress}
",
    );
    git(d, &["add", "-A"]);
    git(d, &["commit", "-q", "-m", "base"]);
    git(d, &["remote", "add", "origin", MIRROR]);
    // Offline: the chart is not fetched by this test, and is not cached.
    let (code, stdout, stderr) = run(d, &["check", "HEAD", "--offline"]);
    assert_eq!(code, Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("ingress  unrendered"), "{stdout}");
}

/// `diff main..main` compares a commit with itself: said, not silent.
#[test]
fn an_empty_range_is_said() {
    let repo = repository(UPSTREAM, None, &[]);
    let (code, stdout, stderr) = run(repo.path(), &["diff", "main..main"]);
    assert_eq!(code, Some(0), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(
        stdout.contains("the range `main..main` is empty"),
        "{stdout}"
    );
    assert!(
        stdout.contains("gitops-lint diff main..WORKTREE"),
        "{stdout}"
    );
    // A range with commits in it has no such note.
    let (_, stdout, _) = run(repo.path(), &["diff", "main..cleanup"]);
    assert!(!stdout.contains("is empty"), "{stdout}");
}

/// Uncommitted edits are said to be left out, and `..WORKTREE` and
/// `..INDEX` include them: the same deletion, found before committing.
#[test]
fn edits_not_committed_are_said_and_can_be_included() {
    let repo = repository(UPSTREAM, None, &[]);
    let d = repo.path();
    std::fs::remove_file(d.join("workloads/payments/ledger-pvc.yaml")).expect("rm");

    let (code, stdout, _) = run(d, &["diff", "main..HEAD"]);
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout.contains(
            "the working tree has changes that are not committed (`workloads/payments/ledger-pvc.yaml`)"
        ),
        "{stdout}"
    );

    // In CI the checkout is the commit: its working tree is not looked at
    // (a status of every file), and the diff of the commits is the same.
    for var in ["CI", "GITHUB_ACTIONS"] {
        let out = bin()
            .env(var, "true")
            .args(["diff", "main..HEAD", "--repo"])
            .arg(d)
            .output()
            .expect("runs");
        let ci_stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{var}: {ci_stdout}");
        assert!(!ci_stdout.contains("not committed"), "{var}: {ci_stdout}");
        let without_note: String = stdout
            .lines()
            .filter(|l| !l.contains("not committed"))
            .map(|l| format!("{l}\n"))
            .collect();
        assert_eq!(ci_stdout, without_note, "{var}: only the note differs");
    }

    let (code, stdout, stderr) = run(d, &["diff", "main..WORKTREE"]);
    assert_eq!(code, Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    assert!(stdout.contains("..WORKTREE"), "the head is named: {stdout}");
    assert!(
        stdout.contains("PersistentVolumeClaim payments/ledger"),
        "{stdout}"
    );
    assert!(!stdout.contains("not committed"), "{stdout}");

    // Not staged yet: the index still has the PVC.
    let (code, stdout, _) = run(d, &["diff", "main...INDEX"]);
    assert_eq!(code, Some(0), "{stdout}");
    git(d, &["add", "-A"]);
    let (code, stdout, _) = run(d, &["diff", "main...INDEX", "--format", "json"]);
    assert_eq!(code, Some(1), "{stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("json");
    assert_eq!(v["head"], "INDEX");
}

/// Running `diff` with `flag` naming a binary that does not exist, by path
/// or by name, is a usage error: exit 2, one line, nothing on stdout.
fn assert_missing_binary_is_a_usage_error(repo: &std::path::Path, flag: &str, tool: &str) {
    for bin_arg in [format!("/missing/{tool}"), format!("no-such-{tool}-binary")] {
        let (code, stdout, stderr) = run(repo, &["diff", "main..cleanup", flag, &bin_arg]);
        assert_eq!(
            code,
            Some(2),
            "{bin_arg}: stdout:\n{stdout}\nstderr:\n{stderr}"
        );
        assert!(stdout.is_empty(), "{stdout}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(
            stderr.contains(&format!("{flag} {bin_arg}: no such executable")),
            "{stderr}"
        );
    }
}

/// A Kustomize binary asked for by path or name that does not exist is a
/// usage error, not a warning on every app and a pass.
#[test]
fn a_missing_requested_kustomize_binary_is_a_usage_error() {
    let repo = repository(UPSTREAM, None, &[]);
    assert_missing_binary_is_a_usage_error(repo.path(), "--kustomize-binary", "kustomize");
}

/// Likewise a helm binary asked for that does not exist, and one asked for
/// beside `--helm-renderer native`.
#[test]
fn a_missing_requested_helm_binary_is_a_usage_error() {
    let repo = repository(UPSTREAM, None, &[]);
    assert_missing_binary_is_a_usage_error(repo.path(), "--helm-binary", "helm");
    let (code, _, stderr) = run(
        repo.path(),
        &[
            "diff",
            "main..cleanup",
            "--helm-binary",
            "/bin/sh",
            "--helm-renderer",
            "native",
        ],
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("drop one"), "{stderr}");
}
