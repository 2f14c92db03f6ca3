//! `--set`, `--set-string` and `--set-file` as helm v3.17 parses them
//! (`pkg/strvals/parser.go`): `a.b=v,c[0].d=w`, `\` escaping the next
//! character, `{x,y}` lists; with `--set` the value is typed (`true`,
//! `false`, `null`, and base-10 integers without a leading zero become
//! bool, null and int64), with `--set-string` it stays a string, with
//! `--set-file` it is the content of the file it names.

use super::values::Map;
use gotemplate::V;

/// helm's `MaxIndex`.
const MAX_INDEX: usize = 65_536;

/// helm's `MaxNestedNameLevel`.
const MAX_NESTED_NAME_LEVEL: usize = 30;

/// How values are read.
pub(in crate::render::helm) enum Reader<'a> {
    /// `--set`: typed.
    Typed,
    /// `--set-string`.
    Strings,
    /// `--set-file`: the value names a file, read by the function.
    File(&'a dyn Fn(&str) -> Result<V, String>),
}

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    reader: Reader<'a>,
}

/// The parser's `io.EOF`, and its other errors.
#[derive(Debug, PartialEq)]
enum Stop {
    Eof,
    NotList,
    Err(String),
}

impl From<String> for Stop {
    fn from(s: String) -> Stop {
        Stop::Err(s)
    }
}

/// Parses `s` into `dest` (`ParseInto`, `ParseIntoString`, `ParseIntoFile`).
///
/// # Errors
/// helm's parse error.
pub(in crate::render::helm) fn parse_into(
    s: &str,
    dest: &mut Map,
    reader: Reader<'_>,
) -> Result<(), String> {
    let mut p = Parser {
        chars: s.chars().collect(),
        pos: 0,
        reader,
    };
    loop {
        match p.key(dest, 0) {
            Ok(()) => {}
            Err(Stop::Eof) => return Ok(()),
            Err(Stop::NotList) => return Err("not a list".into()),
            Err(Stop::Err(e)) => return Err(e),
        }
    }
}

/// `typedVal`.
fn typed(s: &str, strings: bool) -> V {
    if strings {
        return V::Str(s.to_string());
    }
    if s.eq_ignore_ascii_case("true") {
        return V::Bool(true);
    }
    if s.eq_ignore_ascii_case("false") {
        return V::Bool(false);
    }
    if s.eq_ignore_ascii_case("null") {
        return V::Nil;
    }
    if s == "0" {
        return V::Int64(0);
    }
    if !s.is_empty() && !s.starts_with('0') {
        // strconv.ParseInt(s, 10, 64): an optional sign, then digits.
        let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
        if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
            if let Ok(i) = s.parse::<i64>() {
                return V::Int64(i);
            }
        }
    }
    V::Str(s.to_string())
}

fn set(data: &mut Map, key: String, val: V) {
    if !key.is_empty() {
        data.insert(key, val);
    }
}

fn set_index(list: &mut Vec<V>, index: i64, val: V) -> Result<(), String> {
    let Ok(i) = usize::try_from(index) else {
        return Err(format!("negative {index} index not allowed"));
    };
    if i > MAX_INDEX {
        return Err(format!(
            "index of {i} is greater than maximum supported index of {MAX_INDEX}"
        ));
    }
    if list.len() <= i {
        list.resize(i + 1, V::Nil);
    }
    list[i] = val;
    Ok(())
}

/// Go's `%T` of a value held where a list or a table was expected, for
/// helm's recovered "interface conversion" panics.
fn go_type(v: &V) -> &'static str {
    match v {
        V::Missing | V::Nil => "nil",
        V::Bool(_) => "bool",
        V::Int(_) => "int",
        V::Int64(_) => "int64",
        V::Float(_) => "float64",
        V::Str(_) => "string",
        V::List(_) => "[]interface {}",
        V::Map(_) => "map[string]interface {}",
        V::Host(h) => h.0.type_name(),
    }
}

impl Parser<'_> {
    fn next(&mut self) -> Option<char> {
        let c = self.chars.get(self.pos).copied();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    /// `runesUntil`: the text up to one of `stop` (consumed), `\` escaping.
    fn until(&mut self, stop: &[char]) -> (String, Option<char>) {
        let mut v = String::new();
        loop {
            match self.next() {
                None => return (v, None),
                Some(c) if stop.contains(&c) => return (v, Some(c)),
                Some('\\') => match self.next() {
                    None => return (v, None),
                    Some(n) => v.push(n),
                },
                Some(c) => v.push(c),
            }
        }
    }

    fn read(&self, s: &str) -> Result<V, String> {
        match &self.reader {
            Reader::Typed => Ok(typed(s, false)),
            Reader::Strings => Ok(typed(s, true)),
            Reader::File(f) => f(s),
        }
    }

    fn key(&mut self, data: &mut Map, level: usize) -> Result<(), Stop> {
        let (k, last) = self.until(&['=', '[', ',', '.']);
        match last {
            None => {
                if k.is_empty() {
                    return Err(Stop::Eof);
                }
                Err(Stop::Err(format!("key {k:?} has no value")))
            }
            Some('[') => {
                let i = self
                    .key_index()
                    .map_err(|e| Stop::Err(format!("error parsing index: {e}")))?;
                let mut list = match data.remove(&k) {
                    None => Vec::new(),
                    Some(V::List(l)) => l,
                    Some(other) => {
                        return Err(Stop::Err(format!(
                            "unable to parse key: interface conversion: interface {{}} is {}, not []interface {{}}",
                            go_type(&other)
                        )))
                    }
                };
                let r = self.list_item(&mut list, i, level);
                set(data, k, V::List(list));
                r
            }
            Some('=') => match self.val_list() {
                Ok(vl) => {
                    set(data, k, V::List(vl));
                    Ok(())
                }
                Err(Stop::Eof) => {
                    set(data, k, V::Str(String::new()));
                    Err(Stop::Eof)
                }
                Err(Stop::NotList) => {
                    let (rs, _) = self.until(&[',']);
                    let v = self.read(&rs).map_err(Stop::Err)?;
                    set(data, k, v);
                    Ok(())
                }
                Err(e) => Err(e),
            },
            Some(',') => {
                set(data, k.clone(), V::Str(String::new()));
                Err(Stop::Err(format!(
                    "key {k:?} has no value (cannot end with ,)"
                )))
            }
            Some(_) => {
                let level = level + 1;
                if level > MAX_NESTED_NAME_LEVEL {
                    return Err(Stop::Err(format!(
                        "value name nested level is greater than maximum supported nested level of {MAX_NESTED_NAME_LEVEL}"
                    )));
                }
                let mut inner = match data.remove(&k) {
                    None => Map::new(),
                    Some(V::Map(m)) => m.into_entries(),
                    Some(other) => {
                        return Err(Stop::Err(format!(
                            "unable to parse key: interface conversion: interface {{}} is {}, not map[string]interface {{}}",
                            go_type(&other)
                        )))
                    }
                };
                let e = self.key(&mut inner, level);
                if e.is_ok() && inner.is_empty() {
                    return Err(Stop::Err(format!("key map {k:?} has no value")));
                }
                if !inner.is_empty() {
                    set(data, k, V::map(inner));
                }
                e
            }
        }
    }

    fn key_index(&mut self) -> Result<i64, String> {
        let (v, last) = self.until(&[']']);
        if last.is_none() {
            return Err("EOF".into());
        }
        // strconv.Atoi
        v.parse::<i64>()
            .map_err(|_| format!("strconv.Atoi: parsing {v:?}: invalid syntax"))
    }

    fn list_item(&mut self, list: &mut Vec<V>, i: i64, level: usize) -> Result<(), Stop> {
        if i < 0 {
            return Err(Stop::Err(format!("negative {i} index not allowed")));
        }
        let (k, last) = self.until(&['[', '.', '=']);
        if !k.is_empty() {
            return Err(Stop::Err(format!(
                "unexpected data at end of array index: {k:?}"
            )));
        }
        match last {
            None => Err(Stop::Eof),
            Some('=') => match self.val_list() {
                Ok(vl) => Ok(set_index(list, i, V::List(vl))?),
                Err(Stop::Eof) => Ok(set_index(list, i, V::Str(String::new()))?),
                Err(Stop::NotList) => {
                    let (rs, _) = self.until(&[',']);
                    let v = self.read(&rs).map_err(Stop::Err)?;
                    Ok(set_index(list, i, v)?)
                }
                Err(e) => Err(e),
            },
            Some('[') => {
                let next = self
                    .key_index()
                    .map_err(|e| Stop::Err(format!("error parsing index: {e}")))?;
                let idx = usize::try_from(i).unwrap_or(usize::MAX);
                let mut crt = match list.get(idx) {
                    None | Some(V::Nil) => Vec::new(),
                    Some(V::List(l)) => l.clone(),
                    Some(other) => {
                        return Err(Stop::Err(format!(
                            "unable to parse key: interface conversion: interface {{}} is {}, not []interface {{}}",
                            go_type(other)
                        )))
                    }
                };
                self.list_item(&mut crt, next, level)?;
                Ok(set_index(list, i, V::List(crt))?)
            }
            Some(_) => {
                let idx = usize::try_from(i).unwrap_or(usize::MAX);
                let mut inner = match list.get(idx) {
                    Some(V::Map(m)) => m.entries().as_ref().clone(),
                    _ => Map::new(),
                };
                self.key(&mut inner, level)?;
                Ok(set_index(list, i, V::map(inner))?)
            }
        }
    }

    /// `valList`: a `{a,b}` list, or `NotList`.
    fn val_list(&mut self) -> Result<Vec<V>, Stop> {
        match self.chars.get(self.pos) {
            None => return Err(Stop::Eof),
            Some('{') => self.pos += 1,
            Some(_) => return Err(Stop::NotList),
        }
        let mut list = Vec::new();
        loop {
            let (rs, last) = self.until(&[',', '}']);
            match last {
                None => return Err(Stop::Err("list must terminate with '}'".into())),
                Some('}') => {
                    if self.chars.get(self.pos) == Some(&',') {
                        self.pos += 1;
                    }
                    list.push(self.read(&rs).map_err(Stop::Err)?);
                    return Ok(list);
                }
                Some(_) => list.push(self.read(&rs).map_err(Stop::Err)?),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(s: &str, reader: Reader<'_>) -> Result<serde_json::Value, String> {
        let mut m = Map::new();
        parse_into(s, &mut m, reader)?;
        Ok(V::map(m).to_json())
    }

    fn typed_of(s: &str) -> V {
        let mut m = Map::new();
        let _ = parse_into(&format!("k={s}"), &mut m, Reader::Typed);
        m.remove("k").unwrap_or(V::Missing)
    }

    // Expectations taken from helm v3.17.1 (`helm template --set …` of a
    // chart printing `toJson .Values`).

    #[test]
    fn set_grammar_is_helms() {
        assert_eq!(
            parse("a.b=1,c[1].d=x,e={1,two},f\\.g=h\\,i", Reader::Typed).ok(),
            Some(serde_json::json!({
                "a": {"b": 1}, "c": [null, {"d": "x"}], "e": [1, "two"], "f.g": "h,i"
            }))
        );
        assert_eq!(
            parse("a=", Reader::Typed).ok(),
            Some(serde_json::json!({"a": ""}))
        );
        assert_eq!(
            parse("a", Reader::Typed).err().as_deref(),
            Some("key \"a\" has no value")
        );
        assert_eq!(
            parse("a,b=1", Reader::Typed).err().as_deref(),
            Some("key \"a\" has no value (cannot end with ,)")
        );
        assert_eq!(
            parse("a[-1]=1", Reader::Typed).err().as_deref(),
            Some("negative -1 index not allowed")
        );
        assert!(parse("a[70000]=1", Reader::Typed).is_err());
        assert_eq!(
            parse("a=1,a.b=2", Reader::Typed).err().as_deref(),
            Some("unable to parse key: interface conversion: interface {} is int64, not map[string]interface {}")
        );
    }

    #[test]
    fn set_types_values_and_set_string_does_not() {
        assert_eq!(typed_of("true"), V::Bool(true));
        assert_eq!(typed_of("FALSE"), V::Bool(false));
        assert_eq!(typed_of("null"), V::Nil);
        assert_eq!(typed_of("0"), V::Int64(0));
        assert_eq!(typed_of("42"), V::Int64(42));
        assert_eq!(typed_of("-7"), V::Int64(-7));
        assert_eq!(typed_of("007"), V::Str("007".into()));
        assert_eq!(typed_of("1.5"), V::Str("1.5".into()));
        assert_eq!(
            typed_of("99999999999999999999"),
            V::Str("99999999999999999999".into())
        );
        assert_eq!(
            parse("a=true,b=1", Reader::Strings).ok(),
            Some(serde_json::json!({"a": "true", "b": "1"}))
        );
    }

    #[test]
    fn set_file_reads_the_named_file() {
        let read = |p: &str| -> Result<V, String> {
            if p == "conf/a,b.txt" {
                Ok(V::Str("content\n".into()))
            } else {
                Err(format!("open {p}: no such file or directory"))
            }
        };
        assert_eq!(
            parse("cfg=conf/a\\,b.txt", Reader::File(&read)).ok(),
            Some(serde_json::json!({"cfg": "content\n"}))
        );
        assert!(parse("cfg=missing", Reader::File(&read)).is_err());
    }

    // `--set` integers are `int64` (`typedVal`: `strconv.ParseInt`).
    // Checked against helm v3.17.1: `helm template --set n=-42 --set one=1
    // --set big=7200000000000` of a chart whose template held these lines
    // printed exactly this.
    #[test]
    fn set_integers_are_int64_in_templates() {
        use gotemplate::{FuncSet, MissingKey, TemplateSet};
        let mut values = Map::new();
        parse_into("n=-42,one=1,big=7200000000000", &mut values, Reader::Typed).expect("parses");
        let src = r#"d: {{ kindOf .Values.n }} {{ typeOf .Values.n }} {{ printf "%T %v %d" .Values.n .Values.n .Values.n }}
e: {{ deepEqual (add 0 1) .Values.one }} {{ deepEqual 1 .Values.one }}
f: {{ eq .Values.one 1 }} {{ lt .Values.n 1 }}
h: {{ kindIs "int64" .Values.n }} {{ typeIs "int" .Values.n }}
i: {{ duration .Values.n }} {{ durationRound .Values.big }}
j: {{ printf "%s" .Values.n }}
k: {{ toJson (dict "a" .Values.n "b" 1) }} {{ .Values.n | toString }}
"#;
        let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero);
        set.add("t", src).expect("parses");
        let dot = V::map(std::iter::once(("Values".to_string(), V::map(values))).collect());
        assert_eq!(
            set.execute("t", &dot).expect("renders"),
            r#"d: int64 int64 int64 -42 -42
e: true false
f: true true
h: true false
i: -42s 2h
j: %!s(int64=-42)
k: {"a":-42,"b":1} -42
"#
        );
    }
}
