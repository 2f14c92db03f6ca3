//! Shared helpers of the Kustomize tests: the corpus location, rendering a
//! directory natively, and comparing two renders the way the corpus README
//! prescribes (identity set, values, then order).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use gitops_lint::render::{
    kustomize, ParseCache, RenderContext, RenderError, RenderOptions, SourceSpec,
};
use gitops_lint::source::{DirTree, Tree};
use serde_json::Value;

/// The crate's root, read when the test runs (cargo sets
/// `CARGO_MANIFEST_DIR` for it): a path compiled in would name whichever
/// clone last built a target directory that two clones share.
pub fn crate_root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
}

/// The subset of the corpus kept in the repository (`testdata/kustomize-corpus`).
pub fn vendored_corpus() -> PathBuf {
    crate_root().join("testdata/kustomize-corpus")
}

/// The full Kustomize corpus: `$GITOPS_LINT_CORPUS/kustomize` (or
/// `$GITOPS_LINT_CORPUS` itself when it holds the cases), else
/// `../shared/corpus/kustomize` beside the crate or two levels up (a
/// worktree). `None` when absent; a `GITOPS_LINT_CORPUS` that holds no
/// corpus is a mistake and panics.
pub fn full_corpus() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("GITOPS_LINT_CORPUS") {
        let p = PathBuf::from(p);
        let found = [p.join("kustomize"), p.clone()]
            .into_iter()
            .find(|d| d.join("index.tsv").is_file());
        assert!(
            found.is_some(),
            "GITOPS_LINT_CORPUS={} holds no Kustomize corpus (neither kustomize/index.tsv nor index.tsv)",
            p.display()
        );
        return found;
    }
    let root = crate_root();
    [
        "../shared/corpus/kustomize",
        "../../shared/corpus/kustomize",
    ]
    .into_iter()
    .map(|rel| root.join(rel))
    .find(|p| p.join("index.tsv").is_file())
}

/// The full corpus, for the tests that exist to run it (ignored by
/// default; `.ci/run` runs them when the corpus is present).
pub fn corpus_dir() -> PathBuf {
    full_corpus().unwrap_or_else(|| {
        panic!("the full Kustomize corpus is not found: set GITOPS_LINT_CORPUS=DIR (a directory holding kustomize/) or put shared/ beside the crate")
    })
}

/// One corpus case.
pub struct Case {
    pub name: String,
    pub dir: PathBuf,
    pub entry: String,
}

impl Case {
    pub fn all(dir: &Path) -> Vec<Case> {
        let mut out = Vec::new();
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .expect("read corpus")
            .flatten()
            .collect();
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for e in entries {
            let cy = e.path().join("case.yaml");
            if !cy.is_file() {
                continue;
            }
            let text = std::fs::read_to_string(&cy).expect("case.yaml");
            let entry = text
                .lines()
                .find_map(|l| l.strip_prefix("entry: "))
                .expect("entry")
                .trim()
                .to_string();
            out.push(Case {
                name: e.file_name().to_string_lossy().into_owned(),
                dir: e.path(),
                entry,
            });
        }
        out
    }

    pub fn expected(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(self.dir.join("expected.yaml")).expect("expected.yaml");
        parse_stream(&text)
    }
}

pub fn parse_stream(text: &str) -> Vec<Value> {
    goyaml::load_all(text)
        .expect("parse")
        .into_iter()
        .map(|d| d.into_value())
        .filter(|v| !v.is_null())
        .collect()
}

/// Renders the kustomization at `entry` (relative to `dir`) natively, as
/// Argo CD with `kustomize.buildOptions: --enable-helm` would, with `helm`
/// and the Application's `spec.source.kustomize`.
pub fn render_dir_with_helm(
    dir: &Path,
    entry: &str,
    helm: Option<&Path>,
    kustomize_options: Option<Value>,
) -> Result<Vec<Value>, RenderError> {
    let tree = DirTree::new(dir.to_path_buf(), Vec::new());
    let cache = ParseCache::default();
    // No helm: the native Helm renderer inflates the charts.
    let options = RenderOptions {
        helm: helm.map(Path::to_path_buf),
        ..RenderOptions::default()
    };
    let cx = RenderContext::new(&tree, &cache, &options);
    let spec = SourceSpec {
        path: entry.trim_end_matches('/').to_string(),
        kustomize_build_options: "--enable-helm".into(),
        kustomize: kustomize_options,
        ..SourceSpec::default()
    };
    Ok(kustomize::render(&cx, &spec)?
        .into_iter()
        .map(|o| o.value)
        .collect())
}

/// Renders the kustomization at `entry` (relative to `dir`) natively.
pub fn render_dir(dir: &Path, entry: &str) -> Result<Vec<Value>, RenderError> {
    let tree = DirTree::new(dir.to_path_buf(), Vec::new());
    render_tree(&tree, entry)
}

pub fn render_tree(tree: &dyn Tree, entry: &str) -> Result<Vec<Value>, RenderError> {
    let cache = ParseCache::default();
    let options = RenderOptions::default();
    let cx = RenderContext::new(tree, &cache, &options);
    let spec = SourceSpec {
        path: entry.trim_end_matches('/').to_string(),
        ..SourceSpec::default()
    };
    Ok(kustomize::render(&cx, &spec)?
        .into_iter()
        .map(|o| o.value)
        .collect())
}

/// `kubectl kustomize` on `dir/entry`, parsed (see [`kubectl_kustomize`]).
pub fn kubectl(dir: &Path, entry: &str) -> Result<Vec<Value>, String> {
    let run = kubectl_kustomize_at(dir, entry);
    if !run.ok {
        return Err(run.stderr);
    }
    Ok(parse_stream(&run.stdout))
}

/// What `kubectl kustomize DIR` did: success, stdout, stderr (with the
/// directory written as `<dir>`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct KubectlRun {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

/// The Kustomize version the oracle must embed.
const ORACLE_KUSTOMIZE: &str = "Kustomize Version: v5.5.0";

/// `kubectl` on PATH when it embeds Kustomize v5.5.0 (kubectl v1.32, the
/// pinned one from `scripts/install-oracles.sh`); `None` otherwise.
/// `GITOPS_LINT_REQUIRE_ORACLES=1` (set by `.ci/run`) turns its absence into
/// a failure, so CI never falls back to recordings.
pub fn live_kubectl() -> Option<&'static Path> {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    let found = FOUND.get_or_init(|| {
        let path = std::env::var_os("PATH")?;
        let bin = std::env::split_paths(&path)
            .map(|d| d.join("kubectl"))
            .find(|p| p.is_file())?;
        let out = std::process::Command::new(&bin)
            .args(["version", "--client"])
            .output()
            .ok()?;
        String::from_utf8_lossy(&out.stdout)
            .contains(ORACLE_KUSTOMIZE)
            .then_some(bin)
    });
    assert!(
        found.is_some() || std::env::var_os("GITOPS_LINT_REQUIRE_ORACLES").is_none(),
        "GITOPS_LINT_REQUIRE_ORACLES is set but no kubectl with {ORACLE_KUSTOMIZE} is on PATH (scripts/install-oracles.sh installs it)"
    );
    found.as_deref()
}

/// The helm version the oracle must be: the one Argo CD 3.0 ships and
/// `scripts/install-oracles.sh` installs.
pub const PINNED_HELM: &str = "v3.17.1";

/// `helm` on PATH when it is the pinned version; `None` otherwise.
pub fn pinned_helm() -> Option<PathBuf> {
    let helm = gitops_lint::cli::find_on_path("helm")?;
    let out = std::process::Command::new(&helm)
        .args(["version", "--short"])
        .output()
        .ok()?;
    String::from_utf8_lossy(&out.stdout)
        .starts_with(PINNED_HELM)
        .then_some(helm)
}

/// A digest of everything `kubectl kustomize dir` reads: every file under
/// `dir` (path and content, symlinks as their target), in path order.
fn input_digest(dir: &Path) -> String {
    use sha2::{Digest, Sha256};
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .flatten()
        .filter(|e| !e.file_type().is_dir())
        .map(|e| e.path().to_path_buf())
        .collect();
    files.sort();
    let mut h = Sha256::new();
    for f in files {
        let rel = f.strip_prefix(dir).unwrap_or(&f);
        h.update(rel.to_string_lossy().as_bytes());
        h.update([0]);
        let bytes = match std::fs::read_link(&f) {
            Ok(target) => target.to_string_lossy().into_owned().into_bytes(),
            Err(_) => std::fs::read(&f).unwrap_or_default(),
        };
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(&bytes);
    }
    h.finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Runs `kubectl kustomize dir` with the live oracle when there is one,
/// else answers from its recording in `testdata/kubectl-recordings/`
/// (keyed by a digest of the input). A live run must equal its recording;
/// `GITOPS_LINT_BLESS=1` with the live oracle writes missing or stale
/// recordings. A recording missing without the oracle fails the test.
/// Only success and stdout are compared with a recording.
pub fn kubectl_kustomize(dir: &Path) -> KubectlRun {
    kubectl_kustomize_at(dir, "")
}

/// [`kubectl_kustomize`] of `root/entry`, where the build may read anything
/// under `root` (an overlay's `../base`): the recording's key covers `root`.
pub fn kubectl_kustomize_at(root: &Path, entry: &str) -> KubectlRun {
    kubectl_kustomize_with(root, entry, &[])
}

/// [`kubectl_kustomize_at`] with extra `kubectl kustomize` flags (part of
/// the recording's key). `--enable-helm` runs the `helm` found on PATH,
/// which must then be the pinned v3.17.1 for a live run.
pub fn kubectl_kustomize_with(root: &Path, entry: &str, flags: &[&str]) -> KubectlRun {
    let dir = &root.join(entry);
    let key = if flags.is_empty() {
        format!("{}{entry}", input_digest(root))
    } else {
        format!("{}{entry} {}", input_digest(root), flags.join(" "))
    };
    let key: String = {
        use sha2::{Digest, Sha256};
        Sha256::digest(key.as_bytes())
            .iter()
            .take(12)
            .map(|b| format!("{b:02x}"))
            .collect()
    };
    let file = crate_root()
        .join("testdata/kubectl-recordings")
        .join(format!("{key}.json"));
    let recorded: Option<KubectlRun> = std::fs::read_to_string(&file)
        .ok()
        .map(|t| serde_json::from_str(&t).expect("a recording is JSON"));
    // `--enable-helm` makes kubectl run the `helm` on PATH: without the
    // pinned one a live run is not the oracle (kubectl alone may be there).
    let helm_ok = !flags.contains(&"--enable-helm") || pinned_helm().is_some();
    assert!(
        helm_ok || std::env::var_os("GITOPS_LINT_REQUIRE_ORACLES").is_none(),
        "GITOPS_LINT_REQUIRE_ORACLES is set but no helm {PINNED_HELM} is on PATH for `kubectl kustomize --enable-helm` (scripts/install-oracles.sh installs it)"
    );
    let Some(bin) = live_kubectl().filter(|_| helm_ok) else {
        return recorded.unwrap_or_else(|| {
            panic!(
                "no recorded `kubectl kustomize` output for {} ({}) and no kubectl with {ORACLE_KUSTOMIZE} (with helm {PINNED_HELM} for `--enable-helm`) on PATH: \
                 run scripts/install-oracles.sh, put its directory first on PATH and run the test with GITOPS_LINT_BLESS=1",
                dir.display(),
                file.display()
            )
        });
    };
    let out = std::process::Command::new(bin)
        .arg("kustomize")
        .args(flags)
        .arg(dir)
        .output()
        .expect("kubectl runs");
    let shown = root.display().to_string();
    let live = KubectlRun {
        ok: out.status.success(),
        stdout: String::from_utf8_lossy(&out.stdout).replace(&shown, "<dir>"),
        stderr: String::from_utf8_lossy(&out.stderr).replace(&shown, "<dir>"),
    };
    // Success and output must match; stderr is diagnostics whose framing
    // differs between kubectl builds (klog timestamps in v1.32.4).
    let same = recorded
        .as_ref()
        .is_some_and(|r| r.ok == live.ok && r.stdout == live.stdout);
    if !same {
        if std::env::var_os("GITOPS_LINT_BLESS").is_some() {
            std::fs::create_dir_all(file.parent().expect("parent")).expect("mkdir");
            let text = serde_json::to_string_pretty(&live).expect("json") + "\n";
            std::fs::write(&file, text).expect("write recording");
        } else {
            panic!(
                "the live `kubectl kustomize` of {} differs from its recording {} ({}): \
                 rerun with GITOPS_LINT_BLESS=1 to record it\n--- recorded\n{recorded:?}\n--- live\n{live:?}",
                dir.display(),
                file.display(),
                if recorded.is_some() {
                    "stale"
                } else {
                    "missing"
                }
            );
        }
    }
    live
}

fn key(v: &Value) -> String {
    let s = |p: &str| {
        v.pointer(p)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    format!(
        "{} {} {}/{}",
        s("/apiVersion"),
        s("/kind"),
        s("/metadata/namespace"),
        s("/metadata/name")
    )
}

/// How two renders differ.
#[derive(Default)]
pub struct Diff {
    pub missing: Vec<String>,
    pub extra: Vec<String>,
    pub duplicates: Vec<String>,
    pub hash_mismatch: Vec<String>,
    pub values: Vec<String>,
    pub order: Option<(Vec<String>, Vec<String>)>,
}

impl Diff {
    pub fn is_identical(&self) -> bool {
        self.missing.is_empty()
            && self.extra.is_empty()
            && self.duplicates.is_empty()
            && self.hash_mismatch.is_empty()
            && self.values.is_empty()
            && self.order.is_none()
    }

    pub fn only_order(&self) -> bool {
        self.order.is_some()
            && self.missing.is_empty()
            && self.extra.is_empty()
            && self.duplicates.is_empty()
            && self.hash_mismatch.is_empty()
            && self.values.is_empty()
    }

    pub fn report(&self) -> String {
        let mut s = String::new();
        for (what, list) in [
            ("missing", &self.missing),
            ("extra", &self.extra),
            ("duplicate", &self.duplicates),
            ("hash mismatch", &self.hash_mismatch),
            ("value", &self.values),
        ] {
            for x in list.iter().take(12) {
                let _ = writeln!(s, "  {what}: {x}");
            }
            if list.len() > 12 {
                let _ = writeln!(s, "  … {} more {what} differences", list.len() - 12);
            }
        }
        if let Some((got, want)) = &self.order {
            let _ = writeln!(
                s,
                "  order differs:\n    got:  {}\n    want: {}",
                got.join(", "),
                want.join(", ")
            );
        }
        s
    }
}

fn strip_hash(name: &str) -> Option<&str> {
    let (base, h) = name.rsplit_once('-')?;
    (h.len() == 10).then_some(base)
}

fn value_diff(path: &str, got: &Value, want: &Value, out: &mut Vec<String>) {
    match (got, want) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for k in keys {
                let p = format!("{path}.{k}");
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => value_diff(&p, x, y, out),
                    (Some(x), None) => out.push(format!("{p}: extra {x}")),
                    (None, Some(y)) => out.push(format!("{p}: missing (want {y})")),
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                out.push(format!("{path}: {} items, want {}", a.len(), b.len()));
            }
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                let label = y
                    .get("name")
                    .and_then(Value::as_str)
                    .map_or_else(|| i.to_string(), |n| format!("name={n}"));
                value_diff(&format!("{path}[{label}]"), x, y, out);
            }
        }
        (x, y) if x != y => out.push(format!("{path}: got {x}, want {y}")),
        _ => {}
    }
}

/// Compares a render with the expected render.
pub fn compare(got: &[Value], want: &[Value]) -> Diff {
    let mut d = Diff::default();
    let index = |vs: &[Value], dups: &mut Vec<String>| -> BTreeMap<String, Value> {
        let mut m = BTreeMap::new();
        for v in vs {
            if m.insert(key(v), v.clone()).is_some() {
                dups.push(key(v));
            }
        }
        m
    };
    let g = index(got, &mut d.duplicates);
    let w = index(want, &mut d.duplicates);
    let mut missing: Vec<String> = w.keys().filter(|k| !g.contains_key(*k)).cloned().collect();
    let mut extra: Vec<String> = g.keys().filter(|k| !w.contains_key(*k)).cloned().collect();
    missing.retain(|m| {
        let Some(base) = strip_hash(m) else {
            return true;
        };
        if let Some(pos) = extra.iter().position(|e| strip_hash(e) == Some(base)) {
            d.hash_mismatch
                .push(format!("{m} rendered as {}", extra[pos]));
            extra.remove(pos);
            return false;
        }
        true
    });
    d.missing = missing;
    d.extra = extra;
    for (k, wv) in &w {
        if let Some(gv) = g.get(k) {
            let mut out = Vec::new();
            value_diff("", gv, wv, &mut out);
            d.values
                .extend(out.into_iter().map(|p| format!("{k}: {p}")));
        }
    }
    let gk: Vec<String> = got.iter().map(key).collect();
    let wk: Vec<String> = want.iter().map(key).collect();
    if gk != wk && d.missing.is_empty() && d.extra.is_empty() && d.hash_mismatch.is_empty() {
        d.order = Some((gk, wk));
    }
    d
}
