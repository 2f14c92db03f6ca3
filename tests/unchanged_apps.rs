//! Leaving apps with identical inputs unrendered never hides a change: for
//! every golden `diff` case, the report with deferral on matches the report
//! of a full render (`--all`'s `render_unchanged`), apart from what the
//! feature promises to differ: an app left unrendered reads `unchanged`
//! instead of its status, and an app failing to render identically at both
//! revisions is not reported by GL000. The command line's `--all` renders
//! such an app and reports it.

mod common;

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use gitops_lint::lint::{self, Options};
use gitops_lint::report::json;
use gitops_lint::source::write_commit;
use serde_json::Value;

/// Every `diff` golden case: its directory and its `case.yaml`.
fn diff_cases() -> Vec<(PathBuf, Value)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cases");
    let mut out = Vec::new();
    for group in std::fs::read_dir(&root).expect("testdata/cases exists") {
        let group = group.expect("entry").path();
        if !group.is_dir() {
            continue;
        }
        for case in std::fs::read_dir(&group).expect("readable group") {
            let dir = case.expect("entry").path();
            if !dir.is_dir() {
                continue;
            }
            let meta = std::fs::read_to_string(dir.join("case.yaml"))
                .ok()
                .and_then(|t| gitops_lint::yaml::load_all(&t).ok())
                .and_then(|d| d.into_iter().next())
                .map_or(Value::Null, |d| d.value);
            if meta
                .get("command")
                .and_then(Value::as_str)
                .unwrap_or("diff")
                == "diff"
            {
                out.push((dir, meta));
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Commits the case into a new repository at `repo` as the golden harness
/// does (config in both trees, tags on the base commit).
fn commit(repo: &Path, dir: &Path, meta: &Value) {
    let mut trees = [dir.join("base"), dir.join("head")].map(|p| {
        if p.exists() {
            common::files_of(&p)
        } else {
            Vec::new()
        }
    });
    if let Some(cfg) = meta.get("config") {
        let text = serde_json::to_string(cfg).expect("config serialises");
        for t in &mut trees {
            t.push((".gitops-lint.yaml".into(), text.clone().into_bytes()));
        }
    }
    let [base, head] = trees;
    write_commit(repo, "main", None, &base, "base").expect("base commit");
    for t in meta
        .get("tags")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        common::git(repo, &["tag", t, "main"]);
    }
    write_commit(repo, "change", Some("main"), &head, "head").expect("head commit");
}

/// The JSON report of `diff main..change`, with or without deferral.
fn report(repo: &Path, meta: &Value, render_unchanged: bool) -> Value {
    let all = meta
        .get("args")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|x| x == "--all"));
    let opts = Options {
        repo: Some(repo.to_path_buf()),
        all,
        render_unchanged,
        ..Options::default()
    };
    let r = lint::diff(Some("main..change"), &opts).expect("diff runs");
    json::to_value(&r)
}

fn array<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// Differences between the deferring report and the full one that the
/// promise does not allow, or nothing.
fn unexplained_differences(deferred: &Value, full: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let unchanged: Vec<&str> = array(deferred, "apps")
        .iter()
        .filter(|a| a["status"] == "unchanged")
        .filter_map(|a| a["name"].as_str())
        .collect();
    // Apps: the same rows; an `unchanged` one rendered or failed in full.
    let (da, fa) = (array(deferred, "apps"), array(full, "apps"));
    if da.len() != fa.len() {
        out.push(format!("apps differ:\n{da:#?}\nvs full render\n{fa:#?}"));
    }
    for (d, f) in da.iter().zip(fa) {
        let mut d = d.clone();
        if d["status"] == "unchanged" {
            if f["status"] != "rendered" && f["status"] != "unrendered" {
                out.push(format!("`unchanged` app is {f} in a full render"));
            }
            d["status"] = f["status"].clone();
        }
        if &d != f {
            out.push(format!("app row {d} is {f} in a full render"));
        }
    }
    if array(deferred, "prunes") != array(full, "prunes") {
        out.push(format!(
            "prunes differ:\n{:#?}\nvs full render\n{:#?}",
            array(deferred, "prunes"),
            array(full, "prunes")
        ));
    }
    // Findings: the full render's, less GL000 on apps left unrendered.
    let expected: Vec<&Value> = array(full, "findings")
        .iter()
        .filter(|f| {
            !(f["code"] == "GL000" && f["app"].as_str().is_some_and(|a| unchanged.contains(&a)))
        })
        .collect();
    let actual: Vec<&Value> = array(deferred, "findings").iter().collect();
    if actual != expected {
        out.push(format!(
            "findings differ:\n{actual:#?}\nvs full render (less GL000 on unchanged apps)\n{expected:#?}"
        ));
    }
    out
}

#[test]
fn deferral_changes_no_finding_or_prune_in_any_golden_case() {
    let cases = diff_cases();
    let mut failures = Vec::new();
    let mut deferring = 0;
    for (dir, meta) in &cases {
        let tmp = tempfile::tempdir().expect("temp dir");
        commit(tmp.path(), dir, meta);
        let deferred = report(tmp.path(), meta, false);
        let full = report(tmp.path(), meta, true);
        assert!(
            !array(&full, "apps")
                .iter()
                .any(|a| a["status"] == "unchanged"),
            "{}: a full render leaves an app unrendered",
            dir.display()
        );
        if array(&deferred, "apps")
            .iter()
            .any(|a| a["status"] == "unchanged")
        {
            deferring += 1;
        }
        for d in unexplained_differences(&deferred, &full) {
            failures.push(format!("{}: {d}", dir.display()));
        }
    }
    assert!(
        failures.is_empty(),
        "{} difference(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
    // The comparison means something only where apps were left unrendered.
    assert!(
        deferring >= 20,
        "only {deferring} of {} cases leave an app unrendered",
        cases.len()
    );
}

/// The golden case of an app that fails to render identically at both
/// revisions, through the built binary: `diff` leaves it unrendered and
/// silent, `diff --all` renders it and GL000 reports it.
#[test]
fn the_command_line_all_flag_reports_an_app_broken_at_both_revisions() {
    let case = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testdata/cases/GL000-render-failed/ok-broken-unchanged-app-not-reported-in-diff");
    let tmp = tempfile::tempdir().expect("temp dir");
    common::commit_case(tmp.path(), &case, "head");
    let run = |extra: &[&str]| -> Value {
        let out = Command::cargo_bin("gitops-lint")
            .expect("the gitops-lint binary is built")
            .env("NO_COLOR", "1")
            .args(["diff", "main..change", "--format", "json", "--repo"])
            .arg(tmp.path())
            .args(extra)
            .output()
            .expect("runs");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "JSON on stdout ({e}):\n{}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
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
