//! JSON values in a binary form ([`put_value`]), as records kept between
//! runs hold them, and [`LazyValue`]: a value that stays in that form
//! until a reader needs it whole.
//!
//! A warm run of a large fleet takes every Application file's parse from
//! its record, and most of those Applications are only asked their kind,
//! name and namespace, or have their spec read once. Decoded into
//! `serde_json` maps, one Application takes some 4 KiB of fresh memory;
//! its record, some 600 bytes. A [`View`] reads fields straight from the
//! record, and [`LazyValue::with_value`] lends a value decoded for one
//! reader and dropped after, so the memory is used again.

use serde_json::{Map, Number, Value};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Arrays and objects nested deeper than this are not written or read
/// (`serde_json`, which read records before, refused them too), so a
/// damaged record cannot make a reader recurse without bound.
pub const MAX_NESTING: usize = 128;

/// Most items an array or object of a record is given room for before
/// they are read (more are added as they are).
const PREALLOCATED: usize = 32;

// The tags of [`put_value`]: the byte before each value.
/// Tag of `null`.
pub const NULL: u8 = 0;
/// Tag of `false`.
pub const FALSE: u8 = 1;
/// Tag of `true`.
pub const TRUE: u8 = 2;
/// Tag of a non-negative integer (8 bytes, little-endian).
pub const UINT: u8 = 3;
/// Tag of a negative integer (8 bytes, little-endian).
pub const NEG_INT: u8 = 4;
/// Tag of a float (8 bytes, little-endian).
pub const FLOAT: u8 = 5;
/// Tag of a string (its length as 4 bytes, then its bytes).
pub const STRING: u8 = 6;
/// Tag of an array (its length, then its items).
pub const ARRAY: u8 = 7;
/// Tag of an object (its length, then keys and values).
pub const OBJECT: u8 = 8;

/// Appends `v`: a tag, then a number's 8 bytes, or a string's length and
/// bytes, or a count and each item (an object's key, as a string, before
/// its value, in the map's order, which is sorted). `None` past `depth`
/// nested arrays and objects or for a length over `u32`.
pub fn put_value(out: &mut Vec<u8>, v: &Value, depth: usize) -> Option<()> {
    match v {
        Value::Null => out.push(NULL),
        Value::Bool(false) => out.push(FALSE),
        Value::Bool(true) => out.push(TRUE),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                out.push(UINT);
                out.extend_from_slice(&u.to_le_bytes());
            } else if let Some(i) = n.as_i64() {
                out.push(NEG_INT);
                out.extend_from_slice(&i.to_le_bytes());
            } else {
                out.push(FLOAT);
                out.extend_from_slice(&n.as_f64()?.to_bits().to_le_bytes());
            }
        }
        Value::String(s) => {
            out.push(STRING);
            put_str(out, s)?;
        }
        Value::Array(items) => {
            let depth = depth.checked_sub(1)?;
            out.push(ARRAY);
            out.extend_from_slice(&u32::try_from(items.len()).ok()?.to_le_bytes());
            for item in items {
                put_value(out, item, depth)?;
            }
        }
        Value::Object(map) => {
            let depth = depth.checked_sub(1)?;
            out.push(OBJECT);
            out.extend_from_slice(&u32::try_from(map.len()).ok()?.to_le_bytes());
            for (k, item) in map {
                put_str(out, k)?;
                put_value(out, item, depth)?;
            }
        }
    }
    Some(())
}

fn put_str(out: &mut Vec<u8>, s: &str) -> Option<()> {
    out.extend_from_slice(&u32::try_from(s.len()).ok()?.to_le_bytes());
    out.extend_from_slice(s.as_bytes());
    Some(())
}

/// Reads what [`put_value`] writes, from the front of its bytes.
pub struct Reader<'a>(pub &'a [u8]);

impl<'a> Reader<'a> {
    /// The next `n` bytes, if there are that many.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (a, b) = self.0.split_at_checked(n)?;
        self.0 = b;
        Some(a)
    }

    /// The next 4 bytes as a little-endian `u32`.
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn eight(&mut self) -> Option<[u8; 8]> {
        self.take(8)?.try_into().ok()
    }

    fn str(&mut self) -> Option<&'a str> {
        let len = self.u32()? as usize;
        std::str::from_utf8(self.take(len)?).ok()
    }

    /// A number's tag and bytes as [`put_value`] writes them; `None` for a
    /// number it never writes.
    fn number(&mut self, tag: u8) -> Option<Number> {
        let bytes = self.eight()?;
        match tag {
            UINT => Some(Number::from(u64::from_le_bytes(bytes))),
            // Only a negative integer is written so.
            NEG_INT => Some(Number::from(
                Some(i64::from_le_bytes(bytes)).filter(|i| *i < 0)?,
            )),
            _ => Number::from_f64(f64::from_le_bytes(bytes)),
        }
    }

    /// A value as [`put_value`] writes it, with at most `depth` arrays and
    /// objects nested in it; `None` for anything else.
    pub fn value(&mut self, depth: usize) -> Option<Value> {
        Some(match self.take(1)?[0] {
            NULL => Value::Null,
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            tag @ (UINT | NEG_INT | FLOAT) => Value::Number(self.number(tag)?),
            STRING => Value::String(self.str()?.to_string()),
            ARRAY => {
                let depth = depth.checked_sub(1)?;
                let n = self.u32()? as usize;
                // A count is not trusted to size an allocation: at every
                // level of nesting it could claim the whole record.
                let mut items = Vec::with_capacity(n.min(PREALLOCATED));
                for _ in 0..n {
                    items.push(self.value(depth)?);
                }
                Value::Array(items)
            }
            OBJECT => {
                let depth = depth.checked_sub(1)?;
                let n = self.u32()? as usize;
                let mut entries: Vec<(String, Value)> = Vec::with_capacity(n.min(PREALLOCATED));
                for _ in 0..n {
                    let k = self.str()?;
                    // A map is written in its order: each key after the last.
                    if entries.last().is_some_and(|(last, _)| last.as_str() >= k) {
                        return None;
                    }
                    entries.push((k.to_string(), self.value(depth)?));
                }
                // Sorted already, so the map is built without a search per key.
                Value::Object(entries.into_iter().collect::<Map<String, Value>>())
            }
            _ => return None,
        })
    }

    /// Passes over a value exactly when [`Reader::value`] would read it,
    /// making nothing: a value that passed is then read without fail.
    pub fn skip(&mut self, depth: usize) -> Option<()> {
        self.pass_over(depth, true)
    }

    /// Passes over a value that [`Reader::skip`] passed before, following
    /// its tags and lengths only: a view reads a record checked when it
    /// was loaded, and passes several fields per lookup. Still `None` past
    /// the end or `depth`.
    fn pass(&mut self, depth: usize) -> Option<()> {
        self.pass_over(depth, false)
    }

    /// [`Reader::skip`] when `checked`, else [`Reader::pass`].
    fn pass_over(&mut self, depth: usize, checked: bool) -> Option<()> {
        match self.take(1)?[0] {
            NULL | FALSE | TRUE => {}
            tag @ (UINT | NEG_INT | FLOAT) if checked => {
                self.number(tag)?;
            }
            UINT | NEG_INT | FLOAT => {
                self.take(8)?;
            }
            STRING => {
                self.text(checked)?;
            }
            ARRAY => {
                let depth = depth.checked_sub(1)?;
                for _ in 0..self.u32()? {
                    self.pass_over(depth, checked)?;
                }
            }
            OBJECT => {
                let depth = depth.checked_sub(1)?;
                // Bytes compare as their strings do.
                let mut last: Option<&[u8]> = None;
                for _ in 0..self.u32()? {
                    let k = self.text(checked)?;
                    if checked && last.is_some_and(|last| last >= k) {
                        return None;
                    }
                    last = Some(k);
                    self.pass_over(depth, checked)?;
                }
            }
            _ if checked => return None,
            _ => {}
        }
        Some(())
    }

    /// A string's bytes, checked to be UTF-8 when `checked`.
    fn text(&mut self, checked: bool) -> Option<&'a [u8]> {
        let len = self.u32()? as usize;
        let bytes = self.take(len)?;
        if checked {
            std::str::from_utf8(bytes).ok()?;
        }
        Some(bytes)
    }
}

/// Values decoded whole from their binary form in this process
/// ([`LazyValue`]'s, kept or lent), for `GITOPS_LINT_STATS`.
static DECODED: AtomicUsize = AtomicUsize::new(0);

/// How many values [`LazyValue`] has decoded whole in this process.
#[must_use]
pub fn decoded_values() -> usize {
    DECODED.load(Ordering::Relaxed)
}

/// A JSON value held in the binary form of [`put_value`] until a reader
/// needs it whole, then decoded once and kept; or a value given whole.
/// It reads as a [`Value`] (`Deref`); [`LazyValue::view`] and
/// [`LazyValue::with_value`] read it without keeping a decoded copy.
pub struct LazyValue {
    /// The value's binary form, checked by [`Reader::skip`]; empty for a
    /// value given whole.
    encoded: Box<[u8]>,
    decoded: OnceLock<Value>,
}

impl LazyValue {
    /// The value whose binary form begins `bytes`, and the bytes after
    /// it; `None` where [`Reader::value`] would read none.
    #[must_use]
    pub fn encoded(bytes: &[u8]) -> Option<(LazyValue, &[u8])> {
        let mut r = Reader(bytes);
        r.skip(MAX_NESTING)?;
        let (this, rest) = bytes.split_at(bytes.len() - r.0.len());
        Some((
            LazyValue {
                encoded: this.into(),
                decoded: OnceLock::new(),
            },
            rest,
        ))
    }

    /// A reader of the value's fields that decodes nothing.
    #[must_use]
    pub fn view(&self) -> View<'_> {
        match self.decoded.get() {
            Some(v) => View::Value(v),
            None => View::Encoded(&self.encoded),
        }
    }

    /// `f` of the value, decoded for `f` alone when it is not yet: a value
    /// read once (an Application's spec) is not kept whole.
    pub fn with_value<R>(&self, f: impl FnOnce(&Value) -> R) -> R {
        match self.decoded.get() {
            Some(v) => f(v),
            None => f(&decode(&self.encoded)),
        }
    }

    /// The value, decoded when it was held encoded.
    #[must_use]
    pub fn into_value(self) -> Value {
        match self.decoded.into_inner() {
            Some(v) => v,
            None => decode(&self.encoded),
        }
    }
}

fn decode(encoded: &[u8]) -> Value {
    DECODED.fetch_add(1, Ordering::Relaxed);
    // `encoded` passed `Reader::skip`, which fails exactly where
    // `Reader::value` does.
    Reader(encoded).value(MAX_NESTING).unwrap_or(Value::Null)
}

impl From<Value> for LazyValue {
    fn from(v: Value) -> LazyValue {
        LazyValue {
            encoded: Box::default(),
            decoded: OnceLock::from(v),
        }
    }
}

impl std::ops::Deref for LazyValue {
    type Target = Value;

    fn deref(&self) -> &Value {
        self.decoded.get_or_init(|| decode(&self.encoded))
    }
}

impl PartialEq for LazyValue {
    fn eq(&self, other: &LazyValue) -> bool {
        if std::ptr::eq(self, other) {
            return true;
        }
        // The binary form is canonical (sorted keys, one form per number):
        // one form is one value. Two forms may still be one value (`0.0`
        // and `-0.0`), so unequal forms are compared as values.
        if !self.encoded.is_empty() && self.encoded == other.encoded {
            return true;
        }
        self.with_value(|a| other.with_value(|b| a == b))
    }
}

impl std::fmt::Debug for LazyValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.with_value(|v| std::fmt::Debug::fmt(v, f))
    }
}

/// A reader of a value's fields, from the value or from its binary form,
/// that decodes nothing.
#[derive(Clone, Copy, Debug)]
pub enum View<'a> {
    /// A decoded value.
    Value(&'a Value),
    /// Starts with a value [`Reader::skip`] passed.
    Encoded(&'a [u8]),
}

impl<'a> View<'a> {
    /// The member `key`, when this is an object that has it.
    #[must_use]
    pub fn get(self, key: &str) -> Option<View<'a>> {
        match self {
            View::Value(v) => v.get(key).map(View::Value),
            View::Encoded(bytes) => {
                let mut r = Reader(bytes);
                if r.take(1)? != [OBJECT] {
                    return None;
                }
                for _ in 0..r.u32()? {
                    // Bytes compare as their strings do; this record's
                    // keys were checked to be UTF-8 when it was loaded.
                    match r.text(false)?.cmp(key.as_bytes()) {
                        std::cmp::Ordering::Equal => return Some(View::Encoded(r.0)),
                        // Keys are in order: `key` is not further on.
                        std::cmp::Ordering::Greater => return None,
                        std::cmp::Ordering::Less => r.pass(MAX_NESTING)?,
                    }
                }
                None
            }
        }
    }

    /// The string, when this is one.
    #[must_use]
    pub fn as_str(self) -> Option<&'a str> {
        match self {
            View::Value(v) => v.as_str(),
            View::Encoded(bytes) => {
                let mut r = Reader(bytes);
                (r.take(1)? == [STRING]).then_some(())?;
                r.str()
            }
        }
    }

    /// The boolean, when this is one.
    #[must_use]
    pub fn as_bool(self) -> Option<bool> {
        match self {
            View::Value(v) => v.as_bool(),
            View::Encoded(bytes) => match *bytes.first()? {
                TRUE => Some(true),
                FALSE => Some(false),
                _ => None,
            },
        }
    }

    /// The items, when this is an array.
    #[must_use]
    pub fn items(self) -> Option<Vec<View<'a>>> {
        match self {
            View::Value(v) => Some(v.as_array()?.iter().map(View::Value).collect()),
            View::Encoded(bytes) => {
                let mut r = Reader(bytes);
                (r.take(1)? == [ARRAY]).then_some(())?;
                let n = r.u32()? as usize;
                let mut items = Vec::with_capacity(n.min(PREALLOCATED));
                for _ in 0..n {
                    items.push(View::Encoded(r.0));
                    r.pass(MAX_NESTING)?;
                }
                Some(items)
            }
        }
    }

    /// A copy of this part of the value, decoded alone.
    #[must_use]
    pub fn to_value(self) -> Value {
        match self {
            View::Value(v) => v.clone(),
            // Checked with the whole value by `Reader::skip`.
            View::Encoded(bytes) => Reader(bytes).value(MAX_NESTING).unwrap_or(Value::Null),
        }
    }

    /// Whether this is an object.
    #[must_use]
    pub fn is_object(self) -> bool {
        match self {
            View::Value(v) => v.is_object(),
            View::Encoded(bytes) => bytes.first() == Some(&OBJECT),
        }
    }

    /// Whether this is null.
    #[must_use]
    pub fn is_null(self) -> bool {
        match self {
            View::Value(v) => v.is_null(),
            View::Encoded(bytes) => bytes.first() == Some(&NULL),
        }
    }
}

impl<'a> From<&'a Value> for View<'a> {
    fn from(v: &'a Value) -> View<'a> {
        View::Value(v)
    }
}

impl<'a> From<&'a LazyValue> for View<'a> {
    fn from(v: &'a LazyValue) -> View<'a> {
        v.view()
    }
}

impl<'a> From<&'a std::sync::Arc<LazyValue>> for View<'a> {
    fn from(v: &'a std::sync::Arc<LazyValue>) -> View<'a> {
        v.view()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lazy(v: &Value) -> LazyValue {
        let mut out = Vec::new();
        put_value(&mut out, v, MAX_NESTING).unwrap_or_else(|| panic!("{v}"));
        let (lazy, rest) = LazyValue::encoded(&out).unwrap_or_else(|| panic!("{v}"));
        assert!(rest.is_empty());
        lazy
    }

    /// A view of the binary form finds what the value holds, with no
    /// decoding; the value comes back whole, decoded once.
    #[test]
    fn a_view_reads_fields_without_decoding() {
        let v = serde_json::json!({
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Application",
            "metadata": {"name": "a", "annotations": {"x": "1", "z": 2}},
            "spec": {"source": {"path": "apps/a"}, "list": [1, -2, 0.5, null, true]}
        });
        let l = lazy(&v);
        let before = decoded_values();
        let meta = l.view().get("metadata");
        assert_eq!(
            meta.and_then(|m| m.get("name")).and_then(View::as_str),
            Some("a")
        );
        let ann = meta.and_then(|m| m.get("annotations"));
        assert_eq!(
            ann.and_then(|a| a.get("x")).and_then(View::as_str),
            Some("1")
        );
        assert_eq!(ann.and_then(|a| a.get("z")).and_then(View::as_str), None);
        assert!(ann.and_then(|a| a.get("y")).is_none());
        assert!(ann.is_some_and(View::is_object));
        assert!(l.view().get("status").is_none());
        assert!(l.view().get("kind").is_some_and(|k| !k.is_object()));
        // The reads kept nothing decoded, and neither did `with_value`.
        assert!(matches!(l.view(), View::Encoded(_)));
        let path = l.with_value(|v| v.pointer("/spec/source/path").cloned());
        assert_eq!(path, Some(Value::from("apps/a")));
        assert!(matches!(l.view(), View::Encoded(_)));
        // Decoding counts (other tests decode beside this one, so only at
        // least this one is certain).
        assert!(decoded_values() > before);
        assert_eq!(*l, v);
        assert!(matches!(l.view(), View::Value(_)));
        assert_eq!(l.into_value(), v);
    }

    /// Two values are equal exactly when their decoded values are.
    #[test]
    fn equal_values_are_equal_in_either_form() {
        let zero = lazy(&serde_json::json!({"a": 0.0}));
        let minus_zero = lazy(&serde_json::json!({"a": -0.0}));
        assert!(zero == minus_zero, "0.0 and -0.0 are one JSON value");
        let one = lazy(&serde_json::json!({"a": 1}));
        assert!(one != zero);
        assert!(one == LazyValue::from(serde_json::json!({"a": 1})));
        assert!(LazyValue::from(serde_json::json!({"a": 1})) == one);
        assert!(lazy(&serde_json::json!({"a": 1})) == one);
    }

    /// `skip` refuses exactly what `value` refuses, so a value that passed
    /// is decoded without fail.
    #[test]
    fn skip_and_value_agree() {
        let obj = |n: u32, rest: &[u8]| [&[OBJECT][..], &n.to_le_bytes(), rest].concat();
        let key = |k: &str, v: &[u8]| {
            [
                &u32::try_from(k.len()).unwrap_or(u32::MAX).to_le_bytes()[..],
                k.as_bytes(),
                v,
            ]
            .concat()
        };
        let nested = |n: usize| -> Vec<u8> {
            (0..n)
                .flat_map(|i| [&[ARRAY][..], &u32::from(i + 1 < n).to_le_bytes()].concat())
                .collect()
        };
        let shapes: Vec<Vec<u8>> = vec![
            vec![NULL],
            vec![9],
            [&[NEG_INT][..], &5i64.to_le_bytes()].concat(),
            [&[NEG_INT][..], &(-5i64).to_le_bytes()].concat(),
            [&[FLOAT][..], &f64::NAN.to_le_bytes()].concat(),
            [&[FLOAT][..], &1.5f64.to_le_bytes()].concat(),
            [&[STRING][..], &2u32.to_le_bytes(), b"\xff\xfe"].concat(),
            [&[STRING][..], &2u32.to_le_bytes(), b"ok"].concat(),
            [&[ARRAY][..], &u32::MAX.to_le_bytes()].concat(),
            obj(2, &[key("a", &[NULL]), key("a", &[TRUE])].concat()),
            obj(2, &[key("b", &[NULL]), key("a", &[TRUE])].concat()),
            obj(2, &[key("a", &[NULL]), key("b", &[TRUE])].concat()),
            nested(MAX_NESTING),
            nested(MAX_NESTING + 1),
            vec![UINT, 1, 2],
        ];
        for (i, shape) in shapes.iter().enumerate() {
            let mut a = Reader(shape);
            let mut b = Reader(shape);
            assert_eq!(
                a.skip(MAX_NESTING).is_some(),
                b.value(MAX_NESTING).is_some(),
                "shape {i}"
            );
            assert_eq!(a.0.len(), b.0.len(), "shape {i}");
            // A value that passed is passed over as far by its lengths alone.
            if Reader(shape).skip(MAX_NESTING).is_some() {
                let mut c = Reader(shape);
                assert!(c.pass(MAX_NESTING).is_some(), "shape {i}");
                assert_eq!(c.0.len(), a.0.len(), "shape {i}");
            }
        }
    }
}
