//! Go's `path` functions as Sprig offers them (`base`, `dir`, `clean`,
//! `ext`, `isAbs`, and their `os` twins on Linux).

// Every function of the table has its signature (`R`), fallible or not.
#![allow(clippy::unnecessary_wraps)]

use crate::args::{arity, one_str, s, R};
use crate::value::V;

/// Go's `path.Clean`.
pub(crate) fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut out: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if out.last().is_some_and(|l| *l != "..") {
                    out.pop();
                } else if !rooted {
                    out.push("..");
                }
            }
            s => out.push(s),
        }
    }
    let body = out.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

/// Go's `path.Base`.
#[must_use]
pub fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

/// Go's `path.Dir`.
#[must_use]
pub fn path_dir(p: &str) -> String {
    let dir = match p.rfind('/') {
        Some(i) => &p[..=i],
        None => "",
    };
    path_clean(dir)
}

fn path_ext(p: &str) -> String {
    for (i, c) in p.char_indices().rev() {
        if c == '/' {
            break;
        }
        if c == '.' {
            return p[i..].to_string();
        }
    }
    String::new()
}

pub(super) fn f_base(_: &str, a: &[V], _: usize) -> R {
    one_str(a, path_base)
}

pub(super) fn f_dir(_: &str, a: &[V], _: usize) -> R {
    one_str(a, path_dir)
}

pub(super) fn f_clean(_: &str, a: &[V], _: usize) -> R {
    one_str(a, path_clean)
}

pub(super) fn f_ext(_: &str, a: &[V], _: usize) -> R {
    one_str(a, path_ext)
}

pub(super) fn f_is_abs(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Bool(s(&a[0])?.starts_with('/')))
}
