//! Scalar resolution: raw YAML scalar text (plus its quoting style and tag)
//! into a JSON value, following go-yaml v3 (`resolve.go`) as used by
//! kyaml/Kustomize, then normalised the way the Go JSON round trip that
//! Kubernetes tooling performs normalises it.
//!
//! Knows nothing of documents, anchors or positions.

use base64::Engine as _;
use saphyr_parser::{ScalarStyle, Tag};
use serde_json::{Number, Value};

use super::Dialect;

/// The core-schema prefix that `!!` expands to.
const CORE: &str = "tag:yaml.org,2002:";

/// What a scalar's tag asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TagKind {
    /// No tag, or the non-specific `!`: resolve from the text.
    None,
    /// A core-schema tag (`!!int`, ...), by its suffix.
    Core(CoreTag),
    /// Any other tag: go-yaml cannot resolve it, so the text stays a string.
    Custom,
}

/// The core-schema tags that change how a scalar is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CoreTag {
    Str,
    Int,
    Float,
    Bool,
    Null,
    Binary,
    Timestamp,
    Merge,
    /// `!!map`, `!!seq` and unknown `!!x`: ignored on scalars (go-yaml
    /// resolves such a scalar as a string).
    Other,
}

impl CoreTag {
    fn name(self) -> &'static str {
        match self {
            CoreTag::Str => "!!str",
            CoreTag::Int => "!!int",
            CoreTag::Float => "!!float",
            CoreTag::Bool => "!!bool",
            CoreTag::Null => "!!null",
            CoreTag::Binary => "!!binary",
            CoreTag::Timestamp => "!!timestamp",
            CoreTag::Merge => "!!merge",
            CoreTag::Other => "!!other",
        }
    }
}

/// Classifies a parser tag.
pub(crate) fn tag_kind(tag: Option<&Tag>, dialect: Dialect) -> TagKind {
    let Some(tag) = tag else {
        return TagKind::None;
    };
    let suffix = if tag.handle == CORE {
        tag.suffix.as_str()
    } else if tag.handle.is_empty() {
        // Verbatim `!<tag:yaml.org,2002:int>`.
        match tag.suffix.strip_prefix(CORE) {
            Some(s) => s,
            None if tag.suffix == "!" && dialect == Dialect::Kyaml => return TagKind::None,
            None => return TagKind::Custom,
        }
    } else if tag.handle == "!" && tag.suffix.is_empty() && dialect == Dialect::Kyaml {
        // go-yaml v3 treats the non-specific tag `!` as no tag at all
        // (kubectl kustomize reads `! 12` as 12); v2 keeps the text.
        return TagKind::None;
    } else {
        return TagKind::Custom;
    };
    TagKind::Core(match suffix {
        "str" => CoreTag::Str,
        "int" => CoreTag::Int,
        "float" => CoreTag::Float,
        "bool" => CoreTag::Bool,
        "null" => CoreTag::Null,
        "binary" => CoreTag::Binary,
        "timestamp" => CoreTag::Timestamp,
        "merge" => CoreTag::Merge,
        _ => CoreTag::Other,
    })
}

/// What go-yaml resolved a scalar to, before conversion to JSON.
#[derive(Debug, Clone, PartialEq)]
enum Resolved {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    /// A timestamp, already in the RFC 3339 form Go's JSON encoder writes.
    Timestamp(String),
    Str,
}

impl Resolved {
    fn tag_name(&self) -> &'static str {
        match self {
            Resolved::Null => "!!null",
            Resolved::Bool(_) => "!!bool",
            Resolved::Int(_) | Resolved::Uint(_) => "!!int",
            Resolved::Float(_) => "!!float",
            Resolved::Timestamp(_) => "!!timestamp",
            Resolved::Str => "!!str",
        }
    }
}

/// Resolves one scalar used as a value.
///
/// # Errors
/// A core tag the text does not fit (`!!int abc`), or bad `!!binary` data.
pub(crate) fn scalar_value(
    text: &str,
    style: ScalarStyle,
    tag: TagKind,
    dialect: Dialect,
) -> Result<Value, String> {
    let quoted = style != ScalarStyle::Plain;
    match tag {
        TagKind::None if quoted => Ok(Value::String(text.to_owned())),
        TagKind::None => Ok(to_json(resolve_plain(text, true, dialect), text)),
        TagKind::Custom | TagKind::Core(CoreTag::Str | CoreTag::Other | CoreTag::Merge) => {
            Ok(Value::String(text.to_owned()))
        }
        TagKind::Core(CoreTag::Binary) => decode_binary(text).map(Value::String),
        TagKind::Core(want) => {
            let got = resolve_plain(text, want == CoreTag::Timestamp, dialect);
            let got = match (want, got) {
                (CoreTag::Int, r @ (Resolved::Int(_) | Resolved::Uint(_)))
                | (CoreTag::Float, r @ Resolved::Float(_))
                | (CoreTag::Bool, r @ Resolved::Bool(_))
                | (CoreTag::Null, r @ Resolved::Null)
                | (CoreTag::Timestamp, r @ Resolved::Timestamp(_)) => r,
                // go-yaml accepts an integer where a float is asked for.
                #[allow(clippy::cast_precision_loss)]
                (CoreTag::Float, Resolved::Int(i)) => Resolved::Float(i as f64),
                #[allow(clippy::cast_precision_loss)]
                (CoreTag::Float, Resolved::Uint(u)) => Resolved::Float(u as f64),
                (want, got) => {
                    return Err(format!(
                        "cannot decode {} `{}` as a {}",
                        got.tag_name(),
                        shorten(text),
                        want.name()
                    ))
                }
            };
            Ok(to_json(got, text))
        }
    }
}

/// The string a scalar becomes when used as a mapping key.
///
/// Keys are resolved like values, then turned into text the way
/// sigs.k8s.io/yaml turns non-string keys into JSON object keys: integers in
/// decimal, `true`/`false`, `null`, floats in Go's `%g` at 32-bit precision.
/// Timestamps keep their text, as they do there.
///
/// # Errors
/// As [`scalar_value`].
pub(crate) fn scalar_key(
    text: &str,
    style: ScalarStyle,
    tag: TagKind,
    dialect: Dialect,
) -> Result<String, String> {
    if style != ScalarStyle::Plain && tag == TagKind::None {
        return Ok(text.to_owned());
    }
    let resolved = match tag {
        TagKind::None => resolve_plain(text, false, dialect),
        TagKind::Core(CoreTag::Timestamp) => {
            return scalar_value(text, style, tag, dialect).map(|_| text.to_owned())
        }
        _ => return scalar_value(text, style, tag, dialect).map(|v| value_key(&v, text)),
    };
    Ok(resolved_key(&resolved, text))
}

/// The key text of an already-resolved value (a value reached through an
/// alias used as a key). `raw` is used for strings that came from special
/// floats, which are stored as their original text.
pub(crate) fn value_key(value: &Value, raw: &str) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                i.to_string()
            } else if let Some(u) = n.as_u64() {
                u.to_string()
            } else {
                go_g32(n.as_f64().unwrap_or(0.0))
            }
        }
        Value::String(s) => s.clone(),
        // Collections are rejected before this is called; keep the text.
        Value::Array(_) | Value::Object(_) => raw.to_owned(),
    }
}

fn resolved_key(r: &Resolved, text: &str) -> String {
    match r {
        Resolved::Null => "null".to_owned(),
        Resolved::Bool(b) => b.to_string(),
        Resolved::Int(i) => i.to_string(),
        Resolved::Uint(u) => u.to_string(),
        Resolved::Float(f) => go_g32(*f),
        Resolved::Timestamp(_) | Resolved::Str => text.to_owned(),
    }
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`, with sigs.k8s.io/yaml's
/// spellings of the infinities and NaN.
fn go_g32(f: f64) -> String {
    if f.is_nan() {
        return ".nan".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.to_owned();
    }
    #[allow(clippy::cast_possible_truncation)]
    let f32v = f as f32;
    // Rust's `{:e}` gives the shortest round-trip digits: "1.2345e6".
    let e = format!("{f32v:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((e.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let digits = if digits.chars().all(|c| c == '0') {
        "0".to_owned()
    } else {
        digits
    };
    let sign = if neg { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.abs());
    }
    // Plain notation: place the decimal point exp+1 digits in.
    let point = exp + 1;
    if point <= 0 {
        let zeros = "0".repeat(usize::try_from(-point).unwrap_or(0));
        format!("{sign}0.{zeros}{digits}")
    } else {
        let point = usize::try_from(point).unwrap_or(0);
        if digits.len() <= point {
            format!("{sign}{digits}{}", "0".repeat(point - digits.len()))
        } else {
            let (int, frac) = digits.split_at(point);
            format!("{sign}{int}.{frac}")
        }
    }
}

fn decode_binary(text: &str) -> Result<String, String> {
    // Go's base64 decoder skips CR and LF; block scalars carry them.
    let cleaned: String = text.chars().filter(|c| *c != '\n' && *c != '\r').collect();
    base64::engine::general_purpose::STANDARD
        .decode(cleaned.as_bytes())
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .map_err(|_| "!!binary value contains invalid base64 data".to_owned())
}

fn shorten(text: &str) -> String {
    const MAX: usize = 40;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        let cut: String = text.chars().take(MAX).collect();
        format!("{cut}…")
    }
}

/// go-yaml's `resolve()` for a plain scalar (or a tagged one: the tag check
/// happens afterwards). `timestamps`: whether timestamp forms are tried,
/// which go-yaml does only for untagged and `!!timestamp` scalars.
fn resolve_plain(text: &str, timestamps: bool, dialect: Dialect) -> Resolved {
    let Some(&first) = text.as_bytes().first() else {
        return Resolved::Null;
    };
    // go-yaml's hint table: only these first bytes can start a non-string.
    let hint = match first {
        b'+' | b'-' | b'0'..=b'9' => b'D',
        b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~' => b'M',
        b'.' => b'.',
        _ => return Resolved::Str,
    };
    match text {
        "true" | "True" | "TRUE" => return Resolved::Bool(true),
        "false" | "False" | "FALSE" => return Resolved::Bool(false),
        // YAML 1.1 booleans, which go-yaml v2 (sigs.k8s.io/yaml) still reads.
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" if dialect == Dialect::SigsYaml => {
            return Resolved::Bool(true)
        }
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" if dialect == Dialect::SigsYaml => {
            return Resolved::Bool(false)
        }
        "~" | "null" | "Null" | "NULL" => return Resolved::Null,
        ".nan" | ".NaN" | ".NAN" => return Resolved::Float(f64::NAN),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Resolved::Float(f64::INFINITY)
        }
        "-.inf" | "-.Inf" | "-.INF" => return Resolved::Float(f64::NEG_INFINITY),
        "-0" | "-0.0" => return Resolved::Float(-0.0),
        _ => {}
    }
    match hint {
        b'.' => {
            if is_yaml_float(text) {
                if let Some(f) = parse_finite(text) {
                    return Resolved::Float(f);
                }
            }
            Resolved::Str
        }
        b'D' => resolve_number(text, timestamps, dialect),
        _ => Resolved::Str,
    }
}

fn resolve_number(text: &str, timestamps: bool, dialect: Dialect) -> Resolved {
    if timestamps {
        if let Some(ts) = timestamp_rfc3339(text) {
            // go-yaml v2 hands a timestamp to `interface{}` as its text.
            return Resolved::Timestamp(match dialect {
                Dialect::Kyaml => ts,
                Dialect::SigsYaml => text.to_owned(),
            });
        }
    }
    let plain: std::borrow::Cow<'_, str> = if text.contains('_') {
        text.replace('_', "").into()
    } else {
        text.into()
    };
    match go_parse_int(&plain, 0) {
        Some(i) => return Resolved::Int(i),
        None => {
            if let Some(u) = go_parse_uint(&plain, 0) {
                return Resolved::Uint(u);
            }
        }
    }
    if is_yaml_float(&plain) {
        if let Some(f) = parse_finite(&plain) {
            return Resolved::Float(f);
        }
    }
    // go-yaml retries explicit prefixes with the sign inside the digits
    // (`0b-1` is -1); replicate that quirk.
    for (prefix, base) in [("0b", 2), ("0o", 8)] {
        if let Some(rest) = plain.strip_prefix(prefix) {
            if let Some(i) = go_parse_int(rest, base) {
                return Resolved::Int(i);
            }
            if let Some(u) = go_parse_uint(rest, base) {
                return Resolved::Uint(u);
            }
        } else if let Some(rest) = plain.strip_prefix('-').and_then(|p| p.strip_prefix(prefix)) {
            if let Some(i) = go_parse_int(&format!("-{rest}"), base) {
                return Resolved::Int(i);
            }
        }
    }
    Resolved::Str
}

/// go-yaml's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `ParseFloat` fails with a range error where the value overflows.
fn parse_finite(s: &str) -> Option<f64> {
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// Go's `strconv.ParseUint(s, base, 64)`; base 0 reads `0x`, `0o`, `0b` and
/// a bare leading `0` (octal) prefix. No sign is accepted.
fn go_parse_uint(s: &str, base: u32) -> Option<u64> {
    if s.is_empty() {
        return None;
    }
    let (digits, base) = if base == 0 {
        let b = s.as_bytes();
        if b[0] == b'0' {
            match b.get(1).map(u8::to_ascii_lowercase) {
                Some(b'b') if b.len() >= 3 => (&s[2..], 2),
                Some(b'o') if b.len() >= 3 => (&s[2..], 8),
                Some(b'x') if b.len() >= 3 => (&s[2..], 16),
                _ => (&s[1..], 8),
            }
        } else {
            (s, 10)
        }
    } else {
        (s, base)
    };
    let mut n: u64 = 0;
    for c in digits.chars() {
        let d = c.to_digit(36)?;
        if d >= base {
            return None;
        }
        n = n.checked_mul(u64::from(base))?.checked_add(u64::from(d))?;
    }
    Some(n)
}

/// Go's `strconv.ParseInt(s, base, 64)`.
fn go_parse_int(s: &str, base: u32) -> Option<i64> {
    let (neg, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let u = go_parse_uint(rest, base)?;
    if neg {
        if u <= i64::MAX.unsigned_abs() {
            i64::try_from(u).ok().map(|v| -v)
        } else if u == i64::MIN.unsigned_abs() {
            Some(i64::MIN)
        } else {
            None
        }
    } else {
        i64::try_from(u).ok()
    }
}

/// Converts a resolved scalar to JSON as Kubernetes tooling sees it after
/// Go's JSON round trip: a float with an integral value is written by Go as
/// an integer (`1e3` → `1000`, `-0` → `0`), so it becomes one here.
/// Infinities and NaN have no JSON form; they stay strings holding the
/// original text (Go's encoder would refuse them).
fn to_json(r: Resolved, text: &str) -> Value {
    match r {
        Resolved::Null => Value::Null,
        Resolved::Bool(b) => Value::Bool(b),
        Resolved::Int(i) => Value::from(i),
        Resolved::Uint(u) => Value::from(u),
        Resolved::Float(f) => float_json(f).unwrap_or_else(|| Value::String(text.to_owned())),
        Resolved::Timestamp(s) => Value::String(s),
        Resolved::Str => Value::String(text.to_owned()),
    }
}

fn float_json(f: f64) -> Option<Value> {
    if !f.is_finite() {
        return None;
    }
    if f.fract() == 0.0 {
        // Go prints the shortest round-trip digits without an exponent below
        // 1e21, and the reader then sees an integer if one fits; Rust's
        // `Display` prints the same digits.
        if f.abs() < 1e21 {
            let text = format!("{f}");
            if let Ok(i) = text.parse::<i64>() {
                return Some(Value::from(i));
            }
            if let Ok(u) = text.parse::<u64>() {
                return Some(Value::from(u));
            }
        }
    }
    Number::from_f64(f).map(Value::Number)
}

/// go-yaml's `parseTimestamp`, returning the timestamp the way Go's JSON
/// encoder writes a `time.Time` (RFC 3339 with nanoseconds, trailing zeros
/// trimmed, `Z` for a zero offset). Kustomize decodes into `interface{}`
/// with go-yaml v3, which yields a `time.Time` for these forms, so
/// `kubectl kustomize` prints `2001-12-14` as `"2001-12-14T00:00:00Z"`.
///
/// Accepted (go-yaml's list): `YYYY-M-D`, `YYYY-M-DTh:m:s[.f](Z|±hh:mm)`
/// (also lower-case `t`), and `YYYY-M-D h:m:s[.f]` (UTC; any run of spaces).
pub fn timestamp_rfc3339(s: &str) -> Option<String> {
    let b = s.as_bytes();
    // Quick check, as go-yaml: exactly four digits, then '-'.
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return None;
    }
    let mut cur = Cursor { b, i: 5 };
    let year = atoi(&b[..4]);
    let month = cur.num12()?;
    cur.lit(b'-')?;
    let day = cur.num12()?;
    if !(1..=12).contains(&month) || day < 1 || day > days_in(month, year) {
        return None;
    }
    let date = format!("{year:04}-{month:02}-{day:02}");
    if cur.done() {
        return Some(format!("{date}T00:00:00Z"));
    }
    let zoned = match b[cur.i] {
        b'T' | b't' => {
            cur.i += 1;
            true
        }
        b' ' => {
            while cur.i < b.len() && b[cur.i] == b' ' {
                cur.i += 1;
            }
            false
        }
        _ => return None,
    };
    let hour = cur.num12()?;
    cur.lit(b':')?;
    let min = cur.num12()?;
    cur.lit(b':')?;
    let sec = cur.num12()?;
    if hour > 23 || min > 59 || sec > 59 {
        return None;
    }
    let mut nanos = String::new();
    if cur.i + 1 < b.len() && matches!(b[cur.i], b'.' | b',') && b[cur.i + 1].is_ascii_digit() {
        cur.i += 1;
        let start = cur.i;
        while cur.i < b.len() && b[cur.i].is_ascii_digit() {
            cur.i += 1;
        }
        // Go keeps nine digits and drops the rest.
        let frac = &s[start..cur.i.min(start + 9)];
        frac.trim_end_matches('0').clone_into(&mut nanos);
    }
    let zone = if zoned {
        match b.get(cur.i) {
            Some(b'Z') => {
                cur.i += 1;
                "Z".to_owned()
            }
            Some(&sign @ (b'+' | b'-')) => {
                let z = b.get(cur.i..cur.i + 6)?;
                if z[3] != b':' || !z[1..3].iter().chain(&z[4..6]).all(u8::is_ascii_digit) {
                    return None;
                }
                let (hh, mm) = (atoi(&z[1..3]), atoi(&z[4..6]));
                if hh > 24 || mm > 60 {
                    return None;
                }
                cur.i += 6;
                if hh == 0 && mm == 0 {
                    "Z".to_owned()
                } else {
                    format!("{}{hh:02}:{mm:02}", char::from(sign))
                }
            }
            _ => return None,
        }
    } else {
        "Z".to_owned()
    };
    if !cur.done() {
        return None;
    }
    let frac = if nanos.is_empty() {
        String::new()
    } else {
        format!(".{nanos}")
    };
    Some(format!("{date}T{hour:02}:{min:02}:{sec:02}{frac}{zone}"))
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl Cursor<'_> {
    /// One or two digits, as Go's layout elements `1`, `2`, `15`, `4`, `5`.
    fn num12(&mut self) -> Option<u32> {
        let d0 = *self.b.get(self.i).filter(|c| c.is_ascii_digit())?;
        self.i += 1;
        let mut n = u32::from(d0 - b'0');
        if let Some(&d1) = self.b.get(self.i).filter(|c| c.is_ascii_digit()) {
            self.i += 1;
            n = n * 10 + u32::from(d1 - b'0');
        }
        Some(n)
    }

    fn lit(&mut self, c: u8) -> Option<()> {
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    fn done(&self) -> bool {
        self.i == self.b.len()
    }
}

fn atoi(digits: &[u8]) -> u32 {
    digits.iter().fold(0, |n, d| n * 10 + u32::from(d - b'0'))
}

fn days_in(month: u32, year: u32) -> u32 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn value_k(text: &str, style: ScalarStyle, tag: TagKind) -> Result<Value, String> {
        scalar_value(text, style, tag, Dialect::Kyaml)
    }

    fn key_k(text: &str, style: ScalarStyle, tag: TagKind) -> Result<String, String> {
        scalar_key(text, style, tag, Dialect::Kyaml)
    }

    fn tag_k(tag: Option<&Tag>) -> TagKind {
        tag_kind(tag, Dialect::Kyaml)
    }

    fn plain(s: &str) -> Value {
        value_k(s, ScalarStyle::Plain, TagKind::None)
            .expect("untagged plain scalars always resolve")
    }

    /// Resolution table; each row was checked against `kubectl kustomize`
    /// v5.5.0 output where the value is representable in JSON.
    #[test]
    fn plain_scalars_resolve_like_go_yaml() {
        let table: &[(&str, Value)] = &[
            ("", Value::Null),
            ("~", Value::Null),
            ("null", Value::Null),
            ("Null", Value::Null),
            ("NULL", Value::Null),
            ("nULL", json!("nULL")),
            ("true", json!(true)),
            ("True", json!(true)),
            ("TRUE", json!(true)),
            ("false", json!(false)),
            ("FALSE", json!(false)),
            ("tRUE", json!("tRUE")),
            ("yes", json!("yes")),
            ("no", json!("no")),
            ("on", json!("on")),
            ("off", json!("off")),
            ("y", json!("y")),
            ("n", json!("n")),
            ("0", json!(0)),
            ("00", json!(0)),
            ("0755", json!(493)),
            ("0644", json!(420)),
            ("0o755", json!(493)),
            ("0O755", json!(493)),
            ("0x1F", json!(31)),
            ("0X1f", json!(31)),
            ("-0x1F", json!(-31)),
            ("0b101", json!(5)),
            ("-0b101", json!(-5)),
            ("0b-1", json!(-1)),
            ("1_000", json!(1000)),
            ("1__0_", json!(10)),
            ("_1", json!("_1")),
            ("+1", json!(1)),
            ("-17", json!(-17)),
            ("08", json!(8)),
            ("0800", json!(800)),
            ("9223372036854775807", json!(i64::MAX)),
            ("-9223372036854775808", json!(i64::MIN)),
            ("9223372036854775808", json!(9_223_372_036_854_775_808_u64)),
            (
                "12345678901234567890",
                json!(12_345_678_901_234_567_890_u64),
            ),
            ("99999999999999999999", json!(1e20)),
            ("-9223372036854775809", json!(-9.223_372_036_854_776e18)),
            (
                "1.2345678901234567e18",
                json!(1_234_567_890_123_456_800_i64),
            ),
            ("1.5", json!(1.5)),
            ("1.0", json!(1)),
            ("1.", json!(1)),
            ("0.0", json!(0)),
            ("-0", json!(0)),
            ("-0.0", json!(0)),
            (".5", json!(0.5)),
            ("+.5", json!(0.5)),
            ("-.5", json!(-0.5)),
            ("1e3", json!(1000)),
            ("-1.0E+2", json!(-100)),
            ("1e20", json!(1e20)),
            ("1e-7", json!(1e-7)),
            ("1_000.5", json!(1000.5)),
            (".5_0", json!(".5_0")),
            ("1e400", json!("1e400")),
            (".inf", json!(".inf")),
            ("-.Inf", json!("-.Inf")),
            ("+.INF", json!("+.INF")),
            (".nan", json!(".nan")),
            (".", json!(".")),
            ("+", json!("+")),
            ("-", json!("-")),
            ("0x", json!("0x")),
            ("1.2.3", json!("1.2.3")),
            ("1e", json!("1e")),
            ("0x1p3", json!("0x1p3")),
            ("1,000", json!("1,000")),
            ("12:30", json!("12:30")),
            ("<<", json!("<<")),
            ("infinity", json!("infinity")),
            ("NaN", json!("NaN")),
            ("2001-12-14", json!("2001-12-14T00:00:00Z")),
            ("2001-1-4", json!("2001-01-04T00:00:00Z")),
            (
                "2001-12-14t21:59:43.10-05:00",
                json!("2001-12-14T21:59:43.1-05:00"),
            ),
            ("2001-12-14 21:59:43.10", json!("2001-12-14T21:59:43.1Z")),
            ("2001-12-14   21:59:43", json!("2001-12-14T21:59:43Z")),
            (
                "2001-12-14T21:59:43.123456789+01:30",
                json!("2001-12-14T21:59:43.123456789+01:30"),
            ),
            (
                "2001-12-14T21:59:43.1000000001Z",
                json!("2001-12-14T21:59:43.1Z"),
            ),
            (
                "2001-12-14T21:59:43.10+00:00",
                json!("2001-12-14T21:59:43.1Z"),
            ),
            ("2001-12-14T1:2:3Z", json!("2001-12-14T01:02:03Z")),
            ("0001-01-01", json!("0001-01-01T00:00:00Z")),
            ("2000-02-29", json!("2000-02-29T00:00:00Z")),
            ("2001-02-29", json!("2001-02-29")),
            ("2001-02-30", json!("2001-02-30")),
            ("2001-12-14T24:00:00Z", json!("2001-12-14T24:00:00Z")),
            (
                "2001-12-14 21:59:43.10 -5",
                json!("2001-12-14 21:59:43.10 -5"),
            ),
            ("2001-12-14T21:59:43", json!("2001-12-14T21:59:43")),
            ("12001-12-14", json!("12001-12-14")),
            ("hello", json!("hello")),
        ];
        for (input, want) in table {
            assert_eq!(&plain(input), want, "plain scalar {input:?}");
        }
    }

    #[test]
    fn quoted_and_block_scalars_are_strings() {
        for style in [
            ScalarStyle::SingleQuoted,
            ScalarStyle::DoubleQuoted,
            ScalarStyle::Literal,
            ScalarStyle::Folded,
        ] {
            for s in ["0755", "true", "null", "", "1e3", "2001-12-14"] {
                assert_eq!(
                    value_k(s, style, TagKind::None),
                    Ok(json!(s)),
                    "{style:?} {s:?}"
                );
            }
        }
    }

    fn core(t: CoreTag) -> TagKind {
        TagKind::Core(t)
    }

    #[test]
    fn core_tags_force_the_type() {
        let dq = ScalarStyle::DoubleQuoted;
        let p = ScalarStyle::Plain;
        assert_eq!(value_k("0755", dq, core(CoreTag::Int)), Ok(json!(493)));
        assert_eq!(value_k("12", p, core(CoreTag::Str)), Ok(json!("12")));
        assert_eq!(value_k("1", p, core(CoreTag::Float)), Ok(json!(1)));
        assert_eq!(value_k("1.5", dq, core(CoreTag::Float)), Ok(json!(1.5)));
        assert_eq!(value_k("true", dq, core(CoreTag::Bool)), Ok(json!(true)));
        assert_eq!(value_k("", p, core(CoreTag::Null)), Ok(Value::Null));
        assert_eq!(
            value_k("aGVsbG8=", p, core(CoreTag::Binary)),
            Ok(json!("hello"))
        );
        assert_eq!(
            value_k("aGVs\nbG8=\n", ScalarStyle::Literal, core(CoreTag::Binary)),
            Ok(json!("hello"))
        );
        assert_eq!(
            value_k("2001-12-14", dq, core(CoreTag::Timestamp)),
            Ok(json!("2001-12-14T00:00:00Z"))
        );
        assert_eq!(
            value_k("abc", p, core(CoreTag::Int)),
            Err("cannot decode !!str `abc` as a !!int".to_owned())
        );
        assert_eq!(
            value_k("1.5", p, core(CoreTag::Int)),
            Err("cannot decode !!float `1.5` as a !!int".to_owned())
        );
        assert_eq!(
            value_k("yes", p, core(CoreTag::Bool)),
            Err("cannot decode !!str `yes` as a !!bool".to_owned())
        );
        assert_eq!(
            value_k("x", p, core(CoreTag::Null)),
            Err("cannot decode !!str `x` as a !!null".to_owned())
        );
        assert_eq!(
            value_k("2001-12-14", p, core(CoreTag::Int)),
            Err("cannot decode !!str `2001-12-14` as a !!int".to_owned())
        );
        assert!(value_k("not base64!", p, core(CoreTag::Binary)).is_err());
        // A custom tag: go-yaml cannot resolve it, the text stays a string
        // (kubectl kustomize prints `!foo 3` as "3").
        assert_eq!(value_k("3", p, TagKind::Custom), Ok(json!("3")));
    }

    #[test]
    fn keys_become_text_like_sigs_k8s_yaml() {
        let p = ScalarStyle::Plain;
        let key = |s: &str| key_k(s, p, TagKind::None).expect("plain keys resolve");
        assert_eq!(key("name"), "name");
        assert_eq!(key("0755"), "493");
        assert_eq!(key("~"), "null");
        assert_eq!(key(""), "null");
        assert_eq!(key("True"), "true");
        assert_eq!(key("1_0"), "10");
        assert_eq!(key("1.0"), "1");
        assert_eq!(key("1.5"), "1.5");
        assert_eq!(key("1e3"), "1000");
        assert_eq!(key("1e6"), "1e+06");
        assert_eq!(key("0.0001"), "0.0001");
        assert_eq!(key("0.00001"), "1e-05");
        assert_eq!(key("1234567"), "1234567");
        assert_eq!(key("1234567.5"), "1.2345675e+06");
        assert_eq!(key(".inf"), ".inf");
        assert_eq!(key("2001-12-14"), "2001-12-14");
        assert_eq!(key("on"), "on");
        assert_eq!(
            key_k("0755", ScalarStyle::DoubleQuoted, TagKind::None),
            Ok("0755".to_owned())
        );
        assert_eq!(key_k("7", p, core(CoreTag::Str)), Ok("7".to_owned()));
    }

    #[test]
    fn sigs_yaml_reads_yaml_1_1_booleans_and_keeps_dates() {
        let p = ScalarStyle::Plain;
        let v = |s: &str| scalar_value(s, p, TagKind::None, Dialect::SigsYaml).expect("resolves");
        for word in [
            "y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE",
        ] {
            assert_eq!(v(word), json!(true), "{word}");
        }
        for word in [
            "n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "FALSE",
        ] {
            assert_eq!(v(word), json!(false), "{word}");
        }
        assert_eq!(v("yES"), json!("yES"));
        assert_eq!(v("0755"), json!(493));
        assert_eq!(v("1e3"), json!(1000));
        assert_eq!(v("2001-12-14"), json!("2001-12-14"));
        assert_eq!(
            v("2001-12-14t21:59:43.10-05:00"),
            json!("2001-12-14t21:59:43.10-05:00")
        );
        assert_eq!(
            scalar_value(
                "on",
                ScalarStyle::DoubleQuoted,
                TagKind::None,
                Dialect::SigsYaml
            ),
            Ok(json!("on"))
        );
        assert_eq!(
            scalar_key("on", p, TagKind::None, Dialect::SigsYaml),
            Ok("true".to_owned())
        );
        let bang = Tag {
            handle: "!".to_owned(),
            suffix: String::new(),
        };
        assert_eq!(tag_kind(Some(&bang), Dialect::SigsYaml), TagKind::Custom);
        assert_eq!(tag_kind(Some(&bang), Dialect::Kyaml), TagKind::None);
    }

    #[test]
    fn tags_classify() {
        let t = |h: &str, s: &str| {
            tag_k(Some(&Tag {
                handle: h.to_owned(),
                suffix: s.to_owned(),
            }))
        };
        assert_eq!(t(CORE, "int"), core(CoreTag::Int));
        assert_eq!(t("", "tag:yaml.org,2002:str"), core(CoreTag::Str));
        assert_eq!(t("!", ""), TagKind::None);
        assert_eq!(t("!", "Ref"), TagKind::Custom);
        assert_eq!(t(CORE, "map"), core(CoreTag::Other));
        assert_eq!(tag_k(None), TagKind::None);
    }
}
