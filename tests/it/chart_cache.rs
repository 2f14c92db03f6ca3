//! Charts from Helm repositories read from a chart cache directory in an
//! offline run, through the built binary: `--chart-cache DIR` names the
//! directory (`chartCache:` of the checkout is no longer read while the
//! command line fetches), a missing archive names what to `helm pull`, and
//! a hostile archive (a gzip bomb) is refused within the bounds instead of
//! exhausting memory. Fetching itself is tested in `chart_fetch.rs`.

use crate::common;

use std::path::Path;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use gitops_lint::source::write_commit;
use serde_json::Value;

fn bin() -> Command {
    let mut c = Command::cargo_bin("gitops-lint").expect("binary built");
    c.env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"));
    // `charts.example.com` is not contacted: these runs read the directory.
    c.env("GITOPS_LINT_OFFLINE", "1");
    // The pinned helm when it is on PATH (an absolute entry), nothing else.
    let path = gitops_lint::cli::find_on_path("helm")
        .and_then(|h| h.parent().map(|d| format!("{}:/usr/bin:/bin", d.display())))
        .unwrap_or_else(|| "/usr/bin:/bin".to_string());
    c.env("PATH", path);
    c
}

fn app(version: &str) -> (String, Vec<u8>) {
    let text = format!(
        r#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: cache, namespace: argocd}}
spec:
  project: default
  source: {{repoURL: "https://charts.example.com/stable", chart: store, targetRevision: "{version}"}}
  destination: {{server: "https://kubernetes.default.svc", namespace: cache}}
"#
    );
    ("apps/cache.yaml".to_string(), text.into_bytes())
}

/// A repository whose one app installs `store` at `version`, with
/// `config` as `.gitops-lint.yaml` when given.
fn repo(version: &str, config: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut files = vec![app(version)];
    if let Some(c) = config {
        files.push((".gitops-lint.yaml".to_string(), c.as_bytes().to_vec()));
    }
    write_commit(dir.path(), "main", None, &files, "init").expect("commit");
    dir
}

fn check(dir: &Path, extra: &[&str]) -> (Value, std::process::Output) {
    let out = bin()
        .current_dir(dir)
        .args(["check", "main", "--format", "json"])
        .args(extra)
        .output()
        .expect("runs");
    let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
    (v, out)
}

fn status(report: &Value) -> String {
    report["apps"][0]["status"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn gl000(report: &Value) -> String {
    report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|f| f["code"] == "GL000")
        .and_then(|f| f["message"].as_str())
        .unwrap_or("")
        .to_string()
}

#[test]
fn offline_a_chart_never_fetched_is_unrendered_and_says_how_to_fetch_it() {
    let dir = repo("1.0.0", None);
    let (report, _) = check(dir.path(), &[]);
    assert_eq!(status(&report), "unrendered");
    let msg = gl000(&report);
    assert!(
        msg.contains("chart `store` 1.0.0 from `https://charts.example.com/stable` is not in the chart cache, and the run is offline"),
        "{msg}"
    );
}

#[test]
fn a_chart_cache_that_lacks_the_version_names_the_file_and_the_pull() {
    let dir = repo("1.0.0", Some("chartCache: ci/charts\n"));
    std::fs::create_dir_all(dir.path().join("ci/charts")).expect("mkdir");
    let other = tempfile::tempdir().expect("tempdir");
    let (report, _) = check(
        dir.path(),
        &["--chart-cache", &other.path().display().to_string()],
    );
    assert_eq!(status(&report), "unrendered");
    let msg = gl000(&report);
    let shown = other.path().display().to_string();
    assert!(
        msg.contains(&format!("expected `{shown}/store-1.0.0.tgz`"))
            && msg.contains(&format!(
                "`helm pull store --repo https://charts.example.com/stable --version 1.0.0 -d {shown}`"
            )),
        "{msg}"
    );
}

#[test]
fn a_chart_cache_option_naming_no_directory_stops_the_run() {
    let dir = repo("1.0.0", None);
    let (_, out) = check(dir.path(), &["--chart-cache", "no/such/dir"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--chart-cache no/such/dir: no such directory"),
        "{err}"
    );
}

#[test]
fn a_gzip_bomb_in_the_chart_cache_is_refused_within_the_bound() {
    let dir = repo("6.6.6", None);
    let cache = tempfile::tempdir().expect("tempdir");
    // 24 files of 5 MiB of zeros: 120 MiB unpacked, a few hundred KiB packed.
    let zeros = vec![0u8; 5 << 20];
    let files: Vec<(String, Vec<u8>)> = (0..24)
        .map(|i| (format!("store/f{i}"), zeros.clone()))
        .collect();
    let bomb = common::tgz(&files);
    assert!(bomb.len() < 1 << 20, "the bomb is {} bytes", bomb.len());
    std::fs::write(cache.path().join("store-6.6.6.tgz"), bomb).expect("write");
    let started = Instant::now();
    let (report, _) = check(
        dir.path(),
        &["--chart-cache", &cache.path().display().to_string()],
    );
    assert_eq!(status(&report), "unrendered");
    let msg = gl000(&report);
    assert!(msg.contains("unpacks to more than 100 MiB"), "{msg}");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_cached_chart_renders_with_helm() {
    if !have_helm("a_cached_chart_renders_with_helm") {
        return;
    }
    let dir = repo("1.0.0", None);
    let cache = tempfile::tempdir().expect("tempdir");
    let files = vec![
        (
            "store/Chart.yaml".to_string(),
            b"apiVersion: v2\nname: store\nversion: 1.0.0\n".to_vec(),
        ),
        (
            "store/templates/cm.yaml".to_string(),
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\n"
                .to_vec(),
        ),
    ];
    std::fs::write(cache.path().join("store-1.0.0.tgz"), common::tgz(&files)).expect("write");
    let (report, out) = check(
        dir.path(),
        &["--chart-cache", &cache.path().display().to_string()],
    );
    assert_eq!(
        status(&report),
        "rendered",
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

/// Whether helm is on PATH; says so visibly when it is not (and fails
/// where the oracles are required).
fn have_helm(test: &str) -> bool {
    if gitops_lint::cli::find_on_path("helm").is_some() {
        return true;
    }
    eprintln!("NOT RUN: {test}, no `helm` on PATH");
    assert!(
        std::env::var_os("GITOPS_LINT_REQUIRE_ORACLES").is_none(),
        "helm is required here"
    );
    false
}

#[test]
fn a_packed_subchart_schema_naming_the_machine_is_refused_before_helm_runs() {
    if !have_helm("a_packed_subchart_schema_naming_the_machine_is_refused_before_helm_runs") {
        return;
    }
    let evil = common::tgz(&[
        (
            "evil/Chart.yaml".to_string(),
            b"apiVersion: v2\nname: evil\nversion: 0.1.0\n".to_vec(),
        ),
        (
            "evil/values.schema.json".to_string(),
            br#"{"properties": {"a": {"$ref": "file:///etc/hostname"}}}"#.to_vec(),
        ),
    ]);
    let chart = |name: &str| {
        vec![
            (
                format!("{name}/Chart.yaml"),
                format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\ndependencies:\n  - name: evil\n    version: 0.1.0\n").into_bytes(),
            ),
            (format!("{name}/charts/evil-0.1.0.tgz"), evil.clone()),
        ]
    };
    // Vendored in git, beside a chart source.
    let dir = tempfile::tempdir().expect("tempdir");
    let mut files: Vec<(String, Vec<u8>)> = chart("charts/shop");
    files.push((
        "apps/shop.yaml".to_string(),
        br#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  project: default
  source: {repoURL: "https://github.com/acme/gitops.git", targetRevision: main, path: charts/shop}
  destination: {server: "https://kubernetes.default.svc", namespace: shop}
"#
        .to_vec(),
    ));
    write_commit(dir.path(), "main", None, &files, "init").expect("commit");
    let (report, _) = check(dir.path(), &[]);
    let msg = gl000(&report);
    assert!(
        msg.contains("`charts/shop/charts/evil-0.1.0.tgz: evil/values.schema.json` refers to `file:///etc/hostname`"),
        "{msg}"
    );
    // Packed inside a cached chart.
    let dir = repo("1.0.0", None);
    let cache = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        cache.path().join("store-1.0.0.tgz"),
        common::tgz(&chart("store")),
    )
    .expect("write");
    let (report, _) = check(
        dir.path(),
        &["--chart-cache", &cache.path().display().to_string()],
    );
    let msg = gl000(&report);
    assert!(
        msg.contains("`store/charts/evil-0.1.0.tgz: evil/values.schema.json` refers to `file:///etc/hostname`"),
        "{msg}"
    );
}
