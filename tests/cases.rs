//! Golden cases: each `testdata/cases/<CODE>-<name>/<case>/` holds a `base/`
//! and a `head/` tree. The harness commits them into a real git repository in
//! a temporary directory, runs gitops-lint in-process and compares the JSON
//! report with `expected.json` beside them.
//!
//! `GITOPS_LINT_BLESS=1 cargo test --test cases` rewrites the expectations.
//! A case named `ok-*` must yield no finding of its rule; any other case in a
//! rule's folder must yield at least one.
//!
//! `case.yaml` (optional): `proves` (one line), `command` (`diff`, the
//! default, or `check`, which uses only `head/`), `args` (`--all`), and
//! `config` (written as `.gitops-lint.yaml` into both trees), and `tags`
//! (lightweight tags created on the base commit, for `targetRevision` pins).
//! A file named `x.symlink` becomes a symlink `x` whose target is its content.

use std::path::{Path, PathBuf};

use gitops_lint::lint::{self, Options, Revision};
use gitops_lint::report::json;
use gitops_lint::source::write_commit;
use serde_json::Value;

fn files_of(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    if !root.exists() {
        return out;
    }
    for e in walkdir::WalkDir::new(root).sort_by_file_name() {
        let e = e.expect("readable fixture");
        if e.file_type().is_file() {
            let rel = e
                .path()
                .strip_prefix(root)
                .expect("inside root")
                .to_string_lossy()
                .replace('\\', "/");
            out.push((rel, std::fs::read(e.path()).expect("readable fixture file")));
        }
    }
    out
}

struct Case {
    dir: PathBuf,
    rule: Option<String>,
    name: String,
    meta: Value,
}

fn cases() -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cases");
    let mut out = Vec::new();
    for group in std::fs::read_dir(&root).expect("testdata/cases exists") {
        let group = group.expect("entry").path();
        if !group.is_dir() {
            continue;
        }
        let gname = group
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let rule = gname.starts_with("GL").then(|| gname[..5].to_string());
        for case in std::fs::read_dir(&group).expect("readable group") {
            let dir = case.expect("entry").path();
            if !dir.is_dir() {
                continue;
            }
            let meta = match std::fs::read_to_string(dir.join("case.yaml")) {
                Ok(t) => gitops_lint::yaml::load_all(&t)
                    .ok()
                    .and_then(|d| d.into_iter().next())
                    .map(|d| d.value)
                    .unwrap_or(Value::Null),
                Err(_) => Value::Null,
            };
            let name = format!(
                "{gname}/{}",
                dir.file_name().unwrap_or_default().to_string_lossy()
            );
            out.push(Case {
                dir,
                rule: rule.clone(),
                name,
                meta,
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

fn run_case(case: &Case) -> Result<Value, String> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut base = files_of(&case.dir.join("base"));
    let mut head = files_of(&case.dir.join("head"));
    if let Some(cfg) = case.meta.get("config") {
        let text = serde_json::to_string(cfg).map_err(|e| e.to_string())?;
        base.push((".gitops-lint.yaml".into(), text.clone().into_bytes()));
        head.push((".gitops-lint.yaml".into(), text.into_bytes()));
    }
    let args: Vec<String> = case
        .meta
        .get("args")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let opts = Options {
        repo: Some(tmp.path().to_path_buf()),
        // As the command line does: `--all` also renders unchanged apps.
        all: args.iter().any(|a| a == "--all"),
        render_unchanged: args.iter().any(|a| a == "--all"),
        ..Options::default()
    };
    let command = case
        .meta
        .get("command")
        .and_then(Value::as_str)
        .unwrap_or("diff");
    let (report, base_sha, head_sha) = if command == "check" {
        let sha =
            write_commit(tmp.path(), "main", None, &head, "head").map_err(|e| e.to_string())?;
        let r = lint::check(&Revision::Commit("main".into()), &opts).map_err(|e| e.to_string())?;
        (r, String::new(), sha)
    } else {
        let b = write_commit(tmp.path(), "main", None, &base, "base").map_err(|e| e.to_string())?;
        tag_base(tmp.path(), &b, &case.meta)?;
        let h = write_commit(tmp.path(), "change", Some("main"), &head, "head")
            .map_err(|e| e.to_string())?;
        let r = lint::diff(Some("main..change"), &opts).map_err(|e| e.to_string())?;
        (r, b, h)
    };
    let text = serde_json::to_string_pretty(&json::to_value(&report)).map_err(|e| e.to_string())?;
    let mut text = text.replace(&head_sha, "<head>");
    if !base_sha.is_empty() {
        text = text.replace(&base_sha, "<base>");
    }
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// Creates the `tags` of `case.yaml` on the base commit.
fn tag_base(dir: &Path, base: &str, meta: &Value) -> Result<(), String> {
    let Some(tags) = meta.get("tags").and_then(Value::as_array) else {
        return Ok(());
    };
    let repo = git2::Repository::open(dir).map_err(|e| e.to_string())?;
    let oid = git2::Oid::from_str(base).map_err(|e| e.to_string())?;
    let commit = repo.find_object(oid, None).map_err(|e| e.to_string())?;
    for t in tags.iter().filter_map(Value::as_str) {
        repo.tag_lightweight(t, &commit, false)
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[test]
fn golden_cases() {
    let bless = std::env::var_os("GITOPS_LINT_BLESS").is_some();
    let all = cases();
    assert!(!all.is_empty(), "no golden cases found");
    let mut failures = Vec::new();
    for case in &all {
        let actual = match run_case(case) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{}: the run failed: {e}", case.name));
                continue;
            }
        };
        if let Some(rule) = &case.rule {
            let n = actual["findings"].as_array().map_or(0, |f| {
                f.iter().filter(|x| x["code"] == rule.as_str()).count()
            });
            let ok_case = case
                .dir
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("ok-"));
            if ok_case && n > 0 {
                failures.push(format!(
                    "{}: an ok- case must have no {rule} finding, found {n}",
                    case.name
                ));
            }
            if !ok_case && n == 0 {
                failures.push(format!(
                    "{}: expected at least one {rule} finding, found none",
                    case.name
                ));
            }
        }
        let path = case.dir.join("expected.json");
        let rendered = serde_json::to_string_pretty(&actual).unwrap_or_default() + "\n";
        if bless {
            std::fs::write(&path, &rendered).expect("write expected.json");
            continue;
        }
        match std::fs::read_to_string(&path) {
            Ok(expected) if expected == rendered => {}
            Ok(expected) => failures.push(format!(
                "{}: output differs from expected.json (GITOPS_LINT_BLESS=1 to accept)\n--- expected\n{expected}\n--- actual\n{rendered}",
                case.name
            )),
            Err(_) => failures.push(format!("{}: no expected.json (run with GITOPS_LINT_BLESS=1 to create it)", case.name)),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} golden cases failed:\n\n{}",
        failures.len(),
        all.len(),
        failures.join("\n\n")
    );
}
