//! `gitops-lint render --app NAME`, through the built binary on real git
//! repositories: what one Application renders, as a YAML stream, at the
//! working directory or at a revision, and the errors a user meets.

use crate::common;

use std::io::Write as _;
use std::path::Path;

use assert_cmd::Command;
use gitops_lint::source::write_commit;
use serde_json::{json, Value};

fn bin() -> Command {
    let mut cmd = Command::cargo_bin("gitops-lint").expect("the gitops-lint binary is built");
    cmd.env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"));
    cmd.env("NO_COLOR", "1").env_remove("GITOPS_LINT_BLESS");
    cmd
}

const REPO_URL: &str = "https://git.example.com/gitops.git";

/// `web`: a Kustomize overlay (`namePrefix`, and the Application's own
/// `kustomize.commonLabels`) over a base; `shop`: a local chart with a
/// release name, a value file, `values` and a parameter; `mixed`: a
/// multi-source app rendering the chart with a `$values` file of a `ref:`
/// source, and a plain directory.
fn files() -> Vec<(String, Vec<u8>)> {
    let apps = format!(
        "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: web, namespace: argocd}}
spec:
  source:
    repoURL: {REPO_URL}
    targetRevision: main
    path: web/overlay
    kustomize:
      commonLabels: {{team: storefront}}
  destination: {{server: https://kubernetes.default.svc, namespace: web}}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: shop, namespace: argocd}}
spec:
  source:
    repoURL: {REPO_URL}
    targetRevision: main
    path: charts/shop
    helm:
      releaseName: storefront
      valueFiles: [values-prod.yaml]
      values: |
        tier: gold
      parameters:
        - {{name: replicas, value: \"4\"}}
  destination: {{server: https://kubernetes.default.svc, namespace: shop}}
---
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: mixed, namespace: argocd}}
spec:
  sources:
    - repoURL: {REPO_URL}
      targetRevision: main
      path: charts/shop
      helm:
        valueFiles: [$config/envs/eu.yaml]
    - {{repoURL: {REPO_URL}, targetRevision: main, ref: config}}
    - {{repoURL: {REPO_URL}, targetRevision: main, path: plain}}
  destination: {{server: https://kubernetes.default.svc, namespace: mixed}}
"
    );
    let chart_template = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ .Release.Name }}
  namespace: {{ .Release.Namespace }}
spec:
  replicas: {{ .Values.replicas }}
  template:
    metadata:
      labels: {color: {{ .Values.color }}, tier: {{ .Values.tier }}}
";
    [
        ("apps/apps.yaml", apps.as_str()),
        (
            "web/base/kustomization.yaml",
            "resources: [settings.yaml]\n",
        ),
        (
            "web/base/settings.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: live}\n",
        ),
        (
            "web/overlay/kustomization.yaml",
            "resources: [../base]\nnamePrefix: prod-\n",
        ),
        (
            "charts/shop/Chart.yaml",
            "apiVersion: v2\nname: shop\nversion: 0.1.0\n",
        ),
        (
            "charts/shop/values.yaml",
            "replicas: 1\ncolor: blue\ntier: bronze\n",
        ),
        ("charts/shop/values-prod.yaml", "color: red\n"),
        ("charts/shop/templates/deployment.yaml", chart_template),
        ("envs/eu.yaml", "color: green\n"),
        (
            "plain/service.yaml",
            "apiVersion: v1\nkind: Service\nmetadata: {name: front}\nspec: {ports: [{port: 80}]}\n",
        ),
    ]
    .into_iter()
    .map(|(p, t)| (p.to_string(), t.as_bytes().to_vec()))
    .collect()
}

/// The repository committed on `main` and checked out.
fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    write_commit(dir.path(), "main", None, &files(), "apps").expect("commit");
    common::git(dir.path(), &["checkout", "-f", "main"]);
    dir
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: Vec<String>,
}

fn render(repo: &Path, args: &[&str], helm: bool) -> Run {
    let mut cmd = bin();
    cmd.arg("render").args(args).arg("--repo").arg(repo);
    if !helm {
        // Nothing found on PATH: no helm.
        cmd.env("PATH", "/nonexistent");
    }
    let out = cmd.output().expect("runs");
    Run {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr)
            .lines()
            .map(str::to_string)
            .collect(),
    }
}

fn docs(text: &str) -> Vec<Value> {
    goyaml::load_all(text)
        .expect("render prints YAML")
        .into_iter()
        .map(|d| d.into_value())
        .collect()
}

/// A `helm` on PATH, or a NOT RUN line (a failure where the oracles are
/// required, as `.ci/run` requires them).
fn helm_or_not_run(what: &str) -> bool {
    if gitops_lint::cli::find_on_path("helm").is_some() {
        return true;
    }
    let line = format!("NOT RUN: {what}: no `helm` on PATH (install helm v3.17.1, see .ci/run)");
    let _ = writeln!(std::io::stderr(), "{line}");
    assert!(
        std::env::var_os("GITOPS_LINT_REQUIRE_ORACLES").is_none(),
        "{line}"
    );
    false
}

/// A Kustomize app renders with its Application's options, at the working
/// directory by default (edits not yet committed included) and at a
/// revision with `--rev`.
#[test]
fn a_kustomize_app_renders_with_its_options_at_the_worktree_or_a_revision() {
    let dir = repo();
    let out = render(dir.path(), &["--app", "web"], false);
    assert_eq!(out.code, Some(0), "{:?}", out.stderr);
    assert_eq!(
        docs(&out.stdout),
        vec![json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "prod-settings", "labels": {"team": "storefront"}},
            "data": {"mode": "live"}
        })]
    );
    assert!(out.stdout.starts_with("---\n"), "{}", out.stdout);

    std::fs::write(
        dir.path().join("web/base/settings.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {mode: draining}\n",
    )
    .expect("edit");
    let edited = render(dir.path(), &["--app", "web"], false);
    assert_eq!(docs(&edited.stdout)[0]["data"]["mode"], "draining");
    let committed = render(dir.path(), &["--app", "web", "--rev", "main"], false);
    assert_eq!(docs(&committed.stdout)[0]["data"]["mode"], "live");
}

/// The `shop` app's render: release name, destination namespace, value
/// file, `values` and parameters, in that precedence.
fn storefront() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "storefront", "namespace": "shop"},
        "spec": {
            "replicas": 4,
            "template": {"metadata": {"labels": {"color": "red", "tier": "gold"}}}
        }
    })
}

/// A Helm app renders as `helm template` with Argo CD's flags: release
/// name, destination namespace, value file, `values` and parameters, in
/// that precedence.
#[test]
fn a_helm_app_renders_with_its_release_values_and_parameters() {
    if !helm_or_not_run("render --app of a Helm app") {
        return;
    }
    let dir = repo();
    let out = render(
        dir.path(),
        &[
            "--app",
            "shop",
            "--rev",
            "main",
            "--helm-renderer",
            "binary",
        ],
        true,
    );
    assert_eq!(out.code, Some(0), "{:?}", out.stderr);
    assert_eq!(docs(&out.stdout), vec![storefront()]);
}

/// A field a chart fills from random values is rendered, and the document
/// says it is one draw of many that no comparison reads.
#[test]
fn generated_fields_are_named_above_their_document() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files: Vec<(String, Vec<u8>)> = [
        (
            "apps/vault.yaml",
            format!("apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: vault, namespace: argocd}}\nspec:\n  source: {{repoURL: {REPO_URL}, targetRevision: main, path: charts/vault}}\n  destination: {{server: https://kubernetes.default.svc, namespace: vault}}\n"),
        ),
        (
            "charts/vault/Chart.yaml",
            "apiVersion: v2\nname: vault\nversion: 0.1.0\n".to_string(),
        ),
        (
            "charts/vault/templates/secret.yaml",
            "apiVersion: v1\nkind: Secret\nmetadata: {name: creds}\nstringData:\n  user: admin\n  password: {{ randAlphaNum 16 | quote }}\n".to_string(),
        ),
    ]
    .into_iter()
    .map(|(p, t)| (p.to_string(), t.into_bytes()))
    .collect();
    write_commit(dir.path(), "main", None, &files, "vault").expect("commit");
    let out = render(dir.path(), &["--app", "vault", "--rev", "main"], false);
    assert_eq!(out.code, Some(0), "{:?}", out.stderr);
    assert!(
        out.stdout.starts_with("---\n# gitops-lint: drawn anew at every render (random values or the clock), never compared: /stringData/password\n"),
        "{}",
        out.stdout
    );
    let doc = &docs(&out.stdout)[0];
    assert_eq!(doc["stringData"]["user"], "admin");
    assert_eq!(
        doc["stringData"]["password"].as_str().map(str::len),
        Some(16)
    );
}

/// Without helm, a Helm app renders natively, as helm renders it; with the
/// binary renderer chosen it is not rendered: the reason on stderr, exit 4,
/// nothing on stdout.
#[test]
fn a_helm_app_without_helm_renders_natively_unless_the_binary_is_chosen() {
    let dir = repo();
    let out = render(dir.path(), &["--app", "shop", "--rev", "main"], false);
    assert_eq!(out.code, Some(0), "{:?}", out.stderr);
    assert_eq!(docs(&out.stdout), vec![storefront()]);
    let out = render(
        dir.path(),
        &["--app", "shop", "--helm-renderer", "binary"],
        false,
    );
    assert_eq!(out.code, Some(4));
    assert_eq!(out.stdout, "");
    assert_eq!(out.stderr.len(), 1, "{:?}", out.stderr);
    assert!(
        out.stderr[0].starts_with("gitops-lint: error: cannot render app `shop`: `charts/shop` is a Helm chart and no `helm` binary is on PATH"),
        "{:?}",
        out.stderr
    );
}

/// A multi-source app: the chart with a `$ref` value file, then the plain
/// directory, in source order.
#[test]
fn a_multi_source_app_renders_every_source_in_order() {
    if !helm_or_not_run("render --app of a multi-source app") {
        return;
    }
    let dir = repo();
    let out = render(dir.path(), &["--app", "mixed"], true);
    assert_eq!(out.code, Some(0), "{:?}", out.stderr);
    let got = docs(&out.stdout);
    let kinds: Vec<&str> = got.iter().filter_map(|d| d["kind"].as_str()).collect();
    assert_eq!(kinds, ["Deployment", "Service"], "{}", out.stdout);
    assert_eq!(
        got[0]["metadata"]["name"], "mixed",
        "the app name is the release"
    );
    assert_eq!(
        got[0]["spec"]["template"]["metadata"]["labels"]["color"], "green",
        "the $config value file is used"
    );
    assert_eq!(got[1]["metadata"]["name"], "front");
}

/// An unknown name is one error line naming the close ones; a name far
/// from any says how many apps there are.
#[test]
fn an_unknown_app_name_lists_the_close_ones() {
    let dir = repo();
    let out = render(dir.path(), &["--app", "shopp"], false);
    assert_eq!(out.code, Some(2));
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        ["gitops-lint: error: no app named `shopp` (did you mean `shop`?)"]
    );
    let out = render(dir.path(), &["--app", "billing"], false);
    assert_eq!(out.code, Some(2));
    assert_eq!(
        out.stderr,
        ["gitops-lint: error: no app named `billing` (3 app(s) at revision WORKTREE; `gitops-lint check` lists them)"]
    );
}

/// An app whose chart comes from a Helm repository is not rendered
/// offline: exit 4, saying where its sources are.
#[test]
fn an_app_from_a_helm_repository_says_it_is_not_in_this_repository() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut files = files();
    files.push((
        "apps/remote.yaml".into(),
        b"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: ingress, namespace: argocd}
spec:
  source: {repoURL: https://charts.example.com, chart: ingress-nginx, targetRevision: 4.11.0}
  destination: {server: https://kubernetes.default.svc, namespace: ingress}
"
        .to_vec(),
    ));
    write_commit(dir.path(), "main", None, &files, "apps").expect("commit");
    // Offline (nothing is contacted by this test): the chart is not cached.
    let out = render(
        dir.path(),
        &["--app", "ingress", "--rev", "main", "--offline"],
        false,
    );
    assert_eq!(out.code, Some(4));
    assert_eq!(
        out.stderr,
        ["gitops-lint: error: cannot render app `ingress`: chart `ingress-nginx` 4.11.0 from `https://charts.example.com` is not in the chart cache, and the run is offline: `gitops-lint charts pull` (or a run without --offline) fetches it"]
    );
}

/// A multi-source app whose chart comes from a Helm repository prints what
/// its git source renders, names the chart left out on stderr, and exits 3:
/// neither a complete render (0) nor a failure (2).
#[test]
fn a_partial_app_prints_what_it_can_and_exits_3_naming_the_source_left_out() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut files = files();
    files.push((
        "apps/ledger.yaml".into(),
        format!(
            "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: ledger, namespace: argocd}}
spec:
  sources:
    - {{repoURL: https://charts.example.com, chart: postgresql, targetRevision: 15.5.0}}
    - {{repoURL: {REPO_URL}, targetRevision: main, path: plain}}
  destination: {{server: https://kubernetes.default.svc, namespace: ledger}}
"
        )
        .into_bytes(),
    ));
    write_commit(dir.path(), "main", None, &files, "apps").expect("commit");
    let out = render(
        dir.path(),
        &["--app", "ledger", "--rev", "main", "--offline"],
        false,
    );
    assert_eq!(out.code, Some(3), "{:?}", out.stderr);
    let objects = docs(&out.stdout);
    assert_eq!(objects.len(), 1, "{}", out.stdout);
    assert_eq!(objects[0]["kind"], "Service");
    assert_eq!(objects[0]["metadata"]["name"], "front");
    assert_eq!(
        out.stderr,
        ["gitops-lint: partial render, what this source renders is missing: Helm chart `postgresql` from `https://charts.example.com`: chart `postgresql` 15.5.0 from `https://charts.example.com` is not in the chart cache, and the run is offline: `gitops-lint charts pull` (or a run without --offline) fetches it"]
    );
}

/// `render PATH` is unchanged, and a PATH with `--app` is refused.
#[test]
fn render_takes_a_path_or_an_app_not_both() {
    let dir = repo();
    let out = bin()
        .current_dir(dir.path())
        .args(["render", "plain"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        docs(&String::from_utf8_lossy(&out.stdout))[0]["kind"],
        "Service"
    );
    let out = render(dir.path(), &["plain", "--app", "web"], false);
    assert_eq!(out.code, Some(2));
    assert_eq!(out.stderr.len(), 1, "{:?}", out.stderr);
    assert!(
        out.stderr[0].contains("the argument '[PATH]' cannot be used with '--app <NAME>'"),
        "{:?}",
        out.stderr
    );
}

/// `render PATH` of a chart renders as the helm of the configured
/// `argocdVersion`, as an app's render does: the default kube version is
/// that helm's (v1.32.0 for Argo CD 3.0's v3.17.1, v1.33.0 for 3.2's
/// v3.18.4), and `helmRenderer` is the configuration's too.
#[test]
fn a_chart_path_renders_as_the_configured_argo_cds_helm() {
    for (argocd, kube) in [("3.0", "v1.32.0"), ("3.2", "v1.33.0")] {
        let dir = tempfile::tempdir().expect("temp dir");
        let files = vec![
            (
                ".gitops-lint.yaml".to_string(),
                format!("argocdVersion: \"{argocd}\"\nhelmRenderer: native\n").into_bytes(),
            ),
            (
                "kv/Chart.yaml".to_string(),
                b"apiVersion: v2\nname: kv\nversion: 0.1.0\n".to_vec(),
            ),
            (
                "kv/templates/cm.yaml".to_string(),
                b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: kv}\ndata: {kube: \"{{ .Capabilities.KubeVersion }}\"}\n"
                    .to_vec(),
            ),
        ];
        write_commit(dir.path(), "main", None, &files, "chart").expect("commit");
        let out = render(dir.path(), &["kv", "--rev", "main"], true);
        assert_eq!(out.code, Some(0), "{argocd}: {:?}", out.stderr);
        let got = docs(&out.stdout);
        assert_eq!(got.len(), 1, "{argocd}: {}", out.stdout);
        assert_eq!(got[0]["data"]["kube"], kube, "{argocd}: {}", out.stdout);
    }
}
