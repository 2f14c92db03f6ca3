//! GL000 render-failed: an app that could not be rendered has unknown prunes.

use super::analysis::appset_resource;
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::argocd::instances::short_key;
use crate::argocd::{App, AppStatus, Inventory};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity, Side};
use crate::limits::first_and_more;
use crate::render::{RenderError, RenderErrorKind};

/// See `rules/GL000-render-failed.md`.
pub(crate) struct RenderFailed;

static META: RuleMeta = RuleMeta {
    code: "GL000",
    name: "render-failed",
    category: Category::Input,
    default_severity: Severity::Error,
    severity_note: "warning for a tool missing where gitops-lint runs, a new app, or a failure the base revision has too",
    mode: Mode::Single,
    doc: include_str!("../../rules/GL000-render-failed.md"),
    suppression: Suppression::UNJUDGED,
};

/// A missing tool or an unsupported feature is not the repository's fault:
/// it must not fail every pull request.
fn severity(e: &RenderError) -> Severity {
    match e.kind {
        // Trust is decided at the base revision: a repository that is not
        // trusted there is never contacted, and never a warning.
        RenderErrorKind::Content | RenderErrorKind::OutsideRepo | RenderErrorKind::Untrusted => {
            Severity::Error
        }
        RenderErrorKind::ToolMissing | RenderErrorKind::Unsupported => Severity::Warning,
    }
}

/// The severity of a failure the change causes (the app rendered at base,
/// or is new): the pull request chose content that cannot be judged, so it
/// is an error whatever the reason, except a tool missing on the runner,
/// which is the runner's fault and stays a warning.
fn caused_severity(e: &RenderError) -> Severity {
    match e.kind {
        RenderErrorKind::ToolMissing => Severity::Warning,
        _ => Severity::Error,
    }
}

/// Whether an app failing at both revisions fails on exactly the same
/// input: the same Application, the same error, and every path its render
/// read (its source directories included, see `argocd::render_fresh`) with
/// the same id. Such a failure is not the change's: a diff leaves it to
/// `check` and `--all`.
fn same_failure(base: &App, head: &App) -> bool {
    match (&base.status, &head.status) {
        (AppStatus::Unrendered(b), AppStatus::Unrendered(h)) => {
            b == h && base.object == head.object && base.inputs == head.inputs
        }
        _ => false,
    }
}

/// The app of `base` whose objects the new `app` would take over: one
/// rendering a source of it (the same repository and path, or the same
/// chart of the same Helm repository) into the same destination namespace
/// and cluster renders objects of the same identities (Argo CD keys a
/// resource by group, kind, namespace and name: AC `controller/state.go`
/// `CompareAppState`), which the new app would then apply and track.
fn claimed_owner<'a>(app: &App, base: &'a Inventory) -> Option<&'a App> {
    let places = |a: &App| {
        a.spec
            .sources
            .iter()
            .filter(|s| s.ref_name.is_none() || s.path.is_some())
            .map(|s| {
                (
                    crate::argocd::normalize_repo_url(&s.repo_url),
                    s.path.clone(),
                    s.chart.clone(),
                )
            })
            .collect::<Vec<_>>()
    };
    let mine = places(app);
    base.apps.values().find(|b| {
        b.key != app.key
            && !b.implicit
            && b.spec.dest_namespace == app.spec.dest_namespace
            && b.spec.dest_cluster == app.spec.dest_cluster
            && places(b).iter().any(|p| mine.contains(p))
    })
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
        RenderErrorKind::ToolMissing => "install the missing tool, or fetch the missing chart (`gitops-lint charts pull`, or a run without `--offline`), where gitops-lint runs, or exclude this app in .gitops-lint.yaml",
        RenderErrorKind::Unsupported => "this app cannot be analysed here (the message says why: a feature only a cluster evaluates, a chart repository that could not be reached); review its changes by hand",
        RenderErrorKind::Untrusted => "trust the repository in a change merged before this one (`chartRepositories:` in .gitops-lint.yaml at the base revision), so that its chart can be fetched and judged",
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

/// Most apps a grouped finding names before it counts the rest.
const NAMED_APPS: usize = 10;

/// Where a render error says its cause is: its own file and line, when it
/// names one (a values file, a kustomization); `None` when the finding is
/// placed on the app's Application for want of one (a chart's template
/// error names the chart in its message instead).
type CauseAt = Option<(String, Option<u32>)>;

/// Reports head failures that share one cause (the same error, judged
/// alike, at the same file and line when the error names one: one failing
/// template of a chart many apps render, one broken values file shared by
/// many apps) as one finding listing the apps it affects; a cause that
/// fails one app is reported as it is.
fn by_cause(failed: Vec<(String, Finding, CauseAt)>, out: &mut Vec<Finding>) {
    type Cause = (Severity, Option<String>, Option<u32>, String);
    let mut groups: Vec<(Cause, Vec<(String, Finding)>)> = Vec::new();
    for (app, f, at) in failed {
        let (file, line) = at.map_or((None, None), |(file, line)| (Some(file), line));
        // The message without the app's name: what every app of the cause shares.
        let rest = f.message.replacen(&format!("`{app}`"), "", 1);
        let cause = (f.severity, file, line, rest);
        match groups.iter_mut().find(|(c, _)| *c == cause) {
            Some((_, members)) => members.push((app, f)),
            None => groups.push((cause, vec![(app, f)])),
        }
    }
    for (_, mut members) in groups {
        if members.len() == 1 {
            out.extend(members.pop().map(|(_, f)| f));
            continue;
        }
        let names = first_and_more(
            members.iter().map(|(a, _)| format!("`{a}`")),
            NAMED_APPS,
            ", ",
        );
        let count = members.len();
        let (first_app, first) = members.swap_remove(0);
        let shared = first.message.replacen(&format!("`{first_app}`"), "", 1);
        let message = format!("apps {names} ({count}, one cause){shared}");
        out.push(Finding {
            message,
            app: None,
            ..first
        });
    }
}

/// Folds into the head failure of a parent app the children whose
/// deletion its failure makes unknown (the plan's unknowns carrying the
/// very error the parent failed on): one unrenderable app-of-apps is one
/// finding naming the apps it leaves unknown, not one per child. Returns
/// the keys of the children folded.
fn fold_children(
    cx: &RuleContext<'_>,
    failed: &mut [(String, Finding, CauseAt)],
    errors: &[&RenderError],
) -> std::collections::BTreeSet<String> {
    let mut folded = std::collections::BTreeSet::new();
    let Some(plan) = cx.plan else {
        return folded;
    };
    for ((_, f, _), e) in failed.iter_mut().zip(errors) {
        let children: Vec<&crate::plan::Unknown> = plan
            .unknown
            .iter()
            .filter(|u| !cx.head.apps.contains_key(&u.app) && u.error == **e)
            .collect();
        if children.is_empty() {
            continue;
        }
        f.message = format!(
            "{}; whether its {} child app(s) ({}) are deleted is unknown too",
            f.message,
            children.len(),
            first_and_more(
                children.iter().map(|u| format!("`{}`", short_key(&u.app))),
                NAMED_APPS,
                ", "
            )
        );
        // A child's deletion unknown is as grave as the parent's failure
        // the change brings.
        f.severity = f.severity.max(severity(e));
        folded.extend(children.iter().map(|u| u.app.clone()));
    }
    folded
}

/// Files of `inv` that cannot be parsed, except those also in `skip`.
/// With `unchanged_in`, a file broken identically (same blob) there is
/// skipped too, and one broken there with other content is a warning.
fn broken_files(
    inv: &Inventory,
    skip: Option<&Inventory>,
    unchanged_in: Option<&Inventory>,
    side: Side,
    out: &mut Vec<Finding>,
) {
    for (file, e) in &inv.broken_files {
        if skip.is_some_and(|s| s.broken_files.contains_key(file)) {
            continue;
        }
        let broken_before = unchanged_in.filter(|b| b.broken_files.contains_key(file));
        if broken_before
            .is_some_and(|b| b.broken_file_ids.get(file) == inv.broken_file_ids.get(file))
        {
            continue;
        }
        // An app that read the file and failed on it already says so.
        let reported = inv.apps.values().any(
            |a| matches!(&a.status, AppStatus::Unrendered(ae) if ae.file.as_deref() == Some(file)),
        );
        if reported {
            continue;
        }
        let (severity, already) = if broken_before.is_some() {
            (
                Severity::Warning,
                "; it could not be parsed at base either, so this change to it cannot be judged",
            )
        } else {
            (Severity::Error, "")
        };
        out.push(
            Finding::new(&META, format!("`{file}` mentions Argo CD but cannot be parsed, so the Applications it declares are unknown: {}{already}", e.message))
                .severity(severity)
                .at(side, Some(file), e.line)
                .help("fix the YAML"),
        );
    }
}

/// ApplicationSets with generators that cannot be evaluated offline (the
/// live cluster list, an SCM API, a plugin...): the Applications those
/// generate are unknown, and so is what they create, change and delete. The
/// clusters generator, for one, reads the cluster Secrets of the live
/// Argo CD namespace (argo-cd `applicationset/generators/cluster.go`
/// `getSecretsByClusterName`), which a repository need not hold.
///
/// Judged by cause in a diff (`judged_base`), as a file that does not parse
/// is: a set whose unevaluated part (the set without the generators that
/// were evaluated, whose Applications the plan compares one by one) is the
/// same at base is not the change's; one that could not be evaluated at
/// base either and whose unevaluated part changed is a warning; one the
/// change makes unevaluable (new, or evaluated whole at base) is an error.
/// Elsewhere (`check`, `--all`) each such set is a warning. A set removed
/// by the change that could not be evaluated at base is a warning when the
/// plan finds that its removal deletes what it generates: which
/// Applications is unknown. One that nothing prunes is kept by Argo CD, and
/// one whose file no longer parses is reported as that file.
fn unevaluable_sets(cx: &RuleContext<'_>, judged_base: Option<&Inventory>, out: &mut Vec<Finding>) {
    for (key, e) in &cx.head.appsets {
        let Ok(exp) = &e.expansion else {
            continue;
        };
        if exp.is_complete() {
            continue;
        }
        let (severity, already) = match judged_base.map(|b| b.appsets.get(key)) {
            None => (Severity::Warning, ""),
            Some(Some(b)) => match &b.expansion {
                Ok(bx) if !bx.is_complete() => {
                    if bx.unevaluated_part(&b.object) == exp.unevaluated_part(&e.object) {
                        continue;
                    }
                    (
                        Severity::Warning,
                        "; they could not be evaluated at base either, so this change to the ApplicationSet cannot be judged",
                    )
                }
                _ => (Severity::Error, ""),
            },
            Some(None) => (Severity::Error, ""),
        };
        let set = short_key(key);
        out.push(
            Finding::new(
                &META,
                format!(
                    "ApplicationSet `{set}` has generators that cannot be evaluated offline, so the Applications they generate, and what those create, change and delete, are unknown: {}{already}",
                    exp.unresolved.join("; ")
                ),
            )
            .severity(severity)
            .resource(appset_resource(key))
            .at(Side::Head, e.origin.file.as_deref(), e.origin.line)
            .help(UNEVALUABLE_HELP),
        );
    }
    // A set removed whose Applications were unknown: the plan tells whether
    // its removal deletes what it generates (something prunes it, and its
    // Applications go with their ownerReferences); which those are is unknown
    // too, and nothing at head says so.
    let (Some(base), Some(plan)) = (cx.base, cx.plan) else {
        return;
    };
    for key in &plan.unevaluable_sets_deleted {
        let Some((b, Ok(bx))) = base.appsets.get(key).map(|b| (b, &b.expansion)) else {
            continue;
        };
        let set = short_key(key);
        out.push(
            Finding::new(
                &META,
                format!(
                    "ApplicationSet `{set}` is removed, and generators of it could not be evaluated offline at base, so which Applications its removal deletes is unknown: {}",
                    bx.unresolved.join("; ")
                ),
            )
            .severity(Severity::Warning)
            .resource(appset_resource(key))
            .at(Side::Base, b.origin.file.as_deref(), b.origin.line)
            .help(UNEVALUABLE_HELP),
        );
    }
}

const UNEVALUABLE_HELP: &str = "for a `clusters` generator, list the clusters Argo CD has under `clusters:` in .gitops-lint.yaml; otherwise review what it generates by hand (`argocd appset generate`)";

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
        // In a diff (without `--all`) a failure is judged by its cause: one
        // the change brings is an error (the change cannot be judged), one
        // that fails at both revisions is a warning when the change touches
        // its inputs and is not reported when it does not.
        let judged_base = cx.base.filter(|_| diff && cx.only_changed);
        // Head failures, grouped by cause before they are reported.
        let mut failed: Vec<(String, Finding, CauseAt)> = Vec::new();
        // The render error of each entry of `failed`.
        let mut failed_errors: Vec<&RenderError> = Vec::new();
        for app in cx.head.apps.values() {
            let mut judged: Vec<Finding> = Vec::new();
            let mut cause_at: CauseAt = None;
            if let AppStatus::Unrendered(e) = &app.status {
                let f = finding(app, e, Side::Head, diff);
                cause_at = e.file.clone().map(|file| (file, e.line));
                let Some(base) = judged_base else {
                    failed.push((app.display_name(), f, cause_at));
                    failed_errors.push(e);
                    continue;
                };
                match base.apps.get(&app.key) {
                    // A new app prunes nothing: nothing of it exists yet. It
                    // stays a warning unless it would take over what an app
                    // of the base revision deploys.
                    None => match claimed_owner(app, base) {
                        Some(owner) => {
                            let message = format!(
                                "{}; it is new, and it renders the source that `{}` renders into the same namespace, so it would take over objects that app owns",
                                f.message,
                                owner.display_name()
                            );
                            judged.push(Finding { message, ..f }.severity(caused_severity(e)));
                        }
                        // A repository the base does not trust is never
                        // contacted, so what the app renders is unknown
                        // (what it would claim included): an error.
                        None if e.kind == RenderErrorKind::Untrusted => {
                            judged.push(f.severity(Severity::Error));
                        }
                        None => {
                            let message = format!(
                                "{}; the app is new, so nothing of it exists yet to prune",
                                f.message
                            );
                            judged.push(Finding { message, ..f }.severity(Severity::Warning));
                        }
                    },
                    Some(b) if same_failure(b, app) => {}
                    Some(b) if matches!(b.status, AppStatus::Unrendered(_)) => {
                        let message = format!(
                            "{}; it failed at base too, so this change to its inputs cannot be judged",
                            f.message
                        );
                        judged.push(Finding { message, ..f }.severity(Severity::Warning));
                    }
                    _ => judged.push(f.severity(caused_severity(e))),
                }
            }
            if let AppStatus::Unrendered(e) = &app.status {
                failed_errors.extend(judged.iter().map(|_| e));
            }
            failed.extend(
                judged
                    .into_iter()
                    .map(|f| (app.display_name(), f, cause_at.clone())),
            );
        }
        let folded = fold_children(cx, &mut failed, &failed_errors);
        by_cause(failed, out);
        broken_files(cx.head, None, judged_base, Side::Head, out);
        unevaluable_sets(cx, judged_base, out);
        if let Some(base) = cx.base {
            broken_files(base, Some(cx.head), None, Side::Base, out);
        }
        // Unknowns the render statuses above do not already report: a vanished
        // app whose parent failed to render, an app that moved to a source
        // gitops-lint cannot read.
        if let Some(plan) = cx.plan {
            for u in &plan.unknown {
                if folded.contains(&u.app) {
                    continue;
                }
                let unrendered = |inv: &Inventory| {
                    inv.apps
                        .get(&u.app)
                        .is_some_and(|a| matches!(a.status, AppStatus::Unrendered(_)))
                };
                if unrendered(cx.head) || cx.base.is_some_and(unrendered) {
                    continue;
                }
                let name = short_key(&u.app);
                // An app still here whose prunes are unknown rendered at base
                // and now reads a source this run cannot: the change moved
                // it there, so it cannot be judged, an error.
                let (message, help, severity) = if cx.head.apps.contains_key(&u.app) {
                    (
                        format!(
                            "what a sync of `{name}` would prune is unknown: {}",
                            u.error.message
                        ),
                        "review what the new source renders against what the app has now, or keep the source where this repository's CI reads it",
                        caused_severity(&u.error),
                    )
                } else {
                    (
                        format!(
                            "whether `{name}` is deleted is unknown: {}",
                            u.error.message
                        ),
                        "fix the render failure of the app that manages it",
                        severity(&u.error),
                    )
                };
                out.push(
                    Finding::new(&META, message)
                        .severity(severity)
                        .app(name)
                        .at(Side::Head, u.error.file.as_deref(), u.error.line)
                        .help(help),
                );
            }
        }
    }
}
