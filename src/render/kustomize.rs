//! Native Kustomize rendering.

use super::{RenderContext, RenderError, RenderedObject, SourceSpec};

/// Renders the kustomization at `spec.path`.
///
/// # Errors
/// Always, until the native renderer lands: a Kustomize app is reported as
/// not rendered rather than as empty.
pub fn render(
    _cx: &RenderContext<'_>,
    spec: &SourceSpec,
) -> Result<Vec<RenderedObject>, RenderError> {
    Err(RenderError::unsupported(format!(
        "`{}` is a Kustomize source, which this build does not render yet",
        super::display_path(&spec.path)
    )))
}
