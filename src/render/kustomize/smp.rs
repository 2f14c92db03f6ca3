//! Strategic merge as Kustomize does it (kyaml `merge2` with list elements
//! prepended), not apimachinery's: list merge keys come only from the
//! built-in schema of known kinds, lists anywhere else are replaced whole,
//! `$patch: delete|replace|merge` are honoured and every other `$` directive
//! is copied through verbatim. The element bookkeeping mirrors kyaml's
//! `ElementSetter` so element order comes out the same.

use serde_json::{Map, Value};

use super::{content, KResult};

/// A node type of the built-in schema that has associative lists below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ty {
    /// Any known kind: only `metadata` matters.
    Meta,
    /// Deployment, StatefulSet, DaemonSet, ReplicaSet, Job, CronJob, ReplicationController.
    Workload,
    /// Their `spec` (and a CronJob's `jobTemplate.spec`).
    WorkloadSpec,
    /// A CronJob's `jobTemplate`.
    JobTemplate,
    /// `PodTemplateSpec`.
    PodTemplateSpec,
    /// `v1 Pod`.
    Pod,
    /// `v1 PodTemplate`.
    PodTemplate,
    /// `PodSpec`.
    PodSpec,
    /// `Container`.
    Container,
    /// `ObjectMeta`.
    ObjectMeta,
    /// `v1 Service`.
    Service,
    /// `ServiceSpec`.
    ServiceSpec,
    /// `v1 ServiceAccount`.
    ServiceAccount,
    /// Admission webhook configurations.
    Webhooks,
    /// A known type without associative lists below.
    Leaf,
}

/// Known apiVersion/kind pairs of the built-in (v1.21.2) schema.
fn root_type(api_version: &str, kind: &str) -> Option<Ty> {
    let t = match (api_version, kind) {
        ("apps/v1", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet")
        | ("batch/v1", "Job" | "CronJob")
        | ("batch/v1beta1", "CronJob")
        | ("v1", "ReplicationController") => Ty::Workload,
        ("v1", "Pod") => Ty::Pod,
        ("v1", "PodTemplate") => Ty::PodTemplate,
        ("v1", "Service") => Ty::Service,
        ("v1", "ServiceAccount") => Ty::ServiceAccount,
        (
            "admissionregistration.k8s.io/v1" | "admissionregistration.k8s.io/v1beta1",
            "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration",
        ) => Ty::Webhooks,
        (
            "v1",
            "ConfigMap"
            | "Secret"
            | "Namespace"
            | "PersistentVolumeClaim"
            | "PersistentVolume"
            | "Endpoints"
            | "LimitRange"
            | "ResourceQuota"
            | "Node"
            | "Event"
            | "Binding"
            | "ComponentStatus",
        )
        | (
            "rbac.authorization.k8s.io/v1" | "rbac.authorization.k8s.io/v1beta1",
            "Role" | "ClusterRole" | "RoleBinding" | "ClusterRoleBinding",
        )
        | ("networking.k8s.io/v1", "Ingress" | "NetworkPolicy" | "IngressClass")
        | ("networking.k8s.io/v1beta1" | "extensions/v1beta1", "Ingress")
        | ("policy/v1", "PodDisruptionBudget")
        | ("policy/v1beta1", "PodDisruptionBudget" | "PodSecurityPolicy")
        | (
            "autoscaling/v1" | "autoscaling/v2beta1" | "autoscaling/v2beta2",
            "HorizontalPodAutoscaler",
        )
        | ("storage.k8s.io/v1", "StorageClass" | "CSIDriver" | "CSINode" | "VolumeAttachment")
        | ("scheduling.k8s.io/v1", "PriorityClass")
        | (
            "apiextensions.k8s.io/v1" | "apiextensions.k8s.io/v1beta1",
            "CustomResourceDefinition",
        )
        | ("apiregistration.k8s.io/v1", "APIService")
        | ("coordination.k8s.io/v1", "Lease")
        | ("discovery.k8s.io/v1" | "discovery.k8s.io/v1beta1", "EndpointSlice")
        | ("node.k8s.io/v1", "RuntimeClass") => Ty::Meta,
        _ => return None,
    };
    Some(t)
}

/// How a field of a schema type is merged.
struct FieldInfo {
    ty: Ty,
    /// `Some(keys)` for associative lists (`[]` for primitive lists).
    keys: Option<&'static [&'static str]>,
}

#[allow(clippy::match_same_arms)] // one arm per field, as the API schema lists them
fn field_info(ty: Ty, key: &str) -> Option<FieldInfo> {
    let t = |ty: Ty| Some(FieldInfo { ty, keys: None });
    let l = |ty: Ty, keys: &'static [&'static str]| {
        Some(FieldInfo {
            ty,
            keys: Some(keys),
        })
    };
    match (ty, key) {
        (_, "metadata") if ty != Ty::Container && ty != Ty::PodSpec => t(Ty::ObjectMeta),
        (Ty::Workload, "spec") => t(Ty::WorkloadSpec),
        (Ty::WorkloadSpec, "template") => t(Ty::PodTemplateSpec),
        (Ty::WorkloadSpec, "jobTemplate") => t(Ty::JobTemplate),
        (Ty::JobTemplate, "spec") => t(Ty::WorkloadSpec),
        (Ty::PodTemplateSpec | Ty::Pod, "spec") => t(Ty::PodSpec),
        (Ty::PodTemplate, "template") => t(Ty::PodTemplateSpec),
        (Ty::PodSpec, "containers" | "initContainers" | "ephemeralContainers") => {
            l(Ty::Container, &["name"])
        }
        (Ty::PodSpec, "volumes" | "imagePullSecrets") => l(Ty::Leaf, &["name"]),
        (Ty::PodSpec, "hostAliases") => l(Ty::Leaf, &["ip"]),
        (Ty::PodSpec, "topologySpreadConstraints") => {
            l(Ty::Leaf, &["topologyKey", "whenUnsatisfiable"])
        }
        (Ty::Container, "ports") => l(Ty::Leaf, &["containerPort", "protocol"]),
        (Ty::Container, "env") => l(Ty::Leaf, &["name"]),
        (Ty::Container, "volumeMounts") => l(Ty::Leaf, &["mountPath"]),
        (Ty::Container, "volumeDevices") => l(Ty::Leaf, &["devicePath"]),
        (Ty::ObjectMeta, "finalizers") => l(Ty::Leaf, &[]),
        (Ty::ObjectMeta, "ownerReferences") => l(Ty::Leaf, &["uid"]),
        (Ty::Service, "spec") => t(Ty::ServiceSpec),
        (Ty::ServiceSpec, "ports") => l(Ty::Leaf, &["port", "protocol"]),
        (Ty::ServiceAccount, "secrets") => l(Ty::Leaf, &["name"]),
        (Ty::Webhooks, "webhooks") => l(Ty::Leaf, &["name"]),
        _ => None,
    }
}

/// The schema type of a resource, if its kind is known.
#[must_use]
pub(crate) fn schema_for(obj: &Value) -> Option<Ty> {
    let av = obj.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let k = obj.get("kind").and_then(Value::as_str).unwrap_or("");
    root_type(av, k)
}

/// Merges `patch` into `dest`. `None` means the patch deleted the object.
///
/// # Errors
/// Unknown `$patch` values and type clashes between patch and target.
pub(crate) fn merge(dest: Value, patch: Value, keep: &[String]) -> KResult<Option<Value>> {
    let ty = schema_for(&dest).or_else(|| schema_for(&patch));
    walk(Some(dest), Some(patch), ty, None, "", keep)
}

fn kind_of(v: &Value) -> u8 {
    match v {
        Value::Object(_) => 1,
        Value::Array(_) => 2,
        Value::Null => 0,
        _ => 3,
    }
}

fn missing_or_null(v: Option<&Value>) -> bool {
    v.is_none_or(Value::is_null)
}

fn walk(
    dest: Option<Value>,
    origin: Option<Value>,
    ty: Option<Ty>,
    keys: Option<&'static [&'static str]>,
    path: &str,
    keep: &[String],
) -> KResult<Option<Value>> {
    let Some(origin) = origin else {
        // kyaml walks the target's own fields too: empty (null) fields are
        // dropped and associative lists are re-normalised.
        return match dest {
            // `key: null` survives, `key:` does not; `keep` has the keys
            // the source wrote as an explicit null.
            Some(Value::Null)
                if keep
                    .iter()
                    .any(|k| path.rsplit('.').next() == Some(k.as_str())) =>
            {
                Ok(Some(Value::Null))
            }
            None | Some(Value::Null) => Ok(None),
            Some(d @ Value::Object(_)) => {
                walk_map(Some(d), Value::Object(Map::new()), ty, path, keep)
            }
            Some(d @ Value::Array(_)) if keys.is_some() => walk_assoc_list(
                Some(d),
                Value::Array(Vec::new()),
                ty,
                keys.unwrap_or(&[]),
                path,
                keep,
            ),
            other => Ok(other),
        };
    };
    let kind = [dest.as_ref(), Some(&origin)]
        .into_iter()
        .flatten()
        .map(kind_of)
        .find(|k| *k != 0)
        .unwrap_or(0);
    for v in [dest.as_ref(), Some(&origin)].into_iter().flatten() {
        let k = kind_of(v);
        if k != 0 && k != kind {
            return Err(content(format!(
                "strategic merge patch: wrong node kind at `{path}`"
            )));
        }
    }
    match kind {
        0 => Ok(None),
        1 => walk_map(dest, origin, ty, path, keep),
        2 => {
            if keys.is_some() {
                walk_assoc_list(dest, origin, ty, keys.unwrap_or(&[]), path, keep)
            } else if origin.is_null() {
                Ok(None)
            } else {
                Ok(Some(origin))
            }
        }
        _ => Ok(if origin.is_null() { None } else { Some(origin) }),
    }
}

#[derive(PartialEq, Eq)]
enum Directive {
    Merge,
    Delete,
    Replace,
}

/// Reads and removes a map's `$patch` directive.
fn map_directive(m: &mut Map<String, Value>) -> KResult<Directive> {
    let Some(v) = m.get("$patch") else {
        return Ok(Directive::Merge);
    };
    let d = match v.as_str() {
        Some("delete") => Directive::Delete,
        Some("replace") => Directive::Replace,
        Some("merge") => Directive::Merge,
        _ => {
            return Err(content(format!(
                "unknown patch strategy `{}`",
                scalar_text(v)
            )))
        }
    };
    m.remove("$patch");
    Ok(d)
}

/// Reads and removes a list's `$patch` directive (an element holding only `$patch`).
fn list_directive(l: &mut Vec<Value>) -> KResult<Directive> {
    let Some(pos) = l.iter().position(|e| e.get("$patch").is_some()) else {
        return Ok(Directive::Merge);
    };
    let Some(m) = l[pos].as_object() else {
        return Ok(Directive::Merge);
    };
    if m.len() > 1 {
        return Ok(Directive::Merge);
    }
    let d = match m.get("$patch").and_then(Value::as_str) {
        Some("delete") => Directive::Delete,
        Some("replace") => Directive::Replace,
        Some("merge") => Directive::Merge,
        other => {
            return Err(content(format!(
                "unknown patch strategy `{}`",
                other.unwrap_or("")
            )))
        }
    };
    l.retain(|e| {
        !(e.as_object()
            .is_some_and(|m| m.len() == 1 && m.contains_key("$patch")))
    });
    Ok(d)
}

fn walk_map(
    dest: Option<Value>,
    origin: Value,
    ty: Option<Ty>,
    path: &str,
    keep: &[String],
) -> KResult<Option<Value>> {
    let Value::Object(mut o) = origin else {
        // origin is null here (dest is the map)
        return Ok(None);
    };
    let base = if missing_or_null(dest.as_ref()) {
        if map_directive(&mut o)? == Directive::Delete {
            return Ok(None);
        }
        o.clone()
    } else {
        match map_directive(&mut o)? {
            Directive::Delete => return Ok(None),
            Directive::Replace => o.clone(),
            Directive::Merge => match dest {
                Some(Value::Object(d)) => d,
                _ => o.clone(),
            },
        }
    };
    let mut keys: Vec<String> = base.keys().chain(o.keys()).cloned().collect();
    keys.sort();
    keys.dedup();
    let mut out = base;
    for k in keys {
        let info = ty.and_then(|t| field_info(t, &k));
        let (cty, ckeys) = match &info {
            Some(i) => (Some(i.ty), i.keys),
            None => (None, None),
        };
        let d = out.get(&k).cloned();
        let p = o.get(&k).cloned();
        let sub = format!("{path}.{k}");
        match walk(d, p, cty, ckeys, &sub, keep)? {
            Some(v) => {
                out.insert(k, v);
            }
            None => {
                out.remove(&k);
            }
        }
    }
    Ok(Some(Value::Object(out)))
}

/// The raw text of a scalar, as kyaml compares it.
#[must_use]
pub(crate) fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

fn is_empty_map(v: &Value) -> bool {
    v.as_object().is_some_and(Map::is_empty)
}

/// kyaml `FieldMatcher{Name, StringValue}` on one element.
fn field_matches(elem: &Value, key: &str, value: &str) -> bool {
    if key.is_empty() {
        return !elem.is_object() && !elem.is_array() && scalar_text(elem) == value;
    }
    match elem.as_object().and_then(|m| m.get(key)) {
        None => false,
        Some(f) => value.is_empty() || scalar_text(f) == value,
    }
}

/// kyaml `ElementSetter`: replaces (or, with no element, removes) every
/// element matching `keys`/`values`, appending when nothing matched. Null
/// and empty-map elements are dropped on the way.
fn element_setter(
    list: &mut Vec<Value>,
    element: Option<&Value>,
    keys: &[String],
    values: &[String],
) {
    let keys: Vec<String> = if keys.is_empty() {
        vec![String::new()]
    } else {
        keys.to_vec()
    };
    let mapping_setter = !keys[0].is_empty() && !values.is_empty() && !values[0].is_empty();
    let mut out = Vec::with_capacity(list.len() + 1);
    let mut matched = false;
    for elem in list.drain(..) {
        if elem.is_null() || is_empty_map(&elem) {
            continue;
        }
        if !elem.is_object() && mapping_setter {
            out.push(elem);
            continue;
        }
        let mut val = false;
        let mut found = true;
        for (j, k) in keys.iter().enumerate() {
            if j < values.len() {
                val = field_matches(&elem, k, &values[j]);
            }
            if !val {
                found = false;
                break;
            }
        }
        if !found {
            if !values.is_empty() {
                out.push(elem);
            }
            continue;
        }
        matched = true;
        if let Some(e) = element {
            out.push(e.clone());
        }
    }
    *list = out;
    let Some(e) = element else { return };
    if e.is_null() {
        return;
    }
    if !matched {
        list.push(e.clone());
    }
}

fn element_values(list: &[Value], keys: &[&str]) -> Vec<Vec<String>> {
    list.iter()
        .map(|e| {
            keys.iter()
                .map(|k| {
                    e.as_object()
                        .and_then(|m| m.get(*k))
                        .map(scalar_text)
                        .unwrap_or_default()
                })
                .collect()
        })
        .collect()
}

fn validate_keys(
    values_list: &[Vec<String>],
    values: &[String],
    keys: &[String],
) -> (Vec<String>, Vec<String>) {
    let mut valid = std::collections::BTreeSet::new();
    for vs in values_list {
        for (i, v) in vs.iter().enumerate() {
            if !v.is_empty() {
                if let Some(k) = keys.get(i) {
                    valid.insert(k.clone());
                }
            }
        }
    }
    if valid.is_empty() {
        return (keys.to_vec(), values.to_vec());
    }
    let vk = keys
        .iter()
        .filter(|k| valid.contains(*k))
        .cloned()
        .collect();
    let vv = values
        .iter()
        .enumerate()
        .filter(|(i, v)| !v.is_empty() || keys.get(*i).is_some_and(|k| valid.contains(k)))
        .map(|(_, v)| v.clone())
        .collect();
    (vk, vv)
}

fn merge_values(mut list: Vec<Vec<String>>) -> Vec<Vec<String>> {
    for i in 0..list.len() {
        for j in 0..list.len() {
            if let Some(v) = match_values(&list[i], &list[j]) {
                list[i].clone_from(&v);
                list[j] = v;
            }
        }
    }
    list
}

fn match_values(a: &[String], b: &[String]) -> Option<Vec<String>> {
    if a.len() != b.len() {
        return None;
    }
    let mut common = false;
    let mut res = Vec::new();
    for i in 0..a.len() {
        if a[i] == b[i] {
            common = true;
            res.push(a[i].clone());
            continue;
        }
        if !a[i].is_empty() && !b[i].is_empty() {
            return None;
        }
        res.push(if a[i].is_empty() {
            b[i].clone()
        } else {
            a[i].clone()
        });
    }
    common.then_some(res)
}

/// kyaml `ElementList`: the first element matching every key.
fn element_list_pos(list: &[Value], keys: &[String], values: &[String]) -> Option<usize> {
    if keys.is_empty() || keys[0].is_empty() {
        let v = values.first().cloned().unwrap_or_default();
        return list
            .iter()
            .position(|e| !e.is_object() && !e.is_array() && scalar_text(e) == v);
    }
    list.iter()
        .position(|e| e.is_object() && keys.iter().zip(values).all(|(k, v)| field_matches(e, k, v)))
}

fn walk_assoc_list(
    dest: Option<Value>,
    origin: Value,
    ty: Option<Ty>,
    keys: &'static [&'static str],
    path: &str,
    keep: &[String],
) -> KResult<Option<Value>> {
    let Value::Array(mut o) = origin else {
        return Ok(None);
    };
    let mut d: Vec<Value> = if missing_or_null(dest.as_ref()) {
        list_directive(&mut o)?;
        o.clone()
    } else {
        match list_directive(&mut o)? {
            Directive::Delete => return Ok(None),
            Directive::Replace => o.clone(),
            Directive::Merge => match dest {
                Some(Value::Array(d)) => d,
                _ => o.clone(),
            },
        }
    };
    let keys_s: Vec<String> = keys.iter().map(|k| (*k).to_string()).collect();
    // Which values identify elements: patch first (prepend), then dest.
    let mut values_list: Vec<Vec<String>> = Vec::new();
    let primitive = keys.is_empty();
    let used_keys: Vec<String> = if primitive {
        vec![String::new()]
    } else {
        keys_s.clone()
    };
    if primitive {
        for src in [&o, &d] {
            for e in src {
                let v = vec![scalar_text(e)];
                if !values_list.contains(&v) {
                    values_list.push(v);
                }
            }
        }
    } else {
        for src in [&o, &d] {
            for v in element_values(src, keys) {
                if v.is_empty() || values_list.contains(&v) {
                    continue;
                }
                values_list.push(v);
            }
        }
    }
    if used_keys.len() > 1 {
        values_list = merge_values(values_list);
    }
    let mut items: Vec<Value> = Vec::new();
    let mut valid_keys: Vec<String> = used_keys.clone();
    for values in &values_list {
        if values.is_empty() {
            continue;
        }
        let (vk, vv) = validate_keys(&values_list, values, &used_keys);
        valid_keys.clone_from(&vk);
        let (ek, ev) = validate_keys(std::slice::from_ref(&vv), &vv, &vk);
        let dpos = element_list_pos(&d, &ek, &ev);
        let de = dpos.map(|i| d[i].clone());
        let oe = element_list_pos(&o, &ek, &ev).map(|i| o[i].clone());
        let val = walk(de, oe, ty, None, path, keep)?;
        let gone = val.as_ref().is_none_or(|v| v.is_null() || is_empty_map(v));
        if gone {
            element_setter(&mut d, None, &vk, &vv);
            continue;
        }
        let mut val = val.unwrap_or(Value::Null);
        for (i, k) in vk.iter().enumerate() {
            if let Some(m) = val.as_object_mut() {
                if !m.contains_key(k) && !vv.get(i).is_none_or(String::is_empty) {
                    m.insert(k.clone(), Value::String(vv[i].clone()));
                }
            }
        }
        // kyaml merges the dest element in place.
        if let Some(i) = dpos {
            d[i] = val.clone();
        }
        element_setter(&mut items, Some(&val), &vk, &vv);
    }
    if !values_list.is_empty() {
        append_list(&mut items, &d, &valid_keys);
        d = items;
    }
    Ok(Some(Value::Array(d)))
}

/// kyaml `appendListNode(dst, src, keys)`.
fn append_list(dst: &mut Vec<Value>, src: &[Value], keys: &[String]) {
    for elem in src {
        if keys.first().is_none_or(String::is_empty) {
            element_setter(dst, Some(elem), &[String::new()], &[scalar_text(elem)]);
            continue;
        }
        let mut v = Vec::new();
        for k in keys {
            match elem.as_object().and_then(|m| m.get(k)) {
                Some(f) if !f.is_null() => v.push(scalar_text(f)),
                _ => dst.push(elem.clone()),
            }
        }
        if keys.len() > 1 {
            element_setter(dst, None, keys, &v);
        }
        element_setter(dst, Some(elem), keys, &v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ports_prepend_and_delete_leaves_empty_list() {
        let d = json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"template":{"spec":{
            "containers":[{"name":"a","image":"a","ports":[{"containerPort":80},{"containerPort":53,"protocol":"UDP"}]},{"name":"b","image":"b"}],
            "volumes":[{"name":"v1","emptyDir":{}}]}}}});
        let p = json!({"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d"},"spec":{"template":{"spec":{
            "$setElementOrder/containers":[{"name":"b"},{"name":"a"}],
            "containers":[{"name":"a","image":"a2","ports":[{"containerPort":53,"protocol":"TCP"}]}],
            "volumes":[{"name":"v1","$patch":"delete"}]}}}});
        let out = merge(d, p, &[]).unwrap().unwrap();
        let spec = &out["spec"]["template"]["spec"];
        assert_eq!(spec["volumes"], json!([]));
        assert_eq!(
            spec["$setElementOrder/containers"],
            json!([{"name":"b"},{"name":"a"}])
        );
        assert_eq!(
            spec["containers"][0]["ports"],
            json!([{"containerPort":53,"protocol":"TCP"},{"containerPort":80},{"containerPort":53,"protocol":"UDP"}])
        );
        assert_eq!(spec["containers"][1], json!({"name":"b","image":"b"}));
    }

    #[test]
    fn unknown_kind_lists_are_replaced() {
        let d = json!({"apiVersion":"x/v1","kind":"X","spec":{"items":[{"name":"a","v":1},{"name":"b"}]}});
        let p = json!({"apiVersion":"x/v1","kind":"X","spec":{"items":[{"name":"a","v":2}]}});
        let out = merge(d, p, &[]).unwrap().unwrap();
        assert_eq!(out["spec"]["items"], json!([{"name":"a","v":2}]));
    }

    #[test]
    fn null_deletes_and_resource_delete() {
        let d = json!({"apiVersion":"v1","kind":"ConfigMap","data":{"a":"1","b":"2"}});
        let p = json!({"apiVersion":"v1","kind":"ConfigMap","data":{"a":null}});
        assert_eq!(
            merge(d.clone(), p, &[]).unwrap().unwrap()["data"],
            json!({"b":"2"})
        );
        let p = json!({"apiVersion":"v1","kind":"ConfigMap","$patch":"delete"});
        assert_eq!(merge(d, p, &[]).unwrap(), None);
    }
}
