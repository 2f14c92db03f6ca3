//! How the template functions read their arguments: arity checks, the
//! coercions Go's reflection and Sprig apply to a parameter (`s`, `int`,
//! `strval`, `to_i64`, ...), the type errors they give, and the check of a
//! result against the bytes left to the template. Every file of template
//! functions (`funcs`, `crypto.rs`, `url.rs`, `generators.rs`) reads its
//! arguments through these; a new coercion goes here, a new function does
//! not.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::value::{SharedMap, V};
use crate::limits::BEYOND_LIMITS;

/// What a template function returns: its value, or the error that stops
/// the execution.
pub(super) type R = Result<V, String>;

pub(super) fn arity(args: &[V], n: usize) -> Result<(), String> {
    if args.len() == n {
        Ok(())
    } else {
        Err(format!("wrong number of args: want {n} got {}", args.len()))
    }
}

pub(super) fn at_least(args: &[V], n: usize) -> Result<(), String> {
    if args.len() >= n {
        Ok(())
    } else {
        Err(format!(
            "wrong number of args: want at least {n} got {}",
            args.len()
        ))
    }
}

thread_local! {
    /// Where the value [`type_err`] last refused lies in memory, so that
    /// the caller can tell whether it was one of a call's arguments
    /// ([`refused_arg`]).
    static REFUSED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The index in `args` of the argument [`type_err`] refused since this was
/// last asked, if it refused one of them (rather than a value inside one).
/// text/template checks an argument's type against the function's
/// parameter before the call, and words and places that error itself
/// (`evalArg`); the engine's functions check their own arguments, and this
/// says which one failed.
pub(super) fn refused_arg(args: ArgsAt) -> Option<usize> {
    let at = REFUSED.with(|c| c.replace(0));
    let size = std::mem::size_of::<V>();
    let offset = at.checked_sub(args.0)?;
    (offset % size == 0 && offset / size < args.1).then_some(offset / size)
}

/// Forgets what [`type_err`] refused before a call.
pub(super) fn forget_refused() {
    REFUSED.with(|c| c.set(0));
}

/// Where a call's arguments lie (the address of the first, and how many),
/// taken before they are handed to the function.
#[derive(Clone, Copy)]
pub(super) struct ArgsAt(usize, usize);

impl ArgsAt {
    pub(super) fn of(args: &[V]) -> ArgsAt {
        ArgsAt(args.as_ptr() as usize, args.len())
    }
}

pub(super) fn type_err(expected: &str, v: &V) -> String {
    REFUSED.with(|c| c.set(std::ptr::from_ref(v) as usize));
    match v {
        V::Missing => format!("invalid value; expected {expected}"),
        V::Nil => format!("wrong type for value; expected {expected}; got interface {{}}"),
        other => format!(
            "wrong type for value; expected {expected}; got {}",
            other.type_name()
        ),
    }
}

pub(super) fn s(v: &V) -> Result<&str, String> {
    match v {
        V::Str(s) => Ok(s),
        other => Err(type_err("string", other)),
    }
}

pub(super) fn int(v: &V) -> Result<i64, String> {
    match v {
        V::Int(i) => Ok(*i),
        other => Err(type_err("int", other)),
    }
}

pub(super) fn boolean(v: &V) -> Result<bool, String> {
    match v {
        V::Bool(b) => Ok(*b),
        other => Err(type_err("bool", other)),
    }
}

/// The entries of a map argument as they are now. A missing value (the
/// invalid `reflect.Value` of a pipeline or variable holding no value) is
/// the nil map: text/template's `validateType` gives a parameter that can
/// be nil its zero value. A nil `interface{}` read straight from a map
/// field stays a type error, as there.
pub(super) fn map_arg(v: &V) -> Result<Arc<BTreeMap<String, V>>, String> {
    if *v == V::Missing {
        return Ok(Arc::default());
    }
    map_ref(v).map(SharedMap::entries)
}

/// A map argument, to change in place.
pub(super) fn map_ref(v: &V) -> Result<&SharedMap, String> {
    match v {
        V::Map(m) => Ok(m),
        other => Err(type_err("map[string]interface {}", other)),
    }
}

/// Sprig's `strval`: strings as-is, everything else through `%v`.
pub(super) fn strval(v: &V) -> String {
    match v {
        V::Missing | V::Nil => "<nil>".into(),
        V::Host(h) => match h.0.as_text() {
            Some(Ok(t)) => t,
            _ => h.0.format(true),
        },
        other => other.go_string(),
    }
}

/// `%v` of an operand (`fmt.Sprint`, Sprig's `cat`): a `[]byte` prints as
/// its numbers, unlike [`strval`].
pub(super) fn sprint(v: &V) -> String {
    match v {
        V::Host(h) => h.0.format(true),
        _ => strval(v),
    }
}

/// Refuses what [`strval`] cannot give as Go would (bytes that are not
/// UTF-8, which Go would copy into the output as they are).
pub(super) fn strval_ok(a: &[V]) -> Result<(), String> {
    for v in a {
        if let V::Host(h) = v {
            if let Some(Err(e)) = h.0.as_text() {
                return Err(e);
            }
        }
    }
    Ok(())
}

/// A map or slice host object as the plain value Go's builtins see.
pub(super) fn plain(v: &V) -> Option<V> {
    match v {
        V::Host(h) if matches!(h.0.kind(), "map" | "slice") => Some(h.0.value()),
        _ => None,
    }
}

/// Sprig's `empty`.
pub(super) fn is_empty(v: &V) -> bool {
    !v.truth()
}

/// `cast.ToInt64` as Sprig uses it: failures become 0.
pub(super) fn to_i64(v: &V) -> i64 {
    match v {
        V::Int(i) | V::Int64(i) => *i,
        // Go's `int64(f)` (cast v1.7.0 `ToInt64E`); a float out of range,
        // or NaN, gives what Go leaves to the machine: on linux/amd64, where
        // helm's and Argo CD's binaries run, `CVTTSD2SQ`'s MinInt64 (checked
        // with helm v3.17.1: `int64 (float64 "1e19")`, `"-1e19"`, `"NaN"`,
        // `"Inf"` all print -9223372036854775808).
        #[allow(clippy::cast_possible_truncation)]
        V::Float(f) if in_i64_range(*f) => *f as i64,
        V::Float(_) => i64::MIN,
        V::Bool(b) => i64::from(*b),
        V::Str(s) => parse_go_int(s).unwrap_or(0),
        _ => 0,
    }
}

/// Whether `int64(f)` is defined in Go: -2⁶³ ≤ f < 2⁶³.
fn in_i64_range(f: f64) -> bool {
    #[allow(clippy::cast_precision_loss)]
    let min = i64::MIN as f64;
    (min..-min).contains(&f)
}

/// `strconv.ParseInt(trimZeroDecimal(s), 0, 0)`.
fn parse_go_int(s: &str) -> Option<i64> {
    let mut t = s;
    if let Some((a, b)) = s.split_once('.') {
        if !b.is_empty() && b.chars().all(|c| c == '0') {
            t = a;
        }
    }
    let (neg, body) = match t.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, t.strip_prefix('+').unwrap_or(t)),
    };
    let body = body.replace('_', "");
    let lower = body.to_ascii_lowercase();
    let v = if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()?
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()?
    } else if let Some(b) = lower.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()?
    } else if lower.len() > 1 && lower.starts_with('0') {
        i64::from_str_radix(&lower[1..], 8).ok()?
    } else {
        lower.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

pub(super) fn to_f64(v: &V) -> f64 {
    match v {
        #[allow(clippy::cast_precision_loss)]
        V::Int(i) | V::Int64(i) => *i as f64,
        V::Float(f) => *f,
        V::Bool(b) => f64::from(u8::from(*b)),
        V::Str(s) => s.parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

/// Sprig's `strslice`.
pub(super) fn strslice(v: &V) -> Vec<String> {
    match v {
        V::List(l) => l
            .iter()
            .filter(|e| !matches!(e, V::Nil | V::Missing))
            .map(strval)
            .collect(),
        V::Missing | V::Nil => Vec::new(),
        V::Host(h) if h.0.kind() == "slice" => strslice(&h.0.value()),
        other => vec![strval(other)],
    }
}

pub(super) fn list_arg<'a>(name: &str, v: &'a V) -> Result<&'a [V], String> {
    match v {
        V::List(l) => Ok(l),
        other => Err(format!("Cannot {name} on type {}", other.type_name())),
    }
}

/// A value passed through an `interface{}` parameter: a missing value becomes nil.
pub(super) fn iface(v: &V) -> V {
    if *v == V::Missing {
        V::Nil
    } else {
        v.clone()
    }
}

pub(super) fn none(args: &[V]) -> V {
    let _ = args;
    V::Nil
}

/// Refuses a result of `len` bytes when only `room` are left to the template.
pub(super) fn fits(len: usize, room: usize) -> Result<(), String> {
    if len > room {
        Err(format!(
            "the result would take {len} bytes, more than the {room} left to this template {BEYOND_LIMITS}"
        ))
    } else {
        Ok(())
    }
}

pub(super) fn one_str(a: &[V], f: impl Fn(&str) -> String) -> R {
    arity(a, 1)?;
    Ok(V::Str(f(s(&a[0])?)))
}

pub(super) fn two_str(a: &[V], f: impl Fn(&str, &str) -> String) -> R {
    arity(a, 2)?;
    Ok(V::Str(f(s(&a[0])?, s(&a[1])?)))
}

pub(super) fn two_bool(a: &[V], f: impl Fn(&str, &str) -> bool) -> R {
    arity(a, 2)?;
    Ok(V::Bool(f(s(&a[0])?, s(&a[1])?)))
}
