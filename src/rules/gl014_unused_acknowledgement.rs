//! GL014 unused-acknowledgement: a `Gitops-Lint-Allow` trailer that matches
//! no reported deletion, or a `gitops-lint.io/ignore` annotation naming a
//! rule that reports nothing on its object.

use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity};

/// See `rules/GL014-unused-acknowledgement.md`.
pub(crate) struct UnusedAcknowledgement;

pub(super) static META: RuleMeta = RuleMeta {
    code: "GL014",
    name: "unused-acknowledgement",
    category: Category::Input,
    default_severity: Severity::Warning,
    severity_note: "",
    mode: Mode::Single,
    doc: include_str!("../../rules/GL014-unused-acknowledgement.md"),
    suppression: Suppression::REPOSITORY,
};

impl Rule for UnusedAcknowledgement {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    /// Its findings need every other rule's findings first, so they are made
    /// by `crate::suppress::apply` after all rules ran.
    fn check(&self, _cx: &RuleContext<'_>, _out: &mut Vec<Finding>) {}
}
