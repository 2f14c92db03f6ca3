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
        Value::String(s) if block_literal_keeps(s) => {
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

/// Whether a multi-line string reads back the same from a `|` / `|-`
/// block: its indentation is detected from its first non-empty line (which
/// must not start with a space), clipping keeps one final newline at most,
/// and only `\n` and tabs may appear among control and line-break
/// characters (YAML 1.1 also breaks lines at NEL, LS and PS).
fn block_literal_keeps(s: &str) -> bool {
    s.contains('\n')
        && !s.ends_with("\n\n")
        && !s
            .split('\n')
            .find(|l| !l.is_empty())
            .is_some_and(|l| l.starts_with(' '))
        && !s.chars().any(|c| {
            (c.is_control() && c != '\n' && c != '\t')
                || matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}')
        })
}

/// Whether `s` as a plain scalar reads back as the string `s` in `dialect`.
fn reads_as_itself(s: &str, dialect: crate::Dialect) -> bool {
    crate::load_all_as(s, dialect, &crate::Limits::default())
        .ok()
        .and_then(|d| d.into_iter().next())
        .is_some_and(|d| d.value.as_str() == Some(s))
}

/// A string as a YAML scalar, quoted when a plain scalar would read
/// differently, as Kustomize reads YAML or as kubectl and Argo CD do
/// (YAML 1.1, where `no`, `on` and `y` are booleans).
fn scalar_str(s: &str) -> String {
    let needs_quotes = s.is_empty()
        || !reads_as_itself(s, crate::Dialect::Kyaml)
        || !reads_as_itself(s, crate::Dialect::SigsYaml)
        || s.starts_with(|c: char| c.is_whitespace() || "-?:,[]{}#&*!|>'\"%@`".contains(c))
        || s.ends_with(char::is_whitespace)
        || s.contains(": ")
        || s.contains(" #")
        || s.chars()
            .any(|c| c.is_control() || matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}'));
    if needs_quotes {
        // JSON escapes are YAML double-quoted escapes. What JSON leaves
        // as it is but YAML does not print (DEL, C1 controls, a BOM) or
        // reads as a line break (NEL, LS, PS) is escaped too.
        serde_json::to_string(s)
            .unwrap_or_default()
            .chars()
            .fold(String::new(), |mut out, c| {
                if (c.is_control() && u32::from(c) >= 0x7f)
                    || matches!(c, '\u{feff}' | '\u{2028}' | '\u{2029}')
                {
                    out.push_str(&format!("\\u{:04X}", u32::from(c)));
                } else {
                    out.push(c);
                }
                out
            })
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::to_yaml;
    use crate::{load_all_as, Dialect, Limits};
    use serde_json::{json, Value};

    fn read_back(text: &str, dialect: Dialect) -> Value {
        load_all_as(text, dialect, &Limits::default())
            .expect("emitted YAML parses")
            .into_iter()
            .next()
            .map(|d| d.into_value())
            .unwrap_or_default()
    }

    /// What `render` prints reads back as the same object both as
    /// Kustomize reads YAML and as kubectl and Argo CD do (YAML 1.1).
    #[test]
    fn strings_read_back_unchanged_in_both_dialects() {
        let strings = [
            "no",
            "yes",
            "on",
            "Off",
            "y",
            "N",
            "~",
            "null",
            "0755",
            "1_000",
            "0x1f",
            "1:20",
            ".inf",
            "true",
            "12e3",
            "plain",
            "a: b",
            "- x",
            "#x",
            "\npadded\n",
            "\n  padded\n",
            "  lead\nx",
            "a\nb",
            "a\nb\n",
            "a\nb\n\n",
            "a\n\n\nb",
            "line1\r\nline2",
            "tab\there",
            "nel\u{85}x",
            "ls\u{2028}x",
            "del\u{7f}x",
            "bom\u{feff}x",
            "bell\u{7}x",
            "",
        ];
        for s in strings {
            let v = json!({"data": {"k": s, s: "key"}, "list": [s]});
            let text = to_yaml(&v);
            for dialect in [Dialect::Kyaml, Dialect::SigsYaml] {
                assert_eq!(
                    read_back(&text, dialect),
                    v,
                    "{s:?} in {dialect:?}:\n{text}"
                );
            }
        }
    }
}
