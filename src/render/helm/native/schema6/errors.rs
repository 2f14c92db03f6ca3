//! The `ValidationError` tree jsonschema/v6 builds when values fail, and
//! its wording as helm prints it (`kind.go` `LocalizedString`,
//! `ValidationError.Error`).

use std::collections::BTreeMap;

use serde_json::Value;

use super::super::schema6_num::Dec;
use super::Inst;
use crate::manifest::pointer_token;

/// The wording of one error node (`kind.go` `LocalizedString`).
#[derive(Debug)]
pub(super) enum Text {
    /// `kind.Group`: several errors of one schema.
    Group,
    /// `kind.Reference`: the errors of a `$ref`'s target; not printed when
    /// it holds one.
    Reference,
    /// Worded here.
    Says(String),
    /// Not reproduced.
    Unworded,
}

/// One `ValidationError`.
#[derive(Debug)]
pub(super) struct Error {
    pub(super) at: Vec<String>,
    pub(super) text: Text,
    pub(super) causes: Vec<Error>,
    /// Whether the causes come in Go's map order.
    pub(super) shuffled: bool,
}

pub(super) fn says(at: &[String], text: Option<String>) -> Error {
    Error {
        at: at.to_vec(),
        text: text.map_or(Text::Unworded, Text::Says),
        causes: Vec::new(),
        shuffled: false,
    }
}

/// The errors of one schema, each with the map loop it came from, if any.
#[derive(Default)]
pub(super) struct Errors(Vec<(Error, Option<&'static str>)>);

impl Errors {
    pub(super) fn push(&mut self, e: Error) {
        self.0.push((e, None));
    }
    pub(super) fn push_looped(&mut self, e: Error, from: &'static str) {
        self.0.push((e, Some(from)));
    }
    pub(super) fn extend(&mut self, e: Option<Error>) {
        if let Some(e) = e {
            self.push(e);
        }
    }
    /// `validator.validate`'s end: one error is itself, several a group.
    pub(super) fn finish(self, at: &[String]) -> Option<Error> {
        let mut loops: Vec<&'static str> = self.0.iter().filter_map(|(_, l)| *l).collect();
        let n = loops.len();
        loops.sort_unstable();
        loops.dedup();
        let shuffled = loops.len() < n;
        let mut list: Vec<Error> = self.0.into_iter().map(|(e, _)| e).collect();
        match list.len() {
            0 => None,
            1 => list.pop(),
            _ => Some(Error {
                at: at.to_vec(),
                text: Text::Group,
                causes: list,
                shuffled,
            }),
        }
    }
}

/// The names of `names` (a list) that `obj` lacks (`findMissing`).
pub(super) fn missing_of<'v>(names: &'v Value, obj: &BTreeMap<String, Inst>) -> Vec<&'v str> {
    names
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|n| !obj.contains_key(*n))
        .collect()
}

/// A node whose causes are `errors` (`addErrors`).
pub(super) fn with_causes(at: &[String], text: Option<String>, causes: Vec<Error>) -> Error {
    Error {
        causes,
        ..says(at, text)
    }
}

/// The causes of `e` as `Schema.validate` and `validateRef` lift them:
/// a group's, else `e` alone.
pub(super) fn lifted(e: Error) -> Vec<Error> {
    if matches!(e.text, Text::Group) {
        e.causes
    } else {
        vec![e]
    }
}

/// The message helm prints: the tree of `ValidationError.display` below
/// the first line (which helm trims); `Err` when a part of it is not
/// reproduced.
pub(super) fn render(e: &Error) -> Result<String, String> {
    if e.shuffled {
        return Err("errors in Go's map order".into());
    }
    let mut out = String::new();
    for cause in lifted_ref(e) {
        display(cause, 1, &mut out)?;
    }
    Ok(out.strip_prefix('\n').unwrap_or(&out).to_string())
}

/// `Schema.validate`'s causes of the root's error.
fn lifted_ref(e: &Error) -> Vec<&Error> {
    if matches!(e.text, Text::Group) {
        e.causes.iter().collect()
    } else {
        vec![e]
    }
}

/// `output.go` `display`.
fn display(e: &Error, indent: usize, out: &mut String) -> Result<(), String> {
    if e.shuffled {
        return Err("errors in Go's map order".into());
    }
    let mut indent = indent;
    let skip = matches!(e.text, Text::Reference) && e.causes.len() == 1;
    if !skip {
        out.push('\n');
        out.push_str(&"  ".repeat(indent - 1));
        out.push_str("- ");
        indent += 1;
        let text = match &e.text {
            Text::Group | Text::Reference => "validation failed",
            Text::Says(t) => t,
            Text::Unworded => return Err("an error v6 words otherwise".into()),
        };
        let at = quote(&json_ptr(&e.at)).ok_or("an instance location with non-ASCII text")?;
        out.push_str(&format!("at {at}: {text}"));
    }
    for c in &e.causes {
        display(c, indent, out)?;
    }
    Ok(())
}

fn json_ptr(tokens: &[String]) -> String {
    tokens
        .iter()
        .map(|t| format!("/{}", pointer_token(t)))
        .collect()
}

/// `kind.go` `quote`: Go's `%q` with `"` unescaped and `'` escaped,
/// single-quoted. `%q` keeps what `unicode.IsPrint` accepts: of non-ASCII
/// text, letters and digits are kept here, and for anything else the
/// wording is `None`.
pub(super) fn quote(s: &str) -> Option<String> {
    let mut out = String::from("'");
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if c.is_ascii_control() => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_ascii() || c.is_alphanumeric() => out.push(c),
            _ => return None,
        }
    }
    out.push('\'');
    Some(out)
}

/// `kind.go` `display` of a schema literal (`enum`, `const`): a number
/// prints as written in the file, known here only for an integer literal.
pub(super) fn display_literal(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => quote(s),
        Value::Number(n) if n.is_u64() || n.is_i64() => Some(n.to_string()),
        Value::Number(_) => None,
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some("<nil>".into()),
        Value::Array(_) | Value::Object(_) => Some("value".into()),
    }
}

pub(super) fn num(v: Option<&Value>) -> Option<Dec> {
    match v {
        Some(Value::Number(n)) => Dec::from_json(n),
        _ => None,
    }
}

/// `objCompiler.intVal`: an integral number.
pub(super) fn int(v: Option<&Value>) -> Option<usize> {
    num(v)?.as_count()
}
