//! What keeps an object from being pruned or deleted with its app, and
//! which of the base and head Application specs decides that.

use crate::argocd::tracking::Tracking;
use crate::argocd::{App, AppStatus, PruneMode};
use crate::config::Config;
use crate::manifest::{Manifest, Scope, Scopes, ANN_HELM_RESOURCE_POLICY};
use goyaml::json::Pointer as _;

use super::ChildApps;

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
pub(super) fn protection_across(
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
pub(super) fn applied_from_git(app: &App, kids: &ChildApps) -> bool {
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
pub(super) fn mode_across(b: &App, h: Option<&App>, kids: &ChildApps) -> PruneMode {
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
pub(super) fn refused_at_head(b: &App, h: &App, kids: &ChildApps) -> bool {
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
pub(super) fn keeps_managed_namespace(m: &Manifest, b: &App, h: &App, kids: &ChildApps) -> bool {
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
pub(super) fn scope_decides(m: &Manifest, h: &App, scopes: &[&Scopes; 2]) -> bool {
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
