//! text/template's builtin functions (`funcs.go` `builtins`): `not`,
//! `len`, `index`, the `print` family, the comparisons, and the `html`,
//! `js` and `urlquery` escapers. `and` and `or` are run by the executor.

// Every function of the table has its signature (`R`), fallible or not.
#![allow(clippy::unnecessary_wraps)]

use std::fmt::Write as _;

use crate::args::{arity, at_least, plain, s, sprint, strval, R};
use crate::printf::sprintf;
use crate::value::V;

/// Go's `eq`: basic kinds compare by value; mismatched valid kinds are an error.
fn eq(a: &V, b: &V) -> Result<bool, String> {
    Ok(match (a, b) {
        (V::Missing | V::Nil, V::Missing | V::Nil) => true,
        (V::Missing | V::Nil, _) | (_, V::Missing | V::Nil) => false,
        (V::Bool(x), V::Bool(y)) => x == y,
        // text/template `basicKind`: every signed integer type is `intKind`.
        (V::Int(x) | V::Int64(x), V::Int(y) | V::Int64(y)) => x == y,
        #[allow(clippy::float_cmp)]
        (V::Float(x), V::Float(y)) => x == y,
        (V::Str(x), V::Str(y)) => x == y,
        (V::List(_) | V::Map(_), V::List(_) | V::Map(_)) => {
            return Err(format!(
                "non-comparable type {}: {}",
                a.go_string(),
                a.type_name()
            ))
        }
        _ => return Err("incompatible types for comparison".into()),
    })
}

fn lt(a: &V, b: &V) -> Result<bool, String> {
    Ok(match (a, b) {
        (V::Int(x) | V::Int64(x), V::Int(y) | V::Int64(y)) => x < y,
        (V::Float(x), V::Float(y)) => x < y,
        (V::Str(x), V::Str(y)) => x < y,
        (
            V::Int(_) | V::Int64(_) | V::Float(_) | V::Str(_),
            V::Int(_) | V::Int64(_) | V::Float(_) | V::Str(_),
        ) => return Err("incompatible types for comparison".into()),
        _ => return Err("invalid type for comparison".into()),
    })
}

/// Go's `html`, `js` and `urlquery` builtins (text/template `funcs.go`
/// `HTMLEscapeString`, `JSEscapeString`, `url.QueryEscape`), over their
/// arguments as `evalArgs` joins them (`fmt.Sprint` unless one string).
pub(super) fn f_escape(name: &str, a: &[V], room: usize) -> R {
    let text = match a {
        [V::Str(x)] => x.clone(),
        _ => match f_print("print", a, room)? {
            V::Str(x) => x,
            other => other.go_string(),
        },
    };
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match name {
            "html" => match c {
                '"' => out.push_str("&#34;"),
                '\'' => out.push_str("&#39;"),
                '&' => out.push_str("&amp;"),
                '<' => out.push_str("&lt;"),
                '>' => out.push_str("&gt;"),
                '\0' => out.push('\u{FFFD}'),
                c => out.push(c),
            },
            "js" => match c {
                '\\' => out.push_str("\\\\"),
                '\'' => out.push_str("\\'"),
                '"' => out.push_str("\\\""),
                '<' => out.push_str("\\u003C"),
                '>' => out.push_str("\\u003E"),
                '&' => out.push_str("\\u0026"),
                '=' => out.push_str("\\u003D"),
                c if (c as u32) < 0x20 => {
                    let _ = write!(out, "\\u00{:02X}", c as u32);
                }
                c if c.is_control() => {
                    let _ = write!(out, "\\u{:04X}", c as u32);
                }
                c => out.push(c),
            },
            _ => {
                if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '~') {
                    out.push(c);
                } else if c == ' ' {
                    out.push('+');
                } else {
                    let mut buf = [0u8; 4];
                    for b in c.encode_utf8(&mut buf).bytes() {
                        let _ = write!(out, "%{b:02X}");
                    }
                }
            }
        }
    }
    Ok(V::Str(out))
}

pub(super) fn f_not(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Bool(!a[0].truth()))
}

pub(super) fn f_len(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    if let Some(p) = plain(&a[0]) {
        return f_len("len", &[p], 0);
    }
    let n = match &a[0] {
        V::Str(s) => s.len(),
        V::List(l) => l.len(),
        V::Map(m) => m.len(),
        V::Nil => return Err("len of nil pointer".into()),
        other => return Err(format!("len of type {}", other.type_name())),
    };
    Ok(V::Int(i64::try_from(n).unwrap_or(i64::MAX)))
}

pub(super) fn f_index(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    let mut item = a[0].clone();
    for key in &a[1..] {
        if let Some(p) = plain(&item) {
            item = p;
        }
        item = match (item, key) {
            (V::Map(m), V::Str(k)) => m.get(k).unwrap_or(V::Nil),
            (V::Map(_), other) => {
                return Err(format!(
                    "value has type {}; should be string",
                    other.type_name()
                ))
            }
            (V::List(l), V::Int(i) | V::Int64(i)) => usize::try_from(*i)
                .ok()
                .and_then(|i| l.get(i).cloned())
                .ok_or_else(|| format!("index out of range: {i}"))?,
            (V::Str(s), V::Int(i) | V::Int64(i)) => usize::try_from(*i)
                .ok()
                .and_then(|i| s.as_bytes().get(i).copied())
                .map(|b| V::Int(i64::from(b)))
                .ok_or_else(|| format!("index out of range: {i}"))?,
            (V::List(_) | V::Str(_), other) => {
                return Err(format!(
                    "cannot index slice/array with type {}",
                    other.type_name()
                ))
            }
            (V::Nil | V::Missing, _) => return Err("index of untyped nil".into()),
            (other, _) => return Err(format!("can't index item of type {}", other.type_name())),
        };
    }
    Ok(item)
}

pub(super) fn f_print(_: &str, a: &[V], _: usize) -> R {
    // fmt.Sprint: a space between operands when neither is a string.
    let mut out = String::new();
    for (i, v) in a.iter().enumerate() {
        if i > 0 && !matches!(v, V::Str(_)) && !matches!(a[i - 1], V::Str(_)) {
            out.push(' ');
        }
        out.push_str(&sprint(v));
    }
    Ok(V::Str(out))
}

pub(super) fn f_println(_: &str, a: &[V], _: usize) -> R {
    Ok(V::Str(
        a.iter().map(strval).collect::<Vec<_>>().join(" ") + "\n",
    ))
}

pub(super) fn f_printf(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    Ok(V::Str(sprintf(s(&a[0])?, &a[1..])?))
}

pub(super) fn f_eq(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 2)?;
    for b in &a[1..] {
        if eq(&a[0], b)? {
            return Ok(V::Bool(true));
        }
    }
    Ok(V::Bool(false))
}

pub(super) fn f_ne(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(!eq(&a[0], &a[1])?))
}

pub(super) fn f_lt(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(lt(&a[0], &a[1])?))
}

pub(super) fn f_le(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(lt(&a[0], &a[1])? || eq(&a[0], &a[1])?))
}

pub(super) fn f_gt(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(!(lt(&a[0], &a[1])? || eq(&a[0], &a[1])?)))
}

pub(super) fn f_ge(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(!lt(&a[0], &a[1])?))
}
