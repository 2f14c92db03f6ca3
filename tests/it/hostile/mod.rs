//! Hostile and broken repositories, through the built binary: gitops-lint
//! runs on pull requests from people the repository owner does not trust,
//! so whatever a pull request contains must not make it execute anything,
//! read outside the repository, write to it, crash, hang, lie about
//! prunes, or answer differently from one run to the next.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use assert_cmd::Command;
use serde_json::Value;
use sha2::{Digest, Sha256};

fn bin() -> Command {
    let mut c = Command::cargo_bin("gitops-lint").expect("binary built");
    c.env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"));
    // No helm unless a test provides one; nothing from the caller's PATH.
    c.env("PATH", "/usr/bin:/bin").env_remove("NO_COLOR");
    c
}

fn git(dir: &Path, args: &[&str]) {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(args)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.invalid")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.invalid")
        .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Writes `files` into `dir`; a name ending in `.symlink` becomes a
/// symlink whose target is the content.
fn write_files(dir: &Path, files: &[(String, Vec<u8>)]) {
    for (rel, bytes) in files {
        let dest = dir.join(rel.strip_suffix(".symlink").unwrap_or(rel));
        std::fs::create_dir_all(dest.parent().expect("has parent")).expect("mkdir");
        if rel.ends_with(".symlink") {
            let target = String::from_utf8_lossy(bytes).trim().to_string();
            std::os::unix::fs::symlink(target, &dest).expect("symlink");
        } else {
            std::fs::write(&dest, bytes).expect("write");
        }
    }
}

fn read_tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(root).sort_by_file_name() {
        let e = e.expect("readable fixture");
        if e.file_type().is_file() {
            let rel = e
                .path()
                .strip_prefix(root)
                .expect("inside")
                .to_string_lossy()
                .into_owned();
            out.push((rel, std::fs::read(e.path()).expect("read")));
        }
    }
    out
}

/// A real clone-like repository: `main` holds `base`, branch `change` holds
/// `head` and is checked out, and `origin` names the repository the
/// Applications point at.
fn repo(base: &[(String, Vec<u8>)], head: &[(String, Vec<u8>)]) -> tempfile::TempDir {
    repo_with_message(base, head, "head")
}

/// [`repo`] whose head commit has `message` (for commit trailers).
fn repo_with_message(
    base: &[(String, Vec<u8>)],
    head: &[(String, Vec<u8>)],
    message: &str,
) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("temp dir");
    let dir = tmp.path();
    git(dir, &["init", "-q", "-b", "main"]);
    git(
        dir,
        &[
            "remote",
            "add",
            "origin",
            "https://github.com/acme/gitops.git",
        ],
    );
    write_files(dir, base);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base", "--allow-empty"]);
    git(dir, &["checkout", "-q", "-b", "change"]);
    git(dir, &["rm", "-q", "-r", "--ignore-unmatch", "."]);
    write_files(dir, head);
    git(dir, &["add", "-A"]);
    // From a file: hundreds of trailers are longer than an argument may be.
    let message_file = dir.join(".git/test-message");
    std::fs::write(&message_file, message).expect("write");
    git(
        dir,
        &[
            "commit",
            "-q",
            "-F",
            &message_file.to_string_lossy(),
            "--allow-empty",
        ],
    );
    tmp
}

fn fixture_repo(case: &str) -> tempfile::TempDir {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/cases")
        .join(case);
    repo(
        &read_tree(&root.join("base")),
        &read_tree(&root.join("head")),
    )
}

fn run(dir: &Path, args: &[&str]) -> Output {
    bin()
        .current_dir(dir)
        .args(args)
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .expect("runs")
}

fn json(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is JSON ({e}); stderr: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

fn stderr_lines(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .collect()
}

/// Every path under `root` (`.git` included, symlinks not followed) with
/// its type, permission bits and a hash of its content or link target.
fn snapshot(root: &Path) -> BTreeMap<String, String> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = BTreeMap::new();
    for e in walkdir::WalkDir::new(root).follow_links(false) {
        let e = e.expect("walkable");
        let rel = e
            .path()
            .strip_prefix(root)
            .expect("inside")
            .to_string_lossy()
            .into_owned();
        let meta = e.path().symlink_metadata().expect("metadata");
        let mode = meta.permissions().mode();
        let what = if meta.file_type().is_symlink() {
            let t = std::fs::read_link(e.path()).expect("link");
            format!("link {}", t.display())
        } else if meta.is_dir() {
            "dir".to_string()
        } else {
            let bytes = std::fs::read(e.path()).expect("readable");
            let hex: String = Sha256::digest(&bytes)
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!("file {hex}")
        };
        out.insert(rel, format!("{mode:o} {what}"));
    }
    out
}

fn apps_with_status(report: &Value, status: &str) -> Vec<String> {
    report["apps"]
        .as_array()
        .expect("apps")
        .iter()
        .filter(|a| a["status"] == status)
        .map(|a| a["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

fn pruned_apps(report: &Value) -> Vec<String> {
    report["prunes"]
        .as_array()
        .expect("prunes")
        .iter()
        .map(|p| p["app"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// The apps reported `unrendered`: GL000 may group apps that fail on one
/// cause into one finding, and the app list is what says which failed.
fn unrendered_apps(report: &Value) -> Vec<String> {
    report["apps"]
        .as_array()
        .expect("apps")
        .iter()
        .filter(|a| a["status"] == "unrendered")
        .filter_map(|a| a["name"].as_str().map(str::to_string))
        .collect()
}

fn gl000_apps(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["code"] == "GL000")
        .filter_map(|f| f["app"].as_str().map(str::to_string))
        .collect()
}

mod budgets;
mod chains_and_trust;
fn app_yaml(name: &str, path: &str, helm: &str) -> Vec<u8> {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://github.com/acme/gitops.git
    targetRevision: main
    path: {path}
{helm}  destination:
    server: https://kubernetes.default.svc
    namespace: {name}
  syncPolicy:
    automated:
      prune: true
"
    )
    .into_bytes()
}

fn file(path: &str, bytes: impl Into<Vec<u8>>) -> (String, Vec<u8>) {
    (path.to_string(), bytes.into())
}

fn pvc(name: &str) -> Vec<u8> {
    format!("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {name}\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n").into_bytes()
}

const CHART: &[u8] = b"apiVersion: v2\nname: web\nversion: 0.1.0\n";

/// A script that writes `marker` when run: proof that something from the
/// repository was executed.
fn marker_script(marker: &Path) -> Vec<u8> {
    format!("#!/bin/sh\ntouch '{}'\n", marker.display()).into_bytes()
}

fn make_executable(p: &Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

/// A resource that keeps an app's directory present when its PVC goes.
const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";

/// [`commit_with_raw_entries`] with raw entries at base too.
fn commit_with_raw_entries_on_both(
    dir: &Path,
    (base, base_raw): (&[(String, Vec<u8>)], &[RawEntry<'_>]),
    (files, raw): (&[(String, Vec<u8>)], &[RawEntry<'_>]),
) {
    git(dir, &["init", "-q", "-b", "main"]);
    git(
        dir,
        &[
            "remote",
            "add",
            "origin",
            "https://github.com/acme/gitops.git",
        ],
    );
    let write =
        |branch: &str, parent: Option<&str>, files: &[(String, Vec<u8>)], raw: &[RawEntry<'_>]| {
            let repo = git2::Repository::open(dir).expect("opens");
            let mut tb = git2::build::TreeUpdateBuilder::new();
            for (path, bytes) in files {
                let oid = repo.blob(bytes).expect("blob");
                tb.upsert(path.as_str(), oid, git2::FileMode::Blob);
            }
            let empty = repo.treebuilder(None).expect("tb").write().expect("tree");
            let base_tree = repo.find_tree(empty).expect("tree");
            let mut tree_id = tb.create_updated(&repo, &base_tree).expect("tree");
            for (dirpath, name, mode, content) in raw {
                // Rebuild `dirpath` with the raw entry added, then its parents.
                let tree = repo.find_tree(tree_id).expect("tree");
                let sub = tree
                    .get_path(Path::new(dirpath))
                    .ok()
                    .and_then(|e| repo.find_tree(e.id()).ok());
                let mut b = repo.treebuilder(sub.as_ref()).expect("tb");
                let oid = match content {
                    Some(bytes) => repo.blob(bytes).expect("blob"),
                    None => git2::Oid::from_str("0123456789abcdef0123456789abcdef01234567")
                        .expect("oid"),
                };
                b.insert(*name, oid, *mode).expect("insert");
                let sub_id = b.write().expect("tree");
                let mut up = git2::build::TreeUpdateBuilder::new();
                up.upsert(*dirpath, sub_id, git2::FileMode::Tree);
                tree_id = up.create_updated(&repo, &tree).expect("tree");
            }
            let tree = repo.find_tree(tree_id).expect("tree");
            let sig = git2::Signature::now("t", "t@example.invalid").expect("sig");
            let parents: Vec<git2::Commit> = parent
                .map(|p| {
                    repo.find_branch(p, git2::BranchType::Local)
                        .expect("branch")
                        .get()
                        .peel_to_commit()
                        .expect("commit")
                })
                .into_iter()
                .collect();
            let refs: Vec<&git2::Commit> = parents.iter().collect();
            let c = repo
                .commit(None, &sig, &sig, branch, &tree, &refs)
                .expect("commit");
            repo.reference(&format!("refs/heads/{branch}"), c, true, "test")
                .expect("ref");
        };
    write("main", None, base, base_raw);
    write("change", Some("main"), files, raw);
}

/// Builds a commit on `change` (parent: `main`) from `files` plus raw
/// entries (names that are not UTF-8, gitlinks).
fn commit_with_raw_entries(
    dir: &Path,
    base: &[(String, Vec<u8>)],
    files: &[(String, Vec<u8>)],
    raw: &[RawEntry<'_>],
) {
    commit_with_raw_entries_on_both(dir, (base, &[]), (files, raw));
}

/// A tree entry git's porcelain cannot write: `(dir, name bytes, mode,
/// blob content)`; no content makes a gitlink to a made-up commit.
type RawEntry<'a> = (&'a str, &'a [u8], i32, Option<&'a [u8]>);

/// The GL000 messages of a report.
fn gl000_messages(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter(|f| f["code"] == "GL000")
        .map(|f| f["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

mod containment;
mod informed_author;
mod oversized_input;
