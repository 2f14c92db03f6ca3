//! Charts fetched from a Helm repository and an OCI registry served on
//! 127.0.0.1 by the test itself, through the built binary: ranges resolve
//! as Argo CD resolves them, every archive is digest-verified, requests
//! are bounded in time and size, redirects stay on their host, credentials
//! come from Helm's files only, a repository the pull request introduces
//! is never contacted, a warm run contacts nothing, and archives planted
//! in the checkout are ignored.

use crate::common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use assert_cmd::Command;
use common::chart_server::{Request, Response, Server};
use gitops_lint::source::write_commit;
use serde_json::Value;
use sha2::Digest as _;

/// The chart `store` at `version`: a ConfigMap, and a PVC in 1.x only.
fn chart(version: &str) -> Vec<u8> {
    let mut files = vec![
        (
            "store/Chart.yaml".to_string(),
            format!("apiVersion: v2\nname: store\nversion: {version}\n").into_bytes(),
        ),
        (
            "store/templates/settings.yaml".to_string(),
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ .Release.Name }}-settings\ndata:\n  version: {{ .Chart.Version | quote }}\n".to_vec(),
        ),
    ];
    if version.starts_with('1') {
        files.push((
            "store/templates/pvc.yaml".to_string(),
            b"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {{ .Release.Name }}-data\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n".to_vec(),
        ));
    }
    common::tgz(&files)
}

fn sha256(b: &[u8]) -> String {
    sha2::Sha256::digest(b)
        .iter()
        .map(|x| format!("{x:02x}"))
        .collect()
}

/// A Helm repository under `/charts` holding `store` at `versions`; the
/// index of version `bad_digest` (if any) lies about its digest.
fn helm_repo(versions: &[&str], bad_digest: Option<&str>) -> BTreeMap<String, Vec<u8>> {
    let mut files = BTreeMap::new();
    let mut index = String::from("apiVersion: v1\nentries:\n  store:\n");
    for v in versions {
        let a = chart(v);
        let digest = if Some(*v) == bad_digest {
            sha256(b"something else")
        } else {
            sha256(&a)
        };
        index.push_str(&format!(
            "  - name: store\n    version: {v}\n    digest: {digest}\n    urls: [store-{v}.tgz]\n"
        ));
        files.insert(format!("/charts/store-{v}.tgz"), a);
    }
    files.insert("/charts/index.yaml".to_string(), index.into_bytes());
    files
}

fn serve_files(files: BTreeMap<String, Vec<u8>>) -> impl Fn(&Request) -> Response {
    move |r: &Request| match files.get(&r.path) {
        Some(b) => Response::ok(b.clone()),
        None => Response::status(404),
    }
}

fn app(name: &str, repo: &str, revision: &str) -> (String, Vec<u8>) {
    let text = format!(
        r#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: {name}, namespace: argocd}}
spec:
  project: default
  source: {{repoURL: "{repo}", chart: store, targetRevision: "{revision}"}}
  destination: {{server: "https://kubernetes.default.svc", namespace: {name}}}
  syncPolicy: {{automated: {{prune: true}}}}
"#
    );
    (format!("apps/{name}.yaml"), text.into_bytes())
}

fn config(lines: &[String]) -> (String, Vec<u8>) {
    let mut text = String::from("chartRepositories:\n");
    for l in lines {
        text.push_str(&format!("- {l}\n"));
    }
    (".gitops-lint.yaml".to_string(), text.into_bytes())
}

/// A repository with `base` on `main` and `head` on `change`.
fn repo(base: &[(String, Vec<u8>)], head: &[(String, Vec<u8>)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    write_commit(dir.path(), "main", None, base, "base").expect("base");
    write_commit(dir.path(), "change", Some("main"), head, "change").expect("head");
    dir
}

/// The environment of one run: its own cache and home (no credentials
/// unless the test writes them).
struct Env {
    home: tempfile::TempDir,
    cache: PathBuf,
    extra: Vec<(String, String)>,
}

impl Env {
    fn new() -> Env {
        let home = tempfile::tempdir().expect("home");
        let cache = home.path().join("cache");
        Env {
            home,
            cache,
            extra: Vec::new(),
        }
    }

    fn diff(&self, dir: &Path, args: &[&str]) -> (Value, std::process::Output) {
        let mut all = vec!["diff", "main..change", "--format", "json"];
        all.extend_from_slice(args);
        let out = self.run(dir, &all);
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (v, out)
    }

    fn run(&self, dir: &Path, args: &[&str]) -> std::process::Output {
        let mut c = Command::cargo_bin("gitops-lint").expect("binary built");
        c.env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", self.home.path())
            .env("XDG_CACHE_HOME", &self.cache)
            .env("XDG_CONFIG_HOME", self.home.path().join("config"));
        for (k, v) in &self.extra {
            c.env(k, v);
        }
        c.current_dir(dir).args(args).output().expect("runs")
    }
}

fn app_status(report: &Value, name: &str) -> String {
    report["apps"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["name"] == name)
        .and_then(|a| a["status"].as_str())
        .unwrap_or("")
        .to_string()
}

fn findings(report: &Value, code: &str) -> Vec<(String, String)> {
    report["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["code"] == code)
        .map(|f| {
            (
                f["severity"].as_str().unwrap_or("").to_string(),
                f["message"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn a_range_resolves_against_the_index_and_a_version_bump_is_a_real_diff_then_a_warm_run_contacts_nothing(
) {
    let server = Server::start(serve_files(helm_repo(
        &["1.0.0", "2.0.0", "2.0.1", "2.1.0", "3.0.0"],
        None,
    )));
    let url = format!("{}/charts", server.url());
    let cfg = config(std::slice::from_ref(&url));
    let dir = repo(
        &[cfg.clone(), app("cache", &url, "1.0.0")],
        // `~2.0` is `>= 2.0.0, < 2.1.0`: 2.0.1, as `versions.MaxVersion`.
        &[cfg, app("cache", &url, "~2.0")],
    );
    let env = Env::new();
    let (report, out) = env.diff(dir.path(), &[]);
    assert_eq!(app_status(&report, "cache"), "rendered", "{report}");
    let gl001 = findings(&report, "GL001");
    assert!(
        gl001
            .iter()
            .any(|(s, m)| s == "error" && m.contains("cache-data")),
        "the PVC of 1.0.0 is pruned by 2.0.1: {report}"
    );
    let notes = report["notes"].to_string();
    assert!(notes.contains("store 2.0.1 sha256:"), "{notes}");
    assert!(!notes.contains("store 2.1.0"), "{notes}");
    assert_eq!(out.status.code(), Some(1));
    let first = server.requests();
    assert!(
        first.contains(&"/charts/store-2.0.1.tgz".to_string()),
        "{first:?}"
    );
    // Warm: the same answer, and nothing contacted.
    server.reset();
    let (again, _) = env.diff(dir.path(), &[]);
    assert_eq!(server.requests(), Vec::<String>::new());
    assert_eq!(again["findings"], report["findings"]);
    // Offline with a warm cache: the same answer too.
    let (offline, _) = env.diff(dir.path(), &["--offline"]);
    assert_eq!(server.requests(), Vec::<String>::new());
    assert_eq!(offline["findings"], report["findings"]);
}

#[test]
fn offline_and_cold_contacts_nothing_and_says_what_it_would_fetch() {
    let server = Server::start(serve_files(helm_repo(&["1.0.0", "2.0.0"], None)));
    let url = format!("{}/charts", server.url());
    let cfg = config(std::slice::from_ref(&url));
    let dir = repo(
        &[cfg.clone(), app("cache", &url, "1.0.0")],
        &[cfg, app("cache", &url, "2.0.0")],
    );
    let (report, _) = Env::new().diff(dir.path(), &["--offline"]);
    assert_eq!(server.requests(), Vec::<String>::new());
    let notes = report["notes"].to_string();
    assert!(
        notes.contains("offline: would have fetched 2 charts") && notes.contains("store 2.0.0"),
        "{notes}"
    );
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000.iter().any(|(_, m)| m.contains("the run is offline")),
        "{report}"
    );
}

#[test]
fn an_archive_whose_digest_differs_from_the_index_is_not_rendered() {
    let server = Server::start(serve_files(helm_repo(&["1.0.0", "2.0.0"], Some("2.0.0"))));
    let url = format!("{}/charts", server.url());
    let cfg = config(std::slice::from_ref(&url));
    let dir = repo(
        &[cfg.clone(), app("cache", &url, "1.0.0")],
        &[cfg, app("cache", &url, "2.0.0")],
    );
    let (report, out) = Env::new().diff(dir.path(), &[]);
    assert_eq!(app_status(&report, "cache"), "unrendered", "{report}");
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000
            .iter()
            .any(|(s, m)| s == "error" && m.contains("not the digest")),
        "{gl000:?}"
    );
    // Nothing of it is judged: no prune is computed from an empty render.
    assert!(findings(&report, "GL001").is_empty(), "{report}");
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn an_oversize_archive_and_a_failing_server_are_said_at_the_severity_of_what_the_change_does() {
    let mut files = helm_repo(&["1.0.0", "2.0.0"], None);
    let big = files.remove("/charts/store-2.0.0.tgz").unwrap_or_default();
    let server = Server::start(move |r: &Request| {
        if r.path == "/charts/store-2.0.0.tgz" {
            // Announces 100 MiB: refused before it is read.
            return Response {
                claimed_length: Some(100 << 20),
                ..Response::ok(big.clone())
            };
        }
        serve_files(files.clone())(r)
    });
    let url = format!("{}/charts", server.url());
    let cfg = config(std::slice::from_ref(&url));
    let dir = repo(
        &[cfg.clone(), app("cache", &url, "1.0.0")],
        &[cfg, app("cache", &url, "2.0.0")],
    );
    let (report, _) = Env::new().diff(dir.path(), &[]);
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000
            .iter()
            .any(|(s, m)| s == "error" && m.contains("larger than 64 MiB")),
        "{gl000:?}"
    );

    let broken = Server::start(|r: &Request| {
        if r.path.ends_with("index.yaml") {
            Response::status(503)
        } else {
            Response::status(404)
        }
    });
    let url = format!("{}/charts", broken.url());
    let cfg = config(std::slice::from_ref(&url));
    let dir = repo(
        std::slice::from_ref(&cfg),
        &[cfg.clone(), app("cache", &url, "^1.0")],
    );
    let (report, _) = Env::new().diff(dir.path(), &[]);
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000
            .iter()
            // A new app: nothing of it exists yet to prune.
            .any(|(s, m)| s == "warning"
                && m.contains("answered 503")
                && m.contains("the app is new")),
        "{gl000:?}"
    );
}

#[test]
fn a_slow_server_is_given_up_on_within_the_timeout() {
    let files = helm_repo(&["1.0.0"], None);
    let server = Server::start(move |r: &Request| Response {
        delay: Some(Duration::from_secs(6)),
        ..serve_files(files.clone())(r)
    });
    let url = format!("{}/charts", server.url());
    let cfg = config(std::slice::from_ref(&url));
    let dir = repo(
        std::slice::from_ref(&cfg),
        &[cfg.clone(), app("cache", &url, "1.0.0")],
    );
    let mut env = Env::new();
    env.extra
        .push(("GITOPS_LINT_CHART_TIMEOUT".to_string(), "1".to_string()));
    let start = Instant::now();
    let (report, _) = env.diff(dir.path(), &[]);
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000.iter().any(|(s, m)| s == "warning"
            && m.contains("index.yaml")
            && m.contains("the app is new")),
        "{gl000:?}"
    );
}

#[test]
fn a_redirect_to_another_host_is_refused_and_that_host_never_contacted() {
    let other = Server::start(serve_files(helm_repo(&["1.0.0"], None)));
    // The index pins nothing: a redirect of it to another host is refused.
    let target = format!("{}/charts/index.yaml", other.url());
    let files = helm_repo(&["1.0.0"], None);
    let server = Server::start(move |r: &Request| {
        if r.path.ends_with("index.yaml") {
            Response::status(302).with_header("Location", &target)
        } else {
            serve_files(files.clone())(r)
        }
    });
    let url = format!("{}/charts", server.url());
    let cfg = config(&[url.clone(), other.url()]);
    let dir = repo(
        std::slice::from_ref(&cfg),
        &[cfg.clone(), app("cache", &url, "1.0.0")],
    );
    let (report, _) = Env::new().diff(dir.path(), &[]);
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000
            .iter()
            .any(|(s, m)| s == "warning" && m.contains("redirects to another host")),
        "{gl000:?}"
    );
    assert_eq!(other.requests(), Vec::<String>::new());
}

#[test]
fn credentials_come_from_helm_repositories_yaml_and_are_never_printed() {
    let files = helm_repo(&["1.0.0"], None);
    // `u:s3cret`
    let server = Server::start(move |r: &Request| {
        if r.header("authorization") == Some("Basic dTpzM2NyZXQ=") {
            serve_files(files.clone())(r)
        } else {
            Response::status(401).with_header("WWW-Authenticate", "Basic realm=\"charts\"")
        }
    });
    let url = format!("{}/charts", server.url());
    let cfg = config(std::slice::from_ref(&url));
    let dir = repo(
        std::slice::from_ref(&cfg),
        &[cfg.clone(), app("cache", &url, "1.0.0")],
    );
    let (report, _) = Env::new().diff(dir.path(), &[]);
    assert_eq!(app_status(&report, "cache"), "unrendered");
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000
            .iter()
            .any(|(_, m)| m.contains("answered 401") && m.contains("repositories.yaml")),
        "{gl000:?}"
    );
    let mut env = Env::new();
    let creds = env.home.path().join("repositories.yaml");
    std::fs::write(
        &creds,
        format!(
            "repositories:\n- name: private\n  url: {url}/\n  username: u\n  password: s3cret\n"
        ),
    )
    .expect("write");
    env.extra.push((
        "HELM_REPOSITORY_CONFIG".to_string(),
        creds.display().to_string(),
    ));
    let (report, out) = env.diff(dir.path(), &[]);
    assert_eq!(app_status(&report, "cache"), "rendered", "{report}");
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !all.contains("s3cret") && !all.contains("dTpzM2NyZXQ"),
        "{all}"
    );
}

#[test]
fn a_new_app_from_a_repository_the_change_introduces_is_an_error_too() {
    let introduced = Server::start(serve_files(helm_repo(&["1.0.0"], None)));
    let evil = format!("{}/charts", introduced.url());
    // Plain HTTP allowed for the host, but the repository is named nowhere
    // at base: a new app cannot choose what it is judged by either.
    let cfg = config(&[introduced.url()]);
    let dir = repo(
        std::slice::from_ref(&cfg),
        &[cfg.clone(), app("cache", &evil, "1.0.0")],
    );
    let (report, out) = Env::new().diff(dir.path(), &[]);
    assert_eq!(introduced.requests(), Vec::<String>::new());
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000
            .iter()
            .any(|(s, m)| s == "error"
                && m.contains("cannot be judged until the repository is trusted")),
        "{gl000:?}"
    );
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn a_repository_the_change_introduces_is_not_contacted_and_cannot_be_judged() {
    let trusted = Server::start(serve_files(helm_repo(&["1.0.0"], None)));
    let introduced = Server::start(serve_files(helm_repo(&["1.0.0"], None)));
    let good = format!("{}/charts", trusted.url());
    let evil = format!("{}/charts", introduced.url());
    // The base configuration lets both hosts speak plain HTTP but trusts
    // neither repository: the base names the first.
    let cfg = config(&[trusted.url(), introduced.url()]);
    let dir = repo(
        &[cfg.clone(), app("cache", &good, "1.0.0")],
        &[cfg, app("cache", &evil, "1.0.0")],
    );
    let (report, out) = Env::new().diff(dir.path(), &[]);
    assert_eq!(introduced.requests(), Vec::<String>::new());
    assert_eq!(app_status(&report, "cache"), "unrendered", "{report}");
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000.iter().any(|(s, m)| s == "error"
            && m.contains("cannot be judged until the repository is trusted")
            && m.contains(&format!("add `- {evil}` under `chartRepositories:`"))),
        "{gl000:?}"
    );
    assert!(findings(&report, "GL001").is_empty(), "{report}");
    assert_eq!(out.status.code(), Some(1));
    // The base's own repository was fetched from.
    assert!(!trusted.requests().is_empty());
}

#[test]
fn an_archive_planted_in_the_checkout_is_ignored() {
    let server = Server::start(serve_files(helm_repo(&["1.0.0"], None)));
    let url = format!("{}/charts", server.url());
    let mut cfg = config(std::slice::from_ref(&url));
    cfg.1.extend_from_slice(b"chartCache: .chart-cache\n");
    let dir = repo(
        &[cfg.clone(), app("cache", &url, "1.0.0")],
        // 9.9.9 is in no repository: only the planted archive has it.
        &[cfg, app("cache", &url, "9.9.9")],
    );
    let planted = dir.path().join(".chart-cache");
    std::fs::create_dir_all(&planted).expect("mkdir");
    std::fs::write(planted.join("store-9.9.9.tgz"), chart("9.9.9")).expect("plant");
    let (report, _) = Env::new().diff(dir.path(), &[]);
    assert_eq!(app_status(&report, "cache"), "unrendered", "{report}");
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000
            .iter()
            .any(|(_, m)| m.contains("9.9.9 is not in the index")),
        "{gl000:?}"
    );
    assert!(
        report["notes"]
            .to_string()
            .contains("`chartCache` of .gitops-lint.yaml is no longer read"),
        "{report}"
    );
}

/// An OCI registry for `charts/store`, asking for an anonymous bearer
/// token from its own `/token`.
fn registry() -> Server {
    let layers: Arc<BTreeMap<String, Vec<u8>>> = Arc::new(
        ["1.0.0", "1.2.0", "2.0.0"]
            .iter()
            .map(|v| (v.to_string(), chart(v)))
            .collect(),
    );
    let port = Arc::new(std::sync::OnceLock::<u16>::new());
    let p = Arc::clone(&port);
    let server = Server::start(move |r: &Request| {
        let port = p.get().copied().unwrap_or(0);
        if r.path.starts_with("/token") {
            return Response::ok(br#"{"token":"anon"}"#.to_vec());
        }
        if r.header("authorization") != Some("Bearer anon") {
            return Response::status(401).with_header(
                "WWW-Authenticate",
                &format!(
                    "Bearer realm=\"http://127.0.0.1:{port}/token\",service=\"reg\",scope=\"repository:charts/store:pull\""
                ),
            );
        }
        if r.path == "/v2/charts/store/tags/list" {
            return Response::ok(
                br#"{"name":"charts/store","tags":["1.0.0","1.2.0","2.0.0"]}"#.to_vec(),
            );
        }
        if let Some(tag) = r.path.strip_prefix("/v2/charts/store/manifests/") {
            let Some(layer) = layers.get(tag) else {
                return Response::status(404);
            };
            let m = format!(
                r#"{{"schemaVersion":2,"config":{{"mediaType":"application/vnd.cncf.helm.config.v1+json","digest":"sha256:{}","size":2}},"layers":[{{"mediaType":"application/vnd.cncf.helm.chart.content.v1.tar+gzip","digest":"sha256:{}","size":{}}}]}}"#,
                sha256(b"{}"),
                sha256(layer),
                layer.len()
            );
            return Response::ok(m.into_bytes());
        }
        if let Some(d) = r.path.strip_prefix("/v2/charts/store/blobs/sha256:") {
            return match layers.values().find(|l| sha256(l) == d) {
                Some(l) => Response::ok(l.clone()),
                None => Response::status(404),
            };
        }
        Response::status(404)
    });
    let _ = port.set(server.port);
    server
}

#[test]
fn an_oci_chart_resolves_tags_with_an_anonymous_token() {
    let server = registry();
    // Argo CD's OCI form without scheme.
    let repo_url = format!("127.0.0.1:{}/charts", server.port);
    let cfg = config(&[server.url()]);
    let dir = repo(
        &[cfg.clone(), app("cache", &repo_url, "1.0.0")],
        &[cfg, app("cache", &repo_url, ">=1.0 <2")],
    );
    let env = Env::new();
    let (report, _) = env.diff(dir.path(), &[]);
    assert_eq!(app_status(&report, "cache"), "rendered", "{report}");
    let notes = report["notes"].to_string();
    assert!(notes.contains("store 1.2.0 sha256:"), "{notes}");
    let reqs = server.requests();
    assert!(reqs.iter().any(|p| p.starts_with("/token")), "{reqs:?}");
    server.reset();
    let _ = env.diff(dir.path(), &[]);
    assert_eq!(server.requests(), Vec::<String>::new());
}

#[test]
fn charts_pull_fills_the_cache_for_both_revisions_and_an_offline_diff_then_contacts_nothing() {
    let server = Server::start(serve_files(helm_repo(&["1.0.0", "2.0.0", "3.0.0"], None)));
    let url = format!("{}/charts", server.url());
    let cfg = config(std::slice::from_ref(&url));
    let dir = repo(
        &[
            cfg.clone(),
            app("cache", &url, "1.0.0"),
            app("steady", &url, "3.0.0"),
        ],
        &[
            cfg,
            app("cache", &url, "2.0.0"),
            app("steady", &url, "3.0.0"),
        ],
    );
    let env = Env::new();
    let out = env.run(dir.path(), &["charts", "pull", "main..change"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    for v in ["1.0.0", "2.0.0", "3.0.0"] {
        assert!(
            stdout.contains(&format!("fetched {url} store {v} sha256:")),
            "{stdout}"
        );
    }
    assert!(
        stdout.contains("3 fetched, 0 already cached, 0 not fetched"),
        "{stdout}"
    );
    server.reset();
    let (report, _) = env.diff(dir.path(), &["--offline", "--all"]);
    assert_eq!(server.requests(), Vec::<String>::new());
    assert_eq!(app_status(&report, "cache"), "rendered", "{report}");
    assert_eq!(app_status(&report, "steady"), "rendered", "{report}");
    // Again: everything is cached now.
    let out = env.run(dir.path(), &["charts", "pull", "main..change"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("0 fetched, 3 already cached, 0 not fetched"),
        "{stdout}"
    );
    assert_eq!(server.requests(), Vec::<String>::new());
}

/// A wrapper chart in git whose `Chart.yaml` depends on `store` of `repo`
/// at `version`, not vendored, and the Application rendering it.
fn wrapper(repo: &str, version: &str, lock: bool) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![
        (
            "charts/wrapper/Chart.yaml".to_string(),
            format!(
                "apiVersion: v2\nname: wrapper\nversion: 0.1.0\ndependencies:\n  - name: store\n    version: \"{}\"\n    repository: {repo}\n",
                if lock { "*" } else { version }
            )
            .into_bytes(),
        ),
        (
            "apps/wrapper.yaml".to_string(),
            br#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: wrapper, namespace: argocd}
spec:
  project: default
  source: {repoURL: "https://github.com/acme/gitops.git", targetRevision: main, path: charts/wrapper}
  destination: {server: "https://kubernetes.default.svc", namespace: wrapper}
  syncPolicy: {automated: {prune: true}}
"#
            .to_vec(),
        ),
    ];
    if lock {
        files.push((
            "charts/wrapper/Chart.lock".to_string(),
            format!("dependencies:\n- name: store\n  repository: {repo}\n  version: {version}\ndigest: sha256:0\ngenerated: \"2024-01-01T00:00:00Z\"\n").into_bytes(),
        ));
    }
    files
}

#[test]
fn a_wrapper_charts_dependencies_are_built_from_the_repository_honouring_chart_lock() {
    let server = Server::start(serve_files(helm_repo(&["1.0.0", "2.0.0", "2.5.0"], None)));
    let url = format!("{}/charts", server.url());
    let cfg = config(&[server.url()]);
    let with = |cfg: &(String, Vec<u8>), files: Vec<(String, Vec<u8>)>| {
        let mut all = vec![cfg.clone()];
        all.extend(files);
        all
    };
    // The lock pins 2.0.0 although `*` would resolve to 2.5.0.
    let dir = repo(
        &with(&cfg, wrapper(&url, "1.0.0", true)),
        &with(&cfg, wrapper(&url, "2.0.0", true)),
    );
    let env = Env::new();
    let (report, _) = env.diff(dir.path(), &[]);
    assert_eq!(app_status(&report, "wrapper"), "rendered", "{report}");
    assert!(
        findings(&report, "GL001")
            .iter()
            .any(|(s, m)| s == "error" && m.contains("wrapper-data")),
        "the PVC of store 1.0.0 is pruned by 2.0.0: {report}"
    );
    let reqs = server.requests();
    assert!(
        reqs.contains(&"/charts/store-2.0.0.tgz".to_string()),
        "{reqs:?}"
    );
    assert!(
        !reqs.contains(&"/charts/store-2.5.0.tgz".to_string()),
        "{reqs:?}"
    );

    // A dependency the change moves to a repository the base does not name.
    let other = Server::start(serve_files(helm_repo(&["1.0.0"], None)));
    let evil = format!("{}/charts", other.url());
    let both = config(&[server.url(), other.url()]);
    let base = with(&both, wrapper(&url, "1.0.0", false));
    let head = with(&both, wrapper(&evil, "1.0.0", false));
    let dir = repo(&base, &head);
    let (report, _) = env.diff(dir.path(), &[]);
    assert_eq!(other.requests(), Vec::<String>::new());
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000.iter().any(|(s, m)| s == "error"
            && m.contains("chart dependency `store`")
            && m.contains("cannot be judged until the repository is trusted")),
        "{gl000:?}"
    );
}

#[test]
fn a_kustomize_helm_chart_with_a_repo_is_fetched_as_kustomize_would_pull_it() {
    let server = Server::start(serve_files(helm_repo(&["1.0.0", "2.0.0"], None)));
    let url = format!("{}/charts", server.url());
    let mut cfg = config(std::slice::from_ref(&url));
    cfg.1
        .extend_from_slice(b"kustomizeBuildOptions: --enable-helm\n");
    let side = |version: &str| {
        vec![
            cfg.clone(),
            (
                "envs/prod/kustomization.yaml".to_string(),
                format!(
                    "helmCharts:\n- name: store\n  repo: {url}\n  version: {version}\n  releaseName: shop\n  namespace: shop\n"
                )
                .into_bytes(),
            ),
            (
                "apps/shop.yaml".to_string(),
                br#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: shop, namespace: argocd}
spec:
  project: default
  source: {repoURL: "https://github.com/acme/gitops.git", targetRevision: main, path: envs/prod}
  destination: {server: "https://kubernetes.default.svc", namespace: shop}
  syncPolicy: {automated: {prune: true}}
"#
                .to_vec(),
            ),
        ]
    };
    let dir = repo(&side("1.0.0"), &side("2.0.0"));
    let (report, _) = Env::new().diff(dir.path(), &[]);
    assert_eq!(app_status(&report, "shop"), "rendered", "{report}");
    assert!(
        findings(&report, "GL001")
            .iter()
            .any(|(s, m)| s == "error" && m.contains("shop-data")),
        "the PVC of store 1.0.0 is pruned by 2.0.0: {report}"
    );
    let reqs = server.requests();
    assert!(
        reqs.contains(&"/charts/store-2.0.0.tgz".to_string()),
        "{reqs:?}"
    );
}

#[test]
fn a_dependency_named_by_at_name_is_fetched_from_the_repository_helm_knows_by_that_name() {
    let server = Server::start(serve_files(helm_repo(&["1.0.0", "2.0.0"], None)));
    let url = format!("{}/charts", server.url());
    let cfg = config(&[server.url()]);
    let with = |files: Vec<(String, Vec<u8>)>| {
        let mut all = vec![cfg.clone()];
        all.extend(files);
        all
    };
    // `@stores` at the base, `alias:stores` at the head: both name it.
    let dir = repo(
        &with(wrapper("\"@stores\"", "1.0.0", false)),
        &with(wrapper("\"alias:stores\"", "2.0.0", false)),
    );
    // Without the name in repositories.yaml nothing is contacted, and the
    // report says which `helm repo add` is missing.
    let (report, _) = Env::new().diff(dir.path(), &[]);
    assert_eq!(app_status(&report, "wrapper"), "unrendered", "{report}");
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000
            .iter()
            .any(|(_, m)| m.contains("helm repo add stores URL")),
        "{gl000:?}"
    );
    assert_eq!(server.requests(), Vec::<String>::new());

    let mut env = Env::new();
    let helm_repos = env.home.path().join("repositories.yaml");
    std::fs::write(
        &helm_repos,
        format!(
            "repositories:\n- name: other\n  url: https://other.invalid\n- name: stores\n  url: {url}\n"
        ),
    )
    .expect("write");
    env.extra.push((
        "HELM_REPOSITORY_CONFIG".to_string(),
        helm_repos.display().to_string(),
    ));
    let (report, _) = env.diff(dir.path(), &[]);
    assert_eq!(app_status(&report, "wrapper"), "rendered", "{report}");
    assert!(
        findings(&report, "GL001")
            .iter()
            .any(|(s, m)| s == "error" && m.contains("wrapper-data")),
        "the PVC of store 1.0.0 is pruned by 2.0.0: {report}"
    );
    let reqs = server.requests();
    for archive in ["/charts/store-1.0.0.tgz", "/charts/store-2.0.0.tgz"] {
        assert!(reqs.contains(&archive.to_string()), "{reqs:?}");
    }

    // A name the head brings, standing for a repository the base does not
    // name, is not contacted: trust is by URL, whatever the name.
    let other = Server::start(serve_files(helm_repo(&["2.0.0"], None)));
    std::fs::write(
        &helm_repos,
        format!(
            "repositories:\n- name: stores\n  url: {url}\n- name: elsewhere\n  url: {}/charts\n",
            other.url()
        ),
    )
    .expect("write");
    let dir = repo(
        &with(wrapper("\"@stores\"", "1.0.0", false)),
        &with(wrapper("\"@elsewhere\"", "2.0.0", false)),
    );
    let (report, _) = env.diff(dir.path(), &[]);
    assert_eq!(other.requests(), Vec::<String>::new());
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000.iter().any(|(s, m)| s == "error"
            && m.contains("chart dependency `store`")
            && m.contains("cannot be judged until the repository is trusted")),
        "{gl000:?}"
    );
}

#[test]
fn a_registry_credential_helper_is_never_run_and_the_refusal_says_so() {
    let server = Server::start(|_: &Request| {
        Response::status(401).with_header("WWW-Authenticate", "Basic realm=\"reg\"")
    });
    let repo_url = format!("oci://127.0.0.1:{}/charts", server.port);
    let cfg = config(&[server.url()]);
    let dir = repo(
        &[cfg.clone(), app("cache", &repo_url, "1.0.0")],
        &[cfg, app("cache", &repo_url, "1.2.0")],
    );
    let mut env = Env::new();
    // A helper on PATH that would leave a mark if it ran.
    let bin = env.home.path().join("bin");
    let docker = env.home.path().join("docker");
    let mark = env.home.path().join("helper-ran");
    std::fs::create_dir_all(&bin).expect("bin");
    std::fs::create_dir_all(&docker).expect("docker");
    let helper = bin.join("docker-credential-fake");
    std::fs::write(
        &helper,
        format!(
            "#!/bin/sh\ntouch '{}'\necho '{{\"Username\":\"u\",\"Secret\":\"s3cret\"}}'\n",
            mark.display()
        ),
    )
    .expect("helper");
    let mut perms = std::fs::metadata(&helper).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&helper, perms).expect("chmod");
    std::fs::write(
        docker.join("config.json"),
        format!(
            r#"{{"credHelpers":{{"127.0.0.1:{}":"fake"}}}}"#,
            server.port
        ),
    )
    .expect("config.json");
    env.extra.push((
        "PATH".to_string(),
        format!("{}:/usr/bin:/bin", bin.display()),
    ));
    env.extra
        .push(("DOCKER_CONFIG".to_string(), docker.display().to_string()));
    let (report, _) = env.diff(dir.path(), &[]);
    assert_eq!(app_status(&report, "cache"), "unrendered", "{report}");
    assert!(!mark.exists(), "the credential helper was run");
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000
            .iter()
            .any(|(_, m)| m.contains("credential helper") && m.contains("helm registry login")),
        "{gl000:?}"
    );
}

#[test]
fn an_archive_whose_digest_the_index_pins_follows_a_redirect_to_another_host_without_credentials() {
    // The other host: where release assets live. It records what it is
    // sent, and serves `store` 1.0.0, or, as `/wrong/`, another archive.
    let seen: Arc<std::sync::Mutex<Vec<Option<String>>>> = Arc::default();
    let log = Arc::clone(&seen);
    let right = chart("1.0.0");
    let wrong = chart("2.0.0");
    let assets = Server::start(move |r: &Request| {
        log.lock()
            .expect("log")
            .push(r.header("authorization").map(str::to_string));
        match r.path.as_str() {
            "/assets/store-1.0.0.tgz" => Response::ok(right.clone()),
            "/wrong/store-1.0.0.tgz" => Response::ok(wrong.clone()),
            _ => Response::status(404),
        }
    });
    let build = |prefix: &str| {
        let files = helm_repo(&["1.0.0"], None);
        let target = format!("{}/{prefix}/store-1.0.0.tgz", assets.url());
        // `u:s3cret`
        Server::start(move |r: &Request| {
            if r.header("authorization") != Some("Basic dTpzM2NyZXQ=") {
                return Response::status(401);
            }
            if r.path.ends_with(".tgz") {
                Response::status(302).with_header("Location", &target)
            } else {
                serve_files(files.clone())(r)
            }
        })
    };
    let run = |server: &Server| {
        let url = format!("{}/charts", server.url());
        let cfg = config(&[url.clone(), assets.url()]);
        let dir = repo(
            std::slice::from_ref(&cfg),
            &[cfg.clone(), app("cache", &url, "1.0.0")],
        );
        let mut env = Env::new();
        let creds = env.home.path().join("repositories.yaml");
        std::fs::write(
            &creds,
            format!(
                "repositories:\n- name: private\n  url: {url}\n  username: u\n  password: s3cret\n"
            ),
        )
        .expect("write");
        env.extra.push((
            "HELM_REPOSITORY_CONFIG".to_string(),
            creds.display().to_string(),
        ));
        env.diff(dir.path(), &[]).0
    };

    let server = build("assets");
    let report = run(&server);
    assert_eq!(app_status(&report, "cache"), "rendered", "{report}");
    let sent = seen.lock().expect("log").clone();
    assert_eq!(
        sent,
        vec![None],
        "the other host is asked once, without credentials"
    );

    // What the other host serves is still held to the index's digest.
    seen.lock().expect("log").clear();
    let server = build("wrong");
    let report = run(&server);
    assert_eq!(app_status(&report, "cache"), "unrendered", "{report}");
    let gl000 = findings(&report, "GL000");
    assert!(
        gl000
            .iter()
            .any(|(_, m)| m.contains("not the digest") && m.contains("index gives")),
        "{gl000:?}"
    );
    assert_eq!(seen.lock().expect("log").clone(), vec![None]);
}

/// (repository URL, chart, version) of the charts recorded from public
/// repositories in testdata/public-charts (scripts/record-public-charts.py):
/// what barbar0jav1er/homelab-argocd and khuedoan/homelab install.
const PUBLIC_CHARTS: &[(&str, &str, &str)] = &[
    (
        "https://raw.githubusercontent.com/kubernetes-csi/csi-driver-nfs/master/charts",
        "csi-driver-nfs",
        "4.11.0",
    ),
    (
        "https://bitnami-labs.github.io/sealed-secrets",
        "sealed-secrets",
        "2.16.2",
    ),
    ("https://traefik.github.io/charts", "traefik", "32.1.0"),
    ("https://metallb.github.io/metallb", "metallb", "0.14.5"),
    ("https://charts.longhorn.io/", "longhorn", "v1.9.1"),
    ("https://argoproj.github.io/argo-helm", "argo-cd", "7.5.2"),
    (
        "https://argoproj.github.io/argo-helm",
        "argocd-apps",
        "2.0.0",
    ),
    (
        "https://prometheus-community.github.io/helm-charts",
        "kube-prometheus-stack",
        "65.7.0",
    ),
];

/// Charts recorded for the wrapper charts of khuedoan/homelab, which
/// install them as `Chart.yaml` dependencies.
const PUBLIC_DEPENDENCIES: &[(&str, &str, &str)] = &[
    (
        "https://bjw-s-labs.github.io/helm-charts",
        "app-template",
        "2.2.0",
    ),
    (
        "https://bjw-s-labs.github.io/helm-charts",
        "app-template",
        "2.6.0",
    ),
    (
        "https://bjw-s-labs.github.io/helm-charts",
        "app-template",
        "3.1.0",
    ),
    (
        "https://bjw-s-labs.github.io/helm-charts",
        "app-template",
        "3.5.0",
    ),
];

/// The recording served as its repositories serve it, under their URLs'
/// paths: `https://HOST/PATH` is `/HOST/PATH` here, and the `urls` of an
/// index name this server the same way.
fn serve_public_charts(r: &Request) -> Response {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/public-charts");
    let rel = r.path.trim_start_matches('/');
    if rel
        .split('/')
        .any(|p| p.is_empty() || p == "." || p == "..")
    {
        return Response::status(404);
    }
    let Ok(body) = std::fs::read(root.join(rel)) else {
        return Response::status(404);
    };
    if !rel.ends_with("/index.yaml") {
        return Response::ok(body);
    }
    let host = r.header("host").unwrap_or_default();
    let text = String::from_utf8_lossy(&body).replace("https://", &format!("http://{host}/"));
    Response::ok(text.into_bytes())
}

/// The cache `cache_dir` filled with the recorded public charts through the
/// fetch code, keyed by their real repository URLs, as a fetch from those
/// repositories would fill it.
fn fill_with_public_charts(server: &Server, cache_dir: &Path) {
    let fetcher = gitops_lint::render::Fetcher::new(gitops_lint::render::FetchSettings {
        cache_dir: Some(cache_dir.to_path_buf()),
        credentials: Some(gitops_lint::render::Credentials::default()),
        ..Default::default()
    });
    for (repo, chart, version) in PUBLIC_CHARTS.iter().chain(PUBLIC_DEPENDENCIES) {
        let mirror = format!("{}/{}", server.url(), repo.trim_start_matches("https://"));
        let kept = fetcher.keep_from_mirror(repo, &mirror, chart, version);
        assert_eq!(kept.as_deref(), Ok(*version), "{repo} {chart}");
    }
}

#[test]
fn charts_recorded_from_public_repositories_render_offline_once_in_the_cache_under_their_real_urls()
{
    let server = Server::start(serve_public_charts);
    let apps: Vec<(String, Vec<u8>)> = PUBLIC_CHARTS
        .iter()
        .map(|(repo, chart, version)| {
            let text = format!(
                r#"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: {chart}, namespace: argocd}}
spec:
  project: default
  source: {{repoURL: "{repo}", chart: {chart}, targetRevision: "{version}"}}
  destination: {{server: "https://kubernetes.default.svc", namespace: {chart}}}
  syncPolicy: {{automated: {{prune: true}}}}
"#
            );
            (format!("apps/{chart}.yaml"), text.into_bytes())
        })
        .collect();
    // The change turns off metallb's CRDs subchart: a removal only the
    // rendered chart shows.
    let mut head = apps.clone();
    for (path, text) in &mut head {
        if path == "apps/metallb.yaml" {
            *text = String::from_utf8_lossy(text)
                .replace(
                    "targetRevision: \"0.14.5\"}",
                    "targetRevision: \"0.14.5\", helm: {valuesObject: {crds: {enabled: false}}}}",
                )
                .into_bytes();
        }
    }
    let dir = repo(&apps, &head);

    let empty = Env::new();
    let cache = empty.home.path().join("charts-cache");
    let cache_arg = cache.to_str().expect("utf-8 path");
    let (before, _) = empty.diff(
        dir.path(),
        &["--offline", "--all", "--cache-dir", cache_arg],
    );
    for (_, chart, _) in PUBLIC_CHARTS {
        assert_eq!(app_status(&before, chart), "unrendered", "{before}");
    }

    fill_with_public_charts(&server, &cache);
    if let Some(keep) = std::env::var_os("GITOPS_LINT_KEEP_PUBLIC_CHART_CACHE") {
        // scripts/public-repo-charts.sh counts what renders on a clone with it.
        copy_tree(&cache, Path::new(&keep));
    }
    server.reset();
    let (after, out) = empty.diff(
        dir.path(),
        &["--offline", "--all", "--cache-dir", cache_arg],
    );
    assert_eq!(
        server.requests(),
        Vec::<String>::new(),
        "offline contacts nothing"
    );
    for (_, chart, _) in PUBLIC_CHARTS {
        assert_eq!(
            app_status(&after, chart),
            "rendered",
            "{after}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The rendered chart shows what the change removes.
    let removed: Vec<String> = after["diff"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["app"] == "metallb")
        .flat_map(|d| d["resources"].as_array().cloned().unwrap_or_default())
        .filter(|r| r["change"] == "removed")
        .map(|r| {
            r["diff"]
                .as_str()
                .unwrap_or_default()
                .lines()
                .next()
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    assert!(
        removed
            .iter()
            .any(|l| l.contains("CustomResourceDefinition_bgppeers.metallb.io")),
        "{removed:?}"
    );
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).expect("cache dir") {
        let entry = entry.expect("entry");
        let dest = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            std::fs::create_dir_all(&dest).expect("mkdir");
            copy_tree(&entry.path(), &dest);
        } else {
            std::fs::copy(entry.path(), dest).expect("copy");
        }
    }
}
