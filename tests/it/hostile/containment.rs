//! What a pull request contains is never executed, never read outside the
//! repository, never written to it, and the answer is the same on every run.

use super::*;

/// Every command, in every format, leaves the working tree, the index,
/// HEAD, the refs and the object store exactly as they were.
#[test]
fn no_command_writes_to_the_repository() {
    let tmp = fixture_repo("hostile/everything-at-once");
    let dir = tmp.path();
    // Something staged and something unstaged, so `pre-commit` and
    // `check` (working tree) have a change to read.
    std::fs::write(dir.join("reports/warehouse-pvc.yaml"), b"# staged\n").expect("write");
    git(dir, &["add", "reports/warehouse-pvc.yaml"]);
    std::fs::write(dir.join("payments/deployment.yaml"), b"# unstaged\n").expect("write");
    let before = snapshot(dir);
    assert!(before.contains_key(".git/index") && before.contains_key(".git/HEAD"));
    let commands: &[&[&str]] = &[
        &["diff", "main..change"],
        &["diff", "main...change", "--all"],
        &["diff"],
        &["check"],
        &["check", "INDEX"],
        &["check", "main"],
        &["pre-commit"],
        &["render", "payments"],
        &["render", "alias-bomb", "--rev", "change"],
        &["render", "reports", "--rev", "main"],
    ];
    for args in commands {
        for format in ["json", "human"] {
            let mut full: Vec<&str> = args.to_vec();
            full.extend(["--format", format]);
            let out = run(dir, &full);
            assert!(
                out.status.code().is_some_and(|c| c <= 2),
                "{full:?} ended by a signal or with {:?}",
                out.status
            );
        }
    }
    let after = snapshot(dir);
    let changed: Vec<_> = before
        .iter()
        .filter(|(k, v)| after.get(*k) != Some(v))
        .map(|(k, _)| k.clone())
        .chain(after.keys().filter(|k| !before.contains_key(*k)).cloned())
        .collect();
    assert!(
        changed.is_empty(),
        "the run changed the repository: {changed:?}"
    );
}

/// The whole report in every format is byte-identical from one run to
/// the next, and with one thread or many.
#[test]
fn output_is_deterministic_across_runs_and_thread_counts() {
    let tmp = fixture_repo("hostile/everything-at-once");
    let formats: Vec<String> = <gitops_lint::report::Format as clap::ValueEnum>::value_variants()
        .iter()
        .filter_map(|f| clap::ValueEnum::to_possible_value(f).map(|p| p.get_name().to_string()))
        .collect();
    assert!(formats.len() >= 2, "{formats:?}");
    for format in &formats {
        let args = [
            "diff",
            "main..change",
            "--format",
            format,
            "--color",
            "never",
        ];
        let first = run(tmp.path(), &args);
        let second = run(tmp.path(), &args);
        let single = bin()
            .current_dir(tmp.path())
            .env("RAYON_NUM_THREADS", "1")
            .args(args)
            .output()
            .expect("runs");
        assert_eq!(
            first.status.code(),
            Some(1),
            "{format}: GL001 and GL000 fire"
        );
        assert!(!first.stdout.is_empty());
        assert!(first.stdout == second.stdout, "{format}: two runs differ");
        assert!(
            first.stdout == single.stdout,
            "{format}: one thread differs from many"
        );
    }
}

/// A fake `helm` in `dir` that logs its working directory and each argument
/// (a run ends with `--END--`) and prints one ConfigMap; with the log's
/// path, and the path a post-renderer would create if it ever ran.
fn argv_logging_helm(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let log = dir.join("argv.log");
    let helm = dir.join("helm");
    std::fs::write(
        &helm,
        format!(
            "#!/bin/sh\npwd >> '{}'\nfor a in \"$@\"; do printf '%s\\n' \"$a\" >> '{}'; done\necho '--END--' >> '{}'\nprintf -- '---\\n# Source: web/templates/cm.yaml\\napiVersion: v1\\nkind: ConfigMap\\nmetadata:\\n  name: from-helm\\n'\n",
            log.display(),
            log.display(),
            log.display()
        ),
    )
    .expect("write helm");
    make_executable(&helm);
    (helm, log, dir.join("executed"))
}

/// `helm` (with `--helm-renderer binary`) only ever runs `template`, with every flag before
/// `--`, on a copy of a chart from the repository in a temporary
/// directory; a release name that tries to be a flag never reaches it.
#[test]
fn helm_runs_only_template_on_a_copy_outside_the_repository() {
    let tools = tempfile::tempdir().expect("temp dir");
    let (_, log, marker) = argv_logging_helm(tools.path());
    let injected = "    helm:\n      releaseName: --post-renderer=./post-render.sh\n";
    let params = "    helm:\n      parameters:\n        - name: --post-renderer\n          value: ./post-render.sh\n";
    let mut files = vec![
        file("argocd/web.yaml", app_yaml("web", "web", params)),
        file("argocd/evil.yaml", app_yaml("evil", "evil", injected)),
        file("web/Chart.yaml", CHART),
        file(
            "web/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
        ),
        file("evil/Chart.yaml", CHART),
        file("evil/data-pvc.yaml", pvc("data")),
        file("post-render.sh", marker_script(&marker)),
    ];
    let base = files.clone();
    files.retain(|(p, _)| p != "evil/data-pvc.yaml");
    // `web` changes too, so it is rendered at both revisions.
    files.push(file(
        "web/templates/cm2.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: y\n",
    ));
    let tmp = repo(&base, &files);
    make_executable(&tmp.path().join("post-render.sh"));
    let out = bin()
        .current_dir(tmp.path())
        .env("PATH", format!("{}:/usr/bin:/bin", tools.path().display()))
        .args([
            "diff",
            "main..change",
            "--format",
            "json",
            "--helm-renderer",
            "binary",
        ])
        .output()
        .expect("runs");
    let report = json(&out);
    assert!(!marker.exists(), "a script from the repository was run");
    assert!(
        gl000_apps(&report).contains(&"evil".to_string()),
        "{report:#}"
    );
    assert!(!pruned_apps(&report).contains(&"evil".to_string()));
    let log = std::fs::read_to_string(&log).expect("helm was run for `web`");
    let calls: Vec<Vec<&str>> = log
        .split("--END--\n")
        .filter(|c| !c.is_empty())
        .map(|c| c.lines().collect())
        .collect();
    // For `web` only, at each revision.
    assert_eq!(calls.len(), 2, "{calls:?}");
    let repo_dir = tmp.path().canonicalize().expect("canonical");
    for call in &calls {
        // The working directory, then the arguments: `template .` in the
        // copied chart, as Argo CD runs it (AC `util/helm/cmd.go`).
        let (cwd, argv) = call.split_first().expect("pwd logged");
        assert_eq!(argv.get(..2), Some(&["template", "."][..]), "{argv:?}");
        for flag in &argv[2..] {
            assert!(
                [
                    "--include-crds",
                    "--name-template=",
                    "--namespace=",
                    "--values=",
                    "--set=",
                    "--set-string="
                ]
                .iter()
                .any(|ok| flag.starts_with(ok)),
                "unexpected helm argument {flag:?} in {argv:?}"
            );
        }
        assert!(argv.contains(&"--name-template=web"), "{argv:?}");
        let chart = PathBuf::from(cwd);
        assert!(
            !chart.starts_with(&repo_dir) && !chart.starts_with(tmp.path()),
            "helm read the chart in the repository itself: {cwd} {argv:?}"
        );
    }
}

/// Kustomize `helmCharts` run helm only as `helm template <release> <copy
/// of the chart>` with Kustomize's flags, each value in its flag's own
/// argument, on a copy outside the repository; a release name that tries to
/// be a flag, or a chart schema naming a file of the machine, stops the
/// app before helm runs.
#[test]
fn helm_charts_run_only_template_on_a_copy_outside_the_repository() {
    let tools = tempfile::tempdir().expect("temp dir");
    let (_, log, marker) = argv_logging_helm(tools.path());
    let chart = |dir: &str| {
        vec![
            file(&format!("{dir}/charts/web/Chart.yaml"), CHART),
            file(&format!("{dir}/charts/web/values.yaml"), "a: 1\n"),
            file(
                &format!("{dir}/charts/web/templates/cm.yaml"),
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
            ),
        ]
    };
    let kust = |release: &str| {
        format!(
            "namespace: web\nhelmCharts:\n  - name: web\n    releaseName: {release}\n    namespace: --post-renderer=./post-render.sh\n    kubeVersion: --post-renderer=./post-render.sh\n    includeCRDs: true\n    skipTests: true\n    skipHooks: true\n    apiVersions: [--post-renderer=./post-render.sh]\n    additionalValuesFiles: [extra.yaml]\n    valuesInline: {{b: 2}}\n"
        )
    };
    let mut files = vec![
        file(
            "argocd/argocd-cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\n  namespace: argocd\ndata:\n  kustomize.buildOptions: --enable-helm\n",
        ),
        file("argocd/web.yaml", app_yaml("web", "web", "")),
        file("argocd/evil.yaml", app_yaml("evil", "evil", "")),
        file("argocd/schema.yaml", app_yaml("schema", "schema", "")),
        file("web/kustomization.yaml", kust("web")),
        file("web/extra.yaml", "c: 3\n"),
        file("evil/kustomization.yaml", kust("--post-renderer=./post-render.sh")),
        file("evil/extra.yaml", "c: 3\n"),
        file("evil/pvc.yaml", pvc("data")),
        file("schema/kustomization.yaml", kust("schema")),
        file("schema/extra.yaml", "c: 3\n"),
        file(
            "schema/charts/web/values.schema.json",
            r#"{"$ref": "file:///etc/passwd"}"#,
        ),
        file("post-render.sh", marker_script(&marker)),
    ];
    for d in ["web", "evil", "schema"] {
        files.extend(chart(d));
    }
    let base = files.clone();
    // Every app changes, so each is rendered at both revisions.
    for d in ["web", "evil", "schema"] {
        files.push(file(
            &format!("{d}/charts/web/templates/more.yaml"),
            pvc("more"),
        ));
    }
    let tmp = repo(&base, &files);
    make_executable(&tmp.path().join("post-render.sh"));
    let out = bin()
        .current_dir(tmp.path())
        .env("PATH", format!("{}:/usr/bin:/bin", tools.path().display()))
        .args([
            "diff",
            "main..change",
            "--format",
            "json",
            "--helm-renderer",
            "binary",
        ])
        .output()
        .expect("runs");
    let report = json(&out);
    assert!(!marker.exists(), "a script from the repository was run");
    let failed = gl000_apps(&report);
    for app in ["evil", "schema"] {
        assert!(failed.contains(&app.to_string()), "{app}: {report:#}");
        assert!(
            !pruned_apps(&report).contains(&app.to_string()),
            "{report:#}"
        );
    }
    assert!(!failed.contains(&"web".to_string()), "{report:#}");
    let log = std::fs::read_to_string(&log).expect("helm was run for `web`");
    let calls: Vec<Vec<&str>> = log
        .split("--END--\n")
        .filter(|c| !c.is_empty())
        .map(|c| c.lines().collect())
        .collect();
    // For `web` only, at each revision.
    assert_eq!(calls.len(), 2, "{calls:?}");
    let repo_dir = tmp.path().canonicalize().expect("canonical");
    for call in &calls {
        let (cwd, argv) = call.split_first().expect("pwd logged");
        assert_eq!(argv.get(..2), Some(&["template", "web"][..]), "{argv:?}");
        let chart = PathBuf::from(argv.get(2).copied().unwrap_or_default());
        assert!(chart.ends_with("web/charts/web"), "{argv:?}");
        for p in [chart.as_path(), Path::new(cwd)] {
            assert!(
                !p.starts_with(&repo_dir) && !p.starts_with(tmp.path()),
                "helm ran in or on the repository itself: {cwd} {argv:?}"
            );
        }
        for flag in &argv[3..] {
            assert!(
                [
                    "--namespace=",
                    "--values=",
                    "--api-versions=",
                    "--kube-version=",
                    "--include-crds",
                    "--skip-tests",
                    "--no-hooks",
                ]
                .iter()
                .any(|ok| flag.starts_with(ok)),
                "unexpected helm argument {flag:?} in {argv:?}"
            );
        }
        assert_eq!(
            argv.iter().filter(|a| a.starts_with("--values=")).count(),
            2,
            "the written values file, then extra.yaml: {argv:?}"
        );
    }
}

/// A `helm` inside the repository (reached through PATH, absolute or
/// relative) is never run: the pull request could have put it there.
#[test]
fn a_helm_inside_the_repository_is_never_run() {
    let outside = tempfile::tempdir().expect("temp dir");
    let marker = outside.path().join("executed");
    let files = vec![
        file("argocd/web.yaml", app_yaml("web", "web", "")),
        file("web/Chart.yaml", CHART),
        file("web/templates/pvc.yaml", pvc("data")),
        file("bin/helm", marker_script(&marker)),
    ];
    // The chart changes, so it must be rendered (an unchanged one is not).
    let mut head = files.clone();
    head.push(file("web/templates/more.yaml", pvc("more")));
    let tmp = repo(&files, &head);
    make_executable(&tmp.path().join("bin/helm"));
    for path in [
        format!("{}/bin:/usr/bin:/bin", tmp.path().display()),
        "bin:/usr/bin:/bin".to_string(),
        ":/usr/bin:/bin".to_string(),
    ] {
        let out = bin()
            .current_dir(tmp.path())
            .env("PATH", &path)
            .args(["diff", "main..change", "--format", "json"])
            .output()
            .expect("runs");
        let report = json(&out);
        assert!(
            !marker.exists(),
            "PATH={path}: the repository's helm was run"
        );
        // No helm outside the repository: the chart renders natively.
        assert_eq!(apps_with_status(&report, "rendered"), ["web"], "{report:#}");
    }
}

/// A symlink to `/etc/passwd` never brings its content into any output,
/// and the app holding it is a render failure with nothing pruned.
#[test]
fn a_symlink_out_of_the_repository_is_never_followed() {
    let base = vec![
        file("argocd/a.yaml", app_yaml("a", "a", "")),
        file("a/data-pvc.yaml", pvc("data")),
    ];
    let mut head = base.clone();
    head.retain(|(p, _)| p != "a/data-pvc.yaml");
    head.push(file("a/passwd.yaml.symlink", "/etc/passwd"));
    head.push(file("a/up.yaml.symlink", "../../../../../../etc/passwd"));
    let tmp = repo(&base, &head);
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let secret = passwd.lines().next().unwrap_or("root:x:0:0").to_string();
    for args in [
        &["diff", "main..change", "--format", "json"][..],
        &["diff", "main..change", "--format", "human"],
        &["check", "--format", "json"],
        &["render", "a"],
    ] {
        let out = run(tmp.path(), args);
        let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
        assert!(
            !String::from_utf8_lossy(&all).contains(&secret),
            "{args:?} printed /etc/passwd"
        );
        if args[0] == "diff" && args[3] == "json" {
            let report = json(&out);
            assert_eq!(gl000_apps(&report), ["a"], "{report:#}");
            assert!(pruned_apps(&report).is_empty(), "{report:#}");
        }
    }
}
