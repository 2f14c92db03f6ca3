//! Sprig's lists and dicts (`list.go`, `dict.go`), mergo's merge as
//! `merge`/`mergeOverwrite` use it, and the functions over any value
//! (`defaults.go`, `reflect.go`): `default`, `empty`, `coalesce`,
//! `ternary`, `deepCopy`, `typeOf`, `kindIs`... and Sprig's `fail`.

// Every function of the table has its signature (`R`), fallible or not.
#![allow(clippy::unnecessary_wraps)]

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::args::{
    arity, at_least, boolean, iface, int, is_empty, list_arg, map_arg, map_ref, none, s, strval,
    to_i64, R,
};
use crate::limits::BEYOND_LIMITS;
use crate::value::{SharedMap, V};

/// Which values of the source a merge writes over the destination's.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum MergeRule {
    /// `merge`: only where the destination's value is empty.
    Keep,
    /// Argo CD's `mergeOverwrite`: also where the source's value is not empty.
    OverwriteNonEmpty,
    /// Helm's `mergeOverwrite`: every value (mergo's `WithOverride`).
    Overwrite,
}

/// mergo's `deepMerge` of one `map[string]any` into another (`merge.go`,
/// the map case), in place, as Sprig's `merge` and `mergeOverwrite` call
/// it: where both hold a map under a key, the destination's map is merged
/// into in place (and so changes for every holder of it); where the
/// destination has no value, or ends with an empty map, it takes the
/// source's value itself, so a map taken from the source is shared with it.
/// `work` bounds the entries visited (a merge that makes a map contain
/// itself could otherwise recurse into it without end).
fn deep_merge(
    dst: &SharedMap,
    src: &SharedMap,
    rule: MergeRule,
    depth_left: usize,
    work: &mut usize,
) -> Result<(), String> {
    let depth_left = depth_left.checked_sub(1).ok_or_else(|| {
        format!(
            "merged maps nest deeper than {} levels {BEYOND_LIMITS}",
            crate::MAX_VALUE_DEPTH
        )
    })?;
    // A snapshot: the source may be the destination, or inside it.
    for (k, v) in src.entries().iter() {
        *work = work.checked_sub(1).ok_or_else(|| {
            format!(
                "the merge visits more entries than the template's budget allows {BEYOND_LIMITS}"
            )
        })?;
        let take = match (dst.get(k), v) {
            (Some(V::Map(d)), V::Map(sm)) => {
                deep_merge(&d, sm, rule, depth_left, work)?;
                d.is_empty()
            }
            (Some(existing), _) => match rule {
                MergeRule::Keep => is_empty(&existing),
                MergeRule::OverwriteNonEmpty => !is_empty(v) || is_empty(&existing),
                MergeRule::Overwrite => true,
            },
            (None, _) => true,
        };
        if take {
            dst.update(|m| m.insert(k.clone(), v.clone()))?;
        }
    }
    Ok(())
}

/// Sprig's `merge`/`mergeOverwrite` (`dict.go`): merges each source into
/// the first map, in place, and returns that map.
///
/// A missing destination is the nil map, which mergo replaces with a new
/// one (`deepMerge` `dst.Set(reflect.MakeMap(...))`); a missing source is
/// the nil map, which adds nothing ([`map_arg`]).
pub(super) fn merge_into(a: &[V], rule: MergeRule, room: usize) -> R {
    at_least(a, 1)?;
    let fresh;
    let (dst_value, dst) = if a[0] == V::Missing {
        fresh = V::map(BTreeMap::new());
        (&fresh, map_ref(&fresh)?)
    } else {
        (&a[0], map_ref(&a[0])?)
    };
    let mut work = room / crate::value::NODE_COST;
    for src in &a[1..] {
        if *src == V::Missing {
            continue;
        }
        deep_merge(dst, map_ref(src)?, rule, crate::MAX_VALUE_DEPTH, &mut work)?;
    }
    Ok(dst_value.clone())
}

pub(super) fn f_default(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    if a.len() == 1 || is_empty(&a[1]) {
        Ok(iface(&a[0]))
    } else {
        Ok(iface(&a[1]))
    }
}

pub(super) fn f_empty(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Bool(is_empty(&a[0])))
}

pub(super) fn f_coalesce(_: &str, a: &[V], _: usize) -> R {
    Ok(a.iter().find(|v| !is_empty(v)).map_or(V::Nil, iface))
}

pub(super) fn f_all(_: &str, a: &[V], _: usize) -> R {
    Ok(V::Bool(a.iter().all(|v| !is_empty(v))))
}

pub(super) fn f_any(_: &str, a: &[V], _: usize) -> R {
    Ok(V::Bool(a.iter().any(|v| !is_empty(v))))
}

pub(super) fn f_compact(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::List(
        list_arg("compact", &a[0])?
            .iter()
            .filter(|v| !is_empty(v))
            .cloned()
            .collect(),
    ))
}

pub(super) fn f_ternary(_: &str, a: &[V], _: usize) -> R {
    arity(a, 3)?;
    Ok(if boolean(&a[2])? {
        iface(&a[0])
    } else {
        iface(&a[1])
    })
}

pub(super) fn f_deep_copy(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    iface(&a[0])
        .deep_copy(crate::MAX_VALUE_DEPTH)
        .ok_or_else(|| {
            format!(
                "the value nests deeper than {} levels {BEYOND_LIMITS}",
                crate::MAX_VALUE_DEPTH
            )
        })
}

pub(super) fn f_type_of(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Str(a[0].type_name().to_string()))
}

pub(super) fn f_type_is(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(s(&a[0])? == a[1].type_name()))
}

pub(super) fn f_kind_of(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Str(a[0].kind_name().to_string()))
}

pub(super) fn f_kind_is(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(s(&a[0])? == a[1].kind_name()))
}

pub(super) fn f_deep_equal(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(a[0] == a[1]))
}

pub(super) fn f_tuple(_: &str, a: &[V], _: usize) -> R {
    Ok(V::List(a.iter().map(iface).collect()))
}

pub(super) fn f_dict(_: &str, a: &[V], _: usize) -> R {
    let mut m = BTreeMap::new();
    for pair in a.chunks(2) {
        let k = strval(&pair[0]);
        m.insert(k, pair.get(1).map_or(V::Str(String::new()), iface));
    }
    Ok(V::map(m))
}

pub(super) fn f_get(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(map_arg(&a[0])?
        .get(s(&a[1])?)
        .cloned()
        .unwrap_or(V::Str(String::new())))
}

/// Sprig's `set`: `d[key] = value` in place, returning `d`.
pub(super) fn f_set(_: &str, a: &[V], _: usize) -> R {
    arity(a, 3)?;
    let (key, value) = (s(&a[1])?.to_string(), iface(&a[2]));
    if a[0] == V::Missing {
        // Go's runtime panic, which text/template returns as the error.
        return Err("assignment to entry in nil map".into());
    }
    map_ref(&a[0])?.update(|m| m.insert(key, value))?;
    Ok(a[0].clone())
}

/// Sprig's `unset`: `delete(d, key)` in place, returning `d`.
pub(super) fn f_unset(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let key = s(&a[1])?;
    if a[0] == V::Missing {
        // `delete` of the nil map does nothing; it stays nil (`toJson`: `null`).
        return Ok(V::Nil);
    }
    map_ref(&a[0])?.update(|m| m.remove(key))?;
    Ok(a[0].clone())
}

pub(super) fn f_has_key(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(map_arg(&a[0])?.contains_key(s(&a[1])?)))
}

pub(super) fn f_pluck(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    let key = s(&a[0])?;
    let mut out = Vec::new();
    for d in &a[1..] {
        if let Some(v) = map_arg(d)?.get(key) {
            out.push(v.clone());
        }
    }
    Ok(V::List(out))
}

pub(super) fn f_keys(_: &str, a: &[V], _: usize) -> R {
    let mut out = Vec::new();
    for d in a {
        out.extend(map_arg(d)?.keys().map(|k| V::Str(k.clone())));
    }
    Ok(V::List(out))
}

pub(super) fn f_values(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::List(map_arg(&a[0])?.values().cloned().collect()))
}

pub(super) fn f_pick(name: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    let m = map_arg(&a[0])?;
    let keys: Vec<&str> = a[1..].iter().map(s).collect::<Result<_, _>>()?;
    Ok(V::Map(
        m.iter()
            .filter(|(k, _)| keys.contains(&k.as_str()) == (name == "pick"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    ))
}

pub(super) fn f_merge(name: &str, a: &[V], room: usize) -> R {
    let rule = if name.contains("Overwrite") {
        MergeRule::OverwriteNonEmpty
    } else {
        MergeRule::Keep
    };
    merge_into(a, rule, room)
}

pub(super) fn f_append(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let mut l = list_arg("push", &a[0])?.to_vec();
    l.push(iface(&a[1]));
    Ok(V::List(l))
}

pub(super) fn f_prepend(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let mut l = vec![iface(&a[1])];
    l.extend(list_arg("prepend", &a[0])?.iter().cloned());
    Ok(V::List(l))
}

pub(super) fn f_first(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    if matches!(a[0], V::Nil | V::Missing) {
        return Ok(none(a));
    }
    Ok(list_arg("find first", &a[0])?
        .first()
        .cloned()
        .unwrap_or(V::Nil))
}

pub(super) fn f_last(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    if matches!(a[0], V::Nil | V::Missing) {
        return Ok(none(a));
    }
    Ok(list_arg("find last", &a[0])?
        .last()
        .cloned()
        .unwrap_or(V::Nil))
}

pub(super) fn f_rest(name: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    if matches!(a[0], V::Nil | V::Missing) {
        return Ok(none(a));
    }
    let l = list_arg("find rest", &a[0])?;
    if l.is_empty() {
        return Ok(V::Nil);
    }
    Ok(V::List(if name.contains("est") {
        l[1..].to_vec()
    } else {
        l[..l.len() - 1].to_vec()
    }))
}

pub(super) fn f_reverse(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let mut l = list_arg("reverse", &a[0])?.to_vec();
    l.reverse();
    Ok(V::List(l))
}

pub(super) fn f_uniq(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let mut out: Vec<V> = Vec::new();
    for v in list_arg("uniq", &a[0])? {
        if !out.contains(v) {
            out.push(v.clone());
        }
    }
    Ok(V::List(out))
}

pub(super) fn f_without(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    Ok(V::List(
        list_arg("without", &a[0])?
            .iter()
            .filter(|v| !a[1..].contains(v))
            .cloned()
            .collect(),
    ))
}

pub(super) fn f_has(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    if matches!(a[1], V::Nil | V::Missing) {
        return Ok(V::Bool(false));
    }
    Ok(V::Bool(
        list_arg("find has", &a[1])?.contains(&iface(&a[0])),
    ))
}

pub(super) fn f_slice(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    let l = list_arg("slice", &a[0])?;
    let n = l.len();
    let idx = |i: usize| -> Result<usize, String> {
        a.get(i).map_or(Ok(usize::MAX), |v| {
            usize::try_from(to_i64(v)).map_err(|e| e.to_string())
        })
    };
    let start = if a.len() > 1 { idx(1)? } else { 0 };
    let end = if a.len() > 2 { idx(2)? } else { n };
    if start > end || end > n {
        return Err(format!("slice bounds out of range [{start}:{end}]"));
    }
    Ok(V::List(l[start..end].to_vec()))
}

pub(super) fn f_concat(_: &str, a: &[V], _: usize) -> R {
    let mut out = Vec::new();
    for v in a {
        out.extend(list_arg("concat", v)?.iter().cloned());
    }
    Ok(V::List(out))
}

/// Sprig's `dig` takes `...interface{}` and asserts its arguments' types
/// (`dict.go` `dig`, `digFromDict`), so a wrong one is the panic text/template
/// turns into the call's error: `interface conversion: …`.
pub(super) fn f_dig(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 3)?;
    let dict = dig_map(&a[a.len() - 1])?;
    let default = &a[a.len() - 2];
    let keys: Vec<&str> = a[..a.len() - 2]
        .iter()
        .map(|k| match k {
            V::Str(k) => Ok(k.as_str()),
            other => Err(interface_conversion(other, "string")),
        })
        .collect::<Result<_, _>>()?;
    let mut cur = dict;
    for (i, k) in keys.iter().enumerate() {
        let next = match cur.get(*k) {
            None => return Ok(default.clone()),
            Some(v) if i == keys.len() - 1 => return Ok(v.clone()),
            Some(v) => dig_map(v)?,
        };
        cur = next;
    }
    Ok(default.clone())
}

/// `v.(map[string]interface{})` in `dig`.
fn dig_map(v: &V) -> Result<Arc<BTreeMap<String, V>>, String> {
    match v {
        V::Map(m) => Ok(m.entries()),
        other => Err(interface_conversion(other, "map[string]interface {}")),
    }
}

/// Go's `runtime.TypeAssertionError` for `x.(want)` of an `interface{}`.
fn interface_conversion(v: &V, want: &str) -> String {
    let have = match v {
        V::Missing | V::Nil => "nil",
        other => other.type_name(),
    };
    format!("interface conversion: interface {{}} is {have}, not {want}")
}

pub(super) fn f_chunk(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let size = usize::try_from(int(&a[0])?).unwrap_or(0).max(1);
    Ok(V::List(
        list_arg("chunk", &a[1])?
            .chunks(size)
            .map(|c| V::List(c.to_vec()))
            .collect(),
    ))
}

pub(super) fn f_fail(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Err(s(&a[0])?.to_string())
}
