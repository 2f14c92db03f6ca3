//! GL009 replace-on-stateful: `Replace=true` or `Force=true` on a
//! PersistentVolumeClaim or StatefulSet.

use super::analysis::{at_field, scoped_resources};
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity};
use crate::manifest::ANN_SYNC_OPTIONS;

/// See `rules/GL009-replace-on-stateful.md`.
pub(crate) struct ReplaceOnStateful;

static META: RuleMeta = RuleMeta {
    code: "GL009",
    name: "replace-on-stateful",
    category: Category::Change,
    default_severity: Severity::Error,
    severity_note: "warning for `Replace=true` without `Force=true`",
    mode: Mode::Single,
    doc: include_str!("../../rules/GL009-replace-on-stateful.md"),
    suppression: Suppression::OBJECT,
};

impl Rule for ReplaceOnStateful {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        for (app, m) in scoped_resources(cx) {
            let what = match (m.id.group.as_str(), m.id.kind.as_str()) {
                ("", "PersistentVolumeClaim") => "the claim, and with a `Delete` reclaim policy the volume and its data",
                ("apps", "StatefulSet") => "the StatefulSet and its pods (and its claims when `persistentVolumeClaimRetentionPolicy.whenDeleted` is `Delete`)",
                _ => continue,
            };
            // gitops-engine `pkg/sync/sync_context.go` `applyObject`: replace
            // is the operation's `Replace=true` (the app's
            // `syncPolicy.syncOptions` on an automated sync,
            // `SyncOptions.HasOption`) OR the target's annotation OR the live
            // object's; force is the operation's sync strategy
            // (`SyncStrategy.Force()`, which only a person's `argocd app sync
            // --force` sets: `autoSync` in `controller/appcontroller.go`
            // builds none) OR the target's annotation OR the live object's.
            // So an app-level `Force=true` is read by nothing, and a
            // resource's `Replace=false` switches off nothing. The live
            // object's annotation is the base revision's, whose findings a
            // diff leaves to `check`.
            let own = m.sync_options();
            let in_effect = |item: &str, app_level: bool| -> Option<SetBy> {
                if own.has(item) {
                    Some(SetBy::Resource)
                } else if app_level && app.spec.sync_options.has(item) {
                    Some(SetBy::App)
                } else {
                    None
                }
            };
            let force = in_effect("Force=true", false);
            let replace = in_effect("Replace=true", true);
            let (msg, severity) = match (force, replace) {
                (Some(w), _) => (
                    format!("`Force=true` ({}) makes Argo CD delete and recreate `{}` whenever an update is refused, losing {what}", w.text(), m.id),
                    Severity::Error,
                ),
                (None, Some(w)) => (
                    format!("`Replace=true` ({}) syncs `{}` with `kubectl replace`: fields set by the cluster (a bound claim's `volumeName`, defaults) are dropped, and the replace is refused or, with `Force`, turns into delete and recreate, losing {what}", w.text(), m.id),
                    Severity::Warning,
                ),
                (None, None) => continue,
            };
            out.push(
                at_field(
                    Finding::new(&META, msg).severity(severity),
                    app,
                    m,
                    &["metadata", "annotations", ANN_SYNC_OPTIONS],
                )
                .help(
                    "remove `Force=true`/`Replace=true` from this resource; an app-level `Replace=true` applies to every resource of the app (Argo CD ORs it with the resource's, so `Replace=false` cannot override it): drop it from the app or move this resource to an app without it; change immutable fields by migrating to a new object instead",
                ),
            );
        }
    }
}

/// Where an option in effect was set.
#[derive(Clone, Copy, PartialEq, Eq)]
enum SetBy {
    Resource,
    App,
}

impl SetBy {
    fn text(self) -> &'static str {
        match self {
            SetBy::Resource => "on the resource",
            SetBy::App => "at app level, which a resource's `Replace=false` does not switch off",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::rules::analysis::testutil::{app, application, check, inventory};
    use serde_json::json;

    #[test]
    fn force_is_an_error_replace_a_warning_and_options_are_ored_as_argo_cd_does() {
        let pvc = |opts: &str| {
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "annotations": {"argocd.argoproj.io/sync-options": opts}}})
        };
        let inv = inventory(vec![app(
            application("a", json!({}), false),
            vec![pvc("Force=true,Replace=true")],
        )]);
        let f = check(&ReplaceOnStateful, &inv, &Config::default());
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Error);
        let app_level = application(
            "b",
            json!({"syncPolicy": {"syncOptions": ["Replace=true"]}}),
            false,
        );
        let inv = inventory(vec![app(app_level.clone(), vec![pvc("")])]);
        let f = check(&ReplaceOnStateful, &inv, &Config::default());
        assert_eq!(f[0].severity, Severity::Warning);
        assert!(f[0].message.contains("(at app level"));
        // A resource's `Replace=false` does not switch an app-level one off.
        let inv = inventory(vec![app(app_level, vec![pvc("Replace=false")])]);
        let f = check(&ReplaceOnStateful, &inv, &Config::default());
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].severity, Severity::Warning);
        // An app-level `Force=true` is read by nothing.
        let app_force = application(
            "c",
            json!({"syncPolicy": {"syncOptions": ["Force=true"]}}),
            false,
        );
        let inv = inventory(vec![app(app_force, vec![pvc("")])]);
        assert!(check(&ReplaceOnStateful, &inv, &Config::default()).is_empty());
    }
}
