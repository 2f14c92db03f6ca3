//! `ApplicationSet` expansion: generators and templates evaluated offline
//! against one revision of the repository, giving the `Application`s the
//! ApplicationSet controller would create, and its effective policy.
//!
//! Argo CD's behaviour is the specification (AC `applicationset/`, see
//! ARGOCD.md §6). Generators that need a network or a live cluster
//! (`scmProvider`, `pullRequest`, `clusterDecisionResource`, `plugin`, git
//! generators of other repositories, `clusters` with no cluster data) are
//! reported as unresolved: the expansion is then incomplete, never empty.
//!
//! Knows nothing of rendering the generated Applications or of diffing.

mod ahead;
pub mod fasttemplate;
mod generators;
pub(crate) use generators::TreeIndex;
mod policy;
mod render;
pub(crate) mod selector;
mod templated;
pub use templated::Templated;

use goyaml::json::LazyValue;
use goyaml::json::Pointer as _;
use std::collections::{BTreeMap, BTreeSet};

use base64::Engine as _;
use serde_json::Value;

pub(crate) use policy::{AppSetPolicy, PolicySource};

/// The finalizer that makes deleting an Application cascade to its resources.
pub(crate) const RESOURCES_FINALIZER: &str = "resources-finalizer.argocd.argoproj.io";

/// Controller settings that change expansion (they are flags of the
/// ApplicationSet controller, so they come from configuration).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppSetSettings {
    /// `--enable-new-git-file-globbing`: strict `doublestar` globbing for git
    /// `files` instead of the default greedy `git ls-files` pathspecs.
    pub(crate) new_git_file_globbing: bool,
    /// `--policy` / `ARGOCD_APPLICATIONSET_CONTROLLER_POLICY` (`None`: unset).
    pub(crate) controller_policy: Option<String>,
    /// `--enable-policy-override` (`None`: its default, true when no policy is set).
    pub(crate) policy_override: Option<bool>,
}

/// What expansion may read, for one revision.
pub struct AppSetContext<'a> {
    /// The revision being expanded.
    pub tree: &'a dyn crate::source::Tree,
    /// Does a generator's `repoURL` name this repository?
    pub is_this_repo: &'a dyn Fn(&str) -> bool,
    /// Does a git generator's `revision` name the revision being expanded?
    /// `None` treats every revision (`HEAD`, the target branch...) as this one.
    pub is_this_revision: Option<&'a dyn Fn(&str) -> bool>,
    /// Known clusters. Empty means "no cluster data": `clusters` generators are unresolved.
    pub clusters: &'a [Cluster],
    /// Controller settings.
    pub settings: &'a AppSetSettings,
    /// Shares one walk of `tree` between the ApplicationSets of a revision
    /// (`None`: each expansion walks the tree itself).
    pub index_cache: Option<&'a TreeIndexCache>,
    /// Applications already templated in this run, from the same template
    /// and parameters (`None`: each is templated).
    pub templated: Option<&'a Templated>,
}

/// What the git generators learn of a tree's paths, computed once and
/// shared by every expansion over the same tree (or over a tree with the
/// same shape, see [`crate::source::changes::Changes::same_shape`]: both
/// depend on paths and kinds only). Use one cache per tree.
#[derive(Default)]
pub struct TreeIndexCache {
    /// The whole tree's directories and files.
    index: std::sync::Mutex<Option<std::sync::Arc<TreeIndex>>>,
    /// By list of `directories` patterns: the directories that may match one.
    matching: std::sync::Mutex<std::collections::HashMap<Vec<String>, std::sync::Arc<Vec<String>>>>,
    /// Where what subtrees hold for those patterns is kept between runs.
    facts: Option<std::sync::Arc<crate::cache::Facts>>,
}

impl TreeIndexCache {
    /// A cache that keeps what it learns of subtrees in `facts`.
    pub(crate) fn kept_in(facts: Option<std::sync::Arc<crate::cache::Facts>>) -> Self {
        TreeIndexCache {
            facts,
            ..TreeIndexCache::default()
        }
    }
}

impl std::fmt::Debug for TreeIndexCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("TreeIndexCache")
    }
}

/// One Argo CD cluster, as a cluster Secret describes it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cluster {
    /// `data.name`.
    pub(crate) name: String,
    /// `data.server`.
    pub(crate) server: String,
    /// The Secret's labels.
    pub(crate) labels: BTreeMap<String, String>,
    /// The Secret's annotations.
    pub(crate) annotations: BTreeMap<String, String>,
    /// `data.project`, if set.
    pub(crate) project: Option<String>,
}

/// The label that marks a Secret as an Argo CD cluster.
pub(crate) const SECRET_TYPE_LABEL: &str = "argocd.argoproj.io/secret-type";

/// Reads a cluster Secret (label `argocd.argoproj.io/secret-type: cluster`),
/// decoding `data` (base64) and `stringData`. `None` for anything else.
#[must_use]
pub(crate) fn clusters_from_secret(secret: &Value) -> Option<Cluster> {
    if secret.get("kind").and_then(Value::as_str) != Some("Secret") {
        return None;
    }
    let meta = secret.get("metadata")?;
    let str_map = |v: Option<&Value>| -> BTreeMap<String, String> {
        v.and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    };
    let labels = str_map(meta.get("labels"));
    if labels.get(SECRET_TYPE_LABEL).map(String::as_str) != Some("cluster") {
        return None;
    }
    let field = |k: &str| -> Option<String> {
        // `stringData` is merged over `data` by the API server.
        if let Some(s) = secret
            .at(&format!("/stringData/{k}"))
            .and_then(Value::as_str)
        {
            return Some(s.to_string());
        }
        let b = secret.at(&format!("/data/{k}")).and_then(Value::as_str)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(b.trim())
            .ok()?;
        String::from_utf8(bytes).ok()
    };
    Some(Cluster {
        name: field("name").unwrap_or_default(),
        server: field("server").unwrap_or_default(),
        labels,
        annotations: str_map(meta.get("annotations")),
        project: field("project"),
    })
}

/// One Application the controller would generate.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedApp {
    /// A complete `argoproj.io/v1alpha1` `Application`, with
    /// `metadata.ownerReferences` naming the ApplicationSet as its controller
    /// (shared with the other revision's expansion that templated it).
    pub(crate) application: std::sync::Arc<LazyValue>,
    /// Which element, directory, file or cluster produced it, for messages
    /// (for example "git directory `apps/payments`").
    pub(crate) provenance: String,
}

impl GeneratedApp {
    /// `metadata.name`.
    #[must_use]
    pub(crate) fn name(&self) -> &str {
        // By key: asked of every generated Application by several readers.
        self.application
            .get("metadata")
            .and_then(|m| m.get("name"))
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    /// Deleting this Application cascades to its resources (it carries a
    /// resources finalizer, foreground or background).
    #[must_use]
    pub(crate) fn cascades(&self) -> bool {
        self.application
            .at("/metadata/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|f| {
                f.iter().filter_map(Value::as_str).any(|f| {
                    f == RESOURCES_FINALIZER
                        || f == "resources-finalizer.argocd.argoproj.io/foreground"
                        || f == "resources-finalizer.argocd.argoproj.io/background"
                })
            })
    }
}

/// The result of expanding one ApplicationSet at one revision.
#[derive(Debug, Clone, PartialEq)]
pub struct Expansion {
    /// The generated Applications, unique by name, in generator order.
    pub apps: Vec<GeneratedApp>,
    /// Generators that cannot be evaluated offline, one line each. When not
    /// empty the app set is incomplete: deletions are unknown.
    pub unresolved: Vec<String>,
    /// The indices in `spec.generators` of the generators evaluated whole
    /// (none when the expansion stopped at a limit).
    pub(crate) evaluated: Vec<usize>,
    /// The effective policy.
    pub(crate) policy: AppSetPolicy,
    /// Things the controller would refuse or warn about (duplicate names,
    /// nameless apps); they do not stop the expansion.
    pub(crate) notes: Vec<String>,
}

impl Expansion {
    /// Every generator was evaluated, so `apps` is exactly what the controller generates.
    #[must_use]
    pub(crate) fn is_complete(&self) -> bool {
        self.unresolved.is_empty()
    }

    /// The generated names.
    #[must_use]
    pub(crate) fn names(&self) -> BTreeSet<&str> {
        self.apps.iter().map(GeneratedApp::name).collect()
    }

    /// What decides the Applications that the generators not evaluated
    /// generate: the ApplicationSet `object` (this expansion's) with the
    /// generators that were evaluated left out, as their Applications are
    /// known and compared one by one.
    #[must_use]
    pub(crate) fn unevaluated_part(&self, object: &Value) -> Value {
        let mut part = object.clone();
        if let Some(Value::Array(generators)) = part.pointer_mut("/spec/generators") {
            for &i in &self.evaluated {
                if let Some(g) = generators.get_mut(i) {
                    *g = Value::Null;
                }
            }
        }
        part
    }
}

/// Why an ApplicationSet cannot be expanded. The controller would set an
/// `ErrorOccurred` condition and neither create nor delete anything.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct AppSetError(pub String);

pub(crate) use crate::limits::BEYOND_LIMITS;

impl AppSetError {
    /// Whether this is one of gitops-lint's limits rather than an error
    /// Argo CD's controller would meet.
    #[must_use]
    pub(crate) fn is_beyond_limits(&self) -> bool {
        self.0.contains(BEYOND_LIMITS)
    }
}

/// The effective policy alone (no generators evaluated).
///
/// # Errors
/// See [`AppSetError`]: an invalid `applicationsSync` or controller policy.
pub(crate) fn policy(
    appset: &Value,
    settings: &AppSetSettings,
) -> Result<AppSetPolicy, AppSetError> {
    policy::effective(appset, settings)
}

/// Expands an ApplicationSet manifest. Its `metadata.namespace` becomes the
/// namespace of every generated Application, so the caller should fill it in
/// (Argo CD's namespace) when the manifest leaves it out.
///
/// # Errors
/// Anything that makes the controller stop with an error condition: a
/// template that fails to parse or execute, a malformed generator, a git file
/// that does not parse, a `matrix` without exactly two children...
pub fn expand(appset: &Value, cx: &AppSetContext<'_>) -> Result<Expansion, AppSetError> {
    let policy = policy::effective(appset, cx.settings)?;
    match expand_within_limits(appset, cx, policy.clone()) {
        // Not the controller's error: what it would generate is unknown.
        Err(e) if e.is_beyond_limits() => Ok(Expansion {
            apps: Vec::new(),
            unresolved: vec![e.0],
            evaluated: Vec::new(),
            policy,
            notes: Vec::new(),
        }),
        other => other,
    }
}

fn expand_within_limits(
    appset: &Value,
    cx: &AppSetContext<'_>,
    policy: AppSetPolicy,
) -> Result<Expansion, AppSetError> {
    let spec = appset
        .get("spec")
        .and_then(Value::as_object)
        .ok_or_else(|| AppSetError("ApplicationSet has no spec".into()))?;
    let name = appset
        .at("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let namespace = appset
        .at("/metadata/namespace")
        .and_then(Value::as_str)
        .map(str::to_string);
    let go_template = spec
        .get("goTemplate")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let options: Vec<String> = crate::manifest::strings(spec.get("goTemplateOptions"));
    let renderer = render::Renderer::new(go_template, &options)?;
    let template = spec
        .get("template")
        .cloned()
        .unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    let template_patch = match spec.get("templatePatch") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(_) => return Err(AppSetError("spec.templatePatch must be a string".into())),
    };
    let gens = match spec.get("generators") {
        Some(Value::Array(a)) => a.as_slice(),
        None | Some(Value::Null) => &[],
        Some(_) => return Err(AppSetError("spec.generators must be a list".into())),
    };
    let ev = generators::Evaluator::new(cx, &renderer);
    let mut apps: Vec<GeneratedApp> = Vec::new();
    let mut unresolved = Vec::new();
    let mut evaluated = Vec::new();
    let mut notes = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, g) in gens.iter().enumerate() {
        let label = |what: &str| format!("generator {} ({what})", i + 1);
        let mut whole = true;
        for result in ev.top_level(g)? {
            let (kind, outcome, gen_template) = result;
            let sets = match outcome {
                generators::Outcome::Sets(s) => s,
                generators::Outcome::Unresolved(why) => {
                    unresolved.push(format!("{}: {why}", label(&kind)));
                    whole = false;
                    continue;
                }
            };
            let merged = render::merge_template(gen_template.as_ref(), &template);
            // Everything templating reads besides the parameters.
            let context = cx.templated.and_then(|t| {
                let what = serde_json::json!([
                    go_template,
                    options,
                    merged,
                    spec.get("syncPolicy"),
                    template_patch,
                    name,
                    namespace,
                ]);
                t.context(&what).map(|c| (t, c))
            });
            let finished = |app: Value| finish(app, &name, namespace.as_deref());
            let template = ahead::Template {
                go: go_template,
                options: &options,
                merged: &merged,
                sync_policy: spec.get("syncPolicy"),
                patch: template_patch.as_deref(),
                finish: &finished,
            };
            let mut ahead = ahead::template(&sets, &template, renderer.budget(), context);
            for (i, set) in sets.into_iter().enumerate() {
                let templated = ahead.get_mut(i).and_then(Option::take);
                let render = || match ahead::take(templated, &renderer) {
                    Some(app) => Ok(app),
                    None => renderer
                        .application(
                            &merged,
                            &set.params,
                            spec.get("syncPolicy"),
                            template_patch.as_deref(),
                        )
                        .map(finished),
                };
                let app = match context {
                    Some((t, context)) => t.application(context, &set.params, &renderer, render),
                    None => render().map(|v| std::sync::Arc::new(v.into())),
                }
                .map_err(|e| {
                    AppSetError(format!("{} for {}: {e}", label(&kind), set.provenance))
                })?;
                let app_name = app
                    .at("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string();
                if app_name.is_empty() {
                    notes.push(format!(
                        "an Application with no name ({} for {})",
                        label(&kind),
                        set.provenance
                    ));
                    continue;
                }
                if !seen.insert(app_name.clone()) {
                    notes.push(format!(
                        "duplicate Application name `{app_name}` (from {})",
                        set.provenance
                    ));
                    continue;
                }
                apps.push(GeneratedApp {
                    application: app,
                    provenance: set.provenance,
                });
            }
        }
        if whole {
            evaluated.push(i);
        }
    }
    Ok(Expansion {
        apps,
        unresolved,
        evaluated,
        policy,
        notes,
    })
}

/// Sets the fields the controller sets after templating: the namespace of the
/// ApplicationSet and an owner reference to it.
fn finish(mut app: Value, appset_name: &str, namespace: Option<&str>) -> Value {
    if let Some(meta) = app.get_mut("metadata").and_then(Value::as_object_mut) {
        match namespace {
            Some(ns) => {
                meta.insert("namespace".into(), Value::from(ns));
            }
            None => {
                meta.remove("namespace");
            }
        }
        meta.insert(
            "ownerReferences".into(),
            serde_json::json!([{
                "apiVersion": "argoproj.io/v1alpha1",
                "kind": "ApplicationSet",
                "name": appset_name,
                "controller": true,
                "blockOwnerDeletion": true,
            }]),
        );
    }
    app
}

#[cfg(test)]
mod tests;
