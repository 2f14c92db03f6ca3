//! Field paths, parsed and walked: the `/`-separated paths of field specs
//! (`spec/template/metadata/labels`, `containers[]`, `\/` escapes) and the
//! dotted kyaml paths of `replacements` and `vars`
//! (`spec.containers.[name=app].image`, `containers[0]`).

use serde_json::{Map, Value};

use super::fieldspec::FieldSpec;
use super::smp::scalar_text;
use super::{content, KResult};
use crate::manifest::pointer_token;

/// Splits a field-spec path on `/`, honouring `\/` escapes.
#[must_use]
pub(crate) fn split_spec_path(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek() == Some(&'/') {
            cur.push('/');
            chars.next();
        } else if c == '/' {
            out.push(std::mem::take(&mut cur));
        } else {
            cur.push(c);
        }
    }
    out.push(cur);
    out.retain(|s| !s.is_empty());
    out
}

/// What to create at the end of a path when a field spec allows creation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CreateKind {
    /// Never create.
    None,
    /// Create a map.
    Map,
    /// Create a scalar (empty string) for the setter to fill.
    Scalar,
}

/// Applies `f` to every node `fs.path` reaches in `obj` (Kustomize's
/// `fieldspec.Filter`): lists on the way are entered element by element;
/// missing fields end the walk unless creation is allowed.
///
/// # Errors
/// A path running into a scalar, or an error from `f`.
pub(crate) fn apply(
    obj: &mut Value,
    fs: &FieldSpec,
    create: CreateKind,
    f: &mut dyn FnMut(&mut Value) -> KResult<()>,
) -> KResult<()> {
    if !fs.matches(obj) {
        return Ok(());
    }
    let path = split_spec_path(&fs.path);
    let create = if fs.create { create } else { CreateKind::None };
    walk(obj, &path, create, f).map_err(|mut e| {
        e.message = format!("considering field `{}`: {}", fs.path, e.message);
        e
    })
}

fn walk(
    node: &mut Value,
    path: &[String],
    create: CreateKind,
    f: &mut dyn FnMut(&mut Value) -> KResult<()>,
) -> KResult<()> {
    let Some((head, rest)) = path.split_first() else {
        return f(node);
    };
    match node {
        Value::Null => Ok(()),
        Value::Array(items) => {
            for it in items.iter_mut() {
                walk(it, path, create, f)?;
            }
            Ok(())
        }
        Value::Object(m) => {
            let (name, is_seq) = match head.strip_suffix("[]") {
                Some(n) => (n, true),
                None => (head.as_str(), false),
            };
            if name.is_empty() {
                return Err(content("cannot set or create an empty field name"));
            }
            let make = if is_seq || create == CreateKind::None {
                None
            } else if rest.is_empty() {
                Some(match create {
                    CreateKind::Map => Value::Object(Map::new()),
                    _ => Value::String(String::new()),
                })
            } else {
                Some(Value::Object(Map::new()))
            };
            if !m.contains_key(name) {
                match &make {
                    Some(v) => {
                        m.insert(name.to_string(), v.clone());
                    }
                    None => return Ok(()),
                }
            }
            let Some(child) = m.get_mut(name) else {
                return Ok(());
            };
            if child.is_null() {
                match make {
                    Some(v) => *child = v,
                    None => {
                        if rest.is_empty() {
                            return f(child);
                        }
                        return Ok(());
                    }
                }
            }
            walk(child, rest, create, f)
        }
        _ => Err(content("expected sequence or mapping node")),
    }
}

/// The scalar at the end of `fields` (split by [`split_spec_path`]) in
/// `obj`, creating maps on the way and an empty string at the end where
/// they are missing (the alpha `ValueAddTransformer`'s walk). `None` when
/// the path runs into something that is not a map, or ends on a map or a
/// list.
pub(crate) fn scalar_at<'a>(obj: &'a mut Value, fields: &[String]) -> Option<&'a mut Value> {
    let mut ptr = String::new();
    for (n, f) in fields.iter().enumerate() {
        let last = n + 1 == fields.len();
        let m = obj.pointer_mut(&ptr).and_then(Value::as_object_mut)?;
        m.entry(f.clone()).or_insert_with(|| {
            if last {
                Value::String(String::new())
            } else {
                Value::Object(Map::new())
            }
        });
        ptr.push('/');
        ptr.push_str(&pointer_token(f));
    }
    obj.pointer_mut(&ptr)
        .filter(|cur| !cur.is_object() && !cur.is_array())
}

/// Kustomize's `SmarterPathSplitter(path, ".")`.
#[must_use]
pub(crate) fn split_dot_path(path: &str) -> Vec<String> {
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

/// kyaml `Lookup` (`PathGetter`) without creation.
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

/// A var's `fieldref.fieldPath`: [`split_dot_path`], then `containers[0]`
/// read as `containers`, `0`.
#[must_use]
pub(crate) fn split_var_path(fp: &str) -> Vec<String> {
    split_dot_path(fp)
        .into_iter()
        .flat_map(|p| {
            // `containers[0]` is `containers`, `0`.
            match p.find('[') {
                Some(b) if b > 0 && p.ends_with(']') && !p.contains('=') => {
                    vec![p[..b].to_string(), p[b + 1..p.len() - 1].to_string()]
                }
                _ => vec![p],
            }
        })
        .collect()
}

/// What [`match_nodes`] creates where a path leads nowhere yet: nothing, or
/// a leaf of the kind of the value about to be set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MatchCreate {
    /// Create nothing.
    No,
    /// A scalar leaf.
    Scalar,
    /// A map leaf.
    Map,
    /// A list leaf.
    Seq,
}

fn new_node(next: Option<&String>, create: MatchCreate) -> Value {
    match next {
        Some(n) if (n.starts_with('[') && n.ends_with(']')) || n.parse::<usize>().is_ok() => {
            Value::Array(Vec::new())
        }
        Some(_) => Value::Object(Map::new()),
        None => match create {
            MatchCreate::Map => Value::Object(Map::new()),
            MatchCreate::Seq => Value::Array(Vec::new()),
            _ => Value::Null,
        },
    }
}

/// kyaml `PathMatcher`: JSON pointers of every node `parts` (a path split
/// by [`split_dot_path`]) reaches, creating missing ones when asked.
/// Created leaves are recorded.
///
/// # Errors
/// A path that runs into a node of the wrong kind, or a bad list selector.
pub(crate) fn match_nodes(
    node: &mut Value,
    parts: &[String],
    create: MatchCreate,
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
        if a.len() == idx && create != MatchCreate::No {
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
        return match_nodes(
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
                match_nodes(e, rest, create, &format!("{ptr}/{i}"), out, created)?;
            }
        }
        if (out.len() > before && hit) || create == MatchCreate::No {
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
        return match_nodes(&mut a[i], rest, create, &format!("{ptr}/{i}"), out, created);
    }
    if head == "*" {
        let Value::Array(a) = node else {
            return Err(content("wildcard `*` needs a list"));
        };
        for (i, e) in a.iter_mut().enumerate() {
            match_nodes(e, rest, create, &format!("{ptr}/{i}"), out, created)?;
        }
        return Ok(());
    }
    if node.is_null() && create != MatchCreate::No {
        *node = Value::Object(Map::new());
    }
    let Value::Object(m) = node else {
        if node.is_null() {
            return Ok(());
        }
        return Err(content(format!("expected a map at `{head}`")));
    };
    if !m.contains_key(head.as_str()) {
        if create == MatchCreate::No {
            return Ok(());
        }
        m.insert(head.clone(), new_node(rest.first(), create));
        if rest.is_empty() {
            created.push(format!("{ptr}/{}", pointer_token(head)));
        }
    }
    let Some(child) = m.get_mut(head.as_str()) else {
        return Ok(());
    };
    match_nodes(
        child,
        rest,
        create,
        &format!("{ptr}/{}", pointer_token(head)),
        out,
        created,
    )
}
