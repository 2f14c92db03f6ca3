//! The built binary, end to end: what a user sees and the exit status a CI
//! job acts on.

use assert_cmd::Command;
use gitops_lint::source::write_commit;

fn bin() -> Command {
    let mut cmd = Command::cargo_bin("gitops-lint").expect("the gitops-lint binary is built");
    cmd.env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"));
    cmd.env("NO_COLOR", "1").env_remove("GITOPS_LINT_BLESS");
    cmd
}

fn stderr_lines(out: &std::process::Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(str::to_string)
        .collect()
}

/// The demo repository (branch `main` and the risky branch `change`) and a
/// `diff main..change` of it with `args`, as a real run would see it.
fn diff_demo(args: &[&str]) -> std::process::Output {
    let repo = gitops_lint::demo::build().expect("the demo repository is built");
    bin()
        .args(["diff", "main..change", "--repo"])
        .arg(repo.path())
        .args(args)
        .output()
        .expect("runs")
}

/// The demo change deletes a PVC manifest and drops a child Application
/// with the resources finalizer: both must be named, and a real diff of it
/// must fail.
#[test]
fn the_demo_change_reports_the_deleted_pvc_and_the_cascading_app() {
    let out = diff_demo(&["--color", "never"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "stdout:\n{text}");
    assert!(
        text.contains("PersistentVolumeClaim payments/ledger"),
        "the deleted PVC is named:\n{text}"
    );
    assert!(
        text.contains("would delete Application `reports` with the resources finalizer"),
        "the cascading app is named:\n{text}"
    );
    assert!(
        text.contains("StatefulSet analytics/warehouse"),
        "what the cascade takes is listed:\n{text}"
    );
    assert!(
        !text.contains("PersistentVolumeClaim payments/cache"),
        "the PVC protected by Prune=false is not reported:\n{text}"
    );
}

/// `gitops-lint demo` shows the same findings, exits 0 so that the README's
/// `demo && cargo test` goes on, and says what a real diff exits with.
#[test]
fn the_demo_exits_0_and_says_what_a_real_diff_exits_with() {
    let out = bin()
        .args(["demo", "--color", "never"])
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stdout:\n{text}");
    assert!(
        text.contains("PersistentVolumeClaim payments/ledger"),
        "{text}"
    );
    assert!(text.contains("3 error(s)"), "{text}");
    let lines = stderr_lines(&out);
    assert!(
        lines
            .iter()
            .any(|l| l.contains("a real `gitops-lint diff` of this change exits 1")),
        "{lines:?}"
    );
}

#[test]
fn demo_json_has_the_contract_shape() {
    let out = bin()
        .args(["demo", "--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
    assert_eq!(v["version"], 1);
    assert_eq!(v["summary"]["error"], 3);
    let reasons: Vec<&str> = v["prunes"]
        .as_array()
        .expect("prunes")
        .iter()
        .filter_map(|p| p["reason"].as_str())
        .collect();
    assert!(
        reasons.contains(&"removed") && reasons.contains(&"app-deleted"),
        "{reasons:?}"
    );
}

#[test]
fn fail_on_never_exits_zero_even_with_errors() {
    let out = diff_demo(&["--format", "json"]);
    assert_eq!(out.status.code(), Some(1), "the change has errors");
    let out = diff_demo(&["--fail-on", "never", "--format", "json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value =
        serde_json::from_slice(&out.stdout).expect("stdout is one JSON object");
    assert_eq!(v["summary"]["error"], 3, "the errors are still reported");
}

#[test]
fn a_directory_that_is_not_a_repository_exits_2_with_one_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = bin()
        .args(["diff", "main..HEAD", "--repo"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "one line on stderr: {lines:?}");
    assert!(
        lines[0].contains("is not inside a git repository"),
        "{lines:?}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn an_unknown_revision_exits_2_with_one_line() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = vec![(
        "apps/cm.yaml".to_string(),
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n".to_vec(),
    )];
    write_commit(dir.path(), "main", None, &files, "base").expect("commit");
    let out = bin()
        .args(["diff", "no-such-branch..main", "--repo"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "one line on stderr: {lines:?}");
    assert!(
        lines[0].contains("unknown revision `no-such-branch`"),
        "{lines:?}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_configuration_under_another_spelling_is_refused_not_ignored() {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = vec![
        (
            "apps/cm.yaml".to_string(),
            b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n".to_vec(),
        ),
        (
            ".gitops-lint.yml".to_string(),
            b"rules: {ignore: [GL016]}\n".to_vec(),
        ),
    ];
    write_commit(dir.path(), "main", None, &files, "base").expect("commit");
    let out = bin()
        .args(["diff", "main..main", "--repo"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let lines = stderr_lines(&out);
    assert_eq!(lines.len(), 1, "one line on stderr: {lines:?}");
    assert!(
        lines[0].contains(".gitops-lint.yml is not read") && lines[0].contains("rename the file"),
        "{lines:?}"
    );
}

fn app_tracking(branch: &str) -> Vec<u8> {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: payments
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://git.example.com/platform/gitops.git
    targetRevision: {branch}
    path: payments
  destination:
    server: https://kubernetes.default.svc
    namespace: payments
  syncPolicy:
    automated:
      prune: true
"
    )
    .into_bytes()
}

/// A repository whose Applications track `develop`, checked out elsewhere:
/// a change proposed to `develop` is what those apps will sync.
#[test]
fn apps_tracking_the_target_branch_render_the_change() {
    let dir = tempfile::tempdir().expect("temp dir");
    let pvc = b"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: ledger\nspec:\n  resources:\n    requests:\n      storage: 1Gi\n".to_vec();
    let cm = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n".to_vec();
    let base = vec![
        ("argocd/payments.yaml".to_string(), app_tracking("develop")),
        ("payments/settings.yaml".to_string(), cm.clone()),
        ("payments/ledger-pvc.yaml".to_string(), pvc),
    ];
    let head = vec![
        ("argocd/payments.yaml".to_string(), app_tracking("develop")),
        ("payments/settings.yaml".to_string(), cm),
    ];
    write_commit(dir.path(), "release", None, &base, "release").expect("commit");
    write_commit(dir.path(), "develop", Some("release"), &base, "develop").expect("commit");
    write_commit(dir.path(), "feature", Some("develop"), &head, "feature").expect("commit");
    let out = bin()
        .args(["diff", "develop..feature", "--format", "json", "--repo"])
        .arg(dir.path())
        .output()
        .expect("runs");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON report");
    assert_eq!(out.status.code(), Some(1), "{v:#}");
    assert_eq!(v["findings"][0]["code"], "GL001", "{v:#}");
    assert_eq!(v["findings"][0]["resource"]["name"], "ledger", "{v:#}");
}

/// `rules --format json` lists every rule with what a tool needs to map
/// them: code, name, category, default severity and mode.
#[test]
fn rules_as_json_list_every_rule_with_its_category_and_severity() {
    let out = bin()
        .args(["rules", "--format", "json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rules = v.as_array().expect("a list");
    assert_eq!(rules.len(), gitops_lint::rules::ALL.len());
    let gl001 = rules.iter().find(|r| r["code"] == "GL001").expect("GL001");
    assert_eq!(gl001["name"], "stateful-prune");
    assert_eq!(gl001["category"], "prune");
    assert_eq!(gl001["defaultSeverity"], "error");
    assert_eq!(gl001["mode"], "diff");
    assert!(gl001["summary"]
        .as_str()
        .is_some_and(|s| s.starts_with("Reports")));
}

/// `rules` shows severity as findings carry it: GL005 and GL013 default to
/// warning but report errors (a misspelled `Prune=false`, an automated mass
/// prune), and the listing says so; JSON has the same note and each doc's URL.
#[test]
fn rules_show_when_severity_departs_from_the_default() {
    let out = bin().arg("rules").output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).expect("utf-8");
    let line = |code: &str| {
        text.lines()
            .find(|l| l.starts_with(code))
            .unwrap_or_default()
            .to_string()
    };
    assert!(
        line("GL005").contains("warning (error for a misspelled `Prune=false`"),
        "{text}"
    );
    assert!(
        line("GL013").contains("warning (error when an automated sync prunes)"),
        "{text}"
    );
    assert!(line("GL004").trim_end().ends_with("warning"), "{text}");
    let out = bin()
        .args(["rules", "--format", "json"])
        .output()
        .expect("runs");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let rule = |code: &str| {
        v.as_array()
            .and_then(|a| a.iter().find(|r| r["code"] == code))
            .cloned()
            .expect("listed")
    };
    assert!(rule("GL005")["severityNote"]
        .as_str()
        .is_some_and(|s| s.starts_with("error for")));
    assert!(rule("GL004")["severityNote"].is_null());
    assert!(rule("GL001")["docUrl"]
        .as_str()
        .is_some_and(|s| s.ends_with("/blob/main/rules/GL001-stateful-prune.md")));
}

/// `explain` shows how to set a finding aside: the annotation and trailer
/// for a deletion, the ignore annotation for a finding about one object.
#[test]
fn explain_shows_the_acknowledgement_syntax() {
    let out = bin().args(["explain", "GL001"]).output().expect("runs");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(text.contains("gitops-lint.io/allow-prune: \""), "{text}");
    assert!(
        text.contains("Gitops-Lint-Allow: PersistentVolumeClaim/"),
        "{text}"
    );
    let out = bin()
        .args(["explain", "unknown-sync-option"])
        .output()
        .expect("runs");
    let text = String::from_utf8(out.stdout).expect("utf-8");
    assert!(text.contains("gitops-lint.io/ignore: \"GL005"), "{text}");
}

/// Typos get a suggestion: a rule name to `explain`, a subcommand (clap's
/// tip kept in the one-line usage error).
#[test]
fn typos_are_answered_with_the_likely_intent() {
    let out = bin().args(["explain", "GL0O1"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_lines(&out),
        vec!["gitops-lint: error: unknown rule `GL0O1` (did you mean `GL001`, `GL011`, `GL021`? run `gitops-lint rules` for the list)"]
    );
    // Part of a rule's name finds the rules that have it.
    let out = bin().args(["explain", "stateful"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_lines(&out),
        vec!["gitops-lint: error: unknown rule `stateful` (did you mean `stateful-hook`, `stateful-prune`, `replace-on-stateful`? run `gitops-lint rules` for the list)"]
    );
    let out = bin().arg("chek").output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_lines(&out);
    assert_eq!(err.len(), 1, "{err:?}");
    assert!(
        err[0].contains("a similar subcommand exists: 'check'"),
        "{err:?}"
    );
}

/// A repository whose branches are `master` and the remote-tracking
/// `origin/main` (a clone whose default branch was renamed upstream).
fn repo_with_master() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("temp dir");
    let files = vec![("README.md".to_string(), b"x\n".to_vec())];
    let head = write_commit(dir.path(), "master", None, &files, "first").expect("commit");
    let made = std::process::Command::new("git")
        .args(["update-ref", "refs/remotes/origin/main", &head])
        .current_dir(dir.path())
        .status()
        .expect("git runs");
    assert!(made.success());
    dir
}

/// A revision that does not exist is a request to change (exit 2), and
/// the answer names the branches that were probably meant: `master` for
/// `main` and the remote-tracking `origin/main`; a typo gets the close
/// spelling.
#[test]
fn an_unknown_revision_names_the_branches_meant() {
    let repo = repo_with_master();
    let out = bin()
        .args(["diff", "main..HEAD", "--repo"])
        .arg(repo.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_lines(&out),
        vec![
            "gitops-lint: error: unknown revision `main` (did you mean `master` or `origin/main`?)"
        ]
    );
    let out = bin()
        .args(["check", "mastr", "--repo"])
        .arg(repo.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_lines(&out),
        vec!["gitops-lint: error: unknown revision `mastr` (did you mean `master`?)"]
    );
    // Nothing alike: no guess.
    let out = bin()
        .args(["diff", "release-2024..HEAD", "--repo"])
        .arg(repo.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_lines(&out),
        vec!["gitops-lint: error: unknown revision `release-2024`"]
    );
}

/// `--repo` naming nothing says so, rather than that it is no repository;
/// a directory outside any repository is told apart.
#[test]
fn a_repository_path_that_does_not_exist_is_named() {
    let out = bin()
        .args(["diff", "--repo", "/does/not/exist"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        stderr_lines(&out),
        vec!["gitops-lint: error: `/does/not/exist` does not exist (pass --repo the directory of a git repository)"]
    );
    let empty = tempfile::tempdir().expect("temp dir");
    let out = bin()
        .args(["check", "HEAD", "--repo"])
        .arg(empty.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_lines(&out);
    assert_eq!(err.len(), 1, "{err:?}");
    assert!(err[0].contains("is not inside a git repository"), "{err:?}");
}

/// A change that breaks `.gitops-lint.yaml` is judged by the base's
/// configuration and fails on a GL022 finding (exit 1), even with `-q`;
/// a run that reads the broken configuration itself is refused (exit 2).
#[test]
fn a_change_that_breaks_the_configuration_fails_its_own_diff() {
    let dir = tempfile::tempdir().expect("temp dir");
    let app = b"apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {name: web, namespace: argocd}
spec:
  source: {repoURL: https://github.com/acme/gitops.git, targetRevision: main, path: web}
  destination: {server: https://kubernetes.default.svc, namespace: web}
"
    .to_vec();
    let cm = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n".to_vec();
    let mut files = vec![
        ("argocd/web.yaml".to_string(), app),
        ("web/settings.yaml".to_string(), cm),
        (
            ".gitops-lint.yaml".to_string(),
            b"rules: {ignore: [GL016]}\n".to_vec(),
        ),
    ];
    write_commit(dir.path(), "main", None, &files, "base").expect("commit");
    files[2].1 = b"rules: [GL001\n".to_vec();
    write_commit(dir.path(), "change", Some("main"), &files, "break it").expect("commit");
    let out = bin()
        .args(["diff", "main..change", "-q", "--color", "never", "--repo"])
        .arg(dir.path())
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("GL022 invalid-configuration"), "{text}");
    assert!(
        text.contains("`.gitops-lint.yaml` does not load at head"),
        "{text}"
    );
    let out = bin()
        .args(["check", "change", "--repo"])
        .arg(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = stderr_lines(&out);
    assert_eq!(err.len(), 1, "{err:?}");
    assert!(
        err[0].starts_with("gitops-lint: error: .gitops-lint.yaml:2:"),
        "{err:?}"
    );
}

/// A `.gitops-lint.yaml` that does not load is refused as a usage error
/// is: exit 2, one line a problem, `FILE:LINE:COLUMN:`, the key path, what
/// is expected (the values the JSON schema lists), a likely intent, and
/// where the keys are documented.
#[test]
fn configuration_errors_read_like_usage_errors() {
    let schema: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema/config.schema.json"),
        )
        .expect("schema"),
    )
    .expect("JSON");
    let listed = |pointer: &str| -> String {
        let values: Vec<&str> = schema
            .pointer(pointer)
            .and_then(serde_json::Value::as_array)
            .expect("an enum")
            .iter()
            .filter_map(serde_json::Value::as_str) // null: the key left empty
            .collect();
        values.join(", ")
    };
    let helm = listed("/properties/helmRenderer/enum");
    let severities = listed("/properties/rules/properties/severity/additionalProperties/enum");
    assert_eq!(severities, "error, warning, info");
    let cases = [
        (
            "unknown key",
            "ignorePath: [vendor/**]\n",
            "gitops-lint: error: .gitops-lint.yaml:1:1: unknown key `ignorePath` (did you mean `ignorePaths`?) (see docs/configuration.md)".to_string(),
        ),
        (
            "wrong type",
            "# fleet settings\nstatefulKinds: Cluster\n",
            "gitops-lint: error: .gitops-lint.yaml:2:1: `statefulKinds` must be a list of strings (see docs/configuration.md)".to_string(),
        ),
        (
            "bad enum value",
            "helmRenderer: nativ\n",
            format!("gitops-lint: error: .gitops-lint.yaml:1:1: helmRenderer `nativ` is not one of {helm} (did you mean `native`?) (see docs/configuration.md)"),
        ),
        (
            "bad enum value in a flow mapping",
            "rules: {severity: {GL001: fatal}}\n",
            "gitops-lint: error: .gitops-lint.yaml:1:20: rules.severity.GL001: `fatal` is not error, warning or info (see docs/configuration.md)".to_string(),
        ),
    ];
    for (what, config, wanted) in cases {
        let dir = tempfile::tempdir().expect("temp dir");
        let files = vec![(".gitops-lint.yaml".to_string(), config.as_bytes().to_vec())];
        write_commit(dir.path(), "main", None, &files, "config").expect("commit");
        let out = bin()
            .args(["check", "main", "--repo"])
            .arg(dir.path())
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(2), "{what}");
        assert_eq!(stderr_lines(&out), [wanted], "{what}");
    }
}

/// An Application named `name` rendering the directory `name/`.
fn app_of(name: &str) -> (String, Vec<u8>) {
    (
        format!("argocd/{name}.yaml"),
        format!(
            "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata: {{name: {name}, namespace: argocd}}
spec:
  source: {{repoURL: https://github.com/acme/gitops.git, targetRevision: main, path: {name}}}
  destination: {{server: https://kubernetes.default.svc, namespace: {name}}}
"
        )
        .into_bytes(),
    )
}

/// A human diff lists the apps the change touches and counts the others:
/// one whose render did not change (a comment edited) and one not
/// rendered at all; `--verbose` lists every app, and JSON always does.
#[test]
fn a_diff_lists_the_apps_its_change_touches() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cm = |name: &str, extra: &str| {
        (
            format!("{name}/settings.yaml"),
            format!("{extra}apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: settings}}\ndata: {{app: {name}}}\n").into_bytes(),
        )
    };
    let mut files = vec![
        app_of("api"),
        app_of("db"),
        app_of("web"),
        cm("api", ""),
        cm("db", ""),
        cm("web", ""),
    ];
    write_commit(dir.path(), "main", None, &files, "base").expect("commit");
    files[3] = cm("api", "# owned by the api team\n");
    files[5].1 =
        b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\ndata: {app: web2}\n"
            .to_vec();
    write_commit(dir.path(), "change", Some("main"), &files, "change").expect("commit");
    let run = |extra: &[&str]| {
        let out = bin()
            .args(["diff", "main..change", "--color", "never", "--repo"])
            .arg(dir.path())
            .args(extra)
            .output()
            .expect("runs");
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let listed = |text: &str, app: &str| text.lines().any(|l| l.starts_with(&format!("  {app} ")));
    let text = run(&[]);
    assert!(text.contains("Apps (3):"), "{text}");
    assert!(listed(&text, "web"), "{text}");
    assert!(!listed(&text, "api") && !listed(&text, "db"), "{text}");
    assert!(
        text.contains("  and 1 app(s) the change does not touch (--verbose lists them)"),
        "{text}"
    );
    assert!(
        text.contains("  and 1 unchanged app(s): not rendered"),
        "{text}"
    );
    let text = run(&["--verbose"]);
    for app in ["api", "db", "web"] {
        assert!(listed(&text, app), "{app}: {text}");
    }
    assert!(!text.contains("does not touch"), "{text}");
    let json = run(&["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(v["apps"].as_array().map(Vec::len), Some(3), "{json}");
}

/// Human output wraps findings to the terminal it is written to (here a
/// pseudo-terminal of `script`, 60 columns by `COLUMNS`), and to a fixed
/// 100 columns anywhere else, whatever `COLUMNS` says.
#[test]
fn human_output_wraps_to_the_terminal() {
    let finding_lines = |text: &str| -> Vec<usize> {
        text.lines()
            .map(|l| l.trim_end_matches('\r'))
            .filter(|l| l.starts_with("  × ") || l.starts_with("  │ "))
            .map(|l| l.chars().count())
            .collect()
    };
    let bin_path = assert_cmd::cargo::cargo_bin("gitops-lint");
    let out = std::process::Command::new("script")
        .args(["-qec"])
        .arg(format!("{} demo --color never", bin_path.display()))
        .arg("/dev/null")
        .env("COLUMNS", "60")
        .env("NO_COLOR", "1")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .output()
        .expect("script (util-linux) runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let widths = finding_lines(&text);
    assert!(widths.len() > 2, "{text}");
    assert!(widths.iter().all(|w| *w <= 60), "{widths:?}\n{text}");
    let out = bin()
        .args(["demo", "--color", "never"])
        .env("COLUMNS", "60")
        .output()
        .expect("runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let widths = finding_lines(&text);
    assert!(widths.iter().any(|w| *w > 60), "{widths:?}\n{text}");
    assert!(widths.iter().all(|w| *w <= 100), "{widths:?}\n{text}");
}

/// Each subcommand takes only the flags that apply to it: `render` prints
/// YAML (no report options), `demo` builds its own repository (no
/// `--repo`), `charts pull` fetches (no `--offline`); such a flag is a
/// usage error, and `--help` does not list it.
#[test]
fn flags_are_taken_only_where_they_apply() {
    for (command, args, flag) in [
        (&["render"][..], &[".", "--format", "json"][..], "--format"),
        (
            &["render"][..],
            &[".", "--fail-on", "never"][..],
            "--fail-on",
        ),
        (&["demo"][..], &["--repo", "."][..], "--repo"),
        (&["charts", "pull"][..], &["--offline"][..], "--offline"),
        (
            &["charts", "pull"][..],
            &["--chart-cache", "."][..],
            "--chart-cache",
        ),
        (&["explain"][..], &["GL001", "--quiet"][..], "--quiet"),
    ] {
        let out = bin().args(command).args(args).output().expect("runs");
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = stderr_lines(&out);
        assert_eq!(err.len(), 1, "{args:?}: {err:?}");
        assert!(
            err[0].starts_with(&format!(
                "gitops-lint: error: unexpected argument '{flag}' found"
            )),
            "{args:?}: {err:?}"
        );
        let help = bin().args(command).arg("--help").output().expect("runs");
        let help = String::from_utf8_lossy(&help.stdout);
        assert!(!help.contains(&format!("{flag} ")), "{args:?}:\n{help}");
    }
    // What does apply stays.
    let out = bin().args(["render", "--help"]).output().expect("runs");
    let help = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--repo",
        "--offline",
        "--chart-cache",
        "--cache-dir",
        "--helm-binary",
    ] {
        assert!(help.contains(flag), "{flag}:\n{help}");
    }
}

/// `--format json=-` is standard output; `--quiet` drops the notes of the
/// human report (the JSON keeps them); `--verbose` lists on stderr what a
/// note summarises.
#[test]
fn quiet_verbose_and_dash_for_standard_output() {
    // Seven Applications declared in two files each: one note, and the list
    // only with --verbose.
    let dir = tempfile::tempdir().expect("temp dir");
    let cm = b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n".to_vec();
    let mut files = vec![("payments/settings.yaml".to_string(), cm)];
    for copy in ["a", "b"] {
        for n in 0..7 {
            files.push((
                format!("{copy}/app-{n}.yaml"),
                String::from_utf8(app_tracking("HEAD"))
                    .expect("utf-8")
                    .replace("name: payments\n", &format!("name: payments-{n}\n"))
                    .into_bytes(),
            ));
        }
    }
    write_commit(dir.path(), "main", None, &files, "base").expect("commit");
    write_commit(dir.path(), "change", Some("main"), &files, "same").expect("commit");
    let run = |extra: &[&str]| {
        bin()
            .args(["diff", "main..change", "--repo"])
            .arg(dir.path())
            .args(extra)
            .output()
            .expect("runs")
    };
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let notes: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("declared in more than one file"))
        .collect();
    assert_eq!(notes.len(), 1, "{text}");
    assert!(
        notes[0].contains("7 Application(s)")
            && notes[0].contains("and 2 more (`--verbose` lists them)"),
        "{text}"
    );
    assert!(!String::from_utf8_lossy(&out.stderr).contains("declared more than once"));
    let out = run(&["--verbose"]);
    let listed = stderr_lines(&out)
        .into_iter()
        .filter(|l| l.contains("is declared more than once"))
        .count();
    assert_eq!(listed, 7);

    let quiet = run(&["--quiet"]);
    let text = String::from_utf8_lossy(&quiet.stdout);
    assert!(!text.contains("note: "), "{text}");
    assert!(text.contains("Apps ("), "{text}");
    assert_eq!(quiet.status.code(), Some(0));

    let out = run(&["--format", "json=-", "--quiet"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON on stdout");
    assert!(
        v["notes"]
            .to_string()
            .contains("declared in more than one file"),
        "{v:#}"
    );
}

/// Colour follows `FORCE_COLOR` / `CLICOLOR_FORCE` and `NO_COLOR` when not asked
/// for explicitly; `--color never` wins over all of them.
#[test]
fn colour_follows_the_environment_conventions() {
    let repo = gitops_lint::demo::build().expect("the demo repository is built");
    let run = |env: &[(&str, &str)], args: &[&str]| {
        let mut cmd = bin();
        cmd.env_remove("NO_COLOR")
            .env_remove("FORCE_COLOR")
            .env_remove("CLICOLOR_FORCE");
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd
            .args(["diff", "main..change", "--repo"])
            .arg(repo.path())
            .args(args)
            .output()
            .expect("runs");
        String::from_utf8_lossy(&out.stdout).contains('\u{1b}')
    };
    assert!(!run(&[], &[]), "a pipe gets no colour");
    assert!(run(&[("FORCE_COLOR", "1")], &[]));
    assert!(run(&[("CLICOLOR_FORCE", "1")], &[]));
    assert!(!run(&[("FORCE_COLOR", "0")], &[]));
    assert!(!run(&[("FORCE_COLOR", "1"), ("NO_COLOR", "1")], &[]));
    assert!(!run(&[("FORCE_COLOR", "1")], &["--color", "never"]));
}

/// A diff keeps its facts in `$XDG_CACHE_HOME/gitops-lint` unless told
/// otherwise: `--cache-dir` moves them, `--no-cache` keeps none, and the
/// report is the same every time.
#[test]
fn the_cache_directory_is_the_xdg_one_unless_moved_or_switched_off() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cm = |v: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  v: \"{v}\"\n"
        )
    };
    let files = |v: &str| {
        vec![
            ("argocd/payments.yaml".to_string(), app_tracking("main")),
            ("payments/settings.yaml".to_string(), cm(v).into_bytes()),
        ]
    };
    write_commit(dir.path(), "main", None, &files("1"), "base").expect("commit");
    write_commit(dir.path(), "change", Some("main"), &files("2"), "head").expect("commit");
    let xdg = tempfile::tempdir().expect("cache home");
    let moved = tempfile::tempdir().expect("cache dir");
    let run = |extra: &[&str]| {
        let out = bin()
            .env("XDG_CACHE_HOME", xdg.path())
            .args(["diff", "main..change", "--format", "json", "--repo"])
            .arg(dir.path())
            .args(extra)
            .output()
            .expect("runs");
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let count = |d: &std::path::Path| std::fs::read_dir(d).map_or(0, Iterator::count);
    let off = run(&["--no-cache"]);
    assert_eq!(count(xdg.path()), 0);
    assert_eq!(
        run(&["--cache-dir", &moved.path().display().to_string()]),
        off
    );
    assert_eq!((count(moved.path()), count(xdg.path())), (1, 0));
    assert_eq!(run(&[]), off);
    assert_eq!(count(&xdg.path().join("gitops-lint")), 1);
    // A cache inside the repository is refused.
    let out = bin()
        .args(["diff", "main..change", "--cache-dir", "cache", "--repo"])
        .arg(dir.path())
        .current_dir(dir.path())
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("inside the repository"));
}

/// `--version` names the commit the binary was built from (build.rs), one
/// this repository has.
#[test]
fn version_names_the_commit() {
    let out = bin().arg("--version").output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.trim_end();
    let rest = line
        .strip_prefix(&format!(
            "gitops-lint {} (commit ",
            env!("CARGO_PKG_VERSION")
        ))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("{line}"));
    assert!(
        rest.len() == 12 && rest.chars().all(|c| c.is_ascii_hexdigit()),
        "{line}"
    );
    let known = std::process::Command::new("git")
        .args(["cat-file", "-e", &format!("{rest}^{{commit}}")])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .expect("git runs");
    assert!(known.success(), "{rest} is not a commit of this repository");
}

/// Completions and the man page come from the CLI definition: the bash
/// script is valid bash and completes the subcommands and their flags;
/// the man page is roff naming them; an unknown shell is a usage error.
#[test]
fn completions_and_the_man_page_are_generated() {
    let out = bin().args(["completions", "bash"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let script = String::from_utf8_lossy(&out.stdout).into_owned();
    for word in ["diff", "pre-commit", "--fail-on", "--offline", "explain"] {
        assert!(script.contains(word), "{word}");
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("gitops-lint.bash");
    std::fs::write(&path, &script).expect("written");
    let checked = std::process::Command::new("bash")
        .arg("-n")
        .arg(&path)
        .status()
        .expect("bash runs");
    assert!(
        checked.success(),
        "the bash completion script does not parse"
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let out = bin().args(["completions", shell]).output().expect("runs");
        assert_eq!(out.status.code(), Some(0), "{shell}");
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("pre-commit"),
            "{shell}"
        );
    }
    let out = bin().arg("man").output().expect("runs");
    assert_eq!(out.status.code(), Some(0));
    let man = String::from_utf8_lossy(&out.stdout);
    assert!(man.contains(".TH gitops-lint 1"), "{man}");
    for word in ["diff", "check", "render", "completions"] {
        assert!(man.contains(word), "{word}:\n{man}");
    }
    let out = bin().args(["completions", "tcsh"]).output().expect("runs");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr_lines(&out)[0].contains("invalid value 'tcsh'"),
        "{:?}",
        stderr_lines(&out)
    );
}
