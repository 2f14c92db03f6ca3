//! GL017 recreate: under automated prune, a workload or Service that the
//! change renames or moves to another namespace is deleted and created
//! again, not updated: downtime while the new one starts.
//!
//! Argo CD tracks objects by group, kind, namespace and name: an object
//! under a new name or namespace is a new object to create, and the old one,
//! no longer rendered, is pruned in the same sync (gitops-engine
//! `pkg/sync/sync_context.go` `getSyncTasks`: a target without live object
//! is created, a live object without target is pruned; prunes run first,
//! `runTasks`: "prune first" within a wave, and prunes take the reverse of
//! the creation waves). With `PruneLast=true` the prune waits until every
//! wave has applied and is healthy (`getSyncTasks`, `pruneLast`), so a
//! workload's replacement serves first; a Service's clients still lose the
//! old name. Stateful kinds are GL001's: what is lost there is data.

use std::collections::BTreeMap;

use super::gl001_stateful_prune::{what_is_lost, BaseNamespaces};
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::argocd::PruneMode;
use crate::finding::Suppression;
use crate::finding::{Finding, Severity, Side};
use crate::manifest::ResourceId;
use crate::plan::{Prune, Recreate};

/// See `rules/GL017-recreate.md`.
pub(crate) struct Recreates;

static META: RuleMeta = RuleMeta {
    code: "GL017",
    name: "recreate",
    category: Category::Prune,
    default_severity: Severity::Warning,
    severity_note: "",
    mode: Mode::Diff,
    doc: include_str!("../../rules/GL017-recreate.md"),
    suppression: Suppression::CHANGE,
};

/// What deleting and creating again costs for the stateless kinds this rule
/// knows; `None` for any other kind.
fn downtime(id: &ResourceId) -> Option<&'static str> {
    Some(match (id.group.as_str(), id.kind.as_str()) {
        ("apps", "Deployment" | "ReplicaSet") | ("argoproj.io", "Rollout") => {
            "its pods are deleted and the new ones start from zero, not by rolling update"
        }
        ("apps", "DaemonSet") => "its pod on every node is deleted and started again",
        ("", "Pod") => "the pod is deleted and started again",
        ("", "Service") => {
            "its cluster IP and DNS name change, so clients that resolved or cached the old ones lose it"
        }
        ("networking.k8s.io", "Ingress") => {
            "its routes are gone until the ingress controller admits the new one, which may get a new load balancer address"
        }
        ("batch", "CronJob") => "the Jobs it owns are deleted with it",
        ("batch", "Job") => "it runs again from the start",
        _ => return None,
    })
}

impl Rule for Recreates {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        let Some(plan) = cx.plan else { return };
        let prune = |r: &Recreate| -> Option<&Prune> { plan.prune_of(&r.app, &r.deleted) };
        let mut by_app: BTreeMap<&str, Vec<(&Recreate, &'static str)>> = BTreeMap::new();
        let recreates = plan.recreates();
        let namespaces = BaseNamespaces::new(cx.base);
        for r in &recreates {
            let Some(p) = prune(r) else { continue };
            // A manual sync creates the new object and leaves the old one
            // until a person prunes it, normally once the new one serves;
            // `Prune=confirm` waits for that person too.
            if p.mode != PruneMode::Automated
                || p.waits_for_confirmation()
                || plan.auto_sync_refused.contains(&p.app)
            {
                continue;
            }
            // Data loss is GL001's finding, not a downtime warning.
            if what_is_lost(p, cx, &namespaces).is_some() {
                continue;
            }
            let prune_last = cx
                .base
                .and_then(|b| b.apps.get(&p.app))
                .is_some_and(|a| a.spec.sync_options.has("PruneLast=true"))
                || p.base.sync_options().has("PruneLast=true");
            let service = r.deleted.group.is_empty() && r.deleted.kind == "Service";
            if prune_last && !service {
                continue;
            }
            if let Some(cost) = downtime(&r.deleted) {
                by_app.entry(r.app.as_str()).or_default().push((r, cost));
            }
        }
        for (key, pairs) in by_app {
            let Some(app) = cx.head.apps.get(key) else {
                continue;
            };
            let listed: Vec<String> = pairs
                .iter()
                .map(|(r, cost)| format!("`{}` → `{}` ({cost})", r.deleted, r.created))
                .collect();
            let message = format!(
                "automated sync of `{}` deletes and creates again {} object(s) instead of updating them, because their name or namespace changes: {}; expect downtime until the new ones are ready",
                app.display_name(),
                pairs.len(),
                listed.join("; ")
            );
            // Point at the new object's manifest: where the rename is.
            let first = pairs[0].0;
            let at = app
                .resources
                .iter()
                .find(|m| m.id == first.created)
                .map_or(&app.origin, |m| &m.origin);
            out.push(
                Finding::new(&META, message)
                    .app(app.display_name())
                    .resource(first.deleted.clone())
                    .at(Side::Head, at.file.as_deref(), at.line)
                    .help("to switch without downtime, keep the old object's manifest in a first change while the new one is created and becomes ready, then remove it in a second change (or set `PruneLast=true` so the prune waits for the new one to be healthy); move the clients of a renamed Service to its new name before the old one goes"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::rules::analysis::testutil::{app, application, inventory};
    use serde_json::{json, Value};

    fn diff(base: Vec<Value>, head: Vec<Value>) -> Vec<Finding> {
        let a = application(
            "web",
            json!({"syncPolicy": {"automated": {"prune": true}}}),
            false,
        );
        let base = inventory(vec![app(a.clone(), base)]);
        let head = inventory(vec![app(a, head)]);
        let config = Config::default();
        let plan = crate::plan::plan(&base, &head, &config);
        let cx = RuleContext {
            plan: Some(&plan),
            base: Some(&base),
            head: &head,
            config: &config,
            only_changed: true,
            head_config: None,
        };
        let mut out = Vec::new();
        Recreates.check(&cx, &mut out);
        out
    }

    fn service(name: &str, kind: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": {"type": kind}})
    }

    #[test]
    fn a_renamed_service_is_recreated_unless_its_loss_is_gl001s() {
        let f = diff(
            vec![service("api", "ClusterIP")],
            vec![service("web-api", "ClusterIP")],
        );
        assert_eq!(f.len(), 1);
        assert!(f[0]
            .message
            .contains("`Service ns/api` → `Service ns/web-api`"));
        // A LoadBalancer's address is lost: GL001 reports it as an error.
        assert!(diff(
            vec![service("api", "LoadBalancer")],
            vec![service("web-api", "LoadBalancer")]
        )
        .is_empty());
    }

    #[test]
    fn kinds_without_downtime_are_not_reported() {
        let cm =
            |n: &str| json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n}});
        assert!(diff(vec![cm("settings")], vec![cm("web-settings")]).is_empty());
    }
}
