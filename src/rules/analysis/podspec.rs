//! Pod templates: where a workload keeps its pod spec, which objects that
//! spec needs before its pods can run, and which ConfigMap key a mounted
//! file comes from.

use goyaml::json::Pointer as _;
use serde_json::Value;

use crate::manifest::Manifest;

/// The kind of object a pod spec depends on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum RefKind {
    /// A ConfigMap (volume, env or envFrom).
    ConfigMap,
    /// A Secret (volume, env or envFrom).
    Secret,
    /// A PersistentVolumeClaim volume.
    PersistentVolumeClaim,
    /// `serviceAccountName`.
    ServiceAccount,
    /// `priorityClassName`.
    PriorityClass,
}

impl RefKind {
    /// The Kubernetes kind.
    #[must_use]
    pub(crate) fn kind(self) -> &'static str {
        match self {
            RefKind::ConfigMap => "ConfigMap",
            RefKind::Secret => "Secret",
            RefKind::PersistentVolumeClaim => "PersistentVolumeClaim",
            RefKind::ServiceAccount => "ServiceAccount",
            RefKind::PriorityClass => "PriorityClass",
        }
    }

    /// The API group of the kind.
    #[must_use]
    pub(crate) fn group(self) -> &'static str {
        match self {
            RefKind::PriorityClass => "scheduling.k8s.io",
            _ => "",
        }
    }

    /// Whether objects of the kind live in the pod's namespace.
    #[must_use]
    pub(crate) fn namespaced(self) -> bool {
        self != RefKind::PriorityClass
    }
}

/// One object a pod spec names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PodRef {
    /// The kind.
    pub(crate) kind: RefKind,
    /// The object name.
    pub(crate) name: String,
    /// `optional: true`: the pod starts without it.
    pub(crate) optional: bool,
    /// Where it is named (`volume config`, `env DB_URL`, `serviceAccountName`).
    pub(crate) via: String,
}

/// The pod spec of a workload: `spec` of a Pod, `spec.template.spec` of
/// controllers and Jobs, `spec.jobTemplate.spec.template.spec` of a CronJob.
#[must_use]
pub(crate) fn pod_spec(m: &Manifest) -> Option<&Value> {
    let v = m.value.as_ref();
    match (m.id.group.as_str(), m.id.kind.as_str()) {
        ("", "Pod") => v.get("spec"),
        ("batch", "CronJob") => v.at("/spec/jobTemplate/spec/template/spec"),
        ("apps", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet")
        | ("batch", "Job")
        | ("", "ReplicationController")
        | ("argoproj.io", "Rollout") => v.at("/spec/template/spec"),
        _ => None,
    }
}

/// The labels of the pods a workload creates.
#[must_use]
pub(crate) fn pod_labels(m: &Manifest) -> Option<&serde_json::Map<String, Value>> {
    let v = m.value.as_ref();
    let p = if m.id.kind == "Pod" {
        "/metadata/labels"
    } else if m.id.kind == "CronJob" {
        "/spec/jobTemplate/spec/template/metadata/labels"
    } else {
        "/spec/template/metadata/labels"
    };
    pod_spec(m)?;
    v.at(p)?.as_object()
}

/// Every container of a pod spec, init containers first.
pub(crate) fn containers(spec: &Value) -> impl Iterator<Item = &Value> {
    ["initContainers", "containers"]
        .into_iter()
        .filter_map(|k| spec.get(k)?.as_array())
        .flatten()
}

/// `command` followed by `args`, as strings.
#[must_use]
pub(crate) fn argv(container: &Value) -> Vec<String> {
    ["command", "args"]
        .into_iter()
        .filter_map(|k| container.get(k)?.as_array())
        .flatten()
        .map(|a| match a {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn s<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key)?.as_str().filter(|x| !x.is_empty())
}

fn optional(v: &Value) -> bool {
    v.get("optional").and_then(Value::as_bool).unwrap_or(false)
}

/// Every object the pod spec names. The `default` ServiceAccount is left
/// out: Kubernetes creates it in every namespace.
#[must_use]
pub(crate) fn references(spec: &Value) -> Vec<PodRef> {
    let mut out = Vec::new();
    let mut push = |kind, name: &str, optional, via: String| {
        out.push(PodRef {
            kind,
            name: name.to_string(),
            optional,
            via,
        });
    };
    if let Some(sa) = s(spec, "serviceAccountName").or_else(|| s(spec, "serviceAccount")) {
        if sa != "default" {
            push(
                RefKind::ServiceAccount,
                sa,
                false,
                "serviceAccountName".into(),
            );
        }
    }
    if let Some(pc) = s(spec, "priorityClassName") {
        // Built-in classes exist in every cluster.
        if !pc.starts_with("system-") {
            push(
                RefKind::PriorityClass,
                pc,
                false,
                "priorityClassName".into(),
            );
        }
    }
    for vol in spec
        .get("volumes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let vname = s(vol, "name").unwrap_or("?");
        let projected = vol
            .at("/projected/sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten();
        // (object holding the reference, its name field, what it names)
        let direct = [
            ("configMap", "name", RefKind::ConfigMap),
            ("secret", "secretName", RefKind::Secret),
            (
                "persistentVolumeClaim",
                "claimName",
                RefKind::PersistentVolumeClaim,
            ),
        ];
        let in_projection = [
            ("configMap", "name", RefKind::ConfigMap),
            ("secret", "name", RefKind::Secret),
        ];
        let sources = direct
            .iter()
            .map(|d| (vol, d))
            .chain(projected.flat_map(|src| in_projection.iter().map(move |d| (src, d))));
        for (holder, (key, name_key, kind)) in sources {
            if let Some(r) = holder.get(*key) {
                if let Some(n) = s(r, name_key) {
                    // A PVC volume has no `optional`: the pod waits for it.
                    let opt = *kind != RefKind::PersistentVolumeClaim && optional(r);
                    push(*kind, n, opt, format!("volume `{vname}`"));
                }
            }
        }
    }
    for c in containers(spec) {
        for e in c.get("env").and_then(Value::as_array).into_iter().flatten() {
            let ename = s(e, "name").unwrap_or("?");
            if let Some(r) = e.at("/valueFrom/configMapKeyRef") {
                if let Some(n) = s(r, "name") {
                    push(RefKind::ConfigMap, n, optional(r), format!("env `{ename}`"));
                }
            }
            if let Some(r) = e.at("/valueFrom/secretKeyRef") {
                if let Some(n) = s(r, "name") {
                    push(RefKind::Secret, n, optional(r), format!("env `{ename}`"));
                }
            }
        }
        for e in c
            .get("envFrom")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(r) = e.get("configMapRef") {
                if let Some(n) = s(r, "name") {
                    push(RefKind::ConfigMap, n, optional(r), "envFrom".into());
                }
            }
            if let Some(r) = e.get("secretRef") {
                if let Some(n) = s(r, "name") {
                    push(RefKind::Secret, n, optional(r), "envFrom".into());
                }
            }
        }
    }
    out.sort_by(|a, b| (a.kind, &a.name).cmp(&(b.kind, &b.name)));
    out.dedup_by(|a, b| a.kind == b.kind && a.name == b.name);
    out
}

/// Where a file a container sees comes from: a ConfigMap name and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MountedFile {
    /// The ConfigMap.
    pub(crate) config_map: String,
    /// The key inside it.
    pub(crate) key: String,
}

/// The ConfigMap key mounted at `path` in `container`, if a ConfigMap
/// volume (plain or projected) provides it.
#[must_use]
pub(crate) fn mounted_config_map_file(
    spec: &Value,
    container: &Value,
    path: &str,
) -> Option<MountedFile> {
    let mounts = container.get("volumeMounts")?.as_array()?;
    for mount in mounts {
        let Some(mount_path) = s(mount, "mountPath") else {
            continue;
        };
        let mount_path = mount_path.trim_end_matches('/');
        let rel = if path == mount_path {
            // A subPath mount puts one key (or item path) exactly at mountPath.
            match s(mount, "subPath") {
                Some(sp) => sp,
                None => continue,
            }
        } else if let Some(r) = path
            .strip_prefix(mount_path)
            .and_then(|r| r.strip_prefix('/'))
        {
            match s(mount, "subPath") {
                Some(_) => continue,
                None => r,
            }
        } else {
            continue;
        };
        let vname = s(mount, "name")?;
        let vol = spec
            .get("volumes")?
            .as_array()?
            .iter()
            .find(|v| s(v, "name") == Some(vname))?;
        let mut sources: Vec<&Value> = Vec::new();
        if let Some(cm) = vol.get("configMap") {
            sources.push(cm);
        }
        for src in vol
            .at("/projected/sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(cm) = src.get("configMap") {
                sources.push(cm);
            }
        }
        for cm in sources {
            let Some(name) = s(cm, "name") else { continue };
            let key = match cm.get("items").and_then(Value::as_array) {
                Some(items) => items
                    .iter()
                    .find(|i| s(i, "path") == Some(rel))
                    .and_then(|i| s(i, "key"))
                    .map(str::to_string),
                None if !rel.contains('/') => Some(rel.to_string()),
                None => None,
            };
            if let Some(key) = key {
                return Some(MountedFile {
                    config_map: name.to_string(),
                    key,
                });
            }
        }
    }
    None
}

/// The ConfigMaps mounted as volumes into `container` (name, mount path).
#[must_use]
pub(crate) fn mounted_config_maps(spec: &Value, container: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let Some(volumes) = spec.get("volumes").and_then(Value::as_array) else {
        return out;
    };
    for mount in container
        .get("volumeMounts")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let (Some(vname), Some(path)) = (s(mount, "name"), s(mount, "mountPath")) else {
            continue;
        };
        let Some(vol) = volumes.iter().find(|v| s(v, "name") == Some(vname)) else {
            continue;
        };
        let mut names: Vec<&str> = vol
            .get("configMap")
            .and_then(|c| s(c, "name"))
            .into_iter()
            .collect();
        for src in vol
            .at("/projected/sources")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(n) = src.get("configMap").and_then(|c| s(c, "name")) {
                names.push(n);
            }
        }
        for n in names {
            out.push((n.to_string(), path.to_string()));
        }
    }
    out
}

/// The literal value of env var `name` in `container`, or the ConfigMap key
/// it is read from.
#[must_use]
pub(crate) fn env_source(container: &Value, name: &str) -> Option<EnvSource> {
    let e = container
        .get("env")?
        .as_array()?
        .iter()
        .find(|e| s(e, "name") == Some(name))?;
    if let Some(v) = e.get("value").and_then(Value::as_str) {
        return Some(EnvSource::Literal(v.to_string()));
    }
    let r = e.at("/valueFrom/configMapKeyRef")?;
    Some(EnvSource::ConfigMapKey(MountedFile {
        config_map: s(r, "name")?.to_string(),
        key: s(r, "key")?.to_string(),
    }))
}

/// Where an env var's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum EnvSource {
    /// `value:` in the manifest.
    Literal(String),
    /// `valueFrom.configMapKeyRef`.
    ConfigMapKey(MountedFile),
}

/// Whether a ConfigMap or Secret name ends in a Kustomize content hash
/// (`-` and ten characters of hex with `0 1 3 a e` mapped to `g h k m t`).
#[must_use]
pub(crate) fn has_kustomize_hash_suffix(name: &str) -> bool {
    let Some((_, suffix)) = name.rsplit_once('-') else {
        return false;
    };
    suffix.len() == 10 && suffix.bytes().all(|b| b"2456789bcdfghkmt".contains(&b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_cover_volumes_env_and_accounts() {
        let spec = json!({
            "serviceAccountName": "migrator",
            "priorityClassName": "high",
            "volumes": [
                {"name": "cfg", "configMap": {"name": "app-config"}},
                {"name": "tls", "secret": {"secretName": "tls", "optional": true}},
                {"name": "data", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "p", "projected": {"sources": [{"secret": {"name": "proj"}}]}}
            ],
            "containers": [{"name": "c",
                "env": [{"name": "DB", "valueFrom": {"secretKeyRef": {"name": "db", "key": "url"}}}],
                "envFrom": [{"configMapRef": {"name": "env"}}]}]
        });
        let refs = references(&spec);
        let names: Vec<(RefKind, &str, bool)> = refs
            .iter()
            .map(|r| (r.kind, r.name.as_str(), r.optional))
            .collect();
        assert_eq!(
            names,
            vec![
                (RefKind::ConfigMap, "app-config", false),
                (RefKind::ConfigMap, "env", false),
                (RefKind::Secret, "db", false),
                (RefKind::Secret, "proj", false),
                (RefKind::Secret, "tls", true),
                (RefKind::PersistentVolumeClaim, "data", false),
                (RefKind::ServiceAccount, "migrator", false),
                (RefKind::PriorityClass, "high", false),
            ]
        );
    }

    #[test]
    fn mounted_files_resolve_to_config_map_keys() {
        let spec = json!({
            "volumes": [
                {"name": "sql", "configMap": {"name": "db-init"}},
                {"name": "one", "configMap": {"name": "scripts", "items": [{"key": "run", "path": "run.sh"}]}}
            ]
        });
        let c = json!({"volumeMounts": [
            {"name": "sql", "mountPath": "/sql/"},
            {"name": "one", "mountPath": "/bin/run.sh", "subPath": "run.sh"}
        ]});
        assert_eq!(
            mounted_config_map_file(&spec, &c, "/sql/001.sql"),
            Some(MountedFile {
                config_map: "db-init".into(),
                key: "001.sql".into()
            })
        );
        assert_eq!(
            mounted_config_map_file(&spec, &c, "/bin/run.sh"),
            Some(MountedFile {
                config_map: "scripts".into(),
                key: "run".into()
            })
        );
        assert_eq!(mounted_config_map_file(&spec, &c, "/etc/passwd"), None);
    }

    #[test]
    fn kustomize_hash_suffix_is_recognised() {
        assert!(has_kustomize_hash_suffix("bob-4h2mbtbbt6"));
        assert!(!has_kustomize_hash_suffix("app-config"));
        assert!(!has_kustomize_hash_suffix("my-deployment"));
        assert!(!has_kustomize_hash_suffix("x-abcdefghij"));
    }
}
