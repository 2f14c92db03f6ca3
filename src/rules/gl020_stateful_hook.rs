//! GL020 stateful-hook: an object that holds data and is a sync hook, which
//! Argo CD deletes by its hook delete policy (by default before every sync
//! that creates it again).

use super::analysis::{at_field, scoped_resources};
use super::gl001_stateful_prune::{what_deleting_loses, BaseNamespaces};
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity};
use crate::manifest::{HookType, ANN_HELM_HOOK, ANN_HELM_RESOURCE_POLICY, ANN_HOOK};

/// See `rules/GL020-stateful-hook.md`.
pub(crate) struct StatefulHook;

static META: RuleMeta = RuleMeta {
    code: "GL020",
    name: "stateful-hook",
    category: Category::Hooks,
    default_severity: Severity::Error,
    severity_note:
        "warning when its only delete policy is `HookFailed`, unless the change makes it a hook",
    mode: Mode::Single,
    doc: include_str!("../../rules/GL020-stateful-hook.md"),
    // It deletes at every sync once merged: never hidden by a path or an
    // annotation on the object, pre-existing when the base has it too.
    suppression: Suppression::LOOP,
};

/// The delete policies gitops-engine knows (`common.NewHookDeletePolicy`),
/// in the order their effect is described.
const POLICIES: [&str; 3] = ["BeforeHookCreation", "HookSucceeded", "HookFailed"];

impl Rule for StatefulHook {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        let namespaces = BaseNamespaces::new(Some(cx.base.unwrap_or(cx.head)));
        for (app, m) in scoped_resources(cx) {
            let hook = m.hook();
            // gitops-engine `pkg/sync/hook/hook.go` `IsHook`: `Skip` alone
            // is no hook; `helm/hook.go`: neither is Helm's `crd-install`.
            if !hook.is_hook || hook.is_skip() {
                continue;
            }
            let Some((lost, _)) = what_deleting_loses(&m.id, &m.value, cx, &namespaces) else {
                continue;
            };
            // `hook/delete_policy.go` `DeletePolicies`: the valid Argo CD
            // and Helm policies, `BeforeHookCreation` when there are none.
            let mut policies: Vec<&str> = POLICIES
                .into_iter()
                .filter(|p| hook.delete_policies.iter().any(|d| d == p))
                .collect();
            let default = policies.is_empty();
            if default {
                policies.push("BeforeHookCreation");
            }
            // Hooks run in their phases; a delete hook only when the
            // Application is deleted (`PreDelete`, `PostDelete`).
            let every_sync = hook.types.is_empty()
                || hook.types.iter().any(|t| {
                    matches!(
                        t,
                        HookType::PreSync
                            | HookType::Sync
                            | HookType::PostSync
                            | HookType::SyncFail
                    )
                });
            let phases: Vec<String> = hook.types.iter().map(|t| format!("`{t:?}`")).collect();
            let phase = if phases.is_empty() {
                "a hook".to_owned()
            } else {
                format!("a {} hook", phases.join("/"))
            };
            let runs = if every_sync {
                "every sync"
            } else {
                "the Application's deletion"
            };
            // `sync_task.go`: `deleteBeforeCreation` deletes a live hook
            // before its task creates it again; `deleteOnPhaseSuccessful`
            // and `deleteOnPhaseFailed` once its phase ends.
            let when = match policies.first().copied() {
                Some("BeforeHookCreation") => format!(
                    "`BeforeHookCreation`{} deletes it before {runs} creates it again",
                    if default { " (the default policy)" } else { "" }
                ),
                Some("HookSucceeded") => {
                    "`HookSucceeded` deletes it as soon as its phase succeeds".to_owned()
                }
                _ => "`HookFailed` deletes it when its phase fails".to_owned(),
            };
            // An object that was an ordinary resource at base and is a hook
            // now: hooks are left out of the app's resources (gitops-engine
            // `sync_context.go` `getSyncTasks`), so the live object is also
            // pruned, or deleted by the hook task, at the first sync.
            let became = cx
                .base
                .and_then(|b| b.apps.get(&app.key))
                .and_then(|b| b.resources.iter().find(|r| r.id == m.id))
                .is_some_and(|r| {
                    let h = r.hook();
                    !h.is_hook || h.is_skip()
                });
            let mut msg = if became {
                format!(
                    "`{}` becomes {phase}: Argo CD leaves hooks out of the app's resources and deletes the existing object at the first sync, then {when}, losing {lost}",
                    m.id
                )
            } else {
                format!("`{}` is {phase}: {when}, losing {lost}", m.id)
            };
            if m.annotation(ANN_HELM_RESOURCE_POLICY) == Some("keep") {
                msg.push_str(
                    " (`helm.sh/resource-policy: keep` does not stop Argo CD's hook deletion)",
                );
            }
            // Only `HookFailed`: lost when the phase fails, which a
            // failing migration makes likely but not certain.
            let severity = if became || policies.iter().any(|p| *p != "HookFailed") {
                Severity::Error
            } else {
                Severity::Warning
            };
            let annotation = if m.annotation(ANN_HOOK).is_some() {
                ANN_HOOK
            } else {
                ANN_HELM_HOOK
            };
            out.push(
                at_field(
                    Finding::new(&META, msg).severity(severity),
                    app,
                    m,
                    &["metadata", "annotations", annotation],
                )
                .help("keep data out of hooks: make it an ordinary resource of the app (with `Prune=false` and `Delete=false` if it must outlive the app), and let the hook use it"),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::rules::analysis::testutil::{app, application, check, inventory};
    use serde_json::json;

    fn pvc(annotations: serde_json::Value) -> serde_json::Value {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "annotations": annotations}})
    }

    fn findings(annotations: serde_json::Value) -> Vec<Finding> {
        let inv = inventory(vec![app(
            application("a", json!({}), false),
            vec![pvc(annotations)],
        )]);
        check(&StatefulHook, &inv, &Config::default())
    }

    #[test]
    fn a_claim_that_is_a_hook_is_deleted_by_its_delete_policy() {
        let f = findings(json!({"argocd.argoproj.io/hook": "PreSync"}));
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        assert!(
            f[0].message.contains("the default policy"),
            "{}",
            f[0].message
        );
        // Helm's hooks are Argo CD's too, and `keep` does not stop it.
        let f = findings(json!({"helm.sh/hook": "pre-install", "helm.sh/resource-policy": "keep"}));
        assert_eq!(f.len(), 1);
        assert!(f[0].message.contains("resource-policy: keep"));
        // Only `HookFailed`: a warning.
        let f = findings(json!({"argocd.argoproj.io/hook": "PostSync",
            "argocd.argoproj.io/hook-delete-policy": "HookFailed"}));
        assert_eq!(f[0].severity, Severity::Warning);
    }

    #[test]
    fn skip_crd_install_and_ordinary_objects_are_no_hooks() {
        assert!(findings(json!({"argocd.argoproj.io/hook": "Skip"})).is_empty());
        assert!(findings(json!({"helm.sh/hook": "crd-install"})).is_empty());
        assert!(findings(json!({})).is_empty());
    }
}
