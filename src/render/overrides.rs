//! Parameter override files in the app path: `.argocd-source.yaml`, then
//! `.argocd-source-<appName>.yaml`, each merged over the Application's
//! source as a JSON merge patch (RFC 7386) before its type is detected, so
//! they apply to every source type (AC `reposerver/repository/repository.go`
//! `mergeSourceParameters`, called by `GetAppSourceType` from
//! `GenerateManifests`). Afterwards `chart`, `path`, `repoURL` and
//! `targetRevision` are put back: only the tool options can be overridden.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{RenderContext, RenderError, SourceSpec};
use crate::source::{path, EntryKind};
use goyaml::Dialect;

/// `.argocd-source.yaml`: applies to every app rendering the path.
pub(crate) const REPO_SOURCE_FILE: &str = ".argocd-source.yaml";

/// The override files Argo CD reads for `spec`, in merge order.
#[must_use]
pub(crate) fn files(spec: &SourceSpec) -> Vec<String> {
    let mut names = vec![REPO_SOURCE_FILE.to_string()];
    if !spec.app_name.is_empty() {
        names.push(format!(".argocd-source-{}.yaml", spec.app_name));
    }
    names
        .iter()
        .filter_map(|n| path::join(&spec.path, n))
        .collect()
}

/// The tool option blocks a merge patch may change.
const TOOL_FIELDS: [&str; 4] = ["helm", "kustomize", "directory", "plugin"];

/// `spec` with the override files of its path merged in (unchanged, and
/// not copied, when there are none).
///
/// # Errors
/// An override file that is not valid YAML or not a mapping.
pub(crate) fn apply<'s>(
    cx: &RenderContext<'_>,
    spec: &'s SourceSpec,
) -> Result<Cow<'s, SourceSpec>, RenderError> {
    let mut merged: Option<Value> = None;
    for file in files(spec) {
        // A directory of that name is skipped, as Argo CD does.
        if cx.kind_of(&file)? != Some(EntryKind::File) {
            continue;
        }
        let docs = cx.load_yaml_shared_as(&file, Dialect::SigsYaml)?;
        // sigs.k8s.io/yaml reads the first document only.
        let patch = docs.first().map_or(&Value::Null, |d| &d.value);
        match patch {
            Value::Null => continue,
            Value::Object(_) => {}
            _ => {
                return Err(RenderError::content(format!(
                    "`{file}`: a parameter override file must be a mapping of source fields"
                ))
                .at(file, None))
            }
        }
        let target = merged.get_or_insert_with(|| tool_blocks(spec));
        json_patch::merge(target, patch);
    }
    let Some(merged) = merged else {
        return Ok(Cow::Borrowed(spec));
    };
    let field = |k: &str| merged.get(k).filter(|v| !v.is_null()).cloned();
    Ok(Cow::Owned(SourceSpec {
        helm: field("helm"),
        kustomize: field("kustomize"),
        directory: field("directory"),
        plugin: field("plugin"),
        ..spec.clone()
    }))
}

fn tool_blocks(spec: &SourceSpec) -> Value {
    let mut m = Map::new();
    for (k, v) in
        TOOL_FIELDS
            .iter()
            .zip([&spec.helm, &spec.kustomize, &spec.directory, &spec.plugin])
    {
        if let Some(v) = v {
            m.insert((*k).to_string(), v.clone());
        }
    }
    Value::Object(m)
}
