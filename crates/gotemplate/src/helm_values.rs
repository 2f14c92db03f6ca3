//! The methods of Helm's `chartutil.Values` (`pkg/chartutil/values.go` at
//! v3.17.1), which a chart's `.Values` has and a plain map does not:
//! `YAML`, `AsMap`, `Table` and `PathValue` (`Encode` takes an
//! `io.Writer`, which no template can make). A map is one when
//! [`SharedMap::is_values_table`] says so.

use std::sync::Arc;

use super::value::{Host, HostObject, SharedMap, V};

/// A `Values` that `Table` returned: the table's own map (shared, as Go's
/// is), with the methods. Only a chart's `.Values` map is marked itself
/// ([`SharedMap::mark_values_table`]); a table inside it is a plain map
/// when read as a field, a `Values` only as `Table`'s result.
#[derive(Debug)]
struct TableValues(SharedMap);

impl HostObject for TableValues {
    fn type_name(&self) -> &'static str {
        "chartutil.Values"
    }
    fn field(&self, name: &str) -> Option<V> {
        if is_method(name) {
            return call(&self.0, name, &[], usize::MAX).and_then(Result::ok);
        }
        // Helm renders with `missingkey=zero`: a missing key is nil.
        Some(self.0.get(name).unwrap_or(V::Nil))
    }
    fn call(&self, name: &str, args: &[V]) -> Option<Result<V, String>> {
        call(&self.0, name, args, usize::MAX).map(|r| {
            // `method_call` adds Go's `error calling NAME: `.
            r.map_err(|e| {
                e.strip_prefix(&format!("error calling {name}: "))
                    .map_or(e.clone(), str::to_string)
            })
        })
    }
    fn value(&self) -> V {
        V::Map(self.0.clone())
    }
    fn is_map(&self) -> bool {
        true
    }
    fn kind(&self) -> &'static str {
        "map"
    }
    fn boxed(&self) -> Option<V> {
        Some(V::Map(self.0.clone()))
    }
}

/// Whether `Values` has a method `name`.
pub(super) fn is_method(name: &str) -> bool {
    matches!(name, "YAML" | "AsMap" | "Table" | "PathValue" | "Encode")
}

/// Calls method `name` of the `Values` `m` with `args`; `None` when
/// `Values` has no such method (the name is then a key).
pub(super) fn call(
    m: &SharedMap,
    name: &str,
    args: &[V],
    room: usize,
) -> Option<Result<V, String>> {
    let want = match name {
        "YAML" | "AsMap" => 0,
        "Table" | "PathValue" | "Encode" => 1,
        _ => return None,
    };
    if args.len() != want {
        // text/template's `evalCall`.
        return Some(Err(format!(
            "wrong number of args for {name}: want {want} got {}",
            args.len()
        )));
    }
    Some(match name {
        // `yaml.Marshal(v)`: `toYaml` without its trimmed newline.
        "YAML" => super::funcs::call(
            "toYaml",
            vec![V::Map(m.clone())],
            room,
            super::FuncSet::Helm,
        )
        .map(|v| match v {
            V::Str(s) => V::Str(s + "\n"),
            other => other,
        })
        .map_err(|e| format!("error calling {name}: {e}")),
        // The map itself (a new one when empty), as a plain map.
        "AsMap" => Ok(V::Map(m.clone())),
        "Table" => match &args[0] {
            V::Str(path) => table(m, path).map_err(|e| format!("error calling Table: {e}")),
            other => Err(super::args::type_err("string", other)),
        },
        "PathValue" => match &args[0] {
            V::Str(path) => {
                path_value(m, path).map_err(|e| format!("error calling PathValue: {e}"))
            }
            other => Err(super::args::type_err("string", other)),
        },
        _ => Err(format!(
            "{name} needs an io.Writer, which a template cannot give"
        )),
    })
}

/// The map at the dotted `path`, or the first key that is no table.
fn walk(m: &SharedMap, path: &str) -> Result<SharedMap, String> {
    let mut cur = m.clone();
    for part in path.split('.') {
        cur = match cur.get(part) {
            Some(V::Map(next)) => next,
            _ => return Err(part.to_string()),
        };
    }
    Ok(cur)
}

fn table_map(m: &SharedMap, path: &str) -> Option<SharedMap> {
    walk(m, path).ok()
}

/// `Values.Table`: the table at the dotted `path` (`tableLookup` at each
/// step: a `map[string]interface{}`, else `"KEY" is not a table`).
fn table(m: &SharedMap, path: &str) -> Result<V, String> {
    let cur = walk(m, path).map_err(|k| format!("{} is not a table", super::go_quote(&k)))?;
    Ok(V::Host(Host(Arc::new(TableValues(cur)))))
}

/// `Values.PathValue`: the value at the dotted `path` that is not a table
/// (`pathValue`), else `"KEY" is not a value`.
fn path_value(m: &SharedMap, path: &str) -> Result<V, String> {
    if path.is_empty() {
        return Err("YAML path cannot be empty".into());
    }
    let (head, key) = match path.rsplit_once('.') {
        Some((h, k)) => (Some(h), k),
        None => (None, path),
    };
    let no_value = || format!("{} is not a value", super::go_quote(key));
    let t = match head {
        Some(h) => match table_map(m, h) {
            Some(t) => t,
            None => return Err(no_value()),
        },
        None => m.clone(),
    };
    match t.get(key) {
        Some(V::Map(_)) | None => Err(no_value()),
        Some(v) => Ok(v),
    }
}
