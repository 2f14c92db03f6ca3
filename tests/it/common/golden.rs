//! The golden cases of `testdata/cases/<CODE>-<name>/<case>/`: loading them,
//! committing their `base/` and `head/` trees into a real git repository,
//! and running gitops-lint on them in-process.
//!
//! `case.yaml` (optional): `proves` (one line), `command` (`diff`, the
//! default, or `check`, which uses only `head/`), `args` (`--all`), and
//! `config` (written as `.gitops-lint.yaml` into both trees), and `tags`
//! (lightweight tags created on the base commit, for `targetRevision` pins),
//! and `helm: true` (the case renders charts with the `helm` of PATH),
//! and `range` (what `diff` is given; default `main..change`).
//! A `target/` tree is committed on `main` after the head forked from the
//! base, as the target branch moves on while a pull request is open; with
//! `targetRemote: true` it is `origin/main`'s tip instead, the local `main`
//! left behind at the base.
//! A file named `x.symlink` becomes a symlink `x` whose target is its content.
//! Each directory `chart-cache/<chart>-<version>.tgz/` of a case becomes
//! that archive (of the directory's files, as `helm pull` writes one) in
//! `.chart-cache/` of the repository's working directory, outside its
//! commits: the case's `config` names it with `chartCache: .chart-cache`.
//! Each directory `charts/<chart>-<version>/` of a case becomes that archive
//! in a Helm repository the run fetches from, served on 127.0.0.1 for the
//! case (an `index.yaml` with each archive's digest); `CHART_REPO_URL` in
//! the case's files and `config` is its URL (`http://127.0.0.1:PORT/charts`,
//! written back as `CHART_REPO_URL` in the report).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use sha2::Digest as _;

use gitops_lint::lint::{self, Options, Revision};
use gitops_lint::report::json;
use gitops_lint::source::write_commit;
use serde_json::Value;

/// Every file under `root` (none when it does not exist), sorted.
fn files_or_none(root: &Path) -> Vec<(String, Vec<u8>)> {
    if root.exists() {
        super::files_of(root)
    } else {
        Vec::new()
    }
}

/// The `helm` binary on PATH, if any (v3.17.1 is the one Argo CD 3.0
/// ships, and the one `.ci/run` installs).
pub fn helm() -> Option<PathBuf> {
    gitops_lint::cli::find_on_path("helm")
}

/// One golden case.
pub struct Case {
    /// Its directory.
    pub dir: PathBuf,
    /// The rule code of its group (`GL001`), if the group is a rule's.
    pub rule: Option<String>,
    /// `group/case`.
    pub name: String,
    /// `case.yaml`, or null.
    pub meta: Value,
    /// The Helm repository serving the case's `charts/`, once started.
    pub charts: OnceLock<Option<super::chart_server::Server>>,
}

/// Every golden case, sorted by name.
pub fn cases() -> Vec<Case> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/cases");
    let mut out = Vec::new();
    for group in std::fs::read_dir(&root).expect("testdata/cases exists") {
        let group = group.expect("entry").path();
        if !group.is_dir() {
            continue;
        }
        let gname = group
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let rule = gname.starts_with("GL").then(|| gname[..5].to_string());
        for case in std::fs::read_dir(&group).expect("readable group") {
            let dir = case.expect("entry").path();
            if !dir.is_dir() {
                continue;
            }
            let meta = read_meta(&dir);
            let name = format!(
                "{gname}/{}",
                dir.file_name().unwrap_or_default().to_string_lossy()
            );
            out.push(Case {
                charts: OnceLock::new(),
                dir,
                rule: rule.clone(),
                name,
                meta,
            });
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Every case directly below `root` (named by its directory), sorted.
pub fn cases_in(root: &Path) -> Vec<Case> {
    let mut out: Vec<Case> = std::fs::read_dir(root)
        .expect("case directory exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|dir| dir.is_dir())
        .map(|dir| Case {
            charts: OnceLock::new(),
            meta: read_meta(&dir),
            name: dir
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned(),
            rule: None,
            dir,
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// `case.yaml` of a case, or null.
fn read_meta(dir: &Path) -> Value {
    match std::fs::read_to_string(dir.join("case.yaml")) {
        Ok(t) => goyaml::load_all(&t)
            .ok()
            .and_then(|d| d.into_iter().next())
            .map_or(Value::Null, |d| d.into_value()),
        Err(_) => Value::Null,
    }
}

/// A case committed into a repository: the commits of `base/` (branch
/// `main`, empty for `check` cases) and `head/` (branch `change`, or
/// `main` for `check` cases).
pub struct Committed {
    /// The base commit (empty for `check`): the target's tip when the
    /// case has a `target/` tree.
    pub base: String,
    /// The head commit.
    pub head: String,
    /// Where the head forked from the target (the `base/` commit), when
    /// the case has a `target/` tree; empty otherwise.
    pub fork: String,
    /// The URL `CHART_REPO_URL` stands for (empty without `charts/`).
    pub chart_repo: String,
}

impl Case {
    /// `diff` or `check`.
    pub fn command(&self) -> &str {
        self.meta
            .get("command")
            .and_then(Value::as_str)
            .unwrap_or("diff")
    }

    /// Whether `args` holds `--all`.
    pub fn all(&self) -> bool {
        self.meta
            .get("args")
            .and_then(Value::as_array)
            .is_some_and(|a| a.iter().any(|x| x.as_str() == Some("--all")))
    }

    /// Commits the case into a new repository at `repo`.
    ///
    /// # Errors
    /// Git failures, as text.
    pub fn commit(&self, repo: &Path) -> Result<Committed, String> {
        let chart_repo = self.chart_repo();
        let with_url = |files: Vec<(String, Vec<u8>)>| -> Vec<(String, Vec<u8>)> {
            if chart_repo.is_empty() {
                return files;
            }
            files
                .into_iter()
                .map(|(p, b)| match String::from_utf8(b) {
                    Ok(t) => (p, t.replace("CHART_REPO_URL", &chart_repo).into_bytes()),
                    Err(e) => (p, e.into_bytes()),
                })
                .collect()
        };
        let mut base = with_url(files_or_none(&self.dir.join("base")));
        let mut head = with_url(files_or_none(&self.dir.join("head")));
        if let Some(cfg) = self.meta.get("config") {
            let text = serde_json::to_string(cfg).map_err(|e| e.to_string())?;
            let text = if chart_repo.is_empty() {
                text
            } else {
                text.replace("CHART_REPO_URL", &chart_repo)
            };
            base.push((".gitops-lint.yaml".into(), text.clone().into_bytes()));
            head.push((".gitops-lint.yaml".into(), text.into_bytes()));
        }
        self.fill_chart_cache(repo)?;
        if self.command() == "check" {
            let h = write_commit(repo, "main", None, &head, "head").map_err(|e| e.to_string())?;
            return Ok(Committed {
                base: String::new(),
                head: h,
                fork: String::new(),
                chart_repo,
            });
        }
        let b = write_commit(repo, "main", None, &base, "base").map_err(|e| e.to_string())?;
        self.tag_base(repo, &b)?;
        let h =
            write_commit(repo, "change", Some("main"), &head, "head").map_err(|e| e.to_string())?;
        let target_dir = self.dir.join("target");
        if !target_dir.is_dir() {
            return Ok(Committed {
                base: b,
                head: h,
                fork: String::new(),
                chart_repo,
            });
        }
        let mut target = files_or_none(&target_dir);
        if let Some(cfg) = self.meta.get("config") {
            let text = serde_json::to_string(cfg).map_err(|e| e.to_string())?;
            target.push((".gitops-lint.yaml".into(), text.into_bytes()));
        }
        let tip = write_commit(repo, "main", None, &target, "target").map_err(|e| e.to_string())?;
        if self.meta.get("targetRemote").and_then(Value::as_bool) == Some(true) {
            let git = git2::Repository::open(repo).map_err(|e| e.to_string())?;
            let oid = |c: &str| git2::Oid::from_str(c).map_err(|e| e.to_string());
            git.reference("refs/remotes/origin/main", oid(&tip)?, true, "fetched")
                .map_err(|e| e.to_string())?;
            git.reference("refs/heads/main", oid(&b)?, true, "left behind")
                .map_err(|e| e.to_string())?;
        }
        Ok(Committed {
            base: tip,
            head: h,
            fork: b,
            chart_repo,
        })
    }

    /// The range `diff` is given: `range` of `case.yaml`, else `main..change`.
    pub fn range(&self) -> &str {
        self.meta
            .get("range")
            .and_then(Value::as_str)
            .unwrap_or("main..change")
    }

    /// The URL of the Helm repository serving the case's `charts/`,
    /// started on first use (empty when the case has none).
    pub fn chart_repo(&self) -> String {
        self.charts
            .get_or_init(|| {
                let src = self.dir.join("charts");
                src.is_dir().then(|| serve_charts(&src))
            })
            .as_ref()
            .map(|s| format!("{}/charts", s.url()))
            .unwrap_or_default()
    }

    /// Writes the case's `chart-cache/` archives into `repo/.chart-cache/`.
    fn fill_chart_cache(&self, repo: &Path) -> Result<(), String> {
        let src = self.dir.join("chart-cache");
        if !src.is_dir() {
            return Ok(());
        }
        let dest = repo.join(".chart-cache");
        std::fs::create_dir_all(&dest).map_err(|e| e.to_string())?;
        for e in std::fs::read_dir(&src).map_err(|e| e.to_string())? {
            let e = e.map_err(|e| e.to_string())?;
            let bytes = super::tgz(&super::files_of(&e.path()));
            std::fs::write(dest.join(e.file_name()), bytes).map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// Creates the `tags` of `case.yaml` on the base commit.
    fn tag_base(&self, dir: &Path, base: &str) -> Result<(), String> {
        let Some(tags) = self.meta.get("tags").and_then(Value::as_array) else {
            return Ok(());
        };
        let repo = git2::Repository::open(dir).map_err(|e| e.to_string())?;
        let oid = git2::Oid::from_str(base).map_err(|e| e.to_string())?;
        let commit = repo.find_object(oid, None).map_err(|e| e.to_string())?;
        for t in tags.iter().filter_map(Value::as_str) {
            repo.tag_lightweight(t, &commit, false)
                .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    /// The options a run of this case uses in the repository at `repo`:
    /// `--all` from `args` sets both `all` and `render_unchanged`, as on the
    /// command line.
    pub fn options(&self, repo: &Path) -> Options {
        let mut render = gitops_lint::render::RenderOptions::default();
        if self.needs_helm() {
            render.helm = helm();
        }
        if !self.chart_repo().is_empty() {
            // Fetched from the case's own repository, kept nowhere.
            let fetcher = gitops_lint::render::Fetcher::new(gitops_lint::render::FetchSettings {
                cache_dir: None,
                offline: false,
                credentials: Some(gitops_lint::render::Credentials::default()),
                timeout: Some(std::time::Duration::from_secs(20)),
            });
            render.chart_cache = Some(Arc::new(gitops_lint::render::ChartCache::with(
                None,
                "",
                Some(Arc::new(fetcher)),
            )));
        }
        Options {
            repo: Some(repo.to_path_buf()),
            all: self.all(),
            render_unchanged: self.all(),
            render,
            ..Options::default()
        }
    }

    /// Whether `case.yaml` says `helm: true`: the case renders charts
    /// with the `helm` of PATH, and cannot run without one.
    pub fn needs_helm(&self) -> bool {
        self.meta.get("helm").and_then(Value::as_bool) == Some(true)
    }

    /// Runs the case's command (already committed as `c` in the repository
    /// `opts.repo`) and returns the JSON report with commit ids replaced by
    /// `<base>` and `<head>`.
    ///
    /// # Errors
    /// A run that fails, as text.
    pub fn run(&self, c: &Committed, opts: &Options) -> Result<Value, String> {
        let report = if self.command() == "check" {
            lint::check(&Revision::Commit("main".into()), opts).map_err(|e| e.to_string())?
        } else {
            lint::diff(Some(self.range()), opts).map_err(|e| e.to_string())?
        };
        to_json(&report, c)
    }
}

/// The JSON contract of `report` with commit ids replaced by placeholders.
///
/// # Errors
/// Serialisation failures, as text.
pub fn to_json(report: &gitops_lint::report::Report, c: &Committed) -> Result<Value, String> {
    let text = serde_json::to_string_pretty(&json::to_value(report)).map_err(|e| e.to_string())?;
    let mut text = text.replace(&c.head, "<head>");
    if !c.chart_repo.is_empty() {
        text = text.replace(&c.chart_repo, "CHART_REPO_URL");
    }
    if !c.base.is_empty() {
        text = text.replace(&c.base, "<base>");
    }
    if !c.fork.is_empty() {
        // Notes name the merge base by its short id.
        text = text
            .replace(&c.fork, "<fork>")
            .replace(&c.fork[..c.fork.len().min(12)], "<fork>");
    }
    serde_json::from_str(&text).map_err(|e| e.to_string())
}

/// A Helm repository under `/charts` serving each `<chart>-<version>/`
/// directory of `src` as `<chart>-<version>.tgz`, with an `index.yaml`
/// giving each archive's digest.
fn serve_charts(src: &Path) -> super::chart_server::Server {
    use super::chart_server::{Request, Response, Server};
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    let mut entries: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(src)
        .expect("charts/ readable")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    for dir in dirs {
        let full = dir
            .file_name()
            .unwrap_or_default()
            .to_string_lossy()
            .into_owned();
        let (chart, version) = full.rsplit_once('-').expect("charts/<chart>-<version>/");
        // The archive holds the chart under its name, as `helm package`
        // writes it.
        let inner: Vec<(String, Vec<u8>)> = super::files_of(&dir)
            .into_iter()
            .map(|(p, b)| (format!("{chart}/{p}"), b))
            .collect();
        let archive = super::tgz(&inner);
        let digest: String = sha2::Sha256::digest(&archive)
            .iter()
            .map(|x| format!("{x:02x}"))
            .collect();
        entries.entry(chart.to_string()).or_default().push(format!(
            "  - name: {chart}\n    version: {version}\n    digest: {digest}\n    urls: [{full}.tgz]\n"
        ));
        files.insert(format!("/charts/{full}.tgz"), archive);
    }
    let mut index = String::from("apiVersion: v1\nentries:\n");
    for (chart, list) in entries {
        index.push_str(&format!("  {chart}:\n"));
        for e in list {
            index.push_str(&e);
        }
    }
    files.insert("/charts/index.yaml".to_string(), index.into_bytes());
    Server::start(move |r: &Request| match files.get(&r.path) {
        Some(b) => Response::ok(b.clone()),
        None => Response::status(404),
    })
}
