//! Building the inventory at one revision: find `Application`s, follow
//! app-of-apps, expand `ApplicationSet` generators, decide which apps render
//! from this repository, and render them.
//!
//! Knows nothing of diffing two revisions. The phases: `scan` finds what
//! the files declare, [`build`] groups the roots by Argo CD instance
//! ([`instances`]), `rounds` follows app-of-apps and ApplicationSets in
//! each, and `rendering` renders one app (or reuses or defers its render,
//! [`unchanged`]).

pub(crate) mod application;
pub mod appset;
mod guidance;
pub(crate) mod instances;
mod rendering;
pub(crate) mod resource_filter;
mod rounds;
mod scan;
pub(crate) mod tracking;
pub(crate) mod unchanged;

use goyaml::json::{LazyValue, View};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use rayon::prelude::*;
use serde_json::Value;

pub(crate) use application::{
    is_application, is_application_set, is_argo_kind, normalize_repo_url, AppSource, AppSpec,
    PruneMode,
};

use crate::config::Config;
use crate::manifest::{Manifest, Origin, Scopes};
use crate::render::{
    self, directory::is_manifest_file, ParseCache, RefSource, RefTarget, RenderContext,
    RenderError, RenderOptions, SourceSpec, SourceType,
};
use crate::source::{self, EntryKind, FastMap, FastSet, ObjectId, Tree};
use goyaml::Dialect;

use rendering::*;
pub use rendering::{source_spec, source_spec_in};
use rounds::*;
use scan::*;

/// Whether and how an app was rendered at this revision.
#[derive(Debug, Clone)]
pub(crate) enum AppStatus {
    /// Rendered from this repository.
    Rendered,
    /// Could not be rendered: its resources are unknown.
    Unrendered(RenderError),
    /// Its sources are elsewhere (another repository, a Helm repository, a
    /// revision not in this repository): not rendered, not guessed.
    External(String),
    /// Rendered from this repository except for the sources listed, which
    /// this run cannot read (another repository, a Helm repository chart
    /// not in the chart cache, a revision the clone lacks): the resources
    /// are what the other sources render, a part of the app's. Argo CD
    /// reads every source, so their prunes are real; what the sources left
    /// out render is unknown.
    Partial(Vec<LeftOut>),
    /// Not rendered at either revision of a diff: everything its render
    /// reads is identical at both (see [`unchanged`]), so it prunes,
    /// creates and changes nothing.
    Unchanged,
}

impl AppStatus {
    /// `rendered`, `partial`, `unrendered`, `external` or `unchanged`.
    #[must_use]
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            AppStatus::Rendered => "rendered",
            AppStatus::Partial(_) => "partial",
            AppStatus::Unrendered(_) => "unrendered",
            AppStatus::External(_) => "external",
            AppStatus::Unchanged => "unchanged",
        }
    }

    /// Whether the resources hold what at least one source renders, all of
    /// them ([`AppStatus::Rendered`]) or a part ([`AppStatus::Partial`]):
    /// what they lose from one revision to the other is pruned.
    #[must_use]
    pub(crate) fn renders_here(&self) -> bool {
        matches!(self, AppStatus::Rendered | AppStatus::Partial(_))
    }

    /// The sources a partial render left out (empty unless partial).
    #[must_use]
    pub(crate) fn left_out(&self) -> &[LeftOut] {
        match self {
            AppStatus::Partial(why) => why,
            _ => &[],
        }
    }
}

/// A source of an app that this run cannot read ([`AppStatus::Partial`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LeftOut {
    /// The source, as messages name it (``Helm chart `db` from `https://…` ``).
    pub(crate) source: String,
    /// Why it was not read, when more than where it is says so (a chart
    /// missing from the chart cache names the `helm pull` that adds it).
    pub(crate) why: Option<String>,
}

impl LeftOut {
    /// Whether `status` left out this very source (a chart of another
    /// version is the same source).
    #[must_use]
    pub(crate) fn left_out_in(&self, status: &AppStatus) -> bool {
        status.left_out().iter().any(|o| o.source == self.source)
    }

    /// The sources, joined for a message: ``Helm chart `db` from `u` and …``.
    #[must_use]
    pub(crate) fn join(left_out: &[LeftOut]) -> String {
        left_out
            .iter()
            .map(|l| l.source.as_str())
            .collect::<Vec<_>>()
            .join(" and ")
    }
}

/// What manages an Application object (and so can delete it).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Manager {
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
    pub(crate) instance: Option<String>,
    /// The parsed spec, shared with the other revision's app of the same
    /// object ([`known_spec`]).
    pub spec: Arc<AppSpec>,
    /// The Application object (implicit apps have a synthesised one).
    pub(crate) object: Arc<LazyValue>,
    /// Where the Application is declared (file of the raw manifest, if any).
    pub(crate) origin: Origin,
    /// Who manages the Application object.
    pub(crate) manager: Option<Manager>,
    /// Render status.
    pub(crate) status: AppStatus,
    /// The rendered resources (empty unless `Rendered`), duplicates removed
    /// (last wins). Shared with the other revision's app when its render
    /// is reused there: an app-of-apps renders thousands.
    pub(crate) resources: Arc<[Manifest]>,
    /// Every input the render read: path → object id (`dir/` for listings).
    /// Shared like `resources`.
    pub(crate) inputs: Arc<BTreeMap<String, ObjectId>>,
    /// How each source was rendered.
    pub(crate) source_types: Vec<SourceType>,
    /// The config-management plugin of each source a plugin renders, as
    /// the report names it ([`crate::render::plugin::ChosenPlugin::describe`]).
    pub(crate) plugins: Vec<String>,
    /// Not a real Application: a directory linted because the repository has none.
    pub(crate) implicit: bool,
}

impl App {
    /// The name shown to users: `name`, or `namespace/name` outside `argocd`.
    #[must_use]
    pub(crate) fn display_name(&self) -> String {
        let name = if self.spec.namespace == "argocd" {
            self.spec.name.clone()
        } else {
            format!("{}/{}", self.spec.namespace, self.spec.name)
        };
        instances::qualify(name, self.instance.as_deref())
    }

    /// The first local source path, for display.
    #[must_use]
    pub(crate) fn source_path(&self) -> String {
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
pub(crate) struct AppSetEntry {
    /// `namespace/name`.
    pub(crate) key: String,
    /// The object.
    pub(crate) object: Arc<LazyValue>,
    /// Where it is declared.
    pub(crate) origin: Origin,
    /// Who manages it.
    pub(crate) manager: Option<Manager>,
    /// What it generates at this revision (an error stops the controller:
    /// nothing is created or deleted).
    pub(crate) expansion: Result<appset::Expansion, appset::AppSetError>,
}

/// An `AppProject` found by the file scan.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct DeclaredProject {
    /// The object.
    pub(crate) object: Arc<LazyValue>,
    /// Where it is declared.
    pub(crate) origin: Origin,
}

/// Whether an object is an Argo CD `AppProject`.
#[must_use]
pub(crate) fn is_app_project<'a>(obj: impl Into<View<'a>>) -> bool {
    is_argo_kind(obj.into(), "AppProject")
}

/// Everything gitops-lint knows about one revision.
#[derive(Debug, Clone, Default)]
pub struct Inventory {
    /// Short description of the revision.
    pub(crate) revision: String,
    /// Apps by key.
    pub apps: BTreeMap<String, App>,
    /// ApplicationSets by key.
    pub(crate) appsets: BTreeMap<String, AppSetEntry>,
    /// Cluster scope knowledge (built-in table plus CRDs in the repository).
    pub scopes: Scopes,
    /// Tracking settings of an `argocd-cm` ConfigMap in the repository.
    pub(crate) tracking: Option<tracking::LearnedTracking>,
    /// AppProjects declared in any file of the revision, by name, in walk
    /// order; rendered ones are in their apps' resources.
    pub(crate) projects: BTreeMap<String, Vec<DeclaredProject>>,
    /// Argo CD's `kustomize.buildOptions` in effect at this revision
    /// (`kustomizeBuildOptions` in the configuration, else `argocd-cm` in
    /// the repository): renders depend on it, so a render is reused or
    /// left unrendered only when both revisions have the same.
    pub kustomize_build_options: String,
    /// The config-management plugins in effect at this revision: the
    /// configuration's `plugins:` with the `ConfigManagementPlugin`
    /// definitions found in the revision.
    pub(crate) plugins: Arc<crate::render::plugin::Plugins>,
    /// Files that mention Argo CD but could not be parsed: the apps they
    /// declare are unknown at this revision.
    pub(crate) broken_files: BTreeMap<String, RenderError>,
    /// The blob id of each of `broken_files`: a file broken at both
    /// revisions of a diff is the change's concern only if its content differs.
    pub(crate) broken_file_ids: BTreeMap<String, ObjectId>,
    /// The Argo CD clusters known at this revision: cluster Secrets in the
    /// repository, then `clusters:` of the configuration.
    pub(crate) clusters: Vec<appset::Cluster>,
    /// Notes for the user about assumptions made.
    pub(crate) notes: Vec<String>,
    /// Applications (`namespace/name`) declared in more than one root file:
    /// the first declaration is used. Reported as one note, listed in full on
    /// request (a repository can hold thousands).
    pub(crate) declared_twice: Vec<String>,
    /// Root files (Applications and ApplicationSets no app renders) and the
    /// directories of implicit apps, in walk order: what something outside
    /// Argo CD applies.
    pub(crate) roots: Vec<String>,
    /// Files of this revision (the head of a diff) that declare Applications
    /// or ApplicationSets an app rendered at base and none renders here
    /// ([`BaseRendered`]): not roots, not analysed as apps. Their apps at
    /// base are deleted by whatever rendered them.
    pub(crate) unapplied: BTreeSet<String>,
    /// Root files of the default instance whose trees render an Application
    /// or ApplicationSet name differently from another root's: built again
    /// as instances of their own ([`instances`]).
    pub(crate) colliding_roots: BTreeSet<String>,
    /// No Application was found, so the repository (or each `apps:`
    /// directory) is linted as an implicit app.
    pub(crate) implicit_fallback: bool,
    /// Apps rendered at this revision (each source rendered from the tree).
    pub(crate) renders: usize,
    /// Apps whose render was taken from the other revision's inventory
    /// because the Application and every input it read are unchanged: their
    /// resources are identical there, so a plan need not compare them.
    pub(crate) reused: BTreeSet<String>,
    /// What the scan found, for the other revision's scan to reuse: all of
    /// it when no file it parsed changed, else the files it parsed.
    pub(crate) scanned: Arc<Scanned>,
    /// What the ApplicationSet git generators learnt of the tree's paths,
    /// for the other revision's when both trees have the same shape.
    pub(crate) tree_paths: Arc<appset::TreeIndexCache>,
    /// The Applications ApplicationSets templated, for the other revision's
    /// expansions ([`appset::Templated`]).
    pub(crate) templated: Arc<appset::Templated>,
    /// Set when the revision exceeds a limit ([`MAX_DECLARED`],
    /// [`render::MAX_RENDERED_OBJECTS`]): the inventory is then empty and must not be
    /// compared, since every app in it is unknown.
    pub(crate) over_limit: Option<String>,
}

/// Each app of `apps` (key, app) with the app of the same key in `other`.
/// Both maps are walked once in key order, side by side: each of a fleet's
/// thousands of apps is matched without a search.
pub(crate) fn apps_beside<'a>(
    apps: &'a BTreeMap<String, App>,
    other: &'a BTreeMap<String, App>,
) -> impl Iterator<Item = (&'a String, &'a App, Option<&'a App>)> {
    let mut others = other.iter().peekable();
    apps.iter().map(move |(key, app)| {
        while others.next_if(|(k, _)| *k < key).is_some() {}
        let same_key = others.peek().filter(|(k, _)| *k == key).map(|(_, o)| *o);
        (key, app, same_key)
    })
}

/// Most Applications, ApplicationSets and CRDs one revision may declare or
/// generate (app-of-apps children included).
pub(crate) const MAX_DECLARED: usize = 100_000;

/// How to recognise this repository and its revisions.
pub struct RepoIdentity {
    /// Normalised URLs naming this repository (remotes plus configured aliases).
    pub(crate) urls: BTreeSet<String>,
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
pub(crate) fn only_foreign_repos(inv: &Inventory, identity: &RepoIdentity) -> Option<Vec<String>> {
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

/// The key of the Application whose [`AppSpec::identity`] is `(name,
/// namespace)`.
fn identity_key((name, namespace): (&str, &str), instance: Option<&str>) -> String {
    instances::qualify(format!("{namespace}/{name}"), instance)
}

/// A root file's Application: its spec, key and instance.
type RootDeclaration = (Arc<AppSpec>, String, Option<String>);

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
        .filter_map(|v| appset::clusters_from_secret(v))
        .chain(input.config.clusters.iter().map(|c| appset::Cluster {
            name: c.name.clone(),
            server: c.server.clone(),
            labels: c.labels.clone(),
            annotations: c.annotations.clone(),
            project: c.project.clone(),
        }))
        .collect();
    inv.clusters.clone_from(&clusters);
    let settings = appset::AppSetSettings {
        new_git_file_globbing: input.config.applicationset.new_git_file_globbing,
        controller_policy: input.config.applicationset.policy.clone(),
        policy_override: input.config.applicationset.policy_override,
    };
    // Git generators of every ApplicationSet share one walk of the tree.
    // Both revisions list the same paths when only contents changed (the
    // usual pull request): the other revision's walk serves this one.
    let same_shape = input
        .defer
        .as_ref()
        .and_then(|d| d.changes.as_deref())
        .is_some_and(source::changes::Changes::same_shape);
    let index_cache = match input.reuse {
        Some(r) if same_shape => Arc::clone(&r.tree_paths),
        _ => Arc::new(appset::TreeIndexCache::kept_in(
            input.defer.as_ref().and_then(|d| d.subtrees.shared_facts()),
        )),
    };
    // Both revisions of a diff template into one memo.
    let templated = input
        .reuse
        .map_or_else(Arc::default, |r| Arc::clone(&r.templated));
    let is_this_repo = |u: &str| input.repo.is_this_repo(u);
    let is_this_revision = |r: &str| input.repo.branches.contains(r);
    let actx = appset::AppSetContext {
        tree: input.tree.as_ref(),
        is_this_repo: &is_this_repo,
        is_this_revision: Some(&is_this_revision),
        clusters: &clusters,
        settings: &settings,
        index_cache: Some(&index_cache),
        templated: Some(&templated),
    };

    // Round 0: every Application and ApplicationSet declared in a root
    // file, grouped by the Argo CD instance that applies it.
    let mut groups: BTreeMap<Option<String>, Vec<App>> = BTreeMap::new();
    let mut duplicates: Vec<(String, Option<String>, Arc<LazyValue>)> = Vec::new();
    let split = input.split;
    let other_by_object = input.reuse.map(|r| apps_by_object(&r.apps));
    let declared: Vec<(Declared, Option<RootDeclaration>)> = declared
        .into_par_iter()
        .map(|d| {
            let file = d.origin.file.as_deref();
            if !instances::may_be_root(input.config, file) {
                return (d, None);
            }
            let instance = instances::instance_of(input.config, split, file);
            // The other revision's app of this very value, in this instance,
            // has this one's key and spec (an unchanged file at head).
            let same = other_by_object
                .as_ref()
                .and_then(|o| o.get(&object_address(&d.value)).copied().flatten())
                .filter(|o| o.instance == instance);
            if let Some(o) = same {
                let known = (Arc::clone(&o.spec), o.key.clone(), instance);
                return (d, Some(known));
            }
            let spec = AppSpec::identity(&d.value).and_then(|identity| {
                let key = identity_key(identity, instance.as_deref());
                let spec = spec_of(input.reuse, &key, &d.value)?;
                Some((spec, key, instance))
            });
            (d, spec)
        })
        .collect();
    let declared_count = declared.len();
    let base_rendered = BaseRendered::of(input);
    // Looked up once per declaration (a fleet declares thousands): hashed,
    // not ordered, as nothing reads them in order.
    let mut seen: FastSet<String> = source::fast_set(declared_count);
    for (d, spec) in declared {
        let Some((spec, key, instance)) = spec else {
            continue;
        };
        if let Some(file) = base_rendered.unapplied(d.origin.file.as_deref(), Some(&key)) {
            inv.unapplied.insert(file.to_string());
            continue;
        }
        if !seen.insert(key.clone()) {
            duplicates.push((key, d.origin.file, d.value));
            continue;
        }
        let app = new_app(key, spec, d.value, d.origin, None, instance.clone());
        // Room for every declared app in the group's first push: a group
        // grown one push at a time copies thousands of apps again and again.
        groups
            .entry(instance)
            .or_insert_with(|| Vec::with_capacity(declared_count))
            .push(app);
    }
    for d in declared_sets {
        let file = d.origin.file.as_deref();
        if !instances::may_be_root(input.config, file) {
            continue;
        }
        if let Some(file) = base_rendered.unapplied(file, None) {
            inv.unapplied.insert(file.to_string());
            continue;
        }
        let instance = instances::instance_of(input.config, split, file);
        let entry = expand_set(&actx, d.value, d.origin, None, instance.as_deref());
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
        if input.config.apps.is_empty() {
            let note = guidance::rendered_applications(input, &inv);
            inv.notes.extend(note);
        }
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
            // Merged in one pass (sorted maps), not key by key.
            Ok(mut tree) => done.append(&mut tree),
            Err(why) => return over_limit(inv, why),
        }
    }
    // A raw declaration read as an input of another app's render is a part of
    // that app (e.g. a base patched by an overlay), not an app of its own,
    // unless that other app renders it under the same key (handled above).
    // Only an app that rendered says so: one that failed part-way has read
    // files it may well have rendered as Applications.
    // Paths borrowed from the apps (an app-of-apps reads thousands): every
    // answer wanted of them is taken before an app is dropped.
    let mut inputs_of_others: FastMap<&str, &str> = FastMap::default();
    for a in done.values().filter(|a| a.status.renders_here()) {
        for p in a.inputs.keys() {
            // The last app (in key order) that read a path owns it.
            inputs_of_others.insert(p, &a.key);
        }
    }
    // A file an app renders here is that app's child, not unapplied.
    inv.unapplied
        .retain(|f| !inputs_of_others.contains_key(f.as_str()));
    unapplied_note(&mut inv);
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
    let drop_sets: Vec<String> = inv
        .appsets
        .values()
        .filter(|s| s.manager.is_none())
        .filter(|s| {
            s.origin
                .file
                .as_deref()
                .is_some_and(|f| inputs_of_others.contains_key(f))
        })
        .map(|s| s.key.clone())
        .collect();
    // A second declaration read by another app's render is a part of it:
    // the others are roots of their own.
    let roots_twice: Vec<(String, String, Arc<LazyValue>)> = duplicates
        .into_iter()
        .filter_map(|(key, file, object)| {
            file.filter(|f| !inputs_of_others.contains_key(f.as_str()))
                .map(|f| (key, f, object))
        })
        .collect();
    for k in drop {
        done.remove(&k);
    }
    for k in drop_sets {
        inv.appsets.remove(&k);
        done.retain(|_, a| a.manager != Some(Manager::AppSet(k.clone())));
    }
    claim_generated_names(&mut inv.appsets);
    // A second declaration of one name in a root file is a root of its own:
    // when its object differs from the tree that holds the name, the two
    // trees collide.
    for (key, file, object) in roots_twice {
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
    inv.roots.sort_by(|a, b| source::path::walk_order(a, b));
    inv.apps = done;
    unevaluated_jq_note(&mut inv);
    inv.tree_paths = index_cache;
    inv.templated = templated;
    inv
}

/// What the base revision of a diff rendered, for the head's roots: roots
/// come from the base revision and the configuration, never from the
/// change. A file whose Applications or ApplicationSets an app rendered at
/// base is not a root at head when nothing renders it there (a child dropped
/// from its parent's kustomization `resources`, a file moved out of a
/// recursive directory): Argo CD's parent prunes the child it no longer
/// renders (AC `controller/sync.go` prunes every managed object missing
/// from the targets, an Application like any other), so that deletion is
/// analysed instead of a new root nothing applies. An Application whose key
/// an app rendered at base is the same child wherever its file went.
/// With `roots:` configured, the configuration decides alone.
struct BaseRendered<'a> {
    /// The base inventory, when this builds the head of a diff.
    base: Option<&'a Inventory>,
    /// Files declaring what an app rendered at base, that were not roots there.
    files: FastSet<&'a str>,
    /// The base's root files.
    roots: FastSet<&'a str>,
}

impl<'a> BaseRendered<'a> {
    fn of(input: &InventoryInput<'a>) -> BaseRendered<'a> {
        // Only the head of a diff is built with its base as `reuse` and a
        // deferral or split set; a base is built without `reuse` except when
        // it has no Application at all, where no file is skipped either.
        let base = input
            .reuse
            .filter(|_| input.config.roots.patterns().is_empty());
        let mut files: FastSet<&'a str> = FastSet::default();
        let mut roots: FastSet<&'a str> = FastSet::default();
        if let Some(b) = base {
            roots.extend(b.roots.iter().map(String::as_str));
            let managed = b
                .apps
                .values()
                .filter(|a| rooted_child(b, a.manager.as_ref()))
                .filter_map(|a| a.origin.file.as_deref())
                .chain(
                    b.appsets
                        .values()
                        .filter(|s| rooted_child(b, s.manager.as_ref()))
                        .filter_map(|s| s.origin.file.as_deref()),
                );
            files.extend(managed.filter(|f| !roots.contains(f)));
        }
        BaseRendered { base, files, roots }
    }

    /// `file` when its declaration (of the Application `key`) must not be a
    /// root here: an app rendered it at base.
    fn unapplied<'f>(&self, file: Option<&'f str>, key: Option<&str>) -> Option<&'f str> {
        let base = self.base?;
        let file = file?;
        if self.roots.contains(file) {
            return None;
        }
        let managed_key = key
            .and_then(|k| base.apps.get(k))
            .is_some_and(|a| rooted_child(base, a.manager.as_ref()));
        (self.files.contains(file) || managed_key).then_some(file)
    }
}

/// Whether something managed by `manager` at `base` hangs from a root
/// there: apps that render each other in a loop, with no root, are left
/// to decide their roots as before.
fn rooted_child(base: &Inventory, manager: Option<&Manager>) -> bool {
    match manager {
        None => false,
        Some(Manager::App(parent)) => {
            instances::root_file(&base.apps, &base.appsets, parent).is_some()
        }
        Some(Manager::AppSet(set)) => base
            .appsets
            .get(set)
            .is_some_and(|s| s.manager.is_none() || rooted_child(base, s.manager.as_ref())),
    }
}

/// One note for [`Inventory::unapplied`], naming the first few files.
/// Names the `jqPathExpressions` that are not a path of keys, which
/// gitops-lint does not evaluate (no jq engine), so nothing reads as ignored
/// that is not: an app's `ignoreDifferences` ones are not applied to its
/// rendered diff nor, under `RespectIgnoreDifferences=true`, to its child
/// Applications; an ApplicationSet's `ignoreApplicationDifferences` ones
/// leave the template's value to its Applications. Argo CD evaluates them
/// with gojq (AC `util/argo/normalizers/diff_normalizer.go`
/// `jqNormalizerPatch`; `applicationset/utils/createOrUpdate.go`
/// `applyIgnoreDifferences`).
fn unevaluated_jq_note(inv: &mut Inventory) {
    const NAMED: usize = 3;
    // Read through the objects' views: the Applications of unchanged apps
    // stay undecoded (only a present `ignoreDifferences` is decoded).
    let unevaluated = |object: &goyaml::json::LazyValue, field: &str| -> Vec<String> {
        let entries = object
            .view()
            .get("spec")
            .and_then(|spec| spec.get(field))
            .map(goyaml::json::View::to_value);
        let mut out: Vec<String> = entries
            .as_ref()
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|e| crate::manifest::strings(e.get("jqPathExpressions")))
            .filter(|jq| goyaml::json::jq_key_path_pointer(jq).is_none())
            .collect();
        out.dedup();
        out
    };
    let mut owners: Vec<(String, Vec<String>)> = Vec::new();
    for app in inv.apps.values() {
        let jq = unevaluated(&app.object, "ignoreDifferences");
        if !jq.is_empty() {
            owners.push((
                format!("`ignoreDifferences` of app `{}`", app.display_name()),
                jq,
            ));
        }
    }
    for (key, set) in &inv.appsets {
        let jq = unevaluated(&set.object, "ignoreApplicationDifferences");
        if !jq.is_empty() {
            owners.push((
                format!(
                    "`ignoreApplicationDifferences` of ApplicationSet `{}`",
                    instances::short_key(instances::unqualified(key))
                ),
                jq,
            ));
        }
    }
    if owners.is_empty() {
        return;
    }
    let named = crate::limits::first_and_more(
        owners.iter().map(|(owner, jq)| {
            let exprs: Vec<String> = jq.iter().map(|e| format!("`{e}`")).collect();
            format!("{owner} ({})", exprs.join(", "))
        }),
        NAMED,
        "; ",
    );
    inv.notes.push(format!(
        "jq expressions that are not a path of keys are not evaluated, so what they ignore is compared in the rendered diff and the plan takes it from git: {named}"
    ));
}

fn unapplied_note(inv: &mut Inventory) {
    const NAMED: usize = 5;
    if inv.unapplied.is_empty() {
        return;
    }
    let mut files: Vec<&String> = inv.unapplied.iter().collect();
    files.sort_by(|a, b| source::path::walk_order(a, b));
    inv.notes.push(format!(
        "not applied by any root: {} file(s) whose Applications or ApplicationSets an app rendered at base and none renders here, so they are not analysed as apps (what rendered them decides whether their apps are deleted): {}",
        files.len(),
        crate::limits::first_and_more(files.iter().map(|f| format!("`{f}`")), NAMED, ", ")
    ));
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

/// Apps by the address of their object ([`apps_by_object`]).
pub(super) type AppsByObject<'a> = FastMap<usize, Option<&'a App>>;

/// The address of a shared value, the identity [`apps_by_object`] uses.
pub(super) fn object_address(object: &Arc<LazyValue>) -> usize {
    Arc::as_ptr(object) as usize
}

/// The `apps` by the address of their object; `None` where two apps hold
/// one value. Every app's key is [`identity_key`] of its object
/// and its instance, so the app holding a given value, in that instance,
/// is the one that key finds, with that very value: found so, neither the
/// key nor the spec needs the value read.
pub(super) fn apps_by_object(apps: &BTreeMap<String, App>) -> AppsByObject<'_> {
    let mut by_object = source::fast_map(apps.len());
    for app in apps.values() {
        by_object
            .entry(object_address(&app.object))
            .and_modify(|e| *e = None)
            .or_insert(Some(app));
    }
    by_object
}

/// The spec of the app `key` of `other` (the other revision's inventory)
/// when its Application object is `object`: a spec is a function of the
/// object, so it is not read again.
fn known_spec(
    other: Option<&Inventory>,
    key: &str,
    object: &Arc<LazyValue>,
) -> Option<Arc<AppSpec>> {
    let prev = other?.apps.get(key)?;
    // Comparing the `Arc`s: one value the parse cache shares is equal to
    // itself without a walk.
    (prev.object == *object).then(|| Arc::clone(&prev.spec))
}

/// The spec of a declared or rendered Application `object` whose key is
/// `key`: the other revision's ([`known_spec`]), else read from it.
fn spec_of(other: Option<&Inventory>, key: &str, object: &Arc<LazyValue>) -> Option<Arc<AppSpec>> {
    known_spec(other, key, object).or_else(|| AppSpec::parse(object).map(Arc::new))
}

fn new_app(
    key: String,
    spec: Arc<AppSpec>,
    object: Arc<LazyValue>,
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
        resources: Arc::from([]),
        inputs: Arc::default(),
        source_types: Vec::new(),
        plugins: Vec::new(),
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
    let spec = Arc::new(AppSpec::parse(&object).unwrap_or_else(|| unreachable_spec(&name)));
    let mut app = new_app(
        format!("argocd/{name}"),
        spec,
        Arc::new(object.into()),
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
