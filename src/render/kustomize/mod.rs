//! Native Kustomize rendering, matching `kubectl kustomize` (Kustomize
//! v5.5.0): loads a kustomization tree through the render context, runs
//! Kustomize's pipeline in its order (resources, generators, components,
//! the fixed transformer order, then hashing, name references and vars at
//! the top), and returns the objects in kubectl's output order.
//!
//! Argo CD's `spec.source.kustomize` options are applied as edits of the
//! root kustomization, the way Argo CD's `kustomize edit` calls do. What
//! cannot be evaluated offline (remote bases, Helm charts, plugins) is an
//! `Unsupported` error naming the feature, never a partial render.

mod argocd;
mod build;
mod external;
mod fieldspec;
mod generators;
mod gojson;
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

/// What a build of `spec` reads (see [`load::footprint`]), Argo CD's
/// `kustomize.components` included.
///
/// # Errors
/// A kustomization that does not load.
pub fn footprint(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
    memo: &super::FootprintMemo,
) -> KResult<super::Footprint> {
    let mut root = load::load(cx, &spec.path)?;
    argocd::apply(&mut root, spec)?;
    load::footprint(cx, &root, memo)
}
