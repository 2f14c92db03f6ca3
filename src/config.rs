//! `.gitops-lint.yaml`: rule selection and severities, extra stateful kinds,
//! repository URL aliases, implicit apps, and the Argo CD behaviour that
//! depends on version or controller flags.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use crate::finding::Severity;

/// The file name looked for at the repository root.
pub const CONFIG_FILE: &str = ".gitops-lint.yaml";

/// Validated configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// Extra kinds whose prune loses data, as `Kind` or `group/Kind`.
    pub stateful_kinds: Vec<String>,
    /// URLs that also name this repository (besides its git remotes).
    pub repo_urls: Vec<String>,
    /// Branch names that mean "this revision" in `targetRevision`, besides
    /// `HEAD`, the current branch, `main` and `master`.
    pub branches: Vec<String>,
    /// Directories linted as implicit apps when the repository has no Application.
    pub apps: Vec<String>,
    /// Target Argo CD version (`major.minor`).
    pub argocd_version: (u32, u32),
    /// Rules switched off (codes or names).
    pub ignore: Vec<String>,
    /// Severity overrides by code or name.
    pub severity: BTreeMap<String, Severity>,
    /// GL013: share of an app's resources (0–1) above which a prune is "mass".
    pub mass_prune_ratio: f64,
    /// GL013: absolute count above which a prune is "mass".
    pub mass_prune_count: usize,
    /// Controller settings for ApplicationSets.
    pub applicationset: AppSetControllerConfig,
    /// StorageClass assumed when a PVC names none: whether it binds on first consumer.
    pub default_storage_class_wait_for_first_consumer: bool,
    /// Raw extra sections kept for rules that read them.
    pub raw: Value,
}

/// ApplicationSet controller flags the linter cannot see.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AppSetControllerConfig {
    /// `--policy` (empty when unset).
    pub policy: Option<String>,
    /// `--enable-policy-override`.
    pub policy_override: Option<bool>,
    /// `--enable-new-git-file-globbing`.
    pub new_git_file_globbing: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            stateful_kinds: Vec::new(),
            repo_urls: Vec::new(),
            branches: Vec::new(),
            apps: Vec::new(),
            argocd_version: (3, 5),
            ignore: Vec::new(),
            severity: BTreeMap::new(),
            mass_prune_ratio: 0.5,
            mass_prune_count: 20,
            applicationset: AppSetControllerConfig::default(),
            default_storage_class_wait_for_first_consumer: false,
            raw: Value::Null,
        }
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawConfig {
    #[serde(default)]
    stateful_kinds: Vec<String>,
    #[serde(default)]
    repo_urls: Vec<String>,
    #[serde(default)]
    branches: Vec<String>,
    #[serde(default)]
    apps: Vec<String>,
    #[serde(default)]
    argocd_version: Option<String>,
    #[serde(default)]
    rules: RawRules,
    #[serde(default)]
    mass_prune: Option<RawMassPrune>,
    #[serde(default)]
    application_set: Option<RawAppSet>,
    #[serde(default)]
    default_storage_class_wait_for_first_consumer: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRules {
    #[serde(default)]
    ignore: Vec<String>,
    #[serde(default)]
    severity: BTreeMap<String, String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawMassPrune {
    ratio: Option<f64>,
    count: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct RawAppSet {
    policy: Option<String>,
    policy_override: Option<bool>,
    new_git_file_globbing: Option<bool>,
}

/// Every problem found in a configuration file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid {file}: {}", .problems.join("; "))]
pub struct ConfigError {
    /// The file.
    pub file: String,
    /// Each problem, one line each.
    pub problems: Vec<String>,
}

impl Config {
    /// Parses configuration text.
    ///
    /// # Errors
    /// Invalid YAML, unknown keys, bad values — all reported together.
    pub fn parse(file: &str, text: &str) -> Result<Config, ConfigError> {
        let err = |p: String| ConfigError {
            file: file.to_string(),
            problems: vec![p],
        };
        let docs = crate::yaml::load_all(text).map_err(|e| err(e.to_string()))?;
        let value = docs
            .into_iter()
            .map(|d| d.value)
            .find(|v| !v.is_null())
            .unwrap_or(Value::Null);
        if value.is_null() {
            return Ok(Config::default());
        }
        let raw: RawConfig =
            serde_json::from_value(value.clone()).map_err(|e| err(e.to_string()))?;
        let mut problems = Vec::new();
        let mut cfg = Config {
            raw: value,
            ..Config::default()
        };
        cfg.stateful_kinds = raw.stateful_kinds;
        cfg.repo_urls = raw.repo_urls;
        cfg.branches = raw.branches;
        cfg.apps = raw.apps;
        if let Some(v) = raw.argocd_version {
            match parse_version(&v) {
                Some(ver) => cfg.argocd_version = ver,
                None => problems.push(format!("argocdVersion `{v}` is not a version like `3.4`")),
            }
        }
        let known = |s: &str| crate::rules::find(s).is_some();
        for r in &raw.rules.ignore {
            if !known(r) {
                problems.push(format!("rules.ignore: unknown rule `{r}`"));
            }
        }
        cfg.ignore = raw.rules.ignore;
        for (k, v) in raw.rules.severity {
            if !known(&k) {
                problems.push(format!("rules.severity: unknown rule `{k}`"));
            }
            match Severity::parse(&v) {
                Some(s) => {
                    cfg.severity.insert(k, s);
                }
                None => problems.push(format!(
                    "rules.severity.{k}: `{v}` is not error, warning or info"
                )),
            }
        }
        if let Some(m) = raw.mass_prune {
            if let Some(r) = m.ratio {
                if (0.0..=1.0).contains(&r) {
                    cfg.mass_prune_ratio = r;
                } else {
                    problems.push(format!("massPrune.ratio `{r}` is not between 0 and 1"));
                }
            }
            if let Some(c) = m.count {
                cfg.mass_prune_count = c;
            }
        }
        if let Some(a) = raw.application_set {
            cfg.applicationset = AppSetControllerConfig {
                policy: a.policy,
                policy_override: a.policy_override,
                new_git_file_globbing: a.new_git_file_globbing.unwrap_or(false),
            };
        }
        if let Some(w) = raw.default_storage_class_wait_for_first_consumer {
            cfg.default_storage_class_wait_for_first_consumer = w;
        }
        if problems.is_empty() {
            Ok(cfg)
        } else {
            Err(ConfigError {
                file: file.to_string(),
                problems,
            })
        }
    }

    /// Whether the target Argo CD version is at least `major.minor`.
    #[must_use]
    pub fn argocd_at_least(&self, major: u32, minor: u32) -> bool {
        self.argocd_version >= (major, minor)
    }

    /// Whether (group, kind) was configured as stateful.
    #[must_use]
    pub fn is_extra_stateful(&self, group: &str, kind: &str) -> bool {
        self.stateful_kinds
            .iter()
            .any(|s| match s.rsplit_once('/') {
                Some((g, k)) => g == group && k == kind,
                None => s == kind,
            })
    }
}

fn parse_version(v: &str) -> Option<(u32, u32)> {
    let v = v.trim().trim_start_matches('v');
    let mut it = v.split('.');
    let major = it.next()?.parse().ok()?;
    let minor = it.next().unwrap_or("0").parse().ok()?;
    Some((major, minor))
}
