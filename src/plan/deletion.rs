//! An Application gone at head: what deletes it, and whether that deletion
//! cascades to what it manages.

use crate::argocd::{App, AppStatus, Inventory, Manager, PruneMode};
use crate::config::Config;
use crate::manifest::Manifest;
use goyaml::json::Pointer as _;

use super::diff::diff_app;
use super::managers::{appset_deletes, gone_at_head, unrendered_owner, SetVerdict};
use super::protection::{cascade_protection, mode_across, protection_across, refused_at_head};
use super::{AppDeletion, Plan, Prune, PruneReason, Sides, Unknown};

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
pub(super) fn deleted_with_parent(cx: &Sides<'_>, b: &App) -> bool {
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
pub(super) fn delete_app(plan: &mut Plan, cx: &Sides<'_>, b: &App) {
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
