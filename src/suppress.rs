//! Setting findings aside after the rules ran: what each rule allows is its
//! [`crate::finding::Suppression`].
//!
//! `ignorePaths` drops findings located in matching files
//! ([`drop_ignored_paths`]).
//!
//! Acknowledging an intended deletion without disabling the rule that
//! reports it: a `gitops-lint.io/allow-prune: "reason"` annotation on the
//! object in the base revision, or a `Gitops-Lint-Allow: Kind/namespace/name`
//! trailer in a commit of the range.
//!
//! Acknowledged findings stay in the report, marked, and never fail a run.
//! A trailer that matches no finding is itself reported (GL014), so a typo
//! cannot silently acknowledge nothing. Knows nothing of output formats.
//!
//! Single-revision findings (GL004–GL010) can also be ignored on the object
//! they are about, as kube-linter's `ignore-check.kube-linter.io/<check>`
//! and ruff's `# noqa` allow: `gitops-lint.io/ignore: "GL005,GL006 reason"`.
//! An ignore that matches nothing on an object the run examined is itself
//! reported (GL014).
//!
//! Every finding also gets the one line that would set it aside
//! ([`Finding::acknowledge_with`]), so a failing finding says how to accept
//! it where it is reported.

use crate::argocd::Inventory;
use crate::config::Config;
use crate::finding::Suppression;
use crate::finding::{AckSource, Acknowledgement, Finding};
use crate::manifest::{annotation, ResourceId};
use crate::plan::Plan;
use crate::rules::{self, Category, RuleContext, RuleMeta};

/// The annotation that acknowledges the deletion of the object carrying it.
/// Read from the base revision, like every protection: it must be in the
/// cluster's version of the object, not added by the change that deletes it.
pub(crate) const ANN_ALLOW_PRUNE: &str = "gitops-lint.io/allow-prune";

/// The annotation that ignores single-revision findings on the object
/// carrying it: rule codes (or names) separated by commas, then a reason.
pub(crate) const ANN_IGNORE: &str = "gitops-lint.io/ignore";

/// The commit trailer key (matched case-insensitively, as git does).
pub(crate) const TRAILER: &str = "Gitops-Lint-Allow";

/// What an acknowledgement names: `Kind/namespace/name`, `Kind/name` for a
/// cluster-scoped object, or `Application/name` for an app deletion. A group
/// may follow the kind after a dot (`Cluster.postgresql.cnpg.io/db/main`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    /// Kind.
    pub(crate) kind: String,
    /// API group, when given.
    pub(crate) group: Option<String>,
    /// Namespace; `None` for the two-part form.
    pub(crate) namespace: Option<String>,
    /// Name.
    pub(crate) name: String,
}

impl Target {
    /// Parses `Kind[.group]/[namespace/]name`.
    ///
    /// # Errors
    /// Anything else, with what was expected.
    pub(crate) fn parse(s: &str) -> Result<Target, String> {
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
    pub(crate) fn matches(&self, f: &Finding) -> bool {
        match &f.resource {
            Some(id) => self.matches_resource(id),
            None => f.app.as_deref().is_some_and(|a| self.matches_app(a)),
        }
    }
}

/// One `Gitops-Lint-Allow` trailer found in the range.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Trailer {
    /// The value as written.
    pub(crate) raw: String,
    /// What it names, or why it could not be parsed.
    pub(crate) target: Result<Target, String>,
    /// Free text after the target, if any.
    pub(crate) reason: Option<String>,
}

/// Every `Gitops-Lint-Allow:` line in commit messages. The value is a
/// target, optionally followed by a reason: `Kind/ns/name moving to new-db`.
#[must_use]
pub(crate) fn trailers(messages: &[String]) -> Vec<Trailer> {
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
pub(crate) fn apply(
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
    let deletions = Deletions {
        plan,
        base,
        trailers: config.acknowledge_trailers,
    };
    let Some((meta, severity)) = gl014(config) else {
        fill_acknowledge_lines(findings, Some(&deletions));
        return notes;
    };
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
    fill_acknowledge_lines(findings, Some(&deletions));
    notes
}

/// GL014's facts and configured severity, when it is enabled.
fn gl014(config: &Config) -> Option<(&'static RuleMeta, crate::finding::Severity)> {
    let meta = rules::unused_acknowledgement_meta();
    if !config.rule_enabled(meta) {
        return None;
    }
    let severity = config
        .severity
        .iter()
        .find(|(k, _)| rules::find(k).is_some_and(|r| r.meta().code == meta.code))
        .map_or(meta.default_severity, |(_, s)| *s);
    Some((meta, severity))
}

/// One `gitops-lint.io/ignore` value: the rules it names and the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Ignore {
    /// Each rule as written, resolved to its code when it names one.
    pub(crate) rules: Vec<(String, Option<&'static str>)>,
    /// The free text after the list.
    pub(crate) reason: Option<String>,
}

impl Ignore {
    /// Parses `GL005,GL006 reason` (codes or names, commas with optional
    /// spaces after them, then the reason).
    #[must_use]
    pub(crate) fn parse(value: &str) -> Ignore {
        let mut rules = Vec::new();
        let mut rest = value.trim();
        loop {
            let end = rest
                .find(|c: char| c == ',' || c.is_whitespace())
                .unwrap_or(rest.len());
            let (word, tail) = rest.split_at(end);
            if !word.is_empty() {
                let code = rules::find(word).map(|r| r.meta().code);
                rules.push((word.to_string(), code));
            }
            let tail = tail.trim_start_matches(char::is_whitespace);
            match tail.strip_prefix(',') {
                Some(more) => rest = more.trim_start(),
                None => {
                    rest = tail;
                    break;
                }
            }
        }
        Ignore {
            rules,
            reason: Some(rest.trim().to_string()).filter(|r| !r.is_empty()),
        }
    }
}

/// Marks the findings that a `gitops-lint.io/ignore` annotation on their
/// object (as rendered at head, the revision the single-revision rules
/// judge) names, and appends a GL014 finding for every named rule that
/// reports nothing on an object the run examined, or that cannot be ignored.
pub(crate) fn apply_ignores(findings: &mut Vec<Finding>, cx: &RuleContext<'_>) {
    let mut unused: Vec<Finding> = Vec::new();
    let gl014 = gl014(cx.config);
    for app in cx.head.apps.values() {
        // Named only for an annotated resource: most apps have none.
        let mut app_name = None;
        for m in app.resources.iter() {
            let Some(value) = m.annotation(ANN_IGNORE) else {
                continue;
            };
            let app_name: &String = app_name.get_or_insert_with(|| app.display_name());
            let ignore = Ignore::parse(value);
            let text = format!("{ANN_IGNORE}: {value}");
            let examined = cx.in_scope(&app.key, &m.id);
            for (word, code) in &ignore.rules {
                let problem = match code {
                    None => Some(format!("names `{word}`, which is not a rule")),
                    Some(c) if !rules::find(c).is_some_and(|r| r.meta().suppression.on_object) => Some(format!(
                        "names {c}, which cannot be ignored on the object: a deletion is acknowledged with `{ANN_ALLOW_PRUNE}` in the base revision or a `{TRAILER}` trailer"
                    )),
                    Some(_) => None,
                };
                let mut used = false;
                if problem.is_none() {
                    for f in findings.iter_mut() {
                        if Some(f.rule.code) == *code
                            && f.resource.as_ref() == Some(&m.id)
                            && f.app.as_deref() == Some(app_name.as_str())
                        {
                            used = true;
                            if f.acknowledged.is_none() {
                                f.acknowledged =
                                    Some(Acknowledgement::new(AckSource::IgnoreAnnotation, &text));
                            }
                        }
                    }
                }
                // A rule that was not run, or an object outside the change,
                // proves nothing unused.
                let enabled = code.and_then(rules::find).is_some_and(|r| {
                    cx.config.rule_enabled(r.meta())
                        && (r.meta().mode == rules::Mode::Single || cx.plan.is_some())
                });
                let problem = match problem {
                    Some(p) => Some(p),
                    None if !used && enabled && examined => {
                        Some(format!("names {word}, which reports nothing on it"))
                    }
                    None => None,
                };
                if let (Some(problem), Some((meta, severity))) = (problem, gl014) {
                    unused.push(
                        Finding::new(
                            meta,
                            format!("annotation `{ANN_IGNORE}` on `{}` {problem}", m.id),
                        )
                        .severity(severity)
                        .app(app_name.clone())
                        .resource(m.id.clone())
                        .at(crate::finding::Side::Head, m.origin.file.as_deref(), m.origin.line)
                        .field(m.origin.doc_index, &["metadata", "annotations", ANN_IGNORE])
                        .help("name only the single-revision rules (GL004–GL010) that report on this object, or remove the annotation"),
                    );
                }
            }
        }
    }
    findings.extend(unused);
    findings.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    // A diff fills them again once deletions are known (`apply`).
    fill_acknowledge_lines(findings, None);
}

/// What a diff knows of the deletions it reports, for their acknowledgement line.
struct Deletions<'a> {
    plan: &'a Plan,
    base: &'a Inventory,
    /// `Gitops-Lint-Allow` trailers are read (the base configuration's
    /// `acknowledge: {trailers: ...}`).
    trailers: bool,
}

/// Sets [`Finding::acknowledge_with`] on every finding: the syntax of
/// docs/acknowledging.md with the finding's rule and object filled in.
/// `deletions` is `None` where no deletion is reported (a check).
fn fill_acknowledge_lines(findings: &mut [Finding], deletions: Option<&Deletions<'_>>) {
    for f in findings.iter_mut() {
        f.acknowledge_with = acknowledge_line(f, deletions);
    }
}

/// The one line that sets `f` aside, when there is one: the ignore
/// annotation for a rule judging one object, a trailer (or, when trailers
/// are off, the base annotation) for a deletion, the configuration for a
/// rule nothing else sets aside. Nothing for a revision that cannot be
/// judged or an input error: those are fixed, not accepted.
fn acknowledge_line(f: &Finding, deletions: Option<&Deletions<'_>>) -> Option<String> {
    let suppression = f.rule.suppression;
    if suppression.on_object {
        let id = f.resource.as_ref()?;
        return Some(format!(
            "to ignore it, annotate `{id}` with `{ANN_IGNORE}: \"{} <reason>\"`",
            f.rule.code
        ));
    }
    if acknowledgeable(f) && suppression == Suppression::CHANGE {
        let d = deletions?;
        if d.trailers {
            let target = match &f.resource {
                Some(id) => trailer_target(id),
                None => format!("Application/{}", f.app.as_deref()?),
            };
            return Some(format!(
                "to acknowledge it, add the commit trailer `{TRAILER}: {target}`"
            ));
        }
        // Trailers are off: only the annotation `apply` reads, on a pruned
        // object or a deleted Application at base, acknowledges it.
        let pruned = f
            .resource
            .as_ref()
            .is_some_and(|id| d.plan.prunes.iter().any(|p| &p.id == id));
        let deleted_app = f.resource.is_none()
            && d.plan
                .deleted_apps
                .iter()
                .any(|a| f.app.as_deref() == Some(app_display(&a.app, d.base).as_str()));
        let on = match (&f.resource, &f.app) {
            (Some(id), _) if pruned => id.to_string(),
            (None, Some(app)) if deleted_app => format!("Application {app}"),
            _ => return None,
        };
        return Some(format!(
            "to acknowledge it, merge first the annotation `{ANN_ALLOW_PRUNE}: \"<reason>\"` on `{on}`"
        ));
    }
    if f.rule.category != Category::Input && (suppression.by_path || suppression.by_fingerprint) {
        return Some(format!(
            "it is not acknowledged one by one: `rules: {{ignore: [{}]}}` in `{}` switches the rule off",
            f.rule.code,
            crate::config::CONFIG_FILE
        ));
    }
    None
}

/// `Kind[.group]/[namespace/]name`: the trailer form [`Target::parse`] reads,
/// the group given so that it names exactly this object.
fn trailer_target(id: &ResourceId) -> String {
    let mut s = id.kind.clone();
    if !id.group.is_empty() {
        s.push('.');
        s.push_str(&id.group);
    }
    if !id.namespace.is_empty() {
        s.push('/');
        s.push_str(&id.namespace);
    }
    s.push('/');
    s.push_str(&id.name);
    s
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

/// Drops findings located in files that `ignorePaths` matches.
/// `ignorePaths` drops findings located in matching files, except what a
/// change does (diff rules: prunes, cascades, shrinks, moves, immutable
/// changes) and what makes it impossible to judge (GL000, GL018) or deletes
/// through a loop (GL019): a pull request could otherwise hide its own
/// deletion by moving an app's inputs under an ignored path.
pub(crate) fn drop_ignored_paths(findings: &mut Vec<Finding>, config: &Config) {
    findings.retain(|f| {
        !f.rule.suppression.by_path
            || f.location
                .as_ref()
                .is_none_or(|l| !config.ignore_paths.matches(&l.file))
    });
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
    fn ignores_parse_codes_names_and_a_reason() {
        let i = Ignore::parse("GL005, hook-can-hang,GL999 the job is idempotent");
        assert_eq!(
            i.rules,
            vec![
                ("GL005".to_string(), Some("GL005")),
                ("hook-can-hang".to_string(), Some("GL007")),
                ("GL999".to_string(), None),
            ]
        );
        assert_eq!(i.reason.as_deref(), Some("the job is idempotent"));
        let bare = Ignore::parse("GL006");
        assert_eq!(bare.rules.len(), 1);
        assert_eq!(bare.reason, None);
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
