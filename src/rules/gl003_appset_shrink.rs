//! GL003 appset-shrink: an ApplicationSet that stops generating an
//! Application (a shrinking generator, or a renamed generated name) makes
//! the controller delete it, and with the default finalizer its resources.

use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::argocd::appset::{AppSetPolicy, Expansion, PolicySource};
use crate::argocd::instances::short_key;
use crate::argocd::{AppSetEntry, Manager};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity, Side};

/// See `rules/GL003-appset-shrink.md`.
pub(crate) struct AppSetShrink;

static META: RuleMeta = RuleMeta {
    code: "GL003",
    name: "appset-shrink",
    category: Category::Deletion,
    default_severity: Severity::Error,
    severity_note: "warning when the Application has no resources finalizer; info when the policy keeps it or the generators cannot all be evaluated",
    mode: Mode::Diff,
    doc: include_str!("../../rules/GL003-appset-shrink.md"),
    suppression: Suppression::CHANGE,
};

/// How the effective policy is described in messages.
fn policy_text(p: &AppSetPolicy) -> String {
    match p.decided_by {
        PolicySource::Controller => format!("the controller's `--policy={}`", p.applications_sync),
        PolicySource::ApplicationSet => format!("`applicationsSync: {}`", p.applications_sync),
        PolicySource::Default => "the default policy `sync`".to_string(),
    }
}

impl Rule for AppSetShrink {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        let Some(base) = cx.base else { return };
        for (key, h) in &cx.head.appsets {
            let Some(b) = base.appsets.get(key) else {
                continue;
            };
            let at = |f: Finding| f.at(Side::Head, h.origin.file.as_deref(), h.origin.line);
            let set = short_key(key);
            match (&b.expansion, &h.expansion) {
                // A failure at head deletes nothing; GL018 reports it.
                (Err(e), Ok(_)) if b.object != h.object => {
                    out.push(at(Finding::new(&META, format!(
                        "ApplicationSet `{set}` could not be expanded at base ({e}): which Applications exist now is unknown, so what this change deletes is unknown"
                    )))
                    .severity(Severity::Info));
                }
                (Ok(bx), Ok(hx)) => shrink(&META, set, h, bx, hx, cx, out),
                _ => {}
            }
        }
        removed(cx, out);
    }
}

/// ApplicationSets the head no longer has, which the app that rendered them
/// prunes: the Applications they generated are garbage collected through
/// their ownerReferences (Kubernetes' garbage collector; the
/// ApplicationSet controller sets the owner, AC
/// `applicationset/controllers/applicationset_controller.go`
/// `createOrUpdateInCluster`), each with its finalizer. One finding per
/// set, naming the Applications the plan finds deleted with it.
fn removed(cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
    let (Some(base), Some(plan)) = (cx.base, cx.plan) else {
        return;
    };
    for (key, b) in &base.appsets {
        if cx.head.appsets.contains_key(key) {
            continue;
        }
        let Some(Manager::App(parent)) = &b.manager else {
            continue;
        };
        let by_set = Some(Manager::AppSet(key.clone()));
        let gone: Vec<_> = plan
            .deleted_apps
            .iter()
            .filter(|d| d.deleted_by == by_set)
            .collect();
        if gone.is_empty() {
            continue;
        }
        let names: Vec<String> = gone
            .iter()
            .map(|d| format!("`{}`", short_key(&d.app)))
            .collect();
        let cascading = gone.iter().filter(|d| d.cascades).count();
        let set = short_key(key);
        let (severity, tail) = if cascading > 0 {
            (
                Severity::Error,
                format!(
                    ", {cascading} of them with the resources finalizer, deleting every resource they manage"
                ),
            )
        } else {
            (
                Severity::Warning,
                ", without the resources finalizer: their resources are orphaned (left running, unmanaged)".to_string(),
            )
        };
        out.push(
            Finding::new(
                &META,
                format!(
                    "ApplicationSet `{set}` is no longer rendered by app `{}`, which prunes it: the {} Application(s) it generates are deleted with it ({}){tail}",
                    short_key(parent),
                    gone.len(),
                    names.join(", ")
                ),
            )
            .severity(severity)
            .at(Side::Base, b.origin.file.as_deref(), b.origin.line)
            .help("keep the ApplicationSet rendered until its workloads are moved, or first merge `preserveResourcesOnDeletion: true` in it"),
        );
    }
}

fn shrink(
    meta: &'static RuleMeta,
    set: &str,
    h: &AppSetEntry,
    bx: &Expansion,
    hx: &Expansion,
    cx: &RuleContext<'_>,
    out: &mut Vec<Finding>,
) {
    let head_names = hx.names();
    let base_names = bx.names();
    let gone: Vec<_> = bx
        .apps
        .iter()
        .filter(|a| !head_names.contains(a.name()))
        .collect();
    if gone.is_empty() {
        return;
    }
    let at = |f: Finding| f.at(Side::Head, h.origin.file.as_deref(), h.origin.line);
    if !hx.is_complete() {
        // The plan already reports these apps as unknown (GL000); name the rest.
        let unknown_in_plan = |name: &str| {
            cx.plan.is_some_and(|p| {
                p.unknown
                    .iter()
                    .any(|u| u.app.rsplit('/').next() == Some(name))
            })
        };
        let names: Vec<String> = gone
            .iter()
            .filter(|a| !unknown_in_plan(a.name()))
            .map(|a| format!("`{}`", a.name()))
            .collect();
        if names.is_empty() {
            return;
        }
        out.push(
            at(Finding::new(
                meta,
                format!(
                    "ApplicationSet `{set}` no longer generates {} from its evaluable generators, but whether it deletes them is unknown: {}",
                    names.join(", "),
                    hx.unresolved.join("; ")
                ),
            ))
            .severity(Severity::Info),
        );
        return;
    }
    let policy = &hx.policy;
    for app in gone {
        let name = app.name();
        // The same element, directory or file still generates an app, under another name.
        let renamed = hx
            .apps
            .iter()
            .find(|n| n.provenance == app.provenance && !base_names.contains(n.name()));
        let cause = match renamed {
            Some(n) => format!(
                "{} now generates `{}` instead: a rename is a delete and a create",
                app.provenance,
                n.name()
            ),
            None => format!("{} is gone at head", app.provenance),
        };
        let (severity, message, help) = if !policy.allows_delete {
            (
                Severity::Info,
                format!(
                    "ApplicationSet `{set}` no longer generates Application `{name}` ({cause}); {} does not delete it: it stays as it was, and Argo CD keeps syncing it from git",
                    policy_text(policy)
                ),
                None,
            )
        } else if cx.base.is_some_and(|b| {
            crate::plan::finalizer_dropped_for_lost_cluster(&app.application, b, cx.head)
        }) {
            (
                Severity::Info,
                format!(
                    "ApplicationSet `{set}` no longer generates Application `{name}` ({cause}): its destination cluster is gone too, so the controller removes its resources finalizer before deleting it, and nothing on that cluster is deleted"
                ),
                Some("if that cluster still runs, delete its workloads there deliberately; Argo CD no longer manages them".to_string()),
            )
        } else if app.cascades() {
            (
                Severity::Error,
                format!(
                    "ApplicationSet `{set}` no longer generates Application `{name}` ({cause}): under {} the controller deletes it with the resources finalizer, and every resource it manages with it",
                    policy_text(policy)
                ),
                Some(format!(
                    "keep `{name}` generated until its workloads are moved, or first merge `spec.syncPolicy.applicationsSync: create-update` (if the controller allows policy override) or `preserveResourcesOnDeletion: true`"
                )),
            )
        } else {
            (
                Severity::Warning,
                format!(
                    "ApplicationSet `{set}` no longer generates Application `{name}` ({cause}): the controller deletes it; it has no resources finalizer, so its resources are orphaned (left running, unmanaged)"
                ),
                Some("delete the workloads deliberately if they should go; keep the Application generated if they should stay".to_string()),
            )
        };
        let mut f = at(Finding::new(meta, message))
            .app(name.to_string())
            .severity(severity);
        if let Some(h) = help {
            f = f.help(h);
        }
        out.push(f);
    }
}
