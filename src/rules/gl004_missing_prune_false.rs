//! GL004 missing-prune-false: a stateful resource that nothing keeps from
//! being deleted by an automated prune or a cascading app deletion.

use goyaml::json::Pointer as _;
use serde_json::Value;

use super::analysis::{at_resource, scoped_resources};
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::argocd::PruneMode;
use crate::finding::Suppression;
use crate::finding::{Finding, Severity};
use crate::manifest::Manifest;
use crate::plan::{app_prunes, cascade_protection, prune_protection};

/// See `rules/GL004-missing-prune-false.md`.
pub(crate) struct MissingPruneFalse;

static META: RuleMeta = RuleMeta {
    code: "GL004",
    name: "missing-prune-false",
    category: Category::Prune,
    default_severity: Severity::Warning,
    severity_note: "",
    mode: Mode::Single,
    doc: include_str!("../../rules/GL004-missing-prune-false.md"),
    suppression: Suppression::OBJECT,
};

/// What deleting `m` loses, when it is stateful.
fn loss(m: &Manifest, cx: &RuleContext<'_>) -> Option<&'static str> {
    match (m.id.group.as_str(), m.id.kind.as_str()) {
        ("", "PersistentVolumeClaim") => Some("its volume"),
        ("", "PersistentVolume") => Some("the volume"),
        ("", "Namespace") => Some("everything in it"),
        ("apps", "StatefulSet") => {
            Some("its pods, and its volumes if its claims are deleted with it")
        }
        ("", "Service")
            if m.value.at("/spec/type").and_then(Value::as_str) == Some("LoadBalancer") =>
        {
            Some("its load balancer and external address")
        }
        (g, k) if cx.config.is_extra_stateful(g, k) => Some("its data (configured as stateful)"),
        _ => None,
    }
}

impl Rule for MissingPruneFalse {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        let tracking = cx.tracking();
        for (app, m) in scoped_resources(cx) {
            // What a deletion loses is read from the id first: an
            // app-of-apps' thousands of Applications lose nothing listed,
            // and whether the app prunes one asks its tracking.
            let Some(lost) = loss(m, cx) else { continue };
            if !app_prunes(m, app, &tracking) {
                continue;
            }
            let name = app.display_name();
            if app.spec.prune_mode == PruneMode::Automated
                && prune_protection(m, app, cx.config).is_none()
            {
                out.push(
                    at_resource(
                        Finding::new(
                            &META,
                            format!(
                                "`{}` has no `Prune=false` and `{name}` prunes automatically: if its manifest ever leaves the render (a path, namespace or name change), Argo CD deletes it and {lost}",
                                m.id
                            ),
                        ),
                        app,
                        m,
                    )
                    .help("add `argocd.argoproj.io/sync-options: Prune=false` to it (protection is read from the object in the cluster, so it must be synced before any change that drops the manifest)"),
                );
            }
            if app.spec.cascade_finalizer.is_some()
                && cascade_protection(m, app, cx.config).is_none()
            {
                out.push(
                    at_resource(
                        Finding::new(
                            &META,
                            format!(
                                "`{}` has no `Delete=false` and `{name}` has the resources finalizer: deleting the Application deletes it and {lost}",
                                m.id
                            ),
                        ),
                        app,
                        m,
                    )
                    .help("add `Delete=false` to its `argocd.argoproj.io/sync-options` (or `helm.sh/resource-policy: keep`); `Prune=false` does not stop a cascade"),
                );
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

    fn pvc(ann: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "annotations": ann}})
    }

    #[test]
    fn automated_prune_and_finalizer_each_need_their_option() {
        let obj = application(
            "db",
            json!({"syncPolicy": {"automated": {"prune": true}}}),
            true,
        );
        let inv = inventory(vec![app(
            obj,
            vec![
                pvc(json!({})),
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
            ],
        )]);
        let f = check(&MissingPruneFalse, &inv, &Config::default());
        let m = messages(&f);
        assert_eq!(m.len(), 2, "{m:?}");
        assert!(m[0].starts_with("`PersistentVolumeClaim ns/data` has no `Prune=false`"));
        assert!(m[1].contains("has no `Delete=false`"));
    }

    #[test]
    fn options_spelled_right_protect_and_misspelled_ones_do_not() {
        let obj = application(
            "db",
            json!({"syncPolicy": {"automated": {"prune": true}}}),
            true,
        );
        let ok = inventory(vec![app(
            obj.clone(),
            vec![pvc(
                json!({"argocd.argoproj.io/sync-options": "Prune=false,Delete=false"}),
            )],
        )]);
        assert!(check(&MissingPruneFalse, &ok, &Config::default()).is_empty());
        let bad = inventory(vec![app(
            obj,
            vec![pvc(
                json!({"argocd.argoproj.io/sync-options": "prune=false,Delete=false"}),
            )],
        )]);
        assert_eq!(check(&MissingPruneFalse, &bad, &Config::default()).len(), 1);
    }

    #[test]
    fn manual_apps_without_finalizer_are_not_reported() {
        let obj = application("db", json!({}), false);
        let inv = inventory(vec![app(obj, vec![pvc(json!({}))])]);
        assert!(check(&MissingPruneFalse, &inv, &Config::default()).is_empty());
    }
}
