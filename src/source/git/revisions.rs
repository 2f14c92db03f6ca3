//! Revisions of a repository: resolving names, ranges, merge bases and
//! targets, and reading commits' messages.

use std::sync::{Arc, Mutex};

use git2::{Oid, Repository};

use super::{
    conflicting_paths, similar_refs, GitRepo, Judged, MergedTree, RepoError, RevisionRange, Target,
};

impl GitRepo {
    /// Resolves one revision to a commit id (full hex).
    ///
    /// # Errors
    /// [`RepoError::UnknownRevision`], with a hint for shallow clones.
    pub fn resolve_commit(&self, rev: &str) -> Result<String, RepoError> {
        let repo = self.lock();
        let unknown = || RepoError::UnknownRevision {
            rev: rev.to_string(),
            hint: if self.shallow {
                " (this is a shallow clone: fetch full history with actions/checkout `fetch-depth: 0` or `git fetch --unshallow`)".to_string()
            } else {
                let similar = similar_refs(&repo, rev);
                if similar.is_empty() {
                    String::new()
                } else {
                    let quoted: Vec<String> = similar.iter().map(|r| format!("`{r}`")).collect();
                    format!(" (did you mean {}?)", quoted.join(" or "))
                }
            },
        };
        let obj = repo.revparse_single(rev).map_err(|_| unknown())?;
        let commit = obj.peel_to_commit().map_err(|_| unknown())?;
        Ok(commit.id().to_string())
    }

    /// Whether `rev` resolves to a commit.
    #[must_use]
    pub(crate) fn has_revision(&self, rev: &str) -> bool {
        self.resolve_commit(rev).is_ok()
    }

    /// The commit `HEAD` points to, or `None` when HEAD is unborn.
    #[must_use]
    pub fn head_commit(&self) -> Option<String> {
        let repo = self.lock();
        let id = repo
            .head()
            .ok()?
            .peel_to_commit()
            .ok()
            .map(|c| c.id().to_string());
        id
    }

    /// The short name of the branch HEAD is on, if any.
    #[must_use]
    pub(crate) fn head_branch(&self) -> Option<String> {
        let repo = self.lock();
        let head = repo.head().ok()?;
        if head.is_branch() {
            head.shorthand().ok().map(str::to_string)
        } else {
            None
        }
    }

    /// The merge base of two commits.
    ///
    /// # Errors
    /// No common ancestor (with shallow-clone advice when relevant).
    pub(crate) fn merge_base(&self, a: &str, b: &str, spec: &str) -> Result<String, RepoError> {
        let repo = self.lock();
        let a = Oid::from_str(a).map_err(|e| RepoError::Git(e.message().to_string()))?;
        let b = Oid::from_str(b).map_err(|e| RepoError::Git(e.message().to_string()))?;
        match repo.merge_base(a, b) {
            Ok(oid) => Ok(oid.to_string()),
            Err(_) if self.shallow => Err(RepoError::ShallowMergeBase(spec.to_string())),
            Err(_) => Err(RepoError::NoMergeBase(spec.to_string())),
        }
    }

    /// Resolves a range: `A..B`, `A...B`, or a single revision `A` (meaning
    /// `A..HEAD`). `None` picks the default base, `origin/HEAD` (else
    /// `origin/main`, `origin/master`, `main`, `master`), with `HEAD`.
    ///
    /// With `merged` (the head is judged merged into the base's tip) the
    /// base is A's tip whatever the dots: the merge does not depend on
    /// them. Without it, `A...B` and the default base are the merge base
    /// of A and B, as `git diff A...B` compares.
    ///
    /// A base naming a local branch that is behind the remote-tracking
    /// branch it follows is read from the remote-tracking branch (see
    /// [`GitRepo::resolve_target`]).
    ///
    /// # Errors
    /// Unknown revisions, missing history, no default base.
    pub(crate) fn resolve_range(
        &self,
        spec: Option<&str>,
        merged: bool,
    ) -> Result<RevisionRange, RepoError> {
        let Some(spec) = spec else {
            let head = self.head_commit().ok_or(RepoError::UnbornHead)?;
            let base_ref = [
                "origin/HEAD",
                "origin/main",
                "origin/master",
                "main",
                "master",
            ]
            .into_iter()
            .find(|r| self.has_revision(r))
            .ok_or(RepoError::NoDefaultBase)?;
            let target = self.resolve_target(base_ref)?;
            let label = format!("{base_ref}...HEAD");
            let base = if merged {
                target.commit
            } else {
                self.merge_base(&target.commit, &head, &label)?
            };
            return Ok(RevisionRange {
                base,
                head,
                spec: label,
                notes: target.notes,
                base_name: target.name,
            });
        };
        if let Some((a, b)) = spec.split_once("...") {
            let a = if a.is_empty() { "HEAD" } else { a };
            let b = if b.is_empty() { "HEAD" } else { b };
            let head = self.resolve_commit(b)?;
            let target = self.resolve_target(a)?;
            let base = if merged {
                target.commit
            } else {
                self.merge_base(&target.commit, &head, spec)?
            };
            return Ok(RevisionRange {
                base,
                head,
                spec: spec.to_string(),
                notes: target.notes,
                base_name: target.name,
            });
        }
        if let Some((a, b)) = spec.split_once("..") {
            let a = if a.is_empty() { "HEAD" } else { a };
            let b = if b.is_empty() { "HEAD" } else { b };
            let target = self.resolve_target(a)?;
            return Ok(RevisionRange {
                base: target.commit,
                head: self.resolve_commit(b)?,
                spec: spec.to_string(),
                notes: target.notes,
                base_name: target.name,
            });
        }
        let head = self.head_commit().ok_or(RepoError::UnbornHead)?;
        let target = self.resolve_target(spec)?;
        Ok(RevisionRange {
            base: target.commit,
            head,
            spec: spec.to_string(),
            notes: target.notes,
            base_name: target.name,
        })
    }

    /// The commit a range's base `name` stands for, and what to say about
    /// it. A pull request merges into the branch of the remote, and Argo CD
    /// reads a branch from the remote (`nativeGitClient.lsRemote` in
    /// argo-cd's util/git/client.go). So a local branch behind the
    /// remote-tracking branch it follows (its upstream, else
    /// `origin/<name>`) is read from the remote-tracking branch, which
    /// holds all it has and more, and a note says so; a local branch that
    /// has diverged from it is read as it is, with a note naming the other.
    /// `refs/heads/<name>` always names the local branch.
    ///
    /// # Errors
    /// [`RepoError::UnknownRevision`].
    pub(crate) fn resolve_target(&self, name: &str) -> Result<Target, RepoError> {
        let local = self.resolve_commit(name)?;
        let as_named = |commit: String, notes: Vec<String>| Target {
            commit,
            name: name.to_string(),
            notes,
        };
        let Some(remote_ref) = self.tracked_by(name) else {
            return Ok(as_named(local, Vec::new()));
        };
        let Ok(remote) = self.resolve_commit(&remote_ref) else {
            return Ok(as_named(local, Vec::new()));
        };
        if remote == local {
            return Ok(as_named(local, Vec::new()));
        }
        let counts = {
            let repo = self.lock();
            match (Oid::from_str(&local), Oid::from_str(&remote)) {
                (Ok(l), Ok(r)) => repo.graph_ahead_behind(l, r).ok(),
                _ => None,
            }
        };
        let remote_name = remote_ref
            .strip_prefix("refs/remotes/")
            .unwrap_or(&remote_ref);
        match counts {
            Some((0, behind)) => Ok(Target {
                commit: remote,
                name: remote_name.to_string(),
                notes: vec![format!(
                    "the local branch `{name}` is {behind} commit(s) behind `{remote_name}`, which it tracks: \
                     the change is judged against `{remote_name}`, the tip a pull request merges into \
                     (update `{name}` with `git pull`, or name `refs/heads/{name}` to judge against the local branch as it is)"
                )],
            }),
            Some((_, 0)) | None => Ok(as_named(local, Vec::new())),
            Some((ahead, behind)) => Ok(as_named(
                local,
                vec![format!(
                    "the local branch `{name}` and `{remote_name}` have diverged ({ahead} commit(s) only on `{name}`, \
                     {behind} only on `{remote_name}`): the change is judged against the local `{name}`; \
                     name `{remote_name}` to judge against the tip a pull request merges into"
                )],
            )),
        }
    }

    /// The remote-tracking branch that the local branch `name` follows:
    /// its configured upstream, else `refs/remotes/origin/<name>`. `None`
    /// when `name` is no local branch or is named as one explicitly.
    pub(crate) fn tracked_by(&self, name: &str) -> Option<String> {
        if name.starts_with("refs/") {
            return None;
        }
        let repo = self.lock();
        let branch = repo.find_branch(name, git2::BranchType::Local).ok()?;
        // `name` must mean that branch: a tag or a full object id of the
        // same spelling is not a branch.
        let by_name = repo.revparse_single(name).ok()?.peel_to_commit().ok()?.id();
        let tip = branch.get().peel_to_commit().ok()?.id();
        if by_name != tip {
            return None;
        }
        if let Ok(up) = branch.upstream() {
            if let Some(r) = up
                .get()
                .name()
                .ok()
                .filter(|r| r.starts_with("refs/remotes/"))
            {
                return Some(r.to_string());
            }
        }
        let origin = format!("refs/remotes/origin/{name}");
        let found = repo.find_reference(&origin).is_ok();
        found.then_some(origin)
    }

    /// What a diff judges of `head` against `base` (full hex ids): the
    /// merge of `head` into `base`, as a pull request's merge makes it.
    /// A fast-forward is `head` itself; a head that `base` already holds
    /// changes nothing. Otherwise the merge is computed with libgit2's
    /// `git_merge_commits` (renames found, as git does) into an object
    /// database held in memory (a mempack backend of a handle of its own),
    /// so nothing is written to the repository. The trees of both commits
    /// and of their merge base are indexed first: one larger than
    /// gitops-lint reads (a tree whose directories repeat one subtree
    /// expands without end) is refused before libgit2 walks it.
    ///
    /// # Errors
    /// [`RepoError::MergeConflict`] naming the conflicting paths; missing
    /// history; git failures.
    pub(crate) fn judge_merge(
        &self,
        base: &str,
        head: &str,
        names: (&str, &str, &str),
    ) -> Result<Judged, RepoError> {
        let (spec, base_name, head_name) = names;
        let fork = self.merge_base(base, head, spec)?;
        if fork == base {
            return Ok(Judged::Head);
        }
        if fork == head {
            return Ok(Judged::AlreadyMerged);
        }
        for commit in [head, fork.as_str()] {
            drop(self.commit_tree(commit)?);
        }
        let g = |e: git2::Error| RepoError::Git(e.message().to_string());
        let repo = Repository::open(&self.git_dir).map_err(g)?;
        {
            // The loose and pack backends have priorities 1 and 2: objects
            // the merge writes (merged blobs, trees, the virtual merge base
            // of a criss-cross history) go to memory. An object the
            // repository already has is not written again (git touches its
            // file's time, as any git command that writes does).
            let odb = repo.odb().map_err(g)?;
            odb.add_new_mempack_backend(1000).map_err(g)?;
        }
        let tree_id = {
            let ours = repo
                .find_commit(Oid::from_str(base).map_err(g)?)
                .map_err(g)?;
            let theirs = repo
                .find_commit(Oid::from_str(head).map_err(g)?)
                .map_err(g)?;
            let mut opts = git2::MergeOptions::new();
            opts.find_renames(true).fail_on_conflict(false);
            let mut index = repo.merge_commits(&ours, &theirs, Some(&opts)).map_err(g)?;
            if index.has_conflicts() {
                return Err(RepoError::MergeConflict {
                    spec: spec.to_string(),
                    base: base_name.to_string(),
                    head: head_name.to_string(),
                    paths: conflicting_paths(&index),
                });
            }
            index.write_tree_to(&repo).map_err(g)?
        };
        let overlay = Arc::new(Mutex::new(repo));
        let mut store = self.shared();
        store.overlay = Some(Arc::clone(&overlay));
        let label = format!(
            "merge of {} into {}",
            &head[..head.len().min(12)],
            &base[..base.len().min(12)]
        );
        let tree = {
            let repo = overlay
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            self.index_root(&repo, tree_id, &label, store)?
        };
        Ok(Judged::Merge(MergedTree {
            tree,
            tree_id: tree_id.to_string(),
            merge_base: fork,
        }))
    }

    /// The URLs of every remote (fetch URLs).
    #[must_use]
    pub fn remote_urls(&self) -> Vec<String> {
        let repo = self.lock();
        let Ok(names) = repo.remotes() else {
            return Vec::new();
        };
        names
            .iter()
            .flatten()
            .filter_map(|n| {
                let n = n?;
                repo.find_remote(n)
                    .ok()
                    .and_then(|r| r.url().ok().map(str::to_string))
            })
            .collect()
    }

    /// Full messages of the commits reachable from `head` but not from `base`.
    ///
    /// # Errors
    /// Git failures.
    pub(crate) fn commit_messages(&self, base: &str, head: &str) -> Result<Vec<String>, RepoError> {
        let repo = self.lock();
        let g = |e: git2::Error| RepoError::Git(e.message().to_string());
        let mut walk = repo.revwalk().map_err(g)?;
        walk.push(Oid::from_str(head).map_err(g)?).map_err(g)?;
        walk.hide(Oid::from_str(base).map_err(g)?).map_err(g)?;
        let mut out = Vec::new();
        for oid in walk {
            let oid = oid.map_err(g)?;
            let c = repo.find_commit(oid).map_err(g)?;
            out.push(c.message().unwrap_or_default().to_string());
        }
        Ok(out)
    }
}
