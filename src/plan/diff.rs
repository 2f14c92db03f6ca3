//! Comparing one app present at both revisions: what a sync prunes,
//! creates and changes, and why.

use crate::argocd::{App, AppStatus};
use crate::manifest::{Manifest, ResourceId, Scope, Scopes};
use crate::source::{FastMap, FastSet};
use goyaml::json::Pointer as _;

use super::protection::{
    app_prunes, keeps_managed_namespace, mode_across, protection_across, refused_at_head,
    scope_decides,
};
use super::{AppChanges, HeadOwners, Plan, Prune, PruneReason, Sides, Unknown};

pub(super) fn diff_app(plan: &mut Plan, cx: &Sides<'_>, b: &App, h: &App, reused: bool) {
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
