//! GL010 immutable-field-change: a change the API server refuses ("field is
//! immutable"), so the sync fails on that resource until someone intervenes.

use serde_json::Value;

use super::analysis::at_field;
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::finding::{Finding, Severity};
use crate::manifest::Manifest;

/// See `rules/GL010-immutable-field-change.md`.
pub struct ImmutableFieldChange;

static META: RuleMeta = RuleMeta {
    code: "GL010",
    name: "immutable-field-change",
    category: Category::Change,
    default_severity: Severity::Error,
    mode: Mode::Diff,
    doc: include_str!("../../rules/GL010-immutable-field-change.md"),
};

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

/// Each refused change: (field, from, to).
fn refused(base: &Manifest, head: &Manifest) -> Vec<(String, String, String)> {
    let (b, h) = (base.value.as_ref(), head.value.as_ref());
    let mut out = Vec::new();
    let mut cmp = |field: &str, ptr: &str| {
        let (x, y) = (b.pointer(ptr), h.pointer(ptr));
        if x != y {
            out.push((field.to_string(), show(x), show(y)));
        }
    };
    match (head.id.group.as_str(), head.id.kind.as_str()) {
        ("apps", "Deployment" | "DaemonSet" | "ReplicaSet") => {
            cmp("spec.selector", "/spec/selector")
        }
        ("apps", "StatefulSet") => {
            let keys = |v: &Value| -> Vec<String> {
                v.pointer("/spec")
                    .and_then(Value::as_object)
                    .map(|o| o.keys().cloned().collect())
                    .unwrap_or_default()
            };
            let mut all = keys(b);
            all.extend(keys(h));
            all.sort();
            all.dedup();
            for k in all.iter().filter(|k| !STS_MUTABLE.contains(&k.as_str())) {
                cmp(&format!("spec.{k}"), &format!("/spec/{k}"));
            }
        }
        ("batch", "Job") => {
            cmp("spec.selector", "/spec/selector");
            cmp("spec.template", "/spec/template");
            cmp("spec.completions", "/spec/completions");
        }
        ("", "PersistentVolumeClaim") => {
            for f in [
                "storageClassName",
                "accessModes",
                "volumeName",
                "volumeMode",
                "selector",
                "dataSource",
            ] {
                let (x, y) = (
                    b.pointer(&format!("/spec/{f}")),
                    h.pointer(&format!("/spec/{f}")),
                );
                // A field only the cluster fills in (volumeName on a bound claim) may be absent in git.
                if x != y && y.is_some() {
                    out.push((format!("spec.{f}"), show(x), show(y)));
                }
            }
            let size = |v: &Value| {
                v.pointer("/spec/resources/requests/storage")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            if let (Some(x), Some(y)) = (size(b), size(h)) {
                if let (Some(qx), Some(qy)) = (quantity(&x), quantity(&y)) {
                    if qy < qx {
                        out.push((
                            "spec.resources.requests.storage (shrink)".into(),
                            format!("`{x}`"),
                            format!("`{y}`"),
                        ));
                    }
                }
            }
        }
        ("", "Service") => {
            let ip = |v: &Value| {
                v.pointer("/spec/clusterIP")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            };
            match (ip(b), ip(h)) {
                (Some(x), Some(y)) if x != y && !x.is_empty() && !y.is_empty() => {
                    out.push(("spec.clusterIP".into(), format!("`{x}`"), format!("`{y}`")));
                }
                (Some(x), None) if x == "None" => {
                    out.push((
                        "spec.clusterIP".into(),
                        "`None` (headless)".into(),
                        "unset (a cluster IP)".into(),
                    ));
                }
                (None, Some(y)) if y == "None" => {
                    out.push((
                        "spec.clusterIP".into(),
                        "an allocated IP".into(),
                        "`None` (headless)".into(),
                    ));
                }
                _ => {}
            }
            let ty = |v: &Value| {
                v.pointer("/spec/type")
                    .and_then(Value::as_str)
                    .unwrap_or("ClusterIP")
                    .to_string()
            };
            let (tb, th) = (ty(b), ty(h));
            let head_ip = ip(h).filter(|s| !s.is_empty() && s != "None");
            if tb != th && th == "ExternalName" && head_ip.is_some() {
                out.push((
                    "spec.type".into(),
                    format!("`{tb}`"),
                    "`ExternalName` while `spec.clusterIP` is still set".into(),
                ));
            }
        }
        // Refused once the CRD is Established, as it is on any cluster that
        // has served it (apiextensions `requireImmutableNames`).
        ("apiextensions.k8s.io", "CustomResourceDefinition") => {
            cmp("spec.scope", "/spec/scope");
            cmp("spec.names.kind", "/spec/names/kind");
        }
        ("", "ConfigMap" | "Secret") if b.get("immutable") == Some(&Value::Bool(true)) => {
            for f in ["data", "binaryData", "stringData"] {
                if b.get(f) != h.get(f) {
                    out.push((
                        f.to_string(),
                        "its old content".into(),
                        "new content on an `immutable: true` object".into(),
                    ));
                }
            }
        }
        _ => {}
    }
    out
}

fn stateless(m: &Manifest) -> bool {
    matches!(
        (m.id.group.as_str(), m.id.kind.as_str()),
        ("apps", "Deployment" | "DaemonSet" | "ReplicaSet")
            | ("batch", "Job")
            | ("", "Service" | "ConfigMap" | "Secret")
    )
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
                if h.sync_options().has("Force=true") || happ.spec.sync_options.has("Force=true") {
                    continue;
                }
                let problems = refused(b, h);
                if problems.is_empty() {
                    continue;
                }
                let what: Vec<String> = problems
                    .iter()
                    .map(|(f, x, y)| {
                        if x == LONG || y == LONG {
                            format!("`{f}` changes")
                        } else {
                            format!("`{f}` changes from {x} to {y}")
                        }
                    })
                    .collect();
                let help = if stateless(h) {
                    "rename the resource so Argo CD creates a new one (and prunes the old), or add `argocd.argoproj.io/sync-options: Force=true,Replace=true` so it is deleted and recreated; that is safe for stateless kinds only, and a plain `Replace=true` is still an update that is refused"
                } else {
                    "migrate to a new object (new name) and move the data; do not use `Replace=true`/`Force=true` here, which is safe for stateless kinds only: deleting and recreating this kind loses what it holds"
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
                let first = problems[0].0.split(' ').next().unwrap_or("");
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
                    .help(help),
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
    fn deployment_selector_and_statefulset_fields() {
        let d = |l: &str| {
            m(
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": l}}}}),
            )
        };
        assert_eq!(refused(&d("a"), &d("a")), vec![]);
        assert_eq!(refused(&d("a"), &d("b"))[0].0, "spec.selector");
        let s = |svc: &str, rep: u32| {
            m(
                json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "s"},
            "spec": {"serviceName": svc, "replicas": rep}}),
            )
        };
        assert_eq!(refused(&s("a", 1), &s("a", 3)), vec![]);
        assert_eq!(refused(&s("a", 1), &s("b", 1))[0].0, "spec.serviceName");
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
            refused(&p("10Gi", "a"), &p("5000Mi", "a"))[0].0,
            "spec.resources.requests.storage (shrink)"
        );
        assert_eq!(
            refused(&p("10Gi", "a"), &p("10Gi", "b"))[0].0,
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
            refused(&svc(None), &svc(Some("None")))[0].0,
            "spec.clusterIP"
        );
        assert_eq!(
            refused(&svc(Some("None")), &svc(None))[0].0,
            "spec.clusterIP"
        );
        assert_eq!(refused(&svc(None), &svc(None)), vec![]);
        assert_eq!(quantity("1.5Gi"), Some(1.5 * 1024f64.powi(3)));
    }
}
