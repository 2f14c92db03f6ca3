//! The driver: wiring the stages for one request. Resolve revisions, read
//! configuration from the base, build both inventories, plan, run rules,
//! set findings aside (`suppress`), assemble the report (`report`, which
//! also anchors findings on files of the change).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::argocd::unchanged::{Deferral, SubtreeMemo};
use crate::argocd::{Inventory, RepoIdentity};
use crate::config::{Config, ConfigError, CONFIG_FILE};
use crate::finding::Finding;
use crate::local_files;
use crate::plan;
use crate::render::{ParseCache, RenderOptions};
use crate::report::Report;
use crate::rules::{self, RuleContext};
use crate::source::{self, GitRepo, Judged, RepoError, Tree};
use crate::suppress;

mod config_file;
mod rendered;
mod session;

pub use config_file::load_config;
use config_file::{load_base_config, misnamed_config};
pub(crate) use rendered::render;
pub use rendered::{render_app, RenderedApp};
use session::{
    new_collisions, split_note, tools_outside, with_chart_cache, Session, MAX_SPLIT_BUILDS,
};

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
    /// runs, keyed by object id and by the binary ([`crate::cache`]);
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

/// The facts kept in `dir` ([`crate::cache::open`]); a `dir` inside the
/// repository is the command line's to change.
fn open_facts(repo: &GitRepo, dir: &Path) -> Result<crate::cache::Facts, LintError> {
    let repository: Vec<&Path> = repo.workdir().into_iter().chain([repo.git_dir()]).collect();
    crate::cache::open(dir, &repository).map_err(|crate::cache::InsideRepository| {
        LintError::Usage(format!(
            "--cache-dir {}: is inside the repository; name a directory outside it (the default is $XDG_CACHE_HOME/gitops-lint), or pass --no-cache",
            crate::report::printable(&dir.display().to_string(), false)
        ))
    })
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

#[cfg(test)]
mod tests;
