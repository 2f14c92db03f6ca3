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
use std::collections::{BTreeMap, HashMap};

use serde_json::{Map as JsonMap, Value};

use super::schema::Verdict;
use super::schema6_num::{print_int, Dec};
use gotemplate::V;

mod errors;
mod formats;
mod metaschema;

use errors::{display_literal, int, lifted, missing_of, num, quote, render, says, with_causes};
use errors::{Error, Errors, Text};
use formats::{format_holds, V6_FORMATS};

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
mod tests;
