//! `values.schema.json` as helm v3.17 and v3.18 check it (`pkg/chartutil`
//! `ValidateAgainstSchema`: the chart's schema against its values, then
//! each subchart's against the subchart's values; xeipuuv/gojsonschema,
//! which ignores keywords it does not know).
//!
//! Only the verdict "valid" is relied on: values a schema refuses, and a
//! schema using what is not implemented here (a `format` whose Go checker
//! is not reproduced for that value, see [`super::schema_format`], a
//! `pattern` the regex engine reads otherwise than Go), are "not supported
//! natively",
//! since helm's message lists gojsonschema's own wording of every error.

// Lengths and counts are compared with JSON Schema numbers, which are
// float64 as gojsonschema reads them.
#![allow(clippy::cast_precision_loss)]

use goyaml::json::Pointer as _;
use serde_json::Value;

/// Why a schema cannot be judged natively, or why the values fail it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Verdict {
    /// The values meet the schema.
    Valid,
    /// They do not: gojsonschema's one error line (`field: description`)
    /// when it is reproduced here, else the first reason found.
    Invalid(Result<String, String>),
    /// The schema uses something not implemented.
    Unsupported(String),
}

/// Most nested schema evaluations one check may take (a `$ref` cycle
/// would otherwise not end).
const MAX_DEPTH: usize = 64;

/// Checks `values` against `schema` (the whole document, for `$ref`s).
#[must_use]
pub(super) fn validate(schema: &Value, values: &Value) -> Verdict {
    let v = if values.is_null() {
        Value::Object(serde_json::Map::new())
    } else {
        values.clone()
    };
    match check(schema, schema, &v, 0) {
        Ok(()) => Verdict::Valid,
        Err(Fail::Invalid(m)) => {
            let mut lines = Vec::new();
            let described = describe(schema, schema, &v, &mut Vec::new(), 0, &mut lines);
            match (described, lines.as_slice()) {
                (Some(()), [one]) => Verdict::Invalid(Ok(one.clone())),
                _ => Verdict::Invalid(Err(m)),
            }
        }
        Err(Fail::Unsupported(m)) => Verdict::Unsupported(m),
    }
}

/// gojsonschema v1.2.0's `JsonContext` of a path as `ResultErrorFields.Field`
/// prints it: `(root)`, else the keys and indexes joined by `.`.
fn field(at: &[String]) -> String {
    if at.is_empty() {
        "(root)".into()
    } else {
        at.join(".")
    }
}

/// gojsonschema's type name of a value (`validateRecursive`: a number
/// without a fraction is an `integer`).
fn given(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) if is_type(v, "integer") => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The errors gojsonschema v1.2.0 reports for `v`, as `field: description`
/// lines in the wording of its `DefaultLocale` (`locales.go`), pushed onto
/// `out`; `None` where an error is one whose wording is not reproduced
/// (combinators, bounds, `const`, dependencies...). Helm prints them in
/// gojsonschema's order, which follows Go map iteration across properties,
/// so only a single error is relied on.
fn describe(
    root: &Value,
    schema: &Value,
    v: &Value,
    at: &mut Vec<String>,
    depth: usize,
    out: &mut Vec<String>,
) -> Option<()> {
    // Whether `schema` refuses `v`; `None` when it cannot be judged.
    let fails = |schema: &Value, v: &Value| match check(root, schema, v, depth + 1) {
        Ok(()) => Some(false),
        Err(Fail::Invalid(_)) => Some(true),
        Err(Fail::Unsupported(_)) => None,
    };
    if depth > MAX_DEPTH {
        return None;
    }
    let s = match schema {
        Value::Object(s) => s,
        Value::Bool(true) => return Some(()),
        _ => return None,
    };
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        return describe(root, resolve(root, r)?, v, at, depth + 1, out);
    }
    let line = |at: &[String], d: String| format!("{}: {d}", field(at));
    // `validateRecursive`: a wrong type is the one error of its schema.
    match s.get("type") {
        Some(Value::String(t)) if !is_type(v, t) => {
            out.push(line(
                at,
                format!("Invalid type. Expected: {t}, given: {}", given(v)),
            ));
            return Some(());
        }
        Some(t @ Value::Array(_)) if fails(&serde_json::json!({ "type": t }), v)? => return None,
        _ => {}
    }
    // `validateCommon`.
    if let Some(Value::Array(e)) = s.get("enum") {
        if !e.iter().any(|x| equal(x, v)) {
            let quoted: Option<Vec<String>> = e
                .iter()
                .map(|x| {
                    x.as_str()
                        .map(|t| serde_json::to_string(t).unwrap_or_default())
                })
                .collect();
            out.push(line(
                at,
                format!(
                    "{} must be one of the following: {}",
                    field(at),
                    quoted?.join(", ")
                ),
            ));
        }
    }
    if fails(
        &schema_only(
            s,
            &[
                "const", "allOf", "anyOf", "oneOf", "not", "if", "then", "else",
            ],
        ),
        v,
    )? {
        return None;
    }
    if let Some(f) = s.get("format").and_then(Value::as_str) {
        if fails(&schema_only(s, &["format"]), v)? {
            out.push(line(at, format!("Does not match format '{f}'")));
        }
    }
    match v {
        Value::Number(_) => {
            let bounds = [
                "minimum",
                "maximum",
                "exclusiveMinimum",
                "exclusiveMaximum",
                "multipleOf",
            ];
            if fails(&schema_only(s, &bounds), v)? {
                return None;
            }
        }
        Value::String(text) => {
            if fails(&schema_only(s, &["minLength", "maxLength"]), v)? {
                return None;
            }
            if let Some(p) = s.get("pattern").and_then(Value::as_str) {
                if !regex(p).ok()?.is_match(text) {
                    out.push(line(at, format!("Does not match pattern '{p}'")));
                }
            }
        }
        Value::Array(items) => {
            let own = [
                "minItems",
                "maxItems",
                "uniqueItems",
                "contains",
                "additionalItems",
            ];
            if fails(&schema_only(s, &own), v)? {
                return None;
            }
            match s.get("items") {
                Some(Value::Array(_)) if fails(&schema_only(s, &["items"]), v)? => return None,
                Some(Value::Array(_)) | None => {}
                Some(each) => {
                    for (i, x) in items.iter().enumerate() {
                        at.push(i.to_string());
                        let r = describe(root, each, x, at, depth + 1, out);
                        at.pop();
                        r?;
                    }
                }
            }
        }
        Value::Object(obj) => {
            let own = [
                "minProperties",
                "maxProperties",
                "dependencies",
                "propertyNames",
            ];
            if fails(&schema_only(s, &own), v)? {
                return None;
            }
            if let Some(Value::Array(req)) = s.get("required") {
                for r in req.iter().filter_map(Value::as_str) {
                    if !obj.contains_key(r) {
                        out.push(line(at, format!("{r} is required")));
                    }
                }
            }
            let props = s.get("properties").and_then(Value::as_object);
            let patterns = s.get("patternProperties").and_then(Value::as_object);
            for (k, x) in obj {
                let mut matched = false;
                at.push(k.clone());
                if let Some(p) = props.and_then(|p| p.get(k)) {
                    matched = true;
                    describe(root, p, x, at, depth + 1, out)?;
                }
                for (p, ps) in patterns.into_iter().flatten() {
                    if regex(p).ok()?.is_match(k) {
                        matched = true;
                        describe(root, ps, x, at, depth + 1, out)?;
                    }
                }
                at.pop();
                match s.get("additionalProperties") {
                    Some(Value::Bool(false)) if !matched => {
                        out.push(line(at, format!("Additional property {k} is not allowed")));
                    }
                    Some(a) if !matched => {
                        at.push(k.clone());
                        let r = describe(root, a, x, at, depth + 1, out);
                        at.pop();
                        r?;
                    }
                    _ => {}
                }
            }
        }
        _ => {}
    }
    Some(())
}

/// The keywords `keys` of `s` alone, as a schema.
fn schema_only(s: &serde_json::Map<String, Value>, keys: &[&str]) -> Value {
    Value::Object(
        keys.iter()
            .filter_map(|k| s.get(*k).map(|v| ((*k).to_string(), v.clone())))
            .collect(),
    )
}

enum Fail {
    Invalid(String),
    Unsupported(String),
}

fn invalid<T>(m: impl Into<String>) -> Result<T, Fail> {
    Err(Fail::Invalid(m.into()))
}

/// Whether `v` is of the JSON schema type `t` (an integer is a number
/// without a fraction, as gojsonschema checks it).
fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "string" => v.is_string(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        "number" => v.is_number(),
        "integer" => v
            .as_f64()
            .is_some_and(|f| f.fract() == 0.0 && f.is_finite()),
        _ => false,
    }
}

/// JSON equality, numbers compared by value.
fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| equal(p, q)))
        }
        _ => a == b,
    }
}

/// A `#…` JSON pointer into the root schema.
fn resolve<'s>(root: &'s Value, r: &str) -> Option<&'s Value> {
    let frag = r.strip_prefix('#')?;
    if frag.is_empty() {
        return Some(root);
    }
    let decoded: String = frag.replace("%25", "%").replace("%22", "\"");
    root.at(&decoded)
}

fn regex(p: &str) -> Result<regex::Regex, Fail> {
    // Go's RE2 and Rust's regex agree on the common syntax; a pattern
    // Rust refuses is not judged.
    regex::Regex::new(p).map_err(|_| Fail::Unsupported(format!("the pattern {p:?}")))
}

fn num(s: &serde_json::Map<String, Value>, k: &str) -> Option<f64> {
    s.get(k).and_then(Value::as_f64)
}

fn check(root: &Value, schema: &Value, v: &Value, depth: usize) -> Result<(), Fail> {
    if depth > MAX_DEPTH {
        return Err(Fail::Unsupported(
            "a schema nested (or referring to itself) too deep".into(),
        ));
    }
    let s = match schema {
        Value::Bool(false) => return invalid("false schema"),
        Value::Object(s) => s,
        _ => return Ok(()),
    };
    let sub = |schema: &Value, v: &Value| check(root, schema, v, depth + 1);
    if let Some(r) = s.get("$ref").and_then(Value::as_str) {
        // Draft 4 to 7: a `$ref` replaces its siblings.
        let Some(target) = resolve(root, r) else {
            return Err(Fail::Unsupported(format!("`$ref: {r}`")));
        };
        return sub(target, v);
    }
    if let Some(f) = s.get("format").and_then(Value::as_str) {
        match super::schema_format::check(f, v) {
            super::schema_format::Check::Valid => {}
            super::schema_format::Check::Invalid => return invalid(format!("format {f}")),
            super::schema_format::Check::Unknown => {
                return Err(Fail::Unsupported(format!(
                    "`format: {f}` of a value gitops-lint does not judge"
                )))
            }
        }
    }
    if let Some(t) = s.get("type") {
        let ok = match t {
            Value::String(t) => is_type(v, t),
            Value::Array(ts) => ts.iter().filter_map(Value::as_str).any(|t| is_type(v, t)),
            _ => true,
        };
        if !ok {
            return invalid(format!("type {t}"));
        }
    }
    if let Some(Value::Array(e)) = s.get("enum") {
        if !e.iter().any(|x| equal(x, v)) {
            return invalid("enum");
        }
    }
    if let Some(c) = s.get("const") {
        if !equal(c, v) {
            return invalid("const");
        }
    }
    for k in ["allOf", "anyOf", "oneOf"] {
        if let Some(Value::Array(list)) = s.get(k) {
            let mut passed = 0;
            for x in list {
                match sub(x, v) {
                    Ok(()) => passed += 1,
                    Err(Fail::Invalid(_)) => {}
                    Err(u) => return Err(u),
                }
            }
            let ok = match k {
                "allOf" => passed == list.len(),
                "anyOf" => passed > 0,
                _ => passed == 1,
            };
            if !ok {
                return invalid(k);
            }
        }
    }
    if let Some(n) = s.get("not") {
        match sub(n, v) {
            Ok(()) => return invalid("not"),
            Err(Fail::Invalid(_)) => {}
            Err(u) => return Err(u),
        }
    }
    if let Some(i) = s.get("if") {
        let branch = match sub(i, v) {
            Ok(()) => s.get("then"),
            Err(Fail::Invalid(_)) => s.get("else"),
            Err(u) => return Err(u),
        };
        if let Some(b) = branch {
            sub(b, v)?;
        }
    }
    match v {
        Value::Number(n) => {
            let x = n.as_f64().unwrap_or_default();
            let exclusive_bool = |k: &str| s.get(k).and_then(Value::as_bool).unwrap_or(false);
            if let Some(m) = num(s, "minimum") {
                if x < m || (exclusive_bool("exclusiveMinimum") && x <= m) {
                    return invalid("minimum");
                }
            }
            if let Some(m) = num(s, "maximum") {
                if x > m || (exclusive_bool("exclusiveMaximum") && x >= m) {
                    return invalid("maximum");
                }
            }
            if let Some(m) = num(s, "exclusiveMinimum") {
                if x <= m {
                    return invalid("exclusiveMinimum");
                }
            }
            if let Some(m) = num(s, "exclusiveMaximum") {
                if x >= m {
                    return invalid("exclusiveMaximum");
                }
            }
            if let Some(m) = num(s, "multipleOf") {
                let q = x / m;
                if m <= 0.0 || (q - q.round()).abs() > 1e-9 {
                    return invalid("multipleOf");
                }
            }
        }
        Value::String(text) => {
            let len = text.chars().count() as f64;
            if num(s, "minLength").is_some_and(|m| len < m) {
                return invalid("minLength");
            }
            if num(s, "maxLength").is_some_and(|m| len > m) {
                return invalid("maxLength");
            }
            if let Some(p) = s.get("pattern").and_then(Value::as_str) {
                if !regex(p)?.is_match(text) {
                    return invalid("pattern");
                }
            }
        }
        Value::Array(items) => {
            let len = items.len() as f64;
            if num(s, "minItems").is_some_and(|m| len < m) {
                return invalid("minItems");
            }
            if num(s, "maxItems").is_some_and(|m| len > m) {
                return invalid("maxItems");
            }
            if s.get("uniqueItems").and_then(Value::as_bool) == Some(true) {
                for (i, a) in items.iter().enumerate() {
                    if items[i + 1..].iter().any(|b| equal(a, b)) {
                        return invalid("uniqueItems");
                    }
                }
            }
            match s.get("items") {
                Some(Value::Array(tuple)) => {
                    for (x, schema) in items.iter().zip(tuple) {
                        sub(schema, x)?;
                    }
                    if let Some(extra) = s.get("additionalItems") {
                        for x in items.iter().skip(tuple.len()) {
                            sub(extra, x)?;
                        }
                    }
                }
                Some(schema) => {
                    for x in items {
                        sub(schema, x)?;
                    }
                }
                None => {}
            }
            if let Some(c) = s.get("contains") {
                let mut any = false;
                for x in items {
                    match sub(c, x) {
                        Ok(()) => any = true,
                        Err(Fail::Invalid(_)) => {}
                        Err(u) => return Err(u),
                    }
                }
                if !any {
                    return invalid("contains");
                }
            }
        }
        Value::Object(obj) => {
            let len = obj.len() as f64;
            if num(s, "minProperties").is_some_and(|m| len < m) {
                return invalid("minProperties");
            }
            if num(s, "maxProperties").is_some_and(|m| len > m) {
                return invalid("maxProperties");
            }
            if let Some(Value::Array(req)) = s.get("required") {
                for r in req.iter().filter_map(Value::as_str) {
                    if !obj.contains_key(r) {
                        return invalid(format!("{r} is required"));
                    }
                }
            }
            let props = s.get("properties").and_then(Value::as_object);
            let patterns: Vec<(regex::Regex, &Value)> = match s.get("patternProperties") {
                Some(Value::Object(pp)) => pp
                    .iter()
                    .map(|(p, x)| Ok((regex(p)?, x)))
                    .collect::<Result<_, Fail>>()?,
                _ => Vec::new(),
            };
            for (k, x) in obj {
                let mut matched = false;
                if let Some(p) = props.and_then(|p| p.get(k)) {
                    matched = true;
                    sub(p, x)?;
                }
                for (re, p) in &patterns {
                    if re.is_match(k) {
                        matched = true;
                        sub(p, x)?;
                    }
                }
                if !matched {
                    if let Some(a) = s.get("additionalProperties") {
                        sub(a, x).map_err(|e| match e {
                            Fail::Invalid(_) => {
                                Fail::Invalid(format!("additional property {k} is not allowed"))
                            }
                            u @ Fail::Unsupported(_) => u,
                        })?;
                    }
                }
                if let Some(names) = s.get("propertyNames") {
                    sub(names, &Value::String(k.clone()))?;
                }
            }
            if let Some(Value::Object(deps)) = s.get("dependencies") {
                for (k, d) in deps {
                    if !obj.contains_key(k) {
                        continue;
                    }
                    match d {
                        Value::Array(names) => {
                            for n in names.iter().filter_map(Value::as_str) {
                                if !obj.contains_key(n) {
                                    return invalid(format!("{n} is required by {k}"));
                                }
                            }
                        }
                        other => sub(other, v)?,
                    }
                }
            }
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_checked_as_gojsonschema_checks_them() {
        let schema = json!({
            "type": "object",
            "required": ["image"],
            "properties": {
                "image": {"type": "object", "properties": {
                    "tag": {"type": "string", "pattern": "^v"},
                    "pullPolicy": {"enum": ["Always", "IfNotPresent"]}
                }},
                "replicas": {"type": "integer", "minimum": 1},
                "ports": {"type": "array", "items": {"$ref": "#/definitions/port"}}
            },
            "additionalProperties": false,
            "definitions": {"port": {"type": "integer", "maximum": 65535}}
        });
        let ok =
            json!({"image": {"tag": "v1", "pullPolicy": "Always"}, "replicas": 2, "ports": [80]});
        assert_eq!(validate(&schema, &ok), Verdict::Valid);
        for bad in [
            json!({"replicas": 2}),
            json!({"image": {"tag": "1"}}),
            json!({"image": {}, "replicas": 1.5}),
            json!({"image": {}, "replicas": 0}),
            json!({"image": {}, "ports": [70000]}),
            json!({"image": {}, "other": 1}),
            json!({"image": {"pullPolicy": "Never"}}),
        ] {
            assert!(
                matches!(validate(&schema, &bad), Verdict::Invalid(_)),
                "{bad}"
            );
        }
        // One error is worded as gojsonschema v1.2.0 words it (helm
        // v3.17.1 printed each of these for the sem-schema and external-dns
        // corpus cases and the others below).
        let one = |schema: serde_json::Value, v: serde_json::Value| match validate(&schema, &v) {
            Verdict::Invalid(r) => r,
            other => panic!("{other:?}"),
        };
        let props = |p: serde_json::Value| json!({"type": "object", "properties": p});
        assert_eq!(
            one(
                props(json!({"replicas": {"type": "integer"}})),
                json!({"replicas": "2"})
            ),
            Ok("replicas: Invalid type. Expected: integer, given: string".to_string())
        );
        assert_eq!(
            one(
                props(json!({"policy": {"type": "string"}})),
                json!({"policy": null})
            ),
            Ok("policy: Invalid type. Expected: string, given: null".to_string())
        );
        assert_eq!(
            one(
                props(json!({"mode": {"enum": ["simple", "advanced"]}})),
                json!({"mode": "x"})
            ),
            Ok("mode: mode must be one of the following: \"simple\", \"advanced\"".to_string())
        );
        assert_eq!(
            one(
                props(json!({"a": {"properties": {"level": {"pattern": "^(debug|info)$"}}}})),
                json!({"a": {"level": "x"}})
            ),
            Ok("a.level: Does not match pattern '^(debug|info)$'".to_string())
        );
        assert_eq!(
            one(json!({"required": ["image"]}), json!({})),
            Ok("(root): image is required".to_string())
        );
        assert_eq!(
            one(json!({"additionalProperties": false}), json!({"x": 1})),
            Ok("(root): Additional property x is not allowed".to_string())
        );
        // Two errors, or one worded otherwise, are not reproduced.
        assert!(one(json!({"required": ["a", "b"]}), json!({})).is_err());
        assert!(one(props(json!({"n": {"minimum": 3}})), json!({"n": 1})).is_err());
        assert!(one(json!({"anyOf": [{"required": ["a"]}]}), json!({})).is_err());
        let uri = json!({"properties": {"u": {"format": "uri"}}});
        assert_eq!(
            validate(&uri, &json!({"u": "https://example.com/x"})),
            Verdict::Valid
        );
        assert!(matches!(
            validate(&uri, &json!({"u": "x"})),
            Verdict::Unsupported(_)
        ));
        // A format failure is a failure inside `not` too.
        let not_host = json!({"properties": {"h": {"not": {"format": "hostname"}}}});
        assert_eq!(validate(&not_host, &json!({"h": "-x-"})), Verdict::Valid);
        assert_eq!(
            validate(&json!({"x-custom": 1, "type": "object"}), &json!(null)),
            Verdict::Valid,
            "unknown keywords are ignored, null values are {{}}"
        );
    }
}
