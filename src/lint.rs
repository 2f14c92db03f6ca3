//! The driver: wiring the stages for one request. Resolve revisions, read
//! configuration from the base, build both inventories, plan, run rules,
//! set findings aside (`suppress`), assemble the report (`report`, which
//! also anchors findings on files of the change).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::argocd::unchanged::{self, Deferral, SubtreeMemo};
use crate::argocd::{self, AppStatus, Inventory, InventoryInput, RepoIdentity};
use crate::config::{Config, ConfigError, CONFIG_FILE};
use crate::finding::Finding;
use crate::local_files;
use crate::plan;
use crate::render::{ParseCache, RenderOptions};
use crate::report::Report;
use crate::rules::{self, RuleContext};
use crate::source::{self, GitRepo, Judged, RepoError, Tree};
use crate::suppress;

/// Why a request could not be carried out: a request to change (exit
/// status 2, [`LintError::is_usage`]) or a run that failed (exit status 4).
#[derive(Debug, thiserror::Error)]
pub enum LintError {
    /// Repository or revision problems.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// Bad configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// A request that cannot be carried out as made (a path, a name, an
    /// option), already phrased for the user: the command line or the
    /// configuration must change.
    #[error("{0}")]
    Usage(String),
    /// A run that failed on what it read or on the machine (a damaged
    /// repository, a budget exceeded, a render failure), already phrased
    /// for the user.
    #[error("{0}")]
    Other(String),
}

impl LintError {
    /// Whether the person running gitops-lint fixes this by changing the
    /// command line, the configuration or the checkout (exit status 2),
    /// rather than a run that failed on its input or the machine (4).
    #[must_use]
    pub fn is_usage(&self) -> bool {
        match self {
            LintError::Config(_) | LintError::Usage(_) => true,
            LintError::Repo(e) => e.is_usage(),
            LintError::Other(_) => false,
        }
    }
}

/// Which tree `check` and `render` read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Revision {
    /// The working directory.
    Worktree,
    /// The staged index.
    Index,
    /// A commit (any revspec).
    Commit(String),
}

impl Revision {
    /// Parses `WORKTREE`, `INDEX` or a revspec.
    #[must_use]
    pub(crate) fn parse(s: Option<&str>) -> Revision {
        match s {
            None | Some("WORKTREE") => Revision::Worktree,
            Some("INDEX") => Revision::Index,
            Some(r) => Revision::Commit(r.to_string()),
        }
    }
}

/// Options shared by the commands.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Where to look for the repository (searching upward).
    pub repo: Option<PathBuf>,
    /// An explicit configuration file on disk (otherwise read from the base revision).
    pub config: Option<PathBuf>,
    /// Report single-revision findings on all resources, not only changed ones.
    pub all: bool,
    /// In a diff, render apps whose inputs are identical at both revisions
    /// too (`all` implies it: every resource is then examined).
    pub render_unchanged: bool,
    /// Render settings.
    pub render: RenderOptions,
    /// Told the stage a long run is in (for a progress indicator).
    pub progress: Progress,
    /// When set, filled with counts of the work the run did.
    pub stats: Option<Arc<Mutex<RunStats>>>,
    /// In a diff, the directory where facts about content (which blobs may
    /// declare Argo CD objects, which subtrees are plain) are kept between
    /// runs, keyed by object id and by the binary ([`source::facts`]);
    /// `None` keeps nothing. Never inside the repository.
    pub cache_dir: Option<PathBuf>,
    /// The process ends once the report is written (the command line):
    /// what a run built is then left to the operating system to reclaim,
    /// not freed piece by piece.
    pub exit_after: bool,
    /// Whether a diff whose head is the checked-out commit looks at the
    /// working tree for edits it leaves out.
    pub uncommitted: Uncommitted,
    /// What a diff does about the rendered diff (docs/rendered-diff.md).
    pub diff: DiffRequest,
    /// What a diff judges of its head commit.
    pub judge: Judge,
}

/// The command line's say on the rendered diff of a `diff`.
#[derive(Debug, Clone, Default)]
pub struct DiffRequest {
    /// Whether it is computed (`--diff`, `--no-diff`); `None`: as the
    /// configuration's `diff.show` says (on by default).
    pub show: Option<bool>,
    /// Lines of context (`--diff-context`); `None`: the configuration's
    /// `diff.context`.
    pub context: Option<usize>,
    /// Deleted apps' resources listed without their bodies
    /// (`--diff-hide-deleted`), besides the configuration's `diff.hideDeleted`.
    pub hide_deleted: bool,
    /// Where the changed resources of each changed app are written at
    /// both revisions (`--rendered-dir`): `DIR/base/<app>/…` and
    /// `DIR/head/<app>/…`. Never inside the repository, never a symlink.
    pub rendered_dir: Option<PathBuf>,
    /// Regular expressions of changed lines that are no change
    /// (`--diff-ignore`), besides the configuration's `diff.ignoreLines`.
    pub ignore_lines: Vec<String>,
    /// Globs of the app names diffed (`--diff-app`); they replace the
    /// configuration's `diff.apps`.
    pub apps: Vec<String>,
}

/// What a diff judges of its head commit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Judge {
    /// Its merge into the base's tip (a fast-forward: the head itself).
    #[default]
    Merge,
    /// The head as it is (`--no-merge`): `A..B` compares B with A, `A...B`
    /// B with their merge base.
    AsIs,
}

/// What a diff whose head is the checked-out commit does about edits not
/// committed. Looking for them is a status of the whole working tree
/// (every file's metadata, every directory listed for untracked files):
/// about a second at 100,000 files, more than the rest of a warm one-app
/// diff. The command line does not look in CI, where the checkout is the
/// commit the diff reads.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Uncommitted {
    /// Looked for, and named in a note.
    #[default]
    Said,
    /// Not looked for.
    NotLookedFor,
}

/// How much work one run did: what the performance model promises is
/// checked against these (each blob read and parsed at most once, unchanged
/// apps not rendered again).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunStats {
    /// Blobs read from the git object database.
    pub blob_reads: usize,
    /// Tree objects decoded (each once per run; a subtree whose size an
    /// earlier run kept is decoded only where it is read).
    pub trees_decoded: usize,
    /// Blobs parsed as YAML.
    pub parses: usize,
    /// Bytes of YAML parsed.
    pub(crate) parsed_bytes: usize,
    /// Apps rendered at the base revision (diff only).
    pub base_renders: usize,
    /// Apps rendered at head (the only revision in `check`).
    pub head_renders: usize,
    /// Apps at head whose base render was reused.
    pub head_reuses: usize,
    /// Apps with created or changed resources in the plan.
    pub changed_apps: usize,
    /// Apps rendered at neither revision because their inputs are identical.
    pub unchanged: usize,
    /// Facts about content read from the cache directory (diff only).
    pub facts_loaded: usize,
    /// Facts about content computed by this run (diff only).
    pub facts_learned: usize,
    /// `helm template` runs (charts rendered with the helm binary).
    pub helm_runs: usize,
    /// Blobs whose parse was taken from the cache directory instead of
    /// being read and parsed (diff only).
    pub kept_parses: usize,
    /// Values of those parses read whole ([`goyaml::json::LazyValue`]):
    /// most are only asked a few fields (diff only; counted in the
    /// process, so a caller running diffs side by side sees them summed).
    pub decoded_values: usize,
}

impl std::fmt::Display for RunStats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} blobs read, {} trees decoded, {} parsed ({} KiB), apps rendered {} at base and {} at head, {} reused at head, {} unchanged (not rendered), {} with changes",
            self.blob_reads,
            self.trees_decoded,
            self.parses,
            self.parsed_bytes / 1024,
            self.base_renders,
            self.head_renders,
            self.head_reuses,
            self.unchanged,
            self.changed_apps
        )?;
        if self.helm_runs > 0 {
            write!(f, ", {} helm runs", self.helm_runs)?;
        }
        if self.facts_loaded + self.facts_learned > 0 {
            write!(
                f,
                ", {} facts from the cache and {} learned",
                self.facts_loaded, self.facts_learned
            )?;
        }
        if self.kept_parses > 0 {
            write!(
                f,
                ", {} parses from the cache ({} values of them read whole)",
                self.kept_parses, self.decoded_values
            )?;
        }
        Ok(())
    }
}

/// How many times this run has started helm.
fn helm_runs(opts: &Options) -> usize {
    opts.render
        .helm_runs
        .load(std::sync::atomic::Ordering::Relaxed)
}

fn record_stats(opts: &Options, fill: impl FnOnce(&mut RunStats)) {
    if let Some(s) = &opts.stats {
        fill(&mut s.lock().unwrap_or_else(std::sync::PoisonError::into_inner));
    }
}

/// The function a [`Progress`] calls with each stage's name.
type StageFn = dyn Fn(&str) + Send + Sync;

/// A callback told which stage a run is in; does nothing by default.
#[derive(Clone, Default)]
pub struct Progress(Option<Arc<StageFn>>);

impl std::fmt::Debug for Progress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "Progress(on)"
        } else {
            "Progress(off)"
        })
    }
}

impl Progress {
    /// A progress callback.
    #[must_use]
    pub(crate) fn new(f: impl Fn(&str) + Send + Sync + 'static) -> Progress {
        Progress(Some(Arc::new(f)))
    }

    /// Reports the stage now starting.
    pub(crate) fn step(&self, stage: &str) {
        if let Some(f) = &self.0 {
            f(stage);
        }
    }
}

/// Opens the repository for `opts`.
///
/// # Errors
/// Not a repository.
pub(crate) fn open_repo(opts: &Options) -> Result<GitRepo, LintError> {
    let start = match &opts.repo {
        Some(p) => p.clone(),
        None => std::env::current_dir()
            .map_err(|e| LintError::Other(format!("cannot read the current directory: {e}")))?,
    };
    Ok(GitRepo::discover(&start)?)
}

fn tree_of(repo: &GitRepo, rev: &Revision) -> Result<(String, Arc<dyn Tree>), LintError> {
    Ok(match rev {
        Revision::Worktree => ("WORKTREE".to_string(), repo.worktree()?),
        Revision::Index => ("INDEX".to_string(), repo.index_tree()?),
        Revision::Commit(r) => {
            let c = repo.resolve_commit(r)?;
            let t = repo.commit_tree(&c)?;
            (c, t)
        }
    })
}

/// Loads configuration: an explicit file, else `.gitops-lint.yaml` in `tree`.
///
/// # Errors
/// An unreadable or invalid file.
pub fn load_config(explicit: Option<&Path>, tree: &dyn Tree) -> Result<Config, LintError> {
    if let Some(p) = explicit {
        let text = std::fs::read_to_string(p)
            .map_err(|e| LintError::Usage(format!("cannot read config {}: {e}", p.display())))?;
        return Ok(Config::parse(
            &p.display().to_string(),
            &text,
            &rules::catalog(),
        )?);
    }
    match source::read(tree, CONFIG_FILE) {
        Ok(bytes) => {
            let text = String::from_utf8_lossy(&bytes);
            Ok(Config::parse(CONFIG_FILE, &text, &rules::catalog())?)
        }
        Err(source::SourceError::NotFound(_)) => {
            // A configuration under another spelling would be silently
            // unused: the rules it switches and the URLs it names would not
            // apply, and nothing would say so.
            if let Some(other) = misnamed_config(tree) {
                return Err(LintError::Usage(format!(
                    "{other} is not read: gitops-lint reads its configuration from {CONFIG_FILE}; rename the file (or name it with --config)"
                )));
            }
            Ok(Config::default())
        }
        Err(e) => Err(LintError::Usage(format!("cannot read {CONFIG_FILE}: {e}"))),
    }
}

/// A configuration file of `tree` under a name gitops-lint does not read
/// (when `.gitops-lint.yaml` is absent).
fn misnamed_config(tree: &dyn Tree) -> Option<&'static str> {
    [
        ".gitops-lint.yml",
        "gitops-lint.yaml",
        ".gitops-lint.yaml.yaml",
    ]
    .into_iter()
    .find(|other| source::read(tree, other).is_ok())
}

/// Loads the configuration a diff is judged by, from the base revision's
/// tree: `.gitops-lint.yaml`, or the file `--config` names, which must be a
/// repository path (relative to the current directory, or absolute inside
/// the working tree) reached without a symlink. A pull request controls its
/// checkout, so nothing is read from disk: the change cannot swap the file,
/// and no file outside the repository is read (or quoted in an error).
///
/// # Errors
/// A path outside the repository, through a symlink, missing at base, or invalid.
fn load_base_config(
    repo: &GitRepo,
    explicit: Option<&Path>,
    base: &dyn Tree,
    base_label: &str,
) -> Result<(Config, String), LintError> {
    let Some(p) = explicit else {
        return Ok((load_config(None, base)?, CONFIG_FILE.to_string()));
    };
    let rel = repo_relative(repo, p).ok_or_else(|| {
        LintError::Usage(format!(
            "--config {}: not a file of this repository; in `diff` the configuration is read from the base revision, so name a file committed there",
            p.display()
        ))
    })?;
    let mut prefix = String::new();
    for part in rel.split('/') {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(part);
        let entry = base.entry(&prefix).map_err(|e| {
            LintError::Usage(format!(
                "--config {rel}: cannot read the base revision: {e}"
            ))
        })?;
        match entry.map(|e| e.kind) {
            None => {
                return Err(LintError::Usage(format!(
                    "--config {rel}: no such file in the base revision {}; in `diff` the configuration is read from the base revision, so commit it there first",
                    short_rev(base_label)
                )))
            }
            Some(source::EntryKind::Symlink) => {
                return Err(LintError::Usage(format!(
                    "--config {rel}: `{prefix}` is a symlink in the base revision; name the file itself"
                )))
            }
            Some(source::EntryKind::Submodule) => {
                return Err(LintError::Usage(format!(
                    "--config {rel}: `{prefix}` is a git submodule, whose content is not in this repository"
                )))
            }
            Some(source::EntryKind::Dir) if prefix == rel => {
                return Err(LintError::Usage(format!(
                    "--config {rel}: is a directory in the base revision; name a YAML file"
                )))
            }
            Some(source::EntryKind::Dir | source::EntryKind::File) => {}
        }
    }
    let bytes = base
        .read_raw(&rel)
        .map_err(|e| LintError::Usage(format!("--config {rel}: {e}")))?;
    let text = String::from_utf8_lossy(&bytes);
    Ok((Config::parse(&rel, &text, &rules::catalog())?, rel))
}

/// The facts kept in `dir`, refused when `dir` is inside the repository's
/// work tree or git directory (the cache would then be content of the
/// repository it describes, or be removed with it). Both sides are
/// compared as the system reaches them ([`local_files::resolved`]): a
/// `missing/../repo/cache` or a symlink into `.git` names the repository.
fn open_facts(repo: &GitRepo, dir: &Path) -> Result<source::facts::Facts, LintError> {
    let abs = local_files::resolved(dir);
    let inside = |root: &Path| abs.starts_with(local_files::resolved(root));
    if repo.workdir().is_some_and(inside) || inside(repo.git_dir()) {
        return Err(LintError::Usage(format!(
            "--cache-dir {}: is inside the repository; name a directory outside it (the default is $XDG_CACHE_HOME/gitops-lint), or pass --no-cache",
            crate::report::printable(&dir.display().to_string(), false)
        )));
    }
    Ok(source::facts::Facts::open(&abs))
}

/// Writes the changed resources of each changed app, as the rendered diff
/// compares them (canonical YAML, secrets masked), to `DIR/base/<app>/…`
/// and `DIR/head/<app>/…` (the paths of `--format diff`). `DIR` must be
/// outside the repository (a pull request must not write into its own
/// checkout), not a symlink, and absent or empty (no file of an earlier
/// run is mistaken for this one's); every file is written without
/// following a symlink.
fn write_rendered(
    repo: &GitRepo,
    dir: &Path,
    d: &crate::rendered_diff::RenderedDiff,
) -> Result<(), LintError> {
    let shown = crate::report::printable(&dir.display().to_string(), false);
    // A directory that cannot be used as named is the command line's to
    // change (exit 2); a write that fails is the run's (exit 4).
    let refuse = |why: &str| LintError::Usage(format!("--rendered-dir {shown}: {why}"));
    let fail = |why: String| LintError::Other(format!("--rendered-dir {shown}: {why}"));
    let abs = local_files::resolved(dir);
    let inside = |root: &Path| abs.starts_with(local_files::resolved(root));
    if repo.workdir().is_some_and(inside) || inside(repo.git_dir()) {
        return Err(refuse(
            "is inside the repository; name a directory outside it",
        ));
    }
    match std::fs::symlink_metadata(dir) {
        Ok(m) if m.file_type().is_symlink() => {
            return Err(refuse("is a symlink; name the directory itself"))
        }
        Ok(m) if !m.is_dir() => return Err(refuse("is not a directory")),
        Ok(_) => {
            let mut entries = std::fs::read_dir(dir).map_err(|e| fail(e.to_string()))?;
            if entries.next().is_some() {
                return Err(refuse("is not empty; name a new or empty directory"));
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(fail(e.to_string())),
    }
    for app in &d.apps {
        for res in &app.resources {
            let path = crate::rendered_diff::resource_path(&app.app, &res.id);
            for (side, text) in [("base", &res.base), ("head", &res.head)] {
                let Some(text) = text else { continue };
                let file = dir.join(side).join(&path);
                if let Some(parent) = file.parent() {
                    std::fs::create_dir_all(parent).map_err(|e| fail(e.to_string()))?;
                }
                local_files::write_output(&file, text.as_bytes())
                    .map_err(|e| fail(format!("{}: {e}", file.display())))?;
            }
        }
    }
    Ok(())
}

/// Opens the facts of `--cache-dir` (unless `--no-cache`) for `repo`, so
/// that the trees it indexes and the diff it runs both use them.
fn keep_facts(repo: &GitRepo, opts: &Options) -> Result<(), LintError> {
    if let Some(dir) = &opts.cache_dir {
        repo.keep_facts(Arc::new(open_facts(repo, dir)?));
    }
    Ok(())
}

/// `p` as a path inside the repository, without following any symlink on
/// disk (the tree is what is read); `None` when it is outside.
fn repo_relative(repo: &GitRepo, p: &Path) -> Option<String> {
    let root = repo.workdir()?;
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().ok()?.canonicalize().ok()?.join(p)
    };
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    let rel = out.strip_prefix(&root).ok()?.to_str()?.replace('\\', "/");
    (!rel.is_empty()).then_some(rel)
}

fn short_rev(rev: &str) -> &str {
    rev.get(..12).filter(|_| rev.len() == 40).unwrap_or(rev)
}

struct Session<'a> {
    repo: &'a GitRepo,
    cache: ParseCache,
    identity: RepoIdentity,
    render: RenderOptions,
    /// Root files built as Argo CD instances of their own (their trees
    /// collide with another root's at either revision).
    split: BTreeSet<String>,
}

/// How many times the inventories are built again with more colliding
/// roots split off: each build splits every collision it sees, so a second
/// build settles all but roots that only collide once split.
const MAX_SPLIT_BUILDS: usize = 3;

/// Roots of `invs` that collide and are not split yet.
fn new_collisions(split: &BTreeSet<String>, invs: &[&Inventory]) -> BTreeSet<String> {
    invs.iter()
        .flat_map(|i| &i.colliding_roots)
        .filter(|f| !split.contains(*f))
        .cloned()
        .collect()
}

/// Says which roots are analysed as instances of their own: those of the
/// split files that are roots at either revision (a file split off before
/// the tree that renders it was analysed is a part of that tree).
fn split_note(split: &BTreeSet<String>, invs: &[&Inventory]) -> Option<String> {
    let split: BTreeSet<&String> = invs
        .iter()
        .flat_map(|i| &i.roots)
        .filter(|f| split.contains(*f))
        .collect();
    (!split.is_empty()).then(|| {
        format!(
            "{} root file(s) render Applications or ApplicationSets of the same name differently, so each is analysed as its own Argo CD instance (its apps shown as `name@file`): {}; if one Argo CD applies them, group them with `instances:` in {CONFIG_FILE}",
            split.len(),
            split.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
        )
    })
}

/// The render settings with any tool that lives inside the repository's
/// working directory dropped: a pull request could have put it there (a
/// `bin/helm` reached through `PATH`), and nothing from the repository runs.
fn tools_outside(repo: &GitRepo, render: &RenderOptions) -> RenderOptions {
    let mut out = render.clone();
    let Some(root) = repo.workdir().and_then(|w| w.canonicalize().ok()) else {
        return out;
    };
    let inside = |p: &Path| p.canonicalize().is_ok_and(|c| c.starts_with(&root));
    if out.helm.as_deref().is_some_and(inside) {
        out.helm = None;
    }
    out
}

/// `render` with the configuration's `chartCache` and `helmRenderer` when
/// the command line named none. A relative directory is taken from the repository's root:
/// the configuration's paths are the repository's, and CI fills the cache
/// from the checkout (`helm pull -d DIR`).
fn with_chart_cache(repo: &GitRepo, mut render: RenderOptions, config: &Config) -> RenderOptions {
    // The command line's `--helm-renderer` wins over `helmRenderer`.
    if render.helm_renderer.is_none() {
        render.helm_renderer = config.helm_renderer;
    }
    // The native Helm renderer renders as the helm of the target Argo CD.
    if render.argocd_version.is_none() {
        render.argocd_version = Some(config.argocd_version);
    }
    // A run's own state (what its base names) over the command line's
    // settings. While the run fetches, `chartCache` is not read: it lies in
    // the checkout, where a pull request could have planted archives, and
    // fetched charts are kept by identity instead.
    if let Some(c) = &render.chart_cache {
        let fresh = c.fresh();
        fresh.configure(&config.chart_repositories);
        render.chart_cache = Some(Arc::new(fresh));
        return render;
    }
    let Some(dir) = &config.chart_cache else {
        return render;
    };
    let path = Path::new(dir);
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match repo.workdir() {
            Some(root) => root.join(path),
            None => return render,
        }
    };
    let cache = crate::render::chart_cache::ChartCache::new(full, dir);
    cache.configure(&config.chart_repositories);
    render.chart_cache = Some(Arc::new(cache));
    render
}

impl<'a> Session<'a> {
    /// A session over `repo` for one revision (`check`, `render --app`).
    fn new(repo: &'a GitRepo, config: &Config, opts: &Options) -> Session<'a> {
        Session {
            repo,
            cache: ParseCache::default(),
            identity: RepoIdentity::new(&repo.remote_urls(), config, repo.head_branch().as_deref()),
            render: with_chart_cache(repo, tools_outside(repo, &opts.render), config),
            split: BTreeSet::new(),
        }
    }
    fn inventory(
        &self,
        tree: Arc<dyn Tree>,
        config: &Config,
        reuse: Option<&Inventory>,
        defer: Option<Deferral>,
    ) -> Result<Inventory, LintError> {
        let inv = self.with_input(tree, config, reuse, defer, argocd::build);
        match inv.over_limit {
            // Every app of this revision is unknown: comparing would be a guess.
            Some(why) => Err(LintError::Other(format!(
                "revision {}: {why}",
                inv.revision
            ))),
            None => match argocd::only_foreign_repos(&inv, &self.identity) {
                Some(urls) => Err(self.foreign_repos_error(&inv, &urls, config)),
                None => Ok(inv),
            },
        }
    }

    /// Why a revision whose Applications all name other repositories is
    /// refused: nothing would be rendered, and a report of no findings would
    /// look like a change that deletes nothing.
    fn foreign_repos_error(&self, inv: &Inventory, urls: &[String], config: &Config) -> LintError {
        let quote = |v: &[String]| {
            v.iter()
                .map(|u| format!("`{u}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let remotes = self.repo.remote_urls();
        let known = match (remotes.is_empty(), config.repo_urls.is_empty()) {
            (true, _) => format!("`repoUrls` {}", quote(&config.repo_urls)),
            (false, true) => format!("the git remotes {}", quote(&remotes)),
            (false, false) => format!(
                "the git remotes {} and `repoUrls` {}",
                quote(&remotes),
                quote(&config.repo_urls)
            ),
        };
        LintError::Usage(format!(
            "revision {}: no Application renders from this repository, so nothing can be linted: \
             they name {} and this repository is known as {known}. If those URLs name this \
             repository (a fork, a mirror, another hostname, a CI checkout), list them in \
             {CONFIG_FILE} at the base revision, e.g. `repoUrls: [{}]`",
            inv.revision,
            quote(urls),
            urls.first().map(String::as_str).unwrap_or_default()
        ))
    }

    /// The inventory of one revision (`check`, `render --app`) that `build`
    /// makes, built again with colliding roots split off until none is left
    /// (bounded); a note says which roots were split.
    fn single_inventory(
        &mut self,
        build: impl Fn(&Self) -> Result<Inventory, LintError>,
    ) -> Result<Inventory, LintError> {
        let mut inv = build(self)?;
        for _ in 0..MAX_SPLIT_BUILDS {
            let more = new_collisions(&self.split, &[&inv]);
            if more.is_empty() {
                break;
            }
            self.split.extend(more);
            inv = build(self)?;
        }
        let note = split_note(&self.split, &[&inv]);
        inv.notes.extend(note);
        Ok(inv)
    }

    /// Calls `f` with what building an inventory of `tree` needs.
    fn with_input<R>(
        &self,
        tree: Arc<dyn Tree>,
        config: &Config,
        reuse: Option<&Inventory>,
        defer: Option<Deferral>,
        f: impl FnOnce(&InventoryInput<'_>) -> R,
    ) -> R {
        let repo = self.repo;
        // Another branch is its own commit, read as Argo CD reads it: from
        // the remote (`nativeGitClient.lsRemote`), so the remote-tracking
        // branch a local one follows comes first.
        let tree_at = move |rev: &str| -> Option<Arc<dyn Tree>> {
            let c = repo
                .tracked_by(rev)
                .and_then(|r| repo.resolve_commit(&r).ok())
                .map_or_else(
                    || {
                        repo.resolve_commit(rev)
                            .or_else(|_| repo.resolve_commit(&format!("origin/{rev}")))
                    },
                    Ok,
                )
                .ok()?;
            repo.commit_tree(&c).ok()
        };
        let input = InventoryInput {
            tree,
            cache: &self.cache,
            render_options: &self.render,
            config,
            repo: &self.identity,
            tree_at: &tree_at,
            reuse,
            defer,
            split: &self.split,
        };
        let out = f(&input);
        // The footprints of a large fleet's kustomizations take a few
        // milliseconds to free: done beside the rest of the run.
        if let Some(defer) = input.defer {
            drop_beside(defer);
        }
        out
    }

    /// Renders the apps one revision deferred and the other did not confirm
    /// unchanged; returns how many stay unrendered at both.
    fn settle(
        &self,
        (base_tree, base_inv): (&Arc<dyn Tree>, &mut Inventory),
        (head_tree, head_inv): (&Arc<dyn Tree>, &mut Inventory),
        config: &Config,
    ) -> usize {
        self.with_input(Arc::clone(base_tree), config, None, None, |bi| {
            self.with_input(Arc::clone(head_tree), config, None, None, |hi| {
                unchanged::settle(base_inv, head_inv, bi, hi)
            })
        })
    }

    /// Renders the apps left unchanged at both revisions, at base, and gives
    /// head the same render: for rules that must see every resource.
    fn render_unchanged(
        &self,
        (base_tree, base_inv): (&Arc<dyn Tree>, &mut Inventory),
        head_inv: &mut Inventory,
        config: &Config,
    ) {
        let keys: Vec<String> = base_inv
            .apps
            .values()
            .filter(|a| matches!(a.status, AppStatus::Unchanged))
            .map(|a| a.key.clone())
            .collect();
        self.with_input(Arc::clone(base_tree), config, None, None, |bi| {
            unchanged::render_now(base_inv, bi, &keys);
        });
        for key in keys {
            let (Some(b), Some(h)) = (base_inv.apps.get(&key), head_inv.apps.get_mut(&key)) else {
                continue;
            };
            h.status = b.status.clone();
            h.resources.clone_from(&b.resources);
            h.inputs = b.inputs.clone();
            h.source_types.clone_from(&b.source_types);
            h.plugins.clone_from(&b.plugins);
            head_inv.reused.insert(key);
        }
    }
}

/// `gitops-lint diff`: what merging `range` would make Argo CD delete and wedge.
///
/// # Errors
/// Unusable requests (exit status 2).
pub fn diff(range: Option<&str>, opts: &Options) -> Result<Report, LintError> {
    opts.progress.step("resolving revisions");
    let repo = open_repo(opts)?;
    keep_facts(&repo, opts)?;
    let spec = range;
    let (git_spec, live_head) = split_live_head(spec);
    let merged = opts.judge == Judge::Merge;
    let mut range = repo
        .resolve_range(git_spec.as_deref(), merged)
        .map_err(|e| ci_advice(&repo, e))?;
    let head_name = head_name(&range.spec);
    let base_name = range.base_name.clone();
    let mut revision_notes = std::mem::take(&mut range.notes);
    if merged && live_head.is_some() {
        // Edits not yet committed cannot be merged: they are compared as
        // the range has always compared them, and a note says what the
        // base's tip has that they lack.
        let fork = repo
            .merge_base(&range.base, &range.head, &range.spec)
            .map_err(|e| ci_advice(&repo, e))?;
        if fork != range.base {
            revision_notes.push(format!(
                "`{base_name}` has commits that `HEAD` does not, and edits not yet committed cannot be merged: they are compared as they are; commit them and run `gitops-lint diff {base_name}..HEAD` to judge their merge into `{base_name}`"
            ));
            if range.spec.contains("...") {
                range.base = fork;
            }
        }
    }
    let judge = |r: &source::RevisionRange| -> Result<Judged, LintError> {
        if !merged || live_head.is_some() {
            return Ok(Judged::Head);
        }
        Ok(repo.judge_merge(&r.base, &r.head, (&r.spec, &base_name, &head_name))?)
    };
    let (base_tree, judged) = rayon::join(|| repo.commit_tree(&range.base), || judge(&range));
    let (base_tree, judged) = (base_tree?, judged?);
    let mut merge_row = None;
    let mut fork_of_merge = None;
    let head_tree = match (judged, &live_head) {
        (_, Some(rev)) => tree_of(&repo, rev)?.1,
        (Judged::Head, None) => repo.commit_tree(&range.head)?,
        (Judged::AlreadyMerged, None) => {
            revision_notes.push(format!(
                "`{head_name}` is already part of `{base_name}`: merging it changes nothing, so there is nothing to judge (--no-merge compares `{head_name}` as it is with `{base_name}`)"
            ));
            Arc::clone(&base_tree)
        }
        (Judged::Merge(m), None) => {
            revision_notes.insert(
                0,
                format!(
                    "judged: the merge of `{head_name}` into `{base_name}` (merge base `{}`, tree `{}`), with what `{base_name}` gained since the change forked from it; --no-merge judges `{head_name}` as it is",
                    &m.merge_base[..m.merge_base.len().min(12)],
                    &m.tree_id[..m.tree_id.len().min(12)],
                ),
            );
            fork_of_merge = Some(m.merge_base.clone());
            merge_row = Some(crate::report::Merged {
                merge_base: m.merge_base,
                tree: m.tree_id,
            });
            m.tree
        }
    };
    let head_label = match &live_head {
        Some(rev) => tree_label(rev),
        None => range.head.clone(),
    };
    let target = target_branch(&repo, &range.spec);
    // Trailers come from the commits of the range; edits not yet committed
    // have no message.
    let messages = repo.commit_messages(&range.base, &range.head)?;
    let mut report = diff_trees(
        &repo,
        (&range.base, base_tree),
        (&head_label, head_tree),
        target.as_deref(),
        &messages,
        opts,
    )?;
    if let Some(fork) = &fork_of_merge {
        let alone = diff_trees(
            &repo,
            (fork, repo.commit_tree(fork)?),
            (&range.head, repo.commit_tree(&range.head)?),
            target.as_deref(),
            &messages,
            &alone_options(opts),
        )?;
        mark_from_merge(&mut report, &alone, &base_name);
    }
    intact(&repo)?;
    if let (Some(dir), Some(d)) = (&opts.diff.rendered_dir, &report.diff) {
        write_rendered(&repo, dir, d)?;
    }
    report.merge = merge_row;
    // Said first, and on stderr too: which revisions were judged.
    report.warnings.clone_from(&revision_notes);
    revision_notes.append(&mut report.notes);
    report.notes = revision_notes;
    if live_head.is_none() {
        report
            .notes
            .extend(range_notes(&repo, &range, opts.uncommitted));
    }
    if spec.is_none() {
        let detached = if repo.head_branch().is_none() {
            " (HEAD is detached, as in CI checkouts; pass a range to choose the base)"
        } else {
            ""
        };
        report.notes.insert(
            0,
            format!("no range given: comparing `{}`{detached}", range.spec),
        );
    }
    // Its blob cache holds every file read: free it beside the output.
    drop_beside(repo);
    Ok(report)
}

/// The options of the second analysis a judged merge needs: the change
/// alone against its fork point, for its findings only (no rendered diff,
/// no statistics, no progress, freed when done).
fn alone_options(opts: &Options) -> Options {
    let mut alone = opts.clone();
    alone.diff = DiffRequest {
        show: Some(false),
        ..DiffRequest::default()
    };
    alone.stats = None;
    alone.progress = Progress::default();
    alone.exit_after = false;
    alone
}

/// Marks the findings of a judged merge that the change alone (its head
/// against the fork point, as `--no-merge` with `A...B` judges it) does
/// not have: they exist only because of what `target` gained since the
/// change forked. A finding is the same when its rule, app and resource
/// are (its message may count differently in the two views).
fn mark_from_merge(merged: &mut Report, alone: &Report, target: &str) {
    let key = |f: &Finding| (f.rule.code, f.app.clone(), f.resource.clone());
    let own: std::collections::HashSet<_> = alone.findings.iter().map(key).collect();
    for f in &mut merged.findings {
        if !own.contains(&key(f)) {
            f.from_merge = true;
            f.message = format!("{} (from the merge with `{target}`)", f.message);
        }
    }
}

/// The name of a range's head as the user wrote it (`HEAD` when left
/// out), for messages.
fn head_name(spec: &str) -> String {
    let head = spec
        .split_once("...")
        .or_else(|| spec.split_once(".."))
        .map_or("", |(_, b)| b);
    if head.is_empty() {
        "HEAD".to_string()
    } else {
        head.to_string()
    }
}

/// Frees `value` on a thread of its own, beside the rest of the run (here
/// when no thread can be started).
fn drop_beside<T: Send + 'static>(value: T) {
    // On failure the closure, and `value` with it, is dropped here.
    let _ = std::thread::Builder::new().spawn(move || drop(value));
}

/// Splits a range whose head is `WORKTREE` or `INDEX` (`main..WORKTREE`,
/// `main...INDEX`) into the same range with `HEAD` as its head, for git, and
/// the tree to use instead of `HEAD`'s: local edits checked before they are
/// committed.
fn split_live_head(spec: Option<&str>) -> (Option<String>, Option<Revision>) {
    let Some(spec) = spec else {
        return (None, None);
    };
    for sep in ["...", ".."] {
        if let Some((base, head)) = spec.split_once(sep) {
            return match head {
                "WORKTREE" | "INDEX" => (
                    Some(format!("{base}{sep}HEAD")),
                    Some(Revision::parse(Some(head))),
                ),
                _ => (Some(spec.to_string()), None),
            };
        }
    }
    (Some(spec.to_string()), None)
}

fn tree_label(rev: &Revision) -> String {
    match rev {
        Revision::Worktree => "WORKTREE".into(),
        Revision::Index => "INDEX".into(),
        Revision::Commit(c) => c.clone(),
    }
}

/// Notes about what a commit range leaves out: nothing at all when base and
/// head are one commit, and edits not yet committed when head is `HEAD`.
fn range_notes(
    repo: &GitRepo,
    range: &source::RevisionRange,
    uncommitted: Uncommitted,
) -> Vec<String> {
    let mut notes = Vec::new();
    let base = match range.spec.split("..").next() {
        Some(b) if !b.is_empty() => b,
        _ => "HEAD",
    };
    if range.base == range.head {
        notes.push(format!(
            "the range `{}` is empty: base and head are the same commit `{}`, so there is nothing to compare; \
             name the branch with the change (`gitops-lint diff {base}..my-branch`), or check edits not yet \
             committed with `gitops-lint diff {base}..WORKTREE`",
            range.spec,
            &range.head[..range.head.len().min(12)]
        ));
    }
    if uncommitted == Uncommitted::Said
        && repo.head_commit().as_deref() == Some(range.head.as_str())
    {
        let changed = repo.uncommitted_paths();
        if let Some(first) = changed.first() {
            let more = match changed.len() {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            };
            notes.push(format!(
                "the working tree has changes that are not committed (`{first}`{more}) and are not part of this diff; \
                 `gitops-lint diff {base}..WORKTREE` includes them (`..INDEX` only what is staged)"
            ));
        }
    }
    notes
}

/// Adds what to do in CI to the errors CI checkouts cause.
fn ci_advice(repo: &GitRepo, e: RepoError) -> LintError {
    match e {
        RepoError::NoDefaultBase => {
            let shallow = if repo.is_shallow() {
                "; this is a shallow clone: fetch full history (actions/checkout with `fetch-depth: 0`, or `git fetch --unshallow`)"
            } else {
                ""
            };
            LintError::Usage(format!(
                "{e}{shallow}; in GitHub Actions pass the pull request's base, e.g. `gitops-lint diff ${{{{ github.event.pull_request.base.sha }}}}..HEAD`"
            ))
        }
        other => LintError::Repo(other),
    }
}

/// The branch a change is compared against (`develop` in `develop..HEAD` or
/// `origin/develop...HEAD`): the change lands there, so an Application whose
/// `targetRevision` names it renders the revision being checked, not that
/// branch's current tip.
fn target_branch(repo: &GitRepo, spec: &str) -> Option<String> {
    let base = spec.split("..").next()?.trim();
    let name = base
        .strip_prefix("refs/heads/")
        .or_else(|| base.strip_prefix("refs/remotes/origin/"))
        .or_else(|| base.strip_prefix("origin/"))
        .unwrap_or(base);
    let is_branch = repo.has_revision(&format!("refs/heads/{name}"))
        || repo.has_revision(&format!("refs/remotes/origin/{name}"));
    (is_branch && name != "HEAD").then(|| name.to_string())
}

/// `gitops-lint pre-commit`: `HEAD` against the staged index.
///
/// # Errors
/// Unusable requests.
pub(crate) fn diff_staged(opts: &Options) -> Result<Report, LintError> {
    let repo = open_repo(opts)?;
    keep_facts(&repo, opts)?;
    let head_tree = repo.index_tree()?;
    let (base_label, base_tree): (String, Arc<dyn Tree>) = match repo.head_commit() {
        Some(c) => {
            let t = repo.commit_tree(&c)?;
            (c, t)
        }
        None => ("EMPTY".to_string(), Arc::new(source::EmptyTree)),
    };
    // Staged changes have no commit message yet, so no trailers.
    let report = diff_trees(
        &repo,
        (&base_label, base_tree),
        ("INDEX", head_tree),
        None,
        &[],
        opts,
    )?;
    intact(&repo)?;
    Ok(report)
}

/// Stops the run when an object it needed was missing or corrupt: the
/// apps reading it would otherwise each be a render failure of their own,
/// while the cause is the clone, which Argo CD could not read either.
fn intact(repo: &GitRepo) -> Result<(), LintError> {
    match repo.damaged() {
        Some(what) => Err(LintError::Other(format!(
            "the repository's object database is damaged: {what}; check it with `git fsck`, then fetch or clone it again"
        ))),
        None => Ok(()),
    }
}

fn diff_trees(
    repo: &GitRepo,
    base: (&str, Arc<dyn Tree>),
    head: (&str, Arc<dyn Tree>),
    target: Option<&str>,
    messages: &[String],
    opts: &Options,
) -> Result<Report, LintError> {
    let decoded_before = goyaml::json::encoded::decoded_values();
    // Configuration comes from the base: a change must not switch off the rules that judge it.
    let (config, config_file) =
        load_base_config(repo, opts.config.as_deref(), base.1.as_ref(), base.0)?;
    let head_config_differs = source::read(base.1.as_ref(), &config_file).ok()
        != source::read(head.1.as_ref(), &config_file).ok();
    let head_config = head_config_problem(repo, opts.config.as_deref(), &head, &config_file);
    let mut identity =
        RepoIdentity::new(&repo.remote_urls(), &config, repo.head_branch().as_deref());
    identity.branches.extend(target.map(str::to_string));
    let facts = repo.facts();
    let mut session = Session {
        repo,
        cache: ParseCache::with_kept(facts.clone()),
        identity,
        render: with_chart_cache(repo, tools_outside(repo, &opts.render), &config),
        split: BTreeSet::new(),
    };
    // Apps whose inputs are identical at both revisions are rendered at
    // neither, unless every resource is wanted (`--all`).
    let subtrees = Arc::new(
        facts
            .clone()
            .map_or_else(SubtreeMemo::default, SubtreeMemo::with_facts),
    );
    let defers = !opts.render_unchanged && !opts.all;
    // One tree diff serves both revisions' deferrals (it is symmetric).
    let changes = defers
        .then(|| source::changes::Changes::between(base.1.as_ref(), head.1.as_ref()))
        .flatten()
        .map(Arc::new);
    let deferral = |other: &Arc<dyn Tree>| {
        defers.then(|| Deferral {
            other: Arc::clone(other),
            subtrees: Arc::clone(&subtrees),
            footprints: crate::render::FootprintMemo::with_facts(facts.clone()),
            changes: changes.clone(),
        })
    };
    // Charts are fetched for any repository the base names, and for the
    // head only from those (or the configuration's `chartRepositories`).
    let charts = session.render.chart_cache.clone();
    if let Some(c) = &charts {
        c.set_base(base.1.entry("").ok().flatten().map(|e| e.id));
    }
    let mut builds = 0;
    let (mut base_inv, mut head_inv) = loop {
        builds += 1;
        opts.progress.step("rendering the base revision");
        let mut base_inv =
            session.inventory(Arc::clone(&base.1), &config, None, deferral(&head.1))?;
        if let Some(c) = &charts {
            c.trust(base_inv.apps.values().flat_map(|a| {
                a.spec
                    .sources
                    .iter()
                    .filter(|s| s.chart.is_some())
                    .map(|s| s.repo_url.as_str())
            }));
        }
        opts.progress.step("rendering the head revision");
        let head_inv = session.inventory(
            Arc::clone(&head.1),
            &config,
            Some(&base_inv),
            deferral(&base.1),
        )?;
        // A diff compares like with like: a base without any Application (a
        // repository's first commit through the hook, or Argo CD introduced by
        // this change) is not linted as an implicit app beside head's real ones,
        // which would list an app that never existed.
        if base_inv.implicit_fallback && head_inv.apps.values().any(|a| !a.implicit) {
            base_inv = session.inventory(
                Arc::clone(&base.1),
                &config,
                Some(&head_inv),
                deferral(&head.1),
            )?;
        }
        // Both revisions key apps by the same instances: a root split off at
        // one revision only would make its whole tree look deleted.
        let more = new_collisions(&session.split, &[&base_inv, &head_inv]);
        if more.is_empty() || builds > MAX_SPLIT_BUILDS {
            break (base_inv, head_inv);
        }
        session.split.extend(more);
    };
    let note = split_note(&session.split, &[&base_inv, &head_inv]);
    head_inv.notes.extend(note);
    head_inv
        .notes
        .extend(charts.as_ref().and_then(|c| c.fetch_note()));
    if config.chart_cache.is_some() && charts.as_ref().is_some_and(|c| c.fetcher().is_some()) {
        head_inv.notes.push(
            "`chartCache` of .gitops-lint.yaml is no longer read: archives inside the checkout could be planted by a pull request. Charts are fetched and kept by identity in the cache directory (docs/charts.md); `--chart-cache DIR` outside the checkout serves an offline run".to_string(),
        );
    }
    let unchanged = session.settle((&base.1, &mut base_inv), (&head.1, &mut head_inv), &config);
    // Every fact this run uses is known by now. Failing to keep them costs
    // the next run time, never its answer.
    if let Some(f) = &facts {
        if let Err(e) = f.save() {
            head_inv.notes.push(format!(
                "the cache directory could not be written ({e}); the next run computes again what this one learned"
            ));
        }
    }
    opts.progress.step("planning prunes and running rules");
    let plan = plan::plan(&base_inv, &head_inv, &config);
    // A pruned Namespace takes everything inside it, from any app: GL001
    // lists what the repository has there, so unchanged apps are rendered.
    // Some rules need them too for this change (`Rule::needs_unchanged_apps`).
    let unchanged = if unchanged > 0
        && (plan.prunes_namespace() || rules::need_unchanged_apps(&base_inv, &head_inv, &config))
    {
        session.render_unchanged((&base.1, &mut base_inv), &mut head_inv, &config);
        0
    } else {
        unchanged
    };
    record_stats(opts, |s| {
        *s = RunStats {
            blob_reads: repo.blob_reads(),
            trees_decoded: repo.trees_decoded(),
            parses: session.cache.parses(),
            parsed_bytes: session.cache.parsed_bytes(),
            base_renders: base_inv.renders,
            head_renders: head_inv.renders,
            head_reuses: head_inv.reused.len(),
            unchanged,
            changed_apps: plan.changes.len(),
            facts_loaded: facts.as_ref().map_or(0, |f| f.stats().loaded),
            facts_learned: facts.as_ref().map_or(0, |f| f.stats().learned),
            helm_runs: helm_runs(opts),
            kept_parses: session.cache.kept_hits(),
            decoded_values: 0,
        };
    });
    let cx = RuleContext {
        plan: Some(&plan),
        base: Some(&base_inv),
        head: &head_inv,
        config: &config,
        only_changed: !opts.all,
        head_config: head_config.as_ref(),
    };
    let mut findings = rules::run(&cx);
    if !opts.all {
        rules::drop_pre_existing(&mut findings, &base_inv, &config);
    }
    suppress::apply_ignores(&mut findings, &cx);
    let ack_notes = suppress::apply(
        &mut findings,
        &plan,
        &base_inv,
        &suppress::trailers(messages),
        &config,
    );
    suppress::drop_ignored_paths(&mut findings, &config);
    let mut report = Report::new(
        "diff",
        Some((base.0, &base_inv)),
        (head.0, &head_inv),
        Some(&plan),
        findings,
    );
    if opts.diff.show.unwrap_or(config.diff.show) {
        let mut settings = config.diff.clone();
        if let Some(n) = opts.diff.context {
            settings.context = n.min(crate::config::MAX_DIFF_CONTEXT);
        }
        settings.hide_deleted |= opts.diff.hide_deleted;
        for p in &opts.diff.ignore_lines {
            settings.ignore_lines.push(
                crate::config::LinePattern::new(p)
                    .map_err(|e| LintError::Usage(format!("--diff-ignore: {e}")))?,
            );
        }
        if !opts.diff.apps.is_empty() {
            for g in &opts.diff.apps {
                gotemplate::go::glob::Glob::new(g, &[])
                    .map_err(|e| LintError::Usage(format!("--diff-app `{g}`: {e}")))?;
            }
            settings.apps.clone_from(&opts.diff.apps);
        }
        report.diff = Some(crate::rendered_diff::compute(
            &base_inv, &head_inv, &plan, &settings,
        ));
    }
    if head_config_differs && head_config.is_none() {
        report.notes.push(format!(
            "{config_file} differs at head; the base revision's configuration was used"
        ));
    }
    report.notes.extend(ack_notes);
    crate::report::anchor::attach_files(&mut report, Some(base.1.as_ref()), head.1.as_ref());
    let anchors =
        crate::report::anchor::Anchors::new(base.1.as_ref(), head.1.as_ref(), &base_inv, &head_inv);
    report.anchors = report.findings.iter().map(|f| anchors.of(f)).collect();
    record_stats(opts, |s| {
        s.decoded_values = goyaml::json::encoded::decoded_values() - decoded_before;
    });
    // Freeing the inventories and parses of a large fleet is a noticeable
    // share of a run (8% of a warm one-app diff at 10,000 apps, perf): a
    // process about to exit leaves that to the operating system, and a
    // library caller frees them beside writing the report.
    let parses = std::mem::take(&mut session.cache);
    let built = (base_inv, head_inv, plan, parses, (base.1, head.1, subtrees));
    if opts.exit_after {
        std::mem::forget(built);
    } else {
        drop_beside(built);
    }
    Ok(report)
}

/// Why the head revision's configuration would not load as the base's
/// did (read the same way, `--config` included), when it would not: once
/// merged, it is the configuration every run reads (GL022). A failure to
/// read the tree is the run's own, reported where the head is rendered.
fn head_config_problem(
    repo: &GitRepo,
    explicit: Option<&Path>,
    head: &(&str, Arc<dyn Tree>),
    config_file: &str,
) -> Option<crate::config::ConfigProblem> {
    let Err(e) = load_base_config(repo, explicit, head.1.as_ref(), head.0) else {
        return None;
    };
    match e {
        LintError::Config(e) => Some(crate::config::ConfigProblem::from_error(config_file, &e)),
        e if e.is_usage() => Some(crate::config::ConfigProblem {
            file: match explicit {
                Some(_) => config_file,
                None => misnamed_config(head.1.as_ref()).unwrap_or(config_file),
            }
            .to_string(),
            message: e.to_string().replace('\n', "; "),
            line: None,
        }),
        _ => None,
    }
}

/// `gitops-lint check`: single-revision rules over one tree.
///
/// # Errors
/// Unusable requests.
pub fn check(rev: &Revision, opts: &Options) -> Result<Report, LintError> {
    let repo = open_repo(opts)?;
    let (label, tree) = tree_of(&repo, rev)?;
    let config = load_config(opts.config.as_deref(), tree.as_ref())?;
    let mut session = Session::new(&repo, &config, opts);
    opts.progress.step("rendering");
    let mut inv =
        session.single_inventory(|s| s.inventory(Arc::clone(&tree), &config, None, None))?;
    inv.notes.extend(roots_note(&inv, &config));
    inv.notes.extend(roots_proposal(&inv, &config));
    record_stats(opts, |s| {
        *s = RunStats {
            blob_reads: repo.blob_reads(),
            trees_decoded: repo.trees_decoded(),
            parses: session.cache.parses(),
            parsed_bytes: session.cache.parsed_bytes(),
            head_renders: inv.renders,
            helm_runs: helm_runs(opts),
            ..RunStats::default()
        };
    });
    let cx = RuleContext {
        plan: None,
        base: None,
        head: &inv,
        config: &config,
        only_changed: false,
        head_config: None,
    };
    let mut findings = rules::run(&cx);
    suppress::apply_ignores(&mut findings, &cx);
    suppress::drop_ignored_paths(&mut findings, &config);
    intact(&repo)?;
    let mut report = Report::new("check", None, (&label, &inv), None, findings);
    crate::report::anchor::attach_files(&mut report, None, tree.as_ref());
    Ok(report)
}

/// What `check` treats as roots, so a user sees which files it assumes are
/// applied outside Argo CD (`roots:` in the configuration says it instead).
fn roots_note(inv: &Inventory, config: &Config) -> Option<String> {
    const SHOWN: usize = 10;
    if inv.roots.is_empty() || inv.implicit_fallback {
        return None;
    }
    let mut shown: Vec<String> = inv
        .roots
        .iter()
        .take(SHOWN)
        .map(|f| format!("`{f}`"))
        .collect();
    if inv.roots.len() > SHOWN {
        shown.push(format!("and {} more", inv.roots.len() - SHOWN));
    }
    let how = if config.roots.patterns().is_empty() {
        format!("no app renders them; `roots:` in {CONFIG_FILE} can name them")
    } else {
        format!("`roots:` in {CONFIG_FILE}")
    };
    Some(format!(
        "{} root file(s), applied outside Argo CD ({how}): {}",
        inv.roots.len(),
        shown.join(", ")
    ))
}

/// The `roots:` line that pins the roots `check` inferred, when nothing in
/// the configuration chose them (no `roots:`, `apps:` or `instances:`):
/// inferred roots follow the tree, so a file that stops being rendered
/// would become a root of its own; pinned, it is a deletion. Every root is
/// listed (a line cut short would pin fewer), each path quoted as a JSON
/// string, which YAML reads as the same double-quoted scalar.
fn roots_proposal(inv: &Inventory, config: &Config) -> Option<String> {
    if inv.roots.is_empty()
        || inv.implicit_fallback
        || !config.roots.patterns().is_empty()
        || !config.apps.is_empty()
        || !config.instances.is_empty()
    {
        return None;
    }
    let quoted: Vec<String> = inv
        .roots
        .iter()
        .map(|f| serde_json::Value::from(f.as_str()).to_string())
        .collect();
    Some(format!(
        "the roots above were inferred; to pin them, add `roots: [{}]` to {CONFIG_FILE} (an Application file outside them that nothing renders is then not deployed)",
        quoted.join(", ")
    ))
}

/// `gitops-lint render`: the manifests Argo CD would render at `path`, as a YAML stream.
///
/// # Errors
/// Unusable requests and render failures.
pub(crate) fn render(
    rev: &Revision,
    path: &str,
    namespace: &str,
    opts: &Options,
) -> Result<String, LintError> {
    let repo = open_repo(opts)?;
    let (_, tree) = tree_of(&repo, rev)?;
    let path = resolve_user_path(&repo, path)?;
    let cache = ParseCache::default();
    // A bare directory has no Application: Argo CD's Kustomize build
    // options come from the configuration only, and so do the Helm
    // renderer, the target Argo CD's helm and the chart cache, as for an
    // app.
    let config = load_config(opts.config.as_deref(), tree.as_ref())?;
    let tools = with_chart_cache(&repo, tools_outside(&repo, &opts.render), &config);
    let cx = crate::render::RenderContext::new(tree.as_ref(), &cache, &tools);
    let spec = crate::render::SourceSpec {
        path,
        namespace: namespace.to_string(),
        app_name: "render".into(),
        kustomize_build_options: config.kustomize_build_options.unwrap_or_default(),
        plugins: config.plugins,
        ..Default::default()
    };
    let rendered = crate::render::render(&cx, &spec, &crate::manifest::Scopes::default())
        .map_err(|e| LintError::Other(format!("cannot render: {}", e.message)))?;
    Ok(yaml_stream(rendered.manifests.iter()))
}

/// `gitops-lint render --app NAME`: the manifests Argo CD would render for
/// one Application of the inventory at `rev`, as a YAML stream in render
/// order (every source, merged as the app is analysed: an object rendered
/// twice appears once, as the last source renders it). `name` is the name
/// the reports show (`name`, or `namespace/name` outside `argocd`), the
/// bare name when it is unique, or `namespace/name`.
///
/// An app with sources this run cannot read is printed as far as the
/// others render it, with those sources in [`RenderedApp::left_out`].
///
/// # Errors
/// Unusable requests, an unknown or ambiguous name (with the close names),
/// an app that fails to render (the render error) or whose sources are not
/// in this repository.
pub fn render_app(rev: &Revision, name: &str, opts: &Options) -> Result<RenderedApp, LintError> {
    let repo = open_repo(opts)?;
    let (_, tree) = tree_of(&repo, rev)?;
    let config = load_config(opts.config.as_deref(), tree.as_ref())?;
    let mut session = Session::new(&repo, &config, opts);
    opts.progress.step("rendering");
    let inv = session.single_inventory(|s| {
        Ok(s.with_input(Arc::clone(&tree), &config, None, None, argocd::build))
    })?;
    if let Some(why) = &inv.over_limit {
        return Err(LintError::Other(format!(
            "revision {}: {why}",
            inv.revision
        )));
    }
    let app = find_app(&inv, name)?;
    let shown = app.display_name();
    let mut left_out = Vec::new();
    match &app.status {
        AppStatus::Rendered => {}
        AppStatus::Partial(sources) => {
            left_out = sources
                .iter()
                .map(|l| match &l.why {
                    Some(why) => format!("{}: {why}", l.source),
                    None => l.source.clone(),
                })
                .collect();
        }
        AppStatus::Unrendered(e) => {
            return Err(LintError::Other(format!(
                "cannot render app `{shown}`: {}",
                e.message
            )))
        }
        AppStatus::External(why) => {
            // A git source of another URL may be this repository under
            // another name; a Helm repository chart never is.
            let hint = if app.spec.sources.iter().any(|s| s.chart.is_none()) {
                format!("; if its repoURL names this repository, list it under `repoUrls:` in {CONFIG_FILE}")
            } else {
                String::new()
            };
            return Err(LintError::Other(format!(
                "app `{shown}` does not render from this repository: its sources are {why}{hint}"
            )));
        }
        AppStatus::Unchanged => {
            return Err(LintError::Other(format!("app `{shown}` was not rendered")))
        }
    }
    Ok(RenderedApp {
        yaml: yaml_stream(app.resources.iter()),
        left_out,
    })
}

/// What `render --app` prints.
#[derive(Debug)]
pub struct RenderedApp {
    /// The objects of the sources rendered, as a YAML stream.
    pub yaml: String,
    /// The sources this run cannot read, each with why: what they render
    /// is missing from `yaml`. Empty when every source was rendered.
    pub left_out: Vec<String>,
}

/// The app of `inv` that `name` designates: its display name, its
/// `namespace/name` key, or its bare name when no other app has it.
fn find_app<'i>(inv: &'i Inventory, name: &str) -> Result<&'i argocd::App, LintError> {
    let apps: Vec<&argocd::App> = inv.apps.values().collect();
    if let Some(app) = apps
        .iter()
        .find(|a| a.display_name() == name || a.key == name)
    {
        return Ok(app);
    }
    let by_name: Vec<&&argocd::App> = apps.iter().filter(|a| a.spec.name == name).collect();
    match by_name.as_slice() {
        [one] => return Ok(one),
        [] => {}
        many => {
            let keys: Vec<String> = many.iter().map(|a| format!("`{}`", a.key)).collect();
            return Err(LintError::Usage(format!(
                "app name `{name}` is ambiguous: {} have it; give one as `namespace/name`",
                keys.join(", ")
            )));
        }
    }
    let known: Vec<String> = apps.iter().map(|a| a.display_name()).collect();
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    let close = crate::config::close_names(name, &known);
    let hint = if close.is_empty() {
        format!(
            "{} app(s) at revision {}; `gitops-lint check` lists them",
            known.len(),
            inv.revision
        )
    } else {
        let quoted: Vec<String> = close.iter().map(|k| format!("`{k}`")).collect();
        format!("did you mean {}?", quoted.join(", "))
    };
    Err(LintError::Usage(format!("no app named `{name}` ({hint})")))
}

/// Objects as one YAML stream, each document opened by `---`.
/// The manifests as a YAML stream. A manifest with generated fields (see
/// `render::generated`) is headed by a comment naming them: what is shown
/// there is one draw of many, and no comparison of revisions reads it.
fn yaml_stream<'m>(manifests: impl Iterator<Item = &'m crate::manifest::Manifest>) -> String {
    let mut out = String::new();
    for m in manifests {
        out.push_str("---\n");
        if !m.generated.is_empty() {
            out.push_str("# gitops-lint: drawn anew at every render (random values or the clock), never compared: ");
            out.push_str(&m.generated.join(", "));
            out.push('\n');
        }
        out.push_str(&goyaml::emit::to_yaml(&m.value));
    }
    out
}

/// Turns a path given on the command line (relative to the current
/// directory) into a repository-relative path.
fn resolve_user_path(repo: &GitRepo, p: &str) -> Result<String, LintError> {
    let cwd = std::env::current_dir().map_err(|e| LintError::Other(e.to_string()))?;
    let abs = cwd.join(p);
    let root = repo.workdir().map(Path::to_path_buf).unwrap_or_default();
    let root = root.canonicalize().unwrap_or(root);
    let abs_norm = normalize_abs(&abs);
    match abs_norm.strip_prefix(&root) {
        Ok(rel) => Ok(rel.to_string_lossy().replace('\\', "/")),
        Err(_) => source::path::normalize(p)
            .ok_or_else(|| LintError::Usage(format!("`{p}` is outside the repository"))),
    }
}

fn normalize_abs(p: &Path) -> PathBuf {
    if let Ok(c) = p.canonicalize() {
        return c;
    }
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::finding::{Finding, Location, Side};
    use crate::report::anchor::Anchors;
    use crate::source::write_commit;

    fn files(list: &[(&str, &str)]) -> Vec<(String, Vec<u8>)> {
        list.iter()
            .map(|(p, t)| ((*p).to_string(), t.as_bytes().to_vec()))
            .collect()
    }

    /// `ignorePaths` drops hygiene findings located there, never a prune
    /// or an app that cannot be judged.
    #[test]
    fn ignored_paths_drop_only_what_a_change_does_not_do() {
        let config = Config::parse(
            ".gitops-lint.yaml",
            "ignorePaths: ['vendor/**']\n",
            &rules::catalog(),
        )
        .expect("valid");
        let at = |code: &str, file: &str| {
            let rule = rules::find(code).expect("rule").meta();
            Finding::new(rule, "m").at(crate::finding::Side::Head, Some(file), Some(1))
        };
        let mut findings = vec![
            at("GL005", "vendor/a.yaml"),
            at("GL005", "apps/a.yaml"),
            at("GL001", "vendor/pvc.yaml"),
            at("GL000", "vendor/kustomization.yaml"),
        ];
        suppress::drop_ignored_paths(&mut findings, &config);
        let kept: Vec<(&str, &str)> = findings
            .iter()
            .map(|f| {
                let file = f.location.as_ref().map_or("", |l| l.file.as_str());
                (f.rule.code, file)
            })
            .collect();
        assert_eq!(
            kept,
            vec![
                ("GL005", "apps/a.yaml"),
                ("GL001", "vendor/pvc.yaml"),
                ("GL000", "vendor/kustomization.yaml")
            ]
        );
    }

    /// A removed manifest is shown on the kustomization that stopped
    /// including it; a changed file keeps its place but loses its base line.
    #[test]
    fn anchors_land_on_files_of_the_change() {
        let tmp = tempfile::tempdir().expect("tmp");
        let base = write_commit(
            tmp.path(),
            "main",
            None,
            &files(&[
                (
                    "apps/p/kustomization.yaml",
                    "resources: [pvc.yaml, cm.yaml]\n",
                ),
                ("apps/p/pvc.yaml", "kind: PersistentVolumeClaim\n"),
                ("apps/p/cm.yaml", "kind: ConfigMap\n"),
                ("apps/p/same.yaml", "kind: Secret\n"),
                ("kustomization.yaml", "resources: [apps/p]\n"),
            ]),
            "base",
        )
        .expect("base");
        let head = write_commit(
            tmp.path(),
            "change",
            Some("main"),
            &files(&[
                ("apps/p/kustomization.yaml", "resources: [cm.yaml]\n"),
                ("apps/p/cm.yaml", "kind: ConfigMap\ndata: {}\n"),
                ("apps/p/same.yaml", "kind: Secret\n"),
                ("kustomization.yaml", "resources: [apps/p]\n"),
            ]),
            "head",
        )
        .expect("head");
        let repo = GitRepo::open(tmp.path()).expect("repo");
        let (b, h) = (
            repo.commit_tree(&base).expect("tree"),
            repo.commit_tree(&head).expect("tree"),
        );
        let meta = crate::rules::find("GL001").expect("rule").meta();
        let at =
            |file: &str, line: u32| Finding::new(meta, "m").at(Side::Base, Some(file), Some(line));
        let inv = Inventory::default();
        let anchors = Anchors::new(b.as_ref(), h.as_ref(), &inv, &inv);
        let anchor_of = |f: &Finding| anchors.of(f);
        let loc = |file: &str, line: Option<u32>| {
            Some(Location {
                side: Side::Head,
                file: file.into(),
                line,
            })
        };
        assert_eq!(
            anchor_of(&at("apps/p/pvc.yaml", 1)),
            loc("apps/p/kustomization.yaml", None)
        );
        assert_eq!(
            anchor_of(&at("apps/p/cm.yaml", 1)),
            loc("apps/p/cm.yaml", None)
        );
        assert_eq!(
            anchor_of(&at("apps/p/same.yaml", 1)),
            loc("apps/p/same.yaml", Some(1))
        );
        // Nothing in the change to attach it to, and no app: no anchor.
        let unchanged_parent = write_commit(
            tmp.path(),
            "other",
            Some("main"),
            &files(&[
                (
                    "apps/p/kustomization.yaml",
                    "resources: [pvc.yaml, cm.yaml]\n",
                ),
                ("kustomization.yaml", "resources: [apps/p]\n"),
            ]),
            "other",
        )
        .expect("other");
        let o = repo.commit_tree(&unchanged_parent).expect("tree");
        assert_eq!(
            Anchors::new(b.as_ref(), o.as_ref(), &inv, &inv).of(&at("apps/p/pvc.yaml", 1)),
            None
        );
    }
}
