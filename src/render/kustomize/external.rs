//! The escape hatch: render with an external `kustomize` or `kubectl`
//! binary. The kustomization's directory tree (and every kustomization
//! directory it reaches) is copied from the source tree into a temporary
//! directory, so the binary never reads outside the repository.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::load;
use super::{argocd, content, footprint, KResult};
use crate::manifest::Origin;
use crate::render::materialize::{copy_dir, Dangling};
use crate::render::{RenderContext, RenderError, RenderErrorKind, RenderedObject, SourceSpec};

/// Renders `spec` with the external binary `bin`.
///
/// # Errors
/// Copy failures, a failing binary, unparseable output.
pub(crate) fn render(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
    bin: &Path,
) -> KResult<Vec<RenderedObject>> {
    let mut root = load::load(cx, &spec.path)?;
    // The directories are collected after Argo CD's options are applied:
    // `kustomize.components` names directories too.
    let mut edited = root.clone();
    argocd::apply(&mut edited, spec)?;
    let dirs =
        footprint::footprint(cx, &edited, &crate::render::FootprintMemo::default())?.subtrees;
    // The external binary would run helm itself, outside the hardened runner.
    if super::argocd::helm_flags(spec).enabled {
        for d in &dirs {
            if load::load(cx, d).is_ok_and(|k| super::helm_charts::has_charts(&k)) {
                return Err(crate::render::RenderError::unsupported(format!(
                    "`{d}` has `helmCharts`, which gitops-lint inflates only with its native Kustomize renderer (without --kustomize-binary)"
                )));
            }
        }
    }
    let tmp = tempfile::tempdir()
        .map_err(|e| content(format!("cannot create a temporary directory: {e}")))?;
    for d in &dirs {
        copy_dir(cx, d, tmp.path(), Dangling::Skip)?;
    }
    if spec.kustomize.is_some() {
        argocd::apply(&mut root, spec)?;
        // JSON is YAML: write the edited kustomization back as JSON.
        let text = serde_json::to_string_pretty(&Value::Object(root.k.clone()))
            .map_err(|e| content(e.to_string()))?;
        std::fs::write(tmp.path().join(&root.file), text)
            .map_err(|e| content(format!("cannot write kustomization: {e}")))?;
    }
    let target = tmp.path().join(&spec.path);
    let is_kubectl = bin
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("kubectl"));
    let mut cmd = Command::new(bin);
    if is_kubectl {
        cmd.arg("kustomize");
    } else {
        cmd.arg("build");
    }
    let out = cmd.arg(&target).output().map_err(|e| RenderError {
        kind: RenderErrorKind::ToolMissing,
        message: format!("cannot run `{}`: {e}", bin.display()),
        file: None,
        line: None,
    })?;
    if !out.status.success() {
        let err =
            String::from_utf8_lossy(&out.stderr).replace(&tmp.path().display().to_string(), "");
        return Err(
            content(format!("`{}` failed: {}", bin.display(), err.trim()))
                .at(root.file.clone(), None),
        );
    }
    let text =
        String::from_utf8(out.stdout).map_err(|_| content("kustomize output is not UTF-8"))?;
    let docs = goyaml::load_all(&text)
        .map_err(|e| content(format!("cannot parse kustomize output: {e}")))?;
    Ok(docs
        .into_iter()
        .filter(|d| !d.value.is_null())
        .map(|d| RenderedObject {
            value: d.into_value(),
            origin: Origin {
                file: None,
                line: None,
                doc_index: None,
            },
        })
        .collect())
}
