//! GL010 immutable-field-change: a change the API server refuses ("field is
//! immutable"), so the sync fails on that resource until someone intervenes.
//!
//! The checks are one table, [`TABLE`], one row per kind, each naming the
//! Kubernetes update validator it follows. Fields the cluster fills in and
//! git leaves unset are kept by the API server on update, so an unset field
//! at head is never a change unless the validator says otherwise.

use goyaml::json::Pointer as _;
use serde_json::{Map, Value};

use super::analysis::at_field;
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity};
use crate::manifest::Manifest;

/// See `rules/GL010-immutable-field-change.md`.
pub(crate) struct ImmutableFieldChange;

static META: RuleMeta = RuleMeta {
    code: "GL010",
    name: "immutable-field-change",
    category: Category::Change,
    default_severity: Severity::Error,
    severity_note: "warning for a hook, refused only when its last run left it behind",
    mode: Mode::Diff,
    doc: include_str!("../../rules/GL010-immutable-field-change.md"),
    suppression: Suppression::CHANGED_OBJECT,
};

/// One refused change: the field, its old and its new value as shown.
#[derive(Debug, PartialEq, Eq)]
struct Refusal {
    field: String,
    from: String,
    to: String,
}

/// What deleting and recreating the object (`Force=true`) costs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recreate {
    /// Nothing is lost beyond a short outage.
    Stateless,
    /// Data or bound volumes go with it (GL009's business).
    Stateful,
}

/// One row: a kind and the update validator whose refusals `check` mirrors.
struct Row {
    group: &'static str,
    kinds: &'static [&'static str],
    /// `file: function` in `kubernetes/kubernetes`.
    validator: &'static str,
    recreate: Recreate,
    check: fn(&Value, &Value, &mut Vec<Refusal>),
}

/// The immutable fields of built-in kinds, from Kubernetes' update validators.
/// Kinds whose validators refuse nothing a manifest sets (CronJob:
/// `ValidateCronJobUpdate`; Ingress: `ValidateIngressUpdate`; Role and
/// ClusterRole: `ValidateRoleUpdate`) have no row.
static TABLE: &[Row] = &[
    Row {
        group: "apps",
        kinds: &["Deployment", "ReplicaSet", "DaemonSet"],
        // apps/v1 adds selector immutability in the registry strategy.
        validator: "pkg/registry/apps/{deployment,replicaset,daemonset}/strategy.go: ValidateUpdate (apps/v1 `spec.selector` immutable)",
        recreate: Recreate::Stateless,
        check: workload_selector,
    },
    Row {
        group: "apps",
        kinds: &["StatefulSet"],
        validator: "pkg/apis/apps/validation/validation.go: ValidateStatefulSetUpdate",
        recreate: Recreate::Stateful,
        check: statefulset,
    },
    Row {
        group: "batch",
        kinds: &["Job"],
        validator: "pkg/apis/batch/validation/validation.go: ValidateJobSpecUpdate, validateCompletions",
        recreate: Recreate::Stateless,
        check: job,
    },
    Row {
        group: "",
        kinds: &["PersistentVolumeClaim"],
        validator: "pkg/apis/core/validation/validation.go: ValidatePersistentVolumeClaimUpdate",
        recreate: Recreate::Stateful,
        check: pvc,
    },
    Row {
        group: "",
        kinds: &["PersistentVolume"],
        validator: "pkg/apis/core/validation/validation.go: ValidatePersistentVolumeUpdate",
        recreate: Recreate::Stateful,
        check: pv,
    },
    Row {
        group: "",
        kinds: &["Service"],
        validator: "pkg/apis/core/validation/validation.go: ValidateServiceUpdate, validateUpgradeDowngradeClusterIPs, validateUpgradeDowngradeIPFamilies, validateServiceExternalTrafficFieldsUpdate; pkg/registry/core/service/storage/storage.go: patchAllocatedValues",
        recreate: Recreate::Stateless,
        check: service,
    },
    Row {
        group: "",
        kinds: &["Secret"],
        validator: "pkg/apis/core/validation/validation.go: ValidateSecretUpdate",
        recreate: Recreate::Stateless,
        check: secret,
    },
    Row {
        group: "",
        kinds: &["ConfigMap"],
        validator: "pkg/apis/core/validation/validation.go: ValidateConfigMapUpdate",
        recreate: Recreate::Stateless,
        check: configmap,
    },
    Row {
        group: "rbac.authorization.k8s.io",
        kinds: &["RoleBinding", "ClusterRoleBinding"],
        validator: "pkg/apis/rbac/validation/validation.go: ValidateRoleBindingUpdate, ValidateClusterRoleBindingUpdate",
        recreate: Recreate::Stateless,
        check: role_ref,
    },
    Row {
        group: "storage.k8s.io",
        kinds: &["StorageClass"],
        validator: "pkg/apis/storage/validation/validation.go: ValidateStorageClassUpdate",
        recreate: Recreate::Stateless,
        check: storage_class,
    },
    Row {
        group: "storage.k8s.io",
        kinds: &["CSIDriver"],
        validator: "pkg/apis/storage/validation/validation.go: ValidateCSIDriverUpdate",
        recreate: Recreate::Stateless,
        check: csi_driver,
    },
    Row {
        group: "storage.k8s.io",
        kinds: &["VolumeAttachment"],
        validator: "pkg/apis/storage/validation/validation.go: ValidateVolumeAttachmentUpdate",
        recreate: Recreate::Stateful,
        check: volume_attachment,
    },
    Row {
        group: "apiextensions.k8s.io",
        kinds: &["CustomResourceDefinition"],
        // Refused once the CRD is Established, as it is on any cluster that
        // has served it.
        validator: "staging/src/k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go: ValidateCustomResourceDefinitionUpdate (requireImmutableNames)",
        recreate: Recreate::Stateful,
        check: crd,
    },
];

fn row_for(m: &Manifest) -> Option<&'static Row> {
    TABLE
        .iter()
        .find(|r| r.group == m.id.group && r.kinds.contains(&m.id.kind.as_str()))
}

/// StatefulSet spec fields the API server lets an update change.
const STS_MUTABLE: &[&str] = &[
    "replicas",
    "template",
    "updateStrategy",
    "ordinals",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
    "revisionHistoryLimit",
];

/// PersistentVolume spec fields outside `persistentVolumeSource` that an
/// update may change (the rest of the spec is the volume source).
const PV_NOT_SOURCE: &[&str] = &[
    "capacity",
    "accessModes",
    "claimRef",
    "persistentVolumeReclaimPolicy",
    "storageClassName",
    "mountOptions",
    "volumeMode",
    "nodeAffinity",
    "volumeAttributesClassName",
];

/// A Kubernetes quantity in base units (`10Gi`, `500M`, `1.5e3`).
fn quantity(s: &str) -> Option<f64> {
    let s = s.trim();
    let split = s
        .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
        .unwrap_or(s.len());
    let (num, suffix) = s.split_at(split);
    let n: f64 = num.parse().ok()?;
    let mult = match suffix {
        "" => 1.0,
        "Ki" => 1024f64,
        "Mi" => 1024f64.powi(2),
        "Gi" => 1024f64.powi(3),
        "Ti" => 1024f64.powi(4),
        "Pi" => 1024f64.powi(5),
        "Ei" => 1024f64.powi(6),
        "m" => 1e-3,
        "k" => 1e3,
        "M" => 1e6,
        "G" => 1e9,
        "T" => 1e12,
        "P" => 1e15,
        "E" => 1e18,
        _ => return None,
    };
    Some(n * mult)
}

/// Stands for a value too long to quote.
const LONG: &str = "…";

fn show(v: Option<&Value>) -> String {
    match v {
        None | Some(Value::Null) => "unset".into(),
        Some(Value::String(s)) => format!("`{s}`"),
        Some(other) => {
            let t = other.to_string();
            if t.chars().count() > 60 {
                LONG.into()
            } else {
                format!("`{t}`")
            }
        }
    }
}

fn refuse(out: &mut Vec<Refusal>, field: &str, x: Option<&Value>, y: Option<&Value>) {
    out.push(Refusal {
        field: field.to_string(),
        from: show(x),
        to: show(y),
    });
}

/// `ValidateImmutableField` at a JSON pointer: any difference, unset included.
fn immutable(out: &mut Vec<Refusal>, b: &Value, h: &Value, ptr: &str) {
    let (x, y) = (b.at(ptr), h.at(ptr));
    if none_if_null(x) != none_if_null(y) {
        refuse(out, &ptr[1..].replace('/', "."), x, y);
    }
}

/// Like [`immutable`], with the value the API server defaults an unset field to.
fn immutable_defaulted(out: &mut Vec<Refusal>, b: &Value, h: &Value, ptr: &str, default: &Value) {
    let (x, y) = (b.at(ptr), h.at(ptr));
    let (dx, dy) = (
        none_if_null(x).unwrap_or(default),
        none_if_null(y).unwrap_or(default),
    );
    if dx != dy {
        refuse(out, &ptr[1..].replace('/', "."), x, y);
    }
}

fn none_if_null(v: Option<&Value>) -> Option<&Value> {
    v.filter(|v| !v.is_null())
}

fn spec(v: &Value) -> Map<String, Value> {
    v.get("spec")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

/// Every `spec` key of either side that `keep` selects, in order.
fn spec_keys(b: &Value, h: &Value, keep: impl Fn(&str) -> bool) -> Vec<String> {
    let mut all: Vec<String> = spec(b).keys().chain(spec(h).keys()).cloned().collect();
    all.sort();
    all.dedup();
    all.retain(|k| keep(k));
    all
}

fn workload_selector(b: &Value, h: &Value, out: &mut Vec<Refusal>) {
    immutable(out, b, h, "/spec/selector");
}

fn statefulset(b: &Value, h: &Value, out: &mut Vec<Refusal>) {
    for k in spec_keys(b, h, |k| !STS_MUTABLE.contains(&k)) {
        immutable(out, b, h, &format!("/spec/{k}"));
    }
}

fn job(b: &Value, h: &Value, out: &mut Vec<Refusal>) {
    // validateCompletions: an Indexed Job whose completions equal its
    // parallelism before and after may scale (elastic Indexed Jobs).
    let elastic = |v: &Value| {
        v.at("/spec/completionMode").and_then(Value::as_str) == Some("Indexed")
            && v.at("/spec/completions").is_some()
            && v.at("/spec/completions") == v.at("/spec/parallelism")
    };
    if !(elastic(b) && elastic(h)) {
        immutable(out, b, h, "/spec/completions");
    }
    for f in [
        "selector",
        "template",
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ] {
        immutable(out, b, h, &format!("/spec/{f}"));
    }
}

fn pvc(b: &Value, h: &Value, out: &mut Vec<Refusal>) {
    // The spec is immutable except `resources.requests` (storage may grow)
    // and `volumeAttributesClassName`; `volumeName` is set once by the
    // cluster, so a manifest without it leaves it alone.
    for k in spec_keys(b, h, |k| {
        !matches!(k, "resources" | "volumeAttributesClassName" | "volumeName")
    }) {
        immutable(out, b, h, &format!("/spec/{k}"));
    }
    if h.at("/spec/volumeName").is_some() {
        immutable(out, b, h, "/spec/volumeName");
    }
    let (x, y) = (
        b.at("/spec/volumeAttributesClassName"),
        h.at("/spec/volumeAttributesClassName"),
    );
    if none_if_null(x).is_some() && none_if_null(y).is_none() {
        refuse(out, "spec.volumeAttributesClassName", x, y);
    }
    let size = |v: &Value| {
        v.at("/spec/resources/requests/storage")
            .and_then(Value::as_str)
            .map(str::to_string)
    };
    if let (Some(x), Some(y)) = (size(b), size(h)) {
        if let (Some(qx), Some(qy)) = (quantity(&x), quantity(&y)) {
            if qy < qx {
                out.push(Refusal {
                    field: "spec.resources.requests.storage (shrink)".into(),
                    from: format!("`{x}`"),
                    to: format!("`{y}`"),
                });
            }
        }
    }
}

fn pv(b: &Value, h: &Value, out: &mut Vec<Refusal>) {
    for k in spec_keys(b, h, |k| !PV_NOT_SOURCE.contains(&k)) {
        let ptr = format!("/spec/{k}");
        // A CSI volume may gain a controllerExpandSecretRef it lacked.
        if k == "csi" {
            let strip = |v: &Value| {
                let mut c = v.at("/spec/csi").cloned();
                if b.at("/spec/csi/controllerExpandSecretRef").is_none() {
                    if let Some(Value::Object(o)) = c.as_mut() {
                        o.remove("controllerExpandSecretRef");
                    }
                }
                c
            };
            if strip(b) != strip(h) {
                refuse(out, "spec.csi", b.at(&ptr), h.at(&ptr));
            }
            continue;
        }
        immutable(out, b, h, &ptr);
    }
    immutable(out, b, h, "/spec/volumeMode");
    if none_if_null(b.at("/spec/nodeAffinity")).is_some() {
        immutable(out, b, h, "/spec/nodeAffinity");
    }
    let (x, y) = (
        b.at("/spec/volumeAttributesClassName"),
        h.at("/spec/volumeAttributesClassName"),
    );
    if none_if_null(x).is_some() && none_if_null(y).is_none() {
        refuse(out, "spec.volumeAttributesClassName", x, y);
    }
}

fn service(b: &Value, h: &Value, out: &mut Vec<Refusal>) {
    let ty = |v: &Value| {
        v.at("/spec/type")
            .and_then(Value::as_str)
            .unwrap_or("ClusterIP")
            .to_string()
    };
    if ty(b) == "ExternalName" || ty(h) == "ExternalName" {
        return;
    }
    // The cluster IPs as the API server sees them. An unset `clusterIP` at
    // head keeps the allocated one (patchAllocatedValues), so only values
    // both sides spell out can clash.
    let ips = |v: &Value| -> Vec<String> {
        let list: Vec<String> = crate::manifest::strings(v.at("/spec/clusterIPs"));
        if !list.is_empty() {
            return list;
        }
        v.at("/spec/clusterIP")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(|s| vec![s.to_string()])
            .unwrap_or_default()
    };
    let (ib, ih) = (ips(b), ips(h));
    let headless = |l: &[String]| l.first().is_some_and(|s| s == "None");
    if ib.is_empty() && headless(&ih) {
        // Unset at base: the cluster allocated an address, which `None` replaces.
        out.push(Refusal {
            field: "spec.clusterIP".into(),
            from: "an allocated IP".into(),
            to: "`None` (headless)".into(),
        });
    }
    let both_headless = headless(&ib) && headless(&ih);
    if !ib.is_empty() && !ih.is_empty() && !both_headless {
        let shared = ib.len().min(ih.len());
        let primary_only = ib.len() != ih.len();
        let n = if primary_only { 1 } else { shared };
        if ib[..n] != ih[..n] {
            let shown = |l: &[String]| {
                if headless(l) {
                    "`None` (headless)".to_string()
                } else {
                    format!("`{}`", l.join(","))
                }
            };
            out.push(Refusal {
                field: "spec.clusterIP".into(),
                from: shown(&ib),
                to: shown(&ih),
            });
        }
    }
    let fams = |v: &Value| -> Vec<Value> {
        v.at("/spec/ipFamilies")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let (fb, fh) = (fams(b), fams(h));
    if !fb.is_empty() && !fh.is_empty() && !headless(&ib) && !headless(&ih) {
        let n = if fb.len() == fh.len() { fb.len() } else { 1 };
        if fb[..n] != fh[..n] {
            immutable(out, b, h, "/spec/ipFamilies");
        }
    }
    let needs_hc = |v: &Value| {
        ty(v) == "LoadBalancer"
            && v.at("/spec/externalTrafficPolicy").and_then(Value::as_str) == Some("Local")
    };
    if needs_hc(b)
        && needs_hc(h)
        && b.at("/spec/healthCheckNodePort").is_some()
        && h.at("/spec/healthCheckNodePort").is_some()
    {
        immutable(out, b, h, "/spec/healthCheckNodePort");
    }
}

/// `immutable: true` freezes the content and the flag itself.
fn frozen(b: &Value, h: &Value, keys: &[&str], out: &mut Vec<Refusal>) {
    if b.get("immutable") != Some(&Value::Bool(true)) {
        return;
    }
    for f in keys {
        if b.get(*f) != h.get(*f) {
            out.push(Refusal {
                field: (*f).to_string(),
                from: "its old content".into(),
                to: "new content on an `immutable: true` object".into(),
            });
        }
    }
    if h.get("immutable") != Some(&Value::Bool(true)) {
        refuse(out, "immutable", b.get("immutable"), h.get("immutable"));
    }
}

fn secret(b: &Value, h: &Value, out: &mut Vec<Refusal>) {
    immutable_defaulted(out, b, h, "/type", &Value::from("Opaque"));
    // `stringData` is merged into `data` before validation.
    frozen(b, h, &["data", "stringData"], out);
}

fn configmap(b: &Value, h: &Value, out: &mut Vec<Refusal>) {
    frozen(b, h, &["data", "binaryData"], out);
}

fn role_ref(b: &Value, h: &Value, out: &mut Vec<Refusal>) {
    immutable(out, b, h, "/roleRef");
}

fn storage_class(b: &Value, h: &Value, out: &mut Vec<Refusal>) {
    immutable_defaulted(out, b, h, "/parameters", &Value::Object(Map::new()));
    immutable(out, b, h, "/provisioner");
    immutable_defaulted(out, b, h, "/reclaimPolicy", &Value::from("Delete"));
    immutable_defaulted(out, b, h, "/volumeBindingMode", &Value::from("Immediate"));
}

fn csi_driver(b: &Value, h: &Value, out: &mut Vec<Refusal>) {
    immutable_defaulted(out, b, h, "/spec/attachRequired", &Value::Bool(true));
    immutable_defaulted(
        out,
        b,
        h,
        "/spec/volumeLifecycleModes",
        &Value::Array(vec![Value::from("Persistent")]),
    );
}

fn volume_attachment(b: &Value, h: &Value, out: &mut Vec<Refusal>) {
    immutable(out, b, h, "/spec");
}

fn crd(b: &Value, h: &Value, out: &mut Vec<Refusal>) {
    immutable(out, b, h, "/spec/scope");
    immutable(out, b, h, "/spec/names/kind");
}

/// Each refused change of `base` → `head`.
fn refused(base: &Manifest, head: &Manifest) -> Vec<Refusal> {
    let mut out = Vec::new();
    if let Some(row) = row_for(head) {
        // A field filled with random values or the clock differs at every
        // render: Argo CD meets that change at every sync, whatever the PR.
        let (b, h) = crate::manifest::without_generated(base, head);
        (row.check)(&b, &h, &mut out);
    }
    out
}

/// Whether Argo CD deletes and recreates the object instead of updating it:
/// `Force=true` on the manifest or on the live object (the base revision's
/// manifest), as gitops-engine `pkg/sync/sync_context.go` `applyObject`
/// reads it. The app's `syncOptions` do not carry `Force` (controller
/// `sync.go` takes it from the sync operation's strategy only).
fn forced(base: &Manifest, head: &Manifest) -> bool {
    head.sync_options().has("Force=true") || base.sync_options().has("Force=true")
}

impl Rule for ImmutableFieldChange {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        let (Some(plan), Some(base)) = (cx.plan, cx.base) else {
            return;
        };
        for (key, changes) in &plan.changes {
            let (Some(happ), Some(bapp)) = (cx.head.apps.get(key), base.apps.get(key)) else {
                continue;
            };
            for id in &changes.changed {
                let (Some(h), Some(b)) = (
                    happ.resources.iter().find(|m| &m.id == id),
                    bapp.resources.iter().find(|m| &m.id == id),
                ) else {
                    continue;
                };
                let Some(row) = row_for(h) else { continue };
                let hook = h.hook();
                if hook.is_hook
                    && (h.uses_generate_name()
                        || hook.delete_policies.is_empty()
                        || hook
                            .delete_policies
                            .iter()
                            .any(|p| p == "BeforeHookCreation"))
                {
                    // Recreated by its delete policy, never updated in place.
                    continue;
                }
                if forced(b, h) {
                    // Deleted and recreated: GL009 judges that for stateful kinds.
                    continue;
                }
                let problems = refused(b, h);
                if problems.is_empty() {
                    continue;
                }
                let what: Vec<String> = problems
                    .iter()
                    .map(|r| {
                        if r.from == LONG || r.to == LONG {
                            format!("`{}` changes", r.field)
                        } else {
                            format!("`{}` changes from {} to {}", r.field, r.from, r.to)
                        }
                    })
                    .collect();
                let help = match row.recreate {
                    Recreate::Stateless => {
                        "rename the resource so Argo CD creates a new one (and prunes the old), or add `argocd.argoproj.io/sync-options: Force=true` so it is deleted and recreated; that is safe for stateless kinds only, and a plain `Replace=true` is still an update that is refused"
                    }
                    Recreate::Stateful => {
                        "migrate to a new object (new name) and move the data; do not use `Force=true` here: deleting and recreating this kind loses what it holds (GL009), and `Replace=true` alone is still an update that is refused"
                    }
                };
                // A hook kept only by `HookSucceeded`/`HookFailed` is updated in place
                // only when its last run left it behind.
                let (consequence, severity) = if hook.is_hook {
                    (
                        "if the last run left the hook behind, the API server refuses the update (field is immutable) and the sync fails",
                        Severity::Warning,
                    )
                } else {
                    (
                        "the API server refuses this (field is immutable), so the sync fails",
                        Severity::Error,
                    )
                };
                // `spec.resources.requests.storage (shrink)` → its key path.
                let first = problems[0].field.split(' ').next().unwrap_or("");
                let path: Vec<&str> = first.split('.').collect();
                out.push(
                    at_field(
                        Finding::new(
                            &META,
                            format!("{} on `{}`: {consequence}", what.join(", "), id),
                        )
                        .severity(severity),
                        happ,
                        h,
                        &path,
                    )
                    .help(format!("{help} (refused by Kubernetes {})", row.validator)),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{manifest_from_value, Origin, Scopes};
    use serde_json::json;

    fn m(v: Value) -> Manifest {
        manifest_from_value(v, Origin::default(), "ns", &Scopes::default()).expect("valid")
    }

    #[test]
    fn every_row_names_its_validator_in_the_doc() {
        for row in TABLE {
            let functions = row.validator.rsplit(": ").next().unwrap_or("");
            for f in functions.split([',', ';']) {
                let f = f.trim().split(' ').next().unwrap_or("");
                if f.chars().next().is_some_and(char::is_alphabetic) && !f.contains('/') {
                    assert!(META.doc.contains(f), "rules/GL010 does not cite `{f}`");
                }
            }
        }
    }

    fn kind(api: &str, kind: &str, body: Value) -> Manifest {
        let mut v = json!({"apiVersion": api, "kind": kind, "metadata": {"name": "x"}});
        if let (Value::Object(o), Value::Object(b)) = (&mut v, body) {
            o.extend(b);
        }
        m(v)
    }

    fn fields(b: &Manifest, h: &Manifest) -> Vec<String> {
        refused(b, h).into_iter().map(|r| r.field).collect()
    }

    #[test]
    fn table_rows_refuse_what_their_validators_refuse() {
        let rb = |role: &str| {
            kind(
                "rbac.authorization.k8s.io/v1",
                "RoleBinding",
                json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role}, "subjects": []}),
            )
        };
        assert_eq!(fields(&rb("a"), &rb("b")), ["roleRef"]);
        assert!(fields(&rb("a"), &rb("a")).is_empty());
        let sc = |body: Value| kind("storage.k8s.io/v1", "StorageClass", body);
        assert!(fields(&sc(json!({"provisioner": "p"})), &sc(json!({"provisioner": "p", "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate", "parameters": {}}))).is_empty(), "defaults are no change");
        assert_eq!(
            fields(
                &sc(json!({"provisioner": "p"})),
                &sc(
                    json!({"provisioner": "p", "volumeBindingMode": "WaitForFirstConsumer", "allowVolumeExpansion": true})
                )
            ),
            ["volumeBindingMode"]
        );
        let secret = |body: Value| kind("v1", "Secret", body);
        assert!(fields(
            &secret(json!({"data": {"a": "eA=="}})),
            &secret(json!({"type": "Opaque", "data": {"a": "eQ=="}}))
        )
        .is_empty());
        assert_eq!(
            fields(
                &secret(json!({})),
                &secret(json!({"type": "kubernetes.io/tls"}))
            ),
            ["type"]
        );
        assert_eq!(
            fields(
                &secret(json!({"immutable": true, "data": {"a": "eA=="}})),
                &secret(json!({"data": {"a": "eA=="}}))
            ),
            ["immutable"]
        );
        let cm = |body: Value| kind("v1", "ConfigMap", body);
        assert!(fields(
            &cm(json!({"data": {"a": "1"}})),
            &cm(json!({"data": {"a": "2"}}))
        )
        .is_empty());
        assert_eq!(
            fields(
                &cm(json!({"immutable": true, "data": {"a": "1"}})),
                &cm(json!({"immutable": true, "data": {"a": "2"}}))
            ),
            ["data"]
        );
        let job = |body: Value| kind("batch/v1", "Job", json!({"spec": body}));
        assert!(
            fields(
                &job(json!({"completionMode": "Indexed", "completions": 2, "parallelism": 2})),
                &job(json!({"completionMode": "Indexed", "completions": 4, "parallelism": 4}))
            )
            .is_empty(),
            "elastic Indexed Job"
        );
        assert_eq!(
            fields(
                &job(json!({"completions": 2})),
                &job(json!({"completions": 4}))
            ),
            ["spec.completions"]
        );
        assert!(fields(
            &job(json!({"backoffLimit": 2})),
            &job(json!({"backoffLimit": 4}))
        )
        .is_empty());
        let pv = |body: Value| kind("v1", "PersistentVolume", json!({"spec": body}));
        assert!(fields(&pv(json!({"capacity": {"storage": "1Gi"}, "nfs": {"server": "a", "path": "/"}})), &pv(json!({"capacity": {"storage": "2Gi"}, "nfs": {"server": "a", "path": "/"}, "persistentVolumeReclaimPolicy": "Retain"}))).is_empty());
        assert_eq!(
            fields(
                &pv(json!({"nfs": {"server": "a", "path": "/"}})),
                &pv(json!({"nfs": {"server": "b", "path": "/"}}))
            ),
            ["spec.nfs"]
        );
        assert!(fields(&pv(json!({"csi": {"driver": "d", "volumeHandle": "h"}})), &pv(json!({"csi": {"driver": "d", "volumeHandle": "h", "controllerExpandSecretRef": {"name": "s"}}}))).is_empty());
        let pvc = |body: Value| kind("v1", "PersistentVolumeClaim", json!({"spec": body}));
        assert!(fields(&pvc(json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "volumeAttributesClassName": "a"})), &pvc(json!({"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "2Gi"}}, "volumeAttributesClassName": "b"}))).is_empty());
        assert_eq!(
            fields(
                &pvc(json!({"volumeAttributesClassName": "a"})),
                &pvc(json!({}))
            ),
            ["spec.volumeAttributesClassName"]
        );
        let csi = |body: Value| kind("storage.k8s.io/v1", "CSIDriver", json!({"spec": body}));
        assert!(fields(
            &csi(json!({})),
            &csi(json!({"attachRequired": true, "podInfoOnMount": true}))
        )
        .is_empty());
        assert_eq!(
            fields(&csi(json!({})), &csi(json!({"attachRequired": false}))),
            ["spec.attachRequired"]
        );
        let va = |node: &str| {
            kind(
                "storage.k8s.io/v1",
                "VolumeAttachment",
                json!({"spec": {"attacher": "a", "nodeName": node, "source": {"persistentVolumeName": "p"}}}),
            )
        };
        assert_eq!(fields(&va("n1"), &va("n2")), ["spec"]);
        let svc = |body: Value| kind("v1", "Service", json!({"spec": body}));
        assert_eq!(
            fields(
                &svc(json!({"clusterIP": "10.0.0.1"})),
                &svc(json!({"clusterIP": "10.0.0.2"}))
            ),
            ["spec.clusterIP"]
        );
        assert!(fields(&svc(json!({"clusterIP": "10.0.0.1"})), &svc(json!({}))).is_empty());
        assert!(fields(
            &svc(json!({"clusterIP": "10.0.0.1"})),
            &svc(json!({"type": "ExternalName", "externalName": "a.example"}))
        )
        .is_empty());
        assert_eq!(
            fields(
                &svc(json!({"ipFamilies": ["IPv4"]})),
                &svc(json!({"ipFamilies": ["IPv6", "IPv4"]}))
            ),
            ["spec.ipFamilies"]
        );
        assert!(
            fields(
                &svc(json!({"ipFamilies": ["IPv4"]})),
                &svc(json!({"ipFamilies": ["IPv4", "IPv6"]}))
            )
            .is_empty(),
            "dual-stack upgrade"
        );
    }

    #[test]
    fn deployment_selector_and_statefulset_fields() {
        let d = |l: &str| {
            m(
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": l}}}}),
            )
        };
        assert_eq!(refused(&d("a"), &d("a")), vec![]);
        assert_eq!(refused(&d("a"), &d("b"))[0].field, "spec.selector");
        let s = |svc: &str, rep: u32| {
            m(
                json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
            "spec": {"serviceName": svc, "replicas": rep}}),
            )
        };
        assert_eq!(refused(&s("a", 1), &s("a", 3)), vec![]);
        assert_eq!(refused(&s("a", 1), &s("b", 1))[0].field, "spec.serviceName");
    }

    #[test]
    fn pvc_shrink_class_and_service_ip() {
        let p = |size: &str, class: &str| {
            m(
                json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "p"},
            "spec": {"storageClassName": class, "resources": {"requests": {"storage": size}}}}),
            )
        };
        assert_eq!(
            refused(&p("10Gi", "a"), &p("20Gi", "a")),
            vec![],
            "growth is allowed (if the class allows expansion)"
        );
        assert_eq!(
            refused(&p("10Gi", "a"), &p("5000Mi", "a"))[0].field,
            "spec.resources.requests.storage (shrink)"
        );
        assert_eq!(
            refused(&p("10Gi", "a"), &p("10Gi", "b"))[0].field,
            "spec.storageClassName"
        );
        let svc = |ip: Option<&str>| {
            let mut v = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}});
            if let Some(ip) = ip {
                v["spec"]["clusterIP"] = json!(ip);
            }
            m(v)
        };
        assert_eq!(
            refused(&svc(None), &svc(Some("None")))[0].field,
            "spec.clusterIP"
        );
        assert_eq!(
            refused(&svc(Some("None")), &svc(None)),
            vec![],
            "an unset clusterIP keeps the live one (patchAllocatedValues)"
        );
        assert_eq!(refused(&svc(None), &svc(None)), vec![]);
        assert_eq!(quantity("1.5Gi"), Some(1.5 * 1024f64.powi(3)));
    }
}
