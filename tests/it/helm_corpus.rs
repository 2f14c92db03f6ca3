//! Differential test of Helm sources against the corpus of real
//! `helm template` (v3.17.1) outputs made with Argo CD's invocation: the
//! subset vendored in `testdata/helm-corpus` always, and the full corpus
//! (`GITOPS_LINT_CORPUS=DIR`, a directory holding `helm/`, default
//! `../shared/corpus`) when asked for with `--ignored`, as `.ci/run` does.
//!
//! Each case becomes a git repository holding the chart, its value files
//! and an Application whose `spec.source.helm` (release name, destination
//! or `helm.namespace`, `valueFiles`, `values`/`valuesObject`,
//! `parameters`, `fileParameters`, `kubeVersion`, `apiVersions`,
//! `skipCrds`, `skipTests`, `skipSchemaValidation`) makes Argo CD run the
//! case's argv; `render --app` of it must print the recorded resources with
//! the same values, in helm's order, read as Argo CD reads helm's output
//! (sigs.k8s.io/yaml, lists expanded). A case that fails in helm must fail
//! with helm's message. Cases that no Application can express are listed
//! with their reason in `testdata/helm-corpus-unsupported.yaml`.
//!
//! Needs the pinned helm on PATH; without it the test says NOT RUN, and
//! fails where `GITOPS_LINT_REQUIRE_ORACLES` is set.
//!
//! Every case also goes through the native renderer (`--helm-renderer
//! native`, no helm binary), which must give the same objects (or fail with
//! helm's message where helm fails) for every case not listed, with the
//! reason, in `testdata/helm-corpus-native-unsupported.yaml`; a listed case
//! must fail with a render error (never a partial render), with the listed
//! reason when that is a "not supported natively" one, and the test fails
//! once a listed case renders identically, so the list cannot go stale.
//! A case it renders otherwise than helm is a failure unless listed, with
//! its reason, in `testdata/helm-corpus-native-known-divergences.yaml`.

use crate::kustomize_common;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use gitops_lint::lint::{self, Options, Revision};
use gitops_lint::render::{expand_lists, HelmRenderer, RenderOptions};
use gitops_lint::source::write_commit;
use goyaml::{Dialect, Limits};
use kustomize_common::{compare, crate_root, pinned_helm, PINNED_HELM};
use serde_json::{json, Map, Value};

/// The subset kept in the repository.
fn vendored_corpus() -> PathBuf {
    crate_root().join("testdata/helm-corpus")
}

/// The full Helm corpus: `$GITOPS_LINT_CORPUS/helm` (or the directory
/// itself when it holds the cases), else `shared/corpus/helm` beside the
/// crate or two levels up (a worktree). A `GITOPS_LINT_CORPUS` that holds no
/// Helm corpus is a mistake and panics.
fn corpus_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("GITOPS_LINT_CORPUS") {
        let p = PathBuf::from(p);
        return [p.join("helm"), p.clone()]
            .into_iter()
            .find(|d| d.join("index.tsv").is_file() && d.join("cases").is_dir())
            .unwrap_or_else(|| {
                panic!(
                    "GITOPS_LINT_CORPUS={} holds no Helm corpus (neither helm/index.tsv nor index.tsv with cases/)",
                    p.display()
                )
            });
    }
    let root = crate_root();
    ["../shared/corpus/helm", "../../shared/corpus/helm"]
        .into_iter()
        .map(|rel| root.join(rel))
        .find(|p| p.join("index.tsv").is_file())
        .unwrap_or_else(|| {
            panic!("the full Helm corpus is not found: set GITOPS_LINT_CORPUS=DIR (a directory holding helm/) or put shared/ beside the crate")
        })
}

/// One corpus case.
struct Case {
    name: String,
    dir: PathBuf,
    meta: Value,
}

impl Case {
    fn all(corpus: &Path) -> Vec<Case> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus.join("cases"))
            .expect("read the corpus cases")
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.join("case.yaml").is_file())
            .collect();
        dirs.sort();
        dirs.into_iter()
            .map(|dir| {
                let text = std::fs::read_to_string(dir.join("case.yaml")).expect("case.yaml");
                let meta = goyaml::load_all(&text)
                    .expect("case.yaml is YAML")
                    .into_iter()
                    .next()
                    .map(|d| d.into_value())
                    .expect("case.yaml has a document");
                Case {
                    name: dir
                        .file_name()
                        .unwrap_or_default()
                        .to_string_lossy()
                        .into_owned(),
                    dir,
                    meta,
                }
            })
            .collect()
    }

    fn invocation(&self, key: &str) -> &Value {
        &self.meta["invocation"][key]
    }

    fn expects_error(&self) -> bool {
        self.meta["expect"] == "error"
    }
}

/// Whether `name` can be an Application's `metadata.name` (a DNS-1123
/// subdomain).
fn valid_object_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|l| {
            !l.is_empty()
                && l.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                && !l.starts_with('-')
                && !l.ends_with('-')
        })
}

/// A case-relative path (`chart/x.yaml`, `values/x.yaml`) as a value file
/// of the Application, relative to the chart directory `chart/`.
fn from_chart(case_path: &str) -> String {
    case_path
        .strip_prefix("chart/")
        .map_or_else(|| format!("../{case_path}"), str::to_string)
}

/// The Application that makes Argo CD run the case's argv, and its name.
fn application(case: &Case) -> (String, Value) {
    let argocd = &case.meta["argocd"];
    let source_helm = &argocd["source_helm"];
    let release = case.invocation("release_name").as_str().unwrap_or_default();
    let app_name = argocd["application_name"]
        .as_str()
        .filter(|n| valid_object_name(n))
        .unwrap_or("app");
    let mut helm = Map::new();
    if release != app_name {
        helm.insert("releaseName".into(), json!(release));
    }
    let destination_ns = argocd["destination_namespace"].as_str();
    let ns = case.invocation("namespace").as_str();
    if ns.is_some() && ns != destination_ns {
        helm.insert("namespace".into(), json!(ns));
    }
    if let Some(v) = case.invocation("kube_version").as_str() {
        helm.insert("kubeVersion".into(), json!(v));
    }
    let strings = |key: &str| -> Vec<String> {
        case.invocation(key)
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let api_versions = strings("api_versions");
    if !api_versions.is_empty() {
        helm.insert("apiVersions".into(), json!(api_versions));
    }
    // Argo CD writes `values`/`valuesObject` to a file passed last.
    let mut value_files = strings("value_files");
    let extra = ["values", "valuesObject"]
        .into_iter()
        .find(|k| !source_helm[*k].is_null());
    if let Some(k) = extra {
        value_files.pop();
        helm.insert(k.into(), source_helm[k].clone());
    }
    if !value_files.is_empty() {
        let files: Vec<String> = value_files.iter().map(|f| from_chart(f)).collect();
        helm.insert("valueFiles".into(), json!(files));
    }
    let mut parameters = Vec::new();
    for (key, force) in [("set", false), ("set_string", true)] {
        for p in case.invocation(key).as_array().into_iter().flatten() {
            let mut param = json!({"name": p["name"], "value": p["value"]});
            if force {
                param["forceString"] = json!(true);
            }
            parameters.push(param);
        }
    }
    if !parameters.is_empty() {
        helm.insert("parameters".into(), json!(parameters));
    }
    let file_parameters: Vec<Value> = case
        .invocation("set_file")
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| json!({"name": p["name"], "path": from_chart(p["path"].as_str().unwrap_or_default())}))
        .collect();
    if !file_parameters.is_empty() {
        helm.insert("fileParameters".into(), json!(file_parameters));
    }
    for (key, flag) in [
        ("skip_crds", "skipCrds"),
        ("skip_tests", "skipTests"),
        ("skip_schema_validation", "skipSchemaValidation"),
    ] {
        if case.invocation(key) == &json!(true) {
            helm.insert(flag.into(), json!(true));
        }
    }
    let mut destination = json!({"server": "https://kubernetes.default.svc"});
    if let Some(ns) = destination_ns {
        destination["namespace"] = json!(ns);
    }
    let app = json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": app_name, "namespace": "argocd"},
        "spec": {
            "project": "default",
            "source": {
                "repoURL": "https://git.example.com/charts.git",
                "targetRevision": "main",
                "path": "chart",
                "helm": Value::Object(helm),
            },
            "destination": destination,
        }
    });
    (app_name.to_string(), app)
}

/// Every file under `dir` (symlinks followed, as helm follows them), as
/// repository paths below `prefix`.
fn files_below(dir: &Path, prefix: &str, out: &mut Vec<(String, Vec<u8>)>) {
    if !dir.exists() {
        return;
    }
    for e in walkdir::WalkDir::new(dir)
        .follow_links(true)
        .sort_by_file_name()
    {
        let e = e.expect("readable case file");
        if e.file_type().is_file() {
            let rel = e
                .path()
                .strip_prefix(dir)
                .expect("inside the case")
                .to_string_lossy()
                .replace('\\', "/");
            out.push((
                format!("{prefix}/{rel}"),
                std::fs::read(e.path()).expect("readable case file"),
            ));
        }
    }
}

/// The case's chart directory. A case sharing another's chart has `chart`
/// as a relative symlink to it, or, where the corpus was copied without
/// symlinks, as a file holding the link's target.
fn chart_dir(case: &Case) -> PathBuf {
    let chart = case.dir.join("chart");
    if chart.is_file() {
        let target = std::fs::read_to_string(&chart).expect("readable chart link");
        return case.dir.join(target.trim());
    }
    chart
}

/// `render --app` of the case's Application in a fresh repository, with
/// `helm` (the binary renderer) or natively (`None`).
fn render_case(case: &Case, helm: Option<&Path>) -> Result<String, String> {
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let (name, app) = application(case);
    let mut files = Vec::new();
    files_below(&chart_dir(case), "chart", &mut files);
    files_below(&case.dir.join("values"), "values", &mut files);
    files.push((
        "apps/app.yaml".into(),
        serde_json::to_vec(&app).map_err(|e| e.to_string())?,
    ));
    // The corpus is helm v3.17.1's output, the helm of Argo CD 3.0: the
    // native renderer renders as the target Argo CD's helm.
    // GITOPS_LINT_CORPUS_ARGOCD_VERSION renders as another release's helm,
    // to see which cases it refuses (the expectations stay v3.17.1's).
    let argocd =
        std::env::var("GITOPS_LINT_CORPUS_ARGOCD_VERSION").unwrap_or_else(|_| "3.0".into());
    files.push((
        ".gitops-lint.yaml".into(),
        format!("argocdVersion: \"{argocd}\"\n").into_bytes(),
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
    lint::render_app(&Revision::Commit("main".into()), &name, &opts)
        .map(|r| r.yaml)
        .map_err(|e| e.to_string())
}

/// A YAML stream as Argo CD reads helm's output: sigs.k8s.io/yaml, empty
/// and comment-only documents dropped, lists expanded (AC `GenerateManifests`).
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

/// Objects as Argo CD applies them: of two with the same identity the
/// last one (AC `controller/state.go` `DeduplicateTargetObjects`), which
/// `render --app` prints where the first one was.
fn applied(objects: Vec<Value>) -> Vec<Value> {
    let id = |v: &Value| {
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
    };
    let mut at: BTreeMap<[String; 4], usize> = BTreeMap::new();
    let mut out: Vec<Value> = Vec::new();
    for v in objects {
        match at.get(&id(&v)) {
            Some(&i) => out[i] = v,
            None => {
                at.insert(id(&v), out.len());
                out.push(v);
            }
        }
    }
    out
}

/// Helm's error message: its first line without `Error: `.
fn helm_error(case: &Case) -> String {
    let text = std::fs::read_to_string(case.dir.join("expected-error.txt")).unwrap_or_default();
    let first = text
        .lines()
        .find(|l| l.starts_with("Error: "))
        .unwrap_or_default();
    first.trim_start_matches("Error: ").trim().to_string()
}

/// The cases of a list in `testdata/` (`helm-corpus-unsupported.yaml`,
/// `helm-corpus-known-divergences.yaml`), with their reasons.
fn case_list(file: &str) -> BTreeMap<String, String> {
    let p = crate_root().join("testdata").join(file);
    let text = std::fs::read_to_string(&p).expect("read the case list");
    let mut out = BTreeMap::new();
    for d in goyaml::load_all(&text).expect("parse the case list") {
        for e in d.value.as_array().cloned().unwrap_or_default() {
            let case = e["case"].as_str().expect("case").to_string();
            let reason = e["reason"].as_str().expect("reason").to_string();
            assert!(!reason.trim().is_empty(), "{case}: empty reason");
            out.insert(case, reason);
        }
    }
    out
}

/// What checking one case found.
enum Outcome {
    /// As helm renders it (or fails as helm fails, with its message).
    Identical,
    /// The render failed where helm renders.
    RenderFailed(String),
    /// Anything else that differs.
    Differs(String),
}

/// A subchart that `case.yaml` lists under `dependencies` and this copy of
/// the corpus lacks: helm itself cannot render such a case.
fn missing_subchart(case: &Case) -> Option<String> {
    let chart = chart_dir(case);
    case.meta["dependencies"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|d| d["path"].as_str())
        .find(|p| !chart.join(p).exists())
        .map(|p| format!("chart/{p}"))
}

fn check_case(case: &Case, helm: Option<&Path>) -> Outcome {
    let rendered = render_case(case, helm);
    if case.expects_error() {
        let want = helm_error(case);
        return match rendered {
            Ok(text) => Outcome::Differs(format!(
                "helm fails with `{want}` and the render succeeded:\n{text}"
            )),
            Err(e) if e.contains(&want) => Outcome::Identical,
            Err(e) => Outcome::RenderFailed(format!(
                "failed as helm does, but the message lacks helm's `{want}`: {e}"
            )),
        };
    }
    let text = match rendered {
        Ok(t) => t,
        Err(e) => return Outcome::RenderFailed(format!("render failed: {e}")),
    };
    let got = match argocd_objects(&text) {
        Ok(g) => g,
        Err(e) => return Outcome::Differs(format!("render --app printed {e}:\n{text}")),
    };
    let expected = std::fs::read_to_string(case.dir.join("expected.yaml")).unwrap_or_default();
    let want = match argocd_objects(&expected) {
        Ok(w) => applied(w),
        Err(e) => return Outcome::Differs(format!("expected.yaml is {e}")),
    };
    let diff = compare(&got, &want);
    if diff.is_identical() {
        Outcome::Identical
    } else {
        Outcome::Differs(format!("differs from helm template:\n{}", diff.report()))
    }
}

/// Checks every case of the corpus at `dir` (at least `min_cases`) with
/// both renderers; `HELM_CASE=<text>` keeps only the cases whose name
/// contains it.
fn check_corpus(dir: &Path, min_cases: usize, full: bool) {
    check_renderer(dir, min_cases, full, &Renderer::NATIVE, None);
    let Some(helm) = pinned_helm() else {
        let line = format!(
            "NOT RUN: the Helm corpus at {}: no helm {PINNED_HELM} on PATH (scripts/install-oracles.sh)",
            dir.display()
        );
        let _ = writeln!(std::io::stderr(), "{line}");
        assert!(
            std::env::var_os("GITOPS_LINT_REQUIRE_ORACLES").is_none(),
            "{line}"
        );
        return;
    };
    check_renderer(dir, min_cases, full, &Renderer::BINARY, Some(&helm));
}

/// One Helm renderer as the corpus check sees it: its name in the output
/// and the lists of cases it does not render identically.
struct Renderer {
    name: &'static str,
    /// Cases it refuses: each must fail, never render partially.
    unsupported: &'static str,
    /// Cases it renders otherwise than helm, each with why.
    divergences: &'static str,
}

impl Renderer {
    const NATIVE: Renderer = Renderer {
        name: "native",
        unsupported: "helm-corpus-native-unsupported.yaml",
        divergences: "helm-corpus-native-known-divergences.yaml",
    };
    const BINARY: Renderer = Renderer {
        name: "binary",
        unsupported: "helm-corpus-unsupported.yaml",
        divergences: "helm-corpus-known-divergences.yaml",
    };
}

/// `renderer` over the corpus at `dir` (`helm`: the pinned binary, for the
/// binary renderer): identical where not listed, failing where listed as
/// unsupported (with the listed reason, when it names what is not
/// implemented), different where listed as a divergence.
fn check_renderer(
    dir: &Path,
    min_cases: usize,
    full: bool,
    renderer: &Renderer,
    helm: Option<&Path>,
) {
    let name = renderer.name;
    let unsupported = case_list(renderer.unsupported);
    let divergences = case_list(renderer.divergences);
    let mut cases = Case::all(dir);
    assert!(
        cases.len() >= min_cases,
        "the corpus at {} has only {} cases",
        dir.display(),
        cases.len()
    );
    if full {
        for listed in unsupported.keys().chain(divergences.keys()) {
            assert!(
                cases.iter().any(|c| &c.name == listed),
                "testdata/{} or testdata/{} names unknown case {listed}",
                renderer.unsupported,
                renderer.divergences
            );
        }
    }
    let total = cases.len();
    if let Ok(only) = std::env::var("HELM_CASE") {
        cases.retain(|c| c.name.contains(&only));
    }
    let mut identical = 0;
    let mut not_supported = 0;
    let mut failures = Vec::new();
    let mut unlisted = Vec::new();
    for case in &cases {
        // Said, and not counted as supported: helm cannot render it either.
        if let Some(missing) = missing_subchart(case) {
            println!(
                "{name}: incomplete case, not supported: {} ({missing} is missing from this copy of the corpus)",
                case.name
            );
            not_supported += 1;
            continue;
        }
        let outcome = check_case(case, helm);
        if let Some(reason) = unsupported.get(&case.name) {
            not_supported += 1;
            match outcome {
                Outcome::RenderFailed(why) => {
                    // A reason that names what is not implemented must be
                    // the reason the render gives.
                    if reason.starts_with("not supported natively:") && !why.contains(reason.as_str()) {
                        failures.push(format!(
                            "{}: listed as `{reason}` in testdata/{}, but the {name} render fails otherwise: {why}",
                            case.name, renderer.unsupported
                        ));
                    } else {
                        println!("{name}: unsupported: {} ({reason})", case.name);
                    }
                }
                Outcome::Identical => failures.push(format!(
                    "{}: listed as unsupported but renders identically now; remove it from testdata/{}",
                    case.name, renderer.unsupported
                )),
                Outcome::Differs(why) => failures.push(format!(
                    "{}: listed as unsupported, yet the {name} render succeeds and differs (a partial render): {why}",
                    case.name
                )),
            }
            continue;
        }
        if let Some(reason) = divergences.get(&case.name) {
            not_supported += 1;
            match outcome {
                Outcome::Identical => failures.push(format!(
                    "{}: listed as a known divergence but is identical now; remove it from testdata/{}",
                    case.name, renderer.divergences
                )),
                Outcome::RenderFailed(_) | Outcome::Differs(_) => {
                    println!("{name}: known divergence, not counted as identical: {} ({reason})", case.name);
                }
            }
            continue;
        }
        match outcome {
            Outcome::Identical => identical += 1,
            Outcome::RenderFailed(why) | Outcome::Differs(why) => {
                let first = why.lines().next().unwrap_or_default().to_string();
                unlisted.push(format!(
                    "- case: {}\n  reason: {}",
                    case.name,
                    serde_json::to_string(&first).unwrap_or_default()
                ));
                failures.push(format!("{} ({name}): {why}", case.name));
            }
        }
    }
    println!(
        "{name}: helm corpus at {}: identical {identical} / supported {} / total {total}",
        dir.display(),
        cases.len() - not_supported
    );
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from helm template ({name} renderer):\n\n{}\n\nunlisted failures, as list entries:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n\n"),
        unlisted.join("\n")
    );
}

/// Cases for constructs the native renderer once rendered otherwise than
/// helm on real charts (`testdata/helm-regressions/README.md`).
#[test]
fn helm_regressions_render_like_helm_template() {
    check_corpus(&crate_root().join("testdata/helm-regressions"), 4, false);
}

#[test]
fn vendored_helm_corpus_subset_renders_like_helm_template() {
    let dir = vendored_corpus();
    let index = std::fs::read_to_string(dir.join("index.tsv")).expect("index.tsv");
    let listed: Vec<&str> = index
        .lines()
        .skip(1)
        .filter_map(|l| l.split('\t').next())
        .collect();
    let present: Vec<String> = Case::all(&dir).into_iter().map(|c| c.name).collect();
    assert_eq!(
        listed, present,
        "index.tsv lists exactly the vendored cases"
    );
    check_corpus(&dir, 12, false);
}

#[test]
#[ignore = "the full corpus (GITOPS_LINT_CORPUS=DIR or ../shared/corpus); .ci/run runs it"]
fn full_corpus_renders_like_helm_template() {
    let dir = corpus_dir();
    // The vendored cases are copies of the full corpus's.
    for case in Case::all(&vendored_corpus()) {
        let full = dir.join("cases").join(&case.name);
        for file in ["expected.yaml", "expected-error.txt", "case.yaml"] {
            assert_eq!(
                std::fs::read(full.join(file)).ok(),
                std::fs::read(case.dir.join(file)).ok(),
                "{}: the vendored {file} differs from {}",
                case.name,
                full.display()
            );
        }
    }
    check_corpus(&dir, 180, true);
}
