//! GL011 moved-between-apps: a resource (a child Application above all)
//! that leaves one app and enters another app or an ApplicationSet in the
//! same change, and an app that moves to another cluster.
//!
//! Which parent syncs first is not in git: parents sync independently, and
//! within one sync gitops-engine prunes before it applies (GE
//! `pkg/sync/sync_context.go` `runTasks`: "prune first"). If the old owner syncs
//! first, its live copy still carries the old owner's tracking (and no
//! ownerReference from an ApplicationSet), so it is the old owner's to prune
//! (AC `state.go` `CompareAppState`, GE `cluster.go` `GetManagedLiveObjs`)
//! and it is deleted before the new owner recreates it. The severity is
//! that of this worst realistic order.

use super::gl001_stateful_prune::{what_is_lost, BaseNamespaces};
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::argocd::application::RESOURCES_FINALIZERS;
use crate::argocd::instances::short_key;
use crate::argocd::{instances, is_application, App, Inventory, Manager, PruneMode};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity, Side};
use crate::plan::{Prune, PruneReason};
use goyaml::json::Pointer as _;
use std::cell::OnceCell;
use std::collections::HashMap;

/// See `rules/GL011-moved-between-apps.md`.
pub(crate) struct MovedBetweenApps;

static META: RuleMeta = RuleMeta {
    code: "GL011",
    name: "moved-between-apps",
    category: Category::Prune,
    default_severity: Severity::Error,
    severity_note: "warning when only a manual sync prunes or the loss is not certain; info when nothing is lost",
    mode: Mode::Diff,
    doc: include_str!("../../rules/GL011-moved-between-apps.md"),
    suppression: Suppression::CHANGE,
};

const RECIPE: &str = "in a change merged and synced first, add `argocd.argoproj.io/sync-options: Prune=false` to it (or, for a child Application, remove the resources finalizer) in its old place; then move it";

/// The head's apps by name, namespace and instance: the first of each in
/// key order. Built when the first pruned Application asks: moving
/// thousands of child Applications to an ApplicationSet asks once for
/// each, and a search of every head app each time was quadratic.
struct HeadApps<'a> {
    head: &'a Inventory,
    index: OnceCell<HashMap<AppAt<'a>, &'a App>>,
}

/// An Application's name, namespace and Argo CD instance.
type AppAt<'a> = (&'a str, &'a str, Option<&'a str>);

impl<'a> HeadApps<'a> {
    fn new(head: &'a Inventory) -> Self {
        HeadApps {
            head,
            index: OnceCell::new(),
        }
    }

    fn get(&self, name: &str, namespace: &str, instance: Option<&str>) -> Option<&'a App> {
        let index = self.index.get_or_init(|| {
            let mut index = HashMap::new();
            for a in self.head.apps.values() {
                let at = (
                    a.spec.name.as_str(),
                    a.spec.namespace.as_str(),
                    a.instance.as_deref(),
                );
                index.entry(at).or_insert(a);
            }
            index
        });
        index.get(&(name, namespace, instance)).copied()
    }
}

/// The app or ApplicationSet that takes over a pruned object at head, if any.
fn new_owner(p: &Prune, head: &HeadApps<'_>) -> Option<String> {
    if p.reason == PruneReason::MovedToApp {
        return p
            .detail
            .as_deref()
            .map(|d| format!("app `{}`", short_key(d)));
    }
    if !is_application(&p.base.value) {
        return None;
    }
    // A child Application that an ApplicationSet (or another parent) now
    // declares: the same Application, managed by something else.
    let ns = p
        .base
        .value
        .at("/metadata/namespace")
        .and_then(serde_json::Value::as_str)
        .filter(|n| !n.is_empty())
        .unwrap_or("argocd");
    // Within the pruning app's Argo CD instance: another instance's
    // Application of that name is another object.
    let instance = instances::instance_of_key(&p.app);
    let child = head.get(&p.id.name, ns, instance)?;
    match &child.manager {
        Some(Manager::AppSet(set)) => Some(format!("ApplicationSet `{}`", short_key(set))),
        Some(Manager::App(parent)) if *parent != p.app => {
            Some(format!("app `{}`", short_key(parent)))
        }
        _ => None,
    }
}

/// The resources finalizer on an Application object, if any.
fn finalizer(v: &serde_json::Value) -> Option<&str> {
    v.at("/metadata/finalizers")
        .and_then(serde_json::Value::as_array)?
        .iter()
        .filter_map(serde_json::Value::as_str)
        .find(|f| RESOURCES_FINALIZERS.contains(f))
}

/// `FailOnSharedResource=true` in an app's sync options: a sync fails
/// while any object it renders is tracked by another app (AC
/// `controller/state.go` `CompareAppState` adds `SharedResourceWarning`
/// for a live object whose tracking names another app; `controller/sync.go`
/// `SyncAppState` then fails: "Shared resource found").
fn fails_on_shared(app: &App) -> bool {
    app.spec.sync_options.has("FailOnSharedResource=true")
}

/// Whether the app a pruned object moves to fails its syncs while the old
/// app still tracks the object: then the old app's prune always comes
/// first, and the worst order is the only one.
fn receiver_fails_on_shared(p: &Prune, cx: &RuleContext<'_>) -> bool {
    p.reason == PruneReason::MovedToApp
        && p.detail
            .as_deref()
            .and_then(|to| cx.head.apps.get(to))
            .is_some_and(fails_on_shared)
}

/// Apps with `FailOnSharedResource=true` that start rendering an object
/// another app rendered at base and does not give up (it still renders it,
/// or its prune is protected, so the live object keeps that app's
/// tracking): every sync of theirs fails from then on.
fn shared_wedges(
    cx: &RuleContext<'_>,
    plan: &crate::plan::Plan,
    base: &Inventory,
    out: &mut Vec<Finding>,
) {
    let strict: Vec<&App> = cx
        .head
        .apps
        .values()
        .filter(|a| fails_on_shared(a) && plan.changes.contains_key(&a.key))
        .collect();
    if strict.is_empty() {
        return;
    }
    // The app whose tracking each live object carries: the first base app
    // that renders it, within one Argo CD instance.
    let mut owner: HashMap<(Option<&str>, &crate::manifest::ResourceId), &App> = HashMap::new();
    for a in base.apps.values() {
        for m in a.resources.iter().filter(|m| crate::plan::is_prunable(m)) {
            owner.entry((a.instance.as_deref(), &m.id)).or_insert(a);
        }
    }
    for b in strict {
        let Some(ch) = plan.changes.get(&b.key) else {
            continue;
        };
        for id in &ch.created {
            let Some(a) = owner.get(&(b.instance.as_deref(), id)) else {
                continue;
            };
            let released = plan
                .prune_of(&a.key, id)
                .is_some_and(|p| p.protection.is_none() || p.waits_for_confirmation());
            if a.key == b.key || released {
                continue;
            }
            let (from, to) = (a.display_name(), b.display_name());
            let at = cx
                .head
                .apps
                .get(&b.key)
                .and_then(|h| h.resources.iter().find(|m| &m.id == id))
                .map_or(&b.origin, |m| &m.origin);
            out.push(
                Finding::new(
                    &META,
                    format!(
                        "every sync of `{to}` fails from now on: it sets `FailOnSharedResource=true` and starts rendering `{id}`, which `{from}` keeps tracking (Argo CD's SharedResourceWarning, then \"Shared resource found\")"
                    ),
                )
                .app(to)
                .resource(id.clone())
                .at(Side::Head, at.file.as_deref(), at.line)
                .help("render the object in one app only: remove it from this app, or remove it from the other app (with `Prune=false` there first if it must survive)"),
            );
        }
    }
}

impl Rule for MovedBetweenApps {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    /// An app that fails on shared resources is wedged by an object an
    /// unchanged app renders: those apps' renders must be seen.
    fn needs_unchanged_apps(
        &self,
        _base: &Inventory,
        head: &Inventory,
        _config: &crate::config::Config,
    ) -> bool {
        head.apps.values().any(fails_on_shared)
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        let Some(plan) = cx.plan else { return };
        let namespaces = BaseNamespaces::new(cx.base);
        let head_apps = HeadApps::new(cx.head);
        for p in &plan.prunes {
            if p.reason == PruneReason::AppDeleted {
                continue;
            }
            let confirm = p.waits_for_confirmation();
            if p.protection.is_some() && !confirm {
                continue;
            }
            let Some(to) = new_owner(p, &head_apps) else {
                continue;
            };
            let from = short_key(&p.app);
            let automated = p.mode == PruneMode::Automated && !confirm;
            let order = if receiver_fails_on_shared(p, cx) {
                format!(
                    "{to} sets `FailOnSharedResource=true`, so its syncs fail until `{from}` syncs first and gives the object up: when it does"
                )
            } else {
                format!(
                    "`{from}` and {to} sync independently, and a sync prunes before it applies, so if `{from}` syncs first"
                )
            };
            let (lost, severity) = if is_application(&p.base.value) {
                match finalizer(&p.base.value) {
                    Some(f) => (
                        format!("it deletes Application `{}`, and its `{f}` finalizer deletes every resource that app deployed, before {to} recreates it", p.id.name),
                        if automated { Severity::Error } else { Severity::Warning },
                    ),
                    None => (
                        format!("it deletes Application `{}` (no resources finalizer: its resources are orphaned, then adopted again when {to} recreates it)", p.id.name),
                        Severity::Info,
                    ),
                }
            } else {
                match what_is_lost(p, cx, &namespaces) {
                    Some((lost, certain)) => (
                        format!(
                            "it deletes `{}` and with it {lost} before {to} recreates it",
                            p.id
                        ),
                        if automated && certain {
                            Severity::Error
                        } else {
                            Severity::Warning
                        },
                    ),
                    None => (
                        format!(
                            "it deletes `{}` and {to} recreates it (a delete and a create)",
                            p.id
                        ),
                        Severity::Info,
                    ),
                }
            };
            let how = if confirm {
                " (once a person confirms the prune, `Prune=confirm`)"
            } else if automated {
                " (automated prune)"
            } else {
                " (on a sync with prune)"
            };
            out.push(
                Finding::new(
                    &META,
                    format!(
                        "`{}` moves from `{from}` to {to}: {order}{how}, {lost}",
                        p.id
                    ),
                )
                .severity(severity)
                .app(from)
                .resource(p.id.clone())
                .at(
                    Side::Base,
                    p.base.origin.file.as_deref(),
                    p.base.origin.line,
                )
                .help(RECIPE),
            );
        }
        let Some(base) = cx.base else { return };
        shared_wedges(cx, plan, base, out);
        for m in &plan.cluster_moves {
            let app: Option<&App> = base.apps.get(&m.app);
            let name = app.map_or_else(|| short_key(&m.app).to_string(), App::display_name);
            let origin = cx.head.apps.get(&m.app).map(|a| &a.origin);
            out.push(
                Finding::new(
                    &META,
                    format!(
                        "`{name}` moves from cluster `{}` to `{}`: Argo CD reads and prunes only the cluster an app points to, so the {} resource(s) it deployed on `{}` are left running there, unmanaged, and nothing is pruned",
                        m.from, m.to, m.left, m.from
                    ),
                )
                .severity(Severity::Info)
                .app(name)
                .at(
                    Side::Head,
                    origin.and_then(|o| o.file.as_deref()),
                    origin.and_then(|o| o.line),
                )
                .help("delete what is left on the old cluster by hand once the new one serves, or keep the old destination in a second Application until then"),
            );
        }
    }
}
