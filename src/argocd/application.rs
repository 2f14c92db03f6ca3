//! The fields of an `Application` that decide what a sync renders and prunes.

use goyaml::json::View;
use serde_json::Value;

use crate::manifest::SyncOptions;

/// The Argo CD resources finalizers (any one means cascade deletion).
pub(crate) const RESOURCES_FINALIZERS: [&str; 3] = [
    "resources-finalizer.argocd.argoproj.io",
    "resources-finalizer.argocd.argoproj.io/foreground",
    "resources-finalizer.argocd.argoproj.io/background",
];

/// How an app prunes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum PruneMode {
    /// `syncPolicy.automated.prune: true`: prunes with nobody looking.
    Automated,
    /// Prunes only when a person syncs with prune.
    Manual,
    /// Never synced by Argo CD (an external app).
    None,
}

/// One source of an Application.
#[derive(Debug, Clone, PartialEq)]
pub struct AppSource {
    /// `repoURL`.
    pub repo_url: String,
    /// `targetRevision` (empty means HEAD).
    pub target_revision: String,
    /// `path`, if any (normalised, repository-relative).
    pub path: Option<String>,
    /// `chart`, for Helm repository sources.
    pub(crate) chart: Option<String>,
    /// `ref`, for sources used only for value files.
    pub(crate) ref_name: Option<String>,
    /// The source's `directory`, `kustomize`, `helm` and `plugin` options,
    /// as written: what renders it besides the fields above.
    pub(crate) options: [Option<Value>; 4],
}

/// The keys of [`AppSource::options`], in order.
pub(crate) const SOURCE_OPTIONS: [&str; 4] = ["directory", "kustomize", "helm", "plugin"];

/// The parsed parts of an Application object.
#[derive(Debug, Clone, PartialEq)]
pub struct AppSpec {
    /// `metadata.name`.
    pub(crate) name: String,
    /// `metadata.namespace` (default `argocd`).
    pub(crate) namespace: String,
    /// `spec.destination.namespace`.
    pub(crate) dest_namespace: String,
    /// `spec.destination.server` or `.name`.
    pub(crate) dest_cluster: String,
    /// Sources (`spec.sources` wins over `spec.source`).
    pub sources: Vec<AppSource>,
    /// Prune mode from `syncPolicy.automated`.
    pub(crate) prune_mode: PruneMode,
    /// App-level `syncPolicy.syncOptions`.
    pub(crate) sync_options: SyncOptions,
    /// The resources finalizer, if any (cascade on deletion).
    pub(crate) cascade_finalizer: Option<String>,
    /// `spec.project`.
    pub(crate) project: String,
}

impl AppSpec {
    /// The name and namespace [`AppSpec::parse`] reads from an Application
    /// object, without the rest. `None` when it is not one (exactly when
    /// `parse` says so).
    #[must_use]
    pub(crate) fn identity<'a>(obj: impl Into<View<'a>>) -> Option<(&'a str, &'a str)> {
        let obj = obj.into();
        if !is_application(obj) {
            return None;
        }
        // Asked of every Application at every round: no pointer to parse,
        // and read through a view, which decodes nothing.
        let meta = obj.get("metadata");
        let s = |k: &str| {
            meta.and_then(|m| m.get(k))
                .and_then(View::as_str)
                .unwrap_or("")
        };
        let namespace = match s("namespace") {
            "" => "argocd",
            n => n,
        };
        Some((s("name"), namespace))
    }

    /// Reads an Application object. `None` when it is not one. Read
    /// through a view: an Application taken from the record of an earlier
    /// run is not decoded whole for it, only its source options are.
    #[must_use]
    pub(crate) fn parse<'a>(obj: impl Into<View<'a>>) -> Option<AppSpec> {
        let obj = obj.into();
        let (name, namespace) = Self::identity(obj)?;
        let (name, namespace) = (name.to_string(), namespace.to_string());
        // Each object on the way is looked up once: every Application of a
        // fleet is read, and each lookup is a search of a map by string.
        let spec = obj.get("spec");
        let text = |v: Option<View<'_>>| v.and_then(View::as_str).unwrap_or("").to_string();
        let sources = match field(spec, "sources").and_then(View::items) {
            Some(a) if !a.is_empty() => a.into_iter().map(AppSource::parse).collect(),
            _ => field(spec, "source")
                .map(AppSource::parse)
                .into_iter()
                .collect(),
        };
        let sync_policy = field(spec, "syncPolicy");
        let prune_mode = match field(sync_policy, "automated") {
            Some(a) if a.is_object() => {
                let enabled = a.get("enabled").and_then(View::as_bool).unwrap_or(true);
                let prune = a.get("prune").and_then(View::as_bool).unwrap_or(false);
                if enabled && prune {
                    PruneMode::Automated
                } else {
                    PruneMode::Manual
                }
            }
            _ => PruneMode::Manual,
        };
        let sync_options = SyncOptions {
            items: field(sync_policy, "syncOptions")
                .and_then(View::items)
                .map(|a| {
                    a.into_iter()
                        .filter_map(View::as_str)
                        .map(|x| x.trim().to_string())
                        .collect()
                })
                .unwrap_or_default(),
        };
        let cascade_finalizer = field(obj.get("metadata"), "finalizers")
            .and_then(View::items)
            .and_then(|a| {
                a.into_iter()
                    .filter_map(View::as_str)
                    .find(|f| RESOURCES_FINALIZERS.contains(f))
            })
            .map(str::to_string);
        let destination = field(spec, "destination");
        let dest_cluster = match text(field(destination, "server")) {
            d if d.is_empty() => text(field(destination, "name")),
            d => d,
        };
        Some(AppSpec {
            name,
            namespace,
            dest_namespace: text(field(destination, "namespace")),
            dest_cluster,
            sources,
            prune_mode,
            sync_options,
            cascade_finalizer,
            project: text(field(spec, "project")),
        })
    }
}

impl AppSource {
    fn parse(v: View<'_>) -> AppSource {
        let s = |k: &str| v.get(k).and_then(View::as_str).map(str::to_string);
        AppSource {
            repo_url: s("repoURL").unwrap_or_default(),
            target_revision: s("targetRevision").unwrap_or_default(),
            path: s("path").map(|p| crate::source::path::normalize(&p).unwrap_or(p)),
            chart: s("chart").filter(|c| !c.is_empty()),
            ref_name: s("ref").filter(|c| !c.is_empty()),
            // Only the options are kept, not a copy of the whole source:
            // every Application of a fleet is read.
            options: SOURCE_OPTIONS.map(|k| v.get(k).map(View::to_value)),
        }
    }
}

/// The member `k` of `v`, when `v` is an object that has it.
fn field<'v>(v: Option<View<'v>>, k: &str) -> Option<View<'v>> {
    v.and_then(|v| v.get(k))
}

/// Whether an object is an Argo CD `Application`.
#[must_use]
pub(crate) fn is_application<'a>(obj: impl Into<View<'a>>) -> bool {
    is_argo_kind(obj.into(), "Application")
}

/// Whether `obj` is of Argo CD's kind `kind`; read through a view, as
/// every Application of a fleet is asked this.
pub(crate) fn is_argo_kind(obj: View<'_>, kind: &str) -> bool {
    obj.get("kind").and_then(View::as_str) == Some(kind)
        && obj
            .get("apiVersion")
            .and_then(View::as_str)
            .is_some_and(|a| a.starts_with("argoproj.io/"))
}

/// Whether an object is an Argo CD `ApplicationSet`.
#[must_use]
pub(crate) fn is_application_set<'a>(obj: impl Into<View<'a>>) -> bool {
    is_argo_kind(obj.into(), "ApplicationSet")
}

/// Normalises a git URL for comparison: no scheme, no user, `host/path`,
/// no `.git`, no trailing `/`, lower-case (`git@github.com:Org/Repo.git` and
/// `https://github.com/org/repo` are equal).
#[must_use]
pub(crate) fn normalize_repo_url(url: &str) -> String {
    let mut u = url.trim().to_string();
    for scheme in [
        "https://",
        "http://",
        "ssh://",
        "git://",
        "git+ssh://",
        "file://",
    ] {
        if let Some(rest) = u.strip_prefix(scheme) {
            u = rest.to_string();
            break;
        }
    }
    if let Some((user, rest)) = u.split_once('@') {
        if !user.contains('/') {
            u = rest.to_string();
        }
    }
    // scp-like `host:org/repo`; keep a port-less host
    if let Some((host, rest)) = u.split_once(':') {
        if !host.contains('/') {
            let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
            u = format!("{host}/{}", rest.trim_start_matches('/'));
        }
    }
    let u = u.trim_end_matches('/');
    let u = u.strip_suffix(".git").unwrap_or(u);
    u.to_ascii_lowercase()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn repo_urls_compare_across_schemes() {
        let a = normalize_repo_url("git@github.com:Org/Repo.git");
        assert_eq!(a, normalize_repo_url("https://github.com/org/repo"));
        assert_eq!(a, normalize_repo_url("ssh://git@github.com/org/repo.git/"));
        assert_ne!(a, normalize_repo_url("https://github.com/org/repo2"));
    }

    #[test]
    fn prune_mode_needs_automated_prune_true() {
        let app = |policy: Value| {
            json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                   "metadata": {"name": "a"}, "spec": {"syncPolicy": policy}})
        };
        let mode = |p| AppSpec::parse(&app(p)).unwrap().prune_mode;
        assert_eq!(
            mode(json!({"automated": {"prune": true}})),
            PruneMode::Automated
        );
        assert_eq!(mode(json!({"automated": {}})), PruneMode::Manual);
        assert_eq!(
            mode(json!({"automated": {"prune": true, "enabled": false}})),
            PruneMode::Manual
        );
        assert_eq!(mode(json!({})), PruneMode::Manual);
    }

    #[test]
    fn sources_win_over_source_and_finalizer_forms_cascade() {
        let v = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "a", "finalizers": ["resources-finalizer.argocd.argoproj.io/background"]},
            "spec": {"source": {"repoURL": "x", "path": "ignored"},
                     "sources": [{"repoURL": "x", "path": "./apps//one/"}]}});
        let s = AppSpec::parse(&v).unwrap();
        assert_eq!(s.sources.len(), 1);
        assert_eq!(s.sources[0].path.as_deref(), Some("apps/one"));
        assert!(s.cascade_finalizer.is_some());
        assert_eq!(s.namespace, "argocd");
    }
}
