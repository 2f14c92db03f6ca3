//! `patches`, `patchesStrategicMerge` and `patchesJson6902`: loading patch
//! text (inline or from a file under the load restrictor), telling
//! strategic-merge from JSON 6902 the way Kustomize does, choosing targets
//! and applying them.

use goyaml::json::Pointer as _;
use serde_json::Value;

use super::accumulator::Acc;
use super::load::Kustomization;
use super::resource::{Res, ResId};
use super::selector::Selector;
use super::{
    charge_nodes, check_grown_size, content, nodes, smp, KResult, MAX_PATCH_NODES,
    MAX_RESOURCE_NODES,
};
use crate::render::RenderContext;

/// A parsed patch body.
enum Body {
    Smp(Vec<Value>),
    Json(Value),
}

fn parse_body(text: &str, source: &str, file: &str) -> KResult<Body> {
    let docs = goyaml::load_all(text).map_err(|e| {
        content(format!("`{file}`: patch {source} is not valid YAML: {e}")).at(file, None)
    })?;
    let vals: Vec<Value> = docs
        .into_iter()
        .map(goyaml::Doc::into_value)
        .filter(|v| !v.is_null())
        .collect();
    if vals.is_empty() {
        return Err(content(format!(
            "`{file}`: patch {source} illegally qualifies as both an SM and JSON patch"
        ))
        .at(file, None));
    }
    if vals.len() == 1 && vals[0].is_array() {
        return Ok(Body::Json(vals[0].clone()));
    }
    if vals.iter().all(Value::is_object) {
        let mut out = Vec::new();
        for v in vals {
            let is_list = v
                .get("kind")
                .and_then(Value::as_str)
                .is_some_and(|k| k.ends_with("List"))
                && v.get("items").is_some();
            if is_list {
                out.extend(
                    v.get("items")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                );
            } else {
                out.push(v);
            }
        }
        return Ok(Body::Smp(out));
    }
    Err(content(format!(
        "`{file}`: unable to parse SM or JSON patch from {source}"
    ))
    .at(file, None))
}

fn patch_id(p: &Value) -> ResId {
    let r = Res::new(p.clone(), crate::manifest::Origin::default());
    r.cur_id()
}

/// Applies one strategic-merge patch to `res[i]` (Kustomize's
/// `Resource.ApplySmPatch`); returns false when the patch deleted it.
fn apply_smp(
    r: &mut Res,
    patch: &Value,
    allow_name: bool,
    allow_kind: bool,
    set_gvk: bool,
) -> KResult<bool> {
    let (n, ns, k) = (
        r.name().to_string(),
        r.namespace().to_string(),
        r.kind().to_string(),
    );
    if allow_name || allow_kind {
        r.store_prev_id();
    }
    let mut p = patch.clone();
    if set_gvk {
        if let (Some(m), Some(av)) = (p.as_object_mut(), r.v.get("apiVersion").cloned()) {
            m.insert("apiVersion".into(), av);
        }
    }
    match smp::merge(r.v.clone(), p, &r.explicit_nulls)? {
        None => Ok(false),
        Some(v) => {
            r.v = v;
            if r.v.as_object().is_some_and(serde_json::Map::is_empty) {
                return Ok(false);
            }
            if !allow_kind {
                if let Some(m) = r.v.as_object_mut() {
                    m.insert("kind".into(), Value::String(k));
                }
            }
            if !allow_name {
                r.set_name(&n);
            }
            r.set_namespace(&ns);
            Ok(true)
        }
    }
}

/// Applies JSON 6902 operations one by one. Like evanphx/json-patch v4 (which
/// Kustomize uses), `replace` of a missing map key adds it. Each operation is
/// charged what it can add: its value, or for `copy` the resource's size
/// with the copied subtree, which is held to the per-resource limit before
/// anything is copied (a chain of copies doubling a document stops before
/// the doubling that would pass the limit, not after it).
fn apply_json(cx: &RenderContext<'_>, r: &mut Res, ops: &Value, source: &str) -> KResult<()> {
    let Some(list) = ops.as_array() else {
        return Err(content(format!(
            "patch {source}: a JSON 6902 patch must be a list of operations"
        )));
    };
    // Kustomize keeps its build annotations (previous names, prefixes) in
    // `metadata.annotations`, so a patch adding an annotation finds the map.
    let had_map = r.v.at("/metadata/annotations").is_some();
    let has_build =
        !r.prev.is_empty() || !r.prefixes.is_empty() || !r.suffixes.is_empty() || r.needs_hash;
    if has_build && !had_map {
        if let Some(meta) = r.v.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("annotations".into(), Value::Object(serde_json::Map::new()));
        }
    }
    for op in list {
        let mut op = op.clone();
        if op.get("op").and_then(Value::as_str) == Some("replace") {
            let path = op
                .get("path")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            if let Some((parent, _)) = path.rsplit_once('/') {
                let missing =
                    r.v.at(parent).is_some_and(Value::is_object) && r.v.at(&path).is_none();
                if missing {
                    op["op"] = Value::String("add".into());
                }
            }
        }
        if op.get("op").and_then(Value::as_str) == Some("copy") {
            let from = op.get("from").and_then(Value::as_str).unwrap_or("");
            if let Some(copied) = r.v.at(from) {
                let grown = nodes(copied, MAX_RESOURCE_NODES)
                    .saturating_add(nodes(&r.v, MAX_RESOURCE_NODES));
                check_grown_size(cx, grown, &format!("patch {source}"))?;
            }
        }
        charge_nodes(cx, op.get("value").map_or(1, |v| nodes(v, MAX_PATCH_NODES)))?;
        let patch: json_patch::Patch = serde_json::from_value(Value::Array(vec![op]))
            .map_err(|e| content(format!("patch {source}: invalid JSON 6902 patch: {e}")))?;
        json_patch::patch(&mut r.v, &patch)
            .map_err(|e| content(format!("patch {source} on {}: {e}", r.cur_id().display())))?;
    }
    Ok(())
}

/// Finds resources by id without scanning every resource per patch: a
/// thousand patches over thousands of resources stay linear. Candidates
/// share a name; [`ResId::same`] decides.
struct IdIndex {
    by_name: std::collections::HashMap<String, Vec<usize>>,
}

impl IdIndex {
    fn new(res: &[Res]) -> IdIndex {
        let mut by_name: std::collections::HashMap<String, Vec<usize>> =
            std::collections::HashMap::new();
        for (i, r) in res.iter().enumerate() {
            for id in r.all_ids() {
                let slot = by_name.entry(id.name).or_default();
                if slot.last() != Some(&i) {
                    slot.push(i);
                }
            }
        }
        IdIndex { by_name }
    }

    /// Live resources matching any id of theirs to `id`, in order.
    fn matching(&self, res: &[Res], gone: &[bool], id: &ResId) -> Vec<usize> {
        self.by_name.get(&id.name).map_or_else(Vec::new, |c| {
            c.iter()
                .copied()
                .filter(|i| !gone[*i] && res[*i].all_ids().iter().any(|x| x.same(id)))
                .collect()
        })
    }

    /// Records a resource's ids after a patch may have renamed it.
    fn update(&mut self, i: usize, r: &Res) {
        for id in r.all_ids() {
            let slot = self.by_name.entry(id.name).or_default();
            if !slot.contains(&i) {
                slot.push(i);
                slot.sort_unstable();
            }
        }
    }
}

/// Applies strategic-merge patches, each to the one resource it names, as
/// `patchesStrategicMerge` and untargeted `patches` entries do. Deleted
/// resources are removed at the end, so the index stays valid.
fn apply_smp_by_id(
    cx: &RenderContext<'_>,
    k: &Kustomization,
    acc: &mut Acc,
    patches: &[Value],
    allow: (bool, bool),
    set_gvk: bool,
    messages: (&str, &str),
) -> KResult<()> {
    let mut index = IdIndex::new(&acc.res);
    let mut gone = vec![false; acc.res.len()];
    for p in patches {
        let id = patch_id(p);
        let hits = index.matching(&acc.res, &gone, &id);
        match hits.as_slice() {
            [i] => {
                charge_nodes(cx, nodes(p, MAX_PATCH_NODES))?;
                if apply_smp(&mut acc.res[*i], p, allow.0, allow.1, set_gvk)? {
                    index.update(*i, &acc.res[*i]);
                } else {
                    gone[*i] = true;
                }
            }
            [] => {
                return Err(k.err(messages.0.replace("{}", &id.display())));
            }
            _ => return Err(k.err(messages.1.replace("{}", &id.display()))),
        }
    }
    let mut i = 0;
    acc.res.retain(|_| {
        i += 1;
        !gone[i - 1]
    });
    Ok(())
}

/// One `patches:` entry (or a builtin `PatchTransformer` config).
///
/// # Errors
/// Missing or ambiguous patch sources, unparseable patches, missing targets.
pub(crate) fn patch_entry(
    cx: &RenderContext<'_>,
    k: &Kustomization,
    entry: &Value,
    acc: &mut Acc,
) -> KResult<()> {
    let path = entry.get("path").and_then(Value::as_str).unwrap_or("");
    let inline = entry
        .get("patch")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim()
        .to_string();
    let (text, source) = match (path.is_empty(), inline.is_empty()) {
        (true, true) => return Err(k.err("a patch must specify one of `patch` and `path`")),
        (false, false) => return Err(k.err("a patch can't set both `patch` and `path`")),
        (false, true) => {
            let (_, bytes) = k.read(cx, path)?;
            let t = String::from_utf8(bytes.to_vec())
                .map_err(|_| k.err(format!("patch `{path}` is not valid UTF-8")))?;
            (t, format!("`{path}`"))
        }
        (true, false) => (inline, "(inline)".to_string()),
    };
    let opt = |f: &str| {
        entry
            .at(&format!("/options/{f}"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    let (allow_name, allow_kind) = (opt("allowNameChange"), opt("allowKindChange"));
    let target = entry.get("target").filter(|t| !t.is_null());
    match parse_body(&text, &source, &k.file)? {
        Body::Smp(patches) => {
            if let Some(t) = target {
                if patches.len() > 1 {
                    return Err(k.err(format!(
                        "multiple strategic-merge patches in one `patches` entry cannot have a `target` ({source})"
                    )));
                }
                let sel = Selector::new(t)?;
                // The selected resources, patched in place: each is patched
                // once, so the order is immaterial, and deletions are
                // removed afterwards (no search per target, no shifting).
                let targets = sel.select(&acc.res);
                let mut gone = vec![false; acc.res.len()];
                for p in &patches {
                    let mut p = p.clone();
                    if let (Some(m), Some(kind)) =
                        (p.as_object_mut(), patches[0].get("kind").cloned())
                    {
                        m.insert("kind".into(), kind);
                    }
                    let cost = nodes(&p, MAX_PATCH_NODES);
                    for &i in &targets {
                        if gone[i] {
                            continue;
                        }
                        charge_nodes(cx, cost)?;
                        if !apply_smp(&mut acc.res[i], &p, allow_name, allow_kind, true)? {
                            gone[i] = true;
                        }
                    }
                }
                let mut i = 0;
                acc.res.retain(|_| {
                    i += 1;
                    !gone[i - 1]
                });
            } else {
                let missing = format!("no resource matches strategic merge patch {{}} ({source})");
                apply_smp_by_id(
                    cx,
                    k,
                    acc,
                    &patches,
                    (allow_name, allow_kind),
                    false,
                    (
                        &missing,
                        "multiple resources match strategic merge patch {}",
                    ),
                )?;
            }
        }
        Body::Json(ops) => {
            let Some(t) = target else {
                return Err(k.err(format!("must specify a target for JSON patch {source}")));
            };
            let sel = Selector::new(t)?;
            for i in sel.select(&acc.res) {
                acc.res[i].store_prev_id();
                apply_json(cx, &mut acc.res[i], &ops, &source)?;
            }
        }
    }
    Ok(())
}

/// The legacy `patchesStrategicMerge` list (paths or inline YAML).
///
/// # Errors
/// Unreadable patches and patches without a unique target.
pub(crate) fn patches_strategic_merge(
    cx: &RenderContext<'_>,
    k: &Kustomization,
    acc: &mut Acc,
) -> KResult<()> {
    let mut patches: Vec<Value> = Vec::new();
    for e in k.list("patchesStrategicMerge").to_vec() {
        let s = e.as_str().unwrap_or("");
        let inline = goyaml::load_all(s).ok().filter(|d| {
            let non_null: Vec<&goyaml::Doc> = d.iter().filter(|x| !x.value.is_null()).collect();
            !non_null.is_empty() && non_null.iter().all(|x| x.value.is_object())
        });
        let docs = match inline {
            Some(d) => d,
            None => {
                let p = k.restricted(cx, s)?;
                cx.load_yaml(&p)?
            }
        };
        for r in super::load::resources_from_docs(&docs, None, None)? {
            patches.push(r.v);
        }
    }
    apply_smp_by_id(
        cx,
        k,
        acc,
        &patches,
        (false, false),
        true,
        (
            "no matches for Id {}; failed to find unique target for patch",
            "multiple matches for Id {}",
        ),
    )
}

/// The legacy `patchesJson6902` list.
///
/// # Errors
/// Unreadable or empty patches, invalid operations.
pub(crate) fn patches_json6902(
    cx: &RenderContext<'_>,
    k: &Kustomization,
    acc: &mut Acc,
) -> KResult<()> {
    for e in k.list("patchesJson6902").to_vec() {
        let target = e.get("target").cloned().unwrap_or(Value::Null);
        if target
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .is_empty()
        {
            return Err(k.err("patchesJson6902: must specify the target name"));
        }
        let path = e.get("path").and_then(Value::as_str).unwrap_or("");
        let inline = e.get("patch").and_then(Value::as_str).unwrap_or("");
        let text = match (path.is_empty(), inline.is_empty()) {
            (true, true) => return Err(k.err("patchesJson6902: empty file path and empty jsonOp")),
            (false, false) => {
                return Err(k.err("patchesJson6902: must specify a file path or jsonOp, not both"))
            }
            (false, true) => {
                let (_, bytes) = k.read(cx, path)?;
                String::from_utf8(bytes.to_vec())
                    .map_err(|_| k.err(format!("patch `{path}` is not valid UTF-8")))?
            }
            (true, false) => inline.to_string(),
        };
        let ops = if text.starts_with('[') {
            serde_json::from_str::<Value>(&text)
                .map_err(|e| k.err(format!("decoding JSON patch: {e}")))?
        } else {
            let docs =
                goyaml::load_all(&text).map_err(|e| k.err(format!("decoding JSON patch: {e}")))?;
            docs.into_iter()
                .map(goyaml::Doc::into_value)
                .find(|v| !v.is_null())
                .unwrap_or(Value::Null)
        };
        if ops.as_array().is_none_or(Vec::is_empty) {
            return Err(k.err(format!("patch appears to be empty; file={path}")));
        }
        let sel = Selector::new(&target)?;
        for i in sel.select(&acc.res) {
            apply_json(cx, &mut acc.res[i], &ops, &format!("`{path}`"))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A `copy` that would take the resource past the per-resource limit is
    /// refused before the copy is made: the resource keeps its size, so the
    /// largest document held is under the limit, never twice it.
    #[test]
    fn a_copy_past_the_resource_limit_is_refused_before_it_is_made() {
        let tree = crate::source::MemTree::new(&[]);
        let cache = crate::render::ParseCache::default();
        let options = crate::render::RenderOptions::default();
        let cx = RenderContext::new(&tree, &cache, &options);
        let data: serde_json::Map<String, Value> = (0..MAX_RESOURCE_NODES / 2 + 10)
            .map(|i| (format!("k{i}"), Value::String("v".into())))
            .collect();
        let mut r = Res::new(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": data}),
            crate::manifest::Origin::default(),
        );
        let before = nodes(&r.v, usize::MAX);
        let ops = json!([{"op": "copy", "from": "/data", "path": "/metadata/copy"}]);
        let err = apply_json(&cx, &mut r, &ops, "p.yaml").expect_err("refused");
        assert!(
            err.message.contains("grows a resource past"),
            "{}",
            err.message
        );
        assert_eq!(
            nodes(&r.v, usize::MAX),
            before,
            "the resource was not grown"
        );

        let mut small = Res::new(
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}, "data": {"k": "v"}}),
            crate::manifest::Origin::default(),
        );
        apply_json(&cx, &mut small, &ops, "p.yaml").expect("a small copy applies");
        assert_eq!(small.v["metadata"]["copy"], json!({"k": "v"}));
    }
}
