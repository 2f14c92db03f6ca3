//! Comparing two inventories: per app the resources a sync would prune,
//! create and change; Applications deleted and whether that cascades.
//!
//! Knows nothing of rules or output formats.

mod deletion;
mod diff;
mod managers;
mod protection;

pub(crate) use deletion::{finalizer_dropped_for_lost_cluster, MAX_CASCADE_DEPTH};
pub(crate) use diff::namespace_missing;
pub(crate) use protection::{app_prunes, cascade_protection, is_prunable, prune_protection};

use deletion::{delete_app, deleted_with_parent};
use diff::diff_app;
use managers::{appset_deletes, left_its_appset, unmanaged_at_head, SetVerdict};

use goyaml::json::Pointer as _;
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use serde::Serialize;

use crate::argocd::resource_filter::{Exclusion, ResourcesFilter};
use crate::argocd::tracking::Tracking;
use crate::argocd::{apps_beside, App, AppStatus, Inventory, Manager, PruneMode};
use crate::config::Config;
use crate::manifest::{Manifest, ResourceId};
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
    /// The base apps that failed to render, for [`managers::unrendered_owner`].
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

#[cfg(test)]
mod tests;
