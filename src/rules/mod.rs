//! The rule catalog. Each rule is one file: its static facts (`META`) and a
//! `check` over the plan and the inventories. Rules never fail: what cannot
//! be known is a finding (GL000), not an error.

mod gl000_render_failed;
mod gl001_stateful_prune;
mod gl002_app_cascade_delete;
mod gl003_appset_shrink;
mod gl004_missing_prune_false;
mod gl005_unknown_sync_option;
mod gl006_presync_not_idempotent;
mod gl007_hook_can_hang;
mod gl008_wave_dependency_inversion;
mod gl009_replace_on_stateful;
mod gl010_immutable_field_change;
mod gl011_moved_between_apps;
mod gl012_appset_unsafe_policy;
mod gl013_mass_prune;
mod gl014_unused_acknowledgement;
mod gl015_project_denies_app;
mod gl016_missing_namespace;
mod gl017_recreate;
mod gl018_appset_generation_error;
mod gl019_appset_manages_itself;
mod gl020_stateful_hook;
mod gl021_invalid_app_spec;
mod gl022_invalid_configuration;

pub(crate) mod analysis;

use crate::argocd::Inventory;
use crate::config::{Config, RuleCatalog, RuleSettingsSpec};
use crate::finding::Finding;
pub(crate) use crate::finding::{Category, Mode, RuleMeta};
use crate::manifest::ResourceId;
use crate::plan::Plan;

/// What rules read.
pub struct RuleContext<'a> {
    /// The plan (diff only).
    pub(crate) plan: Option<&'a Plan>,
    /// The base inventory (diff only).
    pub(crate) base: Option<&'a Inventory>,
    /// The head inventory (the one revision in `check`).
    pub(crate) head: &'a Inventory,
    /// Configuration (from the base revision in `diff`).
    pub(crate) config: &'a Config,
    /// In `diff` without `--all`: single-revision rules only report on
    /// resources the change created or modified.
    pub(crate) only_changed: bool,
    /// In `diff`: why the head revision's configuration does not load,
    /// when it does not (the base revision's was used).
    pub(crate) head_config: Option<&'a crate::config::ConfigProblem>,
}

impl RuleContext<'_> {
    /// The resource tracking in effect: the plan's, else resolved from the
    /// configuration and the revision checked.
    #[must_use]
    pub(crate) fn tracking(&self) -> crate::argocd::tracking::Tracking {
        match self.plan {
            Some(p) => p.tracking.clone(),
            None => crate::argocd::tracking::Tracking::resolve(
                self.config,
                self.base.unwrap_or(self.head).tracking.as_ref(),
            ),
        }
    }

    /// Whether a single-revision rule should report on this head resource.
    #[must_use]
    pub(crate) fn in_scope(&self, app_key: &str, id: &ResourceId) -> bool {
        if !self.only_changed {
            return true;
        }
        let Some(plan) = self.plan else { return true };
        plan.changes
            .get(app_key)
            .is_some_and(|c| c.created.contains(id) || c.changed.contains(id))
    }

    /// Whether [`RuleContext::in_scope`] may hold for some resource of the
    /// app: a rule that reports only on such resources skips the others'
    /// apps whole (an app-of-apps of 10,000 unchanged Applications is
    /// rendered in every diff).
    #[must_use]
    pub(crate) fn app_in_scope(&self, app_key: &str) -> bool {
        if !self.only_changed {
            return true;
        }
        let Some(plan) = self.plan else { return true };
        plan.changes
            .get(app_key)
            .is_some_and(|c| !c.created.is_empty() || !c.changed.is_empty())
    }
}

/// A rule.
pub trait Rule: Sync {
    /// Static facts.
    fn meta(&self) -> &'static RuleMeta;
    /// Appends findings.
    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>);

    /// The settings the rule alone reads from `.gitops-lint.yaml`: its
    /// keys and how they are read. Most rules have none.
    fn settings(&self) -> Option<&'static RuleSettingsSpec> {
        None
    }

    /// Whether, in this diff, the rule must see the resources of apps left
    /// unrendered as unchanged (they may be what it reports on or what
    /// clears a finding). Most rules look only at what changed.
    fn needs_unchanged_apps(&self, _base: &Inventory, _head: &Inventory, _config: &Config) -> bool {
        false
    }
}

/// Whether an enabled rule needs the apps left unrendered as unchanged.
#[must_use]
pub(crate) fn need_unchanged_apps(base: &Inventory, head: &Inventory, config: &Config) -> bool {
    ALL.iter()
        .any(|r| config.rule_enabled(r.meta()) && r.needs_unchanged_apps(base, head, config))
}

/// Every rule, in code order.
pub static ALL: &[&dyn Rule] = &[
    &gl000_render_failed::RenderFailed,
    &gl001_stateful_prune::StatefulPrune,
    &gl002_app_cascade_delete::AppCascadeDelete,
    &gl003_appset_shrink::AppSetShrink,
    &gl004_missing_prune_false::MissingPruneFalse,
    &gl005_unknown_sync_option::UnknownSyncOption,
    &gl006_presync_not_idempotent::PresyncNotIdempotent,
    &gl007_hook_can_hang::HookCanHang,
    &gl008_wave_dependency_inversion::WaveDependencyInversion,
    &gl009_replace_on_stateful::ReplaceOnStateful,
    &gl010_immutable_field_change::ImmutableFieldChange,
    &gl011_moved_between_apps::MovedBetweenApps,
    &gl012_appset_unsafe_policy::AppSetUnsafePolicy,
    &gl013_mass_prune::MassPrune,
    &gl014_unused_acknowledgement::UnusedAcknowledgement,
    &gl015_project_denies_app::ProjectDeniesApp,
    &gl016_missing_namespace::MissingNamespace,
    &gl017_recreate::Recreates,
    &gl018_appset_generation_error::AppSetGenerationError,
    &gl019_appset_manages_itself::AppSetManagesItself,
    &gl020_stateful_hook::StatefulHook,
    &gl021_invalid_app_spec::InvalidAppSpec,
    &gl022_invalid_configuration::InvalidConfiguration,
];

/// GL014's facts, for the acknowledgement pass that produces its findings.
#[must_use]
pub(crate) fn unused_acknowledgement_meta() -> &'static RuleMeta {
    &gl014_unused_acknowledgement::META
}

/// Finds a rule by code (`GL001`) or name (`stateful-prune`).
#[must_use]
pub(crate) fn find(code_or_name: &str) -> Option<&'static dyn Rule> {
    ALL.iter()
        .copied()
        .find(|r| r.meta().is_named(code_or_name))
}

/// Every rule's facts, in code order, and the settings rules read: what a
/// configuration may name.
#[must_use]
pub(crate) fn catalog() -> RuleCatalog {
    RuleCatalog {
        metas: ALL.iter().map(|r| r.meta()).collect(),
        settings: ALL.iter().filter_map(|r| r.settings()).collect(),
    }
}

/// Runs every enabled rule that fits the mode, applies configured severities,
/// and sorts the findings.
#[must_use]
pub(crate) fn run(cx: &RuleContext<'_>) -> Vec<Finding> {
    run_rules(cx, |_| true)
}

/// [`run`], with only the rules `wanted` picks.
fn run_rules(cx: &RuleContext<'_>, wanted: impl Fn(&RuleMeta) -> bool) -> Vec<Finding> {
    let mut out = Vec::new();
    for rule in ALL {
        let meta = rule.meta();
        if !wanted(meta)
            || !cx.config.rule_enabled(meta)
            || (meta.mode == Mode::Diff && cx.plan.is_none())
        {
            continue;
        }
        let start = out.len();
        rule.check(cx, &mut out);
        for (k, sev) in &cx.config.severity {
            if find(k).is_some_and(|r| r.meta().code == meta.code) {
                for f in &mut out[start..] {
                    f.severity = *sev;
                }
            }
        }
    }
    out.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    out
}

/// What a diff reports, decided here for every rule: the findings the
/// change causes.
///
/// - Diff rules (prunes, cascades, ApplicationSet shrinks, immutable
///   changes, mass prunes) report a difference between the revisions: new
///   by construction, always kept.
/// - GL000 judges its own findings by the failing app's inputs (a failure
///   the change brings is an error, one at both revisions is a warning
///   when the change touches the app's inputs and is not reported when it
///   does not): a fingerprint cannot tell those apart. GL018 does the
///   same for an ApplicationSet that cannot be generated.
/// - Every other single-revision finding whose [`Finding::identity`] (the
///   SARIF fingerprint) a `check` of the base revision also reports is
///   pre-existing, and is dropped: `check` and `--all` show it.
pub(crate) fn drop_pre_existing(findings: &mut Vec<Finding>, base: &Inventory, config: &Config) {
    // Diff rules are new by construction; GL000 and GL018 judge their own
    // findings by what failed at base (a failure the change touches stays
    // reported, which a fingerprint cannot tell): `Suppression`.
    let judged_by_fingerprint = |f: &Finding| f.rule.suppression.by_fingerprint;
    if !findings.iter().any(judged_by_fingerprint) {
        return;
    }
    // An identity starts with its rule's code: only the rules that report
    // such a finding at head can report its twin at base, and a `check` of
    // a large fleet's base by every rule is most of a diff's rule work.
    let codes: std::collections::BTreeSet<&str> = findings
        .iter()
        .filter(|f| judged_by_fingerprint(f))
        .map(|f| f.rule.code)
        .collect();
    let base_cx = RuleContext {
        plan: None,
        base: None,
        head: base,
        config,
        only_changed: false,
        head_config: None,
    };
    let at_base = run_rules(&base_cx, |meta| codes.contains(meta.code));
    let before: std::collections::BTreeSet<_> = at_base.iter().map(Finding::identity).collect();
    findings.retain(|f| !judged_by_fingerprint(f) || !before.contains(&f.identity()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_ascending_and_well_formed() {
        let codes: Vec<&str> = ALL.iter().map(|r| r.meta().code).collect();
        let mut sorted = codes.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(codes, sorted, "codes must be unique and in ascending order");
        for r in ALL {
            let m = r.meta();
            assert!(
                m.code.len() == 5
                    && m.code.starts_with("GL")
                    && m.code[2..].bytes().all(|b| b.is_ascii_digit()),
                "{}",
                m.code
            );
            assert!(
                m.name.bytes().all(|b| b.is_ascii_lowercase() || b == b'-'),
                "{} is not kebab-case",
                m.name
            );
            for bad in ["avoid-", "prefer-", "use-", "do-not-"] {
                assert!(
                    !m.name.starts_with(bad),
                    "{} names the fix, not the hazard",
                    m.name
                );
            }
        }
    }

    #[test]
    fn every_doc_has_its_heading_and_sections() {
        for r in ALL {
            let m = r.meta();
            let heading = format!("# {} {}", m.code, m.name);
            assert_eq!(
                m.doc.lines().next(),
                Some(heading.as_str()),
                "doc of {} must start with `{heading}`",
                m.code
            );
            for section in [
                "## What it does",
                "## Why is this bad?",
                "## Example",
                "## Use instead",
                "## Configuration",
                "## Suppression",
                "## References",
            ] {
                assert!(
                    m.doc.contains(section),
                    "doc of {} lacks `{section}`",
                    m.code
                );
            }
            assert!(
                !m.summary().is_empty(),
                "doc of {} has an empty summary",
                m.code
            );
        }
    }

    /// `explain` prints the doc, so its Suppression section must say how
    /// the rule's findings are really set aside (`crate::suppress`): a
    /// deletion by `gitops-lint.io/allow-prune` or a `Gitops-Lint-Allow`
    /// trailer, a finding about one object by `gitops-lint.io/ignore` naming
    /// the rule, and every doc says whether `gitops-lint.io/ignore` applies.
    #[test]
    fn every_doc_says_how_its_findings_are_set_aside() {
        for r in ALL {
            let m = r.meta();
            let section = m
                .doc
                .split("## Suppression")
                .nth(1)
                .and_then(|s| s.split("\n## ").next())
                .unwrap_or_default();
            assert!(
                section.contains(crate::suppress::ANN_IGNORE),
                "{}: the Suppression section does not mention `{}`",
                m.code,
                crate::suppress::ANN_IGNORE
            );
            let deletion = matches!(m.category, Category::Prune | Category::Deletion)
                && m.mode == crate::finding::Mode::Diff;
            if deletion {
                assert!(
                    section.contains(&format!("{}: ", crate::suppress::TRAILER)),
                    "{}: a deletion rule shows the trailer syntax",
                    m.code
                );
            }
            if m.suppression.on_object {
                assert!(
                    section.contains(&format!("{}: \"{}", crate::suppress::ANN_IGNORE, m.code)),
                    "{}: shows the ignore annotation naming the rule",
                    m.code
                );
            } else {
                assert!(
                    section.contains("does not")
                        || section.contains("never")
                        || section.contains("neither"),
                    "{}: says `gitops-lint.io/ignore` does not apply",
                    m.code
                );
            }
        }
    }

    #[test]
    fn every_rule_doc_file_is_registered() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("rules");
        let mut files: Vec<String> = std::fs::read_dir(dir)
            .expect("rules/ exists")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .filter(|n| n.ends_with(".md"))
            .collect();
        files.sort();
        let expected: Vec<String> = ALL
            .iter()
            .map(|r| format!("{}-{}.md", r.meta().code, r.meta().name))
            .collect();
        assert_eq!(files, expected);
    }
}
