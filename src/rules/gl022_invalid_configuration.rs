//! GL022 invalid-configuration: a change whose own configuration
//! (`.gitops-lint.yaml`, or the file `--config` names) does not load. A diff
//! is judged by the base revision's configuration, so the change itself
//! passes; once merged, every later run would stop on it.

use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity, Side};

/// See `rules/GL022-invalid-configuration.md`.
pub(crate) struct InvalidConfiguration;

static META: RuleMeta = RuleMeta {
    code: "GL022",
    name: "invalid-configuration",
    category: Category::Input,
    default_severity: Severity::Error,
    mode: Mode::Diff,
    doc: include_str!("../../rules/GL022-invalid-configuration.md"),
    severity_note: "",
    // What the change does to the configuration: an ignored path or a
    // fingerprint seen at base must not hide it.
    suppression: Suppression::CHANGE,
};

impl Rule for InvalidConfiguration {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        let Some(problem) = cx.head_config else {
            return;
        };
        out.push(
            Finding::new(
                &META,
                format!(
                    "`{}` does not load at head, so every run after this change is merged would stop (exit status 2): {}",
                    problem.file, problem.message
                ),
            )
            .at(Side::Head, Some(&problem.file), problem.line)
            .help(
                "fix the configuration in this change; `gitops-lint check WORKTREE` (or `check HEAD`) reads it as a run after the merge would",
            ),
        );
    }
}
