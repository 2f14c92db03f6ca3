//! `helmCharts`: Kustomize v5.5.0's builtin `HelmChartInflationGenerator`
//! (`api/internal/builtins/HelmChartInflationGenerator.go`), run the way
//! `kustomize build --enable-helm` runs it, with helm through the hardened
//! runner of [`crate::render::helm::inflate`].
//!
//! Per chart (`Config` then `validateArgs`): `--enable-helm` is required;
//! `chartHome` (from `helmGlobals`, default `charts`, relative to the
//! kustomization) holds the chart at `<chartHome>/<name>`, or at
//! `<chartHome>/<name>-<version>/<name>` when both `repo` and `version` are
//! set (`absChartHome`); `valuesFile` defaults to the chart's `values.yaml`;
//! `additionalValuesFiles` and every values file are read under the load
//! restrictor. `Generate` then uses the chart only if that directory exists
//! (`chartExistsLocally`): otherwise Kustomize would `helm pull` it, which
//! gitops-lint does only when the run fetches charts, from a repository it
//! may contact (see [`crate::render::chart_cache`]). The values file helm gets is the `valuesFile`
//! as is, or, with `valuesInline`, the two merged by `valuesMerge`
//! (`createNewMergedValuesFile`, `replaceValuesInline`). The output is
//! absorbed like any generator's (`runGenerators`, after `configMapGenerator`
//! and `secretGenerator`), so the kustomization's transformers apply to it.

use serde_json::{Map, Value};

use super::load::{self, Kustomization};
use super::resource::Res;
use super::{content, smp, KResult};
use crate::manifest::Origin;
use crate::render::helm::{self, InflatedChart};
use crate::render::{RenderContext, RenderError, RenderErrorKind};
use crate::source::{path, EntryKind, Tree as _};
use goyaml::Dialect;

/// `types.HelmDefaultHome`.
const DEFAULT_CHART_HOME: &str = "charts";

/// What Argo CD adds to `kustomize build` for charts: `--enable-helm` from
/// `kustomize.buildOptions`, and `--helm-kube-version` /
/// `--helm-api-versions` from the Application (AC `util/kustomize`
/// `parseKustomizeBuildOptions`, only when helm is enabled).
#[derive(Debug, Clone, Default)]
pub(crate) struct HelmFlags {
    /// `--enable-helm` is among the build options.
    pub(crate) enabled: bool,
    /// `--helm-kube-version`.
    pub(crate) kube_version: Option<String>,
    /// `--helm-api-versions`.
    pub(crate) api_versions: Vec<String>,
}

/// One configured chart, ready to inflate.
pub(crate) struct Configured {
    name: String,
    repo: String,
    /// `version` (empty: the latest).
    version: String,
    /// Whether `valuesFile` was left to its default, the chart's own
    /// `values.yaml` (for a fetched chart, the archive's).
    values_defaulted: bool,
    /// Repository path of `<absChartHome>/<name>`.
    chart_dir: String,
    /// `valuesFile`, relative to the kustomization directory.
    values_file: String,
    values_inline: Map<String, Value>,
    merge: String,
    args: InflatedChart,
}

/// The chart home of `k` (`helmGlobals.chartHome`, default `charts`), as a
/// repository path.
///
/// # Errors
/// An absolute chart home (it names the machine's file system) or one
/// leading outside the repository.
pub(crate) fn chart_home(k: &Kustomization) -> KResult<String> {
    let home =
        k.k.get("helmGlobals")
            .and_then(|g| g.get("chartHome"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .unwrap_or(DEFAULT_CHART_HOME);
    if home.starts_with('/') {
        return Err(RenderError {
            kind: RenderErrorKind::OutsideRepo,
            message: format!(
                "`{}`: `helmGlobals.chartHome` `{home}` is an absolute path, which Argo CD would read from its own file system",
                k.file
            ),
            file: Some(k.file.clone()),
            line: None,
        });
    }
    load::join(&k.dir, home, &k.file)
}

/// Whether `k` has charts to inflate.
#[must_use]
pub(crate) fn has_charts(k: &Kustomization) -> bool {
    !k.list("helmCharts").is_empty()
}

/// Configures every chart of `k`, as Kustomize configures all builtin
/// generators before running any (`configureBuiltinGenerators`).
///
/// # Errors
/// `--enable-helm` missing, or a chart entry Kustomize refuses.
pub(crate) fn configure(
    cx: &RenderContext<'_>,
    k: &Kustomization,
    flags: &mut HelmFlags,
) -> KResult<Vec<Configured>> {
    let charts = k.list("helmCharts");
    if charts.is_empty() {
        return Ok(Vec::new());
    }
    if !flags.enabled {
        return Err(k.err(
            "trouble configuring builtin HelmChartInflationGenerator: must specify --enable-helm (Argo CD passes it only when `kustomize.buildOptions` in `argocd-cm` contains it; gitops-lint reads that from an `argocd-cm` ConfigMap in the repository or from `kustomizeBuildOptions` in .gitops-lint.yaml)",
        ));
    }
    let home = chart_home(k)?;
    let mut out = Vec::new();
    for c in charts {
        let Some(m) = c.as_object() else {
            return Err(k.err("entries of `helmCharts` must be maps"));
        };
        out.push(configure_one(cx, k, m, &home, flags)?);
    }
    Ok(out)
}

fn configure_one(
    cx: &RenderContext<'_>,
    k: &Kustomization,
    m: &Map<String, Value>,
    home: &str,
    flags: &mut HelmFlags,
) -> KResult<Configured> {
    let s = |f: &str| -> KResult<String> {
        match m.get(f) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(s)) => Ok(s.clone()),
            Some(_) => Err(k.err(format!("`helmCharts[].{f}` must be a string"))),
        }
    };
    let b = |f: &str| -> KResult<bool> {
        match m.get(f) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(k.err(format!("`helmCharts[].{f}` must be a boolean"))),
        }
    };
    let strings = |f: &str| -> KResult<Vec<String>> {
        match m.get(f) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str().map(str::to_string).ok_or_else(|| {
                        k.err(format!("`helmCharts[].{f}` must be a list of strings"))
                    })
                })
                .collect(),
            Some(_) => Err(k.err(format!("`helmCharts[].{f}` must be a list of strings"))),
        }
    };
    let name = s("name")?;
    if name.is_empty() {
        return Err(k.err("chart name cannot be empty"));
    }
    if !s("nameTemplate")?.is_empty() {
        return Err(RenderError::unsupported(format!(
            "`{}`: `helmCharts[].nameTemplate` (a Go template helm evaluates for the release name) is not supported",
            k.file
        ))
        .at(k.file.clone(), None));
    }
    let version = s("version")?;
    let repo = s("repo")?;
    // `absChartHome`: a pulled chart lives in a `<name>-<version>` directory.
    let abs_home = if !version.is_empty() && !repo.is_empty() {
        load::join(home, &format!("{name}-{version}"), &k.file)?
    } else {
        home.to_string()
    };
    let chart_dir = load::join(&abs_home, &name, &k.file)?;
    let mut values_file = s("valuesFile")?;
    let values_defaulted = values_file.is_empty();
    if values_defaulted {
        values_file = load::relative(
            &k.dir,
            &path::join(&chart_dir, "values.yaml").unwrap_or_default(),
        );
    }
    let mut additional_values = Vec::new();
    for f in strings("additionalValuesFiles")? {
        // `Loader().Load` enforces the load restrictor.
        let (p, _) = k.read(cx, &f).map_err(|e| {
            let mut e = e;
            e.message = format!("could not load additionalValuesFile: {}", e.message);
            e
        })?;
        additional_values.push(p);
    }
    let merge = match s("valuesMerge")?.as_str() {
        "" => "override".to_string(),
        o @ ("merge" | "override" | "replace") => o.to_string(),
        _ => return Err(k.err("valuesMerge must be one of [merge override replace]")),
    };
    let values_inline = match m.get("valuesInline") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(_) => return Err(k.err("`helmCharts[].valuesInline` must be a map")),
    };
    // The Application's `--helm-kube-version` / `--helm-api-versions` are
    // set before the chart's own fields are read over them (`Config`), so
    // a chart's own `kubeVersion` / `apiVersions` win (empty ones are
    // omitted from the configuration and do not).
    let kube_version = Some(s("kubeVersion")?)
        .filter(|v| !v.is_empty())
        .or_else(|| flags.kube_version.clone());
    let mut api_versions = strings("apiVersions")?;
    if api_versions.is_empty() {
        api_versions.clone_from(&flags.api_versions);
    } else {
        // The chart's list is decoded into the slice that still shares its
        // array with the command line's (`json.Unmarshal` appends from
        // length zero), so its first elements overwrite the command line's
        // for every chart configured later in the build: `kubectl
        // kustomize --helm-api-versions` shows the same.
        for (cli, own) in flags.api_versions.iter_mut().zip(&api_versions) {
            cli.clone_from(own);
        }
    }
    let release = Some(s("releaseName")?).filter(|r| !r.is_empty());
    Ok(Configured {
        name,
        repo,
        version,
        values_defaulted,
        chart_dir: chart_dir.clone(),
        values_file,
        values_inline,
        merge,
        args: InflatedChart {
            chart: chart_dir,
            release,
            namespace: s("namespace")?,
            values: Vec::new(),
            additional_values,
            api_versions,
            kube_version,
            include_crds: b("includeCRDs")?,
            skip_tests: b("skipTests")?,
            skip_hooks: b("skipHooks")?,
        },
    })
}

/// Inflates every chart of `k`, in order, into resources.
///
/// # Errors
/// See the module documentation; helm's own failures are content errors
/// with its message.
pub(crate) fn generate(
    cx: &RenderContext<'_>,
    k: &Kustomization,
    configured: Vec<Configured>,
) -> KResult<Vec<Vec<Res>>> {
    let mut out = Vec::new();
    for mut c in configured {
        if cx.kind_of(&c.chart_dir)? != Some(EntryKind::Dir) {
            if c.repo.is_empty() {
                return Err(k.err(format!(
                    "no repo specified for pull, no chart found at `{}`",
                    c.chart_dir
                )));
            }
            // Kustomize would `helm pull` it (`pullCommand`): fetched, when
            // the run fetches, from a repository it may contact.
            if let Some(charts) = cx
                .options
                .chart_cache
                .as_ref()
                .filter(|ch| ch.fetcher().is_some())
            {
                out.push(inflate_fetched(cx, k, &mut c, charts)?);
                continue;
            }
            return Err(RenderError::unsupported(format!(
                "`{}`: chart `{}` from `{}` is not under `{}`: Kustomize would `helm pull` it, which gitops-lint does not (no network); the app is not analysed",
                k.file,
                c.name,
                c.repo,
                crate::render::display_path(&c.chart_dir)
            ))
            .at(k.file.clone(), None));
        }
        c.args.values = values(cx, k, &c)?;
        let text = helm::inflate(cx, &c.args).map_err(|e| {
            if e.file.is_some() {
                e
            } else {
                e.at(k.file.clone(), None)
            }
        })?;
        let mut res = parse(&text, &c.chart_dir)?;
        for r in &mut res {
            r.generated_by = Some((k.file.clone(), "HelmChartInflationGenerator"));
        }
        out.push(res);
    }
    Ok(out)
}

/// Inflates `c`, whose chart Kustomize would pull, from the fetched archive
/// (`helm pull --version` resolves a constraint, and no version means the
/// latest, as `*`).
fn inflate_fetched(
    cx: &RenderContext<'_>,
    k: &Kustomization,
    c: &mut Configured,
    charts: &crate::render::chart_cache::ChartCache,
) -> KResult<Vec<Res>> {
    let revision = if c.version.is_empty() {
        "*"
    } else {
        c.version.as_str()
    };
    let fetched = charts
        .chart(&c.name, &c.repo, revision, cx.tree)
        .map_err(|e| e.at(k.file.clone(), None))?;
    if !c.args.additional_values.is_empty() {
        return Err(RenderError::unsupported(format!(
            "`{}`: chart `{}` is fetched from `{}`, and its `additionalValuesFiles` are not read beside a fetched chart",
            k.file, c.name, c.repo
        ))
        .at(k.file.clone(), None));
    }
    let archive = fetched.tree.as_ref();
    let own_values = if c.values_defaulted {
        let p = format!("{}/values.yaml", fetched.path);
        Some(
            archive
                .read_raw(&p)
                .map_or_else(|_| Vec::new(), |b| b.to_vec()),
        )
    } else {
        None
    };
    c.args.values = values_with(cx, k, c, own_values)?;
    let inner = RenderContext::unrecorded(archive, cx.cache, cx.options);
    let args = InflatedChart {
        chart: fetched.path.clone(),
        release: c.args.release.clone(),
        namespace: c.args.namespace.clone(),
        values: std::mem::take(&mut c.args.values),
        additional_values: Vec::new(),
        api_versions: c.args.api_versions.clone(),
        kube_version: c.args.kube_version.clone(),
        include_crds: c.args.include_crds,
        skip_tests: c.args.skip_tests,
        skip_hooks: c.args.skip_hooks,
    };
    let text = helm::inflate(&inner, &args).map_err(|e| e.at(k.file.clone(), None))?;
    let mut res = parse(&text, &c.chart_dir)?;
    for r in &mut res {
        r.generated_by = Some((k.file.clone(), "HelmChartInflationGenerator"));
    }
    Ok(res)
}

/// The values file helm gets: `valuesFile` as is without `valuesInline`;
/// with it, `replace` takes the inline values alone, `override` merges them
/// over the file and `merge` merges the file over them (kyaml `merge2.Merge`
/// with the operands in that order), written as YAML (JSON here).
fn values(cx: &RenderContext<'_>, k: &Kustomization, c: &Configured) -> KResult<Vec<u8>> {
    values_with(cx, k, c, None)
}

/// [`values`], with `own` as the values file's bytes when the chart's own
/// `values.yaml` is not a file of the repository (a fetched chart).
fn values_with(
    cx: &RenderContext<'_>,
    k: &Kustomization,
    c: &Configured,
    own: Option<Vec<u8>>,
) -> KResult<Vec<u8>> {
    let read = |cx: &RenderContext<'_>| -> KResult<(String, Vec<u8>)> {
        match &own {
            Some(b) => Ok((c.values_file.clone(), b.clone())),
            None => k.read(cx, &c.values_file).map(|(p, b)| (p, b.to_vec())),
        }
    };
    if own.is_none() && load::is_remote(&c.values_file) {
        return Err(RenderError::unsupported(format!(
            "`{}`: values file `{}` is remote and is not fetched (no network)",
            k.file, c.values_file
        ))
        .at(k.file.clone(), None));
    }
    if c.values_inline.is_empty() {
        let (_, bytes) = read(cx)?;
        return Ok(bytes);
    }
    let inline = Value::Object(c.values_inline.clone());
    let merged = if c.merge == "replace" {
        inline
    } else {
        let (p, bytes) = read(cx)?;
        let text = std::str::from_utf8(&bytes)
            .map_err(|_| k.err(format!("values file `{p}` is not valid UTF-8")))?;
        let docs = goyaml::load_all_as(text, Dialect::Kyaml, &goyaml::Limits::default())
            .map_err(|e| RenderError::from_yaml(&p, &e))?;
        let file = docs
            .into_iter()
            .map(goyaml::Doc::into_value)
            .find(|v| !v.is_null())
            .unwrap_or_else(|| Value::Object(Map::new()));
        if !file.is_object() {
            return Err(k.err(format!("could not merge values: `{p}` is not a map")));
        }
        let (dest, src) = if c.merge == "override" {
            (file, inline)
        } else {
            (inline, file)
        };
        smp::merge(dest, src, &[])
            .map_err(|e| k.err(format!("could not merge values: {}", e.message)))?
            .unwrap_or_else(|| Value::Object(Map::new()))
    };
    serde_json::to_vec(&merged).map_err(|e| content(format!("cannot write values: {e}")))
}

/// helm's output as resources (Kustomize's `NewResMapFromBytes`), each
/// attributed to the chart template its `# Source:` line names.
fn parse(text: &str, chart_dir: &str) -> KResult<Vec<Res>> {
    let mut out = Vec::new();
    let chunks = split_documents(&text.replace("\r\n", "\n"))
        .map_err(|e| content(format!("helm output for `{chart_dir}`: {e}")))?;
    for chunk in &chunks {
        let file = chunk
            .lines()
            .find_map(|l| l.strip_prefix("# Source: "))
            .map(|s| s.split_once('/').map_or(s, |(_, rest)| rest))
            .and_then(|s| path::join(chart_dir, s));
        let docs = goyaml::load_all_as(chunk, Dialect::Kyaml, &goyaml::Limits::default()).map_err(
            |e| {
                content(format!(
                    "helm output for `{chart_dir}` is not valid YAML: {e}"
                ))
            },
        )?;
        let mut res = load::resources_from_docs(&docs, file.as_deref(), None)?;
        for r in &mut res {
            r.origin = Origin {
                file: file.clone(),
                line: None,
                doc_index: None,
            };
        }
        out.extend(res);
    }
    Ok(out)
}

/// kyaml's `splitDocuments` (`kio/byteio_reader.go`), as `ByteReader.Read` uses it on helm's
/// output: the text is cut at every `\n---…\n` line (only a comment may
/// follow the dashes), and every document but the last gets back the line
/// break the cut took (a block scalar ending a document keeps it).
fn split_documents(s: &str) -> Result<Vec<String>, String> {
    let mut docs = Vec::new();
    if s.is_empty() {
        return Ok(docs);
    }
    let mut prev = 0;
    let mut from = 0;
    while let Some(at) = s[from..].find("\n---").map(|i| from + i) {
        // `\n---.*\n`: the separator runs to the end of its line, which
        // must end.
        let Some(eol) = s[at + 4..].find('\n').map(|i| at + 4 + i) else {
            break;
        };
        let rest = s[at + 4..eol].trim();
        if !rest.is_empty() && !rest.starts_with('#') {
            return Err(format!(
                "invalid document separator: {}",
                s[at + 1..eol].trim()
            ));
        }
        docs.push(format!("{}\n", &s[prev..at]));
        prev = eol + 1;
        from = eol + 1;
    }
    docs.push(s[prev..].to_string());
    Ok(docs)
}

#[cfg(test)]
mod tests {
    use super::split_documents;

    #[test]
    fn documents_split_as_kyaml_splits_them() {
        // What `kubectl kustomize --enable-helm` gives a block scalar that
        // ends a document: its line break.
        assert_eq!(
            split_documents("a: |\n  x\n---\n# Source: c.yaml\nb: 1\n"),
            Ok(vec![
                "a: |\n  x\n".to_string(),
                "# Source: c.yaml\nb: 1\n".to_string()
            ])
        );
        assert_eq!(
            split_documents("a: 1\n--- # next\nb: 2"),
            Ok(vec!["a: 1\n".to_string(), "b: 2".to_string()])
        );
        // A separator on the last line, with no line break, is no cut.
        assert_eq!(
            split_documents("a: 1\n---"),
            Ok(vec!["a: 1\n---".to_string()])
        );
        assert_eq!(
            split_documents("a: 1\n---b: 2\n"),
            Err("invalid document separator: ---b: 2".to_string())
        );
        assert_eq!(split_documents(""), Ok(Vec::new()));
    }
}
