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
            let own = m.sync_options();
            let app_opts = &app.spec.sync_options;
            // A resource annotation overrides the app-level value of the same option.
            let effective = |key: &str| -> Option<&'static str> {
                match own.value(key).or_else(|| app_opts.value(key)) {
                    Some("true") if own.value(key).is_some() => Some("on the resource"),
                    Some("true") => Some("at app level"),
                    _ => None,
                }
            };
            let force = effective("Force");
            let replace = effective("Replace");
            let (msg, severity) = match (force, replace) {
                (Some(w), _) => (
                    format!("`Force=true` ({w}) makes Argo CD delete and recreate `{}` whenever an update is refused, losing {what}", m.id),
                    Severity::Error,
                ),
                (None, Some(w)) => (
                    format!("`Replace=true` ({w}) syncs `{}` with `kubectl replace`: fields set by the cluster (a bound claim's `volumeName`, defaults) are dropped, and the replace is refused or, with `Force`, turns into delete and recreate, losing {what}", m.id),
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
                    "remove the option for this resource (set `Replace=false`/`Force=false` on it to override an app-level value); change immutable fields by migrating to a new object instead",
                ),
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

    #[test]
    fn force_is_an_error_replace_a_warning_and_resource_overrides_app() {
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
        assert!(f[0].message.contains("(at app level)"));
        let inv = inventory(vec![app(app_level, vec![pvc("Replace=false")])]);
        assert!(check(&ReplaceOnStateful, &inv, &Config::default()).is_empty());
    }
}
