//! Applying parameters to templates: every string (and map key) of the
//! Application template, the generator-level template merge, the default
//! finalizer, `templatePatch`, and the interpolation of a matrix's second
//! generator with the first one's parameters (AC `applicationset/utils/utils.go`,
//! `controllers/template/{template,patch}.go`,
//! `generators/generator_spec_processor.go`).

use goyaml::json::Pointer as _;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use serde_json::{Map, Value};

use super::{fasttemplate, AppSetError, RESOURCES_FINALIZER};
use gotemplate::{self, Budget, MissingKey, Template, V};

/// How much of a template's source an error quotes: the source is the
/// ApplicationSet's string, up to the size of a file, and each generated
/// Application's error would repeat it.
const QUOTED_SOURCE: usize = 1 << 10;

/// One generator's parameter set.
pub(crate) type Params = Map<String, Value>;

/// Renders strings with the ApplicationSet's template engine.
pub(crate) struct Renderer {
    go: bool,
    missing: MissingKey,
    cache: RefCell<HashMap<String, Rc<Result<Template, String>>>>,
    /// Work left to this ApplicationSet's whole expansion: every string
    /// rendered (Application fields, generator interpolations, values) draws
    /// on it, so many small renders cannot add up to an unbounded one.
    budget: Cell<Budget>,
}

/// Work one ApplicationSet's expansion may do: template steps, and bytes of
/// values and rendered text. Ten times what 100,000 parameter sets rendering
/// a typical Application need.
pub(crate) const EXPANSION_BUDGET: Budget = Budget {
    steps: 50_000_000,
    bytes: 512 << 20,
};

/// Parameters prepared once for many strings.
pub(crate) enum Data<'a> {
    /// fasttemplate: the flat map.
    Fast(&'a Params),
    /// goTemplate: the template data.
    Go(V),
}

fn exhausted() -> String {
    format!(
        "the ApplicationSet's templates exceed gitops-lint's budget of {} template steps and {} MiB of rendered values {}",
        EXPANSION_BUDGET.steps,
        EXPANSION_BUDGET.bytes >> 20,
        super::BEYOND_LIMITS
    )
}

impl Renderer {
    /// A renderer for `goTemplate` and `goTemplateOptions`.
    ///
    /// # Errors
    /// An unrecognised option (Go's `Template.Option` panics on it).
    pub(crate) fn new(go: bool, options: &[String]) -> Result<Renderer, AppSetError> {
        let missing = if go {
            MissingKey::from_options(options).map_err(AppSetError)?
        } else {
            MissingKey::Invalid
        };
        Ok(Renderer {
            go,
            missing,
            cache: RefCell::new(HashMap::new()),
            budget: Cell::new(EXPANSION_BUDGET),
        })
    }

    /// Whether this is `goTemplate: true`.
    pub(crate) fn is_go(&self) -> bool {
        self.go
    }

    /// The work left to this expansion.
    pub(crate) fn budget(&self) -> Budget {
        self.budget.get()
    }

    /// Sets the work left, as a render that drew the difference would.
    pub(crate) fn set_budget(&self, budget: Budget) {
        self.budget.set(budget);
    }

    /// Prepares `params` for rendering.
    pub(crate) fn data<'a>(&self, params: &'a Params) -> Data<'a> {
        if self.go {
            Data::Go(gotemplate::data_from_params(params))
        } else {
            Data::Fast(params)
        }
    }

    fn parsed(&self, src: &str) -> Rc<Result<Template, String>> {
        if let Some(t) = self.cache.borrow().get(src) {
            return Rc::clone(t);
        }
        let t = Rc::new(gotemplate::parse(src));
        self.cache
            .borrow_mut()
            .insert(src.to_string(), Rc::clone(&t));
        t
    }

    /// Argo CD's `Replace` for one string.
    ///
    /// # Errors
    /// A template that does not parse or execute.
    pub(crate) fn replace(&self, src: &str, data: &Data<'_>) -> Result<String, String> {
        self.replace_with(src, data, self.missing)
    }

    fn replace_with(
        &self,
        src: &str,
        data: &Data<'_>,
        missing: MissingKey,
    ) -> Result<String, String> {
        let mut budget = self.budget.get();
        if budget.steps == 0 {
            return Err(exhausted());
        }
        budget.steps -= 1;
        let out = match data {
            Data::Fast(p) => fasttemplate::replace(src, p, budget.bytes),
            Data::Go(v) => {
                if src.contains("{{") {
                    match &*self.parsed(src) {
                        Ok(t) => t.execute_within(v, missing, &mut budget).map_err(|e| {
                            format!(
                                "failed to execute go template {}: {e}",
                                gotemplate::bounded_text(src, QUOTED_SOURCE)
                            )
                        }),
                        Err(e) => Err(format!(
                            "failed to parse template {}: {}",
                            gotemplate::bounded_text(src, QUOTED_SOURCE),
                            gotemplate::bounded_text(e, gotemplate::MAX_ERROR_BYTES)
                        )),
                    }
                } else {
                    // Nothing to do: Go would print the text unchanged.
                    Ok(src.to_string())
                }
            }
        };
        if let Ok(text) = &out {
            if text.len() > budget.bytes {
                self.budget.set(Budget { steps: 0, bytes: 0 });
                return Err(exhausted());
            }
            budget.bytes -= text.len();
        }
        self.budget.set(budget);
        out
    }

    /// Renders every string and map key of `v`.
    ///
    /// # Errors
    /// The first template error.
    pub(crate) fn render_value(&self, v: &Value, data: &Data<'_>) -> Result<Value, String> {
        Ok(match v {
            Value::String(s) => Value::String(self.replace(s, data)?),
            Value::Array(a) => Value::Array(
                a.iter()
                    .map(|e| self.render_value(e, data))
                    .collect::<Result<_, _>>()?,
            ),
            Value::Object(o) => {
                let mut out = Map::new();
                for (k, e) in o {
                    if e.is_null() {
                        // Go drops nil map entries when copying.
                        continue;
                    }
                    out.insert(self.replace(k, data)?, self.render_value(e, data)?);
                }
                Value::Object(out)
            }
            other => other.clone(),
        })
    }

    /// Renders one Application from the (merged) template and a parameter set.
    ///
    /// # Errors
    /// Template errors, and a `templatePatch` that does not render or parse.
    pub(crate) fn application(
        &self,
        template: &Value,
        params: &Params,
        sync_policy: Option<&Value>,
        patch: Option<&str>,
    ) -> Result<Value, String> {
        let meta = template
            .get("metadata")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        let spec = template
            .get("spec")
            .cloned()
            .unwrap_or_else(|| Value::Object(Map::new()));
        let mut app_meta = Map::new();
        for k in ["name", "namespace", "labels", "annotations", "finalizers"] {
            if let Some(v) = meta.get(k) {
                if !v.is_null() {
                    app_meta.insert(k.to_string(), v.clone());
                }
            }
        }
        let mut app = serde_json::json!({
            "apiVersion": "argoproj.io/v1alpha1",
            "kind": "Application",
            "metadata": Value::Object(app_meta),
            "spec": spec,
        });
        let data = self.data(params);
        // With no parameters Argo CD returns the template untouched, finalizer included
        // (`RenderTemplateParams`: `if len(params) == 0 { return tmpl, nil }`).
        if !params.is_empty() {
            for part in ["metadata", "spec"] {
                let rendered = self.render_value(&app[part], &data)?;
                app[part] = rendered;
            }
            let preserve = sync_policy
                .and_then(|p| p.get("preserveResourcesOnDeletion"))
                .and_then(Value::as_bool)
                .unwrap_or(false);
            let has_finalizers = app
                .at("/metadata/finalizers")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty());
            if !preserve && !has_finalizers {
                app["metadata"]["finalizers"] = serde_json::json!([RESOURCES_FINALIZER]);
            }
        }
        if let Some(patch) = patch {
            let text = self
                .replace(patch, &data)
                .map_err(|e| format!("error replacing values in templatePatch: {e}"))?;
            let patch_value = goyaml::parse_first_doc(&text)
                .map_err(|e| format!("error while converting templatePatch to json: {e}"))?;
            match patch_value {
                Value::Object(_) => {
                    let project = app.at("/spec/project").cloned();
                    strategic_merge(&mut app, &patch_value, &[]);
                    // Argo CD refuses to let a patch change the project.
                    match project {
                        Some(p) => {
                            if let Some(spec) = app.get_mut("spec").and_then(Value::as_object_mut) {
                                spec.insert("project".into(), p);
                            }
                        }
                        None => {
                            if let Some(spec) = app.get_mut("spec").and_then(Value::as_object_mut) {
                                spec.remove("project");
                            }
                        }
                    }
                }
                Value::Null => {}
                other => {
                    return Err(format!(
                        "invalid templatePatch: expected an object, found {other}"
                    ))
                }
            }
        }
        Ok(app)
    }

    /// Interpolates a matrix's second child with the first child's parameters
    /// (`InterpolateGenerator`). `values` are pre-resolved with
    /// `missingkey=error`, keeping the raw text when a key is missing, so they
    /// can still refer to the child's own parameters.
    ///
    /// # Errors
    /// A template error outside `values`.
    pub(crate) fn interpolate_generator(
        &self,
        gen: &Value,
        params: &Params,
    ) -> Result<Value, String> {
        let data = self.data(params);
        let Value::Object(obj) = gen else {
            return Ok(gen.clone());
        };
        let mut out = Map::new();
        for (kind, body) in obj {
            let rendered = match body {
                Value::Object(fields) if kind != "selector" => {
                    let mut f = Map::new();
                    for (k, v) in fields {
                        if k == "values" {
                            f.insert(k.clone(), self.pre_resolve_values(v, &data)?);
                        } else if !v.is_null() {
                            f.insert(self.replace(k, &data)?, self.render_value(v, &data)?);
                        }
                    }
                    Value::Object(f)
                }
                other => self.render_value(other, &data)?,
            };
            out.insert(kind.clone(), rendered);
        }
        Ok(Value::Object(out))
    }

    fn pre_resolve_values(&self, values: &Value, data: &Data<'_>) -> Result<Value, String> {
        let Value::Object(m) = values else {
            return Ok(values.clone());
        };
        let mut out = Map::new();
        for (k, v) in m {
            let Value::String(s) = v else {
                out.insert(k.clone(), v.clone());
                continue;
            };
            let missing = if self.go {
                MissingKey::Error
            } else {
                self.missing
            };
            match self.replace_with(s, data, missing) {
                Ok(r) => {
                    out.insert(k.clone(), Value::String(r));
                }
                Err(e)
                    if e.contains("map has no entry for key")
                        || e.contains("can't evaluate field")
                        || e.contains("nil data; no entry") =>
                {
                    out.insert(k.clone(), v.clone());
                }
                Err(e) => return Err(format!("failed to pre-resolve Values key {k:?}: {e}")),
            }
        }
        Ok(Value::Object(out))
    }

    /// `appendTemplatedValues`: renders a generator's `values` against its
    /// parameters and adds them as `values.<k>` (fasttemplate) or a nested
    /// `values` map (goTemplate).
    ///
    /// # Errors
    /// A template error in a value.
    pub(crate) fn append_values(
        &self,
        values: Option<&Value>,
        params: &mut Params,
    ) -> Result<(), String> {
        let Some(Value::Object(values)) = values else {
            return Ok(());
        };
        let mut rendered = Map::new();
        {
            let data = self.data(params);
            for (k, v) in values {
                let s = match v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                let r = self
                    .replace(&s, &data)
                    .map_err(|e| format!("failed to append templated values: {e}"))?;
                rendered.insert(k.clone(), Value::String(r));
            }
        }
        if rendered.is_empty() {
            return Ok(());
        }
        if self.go {
            params.insert("values".into(), Value::Object(rendered));
        } else {
            for (k, v) in rendered {
                params.insert(format!("values.{k}"), v);
            }
        }
        Ok(())
    }
}

/// `mergo.Merge(generatorTemplate, appsetTemplate)`: fields the generator
/// template leaves empty are taken from the ApplicationSet's template.
pub(crate) fn merge_template(gen: Option<&Value>, base: &Value) -> Value {
    match gen {
        None => base.clone(),
        Some(g) => {
            let mut out = g.clone();
            fill_empty(&mut out, base);
            out
        }
    }
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

fn fill_empty(dst: &mut Value, src: &Value) {
    match (dst, src) {
        (Value::Object(d), Value::Object(s)) => {
            for (k, sv) in s {
                match d.get_mut(k) {
                    Some(dv) if dv.is_object() && sv.is_object() => fill_empty(dv, sv),
                    Some(dv) if is_zero(dv) => *dv = sv.clone(),
                    Some(_) => {}
                    None => {
                        d.insert(k.clone(), sv.clone());
                    }
                }
            }
        }
        (d, s) => {
            if is_zero(d) {
                *d = s.clone();
            }
        }
    }
}

/// Strategic merge patch over an Application: maps merge, `null` deletes,
/// lists are replaced except `metadata.finalizers` (patch strategy `merge`).
fn strategic_merge(target: &mut Value, patch: &Value, path: &[&str]) {
    let Value::Object(p) = patch else {
        *target = patch.clone();
        return;
    };
    if p.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut clean = p.clone();
        clean.remove("$patch");
        *target = Value::Object(clean);
        return;
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Some(t) = target.as_object_mut() else {
        return;
    };
    for (k, v) in p {
        if k.starts_with('$') {
            continue;
        }
        if v.is_null() {
            t.remove(k);
            continue;
        }
        if v.get("$patch").and_then(Value::as_str) == Some("delete") {
            t.remove(k);
            continue;
        }
        let mut child_path = path.to_vec();
        child_path.push(k.as_str());
        match (t.get_mut(k), v) {
            (Some(existing @ Value::Object(_)), Value::Object(_)) => {
                strategic_merge(existing, v, &child_path);
            }
            (Some(Value::Array(existing)), Value::Array(add))
                if child_path == ["metadata", "finalizers"] =>
            {
                for f in add {
                    if !existing.contains(f) {
                        existing.push(f.clone());
                    }
                }
            }
            _ => {
                t.insert(k.clone(), strip_directives(v));
            }
        }
    }
}

fn strip_directives(v: &Value) -> Value {
    match v {
        Value::Object(o) => Value::Object(
            o.iter()
                .filter(|(k, v)| !k.starts_with('$') && !v.is_null())
                .map(|(k, v)| (k.clone(), strip_directives(v)))
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(strip_directives).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn generator_template_fills_only_empty_fields() {
        let base = json!({"metadata": {"name": "{{cluster}}-app", "labels": {"a": "1"}},
                          "spec": {"project": "default", "source": {"repoURL": "r", "path": "p"}}});
        let gen =
            json!({"metadata": {"labels": {"b": "2"}}, "spec": {"source": {"path": "override"}}});
        let m = merge_template(Some(&gen), &base);
        assert_eq!(m["metadata"]["name"], "{{cluster}}-app");
        assert_eq!(m["metadata"]["labels"], json!({"a": "1", "b": "2"}));
        assert_eq!(
            m["spec"]["source"],
            json!({"repoURL": "r", "path": "override"})
        );
        assert_eq!(m["spec"]["project"], "default");
    }

    #[test]
    fn strategic_merge_replaces_lists_and_unions_finalizers() {
        let mut app = json!({"metadata": {"finalizers": ["a"]}, "spec": {"project": "p", "sources": [{"x": 1}], "syncPolicy": {"automated": {"prune": false}}}});
        let patch = json!({"metadata": {"finalizers": ["b"]}, "spec": {"sources": [{"y": 2}], "syncPolicy": {"automated": {"prune": true}}, "info": null}});
        strategic_merge(&mut app, &patch, &[]);
        assert_eq!(app["metadata"]["finalizers"], json!(["a", "b"]));
        assert_eq!(app["spec"]["sources"], json!([{"y": 2}]));
        assert_eq!(app["spec"]["syncPolicy"]["automated"]["prune"], json!(true));
    }
}
