//! Argo CD's `spec.source.kustomize` options, applied to the root
//! kustomization the way Argo CD's `kustomize edit set/add` calls change
//! it before building (argo-cd `util/kustomize/kustomize.go`).

use serde_json::{json, Map, Value};

use super::load::Kustomization;
use super::transform::split_image;
use super::KResult;
use crate::render::SourceSpec;

fn push(k: &mut Map<String, Value>, f: &str, v: Value) {
    match k.get_mut(f) {
        Some(Value::Array(a)) => a.push(v),
        _ => {
            k.insert(f.to_string(), Value::Array(vec![v]));
        }
    }
}

/// Replaces the entry with the same `name` in list `f`, or appends.
fn upsert(k: &mut Map<String, Value>, f: &str, v: Value) {
    if let Some(Value::Array(a)) = k.get_mut(f) {
        if let Some(x) = a.iter_mut().find(|x| x.get("name") == v.get("name")) {
            *x = v;
            return;
        }
    }
    push(k, f, v);
}

/// `kustomize edit set image` argument → images entry.
fn image_entry(arg: &str) -> Value {
    let (name, rest) = match arg.split_once('=') {
        Some((n, r)) => (n.to_string(), Some(r)),
        None => (String::new(), None),
    };
    let mut m = Map::new();
    match rest {
        Some(r) => {
            let (new_name, tag, digest) = split_image(r);
            m.insert("name".into(), json!(name));
            if new_name != name {
                m.insert("newName".into(), json!(new_name));
            }
            if !tag.is_empty() {
                m.insert("newTag".into(), json!(tag));
            }
            if !digest.is_empty() {
                m.insert("digest".into(), json!(digest));
            }
        }
        None => {
            let (n, tag, digest) = split_image(arg);
            m.insert("name".into(), json!(n));
            if !tag.is_empty() {
                m.insert("newTag".into(), json!(tag));
            }
            if !digest.is_empty() {
                m.insert("digest".into(), json!(digest));
            }
        }
    }
    Value::Object(m)
}

fn add_map(
    k: &mut Kustomization,
    field: &str,
    add: &Map<String, Value>,
    force: bool,
) -> KResult<()> {
    let e =
        k.k.entry(field.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    if !e.is_object() {
        *e = Value::Object(Map::new());
    }
    let file = k.file.clone();
    if let Value::Object(m) = e {
        for (key, v) in add {
            if m.contains_key(key) && !force {
                return Err(super::content(format!(
                    "`{file}`: `{field}` already has `{key}`; Argo CD's kustomize edit refuses it without force"
                )));
            }
            m.insert(key.clone(), Value::String(super::smp::scalar_text(v)));
        }
    }
    Ok(())
}

/// Applies the Application's kustomize options to the root kustomization.
///
/// # Errors
/// Labels or annotations that already exist without the force flag.
pub(crate) fn apply(k: &mut Kustomization, spec: &SourceSpec) -> KResult<()> {
    let Some(opts) = spec.kustomize.as_ref().and_then(Value::as_object) else {
        return Ok(());
    };
    let s = |f: &str| {
        opts.get(f)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let b = |f: &str| opts.get(f).and_then(Value::as_bool).unwrap_or(false);
    if !s("namePrefix").is_empty() {
        k.k.insert("namePrefix".into(), json!(s("namePrefix")));
    }
    if !s("nameSuffix").is_empty() {
        k.k.insert("nameSuffix".into(), json!(s("nameSuffix")));
    }
    for img in opts
        .get("images")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(arg) = img.as_str() else { continue };
        upsert(&mut k.k, "images", image_entry(arg));
    }
    for r in opts
        .get("replicas")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = r.get("name").cloned().unwrap_or(Value::Null);
        let count = match r.get("count") {
            Some(Value::String(c)) => c.parse::<i64>().map_or(Value::Null, Value::from),
            Some(v) => v.clone(),
            None => Value::Null,
        };
        upsert(&mut k.k, "replicas", json!({"name": name, "count": count}));
    }
    if let Some(labels) = opts
        .get("commonLabels")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
    {
        if b("labelWithoutSelector") {
            let mut pairs = Map::new();
            for (key, v) in labels {
                pairs.insert(key.clone(), Value::String(super::smp::scalar_text(v)));
            }
            let mut entry = json!({"pairs": pairs});
            if b("labelIncludeTemplates") {
                entry["includeTemplates"] = json!(true);
            }
            push(&mut k.k, "labels", entry);
        } else {
            add_map(k, "commonLabels", labels, b("forceCommonLabels"))?;
        }
    }
    if let Some(ann) = opts
        .get("commonAnnotations")
        .and_then(Value::as_object)
        .filter(|m| !m.is_empty())
    {
        add_map(k, "commonAnnotations", ann, b("forceCommonAnnotations"))?;
    }
    if !s("namespace").is_empty() {
        k.k.insert("namespace".into(), json!(s("namespace")));
    }
    for c in opts
        .get("components")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        push(&mut k.k, "components", c.clone());
    }
    for p in opts
        .get("patches")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        push(&mut k.k, "patches", p.clone());
    }
    Ok(())
}

/// What Argo CD passes to `kustomize build` for `helmCharts` (AC
/// `util/kustomize/kustomize.go` `parseKustomizeBuildOptions`,
/// `isHelmEnabled`): `--enable-helm` when `kustomize.buildOptions` contains
/// it, and then the source's kube version and API versions (AC
/// `GetKubeVersionOrDefault`, `GetAPIVersionsOrDefault`: `helm.*`, else
/// `kustomize.*`). Argo CD's default for both is the destination
/// cluster's, which is not known offline: helm's own default stands then.
#[must_use]
pub(crate) fn helm_flags(spec: &SourceSpec) -> super::helm_charts::HelmFlags {
    let enabled = spec.kustomize_build_options.contains("--enable-helm");
    let field = |key: &str| -> Option<&Value> {
        [spec.helm.as_ref(), spec.kustomize.as_ref()]
            .into_iter()
            .flatten()
            .filter_map(|s| s.get(key))
            .find(|v| match v {
                Value::String(s) => !s.is_empty(),
                Value::Array(a) => !a.is_empty(),
                _ => false,
            })
    };
    super::helm_charts::HelmFlags {
        enabled,
        kube_version: enabled
            .then(|| {
                field("kubeVersion")
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .flatten(),
        api_versions: if enabled {
            crate::manifest::strings(field("apiVersions"))
        } else {
            Vec::new()
        },
    }
}
