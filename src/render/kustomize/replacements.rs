//! `replacements`: copying a field of one resource into fields of others
//! (Kustomize's replacement filter), with `select`/`reject`, dotted field
//! paths with `[key=value]` element selectors and `*`, delimiter options and
//! field creation.

use serde_json::Value;

use super::accumulator::Acc;
use super::fieldpath::{lookup, match_nodes, split_dot_path, MatchCreate};
use super::load::Kustomization;
use super::resource::{Gvk, Res, ResId};
use super::smp::scalar_text;
use super::{content, KResult};
use crate::render::RenderContext;

fn id_selector(v: &Value) -> ResId {
    let s = |f: &str| v.get(f).map(scalar_text).unwrap_or_default();
    ResId {
        gvk: Gvk {
            group: s("group"),
            version: s("version"),
            kind: s("kind"),
        },
        name: s("name"),
        namespace: s("namespace"),
    }
}

fn selected_by(id: &ResId, sel: &ResId) -> bool {
    (sel.name.is_empty() || sel.name == id.name)
        && (sel.namespace.is_empty() || sel.effective_ns() == id.effective_ns())
        && id.gvk.selected_by(&sel.gvk)
}

fn label_anno_match(r: &Res, sel: &Value) -> KResult<bool> {
    let mut s = serde_json::Map::new();
    for f in ["labelSelector", "annotationSelector"] {
        if let Some(v) = sel.get(f) {
            s.insert(f.to_string(), v.clone());
        }
    }
    Ok(super::selector::Selector::new(&Value::Object(s))?.matches(r))
}

/// Plain-scalar resolution (YAML 1.2 core, as go-yaml v3 emits untagged text).
fn implicit(text: &str) -> Value {
    match text {
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        _ => {}
    }
    if let Ok(i) = text.parse::<i64>() {
        return Value::from(i);
    }
    if text.chars().any(|c| c.is_ascii_digit()) && !text.contains(char::is_alphabetic)
        || text.contains(['e', 'E'])
    {
        if let Ok(f) = text.parse::<f64>() {
            if f.is_finite()
                && text
                    .chars()
                    .all(|c| c.is_ascii_digit() || "+-.eE".contains(c))
            {
                if let Some(n) = serde_json::Number::from_f64(f) {
                    return Value::Number(n);
                }
            }
        }
    }
    Value::String(text.to_string())
}

fn set_value(
    target: &mut Value,
    value: &Value,
    created: bool,
    opts: Option<&Value>,
) -> KResult<()> {
    let mut value = value.clone();
    if let Some(d) = opts
        .and_then(|o| o.get("delimiter"))
        .and_then(Value::as_str)
        .filter(|d| !d.is_empty())
    {
        if target.is_object() || target.is_array() {
            return Err(content(
                "delimiter option can only be used with scalar nodes",
            ));
        }
        let cur = scalar_text(target);
        let mut tv: Vec<String> = cur.split(d).map(str::to_string).collect();
        let v = scalar_text(&value);
        let idx = opts
            .and_then(|o| o.get("index"))
            .and_then(Value::as_i64)
            .unwrap_or(0);
        if idx < 0 {
            tv.insert(0, v);
        } else if usize::try_from(idx).is_ok_and(|i| i >= tv.len()) {
            tv.push(v);
        } else {
            tv[usize::try_from(idx).unwrap_or(0)] = v;
        }
        value = Value::String(tv.join(d));
    }
    let value_scalar = !value.is_object() && !value.is_array();
    if target.is_object() || target.is_array() || (created && !value_scalar) {
        *target = value;
    } else {
        // kyaml keeps the target's tag and swaps only the text.
        let text = if value_scalar {
            scalar_text(&value)
        } else {
            String::new()
        };
        *target = if target.is_string() && !created {
            Value::String(text)
        } else {
            implicit(&text)
        };
    }
    Ok(())
}

/// Runs a list of replacements over the accumulated resources.
///
/// # Errors
/// Missing or ambiguous sources, missing target fields, bad options.
/// Each value set is charged to the render's patch budget, and a target
/// resource grown past the per-resource limit stops the build: a
/// replacement copying a resource's `spec` into itself, forty times over,
/// would otherwise double it forty times.
pub(crate) fn apply(cx: &RenderContext<'_>, list: &[Value], res: &mut [Res]) -> KResult<()> {
    for r in list {
        let (Some(src), Some(targets)) =
            (r.get("source"), r.get("targets").and_then(Value::as_array))
        else {
            return Err(content(
                "replacements must specify a source and at least one target",
            ));
        };
        let sel = id_selector(src);
        let mut found: Option<usize> = None;
        for (i, x) in res.iter().enumerate() {
            if x.all_ids().iter().any(|id| selected_by(id, &sel)) {
                if found.is_some() {
                    return Err(content(format!(
                        "replacements: multiple matches for source selector {}",
                        sel.display()
                    )));
                }
                found = Some(i);
            }
        }
        let Some(si) = found else {
            return Err(content(format!(
                "replacements: nothing selected by source {}",
                sel.display()
            )));
        };
        let fp = src
            .get("fieldPath")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or("metadata.name");
        let v = lookup(&res[si].v, &split_dot_path(fp)).cloned();
        let empty = match &v {
            None | Some(Value::Null) => true,
            Some(Value::String(s)) => s.is_empty(),
            Some(Value::Object(m)) => m.is_empty(),
            Some(Value::Array(a)) => a.is_empty(),
            _ => false,
        };
        if empty {
            return Err(content(format!(
                "fieldPath `{fp}` is missing for replacement source {}",
                sel.display()
            )));
        }
        let mut value = v.unwrap_or(Value::Null);
        if let Some(opts) = src.get("options") {
            if let Some(d) = opts
                .get("delimiter")
                .and_then(Value::as_str)
                .filter(|d| !d.is_empty())
            {
                if value.is_object() || value.is_array() {
                    return Err(content(
                        "delimiter option can only be used with scalar nodes",
                    ));
                }
                let text = scalar_text(&value);
                let parts: Vec<&str> = text.split(d).collect();
                let idx = opts.get("index").and_then(Value::as_i64).unwrap_or(0);
                let Some(p) = usize::try_from(idx).ok().and_then(|i| parts.get(i)) else {
                    return Err(content(format!(
                        "options.index {idx} is out of bounds for value {text}"
                    )));
                };
                value = match value {
                    Value::String(_) => Value::String((*p).to_string()),
                    _ => implicit(p),
                };
            }
        }
        for t in targets {
            let Some(select) = t.get("select") else {
                return Err(content("target must specify resources to select"));
            };
            let paths: Vec<String> = match t.get("fieldPaths").and_then(Value::as_array) {
                Some(a) if !a.is_empty() => a.iter().map(scalar_text).collect(),
                _ => vec!["metadata.name".to_string()],
            };
            let rejects: Vec<Value> = t
                .get("reject")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            let sel = id_selector(select);
            let opts = t.get("options");
            let create = if opts
                .and_then(|o| o.get("create"))
                .and_then(Value::as_bool)
                .unwrap_or(false)
            {
                match &value {
                    Value::Object(_) => MatchCreate::Map,
                    Value::Array(_) => MatchCreate::Seq,
                    _ => MatchCreate::Scalar,
                }
            } else {
                MatchCreate::No
            };
            for x in res.iter_mut() {
                if !label_anno_match(x, select)? {
                    continue;
                }
                let mut rejected = false;
                for rj in &rejects {
                    let has_sel = ["labelSelector", "annotationSelector"].iter().any(|f| {
                        rj.get(*f)
                            .and_then(Value::as_str)
                            .is_some_and(|s| !s.is_empty())
                    });
                    if has_sel && label_anno_match(x, rj)? {
                        rejected = true;
                    }
                }
                if rejected {
                    continue;
                }
                let ids = x.all_ids();
                let reject_id = rejects.iter().any(|rj| {
                    let rid = id_selector(rj);
                    let empty = rid.name.is_empty()
                        && rid.namespace.is_empty()
                        && rid.gvk == Gvk::default();
                    !empty && ids.iter().any(|id| selected_by(id, &rid))
                });
                if !ids.iter().any(|id| selected_by(id, &sel)) || reject_id {
                    continue;
                }
                for fp in &paths {
                    let mut ptrs = Vec::new();
                    let mut created = Vec::new();
                    match_nodes(
                        &mut x.v,
                        &split_dot_path(fp),
                        create,
                        "",
                        &mut ptrs,
                        &mut created,
                    )
                    .map_err(|e| {
                        content(format!(
                            "unable to find field `{fp}` in replacement target {}: {}",
                            x.cur_id().display(),
                            e.message
                        ))
                    })?;
                    if ptrs.is_empty() {
                        let what = if create == MatchCreate::No {
                            "find"
                        } else {
                            "find or create"
                        };
                        return Err(content(format!(
                            "unable to {what} field `{fp}` in replacement target {}",
                            x.cur_id().display()
                        )));
                    }
                    // What the resource can grow to is checked before any
                    // field is set: at most its size now plus the value once
                    // per field (a replaced field only shrinks that).
                    let cost = super::nodes(&value, super::MAX_PATCH_NODES);
                    let grown = super::nodes(&x.v, super::MAX_RESOURCE_NODES)
                        .saturating_add(cost.saturating_mul(ptrs.len()));
                    super::check_grown_size(cx, grown, "a replacement")?;
                    for p in ptrs {
                        let was_created = created.contains(&p);
                        if let Some(node) = x.v.pointer_mut(&p) {
                            super::charge_nodes(cx, cost)?;
                            set_value(node, &value, was_created, opts)?;
                        }
                    }
                }
            }
        }
    }
    Ok(())
}

/// Expands `path:` entries and runs the list.
///
/// # Errors
/// See [`apply`]; unreadable replacement files.
pub(crate) fn run(
    cx: &RenderContext<'_>,
    k: &Kustomization,
    list: &[Value],
    acc: &mut Acc,
) -> KResult<()> {
    let mut all = Vec::new();
    for r in list {
        if let Some(p) = r
            .get("path")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            if r.get("source").is_some() || r.get("targets").is_some() {
                return Err(k.err("cannot specify both path and inline replacement"));
            }
            let file = k.restricted(cx, p)?;
            let docs = cx.load_yaml(&file)?;
            match docs
                .into_iter()
                .map(goyaml::Doc::into_value)
                .find(|v| !v.is_null())
            {
                Some(Value::Array(items)) => all.extend(items),
                Some(m @ Value::Object(_)) => all.push(m),
                _ => return Err(k.err(format!("unsupported replacement type in `{p}`"))),
            }
        } else {
            all.push(r.clone());
        }
    }
    apply(cx, &all, &mut acc.res).map_err(|e| k.err(e.message))
}

/// The kustomization's `replacements:` field.
///
/// # Errors
/// See [`run`].
pub(crate) fn run_field(cx: &RenderContext<'_>, k: &Kustomization, acc: &mut Acc) -> KResult<()> {
    let list = k.list("replacements").to_vec();
    if list.is_empty() {
        return Ok(());
    }
    run(cx, k, &list, acc)
}
