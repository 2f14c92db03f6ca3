//! GL002 app-cascade-delete: an Application deleted with the resources
//! finalizer takes every resource with it; one that nothing manages deletes nothing.

use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::argocd::instances::short_key;
use crate::argocd::{Manager, PruneMode};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity, Side};
use crate::plan::PruneReason;
use goyaml::json::Pointer as _;

/// See `rules/GL002-app-cascade-delete.md`.
pub(crate) struct AppCascadeDelete;

static META: RuleMeta = RuleMeta {
    code: "GL002",
    name: "app-cascade-delete",
    category: Category::Deletion,
    default_severity: Severity::Error,
    severity_note: "warning when only a manual sync deletes; info when the Application has no resources finalizer",
    mode: Mode::Diff,
    doc: include_str!("../../rules/GL002-app-cascade-delete.md"),
    suppression: Suppression::CHANGE,
};

/// Core-group kinds whose deletion loses data or everything inside them.
const STATEFUL_CORE: [&str; 3] = ["PersistentVolumeClaim", "PersistentVolume", "Namespace"];

impl Rule for AppCascadeDelete {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        let (Some(plan), Some(base)) = (cx.plan, cx.base) else {
            return;
        };
        for d in &plan.deleted_apps {
            let Some(app) = base.apps.get(&d.app) else {
                continue;
            };
            // Applications an ApplicationSet stops generating are GL003's.
            if matches!(app.manager, Some(Manager::AppSet(_))) {
                continue;
            }
            let name = app.display_name();
            let at = |f: Finding| {
                f.app(name.clone())
                    .at(Side::Base, app.origin.file.as_deref(), app.origin.line)
            };
            let Some(by) = &d.deleted_by else {
                if app.implicit {
                    continue;
                }
                if let Some(note) = &d.note {
                    out.push(
                        at(Finding::new(&META, format!("Application `{name}` is no longer generated, but it is not deleted: {note}")))
                            .severity(Severity::Info),
                    );
                    continue;
                }
                out.push(at(Finding::new(
                    &META,
                    format!("Application `{name}` is removed from git but nothing manages it, so Argo CD keeps it and its resources: this change deletes nothing"),
                ))
                .severity(Severity::Info)
                .help("delete it in Argo CD (`argocd app delete`) if it should go; choose `--cascade=false` to keep its resources"));
                continue;
            };
            let by_text = match by {
                // Agree with GL001 and GL013: the `allowEmpty` guard stops auto-sync.
                Manager::App(k) if plan.auto_sync_refused.contains(k) => format!(
                    "app `{}`, synced with prune by hand (its auto-sync refuses to prune every resource, `allowEmpty` is false),",
                    short_key(k)
                ),
                Manager::App(k) => format!("app `{}`", short_key(k)),
                Manager::AppSet(k) => format!(
                    "ApplicationSet `{}`",
                    short_key(k)
                ),
            };
            if let Some(p) = &d.protection {
                out.push(at(Finding::new(&META, format!("Application `{name}` is no longer rendered by {by_text}, but `{p}` on it stops the prune: it stays, out of sync")))
                    .severity(Severity::Info));
                continue;
            }
            if !d.cascades {
                out.push(at(Finding::new(&META, format!("{by_text} would delete Application `{name}`; it has no resources finalizer, so its resources are orphaned, not deleted")))
                    .severity(Severity::Info));
                continue;
            }
            let severity = if d.mode == PruneMode::Automated {
                Severity::Error
            } else {
                Severity::Warning
            };
            if !d.resources_known {
                out.push(at(Finding::new(&META, format!("{by_text} would delete Application `{name}` with the resources finalizer; its resources are unknown because it could not be rendered at base")))
                    .severity(severity));
                continue;
            }
            let gone: Vec<_> = plan
                .prunes_of(&d.app)
                .iter()
                .filter(|p| p.reason == PruneReason::AppDeleted)
                .collect();
            // A confirmation gate holds the cascade, then lets it delete.
            let deleted: Vec<_> = gone
                .iter()
                .filter(|p| p.protection.is_none() || p.waits_for_confirmation())
                .collect();
            let gate = deleted.iter().find_map(|p| p.confirmation_gate());
            let severity = if gate.is_some() {
                Severity::Warning
            } else {
                severity
            };
            let kept = gone.len() - deleted.len();
            // Every resource kept (an app-level `Delete=false`, say): the
            // finalizer deletes nothing (AC `appcontroller.go`
            // `shouldBeDeleted`), and what stays is left unmanaged.
            if deleted.is_empty() {
                let left = if kept > 0 {
                    format!("each of its {kept} resource(s) is kept by Delete=false or resource-policy keep and left unmanaged")
                } else {
                    "it renders no resource".to_owned()
                };
                out.push(at(Finding::new(&META, format!("{by_text} would delete Application `{name}` with the resources finalizer, deleting nothing: {left}")))
                    .severity(Severity::Info));
                continue;
            }
            let stateful: Vec<String> = deleted
                .iter()
                .filter(|p| {
                    (p.id.group.is_empty() && STATEFUL_CORE.contains(&p.id.kind.as_str()))
                        || (p.id.group == "apps" && p.id.kind == "StatefulSet")
                        || cx.config.is_extra_stateful(&p.id.group, &p.id.kind)
                        || (p.id.kind == "Service"
                            && p.base
                                .value
                                .at("/spec/type")
                                .and_then(serde_json::Value::as_str)
                                == Some("LoadBalancer"))
                })
                .map(|p| format!("`{}`", p.id))
                .collect();
            // A rename is a delete and a create: say so, it is rarely meant.
            let renamed = match by {
                Manager::App(k) => plan.prunes_of(k).iter().find(|p| {
                    p.reason == PruneReason::Renamed
                        && p.id.kind == "Application"
                        && p.id.name == app.spec.name
                }),
                Manager::AppSet(_) => None,
            }
            .and_then(|p| p.detail.as_deref());
            let what = match renamed {
                Some(new) => format!("Application `{name}` (renamed to `{new}`)"),
                None => format!("Application `{name}`"),
            };
            // A partial render knows a part of what goes: the count is a
            // floor, and the sources it left out are named.
            let mut msg = if d.left_out.is_empty() {
                format!(
                    "{by_text} would delete {what} with the resources finalizer, deleting its {} resource(s)",
                    deleted.len()
                )
            } else {
                format!(
                    "{by_text} would delete {what} with the resources finalizer, deleting at least {} resource(s), plus what {} renders (not analysed)",
                    deleted.len(),
                    crate::argocd::LeftOut::join(&d.left_out)
                )
            };
            // Child Applications among what goes cascade in turn (a removed
            // or renamed app-of-apps): their resources are counted too.
            let mut through = Through::default();
            cascade_through(plan, &d.app, &mut through, 0);
            if through.apps > 0 {
                msg.push_str(&format!(
                    " and, through the {} child Application(s) that go with it, {}{} more",
                    through.apps,
                    if through.unknown.is_empty() {
                        ""
                    } else {
                        "at least "
                    },
                    through.resources
                ));
                if !through.unknown.is_empty() {
                    msg.push_str(&format!(
                        ", plus what {} render(s) (not analysed)",
                        through.unknown.join(", ")
                    ));
                }
            }
            if !stateful.is_empty() {
                msg.push_str(&format!(", including {}", stateful.join(", ")));
            }
            if kept > 0 {
                msg.push_str(&format!(
                    " ({kept} kept by Delete=false or resource-policy keep)"
                ));
            }
            // AC `appcontroller.go` `finalizeApplicationDeletion`: nothing is
            // deleted until the Application's deletion is confirmed.
            if let Some(gate) = gate {
                msg.push_str(&format!(
                    ", once a person confirms the Application's deletion ({gate} holds the whole cascade until then)"
                ));
            }
            out.push(at(Finding::new(&META, msg)).severity(severity).help(
                "if the workloads must stay, remove the resources finalizer from the Application (or add `Delete=false` to what must survive) in a change merged and synced before this one",
            ));
        }
    }
}

/// What a deleted app's cascade deletes through the child Applications
/// among its resources.
#[derive(Default)]
struct Through {
    /// Child Applications (at every level) whose deletion cascades.
    apps: usize,
    /// Their resources deleted.
    resources: usize,
    /// Children whose resources are not all known, named.
    unknown: Vec<String>,
}

/// Adds to `t` the cascades of the Applications the deletion of `app`
/// deletes (the plan records each as deleted by `app`), level by level,
/// at most [`crate::plan::MAX_CASCADE_DEPTH`] deep, as the plan follows them.
fn cascade_through(plan: &crate::plan::Plan, app: &str, t: &mut Through, depth: usize) {
    if depth > crate::plan::MAX_CASCADE_DEPTH {
        return;
    }
    let by = Some(Manager::App(app.to_owned()));
    for c in plan
        .deleted_apps
        .iter()
        .filter(|c| c.deleted_by == by && c.cascades && c.protection.is_none())
    {
        t.apps += 1;
        if !c.resources_known {
            t.unknown.push(format!("`{}`", short_key(&c.app)));
            continue;
        }
        if !c.left_out.is_empty() {
            t.unknown.push(crate::argocd::LeftOut::join(&c.left_out));
        }
        t.resources += plan
            .prunes_of(&c.app)
            .iter()
            .filter(|p| {
                p.reason == PruneReason::AppDeleted
                    && (p.protection.is_none() || p.waits_for_confirmation())
            })
            .count();
        cascade_through(plan, &c.app, t, depth + 1);
    }
}
