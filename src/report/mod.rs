//! Output: one emitter per format, findings and plan in, text out.
//!
//! Knows nothing of how findings were made.

pub mod human;
pub mod json;

use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

use crate::argocd::{AppStatus, Inventory, PruneMode};
use crate::finding::{Finding, Severity, Side};
use crate::manifest::ResourceId;
use crate::plan::Plan;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people: the plan, then findings with source snippets.
    Human,
    /// The stable JSON contract (version 1).
    Json,
}

/// One app as reported.
#[derive(Debug, Clone)]
pub struct AppRow {
    /// Display name.
    pub name: String,
    /// Namespace of the Application object.
    pub namespace: String,
    /// Source path (or chart).
    pub source: String,
    /// `rendered`, `unrendered` or `external`.
    pub status: &'static str,
    /// Prune mode.
    pub prune_mode: PruneMode,
}

/// One prune as reported.
#[derive(Debug, Clone)]
pub struct PruneRow {
    /// App display name.
    pub app: String,
    /// The resource.
    pub resource: ResourceId,
    /// Reason (kebab-case).
    pub reason: &'static str,
    /// What protects it, if anything.
    pub protection: Option<String>,
    /// How the deletion happens.
    pub mode: PruneMode,
    /// Reason detail (new name, new owner...).
    pub detail: Option<String>,
}

/// Everything an emitter needs.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Command that produced it: `diff` or `check`.
    pub command: String,
    /// Base commit (diff only).
    pub base: Option<String>,
    /// Head commit, `INDEX` or `WORKTREE`.
    pub head: String,
    /// Apps at head (and apps deleted at head).
    pub apps: Vec<AppRow>,
    /// Prunes.
    pub prunes: Vec<PruneRow>,
    /// Findings, sorted.
    pub findings: Vec<Finding>,
    /// Assumptions worth telling the user.
    pub notes: Vec<String>,
    /// File texts for snippets, by side and path.
    pub files: BTreeMap<(Side, String), Arc<str>>,
}

fn short_name(key: &str) -> String {
    key.strip_prefix("argocd/").unwrap_or(key).to_string()
}

impl Report {
    /// Builds the report rows from inventories and the plan.
    #[must_use]
    pub fn new(
        command: &str,
        base: Option<(&str, &Inventory)>,
        head: (&str, &Inventory),
        plan: Option<&Plan>,
        findings: Vec<Finding>,
    ) -> Report {
        let mut apps: Vec<AppRow> = head
            .1
            .apps
            .values()
            .map(|a| AppRow {
                name: a.display_name(),
                namespace: a.spec.namespace.clone(),
                source: a.source_path(),
                status: a.status.as_str(),
                prune_mode: if matches!(a.status, AppStatus::External(_)) {
                    PruneMode::None
                } else {
                    a.spec.prune_mode
                },
            })
            .collect();
        if let Some((_, b)) = base {
            for a in b
                .apps
                .values()
                .filter(|a| !head.1.apps.contains_key(&a.key))
            {
                apps.push(AppRow {
                    name: a.display_name(),
                    namespace: a.spec.namespace.clone(),
                    source: a.source_path(),
                    status: a.status.as_str(),
                    prune_mode: a.spec.prune_mode,
                });
            }
        }
        apps.sort_by(|x, y| (&x.namespace, &x.name).cmp(&(&y.namespace, &y.name)));
        let prunes = plan
            .map(|p| {
                p.prunes
                    .iter()
                    .map(|p| PruneRow {
                        app: short_name(&p.app),
                        resource: p.id.clone(),
                        reason: p.reason.as_str(),
                        protection: p.protection.clone(),
                        mode: p.mode,
                        detail: p.detail.clone(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut notes: Vec<String> = head.1.notes.clone();
        if let Some((_, b)) = base {
            for n in &b.notes {
                if !notes.contains(n) {
                    notes.push(n.clone());
                }
            }
        }
        Report {
            command: command.to_string(),
            base: base.map(|(r, _)| r.to_string()),
            head: head.0.to_string(),
            apps,
            prunes,
            findings,
            notes,
            files: BTreeMap::new(),
        }
    }

    /// Counts by severity (acknowledged findings excluded).
    #[must_use]
    pub fn counts(&self) -> (usize, usize, usize) {
        let n = |s: Severity| {
            self.findings
                .iter()
                .filter(|f| f.severity == s && f.acknowledged.is_none())
                .count()
        };
        (n(Severity::Error), n(Severity::Warning), n(Severity::Info))
    }

    /// Whether any unacknowledged finding is at or above `level`.
    #[must_use]
    pub fn fails_at(&self, level: Option<Severity>) -> bool {
        let Some(level) = level else { return false };
        self.findings
            .iter()
            .any(|f| f.acknowledged.is_none() && f.severity >= level)
    }
}

/// Writes the report in one format.
///
/// # Errors
/// Write failures.
pub fn emit(
    format: Format,
    report: &Report,
    color: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    match format {
        Format::Human => human::emit(report, color, out),
        Format::Json => json::emit(report, out),
    }
}
