//! `toYaml`: values emitted the way `sigs.k8s.io/yaml.Marshal` (go-yaml v2)
//! does — keys in go-yaml's natural order, sequences not indented under
//! their key, strings quoted only when they would otherwise read as another
//! type or break the syntax, multi-line strings as literal blocks.
//!
//! Not modelled: go-yaml folds plain strings longer than 80 columns at
//! spaces. The folded text reads back as the same value, so only the layout
//! differs.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::value::V;

/// Serialises `v` as YAML, ending in a newline.
#[must_use]
pub(crate) fn to_yaml(v: &V) -> String {
    let mut out = String::new();
    match v {
        V::Map(m) if !m.is_empty() => write_map(&mut out, &m.entries(), 0, false),
        V::List(l) if !l.is_empty() => write_list(&mut out, l, 0, false),
        other => {
            out.push_str(&scalar(other, 0));
            out.push('\n');
        }
    }
    out
}

/// go-yaml v2's key order: letters after other characters, digit runs compared as numbers.
fn key_less(a: &str, b: &str) -> Ordering {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (mut an, mut bn) = (0i128, 0i128);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an
                .saturating_mul(10)
                .saturating_add(i128::from(ar[ai] as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn
                .saturating_mul(10)
                .saturating_add(i128::from(br[bi] as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

fn write_map(out: &mut String, m: &BTreeMap<String, V>, indent: usize, first_inline: bool) {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort_by(|a, b| key_less(a, b));
    for (n, k) in keys.into_iter().enumerate() {
        if n > 0 || !first_inline {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(&scalar(&V::Str(k.clone()), indent));
        out.push(':');
        match &m[k] {
            V::Map(sub) if !sub.is_empty() => {
                out.push('\n');
                write_map(out, &sub.entries(), indent + 2, false);
            }
            V::List(l) if !l.is_empty() => {
                out.push('\n');
                write_list(out, l, indent, false);
            }
            other => {
                out.push(' ');
                out.push_str(&scalar(other, indent + 2));
                out.push('\n');
            }
        }
    }
}

fn write_list(out: &mut String, l: &[V], indent: usize, first_inline: bool) {
    for (n, e) in l.iter().enumerate() {
        if n > 0 || !first_inline {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str("- ");
        match e {
            V::Map(sub) if !sub.is_empty() => write_map(out, &sub.entries(), indent + 2, true),
            V::List(sub) if !sub.is_empty() => write_list(out, sub, indent + 2, true),
            other => {
                out.push_str(&scalar(other, indent + 2));
                out.push('\n');
            }
        }
    }
}

fn scalar(v: &V, indent: usize) -> String {
    match v {
        V::Host(h) => scalar(&h.0.value(), indent),
        V::Missing | V::Nil => "null".into(),
        V::Bool(b) => b.to_string(),
        V::Int(i) => i.to_string(),
        V::Float(f) => {
            let j = v.to_json();
            if j.is_i64() {
                j.to_string()
            } else {
                super::value::format_float_g(*f)
            }
        }
        V::Str(s) => string_scalar(s, indent),
        V::List(_) => "[]".into(),
        V::Map(_) => "{}".into(),
    }
}

/// Would a plain scalar with this text resolve to something other than a string?
fn resolves_non_string(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "", "~", "null", "Null", "NULL", "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO",
        "true", "True", "TRUE", "false", "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF",
        ".inf", ".Inf", ".INF", "-.inf", "-.Inf", "-.INF", "+.inf", ".nan", ".NaN", ".NAN", "<<",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    // go-yaml v2's encoder quotes what its resolver reads as a timestamp.
    if crate::yaml::timestamp_rfc3339(s).is_some() {
        return true;
    }
    let t = s.trim_start_matches(['-', '+']).replace('_', "");
    let lower = t.to_ascii_lowercase();
    if lower.starts_with("0x") || lower.starts_with("0b") || lower.starts_with("0o") {
        return lower.len() > 2;
    }
    !t.is_empty()
        && t.chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit() || c == '.')
        && t.parse::<f64>().is_ok()
        || (t.contains(':')
            && t.split(':')
                .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit())))
}

fn plain_allowed(s: &str) -> bool {
    if s.is_empty() || s.starts_with(' ') || s.ends_with(' ') {
        return false;
    }
    let first = s.chars().next().unwrap_or(' ');
    if "-?:,[]{}#&*!|>'\"%@`".contains(first) {
        // `-`, `?` and `:` may start a plain scalar when followed by a non-space.
        let second = s.chars().nth(1);
        if !(matches!(first, '-' | '?' | ':') && second.is_some_and(|c| c != ' ')) {
            return false;
        }
    }
    if s.contains(": ") || s.contains(" #") || s.ends_with(':') {
        return false;
    }
    s.chars().all(|c| !c.is_control() || c == '\t') && !s.contains('\t')
}

fn string_scalar(s: &str, indent: usize) -> String {
    if s.contains('\n') && s.chars().all(|c| !c.is_control() || c == '\n') {
        let chomp = if s.ends_with("\n\n") || s == "\n" {
            "+"
        } else if s.ends_with('\n') {
            ""
        } else {
            "-"
        };
        let lead = if s.starts_with(' ') { "2" } else { "" };
        let pad = " ".repeat(indent.max(2));
        let body = s.strip_suffix('\n').unwrap_or(s);
        let mut out = format!("|{lead}{chomp}");
        for line in body.split('\n') {
            out.push('\n');
            if !line.is_empty() {
                out.push_str(&pad);
                out.push_str(line);
            }
        }
        return out;
    }
    if resolves_non_string(s) {
        return format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    }
    if plain_allowed(s) {
        return s.to_string();
    }
    if s.chars().any(char::is_control) {
        let mut out = String::from("\"");
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                // go-yaml's `yaml_emitter_write_double_quoted_scalar`.
                '\0' => out.push_str("\\0"),
                '\x07' => out.push_str("\\a"),
                '\x08' => out.push_str("\\b"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\x0b' => out.push_str("\\v"),
                '\x0c' => out.push_str("\\f"),
                '\r' => out.push_str("\\r"),
                '\x1b' => out.push_str("\\e"),
                c if c.is_control() => out.push_str(&format!("\\x{:02X}", c as u32)),
                c => out.push(c),
            }
        }
        out.push('"');
        return out;
    }
    format!("'{}'", s.replace('\'', "''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(pairs: &[(&str, V)]) -> V {
        V::Map(
            pairs
                .iter()
                .map(|(k, v)| ((*k).to_string(), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn double_quoted_escapes_are_go_yamls() {
        // sem-files: `AsConfig` of "tab\there\n".
        assert_eq!(string_scalar("tab\there\n", 2), "\"tab\\there\\n\"");
        assert_eq!(string_scalar("a\x1bb\x01", 2), "\"a\\eb\\x01\"");
    }

    #[test]
    fn nested_structures_match_go_yaml_layout() {
        let v = m(&[
            ("name", V::Str("web".into())),
            ("ports", V::List(vec![V::Float(80.0), V::Float(443.0)])),
            (
                "env",
                V::List(vec![m(&[
                    ("name", V::Str("A".into())),
                    ("value", V::Str("true".into())),
                ])]),
            ),
            ("labels", m(&[("app", V::Str("web".into()))])),
            ("empty", V::Str(String::new())),
        ]);
        assert_eq!(
            to_yaml(&v),
            "empty: \"\"\nenv:\n- name: A\n  value: \"true\"\nlabels:\n  app: web\nname: web\nports:\n- 80\n- 443\n"
        );
    }

    #[test]
    fn special_strings_are_quoted() {
        assert_eq!(to_yaml(&V::Str("a: b".into())), "'a: b'\n");
        assert_eq!(to_yaml(&V::Str("0755".into())), "\"0755\"\n");
        assert_eq!(
            to_yaml(&V::Str("line1\nline2".into())),
            "|-\n  line1\n  line2\n"
        );
    }

    #[test]
    fn key_order_is_natural() {
        assert_eq!(key_less("a2", "a10"), Ordering::Less);
        assert_eq!(key_less("_x", "a"), Ordering::Less);
    }
}
