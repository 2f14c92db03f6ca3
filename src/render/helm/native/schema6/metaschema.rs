//! The schema against its draft's metaschema, as jsonschema/v6 checks it
//! before compiling (`roots.go` `addRoot`, `ensureSubschema`), and what is
//! not implemented here.

use std::collections::HashSet;

use serde_json::{Map as JsonMap, Value};

use super::super::schema6_num::Dec;
use super::errors::num;
use super::{equals, json_inst, Checker, Draft, Inst, Target, R, SIMPLE_TYPES};
use crate::manifest::pointer_token;

impl<'a> Checker<'a> {
    /// Whether `v` is a schema of this draft (draft-04 has no boolean
    /// schemas).
    fn is_schema(&self, v: &Value) -> bool {
        v.is_object() || (v.is_boolean() && self.draft >= Draft::D6)
    }

    /// The schema against its draft's metaschema, as v6 checks it before
    /// compiling, and what is not implemented here. Every schema the
    /// metaschema reaches is checked, and every `$ref`'s target.
    pub(super) fn meta(&self) -> R<()> {
        let mut todo: Vec<(String, &Value)> = vec![(String::new(), self.root)];
        let mut seen = HashSet::new();
        while let Some((ptr, s)) = todo.pop() {
            if !seen.insert(ptr.clone()) {
                continue;
            }
            if seen.len() > 100_000 {
                return Err("a schema too large".into());
            }
            if !self.is_schema(s) {
                return Err(invalid(&ptr, "is not a schema"));
            }
            if let Value::Object(o) = s {
                self.meta_object(o, &ptr, &mut todo)?;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_lines)]
    fn meta_object(
        &self,
        o: &'a JsonMap<String, Value>,
        ptr: &str,
        todo: &mut Vec<(String, &'a Value)>,
    ) -> R<()> {
        let d = self.draft;
        let at = |k: &str| format!("{ptr}/{}", pointer_token(k));
        let bad = |k: &str, why: &str| Err(invalid(&at(k), why));
        for (k, v) in o {
            let schema = |todo: &mut Vec<(String, &'a Value)>| -> R<()> {
                if !self.is_schema(v) {
                    return bad(k, "is not a schema");
                }
                todo.push((at(k), v));
                Ok(())
            };
            let schema_array = |todo: &mut Vec<(String, &'a Value)>| -> R<()> {
                match v {
                    Value::Array(a) if !a.is_empty() => {
                        for (i, x) in a.iter().enumerate() {
                            if !self.is_schema(x) {
                                return bad(k, "holds what is not a schema");
                            }
                            todo.push((format!("{}/{i}", at(k)), x));
                        }
                        Ok(())
                    }
                    _ => bad(k, "is not a non-empty array of schemas"),
                }
            };
            let schema_map = |todo: &mut Vec<(String, &'a Value)>| -> R<()> {
                let Value::Object(m) = v else {
                    return bad(k, "is not an object");
                };
                for (name, x) in m {
                    if !self.is_schema(x) {
                        return bad(k, "holds what is not a schema");
                    }
                    let p = format!("{}/{}", at(k), pointer_token(name));
                    todo.push((p, x));
                }
                Ok(())
            };
            let non_negative = || -> R<()> {
                match num(Some(v)) {
                    Some(n) if n.is_integer() && n >= Dec::from_i64(0) => Ok(()),
                    _ => bad(k, "is not a non-negative integer"),
                }
            };
            let string = || -> R<()> {
                if v.is_string() {
                    Ok(())
                } else {
                    bad(k, "is not a string")
                }
            };
            let boolean = || -> R<()> {
                if v.is_boolean() {
                    Ok(())
                } else {
                    bad(k, "is not a boolean")
                }
            };
            let number = || -> R<()> {
                if v.is_number() {
                    Ok(())
                } else {
                    bad(k, "is not a number")
                }
            };
            match k.as_str() {
                "$schema" => {
                    string()?;
                    if !ptr.is_empty()
                        && !super::super::schema_format::uri(v.as_str().unwrap_or(""), true)
                    {
                        return Err(format!("`{}` as a URI", at(k)));
                    }
                }
                "$id" if d >= Draft::D6 => {
                    string()?;
                    if !ptr.is_empty() {
                        return Err(format!("an embedded `$id` (`{}`)", at(k)));
                    }
                    let id = v.as_str().unwrap_or("");
                    if d >= Draft::D2019 && id.split_once('#').is_some_and(|(_, f)| !f.is_empty()) {
                        return bad(k, "has a fragment");
                    }
                    uri_reference(id, &at(k))?;
                }
                "id" if d == Draft::D4 => {
                    string()?;
                    if !ptr.is_empty() {
                        return Err(format!("an embedded `id` (`{}`)", at(k)));
                    }
                }
                "$ref" => {
                    string()?;
                    let r = v.as_str().unwrap_or("");
                    if d >= Draft::D6 {
                        uri_reference(r, &at(k))?;
                    }
                    if let Target::Schema(t, p) = self.resolve(r)? {
                        todo.push((p, t));
                    }
                }
                "title" | "description" | "format" => string()?,
                "$comment" | "contentMediaType" | "contentEncoding" if d >= Draft::D7 => {
                    string()?;
                }
                "examples" if d >= Draft::D7 && !v.is_array() => {
                    return bad(k, "is not an array");
                }
                "readOnly" | "writeOnly" if d >= Draft::D7 => boolean()?,
                "deprecated" if d >= Draft::D2019 => boolean()?,
                "multipleOf" => match num(Some(v)) {
                    Some(n) if n > Dec::from_i64(0) => {}
                    _ => return bad(k, "is not a number above 0"),
                },
                "maximum" | "minimum" => number()?,
                "exclusiveMaximum" | "exclusiveMinimum" if d >= Draft::D6 => number()?,
                "exclusiveMaximum" | "exclusiveMinimum" if d == Draft::D4 => {
                    boolean()?;
                    let bound = if k == "exclusiveMaximum" {
                        "maximum"
                    } else {
                        "minimum"
                    };
                    if !o.contains_key(bound) {
                        return bad(k, "has no bound beside it");
                    }
                }
                "maxLength" | "minLength" | "maxItems" | "minItems" | "maxProperties"
                | "minProperties" => non_negative()?,
                "maxContains" | "minContains" if d >= Draft::D2019 => non_negative()?,
                "pattern" => {
                    string()?;
                    self.regex(v.as_str().unwrap_or(""))?;
                }
                "uniqueItems" => boolean()?,
                "additionalItems" | "additionalProperties" if d == Draft::D4 && v.is_boolean() => {}
                "additionalItems" if d >= Draft::D2020 => {}
                "additionalItems" | "additionalProperties" | "not" => schema(todo)?,
                "contains" | "propertyNames" if d >= Draft::D6 => schema(todo)?,
                "if" | "then" | "else" if d >= Draft::D7 => schema(todo)?,
                "contentSchema" if d >= Draft::D2019 => schema(todo)?,
                "items" if d >= Draft::D2020 => schema(todo)?,
                "items" => {
                    if v.is_array() {
                        schema_array(todo)?;
                    } else {
                        schema(todo)?;
                    }
                }
                "prefixItems" if d >= Draft::D2020 => schema_array(todo)?,
                "allOf" | "anyOf" | "oneOf" => schema_array(todo)?,
                "definitions" | "properties" => schema_map(todo)?,
                "$defs" | "dependentSchemas" if d >= Draft::D2019 => schema_map(todo)?,
                "patternProperties" => {
                    schema_map(todo)?;
                    for name in v.as_object().into_iter().flat_map(JsonMap::keys) {
                        self.regex(name)?;
                    }
                }
                "required" => self.string_array(v, &at(k))?,
                "dependencies" | "dependentRequired" => {
                    if k == "dependentRequired" && d < Draft::D2019 {
                        continue;
                    }
                    let Value::Object(m) = v else {
                        return bad(k, "is not an object");
                    };
                    for (name, x) in m {
                        let p = format!("{}/{}", at(k), pointer_token(name));
                        if x.is_array() || k == "dependentRequired" {
                            self.string_array(x, &p)?;
                        } else if self.is_schema(x) {
                            todo.push((p, x));
                        } else {
                            return Err(invalid(&p, "is neither a schema nor an array of names"));
                        }
                    }
                }
                "enum" => match v {
                    Value::Array(a) if d >= Draft::D2019 || !a.is_empty() => {
                        if d < Draft::D2019 && has_duplicates(a) {
                            return bad(k, "holds a value twice");
                        }
                    }
                    _ => return bad(k, "is not a non-empty array"),
                },
                "type" => {
                    let simple = |t: &Value| t.as_str().is_some_and(|t| SIMPLE_TYPES.contains(&t));
                    let ok = match v {
                        Value::Array(a) => {
                            !a.is_empty() && a.iter().all(simple) && !has_duplicates(a)
                        }
                        t => simple(t),
                    };
                    if !ok {
                        return bad(k, "is not a type or a list of types");
                    }
                }
                "unevaluatedProperties"
                | "unevaluatedItems"
                | "$anchor"
                | "$dynamicRef"
                | "$dynamicAnchor"
                | "$recursiveRef"
                | "$recursiveAnchor"
                | "$vocabulary"
                    if d >= Draft::D2019 =>
                {
                    return Err(format!("`{k}` (`{}`)", at(k)));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The metaschemas' `stringArray`: distinct strings (draft-04: at
    /// least one).
    fn string_array(&self, v: &Value, at: &str) -> R<()> {
        match v {
            Value::Array(a)
                if a.iter().all(Value::is_string)
                    && !has_duplicates(a)
                    && (self.draft > Draft::D4 || !a.is_empty()) =>
            {
                Ok(())
            }
            _ => Err(invalid(at, "is not a list of distinct names")),
        }
    }
}

pub(super) fn invalid(at: &str, why: &str) -> String {
    format!("a schema jsonschema/v6 does not compile (`#{at}` {why})")
}

/// The metaschemas' `format: uri-reference` (`validateURIReference`),
/// judged only where `url.Parse` surely accepts it.
fn uri_reference(s: &str, at: &str) -> R<()> {
    if s.contains('\\') {
        return Err(invalid(at, "is not a URI reference"));
    }
    if super::super::schema_format::uri(s, false) {
        Ok(())
    } else {
        Err(format!("`#{at}` as a URI reference"))
    }
}

/// Whether two items of `a` are equal (`uniqueItems` of the metaschemas).
fn has_duplicates(a: &[Value]) -> bool {
    let items: Vec<Option<Inst>> = a.iter().map(json_inst).collect();
    (1..items.len()).any(|i| {
        (0..i).any(|j| match (&items[i], &items[j]) {
            (Some(x), Some(y)) => equals(x, y),
            _ => false,
        })
    })
}
