//! `values.schema.json` as helm v3.19.4 and v4 check it: with
//! santhosh-tekuri/jsonschema/v6 v6.0.2 (`pkg/chartutil/jsonschema.go`
//! `ValidateAgainstSingleSchema` at v3.19.4, `pkg/chart/common/util/
//! jsonschema.go` at v4.2.1), which compiles the schema, checking it
//! against its draft's metaschema first (`roots.go` `addRoot`,
//! `ensureSubschema`), and then validates the values (`validator.go`).
//!
//! The draft is the root's `$schema`, else 2020-12 (`roots.go`
//! `newRoots`: `draftLatest`). `format` is asserted only before 2019-09
//! (`objcompiler.go` `assertFormat`; helm calls no `AssertFormat`), content
//! keywords never. A `$ref` replaces its siblings before 2019-09 (all but
//! `const`, which `compileDraft6` still reads and `validate` checks before
//! the `$ref`), and is evaluated beside them from 2019-09 on.
//!
//! What helm would load (a `$ref` to a file or URL, a `$schema` that is
//! not a known draft) is refused, never fetched or read; a `urn:` `$ref`
//! is the `true` schema helm's `urnLoader` gives an unresolved URN. What
//! is not implemented here (`unevaluated*`, anchors, dynamic and recursive
//! references, embedded `$id`s, a `format` of a string before 2019-09
//! whose checker rests on a Go parser) is "not supported natively" where
//! the schema uses it.
//!
//! When the values fail, helm prints v6's `ValidationError.Error()` tree
//! less its first line; it is reproduced where every part of it is worded
//! here and in a determined order (Go ranges over a map, the values'
//! properties among them, in random order, so two errors from one such
//! loop have no order), else only the failure is known.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap, HashSet};

use serde_json::{Map as JsonMap, Value};

use super::schema::Verdict;
use super::schema6_num::{print_int, Dec};
use crate::manifest::pointer_token;
use gotemplate::V;

/// The JSON Schema drafts v6 knows (`draft.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Draft {
    D4,
    D6,
    D7,
    D2019,
    D2020,
}

/// `draft.go` `draftFromURL`: the scheme (`http` or `https`) and an empty
/// fragment do not count.
fn draft_from_url(url: &str) -> Option<Draft> {
    let (u, frag) = url.split_once('#').unwrap_or((url, ""));
    if !frag.is_empty() {
        return None;
    }
    let u = u
        .strip_prefix("http://")
        .or_else(|| u.strip_prefix("https://"))
        .unwrap_or(u);
    match u {
        "json-schema.org/schema" | "json-schema.org/draft/2020-12/schema" => Some(Draft::D2020),
        "json-schema.org/draft/2019-09/schema" => Some(Draft::D2019),
        "json-schema.org/draft-07/schema" => Some(Draft::D7),
        "json-schema.org/draft-06/schema" => Some(Draft::D6),
        "json-schema.org/draft-04/schema" => Some(Draft::D4),
        _ => None,
    }
}

/// A value as v6 sees it (`typeOf`): numbers of any Go type are numbers.
#[derive(Debug)]
enum Inst {
    Null,
    Bool(bool),
    Num(Dec),
    Str(String),
    Arr(Vec<Inst>),
    Obj(BTreeMap<String, Inst>),
}

impl Inst {
    fn from_v(v: &V, depth: usize) -> Result<Inst, String> {
        if depth > MAX_DEPTH {
            return Err("values nested too deep".into());
        }
        Ok(match v {
            V::Missing | V::Nil => Inst::Null,
            V::Bool(b) => Inst::Bool(*b),
            V::Int(i) | V::Int64(i) => Inst::Num(Dec::from_i64(*i)),
            V::Float(f) => Inst::Num(
                Dec::from_f64(*f)
                    .ok_or_else(|| format!("the value {f}, which v6 cannot compare"))?,
            ),
            V::Str(s) => Inst::Str(s.clone()),
            V::List(l) => Inst::Arr(
                l.iter()
                    .map(|x| Inst::from_v(x, depth + 1))
                    .collect::<Result<_, _>>()?,
            ),
            V::Map(m) => Inst::Obj(
                m.entries()
                    .iter()
                    .map(|(k, x)| Ok((k.clone(), Inst::from_v(x, depth + 1)?)))
                    .collect::<Result<_, String>>()?,
            ),
            V::Host(_) => Inst::from_v(&v.json_view(), depth + 1)?,
        })
    }

    /// `jsonType.String`.
    fn type_name(&self) -> &'static str {
        match self {
            Inst::Null => "null",
            Inst::Bool(_) => "boolean",
            Inst::Num(_) => "number",
            Inst::Str(_) => "string",
            Inst::Arr(_) => "array",
            Inst::Obj(_) => "object",
        }
    }
}

/// A schema's literal as an instance (for `const`, `enum`).
fn json_inst(v: &Value) -> Option<Inst> {
    Some(match v {
        Value::Null => Inst::Null,
        Value::Bool(b) => Inst::Bool(*b),
        Value::Number(n) => Inst::Num(Dec::from_json(n)?),
        Value::String(s) => Inst::Str(s.clone()),
        Value::Array(a) => Inst::Arr(a.iter().map(json_inst).collect::<Option<_>>()?),
        Value::Object(o) => Inst::Obj(
            o.iter()
                .map(|(k, x)| Some((k.clone(), json_inst(x)?)))
                .collect::<Option<_>>()?,
        ),
    })
}

/// `util.go` `equals`: numbers by value.
fn equals(a: &Inst, b: &Inst) -> bool {
    match (a, b) {
        (Inst::Null, Inst::Null) => true,
        (Inst::Bool(x), Inst::Bool(y)) => x == y,
        (Inst::Num(x), Inst::Num(y)) => x == y,
        (Inst::Str(x), Inst::Str(y)) => x == y,
        (Inst::Arr(x), Inst::Arr(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equals(p, q))
        }
        (Inst::Obj(x), Inst::Obj(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| equals(p, q)))
        }
        _ => false,
    }
}

/// Most nested evaluations one check takes: a `$ref` cycle at one value
/// (an error of v6's, `kind.RefCycle`, not worded here) ends here.
const MAX_DEPTH: usize = 200;

/// The wording of one error node (`kind.go` `LocalizedString`).
#[derive(Debug)]
enum Text {
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
struct Error {
    at: Vec<String>,
    text: Text,
    causes: Vec<Error>,
    /// Whether the causes come in Go's map order.
    shuffled: bool,
}

fn says(at: &[String], text: Option<String>) -> Error {
    Error {
        at: at.to_vec(),
        text: text.map_or(Text::Unworded, Text::Says),
        causes: Vec::new(),
        shuffled: false,
    }
}

/// The errors of one schema, each with the map loop it came from, if any.
#[derive(Default)]
struct Errors(Vec<(Error, Option<&'static str>)>);

impl Errors {
    fn push(&mut self, e: Error) {
        self.0.push((e, None));
    }
    fn push_looped(&mut self, e: Error, from: &'static str) {
        self.0.push((e, Some(from)));
    }
    fn extend(&mut self, e: Option<Error>) {
        if let Some(e) = e {
            self.push(e);
        }
    }
    /// `validator.validate`'s end: one error is itself, several a group.
    fn finish(self, at: &[String]) -> Option<Error> {
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
fn missing_of<'v>(names: &'v Value, obj: &BTreeMap<String, Inst>) -> Vec<&'v str> {
    names
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|n| !obj.contains_key(*n))
        .collect()
}

/// A node whose causes are `errors` (`addErrors`).
fn with_causes(at: &[String], text: Option<String>, causes: Vec<Error>) -> Error {
    Error {
        causes,
        ..says(at, text)
    }
}

/// The causes of `e` as `Schema.validate` and `validateRef` lift them:
/// a group's, else `e` alone.
fn lifted(e: Error) -> Vec<Error> {
    if matches!(e.text, Text::Group) {
        e.causes
    } else {
        vec![e]
    }
}

type R<T> = Result<T, String>;

/// What a `$ref` resolves to.
enum Target<'a> {
    Schema(&'a Value, String),
    /// An unresolved `urn:` (helm's `urnLoader`).
    True,
}

struct Checker<'a> {
    root: &'a Value,
    draft: Draft,
    regexes: RefCell<HashMap<String, Option<regex::Regex>>>,
    /// Schema evaluations so far, against [`MAX_STEPS`].
    steps: std::cell::Cell<usize>,
}

/// Most schema evaluations one check takes (nested `anyOf`s can take
/// exponentially many).
const MAX_STEPS: usize = 2_000_000;

/// Checks `values` (helm's coalesced values) against `schema`, the
/// parsed `values.schema.json`.
pub(super) fn validate(schema: &Value, values: &V) -> Verdict {
    match check(schema, values) {
        Ok(None) => Verdict::Valid,
        Ok(Some(e)) => Verdict::Invalid(render(&e)),
        Err(what) => Verdict::Unsupported(what),
    }
}

fn check(schema: &Value, values: &V) -> R<Option<Error>> {
    let draft = match schema.get("$schema") {
        Some(Value::String(url)) => draft_from_url(url)
            .ok_or_else(|| format!("`$schema: {url}`, a metaschema helm would load"))?,
        _ => Draft::D2020,
    };
    let c = Checker {
        root: schema,
        draft,
        regexes: RefCell::new(HashMap::new()),
        steps: std::cell::Cell::new(0),
    };
    c.meta()?;
    let v = Inst::from_v(values, 0)?;
    c.validate(schema, &v, &mut Vec::new(), 0)
}

/// The message helm prints: the tree of `ValidationError.display` below
/// the first line (which helm trims); `Err` when a part of it is not
/// reproduced.
fn render(e: &Error) -> Result<String, String> {
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
fn quote(s: &str) -> Option<String> {
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
fn display_literal(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => quote(s),
        Value::Number(n) if n.is_u64() || n.is_i64() => Some(n.to_string()),
        Value::Number(_) => None,
        Value::Bool(b) => Some(b.to_string()),
        Value::Null => Some("<nil>".into()),
        Value::Array(_) | Value::Object(_) => Some("value".into()),
    }
}

fn num(v: Option<&Value>) -> Option<Dec> {
    match v {
        Some(Value::Number(n)) => Dec::from_json(n),
        _ => None,
    }
}

/// `objCompiler.intVal`: an integral number.
fn int(v: Option<&Value>) -> Option<usize> {
    num(v)?.as_count()
}

/// The formats v6 knows (`format.go` `formats`, and `regex`).
const V6_FORMATS: &[&str] = &[
    "regex",
    "json-pointer",
    "relative-json-pointer",
    "uuid",
    "duration",
    "period",
    "ipv4",
    "ipv6",
    "hostname",
    "email",
    "date",
    "time",
    "date-time",
    "uri",
    "iri",
    "uri-reference",
    "iri-reference",
    "uri-template",
    "semver",
];

/// Whether the string `s` is of the format `name` as v6's checker
/// (`format.go`) says; `None` where that rests on a Go parser and is not
/// plainly so.
fn format_holds(name: &str, s: &str) -> Option<bool> {
    let all = |t: &str, f: fn(char) -> bool| t.chars().all(f);
    match name {
        // `validateUUID`: five groups of 8-4-4-4-12 hex digits.
        "uuid" => {
            let groups: Vec<&str> = s.split('-').collect();
            Some(
                groups.len() == 5
                    && groups
                        .iter()
                        .zip([8, 4, 4, 4, 12])
                        .all(|(g, n)| g.len() == n && all(g, |c| c.is_ascii_hexdigit())),
            )
        }
        // `validateIPV4`: four `strconv.Atoi` decimals of 0 to 255, none
        // with a leading zero.
        "ipv4" => {
            let groups: Vec<&str> = s.split('.').collect();
            Some(
                groups.len() == 4
                    && groups.iter().all(|g| {
                        !(g.len() > 1 && g.starts_with('0'))
                            && go_atoi(g).is_some_and(|n| (0..=255).contains(&n))
                    }),
            )
        }
        // `validateHostname`.
        "hostname" => {
            let h = s.strip_suffix('.').unwrap_or(s);
            Some(
                h.len() <= 253
                    && h.split('.').all(|l| {
                        (1..=63).contains(&l.len())
                            && !l.starts_with('-')
                            && !l.ends_with('-')
                            && all(l, |c| c.is_ascii_alphanumeric() || c == '-')
                    }),
            )
        }
        "email" => email(s),
        "json-pointer" => Some(json_pointer(s)),
        // `validateRelativeJSONPointer`.
        "relative-json-pointer" => {
            let digits = s.bytes().take_while(u8::is_ascii_digit).count();
            let rest = &s[digits..];
            Some(
                digits > 0
                    && !(digits > 1 && s.starts_with('0'))
                    && (rest == "#" || json_pointer(rest)),
            )
        }
        // `validateURI`: `url.Parse`, and absolute; `validateURIReference`:
        // no backslash, and `url.Parse`.
        "uri" | "iri" => super::schema_format::uri(s, true).then_some(true),
        "uri-reference" | "iri-reference" if s.contains('\\') => Some(false),
        "uri-reference" | "iri-reference" => super::schema_format::uri(s, false).then_some(true),
        _ => None,
    }
}

/// `validateEmail`: at most 254 bytes, split at the last `@`; a local
/// part of at most 64 bytes, either quoted (it only tests the opening
/// quote, and refuses a backslash or quote between the first and last
/// byte) or of the allowed characters without a leading, trailing or
/// doubled dot; a domain that is a bracketed IPv4 address or a host name.
/// `None` for a bracketed IPv6 address (`netip.ParseAddr`).
fn email(s: &str) -> Option<bool> {
    if s.len() > 254 {
        return Some(false);
    }
    let Some(at) = s.rfind('@') else {
        return Some(false);
    };
    let (local, domain) = (&s[..at], &s[at + 1..]);
    if local.len() > 64 {
        return Some(false);
    }
    if local.len() > 1 && local.starts_with('"') {
        let inner = &local.as_bytes()[1..local.len() - 1];
        if inner.contains(&b'\\') || inner.contains(&b'"') {
            return Some(false);
        }
    } else if local.starts_with('.')
        || local.ends_with('.')
        || local.contains("..")
        || !local
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".!#$%&'*+-/=?^_`{|}~".contains(c))
    {
        return Some(false);
    }
    match domain.strip_prefix('[').and_then(|d| d.strip_suffix(']')) {
        Some(ip) if ip.starts_with("IPv6:") => None,
        Some(ip) => format_holds("ipv4", ip),
        None => format_holds("hostname", domain),
    }
}

/// `validateJSONPointer`: empty, or `/` tokens whose `~` escapes are
/// `~0` or `~1`. (Its character ranges leave out only `/`, which splits.)
fn json_pointer(s: &str) -> bool {
    if s.is_empty() {
        return true;
    }
    let Some(rest) = s.strip_prefix('/') else {
        return false;
    };
    rest.split('/').all(|tok| {
        let mut chars = tok.chars();
        while let Some(c) = chars.next() {
            if c == '~' && !matches!(chars.next(), Some('0' | '1')) {
                return false;
            }
        }
        true
    })
}

/// `strconv.Atoi`: an optional sign and decimal digits.
fn go_atoi(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.strip_prefix('+').unwrap_or(s).parse().ok()
}

const SIMPLE_TYPES: &[&str] = &[
    "array", "boolean", "integer", "null", "number", "object", "string",
];

impl<'a> Checker<'a> {
    /// The pattern as Go's regexp reads it; `Err` when Rust's regex does
    /// not read it (Go's may, or may refuse it).
    fn regex(&self, p: &str) -> R<regex::Regex> {
        if !same_in_go(p) {
            return Err(format!(
                "the pattern {p:?}, which Go's regexp reads otherwise"
            ));
        }
        let mut cache = self.regexes.borrow_mut();
        let re = cache
            .entry(p.to_string())
            .or_insert_with(|| regex::Regex::new(p).ok());
        re.clone().ok_or_else(|| format!("the pattern {p:?}"))
    }

    /// Whether `p` matches `s` as Go's RE2 matches it: Perl classes and
    /// word boundaries are ASCII in Go and Unicode in Rust, so they are
    /// not judged on non-ASCII text.
    fn is_match(&self, p: &str, s: &str) -> R<bool> {
        let re = self.regex(p)?;
        if !s.is_ascii()
            && ["\\d", "\\D", "\\w", "\\W", "\\s", "\\S", "\\b", "\\B"]
                .iter()
                .any(|c| p.contains(c))
        {
            return Err(format!("the pattern {p:?} on non-ASCII text"));
        }
        Ok(re.is_match(s))
    }

    /// A local `$ref` (`objCompiler.enqueueRef`, `urlPtr.lookup`).
    fn resolve(&self, r: &str) -> R<Target<'a>> {
        let refused = || format!("`$ref: {r}`, which helm would load from outside the chart");
        let (url, frag) = r.split_once('#').unwrap_or((r, ""));
        if url.starts_with("urn:") {
            // An unresolved URN is the schema `true`, which has no fragment
            // but the empty one.
            return if frag.is_empty() {
                Ok(Target::True)
            } else {
                Err(format!("`$ref: {r}` into an unresolved URN"))
            };
        }
        if !url.is_empty() {
            return Err(refused());
        }
        let frag = path_unescape(frag).ok_or_else(|| format!("`$ref: {r}`"))?;
        if !frag.is_empty() && !frag.starts_with('/') {
            return Err(format!("`$ref: {r}` to an anchor"));
        }
        let mut at = self.root;
        for tok in frag.split('/').skip(1) {
            let tok = unescape_token(tok).ok_or_else(|| format!("`$ref: {r}`"))?;
            at = match at {
                Value::Object(o) => o.get(&tok),
                Value::Array(a) => tok.parse::<usize>().ok().and_then(|i| a.get(i)),
                _ => None,
            }
            .ok_or_else(|| format!("`$ref: {r}`, which points at nothing"))?;
        }
        Ok(Target::Schema(at, frag))
    }

    // --- the metaschema check (compilation) ---

    /// Whether `v` is a schema of this draft (draft-04 has no boolean
    /// schemas).
    fn is_schema(&self, v: &Value) -> bool {
        v.is_object() || (v.is_boolean() && self.draft >= Draft::D6)
    }

    /// The schema against its draft's metaschema, as v6 checks it before
    /// compiling, and what is not implemented here. Every schema the
    /// metaschema reaches is checked, and every `$ref`'s target.
    fn meta(&self) -> R<()> {
        let mut todo: Vec<(String, &Value)> = vec![(String::new(), self.root)];
        let mut seen = HashSet::new();
        while let Some((ptr, s)) = todo.pop() {
            if !seen.insert(ptr.clone()) {
                continue;
            }
            if seen.len() > 100_000 {
                return Err("a schema too large".into());
            }
            if !self.is_schema(s) {
                return Err(invalid(&ptr, "is not a schema"));
            }
            if let Value::Object(o) = s {
                self.meta_object(o, &ptr, &mut todo)?;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_lines)]
    fn meta_object(
        &self,
        o: &'a JsonMap<String, Value>,
        ptr: &str,
        todo: &mut Vec<(String, &'a Value)>,
    ) -> R<()> {
        let d = self.draft;
        let at = |k: &str| format!("{ptr}/{}", pointer_token(k));
        let bad = |k: &str, why: &str| Err(invalid(&at(k), why));
        for (k, v) in o {
            let schema = |todo: &mut Vec<(String, &'a Value)>| -> R<()> {
                if !self.is_schema(v) {
                    return bad(k, "is not a schema");
                }
                todo.push((at(k), v));
                Ok(())
            };
            let schema_array = |todo: &mut Vec<(String, &'a Value)>| -> R<()> {
                match v {
                    Value::Array(a) if !a.is_empty() => {
                        for (i, x) in a.iter().enumerate() {
                            if !self.is_schema(x) {
                                return bad(k, "holds what is not a schema");
                            }
                            todo.push((format!("{}/{i}", at(k)), x));
                        }
                        Ok(())
                    }
                    _ => bad(k, "is not a non-empty array of schemas"),
                }
            };
            let schema_map = |todo: &mut Vec<(String, &'a Value)>| -> R<()> {
                let Value::Object(m) = v else {
                    return bad(k, "is not an object");
                };
                for (name, x) in m {
                    if !self.is_schema(x) {
                        return bad(k, "holds what is not a schema");
                    }
                    let p = format!("{}/{}", at(k), pointer_token(name));
                    todo.push((p, x));
                }
                Ok(())
            };
            let non_negative = || -> R<()> {
                match num(Some(v)) {
                    Some(n) if n.is_integer() && n >= Dec::from_i64(0) => Ok(()),
                    _ => bad(k, "is not a non-negative integer"),
                }
            };
            let string = || -> R<()> {
                if v.is_string() {
                    Ok(())
                } else {
                    bad(k, "is not a string")
                }
            };
            let boolean = || -> R<()> {
                if v.is_boolean() {
                    Ok(())
                } else {
                    bad(k, "is not a boolean")
                }
            };
            let number = || -> R<()> {
                if v.is_number() {
                    Ok(())
                } else {
                    bad(k, "is not a number")
                }
            };
            match k.as_str() {
                "$schema" => {
                    string()?;
                    if !ptr.is_empty() && !super::schema_format::uri(v.as_str().unwrap_or(""), true)
                    {
                        return Err(format!("`{}` as a URI", at(k)));
                    }
                }
                "$id" if d >= Draft::D6 => {
                    string()?;
                    if !ptr.is_empty() {
                        return Err(format!("an embedded `$id` (`{}`)", at(k)));
                    }
                    let id = v.as_str().unwrap_or("");
                    if d >= Draft::D2019 && id.split_once('#').is_some_and(|(_, f)| !f.is_empty()) {
                        return bad(k, "has a fragment");
                    }
                    uri_reference(id, &at(k))?;
                }
                "id" if d == Draft::D4 => {
                    string()?;
                    if !ptr.is_empty() {
                        return Err(format!("an embedded `id` (`{}`)", at(k)));
                    }
                }
                "$ref" => {
                    string()?;
                    let r = v.as_str().unwrap_or("");
                    if d >= Draft::D6 {
                        uri_reference(r, &at(k))?;
                    }
                    if let Target::Schema(t, p) = self.resolve(r)? {
                        todo.push((p, t));
                    }
                }
                "title" | "description" | "format" => string()?,
                "$comment" | "contentMediaType" | "contentEncoding" if d >= Draft::D7 => {
                    string()?;
                }
                "examples" if d >= Draft::D7 && !v.is_array() => {
                    return bad(k, "is not an array");
                }
                "readOnly" | "writeOnly" if d >= Draft::D7 => boolean()?,
                "deprecated" if d >= Draft::D2019 => boolean()?,
                "multipleOf" => match num(Some(v)) {
                    Some(n) if n > Dec::from_i64(0) => {}
                    _ => return bad(k, "is not a number above 0"),
                },
                "maximum" | "minimum" => number()?,
                "exclusiveMaximum" | "exclusiveMinimum" if d >= Draft::D6 => number()?,
                "exclusiveMaximum" | "exclusiveMinimum" if d == Draft::D4 => {
                    boolean()?;
                    let bound = if k == "exclusiveMaximum" {
                        "maximum"
                    } else {
                        "minimum"
                    };
                    if !o.contains_key(bound) {
                        return bad(k, "has no bound beside it");
                    }
                }
                "maxLength" | "minLength" | "maxItems" | "minItems" | "maxProperties"
                | "minProperties" => non_negative()?,
                "maxContains" | "minContains" if d >= Draft::D2019 => non_negative()?,
                "pattern" => {
                    string()?;
                    self.regex(v.as_str().unwrap_or(""))?;
                }
                "uniqueItems" => boolean()?,
                "additionalItems" | "additionalProperties" if d == Draft::D4 && v.is_boolean() => {}
                "additionalItems" if d >= Draft::D2020 => {}
                "additionalItems" | "additionalProperties" | "not" => schema(todo)?,
                "contains" | "propertyNames" if d >= Draft::D6 => schema(todo)?,
                "if" | "then" | "else" if d >= Draft::D7 => schema(todo)?,
                "contentSchema" if d >= Draft::D2019 => schema(todo)?,
                "items" if d >= Draft::D2020 => schema(todo)?,
                "items" => {
                    if v.is_array() {
                        schema_array(todo)?;
                    } else {
                        schema(todo)?;
                    }
                }
                "prefixItems" if d >= Draft::D2020 => schema_array(todo)?,
                "allOf" | "anyOf" | "oneOf" => schema_array(todo)?,
                "definitions" | "properties" => schema_map(todo)?,
                "$defs" | "dependentSchemas" if d >= Draft::D2019 => schema_map(todo)?,
                "patternProperties" => {
                    schema_map(todo)?;
                    for name in v.as_object().into_iter().flat_map(JsonMap::keys) {
                        self.regex(name)?;
                    }
                }
                "required" => self.string_array(v, &at(k))?,
                "dependencies" | "dependentRequired" => {
                    if k == "dependentRequired" && d < Draft::D2019 {
                        continue;
                    }
                    let Value::Object(m) = v else {
                        return bad(k, "is not an object");
                    };
                    for (name, x) in m {
                        let p = format!("{}/{}", at(k), pointer_token(name));
                        if x.is_array() || k == "dependentRequired" {
                            self.string_array(x, &p)?;
                        } else if self.is_schema(x) {
                            todo.push((p, x));
                        } else {
                            return Err(invalid(&p, "is neither a schema nor an array of names"));
                        }
                    }
                }
                "enum" => match v {
                    Value::Array(a) if d >= Draft::D2019 || !a.is_empty() => {
                        if d < Draft::D2019 && has_duplicates(a) {
                            return bad(k, "holds a value twice");
                        }
                    }
                    _ => return bad(k, "is not a non-empty array"),
                },
                "type" => {
                    let simple = |t: &Value| t.as_str().is_some_and(|t| SIMPLE_TYPES.contains(&t));
                    let ok = match v {
                        Value::Array(a) => {
                            !a.is_empty() && a.iter().all(simple) && !has_duplicates(a)
                        }
                        t => simple(t),
                    };
                    if !ok {
                        return bad(k, "is not a type or a list of types");
                    }
                }
                "unevaluatedProperties"
                | "unevaluatedItems"
                | "$anchor"
                | "$dynamicRef"
                | "$dynamicAnchor"
                | "$recursiveRef"
                | "$recursiveAnchor"
                | "$vocabulary"
                    if d >= Draft::D2019 =>
                {
                    return Err(format!("`{k}` (`{}`)", at(k)));
                }
                _ => {}
            }
        }
        Ok(())
    }

    /// The metaschemas' `stringArray`: distinct strings (draft-04: at
    /// least one).
    fn string_array(&self, v: &Value, at: &str) -> R<()> {
        match v {
            Value::Array(a)
                if a.iter().all(Value::is_string)
                    && !has_duplicates(a)
                    && (self.draft > Draft::D4 || !a.is_empty()) =>
            {
                Ok(())
            }
            _ => Err(invalid(at, "is not a list of distinct names")),
        }
    }

    // --- validation (`validator.go`) ---

    #[allow(clippy::too_many_lines)]
    fn validate(
        &self,
        s: &Value,
        v: &Inst,
        at: &mut Vec<String>,
        depth: usize,
    ) -> R<Option<Error>> {
        if depth > MAX_DEPTH {
            return Err("a schema nested (or referring to itself) too deep".into());
        }
        self.steps.set(self.steps.get() + 1);
        if self.steps.get() > MAX_STEPS {
            return Err("a schema whose check takes too many steps".into());
        }
        let o = match s {
            Value::Bool(true) => return Ok(None),
            Value::Bool(false) => return Ok(Some(says(at, Some("false schema".into())))),
            Value::Object(o) => o,
            _ => return Err("a schema that is not an object".into()),
        };
        let d = self.draft;
        let has_ref = o.contains_key("$ref");
        let old_ref = has_ref && d < Draft::D2019;
        // type --
        if !old_ref {
            let types: Vec<&str> = match o.get("type") {
                Some(Value::String(t)) => vec![t.as_str()],
                Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
                _ => Vec::new(),
            };
            let types: Vec<&str> = SIMPLE_TYPES
                .iter()
                .copied()
                .filter(|t| types.contains(t))
                .collect();
            if !types.is_empty() {
                let t = v.type_name();
                let integer = matches!(v, Inst::Num(n) if n.is_integer());
                if !(types.contains(&t) || types.contains(&"integer") && integer) {
                    // `Types.ToStrings` order.
                    let order = [
                        "null", "boolean", "number", "integer", "string", "array", "object",
                    ];
                    let want: Vec<&str> = order.into_iter().filter(|x| types.contains(x)).collect();
                    return Ok(Some(says(
                        at,
                        Some(format!("got {t}, want {}", want.join(" or "))),
                    )));
                }
            }
        }
        // const --
        if d >= Draft::D6 {
            if let Some(c) = o.get("const") {
                let want = json_inst(c).ok_or("a `const` v6 reads otherwise")?;
                if !equals(v, &want) {
                    let text = match c {
                        Value::Array(_) | Value::Object(_) => Some("'const' failed".into()),
                        other => display_literal(other).map(|w| format!("value must be {w}")),
                    };
                    return Ok(Some(says(at, text)));
                }
            }
        }
        // enum --
        if let (false, Some(Value::Array(e))) = (old_ref, o.get("enum")) {
            let mut matched = false;
            for x in e {
                if equals(v, &json_inst(x).ok_or("an `enum` v6 reads otherwise")?) {
                    matched = true;
                    break;
                }
            }
            if !matched {
                let text = if e.iter().any(|x| x.is_array() || x.is_object()) {
                    Some("'enum' failed".to_string())
                } else {
                    e.iter()
                        .map(display_literal)
                        .collect::<Option<Vec<_>>>()
                        .map(|w| match w.as_slice() {
                            [one] => format!("value must be {one}"),
                            _ => format!("value must be one of {}", w.join(", ")),
                        })
                };
                return Ok(Some(says(at, text)));
            }
        }
        // format --
        if let (false, true, Some(Value::String(f)), Inst::Str(text)) =
            (old_ref, d < Draft::D2019, o.get("format"), v)
        {
            let known = if f == "regex" {
                // `regexp.Compile`: what Rust's regex reads, Go's reads too.
                self.regex(text)?;
                Some(true)
            } else if V6_FORMATS.contains(&f.as_str()) {
                format_holds(f, text)
            } else {
                Some(true)
            };
            match known {
                Some(true) => {}
                // `kind.Format`'s text holds the checker's own error.
                Some(false) => return Ok(Some(says(at, None))),
                None => {
                    return Err(format!(
                        "`format: {f}` of {text:?} as jsonschema/v6 checks it"
                    ))
                }
            }
        }
        let mut errors = Errors::default();
        // $ref --
        if let Some(Value::String(r)) = o.get("$ref") {
            let e = match self.resolve(r)? {
                Target::True => None,
                Target::Schema(target, _) => {
                    self.validate(target, v, at, depth + 1)?.map(|e| Error {
                        at: at.clone(),
                        text: Text::Reference,
                        causes: lifted(e),
                        shuffled: false,
                    })
                }
            };
            if old_ref {
                return Ok(e);
            }
            errors.extend(e);
        }
        match v {
            Inst::Obj(obj) => self.validate_object(o, v, obj, at, depth, &mut errors)?,
            Inst::Arr(arr) => self.validate_array(o, arr, at, depth, &mut errors)?,
            Inst::Str(text) => self.validate_string(o, text, at, &mut errors)?,
            Inst::Num(n) => validate_number(o, n, at, &mut errors),
            Inst::Null | Inst::Bool(_) => {}
        }
        self.validate_conditions(o, v, at, depth, &mut errors)?;
        Ok(errors.finish(at))
    }

    fn validate_child(
        &self,
        s: &Value,
        v: &Inst,
        at: &mut Vec<String>,
        token: String,
        depth: usize,
    ) -> R<Option<Error>> {
        at.push(token);
        let r = self.validate(s, v, at, depth + 1);
        at.pop();
        r
    }

    fn validate_object(
        &self,
        o: &JsonMap<String, Value>,
        v: &Inst,
        obj: &BTreeMap<String, Inst>,
        at: &mut Vec<String>,
        depth: usize,
        errors: &mut Errors,
    ) -> R<()> {
        let d = self.draft;
        let len = obj.len();
        if let Some(m) = int(o.get("minProperties")).filter(|m| len < *m) {
            errors.push(says(
                at,
                Some(format!(
                    "minProperties: got {}, want {}",
                    print_int(len),
                    print_int(m)
                )),
            ));
        }
        if let Some(m) = int(o.get("maxProperties")).filter(|m| len > *m) {
            errors.push(says(
                at,
                Some(format!(
                    "maxProperties: got {}, want {}",
                    print_int(len),
                    print_int(m)
                )),
            ));
        }
        let quoted = |names: &[&str]| -> Option<String> {
            names
                .iter()
                .map(|n| quote(n))
                .collect::<Option<Vec<_>>>()
                .map(|q| q.join(", "))
        };
        if let Some(req) = o.get("required") {
            let missing = missing_of(req, obj);
            if !missing.is_empty() {
                let text = match missing.as_slice() {
                    [one] => quote(one).map(|q| format!("missing property {q}")),
                    _ => quoted(&missing).map(|q| format!("missing properties {q}")),
                };
                errors.push(says(at, text));
            }
        }
        // dependencies -- (a map, ranged in random order)
        if let Some(Value::Object(deps)) = o.get("dependencies") {
            for (name, dep) in deps {
                if !obj.contains_key(name) {
                    continue;
                }
                if dep.is_array() {
                    let missing = missing_of(dep, obj);
                    if !missing.is_empty() {
                        let text = quoted(&missing).and_then(|m| {
                            quote(name).map(|n| format!("properties {m} required, if {n} exists"))
                        });
                        errors.push_looped(says(at, text), "dependencies");
                    }
                } else if let Some(e) = self.validate(dep, v, at, depth + 1)? {
                    errors.push_looped(e, "dependencies");
                }
            }
        }
        // properties, patternProperties, additionalProperties -- (the
        // values' map, ranged in random order)
        let props = o.get("properties").and_then(Value::as_object);
        let patterns = o.get("patternProperties").and_then(Value::as_object);
        let mut additional = Vec::new();
        for (name, x) in obj {
            let mut evaluated = false;
            if let Some(p) = props.and_then(|p| p.get(name)) {
                evaluated = true;
                let e = self.validate_child(p, x, at, name.clone(), depth)?;
                if let Some(e) = e {
                    errors.push_looped(e, "properties");
                }
            }
            for (pattern, p) in patterns.into_iter().flatten() {
                if self.is_match(pattern, name)? {
                    evaluated = true;
                    if let Some(e) = self.validate_child(p, x, at, name.clone(), depth)? {
                        errors.push_looped(e, "properties");
                    }
                }
            }
            match o.get("additionalProperties") {
                Some(Value::Bool(false)) if !evaluated => additional.push(name.as_str()),
                Some(a @ (Value::Object(_) | Value::Bool(true))) if !evaluated => {
                    if let Some(e) = self.validate_child(a, x, at, name.clone(), depth)? {
                        errors.push_looped(e, "properties");
                    }
                }
                _ => {}
            }
        }
        if !additional.is_empty() {
            // The names come in the values' map order.
            let text = match additional.as_slice() {
                [one] => quote(one).map(|q| format!("additional properties {q} not allowed")),
                _ => None,
            };
            errors.push(says(at, text));
        }
        if d == Draft::D4 {
            return Ok(());
        }
        if let Some(names) = o.get("propertyNames") {
            for name in obj.keys() {
                let mut inner_at = Vec::new();
                if let Some(e) =
                    self.validate(names, &Inst::Str(name.clone()), &mut inner_at, depth + 1)?
                {
                    let text = quote(name).map(|q| format!("invalid propertyName {q}"));
                    errors.push_looped(with_causes(at, text, lifted(e)), "propertyNames");
                }
            }
        }
        if d < Draft::D2019 {
            return Ok(());
        }
        if let Some(Value::Object(deps)) = o.get("dependentSchemas") {
            for (name, dep) in deps {
                if obj.contains_key(name) {
                    if let Some(e) = self.validate(dep, v, at, depth + 1)? {
                        errors.push_looped(e, "dependentSchemas");
                    }
                }
            }
        }
        if let Some(Value::Object(deps)) = o.get("dependentRequired") {
            for (name, req) in deps {
                if !obj.contains_key(name) {
                    continue;
                }
                let missing = missing_of(req, obj);
                if !missing.is_empty() {
                    let text = quoted(&missing).and_then(|m| {
                        quote(name).map(|n| format!("properties {m} required, if {n} exists"))
                    });
                    errors.push_looped(says(at, text), "dependentRequired");
                }
            }
        }
        Ok(())
    }

    fn validate_array(
        &self,
        o: &JsonMap<String, Value>,
        arr: &[Inst],
        at: &mut Vec<String>,
        depth: usize,
        errors: &mut Errors,
    ) -> R<()> {
        let d = self.draft;
        let len = arr.len();
        if let Some(m) = int(o.get("minItems")).filter(|m| len < *m) {
            errors.push(says(
                at,
                Some(format!(
                    "minItems: got {}, want {}",
                    print_int(len),
                    print_int(m)
                )),
            ));
        }
        if let Some(m) = int(o.get("maxItems")).filter(|m| len > *m) {
            errors.push(says(
                at,
                Some(format!(
                    "maxItems: got {}, want {}",
                    print_int(len),
                    print_int(m)
                )),
            ));
        }
        if o.get("uniqueItems") == Some(&Value::Bool(true)) {
            // `duplicates`: the first later item equal to an earlier one.
            'outer: for i in 1..len {
                for j in 0..i {
                    // Each comparison is a step: a long list must not make
                    // the quadratic search unbounded.
                    self.steps.set(self.steps.get() + 1);
                    if self.steps.get() > MAX_STEPS {
                        return Err("a schema whose check takes too many steps".into());
                    }
                    if equals(&arr[i], &arr[j]) {
                        errors.push(says(
                            at,
                            Some(format!(
                                "items at {} and {} are equal",
                                print_int(j),
                                print_int(i)
                            )),
                        ));
                        break 'outer;
                    }
                }
            }
        }
        if d < Draft::D2020 {
            match o.get("items") {
                Some(Value::Array(tuple)) => {
                    for (i, (x, s)) in arr.iter().zip(tuple).enumerate() {
                        errors.extend(self.validate_child(s, x, at, i.to_string(), depth)?);
                    }
                    let evaluated = tuple.len().min(len);
                    match o.get("additionalItems") {
                        Some(Value::Bool(false)) if evaluated != len => errors.push(says(
                            at,
                            Some(format!(
                                "last {} additionalItem(s) not allowed",
                                print_int(len - evaluated)
                            )),
                        )),
                        Some(extra @ Value::Object(_)) => {
                            for (i, x) in arr.iter().enumerate().skip(evaluated) {
                                errors.extend(self.validate_child(
                                    extra,
                                    x,
                                    at,
                                    i.to_string(),
                                    depth,
                                )?);
                            }
                        }
                        _ => {}
                    }
                }
                Some(each) => {
                    for (i, x) in arr.iter().enumerate() {
                        errors.extend(self.validate_child(each, x, at, i.to_string(), depth)?);
                    }
                }
                None => {}
            }
        } else {
            let prefix = o.get("prefixItems").and_then(Value::as_array);
            let evaluated = prefix.map_or(0, |p| p.len().min(len));
            for (i, (x, s)) in arr.iter().zip(prefix.into_iter().flatten()).enumerate() {
                errors.extend(self.validate_child(s, x, at, i.to_string(), depth)?);
            }
            if let Some(each) = o.get("items") {
                // v6.0.2 locates these items by their index after the
                // prefix (`arrValidate`: `strconv.Itoa(i)` over
                // `arr[evaluated:]`; helm v4.1.4 prints `/l/0` for the
                // second item of `l` after one `prefixItems`).
                for (i, x) in arr.iter().skip(evaluated).enumerate() {
                    errors.extend(self.validate_child(each, x, at, i.to_string(), depth)?);
                }
            }
        }
        if let (true, Some(c)) = (d >= Draft::D6, o.get("contains")) {
            let mut failed = Vec::new();
            let mut matched = Vec::new();
            for (i, x) in arr.iter().enumerate() {
                match self.validate_child(c, x, at, i.to_string(), depth)? {
                    Some(e) => failed.push(e),
                    None => matched.push(i),
                }
            }
            let (min, max) = if d >= Draft::D2019 {
                (int(o.get("minContains")), int(o.get("maxContains")))
            } else {
                (None, None)
            };
            let list = |m: &[usize]| {
                m.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(" ")
            };
            if let Some(min) = min {
                if matched.len() < min {
                    let text = if matched.is_empty() {
                        format!(
                            "min {} items required to match contains schema, but none matched",
                            print_int(min)
                        )
                    } else {
                        format!(
                            "min {} items required to match contains schema, but matched {} items at {}",
                            print_int(min),
                            print_int(matched.len()),
                            list(&matched)
                        )
                    };
                    errors.push(with_causes(at, Some(text), failed));
                }
            } else if matched.is_empty() {
                errors.push(with_causes(
                    at,
                    Some("no items match contains schema".into()),
                    failed,
                ));
            }
            if let Some(max) = max.filter(|m| matched.len() > *m) {
                errors.push(says(
                    at,
                    Some(format!(
                        "max {} items required to match contains schema, but matched {} items at {}",
                        print_int(max),
                        print_int(matched.len()),
                        list(&matched)
                    )),
                ));
            }
        }
        Ok(())
    }

    fn validate_string(
        &self,
        o: &JsonMap<String, Value>,
        text: &str,
        at: &[String],
        errors: &mut Errors,
    ) -> R<()> {
        let len = text.chars().count();
        if let Some(m) = int(o.get("minLength")).filter(|m| len < *m) {
            errors.push(says(
                at,
                Some(format!(
                    "minLength: got {}, want {}",
                    print_int(len),
                    print_int(m)
                )),
            ));
        }
        if let Some(m) = int(o.get("maxLength")).filter(|m| len > *m) {
            errors.push(says(
                at,
                Some(format!(
                    "maxLength: got {}, want {}",
                    print_int(len),
                    print_int(m)
                )),
            ));
        }
        if let Some(Value::String(p)) = o.get("pattern") {
            if !self.is_match(p, text)? {
                let msg = quote(text)
                    .zip(quote(p))
                    .map(|(t, p)| format!("{t} does not match pattern {p}"));
                errors.push(says(at, msg));
            }
        }
        Ok(())
    }

    fn validate_conditions(
        &self,
        o: &JsonMap<String, Value>,
        v: &Inst,
        at: &mut Vec<String>,
        depth: usize,
        errors: &mut Errors,
    ) -> R<()> {
        let d = self.draft;
        if let Some(n) = o.get("not") {
            if self.validate(n, v, at, depth + 1)?.is_none() {
                errors.push(says(at, Some("'not' failed".into())));
            }
        }
        if let Some(Value::Array(all)) = o.get("allOf") {
            let mut failed = Vec::new();
            for s in all {
                failed.extend(self.validate(s, v, at, depth + 1)?);
            }
            if !failed.is_empty() {
                errors.push(with_causes(at, Some("'allOf' failed".into()), failed));
            }
        }
        if let Some(Value::Array(any)) = o.get("anyOf") {
            let mut failed = Vec::new();
            for s in any {
                failed.extend(self.validate(s, v, at, depth + 1)?);
            }
            if failed.len() == any.len() {
                errors.push(with_causes(at, Some("'anyOf' failed".into()), failed));
            }
        }
        if let Some(Value::Array(one)) = o.get("oneOf") {
            let mut failed = Vec::new();
            let mut matched = None;
            for (i, s) in one.iter().enumerate() {
                match self.validate(s, v, at, depth + 1)? {
                    Some(e) => failed.push(e),
                    None => match matched {
                        None => matched = Some(i),
                        Some(first) => {
                            errors.push(says(
                                at,
                                Some(format!(
                                    "'oneOf' failed, subschemas {}, {} matched",
                                    print_int(first),
                                    print_int(i)
                                )),
                            ));
                            break;
                        }
                    },
                }
            }
            if matched.is_none() {
                errors.push(with_causes(
                    at,
                    Some("'oneOf' failed, none matched".into()),
                    failed,
                ));
            }
        }
        if let (true, Some(cond)) = (d >= Draft::D7, o.get("if")) {
            let branch = if self.validate(cond, v, at, depth + 1)?.is_none() {
                o.get("then")
            } else {
                o.get("else")
            };
            if let Some(b) = branch {
                errors.extend(self.validate(b, v, at, depth + 1)?);
            }
        }
        Ok(())
    }
}

fn validate_number(o: &JsonMap<String, Value>, n: &Dec, at: &[String], errors: &mut Errors) {
    let bound = |k: &str| num(o.get(k));
    // Draft-04's boolean `exclusiveMaximum` makes `maximum` exclusive
    // (`compileDraft4`).
    let (mut max, mut max_ex) = (bound("maximum"), bound("exclusiveMaximum"));
    if o.get("exclusiveMaximum") == Some(&Value::Bool(true)) {
        max_ex = max.take();
    }
    let (mut min, mut min_ex) = (bound("minimum"), bound("exclusiveMinimum"));
    if o.get("exclusiveMinimum") == Some(&Value::Bool(true)) {
        min_ex = min.take();
    }
    let msg = |k: &str, want: &Dec| {
        says(
            at,
            Some(format!(
                "{k}: got {}, want {}",
                n.print_float(),
                want.print_float()
            )),
        )
    };
    if let Some(m) = min.filter(|m| n < m) {
        errors.push(msg("minimum", &m));
    }
    if let Some(m) = max.filter(|m| n > m) {
        errors.push(msg("maximum", &m));
    }
    if let Some(m) = min_ex.filter(|m| n <= m) {
        errors.push(msg("exclusiveMinimum", &m));
    }
    if let Some(m) = max_ex.filter(|m| n >= m) {
        errors.push(msg("exclusiveMaximum", &m));
    }
    if let Some(m) = bound("multipleOf") {
        match n.is_multiple_of(&m) {
            Some(true) => {}
            Some(false) => errors.push(msg("multipleOf", &m)),
            None => errors.push(says(at, None)),
        }
    }
}

fn invalid(at: &str, why: &str) -> String {
    format!("a schema jsonschema/v6 does not compile (`#{at}` {why})")
}

/// The metaschemas' `format: uri-reference` (`validateURIReference`),
/// judged only where `url.Parse` surely accepts it.
fn uri_reference(s: &str, at: &str) -> R<()> {
    if s.contains('\\') {
        return Err(invalid(at, "is not a URI reference"));
    }
    if super::schema_format::uri(s, false) {
        Ok(())
    } else {
        Err(format!("`#{at}` as a URI reference"))
    }
}

/// Whether two items of `a` are equal (`uniqueItems` of the metaschemas).
fn has_duplicates(a: &[Value]) -> bool {
    let items: Vec<Option<Inst>> = a.iter().map(json_inst).collect();
    (1..items.len()).any(|i| {
        (0..i).any(|j| match (&items[i], &items[j]) {
            (Some(x), Some(y)) => equals(x, y),
            _ => false,
        })
    })
}

/// Whether Rust's regex reads `p` as Go's RE2 does, as far as classes
/// go: inside one Rust reads `[` as a nested class and `&&`, `--`, `~~`
/// as set operations, where RE2 reads characters (a POSIX `[:name:]`
/// aside).
fn same_in_go(p: &str) -> bool {
    let b = p.as_bytes();
    let mut i = 0;
    let mut in_class = false;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'[' if !in_class => {
                in_class = true;
                // A `]` first in the class (after a `^`) is a character.
                if b.get(i + 1) == Some(&b'^') {
                    i += 1;
                }
                if b.get(i + 1) == Some(&b']') {
                    i += 1;
                }
            }
            b'[' if b.get(i + 1) == Some(&b':') => match p[i..].find(":]") {
                Some(end) => i += end + 1,
                None => return false,
            },
            b'[' => return false,
            b']' => in_class = false,
            c @ (b'&' | b'-' | b'~') if in_class && b.get(i + 1) == Some(&c) => return false,
            _ => {}
        }
        i += 1;
    }
    true
}

/// `url.PathUnescape`.
fn path_unescape(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// A JSON pointer token, `~0` and `~1` unescaped (`util.go` `unescape`).
fn unescape_token(tok: &str) -> Option<String> {
    let mut out = String::with_capacity(tok.len());
    let mut chars = tok.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next()? {
                '0' => out.push('~'),
                '1' => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(schema: &Value, values: &Value) -> Verdict {
        validate(schema, &V::from_json(values))
    }

    /// The message helm prints for `values` (after the chart's name).
    fn message(schema: &Value, values: &Value) -> String {
        match run(schema, values) {
            Verdict::Invalid(Ok(m)) => m,
            other => panic!("{schema} {values}: {other:?}"),
        }
    }

    fn props(p: Value) -> Value {
        json!({ "properties": p })
    }

    /// `uniqueItems` compares every pair: a long list is bounded by the
    /// step budget (refused), never an unbounded check; a short one is
    /// judged.
    #[test]
    fn unique_items_of_a_long_list_is_bounded() {
        let schema = props(json!({"l": {"uniqueItems": true}}));
        let long: Vec<Value> = (0..3000).map(Value::from).collect();
        match run(&schema, &json!({ "l": long })) {
            Verdict::Unsupported(why) => assert!(why.contains("too many steps"), "{why}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(run(&schema, &json!({"l": [1, 2, 3]})), Verdict::Valid);
    }

    #[test]
    fn messages_are_v6s() {
        // Each expected text is what helm v4.1.4 (jsonschema/v6 v6.0.2)
        // printed for the same schema and values, below `c:`.
        let d7 = "http://json-schema.org/draft-07/schema#";
        for (schema, values, want) in [
            (props(json!({"replicas": {"type": "integer"}})), json!({"replicas": "2"}),
             "- at '/replicas': got string, want integer"),
            (props(json!({"p": {"type": ["string", "null", "integer"]}})), json!({"p": [1]}),
             "- at '/p': got array, want null or integer or string"),
            (props(json!({"policy": {"type": "string"}})), json!({"policy": null}),
             "- at '/policy': got null, want string"),
            (json!({"required": ["image"]}), json!({"a": 1}), "- at '': missing property 'image'"),
            (json!({"required": ["image", "b"]}), json!({"a": 1}),
             "- at '': missing properties 'image', 'b'"),
            (props(json!({"image": {"type": "object", "required": ["tag"]}})),
             json!({"image": {"repo": "x"}}), "- at '/image': missing property 'tag'"),
            (props(json!({"mode": {"enum": ["simple", "advanced"]}})), json!({"mode": "x"}),
             "- at '/mode': value must be one of 'simple', 'advanced'"),
            (props(json!({"mode": {"enum": ["simple"]}})), json!({"mode": "x"}),
             "- at '/mode': value must be 'simple'"),
            (props(json!({"mode": {"enum": [1, 2, "a", null, true]}})), json!({"mode": "x"}),
             "- at '/mode': value must be one of 1, 2, 'a', <nil>, true"),
            (props(json!({"mode": {"enum": [{"a": 1}]}})), json!({"mode": "x"}),
             "- at '/mode': 'enum' failed"),
            (props(json!({"mode": {"const": "on"}})), json!({"mode": "x"}),
             "- at '/mode': value must be 'on'"),
            (props(json!({"mode": {"const": 3}})), json!({"mode": 4}), "- at '/mode': value must be 3"),
            (props(json!({"mode": {"const": {"a": 1}}})), json!({"mode": 4}),
             "- at '/mode': 'const' failed"),
            (json!({"additionalProperties": false, "properties": {"a": {}}}), json!({"a": 1, "x": 1}),
             "- at '': additional properties 'x' not allowed"),
            (json!({"additionalProperties": {"type": "string"}}), json!({"x": 1}),
             "- at '/x': got number, want string"),
            (props(json!({"a": {"properties": {"level": {"pattern": "^(debug|info)$"}}}})),
             json!({"a": {"level": "x"}}),
             "- at '/a/level': 'x' does not match pattern '^(debug|info)$'"),
            (props(json!({"a": {"pattern": "^a'b\"c\\\\d$"}})), json!({"a": "it's \"q\" \\ \t"}),
             "- at '/a': 'it\\'s \"q\" \\\\ \\t' does not match pattern '^a\\'b\"c\\\\\\\\d$'"),
            (props(json!({"a": {"pattern": "^a"}})), json!({"a": "é"}),
             "- at '/a': 'é' does not match pattern '^a'"),
            (props(json!({"a": {"minLength": 3}})), json!({"a": "ab"}), "- at '/a': minLength: got 2, want 3"),
            (props(json!({"a": {"maxLength": 1}})), json!({"a": "ab"}), "- at '/a': maxLength: got 2, want 1"),
            (props(json!({"num": {"minimum": 3}})), json!({"num": 1}), "- at '/num': minimum: got 1, want 3"),
            (props(json!({"num": {"maximum": 10}})), json!({"num": 12_345_678}),
             "- at '/num': maximum: got 1.2345678×10⁰⁷, want 10"),
            (props(json!({"num": {"exclusiveMaximum": 3}})), json!({"num": 3}),
             "- at '/num': exclusiveMaximum: got 3, want 3"),
            (json!({"$schema": "http://json-schema.org/draft-04/schema#",
                    "properties": {"num": {"maximum": 3, "exclusiveMaximum": true}}}),
             json!({"num": 3}), "- at '/num': exclusiveMaximum: got 3, want 3"),
            (props(json!({"num": {"multipleOf": 0.01}})), json!({"num": 0.075}),
             "- at '/num': multipleOf: got 0.075, want 0.01"),
            (props(json!({"l": {"minItems": 2}})), json!({"l": [1]}), "- at '/l': minItems: got 1, want 2"),
            (props(json!({"l": {"maxItems": 0}})), json!({"l": [1]}), "- at '/l': maxItems: got 1, want 0"),
            (props(json!({"l": {"uniqueItems": true}})), json!({"l": [1, 2, 1.0]}),
             "- at '/l': items at 0 and 2 are equal"),
            (props(json!({"l": {"items": {"type": "string"}}})), json!({"l": ["a", 1]}),
             "- at '/l/1': got number, want string"),
            (props(json!({"l": {"items": {"type": "string"}}})), json!({"l": [2, 1]}),
             "- at '/l/0': got number, want string\n- at '/l/1': got number, want string"),
            (props(json!({"l": {"prefixItems": [{"type": "string"}], "items": false}})),
             json!({"l": ["a", 1]}), "- at '/l/0': false schema"),
            (json!({"$schema": d7, "properties": {"l": {"items": [{"type": "string"}], "additionalItems": false}}}),
             json!({"l": ["a", 1, 2]}), "- at '/l': last 2 additionalItem(s) not allowed"),
            (props(json!({"l": {"contains": {"type": "string"}}})), json!({"l": [1, 2]}),
             "- at '/l': no items match contains schema\n  - at '/l/0': got number, want string\n  - at '/l/1': got number, want string"),
            (props(json!({"l": {"contains": {"type": "string"}, "minContains": 2}})), json!({"l": [1, "a"]}),
             "- at '/l': min 2 items required to match contains schema, but matched 1 items at 1\n  - at '/l/0': got number, want string"),
            (props(json!({"l": {"contains": {"type": "string"}, "maxContains": 1}})), json!({"l": ["b", "a"]}),
             "- at '/l': max 1 items required to match contains schema, but matched 2 items at 0 1"),
            (props(json!({"p": {"anyOf": [{"type": "string"}, {"type": "integer"}]}})), json!({"p": [1]}),
             "- at '/p': 'anyOf' failed\n  - at '/p': got array, want string\n  - at '/p': got array, want integer"),
            (props(json!({"p": {"oneOf": [{"type": "string"}, {"type": "integer"}]}})), json!({"p": [1]}),
             "- at '/p': 'oneOf' failed, none matched\n  - at '/p': got array, want string\n  - at '/p': got array, want integer"),
            (props(json!({"p": {"oneOf": [{"type": "number"}, {"type": "integer"}]}})), json!({"p": 1}),
             "- at '/p': 'oneOf' failed, subschemas 0, 1 matched"),
            (props(json!({"p": {"allOf": [{"type": "string"}, {"minimum": 3}]}})), json!({"p": 1}),
             "- at '/p': 'allOf' failed\n  - at '/p': got number, want string\n  - at '/p': minimum: got 1, want 3"),
            (props(json!({"p": {"not": {"type": "string"}}})), json!({"p": "a"}), "- at '/p': 'not' failed"),
            (json!({"if": {"properties": {"a": {"const": 1}}}, "then": {"required": ["b"]}}), json!({"a": 1}),
             "- at '': missing property 'b'"),
            (props(json!({"p": false})), json!({"p": 1}), "- at '/p': false schema"),
            // Draft-07: a `$ref` replaces its siblings but `const`.
            (json!({"$schema": d7, "properties": {"p": {"$ref": "#/definitions/x", "type": "string"}},
                    "definitions": {"x": {"type": "integer"}}}),
             json!({"p": "a"}), "- at '/p': got string, want integer"),
            (json!({"$schema": d7, "properties": {"p": {"$ref": "#/definitions/x", "const": "a"}},
                    "definitions": {"x": {}}}),
             json!({"p": "b"}), "- at '/p': value must be 'a'"),
            // 2020-12: beside them.
            (json!({"properties": {"p": {"$ref": "#/$defs/x", "minimum": 5}}, "$defs": {"x": {"type": "integer"}}}),
             json!({"p": 1}), "- at '/p': minimum: got 1, want 5"),
            (json!({"properties": {"p": {"$ref": "#/$defs/x"}},
                    "$defs": {"x": {"type": "object", "required": ["a"], "minProperties": 5}}}),
             json!({"p": {"b": 1}}),
             "- at '/p': validation failed\n  - at '/p': minProperties: got 1, want 5\n  - at '/p': missing property 'a'"),
            (json!({"$schema": d7, "$ref": "#/definitions/V", "definitions": {"V": {"required": ["a"]}}}),
             json!({"b": 1}), "- at '': missing property 'a'"),
            (json!({"$schema": d7, "$ref": "#/definitions/V",
                    "definitions": {"V": {"required": ["a"], "minProperties": 3}}}),
             json!({"b": 1}),
             "- at '': validation failed\n  - at '': minProperties: got 1, want 3\n  - at '': missing property 'a'"),
            (json!({"dependencies": {"a": ["b"]}}), json!({"a": 1}),
             "- at '': properties 'b' required, if 'a' exists"),
            (json!({"dependentRequired": {"a": ["b", "c"]}}), json!({"a": 1}),
             "- at '': properties 'b', 'c' required, if 'a' exists"),
            (json!({"propertyNames": {"maxLength": 2}}), json!({"abc": 1}),
             "- at '': invalid propertyName 'abc'\n  - at '': maxLength: got 3, want 2"),
            (props(json!({"o": {"minProperties": 2}})), json!({"o": {"a": 1}}),
             "- at '/o': minProperties: got 1, want 2"),
            (props(json!({"o": {"required": ["x"], "properties": {"a": {"type": "string"}}}})),
             json!({"o": {"a": 1}}),
             "- at '/o': missing property 'x'\n- at '/o/a': got number, want string"),
        ] {
            assert_eq!(message(&schema, &values), want, "{schema} {values}");
        }
    }

    #[test]
    fn verdicts_follow_the_draft() {
        let valid = |s: Value, v: Value| assert_eq!(run(&s, &v), Verdict::Valid, "{s} {v}");
        let fails = |s: Value, v: Value| {
            assert!(matches!(run(&s, &v), Verdict::Invalid(_)), "{s} {v}");
        };
        let refused = |s: Value, v: Value| {
            assert!(matches!(run(&s, &v), Verdict::Unsupported(_)), "{s} {v}");
        };
        let d7 = "http://json-schema.org/draft-07/schema#";
        // Seven hundredths are a multiple of a hundredth (big.Rat).
        valid(
            props(json!({"n": {"multipleOf": 0.01}})),
            json!({"n": 0.07}),
        );
        // A whole float is an integer.
        valid(props(json!({"n": {"type": "integer"}})), json!({"n": 3.0}));
        fails(props(json!({"n": {"type": "integer"}})), json!({"n": 3.5}));
        // Draft-07 ignores a `$ref`'s `type` sibling; 2020-12 does not.
        valid(
            json!({"$schema": d7, "properties": {"p": {"$ref": "#/definitions/x", "type": "string"}},
                   "definitions": {"x": {"type": "integer"}}}),
            json!({"p": 1}),
        );
        fails(
            json!({"properties": {"p": {"$ref": "#/$defs/x", "type": "string"}},
                   "$defs": {"x": {"type": "integer"}}}),
            json!({"p": 1}),
        );
        // `items` as an array is a tuple before 2020-12 and a compile
        // error in it.
        fails(
            json!({"$schema": d7, "properties": {"l": {"items": [{"type": "string"}]}}}),
            json!({"l": [1]}),
        );
        refused(
            json!({"properties": {"l": {"items": [{"type": "string"}]}}}),
            json!({"l": [1]}),
        );
        // `format` is asserted before 2019-09 only: not judged natively
        // on a string there, ignored on other values and after.
        valid(
            props(json!({"p": {"format": "ipv4"}})),
            json!({"p": "nope"}),
        );
        valid(
            json!({"$schema": d7, "properties": {"p": {"format": "ipv4"}}}),
            json!({"p": 5}),
        );
        let f7 = |f: &str| json!({"$schema": d7, "properties": {"p": {"format": f}}});
        fails(f7("ipv4"), json!({"p": "x"}));
        fails(f7("ipv4"), json!({"p": "01.2.3.4"}));
        valid(f7("ipv4"), json!({"p": "10.0.0.255"}));
        valid(
            f7("uuid"),
            json!({"p": "123E4567-e89b-12d3-a456-426614174000"}),
        );
        fails(f7("uuid"), json!({"p": "123e4567"}));
        valid(f7("hostname"), json!({"p": "api.example.com."}));
        fails(f7("hostname"), json!({"p": "-x.example.com"}));
        valid(f7("json-pointer"), json!({"p": "/a/~1b"}));
        fails(f7("json-pointer"), json!({"p": "/a~2"}));
        valid(f7("uri"), json!({"p": "https://charts.example.com/x"}));
        refused(f7("uri"), json!({"p": "relative/x"}));
        // helm v4.1.4 accepted the first six and refused the next six.
        for ok in [
            "admin@example.com",
            "a.b+c@sub.example.com.",
            "\"q d\"@example.com",
            "\"x@y\"@example.com",
            "a@[10.0.0.1]",
            "{x}~@e-x.io",
        ] {
            valid(f7("email"), json!({ "p": ok }));
        }
        for bad in [
            "a..b@example.com",
            ".a@example.com",
            "a@-example.com",
            "a b@example.com",
            "a@[300.0.0.1]",
            "no-at-sign",
        ] {
            fails(f7("email"), json!({ "p": bad }));
        }
        refused(f7("email"), json!({"p": "a@[IPv6:::1]"}));
        // `dependentRequired` is a 2019-09 keyword, `dependencies` all
        // drafts'.
        valid(
            json!({"$schema": d7, "dependentRequired": {"a": ["b"]}}),
            json!({"a": 1}),
        );
        fails(
            json!({"dependencies": {"a": {"required": ["b"]}}}),
            json!({"a": 1}),
        );
        // An unresolved URN is `true`.
        valid(
            props(json!({"p": {"$ref": "urn:example:thing"}})),
            json!({"p": 1}),
        );
        // What helm would load, or what is not implemented, is refused.
        refused(
            props(json!({"p": {"$ref": "https://example.com/s.json"}})),
            json!({}),
        );
        refused(props(json!({"p": {"$ref": "other.json#/x"}})), json!({}));
        refused(json!({"$schema": "https://example.com/meta"}), json!({}));
        refused(json!({"unevaluatedProperties": false}), json!({}));
        refused(json!({"$defs": {"a": {"$anchor": "a"}}}), json!({}));
        // A `$ref` cycle at one value ends.
        refused(json!({"$ref": "#"}), json!({}));
        refused(
            json!({"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
                       "$ref": "#/$defs/a"}),
            json!({}),
        );
        // Schemas the metaschema refuses do not compile.
        refused(props(json!({"p": {"type": "strin"}})), json!({}));
        refused(json!({"required": "a"}), json!({}));
        refused(
            json!({"$schema": d7, "properties": {"p": {"examples": "x"}}}),
            json!({}),
        );
        refused(
            json!({"$schema": "http://json-schema.org/draft-04/schema#", "properties": {"p": true}}),
            json!({}),
        );
        refused(
            json!({"$schema": "http://json-schema.org/draft-04/schema#", "required": []}),
            json!({}),
        );
        // Draft-07's `enum` holds distinct values; 2020-12's need not.
        refused(
            json!({"$schema": d7, "properties": {"p": {"enum": [1, 1]}}}),
            json!({}),
        );
        valid(props(json!({"p": {"enum": [1, 1]}})), json!({}));
        refused(props(json!({"p": {"$ref": "#/$defs/missing"}})), json!({}));
        // Draft-07's `$defs` is checked only where a `$ref` reaches it.
        valid(
            json!({"$schema": d7, "$defs": {"x": {"type": 5}}}),
            json!({}),
        );
        refused(
            json!({"$schema": d7, "$defs": {"x": {"type": 5}}, "$ref": "#/$defs/x"}),
            json!({}),
        );
        // Patterns Rust's regex reads otherwise than RE2 are not judged.
        valid(
            props(json!({"p": {"pattern": "^[a-z][a-z0-9-]*[[:alpha:]]$"}})),
            json!({"p": "ab-c"}),
        );
        refused(
            props(json!({"p": {"pattern": "^[a[b]]$"}})),
            json!({"p": "a"}),
        );
        refused(
            props(json!({"p": {"pattern": "^[a-z&&[^x]]$"}})),
            json!({"p": "a"}),
        );
        // Unknown keywords are ignored.
        valid(
            json!({"form": true, "x-order": [1], "type": "object"}),
            json!({"a": 1}),
        );
    }

    #[test]
    fn errors_in_gos_map_order_are_not_worded() {
        // Two properties failing: Go ranges over the values' map in random
        // order, so helm's message has no one order.
        let s = props(json!({"a": {"type": "string"}, "b": {"type": "string"}}));
        assert!(matches!(
            run(&s, &json!({"a": 1, "b": 2})),
            Verdict::Invalid(Err(_))
        ));
        let s = json!({"additionalProperties": false});
        assert!(matches!(
            run(&s, &json!({"a": 1, "b": 2})),
            Verdict::Invalid(Err(_))
        ));
        // A required property and one failing property come in a fixed
        // order.
        let s = json!({"required": ["x"], "properties": {"a": {"type": "string"}}});
        assert_eq!(
            message(&s, &json!({"a": 1})),
            "- at '': missing property 'x'\n- at '/a': got number, want string"
        );
    }
}
