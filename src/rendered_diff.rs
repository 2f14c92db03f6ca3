//! The rendered diff: what a change does to each app's manifests, resource
//! by resource, as a reviewer reads it. A stage after the plan (the rules
//! do not read it): apps are paired by key and resources by their id, each
//! object is normalised as Argo CD normalises it before comparing, secret
//! values are masked as Argo CD masks them, and modified objects get a
//! unified diff of their canonical YAML (docs/rendered-diff.md).
//!
//! Apps a diff left unrendered because nothing they read changed, and apps
//! whose head render is the base render reused, have no resources to
//! compare: their cost stays zero.

use std::collections::BTreeMap;

use base64::Engine as _;
use serde_json::Value;

use crate::argocd::{apps_beside, App, AppStatus, Inventory};
use crate::config::{DiffConfig, MaskRule};
use crate::manifest::{Manifest, ResourceId};
use crate::plan::Plan;
use goyaml::json::Pointer as _;

/// What happened to an app or a resource between the revisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Change {
    /// New at head.
    Added,
    /// Present at both, different once normalised.
    Modified,
    /// Gone at head.
    Removed,
}

impl Change {
    /// The name the JSON report uses.
    #[must_use]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Modified => "modified",
            Change::Removed => "removed",
        }
    }
}

/// One resource's change.
#[derive(Debug, Clone)]
pub(crate) struct ResourceDiff {
    /// Its identity (the plan's).
    pub(crate) id: ResourceId,
    /// Added, modified or removed.
    pub(crate) change: Change,
    /// The unified diff of its canonical YAML, headed `--- a/<path>` and
    /// `+++ b/<path>` (`/dev/null` for the side it is absent from); empty
    /// when the body is hidden (`hideDeleted`).
    pub(crate) unified: String,
    /// The canonical, masked YAML at base (`None`: absent there).
    pub(crate) base: Option<String>,
    /// The canonical, masked YAML at head (`None`: absent there).
    pub(crate) head: Option<String>,
}

/// One app's changes.
#[derive(Debug, Clone)]
pub(crate) struct AppDiff {
    /// The app as reports name it ([`App::display_name`]).
    pub(crate) app: String,
    /// Added (new at head), removed (gone at head) or modified.
    pub(crate) change: Change,
    /// Changed resources, sorted by id.
    pub(crate) resources: Vec<ResourceDiff>,
    /// The sources of a `partial` app this run cannot read (at either
    /// revision), as messages name them: the diff is of the other sources
    /// only, and what these render is not shown. Empty for a whole render.
    pub(crate) partial: Vec<String>,
}

/// A touched app the rendered diff cannot show: its inputs changed, but it
/// is not rendered at a revision it exists at (a render error, sources
/// this run cannot read) or it is unknown at head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NotDiffed {
    /// The app as reports name it ([`App::display_name`]).
    pub(crate) app: String,
    /// Why, one line: the revision and the cause.
    pub(crate) why: String,
}

impl AppDiff {
    /// Resources added, modified and removed.
    #[must_use]
    pub(crate) fn counts(&self) -> (usize, usize, usize) {
        let n = |c: Change| self.resources.iter().filter(|r| r.change == c).count();
        (n(Change::Added), n(Change::Modified), n(Change::Removed))
    }
}

/// The rendered diff of a run: apps with at least one changed resource,
/// sorted by name.
#[derive(Debug, Clone, Default)]
pub(crate) struct RenderedDiff {
    /// Each app with changes.
    pub(crate) apps: Vec<AppDiff>,
    /// Touched apps not diffed, sorted by name: nothing may look unchanged
    /// only because it could not be compared.
    pub(crate) not_diffed: Vec<NotDiffed>,
}

/// The path of a resource inside an app's rendered tree:
/// `<app>/<group>_<kind>_<namespace>_<name>.yaml`, empty parts left out
/// (the core group, a cluster-scoped object's namespace), every part made
/// a safe file name ([`path_part`]).
#[must_use]
pub(crate) fn resource_path(app: &str, id: &ResourceId) -> String {
    let parts: Vec<String> = [&id.group, &id.kind, &id.namespace, &id.name]
        .into_iter()
        .filter(|p| !p.is_empty())
        .map(|p| path_part(p))
        .collect();
    format!("{}/{}.yaml", path_part(app), parts.join("_"))
}

/// `s` as one file name: characters other than ASCII letters, digits, `.`,
/// `-` and `_` become `_` (an app's `namespace/name` becomes
/// `namespace_name`), and a name of dots only (`.`, `..`) is prefixed, so
/// no part climbs out of the directory it is written in.
#[must_use]
pub(crate) fn path_part(s: &str) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if out.is_empty() || out.chars().all(|c| c == '.') {
        out.insert(0, '_');
    }
    out
}

/// The rendered diff between the inventories of a diff. Apps are paired by
/// key as the plan pairs them; an app new at head is added whole, and one
/// the plan deletes is removed whole.
#[must_use]
pub(crate) fn compute(
    base: &Inventory,
    head: &Inventory,
    plan: &Plan,
    settings: &DiffConfig,
) -> RenderedDiff {
    // An app is removed whole only when the plan deletes it: one whose file
    // no longer parses, or whose parent failed to render, is unknown at
    // head (GL000 says why), not shown as deleted.
    let deleted: std::collections::BTreeSet<&str> =
        plan.deleted_apps.iter().map(|d| d.app.as_str()).collect();
    let globs: Vec<gotemplate::go::glob::Glob> = settings
        .apps
        .iter()
        .filter_map(|g| gotemplate::go::glob::Glob::new(g, &[]).ok())
        .collect();
    // Apps chosen by name glob and by label, at the revision shown (head,
    // or base for a deleted app).
    let everything = globs.is_empty() && settings.app_labels.is_empty();
    let chosen = |a: &App| {
        if everything {
            return true;
        }
        let name = a.display_name();
        (globs.is_empty()
            || globs
                .iter()
                .any(|g| g.is_match(&name) || g.is_match(&a.spec.name)))
            && settings.app_labels.iter().all(|(k, v)| {
                a.object
                    .at(&format!(
                        "/metadata/labels/{}",
                        crate::manifest::pointer_token(k)
                    ))
                    .and_then(Value::as_str)
                    == Some(v.as_str())
            })
    };
    let mut apps = Vec::new();
    let mut not_diffed = Vec::new();
    let mut skip = |app: &App, why: String| {
        not_diffed.push(NotDiffed {
            app: app.display_name(),
            why,
        });
    };
    for (key, b, h) in apps_beside(&base.apps, &head.apps) {
        if !chosen(h.unwrap_or(b)) {
            continue;
        }
        match h {
            Some(h) if !deleted.contains(key.as_str()) => {
                // The head render is the base render itself, or everything
                // the app reads is identical at both revisions: nothing of
                // it changes, so nothing is left unshown.
                if head.reused.contains(key)
                    || matches!(b.status, AppStatus::Unchanged)
                    || matches!(h.status, AppStatus::Unchanged)
                {
                    continue;
                }
                // Only apps rendered at both revisions are compared; one the
                // change does not touch is not named.
                if !(b.status.renders_here() && h.status.renders_here()) {
                    if !same_unrendered(b, h) {
                        skip(h, modified_why(b, h));
                    }
                    continue;
                }
                let resources = diff_resources(Some(b), Some(h), settings);
                if !resources.is_empty() {
                    apps.push(AppDiff {
                        app: h.display_name(),
                        change: Change::Modified,
                        resources,
                        partial: left_out(&[b, h]),
                    });
                }
            }
            _ if deleted.contains(key.as_str()) => {
                if let Some(why) = unreadable(b) {
                    skip(b, format!("app deleted; at base, {why}: what it held is unknown"));
                } else if !b.resources.is_empty() {
                    apps.push(AppDiff {
                        app: b.display_name(),
                        change: Change::Removed,
                        resources: diff_resources(Some(b), None, settings),
                        partial: left_out(&[b]),
                    });
                }
            }
            // Absent at head but not deleted by the plan: its Application
            // no longer parses, or its parent did not render.
            _ => skip(
                b,
                "unknown at head: its Application, or the parent app or ApplicationSet that declares it, cannot be read (GL000)"
                    .to_owned(),
            ),
        }
    }
    for (key, h) in &head.apps {
        if base.apps.contains_key(key) || !chosen(h) {
            continue;
        }
        if let Some(why) = unreadable(h) {
            skip(h, format!("app added; {why}"));
            continue;
        }
        if h.resources.is_empty() {
            continue;
        }
        apps.push(AppDiff {
            app: h.display_name(),
            change: Change::Added,
            resources: diff_resources(None, Some(h), settings),
            partial: left_out(&[h]),
        });
    }
    apps.sort_by(|x, y| x.app.cmp(&y.app));
    not_diffed.sort_by(|x, y| x.app.cmp(&y.app));
    RenderedDiff { apps, not_diffed }
}

/// Why an app's resources are unknown at one revision, or `None` when at
/// least one of its sources rendered.
fn unreadable(a: &App) -> Option<String> {
    match &a.status {
        AppStatus::Unrendered(_) => Some("its render fails (GL000)".to_owned()),
        AppStatus::External(why) => Some(format!("its sources are not in this repository ({why})")),
        AppStatus::Unchanged => Some("it was not rendered".to_owned()),
        AppStatus::Rendered | AppStatus::Partial(_) => None,
    }
}

/// Whether an app not rendered at both revisions is so for the same
/// reason on the same inputs: the same Application, the same render error
/// or external sources, and every path its render read with the same id
/// (as GL000 leaves out a failure that is not the change's). The change
/// does not touch it.
fn same_unrendered(b: &App, h: &App) -> bool {
    let same_status = match (&b.status, &h.status) {
        (AppStatus::Unrendered(x), AppStatus::Unrendered(y)) => x == y,
        (AppStatus::External(x), AppStatus::External(y)) => x == y,
        _ => false,
    };
    same_status && b.object == h.object && b.inputs == h.inputs
}

/// Why an app present at both revisions is not diffed: the revision (or
/// both) at which it is not rendered, and the cause.
fn modified_why(b: &App, h: &App) -> String {
    match (unreadable(b), unreadable(h)) {
        (Some(x), Some(y)) if x == y => format!("at both revisions, {x}"),
        (Some(x), Some(y)) => format!("at base, {x}; at head, {y}"),
        (Some(x), None) => format!("at base, {x}"),
        (None, Some(y)) => format!("at head, {y}"),
        (None, None) => "it was not rendered".to_owned(),
    }
}

/// The sources any of `apps` (one app at its revisions) left out, each
/// named once.
fn left_out(apps: &[&App]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for a in apps {
        for l in a.status.left_out() {
            if !out.contains(&l.source) {
                out.push(l.source.clone());
            }
        }
    }
    out
}

/// The changed resources of one app between its base and head renders.
fn diff_resources(b: Option<&App>, h: Option<&App>, settings: &DiffConfig) -> Vec<ResourceDiff> {
    let app = h.or(b).map(App::display_name).unwrap_or_default();
    let (before, after) = (index(b), index(h));
    let ignores = [b, h].map(|a| a.map(ignore_differences).unwrap_or_default());
    let mut ids: Vec<&ResourceId> = before.keys().chain(after.keys()).copied().collect();
    ids.sort();
    ids.dedup();
    let hide_body = settings.hide_deleted && h.is_none();
    let mut out = Vec::new();
    for id in ids {
        if settings.ignore_resources.iter().any(|m| m.matches(id)) {
            continue;
        }
        let (bm, hm) = (before.get(id).copied(), after.get(id).copied());
        // One value shared by both renders is unchanged: the common case
        // of an app rendered again beside one changed file.
        if let (Some(x), Some(y)) = (bm, hm) {
            if std::sync::Arc::ptr_eq(&x.value, &y.value) {
                continue;
            }
        }
        let generated: Vec<&str> = bm
            .iter()
            .chain(hm.iter())
            .flat_map(|m| m.generated.iter().map(String::as_str))
            .collect();
        let mut bv = bm.map(|m| normalized(m, &generated, &ignores[0]));
        let mut hv = hm.map(|m| normalized(m, &generated, &ignores[1]));
        let change = match (&bv, &hv) {
            (Some(x), Some(y)) if x == y => continue,
            (Some(_), Some(_)) => Change::Modified,
            (None, Some(_)) => Change::Added,
            (Some(_), None) => Change::Removed,
            (None, None) => continue,
        };
        mask(id, hv.as_mut(), bv.as_mut(), &settings.mask);
        let path = resource_path(&app, id);
        let base_text = bv.as_ref().map(goyaml::emit::to_yaml);
        let head_text = hv.as_ref().map(goyaml::emit::to_yaml);
        let unified = if hide_body {
            String::new()
        } else {
            let text = unified(base_text.as_deref(), head_text.as_deref(), &path, settings);
            // Every changed line ignored (`ignoreLines`): no change.
            if text.is_empty() {
                continue;
            }
            text
        };
        // A change that masking hides whole (a secret value changed, both
        // masks the same length) still shows: the masks differ.
        out.push(ResourceDiff {
            id: id.clone(),
            change,
            unified,
            base: base_text,
            head: head_text,
        });
    }
    out
}

/// An app's resources by id.
fn index(a: Option<&App>) -> BTreeMap<&ResourceId, &Manifest> {
    a.map(|a| a.resources.iter().map(|m| (&m.id, m)).collect())
        .unwrap_or_default()
}

/// A unified diff of two YAML texts (`None`: absent at that revision),
/// headed as `git diff` heads a file.
fn unified(base: Option<&str>, head: Option<&str>, path: &str, settings: &DiffConfig) -> String {
    let old_name = if base.is_some() {
        format!("a/{path}")
    } else {
        "/dev/null".to_string()
    };
    let new_name = if head.is_some() {
        format!("b/{path}")
    } else {
        "/dev/null".to_string()
    };
    let (old, new) = (base.unwrap_or(""), head.unwrap_or(""));
    let diff = similar::TextDiff::from_lines(old, new);
    let mut unified = diff.unified_diff();
    unified.context_radius(settings.context);
    if settings.ignore_lines.is_empty() {
        return unified.header(&old_name, &new_name).to_string();
    }
    // Hunks whose every changed line matches an `ignoreLines` pattern are
    // left out (a line is matched without its newline).
    let ignored = |line: &str| {
        let line = line.strip_suffix('\n').unwrap_or(line);
        settings.ignore_lines.iter().any(|p| p.0.is_match(line))
    };
    let mut out = String::new();
    for hunk in unified.iter_hunks() {
        let kept = hunk
            .iter_changes()
            .any(|c| c.tag() != similar::ChangeTag::Equal && !ignored(c.value()));
        if kept {
            out.push_str(&hunk.to_string());
        }
    }
    if out.is_empty() {
        return out;
    }
    format!("--- {old_name}\n+++ {new_name}\n{out}")
}

/// JSON pointers of `spec.ignoreDifferences` entries of an Application, by
/// the group, kind, name and namespace they match (Argo CD
/// `util/argo/normalizers/diff_normalizer.go` `NewIgnoreNormalizer`: an
/// empty name or namespace matches any). A `jqPathExpressions` item that is
/// a path of keys is applied as its pointer; any other needs a jq engine and
/// is not applied (the notes name it), nor is `managedFieldsManagers`,
/// which needs the live object.
#[derive(Debug, Clone, Default)]
struct Ignores(Vec<IgnoreEntry>);

#[derive(Debug, Clone)]
struct IgnoreEntry {
    group: String,
    kind: String,
    name: String,
    namespace: String,
    pointers: Vec<String>,
}

fn ignore_differences(app: &App) -> Ignores {
    let Some(items) = app
        .object
        .at("/spec/ignoreDifferences")
        .and_then(Value::as_array)
        .cloned()
    else {
        return Ignores::default();
    };
    let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    Ignores(
        items
            .iter()
            .map(|v| IgnoreEntry {
                group: text(v, "group"),
                kind: text(v, "kind"),
                name: text(v, "name"),
                namespace: text(v, "namespace"),
                pointers: crate::manifest::strings(v.get("jsonPointers"))
                    .into_iter()
                    .chain(
                        crate::manifest::strings(v.get("jqPathExpressions"))
                            .iter()
                            .filter_map(|jq| goyaml::json::jq_key_path_pointer(jq)),
                    )
                    .collect(),
            })
            .filter(|e| !e.pointers.is_empty())
            .collect(),
    )
}

impl Ignores {
    fn pointers_for<'a>(&'a self, id: &'a ResourceId) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |e| {
                e.group == id.group
                    && e.kind == id.kind
                    && (e.name.is_empty() || e.name == id.name)
                    && (e.namespace.is_empty() || e.namespace == id.namespace)
            })
            .flat_map(|e| e.pointers.iter().map(String::as_str))
    }
}

/// The object as Argo CD compares it (gitops-engine `pkg/diff/diff.go`):
/// - `Normalize`: `metadata.creationTimestamp` removed; a `Secret`'s
///   `stringData` moved into `data` base64-encoded (`NormalizeSecret`); a
///   `Role`'s or `ClusterRole`'s empty `rules` list is null (`normalizeRole`);
/// - `status` ignored for every kind (Argo CD's default compare option
///   `ignoreResourceStatusField: all`, `util/settings/settings.go`
///   `GetResourceOverrides` and `addStatusOverrideToGK`);
/// - numbers compared as values, `2.0` as `2` (`remarshal`: a JSON round
///   trip strips the type of an integral float);
/// - the app's `ignoreDifferences` JSON pointers removed;
/// - fields a chart draws anew at every render (`Manifest::generated`)
///   removed: no two renders agree on them.
fn normalized(m: &Manifest, generated: &[&str], ignores: &Ignores) -> Value {
    let mut v = Value::clone(&m.value);
    for p in generated {
        remove_pointer(&mut v, p);
    }
    for p in ignores.pointers_for(&m.id) {
        remove_pointer(&mut v, p);
    }
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("creationTimestamp");
    }
    if let Some(obj) = v.as_object_mut() {
        obj.remove("status");
    }
    if m.id.group.is_empty() && m.id.kind == "Secret" {
        normalize_secret(&mut v);
    }
    if m.id.group == "rbac.authorization.k8s.io"
        && (m.id.kind == "Role" || m.id.kind == "ClusterRole")
    {
        if let Some(rules) = v.get_mut("rules") {
            if rules.as_array().is_some_and(Vec::is_empty) {
                *rules = Value::Null;
            }
        }
    }
    integral_floats(&mut v);
    v
}

/// Removes the field a JSON pointer names, if present.
fn remove_pointer(v: &mut Value, pointer: &str) {
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return;
    };
    let key = last.replace("~1", "/").replace("~0", "~");
    match v.pointer_mut(parent) {
        Some(Value::Object(m)) => {
            m.remove(&key);
        }
        Some(Value::Array(a)) => {
            if let Ok(i) = key.parse::<usize>() {
                if i < a.len() {
                    a.remove(i);
                }
            }
        }
        _ => {}
    }
}

/// gitops-engine `NormalizeSecret`: `stringData` values base64-encoded into
/// `data` (a non-string kept as it is), `stringData` removed, and a null
/// `data` value an empty string.
fn normalize_secret(v: &mut Value) {
    let Some(obj) = v.as_object_mut() else {
        return;
    };
    if let Some(Value::Object(string_data)) = obj.get("stringData").cloned() {
        let data = obj
            .entry("data")
            .or_insert_with(|| Value::Object(serde_json::Map::new()));
        if !data.is_object() {
            *data = Value::Object(serde_json::Map::new());
        }
        if let Some(data) = data.as_object_mut() {
            for (k, val) in string_data {
                let encoded = match val {
                    Value::String(s) => {
                        Value::String(base64::engine::general_purpose::STANDARD.encode(s))
                    }
                    other => other,
                };
                data.insert(k, encoded);
            }
        }
        obj.remove("stringData");
    }
    if let Some(Value::Object(data)) = obj.get_mut("data") {
        for val in data.values_mut() {
            if val.is_null() {
                *val = Value::String(String::new());
            }
        }
    }
}

/// Integral floats as integers, at every level.
fn integral_floats(v: &mut Value) {
    let mut stack = vec![v];
    while let Some(v) = stack.pop() {
        match v {
            Value::Number(n) if n.is_f64() => {
                // Below 2^53 every integral float is exactly an integer.
                if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15) {
                    #[allow(clippy::cast_possible_truncation)]
                    let i = f as i64;
                    *v = Value::from(i);
                }
            }
            Value::Array(a) => stack.extend(a.iter_mut()),
            Value::Object(m) => stack.extend(m.values_mut()),
            _ => {}
        }
    }
}

/// The first mask of gitops-engine `hide` (`replacement`): eight `+`; each
/// further distinct value of the same key gets four more.
const MASK: &str = "++++++++";

/// Masks secret values in the head (`target`) and base (`live`) objects of
/// one resource as gitops-engine `HideSecretData` does: for each key of a
/// `Secret`'s `data` (after `NormalizeSecret`), the values of both
/// objects, target first, get masks by value (the same value the same
/// mask, another value a longer one: `hide`). The entries of `diff.mask`
/// that name the resource mask the `data`, `stringData` and `binaryData`
/// keys and the JSON pointers they list the same way.
fn mask(id: &ResourceId, target: Option<&mut Value>, live: Option<&mut Value>, rules: &[MaskRule]) {
    let mut objs: Vec<&mut Value> = target.into_iter().chain(live).collect();
    if id.group.is_empty() && id.kind == "Secret" {
        let keys: std::collections::BTreeSet<String> = objs
            .iter()
            .filter_map(|o| o.get("data").and_then(Value::as_object))
            .flat_map(|d| d.keys().cloned())
            .collect();
        for k in keys {
            hide(
                &mut objs,
                &format!("/data/{}", crate::manifest::pointer_token(&k)),
            );
        }
    }
    for rule in rules.iter().filter(|r| mask_applies(r, id)) {
        for k in &rule.keys {
            for field in ["data", "stringData", "binaryData"] {
                hide(
                    &mut objs,
                    &format!("/{field}/{}", crate::manifest::pointer_token(k)),
                );
            }
        }
        for p in &rule.pointers {
            hide(&mut objs, p);
        }
    }
}

fn mask_applies(rule: &MaskRule, id: &ResourceId) -> bool {
    rule.kind == id.kind
        && rule.group.as_ref().is_none_or(|g| *g == id.group)
        && rule.name.as_ref().is_none_or(|n| *n == id.name)
        && rule.namespace.as_ref().is_none_or(|n| *n == id.namespace)
}

/// gitops-engine `hide` for one field: masks by value across the objects,
/// in order. A null value is left as it is (its `nil` check), and a value
/// is compared by its text (`toString`).
fn hide(objs: &mut [&mut Value], pointer: &str) {
    let mut next = MASK.to_string();
    let mut by_value: BTreeMap<String, String> = BTreeMap::new();
    for obj in objs.iter_mut() {
        let Some(field) = obj.pointer_mut(pointer) else {
            continue;
        };
        if field.is_null() {
            continue;
        }
        let text = match &*field {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let replacement = by_value.entry(text).or_insert_with(|| {
            let r = next.clone();
            next.push_str("++++");
            r
        });
        *field = Value::String(replacement.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn id(group: &str, kind: &str, ns: &str, name: &str) -> ResourceId {
        ResourceId {
            group: group.into(),
            kind: kind.into(),
            namespace: ns.into(),
            name: name.into(),
        }
    }

    #[test]
    fn secret_values_are_masked_by_value_target_first() {
        let sid = id("", "Secret", "ns", "s");
        let mut head = json!({"data": {"a": "c2FtZQ==", "b": "bmV3"}});
        let mut base = json!({"data": {"a": "c2FtZQ==", "b": "b2xk"}});
        mask(&sid, Some(&mut head), Some(&mut base), &[]);
        assert_eq!(head["data"]["a"], "++++++++");
        assert_eq!(base["data"]["a"], "++++++++");
        assert_eq!(head["data"]["b"], "++++++++");
        assert_eq!(base["data"]["b"], "++++++++++++");
    }

    #[test]
    fn string_data_is_compared_as_the_data_it_becomes() {
        let mut a = json!({"stringData": {"k": "v"}});
        normalize_secret(&mut a);
        assert_eq!(a, json!({"data": {"k": "dg=="}}));
    }

    #[test]
    fn configured_masks_name_keys_and_pointers() {
        let cid = id("", "ConfigMap", "ns", "cfg");
        let rules = [MaskRule {
            group: None,
            kind: "ConfigMap".into(),
            name: Some("cfg".into()),
            namespace: None,
            keys: vec!["token".into()],
            pointers: vec!["/metadata/annotations/pw".into()],
        }];
        let mut head = json!({"data": {"token": "t1", "plain": "p"}, "metadata": {"annotations": {"pw": "x"}}});
        mask(&cid, Some(&mut head), None, &rules);
        assert_eq!(head["data"]["token"], "++++++++");
        assert_eq!(head["data"]["plain"], "p");
        assert_eq!(head["metadata"]["annotations"]["pw"], "++++++++");
    }

    #[test]
    fn paths_cannot_climb_out_of_their_directory() {
        assert_eq!(path_part(".."), "_..");
        assert_eq!(path_part("ns/app"), "ns_app");
        assert_eq!(
            resource_path("a/b", &id("apps", "Deployment", "web", "api")),
            "a_b/apps_Deployment_web_api.yaml"
        );
    }

    #[test]
    fn integral_floats_equal_integers() {
        let mut v = json!({"replicas": 2.0, "ratio": 0.5});
        integral_floats(&mut v);
        assert_eq!(v, json!({"replicas": 2, "ratio": 0.5}));
    }
}
