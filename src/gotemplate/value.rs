//! Values as Go's `text/template` sees them when Argo CD executes a template
//! over `map[string]any` parameters, and how Go's `fmt` prints them.
//!
//! Parameters come from JSON/YAML decoding in Go, so every number in them is a
//! `float64`; integers appear only from template literals and functions such
//! as `add` or `len`. The distinction matters: `eq 3.0 3` is an error in Go.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

/// An object whose fields and methods the host program provides, as Helm's
/// `.Files` (`Get`, `GetBytes`, `Glob`, `Lines`, `AsConfig`, `AsSecrets`) and
/// `.Capabilities` (`APIVersions.Has`, `KubeVersion.Version`...) are Go
/// values with methods. Templates reach it as Go would: `.Files.Get "x"`
/// calls the method `Get` with `"x"` (a pipeline's value comes last, as
/// Go passes it: `"x" | .Files.Get`), `(.Files.Glob "*").AsConfig` and
/// `.Capabilities.KubeVersion.Major` read a field or call a method without
/// arguments.
pub trait HostObject: std::fmt::Debug + Send + Sync {
    /// Go's type name, for error messages (`chartutil.Capabilities`).
    fn type_name(&self) -> &'static str;
    /// A field, or a method without arguments; `None` when there is no such
    /// name (Go: "can't evaluate field NAME in type TYPE").
    fn field(&self, name: &str) -> Option<V>;
    /// Calls the method `name` with `args`; `None` when there is no such
    /// method. An `Err` is the method's error (Go: "error calling NAME: ...").
    fn call(&self, name: &str, args: &[V]) -> Option<Result<V, String>>;
    /// The plain value the object stands for where a template ranges over
    /// it, prints it or passes it to a function (Helm's `Files` is a map of
    /// paths to contents, `VersionSet` a list of strings, `KubeVersion`
    /// prints as its `String()`).
    fn value(&self) -> V;
    /// Whether Go sees a map here (Helm's `Files` is a
    /// `map[string][]byte`): an unknown field is then a missing key, and an
    /// unknown name given arguments fails as "NAME is not a method but has
    /// arguments", not "can't evaluate field".
    fn is_map(&self) -> bool {
        false
    }
    /// Go's `reflect.Kind` name (`kindOf`): `ptr` for a pointer to a
    /// struct, `struct`, `map`, `slice`. A map or slice is empty, and false,
    /// when [`HostObject::value`] is.
    fn kind(&self) -> &'static str {
        "ptr"
    }
    /// How `fmt` prints it with `%v`, at the top (`top`) or inside another
    /// value: Go prints a pointer to a struct as `&{…}` at the top and as
    /// its address inside.
    fn format(&self, top: bool) -> String {
        let _ = top;
        self.value().go_string()
    }
    /// How an action prints it (text/template `printableValue`: a pointer
    /// is followed, and an addressable value whose pointer has `String`
    /// prints with it).
    fn printed(&self) -> String {
        self.format(true)
    }
    /// What `encoding/json` writes for it.
    fn json(&self) -> Json {
        Json::Value(self.value())
    }
    /// What it becomes once passed to a function as an `interface{}`: a
    /// copy, which no longer reaches the methods of its pointer (`None`:
    /// itself).
    fn boxed(&self) -> Option<V> {
        None
    }
    /// What Sprig's `strval` (`toString`, `quote`) makes of it when that is
    /// not `%v`: a `[]byte` is its text. An `Err` when that text cannot be
    /// represented (bytes that are not UTF-8).
    fn as_text(&self) -> Option<Result<String, String>> {
        None
    }
}

/// What `encoding/json` writes for a [`HostObject`].
#[derive(Debug, Clone, PartialEq)]
pub enum Json {
    /// Whatever it writes for this value.
    Value(V),
    /// A struct: an object with these members, in field order (`omitempty`
    /// already applied).
    Object(Vec<(String, V)>),
}

/// A shared [`HostObject`] inside a [`V`]; two are equal when they are the
/// same object.
#[derive(Debug, Clone)]
pub struct Host(pub Arc<dyn HostObject>);

impl Host {
    /// [`V::json_view`] of the object.
    fn json_view(&self) -> V {
        match self.0.json() {
            Json::Value(v) => v.json_view(),
            Json::Object(members) => V::Map(
                members
                    .into_iter()
                    .map(|(k, v)| (k, v.json_view()))
                    .collect(),
            ),
        }
    }
}

impl PartialEq for Host {
    fn eq(&self, other: &Host) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The fixed part of [`V::cost`]: what one node takes beside its text.
pub(crate) const NODE_COST: usize = 32;

/// A template value.
#[derive(Debug, Clone, PartialEq)]
pub enum V {
    /// Go's invalid `reflect.Value`: a missing map key. Prints `<no value>`.
    Missing,
    /// A nil interface (JSON `null`). Prints `<nil>`.
    Nil,
    /// `bool`.
    Bool(bool),
    /// `int` / `int64`.
    Int(i64),
    /// `float64`.
    Float(f64),
    /// `string`.
    Str(String),
    /// `[]any`.
    List(Vec<V>),
    /// `map[string]any` (Go prints and ranges maps in key order).
    Map(BTreeMap<String, V>),
    /// An object with host-provided fields and methods.
    Host(Host),
}

impl V {
    /// Converts decoded JSON the way Go's `encoding/json` would (numbers become `float64`).
    #[must_use]
    pub(crate) fn from_json(v: &serde_json::Value) -> V {
        match v {
            serde_json::Value::Null => V::Nil,
            serde_json::Value::Bool(b) => V::Bool(*b),
            serde_json::Value::Number(n) => V::Float(n.as_f64().unwrap_or(0.0)),
            serde_json::Value::String(s) => V::Str(s.clone()),
            serde_json::Value::Array(a) => V::List(a.iter().map(V::from_json).collect()),
            serde_json::Value::Object(o) => V::Map(
                o.iter()
                    .map(|(k, v)| (k.clone(), V::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// Converts to JSON (as `json.Marshal` would see it; `Missing` becomes `null`).
    #[must_use]
    pub(crate) fn to_json(&self) -> serde_json::Value {
        match self {
            V::Missing | V::Nil => serde_json::Value::Null,
            V::Bool(b) => serde_json::Value::Bool(*b),
            V::Int(i) => serde_json::Value::from(*i),
            V::Float(f) => {
                if f.fract() == 0.0 && f.abs() < 9.0e15 {
                    // Whole floats print without a fraction in Go's JSON too.
                    #[allow(clippy::cast_possible_truncation)]
                    serde_json::Value::from(*f as i64)
                } else {
                    serde_json::Number::from_f64(*f)
                        .map_or(serde_json::Value::Null, serde_json::Value::Number)
                }
            }
            V::Str(s) => serde_json::Value::String(s.clone()),
            V::List(l) => serde_json::Value::Array(l.iter().map(V::to_json).collect()),
            V::Map(m) => {
                serde_json::Value::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
            }
            V::Host(h) => h.json_view().to_json(),
        }
    }

    /// The value as `encoding/json` sees it, host objects replaced by what
    /// it writes for them (a struct's members become a map), as
    /// sigs.k8s.io/yaml sees it through JSON.
    #[must_use]
    pub(crate) fn json_view(&self) -> V {
        match self {
            V::Host(h) => h.json_view(),
            V::List(l) => V::List(l.iter().map(V::json_view).collect()),
            V::Map(m) => V::Map(m.iter().map(|(k, v)| (k.clone(), v.json_view())).collect()),
            other => other.clone(),
        }
    }

    /// Go's `template.IsTrue`.
    #[must_use]
    pub(crate) fn truth(&self) -> bool {
        match self {
            V::Missing | V::Nil => false,
            V::Bool(b) => *b,
            V::Int(i) => *i != 0,
            V::Float(f) => *f != 0.0,
            V::Str(s) => !s.is_empty(),
            V::List(l) => !l.is_empty(),
            V::Map(m) => !m.is_empty(),
            V::Host(h) => !matches!(h.0.kind(), "map" | "slice") || h.0.value().truth(),
        }
    }

    /// Go's type name, as `%T` prints it.
    #[must_use]
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            V::Missing | V::Nil => "<nil>",
            V::Bool(_) => "bool",
            V::Int(_) => "int",
            V::Float(_) => "float64",
            V::Str(_) => "string",
            V::List(_) => "[]interface {}",
            V::Map(_) => "map[string]interface {}",
            V::Host(h) => h.0.type_name(),
        }
    }

    /// Go's `reflect.Kind` name, as Sprig's `kindOf` prints it.
    #[must_use]
    pub(crate) fn kind_name(&self) -> &'static str {
        match self {
            V::Missing | V::Nil => "invalid",
            V::Bool(_) => "bool",
            V::Int(_) => "int",
            V::Float(_) => "float64",
            V::Str(_) => "string",
            V::List(_) => "slice",
            V::Map(_) => "map",
            V::Host(h) => h.0.kind(),
        }
    }

    /// What holding this value costs, in bytes: its text plus a fixed charge
    /// per node, so that a budget of cost bounds both the memory a template
    /// holds and the time spent copying it. `None` when it nests deeper than
    /// `max_depth` (deeper values would overflow the recursive printers).
    #[must_use]
    pub(crate) fn cost(&self, max_depth: usize) -> Option<usize> {
        let nested = max_depth.checked_sub(1);
        match self {
            V::Str(s) => Some(NODE_COST.saturating_add(s.len())),
            V::List(l) => {
                let d = nested?;
                l.iter()
                    .try_fold(NODE_COST, |n, e| Some(n.saturating_add(e.cost(d)?)))
            }
            V::Map(m) => {
                let d = nested?;
                m.iter().try_fold(NODE_COST, |n, (k, e)| {
                    Some(n.saturating_add(k.len()).saturating_add(e.cost(d)?))
                })
            }
            _ => Some(NODE_COST),
        }
    }

    /// An upper bound on the length of this value printed as JSON or YAML,
    /// indented or not: every byte of text may be escaped as `\u00XX`, and
    /// every line may be indented two spaces per level.
    #[must_use]
    pub(crate) fn printed_bound(&self) -> usize {
        fn text(s: &str, depth: usize) -> usize {
            let lines = s.bytes().filter(|b| *b == b'\n').count();
            s.len()
                .saturating_mul(6)
                .saturating_add(lines.saturating_mul(depth.saturating_mul(2).saturating_add(4)))
        }
        fn walk(v: &V, depth: usize) -> usize {
            let frame = depth.saturating_mul(2).saturating_add(16);
            match v {
                V::Str(s) => frame.saturating_add(text(s, depth)),
                V::List(l) => l
                    .iter()
                    .fold(frame, |n, e| n.saturating_add(walk(e, depth + 1))),
                V::Map(m) => m.iter().fold(frame, |n, (k, e)| {
                    n.saturating_add(text(k, depth))
                        .saturating_add(walk(e, depth + 1))
                }),
                _ => frame.saturating_add(32),
            }
        }
        walk(self, 0)
    }

    /// `fmt.Sprint(v)`, i.e. `%v`.
    #[must_use]
    pub(crate) fn go_string(&self) -> String {
        let mut s = String::new();
        write_v(&mut s, self, true);
        s
    }
}

fn write_v(out: &mut String, v: &V, top: bool) {
    match v {
        V::Missing => out.push_str(if top { "<no value>" } else { "<nil>" }),
        V::Nil => out.push_str("<nil>"),
        V::Host(h) => out.push_str(&h.0.format(top)),
        V::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        V::Int(i) => {
            let _ = write!(out, "{i}");
        }
        V::Float(f) => out.push_str(&format_float_g(*f)),
        V::Str(s) => out.push_str(s),
        V::List(l) => {
            out.push('[');
            for (i, e) in l.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, e, false);
            }
            out.push(']');
        }
        V::Map(m) => {
            out.push_str("map[");
            for (i, (k, e)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(out, e, false);
            }
            out.push(']');
        }
    }
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`, which is what `%v` prints for a
/// `float64`: the shortest digits, with an exponent when the decimal exponent
/// is below -4 or at least 6 (Go uses precision 6 for that decision when the
/// precision is "shortest"), so `1e6` prints `1e+06`.
#[must_use]
pub(crate) fn format_float_g(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    // Rust's `{:e}` gives the shortest round-tripping digits, like Go's.
    let e = format!("{f:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let (neg, mant) = mant.strip_prefix('-').map_or((false, mant), |m| (true, m));
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let mut out = String::new();
    if neg {
        out.push('-');
    }
    if !(-4..6).contains(&exp) {
        out.push_str(&digits[..1]);
        if digits.len() > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if exp < 0 { '-' } else { '+' });
        let _ = write!(out, "{:02}", exp.abs());
    } else if exp < 0 {
        out.push_str("0.");
        for _ in 0..(-exp - 1) {
            out.push('0');
        }
        out.push_str(&digits);
    } else {
        let point = usize::try_from(exp + 1).unwrap_or(0);
        if digits.len() <= point {
            out.push_str(&digits);
            for _ in digits.len()..point {
                out.push('0');
            }
        } else {
            out.push_str(&digits[..point]);
            out.push('.');
            out.push_str(&digits[point..]);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_go_v() {
        assert_eq!(format_float_g(3.0), "3");
        assert_eq!(format_float_g(8080.0), "8080");
        assert_eq!(format_float_g(1.5), "1.5");
        assert_eq!(format_float_g(0.0001), "0.0001");
        assert_eq!(format_float_g(0.00001), "1e-05");
        assert_eq!(format_float_g(123_456.0), "123456");
        assert_eq!(format_float_g(1e6), "1e+06");
        assert_eq!(format_float_g(-2.25), "-2.25");
        assert_eq!(format_float_g(1_234_567.0), "1.234567e+06");
    }

    #[test]
    fn collections_print_like_go() {
        let v = V::Map(
            [
                (
                    "b".to_string(),
                    V::List(vec![V::Str("x".into()), V::Float(2.0)]),
                ),
                ("a".to_string(), V::Nil),
            ]
            .into_iter()
            .collect(),
        );
        assert_eq!(v.go_string(), "map[a:<nil> b:[x 2]]");
        assert_eq!(V::Missing.go_string(), "<no value>");
    }
}
