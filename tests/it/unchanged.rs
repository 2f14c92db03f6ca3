//! Leaving unchanged apps unrendered must never change an answer.
//!
//! 1. Every golden diff case is run twice, deferring unchanged apps (the
//!    default) and rendering everything (`render_unchanged`): the reports
//!    must be identical except for what deferral is allowed to change, the
//!    `unchanged` status and GL000 for apps that fail identically at both
//!    revisions.
//! 2. `render::footprint` is what deferral trusts: every path a real render
//!    reads must lie inside it, for every Kustomize corpus case and every
//!    app source of every golden case at both revisions.

use crate::common;
use crate::kustomize_common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::{Arc, Mutex};

use common::golden::{self, Case, Committed};
use gitops_lint::argocd::{self, InventoryInput, RepoIdentity};
use gitops_lint::lint::{self, Revision, RunStats};
use gitops_lint::manifest::Scopes;
use gitops_lint::render::{
    self, Footprint, FootprintMemo, ParseCache, RenderContext, RenderOptions, SourceSpec,
};
use gitops_lint::source::{DirTree, GitRepo, ObjectId, Tree};
use serde_json::Value;

// ---------------------------------------------------------------------------
// 1. Equivalence of the deferred and the full run.

/// How an app is named in findings: `name`, or `namespace/name` outside `argocd`.
fn display(app: &Value) -> String {
    let name = app["name"].as_str().unwrap_or_default();
    match app["namespace"].as_str() {
        Some("argocd") | None => name.to_string(),
        Some(ns) => format!("{ns}/{name}"),
    }
}

/// The render error of `app` in a GL000 message, if `message` is the
/// render-failure finding of `prefix` (`at head`/`at base` in a diff, nothing in a check).
fn render_error<'a>(message: &'a str, app: &str, prefix: &str) -> Option<&'a str> {
    message
        .strip_prefix(&format!("`{app}` could not be rendered{prefix}, so "))?
        .split_once(": ")
        .map(|(_, e)| e)
}

/// Rewrites the full run's report `full` into what the deferred run must
/// report: apps `unchanged` there read `unchanged`, and the GL000 findings
/// of those that fail identically at both revisions are dropped (with their
/// count in the summary). Everything that contradicts the promise is
/// returned as an error.
fn expected_deferred(
    full: &Value,
    deferred: &Value,
    base_failure: &dyn Fn(&str) -> Result<Option<String>, String>,
) -> Result<Value, String> {
    let unchanged: BTreeSet<String> = deferred["apps"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["status"] == "unchanged")
        .map(display)
        .collect();
    let mut out = full.clone();
    let mut failing = BTreeSet::new();
    for app in out["apps"].as_array_mut().into_iter().flatten() {
        let d = display(app);
        if !unchanged.contains(&d) {
            continue;
        }
        match app["status"].as_str() {
            Some("rendered") => {}
            Some("unrendered") => {
                failing.insert(d.clone());
            }
            other => {
                return Err(format!(
                    "`{d}` is unchanged in the deferred run but {other:?} in the full run"
                ))
            }
        }
        app["status"] = Value::from("unchanged");
    }
    let mut dropped: BTreeMap<String, i64> = BTreeMap::new();
    if let Some(findings) = out["findings"].as_array_mut() {
        let mut kept = Vec::new();
        for f in findings.drain(..) {
            let app = f["app"].as_str().unwrap_or_default().to_string();
            if f["code"] != "GL000" || !failing.contains(&app) {
                kept.push(f);
                continue;
            }
            let msg = f["message"].as_str().unwrap_or_default();
            let Some(head_err) = render_error(msg, &app, " at head") else {
                return Err(format!(
                    "`{app}` is unchanged in the deferred run, but the full run reports: {msg}"
                ));
            };
            // Failing at head only would be reported the same way: the base
            // must fail too, with the same error.
            match base_failure(&app)? {
                Some(base_err) if base_err == head_err => {}
                other => {
                    return Err(format!(
                        "`{app}` is unchanged in the deferred run and fails at head ({head_err}), but at base: {other:?}"
                    ))
                }
            }
            *dropped
                .entry(f["severity"].as_str().unwrap_or_default().to_string())
                .or_default() += 1;
        }
        *findings = kept;
    }
    for (sev, n) in dropped {
        let c = &mut out["summary"][sev.as_str()];
        *c = Value::from(c.as_i64().unwrap_or_default() - n);
    }
    Ok(out)
}

/// Every difference between `a` and `b`, one line each, by JSON path.
fn json_diff(path: &str, a: &Value, b: &Value, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let (va, vb) = (
                    x.get(k).unwrap_or(&Value::Null),
                    y.get(k).unwrap_or(&Value::Null),
                );
                json_diff(&format!("{path}.{k}"), va, vb, out);
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (va, vb)) in x.iter().zip(y).enumerate() {
                json_diff(&format!("{path}[{i}]"), va, vb, out);
            }
        }
        _ if a != b => out.push(format!(
            "  {path}:\n    full:     {}\n    deferred: {}",
            serde_json::to_string(a).unwrap_or_default(),
            serde_json::to_string(b).unwrap_or_default()
        )),
        _ => {}
    }
}

/// What `check` at the base commit says about `app`: its render error, or
/// `None` when it renders.
fn base_failure(
    case: &Case,
    c: &Committed,
    repo: &Path,
    app: &str,
) -> Result<Option<String>, String> {
    let report = lint::check(&Revision::Commit(c.base.clone()), &case.options(repo))
        .map_err(|e| e.to_string())?;
    let v = golden::to_json(&report, c)?;
    let status = v["apps"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| display(a) == app)
        .and_then(|a| a["status"].as_str())
        .map(str::to_string);
    if status.as_deref() != Some("unrendered") {
        return Ok(status.map(|s| format!("status {s}")));
    }
    Ok(v["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|f| f["code"] == "GL000" && f["app"] == app)
        .find_map(|f| render_error(f["message"].as_str().unwrap_or_default(), app, ""))
        .map(str::to_string))
}

struct Outcome {
    /// Apps left unrendered by the deferred run (`RunStats.unchanged`).
    deferred_apps: usize,
    /// Of those, apps that fail to render at both revisions.
    failing_both: usize,
}

fn compare_case(case: &Case) -> Result<Outcome, String> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let c = case.commit(tmp.path())?;
    // Both runs use the case's own options (helm for a Helm case), which
    // defer unless the case says `--all`, and differ only in
    // `render_unchanged`.
    let stats = Arc::new(Mutex::new(RunStats::default()));
    let deferred_opts = lint::Options {
        stats: Some(Arc::clone(&stats)),
        ..case.options(tmp.path())
    };
    let deferred = case.run(&c, &deferred_opts)?;
    // Facts kept between runs change nothing: not when they are first
    // learned, not when a second run reads them.
    let facts = tempfile::tempdir().map_err(|e| e.to_string())?;
    for run in ["cold", "warm"] {
        let cached_opts = lint::Options {
            cache_dir: Some(facts.path().to_path_buf()),
            ..case.options(tmp.path())
        };
        if case.run(&c, &cached_opts)? != deferred {
            return Err(format!(
                "with facts kept between runs ({run}), the report differs from one without"
            ));
        }
    }
    let full_opts = lint::Options {
        render_unchanged: true,
        ..case.options(tmp.path())
    };
    let full = case.run(&c, &full_opts)?;
    let deferred_apps = stats.lock().map_err(|e| e.to_string())?.unchanged;
    let expected = expected_deferred(&full, &deferred, &|app| {
        base_failure(case, &c, tmp.path(), app)
    })?;
    let failing_both = full["apps"]
        .as_array()
        .into_iter()
        .flatten()
        .zip(deferred["apps"].as_array().into_iter().flatten())
        .filter(|(f, d)| f["status"] == "unrendered" && d["status"] == "unchanged")
        .count();
    if expected != deferred {
        let mut lines = Vec::new();
        json_diff("", &expected, &deferred, &mut lines);
        return Err(format!(
            "the deferred run differs from the full run (normalised):\n{}",
            lines.join("\n")
        ));
    }
    Ok(Outcome {
        deferred_apps,
        failing_both,
    })
}

#[test]
fn deferring_unchanged_apps_changes_no_finding_or_prune() {
    let all = golden::cases();
    let diffs: Vec<&Case> = all.iter().filter(|c| c.command() == "diff").collect();
    assert!(diffs.len() >= 100, "only {} golden diff cases", diffs.len());
    let mut failures = Vec::new();
    let (mut cases_deferring, mut apps_deferred, mut failing_both) = (0, 0, 0);
    let (mut helm_cases, mut helm_cases_deferring) = (0, 0);
    let mut not_run = Vec::new();
    let have_helm = golden::helm().is_some();
    for case in &diffs {
        if case.needs_helm() && !have_helm {
            not_run.push(case.name.as_str());
            continue;
        }
        match compare_case(case) {
            Ok(o) => {
                if o.deferred_apps > 0 {
                    cases_deferring += 1;
                }
                if case.needs_helm() {
                    helm_cases += 1;
                    if o.deferred_apps > 0 {
                        helm_cases_deferring += 1;
                    }
                }
                apps_deferred += o.deferred_apps;
                failing_both += o.failing_both;
            }
            Err(e) => failures.push(format!("{}: {e}", case.name)),
        }
    }
    println!(
        "{} diff cases: {cases_deferring} left {apps_deferred} apps unrendered ({failing_both} failing at both revisions); {helm_cases} Helm cases compared, {helm_cases_deferring} deferring",
        diffs.len()
    );
    if !not_run.is_empty() {
        // As in tests/it/cases.rs: said visibly, and a failure where the
        // oracles are required.
        let line = format!(
            "NOT RUN: {} golden Helm diff case(s), no `helm` on PATH: {}",
            not_run.len(),
            not_run.join(", ")
        );
        eprintln!("{line}");
        if std::env::var_os("GITOPS_LINT_REQUIRE_ORACLES").is_some() {
            failures.push(line);
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} golden diff cases answer differently when unchanged apps are not rendered:\n\n{}",
        failures.len(),
        diffs.len(),
        failures.join("\n\n")
    );
    // Without deferrals the comparison proves nothing.
    assert!(
        cases_deferring >= 25 && apps_deferred >= 30,
        "only {cases_deferring} cases ({apps_deferred} apps) deferred anything"
    );
    assert!(
        failing_both >= 2,
        "only {failing_both} deferred apps fail at both revisions"
    );
    // Helm apps are left unrendered too, and that is compared with helm.
    assert!(
        !have_helm || helm_cases_deferring >= 3,
        "only {helm_cases_deferring} of {helm_cases} Helm cases deferred anything"
    );
}

// ---------------------------------------------------------------------------
// 2. The footprint holds everything a render reads.

fn parent(p: &str) -> &str {
    p.rsplit_once('/').map_or("", |(d, _)| d)
}

fn under(p: &str, dir: &str) -> bool {
    dir.is_empty() || p == dir || p.strip_prefix(dir).is_some_and(|r| r.starts_with('/'))
}

/// Whether an input key (`path`, or `dir/` for a listing) lies inside `fp`.
fn covered(key: &str, fp: &Footprint) -> bool {
    if let Some(dir) = key.strip_suffix('/') {
        // A listing of the parent tells the kind of a subtree or entry.
        fp.subtrees.iter().any(|s| under(dir, s))
            || fp
                .subtrees
                .iter()
                .chain(&fp.entries)
                .any(|p| !p.is_empty() && parent(p) == dir)
    } else {
        fp.subtrees.iter().any(|s| under(key, s)) || fp.entries.iter().any(|e| e == key)
    }
}

#[derive(Default)]
struct Tally {
    checked: usize,
    /// Helm sources (charts rendered with helm) among those checked.
    helm_rendered: usize,
    no_footprint: usize,
    inputs: usize,
    violations: Vec<String>,
}

impl Tally {
    /// Renders `spec` in `tree`, then checks its inputs against its
    /// footprint, computed afresh and with `memo` (shared by the sources of
    /// one tree, as a run shares it): both must agree.
    fn check(
        &mut self,
        label: &str,
        tree: &dyn Tree,
        spec: &SourceSpec,
        scopes: &Scopes,
        memo: &FootprintMemo,
        options: &RenderOptions,
    ) {
        let cache = ParseCache::default();
        let cx = RenderContext::new(tree, &cache, options);
        let result = render::render(&cx, spec, scopes);
        let inputs: BTreeMap<String, ObjectId> = cx.inputs();
        if result
            .as_ref()
            .is_ok_and(|r| r.source_type == render::SourceType::Helm)
        {
            self.helm_rendered += 1;
        }
        let cx2 = RenderContext::new(tree, &cache, options);
        let fresh = render::footprint(&cx2, spec, &FootprintMemo::default());
        let cx3 = RenderContext::new(tree, &cache, options);
        let shared = render::footprint(&cx3, spec, memo);
        if shared != fresh {
            self.violations.push(format!(
                "{label}: footprint {fresh:?} but {shared:?} with the memo of earlier sources"
            ));
        }
        let Some(fp) = fresh else {
            self.no_footprint += 1;
            return;
        };
        self.checked += 1;
        self.inputs += inputs.len();
        let outside: Vec<&String> = inputs.keys().filter(|k| !covered(k, &fp)).collect();
        if !outside.is_empty() {
            self.violations.push(format!(
                "{label} (render {}): read {outside:?} outside footprint {fp:?}",
                if result.is_ok() { "ok" } else { "failed" }
            ));
        }
    }
}

/// The corpus cases the native renderer refuses
/// (`testdata/kustomize-corpus-unsupported.yaml`).
fn unsupported_corpus_cases() -> BTreeSet<String> {
    let p = kustomize_common::crate_root().join("testdata/kustomize-corpus-unsupported.yaml");
    let text = std::fs::read_to_string(&p).expect("read unsupported list");
    goyaml::load_all(&text)
        .expect("parse unsupported list")
        .into_iter()
        .flat_map(|d| d.value.as_array().cloned().unwrap_or_default())
        .filter_map(|e| e.get("case").and_then(Value::as_str).map(str::to_string))
        .collect()
}

#[test]
fn footprint_holds_every_input_of_a_corpus_render() {
    footprints_hold_in(&kustomize_common::vendored_corpus(), 30);
}

#[test]
#[ignore = "the full corpus (GITOPS_LINT_CORPUS=DIR or ../shared/corpus); .ci/run runs it"]
fn full_corpus_footprint_holds_every_input_of_a_render() {
    footprints_hold_in(&kustomize_common::corpus_dir(), 150);
}

/// Every supported case of the corpus at `dir` (at least `min` of them)
/// has a footprint that holds every file its render reads.
fn footprints_hold_in(dir: &Path, min: usize) {
    let cases = kustomize_common::Case::all(dir);
    assert!(cases.len() >= min, "corpus has only {} cases", cases.len());
    let unsupported = unsupported_corpus_cases();
    let mut t = Tally::default();
    let mut missing = Vec::new();
    for case in &cases {
        let before = t.checked;
        let tree = DirTree::new(case.dir.clone(), Vec::new());
        let spec = SourceSpec {
            path: case.entry.trim_end_matches('/').to_string(),
            ..SourceSpec::default()
        };
        t.check(
            &case.name,
            &tree,
            &spec,
            &Scopes::default(),
            &FootprintMemo::default(),
            &RenderOptions::default(),
        );
        if t.checked == before && !unsupported.contains(&case.name) {
            missing.push(case.name.as_str());
        }
    }
    println!(
        "kustomize corpus: {} sources checked ({} inputs), {} without footprint, of {}",
        t.checked,
        t.inputs,
        t.no_footprint,
        cases.len()
    );
    assert!(
        t.violations.is_empty(),
        "{} renders read outside their footprint:\n{}",
        t.violations.len(),
        t.violations.join("\n")
    );
    // Every case the renderer supports is checked.
    assert!(
        missing.is_empty(),
        "supported corpus cases without a footprint: {missing:?}"
    );
    assert!(
        t.checked + unsupported.len() >= min,
        "only {} corpus cases had a footprint",
        t.checked
    );
}

/// Checks every local source of every app of the inventory at `commit`.
fn check_revision(
    t: &mut Tally,
    label: &str,
    repo: &GitRepo,
    commit: &str,
    branch: &str,
) -> Result<(), String> {
    let tree: Arc<dyn Tree> = repo.commit_tree(commit).map_err(|e| e.to_string())?;
    let config = lint::load_config(None, tree.as_ref()).map_err(|e| e.to_string())?;
    let identity = RepoIdentity::new(&repo.remote_urls(), &config, Some(branch));
    let cache = ParseCache::default();
    // With helm, charts (Helm sources and Kustomize `helmCharts`) render
    // and their reads are checked too.
    let options = RenderOptions {
        helm: golden::helm(),
        ..RenderOptions::default()
    };
    let no_tree = |_: &str| -> Option<Arc<dyn Tree>> { None };
    let input = InventoryInput {
        tree: Arc::clone(&tree),
        cache: &cache,
        render_options: &options,
        config: &config,
        repo: &identity,
        tree_at: &no_tree,
        reuse: None,
        defer: None,
        split: &std::collections::BTreeSet::new(),
    };
    let inv = argocd::build(&input);
    let memo = FootprintMemo::default();
    for app in inv.apps.values() {
        for src in &app.spec.sources {
            let Some(path) = &src.path else { continue };
            // Sources pinned elsewhere are rendered from another tree.
            if !identity.is_this_repo(&src.repo_url)
                || !identity.branches.contains(&src.target_revision)
            {
                continue;
            }
            let mut spec = gitops_lint::argocd::source_spec(app, src, path);
            spec.kustomize_build_options
                .clone_from(&inv.kustomize_build_options);
            t.check(
                &format!("{label} app {} source {path}", app.key),
                tree.as_ref(),
                &spec,
                &inv.scopes,
                &memo,
                &options,
            );
        }
    }
    Ok(())
}

#[test]
fn footprint_holds_every_input_of_a_golden_case_render() {
    let mut t = Tally::default();
    let mut errors = Vec::new();
    let all = golden::cases();
    for case in &all {
        let mut run = || -> Result<(), String> {
            let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
            let c = case.commit(tmp.path())?;
            let repo = GitRepo::open(tmp.path()).map_err(|e| e.to_string())?;
            if c.base.is_empty() {
                check_revision(
                    &mut t,
                    &format!("{} head", case.name),
                    &repo,
                    &c.head,
                    "main",
                )
            } else {
                check_revision(
                    &mut t,
                    &format!("{} base", case.name),
                    &repo,
                    &c.base,
                    "main",
                )?;
                // A head whose configuration does not load renders nothing
                // (GL022 reports the change that makes it).
                if case.meta["headConfigDoesNotLoad"] == true {
                    return Ok(());
                }
                check_revision(
                    &mut t,
                    &format!("{} head", case.name),
                    &repo,
                    &c.head,
                    "change",
                )
            }
        };
        if let Err(e) = run() {
            errors.push(format!("{}: {e}", case.name));
        }
    }
    println!(
        "golden cases: {} sources checked ({} inputs, {} rendered with helm), {} without footprint",
        t.checked, t.inputs, t.helm_rendered, t.no_footprint
    );
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    assert!(
        t.violations.is_empty(),
        "{} renders read outside their footprint:\n{}",
        t.violations.len(),
        t.violations.join("\n")
    );
    assert!(t.checked >= 200, "only {} sources checked", t.checked);
    // With helm, charts render and what helm is given is checked too.
    assert!(
        golden::helm().is_none() || t.helm_rendered >= 15,
        "only {} Helm sources rendered with helm",
        t.helm_rendered
    );
}
