//! GL013 mass-prune: a sync that prunes a large share of an app at once,
//! which Argo CD's `allowEmpty` guard does not stop unless it is all of it.

use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::argocd::PruneMode;
use crate::config::{Checker, RuleSettings, RuleSettingsSpec};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity, Side};
use crate::plan::{app_prunes, PruneReason};

/// See `rules/GL013-mass-prune.md`.
pub(crate) struct MassPrune;

static META: RuleMeta = RuleMeta {
    code: "GL013",
    name: "mass-prune",
    category: Category::Prune,
    default_severity: Severity::Warning,
    severity_note: "error when an automated sync prunes",
    mode: Mode::Diff,
    doc: include_str!("../../rules/GL013-mass-prune.md"),
    suppression: Suppression::CHANGE,
};

/// `massPrune:` of `.gitops-lint.yaml`: when a prune is "mass".
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct MassPruneSettings {
    /// `ratio`: share of an app's resources (0–1) above which a prune is "mass".
    ratio: f64,
    /// `count`: absolute count above which a prune is "mass".
    count: usize,
}

impl Default for MassPruneSettings {
    fn default() -> Self {
        MassPruneSettings {
            ratio: 0.5,
            count: 20,
        }
    }
}

static SETTINGS: RuleSettingsSpec = RuleSettingsSpec {
    keys: &["massPrune"],
    read: read_settings,
};

const MASS_PRUNE_KEYS: &[&str] = &["ratio", "count"];

/// `massPrune:` read, each problem reported.
fn read_settings(c: &mut Checker<'_>, file: &Map<String, Value>) -> Arc<dyn RuleSettings> {
    let mut out = MassPruneSettings::default();
    if let Some(m) = file.get("massPrune").filter(|v| !v.is_null()) {
        c.keys(&["massPrune"], m, MASS_PRUNE_KEYS);
        match m.get("ratio") {
            None | Some(Value::Null) => {}
            Some(r) => match r.as_f64() {
                Some(r) if (0.0..=1.0).contains(&r) => out.ratio = r,
                _ => c.at(
                    &["massPrune", "ratio"],
                    format!("massPrune.ratio `{r}` is not a number between 0 and 1"),
                ),
            },
        }
        match m.get("count") {
            None | Some(Value::Null) => {}
            Some(n) => match n.as_u64().and_then(|n| usize::try_from(n).ok()) {
                Some(n) => out.count = n,
                None => c.at(
                    &["massPrune", "count"],
                    format!("massPrune.count `{n}` is not a whole number"),
                ),
            },
        }
    }
    Arc::new(out)
}

impl Rule for MassPrune {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn settings(&self) -> Option<&'static RuleSettingsSpec> {
        Some(&SETTINGS)
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        let (Some(plan), Some(base)) = (cx.plan, cx.base) else {
            return;
        };
        let settings = cx.config.rule_settings::<MassPruneSettings>();
        for (key, app) in &base.apps {
            let pruned: Vec<_> = plan
                .prunes_of(key)
                .iter()
                .filter(|p| p.reason != PruneReason::AppDeleted && p.protection.is_none())
                .collect();
            if pruned.len() < 2 {
                continue;
            }
            let total = app
                .resources
                .iter()
                .filter(|m| app_prunes(m, app, &plan.tracking))
                .count()
                .max(pruned.len());
            #[allow(clippy::cast_precision_loss)]
            let share = pruned.len() as f64 / total as f64;
            // A partial app's resources are a part of its whole: the share
            // of it a prune takes is unknown, so only the count judges.
            let partial = !app.status.left_out().is_empty();
            if (partial || share <= settings.ratio) && pruned.len() <= settings.count {
                continue;
            }
            let name = app.display_name();
            let mode = pruned.first().map_or(PruneMode::Manual, |p| p.mode);
            let head_renders_nothing = cx
                .head
                .apps
                .get(key)
                .is_none_or(|h| h.resources.iter().all(|m| m.hook().is_hook));
            let (how, tail, severity) = match mode {
                _ if plan.auto_sync_refused.contains(key) => (
                    "auto-sync refuses to prune every resource (`allowEmpty` is false), but a manual sync with prune deletes",
                    "",
                    Severity::Warning,
                ),
                PruneMode::Automated if head_renders_nothing => (
                    "automated sync deletes",
                    "; `allowEmpty: true` lets auto-sync prune every resource",
                    Severity::Error,
                ),
                PruneMode::Automated if pruned.len() == total => (
                    "automated sync deletes",
                    "; Argo CD's `allowEmpty` guard does not stop it because the app still renders other resources",
                    Severity::Error,
                ),
                PruneMode::Automated => (
                    "automated sync deletes",
                    "; Argo CD's `allowEmpty` guard only stops a prune of all of them",
                    Severity::Error,
                ),
                _ => ("a sync with prune deletes", "", Severity::Warning),
            };
            let mut kinds: std::collections::BTreeMap<&str, usize> =
                std::collections::BTreeMap::new();
            for p in &pruned {
                *kinds.entry(p.id.kind.as_str()).or_default() += 1;
            }
            let summary: Vec<String> = kinds.iter().map(|(k, n)| format!("{n} {k}")).collect();
            let first = pruned.first().map(|p| &p.base.origin);
            let message = if partial {
                format!(
                    "{how} {} of the resources of `{name}` ({}), of which {total} are known: the sources its render left out are not analysed{tail}",
                    pruned.len(),
                    summary.join(", ")
                )
            } else {
                format!(
                    "{how} {} of the {total} resources of `{name}` ({:.0}%: {}){tail}",
                    pruned.len(),
                    share * 100.0,
                    summary.join(", ")
                )
            };
            out.push(
                Finding::new(&META, message)
                .severity(severity)
                .app(name)
                .at(
                    Side::Base,
                    first.and_then(|o| o.file.as_deref()).or(app.origin.file.as_deref()),
                    first.and_then(|o| o.line).or(app.origin.line),
                )
                .help("check that the render at head is complete (a moved path, a dropped kustomization entry, a renamed namespace); if the removal is intended, split it or sync it by hand with a preview"),
            );
        }
    }
}
