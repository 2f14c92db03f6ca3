//! The command line's `--all` renders apps whose inputs are identical at
//! both revisions (`tests/it/unchanged.rs` checks, on every golden case, that
//! leaving them unrendered otherwise changes no finding or prune).

use crate::common;

use std::path::Path;

use assert_cmd::Command;
use serde_json::Value;

fn array<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v[key].as_array().map_or(&[], Vec::as_slice)
}

/// The golden case of an app broken identically at both revisions,
/// committed into a temporary repository.
fn broken_unchanged_case() -> tempfile::TempDir {
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/cases/GL000-render-failed/ok-broken-unchanged-app-not-reported-in-diff");
    let tmp = tempfile::tempdir().expect("temp dir");
    common::commit_case(tmp.path(), &case, "head");
    tmp
}

/// Standard output of `gitops-lint diff main..change` on `repo` with `extra` arguments.
fn diff_output(repo: &Path, extra: &[&str]) -> String {
    let out = Command::cargo_bin("gitops-lint")
        .expect("the gitops-lint binary is built")
        .env("XDG_CACHE_HOME", env!("CARGO_TARGET_TMPDIR"))
        .env("NO_COLOR", "1")
        .args(["diff", "main..change", "--repo"])
        .arg(repo)
        .args(extra)
        .output()
        .expect("runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The golden case of an app that fails to render identically at both
/// revisions, through the built binary: `diff` leaves it unrendered and
/// silent, `diff --all` renders it and GL000 reports it.
#[test]
fn the_command_line_all_flag_reports_an_app_broken_at_both_revisions() {
    let tmp = broken_unchanged_case();
    let run = |extra: &[&str]| -> Value {
        let args: Vec<&str> = ["--format", "json"].iter().chain(extra).copied().collect();
        let text = diff_output(tmp.path(), &args);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("JSON on stdout ({e}):\n{text}"))
    };
    let status = |r: &Value| -> Option<String> {
        array(r, "apps")
            .iter()
            .find(|a| a["name"] == "broken")
            .and_then(|a| a["status"].as_str().map(str::to_string))
    };
    let gl000 = |r: &Value| -> usize {
        array(r, "findings")
            .iter()
            .filter(|f| f["code"] == "GL000" && f["app"] == "broken")
            .count()
    };
    let diff = run(&[]);
    assert_eq!(status(&diff).as_deref(), Some("unchanged"), "{diff:#}");
    assert_eq!(gl000(&diff), 0, "{diff:#}");
    let all = run(&["--all"]);
    assert_eq!(status(&all).as_deref(), Some("unrendered"), "{all:#}");
    assert_eq!(gl000(&all), 1, "{all:#}");
}

/// People read the human report: apps left unrendered are one summary
/// line, not one line each, and `--all` lists every app again.
#[test]
fn the_human_report_sums_up_unchanged_apps_in_one_line() {
    let tmp = broken_unchanged_case();
    let run = |extra: &[&str]| diff_output(tmp.path(), extra);
    // The app list only: the rendered diff below it names apps too.
    let app_lines = |text: &str, name: &str| -> usize {
        text.lines()
            .skip_while(|l| !l.starts_with("Apps ("))
            .take_while(|l| !l.starts_with("Prunes"))
            .filter(|l| l.trim_start().starts_with(&format!("{name} ")))
            .count()
    };
    let diff = run(&[]);
    assert!(diff.contains("Apps (2):"), "{diff}");
    assert_eq!(app_lines(&diff, "web"), 1, "{diff}");
    assert_eq!(app_lines(&diff, "broken"), 0, "{diff}");
    assert!(
        diff.contains("and 1 unchanged app(s): not rendered"),
        "{diff}"
    );
    let all = run(&["--all"]);
    assert_eq!(app_lines(&all, "broken"), 1, "{all}");
    assert!(!all.contains("unchanged app(s)"), "{all}");
}
