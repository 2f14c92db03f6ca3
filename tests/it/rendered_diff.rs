//! The rendered diff as a user sees it, through the binary: a secret value
//! never appears in any output format, `--no-diff` leaves it out, `--format
//! diff` is a patch, `--diff-context` sets the context lines, and every
//! format names the touched apps it could not diff.

use crate::common;

use assert_cmd::Command;
use base64::Engine as _;
use std::path::Path;

/// The golden case `rendered-diff/<name>` committed into a new repository
/// in `dir` (branches `main` and `change`).
fn committed(name: &str, dir: &Path) {
    let case = common::golden::cases()
        .into_iter()
        .find(|c| c.name == format!("rendered-diff/{name}"))
        .unwrap_or_else(|| panic!("no golden case rendered-diff/{name}"));
    case.commit(dir).unwrap_or_else(|e| panic!("{e}"));
}

/// Standard output of `gitops-lint diff main..change ARGS` in `repo`.
fn diff(repo: &Path, args: &[&str]) -> String {
    let out = Command::cargo_bin("gitops-lint")
        .expect("binary")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env_remove("GITHUB_ACTIONS")
        .current_dir(repo)
        .args(["diff", "main..change"])
        .args(args)
        .output()
        .expect("runs");
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("utf-8")
}

#[test]
fn no_secret_value_appears_in_any_format() {
    let tmp = tempfile::tempdir().expect("tempdir");
    committed("secret-masked", tmp.path());
    // Every value of the case's Secret and of the masked ConfigMap key, as
    // written and as `data` holds it.
    let plain = [
        "hunter2-old-value",
        "s3cr3t-new-value",
        "k-unchanged-9f3a",
        "brand-new-token",
        "admin",
        "cfg-token-old",
        "cfg-token-new",
    ];
    let mut secrets: Vec<String> = plain.iter().map(|s| (*s).to_string()).collect();
    secrets.extend(
        plain
            .iter()
            .map(|s| base64::engine::general_purpose::STANDARD.encode(s)),
    );
    let mut seen_diff = 0;
    for format in ["human", "json", "markdown", "diff", "sarif", "github"] {
        let text = diff(tmp.path(), &["--format", format, "--color", "always"]);
        for s in &secrets {
            assert!(
                !text.contains(s.as_str()),
                "`{s}` appears in the {format} output:\n{text}"
            );
        }
        // The change itself is shown: the masks differ where values do.
        if text.contains("++++++++++++") {
            seen_diff += 1;
        }
    }
    assert_eq!(
        seen_diff, 4,
        "human, json, markdown and diff show the masks"
    );
}

#[test]
fn no_diff_leaves_it_out_and_the_patch_format_is_a_patch() {
    let tmp = tempfile::tempdir().expect("tempdir");
    committed("modified-deployment", tmp.path());
    let human = diff(tmp.path(), &["--color", "never"]);
    assert!(human.contains("Rendered diff (1 app(s)):"), "{human}");
    assert!(
        human.contains("-  replicas: 1\n    +  replicas: 2"),
        "{human}"
    );
    let coloured = diff(tmp.path(), &["--color", "always"]);
    assert!(
        coloured.contains("\u{1b}[32m+  replicas: 2\u{1b}[0m"),
        "{coloured}"
    );
    let without = diff(tmp.path(), &["--no-diff", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&without).expect("json");
    assert!(v.get("diff").is_none(), "{without}");
    let human = diff(tmp.path(), &["--no-diff", "--color", "never"]);
    assert!(!human.contains("Rendered diff"), "{human}");
    let patch = diff(tmp.path(), &["--format", "diff"]);
    assert_eq!(
        patch,
        "--- a/web/apps_Deployment_web_web.yaml\n+++ b/web/apps_Deployment_web_web.yaml\n@@ -3,7 +3,7 @@\n metadata:\n   name: web\n spec:\n-  replicas: 1\n+  replicas: 2\n   selector:\n     matchLabels:\n       app: web\n"
    );
    let narrow = diff(tmp.path(), &["--format", "diff", "--diff-context", "0"]);
    assert!(
        narrow.contains("@@ -6 +6 @@\n-  replicas: 1\n+  replicas: 2\n"),
        "{narrow}"
    );
}

#[test]
fn every_format_names_the_apps_not_diffed_and_labels_a_partial_diff() {
    let tmp = tempfile::tempdir().expect("tempdir");
    committed("touched-apps-not-diffed-are-named", tmp.path());
    let partial =
        "partial: Helm chart `postgresql` from `https://charts.example.com/stable` not rendered";
    let human = diff(tmp.path(), &["--color", "never"]);
    assert!(
        human.contains(&format!(
            "  ledger ({partial}; 0 added, 1 modified, 0 removed)"
        )),
        "{human}"
    );
    assert!(
        human.contains(
            "Not diffed (2 app(s)):\n  reports: app added; its render fails (GL000)\n  web: at head, its render fails (GL000)\n"
        ),
        "{human}"
    );
    // The app failing identically at both revisions is not the change's.
    assert!(!human.contains("stable:"), "{human}");
    let md = diff(tmp.path(), &["--format", "markdown"]);
    assert!(md.contains(&format!("<b>ledger</b> ({partial}; ")), "{md}");
    assert!(
        md.contains("- `web`: at head, its render fails (GL000)"),
        "{md}"
    );
    let patch = diff(tmp.path(), &["--format", "diff"]);
    assert!(
        patch.starts_with(&format!(
            "# ledger: {partial}\n# reports: not diffed: app added; its render fails (GL000)\n# web: not diffed: at head, its render fails (GL000)\n--- a/ledger/"
        )),
        "{patch}"
    );
}

/// `gitops-lint diff main..change ARGS` in `repo`: exit code and stderr.
fn diff_failing(repo: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::cargo_bin("gitops-lint")
        .expect("binary")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .current_dir(repo)
        .args(["diff", "main..change"])
        .args(args)
        .output()
        .expect("runs");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn rendered_dir_holds_both_revisions_and_is_never_inside_the_repository() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let repo = tmp.path().join("repo");
    std::fs::create_dir(&repo).expect("repo dir");
    committed("secret-masked", &repo);
    let out = tmp.path().join("rendered");
    let dir = out.to_str().expect("utf-8 path");
    diff(&repo, &["--rendered-dir", dir, "--format", "json"]);
    let read =
        |p: &str| std::fs::read_to_string(out.join(p)).unwrap_or_else(|e| panic!("{p}: {e}"));
    assert!(read("base/creds/Secret_creds_db.yaml").contains("password: ++++++++++++\n"));
    assert!(read("head/creds/Secret_creds_db.yaml").contains("password: ++++++++\n"));
    assert!(read("head/creds/ConfigMap_creds_settings.yaml").contains("url: https://db2.internal"));
    assert!(!read("head/creds/Secret_creds_db.yaml").contains("s3cr3t"));
    // A second run would mix its files with these.
    let (code, err) = diff_failing(&repo, &["--rendered-dir", dir]);
    assert_eq!(code, Some(2));
    assert!(err.contains("is not empty"), "{err}");
    let (code, err) = diff_failing(&repo, &["--rendered-dir", "out"]);
    assert_eq!(code, Some(2));
    assert!(err.contains("is inside the repository"), "{err}");
    assert!(!repo.join("out").exists());
    #[cfg(unix)]
    {
        let link = tmp.path().join("link");
        std::os::unix::fs::symlink(tmp.path().join("elsewhere"), &link).expect("symlink");
        let (code, err) = diff_failing(&repo, &["--rendered-dir", link.to_str().expect("utf-8")]);
        assert_eq!(code, Some(2));
        assert!(err.contains("is a symlink"), "{err}");
    }
}
