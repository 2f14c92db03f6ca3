//! GL000 render-failed: an app that could not be rendered has unknown prunes.

use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::argocd::{App, AppStatus, Inventory};
use crate::finding::{Finding, Severity, Side};
use crate::render::{RenderError, RenderErrorKind};

/// See `rules/GL000-render-failed.md`.
pub struct RenderFailed;

static META: RuleMeta = RuleMeta {
    code: "GL000",
    name: "render-failed",
    category: Category::Input,
    default_severity: Severity::Error,
    mode: Mode::Single,
    doc: include_str!("../../rules/GL000-render-failed.md"),
};

/// A missing tool or an unsupported feature is not the repository's fault:
/// it must not fail every pull request.
fn severity(e: &RenderError) -> Severity {
    match e.kind {
        RenderErrorKind::Content | RenderErrorKind::OutsideRepo => Severity::Error,
        RenderErrorKind::ToolMissing | RenderErrorKind::Unsupported => Severity::Warning,
    }
}

fn finding(app: &App, e: &RenderError, side: Side, diff: bool) -> Finding {
    let rev = match side {
        Side::Base => "base",
        Side::Head => "head",
    };
    let consequence = if diff {
        "what a sync would prune is unknown"
    } else {
        "its resources are not checked"
    };
    let (file, line) = match &e.file {
        Some(f) => (Some(f.as_str()), e.line),
        None => (app.origin.file.as_deref(), app.origin.line),
    };
    let help = match e.kind {
        RenderErrorKind::ToolMissing => "install the missing tool where gitops-lint runs, or exclude this app in .gitops-lint.yaml",
        RenderErrorKind::Unsupported => "this app cannot be analysed offline; review its changes by hand",
        RenderErrorKind::OutsideRepo => "keep every file an app reads inside the repository",
        RenderErrorKind::Content => "fix the error; until it renders, nothing about this app is checked",
    };
    Finding::new(
        &META,
        format!(
            "`{}` could not be rendered{}, so {consequence}: {}",
            app.display_name(),
            // `check` reads one revision: naming a side would confuse.
            if diff {
                format!(" at {rev}")
            } else {
                String::new()
            },
            e.message
        ),
    )
    .severity(severity(e))
    .app(app.display_name())
    .at(side, file, line)
    .help(help)
}

/// Files of `inv` that cannot be parsed, except those also in `skip`.
fn broken_files(inv: &Inventory, skip: Option<&Inventory>, side: Side, out: &mut Vec<Finding>) {
    for (file, e) in &inv.broken_files {
        if skip.is_some_and(|s| s.broken_files.contains_key(file)) {
            continue;
        }
        // An app that read the file and failed on it already says so.
        let reported = inv.apps.values().any(
            |a| matches!(&a.status, AppStatus::Unrendered(ae) if ae.file.as_deref() == Some(file)),
        );
        if reported {
            continue;
        }
        out.push(
            Finding::new(&META, format!("`{file}` mentions Argo CD but cannot be parsed, so the Applications it declares are unknown: {}", e.message))
                .at(side, Some(file), e.line)
                .help("fix the YAML"),
        );
    }
}

impl Rule for RenderFailed {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        let diff = cx.plan.is_some();
        if let Some(base) = cx.base {
            for app in base.apps.values() {
                if let AppStatus::Unrendered(e) = &app.status {
                    // Reported once, at head, when it fails on both sides with the same error.
                    let same_at_head = cx.head.apps.get(&app.key).is_some_and(|h| matches!(&h.status, AppStatus::Unrendered(he) if he.message == e.message));
                    if !same_at_head {
                        out.push(finding(app, e, Side::Base, diff));
                    }
                }
            }
        }
        for app in cx.head.apps.values() {
            if let AppStatus::Unrendered(e) = &app.status {
                out.push(finding(app, e, Side::Head, diff));
            }
        }
        broken_files(cx.head, None, Side::Head, out);
        if let Some(base) = cx.base {
            broken_files(base, Some(cx.head), Side::Base, out);
        }
        // Unknowns the render statuses above do not already report: a vanished
        // app whose parent failed to render, an app that moved to a source
        // gitops-lint cannot read.
        if let Some(plan) = cx.plan {
            for u in &plan.unknown {
                let unrendered = |inv: &Inventory| {
                    inv.apps
                        .get(&u.app)
                        .is_some_and(|a| matches!(a.status, AppStatus::Unrendered(_)))
                };
                if unrendered(cx.head) || cx.base.is_some_and(unrendered) {
                    continue;
                }
                let name = u.app.strip_prefix("argocd/").unwrap_or(&u.app);
                let (message, help) = if cx.head.apps.contains_key(&u.app) {
                    (
                        format!(
                            "what a sync of `{name}` would prune is unknown: {}",
                            u.error.message
                        ),
                        "review what the new source renders against what the app has now",
                    )
                } else {
                    (
                        format!(
                            "whether `{name}` is deleted is unknown: {}",
                            u.error.message
                        ),
                        "fix the render failure of the app that manages it",
                    )
                };
                out.push(
                    Finding::new(&META, message)
                        .severity(severity(&u.error))
                        .app(name)
                        .at(Side::Head, u.error.file.as_deref(), u.error.line)
                        .help(help),
                );
            }
        }
    }
}
