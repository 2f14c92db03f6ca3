//! Comparing two inventories: per app the resources a sync would prune,
//! create and change; Applications deleted and whether that cascades.
//!
//! Knows nothing of rules or output formats.

use crate::argocd::instances::short_key;
use goyaml::json::Pointer as _;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::Serialize;

use crate::argocd::resource_filter::{Exclusion, ResourcesFilter};
use crate::argocd::tracking::Tracking;
use crate::argocd::{apps_beside, App, AppStatus, Inventory, Manager, PruneMode};
use crate::config::Config;
use crate::manifest::{Manifest, ResourceId, Scope, Scopes, ANN_HELM_RESOURCE_POLICY};
use crate::source::{FastMap, FastSet};

/// Why a resource would be deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub(crate) enum PruneReason {
    /// Its manifest is gone from the app's render.
    Removed,
    /// The same kind from the same file now has another name.
    Renamed,
    /// The app's `destination.namespace` changed and the resource took it.
    NamespaceChanged,
    /// The app's source path changed.
    PathChanged,
    /// The whole Application is deleted and cascades to it.
    AppDeleted,
    /// It now belongs to another app, which may not adopt it before this one prunes it.
    MovedToApp,
}

impl PruneReason {
    /// The kebab-case name.
    #[must_use]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            PruneReason::Removed => "removed",
            PruneReason::Renamed => "renamed",
            PruneReason::NamespaceChanged => "namespace-changed",
            PruneReason::PathChanged => "path-changed",
            PruneReason::AppDeleted => "app-deleted",
            PruneReason::MovedToApp => "moved-to-app",
        }
    }
}

/// One resource a sync (or an app deletion) would delete.
#[derive(Debug, Clone)]
pub(crate) struct Prune {
    /// The app that deletes it.
    pub(crate) app: String,
    /// The resource.
    pub(crate) id: ResourceId,
    /// Why.
    pub(crate) reason: PruneReason,
    /// What protects it, if anything (`Prune=false`, `Prune=confirm`,
    /// `Delete=false`, `helm.sh/resource-policy: keep`), read from the base object.
    pub(crate) protection: Option<String>,
    /// How the deletion happens: the app's prune mode, or for a cascade the
    /// prune mode of whatever deletes the Application.
    pub(crate) mode: PruneMode,
    /// For `moved-to-app`: the app that renders it at head. For `renamed`: the new name.
    pub(crate) detail: Option<String>,
    /// The object at base (what is in the cluster).
    pub(crate) base: Manifest,
}

impl Prune {
    /// `Prune=confirm` (on the resource or the app): the sync waits until a
    /// person approves the deletion, so it still happens, but not unseen.
    #[must_use]
    pub(crate) fn waits_for_confirmation(&self) -> bool {
        self.protection
            .as_deref()
            .is_some_and(|p| p.starts_with("Prune=confirm") || p.starts_with("Delete=confirm"))
    }
}

impl Prune {
    /// For a prune that waits for confirmation, what asks for it, as a
    /// message says it: `` `Delete=confirm` on `PersistentVolumeClaim ns/x` ``.
    #[must_use]
    pub(crate) fn confirmation_gate(&self) -> Option<String> {
        let p = self
            .protection
            .as_deref()
            .filter(|_| self.waits_for_confirmation())?;
        let (option, rest) = p.split_once(' ').unwrap_or((p, ""));
        Some(match rest {
            "" => format!("`{option}` on it"),
            "(app)" => format!("`{option}` in its Application's sync options"),
            _ => format!("`{option}` {rest}"),
        })
    }
}

/// An Application that disappears at head.
#[derive(Debug, Clone)]
pub(crate) struct AppDeletion {
    /// The app key.
    pub(crate) app: String,
    /// What deletes it; `None` when nothing manages it (nothing is deleted).
    pub(crate) deleted_by: Option<Manager>,
    /// Whether its resources are deleted with it (resources finalizer).
    pub(crate) cascades: bool,
    /// Prune mode of whatever deletes it.
    pub(crate) mode: PruneMode,
    /// Protection on the Application object itself (`Prune=false` in the parent).
    pub(crate) protection: Option<String>,
    /// Whether its resources at base are known (it rendered at base, in
    /// full or in part).
    pub(crate) resources_known: bool,
    /// The sources its base render left out ([`AppStatus::Partial`]): what
    /// they render goes with it too, unseen.
    pub(crate) left_out: Vec<crate::argocd::LeftOut>,
    /// Why nothing deletes it, when that is not simply "nothing manages it".
    pub(crate) note: Option<String>,
}

/// An app whose destination cluster changes: Argo CD compares and prunes
/// only on the cluster the app points to, so what it deployed on the old
/// cluster stays there, unmanaged (AC `state.go` `CompareAppState` reads
/// `GetManagedLiveObjs(destCluster, ...)` of the new destination only).
#[derive(Debug, Clone)]
pub(crate) struct ClusterMove {
    /// The app key.
    pub(crate) app: String,
    /// The destination at base (`server` or `name`, as written).
    pub(crate) from: String,
    /// The destination at head.
    pub(crate) to: String,
    /// Resources it rendered at base, left running on the old cluster.
    pub(crate) left: usize,
}

/// An app whose prunes cannot be computed.
#[derive(Debug, Clone)]
pub(crate) struct Unknown {
    /// App key.
    pub(crate) app: String,
    /// The render error, or a description.
    pub(crate) error: crate::render::RenderError,
}

/// Per-app changes between base and head.
#[derive(Debug, Clone, Default)]
pub(crate) struct AppChanges {
    /// Resources new at head.
    pub(crate) created: BTreeSet<ResourceId>,
    /// Resources present at both with a different object.
    pub(crate) changed: BTreeSet<ResourceId>,
}

/// The plan: what the change would make Argo CD delete.
#[derive(Debug, Clone, Default)]
pub(crate) struct Plan {
    /// Every prune, sorted by app then resource.
    pub(crate) prunes: Vec<Prune>,
    /// Applications deleted at head.
    pub(crate) deleted_apps: Vec<AppDeletion>,
    /// Apps whose prunes are unknown because a render failed.
    pub(crate) unknown: Vec<Unknown>,
    /// Created/changed resources per app present at head; an app with
    /// neither has no entry, so rules in `diff` mode can skip it.
    pub(crate) changes: BTreeMap<String, AppChanges>,
    /// The resource tracking in effect (decides which objects an app owns).
    pub(crate) tracking: Tracking,
    /// Apps whose automated sync refuses to run at head because it would
    /// prune every resource and `allowEmpty` is not set: their prunes wait
    /// for a person (mode `manual`).
    pub(crate) auto_sync_refused: BTreeSet<String>,
    /// Apps whose destination moves to another cluster (nothing is pruned).
    pub(crate) cluster_moves: Vec<ClusterMove>,
    /// Objects of a kind of unknown scope that the app still renders under
    /// the same name in another namespace: pruned if the kind is namespaced,
    /// the same object if it is cluster-scoped. Never in `prunes`.
    pub(crate) scope_unknown: Vec<Prune>,
    /// ApplicationSets the change removes whose removal deletes what they
    /// generate, as it does their known Applications, but whose generators
    /// could not all be evaluated at base: those Applications are unknown.
    /// Sorted by key.
    pub(crate) unevaluable_sets_deleted: Vec<String>,
    /// Objects whose manifests are gone but whose kind Argo CD does not
    /// manage (`resource.exclusions`, `resource.inclusions`, the core
    /// exclusions), at both revisions: nothing prunes or deletes them.
    /// Never in `prunes`. Sorted by app then resource.
    pub(crate) excluded: Vec<(Prune, Exclusion)>,
}

/// Three fields of a resource id that [`Plan::recreates`] pairs on.
type IdKey<'r> = (&'r str, &'r str, &'r str);

/// Kind and name.
fn named(r: &ResourceId) -> IdKey<'_> {
    (&r.group, &r.kind, &r.name)
}

/// Kind and namespace.
fn placed(r: &ResourceId) -> IdKey<'_> {
    (&r.group, &r.kind, &r.namespace)
}

/// `ids` by `key`, each list in the order given.
fn group_by<'r>(
    ids: impl Iterator<Item = &'r ResourceId>,
    key: fn(&'r ResourceId) -> IdKey<'r>,
) -> HashMap<IdKey<'r>, Vec<&'r ResourceId>> {
    let mut map: HashMap<IdKey<'r>, Vec<&'r ResourceId>> = HashMap::new();
    for r in ids {
        map.entry(key(r)).or_default().push(r);
    }
    map
}

/// A pruned object that the same app creates again at head under another
/// name or in another namespace: a delete and a create, not an update.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Recreate {
    /// The app (key).
    pub(crate) app: String,
    /// The object deleted.
    pub(crate) deleted: ResourceId,
    /// The object created in its place.
    pub(crate) created: ResourceId,
}

impl Plan {
    /// The prunes of app `key`, in plan order: a run of [`Plan::prunes`],
    /// which [`plan`] sorts by app. Found by two binary searches, so rules
    /// that look at each deleted app's prunes stay linear when a change
    /// deletes thousands of apps.
    #[must_use]
    pub(crate) fn prunes_of(&self, key: &str) -> &[Prune] {
        let start = self.prunes.partition_point(|p| p.app.as_str() < key);
        let len = self.prunes[start..].partition_point(|p| p.app == key);
        &self.prunes[start..start + len]
    }

    /// The prune of `id` in app `key`, if there is one.
    #[must_use]
    pub(crate) fn prune_of(&self, key: &str, id: &ResourceId) -> Option<&Prune> {
        let run = self.prunes_of(key);
        run.get(run.partition_point(|p| p.id < *id))
            .filter(|p| p.id == *id)
    }

    /// Whether a Namespace is pruned (its deletion takes everything inside).
    #[must_use]
    pub(crate) fn prunes_namespace(&self) -> bool {
        self.prunes
            .iter()
            .any(|p| p.id.group.is_empty() && p.id.kind == "Namespace")
    }

    /// The prunes the same app's sync pairs with a creation of the same kind:
    /// the same name in another namespace, or, in one namespace, the only
    /// prune and the only creation of that kind. Anything less certain is
    /// left unpaired. Protected prunes delete nothing and are not paired.
    #[must_use]
    pub(crate) fn recreates<'a>(&'a self) -> Vec<Recreate> {
        let mut by_app: BTreeMap<&str, Vec<&ResourceId>> = BTreeMap::new();
        for p in &self.prunes {
            let deletes = p.protection.is_none() || p.waits_for_confirmation();
            if deletes && !matches!(p.reason, PruneReason::AppDeleted | PruneReason::MovedToApp) {
                by_app.entry(p.app.as_str()).or_default().push(&p.id);
            }
        }
        let mut out = Vec::new();
        for (app, deleted) in by_app {
            let Some(ch) = self.changes.get(app) else {
                continue;
            };
            // Indexed, not searched per prune: an app of thousands of
            // resources whose namespace changes prunes and creates them all.
            let namespaced = |r: &&ResourceId| !r.namespace.is_empty();
            let created_named = group_by(ch.created.iter().filter(namespaced), named);
            let deleted_named = group_by(deleted.iter().copied().filter(namespaced), named);
            let mut pairs: Vec<(&ResourceId, &ResourceId)> = Vec::new();
            // Same name, another namespace: kept when neither side has
            // another candidate.
            let in_another_namespace =
                |of: &[&'a ResourceId], r: &ResourceId| -> Vec<&'a ResourceId> {
                    of.iter()
                        .copied()
                        .filter(|o| o.namespace != r.namespace)
                        .collect()
                };
            for &d in &deleted {
                if d.namespace.is_empty() {
                    continue;
                }
                let moved = created_named
                    .get(&named(d))
                    .map_or_else(Vec::new, |cs| in_another_namespace(cs, d));
                if let [c] = moved.as_slice() {
                    let rivals = deleted_named
                        .get(&named(c))
                        .map_or(0, |os| in_another_namespace(os, c).len());
                    if rivals == 1 {
                        pairs.push((d, c));
                    }
                }
            }
            // Same namespace, one prune and one creation of the kind.
            let created_placed = group_by(ch.created.iter(), placed);
            let deleted_placed = group_by(deleted.iter().copied(), placed);
            let mut paired_deleted: HashSet<&ResourceId> = pairs.iter().map(|p| p.0).collect();
            let mut paired_created: HashSet<&ResourceId> = pairs.iter().map(|p| p.1).collect();
            for &d in &deleted {
                if paired_deleted.contains(d) {
                    continue;
                }
                let here = placed(d);
                let prunes = deleted_placed.get(&here).map_or(0, Vec::len);
                let creates: Vec<&ResourceId> = created_placed
                    .get(&here)
                    .into_iter()
                    .flatten()
                    .copied()
                    .filter(|x| !paired_created.contains(x))
                    .collect();
                if let (1, [c]) = (prunes, creates.as_slice()) {
                    pairs.push((d, c));
                    paired_deleted.insert(d);
                    paired_created.insert(c);
                }
            }
            pairs.sort();
            out.extend(pairs.into_iter().map(|(d, c)| Recreate {
                app: app.to_string(),
                deleted: d.clone(),
                created: c.clone(),
            }));
        }
        out
    }
}

/// Whether Argo CD ever prunes this object, whichever app rendered it:
/// hooks, `Skip` and objects with ownerReferences never are (GE
/// `cluster.go` `GetManagedLiveObjs` skips owned objects).
#[must_use]
pub(crate) fn is_prunable(m: &Manifest) -> bool {
    !(m.hook().is_hook || m.has_owner_references())
}

/// Whether `app` prunes this object of its base render once it is gone:
/// it is prunable and its live copy is tracked as the app's own (a CRD only
/// when its own metadata names the app, see [`Tracking::owns`]).
#[must_use]
pub(crate) fn app_prunes(m: &Manifest, app: &App, tracking: &Tracking) -> bool {
    is_prunable(m) && tracking.owns(m, &app.spec)
}

/// Whether an object survives cascade deletion of its Application
/// (AC `appcontroller.go` `shouldBeDeleted`).
///
/// A `Delete=` option on the object decides alone: the app-level value is
/// read only when the object has none (`deleteOption == nil`), so a
/// `Delete=true` object is deleted under an app-level `Delete=false`.
#[must_use]
pub(crate) fn cascade_protection(m: &Manifest, app: &App, config: &Config) -> Option<String> {
    let own = m.sync_options().value("Delete").map(str::to_owned);
    if own.as_deref() == Some("false") {
        return Some("Delete=false".into());
    }
    if m.annotation(ANN_HELM_RESOURCE_POLICY) == Some("keep") {
        return Some("helm.sh/resource-policy: keep".into());
    }
    if own.is_none() && config.argocd_at_least(3, 4) && app.spec.sync_options.delete_disabled() {
        return Some("Delete=false (app)".into());
    }
    None
}

/// Prune protection of an object (read from the base object by the plan),
/// then the app level (3.4+). A `Prune=` option on the resource decides
/// alone: it overrides the app-level value, whatever it says (GE `isPruningDisabled`).
#[must_use]
pub(crate) fn prune_protection(m: &Manifest, app: &App, config: &Config) -> Option<String> {
    let o = m.sync_options();
    match o.value("Prune") {
        Some("false") => return Some("Prune=false".into()),
        Some("confirm") if config.argocd_at_least(2, 14) => return Some("Prune=confirm".into()),
        Some(_) => return None,
        None => {}
    }
    if config.argocd_at_least(3, 4) {
        match app.spec.sync_options.value("Prune") {
            Some("false") => return Some("Prune=false (app)".into()),
            Some("confirm") => return Some("Prune=confirm (app)".into()),
            _ => {}
        }
    }
    None
}

/// The app's own `Prune=` options come from the base object, but its sync
/// policy may already be the head one when it syncs: a parent applies the
/// new Application spec while the app syncs the new revision, in no fixed
/// order. So the more dangerous reading is taken: app-level protection
/// counts only if the head spec keeps it, and the prune is automated if
/// either spec automates it. An Application that nothing renders at head
/// (applied by hand) keeps the spec in the cluster.
fn protection_across(
    m: &Manifest,
    b: &App,
    h: Option<&App>,
    config: &Config,
    kids: &ChildApps,
) -> Option<String> {
    let p = prune_protection(m, b, config);
    match h.filter(|h| applied_from_git(h, kids)) {
        Some(h) if p.as_deref().is_some_and(|p| p.ends_with("(app)")) => {
            prune_protection(m, h, config)
        }
        _ => p,
    }
}

/// Whether Argo CD applies this Application's spec from git: another app
/// renders it, or it renders itself (a self-managed root).
fn applied_from_git(app: &App, kids: &ChildApps) -> bool {
    app.manager.is_some() || kids.of(app, &app.spec.name).is_some()
}

/// Whether automated sync refuses to run at head: every resource of the
/// comparison would need pruning (the head renders nothing but hooks, which
/// are not targets) and `allowEmpty` is not set (AC `appcontroller.go`
/// `autoSync`: "auto-sync will wipe out all resources"). Whichever spec is
/// applied when it syncs, the more dangerous one counts: `allowEmpty` on
/// either disarms the guard.
fn auto_sync_refuses(b: &App, h: &App, kids: &ChildApps) -> bool {
    let allows_empty = |a: &App| {
        a.object
            .at("/spec/syncPolicy/automated/allowEmpty")
            .and_then(serde_json::Value::as_bool)
            .unwrap_or(false)
    };
    let head_applies = applied_from_git(h, kids);
    h.resources.iter().all(|m| m.hook().is_hook)
        && !allows_empty(b)
        && !(head_applies && allows_empty(h))
}

/// See [`protection_across`]. An automated prune that the `allowEmpty`
/// guard stops at head waits for a person: `manual`.
fn mode_across(b: &App, h: Option<&App>, kids: &ChildApps) -> PruneMode {
    if h.is_some_and(|h| refused_at_head(b, h, kids)) {
        PruneMode::Manual
    } else {
        unguarded_mode_across(b, h, kids)
    }
}

/// The prune mode before the `allowEmpty` guard.
fn unguarded_mode_across(b: &App, h: Option<&App>, kids: &ChildApps) -> PruneMode {
    if h.is_some_and(|h| applied_from_git(h, kids) && h.spec.prune_mode == PruneMode::Automated) {
        PruneMode::Automated
    } else {
        b.spec.prune_mode
    }
}

/// Whether an automated prune of `b` is stopped by [`auto_sync_refuses`]
/// at head.
fn refused_at_head(b: &App, h: &App, kids: &ChildApps) -> bool {
    unguarded_mode_across(b, Some(h), kids) == PruneMode::Automated
        && matches!(h.status, AppStatus::Rendered)
        && auto_sync_refuses(b, h, kids)
}

/// Whether `m` is the app's managed namespace, which no sync prunes. With
/// `syncPolicy.managedNamespaceMetadata` set (any value but null), the
/// controller adds a Namespace named after `destination.namespace` to the
/// targets whenever the live one is the app's and git has none (AC
/// `controller/state.go` `CompareAppState`, `isManagedNamespace`, then
/// `syncNamespace` in `controller/sync_namespace.go`), so that Namespace
/// never needs pruning. `isManagedNamespace` does not look at
/// `CreateNamespace=true`: that option only lets gitops-engine create the
/// namespace (GE `sync_context.go` `autoCreateNamespace`). Whichever spec
/// the controller holds when it syncs counts, so with the Application
/// applied from git both specs must keep it (see [`protection_across`]).
fn keeps_managed_namespace(m: &Manifest, b: &App, h: &App, kids: &ChildApps) -> bool {
    let managed = |a: &App| {
        a.object
            .at("/spec/syncPolicy/managedNamespaceMetadata")
            .is_some_and(|v| !v.is_null())
            && a.spec.dest_namespace == m.id.name
    };
    m.id.group.is_empty()
        && m.id.kind == "Namespace"
        && managed(b)
        && (!applied_from_git(h, kids) || managed(h))
}

/// Whether only the scope of `m`'s kind, which nothing in the repository
/// or the configuration tells, decides if it is pruned: the head still
/// renders it under the same name in another namespace (the destination
/// namespace changed, or its own). Argo CD clears the namespace of a
/// cluster-scoped object when it normalises the targets (AC
/// `controller/state.go` `CompareAppState` → `NormalizeTargetObjects`,
/// with the scope from the cluster's API discovery), so a cluster-scoped
/// one is the same object and nothing is pruned; a namespaced one is.
fn scope_decides(m: &Manifest, h: &App, scopes: &[&Scopes; 2]) -> bool {
    let unknown = scopes
        .iter()
        .all(|s| s.scope(&m.id.group, &m.id.kind) == Scope::Unknown);
    unknown
        && h.resources.iter().any(|n| {
            n.id.group == m.id.group
                && n.id.kind == m.id.kind
                && n.id.name == m.id.name
                && n.id.namespace != m.id.namespace
        })
}

/// The app that gains each resource at head, by Argo CD instance: a
/// resource only moves between apps of one instance (another instance
/// applies to other clusters, where the object is another one).
///
/// This map and the plan's sets of ids are hashed: an app-of-apps holds
/// thousands of ids, which hash faster than they compare (group, kind and
/// namespace are alike, so an ordered search compares four strings a step).
type HeadOwners<'a> = FastMap<(Option<&'a str>, &'a ResourceId), &'a str>;

/// What comparing one app reads besides its own two revisions.
struct Sides<'a> {
    base: &'a Inventory,
    head: &'a Inventory,
    head_owner: &'a HeadOwners<'a>,
    config: &'a Config,
    kids: &'a ChildApps,
    /// The base apps that failed to render, for [`unrendered_owner`].
    unrendered: &'a [&'a App],
}

/// Each app's rendered Application objects by name, the first of each
/// name as a search of its resources in order finds it, indexed when the
/// plan first asks about that app. A change that deletes thousands of
/// children of one app-of-apps asks once per child, and a search of the
/// parent's resources each time made the plan quadratic in the fleet.
/// Apps are told apart by address: the inventories are not changed while
/// a plan is made.
#[derive(Default)]
struct ChildApps(RefCell<FastMap<usize, FastMap<String, usize>>>);

impl ChildApps {
    /// The Application object named `name` that `parent` renders.
    fn of<'p>(&self, parent: &'p App, name: &str) -> Option<&'p Manifest> {
        let mut memo = self.0.borrow_mut();
        let names = memo
            .entry(std::ptr::from_ref(parent) as usize)
            .or_insert_with(|| {
                // An app-of-apps renders thousands: each is read once, and
                // only an object of kind `Application` (its id's kind is
                // the object's) is looked into.
                let mut names = FastMap::default();
                for (i, m) in parent.resources.iter().enumerate() {
                    if m.id.kind != "Application" || !crate::argocd::is_application(&m.value) {
                        continue;
                    }
                    // Read through a view, which decodes nothing.
                    let name = m
                        .value
                        .view()
                        .get("metadata")
                        .and_then(|meta| meta.get("name"));
                    if let Some(n) = name.and_then(goyaml::json::View::as_str) {
                        names.entry(n.to_string()).or_insert(i);
                    }
                }
                names
            });
        names.get(name).map(|&i| &parent.resources[i])
    }
}

/// Compares two inventories.
#[must_use]
pub(crate) fn plan(base: &Inventory, head: &Inventory, config: &Config) -> Plan {
    // Tracking is a setting of the running Argo CD: the base revision's.
    let mut plan = Plan {
        tracking: Tracking::resolve(config, base.tracking.as_ref()),
        ..Plan::default()
    };
    let kids = ChildApps::default();
    let unrendered: Vec<&App> = base
        .apps
        .values()
        .filter(|a| matches!(a.status, AppStatus::Unrendered(_)))
        .collect();
    // Resources that enter an app at head, by app, to detect moves. One an
    // app already rendered at base is not moving there: it was shared
    // (Argo CD's SharedResourceWarning), and which app tracks the live
    // object is not in git. Only apps whose render changed can gain one, so
    // apps left unrendered as unchanged need not be rendered to know this.
    let mut head_owner: HeadOwners<'_> = FastMap::default();
    // Apps left unrendered have no resources: a fleet's thousands are
    // passed over without looking their base up.
    for app in head.apps.values().filter(|a| !a.resources.is_empty()) {
        let before: Option<FastSet<&ResourceId>> = match base.apps.get(&app.key) {
            Some(_) if head.reused.contains(&app.key) => continue,
            Some(b) if b.status.renders_here() => Some(b.resources.iter().map(|m| &m.id).collect()),
            _ => None,
        };
        for m in app.resources.iter() {
            if before.as_ref().is_none_or(|ids| !ids.contains(&m.id)) {
                head_owner
                    .entry((app.instance.as_deref(), &m.id))
                    .or_insert(app.key.as_str());
            }
        }
    }

    let cx = Sides {
        base,
        head,
        head_owner: &head_owner,
        config,
        kids: &kids,
        unrendered: &unrendered,
    };
    for (key, b, same_key) in apps_beside(&base.apps, &head.apps) {
        match same_key {
            Some(h)
                if !unmanaged_at_head(base, head, b, h)
                    && !left_its_appset(base, head, b, h)
                    && !deleted_with_parent(&cx, b) =>
            {
                let moved = h
                    .status
                    .renders_here()
                    .then(|| cluster_move(b, h, config))
                    .flatten();
                if let Some((from, to)) = moved {
                    plan.cluster_moves.push(ClusterMove {
                        app: key.clone(),
                        from,
                        to,
                        left: b.resources.iter().filter(|m| is_prunable(m)).count(),
                    });
                    let ch = plan.changes.entry(key.clone()).or_default();
                    ch.created.extend(h.resources.iter().map(|m| m.id.clone()));
                    continue;
                }
                let reused = head.reused.contains(key);
                diff_app(&mut plan, &cx, b, h, reused);
            }
            _ => {
                delete_app(&mut plan, &cx, b);
            }
        }
    }
    plan.unevaluable_sets_deleted = base
        .appsets
        .iter()
        .filter(|(key, b)| {
            !head.appsets.contains_key(*key)
                && b.expansion.as_ref().is_ok_and(|x| !x.is_complete())
                && matches!(appset_deletes(base, head, key), SetVerdict::Deletes)
        })
        .map(|(key, _)| key.clone())
        .collect();
    for (key, h) in &head.apps {
        if !base.apps.contains_key(key) {
            let ch = plan.changes.entry(key.clone()).or_default();
            ch.created.extend(h.resources.iter().map(|m| m.id.clone()));
        }
    }
    leave_unmanaged_kinds(&mut plan, base, head, config);
    plan.prunes
        .sort_by(|a, b| (a.app.as_str(), &a.id).cmp(&(b.app.as_str(), &b.id)));
    plan.excluded
        .sort_by(|a, b| (a.0.app.as_str(), &a.0.id).cmp(&(b.0.app.as_str(), &b.0.id)));
    plan.scope_unknown
        .sort_by(|a, b| (a.app.as_str(), &a.id).cmp(&(b.app.as_str(), &b.id)));
    plan.deleted_apps.sort_by(|a, b| a.app.cmp(&b.app));
    plan.unknown.sort_by(|a, b| a.app.cmp(&b.app));
    plan
}

/// Takes out of the plan what Argo CD does not manage: a kind excluded by
/// the resource filters of both revisions' `argocd-cm` (the running one's,
/// and the one the change may apply before the app syncs) on the app's
/// destination cluster. Its removed objects are neither pruned nor deleted
/// with their Application, and its new or changed ones are never applied
/// (AC `controller/state.go` `CompareAppState` drops excluded targets; the
/// cluster cache never lists excluded kinds, so `GetManagedLiveObjs` never
/// returns one). See [`crate::argocd::resource_filter`].
fn leave_unmanaged_kinds(plan: &mut Plan, base: &Inventory, head: &Inventory, config: &Config) {
    let filters = [
        ResourcesFilter::from_settings(base.tracking.as_ref()),
        ResourcesFilter::from_settings(head.tracking.as_ref()),
    ];
    let excluded = |app: Option<&App>, id: &ResourceId| -> Option<Exclusion> {
        let server = app.and_then(|a| destination(a, config).0);
        let mut why = filters
            .iter()
            .map(|f| f.excludes(&id.group, &id.kind, server.as_deref()));
        match (why.next().flatten(), why.next().flatten()) {
            (Some(b), Some(h)) => Some(b.min(h)),
            _ => None,
        }
    };
    let prunes = std::mem::take(&mut plan.prunes);
    for p in prunes {
        match excluded(base.apps.get(&p.app), &p.id) {
            Some(why) => plan.excluded.push((p, why)),
            None => plan.prunes.push(p),
        }
    }
    plan.scope_unknown
        .retain(|p| excluded(base.apps.get(&p.app), &p.id).is_none());
    for (key, ch) in &mut plan.changes {
        let app = head.apps.get(key);
        ch.created.retain(|id| excluded(app, id).is_none());
        ch.changed.retain(|id| excluded(app, id).is_none());
    }
    plan.changes
        .retain(|_, ch| !ch.created.is_empty() || !ch.changed.is_empty());
}

/// The API server URL Argo CD resolves a destination to, when it can be
/// known offline: `server` as written, or the `server` of a cluster whose
/// `name` is given (`in-cluster`, or `clusters:` in the configuration).
/// AC `util/argo/argo.go` `GetDestinationCluster`: `server` first, else `name`.
fn destination(app: &App, config: &Config) -> (Option<String>, String) {
    let field = |f: &str| {
        app.object
            .at(&format!("/spec/destination/{f}"))
            .and_then(serde_json::Value::as_str)
            .map(|s| s.trim_end_matches('/').to_string())
            .filter(|s| !s.is_empty())
    };
    if let Some(server) = field("server") {
        return (Some(server.clone()), server);
    }
    let Some(name) = field("name") else {
        return (None, String::new());
    };
    let server = if name == "in-cluster" {
        Some("https://kubernetes.default.svc".to_string())
    } else {
        config
            .clusters
            .iter()
            .find(|c| c.name == name)
            .map(|c| c.server.trim_end_matches('/').to_string())
    };
    (server, name)
}

/// `Some((from, to))` when the app certainly points at another cluster at
/// head: both destinations resolve to different servers, or both are
/// cluster names that differ (a cluster's name is unique in Argo CD). When
/// it cannot be told, the app is taken to stay, so its prunes are reported.
fn cluster_move(b: &App, h: &App, config: &Config) -> Option<(String, String)> {
    let (bs, bw) = destination(b, config);
    let (hs, hw) = destination(h, config);
    let by_name = |a: &App| {
        a.object
            .at("/spec/destination/server")
            .and_then(serde_json::Value::as_str)
            .is_none_or(str::is_empty)
    };
    let moved = match (bs, hs) {
        (Some(x), Some(y)) => x != y,
        _ => by_name(b) && by_name(h) && !bw.is_empty() && !hw.is_empty() && bw != hw,
    };
    moved.then_some((bw, hw))
}

fn diff_app(plan: &mut Plan, cx: &Sides<'_>, b: &App, h: &App, reused: bool) {
    // A reused render is the base render itself: nothing created, changed or pruned.
    if reused {
        return;
    }
    match (&b.status, &h.status) {
        // The change adds a source this run cannot read, or moves one there
        // (another repository, a Helm or OCI repository, a revision the clone
        // lacks): what that source renders replaces or joins what was
        // compared, so what a sync prunes is unknown.
        (bs, AppStatus::Partial(head_left_out))
            if bs.renders_here() && head_left_out.iter().any(|l| !l.left_out_in(bs)) =>
        {
            let moved: Vec<crate::argocd::LeftOut> = head_left_out
                .iter()
                .filter(|l| !l.left_out_in(bs))
                .cloned()
                .collect();
            plan.unknown.push(unread_at_head(
                h,
                &format!("also from {}", crate::argocd::LeftOut::join(&moved)),
            ));
            return;
        }
        // A partial render's prunes are those of the sources it read; what
        // the sources left out at both revisions render is not compared, as
        // for an external app (a chart version bump included).
        (bs, hs) if bs.renders_here() && hs.renders_here() => {}
        (AppStatus::Unrendered(e), _) => {
            plan.unknown.push(Unknown {
                app: b.key.clone(),
                error: e.clone(),
            });
            return;
        }
        (_, AppStatus::Unrendered(e)) => {
            plan.unknown.push(Unknown {
                app: h.key.clone(),
                error: e.clone(),
            });
            return;
        }
        // The app now syncs from a source this repository does not hold: what
        // it will render there, and so what it prunes, is unknown.
        (bs, AppStatus::External(why)) if bs.renders_here() && !b.resources.is_empty() => {
            plan.unknown.push(unread_at_head(h, &format!("from {why}")));
            return;
        }
        _ => return,
    }
    // Argo CD refuses every sync of an invalid spec: nothing is pruned
    // while it lasts (GL021 reports the refusal).
    let refused_spec = !namespace_missing(h, &cx.head.scopes).is_empty();
    let head_ids: FastMap<&ResourceId, &Manifest> =
        h.resources.iter().map(|m| (&m.id, m)).collect();
    let base_ids: FastSet<&ResourceId> = b.resources.iter().map(|m| &m.id).collect();
    let mode = mode_across(b, Some(h), cx.kids);
    let refused = refused_at_head(b, h, cx.kids);
    let mut ch = AppChanges::default();
    for m in h.resources.iter() {
        if !base_ids.contains(&m.id) {
            ch.created.insert(m.id.clone());
        }
    }
    for m in b.resources.iter() {
        if let Some(hm) = head_ids.get(&m.id) {
            // A field filled with random values or the clock is no change.
            if !hm.same_apart_from_generated(m) {
                ch.changed.insert(m.id.clone());
            }
            continue;
        }
        if !app_prunes(m, b, &plan.tracking) || keeps_managed_namespace(m, b, h, cx.kids) {
            continue;
        }
        let (reason, detail) = prune_reason(m, b, h, cx.head_owner);
        let prune = Prune {
            app: b.key.clone(),
            id: m.id.clone(),
            reason,
            protection: protection_across(m, b, Some(h), cx.config, cx.kids),
            mode,
            detail,
            base: m.clone(),
        };
        if refused_spec {
            continue;
        }
        if scope_decides(m, h, &[&cx.base.scopes, &cx.head.scopes]) {
            plan.scope_unknown.push(prune);
            continue;
        }
        plan.prunes.push(prune);
        if refused {
            plan.auto_sync_refused.insert(b.key.clone());
        }
    }
    if !ch.created.is_empty() || !ch.changed.is_empty() {
        plan.changes.insert(h.key.clone(), ch);
    }
}

/// The objects of `app` that make Argo CD refuse to sync it: with no
/// `destination.namespace`, a namespaced object whose manifest names no
/// namespace keeps none, and the comparison raises `InvalidSpecError`
/// ("Namespace for … is missing", AC `controller/state.go`
/// `CompareAppState`, after `NormalizeTargetObjects`); `controller/sync.go`
/// `SyncAppState` then fails every sync while the condition stands.
/// Hooks are split off before that check (GE `sync.Reconcile`); a kind of
/// unknown scope is not counted, for a cluster-scoped one is valid.
#[must_use]
pub(crate) fn namespace_missing<'a>(app: &'a App, scopes: &Scopes) -> Vec<&'a Manifest> {
    // An implicit app (a repository without Applications) has no spec to refuse.
    if app.implicit || !app.spec.dest_namespace.is_empty() {
        return Vec::new();
    }
    app.resources
        .iter()
        .filter(|m| {
            m.id.namespace.is_empty()
                && !m.hook().is_hook
                && scopes.scope(&m.id.group, &m.id.kind) == Scope::Namespaced
        })
        .collect()
}

/// What a sync of `h` prunes is unknown: it now renders `from` a place
/// this run does not read. Said at its Application.
fn unread_at_head(h: &App, from: &str) -> Unknown {
    let mut error = crate::render::RenderError::unsupported(format!(
        "`{}` now renders {from}: gitops-lint does not read it",
        h.spec.name
    ));
    if let Some(f) = &h.origin.file {
        error = error.at(f.clone(), h.origin.line);
    }
    Unknown {
        app: h.key.clone(),
        error,
    }
}

fn prune_reason(
    m: &Manifest,
    b: &App,
    h: &App,
    head_owner: &HeadOwners<'_>,
) -> (PruneReason, Option<String>) {
    if let Some(owner) = head_owner.get(&(h.instance.as_deref(), &m.id)) {
        if *owner != h.key {
            return (PruneReason::MovedToApp, Some((*owner).to_string()));
        }
    }
    let explicit_ns = m
        .value
        .at("/metadata/namespace")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|s| !s.is_empty());
    if !explicit_ns && !m.id.namespace.is_empty() && b.spec.dest_namespace != h.spec.dest_namespace
    {
        return (
            PruneReason::NamespaceChanged,
            Some(h.spec.dest_namespace.clone()),
        );
    }
    let paths = |a: &App| {
        a.spec
            .sources
            .iter()
            .map(|s| s.path.clone())
            .collect::<Vec<_>>()
    };
    if paths(b) != paths(h) {
        return (PruneReason::PathChanged, Some(h.source_path()));
    }
    // Same kind, same file and document at head under another name. The
    // new name must be new: deleting an earlier document shifts the later
    // ones up, and an object that existed at base is not a rename target.
    if let (Some(f), Some(d)) = (&m.origin.file, m.origin.doc_index) {
        if let Some(n) = h.resources.iter().find(|n| {
            n.id.kind == m.id.kind
                && n.id.group == m.id.group
                && n.origin.file.as_ref() == Some(f)
                && n.origin.doc_index == Some(d)
                && !b.resources.iter().any(|o| o.id == n.id)
        }) {
            return (PruneReason::Renamed, Some(n.id.name.clone()));
        }
    }
    // A Kustomize-generated ConfigMap or Secret whose content changed: the
    // hash suffix changes and the old object is pruned (a routine rename).
    if let Some(stem) = generated_stem(m) {
        if let Some(n) = h.resources.iter().find(|n| {
            n.id.kind == m.id.kind
                && n.id.group == m.id.group
                && n.id.namespace == m.id.namespace
                && generated_stem(n) == Some(stem)
                && !b.resources.iter().any(|o| o.id == n.id)
        }) {
            return (PruneReason::Renamed, Some(n.id.name.clone()));
        }
    }
    (PruneReason::Removed, None)
}

/// The name of a generated ConfigMap or Secret without its 10-character
/// Kustomize hash suffix (`settings-g95md4d2dd` → `settings`).
fn generated_stem(m: &Manifest) -> Option<&str> {
    if m.origin.file.is_some()
        || !(m.id.group.is_empty() && matches!(m.id.kind.as_str(), "ConfigMap" | "Secret"))
    {
        return None;
    }
    let (stem, suffix) = m.id.name.rsplit_once('-')?;
    // kustomize encodes the hash with consonants and digits only (hasher.go `encode`)
    let hashlike = suffix.len() == 10
        && suffix
            .bytes()
            .all(|c| c.is_ascii_digit() || (c.is_ascii_lowercase() && !b"aeiou".contains(&c)));
    hashlike.then_some(stem)
}

/// Whether an app managed by a parent at base is still declared in a file at
/// head but no parent renders it any more. Only what an app renders exists
/// in the cluster: a file nothing applies is just a file, so the parent
/// prunes the child (or deletes it with itself). When the parent cannot be
/// rendered at head, or is external, nothing can be said and the file wins.
fn unmanaged_at_head(base: &Inventory, head: &Inventory, b: &App, h: &App) -> bool {
    let Some(Manager::App(parent)) = &b.manager else {
        return false;
    };
    if h.manager.is_some() || h.implicit {
        return false;
    }
    match head.apps.get(parent) {
        Some(p) => {
            matches!(p.status, AppStatus::Rendered)
                && !base
                    .apps
                    .get(parent)
                    .is_some_and(|pb| unmanaged_at_head(base, head, pb, p))
        }
        None => true,
    }
}

/// Whether an Application an ApplicationSet generated at base is declared
/// by something else at head (a plain manifest, a parent app, another
/// ApplicationSet) while that ApplicationSet deletes what it no longer
/// generates. The live Application keeps the set's controller
/// ownerReference (applying the new manifest does not remove a field it
/// never set), and the controller deletes every Application that reference
/// names and it does not generate (AC `applicationset_controller.go`
/// `deleteInCluster`, `getCurrentApplications` lists by
/// `.metadata.controller`), or garbage collection does when the set itself
/// is pruned: its finalizer cascades before anything recreates it, so the
/// base app is deleted as if it were gone.
fn left_its_appset(base: &Inventory, head: &Inventory, b: &App, h: &App) -> bool {
    let Some(Manager::AppSet(set)) = &b.manager else {
        return false;
    };
    // Still generated there (another set generating the name too is
    // refused, GL018): the set keeps it.
    let generated = head
        .appsets
        .get(set)
        .and_then(|e| e.expansion.as_ref().ok())
        .is_some_and(|exp| exp.apps.iter().any(|g| g.name() == b.spec.name));
    !generated
        && !matches!(&h.manager, Some(Manager::AppSet(s)) if s == set)
        && matches!(appset_deletes(base, head, set), SetVerdict::Deletes)
}

/// Whether the app is gone at head, for the purpose of deletion: absent, or
/// still declared but no longer rendered by its parent.
fn gone_at_head(base: &Inventory, head: &Inventory, b: &App) -> bool {
    match head.apps.get(&b.key) {
        None => true,
        Some(h) => unmanaged_at_head(base, head, b, h),
    }
}

/// The render error of a base app that failed to render and whose source
/// path holds the file declaring `b`: whether it manages `b` is unknown.
fn unrendered_owner<'a>(unrendered: &[&'a App], b: &App) -> Option<&'a crate::render::RenderError> {
    let file = b.origin.file.as_deref()?;
    unrendered.iter().find_map(|a| {
        let AppStatus::Unrendered(e) = &a.status else {
            return None;
        };
        let holds = a
            .spec
            .sources
            .iter()
            .filter_map(|s| s.path.as_deref())
            .any(|p| crate::source::path::strip_dir(file, p).is_some());
        (holds && a.key != b.key).then_some(e)
    })
}

/// Whether `b`, still declared at head, is deleted with the parent app that
/// managed it at base: that parent is gone at head (removed, or renamed:
/// a new name is a new Application), its deletion cascades to what it
/// manages, among them `b`'s Application object, and nothing protects that
/// object. The old parent's finalizer deletes the objects it tracks (AC
/// `controller/appcontroller.go` `finalizeApplicationDeletion`, over
/// `getPermittedAppLiveObjects`), and nothing makes whatever renders `b`
/// now take it over first, so `b` is deleted (and cascades with its own
/// finalizer) before it is created again: a renamed app-of-apps deletes
/// every child it rendered.
fn deleted_with_parent(cx: &Sides<'_>, b: &App) -> bool {
    let Some(Manager::App(parent_key)) = &b.manager else {
        return false;
    };
    let Some(parent) = cx.base.apps.get(parent_key) else {
        return false;
    };
    gone_at_head(cx.base, cx.head, parent)
        && deletion_cascades(cx, parent, 0).is_some()
        && cx
            .kids
            .of(parent, &b.spec.name)
            .and_then(|m| cascade_protection(m, parent, cx.config))
            .is_none()
}

/// Finds what deletes a vanished Application, and cascades.
fn delete_app(plan: &mut Plan, cx: &Sides<'_>, b: &App) {
    let (base, head, config, kids) = (cx.base, cx.head, cx.config, cx.kids);
    // If the file declaring it no longer parses, we cannot tell.
    if let Some(f) = &b.origin.file {
        if let Some(err) = head.broken_files.get(f) {
            plan.unknown.push(Unknown {
                app: b.key.clone(),
                error: err.clone(),
            });
            return;
        }
    }
    let (deleted_by, mode, protection) = match &b.manager {
        None => {
            // Nothing rendered it at base, but an app that failed to render
            // there may well have: its file lies in that app's path.
            if let Some(e) = unrendered_owner(cx.unrendered, b) {
                plan.unknown.push(Unknown {
                    app: b.key.clone(),
                    error: e.clone(),
                });
                return;
            }
            (None, PruneMode::None, None)
        }
        Some(Manager::App(parent_key)) => {
            let Some(parent) = base.apps.get(parent_key) else {
                return;
            };
            match head.apps.get(parent_key).map(|p| &p.status) {
                // The parent could not be rendered at head: whether it still
                // renders this child is unknown.
                Some(AppStatus::Unrendered(e)) => {
                    plan.unknown.push(Unknown {
                        app: b.key.clone(),
                        error: e.clone(),
                    });
                    return;
                }
                Some(AppStatus::External(_)) => return,
                // The sources the parent's render left out may render the
                // child at head: whether it is deleted is unknown.
                Some(AppStatus::Partial(left_out)) if !gone_at_head(base, head, parent) => {
                    plan.unknown.push(Unknown {
                        app: b.key.clone(),
                        error: crate::render::RenderError::unsupported(format!(
                            "`{}` is no longer rendered by what `{}` renders from this repository, and whether its other sources ({}) render it is not known here",
                            b.spec.name,
                            parent.spec.name,
                            crate::argocd::LeftOut::join(left_out)
                        )),
                    });
                    return;
                }
                Some(AppStatus::Rendered) if !gone_at_head(base, head, parent) => {
                    // The parent prunes the child Application object.
                    let parent_head = head.apps.get(parent_key);
                    let protection = kids
                        .of(parent, &b.spec.name)
                        .and_then(|m| protection_across(m, parent, parent_head, config, kids));
                    let mode = mode_across(parent, parent_head, kids);
                    if parent_head.is_some_and(|h| refused_at_head(parent, h, kids)) {
                        plan.auto_sync_refused.insert(parent_key.clone());
                    }
                    (Some(Manager::App(parent_key.clone())), mode, protection)
                }
                // The parent is gone too: the child goes only if the parent's
                // own deletion cascades to its resources, and then `Delete=false`
                // (not `Prune=false`) on the child Application keeps it.
                _ => match deletion_cascades(cx, parent, 0) {
                    Some(mode) => (
                        Some(Manager::App(parent_key.clone())),
                        mode,
                        kids.of(parent, &b.spec.name)
                            .and_then(|m| cascade_protection(m, parent, config)),
                    ),
                    None => {
                        // Orphaned in the cluster: if its file is still here it
                        // lives on, unmanaged, and syncs as before.
                        if let Some(h) = head.apps.get(&b.key) {
                            let reused = head.reused.contains(&b.key);
                            diff_app(plan, cx, b, h, reused);
                            return;
                        }
                        (None, PruneMode::None, None)
                    }
                },
            }
        }
        Some(Manager::AppSet(set)) => match appset_deletes(base, head, set) {
            SetVerdict::Deletes if finalizer_dropped_for_lost_cluster(&b.object, base, head) => {
                plan.deleted_apps.push(AppDeletion {
                    app: b.key.clone(),
                    deleted_by: Some(Manager::AppSet(set.clone())),
                    cascades: false,
                    mode: PruneMode::Automated,
                    protection: None,
                    resources_known: b.status.renders_here(),
                    left_out: b.status.left_out().to_vec(),
                    note: Some("its destination cluster is gone, so the ApplicationSet controller removes its resources finalizer first: nothing on that cluster is deleted".into()),
                });
                return;
            }
            SetVerdict::Deletes => (
                Some(Manager::AppSet(set.clone())),
                PruneMode::Automated,
                None,
            ),
            SetVerdict::Unknown(why) => {
                plan.unknown.push(Unknown {
                    app: b.key.clone(),
                    error: crate::render::RenderError::unsupported(why),
                });
                return;
            }
            SetVerdict::Keeps(why) => {
                plan.deleted_apps.push(AppDeletion {
                    app: b.key.clone(),
                    deleted_by: None,
                    cascades: false,
                    mode: PruneMode::None,
                    protection: None,
                    resources_known: b.status.renders_here(),
                    left_out: b.status.left_out().to_vec(),
                    note: Some(why),
                });
                return;
            }
        },
    };
    let cascades =
        deleted_by.is_some() && protection.is_none() && b.spec.cascade_finalizer.is_some();
    let resources_known = b.status.renders_here();
    if cascades && resources_known {
        let first = plan.prunes.len();
        for m in b.resources.iter() {
            // CRDs are never deleted on cascade; hooks are not managed resources.
            if m.id.kind == "CustomResourceDefinition"
                || m.hook().is_hook
                || m.has_owner_references()
            {
                continue;
            }
            plan.prunes.push(Prune {
                app: b.key.clone(),
                id: m.id.clone(),
                reason: PruneReason::AppDeleted,
                protection: cascade_protection(m, b, config),
                mode,
                detail: None,
                base: m.clone(),
            });
        }
        hold_for_confirmation(&mut plan.prunes[first..], b, config);
    }
    plan.deleted_apps.push(AppDeletion {
        app: b.key.clone(),
        deleted_by,
        cascades,
        mode,
        protection,
        resources_known,
        left_out: b.status.left_out().to_vec(),
        note: None,
    });
}

/// Whether the ApplicationSet controller removes the resources finalizer
/// of a generated Application before deleting it because its destination
/// cluster is gone: the destination matched a cluster known at base and
/// matches none at head (AC `applicationset_controller.go`
/// `removeFinalizerOnInvalidDestination`: a destination
/// `GetDestinationCluster` cannot resolve, or whose server and name match
/// no listed cluster, loses exactly `resources-finalizer.argocd.argoproj.io`;
/// the `/foreground` and `/background` forms stay). Nothing on that cluster
/// is deleted. A cluster the repository never described is not judged.
#[must_use]
pub(crate) fn finalizer_dropped_for_lost_cluster(
    application: &serde_json::Value,
    base: &Inventory,
    head: &Inventory,
) -> bool {
    let finalizers = application
        .at("/metadata/finalizers")
        .and_then(serde_json::Value::as_array);
    let plain = finalizers.is_some_and(|f| {
        f.iter()
            .any(|f| f.as_str() == Some(crate::argocd::appset::RESOURCES_FINALIZER))
    });
    let field = |f: &str| {
        application
            .at(&format!("/spec/destination/{f}"))
            .and_then(serde_json::Value::as_str)
            .map(|s| s.trim_end_matches('/'))
            .filter(|s| !s.is_empty())
    };
    let (server, name) = (field("server"), field("name"));
    // `ListClusters` always includes the local cluster.
    let local = server == Some("https://kubernetes.default.svc")
        || (server.is_none() && name == Some("in-cluster"));
    let known = |inv: &Inventory| {
        inv.clusters.iter().any(|c| match server {
            Some(s) => c.server.trim_end_matches('/') == s,
            None => name.is_some_and(|n| c.name == n),
        })
    };
    plain && !local && (server.is_some() || name.is_some()) && known(base) && !known(head)
}

/// Whether `app`'s sync prunes with the `orphan` propagation policy, so
/// what a pruned object owns (an ApplicationSet's Applications, through
/// their ownerReferences) is left in place. AC `controller/sync.go`
/// `SyncAppState` picks the policy from the sync options (automated syncs
/// use `syncPolicy.syncOptions`), `background` first, then `foreground`,
/// then `orphan`, foreground when none; GE `sync_context.go`
/// `getDeleteOptions` prunes with it.
fn prunes_orphaning(app: &App) -> bool {
    let o = &app.spec.sync_options;
    o.has("PrunePropagationPolicy=orphan")
        && !o.has("PrunePropagationPolicy=background")
        && !o.has("PrunePropagationPolicy=foreground")
}

/// Why an object's cascade deletion waits for a person: `Delete=confirm`
/// or `Prune=confirm` on it, else in the app's `syncPolicy.syncOptions`
/// (AC `controller/state.go` `isObjRequiresDeletionConfirmation`: each
/// option read from the object first, from the app when it has none).
fn deletion_confirmation(m: &Manifest, app: &App) -> Option<String> {
    let own = m.sync_options();
    ["Delete", "Prune"].into_iter().find_map(|opt| {
        let (value, level) = match own.value(opt) {
            Some(v) => (Some(v), ""),
            None => (app.spec.sync_options.value(opt), " (app)"),
        };
        (value == Some("confirm")).then(|| format!("{opt}=confirm{level}"))
    })
}

/// A cascade that one object to be deleted asks confirmation for holds as
/// a whole: the controller stops before deleting anything until a person
/// confirms the Application's deletion (AC `appcontroller.go`
/// `finalizeApplicationDeletion`: `RequiresDeletionConfirmation` on any
/// object `shouldBeDeleted` keeps, with `IsDeletionConfirmed` false, returns
/// before `DeleteResource`). Once confirmed, everything goes, so each
/// unprotected prune is marked as waiting for confirmation, naming the
/// object that holds it.
fn hold_for_confirmation(prunes: &mut [Prune], app: &App, config: &Config) {
    if !config.argocd_at_least(2, 14) {
        return;
    }
    let holder = prunes
        .iter()
        .filter(|p| p.protection.is_none())
        .find_map(|p| deletion_confirmation(&p.base, app).map(|why| (why, p.id.clone())));
    let Some((why, by)) = holder else { return };
    for p in prunes.iter_mut().filter(|p| p.protection.is_none()) {
        p.protection = Some(if p.id == by || why.ends_with("(app)") {
            why.clone()
        } else {
            format!("{why} on `{by}`")
        });
    }
}

/// How many levels of Applications deleting Applications are followed:
/// far beyond any real app-of-apps, and a bound on a cycle's walk.
pub(crate) const MAX_CASCADE_DEPTH: usize = 16;

/// When a gone app is deleted by something and its deletion cascades to
/// its resources: the prune mode of whatever starts the chain, else `None`
/// (no finalizer, nothing deletes it, or a protection stops a link).
fn deletion_cascades(cx: &Sides<'_>, app: &App, depth: usize) -> Option<PruneMode> {
    let (base, head, config, kids) = (cx.base, cx.head, cx.config, cx.kids);
    if depth > MAX_CASCADE_DEPTH || app.spec.cascade_finalizer.is_none() {
        return None;
    }
    match &app.manager {
        None => None,
        Some(Manager::AppSet(set)) => {
            matches!(appset_deletes(base, head, set), SetVerdict::Deletes)
                .then_some(PruneMode::Automated)
        }
        Some(Manager::App(parent_key)) => {
            let parent = base.apps.get(parent_key)?;
            let obj = kids.of(parent, &app.spec.name);
            if gone_at_head(base, head, parent) {
                if obj
                    .and_then(|m| cascade_protection(m, parent, config))
                    .is_some()
                {
                    return None;
                }
                return deletion_cascades(cx, parent, depth + 1);
            }
            let parent_head = head.apps.get(parent_key);
            let renders = parent_head.is_some_and(|p| matches!(p.status, AppStatus::Rendered));
            let protected = obj
                .and_then(|m| protection_across(m, parent, parent_head, config, kids))
                .is_some();
            (renders && !protected).then_some(mode_across(parent, parent_head, kids))
        }
    }
}

/// What the ApplicationSet controller does with an Application it no longer generates.
enum SetVerdict {
    Deletes,
    Unknown(String),
    Keeps(String),
}

fn appset_deletes(base: &Inventory, head: &Inventory, set_key: &str) -> SetVerdict {
    let name = short_key(set_key);
    let Some(entry) = head.appsets.get(set_key) else {
        return appset_removed(base, head, set_key, name);
    };
    match &entry.expansion {
        // The controller stops on an error: nothing is created or deleted.
        Err(e) => SetVerdict::Keeps(format!(
            "ApplicationSet `{name}` fails to expand at head ({e}), so the controller deletes nothing until it is fixed"
        )),
        Ok(exp) if !exp.is_complete() => SetVerdict::Unknown(format!(
            "ApplicationSet `{name}` has generators that cannot be evaluated offline ({})",
            exp.unresolved.join("; ")
        )),
        Ok(exp) if !exp.policy.allows_delete => SetVerdict::Keeps(format!(
            "ApplicationSet `{name}` policy `{}` does not delete Applications it no longer generates",
            exp.policy.applications_sync
        )),
        Ok(_) => SetVerdict::Deletes,
    }
}

/// The ApplicationSet itself is gone: its Applications are garbage collected
/// through their ownerReferences, if something deletes it.
fn appset_removed(base: &Inventory, head: &Inventory, set_key: &str, name: &str) -> SetVerdict {
    let Some(entry) = base.appsets.get(set_key) else {
        return SetVerdict::Keeps(format!("ApplicationSet `{name}` is not known at base"));
    };
    if let Some(f) = &entry.origin.file {
        if head.broken_files.contains_key(f) {
            return SetVerdict::Unknown(format!(
                "`{f}` declaring ApplicationSet `{name}` does not parse at head"
            ));
        }
    }
    let Some(Manager::App(parent)) = &entry.manager else {
        return SetVerdict::Keeps(format!(
            "ApplicationSet `{name}` is removed from git but nothing manages it, so Argo CD keeps it and its Applications"
        ));
    };
    match head.apps.get(parent).map(|p| &p.status) {
        Some(AppStatus::Rendered) => {
            let set_name = entry
                .object
                .at("/metadata/name")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("");
            let protected = base
                .apps
                .get(parent)
                .and_then(|p| {
                    p.resources.iter().find(|m| {
                        crate::argocd::is_application_set(&m.value) && m.id.name == set_name
                    })
                })
                .is_some_and(|m| m.sync_options().prune_disabled());
            let parent_base = base.apps.get(parent);
            let parent_head = head.apps.get(parent);
            let orphans = parent_base.is_some_and(prunes_orphaning)
                && parent_head.is_none_or(|h| {
                    !applied_from_git(h, &ChildApps::default()) || prunes_orphaning(h)
                });
            if protected {
                SetVerdict::Keeps(format!("ApplicationSet `{name}` is no longer rendered, but `Prune=false` on it keeps it"))
            } else if orphans {
                SetVerdict::Keeps(format!(
                    "ApplicationSet `{name}` is pruned by `{}` with `PrunePropagationPolicy=orphan`, which leaves the Applications it owns in place, unmanaged",
                    short_key(parent)
                ))
            } else {
                SetVerdict::Deletes
            }
        }
        Some(AppStatus::Unrendered(e)) => SetVerdict::Unknown(e.message.clone()),
        Some(AppStatus::Partial(left_out)) => SetVerdict::Unknown(format!(
            "ApplicationSet `{name}` is no longer rendered by what `{}` renders from this repository, and whether its other sources ({}) render it is not known here",
            short_key(parent),
            crate::argocd::LeftOut::join(left_out)
        )),
        _ => SetVerdict::Keeps(format!(
            "ApplicationSet `{name}` is removed from git, but what managed it does not prune it"
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::{json, Value};

    use super::*;
    use crate::argocd::AppSpec;
    use crate::manifest::{manifest_from_value, Origin, Scopes};
    use crate::render::RenderError;

    fn pvc(name: &str, options: Option<&str>) -> Value {
        let mut v = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": name}});
        if let Some(o) = options {
            v["metadata"]["annotations"] = json!({"argocd.argoproj.io/sync-options": o});
        }
        v
    }

    fn application(name: &str, finalizer: bool, automated: bool, options: &[&str]) -> Value {
        let mut v = json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": name, "namespace": "argocd"},
            "spec": {"source": {"repoURL": "https://git.example.com/gitops.git", "path": name},
                     "destination": {"namespace": name},
                     "syncPolicy": {"syncOptions": options}}});
        if finalizer {
            v["metadata"]["finalizers"] = json!(["resources-finalizer.argocd.argoproj.io"]);
        }
        if automated {
            v["spec"]["syncPolicy"]["automated"] = json!({"prune": true});
        }
        v
    }

    /// An app rendered from `docs`: each inner list is one file, each value a document.
    fn app(object: Value, manager: Option<&str>, files: &[&[Value]]) -> App {
        let spec = AppSpec::parse(&object).expect("an Application");
        let mut resources = Vec::new();
        for (f, docs) in files.iter().enumerate() {
            for (d, v) in docs.iter().enumerate() {
                let origin = Origin {
                    file: Some(format!("{}/{f}.yaml", spec.name)),
                    line: Some(1),
                    doc_index: Some(d),
                };
                resources.push(
                    manifest_from_value(
                        v.clone(),
                        origin,
                        &spec.dest_namespace,
                        &Scopes::default(),
                    )
                    .expect("a valid object"),
                );
            }
        }
        App {
            key: format!("argocd/{}", spec.name),
            instance: None,
            origin: Origin {
                file: Some(format!("apps/{}.yaml", spec.name)),
                line: Some(1),
                doc_index: Some(0),
            },
            spec: Arc::new(spec),
            object: Arc::new(object.into()),
            manager: manager.map(|m| Manager::App(format!("argocd/{m}"))),
            status: AppStatus::Rendered,
            resources: resources.into(),
            inputs: Arc::default(),
            source_types: Vec::new(),
            plugins: Vec::new(),
            implicit: false,
        }
    }

    fn inventory(apps: Vec<App>) -> Inventory {
        Inventory {
            apps: apps.into_iter().map(|a| (a.key.clone(), a)).collect(),
            ..Inventory::default()
        }
    }

    fn reasons(plan: &Plan) -> Vec<(String, String, PruneReason)> {
        plan.prunes
            .iter()
            .map(|p| (p.app.clone(), p.id.name.clone(), p.reason))
            .collect()
    }

    #[test]
    fn recreates_pair_only_what_is_certain() {
        let deploy = |name: &str, ns: Option<&str>| {
            let mut v =
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}});
            if let Some(ns) = ns {
                v["metadata"]["namespace"] = json!(ns);
            }
            v
        };
        let a = application("web", false, true, &[]);
        let pairs = |base: &[Value], head: &[Value]| -> Vec<(String, String)> {
            let b = inventory(vec![app(a.clone(), None, &[base])]);
            let h = inventory(vec![app(a.clone(), None, &[head])]);
            plan(&b, &h, &Config::default())
                .recreates()
                .into_iter()
                .map(|r| (r.deleted.to_string(), r.created.to_string()))
                .collect()
        };
        // Same name, another namespace.
        assert_eq!(
            pairs(&[deploy("api", Some("a"))], &[deploy("api", Some("b"))]),
            vec![("Deployment a/api".into(), "Deployment b/api".into())]
        );
        // One prune and one creation of the kind in a namespace.
        assert_eq!(
            pairs(&[deploy("api", None)], &[deploy("api-v2", None)]),
            vec![("Deployment web/api".into(), "Deployment web/api-v2".into())]
        );
        // Two of each: which replaces which is a guess, so nothing is paired.
        assert!(pairs(
            &[deploy("api", None), deploy("worker", None)],
            &[deploy("api-v2", None), deploy("worker-v2", None)]
        )
        .is_empty());
        // A pruned object another kept one does not replace.
        assert!(pairs(
            &[deploy("api", None), deploy("old", None)],
            &[deploy("api", None)]
        )
        .is_empty());
        // Two of one name leave for a third namespace: which one moved is a guess.
        assert!(pairs(
            &[deploy("api", Some("a")), deploy("api", Some("c"))],
            &[deploy("api", Some("b"))]
        )
        .is_empty());
        // A creation paired with a move is not also another prune's replacement.
        assert_eq!(
            pairs(
                &[deploy("api", Some("a")), deploy("old", Some("b"))],
                &[deploy("api", Some("b"))]
            ),
            vec![("Deployment a/api".into(), "Deployment b/api".into())]
        );
    }

    #[test]
    fn an_apps_prunes_are_found_as_a_run_of_the_sorted_plan() {
        let a = |name: &str| application(name, false, true, &[]);
        let claims =
            |names: &[&str]| -> Vec<Value> { names.iter().map(|n| pvc(n, None)).collect() };
        let base = inventory(vec![
            app(a("web"), None, &[&claims(&["w1", "w2"])]),
            app(a("api"), None, &[&claims(&["a2", "a1", "kept"])]),
            app(a("db"), None, &[&claims(&["kept"])]),
        ]);
        let head = inventory(vec![
            app(a("web"), None, &[]),
            app(a("api"), None, &[&claims(&["kept"])]),
            app(a("db"), None, &[&claims(&["kept"])]),
        ]);
        let p = plan(&base, &head, &Config::default());
        let names = |key: &str| -> Vec<&str> {
            p.prunes_of(key)
                .iter()
                .map(|x| x.id.name.as_str())
                .collect()
        };
        assert_eq!(names("argocd/api"), ["a1", "a2"]);
        assert_eq!(names("argocd/web"), ["w1", "w2"]);
        assert!(names("argocd/db").is_empty() && names("argocd/gone").is_empty());
        let w2 = &p
            .prunes
            .iter()
            .find(|x| x.id.name == "w2")
            .expect("w2 is pruned")
            .id;
        assert_eq!(
            p.prune_of("argocd/web", w2).map(|x| x.app.as_str()),
            Some("argocd/web")
        );
        assert!(
            p.prune_of("argocd/api", w2).is_none(),
            "another app's prune"
        );
    }

    #[test]
    fn a_childs_object_is_the_first_application_of_its_name_the_parent_renders() {
        let mut first = application("db", true, true, &[]);
        first["metadata"]["namespace"] = json!("team-a");
        let second = application("db", false, true, &[]);
        let parent = app(
            application("root", false, true, &[]),
            None,
            &[&[
                pvc("db", None),
                first,
                second,
                application("web", true, true, &[]),
            ]],
        );
        let kids = ChildApps::default();
        let db = kids.of(&parent, "db").expect("root renders db");
        assert_eq!(db.id.namespace, "team-a");
        assert_eq!(
            kids.of(&parent, "web").map(|m| m.id.name.as_str()),
            Some("web")
        );
        assert!(kids.of(&parent, "api").is_none());
        assert!(kids.of(&parent, "db").is_some_and(|m| std::ptr::eq(m, db)));
    }

    #[test]
    fn a_rename_needs_a_name_that_is_new() {
        let a = application("db", false, true, &[]);
        let base = inventory(vec![app(
            a.clone(),
            None,
            &[&[pvc("scratch", None), pvc("archive", None)]],
        )]);
        let shifted = inventory(vec![app(a.clone(), None, &[&[pvc("archive", None)]])]);
        let p = plan(&base, &shifted, &Config::default());
        assert_eq!(
            reasons(&p),
            vec![("argocd/db".into(), "scratch".into(), PruneReason::Removed)]
        );
        let renamed = inventory(vec![app(
            a,
            None,
            &[&[pvc("scratch-v2", None), pvc("archive", None)]],
        )]);
        let p = plan(&base, &renamed, &Config::default());
        assert_eq!(p.prunes[0].reason, PruneReason::Renamed);
        assert_eq!(p.prunes[0].detail.as_deref(), Some("scratch-v2"));
    }

    #[test]
    fn the_managed_namespace_is_kept_only_while_the_spec_in_force_manages_it() {
        let ns = |name: &str| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
        let managed = |on: bool| {
            let mut a = application("db", false, true, &["CreateNamespace=true"]);
            if on {
                a["spec"]["syncPolicy"]["managedNamespaceMetadata"] =
                    json!({"labels": {"team": "db"}});
            }
            a
        };
        let pruned = |b: bool, h: bool, manager: Option<&str>, name: &str| {
            let base = inventory(vec![app(
                managed(b),
                manager,
                &[&[ns(name), pvc("data", None)]],
            )]);
            let head = inventory(vec![app(managed(h), manager, &[&[pvc("data", None)]])]);
            !plan(&base, &head, &Config::default()).prunes.is_empty()
        };
        assert!(!pruned(true, true, None, "db"));
        assert!(
            pruned(false, false, None, "db"),
            "CreateNamespace=true alone keeps nothing"
        );
        assert!(
            pruned(true, true, None, "other"),
            "only the destination namespace is synthesised"
        );
        assert!(
            !pruned(true, false, None, "db"),
            "an Application applied by hand keeps its base spec in the cluster"
        );
        assert!(
            pruned(true, false, Some("root"), "db"),
            "a parent may apply the head spec, without the metadata, before the app syncs"
        );
        assert!(pruned(false, true, Some("root"), "db"));
    }

    #[test]
    fn a_field_filled_with_random_values_is_no_change() {
        let secret = |password: &str, user: &str| {
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "db"},
                   "stringData": {"password": password, "user": user}})
        };
        let changed = |b: (&str, &str), h: (&str, &str), generated: bool| {
            let a = application("db", false, true, &[]);
            let mut base = app(a.clone(), None, &[&[secret(b.0, b.1)]]);
            let mut head = app(a, None, &[&[secret(h.0, h.1)]]);
            if generated {
                let (b, h) = (&mut base.resources, &mut head.resources);
                for m in Arc::make_mut(b).iter_mut().chain(Arc::make_mut(h)) {
                    m.generated = Arc::from(vec!["/stringData/password".to_string()]);
                }
            }
            let p = plan(
                &inventory(vec![base]),
                &inventory(vec![head]),
                &Config::default(),
            );
            p.changes
                .get("argocd/db")
                .is_some_and(|c| c.changed.iter().any(|id| id.name == "db"))
        };
        assert!(!changed(("x1", "app"), ("y2", "app"), true));
        assert!(changed(("x1", "app"), ("y2", "app"), false));
        assert!(
            changed(("x1", "app"), ("y2", "web"), true),
            "what else changes still does"
        );
    }

    #[test]
    fn a_resource_prune_option_overrides_the_app_level_one() {
        let a = application("db", false, true, &["Prune=false"]);
        let files: &[&[Value]] = &[&[pvc("plain", None), pvc("forced", Some("Prune=true"))]];
        let base = inventory(vec![app(a.clone(), None, files)]);
        let head = inventory(vec![app(a, None, &[])]);
        let p = plan(&base, &head, &Config::default());
        let prot: Vec<(&str, Option<&str>)> = p
            .prunes
            .iter()
            .map(|p| (p.id.name.as_str(), p.protection.as_deref()))
            .collect();
        assert_eq!(
            prot,
            vec![("forced", None), ("plain", Some("Prune=false (app)"))]
        );
        let old = Config {
            argocd_version: (3, 3),
            ..Config::default()
        };
        let p = plan(&base, &head, &old);
        assert!(
            p.prunes.iter().all(|p| p.protection.is_none()),
            "app-level Prune=false needs Argo CD 3.4"
        );
    }

    /// root (manual prune) renders platform, platform renders db. The change
    /// removes platform from root; db's file stays in the repository.
    fn nested(platform_finalizer: bool, db_options: Option<&str>) -> (Inventory, Inventory) {
        let root = application("root", false, false, &[]);
        let platform = application("platform", platform_finalizer, true, &[]);
        let mut db = application("db", true, true, &[]);
        if let Some(o) = db_options {
            db["metadata"]["annotations"] = json!({"argocd.argoproj.io/sync-options": o});
        }
        let data: &[&[Value]] = &[&[pvc("data", None)]];
        let base = inventory(vec![
            app(root.clone(), None, &[std::slice::from_ref(&platform)]),
            app(platform, Some("root"), &[&[db.clone()]]),
            app(db.clone(), Some("platform"), data),
        ]);
        let head = inventory(vec![app(root, None, &[]), app(db, None, data)]);
        (base, head)
    }

    #[test]
    fn a_cascade_follows_every_level_with_the_mode_of_what_starts_it() {
        let (base, head) = nested(true, None);
        let p = plan(&base, &head, &Config::default());
        let db = p
            .deleted_apps
            .iter()
            .find(|d| d.app == "argocd/db")
            .expect("db is deleted with platform");
        assert!(db.cascades);
        assert_eq!(db.deleted_by, Some(Manager::App("argocd/platform".into())));
        assert_eq!(
            db.mode,
            PruneMode::Manual,
            "root prunes platform only when a person syncs it"
        );
        assert!(reasons(&p).contains(&(
            "argocd/db".into(),
            "data".into(),
            PruneReason::AppDeleted
        )));
    }

    #[test]
    fn delete_false_on_the_child_application_stops_the_chain() {
        let (base, head) = nested(true, Some("Delete=false"));
        let p = plan(&base, &head, &Config::default());
        let db = p.deleted_apps.iter().find(|d| d.app == "argocd/db");
        assert!(db.is_none_or(|d| !d.cascades), "{db:?}");
        assert!(!p.prunes.iter().any(|x| x.app == "argocd/db"));
    }

    #[test]
    fn prune_false_on_the_child_application_does_not_stop_a_cascade() {
        let (base, head) = nested(true, Some("Prune=false"));
        let p = plan(&base, &head, &Config::default());
        assert!(reasons(&p).contains(&(
            "argocd/db".into(),
            "data".into(),
            PruneReason::AppDeleted
        )));
    }

    #[test]
    fn a_parent_deleted_without_finalizer_orphans_the_child_which_lives_on() {
        let (base, head) = nested(false, None);
        let p = plan(&base, &head, &Config::default());
        assert!(!p.deleted_apps.iter().any(|d| d.app == "argocd/db"));
        assert!(!p.prunes.iter().any(|x| x.app == "argocd/db"));
    }

    #[test]
    fn a_child_of_a_parent_that_fails_at_head_is_unknown_not_deleted() {
        let root = application("root", false, true, &[]);
        let child = application("child", true, true, &[]);
        let base = inventory(vec![
            app(root.clone(), None, &[std::slice::from_ref(&child)]),
            app(child, Some("root"), &[&[pvc("data", None)]]),
        ]);
        let mut failed = app(root, None, &[]);
        failed.status = AppStatus::Unrendered(RenderError::content("broken"));
        let head = inventory(vec![failed]);
        let p = plan(&base, &head, &Config::default());
        assert!(p.deleted_apps.is_empty() && p.prunes.is_empty());
        let unknown: Vec<&str> = p.unknown.iter().map(|u| u.app.as_str()).collect();
        assert_eq!(unknown, vec!["argocd/child", "argocd/root"]);
    }
}
