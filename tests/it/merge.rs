//! `diff` judges what merging the change makes: the merge of the head into
//! the base's tip, computed in memory. Repositories are built here with a
//! target branch that moved on after the change forked from it.

use crate::common;

use std::path::Path;

use assert_cmd::Command;
use gitops_lint::lint;
use gitops_lint::source::write_commit;

fn file(path: &str, text: &str) -> (String, Vec<u8>) {
    (path.to_string(), text.as_bytes().to_vec())
}

const ROOT: &str = "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: root, namespace: argocd}
spec:
  project: default
  source: {repoURL: https://github.com/acme/gitops.git, targetRevision: main, path: apps}
  destination: {server: https://kubernetes.default.svc, namespace: argocd}
  syncPolicy: {automated: {prune: true}}
";

/// A child Application of `root` (resources finalizer) rendering `workloads/<name>`.
fn child(name: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: argocd
  finalizers: [resources-finalizer.argocd.argoproj.io]
spec:
  project: default
  source: {{repoURL: https://github.com/acme/gitops.git, targetRevision: main, path: workloads/{name}}}
  destination: {{server: https://kubernetes.default.svc, namespace: {name}}}
  syncPolicy: {{automated: {{prune: true}}}}
"
    )
}

fn config_map(name: &str, value: &str) -> String {
    format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}}}\ndata: {{value: \"{value}\"}}\n")
}

/// Commits `base` on `main`, `head` on `change` (forked from it), then
/// `target` on `main`: the target branch moved on while the change was open.
fn repository(
    dir: &Path,
    base: &[(String, Vec<u8>)],
    head: &[(String, Vec<u8>)],
    target: &[(String, Vec<u8>)],
) {
    let commit = |branch: &str, parent: Option<&str>, files: &[(String, Vec<u8>)]| {
        write_commit(dir, branch, parent, files, branch).unwrap_or_else(|e| panic!("{e}"));
    };
    commit("main", None, base);
    commit("change", Some("main"), head);
    commit("main", None, target);
}

fn options(dir: &Path) -> lint::Options {
    lint::Options {
        repo: Some(dir.to_path_buf()),
        ..lint::Options::default()
    }
}

/// Every file under the repository's object directory.
fn object_files(dir: &Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(dir.join(".git/objects"))
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.path().display().to_string())
        .collect();
    out.sort();
    out
}

/// Both sides edit one manifest file in places apart: git merges its
/// content into a blob neither commit has. The judged tree reads that blob
/// (from memory), and the repository's object database is left as it was.
#[test]
fn a_clean_content_merge_is_judged_and_nothing_is_written_to_the_repository() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let apps = |names: &[&str]| -> String {
        names
            .iter()
            .map(|n| child(n))
            .collect::<Vec<_>>()
            .join("---\n")
    };
    let workloads = |names: &[&str]| -> Vec<(String, Vec<u8>)> {
        names
            .iter()
            .map(|n| file(&format!("workloads/{n}/cm.yaml"), &config_map(n, "1")))
            .collect()
    };
    let mut base = vec![
        file("bootstrap/root.yaml", ROOT),
        file(
            "apps/children.yaml",
            &apps(&["payments", "reports", "search"]),
        ),
    ];
    base.extend(workloads(&["payments", "reports", "search"]));
    // The change drops `payments`, the first document of the file.
    let mut head = vec![
        file("bootstrap/root.yaml", ROOT),
        file("apps/children.yaml", &apps(&["reports", "search"])),
    ];
    head.extend(workloads(&["payments", "reports", "search"]));
    // The target branch appends `billing`, after the last document.
    let mut target = vec![
        file("bootstrap/root.yaml", ROOT),
        file(
            "apps/children.yaml",
            &apps(&["payments", "reports", "search", "billing"]),
        ),
    ];
    target.extend(workloads(&["payments", "reports", "search", "billing"]));
    repository(tmp.path(), &base, &head, &target);
    let before = object_files(tmp.path());

    let report =
        lint::diff(Some("main..change"), &options(tmp.path())).unwrap_or_else(|e| panic!("{e}"));
    let json = gitops_lint::report::json::to_value(&report);
    let deleted: Vec<&str> = json["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["code"] == "GL002")
        .filter_map(|f| f["app"].as_str())
        .collect();
    assert_eq!(deleted, vec!["payments"], "{json:#}");
    assert!(json["merge"]["tree"].is_string(), "{json:#}");
    assert!(
        json["notes"][0]
            .as_str()
            .is_some_and(|n| n.starts_with("judged: the merge of `change` into `main`")),
        "{json:#}"
    );
    assert_eq!(
        object_files(tmp.path()),
        before,
        "the repository was written to"
    );
}

/// The same line edited on both sides: one error naming the path and what
/// to do, exit status 2 from the binary; `--no-merge` judges the change as
/// it is.
#[test]
fn a_conflicting_merge_is_one_error_naming_the_paths() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let tree = |value: &str| {
        vec![
            file("bootstrap/root.yaml", ROOT),
            file("apps/payments.yaml", &child("payments")),
            file("workloads/payments/cm.yaml", &config_map("payments", value)),
        ]
    };
    repository(tmp.path(), &tree("1"), &tree("2"), &tree("3"));

    let err = lint::diff(Some("main..change"), &options(tmp.path()))
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("conflicts in `workloads/payments/cm.yaml`") && err.contains("--no-merge"),
        "{err}"
    );

    let out = Command::cargo_bin("gitops-lint")
        .unwrap_or_else(|e| panic!("{e}"))
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .args(["diff", "main...change", "--repo"])
        .arg(tmp.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.lines().filter(|l| l.contains("error")).count(),
        1,
        "{stderr}"
    );
    assert!(stderr.contains("`workloads/payments/cm.yaml`"), "{stderr}");

    let mut as_is = options(tmp.path());
    as_is.judge = lint::Judge::AsIs;
    let report = lint::diff(Some("main..change"), &as_is).unwrap_or_else(|e| panic!("{e}"));
    assert!(gitops_lint::report::json::to_value(&report)["merge"].is_null());
}

/// The golden cases of a target that moved on, judged as the change alone
/// (`--no-merge`), give the answers the merge corrects: the child the
/// merge drops is not seen from the merge base, and the child the merge
/// keeps looks deleted from the target's tip.
#[test]
fn without_the_merge_the_golden_cases_answer_otherwise() {
    let cases = common::golden::cases();
    let gl002 = |name: &str, range: &str| -> usize {
        let case = cases
            .iter()
            .find(|c| c.name.ends_with(name))
            .unwrap_or_else(|| panic!("no case {name}"));
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        case.commit(tmp.path()).unwrap_or_else(|e| panic!("{e}"));
        let mut opts = case.options(tmp.path());
        opts.judge = lint::Judge::AsIs;
        let report = lint::diff(Some(range), &opts).unwrap_or_else(|e| panic!("{e}"));
        report
            .findings
            .iter()
            .filter(|f| f.rule.code == "GL002")
            .count()
    };
    assert_eq!(
        gl002("/merge-drops-child-added-on-target", "main...change"),
        0
    );
    assert_eq!(
        gl002("/ok-merge-keeps-child-added-on-target", "main..change"),
        1
    );
    assert_eq!(
        gl002("/stale-local-target-branch", "refs/heads/main..change"),
        0
    );
}

/// An Application pinned to another branch renders that branch as Argo CD
/// reads it, from the remote: a local `staging` behind `origin/staging`
/// is not what is deployed.
#[test]
fn another_branch_is_read_from_its_remote_tracking_branch() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let app = child("web").replace("targetRevision: main", "targetRevision: staging");
    let tree = |value: &str| {
        vec![
            file("apps/web.yaml", &app),
            file("workloads/web/cm.yaml", &config_map("web", value)),
        ]
    };
    let dir = tmp.path();
    let local =
        write_commit(dir, "main", None, &tree("local"), "main").unwrap_or_else(|e| panic!("{e}"));
    let remote =
        write_commit(dir, "main", None, &tree("remote"), "main").unwrap_or_else(|e| panic!("{e}"));
    let git = git2::Repository::open(dir).unwrap_or_else(|e| panic!("{e}"));
    let oid = |c: &str| git2::Oid::from_str(c).unwrap_or_else(|e| panic!("{e}"));
    git.reference("refs/heads/staging", oid(&local), true, "behind")
        .unwrap_or_else(|e| panic!("{e}"));
    git.reference("refs/remotes/origin/staging", oid(&remote), true, "fetched")
        .unwrap_or_else(|e| panic!("{e}"));
    let rendered = lint::render_app(&lint::Revision::Commit("main".into()), "web", &options(dir))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(rendered.yaml.contains("value: remote"), "{}", rendered.yaml);
}

/// A stale local target branch is said on stderr too when the report goes
/// to a machine format: the person who started the run sees which tip was
/// judged.
#[test]
fn a_stale_local_target_branch_is_said_on_stderr_beside_json() {
    let case = common::golden::cases()
        .into_iter()
        .find(|c| c.name.ends_with("/stale-local-target-branch"))
        .unwrap_or_else(|| panic!("no stale-local-target-branch case"));
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    case.commit(tmp.path()).unwrap_or_else(|e| panic!("{e}"));
    let out = Command::cargo_bin("gitops-lint")
        .unwrap_or_else(|e| panic!("{e}"))
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .args(["diff", "main..change", "--format", "json", "--repo"])
        .arg(tmp.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "gitops-lint: note: the local branch `main` is 1 commit(s) behind `origin/main`"
        ),
        "{stderr}"
    );
    let json: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
    assert!(json["merge"]["mergeBase"].is_string(), "{json:#}");
}

/// A head the target already holds changes nothing when merged: nothing is
/// reported, though its tree lacks what the target gained since.
#[test]
fn a_head_the_target_already_holds_is_nothing_to_judge() {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = tmp.path();
    let base = vec![
        file("bootstrap/root.yaml", ROOT),
        file("apps/payments.yaml", &child("payments")),
        file("workloads/payments/cm.yaml", &config_map("payments", "1")),
    ];
    let mut target = base.clone();
    target.push(file("apps/reports.yaml", &child("reports")));
    target.push(file(
        "workloads/reports/cm.yaml",
        &config_map("reports", "1"),
    ));
    let old = write_commit(dir, "main", None, &base, "base").unwrap_or_else(|e| panic!("{e}"));
    write_commit(dir, "main", None, &target, "target").unwrap_or_else(|e| panic!("{e}"));
    let report =
        lint::diff(Some(&format!("main..{old}")), &options(dir)).unwrap_or_else(|e| panic!("{e}"));
    let json = gitops_lint::report::json::to_value(&report);
    assert_eq!(json["findings"], serde_json::json!([]), "{json:#}");
    assert!(
        json["notes"][0]
            .as_str()
            .is_some_and(|n| n.contains("is already part of `main`")),
        "{json:#}"
    );
    let mut as_is = options(dir);
    as_is.judge = lint::Judge::AsIs;
    let report =
        lint::diff(Some(&format!("main..{old}")), &as_is).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !report.findings.is_empty(),
        "as it is, `reports` looks deleted"
    );
}
