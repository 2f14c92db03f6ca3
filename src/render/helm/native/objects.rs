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
mod tests;

#[cfg(test)]
mod line_tests;
