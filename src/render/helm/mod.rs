//! Helm charts inside the repository, rendered with `helm template` the way
//! Argo CD's repo-server runs it, when a `helm` binary is available. Only
//! `template` is ever run, offline, on a copy of the chart and its value
//! files taken from the tree: never `dependency build` or `update` (the
//! build Argo CD runs for `file://` dependencies is done natively, see
//! `dependencies`), never a post-renderer, never a pull from a Helm
//! repository (such charts come from a chart cache filled outside
//! gitops-lint, see [`super::chart_cache`]).
//!
//! The command line follows argo-cd `reposerver/repository/repository.go`
//! `helmTemplate` and `util/helm/cmd.go` `(*Cmd).template`:
//! `helm template . --name-template <release> [--namespace <ns>]
//! [--kube-version <v>] [--set …] [--set-string …] [--set-file …]
//! [--values …] [--values <values/valuesObject>] [--api-versions …]
//! [--include-crds] [--skip-schema-validation] [--skip-tests]`, run in the
//! chart directory. Value files are resolved as `getResolvedValueFiles`
//! does: `$<ref>/path` from a multi-source `ref:` source's repository root,
//! a relative path from the chart directory, an absolute path from the
//! repository root (`util/io/path` `ResolveValueFilePathOrUrl`), glob
//! patterns expanded in lexical order with explicitly listed files kept at
//! their own position, duplicates dropped.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod dependencies;
pub(crate) mod native;
mod options;
mod schemas;
mod value_files;

pub(crate) use options::envsubst;
use options::{clean_set_parameter, Options};
use schemas::{check_fetched_schemas, check_schemas};
use value_files::{glob_base, is_glob, locate, resolve_value_files, Located};

use super::materialize::{copy_dir, Dangling};
use super::{
    bounded, expand_lists, Footprint, HelmRenderer, RefTarget, RenderContext, RenderError,
    RenderErrorKind, RenderedObject, SourceSpec,
};
use crate::manifest::Origin;
use crate::source::path;

/// Renders a Helm source.
///
/// # Errors
/// No `helm` binary (a [`RenderErrorKind::ToolMissing`] error), missing
/// chart dependencies, an external schema reference, value files that
/// cannot be read offline, or a failing template.
pub(crate) fn render(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
) -> Result<Vec<RenderedObject>, RenderError> {
    let opts = Options::parse(spec).map_err(|mut e| {
        if e.message.starts_with("release name \"") {
            if let Some(name) = e.message.strip_prefix("release name ").and_then(|r| {
                let end = r.find("\": invalid release name")?;
                serde_json::from_str::<String>(&r[..=end]).ok()
            }) {
                e.message = invalid_release_name_in(cx, &name);
            }
        }
        e
    })?;
    let build = dependencies::plan(cx, &spec.path)?;
    // With `--skip-schema-validation` helm never reads a schema, so none
    // can make it fetch or read anything (AC `util/helm/cmd.go` `template`
    // passes the flag for `skipSchemaValidation`).
    if !opts.skip_schema_validation {
        check_schemas(cx, &spec.path)?;
        for dep in build.iter().flat_map(|b| &b.charts) {
            check_schemas(cx, &dep.dir)?;
        }
        for dep in build.iter().flat_map(|b| &b.fetched) {
            check_fetched_schemas(cx, dep)?;
        }
    }
    let value_files = resolve_value_files(cx, spec, &opts)?;
    let file_params = opts
        .file_parameters
        .iter()
        .map(|(name, p)| Ok((name.clone(), locate(spec, p)?)))
        .collect::<Result<Vec<_>, RenderError>>()?;

    if cx.options.effective_helm_renderer() == HelmRenderer::Native {
        match render_native(cx, spec, &opts, build.as_ref(), &value_files, &file_params) {
            Err(e) if native::is_not_supported(&e) && cx.options.helm_fallback() => {}
            rendered => return rendered,
        }
    }

    // The working directory holds a copy of the chart and of the files the
    // command line names, nothing else: helm can name nothing outside it.
    let tmp = tempfile::tempdir()
        .map_err(|e| RenderError::content(format!("cannot create a temporary directory: {e}")))?;
    let work = Workspace {
        root: tmp.path().to_path_buf(),
    };
    copy_dir(cx, &spec.path, &work.repo(), Dangling::Fail)?;
    let chart_dir = work.repo().join(&spec.path);
    let mut sources = Vec::new();
    if let Some(build) = &build {
        dependency_build(cx, build, &chart_dir)?;
        for dep in &build.charts {
            let shown = dep.alias.as_deref().unwrap_or(&dep.name);
            sources.push((format!("charts/{shown}/"), dep.dir.clone()));
        }
    }

    let placed_params = file_params
        .iter()
        .map(|(name, loc)| Ok((name, work.place(cx, spec, loc)?)))
        .collect::<Result<Vec<_>, RenderError>>()?;
    let placed_values = value_files
        .iter()
        .map(|loc| work.place(cx, spec, loc))
        .collect::<Result<Vec<_>, RenderError>>()?;
    // Everything the render reads (chart, dependencies, value and parameter
    // files) is read above, even without helm: a diff then knows whether
    // the change touched an app it cannot render, and says so.
    let Some(helm) = cx.options.helm.clone() else {
        return Err(RenderError {
            kind: RenderErrorKind::ToolMissing,
            message: format!(
                "`{}` is a Helm chart and no `helm` binary is on PATH: install helm (v3.17.1, the one Argo CD 3.0 ships) to analyse it",
                super::display_path(&spec.path)
            ),
            file: None,
            line: None,
        });
    };
    let mut cmd = Command::new(helm);
    cmd.arg("template")
        .arg(".")
        .arg(format!("--name-template={}", opts.release));
    if !opts.namespace.is_empty() {
        cmd.arg(format!("--namespace={}", opts.namespace));
    }
    if let Some(v) = &opts.kube_version {
        cmd.arg(format!("--kube-version={v}"));
    }
    for (flag, params) in [("--set", &opts.set), ("--set-string", &opts.set_string)] {
        for (name, value) in params {
            cmd.arg(format!(
                "{flag}={name}={}",
                clean_set_parameter(&envsubst(value, &spec.env))
            ));
        }
    }
    for (name, dest) in &placed_params {
        let mut arg = OsString::from(format!("--set-file={name}="));
        arg.push(clean_set_parameter(&dest.to_string_lossy()));
        cmd.arg(arg);
    }
    for dest in &placed_values {
        cmd.arg(values_flag(dest));
    }
    if let Some(extra) = &opts.extra_values {
        let dest = tmp.path().join("extra-values.yaml");
        write(&dest, extra.as_bytes())?;
        cmd.arg(values_flag(&dest));
    }
    for v in &opts.api_versions {
        cmd.arg(format!("--api-versions={v}"));
    }
    if !opts.skip_crds {
        cmd.arg("--include-crds");
    }
    if opts.skip_schema_validation {
        cmd.arg("--skip-schema-validation");
    }
    if opts.skip_tests {
        cmd.arg("--skip-tests");
    }
    harden(&mut cmd, tmp.path());
    cmd.current_dir(&chart_dir);
    let text = run_template(cx, &mut cmd, &spec.path, &work)?;
    if native::names_generators(cx, &spec.path, build.as_ref()) {
        cx.mark_generated();
    }
    parse_output(&spec.path, &sources, &text)
}

/// [`render`] with the native renderer: the same command line, its files
/// read from the trees instead of copied to a workspace.
fn render_native(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
    opts: &Options,
    build: Option<&dependencies::Build>,
    value_files: &[Located],
    file_params: &[(String, Located)],
) -> Result<Vec<RenderedObject>, RenderError> {
    let mut values = Vec::new();
    for loc in value_files {
        values.push((shown_path(loc), read_located(cx, loc)?));
    }
    if let Some(extra) = &opts.extra_values {
        values.push((
            "values.yaml of the Application".to_string(),
            std::sync::Arc::from(extra.as_bytes()),
        ));
    }
    let set_args = |params: &BTreeMap<String, String>| -> Vec<String> {
        params
            .iter()
            .map(|(name, value)| {
                format!(
                    "{name}={}",
                    clean_set_parameter(&envsubst(value, &spec.env))
                )
            })
            .collect()
    };
    let mut set_file = Vec::new();
    let mut set_file_contents = BTreeMap::new();
    for (name, loc) in file_params {
        let shown = shown_path(loc);
        set_file.push(format!("{name}={}", clean_set_parameter(&shown)));
        set_file_contents.insert(shown, read_located(cx, loc)?);
    }
    let inputs = native::Inputs {
        chart_dir: &spec.path,
        build,
        release: &opts.release,
        namespace: &opts.namespace,
        kube_version: opts.kube_version.as_deref(),
        api_versions: &opts.api_versions,
        value_files: values,
        set: set_args(&opts.set),
        set_string: set_args(&opts.set_string),
        set_file,
        set_file_contents,
        include_crds: !opts.skip_crds,
        skip_schema_validation: opts.skip_schema_validation,
        skip_tests: opts.skip_tests,
        no_hooks: false,
        line: cx.options.helm_line(),
    };
    let text = native::template(cx, &inputs)?;
    let mut sources = Vec::new();
    for dep in build.iter().flat_map(|b| &b.charts) {
        let shown = dep.alias.as_deref().unwrap_or(&dep.name);
        sources.push((format!("charts/{shown}/"), dep.dir.clone()));
    }
    parse_output(&spec.path, &sources, &text)
}

/// A value or parameter file as messages name it: its repository path,
/// `$<ref>/…` for a file of a `ref:` source.
fn shown_path(loc: &Located) -> String {
    match &loc.ref_name {
        Some(r) => format!("${r}/{}", loc.path),
        None => loc.path.clone(),
    }
}

/// The bytes of a value or parameter file, from the tree it names.
fn read_located(
    cx: &RenderContext<'_>,
    loc: &Located,
) -> Result<std::sync::Arc<[u8]>, RenderError> {
    match &loc.target {
        RefTarget::Tree(t) => {
            let rcx = cx.on_tree(t.as_ref());
            let b = rcx.read(&loc.path);
            cx.absorb(&rcx);
            b
        }
        RefTarget::Same => cx.read(&loc.path),
        RefTarget::External(_) => Err(RenderError::unsupported(format!(
            "value file `{}` is not in this repository",
            loc.shown
        ))),
    }
}

/// Applies what `helm dependency build` would do to the chart's copy at
/// `chart_dir`: outdated archives deleted, each `file://` chart placed in
/// `charts/` as the files its packaging keeps.
fn dependency_build(
    cx: &RenderContext<'_>,
    build: &dependencies::Build,
    chart_dir: &Path,
) -> Result<(), RenderError> {
    let charts = chart_dir.join("charts");
    for name in &build.removed {
        let p = charts.join(name);
        std::fs::remove_file(&p)
            .map_err(|e| RenderError::content(format!("cannot remove {}: {e}", p.display())))?;
    }
    for dep in &build.charts {
        // A directory named like the archive the build writes: helm loads
        // a subchart from either, and reads its name from `Chart.yaml`.
        let dest = charts.join(format!("{}-{}", dep.name, dep.version));
        if dest.exists() {
            std::fs::remove_dir_all(&dest).map_err(|e| {
                RenderError::content(format!("cannot replace {}: {e}", dest.display()))
            })?;
        }
        for (rel, bytes) in dependencies::chart_files(cx, &dep.dir)? {
            write(&dest.join(rel), &bytes)?;
        }
    }
    for dep in &build.fetched {
        write(
            &charts.join(format!("{}-{}.tgz", dep.name, dep.version)),
            &dep.bytes,
        )?;
    }
    Ok(())
}

/// Runs a prepared `helm template` under the runner's bounds: its standard
/// output, or helm's first error line with workspace paths mapped back to
/// the repository's (`shown` names the chart in messages).
fn run_template(
    cx: &RenderContext<'_>,
    cmd: &mut std::process::Command,
    shown: &str,
    work: &Workspace,
) -> Result<String, RenderError> {
    cx.options
        .helm_runs
        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out = match bounded::run(cmd, bounded::TIMEOUT, bounded::MAX_OUTPUT) {
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
                super::display_path(shown)
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
            "helm template `{}`: {}",
            super::display_path(shown),
            work.unmap(first)
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// One chart of a kustomization's `helmCharts`, as Kustomize's
/// `HelmChartInflationGeneratorPlugin` hands it to helm.
#[derive(Debug, Default)]
pub(crate) struct InflatedChart {
    /// Repository path of the chart directory.
    pub(crate) chart: String,
    /// `releaseName` (`None`: `--generate-name`, as Kustomize passes it).
    pub(crate) release: Option<String>,
    /// `namespace`.
    pub(crate) namespace: String,
    /// The values file Kustomize writes to its temporary directory (the
    /// `valuesFile` copied, or merged with `valuesInline`).
    pub(crate) values: Vec<u8>,
    /// `additionalValuesFiles`, as repository paths.
    pub(crate) additional_values: Vec<String>,
    /// `apiVersions`.
    pub(crate) api_versions: Vec<String>,
    /// `kubeVersion`.
    pub(crate) kube_version: Option<String>,
    /// `includeCRDs`.
    pub(crate) include_crds: bool,
    /// `skipTests`.
    pub(crate) skip_tests: bool,
    /// `skipHooks`.
    pub(crate) skip_hooks: bool,
}

/// Runs `helm template` for a Kustomize `helmCharts` entry with Kustomize
/// v5.5.0's argument list (`types.HelmChart.AsHelmArgs`: release name or
/// `--generate-name`, the chart, `--namespace`, `-f` the written values
/// file then each additional one, `--api-versions`, `--kube-version`,
/// `--include-crds`, `--skip-tests`, `--no-hooks`), through the same
/// hardened, bounded runner as Helm sources: a copy of the chart and the
/// value files in a temporary directory, no network, no helm state, limited
/// time, output and memory. Returns helm's standard output.
///
/// # Errors
/// No helm binary ([`RenderErrorKind::ToolMissing`]), a schema naming
/// anything outside the chart, or helm failing (its first message line).
pub(crate) fn inflate(cx: &RenderContext<'_>, c: &InflatedChart) -> Result<String, RenderError> {
    if cx.options.effective_helm_renderer() == HelmRenderer::Native {
        match inflate_native(cx, c) {
            Err(e) if native::is_not_supported(&e) && cx.options.helm_fallback() => {}
            inflated => return inflated,
        }
    }
    let Some(helm) = cx.options.helm.clone() else {
        return Err(RenderError {
            kind: RenderErrorKind::ToolMissing,
            message: format!(
                "`helmCharts` inflates `{}` with helm and no `helm` binary is on PATH: install helm (v3.17.1, the one Argo CD 3.0 ships) to analyse it",
                super::display_path(&c.chart)
            ),
            file: None,
            line: None,
        });
    };
    if let Some(r) = &c.release {
        if !valid_release_name(r) {
            return Err(RenderError::content(invalid_release_name(r)));
        }
    }
    check_schemas(cx, &c.chart)?;
    let tmp = tempfile::tempdir()
        .map_err(|e| RenderError::content(format!("cannot create a temporary directory: {e}")))?;
    let work = Workspace {
        root: tmp.path().to_path_buf(),
    };
    copy_dir(cx, &c.chart, &work.repo(), Dangling::Fail)?;
    let mut cmd = Command::new(helm);
    cmd.arg("template");
    match &c.release {
        Some(r) => cmd.arg(r),
        None => cmd.arg("--generate-name"),
    };
    cmd.arg(work.repo().join(&c.chart));
    if !c.namespace.is_empty() {
        cmd.arg(format!("--namespace={}", c.namespace));
    }
    let values = tmp.path().join("kustomize-values.yaml");
    write(&values, &c.values)?;
    cmd.arg(values_flag(&values));
    for f in &c.additional_values {
        let dest = work.repo().join(f);
        if path::strip_dir(f, &c.chart).is_none() {
            write(&dest, &cx.read(f)?)?;
        }
        cmd.arg(values_flag(&dest));
    }
    for v in &c.api_versions {
        cmd.arg(format!("--api-versions={v}"));
    }
    if let Some(v) = &c.kube_version {
        cmd.arg(format!("--kube-version={v}"));
    }
    if c.include_crds {
        cmd.arg("--include-crds");
    }
    if c.skip_tests {
        cmd.arg("--skip-tests");
    }
    if c.skip_hooks {
        cmd.arg("--no-hooks");
    }
    harden(&mut cmd, tmp.path());
    cmd.current_dir(tmp.path());
    run_template(cx, &mut cmd, &c.chart, &work)
}

/// [`inflate`] with the native renderer: the same arguments, the values
/// file Kustomize writes given as bytes. Without `releaseName` Kustomize
/// passes `--generate-name`, which `helm template` does not follow: it sets
/// its release name to `release-name` first (`cmd/helm/template.go`), and
/// `Install.NameAndChart` takes a set name over generating one (helm
/// v3.17.1 prints `release-name`).
fn inflate_native(cx: &RenderContext<'_>, c: &InflatedChart) -> Result<String, RenderError> {
    if let Some(r) = &c.release {
        if !valid_release_name(r) {
            return Err(RenderError::content(invalid_release_name_in(cx, r)));
        }
    }
    let release = c.release.clone().unwrap_or_else(|| "release-name".into());
    let mut value_files = vec![(
        "kustomize-values.yaml".to_string(),
        std::sync::Arc::from(c.values.as_slice()),
    )];
    for f in &c.additional_values {
        value_files.push((f.clone(), cx.read(f)?));
    }
    let inputs = native::Inputs {
        chart_dir: &c.chart,
        build: None,
        release: &release,
        namespace: &c.namespace,
        kube_version: c.kube_version.as_deref(),
        api_versions: &c.api_versions,
        value_files,
        set: Vec::new(),
        set_string: Vec::new(),
        set_file: Vec::new(),
        set_file_contents: BTreeMap::new(),
        include_crds: c.include_crds,
        skip_schema_validation: false,
        skip_tests: c.skip_tests,
        no_hooks: c.skip_hooks,
        line: cx.options.helm_line(),
    };
    native::template(cx, &inputs)
}

/// What a render of the Helm source `spec` reads in its tree: the chart
/// directory, `file://` dependencies, every value and parameter file (a
/// glob reads below its fixed prefix). A `$ref` file from another revision
/// of this repository ([`RefTarget::Tree`]) is not in it: that revision is
/// resolved by name in the repository, the same commit whichever revision
/// of a diff renders the (identical) Application, so its files cannot
/// differ between them.
///
/// # Errors
/// Anything that cannot be told without rendering (a value file from
/// another repository, a bad path): the app is then rendered.
pub(crate) fn footprint(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
) -> Result<Footprint, RenderError> {
    let opts = Options::parse(spec)?;
    let mut fp = Footprint {
        subtrees: vec![spec.path.clone()],
        entries: Vec::new(),
    };
    for dep in local_dependencies(cx, &spec.path) {
        fp.subtrees.push(dep);
    }
    add_value_files(&mut fp, spec, &opts, false)?;
    Ok(fp)
}

/// Adds the value and parameter files of `opts` that this revision's tree
/// holds (only `$ref` ones with `only_refs`) to `fp`: a glob reads below its
/// fixed prefix; a `$ref` pinned to another revision is the same commit at
/// both revisions of a diff, so it is left out.
///
/// # Errors
/// A value file from another repository, or a bad path.
fn add_value_files(
    fp: &mut Footprint,
    spec: &SourceSpec,
    opts: &Options,
    only_refs: bool,
) -> Result<(), RenderError> {
    for f in opts.value_files.iter().chain(opts.file_parameters.values()) {
        let loc = locate(spec, f)?;
        if only_refs && loc.ref_name.is_none() {
            continue;
        }
        match &loc.target {
            RefTarget::Same => {}
            RefTarget::Tree(_) => continue,
            RefTarget::External(_) => {
                return Err(RenderError::unsupported("value file of another repository"))
            }
        }
        if is_glob(&loc.path) {
            fp.subtrees.push(glob_base(&loc.path));
        } else {
            fp.entries.push(loc.path);
        }
    }
    Ok(())
}

/// What a source installing a chart from a Helm repository reads from the
/// repository: its `$ref` value and parameter files of this revision (the
/// chart and every other file it reads are in the chart's archive). A
/// `$ref` pinned to another revision is left out, as in [`footprint`].
///
/// # Errors
/// A value file from another repository, or a bad path.
pub(crate) fn ref_footprint(spec: &SourceSpec) -> Result<Footprint, RenderError> {
    let opts = Options::parse(spec)?;
    let mut fp = Footprint::default();
    add_value_files(&mut fp, spec, &opts, true)?;
    Ok(fp)
}

/// The temporary directory helm runs in: `repo/` mirrors the app's
/// repository (chart and local value files at their paths), `ref/<name>/`
/// the repository of each `ref:` source.
struct Workspace {
    root: PathBuf,
}

impl Workspace {
    fn repo(&self) -> PathBuf {
        self.root.join("repo")
    }

    fn ref_root(&self, name: &str) -> PathBuf {
        // A ref name is a path segment here; anything else is encoded.
        let safe: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.root.join("ref").join(format!("{safe}-{}", name.len()))
    }

    /// Copies one file into the workspace; returns its path there.
    fn place(
        &self,
        cx: &RenderContext<'_>,
        spec: &SourceSpec,
        loc: &Located,
    ) -> Result<PathBuf, RenderError> {
        let bytes = read_located(cx, loc)?;
        let dest = match &loc.ref_name {
            Some(r) => self.ref_root(r).join(&loc.path),
            None => self.repo().join(&loc.path),
        };
        // A value file inside the chart is already there.
        if loc.ref_name.is_some() || path::strip_dir(&loc.path, &spec.path).is_none() {
            write(&dest, &bytes)?;
        }
        Ok(dest)
    }

    /// A helm message with workspace paths put back as the repository names them.
    fn unmap(&self, msg: &str) -> String {
        let mut m = msg.to_string();
        let repo = format!("{}/", self.repo().display());
        m = m.replace(&repo, "");
        let refs = format!("{}/", self.root.join("ref").display());
        m = m.replace(&refs, "$");
        m.replace(&format!("{}/", self.root.display()), "")
    }
}

/// `--values=FILE` as one argument (flag and value cannot come apart).
fn values_flag(dest: &Path) -> OsString {
    let mut flag = OsString::from("--values=");
    flag.push(dest.as_os_str());
    flag
}

/// Helm runs with its state (plugins, repositories, registry logins, cache)
/// in the temporary directory, so nothing installed where gitops-lint runs
/// takes part, and with every proxy variable pointing at a closed local
/// port, so any request it would make (a schema `$ref`, a `lookup`
/// against a cluster) fails instead of leaving the machine. No kubeconfig
/// is readable.
fn harden(cmd: &mut Command, tmp: &Path) {
    cmd.env_clear()
        .env("PATH", "/nonexistent")
        .env("HOME", tmp.join(".home"))
        .env("TZ", "UTC")
        .env("HELM_CACHE_HOME", tmp.join(".cache"))
        .env("HELM_CONFIG_HOME", tmp.join(".config"))
        .env("HELM_DATA_HOME", tmp.join(".data"))
        .env("HELM_PLUGINS", tmp.join(".plugins"))
        .env("HELM_REGISTRY_CONFIG", tmp.join(".config/registry.json"))
        .env(
            "HELM_REPOSITORY_CONFIG",
            tmp.join(".config/repositories.yaml"),
        )
        .env("HELM_REPOSITORY_CACHE", tmp.join(".cache/repository"))
        .env("XDG_CACHE_HOME", tmp.join(".cache"))
        .env("XDG_CONFIG_HOME", tmp.join(".config"))
        .env("XDG_DATA_HOME", tmp.join(".data"))
        .env("KUBECONFIG", tmp.join(".kubeconfig"))
        .env("HTTP_PROXY", CLOSED_PROXY)
        .env("HTTPS_PROXY", CLOSED_PROXY)
        .env("http_proxy", CLOSED_PROXY)
        .env("https_proxy", CLOSED_PROXY)
        .env("ALL_PROXY", CLOSED_PROXY)
        .env("NO_PROXY", "")
        .env("no_proxy", "");
}

/// A proxy nothing listens on (port 9, discard, is closed on runners).
const CLOSED_PROXY: &str = "http://127.0.0.1:9";

/// Helm's own message for a release name it refuses (`pkg/action`
/// `errInvalidName`), so the failure reads as helm's would.
fn invalid_release_name(name: &str) -> String {
    format!(
        "release name {name:?}: invalid release name, must match regex ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ and the length must not be longer than 53"
    )
}

/// [`invalid_release_name`] as the helm in force words it: the native
/// renderer as Helm 4 adds `release name check failed: ` (`pkg/action/
/// install.go` `RunWithContext` at v4.2.1; helm v4.1.4 prints it).
fn invalid_release_name_in(cx: &RenderContext<'_>, name: &str) -> String {
    if cx.options.effective_helm_renderer() == HelmRenderer::Native
        && cx.options.helm_line() >= native::HelmLine::V4
    {
        format!("release name check failed: {}", invalid_release_name(name))
    } else {
        invalid_release_name(name)
    }
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

/// The repository directories of `file://` dependencies of `chart`.
fn local_dependencies(cx: &RenderContext<'_>, chart: &str) -> Vec<String> {
    dependencies::declared(cx, chart)
        .iter()
        .filter_map(|d| d.get("repository").and_then(Value::as_str))
        .filter_map(|r| r.strip_prefix("file://"))
        .filter_map(|p| path::join(chart, p))
        .collect()
}

fn write(dest: &Path, bytes: &[u8]) -> Result<(), RenderError> {
    if let Some(p) = dest.parent() {
        std::fs::create_dir_all(p)
            .map_err(|e| RenderError::content(format!("cannot write {}: {e}", p.display())))?;
    }
    std::fs::write(dest, bytes)
        .map_err(|e| RenderError::content(format!("cannot write {}: {e}", dest.display())))
}

/// Splits `helm template` output, mapping `# Source: chart/templates/x.yaml`
/// back to the repository file; `sources` maps the `charts/<name>/` prefix
/// of a subchart placed by the dependency build to its own directory.
fn parse_output(
    chart_path: &str,
    sources: &[(String, String)],
    text: &str,
) -> Result<Vec<RenderedObject>, RenderError> {
    let mut out = Vec::new();
    for chunk in text.split("\n---") {
        // The line break before `---` ends the document's last line: a
        // block scalar there keeps its final newline.
        let chunk = format!("{chunk}\n");
        let source = chunk
            .lines()
            .find_map(|l| l.strip_prefix("# Source: "))
            .map(|s| s.split_once('/').map_or(s, |(_, rest)| rest).to_string());
        // Argo CD reads helm's output with sigs.k8s.io/yaml (AC
        // `reposerver/repository/repository.go` `helmTemplate` hands it to
        // gitops-engine `pkg/utils/kube` `SplitYAML`): YAML 1.1 scalars
        // (`no` is false), and a repeated key replaces the earlier one.
        let docs = goyaml::load_all_as(
            &chunk,
            goyaml::Dialect::SigsYaml,
            &goyaml::Limits::default(),
        )
        .map_err(|e| RenderError::content(format!("helm output is not valid YAML: {e}")))?;
        for d in docs {
            if d.value.is_null() {
                continue;
            }
            let mut items = Vec::new();
            expand_lists(d.into_value(), &mut items);
            for value in items {
                let file = source.as_ref().and_then(|s| {
                    match sources
                        .iter()
                        .find_map(|(p, dir)| Some((s.strip_prefix(p.as_str())?, dir)))
                    {
                        Some((rest, dir)) => path::join(dir, rest),
                        None => path::join(chart_path, s),
                    }
                });
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

#[cfg(test)]
mod tests;
