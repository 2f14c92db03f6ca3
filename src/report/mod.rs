//! Output: one emitter per format, findings and plan in, text out.
//!
//! Knows nothing of how findings were made.

pub(crate) mod anchor;
pub(crate) mod diff;
pub(crate) mod github;
pub(crate) mod human;
pub mod json;
pub(crate) mod markdown;
pub(crate) mod sarif;

use crate::argocd::instances::short_key;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;

use crate::argocd::{apps_beside, AppStatus, Inventory, PruneMode};
use crate::finding::{Finding, Location, Severity, Side};
use crate::manifest::ResourceId;
use crate::plan::Plan;

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// For people: the plan, then findings with source snippets.
    Human,
    /// The stable JSON contract (version 1).
    Json,
    /// SARIF 2.1.0, for GitHub code scanning and other SARIF consumers.
    Sarif,
    /// GitHub Actions workflow commands: inline annotations on the pull request.
    Github,
    /// A pull-request comment or `$GITHUB_STEP_SUMMARY` body.
    Markdown,
    /// A plain unified patch of the rendered manifests of each changed app.
    Diff,
}

impl Format {
    /// The name used on the command line.
    #[must_use]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Format::Human => "human",
            Format::Json => "json",
            Format::Sarif => "sarif",
            Format::Github => "github",
            Format::Markdown => "markdown",
            Format::Diff => "diff",
        }
    }

    /// Every format.
    pub(crate) const ALL: [Format; 6] = [
        Format::Human,
        Format::Json,
        Format::Sarif,
        Format::Github,
        Format::Markdown,
        Format::Diff,
    ];
}

/// One requested output: a format, written to a file or (without one) to stdout.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FormatSpec {
    /// The format.
    pub(crate) format: Format,
    /// Where to write it; `None` is standard output.
    pub(crate) path: Option<PathBuf>,
}

impl std::str::FromStr for FormatSpec {
    type Err = String;

    /// Parses `FORMAT` or `FORMAT=PATH` (`sarif=results.sarif`).
    fn from_str(s: &str) -> Result<FormatSpec, String> {
        let (name, path) = match s.split_once('=') {
            Some((n, "")) => {
                return Err(format!("`{n}=` needs a file name after `=`"));
            }
            // `-` is standard output, as for most tools.
            Some((n, "-")) => (n, None),
            Some((n, p)) => (n, Some(PathBuf::from(p))),
            None => (s, None),
        };
        let format = Format::ALL
            .into_iter()
            .find(|f| f.as_str() == name)
            .ok_or_else(|| {
                let names: Vec<&str> = Format::ALL.iter().map(|f| f.as_str()).collect();
                format!(
                    "unknown format `{name}` (expected one of {}, optionally as FORMAT=FILE)",
                    names.join(", ")
                )
            })?;
        Ok(FormatSpec { format, path })
    }
}

/// Apps shown by their name in a note before the rest are counted.
const NAMED_IN_NOTE: usize = 5;

/// One note for the apps rendered in part ([`AppStatus::Partial`]) at head,
/// or at base when gone at head: every format says what was not analysed.
/// `--verbose` lists each app with its sources left out and why.
fn partial_note(
    head: &Inventory,
    base: Option<&Inventory>,
    notes: &mut Vec<String>,
    details: &mut Vec<String>,
) {
    let gone = base
        .into_iter()
        .flat_map(|b| apps_beside(&b.apps, &head.apps))
        .filter(|(_, _, h)| h.is_none())
        .map(|(_, a, _)| a);
    let partial: Vec<&crate::argocd::App> = head
        .apps
        .values()
        .chain(gone)
        .filter(|a| !a.status.left_out().is_empty())
        .collect();
    if partial.is_empty() {
        return;
    }
    for a in &partial {
        for l in a.status.left_out() {
            details.push(match &l.why {
                Some(why) => format!(
                    "app `{}`: {} is not analysed: {why}",
                    a.display_name(),
                    l.source
                ),
                None => format!("app `{}`: {} is not analysed", a.display_name(), l.source),
            });
        }
    }
    let named: Vec<String> = partial
        .iter()
        .take(NAMED_IN_NOTE)
        .map(|a| {
            format!(
                "`{}` ({})",
                a.display_name(),
                crate::argocd::LeftOut::join(a.status.left_out())
            )
        })
        .collect();
    let more = partial.len().saturating_sub(NAMED_IN_NOTE);
    notes.push(format!(
        "{} app(s) are partial, rendered without sources this run cannot read, whose resources are not analysed: {}{}",
        partial.len(),
        named.join(", "),
        if more > 0 {
            format!(" and {more} more (`--verbose` lists them)")
        } else {
            String::new()
        }
    ));
}

/// One app as reported.
#[derive(Debug, Clone)]
pub struct AppRow {
    /// Display name.
    pub name: String,
    /// Namespace of the Application object.
    pub(crate) namespace: String,
    /// Source path (or chart).
    pub(crate) source: String,
    /// `rendered`, `partial` (some sources not read: what they render is
    /// not analysed), `unrendered`, `external`, or in a diff `unchanged`
    /// (not rendered at either revision: everything it reads is identical).
    pub status: &'static str,
    /// Prune mode.
    pub(crate) prune_mode: PruneMode,
    /// The config-management plugin(s) that render it and as what, when
    /// the configuration maps them to a native renderer.
    pub(crate) plugin: Option<String>,
    /// In a diff, whether the change touches the app: it is added or
    /// deleted, renders differently, prunes, cannot be judged, or has a
    /// finding. Always true in `check`. Human output lists only these.
    pub(crate) touched: bool,
}

/// One prune as reported.
#[derive(Debug, Clone)]
pub(crate) struct PruneRow {
    /// App display name.
    pub(crate) app: String,
    /// The resource.
    pub(crate) resource: ResourceId,
    /// Reason (kebab-case).
    pub(crate) reason: &'static str,
    /// What protects it, if anything.
    pub(crate) protection: Option<String>,
    /// How the deletion happens.
    pub(crate) mode: PruneMode,
    /// Reason detail (new name, new owner...).
    pub(crate) detail: Option<String>,
    /// The object the same sync creates in its place (a rename or a move
    /// to another namespace: a delete and a create).
    pub(crate) recreated_as: Option<ResourceId>,
}

/// Everything an emitter needs.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Command that produced it: `diff` or `check`.
    pub(crate) command: String,
    /// Base commit (diff only).
    pub(crate) base: Option<String>,
    /// Head commit, `INDEX` or `WORKTREE`.
    pub(crate) head: String,
    /// Apps at head (and apps deleted at head).
    pub apps: Vec<AppRow>,
    /// Prunes.
    pub(crate) prunes: Vec<PruneRow>,
    /// Findings, sorted.
    pub findings: Vec<Finding>,
    /// Assumptions worth telling the user.
    pub(crate) notes: Vec<String>,
    /// What a note summarises, one line each, for `--verbose` (on stderr).
    pub(crate) details: Vec<String>,
    /// File texts for snippets, by side and path.
    pub(crate) files: BTreeMap<(Side, String), Arc<str>>,
    /// For each finding (same order), a place in the head revision to attach
    /// it to where pull-request tools show it: the file itself when it still
    /// exists, else the file that stopped including it, else the Application.
    /// Empty when not computed (emitters then use the finding's own location).
    pub(crate) anchors: Vec<Option<Location>>,
    /// The level at which an unacknowledged finding fails the run
    /// (`--fail-on`; `None`: never), for reports that name what fails it.
    pub(crate) fail_on: Option<Severity>,
    /// What the change does to each app's rendered manifests (a diff that
    /// computed it: `--no-diff` and `diff.show: false` do not).
    pub(crate) diff: Option<crate::rendered_diff::RenderedDiff>,
    /// In a diff that judged the merge of its head into its base's tip
    /// (not a fast-forward), that merge.
    pub(crate) merge: Option<Merged>,
    /// Notes about the revisions judged (a stale local branch, the merge)
    /// that are said on stderr too, where a run writing only a machine
    /// format to a file still tells the person who started it.
    pub(crate) warnings: Vec<String>,
    /// Human output lists every app, not only those the change touches
    /// (`--verbose`).
    pub(crate) list_every_app: bool,
    /// The width human output wraps findings to: the terminal's when it
    /// is written to one, else [`HUMAN_WIDTH`].
    pub(crate) width: usize,
}

/// The merge a diff judged: computed in memory, it has no commit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Merged {
    /// The merge base of the base and the head (full hex).
    pub(crate) merge_base: String,
    /// The merged tree's id (full hex).
    pub(crate) tree: String,
}

/// The width of human output that is not written to a terminal (files, CI
/// logs, tests): fixed, so the same report is the same text everywhere.
pub(crate) const HUMAN_WIDTH: usize = 100;

/// What renders `app` when config-management plugins do, as one line.
fn plugin_of(app: &crate::argocd::App) -> Option<String> {
    (!app.plugins.is_empty()).then(|| app.plugins.join("; "))
}

impl Report {
    /// Builds the report rows from inventories and the plan.
    #[must_use]
    pub(crate) fn new(
        command: &str,
        base: Option<(&str, &Inventory)>,
        head: (&str, &Inventory),
        plan: Option<&Plan>,
        findings: Vec<Finding>,
    ) -> Report {
        // What a diff touched, by app key; findings name apps by display
        // name or short key, so both are looked up.
        let acting: std::collections::HashSet<&str> = plan
            .iter()
            .flat_map(|p| {
                p.changes
                    .keys()
                    .map(String::as_str)
                    .chain(p.prunes.iter().map(|x| x.app.as_str()))
                    .chain(p.deleted_apps.iter().map(|x| x.app.as_str()))
                    .chain(p.unknown.iter().map(|x| x.app.as_str()))
            })
            .collect();
        let found: std::collections::HashSet<&str> =
            findings.iter().filter_map(|f| f.app.as_deref()).collect();
        let touched = |key: &str, a: &crate::argocd::App| -> bool {
            plan.is_none()
                || acting.contains(key)
                || base.is_some_and(|(_, b)| !b.apps.contains_key(key))
                || found.contains(key)
                || found.contains(short_key(key))
                || (!found.is_empty() && found.contains(a.display_name().as_str()))
        };
        let mut apps: Vec<AppRow> = head
            .1
            .apps
            .iter()
            .map(|(key, a)| AppRow {
                touched: touched(key, a),
                name: a.display_name(),
                namespace: a.spec.namespace.clone(),
                source: a.source_path(),
                status: a.status.as_str(),
                prune_mode: if matches!(a.status, AppStatus::External(_)) {
                    PruneMode::None
                } else {
                    a.spec.prune_mode
                },
                plugin: plugin_of(a),
            })
            .collect();
        if let Some((_, b)) = base {
            let gone = apps_beside(&b.apps, &head.1.apps).filter(|(_, _, h)| h.is_none());
            for (_, a, _) in gone {
                apps.push(AppRow {
                    touched: true,
                    name: a.display_name(),
                    namespace: a.spec.namespace.clone(),
                    source: a.source_path(),
                    status: a.status.as_str(),
                    prune_mode: a.spec.prune_mode,
                    plugin: plugin_of(a),
                });
            }
        }
        apps.sort_by(|x, y| (&x.namespace, &x.name).cmp(&(&y.namespace, &y.name)));
        let prunes = plan
            .map(|plan| {
                let recreates = plan.recreates();
                // The first of each, as a search in order finds it.
                let mut created_as: HashMap<(&str, &ResourceId), &ResourceId> = HashMap::new();
                for r in &recreates {
                    created_as
                        .entry((r.app.as_str(), &r.deleted))
                        .or_insert(&r.created);
                }
                plan.prunes
                    .iter()
                    .map(|p| PruneRow {
                        app: short_key(&p.app).to_string(),
                        resource: p.id.clone(),
                        reason: p.reason.as_str(),
                        protection: p.protection.clone(),
                        mode: p.mode,
                        detail: p.detail.clone(),
                        recreated_as: created_as.get(&(p.app.as_str(), &p.id)).map(|&c| c.clone()),
                    })
                    .collect()
            })
            .unwrap_or_default();
        let mut notes: Vec<String> = head.1.notes.clone();
        // Deletions only the kind's scope decides: not listed as prunes.
        for p in plan.iter().flat_map(|p| &p.scope_unknown) {
            let kind = if p.id.group.is_empty() {
                p.id.kind.clone()
            } else {
                format!("{}/{}", p.id.group, p.id.kind)
            };
            let note = format!(
                "the scope of `{kind}` is unknown (no CRD in the repository, not in `clusterScopedKinds`): `{}` prunes `{}` if it is namespaced and nothing if it is cluster-scoped",
                short_key(&p.app),
                p.id
            );
            if !notes.contains(&note) {
                notes.push(note);
            }
        }
        // Removed objects of a kind Argo CD does not manage: one note per
        // app and kind, naming the first few.
        let mut unmanaged: std::collections::BTreeMap<(&str, String, &str), Vec<String>> =
            std::collections::BTreeMap::new();
        for (p, why) in plan.iter().flat_map(|p| &p.excluded) {
            let kind = if p.id.group.is_empty() {
                p.id.kind.clone()
            } else {
                format!("{}/{}", p.id.group, p.id.kind)
            };
            unmanaged
                .entry((short_key(&p.app), kind, why.describe()))
                .or_default()
                .push(format!("`{}`", p.id));
        }
        for ((app, kind, why), ids) in unmanaged {
            let shown = crate::limits::first_and_more(ids.into_iter(), 3, ", ");
            notes.push(format!(
                "`{kind}` is excluded from management by {why}: removed from git, {shown} of `{app}` stay in the cluster, neither pruned nor deleted with the app"
            ));
        }
        // A plugin-rendered app says which plugin and as what, once.
        for a in &apps {
            if let Some(p) = &a.plugin {
                let note = format!("`{}`: {p}", a.name);
                if !notes.contains(&note) {
                    notes.push(note);
                }
            }
        }
        if let Some((_, b)) = base {
            for n in &b.notes {
                if !notes.contains(n) {
                    notes.push(n.clone());
                }
            }
        }
        let twice: std::collections::BTreeSet<&String> = head
            .1
            .declared_twice
            .iter()
            .chain(base.iter().flat_map(|(_, b)| &b.declared_twice))
            .collect();
        let mut details: Vec<String> = twice
            .iter()
            .map(|k| {
                format!(
                    "Application `{k}` is declared more than once; the first declaration is used"
                )
            })
            .collect();
        partial_note(head.1, base.map(|(_, b)| b), &mut notes, &mut details);
        if !twice.is_empty() {
            const NAMED: usize = 5;
            let named: Vec<String> = twice.iter().take(NAMED).map(|k| format!("`{k}`")).collect();
            let more = twice.len().saturating_sub(NAMED);
            notes.push(format!(
                "{} Application(s) are declared in more than one file, and only the first declaration of each is analysed: {}{}",
                twice.len(),
                named.join(", "),
                if more > 0 {
                    format!(" and {more} more (`--verbose` lists them)")
                } else {
                    String::new()
                }
            ));
        }
        let findings = bounded_messages(findings);
        Report {
            command: command.to_string(),
            base: base.map(|(r, _)| r.to_string()),
            head: head.0.to_string(),
            apps,
            prunes,
            findings,
            notes,
            details,
            files: BTreeMap::new(),
            anchors: Vec::new(),
            fail_on: Some(Severity::Error),
            diff: None,
            merge: None,
            warnings: Vec::new(),
            list_every_app: false,
            width: HUMAN_WIDTH,
        }
    }

    /// Whether finding `f` alone fails the run.
    #[must_use]
    pub(crate) fn fails_run(&self, f: &Finding) -> bool {
        f.acknowledged.is_none() && self.fail_on.is_some_and(|level| f.severity >= level)
    }

    /// The line that would set `f` aside, for a finding that fails the
    /// run: where it is reported, the author reads how to accept it.
    #[must_use]
    pub(crate) fn acknowledge_line<'f>(&self, f: &'f Finding) -> Option<&'f str> {
        f.acknowledge_with.as_deref().filter(|_| self.fails_run(f))
    }

    /// Where pull-request tools should show finding `i`: its anchor when one
    /// was computed, else its own location when that is in the head revision.
    #[must_use]
    pub(crate) fn anchor(&self, i: usize) -> Option<&Location> {
        if let Some(a) = self.anchors.get(i) {
            return a.as_ref();
        }
        self.findings
            .get(i)?
            .location
            .as_ref()
            .filter(|l| l.side == Side::Head || self.base.is_none())
    }

    /// Number of acknowledged findings.
    #[must_use]
    pub(crate) fn acknowledged(&self) -> usize {
        self.findings
            .iter()
            .filter(|f| f.acknowledged.is_some())
            .count()
    }

    /// Counts by severity (acknowledged findings excluded).
    #[must_use]
    pub(crate) fn counts(&self) -> (usize, usize, usize) {
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

/// The longest message one finding keeps (a tool's error quoted whole
/// can be megabytes).
const MAX_MESSAGE_BYTES: usize = 64 << 10;
/// The message text a report keeps in full across its findings; past it,
/// each further message keeps [`MAX_MESSAGE_BYTES_PAST_TOTAL`].
const MAX_MESSAGE_BYTES_PER_RUN: usize = 8 << 20;
const MAX_MESSAGE_BYTES_PAST_TOTAL: usize = 1 << 10;

/// Findings whose messages are within [`MAX_MESSAGE_BYTES`] each and, in
/// total, [`MAX_MESSAGE_BYTES_PER_RUN`]: thousands of apps failing with
/// long errors must not make a report (and every format of it) that
/// exhausts the runner. What is cut says how much was left out.
fn bounded_messages(mut findings: Vec<Finding>) -> Vec<Finding> {
    let mut total = 0usize;
    for f in &mut findings {
        let max = if total > MAX_MESSAGE_BYTES_PER_RUN {
            MAX_MESSAGE_BYTES_PAST_TOTAL
        } else {
            MAX_MESSAGE_BYTES
        };
        if let std::borrow::Cow::Owned(cut) = crate::limits::bounded_text(&f.message, max) {
            f.message = cut;
        }
        total = total.saturating_add(f.message.len());
    }
    findings
}

/// Writes the report in one format.
///
/// # Errors
/// Write failures.
pub(crate) fn emit(
    format: Format,
    report: &Report,
    color: bool,
    out: &mut Vec<u8>,
) -> std::io::Result<()> {
    match format {
        Format::Human => human::emit(&printable_report(report), color, out),
        Format::Json => json::emit(report, out),
        Format::Sarif => sarif::emit(report, out),
        Format::Github => github::emit(&printable_report(report), out),
        Format::Markdown => markdown::emit(&printable_report(report), out),
        Format::Diff => {
            diff::emit(report, out);
            Ok(())
        }
    }
}

/// Text from the repository with control characters shown as escapes
/// (`\u{1b}`), so a resource name cannot print ANSI sequences or start a
/// new line that a CI runner reads as a workflow command. `keep_lines`
/// keeps line feeds and tabs (file texts for snippets).
#[must_use]
pub(crate) fn printable(s: &str, keep_lines: bool) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if escaped(c, keep_lines) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether [`printable`] shows `c` as an escape: C0 and C1 controls, and
/// the bidirectional controls, which make text display in an order other
/// than the one it is read in (a name that looks like another).
fn escaped(c: char, keep_lines: bool) -> bool {
    (c.is_control() && !(keep_lines && (c == '\n' || c == '\t'))) || is_bidi_control(c)
}

/// The Unicode bidirectional formatting characters: embeddings and
/// overrides (U+202A-U+202E), isolates (U+2066-U+2069) and the marks
/// (U+200E, U+200F, U+061C).
fn is_bidi_control(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{61c}')
}

/// JSON text (the JSON report, the SARIF log) made safe to print in a CI
/// log with every value unchanged: outside strings JSON is ASCII without
/// `#`, so each `##[` (which the runner reads as a command anywhere in a
/// line), C1 control and bidirectional control is inside a string, where
/// the JSON escape `\uXXXX` stands for the same character. `##[` is
/// written `#\u0023[`.
pub(crate) fn log_safe_json(text: &mut Vec<u8>) {
    let Ok(s) = std::str::from_utf8(text) else {
        return;
    };
    let risky = |c: char| (c.is_control() && c > '\u{7f}') || is_bidi_control(c);
    if !s.contains("##[") && !s.chars().any(risky) {
        return;
    }
    let mut out = String::with_capacity(s.len() + 64);
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("##[") {
            out.push_str("#\\u0023[");
            rest = &rest[3..];
            continue;
        }
        if risky(c) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
        rest = &rest[c.len_utf8()..];
    }
    *text = out.into_bytes();
}

/// `s` made [`printable`] where it lies (kept when it has nothing to
/// escape, as nearly all text has): a report lists every app, 10,000 of
/// them in a large fleet, and copying each name again cost a one-app diff
/// there milliseconds before it printed a line.
fn make_printable(s: &mut String) {
    if s.chars().any(|c| escaped(c, false)) {
        *s = printable(s, false);
    }
}

/// Text of several lines (a message quoting a tool's error, a note) with
/// its line feeds kept, so it reads as written rather than as `\u{a}`:
/// other control characters are escaped as by [`printable`], and a line
/// that would start with `::` (a workflow command to a CI runner reading
/// the log) has its first colon escaped.
#[must_use]
pub(crate) fn printable_lines(s: &str) -> String {
    let text = printable(s, true);
    let mut out = String::with_capacity(text.len());
    for (i, line) in text.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let body = line.trim_start();
        if body.starts_with("::") {
            out.push_str(&line[..line.len() - body.len()]);
            out.push_str("\\u{3a}");
            out.push_str(&body[1..]);
        } else {
            out.push_str(line);
        }
    }
    out
}

/// Text with the GitHub runner's workflow-command markers broken: the runner
/// reads `##[command]` anywhere in a log line and `::command::` at the
/// start of one, so repository text printed in a log (a resource name, an
/// annotation value, a file snippet) could otherwise mask secrets, stop
/// command processing or forge annotations. `##[` and `::` are written with
/// their last character as an escape (`#\u{23}[`, `:\u{3a}`), as
/// [`printable`] writes control characters.
#[must_use]
pub(crate) fn without_runner_commands(s: &str) -> String {
    if !s.contains("##[") && !s.contains("::") {
        return s.to_string();
    }
    s.replace("##[", "#\\u{23}[").replace("::", ":\\u{3a}")
}

fn make_printable_id(id: &mut ResourceId) {
    make_printable(&mut id.group);
    make_printable(&mut id.kind);
    make_printable(&mut id.namespace);
    make_printable(&mut id.name);
}

/// A copy of the report whose repository-derived text is [`printable`]:
/// used by the emitters whose output a terminal or a CI runner interprets.
/// JSON and SARIF escape control characters themselves.
#[must_use]
pub(crate) fn printable_report(r: &Report) -> Report {
    let mut out = r.clone();
    for a in &mut out.apps {
        make_printable(&mut a.name);
        make_printable(&mut a.namespace);
        make_printable(&mut a.source);
    }
    for pr in &mut out.prunes {
        make_printable(&mut pr.app);
        make_printable_id(&mut pr.resource);
        pr.protection.iter_mut().for_each(make_printable);
        pr.detail.iter_mut().for_each(make_printable);
        pr.recreated_as.iter_mut().for_each(make_printable_id);
    }
    for f in &mut out.findings {
        f.message = printable_lines(&f.message);
        f.app.iter_mut().for_each(make_printable);
        f.resource.iter_mut().for_each(make_printable_id);
        f.help = f.help.as_deref().map(printable_lines);
        if let Some(a) = &mut f.acknowledged {
            make_printable(&mut a.text);
        }
        if let Some(l) = &mut f.location {
            make_printable(&mut l.file);
        }
    }
    for n in &mut out.notes {
        *n = printable_lines(n);
    }
    for l in out.anchors.iter_mut().flatten() {
        make_printable(&mut l.file);
    }
    for a in out.diff.iter_mut().flat_map(|d| d.apps.iter_mut()) {
        make_printable(&mut a.app);
        a.partial.iter_mut().for_each(make_printable);
        for res in &mut a.resources {
            make_printable_id(&mut res.id);
            res.unified = printable(&res.unified, true);
        }
    }
    for n in out.diff.iter_mut().flat_map(|d| d.not_diffed.iter_mut()) {
        make_printable(&mut n.app);
        make_printable(&mut n.why);
    }
    out.files = r
        .files
        .iter()
        .map(|((side, file), text)| {
            (
                (*side, printable(file, false)),
                Arc::from(printable(text, true).as_str()),
            )
        })
        .collect();
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::rules;

    fn meta(code: &str) -> &'static crate::rules::RuleMeta {
        rules::find(code).map(|r| r.meta()).expect("rule exists")
    }

    fn id(kind: &str, ns: &str, name: &str) -> ResourceId {
        ResourceId {
            group: String::new(),
            kind: kind.into(),
            namespace: ns.into(),
            name: name.into(),
        }
    }

    /// A diff report with one of each severity, an acknowledged finding,
    /// a note, and prunes in two apps.
    pub(crate) fn sample() -> Report {
        let pvc = Finding::new(
            meta("GL001"),
            "automated sync of `payments` would delete `PersistentVolumeClaim payments/data`",
        )
        .app("payments")
        .resource(id("PersistentVolumeClaim", "payments", "data"))
        .at(Side::Base, Some("apps/payments/pvc.yaml"), Some(3))
        .help("restore the manifest");
        let mut acked = Finding::new(
            meta("GL001"),
            "syncing `web` with prune would delete `Service web/lb`",
        )
        .severity(Severity::Warning)
        .app("web")
        .resource(id("Service", "web", "lb"))
        .at(Side::Base, Some("apps/web/svc.yaml"), Some(1));
        acked.acknowledged = Some(crate::finding::Acknowledgement::new(
            crate::finding::AckSource::Annotation,
            "gitops-lint.io/allow-prune: moving to the new gateway",
        ));
        let info = Finding::new(
            meta("GL002"),
            "Application `old` is removed from git but nothing manages it, 100% sure: a,b",
        )
        .severity(Severity::Info)
        .app("old")
        .at(Side::Base, Some("apps/old.yaml"), Some(1));
        Report {
            fail_on: Some(Severity::Error),
            diff: None,
            merge: None,
            warnings: Vec::new(),
            list_every_app: false,
            width: HUMAN_WIDTH,
            command: "diff".into(),
            base: Some("1111111111111111111111111111111111111111".into()),
            head: "2222222222222222222222222222222222222222".into(),
            apps: vec![AppRow {
                name: "payments".into(),
                namespace: "argocd".into(),
                source: "apps/payments".into(),
                status: "rendered",
                prune_mode: PruneMode::Automated,
                plugin: None,
                touched: true,
            }],
            prunes: vec![
                PruneRow {
                    app: "payments".into(),
                    resource: id("PersistentVolumeClaim", "payments", "data"),
                    reason: "removed",
                    protection: None,
                    mode: PruneMode::Automated,
                    detail: None,
                    recreated_as: None,
                },
                PruneRow {
                    app: "web".into(),
                    resource: id("ConfigMap", "web", "a|b"),
                    reason: "removed",
                    protection: Some("Prune=false".into()),
                    mode: PruneMode::Manual,
                    detail: None,
                    recreated_as: None,
                },
            ],
            findings: vec![pvc, acked, info],
            notes: vec![
                ".gitops-lint.yaml differs at head; the base revision's configuration was used"
                    .into(),
            ],
            details: Vec::new(),
            files: BTreeMap::new(),
            anchors: vec![
                Some(Location {
                    side: Side::Head,
                    file: "apps/payments/kustomization.yaml".into(),
                    line: None,
                }),
                Some(Location {
                    side: Side::Head,
                    file: "apps/web/svc.yaml".into(),
                    line: Some(1),
                }),
                None,
            ],
        }
    }

    #[test]
    fn messages_keep_their_lines_but_no_line_is_a_workflow_command() {
        assert_eq!(
            printable_lines("helm failed:\nError: bad\n  ::error::x\r\u{1b}[31m"),
            "helm failed:\nError: bad\n  \\u{3a}:error::x\\u{d}\\u{1b}[31m"
        );
        let mut r = sample();
        r.findings[0].message = "first\nsecond".into();
        let p = printable_report(&r);
        assert_eq!(p.findings[0].message, "first\nsecond");
        let mut buf = Vec::new();
        github::emit(&p, &mut buf).expect("writes");
        let text = String::from_utf8(buf).expect("utf-8");
        assert!(text.contains("first%0Asecond"), "{text}");
        assert!(!text.contains("u{a}"), "{text}");
    }

    /// Long messages are cut each, and past the run's total to a little
    /// each, saying how much was left out.
    #[test]
    fn message_text_is_bounded_per_finding_and_per_run() {
        let f = sample().findings[0].clone();
        let many: Vec<Finding> = (0..400)
            .map(|i| {
                let mut g = f.clone();
                g.message = format!("{i}: {}", "x".repeat(100 << 10));
                g
            })
            .collect();
        let kept = bounded_messages(many);
        assert!(kept
            .iter()
            .all(|g| g.message.len() <= MAX_MESSAGE_BYTES + 64));
        assert!(kept.iter().all(|g| g.message.contains("bytes more)")));
        let total: usize = kept.iter().map(|g| g.message.len()).sum();
        assert!(total <= MAX_MESSAGE_BYTES_PER_RUN + MAX_MESSAGE_BYTES + 400 * 1200);
        assert!(kept[399].message.len() <= MAX_MESSAGE_BYTES_PAST_TOTAL + 64);
        assert!(kept[0].message.starts_with("0: xxx"));
    }

    #[test]
    fn names_with_control_characters_are_escaped_and_others_kept() {
        let mut r = sample();
        r.apps[0].name = "pay\u{1b}[31mments".into();
        r.prunes[0].resource.name = "data\n::error::x".into();
        r.prunes[0].detail = Some("tab\there".into());
        let p = printable_report(&r);
        assert_eq!(p.apps[0].name, "pay\\u{1b}[31mments");
        assert_eq!(p.apps[0].source, r.apps[0].source);
        assert_eq!(p.prunes[0].resource.name, "data\\u{a}::error::x");
        assert_eq!(p.prunes[0].resource.kind, r.prunes[0].resource.kind);
        assert_eq!(p.prunes[0].detail.as_deref(), Some("tab\\u{9}here"));
        assert_eq!(printable("ünïcode ok", false), "ünïcode ok");
    }

    #[test]
    fn the_human_plan_shows_a_recreated_object_under_its_deletion() {
        let mut r = sample();
        r.prunes[0] = PruneRow {
            app: "payments".into(),
            resource: id("Service", "payments", "api"),
            reason: "renamed",
            protection: None,
            mode: PruneMode::Automated,
            detail: Some("payments-api".into()),
            recreated_as: Some(id("Service", "payments", "payments-api")),
        };
        let mut out = Vec::new();
        human::emit(&r, false, &mut out).expect("written");
        let text = String::from_utf8(out).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains("- Service payments/api (renamed"))
            .expect("the deletion is listed");
        assert!(
            lines[at + 1].contains("+ Service payments/payments-api (created in its place"),
            "{text}"
        );
    }

    #[test]
    fn format_specs_parse_with_and_without_paths() {
        let s: FormatSpec = "sarif=out/results.sarif".parse().expect("parses");
        assert_eq!(s.format, Format::Sarif);
        assert_eq!(s.path, Some(PathBuf::from("out/results.sarif")));
        let g: FormatSpec = "github".parse().expect("parses");
        assert_eq!((g.format, g.path), (Format::Github, None));
        assert!("sarif=".parse::<FormatSpec>().is_err());
        let e = "yaml".parse::<FormatSpec>().expect_err("unknown");
        assert!(e.contains("human, json, sarif, github, markdown"), "{e}");
    }
}
