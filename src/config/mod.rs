//! `.gitops-lint.yaml`: rule selection and severities, extra stateful kinds,
//! repository URL aliases, implicit apps, and the Argo CD behaviour that
//! depends on version or controller flags.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::Value;

use crate::finding::{Category, RuleMeta, Severity};

mod check;
mod diff;
mod plugins;
mod rule_settings;

pub(crate) use check::Checker;
pub use check::ConfigError;
use check::{at_line, problem_line};
pub(crate) use check::{ConfigProblem, PathGlobs};
pub(crate) use diff::{DiffConfig, LinePattern, MaskRule, MAX_DIFF_CONTEXT};
use rule_settings::ReadSettings;
pub use rule_settings::RuleSettingsSpec;
pub(crate) use rule_settings::{RuleCatalog, RuleSettings};

/// The file name looked for at the repository root.
pub(crate) const CONFIG_FILE: &str = ".gitops-lint.yaml";

/// Validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Extra kinds whose prune loses data, as `Kind` or `group/Kind`.
    pub(crate) stateful_kinds: Vec<String>,
    /// URLs that also name this repository (besides its git remotes).
    pub(crate) repo_urls: Vec<String>,
    /// Branch names that mean "this revision" in `targetRevision`, besides
    /// `HEAD`, the current branch, `main` and `master`.
    pub(crate) branches: Vec<String>,
    /// Directories linted as apps of their own (`apps:`), beside the
    /// Applications found unless one renders from them.
    pub(crate) apps: Vec<String>,
    /// `roots`: the files whose Applications and ApplicationSets are applied
    /// outside Argo CD (by hand, by bootstrap tooling). When set, an
    /// Application file outside them that no app renders is not deployed.
    pub(crate) roots: PathGlobs,
    /// `instances`: roots grouped by the Argo CD instance that runs them.
    pub(crate) instances: Vec<InstanceConfig>,
    /// Target Argo CD version (`major.minor`).
    pub(crate) argocd_version: (u32, u32),
    /// Rules switched on (codes, names or categories); empty means all.
    pub(crate) select: Vec<String>,
    /// Rules switched off (codes, names or categories); beats `select`.
    pub(crate) ignore: Vec<String>,
    /// Findings located in files matching these globs are dropped.
    pub(crate) ignore_paths: PathGlobs,
    /// Severity overrides by code or name.
    pub(crate) severity: BTreeMap<String, Severity>,
    /// Controller settings for ApplicationSets.
    pub(crate) applicationset: AppSetControllerConfig,
    /// Clusters for ApplicationSet `clusters` generators, besides the cluster
    /// Secrets found in the repository.
    pub(crate) clusters: Vec<ClusterConfig>,
    /// `trackingMethod`: Argo CD's `application.resourceTrackingMethod`,
    /// when `argocd-cm` is not in the repository.
    pub(crate) tracking_method: Option<crate::manifest::TrackingMethod>,
    /// `kustomizeBuildOptions`: Argo CD's `kustomize.buildOptions`, when
    /// `argocd-cm` is not in the repository (`--enable-helm` decides
    /// whether `helmCharts` render).
    pub(crate) kustomize_build_options: Option<String>,
    /// `chartCache`: a directory of `helm pull`-ed chart archives, relative
    /// to the repository's root (its working directory on disk), for
    /// Applications installing charts from Helm repositories.
    pub(crate) chart_cache: Option<String>,
    /// `chartRepositories`: Helm repositories and OCI registries charts may
    /// be fetched from besides those the base revision names; an
    /// `http://` URL listed here is the only kind spoken to without TLS.
    pub(crate) chart_repositories: Vec<String>,
    /// `helmRenderer`: how Helm charts are rendered when the command line
    /// does not say (`binary` or `native`).
    pub(crate) helm_renderer: Option<crate::render::HelmRenderer>,
    /// `clusterScopedKinds`: `Kind` or `group/Kind` patterns (`*` wildcards)
    /// of kinds that are cluster-scoped, for CRDs not in the repository.
    pub(crate) cluster_scoped_kinds: Vec<String>,
    /// Whether `Gitops-Lint-Allow` commit trailers acknowledge deletions
    /// (`acknowledge: {trailers: false}` switches them off: a trailer is
    /// written by the change's own author).
    pub(crate) acknowledge_trailers: bool,
    /// `plugins`: config-management plugins by the name Applications give
    /// them, with their `discover` rule and the native renderer each stands
    /// for (docs/plugins.md).
    pub(crate) plugins: std::sync::Arc<crate::render::plugin::Plugins>,
    /// `diff`: the rendered diff of a `gitops-lint diff` (docs/rendered-diff.md).
    pub(crate) diff: DiffConfig,
    /// What the rules with settings of their own read from the file
    /// ([`Config::rule_settings`]).
    pub(crate) rule_settings: ReadSettings,
}

/// ApplicationSet controller flags the linter cannot see.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AppSetControllerConfig {
    /// `--policy` (empty when unset).
    pub(crate) policy: Option<String>,
    /// `--enable-policy-override`.
    pub(crate) policy_override: Option<bool>,
    /// `--enable-new-git-file-globbing`.
    pub(crate) new_git_file_globbing: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            stateful_kinds: Vec::new(),
            repo_urls: Vec::new(),
            branches: Vec::new(),
            apps: Vec::new(),
            roots: PathGlobs::default(),
            instances: Vec::new(),
            argocd_version: (3, 5),
            select: Vec::new(),
            ignore: Vec::new(),
            ignore_paths: PathGlobs::default(),
            severity: BTreeMap::new(),
            applicationset: AppSetControllerConfig::default(),
            clusters: Vec::new(),
            tracking_method: None,
            kustomize_build_options: None,
            chart_cache: None,
            chart_repositories: Vec::new(),
            helm_renderer: None,
            cluster_scoped_kinds: Vec::new(),
            acknowledge_trailers: true,
            plugins: std::sync::Arc::default(),
            diff: DiffConfig::default(),
            rule_settings: ReadSettings::default(),
        }
    }
}

/// Why `url` cannot name a chart repository (`None`: it can): an
/// `https://` or `http://` Helm repository, or an OCI registry as Argo CD
/// writes it (`oci://host/path`, or `host/path` without scheme).
fn chart_repository_problem(url: &str) -> Option<String> {
    let rest = ["https://", "http://", "oci://"]
        .iter()
        .find_map(|p| url.strip_prefix(p))
        .unwrap_or(url);
    if url.contains("://") && rest.len() == url.len() {
        return Some(format!(
            "`{url}` must be an https://, http:// or oci:// URL, or a registry path without scheme"
        ));
    }
    let host = rest.split('/').next().unwrap_or("");
    if host.is_empty() || host.contains('@') || url.chars().any(char::is_whitespace) {
        return Some(format!(
            "`{url}` names no host (credentials do not belong in it: Helm's repositories.yaml or the registry config.json hold them)"
        ));
    }
    None
}

/// The keys of settings more than one part of the pipeline reads; the
/// rules declare their own (`RuleSettingsSpec`). For unknown-key errors
/// and "did you mean".
const TOP_KEYS: &[&str] = &[
    "rules",
    "ignorePaths",
    "statefulKinds",
    "repoUrls",
    "branches",
    "apps",
    "roots",
    "instances",
    "argocdVersion",
    "applicationSet",
    "clusters",
    "trackingMethod",
    "kustomizeBuildOptions",
    "chartCache",
    "chartRepositories",
    "helmRenderer",
    "clusterScopedKinds",
    "acknowledge",
    "plugins",
    "diff",
];
const ACKNOWLEDGE_KEYS: &[&str] = &["trailers"];
const INSTANCE_KEYS: &[&str] = &["name", "roots"];
const CLUSTER_KEYS: &[&str] = &["name", "server", "labels", "annotations", "project"];
const RULES_KEYS: &[&str] = &["select", "ignore", "severity"];
const APPSET_KEYS: &[&str] = &["policy", "policyOverride", "newGitFileGlobbing"];
const APPSET_POLICIES: &[&str] = &["sync", "create-only", "create-update", "create-delete"];

pub(crate) use crate::suggest::{close_names, did_you_mean, edit_distance};

/// Whether `selector` (a code, a name, a category or `all`) names this rule.
fn selects(selector: &str, meta: &RuleMeta) -> bool {
    meta.is_named(selector) || meta.category.as_str() == selector || selector == "all"
}

/// " (did you mean ...)" for a selector no rule of `catalog` answers to.
fn selector_hint(s: &str, catalog: &[&RuleMeta]) -> String {
    let mut names: Vec<&str> = catalog.iter().flat_map(|m| [m.code, m.name]).collect();
    names.extend(Category::ALL.iter().map(|c| c.as_str()));
    names.push("all");
    did_you_mean(s, &names).map_or_else(
        || " (run `gitops-lint rules` for the list)".to_string(),
        |m| format!(" (did you mean `{m}`?)"),
    )
}

impl Config {
    /// Parses configuration text; `catalog` holds the rules its selectors
    /// may name and the settings each rule reads (`rules::catalog()`).
    ///
    /// # Errors
    /// Invalid YAML, unknown keys, bad values: every problem at once, each
    /// with its line where it can be found.
    pub(crate) fn parse(
        file: &str,
        text: &str,
        catalog: &RuleCatalog,
    ) -> Result<Config, ConfigError> {
        let err = |p: String| ConfigError {
            file: file.to_string(),
            problems: vec![p],
        };
        let docs = goyaml::load_all(text)
            .map_err(|e| err(format!("{}:{}: {}", e.line, e.column, e.message)))?;
        let Some((doc, value)) = docs
            .into_iter()
            .map(|d| (d.index, d.value))
            .find(|(_, v)| !v.is_null())
        else {
            return Ok(Config::default());
        };
        let mut c = Checker {
            text,
            doc,
            problems: Vec::new(),
        };
        let mut known = TOP_KEYS.to_vec();
        known.extend(catalog.settings.iter().flat_map(|s| s.keys));
        c.keys(&[], &value, &known);
        let mut cfg = Config::default();
        let Some(top) = value.as_object() else {
            return Err(ConfigError {
                file: file.to_string(),
                problems: c.problems,
            });
        };
        let get = |k: &str| value.get(k).filter(|v| !v.is_null());
        cfg.stateful_kinds = c.strings(&["statefulKinds"], get("statefulKinds"));
        for k in &cfg.stateful_kinds {
            if k.is_empty() || k.split('/').count() > 2 {
                c.at(
                    &["statefulKinds"],
                    format!("statefulKinds: `{k}` is not `Kind` or `group/Kind`"),
                );
            }
        }
        cfg.cluster_scoped_kinds = c.strings(&["clusterScopedKinds"], get("clusterScopedKinds"));
        for k in &cfg.cluster_scoped_kinds {
            if k.is_empty() || k.split('/').count() > 2 {
                c.at(
                    &["clusterScopedKinds"],
                    format!("clusterScopedKinds: `{k}` is not `Kind` or `group/Kind`"),
                );
            }
        }
        if let Some(v) = get("trackingMethod") {
            use crate::manifest::TrackingMethod;
            match v.as_str().and_then(TrackingMethod::parse) {
                Some(m) => cfg.tracking_method = Some(m),
                None => c.at(
                    &["trackingMethod"],
                    format!(
                        "trackingMethod `{}` is not one of {}",
                        v.as_str().map_or_else(|| v.to_string(), str::to_string),
                        TrackingMethod::NAMES.join(", ")
                    ),
                ),
            }
        }
        if let Some(v) = get("kustomizeBuildOptions") {
            match v.as_str() {
                Some(s) => cfg.kustomize_build_options = Some(s.trim().to_string()),
                None => c.at(
                    &["kustomizeBuildOptions"],
                    "kustomizeBuildOptions must be a string, as in argocd-cm (`--enable-helm`)"
                        .to_string(),
                ),
            }
        }
        if let Some(v) = get("chartCache") {
            match v.as_str().filter(|s| !s.trim().is_empty()) {
                Some(s) => cfg.chart_cache = Some(s.trim().to_string()),
                None => c.at(
                    &["chartCache"],
                    "chartCache must be a directory, relative to the repository's root".to_string(),
                ),
            }
        }
        if let Some(v) = get("helmRenderer") {
            use crate::render::HelmRenderer;
            match v.as_str().and_then(HelmRenderer::parse) {
                Some(r) => cfg.helm_renderer = Some(r),
                None => {
                    let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                    let hint = did_you_mean(&text, &HelmRenderer::NAMES)
                        .map(|s| format!(" (did you mean `{s}`?)"))
                        .unwrap_or_default();
                    c.at(
                        &["helmRenderer"],
                        format!(
                            "helmRenderer `{text}` is not one of {}{hint}",
                            HelmRenderer::NAMES.join(", ")
                        ),
                    );
                }
            }
        }
        cfg.repo_urls = c.strings(&["repoUrls"], get("repoUrls"));
        cfg.branches = c.strings(&["branches"], get("branches"));
        cfg.apps = c.strings(&["apps"], get("apps"));
        cfg.chart_repositories = c.strings(&["chartRepositories"], get("chartRepositories"));
        for (i, url) in cfg.chart_repositories.iter().enumerate() {
            if let Some(why) = chart_repository_problem(url) {
                let segs = [
                    goyaml::PathSeg::Key("chartRepositories"),
                    goyaml::PathSeg::Index(i),
                ];
                let msg = format!("`chartRepositories[{i}]` {why}");
                c.problems
                    .push(match goyaml::line_of(c.text, c.doc, &segs) {
                        Some(l) => at_line(c.text, l, None, &msg),
                        None => msg,
                    });
            }
        }
        cfg.ignore_paths = c.globs(&["ignorePaths"], get("ignorePaths"));
        cfg.roots = c.globs(&["roots"], get("roots"));
        match get("instances") {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    c.keys(&["instances"], item, INSTANCE_KEYS);
                    let name = item.get("name").and_then(Value::as_str).unwrap_or_default();
                    let roots = c.globs(&["instances", "roots"], item.get("roots"));
                    if name.is_empty() || roots.patterns().is_empty() {
                        c.at(
                            &["instances"],
                            "every entry of instances needs a `name` and a list of `roots` globs"
                                .to_string(),
                        );
                    } else if cfg.instances.iter().any(|i| i.name == name) {
                        c.at(
                            &["instances"],
                            format!("instances: `{name}` is named twice"),
                        );
                    } else {
                        cfg.instances.push(InstanceConfig {
                            name: name.to_string(),
                            roots,
                        });
                    }
                }
            }
            Some(_) => c.at(
                &["instances"],
                "instances must be a list of `{name, roots}`".to_string(),
            ),
        }
        if let Some(v) = get("argocdVersion") {
            let text = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            // Unquoted, YAML reads `3.10` as the number 3.1: a one-digit
            // minor written as a number may have lost a trailing zero.
            let ambiguous = v.is_number()
                && text
                    .split_once('.')
                    .is_some_and(|(_, minor)| minor.len() == 1);
            match parse_version(&text) {
                Some(_) if ambiguous => c.at(
                    &["argocdVersion"],
                    format!(
                        "argocdVersion `{text}` is a number, and YAML reads `{text}0` the same way: quote it, as in `argocdVersion: \"{text}\"` or `\"{text}0\"`"
                    ),
                ),
                Some(ver) => cfg.argocd_version = ver,
                None => c.at(
                    &["argocdVersion"],
                    format!("argocdVersion `{text}` is not a version like \"3.4\""),
                ),
            }
        }
        if let Some(rules) = get("rules") {
            c.keys(&["rules"], rules, RULES_KEYS);
            for key in ["select", "ignore"] {
                let list = c.strings(&["rules", key], rules.get(key));
                for r in &list {
                    if !catalog.metas.iter().any(|m| selects(r, m)) {
                        c.at(
                            &["rules", key],
                            format!(
                                "rules.{key}: unknown rule `{r}`{}",
                                selector_hint(r, &catalog.metas)
                            ),
                        );
                    }
                }
                if key == "select" {
                    cfg.select = list;
                } else {
                    cfg.ignore = list;
                }
            }
            match rules.get("severity") {
                None | Some(Value::Null) => {}
                Some(Value::Object(m)) => {
                    for (k, v) in m {
                        let path = ["rules", "severity", k.as_str()];
                        if !catalog.metas.iter().any(|m| m.is_named(k)) {
                            c.at(
                                &path,
                                format!(
                                    "rules.severity: unknown rule `{k}`{}",
                                    selector_hint(k, &catalog.metas)
                                ),
                            );
                        }
                        match v.as_str().and_then(Severity::parse) {
                            Some(s) => {
                                cfg.severity.insert(k.clone(), s);
                            }
                            None => c.at(
                                &path,
                                format!(
                                    "rules.severity.{k}: `{}` is not error, warning or info",
                                    v.as_str().map_or_else(|| v.to_string(), str::to_string)
                                ),
                            ),
                        }
                    }
                }
                Some(_) => c.at(
                    &["rules", "severity"],
                    "`rules.severity` must be a mapping of rule to error, warning or info".into(),
                ),
            }
        }
        if let Some(a) = get("applicationSet") {
            c.keys(&["applicationSet"], a, APPSET_KEYS);
            let policy = match a.get("policy") {
                None | Some(Value::Null) => None,
                Some(Value::String(p)) if APPSET_POLICIES.contains(&p.as_str()) => Some(p.clone()),
                Some(p) => {
                    c.at(
                        &["applicationSet", "policy"],
                        format!(
                            "applicationSet.policy `{}` is not one of {}",
                            p.as_str().map_or_else(|| p.to_string(), str::to_string),
                            APPSET_POLICIES.join(", ")
                        ),
                    );
                    None
                }
            };
            cfg.applicationset = AppSetControllerConfig {
                policy,
                policy_override: c.boolean(
                    &["applicationSet", "policyOverride"],
                    a.get("policyOverride"),
                ),
                new_git_file_globbing: c
                    .boolean(
                        &["applicationSet", "newGitFileGlobbing"],
                        a.get("newGitFileGlobbing"),
                    )
                    .unwrap_or(false),
            };
        }
        if let Some(d) = get("diff") {
            cfg.diff = diff::diff_config(&mut c, d);
        }
        if let Some(a) = get("acknowledge") {
            c.keys(&["acknowledge"], a, ACKNOWLEDGE_KEYS);
            if let Some(t) = c.boolean(&["acknowledge", "trailers"], a.get("trailers")) {
                cfg.acknowledge_trailers = t;
            }
        }
        match get("clusters") {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    c.keys(&["clusters"], item, CLUSTER_KEYS);
                    let text = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_string);
                    let map = |k: &str| -> BTreeMap<String, String> {
                        item.get(k)
                            .and_then(Value::as_object)
                            .map(|m| {
                                m.iter()
                                    .map(|(k, v)| {
                                        (
                                            k.clone(),
                                            v.as_str()
                                                .map_or_else(|| v.to_string(), str::to_string),
                                        )
                                    })
                                    .collect()
                            })
                            .unwrap_or_default()
                    };
                    match (text("name"), text("server")) {
                        (Some(name), Some(server)) => cfg.clusters.push(ClusterConfig {
                            name,
                            server,
                            labels: map("labels"),
                            annotations: map("annotations"),
                            project: text("project"),
                        }),
                        _ => c.at(
                            &["clusters"],
                            "every entry of clusters needs a `name` and a `server`".to_string(),
                        ),
                    }
                }
            }
            Some(_) => c.at(&["clusters"], "clusters must be a list".to_string()),
        }
        if let Some(v) = get("plugins") {
            cfg.plugins = std::sync::Arc::new(plugins::plugins(&mut c, v));
        }
        // Each rule reads its own keys, when the file gives one of them.
        for spec in &catalog.settings {
            if spec.keys.iter().any(|k| get(k).is_some()) {
                cfg.rule_settings.0.push((spec.read)(&mut c, top));
            }
        }
        // In file order, as a person fixes them.
        c.problems.sort_by_key(|p| problem_line(p).unwrap_or(0));
        if c.problems.is_empty() {
            Ok(cfg)
        } else {
            Err(ConfigError {
                file: file.to_string(),
                problems: c.problems,
            })
        }
    }

    /// Whether a rule runs: selected (all by default) and not ignored.
    /// Selectors are codes, names, categories or `all`; `ignore` beats `select`.
    #[must_use]
    pub(crate) fn rule_enabled(&self, meta: &RuleMeta) -> bool {
        let selected = self.select.is_empty() || self.select.iter().any(|s| selects(s, meta));
        selected && !self.ignore.iter().any(|s| selects(s, meta))
    }

    /// The settings of type `T` a rule declared and the file gave, else
    /// their defaults.
    #[must_use]
    pub(crate) fn rule_settings<T: RuleSettings + Clone + Default>(&self) -> Cow<'_, T> {
        self.rule_settings
            .get::<T>()
            .map_or_else(|| Cow::Owned(T::default()), Cow::Borrowed)
    }

    /// Whether the target Argo CD version is at least `major.minor`.
    #[must_use]
    pub(crate) fn argocd_at_least(&self, major: u32, minor: u32) -> bool {
        self.argocd_version >= (major, minor)
    }

    /// Whether (group, kind) was configured as stateful.
    #[must_use]
    /// Entries are `Kind`, `group/Kind`, or either with `*` wildcards, so
    /// whole API families can be named (`*.upbound.io/*` for Crossplane
    /// managed resources, whose deletion deletes the cloud resource).
    pub(crate) fn is_extra_stateful(&self, group: &str, kind: &str) -> bool {
        crate::manifest::kind_matches(&self.stateful_kinds, group, kind)
    }
}

fn parse_version(v: &str) -> Option<(u32, u32)> {
    let v = v.trim().trim_start_matches('v');
    let mut it = v.split('.');
    let major = it.next()?.parse().ok()?;
    let minor = it.next().unwrap_or("0").parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests;

/// An Argo CD instance of `instances:`: the roots it applies. Apps under
/// roots of different instances never share a name, as they live in
/// different Argo CD namespaces or clusters.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct InstanceConfig {
    /// The name shown beside its apps (`app@name`).
    pub(crate) name: String,
    /// Globs of its root files.
    pub(crate) roots: PathGlobs,
}

/// A cluster declared in configuration for ApplicationSet `clusters` generators.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct ClusterConfig {
    /// Cluster name.
    pub(crate) name: String,
    /// API server URL.
    pub(crate) server: String,
    /// Labels (as a cluster Secret would carry them).
    pub(crate) labels: BTreeMap<String, String>,
    /// Annotations.
    pub(crate) annotations: BTreeMap<String, String>,
    /// Project, if any.
    pub(crate) project: Option<String>,
}
