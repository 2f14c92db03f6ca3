//! Helm charts rendered in-process, as `helm template` v3.17.1 renders
//! them with Argo CD's flags, with no helm binary (`--helm-renderer
//! native`, `helmRenderer: native`).
//!
//! The steps are helm's, in its order (`cmd/helm/template.go` →
//! `cmd/helm/install.go` `runInstall` → `pkg/action/install.go`
//! `RunWithContext` → `renderResources`): the user's values merged from
//! value files and `--set` flags ([`strvals`], [`values::merge_maps`]), the
//! chart loaded ([`chart`]), refused if it is a library, its dependencies
//! checked, enabled and imported ([`values::process_dependencies`]), its
//! values coalesced, its `kubeVersion` checked, its templates rendered
//! ([`engine`]),
//! and the output sorted and assembled ([`manifests`]).
//!
//! Whatever is not implemented fails with "not supported natively: …"
//! (GL000), never a partial render: today values a `values.schema.json`
//! refuses (helm's message is gojsonschema's), what Go does not determine
//! (see [`objects`]), and the Sprig functions the template engine does not
//! implement (see [`engine`]).

pub(in crate::render::helm) mod chart;
mod engine;
#[cfg(any(test, feature = "fuzz"))]
pub(crate) use engine::RENDER_BUDGET;
pub(in crate::render::helm) mod manifests;
mod objects;
mod schema;
mod schema_format;
pub(in crate::render::helm) mod strvals;
pub(in crate::render::helm) mod values;

use std::collections::BTreeMap;
use std::sync::Arc;

use super::super::{RenderContext, RenderError};
use super::dependencies::Build;
use crate::gotemplate::V;
use crate::semver::Version;
use values::Map;

/// The Kubernetes version helm v3.17.1 assumes without `--kube-version`
/// (`chartutil.DefaultCapabilities`, set from the client-go it is built
/// with).
pub(in crate::render::helm) const DEFAULT_KUBE_VERSION: &str = "v1.32.0";

/// What the native renderer is given: the command line Argo CD would run,
/// with every file it names already read from the repository.
// The booleans are helm's switches (`--include-crds`, `--skip-tests`…), one
// field each as on its command line.
#[allow(clippy::struct_excessive_bools)]
pub(in crate::render::helm) struct Inputs<'a> {
    /// The chart's repository directory.
    pub(crate) chart_dir: &'a str,
    /// The dependency build Argo CD would run, if any.
    pub(crate) build: Option<&'a Build>,
    /// `--name-template`.
    pub(crate) release: &'a str,
    /// `--namespace` (empty: not passed).
    pub(crate) namespace: &'a str,
    /// `--kube-version`.
    pub(crate) kube_version: Option<&'a str>,
    /// `--values`, in order: (the path as helm names it, its bytes).
    pub(crate) value_files: Vec<(String, Arc<[u8]>)>,
    /// `--set` arguments, as passed.
    pub(crate) set: Vec<String>,
    /// `--set-string` arguments, as passed.
    pub(crate) set_string: Vec<String>,
    /// `--set-file` arguments, as passed, and the files they name (by the
    /// path the argument holds once unescaped).
    pub(crate) set_file: Vec<String>,
    /// The files `--set-file` names.
    pub(crate) set_file_contents: BTreeMap<String, Arc<[u8]>>,
    /// `--api-versions`.
    pub(crate) api_versions: &'a [String],
    /// `--include-crds`.
    pub(crate) include_crds: bool,
    /// `--skip-schema-validation`.
    pub(crate) skip_schema_validation: bool,
    /// `--skip-tests`.
    pub(crate) skip_tests: bool,
    /// `--no-hooks` (Kustomize's `skipHooks`): hooks are not printed.
    pub(crate) no_hooks: bool,
}

/// A render error for what the native renderer does not implement.
pub(in crate::render::helm) fn not_supported(what: &str) -> RenderError {
    RenderError::unsupported(format!("not supported natively: {what}"))
}

/// helm's own failure, worded as the binary path words it.
pub(in crate::render::helm) fn helm_error(chart_dir: &str, msg: &str) -> RenderError {
    RenderError::content(format!(
        "helm template `{}`: Error: {msg}",
        super::super::display_path(chart_dir)
    ))
}

/// `pkg/cli/values/options.go` `MergeValues`: value files in order, then
/// `--set`, `--set-string`, `--set-file`.
fn merge_user_values(inp: &Inputs<'_>) -> Result<Map, String> {
    let mut base = Map::new();
    for (shown, bytes) in &inp.value_files {
        let text = std::str::from_utf8(bytes)
            .map_err(|e| format!("failed to parse {shown}: not UTF-8: {e}"))?;
        // `chartutil.ReadValues`: sigs.k8s.io/yaml reads the first document.
        let doc =
            crate::yaml::load_first_sigs(text, &crate::yaml::Limits::default()).map_err(|e| {
                format!(
                    "failed to parse {shown}: error converting YAML to JSON: {}",
                    e.go_yaml_text()
                )
            })?;
        match V::from_json(&doc) {
            V::Map(m) => values::merge_maps(&mut base, m.into_entries()),
            V::Nil => {}
            _ => {
                return Err(format!(
                    "failed to parse {shown}: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    if doc.is_array() { "array" } else if doc.is_string() { "string" } else if doc.is_number() { "number" } else { "bool" }
                ))
            }
        }
    }
    for s in &inp.set {
        strvals::parse_into(s, &mut base, strvals::Reader::Typed)
            .map_err(|e| format!("failed parsing --set data: {e}"))?;
    }
    for s in &inp.set_string {
        strvals::parse_into(s, &mut base, strvals::Reader::Strings)
            .map_err(|e| format!("failed parsing --set-string data: {e}"))?;
    }
    let read = |p: &str| -> Result<V, String> {
        match inp.set_file_contents.get(p) {
            Some(b) => Ok(V::Str(String::from_utf8_lossy(b).into_owned())),
            None => Err(format!("open {p}: no such file or directory")),
        }
    };
    for s in &inp.set_file {
        strvals::parse_into(s, &mut base, strvals::Reader::File(&read))
            .map_err(|e| format!("failed parsing --set-file data: {e}"))?;
    }
    Ok(base)
}

/// `chartutil.ParseKubeVersion`: `v<major>.<minor>.<patch>…`.
fn parse_kube_version(v: &str) -> Result<String, String> {
    // `"v" + sv.String()`: build metadata (`+k3s1`) is kept.
    Ok(format!("v{}", Version::parse(v)?))
}

/// Renders the chart as `helm template` would print it.
///
/// # Errors
/// helm's own failures (worded as helm words them), or "not supported
/// natively" for what is not implemented.
pub(in crate::render::helm) fn template(
    cx: &RenderContext<'_>,
    inp: &Inputs<'_>,
) -> Result<String, RenderError> {
    let fail = |m: String| helm_error(inp.chart_dir, &m);
    let kube_version = match inp.kube_version {
        Some(v) => {
            parse_kube_version(v).map_err(|e| fail(format!("invalid kube version '{v}': {e}")))?
        }
        None => DEFAULT_KUBE_VERSION.to_string(),
    };
    let vals = merge_user_values(inp).map_err(fail)?;
    let mut chart = chart::load(cx, inp.chart_dir, inp.build).map_err(|e| {
        if e.kind == super::super::RenderErrorKind::Content {
            fail(e.message)
        } else {
            e
        }
    })?;
    if !matches!(chart.metadata.chart_type.as_str(), "" | "application") {
        return Err(fail(format!(
            "{} charts are not installable",
            chart.metadata.chart_type
        )));
    }
    if let Some(reqs) = &chart.metadata.dependencies {
        let missing: Vec<&str> = reqs
            .iter()
            .filter(|r| !chart.dependencies.iter().any(|d| d.name() == r.name))
            .map(|r| r.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(fail(format!(
                "An error occurred while checking for chart dependencies. You may need to run `helm dependency build` to fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: {}",
                missing.join(", ")
            )));
        }
    }
    values::process_dependencies(&mut chart, &vals).map_err(fail)?;
    let coalesced = values::coalesce_values(&chart, &vals).map_err(fail)?;
    if !inp.skip_schema_validation {
        check_schemas(inp, &chart, &coalesced)?;
    }
    if !chart.metadata.kube_version.is_empty()
        && !values::is_compatible_range(&chart.metadata.kube_version, &kube_version)
    {
        return Err(fail(format!(
            "chart requires kubeVersion: {} which is incompatible with Kubernetes {kube_version}",
            chart.metadata.kube_version
        )));
    }
    let volatile = objects::Volatile::default();
    let top = engine::Top {
        release: release_value(inp),
        capabilities: objects::capabilities(&kube_version, inp.api_versions, &volatile),
        volatile,
        variant: cx.variant,
        generated: std::sync::atomic::AtomicBool::new(false),
    };
    let rendered = engine::render(cx.cache, &chart, &coalesced, &top, inp.chart_dir);
    if top.generated.load(std::sync::atomic::Ordering::Relaxed) {
        cx.mark_generated();
    }
    let mut rendered = rendered?;
    // `renderResources`: NOTES.txt is never a manifest.
    rendered.retain(|k, _| !k.ends_with("NOTES.txt"));
    let (generic, hooks) = manifests::sort_manifests(&rendered).map_err(fail)?;
    let crds = if inp.include_crds {
        chart.crd_objects(chart.name())
    } else {
        Vec::new()
    };
    // `pkg/action/install.go`: with `DisableHooks` no hook is printed.
    let hooks = if inp.no_hooks { Vec::new() } else { hooks };
    Ok(manifests::assemble(&crds, &generic, &hooks, inp.skip_tests))
}

/// Whether a template of the chart at `chart_dir`, or of one of its
/// subcharts, names one of Sprig's random or clock functions: the pinned
/// helm then draws new values at every run, and the render is repeated to
/// find the fields they fill (see `render::generated`). A chart the native
/// loader cannot read is taken to name none.
pub(in crate::render::helm) fn names_generators(
    cx: &RenderContext<'_>,
    chart_dir: &str,
    build: Option<&Build>,
) -> bool {
    fn any(c: &chart::Chart, re: &regex::Regex) -> bool {
        c.templates
            .iter()
            .any(|t| re.is_match(&String::from_utf8_lossy(&t.data)))
            || c.dependencies.iter().any(|d| any(d, re))
    }
    static RE: std::sync::OnceLock<Option<regex::Regex>> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        let names = crate::gotemplate::generator_names().join("|");
        regex::Regex::new(&format!(r"\b(?:{names})\b")).ok()
    });
    let Some(re) = re else { return false };
    chart::load(cx, chart_dir, build).is_ok_and(|c| any(&c, re))
}

/// `.Release` (`chartutil.ToRenderValues`): a first install.
fn release_value(inp: &Inputs<'_>) -> V {
    V::Map(
        [
            ("Name".to_string(), V::Str(inp.release.to_string())),
            (
                "Namespace".to_string(),
                V::Str(release_namespace(inp).to_string()),
            ),
            ("IsUpgrade".to_string(), V::Bool(false)),
            ("IsInstall".to_string(), V::Bool(true)),
            ("Revision".to_string(), V::Int(1)),
            ("Service".to_string(), V::Str("Helm".to_string())),
        ]
        .into(),
    )
}

/// `.Release.Namespace`: `--namespace`, else helm's `default` (no
/// kubeconfig is read).
fn release_namespace<'a>(inp: &Inputs<'a>) -> &'a str {
    if inp.namespace.is_empty() {
        "default"
    } else {
        inp.namespace
    }
}

/// `ValidateAgainstSchema` (`pkg/chartutil/jsonschema.go`): the chart's
/// schema against its values, then each subchart's against the subchart's,
/// every failing chart's errors in that order under its name, as
/// `- field: description` lines.
fn check_schemas(inp: &Inputs<'_>, c: &chart::Chart, values: &Map) -> Result<(), RenderError> {
    let mut failures = String::new();
    collect_schema_failures(c, values, &mut failures)?;
    if failures.is_empty() {
        return Ok(());
    }
    Err(helm_error(
        inp.chart_dir,
        &format!(
            "values don't meet the specifications of the schema(s) in the following chart(s):\n{}",
            failures.trim_end()
        ),
    ))
}

fn collect_schema_failures(
    c: &chart::Chart,
    values: &Map,
    out: &mut String,
) -> Result<(), RenderError> {
    if let Some(bytes) = &c.schema {
        let Ok(doc) = serde_json::from_slice::<serde_json::Value>(bytes) else {
            return Err(not_supported(&format!(
                "a values.schema.json of `{}` that is not JSON",
                c.name()
            )));
        };
        match schema::validate(&doc, &V::map(values.clone()).to_json()) {
            schema::Verdict::Valid => {}
            schema::Verdict::Invalid(Ok(line)) => {
                out.push_str(&format!("{}:\n- {line}\n", c.name()));
            }
            schema::Verdict::Invalid(Err(_)) => {
                return Err(not_supported(&format!(
                    "the values fail values.schema.json of `{}`, and helm's message (gojsonschema's wording) is not reproduced",
                    c.name()
                )))
            }
            schema::Verdict::Unsupported(what) => {
                return Err(not_supported(&format!(
                    "{what} in values.schema.json of `{}`",
                    c.name()
                )))
            }
        }
    }
    for sub in &c.dependencies {
        let sv = match values.get(sub.name()) {
            Some(V::Map(m)) => m.entries().as_ref().clone(),
            _ => Map::new(),
        };
        collect_schema_failures(sub, &sv, out)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_kube_version;

    #[test]
    fn kube_version_keeps_its_build_metadata_as_helm_prints_it() {
        // chartutil.ParseKubeVersion: "v" + semver's String().
        assert_eq!(parse_kube_version("1.29").as_deref(), Ok("v1.29.0"));
        assert_eq!(
            parse_kube_version("v1.29.3+k3s1").as_deref(),
            Ok("v1.29.3+k3s1")
        );
        assert_eq!(
            parse_kube_version("1.29.x"),
            Err("Invalid Semantic Version".to_string())
        );
    }
}
