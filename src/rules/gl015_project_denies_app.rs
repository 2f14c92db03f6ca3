//! GL015 project-denies-app: an Application whose AppProject does not permit
//! its source repository, its destination, its namespace or the kinds it
//! renders. Argo CD refuses it: the app shows `InvalidSpecError`, or its
//! sync fails with `resource ... is not permitted in project`.
//!
//! The checks follow Argo CD's `pkg/apis/application/v1alpha1`
//! `app_project_types.go` (`IsSourcePermitted`, `IsDestinationPermitted`,
//! `isDestinationMatched`, `IsGroupKindNamePermitted`,
//! `IsAppNamespacePermitted`) and `types.go` (`isResourceInList`,
//! `isNamedResourceInList`), as `util/argo/argo.go` `ValidatePermissions`
//! (source and destination) and `controller/sync.go`
//! `validateSyncPermissions` (each resource) call them. What cannot be
//! decided from the repository (a project that is not in it, a cluster
//! known by only one of its name and server, a kind of unknown scope that
//! one scope would permit) is not reported.

use goyaml::json::Pointer as _;
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::gl016_missing_namespace::BUILTIN_GROUPS;
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::finding::Suppression;
use gotemplate::go::glob::go::go_path_match;
use gotemplate::go::glob::{Glob, GlobError};

/// AC `util/glob` `Match`: a pattern gobwas refuses matches nothing;
/// `None` when it is past gitops-lint's own size limits (undecided).
fn gobwas_match(pattern: &str, text: &str, seps: &[char]) -> Option<bool> {
    match Glob::new(pattern, seps) {
        Ok(g) => Some(g.is_match(text)),
        Err(GlobError::TooLarge) => None,
        Err(GlobError::Invalid(_)) => Some(false),
    }
}
use crate::argocd::appset::selector::Selector;
use crate::argocd::{is_app_project, App, AppStatus, Inventory};
use crate::config::Config;
use crate::finding::{Finding, Severity, Side};
use crate::manifest::{builtin_cluster_scoped, Origin};

/// See `rules/GL015-project-denies-app.md`.
pub(crate) struct ProjectDeniesApp;

static META: RuleMeta = RuleMeta {
    code: "GL015",
    name: "project-denies-app",
    category: Category::Change,
    default_severity: Severity::Error,
    severity_note: "",
    mode: Mode::Single,
    doc: include_str!("../../rules/GL015-project-denies-app.md"),
    suppression: Suppression::REPOSITORY,
};

/// The namespace the Argo CD control plane runs in when an AppProject does
/// not name its own (Argo CD reads AppProjects only from there).
const CONTROL_PLANE_NAMESPACE: &str = "argocd";

/// The in-cluster destination Argo CD always knows, by server and name.
const IN_CLUSTER: (&str, &str) = ("https://kubernetes.default.svc", "in-cluster");

/// An AppProject as the repository declares it at one revision.
struct Project<'a> {
    name: &'a str,
    /// The control-plane namespace: the one the AppProject lives in.
    namespace: &'a str,
    /// The spec, with what the global projects matching it lend.
    spec: Cow<'a, Value>,
    /// `metadata.labels`, which global projects select by.
    labels: BTreeMap<String, String>,
    origin: &'a Origin,
}

/// The `metadata.labels` of an object, those whose value is a string.
fn labels_of(v: &Value) -> BTreeMap<String, String> {
    v.at("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
                .collect()
        })
        .unwrap_or_default()
}

/// Every AppProject at one revision, from the apps that render it and the
/// files that declare it, the rendered declaration's place first. A name
/// declared with different specs (one per cluster or environment) is left
/// out: which one Argo CD reads is not in the repository.
fn projects(inv: &Inventory) -> BTreeMap<&str, Project<'_>> {
    let mut all: BTreeMap<&str, Vec<Project<'_>>> = BTreeMap::new();
    for app in inv.apps.values() {
        if !matches!(app.status, AppStatus::Rendered) {
            continue;
        }
        for m in app.resources.iter() {
            if m.id.kind == "AppProject" && is_app_project(&m.value) {
                all.entry(m.id.name.as_str()).or_default().push(Project {
                    name: m.id.name.as_str(),
                    namespace: m.id.namespace.as_str(),
                    spec: Cow::Borrowed(m.value.get("spec").unwrap_or(&Value::Null)),
                    labels: labels_of(&m.value),
                    origin: &m.origin,
                });
            }
        }
    }
    for (name, declared) in &inv.projects {
        for p in declared {
            all.entry(name.as_str()).or_default().push(Project {
                name: name.as_str(),
                namespace: p
                    .object
                    .at("/metadata/namespace")
                    .and_then(Value::as_str)
                    .filter(|n| !n.is_empty())
                    .unwrap_or(CONTROL_PLANE_NAMESPACE),
                spec: Cow::Borrowed(p.object.get("spec").unwrap_or(&Value::Null)),
                labels: labels_of(&p.object),
                origin: &p.origin,
            });
        }
    }
    let mut projects: BTreeMap<&str, Project<'_>> = all
        .into_iter()
        .filter_map(|(name, mut ps)| {
            let first = ps.remove(0);
            ps.iter()
                .all(|p| p.spec == first.spec)
                .then_some((name, first))
        })
        .collect();
    lend_global_projects(inv, &mut projects);
    projects
}

/// The lists an AppProject takes from the global projects whose label
/// selector matches it (AC `util/argo/argo.go` `GetAppVirtualProject`,
/// `mergeVirtualProject`), as Argo CD checks an app against them.
const LENT: [&str; 8] = [
    "clusterResourceWhitelist",
    "clusterResourceBlacklist",
    "namespaceResourceWhitelist",
    "namespaceResourceBlacklist",
    "syncWindows",
    "sourceRepos",
    "destinations",
    "destinationServiceAccounts",
];

/// Merges into each project the global projects `argocd-cm`'s
/// `globalProjects` selects for it (AC `util/argo/argo.go`
/// `GetGlobalProjects`: in the settings' order, a project is not its own
/// global project, and an invalid selector or a global project that does
/// not exist stops the walk there).
fn lend_global_projects(inv: &Inventory, projects: &mut BTreeMap<&str, Project<'_>>) {
    let Some(text) = inv
        .tracking
        .as_ref()
        .and_then(|t| t.global_projects.as_deref())
    else {
        return;
    };
    let Ok(Value::Array(settings)) = goyaml::load_first_sigs(text, &goyaml::Limits::default())
    else {
        return;
    };
    let mut lent: Vec<(String, Value)> = Vec::new();
    for (name, p) in projects.iter() {
        for gp in &settings {
            let global = gp
                .get("projectName")
                .and_then(Value::as_str)
                .unwrap_or_default();
            if global == *name {
                continue;
            }
            let Ok(selector) = Selector::parse(gp.get("labelSelector").unwrap_or(&Value::Null))
            else {
                break;
            };
            if !selector.matches(&p.labels) {
                continue;
            }
            let Some(g) = projects.get(global) else { break };
            lent.push(((*name).to_owned(), g.spec.clone().into_owned()));
        }
    }
    for (name, global) in lent {
        let Some(p) = projects.get_mut(name.as_str()) else {
            continue;
        };
        let spec = p.spec.to_mut();
        if !spec.is_object() {
            *spec = Value::Object(serde_json::Map::new());
        }
        for key in LENT {
            let Some(Value::Array(items)) = global.get(key) else {
                continue;
            };
            if let Some(Value::Array(own)) = spec.get_mut(key) {
                own.extend(items.iter().cloned());
            } else if let Some(m) = spec.as_object_mut() {
                m.insert(key.to_owned(), Value::Array(items.clone()));
            }
        }
    }
}

fn strings<'a>(v: &'a Value, key: &str) -> impl Iterator<Item = &'a str> {
    v.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

fn is_deny(p: &str) -> bool {
    p.starts_with('!')
}

/// AC `globMatch`: a `!` pattern (where negation is allowed) matches what
/// its rest does not; `*` matches everything. `None`: undecidable pattern.
fn glob_match(pattern: &str, val: &str, seps: &[char]) -> Option<bool> {
    if let Some(rest) = pattern.strip_prefix('!') {
        return gobwas_match(rest, val, seps).map(|m| !m);
    }
    if pattern == "*" {
        return Some(true);
    }
    gobwas_match(pattern, val, seps)
}

/// AC `util/git` `NormalizeGitURL`: lower-case, `.git` dropped, an scp-like
/// `user@host:path` read as `user@host/path`; the scheme of an https URL
/// stays (so `https://` patterns never match an SSH source).
fn argo_normalize_git_url(url: &str) -> String {
    let mut u = url.trim().to_lowercase();
    let scp = !u.contains("://")
        && u.split_once('@')
            .is_some_and(|(user, rest)| !user.contains('/') && rest.contains(':'));
    if let Some(rest) = u.strip_prefix("ssh://") {
        u = rest.to_string();
    } else if scp {
        u = u.replacen(':', "/", 1);
    }
    u.strip_suffix(".git").map(str::to_string).unwrap_or(u)
}

/// AC `IsSourcePermitted`: some `sourceRepos` entry matches (`/` is a
/// separator: `*` stays within one path segment) and no `!` entry excludes it.
fn source_permitted(spec: &Value, repo_url: &str) -> Option<bool> {
    let src = argo_normalize_git_url(repo_url);
    let mut any = false;
    for pattern in strings(spec, "sourceRepos") {
        let normalized = match pattern.strip_prefix('!') {
            Some(rest) => format!("!{}", argo_normalize_git_url(rest)),
            None => argo_normalize_git_url(pattern),
        };
        let matched = glob_match(&normalized, &src, &['/'])?;
        if matched {
            any = true;
        } else if is_deny(&normalized) {
            return Some(false);
        }
    }
    Some(any)
}

/// A destination cluster as Argo CD resolves it (`GetDestinationCluster`):
/// both server and name, where the repository tells them.
struct Cluster {
    server: Option<String>,
    name: Option<String>,
}

fn cluster(app: &App, config: &Config) -> Cluster {
    let d = app.object.at("/spec/destination");
    let server = d.map_or("", |d| text(d, "server")).to_string();
    let name = d.map_or("", |d| text(d, "name")).to_string();
    let known = std::iter::once(IN_CLUSTER)
        .chain(
            config
                .clusters
                .iter()
                .map(|c| (c.server.as_str(), c.name.as_str())),
        )
        .find(|(s, n)| (!server.is_empty() && *s == server) || (!name.is_empty() && *n == name));
    let pick = |given: String, other: Option<&str>| {
        if given.is_empty() {
            other.filter(|s| !s.is_empty()).map(str::to_string)
        } else {
            Some(given)
        }
    };
    Cluster {
        server: pick(server, known.map(|k| k.0)),
        name: pick(name, known.map(|k| k.1)),
    }
}

/// AC `isDestinationMatched` with Go's precedence (`&&` before `||`), and
/// `IsDestinationPermitted`'s `permitOnlyProjectScopedClusters` (which needs
/// the project's cluster Secrets: undecided). `None`: cannot be decided.
fn destination_permitted(spec: &Value, c: &Cluster, namespace: &str) -> Option<bool> {
    let mut any = false;
    let mut unknown = false;
    for item in spec
        .get("destinations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let (iname, iserver, ins) = (
            text(item, "name"),
            text(item, "server"),
            text(item, "namespace"),
        );
        // A half of the cluster the repository does not tell matches
        // nothing here, which may be wrong: remembered as undecided.
        let mut half = |given: &Option<String>, pattern: &str| -> Option<bool> {
            match given {
                Some(v) => glob_match(pattern, v, &[]),
                None => {
                    if !pattern.is_empty() {
                        unknown = true;
                    }
                    Some(false)
                }
            }
        };
        let name_m = half(&c.name, iname)?;
        let server_m = half(&c.server, iserver)?;
        let ns_m = glob_match(ins, namespace, &[])?;
        if (server_m || name_m) && ns_m {
            any = true;
        } else if (!name_m && is_deny(iname)) || (!server_m && is_deny(iserver) && ns_m) {
            return if unknown { None } else { Some(false) };
        } else if !ns_m && is_deny(ins) && server_m {
            return Some(false);
        }
    }
    if any
        && spec
            .get("permitOnlyProjectScopedClusters")
            .and_then(Value::as_bool)
            == Some(true)
    {
        return None;
    }
    if !any && unknown {
        return None;
    }
    Some(any)
}

/// AC `isResourceInList` / `isNamedResourceInList`: Go `filepath.Match` on
/// kind, group and (cluster lists) name; a malformed pattern matches nothing.
fn in_list(list: &[Value], group: &str, kind: &str, name: Option<&str>) -> bool {
    let m = |p: &str, v: &str| go_path_match(p, v) == Some(true);
    list.iter().any(|item| {
        m(text(item, "kind"), kind)
            && m(text(item, "group"), group)
            && name.is_none_or(|n| {
                let pat = text(item, "name");
                pat.is_empty() || m(pat, n)
            })
    })
}

/// AC `IsGroupKindNamePermitted`. Namespaced: an absent
/// `namespaceResourceWhitelist` permits every kind (an empty one none).
/// Cluster-scoped: only what `clusterResourceWhitelist` lists.
fn kind_permitted(spec: &Value, group: &str, kind: &str, name: &str, namespaced: bool) -> bool {
    let list = |k: &str| spec.get(k).and_then(Value::as_array);
    let empty = Vec::new();
    if namespaced {
        let white = list("namespaceResourceWhitelist");
        let black = list("namespaceResourceBlacklist").unwrap_or(&empty);
        // An empty list matches nothing, so it permits nothing.
        let listed = white.is_none_or(|w| in_list(w, group, kind, None));
        return listed && !in_list(black, group, kind, None);
    }
    let white = list("clusterResourceWhitelist").unwrap_or(&empty);
    let black = list("clusterResourceBlacklist").unwrap_or(&empty);
    in_list(white, group, kind, Some(name)) && !in_list(black, group, kind, Some(name))
}

/// AC `IsAppNamespacePermitted` (`util/glob` `MatchStringInList` with
/// `REGEXP`: `/re/` is a regular expression, anything else a glob); an
/// Application in the control-plane namespace is always permitted.
fn app_namespace_permitted(spec: &Value, control_plane: &str, ns: &str) -> Option<bool> {
    if ns == control_plane {
        return Some(true);
    }
    let mut undecided = false;
    for p in strings(spec, "sourceNamespaces") {
        if p.len() >= 2 && p.starts_with('/') && p.ends_with('/') {
            match regex::Regex::new(&p[1..p.len() - 1]) {
                Ok(re) if re.is_match(ns) => return Some(true),
                Ok(_) => {}
                Err(_) => undecided = true,
            }
        }
        match gobwas_match(p, ns, &[]) {
            Some(true) => return Some(true),
            Some(false) => {}
            None => undecided = true,
        }
    }
    (!undecided).then_some(false)
}

/// Whether a kind is namespaced: `None` when neither a CRD in the
/// repository nor the built-in tables say.
fn namespaced(inv: &Inventory, group: &str, kind: &str) -> Option<bool> {
    if let Some(cluster) = inv.scopes.crds.get(&(group.to_string(), kind.to_string())) {
        return Some(!cluster);
    }
    if builtin_cluster_scoped(group, kind) {
        return Some(false);
    }
    BUILTIN_GROUPS.contains(&group).then_some(true)
}

/// One refusal: a stable key (to compare revisions), its text in the words
/// of Argo CD's message, and the first resource refused, if any.
type Denial<'a> = (String, String, Option<&'a Origin>);

/// Every refusal of one app by its project, and the project (None when
/// the project is not in the repository or is the built-in `default`).
fn denials<'a>(
    inv: &Inventory,
    projects: &BTreeMap<&str, Project<'_>>,
    app: &'a App,
    config: &Config,
) -> Vec<Denial<'a>> {
    let name = if app.spec.project.is_empty() {
        "default"
    } else {
        app.spec.project.as_str()
    };
    let Some(p) = projects.get(name) else {
        return Vec::new();
    };
    let spec: &Value = &p.spec;
    let mut out = Vec::new();
    if app_namespace_permitted(spec, p.namespace, &app.spec.namespace) == Some(false) {
        out.push((
            format!("namespace {}", app.spec.namespace),
            format!(
                "application '{}' in namespace '{}' is not permitted to use project '{}' (not in its `sourceNamespaces`)",
                app.spec.name, app.spec.namespace, p.name
            ),
            None,
        ));
    }
    for s in &app.spec.sources {
        if source_permitted(spec, &s.repo_url) == Some(false) {
            out.push((
                format!("repo {}", s.repo_url),
                format!(
                    "application repo {} is not permitted in project '{}'",
                    s.repo_url, p.name
                ),
                None,
            ));
        }
    }
    let c = cluster(app, config);
    let dest_ns = &app.spec.dest_namespace;
    if destination_permitted(spec, &c, dest_ns) == Some(false) {
        let shown = c
            .server
            .clone()
            .filter(|_| {
                text(
                    app.object.at("/spec/destination").unwrap_or(&Value::Null),
                    "name",
                )
                .is_empty()
            })
            .or_else(|| c.name.clone())
            .unwrap_or_default();
        out.push((
            format!("destination {shown} {dest_ns}"),
            format!(
                "application destination server '{shown}' and namespace '{dest_ns}' do not match any of the allowed destinations in project '{}'",
                p.name
            ),
            None,
        ));
    }
    if !matches!(app.status, AppStatus::Rendered) {
        return out;
    }
    // Kinds, one entry per group/kind; namespaces, one per namespace.
    let mut kinds: BTreeMap<(String, String), Vec<&crate::manifest::Manifest>> = BTreeMap::new();
    let mut namespaces: BTreeMap<String, &Origin> = BTreeMap::new();
    for m in app.resources.iter() {
        let (g, k, n) = (m.id.group.as_str(), m.id.kind.as_str(), m.id.name.as_str());
        let refused = match namespaced(inv, g, k) {
            Some(ns) => !kind_permitted(spec, g, k, n, ns),
            // Refused whichever its scope.
            None => !kind_permitted(spec, g, k, n, true) && !kind_permitted(spec, g, k, n, false),
        };
        if refused {
            kinds
                .entry((g.to_string(), k.to_string()))
                .or_default()
                .push(m);
            continue;
        }
        if !m.id.namespace.is_empty()
            && namespaced(inv, g, k) == Some(true)
            && m.id.namespace != *dest_ns
            && destination_permitted(spec, &c, &m.id.namespace) == Some(false)
        {
            namespaces
                .entry(m.id.namespace.clone())
                .or_insert(&m.origin);
        }
    }
    for ((g, k), ms) in kinds {
        let listed =
            crate::limits::first_and_more(ms.iter().map(|m| format!("`{}`", m.id)), 3, ", ");
        out.push((
            format!("resource {g}:{k}"),
            format!(
                "resource {g}:{k} is not permitted in project {} ({listed})",
                p.name,
            ),
            ms.first().map(|m| &m.origin),
        ));
    }
    for (ns, origin) in namespaces {
        out.push((
            format!("resource namespace {ns}"),
            format!("namespace {ns} is not permitted in project '{}'", p.name),
            Some(origin),
        ));
    }
    out
}

/// Whether the change may bring a refusal to an app whose render is left
/// out as unchanged: an AppProject differs between the revisions. When this
/// holds the lint renders unchanged apps before the rules run (their kinds
/// may be refused by a narrowed project).
#[must_use]
fn may_report(base: &Inventory, head: &Inventory) -> bool {
    let specs = |inv: &Inventory| -> BTreeMap<String, Value> {
        projects(inv)
            .into_iter()
            .map(|(k, p)| (k.to_string(), p.spec.into_owned()))
            .collect()
    };
    specs(base) != specs(head)
}

impl Rule for ProjectDeniesApp {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn needs_unchanged_apps(&self, base: &Inventory, head: &Inventory, _config: &Config) -> bool {
        may_report(base, head)
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        let now = projects(cx.head);
        let before_projects = cx.base.map(projects);
        for app in cx.head.apps.values() {
            if app.implicit {
                continue;
            }
            let head = denials(cx.head, &now, app, cx.config);
            if head.is_empty() {
                continue;
            }
            // In `diff`, only refusals the change brings.
            let base_app = cx.base.and_then(|b| b.apps.get(&app.key));
            let before: BTreeSet<String> = match (cx.base, &before_projects, cx.only_changed) {
                (Some(base), Some(bp), true) => base_app
                    .map(|a| denials(base, bp, a, cx.config))
                    .unwrap_or_default()
                    .into_iter()
                    .map(|d| d.0)
                    .collect(),
                _ => BTreeSet::new(),
            };
            if head.iter().all(|d| before.contains(&d.0)) {
                continue;
            }
            let project = if app.spec.project.is_empty() {
                "default"
            } else {
                app.spec.project.as_str()
            };
            let Some(p) = now.get(project) else { continue };
            let declared = p
                .origin
                .file
                .as_deref()
                .map(|f| format!(" (declared in `{f}`)"))
                .unwrap_or_default();
            let texts: Vec<&str> = head.iter().map(|d| d.1.as_str()).collect();
            let message = format!(
                "AppProject `{}`{declared} refuses app `{}`: {}",
                p.name,
                app.display_name(),
                texts.join("; ")
            );
            // The fix goes where the change is: the Application when it
            // changed, else the project when it changed, else the first
            // resource refused anew (a kind the change renders).
            let app_changed = base_app.is_none_or(|b| b.object != app.object);
            let project_changed = before_projects
                .as_ref()
                .is_some_and(|bp| bp.get(project).map(|b| &b.spec) != Some(&p.spec));
            let new_resource = head
                .iter()
                .filter(|d| !before.contains(&d.0))
                .find_map(|d| d.2);
            let f = Finding::new(&META, message).app(app.display_name());
            let at = if app_changed || cx.base.is_none() {
                &app.origin
            } else if project_changed {
                p.origin
            } else {
                new_resource.unwrap_or(&app.origin)
            };
            let at = if at.file.is_some() { at } else { p.origin };
            let f = f.at(Side::Head, at.file.as_deref(), at.line);
            out.push(f.help(format!(
                "permit it in AppProject `{}` (`sourceRepos`, `destinations`, the resource white/blacklists, `sourceNamespaces`), or move the app to a project that does",
                p.name
            )));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn source_repos_use_gobwas_with_slash_separator_and_negation() {
        let spec = json!({"sourceRepos": ["https://github.com/org/*"]});
        assert_eq!(
            source_permitted(&spec, "https://github.com/Org/app.git"),
            Some(true)
        );
        // `*` stays within one segment, and an scp-like URL is not https.
        assert_eq!(
            source_permitted(&spec, "https://github.com/org/team/app"),
            Some(false)
        );
        assert_eq!(
            source_permitted(&spec, "git@github.com:org/app.git"),
            Some(false)
        );
        let spec = json!({"sourceRepos": ["*", "!https://github.com/org/secret"]});
        assert_eq!(
            source_permitted(&spec, "https://github.com/org/app"),
            Some(true)
        );
        assert_eq!(
            source_permitted(&spec, "https://github.com/org/secret"),
            Some(false)
        );
        assert_eq!(source_permitted(&json!({}), "https://x/y"), Some(false));
    }

    #[test]
    fn destinations_match_server_or_name_and_namespace() {
        let in_cluster = Cluster {
            server: Some(IN_CLUSTER.0.into()),
            name: Some(IN_CLUSTER.1.into()),
        };
        let spec = json!({"destinations": [{"name": "in-cluster", "namespace": "team-*"}]});
        assert_eq!(
            destination_permitted(&spec, &in_cluster, "team-a"),
            Some(true)
        );
        assert_eq!(
            destination_permitted(&spec, &in_cluster, "payments"),
            Some(false)
        );
        let spec = json!({"destinations": [
            {"server": "*", "namespace": "*"},
            {"server": "*", "namespace": "!kube-system"}
        ]});
        assert_eq!(
            destination_permitted(&spec, &in_cluster, "payments"),
            Some(true)
        );
        assert_eq!(
            destination_permitted(&spec, &in_cluster, "kube-system"),
            Some(false)
        );
        // A cluster known by name only cannot be judged against server patterns.
        let named = Cluster {
            server: None,
            name: Some("prod".into()),
        };
        let spec = json!({"destinations": [{"server": "https://prod.example", "namespace": "*"}]});
        assert_eq!(destination_permitted(&spec, &named, "x"), None);
    }

    #[test]
    fn kinds_follow_white_and_blacklists() {
        // Cluster-scoped kinds need a whitelist entry; namespaced ones are
        // permitted unless a whitelist leaves them out or a blacklist names them.
        let spec = json!({});
        assert!(!kind_permitted(
            &spec,
            "rbac.authorization.k8s.io",
            "ClusterRole",
            "r",
            false
        ));
        assert!(kind_permitted(&spec, "apps", "Deployment", "d", true));
        let spec = json!({
            "clusterResourceWhitelist": [{"group": "*", "kind": "Namespace"}],
            "namespaceResourceWhitelist": [{"group": "apps", "kind": "*"}],
            "namespaceResourceBlacklist": [{"group": "apps", "kind": "DaemonSet"}]
        });
        assert!(kind_permitted(&spec, "", "Namespace", "n", false));
        assert!(kind_permitted(&spec, "apps", "Deployment", "d", true));
        assert!(!kind_permitted(&spec, "apps", "DaemonSet", "d", true));
        assert!(!kind_permitted(&spec, "", "ConfigMap", "c", true));
        let spec = json!({"namespaceResourceWhitelist": []});
        assert!(!kind_permitted(&spec, "", "ConfigMap", "c", true));
    }

    #[test]
    fn source_namespaces_take_globs_and_regexps() {
        let spec = json!({"sourceNamespaces": ["team-*", "/^ops-[0-9]+$/"]});
        let ok = |ns: &str| app_namespace_permitted(&spec, "argocd", ns);
        assert_eq!(ok("argocd"), Some(true));
        assert_eq!(ok("team-a"), Some(true));
        assert_eq!(ok("ops-12"), Some(true));
        assert_eq!(ok("payments"), Some(false));
        // The control plane is where the AppProject lives.
        assert_eq!(
            app_namespace_permitted(&spec, "openshift-gitops", "openshift-gitops"),
            Some(true)
        );
    }
}
