//! GL016 missing-namespace: namespaced resources synced into a namespace that
//! nothing creates, so the sync fails with `namespaces "x" not found`.

use goyaml::json::Pointer as _;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use super::analysis::{at_field, at_resource};
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::argocd::{App, AppStatus, Inventory};
use crate::config::{Checker, Config, RuleSettings, RuleSettingsSpec};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity};
use crate::manifest::Manifest;

/// See `rules/GL016-missing-namespace.md`.
pub(crate) struct MissingNamespace;

static META: RuleMeta = RuleMeta {
    code: "GL016",
    name: "missing-namespace",
    category: Category::Change,
    default_severity: Severity::Warning,
    severity_note: "",
    mode: Mode::Single,
    doc: include_str!("../../rules/GL016-missing-namespace.md"),
    suppression: Suppression::REPOSITORY,
};

/// Namespaces every cluster has (the API server creates them) or that Argo
/// CD runs in.
pub(crate) const BUILTIN_NAMESPACES: &[&str] = &[
    "default",
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "argocd",
];

/// API groups whose kinds are known to be namespaced unless the built-in
/// cluster-scoped table says otherwise. A custom kind whose CRD is not in the
/// repository may be cluster-scoped, so it counts only when its manifest
/// names a namespace.
pub(super) const BUILTIN_GROUPS: &[&str] = &[
    "",
    "apps",
    "batch",
    "autoscaling",
    "policy",
    "networking.k8s.io",
    "rbac.authorization.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "storage.k8s.io",
    "argoproj.io",
];

/// A (destination cluster, namespace) pair.
type Place = (String, String);

/// What makes a namespace exist on a cluster at one revision.
/// What creates a namespace. Described only when a finding quotes it: a
/// fleet's apps with `CreateNamespace=true` are thousands, and the map is
/// built several times a run.
enum Creator<'a> {
    /// An app rendered this Namespace manifest.
    Rendered(&'a App, &'a Manifest),
    /// An app's `CreateNamespace=true` creates its destination.
    CreateNamespace(&'a App),
}

impl std::fmt::Display for Creator<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Creator::Rendered(app, m) => {
                write!(
                    f,
                    "app `{}` rendered `Namespace {}`",
                    app.display_name(),
                    m.id.name
                )?;
                match m.origin.file.as_deref() {
                    Some(file) => write!(f, " from `{file}`"),
                    None => Ok(()),
                }
            }
            Creator::CreateNamespace(app) => write!(
                f,
                "app `{}` set `CreateNamespace=true` for its destination",
                app.display_name()
            ),
        }
    }
}

fn creators(inv: &Inventory) -> BTreeMap<Place, Creator<'_>> {
    let mut out = BTreeMap::new();
    for app in inv.apps.values() {
        let cluster = &app.spec.dest_cluster;
        // `CreateNamespace=true` is the Application's, whatever its source
        // renders: an app whose source is not analysed still creates it.
        let rendered = matches!(app.status, AppStatus::Rendered);
        for m in app.resources.iter().filter(|_| rendered) {
            if m.id.group.is_empty() && m.id.kind == "Namespace" {
                out.entry((cluster.clone(), m.id.name.clone()))
                    .or_insert(Creator::Rendered(app, m));
            }
        }
        // `CreateNamespace=true` creates the destination namespace only
        // (gitops-engine `pkg/sync/sync_context.go` `autoCreateNamespace`).
        if app.spec.sync_options.has("CreateNamespace=true") && !app.spec.dest_namespace.is_empty()
        {
            out.entry((cluster.clone(), app.spec.dest_namespace.clone()))
                .or_insert(Creator::CreateNamespace(app));
        }
    }
    out
}

/// `namespaces:` of `.gitops-lint.yaml`: namespaces that exist on every
/// destination cluster without a manifest (created outside Argo CD),
/// besides `default`, `kube-*` and `argocd`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct ExternalNamespaces(Vec<String>);

static SETTINGS: RuleSettingsSpec = RuleSettingsSpec {
    keys: &["namespaces"],
    read: read_settings,
};

/// `namespaces:` read, a value that is not a list of strings reported.
fn read_settings(
    c: &mut Checker<'_>,
    file: &serde_json::Map<String, serde_json::Value>,
) -> Arc<dyn RuleSettings> {
    let names = c.strings(&["namespaces"], file.get("namespaces"));
    Arc::new(ExternalNamespaces(names))
}

fn preexisting(config: &Config, ns: &str) -> bool {
    BUILTIN_NAMESPACES.contains(&ns)
        || config
            .rule_settings::<ExternalNamespaces>()
            .0
            .iter()
            .any(|n| n == ns)
}

/// Whether the resource goes into a namespace Argo CD must find.
fn needs_namespace(inv: &Inventory, m: &Manifest) -> bool {
    if m.id.namespace.is_empty() {
        return false;
    }
    let explicit = m
        .value
        .at("/metadata/namespace")
        .and_then(serde_json::Value::as_str)
        .is_some_and(|s| !s.is_empty());
    // The CRD lookup (which copies the key) last: most kinds are built in.
    explicit
        || BUILTIN_GROUPS.contains(&m.id.group.as_str())
        || inv
            .scopes
            .crds
            .get(&(m.id.group.clone(), m.id.kind.clone()))
            .is_some_and(|cluster| !cluster)
}

/// Every (cluster, namespace) an app syncs resources into that nothing
/// creates, with those resources.
fn missing<'a>(
    inv: &'a Inventory,
    config: &Config,
) -> BTreeMap<Place, Vec<(&'a App, &'a Manifest)>> {
    let made = creators(inv);
    let mut out: BTreeMap<Place, Vec<(&App, &Manifest)>> = BTreeMap::new();
    for app in inv.apps.values() {
        if !matches!(app.status, AppStatus::Rendered) {
            continue;
        }
        for m in app.resources.iter() {
            // A namespace every cluster has is checked first: it needs no
            // lookup in the object (an app-of-apps renders thousands there).
            if preexisting(config, &m.id.namespace) || !needs_namespace(inv, m) {
                continue;
            }
            let place = (app.spec.dest_cluster.clone(), m.id.namespace.clone());
            if !made.contains_key(&place) {
                out.entry(place).or_default().push((app, m));
            }
        }
    }
    out
}

/// Whether a diff may report a namespace that the change leaves uncreated:
/// some place is missing at head but not at base, or loses its creator.
/// Apps left unrendered at both revisions are invisible here, and they can
/// both create a namespace and show that it was already missing at base,
/// so when this holds the lint renders them before the rules run; when it
/// does not, rendering them can add no finding (an unchanged app adds the
/// same users and creators to both revisions).
#[must_use]
fn may_report(base: &Inventory, head: &Inventory, config: &Config) -> bool {
    let before = missing(base, config);
    let now_created = creators(head);
    missing(head, config)
        .keys()
        .any(|place| !before.contains_key(place))
        || creators(base)
            .keys()
            .any(|place| !now_created.contains_key(place))
}

impl Rule for MissingNamespace {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn settings(&self) -> Option<&'static RuleSettingsSpec> {
        Some(&SETTINGS)
    }

    fn needs_unchanged_apps(&self, base: &Inventory, head: &Inventory, config: &Config) -> bool {
        may_report(base, head, config)
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        let now = missing(cx.head, cx.config);
        // In `diff`, a namespace already missing at base is not this change's doing.
        let (before, base_creators) = match (cx.base, cx.only_changed) {
            (Some(base), true) => (
                missing(base, cx.config)
                    .into_keys()
                    .collect::<BTreeSet<_>>(),
                creators(base),
            ),
            (Some(base), false) => (BTreeSet::new(), creators(base)),
            _ => (BTreeSet::new(), BTreeMap::new()),
        };
        for (place, users) in &now {
            if before.contains(place) {
                continue;
            }
            let (cluster, ns) = place;
            let mut by_app: BTreeMap<&str, Vec<&Manifest>> = BTreeMap::new();
            for (app, m) in users {
                by_app.entry(app.key.as_str()).or_default().push(m);
            }
            for (key, ms) in by_app {
                let Some(app) = cx.head.apps.get(key) else {
                    continue;
                };
                let listed: Vec<String> =
                    ms.iter().take(5).map(|m| format!("`{}`", m.id)).collect();
                let more = ms.len().saturating_sub(listed.len());
                let objects = if more > 0 {
                    format!("{} and {more} more", listed.join(", "))
                } else {
                    listed.join(", ")
                };
                let was = base_creators
                    .get(place)
                    .map(|c| format!(" (at base, {c})"))
                    .unwrap_or_default();
                let is_dest = app.spec.dest_namespace == *ns;
                let nobody = if is_dest {
                    format!(
                        "no Namespace manifest, no `CreateNamespace=true` on app `{}`, not in `namespaces:`",
                        app.display_name()
                    )
                } else {
                    "no Namespace manifest, no app with `CreateNamespace=true` and this destination, not in `namespaces:`".to_string()
                };
                let message = format!(
                    "nothing creates namespace `{ns}` on `{cluster}` ({nobody}){was}: unless it already exists, syncing {objects} of app `{}` fails with `namespaces \"{ns}\" not found`",
                    app.display_name(),
                );
                let help = if is_dest {
                    "add `CreateNamespace=true` to the app's `syncPolicy.syncOptions`, render a Namespace manifest, or list the namespace under `namespaces:` in .gitops-lint.yaml if it is created outside Argo CD"
                } else {
                    "render a Namespace manifest for it, or list it under `namespaces:` in .gitops-lint.yaml if it is created outside Argo CD (`CreateNamespace=true` only creates the app's destination namespace)"
                };
                let f = Finding::new(&META, message);
                // Point where the fix goes: the Application when its own
                // destination is missing, else the first resource.
                let f = if is_dest && !app.implicit && app.origin.file.is_some() {
                    f.app(app.display_name())
                        .at(
                            crate::finding::Side::Head,
                            app.origin.file.as_deref(),
                            app.origin.line,
                        )
                        .field(app.origin.doc_index, &["spec", "destination", "namespace"])
                } else if let Some(first) = ms.first() {
                    if first.value.at("/metadata/namespace").is_some() {
                        at_field(f, app, first, &["metadata", "namespace"])
                    } else {
                        at_resource(f, app, first)
                    }
                } else {
                    f
                };
                // The finding is about the Namespace nobody creates: its
                // identity (and SARIF fingerprint) names it, so moving an app
                // from one missing namespace to another is a new finding.
                let missing_ns = crate::manifest::ResourceId {
                    group: String::new(),
                    kind: "Namespace".into(),
                    namespace: String::new(),
                    name: ns.clone(),
                };
                out.push(f.resource(missing_ns).help(help));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::analysis::testutil::{app, application, check, inventory, messages};
    use serde_json::json;

    fn cm(ns: Option<&str>) -> serde_json::Value {
        let mut v = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
        if let Some(ns) = ns {
            v["metadata"]["namespace"] = json!(ns);
        }
        v
    }

    #[test]
    fn created_by_namespace_manifest_create_namespace_or_config() {
        let plain = application("a", json!({}), false);
        let inv = inventory(vec![app(plain.clone(), vec![cm(None)])]);
        let f = check(&MissingNamespace, &inv, &Config::default());
        assert_eq!(f.len(), 1);
        assert!(messages(&f)[0].contains("fails with `namespaces \"ns\" not found`"));

        let create = application(
            "a",
            json!({"syncPolicy": {"syncOptions": ["CreateNamespace=true"]}}),
            false,
        );
        let inv = inventory(vec![app(create.clone(), vec![cm(None)])]);
        assert!(check(&MissingNamespace, &inv, &Config::default()).is_empty());
        // CreateNamespace covers the destination only.
        let inv = inventory(vec![app(create, vec![cm(Some("other"))])]);
        assert_eq!(check(&MissingNamespace, &inv, &Config::default()).len(), 1);

        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}});
        let inv = inventory(vec![app(plain.clone(), vec![ns, cm(None)])]);
        assert!(check(&MissingNamespace, &inv, &Config::default()).is_empty());

        let cfg = Config::parse(
            ".gitops-lint.yaml",
            "namespaces: [ns]\n",
            &crate::rules::catalog(),
        )
        .expect("valid");
        let inv = inventory(vec![app(plain, vec![cm(None)])]);
        assert!(check(&MissingNamespace, &inv, &cfg).is_empty());
    }

    #[test]
    fn custom_kinds_of_unknown_scope_count_only_with_an_explicit_namespace() {
        let plain = application("a", json!({}), false);
        let issuer =
            json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t"}});
        let inv = inventory(vec![app(plain.clone(), vec![issuer])]);
        assert!(check(&MissingNamespace, &inv, &Config::default()).is_empty());
        let pinned = json!({"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t", "namespace": "x"}});
        let inv = inventory(vec![app(plain, vec![pinned])]);
        assert_eq!(check(&MissingNamespace, &inv, &Config::default()).len(), 1);
    }
}
