//! GL018 appset-generation-error: an ApplicationSet whose Applications the
//! controller cannot generate or refuses, so it stops managing them.

use super::analysis::appset_resource;
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::argocd::instances::short_key;
use crate::argocd::AppSetEntry;
use crate::finding::Suppression;
use crate::finding::{Finding, Severity, Side};

/// See `rules/GL018-appset-generation-error.md`.
pub(crate) struct AppSetGenerationError;

pub(super) static META: RuleMeta = RuleMeta {
    code: "GL018",
    name: "appset-generation-error",
    category: Category::Change,
    default_severity: Severity::Warning,
    severity_note: "",
    mode: Mode::Single,
    doc: include_str!("../../rules/GL018-appset-generation-error.md"),
    suppression: Suppression::UNJUDGED,
};

/// What the controller says about one ApplicationSet at one revision: the
/// generation error, else the Applications it refuses; empty when it
/// generates cleanly (or only with generators that cannot be evaluated
/// offline, which GL000 reports, and GL003 as unknown deletions).
fn problems(e: &AppSetEntry) -> Vec<String> {
    match &e.expansion {
        Err(err) => vec![err.to_string()],
        Ok(x) => x.notes.clone(),
    }
}

impl Rule for AppSetGenerationError {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        for (key, e) in &cx.head.appsets {
            let now = problems(e);
            if now.is_empty() {
                continue;
            }
            // In a diff, a failure the change neither causes nor touches is
            // pre-existing: the same object failing the same way at base.
            if cx.only_changed {
                if let Some(b) = cx.base.and_then(|b| b.appsets.get(key)) {
                    if b.object == e.object && problems(b) == now {
                        continue;
                    }
                }
            }
            let set = short_key(key);
            let id = appset_resource(key);
            // applicationset_controller.go `Reconcile`: a generation error sets
            // the `ErrorOccurred` condition and returns before any create,
            // update or delete; `validateGeneratedApplications` marks every
            // Application of a duplicated (or empty) name invalid, and only
            // valid ones are created or updated, while deletion is computed
            // from all generated ones, so those names are kept as they are.
            let message = match &e.expansion {
                Err(err) => format!(
                    "ApplicationSet `{set}` cannot generate its Applications ({err}): the controller sets an `ErrorOccurred` condition and creates, updates and deletes nothing until it is fixed"
                ),
                Ok(_) => format!(
                    "ApplicationSet `{set}` generates Applications the controller refuses ({}): it neither creates nor updates them (an existing one is left as it is, not deleted) and reports `ErrorOccurred`",
                    now.join("; ")
                ),
            };
            out.push(
                Finding::new(&META, message)
                    .resource(id)
                    .at(Side::Head, e.origin.file.as_deref(), e.origin.line)
                    .help("fix the generator or template (a duplicated name: make `metadata.name` unique per element, e.g. with the cluster or path in it); `argocd appset generate` shows what it yields"),
            );
        }
    }
}
