//! Analyses shared by several rules: what a pod template references, which
//! objects controllers create from custom resources, how a sync orders and
//! health-gates its tasks, and what a hook's commands and SQL do.

pub(crate) mod generated;
pub(crate) mod hook_work;
pub(crate) mod podspec;
pub(crate) mod shell;
pub(crate) mod sql;
pub(crate) mod sync_steps;
#[cfg(test)]
pub(crate) mod testutil;

use crate::argocd::{App, AppStatus};
use crate::finding::{Finding, Side};
use crate::manifest::Manifest;

use super::RuleContext;

/// Head resources a single-revision rule reports on: every resource of every
/// rendered app, narrowed to what the change touched in `diff` without `--all`.
pub(crate) fn scoped_resources<'a>(
    cx: &'a RuleContext<'a>,
) -> impl Iterator<Item = (&'a App, &'a Manifest)> + 'a {
    rendered_apps(cx).flat_map(move |app| {
        app.resources
            .iter()
            .filter(move |m| cx.in_scope(&app.key, &m.id))
            .map(move |m| (app, m))
    })
}

/// Apps rendered at head.
pub(crate) fn rendered_apps<'a>(cx: &'a RuleContext<'a>) -> impl Iterator<Item = &'a App> + 'a {
    cx.head
        .apps
        .values()
        .filter(|a| matches!(a.status, AppStatus::Rendered))
}

/// The ApplicationSet `namespace/name` as a finding's resource: its
/// identity, so moving its file does not make an old finding new.
#[must_use]
pub(crate) fn appset_resource(key: &str) -> crate::manifest::ResourceId {
    let (namespace, name) = key.split_once('/').unwrap_or(("argocd", key));
    crate::manifest::ResourceId {
        group: "argoproj.io".into(),
        kind: "ApplicationSet".into(),
        namespace: namespace.into(),
        name: name.into(),
    }
}

/// Attaches app, resource and head location of `m` to a finding.
#[must_use]
pub(crate) fn at_resource(f: Finding, app: &App, m: &Manifest) -> Finding {
    f.app(app.display_name()).resource(m.id.clone()).at(
        Side::Head,
        m.origin.file.as_deref(),
        m.origin.line,
    )
}

/// Like [`at_resource`], pointing at a field of the resource's document
/// (the report turns it into a line).
#[must_use]
pub(crate) fn at_field(f: Finding, app: &App, m: &Manifest, path: &[&str]) -> Finding {
    at_resource(f, app, m).field(m.origin.doc_index, path)
}

/// Whether the Application object itself is new or changed at head (for
/// rules about app-level settings in `diff` mode).
#[must_use]
pub(crate) fn app_in_scope(cx: &RuleContext<'_>, app: &App) -> bool {
    if !cx.only_changed || cx.plan.is_none() {
        return true;
    }
    cx.base
        .and_then(|b| b.apps.get(&app.key))
        .is_none_or(|b| b.object != app.object)
}
