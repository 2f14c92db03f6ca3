//! `.gitops-lint.yaml`: rule selection and severities, extra stateful kinds,
//! repository URL aliases, implicit apps, and the Argo CD behaviour that
//! depends on version or controller flags.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::finding::{Category, RuleMeta, Severity};

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
    /// GL013: share of an app's resources (0–1) above which a prune is "mass".
    pub(crate) mass_prune_ratio: f64,
    /// GL013: absolute count above which a prune is "mass".
    pub(crate) mass_prune_count: usize,
    /// Controller settings for ApplicationSets.
    pub(crate) applicationset: AppSetControllerConfig,
    /// StorageClass assumed when a PVC names none: whether it binds on first consumer.
    pub(crate) default_storage_class_wait_for_first_consumer: bool,
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
    /// Namespaces that exist on every destination cluster without a manifest
    /// (created outside Argo CD), besides `default`, `kube-*` and `argocd`.
    pub(crate) namespaces: Vec<String>,
    /// Whether `Gitops-Lint-Allow` commit trailers acknowledge deletions
    /// (`acknowledge: {trailers: false}` switches them off: a trailer is
    /// written by the change's own author).
    pub(crate) acknowledge_trailers: bool,
    /// `generatedObjects`: custom resources from which a controller creates
    /// a core object (GL008), besides the built-in table.
    pub(crate) generated_objects: Vec<GeneratedObject>,
    /// `plugins`: config-management plugins by the name Applications give
    /// them, with their `discover` rule and the native renderer each stands
    /// for (docs/plugins.md).
    pub(crate) plugins: std::sync::Arc<crate::render::plugin::Plugins>,
    /// `diff`: the rendered diff of a `gitops-lint diff` (docs/rendered-diff.md).
    pub(crate) diff: DiffConfig,
    /// Raw extra sections kept for rules that read them.
    pub(crate) raw: Value,
}

/// `diff:` of the configuration: whether and how the changes of rendered
/// manifests are shown (docs/rendered-diff.md).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DiffConfig {
    /// `show`: whether a diff shows it (the command line's `--diff` and
    /// `--no-diff` decide over it).
    pub(crate) show: bool,
    /// `context`: lines of context around each change.
    pub(crate) context: usize,
    /// `hideDeleted`: an app the change deletes is listed with its
    /// resources, without their bodies.
    pub(crate) hide_deleted: bool,
    /// `mask`: values shown masked besides a `Secret`'s.
    pub(crate) mask: Vec<MaskRule>,
    /// `ignoreLines`: a changed line matching one of these is no change; a
    /// hunk of such lines only is left out, and a resource of such hunks only.
    pub(crate) ignore_lines: Vec<LinePattern>,
    /// `ignoreResources`: resources never diffed.
    pub(crate) ignore_resources: Vec<ResourceMatch>,
    /// `apps`: only apps whose name matches one of these globs are diffed
    /// (empty: every app).
    pub(crate) apps: Vec<String>,
    /// `appLabels`: only apps whose Application has every one of these
    /// labels are diffed (empty: every app).
    pub(crate) app_labels: BTreeMap<String, String>,
}

/// A regular expression of `diff.ignoreLines` or `--diff-ignore`, compiled
/// within the bounds of every pattern gitops-lint compiles.
#[derive(Debug, Clone)]
pub(crate) struct LinePattern(pub(crate) regex::Regex);

impl PartialEq for LinePattern {
    fn eq(&self, other: &Self) -> bool {
        self.0.as_str() == other.0.as_str()
    }
}

impl Eq for LinePattern {}

impl LinePattern {
    /// Compiles `pattern` (the regex crate's syntax, as RE2's), bounded in
    /// length and compiled size.
    ///
    /// # Errors
    /// A pattern too long, too large once compiled, or invalid.
    pub(crate) fn new(pattern: &str) -> Result<LinePattern, String> {
        use crate::gotemplate::funcs::{MAX_REGEX_PATTERN, REGEX_DFA_LIMIT, REGEX_SIZE_LIMIT};
        if pattern.len() > MAX_REGEX_PATTERN {
            return Err(format!(
                "the pattern is {} bytes long, longer than the {MAX_REGEX_PATTERN} gitops-lint compiles",
                pattern.len()
            ));
        }
        regex::RegexBuilder::new(pattern)
            .size_limit(REGEX_SIZE_LIMIT)
            .dfa_size_limit(REGEX_DFA_LIMIT)
            .build()
            .map(LinePattern)
            .map_err(|e| match e {
                regex::Error::CompiledTooBig(n) => {
                    format!("`{pattern}` compiles to more than {n} bytes")
                }
                e => format!("`{pattern}` is not a regular expression: {e}"),
            })
    }
}

/// An entry of `diff.ignoreResources`: each field given must be equal, `*`
/// or absent matches anything.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourceMatch {
    /// API group (`""`: the core group).
    pub(crate) group: Option<String>,
    /// Kind.
    pub(crate) kind: Option<String>,
    /// Name.
    pub(crate) name: Option<String>,
    /// Namespace.
    pub(crate) namespace: Option<String>,
}

impl ResourceMatch {
    /// Whether `id` is matched.
    #[must_use]
    pub(crate) fn matches(&self, id: &crate::manifest::ResourceId) -> bool {
        let eq = |want: &Option<String>, have: &str| {
            want.as_deref().is_none_or(|w| w == "*" || w == have)
        };
        eq(&self.group, &id.group)
            && eq(&self.kind, &id.kind)
            && eq(&self.name, &id.name)
            && eq(&self.namespace, &id.namespace)
    }
}

impl Default for DiffConfig {
    fn default() -> Self {
        DiffConfig {
            show: true,
            context: DEFAULT_DIFF_CONTEXT,
            hide_deleted: false,
            mask: Vec::new(),
            ignore_lines: Vec::new(),
            ignore_resources: Vec::new(),
            apps: Vec::new(),
            app_labels: BTreeMap::new(),
        }
    }
}

/// Lines of context of a unified diff when nothing says otherwise (as
/// `diff -u` and `git diff`).
pub(crate) const DEFAULT_DIFF_CONTEXT: usize = 3;
/// The most lines of context a diff asks for: enough for any reader,
/// small enough that a typo cannot ask for the whole of every object.
pub(crate) const MAX_DIFF_CONTEXT: usize = 1000;

/// One entry of `diff.mask`: resources it names have values masked as a
/// `Secret`'s data is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct MaskRule {
    /// API group (`None`: any; `""` is the core group).
    pub(crate) group: Option<String>,
    /// Kind.
    pub(crate) kind: String,
    /// Name (`None`: any).
    pub(crate) name: Option<String>,
    /// Namespace (`None`: any).
    pub(crate) namespace: Option<String>,
    /// Keys of `data`, `stringData` and `binaryData`.
    pub(crate) keys: Vec<String>,
    /// JSON pointers (`/spec/password`) of other values.
    pub(crate) pointers: Vec<String>,
}

/// "A controller creates a `creates` object from each `group/kind`
/// resource, in its namespace, named by the string at `name_from`."
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct GeneratedObject {
    /// API group of the custom resource.
    pub(crate) group: String,
    /// Kind of the custom resource.
    pub(crate) kind: String,
    /// Core kind created: Secret, ConfigMap, Service, PersistentVolumeClaim or ServiceAccount.
    pub(crate) creates: String,
    /// Dotted path of the created object's name (default `metadata.name`).
    pub(crate) name_from: String,
}

/// The kinds a workload can wait for that `generatedObjects` may create.
const GENERATED_KINDS: &[&str] = &[
    "Secret",
    "ConfigMap",
    "Service",
    "PersistentVolumeClaim",
    "ServiceAccount",
];
const GENERATED_KEYS: &[&str] = &["kind", "creates", "nameFrom"];

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
            mass_prune_ratio: 0.5,
            mass_prune_count: 20,
            applicationset: AppSetControllerConfig::default(),
            default_storage_class_wait_for_first_consumer: false,
            clusters: Vec::new(),
            tracking_method: None,
            kustomize_build_options: None,
            chart_cache: None,
            chart_repositories: Vec::new(),
            helm_renderer: None,
            cluster_scoped_kinds: Vec::new(),
            namespaces: Vec::new(),
            acknowledge_trailers: true,
            generated_objects: Vec::new(),
            plugins: std::sync::Arc::default(),
            diff: DiffConfig::default(),
            raw: Value::Null,
        }
    }
}

/// Every problem found in a configuration file.
/// Shown as a command-line usage error is: one line a problem, each
/// `FILE:LINE:COLUMN: key path and what is expected`, ending with where the
/// keys are documented.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.lines().join("\n"))]
pub struct ConfigError {
    /// The file.
    pub(crate) file: String,
    /// Each problem, one line each (`LINE:COLUMN: ...` when the place is known).
    pub(crate) problems: Vec<String>,
}

impl ConfigError {
    /// One line a problem, as the command line prints them.
    #[must_use]
    pub(crate) fn lines(&self) -> Vec<String> {
        self.problems
            .iter()
            .map(|p| {
                let sep = if problem_line(p).is_some() { ":" } else { ": " };
                format!("{}{sep}{p} (see docs/configuration.md)", self.file)
            })
            .collect()
    }
}

/// The line a problem is on, when it starts with `LINE:COLUMN: `.
fn problem_line(p: &str) -> Option<u32> {
    let (line, rest) = p.split_once(':')?;
    let (column, _) = rest.split_once(": ")?;
    column.parse::<u32>().ok()?;
    line.parse().ok()
}

/// `LINE:COLUMN: msg` for a problem found at the 1-based `line` of `text`:
/// the column of `key` on it when it is there (a flow mapping holds several
/// keys on one line), else of the line's first character.
fn at_line(text: &str, line: u32, key: Option<&str>, msg: &str) -> String {
    let src = text
        .lines()
        .nth((line as usize).saturating_sub(1))
        .unwrap_or("");
    let start = src.len() - src.trim_start().len();
    let column = key
        .and_then(|k| src[start..].find(k).map(|i| start + i))
        .unwrap_or(start);
    let column = src[..column].chars().count() + 1;
    format!("{line}:{column}: {msg}")
}

/// A configuration that does not load, as a finding reports it (GL022):
/// one line, and the line of its first problem when known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfigProblem {
    /// The repository path of the configuration.
    pub(crate) file: String,
    /// Why it does not load, on one line.
    pub(crate) message: String,
    /// The line of the first problem.
    pub(crate) line: Option<u32>,
}

impl ConfigProblem {
    /// The problems of `e`, found in the repository file `file`.
    pub(crate) fn from_error(file: &str, e: &ConfigError) -> ConfigProblem {
        let line = e.problems.first().and_then(|p| problem_line(p));
        ConfigProblem {
            file: file.to_string(),
            // Placed as the command line places them: `FILE:LINE:COLUMN: ...`.
            message: e
                .problems
                .iter()
                .map(|p| match problem_line(p) {
                    Some(_) => format!("{file}:{p}"),
                    None => p.clone(),
                })
                .collect::<Vec<_>>()
                .join("; ")
                .replace('\n', "; "),
            line,
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

/// The keys the file accepts, for unknown-key errors and "did you mean".
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
    "massPrune",
    "applicationSet",
    "defaultStorageClassWaitForFirstConsumer",
    "clusters",
    "trackingMethod",
    "kustomizeBuildOptions",
    "chartCache",
    "chartRepositories",
    "helmRenderer",
    "clusterScopedKinds",
    "namespaces",
    "acknowledge",
    "generatedObjects",
    "plugins",
    "diff",
];
const DIFF_KEYS: &[&str] = &[
    "show",
    "context",
    "hideDeleted",
    "mask",
    "ignoreLines",
    "ignoreResources",
    "apps",
    "appLabels",
];
const RESOURCE_MATCH_KEYS: &[&str] = &["group", "kind", "name", "namespace"];
const MASK_KEYS: &[&str] = &["group", "kind", "name", "namespace", "keys", "pointers"];
const PLUGIN_KEYS: &[&str] = &["discover", "kustomize", "helm", "directory", "envsubst"];
const PLUGIN_DISCOVER_KEYS: &[&str] = &["fileName", "find"];
const PLUGIN_FIND_KEYS: &[&str] = &["glob", "command", "args"];
const PLUGIN_KUSTOMIZE_KEYS: &[&str] = &["buildOptions"];
/// The `helm` keys of an Application source a plugin mapping may set.
const PLUGIN_HELM_KEYS: &[&str] = &[
    "valueFiles",
    "values",
    "valuesObject",
    "parameters",
    "fileParameters",
    "releaseName",
    "namespace",
    "ignoreMissingValueFiles",
    "passCredentials",
    "skipCrds",
    "skipSchemaValidation",
    "skipTests",
    "kubeVersion",
    "apiVersions",
];
/// The `directory` keys of an Application source a plugin mapping may set.
const PLUGIN_DIRECTORY_KEYS: &[&str] = &["recurse", "include", "exclude"];
const ACKNOWLEDGE_KEYS: &[&str] = &["trailers"];
const INSTANCE_KEYS: &[&str] = &["name", "roots"];
const CLUSTER_KEYS: &[&str] = &["name", "server", "labels", "annotations", "project"];
const RULES_KEYS: &[&str] = &["select", "ignore", "severity"];
const MASS_PRUNE_KEYS: &[&str] = &["ratio", "count"];
const APPSET_KEYS: &[&str] = &["policy", "policyOverride", "newGitFileGlobbing"];
const APPSET_POLICIES: &[&str] = &["sync", "create-only", "create-update", "create-delete"];

/// `diff:` read, each problem reported.
fn diff_config(c: &mut Checker<'_>, d: &Value) -> DiffConfig {
    let mut out = DiffConfig::default();
    c.keys(&["diff"], d, DIFF_KEYS);
    if let Some(b) = c.boolean(&["diff", "show"], d.get("show")) {
        out.show = b;
    }
    if let Some(b) = c.boolean(&["diff", "hideDeleted"], d.get("hideDeleted")) {
        out.hide_deleted = b;
    }
    match d.get("context") {
        None | Some(Value::Null) => {}
        Some(n) => match n.as_u64().and_then(|n| usize::try_from(n).ok()) {
            Some(n) if n <= MAX_DIFF_CONTEXT => out.context = n,
            _ => c.at(
                &["diff", "context"],
                format!("diff.context `{n}` is not a whole number of lines from 0 to {MAX_DIFF_CONTEXT}"),
            ),
        },
    }
    match d.get("mask") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                c.keys(&["diff", "mask"], item, MASK_KEYS);
                let text = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_string);
                let keys = c.strings(&["diff", "mask", "keys"], item.get("keys"));
                let pointers = c.strings(&["diff", "mask", "pointers"], item.get("pointers"));
                let Some(kind) = text("kind") else {
                    c.at(
                        &["diff", "mask"],
                        "each `diff.mask` entry needs a `kind` (and `keys` or `pointers`)"
                            .to_string(),
                    );
                    continue;
                };
                if keys.is_empty() && pointers.is_empty() {
                    c.at(
                        &["diff", "mask"],
                        format!("`diff.mask` entry of kind `{kind}` names no `keys` or `pointers` to mask"),
                    );
                    continue;
                }
                if let Some(p) = pointers.iter().find(|p| !p.starts_with('/')) {
                    c.at(
                        &["diff", "mask", "pointers"],
                        format!(
                            "`{p}` is not a JSON pointer (it starts with `/`, as `/spec/password`)"
                        ),
                    );
                    continue;
                }
                out.mask.push(MaskRule {
                    group: text("group"),
                    kind,
                    name: text("name"),
                    namespace: text("namespace"),
                    keys,
                    pointers,
                });
            }
        }
        Some(_) => c.at(&["diff", "mask"], "`diff.mask` must be a list".to_string()),
    }
    for p in c.strings(&["diff", "ignoreLines"], d.get("ignoreLines")) {
        match LinePattern::new(&p) {
            Ok(re) => out.ignore_lines.push(re),
            Err(e) => c.at(&["diff", "ignoreLines"], format!("diff.ignoreLines: {e}")),
        }
    }
    match d.get("ignoreResources") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for item in items {
                c.keys(&["diff", "ignoreResources"], item, RESOURCE_MATCH_KEYS);
                let text = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_string);
                let m = ResourceMatch {
                    group: text("group"),
                    kind: text("kind"),
                    name: text("name"),
                    namespace: text("namespace"),
                };
                if m.group.is_none()
                    && m.kind.is_none()
                    && m.name.is_none()
                    && m.namespace.is_none()
                {
                    c.at(
                        &["diff", "ignoreResources"],
                        "a `diff.ignoreResources` entry names no `group`, `kind`, `name` or `namespace`: it would hide every resource".to_string(),
                    );
                    continue;
                }
                out.ignore_resources.push(m);
            }
        }
        Some(_) => c.at(
            &["diff", "ignoreResources"],
            "`diff.ignoreResources` must be a list".to_string(),
        ),
    }
    out.apps = c.strings(&["diff", "apps"], d.get("apps"));
    for g in &out.apps {
        if let Err(e) = crate::glob::Glob::new(g, &[]) {
            c.at(&["diff", "apps"], format!("diff.apps: `{g}`: {e}"));
        }
    }
    match d.get("appLabels") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                match v.as_str() {
                    Some(v) => {
                        out.app_labels.insert(k.clone(), v.to_string());
                    }
                    None => c.at(
                        &["diff", "appLabels", k],
                        format!("diff.appLabels.{k} must be a string (quote it)"),
                    ),
                }
            }
        }
        Some(_) => c.at(
            &["diff", "appLabels"],
            "`diff.appLabels` must be a mapping of label to value".to_string(),
        ),
    }
    out
}

pub(crate) use crate::suggest::{close_names, did_you_mean, edit_distance};

/// Collects problems with the line they are on.
struct Checker<'t> {
    text: &'t str,
    doc: usize,
    problems: Vec<String>,
}

impl Checker<'_> {
    fn at(&mut self, path: &[&str], msg: String) {
        let segs: Vec<crate::yaml::PathSeg<'_>> =
            path.iter().map(|k| crate::yaml::PathSeg::Key(k)).collect();
        // Locate the deepest prefix of the path that exists (a missing key
        // points at its parent).
        let found = (0..=segs.len())
            .rev()
            .find_map(|n| crate::yaml::line_of(self.text, self.doc, &segs[..n]).map(|l| (l, n)));
        self.problems.push(match found {
            Some((l, n)) => at_line(self.text, l, n.checked_sub(1).map(|i| path[i]), &msg),
            None => msg,
        });
    }

    fn keys(&mut self, path: &[&str], v: &Value, known: &[&str]) {
        let Some(map) = v.as_object() else {
            let name = path.join(".");
            self.at(path, format!("`{name}` must be a mapping"));
            return;
        };
        for k in map.keys() {
            if known.contains(&k.as_str()) {
                continue;
            }
            let mut p = path.to_vec();
            p.push(k);
            let full = p.join(".");
            let hint = did_you_mean(k, known)
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
            self.at(&p, format!("unknown key `{full}`{hint}"));
        }
    }

    fn strings(&mut self, path: &[&str], v: Option<&Value>) -> Vec<String> {
        let Some(v) = v else { return Vec::new() };
        let name = path.join(".");
        match v {
            Value::Null => Vec::new(),
            Value::Array(items) => {
                let mut out = Vec::new();
                for (i, it) in items.iter().enumerate() {
                    match it.as_str() {
                        Some(s) => out.push(s.to_string()),
                        None => {
                            self.at(path, format!("`{name}[{i}]` must be a string"));
                        }
                    }
                }
                out
            }
            _ => {
                self.at(path, format!("`{name}` must be a list of strings"));
                Vec::new()
            }
        }
    }

    /// A list of path globs, each checked (a bad one is a problem, not dropped).
    fn globs(&mut self, path: &[&str], v: Option<&Value>) -> PathGlobs {
        let globs = self.strings(path, v);
        let name = path.join(".");
        let mut builder = globset::GlobSetBuilder::new();
        for g in &globs {
            match globset::GlobBuilder::new(g).literal_separator(true).build() {
                Ok(glob) => {
                    builder.add(glob);
                }
                Err(e) => self.at(path, format!("{name}: `{g}` is not a glob: {}", e.kind())),
            }
        }
        builder.build().map_or_else(
            |_| PathGlobs::default(),
            |set| PathGlobs {
                patterns: globs,
                set,
            },
        )
    }

    fn boolean(&mut self, path: &[&str], v: Option<&Value>) -> Option<bool> {
        match v? {
            Value::Bool(b) => Some(*b),
            Value::Null => None,
            _ => {
                let name = path.join(".");
                self.at(path, format!("`{name}` must be true or false"));
                None
            }
        }
    }
}

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

/// Repository-relative path globs (`*` stops at `/`, `**` crosses it).
#[derive(Clone, Default)]
pub(crate) struct PathGlobs {
    patterns: Vec<String>,
    set: globset::GlobSet,
}

impl PathGlobs {
    /// Whether a repository-relative path matches one of the globs.
    #[must_use]
    pub(crate) fn matches(&self, path: &str) -> bool {
        !self.patterns.is_empty() && self.set.is_match(path)
    }

    /// The globs as written.
    #[must_use]
    pub(crate) fn patterns(&self) -> &[String] {
        &self.patterns
    }
}

impl PartialEq for PathGlobs {
    fn eq(&self, other: &Self) -> bool {
        self.patterns == other.patterns
    }
}

impl std::fmt::Debug for PathGlobs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("PathGlobs").field(&self.patterns).finish()
    }
}

/// `plugins:`, every problem reported with its line.
fn plugins(c: &mut Checker<'_>, v: &Value) -> crate::render::plugin::Plugins {
    use crate::render::plugin::{Discover, PluginConfig, PluginRenderer, Plugins};
    let Some(map) = v.as_object() else {
        c.at(
            &["plugins"],
            "plugins must be a mapping from plugin name to `{kustomize: ...}`, `{helm: ...}` or `{directory: ...}`".to_string(),
        );
        return Plugins::default();
    };
    let mut out = Vec::new();
    for (name, p) in map {
        let path = ["plugins", name.as_str()];
        if p.is_null() {
            out.push(PluginConfig {
                name: name.clone(),
                discover: None,
                renderer: None,
                declared_in: None,
                envsubst: None,
            });
            continue;
        }
        c.keys(&path, p, PLUGIN_KEYS);
        let Some(p) = p.as_object() else { continue };
        let discover = p.get("discover").filter(|d| !d.is_null()).and_then(|d| {
            let dpath = ["plugins", name.as_str(), "discover"];
            c.keys(&dpath, d, PLUGIN_DISCOVER_KEYS);
            if let Some(f) = d.get("fileName").filter(|f| !f.is_null()) {
                return match f.as_str().filter(|s| !s.is_empty()) {
                    Some(s) => Some(Discover::FileName(s.to_string())),
                    None => {
                        c.at(&dpath, format!("plugins.{name}.discover.fileName must be a glob string"));
                        None
                    }
                };
            }
            let find = d.get("find").filter(|f| !f.is_null())?;
            let fpath = ["plugins", name.as_str(), "discover", "find"];
            c.keys(&fpath, find, PLUGIN_FIND_KEYS);
            if find.get("command").is_some() || find.get("args").is_some() {
                c.at(
                    &fpath,
                    format!("plugins.{name}.discover.find.command runs a command, which gitops-lint cannot do: give `find.glob` or `fileName` with the same effect, or leave `discover` out and name the plugin in the Applications (`plugin.name`)"),
                );
                return None;
            }
            match find.get("glob").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                Some(g) => match crate::glob::go::Doublestar::new(g) {
                    Ok(_) => Some(Discover::FindGlob(g.to_string())),
                    Err(e) => {
                        c.at(&fpath, format!("plugins.{name}.discover.find.glob: {e}"));
                        None
                    }
                },
                None => {
                    c.at(&fpath, format!("plugins.{name}.discover.find needs a `glob` string"));
                    None
                }
            }
        });
        let set: Vec<&str> = ["kustomize", "helm", "directory"]
            .into_iter()
            .filter(|k| p.get(*k).is_some_and(|v| !v.is_null()))
            .collect();
        if set.len() > 1 {
            c.at(
                &path,
                format!(
                    "plugins.{name} maps to more than one renderer ({}): give one",
                    set.join(", ")
                ),
            );
        }
        let renderer = match set.first().copied() {
            Some("kustomize") => {
                let k = &p["kustomize"];
                c.keys(
                    &["plugins", name.as_str(), "kustomize"],
                    k,
                    PLUGIN_KUSTOMIZE_KEYS,
                );
                match k.get("buildOptions").filter(|b| !b.is_null()) {
                    None => Some(PluginRenderer::Kustomize {
                        build_options: String::new(),
                    }),
                    Some(Value::String(b)) => Some(PluginRenderer::Kustomize {
                        build_options: b.trim().to_string(),
                    }),
                    Some(_) => {
                        c.at(
                            &["plugins", name.as_str(), "kustomize", "buildOptions"],
                            format!("plugins.{name}.kustomize.buildOptions must be a string, as in argocd-cm (`--enable-helm`)"),
                        );
                        None
                    }
                }
            }
            Some("helm") => {
                let h = &p["helm"];
                c.keys(&["plugins", name.as_str(), "helm"], h, PLUGIN_HELM_KEYS);
                h.is_object().then(|| PluginRenderer::Helm(h.clone()))
            }
            Some("directory") => {
                let d = &p["directory"];
                c.keys(
                    &["plugins", name.as_str(), "directory"],
                    d,
                    PLUGIN_DIRECTORY_KEYS,
                );
                d.is_object().then(|| PluginRenderer::Directory(d.clone()))
            }
            _ => None,
        };
        let envsubst = plugin_envsubst(c, name, p.get("envsubst"), renderer.is_some());
        out.push(PluginConfig {
            name: name.clone(),
            discover,
            renderer,
            declared_in: None,
            envsubst,
        });
    }
    Plugins::new(out)
}

/// `plugins.NAME.envsubst`: `true` for `envsubst` alone, or the names of
/// its SHELL-FORMAT (`[ARGOCD_ENV_SIZE, PARAM_TIER]`, `$` optional).
fn plugin_envsubst(
    c: &mut Checker<'_>,
    name: &str,
    v: Option<&Value>,
    has_renderer: bool,
) -> Option<crate::render::plugin_env::Envsubst> {
    use crate::render::plugin_env::Envsubst;
    let path = ["plugins", name, "envsubst"];
    let how = match v? {
        Value::Null | Value::Bool(false) => return None,
        Value::Bool(true) => Envsubst::All,
        Value::Array(a) => {
            let names: Option<Vec<String>> = a
                .iter()
                .map(|n| {
                    let n = n.as_str()?.trim_start_matches('$');
                    let n = n
                        .strip_prefix('{')
                        .and_then(|x| x.strip_suffix('}'))
                        .unwrap_or(n);
                    let ok = n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    ok.then(|| n.to_string())
                })
                .collect();
            match names {
                Some(n) if !n.is_empty() => Envsubst::Only(n),
                _ => {
                    c.at(&path, format!("plugins.{name}.envsubst must be `true` or a list of variable names (`[ARGOCD_ENV_SIZE]`), as `envsubst '$ARGOCD_ENV_SIZE'` takes them"));
                    return None;
                }
            }
        }
        _ => {
            c.at(&path, format!("plugins.{name}.envsubst must be `true` or a list of variable names (`[ARGOCD_ENV_SIZE]`), as `envsubst '$ARGOCD_ENV_SIZE'` takes them"));
            return None;
        }
    };
    if !has_renderer {
        c.at(&path, format!("plugins.{name}.envsubst applies to a renderer's output: give `kustomize`, `helm` or `directory` too"));
        return None;
    }
    Some(how)
}

impl Config {
    /// Parses configuration text; `catalog` holds the rules its selectors
    /// may name (`rules::catalog()`).
    ///
    /// # Errors
    /// Invalid YAML, unknown keys, bad values: every problem at once, each
    /// with its line where it can be found.
    pub(crate) fn parse(
        file: &str,
        text: &str,
        catalog: &[&RuleMeta],
    ) -> Result<Config, ConfigError> {
        let err = |p: String| ConfigError {
            file: file.to_string(),
            problems: vec![p],
        };
        let docs = crate::yaml::load_all(text)
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
        c.keys(&[], &value, TOP_KEYS);
        let mut cfg = Config {
            raw: (*value).clone(),
            ..Config::default()
        };
        if !value.is_object() {
            return Err(ConfigError {
                file: file.to_string(),
                problems: c.problems,
            });
        }
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
        cfg.namespaces = c.strings(&["namespaces"], get("namespaces"));
        cfg.chart_repositories = c.strings(&["chartRepositories"], get("chartRepositories"));
        for (i, url) in cfg.chart_repositories.iter().enumerate() {
            if let Some(why) = chart_repository_problem(url) {
                let segs = [
                    crate::yaml::PathSeg::Key("chartRepositories"),
                    crate::yaml::PathSeg::Index(i),
                ];
                let msg = format!("`chartRepositories[{i}]` {why}");
                c.problems
                    .push(match crate::yaml::line_of(c.text, c.doc, &segs) {
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
                    if !catalog.iter().any(|m| selects(r, m)) {
                        c.at(
                            &["rules", key],
                            format!(
                                "rules.{key}: unknown rule `{r}`{}",
                                selector_hint(r, catalog)
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
                        if !catalog.iter().any(|m| m.is_named(k)) {
                            c.at(
                                &path,
                                format!(
                                    "rules.severity: unknown rule `{k}`{}",
                                    selector_hint(k, catalog)
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
        if let Some(m) = get("massPrune") {
            c.keys(&["massPrune"], m, MASS_PRUNE_KEYS);
            match m.get("ratio") {
                None | Some(Value::Null) => {}
                Some(r) => match r.as_f64() {
                    Some(r) if (0.0..=1.0).contains(&r) => cfg.mass_prune_ratio = r,
                    _ => c.at(
                        &["massPrune", "ratio"],
                        format!("massPrune.ratio `{r}` is not a number between 0 and 1"),
                    ),
                },
            }
            match m.get("count") {
                None | Some(Value::Null) => {}
                Some(n) => match n.as_u64().and_then(|n| usize::try_from(n).ok()) {
                    Some(n) => cfg.mass_prune_count = n,
                    None => c.at(
                        &["massPrune", "count"],
                        format!("massPrune.count `{n}` is not a whole number"),
                    ),
                },
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
        if let Some(w) = c.boolean(
            &["defaultStorageClassWaitForFirstConsumer"],
            get("defaultStorageClassWaitForFirstConsumer"),
        ) {
            cfg.default_storage_class_wait_for_first_consumer = w;
        }
        if let Some(d) = get("diff") {
            cfg.diff = diff_config(&mut c, d);
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
        match get("generatedObjects") {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    c.keys(&["generatedObjects"], item, GENERATED_KEYS);
                    let text = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_string);
                    let kind = text("kind").and_then(|k| {
                        k.split_once('/')
                            .map(|(g, k)| (g.to_string(), k.to_string()))
                            .filter(|(g, k)| !g.is_empty() && !k.is_empty() && !k.contains('/'))
                    });
                    let creates = text("creates").filter(|k| GENERATED_KINDS.contains(&k.as_str()));
                    match (kind, creates) {
                        (Some((group, kind)), Some(creates)) => {
                            cfg.generated_objects.push(GeneratedObject {
                                group,
                                kind,
                                creates,
                                name_from: text("nameFrom")
                                    .unwrap_or_else(|| "metadata.name".to_string()),
                            });
                        }
                        _ => c.at(
                            &["generatedObjects"],
                            format!(
                                "every entry of generatedObjects needs `kind: group/Kind` and `creates:` one of {}",
                                GENERATED_KINDS.join(", ")
                            ),
                        ),
                    }
                }
            }
            Some(_) => c.at(
                &["generatedObjects"],
                "generatedObjects must be a list".to_string(),
            ),
        }
        if let Some(v) = get("plugins") {
            cfg.plugins = std::sync::Arc::new(plugins(&mut c, v));
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
mod tests {
    use super::*;

    fn parse(file: &str, text: &str) -> Result<Config, ConfigError> {
        Config::parse(file, text, &crate::rules::catalog())
    }

    fn problems(text: &str) -> Vec<String> {
        parse(".gitops-lint.yaml", text)
            .expect_err("invalid")
            .problems
    }

    #[test]
    fn every_problem_is_reported_at_once_with_lines_and_suggestions() {
        let p = problems(
            "statefulKind: [Cluster]\nrules:\n  ignore: [stateful-prunes]\n  severity:\n    GL001: fatal\nmassPrune:\n  ratio: 2\napplicationSet:\n  policy: delete-all\n  polcyOverride: true\n",
        );
        assert_eq!(
            p,
            vec![
                "1:1: unknown key `statefulKind` (did you mean `statefulKinds`?)",
                "3:3: rules.ignore: unknown rule `stateful-prunes` (did you mean `stateful-prune`?)",
                "5:5: rules.severity.GL001: `fatal` is not error, warning or info",
                "7:3: massPrune.ratio `2` is not a number between 0 and 1",
                "9:3: applicationSet.policy `delete-all` is not one of sync, create-only, create-update, create-delete",
                "10:3: unknown key `applicationSet.polcyOverride` (did you mean `policyOverride`?)",
            ]
        );
    }

    #[test]
    fn plugins_map_names_to_renderers_with_their_discovery() {
        use crate::render::plugin::{Discover, PluginConfig, PluginRenderer, Plugins};
        let c = parse(
            "f",
            "plugins:\n  kb:\n    kustomize: {buildOptions: ' --enable-helm '}\n  hs-v1:\n    discover: {fileName: 'secrets*.yaml'}\n    helm: {valueFiles: [a.yaml]}\n  dir:\n    discover: {find: {glob: '**/*.jsonnet'}}\n    directory: {recurse: true}\n  avp:\n",
        )
        .expect("valid");
        let want = Plugins::new(vec![
            PluginConfig {
                name: "kb".into(),
                discover: None,
                renderer: Some(PluginRenderer::Kustomize {
                    build_options: "--enable-helm".into(),
                }),
                declared_in: None,
                envsubst: None,
            },
            PluginConfig {
                name: "hs-v1".into(),
                discover: Some(Discover::FileName("secrets*.yaml".into())),
                renderer: Some(PluginRenderer::Helm(
                    serde_json::json!({"valueFiles": ["a.yaml"]}),
                )),
                declared_in: None,
                envsubst: None,
            },
            PluginConfig {
                name: "dir".into(),
                discover: Some(Discover::FindGlob("**/*.jsonnet".into())),
                renderer: Some(PluginRenderer::Directory(
                    serde_json::json!({"recurse": true}),
                )),
                declared_in: None,
                envsubst: None,
            },
            PluginConfig {
                name: "avp".into(),
                discover: None,
                renderer: None,
                declared_in: None,
                envsubst: None,
            },
        ]);
        assert_eq!(*c.plugins, want);
    }

    #[test]
    fn plugin_problems_are_reported_with_lines_and_suggestions() {
        let p = problems(
            "plugins:\n  a:\n    kustomise: {}\n  b:\n    kustomize: {buildOptions: [x]}\n    helm: {}\n  c:\n    discover: {find: {command: [sh, -c, ls]}}\n  d:\n    helm: {valueFile: [x]}\n  e:\n    discover: {fileName: 3}\n",
        );
        assert_eq!(
            p,
            vec![
                "3:5: unknown key `plugins.a.kustomise` (did you mean `kustomize`?)",
                "4:3: plugins.b maps to more than one renderer (kustomize, helm): give one",
                "5:17: plugins.b.kustomize.buildOptions must be a string, as in argocd-cm (`--enable-helm`)",
                "8:16: plugins.c.discover.find.command runs a command, which gitops-lint cannot do: give `find.glob` or `fileName` with the same effect, or leave `discover` out and name the plugin in the Applications (`plugin.name`)",
                "10:12: unknown key `plugins.d.helm.valueFile` (did you mean `valueFiles`?)",
                "12:5: plugins.e.discover.fileName must be a glob string",
            ]
        );
    }

    #[test]
    fn an_unquoted_version_that_may_have_lost_a_zero_is_refused() {
        assert_eq!(
            problems("argocdVersion: 3.10\n"),
            vec!["1:1: argocdVersion `3.1` is a number, and YAML reads `3.10` the same way: quote it, as in `argocdVersion: \"3.1\"` or `\"3.10\"`"]
        );
        let ok = |text: &str| {
            parse(".gitops-lint.yaml", text)
                .expect("valid")
                .argocd_version
        };
        assert_eq!(ok("argocdVersion: \"3.10\"\n"), (3, 10));
        assert_eq!(ok("argocdVersion: 2.14\n"), (2, 14));
    }

    #[test]
    fn helm_renderer_is_binary_or_native() {
        let c = parse(".gitops-lint.yaml", "helmRenderer: native\n").expect("valid");
        assert_eq!(c.helm_renderer, Some(crate::render::HelmRenderer::Native));
        assert_eq!(
            problems("helmRenderer: nativ\n"),
            vec!["1:1: helmRenderer `nativ` is not one of binary, native (did you mean `native`?)"]
        );
        assert_eq!(
            problems("helmRendrer: native\n"),
            vec!["1:1: unknown key `helmRendrer` (did you mean `helmRenderer`?)"]
        );
    }

    #[test]
    fn plugin_envsubst_is_true_or_variable_names_beside_a_renderer() {
        let c = parse(
            ".gitops-lint.yaml",
            "plugins:\n  a: {kustomize: {}, envsubst: true}\n  b: {directory: {}, envsubst: [\"$ARGOCD_ENV_X\", \"${PARAM_Y}\"]}\n",
        )
        .expect("valid");
        let shown = format!("{:?}", c.plugins);
        assert!(shown.contains("envsubst: Some(All)"), "{shown}");
        assert!(
            shown.contains(r#"envsubst: Some(Only(["ARGOCD_ENV_X", "PARAM_Y"]))"#),
            "{shown}"
        );
        let p =
            problems("plugins:\n  a: {envsubst: true}\n  b: {kustomize: {}, envsubst: [\"1x\"]}\n");
        assert_eq!(p.len(), 2, "{p:?}");
        assert!(
            p[0].contains("give `kustomize`, `helm` or `directory` too"),
            "{p:?}"
        );
        assert!(p[1].contains("a list of variable names"), "{p:?}");
    }

    #[test]
    fn chart_repositories_are_urls() {
        let c = parse(
            ".gitops-lint.yaml",
            "chartRepositories:\n- https://charts.example/\n- oci://r.example/charts\n- r.example/x\n- http://127.0.0.1:8080\n",
        )
        .expect("valid");
        assert_eq!(c.chart_repositories.len(), 4);
        assert_eq!(
            problems("chartRepositories:\n- ftp://x\n- https://u:p@h/\n"),
            vec![
                "2:1: `chartRepositories[0]` `ftp://x` must be an https://, http:// or oci:// URL, or a registry path without scheme",
                "3:1: `chartRepositories[1]` `https://u:p@h/` names no host (credentials do not belong in it: Helm's repositories.yaml or the registry config.json hold them)"
            ]
        );
        assert_eq!(
            problems("chartRepository: []\n"),
            vec!["1:1: unknown key `chartRepository` (did you mean `chartRepositories`?)"]
        );
    }

    #[test]
    fn chart_cache_is_a_directory_name() {
        let c = parse(".gitops-lint.yaml", "chartCache: .chart-cache\n").expect("valid");
        assert_eq!(c.chart_cache.as_deref(), Some(".chart-cache"));
        assert_eq!(
            problems("chartCache: \"\"\n"),
            vec!["1:1: chartCache must be a directory, relative to the repository's root"]
        );
        assert_eq!(
            problems("chartCahce: x\n"),
            vec!["1:1: unknown key `chartCahce` (did you mean `chartCache`?)"]
        );
    }

    #[test]
    fn kustomize_build_options_are_a_string_like_argocd_cm() {
        let c = parse(
            ".gitops-lint.yaml",
            "kustomizeBuildOptions: \"--enable-helm \"\n",
        )
        .expect("valid");
        assert_eq!(c.kustomize_build_options.as_deref(), Some("--enable-helm"));
        assert_eq!(
            problems("kustomizeBuildOptions: [--enable-helm]\n"),
            vec!["1:1: kustomizeBuildOptions must be a string, as in argocd-cm (`--enable-helm`)"]
        );
    }

    #[test]
    fn snake_case_keys_suggest_their_camel_case_form() {
        let p = problems("ignore_paths: [docs/**]\n");
        assert_eq!(
            p,
            vec!["1:1: unknown key `ignore_paths` (did you mean `ignorePaths`?)"]
        );
        // Nothing close: no suggestion.
        let p = problems("colour: blue\n");
        assert_eq!(p, vec!["1:1: unknown key `colour`"]);
    }

    #[test]
    fn diff_settings_are_read_and_bad_ones_named_with_their_lines() {
        let c = parse(
            ".gitops-lint.yaml",
            "diff:\n  show: false\n  context: 5\n  hideDeleted: true\n  ignoreLines: ['^\\s*image: ']\n  mask: [{kind: ConfigMap, keys: [token]}]\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!(!c.diff.show && c.diff.hide_deleted);
        assert_eq!(c.diff.context, 5);
        assert!(c.diff.ignore_lines[0].0.is_match("    image: web:1"));
        assert_eq!(c.diff.mask[0].keys, ["token"]);
        let p = problems(
            "diff:\n  context: 100000\n  ignoreLines: ['(']\n  mask: [{kind: Secret}]\n  ignoreResources: [{}]\n  colour: true\n",
        );
        assert_eq!(p.len(), 5, "{p:?}");
        assert!(p[0].starts_with("2:3: diff.context `100000`"), "{p:?}");
        assert!(
            p.iter().any(|x| x.contains("is not a regular expression")),
            "{p:?}"
        );
        assert!(
            p.iter()
                .any(|x| x.contains("names no `keys` or `pointers`")),
            "{p:?}"
        );
        assert!(
            p.iter().any(|x| x.contains("would hide every resource")),
            "{p:?}"
        );
        assert!(
            p.iter().any(|x| x.contains("unknown key `diff.colour`")),
            "{p:?}"
        );
    }

    #[test]
    fn trailers_are_on_unless_switched_off() {
        assert!(Config::default().acknowledge_trailers);
        let c = parse("c", "acknowledge: {trailers: false}\n").expect("valid");
        assert!(!c.acknowledge_trailers);
        assert_eq!(
            problems("acknowledge: {trailer: false}\n"),
            vec!["1:15: unknown key `acknowledge.trailer` (did you mean `trailers`?)"]
        );
        assert_eq!(
            problems("acknowledge: {trailers: no}\n"),
            vec!["1:15: `acknowledge.trailers` must be true or false"]
        );
    }

    #[test]
    fn error_message_lists_problems_one_per_line() {
        let e = parse("c.yaml", "a: 1\nb: 2\n").expect_err("invalid");
        assert_eq!(
            e.to_string(),
            "c.yaml:1:1: unknown key `a` (see docs/configuration.md)\nc.yaml:2:1: unknown key `b` (see docs/configuration.md)"
        );
    }

    #[test]
    fn a_full_configuration_is_read() {
        let c = parse(
            "c",
            "rules:\n  select: [prune, GL002]\n  ignore: [GL014]\n  severity: {stateful-prune: warning}\nignorePaths: ['docs/**', 'vendor/*.yaml']\nstatefulKinds: [postgresql.cnpg.io/Cluster, kafka.strimzi.io/Kafka, Bucket]\nrepoUrls: [git@github.com:org/gitops.git]\nbranches: [production]\napps: [clusters/prod]\nargocdVersion: '2.14'\nmassPrune: {ratio: 0.3, count: 10}\napplicationSet: {policy: create-update, policyOverride: false, newGitFileGlobbing: true}\ndefaultStorageClassWaitForFirstConsumer: true\n",
        )
        .expect("valid");
        assert_eq!(c.argocd_version, (2, 14));
        assert!(c.is_extra_stateful("kafka.strimzi.io", "Kafka"));
        assert!(c.is_extra_stateful("anything.io", "Bucket"));
        assert!(!c.is_extra_stateful("other.io", "Kafka"));
        let x = parse(
            "c",
            "statefulKinds: ['*.upbound.io/*', 'pkg.crossplane.io/Prov*']\n",
        )
        .expect("valid");
        assert!(x.is_extra_stateful("rds.aws.upbound.io", "Instance"));
        assert!(x.is_extra_stateful("pkg.crossplane.io", "Provider"));
        assert!(!x.is_extra_stateful("upbound.io.evil", "Instance"));
        assert!(!x.is_extra_stateful("pkg.crossplane.io", "Configuration"));
        assert!(c.ignore_paths.matches("docs/a/b.yaml"));
        assert!(c.ignore_paths.matches("vendor/x.yaml"));
        assert!(!c.ignore_paths.matches("vendor/sub/x.yaml"));
        assert_eq!(c.applicationset.policy.as_deref(), Some("create-update"));
        assert!(c.applicationset.new_git_file_globbing);
        assert!(c.default_storage_class_wait_for_first_consumer);
        assert_eq!(c.severity.get("stateful-prune"), Some(&Severity::Warning));
        let meta = |code: &str| crate::rules::find(code).map(|r| r.meta()).expect("rule");
        // `prune` is a category: GL001 is in it; GL000 (input) is not selected.
        assert!(c.rule_enabled(meta("GL001")));
        assert!(c.rule_enabled(meta("GL002")));
        assert!(!c.rule_enabled(meta("GL000")));
        assert!(!c.rule_enabled(meta("GL014")));
    }

    #[test]
    fn empty_and_comment_only_files_are_the_defaults() {
        assert_eq!(parse("c", "").expect("valid"), Config::default());
        assert_eq!(
            parse("c", "# nothing yet\n").expect("valid"),
            Config::default()
        );
    }

    #[test]
    fn wrong_types_are_named() {
        let p = problems("statefulKinds: Cluster\nbranches: [1]\nrules: [GL001]\n");
        assert_eq!(
            p,
            vec![
                "1:1: `statefulKinds` must be a list of strings",
                "2:1: `branches[0]` must be a string",
                "3:1: `rules` must be a mapping",
            ]
        );
    }
}

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
