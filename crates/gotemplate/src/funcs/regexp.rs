//! Sprig's regular-expression functions (`regex.go`) over the regex
//! crate: Go's pattern syntax where Rust's differs, and the bounds on what
//! a pattern and its input may make matching hold or do.

// Every function of the table has its signature (`R`), fallible or not.
#![allow(clippy::unnecessary_wraps)]

use crate::args::{arity, fits, int, one_str, s, R};
use crate::limits::BEYOND_LIMITS;
use crate::value::V;

/// The longest pattern the regular-expression functions compile.
pub const MAX_REGEX_PATTERN: usize = 16 << 10;
/// The most capture groups a pattern may have: matching keeps a slot per
/// group for every state of the program it runs (the regex crate's
/// `PikeVM`, which finding matches and captures falls back to), so 3,000
/// groups over 3,000 characters held gigabytes for tens of seconds.
pub(crate) const MAX_REGEX_GROUPS: usize = 100;
/// The compiled program's size (the regex crate's `size_limit`; its
/// default is 10 MiB).
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// The lazy DFA's cache (the regex crate's `dfa_size_limit`; its default
/// is 2 MiB).
pub const REGEX_DFA_LIMIT: usize = 1 << 20;

/// Pattern bytes times input bytes one regular-expression call may match.
/// The regex crate is linear in the input while its lazy DFA can serve a
/// pattern; a pattern whose states outgrow the DFA's cache (a 5,630-byte
/// literal) falls back to the `PikeVM`, whose work is the input's length
/// times the pattern's states: a `regexSplit` of such a pattern over 47 KB
/// ran for over ten seconds. Go's `regexp` has no DFA and always pays that
/// product (`regexp/exec.go`: backtracker or NFA), so the bound is on it.
pub(crate) const MAX_REGEX_WORK: usize = 1 << 26;

/// Compiles a pattern of `regexMatch` and the other regular-expression
/// functions, to be matched against `input`. What a pattern can make
/// matching hold or do is bounded here: its length, its capture groups,
/// its compiled size, and its length times the input's.
fn regex(pat: &str, input: &str) -> Result<regex::Regex, String> {
    if pat.len().saturating_mul(input.len()) > MAX_REGEX_WORK {
        return Err(format!(
            "matching a {}-byte pattern against {} bytes of input is more than the {MAX_REGEX_WORK} pattern bytes times input bytes gitops-lint matches {BEYOND_LIMITS}",
            pat.len(),
            input.len()
        ));
    }
    if pat.len() > MAX_REGEX_PATTERN {
        return Err(format!(
            "the pattern is {} bytes long, longer than the {MAX_REGEX_PATTERN} gitops-lint compiles {BEYOND_LIMITS}",
            pat.len()
        ));
    }
    let groups = pat.bytes().filter(|b| *b == b'(').count();
    let re = regex::RegexBuilder::new(&go_pattern(pat))
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_DFA_LIMIT)
        .build()
        .map_err(|e| match e {
            regex::Error::CompiledTooBig(n) => {
                format!("the pattern compiles to more than {n} bytes {BEYOND_LIMITS}")
            }
            e => format!("error parsing regexp: {e}"),
        })?;
    // Counted on the parsed pattern (an escaped or bracketed `(` is no
    // group); the count of `(` is only a cheap upper bound.
    if groups > MAX_REGEX_GROUPS && re.captures_len() - 1 > MAX_REGEX_GROUPS {
        return Err(format!(
            "the pattern has {} capture groups, more than the {MAX_REGEX_GROUPS} gitops-lint matches with {BEYOND_LIMITS}",
            re.captures_len() - 1
        ));
    }
    Ok(re)
}

/// Go's `regexp/syntax` reads what Rust's `regex` refuses, so it is
/// escaped: a `{` that does not start a repetition (`{n}`, `{n,}`,
/// `{n,m}`) is a literal (`parse.go` `repeat` falls back to a literal when
/// `parseRepeat` fails), and so is a `-` after a Perl class escape in a
/// class (`[\w-.]`: `parseClass` takes `\w` whole, then `-` as a
/// character, Perl flags allowing it anywhere).
fn go_pattern(pat: &str) -> std::borrow::Cow<'_, str> {
    fn is_repeat(rest: &str) -> bool {
        let Some(end) = rest.find('}') else {
            return false;
        };
        let inner = &rest[1..end];
        let (lo, hi) = inner.split_once(',').unwrap_or((inner, "0"));
        !lo.is_empty()
            && lo.bytes().all(|b| b.is_ascii_digit())
            && hi.bytes().all(|b| b.is_ascii_digit())
    }
    if !pat.contains('{') && !pat.contains('-') {
        return pat.into();
    }
    let mut out = String::with_capacity(pat.len() + 4);
    let mut class = false;
    let mut after_class_escape = false;
    let mut chars = pat.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let was_after = std::mem::take(&mut after_class_escape);
        match c {
            '\\' => {
                out.push(c);
                if let Some((_, e)) = chars.next() {
                    out.push(e);
                    after_class_escape = class && matches!(e, 'd' | 'D' | 'w' | 'W' | 's' | 'S');
                }
                continue;
            }
            '-' if was_after && chars.peek().is_some_and(|(_, n)| *n != ']') => {
                out.push_str("\\-");
                continue;
            }
            '[' => class = true,
            ']' => class = false,
            '{' if !class && !is_repeat(&pat[i..]) => {
                out.push_str("\\{");
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out.into()
}

pub(super) fn f_regex_match(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(regex(s(&a[0])?, s(&a[1])?)?.is_match(s(&a[1])?)))
}

pub(super) fn f_regex_find(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Str(
        regex(s(&a[0])?, s(&a[1])?)?
            .find(s(&a[1])?)
            .map(|m| m.as_str().to_string())
            .unwrap_or_default(),
    ))
}

pub(super) fn f_regex_find_all(_: &str, a: &[V], room: usize) -> R {
    arity(a, 3)?;
    let re = regex(s(&a[0])?, s(&a[1])?)?;
    let n = int(&a[2])?;
    let limit = if n < 0 {
        usize::MAX
    } else {
        usize::try_from(n).unwrap_or(0)
    };
    // An empty pattern matches at every position of the input: the list
    // is charged as it grows, before it outgrows what is left.
    let mut cost = 0usize;
    let mut out = Vec::new();
    for m in re.find_iter(s(&a[1])?).take(limit) {
        cost = cost.saturating_add(m.len() + crate::value::NODE_COST);
        fits(cost, room)?;
        out.push(V::Str(m.as_str().to_string()));
    }
    Ok(V::List(out))
}

pub(super) fn f_regex_replace_all(_: &str, a: &[V], room: usize) -> R {
    arity(a, 3)?;
    let re = regex(s(&a[0])?, s(&a[1])?)?;
    regex_replace(&re, s(&a[1])?, s(&a[2])?, true, room)
}

pub(super) fn f_regex_replace_all_literal(_: &str, a: &[V], room: usize) -> R {
    arity(a, 3)?;
    let re = regex(s(&a[0])?, s(&a[1])?)?;
    regex_replace(&re, s(&a[1])?, s(&a[2])?, false, room)
}

pub(super) fn f_regex_split(_: &str, a: &[V], room: usize) -> R {
    arity(a, 3)?;
    let re = regex(s(&a[0])?, s(&a[1])?)?;
    let n = int(&a[2])?;
    let src = s(&a[1])?;
    let parts: Box<dyn Iterator<Item = &str>> = if n < 0 {
        Box::new(re.split(src))
    } else {
        Box::new(re.splitn(src, usize::try_from(n).unwrap_or(0)))
    };
    // Charged as it grows, as `regexFindAll` is.
    let mut cost = 0usize;
    let mut out = Vec::new();
    for p in parts {
        cost = cost.saturating_add(p.len() + crate::value::NODE_COST);
        fits(cost, room)?;
        out.push(V::Str(p.to_string()));
    }
    Ok(V::List(out))
}

pub(super) fn f_regex_quote_meta(_: &str, a: &[V], _: usize) -> R {
    one_str(a, regex::escape)
}

/// What one `$` reference in a `regexReplaceAll` replacement is charged
/// per match, in bytes of the value budget: a 200,000-character text with
/// an empty pattern and 1,800 `$0`s expanded 8 million references (seconds
/// of work, no output) before the budget stopped it at one byte each.
const EXPAND_REF_COST: usize = 64;

/// A match's start and end, with its groups when the replacement refers
/// to them.
type RegexMatch<'t> = (usize, usize, Option<regex::Captures<'t>>);

/// Sprig's `regexReplaceAll` (`expand`: `$1` and `${name}` refer to groups,
/// Go's `Regexp.ReplaceAllString`) or `regexReplaceAllLiteral`. Each
/// expansion is bounded before it is made: a reference expands to at most
/// the whole match, so `$0$0$0...` over a long match cannot allocate past
/// `room`.
fn regex_replace(re: &regex::Regex, src: &str, repl: &str, expand: bool, room: usize) -> R {
    let refs = if expand {
        repl.bytes().filter(|b| *b == b'$').count()
    } else {
        0
    };
    let mut out = String::new();
    let mut last = 0;
    // Expanding the replacement is work even when it yields nothing (an
    // empty pattern matches at every position, `$0` of an empty match is
    // empty): each match is charged the replacement's length, and each
    // reference in it [`EXPAND_REF_COST`] (resolving a group name costs
    // far more than copying a byte), so matches times references cannot
    // run past the value budget either.
    let mut work = 0usize;
    let per_match = repl
        .len()
        .saturating_add(refs.saturating_mul(EXPAND_REF_COST));
    // A replacement without references needs no capture groups: finding
    // the matches alone spares an allocation per match (an empty pattern
    // over megabytes of text matches millions of times).
    let matches: Box<dyn Iterator<Item = RegexMatch<'_>>> = if refs == 0 {
        Box::new(re.find_iter(src).map(|m| (m.start(), m.end(), None)))
    } else {
        Box::new(re.captures_iter(src).filter_map(|c| {
            let m = c.get(0)?;
            Some((m.start(), m.end(), Some(c)))
        }))
    };
    for (start, end, caps) in matches {
        work = work.saturating_add(per_match).saturating_add(start - last);
        let bound = out
            .len()
            .saturating_add(start - last)
            .saturating_add(repl.len())
            .saturating_add(refs.saturating_mul(end - start))
            .saturating_add(src.len() - end);
        fits(bound.max(work), room)?;
        out.push_str(&src[last..start]);
        match caps {
            Some(caps) => caps.expand(repl, &mut out),
            None => out.push_str(repl),
        }
        last = end;
    }
    out.push_str(&src[last..]);
    Ok(V::Str(out))
}

#[cfg(test)]
mod regex_tests {
    use super::*;

    /// A fuzzed `regexSplit` of a 5,630-byte literal over 47 KB: the `PikeVM`
    /// the regex crate falls back to ran for over ten seconds. It is
    /// refused for its size now, and a small pattern over the same input
    /// is not.
    #[test]
    fn a_long_pattern_over_a_long_input_is_refused_before_matching() {
        let nul2 = |n: usize| "\0\0".repeat(n);
        let args = [V::Str(nul2(2815)), V::Str(nul2(23686)), V::Int(-1)];
        let err = f_regex_split("regexSplit", &args, usize::MAX).expect_err("refused");
        assert!(
            err.contains("5630-byte pattern against 47372 bytes"),
            "{err}"
        );
        assert!(err.contains(BEYOND_LIMITS), "{err}");
        let args = [V::Str(nul2(5)), V::Str(nul2(23686)), V::Int(-1)];
        let parts = f_regex_split("regexSplit", &args, usize::MAX).expect("split");
        assert!(matches!(parts, V::List(ref l) if l.len() > 1000));
    }

    /// A fuzzed `regexReplaceAll` with an empty pattern (a match at every
    /// position) and 1,800 `$0`s expanded millions of references that
    /// yield nothing. Each reference is charged per match now, so the call
    /// is refused within the value budget; a replacement with a few
    /// references over the same text is not.
    #[test]
    fn references_expanded_at_every_match_are_charged() {
        let room = 16 << 20;
        let re = regex("", "").expect("empty pattern");
        let text = "a".repeat(2_000);
        let err = regex_replace(&re, &text, &"$0".repeat(1_800), true, room).expect_err("refused");
        assert!(err.contains(BEYOND_LIMITS), "{err}");
        let out = regex_replace(&re, &text, "<$0>", true, room).expect("replaced");
        assert!(matches!(out, V::Str(ref s) if s.len() == 2_000 + 2 * 2_001));
    }

    #[test]
    fn braces_that_are_no_repetition_are_literal_as_in_go() {
        // bitnami common `_capabilities.tpl`.
        let re = regex("{(v[0-9])*[^}]*}}$", "").unwrap();
        assert!(re.is_match("&{{v1 1 32} [v1] {v3.17.1 abc clean go1.23.5}}"));
        assert!(regex("a{2}", "").unwrap().is_match("aa"));
        assert!(!regex("^a{2,3}$", "").unwrap().is_match("a"));
        assert!(regex("^a{,2}$", "").unwrap().is_match("a{,2}"));
        assert!(regex("^[{]\\{x$", "").unwrap().is_match("{{x"));
    }
}
