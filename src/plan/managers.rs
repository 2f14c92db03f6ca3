//! What an app's manager, a parent app or an ApplicationSet, does with it
//! at head: still renders it, lets it go, or deletes it.

use crate::argocd::instances::short_key;
use crate::argocd::{App, AppStatus, Inventory, Manager};
use goyaml::json::Pointer as _;

use super::protection::applied_from_git;
use super::ChildApps;

/// Whether an app managed by a parent at base is still declared in a file at
/// head but no parent renders it any more. Only what an app renders exists
/// in the cluster: a file nothing applies is just a file, so the parent
/// prunes the child (or deletes it with itself). When the parent cannot be
/// rendered at head, or is external, nothing can be said and the file wins.
pub(super) fn unmanaged_at_head(base: &Inventory, head: &Inventory, b: &App, h: &App) -> bool {
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
pub(super) fn left_its_appset(base: &Inventory, head: &Inventory, b: &App, h: &App) -> bool {
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
pub(super) fn gone_at_head(base: &Inventory, head: &Inventory, b: &App) -> bool {
    match head.apps.get(&b.key) {
        None => true,
        Some(h) => unmanaged_at_head(base, head, b, h),
    }
}

/// The render error of a base app that failed to render and whose source
/// path holds the file declaring `b`: whether it manages `b` is unknown.
pub(super) fn unrendered_owner<'a>(
    unrendered: &[&'a App],
    b: &App,
) -> Option<&'a crate::render::RenderError> {
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

/// What the ApplicationSet controller does with an Application it no longer generates.
pub(super) enum SetVerdict {
    Deletes,
    Unknown(String),
    Keeps(String),
}

pub(super) fn appset_deletes(base: &Inventory, head: &Inventory, set_key: &str) -> SetVerdict {
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
