//! Legacy `vars`: `$(NAME)` substitution in the var-reference fields, done
//! once at the top of the build after name references are fixed.

use std::collections::HashMap;

use serde_json::Value;

use super::accumulator::{get_ci, var_name, Acc};
use super::fieldpath::{self, lookup, split_var_path, CreateKind};
use super::smp::scalar_text;
use super::{content, KResult};

/// Kustomize's `DoReplacements` on one string. Returns the typed value when
/// the whole string is one reference.
fn expand(input: &str, map: &HashMap<String, Value>) -> Value {
    let b = input.as_bytes();
    let mut out = String::new();
    let mut checkpoint = 0;
    let mut cursor = 0;
    while cursor < b.len() {
        if b[cursor] == b'$' && cursor + 1 < b.len() {
            out.push_str(&input[checkpoint..cursor]);
            let rest = &input[cursor + 1..];
            let (read, is_var, advance) = match rest.as_bytes()[0] {
                b'$' => ("$".to_string(), false, 1),
                b'(' => match rest.find(')') {
                    Some(i) => (rest[1..i].to_string(), true, i + 1),
                    None => ("$(".to_string(), false, 1),
                },
                _ => {
                    let c = rest.chars().next().unwrap_or_default();
                    (format!("${c}"), false, c.len_utf8())
                }
            };
            if is_var {
                let mapped = match map.get(&read) {
                    Some(v @ (Value::String(_) | Value::Number(_) | Value::Bool(_))) => v.clone(),
                    _ => Value::String(format!("$({read})")),
                };
                if input == format!("$({read})") {
                    return mapped;
                }
                out.push_str(&scalar_text(&mapped));
            } else {
                out.push_str(&read);
            }
            cursor += advance;
            checkpoint = cursor + 1;
        }
        cursor += 1;
    }
    if checkpoint <= input.len() {
        out.push_str(&input[checkpoint.min(input.len())..]);
    }
    Value::String(out)
}

fn set(node: &mut Value, map: &HashMap<String, Value>) -> KResult<()> {
    match node {
        Value::String(s) => {
            let v = expand(s, map);
            *node = v;
        }
        Value::Object(m) => {
            for v in m.values_mut() {
                if let Value::String(s) = v {
                    let n = expand(s, map);
                    *v = n;
                }
            }
        }
        Value::Array(a) => {
            for it in a.iter_mut() {
                let Value::String(s) = it else {
                    return Err(content("invalid value type expect a string"));
                };
                let n = expand(s, map);
                *it = n;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Resolves the accumulated vars.
///
/// # Errors
/// Vars whose object or field cannot be found, or is ambiguous.
pub(crate) fn resolve(acc: &mut Acc) -> KResult<()> {
    let mut map = HashMap::new();
    for (v, file) in &acc.vars {
        let name = var_name(v);
        let Some(i) = acc.res.iter().position(|r| r.ref_vars.contains(&name)) else {
            return Err(content(format!(
                "`{file}`: var `{name}` cannot be mapped to a field in the set of known resources"
            ))
            .at(file.clone(), None));
        };
        let i = &i;
        let fp = get_ci(v, "fieldref")
            .and_then(|f| get_ci(f, "fieldPath"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or("metadata.name");
        let parts = split_var_path(fp);
        let Some(val) = lookup(&acc.res[*i].v, &parts) else {
            return Err(content(format!(
                "`{file}`: field specified in var `{name}` not found in corresponding resource"
            ))
            .at(file.clone(), None));
        };
        map.insert(name.clone(), val.clone());
    }
    if map.is_empty() {
        return Ok(());
    }
    // A shared handle, not a copy of the specs: `acc.res` is borrowed mutably below.
    let config = acc.config.clone();
    for r in &mut acc.res {
        for fs in &config.var_reference {
            fieldpath::apply(&mut r.v, fs, CreateKind::None, &mut |n: &mut Value| {
                set(n, &map)
            })?;
        }
    }
    Ok(())
}
