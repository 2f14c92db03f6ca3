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
//! template has run. What is not modelled faithfully yet is refused before
//! anything runs: the top-level object serialized whole, and changes to a
//! map in place.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use regex::Regex;

use super::chart::Chart;
use super::objects::Volatile;
use super::values::Map;
use super::{helm_error, not_supported};
use crate::gotemplate::{FuncSet, MissingKey, TemplateSet, V};
use crate::render::RenderError;

/// One template to parse and, unless a partial, execute.
struct Renderable {
    src: String,
    vals: Map,
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
}

/// `recAllTpls`: the templates of `c` (at `full_path`) and its subcharts,
/// with the objects each sees; returns `c`'s objects (for `.Subcharts`).
fn all_templates(
    c: &Chart,
    full_path: &str,
    is_root: bool,
    values: &V,
    top: &Top,
    out: &mut BTreeMap<String, Renderable>,
) -> Map {
    let mut next = Map::new();
    next.insert(
        "Chart".into(),
        super::objects::chart(&c.metadata, is_root, &top.volatile),
    );
    next.insert("Release".into(), top.release.clone());
    next.insert("Capabilities".into(), top.capabilities.clone());
    next.insert("Values".into(), values.clone());
    next.insert(
        "Files".into(),
        super::objects::files(&c.files, &top.volatile),
    );
    let mut subcharts = Map::new();
    for child in &c.dependencies {
        let child_values = match values {
            V::Map(m) => match m.get(child.name()) {
                Some(v @ V::Map(_)) => v.clone(),
                _ => V::Map(Map::new()),
            },
            _ => V::Map(Map::new()),
        };
        let child_path = format!("{full_path}/charts/{}", child.name());
        let objects = all_templates(child, &child_path, false, &child_values, top, out);
        subcharts.insert(child.name().to_string(), V::Map(objects));
    }
    next.insert("Subcharts".into(), V::Map(subcharts));
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
    if let Some(f) = map_mutation(src) {
        return Some(format!(
            "`{f}`, which changes a map in place: Go shares maps by reference, so the change shows in every value holding that map (`.Values` included), and this engine's values are copies"
        ));
    }
    None
}

/// The first function of an action in `src` (comments aside) that changes
/// a map in place (Sprig's `set`, `unset`, `merge`, `mergeOverwrite` and
/// their `must` forms) on a map that may be shared: anything but a map made
/// right there (`(dict …)`, `(deepCopy …)`). Go shares maps by reference,
/// so such a change shows through every alias (`.Values` included); this
/// engine's values are copies, so it would render such a template wrongly.
fn map_mutation(src: &str) -> Option<&'static str> {
    const MUTATORS: [&str; 6] = [
        "set",
        "unset",
        "merge",
        "mergeOverwrite",
        "mustMerge",
        "mustMergeOverwrite",
    ];
    const FRESH: [&str; 3] = ["(dict", "(deepCopy", "(mustDeepCopy"];
    let mut rest = src;
    while let Some(open) = rest.find("{{") {
        let action = rest[open + 2..].trim_start_matches('-').trim_start();
        let end = if action.starts_with("/*") {
            action.find("*/").map_or(action.len(), |i| i + 2)
        } else {
            action.find("}}").unwrap_or(action.len())
        };
        if !action.starts_with("/*") {
            let text = &action[..end];
            let separator = |c: char| c.is_whitespace() || "()|".contains(c);
            let mut at = 0;
            while at < text.len() {
                let word_end = text[at..].find(separator).map_or(text.len(), |i| at + i);
                let word = &text[at..word_end];
                if let Some(f) = MUTATORS.iter().find(|m| **m == word) {
                    let target = text[word_end..].trim_start();
                    if !FRESH.iter().any(|p| target.starts_with(p)) {
                        return Some(f);
                    }
                }
                at = word_end + text[word_end..].chars().next().map_or(1, char::len_utf8);
            }
        }
        rest = &action[end..];
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
    let is_exec = err.starts_with("template: ") && err.contains(": executing ");
    if !is_exec {
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

/// An engine message that says it cannot evaluate something.
fn engine_refuses(msg: &str) -> bool {
    msg.contains("not supported by gitops-lint")
}

/// `Engine.Render`: each executed template's output by its path
/// (`chart/templates/x.yaml`).
///
/// # Errors
/// helm's parse and execution errors, or what is not supported natively.
pub(super) fn render(
    chart: &Chart,
    values: &Map,
    top: &Top,
    chart_dir: &str,
) -> Result<BTreeMap<String, String>, RenderError> {
    let mut tpls = BTreeMap::new();
    all_templates(
        chart,
        chart.name(),
        true,
        &V::Map(values.clone()),
        top,
        &mut tpls,
    );
    for (name, r) in &tpls {
        if let Some(what) = unsupported_use(&r.src) {
            return Err(not_supported(&format!("{what} in `{name}`")));
        }
    }
    // `sortTemplates`: most path segments first, then reverse lexical.
    let mut keys: Vec<&String> = tpls.keys().collect();
    keys.sort_by(|a, b| {
        let (ca, cb) = (a.matches('/').count(), b.matches('/').count());
        cb.cmp(&ca).then_with(|| b.cmp(a))
    });
    let mut set = TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero);
    for k in &keys {
        if let Err(e) = set.add(k, &tpls[*k].src) {
            if engine_refuses(&e) {
                return Err(not_supported(&e));
            }
            return Err(helm_error(chart_dir, &parse_error(k, &e)));
        }
    }
    let mut rendered = BTreeMap::new();
    for k in keys {
        let base = k.rsplit('/').next().unwrap_or(k);
        if base.starts_with('_') {
            continue;
        }
        let r = &tpls[k];
        let mut vals = r.vals.clone();
        vals.insert(
            "Template".into(),
            V::Map(
                [
                    ("Name".to_string(), V::Str(k.clone())),
                    ("BasePath".to_string(), V::Str(r.base_path.clone())),
                ]
                .into(),
            ),
        );
        let result = set.execute(k, &V::Map(vals));
        if let Some(why) = top.volatile.take() {
            return Err(not_supported(&format!("{why} in `{k}`")));
        }
        match result {
            Ok(out) => {
                rendered.insert(k.clone(), out.replace("<no value>", ""));
            }
            Err(e) if engine_refuses(&e) => return Err(not_supported(&e)),
            Err(e) => return Err(helm_error(chart_dir, &exec_error(k, &e))),
        }
    }
    Ok(rendered)
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn what_is_not_modelled_is_refused() {
        assert_eq!(map_mutation("{{ $_ := set $d \"k\" 1 }}"), Some("set"));
        assert_eq!(map_mutation("{{- (merge $a $b) | toYaml }}"), Some("merge"));
        assert_eq!(
            map_mutation("{{- merge (index .Values \"a\") $b }}"),
            Some("merge")
        );
        assert_eq!(map_mutation("merge: {{ .Values.x }}\nset me"), None);
        assert_eq!(map_mutation("{{/* vim: set filetype=mustache: */}}"), None);
        assert_eq!(
            map_mutation("{{ toYaml (mergeOverwrite (deepCopy .Values.a) .Values.b) }}"),
            None
        );
        assert_eq!(
            map_mutation("{{ include \"x\" (dict \"settings\" 1) }}"),
            None
        );
        assert!(unsupported_use("x: {{ toYaml $ }}").is_some());
        assert!(unsupported_use("{{ with .Values.r }}{{ toYaml . }}{{ end }}").is_none());
        assert!(unsupported_use("x: {{ toYaml .Values }}").is_none());
        assert!(unsupported_use("{{ keys . | sortAlpha }}").is_none());
        assert_eq!(unsupported_use("{{ .Chart.Name }}-{{ .Values.x }}"), None);
    }
}
