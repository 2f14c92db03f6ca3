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
use gitops_lint::yaml;
use serde_json::Value;

/// The corpus directory: `$GITOPS_LINT_CORPUS`, else `../shared/corpus/kustomize`
/// next to the crate (a checkout beside `shared/`), else two levels up (a worktree).
pub fn corpus_dir() -> PathBuf {
    if let Ok(p) = std::env::var("GITOPS_LINT_CORPUS") {
        return PathBuf::from(p);
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for rel in [
        "../shared/corpus/kustomize",
        "../../shared/corpus/kustomize",
    ] {
        let p = root.join(rel);
        if p.is_dir() {
            return p;
        }
    }
    panic!("kustomize corpus not found: set GITOPS_LINT_CORPUS or put shared/ beside the crate");
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
    yaml::load_all(text)
        .expect("parse")
        .into_iter()
        .map(|d| d.value)
        .filter(|v| !v.is_null())
        .collect()
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

/// Runs `kubectl kustomize` on `dir/entry`.
pub fn kubectl(dir: &Path, entry: &str) -> Result<Vec<Value>, String> {
    let out = std::process::Command::new("kubectl")
        .arg("kustomize")
        .arg(dir.join(entry))
        .output()
        .map_err(|e| format!("kubectl: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).into_owned());
    }
    Ok(parse_stream(&String::from_utf8_lossy(&out.stdout)))
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
