//! Helm's objects that are Go values rather than maps, as template host
//! objects: `.Capabilities` (`*chartutil.Capabilities`: `KubeVersion`,
//! `APIVersions` with `Has`, `HelmVersion`), `.Files` (`engine.files`:
//! `Get`, `GetBytes`, `Glob`, `AsConfig`, `AsSecrets`, `Lines`) and
//! `.Chart` (`chart.Metadata` with `IsRoot`, its `Maintainers` and
//! `Dependencies`; Helm 4's is a map of them). Each prints as Go's `fmt`
//! prints it, and serializes as `encoding/json` does (JSON names, field
//! order, `omitempty`).
//!
//! What Go does not determine is never rendered: a pointer printed inside
//! a value (Go prints its address) or `AsConfig` of two files with the
//! same name and different contents (Go's map order picks one) mark the
//! render [`Volatile`], and the engine refuses it.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use base64::Engine as _;

use super::chart::{ChartFile, Dependency, Metadata};
use gotemplate::go::glob::{Glob, GlobError};
use gotemplate::{Host, HostObject, Json, V};

#[cfg(test)]
use super::version::DEFAULT_API_VERSIONS_3_17 as DEFAULT_API_VERSIONS;
use super::version::{BuildInfo, HelmLine};

/// What a render read that Go does not determine; the engine refuses a
/// render once this holds a reason.
#[derive(Debug, Clone, Default)]
pub(super) struct Volatile(Arc<Mutex<Option<String>>>);

impl Volatile {
    /// Records `why`, unless a reason is already recorded.
    fn mark(&self, why: &str) {
        if let Ok(mut g) = self.0.lock() {
            g.get_or_insert_with(|| why.to_string());
        }
    }

    /// The first reason recorded, clearing it.
    pub(super) fn take(&self) -> Option<String> {
        self.0.lock().ok().and_then(|mut g| g.take())
    }
}

fn host(h: impl HostObject + 'static) -> V {
    V::Host(Host(Arc::new(h)))
}

fn str_list(l: &[String]) -> V {
    V::List(l.iter().map(|s| V::Str(s.clone())).collect())
}

/// A struct's fields as `%v` prints them: `{a b c}`.
fn struct_format(fields: &[V]) -> String {
    let mut out = String::from("{");
    for (i, f) in fields.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        match f {
            V::Host(h) => out.push_str(&h.0.format(false)),
            // `%v` prints an empty string as nothing and nil as `<nil>`.
            other => out.push_str(&other.go_string()),
        }
    }
    out.push('}');
    out
}

/// `chartutil.KubeVersion`. Reached through the `*Capabilities` it is
/// addressable, so its pointer's `String` and `GitVersion` apply; a copy
/// (what a function is given) has neither, and prints as a struct.
///
/// Helm 4's (`pkg/chart/common/capabilities.go` at v4.2.1) has the
/// unexported `normalizedVersion` after `Version`: `%v` prints it (helm
/// v4.1.4: `{v1.35.0 v1.35.0 1 35}`), JSON leaves it out, and `String()`
/// returns it while `GitVersion()` returns `Version`.
#[derive(Debug, Clone)]
struct KubeVersion {
    version: String,
    /// Helm 4's `normalizedVersion`.
    normalized: Option<String>,
    major: String,
    minor: String,
    addressable: bool,
}

impl KubeVersion {
    fn fields(&self) -> Vec<V> {
        let mut f = vec![V::Str(self.version.clone())];
        if let Some(n) = &self.normalized {
            f.push(V::Str(n.clone()));
        }
        f.push(V::Str(self.major.clone()));
        f.push(V::Str(self.minor.clone()));
        f
    }

    /// `String()`.
    fn string(&self) -> String {
        match &self.normalized {
            Some(n) if !n.is_empty() => n.clone(),
            _ => self.version.clone(),
        }
    }
}

impl HostObject for KubeVersion {
    fn type_name(&self) -> &'static str {
        if self.normalized.is_some() {
            "common.KubeVersion"
        } else {
            "chartutil.KubeVersion"
        }
    }
    fn field(&self, name: &str) -> Option<V> {
        match name {
            "Version" => Some(V::Str(self.version.clone())),
            "Major" => Some(V::Str(self.major.clone())),
            "Minor" => Some(V::Str(self.minor.clone())),
            "GitVersion" if self.addressable => Some(V::Str(self.version.clone())),
            "String" if self.addressable => Some(V::Str(self.string())),
            _ => None,
        }
    }
    fn call(&self, _: &str, _: &[V]) -> Option<Result<V, String>> {
        None
    }
    fn value(&self) -> V {
        V::Str(self.format(true))
    }
    fn kind(&self) -> &'static str {
        "struct"
    }
    fn format(&self, _: bool) -> String {
        struct_format(&self.fields())
    }
    fn printed(&self) -> String {
        if self.addressable {
            self.string()
        } else {
            self.format(true)
        }
    }
    fn json(&self) -> Json {
        Json::Object(vec![
            ("Version".into(), V::Str(self.version.clone())),
            ("Major".into(), V::Str(self.major.clone())),
            ("Minor".into(), V::Str(self.minor.clone())),
        ])
    }
    fn boxed(&self) -> Option<V> {
        self.addressable.then(|| {
            host(KubeVersion {
                addressable: false,
                ..self.clone()
            })
        })
    }
}

/// `chartutil.VersionSet`: the defaults in their order (see
/// [`HelmLine::default_api_versions`]), then `--api-versions`.
#[derive(Debug)]
struct VersionSet(Vec<String>);

impl HostObject for VersionSet {
    fn type_name(&self) -> &'static str {
        "chartutil.VersionSet"
    }
    fn field(&self, _: &str) -> Option<V> {
        None
    }
    fn call(&self, name: &str, args: &[V]) -> Option<Result<V, String>> {
        match (name, args) {
            ("Has", [V::Str(a)]) => Some(Ok(V::Bool(self.0.contains(a)))),
            ("Has", [other]) => Some(Err(format!(
                "wrong type for value; expected string; got {}",
                other.type_name()
            ))),
            ("Has", _) => Some(Err(format!(
                "wrong number of args for Has: want 1 got {}",
                args.len()
            ))),
            _ => None,
        }
    }
    fn value(&self) -> V {
        str_list(&self.0)
    }
    fn kind(&self) -> &'static str {
        "slice"
    }
}

/// `version.BuildInfo` of the release (see [`HelmLine::build_info`]): a
/// `GoVersion` that is not known is recorded as volatile where read.
#[derive(Debug)]
struct HelmVersion(BuildInfo, Volatile);

impl HelmVersion {
    /// (Go name, JSON name, value), in the struct's order.
    fn fields(&self) -> Vec<(&'static str, &'static str, &'static str)> {
        let i = &self.0;
        let go = i.go_version.unwrap_or_else(|| {
            self.1.mark(&format!(
                "the Go version helm {} was built with (`.Capabilities.HelmVersion.GoVersion`), which is not known",
                i.version
            ));
            ""
        });
        let mut f = vec![
            ("Version", "version", i.version),
            ("GitCommit", "git_commit", i.git_commit),
            ("GitTreeState", "git_tree_state", "clean"),
            ("GoVersion", "go_version", go),
        ];
        if let Some(k) = i.kube_client_version {
            f.push(("KubeClientVersion", "kube_client_version", k));
        }
        f
    }
}

impl HostObject for HelmVersion {
    fn type_name(&self) -> &'static str {
        "version.BuildInfo"
    }
    fn field(&self, name: &str) -> Option<V> {
        let i = &self.0;
        let v = match name {
            "Version" => i.version,
            "GitCommit" => i.git_commit,
            "GitTreeState" => "clean",
            "KubeClientVersion" => i.kube_client_version?,
            "GoVersion" => {
                return self
                    .fields()
                    .into_iter()
                    .find(|f| f.0 == "GoVersion")
                    .map(|f| V::Str(f.2.to_string()))
            }
            _ => return None,
        };
        Some(V::Str(v.to_string()))
    }
    fn call(&self, _: &str, _: &[V]) -> Option<Result<V, String>> {
        None
    }
    fn value(&self) -> V {
        V::Str(self.format(true))
    }
    fn kind(&self) -> &'static str {
        "struct"
    }
    fn format(&self, _: bool) -> String {
        let fields: Vec<V> = self
            .fields()
            .iter()
            .map(|(_, _, v)| V::Str((*v).to_string()))
            .collect();
        struct_format(&fields)
    }
    fn json(&self) -> Json {
        // Every field but Helm 4's `kube_client_version` is `omitempty`,
        // and none is empty.
        Json::Object(
            self.fields()
                .iter()
                .map(|(_, j, v)| ((*j).to_string(), V::Str((*v).to_string())))
                .collect(),
        )
    }
}

/// `*chartutil.Capabilities`.
#[derive(Debug)]
struct Capabilities {
    kube: V,
    api: V,
    helm: V,
    volatile: Volatile,
}

impl Capabilities {
    fn fields(&self) -> [V; 3] {
        [self.kube.clone(), self.api.clone(), self.helm.clone()]
    }
}

impl HostObject for Capabilities {
    fn type_name(&self) -> &'static str {
        "chartutil.Capabilities"
    }
    fn field(&self, name: &str) -> Option<V> {
        match name {
            "KubeVersion" => Some(self.kube.clone()),
            "APIVersions" => Some(self.api.clone()),
            "HelmVersion" => Some(self.helm.clone()),
            _ => None,
        }
    }
    fn call(&self, _: &str, _: &[V]) -> Option<Result<V, String>> {
        None
    }
    fn value(&self) -> V {
        V::Str(self.format(true))
    }
    fn format(&self, top: bool) -> String {
        pointer_format(&self.volatile, top, &self.fields())
    }
    fn printed(&self) -> String {
        struct_format(&self.fields())
    }
    fn json(&self) -> Json {
        let [k, a, h] = self.fields();
        Json::Object(vec![
            ("KubeVersion".into(), k),
            ("APIVersions".into(), a),
            ("HelmVersion".into(), h),
        ])
    }
}

/// `%v` of a pointer to a struct: `&{…}` at the top; inside a value Go
/// prints the address, which is no value at all here.
fn pointer_format(volatile: &Volatile, top: bool, fields: &[V]) -> String {
    if !top {
        volatile.mark("a Go pointer printed inside a value (Go prints its address)");
    }
    format!("&{}", struct_format(fields))
}

/// `.Capabilities` of `helm template`: the Kubernetes version given (as
/// `ParseKubeVersion` made it) and helm's API versions with `--api-versions`
/// appended (`pkg/action/install.go` `RunWithContext`, client-only).
///
/// `kube_version` is (`Version`, normalized), as
/// [`super::version::parse_kube_version`] returns it; the API versions and
/// the build information are the release's (`line`).
pub(super) fn capabilities(
    kube_version: &(String, String),
    extra_api_versions: &[String],
    volatile: &Volatile,
    line: HelmLine,
) -> V {
    let (version, normalized) = kube_version;
    let mut parts = normalized.trim_start_matches('v').split('.');
    let major = parts.next().unwrap_or_default().to_string();
    let minor = parts.next().unwrap_or_default().to_string();
    let defaults = line.default_api_versions();
    let mut api: Vec<String> = defaults.iter().map(|s| (*s).to_string()).collect();
    api.extend(extra_api_versions.iter().cloned());
    host(Capabilities {
        kube: host(KubeVersion {
            version: version.clone(),
            normalized: (line >= HelmLine::V4).then(|| normalized.clone()),
            major,
            minor,
            addressable: true,
        }),
        api: host(VersionSet(api)),
        helm: host(HelmVersion(line.build_info(), volatile.clone())),
        volatile: volatile.clone(),
    })
}

/// Why a file's text is refused: Go copies its bytes as they are.
fn not_utf8(name: &str) -> String {
    format!("the bytes of `{name}`, which are not UTF-8, as text are not supported by gitops-lint")
}

/// A `[]byte` (`.Files.GetBytes`, a value of `.Files`): ranged over and
/// printed as its numbers, text to `toString`, base64 to `toJson`.
#[derive(Debug)]
struct Bytes {
    name: String,
    data: Arc<[u8]>,
}

impl HostObject for Bytes {
    fn type_name(&self) -> &'static str {
        "[]uint8"
    }
    fn field(&self, _: &str) -> Option<V> {
        None
    }
    fn call(&self, _: &str, _: &[V]) -> Option<Result<V, String>> {
        None
    }
    fn value(&self) -> V {
        V::List(self.data.iter().map(|b| V::Int(i64::from(*b))).collect())
    }
    fn kind(&self) -> &'static str {
        "slice"
    }
    fn json(&self) -> Json {
        Json::Value(V::Str(
            base64::engine::general_purpose::STANDARD.encode(&self.data),
        ))
    }
    fn as_text(&self) -> Option<Result<String, String>> {
        Some(
            std::str::from_utf8(&self.data)
                .map(str::to_string)
                .map_err(|_| not_utf8(&self.name)),
        )
    }
}

/// `engine.files`: a chart's files by path (`map[string][]byte`).
#[derive(Debug)]
struct Files {
    files: BTreeMap<String, Arc<[u8]>>,
    volatile: Volatile,
}

impl Files {
    fn bytes(&self, name: &str) -> V {
        host(Bytes {
            name: name.to_string(),
            data: self
                .files
                .get(name)
                .cloned()
                .unwrap_or_else(|| Arc::from(&b""[..])),
        })
    }

    /// `AsConfig` and `AsSecrets`: the files by base name, as `toYAML`
    /// writes a `map[string]string` (sorted keys, no final newline).
    fn by_base_name(&self, what: &str, encode: impl Fn(&[u8]) -> String) -> V {
        let mut m = BTreeMap::new();
        for (path, data) in &self.files {
            let base = gotemplate::path_base(path);
            let text = encode(data);
            if let Some(prev) = m.insert(base.clone(), V::Str(text.clone())) {
                if prev != V::Str(text) {
                    // `m[path.Base(k)] = …` in Go's random map order.
                    self.volatile.mark(&format!(
                        "`{what}` of two files named `{base}` with different contents (Go's map order picks one)"
                    ));
                }
            }
        }
        if m.is_empty() {
            return V::Str("{}".into());
        }
        V::Str(gotemplate::yaml_out::helm_to_yaml(&V::Map(m.into())))
    }
}

impl HostObject for Files {
    fn type_name(&self) -> &'static str {
        "engine.files"
    }
    fn field(&self, name: &str) -> Option<V> {
        match name {
            "AsConfig" => Some(self.by_base_name("AsConfig", |d| {
                // `string(v)` then JSON: bytes that are not UTF-8 become U+FFFD.
                String::from_utf8_lossy(d).into_owned()
            })),
            "AsSecrets" => Some(self.by_base_name("AsSecrets", |d| {
                base64::engine::general_purpose::STANDARD.encode(d)
            })),
            _ => None,
        }
    }
    fn call(&self, name: &str, args: &[V]) -> Option<Result<V, String>> {
        if !matches!(name, "Get" | "GetBytes" | "Glob" | "Lines") {
            return None;
        }
        let arg = match args {
            [V::Str(a)] => a.clone(),
            [other] => {
                return Some(Err(format!(
                    "wrong type for value; expected string; got {}",
                    other.type_name()
                )))
            }
            _ => {
                return Some(Err(format!(
                    "wrong number of args for {name}: want 1 got {}",
                    args.len()
                )))
            }
        };
        let data = self.files.get(&arg);
        Some(match name {
            // `files.Get`: the content, or "" for a missing file.
            "Get" => match data.map(|d| std::str::from_utf8(d)) {
                None => Ok(V::Str(String::new())),
                Some(Ok(t)) => Ok(V::Str(t.to_string())),
                Some(Err(_)) => Err(not_utf8(&arg)),
            },
            "GetBytes" => Ok(self.bytes(&arg)),
            "Glob" => self.glob(&arg),
            // `files.Lines`: split on "\n", one final newline dropped.
            _ => match data.map(|d| std::str::from_utf8(d)) {
                None => Ok(V::List(Vec::new())),
                Some(Err(_)) => Err(not_utf8(&arg)),
                Some(Ok("")) => Ok(V::List(vec![V::Str(String::new())])),
                Some(Ok(s)) => Ok(V::List(
                    s.strip_suffix('\n')
                        .unwrap_or(s)
                        .split('\n')
                        .map(|l| V::Str(l.to_string()))
                        .collect(),
                )),
            },
        })
    }
    fn value(&self) -> V {
        V::Map(
            self.files
                .keys()
                .map(|k| (k.clone(), self.bytes(k)))
                .collect(),
        )
    }
    fn is_map(&self) -> bool {
        true
    }
    fn kind(&self) -> &'static str {
        "map"
    }
}

impl Files {
    /// `files.Glob`: gobwas/glob with `/` as the separator; a pattern that
    /// does not compile matches everything (`glob.Compile("**")`).
    fn glob(&self, pattern: &str) -> Result<V, String> {
        let g = match Glob::new(pattern, &['/']) {
            Ok(g) => Some(g),
            Err(GlobError::Invalid(_)) => None,
            Err(e @ GlobError::TooLarge) => {
                return Err(format!(
                "the .Files.Glob pattern {pattern:?}: {e}, which is not supported by gitops-lint"
            ))
            }
        };
        Ok(host(Files {
            files: self
                .files
                .iter()
                .filter(|(k, _)| g.as_ref().is_none_or(|g| g.is_match(k)))
                .map(|(k, v)| (k.clone(), Arc::clone(v)))
                .collect(),
            volatile: self.volatile.clone(),
        }))
    }
}

/// `.Files` of a chart.
pub(super) fn files(files: &[ChartFile], volatile: &Volatile) -> V {
    host(Files {
        files: files
            .iter()
            .map(|f| (f.name.clone(), Arc::clone(&f.data)))
            .collect(),
        volatile: volatile.clone(),
    })
}

/// A nil slice of `chart.Metadata` (an absent list): empty, but `null` to
/// `encoding/json`.
#[derive(Debug)]
struct NilSlice(&'static str);

impl HostObject for NilSlice {
    fn type_name(&self) -> &'static str {
        self.0
    }
    fn field(&self, _: &str) -> Option<V> {
        None
    }
    fn call(&self, _: &str, _: &[V]) -> Option<Result<V, String>> {
        None
    }
    fn value(&self) -> V {
        V::List(Vec::new())
    }
    fn kind(&self) -> &'static str {
        "slice"
    }
    fn json(&self) -> Json {
        Json::Value(V::Nil)
    }
}

/// A Go struct (or a pointer to one) of chart metadata: its fields by Go
/// name, with their JSON names and whether they are `omitempty`.
#[derive(Debug)]
struct Struct {
    type_name: &'static str,
    pointer: bool,
    fields: Vec<Field>,
    volatile: Volatile,
}

#[derive(Debug)]
struct Field {
    go: &'static str,
    json: &'static str,
    omit_empty: bool,
    value: V,
}

fn field(go: &'static str, json: &'static str, omit_empty: bool, value: V) -> Field {
    Field {
        go,
        json,
        omit_empty,
        value,
    }
}

impl Struct {
    fn values(&self) -> Vec<V> {
        self.fields.iter().map(|f| f.value.clone()).collect()
    }
}

impl HostObject for Struct {
    fn type_name(&self) -> &'static str {
        self.type_name
    }
    fn field(&self, name: &str) -> Option<V> {
        self.fields
            .iter()
            .find(|f| f.go == name)
            .map(|f| f.value.clone())
    }
    fn call(&self, _: &str, _: &[V]) -> Option<Result<V, String>> {
        None
    }
    fn value(&self) -> V {
        V::Str(self.format(true))
    }
    fn kind(&self) -> &'static str {
        if self.pointer {
            "ptr"
        } else {
            "struct"
        }
    }
    fn format(&self, top: bool) -> String {
        if self.pointer {
            pointer_format(&self.volatile, top, &self.values())
        } else {
            struct_format(&self.values())
        }
    }
    fn printed(&self) -> String {
        struct_format(&self.values())
    }
    fn json(&self) -> Json {
        Json::Object(
            self.fields
                .iter()
                .filter(|f| !(f.omit_empty && json_empty(&f.value)))
                .map(|f| (f.json.to_string(), f.value.clone()))
                .collect(),
        )
    }
}

/// `encoding/json`'s `isEmptyValue`, for `omitempty`.
fn json_empty(v: &V) -> bool {
    match v {
        V::Host(h) => h.0.kind() == "slice" && !h.0.value().truth(),
        other => !other.truth(),
    }
}

/// A list field of `chart.Metadata`: nil when empty (absent from
/// Chart.yaml, as it nearly always is when empty).
fn list_field(type_name: &'static str, items: Vec<V>) -> V {
    if items.is_empty() {
        host(NilSlice(type_name))
    } else {
        V::List(items)
    }
}

/// `*chart.Maintainer`.
fn maintainer(m: &serde_json::Value, volatile: &Volatile) -> V {
    let f = |k: &str| {
        V::Str(
            m.get(k)
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_string(),
        )
    };
    host(Struct {
        type_name: "*chart.Maintainer",
        pointer: true,
        fields: vec![
            field("Name", "name", true, f("name")),
            field("Email", "email", true, f("email")),
            field("URL", "url", true, f("url")),
        ],
        volatile: volatile.clone(),
    })
}

/// `*chart.Dependency`.
fn dependency(d: &Dependency, volatile: &Volatile) -> V {
    let s = |v: &str| V::Str(v.to_string());
    host(Struct {
        type_name: "*chart.Dependency",
        pointer: true,
        fields: vec![
            field("Name", "name", false, s(&d.name)),
            field("Version", "version", true, s(&d.version)),
            field("Repository", "repository", false, s(&d.repository)),
            field("Condition", "condition", true, s(&d.condition)),
            field(
                "Tags",
                "tags",
                true,
                list_field(
                    "[]string",
                    d.tags.iter().map(|t| V::Str(t.clone())).collect(),
                ),
            ),
            field("Enabled", "enabled", true, V::Bool(d.enabled)),
            field(
                "ImportValues",
                "import-values",
                true,
                list_field(
                    "[]interface {}",
                    d.import_values.iter().map(V::from_json).collect(),
                ),
            ),
            field("Alias", "alias", true, s(&d.alias)),
        ],
        volatile: volatile.clone(),
    })
}

/// `.Chart`: up to helm 3 `struct { chart.Metadata; IsRoot bool }`
/// (`recAllTpls`), whose embedded `Metadata` prints as one field and whose
/// JSON members are the struct's own; Helm 4's map of the metadata
/// ([`chart_v4`]).
pub(super) fn chart(md: &Metadata, is_root: bool, volatile: &Volatile, line: HelmLine) -> V {
    if line >= HelmLine::V4 {
        return chart_v4(md, is_root);
    }
    chart_v3(md, is_root, volatile)
}

/// Helm 4's `.Chart`: `MetadataAsMap` with `IsRoot` set (`recAllTpls`,
/// `pkg/engine/engine.go` at v4.2.1). `structToMap` (`pkg/chart/common.go`)
/// walks `chart.Metadata` by reflection: every field, by its Go name, JSON
/// tags and `omitempty` ignored; a struct or pointer to one becomes such a
/// map too; a slice becomes a new `[]any` (a nil one an empty one) with
/// its struct and pointer elements as maps; anything else is the field's
/// value, so `Annotations` stays a `map[string]string`, nil when absent or
/// null (helm v4.1.4 prints `map[]` and `null` to JSON for it, `[]` for an
/// absent `Keywords`, `[map[Email:… Name:… URL:]]` for `Maintainers`).
fn chart_v4(md: &Metadata, is_root: bool) -> V {
    let s = |v: &str| V::Str(v.to_string());
    let strings = |l: &[String]| V::List(l.iter().map(|x| s(x)).collect());
    let maintainers = md
        .maintainers
        .iter()
        .map(|m| {
            let f = |k: &str| {
                s(m.get(k)
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or_default())
            };
            V::map(BTreeMap::from([
                ("Name".to_string(), f("name")),
                ("Email".to_string(), f("email")),
                ("URL".to_string(), f("url")),
            ]))
        })
        .collect();
    let dependencies = md
        .dependencies
        .iter()
        .flatten()
        .map(|d| {
            V::map(BTreeMap::from([
                ("Name".to_string(), s(&d.name)),
                ("Version".to_string(), s(&d.version)),
                ("Repository".to_string(), s(&d.repository)),
                ("Condition".to_string(), s(&d.condition)),
                ("Tags".to_string(), strings(&d.tags)),
                ("Enabled".to_string(), V::Bool(d.enabled)),
                (
                    "ImportValues".to_string(),
                    V::List(d.import_values.iter().map(import_value).collect()),
                ),
                ("Alias".to_string(), s(&d.alias)),
            ]))
        })
        .collect();
    V::map(BTreeMap::from([
        ("Name".to_string(), s(&md.name)),
        ("Home".to_string(), s(&md.home)),
        ("Sources".to_string(), strings(&md.sources)),
        ("Version".to_string(), s(&md.version)),
        ("Description".to_string(), s(&md.description)),
        ("Keywords".to_string(), strings(&md.keywords)),
        ("Maintainers".to_string(), V::List(maintainers)),
        ("Icon".to_string(), s(&md.icon)),
        ("APIVersion".to_string(), s(&md.api_version)),
        ("Condition".to_string(), s(&md.condition)),
        ("Tags".to_string(), s(&md.tags)),
        ("AppVersion".to_string(), s(&md.app_version)),
        ("Deprecated".to_string(), V::Bool(md.deprecated)),
        (
            "Annotations".to_string(),
            host(StringMap(md.annotations.clone())),
        ),
        ("KubeVersion".to_string(), s(&md.kube_version)),
        ("Dependencies".to_string(), V::List(dependencies)),
        ("Type".to_string(), s(&md.chart_type)),
        ("IsRoot".to_string(), V::Bool(is_root)),
    ]))
}

/// An entry of a dependency's `ImportValues` once `processImportValues`
/// has rewritten it (`pkg/chart/v2/util/dependencies.go` at v4.2.1): a
/// `map[string]string` of `child` and `parent`.
fn import_value(iv: &serde_json::Value) -> V {
    let strings = iv.as_object().and_then(|m| {
        m.iter()
            .map(|(k, v)| v.as_str().map(|v| (k.clone(), v.to_string())))
            .collect::<Option<BTreeMap<_, _>>>()
    });
    match strings {
        Some(m) => host(StringMap(Some(m))),
        None => V::from_json(iv),
    }
}

/// A `map[string]string` (`None`: nil, `null` to JSON): Go's template
/// functions that take a `map[string]interface {}` refuse it.
#[derive(Debug)]
struct StringMap(Option<BTreeMap<String, String>>);

impl HostObject for StringMap {
    fn type_name(&self) -> &'static str {
        "map[string]string"
    }
    fn field(&self, name: &str) -> Option<V> {
        self.0
            .as_ref()
            .and_then(|m| m.get(name))
            .map(|v| V::Str(v.clone()))
    }
    fn call(&self, _: &str, _: &[V]) -> Option<Result<V, String>> {
        None
    }
    fn value(&self) -> V {
        V::map(
            self.0
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), V::Str(v.clone())))
                .collect(),
        )
    }
    fn is_map(&self) -> bool {
        true
    }
    fn kind(&self) -> &'static str {
        "map"
    }
    fn json(&self) -> Json {
        match self.0 {
            None => Json::Value(V::Nil),
            Some(_) => Json::Value(self.value()),
        }
    }
}

fn chart_v3(md: &Metadata, is_root: bool, volatile: &Volatile) -> V {
    let s = |v: &str| V::Str(v.to_string());
    let strings = |l: &[String]| list_field("[]string", l.iter().map(|x| s(x)).collect());
    let annotations = match &md.annotations {
        None => host(NilMap),
        Some(a) => V::Map(a.iter().map(|(k, v)| (k.clone(), s(v))).collect()),
    };
    let dependencies = match &md.dependencies {
        None => host(NilSlice("[]*chart.Dependency")),
        Some(d) => V::List(d.iter().map(|d| dependency(d, volatile)).collect()),
    };
    let metadata = vec![
        field("Name", "name", true, s(&md.name)),
        field("Home", "home", true, s(&md.home)),
        field("Sources", "sources", true, strings(&md.sources)),
        field("Version", "version", true, s(&md.version)),
        field("Description", "description", true, s(&md.description)),
        field("Keywords", "keywords", true, strings(&md.keywords)),
        field(
            "Maintainers",
            "maintainers",
            true,
            list_field(
                "[]*chart.Maintainer",
                md.maintainers
                    .iter()
                    .map(|m| maintainer(m, volatile))
                    .collect(),
            ),
        ),
        field("Icon", "icon", true, s(&md.icon)),
        field("APIVersion", "apiVersion", true, s(&md.api_version)),
        field("Condition", "condition", true, s(&md.condition)),
        field("Tags", "tags", true, s(&md.tags)),
        field("AppVersion", "appVersion", true, s(&md.app_version)),
        field("Deprecated", "deprecated", true, V::Bool(md.deprecated)),
        field("Annotations", "annotations", true, annotations),
        field("KubeVersion", "kubeVersion", true, s(&md.kube_version)),
        field("Dependencies", "dependencies", true, dependencies),
        field("Type", "type", true, s(&md.chart_type)),
    ];
    host(ChartObject {
        metadata: Struct {
            type_name: "chart.Metadata",
            pointer: false,
            fields: metadata,
            volatile: volatile.clone(),
        },
        is_root,
    })
}

/// A nil `map[string]string` (no annotations): empty, `null` to JSON.
#[derive(Debug)]
struct NilMap;

impl HostObject for NilMap {
    fn type_name(&self) -> &'static str {
        "map[string]string"
    }
    fn field(&self, _: &str) -> Option<V> {
        None
    }
    fn call(&self, _: &str, _: &[V]) -> Option<Result<V, String>> {
        None
    }
    fn value(&self) -> V {
        V::Map(BTreeMap::new().into())
    }
    fn is_map(&self) -> bool {
        true
    }
    fn kind(&self) -> &'static str {
        "map"
    }
    fn json(&self) -> Json {
        Json::Value(V::Nil)
    }
}

/// `struct { chart.Metadata; IsRoot bool }`.
#[derive(Debug)]
struct ChartObject {
    metadata: Struct,
    is_root: bool,
}

impl HostObject for ChartObject {
    fn type_name(&self) -> &'static str {
        "struct { chart.Metadata; IsRoot bool }"
    }
    fn field(&self, name: &str) -> Option<V> {
        match name {
            "IsRoot" => Some(V::Bool(self.is_root)),
            "Metadata" => None,
            _ => self.metadata.field(name),
        }
    }
    fn call(&self, _: &str, _: &[V]) -> Option<Result<V, String>> {
        None
    }
    fn value(&self) -> V {
        V::Str(self.format(true))
    }
    fn kind(&self) -> &'static str {
        "struct"
    }
    fn format(&self, _: bool) -> String {
        format!(
            "{{{} {}}}",
            self.metadata.format(false),
            if self.is_root { "true" } else { "false" }
        )
    }
    fn json(&self) -> Json {
        let Json::Object(mut members) = self.metadata.json() else {
            return Json::Value(V::Nil);
        };
        members.push(("IsRoot".into(), V::Bool(self.is_root)));
        Json::Object(members)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gotemplate::{FuncSet, MissingKey, TemplateSet};

    /// Runs `src` with `.Capabilities`, `.Files` and `.Chart` as helm sets
    /// them; `Err` also when the render read something volatile.
    fn run(src: &str, files: &[(&str, &[u8])], md: &Metadata) -> Result<String, String> {
        let volatile = Volatile::default();
        let files: Vec<ChartFile> = files
            .iter()
            .map(|(n, d)| ChartFile {
                name: (*n).to_string(),
                data: Arc::from(*d),
            })
            .collect();
        let dot = V::Map(
            [
                (
                    "Capabilities".to_string(),
                    capabilities(
                        &("v1.32.0".into(), "v1.32.0".into()),
                        &["x.io/v1".to_string()],
                        &volatile,
                        HelmLine::V3_17,
                    ),
                ),
                ("Files".to_string(), super::files(&files, &volatile)),
                (
                    "Chart".to_string(),
                    chart(md, true, &volatile, HelmLine::V3_17),
                ),
            ]
            .into(),
        );
        let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero);
        set.add("t", src)?;
        let out = set.execute("t", &dot);
        if let Some(why) = volatile.take() {
            return Err(format!("volatile: {why}"));
        }
        out
    }

    fn caps(src: &str) -> String {
        run(src, &[], &Metadata::default()).unwrap()
    }

    #[test]
    fn kube_version_prints_with_string_but_copies_print_as_structs() {
        // sem-capabilities: the action calls `(*KubeVersion).String`; a
        // function's argument is a copy without it.
        assert_eq!(caps("{{ .Capabilities.KubeVersion }}"), "v1.32.0");
        assert_eq!(
            caps("{{ .Capabilities.KubeVersion | quote }}"),
            "\"{v1.32.0 1 32}\""
        );
        assert_eq!(
            caps("{{ printf \"%v\" .Capabilities.KubeVersion }}"),
            "{v1.32.0 1 32}"
        );
        assert_eq!(
            caps("{{ default .Capabilities.KubeVersion nil }}"),
            "{v1.32.0 1 32}"
        );
        assert_eq!(
            caps("{{ $k := .Capabilities.KubeVersion }}{{ $k }} {{ $k.GitVersion }}"),
            "v1.32.0 v1.32.0"
        );
        assert_eq!(
            caps("{{ .Capabilities.KubeVersion.Major }}.{{ .Capabilities.KubeVersion.Minor }}"),
            "1.32"
        );
        assert_eq!(
            caps("{{ kindOf .Capabilities.KubeVersion }} {{ kindOf .Capabilities }}"),
            "struct ptr"
        );
        assert_eq!(
            caps("{{ toJson .Capabilities.KubeVersion }}"),
            r#"{"Version":"v1.32.0","Major":"1","Minor":"32"}"#
        );
        let err = run(
            "{{ (default .Capabilities.KubeVersion nil).GitVersion }}",
            &[],
            &Metadata::default(),
        )
        .unwrap_err();
        assert!(err.contains("can't evaluate field GitVersion"), "{err}");
    }

    #[test]
    fn capabilities_print_as_go_structs() {
        let api = DEFAULT_API_VERSIONS.join(" ");
        let helm = "{v3.17.1 980d8ac1939e39138101364400756af2bdee1da5 clean go1.23.5}";
        // `strval` is `%v` of the `*Capabilities`; an action follows the pointer.
        assert_eq!(
            caps("{{ .Capabilities | toString }}"),
            format!("&{{{{v1.32.0 1 32}} [{api} x.io/v1] {helm}}}")
        );
        assert_eq!(
            caps("{{ .Capabilities }}"),
            format!("{{{{v1.32.0 1 32}} [{api} x.io/v1] {helm}}}")
        );
        assert_eq!(caps("{{ .Capabilities.HelmVersion }}"), helm);
        assert_eq!(caps("{{ .Capabilities.HelmVersion.Version }}"), "v3.17.1");
        // bitnami common's `_capabilities.tpl` test for helm ≥ 3.3.
        assert_eq!(
            caps(r#"{{ regexMatch "{(v[0-9])*[^}]*}}$" (.Capabilities | toString) }}"#),
            "true"
        );
        assert_eq!(
            caps("{{ .Capabilities.HelmVersion | toJson }}"),
            r#"{"version":"v3.17.1","git_commit":"980d8ac1939e39138101364400756af2bdee1da5","git_tree_state":"clean","go_version":"go1.23.5"}"#
        );
        assert_eq!(
            caps("{{ .Capabilities.HelmVersion | toYaml }}"),
            "git_commit: 980d8ac1939e39138101364400756af2bdee1da5\ngit_tree_state: clean\ngo_version: go1.23.5\nversion: v3.17.1"
        );
        assert!(run("{{ list .Capabilities }}", &[], &Metadata::default())
            .unwrap_err()
            .contains("volatile"));
    }

    #[test]
    fn api_versions_are_a_slice() {
        let n = DEFAULT_API_VERSIONS.len() + 1;
        assert_eq!(caps("{{ len .Capabilities.APIVersions }}"), n.to_string());
        assert_eq!(
            caps("{{ has \"x.io/v1\" .Capabilities.APIVersions }} {{ .Capabilities.APIVersions.Has \"nope\" }}"),
            "true false"
        );
        assert_eq!(
            caps("{{ last .Capabilities.APIVersions }} {{ index .Capabilities.APIVersions 0 }}"),
            "x.io/v1 v1"
        );
        assert_eq!(
            caps("{{ range .Capabilities.APIVersions }}{{ if eq . \"x.io/v1\" }}{{ . }}{{ end }}{{ end }}"),
            "x.io/v1"
        );
    }

    const FILES: &[(&str, &[u8])] = &[
        ("config/app.ini", b"[server]\nport = 8080\n"),
        ("config/tab.txt", b"tab\there\n"),
        ("files/blob.bin", b"\x00\x01\x02\xff\xfe binary\n"),
        ("files/sub/nested.conf", b"nested file\n"),
        ("files/a.txt", b"a\n"),
    ];

    fn files(src: &str) -> Result<String, String> {
        run(src, FILES, &Metadata::default())
    }

    #[test]
    fn glob_uses_gobwas_with_slash_separators() {
        // sem-files: `*` stays in a directory, `**` crosses them.
        let names = |p: &str| {
            files(&format!(
                "{{{{ range $p, $_ := .Files.Glob {p:?} }}}}{{{{ $p }}}};{{{{ end }}}}"
            ))
            .unwrap()
        };
        assert_eq!(names("files/*"), "files/a.txt;files/blob.bin;");
        assert_eq!(
            names("files/**"),
            "files/a.txt;files/blob.bin;files/sub/nested.conf;"
        );
        assert_eq!(
            names("{config,files}/*.{ini,txt}"),
            "config/app.ini;config/tab.txt;files/a.txt;"
        );
        // A pattern gobwas refuses matches everything (`glob.Compile("**")`).
        assert_eq!(names("[").matches(';').count(), FILES.len());
    }

    #[test]
    fn as_config_and_as_secrets_write_helm_yaml() {
        // sem-files' expected output.
        assert_eq!(
            files("{{ (.Files.Glob \"config/*\").AsConfig }}").unwrap(),
            "app.ini: |\n  [server]\n  port = 8080\ntab.txt: \"tab\\there\\n\""
        );
        assert_eq!(
            files("{{ (.Files.Glob \"files/{blob.bin,sub/*}\").AsSecrets }}").unwrap(),
            "blob.bin: AAEC//4gYmluYXJ5Cg==\nnested.conf: bmVzdGVkIGZpbGUK"
        );
        assert_eq!(
            files("{{ (.Files.Glob \"none/*\").AsConfig }}").unwrap(),
            "{}"
        );
        let same_name: &[(&str, &[u8])] = &[("a/x", b"1"), ("b/x", b"2")];
        assert!(
            run("{{ .Files.AsConfig }}", same_name, &Metadata::default())
                .unwrap_err()
                .contains("volatile")
        );
    }

    #[test]
    fn get_bytes_is_a_byte_slice() {
        assert_eq!(
            files("{{ .Files.GetBytes \"files/a.txt\" }}").unwrap(),
            "[97 10]"
        );
        assert_eq!(
            files("{{ .Files.GetBytes \"files/blob.bin\" | len }}").unwrap(),
            "13"
        );
        assert_eq!(
            files("{{ .Files.GetBytes \"files/a.txt\" | toString | quote }}").unwrap(),
            "\"a\\n\""
        );
        assert_eq!(
            files("{{ .Files.GetBytes \"files/a.txt\" | toJson }}").unwrap(),
            "\"YQo=\""
        );
        assert_eq!(
            files("{{ printf \"%s\" (.Files.GetBytes \"files/a.txt\") }}").unwrap(),
            "a\n"
        );
        assert_eq!(files("{{ .Files.GetBytes \"missing\" }}").unwrap(), "[]");
        // Sprig's `b64enc` takes a string: Go refuses a `[]byte`.
        let err = files("{{ .Files.GetBytes \"files/a.txt\" | b64enc }}").unwrap_err();
        assert!(err.contains("expected string; got []uint8"), "{err}");
        let err = files("{{ .Files.GetBytes \"files/blob.bin\" | toString }}").unwrap_err();
        assert!(err.contains("not supported by gitops-lint"), "{err}");
        let err = files("{{ .Files.Get \"files/blob.bin\" }}").unwrap_err();
        assert!(err.contains("not supported by gitops-lint"), "{err}");
    }

    #[test]
    fn files_is_a_map_of_byte_slices() {
        // grafana: `$files := .Files` then `$files.Get`.
        assert_eq!(
            files("{{ $f := .Files }}{{ $f.Get \"files/a.txt\" }}").unwrap(),
            "a\n"
        );
        assert_eq!(
            files("{{ len .Files }} {{ kindOf .Files }}").unwrap(),
            "5 map"
        );
        assert_eq!(
            files("{{ index .Files \"files/a.txt\" }}").unwrap(),
            "[97 10]"
        );
        assert_eq!(
            files("{{ .Files.Glob \"files/a.txt\" | toJson }}").unwrap(),
            r#"{"files/a.txt":"YQo="}"#
        );
        assert_eq!(
            files("{{ if .Files.Glob \"none\" }}y{{ else }}n{{ end }}").unwrap(),
            "n"
        );
        assert_eq!(
            files("{{ .Files.Lines \"config/app.ini\" | len }}").unwrap(),
            "2"
        );
    }

    fn metadata() -> Metadata {
        Metadata {
            name: "c".into(),
            version: "1.0.0".into(),
            api_version: "v2".into(),
            keywords: vec!["demo".into()],
            maintainers: vec![serde_json::json!({"name": "Team", "email": "t@x.io"})],
            annotations: Some([("k".to_string(), "v".to_string())].into()),
            ..Metadata::default()
        }
    }

    #[test]
    fn chart_is_a_go_struct() {
        let md = metadata();
        let chart = |src: &str| run(src, &[], &md);
        // sem-release-chart: JSON names, field order, `omitempty`.
        assert_eq!(
            chart("{{ .Chart.Maintainers | toJson }}").unwrap(),
            r#"[{"name":"Team","email":"t@x.io"}]"#
        );
        assert_eq!(
            chart("{{ .Chart | toJson }}").unwrap(),
            r#"{"name":"c","version":"1.0.0","keywords":["demo"],"maintainers":[{"name":"Team","email":"t@x.io"}],"apiVersion":"v2","annotations":{"k":"v"},"IsRoot":true}"#
        );
        assert_eq!(chart("{{ .Chart.Sources | toJson }}").unwrap(), "null");
        assert_eq!(
            chart("{{ index .Chart.Maintainers 0 }} {{ index .Chart.Maintainers 0 | toString }}")
                .unwrap(),
            "{Team t@x.io } &{Team t@x.io }"
        );
        assert_eq!(chart("{{ len .Chart.Dependencies }}").unwrap(), "0");
        // A list of pointers prints addresses.
        assert!(chart("{{ .Chart.Maintainers }}")
            .unwrap_err()
            .contains("volatile"));
        assert!(chart("{{ .Chart }}").unwrap_err().contains("volatile"));
        let plain = Metadata {
            maintainers: Vec::new(),
            ..metadata()
        };
        assert_eq!(
            run("{{ .Chart }}", &[], &plain).unwrap(),
            "{{c  [] 1.0.0  [demo] []  v2    false map[k:v]  [] } true}"
        );
        // `annotations: {}` is an empty map, not nil (helm v3.17.1: `{}`,
        // and `omitempty` leaves it out of `.Chart`).
        let empty = Metadata {
            annotations: Some(BTreeMap::new()),
            ..plain
        };
        assert_eq!(
            run(
                "{{ .Chart.Annotations | toJson }} {{ .Chart | toJson }}",
                &[],
                &empty
            )
            .unwrap(),
            r#"{} {"name":"c","version":"1.0.0","keywords":["demo"],"apiVersion":"v2","IsRoot":true}"#
        );
    }

    #[test]
    fn dependencies_are_pointers_to_structs() {
        let md = Metadata {
            dependencies: Some(vec![Dependency {
                name: "dep".into(),
                version: "1.x".into(),
                repository: "file://dep".into(),
                enabled: true,
                ..Dependency::default()
            }]),
            ..metadata()
        };
        let chart = |src: &str| run(src, &[], &md);
        assert_eq!(chart("{{ len .Chart.Dependencies }}").unwrap(), "1");
        assert_eq!(
            chart("{{ (index .Chart.Dependencies 0).Name }}").unwrap(),
            "dep"
        );
        assert_eq!(
            chart("{{ .Chart.Dependencies | toJson }}").unwrap(),
            r#"[{"name":"dep","version":"1.x","repository":"file://dep","enabled":true}]"#
        );
        assert_eq!(
            chart("{{ index .Chart.Dependencies 0 }}").unwrap(),
            "{dep 1.x file://dep  [] true [] }"
        );
    }
}

#[cfg(test)]
mod line_tests {
    use super::*;
    use gotemplate::{FuncSet, MissingKey, TemplateSet};

    /// `src` with `.Capabilities` of `line` for `--kube-version kube`.
    fn caps(line: HelmLine, kube: &str, src: &str) -> Result<String, String> {
        let volatile = Volatile::default();
        let kv = super::super::version::parse_kube_version(line, kube)?;
        let dot = V::Map(
            [(
                "Capabilities".to_string(),
                capabilities(&kv, &[], &volatile, line),
            )]
            .into(),
        );
        let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero)
            .with_helm_gen(line.template_gen());
        set.add("t", src)?;
        let out = set.execute("t", &dot)?;
        match volatile.take() {
            Some(why) => Err(why),
            None => Ok(out),
        }
    }

    /// `src` with Helm 4's `.Chart` of `md` (the root chart).
    fn chart4(md: &Metadata, src: &str) -> Result<String, String> {
        let volatile = Volatile::default();
        let dot = V::Map(
            [(
                "Chart".to_string(),
                chart(md, true, &volatile, HelmLine::V4),
            )]
            .into(),
        );
        let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero)
            .with_helm_gen(HelmLine::V4.template_gen());
        set.add("t", src)?;
        let out = set.execute("t", &dot)?;
        match volatile.take() {
            Some(why) => Err(why),
            None => Ok(out),
        }
    }

    fn full_metadata() -> Metadata {
        let strings = |l: &[&str]| l.iter().map(|s| (*s).to_string()).collect();
        Metadata {
            name: "full".into(),
            home: "https://example.com".into(),
            sources: strings(&["https://s1", "https://s2"]),
            version: "1.2.3".into(),
            description: "A chart".into(),
            keywords: strings(&["a", "b"]),
            maintainers: vec![
                serde_json::json!({"name": "Jo", "email": "jo@example.com"}),
                serde_json::json!({"name": "Al", "url": "https://al"}),
            ],
            icon: "https://example.com/i.png".into(),
            api_version: "v2".into(),
            app_version: "4.5".into(),
            deprecated: true,
            annotations: Some([("b".into(), "2".into()), ("a".into(), "x".into())].into()),
            kube_version: ">=1.20.0-0".into(),
            dependencies: Some(vec![Dependency {
                name: "other".into(),
                version: "0.1.0".into(),
                repository: "file://charts/sub".into(),
                condition: "other.enabled".into(),
                tags: strings(&["t1"]),
                enabled: true,
                import_values: vec![
                    serde_json::json!({"child": "foo", "parent": "bar"}),
                    serde_json::json!({"child": "exports.data", "parent": "."}),
                ],
                alias: "other".into(),
            }]),
            chart_type: "application".into(),
            ..Metadata::default()
        }
    }

    #[test]
    fn helm4_chart_is_metadata_as_map() {
        // Printed by helm v4.1.4 for a chart with these fields (its
        // `structToMap` is v4.2.1's) and for `apiVersion`, `name` and
        // `version` alone.
        let full = full_metadata();
        assert_eq!(
            chart4(&full, "{{ .Chart }}").as_deref(),
            Ok("map[APIVersion:v2 Annotations:map[a:x b:2] AppVersion:4.5 Condition: Dependencies:[map[Alias:other Condition:other.enabled Enabled:true ImportValues:[map[child:foo parent:bar] map[child:exports.data parent:.]] Name:other Repository:file://charts/sub Tags:[t1] Version:0.1.0]] Deprecated:true Description:A chart Home:https://example.com Icon:https://example.com/i.png IsRoot:true Keywords:[a b] KubeVersion:>=1.20.0-0 Maintainers:[map[Email:jo@example.com Name:Jo URL:] map[Email: Name:Al URL:https://al]] Name:full Sources:[https://s1 https://s2] Tags: Type:application Version:1.2.3]")
        );
        assert_eq!(
            chart4(&full, "{{ .Chart | toJson }}").as_deref(),
            Ok(
                r#"{"APIVersion":"v2","Annotations":{"a":"x","b":"2"},"AppVersion":"4.5","Condition":"","Dependencies":[{"Alias":"other","Condition":"other.enabled","Enabled":true,"ImportValues":[{"child":"foo","parent":"bar"},{"child":"exports.data","parent":"."}],"Name":"other","Repository":"file://charts/sub","Tags":["t1"],"Version":"0.1.0"}],"Deprecated":true,"Description":"A chart","Home":"https://example.com","Icon":"https://example.com/i.png","IsRoot":true,"Keywords":["a","b"],"KubeVersion":"\u003e=1.20.0-0","Maintainers":[{"Email":"jo@example.com","Name":"Jo","URL":""},{"Email":"","Name":"Al","URL":"https://al"}],"Name":"full","Sources":["https://s1","https://s2"],"Tags":"","Type":"application","Version":"1.2.3"}"#
            )
        );
        let bare = Metadata {
            name: "bare".into(),
            version: "0.1.0".into(),
            api_version: "v2".into(),
            ..Metadata::default()
        };
        assert_eq!(
            chart4(&bare, "{{ .Chart }}").as_deref(),
            Ok("map[APIVersion:v2 Annotations:map[] AppVersion: Condition: Dependencies:[] Deprecated:false Description: Home: Icon: IsRoot:true Keywords:[] KubeVersion: Maintainers:[] Name:bare Sources:[] Tags: Type: Version:0.1.0]")
        );
        assert_eq!(
            chart4(&bare, "{{ .Chart | toYaml }}").as_deref(),
            Ok("APIVersion: v2\nAnnotations: null\nAppVersion: \"\"\nCondition: \"\"\nDependencies: []\nDeprecated: false\nDescription: \"\"\nHome: \"\"\nIcon: \"\"\nIsRoot: true\nKeywords: []\nKubeVersion: \"\"\nMaintainers: []\nName: bare\nSources: []\nTags: \"\"\nType: \"\"\nVersion: 0.1.0")
        );
        let t = r#"{{ hasKey .Chart "Name" }} {{ hasKey .Chart "name" }} {{ .Chart.Foo }}|{{ typeOf .Chart }} {{ typeOf .Chart.Maintainers }} {{ typeOf .Chart.Annotations }} {{ kindOf .Chart.Annotations }}|{{ .Chart.Annotations | toJson }} {{ .Chart.Keywords | toJson }} {{ len .Chart.Keywords }}"#;
        assert_eq!(
            chart4(&bare, t).as_deref(),
            Ok("true false <no value>|map[string]interface {} []interface {} map[string]string map|null [] 0")
        );
        let t = r#"{{ (index .Chart.Maintainers 0).Name }} {{ typeOf (index .Chart.Maintainers 0) }} {{ .Chart.Annotations.a }}-{{ index .Chart.Annotations "b" }}-{{ range $k, $v := .Chart.Annotations }}{{ $k }}{{ $v }}{{ end }} {{ keys .Chart | sortAlpha | join "," }}"#;
        assert_eq!(
            chart4(&full, t).as_deref(),
            Ok("Jo map[string]interface {} x-2-axb2 APIVersion,Annotations,AppVersion,Condition,Dependencies,Deprecated,Description,Home,Icon,IsRoot,Keywords,KubeVersion,Maintainers,Name,Sources,Tags,Type,Version")
        );
        // `annotations: {}`: an empty map, not nil (v4.1.4: `{}`).
        let empty = Metadata {
            annotations: Some(BTreeMap::new()),
            ..bare.clone()
        };
        assert_eq!(
            chart4(
                &empty,
                "{{ .Chart.Annotations | toJson }} {{ .Chart.Annotations }}"
            )
            .as_deref(),
            Ok("{} map[]")
        );
        let t = "{{ range (index .Chart.Dependencies 0).ImportValues }}{{ typeOf . }} {{ .child }};{{ end }}";
        assert_eq!(
            chart4(&full, t).as_deref(),
            Ok("map[string]string foo;map[string]string exports.data;")
        );
        // A `map[string]string` is no `map[string]interface {}` to Sprig.
        let e = chart4(&full, r#"{{ hasKey .Chart.Annotations "a" }}"#).unwrap_err();
        assert!(
            e.ends_with(
                "wrong type for value; expected map[string]interface {}; got map[string]string"
            ),
            "{e}"
        );
        let e = chart4(&full, r#"{{ dig "Annotations" "a" "z" .Chart }}"#).unwrap_err();
        assert!(
            e.ends_with("interface conversion: interface {} is map[string]string, not map[string]interface {}"),
            "{e}"
        );
    }

    #[test]
    fn helm4_kube_version_has_a_normalized_field() {
        // helm v4.1.4, `--kube-version` absent: `{v1.35.0 v1.35.0 1 35}`;
        // `--kube-version 1.29`: `.Version` `v1.29`.
        let t = "{{ .Capabilities.KubeVersion }}|{{ .Capabilities.KubeVersion | quote }}|{{ .Capabilities.KubeVersion.Version }}|{{ .Capabilities.KubeVersion | toJson }}";
        assert_eq!(
            caps(HelmLine::V4, "1.30.7-gke.1000", t).as_deref(),
            Ok(
                r#"v1.30.7|"{v1.30.7-gke.1000 v1.30.7 1 30}"|v1.30.7-gke.1000|{"Version":"v1.30.7-gke.1000","Major":"1","Minor":"30"}"#
            )
        );
        assert_eq!(
            caps(HelmLine::V3_19, "1.29", t).as_deref(),
            Ok(r#"v1.29|"{v1.29 1 29}"|v1.29|{"Version":"v1.29","Major":"1","Minor":"29"}"#)
        );
    }

    #[test]
    fn build_info_is_the_releases_and_an_unknown_go_version_is_refused() {
        assert_eq!(
            caps(
                HelmLine::V3_18,
                "1.31",
                "{{ .Capabilities.HelmVersion.Version }} {{ .Capabilities.HelmVersion.GitCommit }}"
            )
            .as_deref(),
            Ok("v3.18.4 d80839cf37d860c8aa9a0503fe463278f26cd5e2")
        );
        assert_eq!(
            caps(
                HelmLine::V4,
                "1.31",
                "{{ .Capabilities.HelmVersion.KubeClientVersion }}"
            )
            .as_deref(),
            Ok("v1.36")
        );
        let e = caps(
            HelmLine::V3_19,
            "1.31",
            "{{ .Capabilities.HelmVersion.GoVersion }}",
        )
        .unwrap_err();
        assert!(e.contains("Go version helm v3.19.4"), "{e}");
        assert!(caps(
            HelmLine::V4,
            "1.31",
            "{{ .Capabilities.HelmVersion | toJson }}"
        )
        .is_err());
        // v3.17.1 is fully known.
        assert!(caps(
            HelmLine::V3_17,
            "1.31",
            "{{ .Capabilities.HelmVersion | toJson }}"
        )
        .is_ok());
    }

    #[test]
    fn helm4_api_versions_are_client_go_v0_36_1s_in_registration_order() {
        assert_eq!(
            caps(HelmLine::V4, "1.31", r#"{{ .Capabilities.APIVersions.Has "resource.k8s.io/v1" }} {{ .Capabilities.APIVersions.Has "autoscaling/v2beta2" }}"#).as_deref(),
            Ok("true false")
        );
        // The forms helm v4.1.4 printed (with its own list, 58 with one
        // `--api-versions`): `["v1","admissionregistration.k8s.io/v1",…`,
        // `[v1 admissionregistration.k8s.io/v1 …`, `index … 1`.
        let t = r#"{{ .Capabilities.APIVersions | toJson | trunc 38 }}|{{ printf "%v" .Capabilities.APIVersions | trunc 36 }}|{{ index .Capabilities.APIVersions 1 }}|{{ len .Capabilities.APIVersions }}"#;
        assert_eq!(
            caps(HelmLine::V4, "1.31", t).as_deref(),
            Ok(
                r#"["v1","admissionregistration.k8s.io/v1|[v1 admissionregistration.k8s.io/v1 |admissionregistration.k8s.io/v1|55"#
            )
        );
        // client-go v0.36.1 `register.go`: scheduling v1alpha2, v1beta1, v1.
        let l = caps(
            HelmLine::V4,
            "1.31",
            "{{ range .Capabilities.APIVersions }}{{ . }} {{ end }}",
        )
        .unwrap();
        assert!(
            l.contains(" scheduling.k8s.io/v1alpha2 scheduling.k8s.io/v1beta1 scheduling.k8s.io/v1 storage.k8s.io/v1beta1 "),
            "{l}"
        );
        // v3.18.0 printed v1beta2 before v1beta1 (client-go v0.33).
        let l = caps(
            HelmLine::V3_18,
            "1.31",
            "{{ .Capabilities.APIVersions | toJson }}",
        )
        .unwrap();
        assert!(
            l.contains(r#""resource.k8s.io/v1beta2","resource.k8s.io/v1beta1""#),
            "{l}"
        );
    }

    #[test]
    fn range_over_int_and_helm4_functions_follow_the_release() {
        // helm v3.17.1 (go1.23.5): `range can't iterate over 3`; v3.18.0
        // (go1.24.3): `0;1;2;`, `none`, and the two-variable error.
        let r = "{{ range 3 }}{{ . }};{{ end }}{{ range -1 }}x{{ else }}none{{ end }}";
        assert!(caps(HelmLine::V3_17, "1.31", r)
            .unwrap_err()
            .contains("range can't iterate over 3"));
        assert_eq!(
            caps(HelmLine::V3_18, "1.31", r).as_deref(),
            Ok("0;1;2;none")
        );
        let e = caps(HelmLine::V3_19, "1.31", "{{ range $i, $e := 3 }}{{ end }}").unwrap_err();
        assert!(
            e.ends_with("at <3>: can't use 3 to iterate over more than one variable"),
            "{e}"
        );
        // helm v3.17.1 and v3.18.0: `function "mustToYaml" not defined`.
        let m = r#"{{ mustToYaml (dict "a" 1) }}"#;
        assert!(caps(HelmLine::V3_19, "1.31", m)
            .unwrap_err()
            .contains(r#"function "mustToYaml" not defined"#));
        assert_eq!(caps(HelmLine::V4, "1.31", m).as_deref(), Ok("a: 1"));
        assert!(caps(HelmLine::V4, "1.31", r#"{{ mustToToml (dict "a" "b") }}"#).is_ok());
        // BurntSushi/toml v1.6.0's floats under Helm 4, v1.4.0's under
        // Helm 3: helm v4.1.4 and v3.17.1 printed these.
        let t = r#"{{ toToml (dict "a" 1.5 "b" 6.02e23 "c" (float64 "NaN") "d" 8080.0 "e" 1e6) }}"#;
        assert_eq!(
            caps(HelmLine::V4, "1.31", t).as_deref(),
            Ok("a = 1.5\nb = 6.02e+23\nc = nan\nd = 8080.0\ne = 1e+06\n")
        );
        assert_eq!(
            caps(HelmLine::V3_19, "1.31", t).as_deref(),
            Ok("a = 1.5\nb = 602000000000000000000000.0\nc = nan\nd = 8080.0\ne = 1000000.0\n")
        );
    }
}
