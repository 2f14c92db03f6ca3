//! Hashes and encodings of Sprig (`crypto.go`, `functions.go`): SHA sums,
//! Adler-32, base32 and base64, and the JSON and YAML functions shared by
//! Argo CD's and Helm's sets (Helm's own variants are in [`super::helm`]).

// Every function of the table has its signature (`R`), fallible or not.
#![allow(clippy::unnecessary_wraps)]

use std::collections::BTreeMap;
use std::fmt::Write as _;

use base64::Engine as _;
use sha2::Digest as _;

use crate::args::{arity, fits, one_str, s, R};
use crate::value::V;
use crate::yaml_out;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut acc, b| {
        let _ = write!(acc, "{b:02x}");
        acc
    })
}

/// Sprig's `sha1sum`: SHA-1 (FIPS 180-4) of the string, in hex.
pub(super) fn f_sha1sum(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| hex(&sha1::Sha1::digest(x.as_bytes())))
}

/// Sprig's `sha512sum`.
pub(super) fn f_sha512sum(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| hex(&sha2::Sha512::digest(x.as_bytes())))
}

/// Sprig's `adler32sum`: the Adler-32 checksum, in decimal.
pub(super) fn f_adler32sum(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| {
        let mut adler = adler2::Adler32::new();
        adler.write_slice(x.as_bytes());
        adler.checksum().to_string()
    })
}

/// Sprig's `b32enc` (`base32.StdEncoding`, padded).
pub(super) fn f_b32enc(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| data_encoding::BASE32.encode(x.as_bytes()))
}

/// Sprig's `b32dec`: the decoded string, or the decoding error as the
/// result (Sprig returns `err.Error()`).
pub(super) fn f_b32dec(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| match crate::encoding::base32_std(x.as_bytes()) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => e,
    })
}

pub(super) fn f_sha256sum(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| {
        let d = sha2::Sha256::digest(x.as_bytes());
        d.iter().fold(String::new(), |mut acc, b| {
            let _ = write!(acc, "{b:02x}");
            acc
        })
    })
}

pub(super) fn f_from_json(name: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    match serde_json::from_str::<serde_json::Value>(s(&a[0])?) {
        Ok(v) => Ok(V::from_json(&v)),
        Err(e) if name == "mustFromJson" => Err(e.to_string()),
        Err(_) => Ok(V::Nil),
    }
}

pub(super) fn f_to_json(name: &str, a: &[V], room: usize) -> R {
    arity(a, 1)?;
    let raw = name.contains("Raw");
    fits(a[0].printed_bound(), room)?;
    Ok(V::Str(go_json(&a[0], !raw, false)))
}

pub(super) fn f_to_pretty_json(_: &str, a: &[V], room: usize) -> R {
    arity(a, 1)?;
    fits(a[0].printed_bound(), room)?;
    Ok(V::Str(go_json(&a[0], true, true)))
}

pub(super) fn f_b64enc(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| {
        base64::engine::general_purpose::STANDARD.encode(x.as_bytes())
    })
}

/// Sprig's `b64dec`: the decoded string, or the decoding error as the
/// result (Sprig returns `err.Error()`).
pub(super) fn f_b64dec(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| match crate::encoding::base64_std(x.as_bytes()) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => e,
    })
}

pub(super) fn f_to_yaml(_: &str, a: &[V], room: usize) -> R {
    arity(a, 1)?;
    let v = a[0].json_view();
    fits(yaml_out::printed_bound(&v), room)?;
    Ok(V::Str(yaml_out::helm_to_yaml(&v)))
}

/// Argo CD's `fromYaml`/`fromYamlArray` (`applicationset/utils/utils.go`,
/// copied from Helm's): sigs.k8s.io/yaml as Helm's, a decoding error an
/// execution error.
pub(super) fn f_from_yaml(name: &str, a: &[V], _: usize) -> R {
    f_sigs_from_yaml(name, a)
}

/// Helm's and Argo CD's `fromYaml`/`fromYamlArray` decode with
/// sigs.k8s.io/yaml (`pkg/engine/funcs.go` `fromYAML`): go-yaml v2's YAML
/// 1.1, so a date stays the text it was (`2020-09-07`, not a timestamp) and
/// `on` is true.
fn f_sigs_from_yaml(name: &str, a: &[V]) -> R {
    arity(a, 1)?;
    let text = s(&a[0])?;
    let v = goyaml::load_first_sigs(text, &goyaml::Limits::default())
        .map_err(|e| format!("error unmarshaling YAML: {e}"))?;
    decoded(name, V::from_json(&v))
}

/// What `fromYaml` (a map) or `fromYamlArray` (a list) gives for `v`.
fn decoded(name: &str, v: V) -> R {
    match (name, v) {
        ("fromYaml", V::Map(m)) => Ok(V::Map(m)),
        ("fromYaml", V::Nil) => Ok(V::map(BTreeMap::new())),
        ("fromYamlArray", V::List(l)) => Ok(V::List(l)),
        ("fromYamlArray", V::Nil) => Ok(V::List(Vec::new())),
        (_, other) => Err(format!(
            "error unmarshaling YAML: cannot unmarshal {} into the expected type",
            other.type_name()
        )),
    }
}

/// `json.Marshal` (sorted keys; `escape_html` as Go's default encoder does).
fn go_json(v: &V, escape_html: bool, pretty: bool) -> String {
    let j = v.to_json();
    let text = if pretty {
        serde_json::to_string_pretty(&j)
    } else {
        serde_json::to_string(&j)
    }
    .unwrap_or_default();
    if escape_html {
        html_escape_json(&text)
    } else {
        text
    }
}

/// What Go's `encoding/json` does to JSON text when HTML escaping is on
/// (`json.Marshal`, an `Encoder` by default): `<`, `>`, `&`, U+2028 and
/// U+2029 become `\u` escapes.
pub(super) fn html_escape_json(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}
