//! `values.schema.json` files of a chart and its dependencies, checked
//! before `helm template` runs.

use serde_json::Value;

use super::dependencies;
use crate::render::{RenderContext, RenderError};
use crate::source::{path, EntryKind, Tree as _};

/// Refuses a chart whose `values.schema.json` (its own or a subchart's,
/// unpacked or packed in `charts/`) names anything but a place inside
/// itself: helm would fetch an `http(s)://` reference and read a `file://`
/// or relative one from the machine's file system.
pub(super) fn check_schemas(cx: &RenderContext<'_>, chart: &str) -> Result<(), RenderError> {
    check_schemas_in(cx, chart, "", 0)
}

/// Most archives nested in one another that are looked into (a gzip file
/// can contain itself).
const MAX_ARCHIVE_NESTING: usize = 8;

/// [`check_schemas`] for the chart at `chart` of `cx`'s tree, which is the
/// archive `within` (empty: the repository) nested `depth` deep.
fn check_schemas_in(
    cx: &RenderContext<'_>,
    chart: &str,
    within: &str,
    depth: usize,
) -> Result<(), RenderError> {
    let shown = |p: &str| {
        if within.is_empty() {
            p.to_string()
        } else {
            format!("{within}: {p}")
        }
    };
    let mut stack = vec![chart.to_string()];
    while let Some(dir) = stack.pop() {
        let schema = path::join(&dir, "values.schema.json").unwrap_or_default();
        if cx.kind_of(&schema)? == Some(EntryKind::File) {
            let bytes = cx.read(&schema)?;
            // helm reports a schema that is not JSON itself.
            if let Ok(v) = serde_json::from_slice::<Value>(&bytes) {
                if let Some(r) = external_ref(&v) {
                    let e = RenderError::unsupported(format!(
                        "`{}` refers to `{r}` outside itself, which helm would fetch or read from the machine: only `#…` references are analysed",
                        shown(&schema)
                    ));
                    return Err(if within.is_empty() {
                        e.at(schema, None)
                    } else {
                        e
                    });
                }
            }
        }
        let sub = path::join(&dir, "charts").unwrap_or_default();
        if cx.kind_of(&sub)? != Some(EntryKind::Dir) {
            continue;
        }
        for e in cx.list(&sub)? {
            let full = path::join(&sub, &e.name).unwrap_or_default();
            match e.kind {
                EntryKind::Dir => stack.push(full),
                EntryKind::File if e.name.ends_with(".tgz") => {
                    check_packed_schemas(cx, &full, &shown(&full), depth)?;
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// [`check_schemas`] for each chart of a dependency fetched from a
/// repository, as for one packed in `charts/`.
pub(super) fn check_fetched_schemas(
    cx: &RenderContext<'_>,
    dep: &dependencies::FetchedChart,
) -> Result<(), RenderError> {
    let shown = format!("{}-{}.tgz", dep.name, dep.version);
    let archive = crate::render::chart_cache::unpack_archive(&dep.bytes, &shown)
        .map_err(|m| RenderError::content(format!("`{shown}`: {m}")))?;
    let inner = RenderContext::unrecorded(&archive, cx.cache, cx.options);
    for e in archive
        .list_raw("")
        .map_err(|e| RenderError::from_source(&e))?
    {
        if e.kind == EntryKind::Dir {
            check_schemas_in(&inner, &e.name, &shown, 1)?;
        }
    }
    Ok(())
}

/// [`check_schemas`] for each chart of the packed subchart at `file`.
fn check_packed_schemas(
    cx: &RenderContext<'_>,
    file: &str,
    shown: &str,
    depth: usize,
) -> Result<(), RenderError> {
    if depth >= MAX_ARCHIVE_NESTING {
        return Err(RenderError::content(format!(
            "`{shown}` nests chart archives more than {MAX_ARCHIVE_NESTING} deep"
        )));
    }
    let bytes = cx.read(file)?;
    let archive = crate::render::chart_cache::unpack_archive(&bytes, shown)
        .map_err(|m| RenderError::content(format!("`{shown}`: {m}")))?;
    let inner = RenderContext::unrecorded(&archive, cx.cache, cx.options);
    for e in archive
        .list_raw("")
        .map_err(|e| RenderError::from_source(&e))?
    {
        if e.kind == EntryKind::Dir {
            check_schemas_in(&inner, &e.name, shown, depth + 1)?;
        }
    }
    Ok(())
}

/// The first reference in a JSON schema that is not a fragment of the
/// schema itself.
pub(super) fn external_ref(v: &Value) -> Option<String> {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                if matches!(k.as_str(), "$ref" | "$dynamicRef" | "$recursiveRef") {
                    if let Some(s) = x.as_str() {
                        // A `urn:` is loaded from nowhere: helm v3.19+
                        // reads an unresolved URN as the schema `true`
                        // (`urnLoader`, `pkg/chartutil/jsonschema.go` at
                        // v3.19.4).
                        if !s.starts_with('#') && !s.starts_with("urn:") {
                            return Some(s.to_string());
                        }
                    }
                }
                if let Some(r) = external_ref(x) {
                    return Some(r);
                }
            }
            None
        }
        Value::Array(a) => a.iter().find_map(external_ref),
        _ => None,
    }
}
