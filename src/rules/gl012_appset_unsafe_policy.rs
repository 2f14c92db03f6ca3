//! GL012 appset-unsafe-policy: an ApplicationSet whose generated apps
//! cascade on deletion while its policy lets the controller delete them, so
//! any shrink of its generators deletes workloads.

use crate::argocd::instances::short_key;
use goyaml::json::Pointer as _;
use serde_json::Value;

use super::analysis::appset_resource;
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::argocd::appset::{self, AppSetSettings, PolicySource, RESOURCES_FINALIZER};
use crate::argocd::AppSetEntry;
use crate::finding::Suppression;
use crate::finding::{Finding, Severity, Side};

/// See `rules/GL012-appset-unsafe-policy.md`.
pub(crate) struct AppSetUnsafePolicy;

static META: RuleMeta = RuleMeta {
    code: "GL012",
    name: "appset-unsafe-policy",
    category: Category::Deletion,
    default_severity: Severity::Warning,
    severity_note: "",
    mode: Mode::Single,
    doc: include_str!("../../rules/GL012-appset-unsafe-policy.md"),
    suppression: Suppression::REPOSITORY,
};

/// Whether the Applications this ApplicationSet generates carry a resources finalizer.
fn generated_apps_cascade(e: &AppSetEntry, preserve: bool) -> bool {
    if let Ok(x) = &e.expansion {
        if !x.apps.is_empty() {
            return x.apps.iter().any(appset::GeneratedApp::cascades);
        }
    }
    // Nothing generated (or not evaluable): read the template as the controller would.
    let finalizers: Vec<&str> = e
        .object
        .at("/spec/template/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if finalizers.is_empty() {
        return !preserve;
    }
    finalizers
        .iter()
        .any(|f| f.starts_with(RESOURCES_FINALIZER))
}

impl Rule for AppSetUnsafePolicy {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        let cfg = &cx.config.applicationset;
        let settings = AppSetSettings {
            new_git_file_globbing: cfg.new_git_file_globbing,
            controller_policy: cfg.policy.clone(),
            policy_override: cfg.policy_override,
        };
        for (key, e) in &cx.head.appsets {
            // In a diff, only ApplicationSets this change adds or modifies.
            if cx.only_changed {
                if let Some(b) = cx.base.and_then(|b| b.appsets.get(key)) {
                    if b.object == e.object {
                        continue;
                    }
                }
            }
            let policy = match &e.expansion {
                Ok(x) => x.policy.clone(),
                _ => match appset::policy(&e.object, &settings) {
                    Ok(p) => p,
                    Err(_) => continue,
                },
            };
            if !policy.allows_delete
                || !generated_apps_cascade(e, policy.preserve_resources_on_deletion)
            {
                continue;
            }
            let set = short_key(key);
            // The ApplicationSet is the finding's identity: moving its file
            // does not make an old policy the change's.
            let id = appset_resource(key);
            let why = match (&policy.decided_by, &policy.ignored_appset_value) {
                (PolicySource::Controller, Some(own)) => format!(
                    "its `applicationsSync: {own}` is ignored because the controller runs with `--policy={}` and without `--enable-policy-override`",
                    policy.applications_sync
                ),
                (PolicySource::Controller, None) => {
                    format!("the controller runs with `--policy={}`", policy.applications_sync)
                }
                (PolicySource::ApplicationSet, _) => {
                    format!("its policy is `applicationsSync: {}`", policy.applications_sync)
                }
                (PolicySource::Default, Some(own)) => format!(
                    "its `applicationsSync: {own}` is ignored because the controller runs without `--enable-policy-override`, so the default `sync` applies"
                ),
                (PolicySource::Default, None) => "its policy is the default, `sync`".to_string(),
            };
            out.push(
                Finding::new(
                    &META,
                    format!(
                        "ApplicationSet `{set}` deletes every Application its generators stop producing, and their resources with them: {why}, and the generated Applications carry the resources finalizer"
                    ),
                )
                .resource(id)
                .at(Side::Head, e.origin.file.as_deref(), e.origin.line)
                .help(
                    "set `spec.syncPolicy.applicationsSync: create-update` so a renamed directory, a typo or an emptied list cannot delete workloads, or `preserveResourcesOnDeletion: true` to orphan rather than delete their resources",
                ),
            );
        }
    }
}
