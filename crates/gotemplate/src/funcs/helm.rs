//! Functions only Helm defines (`pkg/engine/funcs.go` `funcMap`):
//! `required`, `fail`, `lookup`, `toToml`, its `fromYaml`/`fromJson`
//! variants, and the Sprig functions Helm's set evaluates its own way
//! (`toJson`, `mergeOverwrite`, `semver`).

// Every function of the table has its signature (`R`), fallible or not.
#![allow(clippy::unnecessary_wraps)]

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::collections::{merge_into, MergeRule};
use crate::args::{arity, fits, s, R};
use crate::value::{Json, V};

/// Helm 3's `toToml` (see [`crate::toml_out`]).
pub(super) fn f_to_toml(_: &str, a: &[V], room: usize) -> R {
    to_toml(a, room, crate::toml_out::Floats::Fixed)
}

/// `toToml` with the floats of the encoder in use (Helm 4's: [`crate::toml_out::Floats::Shortest`]).
pub(crate) fn to_toml(a: &[V], room: usize, floats: crate::toml_out::Floats) -> R {
    arity(a, 1)?;
    let text = crate::toml_out::to_toml(&a[0], floats)?;
    fits(text.len(), room)?;
    Ok(V::Str(text))
}

/// Sprig's `mergeOverwrite` as mergo's `WithOverride` does it
/// (`merge.go` `deepMerge`, map case): maps merge recursively, and every
/// other value of the source replaces the destination's, empty ones
/// (`false`, `0`, `""`, nil) included (helm: `mergeOverwrite` of
/// `{enabled: true}` and `{enabled: false}` is `{enabled: false}`).
pub(super) fn f_helm_merge_overwrite(_: &str, a: &[V], room: usize) -> R {
    merge_into(a, MergeRule::Overwrite, room)
}

/// Helm's `toJson` (`json.Marshal`): sorted keys, HTML characters escaped,
/// floats as Go's `encoding/json` writes them (`floatEncoder`: `%f`-style
/// shortest digits, an exponent only below 1e-6 or from 1e21, `1e-7` not
/// `1e-07`).
pub(super) fn f_helm_to_json(_: &str, a: &[V], room: usize) -> R {
    fn float(out: &mut String, f: f64) {
        if !f.is_finite() {
            out.push_str("null");
            return;
        }
        let abs = f.abs();
        if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
            let t = format!("{f:e}");
            let (m, e) = t.split_once('e').unwrap_or((&t, "0"));
            let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
            let _ = write!(out, "{m}e{sign}{digits}");
        } else {
            let _ = write!(out, "{f}");
        }
    }
    /// A map's entries or a struct's members, in the order given.
    fn object<'a>(out: &mut String, members: impl Iterator<Item = (&'a String, &'a V)>) {
        out.push('{');
        for (i, (k, e)) in members.enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::Value::String(k.clone()).to_string());
            out.push(':');
            walk(out, e);
        }
        out.push('}');
    }
    fn walk(out: &mut String, v: &V) {
        match v {
            V::Float(f) => float(out, *f),
            V::List(l) => {
                out.push('[');
                for (i, e) in l.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    walk(out, e);
                }
                out.push(']');
            }
            V::Map(m) => object(out, m.entries().iter()),
            V::Host(h) => match h.0.json() {
                Json::Value(v) => walk(out, &v),
                Json::Object(members) => object(out, members.iter().map(|(k, e)| (k, e))),
            },
            other => out.push_str(&other.to_json().to_string()),
        }
    }
    arity(a, 1)?;
    fits(a[0].printed_bound(), room)?;
    let mut raw = String::new();
    walk(&mut raw, &a[0]);
    Ok(V::Str(super::codecs::html_escape_json(&raw)))
}

/// Sprig's `semverCompare constraint version`.
pub(super) fn f_semver_compare(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(crate::funcs::semver::semver_compare(
        s(&a[0])?,
        s(&a[1])?,
    )?))
}

/// Sprig's `semver version`: a version object (`.Major`, `.Minor`...).
pub(super) fn f_semver(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    crate::funcs::semver::semver_object(s(&a[0])?)
}

/// Helm's `warnWrap`: the delimiters `cleanupExecError` finds a `fail` or
/// `required` message between.
fn warn_wrap(msg: &str) -> String {
    format!("HELM_ERR_START{msg}HELM_ERR_END")
}

/// Helm's `required`: nil or the empty string fail with the message.
pub(super) fn f_required(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let msg = s(&a[0])?;
    match &a[1] {
        V::Nil | V::Missing => Err(warn_wrap(msg)),
        V::Str(x) if x.is_empty() => Err(warn_wrap(msg)),
        v => Ok(v.clone()),
    }
}

/// Helm's `fail`.
pub(super) fn f_helm_fail(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Err(warn_wrap(s(&a[0])?))
}

/// `lookup` as `helm template` has it: no cluster, an empty map.
pub(super) fn f_lookup(_: &str, a: &[V], _: usize) -> R {
    arity(a, 4)?;
    for v in a {
        s(v)?;
    }
    Ok(V::map(BTreeMap::new()))
}

/// `getHostByName` with Helm's DNS lookups off (`EnableDNS` false): "".
pub(super) fn f_get_host_by_name(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    s(&a[0])?;
    Ok(V::Str(String::new()))
}

/// Helm's `fromYaml`/`fromYamlArray` (`pkg/engine/funcs.go` `fromYAML`,
/// `fromYAMLArray`): a decoding error is not a template error but the map
/// `{"Error": msg}` (the list `[msg]`), whose message is sigs.k8s.io/yaml's
/// (`error converting YAML to JSON: yaml: line 1: did not find expected ','
/// or ']'`, go-yaml v2's wording) or `encoding/json`'s for a value of
/// another type. Where the YAML error is not one worded as go-yaml words it
/// (a limit of gitops-lint's), the call is refused.
pub(super) fn f_helm_from_yaml(name: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let text = s(&a[0])?;
    let want_list = name == "fromYamlArray";
    let err = |e: String| {
        Ok(if want_list {
            V::List(vec![V::Str(e)])
        } else {
            V::Map([("Error".to_string(), V::Str(e))].into())
        })
    };
    let v = match goyaml::load_first_sigs(text, &goyaml::Limits::default()) {
        Ok(v) => V::from_json(&v),
        Err(e) => match e.go_yaml {
            Some(go) => return err(format!("error converting YAML to JSON: {go}")),
            None => {
                return Err(format!(
                    "{name} of text that is not a YAML {}: {e}; the message helm puts in its result (go-yaml's wording) is not known for this error, so this template cannot be evaluated offline",
                    if want_list { "list" } else { "map" }
                ))
            }
        },
    };
    let go_type = if want_list {
        "[]interface {}"
    } else {
        "map[string]interface {}"
    };
    match (want_list, v) {
        (false, V::Map(m)) => Ok(V::Map(m)),
        (false, V::Nil) => Ok(V::map(BTreeMap::new())),
        (true, V::List(l)) => Ok(V::List(l)),
        (true, V::Nil) => Ok(V::List(Vec::new())),
        (_, other) => {
            let kind = match other {
                V::Map(_) => "object",
                V::List(_) => "array",
                V::Str(_) => "string",
                V::Bool(_) => "bool",
                _ => "number",
            };
            err(format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {kind} into Go value of type {go_type}"
            ))
        }
    }
}

/// Helm's `fromJson`/`fromJsonArray`: an object (a list), or `{"Error": msg}`
/// (`[msg]`) when the text is not one.
pub(super) fn f_helm_from_json(name: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let text = s(&a[0])?;
    let want_list = name == "fromJsonArray";
    let err = |e: String| {
        if want_list {
            V::List(vec![V::Str(e)])
        } else {
            V::Map([("Error".to_string(), V::Str(e))].into())
        }
    };
    Ok(match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => match V::from_json(&v) {
            V::Map(m) if !want_list => V::Map(m),
            V::List(l) if want_list => V::List(l),
            V::Nil if want_list => V::List(Vec::new()),
            V::Nil => V::map(BTreeMap::new()),
            other => err(format!(
                "json: cannot unmarshal {} into Go value of type {}",
                other.kind_name(),
                if want_list {
                    "[]interface {}"
                } else {
                    "map[string]interface {}"
                }
            )),
        },
        Err(e) => err(e.to_string()),
    })
}
