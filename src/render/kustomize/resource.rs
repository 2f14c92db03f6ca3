//! The resource model of a build: group/version/kind, ids, and the
//! per-resource bookkeeping Kustomize keeps in build annotations
//! (previous ids, name prefixes/suffixes, hash flag, generator behaviour).

use serde_json::{Map, Value};

use crate::manifest::Origin;

/// Group, version and kind of an object.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub(crate) struct Gvk {
    /// API group (`""` for core).
    pub(crate) group: String,
    /// API version.
    pub(crate) version: String,
    /// Kind.
    pub(crate) kind: String,
}

/// Kinds that the built-in v1.21.2 schema knows as cluster-scoped, by apiVersion.
const CLUSTER_SCOPED: &[(&str, &str)] = &[
    (
        "admissionregistration.k8s.io/v1",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io/v1",
        "ValidatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "ValidatingWebhookConfiguration",
    ),
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("apiextensions.k8s.io/v1beta1", "CustomResourceDefinition"),
    ("apiregistration.k8s.io/v1", "APIService"),
    ("apiregistration.k8s.io/v1beta1", "APIService"),
    ("certificates.k8s.io/v1", "CertificateSigningRequest"),
    ("certificates.k8s.io/v1beta1", "CertificateSigningRequest"),
    ("flowcontrol.apiserver.k8s.io/v1beta1", "FlowSchema"),
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "PriorityLevelConfiguration",
    ),
    ("networking.k8s.io/v1", "IngressClass"),
    ("networking.k8s.io/v1beta1", "IngressClass"),
    ("node.k8s.io/v1", "RuntimeClass"),
    ("node.k8s.io/v1beta1", "RuntimeClass"),
    ("policy/v1beta1", "PodSecurityPolicy"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("rbac.authorization.k8s.io/v1beta1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1beta1", "ClusterRoleBinding"),
    ("scheduling.k8s.io/v1", "PriorityClass"),
    ("scheduling.k8s.io/v1beta1", "PriorityClass"),
    ("storage.k8s.io/v1", "CSIDriver"),
    ("storage.k8s.io/v1", "CSINode"),
    ("storage.k8s.io/v1", "StorageClass"),
    ("storage.k8s.io/v1", "VolumeAttachment"),
    ("storage.k8s.io/v1beta1", "CSIDriver"),
    ("storage.k8s.io/v1beta1", "CSINode"),
    ("storage.k8s.io/v1beta1", "StorageClass"),
    ("storage.k8s.io/v1beta1", "VolumeAttachment"),
    ("v1", "ComponentStatus"),
    ("v1", "Namespace"),
    ("v1", "Node"),
    ("v1", "NodeProxyOptions"),
    ("v1", "PersistentVolume"),
];

impl Gvk {
    /// Splits an apiVersion (`apps/v1`, `v1`) and pairs it with `kind`.
    #[must_use]
    pub(crate) fn new(api_version: &str, kind: &str) -> Gvk {
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api_version.to_string()),
        };
        Gvk {
            group,
            version,
            kind: kind.to_string(),
        }
    }

    /// The gvk of an object.
    #[must_use]
    pub(crate) fn of(v: &Value) -> Gvk {
        Gvk::new(str_at(v, &["apiVersion"]), str_at(v, &["kind"]))
    }

    /// `group/version`, or `version` for the core group.
    #[must_use]
    pub(crate) fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Kustomize's `IsSelected`: empty selector fields match anything.
    #[must_use]
    pub(crate) fn selected_by(&self, sel: &Gvk) -> bool {
        (sel.group.is_empty() || sel.group == self.group)
            && (sel.version.is_empty() || sel.version == self.version)
            && (sel.kind.is_empty() || sel.kind == self.kind)
    }

    /// Whether the built-in schema knows this kind as cluster-scoped.
    /// Unknown kinds count as namespaced, as in Kustomize.
    #[must_use]
    pub(crate) fn is_cluster_scoped(&self) -> bool {
        let av = self.api_version();
        CLUSTER_SCOPED
            .iter()
            .any(|(a, k)| *a == av && *k == self.kind)
    }

    /// The `~G_~V_~K` form used to break sort ties.
    #[must_use]
    pub(crate) fn sort_string(&self) -> String {
        format!(
            "{}_{}_{}",
            or(&self.group, "~G"),
            or(&self.version, "~V"),
            or(&self.kind, "~K")
        )
    }

    /// Kustomize's `Gvk.String` (`kind.version.group` with placeholders).
    #[must_use]
    pub(crate) fn id_string(&self) -> String {
        format!(
            "{}.{}.{}",
            or(&self.kind, "[noKind]"),
            or(&self.version, "[noVer]"),
            or(&self.group, "[noGrp]")
        )
    }
}

/// The identity of a resource: gvk, name and namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResId {
    /// Group/version/kind.
    pub(crate) gvk: Gvk,
    /// `metadata.name`.
    pub(crate) name: String,
    /// `metadata.namespace` (may be empty).
    pub(crate) namespace: String,
}

impl ResId {
    /// The namespace Kustomize compares: a marker for cluster-scoped kinds,
    /// `default` for an empty namespace.
    #[must_use]
    pub(crate) fn effective_ns(&self) -> String {
        if self.gvk.is_cluster_scoped() {
            "_non_namespaceable_".to_string()
        } else if self.namespace.is_empty() {
            "default".to_string()
        } else {
            self.namespace.clone()
        }
    }

    /// Kustomize's `ResId.Equals`.
    #[must_use]
    pub(crate) fn same(&self, o: &ResId) -> bool {
        self.gvk == o.gvk && self.name == o.name && self.effective_ns() == o.effective_ns()
    }

    /// Human form for messages.
    #[must_use]
    pub(crate) fn display(&self) -> String {
        let ns = if self.namespace.is_empty() {
            String::new()
        } else {
            format!(" in namespace `{}`", self.namespace)
        };
        format!("{} `{}`{}", self.gvk.kind, self.name, ns)
    }
}

/// A previous identity of a resource (kind, name, namespace), recorded when
/// a transformer renames or moves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PrevId {
    /// Kind at the time.
    pub(crate) kind: String,
    /// Name at the time.
    pub(crate) name: String,
    /// Effective namespace at the time.
    pub(crate) namespace: String,
}

/// Generator behaviour.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Behavior {
    /// Not generated, or `create`.
    #[default]
    Create,
    /// `merge` into an existing object.
    Merge,
    /// `replace` an existing object.
    Replace,
}

/// One resource of a build with its bookkeeping.
#[derive(Debug, Clone)]
pub(crate) struct Res {
    /// The object.
    pub(crate) v: Value,
    /// Where it came from.
    pub(crate) origin: Origin,
    /// Previous ids, oldest first.
    pub(crate) prev: Vec<PrevId>,
    /// Name prefixes applied, innermost first.
    pub(crate) prefixes: Vec<String>,
    /// Name suffixes applied, innermost first.
    pub(crate) suffixes: Vec<String>,
    /// Whether the content hash is appended to the name at the end.
    pub(crate) needs_hash: bool,
    /// Generator behaviour.
    pub(crate) behavior: Behavior,
    /// For generated objects: the kustomization file and generator kind
    /// (what an origin annotation names).
    pub(crate) generated_by: Option<(String, &'static str)>,
    /// Names of the vars bound to this resource.
    pub(crate) ref_vars: Vec<String>,
    /// Keys its source document wrote as an explicit `null` (kept by a
    /// strategic merge, unlike empty values).
    pub(crate) explicit_nulls: Vec<String>,
}

impl Res {
    /// A resource read from a file.
    #[must_use]
    pub(crate) fn new(v: Value, origin: Origin) -> Res {
        Res {
            v,
            origin,
            prev: Vec::new(),
            prefixes: Vec::new(),
            suffixes: Vec::new(),
            needs_hash: false,
            behavior: Behavior::Create,
            generated_by: None,
            ref_vars: Vec::new(),
            explicit_nulls: Vec::new(),
        }
    }

    /// `metadata.name`.
    #[must_use]
    pub(crate) fn name(&self) -> &str {
        str_at(&self.v, &["metadata", "name"])
    }

    /// `metadata.namespace`.
    #[must_use]
    pub(crate) fn namespace(&self) -> &str {
        str_at(&self.v, &["metadata", "namespace"])
    }

    /// `kind`.
    #[must_use]
    pub(crate) fn kind(&self) -> &str {
        str_at(&self.v, &["kind"])
    }

    /// The current gvk.
    #[must_use]
    pub(crate) fn gvk(&self) -> Gvk {
        Gvk::of(&self.v)
    }

    /// The current id.
    #[must_use]
    pub(crate) fn cur_id(&self) -> ResId {
        ResId {
            gvk: self.gvk(),
            name: self.name().to_string(),
            namespace: self.namespace().to_string(),
        }
    }

    /// Previous ids as full ids (current group/version, recorded kind).
    #[must_use]
    pub(crate) fn prev_ids(&self) -> Vec<ResId> {
        let g = self.gvk();
        self.prev
            .iter()
            .map(|p| ResId {
                gvk: Gvk {
                    group: g.group.clone(),
                    version: g.version.clone(),
                    kind: p.kind.clone(),
                },
                name: p.name.clone(),
                namespace: p.namespace.clone(),
            })
            .collect()
    }

    /// The original id: the oldest previous id, or the current one.
    #[must_use]
    pub(crate) fn org_id(&self) -> ResId {
        self.prev_ids()
            .into_iter()
            .next()
            .unwrap_or_else(|| self.cur_id())
    }

    /// Current id followed by every previous id.
    #[must_use]
    pub(crate) fn all_ids(&self) -> Vec<ResId> {
        let mut v = vec![self.cur_id()];
        v.extend(self.prev_ids());
        v
    }

    /// Records the current id as a previous one.
    pub(crate) fn store_prev_id(&mut self) {
        let id = self.cur_id();
        self.prev.push(PrevId {
            kind: id.gvk.kind.clone(),
            name: id.name.clone(),
            namespace: id.effective_ns(),
        });
    }

    /// Sets `metadata.name`.
    pub(crate) fn set_name(&mut self, name: &str) {
        set_at(
            &mut self.v,
            &["metadata", "name"],
            Value::String(name.to_string()),
        );
    }

    /// Sets `metadata.namespace` (removing it when empty).
    pub(crate) fn set_namespace(&mut self, ns: &str) {
        if ns.is_empty() {
            if let Some(m) = self.v.get_mut("metadata").and_then(Value::as_object_mut) {
                m.remove("namespace");
            }
        } else {
            set_at(
                &mut self.v,
                &["metadata", "namespace"],
                Value::String(ns.to_string()),
            );
        }
    }

    /// `metadata.labels` or `metadata.annotations` as a string map.
    #[must_use]
    pub(crate) fn meta_map(&self, field: &str) -> Map<String, Value> {
        self.v
            .get("metadata")
            .and_then(|m| m.get(field))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    }
}

/// The string at `path`, or `""`.
#[must_use]
pub(crate) fn str_at<'a>(v: &'a Value, path: &[&str]) -> &'a str {
    let mut cur = v;
    for p in path {
        match cur.get(*p) {
            Some(n) => cur = n,
            None => return "",
        }
    }
    cur.as_str().unwrap_or("")
}

/// Sets `path` to `val`, creating maps on the way (and replacing non-maps).
pub(crate) fn set_at(v: &mut Value, path: &[&str], val: Value) {
    let mut cur = v;
    for (i, p) in path.iter().enumerate() {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        let Value::Object(m) = cur else { return };
        if i + 1 == path.len() {
            m.insert((*p).to_string(), val);
            return;
        }
        cur = m
            .entry((*p).to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

/// Kustomize's `SameEndingSubSlice`: one list is a suffix of the other.
#[must_use]
pub(crate) fn same_ending(a: &[String], b: &[String]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.is_empty() {
        return long.is_empty();
    }
    long[long.len() - short.len()..] == *short
}

/// Kustomize's `PrefixesSuffixesEquals`.
#[must_use]
pub(crate) fn prefix_suffix_equals(a: &Res, b: &Res, allow_empty: bool) -> bool {
    if allow_empty {
        let pe = a.prefixes.is_empty() || b.prefixes.is_empty();
        let se = a.suffixes.is_empty() || b.suffixes.is_empty();
        (pe || same_ending(&a.prefixes, &b.prefixes))
            && (se || same_ending(&a.suffixes, &b.suffixes))
    } else {
        same_ending(&a.prefixes, &b.prefixes) && same_ending(&a.suffixes, &b.suffixes)
    }
}

/// The end of a Kustomize build rewrites every resource's annotations
/// (`SetOrigin(nil)` → `SetAnnotations`): values become strings and an empty
/// or null map disappears.
pub(crate) fn remove_build_annotations(r: &mut Res) {
    let anns =
        r.v.get("metadata")
            .and_then(|m| m.get("annotations"))
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
    let Some(meta) = r.v.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    if anns.is_empty() {
        meta.remove("annotations");
        return;
    }
    let m: Map<String, Value> = anns
        .into_iter()
        .map(|(k, v)| (k, Value::String(super::smp::scalar_text(&v))))
        .collect();
    meta.insert("annotations".into(), Value::Object(m));
}

/// `s`, or the placeholder `d` when it is empty.
fn or<'a>(s: &'a str, d: &'a str) -> &'a str {
    if s.is_empty() {
        d
    } else {
        s
    }
}
