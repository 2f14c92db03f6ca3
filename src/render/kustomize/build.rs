//! The build pipeline: Kustomize's `accumulateTarget` for each
//! kustomization (resources, configurations, generators, components,
//! transformers in their fixed order, vars), then hashing, name-reference
//! fixing, var resolution, local-config removal and sorting at the top.

use goyaml::json::Pointer as _;
use serde_json::Value;

use super::accumulator::Acc;
use super::fieldpath;
use super::fieldspec::TransformerConfig;
use super::load::{self, Kustomization};
use super::resource::Res;
use super::{
    argocd, generators, helm_charts, nameref, patch, replacements, sort, transform, vars, KResult,
};
use crate::render::{RenderContext, RenderError, RenderedObject, SourceSpec};
use crate::source::{self, path, EntryKind};

/// Builds the kustomization of `spec` and returns kubectl's output.
///
/// # Errors
/// Any build failure.
pub(crate) fn build(cx: &RenderContext<'_>, spec: &SourceSpec) -> KResult<Vec<RenderedObject>> {
    let mut root = load::load(cx, &spec.path)?;
    argocd::apply(&mut root, spec)?;
    let mut origin_annotations = false;
    for m in root.list("buildMetadata") {
        match m.as_str() {
            Some("originAnnotations") => origin_annotations = true,
            Some(other) => {
                return Err(RenderError::unsupported(format!(
                    "`{}`: buildMetadata `{other}` is not supported natively",
                    root.file
                ))
                .at(root.file.clone(), None))
            }
            None => return Err(root.err("buildMetadata entries must be strings")),
        }
    }
    let mut b = Builder {
        cx,
        roots: Vec::new(),
        work: 0,
        helm: argocd::helm_flags(spec),
    };
    let mut acc = Acc::default();
    let real = real_dir(cx, &root.dir)?;
    b.roots.push(real);
    b.accumulate(&root, &mut acc)?;
    generators::add_hashes(&mut acc.res)?;
    nameref::fix(&mut acc.res, &acc.config)?;
    vars::resolve(&mut acc)?;
    acc.res.retain(|r| {
        r.v.at("/metadata/annotations/config.kubernetes.io~1local-config")
            .and_then(Value::as_str)
            != Some("true")
    });
    sort::sort(&mut acc.res, root.k.get("sortOptions"), &root.file)?;
    for r in &mut acc.res {
        if origin_annotations {
            add_origin_annotation(r, &root.dir);
        }
        super::resource::remove_build_annotations(r);
    }
    Ok(sort::finish(acc.res))
}

/// `buildMetadata: [originAnnotations]`: where each object came from,
/// relative to the root kustomization.
fn add_origin_annotation(r: &mut Res, root: &str) {
    let text = match (&r.generated_by, &r.origin.file) {
        (Some((kfile, kind)), _) => format!(
            "configuredIn: {}\nconfiguredBy:\n  apiVersion: builtin\n  kind: {kind}\n",
            load::relative(root, kfile)
        ),
        (None, Some(file)) => format!("path: {}\n", load::relative(root, file)),
        (None, None) => return,
    };
    let Some(obj) = r.v.as_object_mut() else {
        return;
    };
    let meta = obj
        .entry("metadata")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    let Some(meta) = meta.as_object_mut() else {
        return;
    };
    let anns = meta
        .entry("annotations")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if !anns.is_object() {
        *anns = Value::Object(serde_json::Map::new());
    }
    if let Some(a) = anns.as_object_mut() {
        a.insert("config.kubernetes.io/origin".into(), Value::String(text));
    }
}

fn real_dir(cx: &RenderContext<'_>, dir: &str) -> KResult<String> {
    source::resolve(cx.tree, dir).map_err(|e| RenderError::from_source(&e))
}

/// Walks the kustomization tree.
pub(crate) struct Builder<'a, 'c> {
    /// The render context.
    pub(crate) cx: &'a RenderContext<'c>,
    /// Kustomization roots on the current path, for cycle detection.
    pub(crate) roots: Vec<String>,
    /// Resources appended so far across every layer of this build: overlays
    /// that include the same base twice at every level multiply the work
    /// without multiplying the output much, so it is bounded separately.
    pub(crate) work: usize,
    /// What Argo CD's build options say about `helmCharts`.
    pub(crate) helm: helm_charts::HelmFlags,
}

/// Most resource appends one build may do across all its layers.
pub(crate) const MAX_BUILD_WORK: usize = 50_000;

impl Builder<'_, '_> {
    /// Counts `n` appended resources against [`MAX_BUILD_WORK`].
    fn charge(&mut self, n: usize, k: &Kustomization) -> KResult<()> {
        self.work = self.work.saturating_add(n);
        if self.work > MAX_BUILD_WORK {
            return Err(k.err(format!(
                "building this kustomization takes more than {MAX_BUILD_WORK} resource steps across its layers; gitops-lint stops there"
            )));
        }
        Ok(())
    }

    /// Kustomize's `accumulateTarget`.
    ///
    /// # Errors
    /// Any failure in this kustomization or below.
    pub(crate) fn accumulate(&mut self, k: &Kustomization, acc: &mut Acc) -> KResult<()> {
        for entry in k.list("resources").to_vec() {
            let s = entry.as_str().unwrap_or("");
            self.accumulate_entry(k, s, acc, false)?;
        }
        acc.config.merge(TransformerConfig::builtin()?);
        for c in k.list("configurations").to_vec() {
            let rel = c.as_str().unwrap_or("");
            let (p, _) = k.read(self.cx, rel)?;
            for d in self.cx.load_yaml(&p)? {
                let tc = TransformerConfig::parse(&d.value, &p)?;
                acc.config.merge(&tc);
            }
        }
        self.run_generators(k, acc)?;
        for c in k.list("components").to_vec() {
            let s = c.as_str().unwrap_or("");
            self.accumulate_entry(k, s, acc, true)?;
        }
        self.run_transformers(k, acc)?;
        let vars: Vec<(Value, String)> = k
            .list("vars")
            .iter()
            .map(|v| (v.clone(), k.file.clone()))
            .collect();
        acc.bind_vars(&vars)?;
        acc.merge_vars(vars)?;
        Ok(())
    }

    fn accumulate_entry(
        &mut self,
        k: &Kustomization,
        entry: &str,
        acc: &mut Acc,
        component: bool,
    ) -> KResult<()> {
        if load::is_remote(entry) {
            return Err(RenderError::unsupported(format!(
                "`{}`: remote resource `{entry}` cannot be fetched (no network access)",
                k.file
            ))
            .at(k.file.clone(), None));
        }
        let p = load::join(&k.dir, entry, &k.file)?;
        match self.cx.kind_of(&p)? {
            Some(EntryKind::File) if !component => {
                let p = k.restricted(self.cx, entry)?;
                let docs = self.cx.load_yaml(&p)?;
                // The raw text is only needed to tell `key: null` from `key:`.
                let bytes = if docs.iter().any(|d| load::has_null(&d.value)) {
                    Some(self.cx.read(&p)?)
                } else {
                    None
                };
                let text = bytes.as_deref().and_then(|b| std::str::from_utf8(b).ok());
                let loaded = load::resources_from_docs(&docs, Some(&p), text)?;
                self.charge(loaded.len(), k)?;
                acc.append_all(loaded)
            }
            Some(EntryKind::Dir) => {
                let child = load::load(self.cx, &p)?;
                if component && !child.is_component() {
                    return Err(k.err(format!(
                        "`{entry}` is listed under `components` but `{}` is not `kind: Component`",
                        child.file
                    )));
                }
                if !component && child.is_component() {
                    return Err(k.err(format!(
                        "`{entry}` is a Component and must be listed under `components`, not `resources`"
                    )));
                }
                let real = real_dir(self.cx, &p)?;
                if self
                    .roots
                    .iter()
                    .any(|r| path::strip_dir(r, &real).is_some())
                {
                    return Err(k.err(format!(
                        "cycle detected: `{entry}` contains a kustomization already being built"
                    )));
                }
                self.roots.push(real);
                let res = if component {
                    self.accumulate(&child, acc)
                } else {
                    let mut sub = Acc::default();
                    self.accumulate(&child, &mut sub).and_then(|()| {
                        self.charge(sub.res.len(), k)?;
                        acc.append_all(sub.res)?;
                        acc.config.merge(&sub.config);
                        acc.merge_vars(sub.vars)
                    })
                };
                self.roots.pop();
                res
            }
            Some(EntryKind::File) => Err(k.err(format!("component `{entry}` must be a directory"))),
            // Argo CD checks submodules out (see `render::directory`); their
            // content is not in this repository.
            Some(EntryKind::Submodule) => Err(RenderError::unsupported(format!(
                "`{}`: `{entry}` is a git submodule, which Argo CD checks out and builds; gitops-lint cannot read it offline",
                k.file
            ))
            .at(k.file.clone(), None)),
            _ => Err(k.err(format!("`{entry}`: no such file or directory"))),
        }
    }

    fn run_generators(&mut self, k: &Kustomization, acc: &mut Acc) -> KResult<()> {
        // Every builtin generator is configured before any runs
        // (`configureBuiltinGenerators`): a missing `--enable-helm` fails
        // the build first.
        let charts = helm_charts::configure(self.cx, k, &mut self.helm)?;
        let opts = k.k.get("generatorOptions").cloned().unwrap_or(Value::Null);
        for g in k.list("configMapGenerator") {
            let r = generators::generate(self.cx, k, g, &opts, "ConfigMap")?;
            generators::absorb(acc, r)?;
        }
        for g in k.list("secretGenerator") {
            let r = generators::generate(self.cx, k, g, &opts, "Secret")?;
            generators::absorb(acc, r)?;
        }
        for rs in helm_charts::generate(self.cx, k, charts)? {
            self.charge(rs.len(), k)?;
            for r in rs {
                generators::absorb(acc, r)?;
            }
        }
        for cfg in self.plugin_configs(k, "generators")? {
            let kind = cfg.v.get("kind").and_then(Value::as_str).unwrap_or("");
            let gk = match kind {
                "ConfigMapGenerator" => "ConfigMap",
                "SecretGenerator" => "Secret",
                _ => return Err(unsupported_plugin(k, "generators", &cfg.v)),
            };
            let mut g = cfg.v.clone();
            if let Some(m) = g.as_object_mut() {
                let meta = m.remove("metadata").unwrap_or(Value::Null);
                for f in ["name", "namespace"] {
                    if let Some(v) = meta.get(f) {
                        m.entry(f.to_string()).or_insert_with(|| v.clone());
                    }
                }
            }
            let r = generators::generate(self.cx, k, &g, &Value::Null, gk)?;
            generators::absorb(acc, r)?;
        }
        Ok(())
    }

    /// Loads the objects of a `generators:`/`transformers:` list: inline
    /// YAML, files, or kustomization directories.
    fn plugin_configs(&mut self, k: &Kustomization, field: &str) -> KResult<Vec<Res>> {
        let mut out = Vec::new();
        for e in k.list(field).to_vec() {
            let Some(s) = e.as_str() else {
                return Err(k.err(format!("entries of `{field}` must be strings")));
            };
            if let Ok(docs) = goyaml::load_all(s) {
                let maps: Vec<&goyaml::Doc> = docs.iter().filter(|d| d.value.is_object()).collect();
                if !maps.is_empty()
                    && maps.len() == docs.iter().filter(|d| !d.value.is_null()).count()
                {
                    for r in load::resources_from_docs(&docs, None, Some(s))? {
                        out.push(r);
                    }
                    continue;
                }
            }
            let mut sub = Acc::default();
            self.accumulate_entry(k, s, &mut sub, false)?;
            out.extend(sub.res);
        }
        Ok(out)
    }

    fn run_transformers(&mut self, k: &Kustomization, acc: &mut Acc) -> KResult<()> {
        let cx = self.cx;
        patch::patches_strategic_merge(cx, k, acc)?;
        for p in k.list("patches").to_vec() {
            patch::patch_entry(cx, k, &p, acc)?;
        }
        let ns = k.str("namespace").to_string();
        if !ns.is_empty() {
            transform::namespace(
                &mut acc.res,
                &ns,
                &acc.config.namespace,
                transform::Subjects::DefaultOnly,
                false,
            )?;
        }
        let prefix = k.str("namePrefix").to_string();
        if !prefix.is_empty() {
            transform::prefix_suffix(&mut acc.res, &prefix, "", &acc.config.name_prefix)?;
        }
        let suffix = k.str("nameSuffix").to_string();
        if !suffix.is_empty() {
            transform::prefix_suffix(&mut acc.res, "", &suffix, &acc.config.name_suffix)?;
        }
        transform::labels_field(k, acc)?;
        let ann = k.string_map("commonAnnotations")?;
        if !ann.is_empty() {
            transform::annotations(&mut acc.res, &ann, &acc.config.common_annotations)?;
        }
        patch::patches_json6902(cx, k, acc)?;
        for r in k.list("replicas").to_vec() {
            transform::replicas(&mut acc.res, &r, &acc.config.replicas)?;
        }
        for img in k.list("images").to_vec() {
            transform::image(&mut acc.res, &img, &acc.config.images)?;
        }
        replacements::run_field(cx, k, acc)?;
        for cfg in self.plugin_configs(k, "transformers")? {
            self.run_builtin_transformer(k, &cfg.v, acc)?;
        }
        Ok(())
    }

    fn run_builtin_transformer(
        &mut self,
        k: &Kustomization,
        v: &Value,
        acc: &mut Acc,
    ) -> KResult<()> {
        let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
        let api = v.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        if api != "builtin"
            || v.at("/metadata/annotations/config.kubernetes.io~1function")
                .is_some()
        {
            return Err(unsupported_plugin(k, "transformers", v));
        }
        let specs = |f: &str| -> Vec<super::fieldspec::FieldSpec> {
            v.get(f)
                .map(super::fieldspec::FieldSpec::list)
                .unwrap_or_default()
        };
        match kind {
            "PrefixSuffixTransformer" | "PrefixTransformer" | "SuffixTransformer" => {
                let p = v.get("prefix").and_then(Value::as_str).unwrap_or("");
                let s = v.get("suffix").and_then(Value::as_str).unwrap_or("");
                let fs = specs("fieldSpecs");
                if !p.is_empty() || kind == "PrefixTransformer" {
                    transform::prefix_suffix(&mut acc.res, p, "", &fs)?;
                }
                if !s.is_empty() || kind == "SuffixTransformer" {
                    transform::prefix_suffix(&mut acc.res, "", s, &fs)?;
                }
            }
            "LabelTransformer" => {
                let labels = load::lenient_string_map(v.get("labels"));
                transform::labels(&mut acc.res, &labels, &specs("fieldSpecs"))?;
            }
            "AnnotationsTransformer" => {
                let a = load::lenient_string_map(v.get("annotations"));
                transform::annotations(&mut acc.res, &a, &specs("fieldSpecs"))?;
            }
            "NamespaceTransformer" => {
                let ns = v
                    .at("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let mode = match v
                    .get("setRoleBindingSubjects")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                {
                    "" | "defaultOnly" => transform::Subjects::DefaultOnly,
                    "none" => transform::Subjects::None,
                    "allServiceAccounts" => transform::Subjects::AllServiceAccounts,
                    other => {
                        return Err(k.err(format!(
                            "invalid value `{other}` for setRoleBindingSubjects"
                        )))
                    }
                };
                let unset_only = v.get("unsetOnly").and_then(Value::as_bool).unwrap_or(false);
                if !ns.is_empty() {
                    transform::namespace(&mut acc.res, ns, &specs("fieldSpecs"), mode, unset_only)?;
                }
            }
            "ImageTagTransformer" => {
                let img = v.get("imageTag").cloned().unwrap_or(Value::Null);
                transform::image(&mut acc.res, &img, &specs("fieldSpecs"))?;
            }
            "ReplicaCountTransformer" => {
                let r = v.get("replica").cloned().unwrap_or(Value::Null);
                transform::replicas(&mut acc.res, &r, &specs("fieldSpecs"))?;
            }
            "PatchTransformer" => {
                patch::patch_entry(self.cx, k, v, acc)?;
            }
            "ValueAddTransformer" => self.value_add(k, v, acc)?,
            "ReplacementTransformer" => {
                let list = v
                    .get("replacements")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                replacements::run(self.cx, k, &list, acc)?;
            }
            _ => return Err(unsupported_plugin(k, "transformers", v)),
        }
        Ok(())
    }
}

impl Builder<'_, '_> {
    /// The alpha `ValueAddTransformer`: writes a value (by default the name of
    /// the kustomization's directory) into fields, or into a path segment.
    fn value_add(&self, k: &Kustomization, v: &Value, acc: &mut Acc) -> KResult<()> {
        let mut value = v
            .get("value")
            .map(super::smp::scalar_text)
            .unwrap_or_default()
            .trim()
            .to_string();
        if value.is_empty() {
            value = path::file_name(&k.dir).to_string();
        }
        let mut targets = v
            .get("targets")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if let Some(p) = v
            .get("targetFilePath")
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        {
            let file = k.restricted(self.cx, p)?;
            for d in self.cx.load_yaml(&file)? {
                targets.extend(
                    d.value
                        .get("targets")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                );
            }
        }
        if targets.is_empty() {
            return Err(k.err("ValueAddTransformer: must specify at least one target"));
        }
        for t in &targets {
            let fp = t.get("fieldPath").and_then(Value::as_str).unwrap_or("");
            if fp.is_empty() {
                return Err(k.err("ValueAddTransformer: fieldPath cannot be empty"));
            }
            let pos = t
                .get("filePathPosition")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            let idx: Vec<usize> = match t.get("selector").filter(|s| !s.is_null()) {
                Some(s) => super::selector::Selector::new(s)?.select(&acc.res),
                None => (0..acc.res.len()).collect(),
            };
            for i in idx {
                if fp == "metadata/namespace" {
                    transform::namespace_only_meta(&mut acc.res[i], &value);
                    continue;
                }
                let fields = fieldpath::split_spec_path(fp);
                let Some(cur) = fieldpath::scalar_at(&mut acc.res[i].v, &fields) else {
                    return Err(k.err(format!(
                        "ValueAddTransformer: `{fp}` does not lead to a scalar"
                    )));
                };
                let new = if pos > 0 {
                    let old = super::smp::scalar_text(cur);
                    if old.is_empty() {
                        value.clone()
                    } else {
                        let mut parts: Vec<String> = old.split('/').map(str::to_string).collect();
                        let at = usize::try_from(pos - 1).unwrap_or(0).min(parts.len());
                        parts.insert(at, value.clone());
                        parts.join("/")
                    }
                } else {
                    value.clone()
                };
                *cur = Value::String(new);
            }
        }
        Ok(())
    }
}

fn unsupported_plugin(k: &Kustomization, field: &str, v: &Value) -> RenderError {
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or("?");
    let api = v.get("apiVersion").and_then(Value::as_str).unwrap_or("?");
    RenderError::unsupported(format!(
        "`{}`: `{field}` entry `{api}/{kind}` is a plugin or KRM function, which is not run (only builtin configurations are)",
        k.file
    ))
    .at(k.file.clone(), None)
}
