//! Acknowledging an intended deletion without disabling the rule that
//! reports it: a `gitops-lint.io/allow-prune: "reason"` annotation on the
//! object in the base revision, or a `Gitops-Lint-Allow: Kind/namespace/name`
//! trailer in a commit of the range.
//!
//! Acknowledged findings stay in the report, marked, and never fail a run.
//! A trailer that matches no finding is itself reported (GL014), so a typo
//! cannot silently acknowledge nothing. Knows nothing of output formats.

use crate::argocd::Inventory;
use crate::config::Config;
use crate::finding::{AckSource, Acknowledgement, Finding};
use crate::manifest::{annotation, ResourceId};
use crate::plan::Plan;
use crate::rules::{self, Category};

/// The annotation that acknowledges the deletion of the object carrying it.
/// Read from the base revision, like every protection: it must be in the
/// cluster's version of the object, not added by the change that deletes it.
pub const ANN_ALLOW_PRUNE: &str = "gitops-lint.io/allow-prune";

/// The commit trailer key (matched case-insensitively, as git does).
pub const TRAILER: &str = "Gitops-Lint-Allow";

/// What an acknowledgement names: `Kind/namespace/name`, `Kind/name` for a
/// cluster-scoped object, or `Application/name` for an app deletion. A group
/// may follow the kind after a dot (`Cluster.postgresql.cnpg.io/db/main`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Kind.
    pub kind: String,
    /// API group, when given.
    pub group: Option<String>,
    /// Namespace; `None` for the two-part form.
    pub namespace: Option<String>,
    /// Name.
    pub name: String,
}

impl Target {
    /// Parses `Kind[.group]/[namespace/]name`.
    ///
    /// # Errors
    /// Anything else, with what was expected.
    pub fn parse(s: &str) -> Result<Target, String> {
        let parts: Vec<&str> = s.split('/').collect();
        let (kind, namespace, name) = match parts.as_slice() {
            [k, n] => (*k, None, *n),
            [k, ns, n] => (*k, Some((*ns).to_string()), *n),
            _ => return Err(format!("`{s}` is not `Kind/namespace/name` or `Kind/name`")),
        };
        if kind.is_empty() || name.is_empty() || namespace.as_deref() == Some("") {
            return Err(format!("`{s}` has an empty part"));
        }
        let (kind, group) = match kind.split_once('.') {
            Some((k, g)) => (k.to_string(), Some(g.to_string())),
            None => (kind.to_string(), None),
        };
        Ok(Target {
            kind,
            group,
            namespace,
            name: name.to_string(),
        })
    }

    fn matches_resource(&self, id: &ResourceId) -> bool {
        self.kind.eq_ignore_ascii_case(&id.kind)
            && self.group.as_ref().is_none_or(|g| *g == id.group)
            && self.namespace.as_deref().unwrap_or("") == id.namespace
            && self.name == id.name
    }

    /// An app deletion named as `Application/name` or `Application/namespace/name`.
    fn matches_app(&self, app_display: &str) -> bool {
        if !self.kind.eq_ignore_ascii_case("Application") {
            return false;
        }
        match &self.namespace {
            None => app_display == self.name,
            // Display names omit the default `argocd` namespace.
            Some(ns) if ns == "argocd" => app_display == self.name,
            Some(ns) => app_display == format!("{ns}/{}", self.name),
        }
    }

    /// Whether this target names what `f` is about.
    #[must_use]
    pub fn matches(&self, f: &Finding) -> bool {
        match &f.resource {
            Some(id) => self.matches_resource(id),
            None => f.app.as_deref().is_some_and(|a| self.matches_app(a)),
        }
    }
}

/// One `Gitops-Lint-Allow` trailer found in the range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trailer {
    /// The value as written.
    pub raw: String,
    /// What it names, or why it could not be parsed.
    pub target: Result<Target, String>,
    /// Free text after the target, if any.
    pub reason: Option<String>,
}

/// Every `Gitops-Lint-Allow:` line in commit messages. The value is a
/// target, optionally followed by a reason: `Kind/ns/name moving to new-db`.
#[must_use]
pub fn trailers(messages: &[String]) -> Vec<Trailer> {
    let mut out = Vec::new();
    for m in messages {
        for line in m.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            if !key.trim().eq_ignore_ascii_case(TRAILER) {
                continue;
            }
            let value = value.trim();
            let (target, reason) = match value.split_once(char::is_whitespace) {
                Some((t, r)) => (t, Some(r.trim().to_string()).filter(|r| !r.is_empty())),
                None => (value, None),
            };
            out.push(Trailer {
                raw: value.to_string(),
                target: Target::parse(target),
                reason,
            });
        }
    }
    out
}

/// Whether a finding is about a deletion, the only thing an acknowledgement covers.
fn acknowledgeable(f: &Finding) -> bool {
    matches!(f.rule.category, Category::Prune | Category::Deletion)
}

fn app_display(key: &str, base: &Inventory) -> String {
    base.apps
        .get(key)
        .map_or_else(|| key.to_string(), crate::argocd::App::display_name)
}

/// Marks acknowledged findings and appends a GL014 finding for every trailer
/// that matches nothing (unless configuration disables GL014). Returns the
/// notes every report shows: the deletions acknowledged only by the change's
/// own trailers, or the trailers ignored because the base configuration
/// switched them off.
pub fn apply(
    findings: &mut Vec<Finding>,
    plan: &Plan,
    base: &Inventory,
    trailers: &[Trailer],
    config: &Config,
) -> Vec<String> {
    let mut notes = Vec::new();
    let trailers = if config.acknowledge_trailers || trailers.is_empty() {
        trailers
    } else {
        notes.push(format!(
            "{} `{TRAILER}` commit trailer(s) ignored: the base revision's configuration sets `acknowledge: {{trailers: false}}`",
            trailers.len()
        ));
        &[]
    };
    // Annotations on the objects a sync deletes, read from the base revision.
    let mut annotated: Vec<(String, &ResourceId, &str)> = Vec::new();
    for p in &plan.prunes {
        if let Some(reason) = p.base.annotation(ANN_ALLOW_PRUNE) {
            annotated.push((app_display(&p.app, base), &p.id, reason));
        }
    }
    // An annotation on a deleted Application acknowledges its deletion.
    let mut annotated_apps: Vec<(String, &str)> = Vec::new();
    for d in &plan.deleted_apps {
        if let Some(app) = base.apps.get(&d.app) {
            if let Some(reason) = annotation(&app.object, ANN_ALLOW_PRUNE) {
                annotated_apps.push((app.display_name(), reason));
            }
        }
    }
    let mut used = vec![false; trailers.len()];
    for f in findings.iter_mut() {
        if !acknowledgeable(f) || f.acknowledged.is_some() {
            continue;
        }
        let by_annotation = match &f.resource {
            Some(id) => annotated
                .iter()
                .find(|(app, rid, _)| *rid == id && f.app.as_deref().is_none_or(|a| a == app))
                .map(|(_, _, r)| *r),
            None => annotated_apps
                .iter()
                .find(|(app, _)| f.app.as_deref() == Some(app.as_str()))
                .map(|(_, r)| *r),
        };
        if let Some(reason) = by_annotation {
            f.acknowledged = Some(Acknowledgement::new(
                AckSource::Annotation,
                format!("{ANN_ALLOW_PRUNE}: {reason}"),
            ));
            continue;
        }
        for (i, t) in trailers.iter().enumerate() {
            if t.target.as_ref().is_ok_and(|target| target.matches(f)) {
                used[i] = true;
                if f.acknowledged.is_none() {
                    // As written, target included: a reviewer reads what the
                    // author named, not only the reason given.
                    f.acknowledged = Some(Acknowledgement::new(
                        AckSource::Trailer,
                        format!("{TRAILER}: {}", t.raw),
                    ));
                }
            }
        }
    }
    if let Some(note) = trailer_note(findings) {
        notes.push(note);
    }
    let meta = rules::unused_acknowledgement_meta();
    if !config.rule_enabled(meta) {
        return notes;
    }
    let severity = config
        .severity
        .iter()
        .find(|(k, _)| rules::find(k).is_some_and(|r| r.meta().code == meta.code))
        .map_or(meta.default_severity, |(_, s)| *s);
    for (t, used) in trailers.iter().zip(used) {
        if used {
            continue;
        }
        let message = match &t.target {
            Err(e) => format!("commit trailer `{TRAILER}: {}` cannot be read: {e}", t.raw),
            Ok(_) => format!(
                "commit trailer `{TRAILER}: {}` matches no deletion reported in this change",
                t.raw
            ),
        };
        findings.push(
            Finding::new(meta, message)
                .severity(severity)
                .help("name the object as `Kind/namespace/name` (or `Kind/name` when cluster-scoped) exactly as a finding reports it, or remove the trailer"),
        );
    }
    findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    notes
}

/// Deletions acknowledged only by a commit trailer of the change: its author
/// chose to accept them, so every report says so above the findings.
fn trailer_note(findings: &[Finding]) -> Option<String> {
    const LISTED: usize = 10;
    let by_trailer: Vec<String> = findings
        .iter()
        .filter(|f| f.acknowledged.as_ref().is_some_and(|a| a.by_author()))
        .map(|f| {
            let what = match (&f.resource, &f.app) {
                (Some(r), _) => format!("`{r}`"),
                (None, Some(a)) => format!("Application `{a}`"),
                (None, None) => f.rule.code.to_string(),
            };
            format!("{what} ({})", f.rule.code)
        })
        .collect();
    if by_trailer.is_empty() {
        return None;
    }
    let more = by_trailer.len().saturating_sub(LISTED);
    let mut list = by_trailer[..by_trailer.len().min(LISTED)].join(", ");
    if more > 0 {
        list.push_str(&format!(" and {more} more"));
    }
    Some(format!(
        "{} deletion(s) acknowledged only by `{TRAILER}` commit trailers of this change, written by its author: {list}",
        by_trailer.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_parse_in_every_documented_form() {
        let t = Target::parse("PersistentVolumeClaim/payments/data-old").expect("parses");
        assert_eq!(t.namespace.as_deref(), Some("payments"));
        assert_eq!(t.name, "data-old");
        let c = Target::parse("Cluster.postgresql.cnpg.io/db/main").expect("parses");
        assert_eq!(c.group.as_deref(), Some("postgresql.cnpg.io"));
        assert_eq!(c.kind, "Cluster");
        let ns = Target::parse("Namespace/payments").expect("parses");
        assert_eq!((ns.namespace, ns.name.as_str()), (None, "payments"));
        assert!(Target::parse("data-old").is_err());
        assert!(Target::parse("a/b/c/d").is_err());
        assert!(Target::parse("Kind//name").is_err());
    }

    #[test]
    fn trailers_are_found_case_insensitively_with_reasons() {
        let msgs = vec![
            "Drop the old volume\n\nThe data moved.\n\ngitops-lint-allow: PersistentVolumeClaim/payments/data-old moved to data-new\nSigned-off-by: A <a@b>\n".to_string(),
            "Other\n\nGitops-Lint-Allow: Namespace/legacy\n".to_string(),
        ];
        let t = trailers(&msgs);
        assert_eq!(t.len(), 2);
        assert_eq!(t[0].reason.as_deref(), Some("moved to data-new"));
        assert_eq!(t[1].reason, None);
        assert!(t[1].target.is_ok());
    }
}
