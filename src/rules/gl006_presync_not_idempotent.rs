//! GL006 presync-not-idempotent: a PreSync or Sync hook whose work fails or
//! repeats itself when it runs again, as it does on every sync and retry.

use super::analysis::hook_work::{self, Unsafe};
use super::analysis::podspec::{self, RefKind};
use super::analysis::{at_resource, rendered_apps};
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::argocd::App;
use crate::finding::Suppression;
use crate::finding::{Finding, Severity};
use crate::manifest::{HookType, Manifest, ResourceId};

/// See `rules/GL006-presync-not-idempotent.md`.
pub(crate) struct PresyncNotIdempotent;

static META: RuleMeta = RuleMeta {
    code: "GL006",
    name: "presync-not-idempotent",
    category: Category::Hooks,
    default_severity: Severity::Warning,
    severity_note: "",
    mode: Mode::Single,
    doc: include_str!("../../rules/GL006-presync-not-idempotent.md"),
    suppression: Suppression::OBJECT,
};

/// Whether the hook or a ConfigMap its pods read was touched by the change.
fn in_scope(cx: &RuleContext<'_>, app: &App, m: &Manifest) -> bool {
    if cx.in_scope(&app.key, &m.id) {
        return true;
    }
    let Some(spec) = podspec::pod_spec(m) else {
        return false;
    };
    podspec::references(spec)
        .iter()
        .filter(|r| r.kind == RefKind::ConfigMap)
        .any(|r| {
            let id = ResourceId {
                group: String::new(),
                kind: "ConfigMap".into(),
                namespace: m.id.namespace.clone(),
                name: r.name.clone(),
            };
            cx.in_scope(&app.key, &id)
        })
}

fn describe(p: &Unsafe) -> String {
    format!("`{}` ({}) {}", p.statement, p.place, p.why)
}

impl Rule for PresyncNotIdempotent {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        for app in rendered_apps(cx).filter(|a| cx.app_in_scope(&a.key)) {
            for m in app.resources.iter() {
                let hook = m.hook();
                let phases: Vec<&str> = hook
                    .types
                    .iter()
                    .filter_map(|t| match t {
                        HookType::PreSync => Some("PreSync"),
                        HookType::Sync => Some("Sync"),
                        _ => None,
                    })
                    .collect();
                if phases.is_empty() || !in_scope(cx, app, m) {
                    continue;
                }
                let work = hook_work::analyze(m, &app.resources);
                if work.migration_tool.is_some() || work.problems.is_empty() {
                    continue;
                }
                let shown: Vec<String> = work.problems.iter().take(3).map(describe).collect();
                let more = match work.problems.len() {
                    n if n > 3 => format!(" (and {} more)", n - 3),
                    _ => String::new(),
                };
                out.push(
                    at_resource(
                        Finding::new(
                            &META,
                            format!(
                                "{} hook `{}` runs on every sync and retry but is not safe to run twice: {}{more}",
                                phases.join("/"),
                                m.id,
                                shown.join("; ")
                            ),
                        ),
                        app,
                        m,
                    )
                    .help("make each step idempotent (`IF NOT EXISTS`, `ON CONFLICT DO NOTHING`, `kubectl apply`, `mkdir -p`, `helm upgrade --install`), or run a versioned migration tool such as Flyway, Liquibase or golang-migrate"),
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
    use serde_json::{json, Value};

    fn job(hook: &str, container: Value, volumes: Value) -> Value {
        json!({"apiVersion": "batch/v1", "kind": "Job",
            "metadata": {"name": "init", "annotations": {"argocd.argoproj.io/hook": hook}},
            "spec": {"template": {"spec": {"restartPolicy": "Never",
                "containers": [container], "volumes": volumes}}}})
    }

    #[test]
    fn sql_in_a_mounted_config_map_is_read_with_lines() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "db-init"},
            "data": {"init.sql": "-- users\nCREATE TABLE users (id int);\nINSERT INTO roles VALUES ('admin');\n"}});
        let j = job(
            "PreSync",
            json!({"name": "psql", "image": "postgres:16", "command": ["psql", "-f", "/sql/init.sql"],
                "volumeMounts": [{"name": "sql", "mountPath": "/sql"}]}),
            json!([{"name": "sql", "configMap": {"name": "db-init"}}]),
        );
        let inv = inventory(vec![app(application("a", json!({}), false), vec![cm, j])]);
        let m = messages(&check(&PresyncNotIdempotent, &inv, &Config::default()));
        assert_eq!(m.len(), 1);
        assert_eq!(
            m[0],
            "PreSync hook `Job ns/init` runs on every sync and retry but is not safe to run twice: `CREATE TABLE users` (line 2 of `init.sql` in ConfigMap `db-init`) without IF NOT EXISTS fails when it already exists; `INSERT INTO roles VALUES` (line 3 of `init.sql` in ConfigMap `db-init`) without ON CONFLICT or a NOT EXISTS guard inserts the rows again (or fails on a unique key)"
        );
    }

    #[test]
    fn post_sync_hooks_and_migration_tools_are_not_reported() {
        let c = json!({"name": "c", "image": "x", "command": ["sh", "-c", "kubectl create ns a"]});
        let inv = inventory(vec![app(
            application("a", json!({}), false),
            vec![job("PostSync", c.clone(), json!([]))],
        )]);
        assert!(check(&PresyncNotIdempotent, &inv, &Config::default()).is_empty());
        let c = json!({"name": "c", "image": "x", "command": ["sh", "-c", "kubectl create ns a; flyway migrate"]});
        let inv = inventory(vec![app(
            application("a", json!({}), false),
            vec![job("PreSync", c, json!([]))],
        )]);
        assert!(check(&PresyncNotIdempotent, &inv, &Config::default()).is_empty());
    }
}
