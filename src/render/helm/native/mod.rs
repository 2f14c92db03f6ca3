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
//! (GL000), never a partial render: values a `values.schema.json` refuses
//! where helm's message is not reproduced (see [`schema`] and
//! [`schema6`]), what Go does not determine
//! (see [`objects`]), and the Sprig functions the template engine does not
//! implement (see [`engine`]).

pub(in crate::render::helm) mod chart;
mod engine;
#[cfg(any(test, feature = "fuzz"))]
pub(crate) use engine::RENDER_BUDGET;
pub(in crate::render::helm) mod manifests;
mod objects;
mod schema;
mod schema6;
mod schema6_num;
mod schema_format;
pub(in crate::render::helm) mod strvals;
pub(in crate::render::helm) mod values;
mod version;
pub use version::HelmLine;

use std::collections::BTreeMap;
use std::sync::Arc;

use super::super::{RenderContext, RenderError};
use super::dependencies::Build;
use gotemplate::V;
use values::Map;

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
    /// The helm release rendered as (from `argocdVersion`).
    pub(crate) line: HelmLine,
}

/// The start of every message for what the native renderer does not
/// implement.
const NOT_SUPPORTED: &str = "not supported natively: ";

/// How a user renders a chart with the helm binary instead.
const FALL_BACK: &str =
    "`--helm-renderer binary` or `helmRenderer: binary` in .gitops-lint.yaml renders it with the helm binary";

/// A render error for what the native renderer does not implement: it is
/// the renderer's limit, not the chart's, and says how to fall back.
pub(in crate::render::helm) fn not_supported(what: &str) -> RenderError {
    RenderError::unsupported(format!(
        "{NOT_SUPPORTED}{what} (a limit of gitops-lint's native Helm renderer, not an error of the chart; {FALL_BACK})"
    ))
}

/// Whether `e` says the native renderer does not implement something (and
/// the pinned helm may render the chart), rather than that the chart fails.
pub(in crate::render::helm) fn is_not_supported(e: &RenderError) -> bool {
    e.kind == crate::render::RenderErrorKind::Unsupported && e.message.starts_with(NOT_SUPPORTED)
}

/// A failure the native renderer finds where helm fails too, with helm's
/// message (`msg`): said as the native renderer's, since no helm ran, with
/// the way to check it with helm.
pub(in crate::render::helm) fn helm_error(chart_dir: &str, msg: &str) -> RenderError {
    RenderError::content(format!(
        "native Helm render of `{}` failed as `helm template` fails: Error: {msg} (if helm renders this chart, {FALL_BACK})",
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
        let doc = goyaml::load_first_sigs(text, &goyaml::Limits::default()).map_err(|e| {
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
        Some(v) => version::parse_kube_version(inp.line, v)
            .map_err(|e| fail(format!("invalid kube version '{v}': {e}")))?,
        None => {
            let d = inp.line.default_kube_version().to_string();
            (d.clone(), d)
        }
    };
    let vals = merge_user_values(inp).map_err(fail)?;
    let mut chart = chart::load(cx, inp.chart_dir, inp.build, inp.line).map_err(|e| {
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
            // Helm 4 lowercases the first word (`pkg/cmd/install.go`
            // `runInstall` at v4.2.1; helm v4.1.4 prints `an error occurred`).
            let first = if inp.line >= HelmLine::V4 { "an" } else { "An" };
            return Err(fail(format!(
                "{first} error occurred while checking for chart dependencies. You may need to run `helm dependency build` to fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: {}",
                missing.join(", ")
            )));
        }
    }
    let nulls = if inp.line >= HelmLine::V4 {
        values::Nulls::Helm4
    } else {
        values::Nulls::Helm3
    };
    // Helm 4's `coalesceTablesFullKey` also writes the nulls of the table
    // merged into over the one merged from, which `import-values` takes
    // from the subcharts' own values: that sharing is not followed.
    if nulls == values::Nulls::Helm4 && imports_values(&chart) && chart_has_null(&chart) {
        return Err(not_supported(
            "null values in a chart with `import-values`, merged as helm v4.2.1 merges them",
        ));
    }
    values::process_dependencies(&mut chart, &vals, nulls).map_err(fail)?;
    let coalesced = values::coalesce_values(&chart, &vals, nulls).map_err(fail)?;
    if !inp.skip_schema_validation {
        // helm v3.19 validates with santhosh-tekuri/jsonschema/v6 instead of
        // gojsonschema (`pkg/chartutil/jsonschema.go` at v3.19.4,
        // `pkg/chart/common/util/jsonschema.go` at v4.2.1).
        if inp.line >= HelmLine::V3_19 {
            check_schemas(inp, &chart, &coalesced, collect_schema6_failures)?;
        } else {
            check_schemas(inp, &chart, &coalesced, collect_schema_failures)?;
        }
    }
    // `IsCompatibleRange(..., caps.KubeVersion.String())`: Helm 4 checks and
    // prints the normalized version.
    if !chart.metadata.kube_version.is_empty()
        && !values::is_compatible_range(&chart.metadata.kube_version, &kube_version.1)
    {
        return Err(fail(format!(
            "chart requires kubeVersion: {} which is incompatible with Kubernetes {}",
            chart.metadata.kube_version, kube_version.1
        )));
    }
    let volatile = objects::Volatile::default();
    let top = engine::Top {
        release: release_value(inp),
        capabilities: objects::capabilities(&kube_version, inp.api_versions, &volatile, inp.line),
        volatile,
        variant: cx.variant,
        generated: std::sync::atomic::AtomicBool::new(false),
        line: inp.line,
    };
    let rendered = engine::render(cx.cache, &chart, &coalesced, &top, inp.chart_dir);
    if top.generated.load(std::sync::atomic::Ordering::Relaxed) {
        cx.mark_generated();
    }
    let mut rendered = rendered?;
    // `renderResources`: NOTES.txt is never a manifest.
    rendered.retain(|k, _| !k.ends_with("NOTES.txt"));
    let (generic, hooks) = manifests::sort_manifests(&rendered, inp.line).map_err(fail)?;
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
        let names = gotemplate::generator_names().join("|");
        regex::Regex::new(&format!(r"\b(?:{names})\b")).ok()
    });
    let Some(re) = re else { return false };
    // The pinned helm binary is v3.17.1.
    chart::load(cx, chart_dir, build, HelmLine::V3_17).is_ok_and(|c| any(&c, re))
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

/// Whether a chart of `c`'s tree has a null among its default values.
fn chart_has_null(c: &chart::Chart) -> bool {
    c.values.values().any(has_null) || c.dependencies.iter().any(chart_has_null)
}

/// Whether a chart of `c`'s tree imports values from a subchart.
fn imports_values(c: &chart::Chart) -> bool {
    c.metadata
        .dependencies
        .iter()
        .flatten()
        .any(|d| !d.import_values.is_empty())
        || c.dependencies.iter().any(imports_values)
}

fn has_null(v: &V) -> bool {
    match v {
        V::Nil => true,
        // Coalescing does not look into lists.
        V::Map(m) => m.entries().values().any(has_null),
        _ => false,
    }
}

/// `ValidateAgainstSchema` (`pkg/chartutil/jsonschema.go`): the chart's
/// schema against its values, then each subchart's against the subchart's,
/// every failing chart's errors in that order under its name, as
/// `- field: description` lines.
fn check_schemas(
    inp: &Inputs<'_>,
    c: &chart::Chart,
    values: &Map,
    collect: fn(&chart::Chart, &Map, &mut String) -> Result<(), RenderError>,
) -> Result<(), RenderError> {
    let mut failures = String::new();
    collect(c, values, &mut failures)?;
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

/// A chart's `values.schema.json`, parsed.
fn schema_doc(c: &chart::Chart) -> Result<Option<serde_json::Value>, RenderError> {
    let Some(bytes) = &c.schema else {
        return Ok(None);
    };
    serde_json::from_slice(bytes).map(Some).map_err(|_| {
        not_supported(&format!(
            "a values.schema.json of `{}` that is not JSON",
            c.name()
        ))
    })
}

/// Adds chart `c`'s failure to `out` as helm prints it (the chart's name,
/// then `message` of the validator's text), or refuses what the validator
/// (`library`) would word otherwise or cannot judge.
fn record_verdict(
    c: &chart::Chart,
    verdict: schema::Verdict,
    library: &str,
    message: impl Fn(&str) -> String,
    out: &mut String,
) -> Result<(), RenderError> {
    match verdict {
        schema::Verdict::Valid => Ok(()),
        schema::Verdict::Invalid(Ok(text)) => {
            out.push_str(&format!("{}:\n{}\n", c.name(), message(&text)));
            Ok(())
        }
        schema::Verdict::Invalid(Err(_)) => Err(not_supported(&format!(
            "the values fail values.schema.json of `{}`, and helm's message ({library}'s wording) is not reproduced",
            c.name()
        ))),
        schema::Verdict::Unsupported(what) => Err(not_supported(&format!(
            "{what} in values.schema.json of `{}`",
            c.name()
        ))),
    }
}

fn collect_schema_failures(
    c: &chart::Chart,
    values: &Map,
    out: &mut String,
) -> Result<(), RenderError> {
    if let Some(doc) = schema_doc(c)? {
        let verdict = schema::validate(&doc, &V::map(values.clone()).to_json());
        record_verdict(c, verdict, "gojsonschema", |line| format!("- {line}"), out)?;
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

/// `ValidateAgainstSchema` of helm v3.19.4 and v4.2.1: the chart's schema
/// (jsonschema/v6's message under the chart's name), then each subchart
/// whose values are set, against them.
fn collect_schema6_failures(
    c: &chart::Chart,
    values: &Map,
    out: &mut String,
) -> Result<(), RenderError> {
    if let Some(doc) = schema_doc(c)? {
        let verdict = schema6::validate(&doc, &V::map(values.clone()));
        record_verdict(c, verdict, "jsonschema/v6", str::to_string, out)?;
    }
    for sub in &c.dependencies {
        match values.get(sub.name()) {
            // No values: nothing is validated, the subchart's own
            // subcharts neither.
            None | Some(V::Nil) => {}
            Some(V::Map(m)) => collect_schema6_failures(sub, m.entries().as_ref(), out)?,
            Some(_) => {
                return Err(not_supported(&format!(
                    "values of subchart `{}` that are not a map (helm reports their Go type)",
                    sub.name()
                )))
            }
        }
    }
    Ok(())
}
