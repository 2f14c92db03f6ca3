//! Which renderer renders a chart, on real git repositories and the pinned
//! helm: natively by default; with no renderer chosen, the helm on PATH
//! renders the charts the native renderer does not implement, so they are
//! judged rather than left unknown; a chosen `native` never starts helm.
//! Helm sources and Kustomize `helmCharts` alike.
//! Counted with `RunStats::helm_runs`, not timed.
//!
//! Needs the pinned helm on PATH; without it the test says NOT RUN, and
//! fails where `GITOPS_LINT_REQUIRE_ORACLES` is set.

use crate::kustomize_common;

use std::sync::{Arc, Mutex};

use gitops_lint::lint::{self, Options, RunStats};
use gitops_lint::render::{HelmRenderer, RenderOptions};
use gitops_lint::source::{add_remote, write_commit};

const URL: &str = "https://git.example.com/platform/fleet.git";

/// A commit's files: path and content.
type Files = Vec<(String, Vec<u8>)>;

/// An automated, pruning Application of the chart in `path`.
fn application(name: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: {name}, namespace: argocd}}
spec:
  project: default
  source: {{repoURL: {URL}, targetRevision: main, path: charts/{name}}}
  destination: {{server: https://kubernetes.default.svc, namespace: {name}}}
  syncPolicy: {{automated: {{prune: true}}}}
"
    )
}

/// A chart with a Deployment's ConfigMap and, when `with_pvc`, a
/// PersistentVolumeClaim. `toml` makes the ConfigMap hold `toToml` of an
/// array of tables, which the native renderer does not implement.
fn chart(name: &str, toml: bool, with_pvc: bool) -> Files {
    let data = if toml {
        "  app.toml: |\n{{ dict \"servers\" (list (dict \"host\" \"a\") (dict \"host\" \"b\")) | toToml | indent 4 }}\n"
    } else {
        "  app.conf: |\n    listen {{ .Values.port }}\n"
    };
    let mut files = vec![
        (
            format!("charts/{name}/Chart.yaml"),
            format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\n").into_bytes(),
        ),
        (
            format!("charts/{name}/values.yaml"),
            b"port: 8080\n".to_vec(),
        ),
        (
            format!("charts/{name}/templates/config.yaml"),
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{{{ .Release.Name }}}}-config\ndata:\n{data}")
                .into_bytes(),
        ),
    ];
    if with_pvc {
        files.push((
            format!("charts/{name}/templates/pvc.yaml"),
            b"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {{ .Release.Name }}-data\nspec:\n  accessModes: [ReadWriteOnce]\n  resources: {requests: {storage: 1Gi}}\n".to_vec(),
        ));
    }
    files
}

/// A repository of one app over `chart(name, toml, …)`, whose pull
/// request removes the PVC.
fn pvc_removal(name: &str, toml: bool) -> (Files, Files) {
    let app = (format!("apps/{name}.yaml"), application(name).into_bytes());
    let mut base = chart(name, toml, true);
    base.push(app.clone());
    let mut head = chart(name, toml, false);
    head.push(app);
    (base, head)
}

/// [`pvc_removal`] with the chart inflated by a kustomization's
/// `helmCharts` (`kustomize.buildOptions: --enable-helm` in argocd-cm).
fn kustomize_pvc_removal(name: &str, toml: bool) -> (Files, Files) {
    let under_kustomization = |files: Files| -> Files {
        let mut out: Files = files
            .into_iter()
            .map(|(path, bytes)| match path.strip_prefix("charts/") {
                Some(rest) => (format!("charts/{name}/charts/{rest}"), bytes),
                None => (path, bytes),
            })
            .collect();
        out.push((
            format!("charts/{name}/kustomization.yaml"),
            format!("helmCharts:\n  - name: {name}\n    releaseName: {name}\n").into_bytes(),
        ));
        out.push((
            "argocd/argocd-cm.yaml".into(),
            b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: argocd-cm, namespace: argocd}\ndata:\n  kustomize.buildOptions: --enable-helm\n".to_vec(),
        ));
        out
    };
    let (base, head) = pvc_removal(name, toml);
    (under_kustomization(base), under_kustomization(head))
}

/// The codes and messages of `diff main..change`, and the run's counts.
fn diff(base: &Files, head: &Files, render: RenderOptions) -> (Vec<(String, String)>, RunStats) {
    let tmp = tempfile::tempdir().expect("temp dir");
    write_commit(tmp.path(), "main", None, base, "base").expect("base commit");
    write_commit(tmp.path(), "change", Some("main"), head, "head").expect("head commit");
    add_remote(tmp.path(), "origin", URL).expect("remote");
    let stats = Arc::new(Mutex::new(RunStats::default()));
    let opts = Options {
        repo: Some(tmp.path().to_path_buf()),
        stats: Some(Arc::clone(&stats)),
        cache_dir: None,
        render,
        ..Options::default()
    };
    let report = lint::diff(Some("main..change"), &opts).expect("diff runs");
    let findings = report
        .findings
        .iter()
        .map(|f| (f.rule.code.to_string(), f.message.clone()))
        .collect();
    let s = stats.lock().expect("stats").clone();
    (findings, s)
}

fn codes(findings: &[(String, String)]) -> Vec<&str> {
    findings.iter().map(|(c, _)| c.as_str()).collect()
}

#[test]
fn native_by_default_and_helm_for_what_it_does_not_implement() {
    let Some(helm) = kustomize_common::pinned_helm() else {
        let line = "NOT RUN: tests/it/helm_renderer.rs needs the pinned helm on PATH (install it with scripts/install-oracles.sh)";
        eprintln!("{line}");
        assert!(
            std::env::var_os("GITOPS_LINT_REQUIRE_ORACLES").is_none(),
            "{line}"
        );
        return;
    };
    let with_helm = || RenderOptions {
        helm: Some(helm.clone()),
        ..RenderOptions::default()
    };

    // A chart the native renderer implements: helm is never started, and
    // the removed PVC is found.
    let (base, head) = pvc_removal("plain", false);
    let (findings, stats) = diff(&base, &head, with_helm());
    assert_eq!(codes(&findings), ["GL001"], "{findings:?}");
    assert_eq!(stats.helm_runs, 0, "{stats}");

    // A chart it does not implement: the helm on PATH renders it at both
    // revisions, so the removal is judged, not a GL000.
    let (base, head) = pvc_removal("tomlconf", true);
    let (findings, stats) = diff(&base, &head, with_helm());
    assert_eq!(codes(&findings), ["GL001"], "{findings:?}");
    assert_eq!(stats.helm_runs, 2, "{stats}");

    // `native` chosen: helm is never started, and the chart is not judged.
    let (findings, stats) = diff(
        &base,
        &head,
        RenderOptions {
            helm_renderer: Some(HelmRenderer::Native),
            ..with_helm()
        },
    );
    assert_eq!(stats.helm_runs, 0, "{stats}");
    assert!(
        findings
            .iter()
            .any(|(c, m)| c == "GL000" && m.contains("not supported natively")),
        "{findings:?}"
    );
    assert!(!codes(&findings).contains(&"GL001"), "{findings:?}");

    // The same for a kustomization's `helmCharts`.
    let (base, head) = kustomize_pvc_removal("kplain", false);
    let (findings, stats) = diff(&base, &head, with_helm());
    assert_eq!(codes(&findings), ["GL001"], "{findings:?}");
    assert_eq!(stats.helm_runs, 0, "{stats}");
    let (base, head) = kustomize_pvc_removal("ktoml", true);
    let (findings, stats) = diff(&base, &head, with_helm());
    assert_eq!(codes(&findings), ["GL001"], "{findings:?}");
    assert_eq!(stats.helm_runs, 2, "{stats}");

    // `binary` chosen: helm renders even what the native renderer does.
    let (base, head) = pvc_removal("plain", false);
    let (findings, stats) = diff(
        &base,
        &head,
        RenderOptions {
            helm_renderer: Some(HelmRenderer::Binary),
            ..with_helm()
        },
    );
    assert_eq!(codes(&findings), ["GL001"], "{findings:?}");
    assert_eq!(stats.helm_runs, 2, "{stats}");

    // `--helm-binary BIN` on the command line: that helm, with no helm on
    // PATH.
    let tmp = tempfile::tempdir().expect("temp dir");
    write_commit(tmp.path(), "main", None, &base, "base").expect("base commit");
    write_commit(tmp.path(), "change", Some("main"), &head, "head").expect("head commit");
    add_remote(tmp.path(), "origin", URL).expect("remote");
    let out = assert_cmd::Command::cargo_bin("gitops-lint")
        .expect("the gitops-lint binary is built")
        .env("PATH", "/usr/bin:/bin")
        .env("GITOPS_LINT_STATS", "1")
        .args([
            "diff",
            "main..change",
            "--format",
            "json",
            "--no-cache",
            "--repo",
        ])
        .arg(tmp.path())
        .arg("--helm-binary")
        .arg(&helm)
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(", 2 helm runs"), "{stderr}");
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(report["findings"][0]["code"], "GL001", "{report:#}");
}

/// `chart(name, false, with_pvc)` with a `values.schema.json` (draft-07, a
/// `$ref` to a definition) and `port` set to `port`, in a repository whose
/// target Argo CD is 3.5 (helm v4.2.1, which validates with
/// santhosh-tekuri/jsonschema/v6).
fn schema_chart(name: &str, port: &str, with_pvc: bool) -> Files {
    let mut files: Files = chart(name, false, with_pvc)
        .into_iter()
        .filter(|(p, _)| !p.ends_with("/values.yaml"))
        .collect();
    files.push((
        format!("charts/{name}/values.yaml"),
        format!("port: {port}\n").into_bytes(),
    ));
    files.push((
        format!("charts/{name}/values.schema.json"),
        br##"{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "type": "object",
  "required": ["port"],
  "properties": {"port": {"$ref": "#/definitions/port", "description": "listen port"}},
  "definitions": {"port": {"type": "integer", "minimum": 1, "maximum": 65535}}
}"##
        .to_vec(),
    ));
    files.push((
        ".gitops-lint.yaml".into(),
        b"argocdVersion: \"3.5\"\n".to_vec(),
    ));
    files.push((format!("apps/{name}.yaml"), application(name).into_bytes()));
    files
}

#[test]
fn a_values_schema_is_validated_natively_as_helm_4_validates_it() {
    let native = || RenderOptions {
        helm_renderer: Some(HelmRenderer::Native),
        ..RenderOptions::default()
    };
    // Values the schema accepts: the chart renders (no helm), and the
    // removed PVC is found.
    let (findings, stats) = diff(
        &schema_chart("schemed", "8080", true),
        &schema_chart("schemed", "8080", false),
        native(),
    );
    assert_eq!(codes(&findings), ["GL001"], "{findings:?}");
    assert_eq!(stats.helm_runs, 0, "{stats}");

    // Values it refuses: helm v4's error, as helm v4.1.4 prints it for
    // this chart (jsonschema/v6 v6.0.2's wording).
    let (findings, _) = diff(
        &schema_chart("schemed", "8080", true),
        &schema_chart("schemed", "\"http\"", false),
        native(),
    );
    let message = findings
        .iter()
        .find(|(c, _)| c == "GL000")
        .map_or_else(|| panic!("{findings:?}"), |(_, m)| m.as_str());
    assert!(
        message.contains(
            "Error: values don't meet the specifications of the schema(s) in the following chart(s):\nschemed:\n- at '/port': got string, want integer"
        ),
        "{message}"
    );
    let (findings, _) = diff(
        &schema_chart("schemed", "8080", true),
        &schema_chart("schemed", "70000", false),
        native(),
    );
    assert!(
        findings
            .iter()
            .any(|(c, m)| c == "GL000"
                && m.contains("- at '/port': maximum: got 70,000, want 65,535")),
        "{findings:?}"
    );
}

/// From helm v3.18 `LoadDir` refuses a chart file over 5 MiB
/// (`MaxDecompressedFileSize`), where v3.17.1 loads it: a pull request
/// adding one is a render failure under the Argo CD that ships such a
/// helm, and a change like any other under Argo CD 3.0. Native renders
/// only, so no helm is needed.
#[test]
fn a_chart_file_over_5_mib_fails_from_helm_3_18() {
    let native = || RenderOptions {
        helm_renderer: Some(HelmRenderer::Native),
        ..RenderOptions::default()
    };
    let repo = |argocd: &str, file_bytes: usize| -> (Files, Files) {
        let config = (
            ".gitops-lint.yaml".to_string(),
            format!("argocdVersion: \"{argocd}\"\n").into_bytes(),
        );
        let app = ("apps/big.yaml".to_string(), application("big").into_bytes());
        let mut base = chart("big", false, false);
        base.extend([config, app]);
        let mut head = base.clone();
        head.push((
            "charts/big/files/dashboard.json".into(),
            vec![b'a'; file_bytes],
        ));
        (base, head)
    };
    let limit = 5 * 1024 * 1024;

    let (base, head) = repo("3.2", limit + 1);
    let (findings, _) = diff(&base, &head, native());
    assert!(
        findings.iter().any(|(c, m)| c == "GL000"
            && m.contains(
                "chart file \"dashboard.json\" is larger than the maximum file size 5242880"
            )),
        "{findings:?}"
    );

    // Exactly 5 MiB loads, and Argo CD 3.0's helm has no bound.
    for (argocd, bytes) in [("3.2", limit), ("3.0", limit + 1)] {
        let (base, head) = repo(argocd, bytes);
        let (findings, _) = diff(&base, &head, native());
        assert_eq!(
            codes(&findings),
            Vec::<&str>::new(),
            "{argocd}: {findings:?}"
        );
    }
}
