//! Endless app-of-apps chains and overlay stacks are cut and reported;
//! repository text cannot inject runner commands; configuration and
//! acknowledgements are read only from where the base revision trusts them.

use super::*;

/// An app-of-apps that generates a new child at every level (here a chart
/// whose release `lN` renders the Application `lN+1`, by a helm binary)
/// never ends: after the
/// last round followed, the app still waiting is GL000, not silently absent,
/// and nothing is pruned.
#[test]
fn an_endless_app_of_apps_chain_is_cut_and_reported() {
    let tools = tempfile::tempdir().expect("temp dir");
    let helm = tools.path().join("helm");
    std::fs::write(
        &helm,
        r#"#!/bin/sh
for a in "$@"; do case "$a" in --name-template=*) n=${a#--name-template=l};; esac; done
next=l$((n + 1))
printf -- '---\n# Source: chain/templates/app.yaml\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: %s\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://github.com/acme/gitops.git\n    targetRevision: main\n    path: chart\n    helm:\n      releaseName: %s\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: %s\n' "$next" "$next" "$next"
"#,
    )
    .expect("write helm");
    make_executable(&helm);
    let files = vec![
        file(
            "argocd/l0.yaml",
            app_yaml("l0", "chart", "    helm:\n      releaseName: l0\n"),
        ),
        file("chart/Chart.yaml", CHART),
    ];
    let tmp = repo(&files, &files);
    let out = bin()
        .current_dir(tmp.path())
        .env("PATH", format!("{}:/usr/bin:/bin", tools.path().display()))
        .args([
            "check",
            "main",
            "--format",
            "json",
            "--helm-renderer",
            "binary",
        ])
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .expect("runs");
    let report = json(&out);
    assert_eq!(gl000_apps(&report), ["l16"], "{report:#}");
    let msg = report["findings"]
        .as_array()
        .and_then(|f| f.iter().find(|f| f["code"] == "GL000"))
        .and_then(|f| f["message"].as_str())
        .unwrap_or_default();
    assert!(msg.contains("did not settle after 16 rounds"), "{msg}");
    assert!(pruned_apps(&report).is_empty(), "{report:#}");
}

/// The same chain from a chart the native renderer renders: its template
/// names the Application `lN+1` from the release `lN`.
#[test]
fn an_endless_app_of_apps_chain_rendered_natively_is_cut_and_reported() {
    let template = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: l{{ add1 (trimPrefix \"l\" .Release.Name | atoi) }}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://github.com/acme/gitops.git\n    targetRevision: main\n    path: chart\n    helm:\n      releaseName: l{{ add1 (trimPrefix \"l\" .Release.Name | atoi) }}\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: chain\n";
    let files = vec![
        file(
            "argocd/l0.yaml",
            app_yaml("l0", "chart", "    helm:\n      releaseName: l0\n"),
        ),
        file("chart/Chart.yaml", CHART),
        file("chart/templates/app.yaml", template),
    ];
    let tmp = repo(&files, &files);
    let out = bin()
        .current_dir(tmp.path())
        .env("PATH", "/usr/bin:/bin")
        .args([
            "check",
            "main",
            "--format",
            "json",
            "--helm-renderer",
            "native",
        ])
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .expect("runs");
    let report = json(&out);
    assert_eq!(gl000_apps(&report), ["l16"], "{report:#}");
    assert!(pruned_apps(&report).is_empty(), "{report:#}");
}

/// Kustomize: an exec KRM function, a legacy exec plugin and `helmCharts`
/// without Argo CD's `--enable-helm` (of a chart from a Helm repository)
/// are reported, never run (not even with a `helm` on PATH); a remote base
/// is reported, not fetched; `a` including `b` including `a` is a cycle.
/// Each such app is GL000 with nothing pruned, though each drops a PVC.
#[test]
fn kustomize_never_runs_or_fetches_anything_and_reports_cycles() {
    let tools = tempfile::tempdir().expect("temp dir");
    let marker = tools.path().join("executed");
    let helm = tools.path().join("helm");
    std::fs::write(&helm, marker_script(&marker)).expect("write helm");
    make_executable(&helm);
    let apps = ["krm", "legacy", "charts", "remote", "cycle"];
    let mut base: Vec<(String, Vec<u8>)> = Vec::new();
    for a in apps {
        base.push(file(&format!("argocd/{a}.yaml"), app_yaml(a, a, "")));
        base.push(file(
            &format!("{a}/kustomization.yaml"),
            "resources:\n  - pvc.yaml\n",
        ));
        base.push(file(&format!("{a}/pvc.yaml"), pvc("data")));
    }
    let mut head: Vec<(String, Vec<u8>)> = base
        .iter()
        .filter(|(p, _)| !p.ends_with("kustomization.yaml"))
        .cloned()
        .collect();
    let script = marker_script(&marker);
    head.extend([
        file("krm/kustomization.yaml", "generators:\n  - gen.yaml\n"),
        file(
            "krm/gen.yaml",
            "apiVersion: example.com/v1\nkind: Gen\nmetadata:\n  name: g\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: ./gen.sh\n",
        ),
        file("krm/gen.sh", script.clone()),
        file("legacy/kustomization.yaml", "transformers:\n  - plugin.yaml\n"),
        file(
            "legacy/plugin.yaml",
            "apiVersion: someteam.example.com/v1\nkind: Evil\nmetadata:\n  name: e\n",
        ),
        file("legacy/Evil", script),
        file(
            "charts/kustomization.yaml",
            "helmCharts:\n  - name: web\n    repo: https://charts.example.com\n    version: 1.0.0\n",
        ),
        file(
            "remote/kustomization.yaml",
            "resources:\n  - https://github.com/acme/bases//pvc?ref=v1\n",
        ),
        file("cycle/kustomization.yaml", "resources:\n  - ../cycle-b\n"),
        file("cycle-b/kustomization.yaml", "resources:\n  - ../cycle\n"),
    ]);
    let tmp = repo(&base, &head);
    for f in ["krm/gen.sh", "legacy/Evil"] {
        make_executable(&tmp.path().join(f));
    }
    let out = bin()
        .current_dir(tmp.path())
        .env("PATH", format!("{}:/usr/bin:/bin", tools.path().display()))
        .args(["diff", "main..change", "--format", "json"])
        .timeout(std::time::Duration::from_secs(300))
        .output()
        .expect("runs");
    let report = json(&out);
    assert!(!marker.exists(), "something from the repository was run");
    let mut failed = gl000_apps(&report);
    failed.sort();
    assert_eq!(
        failed,
        ["charts", "cycle", "krm", "legacy", "remote"],
        "{report:#}"
    );
    assert!(pruned_apps(&report).is_empty(), "{report:#}");
    let messages: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["message"].as_str())
        .collect();
    assert!(
        messages.iter().any(|m| m.contains("cycle")),
        "{messages:#?}"
    );
    assert!(
        messages.iter().any(|m| m.contains("cannot be fetched")),
        "{messages:#?}"
    );
}

/// Overlays that include their base twice at every level double the work at
/// each level (16 levels: 65,536 copies of one ConfigMap). The build must
/// stop with a render failure in bounded time, not hang.
#[test]
fn stacked_overlays_doubling_at_every_level_stop_with_a_render_failure() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let mut files: Vec<(String, Vec<u8>)> = vec![
        (
            "l0/cm.yaml".into(),
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n".to_vec(),
        ),
        (
            "l0/kustomization.yaml".into(),
            b"resources:\n- cm.yaml\n".to_vec(),
        ),
    ];
    for k in 1..=16 {
        let p = k - 1;
        files.push((
            format!("l{k}/left/kustomization.yaml"),
            format!("namePrefix: l-\nresources:\n- ../../l{p}\n").into_bytes(),
        ));
        files.push((
            format!("l{k}/right/kustomization.yaml"),
            format!("namePrefix: r-\nresources:\n- ../../l{p}\n").into_bytes(),
        ));
        files.push((
            format!("l{k}/kustomization.yaml"),
            b"resources:\n- left\n- right\n".to_vec(),
        ));
    }
    gitops_lint::source::write_commit(tmp.path(), "main", None, &files, "stacked").expect("commit");
    let out = assert_cmd::Command::cargo_bin("gitops-lint")
        .expect("binary")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .args(["render", "--rev", "main", "l16", "--repo"])
        .arg(tmp.path())
        .timeout(std::time::Duration::from_secs(600))
        .output()
        .expect("runs");
    assert_eq!(
        out.status.code(),
        Some(4),
        "a render failure of `render` exits 4"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("resource steps"),
        "stderr names the bound: {err}"
    );
}

/// A name from the repository with a line break and an escape sequence must
/// not start a line a CI runner reads as a workflow command, nor reach the
/// terminal as an escape sequence, in any text format.
#[test]
fn repository_text_cannot_inject_workflow_commands_or_escapes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let pvc = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: \"data\\n::error file=README.md,line=1::spoofed\\u001b[31m\"\nspec:\n  accessModes: [ReadWriteOnce]\n";
    let base = vec![("pvc.yaml".to_string(), pvc.as_bytes().to_vec())];
    gitops_lint::source::write_commit(tmp.path(), "main", None, &base, "base").expect("commit");
    gitops_lint::source::write_commit(tmp.path(), "change", Some("main"), &[], "head")
        .expect("commit");
    for format in ["human", "markdown", "github"] {
        let out = assert_cmd::Command::cargo_bin("gitops-lint")
            .expect("binary")
            .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
            .args(["diff", "main..change", "--format", format, "--repo"])
            .arg(tmp.path())
            .output()
            .expect("runs");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("PersistentVolumeClaim"),
            "{format}: the prune is reported:\n{text}"
        );
        assert!(
            !text.contains('\u{1b}'),
            "{format}: an escape sequence reached the output"
        );
        let spoofed = text
            .lines()
            .filter(|l| l.trim_start().starts_with("::error file=README.md"))
            .count();
        assert_eq!(
            spoofed, 0,
            "{format}: a line from the repository reads as a workflow command:\n{text}"
        );
    }
}

/// The `helm` of PATH, or `None` after saying once, visibly, that the test
/// did not run (where the oracles are required, `GITOPS_LINT_REQUIRE_ORACLES`
/// as `.ci/run` sets it, that is a failure).
fn real_helm(test: &str) -> Option<PathBuf> {
    use std::io::Write;
    let found = gitops_lint::cli::find_on_path("helm");
    if found.is_none() {
        let line =
            format!("NOT RUN: {test}: no `helm` on PATH (install helm v3.17.1, see .ci/run)");
        let _ = writeln!(std::io::stderr(), "{line}");
        assert!(
            std::env::var_os("GITOPS_LINT_REQUIRE_ORACLES").is_none(),
            "{line}"
        );
    }
    found
}

/// A chart that builds a string without end (doubling with `printf`, or one
/// `repeat` of two billion) makes the real helm fail at its address-space
/// limit: the app is GL000, nothing is pruned, and the run ends normally.
#[test]
fn a_chart_exhausting_memory_is_stopped_by_the_address_space_limit() {
    let Some(helm) = real_helm("a_chart_exhausting_memory_is_stopped_by_the_address_space_limit")
    else {
        return;
    };
    let doubling = "{{- $s := \"xxxxxxxxxxxxxxxx\" }}{{- range until 40 }}{{- $s = printf \"%s%s\" $s $s }}{{- end }}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  n: {{ len $s | quote }}\n";
    let repeat = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  n: {{ repeat 2000000000 \"x\" | len | quote }}\n";
    let mut base = vec![];
    let mut head = vec![];
    for (name, template) in [("doubling", doubling), ("repeat", repeat)] {
        let app = file(&format!("argocd/{name}.yaml"), app_yaml(name, name, ""));
        let chart = file(&format!("{name}/Chart.yaml"), CHART);
        base.extend([
            app.clone(),
            chart.clone(),
            file(&format!("{name}/templates/pvc.yaml"), pvc("data")),
        ]);
        head.extend([
            app,
            chart,
            file(&format!("{name}/templates/big.yaml"), template),
        ]);
    }
    let tmp = repo(&base, &head);
    let dir = helm.parent().map(Path::to_path_buf).unwrap_or_default();
    let out = bin()
        .current_dir(tmp.path())
        .env("PATH", format!("{}:/usr/bin:/bin", dir.display()))
        .args(["diff", "main..change", "--format", "json"])
        .timeout(std::time::Duration::from_secs(240))
        .output()
        .expect("runs");
    assert!(
        matches!(out.status.code(), Some(0..=2)),
        "{:?} {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    let mut failed = gl000_apps(&report);
    failed.sort();
    assert_eq!(failed, ["doubling", "repeat"], "{report:#}");
    assert!(pruned_apps(&report).is_empty(), "{report:#}");
}

/// A secret the attacker wants printed: a YAML error or an unknown-key
/// message would quote it.
const SECRET: &str = "sekrit-token-0123456789: leak\n";

/// `--config` in `diff` (the Action's `config:` input) names a file of the
/// base revision's tree. The attacked shape: the pull request makes the
/// configured path a symlink to a file outside the repository, hoping the
/// run reads it (and quotes it in an error) or is judged by it. Variants: an
/// absolute path outside the repository, a `..` path leaving it, a symlinked
/// directory on the way, and a file the change adds only at head.
#[test]
fn config_flag_reads_the_base_tree_never_through_a_symlink_nor_outside() {
    let outside = tempfile::tempdir().expect("temp dir");
    let secret = outside.path().join("secret.yaml");
    std::fs::write(&secret, SECRET).expect("write");
    let app = vec![
        file("argocd/a.yaml", app_yaml("a", "a", "")),
        file("a/data-pvc.yaml", pvc("data")),
    ];
    let with = |extra: Vec<(String, Vec<u8>)>| {
        let mut f = app.clone();
        f.extend(extra);
        f
    };
    let secret_s = secret.to_string_lossy().into_owned();
    // Committed at both revisions: the path is a symlink in the base tree.
    let linked = with(vec![file("ci/gitops-lint.yaml.symlink", secret_s.clone())]);
    let tmp = repo(&linked, &linked);
    // A directory symlink on the way, inside the repository.
    let via_dir = with(vec![
        file("ci/real/cfg.yaml", "rules: {ignore: [GL001]}\n"),
        file("ci/alias.symlink", "real"),
    ]);
    let tmp_dir = repo(&via_dir, &via_dir);
    // Only the pull request adds it.
    let added = repo(
        &app,
        &with(vec![file("ci/cfg.yaml", "rules: {ignore: [all]}\n")]),
    );
    let rel_out = format!("../{}", "x".repeat(3));
    let cases: Vec<(&Path, Vec<&str>, &str)> = vec![
        (
            tmp.path(),
            vec!["--config", "ci/gitops-lint.yaml"],
            "is a symlink",
        ),
        (
            tmp.path(),
            vec!["--config", &secret_s],
            "not a file of this repository",
        ),
        (
            tmp.path(),
            vec!["--config", &rel_out],
            "not a file of this repository",
        ),
        (
            tmp_dir.path(),
            vec!["--config", "ci/alias/cfg.yaml"],
            "`ci/alias` is a symlink",
        ),
        (
            added.path(),
            vec!["--config", "ci/cfg.yaml"],
            "no such file in the base revision",
        ),
    ];
    for (dir, extra, expect) in cases {
        let mut args = vec!["diff", "main..change"];
        args.extend(extra);
        let out = run(dir, &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{args:?}: {lines:?}");
        assert!(lines[0].contains(expect), "{args:?}: {lines:?}");
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!all.contains("sekrit"), "{args:?}: {all}");
    }
}

/// The file `--config` names is read from the base revision: a change that
/// edits it to switch off the rule that judges it is judged by the base
/// version, and every report says the file differs at head.
#[test]
fn config_flag_file_edited_by_the_change_does_not_judge_it() {
    let cfg = "repoUrls: [https://github.com/acme/gitops.git]\n";
    let base = vec![
        file("argocd/a.yaml", app_yaml("a", "a", "")),
        file("a/data-pvc.yaml", pvc("data")),
        file("a/cm.yaml", CM),
        file("ci/gitops-lint.yaml", cfg),
    ];
    let head = vec![
        file("argocd/a.yaml", app_yaml("a", "a", "")),
        file("a/cm.yaml", CM),
        file(
            "ci/gitops-lint.yaml",
            format!("{cfg}rules: {{ignore: [all]}}\n"),
        ),
    ];
    let tmp = repo(&base, &head);
    // From a subdirectory, as the Action's `working-directory` may be.
    let sub = tmp.path().join("ci");
    let out = run(
        &sub,
        &[
            "diff",
            "main..change",
            "--config",
            "gitops-lint.yaml",
            "--format",
            "json",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    let codes: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["code"].as_str())
        .collect();
    assert!(codes.contains(&"GL001"), "{report:#}");
    let notes = report["notes"].as_array().expect("notes array");
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .is_some_and(|n| n.starts_with("ci/gitops-lint.yaml differs at head"))),
        "{notes:?}"
    );
}

fn trailer_repo(base_config: &str, head_config: &str) -> tempfile::TempDir {
    let app = |cfg: &str| {
        vec![
            file("argocd/a.yaml", app_yaml("a", "a", "")),
            file(".gitops-lint.yaml", cfg.to_string()),
            file("a/cm.yaml", CM),
        ]
    };
    let mut base = app(base_config);
    base.push(file("a/data-pvc.yaml", pvc("data")));
    repo_with_message(
        &base,
        &app(head_config),
        "Drop the volume\n\nGitops-Lint-Allow: PersistentVolumeClaim/a/data not needed\n",
    )
}

/// Commit trailers are written by the change's author. The attacked shape:
/// a trailer acknowledging the change's own PVC deletion, with the base
/// configuration switching trailers off; the variant: the change also
/// switches them back on at head. Either way the deletion fails the run,
/// and the ignored trailer is said, not reported as unused (GL014).
#[test]
fn trailers_switched_off_by_the_base_configuration_acknowledge_nothing() {
    let off = "acknowledge: {trailers: false}\n";
    for head in [off, "acknowledge: {trailers: true}\n"] {
        let tmp = trailer_repo(off, head);
        let out = run(tmp.path(), &["diff", "main..change", "--format", "json"]);
        assert_eq!(out.status.code(), Some(1), "{head}");
        let report = json(&out);
        let findings = report["findings"].as_array().expect("findings");
        let gl001: Vec<&Value> = findings.iter().filter(|f| f["code"] == "GL001").collect();
        assert_eq!(gl001.len(), 1, "{report:#}");
        assert_eq!(gl001[0]["acknowledged"], false, "{report:#}");
        assert!(!findings.iter().any(|f| f["code"] == "GL014"), "{report:#}");
        assert_eq!(report["summary"]["error"], 1);
        let notes = report["notes"].to_string();
        assert!(
            notes.contains("1 `Gitops-Lint-Allow` commit trailer(s) ignored"),
            "{notes}"
        );
    }
}

/// When trailers are on (the default), a trailer-acknowledged deletion does
/// not fail the run, but no format lets it pass unseen: JSON marks it with
/// its source, a note lists it, GitHub shows a warning annotation, SARIF
/// keeps the result unsuppressed at warning level, Markdown and the human
/// report label it as acknowledged by commit trailer.
#[test]
fn trailer_acknowledged_deletions_are_prominent_in_every_format() {
    let tmp = trailer_repo("{}\n", "{}\n");
    let out_dir = tempfile::tempdir().expect("temp dir");
    let o = |f: &str| out_dir.path().join(f).to_string_lossy().into_owned();
    let (j, s, m, h) = (o("r.json"), o("r.sarif"), o("r.md"), o("r.txt"));
    let out = run(
        tmp.path(),
        &[
            "diff",
            "main..change",
            "--format",
            &format!("json={j}"),
            "--format",
            &format!("sarif={s}"),
            "--format",
            &format!("markdown={m}"),
            "--format",
            &format!("human={h}"),
            "--format",
            "github",
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |p: &str| std::fs::read_to_string(p).expect("written");
    let report: Value = serde_json::from_str(&read(&j)).expect("json");
    let f = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .find(|f| f["code"] == "GL001")
        .expect("GL001 reported")
        .clone();
    assert_eq!(f["acknowledged"], true, "{f:#}");
    assert_eq!(f["acknowledgement"]["source"], "trailer", "{f:#}");
    assert_eq!(report["summary"]["error"], 0);
    let note =
        "1 deletion(s) acknowledged only by `Gitops-Lint-Allow` commit trailers of this change";
    assert!(report["notes"].to_string().contains(note), "{report:#}");
    let github = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        github.contains("::warning file=a/data-pvc.yaml")
            || github
                .contains("::warning title=GL001 stateful-prune (acknowledged by commit trailer)")
            || github.lines().any(|l| l.starts_with("::warning")
                && l.contains("GL001 stateful-prune (acknowledged by commit trailer)")),
        "{github}"
    );
    assert!(github.contains(note), "{github}");
    let sarif: Value = serde_json::from_str(&read(&s)).expect("sarif");
    let r = &sarif["runs"][0]["results"][0];
    assert_eq!(r["ruleId"], "GL001", "{sarif:#}");
    assert_eq!(r["level"], "warning", "{r:#}");
    assert!(r.get("suppressions").is_none(), "{r:#}");
    assert_eq!(r["properties"]["acknowledgement"]["source"], "trailer");
    assert!(read(&m).contains("(acknowledged by commit trailer)"));
    // Markdown escapes the backticks of message text (it may carry repository text).
    assert!(read(&m).contains(&note.replace('`', "\\`")), "{}", read(&m));
    let human = read(&h);
    assert!(
        human.contains("GL001 stateful-prune (acknowledged by commit trailer)"),
        "{human}"
    );
    assert!(human.contains(note), "{human}");
}
