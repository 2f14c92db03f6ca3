//! Templates rendered as helm v3.17's engine renders them
//! (`pkg/engine/engine.go`): every template of the chart and of each
//! enabled subchart in one Go template set named `gotpl`, parsed deepest
//! path first (`sortTemplates`), each non-partial executed with its chart's
//! objects (`recAllTpls`: `.Values` scoped to the subchart, `.Chart` with
//! `IsRoot`, `.Release`, `.Capabilities`, `.Subcharts`, `.Template`) and
//! `missingkey=zero`, `<no value>` removed from the output; errors cleaned
//! up as `cleanupParseError` and `cleanupExecError` do.
//!
//! `.Capabilities`, `.Files` and `.Chart` are host objects with their Go
//! methods, printing and JSON ([`super::objects`]); a render that read what
//! Go does not determine (an address, a map order) is refused once its
//! template has run. Random values and the clock come from a seeded
//! [`Generator`] per template, of the render's [`Variant`]. What is not
//! modelled faithfully yet is refused before anything runs: the top-level object serialized whole, and changes to a
//! map in place.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use regex::Regex;

use super::chart::Chart;
use super::objects::Volatile;
use super::values::Map;
use super::{helm_error, not_supported};
use crate::limits::BEYOND_LIMITS;
use crate::render::{ParseCache, RenderError};
use gotemplate::{Budget, FuncSet, Generator, MissingKey, SharedMap, TemplateSet, Variant, V};
use sha2::Digest as _;

/// One template to parse and, unless a partial, execute.
struct Renderable {
    src: String,
    /// Its chart's top-level object, one map for all the chart's templates
    /// (Helm's `next`, which `render` gives each its `Template` in turn).
    vals: SharedMap,
    base_path: String,
}

/// What every template sees the same: `.Release` and `.Capabilities`.
pub(super) struct Top {
    /// `.Release`.
    pub(crate) release: V,
    /// `.Capabilities`.
    pub(crate) capabilities: V,
    /// What the render read that Go does not determine.
    pub(crate) volatile: Volatile,
    /// Which render random values and the clock are drawn for.
    pub(crate) variant: Variant,
    /// Whether a template drew a random value or the clock.
    pub(crate) generated: AtomicBool,
    /// The helm release rendered as.
    pub(crate) line: super::HelmLine,
}

/// `recAllTpls`: the templates of `c` (at `full_path`) and its subcharts,
/// with the objects each sees; returns `c`'s objects (for `.Subcharts`).
/// Go's maps are references, and so are these: `values` is shared with
/// the parent's `.Values` (`values.Table("Values." + c.Name())` returns the
/// parent's own map), the objects with every template of the chart and the
/// parent's `.Subcharts`, so a change a template makes to them shows in the
/// templates executed after it.
fn all_templates(
    c: &Chart,
    full_path: &str,
    is_root: bool,
    values: &V,
    top: &Top,
    out: &mut BTreeMap<String, Renderable>,
) -> SharedMap {
    let mut next = Map::new();
    next.insert(
        "Chart".into(),
        super::objects::chart(&c.metadata, is_root, &top.volatile, top.line),
    );
    next.insert("Release".into(), top.release.clone());
    next.insert("Capabilities".into(), top.capabilities.clone());
    // Every chart's `.Values` is a `chartutil.Values`, with its methods.
    if let V::Map(m) = values {
        m.mark_values_table();
    }
    next.insert("Values".into(), values.clone());
    next.insert(
        "Files".into(),
        super::objects::files(&c.files, &top.volatile),
    );
    let mut subcharts = Map::new();
    for child in &c.dependencies {
        // No table there: a new empty map (`make(chartutil.Values)`).
        let child_values = match values {
            V::Map(m) => match m.get(child.name()) {
                Some(v @ V::Map(_)) => v,
                _ => V::map(Map::new()),
            },
            _ => V::map(Map::new()),
        };
        let child_path = format!("{full_path}/charts/{}", child.name());
        let objects = all_templates(child, &child_path, false, &child_values, top, out);
        subcharts.insert(child.name().to_string(), V::Map(objects));
    }
    next.insert("Subcharts".into(), V::map(subcharts));
    let next = SharedMap::new(next);
    let library = c.metadata.chart_type == "library";
    for t in &c.templates {
        let base = t.name.rsplit('/').next().unwrap_or(&t.name);
        // `isTemplateValid`: a library chart contributes partials only.
        if library && !base.starts_with('_') {
            continue;
        }
        out.insert(
            format!("{full_path}/{}", t.name),
            Renderable {
                src: String::from_utf8_lossy(&t.data).into_owned(),
                vals: next.clone(),
                base_path: format!("{full_path}/templates"),
            },
        );
    }
    next
}

/// The values a render starts from: a copy sharing no map with `values`
/// (a template may change them), with the sharing of `values` kept (a
/// table nested in one of `global` is one map for a chart and its
/// subcharts, see `values::coalesce_globals`).
fn render_values(values: &Map) -> Option<V> {
    /// Deeper than any values document may nest (YAML loading stops sooner).
    const DEPTH: usize = 10_000;
    V::map(values.clone()).copy_keeping_sharing(DEPTH)
}

/// What the engine cannot evaluate faithfully yet, if `src` uses it.
fn unsupported_use(src: &str) -> Option<String> {
    static RE: OnceLock<Option<Regex>> = OnceLock::new();
    // `toYaml $`, `{{ $ }}`: the top-level object serialized whole. (`.` is
    // the top-level object only outside `with`/`range` and in what it is
    // passed to, which a scan cannot tell; `toYaml .` there is not caught.)
    let whole = RE.get_or_init(|| {
        Regex::new(
            r"(?:\b(?:toYaml|toJson|toPrettyJson|toRawJson|mustToYaml|mustToJson|mustToPrettyJson|mustToRawJson|toString|print|println|printf|toToml)\s+\$|\{\{-?\s*\$\s*-?\}\})(?:[\s)}|]|$)",
        )
        .ok()
    });
    let Some(whole) = whole else {
        return Some("templates".into());
    };
    if whole.is_match(src) {
        return Some("the top-level object serialized whole".into());
    }
    None
}

/// `cleanupParseError`.
fn parse_error(filename: &str, err: &str) -> String {
    let tokens: Vec<&str> = err.split(": ").collect();
    if tokens.len() == 1 {
        return format!("parse error in ({filename}): {err}");
    }
    format!(
        "parse error at ({}): {}",
        tokens[1],
        tokens.last().copied().unwrap_or_default()
    )
}

/// `cleanupExecError` (the engine's execution errors are Go's
/// `ExecError`s when they read `template: NAME:LINE:COL: executing …`).
fn exec_error(filename: &str, err: &str) -> String {
    if !is_exec_error(err) {
        return err.to_string();
    }
    let tokens: Vec<&str> = err.splitn(3, ": ").collect();
    if tokens.len() != 3 {
        return format!("execution error in ({filename}): {err}");
    }
    if let Some(start) = tokens[2].find("HELM_ERR_START") {
        let rest = &tokens[2][start + "HELM_ERR_START".len()..];
        if let Some(end) = rest.rfind("HELM_ERR_END") {
            return format!("execution error at ({}): {}", tokens[1], &rest[..end]);
        }
    }
    err.to_string()
}

/// Whether the engine's message `err` is one of Go's `ExecError`s:
/// `template: NAME:LINE:COL: executing …`.
fn is_exec_error(err: &str) -> bool {
    err.starts_with("template: ") && err.contains(": executing ")
}

/// Helm 4's `reformatExecErrorMsg` (`pkg/engine/engine.go`, the same at
/// v4.1.4 and v4.2.1): `fail`'s and `required`'s message as Helm 3 gives
/// it; any other execution error walked along Go's wrapped errors, each
/// link read as a `TraceableError` (`parseTemplateExecErrorString`) and
/// printed as a location, the `executing …` line and the message,
/// indented; when one link does not read as a template error (a function's
/// own error: `index out of range`, `tpl`'s), the error unchanged. The
/// links are found in the message itself: text/template's `evalCall` wraps
/// a function's error (`error calling NAME: %w`), `include` passes the
/// nested template's error on, and no other execution error wraps one.
/// `Err` when the message cannot be split as Go's error values are: a
/// node's context (at most 20 characters and `...`, `ErrorContext`)
/// holding `>: ` itself.
fn exec_error_v4(filename: &str, err: &str) -> Result<String, String> {
    // `fail`'s and `required`'s, and what is no `ExecError`, as Helm 3.
    if !is_exec_error(err) || err.contains("HELM_ERR_START") || err.splitn(3, ": ").count() != 3 {
        return Ok(exec_error(filename, err));
    }
    let mut links: Vec<Traceable<'_>> = Vec::new();
    let mut current = Some(err);
    while let Some(text) = current {
        let Some((link, wrapped)) = Traceable::parse(text)? else {
            return Ok(err.to_string());
        };
        // An `ExecError` and the error it holds read the same.
        if links.last() != Some(&link) {
            links.push(link);
        }
        current = wrapped;
    }
    let mut out = String::new();
    for l in &links {
        if !l.location.is_empty() {
            out.push_str(l.location);
            out.push_str("\n  ");
        }
        if let Some(f) = &l.executed {
            out.push_str(f);
            out.push_str("\n    ");
        }
        if !l.message.is_empty() {
            out.push_str(l.message);
            out.push('\n');
        }
    }
    Ok(out.trim().to_string())
}

/// Helm 4's `TraceableError`: one link of an execution error.
#[derive(Debug, PartialEq, Eq)]
struct Traceable<'a> {
    location: &'a str,
    message: &'a str,
    /// `executing "NAME" at <CONTEXT>:`.
    executed: Option<String>,
}

impl<'a> Traceable<'a> {
    /// `parseTemplateExecErrorString` of `s`, with the error `s` wraps;
    /// `None` when `s` is no template error.
    #[allow(clippy::type_complexity)]
    fn parse(s: &'a str) -> Result<Option<(Traceable<'a>, Option<&'a str>)>, String> {
        let Some(rest) = s.strip_prefix("template: ") else {
            return Ok(None);
        };
        // `no template %q associated with template %q` (exec.go).
        if rest.starts_with("no template ") {
            let link = Traceable {
                location: "",
                message: s,
                executed: None,
            };
            return Ok(Some((link, None)));
        }
        if let Some(found) = Self::executing(rest)? {
            return Ok(Some(found));
        }
        // `<templateName>: <errMsg>`, split at the last `: `.
        let Some(sep) = rest.rfind(": ") else {
            return Ok(None);
        };
        let message = &rest[sep + 2..];
        let message = message
            .find(" template:")
            .map_or(message, |cut| &message[..cut]);
        let link = Traceable {
            location: &rest[..sep],
            message,
            executed: None,
        };
        Ok(Some((link, None)))
    }

    /// `parseTemplateExecutingAtErrorType`: `<templateName>: executing
    /// "<funcName>" at <<context>>: <errMsg>`.
    #[allow(clippy::type_complexity)]
    fn executing(rest: &'a str) -> Result<Option<(Traceable<'a>, Option<&'a str>)>, String> {
        let Some((location, after)) = rest.split_once(": executing ") else {
            return Ok(None);
        };
        let Some(after) = after.strip_prefix('"') else {
            return Ok(None);
        };
        let Some(end) = after.find('"') else {
            return Ok(None);
        };
        let function = &after[..end];
        let Some(at) = after[end + 1..].strip_prefix(" at <") else {
            return Ok(None);
        };
        let Some((context, message)) = at.split_once(">: ") else {
            return Ok(None);
        };
        // The context is at most 20 characters and `...`: a second `>: `
        // within that reach may be where it ends, and which one is is not
        // in the text.
        let after_first = context.len() + 3;
        let second = at[after_first..].find(">: ").map(|p| after_first + p);
        if second.is_some_and(|p| at[..p].chars().count() <= 23) {
            return Err(format!(
                "helm v4's wording of an execution error whose template context holds `>: ` ({rest})"
            ));
        }
        let wrapped = message
            .strip_prefix("error calling ")
            .and_then(|m| m.split_once(": "))
            .map(|(_, inner)| inner);
        let shown = message
            .find(" template:")
            .map_or(message, |cut| &message[..cut]);
        let link = Traceable {
            location,
            message: shown,
            executed: Some(format!("executing \"{function}\" at <{context}>:")),
        };
        Ok(Some((link, wrapped)))
    }
}

/// An engine message that says it cannot evaluate something.
fn engine_refuses(msg: &str) -> bool {
    msg.contains("not supported by gitops-lint")
}

/// Work one chart's render may do, across all its templates (each is also
/// held to [`Budget::PER_EXECUTION`]): template steps, and bytes of values
/// and rendered text. A chart of many templates cannot add up to an
/// unbounded render; kube-prometheus-stack, the corpus's largest, takes a
/// small part of it.
pub(crate) const RENDER_BUDGET: Budget = Budget {
    steps: 50_000_000,
    bytes: 512 << 20,
};

/// `Engine.Render`: each executed template's output by its path
/// (`chart/templates/x.yaml`).
///
/// # Errors
/// helm's parse and execution errors, or what is not supported natively.
pub(super) fn render(
    cache: &ParseCache,
    chart: &Chart,
    values: &Map,
    top: &Top,
    chart_dir: &str,
) -> Result<BTreeMap<String, String>, RenderError> {
    render_within(cache, chart, values, top, chart_dir, RENDER_BUDGET)
}

/// [`render`] held to `limit` across all templates.
fn render_within(
    cache: &ParseCache,
    chart: &Chart,
    values: &Map,
    top: &Top,
    chart_dir: &str,
    limit: Budget,
) -> Result<BTreeMap<String, String>, RenderError> {
    let Some(values) = render_values(values) else {
        return Err(not_supported(
            "values nesting deeper than gitops-lint copies",
        ));
    };
    let mut tpls = BTreeMap::new();
    all_templates(chart, chart.name(), true, &values, top, &mut tpls);
    // `sortTemplates`: most path segments first, then reverse lexical.
    let mut keys: Vec<&String> = tpls.keys().collect();
    keys.sort_by(|a, b| {
        let (ca, cb) = (a.matches('/').count(), b.matches('/').count());
        cb.cmp(&ca).then_with(|| b.cmp(a))
    });
    // The set depends on the templates' names and sources alone, so
    // every render of the same chart content shares one parse.
    let mut digest = sha2::Sha256::new();
    digest.update([top.line as u8]);
    for k in &keys {
        for part in [k.as_bytes(), tpls[*k].src.as_bytes()] {
            digest.update(part.len().to_le_bytes());
            digest.update(part);
        }
    }
    let set = cache.template_set(digest.finalize().into(), || {
        // What depends on the sources alone is judged once per content.
        for (name, r) in &tpls {
            if let Some(what) = unsupported_use(&r.src) {
                return Err(not_supported(&format!("{what} in `{name}`")));
            }
        }
        let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero)
            .with_helm_gen(top.line.template_gen());
        for k in &keys {
            if let Err(e) = set.add(k, &tpls[*k].src) {
                if engine_refuses(&e) {
                    return Err(not_supported(&e));
                }
                return Err(helm_error(chart_dir, &parse_error(k, &e)));
            }
        }
        Ok(set)
    })?;
    let mut rendered = BTreeMap::new();
    let mut budget = limit;
    let exhausted = |k: &str| {
        RenderError::content(format!(
            "rendering `{k}` exceeds gitops-lint's budget for one chart of {} template steps and {} MiB of values and rendered text {BEYOND_LIMITS}",
            limit.steps,
            limit.bytes >> 20
        ))
    };
    for k in keys {
        let base = k.rsplit('/').next().unwrap_or(k);
        if base.starts_with('_') {
            continue;
        }
        let r = &tpls[k];
        let template = V::Map(
            [
                ("Name".to_string(), V::Str(k.clone())),
                ("BasePath".to_string(), V::Str(r.base_path.clone())),
            ]
            .into(),
        );
        // `vals["Template"] = ...` on the chart's shared object, as Helm does.
        if let Err(e) = r.vals.update(|m| m.insert("Template".into(), template)) {
            return Err(not_supported(&e));
        }
        let generator = Generator::new(k, top.variant);
        let result = set.execute_generating(k, &V::Map(r.vals.clone()), &mut budget, &generator);
        if generator.used() {
            top.generated.store(true, Ordering::Relaxed);
        }
        if let Some(why) = top.volatile.take() {
            return Err(not_supported(&format!("{why} in `{k}`")));
        }
        match result {
            Ok(out) => {
                if out.len() > budget.bytes {
                    return Err(exhausted(k));
                }
                budget.bytes -= out.len();
                rendered.insert(k.clone(), out.replace("<no value>", ""));
            }
            Err(_) if budget.steps == 0 || budget.bytes == 0 => return Err(exhausted(k)),
            // gitops-lint's own limits are not an error of helm's.
            Err(e) if e.contains(BEYOND_LIMITS) => {
                return Err(RenderError::content(format!("`{k}`: {e}")))
            }
            Err(e) if engine_refuses(&e) => return Err(not_supported(&e)),
            Err(e) if top.line >= super::HelmLine::V4 => {
                return Err(match exec_error_v4(k, &e) {
                    Ok(msg) => helm_error(chart_dir, &msg),
                    Err(why) => not_supported(&why),
                })
            }
            Err(e) => return Err(helm_error(chart_dir, &exec_error(k, &e))),
        }
    }
    Ok(rendered)
}

#[cfg(test)]
mod tests {
    use super::super::chart::Metadata;
    use super::*;
    use crate::render::{RenderContext, RenderOptions};
    use crate::source::MemTree;

    /// Renders chart `c` of `files` (below `c/`) within `limit`.
    fn render_files(files: &[(&str, &str)], limit: Budget) -> Result<usize, String> {
        let mut all = vec![("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 0.1.0\n")];
        all.extend_from_slice(files);
        let bytes: Vec<(&str, &[u8])> = all.iter().map(|(p, t)| (*p, t.as_bytes())).collect();
        let tree = MemTree::new(&bytes);
        let (cache, options) = (ParseCache::default(), RenderOptions::default());
        let cx = RenderContext::new(&tree, &cache, &options);
        let chart = super::super::chart::load(&cx, "c", None, super::super::HelmLine::V4)
            .map_err(|e| e.message)?;
        let top = Top {
            release: V::Map(Map::new().into()),
            capabilities: super::super::objects::capabilities(
                &("v1.31.0".into(), "v1.31.0".into()),
                &[],
                &super::super::objects::Volatile::default(),
                super::super::HelmLine::V3_17,
            ),
            volatile: super::super::objects::Volatile::default(),
            variant: Variant::First,
            generated: AtomicBool::new(false),
            line: super::super::HelmLine::V3_17,
        };
        render_within(&cache, &chart, &Map::new(), &top, "c", limit)
            .map(|r| r.len())
            .map_err(|e| e.message)
    }

    #[test]
    fn one_budget_bounds_every_template_of_a_chart() {
        let busy = "{{ range until 3500 }}{{ end }}";
        let files = [
            ("c/templates/a.yaml", busy),
            ("c/templates/b.yaml", busy),
            ("c/templates/c.yaml", busy),
        ];
        let roomy = Budget {
            steps: 100_000,
            bytes: 1 << 20,
        };
        assert_eq!(render_files(&files, roomy), Ok(3));
        let tight = Budget {
            steps: 10_000,
            bytes: 1 << 20,
        };
        let err = render_files(&files, tight).expect_err("past the budget");
        assert!(
            err.starts_with("rendering `c/templates/")
                && err
                    .contains("exceeds gitops-lint's budget for one chart of 10000 template steps")
                && err.ends_with(BEYOND_LIMITS),
            "{err}"
        );
        // One execution past its own limit is gitops-lint's limit too, not
        // an error helm would give.
        let nested = "{{ range until 1000 }}{{ range until 1001 }}{{ end }}{{ end }}";
        let err = render_files(&[("c/templates/a.yaml", nested)], RENDER_BUDGET)
            .expect_err("past one execution's steps");
        assert!(
            err.starts_with("`c/templates/a.yaml`: template: c/templates/a.yaml:")
                && err.contains(BEYOND_LIMITS)
                && !err.contains("execution error at"),
            "{err}"
        );
    }

    #[test]
    fn errors_are_cleaned_up_as_helm_does() {
        assert_eq!(
            parse_error(
                "c/templates/a.yaml",
                "template: c/templates/a.yaml:3: unexpected \"}\" in operand"
            ),
            "parse error at (c/templates/a.yaml:3): unexpected \"}\" in operand"
        );
        assert_eq!(
            exec_error(
                "c/templates/d.yaml",
                "template: c/templates/d.yaml:1:6: executing \"c/templates/d.yaml\" at <required \"x\" .Values.x>: error calling required: HELM_ERR_STARTx is requiredHELM_ERR_END"
            ),
            "execution error at (c/templates/d.yaml:1:6): x is required"
        );
        let plain = "template: c/templates/d.yaml:1:6: executing \"c/templates/d.yaml\" at <.Values.a.b>: nil pointer evaluating interface {}.b";
        assert_eq!(exec_error("c/templates/d.yaml", plain), plain);
    }

    // Each pair: what the engine says, and what helm v4.1.4 printed after
    // `Error: ` for the chart whose template raised it (helm v3.17.1
    // printed the first unchanged).
    #[test]
    fn helm4_execution_errors_are_traced_as_helm_4_prints_them() {
        let d = "c/templates/d.yaml";
        let cases = [
            (
                r#"template: c/templates/d.yaml:1:13: executing "c/templates/d.yaml" at <.Values.a.b>: nil pointer evaluating interface {}.b"#,
                "c/templates/d.yaml:1:13\n  executing \"c/templates/d.yaml\" at <.Values.a.b>:\n    nil pointer evaluating interface {}.b",
            ),
            (
                r#"template: c/templates/d.yaml:1:6: executing "c/templates/d.yaml" at <include "x" .>: error calling include: template: c/templates/_h.tpl:1:19: executing "x" at <include "y" .>: error calling include: template: c/templates/_h.tpl:1:70: executing "y" at <.Values.a.b>: nil pointer evaluating interface {}.b"#,
                "c/templates/d.yaml:1:6\n  executing \"c/templates/d.yaml\" at <include \"x\" .>:\n    error calling include:\nc/templates/_h.tpl:1:19\n  executing \"x\" at <include \"y\" .>:\n    error calling include:\nc/templates/_h.tpl:1:70\n  executing \"y\" at <.Values.a.b>:\n    nil pointer evaluating interface {}.b",
            ),
            (
                r#"template: c/templates/d.yaml:1:6: executing "c/templates/d.yaml" at <include "nope" .>: error calling include: template: no template "nope" associated with template "gotpl""#,
                "c/templates/d.yaml:1:6\n  executing \"c/templates/d.yaml\" at <include \"nope\" .>:\n    error calling include:\ntemplate: no template \"nope\" associated with template \"gotpl\"",
            ),
            (
                r#"template: c/templates/d.yaml:1:12: executing "c/templates/d.yaml" at <"a">: expected integer; found "a""#,
                "c/templates/d.yaml:1:12\n  executing \"c/templates/d.yaml\" at <\"a\">:\n    expected integer; found \"a\"",
            ),
            // A function's own error is no template error: unchanged.
            (
                r#"template: c/templates/d.yaml:1:6: executing "c/templates/d.yaml" at <include "x" .>: error calling include: template: c/templates/_h.tpl:1:19: executing "x" at <index (list 1) 5>: error calling index: index out of range: 5"#,
                r#"template: c/templates/d.yaml:1:6: executing "c/templates/d.yaml" at <include "x" .>: error calling include: template: c/templates/_h.tpl:1:19: executing "x" at <index (list 1) 5>: error calling index: index out of range: 5"#,
            ),
            (
                r#"template: c/templates/d.yaml:1:6: executing "c/templates/d.yaml" at <tpl "{{ .Values.a.b }}" .>: error calling tpl: error during tpl function execution for "{{ .Values.a.b }}": template: gotpl:1:10: executing "gotpl" at <.Values.a.b>: nil pointer evaluating interface {}.b"#,
                r#"template: c/templates/d.yaml:1:6: executing "c/templates/d.yaml" at <tpl "{{ .Values.a.b }}" .>: error calling tpl: error during tpl function execution for "{{ .Values.a.b }}": template: gotpl:1:10: executing "gotpl" at <.Values.a.b>: nil pointer evaluating interface {}.b"#,
            ),
            // `fail` inside an `include`: as Helm 3 gives it.
            (
                r#"template: c/templates/d.yaml:1:6: executing "c/templates/d.yaml" at <include "x" .>: error calling include: template: c/templates/_h.tpl:1:19: executing "x" at <fail "boom">: error calling fail: HELM_ERR_STARTboomHELM_ERR_END"#,
                "execution error at (c/templates/d.yaml:1:6): boom",
            ),
        ];
        for (engine, helm) in cases {
            assert_eq!(exec_error_v4(d, engine).as_deref(), Ok(helm), "{engine}");
        }
        // Where the context may end is not in the text: refused.
        let hidden = r#"template: c/templates/d.yaml:1:6: executing "c/templates/d.yaml" at <include "a>: b" .>: error calling include: template: no template "a>: b" associated with template "gotpl""#;
        assert!(exec_error_v4(d, hidden).is_err());
        // A `>: ` beyond the context's reach is the message's own.
        let later = r#"template: c/templates/d.yaml:1:6: executing "c/templates/d.yaml" at <include "nope" .>: error calling include: template: no template "nope>: x" associated with template "gotpl""#;
        assert!(exec_error_v4(d, later).is_ok_and(
            |m| m.ends_with(r#"no template "nope>: x" associated with template "gotpl""#)
        ));
    }

    #[test]
    fn what_is_not_modelled_is_refused() {
        assert!(unsupported_use("x: {{ toYaml $ }}").is_some());
        assert!(unsupported_use("{{ with .Values.r }}{{ toYaml . }}{{ end }}").is_none());
        assert!(unsupported_use("x: {{ toYaml .Values }}").is_none());
        assert!(unsupported_use("{{ keys . | sortAlpha }}").is_none());
        assert_eq!(unsupported_use("{{ .Chart.Name }}-{{ .Values.x }}"), None);
    }

    fn chart(name: &str, templates: &[(&str, &str)], dependencies: Vec<Chart>) -> Chart {
        Chart {
            metadata: Metadata {
                name: name.into(),
                version: "1.0.0".into(),
                api_version: "v2".into(),
                ..Metadata::default()
            },
            templates: templates
                .iter()
                .map(|(n, src)| super::super::chart::ChartFile {
                    name: (*n).to_string(),
                    data: src.as_bytes().into(),
                })
                .collect(),
            dependencies,
            ..Chart::default()
        }
    }

    #[test]
    fn templates_share_values_and_objects_in_helm_order() {
        // Executed in sortTemplates order: the subchart's `c.yaml`, then the
        // parent's `z.yaml`, then `y.yaml`. The subchart's `.Values` is the
        // parent's `.Values.sub`; each chart's top-level object is one map,
        // also the parent's `.Subcharts.sub`.
        let sub = chart(
            "sub",
            &[(
                "templates/c.yaml",
                r#"{{ $_ := set .Values "fromSub" "s" }}c"#,
            )],
            Vec::new(),
        );
        let parent = chart(
            "p",
            &[
                (
                    "templates/z.yaml",
                    r#"{{ $_ := set .Values.sub "fromParent" "p" }}{{ $_ := set . "mark" "m" }}z"#,
                ),
                (
                    "templates/y.yaml",
                    "y: {{ .mark }} {{ .Subcharts.sub.Values.fromParent }} {{ .Values.sub.fromSub }} {{ .Subcharts.sub.Template.Name }}",
                ),
            ],
            vec![sub],
        );
        let mut values = Map::new();
        values.insert("sub".into(), V::map(Map::new()));
        let top = Top {
            release: V::map(Map::new()),
            capabilities: V::map(Map::new()),
            volatile: super::super::objects::Volatile::default(),
            variant: Variant::First,
            generated: AtomicBool::new(false),
            line: super::super::HelmLine::V3_17,
        };
        let out =
            render(&ParseCache::default(), &parent, &values, &top, "p").map_err(|e| e.to_string());
        let want: BTreeMap<String, String> = [
            ("p/charts/sub/templates/c.yaml", "c"),
            ("p/templates/z.yaml", "z"),
            (
                "p/templates/y.yaml",
                "y: m p s p/charts/sub/templates/c.yaml",
            ),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        assert_eq!(out, Ok(want));
        // The caller's values are not changed: the render works on a copy.
        assert_eq!(values.get("sub"), Some(&V::map(Map::new())));
    }

    #[test]
    fn a_change_to_a_shared_global_table_shows_in_every_chart() {
        // As helm v3.17.1 renders testdata/kustomize-helm/global-tables:
        // the subchart renders first (more path segments) and changes the
        // table it shares with its parent, and its own copy of the table
        // above it.
        let sub = chart(
            "sub",
            &[(
                "templates/c.yaml",
                r#"{{ $_ := set .Values.global.img.reg "host" "x" }}{{ $_ := set .Values.global.img "tag" "t" }}c"#,
            )],
            Vec::new(),
        );
        let parent = chart(
            "p",
            &[(
                "templates/a.yaml",
                "{{ .Values.global.img.reg.host }} {{ .Values.global.img.tag }}",
            )],
            vec![sub],
        );
        let reg = V::map([("host".to_string(), V::Str("h".into()))].into());
        let img = || V::map([("reg".to_string(), reg.clone())].into());
        let global = || V::map([("img".to_string(), img())].into());
        let values: Map = [
            ("global".to_string(), global()),
            (
                "sub".to_string(),
                V::map([("global".to_string(), global())].into()),
            ),
        ]
        .into();
        let top = Top {
            release: V::map(Map::new()),
            capabilities: V::map(Map::new()),
            volatile: super::super::objects::Volatile::default(),
            variant: Variant::First,
            generated: AtomicBool::new(false),
            line: super::super::HelmLine::V3_17,
        };
        let out = render(&ParseCache::default(), &parent, &values, &top, "p")
            .map_err(|e| e.to_string())
            .expect("renders");
        assert_eq!(
            out.get("p/templates/a.yaml").map(String::as_str),
            Some("x ")
        );
        // The values rendered from are not changed.
        assert_eq!(
            reg,
            V::map([("host".to_string(), V::Str("h".into()))].into())
        );
    }
}
