//! GL019 appset-manages-itself: an ApplicationSet that generates the
//! Application which renders it (directly or through further apps), so
//! each of the two controls the other.

use crate::argocd::instances::short_key;
use std::collections::BTreeSet;

use super::analysis::appset_resource;
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::argocd::{Inventory, Manager};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity, Side};

/// See `rules/GL019-appset-manages-itself.md`.
pub(crate) struct AppSetManagesItself;

static META: RuleMeta = RuleMeta {
    code: "GL019",
    name: "appset-manages-itself",
    category: Category::Deletion,
    default_severity: Severity::Error,
    severity_note: "",
    mode: Mode::Single,
    doc: include_str!("../../rules/GL019-appset-manages-itself.md"),
    suppression: Suppression::LOOP,
};

/// The apps on the way from ApplicationSet `set` up its chain of managers
/// back to `set`, if the chain is a loop.
fn loop_through(inv: &Inventory, set: &str) -> Option<Vec<String>> {
    let mut path = Vec::new();
    let mut seen = BTreeSet::new();
    let mut manager = inv.appsets.get(set)?.manager.clone();
    while let Some(m) = manager.take() {
        match m {
            Manager::AppSet(s) if s == set => return Some(path),
            Manager::AppSet(s) => {
                if !seen.insert(format!("set:{s}")) {
                    return None;
                }
                manager.clone_from(&inv.appsets.get(&s)?.manager);
            }
            Manager::App(a) => {
                if !seen.insert(format!("app:{a}")) {
                    return None;
                }
                let app = inv.apps.get(&a)?;
                path.push(app.display_name());
                manager.clone_from(&app.manager);
            }
        }
    }
    None
}

impl Rule for AppSetManagesItself {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        for (key, e) in &cx.head.appsets {
            let Some(apps) = loop_through(cx.head, key) else {
                continue;
            };
            let set = short_key(key);
            // From the generated app down to the one rendering the set.
            let chain = apps
                .iter()
                .rev()
                .map(|a| format!("`{a}`"))
                .collect::<Vec<_>>()
                .join(" → ");
            // applicationset_controller.go `createOrUpdateInCluster` sets
            // the ApplicationSet as controller of every generated
            // Application (`SetControllerReference`), and the app that
            // renders the ApplicationSet prunes and deletes it like any
            // resource: each now owns the other.
            out.push(
                Finding::new(
                    &META,
                    format!(
                        "ApplicationSet `{set}` generates {chain}, which renders `{set}` itself: the ApplicationSet controller takes the app over and rewrites it from the template, and deleting or no longer generating the app deletes the ApplicationSet with every Application it generates"
                    ),
                )
                .resource(appset_resource(key))
                .at(Side::Head, e.origin.file.as_deref(), e.origin.line)
                .help("render the ApplicationSet from an app it does not generate (a bootstrap or platform app), or exclude that app from its generators"),
            );
        }
    }
}
