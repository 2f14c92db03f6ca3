//! JSON values as the pipeline reads them.

pub mod encoded;

pub use encoded::{LazyValue, View};
use serde_json::Value;

/// The JSON pointer of a jq expression that is a path of object keys and
/// nothing else: `.spec.syncPolicy`, `.metadata.annotations."a/b"`,
/// `.metadata.labels["team"]` (keys quoted with `\"` and `\\` as the only
/// escapes). `None` for any other expression (an iteration, a `select`, a
/// pipe), which only a jq engine can evaluate.
#[must_use]
pub fn jq_key_path_pointer(expr: &str) -> Option<String> {
    fn quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Option<String> {
        let mut key = String::new();
        loop {
            match chars.next()? {
                '"' => return Some(key),
                '\\' => match chars.next()? {
                    c @ ('"' | '\\') => key.push(c),
                    _ => return None,
                },
                c => key.push(c),
            }
        }
    }
    let mut chars = expr.trim().chars().peekable();
    let mut pointer = String::new();
    let mut keys = 0usize;
    // `[` indexes only what a `.` or a key leads to (`["a"]` alone is an
    // array literal).
    let mut indexable = false;
    while let Some(c) = chars.next() {
        let key = match c {
            '.' => match chars.peek() {
                Some('"') => {
                    chars.next();
                    quoted(&mut chars)?
                }
                Some('[') => {
                    indexable = true;
                    continue;
                }
                Some(&c) if c.is_ascii_alphabetic() || c == '_' => {
                    let mut key = String::new();
                    while let Some(&c) = chars.peek() {
                        if !(c.is_ascii_alphanumeric() || c == '_') {
                            break;
                        }
                        key.push(c);
                        chars.next();
                    }
                    key
                }
                _ => return None,
            },
            '[' if indexable => {
                if chars.next()? != '"' {
                    return None;
                }
                let key = quoted(&mut chars)?;
                if chars.next()? != ']' {
                    return None;
                }
                key
            }
            _ => return None,
        };
        keys += 1;
        indexable = true;
        pointer.push('/');
        pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
    }
    (keys > 0).then_some(pointer)
}

/// A value looked up by JSON pointer (RFC 6901), exactly as
/// [`Value::pointer`] does, but without the two copies `pointer` makes of
/// every segment: rules and renders look up annotations and fields of
/// every resource of a fleet.
pub trait Pointer {
    /// The value at `pointer`: `""` is the whole value, each `/segment`
    /// (`~1` for `/`, `~0` for `~`) a key of an object or an index of an
    /// array (decimal, without sign or leading zeros).
    fn at(&self, pointer: &str) -> Option<&Value>;
}

impl Pointer for Value {
    fn at(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let mut target = self;
        for segment in pointer.strip_prefix('/')?.split('/') {
            let unescaped;
            let token = if segment.contains('~') {
                unescaped = segment.replace("~1", "/").replace("~0", "~");
                unescaped.as_str()
            } else {
                segment
            };
            target = match target {
                Value::Object(map) => map.get(token)?,
                Value::Array(list) => list.get(index(token)?)?,
                _ => return None,
            };
        }
        Some(target)
    }
}

/// An array index as `serde_json` reads one in a pointer.
fn index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() != 1) {
        return None;
    }
    token.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every pointer, escaped or not, finds what `Value::pointer` finds.
    #[test]
    fn jq_key_paths_become_pointers_and_other_expressions_do_not() {
        let p = |e: &str| jq_key_path_pointer(e);
        assert_eq!(p(".spec.syncPolicy").as_deref(), Some("/spec/syncPolicy"));
        assert_eq!(
            p(r#".metadata.annotations."example.com/a~b""#).as_deref(),
            Some("/metadata/annotations/example.com~1a~0b")
        );
        assert_eq!(
            p(r#".metadata.labels["team"]"#).as_deref(),
            Some("/metadata/labels/team")
        );
        assert_eq!(
            p(r#".["spec"].replicas"#).as_deref(),
            Some("/spec/replicas")
        );
        for other in [
            ".",
            "",
            "spec",
            ".spec.template.spec.containers[] | select(.name == \"x\") | .image",
            ".spec.containers[0]",
            ".a..b",
            r#".a."b"#,
            r#".a."\n""#,
        ] {
            assert_eq!(p(other), None, "{other}");
        }
    }

    #[test]
    fn finds_what_serde_json_finds() {
        let v = serde_json::json!({
            "": {"": 1},
            "a/b": {"c~d": [10, {"e": null}]},
            "metadata": {"annotations": {"argocd.argoproj.io/hook": "PreSync"}},
            "list": [[0, 1], {"01": "key"}],
            "~1": "tilde-one"
        });
        let pointers = [
            "",
            "/",
            "//",
            "/a~1b",
            "/a~1b/c~0d",
            "/a~1b/c~0d/0",
            "/a~1b/c~0d/1/e",
            "/a~1b/c~0d/01",
            "/a~1b/c~0d/+1",
            "/a~1b/c~0d/-1",
            "/a~1b/c~0d/2",
            "/a~1b/c~0d/1/e/x",
            "/metadata/annotations/argocd.argoproj.io~1hook",
            "/metadata/annotations/argocd.argoproj.io/hook",
            "/list/0/1",
            "/list/1/01",
            "/list/01",
            "/~01",
            "/~1",
            "/missing",
            "metadata",
            "/metadata/",
            "/list/",
            "/list/18446744073709551616",
        ];
        for p in pointers {
            assert_eq!(v.at(p), v.pointer(p), "{p:?}");
        }
        assert_eq!(
            v.at("/metadata/annotations/argocd.argoproj.io~1hook"),
            Some(&Value::from("PreSync"))
        );
        assert_eq!(v.at("/~01"), Some(&Value::from("tilde-one")));
    }
}
