//! Helm's `toToml`: `toml.NewEncoder(b).Encode(v)` of BurntSushi/toml
//! v1.4.0, as helm v3.17.1 vendors it (`encode.go` `eMap`, `eTable`,
//! `writeKeyValue`, `eElement`): in each table the keys holding values
//! first, then those holding tables, each group sorted; a table's header
//! after a blank line at the top level, nested ones indented two spaces a
//! level; nil values left out; floats in full with at least one decimal.
//!
//! What this engine does not write as the encoder would is refused, never
//! approximated: a value that is not a map at the top, arrays of tables,
//! and inline tables or nil inside arrays.

use super::value::V;

/// The TOML of `v`, or why it is not written here.
pub(crate) fn to_toml(v: &V) -> Result<String, String> {
    let V::Map(m) = v else {
        return Err(refused("a value that is not a map"));
    };
    let mut out = Out {
        text: String::new(),
        written: false,
    };
    out.map(&mut Vec::new(), &m.entries())?;
    Ok(out.text)
}

fn refused(what: &str) -> String {
    format!("toToml of {what} is not supported by gitops-lint, so this template cannot be evaluated offline")
}

struct Out {
    text: String,
    /// `Encoder.hasWritten`: a blank line comes only after something.
    written: bool,
}

impl Out {
    fn write(&mut self, s: &str) {
        self.text.push_str(s);
        self.written = true;
    }

    /// `Encoder.newline`.
    fn newline(&mut self) {
        if self.written {
            self.text.push('\n');
        }
    }

    /// `eMap`: direct keys, then table keys, each sorted.
    fn map(
        &mut self,
        key: &mut Vec<String>,
        m: &std::collections::BTreeMap<String, V>,
    ) -> Result<(), String> {
        let is_table = |v: &V| match v {
            V::Map(_) => true,
            V::List(l) => !l.is_empty() && l.iter().all(|e| matches!(e, V::Map(_))),
            _ => false,
        };
        // BTreeMap order is Go's `sort.Strings` order (bytewise).
        for (k, v) in m.iter().filter(|(_, v)| !is_table(v)) {
            if matches!(v, V::Nil | V::Missing) {
                continue;
            }
            key.push(k.clone());
            self.write(&format!("{}{} = ", indent(key), quoted_key(k)));
            self.element(v)?;
            self.newline();
            key.pop();
        }
        for (k, v) in m.iter().filter(|(_, v)| is_table(v)) {
            let V::Map(sub) = v else {
                return Err(refused("an array of tables"));
            };
            key.push(k.clone());
            // `eTable`.
            if key.len() == 1 {
                self.newline();
            }
            let header: Vec<String> = key.iter().map(|p| quoted_key(p)).collect();
            self.write(&format!("{}[{}]", indent(key), header.join(".")));
            self.newline();
            self.map(key, &sub.entries())?;
            key.pop();
        }
        Ok(())
    }

    /// `eElement` of a value inside a key/value pair.
    fn element(&mut self, v: &V) -> Result<(), String> {
        match v {
            V::Str(s) => self.write(&format!("\"{}\"", escape(s))),
            V::Bool(b) => self.write(if *b { "true" } else { "false" }),
            V::Int(i) | V::Int64(i) => self.write(&i.to_string()),
            V::Float(f) => self.write(&float(*f)),
            V::List(items) => {
                self.write("[");
                for (i, e) in items.iter().enumerate() {
                    if !matches!(
                        e,
                        V::Str(_) | V::Bool(_) | V::Int(_) | V::Int64(_) | V::Float(_)
                    ) {
                        return Err(refused(
                            "an array holding other than strings, numbers and booleans",
                        ));
                    }
                    self.element(e)?;
                    if i + 1 != items.len() {
                        self.write(", ");
                    }
                }
                self.write("]");
            }
            _ => return Err(refused(&format!("a {}", v.type_name()))),
        }
        Ok(())
    }
}

/// `indentStr`: two spaces for each level below the first.
fn indent(key: &[String]) -> String {
    "  ".repeat(key.len().saturating_sub(1))
}

/// `Key.maybeQuoted`: bare when only `A-Za-z0-9_-`.
fn quoted_key(k: &str) -> String {
    if k.is_empty() {
        return "\"\"".into();
    }
    if k.chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
    {
        k.to_string()
    } else {
        format!("\"{}\"", escape(k))
    }
}

/// `dblQuotedReplacer`.
fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\n' => out.push_str("\\n"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if u32::from(c) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\u{:04x}", u32::from(c)));
            }
            c => out.push(c),
        }
    }
    out
}

/// `floatAddDecimal(strconv.FormatFloat(f, 'f', -1, 64))`, `nan`, `inf`.
fn float(f: f64) -> String {
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if f.is_nan() {
        return format!("{sign}nan");
    }
    if f.is_infinite() {
        return format!("{sign}inf");
    }
    // Rust's shortest round-trip digits, written without an exponent, are
    // Go's `'f', -1`.
    let s = format!("{f}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::to_toml;
    use crate::gotemplate::V;

    fn yaml(text: &str) -> V {
        V::from_json(&crate::yaml::parse_first_doc(text).expect("yaml"))
    }

    #[test]
    fn tables_and_values_are_written_as_burntsushi_toml_writes_them() {
        // helm v3.17.1 printed these (`toToml` of each); it also writes
        // `[[l]]` tables, nested arrays and a bare top-level value, which
        // are refused here.
        assert_eq!(
            to_toml(&yaml("numbers: {int: 8080, float: 0.25, neg: -1, exp: 6.02e23}")),
            Ok("[numbers]\n  exp = 602000000000000000000000.0\n  float = 0.25\n  int = 8080.0\n  neg = -1.0\n".to_string())
        );
        assert_eq!(
            to_toml(&yaml("b: {c: x, d: {e: true}, \"k.y\": [1, \"a\"]}\na: \"q\\\"\\n\"\nn: null")),
            Ok("a = \"q\\\"\\n\"\n\n[b]\n  c = \"x\"\n  \"k.y\" = [1.0, \"a\"]\n  [b.d]\n    e = true\n".to_string())
        );
        assert!(to_toml(&yaml("l: [{a: 1}]")).is_err());
        assert!(to_toml(&yaml("l: [[1]]")).is_err());
        assert!(to_toml(&V::Str("x".into())).is_err());
    }
}
