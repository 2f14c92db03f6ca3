//! Helpers shared by the integration tests: fixture repositories, output
//! normalisation, snapshot files, and the SARIF schema.

#![allow(dead_code)]

use std::path::Path;

pub mod chart_server;
pub mod golden;

use gitops_lint::source::write_commit;

/// Every file under `root`, as (relative path, bytes), sorted.
pub fn files_of(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for e in walkdir::WalkDir::new(root).sort_by_file_name() {
        let e = e.expect("readable fixture");
        if e.file_type().is_file() {
            let rel = e
                .path()
                .strip_prefix(root)
                .expect("inside root")
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, std::fs::read(e.path()).expect("readable fixture file")));
        }
    }
    out
}

/// A gzip-compressed tar archive of `files` (path, bytes), as `helm
/// package` writes one: plain files, fixed times and modes, so the same
/// files always make the same bytes.
pub fn tgz(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for (path, bytes) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(bytes.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(0);
        h.set_entry_type(tar::EntryType::Regular);
        tar.append_data(&mut h, path, bytes.as_slice())
            .expect("archive entry");
    }
    tar.into_inner()
        .and_then(flate2::write::GzEncoder::finish)
        .expect("archive")
}

/// Commits `case/base` on `main` and `case/head` on `change` (with
/// `message`) into a new repository at `repo`; returns both commit ids.
pub fn commit_case(repo: &Path, case: &Path, message: &str) -> (String, String) {
    let base = write_commit(repo, "main", None, &files_of(&case.join("base")), "base")
        .expect("base commit");
    let head = write_commit(
        repo,
        "change",
        Some("main"),
        &files_of(&case.join("head")),
        message,
    )
    .expect("head commit");
    (base, head)
}

/// Replaces commit ids (full and the 12-character short form) with `<base>`
/// and `<head>`, and the temporary directory paths with `<tmp>`.
pub fn normalize(text: &str, base: &str, head: &str) -> String {
    text.replace(base, "<base>")
        .replace(head, "<head>")
        .replace(&base[..12], "<base>")
        .replace(&head[..12], "<head>")
}

/// Compares `actual` with the file at `path`, or rewrites the file when
/// `GITOPS_LINT_BLESS` is set.
pub fn compare_or_bless(path: &Path, actual: &str) -> Result<(), String> {
    if std::env::var_os("GITOPS_LINT_BLESS").is_some() {
        std::fs::write(path, actual).expect("write expectation");
        return Ok(());
    }
    match std::fs::read_to_string(path) {
        Ok(expected) if expected == actual => Ok(()),
        Ok(expected) => Err(format!(
            "{} differs (GITOPS_LINT_BLESS=1 to accept)\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        )),
        Err(_) => Err(format!(
            "{} is missing (GITOPS_LINT_BLESS=1 to create it)\n--- actual\n{actual}",
            path.display()
        )),
    }
}

/// The OASIS SARIF 2.1.0 schema vendored in `testdata/sarif` (or from
/// `$GITOPS_LINT_SCHEMAS`). The published file has one known-bad
/// `language` pattern (oasis-tcs/sarif-spec#490) that is not a valid regex;
/// where present it is patched here, in memory, to
/// `^[a-zA-Z]{2}(-[a-zA-Z]{2})?$` so the validator accepts the schema.
pub fn sarif_schema() -> serde_json::Value {
    // Read when the test runs: a path compiled in names whichever clone
    // last built a shared target directory.
    let root = std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).to_path_buf(),
        Into::into,
    );
    let dirs: Vec<std::path::PathBuf> = std::env::var_os("GITOPS_LINT_SCHEMAS")
        .map(std::path::PathBuf::from)
        .into_iter()
        .chain([root.join("testdata/sarif")])
        .collect();
    let file = dirs
        .iter()
        .map(|d| d.join("sarif-schema-2.1.0.json"))
        .find(|f| f.is_file())
        .unwrap_or_else(|| {
            panic!("sarif-schema-2.1.0.json not found in {dirs:?}; set GITOPS_LINT_SCHEMAS")
        });
    let text = std::fs::read_to_string(&file).expect("schema readable");
    let text = text.replace(
        r#""^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$""#,
        r#""^[a-zA-Z]{2}(-[a-zA-Z]{2})?$""#,
    );
    serde_json::from_str(&text).expect("schema is JSON")
}

/// Every schema violation in `log`, as `path: message` lines.
pub fn sarif_schema_errors(log: &serde_json::Value) -> Vec<String> {
    let schema = sarif_schema();
    let v = jsonschema::validator_for(&schema).expect("patched schema compiles");
    v.iter_errors(log)
        .map(|e| format!("{}: {e}", e.instance_path()))
        .collect()
}

/// An automated-prune Application `payments` for `payments/` (CLI tests).
pub const APP: &str = "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: payments
  namespace: argocd
spec:
  source:
    repoURL: https://git.example.com/gitops.git
    targetRevision: main
    path: payments
  destination:
    server: https://kubernetes.default.svc
    namespace: payments
  syncPolicy:
    automated:
      prune: true
";

/// A PVC `ledger` for the `payments` app (CLI tests).
pub const PVC: &str = "apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ledger
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
";

/// Runs git in `dir` with a fixed identity; panics with git's stderr on failure.
pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.invalid"])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}
