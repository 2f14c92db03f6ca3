//! Differential run of the native Helm renderer against the pinned helm
//! binary over any directory of charts (`scripts/helm-differential`,
//! documented in `docs/helm-fidelity.md`).
//!
//! `GITOPS_LINT_HELM_DIFF=DIR` names a directory whose subdirectories are
//! chart repositories (one checkout each). Every chart found in them (a
//! `Chart.yaml` not inside another chart) is rendered with its default
//! values and with each `ci/*values.yaml` it ships (the chart-testing
//! convention), as an Application in a fresh repository, `render --app`
//! with `--helm-renderer native` and with the pinned helm (`binary`: the
//! flags Argo CD gives helm, `util/helm/cmd.go` `(*Cmd).template`). Each
//! case ends:
//!
//! - `identical`: the same objects, in the same order, or both renderers
//!   fail;
//! - `refused`: helm renders, the native renderer fails (with its reason);
//! - `divergent`: anything else (the first differing object is reported);
//! - `skipped`: a dependency is neither vendored in `charts/` nor found by
//!   name in the same repository or, failing that, another repository of
//!   the directory (helm itself could not render it here).
//!
//! The table goes to `GITOPS_LINT_HELM_DIFF_REPORT` (TSV, default
//! `target/helm-differential.tsv`) and the counts per repository to
//! standard output. The test fails on any divergence.
//! `GITOPS_LINT_HELM_DIFF_BINARY=PATH` compares with another helm (v4:
//! rendered natively as Argo CD 3.5's helm).
//! `GITOPS_LINT_HELM_DIFF_ONLY=TEXT` keeps the cases whose name contains
//! TEXT; `GITOPS_LINT_HELM_DIFF_JOBS=N` runs N cases at once (default 2).

use crate::kustomize_common;

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use gitops_lint::lint::{self, Options, Revision};
use gitops_lint::render::{expand_lists, HelmRenderer, RenderOptions};
use gitops_lint::source::write_commit;
use goyaml::{Dialect, Limits};
use kustomize_common::{compare, crate_root, pinned_helm, PINNED_HELM};
use serde_json::{json, Value};

/// One chart × values case.
struct Case {
    repo: String,
    /// The chart's directory, relative to its repository.
    chart: String,
    dir: PathBuf,
    /// `None`: the chart's default values; else a file under the chart.
    values: Option<String>,
    /// The dependencies to place in `charts/` (name → directory), or why
    /// the case cannot be rendered here.
    deps: Result<Vec<(String, PathBuf)>, String>,
}

impl Case {
    fn name(&self) -> String {
        format!(
            "{}/{}:{}",
            self.repo,
            self.chart,
            self.values.as_deref().unwrap_or("values.yaml")
        )
    }
}

/// A chart's `name` and its declared dependencies (`Chart.yaml`, or
/// `requirements.yaml` for `apiVersion: v1`): name, alias-free directory
/// name, repository.
struct ChartMeta {
    name: String,
    deps: Vec<(String, String)>,
}

/// A YAML file as helm reads `Chart.yaml` (sigs.k8s.io/yaml: a repeated
/// key replaces the earlier one).
fn read_yaml(p: &Path) -> Option<Value> {
    let text = std::fs::read_to_string(p).ok()?;
    goyaml::load_all_as(&text, Dialect::SigsYaml, &Limits::default())
        .ok()?
        .into_iter()
        .next()
        .map(goyaml::Doc::into_value)
}

fn chart_meta(dir: &Path) -> Option<ChartMeta> {
    let chart = read_yaml(&dir.join("Chart.yaml"))?;
    let name = chart["name"].as_str()?.to_string();
    let mut deps = Vec::new();
    let listed = if chart["dependencies"].is_array() {
        chart["dependencies"].clone()
    } else {
        read_yaml(&dir.join("requirements.yaml")).map_or(Value::Null, |r| r["dependencies"].clone())
    };
    for d in listed.as_array().into_iter().flatten() {
        let dep = d["name"].as_str().unwrap_or_default().to_string();
        let repo = d["repository"].as_str().unwrap_or_default().to_string();
        deps.push((dep, repo));
    }
    Some(ChartMeta { name, deps })
}

/// The charts of one repository: every `Chart.yaml` not below another
/// chart's directory.
fn charts_of(repo: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = walkdir::WalkDir::new(repo)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
        .flatten()
        .filter(|e| e.file_name() == "Chart.yaml" && e.file_type().is_file())
        .filter_map(|e| e.path().parent().map(Path::to_path_buf))
        .collect();
    found.sort();
    let mut out: Vec<PathBuf> = Vec::new();
    for d in found {
        if !out.iter().any(|o| d.starts_with(o)) {
            out.push(d);
        }
    }
    out
}

/// Where each dependency of the chart at `dir` comes from: already in
/// `charts/`, a `file://` path, or a chart of the same name in `repo`.
fn dependencies(
    dir: &Path,
    meta: &ChartMeta,
    by_name: &BTreeMap<String, PathBuf>,
) -> Result<Vec<(String, PathBuf)>, String> {
    let mut out = Vec::new();
    for (name, repository) in &meta.deps {
        let vendored = dir.join("charts").join(name);
        let has_archive = std::fs::read_dir(dir.join("charts"))
            .into_iter()
            .flatten()
            .flatten()
            .any(|e| {
                let f = e.file_name().to_string_lossy().into_owned();
                f.starts_with(&format!("{name}-")) && f.ends_with(".tgz")
            });
        if vendored.join("Chart.yaml").is_file() || has_archive {
            continue;
        }
        if let Some(path) = repository.strip_prefix("file://") {
            let p = dir.join(path);
            if p.join("Chart.yaml").is_file() {
                out.push((name.clone(), p));
                continue;
            }
            return Err(format!(
                "dependency {name}: {repository} is not in the repository"
            ));
        }
        match by_name.get(name) {
            Some(p) => out.push((name.clone(), p.clone())),
            None => {
                return Err(format!(
                    "dependency {name} ({repository}) is not in the repository"
                ))
            }
        }
    }
    Ok(out)
}

fn cases_of(root: &Path) -> Vec<Case> {
    let mut repos: Vec<PathBuf> = std::fs::read_dir(root)
        .expect("read GITOPS_LINT_HELM_DIFF")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    repos.sort();
    let mut elsewhere: BTreeMap<String, PathBuf> = BTreeMap::new();
    for repo in &repos {
        for d in charts_of(repo) {
            if let Some(m) = chart_meta(&d) {
                elsewhere.entry(m.name).or_insert(d);
            }
        }
    }
    let mut out = Vec::new();
    for repo in repos {
        let repo_name = repo
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let charts = charts_of(&repo);
        let metas: Vec<(PathBuf, Option<ChartMeta>)> =
            charts.iter().map(|d| (d.clone(), chart_meta(d))).collect();
        // A dependency is taken from this repository first, else from
        // another repository of the directory (`kube-state-metrics` of
        // prometheus-community for DataDog's `datadog`).
        let mut by_name = elsewhere.clone();
        by_name.extend(
            metas
                .iter()
                .filter_map(|(d, m)| m.as_ref().map(|m| (m.name.clone(), d.clone()))),
        );
        for (dir, meta) in &metas {
            let chart = dir
                .strip_prefix(&repo)
                .unwrap_or(dir)
                .to_string_lossy()
                .into_owned();
            let deps = match meta {
                Some(m) => dependencies(dir, m, &by_name),
                None => Err("Chart.yaml is unreadable or has no name".into()),
            };
            let mut values = vec![None];
            let mut ci: Vec<String> = std::fs::read_dir(dir.join("ci"))
                .into_iter()
                .flatten()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|f| f.ends_with("values.yaml"))
                .map(|f| format!("ci/{f}"))
                .collect();
            ci.sort();
            values.extend(ci.into_iter().map(Some));
            for v in values {
                out.push(Case {
                    repo: repo_name.clone(),
                    chart: chart.clone(),
                    dir: dir.clone(),
                    values: v,
                    deps: deps.clone(),
                });
            }
        }
    }
    out
}

/// Every file under `dir` (symlinks followed, as helm follows them), as
/// repository paths below `prefix`.
fn files_below(dir: &Path, prefix: &str, out: &mut Vec<(String, Vec<u8>)>) {
    for e in walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .flatten()
    {
        if e.file_type().is_file() {
            let Ok(rel) = e.path().strip_prefix(dir) else {
                continue;
            };
            if let Ok(bytes) = std::fs::read(e.path()) {
                out.push((
                    format!("{prefix}/{}", rel.to_string_lossy().replace('\\', "/")),
                    bytes,
                ));
            }
        }
    }
}

/// `render --app` of the case's Application in a fresh repository.
fn render_case(
    case: &Case,
    deps: &[(String, PathBuf)],
    oracle: &Oracle,
    binary: bool,
) -> Result<String, String> {
    let helm = binary.then_some(oracle.helm.as_path());
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let mut files = Vec::new();
    files_below(&case.dir, "chart", &mut files);
    for (name, dir) in deps {
        files_below(dir, &format!("chart/charts/{name}"), &mut files);
    }
    let mut helm_spec = json!({});
    if let Some(v) = &case.values {
        helm_spec["valueFiles"] = json!([v]);
    }
    let app = json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": "app", "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {
                "repoURL": "https://git.example.com/charts.git",
                "targetRevision": "main",
                "path": "chart",
                "helm": helm_spec,
            },
            "destination": {"server": "https://kubernetes.default.svc", "namespace": "apps"},
        }
    });
    files.push((
        "apps/app.yaml".into(),
        serde_json::to_vec(&app).map_err(|e| e.to_string())?,
    ));
    // The Argo CD release whose helm is the oracle's (helm v3.17.1: 3.0).
    files.push((
        ".gitops-lint.yaml".into(),
        format!("argocdVersion: \"{}\"\n", oracle.argocd).into_bytes(),
    ));
    write_commit(tmp.path(), "main", None, &files, "case").map_err(|e| e.to_string())?;
    let opts = Options {
        repo: Some(tmp.path().to_path_buf()),
        render: RenderOptions {
            helm: helm.map(Path::to_path_buf),
            helm_renderer: Some(if helm.is_some() {
                HelmRenderer::Binary
            } else {
                HelmRenderer::Native
            }),
            ..RenderOptions::default()
        },
        ..Options::default()
    };
    // A source left out is no render to compare: the harness counts it as
    // refused, never as identical.
    let rendered = lint::render_app(&Revision::Commit("main".into()), "app", &opts)
        .map_err(|e| e.to_string())?;
    if rendered.left_out.is_empty() {
        Ok(rendered.yaml)
    } else {
        Err(format!("left out: {}", rendered.left_out.join("; ")))
    }
}

/// A YAML stream as Argo CD reads helm's output (sigs.k8s.io/yaml, empty
/// documents dropped, lists expanded).
fn argocd_objects(text: &str) -> Result<Vec<Value>, String> {
    let docs = goyaml::load_all_as(text, Dialect::SigsYaml, &Limits::default())
        .map_err(|e| format!("not YAML: {e}"))?;
    let mut out = Vec::new();
    for d in docs {
        if !d.value.is_null() {
            expand_lists(d.into_value(), &mut out);
        }
    }
    Ok(out)
}

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
enum Outcome {
    Identical,
    Refused,
    Divergent,
    Skipped,
}

impl Outcome {
    const ALL: [Outcome; 4] = [
        Outcome::Identical,
        Outcome::Refused,
        Outcome::Divergent,
        Outcome::Skipped,
    ];
    fn word(self) -> &'static str {
        match self {
            Outcome::Identical => "identical",
            Outcome::Refused => "refused",
            Outcome::Divergent => "divergent",
            Outcome::Skipped => "skipped",
        }
    }
}

fn first_line(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    one.chars().take(400).collect()
}

/// The helm binary compared with, and the Argo CD release that ships it.
struct Oracle {
    helm: PathBuf,
    argocd: &'static str,
}

/// `GITOPS_LINT_HELM_DIFF_BINARY` (default: helm v3.17.1 on PATH): v3.17
/// is Argo CD 3.0's helm, v4 that of Argo CD 3.5, whose semantics the
/// native renderer models under `argocdVersion: "3.5"`.
fn oracle() -> Oracle {
    let helm = match std::env::var_os("GITOPS_LINT_HELM_DIFF_BINARY") {
        Some(p) => PathBuf::from(p),
        None => pinned_helm().unwrap_or_else(|| {
            panic!("no helm {PINNED_HELM} on PATH (scripts/install-oracles.sh)")
        }),
    };
    let out = std::process::Command::new(&helm)
        .args(["version", "--short"])
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", helm.display()));
    let version = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let argocd = if version.starts_with("v3.17.") {
        "3.0"
    } else if version.starts_with("v4.") {
        "3.5"
    } else {
        panic!(
            "{}: helm {version} is neither v3.17 (Argo CD 3.0) nor v4 (Argo CD 3.5)",
            helm.display()
        )
    };
    Oracle { helm, argocd }
}

fn check(case: &Case, oracle: &Oracle) -> (Outcome, String) {
    let deps = match &case.deps {
        Ok(d) => d,
        Err(why) => return (Outcome::Skipped, why.clone()),
    };
    let binary = render_case(case, deps, oracle, true);
    let native = render_case(case, deps, oracle, false);
    match (binary, native) {
        (Err(b), Err(n)) => (
            Outcome::Identical,
            format!(
                "both fail: helm: {} | native: {}",
                first_line(&b),
                first_line(&n)
            ),
        ),
        (Ok(_), Err(n)) => (Outcome::Refused, first_line(&n)),
        // The oracle stopped by gitops-lint's time limit judges nothing.
        (Err(b), Ok(_)) if b.contains("ran longer than") => (
            Outcome::Skipped,
            format!("the helm binary ran out of time: {}", first_line(&b)),
        ),
        (Err(b), Ok(_)) => (
            Outcome::Divergent,
            format!("helm fails, native renders: {}", first_line(&b)),
        ),
        (Ok(b), Ok(n)) => {
            let (want, got) = match (argocd_objects(&b), argocd_objects(&n)) {
                (Ok(w), Ok(g)) => (w, g),
                (w, g) => {
                    return (
                        Outcome::Divergent,
                        format!("unreadable output: helm {:?} native {:?}", w.err(), g.err()),
                    )
                }
            };
            let diff = compare(&got, &want);
            if diff.is_identical() {
                return (Outcome::Identical, String::new());
            }
            // helm draws random values and the clock afresh on every run
            // (`randAlphaNum`, `uuidv4`, `now`, and the checksums of what
            // holds them): what two helm runs disagree on is not compared.
            let Ok(again) = render_case(case, deps, oracle, true).and_then(|t| argocd_objects(&t))
            else {
                return (Outcome::Divergent, first_line(&diff.report()));
            };
            if again.len() != want.len() {
                return (
                    Outcome::Skipped,
                    "two helm runs render different objects (random names)".into(),
                );
            }
            let (mut got, mut want) = (got, want);
            for (i, w2) in again.iter().enumerate() {
                let mut paths = Vec::new();
                volatile_paths(&want[i], w2, String::new(), &mut paths);
                if paths.is_empty() {
                    continue;
                }
                // The native render lists the objects in helm's order; a
                // random name changes an object's identity, not its place.
                let id = identity(&want[i]);
                let same_place = got.len() == want.len();
                for p in &paths {
                    mask(&mut want[i], p, i);
                    if same_place {
                        mask(&mut got[i], p, i);
                    } else {
                        for g in got.iter_mut().filter(|g| identity(g) == id) {
                            mask(g, p, i);
                        }
                    }
                }
            }
            let diff = compare(&got, &want);
            if diff.is_identical() {
                (
                    Outcome::Identical,
                    "identical but for helm's random values".into(),
                )
            } else {
                (Outcome::Divergent, first_line(&diff.report()))
            }
        }
    }
}

/// An object's identity: apiVersion, kind, namespace, name.
fn identity(v: &Value) -> [String; 4] {
    [
        "/apiVersion",
        "/kind",
        "/metadata/namespace",
        "/metadata/name",
    ]
    .map(|p| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    })
}

/// The JSON pointers where `a` and `b` differ.
fn volatile_paths(a: &Value, b: &Value, at: String, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) if x.len() == y.len() => {
            for (k, v) in x {
                let p = format!("{at}/{}", k.replace('~', "~0").replace('/', "~1"));
                match y.get(k) {
                    Some(w) => volatile_paths(v, w, p, out),
                    None => out.push(at.clone()),
                }
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                volatile_paths(v, w, format!("{at}/{i}"), out);
            }
        }
        (x, y) if x != y => out.push(at),
        _ => {}
    }
}

/// Replaces what `pointer` names in the `i`th object (two objects with
/// random names stay two).
fn mask(v: &mut Value, pointer: &str, i: usize) {
    if let Some(x) = v.pointer_mut(pointer) {
        *x = Value::String(format!("<random in helm, object {i}>"));
    }
}

#[test]
#[ignore = "needs GITOPS_LINT_HELM_DIFF (a directory of chart repositories) and the pinned helm; run by scripts/helm-differential"]
fn helm_differential() {
    let Some(root) = std::env::var_os("GITOPS_LINT_HELM_DIFF").map(PathBuf::from) else {
        panic!("set GITOPS_LINT_HELM_DIFF=DIR, a directory of chart repositories");
    };
    let oracle = oracle();
    let mut cases = cases_of(&root);
    if let Ok(only) = std::env::var("GITOPS_LINT_HELM_DIFF_ONLY") {
        cases.retain(|c| c.name().contains(&only));
    }
    assert!(!cases.is_empty(), "no chart under {}", root.display());
    let jobs: usize = std::env::var("GITOPS_LINT_HELM_DIFF_JOBS")
        .ok()
        .and_then(|j| j.parse().ok())
        .unwrap_or(2)
        .max(1);
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<(Outcome, String)>>> = Mutex::new(vec![None; cases.len()]);
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(case) = cases.get(i) else { break };
                let r = check(case, &oracle);
                eprintln!("{}\t{}\t{}", r.0.word(), case.name(), r.1);
                results.lock().expect("results")[i] = Some(r);
            });
        }
    });
    let results = results.into_inner().expect("results");
    let mut table = String::from("repository\tchart\tvalues\toutcome\tdetail\n");
    let mut counts: BTreeMap<String, BTreeMap<Outcome, usize>> = BTreeMap::new();
    let mut divergent = Vec::new();
    for (case, r) in cases.iter().zip(results) {
        let (outcome, detail) = r.unwrap_or((Outcome::Divergent, "not run".into()));
        *counts
            .entry(case.repo.clone())
            .or_default()
            .entry(outcome)
            .or_default() += 1;
        let _ = writeln!(
            table,
            "{}\t{}\t{}\t{}\t{}",
            case.repo,
            case.chart,
            case.values.as_deref().unwrap_or("values.yaml"),
            outcome.word(),
            detail
        );
        if outcome == Outcome::Divergent {
            divergent.push(format!("{}: {detail}", case.name()));
        }
    }
    let report = std::env::var_os("GITOPS_LINT_HELM_DIFF_REPORT").map_or_else(
        || crate_root().join("target/helm-differential.tsv"),
        PathBuf::from,
    );
    std::fs::write(&report, table).expect("write the report");
    let mut total: BTreeMap<Outcome, usize> = BTreeMap::new();
    println!("repository\tcases\tidentical\trefused\tdivergent\tskipped");
    for (repo, c) in &counts {
        let n: usize = c.values().sum();
        let cells: Vec<String> = Outcome::ALL
            .iter()
            .map(|o| c.get(o).copied().unwrap_or(0).to_string())
            .collect();
        println!("{repo}\t{n}\t{}", cells.join("\t"));
        for (o, k) in c {
            *total.entry(*o).or_default() += k;
        }
    }
    let n: usize = total.values().sum();
    let cells: Vec<String> = Outcome::ALL
        .iter()
        .map(|o| total.get(o).copied().unwrap_or(0).to_string())
        .collect();
    println!("total\t{n}\t{}", cells.join("\t"));
    println!("table: {}", report.display());
    assert!(
        divergent.is_empty(),
        "{} divergent cases:\n{}",
        divergent.len(),
        divergent.join("\n")
    );
}
