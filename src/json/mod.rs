//! JSON values as the pipeline reads them.

pub(crate) mod encoded;

pub(crate) use encoded::{LazyValue, View};
use serde_json::Value;

/// A value looked up by JSON pointer (RFC 6901), exactly as
/// [`Value::pointer`] does, but without the two copies `pointer` makes of
/// every segment: rules and renders look up annotations and fields of
/// every resource of a fleet.
pub(crate) trait Pointer {
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
