//! GL021 invalid-app-spec: an Application whose spec Argo CD refuses to
//! sync. Its comparison raises `InvalidSpecError` and every sync fails
//! until the spec is fixed: a wedge, not a quiet no-op.
//!
//! The cause modelled: no `destination.namespace` while the app renders a
//! namespaced object that names none (AC `controller/state.go`
//! `CompareAppState`: "Namespace for … is missing", after
//! `NormalizeTargetObjects` found no namespace to give it;
//! `controller/sync.go` `SyncAppState` stops on `InvalidSpecError`). See
//! [`crate::plan::namespace_missing`].

use super::analysis::{app_in_scope, rendered_apps};
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::finding::{Finding, Severity, Side, Suppression};
use crate::plan::namespace_missing;

/// See `rules/GL021-invalid-app-spec.md`.
pub(crate) struct InvalidAppSpec;

static META: RuleMeta = RuleMeta {
    code: "GL021",
    name: "invalid-app-spec",
    category: Category::Change,
    default_severity: Severity::Error,
    mode: Mode::Single,
    doc: include_str!("../../rules/GL021-invalid-app-spec.md"),
    severity_note: "",
    suppression: Suppression::REPOSITORY,
};

/// Objects named in a message.
const SHOWN: usize = 3;

impl Rule for InvalidAppSpec {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        for app in rendered_apps(cx) {
            let missing = namespace_missing(app, &cx.head.scopes);
            if missing.is_empty()
                || !(app_in_scope(cx, app) || missing.iter().any(|m| cx.in_scope(&app.key, &m.id)))
            {
                continue;
            }
            let listed = crate::limits::first_and_more(
                missing.iter().map(|m| format!("`{}`", m.id)),
                SHOWN,
                ", ",
            );
            let message = format!(
                "every sync of `{}` is refused (InvalidSpecError \"Namespace for … is missing\"): its Application has no `destination.namespace` and it renders the namespaced {listed} without a namespace, so nothing is pruned, created or updated until the spec is fixed",
                app.display_name(),
            );
            out.push(
                Finding::new(&META, message)
                    .app(app.display_name())
                    .at(Side::Head, app.origin.file.as_deref(), app.origin.line)
                    .help("set `spec.destination.namespace` on the Application, or give every namespaced manifest its `metadata.namespace`"),
            );
        }
    }
}
