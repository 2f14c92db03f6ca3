//! Acknowledging intended deletions: the `gitops-lint.io/allow-prune`
//! annotation read from the base revision, `Gitops-Lint-Allow` commit
//! trailers, and GL014 for trailers that acknowledge nothing.

use std::path::Path;

use assert_cmd::Command;
use gitops_lint::source::write_commit;

fn app(name: &str, path: &str, annotations: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: argocd
  finalizers: [resources-finalizer.argocd.argoproj.io]
{annotations}spec:
  source: {{repoURL: https://git.example.com/gitops.git, targetRevision: main, path: {path}}}
  destination: {{server: https://kubernetes.default.svc, namespace: {name}}}
  syncPolicy: {{automated: {{prune: true}}}}
"
    )
}

const PVC: &str = "apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: data
spec: {accessModes: [ReadWriteOnce]}
";

/// Base: root (app-of-apps) renders `apps/`, which holds `reports` (with
/// the resources finalizer) and `payments` (with a PVC). Head removes the
/// `reports` Application and the PVC, committed with `message`.
fn repo(dir: &Path, reports_annotations: &str, config: &str, message: &str) {
    let mut base = vec![
        ("root.yaml", app("root", "apps", "")),
        (
            "apps/reports.yaml",
            app("reports", "reports", reports_annotations),
        ),
        ("apps/payments.yaml", app("payments", "payments", "")),
        (
            "reports/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: r}\n".into(),
        ),
        (
            "payments/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\n".into(),
        ),
        ("payments/pvc.yaml", PVC.into()),
        (".gitops-lint.yaml", config.into()),
    ];
    let to_files = |v: &[(&str, String)]| -> Vec<(String, Vec<u8>)> {
        v.iter()
            .map(|(p, t)| ((*p).to_string(), t.as_bytes().to_vec()))
            .collect()
    };
    write_commit(dir, "main", None, &to_files(&base), "base").expect("base");
    base.retain(|(p, _)| *p != "apps/reports.yaml" && *p != "payments/pvc.yaml");
    write_commit(dir, "change", Some("main"), &to_files(&base), message).expect("head");
}

fn run(dir: &Path) -> (i32, String) {
    let out = Command::cargo_bin("gitops-lint")
        .expect("binary")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .current_dir(dir)
        .args(["diff", "main..change", "--format", "github"])
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn unacknowledged_deletions_fail() {
    let tmp = tempfile::tempdir().expect("tmp");
    repo(tmp.path(), "", "", "Remove things");
    let (code, out) = run(tmp.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("::error file=root.yaml,line=1,title=GL002 app-cascade-delete::"),
        "{out}"
    );
    assert!(
        out.contains("::error file=apps/payments.yaml,line=1,title=GL001 stateful-prune::"),
        "{out}"
    );
    assert!(!out.contains("acknowledged"), "{out}");
}

#[test]
fn annotation_on_the_base_application_and_trailer_for_the_pvc_acknowledge_both() {
    let tmp = tempfile::tempdir().expect("tmp");
    repo(
        tmp.path(),
        "  annotations:\n    gitops-lint.io/allow-prune: \"reports moved to the data platform\"\n",
        "",
        "Remove things\n\nGitops-Lint-Allow: PersistentVolumeClaim/payments/data\n",
    );
    let (code, out) = run(tmp.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("title=GL002 app-cascade-delete (acknowledged)::"),
        "{out}"
    );
    assert!(
        out.contains(
            "acknowledged: gitops-lint.io/allow-prune: reports moved to the data platform"
        ),
        "{out}"
    );
    // The trailer is the change's own author speaking: a warning annotation.
    assert!(
        out.contains("::warning title=GL001 stateful-prune (acknowledged by commit trailer)::")
            || out.lines().any(|l| l.starts_with("::warning ")
                && l.contains(",title=GL001 stateful-prune (acknowledged by commit trailer)::")),
        "{out}"
    );
    assert!(
        out.contains("acknowledged: Gitops-Lint-Allow: PersistentVolumeClaim/payments/data"),
        "{out}"
    );
    assert!(!out.contains("GL014"), "{out}");
}

#[test]
fn application_trailers_acknowledge_app_deletions() {
    let tmp = tempfile::tempdir().expect("tmp");
    repo(
        tmp.path(),
        "",
        "",
        "Remove things\n\nGitops-Lint-Allow: Application/argocd/reports retired\nGitops-Lint-Allow: PersistentVolumeClaim/payments/data\n",
    );
    let (code, out) = run(tmp.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("title=GL002 app-cascade-delete (acknowledged by commit trailer)::"),
        "{out}"
    );
    assert!(
        out.contains("acknowledged: Gitops-Lint-Allow: Application/argocd/reports retired"),
        "{out}"
    );
}

#[test]
fn unreadable_and_unmatched_trailers_are_reported_unless_gl014_is_off() {
    let tmp = tempfile::tempdir().expect("tmp");
    repo(
        tmp.path(),
        "",
        "",
        "Remove things\n\nGitops-Lint-Allow: data\nGitops-Lint-Allow: PersistentVolumeClaim/payments/date\n",
    );
    let (code, out) = run(tmp.path());
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("::warning title=GL014 unused-acknowledgement::commit trailer `Gitops-Lint-Allow: data` cannot be read: `data` is not `Kind/namespace/name` or `Kind/name`"), "{out}");
    assert!(out.contains("::warning title=GL014 unused-acknowledgement::commit trailer `Gitops-Lint-Allow: PersistentVolumeClaim/payments/date` matches no deletion"), "{out}");

    let tmp = tempfile::tempdir().expect("tmp");
    repo(
        tmp.path(),
        "",
        "rules: {ignore: [unused-acknowledgement]}\n",
        "Remove things\n\nGitops-Lint-Allow: data\n",
    );
    let (_, out) = run(tmp.path());
    assert!(!out.contains("GL014"), "{out}");
}

#[test]
fn annotation_added_by_the_deleting_change_acknowledges_nothing() {
    // The PVC moves from `payments` to `billing` (same identity), and the
    // change adds the annotation to it. The object in the cluster (base)
    // never carried it, so the prune by `payments` stays unacknowledged:
    // acknowledgements, like protection, are read from the base revision.
    let tmp = tempfile::tempdir().expect("tmp");
    let annotated = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  namespace: payments\n  annotations:\n    gitops-lint.io/allow-prune: \"moving to billing\"\nspec: {accessModes: [ReadWriteOnce]}\n";
    let plain = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: data\n  namespace: payments\nspec: {accessModes: [ReadWriteOnce]}\n";
    let files = |dir: &str, pvc: &str| -> Vec<(String, Vec<u8>)> {
        vec![
            (
                "apps/payments.yaml".into(),
                app("payments", "payments", "").into_bytes(),
            ),
            (
                "apps/billing.yaml".into(),
                app("billing", "billing", "").into_bytes(),
            ),
            (
                "billing/cm.yaml".into(),
                b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n".to_vec(),
            ),
            (
                "payments/cm.yaml".into(),
                b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: p}\n".to_vec(),
            ),
            (format!("{dir}/pvc.yaml"), pvc.as_bytes().to_vec()),
        ]
    };
    write_commit(tmp.path(), "main", None, &files("payments", plain), "base").expect("base");
    write_commit(
        tmp.path(),
        "change",
        Some("main"),
        &files("billing", annotated),
        "Move",
    )
    .expect("head");
    let (code, out) = run(tmp.path());
    assert!(
        out.contains("`PersistentVolumeClaim payments/data`"),
        "{out}"
    );
    assert!(
        out.contains("moves from `payments` to app `billing`"),
        "{out}"
    );
    assert!(!out.contains("(acknowledged)"), "{out}");
    assert_eq!(code, 1, "{out}");
    // The same annotation in the base revision does acknowledge it.
    let tmp = tempfile::tempdir().expect("tmp");
    write_commit(
        tmp.path(),
        "main",
        None,
        &files("payments", annotated),
        "base",
    )
    .expect("base");
    write_commit(
        tmp.path(),
        "change",
        Some("main"),
        &files("billing", annotated),
        "Move",
    )
    .expect("head");
    let (code, out) = run(tmp.path());
    assert!(
        out.contains("acknowledged: gitops-lint.io/allow-prune: moving to billing"),
        "{out}"
    );
    assert_eq!(code, 0, "{out}");
}

/// A mass prune (GL013) is about an app, not one object: a trailer naming
/// the app acknowledges it, as `rules/GL013-mass-prune.md` shows.
fn mass_prune_repo(dir: &Path, message: &str) {
    let cm = |n: &str| format!("apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {n}}}\n");
    let mut files = vec![
        ("root.yaml".to_string(), app("root", "apps", "")),
        ("apps/shop.yaml".to_string(), app("shop", "shop", "")),
    ];
    for n in ["a", "b", "c", "d"] {
        files.push((format!("shop/{n}.yaml"), cm(n)));
    }
    let bytes = |v: &[(String, String)]| -> Vec<(String, Vec<u8>)> {
        v.iter()
            .map(|(p, t)| (p.clone(), t.as_bytes().to_vec()))
            .collect()
    };
    write_commit(dir, "main", None, &bytes(&files), "base").expect("base");
    files.retain(|(p, _)| !["shop/a.yaml", "shop/b.yaml", "shop/c.yaml"].contains(&p.as_str()));
    write_commit(dir, "change", Some("main"), &bytes(&files), message).expect("head");
}

#[test]
fn an_application_trailer_acknowledges_its_mass_prune() {
    let tmp = tempfile::tempdir().expect("tmp");
    mass_prune_repo(tmp.path(), "Retire most of shop\n");
    let (code, out) = run(tmp.path());
    assert_eq!(code, 1, "{out}");
    assert!(
        out.contains("::error title=GL013 mass-prune::")
            || out.contains(",title=GL013 mass-prune::"),
        "{out}"
    );

    let tmp = tempfile::tempdir().expect("tmp");
    mass_prune_repo(
        tmp.path(),
        "Retire most of shop\n\nGitops-Lint-Allow: Application/shop the old base is retired\n",
    );
    let (code, out) = run(tmp.path());
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("title=GL013 mass-prune (acknowledged by commit trailer)::"),
        "{out}"
    );
    assert!(!out.contains("GL014"), "{out}");
}

/// Runs `args` in `dir` with human output, which does not wrap the line
/// that acknowledges a finding.
fn run_human(dir: &Path, args: &[&str]) -> (i32, String) {
    let out = Command::cargo_bin("gitops-lint")
        .expect("binary")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .current_dir(dir)
        .args(args)
        .args(["--format", "human"])
        .output()
        .expect("runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

/// The code spans of the lines starting with `prefix` (after indentation).
fn quoted_after(out: &str, prefix: &str) -> Vec<String> {
    out.lines()
        .filter_map(|l| l.trim_start().strip_prefix(prefix))
        .map(|rest| rest.split('`').next().unwrap_or_default().to_string())
        .collect()
}

#[test]
fn the_trailer_each_failing_deletion_shows_acknowledges_it() {
    let tmp = tempfile::tempdir().expect("tmp");
    repo(tmp.path(), "", "", "Remove things");
    let (code, out) = run_human(tmp.path(), &["diff", "main..change"]);
    assert_eq!(code, 1, "{out}");
    let trailers = quoted_after(&out, "to acknowledge it, add the commit trailer `");
    assert_eq!(
        trailers,
        [
            "Gitops-Lint-Allow: Application/reports",
            "Gitops-Lint-Allow: PersistentVolumeClaim/payments/data"
        ],
        "{out}"
    );
    // The same change, its message carrying exactly the lines shown.
    let again = tempfile::tempdir().expect("tmp");
    repo(
        again.path(),
        "",
        "",
        &format!("Remove things\n\n{}\n", trailers.join("\n")),
    );
    let (code, out) = run_human(again.path(), &["diff", "main..change"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("(acknowledged by commit trailer)"), "{out}");
    assert!(!out.contains("to acknowledge it"), "{out}");
    assert!(!out.contains("GL014"), "{out}");
}

#[test]
fn with_trailers_off_a_failing_deletion_shows_the_base_annotation() {
    let tmp = tempfile::tempdir().expect("tmp");
    repo(
        tmp.path(),
        "",
        "acknowledge: {trailers: false}\n",
        "Remove things",
    );
    let (code, out) = run_human(tmp.path(), &["diff", "main..change"]);
    assert_eq!(code, 1, "{out}");
    assert!(!out.contains("Gitops-Lint-Allow:"), "{out}");
    assert!(
        out.contains("  to acknowledge it, merge first the annotation `gitops-lint.io/allow-prune: \"<reason>\"` on `Application reports`\n"),
        "{out}"
    );
    assert!(
        out.contains("  to acknowledge it, merge first the annotation `gitops-lint.io/allow-prune: \"<reason>\"` on `PersistentVolumeClaim payments/data`\n"),
        "{out}"
    );
}

/// A PVC whose `Prune=false` is misspelled (GL005, an error) at `main`,
/// carrying `annotations` besides.
fn misspelled_protection(dir: &Path, annotations: &str) {
    let files = [
        ("apps/shop.yaml", app("shop", "shop", "")),
        (
            "shop/pvc.yaml",
            format!(
                "apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: orders-db
  annotations:
    argocd.argoproj.io/sync-options: prune=false
{annotations}spec: {{accessModes: [ReadWriteOnce]}}
"
            ),
        ),
    ];
    let files: Vec<(String, Vec<u8>)> = files
        .iter()
        .map(|(p, t)| ((*p).to_string(), t.as_bytes().to_vec()))
        .collect();
    write_commit(dir, "main", None, &files, "shop").expect("commit");
}

#[test]
fn the_ignore_annotation_a_failing_object_finding_shows_sets_it_aside() {
    let tmp = tempfile::tempdir().expect("tmp");
    misspelled_protection(tmp.path(), "");
    let (code, out) = run_human(tmp.path(), &["check", "main"]);
    assert_eq!(code, 1, "{out}");
    let shown = quoted_after(
        &out,
        "to ignore it, annotate `PersistentVolumeClaim shop/orders-db` with `",
    );
    assert_eq!(
        shown,
        ["gitops-lint.io/ignore: \"GL005 <reason>\""],
        "{out}"
    );

    let again = tempfile::tempdir().expect("tmp");
    misspelled_protection(again.path(), &format!("    {}\n", shown[0]));
    let (code, out) = run_human(again.path(), &["check", "main"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("GL005 unknown-sync-option (ignored on the object)"),
        "{out}"
    );
    assert!(!out.contains("to ignore it"), "{out}");
}

#[test]
fn a_finding_that_does_not_fail_the_run_shows_no_acknowledgement() {
    let tmp = tempfile::tempdir().expect("tmp");
    repo(tmp.path(), "", "", "Remove things");
    let (code, out) = run_human(tmp.path(), &["diff", "main..change", "--fail-on", "never"]);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("GL001 stateful-prune"), "{out}");
    assert!(!out.contains("to acknowledge it"), "{out}");
}
