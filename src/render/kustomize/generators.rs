//! `configMapGenerator` / `secretGenerator` (literals, files, env files,
//! options, behaviours) and the content-hash name suffix applied at the
//! end of a build.

use base64::Engine as _;
use goyaml::json::Pointer as _;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};

use super::accumulator::{matching_any_id, Acc};
use super::load::{string_map, Kustomization};
use super::resource::{Behavior, Res};
use super::{content, gojson, KResult};
use crate::manifest::Origin;
use crate::render::RenderContext;

fn strs(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn remove_quotes(s: &str) -> &str {
    let b = s.as_bytes();
    if b.len() < 2 || b[0] != b[b.len() - 1] {
        return s;
    }
    if b[0] == b'"' || b[0] == b'\'' {
        return &s[1..s.len() - 1];
    }
    s
}

/// Key/value pairs of a generator: env files, then literals, then files.
fn pairs(cx: &RenderContext<'_>, k: &Kustomization, g: &Value) -> KResult<Vec<(String, Vec<u8>)>> {
    let mut out: Vec<(String, Vec<u8>)> = Vec::new();
    for env in strs(g.get("envs")) {
        let (_, bytes) = k.read(cx, &env)?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| k.err(format!("env file `{env}` is not valid UTF-8")))?;
        for (i, line) in text.split('\n').enumerate() {
            let mut line = line.strip_suffix('\r').unwrap_or(line);
            if i == 0 {
                line = line.strip_prefix('\u{feff}').unwrap_or(line);
            }
            let line = line.trim_start();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (key, val) = match line.split_once('=') {
                Some((a, b)) => (a, b),
                None => (line, ""),
            };
            if key.is_empty() || key.chars().any(char::is_whitespace) {
                return Err(k.err(format!("invalid env var name `{key}` in `{env}`")));
            }
            out.push((key.to_string(), val.as_bytes().to_vec()));
        }
    }
    for lit in strs(g.get("literals")) {
        let Some((key, val)) = lit.split_once('=').filter(|(a, _)| !a.is_empty()) else {
            return Err(k.err(format!(
                "invalid literal source `{lit}`, expected key=value"
            )));
        };
        out.push((key.to_string(), remove_quotes(val).as_bytes().to_vec()));
    }
    for src in strs(g.get("files")) {
        let n = src.matches('=').count();
        let (key, file) = match n {
            0 => (
                crate::source::path::file_name(src.trim_end_matches('/')).to_string(),
                src.clone(),
            ),
            1 if !src.starts_with('=') && !src.ends_with('=') => {
                let (a, b) = src.split_once('=').unwrap_or_default();
                (a.to_string(), b.to_string())
            }
            _ => return Err(k.err(format!("invalid file source `{src}`"))),
        };
        let (_, bytes) = k.read(cx, &file)?;
        out.push((key, bytes.to_vec()));
    }
    let mut seen = std::collections::HashSet::new();
    let name = g.get("name").and_then(Value::as_str).unwrap_or("");
    for (key, _) in &out {
        if !seen.insert(key.clone()) {
            return Err(k.err(format!(
                "configmap {name} illegally repeats the key `{key}`"
            )));
        }
        if key.is_empty()
            || !key
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._".contains(c))
        {
            return Err(k.err(format!(
                "`{key}` is not a valid key name for a ConfigMap or Secret"
            )));
        }
    }
    Ok(out)
}

/// Runs one generator entry of kind `ConfigMap` or `Secret`, with the
/// kustomization's `generatorOptions` merged in (the entry's own win).
///
/// # Errors
/// Unreadable sources, invalid or repeated keys.
pub(crate) fn generate(
    cx: &RenderContext<'_>,
    k: &Kustomization,
    g: &Value,
    global: &Value,
    kind: &str,
) -> KResult<Res> {
    let name = g.get("name").and_then(Value::as_str).unwrap_or("");
    if name.is_empty() {
        return Err(k.err(format!(
            "a {} generator must have a name",
            kind.to_lowercase()
        )));
    }
    let local = g.get("options").cloned().unwrap_or(Value::Null);
    let mut labels = string_map(local.get("labels"), "options.labels", &k.file)?;
    let mut annotations = string_map(local.get("annotations"), "options.annotations", &k.file)?;
    let had_labels = local.get("labels").is_some_and(|v| !v.is_null());
    let had_ann = local.get("annotations").is_some_and(|v| !v.is_null());
    for (key, val) in string_map(global.get("labels"), "generatorOptions.labels", &k.file)? {
        if !had_labels || !labels.iter().any(|(k2, _)| *k2 == key) {
            labels.push((key, val));
        }
    }
    for (key, val) in string_map(
        global.get("annotations"),
        "generatorOptions.annotations",
        &k.file,
    )? {
        if !had_ann || !annotations.iter().any(|(k2, _)| *k2 == key) {
            annotations.push((key, val));
        }
    }
    let flag = |o: &Value, f: &str| o.get(f).and_then(Value::as_bool).unwrap_or(false);
    let disable_hash =
        flag(&local, "disableNameSuffixHash") || flag(global, "disableNameSuffixHash");
    let immutable = flag(&local, "immutable") || flag(global, "immutable");

    let mut meta = Map::new();
    meta.insert("name".into(), json!(name));
    if let Some(ns) = g
        .get("namespace")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
    {
        meta.insert("namespace".into(), json!(ns));
    }
    if !labels.is_empty() {
        meta.insert(
            "labels".into(),
            Value::Object(
                labels
                    .into_iter()
                    .map(|(a, b)| (a, Value::String(b)))
                    .collect(),
            ),
        );
    }
    if !annotations.is_empty() {
        meta.insert(
            "annotations".into(),
            Value::Object(
                annotations
                    .into_iter()
                    .map(|(a, b)| (a, Value::String(b)))
                    .collect(),
            ),
        );
    }
    let mut obj = Map::new();
    obj.insert("apiVersion".into(), json!("v1"));
    obj.insert("kind".into(), json!(kind));
    obj.insert("metadata".into(), Value::Object(meta));
    let b64 = |b: &[u8]| wrap_base64(&base64::engine::general_purpose::STANDARD.encode(b));
    let mut data = Map::new();
    let mut binary = Map::new();
    for (key, bytes) in pairs(cx, k, g)? {
        if kind == "Secret" {
            data.insert(key, Value::String(b64(&bytes)));
        } else {
            match String::from_utf8(bytes) {
                Ok(s) => {
                    data.insert(key, Value::String(s));
                }
                Err(e) => {
                    binary.insert(key, Value::String(b64(e.as_bytes())));
                }
            }
        }
    }
    if kind == "Secret" {
        let t = g
            .get("type")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or("Opaque");
        obj.insert("type".into(), json!(t));
    }
    if !data.is_empty() || kind == "Secret" {
        obj.insert("data".into(), Value::Object(data));
    }
    if !binary.is_empty() {
        obj.insert("binaryData".into(), Value::Object(binary));
    }
    if immutable {
        obj.insert("immutable".into(), Value::Bool(true));
    }
    let mut r = Res::new(Value::Object(obj), Origin::default());
    r.needs_hash = !disable_hash;
    r.generated_by = Some((
        k.file.clone(),
        if kind == "Secret" {
            "SecretGenerator"
        } else {
            "ConfigMapGenerator"
        },
    ));
    r.behavior = match g.get("behavior").and_then(Value::as_str).unwrap_or("") {
        "merge" => Behavior::Merge,
        "replace" => Behavior::Replace,
        _ => Behavior::Create,
    };
    Ok(r)
}

fn merge_string_maps(old: &Value, new: &Value) -> Option<Value> {
    let mut m = old.as_object().cloned().unwrap_or_default();
    if let Some(n) = new.as_object() {
        for (k, v) in n {
            m.insert(k.clone(), v.clone());
        }
    }
    if m.is_empty() {
        None
    } else {
        Some(Value::Object(m))
    }
}

/// kyaml's `encodeBase64`: lines of 70 characters, each ended by a newline
/// once the text is longer than one line.
fn wrap_base64(s: &str) -> String {
    const LINE: usize = 70;
    let lines = s.len() / LINE + 1;
    if lines <= 1 {
        return s.to_string();
    }
    let mut out = String::with_capacity(s.len() + lines);
    for chunk in s.as_bytes().chunks(LINE) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// Adds generated output to the accumulator with create/merge/replace
/// semantics (Kustomize's `appendReplaceOrMerge`).
///
/// # Errors
/// `create` on an existing id, `merge`/`replace` without one, ambiguity.
pub(crate) fn absorb(acc: &mut Acc, mut r: Res) -> KResult<()> {
    let id = r.cur_id();
    let matches = matching_any_id(&acc.res, &id);
    match matches.as_slice() {
        [] => match r.behavior {
            Behavior::Merge | Behavior::Replace => Err(content(format!(
                "{} does not exist; cannot merge or replace",
                id.display()
            ))),
            Behavior::Create => acc.append(r),
        },
        [i] => {
            let old = &acc.res[*i];
            if r.behavior == Behavior::Create {
                return Err(content(format!(
                    "{} exists; behavior must be merge or replace",
                    id.display()
                )));
            }
            for f in ["labels", "annotations"] {
                let o = old
                    .v
                    .at(&format!("/metadata/{f}"))
                    .cloned()
                    .unwrap_or(Value::Null);
                let n =
                    r.v.at(&format!("/metadata/{f}"))
                        .cloned()
                        .unwrap_or(Value::Null);
                let merged = merge_string_maps(&o, &n);
                if let Some(meta) = r.v.get_mut("metadata").and_then(Value::as_object_mut) {
                    match merged {
                        Some(m) => meta.insert(f.to_string(), m),
                        None => meta.remove(f),
                    };
                }
            }
            r.set_name(old.name());
            r.set_namespace(old.namespace());
            r.prev.clone_from(&old.prev);
            r.prefixes.clone_from(&old.prefixes);
            r.suffixes.clone_from(&old.suffixes);
            r.needs_hash = r.needs_hash && old.needs_hash;
            r.ref_vars.clone_from(&old.ref_vars);
            if r.behavior == Behavior::Merge {
                for f in ["data", "binaryData"] {
                    let o = old.v.get(f).cloned().unwrap_or(Value::Null);
                    let n = r.v.get(f).cloned().unwrap_or(Value::Null);
                    if let Some(obj) = r.v.as_object_mut() {
                        match merge_string_maps(&o, &n) {
                            Some(m) => obj.insert(f.to_string(), m),
                            None => obj.remove(f),
                        };
                    }
                }
                r.origin = old.origin.clone();
                r.generated_by.clone_from(&old.generated_by);
            }
            r.behavior = Behavior::Create;
            acc.res[*i] = r;
            Ok(())
        }
        _ => Err(content(format!(
            "found multiple objects that could accept merge of {}",
            id.display()
        ))),
    }
}

/// Kustomize's name hash of a resource (see `api/hasher`).
#[must_use]
pub(crate) fn hash(v: &Value) -> String {
    let field = |f: &str| match v.get(f) {
        None => Value::String(String::new()),
        Some(x) if !x.is_object() && !x.is_array() => Value::String(super::smp::scalar_text(x)),
        Some(x) => x.clone(),
    };
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
    let doc = match kind {
        "ConfigMap" => {
            let mut m = Map::new();
            m.insert("kind".into(), json!("ConfigMap"));
            m.insert("name".into(), json!(""));
            m.insert("data".into(), field("data"));
            if v.get("binaryData").is_some_and(Value::is_object) {
                m.insert("binaryData".into(), field("binaryData"));
            }
            Value::Object(m)
        }
        "Secret" => {
            let mut m = Map::new();
            m.insert("kind".into(), json!("Secret"));
            m.insert("name".into(), json!(""));
            m.insert("type".into(), field("type"));
            m.insert("data".into(), field("data"));
            if v.get("stringData").is_some_and(Value::is_object) {
                m.insert("stringData".into(), field("stringData"));
            }
            Value::Object(m)
        }
        _ => v.clone(),
    };
    let digest = Sha256::digest(gojson::marshal(&doc).as_bytes());
    let hex: String = digest.iter().take(5).map(|b| format!("{b:02x}")).collect();
    hex.chars()
        .map(|c| match c {
            '0' => 'g',
            '1' => 'h',
            '3' => 'k',
            'a' => 'm',
            'e' => 't',
            c => c,
        })
        .collect()
}

/// Appends the content hash to every resource that asks for it.
///
/// # Errors
/// None today; kept fallible like the other pipeline steps.
#[allow(clippy::unnecessary_wraps)]
pub(crate) fn add_hashes(res: &mut [Res]) -> KResult<()> {
    for r in res.iter_mut().filter(|r| r.needs_hash) {
        let h = hash(&r.v);
        r.store_prev_id();
        let name = format!("{}-{h}", r.name());
        r.set_name(&name);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_ignores_name_and_matches_kustomize() {
        // `bob` with `a=b` is `bob-4h2mbtbbt6` in kubectl kustomize.
        let v = json!({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"bob"},"data":{"a":"b"}});
        assert_eq!(hash(&v), "4h2mbtbbt6");
    }
}
