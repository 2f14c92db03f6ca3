//! Helm charts inside the repository, rendered with `helm template` when a
//! `helm` binary is available. Only `template` is ever run, offline, on a
//! copy of the chart taken from the tree: never `dependency update`, never a
//! post-renderer, never a chart from a Helm repository.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::{
    bounded, expand_lists, RenderContext, RenderError, RenderErrorKind, RenderedObject, SourceSpec,
};
use crate::manifest::Origin;
use crate::source::{path, EntryKind};

/// Renders a Helm source.
///
/// # Errors
/// No `helm` binary (a [`RenderErrorKind::ToolMissing`] error), missing
/// chart dependencies, or a failing template.
pub fn render(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
) -> Result<Vec<RenderedObject>, RenderError> {
    let Some(helm) = cx.options.helm.clone() else {
        return Err(RenderError {
            kind: RenderErrorKind::ToolMissing,
            message: format!(
                "`{}` is a Helm chart and no `helm` binary is on PATH: install helm to analyse it",
                super::display_path(&spec.path)
            ),
            file: None,
            line: None,
        });
    };
    let tmp = tempfile::tempdir()
        .map_err(|e| RenderError::content(format!("cannot create a temporary directory: {e}")))?;
    materialize(cx, &spec.path, tmp.path())?;
    let chart_dir = tmp.path().join(if spec.path.is_empty() {
        "."
    } else {
        &spec.path
    });
    check_dependencies(cx, spec)?;

    let opts = spec.helm.clone().unwrap_or(Value::Null);
    let release = opts
        .get("releaseName")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .unwrap_or(&spec.app_name)
        .to_string();
    if !valid_release_name(&release) {
        return Err(RenderError::content(format!(
            "`{release}` is not a valid Helm release name (lower-case letters, digits, `-` and `.`, at most 53 characters)"
        )));
    }
    let mut cmd = Command::new(helm);
    cmd.arg("template").arg("--include-crds");
    if !spec.namespace.is_empty() {
        cmd.arg(format!("--namespace={}", spec.namespace));
    }
    if let Some(files) = opts.get("valueFiles").and_then(Value::as_array) {
        for f in files.iter().filter_map(Value::as_str) {
            if f.starts_with('$') || f.contains("://") {
                return Err(RenderError::unsupported(format!(
                    "value file `{f}` comes from another source, which gitops-lint does not fetch"
                )));
            }
            let repo_path = path::join(&spec.path, f).ok_or_else(|| RenderError {
                kind: RenderErrorKind::OutsideRepo,
                message: format!("value file `{f}` leads outside the repository"),
                file: None,
                line: None,
            })?;
            let ignore_missing = opts
                .get("ignoreMissingValueFiles")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            match cx.kind_of(&repo_path)? {
                Some(EntryKind::File) => {}
                _ if ignore_missing => continue,
                _ => {
                    return Err(RenderError::content(format!(
                        "value file `{repo_path}` does not exist"
                    ))
                    .at(repo_path, None))
                }
            }
            let bytes = cx.read(&repo_path)?;
            let dest = tmp.path().join(&repo_path);
            write(&dest, &bytes)?;
            cmd.arg(values_flag(&dest));
        }
    }
    let mut extra = |name: &str, content: String| -> Result<(), RenderError> {
        let dest = tmp.path().join(format!(".gitops-lint-{name}.yaml"));
        write(&dest, content.as_bytes())?;
        cmd.arg(values_flag(&dest));
        Ok(())
    };
    // `valuesObject` replaces `values` when both are set (AC
    // `ApplicationSourceHelm.ValuesYAML`); they are never merged.
    if let Some(v) = opts.get("valuesObject").filter(|v| v.is_object()) {
        extra("values-object", v.to_string())?;
    } else if let Some(v) = opts.get("values").and_then(Value::as_str) {
        extra("values", v.to_string())?;
    }
    if let Some(params) = opts.get("parameters").and_then(Value::as_array) {
        for p in params {
            let name = p.get("name").and_then(Value::as_str).unwrap_or_default();
            let value = p.get("value").and_then(Value::as_str).unwrap_or_default();
            let flag = if p.get("forceString").and_then(Value::as_bool) == Some(true) {
                "--set-string"
            } else {
                "--set"
            };
            cmd.arg(format!("{flag}={name}={value}"));
        }
    }
    // Positional arguments after `--`: a release name or chart path can
    // never be read as a flag such as `--post-renderer`.
    cmd.arg("--").arg(&release).arg(&chart_dir);
    // Helm state, plugins included, lives in the temporary directory: no
    // plugin installed where gitops-lint runs takes part in the render.
    cmd.current_dir(tmp.path())
        .env("HELM_CACHE_HOME", tmp.path().join(".cache"))
        .env("HELM_CONFIG_HOME", tmp.path().join(".config"))
        .env("HELM_DATA_HOME", tmp.path().join(".data"))
        .env("HELM_PLUGINS", tmp.path().join(".plugins"));
    let out = match bounded::run(&mut cmd, bounded::TIMEOUT, bounded::MAX_OUTPUT) {
        Ok(out) => out,
        Err(e @ bounded::RunError::Spawn(_)) => {
            return Err(RenderError {
                kind: RenderErrorKind::ToolMissing,
                message: format!("helm: {e}"),
                file: None,
                line: None,
            })
        }
        Err(e) => {
            return Err(RenderError::content(format!(
                "helm template `{}`: {e}",
                super::display_path(&spec.path)
            )))
        }
    };
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first = err
            .lines()
            .find(|l| !l.trim().is_empty())
            .unwrap_or("helm template failed");
        return Err(RenderError::content(format!(
            "helm template `{}`: {first}",
            super::display_path(&spec.path)
        )));
    }
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    parse_output(&spec.path, &text)
}

/// `--values=FILE` as one argument (flag and value cannot come apart).
fn values_flag(dest: &Path) -> std::ffi::OsString {
    let mut flag = std::ffi::OsString::from("--values=");
    flag.push(dest.as_os_str());
    flag
}

/// Helm's release-name rule (DNS-1123 subdomain, at most 53 characters).
/// Checked before running helm so a name from the repository can never
/// reach it as anything but a name.
fn valid_release_name(name: &str) -> bool {
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
            && !l.starts_with('-')
            && !l.ends_with('-')
    };
    !name.is_empty() && name.len() <= 53 && name.split('.').all(label_ok)
}

/// Argo CD would run `helm dependency build`, which needs the network: a
/// chart whose dependencies are not vendored in `charts/` cannot be rendered.
fn check_dependencies(cx: &RenderContext<'_>, spec: &SourceSpec) -> Result<(), RenderError> {
    let chart_file = path::join(&spec.path, "Chart.yaml").unwrap_or_default();
    let Ok(docs) = cx.load_yaml(&chart_file) else {
        return Ok(());
    };
    let deps = docs
        .first()
        .and_then(|d| d.value.get("dependencies"))
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if deps.is_empty() {
        return Ok(());
    }
    let charts_dir = path::join(&spec.path, "charts").unwrap_or_default();
    let vendored: Vec<String> = cx
        .list(&charts_dir)
        .map(|v| v.into_iter().map(|e| e.name).collect())
        .unwrap_or_default();
    for d in deps {
        let name = d.get("name").and_then(Value::as_str).unwrap_or_default();
        let repo = d
            .get("repository")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if repo.starts_with("file://") {
            continue;
        }
        if !vendored
            .iter()
            .any(|v| v == name || v.starts_with(&format!("{name}-")))
        {
            return Err(RenderError::unsupported(format!(
                "chart dependency `{name}` is not vendored in `{charts_dir}`: rendering it would need the network"
            )));
        }
    }
    Ok(())
}

fn write(dest: &Path, bytes: &[u8]) -> Result<(), RenderError> {
    if let Some(p) = dest.parent() {
        std::fs::create_dir_all(p)
            .map_err(|e| RenderError::content(format!("cannot write {}: {e}", p.display())))?;
    }
    std::fs::write(dest, bytes)
        .map_err(|e| RenderError::content(format!("cannot write {}: {e}", dest.display())))
}

/// Copies a directory of the tree into `root` at the same relative path.
fn materialize(cx: &RenderContext<'_>, dir: &str, root: &Path) -> Result<(), RenderError> {
    for e in cx.list(dir)? {
        let full = if dir.is_empty() {
            e.name.clone()
        } else {
            format!("{dir}/{}", e.name)
        };
        let kind = if e.kind == EntryKind::Symlink {
            cx.kind_of(&full)?.unwrap_or(EntryKind::File)
        } else {
            e.kind
        };
        match kind {
            EntryKind::Dir => materialize(cx, &full, root)?,
            EntryKind::File => {
                let bytes = cx.read(&full)?;
                write(&root.join(&full), &bytes)?;
            }
            EntryKind::Symlink | EntryKind::Submodule => {}
        }
    }
    Ok(())
}

/// Splits `helm template` output, mapping `# Source: chart/templates/x.yaml`
/// back to the repository file.
fn parse_output(chart_path: &str, text: &str) -> Result<Vec<RenderedObject>, RenderError> {
    let mut out = Vec::new();
    for chunk in text.split("\n---") {
        let source = chunk
            .lines()
            .find_map(|l| l.strip_prefix("# Source: "))
            .map(|s| s.split_once('/').map_or(s, |(_, rest)| rest).to_string());
        let docs = crate::yaml::load_all(chunk)
            .map_err(|e| RenderError::content(format!("helm output is not valid YAML: {e}")))?;
        for d in docs {
            if d.value.is_null() {
                continue;
            }
            let mut items = Vec::new();
            expand_lists(d.value, &mut items);
            for value in items {
                let file = source.as_ref().and_then(|s| path::join(chart_path, s));
                out.push(RenderedObject {
                    value,
                    origin: Origin {
                        file,
                        line: None,
                        doc_index: None,
                    },
                });
            }
        }
    }
    Ok(out)
}
