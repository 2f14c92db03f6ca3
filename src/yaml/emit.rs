//! Writing values back out as block YAML (for `gitops-lint render`).

use serde_json::Value;

/// Block-style YAML for a value, ending in a newline.
#[must_use]
pub fn to_yaml(v: &Value) -> String {
    let mut out = String::new();
    write_value(v, 0, &mut out, false);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn indent(n: usize, out: &mut String) {
    for _ in 0..n {
        out.push(' ');
    }
}

fn write_value(v: &Value, ind: usize, out: &mut String, inline_first: bool) {
    match v {
        Value::Object(m) if !m.is_empty() => {
            let mut first = true;
            for (k, val) in m {
                if !(first && inline_first) {
                    indent(ind, out);
                }
                first = false;
                out.push_str(&scalar_str(k));
                out.push(':');
                match val {
                    Value::Object(o) if !o.is_empty() => {
                        out.push('\n');
                        write_value(val, ind + 2, out, false);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        out.push('\n');
                        write_value(val, ind, out, false);
                    }
                    _ => {
                        out.push(' ');
                        write_scalar(val, ind + 2, out);
                        out.push('\n');
                    }
                }
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for item in a {
                indent(ind, out);
                out.push_str("- ");
                match item {
                    Value::Object(o) if !o.is_empty() => write_value(item, ind + 2, out, true),
                    Value::Array(x) if !x.is_empty() => {
                        out.push('\n');
                        write_value(item, ind + 2, out, false);
                    }
                    _ => {
                        write_scalar(item, ind + 2, out);
                        out.push('\n');
                    }
                }
            }
        }
        _ => {
            indent(ind, out);
            write_scalar(v, ind, out);
            out.push('\n');
        }
    }
}

fn write_scalar(v: &Value, ind: usize, out: &mut String) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) if s.contains('\n') && !s.contains('\r') && !s.starts_with(' ') => {
            out.push_str(if s.ends_with('\n') { "|\n" } else { "|-\n" });
            for line in s.trim_end_matches('\n').split('\n') {
                if !line.is_empty() {
                    indent(ind, out);
                    out.push_str(line);
                }
                out.push('\n');
            }
            out.pop();
        }
        Value::String(s) => out.push_str(&scalar_str(s)),
        Value::Object(_) => out.push_str("{}"),
        Value::Array(_) => out.push_str("[]"),
    }
}

/// A string as a YAML scalar, quoted when a plain scalar would read differently.
fn scalar_str(s: &str) -> String {
    let needs_quotes = s.is_empty()
        || !crate::yaml::load_all(s)
            .ok()
            .and_then(|d| d.into_iter().next())
            .is_some_and(|d| d.value == Value::String(s.to_string()))
        || s.starts_with(|c: char| c.is_whitespace() || "-?:,[]{}#&*!|>'\"%@`".contains(c))
        || s.ends_with(char::is_whitespace)
        || s.contains(": ")
        || s.contains(" #")
        || s.contains(['\n', '\r', '\t']);
    if needs_quotes {
        serde_json::to_string(s).unwrap_or_default()
    } else {
        s.to_string()
    }
}
