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

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

mod dependencies;
pub(crate) mod native;

use super::materialize::{copy_dir, Dangling};
use super::{
    bounded, expand_lists, Footprint, HelmRenderer, RefTarget, RenderContext, RenderError,
    RenderErrorKind, RenderedObject, SourceSpec,
};
use crate::manifest::Origin;
use crate::source::{path, EntryKind, Tree as _};

/// Most value files one glob may expand to.
const MAX_GLOB_MATCHES: usize = 1_000;

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

/// The Helm options of a source, as Argo CD reads them.
#[derive(Debug, Default)]
#[allow(clippy::struct_excessive_bools)] // Argo CD's boolean Helm options
struct Options {
    release: String,
    namespace: String,
    kube_version: Option<String>,
    api_versions: Vec<String>,
    value_files: Vec<String>,
    ignore_missing_value_files: bool,
    /// `values` / `valuesObject` as YAML, passed last.
    extra_values: Option<String>,
    /// `--set`, by name (a later duplicate wins, as in Argo CD's map).
    set: BTreeMap<String, String>,
    set_string: BTreeMap<String, String>,
    file_parameters: BTreeMap<String, String>,
    skip_crds: bool,
    skip_schema_validation: bool,
    skip_tests: bool,
}

impl Options {
    fn parse(spec: &SourceSpec) -> Result<Options, RenderError> {
        let h = spec.helm.clone().unwrap_or(Value::Null);
        let k = spec.kustomize.clone().unwrap_or(Value::Null);
        let s = |v: &Value, key: &str| {
            v.get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let b = |key: &str| h.get(key).and_then(Value::as_bool).unwrap_or(false);
        let strings =
            |v: &Value, key: &str| -> Vec<String> { crate::manifest::strings(v.get(key)) };
        // `releaseName`, else the app name (AC `helmTemplate`).
        let release = s(&h, "releaseName").unwrap_or_else(|| spec.app_name.clone());
        if !valid_release_name(&release) {
            return Err(RenderError::content(invalid_release_name(&release)));
        }
        // `helm.namespace`, else `kustomize.namespace`, else the destination
        // (AC `ApplicationSource.GetNamespaceOrDefault`).
        let namespace = s(&h, "namespace")
            .or_else(|| s(&k, "namespace"))
            .unwrap_or_else(|| spec.namespace.clone());
        // `helm.kubeVersion`, else `kustomize.kubeVersion`, else the
        // cluster's, which is not known offline: helm's default then
        // (AC `GetKubeVersionOrDefault`).
        let kube_version = s(&h, "kubeVersion")
            .or_else(|| s(&k, "kubeVersion"))
            .map(|v| v.replace('+', ""));
        let api_versions = match strings(&h, "apiVersions") {
            v if v.is_empty() => strings(&k, "apiVersions"),
            v => v,
        };
        // `valuesObject` wins over `values`, which is a YAML string or an
        // object (AC `ApplicationSourceHelm.ValuesYAML`).
        let extra_values = match (h.get("valuesObject"), h.get("values")) {
            (Some(v @ Value::Object(_)), _) | (_, Some(v @ Value::Object(_))) => {
                Some(v.to_string())
            }
            (_, Some(Value::String(v))) if !v.trim().is_empty() => Some(v.clone()),
            _ => None,
        };
        let mut set = BTreeMap::new();
        let mut set_string = BTreeMap::new();
        for p in h
            .get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = s(p, "name").unwrap_or_default();
            let value = scalar_text(p.get("value"));
            if p.get("forceString").and_then(Value::as_bool) == Some(true) {
                set_string.insert(name, value);
            } else {
                set.insert(name, value);
            }
        }
        let mut file_parameters = BTreeMap::new();
        for p in h
            .get("fileParameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            file_parameters.insert(
                s(p, "name").unwrap_or_default(),
                s(p, "path").unwrap_or_default(),
            );
        }
        for name in set
            .keys()
            .chain(set_string.keys())
            .chain(file_parameters.keys())
        {
            // `=` would end the name inside helm's `--set` syntax.
            if name.is_empty() || name.contains('=') {
                return Err(RenderError::content(format!(
                    "Helm parameter name `{name}` is empty or holds `=`"
                )));
            }
        }
        Ok(Options {
            release,
            namespace,
            kube_version,
            api_versions,
            value_files: strings(&h, "valueFiles"),
            ignore_missing_value_files: b("ignoreMissingValueFiles"),
            extra_values,
            set,
            set_string,
            file_parameters,
            skip_crds: b("skipCrds"),
            skip_schema_validation: b("skipSchemaValidation"),
            skip_tests: b("skipTests"),
        })
    }
}

/// A parameter value as the Application's Go struct holds it (a string).
fn scalar_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// `cleanSetParameters` (AC `util/helm/cmd.go`): commas not already escaped
/// are escaped, unless the value is a `{…}` list literal.
fn clean_set_parameter(v: &str) -> String {
    if v.starts_with('{') && v.ends_with('}') {
        return v.to_string();
    }
    let mut out = String::with_capacity(v.len());
    let mut prev = '\0';
    for c in v.chars() {
        if c == ',' && prev != '\\' {
            out.push_str("\\,");
        } else {
            out.push(c);
        }
        prev = c;
    }
    out
}

/// Go's `os.Expand` with Argo CD's build environment (AC
/// `pkg/apis/application/v1alpha1` `Env.Envsubst`): `$NAME` and `${NAME}`
/// are replaced, unknown names by "", and `$$` is `$`.
#[must_use]
pub(crate) fn envsubst(s: &str, env: &[(String, String)]) -> String {
    let lookup = |name: &str| -> String {
        if name == "$" {
            return "$".into();
        }
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        if b[i] != b'$' || i + 1 >= b.len() {
            i += 1;
            continue;
        }
        out.push_str(&s[last..i]);
        let rest = &s[i + 1..];
        let (name, width) = shell_name(rest);
        if name.is_empty() && width == 0 {
            // `$` not followed by a name stays.
            out.push('$');
        } else if !name.is_empty() {
            out.push_str(&lookup(name));
        }
        i += 1 + width;
        last = i;
    }
    out.push_str(&s[last..]);
    out
}

/// Go's `getShellName`: the variable name after a `$` and how many bytes it
/// takes (a bad `${…}` takes bytes and names nothing).
fn shell_name(s: &str) -> (&str, usize) {
    let b = s.as_bytes();
    if b.first() == Some(&b'{') {
        if b.len() > 2 && is_shell_special(b[1]) && b[2] == b'}' {
            return (&s[1..2], 3);
        }
        for (i, &c) in b.iter().enumerate().skip(1) {
            if c == b'}' {
                if i == 1 {
                    return ("", 2);
                }
                return (&s[1..i], i + 1);
            }
        }
        return ("", 1);
    }
    if b.first().is_some_and(|&c| is_shell_special(c)) {
        return (&s[0..1], 1);
    }
    let n = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    (&s[..n], n)
}

fn is_shell_special(c: u8) -> bool {
    matches!(c, b'*' | b'#' | b'$' | b'@' | b'!' | b'?' | b'-') || c.is_ascii_digit()
}

/// A value or parameter file: which tree, and where in it.
#[derive(Debug, Clone)]
struct Located {
    /// As the Application names it (for messages).
    shown: String,
    /// The `ref` it comes from (`None`: the app's own repository).
    ref_name: Option<String>,
    target: RefTarget,
    /// Repository-relative path (may hold glob characters).
    path: String,
}

/// Resolves one value-file entry the way `getResolvedValueFiles` does.
fn locate(spec: &SourceSpec, raw: &str) -> Result<Located, RenderError> {
    let outside = |what: &str| RenderError {
        kind: RenderErrorKind::OutsideRepo,
        message: format!("value file `{raw}` leads outside {what}"),
        file: None,
        line: None,
    };
    // `$<ref>/path`: only when a source of that name exists
    // (`getReferencedSource`); the rest is substituted after.
    if let Some((head, rest)) = raw
        .strip_prefix('$')
        .map(|r| r.split_once('/').unwrap_or((r, "")))
    {
        if let Some(r) = spec.refs.iter().find(|r| r.name == head) {
            let p = envsubst(rest, &spec.env);
            let path = path::normalize(p.trim_start_matches('/'))
                .ok_or_else(|| outside("the referenced repository"))?;
            if let RefTarget::External(why) = &r.target {
                return Err(RenderError::unsupported(format!(
                    "value file `{raw}` comes from the `ref: {head}` source, {why}, which gitops-lint does not fetch"
                )));
            }
            return Ok(Located {
                shown: raw.to_string(),
                ref_name: Some(head.to_string()),
                target: r.target.clone(),
                path,
            });
        }
    }
    let v = envsubst(raw, &spec.env);
    if let Some(scheme) = url_scheme(&v) {
        return Err(if scheme == "http" || scheme == "https" {
            RenderError::unsupported(format!(
                "value file `{v}` is fetched from the network, which gitops-lint never does"
            ))
        } else {
            RenderError::content(format!(
                "value file `{v}`: the URL scheme `{scheme}` is not allowed"
            ))
        });
    }
    let path = match v.strip_prefix('/') {
        // An absolute path is relative to the repository root.
        Some(abs) => path::normalize(abs),
        None => path::join(&spec.path, &v),
    }
    .ok_or_else(|| outside("the repository"))?;
    Ok(Located {
        shown: raw.to_string(),
        ref_name: None,
        target: RefTarget::Same,
        path,
    })
}

/// The scheme of `v` if Go's `url.Parse` would find one.
fn url_scheme(v: &str) -> Option<&str> {
    let (scheme, _) = v.split_once(':')?;
    let mut chars = scheme.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic()
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
    .then_some(scheme)
}

fn is_glob(p: &str) -> bool {
    p.contains(['*', '?', '['])
}

/// The directory part of a glob before its first pattern segment.
fn glob_base(p: &str) -> String {
    p.split('/')
        .take_while(|s| !is_glob(s))
        .collect::<Vec<_>>()
        .join("/")
}

/// The value files of the command line, in order: globs expanded, missing
/// files dropped under `ignoreMissingValueFiles`, duplicates removed.
fn resolve_value_files(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
    opts: &Options,
) -> Result<Vec<Located>, RenderError> {
    let located = opts
        .value_files
        .iter()
        .map(|f| locate(spec, f))
        .collect::<Result<Vec<_>, _>>()?;
    let key = |l: &Located| (l.ref_name.clone(), l.path.clone());
    let explicit: BTreeSet<_> = located
        .iter()
        .filter(|l| !is_glob(&l.path))
        .map(key)
        .collect();
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for l in located {
        let tree = match &l.target {
            RefTarget::Tree(t) => Some(std::sync::Arc::clone(t)),
            _ => None,
        };
        let tree_cx = tree.as_ref().map(|t| cx.on_tree(t.as_ref()));
        let rcx = tree_cx.as_ref().unwrap_or(cx);
        if is_glob(&l.path) {
            let matches = expand_glob(rcx, &l.path)?;
            if matches.is_empty() && !opts.ignore_missing_value_files {
                return Err(RenderError::content(format!(
                    "values file glob `{}` matched no files",
                    l.shown
                )));
            }
            for m in matches {
                let one = Located {
                    path: m,
                    ..l.clone()
                };
                if !explicit.contains(&key(&one)) && seen.insert(key(&one)) {
                    out.push(one);
                }
            }
        } else {
            match rcx.kind_of(&l.path)? {
                Some(EntryKind::File) => {}
                _ if opts.ignore_missing_value_files => continue,
                _ => {
                    let e =
                        RenderError::content(format!("value file `{}` does not exist", l.shown));
                    return Err(if l.ref_name.is_none() {
                        e.at(l.path.clone(), None)
                    } else {
                        e
                    });
                }
            }
            if seen.insert(key(&l)) {
                out.push(l);
            }
        }
        if let Some(t) = &tree_cx {
            cx.absorb(t);
        }
    }
    Ok(out)
}

/// The files matching a glob (`*`, `?`, `[…]` within a segment, `**`
/// across), in lexical order, as `doublestar.FilepathGlob` gives them.
fn expand_glob(cx: &RenderContext<'_>, pattern: &str) -> Result<Vec<String>, RenderError> {
    let matcher = globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map_err(|e| RenderError::content(format!("value file glob `{pattern}`: {e}")))?
        .compile_matcher();
    let base = glob_base(pattern);
    let deep = pattern.contains("**");
    let depth = pattern.split('/').count();
    let mut out = Vec::new();
    let mut stack = vec![base.clone()];
    if cx.kind_of(&base)? != Some(EntryKind::Dir) {
        return Ok(out);
    }
    while let Some(dir) = stack.pop() {
        for e in cx.list(&dir)? {
            let full = path::join(&dir, &e.name).unwrap_or_default();
            let kind = match e.kind {
                EntryKind::Symlink => cx.kind_of(&full)?.unwrap_or(EntryKind::File),
                k => k,
            };
            match kind {
                EntryKind::Dir if deep || full.split('/').count() < depth => stack.push(full),
                EntryKind::File if matcher.is_match(&full) => {
                    out.push(full);
                    if out.len() > MAX_GLOB_MATCHES {
                        return Err(RenderError::content(format!(
                            "value file glob `{pattern}` matches more than {MAX_GLOB_MATCHES} files"
                        )));
                    }
                }
                _ => {}
            }
        }
    }
    out.sort();
    Ok(out)
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

/// Refuses a chart whose `values.schema.json` (its own or a subchart's,
/// unpacked or packed in `charts/`) names anything but a place inside
/// itself: helm would fetch an `http(s)://` reference and read a `file://`
/// or relative one from the machine's file system.
fn check_schemas(cx: &RenderContext<'_>, chart: &str) -> Result<(), RenderError> {
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
fn check_fetched_schemas(
    cx: &RenderContext<'_>,
    dep: &dependencies::FetchedChart,
) -> Result<(), RenderError> {
    let shown = format!("{}-{}.tgz", dep.name, dep.version);
    let archive = super::chart_cache::unpack_archive(&dep.bytes, &shown)
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
    let archive = super::chart_cache::unpack_archive(&bytes, shown)
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
fn external_ref(v: &Value) -> Option<String> {
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
mod tests {
    use super::*;

    fn env() -> Vec<(String, String)> {
        vec![("ARGOCD_APP_NAME".into(), "shop".into())]
    }

    #[test]
    fn envsubst_is_go_os_expand() {
        assert_eq!(envsubst("a-$ARGOCD_APP_NAME", &env()), "a-shop");
        assert_eq!(envsubst("${ARGOCD_APP_NAME}.yaml", &env()), "shop.yaml");
        assert_eq!(envsubst("$$x", &env()), "$x");
        assert_eq!(envsubst("$UNKNOWN/x", &env()), "/x");
        assert_eq!(envsubst("cost: 5$", &env()), "cost: 5$");
        assert_eq!(envsubst("a $ b", &env()), "a $ b");
        assert_eq!(envsubst("${}x", &env()), "x");
    }

    #[test]
    fn commas_are_escaped_unless_a_list() {
        assert_eq!(clean_set_parameter("a,b"), "a\\,b");
        assert_eq!(clean_set_parameter("a\\,b"), "a\\,b");
        assert_eq!(clean_set_parameter("{a,b}"), "{a,b}");
    }

    #[test]
    fn value_files_resolve_like_argo_cd() {
        let spec = SourceSpec {
            path: "charts/shop".into(),
            env: env(),
            refs: vec![super::super::RefSource {
                name: "values".into(),
                target: RefTarget::Same,
            }],
            ..SourceSpec::default()
        };
        let p = |f: &str| locate(&spec, f).map(|l| (l.ref_name, l.path));
        assert_eq!(
            p("prod.yaml").ok(),
            Some((None, "charts/shop/prod.yaml".into()))
        );
        assert_eq!(
            p("/envs/prod.yaml").ok(),
            Some((None, "envs/prod.yaml".into()))
        );
        assert_eq!(
            p("$values/envs/$ARGOCD_APP_NAME.yaml").ok(),
            Some((Some("values".into()), "envs/shop.yaml".into()))
        );
        // No such ref: substituted as a variable, then absolute.
        assert_eq!(p("$other/x.yaml").ok(), Some((None, "x.yaml".into())));
        assert_eq!(
            p("../../../x.yaml").map_err(|e| e.kind).err(),
            Some(RenderErrorKind::OutsideRepo)
        );
        assert_eq!(
            p("https://example.com/v.yaml").map_err(|e| e.kind).err(),
            Some(RenderErrorKind::Unsupported)
        );
    }

    #[test]
    fn schema_refs_outside_the_schema_are_found() {
        let v: Value = serde_json::json!({"properties": {"a": {"$ref": "#/definitions/a"}}});
        assert_eq!(external_ref(&v), None);
        for r in [
            "http://example.com/s.json",
            "file:///etc/hostname",
            "other.json",
        ] {
            let v = serde_json::json!({"allOf": [{"$ref": r}]});
            assert_eq!(external_ref(&v).as_deref(), Some(r));
        }
    }
}
