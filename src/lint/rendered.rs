//! `gitops-lint render` and `render-app`: the manifests of one path or one
//! app, as a YAML stream.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::argocd::{self, AppStatus, Inventory};
use crate::config::CONFIG_FILE;
use crate::render::ParseCache;
use crate::source::{self, GitRepo};

use super::{
    load_config, open_repo, tools_outside, tree_of, with_chart_cache, LintError, Options, Revision,
    Session,
};

/// `gitops-lint render`: the manifests Argo CD would render at `path`, as a YAML stream.
///
/// # Errors
/// Unusable requests and render failures.
pub(crate) fn render(
    rev: &Revision,
    path: &str,
    namespace: &str,
    opts: &Options,
) -> Result<String, LintError> {
    let repo = open_repo(opts)?;
    let (_, tree) = tree_of(&repo, rev)?;
    let path = resolve_user_path(&repo, path)?;
    let cache = ParseCache::default();
    // A bare directory has no Application: Argo CD's Kustomize build
    // options come from the configuration only, and so do the Helm
    // renderer, the target Argo CD's helm and the chart cache, as for an
    // app.
    let config = load_config(opts.config.as_deref(), tree.as_ref())?;
    let tools = with_chart_cache(&repo, tools_outside(&repo, &opts.render), &config);
    let cx = crate::render::RenderContext::new(tree.as_ref(), &cache, &tools);
    let spec = crate::render::SourceSpec {
        path,
        namespace: namespace.to_string(),
        app_name: "render".into(),
        kustomize_build_options: config.kustomize_build_options.unwrap_or_default(),
        plugins: config.plugins,
        ..Default::default()
    };
    let rendered = crate::render::render(&cx, &spec, &crate::manifest::Scopes::default())
        .map_err(|e| LintError::Other(format!("cannot render: {}", e.message)))?;
    Ok(yaml_stream(rendered.manifests.iter()))
}

/// `gitops-lint render --app NAME`: the manifests Argo CD would render for
/// one Application of the inventory at `rev`, as a YAML stream in render
/// order (every source, merged as the app is analysed: an object rendered
/// twice appears once, as the last source renders it). `name` is the name
/// the reports show (`name`, or `namespace/name` outside `argocd`), the
/// bare name when it is unique, or `namespace/name`.
///
/// An app with sources this run cannot read is printed as far as the
/// others render it, with those sources in [`RenderedApp::left_out`].
///
/// # Errors
/// Unusable requests, an unknown or ambiguous name (with the close names),
/// an app that fails to render (the render error) or whose sources are not
/// in this repository.
pub fn render_app(rev: &Revision, name: &str, opts: &Options) -> Result<RenderedApp, LintError> {
    let repo = open_repo(opts)?;
    let (_, tree) = tree_of(&repo, rev)?;
    let config = load_config(opts.config.as_deref(), tree.as_ref())?;
    let mut session = Session::new(&repo, &config, opts);
    opts.progress.step("rendering");
    let inv = session.single_inventory(|s| {
        Ok(s.with_input(Arc::clone(&tree), &config, None, None, argocd::build))
    })?;
    if let Some(why) = &inv.over_limit {
        return Err(LintError::Other(format!(
            "revision {}: {why}",
            inv.revision
        )));
    }
    let app = find_app(&inv, name)?;
    let shown = app.display_name();
    let mut left_out = Vec::new();
    match &app.status {
        AppStatus::Rendered => {}
        AppStatus::Partial(sources) => {
            left_out = sources
                .iter()
                .map(|l| match &l.why {
                    Some(why) => format!("{}: {why}", l.source),
                    None => l.source.clone(),
                })
                .collect();
        }
        AppStatus::Unrendered(e) => {
            return Err(LintError::Other(format!(
                "cannot render app `{shown}`: {}",
                e.message
            )))
        }
        AppStatus::External(why) => {
            // A git source of another URL may be this repository under
            // another name; a Helm repository chart never is.
            let hint = if app.spec.sources.iter().any(|s| s.chart.is_none()) {
                format!("; if its repoURL names this repository, list it under `repoUrls:` in {CONFIG_FILE}")
            } else {
                String::new()
            };
            return Err(LintError::Other(format!(
                "app `{shown}` does not render from this repository: its sources are {why}{hint}"
            )));
        }
        AppStatus::Unchanged => {
            return Err(LintError::Other(format!("app `{shown}` was not rendered")))
        }
    }
    Ok(RenderedApp {
        yaml: yaml_stream(app.resources.iter()),
        left_out,
    })
}

/// What `render --app` prints.
#[derive(Debug)]
pub struct RenderedApp {
    /// The objects of the sources rendered, as a YAML stream.
    pub yaml: String,
    /// The sources this run cannot read, each with why: what they render
    /// is missing from `yaml`. Empty when every source was rendered.
    pub left_out: Vec<String>,
}

/// The app of `inv` that `name` designates: its display name, its
/// `namespace/name` key, or its bare name when no other app has it.
pub(super) fn find_app<'i>(inv: &'i Inventory, name: &str) -> Result<&'i argocd::App, LintError> {
    let apps: Vec<&argocd::App> = inv.apps.values().collect();
    if let Some(app) = apps
        .iter()
        .find(|a| a.display_name() == name || a.key == name)
    {
        return Ok(app);
    }
    let by_name: Vec<&&argocd::App> = apps.iter().filter(|a| a.spec.name == name).collect();
    match by_name.as_slice() {
        [one] => return Ok(one),
        [] => {}
        many => {
            let keys: Vec<String> = many.iter().map(|a| format!("`{}`", a.key)).collect();
            return Err(LintError::Usage(format!(
                "app name `{name}` is ambiguous: {} have it; give one as `namespace/name`",
                keys.join(", ")
            )));
        }
    }
    let known: Vec<String> = apps.iter().map(|a| a.display_name()).collect();
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    let close = crate::config::close_names(name, &known);
    let hint = if close.is_empty() {
        format!(
            "{} app(s) at revision {}; `gitops-lint check` lists them",
            known.len(),
            inv.revision
        )
    } else {
        let quoted: Vec<String> = close.iter().map(|k| format!("`{k}`")).collect();
        format!("did you mean {}?", quoted.join(", "))
    };
    Err(LintError::Usage(format!("no app named `{name}` ({hint})")))
}

/// Objects as one YAML stream, each document opened by `---`.
/// The manifests as a YAML stream. A manifest with generated fields (see
/// `render::generated`) is headed by a comment naming them: what is shown
/// there is one draw of many, and no comparison of revisions reads it.
pub(super) fn yaml_stream<'m>(
    manifests: impl Iterator<Item = &'m crate::manifest::Manifest>,
) -> String {
    let mut out = String::new();
    for m in manifests {
        out.push_str("---\n");
        if !m.generated.is_empty() {
            out.push_str("# gitops-lint: drawn anew at every render (random values or the clock), never compared: ");
            out.push_str(&m.generated.join(", "));
            out.push('\n');
        }
        out.push_str(&goyaml::emit::to_yaml(&m.value));
    }
    out
}

/// Turns a path given on the command line (relative to the current
/// directory) into a repository-relative path.
pub(super) fn resolve_user_path(repo: &GitRepo, p: &str) -> Result<String, LintError> {
    let cwd = std::env::current_dir().map_err(|e| LintError::Other(e.to_string()))?;
    let abs = cwd.join(p);
    let root = repo.workdir().map(Path::to_path_buf).unwrap_or_default();
    let root = root.canonicalize().unwrap_or(root);
    let abs_norm = normalize_abs(&abs);
    match abs_norm.strip_prefix(&root) {
        Ok(rel) => Ok(rel.to_string_lossy().replace('\\', "/")),
        Err(_) => source::path::normalize(p)
            .ok_or_else(|| LintError::Usage(format!("`{p}` is outside the repository"))),
    }
}

pub(super) fn normalize_abs(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
