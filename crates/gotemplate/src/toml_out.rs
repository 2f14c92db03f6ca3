//! Helm's `toToml`: `toml.NewEncoder(b).Encode(v)` of BurntSushi/toml
//! v1.4.0, as helm v3.17.1 vendors it (`encode.go` `eMap`, `eTable`,
//! `writeKeyValue`, `eElement`): in each table the keys holding values
//! first, then those holding tables, each group sorted; a table's header
//! after a blank line at the top level, nested ones indented two spaces a
//! level; nil values left out; floats in full with at least one decimal.
//! Helm 4 vendors v1.6.0, which writes floats otherwise ([`Floats`]).
//!
//! What this engine does not write as the encoder would is refused, never
//! approximated: a value that is not a map at the top, arrays of tables,
//! and inline tables or nil inside arrays.

use super::value::V;

/// How the encoder writes a float: the one difference between the
/// BurntSushi/toml versions Helm 3 and Helm 4 vendor that these values reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Floats {
    /// v1.4.0 (Helm 3): `floatAddDecimal(strconv.FormatFloat(f, 'f', -1, 64))`,
    /// which adds `.0` unless there is a `.`: `8080.0`,
    /// `602000000000000000000000.0`.
    Fixed,
    /// v1.6.0 (Helm 4): `floatAddDecimal(strconv.FormatFloat(f, 'g', -1,
    /// 64))`, which adds `.0` unless there is a `.` or an `e`: `8080.0`,
    /// `6.02e+23`, `1e+06` (`encode.go` `eElement`, `floatAddDecimal`).
    Shortest,
}

/// The TOML of `v`, or why it is not written here.
pub(crate) fn to_toml(v: &V, floats: Floats) -> Result<String, String> {
    let V::Map(m) = v else {
        return Err(refused("a value that is not a map"));
    };
    let mut out = Out {
        text: String::new(),
        written: false,
        floats,
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
    floats: Floats,
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
            V::Float(f) => self.write(&float(*f, self.floats)),
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

/// `floatAddDecimal` of `strconv.FormatFloat` as [`Floats`] says, `nan`,
/// `inf` (a `-` before either when the sign bit is set).
fn float(f: f64, floats: Floats) -> String {
    let sign = if f.is_sign_negative() { "-" } else { "" };
    if f.is_nan() {
        return format!("{sign}nan");
    }
    if f.is_infinite() {
        return format!("{sign}inf");
    }
    let s = match floats {
        // Rust's shortest round-trip digits, written without an exponent,
        // are Go's `'f', -1`.
        Floats::Fixed => format!("{f}"),
        // Go's `'g', -1`: shortest digits, an exponent when it is below -4
        // or from 6 (`strconv` `formatDigits`, `eprec = 6` for shortest).
        Floats::Shortest => super::value::format_float_g(f),
    };
    if s.contains('.') || (floats == Floats::Shortest && s.contains('e')) {
        s
    } else {
        format!("{s}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::{to_toml, Floats};
    use crate::V;

    fn to_toml_v3(v: &V) -> Result<String, String> {
        to_toml(v, Floats::Fixed)
    }

    fn yaml(text: &str) -> V {
        V::from_json(&goyaml::parse_first_doc(text).expect("yaml"))
    }

    #[test]
    fn tables_and_values_are_written_as_burntsushi_toml_writes_them() {
        // helm v3.17.1 printed these (`toToml` of each); it also writes
        // `[[l]]` tables, nested arrays and a bare top-level value, which
        // are refused here.
        assert_eq!(
            to_toml_v3(&yaml("numbers: {int: 8080, float: 0.25, neg: -1, exp: 6.02e23}")),
            Ok("[numbers]\n  exp = 602000000000000000000000.0\n  float = 0.25\n  int = 8080.0\n  neg = -1.0\n".to_string())
        );
        assert_eq!(
            to_toml_v3(&yaml("b: {c: x, d: {e: true}, \"k.y\": [1, \"a\"]}\na: \"q\\\"\\n\"\nn: null")),
            Ok("a = \"q\\\"\\n\"\n\n[b]\n  c = \"x\"\n  \"k.y\" = [1.0, \"a\"]\n  [b.d]\n    e = true\n".to_string())
        );
        assert!(to_toml_v3(&yaml("l: [{a: 1}]")).is_err());
        assert!(to_toml_v3(&yaml("l: [[1]]")).is_err());
        assert!(to_toml_v3(&V::Str("x".into())).is_err());
    }

    #[test]
    fn helm4_floats_are_burntsushi_toml_v1_6_0s() {
        // helm v4.1.4 printed exactly this for `toToml .Values` of these
        // values and `f: -0.0` (helm v3.17.1 printed each in full without
        // an exponent),
        // and `nan`, `inf`, `-inf`, `1e+100` for `float64 "NaN"`, `"Inf"`,
        // `"-Inf"`, `"1e100"`.
        let v = yaml(
            "a: 8080\nb: 6.02e23\nc: 0.1\nd: 1.0e+21\ne: 1.0e-7\ng: 1.5e300\nh: 1000000\ni: 123456.0\nj: 1234567\nk: 0.0001\nl: 0.00001\nm: 0.00012\nnn: 5.0e-324\no: 1.7976931348623157e308\np: 100000\nq: 12345678.9\nr: -2.5e-10\ns: 0\nt: -1\nu: 999999\nw: [1, 2.5, 3e10]\n",
        );
        assert_eq!(
            to_toml(&v, Floats::Shortest).as_deref(),
            Ok("a = 8080.0\nb = 6.02e+23\nc = 0.1\nd = 1e+21\ne = 1e-07\ng = 1.5e+300\nh = 1e+06\ni = 123456.0\nj = 1.234567e+06\nk = 0.0001\nl = 1e-05\nm = 0.00012\nnn = 5e-324\no = 1.7976931348623157e+308\np = 100000.0\nq = 1.23456789e+07\nr = -2.5e-10\ns = 0.0\nt = -1.0\nu = 999999.0\nw = [1.0, 2.5, 3e+10]\n")
        );
        let special = V::map(
            [
                ("nan", f64::NAN),
                ("inf", f64::INFINITY),
                ("ninf", f64::NEG_INFINITY),
                ("big", 1e100),
                ("f", -0.0),
            ]
            .into_iter()
            .map(|(k, f)| (k.to_string(), V::Float(f)))
            .collect(),
        );
        assert_eq!(
            to_toml(&special, Floats::Shortest).as_deref(),
            Ok("big = 1e+100\nf = -0.0\ninf = inf\nnan = nan\nninf = -inf\n")
        );
        // helm v3.17.1: the same values in full.
        assert_eq!(
            to_toml(&yaml("b: 6.02e23\ne: 1.0e-7\nh: 1000000"), Floats::Fixed).as_deref(),
            Ok("b = 602000000000000000000000.0\ne = 0.0000001\nh = 1000000.0\n")
        );
    }
}
