//! Human output: reads like a plan (apps, then what each would prune), then
//! findings rendered with miette pointing at the file and line.

use crate::argocd::instances::short_key;
use std::fmt;
use std::io::Write;

use miette::{
    Diagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan, NamedSource, SourceSpan,
};

use super::Report;
use crate::argocd::PruneMode;
use crate::finding::{Finding, Severity, Side};

struct Adapter<'a> {
    finding: &'a Finding,
    source: Option<NamedSource<String>>,
    span: Option<SourceSpan>,
}

impl fmt::Debug for Adapter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.finding.message)
    }
}

impl fmt::Display for Adapter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.finding.message)
    }
}

impl std::error::Error for Adapter<'_> {}

impl Diagnostic for Adapter<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        let ack = self
            .finding
            .acknowledged
            .as_ref()
            .map(|a| format!(" ({})", a.label()))
            .unwrap_or_default();
        Some(Box::new(format!(
            "{} {}{ack}",
            self.finding.rule.code, self.finding.rule.name
        )))
    }

    fn severity(&self) -> Option<miette::Severity> {
        match &self.finding.acknowledged {
            Some(a) if a.by_author() => return Some(miette::Severity::Warning),
            Some(_) => return Some(miette::Severity::Advice),
            None => {}
        }
        Some(match self.finding.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        let ack = self
            .finding
            .acknowledged
            .as_ref()
            .map(|a| format!("acknowledged: {a}"));
        match (&self.finding.help, ack) {
            (_, Some(a)) => Some(Box::new(a)),
            (Some(h), None) => Some(Box::new(h.as_str())),
            (None, None) => None,
        }
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        self.source.as_ref().map(|s| s as &dyn miette::SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let span = self.span?;
        let label = match self.finding.location.as_ref().map(|l| l.side) {
            Some(Side::Base) => "here (base revision)",
            _ => "here",
        };
        Some(Box::new(std::iter::once(LabeledSpan::new_with_span(
            Some(label.to_string()),
            span,
        ))))
    }
}

/// The byte span of a 1-based line in `text`.
fn line_span(text: &str, line: u32) -> Option<SourceSpan> {
    let mut offset = 0usize;
    for (i, l) in text.split_inclusive('\n').enumerate() {
        if i + 1 == line as usize {
            let len = l.trim_end_matches(['\n', '\r']).len();
            return Some(SourceSpan::new(offset.into(), len));
        }
        offset += l.len();
    }
    None
}

fn mode_text(m: PruneMode) -> &'static str {
    match m {
        PruneMode::Automated => "automated prune",
        PruneMode::Manual => "prune on manual sync",
        PruneMode::None => "not synced",
    }
}

/// Writes the human report.
///
/// # Errors
/// Write failures.
pub(crate) fn emit(r: &Report, color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    // Rendered whole, then written with workflow-command markers broken:
    // human output is what a CI log shows.
    let mut text = Vec::new();
    emit_text(r, color, &mut text)?;
    out.write_all(super::without_runner_commands(&String::from_utf8_lossy(&text)).as_bytes())
}

fn emit_text(r: &Report, color: bool, out: &mut dyn Write) -> std::io::Result<()> {
    match (&r.base, r.command.as_str()) {
        (Some(b), _) => writeln!(out, "gitops-lint diff {}..{}", short(b), short(&r.head))?,
        (None, _) => writeln!(out, "gitops-lint check {}", short(&r.head))?,
    }
    for n in &r.notes {
        writeln!(out, "note: {n}")?;
    }
    writeln!(out)?;
    writeln!(out, "Apps ({}):", r.apps.len())?;
    // A diff lists the apps its change touches: on a large repository the
    // others are nearly all of them, and nothing about them changes.
    // Apps a diff left unrendered are counted apart (`--all` renders them).
    let listed: Vec<_> = r
        .apps
        .iter()
        .filter(|a| r.list_every_app || (a.touched && a.status != "unchanged"))
        .collect();
    let unchanged = r
        .apps
        .iter()
        .filter(|a| !r.list_every_app && a.status == "unchanged")
        .count();
    let untouched = r.apps.len() - listed.len() - unchanged;
    let width = listed.iter().map(|a| a.name.len()).max().unwrap_or(0);
    for a in listed {
        let mode = if a.status == "rendered" || a.status == "partial" {
            format!(", {}", mode_text(a.prune_mode))
        } else {
            String::new()
        };
        writeln!(
            out,
            "  {:width$}  {}{}  {}",
            a.name,
            a.status,
            mode,
            if a.source.is_empty() { "." } else { &a.source }
        )?;
    }
    if untouched > 0 {
        writeln!(
            out,
            "  and {untouched} app(s) the change does not touch (--verbose lists them)"
        )?;
    }
    if unchanged > 0 {
        writeln!(
            out,
            "  and {unchanged} unchanged app(s): not rendered, everything they read is identical at both revisions (--all renders them)"
        )?;
    }
    if r.base.is_some() {
        writeln!(out)?;
        if r.prunes.is_empty() {
            writeln!(out, "Prunes: none")?;
        } else {
            writeln!(out, "Prunes ({}):", r.prunes.len())?;
            let mut current: Option<&str> = None;
            for p in &r.prunes {
                if current != Some(p.app.as_str()) {
                    // A cascade happens at the pace of whatever deletes the
                    // Application, not of the app's own sync policy.
                    let what = if p.reason == "app-deleted" {
                        "Application deleted, "
                    } else {
                        ""
                    };
                    writeln!(out, "  {} ({what}{})", p.app, mode_text(p.mode))?;
                    current = Some(&p.app);
                }
                let mut why = p.reason.to_string();
                if let Some(d) = &p.detail {
                    why.push_str(&format!(" → {}", short_key(d)));
                }
                if let Some(pr) = &p.protection {
                    why.push_str(&format!(", protected by {pr}"));
                }
                writeln!(out, "    - {} ({why})", p.resource)?;
                // The creation that replaces it, right under it: together
                // they are one object deleted and created again.
                if let Some(c) = &p.recreated_as {
                    writeln!(
                        out,
                        "      + {c} (created in its place: a delete and a create, not an update)"
                    )?;
                }
            }
        }
    }
    if let Some(d) = &r.diff {
        rendered_diff(d, color, out)?;
    }
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(r.width)
        .with_links(false);
    if !r.findings.is_empty() {
        writeln!(out)?;
    }
    for f in &r.findings {
        let (source, span) = match &f.location {
            Some(loc) => match r.files.get(&(loc.side, loc.file.clone())) {
                Some(text) => {
                    let name = match loc.side {
                        Side::Base => format!("{} (base)", loc.file),
                        Side::Head => loc.file.clone(),
                    };
                    let span = loc.line.and_then(|l| line_span(text, l));
                    (Some(NamedSource::new(name, text.to_string())), span)
                }
                None => (None, None),
            },
            None => (None, None),
        };
        let adapter = Adapter {
            finding: f,
            source,
            span,
        };
        let mut s = String::new();
        if handler.render_report(&mut s, &adapter).is_err() {
            s = format!("{}[{}]: {}\n", f.severity, f.rule.code, f.message);
        }
        out.write_all(s.as_bytes())?;
        if span.is_none() {
            if let Some(loc) = &f.location {
                let line = loc.line.map(|l| format!(":{l}")).unwrap_or_default();
                writeln!(out, "  at {}{line}", loc.file)?;
            }
        }
        // Not wrapped like the help above: a trailer or annotation split
        // over two lines could not be copied.
        if let Some(line) = r.acknowledge_line(f) {
            writeln!(out, "  {line}")?;
        }
        writeln!(out)?;
    }
    let (e, w, i) = r.counts();
    let acked = r
        .findings
        .iter()
        .filter(|f| f.acknowledged.is_some())
        .count();
    let ack = if acked > 0 {
        format!(", {acked} acknowledged")
    } else {
        String::new()
    };
    writeln!(out, "{e} error(s), {w} warning(s), {i} info{ack}")
}

/// The rendered diff, after the plan and before the findings: each app with
/// its counts, then each added or modified resource's unified diff
/// (coloured: removed lines red, added green, hunk headers cyan) and each
/// removed resource on one line.
fn rendered_diff(
    d: &crate::rendered_diff::RenderedDiff,
    color: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(out)?;
    if d.apps.is_empty() {
        writeln!(out, "Rendered diff: no rendered manifest changes")?;
        return not_diffed(d, out);
    }
    writeln!(out, "Rendered diff ({} app(s)):", d.apps.len())?;
    for app in &d.apps {
        let (added, modified, removed) = app.counts();
        let what = match app.change {
            crate::rendered_diff::Change::Added => "app added, ",
            crate::rendered_diff::Change::Removed => "app deleted, ",
            crate::rendered_diff::Change::Modified => "",
        };
        writeln!(
            out,
            "  {} ({what}{}{added} added, {modified} modified, {removed} removed)",
            app.app,
            partial_label(&app.partial)
        )?;
        for res in &app.resources {
            // A removed resource is one line: the plan above lists it with
            // its danger, and its whole body would bury the changes a
            // reviewer reads; Markdown, JSON and `--format diff` keep it.
            if res.change == crate::rendered_diff::Change::Removed {
                let lines = res.base.as_deref().map_or(0, |b| b.lines().count());
                writeln!(out, "    - {} (removed, {lines} line(s))", res.id)?;
                continue;
            }
            for line in res.unified.lines() {
                let paint = if !color {
                    None
                } else if line.starts_with("+++") || line.starts_with("---") {
                    Some("\x1b[1m")
                } else if line.starts_with('+') {
                    Some("\x1b[32m")
                } else if line.starts_with('-') {
                    Some("\x1b[31m")
                } else if line.starts_with("@@") {
                    Some("\x1b[36m")
                } else {
                    None
                };
                match paint {
                    Some(p) => writeln!(out, "    {p}{line}\x1b[0m")?,
                    None => writeln!(out, "    {line}")?,
                }
            }
        }
    }
    not_diffed(d, out)
}

/// `partial: <source>, <source> not rendered; ` for a partial app's diff
/// (empty for a whole render): the diff shows its other sources only.
pub(crate) fn partial_label(left_out: &[String]) -> String {
    if left_out.is_empty() {
        String::new()
    } else {
        format!("partial: {} not rendered; ", left_out.join(", "))
    }
}

/// The touched apps the rendered diff could not compare, one line each.
fn not_diffed(d: &crate::rendered_diff::RenderedDiff, out: &mut dyn Write) -> std::io::Result<()> {
    if d.not_diffed.is_empty() {
        return Ok(());
    }
    writeln!(out, "Not diffed ({} app(s)):", d.not_diffed.len())?;
    for n in &d.not_diffed {
        writeln!(out, "  {}: {}", n.app, n.why)?;
    }
    Ok(())
}

fn short(rev: &str) -> &str {
    if rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()) {
        &rev[..12]
    } else {
        rev
    }
}
