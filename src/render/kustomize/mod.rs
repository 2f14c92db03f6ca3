//! Native Kustomize rendering, matching `kubectl kustomize` (Kustomize
//! v5.5.0): loads a kustomization tree through the render context, runs
//! Kustomize's pipeline in its order (resources, generators, components,
//! the fixed transformer order, then hashing, name references and vars at
//! the top), and returns the objects in kubectl's output order.
//!
//! Argo CD's `spec.source.kustomize` options are applied as edits of the
//! root kustomization, the way Argo CD's `kustomize edit` calls do. What
//! cannot be evaluated offline (remote bases, charts from Helm repositories,
//! plugins) is an
//! `Unsupported` error naming the feature, never a partial render.

mod accumulator;
mod argocd;
mod build;
mod external;
mod fieldpath;
mod fieldspec;
mod footprint;
mod generators;
pub(crate) mod gojson;
pub(crate) mod helm_charts;
mod image_name;
mod load;
mod nameref;
mod patch;
mod replacements;
mod resource;
mod selector;
mod smp;
mod sort;
mod transform;
mod vars;

use super::{RenderContext, RenderError, RenderedObject, SourceSpec};

/// Result type of this module.
pub(crate) type KResult<T> = Result<T, RenderError>;

/// A content error (the kustomization is at fault).
pub(crate) fn content(msg: impl Into<String>) -> RenderError {
    RenderError::content(msg)
}

/// Most nodes (see [`nodes`]) one resource may hold after a patch or a
/// replacement: far beyond any object the API server stores (etcd refuses
/// requests over 1.5 MiB), and small enough that a JSON patch `copy` or a
/// replacement doubling a document is stopped after a few doublings.
pub(crate) const MAX_RESOURCE_NODES: usize = 1_000_000;

/// Most nodes patches and replacements may be charged in one render: each
/// application of a strategic-merge patch or JSON `add`/`replace` is charged
/// the nodes of the value it brings, each `copy` the size of the resource
/// it grows, each replacement its value once per field it sets. This bounds
/// what they can add to a build as a whole (a 100,000-node patch applied to
/// every one of 50,000 resources included), and the time spent checking.
pub(crate) const MAX_PATCH_NODES: usize = 4_000_000;

/// Counts `v`'s nodes, a string counting one more per 256 bytes (as the YAML
/// loader's alias budget does), stopping once past `cap`.
pub(crate) fn nodes(v: &serde_json::Value, cap: usize) -> usize {
    fn walk(v: &serde_json::Value, n: &mut usize, cap: usize) {
        if *n > cap {
            return;
        }
        *n += 1;
        match v {
            serde_json::Value::String(s) => *n += s.len() / 256,
            serde_json::Value::Array(a) => a.iter().for_each(|e| walk(e, n, cap)),
            serde_json::Value::Object(o) => o.iter().for_each(|(k, e)| {
                *n += k.len() / 256;
                walk(e, n, cap);
            }),
            _ => {}
        }
    }
    let mut n = 0;
    walk(v, &mut n, cap);
    n
}

/// Charges `n` nodes to this render's patch budget ([`MAX_PATCH_NODES`]).
pub(crate) fn charge_nodes(cx: &RenderContext<'_>, n: usize) -> KResult<()> {
    use std::sync::atomic::Ordering;
    let before = cx.patch_nodes.fetch_add(n, Ordering::Relaxed);
    if before.saturating_add(n) > MAX_PATCH_NODES {
        return Err(content(format!(
            "patches and replacements in this build add or copy more than {MAX_PATCH_NODES} nodes; gitops-lint stops there"
        )));
    }
    Ok(())
}

/// Refuses a resource that would grow to `n` nodes, past
/// [`MAX_RESOURCE_NODES`], charging the count to the render's patch budget.
/// Callers check before they grow the resource, so the refused document is
/// never built.
pub(crate) fn check_grown_size(cx: &RenderContext<'_>, n: usize, what: &str) -> KResult<()> {
    charge_nodes(cx, n)?;
    if n > MAX_RESOURCE_NODES {
        return Err(content(format!(
            "{what} grows a resource past {MAX_RESOURCE_NODES} nodes; gitops-lint stops there"
        )));
    }
    Ok(())
}

/// Renders the kustomization at `spec.path`.
///
/// # Errors
/// Any Kustomize error, unsupported features, and reads outside the
/// repository.
pub fn render(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
) -> Result<Vec<RenderedObject>, RenderError> {
    if let Some(bin) = &cx.options.external_kustomize {
        return external::render(cx, spec, bin);
    }
    build::build(cx, spec)
}

/// What a build of `spec` reads (see `footprint::footprint`), Argo CD's
/// `kustomize.components` included.
///
/// # Errors
/// A kustomization that does not load.
pub(crate) fn footprint(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
    memo: &super::FootprintMemo,
) -> KResult<super::Footprint> {
    let mut root = load::load(cx, &spec.path)?;
    argocd::apply(&mut root, spec)?;
    footprint::footprint(cx, &root, memo)
}
