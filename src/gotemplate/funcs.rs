//! The functions a template may call: Go's builtins, the Sprig v3 functions
//! this engine implements, and Argo CD's extras. Argument checks mirror Go's
//! reflection: a `string` parameter given a number or a missing value fails.

// Every function of the table has its signature (`R`), fallible or not.
#![allow(clippy::unnecessary_wraps)]

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;

use base64::Engine as _;
use sha2::Digest as _;

use super::args::{
    arity, at_least, boolean, fits, iface, int, is_empty, list_arg, map_arg, map_ref, none,
    one_str, plain, s, sprint, strslice, strval, strval_ok, to_f64, to_i64, two_bool, two_str, R,
};
use super::printf::sprintf;
use super::value::{Json, SharedMap, V};
use super::yaml_out;
use super::FuncSet;
use crate::limits::BEYOND_LIMITS;

/// Functions Argo CD offers that this engine does not evaluate.
const NOT_IMPLEMENTED: &[&str] = &[
    "html",
    "js",
    "urlquery",
    "call",
    "ago",
    "date",
    "date_in_zone",
    "date_modify",
    "dateInZone",
    "dateModify",
    "duration",
    "durationRound",
    "htmlDate",
    "htmlDateInZone",
    "must_date_modify",
    "mustDateModify",
    "mustToDate",
    "now",
    "toDate",
    "unixEpoch",
    "randAlphaNum",
    "randAlpha",
    "randAscii",
    "randNumeric",
    "randSeededNumeric",
    "swapcase",
    "shuffle",
    "snakecase",
    "camelcase",
    "kebabcase",
    "wrap",
    "wrapWith",
    "sha1sum",
    "adler32sum",
    "seq",
    "toDecimal",
    "randInt",
    "add1f",
    "addf",
    "subf",
    "divf",
    "mulf",
    "maxf",
    "minf",
    "round",
    "typeIsLike",
    "b32enc",
    "b32dec",
    "bcrypt",
    "htpasswd",
    "genPrivateKey",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "encryptAES",
    "decryptAES",
    "randBytes",
    "uuidv4",
    "semver",
    "semverCompare",
];

/// Functions Helm offers that this engine does not evaluate (beyond
/// [`NOT_IMPLEMENTED`]).
const HELM_NOT_IMPLEMENTED: &[&str] = &["fromToml", "toYamlPretty"];

/// Argo CD's additions, which Helm does not have.
const ARGO_ONLY: &[&str] = &["normalize", "slugify"];

/// Checks a function name at parse time, as Go does.
pub(super) fn check_name(name: &str, set: FuncSet) -> Result<(), String> {
    if lookup(name, set).is_some()
        || (set == FuncSet::Helm
            && (super::generators::NAMES.contains(&name) || not_implemented(name, set)))
    {
        // In a chart, a function not implemented is refused where it runs
        // ([`call`]): charts name many in templates that never run with
        // their values, and Helm parses every template of the chart.
        Ok(())
    } else if not_implemented(name, set) {
        Err(refusal(name))
    } else {
        // Includes `env`, `expandenv` and `getHostByName`, which Argo CD removes.
        Err(format!("function {name:?} not defined"))
    }
}

/// Functions only Helm 4 defines (`pkg/engine/funcs.go` `funcMap` at
/// v4.2.1; helm v3.17.1 and v3.18.0 answer `function "mustToYaml" not
/// defined`, verified with the binaries).
const HELM4_ONLY: &[&str] = &["mustToYaml", "mustToToml"];

/// [`check_name`] for a Helm set of the release `gen`.
pub(super) fn check_name_gen(name: &str, set: FuncSet, gen: super::HelmGen) -> Result<(), String> {
    if set == FuncSet::Helm && gen < super::HelmGen::Helm4 && HELM4_ONLY.contains(&name) {
        return Err(format!("function {name:?} not defined"));
    }
    check_name(name, set)
}

/// Whether `name` is a function of `set` this engine does not evaluate.
fn not_implemented(name: &str, set: FuncSet) -> bool {
    NOT_IMPLEMENTED.contains(&name)
        || (set == FuncSet::Helm && HELM_NOT_IMPLEMENTED.contains(&name))
}

fn refusal(name: &str) -> String {
    format!("template function `{name}` is not supported by gitops-lint, so this template cannot be evaluated offline")
}

use super::quote::go_quote;

/// The longest pattern the regular-expression functions compile.
pub(crate) const MAX_REGEX_PATTERN: usize = 16 << 10;
/// The most capture groups a pattern may have: matching keeps a slot per
/// group for every state of the program it runs (the regex crate's
/// `PikeVM`, which finding matches and captures falls back to), so 3,000
/// groups over 3,000 characters held gigabytes for tens of seconds.
pub(crate) const MAX_REGEX_GROUPS: usize = 100;
/// The compiled program's size and the lazy DFA's cache (the regex crate's
/// `size_limit` and `dfa_size_limit`; its defaults are 10 MiB and 2 MiB).
pub(crate) const REGEX_SIZE_LIMIT: usize = 1 << 20;
pub(crate) const REGEX_DFA_LIMIT: usize = 1 << 20;

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
pub(crate) fn path_base(p: &str) -> String {
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
pub(crate) fn path_dir(p: &str) -> String {
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

/// Argo CD's `SanitizeName` (`normalize`): lower-case, `[^-a-z0-9.]` → `-`,
/// at most 253 bytes, trimmed of `-` and `.`.
#[must_use]
pub(crate) fn sanitize_name(name: &str) -> String {
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

/// Which values of the source a merge writes over the destination's.
#[derive(Clone, Copy, PartialEq, Eq)]
enum MergeRule {
    /// `merge`: only where the destination's value is empty.
    Keep,
    /// Argo CD's `mergeOverwrite`: also where the source's value is not empty.
    OverwriteNonEmpty,
    /// Helm's `mergeOverwrite`: every value (mergo's `WithOverride`).
    Overwrite,
}

/// mergo's `deepMerge` of one `map[string]any` into another (`merge.go`,
/// the map case), in place, as Sprig's `merge` and `mergeOverwrite` call
/// it: where both hold a map under a key, the destination's map is merged
/// into in place (and so changes for every holder of it); where the
/// destination has no value, or ends with an empty map, it takes the
/// source's value itself, so a map taken from the source is shared with it.
/// `work` bounds the entries visited (a merge that makes a map contain
/// itself could otherwise recurse into it without end).
fn deep_merge(
    dst: &SharedMap,
    src: &SharedMap,
    rule: MergeRule,
    depth_left: usize,
    work: &mut usize,
) -> Result<(), String> {
    let depth_left = depth_left.checked_sub(1).ok_or_else(|| {
        format!(
            "merged maps nest deeper than {} levels {BEYOND_LIMITS}",
            super::MAX_VALUE_DEPTH
        )
    })?;
    // A snapshot: the source may be the destination, or inside it.
    for (k, v) in src.entries().iter() {
        *work = work.checked_sub(1).ok_or_else(|| {
            format!(
                "the merge visits more entries than the template's budget allows {BEYOND_LIMITS}"
            )
        })?;
        let take = match (dst.get(k), v) {
            (Some(V::Map(d)), V::Map(sm)) => {
                deep_merge(&d, sm, rule, depth_left, work)?;
                d.is_empty()
            }
            (Some(existing), _) => match rule {
                MergeRule::Keep => is_empty(&existing),
                MergeRule::OverwriteNonEmpty => !is_empty(v) || is_empty(&existing),
                MergeRule::Overwrite => true,
            },
            (None, _) => true,
        };
        if take {
            dst.update(|m| m.insert(k.clone(), v.clone()))?;
        }
    }
    Ok(())
}

/// Sprig's `merge`/`mergeOverwrite` (`dict.go`): merges each source into
/// the first map, in place, and returns that map.
///
/// A missing destination is the nil map, which mergo replaces with a new
/// one (`deepMerge` `dst.Set(reflect.MakeMap(...))`); a missing source is
/// the nil map, which adds nothing ([`map_arg`]).
fn merge_into(a: &[V], rule: MergeRule, room: usize) -> R {
    at_least(a, 1)?;
    let fresh;
    let (dst_value, dst) = if a[0] == V::Missing {
        fresh = V::map(BTreeMap::new());
        (&fresh, map_ref(&fresh)?)
    } else {
        (&a[0], map_ref(&a[0])?)
    };
    let mut work = room / crate::gotemplate::value::NODE_COST;
    for src in &a[1..] {
        if *src == V::Missing {
            continue;
        }
        deep_merge(dst, map_ref(src)?, rule, super::MAX_VALUE_DEPTH, &mut work)?;
    }
    Ok(dst_value.clone())
}

/// Sprig's list functions, which take any slice (`reflect` kind `Slice`).
const SLICE_READERS: &[&str] = &[
    "has",
    "mustHas",
    "first",
    "mustFirst",
    "last",
    "mustLast",
    "rest",
    "mustRest",
    "initial",
    "mustInitial",
    "uniq",
    "mustUniq",
    "without",
    "mustWithout",
    "join",
    "sortAlpha",
    "reverse",
    "mustReverse",
    "compact",
    "mustCompact",
    "slice",
    "mustSlice",
    "concat",
    "append",
    "push",
    "mustAppend",
    "mustPush",
    "prepend",
    "mustPrepend",
    "chunk",
    "mustChunk",
];

/// Calls `name`. `room` is what is left of the execution's value budget: a
/// function whose result can outgrow its arguments checks the result's size
/// against it before building the result (results no larger than a small
/// multiple of their arguments are charged by the caller afterwards).
///
/// Typed parameters reject a missing value ("invalid value; expected
/// string"); untyped ones see it as nil, which `iface` applies to values
/// a function stores or returns.
pub(super) fn call(name: &str, mut args: Vec<V>, room: usize, set: FuncSet) -> R {
    if SLICE_READERS.contains(&name) {
        // Sprig reads any slice by reflection (a `chartutil.VersionSet`).
        for a in &mut args {
            if let V::Host(h) = a {
                if h.0.kind() == "slice" {
                    *a = h.0.value();
                }
            }
        }
    }
    match lookup(name, set) {
        Some(f) => f(name, &args, room),
        None if not_implemented(name, set) => Err(refusal(name)),
        None => Err(format!("function {name:?} not defined")),
    }
}

/// `and` and `or` evaluate their arguments lazily, so the executor runs them
/// (`State::call`); reaching this would be a bug in the executor.
fn f_lazy(name: &str, _: &[V], _: usize) -> R {
    Err(format!("{name} is evaluated by the executor"))
}

/// The implementation registered under `name` in `set`.
fn lookup(name: &str, set: FuncSet) -> Option<Func> {
    let find = |table: &[(&str, Func)]| table.iter().find(|(n, _)| *n == name).map(|(_, f)| *f);
    match set {
        FuncSet::ApplicationSet => find(FUNCS),
        FuncSet::Helm if ARGO_ONLY.contains(&name) => None,
        FuncSet::Helm => find(HELM_FUNCS).or_else(|| find(FUNCS)),
    }
}

/// Helm's own functions (`pkg/engine/funcs.go` `funcMap` `extra`,
/// `engine.go` `initFunMap`), which take precedence over [`FUNCS`] in the
/// Helm set. `include` and `tpl` run in the executor (`set.rs`).
const HELM_FUNCS: &[(&str, Func)] = &[
    ("include", f_lazy),
    ("tpl", f_lazy),
    ("required", f_required),
    ("fail", f_helm_fail),
    ("lookup", f_lookup),
    ("getHostByName", f_get_host_by_name),
    ("mustToYaml", f_to_yaml),
    ("toToml", f_to_toml),
    ("mustToToml", f_to_toml),
    ("fromYaml", f_helm_from_yaml),
    ("fromYamlArray", f_helm_from_yaml),
    ("fromJson", f_helm_from_json),
    ("fromJsonArray", f_helm_from_json),
    // Sprig functions the ApplicationSet set does not evaluate.
    ("semverCompare", f_semver_compare),
    ("semver", f_semver),
    ("addf", f_decimal),
    ("add1f", f_decimal),
    ("subf", f_decimal),
    ("mulf", f_decimal),
    ("divf", f_decimal),
    ("maxf", f_maxf),
    ("minf", f_maxf),
    ("round", f_round),
    ("sha1sum", f_sha1sum),
    ("sha512sum", f_sha512sum),
    ("adler32sum", f_adler32sum),
    ("b32enc", f_b32enc),
    ("b32dec", f_b32dec),
    ("swapcase", f_swapcase),
    ("camelcase", f_camelcase),
    ("snakecase", f_snakecase),
    ("kebabcase", f_snakecase),
    ("wrap", f_wrap),
    ("wrapWith", f_wrap),
    ("toJson", f_helm_to_json),
    ("mustToJson", f_helm_to_json),
    ("mergeOverwrite", f_helm_merge_overwrite),
    ("mustMergeOverwrite", f_helm_merge_overwrite),
    ("seq", f_seq),
    // Go's escapers, which Argo CD's set leaves unsupported here.
    ("html", f_escape),
    ("js", f_escape),
    ("urlquery", f_escape),
];

/// Helm 3's `toToml` (see [`super::toml_out`]).
fn f_to_toml(_: &str, a: &[V], room: usize) -> R {
    to_toml(a, room, super::toml_out::Floats::Fixed)
}

/// `toToml` with the floats of the encoder in use (Helm 4's: [`super::toml_out::Floats::Shortest`]).
pub(super) fn to_toml(a: &[V], room: usize, floats: super::toml_out::Floats) -> R {
    arity(a, 1)?;
    let text = super::toml_out::to_toml(&a[0], floats)?;
    fits(text.len(), room)?;
    Ok(V::Str(text))
}

/// Sprig's `mergeOverwrite` as mergo's `WithOverride` does it
/// (`merge.go` `deepMerge`, map case): maps merge recursively, and every
/// other value of the source replaces the destination's, empty ones
/// (`false`, `0`, `""`, nil) included (helm: `mergeOverwrite` of
/// `{enabled: true}` and `{enabled: false}` is `{enabled: false}`).
fn f_helm_merge_overwrite(_: &str, a: &[V], room: usize) -> R {
    merge_into(a, MergeRule::Overwrite, room)
}

/// Helm's `toJson` (`json.Marshal`): sorted keys, HTML characters escaped,
/// floats as Go's `encoding/json` writes them (`floatEncoder`: `%f`-style
/// shortest digits, an exponent only below 1e-6 or from 1e21, `1e-7` not
/// `1e-07`).
fn f_helm_to_json(_: &str, a: &[V], room: usize) -> R {
    fn float(out: &mut String, f: f64) {
        if !f.is_finite() {
            out.push_str("null");
            return;
        }
        let abs = f.abs();
        if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
            let t = format!("{f:e}");
            let (m, e) = t.split_once('e').unwrap_or((&t, "0"));
            let (sign, digits) = e.strip_prefix('-').map_or(("+", e), |d| ("-", d));
            let _ = write!(out, "{m}e{sign}{digits}");
        } else {
            let _ = write!(out, "{f}");
        }
    }
    /// A map's entries or a struct's members, in the order given.
    fn object<'a>(out: &mut String, members: impl Iterator<Item = (&'a String, &'a V)>) {
        out.push('{');
        for (i, (k, e)) in members.enumerate() {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&serde_json::Value::String(k.clone()).to_string());
            out.push(':');
            walk(out, e);
        }
        out.push('}');
    }
    fn walk(out: &mut String, v: &V) {
        match v {
            V::Float(f) => float(out, *f),
            V::List(l) => {
                out.push('[');
                for (i, e) in l.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    walk(out, e);
                }
                out.push(']');
            }
            V::Map(m) => object(out, m.entries().iter()),
            V::Host(h) => match h.0.json() {
                Json::Value(v) => walk(out, &v),
                Json::Object(members) => object(out, members.iter().map(|(k, e)| (k, e))),
            },
            other => out.push_str(&other.to_json().to_string()),
        }
    }
    arity(a, 1)?;
    fits(a[0].printed_bound(), room)?;
    let mut raw = String::new();
    walk(&mut raw, &a[0]);
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    Ok(V::Str(out))
}

/// Sprig's `seq`: `seq end`, `seq start end`, `seq start step end`, the
/// numbers joined by spaces (`numeric.go` `seq`).
fn f_seq(_: &str, a: &[V], room: usize) -> R {
    let p: Vec<i64> = a.iter().map(int).collect::<Result<_, _>>()?;
    let list = match p.as_slice() {
        [end] => {
            let inc = if *end < 1 { -1 } else { 1 };
            range_list(1, end.saturating_add(inc), inc, room)?
        }
        [start, end] => {
            let step = if end < start { -1 } else { 1 };
            range_list(*start, end.saturating_add(step), step, room)?
        }
        [start, step, end] => {
            let mut inc = 1;
            if end < start {
                inc = -1;
                if *step > 0 {
                    return Ok(V::Str(String::new()));
                }
            }
            range_list(*start, end.saturating_add(inc), *step, room)?
        }
        _ => return Ok(V::Str(String::new())),
    };
    let V::List(l) = list else {
        return Ok(V::Str(String::new()));
    };
    Ok(V::Str(
        l.iter().map(V::go_string).collect::<Vec<_>>().join(" "),
    ))
}

/// goutils' `SwapCase` as Sprig's `swapcase`: upper case becomes lower and
/// lower becomes upper (goutils' title case after white space is upper case
/// for every letter Rust knows no separate title case of).
fn f_swapcase(_: &str, a: &[V], _: usize) -> R {
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

/// Go's `html`, `js` and `urlquery` builtins (text/template `funcs.go`
/// `HTMLEscapeString`, `JSEscapeString`, `url.QueryEscape`), over their
/// arguments as `evalArgs` joins them (`fmt.Sprint` unless one string).
fn f_escape(name: &str, a: &[V], room: usize) -> R {
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

/// Sprig's `semverCompare constraint version`.
fn f_semver_compare(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(super::semver::semver_compare(
        s(&a[0])?,
        s(&a[1])?,
    )?))
}

/// Sprig's `semver version`: a version object (`.Major`, `.Minor`...).
fn f_semver(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    super::semver::semver_object(s(&a[0])?)
}

/// A decimal number `m × 10^e`, as shopspring/decimal holds one.
#[derive(Clone, Copy)]
struct Dec {
    m: i128,
    e: i32,
}

const DEC_LIMIT: &str = "a decimal result too large for gitops-lint to compute exactly";

impl Dec {
    /// `decimal.NewFromFloat`: the shortest decimal that reads back as `f`.
    fn from_f64(f: f64) -> Result<Dec, String> {
        if !f.is_finite() {
            return Err(format!("cannot convert {f} to a decimal"));
        }
        let text = format!("{f:e}");
        let (mant, exp) = text.split_once('e').unwrap_or((&text, "0"));
        let exp: i32 = exp.parse().map_err(|_| DEC_LIMIT.to_string())?;
        let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
        let digits = format!("{int}{frac}");
        let m: i128 = digits.parse().map_err(|_| DEC_LIMIT.to_string())?;
        let e = exp - i32::try_from(frac.len()).map_err(|_| DEC_LIMIT.to_string())?;
        Ok(Dec { m, e })
    }

    fn scaled(self, e: i32) -> Option<i128> {
        // `self` at exponent `e <= self.e`.
        let k = u32::try_from(self.e - e).ok()?;
        self.m.checked_mul(10i128.checked_pow(k)?)
    }

    fn add(self, o: Dec, sign: i128) -> Option<Dec> {
        let e = self.e.min(o.e);
        Some(Dec {
            m: self
                .scaled(e)?
                .checked_add(o.scaled(e)?.checked_mul(sign)?)?,
            e,
        })
    }

    fn mul(self, o: Dec) -> Option<Dec> {
        Some(Dec {
            m: self.m.checked_mul(o.m)?,
            e: self.e.checked_add(o.e)?,
        })
    }

    /// `Decimal.Div`: `DivRound` to 16 places, half away from zero.
    fn div(self, o: Dec) -> Result<Dec, String> {
        if o.m == 0 {
            return Err("decimal division by 0".into());
        }
        let k = self.e - o.e + 16;
        let (num, den) = if k >= 0 {
            let p = 10i128.checked_pow(u32::try_from(k).map_err(|_| DEC_LIMIT)?);
            (p.and_then(|p| self.m.checked_mul(p)), Some(o.m))
        } else {
            let p = 10i128.checked_pow(u32::try_from(-k).map_err(|_| DEC_LIMIT)?);
            (Some(self.m), p.and_then(|p| o.m.checked_mul(p)))
        };
        let (Some(num), Some(den)) = (num, den) else {
            return Err(DEC_LIMIT.into());
        };
        let (q, r) = (num / den, num % den);
        let q = if r.unsigned_abs().saturating_mul(2) >= den.unsigned_abs() {
            q + if (num < 0) == (den < 0) { 1 } else { -1 }
        } else {
            q
        };
        Ok(Dec { m: q, e: -16 })
    }

    /// `Decimal.Float64`: the nearest float.
    fn to_f64(self) -> f64 {
        format!("{}e{}", self.m, self.e).parse().unwrap_or(f64::NAN)
    }
}

/// Sprig's `addf`, `add1f`, `subf`, `mulf`, `divf`: exact decimal
/// arithmetic over the arguments' shortest decimal forms, then the nearest
/// float (`execDecimalOp`), so `addf 0.1 0.2` is `0.3`.
fn f_decimal(name: &str, a: &[V], _: usize) -> R {
    let (first, rest): (f64, Vec<f64>) = match name {
        "addf" => (0.0, a.iter().map(to_f64).collect()),
        "add1f" => {
            arity(a, 1)?;
            (to_f64(&a[0]), vec![1.0])
        }
        _ => {
            at_least(a, 1)?;
            (to_f64(&a[0]), a[1..].iter().map(to_f64).collect())
        }
    };
    let mut acc = Dec::from_f64(first)?;
    for x in rest {
        let d = Dec::from_f64(x)?;
        acc = match name {
            "addf" | "add1f" => acc.add(d, 1).ok_or(DEC_LIMIT)?,
            "subf" => acc.add(d, -1).ok_or(DEC_LIMIT)?,
            "mulf" => acc.mul(d).ok_or(DEC_LIMIT)?,
            _ => acc.div(d)?,
        };
    }
    Ok(V::Float(acc.to_f64()))
}

/// Sprig's `maxf`/`minf` (`math.Max`, `math.Min`).
fn f_maxf(name: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    let mut acc = to_f64(&a[0]);
    for b in &a[1..] {
        let b = to_f64(b);
        acc = if name == "maxf" {
            acc.max(b)
        } else {
            acc.min(b)
        };
    }
    Ok(V::Float(acc))
}

/// Sprig's `round value places [roundOn]`.
fn f_round(_: &str, a: &[V], _: usize) -> R {
    if a.len() < 2 || a.len() > 3 {
        return Err(format!("wrong number of args: want 2 or 3 got {}", a.len()));
    }
    let round_on = a.get(2).map_or(0.5, to_f64);
    let val = to_f64(&a[0]);
    let pow = 10f64.powf(to_f64(&V::Int(int(&a[1])?)));
    let digit = pow * val;
    let frac = digit.fract();
    let r = if frac >= round_on {
        digit.ceil()
    } else {
        digit.floor()
    };
    Ok(V::Float(r / pow))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().fold(String::new(), |mut acc, b| {
        let _ = write!(acc, "{b:02x}");
        acc
    })
}

/// Sprig's `sha1sum`: SHA-1 (FIPS 180-4) of the string, in hex.
fn f_sha1sum(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| hex(&sha1::Sha1::digest(x.as_bytes())))
}

/// Sprig's `sha512sum`.
fn f_sha512sum(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| hex(&sha2::Sha512::digest(x.as_bytes())))
}

/// Sprig's `adler32sum`: the Adler-32 checksum, in decimal.
fn f_adler32sum(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| {
        let mut adler = adler2::Adler32::new();
        adler.write_slice(x.as_bytes());
        adler.checksum().to_string()
    })
}

/// Sprig's `b32enc` (`base32.StdEncoding`, padded).
fn f_b32enc(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| data_encoding::BASE32.encode(x.as_bytes()))
}

/// Sprig's `b32dec`: the decoded string, or the decoding error as the
/// result (Sprig returns `err.Error()`).
fn f_b32dec(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| match super::encoding::base32_std(x.as_bytes()) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => e,
    })
}

/// Helm's `warnWrap`: the delimiters `cleanupExecError` finds a `fail` or
/// `required` message between.
fn warn_wrap(msg: &str) -> String {
    format!("HELM_ERR_START{msg}HELM_ERR_END")
}

/// Helm's `required`: nil or the empty string fail with the message.
fn f_required(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let msg = s(&a[0])?;
    match &a[1] {
        V::Nil | V::Missing => Err(warn_wrap(msg)),
        V::Str(x) if x.is_empty() => Err(warn_wrap(msg)),
        v => Ok(v.clone()),
    }
}

/// Helm's `fail`.
fn f_helm_fail(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Err(warn_wrap(s(&a[0])?))
}

/// `lookup` as `helm template` has it: no cluster, an empty map.
fn f_lookup(_: &str, a: &[V], _: usize) -> R {
    arity(a, 4)?;
    for v in a {
        s(v)?;
    }
    Ok(V::map(BTreeMap::new()))
}

/// `getHostByName` with Helm's DNS lookups off (`EnableDNS` false): "".
fn f_get_host_by_name(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    s(&a[0])?;
    Ok(V::Str(String::new()))
}

/// Helm's `fromYaml`/`fromYamlArray` (`pkg/engine/funcs.go` `fromYAML`,
/// `fromYAMLArray`): a decoding error is not a template error but the map
/// `{"Error": msg}` (the list `[msg]`), whose message is sigs.k8s.io/yaml's
/// (`error converting YAML to JSON: yaml: line 1: did not find expected ','
/// or ']'`, go-yaml v2's wording) or `encoding/json`'s for a value of
/// another type. Where the YAML error is not one worded as go-yaml words it
/// (a limit of gitops-lint's), the call is refused.
fn f_helm_from_yaml(name: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let text = s(&a[0])?;
    let want_list = name == "fromYamlArray";
    let err = |e: String| {
        Ok(if want_list {
            V::List(vec![V::Str(e)])
        } else {
            V::Map([("Error".to_string(), V::Str(e))].into())
        })
    };
    let v = match crate::yaml::load_first_sigs(text, &crate::yaml::Limits::default()) {
        Ok(v) => V::from_json(&v),
        Err(e) => match e.go_yaml {
            Some(go) => return err(format!("error converting YAML to JSON: {go}")),
            None => {
                return Err(format!(
                    "{name} of text that is not a YAML {}: {e}; the message helm puts in its result (go-yaml's wording) is not known for this error, so this template cannot be evaluated offline",
                    if want_list { "list" } else { "map" }
                ))
            }
        },
    };
    let go_type = if want_list {
        "[]interface {}"
    } else {
        "map[string]interface {}"
    };
    match (want_list, v) {
        (false, V::Map(m)) => Ok(V::Map(m)),
        (false, V::Nil) => Ok(V::map(BTreeMap::new())),
        (true, V::List(l)) => Ok(V::List(l)),
        (true, V::Nil) => Ok(V::List(Vec::new())),
        (_, other) => {
            let kind = match other {
                V::Map(_) => "object",
                V::List(_) => "array",
                V::Str(_) => "string",
                V::Bool(_) => "bool",
                _ => "number",
            };
            err(format!(
                "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {kind} into Go value of type {go_type}"
            ))
        }
    }
}

/// Helm's `fromJson`/`fromJsonArray`: an object (a list), or `{"Error": msg}`
/// (`[msg]`) when the text is not one.
fn f_helm_from_json(name: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let text = s(&a[0])?;
    let want_list = name == "fromJsonArray";
    let err = |e: String| {
        if want_list {
            V::List(vec![V::Str(e)])
        } else {
            V::Map([("Error".to_string(), V::Str(e))].into())
        }
    };
    Ok(match serde_json::from_str::<serde_json::Value>(text) {
        Ok(v) => match V::from_json(&v) {
            V::Map(m) if !want_list => V::Map(m),
            V::List(l) if want_list => V::List(l),
            V::Nil if want_list => V::List(Vec::new()),
            V::Nil => V::map(BTreeMap::new()),
            other => err(format!(
                "json: cannot unmarshal {} into Go value of type {}",
                other.kind_name(),
                if want_list {
                    "[]interface {}"
                } else {
                    "map[string]interface {}"
                }
            )),
        },
        Err(e) => err(e.to_string()),
    })
}

/// A function the engine evaluates: called with the name it was called by
/// (one implementation may serve several names), the arguments, and the
/// bytes left to the execution's value budget (see [`call`]).
type Func = fn(&str, &[V], usize) -> R;

/// Every function this engine evaluates, by name: the single source of
/// [`check_name`] and [`call`]. `and` and `or` are evaluated lazily by the
/// executor itself and appear here so that parsing accepts them.
const FUNCS: &[(&str, Func)] = &[
    // Go builtins (`and` and `or` short-circuit in the executor)
    ("and", f_lazy),
    ("or", f_lazy),
    ("not", f_not),
    ("len", f_len),
    ("index", f_index),
    ("print", f_print),
    ("println", f_println),
    ("printf", f_printf),
    ("eq", f_eq),
    ("ne", f_ne),
    ("lt", f_lt),
    ("le", f_le),
    ("gt", f_gt),
    ("ge", f_ge),
    ("hello", f_hello),
    ("abbrev", f_abbrev),
    ("abbrevboth", f_abbrevboth),
    ("trunc", f_trunc),
    ("trim", f_trim),
    ("upper", f_upper),
    ("lower", f_lower),
    ("title", f_title),
    ("untitle", f_untitle),
    ("initials", f_initials),
    ("nospace", f_nospace),
    ("substr", f_substr),
    ("repeat", f_repeat),
    ("trimall", f_trimall),
    ("trimAll", f_trimall),
    ("trimSuffix", f_trim_suffix),
    ("trimPrefix", f_trim_prefix),
    ("contains", f_contains),
    ("hasPrefix", f_has_prefix),
    ("hasSuffix", f_has_suffix),
    ("quote", f_quote),
    ("squote", f_squote),
    ("cat", f_cat),
    ("indent", f_indent),
    ("nindent", f_indent),
    ("replace", f_replace),
    ("plural", f_plural),
    ("sha256sum", f_sha256sum),
    ("derivePassword", super::crypto::f_derive_password),
    ("urlParse", super::url::f_url_parse),
    ("urlJoin", super::url::f_url_join),
    ("buildCustomCert", super::crypto::f_build_custom_cert),
    ("toString", f_to_string),
    ("atoi", f_atoi),
    ("int64", f_int64),
    ("int", f_int64),
    ("float64", f_float64),
    ("split", f_split),
    ("splitn", f_split),
    ("splitList", f_split_list),
    ("toStrings", f_to_strings),
    ("until", f_until),
    ("untilStep", f_until_step),
    ("add1", f_add1),
    ("add", f_add),
    ("sub", f_sub),
    ("mul", f_mul),
    ("div", f_div),
    ("mod", f_div),
    ("max", f_max),
    ("biggest", f_max),
    ("min", f_max),
    ("floor", f_floor),
    ("ceil", f_floor),
    ("join", f_join),
    ("sortAlpha", f_sort_alpha),
    ("default", f_default),
    ("empty", f_empty),
    ("coalesce", f_coalesce),
    ("all", f_all),
    ("any", f_any),
    ("compact", f_compact),
    ("mustCompact", f_compact),
    ("fromJson", f_from_json),
    ("mustFromJson", f_from_json),
    ("toJson", f_to_json),
    ("mustToJson", f_to_json),
    ("toRawJson", f_to_json),
    ("mustToRawJson", f_to_json),
    ("toPrettyJson", f_to_pretty_json),
    ("mustToPrettyJson", f_to_pretty_json),
    ("ternary", f_ternary),
    ("deepCopy", f_deep_copy),
    ("mustDeepCopy", f_deep_copy),
    ("typeOf", f_type_of),
    ("typeIs", f_type_is),
    ("kindOf", f_kind_of),
    ("kindIs", f_kind_is),
    ("deepEqual", f_deep_equal),
    ("base", f_base),
    ("osBase", f_base),
    ("dir", f_dir),
    ("osDir", f_dir),
    ("clean", f_clean),
    ("osClean", f_clean),
    ("ext", f_ext),
    ("osExt", f_ext),
    ("isAbs", f_is_abs),
    ("osIsAbs", f_is_abs),
    ("b64enc", f_b64enc),
    ("b64dec", f_b64dec),
    ("tuple", f_tuple),
    ("list", f_tuple),
    ("dict", f_dict),
    ("get", f_get),
    ("set", f_set),
    ("unset", f_unset),
    ("hasKey", f_has_key),
    ("pluck", f_pluck),
    ("keys", f_keys),
    ("values", f_values),
    ("pick", f_pick),
    ("omit", f_pick),
    ("merge", f_merge),
    ("mustMerge", f_merge),
    ("mergeOverwrite", f_merge),
    ("mustMergeOverwrite", f_merge),
    ("append", f_append),
    ("push", f_append),
    ("mustAppend", f_append),
    ("mustPush", f_append),
    ("prepend", f_prepend),
    ("mustPrepend", f_prepend),
    ("first", f_first),
    ("mustFirst", f_first),
    ("last", f_last),
    ("mustLast", f_last),
    ("rest", f_rest),
    ("mustRest", f_rest),
    ("initial", f_rest),
    ("mustInitial", f_rest),
    ("reverse", f_reverse),
    ("mustReverse", f_reverse),
    ("uniq", f_uniq),
    ("mustUniq", f_uniq),
    ("without", f_without),
    ("mustWithout", f_without),
    ("has", f_has),
    ("mustHas", f_has),
    ("slice", f_slice),
    ("mustSlice", f_slice),
    ("concat", f_concat),
    ("dig", f_dig),
    ("chunk", f_chunk),
    ("mustChunk", f_chunk),
    ("fail", f_fail),
    ("regexMatch", f_regex_match),
    ("mustRegexMatch", f_regex_match),
    ("regexFind", f_regex_find),
    ("mustRegexFind", f_regex_find),
    ("regexFindAll", f_regex_find_all),
    ("mustRegexFindAll", f_regex_find_all),
    ("regexReplaceAll", f_regex_replace_all),
    ("mustRegexReplaceAll", f_regex_replace_all),
    ("regexReplaceAllLiteral", f_regex_replace_all_literal),
    ("mustRegexReplaceAllLiteral", f_regex_replace_all_literal),
    ("regexSplit", f_regex_split),
    ("mustRegexSplit", f_regex_split),
    ("regexQuoteMeta", f_regex_quote_meta),
    ("normalize", f_normalize),
    ("slugify", f_slugify),
    ("toYaml", f_to_yaml),
    ("fromYaml", f_from_yaml),
    ("fromYamlArray", f_from_yaml),
];

fn f_not(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Bool(!a[0].truth()))
}

fn f_len(_: &str, a: &[V], _: usize) -> R {
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

fn f_index(_: &str, a: &[V], _: usize) -> R {
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

fn f_print(_: &str, a: &[V], _: usize) -> R {
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

fn f_println(_: &str, a: &[V], _: usize) -> R {
    Ok(V::Str(
        a.iter().map(strval).collect::<Vec<_>>().join(" ") + "\n",
    ))
}

fn f_printf(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    Ok(V::Str(sprintf(s(&a[0])?, &a[1..])?))
}

fn f_eq(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 2)?;
    for b in &a[1..] {
        if eq(&a[0], b)? {
            return Ok(V::Bool(true));
        }
    }
    Ok(V::Bool(false))
}

fn f_ne(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(!eq(&a[0], &a[1])?))
}

fn f_lt(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(lt(&a[0], &a[1])?))
}

fn f_le(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(lt(&a[0], &a[1])? || eq(&a[0], &a[1])?))
}

fn f_gt(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(!(lt(&a[0], &a[1])? || eq(&a[0], &a[1])?)))
}

fn f_ge(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(!lt(&a[0], &a[1])?))
}

fn f_hello(_: &str, _: &[V], _: usize) -> R {
    Ok(V::Str("Hello!".into()))
}

fn f_abbrev(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let w = usize::try_from(int(&a[0])?).unwrap_or(0);
    let st = s(&a[1])?;
    if w < 4 || st.len() <= w {
        return Ok(V::Str(st.to_string()));
    }
    Ok(V::Str(format!("{}...", &st[..floor_boundary(st, w - 3)])))
}

fn f_abbrevboth(_: &str, _: &[V], _: usize) -> R {
    Err("template function `abbrevboth` is not supported by gitops-lint".into())
}

fn f_trunc(_: &str, a: &[V], _: usize) -> R {
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

fn f_trim(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| {
        x.trim_matches(|c: char| c.is_whitespace()).to_string()
    })
}

fn f_upper(_: &str, a: &[V], _: usize) -> R {
    one_str(a, str::to_uppercase)
}

fn f_lower(_: &str, a: &[V], _: usize) -> R {
    one_str(a, str::to_lowercase)
}

fn f_title(_: &str, a: &[V], _: usize) -> R {
    one_str(a, title)
}

fn f_untitle(_: &str, a: &[V], _: usize) -> R {
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

fn f_initials(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| {
        x.split_whitespace()
            .filter_map(|w| w.chars().next())
            .collect()
    })
}

fn f_nospace(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| x.chars().filter(|c| !c.is_whitespace()).collect())
}

fn f_substr(_: &str, a: &[V], _: usize) -> R {
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

fn f_repeat(_: &str, a: &[V], room: usize) -> R {
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

fn f_trimall(_: &str, a: &[V], _: usize) -> R {
    two_str(a, |cut, x| x.trim_matches(|c| cut.contains(c)).to_string())
}

fn f_trim_suffix(_: &str, a: &[V], _: usize) -> R {
    two_str(a, |suf, x| x.strip_suffix(suf).unwrap_or(x).to_string())
}

fn f_trim_prefix(_: &str, a: &[V], _: usize) -> R {
    two_str(a, |pre, x| x.strip_prefix(pre).unwrap_or(x).to_string())
}

fn f_contains(_: &str, a: &[V], _: usize) -> R {
    two_bool(a, |sub, x| x.contains(sub))
}

fn f_has_prefix(_: &str, a: &[V], _: usize) -> R {
    two_bool(a, |p, x| x.starts_with(p))
}

fn f_has_suffix(_: &str, a: &[V], _: usize) -> R {
    two_bool(a, |p, x| x.ends_with(p))
}

fn f_quote(_: &str, a: &[V], _: usize) -> R {
    strval_ok(a)?;
    Ok(V::Str(
        a.iter()
            .filter(|v| !matches!(v, V::Nil | V::Missing))
            .map(|v| go_quote(&strval(v)))
            .collect::<Vec<_>>()
            .join(" "),
    ))
}

fn f_squote(_: &str, a: &[V], _: usize) -> R {
    strval_ok(a)?;
    Ok(V::Str(
        a.iter()
            .filter(|v| !matches!(v, V::Nil | V::Missing))
            .map(|v| format!("'{}'", strval(v)))
            .collect::<Vec<_>>()
            .join(" "),
    ))
}

fn f_cat(_: &str, a: &[V], _: usize) -> R {
    Ok(V::Str(
        a.iter()
            .filter(|v| !matches!(v, V::Nil | V::Missing))
            .map(sprint)
            .collect::<Vec<_>>()
            .join(" "),
    ))
}

fn f_indent(name: &str, a: &[V], room: usize) -> R {
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

fn f_replace(_: &str, a: &[V], room: usize) -> R {
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

fn f_plural(_: &str, a: &[V], _: usize) -> R {
    arity(a, 3)?;
    let (one, many, n) = (s(&a[0])?, s(&a[1])?, int(&a[2])?);
    Ok(V::Str(if n == 1 { one } else { many }.to_string()))
}

fn f_sha256sum(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| {
        let d = sha2::Sha256::digest(x.as_bytes());
        d.iter().fold(String::new(), |mut acc, b| {
            let _ = write!(acc, "{b:02x}");
            acc
        })
    })
}

fn f_to_string(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    strval_ok(a)?;
    Ok(V::Str(strval(&a[0])))
}

fn f_atoi(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Int(s(&a[0])?.parse().unwrap_or(0)))
}

/// Sprig's `int` (`cast.ToInt`, an `int`) and `int64` (`cast.ToInt64`, an
/// `int64`): the same value on a 64-bit machine, of different types
/// (numeric.go@v3.3.0 `toInt`, `toInt64`).
fn f_int64(name: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let n = to_i64(&a[0]);
    Ok(if name == "int" {
        V::Int(n)
    } else {
        V::Int64(n)
    })
}

fn f_float64(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Float(to_f64(&a[0])))
}

fn f_split(name: &str, a: &[V], room: usize) -> R {
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

fn f_split_list(_: &str, a: &[V], room: usize) -> R {
    arity(a, 2)?;
    fits(split_cost(s(&a[1])?, s(&a[0])?), room)?;
    Ok(V::List(
        go_split(s(&a[1])?, s(&a[0])?, -1)
            .into_iter()
            .map(V::Str)
            .collect(),
    ))
}

fn f_to_strings(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::List(strslice(&a[0]).into_iter().map(V::Str).collect()))
}

fn f_until(_: &str, a: &[V], room: usize) -> R {
    arity(a, 1)?;
    let n = int(&a[0])?;
    range_list(0, n, if n < 0 { -1 } else { 1 }, room)
}

fn f_until_step(_: &str, a: &[V], room: usize) -> R {
    arity(a, 3)?;
    range_list(int(&a[0])?, int(&a[1])?, int(&a[2])?, room)
}

fn f_add1(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Int64(to_i64(&a[0]).wrapping_add(1)))
}

// Sprig's integer arithmetic returns `int64` (functions.go@v3.3.0 `add1`,
// `add`, `sub`, `div`, `mod`, `mul`; numeric.go `max`, `min`).
fn f_add(_: &str, a: &[V], _: usize) -> R {
    Ok(V::Int64(a.iter().map(to_i64).fold(0i64, i64::wrapping_add)))
}

fn f_sub(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Int64(to_i64(&a[0]).wrapping_sub(to_i64(&a[1]))))
}

fn f_mul(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    Ok(V::Int64(a.iter().map(to_i64).fold(1i64, i64::wrapping_mul)))
}

fn f_div(name: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let (x, y) = (to_i64(&a[0]), to_i64(&a[1]));
    if y == 0 {
        return Err("runtime error: integer divide by zero".into());
    }
    Ok(V::Int64(if name == "div" {
        x.wrapping_div(y)
    } else {
        x.wrapping_rem(y)
    }))
}

fn f_max(name: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    let vals = a.iter().map(to_i64);
    Ok(V::Int64(if name == "min" {
        vals.min().unwrap_or(0)
    } else {
        vals.max().unwrap_or(0)
    }))
}

fn f_floor(name: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let f = to_f64(&a[0]);
    Ok(V::Float(if name == "floor" { f.floor() } else { f.ceil() }))
}

fn f_join(_: &str, a: &[V], room: usize) -> R {
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

fn f_sort_alpha(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let mut l = strslice(&a[0]);
    l.sort();
    Ok(V::List(l.into_iter().map(V::Str).collect()))
}

fn f_default(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    if a.len() == 1 || is_empty(&a[1]) {
        Ok(iface(&a[0]))
    } else {
        Ok(iface(&a[1]))
    }
}

fn f_empty(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Bool(is_empty(&a[0])))
}

fn f_coalesce(_: &str, a: &[V], _: usize) -> R {
    Ok(a.iter().find(|v| !is_empty(v)).map_or(V::Nil, iface))
}

fn f_all(_: &str, a: &[V], _: usize) -> R {
    Ok(V::Bool(a.iter().all(|v| !is_empty(v))))
}

fn f_any(_: &str, a: &[V], _: usize) -> R {
    Ok(V::Bool(a.iter().any(|v| !is_empty(v))))
}

fn f_compact(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::List(
        list_arg("compact", &a[0])?
            .iter()
            .filter(|v| !is_empty(v))
            .cloned()
            .collect(),
    ))
}

fn f_from_json(name: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    match serde_json::from_str::<serde_json::Value>(s(&a[0])?) {
        Ok(v) => Ok(V::from_json(&v)),
        Err(e) if name == "mustFromJson" => Err(e.to_string()),
        Err(_) => Ok(V::Nil),
    }
}

fn f_to_json(name: &str, a: &[V], room: usize) -> R {
    arity(a, 1)?;
    let raw = name.contains("Raw");
    fits(a[0].printed_bound(), room)?;
    Ok(V::Str(go_json(&a[0], !raw, false)))
}

fn f_to_pretty_json(_: &str, a: &[V], room: usize) -> R {
    arity(a, 1)?;
    fits(a[0].printed_bound(), room)?;
    Ok(V::Str(go_json(&a[0], true, true)))
}

fn f_ternary(_: &str, a: &[V], _: usize) -> R {
    arity(a, 3)?;
    Ok(if boolean(&a[2])? {
        iface(&a[0])
    } else {
        iface(&a[1])
    })
}

fn f_deep_copy(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    iface(&a[0])
        .deep_copy(super::MAX_VALUE_DEPTH)
        .ok_or_else(|| {
            format!(
                "the value nests deeper than {} levels {BEYOND_LIMITS}",
                super::MAX_VALUE_DEPTH
            )
        })
}

fn f_type_of(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Str(a[0].type_name().to_string()))
}

fn f_type_is(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(s(&a[0])? == a[1].type_name()))
}

fn f_kind_of(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Str(a[0].kind_name().to_string()))
}

fn f_kind_is(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(s(&a[0])? == a[1].kind_name()))
}

fn f_deep_equal(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(a[0] == a[1]))
}

fn f_base(_: &str, a: &[V], _: usize) -> R {
    one_str(a, path_base)
}

fn f_dir(_: &str, a: &[V], _: usize) -> R {
    one_str(a, path_dir)
}

fn f_clean(_: &str, a: &[V], _: usize) -> R {
    one_str(a, path_clean)
}

fn f_ext(_: &str, a: &[V], _: usize) -> R {
    one_str(a, path_ext)
}

fn f_is_abs(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::Bool(s(&a[0])?.starts_with('/')))
}

fn f_b64enc(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| {
        base64::engine::general_purpose::STANDARD.encode(x.as_bytes())
    })
}

/// Sprig's `b64dec`: the decoded string, or the decoding error as the
/// result (Sprig returns `err.Error()`).
fn f_b64dec(_: &str, a: &[V], _: usize) -> R {
    one_str(a, |x| match super::encoding::base64_std(x.as_bytes()) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) => e,
    })
}

fn f_tuple(_: &str, a: &[V], _: usize) -> R {
    Ok(V::List(a.iter().map(iface).collect()))
}

fn f_dict(_: &str, a: &[V], _: usize) -> R {
    let mut m = BTreeMap::new();
    for pair in a.chunks(2) {
        let k = strval(&pair[0]);
        m.insert(k, pair.get(1).map_or(V::Str(String::new()), iface));
    }
    Ok(V::map(m))
}

fn f_get(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(map_arg(&a[0])?
        .get(s(&a[1])?)
        .cloned()
        .unwrap_or(V::Str(String::new())))
}

/// Sprig's `set`: `d[key] = value` in place, returning `d`.
fn f_set(_: &str, a: &[V], _: usize) -> R {
    arity(a, 3)?;
    let (key, value) = (s(&a[1])?.to_string(), iface(&a[2]));
    if a[0] == V::Missing {
        // Go's runtime panic, which text/template returns as the error.
        return Err("assignment to entry in nil map".into());
    }
    map_ref(&a[0])?.update(|m| m.insert(key, value))?;
    Ok(a[0].clone())
}

/// Sprig's `unset`: `delete(d, key)` in place, returning `d`.
fn f_unset(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let key = s(&a[1])?;
    if a[0] == V::Missing {
        // `delete` of the nil map does nothing; it stays nil (`toJson`: `null`).
        return Ok(V::Nil);
    }
    map_ref(&a[0])?.update(|m| m.remove(key))?;
    Ok(a[0].clone())
}

fn f_has_key(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(map_arg(&a[0])?.contains_key(s(&a[1])?)))
}

fn f_pluck(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    let key = s(&a[0])?;
    let mut out = Vec::new();
    for d in &a[1..] {
        if let Some(v) = map_arg(d)?.get(key) {
            out.push(v.clone());
        }
    }
    Ok(V::List(out))
}

fn f_keys(_: &str, a: &[V], _: usize) -> R {
    let mut out = Vec::new();
    for d in a {
        out.extend(map_arg(d)?.keys().map(|k| V::Str(k.clone())));
    }
    Ok(V::List(out))
}

fn f_values(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Ok(V::List(map_arg(&a[0])?.values().cloned().collect()))
}

fn f_pick(name: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    let m = map_arg(&a[0])?;
    let keys: Vec<&str> = a[1..].iter().map(s).collect::<Result<_, _>>()?;
    Ok(V::Map(
        m.iter()
            .filter(|(k, _)| keys.contains(&k.as_str()) == (name == "pick"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
    ))
}

fn f_merge(name: &str, a: &[V], room: usize) -> R {
    let rule = if name.contains("Overwrite") {
        MergeRule::OverwriteNonEmpty
    } else {
        MergeRule::Keep
    };
    merge_into(a, rule, room)
}

fn f_append(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let mut l = list_arg("push", &a[0])?.to_vec();
    l.push(iface(&a[1]));
    Ok(V::List(l))
}

fn f_prepend(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let mut l = vec![iface(&a[1])];
    l.extend(list_arg("prepend", &a[0])?.iter().cloned());
    Ok(V::List(l))
}

fn f_first(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    if matches!(a[0], V::Nil | V::Missing) {
        return Ok(none(a));
    }
    Ok(list_arg("find first", &a[0])?
        .first()
        .cloned()
        .unwrap_or(V::Nil))
}

fn f_last(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    if matches!(a[0], V::Nil | V::Missing) {
        return Ok(none(a));
    }
    Ok(list_arg("find last", &a[0])?
        .last()
        .cloned()
        .unwrap_or(V::Nil))
}

fn f_rest(name: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    if matches!(a[0], V::Nil | V::Missing) {
        return Ok(none(a));
    }
    let l = list_arg("find rest", &a[0])?;
    if l.is_empty() {
        return Ok(V::Nil);
    }
    Ok(V::List(if name.contains("est") {
        l[1..].to_vec()
    } else {
        l[..l.len() - 1].to_vec()
    }))
}

fn f_reverse(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let mut l = list_arg("reverse", &a[0])?.to_vec();
    l.reverse();
    Ok(V::List(l))
}

fn f_uniq(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    let mut out: Vec<V> = Vec::new();
    for v in list_arg("uniq", &a[0])? {
        if !out.contains(v) {
            out.push(v.clone());
        }
    }
    Ok(V::List(out))
}

fn f_without(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    Ok(V::List(
        list_arg("without", &a[0])?
            .iter()
            .filter(|v| !a[1..].contains(v))
            .cloned()
            .collect(),
    ))
}

fn f_has(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    if matches!(a[1], V::Nil | V::Missing) {
        return Ok(V::Bool(false));
    }
    Ok(V::Bool(
        list_arg("find has", &a[1])?.contains(&iface(&a[0])),
    ))
}

fn f_slice(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 1)?;
    let l = list_arg("slice", &a[0])?;
    let n = l.len();
    let idx = |i: usize| -> Result<usize, String> {
        a.get(i).map_or(Ok(usize::MAX), |v| {
            usize::try_from(to_i64(v)).map_err(|e| e.to_string())
        })
    };
    let start = if a.len() > 1 { idx(1)? } else { 0 };
    let end = if a.len() > 2 { idx(2)? } else { n };
    if start > end || end > n {
        return Err(format!("slice bounds out of range [{start}:{end}]"));
    }
    Ok(V::List(l[start..end].to_vec()))
}

fn f_concat(_: &str, a: &[V], _: usize) -> R {
    let mut out = Vec::new();
    for v in a {
        out.extend(list_arg("concat", v)?.iter().cloned());
    }
    Ok(V::List(out))
}

/// Sprig's `dig` takes `...interface{}` and asserts its arguments' types
/// (`dict.go` `dig`, `digFromDict`), so a wrong one is the panic text/template
/// turns into the call's error: `interface conversion: …`.
fn f_dig(_: &str, a: &[V], _: usize) -> R {
    at_least(a, 3)?;
    let dict = dig_map(&a[a.len() - 1])?;
    let default = &a[a.len() - 2];
    let keys: Vec<&str> = a[..a.len() - 2]
        .iter()
        .map(|k| match k {
            V::Str(k) => Ok(k.as_str()),
            other => Err(interface_conversion(other, "string")),
        })
        .collect::<Result<_, _>>()?;
    let mut cur = dict;
    for (i, k) in keys.iter().enumerate() {
        let next = match cur.get(*k) {
            None => return Ok(default.clone()),
            Some(v) if i == keys.len() - 1 => return Ok(v.clone()),
            Some(v) => dig_map(v)?,
        };
        cur = next;
    }
    Ok(default.clone())
}

/// `v.(map[string]interface{})` in `dig`.
fn dig_map(v: &V) -> Result<Arc<BTreeMap<String, V>>, String> {
    match v {
        V::Map(m) => Ok(m.entries()),
        other => Err(interface_conversion(other, "map[string]interface {}")),
    }
}

/// Go's `runtime.TypeAssertionError` for `x.(want)` of an `interface{}`.
fn interface_conversion(v: &V, want: &str) -> String {
    let have = match v {
        V::Missing | V::Nil => "nil",
        other => other.type_name(),
    };
    format!("interface conversion: interface {{}} is {have}, not {want}")
}

fn f_chunk(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    let size = usize::try_from(int(&a[0])?).unwrap_or(0).max(1);
    Ok(V::List(
        list_arg("chunk", &a[1])?
            .chunks(size)
            .map(|c| V::List(c.to_vec()))
            .collect(),
    ))
}

fn f_fail(_: &str, a: &[V], _: usize) -> R {
    arity(a, 1)?;
    Err(s(&a[0])?.to_string())
}

fn f_regex_match(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Bool(regex(s(&a[0])?, s(&a[1])?)?.is_match(s(&a[1])?)))
}

fn f_regex_find(_: &str, a: &[V], _: usize) -> R {
    arity(a, 2)?;
    Ok(V::Str(
        regex(s(&a[0])?, s(&a[1])?)?
            .find(s(&a[1])?)
            .map(|m| m.as_str().to_string())
            .unwrap_or_default(),
    ))
}

fn f_regex_find_all(_: &str, a: &[V], room: usize) -> R {
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
        cost = cost.saturating_add(m.len() + super::value::NODE_COST);
        fits(cost, room)?;
        out.push(V::Str(m.as_str().to_string()));
    }
    Ok(V::List(out))
}

fn f_regex_replace_all(_: &str, a: &[V], room: usize) -> R {
    arity(a, 3)?;
    let re = regex(s(&a[0])?, s(&a[1])?)?;
    regex_replace(&re, s(&a[1])?, s(&a[2])?, true, room)
}

fn f_regex_replace_all_literal(_: &str, a: &[V], room: usize) -> R {
    arity(a, 3)?;
    let re = regex(s(&a[0])?, s(&a[1])?)?;
    regex_replace(&re, s(&a[1])?, s(&a[2])?, false, room)
}

fn f_regex_split(_: &str, a: &[V], room: usize) -> R {
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
        cost = cost.saturating_add(p.len() + super::value::NODE_COST);
        fits(cost, room)?;
        out.push(V::Str(p.to_string()));
    }
    Ok(V::List(out))
}

fn f_regex_quote_meta(_: &str, a: &[V], _: usize) -> R {
    one_str(a, regex::escape)
}

fn f_normalize(_: &str, a: &[V], _: usize) -> R {
    one_str(a, sanitize_name)
}

fn f_slugify(_: &str, a: &[V], _: usize) -> R {
    slugify(a)
}

fn f_to_yaml(_: &str, a: &[V], room: usize) -> R {
    arity(a, 1)?;
    let v = a[0].json_view();
    fits(yaml_out::printed_bound(&v), room)?;
    Ok(V::Str(yaml_out::helm_to_yaml(&v)))
}

/// Argo CD's `fromYaml`/`fromYamlArray` (`applicationset/utils/utils.go`,
/// copied from Helm's): sigs.k8s.io/yaml as Helm's, a decoding error an
/// execution error.
fn f_from_yaml(name: &str, a: &[V], _: usize) -> R {
    f_sigs_from_yaml(name, a)
}

/// Helm's and Argo CD's `fromYaml`/`fromYamlArray` decode with
/// sigs.k8s.io/yaml (`pkg/engine/funcs.go` `fromYAML`): go-yaml v2's YAML
/// 1.1, so a date stays the text it was (`2020-09-07`, not a timestamp) and
/// `on` is true.
fn f_sigs_from_yaml(name: &str, a: &[V]) -> R {
    arity(a, 1)?;
    let text = s(&a[0])?;
    let v = crate::yaml::load_first_sigs(text, &crate::yaml::Limits::default())
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

fn floor_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn range_list(start: i64, stop: i64, step: i64, room: usize) -> R {
    let mut out = Vec::new();
    if step == 0 {
        return Ok(V::List(out));
    }
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        out.push(V::Int(i));
        if out.len() > 1_000_000 {
            return Err(format!(
                "a range of more than 1000000 numbers {BEYOND_LIMITS}"
            ));
        }
        fits(out.len().saturating_mul(super::value::NODE_COST), room)?;
        i = match i.checked_add(step) {
            Some(n) => n,
            None => break,
        };
    }
    Ok(V::List(out))
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
        .saturating_mul(super::value::NODE_COST + 8)
        .saturating_add(text.len())
}

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
    // empty): each match is charged the replacement's length, so matches
    // times replacement cannot run past the value budget either.
    let mut work = 0usize;
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
        work = work.saturating_add(repl.len()).saturating_add(start - last);
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

/// `json.Marshal` (sorted keys; `escape_html` as Go's default encoder does).
fn go_json(v: &V, escape_html: bool, pretty: bool) -> String {
    let j = v.to_json();
    let text = if pretty {
        serde_json::to_string_pretty(&j)
    } else {
        serde_json::to_string(&j)
    }
    .unwrap_or_default();
    if !escape_html {
        return text;
    }
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
fn f_camelcase(name: &str, a: &[V], _: usize) -> R {
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
fn f_snakecase(name: &str, a: &[V], _: usize) -> R {
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
fn f_wrap(name: &str, a: &[V], room: usize) -> R {
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
