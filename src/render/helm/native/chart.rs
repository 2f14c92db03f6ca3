//! Charts loaded as helm v3.17 `pkg/chart/loader` loads them, from the
//! repository tree and from `.tgz` archives in memory (never unpacked to
//! disk).
//!
//! `LoadDir` walks the chart directory in lexical order with the chart's
//! `.helmignore` (and helm's default rule `templates/.?*`) applied to every
//! path below it, subcharts in `charts/` included; `LoadFiles` then sorts
//! the files: `Chart.yaml` (metadata), `values.yaml`, `values.schema.json`,
//! `requirements.yaml` (dependencies of a v1 chart), `templates/…`, and
//! `charts/<name>/…` or `charts/<name>.tgz` (a subchart, loaded the same
//! way; names starting with `_` or `.` skipped); everything else is a file
//! of `.Files`. `LoadArchiveFiles` drops each entry's first path segment.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::super::super::{chart_cache, RenderContext, RenderError};
use super::super::dependencies;
use crate::source::{path, EntryKind, Tree as _};
use gotemplate::go::semver::Version;
use gotemplate::V;

/// Most archives nested in one another that are loaded.
const MAX_ARCHIVE_NESTING: usize = 8;

/// Most charts (the chart and its subcharts, at every depth) one render
/// loads: an alias may duplicate a subchart, and a subchart its own.
const MAX_CHARTS: usize = 2_000;

/// One file of a chart, by its path relative to the chart.
#[derive(Debug, Clone)]
pub(in crate::render::helm) struct ChartFile {
    /// Path relative to the chart (`templates/x.yaml`).
    pub(crate) name: String,
    /// Its bytes (a UTF-8 byte order mark removed, as helm removes it).
    pub(crate) data: Arc<[u8]>,
}

/// One entry of `dependencies` (`chart.Dependency`).
#[derive(Debug, Clone, Default)]
pub(in crate::render::helm) struct Dependency {
    /// `name` (the alias once `ProcessDependencies` has run).
    pub(crate) name: String,
    /// `version`, a constraint.
    pub(crate) version: String,
    /// `repository`.
    pub(crate) repository: String,
    /// `condition`: comma-separated value paths.
    pub(crate) condition: String,
    /// `tags`.
    pub(crate) tags: Vec<String>,
    /// `enabled`, as the processing decides it.
    pub(crate) enabled: bool,
    /// `import-values`, as written.
    pub(crate) import_values: Vec<Value>,
    /// `alias`.
    pub(crate) alias: String,
}

/// `chart.Metadata`: `Chart.yaml`, with `requirements.yaml` read over it.
#[derive(Debug, Clone, Default)]
pub(in crate::render::helm) struct Metadata {
    /// `name`.
    pub(crate) name: String,
    /// `home`.
    pub(crate) home: String,
    /// `sources`.
    pub(crate) sources: Vec<String>,
    /// `version`.
    pub(crate) version: String,
    /// `description`.
    pub(crate) description: String,
    /// `keywords`.
    pub(crate) keywords: Vec<String>,
    /// `maintainers`, as written.
    pub(crate) maintainers: Vec<Value>,
    /// `icon`.
    pub(crate) icon: String,
    /// `apiVersion` (`v1` when absent).
    pub(crate) api_version: String,
    /// `condition`.
    pub(crate) condition: String,
    /// `tags`.
    pub(crate) tags: String,
    /// `appVersion`.
    pub(crate) app_version: String,
    /// `deprecated`.
    pub(crate) deprecated: bool,
    /// `annotations` (`None`: absent or null, Go's nil map, which encodes
    /// as `null`; `{}` is an empty map, `{}`).
    pub(crate) annotations: Option<BTreeMap<String, String>>,
    /// `kubeVersion`, a constraint.
    pub(crate) kube_version: String,
    /// `dependencies` (`None`: the key is absent, which helm tells from
    /// an empty list).
    pub(crate) dependencies: Option<Vec<Dependency>>,
    /// `type`.
    pub(crate) chart_type: String,
}

/// A loaded chart (`chart.Chart`).
#[derive(Debug, Clone, Default)]
pub(in crate::render::helm) struct Chart {
    /// Its metadata.
    pub(crate) metadata: Metadata,
    /// `values.yaml` (`c.Values`).
    pub(crate) values: BTreeMap<String, V>,
    /// `values.schema.json`.
    pub(crate) schema: Option<Arc<[u8]>>,
    /// `templates/…`.
    pub(crate) templates: Vec<ChartFile>,
    /// Every other file (`c.Files`): `.Files`, and `crds/`.
    pub(crate) files: Vec<ChartFile>,
    /// Subcharts (`c.Dependencies()`).
    pub(crate) dependencies: Vec<Chart>,
}

impl Chart {
    /// `Chart.Name`.
    #[must_use]
    pub(crate) fn name(&self) -> &str {
        &self.metadata.name
    }

    /// `CRDObjects`: each `crds/*.{yaml,yml,json}` file of this chart, then
    /// of each subchart in turn, with its path as `# Source:` names it
    /// (`ChartFullPath`: `parent/charts/<name>/crds/x.yaml`).
    #[must_use]
    pub(crate) fn crd_objects(&self, full_path: &str) -> Vec<(String, Arc<[u8]>)> {
        let mut out = Vec::new();
        for f in &self.files {
            let ext = f.name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
            if f.name.starts_with("crds/")
                && matches!(ext.as_deref(), Some("yaml" | "yml" | "json"))
            {
                out.push((format!("{full_path}/{}", f.name), Arc::clone(&f.data)));
            }
        }
        for d in &self.dependencies {
            out.extend(d.crd_objects(&format!("{full_path}/charts/{}", d.name())));
        }
        out
    }
}

/// A chart's files before `LoadFiles` sorts them, in load order.
pub(in crate::render::helm) type Files = Vec<ChartFile>;

/// Loads the chart of repository directory `dir` as `helm template .` in
/// it would after Argo CD's `helm dependency build` (`build`: archives it
/// removes from `charts/`, `file://` charts it places there).
///
/// # Errors
/// Anything helm's loader refuses, with its message.
pub(in crate::render::helm) fn load(
    cx: &RenderContext<'_>,
    dir: &str,
    build: Option<&dependencies::Build>,
    line: super::HelmLine,
) -> Result<Chart, RenderError> {
    let mut files = walk(cx, dir, line)?;
    let mut archives: Vec<(String, Files)> = Vec::new();
    if let Some(b) = build {
        files.retain(|f| !b.removed.iter().any(|r| f.name == format!("charts/{r}")));
        for dep in &b.charts {
            let name = format!("{}-{}.tgz", dep.name, dep.version);
            files.retain(|f| f.name != format!("charts/{name}"));
            // In the archive's (name) order, as `helm dependency build`
            // packs it.
            let mut packed = walk(cx, &dep.dir, line)?;
            packed.sort_by(|a, b| a.name.cmp(&b.name));
            archives.push((name, packed));
        }
        // Fetched from a repository: packed in `charts/` as the build
        // writes them.
        for dep in &b.fetched {
            let name = format!("charts/{}-{}.tgz", dep.name, dep.version);
            files.retain(|f| f.name != name);
            files.push(ChartFile {
                name,
                data: Arc::clone(&dep.bytes),
            });
        }
    }
    let mut count = 0;
    load_files(files, archives, 0, &mut count).map_err(RenderError::content)
}

/// Largest file `LoadDir` loads from helm v3.18 on
/// (`loader.MaxDecompressedFileSize`, `pkg/chart/loader/directory.go` at
/// v3.18.4, `pkg/chart/v2/loader/directory.go` at v4.2.1; v3.17.1 has no
/// such bound).
const MAX_DIR_FILE_BYTES: usize = 5 * 1024 * 1024;

/// `LoadDir`: the files of `dir` in walk order, `.helmignore` applied. From
/// helm v3.18 the first file (in walk order) over 5 MiB fails the load,
/// named by its base name (`fi.Name()`), its size taken before the byte
/// order mark is removed.
fn walk(cx: &RenderContext<'_>, dir: &str, line: super::HelmLine) -> Result<Files, RenderError> {
    let files = dependencies::chart_files(cx, dir)?;
    if line >= super::HelmLine::V3_18 {
        if let Some((name, _)) = files.iter().find(|(_, d)| d.len() > MAX_DIR_FILE_BYTES) {
            let base = name.rsplit('/').next().unwrap_or(name);
            return Err(RenderError::content(format!(
                "chart file {base:?} is larger than the maximum file size {MAX_DIR_FILE_BYTES}"
            )));
        }
    }
    Ok(files
        .into_iter()
        .map(|(name, data)| ChartFile {
            name,
            data: strip_bom(data),
        })
        .collect())
}

fn strip_bom(data: Arc<[u8]>) -> Arc<[u8]> {
    match data.strip_prefix(b"\xef\xbb\xbf") {
        Some(rest) => Arc::from(rest),
        None => data,
    }
}

/// The first YAML document of `data` as sigs.k8s.io/yaml decodes it.
fn yaml_doc(data: &[u8]) -> Result<Value, String> {
    let text = std::str::from_utf8(data).map_err(|e| format!("not UTF-8: {e}"))?;
    goyaml::load_first_sigs(text, &goyaml::Limits::default()).map_err(|e| e.to_string())
}

/// The name Go's `encoding/json` gives a value's type in an unmarshal error.
pub(super) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A YAML scalar read into a Go `string` by sigs.k8s.io/yaml
/// (`convertToJSONableObject`: a number or bool aimed at a string is
/// written as one, a float as `FormatFloat(f, 'g', -1, 32)`), so
/// `appVersion: 1.10` reads `"1.1"` and `annotations: {x: true}` `"true"`.
fn scalar_as_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
        Value::Number(n) => n.as_f64().map(gotemplate::value::format_float32_g),
        _ => None,
    }
}

/// Reads one string field of a Go struct from YAML.
fn string_field(m: &Value, key: &str, owner: &str) -> Result<Option<String>, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v @ (Value::String(_) | Value::Bool(_) | Value::Number(_))) => {
            Ok(scalar_as_string(v))
        }
        Some(other) => Err(format!(
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field {owner}.{key} of type string",
            json_kind(other)
        )),
    }
}

fn strings_field(m: &Value, key: &str, owner: &str) -> Result<Option<Vec<String>>, String> {
    match m.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(a)) => a
            .iter()
            .map(|x| match x {
                Value::String(_) | Value::Bool(_) | Value::Number(_) => {
                    Ok(scalar_as_string(x).unwrap_or_default())
                }
                Value::Null => Ok(String::new()),
                other => Err(format!(
                    "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field {owner}.{key} of type string",
                    json_kind(other)
                )),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Some),
        Some(other) => Err(format!(
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field {owner}.{key} of type []string",
            json_kind(other)
        )),
    }
}

/// `yaml.Unmarshal(data, c.Metadata)` over what is already read.
fn read_metadata(md: &mut Metadata, doc: &Value) -> Result<(), String> {
    const OWNER: &str = "Metadata";
    if doc.is_null() {
        return Ok(());
    }
    if !doc.is_object() {
        return Err(format!(
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type chart.Metadata",
            json_kind(doc)
        ));
    }
    let set = |target: &mut String, key: &str| -> Result<(), String> {
        if let Some(v) = string_field(doc, key, OWNER)? {
            *target = v;
        }
        Ok(())
    };
    set(&mut md.name, "name")?;
    set(&mut md.home, "home")?;
    set(&mut md.version, "version")?;
    set(&mut md.description, "description")?;
    set(&mut md.icon, "icon")?;
    set(&mut md.api_version, "apiVersion")?;
    set(&mut md.condition, "condition")?;
    set(&mut md.tags, "tags")?;
    set(&mut md.app_version, "appVersion")?;
    set(&mut md.kube_version, "kubeVersion")?;
    set(&mut md.chart_type, "type")?;
    if let Some(v) = strings_field(doc, "sources", OWNER)? {
        md.sources = v;
    }
    if let Some(v) = strings_field(doc, "keywords", OWNER)? {
        md.keywords = v;
    }
    match doc.get("deprecated") {
        None | Some(Value::Null) => {}
        Some(Value::Bool(b)) => md.deprecated = *b,
        Some(other) => {
            return Err(format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field {OWNER}.deprecated of type bool",
                json_kind(other)
            ))
        }
    }
    if let Some(Value::Array(a)) = doc.get("maintainers") {
        md.maintainers.clone_from(a);
    }
    if let Some(Value::Object(a)) = doc.get("annotations") {
        md.annotations = Some(a
            .iter()
            .map(|(k, v)| {
                let s = match v {
                    Value::String(_) | Value::Bool(_) | Value::Number(_) => {
                        scalar_as_string(v).unwrap_or_default()
                    }
                    Value::Null => String::new(),
                    other => return Err(format!(
                        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field {OWNER}.annotations of type string",
                        json_kind(other)
                    )),
                };
                Ok((k.clone(), s))
            })
            .collect::<Result<_, _>>()?);
    }
    match doc.get("dependencies") {
        None => {}
        Some(Value::Null) => md.dependencies = None,
        Some(Value::Array(a)) => {
            let mut deps = Vec::new();
            for d in a {
                deps.push(read_dependency(d)?);
            }
            md.dependencies = Some(deps);
        }
        Some(other) => {
            return Err(format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go struct field {OWNER}.dependencies of type []*chart.Dependency",
                json_kind(other)
            ))
        }
    }
    Ok(())
}

fn read_dependency(d: &Value) -> Result<Dependency, String> {
    const OWNER: &str = "Dependency";
    if d.is_null() {
        return Err("dependencies must not contain empty or null nodes".into());
    }
    let s = |key: &str| string_field(d, key, OWNER).map(Option::unwrap_or_default);
    Ok(Dependency {
        name: s("name")?,
        version: s("version")?,
        repository: s("repository")?,
        condition: s("condition")?,
        tags: strings_field(d, "tags", OWNER)?.unwrap_or_default(),
        enabled: d.get("enabled").and_then(Value::as_bool).unwrap_or(false),
        import_values: d
            .get("import-values")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        alias: s("alias")?,
    })
}

/// `sanitizeString`: whitespace becomes a space, unprintable runes go.
fn sanitize(s: &str) -> String {
    s.chars()
        .filter_map(|c| {
            if c.is_whitespace() {
                Some(' ')
            } else if c.is_control() {
                None
            } else {
                Some(c)
            }
        })
        .collect()
}

/// `Metadata.Validate`.
fn validate(md: &mut Metadata) -> Result<(), String> {
    for f in [
        &mut md.name,
        &mut md.description,
        &mut md.home,
        &mut md.icon,
        &mut md.condition,
        &mut md.tags,
        &mut md.app_version,
        &mut md.kube_version,
    ] {
        *f = sanitize(f);
    }
    if md.api_version.is_empty() {
        return Err("validation: chart.metadata.apiVersion is required".into());
    }
    if md.name.is_empty() {
        return Err("validation: chart.metadata.name is required".into());
    }
    if md.name != path::file_name(&md.name) || md.name == "." || md.name == ".." {
        return Err(format!(
            "validation: chart.metadata.name {:?} is invalid",
            md.name
        ));
    }
    if md.version.is_empty() {
        return Err("validation: chart.metadata.version is required".into());
    }
    if Version::parse(&md.version).is_err() {
        return Err(format!(
            "validation: chart.metadata.version {:?} is invalid",
            md.version
        ));
    }
    if !matches!(md.chart_type.as_str(), "" | "application" | "library") {
        return Err("validation: chart.metadata.type must be application or library".into());
    }
    let mut seen = std::collections::BTreeSet::new();
    for d in md.dependencies.iter().flatten() {
        let key = if d.alias.is_empty() {
            &d.name
        } else {
            &d.alias
        };
        if !d.alias.is_empty()
            && !d
                .alias
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!(
                "validation: dependency {:?} has disallowed characters in the alias",
                d.name
            ));
        }
        if !seen.insert(key.clone()) {
            return Err(format!(
                "validation: more than one dependency with name or alias {key:?}"
            ));
        }
    }
    Ok(())
}

/// `LoadFiles`: `files` sorted into a chart; `archives` are `.tgz`
/// subcharts already unpacked (the dependency build's), by file name.
fn load_files(
    files: Files,
    archives: Vec<(String, Files)>,
    depth: usize,
    count: &mut usize,
) -> Result<Chart, String> {
    *count += 1;
    if *count > MAX_CHARTS {
        return Err(format!(
            "the chart holds more than {MAX_CHARTS} subcharts, more than gitops-lint loads"
        ));
    }
    let mut c = Chart::default();
    let mut md: Option<Metadata> = None;
    for f in files.iter().filter(|f| f.name == "Chart.yaml") {
        let m = md.get_or_insert_with(Metadata::default);
        let doc = yaml_doc(&f.data).map_err(|e| format!("cannot load Chart.yaml: {e}"))?;
        read_metadata(m, &doc).map_err(|e| format!("cannot load Chart.yaml: {e}"))?;
        if m.api_version.is_empty() {
            m.api_version = "v1".into();
        }
    }
    let mut subcharts: BTreeMap<String, Files> = BTreeMap::new();
    let mut subchart_order: Vec<String> = Vec::new();
    for f in files {
        match f.name.as_str() {
            "Chart.yaml" | "Chart.lock" | "requirements.lock" => {
                if f.name != "Chart.yaml" {
                    yaml_doc(&f.data).map_err(|e| format!("cannot load {}: {e}", f.name))?;
                }
                if f.name == "requirements.lock"
                    && md.as_ref().is_some_and(|m| m.api_version == "v1")
                {
                    c.files.push(f);
                }
            }
            "values.yaml" => {
                let doc = yaml_doc(&f.data).map_err(|e| format!("cannot load values.yaml: {e}"))?;
                c.values = match doc {
                    Value::Null => BTreeMap::new(),
                    Value::Object(_) => match V::from_json(&doc) {
                        V::Map(m) => m.into_entries(),
                        _ => BTreeMap::new(),
                    },
                    other => return Err(format!(
                        "cannot load values.yaml: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                        json_kind(&other)
                    )),
                };
            }
            "values.schema.json" => c.schema = Some(Arc::clone(&f.data)),
            "requirements.yaml" => {
                let m = md.get_or_insert_with(Metadata::default);
                let doc =
                    yaml_doc(&f.data).map_err(|e| format!("cannot load requirements.yaml: {e}"))?;
                read_metadata(m, &doc)
                    .map_err(|e| format!("cannot load requirements.yaml: {e}"))?;
                if m.api_version == "v1" {
                    c.files.push(f);
                }
            }
            n if n.starts_with("templates/") => c.templates.push(f),
            n if n.starts_with("charts/") => {
                if n.ends_with(".prov") {
                    c.files.push(f);
                    continue;
                }
                let fname = &n["charts/".len()..];
                let (cname, rest) = fname.split_once('/').unwrap_or((fname, ""));
                let cname = cname.to_string();
                let rest = rest.to_string();
                if !subcharts.contains_key(&cname) {
                    subchart_order.push(cname.clone());
                }
                subcharts.entry(cname).or_default().push(ChartFile {
                    name: if rest.is_empty() {
                        fname.to_string()
                    } else {
                        rest
                    },
                    data: f.data,
                });
            }
            _ => c.files.push(f),
        }
    }
    let Some(mut md) = md else {
        return Err("Chart.yaml file is missing".into());
    };
    validate(&mut md)?;
    c.metadata = md;
    let mut archives: BTreeMap<String, Files> = archives.into_iter().collect();
    for name in archives.keys() {
        if !subcharts.contains_key(name) {
            subchart_order.push(name.clone());
        }
    }
    // helm ranges over a Go map here: the order of subcharts not named in
    // `dependencies` is unspecified; those it names are put in the
    // declared order by `ProcessDependencies`. Name order is used.
    subchart_order.sort();
    for n in subchart_order {
        if n.starts_with(['_', '.']) {
            continue;
        }
        let parent = c.name().to_string();
        let wrap = |e: String| format!("error unpacking subchart {n} in {parent}: {e}");
        let sub = if let Some(files) = archives.remove(&n) {
            load_files(files, Vec::new(), depth, count).map_err(wrap)?
        } else {
            let files = subcharts.remove(&n).unwrap_or_default();
            if n.ends_with(".tgz") {
                let Some(file) = files.first().filter(|f| f.name == n) else {
                    return Err(format!(
                        "error unpacking subchart tar in {parent}: expected {n}, got {}",
                        files.first().map_or("", |f| f.name.as_str())
                    ));
                };
                let unpacked = load_archive(&file.data, &n, depth).map_err(wrap)?;
                load_files(unpacked, Vec::new(), depth + 1, count).map_err(wrap)?
            } else {
                // A file directly in `charts/` has no path below the
                // subchart's name and is left out, as helm leaves it.
                let files: Files = files.into_iter().filter(|f| f.name != n).collect();
                load_files(files, Vec::new(), depth, count).map_err(wrap)?
            }
        };
        c.dependencies.push(sub);
    }
    Ok(c)
}

/// Every path of an unpacked archive but its directories.
struct ArchivePaths(Vec<String>);

impl crate::source::walk::Visitor for ArchivePaths {
    type Error = String;

    fn list(
        &mut self,
        tree: &dyn crate::source::Tree,
        dir: &str,
    ) -> Result<Option<Vec<crate::source::Entry>>, String> {
        tree.list_raw(dir).map(Some).map_err(|e| e.to_string())
    }

    fn entry(
        &mut self,
        _: &str,
        full: &str,
        e: &crate::source::Entry,
    ) -> Result<crate::source::walk::Flow, String> {
        if e.kind != EntryKind::Dir {
            self.0.push(full.to_string());
        }
        Ok(crate::source::walk::Flow::Continue)
    }
}

/// `LoadArchiveFiles`: each entry of a `.tgz` chart without its first path
/// segment, in the archive's (name) order, within the bounds of every
/// chart archive.
fn load_archive(data: &[u8], label: &str, depth: usize) -> Result<Files, String> {
    if depth >= MAX_ARCHIVE_NESTING {
        return Err(format!(
            "`{label}` nests chart archives more than {MAX_ARCHIVE_NESTING} deep"
        ));
    }
    let tree = chart_cache::unpack_archive(data, label)?;
    let mut out = Vec::new();
    let mut all = ArchivePaths(Vec::new());
    crate::source::walk::walk(&tree, "", &mut all)?;
    let mut all = all.0;
    all.sort();
    for full in all {
        let data = tree.read_raw(&full).map_err(|e| e.to_string())?;
        let Some((first, rest)) = full.split_once('/') else {
            if full == "Chart.yaml" {
                return Err("chart yaml not in base directory".into());
            }
            return Err(format!(
                "chart illegally contains content outside the base directory: {full:?}"
            ));
        };
        let _ = first;
        out.push(ChartFile {
            name: rest.to_string(),
            data: strip_bom(data),
        });
    }
    if out.is_empty() {
        return Err("no files in chart archive".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, text: &str) -> ChartFile {
        ChartFile {
            name: name.into(),
            data: Arc::from(text.as_bytes()),
        }
    }

    fn load_list(files: Files) -> Result<Chart, String> {
        let mut count = 0;
        load_files(files, Vec::new(), 0, &mut count)
    }

    #[test]
    fn files_are_sorted_as_load_files_sorts_them() {
        let c = load_list(vec![
            file("Chart.yaml", "name: shop\nversion: 1.0.0\n"),
            file("values.yaml", "a: 1\n"),
            file("templates/cm.yaml", "x"),
            file("templates/_helpers.tpl", "x"),
            file("crds/crd.yaml", "kind: CustomResourceDefinition\n"),
            file("config/app.conf", "x"),
            file("charts/db/Chart.yaml", "name: db\nversion: 2.0.0\n"),
            file("charts/db/templates/s.yaml", "x"),
            file("charts/_skip/Chart.yaml", "name: skip\nversion: 1.0.0\n"),
        ])
        .expect("loads");
        assert_eq!(c.metadata.api_version, "v1", "v1 when absent");
        assert_eq!(c.values.get("a"), Some(&V::Float(1.0)));
        assert_eq!(c.templates.len(), 2);
        let names: Vec<&str> = c.files.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["crds/crd.yaml", "config/app.conf"]);
        assert_eq!(c.dependencies.len(), 1, "`_skip` is skipped");
        assert_eq!(c.dependencies[0].name(), "db");
        assert_eq!(
            c.crd_objects("shop")
                .into_iter()
                .map(|(n, _)| n)
                .collect::<Vec<_>>(),
            ["shop/crds/crd.yaml"]
        );
    }

    #[test]
    fn metadata_is_validated_as_helm_validates_it() {
        let err = |text: &str| load_list(vec![file("Chart.yaml", text)]).err();
        assert_eq!(
            err("version: 1.0.0\n").as_deref(),
            Some("validation: chart.metadata.name is required")
        );
        assert_eq!(
            err("name: a\n").as_deref(),
            Some("validation: chart.metadata.version is required")
        );
        assert_eq!(
            err("name: a\nversion: one\n").as_deref(),
            Some("validation: chart.metadata.version \"one\" is invalid")
        );
        assert_eq!(
            err("name: a\nversion: 1.0.0\ntype: app\n").as_deref(),
            Some("validation: chart.metadata.type must be application or library")
        );
        assert!(
            err("name: a\nversion: 1.0.0\ndependencies:\n- name: b\n- name: b\n")
                .is_some_and(|e| e.contains("more than one dependency"))
        );
        assert_eq!(
            load_list(vec![file("values.yaml", "a: 1\n")])
                .err()
                .as_deref(),
            Some("Chart.yaml file is missing")
        );
        assert!(load_list(vec![
            file("Chart.yaml", "name: a\nversion: 1.0.0\n"),
            file("values.yaml", "- 1\n"),
        ])
        .err()
        .is_some_and(|e| e.starts_with("cannot load values.yaml")));
    }

    #[test]
    fn chart_yaml_scalars_read_into_strings_as_sigs_yaml_reads_them() {
        // helm v3.17.1 of a chart with `appVersion: 1.10` and
        // `annotations: {x: true}` printed `"1.1" true` for
        // `{{ .Chart.AppVersion | quote }} {{ .Chart.Annotations.x }}`.
        let c = load_list(vec![file(
            "Chart.yaml",
            "apiVersion: v2\nname: a\nversion: 1.0.0\nappVersion: 1.10\nannotations:\n  x: true\n  num: 7\n  f: 0.1\n  v: 1.0\nkeywords: [1.5, false]\n",
        )])
        .expect("loads");
        assert_eq!(c.metadata.app_version, "1.1");
        let a = c.metadata.annotations.expect("annotations");
        assert_eq!(a["x"], "true");
        assert_eq!(a["num"], "7");
        // `FormatFloat(f, 'g', -1, 32)` (helm printed `"0.1"` and `"1"`).
        assert_eq!(a["f"], "0.1");
        assert_eq!(a["v"], "1");
        assert_eq!(c.metadata.keywords, ["1.5", "false"]);
    }

    #[test]
    fn requirements_yaml_gives_a_v1_chart_its_dependencies() {
        let c = load_list(vec![
            file("Chart.yaml", "apiVersion: v1\nname: a\nversion: 1.0.0\n"),
            file(
                "requirements.yaml",
                "dependencies:\n- name: b\n  version: 1.x\n  condition: b.enabled\n",
            ),
        ])
        .expect("loads");
        let deps = c.metadata.dependencies.expect("dependencies");
        assert_eq!(deps[0].name, "b");
        assert_eq!(deps[0].condition, "b.enabled");
        assert_eq!(c.files[0].name, "requirements.yaml", "kept as a file in v1");
    }
}
