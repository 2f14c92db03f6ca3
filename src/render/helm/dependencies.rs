//! Chart dependencies as Argo CD gets them, offline.
//!
//! Argo CD runs `helm template` and, only when helm reports a dependency
//! missing from `charts/`, `helm dependency build` before templating again
//! (argo-cd `reposerver/repository/repository.go` `helmTemplate` →
//! `runHelmBuild`, matched by `util/helm/helm.go` `IsMissingDependencyErr`).
//! That build (helm `pkg/downloader/manager.go` `Manager.Build`, then
//! `downloadAll`) takes every dependency of `Chart.lock` (else of
//! `Chart.yaml`) again: a `file://` one is loaded from its directory with
//! its `.helmignore` applied, checked against the version constraint and
//! packaged into `charts/` (`tarFromLocalDir`); one from a Helm or OCI
//! repository is downloaded, which gitops-lint does when the run fetches
//! charts (from a repository it may contact, see
//! [`crate::render::chart_cache`]); one without a repository must already
//! be in `charts/`. The build is not recursive: a
//! `file://` dependency is packaged with what its own `charts/` holds.

use serde_json::Value;

use super::super::{RenderContext, RenderError, RenderErrorKind};
use crate::source::{path, EntryKind};
use gotemplate::go::glob::go::go_path_match;
use gotemplate::go::semver::{Constraint, Version};

/// Why a `file://` dependency outside the repository is not followed.
const NOTHING_OUTSIDE: &str = "gitops-lint reads nothing outside the repository";

/// A `file://` dependency `helm dependency build` would package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct LocalChart {
    /// The chart's name (`Chart.yaml` `name`).
    pub(crate) name: String,
    /// `alias`, if the parent names the dependency so.
    pub(crate) alias: Option<String>,
    /// Its version, as packaged (`<name>-<version>.tgz`).
    pub(crate) version: String,
    /// Its directory in the repository.
    pub(crate) dir: String,
}

/// A dependency from a Helm or OCI repository, fetched and verified (see
/// [`crate::render::chart_fetch`]).
#[derive(Debug, Clone)]
pub(crate) struct FetchedChart {
    /// The dependency's name.
    pub(crate) name: String,
    /// The version fetched (a constraint resolved).
    pub(crate) version: String,
    /// The archive, written as `charts/<name>-<version>.tgz`.
    pub(crate) bytes: std::sync::Arc<[u8]>,
}

/// What Argo CD's `helm dependency build` would change in `charts/`.
#[derive(Debug, Default)]
pub(super) struct Build {
    /// Charts to place in `charts/`.
    pub(crate) charts: Vec<LocalChart>,
    /// Archives fetched from repositories, to place in `charts/`.
    pub(crate) fetched: Vec<FetchedChart>,
    /// Archives directly in `charts/` the build deletes as outdated
    /// (`safeMoveDeps`: every archive it did not write, except those of
    /// dependencies without a repository).
    pub(crate) removed: Vec<String>,
}

/// The dependencies of `Chart.yaml` (or `requirements.yaml` for
/// apiVersion v1 charts).
pub(super) fn declared(cx: &RenderContext<'_>, chart: &str) -> Vec<Value> {
    list_in(cx, chart, &["Chart.yaml", "requirements.yaml"])
}

fn list_in(cx: &RenderContext<'_>, chart: &str, files: &[&str]) -> Vec<Value> {
    let mut out = Vec::new();
    for f in files {
        let file = path::join(chart, f).unwrap_or_default();
        if cx.kind_of(&file).ok().flatten() != Some(EntryKind::File) {
            continue;
        }
        if let Ok(docs) = cx.load_yaml(&file) {
            if let Some(a) = docs
                .first()
                .and_then(|d| d.value.get("dependencies"))
                .and_then(Value::as_array)
            {
                out.extend(a.iter().cloned());
            }
        }
    }
    out
}

fn text<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// What `helm dependency build` would do for `chart`, or `None` when every
/// dependency is in `charts/` already (helm template then runs as is).
///
/// # Errors
/// A build that needs the network (a dependency from a Helm or OCI
/// repository, `@name` included), that fails (a dependency without a
/// repository missing from `charts/`, a `file://` chart whose version does
/// not satisfy the constraint), or a `file://` path leading outside the
/// repository.
pub(super) fn plan(cx: &RenderContext<'_>, chart: &str) -> Result<Option<Build>, RenderError> {
    let deps = declared(cx, chart);
    if deps.is_empty() {
        return Ok(None);
    }
    let charts_dir = path::join(chart, "charts").unwrap_or_default();
    let vendored: Vec<(String, EntryKind)> = if cx.kind_of(&charts_dir)? == Some(EntryKind::Dir) {
        cx.list(&charts_dir)?
            .into_iter()
            .map(|e| (e.name, e.kind))
            .collect()
    } else {
        Vec::new()
    };
    // helm loads every chart under `charts/` and matches dependencies by
    // the name in each one's `Chart.yaml` (`action.CheckDependencies`), not
    // by where it lies: a directory counts by its `Chart.yaml` name, an
    // archive by its file name (`<name>-<version>.tgz`, as `helm package`
    // and `helm dependency build` write it).
    let chart_name = |dir: &str| -> Option<String> {
        let file = path::join(&charts_dir, &format!("{dir}/Chart.yaml"))?;
        let docs = cx.load_yaml(&file).ok()?;
        Some(docs.first()?.value.get("name")?.as_str()?.to_string())
    };
    let names: Vec<(String, EntryKind)> = vendored
        .iter()
        .map(|(v, k)| match k {
            EntryKind::Dir => (chart_name(v).unwrap_or_else(|| v.clone()), *k),
            _ => (v.clone(), *k),
        })
        .collect();
    let is_vendored = |name: &str| {
        names
            .iter()
            .any(|(v, k)| v == name || (*k != EntryKind::Dir && v.starts_with(&format!("{name}-"))))
    };
    let Some(missing) = deps
        .iter()
        .map(|d| text(d, "name"))
        .find(|n| !is_vendored(n))
    else {
        return Ok(None);
    };
    // The build fetches every dependency with a repository again: one
    // that is missing is named first, as the likelier cause.
    let remote = |d: &&Value| {
        let repo = text(d, "repository");
        !repo.is_empty() && !repo.starts_with("file://")
    };
    let fetched = deps
        .iter()
        .filter(remote)
        .find(|d| !is_vendored(text(d, "name")))
        .or_else(|| deps.iter().find(remote));
    // With fetching, the build's downloads are fetched from the
    // repositories the run may contact.
    let fetching = cx
        .options
        .chart_cache
        .as_ref()
        .filter(|c| c.fetcher().is_some());
    if let (Some(d), None) = (fetched, fetching) {
        let (name, repo) = (text(d, "name"), text(d, "repository"));
        let what = if is_vendored(name) {
            format!("chart dependency `{missing}` is not vendored in `{charts_dir}`, and the build that adds it fetches `{name}` from `{repo}` again")
        } else {
            format!("chart dependency `{name}` from `{repo}` is not vendored in `{charts_dir}`")
        };
        return Err(RenderError::unsupported(format!(
            "{what}: Argo CD would run `helm dependency build`, which needs the network; gitops-lint never fetches"
        )));
    }
    let lock = ["Chart.lock", "requirements.lock"]
        .iter()
        .map(|f| path::join(chart, f).unwrap_or_default())
        .find(|f| cx.kind_of(f).ok().flatten() == Some(EntryKind::File));
    // With a lock file the build takes its exact versions.
    let wanted = match &lock {
        Some(l) => list_in(cx, "", &[l.as_str()]),
        None => deps.clone(),
    };
    let mut build = Build::default();
    for d in &wanted {
        let (name, repo) = (text(d, "name"), text(d, "repository"));
        let Some(rel) = repo.strip_prefix("file://") else {
            if let (false, Some(charts)) = (repo.is_empty(), fetching) {
                let url = match repository_name(repo) {
                    Some(named) => charts
                        .fetcher()
                        .and_then(|f| f.repository_named(named))
                        .ok_or_else(|| RenderError::unsupported(format!(
                            "chart dependency `{name}` names its repository `{repo}`, and Helm's repositories.yaml names no repository `{named}`: add the one Argo CD knows by that name with `helm repo add {named} URL` (gitops-lint reads $HELM_REPOSITORY_CONFIG, else ~/.config/helm/repositories.yaml)"
                        )))?,
                    None => repo.to_string(),
                };
                // `Manager.downloadAll`: the lock's version, else the
                // constraint resolved against the repository.
                let f = charts.dependency(&url, name, text(d, "version"), cx.tree)?;
                build.fetched.push(FetchedChart {
                    name: name.to_string(),
                    version: f.version,
                    bytes: f.bytes,
                });
                continue;
            }
            if repo.is_empty() && !is_vendored(name) {
                return Err(RenderError::content(format!(
                    "chart dependency `{name}` has no repository and is not in `{charts_dir}`, so `helm dependency build` (which Argo CD runs) fails"
                )));
            }
            continue;
        };
        let alias = deps
            .iter()
            .find(|x| text(x, "name") == name && text(x, "repository") == repo)
            .map(|x| text(x, "alias"))
            .filter(|a| !a.is_empty())
            .map(str::to_string);
        let local = load_local(
            cx,
            chart,
            name,
            repo,
            rel,
            text(d, "version"),
            lock.as_deref(),
        )?;
        build.charts.push(LocalChart { alias, ..local });
    }
    let keep: Vec<&str> = deps
        .iter()
        .filter(|d| text(d, "repository").is_empty())
        .map(|d| text(d, "name"))
        .collect();
    build.removed = vendored
        .into_iter()
        .filter(|(n, k)| {
            *k != EntryKind::Dir
                && n.ends_with(".tgz")
                && !keep.iter().any(|name| n.starts_with(&format!("{name}-")))
        })
        .map(|(n, _)| n)
        .collect();
    Ok(Some(build))
}

/// The repository name of a dependency's `@name` or `alias:name`.
///
/// Argo CD adds the repository of its configuration so named under that
/// name (argo-cd `reposerver/repository/repository.go`
/// `getHelmDependencyRepos` → `getHelmRepos`, then `helm repo add`), and
/// `helm dependency build` reads the name back from `repositories.yaml`
/// (helm `pkg/downloader/manager.go` `Manager.resolveRepoNames`: the first
/// repository so named). gitops-lint reads the same file, the user's own,
/// so a change can name a repository only by a name the user keeps; the
/// URL it stands for is trusted or not like any other.
fn repository_name(repo: &str) -> Option<&str> {
    repo.strip_prefix('@')
        .or_else(|| repo.strip_prefix("alias:"))
}

/// `tarFromLocalDir`: the `file://` chart `rel` of `chart`, if its version
/// satisfies `constraint` (the exact version of the lock file `lock`, when
/// there is one).
fn load_local(
    cx: &RenderContext<'_>,
    chart: &str,
    name: &str,
    repo: &str,
    rel: &str,
    constraint: &str,
    lock: Option<&str>,
) -> Result<LocalChart, RenderError> {
    let outside = |why: &str| RenderError {
        kind: RenderErrorKind::OutsideRepo,
        message: format!("chart dependency `{name}` is `{repo}`, {why}: {NOTHING_OUTSIDE}"),
        file: None,
        line: None,
    };
    // `resolver.GetLocalPath`: an absolute path is the machine's.
    if rel.starts_with('/') {
        return Err(outside("an absolute path on the machine"));
    }
    let dir =
        path::join(chart, rel).ok_or_else(|| outside("which leads outside the repository"))?;
    let chart_yaml = path::join(&dir, "Chart.yaml").unwrap_or_default();
    if cx.kind_of(&dir)? != Some(EntryKind::Dir)
        || cx.kind_of(&chart_yaml)? != Some(EntryKind::File)
    {
        return Err(RenderError::content(format!(
            "chart dependency `{name}` is `{repo}`, and `{}` holds no chart, so `helm dependency build` (which Argo CD runs) fails",
            super::super::display_path(&dir)
        )));
    }
    let docs = cx.load_yaml(&chart_yaml)?;
    let meta = docs
        .first()
        .map(|d| Value::clone(&d.value))
        .unwrap_or_default();
    let version_text = text(&meta, "version");
    let Ok(version) = Version::parse(version_text) else {
        return Err(RenderError::content(format!(
            "`{chart_yaml}`: version `{version_text}` is not a semantic version, so `helm dependency build` (which Argo CD runs) fails"
        ))
        .at(chart_yaml, None));
    };
    let Ok(c) = Constraint::parse(constraint) else {
        return Err(RenderError::content(format!(
            "chart dependency `{name}` has an invalid version constraint `{constraint}`, so `helm dependency build` (which Argo CD runs) fails"
        )));
    };
    if !c.check(&version) {
        let asks = match lock {
            Some(l) => format!("`{l}` pins chart dependency `{name}` at {constraint}"),
            None => format!("chart dependency `{name}` asks for version `{constraint}`"),
        };
        return Err(RenderError::content(format!(
            "{asks} and `{repo}` holds {version}: `helm dependency build` (which Argo CD runs) fails with \"can't get a valid version\""
        ))
        .at(chart_yaml, None));
    }
    let own_name = text(&meta, "name");
    if own_name != name {
        // helm template matches dependencies by the chart's own name.
        return Err(RenderError::content(format!(
            "chart dependency `{name}` is `{repo}`, whose chart is named `{own_name}`: helm still finds `{name}` missing after `helm dependency build`"
        ))
        .at(chart_yaml, None));
    }
    Ok(LocalChart {
        name: name.to_string(),
        alias: None,
        version: version_text.to_string(),
        dir,
    })
}

/// A file of a chart: its path relative to the chart, and its bytes.
pub(super) type ChartFile = (String, std::sync::Arc<[u8]>);

/// The files of the chart at `dir` that `loader.LoadDir` keeps (its
/// `.helmignore` and helm's default rule applied), as paths relative to
/// `dir`, read through `cx`, in `LoadDir`'s walk order (`filepath.Walk`:
/// depth first, names in order, symlinks followed as helm's
/// `sympath.Walk` follows them).
///
/// # Errors
/// Unreadable entries, or a `.helmignore` helm refuses.
pub(super) fn chart_files(
    cx: &RenderContext<'_>,
    dir: &str,
) -> Result<Vec<ChartFile>, RenderError> {
    let ignore_file = path::join(dir, ".helmignore").unwrap_or_default();
    let mut rules = if cx.kind_of(&ignore_file)? == Some(EntryKind::File) {
        let bytes = cx.read(&ignore_file)?;
        Ignore::parse(&String::from_utf8_lossy(&bytes)).map_err(|e| {
            RenderError::content(format!("`{ignore_file}`: {e}")).at(ignore_file, None)
        })?
    } else {
        Ignore::default()
    };
    rules.add("templates/.?*")?;
    let mut files = ChartWalk {
        cx,
        root: dir,
        rules: &rules,
        out: Vec::new(),
    };
    crate::source::walk::walk(cx.tree, dir, &mut files)?;
    Ok(files.out)
}

/// What [`chart_files`] collects while it walks a chart.
struct ChartWalk<'a, 'c> {
    cx: &'a RenderContext<'c>,
    root: &'a str,
    rules: &'a Ignore,
    out: Vec<ChartFile>,
}

impl crate::source::walk::Visitor for ChartWalk<'_, '_> {
    type Error = RenderError;

    fn list(
        &mut self,
        _: &dyn crate::source::Tree,
        dir: &str,
    ) -> Result<Option<Vec<crate::source::Entry>>, RenderError> {
        self.cx.list(dir).map(Some)
    }

    fn entry(
        &mut self,
        _: &str,
        full: &str,
        e: &crate::source::Entry,
    ) -> Result<crate::source::walk::Flow, RenderError> {
        use crate::source::walk::Flow;
        let rel = full
            .strip_prefix(self.root)
            .map_or(full, |r| r.trim_start_matches('/'));
        let kind = match e.kind {
            EntryKind::Symlink => self.cx.kind_of(full)?.unwrap_or(EntryKind::File),
            k => k,
        };
        Ok(match kind {
            EntryKind::Dir if !self.rules.ignores(rel, true) => Flow::Follow,
            EntryKind::File if !self.rules.ignores(rel, false) => {
                self.out.push((rel.to_string(), self.cx.read(full)?));
                Flow::Continue
            }
            _ => Flow::Skip,
        })
    }
}

/// One `.helmignore` rule.
#[derive(Debug, Clone)]
struct Rule {
    pattern: String,
    negate: bool,
    dir_only: bool,
    /// Matched against the whole relative path (it holds `/`), else
    /// against the base name.
    whole_path: bool,
}

/// `.helmignore` rules as helm `pkg/ignore/rules.go` applies them.
#[derive(Debug, Clone, Default)]
pub(super) struct Ignore {
    rules: Vec<Rule>,
}

impl Ignore {
    /// `ignore.Parse`: one rule a line; blank lines and `#` comments skipped.
    pub(super) fn parse(text: &str) -> Result<Ignore, String> {
        let mut r = Ignore::default();
        for line in text.trim_start_matches('\u{feff}').lines() {
            r.add_rule(line)?;
        }
        Ok(r)
    }

    /// `parseRule`.
    pub(super) fn add(&mut self, line: &str) -> Result<(), RenderError> {
        self.add_rule(line).map_err(RenderError::content)
    }

    fn add_rule(&mut self, line: &str) -> Result<(), String> {
        let rule = line.trim();
        if rule.is_empty() || rule.starts_with('#') {
            return Ok(());
        }
        if rule.contains("**") {
            return Err(format!(
                "rule `{rule}`: double-star (**) syntax is not supported"
            ));
        }
        if go_path_match(rule, "abc").is_none() {
            return Err(format!("rule `{rule}`: syntax error in pattern"));
        }
        let (negate, rule) = match rule.strip_prefix('!') {
            Some(r) => (true, r),
            None => (false, rule),
        };
        let (dir_only, rule) = match rule.strip_suffix('/') {
            Some(r) => (true, r),
            None => (false, rule),
        };
        let (whole_path, pattern) = match rule.strip_prefix('/') {
            Some(r) => (true, r),
            None => (rule.contains('/'), rule),
        };
        self.rules.push(Rule {
            pattern: pattern.to_string(),
            negate,
            dir_only,
            whole_path,
        });
        Ok(())
    }

    /// `Rules.Ignore`, including its reading of a negated rule: a path a
    /// `!rule` does not match is ignored.
    pub(super) fn ignores(&self, rel: &str, is_dir: bool) -> bool {
        for r in &self.rules {
            let name = if r.whole_path {
                rel
            } else {
                rel.rsplit('/').next().unwrap_or(rel)
            };
            let matched = go_path_match(&r.pattern, name) == Some(true);
            if r.negate {
                if (r.dir_only && !is_dir) || !matched {
                    return true;
                }
                continue;
            }
            if r.dir_only && !is_dir {
                continue;
            }
            if matched {
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignore(text: &str) -> Ignore {
        let mut r = Ignore::parse(text).unwrap_or_default();
        let _ = r.add("templates/.?*");
        r
    }

    #[test]
    fn helmignore_reads_as_helm_does() {
        let r = ignore("# comment\n*.md\nci/\n/secrets.yaml\n");
        assert!(r.ignores("README.md", false));
        assert!(r.ignores("docs/guide.md", false), "base name match");
        assert!(r.ignores("ci", true));
        assert!(!r.ignores("ci", false), "ci/ names directories only");
        assert!(r.ignores("secrets.yaml", false));
        assert!(
            r.ignores("templates/.hidden.yaml", false),
            "helm's default rule"
        );
        assert!(!r.ignores("templates/cm.yaml", false));
        // A negated rule ignores every path it does not match.
        let n = ignore("!keep.yaml\n");
        assert!(n.ignores("values.yaml", false));
        assert!(!n.ignores("keep.yaml", false));
        assert!(Ignore::parse("templates/**\n").is_err());
        assert!(Ignore::parse("[\n").is_err());
    }
}
