//! GL001 stateful-prune: a prune that deletes data or everything inside it.

use crate::argocd::instances::short_key;
use goyaml::json::Pointer as _;
use serde_json::Value;
use std::cell::OnceCell;
use std::collections::HashMap;

use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::argocd::{Inventory, PruneMode};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity, Side};
use crate::plan::{Prune, PruneReason};

/// See `rules/GL001-stateful-prune.md`.
pub(crate) struct StatefulPrune;

static META: RuleMeta = RuleMeta {
    code: "GL001",
    name: "stateful-prune",
    category: Category::Prune,
    default_severity: Severity::Error,
    severity_note: "warning when only a manual sync prunes, with `Prune=confirm`, or when the loss is not certain: a StatefulSet that keeps its claims, a kind of unknown scope",
    mode: Mode::Diff,
    doc: include_str!("../../rules/GL001-stateful-prune.md"),
    suppression: Suppression::CHANGE,
};

/// What each namespace holds in the base revision: how many resources, and
/// the first five as `Kind name`, in app key order then render order.
/// Listed once, when a pruned Namespace first asks: a change that prunes
/// thousands of Namespaces (thousands of apps deleted) scanned every base
/// resource for each before.
pub(super) struct BaseNamespaces<'a> {
    base: Option<&'a Inventory>,
    index: OnceCell<HashMap<&'a str, (usize, Vec<String>)>>,
}

impl<'a> BaseNamespaces<'a> {
    pub(super) fn new(base: Option<&'a Inventory>) -> Self {
        BaseNamespaces {
            base,
            index: OnceCell::new(),
        }
    }

    /// How many base resources `ns` holds, and the first five.
    fn inside(&self, ns: &str) -> (usize, &[String]) {
        let index = self.index.get_or_init(|| {
            let mut index: HashMap<&str, (usize, Vec<String>)> = HashMap::new();
            let resources = self
                .base
                .into_iter()
                .flat_map(|b| b.apps.values())
                .flat_map(|a| a.resources.iter());
            for m in resources {
                let (count, shown) = index.entry(m.id.namespace.as_str()).or_default();
                *count += 1;
                if shown.len() < SHOWN {
                    shown.push(format!("{} {}", m.id.kind, m.id.name));
                }
            }
            index
        });
        index
            .get(ns)
            .map_or((0, &[][..]), |(count, shown)| (*count, shown.as_slice()))
    }
}

/// Resources named in a pruned Namespace's finding.
const SHOWN: usize = 5;

/// What deleting this resource destroys, or `None` when it is not stateful.
/// The bool is whether the loss is certain (else the finding is a warning).
pub(super) fn what_is_lost(
    p: &Prune,
    cx: &RuleContext<'_>,
    namespaces: &BaseNamespaces<'_>,
) -> Option<(String, bool)> {
    what_deleting_loses(&p.id, p.base.value.as_ref(), cx, namespaces)
}

/// What deleting the object `id` (as `v` declares it) destroys, or `None`
/// when it holds nothing; the bool is whether the loss is certain.
pub(super) fn what_deleting_loses(
    id: &crate::manifest::ResourceId,
    v: &Value,
    cx: &RuleContext<'_>,
    namespaces: &BaseNamespaces<'_>,
) -> Option<(String, bool)> {
    let kind = id.kind.as_str();
    match (id.group.as_str(), kind) {
        ("", "PersistentVolumeClaim") => Some((
            "its volume and, with a `Delete` reclaim policy, the disk behind it".into(),
            true,
        )),
        ("", "PersistentVolume") => {
            let policy = v
                .at("/spec/persistentVolumeReclaimPolicy")
                .and_then(Value::as_str)
                .unwrap_or("Retain");
            Some((format!("the volume (reclaim policy `{policy}`)"), true))
        }
        ("", "Namespace") => {
            let (count, shown) = namespaces.inside(&id.name);
            let list = if count == 0 {
                "everything in it".to_string()
            } else {
                let more = if count > SHOWN {
                    format!(" and {} more", count - SHOWN)
                } else {
                    String::new()
                };
                format!(
                    "everything in it, including {count} resource(s) in this repository ({}{more})",
                    shown.join(", ")
                )
            };
            Some((list, true))
        }
        ("apps", "StatefulSet") => {
            let policy = v
                .at("/spec/persistentVolumeClaimRetentionPolicy/whenDeleted")
                .and_then(Value::as_str)
                .unwrap_or("Retain");
            if policy == "Delete" {
                Some(("its pods and, because `persistentVolumeClaimRetentionPolicy.whenDeleted` is `Delete`, its PersistentVolumeClaims".into(), true))
            } else {
                Some((
                    "its pods (its PersistentVolumeClaims are retained)".into(),
                    false,
                ))
            }
        }
        ("", "Service") if v.at("/spec/type").and_then(Value::as_str) == Some("LoadBalancer") => {
            Some((
                "its load balancer and the external address clients use".into(),
                true,
            ))
        }
        ("apiextensions.k8s.io", "CustomResourceDefinition") => Some((
            "every custom resource of that type in the cluster".into(),
            true,
        )),
        (g, k) if cx.config.is_extra_stateful(g, k) => {
            Some(("data (configured as a stateful kind)".into(), true))
        }
        _ => None,
    }
}

/// `group/Kind`, or `Kind` for the core group.
fn group_kind(p: &Prune) -> String {
    if p.id.group.is_empty() {
        p.id.kind.clone()
    } else {
        format!("{}/{}", p.id.group, p.id.kind)
    }
}

fn reason_text(p: &Prune) -> String {
    match (p.reason, p.detail.as_deref()) {
        (PruneReason::MovedToApp, Some(to)) => format!(
            "it moves to `{}`, which may not adopt it before this app prunes it",
            short_key(to)
        ),
        (PruneReason::Renamed, Some(n)) => {
            format!("it is renamed to `{n}` (a rename is a delete and a create)")
        }
        (PruneReason::NamespaceChanged, Some(ns)) => {
            format!("the app's destination namespace changes to `{ns}`")
        }
        (PruneReason::PathChanged, Some(p)) => format!("the app's source path changes to `{p}`"),
        (PruneReason::AppDeleted, _) => {
            "its Application is deleted with the resources finalizer".to_string()
        }
        _ => "its manifest is no longer rendered".to_string(),
    }
}

impl Rule for StatefulPrune {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        let Some(plan) = cx.plan else { return };
        let namespaces = BaseNamespaces::new(cx.base);
        // A kind of unknown scope is pruned only if it is namespaced: said
        // so, and never an error (see `plan::scope_decides`).
        let sure = plan.prunes.iter().map(|p| (p, true));
        let unsure = plan.scope_unknown.iter().map(|p| (p, false));
        for (p, scope_known) in sure.chain(unsure) {
            // A move between apps is GL011's: whether it deletes depends on
            // which app syncs first.
            if p.reason == PruneReason::MovedToApp {
                continue;
            }
            // `Prune=confirm` is not protection: a person approves the
            // deletion, which is exactly the case a warning is for.
            let confirm = p.waits_for_confirmation();
            if p.protection.is_some() && !confirm {
                continue;
            }
            let Some((lost, certain)) = what_is_lost(p, cx, &namespaces) else {
                continue;
            };
            let app = short_key(&p.app);
            let (how, severity) = match p.mode {
                _ if plan.auto_sync_refused.contains(&p.app) => (
                    format!("auto-sync of `{app}` refuses to run (it would prune every resource and `allowEmpty` is false), but syncing it with prune by hand would delete"),
                    Severity::Warning,
                ),
                PruneMode::Automated => (
                    format!("automated sync of `{app}` would delete"),
                    Severity::Error,
                ),
                _ => (
                    format!("syncing `{app}` with prune would delete"),
                    Severity::Warning,
                ),
            };
            let severity = if certain && !confirm && scope_known {
                severity
            } else {
                Severity::Warning
            };
            let how = if confirm && p.reason == PruneReason::AppDeleted {
                format!(
                    "once a person confirms the deletion of Application `{app}` ({} holds its whole cascade), the deletion would delete",
                    p.confirmation_gate().unwrap_or_default()
                )
            } else if confirm {
                format!("once a person confirms the prune (`Prune=confirm`), syncing `{app}` would delete")
            } else {
                how
            };
            let help = if !scope_known {
                "tell gitops-lint the kind's scope: add its CustomResourceDefinition to the repository, or list a cluster-scoped kind in `clusterScopedKinds` in .gitops-lint.yaml"
            } else if p.reason == PruneReason::AppDeleted {
                "if the data must survive, add `argocd.argoproj.io/sync-options: Delete=false` to it in the base revision first (Prune=false does not stop a cascade)"
            } else {
                "if this is not intended, restore the manifest; to keep the object while removing it from git, first merge `argocd.argoproj.io/sync-options: Prune=false` on it and sync, then remove it"
            };
            let scope = if scope_known {
                String::new()
            } else {
                format!(
                    ". Only if `{}` is namespaced: its scope is unknown (no CRD in the repository declares it and `clusterScopedKinds` does not list it), and a cluster-scoped object keeps its identity and is not pruned",
                    group_kind(p)
                )
            };
            out.push(
                Finding::new(
                    &META,
                    format!(
                        "{how} `{}` and with it {lost}: {}{scope}",
                        p.id,
                        reason_text(p)
                    ),
                )
                .severity(severity)
                .app(app)
                .resource(p.id.clone())
                .at(
                    Side::Base,
                    p.base.origin.file.as_deref(),
                    p.base.origin.line,
                )
                .help(help),
            );
        }
    }
}
