//! `replacements`: copying a field of one resource into fields of others
//! (Kustomize's replacement filter), with `select`/`reject`, dotted field
//! paths with `[key=value]` element selectors and `*`, delimiter options and
//! field creation.

use serde_json::{Map, Value};

use super::build::Acc;
use super::load::Kustomization;
use super::resource::{Gvk, Res, ResId};
use super::smp::scalar_text;
use super::{content, KResult};
use crate::render::RenderContext;

/// Kustomize's `SmarterPathSplitter(path, ".")`.
#[must_use]
pub(crate) fn split_path(path: &str) -> Vec<String> {
    // kyaml `PathSplitter`: a leading `.` is ignored and `\.` escapes a dot.
    let mut raw: Vec<&str> = path.split('.').collect();
    if raw.len() > 1 && raw[0].is_empty() {
        raw.remove(0);
    }
    let mut joined: Vec<String> = Vec::new();
    for p in raw {
        match joined.last_mut() {
            Some(last) if last.ends_with('\\') => {
                last.pop();
                last.push('.');
                last.push_str(p);
            }
            _ => joined.push(p.to_string()),
        }
    }
    let split: Vec<&str> = joined.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < split.len() {
        let e = split[i];
        if e.starts_with('[') && !e.ends_with(']') {
            let mut parts = vec![e];
            while i < split.len() - 1 {
                i += 1;
                parts.push(split[i]);
                if split[i].ends_with(']') {
                    break;
                }
            }
            let joined = parts.join(".");
            if joined.contains('=') {
                out.push(joined);
            } else {
                out.push(joined.trim_matches(|c| c == '[' || c == ']').to_string());
            }
        } else {
            out.push(e.to_string());
        }
        i += 1;
    }
    out
}

/// kyaml `Lookup` (PathGetter) without creation.
#[must_use]
pub(crate) fn lookup<'a>(v: &'a Value, parts: &[String]) -> Option<&'a Value> {
    let mut cur = v;
    for p in parts {
        cur = match cur {
            Value::Object(m) => m.get(p)?,
            Value::Array(a) => {
                if let Some(inner) = p.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
                    let (k, val) = inner.split_once('=')?;
                    if k.is_empty() {
                        a.iter().find(|e| !e.is_object() && scalar_text(e) == val)?
                    } else {
                        a.iter()
                            .find(|e| e.get(k).is_some_and(|x| scalar_text(x) == val))?
                    }
                } else if let Ok(i) = p.parse::<usize>() {
                    a.get(i)?
                } else {
                    return None;
                }
            }
            _ => return None,
        };
    }
    Some(cur)
}

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

#[derive(Clone, Copy, PartialEq, Eq)]
enum Create {
    No,
    Scalar,
    Map,
    Seq,
}

fn new_node(next: Option<&String>, create: Create) -> Value {
    match next {
        Some(n) if (n.starts_with('[') && n.ends_with(']')) || n.parse::<usize>().is_ok() => {
            Value::Array(Vec::new())
        }
        Some(_) => Value::Object(Map::new()),
        None => match create {
            Create::Map => Value::Object(Map::new()),
            Create::Seq => Value::Array(Vec::new()),
            _ => Value::Null,
        },
    }
}

fn esc(s: &str) -> String {
    s.replace('~', "~0").replace('/', "~1")
}

/// kyaml `PathMatcher`: JSON pointers of every node `parts` reaches,
/// creating missing ones when asked. Created leaves are recorded.
fn matches(
    node: &mut Value,
    parts: &[String],
    create: Create,
    ptr: &str,
    out: &mut Vec<String>,
    created: &mut Vec<String>,
) -> KResult<()> {
    let Some((head, rest)) = parts.split_first() else {
        out.push(ptr.to_string());
        return Ok(());
    };
    if let Ok(idx) = head.parse::<usize>() {
        let Value::Array(a) = node else {
            return Err(content(format!("expected a list at `{head}`")));
        };
        if a.len() == idx && create != Create::No {
            a.push(new_node(rest.first(), create));
            if rest.is_empty() {
                created.push(format!("{ptr}/{idx}"));
            }
        }
        if a.len() < idx + 1 {
            return Err(content(format!(
                "index {idx} specified but only {} elements found",
                a.len()
            )));
        }
        return matches(
            &mut a[idx],
            rest,
            create,
            &format!("{ptr}/{idx}"),
            out,
            created,
        );
    }
    if head.starts_with('[') && head.ends_with(']') {
        let inner = &head[1..head.len() - 1];
        let Some((field, pat)) = inner.split_once('=') else {
            return Err(content(
                "list path element must contain fieldName=fieldValue for element to match",
            ));
        };
        let re = regex::Regex::new(pat)
            .map_err(|e| content(format!("invalid list selector `{head}`: {e}")))?;
        let Value::Array(a) = node else {
            if node.is_null() {
                return Ok(());
            }
            return Err(content(format!("expected a list at `{head}`")));
        };
        let before = out.len();
        let mut hit = false;
        for (i, e) in a.iter_mut().enumerate() {
            let text = if field.is_empty() {
                if e.is_object() || e.is_array() {
                    continue;
                }
                scalar_text(e)
            } else {
                match e.get(field) {
                    Some(x) if !x.is_null() => scalar_text(x),
                    _ => continue,
                }
            };
            if re.is_match(text.trim()) {
                hit = true;
                matches(e, rest, create, &format!("{ptr}/{i}"), out, created)?;
            }
        }
        if (out.len() > before && hit) || create == Create::No {
            return Ok(());
        }
        let elem = if field.is_empty() {
            Value::String(pat.to_string())
        } else {
            let mut m = Map::new();
            m.insert(field.to_string(), Value::String(pat.to_string()));
            Value::Object(m)
        };
        a.push(elem);
        let i = a.len() - 1;
        return matches(&mut a[i], rest, create, &format!("{ptr}/{i}"), out, created);
    }
    if head == "*" {
        let Value::Array(a) = node else {
            return Err(content("wildcard `*` needs a list"));
        };
        for (i, e) in a.iter_mut().enumerate() {
            matches(e, rest, create, &format!("{ptr}/{i}"), out, created)?;
        }
        return Ok(());
    }
    if node.is_null() && create != Create::No {
        *node = Value::Object(Map::new());
    }
    let Value::Object(m) = node else {
        if node.is_null() {
            return Ok(());
        }
        return Err(content(format!("expected a map at `{head}`")));
    };
    if !m.contains_key(head.as_str()) {
        if create == Create::No {
            return Ok(());
        }
        m.insert(head.clone(), new_node(rest.first(), create));
        if rest.is_empty() {
            created.push(format!("{ptr}/{}", esc(head)));
        }
    }
    let Some(child) = m.get_mut(head.as_str()) else {
        return Ok(());
    };
    matches(
        child,
        rest,
        create,
        &format!("{ptr}/{}", esc(head)),
        out,
        created,
    )
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
        let v = lookup(&res[si].v, &split_path(fp)).cloned();
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
                    Value::Object(_) => Create::Map,
                    Value::Array(_) => Create::Seq,
                    _ => Create::Scalar,
                }
            } else {
                Create::No
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
                    matches(
                        &mut x.v,
                        &split_path(fp),
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
                        let what = if create == Create::No {
                            "find"
                        } else {
                            "find or create"
                        };
                        return Err(content(format!(
                            "unable to {what} field `{fp}` in replacement target {}",
                            x.cur_id().display()
                        )));
                    }
                    let cost = super::nodes(&value, super::MAX_PATCH_NODES);
                    for p in ptrs {
                        let was_created = created.contains(&p);
                        if let Some(node) = x.v.pointer_mut(&p) {
                            super::charge_nodes(cx, cost)?;
                            set_value(node, &value, was_created, opts)?;
                        }
                    }
                    super::check_resource_size(cx, &x.v, "a replacement")?;
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
            match docs.into_iter().map(|d| d.value).find(|v| !v.is_null()) {
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
