//! Finding and reading kustomization files, checking their fields, and
//! reading the files they name under Kustomize's default load restrictor
//! (files in or below the kustomization's own directory; other
//! kustomization directories anywhere in the repository).

use serde_json::{Map, Value};

use super::resource::Res;
use super::{content, KResult};
use crate::manifest::Origin;
use crate::render::{RenderContext, RenderError, RenderErrorKind, KUSTOMIZATION_NAMES};
use crate::source::{self, path, EntryKind};

/// Every field a v5.5.0 kustomization may have.
const KNOWN_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "openapi",
    "namePrefix",
    "nameSuffix",
    "namespace",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "patchesStrategicMerge",
    "patchesJson6902",
    "patches",
    "images",
    "imageTags",
    "replacements",
    "replicas",
    "vars",
    "sortOptions",
    "resources",
    "components",
    "crds",
    "bases",
    "configMapGenerator",
    "secretGenerator",
    "helmGlobals",
    "helmCharts",
    "helmChartInflationGenerator",
    "generatorOptions",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "buildMetadata",
];

/// A loaded kustomization.
#[derive(Debug, Clone)]
pub(crate) struct Kustomization {
    /// Repository path of its directory.
    pub(crate) dir: String,
    /// Repository path of the file.
    pub(crate) file: String,
    /// Its fields, after Kustomize's fix-ups (`bases` appended to `resources`, …).
    pub(crate) k: Map<String, Value>,
}

impl Kustomization {
    /// `kind: Component`.
    #[must_use]
    pub(crate) fn is_component(&self) -> bool {
        self.k.get("kind").and_then(Value::as_str) == Some("Component")
    }

    /// A string field (`""` when absent).
    #[must_use]
    pub(crate) fn str(&self, f: &str) -> &str {
        self.k.get(f).and_then(Value::as_str).unwrap_or("")
    }

    /// A list field (empty when absent).
    #[must_use]
    pub(crate) fn list(&self, f: &str) -> &[Value] {
        self.k
            .get(f)
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }

    /// A string-map field, checking that every value is a string.
    ///
    /// # Errors
    /// Non-string values (Kustomize refuses `version: 1`).
    pub(crate) fn string_map(&self, f: &str) -> KResult<Vec<(String, String)>> {
        string_map(self.k.get(f), f, &self.file)
    }

    /// An error about this kustomization.
    #[must_use]
    pub(crate) fn err(&self, msg: impl std::fmt::Display) -> RenderError {
        content(format!("`{}`: {msg}", self.file)).at(self.file.clone(), None)
    }

    /// Reads a file named by this kustomization, enforcing the load restrictor.
    ///
    /// # Errors
    /// Missing files, files outside the kustomization root, files outside the repository.
    pub(crate) fn read(
        &self,
        cx: &RenderContext<'_>,
        rel: &str,
    ) -> KResult<(String, std::sync::Arc<[u8]>)> {
        let p = self.restricted(cx, rel)?;
        let bytes = cx.read(&p)?;
        Ok((p, bytes))
    }

    /// Resolves `rel` against the kustomization directory and checks it stays inside it.
    ///
    /// # Errors
    /// See [`Kustomization::read`].
    pub(crate) fn restricted(&self, cx: &RenderContext<'_>, rel: &str) -> KResult<String> {
        let p = join(&self.dir, rel, &self.file)?;
        let real = source::resolve(cx.tree, &p)
            .map_err(|e| RenderError::from_source(&e).at(self.file.clone(), None))?;
        let root = source::resolve(cx.tree, &self.dir).map_err(|e| RenderError::from_source(&e))?;
        if path::strip_dir(&real, &root).is_none() {
            return Err(self.err(format!(
                "security; file `{p}` is not in or below `{}`",
                crate::render::display_path(&self.dir)
            )));
        }
        Ok(p)
    }
}

/// Converts a YAML map of strings.
///
/// # Errors
/// Non-string values.
pub(crate) fn string_map(v: Option<&Value>, f: &str, file: &str) -> KResult<Vec<(String, String)>> {
    let mut out = Vec::new();
    let Some(v) = v else { return Ok(out) };
    if v.is_null() {
        return Ok(out);
    }
    let Some(m) = v.as_object() else {
        return Err(content(format!("`{file}`: `{f}` must be a map of strings")).at(file, None));
    };
    for (k, val) in m {
        match val {
            Value::String(s) => out.push((k.clone(), s.clone())),
            Value::Null => out.push((k.clone(), String::new())),
            other => {
                return Err(content(format!(
                    "`{file}`: the value of `{f}.{k}` must be a string, not `{other}` (quote it)"
                ))
                .at(file, None))
            }
        }
    }
    Ok(out)
}

/// A map of scalars as strings (how builtin plugin configurations read
/// `labels`/`annotations`: numbers and booleans become their text).
#[must_use]
pub(crate) fn lenient_string_map(v: Option<&Value>) -> Vec<(String, String)> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, x)| (k.clone(), super::smp::scalar_text(x)))
                .collect()
        })
        .unwrap_or_default()
}

/// Joins a relative path onto a directory, refusing absolute paths and
/// paths that leave the repository.
///
/// # Errors
/// Absolute or escaping paths.
pub(crate) fn join(dir: &str, rel: &str, file: &str) -> KResult<String> {
    if rel.starts_with('/') {
        return Err(
            content(format!("`{file}`: absolute path `{rel}` is not allowed")).at(file, None),
        );
    }
    path::join(dir, rel).ok_or_else(|| RenderError {
        kind: RenderErrorKind::OutsideRepo,
        message: format!("`{file}`: `{rel}` leads outside the repository"),
        file: Some(file.to_string()),
        line: None,
    })
}

/// `to` relative to directory `from` (both repository paths).
#[must_use]
pub(crate) fn relative(from: &str, to: &str) -> String {
    let a = path::split(from);
    let b = path::split(to);
    let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut parts: Vec<String> = vec!["..".to_string(); a.len() - common];
    parts.extend(b[common..].iter().cloned());
    parts.join("/")
}

/// Whether a resource entry names something remote.
#[must_use]
pub(crate) fn is_remote(s: &str) -> bool {
    s.contains("://")
        || s.starts_with("git@")
        || s.starts_with("github.com/")
        || s.starts_with("gitlab.com/")
        || s.starts_with("bitbucket.org/")
        || s.contains("?ref=")
        || s.contains(".git//")
}

/// The kustomization file in `dir`, if there is exactly one.
///
/// # Errors
/// Several kustomization files, or none.
pub(crate) fn find_file(cx: &RenderContext<'_>, dir: &str) -> KResult<String> {
    let mut found = Vec::new();
    for name in KUSTOMIZATION_NAMES {
        let p = crate::source::path::child(dir, name);
        if cx.kind_of(&p)? == Some(EntryKind::File) {
            found.push(p);
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(content(format!(
            "unable to find one of `kustomization.yaml`, `kustomization.yml` or `Kustomization` in directory `{}`",
            crate::render::display_path(dir)
        ))
        .at(dir, None)),
        _ => Err(content(format!(
            "found multiple kustomization files under `{}`",
            crate::render::display_path(dir)
        ))
        .at(dir, None)),
    }
}

/// Loads and checks the kustomization in `dir`.
///
/// # Errors
/// Missing or invalid files, unknown fields, unsupported features.
pub(crate) fn load(cx: &RenderContext<'_>, dir: &str) -> KResult<Kustomization> {
    let file = find_file(cx, dir)?;
    // Kustomize reads kustomization files with sigs.k8s.io/yaml (YAML 1.1).
    let bytes = cx.read(&file)?;
    std::str::from_utf8(&bytes)
        .map_err(|_| content(format!("`{file}` is not valid UTF-8")).at(file.clone(), None))?;
    // Shared with the parse cache: parsed once per blob, however many
    // overlays include this kustomization, at either revision.
    let docs = cx.load_yaml_shared_as(&file, goyaml::Dialect::SigsYaml)?;
    let docs: Vec<&goyaml::Doc> = docs.iter().filter(|d| !d.value.is_null()).collect();
    let mut k = match docs.as_slice() {
        [] => Map::new(),
        [d] => match &**d.value {
            Value::Object(m) => m.clone(),
            _ => {
                return Err(
                    content(format!("`{file}`: a kustomization must be a map")).at(file, None)
                )
            }
        },
        _ => {
            return Err(content(format!(
                "`{file}`: a kustomization must be a single YAML document"
            ))
            .at(file, None))
        }
    };
    // Go's encoding/json matches field names case-insensitively.
    let keys: Vec<String> = k.keys().cloned().collect();
    for key in keys {
        if KNOWN_FIELDS.contains(&key.as_str()) {
            continue;
        }
        if let Some(canon) = KNOWN_FIELDS.iter().find(|f| f.eq_ignore_ascii_case(&key)) {
            if !k.contains_key(*canon) {
                if let Some(v) = k.remove(&key) {
                    k.insert((*canon).to_string(), v);
                }
            }
        }
    }
    for key in k.keys() {
        if !KNOWN_FIELDS.contains(&key.as_str()) {
            return Err(RenderError::unsupported(format!(
                "`{file}`: unknown kustomization field `{key}` (Kustomize v5.5.0 refuses it)"
            ))
            .at(file.clone(), None));
        }
    }
    if let Some(kind) = k.get("kind").and_then(Value::as_str) {
        if kind != "Kustomization" && kind != "Component" {
            return Err(
                content(format!("`{file}`: unknown kustomization kind `{kind}`")).at(file, None),
            );
        }
    }
    let unsupported =
        |what: &str| RenderError::unsupported(format!("`{file}`: {what}")).at(file.clone(), None);
    for (f, what) in [
        (
            "crds",
            "`crds` (OpenAPI definitions for name references) is not supported natively",
        ),
        ("validators", "`validators` plugins are not run"),
        (
            "openapi",
            "`openapi` (a custom schema for merge keys) is not supported natively",
        ),
    ] {
        if k.get(f)
            .is_some_and(|v| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()))
        {
            return Err(unsupported(what));
        }
    }
    // Kustomize's FixKustomization.
    fix_helm_chart_args(&mut k, &file)?;
    if k.get("helmCharts")
        .is_some_and(|v| !v.is_null() && !v.is_array())
    {
        return Err(content(format!("`{file}`: `helmCharts` must be a list")).at(file, None));
    }
    let bases = k.remove("bases");
    if let Some(Value::Array(b)) = bases {
        let r = k
            .entry("resources")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(r) = r {
            r.extend(b);
        }
    }
    if let Some(Value::Array(t)) = k.remove("imageTags") {
        let r = k
            .entry("images")
            .or_insert_with(|| Value::Array(Vec::new()));
        if let Value::Array(r) = r {
            r.extend(t);
        }
    }
    for g in ["configMapGenerator", "secretGenerator"] {
        if let Some(Value::Array(list)) = k.get_mut(g) {
            for item in list.iter_mut() {
                if let Some(m) = item.as_object_mut() {
                    if let Some(env) = m.remove("env") {
                        if env.as_str().is_some_and(|s| !s.is_empty()) {
                            let envs = m.entry("envs").or_insert_with(|| Value::Array(Vec::new()));
                            if let Value::Array(e) = envs {
                                e.push(env);
                            }
                        }
                    }
                }
            }
        }
    }
    for f in [
        "resources",
        "components",
        "patchesStrategicMerge",
        "configurations",
    ] {
        for v in k.get(f).and_then(Value::as_array).into_iter().flatten() {
            if !v.is_string() {
                return Err(
                    content(format!("`{file}`: entries of `{f}` must be strings")).at(file, None),
                );
            }
        }
    }
    Ok(Kustomization {
        dir: dir.to_string(),
        file,
        k,
    })
}

/// Kustomize's `FixKustomization` for the deprecated
/// `helmChartInflationGenerator` (`types.SplitHelmParameters`): each entry
/// becomes a `helmCharts` entry appended after the others, and its
/// `chartHome` (the last non-empty one) becomes `helmGlobals.chartHome`
/// when there is no `helmGlobals`.
fn fix_helm_chart_args(k: &mut Map<String, Value>, file: &str) -> KResult<()> {
    let Some(old) = k.remove("helmChartInflationGenerator") else {
        return Ok(());
    };
    let list = match old {
        Value::Null => return Ok(()),
        Value::Array(a) => a,
        _ => {
            return Err(content(format!(
                "`{file}`: `helmChartInflationGenerator` must be a list"
            ))
            .at(file, None))
        }
    };
    let mut charts = Vec::new();
    let mut home = None;
    for e in list {
        let Value::Object(o) = e else {
            return Err(content(format!(
                "`{file}`: entries of `helmChartInflationGenerator` must be maps"
            ))
            .at(file, None));
        };
        let mut c = Map::new();
        for (from, to) in [
            ("chartName", "name"),
            ("chartVersion", "version"),
            ("chartRepoUrl", "repo"),
            ("values", "valuesFile"),
            ("valuesLocal", "valuesInline"),
            ("valuesMerge", "valuesMerge"),
            ("releaseName", "releaseName"),
        ] {
            if let Some(v) = o.get(from).filter(|v| !v.is_null()) {
                c.insert(to.to_string(), v.clone());
            }
        }
        if let Some(h) = o
            .get("chartHome")
            .and_then(Value::as_str)
            .filter(|h| !h.is_empty())
        {
            home = Some(h.to_string());
        }
        charts.push(Value::Object(c));
    }
    if k.get("helmGlobals").is_none_or(Value::is_null) {
        let mut g = Map::new();
        if let Some(h) = home {
            g.insert("chartHome".into(), Value::String(h));
        }
        k.insert("helmGlobals".into(), Value::Object(g));
    }
    let list = k
        .entry("helmCharts")
        .or_insert_with(|| Value::Array(Vec::new()));
    if list.is_null() {
        *list = Value::Array(Vec::new());
    }
    match list {
        Value::Array(a) => a.extend(charts),
        _ => return Err(content(format!("`{file}`: `helmCharts` must be a list")).at(file, None)),
    }
    Ok(())
}

/// Parses resource documents (expanding `*List` objects with `items`).
///
/// # Errors
/// Documents that are not maps.
pub(crate) fn resources_from_docs(
    docs: &[goyaml::Doc],
    file: Option<&str>,
    text: Option<&str>,
) -> KResult<Vec<Res>> {
    let mut out = Vec::new();
    let lines: Vec<&str> = text.map(|t| t.lines().collect()).unwrap_or_default();
    for (i, d) in docs.iter().enumerate() {
        if d.value.is_null() {
            continue;
        }
        let origin = Origin {
            file: file.map(str::to_string),
            line: Some(d.line),
            doc_index: Some(d.index),
        };
        let start = out.len();
        push_expanded(
            (*d.value).clone(),
            &origin,
            file.unwrap_or("inline"),
            &mut out,
        )?;
        if has_null(&d.value) && !lines.is_empty() {
            let from = (d.line as usize).saturating_sub(1);
            let to = docs
                .get(i + 1)
                .map_or(lines.len(), |n| (n.line as usize).saturating_sub(1))
                .min(lines.len());
            let keys = explicit_null_keys(lines.get(from..to).unwrap_or(&[]));
            for r in &mut out[start..] {
                r.explicit_nulls.clone_from(&keys);
            }
        }
    }
    Ok(out)
}

/// Whether a value holds a null anywhere.
#[must_use]
pub(crate) fn has_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.values().any(has_null),
        Value::Array(a) => a.iter().any(has_null),
        _ => false,
    }
}

/// Keys written as `key: null` (or `~`) and never as an empty `key:` in
/// these lines. The loaded value cannot tell the two apart, but kyaml's
/// strategic merge keeps the first and drops the second.
fn explicit_null_keys(lines: &[&str]) -> Vec<String> {
    let mut explicit = std::collections::BTreeSet::new();
    let mut empty = std::collections::BTreeSet::new();
    for l in lines {
        let t = l.trim_start().trim_start_matches("- ").trim();
        let t = match t.find(" #") {
            Some(i) => t[..i].trim_end(),
            None => t,
        };
        let Some((k, v)) = t.split_once(':') else {
            continue;
        };
        if k.is_empty() || k.contains(' ') && !k.starts_with('"') {
            continue;
        }
        let k = k.trim_matches(|c| c == '"' || c == '\'');
        match v.trim() {
            "null" | "Null" | "NULL" | "~" => {
                explicit.insert(k.to_string());
            }
            "" => {
                empty.insert(k.to_string());
            }
            _ => {}
        }
    }
    explicit.difference(&empty).cloned().collect()
}

fn push_expanded(v: Value, origin: &Origin, file: &str, out: &mut Vec<Res>) -> KResult<()> {
    if !v.is_object() {
        return Err(content(format!("`{file}`: a resource must be a map")).at(file, origin.line));
    }
    let is_list = v
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| k.ends_with("List"))
        && v.get("items").is_some();
    if is_list {
        if let Some(Value::Array(items)) = v.get("items") {
            for it in items.clone() {
                push_expanded(it, origin, file, out)?;
            }
        }
        return Ok(());
    }
    if v.as_object().is_some_and(Map::is_empty) {
        return Ok(());
    }
    out.push(Res::new(v, origin.clone()));
    Ok(())
}
