//! Markdown for a pull-request comment or `$GITHUB_STEP_SUMMARY`: counts by
//! severity, a prune table per app, and each finding in a `<details>`.
//!
//! GitHub refuses comments over 65,536 characters, so the body is capped: when
//! the whole report does not fit, the sections that fit are kept and the rest
//! is summarised in a closing line.

use crate::argocd::instances::short_key;
use std::io::Write;

use super::{PruneRow, Report};
use crate::argocd::PruneMode;
use crate::finding::{Finding, Severity};

/// The largest body we write, in bytes (GitHub counts characters; bytes are
/// never fewer, so this stays under its 65,536-character limit with room).
pub(crate) const MAX_BYTES: usize = 65_000;

fn short(rev: &str) -> &str {
    if rev.len() == 40 && rev.bytes().all(|b| b.is_ascii_hexdigit()) {
        &rev[..12]
    } else {
        rev
    }
}

/// Escapes text placed in a table cell.
fn cell(s: &str) -> String {
    md_text(s)
}

/// Escapes text placed inside HTML (`<summary>`).
fn html(s: &str) -> String {
    super::without_runner_commands(s)
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// Escapes repository text placed in Markdown prose: HTML is inert (no
/// `<!--` hiding the rest of the summary, no `</details>`), the characters
/// that open code spans, links, emphasis and tables are backslash-escaped
/// (no backtick in a name opens a span that swallows what follows), a
/// leading block marker (`#`, `-`, `+`, `=`) is escaped, and it stays on
/// one line.
fn md_text(s: &str) -> String {
    let s = super::without_runner_commands(s);
    let mut out = String::with_capacity(s.len());
    for (i, c) in s.chars().enumerate() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\n' | '\r' => out.push(' '),
            '\\' | '`' | '*' | '_' | '[' | ']' | '|' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '#' | '-' | '+' | '=' if i == 0 => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

/// Repository text as one Markdown code span: fenced with more backticks
/// than any run inside it (CommonMark), so a backtick in a file name cannot
/// close the span; inside a code span HTML is not interpreted.
fn code(s: &str) -> String {
    let s = super::without_runner_commands(s).replace(['\n', '\r'], " ");
    let mut longest = 0;
    let mut run = 0;
    for c in s.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let pad = if s.starts_with('`') || s.ends_with('`') || s.is_empty() {
        " "
    } else {
        ""
    };
    format!("{fence}{pad}{s}{pad}{fence}")
}

fn mode_text(m: PruneMode) -> &'static str {
    match m {
        PruneMode::Automated => "automated prune",
        PruneMode::Manual => "prune on manual sync",
        PruneMode::None => "not synced",
    }
}

fn icon(f: &Finding) -> &'static str {
    match &f.acknowledged {
        Some(a) if a.by_author() => return ":warning:",
        Some(_) => return ":white_check_mark:",
        None => {}
    }
    match f.severity {
        Severity::Error => ":x:",
        Severity::Warning => ":warning:",
        Severity::Info => ":information_source:",
    }
}

fn header(r: &Report) -> String {
    let mut s = String::from("## gitops-lint\n\n");
    let what = match &r.base {
        Some(b) => format!("`diff {}..{}`", short(b), short(&r.head)),
        None => format!("`check {}`", short(&r.head)),
    };
    let (e, w, i) = r.counts();
    let bold = |n: usize, word: &str| {
        if n > 0 {
            format!("**{n} {word}**")
        } else {
            format!("{n} {word}")
        }
    };
    s.push_str(&format!(
        "{what}: {}, {}, {}",
        bold(e, if e == 1 { "error" } else { "errors" }),
        bold(w, if w == 1 { "warning" } else { "warnings" }),
        format_args!("{i} info")
    ));
    let acked = r.acknowledged();
    if acked > 0 {
        s.push_str(&format!(", {acked} acknowledged"));
    }
    if r.base.is_some() {
        let apps: std::collections::BTreeSet<&str> =
            r.prunes.iter().map(|p| p.app.as_str()).collect();
        s.push_str(&format!(
            "; {} resource(s) deleted in {} app(s)",
            r.prunes.len(),
            apps.len()
        ));
    }
    s.push_str("\n\n");
    for n in &r.notes {
        s.push_str(&format!("> **Note:** {}\n\n", md_text(n)));
    }
    s
}

fn prune_table(app: &str, rows: &[&PruneRow]) -> String {
    let mode = rows.first().map_or(PruneMode::None, |p| p.mode);
    let mut s = format!(
        "#### {} ({})\n\n| kind | namespace/name | reason | protected |\n|---|---|---|---|\n",
        code(app),
        mode_text(mode)
    );
    for p in rows {
        let name = if p.resource.namespace.is_empty() {
            p.resource.name.clone()
        } else {
            format!("{}/{}", p.resource.namespace, p.resource.name)
        };
        let mut reason = p.reason.to_string();
        if let Some(d) = &p.detail {
            reason.push_str(&format!(" → {}", short_key(d)));
        }
        let protected = p
            .protection
            .as_deref()
            .map_or_else(|| "no".to_string(), |x| format!("yes ({x})"));
        s.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            cell(&p.resource.kind),
            cell(&name),
            cell(&reason),
            cell(&protected)
        ));
    }
    s.push('\n');
    s
}

fn finding_block(r: &Report, i: usize, f: &Finding) -> String {
    let state = match &f.acknowledged {
        Some(a) => a.label().to_string(),
        None => f.severity.to_string(),
    };
    // The summary names what the finding is about; the body says why.
    let subject = match (&f.resource, &f.app) {
        (Some(res), Some(app)) => format!("{res} in {app}"),
        (Some(res), None) => res.to_string(),
        (None, Some(app)) => format!("app {app}"),
        (None, None) => String::new(),
    };
    let subject = if subject.is_empty() {
        String::new()
    } else {
        format!(": {}", html(&subject))
    };
    let mut s = format!(
        "<details><summary>{} <b>{} {}</b> ({state}){subject}</summary>\n\n",
        icon(f),
        f.rule.code,
        f.rule.name,
    );
    s.push_str(&format!("{}\n\n", md_text(&f.message)));
    let loc = f.location.as_ref().or_else(|| r.anchor(i));
    if let Some(l) = loc {
        let line = l.line.map(|n| format!(":{n}")).unwrap_or_default();
        let side = match (l.side, r.base.is_some()) {
            (crate::finding::Side::Base, true) => " (base revision)",
            _ => "",
        };
        s.push_str(&format!(
            "- at {}{side}\n",
            code(&format!("{}{line}", l.file))
        ));
    }
    if let Some(app) = &f.app {
        s.push_str(&format!("- app {}\n", code(app)));
    }
    if let Some(a) = &f.acknowledged {
        s.push_str(&format!("- acknowledged: {}\n", md_text(&a.to_string())));
    }
    if let Some(h) = &f.help {
        s.push_str(&format!("- help: {}\n", md_text(h)));
    }
    if let Some(line) = r.acknowledge_line(f) {
        s.push_str(&format!("- {}\n", md_text(line)));
    }
    s.push_str(&format!(
        "- explain: `gitops-lint explain {}`\n\n</details>\n\n",
        f.rule.code
    ));
    s
}

/// Where a section stands when the body is too large for all of them:
/// what fails the run first (the reader of a red check must see why),
/// then the other unacknowledged findings, most severe first, then the
/// prune tables, then what is acknowledged.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Rank {
    FailsRun(std::cmp::Reverse<Severity>),
    Unacknowledged(std::cmp::Reverse<Severity>),
    PruneTable,
    Acknowledged(std::cmp::Reverse<Severity>),
}

/// The findings that fail the run, listed in the header (at most
/// [`FAILING_NAMED`], each on one short line), so a report cut to size
/// still says why the check is red.
const FAILING_NAMED: usize = 10;

/// The longest subject of a finding named in the header, in characters.
const FAILING_SUBJECT: usize = 200;

fn failing_lines(r: &Report) -> String {
    let failing: Vec<&Finding> = r.findings.iter().filter(|f| r.fails_run(f)).collect();
    if failing.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "**Fails the run** ({}):

",
        failing.len()
    );
    for f in failing.iter().take(FAILING_NAMED) {
        let subject = match (&f.resource, &f.app) {
            (Some(res), Some(app)) => format!("{res} in {app}"),
            (Some(res), None) => res.to_string(),
            (None, Some(app)) => format!("app {app}"),
            (None, None) => String::new(),
        };
        let mut short: String = subject.chars().take(FAILING_SUBJECT).collect();
        if short.len() < subject.len() {
            short.push('…');
        }
        let subject = short;
        s.push_str(&format!(
            "- {} {} {}{}\n",
            icon(f),
            f.rule.code,
            f.rule.name,
            if subject.is_empty() {
                String::new()
            } else {
                format!(": {}", md_text(&subject))
            }
        ));
    }
    if failing.len() > FAILING_NAMED {
        s.push_str(&format!("- and {} more\n", failing.len() - FAILING_NAMED));
    }
    s.push('\n');
    s
}

/// Renders the body, capped at `max` bytes. The sections keep their order
/// in the document; which of them fit is decided by [`Rank`].
#[must_use]
pub(crate) fn render(r: &Report, max: usize) -> String {
    // (text, rank); `None`: a heading, kept when a section under it is.
    let mut sections: Vec<(String, Option<Rank>)> = Vec::new();
    let mut tables = 0usize;
    if r.base.is_some() && !r.prunes.is_empty() {
        sections.push(("### What a sync would delete\n\n".to_string(), None));
        let mut i = 0;
        while i < r.prunes.len() {
            let app = &r.prunes[i].app;
            let rows: Vec<&PruneRow> = r.prunes[i..].iter().take_while(|p| &p.app == app).collect();
            i += rows.len();
            sections.push((prune_table(app, &rows), Some(Rank::PruneTable)));
            tables += 1;
        }
    }
    // Unacknowledged findings first, most severe first; acknowledged last.
    let mut order: Vec<usize> = (0..r.findings.len()).collect();
    order.sort_by_key(|&i| {
        let f = &r.findings[i];
        (f.acknowledged.is_some(), std::cmp::Reverse(f.severity), i)
    });
    let findings_heading = sections.len();
    if !order.is_empty() {
        sections.push(("### Findings\n\n".to_string(), None));
    }
    for &i in &order {
        let f = &r.findings[i];
        let severity = std::cmp::Reverse(f.severity);
        let rank = if r.fails_run(f) {
            Rank::FailsRun(severity)
        } else if f.acknowledged.is_none() {
            Rank::Unacknowledged(severity)
        } else {
            Rank::Acknowledged(severity)
        };
        sections.push((finding_block(r, i, f), Some(rank)));
    }
    if order.is_empty() {
        sections.push(("No findings.\n".to_string(), None));
    }

    let mut out = header(r);
    out.push_str(&failing_lines(r));
    // Room for the closing line that explains what was left out, and for
    // the two headings.
    let reserve = 400 + 64;
    let mut by_rank: Vec<usize> = (0..sections.len())
        .filter(|&k| sections[k].1.is_some())
        .collect();
    by_rank.sort_by_key(|&k| (sections[k].1, k));
    let mut kept = vec![false; sections.len()];
    let mut used = out.len();
    for k in by_rank {
        // A section that does not fit is left out; smaller ones after it
        // in rank may still fit.
        if used + sections[k].0.len() + reserve <= max {
            used += sections[k].0.len();
            kept[k] = true;
        }
    }
    let (mut shown_findings, mut shown_tables) = (0usize, 0usize);
    for (k, (text, rank)) in sections.iter().enumerate() {
        let show = match rank {
            Some(_) => kept[k],
            // A heading is shown with anything under it.
            None if k == findings_heading && !order.is_empty() => kept[k + 1..].iter().any(|&x| x),
            None if text.starts_with("### What") => kept[k + 1..=k + tables].iter().any(|&x| x),
            None => true,
        };
        if !show {
            continue;
        }
        out.push_str(text);
        match rank {
            Some(Rank::PruneTable) => shown_tables += 1,
            Some(_) => shown_findings += 1,
            None => {}
        }
    }
    if shown_findings < order.len() || shown_tables < tables {
        out.push_str(&format!(
            "\n---\n**This report is too large for one comment** ({} of {} prune table(s) and {} of {} finding(s) shown; what fails the run first). \
             Run `gitops-lint diff` locally or see the SARIF results for the rest.\n",
            shown_tables,
            tables,
            shown_findings,
            order.len()
        ));
    }
    out
}

/// Writes the Markdown report.
///
/// # Errors
/// Write failures.
pub(crate) fn emit(r: &Report, out: &mut dyn Write) -> std::io::Result<()> {
    let mut body = render(r, MAX_BYTES);
    rendered_diff(r, &mut body, MAX_BYTES);
    out.write_all(body.as_bytes())
}

/// Room kept for the rendered diff's heading and closing note.
const DIFF_RESERVE: usize = 600;
/// The most the note under a cut diff takes.
const CUT_NOTE: usize = 160;

/// The rendered diff under the report: one collapsible section per app, its
/// unacknowledged findings first (what a reviewer must not miss), then each
/// resource's diff. What does not fit in `max` is cut from the largest
/// diffs first (each keeps as many lines as the common cap allows), with a
/// note in each cut diff and one under the sections.
fn rendered_diff(r: &Report, out: &mut String, max: usize) {
    let Some(d) = &r.diff else {
        return;
    };
    if d.apps.is_empty() {
        out.push_str("\n### Rendered diff\n\nNo rendered manifest changes.\n");
        out.push_str(&not_diffed(d));
        return;
    }
    // The apps not diffed are never cut: their room is taken first.
    let unshown = not_diffed(d);
    let room = max.saturating_sub(out.len() + DIFF_RESERVE + unshown.len());
    // Each app's heading and findings (never cut), and its diffs' lines.
    let heads: Vec<String> = d.apps.iter().map(|a| app_heading(r, a)).collect();
    let fixed: usize = heads.iter().map(|h| h.len() + 32).sum();
    let mut diffs: Vec<(usize, usize, Vec<&str>)> = Vec::new();
    for (i, a) in d.apps.iter().enumerate() {
        for (j, res) in a.resources.iter().enumerate() {
            diffs.push((i, j, res.unified.lines().collect()));
        }
    }
    let fence_cost = 40;
    let size = |lines: &[&str]| lines.iter().map(|l| l.len() + 1).sum::<usize>() + fence_cost;
    let total: usize = diffs.iter().map(|(_, _, l)| size(l)).sum();
    // The cap in bytes per diff such that all of them, each cut to it, fit.
    let cap = if fixed + total <= room {
        usize::MAX
    } else {
        let budget = room.saturating_sub(fixed);
        let mut sizes: Vec<usize> = diffs.iter().map(|(_, _, l)| size(l)).collect();
        sizes.sort_unstable();
        let mut left = budget;
        let mut cap = 0;
        for (k, s) in sizes.iter().enumerate() {
            let n = sizes.len() - k;
            if s * n <= left {
                left -= s;
                cap = *s;
            } else {
                cap = left / n;
                break;
            }
        }
        cap
    };
    let mut cut = 0usize;
    let mut sections = String::from("\n### Rendered diff\n\n");
    let mut next = diffs.iter().peekable();
    for (i, a) in d.apps.iter().enumerate() {
        sections.push_str(&heads[i]);
        while let Some((_, j, lines)) = next.next_if(|(ai, _, _)| *ai == i) {
            let res = &a.resources[*j];
            if res.unified.is_empty() {
                sections.push_str(&format!(
                    "- {} removed (body hidden)\n\n",
                    code(&res.id.to_string())
                ));
                continue;
            }
            let mut kept = lines.len();
            if size(lines) > cap {
                // The note under a cut diff comes out of its share.
                let mut used = fence_cost + CUT_NOTE;
                kept = lines
                    .iter()
                    .take_while(|l| {
                        used += l.len() + 1;
                        used <= cap
                    })
                    .count();
                cut += 1;
            }
            sections.push_str(&fenced(&lines[..kept]));
            if kept < lines.len() {
                sections.push_str(&format!(
                    "_{} of {} lines of this diff shown: the comment has room for no more; `gitops-lint diff` prints it whole._\n\n",
                    kept,
                    lines.len()
                ));
            }
        }
        sections.push_str("</details>\n\n");
    }
    if cut > 0 {
        sections.push_str(&format!(
            "**The rendered diff is too large for one comment**: {cut} of {} resource diff(s), the largest, are cut. `gitops-lint diff` (or `--format diff`) shows them whole.\n",
            diffs.len()
        ));
    }
    if out.len() + sections.len() > max {
        // Headings and findings alone overflow: only the note is kept.
        out.push_str(&format!(
            "\n### Rendered diff\n\n**The rendered diff of {} app(s) is too large for one comment.** `gitops-lint diff` (or `--format diff`) shows it.\n",
            d.apps.len()
        ));
        out.push_str(&unshown);
        return;
    }
    out.push_str(&sections);
    out.push_str(&unshown);
}

/// The touched apps the rendered diff could not compare, one bullet each
/// (empty when there are none).
fn not_diffed(d: &crate::rendered_diff::RenderedDiff) -> String {
    if d.not_diffed.is_empty() {
        return String::new();
    }
    let mut s = format!("\n**Not diffed** ({} app(s)):\n\n", d.not_diffed.len());
    for n in &d.not_diffed {
        s.push_str(&format!("- {}: {}\n", code(&n.app), md_text(&n.why)));
    }
    s
}

/// An app's `<details>` opening: its name and counts, then its findings
/// not acknowledged, most severe first.
fn app_heading(r: &Report, a: &crate::rendered_diff::AppDiff) -> String {
    let (added, modified, removed) = a.counts();
    let what = match a.change {
        crate::rendered_diff::Change::Added => "app added: ",
        crate::rendered_diff::Change::Removed => "app deleted: ",
        crate::rendered_diff::Change::Modified => "",
    };
    let mut found: Vec<&Finding> = r
        .findings
        .iter()
        .filter(|f| f.acknowledged.is_none() && f.app.as_deref() == Some(a.app.as_str()))
        .collect();
    found.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let flag = if found.is_empty() {
        String::new()
    } else {
        format!("{} ", icon(found[0]))
    };
    let mut s = format!(
        "<details><summary>{flag}<b>{}</b> ({what}{}{added} added, {modified} modified, {removed} removed)</summary>\n\n",
        html(&a.app),
        html(&super::human::partial_label(&a.partial))
    );
    for f in &found {
        s.push_str(&format!(
            "- {} **{}** {}\n",
            icon(f),
            f.rule.code,
            md_text(&f.message)
        ));
    }
    if !found.is_empty() {
        s.push('\n');
    }
    s
}

/// Lines as a fenced `diff` block, the fence longer than any run of
/// backticks inside (CommonMark), so no line closes it.
fn fenced(lines: &[&str]) -> String {
    let mut longest = 0;
    for l in lines {
        let mut run = 0;
        for c in l.chars() {
            run = if c == '`' { run + 1 } else { 0 };
            longest = longest.max(run);
        }
    }
    let fence = "`".repeat((longest + 1).max(3));
    let mut s = format!("{fence}diff\n");
    for l in lines {
        s.push_str(&super::without_runner_commands(l));
        s.push('\n');
    }
    s.push_str(&fence);
    s.push_str("\n\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::tests::sample;

    #[test]
    fn counts_tables_and_details() {
        let md = render(&sample(), MAX_BYTES);
        assert!(
            md.contains("**1 error**, 0 warnings, 1 info, 1 acknowledged"),
            "{md}"
        );
        assert!(md.contains("> **Note:** .gitops-lint.yaml differs at head"));
        assert!(md.contains("#### `payments` (automated prune)"));
        assert!(md.contains("| PersistentVolumeClaim | payments/data | removed | no |"));
        // A `|` in a name cannot break the table.
        assert!(md.contains("| ConfigMap | web/a\\|b | removed | yes (Prune=false) |"));
        assert_eq!(md.matches("<details>").count(), 3);
        // The error comes before the acknowledged warning.
        let err = md.find("(error)").expect("error shown");
        let ack = md.find("(acknowledged)").expect("ack shown");
        assert!(err < ack);
    }

    #[test]
    fn oversized_reports_stay_under_the_cap_and_say_so() {
        let mut r = sample();
        let f = r.findings[0].clone();
        for k in 0..2000 {
            let mut g = f.clone();
            g.message = format!("{} number {k} {}", g.message, "x".repeat(80));
            r.findings.push(g);
        }
        r.anchors.clear();
        let md = render(&r, MAX_BYTES);
        assert!(md.len() <= MAX_BYTES, "{}", md.len());
        assert!(md.contains("**This report is too large for one comment**"));
        assert!(md.contains("of 2003 finding(s) shown"));
        // The counts in the header still cover everything.
        assert!(md.contains("**2001 errors**"), "{}", &md[..300]);
    }

    fn body(r: &Report) -> String {
        let mut out = Vec::new();
        emit(r, &mut out).unwrap_or_else(|e| panic!("{e}"));
        String::from_utf8(out).unwrap_or_default()
    }

    fn resource(name: &str, lines: usize) -> crate::rendered_diff::ResourceDiff {
        let mut unified = format!("--- a/x/{name}.yaml\n+++ b/x/{name}.yaml\n@@ -1 +1 @@\n");
        for k in 0..lines {
            unified.push_str(&format!("+  key{k}: value {k} {}\n", "y".repeat(40)));
        }
        crate::rendered_diff::ResourceDiff {
            id: crate::manifest::ResourceId {
                group: String::new(),
                kind: "ConfigMap".into(),
                namespace: "web".into(),
                name: name.into(),
            },
            change: crate::rendered_diff::Change::Modified,
            unified,
            base: None,
            head: None,
        }
    }

    #[test]
    fn the_rendered_diff_follows_the_findings_one_section_per_app() {
        let mut r = sample();
        r.diff = Some(crate::rendered_diff::RenderedDiff {
            apps: vec![crate::rendered_diff::AppDiff {
                app: "payments".into(),
                change: crate::rendered_diff::Change::Modified,
                resources: vec![resource("small", 2)],
                partial: vec!["Helm chart `db` from `https://charts.example`".into()],
            }],
            not_diffed: vec![crate::rendered_diff::NotDiffed {
                app: "ledger".into(),
                why: "at head, its render fails (GL000)".into(),
            }],
        });
        let md = body(&r);
        let findings = md.find("### Findings").expect("findings");
        let diff = md.find("### Rendered diff").expect("diff");
        assert!(findings < diff);
        assert!(
            md.contains("<b>payments</b> (partial: Helm chart `db` from `https://charts.example` not rendered; 0 added, 1 modified, 0 removed)"),
            "{md}"
        );
        assert!(
            md.contains(
                "**Not diffed** (1 app(s)):\n\n- `ledger`: at head, its render fails (GL000)\n"
            ),
            "{md}"
        );
        assert!(md.contains("```diff\n--- a/x/small.yaml"));
        assert!(!md.contains("too large"));
    }

    #[test]
    fn many_middling_diffs_are_each_cut_to_fit() {
        let mut r = sample();
        r.diff = Some(crate::rendered_diff::RenderedDiff {
            apps: (0..100)
                .map(|k| crate::rendered_diff::AppDiff {
                    app: format!("svc-{k}"),
                    change: crate::rendered_diff::Change::Modified,
                    resources: vec![resource("deploy", 14)],
                    partial: vec![],
                })
                .collect(),
            not_diffed: vec![],
        });
        let md = body(&r);
        assert!(md.len() <= MAX_BYTES, "{}", md.len());
        assert_eq!(md.matches("<b>svc-").count(), 100);
        assert!(
            md.contains("100 of 100 resource diff(s), the largest, are cut"),
            "{}",
            &md[md.len() - 400..]
        );
        assert!(!md.contains("is too large for one comment.**"));
    }

    #[test]
    fn a_rendered_diff_past_the_comment_limit_cuts_the_largest_diffs() {
        let mut r = sample();
        r.diff = Some(crate::rendered_diff::RenderedDiff {
            apps: vec![
                crate::rendered_diff::AppDiff {
                    app: "big".into(),
                    change: crate::rendered_diff::Change::Modified,
                    resources: vec![resource("huge", 3000), resource("small", 3)],
                    partial: vec![],
                },
                crate::rendered_diff::AppDiff {
                    app: "other".into(),
                    change: crate::rendered_diff::Change::Added,
                    resources: vec![resource("tiny", 1)],
                    partial: vec![],
                },
            ],
            not_diffed: vec![],
        });
        let md = body(&r);
        assert!(md.len() <= MAX_BYTES, "{}", md.len());
        // The small diffs are whole; the huge one is cut with a note.
        assert!(md.contains("+  key2: value 2"));
        assert!(md.contains("<b>other</b> (app added: 0 added, 1 modified, 0 removed)"));
        assert!(
            md.contains("lines of this diff shown"),
            "{}",
            &md[md.len() - 800..]
        );
        assert!(md.contains("1 of 3 resource diff(s), the largest, are cut"));
        // Every fence opened is closed.
        assert_eq!(md.matches("```diff").count(), 3);
        assert_eq!(md.matches("\n```\n").count(), 3);
        assert!(md.ends_with("`--format diff`) shows them whole.\n"));
    }
}
