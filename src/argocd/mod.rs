//! Building the inventory at one revision: find `Application`s, follow
//! app-of-apps, expand `ApplicationSet` generators, decide which apps render
//! from this repository, and render them.
//!
//! Knows nothing of diffing two revisions.

pub mod application;
pub mod appset;
pub mod instances;
pub mod tracking;
pub mod unchanged;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::Value;

pub use application::{
    is_application, is_application_set, normalize_repo_url, AppSource, AppSpec, PruneMode,
};

use crate::config::Config;
use crate::manifest::{Manifest, Origin, Scopes};
use crate::render::{
    self, directory::is_manifest_file, ParseCache, RefSource, RefTarget, RenderContext,
    RenderError, RenderOptions, SourceSpec, SourceType,
};
use crate::source::{self, EntryKind, ObjectId, Tree};
use crate::yaml::Dialect;

/// Whether and how an app was rendered at this revision.
#[derive(Debug, Clone)]
pub enum AppStatus {
    /// Rendered from this repository.
    Rendered,
    /// Could not be rendered: its resources are unknown.
    Unrendered(RenderError),
    /// Its sources are elsewhere (another repository, a Helm repository, a
    /// revision not in this repository): not rendered, not guessed.
    External(String),
    /// Not rendered at either revision of a diff: everything its render
    /// reads is identical at both (see [`unchanged`]), so it prunes,
    /// creates and changes nothing.
    Unchanged,
}

impl AppStatus {
    /// `rendered`, `unrendered` or `external`.
    #[must_use]
    pub fn as_str(&self) -> &'static str {
        match self {
            AppStatus::Rendered => "rendered",
            AppStatus::Unrendered(_) => "unrendered",
            AppStatus::External(_) => "external",
            AppStatus::Unchanged => "unchanged",
        }
    }
}

/// What manages an Application object (and so can delete it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Manager {
    /// Another app renders this Application (app-of-apps).
    App(String),
    /// An ApplicationSet generates it.
    AppSet(String),
}

/// One Application (or implicit app) at one revision.
#[derive(Debug, Clone)]
pub struct App {
    /// Unique key: `namespace/name` of the Application object, followed by
    /// `@instance` outside the default Argo CD instance ([`instances`]).
    pub key: String,
    /// The Argo CD instance whose root tree holds the app (`None`: the
    /// default one).
    pub instance: Option<String>,
    /// The parsed spec.
    pub spec: AppSpec,
    /// The Application object (implicit apps have a synthesised one).
    pub object: Arc<Value>,
    /// Where the Application is declared (file of the raw manifest, if any).
    pub origin: Origin,
    /// Who manages the Application object.
    pub manager: Option<Manager>,
    /// Render status.
    pub status: AppStatus,
    /// The rendered resources (empty unless `Rendered`), duplicates removed (last wins).
    pub resources: Vec<Manifest>,
    /// Every input the render read: path → object id (`dir/` for listings).
    pub inputs: BTreeMap<String, ObjectId>,
    /// How each source was rendered.
    pub source_types: Vec<SourceType>,
    /// Not a real Application: a directory linted because the repository has none.
    pub implicit: bool,
}

impl App {
    /// The name shown to users: `name`, or `namespace/name` outside `argocd`.
    #[must_use]
    pub fn display_name(&self) -> String {
        let name = if self.spec.namespace == "argocd" {
            self.spec.name.clone()
        } else {
            format!("{}/{}", self.spec.namespace, self.spec.name)
        };
        instances::qualify(name, self.instance.as_deref())
    }

    /// The first local source path, for display.
    #[must_use]
    pub fn source_path(&self) -> String {
        self.spec
            .sources
            .iter()
            .find_map(|s| s.path.clone())
            .or_else(|| self.spec.sources.first().and_then(|s| s.chart.clone()))
            .unwrap_or_default()
    }
}

/// An `ApplicationSet` found at one revision.
#[derive(Debug, Clone)]
pub struct AppSetEntry {
    /// `namespace/name`.
    pub key: String,
    /// The object.
    pub object: Arc<Value>,
    /// Where it is declared.
    pub origin: Origin,
    /// Who manages it.
    pub manager: Option<Manager>,
    /// What it generates at this revision (an error stops the controller:
    /// nothing is created or deleted).
    pub expansion: Result<appset::Expansion, appset::AppSetError>,
}

/// An `AppProject` found by the file scan.
#[derive(Debug, Clone, PartialEq)]
pub struct DeclaredProject {
    /// The object.
    pub object: Arc<Value>,
    /// Where it is declared.
    pub origin: Origin,
}

/// Whether an object is an Argo CD `AppProject`.
#[must_use]
pub fn is_app_project(obj: &Value) -> bool {
    obj.get("kind").and_then(Value::as_str) == Some("AppProject")
        && obj
            .get("apiVersion")
            .and_then(Value::as_str)
            .is_some_and(|a| a.starts_with("argoproj.io/"))
}

/// Everything gitops-lint knows about one revision.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    /// Short description of the revision.
    pub revision: String,
    /// Apps by key.
    pub apps: BTreeMap<String, App>,
    /// ApplicationSets by key.
    pub appsets: BTreeMap<String, AppSetEntry>,
    /// Cluster scope knowledge (built-in table plus CRDs in the repository).
    pub scopes: Scopes,
    /// Tracking settings of an `argocd-cm` ConfigMap in the repository.
    pub tracking: Option<tracking::LearnedTracking>,
    /// AppProjects declared in any file of the revision, by name, in walk
    /// order; rendered ones are in their apps' resources.
    pub projects: BTreeMap<String, Vec<DeclaredProject>>,
    /// Argo CD's `kustomize.buildOptions` in effect at this revision
    /// (`kustomizeBuildOptions` in the configuration, else `argocd-cm` in
    /// the repository): renders depend on it, so a render is reused or
    /// left unrendered only when both revisions have the same.
    pub kustomize_build_options: String,
    /// Files that mention Argo CD but could not be parsed: the apps they
    /// declare are unknown at this revision.
    pub broken_files: BTreeMap<String, RenderError>,
    /// The blob id of each of `broken_files`: a file broken at both
    /// revisions of a diff is the change's concern only if its content differs.
    pub broken_file_ids: BTreeMap<String, ObjectId>,
    /// Notes for the user about assumptions made.
    pub notes: Vec<String>,
    /// Applications (`namespace/name`) declared in more than one root file:
    /// the first declaration is used. Reported as one note, listed in full on
    /// request (a repository can hold thousands).
    pub declared_twice: Vec<String>,
    /// Root files (Applications and ApplicationSets no app renders) and the
    /// directories of implicit apps, in walk order: what something outside
    /// Argo CD applies.
    pub roots: Vec<String>,
    /// Root files of the default instance whose trees render an Application
    /// or ApplicationSet name differently from another root's: built again
    /// as instances of their own ([`instances`]).
    pub colliding_roots: BTreeSet<String>,
    /// No Application was found, so the repository (or each `apps:`
    /// directory) is linted as an implicit app.
    pub implicit_fallback: bool,
    /// Apps rendered at this revision (each source rendered from the tree).
    pub renders: usize,
    /// Apps whose render was taken from the other revision's inventory
    /// because the Application and every input it read are unchanged: their
    /// resources are identical there, so a plan need not compare them.
    pub reused: BTreeSet<String>,
    /// Files the scan parsed (they may declare Applications, ApplicationSets,
    /// CRDs or cluster Secrets), for the other revision's scan to reuse.
    pub scan_candidates: BTreeSet<String>,
    /// Set when the revision exceeds a limit ([`MAX_DECLARED`],
    /// [`render::MAX_RENDERED_OBJECTS`]): the inventory is then empty and must not be
    /// compared, since every app in it is unknown.
    pub over_limit: Option<String>,
}

/// Most Applications, ApplicationSets and CRDs one revision may declare or
/// generate (app-of-apps children included).
pub const MAX_DECLARED: usize = 100_000;

/// How to recognise this repository and its revisions.
pub struct RepoIdentity {
    /// Normalised URLs naming this repository (remotes plus configured aliases).
    pub urls: BTreeSet<String>,
    /// `targetRevision` values that mean "this revision".
    pub branches: BTreeSet<String>,
}

impl RepoIdentity {
    /// Builds the identity from remotes, config and branch names.
    #[must_use]
    pub fn new(remotes: &[String], config: &Config, current_branch: Option<&str>) -> RepoIdentity {
        let urls = remotes
            .iter()
            .chain(config.repo_urls.iter())
            .map(|u| normalize_repo_url(u))
            .collect();
        let mut branches: BTreeSet<String> = ["", "HEAD", "main", "master"]
            .into_iter()
            .map(str::to_string)
            .collect();
        branches.extend(config.branches.iter().cloned());
        if let Some(b) = current_branch {
            branches.insert(b.to_string());
        }
        RepoIdentity { urls, branches }
    }

    /// Whether `url` names this repository. With no known URL at all, every
    /// git URL is taken to be this repository (and a note says so).
    #[must_use]
    pub fn is_this_repo(&self, url: &str) -> bool {
        self.urls.is_empty() || self.urls.contains(&normalize_repo_url(url))
    }
}

/// The git repositories this revision's Applications name when not one of
/// them renders from this repository and some name a git repository that
/// `identity` does not recognise: `None` otherwise. A fork, a mirror, an
/// internal hostname or a `file://` CI checkout looks like that, and linting
/// it would report nothing because nothing was read, so callers refuse it.
/// Applications that only use Helm repositories are left alone: nothing in
/// any git repository is involved.
#[must_use]
pub fn only_foreign_repos(inv: &Inventory, identity: &RepoIdentity) -> Option<Vec<String>> {
    let mut apps = inv.apps.values().filter(|a| !a.implicit).peekable();
    apps.peek()?;
    let mut urls = BTreeSet::new();
    for app in apps {
        if !matches!(app.status, AppStatus::External(_)) {
            return None;
        }
        for src in &app.spec.sources {
            if src.chart.is_none()
                && !src.repo_url.is_empty()
                && !identity.is_this_repo(&src.repo_url)
            {
                urls.insert(src.repo_url.clone());
            }
        }
    }
    (!urls.is_empty()).then(|| urls.into_iter().collect())
}

/// What building an inventory needs.
pub struct InventoryInput<'a> {
    /// The revision's tree.
    pub tree: Arc<dyn Tree>,
    /// Shared parse cache.
    pub cache: &'a ParseCache,
    /// Render settings.
    pub render_options: &'a RenderOptions,
    /// Configuration.
    pub config: &'a Config,
    /// This repository's identity.
    pub repo: &'a RepoIdentity,
    /// Trees of other revisions named by `targetRevision` (tags, commits).
    pub tree_at: &'a (dyn Fn(&str) -> Option<Arc<dyn Tree>> + Sync),
    /// An inventory of the other revision whose renders may be reused when
    /// an app's spec and every recorded input are unchanged.
    pub reuse: Option<&'a Inventory>,
    /// In a diff, the other revision: apps that provably render the same
    /// there are left unrendered (status [`AppStatus::Unchanged`]) until
    /// [`unchanged::settle`] compares both inventories.
    pub defer: Option<unchanged::Deferral>,
    /// Root files that are Argo CD instances of their own, because their
    /// trees collide with another root's ([`Inventory::colliding_roots`] of
    /// either revision of a diff).
    pub split: &'a BTreeSet<String>,
}

/// How [`render_app`] dealt with an app.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Rendered,
    Reused,
    Deferred,
}

/// A raw declaration found by scanning files.
struct Declared {
    value: Value,
    origin: Origin,
}

/// Scans every manifest file for Applications, ApplicationSets, CRDs and
/// cluster Secrets (the third list holds the last two). Files that cannot
/// hold any are skipped by a byte test (such an object names `argoproj.io`
/// and its kind or `secret-type` label, or is a CRD), so only those are
/// parsed; parses are shared with rendering and across revisions by
/// blob id, and only the documents kept here are copied out of the cache.
fn scan(
    input: &InventoryInput<'_>,
    inv: &mut Inventory,
) -> (Vec<Declared>, Vec<Declared>, Vec<Value>) {
    let mut files = Vec::new();
    // At head, a directory identical at base holds the same candidates:
    // they are taken from base's scan instead of reading every file again.
    let mut known = Vec::new();
    let prev = input
        .defer
        .as_ref()
        .zip(input.reuse)
        .map(|(d, r)| PrevScan {
            tree: d.other.as_ref(),
            candidates: &r.scan_candidates,
            out: &mut known,
        });
    walk(input.tree.as_ref(), "", &mut files, prev);
    let argo = memchr::memmem::Finder::new(b"argoproj.io");
    let crd = memchr::memmem::Finder::new(b"CustomResourceDefinition");
    let argocd_cm = memchr::memmem::Finder::new(b"argocd-cm");
    // Most files naming `argoproj.io` only carry sync annotations; an
    // Application or ApplicationSet also spells out its kind, and a cluster
    // Secret its `secret-type` label, unless YAML escapes hide the letters.
    let declares = [
        "Application",
        "AppProject",
        "ArgoCD",
        "secret-type",
        "\\x",
        "\\u",
        "\\U",
    ]
    .map(|m| memchr::memmem::Finder::new(m.as_bytes()).into_owned());
    // In walk order (a directory's entries by name, depth first): the first
    // of two declarations of one Application is the one used.
    let known: BTreeSet<String> = known.into_iter().collect();
    files.extend(known.iter().cloned());
    files.sort_by(|a, b| a.split('/').cmp(b.split('/')));
    let parsed: Vec<(String, ObjectId, render::ParsedStream)> = files
        .par_iter()
        .filter_map(|f| {
            // `walk` lists regular files only, so no symlink needs resolving.
            let id = input.tree.entry(f).ok().flatten()?.id;
            let bytes = input.tree.read_raw(f).ok()?;
            let argo_object =
                argo.find(&bytes).is_some() && declares.iter().any(|m| m.find(&bytes).is_some());
            if !known.contains(f)
                && !argo_object
                && crd.find(&bytes).is_none()
                && argocd_cm.find(&bytes).is_none()
            {
                return None;
            }
            // Read as Argo CD and kubectl read manifests (sigs.k8s.io/yaml),
            // as the directory renderer does: an Application file rendered
            // by an app-of-apps is then parsed once, not once per dialect.
            Some((
                f.clone(),
                id,
                input.cache.get_or_parse_as(id, &bytes, Dialect::SigsYaml),
            ))
        })
        .collect();
    inv.scan_candidates = parsed.iter().map(|(f, _, _)| f.clone()).collect();
    // Copying the kept documents out of the shared parses is done in
    // parallel; they are then taken in walk order.
    let wanted = |v: &Value| {
        is_application(v)
            || is_application_set(v)
            || is_app_project(v)
            || v.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
            || appset::clusters_from_secret(v).is_some()
            || tracking::LearnedTracking::from_object(v, None).is_some()
    };
    let kept: Vec<Result<Vec<(Value, Origin)>, RenderError>> = parsed
        .par_iter()
        .map(|(file, _, docs)| {
            let docs = docs
                .as_ref()
                .as_ref()
                .map_err(|e| RenderError::from_yaml(file, e))?;
            let mut out = Vec::new();
            for d in docs {
                let mut items = Vec::new();
                // Anything with `items` may be a list (see `expand_lists`).
                if d.value.get("items").is_some() {
                    render::expand_lists(d.value.clone(), &mut items);
                    items.retain(|v| wanted(v));
                } else if wanted(&d.value) {
                    items.push(d.value.clone());
                }
                let origin = Origin {
                    file: Some(file.clone()),
                    line: Some(d.line),
                    doc_index: Some(d.index),
                };
                out.extend(items.into_iter().map(|v| (v, origin.clone())));
            }
            Ok(out)
        })
        .collect();
    let mut apps = Vec::new();
    let mut appsets = Vec::new();
    let mut others = Vec::new();
    for ((file, id, _), items) in parsed.iter().zip(kept) {
        let items = match items {
            Ok(items) => items,
            Err(e) => {
                inv.broken_files.insert(file.clone(), e);
                inv.broken_file_ids.insert(file.clone(), *id);
                continue;
            }
        };
        if apps.len() + appsets.len() + others.len() + items.len() > MAX_DECLARED {
            inv.over_limit = Some(format!(
                "more than {MAX_DECLARED} Applications, ApplicationSets and CRDs are declared, more than gitops-lint reads"
            ));
            return (Vec::new(), Vec::new(), Vec::new());
        }
        for (v, origin) in items {
            if is_application(&v) {
                apps.push(Declared { value: v, origin });
            } else if is_application_set(&v) {
                appsets.push(Declared { value: v, origin });
            } else if is_app_project(&v) {
                let name = v
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                inv.projects.entry(name).or_default().push(DeclaredProject {
                    object: Arc::new(v),
                    origin,
                });
            } else if v.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition") {
                inv.scopes.learn_crd(&v);
                others.push(v);
            } else if let Some(t) =
                tracking::LearnedTracking::from_object(&v, origin.file.as_deref())
            {
                // The first one in walk order, as for Applications.
                inv.tracking.get_or_insert(t);
            } else {
                others.push(v);
            }
        }
    }
    (apps, appsets, others)
}

/// The other revision's scan, for [`walk`] to skip directories identical there.
struct PrevScan<'a> {
    tree: &'a dyn Tree,
    candidates: &'a BTreeSet<String>,
    out: &'a mut Vec<String>,
}

/// Lists the manifest files below `dir`. With `prev`, a directory whose id
/// is the same in the other revision is not entered: the files of it that
/// the other revision's scan kept go to `prev.out` instead.
fn walk(tree: &dyn Tree, dir: &str, out: &mut Vec<String>, mut prev: Option<PrevScan<'_>>) {
    let Ok(entries) = tree.list_raw(dir) else {
        return;
    };
    // A Helm chart's files are templates and values, not manifests: the
    // Applications a chart declares are found in its render. Only its plain
    // `crds/` are read, for the scopes they declare.
    if entries
        .iter()
        .any(|e| e.kind == EntryKind::File && e.name == "Chart.yaml")
    {
        if entries
            .iter()
            .any(|e| e.kind == EntryKind::Dir && e.name == "crds")
        {
            let crds = if dir.is_empty() {
                "crds".to_string()
            } else {
                format!("{dir}/crds")
            };
            walk(tree, &crds, out, prev);
        }
        return;
    }
    for e in entries {
        let full = if dir.is_empty() {
            e.name.clone()
        } else {
            format!("{dir}/{}", e.name)
        };
        match e.kind {
            EntryKind::Dir if e.name != ".git" => {
                if let Some(p) = prev.as_mut() {
                    if p.tree
                        .entry(&full)
                        .ok()
                        .flatten()
                        .is_some_and(|o| o.id == e.id)
                    {
                        let below = format!("{full}/");
                        p.out.extend(
                            p.candidates
                                .range(below.clone()..)
                                .take_while(|f| f.starts_with(&below))
                                .cloned(),
                        );
                        continue;
                    }
                }
                walk(
                    tree,
                    &full,
                    out,
                    prev.as_mut().map(|p| PrevScan {
                        tree: p.tree,
                        candidates: p.candidates,
                        out: &mut *p.out,
                    }),
                );
            }
            EntryKind::File if is_manifest_file(&e.name) => out.push(full),
            _ => {}
        }
    }
}

fn app_key(spec: &AppSpec, instance: Option<&str>) -> String {
    instances::qualify(format!("{}/{}", spec.namespace, spec.name), instance)
}

/// Builds the inventory of one revision.
#[must_use]
pub fn build(input: &InventoryInput<'_>) -> Inventory {
    let mut inv = Inventory {
        revision: input.tree.describe(),
        ..Inventory::default()
    };
    inv.scopes
        .configured
        .clone_from(&input.config.cluster_scoped_kinds);
    let (declared, declared_sets, cluster_secrets) = scan(input, &mut inv);
    if inv.over_limit.is_some() {
        return inv;
    }
    inv.kustomize_build_options = input
        .config
        .kustomize_build_options
        .clone()
        .or_else(|| {
            inv.tracking
                .as_ref()
                .and_then(|t| t.kustomize_build_options.clone())
        })
        .unwrap_or_default();
    if input.repo.urls.is_empty() {
        inv.notes.push(
            "the repository has no git remote and no `repoUrls` in .gitops-lint.yaml: every Application's repoURL is taken to be this repository".to_string(),
        );
    }

    let clusters: Vec<appset::Cluster> = cluster_secrets
        .iter()
        .filter_map(appset::clusters_from_secret)
        .chain(input.config.clusters.iter().map(|c| appset::Cluster {
            name: c.name.clone(),
            server: c.server.clone(),
            labels: c.labels.clone(),
            annotations: c.annotations.clone(),
            project: c.project.clone(),
        }))
        .collect();
    let settings = appset::AppSetSettings {
        new_git_file_globbing: input.config.applicationset.new_git_file_globbing,
        controller_policy: input.config.applicationset.policy.clone(),
        policy_override: input.config.applicationset.policy_override,
    };
    // Git generators of every ApplicationSet share one walk of the tree.
    let index_cache = appset::TreeIndexCache::default();
    let is_this_repo = |u: &str| input.repo.is_this_repo(u);
    let is_this_revision = |r: &str| input.repo.branches.contains(r);
    let actx = appset::AppSetContext {
        tree: input.tree.as_ref(),
        is_this_repo: &is_this_repo,
        is_this_revision: Some(&is_this_revision),
        clusters: &clusters,
        settings: &settings,
        index_cache: Some(&index_cache),
    };

    // Round 0: every Application and ApplicationSet declared in a root
    // file, grouped by the Argo CD instance that applies it.
    let mut groups: BTreeMap<Option<String>, Vec<App>> = BTreeMap::new();
    let mut seen: BTreeSet<String> = BTreeSet::new();
    let mut duplicates: Vec<(String, Option<String>, Arc<Value>)> = Vec::new();
    let declared: Vec<(Declared, Option<AppSpec>)> = declared
        .into_par_iter()
        .map(|d| {
            let spec = AppSpec::parse(&d.value);
            (d, spec)
        })
        .collect();
    let split = input.split;
    for (d, spec) in declared {
        let Some(spec) = spec else {
            continue;
        };
        let file = d.origin.file.as_deref();
        if !instances::may_be_root(input.config, file) {
            continue;
        }
        let instance = instances::instance_of(input.config, split, file);
        let key = app_key(&spec, instance.as_deref());
        if !seen.insert(key.clone()) {
            duplicates.push((key, d.origin.file, Arc::new(d.value)));
            continue;
        }
        let app = new_app(
            key,
            spec,
            Arc::new(d.value),
            d.origin,
            None,
            instance.clone(),
        );
        groups.entry(instance).or_default().push(app);
    }
    for d in declared_sets {
        let file = d.origin.file.as_deref();
        if !instances::may_be_root(input.config, file) {
            continue;
        }
        let instance = instances::instance_of(input.config, split, file);
        let entry = expand_set(
            &actx,
            Arc::new(d.value),
            d.origin,
            None,
            instance.as_deref(),
        );
        let generated = generated_apps(&entry, input.reuse, instance.as_deref());
        groups.entry(instance).or_default().extend(generated);
        inv.appsets.insert(entry.key.clone(), entry);
    }

    // A diff compares like with like: when the other revision has real
    // Applications, this one is not linted as an implicit app (removing the
    // last Application file must not turn the whole tree into one app).
    let other_has_apps = input
        .reuse
        .is_some_and(|r| r.apps.values().any(|a| !a.implicit));
    if groups.values().all(Vec::is_empty)
        && inv.appsets.is_empty()
        && inv.broken_files.is_empty()
        && !other_has_apps
    {
        let dirs: Vec<String> = if input.config.apps.is_empty() {
            vec![String::new()]
        } else {
            input.config.apps.clone()
        };
        for dir in &dirs {
            let app = implicit_root(input, dir);
            groups.entry(app.instance.clone()).or_default().push(app);
        }
        inv.implicit_fallback = true;
        inv.notes.push(format!(
            "the repository has no Argo CD Application: linting {} as implicit app(s) with manual prune",
            input.config.apps.iter().map(|d| format!("`{d}`")).collect::<Vec<_>>().join(", ").if_empty("the repository root")
        ));
    } else {
        // `apps:` names directories that are apps of their own (applied by
        // `kubectl apply -k`, a bootstrap script): linted beside the
        // Applications found, unless an Application of this repository
        // already renders them or below them.
        let within = |a: &str, b: &str| b.is_empty() || a == b || a.starts_with(&format!("{b}/"));
        let mut implicit = Vec::new();
        for dir in &input.config.apps {
            let covering = groups.values().flatten().find(|a| {
                a.spec.sources.iter().any(|s| {
                    input.repo.is_this_repo(&s.repo_url)
                        && s.path
                            .as_deref()
                            .is_some_and(|p| within(p, dir) || within(dir, p))
                })
            });
            match covering {
                Some(a) => inv.notes.push(format!(
                    "`apps:` entry `{dir}` is not linted as an app of its own: Application `{}` renders from it",
                    a.key
                )),
                None => {
                    let app = implicit_root(input, dir);
                    if !groups.values().flatten().any(|a| a.key == app.key) {
                        implicit.push(app);
                    }
                }
            }
        }
        for app in implicit {
            groups.entry(app.instance.clone()).or_default().push(app);
        }
    }

    let oob = out_of_bounds_symlink(input.tree.as_ref());
    let mut done: BTreeMap<String, App> = BTreeMap::new();
    let mut clashes: Vec<instances::Clash> = Vec::new();
    for (instance, pending) in groups {
        let rounds = Rounds {
            input,
            actx: &actx,
            oob: oob.as_ref(),
            instance: instance.as_deref(),
        };
        match rounds.run(&mut inv, pending, &mut clashes) {
            Ok(tree) => done.extend(tree),
            Err(why) => return over_limit(inv, why),
        }
    }
    // A raw declaration read as an input of another app's render is a part of
    // that app (e.g. a base patched by an overlay), not an app of its own,
    // unless that other app renders it under the same key (handled above).
    // Only an app that rendered says so: one that failed part-way has read
    // files it may well have rendered as Applications.
    let inputs_of_others: BTreeMap<String, String> = done
        .values()
        .filter(|a| matches!(a.status, AppStatus::Rendered))
        .flat_map(|a| a.inputs.keys().map(move |p| (p.clone(), a.key.clone())))
        .collect();
    let drop: Vec<String> = done
        .values()
        .filter(|a| a.manager.is_none() && !a.implicit)
        .filter(|a| {
            a.origin
                .file
                .as_deref()
                .and_then(|f| inputs_of_others.get(f))
                .is_some_and(|owner| *owner != a.key)
        })
        .map(|a| a.key.clone())
        .collect();
    for k in drop {
        done.remove(&k);
    }
    let drop_sets: Vec<String> = inv
        .appsets
        .values()
        .filter(|s| s.manager.is_none())
        .filter(|s| {
            s.origin
                .file
                .as_deref()
                .and_then(|f| inputs_of_others.get(f))
                .is_some()
        })
        .map(|s| s.key.clone())
        .collect();
    for k in drop_sets {
        inv.appsets.remove(&k);
        done.retain(|_, a| a.manager != Some(Manager::AppSet(k.clone())));
    }
    claim_generated_names(&mut inv.appsets);
    // A second declaration of one name in a root file is a root of its own:
    // when its object differs from the tree that holds the name, the two
    // trees collide. One read by another app's render is a part of it.
    for (key, file, object) in duplicates {
        let Some(file) = file.filter(|f| !inputs_of_others.contains_key(f)) else {
            continue;
        };
        inv.declared_twice.push(key.clone());
        let kept = match done.get(&key) {
            Some(first) if *first.object == *object => continue,
            Some(_) => instances::root_file(&done, &inv.appsets, &key),
            // The first declaration was a part of another app: this one is
            // then the only root of that name, and must be analysed.
            None => Some(file.clone()),
        };
        if let Some(kept) = kept {
            clashes.push(instances::Clash {
                key,
                kept,
                other: file,
            });
        }
    }
    clashes.sort();
    clashes.dedup();
    instances::settle_clashes(
        input.config,
        &clashes,
        &mut inv.colliding_roots,
        &mut inv.notes,
    );
    let mut roots: BTreeSet<String> = BTreeSet::new();
    inv.roots = done
        .values()
        .filter(|a| a.manager.is_none())
        .filter_map(|a| match &a.origin.file {
            Some(f) => Some(f.clone()),
            None => a.implicit.then(|| a.source_path()),
        })
        .chain(
            inv.appsets
                .values()
                .filter(|s| s.manager.is_none())
                .filter_map(|s| s.origin.file.clone()),
        )
        .filter(|f| roots.insert(f.clone()))
        .collect();
    inv.roots.sort_by(|a, b| a.split('/').cmp(b.split('/')));
    inv.apps = done;
    inv
}

/// Two ApplicationSets of one instance generating one Application name: the
/// controller sets itself as the Application's controller reference
/// (argo-cd `applicationset/controllers/applicationset_controller.go`
/// `createOrUpdateInCluster`, `controllerutil.SetControllerReference`),
/// which fails for an Application another ApplicationSet already controls:
/// that reconcile of the second set reports `ErrorOccurred` and returns
/// before `deleteInCluster`. Which set created it first is not in git, so
/// every set after the first (in key order) that generates it is told;
/// GL018 reports it.
fn claim_generated_names(appsets: &mut BTreeMap<String, AppSetEntry>) {
    let mut owners: BTreeMap<String, String> = BTreeMap::new();
    let mut refused: Vec<(String, String)> = Vec::new();
    for (set, entry) in appsets.iter() {
        let Ok(exp) = &entry.expansion else {
            continue;
        };
        let instance = instances::instance_of_key(set);
        for g in &exp.apps {
            let Some(spec) = AppSpec::parse(&g.application) else {
                continue;
            };
            let key = app_key(&spec, instance);
            match owners.get(&key) {
                None => {
                    owners.insert(key, set.clone());
                }
                Some(first) if first != set => refused.push((
                    set.clone(),
                    format!(
                        "Application `{}` is also generated by ApplicationSet `{}`, and only one ApplicationSet can control it; while this fails, the ApplicationSet deletes none of its Applications",
                        g.name(),
                        instances::unqualified(first).strip_prefix("argocd/").unwrap_or(first)
                    ),
                )),
                Some(_) => {}
            }
        }
    }
    for (set, note) in refused {
        if let Some(Ok(exp)) = appsets.get_mut(&set).map(|e| &mut e.expansion) {
            if !exp.notes.contains(&note) {
                exp.notes.push(note);
            }
        }
    }
}

/// The app-of-apps rounds of one Argo CD instance: render what is pending,
/// take the Applications and ApplicationSets those renders hold as the next
/// round's apps, until nothing new appears.
struct Rounds<'a> {
    input: &'a InventoryInput<'a>,
    actx: &'a appset::AppSetContext<'a>,
    oob: Option<&'a RenderError>,
    instance: Option<&'a str>,
}

impl Rounds<'_> {
    /// The apps of the instance's trees, by key; clashes between two trees
    /// rendering one name differently go to `clashes` (the first object is
    /// kept, so the rounds settle).
    ///
    /// # Errors
    /// A limit was exceeded: why, for [`over_limit`].
    fn run(
        &self,
        inv: &mut Inventory,
        mut pending: Vec<App>,
        clashes: &mut Vec<instances::Clash>,
    ) -> Result<BTreeMap<String, App>, String> {
        let input = self.input;
        let instance = self.instance;
        let oob = self.oob;
        let mut rounds = 0;
        let mut done: BTreeMap<String, App> = BTreeMap::new();
        while !pending.is_empty() && rounds < 16 {
            rounds += 1;
            if done.len() + pending.len() > MAX_DECLARED {
                return Err(format!("more than {MAX_DECLARED} Applications are declared or generated by app-of-apps, more than gitops-lint reads"));
            }
            let rendered: Vec<(App, Outcome)> = pending
                .into_par_iter()
                .map(|app| {
                    // Past the run's render budget nothing more is rendered;
                    // the whole revision is then reported as over the limit.
                    if input.cache.over_budget() {
                        return (app, Outcome::Rendered);
                    }
                    render_app(input, inv, oob, app)
                })
                .collect();
            if input.cache.over_budget() {
                return Err(render::over_budget_message());
            }
            pending = Vec::new();
            for (app, outcome) in rendered {
                match outcome {
                    Outcome::Reused => {
                        inv.reused.insert(app.key.clone());
                    }
                    Outcome::Rendered => {
                        inv.renders += 1;
                        inv.reused.remove(&app.key);
                    }
                    Outcome::Deferred => {
                        inv.reused.remove(&app.key);
                    }
                }
                done.insert(app.key.clone(), app);
            }
            // Children: Applications rendered by another app are managed by it,
            // and Argo CD applies the rendered form.
            let mut children: Vec<App> = Vec::new();
            let mut sets: Vec<AppSetEntry> = Vec::new();
            // This round's children by key, with the parent that rendered it.
            let mut child_parents: BTreeMap<String, (String, Arc<Value>)> = BTreeMap::new();
            // Parsing and comparing each rendered Application is most of this
            // loop on a large app-of-apps: done in parallel, in order.
            // One app-of-apps may render thousands: split by resource, not by parent.
            let rendered: Vec<(&App, &Manifest)> = done
                .values()
                .flat_map(|p| p.resources.iter().map(move |m| (p, m)))
                .collect();
            let parsed_children: Vec<Option<(String, AppSpec, bool)>> = rendered
                .par_iter()
                .map(|(_, m)| {
                    if !is_application(&m.value) || is_application_set(&m.value) {
                        return None;
                    }
                    let spec = AppSpec::parse(&m.value)?;
                    let key = app_key(&spec, instance);
                    let same = done.get(&key).is_some_and(|e| {
                        e.object.as_ref() == m.value.as_ref() && e.manager.is_some()
                    });
                    Some((key, spec, same))
                })
                .collect();
            for (&(parent, m), child) in rendered.iter().zip(parsed_children) {
                if is_application_set(&m.value) {
                    let key = set_key(&m.value, instance);
                    let fresh = inv
                        .appsets
                        .get(&key)
                        .is_none_or(|e| e.object != m.value || e.manager.is_none());
                    if fresh && !sets.iter().any(|s| s.key == key) {
                        sets.push(expand_set(
                            self.actx,
                            Arc::clone(&m.value),
                            m.origin.clone(),
                            Some(Manager::App(parent.key.clone())),
                            instance,
                        ));
                    }
                    continue;
                }
                let Some((key, spec, same)) = child else {
                    continue;
                };
                if key == parent.key || same {
                    continue; // an app that manages its own Application object
                }
                if let Some((first, object)) = child_parents.get(&key) {
                    if **object != *m.value && *first != parent.key {
                        clashes.extend(self.clash(&done, inv, &key, first, &parent.key));
                    }
                    continue;
                }
                child_parents.insert(key.clone(), (parent.key.clone(), Arc::clone(&m.value)));
                children.push(new_app(
                    key,
                    spec,
                    Arc::clone(&m.value),
                    m.origin.clone(),
                    Some(Manager::App(parent.key.clone())),
                    instance.map(str::to_string),
                ));
            }
            for child in children {
                let Some(Manager::App(parent)) = child.manager.clone() else {
                    continue;
                };
                let Some(e) = done.get(&child.key) else {
                    pending.push(child);
                    continue;
                };
                if e.object == child.object {
                    // Same object as declared: just record the manager.
                    if let Some(e) = done.get_mut(&child.key) {
                        e.manager = child.manager;
                    }
                    continue;
                }
                match &e.manager {
                    // Another parent renders it differently: the trees
                    // collide, and the first keeps it (re-rendering each in
                    // turn would never settle).
                    Some(Manager::App(first)) if *first != parent => {
                        clashes.extend(self.clash(&done, inv, &child.key, first, &parent));
                        continue;
                    }
                    // Declared in a root file that this parent does not
                    // read: a root of its own, colliding with the parent's
                    // tree, whose object is analysed meanwhile.
                    None => {
                        let read = |f: &str| {
                            done.get(&parent).is_none_or(|p| p.inputs.contains_key(f))
                                || done.values().any(|a| a.inputs.contains_key(f))
                        };
                        let unread = e.origin.file.as_deref().filter(|f| !read(f));
                        if let (Some(other), Some(kept)) =
                            (unread, instances::root_file(&done, &inv.appsets, &parent))
                        {
                            clashes.push(instances::Clash {
                                key: child.key.clone(),
                                kept,
                                other: other.to_string(),
                            });
                        }
                    }
                    Some(_) => {}
                }
                pending.push(child);
            }
            for entry in sets {
                // Apps generated by an earlier expansion of the same set are
                // replaced; one generated again identically (the usual case: a set
                // declared in a file and also rendered by an app-of-apps) keeps its
                // render instead of being rendered a second time.
                let owner = Some(Manager::AppSet(entry.key.clone()));
                let generated = generated_apps(&entry, input.reuse, instance);
                let mut kept: BTreeSet<String> = BTreeSet::new();
                for g in &generated {
                    if let Some(d) = done.get_mut(&g.key) {
                        if d.manager == owner && d.object == g.object {
                            d.origin = g.origin.clone();
                            kept.insert(g.key.clone());
                        }
                    }
                }
                done.retain(|k, a| a.manager != owner || kept.contains(k));
                pending.retain(|a| a.manager != owner);
                pending.extend(generated.into_iter().filter(|g| !kept.contains(&g.key)));
                inv.appsets.insert(entry.key.clone(), entry);
            }
        }
        // Apps still waiting after the last round were never rendered: say so
        // rather than leave them out, which would read as a deletion.
        for mut app in pending {
            app.status = AppStatus::Unrendered(RenderError::unsupported(format!(
                "app-of-apps did not settle after {rounds} rounds: `{}` is nested deeper than that, or two apps render it differently",
                app.spec.name
            )));
            done.insert(app.key.clone(), app);
        }
        Ok(done)
    }

    /// The clash of two parents rendering `key` differently, by their roots.
    fn clash(
        &self,
        done: &BTreeMap<String, App>,
        inv: &Inventory,
        key: &str,
        first: &str,
        second: &str,
    ) -> Option<instances::Clash> {
        Some(instances::Clash {
            key: key.to_string(),
            kept: instances::root_file(done, &inv.appsets, first)?,
            other: instances::root_file(done, &inv.appsets, second)?,
        })
    }
}

fn set_key(obj: &Value, instance: Option<&str>) -> String {
    let name = obj
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("");
    let ns = obj
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("argocd");
    instances::qualify(format!("{ns}/{name}"), instance)
}

/// Expands one ApplicationSet (its namespace defaults to `argocd`, where
/// generated Applications then live).
fn expand_set(
    cx: &appset::AppSetContext<'_>,
    object: Arc<Value>,
    origin: Origin,
    manager: Option<Manager>,
    instance: Option<&str>,
) -> AppSetEntry {
    let key = set_key(&object, instance);
    let mut obj = object.as_ref().clone();
    if obj.pointer("/metadata/namespace").is_none() {
        if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.insert("namespace".into(), Value::String("argocd".into()));
        }
    }
    let expansion = appset::expand(&obj, cx);
    AppSetEntry {
        key,
        object,
        origin,
        manager,
        expansion,
    }
}

/// The apps an ApplicationSet generates, managed by it. At head, `live` is
/// the base inventory: what the controller created there. Applications it
/// may not update (`create-only`, `create-delete`) keep their base objects,
/// and those it does not delete (its policy, or an expansion error that stops
/// the controller) stay with their base objects and keep syncing from this
/// revision, so their prunes are still computed.
fn generated_apps(
    entry: &AppSetEntry,
    live: Option<&Inventory>,
    instance: Option<&str>,
) -> Vec<App> {
    let base = live
        .and_then(|r| r.appsets.get(&entry.key))
        .and_then(|b| b.expansion.as_ref().ok());
    let objects: Vec<&Value> = match (&entry.expansion, base) {
        (Ok(exp), Some(bx)) => {
            let base_by_name: BTreeMap<&str, &Value> =
                bx.apps.iter().map(|a| (a.name(), &a.application)).collect();
            let mut objects: Vec<&Value> = exp
                .apps
                .iter()
                .map(|g| match base_by_name.get(g.name()) {
                    Some(b) if !exp.policy.allows_update => *b,
                    _ => &g.application,
                })
                .collect();
            // An unresolved generator makes a deletion unknown, not a keep: the
            // plan reports those.
            if !exp.policy.allows_delete {
                let names = exp.names();
                objects.extend(
                    bx.apps
                        .iter()
                        .filter(|a| !names.contains(a.name()))
                        .map(|a| &a.application),
                );
            }
            objects
        }
        (Ok(exp), None) => exp.apps.iter().map(|a| &a.application).collect(),
        // The controller stops on an error: what it created stays as it was.
        (Err(_), Some(bx)) => bx.apps.iter().map(|a| &a.application).collect(),
        (Err(_), None) => Vec::new(),
    };
    objects
        .into_iter()
        .filter_map(|o| {
            let spec = AppSpec::parse(o)?;
            let key = app_key(&spec, instance);
            Some(new_app(
                key,
                spec,
                Arc::new(o.clone()),
                entry.origin.clone(),
                Some(Manager::AppSet(entry.key.clone())),
                instance.map(str::to_string),
            ))
        })
        .collect()
}

/// An inventory that exceeded a limit: no apps, only the reason.
fn over_limit(mut inv: Inventory, why: String) -> Inventory {
    inv.apps.clear();
    inv.appsets.clear();
    inv.over_limit = Some(why);
    inv
}

trait IfEmpty {
    fn if_empty(self, other: &str) -> String;
}

impl IfEmpty for String {
    fn if_empty(self, other: &str) -> String {
        if self.is_empty() {
            other.to_string()
        } else {
            self
        }
    }
}

fn new_app(
    key: String,
    spec: AppSpec,
    object: Arc<Value>,
    origin: Origin,
    manager: Option<Manager>,
    instance: Option<String>,
) -> App {
    App {
        key,
        instance,
        spec,
        object,
        origin,
        manager,
        status: AppStatus::External(String::new()),
        resources: Vec::new(),
        inputs: BTreeMap::new(),
        source_types: Vec::new(),
        implicit: false,
    }
}

/// The implicit app of `dir`, a root of its own: in the instance that
/// `instances:` or a collision gives the directory.
fn implicit_root(input: &InventoryInput<'_>, dir: &str) -> App {
    let mut app = implicit_app(dir, input.tree.as_ref());
    let instance = instances::instance_of(input.config, input.split, Some(dir));
    app.key = instances::qualify(app.key, instance.as_deref());
    app.instance = instance;
    app
}

fn implicit_app(dir: &str, tree: &dyn Tree) -> App {
    let name = if dir.is_empty() {
        "repository".to_string()
    } else {
        dir.replace('/', "-")
    };
    let object = serde_json::json!({
        "apiVersion": "argoproj.io/v1alpha1",
        "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"},
        // Hidden files and directories (`.github/`, `.gitops-lint.yaml`) are
        // tooling, not manifests.
        "spec": {"source": {"repoURL": "", "path": dir, "directory": {"recurse": true, "exclude": "{.*,*/.*}"}}, "destination": {"namespace": ""}}
    });
    // A Kustomize or Helm directory is rendered as such, as Argo CD's source
    // type detection would (render `detect`): the recursive directory read
    // is for plain manifests only.
    let mut object = object;
    let typed = tree.list_raw(dir).is_ok_and(|entries| {
        entries.iter().any(|e| {
            e.kind == EntryKind::File
                && (crate::render::KUSTOMIZATION_NAMES.contains(&e.name.as_str())
                    || e.name == "Chart.yaml")
        })
    });
    if typed {
        if let Some(src) = object
            .pointer_mut("/spec/source")
            .and_then(Value::as_object_mut)
        {
            src.remove("directory");
        }
    }
    let spec = AppSpec::parse(&object).unwrap_or_else(|| unreachable_spec(&name));
    let mut app = new_app(
        format!("argocd/{name}"),
        spec,
        Arc::new(object),
        Origin::default(),
        None,
        None,
    );
    app.implicit = true;
    app
}

fn unreachable_spec(name: &str) -> AppSpec {
    AppSpec {
        name: name.to_string(),
        namespace: "argocd".into(),
        dest_namespace: String::new(),
        dest_cluster: String::new(),
        sources: Vec::new(),
        prune_mode: PruneMode::Manual,
        sync_options: crate::manifest::SyncOptions::default(),
        cascade_finalizer: None,
        project: String::new(),
    }
}

/// Which tree a source renders from, or why it is external.
fn source_tree(
    input: &InventoryInput<'_>,
    src: &AppSource,
    implicit: bool,
) -> Result<Arc<dyn Tree>, String> {
    if implicit {
        return Ok(Arc::clone(&input.tree));
    }
    if let Some(chart) = &src.chart {
        return Err(format!("Helm chart `{chart}` from `{}`", src.repo_url));
    }
    if src.repo_url.is_empty() {
        return Err("a source with no repoURL".to_string());
    }
    if !input.repo.is_this_repo(&src.repo_url) {
        return Err(format!("repository `{}`", src.repo_url));
    }
    if input.repo.branches.contains(&src.target_revision) {
        return Ok(Arc::clone(&input.tree));
    }
    (input.tree_at)(&src.target_revision).ok_or_else(|| {
        format!(
            "revision `{}`, which is not in this repository",
            src.target_revision
        )
    })
}

/// A symlink anywhere in `tree` that leads outside the repository. Argo CD
/// checks the whole checkout before rendering any source of it (AC
/// `CheckOutOfBoundsSymlinks`, absolute targets included), so one such link
/// fails every app of the repository, not only the app whose directory
/// holds it. A loop is not out of bounds: it fails only an app that reads it.
fn out_of_bounds_symlink(tree: &dyn Tree) -> Option<RenderError> {
    if !tree.may_have_symlinks() {
        return None;
    }
    let mut stack = vec![String::new()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = tree.list_raw(&dir) else {
            continue;
        };
        for e in entries {
            let full = if dir.is_empty() {
                e.name.clone()
            } else {
                format!("{dir}/{}", e.name)
            };
            match e.kind {
                EntryKind::Dir => stack.push(full),
                EntryKind::Symlink => {
                    if let Err(err @ source::SourceError::OutsideRepo(_)) =
                        source::resolve(tree, &full)
                    {
                        let mut e = RenderError::from_source(&err).at(full.clone(), None);
                        e.message = format!(
                            "the repository contains a symlink that leads outside it, `{full}`, and Argo CD refuses to render any app from such a repository"
                        );
                        return Some(e);
                    }
                }
                _ => {}
            }
        }
    }
    None
}

fn render_app(
    input: &InventoryInput<'_>,
    inv: &Inventory,
    oob: Option<&RenderError>,
    mut app: App,
) -> (App, Outcome) {
    let scopes = &inv.scopes;
    // A render that depends on every symlink of the tree is never reused,
    // nor one made under other CRD scopes (they decide resource identity)
    // or other Kustomize build options.
    let reuse = input.reuse.filter(|r| {
        oob.is_none()
            && r.scopes.crds == scopes.crds
            && r.kustomize_build_options == inv.kustomize_build_options
    });
    if let Some(prev) = reuse.and_then(|r| r.apps.get(&app.key)) {
        if reusable(input.tree.as_ref(), &app, prev) {
            app.status = prev.status.clone();
            app.resources = prev.resources.clone();
            app.inputs = prev.inputs.clone();
            app.source_types = prev.source_types.clone();
            return (app, Outcome::Reused);
        }
    }
    if oob.is_none() && unchanged::defers(input, &app) {
        app.status = AppStatus::Unchanged;
        return (app, Outcome::Deferred);
    }
    (
        render_fresh(input, scopes, &inv.kustomize_build_options, oob, app),
        Outcome::Rendered,
    )
}

/// What the renderer needs of one source of `app` (the source's `path`).
#[must_use]
pub fn source_spec(app: &App, src: &AppSource, path: &str) -> SourceSpec {
    SourceSpec {
        path: path.to_string(),
        directory: src.raw.get("directory").cloned(),
        kustomize: src.raw.get("kustomize").cloned(),
        helm: src.raw.get("helm").cloned(),
        plugin: src.raw.get("plugin").cloned(),
        app_name: app.spec.name.clone(),
        namespace: app.spec.dest_namespace.clone(),
        refs: Vec::new(),
        env: build_env(app, src),
        kustomize_build_options: String::new(),
    }
}

/// [`source_spec`] with the Application's `ref:` sources, resolved in this
/// repository like any other source (another repository stays external).
#[must_use]
pub fn source_spec_in(
    input: &InventoryInput<'_>,
    app: &App,
    src: &AppSource,
    path: &str,
) -> SourceSpec {
    let mut spec = source_spec(app, src, path);
    spec.refs = app
        .spec
        .sources
        .iter()
        .filter_map(|r| {
            let name = r.ref_name.clone()?;
            let target = match source_tree(input, r, false) {
                Ok(t) if Arc::ptr_eq(&t, &input.tree) => RefTarget::Same,
                Ok(t) => RefTarget::Tree(t),
                Err(why) => RefTarget::External(why),
            };
            Some(RefSource { name, target })
        })
        .collect();
    spec
}

/// Argo CD's build environment of a source (AC
/// `reposerver/repository/repository.go` `newEnv`). The revision
/// variables are left out: they name a commit, which differs at every
/// revision of a diff.
fn build_env(app: &App, src: &AppSource) -> Vec<(String, String)> {
    [
        ("ARGOCD_APP_NAME", app.spec.name.as_str()),
        ("ARGOCD_APP_NAMESPACE", app.spec.dest_namespace.as_str()),
        ("ARGOCD_APP_PROJECT_NAME", app.spec.project.as_str()),
        ("ARGOCD_APP_SOURCE_REPO_URL", src.repo_url.as_str()),
        ("ARGOCD_APP_SOURCE_PATH", src.path.as_deref().unwrap_or("")),
        (
            "ARGOCD_APP_SOURCE_TARGET_REVISION",
            src.target_revision.as_str(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Renders every source of `app` from the tree.
fn render_fresh(
    input: &InventoryInput<'_>,
    scopes: &Scopes,
    kustomize_build_options: &str,
    oob: Option<&RenderError>,
    mut app: App,
) -> App {
    let mut resources: Vec<Manifest> = Vec::new();
    let mut externals = Vec::new();
    let mut local = 0;
    for src in &app.spec.sources {
        if let (Some(chart), Some(charts)) = (&src.chart, &input.render_options.chart_cache) {
            local += 1;
            let result = render_cached_chart(
                input,
                scopes,
                kustomize_build_options,
                &app,
                src,
                chart,
                charts,
            );
            match result {
                Ok((r, inputs)) => {
                    app.inputs.extend(inputs);
                    app.source_types.push(r.source_type);
                    resources.extend(r.manifests);
                }
                Err(e) => {
                    let src = src.clone();
                    record_ref_files(&mut app, input, &src);
                    app.status = AppStatus::Unrendered(e);
                    return app;
                }
            }
            continue;
        }
        let Some(path) = src.path.clone() else {
            if src.ref_name.is_none() || src.chart.is_some() {
                externals.push(
                    source_tree(input, src, app.implicit)
                        .err()
                        .unwrap_or_else(|| "a source with no path".into()),
                );
            }
            continue;
        };
        let tree = match source_tree(input, src, app.implicit) {
            Ok(t) => t,
            Err(why) => {
                externals.push(why);
                continue;
            }
        };
        local += 1;
        let oob_here = if Arc::ptr_eq(&tree, &input.tree) {
            oob.cloned()
        } else {
            out_of_bounds_symlink(tree.as_ref())
        };
        if let Some(e) = oob_here {
            record_source_dirs(&mut app, tree.as_ref());
            app.status = AppStatus::Unrendered(e);
            return app;
        }
        let cx = RenderContext::new(tree.as_ref(), input.cache, input.render_options);
        let mut spec = source_spec_in(input, &app, src, &path);
        spec.kustomize_build_options = kustomize_build_options.to_string();
        let result = render::render(&cx, &spec, scopes);
        app.inputs.extend(cx.inputs());
        match result {
            Ok(r) => {
                app.source_types.push(r.source_type);
                resources.extend(r.manifests);
            }
            Err(e) => {
                record_source_dirs(&mut app, tree.as_ref());
                app.status = AppStatus::Unrendered(e);
                return app;
            }
        }
    }
    if local == 0 {
        app.status = AppStatus::External(externals.join(", "));
        return app;
    }
    // The last occurrence of a key wins (Argo CD's RepeatedResourceWarning).
    let mut index: BTreeMap<crate::manifest::ResourceId, usize> = BTreeMap::new();
    let mut out: Vec<Manifest> = Vec::with_capacity(resources.len());
    for m in resources {
        if let Some(&i) = index.get(&m.id) {
            out[i] = m;
        } else {
            index.insert(m.id.clone(), out.len());
            out.push(m);
        }
    }
    app.resources = out;
    app.status = AppStatus::Rendered;
    app
}

/// The key under which an app records the chart archive it rendered, by
/// content: no path of a repository starts with a NUL byte.
const CHART_CACHE_INPUT: &str = "\0chart-cache/";

/// Renders a source installing `chart` from a Helm repository from the
/// chart cache (see [`crate::render::chart_cache`]). Returns the render and
/// its inputs: the archive under [`CHART_CACHE_INPUT`], keyed by content,
/// and the `$ref` files read from the repository.
fn render_cached_chart(
    input: &InventoryInput<'_>,
    scopes: &Scopes,
    kustomize_build_options: &str,
    app: &App,
    src: &AppSource,
    chart: &str,
    charts: &render::chart_cache::ChartCache,
) -> Result<(render::Rendered, BTreeMap<String, ObjectId>), RenderError> {
    let cached = charts.chart(chart, &src.repo_url, &src.target_revision)?;
    let cx = RenderContext::new(cached.tree.as_ref(), input.cache, input.render_options);
    let mut spec = source_spec_in(input, app, src, &cached.path);
    spec.kustomize_build_options = kustomize_build_options.to_string();
    // `$ref` files of this revision are the repository's, not the archive's.
    for r in &mut spec.refs {
        if r.target == RefTarget::Same {
            r.target = RefTarget::Tree(Arc::clone(&input.tree));
        }
    }
    let mut rendered = render::render(&cx, &spec, scopes)?;
    // The objects come from the archive, not from a file of the repository:
    // findings about them point at the Application.
    for m in &mut rendered.manifests {
        m.origin = app.origin.clone();
    }
    let archive = cached.tree.as_ref();
    let mut inputs = cx.inputs();
    inputs.retain(|key, id| {
        let p = key.strip_suffix('/').unwrap_or(key);
        archive.entry(p).ok().flatten().map(|e| e.id) != Some(*id)
    });
    inputs.insert(format!("{CHART_CACHE_INPUT}{}", cached.file), cached.id);
    Ok((rendered, inputs))
}

/// Records, for a chart-cache source that failed (its archive not cached,
/// a template error), the `$ref` files of this revision it names: a change
/// to them must count as a change to the app's inputs, as for a chart in
/// the repository (GL000 tells a failure the change touches by these).
fn record_ref_files(app: &mut App, input: &InventoryInput<'_>, src: &AppSource) {
    let spec = source_spec_in(input, app, src, "");
    let Ok(fp) = render::helm::ref_footprint(&spec) else {
        return;
    };
    let tree = input.tree.as_ref();
    for p in fp.entries {
        if let Ok(Some(e)) = tree.entry(&p) {
            app.inputs.insert(p, e.id);
        }
    }
    for d in fp.subtrees {
        if let Ok(Some(e)) = tree.entry(&d) {
            app.inputs.insert(format!("{d}/"), e.id);
        }
    }
}

/// Records, for an app whose render failed, the id of every local source
/// directory besides what the render read before failing: a failure stops
/// reading early, and a change below the app's own directory must count as
/// a change to its inputs (GL000 tells a failure the change touches from one
/// it does not by these inputs). The repository root is left out: every
/// change is below it.
fn record_source_dirs(app: &mut App, tree: &dyn Tree) {
    for src in &app.spec.sources {
        let Some(path) = src.path.as_deref().and_then(source::path::normalize) else {
            continue;
        };
        if path.is_empty() {
            continue;
        }
        if let Ok(Some(e)) = tree.entry(&path) {
            app.inputs.insert(format!("{path}/"), e.id);
        }
    }
}

/// An app renders identically when its Application object is the same and
/// every input it read has the same id in this tree. Inputs are recorded
/// with the id of what a symlink leads to, so a path whose own entry
/// (or a parent) differs is compared again after resolving it.
fn reusable(tree: &dyn Tree, app: &App, prev: &App) -> bool {
    if app.object != prev.object
        || prev.inputs.is_empty()
        || !matches!(prev.status, AppStatus::Rendered)
    {
        return false;
    }
    prev.inputs.iter().all(|(path, id)| {
        let p = path.strip_suffix('/').unwrap_or(path);
        let same = |e: Option<source::Entry>| e.is_some_and(|e| e.id == *id);
        same(tree.entry(p).ok().flatten())
            || source::resolve(tree, p)
                .ok()
                .is_some_and(|real| real != p && same(tree.entry(&real).ok().flatten()))
    })
}
