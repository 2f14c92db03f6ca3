//! Sprig's string functions (`strings.go`, `functions.go`): trimming,
//! case, quoting, splitting, joining, indenting, wrapping, and Argo CD's
//! `normalize` and `slugify`. A function whose input or result is text goes
//! here, unless it is a hash, an encoding or a regular expression.

// Every function of the table has its signature (`R`), fallible or not.
#![allow(clippy::unnecessary_wraps)]

use crate::args::{
    arity, at_least, boolean, fits, int, one_str, s, sprint, strslice, strval, strval_ok, two_bool,
    two_str, R,
};
use crate::go::quote::go_quote;
use crate::value::V;

/// Go's `strings.Title`: upper-cases the first letter of each word.
fn title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_sep = true;
    for c in s.chars() {
        if prev_sep {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        prev_sep = !(c.is_alphanumeric() || c == '_' || c == '\'');
    }
    out
}

/// Argo CD's `SanitizeName` (`normalize`): lower-case, `[^-a-z0-9.]` → `-`,
/// at most 253 bytes, trimmed of `-` and `.`.
#[must_use]
pub fn sanitize_name(name: &str) -> String {
    let lower = name.to_lowercase();
    let mut out: String = lower
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if out.len() > 253 {
        let mut cut = 253;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out.trim_matches(|c| c == '-' || c == '.').to_string()
}

/// Argo CD's `slugify [maxSize] [smartTruncate] name` over `gosimple/slug`.
fn slugify(args: &[V]) -> R {
    at_least(args, 1)?;
    let name = s(&args[args.len() - 1])?;
    let mut max = 50usize;
    let mut smart = true;
    if args.len() >= 2 {
        max = usize::try_from(int(&args[0])?).unwrap_or(0);
    }
    if args.len() >= 3 {
        smart = boolean(&args[1])?;
    }
    if args.len() > 3 {
        return Err("bad 'slugify' arguments".into());
    }
    // gosimple/slug over Argo CD's `SanitizeName`: a plain cut first when smart
    // truncation is off, then runs of other characters become one `-`, the
    // ends are trimmed of `-_`, then a smart cut at the last `-` within bounds.
    let mut slug = sanitize_name(name);
    if !smart && slug.len() >= max {
        slug.truncate(floor_boundary(&slug, max));
    }
    let mut out = String::new();
    for c in slug.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
            c
        } else {
            '-'
        };
        if c == '-' && out.ends_with('-') {
            continue;
        }
        out.push(c);
    }
    let mut slug = out.trim_matches(|c| c == '-' || c == '_').to_string();
    if max > 0 && smart && slug.len() > max {
        let cut = slug.as_bytes()[..=max]
            .iter()
            .rposition(|b| *b == b'-')
            .unwrap_or(max);
        slug.truncate(cut);
    }
    Ok(V::Str(slug))
}

/// goutils' `SwapCase` as Sprig's `swapcase`: upper case becomes lower and
/// lower becomes upper (goutils' title case after white space is upper case
/// for every letter Rust knows no separate title case of).
pub(super) fn f_swapcase(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| {
        let mut out = String::with_capacity(x.len());
        for c in x.chars() {
            if c.is_uppercase() {
                out.extend(c.to_lowercase());
            } else if c.is_lowercase() {
                out.extend(c.to_uppercase());
            } else {
                out.push(c);
            }
        }
        out
    })
}

pub(super) fn f_hello(_: &str, _: &[V], _: usize) -> R {
    Ok(V::Str("Hello!".into()))
}

pub(super) fn f_abbrev(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let w = usize::try_from(int(&a[0])?).unwrap_or(0);
    let st = s(&a[1])?;
    if w < 4 || st.len() <= w {
        return Ok(V::Str(st.to_string()));
    }
    Ok(V::Str(format!("{}...", &st[..floor_boundary(st, w - 3)])))
}

pub(super) fn f_abbrevboth(_: &str, _: &[V], _: usize) -> R {
    Err("template function `abbrevboth` is not supported by gitops-lint".into())
}

pub(super) fn f_trunc(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let c = int(&a[0])?;
    let st = s(&a[1])?;
    let n = i64::try_from(st.len()).unwrap_or(i64::MAX);
    let out = if c >= 0 && n > c {
        &st[..floor_boundary(st, usize::try_from(c).unwrap_or(0))]
    } else if c < 0 && n > -c {
        &st[floor_boundary(st, usize::try_from(n + c).unwrap_or(0))..]
    } else {
        st
    };
    Ok(V::Str(out.to_string()))
}

pub(super) fn f_trim(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| {
        x.trim_matches(|c: char| c.is_whitespace()).to_string()
    })
}

pub(super) fn f_upper(_: &str, a: &[V], _: usize) -> R {
    one_str(a, str::to_uppercase)
}

pub(super) fn f_lower(_: &str, a: &[V], _: usize) -> R {
    one_str(a, str::to_lowercase)
}

pub(super) fn f_title(_: &str, a: &[V], _: usize) -> R {
    one_str(a, title)
}

pub(super) fn f_untitle(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| {
        let mut out = String::new();
        let mut prev_space = true;
        for c in x.chars() {
            if prev_space {
                out.extend(c.to_lowercase());
            } else {
                out.push(c);
            }
            prev_space = c.is_whitespace();
        }
        out
    })
}

pub(super) fn f_initials(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| {
        x.split_whitespace()
            .filter_map(|w| w.chars().next())
            .collect()
    })
}

pub(super) fn f_nospace(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| x.chars().filter(|c| !c.is_whitespace()).collect())
}

pub(super) fn f_substr(_: &str, a: &[V], _: usize) -> R {
    arity(a, 3)?;
    let (start, end, st) = (int(&a[0])?, int(&a[1])?, s(&a[2])?);
    let n = i64::try_from(st.len()).unwrap_or(i64::MAX);
    let cut = |i: i64| floor_boundary(st, usize::try_from(i.clamp(0, n)).unwrap_or(0));
    let out = if start < 0 {
        &st[..cut(end)]
    } else if end < 0 || end > n {
        &st[cut(start)..]
    } else if start > end {
        return Err(format!("slice bounds out of range [{start}:{end}]"));
    } else {
        &st[cut(start)..cut(end)]
    };
    Ok(V::Str(out.to_string()))
}

pub(super) fn f_repeat(_: &str, a: &[V], room: usize) -> R {
    arity(a, 2)?;
    let n = int(&a[0])?;
    let st = s(&a[1])?;
    if n < 0 {
        return Err("strings: negative Repeat count".into());
    }
    let n = usize::try_from(n).unwrap_or(0);
    fits(st.len().saturating_mul(n), room)?;
    Ok(V::Str(st.repeat(n)))
}

pub(super) fn f_trimall(_: &str, a: &[V], _: usize) -> R {
    two_str(a, |cut, x| x.trim_matches(|c| cut.contains(c)).to_string())
}

pub(super) fn f_trim_suffix(_: &str, a: &[V], _: usize) -> R {
    two_str(a, |suf, x| x.strip_suffix(suf).unwrap_or(x).to_string())
}

pub(super) fn f_trim_prefix(_: &str, a: &[V], _: usize) -> R {
    two_str(a, |pre, x| x.strip_prefix(pre).unwrap_or(x).to_string())
}

pub(super) fn f_contains(_: &str, a: &[V], _: usize) -> R {
    two_bool(a, |sub, x| x.contains(sub))
}

pub(super) fn f_has_prefix(_: &str, a: &[V], _: usize) -> R {
    two_bool(a, |p, x| x.starts_with(p))
}

pub(super) fn f_has_suffix(_: &str, a: &[V], _: usize) -> R {
    two_bool(a, |p, x| x.ends_with(p))
}

pub(super) fn f_quote(_: &str, a: &[V], _: usize) -> R {
    strval_ok(a)?;
    Ok(V::Str(
        a.iter()
            .filter(|v| !matches!(v, V::Nil | V::Missing))
            .map(|v| go_quote(&strval(v)))
            .collect::<Vec<_>>()
            .join(" "),
    ))
}

pub(super) fn f_squote(_: &str, a: &[V], _: usize) -> R {
    strval_ok(a)?;
    Ok(V::Str(
        a.iter()
            .filter(|v| !matches!(v, V::Nil | V::Missing))
            .map(|v| format!("'{}'", strval(v)))
            .collect::<Vec<_>>()
            .join(" "),
    ))
}

pub(super) fn f_cat(_: &str, a: &[V], _: usize) -> R {
    Ok(V::Str(
        a.iter()
            .filter(|v| !matches!(v, V::Nil | V::Missing))
            .map(sprint)
            .collect::<Vec<_>>()
            .join(" "),
    ))
}

pub(super) fn f_indent(name: &str, a: &[V], room: usize) -> R {
    arity(a, 2)?;
    let width = usize::try_from(int(&a[0])?).unwrap_or(0);
    let text = s(&a[1])?;
    let lines = text.bytes().filter(|b| *b == b'\n').count() + 1;
    fits(
        width.saturating_mul(lines).saturating_add(text.len() + 1),
        room,
    )?;
    let pad = " ".repeat(width);
    let body = format!("{pad}{}", s(&a[1])?.replace('\n', &format!("\n{pad}")));
    Ok(V::Str(if name == "nindent" {
        format!("\n{body}")
    } else {
        body
    }))
}

pub(super) fn f_replace(_: &str, a: &[V], room: usize) -> R {
    arity(a, 3)?;
    let (old, new, src) = (s(&a[0])?, s(&a[1])?, s(&a[2])?);
    let hits = if old.is_empty() {
        src.chars().count() + 1
    } else {
        src.matches(old).count()
    };
    fits(
        src.len()
            .saturating_add(hits.saturating_mul(new.len().saturating_sub(old.len()))),
        room,
    )?;
    Ok(V::Str(go_replace_all(src, old, new)))
}

pub(super) fn f_plural(_: &str, a: &[V], _: usize) -> R {
    arity(a, 3)?;
    let (one, many, n) = (s(&a[0])?, s(&a[1])?, int(&a[2])?);
    Ok(V::Str(if n == 1 { one } else { many }.to_string()))
}

pub(super) fn f_to_string(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    strval_ok(a)?;
    Ok(V::Str(strval(&a[0])))
}

pub(super) fn f_split(name: &str, a: &[V], room: usize) -> R {
    let (sep, orig, n) = if name == "split" {
        arity(a, 2)?;
        (s(&a[0])?, s(&a[1])?, -1)
    } else {
        arity(a, 3)?;
        (s(&a[0])?, s(&a[2])?, int(&a[1])?)
    };
    fits(split_cost(orig, sep), room)?;
    let parts = go_split(orig, sep, n);
    Ok(V::Map(
        parts
            .into_iter()
            .enumerate()
            .map(|(i, p)| (format!("_{i}"), V::Str(p)))
            .collect(),
    ))
}

pub(super) fn f_split_list(_: &str, a: &[V], room: usize) -> R {
    arity(a, 2)?;
    fits(split_cost(s(&a[1])?, s(&a[0])?), room)?;
    Ok(V::List(
        go_split(s(&a[1])?, s(&a[0])?, -1)
            .into_iter()
            .map(V::Str)
            .collect(),
    ))
}

pub(super) fn f_to_strings(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::List(strslice(&a[0]).into_iter().map(V::Str).collect()))
}

pub(super) fn f_join(_: &str, a: &[V], room: usize) -> R {
    arity(a, 2)?;
    let sep = s(&a[0])?;
    let parts = strslice(&a[1]);
    let len = parts
        .iter()
        .fold(sep.len().saturating_mul(parts.len()), |n, p| {
            n.saturating_add(p.len())
        });
    fits(len, room)?;
    Ok(V::Str(parts.join(sep)))
}

pub(super) fn f_sort_alpha(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let mut l = strslice(&a[0]);
    l.sort();
    Ok(V::List(l.into_iter().map(V::Str).collect()))
}

pub(super) fn f_normalize(_: &str, a: &[V], _: usize) -> R {
    one_str(a, sanitize_name)
}

pub(super) fn f_slugify(_: &str, a: &[V], _: usize) -> R {
    slugify(a)
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// What splitting `text` at `sep` costs: one node per part, and an empty
/// separator makes every character a part.
fn split_cost(text: &str, sep: &str) -> usize {
    let parts = if sep.is_empty() {
        text.chars().count()
    } else {
        text.matches(sep).count() + 1
    };
    parts
        .saturating_mul(crate::value::NODE_COST + 8)
        .saturating_add(text.len())
}

/// Go's `strings.Replace(src, old, new, -1)`: an empty `old` inserts `new`
/// between every character.
fn go_replace_all(src: &str, old: &str, new: &str) -> String {
    if old.is_empty() {
        let mut out = String::from(new);
        for c in src.chars() {
            out.push(c);
            out.push_str(new);
        }
        return out;
    }
    src.replace(old, new)
}

/// Go's `strings.SplitN` (`n < 0`: all); an empty separator splits into characters.
fn go_split(s: &str, sep: &str, n: i64) -> Vec<String> {
    if n == 0 {
        return Vec::new();
    }
    if sep.is_empty() {
        return s.chars().map(|c| c.to_string()).collect();
    }
    if n < 0 {
        s.split(sep).map(str::to_string).collect()
    } else {
        s.splitn(usize::try_from(n).unwrap_or(usize::MAX), sep)
            .map(str::to_string)
            .collect()
    }
}

/// Why a case or wrap function refuses text outside ASCII: Go's Unicode
/// classes (`unicode.IsUpper`, `IsPunct`, `IsLetter`) are not Rust's, and
/// goutils cuts at byte offsets.
fn ascii_only(name: &str, x: &str) -> Result<(), String> {
    if x.is_ascii() {
        Ok(())
    } else {
        Err(format!(
            "`{name}` of text that is not ASCII is not supported by gitops-lint"
        ))
    }
}

/// xstrings' `isConnector` on ASCII: `-`, `_` or white space.
fn is_connector(b: u8) -> bool {
    matches!(
        b,
        b'-' | b'_' | b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'
    )
}

/// Go's `unicode.IsPunct` on ASCII (category P; `$ + < = > ^ | ~` and the
/// backtick are symbols).
fn is_go_punct(b: u8) -> bool {
    b"!\"#%&'()*,-./:;?@[\\]_{}".contains(&b)
}

/// Sprig's `camelcase`: xstrings v1.5.0 `ToPascalCase` (`toCamelCase` with
/// `isBig`): connectors go, the letter after one is upper case, and a word
/// that starts upper case has its following capitals lowered.
pub(super) fn f_camelcase(name: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let x = s(&a[0])?;
    ascii_only(name, x)?;
    let b = x.as_bytes();
    let mut out = String::with_capacity(b.len());
    let mut i = 0;
    let mut r0 = 0u8;
    let mut first_upper = false;
    // Leading connectors stay.
    while i < b.len() {
        r0 = b[i];
        i += 1;
        if !is_connector(r0) {
            first_upper = r0.is_ascii_uppercase();
            r0 = r0.to_ascii_uppercase();
            break;
        }
        out.push(char::from(r0));
    }
    if i == b.len() {
        // Go writes the last rune again here, even a connector already written.
        if !b.is_empty() {
            out.push(char::from(r0));
        }
        return Ok(V::Str(out));
    }
    while i < b.len() {
        let r1 = r0;
        r0 = b[i];
        i += 1;
        if is_connector(r0) && is_connector(r1) {
            out.push(char::from(r1));
            continue;
        }
        if is_connector(r1) {
            first_upper = r0.is_ascii_uppercase();
            r0 = r0.to_ascii_uppercase();
        } else {
            if first_upper {
                if r0.is_ascii_uppercase() {
                    r0 = r0.to_ascii_lowercase();
                } else {
                    first_upper = false;
                }
            }
            out.push(char::from(r1));
        }
    }
    out.push(char::from(r0));
    Ok(V::Str(out))
}

/// xstrings' word types (`nextWord`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Word {
    Invalid,
    Number,
    Upper,
    Alphabet,
    Connector,
    Punct,
    Other,
}

/// xstrings' `nextWord` on ASCII: the next word's type and length.
fn next_word(s: &[u8]) -> (Word, usize) {
    let Some(&r) = s.first() else {
        return (Word::Invalid, 0);
    };
    let n = s.len();
    let mut off = 1;
    let run = |off: &mut usize, ok: &dyn Fn(u8) -> bool| {
        while *off < n && ok(s[*off]) {
            *off += 1;
        }
    };
    let wt = if is_connector(r) {
        run(&mut off, &is_connector);
        Word::Connector
    } else if is_go_punct(r) {
        run(&mut off, &is_go_punct);
        Word::Punct
    } else if r.is_ascii_uppercase() {
        if off < n {
            let r2 = s[off];
            if r2.is_ascii_uppercase() {
                off += 1;
                run(&mut off, &|c: u8| c.is_ascii_uppercase());
                // "HTTPStatus" is "HTTP" and "Status".
                if off < n && s[off].is_ascii_alphabetic() {
                    off -= 1;
                }
            } else if r2.is_ascii_alphabetic() {
                off += 1;
                run(&mut off, &|c: u8| c.is_ascii_lowercase());
            }
        }
        Word::Upper
    } else if r.is_ascii_alphabetic() {
        run(&mut off, &|c: u8| c.is_ascii_lowercase());
        Word::Alphabet
    } else if r.is_ascii_digit() {
        run(&mut off, &|c: u8| c.is_ascii_digit());
        Word::Number
    } else {
        run(&mut off, &|c: u8| {
            !(is_connector(c) || c.is_ascii_alphanumeric() || is_go_punct(c))
        });
        Word::Other
    };
    (wt, off)
}

/// Sprig's `snakecase` and `kebabcase`: xstrings' `camelCaseToLowerCase`
/// (`ToSnakeCase`, `ToKebabCase`), which splits words at case changes and
/// numbers (`HTTP20xOK` is `http_20x_ok`, `Bld4Floor` `bld4_floor`).
pub(super) fn f_snakecase(name: &str, a: &[V], _: usize) -> R {
    fn next<'a>(rem: &mut &'a [u8]) -> (Word, &'a [u8]) {
        let all: &'a [u8] = rem;
        let (wt, len) = next_word(all);
        *rem = &all[len..];
        (wt, &all[..len])
    }
    fn lower(out: &mut String, wt: Word, word: &[u8], connector: char) {
        for &c in word {
            if wt != Word::Upper && wt != Word::Connector {
                out.push(char::from(c));
            } else if is_connector(c) {
                out.push(connector);
            } else {
                out.push(char::from(c.to_ascii_lowercase()));
            }
        }
    }
    arity(a, 1)?;
    let x = s(&a[0])?;
    ascii_only(name, x)?;
    let c = if name == "kebabcase" { '-' } else { '_' };
    let mut out = String::with_capacity(x.len() + 4);
    let mut rem = x.as_bytes();
    let (mut wt, mut word) = next(&mut rem);
    while !rem.is_empty() {
        if wt != Word::Connector {
            lower(&mut out, wt, word, c);
        }
        let (prev, last) = (wt, word);
        (wt, word) = next(&mut rem);
        match prev {
            Word::Number => {
                while matches!(wt, Word::Alphabet | Word::Number) {
                    lower(&mut out, wt, word, c);
                    (wt, word) = next(&mut rem);
                }
                if !matches!(wt, Word::Invalid | Word::Punct | Word::Connector) {
                    out.push(c);
                }
            }
            Word::Connector => lower(&mut out, prev, last, c),
            Word::Punct => {}
            _ => {
                if wt != Word::Number {
                    if !matches!(wt, Word::Connector | Word::Punct) {
                        out.push(c);
                    }
                    continue;
                }
                if rem.is_empty() {
                    continue;
                }
                let number = word;
                (wt, word) = next(&mut rem);
                if wt != Word::Alphabet {
                    // A number is part of the word before it.
                    lower(&mut out, Word::Number, number, c);
                    if !matches!(wt, Word::Connector | Word::Punct) {
                        out.push(c);
                    }
                    continue;
                }
                out.push(c);
                lower(&mut out, Word::Number, number, c);
                while matches!(wt, Word::Alphabet | Word::Number) {
                    lower(&mut out, wt, word, c);
                    (wt, word) = next(&mut rem);
                }
                if !matches!(wt, Word::Invalid | Word::Connector | Word::Punct) {
                    out.push(c);
                }
            }
        }
    }
    lower(&mut out, wt, word, c);
    Ok(V::Str(out))
}

/// Sprig's `wrap` (`wrap LENGTH TEXT`) and `wrapWith` (`wrapWith LENGTH
/// SEP TEXT`, long words cut): goutils' `WrapCustom`, which breaks at the
/// last space within the length, on byte offsets.
pub(super) fn f_wrap(name: &str, a: &[V], room: usize) -> R {
    let (len, sep, text, cut_long) = if name == "wrapWith" {
        arity(a, 3)?;
        (int(&a[0])?, s(&a[1])?, s(&a[2])?, true)
    } else {
        arity(a, 2)?;
        (int(&a[0])?, "", s(&a[1])?, false)
    };
    if text.is_empty() {
        return Ok(V::Str(String::new()));
    }
    let sep = if sep.is_empty() { "\n" } else { sep };
    let width = usize::try_from(len.max(1)).unwrap_or(usize::MAX);
    let b = text.as_bytes();
    // Every break replaces at most one byte with `sep`.
    fits(
        b.len().saturating_add(b.len().saturating_mul(sep.len())),
        room,
    )?;
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut off = 0;
    while b.len() - off > width {
        if b[off] == b' ' {
            off += 1;
            continue;
        }
        let end = off + width + 1;
        if let Some(sp) = b[off..end].iter().rposition(|c| *c == b' ') {
            out.extend_from_slice(&b[off..off + sp]);
            out.extend_from_slice(sep.as_bytes());
            off += sp + 1;
        } else if cut_long {
            out.extend_from_slice(&b[off..off + width]);
            out.extend_from_slice(sep.as_bytes());
            off += width;
        } else {
            let end = off + width;
            match b[end..].iter().position(|c| *c == b' ') {
                None => {
                    out.extend_from_slice(&b[off..]);
                    off = b.len();
                }
                Some(i) => {
                    out.extend_from_slice(&b[off..end + i]);
                    out.extend_from_slice(sep.as_bytes());
                    off = end + i + 1;
                }
            }
        }
    }
    out.extend_from_slice(&b[off..]);
    String::from_utf8(out)
        .map(V::Str)
        .map_err(|_| format!("`{name}` cutting a character in two is not supported by gitops-lint"))
}
