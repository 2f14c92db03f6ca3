//! GL007 hook-can-hang: hooks that can keep a sync Running forever, never
//! re-run after a failure, or pile up in the cluster.

use goyaml::json::Pointer as _;
use serde_json::Value;

use super::analysis::podspec::{self, RefKind};
use super::analysis::{at_field, scoped_resources};
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity};
use crate::manifest::{HookType, Manifest, ANN_HELM_HOOK_DELETE_POLICY, ANN_HOOK_DELETE_POLICY};

/// See `rules/GL007-hook-can-hang.md`.
pub(crate) struct HookCanHang;

static META: RuleMeta = RuleMeta {
    code: "GL007",
    name: "hook-can-hang",
    category: Category::Hooks,
    default_severity: Severity::Warning,
    severity_note: "error for a hook waiting on a Kustomize-hashed ConfigMap or Secret created only in the Sync phase",
    mode: Mode::Single,
    doc: include_str!("../../rules/GL007-hook-can-hang.md"),
    suppression: Suppression::OBJECT,
};

/// Hooks that run something and so can fail or hang.
fn runs_something(m: &Manifest) -> bool {
    podspec::pod_spec(m).is_some() && m.id.kind != "CronJob"
        || (m.id.group == "argoproj.io" && m.id.kind == "Workflow")
}

impl Rule for HookCanHang {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    #[allow(clippy::too_many_lines)]
    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        for (app, m) in scoped_resources(cx) {
            let hook = m.hook();
            if hook.types.is_empty() || hook.is_skip() {
                continue;
            }
            let types: Vec<String> = hook.types.iter().map(|t| format!("{t:?}")).collect();
            let what = format!("{} hook `{}`", types.join("/"), m.id);
            let v: &Value = m.value.as_ref();
            let mut push = |msg: String, help: &str, sev: Severity, path: &[&str]| {
                out.push(
                    at_field(Finding::new(&META, msg).severity(sev), app, m, path)
                        .help(help.to_string()),
                );
            };
            let policy_key = if m.annotation(ANN_HOOK_DELETE_POLICY).is_some() {
                ANN_HOOK_DELETE_POLICY
            } else {
                ANN_HELM_HOOK_DELETE_POLICY
            };
            let is_job = m.id.group == "batch" && m.id.kind == "Job";
            let is_pod = m.id.group.is_empty() && m.id.kind == "Pod";
            if (is_job || is_pod) && v.at("/spec/activeDeadlineSeconds").is_none() {
                push(
                    format!("{what} has no `activeDeadlineSeconds`: a pod that never starts (unschedulable, image pull, missing ConfigMap) keeps the hook, and the sync, Running with no timeout"),
                    "set `spec.activeDeadlineSeconds` to a bound on how long the hook may take",
                    Severity::Warning,
                        &["spec"],
                );
            }
            let policies = &hook.delete_policies;
            if runs_something(m)
                && !m.uses_generate_name()
                && !policies.is_empty()
                && !policies.iter().any(|p| p == "BeforeHookCreation")
            {
                push(
                    format!("{what} sets delete policy `{}` without `BeforeHookCreation`: after a failed run the old object stays, and the next sync applies onto it instead of running the hook again", policies.join(",")),
                    "add `BeforeHookCreation` to `argocd.argoproj.io/hook-delete-policy` (it is the default only when no policy is set)",
                    Severity::Warning,
                        &["metadata", "annotations", policy_key],
                );
            }
            if runs_something(m)
                && m.uses_generate_name()
                && !policies.iter().any(|p| p == "HookSucceeded")
            {
                push(
                    format!("{what} uses `generateName` without delete policy `HookSucceeded`: every sync creates another object and none is ever deleted (`BeforeHookCreation` only matches a fixed name)"),
                    "add `argocd.argoproj.io/hook-delete-policy: HookSucceeded` (or give the hook a fixed `metadata.name`)",
                    Severity::Warning,
                        &["metadata", "generateName"],
                );
            }
            if is_job && v.at("/spec/ttlSecondsAfterFinished").is_some() {
                push(
                    format!("{what} sets `ttlSecondsAfterFinished`: the Job can be garbage-collected before Argo CD reads its result, leaving the hook Running (argo-cd#21055)"),
                    "remove `ttlSecondsAfterFinished` and let a hook delete policy clean up",
                    Severity::Warning,
                        &["spec", "ttlSecondsAfterFinished"],
                );
            }
            if !hook.types.contains(&HookType::PreSync) {
                continue;
            }
            let Some(spec) = podspec::pod_spec(m) else {
                continue;
            };
            let hook_wave = m.sync_wave();
            for r in podspec::references(spec) {
                if r.optional || r.kind == RefKind::PriorityClass {
                    continue;
                }
                let ns = if r.kind.namespaced() {
                    m.id.namespace.as_str()
                } else {
                    ""
                };
                let Some(dep) = app.resources.iter().find(|d| {
                    d.id.kind == r.kind.kind()
                        && d.id.group == r.kind.group()
                        && d.id.name == r.name
                        && d.id.namespace == ns
                }) else {
                    continue;
                };
                let dep_hook = dep.hook();
                let created_before =
                    dep_hook.types.contains(&HookType::PreSync) && dep.sync_wave() <= hook_wave;
                if created_before || (dep_hook.is_hook && !dep_hook.types.contains(&HookType::Sync))
                {
                    continue;
                }
                let hashed = matches!(r.kind, RefKind::ConfigMap | RefKind::Secret)
                    && podspec::has_kustomize_hash_suffix(&r.name);
                let kind = r.kind.kind();
                if hashed {
                    push(
                        format!("{what} needs {kind} `{}` ({}), which carries a Kustomize content hash and is created only in the Sync phase: every change to its data gives it a new name that does not exist yet when the hook runs, so the hook waits forever", r.name, r.via),
                        "make the ConfigMap a PreSync hook too (`argocd.argoproj.io/hook: PreSync` with an earlier `sync-wave`), or set `disableNameSuffixHash: true` for it",
                        Severity::Error,
                        &["spec", "template"],
                    );
                } else {
                    push(
                        format!("{what} needs {kind} `{}` ({}), which the app creates only in the Sync phase: on a fresh cluster, or after it is renamed, the hook waits forever for it", r.name, r.via),
                        "make it a PreSync hook with an earlier `sync-wave` (and delete policy `BeforeHookCreation`), or create it in another app synced first",
                        Severity::Warning,
                        &["spec", "template"],
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::rules::analysis::testutil::{app, application, check, inventory, messages};
    use serde_json::json;

    fn job(meta: Value, spec_extra: Value, pod: Value) -> Value {
        let mut spec = json!({"template": {"spec": pod}});
        if let (Some(s), Some(e)) = (spec.as_object_mut(), spec_extra.as_object()) {
            for (k, v) in e {
                s.insert(k.clone(), v.clone());
            }
        }
        json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": spec})
    }

    #[test]
    fn a_well_formed_hook_is_quiet() {
        let j = job(
            json!({"name": "m", "annotations": {"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/hook-delete-policy": "BeforeHookCreation,HookSucceeded"}}),
            json!({"activeDeadlineSeconds": 600}),
            json!({"containers": [{"name": "c", "image": "x"}]}),
        );
        let inv = inventory(vec![app(application("a", json!({}), false), vec![j])]);
        assert!(check(&HookCanHang, &inv, &Config::default()).is_empty());
    }

    #[test]
    fn each_trap_is_reported() {
        let j = job(
            json!({"generateName": "m-", "annotations": {"argocd.argoproj.io/hook": "PreSync", "argocd.argoproj.io/hook-delete-policy": "HookFailed"}}),
            json!({"ttlSecondsAfterFinished": 60}),
            json!({"containers": [{"name": "c", "image": "x", "envFrom": [{"configMapRef": {"name": "cfg-7g2d5b8k4m"}}]}],
                   "serviceAccountName": "migrator"}),
        );
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cfg-7g2d5b8k4m"}});
        let sa =
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "migrator"}});
        let inv = inventory(vec![app(
            application("a", json!({}), false),
            vec![j, cm, sa],
        )]);
        let f = check(&HookCanHang, &inv, &Config::default());
        let m = messages(&f);
        assert_eq!(m.len(), 5, "{m:#?}");
        assert!(m[0].contains("no `activeDeadlineSeconds`"));
        assert!(m[1].contains("`generateName` without delete policy `HookSucceeded`"));
        assert!(m[2].contains("`ttlSecondsAfterFinished`"));
        assert!(m[3].contains("Kustomize content hash"));
        assert_eq!(f[3].severity, Severity::Error);
        assert!(m[4].contains("ServiceAccount `migrator` (serviceAccountName)"));
    }

    #[test]
    fn named_hook_with_policy_but_no_before_hook_creation() {
        let j = job(
            json!({"name": "m", "annotations": {"helm.sh/hook": "pre-upgrade", "helm.sh/hook-delete-policy": "hook-succeeded"}}),
            json!({"activeDeadlineSeconds": 60}),
            json!({"containers": [{"name": "c", "image": "x"}]}),
        );
        let inv = inventory(vec![app(application("a", json!({}), false), vec![j])]);
        let m = messages(&check(&HookCanHang, &inv, &Config::default()));
        assert_eq!(m, vec!["PreSync hook `Job ns/m` sets delete policy `HookSucceeded` without `BeforeHookCreation`: after a failed run the old object stays, and the next sync applies onto it instead of running the hook again".to_string()]);
    }
}
