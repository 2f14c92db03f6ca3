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

/// Builds a commit with git2 from a tree built by `make` and points `main` at it.
fn commit_tree(dir: &Path, make: impl FnOnce(&git2::Repository) -> git2::Oid) {
    let repo = git2::Repository::init(dir).expect("init");
    let tree = make(&repo);
    let tree = repo.find_tree(tree).expect("tree");
    let sig =
        git2::Signature::new("t", "t@example.invalid", &git2::Time::new(0, 0)).expect("signature");
    repo.commit(Some("refs/heads/main"), &sig, &sig, "t", &tree, &[])
        .expect("commit");
    repo.set_head("refs/heads/main").expect("head");
}

fn tree_of(repo: &git2::Repository, entries: &[(&str, git2::Oid, i32)]) -> git2::Oid {
    let mut b = repo.treebuilder(None).expect("builder");
    for (name, oid, mode) in entries {
        b.insert(name, *oid, *mode).expect("insert");
    }
    b.write().expect("write tree")
}

/// A directory tree 30,000 levels deep is a render failure of the app
/// that reads it, not a stack overflow.
#[test]
fn a_directory_tree_thirty_thousand_levels_deep_is_a_render_failure() {
    let tmp = tempfile::tempdir().expect("temp dir");
    commit_tree(tmp.path(), |repo| {
        let cm = repo
            .blob(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")
            .expect("blob");
        let mut t = tree_of(repo, &[("cm.yaml", cm, 0o100_644)]);
        for _ in 0..30_000 {
            t = tree_of(repo, &[("d", t, 0o040_000)]);
        }
        let app = repo
            .blob(&app_yaml(
                "deep",
                "d",
                "    directory:\n      recurse: true\n",
            ))
            .expect("blob");
        tree_of(repo, &[("app.yaml", app, 0o100_644), ("d", t, 0o040_000)])
    });
    let out = run(tmp.path(), &["check", "main", "--format", "json"]);
    let report = json(&out);
    assert_eq!(gl000_apps(&report), ["deep"], "{report:#}");
    let msg = report["findings"][0]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        msg.contains("nested more than 256 directories deep"),
        "{msg}"
    );
}

/// A "git bomb" (directories that all point at the same subtree, ten
/// levels of ten: 10^10 paths from a few kilobytes of objects) is refused
/// with one line and exit status 4 (the run failed) instead of being expanded.
#[test]
fn a_git_bomb_is_refused_with_one_line() {
    let tmp = tempfile::tempdir().expect("temp dir");
    commit_tree(tmp.path(), |repo| {
        let cm = repo.blob(b"kind: ConfigMap\n").expect("blob");
        let names: Vec<String> = (0..10).map(|i| format!("f{i}.yaml")).collect();
        let files: Vec<(&str, git2::Oid, i32)> =
            names.iter().map(|n| (n.as_str(), cm, 0o100_644)).collect();
        let mut t = tree_of(repo, &files);
        let dirs: Vec<String> = (0..10).map(|i| format!("d{i}")).collect();
        for _ in 0..10 {
            let entries: Vec<(&str, git2::Oid, i32)> =
                dirs.iter().map(|n| (n.as_str(), t, 0o040_000)).collect();
            t = tree_of(repo, &entries);
        }
        t
    });
    let out = run(tmp.path(), &["check", "main"]);
    assert_eq!(out.status.code(), Some(4));
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains("more than 1000000 files and directories"),
        "{lines:?}"
    );
}

/// With a cache, a subtree indexed before is counted from its kept size
/// instead of being decoded: a head that repeats it a thousand times is
/// refused as the same tree without a cache is.
#[test]
fn a_git_bomb_of_a_subtree_indexed_before_is_refused_with_a_cache() {
    let tmp = tempfile::tempdir().expect("temp dir");
    let repo = git2::Repository::init(tmp.path()).expect("init");
    let cm = repo.blob(b"kind: ConfigMap\n").expect("blob");
    let names: Vec<String> = (0..1000).map(|i| format!("f{i}.yaml")).collect();
    let files: Vec<(&str, git2::Oid, i32)> =
        names.iter().map(|n| (n.as_str(), cm, 0o100_644)).collect();
    let s = tree_of(&repo, &files);
    let sig =
        git2::Signature::new("t", "t@example.invalid", &git2::Time::new(0, 0)).expect("signature");
    let commit = |refname: &str, tree: git2::Oid, parents: &[&git2::Commit<'_>]| {
        let tree = repo.find_tree(tree).expect("tree");
        repo.commit(Some(refname), &sig, &sig, "t", &tree, parents)
            .expect("commit")
    };
    let base = commit(
        "refs/heads/main",
        tree_of(&repo, &[("s", s, 0o040_000)]),
        &[],
    );
    let base = repo.find_commit(base).expect("base");
    let small = tree_of(&repo, &[("s", s, 0o040_000), ("t", s, 0o040_000)]);
    commit("refs/heads/change", small, &[&base]);
    let cache = tempfile::tempdir().expect("cache dir");
    let cache_dir = cache.path().to_string_lossy().to_string();
    let diff = |extra: &[&str]| {
        let mut args = vec!["diff", "main..change"];
        args.extend_from_slice(extra);
        run(tmp.path(), &args)
    };
    let first = diff(&["--cache-dir", &cache_dir]);
    assert_ne!(
        first.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let dirs: Vec<String> = (0..1001).map(|i| format!("d{i}")).collect();
    let mut entries: Vec<(&str, git2::Oid, i32)> =
        dirs.iter().map(|n| (n.as_str(), s, 0o040_000)).collect();
    entries.push(("s", s, 0o040_000));
    let bomb = tree_of(&repo, &entries);
    repo.reference(
        "refs/heads/change",
        commit("refs/heads/bomb", bomb, &[&base]),
        true,
        "t",
    )
    .expect("move change");
    for extra in [
        &["--cache-dir", cache_dir.as_str()][..],
        &["--no-cache"][..],
    ] {
        let out = diff(extra);
        assert_eq!(out.status.code(), Some(4), "{extra:?}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("more than 1000000 files and directories"),
            "{extra:?}: {lines:?}"
        );
    }
}

/// A 4 MiB line and a stream of 100,000 tiny documents are read (they are
/// within the limits) in bounded time, and the app is analysed.
#[test]
fn a_multi_megabyte_line_is_read() {
    let long = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: long\ndata:\n  blob: \"{}\"\n",
        "x".repeat(4 * 1024 * 1024)
    );
    let base = vec![
        file("argocd/a.yaml", app_yaml("a", "a", "")),
        file("a/data-pvc.yaml", pvc("data")),
    ];
    let mut head = vec![file("argocd/a.yaml", app_yaml("a", "a", ""))];
    head.push(file("a/long.yaml", long));
    let tmp = repo(&base, &head);
    let out = run(tmp.path(), &["diff", "main..change", "--format", "json"]);
    let report = json(&out);
    assert_eq!(apps_with_status(&report, "rendered"), ["a"], "{report:#}");
    assert_eq!(pruned_apps(&report), ["a"], "the PVC removal is still seen");
}

/// Requests that cannot be carried out exit 2 with one clear line on
/// stderr and nothing on stdout.
#[test]
fn unusable_configuration_exits_2_with_one_line() {
    let files = vec![
        file("argocd/a.yaml", app_yaml("a", "a", "")),
        file("a/data-pvc.yaml", pvc("data")),
    ];
    let tmp = repo(&files, &files);
    let dir = tmp.path().to_string_lossy().into_owned();
    let missing = format!("{dir}/no-such-config.yaml");
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (
            vec!["diff", "main..change", "--config", &missing],
            "no such file in the base revision",
        ),
        (
            vec!["diff", "main..change", "--config", "a"],
            "is a directory",
        ),
        (
            vec!["diff", "main..change", "--config", &dir],
            "not a file of this repository",
        ),
    ];
    for (args, expect) in cases {
        let out = run(tmp.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{args:?}: {lines:?}");
        assert!(lines[0].contains(expect), "{args:?}: {lines:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

/// A configuration at the base revision that is a symlink out of the
/// repository, or an alias bomb, is refused (exit 2, one line), not
/// followed and not expanded.
#[test]
fn a_hostile_configuration_in_the_repository_exits_2() {
    let app = vec![
        file("argocd/a.yaml", app_yaml("a", "a", "")),
        file("a/data-pvc.yaml", pvc("data")),
    ];
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (i, prev) in ('b'..='k').zip('a'..='j') {
        bomb.push_str(&format!(
            "{i}: &{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
        ));
    }
    for (config, expect) in [
        (
            file(".gitops-lint.yaml.symlink", "/etc/passwd"),
            "outside the repository",
        ),
        (
            file(".gitops-lint.yaml", bomb),
            "anchors and aliases expand",
        ),
    ] {
        let mut files = app.clone();
        files.push(config);
        let tmp = repo(&files, &files);
        let out = run(tmp.path(), &["diff", "main..change"]);
        assert_eq!(out.status.code(), Some(2), "{expect}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains(expect), "{lines:?}");
    }
}

/// A bad flag value is a usage error: exit 2 and one line naming the flag
/// and the value.
#[test]
fn a_bad_flag_value_exits_2_naming_it() {
    let files = vec![file("argocd/a.yaml", app_yaml("a", "a", ""))];
    let tmp = repo(&files, &files);
    for (args, needle) in [
        (vec!["diff", "--format", "xml"], "xml"),
        (vec!["diff", "--fail-on", "sometimes"], "sometimes"),
        (vec!["check", "--color", "purple"], "purple"),
    ] {
        let out = run(tmp.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{args:?}: {lines:?}");
        assert!(lines[0].contains(needle), "{args:?}: {lines:?}");
        assert!(out.stdout.is_empty());
    }
}

/// A `List` that aliases one object 15,000 times (within the alias budget).
fn aliased_list() -> Vec<u8> {
    let items = vec!["*c"; 15_000].join(",");
    format!("apiVersion: v1\nkind: List\nx: &c {{apiVersion: v1, kind: ConfigMap, metadata: {{name: a}}}}\nitems: [{items}]\n").into_bytes()
}

/// One blob at `copies` paths of directory `d`: git stores it once.
fn amplifying_repo(copies: usize, apps: usize) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().expect("temp dir");
    commit_tree(tmp.path(), |repo| {
        let blob = repo.blob(&aliased_list()).expect("blob");
        let names: Vec<String> = (0..copies).map(|i| format!("f{i:05}.yaml")).collect();
        let entries: Vec<(&str, git2::Oid, i32)> = names
            .iter()
            .map(|n| (n.as_str(), blob, 0o100_644))
            .collect();
        let d = tree_of(repo, &entries);
        let apps: Vec<u8> = (0..apps)
            .flat_map(|i| {
                let mut a = b"---\n".to_vec();
                a.extend(app_yaml(&format!("amp{i}"), "d", ""));
                a
            })
            .collect();
        let apps = repo.blob(&apps).expect("blob");
        tree_of(repo, &[("apps.yaml", apps, 0o100_644), ("d", d, 0o040_000)])
    });
    tmp
}

/// A 200 KiB repository whose one directory names the same aliased `List`
/// 2,000 times (30 million objects) is a render failure of that app: it
/// used to take more than 18 GB of memory.
#[test]
fn one_source_that_multiplies_into_millions_of_objects_is_a_render_failure() {
    let tmp = amplifying_repo(2_000, 1);
    let out = run(tmp.path(), &["check", "main", "--format", "json"]);
    let report = json(&out);
    assert_eq!(gl000_apps(&report), ["amp0"], "{report:#}");
    let msg = report["findings"][0]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(msg.contains("renders more than 100000 resources"), "{msg}");
}

/// Fifty Applications rendering the same 90,000-object directory exceed the
/// run's render budget: exit 4 with one line, whichever thread got there first.
#[test]
fn many_apps_multiplying_one_directory_stop_the_run_with_one_line() {
    let tmp = amplifying_repo(6, 50);
    for threads in ["1", "2"] {
        let out = bin()
            .current_dir(tmp.path())
            .env("RAYON_NUM_THREADS", threads)
            .args(["check", "main"])
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(4));
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(
            lines[0].contains("render more than 500000 objects"),
            "{lines:?}"
        );
    }
}

/// The loader refuses a stream larger than its byte limit before parsing
/// it, with an error at line 1 (the default limit is 64 MiB).
#[test]
fn a_stream_over_the_byte_limit_is_refused_before_parsing() {
    use goyaml::{load_all_with, Limits};
    let limits = Limits {
        max_bytes: 1024,
        ..Limits::default()
    };
    let text = format!("a: \"{}\"\n", "x".repeat(2000));
    let e = load_all_with(&text, &limits).expect_err("over the limit");
    assert!(e.message.contains("larger than 1024 bytes"), "{e}");
    assert_eq!((e.line, e.column), (1, 1));
    assert!(load_all_with("a: 1\n", &limits).is_ok());
    assert_eq!(Limits::default().max_bytes, 64 * 1024 * 1024);
}

/// A `matrix` of two 400-element lists (160,000 combinations; with aliases
/// a few kilobytes could ask for hundreds of millions) is not expanded,
/// and its result is unknown rather than empty.
#[test]
fn a_matrix_generator_that_multiplies_without_bound_is_an_error() {
    use gitops_lint::argocd::appset::{expand, AppSetContext, AppSetSettings};
    use gitops_lint::source::MemTree;
    let list = |key: &str| {
        let elements: Vec<Value> = (0..400)
            .map(|i| serde_json::json!({ key: i.to_string() }))
            .collect();
        serde_json::json!({"list": {"elements": elements}})
    };
    let set = serde_json::json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "ApplicationSet",
        "metadata": {"name": "product", "namespace": "argocd"},
        "spec": {
            "generators": [{"matrix": {"generators": [list("a"), list("b")]}}],
            "template": {
                "metadata": {"name": "app-{{a}}-{{b}}"},
                "spec": {"project": "default", "source": {"repoURL": "https://github.com/acme/gitops.git", "path": "apps"},
                         "destination": {"server": "https://kubernetes.default.svc", "namespace": "x"}}
            }
        }
    });
    let tree = MemTree::new(&[]);
    let is_this_repo = |_: &str| true;
    let settings = AppSetSettings::default();
    let cx = AppSetContext {
        tree: &tree,
        is_this_repo: &is_this_repo,
        is_this_revision: None,
        clusters: &[],
        settings: &settings,
        index_cache: None,
        templated: None,
    };
    // Argo CD has no such cap: past it, what the set generates is unknown
    // (its apps are GL000), never "the controller stops".
    let e = expand(&set, &cx).expect("expands to an unknown");
    assert!(e.apps.is_empty());
    assert!(
        e.unresolved
            .iter()
            .any(|u| u.contains("more than 100000 parameter sets")),
        "{e:?}"
    );
}

/// `printf` widths follow Go: past 1e6 the number swallows the rest of
/// the format (`%!(NOVERB)`), so a template cannot ask for a 888 MB pad.
#[test]
fn a_printf_width_in_the_hundreds_of_millions_is_not_allocated() {
    use gotemplate::{data_from_params, render, MissingKey};
    let dot = data_from_params(&serde_json::Map::new());
    let out = render(
        r#"{{ printf "a%0888888888dz" 1 }}"#,
        &dot,
        MissingKey::Invalid,
    )
    .expect("renders");
    // As Go prints it: the unused argument is reported after.
    assert_eq!(out, "a%!(NOVERB)%!(EXTRA int=1)");
    let out = render(r#"{{ printf "%5d|" 7 }}"#, &dot, MissingKey::Invalid).expect("renders");
    assert_eq!(out, "    7|");
}

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

/// A resource that keeps an app's directory present when its PVC goes.
const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n";

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

// ---------------------------------------------------------------------------
// Budgets: work is charged as it is done, so a few kilobytes cannot ask for
// gigabytes or hours. Each class has the attacked shape and a variant that
// reaches the same root cause another way; the binary runs under a 1 GiB
// address-space limit and must end with a report, never an abort.

/// Runs the binary under a 1 GiB address-space limit and returns its output;
/// the run must end with an exit status gitops-lint gives (0 to 4), not
/// with a signal (an allocation failure aborts, status 134).
fn run_limited(dir: &Path, args: &[&str]) -> Output {
    let bin = assert_cmd::cargo::cargo_bin("gitops-lint");
    let out = std::process::Command::new("prlimit")
        .arg(format!("--as={}", 1u64 << 30))
        .arg("--")
        .arg(&bin)
        .args(args)
        .current_dir(dir)
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env("RAYON_NUM_THREADS", "2")
        .output()
        .expect("prlimit runs");
    assert!(
        matches!(out.status.code(), Some(0..=4)),
        "the run ended with {:?} under a 1 GiB limit; stderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

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

fn appset_yaml(template_name: &str, elements: &str, extra_spec: &str) -> Vec<u8> {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: fleet
  namespace: argocd
spec:
  goTemplate: true
  generators:
  - list:
      elements: {elements}
{extra_spec}  template:
    metadata:
      name: '{template_name}'
    spec:
      project: default
      source:
        repoURL: https://github.com/acme/gitops.git
        targetRevision: main
        path: apps/web
      destination:
        server: https://kubernetes.default.svc
        namespace: web
      syncPolicy:
        automated:
          prune: true
"
    )
    .into_bytes()
}

/// Go-template functions with size arguments, and chains that grow a value
/// without any: each stops at the value budget, having charged its work,
/// with an error naming the budget; the same functions at ordinary sizes
/// render as Go does.
#[test]
fn template_functions_and_chains_are_bounded_by_one_value_budget() {
    use gotemplate::{data_from_params, parse, render, Budget, MissingKey};
    let dot = data_from_params(&serde_json::Map::new());
    let hostile = [
        // The attacked shape: one call with a size argument.
        r#"{{ indent 2000000000 "x" }}"#,
        r#"{{ nindent 2000000000 "x" }}"#,
        r#"{{ replace "a" (repeat 4000 "b") (repeat 100000 "a") }}"#,
        r#"{{ join (repeat 100000 "x") (until 100000) }}"#,
        r#"{{ regexReplaceAll "" (repeat 200000 "a") (repeat 400 "b") }}"#,
        // Found by fuzzing: the output is the input (`$0` of an empty match
        // is empty), but each of the 200,001 matches expands the replacement.
        r#"{{ regexReplaceAll "" (repeat 200000 "a") (repeat 1800 "$0") }}"#,
        r#"{{ regexReplaceAll "(.+)" (repeat 100000 "a") "$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1$1" }}"#,
        // Variants: no single call is large; intermediate values double.
        r#"{{ $x := "ab" }}{{ range until 64 }}{{ $x = cat $x $x }}{{ end }}{{ len $x }}"#,
        r#"{{ $d := dict }}{{ range until 64 }}{{ $d = dict "a" $d "b" $d }}{{ end }}{{ len $d }}"#,
        r"{{ $l := list 1 }}{{ range until 64 }}{{ $l = list $l $l }}{{ end }}{{ toPrettyJson $l }}",
        r#"{{ $d := dict }}{{ range until 100000 }}{{ $d = dict "a" $d }}{{ end }}{{ toJson $d }}"#,
        r#"{{ $s := repeat 1000 "x" }}{{ range until 1000000 }}{{ $t := $s }}{{ end }}"#,
        r"{{ $l := untilStep 0 1000000 1 }}{{ range until 1000 }}{{ $m := $l }}{{ end }}",
        r#"{{ splitList "" (repeat 1000000 "a") }}"#,
    ];
    for src in hostile {
        let t = parse(src).expect("parses");
        let mut budget = Budget::PER_EXECUTION;
        let err = t
            .execute_within(&dot, MissingKey::Invalid, &mut budget)
            .expect_err(&format!("{src} is refused"));
        assert!(
            err.contains("bytes") || err.contains("MiB") || err.contains("levels"),
            "{src}: {err}"
        );
        // Work was counted, and stopped within the budget.
        let spent = Budget::PER_EXECUTION.bytes - budget.bytes;
        assert!(
            spent <= Budget::PER_EXECUTION.bytes,
            "{src}: {spent} bytes charged"
        );
        assert!(budget.steps <= Budget::PER_EXECUTION.steps, "{src}");
    }
    // A budget shared by many executions runs out across them.
    let t = parse(r#"{{ repeat 1000000 "x" }}"#).expect("parses");
    let mut shared = Budget {
        steps: 1_000_000,
        bytes: 20 << 20,
    };
    let mut rendered = 0;
    while t
        .execute_within(&dot, MissingKey::Invalid, &mut shared)
        .is_ok()
    {
        rendered += 1;
        assert!(rendered < 100, "the shared budget never ran out");
    }
    assert!((5..=20).contains(&rendered), "{rendered} renders");
    // Ordinary sizes render as Go renders them.
    for (src, want) in [
        (r#"{{ indent 2 "a\nb" }}"#, "  a\n  b"),
        (r#"{{ nindent 2 "a" }}"#, "\n  a"),
        (r#"{{ replace "a" "bb" "aXa" }}"#, "bbXbb"),
        (r#"{{ join "-" (list "a" "b" "c") }}"#, "a-b-c"),
        (
            r#"{{ regexReplaceAll "a(x*)b" "-ab-axxb-" "${1}W" }}"#,
            "-W-xxW-",
        ),
        (r#"{{ regexReplaceAllLiteral "a" "aa" "$1" }}"#, "$1$1"),
        (
            r#"{{ $d := dict "k" "v" }}{{ $d = dict "a" $d }}{{ toJson $d }}"#,
            r#"{"a":{"k":"v"}}"#,
        ),
        (r#"{{ len (splitList "," "a,b,c") }}"#, "3"),
    ] {
        assert_eq!(
            render(src, &dot, MissingKey::Invalid).as_deref(),
            Ok(want),
            "{src}"
        );
    }
}

/// fasttemplate substitution: a megabyte parameter named by thousands of
/// tags is refused before it is built.
#[test]
fn fasttemplate_substitution_is_bounded() {
    use gitops_lint::argocd::appset::fasttemplate::replace;
    let mut params = serde_json::Map::new();
    params.insert("big".into(), Value::String("x".repeat(1 << 20)));
    params.insert("small".into(), Value::String("ok".into()));
    let tmpl = "{{big}}".repeat(100_000);
    let e = replace(&tmpl, &params, 64 << 20).expect_err("refused");
    assert!(e.contains("longer than"), "{e}");
    assert_eq!(
        replace("a-{{small}}-{{ missing }}", &params, 64 << 20).as_deref(),
        Ok("a-ok-{{ missing }}")
    );
}

/// An ApplicationSet whose template asks for gigabytes, at head: the run
/// ends under a 1 GiB limit and the ApplicationSet is reported as not
/// expandable, not as generating nothing.
#[test]
fn a_hostile_applicationset_template_is_reported_under_a_memory_limit() {
    for (name, extra) in [
        // The attacked shape: a size argument.
        (r"{{ indent 2000000000 .name }}", ""),
        // A variant: nested dict reassignment in the name.
        (
            r#"{{ $d := dict }}{{ range until 60 }}{{ $d = dict "a" $d "b" $d }}{{ end }}{{ .name }}{{ len $d }}"#,
            "",
        ),
    ] {
        let base = vec![
            file(
                "apps/fleet.yaml",
                appset_yaml("{{ .name }}", "[{name: web}]", ""),
            ),
            file("apps/web/pvc.yaml", pvc("data")),
        ];
        let head = vec![
            file("apps/fleet.yaml", appset_yaml(name, "[{name: web}]", extra)),
            file("apps/web/pvc.yaml", pvc("data")),
        ];
        let tmp = repo(&base, &head);
        let out = run_limited(tmp.path(), &["diff", "main..change", "--format", "json"]);
        let report = json(&out);
        // The generated app cannot be judged, and says why; nothing is
        // reported as kept or deleted in its place.
        assert_eq!(gl000_apps(&report), ["web"], "{name}: {report:#}");
        assert!(
            gl000_messages(&report)
                .iter()
                .any(|m| m.contains("beyond what gitops-lint evaluates")),
            "{name}: {report:#}"
        );
        assert!(pruned_apps(&report).is_empty(), "{name}: {report:#}");
    }
}

fn kustomize_app(name: &str) -> Vec<u8> {
    app_yaml(name, &format!("apps/{name}"), "")
}

fn configmaps(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  k: v\n"
            )
        })
        .collect()
}

/// Kustomize patches and replacements that double a resource: a JSON patch
/// `copy` forty times (the attacked shape), a replacement copying a map
/// into itself forty times, and a strategic-merge patch with a large
/// aliased body applied to every resource (variants). Each stops at the
/// node budget, under a 1 GiB limit, as GL000 naming it, with nothing
/// pruned; an ordinary copy still renders.
#[test]
fn kustomize_patches_that_double_a_resource_stop_at_the_node_budget() {
    let copies: String = (0..40)
        .map(|i| format!("  - op: copy\n    from: /data\n    path: /data/m{i}\n"))
        .collect::<String>();
    let json_copy = format!(
        "resources: [cm.yaml]\npatches:\n- target: {{kind: ConfigMap}}\n  patch: |-\n{}",
        copies
            .lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    );
    let replacements: String = (0..40)
        .map(|i| {
            format!("- source: {{kind: ConfigMap, name: cm-0, fieldPath: data}}\n  targets:\n  - select: {{kind: ConfigMap, name: cm-0}}\n    fieldPaths: [data.m{i}]\n    options: {{create: true}}\n")
        })
        .collect();
    let replacement = format!("resources: [cm.yaml]\nreplacements:\n{replacements}");
    // Ten alias levels of doubling stay under the YAML loader's alias
    // budget; applied to 3,000 ConfigMaps they would add twelve million nodes.
    let mut smp = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: any\nl0: &l0 [a, b, c, d, e, f, g, h]\n");
    for i in 1..10 {
        smp.push_str(&format!("l{i}: &l{i} [*l{}, *l{}]\n", i - 1, i - 1));
    }
    smp.push_str("data:\n  big: *l9\n");
    let smp_all = format!(
        "resources: [cm.yaml]\npatches:\n- target: {{kind: ConfigMap}}\n  patch: |-\n{}",
        smp.lines()
            .map(|l| format!("    {l}\n"))
            .collect::<String>()
    );
    for (what, kustomization, resources) in [
        ("json-copy", json_copy, configmaps(1)),
        ("replacement", replacement, configmaps(1)),
        ("smp-everywhere", smp_all, configmaps(3000)),
    ] {
        let base = vec![
            file("apps/web.yaml", kustomize_app("web")),
            file(
                "apps/web/kustomization.yaml",
                "resources: [cm.yaml, pvc.yaml]\n",
            ),
            file("apps/web/cm.yaml", resources.clone()),
            file("apps/web/pvc.yaml", pvc("data")),
        ];
        let head = vec![
            file("apps/web.yaml", kustomize_app("web")),
            file("apps/web/kustomization.yaml", kustomization),
            file("apps/web/cm.yaml", resources),
        ];
        let tmp = repo(&base, &head);
        let out = run_limited(tmp.path(), &["diff", "main..change", "--format", "json"]);
        let report = json(&out);
        assert_eq!(gl000_apps(&report), ["web"], "{what}: {report:#}");
        assert!(
            gl000_messages(&report)
                .iter()
                .any(|m| m.contains("nodes; gitops-lint stops there")),
            "{what}: {report:#}"
        );
        // The PVC removed at head is not reported as kept or pruned: the
        // app cannot be judged.
        assert!(pruned_apps(&report).is_empty(), "{what}: {report:#}");
    }
    // An ordinary copy renders as Kustomize renders it.
    let ok = "resources: [cm.yaml]\npatches:\n- target: {kind: ConfigMap}\n  patch: |-\n    - op: copy\n      from: /data/k\n      path: /data/k2\n";
    let tmp = repo(
        &[],
        &[
            file("apps/web.yaml", kustomize_app("web")),
            file("apps/web/kustomization.yaml", ok),
            file("apps/web/cm.yaml", configmaps(1)),
        ],
    );
    let report = json(&run_limited(
        tmp.path(),
        &["diff", "main..change", "--format", "json"],
    ));
    assert!(gl000_apps(&report).is_empty(), "{report:#}");
    let rendered = bin()
        .current_dir(tmp.path())
        .args(["render", "apps/web"])
        .output()
        .expect("renders");
    let text = String::from_utf8_lossy(&rendered.stdout);
    assert!(text.contains("k2: v"), "{text}");
}

/// Thousands of strategic-merge patches over thousands of resources: each
/// patch finds its target through an index, so the build is linear; every
/// patch is applied.
#[test]
fn many_strategic_merge_patches_over_many_resources_are_applied() {
    let n = 4000;
    let patches: String = (0..n)
        .map(|i| format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  patched: \"{i}\"\n"))
        .collect();
    let tmp = repo(
        &[
            file("apps/web.yaml", kustomize_app("web")),
            file("apps/web/kustomization.yaml", "resources: [cm.yaml]\n"),
            file("apps/web/cm.yaml", configmaps(n)),
        ],
        &[
            file("apps/web.yaml", kustomize_app("web")),
            file(
                "apps/web/kustomization.yaml",
                "resources: [cm.yaml]\npatchesStrategicMerge: [patches.yaml]\n",
            ),
            file("apps/web/cm.yaml", configmaps(n)),
            file("apps/web/patches.yaml", patches),
        ],
    );
    let out = run_limited(tmp.path(), &["diff", "main..change", "--format", "json"]);
    let report = json(&out);
    assert!(gl000_apps(&report).is_empty(), "{report:#}");
    let rendered = apps_with_status(&report, "rendered");
    assert_eq!(rendered, ["web"], "{report:#}");
    // Every patch was applied: the last ConfigMap carries its patch.
    let rendered = bin()
        .current_dir(tmp.path())
        .args(["render", "apps/web"])
        .output()
        .expect("renders");
    let text = String::from_utf8_lossy(&rendered.stdout);
    assert_eq!(
        text.matches("patched:").count(),
        n,
        "{}",
        &text[..text.len().min(2000)]
    );
}

/// A blob whose object header says 512 MiB (a few hundred kilobytes
/// compressed) is refused from its header, before anything is inflated:
/// read as a manifest (the attacked shape) or as a Kustomize generator's
/// file (a variant), under a 1 GiB limit, it is GL000 naming the size.
#[test]
fn a_blob_larger_than_the_limit_is_refused_from_its_header() {
    for (what, files) in [
        (
            "manifest",
            vec![file("apps/web.yaml", app_yaml("web", "apps/web", ""))],
        ),
        (
            "configMapGenerator",
            vec![
                file("apps/web.yaml", app_yaml("web", "apps/web", "")),
                file(
                    "apps/web/kustomization.yaml",
                    "configMapGenerator:\n- name: big\n  files: [big.yaml]\n",
                ),
            ],
        ),
    ] {
        let tmp = repo(
            &[
                file("apps/web.yaml", app_yaml("web", "apps/web", "")),
                file("apps/web/pvc.yaml", pvc("data")),
            ],
            &files,
        );
        let dir = tmp.path();
        // 512 MiB of zeros through `git hash-object`, staged and committed.
        let mut child = std::process::Command::new("git")
            .current_dir(dir)
            .args(["hash-object", "-w", "--stdin"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("git runs");
        {
            use std::io::Write as _;
            let mut stdin = child.stdin.take().expect("stdin");
            let chunk = vec![b' '; 1 << 20];
            for _ in 0..512 {
                stdin.write_all(&chunk).expect("write");
            }
        }
        let out = child.wait_with_output().expect("hashed");
        let oid = String::from_utf8_lossy(&out.stdout).trim().to_string();
        git(
            dir,
            &[
                "update-index",
                "--add",
                "--cacheinfo",
                &format!("100644,{oid},apps/web/big.yaml"),
            ],
        );
        git(dir, &["commit", "-q", "-m", "big"]);
        let out = run_limited(dir, &["diff", "main..change", "--format", "json"]);
        let report = json(&out);
        assert_eq!(gl000_apps(&report), ["web"], "{what}: {report:#}");
        assert!(
            gl000_messages(&report)
                .iter()
                .any(|m| m.contains("536870912 bytes, larger than")),
            "{what}: {report:#}"
        );
        assert!(pruned_apps(&report).is_empty(), "{what}: {report:#}");
    }
}

/// A tree entry git's porcelain cannot write: `(dir, name bytes, mode,
/// blob content)`; no content makes a gitlink to a made-up commit.
type RawEntry<'a> = (&'a str, &'a [u8], i32, Option<&'a [u8]>);

/// A repository's files for one revision.
type Files = Vec<(String, Vec<u8>)>;

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

/// A git submodule inside a `recurse: true` directory app: Argo CD checks
/// it out and reads its manifests; gitops-lint cannot, so the app is GL000
/// rather than smaller. The variant: a Kustomize base that is a submodule.
/// Without `recurse`, a submodule is not read by Argo CD either, and the
/// app renders.
#[test]
fn a_submodule_inside_an_app_makes_it_unanalysable_not_smaller() {
    let recurse = "    directory:\n      recurse: true\n";
    let cases: Vec<(&str, Files, &str, bool)> = vec![
        (
            "recurse",
            vec![
                file("apps/web.yaml", app_yaml("web", "apps/web", recurse)),
                file("apps/web/pvc.yaml", pvc("data")),
            ],
            "apps/web",
            true,
        ),
        (
            "kustomize-base",
            vec![
                file("apps/web.yaml", app_yaml("web", "apps/web", "")),
                file(
                    "apps/web/kustomization.yaml",
                    "resources: [vendor, pvc.yaml]\n",
                ),
                file("apps/web/pvc.yaml", pvc("data")),
            ],
            "apps/web",
            true,
        ),
        (
            "no-recurse",
            vec![
                file("apps/web.yaml", app_yaml("web", "apps/web", "")),
                file("apps/web/pvc.yaml", pvc("data")),
            ],
            "apps/web",
            false,
        ),
    ];
    for (what, files, dir, unanalysable) in cases {
        let tmp = tempfile::tempdir().expect("tempdir");
        // Base: the same app without the submodule, with one more PVC.
        let mut base: Vec<(String, Vec<u8>)> = files
            .iter()
            .filter(|(p, _)| p != "apps/web/kustomization.yaml")
            .cloned()
            .collect();
        base.push(file("apps/web/old.yaml", pvc("old")));
        if what == "kustomize-base" {
            base.push(file(
                "apps/web/kustomization.yaml",
                "resources: [pvc.yaml, old.yaml]\n",
            ));
        }
        commit_with_raw_entries(
            tmp.path(),
            &base,
            &files,
            &[(dir, b"vendor", 0o160_000, None)],
        );
        let out = run_limited(tmp.path(), &["diff", "main..change", "--format", "json"]);
        let report = json(&out);
        if unanalysable {
            assert_eq!(gl000_apps(&report), ["web"], "{what}: {report:#}");
            assert!(
                gl000_messages(&report)
                    .iter()
                    .any(|m| m.contains("submodule")),
                "{what}: {report:#}"
            );
            assert!(pruned_apps(&report).is_empty(), "{what}: {report:#}");
        } else {
            assert!(gl000_apps(&report).is_empty(), "{what}: {report:#}");
            assert_eq!(pruned_apps(&report), ["web"], "{what}: {report:#}");
        }
    }
}

/// A manifest whose file name is not UTF-8 is read, as Argo CD reads it:
/// unchanged, it is not a prune; removed at head (the variant), its PVC is.
#[test]
fn a_file_whose_name_is_not_utf8_is_read_not_dropped() {
    let app = file("apps/web.yaml", app_yaml("web", "apps/web", ""));
    let name: &[u8] = b"data-\xff\xfe.yaml";
    let bytes = pvc("data");
    for (what, keep) in [("unchanged", true), ("removed", false)] {
        let tmp = tempfile::tempdir().expect("tempdir");
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
        // Base: the app and the odd-named manifest; head: a new file, and
        // the manifest kept or removed.
        let repo = git2::Repository::open(dir).expect("opens");
        let sig = git2::Signature::now("t", "t@example.invalid").expect("sig");
        let build = |odd: bool, extra: bool| {
            let mut web = repo.treebuilder(None).expect("tb");
            if odd {
                web.insert(name, repo.blob(&bytes).expect("blob"), 0o100_644)
                    .expect("insert");
            }
            if extra {
                web.insert(
                    "cm.yaml",
                    repo.blob(b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n")
                        .expect("blob"),
                    0o100_644,
                )
                .expect("insert");
            }
            let web = web.write().expect("tree");
            let mut apps = repo.treebuilder(None).expect("tb");
            apps.insert("web", web, 0o040_000).expect("insert");
            apps.insert("web.yaml", repo.blob(&app.1).expect("blob"), 0o100_644)
                .expect("insert");
            let apps = apps.write().expect("tree");
            let mut root = repo.treebuilder(None).expect("tb");
            root.insert("apps", apps, 0o040_000).expect("insert");
            root.write().expect("tree")
        };
        let base_tree = repo.find_tree(build(true, false)).expect("tree");
        let base = repo
            .commit(Some("refs/heads/main"), &sig, &sig, "base", &base_tree, &[])
            .expect("commit");
        let base = repo.find_commit(base).expect("commit");
        let head_tree = repo.find_tree(build(keep, true)).expect("tree");
        repo.commit(
            Some("refs/heads/change"),
            &sig,
            &sig,
            "head",
            &head_tree,
            &[&base],
        )
        .expect("commit");
        let out = run_limited(dir, &["diff", "main..change", "--format", "json"]);
        let report = json(&out);
        assert!(gl000_apps(&report).is_empty(), "{what}: {report:#}");
        if keep {
            assert!(pruned_apps(&report).is_empty(), "{what}: {report:#}");
        } else {
            assert_eq!(pruned_apps(&report), ["web"], "{what}: {report:#}");
        }
    }
}

/// Repository text in every format: a backtick in a file name cannot close
/// a Markdown code span and let `<!--` hide the rest of the summary (the
/// attacked shape), an annotation value cannot close `</details>` (a
/// variant), and neither can carry a workflow command (`##[add-mask]`,
/// `::error`) into human or GitHub output, at a line start or inside one.
#[test]
fn repository_text_cannot_break_markdown_or_carry_runner_commands() {
    let odd_file = "apps/web/x`<!--y.yaml";
    let name = "d`<!--x</details>##[add-mask]secret ::warning::forged";
    let hostile_pvc = format!(
        "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: \"{name}\"\nspec:\n  accessModes: [ReadWriteOnce]\n"
    );
    let base = vec![
        file("apps/web.yaml", app_yaml("web", "apps/web", "")),
        file("apps/web/pvc.yaml", pvc("kept")),
        file(odd_file, hostile_pvc.into_bytes()),
    ];
    let head = vec![
        file("apps/web.yaml", app_yaml("web", "apps/web", "")),
        file("apps/web/pvc.yaml", pvc("kept")),
    ];
    let tmp = repo(&base, &head);
    let run_format = |format: &str| {
        let out = bin()
            .current_dir(tmp.path())
            .args([
                "diff",
                "main..change",
                "--format",
                format,
                "--color",
                "never",
            ])
            .output()
            .expect("runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let md = run_format("markdown");
    assert!(md.contains("x`<!--y.yaml"), "the file is named:\n{md}");
    assert!(!md.contains("`x`"), "{md}");
    // Outside code spans no HTML comment opens, and every <details> closes
    // exactly once.
    let outside_code: String = md
        .split("``")
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, s)| s)
        .collect();
    assert!(!outside_code.contains("<!--"), "{md}");
    // The rendered diff quotes the object in fenced blocks, whose content
    // is literal text (CommonMark): there a `</details>` closes nothing.
    // Each fence is longer than any run of backticks inside it.
    let mut fence: Option<&str> = None;
    let outside_fences: Vec<&str> = md
        .lines()
        .filter(|l| {
            let ticks = &l[..l.len() - l.trim_start_matches('`').len()];
            match fence {
                Some(f) if *l == f => {
                    fence = None;
                    false
                }
                Some(_) => false,
                None if ticks.len() >= 3 => {
                    fence = Some(ticks);
                    false
                }
                None => true,
            }
        })
        .collect();
    assert!(fence.is_none(), "every fence is closed:\n{md}");
    let outside_fences = outside_fences.join("\n");
    assert_eq!(
        outside_fences.matches("<details>").count(),
        outside_fences.matches("</details>").count(),
        "{md}"
    );
    assert!(md.contains("&lt;/details&gt;"), "{md}");
    for format in ["human", "github", "markdown"] {
        let text = run_format(format);
        for line in text.lines() {
            assert!(!line.contains("##["), "{format}: {line}");
            if format != "github" {
                assert!(!line.trim_start().starts_with("::"), "{format}: {line}");
            }
        }
        if format == "github" {
            assert!(
                text.lines()
                    .all(|l| l.starts_with("::") && !l[2..].contains("::warning::")),
                "{format}:\n{text}"
            );
        }
        assert!(
            text.contains("add-mask"),
            "{format}: the value is shown:\n{text}"
        );
    }
}

/// In the working tree (`check`, pre-commit), a file's size is read from
/// its metadata before it is read: a 2 GiB sparse file is GL000 under a
/// 1 GiB limit, not read whole.
#[test]
fn a_large_file_in_the_working_tree_is_refused_from_its_size() {
    let tmp = repo(
        &[],
        &[
            file("apps/web.yaml", app_yaml("web", "apps/web", "")),
            file("apps/web/pvc.yaml", pvc("data")),
        ],
    );
    let big = std::fs::File::create(tmp.path().join("apps/web/big.yaml")).expect("create");
    big.set_len(2 << 30).expect("sparse");
    let out = run_limited(tmp.path(), &["check", "--format", "json"]);
    let report = json(&out);
    assert_eq!(gl000_apps(&report), ["web"], "{report:#}");
    assert!(
        gl000_messages(&report)
            .iter()
            .any(|m| m.contains("2147483648 bytes, larger than")),
        "{report:#}"
    );
}

// ---------------------------------------------------------------------------
// Second pass: a pull request's author who knows the code. Each test runs
// the binary with a memory cap (`RLIMIT_AS` through prlimit) and a time
// limit, so a break shows as a failure instead of a stuck or killed run.

/// Runs the binary under `mem` bytes of address space, killed after
/// `secs` seconds; the run must end by itself with an exit status
/// gitops-lint gives (0 to 4).
fn run_capped(dir: &Path, args: &[&str], mem: u64, secs: u64) -> Output {
    let bin = assert_cmd::cargo::cargo_bin("gitops-lint");
    let out = std::process::Command::new("timeout")
        .args(["--signal=KILL", &secs.to_string(), "prlimit"])
        .arg(format!("--as={mem}"))
        .arg("--")
        .arg(&bin)
        .args(args)
        .current_dir(dir)
        .env("PATH", "/usr/bin:/bin")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env("RAYON_NUM_THREADS", "2")
        .output()
        .expect("timeout and prlimit run");
    assert!(
        matches!(out.status.code(), Some(0..=4)),
        "the run ended with {:?} (killed after {secs} s, or aborted under {mem} bytes); stderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

const GIB: u64 = 1 << 30;

/// An ApplicationSet of `n` list elements, each an Application named
/// `a<i>` rendering the chart at `chart`; `go` switches Go templates on.
fn fleet_of_chart(n: usize, chart: &str, name: &str, go: bool, extra_element: &str) -> Vec<u8> {
    let elements: Vec<String> = (0..n)
        .map(|i| format!("{{name: a{i}{extra_element}}}"))
        .collect();
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: fleet
  namespace: argocd
spec:
  goTemplate: {go}
  generators:
  - list:
      elements: [{}]
  template:
    metadata:
      name: '{name}'
    spec:
      project: default
      source:
        repoURL: https://github.com/acme/gitops.git
        targetRevision: main
        path: {chart}
      destination:
        server: https://kubernetes.default.svc
        namespace: web
      syncPolicy:
        automated:
          prune: true
",
        elements.join(", ")
    )
    .into_bytes()
}

/// The attacked shape: a 200 KB value `tpl`-ed into itself in a chart
/// used by a 60-element ApplicationSet. Go's error quotes the text at each
/// level of the recursion; each message was ~16 MB and the run aborted at
/// 1.5 GiB. Now each message is cut to a bounded length, saying how much
/// was left out, and the run ends under 1 GiB with every app GL000.
#[test]
fn a_recursive_tpl_of_a_large_value_gives_bounded_error_text() {
    let filler = "A".repeat(200 << 10);
    let files = vec![
        file(
            "apps/fleet.yaml",
            fleet_of_chart(60, "chart", "{{ .name }}", true, ""),
        ),
        file("chart/Chart.yaml", CHART),
        file(
            "chart/values.yaml",
            format!("x: \"{{{{ tpl .Values.x . }}}}{filler}\"\n"),
        ),
        file("chart/templates/cm.yaml", "{{ tpl .Values.x . }}\n"),
    ];
    let tmp = repo(&files, &files);
    let out = run_capped(
        tmp.path(),
        &[
            "check",
            "main",
            "--format",
            "json",
            "--helm-renderer",
            "native",
        ],
        GIB,
        120,
    );
    let report = json(&out);
    assert_eq!(
        unrendered_apps(&report).len(),
        60,
        "{}",
        &report.to_string()[..2000]
    );
    let messages = gl000_messages(&report);
    assert!(!messages.is_empty(), "no GL000 finding");
    let longest = messages.iter().map(String::len).max().unwrap_or(0);
    assert!(longest <= 16 << 10, "a message of {longest} bytes");
    assert!(
        messages.iter().all(|m| m.contains("bytes more)")),
        "{:?}",
        &messages[0][..500.min(messages[0].len())]
    );
    assert!(
        out.stdout.len() < 4 << 20,
        "{} bytes of JSON",
        out.stdout.len()
    );
}

/// A chart and an ApplicationSet whose templates match a pattern of 3,000
/// capture groups over 3,000 characters (the attacked shape ran past 20 s
/// at 1.4 GiB): refused as beyond gitops-lint's regex bounds, GL000, in a
/// few seconds under 1 GiB. Ordinary patterns still match as Go's do.
#[test]
fn regular_expressions_with_thousands_of_groups_are_bounded() {
    let hostile = r#"{{ regexFind (repeat 3000 "(a)") (repeat 3000 "a") }}{{ regexMatch (repeat 3000 "(a)") (repeat 3000 "a") }}"#;
    let files = vec![
        // In a chart.
        file("argocd/chart.yaml", app_yaml("chart", "chart", "")),
        file("chart/Chart.yaml", CHART),
        file(
            "chart/templates/cm.yaml",
            format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\ndata:\n  x: '{hostile}'\n"),
        ),
        // In an ApplicationSet's template.
        file(
            "apps/fleet.yaml",
            fleet_of_chart(1, "plain", &format!("{{{{ .name }}}}{hostile}"), true, ""),
        ),
        file("plain/cm.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\n"),
        // Ordinary groups, both places.
        file("argocd/fine.yaml", app_yaml("fine", "fine", "")),
        file("fine/Chart.yaml", CHART),
        file(
            "fine/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {{ regexReplaceAll \"(a)(b)\" \"ab\" \"${2}${1}\" }}\n",
        ),
    ];
    let tmp = repo(&files, &files);
    let started = std::time::Instant::now();
    let out = run_capped(
        tmp.path(),
        &[
            "check",
            "main",
            "--format",
            "json",
            "--helm-renderer",
            "native",
        ],
        GIB,
        60,
    );
    let report = json(&out);
    // The chart's app, and the ApplicationSet itself (what it generates is
    // unknown), each naming the bound.
    assert_eq!(gl000_apps(&report), ["chart"], "{report:#}");
    let messages = gl000_messages(&report);
    assert_eq!(messages.len(), 2, "{messages:#?}");
    for m in &messages {
        assert!(m.contains("capture groups"), "{m}");
    }
    assert!(
        messages
            .iter()
            .any(|m| m.contains("ApplicationSet `fleet`")),
        "{messages:#?}"
    );
    assert!(
        apps_with_status(&report, "rendered").contains(&"fine".to_string()),
        "{report:#}"
    );
    assert!(started.elapsed() < std::time::Duration::from_secs(30));
}

/// fasttemplate (no `goTemplate`): a 1 MiB parameter named by 500 tags in
/// one string, 500 MiB, within the ApplicationSet's 512 MiB budget; its
/// buffer doubled towards 1 GiB (held or aborted, by luck). One string is
/// now bounded as one Go template execution's output is: GL000, under
/// 1 GiB, quickly.
#[test]
fn a_fasttemplate_string_of_hundreds_of_megabytes_is_refused() {
    let big = "x".repeat(1 << 20);
    let tags = "{{big}}".repeat(500);
    let files = vec![
        file(
            "apps/fleet.yaml",
            fleet_of_chart(1, "plain", "{{name}}", false, &format!(", big: {big}"))
                .into_iter()
                .chain(
                    format!("      info:\n      - name: x\n        value: '{tags}'\n").into_bytes(),
                )
                .collect::<Vec<u8>>(),
        ),
        file(
            "plain/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: p\n",
        ),
    ];
    let tmp = repo(&files, &files);
    let out = run_capped(tmp.path(), &["check", "main", "--format", "json"], GIB, 60);
    let report = json(&out);
    let messages = gl000_messages(&report);
    assert!(
        messages.iter().any(|m| m.contains("ApplicationSet `fleet`")
            && m.contains("beyond what gitops-lint evaluates")),
        "{messages:#?}"
    );
    assert!(
        apps_with_status(&report, "rendered").is_empty(),
        "{report:#}"
    );
}

/// A one-app repository whose PVC the change deletes.
fn pvc_deletion_repo() -> tempfile::TempDir {
    let app = file("argocd/a.yaml", app_yaml("a", "a", ""));
    let cm = file("a/cm.yaml", CM);
    repo(
        &[app.clone(), cm.clone(), file("a/pvc.yaml", pvc("data"))],
        &[app, cm],
    )
}

/// `--cache-dir` spelled to pass a check on its text but land in the
/// repository: through a directory that does not exist and `..` (the
/// attacked shape), the same into `.git`, and through a symlink outside
/// the repository after a missing directory (variants). Each is refused
/// with exit 2 and one line, and nothing is written in the repository.
#[test]
fn the_cache_directory_cannot_be_steered_into_the_repository() {
    let tmp = pvc_deletion_repo();
    let root = tmp.path().canonicalize().expect("canonical");
    let repo_name = root
        .file_name()
        .expect("named")
        .to_string_lossy()
        .into_owned();
    let outside = tempfile::tempdir().expect("temp dir");
    let link = outside.path().join("link");
    std::os::unix::fs::symlink(root.join(".git"), &link).expect("symlink");
    let before = snapshot(&root);
    let up = root
        .parent()
        .expect("parent")
        .join("gitops-lint-no-such-dir/..");
    for dir in [
        up.join(&repo_name).join("cache"),
        up.join(&repo_name).join(".git/cache"),
        outside.path().join("no-such-dir/../link/cache"),
    ] {
        let dir = dir.to_string_lossy().into_owned();
        let out = run_capped(
            &root,
            &[
                "diff",
                "main..change",
                "--format",
                "json",
                "--cache-dir",
                &dir,
            ],
            GIB,
            60,
        );
        assert_eq!(
            out.status.code(),
            Some(2),
            "{dir}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{dir}: {lines:?}");
        assert!(lines[0].contains("is inside the repository"), "{lines:?}");
        assert_eq!(snapshot(&root), before, "{dir}");
    }
}

/// The store of facts (`facts-*.bin` in the cache directory) replaced by a
/// FIFO: the run used to wait on it for ever. It is now read as an empty
/// store, and the run gives the same answer as with a real store.
#[test]
fn a_fifo_at_the_facts_store_does_not_block_the_run() {
    let tmp = pvc_deletion_repo();
    let cache = tempfile::tempdir().expect("temp dir");
    let dir = cache.path().to_string_lossy().into_owned();
    let args = [
        "diff",
        "main..change",
        "--format",
        "json",
        "--cache-dir",
        &dir,
    ];
    let first = run_capped(tmp.path(), &args, GIB, 60);
    let stores: Vec<PathBuf> = std::fs::read_dir(cache.path())
        .expect("cache written")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".bin"))
        .collect();
    assert_eq!(stores.len(), 1, "{stores:?}");
    std::fs::remove_file(&stores[0]).expect("removed");
    let made = std::process::Command::new("mkfifo")
        .arg(&stores[0])
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let second = run_capped(tmp.path(), &args, GIB, 60);
    assert_eq!(second.status.code(), first.status.code());
    assert_eq!(json(&second)["findings"], json(&first)["findings"]);
}

/// `--format FORMAT=FILE` where FILE is a symlink (a pull request commits
/// the SARIF's file name as a link to a file the runner can write): the
/// link is not followed and its target is unchanged; the run exits 4
/// naming the file. A FIFO there is refused too, not waited on.
#[test]
fn outputs_are_never_written_through_a_symlink_or_into_a_fifo() {
    let tmp = pvc_deletion_repo();
    let outside = tempfile::tempdir().expect("temp dir");
    let victim = outside.path().join("victim");
    std::fs::write(&victim, "precious\n").expect("write");
    let link = tmp.path().join("gitops-lint.sarif");
    std::os::unix::fs::symlink(&victim, &link).expect("symlink");
    let fifo = outside.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    for (target, why) in [(&link, "is a symlink"), (&fifo, "is not a regular file")] {
        let spec = format!("sarif={}", target.display());
        let out = run_capped(
            tmp.path(),
            &["diff", "main..change", "--format", &spec],
            GIB,
            60,
        );
        assert_eq!(out.status.code(), Some(4));
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{lines:?}");
        assert!(lines[0].contains(why), "{lines:?}");
    }
    assert_eq!(
        std::fs::read_to_string(&victim).expect("read"),
        "precious\n"
    );
    // A regular file is still written.
    let plain = outside.path().join("out.sarif");
    let spec = format!("sarif={}", plain.display());
    let out = run_capped(
        tmp.path(),
        &["diff", "main..change", "--format", &spec],
        GIB,
        60,
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read_to_string(&plain)
        .expect("written")
        .contains("GL001"));
}

/// Whether `line`, as a GitHub runner reads a log line, is a command.
fn is_runner_command(line: &str) -> bool {
    line.trim_start().starts_with("::") || line.contains("##[")
}

/// A run that exits 2 quotes the pull request's repoURLs on stderr: one
/// with a line break followed by `::warning`, `##[add-mask]` and a
/// right-to-left override. stderr stays one line, with no workflow command
/// and the override escaped.
#[test]
fn an_error_quoting_repository_text_cannot_command_the_runner() {
    let app = |url: &str| {
        String::from_utf8(app_yaml("a", "a", ""))
            .expect("utf-8")
            .replace(
                "repoURL: https://github.com/acme/gitops.git",
                &format!("repoURL: \"{url}\""),
            )
    };
    let evil = r"https://evil.example/x.git\n::warning title=pwned::owned ##[add-mask]secret \u202Egnp.exe";
    let files = vec![file("argocd/a.yaml", app(evil)), file("a/cm.yaml", CM)];
    let tmp = repo(&files, &files);
    let out = run_capped(tmp.path(), &["diff", "main..change"], GIB, 60);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("evil.example"), "{stderr}");
    assert!(!stderr.lines().any(is_runner_command), "{stderr}");
    assert!(!stderr.contains('\u{202e}'), "{stderr}");
}

/// Repository text in the machine formats: a directory `file:` at the
/// root and a file name holding `##[add-mask]` and a right-to-left
/// override. JSON and SARIF printed to a log carry no `##[` and no bidi
/// control, yet decode to the same path; every SARIF `uri` is relative
/// to the repository (no scheme, not absolute, no `..`); human, GitHub and
/// Markdown output escape the override.
#[test]
fn machine_formats_carry_no_runner_commands_and_relative_uris() {
    let name = "file:/etc/##[add-mask]\u{202e}lmay.yaml";
    let app = file("argocd/a.yaml", app_yaml("a", "\"file:/etc\"", ""));
    let base = vec![app.clone(), file(name, pvc("data"))];
    let head = vec![app, file(name, pvc("data2"))];
    let tmp = repo(&base, &head);
    let outside = tempfile::tempdir().expect("temp dir");
    let o = |f: &str| outside.path().join(f).to_string_lossy().into_owned();
    let (j, s, m, h) = (o("r.json"), o("r.sarif"), o("r.md"), o("r.txt"));
    let out = run_capped(
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
        GIB,
        60,
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let read = |p: &str| std::fs::read_to_string(p).expect("written");
    for (what, text) in [("json", read(&j)), ("sarif", read(&s))] {
        assert!(!text.contains("##["), "{what}: {text}");
        assert!(!text.contains('\u{202e}'), "{what}");
        // The escapes are JSON's own: the decoded values are unchanged.
        let value: Value = serde_json::from_str(&text).expect("valid JSON");
        let decoded = value.to_string();
        assert!(
            decoded.contains("##[add-mask]\u{202e}") || what == "sarif",
            "{what}: the value changed"
        );
        assert!(decoded.contains("add-mask"), "{what}");
    }
    let sarif: Value = serde_json::from_str(&read(&s)).expect("sarif");
    let mut uris = Vec::new();
    collect_uris(&sarif, &mut uris);
    assert!(!uris.is_empty());
    for u in &uris {
        let scheme = u
            .split_once(':')
            .is_some_and(|(head, _)| !head.contains('/'));
        assert!(!scheme && !u.starts_with('/'), "{u}");
        assert!(!u.split('/').any(|seg| seg == ".." || seg == "."), "{u}");
    }
    assert!(
        uris.iter().any(|u| u.starts_with("file%3A/etc/")),
        "{uris:?}"
    );
    let github = String::from_utf8_lossy(&out.stdout).into_owned();
    for (what, text) in [
        ("human", read(&h)),
        ("github", github),
        ("markdown", read(&m)),
    ] {
        assert!(!text.contains('\u{202e}'), "{what}: {text}");
        assert!(!text.contains("##["), "{what}: {text}");
        // GitHub output is workflow commands: gitops-lint's own, one a line.
        let own = |l: &str| {
            ["::error ", "::warning ", "::notice "]
                .iter()
                .any(|c| l.starts_with(c))
        };
        assert!(
            text.lines()
                .all(|l| !is_runner_command(l) || (what == "github" && own(l))),
            "{what}: {text}"
        );
    }
}

fn collect_uris(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("uri", Value::String(u)) => out.push(u.clone()),
                    _ => collect_uris(x, out),
                }
            }
        }
        Value::Array(a) => a.iter().for_each(|x| collect_uris(x, out)),
        _ => {}
    }
}

/// 800 trailer-acknowledged PVC deletions with long names in one app, and
/// one unacknowledged PVC deletion in another: the Markdown report used
/// to spend its budget on the acknowledged app's table and show "0 of …
/// finding(s)" on a red check. The budget goes first to what fails the
/// run, and the header names it.
#[test]
fn the_markdown_budget_goes_first_to_what_fails_the_run() {
    let long = |i: usize| format!("bulk-{i:04}-{}", "x".repeat(200));
    let bulk: Vec<u8> = (0..800)
        .flat_map(|i| {
            let mut doc = b"---\n".to_vec();
            doc.extend(pvc(&long(i)));
            doc
        })
        .collect();
    let apps = vec![
        file("argocd/bulk.yaml", app_yaml("bulk", "bulk", "")),
        file("argocd/db.yaml", app_yaml("db", "db", "")),
        file("bulk/cm.yaml", CM),
        file("db/cm.yaml", CM),
    ];
    let mut base = apps.clone();
    base.push(file("bulk/pvcs.yaml", bulk));
    base.push(file("db/ledger.yaml", pvc("ledger")));
    let trailers: String = (0..800)
        .map(|i| {
            format!(
                "Gitops-Lint-Allow: PersistentVolumeClaim/bulk/{} retired\n",
                long(i)
            )
        })
        .collect();
    let tmp = repo_with_message(&base, &apps, &format!("Retire volumes\n\n{trailers}"));
    let outside = tempfile::tempdir().expect("temp dir");
    let md = outside.path().join("r.md");
    let spec = format!("markdown={}", md.display());
    let out = run_capped(
        tmp.path(),
        &[
            "diff",
            "main..change",
            "--format",
            &spec,
            "--format",
            "json",
        ],
        GIB,
        120,
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report = json(&out);
    // The PVC, and the mass prune of the acknowledged ones (GL013).
    assert_eq!(report["summary"]["error"], 2, "{}", report["summary"]);
    let md = std::fs::read_to_string(&md).expect("written");
    assert!(md.len() <= 65_000, "{}", md.len());
    let head = &md[..md.find("###").unwrap_or(md.len())];
    assert!(head.contains("**Fails the run** (2)"), "{head}");
    assert!(head.contains("PersistentVolumeClaim db/ledger"), "{head}");
    assert!(
        md.split("<details>")
            .any(|d| d.contains("(error)") && d.contains("db/ledger")),
        "the failing finding is not shown: {}",
        &md[..3000.min(md.len())]
    );
    assert!(md.contains("too large for one comment"));
}

/// The loose object file of `rev:path` in the repository at `dir`.
fn loose_object(dir: &Path, spec: &str) -> PathBuf {
    let out = std::process::Command::new("git")
        .current_dir(dir)
        .args(["rev-parse", spec])
        .output()
        .expect("git runs");
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    dir.join(".git/objects").join(&id[..2]).join(&id[2..])
}

/// A clone whose head lacks one object and holds another that does not
/// inflate (the attacked shape: both in one revision). Argo CD could not
/// read that revision either: the run stops with exit 4 and one line that
/// says the object database is damaged and what to do, in `diff` and in
/// `check`, instead of a render failure per app.
#[test]
fn missing_and_corrupt_objects_stop_the_run_with_one_line() {
    let app = file("argocd/a.yaml", app_yaml("a", "a", ""));
    let base = vec![app.clone(), file("a/cm.yaml", CM)];
    let mut head = base.clone();
    head.push(file("a/one.yaml", pvc("one")));
    head.push(file("a/two.yaml", pvc("two")));
    let tmp = repo(&base, &head);
    let missing = loose_object(tmp.path(), "change:a/one.yaml");
    let corrupt = loose_object(tmp.path(), "change:a/two.yaml");
    std::fs::remove_file(&missing).expect("removed");
    let mut perms = std::fs::metadata(&corrupt).expect("exists").permissions();
    #[allow(clippy::permissions_set_readonly_false)]
    perms.set_readonly(false);
    std::fs::set_permissions(&corrupt, perms).expect("writable");
    std::fs::write(&corrupt, b"not zlib at all").expect("written");
    for args in [
        &["diff", "main..change", "--format", "json"][..],
        &["check", "change", "--format", "json"],
    ] {
        let out = run_capped(tmp.path(), args, GIB, 60);
        assert_eq!(
            out.status.code(),
            Some(4),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        assert!(out.stdout.is_empty(), "{args:?}");
        let lines = stderr_lines(&out);
        assert_eq!(lines.len(), 1, "{args:?}: {lines:?}");
        assert!(lines[0].contains("object database is damaged"), "{lines:?}");
        assert!(lines[0].contains("git fsck"), "{lines:?}");
    }
}

/// Through `pre-commit` (HEAD against the staged index): a staged symlink
/// to `/etc/passwd`, one climbing out with `..`, a directory app whose
/// path became a symlink to `/etc`, and a chain through a second link,
/// while a PVC is deleted. No content of `/etc/passwd` is printed; each
/// app reading a link is GL000; nothing is listed as pruned.
#[test]
fn symlinks_out_of_the_repository_through_pre_commit_are_never_followed() {
    let b_app = String::from_utf8(app_yaml("b", "b", ""))
        .expect("utf-8")
        .into_bytes();
    let base = vec![
        file("argocd/a.yaml", app_yaml("a", "a", "")),
        file("argocd/b.yaml", b_app),
        file("a/cm.yaml", CM),
        file("a/data-pvc.yaml", pvc("data")),
        file("b/pvc.yaml", pvc("b")),
    ];
    let tmp = repo(&base, &base);
    let dir = tmp.path();
    std::fs::remove_file(dir.join("a/data-pvc.yaml")).expect("removed");
    std::fs::remove_dir_all(dir.join("b")).expect("removed");
    std::os::unix::fs::symlink("/etc/passwd", dir.join("a/passwd.yaml")).expect("symlink");
    std::os::unix::fs::symlink("../../../../../../etc/passwd", dir.join("a/up.yaml"))
        .expect("symlink");
    std::os::unix::fs::symlink("/etc", dir.join("b")).expect("symlink");
    std::os::unix::fs::symlink("/etc/passwd", dir.join("link")).expect("symlink");
    std::os::unix::fs::symlink("../link", dir.join("a/chain.yaml")).expect("symlink");
    git(dir, &["add", "-A"]);
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let secret = passwd.lines().next().unwrap_or("root:x:0:0").to_string();
    for format in ["json", "human", "github"] {
        let out = run_capped(dir, &["pre-commit", "--format", format], GIB, 60);
        let all = [out.stdout.as_slice(), out.stderr.as_slice()].concat();
        assert!(
            !String::from_utf8_lossy(&all).contains(&secret),
            "{format} printed /etc/passwd"
        );
        if format == "json" {
            let report = json(&out);
            let mut gl000 = unrendered_apps(&report);
            gl000.sort();
            assert_eq!(gl000, ["a", "b"], "{report:#}");
            assert!(!gl000_messages(&report).is_empty(), "{report:#}");
            assert!(pruned_apps(&report).is_empty(), "{report:#}");
        }
    }
}

/// A submodule removed by the change from a `recurse: true` directory app:
/// at base Argo CD checked it out and rendered its manifests
/// (`reposerver/repository/repository.go` `checkoutRevision` runs
/// `nativeGitClient.Submodule`), so the sync after the change prunes them,
/// and which they are is unknown: the app is GL000 at base, nothing is
/// listed as pruned, and it is not reported as rendered and smaller.
#[test]
fn a_submodule_removed_from_a_recursive_app_makes_its_prunes_unknown() {
    let recurse = "    directory:\n      recurse: true\n";
    let files = vec![
        file("apps/web.yaml", app_yaml("web", "apps/web", recurse)),
        file("apps/web/pvc.yaml", pvc("data")),
    ];
    let tmp = tempfile::tempdir().expect("tempdir");
    commit_with_raw_entries_on_both(
        tmp.path(),
        (&files, &[("apps/web", b"vendor", 0o160_000, None)]),
        (&files, &[]),
    );
    let out = run_capped(
        tmp.path(),
        &["diff", "main..change", "--format", "json"],
        GIB,
        60,
    );
    let report = json(&out);
    assert_eq!(gl000_apps(&report), ["web"], "{report:#}");
    assert!(
        gl000_messages(&report)
            .iter()
            .any(|m| m.contains("at base") && m.contains("submodule")),
        "{report:#}"
    );
    assert!(pruned_apps(&report).is_empty(), "{report:#}");
}

/// Twenty-four JSON patch `copy`s (or replacements) each copying a
/// ConfigMap's `data` into a new key of itself double the document at
/// every step. The build refuses the doubling that would pass the
/// per-resource limit before making it, so the largest document held is
/// under the limit, not twice it: the run ends with a render failure in
/// 256 MiB of address space beyond the binary's own.
#[test]
fn a_chain_of_copies_doubling_a_document_stops_before_the_last_doubling() {
    let cm = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm\ndata:\n  k: v\n";
    let copies: String = (0..24)
        .map(|i| format!("- op: copy\n  from: /data\n  path: /data/m{i}\n"))
        .collect();
    let replacements: String = (0..24)
        .map(|i| {
            format!(
                "- source: {{kind: ConfigMap, name: cm, fieldPath: data}}\n  targets:\n  - select: {{kind: ConfigMap, name: cm}}\n    fieldPaths: [data.m{i}]\n    options: {{create: true}}\n"
            )
        })
        .collect();
    let files = vec![
        file("argocd/p.yaml", app_yaml("p", "p", "")),
        file("p/cm.yaml", cm),
        file(
            "p/kustomization.yaml",
            "resources: [cm.yaml]\npatches:\n- path: copies.yaml\n  target: {kind: ConfigMap}\n",
        ),
        file("p/copies.yaml", copies),
        file("argocd/r.yaml", app_yaml("r", "r", "")),
        file("r/cm.yaml", cm),
        file(
            "r/kustomization.yaml",
            "resources: [cm.yaml]\nreplacements:\n- path: repl.yaml\n",
        ),
        file("r/repl.yaml", replacements),
    ];
    let tmp = repo(&files, &files);
    let out = run_capped(
        tmp.path(),
        &["check", "main", "--format", "json"],
        GIB + (256 << 20),
        120,
    );
    let report = json(&out);
    let messages = gl000_messages(&report);
    for what in ["patch", "a replacement"] {
        assert!(
            messages
                .iter()
                .any(|m| m.contains(&format!("{what} ")) && m.contains("grows a resource past")),
            "{what}: {messages:#?}"
        );
    }
}
