//! The git adapter: the only file that imports git2.
//!
//! Trees are read straight from the object database (never a checkout).
//! A commit's tree is indexed once when opened; blobs are read on demand
//! and shared between revisions through a cache keyed by object id, and so
//! are the decoded tree objects of the index (two revisions of a diff
//! share every unchanged directory's listing).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use git2::{ObjectType, Oid, Repository};

use super::{DirTree, Entry, EntryKind, FastMap, ObjectId, SourceError, Tree};
use crate::cache::Facts;

mod indexed_tree;
mod revisions;
mod write;

use indexed_tree::{BlobStore, IndexedTree, LazyListings};
pub use write::{add_remote, write_commit};

fn oid_to_id(oid: Oid) -> ObjectId {
    let mut out = [0u8; 20];
    let bytes = oid.as_bytes();
    let n = bytes.len().min(20);
    out[..n].copy_from_slice(&bytes[..n]);
    ObjectId(out)
}

fn io(e: &git2::Error) -> SourceError {
    SourceError::Io(e.message().to_string())
}

/// The two commits a `diff` compares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevisionRange {
    /// The base commit (full hex id).
    pub(crate) base: String,
    /// The head commit (full hex id).
    pub(crate) head: String,
    /// How the user named the range, for messages.
    pub(crate) spec: String,
    /// What resolving the base's name found worth saying (a local branch
    /// behind the branch it tracks).
    pub(crate) notes: Vec<String>,
    /// The name the base's tip was read from (`origin/main` for a local
    /// `main` behind it), for messages.
    pub(crate) base_name: String,
}

/// The commit a range's base names, as [`GitRepo::resolve_target`] reads it.
pub(crate) struct Target {
    /// The commit (full hex).
    pub(crate) commit: String,
    /// The name it was read from.
    pub(crate) name: String,
    /// What to tell the user about it.
    pub(crate) notes: Vec<String>,
}

/// What a diff judges as its head revision.
pub(crate) enum Judged {
    /// The head commit as it is: it already contains the base's tip (a
    /// fast-forward), so merging it changes nothing else.
    Head,
    /// Nothing: the base's tip already contains the head commit.
    AlreadyMerged,
    /// The merge of the head commit into the base's tip, computed in memory.
    Merge(MergedTree),
}

/// The tree a merge of the head into the base's tip makes.
pub(crate) struct MergedTree {
    /// The tree, read like a commit's.
    pub(crate) tree: Arc<dyn Tree>,
    /// Its id (full hex): the same for the same merge, from run to run.
    pub(crate) tree_id: String,
    /// The merge base of the two commits (full hex).
    pub(crate) merge_base: String,
}

/// Why a repository or revision cannot be used. Each message says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RepoError {
    /// No repository at or above the directory.
    #[error(
        "`{0}` is not inside a git repository (run gitops-lint inside one, or pass --repo DIR)"
    )]
    NotARepo(String),
    /// A repository directory (`--repo`) that does not exist.
    #[error("`{0}` does not exist (pass --repo the directory of a git repository)")]
    NoSuchDirectory(String),
    /// A revision that does not resolve.
    #[error("unknown revision `{rev}`{hint}")]
    UnknownRevision {
        /// The revision as given.
        rev: String,
        /// Extra advice (shallow clones, revisions with a similar name).
        hint: String,
    },
    /// A range with no common ancestor in a shallow clone.
    #[error("cannot find the merge base of `{0}`: this is a shallow clone; fetch full history (actions/checkout with `fetch-depth: 0`, or `git fetch --unshallow`)")]
    ShallowMergeBase(String),
    /// Two revisions with no common ancestor.
    #[error("`{0}` has no merge base: the revisions share no history")]
    NoMergeBase(String),
    /// The head does not merge cleanly into the base's tip.
    #[error("`{spec}` cannot be judged as it would be merged: merging `{head}` into `{base}` conflicts in {paths}; rebase the change onto `{base}` (or merge `{base}` into it) and resolve the conflicts, or pass --no-merge to judge `{head}` as it is")]
    MergeConflict {
        /// The range as given.
        spec: String,
        /// The base's name.
        base: String,
        /// The head's name.
        head: String,
        /// The conflicting paths, quoted and listed (bounded).
        paths: String,
    },
    /// No default base branch could be found.
    #[error("no base revision given and none of `origin/HEAD`, `origin/main`, `origin/master`, `main`, `master` exists; pass a range such as `main..HEAD`")]
    NoDefaultBase,
    /// The repository has no commits yet.
    #[error("the repository has no commits yet (HEAD is unborn)")]
    UnbornHead,
    /// A tree that expands to more entries than gitops-lint indexes.
    #[error("the tree of commit `{0}` has more than {max} files and directories (or more than {mb} MiB of names), more than gitops-lint reads; a tree whose directories repeat the same subtree can expand without end", max = super::MAX_ENTRIES, mb = super::MAX_INDEX_BYTES / (1024 * 1024))]
    TreeTooLarge(String),
    /// Anything else from git.
    #[error("git: {0}")]
    Git(String),
}

/// Branches and tags that `rev` was probably meant to name: the other of
/// `main` and `master`, the same name on a remote (`origin/main` for `main`,
/// when only the remote-tracking branch was fetched), and close spellings.
/// At most three, short names as `git` accepts them.
fn similar_refs(repo: &Repository, rev: &str) -> Vec<String> {
    // A revision expression (`main~2`, `HEAD^`): suggest for its name only.
    let name = rev
        .split(['~', '^', '@', ':'])
        .next()
        .unwrap_or(rev)
        .trim_start_matches("refs/heads/");
    if name.is_empty() {
        return Vec::new();
    }
    let Ok(refs) = repo.references() else {
        return Vec::new();
    };
    let known: Vec<String> = refs
        .flatten()
        .filter_map(|r| r.shorthand().ok().map(str::to_string))
        .filter(|n| !n.ends_with("/HEAD"))
        .take(10_000)
        .collect();
    let suffix = rev.strip_prefix(name).unwrap_or("");
    let mut out: Vec<String> = Vec::new();
    let mut push = |n: &str| {
        if out.len() < 3 && !out.iter().any(|o| o == n) {
            out.push(format!("{n}{suffix}"));
        }
    };
    let swapped = match name {
        "main" => Some("master"),
        "master" => Some("main"),
        _ => None,
    };
    if let Some(other) = swapped {
        if known.iter().any(|k| k == other) {
            push(other);
        }
    }
    for k in &known {
        if k.split_once('/').is_some_and(|(_, branch)| branch == name) {
            push(k);
        }
    }
    if let Some(other) = swapped {
        for k in &known {
            if k.split_once('/').is_some_and(|(_, branch)| branch == other) {
                push(k);
            }
        }
    }
    let names: Vec<&str> = known.iter().map(String::as_str).collect();
    for k in crate::suggest::close_names(name, &names) {
        if k != name {
            push(k);
        }
    }
    out
}

impl RepoError {
    /// Whether the revision or repository named must change (exit status
    /// 2), rather than the repository failing to be read (4).
    #[must_use]
    pub fn is_usage(&self) -> bool {
        !matches!(self, RepoError::TreeTooLarge(_) | RepoError::Git(_))
    }
}

/// One blob's bytes once read; readers of the same blob wait on one read.
type BlobSlot = Arc<Mutex<Option<Arc<[u8]>>>>;

/// Blob bytes shared by every tree of one run, keyed by object id, and how
/// many blobs were read from the object database (each at most once).
#[derive(Default)]
struct BlobCache {
    /// Sharded by the id's first byte, so parallel readers rarely wait.
    shards: [Mutex<FastMap<ObjectId, BlobSlot>>; 16],
    reads: AtomicUsize,
    /// The first object the object database lacks or cannot inflate (see
    /// [`GitRepo::damaged`]).
    damaged: std::sync::OnceLock<String>,
}

/// Whether `e` says the object database itself is damaged: an object a
/// tree names is missing, or its bytes do not inflate or do not parse.
/// Such a repository cannot be read as Argo CD would read it (its fetch
/// or checkout fails too), so the run stops instead of reporting the app.
fn is_damage(e: &git2::Error) -> bool {
    e.code() == git2::ErrorCode::NotFound
        || matches!(
            e.class(),
            git2::ErrorClass::Odb | git2::ErrorClass::Zlib | git2::ErrorClass::Object
        )
}

impl BlobCache {
    /// The slot of `id`: threads wanting the same blob wait on one read.
    fn slot(&self, id: &ObjectId) -> BlobSlot {
        Arc::clone(
            self.shards[usize::from(id.0[0] & 15)]
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .entry(*id)
                .or_default(),
        )
    }
}

/// One directory's entries, sorted by name; shared by every tree (and
/// every path) holding that tree id.
type Listing = Arc<[Entry]>;

type ListingSlot = Arc<Mutex<Option<Listing>>>;

/// Why a tree object could not be listed.
enum Undecodable {
    Git(String),
    /// Two entries whose names read the same once made UTF-8.
    TwoNamed(String),
}

/// Tree objects decoded so far in this run, keyed by tree id, so a tree two
/// commits share is read and decoded once.
#[derive(Default)]
struct TreeListings {
    shards: [Mutex<FastMap<ObjectId, ListingSlot>>; 16],
    /// Tree objects decoded (each at most once when all goes well).
    decoded: AtomicUsize,
}

impl TreeListings {
    /// The entries of tree `id`, decoding it the first time. While another
    /// thread decodes it, `None` unless `wait`: then this one waits for
    /// that decode. A failure is not kept.
    fn get_or_decode(
        &self,
        repo: &Repository,
        id: Oid,
        wait: bool,
    ) -> Option<Result<Listing, Undecodable>> {
        let key = oid_to_id(id);
        let slot = Arc::clone(
            self.shards[usize::from(key.0[0] & 15)]
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .entry(key)
                .or_default(),
        );
        let mut slot = match slot.try_lock() {
            Ok(s) => s,
            Err(std::sync::TryLockError::Poisoned(p)) => p.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) if !wait => return None,
            Err(std::sync::TryLockError::WouldBlock) => slot
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        };
        if let Some(l) = slot.as_ref() {
            return Some(Ok(Arc::clone(l)));
        }
        let listing = decode_tree(repo, id);
        if let Ok(l) = &listing {
            *slot = Some(Arc::clone(l));
            self.decoded.fetch_add(1, Ordering::Relaxed);
        }
        Some(listing)
    }
}

/// The entries of one tree object, sorted by name.
fn decode_tree(repo: &Repository, id: Oid) -> Result<Listing, Undecodable> {
    let tree = repo
        .find_tree(id)
        .map_err(|e| Undecodable::Git(e.message().to_string()))?;
    let mut entries = Vec::with_capacity(tree.len());
    for e in &tree {
        // Git names are bytes; Argo CD's checkout and Go read them as
        // such. A name that is not UTF-8 is kept under its lossy form
        // (the extension that selects manifests survives), never
        // dropped; two names that become the same are refused.
        let name = String::from_utf8_lossy(e.name_bytes()).into_owned();
        let kind = match (e.kind(), e.filemode()) {
            (Some(ObjectType::Tree), _) => EntryKind::Dir,
            (Some(ObjectType::Commit), _) => EntryKind::Submodule,
            (_, 0o120_000) => EntryKind::Symlink,
            _ => EntryKind::File,
        };
        entries.push(Entry {
            name,
            kind,
            id: oid_to_id(e.id()),
        });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(w) = entries.windows(2).find(|w| w[0].name == w[1].name) {
        return Err(Undecodable::TwoNamed(w[0].name.clone()));
    }
    Ok(entries.into())
}

/// What indexing a whole subtree counts, kept between runs by tree id (a
/// tree id is its content), so that a later index adds a subtree seen
/// before without decoding it and its size limits stay exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct SubtreeSize {
    /// Entries of every listing in it, its own included.
    entries: u64,
    /// Bytes of those entries' names.
    name_bytes: u64,
    /// Directories in it, itself included.
    dirs: u64,
    /// Bytes of each of those directories' paths relative to it.
    rel_path_bytes: u64,
    /// Segments of its deepest directory's relative path (0: none).
    depth: u32,
    /// Whether any entry in it is a symlink.
    symlinks: bool,
}

impl SubtreeSize {
    const LEN: usize = 37;

    fn key(id: ObjectId) -> crate::cache::Key {
        crate::cache::record_key("subtree-size", &[&id.0])
    }

    /// The size kept for tree `id`, if a well-formed one is.
    fn kept(facts: &Facts, id: ObjectId) -> Option<SubtreeSize> {
        let b = facts.record(Self::key(id))?;
        if b.len() != Self::LEN || b[36] > 1 {
            return None;
        }
        let u = |i: usize| u64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap_or_default());
        let size = SubtreeSize {
            entries: u(0),
            name_bytes: u(1),
            dirs: u(2),
            rel_path_bytes: u(3),
            depth: u32::from_le_bytes(b[32..36].try_into().unwrap_or_default()),
            symlinks: b[36] == 1,
        };
        (size.dirs >= 1 && size.entries + 1 >= size.dirs).then_some(size)
    }

    fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(Self::LEN);
        for n in [
            self.entries,
            self.name_bytes,
            self.dirs,
            self.rel_path_bytes,
        ] {
            out.extend_from_slice(&n.to_le_bytes());
        }
        out.extend_from_slice(&self.depth.to_le_bytes());
        out.push(u8::from(self.symlinks));
        out
    }

    /// What indexing adds to its byte count for this subtree at a path of
    /// `path_len` bytes: every name, and every directory's path (the
    /// subtree's own, then `path/rel` for each below it).
    fn path_and_name_bytes(&self, path_len: usize) -> u64 {
        let p = path_len as u64;
        self.name_bytes
            .saturating_add(self.dirs.saturating_mul(p))
            .saturating_add(self.dirs - 1)
            .saturating_add(self.rel_path_bytes)
    }

    /// The size of a directory listing `entries` whose subdirectories have
    /// the sizes `child` gives; `None` when one is unknown.
    fn of(entries: &[Entry], mut child: impl FnMut(&Entry) -> Option<SubtreeSize>) -> Option<Self> {
        let mut size = SubtreeSize {
            entries: entries.len() as u64,
            name_bytes: 0,
            dirs: 1,
            rel_path_bytes: 0,
            depth: 0,
            symlinks: false,
        };
        for e in entries {
            size.name_bytes += e.name.len() as u64;
            size.symlinks |= e.kind == EntryKind::Symlink;
            if e.kind != EntryKind::Dir {
                continue;
            }
            let c = child(e)?;
            let n = e.name.len() as u64;
            size.entries += c.entries;
            size.name_bytes += c.name_bytes;
            size.dirs += c.dirs;
            // The child's own path is `name`; each below it `name/rel`.
            size.rel_path_bytes += c.dirs * n + (c.dirs - 1) + c.rel_path_bytes;
            size.depth = size.depth.max(c.depth + 1);
            size.symlinks |= c.symlinks;
        }
        Some(size)
    }

    /// Keeps the size of every subtree an index decoded whole (`dirs`,
    /// with `counted` the subtrees it added from kept sizes); a subtree cut
    /// by the depth limit is not whole and is not kept.
    fn keep_all(
        facts: &Facts,
        root: ObjectId,
        dirs: &FastMap<String, Listing>,
        counted: &FastMap<String, SubtreeSize>,
    ) {
        // Deepest first, each path's depth counted once.
        let mut paths: Vec<&String> = dirs.keys().collect();
        paths.sort_by_cached_key(|p| {
            std::cmp::Reverse(p.bytes().filter(|b| *b == b'/').count() + usize::from(!p.is_empty()))
        });
        let mut sizes: FastMap<&str, Option<SubtreeSize>> = FastMap::default();
        // Each decoded directory's id is in its parent's listing: its size
        // is kept as its parent's is computed.
        let mut ids: Vec<(ObjectId, SubtreeSize)> = Vec::new();
        for dir in paths {
            let size = SubtreeSize::of(&dirs[dir], |e| {
                let p = if dir.is_empty() {
                    e.name.clone()
                } else {
                    format!("{dir}/{}", e.name)
                };
                if let Some(size) = counted.get(&p) {
                    return Some(*size);
                }
                let size = sizes.get(p.as_str()).copied().flatten()?;
                ids.push((e.id, size));
                Some(size)
            });
            sizes.insert(dir.as_str(), size);
        }
        if let Some(Some(size)) = sizes.get("") {
            ids.push((root, *size));
        }
        for (id, size) in ids {
            facts.put_record(SubtreeSize::key(id), size.encode());
        }
    }
}

/// An open repository.
pub struct GitRepo {
    repo: Mutex<Repository>,
    workdir: Option<PathBuf>,
    blobs: Arc<BlobCache>,
    /// Tree objects decoded by this run (see [`TreeListings`]).
    listings: Arc<TreeListings>,
    /// Facts kept between runs, when a cache is used: the sizes of
    /// subtrees indexed before ([`SubtreeSize`]).
    facts: std::sync::OnceLock<Arc<Facts>>,
    /// Spare handles for blob reads (see `SharedRepo::read`).
    handles: Arc<Mutex<Vec<Repository>>>,
    shallow: bool,
    git_dir: PathBuf,
}

impl GitRepo {
    /// Finds the repository containing `start` (searching upward).
    ///
    /// # Errors
    /// [`RepoError::NotARepo`] when there is none.
    pub(crate) fn discover(start: &Path) -> Result<GitRepo, RepoError> {
        if !start.exists() {
            return Err(RepoError::NoSuchDirectory(start.display().to_string()));
        }
        let repo = Repository::discover(start)
            .map_err(|_| RepoError::NotARepo(start.display().to_string()))?;
        Ok(Self::from_repo(repo))
    }

    /// Opens exactly the repository at `dir` (no upward search).
    ///
    /// # Errors
    /// [`RepoError::NotARepo`] when `dir` is not a repository.
    pub fn open(dir: &Path) -> Result<GitRepo, RepoError> {
        let repo =
            Repository::open(dir).map_err(|_| RepoError::NotARepo(dir.display().to_string()))?;
        Ok(Self::from_repo(repo))
    }

    fn from_repo(repo: Repository) -> GitRepo {
        // Like git itself, trust that an object read by id has that id:
        // hashing every blob again on read is a sixth of a cold run's reads.
        git2::opts::strict_hash_verification(false);
        // Every object is read once per run (blobs land in our own cache):
        // libgit2's object cache would only hold copies.
        git2::opts::enable_caching(false);
        let workdir = repo.workdir().map(Path::to_path_buf);
        let shallow = repo.is_shallow();
        let git_dir = repo.path().to_path_buf();
        GitRepo {
            git_dir,
            repo: Mutex::new(repo),
            workdir,
            blobs: Arc::new(BlobCache::default()),
            listings: Arc::default(),
            facts: std::sync::OnceLock::new(),
            handles: Arc::default(),
            shallow,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Repository> {
        self.repo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Uses `facts` (kept between runs) for the trees indexed from now on
    /// and hands them out to this run's other readers ([`GitRepo::facts`]);
    /// the first call wins.
    pub(crate) fn keep_facts(&self, facts: Arc<Facts>) {
        let _ = self.facts.set(facts);
    }

    /// The facts given to [`GitRepo::keep_facts`].
    #[must_use]
    pub(crate) fn facts(&self) -> Option<Arc<Facts>> {
        self.facts.get().cloned()
    }

    /// The working directory, if the repository is not bare.
    #[must_use]
    pub(crate) fn workdir(&self) -> Option<&Path> {
        self.workdir.as_deref()
    }

    /// The git directory (`.git`, or the repository itself when bare).
    #[must_use]
    pub(crate) fn git_dir(&self) -> &Path {
        &self.git_dir
    }

    /// The first object this run found missing or corrupt, described for
    /// a person: a damaged repository is one error of the run, not a
    /// render failure of each app that reads it.
    #[must_use]
    pub(crate) fn damaged(&self) -> Option<&str> {
        self.blobs.damaged.get().map(String::as_str)
    }

    /// How many blobs this run read from the object database (every later
    /// read of the same id, at any revision, is served from memory).
    #[must_use]
    pub(crate) fn blob_reads(&self) -> usize {
        self.blobs.reads.load(Ordering::Relaxed)
    }

    /// How many tree objects this run decoded (each at most once).
    #[must_use]
    pub(crate) fn trees_decoded(&self) -> usize {
        self.listings.decoded.load(Ordering::Relaxed)
    }

    /// Whether this is a shallow clone.
    #[must_use]
    pub(crate) fn is_shallow(&self) -> bool {
        self.shallow
    }

    /// The tree of a commit.
    ///
    /// # Errors
    /// An id that is not a commit in this repository.
    pub fn commit_tree(&self, commit: &str) -> Result<Arc<dyn Tree>, RepoError> {
        // A handle of its own, so that two trees can be indexed at once.
        let repo = self
            .shared()
            .take_handle()
            .map_err(|e| RepoError::Git(e.to_string()))?;
        let tree = self.index_commit(&repo, commit);
        self.shared().give_back(repo);
        tree
    }

    fn index_commit(&self, repo: &Repository, commit: &str) -> Result<Arc<dyn Tree>, RepoError> {
        let g = |e: git2::Error| RepoError::Git(e.message().to_string());
        let oid = Oid::from_str(commit).map_err(g)?;
        let root = repo.find_commit(oid).map_err(g)?.tree_id();
        self.index_root(repo, root, &commit[..commit.len().min(12)], self.shared())
    }

    /// Indexes the tree `root` (its listings decoded through `repo`), its
    /// blobs read through `store`; `commit` names it in messages.
    fn index_root(
        &self,
        repo: &Repository,
        root: Oid,
        commit: &str,
        store: SharedRepo,
    ) -> Result<Arc<dyn Tree>, RepoError> {
        let g = |e: git2::Error| RepoError::Git(e.message().to_string());
        let facts = self.facts.get().map(Arc::as_ref);
        let mut dirs: FastMap<String, Listing> = FastMap::default();
        // Subtrees counted from their kept size instead of being decoded.
        let mut counted: FastMap<String, SubtreeSize> = FastMap::default();
        let mut symlinks = false;
        let mut stack = vec![(String::new(), root)];
        // Trees another thread was decoding when this walk reached them,
        // listed once the rest is done (by then they are usually decoded).
        let mut later = Vec::new();
        // Of two entries with one name, the one in the first directory by
        // path is reported, whatever order the walk took.
        let mut two_named: Option<(String, String)> = None;
        let (mut entries_seen, mut bytes_seen) = (0u64, 0u64);
        let too_large = |entries: u64, bytes: u64| {
            entries > super::MAX_ENTRIES as u64 || bytes > super::MAX_INDEX_BYTES as u64
        };
        loop {
            let (dir, id, wait) = match stack.pop() {
                Some((dir, id)) => (dir, id, false),
                None => match later.pop() {
                    Some((dir, id)) => (dir, id, true),
                    None => break,
                },
            };
            // A tree id is its content: the two revisions of a diff, indexed
            // side by side, decode each tree they share once.
            let entries = match self.listings.get_or_decode(repo, id, wait) {
                None => {
                    later.push((dir, id));
                    continue;
                }
                Some(Ok(entries)) => entries,
                Some(Err(Undecodable::Git(m))) => return Err(RepoError::Git(m)),
                Some(Err(Undecodable::TwoNamed(name))) => {
                    if two_named.as_ref().is_none_or(|(d, _)| dir < *d) {
                        two_named = Some((dir, name));
                    }
                    continue;
                }
            };
            bytes_seen = bytes_seen.saturating_add(dir.len() as u64);
            for e in entries.iter() {
                entries_seen += 1;
                bytes_seen = bytes_seen.saturating_add(e.name.len() as u64);
                symlinks |= e.kind == EntryKind::Symlink;
                if too_large(entries_seen, bytes_seen) {
                    return Err(RepoError::TreeTooLarge(commit.to_string()));
                }
                // Directories at the depth limit are listed but not read:
                // listing them is a `TooDeep` error.
                if e.kind == EntryKind::Dir && super::depth(&dir) + 1 < super::MAX_DEPTH {
                    let p = if dir.is_empty() {
                        e.name.clone()
                    } else {
                        format!("{dir}/{}", e.name)
                    };
                    // A subtree indexed whole by an earlier run adds what it
                    // counted then, when it lies wholly above the depth limit
                    // here: the totals, and so the limits, are the same as
                    // decoding it would give.
                    let kept = facts
                        .and_then(|f| SubtreeSize::kept(f, e.id))
                        .filter(|s| super::depth(&p) + (s.depth as usize) < super::MAX_DEPTH);
                    if let Some(size) = kept {
                        entries_seen = entries_seen.saturating_add(size.entries);
                        bytes_seen = bytes_seen.saturating_add(size.path_and_name_bytes(p.len()));
                        symlinks |= size.symlinks;
                        if too_large(entries_seen, bytes_seen) {
                            return Err(RepoError::TreeTooLarge(commit.to_string()));
                        }
                        counted.insert(p, size);
                        continue;
                    }
                    stack.push((p, Oid::from_bytes(&e.id.0).map_err(g)?));
                }
            }
            dirs.insert(dir, entries);
        }
        if let Some((dir, name)) = two_named {
            return Err(RepoError::Git(format!(
                "the tree of commit `{commit}` has two entries named `{name}` in `{dir}` once their names, which are not UTF-8, are read; gitops-lint cannot tell them apart"
            )));
        }
        if let Some(f) = facts {
            SubtreeSize::keep_all(f, oid_to_id(root), &dirs, &counted);
        }
        let lazy = (!counted.is_empty()).then(|| Arc::clone(&self.listings));
        Ok(Arc::new(IndexedTree {
            label: commit.to_string(),
            root_id: oid_to_id(root),
            dirs,
            store: BlobStore::Git(store),
            symlinks,
            lazy: lazy.map(|listings| LazyListings {
                listings,
                decoded: std::sync::RwLock::default(),
            }),
        }))
    }

    /// The staged content (what the next commit will contain).
    ///
    /// # Errors
    /// An unreadable index.
    pub(crate) fn index_tree(&self) -> Result<Arc<dyn Tree>, RepoError> {
        let repo = self.lock();
        let g = |e: git2::Error| RepoError::Git(e.message().to_string());
        let index = repo.index().map_err(g)?;
        let mut files: Vec<(String, EntryKind, ObjectId)> = Vec::new();
        for e in index.iter() {
            // Stage bits live in flags 0x3000; only stage 0 is the staged content.
            if (e.flags >> 12) & 0x3 != 0 {
                continue;
            }
            let mut path = String::from_utf8_lossy(&e.path).into_owned();
            if super::depth(&path) > super::MAX_DEPTH {
                // Keep the directory at the limit (listing it is an error);
                // what lies below is not indexed.
                let segs: Vec<&str> = path.split('/').take(super::MAX_DEPTH + 1).collect();
                path = segs.join("/");
            }
            let kind = match e.mode {
                0o120_000 => EntryKind::Symlink,
                0o160_000 => EntryKind::Submodule,
                _ => EntryKind::File,
            };
            files.push((path, kind, oid_to_id(e.id)));
        }
        drop(repo);
        let (dirs, root_id) = build_dirs(files);
        let dirs = dirs.into_iter().map(|(k, v)| (k, v.into())).collect();
        Ok(Arc::new(IndexedTree::new(
            "INDEX".to_string(),
            root_id,
            dirs,
            BlobStore::Git(self.shared()),
        )))
    }

    /// Paths whose working-directory or staged content differs from `HEAD`
    /// (untracked files included, an untracked directory as one entry;
    /// ignored ones not), sorted. Empty for a
    /// bare repository.
    #[must_use]
    pub(crate) fn uncommitted_paths(&self) -> Vec<String> {
        if self.workdir.is_none() {
            return Vec::new();
        }
        let repo = self.lock();
        let mut opts = git2::StatusOptions::new();
        opts.include_untracked(true)
            .recurse_untracked_dirs(false)
            .include_ignored(false)
            .exclude_submodules(true);
        let Ok(statuses) = repo.statuses(Some(&mut opts)) else {
            return Vec::new();
        };
        let mut out: Vec<String> = statuses
            .iter()
            .filter(|s| !s.status().is_empty() && !s.status().contains(git2::Status::IGNORED))
            .filter_map(|s| s.path().ok().map(str::to_string))
            .collect();
        out.sort();
        out
    }

    /// The working directory as a tree (files git ignores are left out).
    ///
    /// # Errors
    /// A bare repository.
    pub(crate) fn worktree(&self) -> Result<Arc<dyn Tree>, RepoError> {
        let dir = self.workdir.clone().ok_or_else(|| {
            RepoError::Git("the repository is bare: it has no working directory".into())
        })?;
        let ignored = {
            let repo = self.lock();
            let mut opts = git2::StatusOptions::new();
            opts.include_ignored(true)
                .include_untracked(false)
                .recurse_ignored_dirs(false);
            let mut out = Vec::new();
            if let Ok(st) = repo.statuses(Some(&mut opts)) {
                for s in st.iter() {
                    if s.status().contains(git2::Status::IGNORED) {
                        if let Ok(p) = s.path() {
                            out.push(p.trim_end_matches('/').to_string());
                        }
                    }
                }
            }
            out
        };
        Ok(Arc::new(DirTree::new(dir, ignored)))
    }

    fn shared(&self) -> SharedRepo {
        SharedRepo {
            path: self.git_dir.clone(),
            blobs: Arc::clone(&self.blobs),
            handles: Arc::clone(&self.handles),
            overlay: None,
        }
    }
}

/// Builds a directory map from a flat list of files, with git-compatible tree ids.
fn build_dirs(
    files: Vec<(String, EntryKind, ObjectId)>,
) -> (FastMap<String, Vec<Entry>>, ObjectId) {
    let mut dirs: FastMap<String, Vec<Entry>> = FastMap::default();
    dirs.insert(String::new(), Vec::new());
    let mut subdirs: HashMap<String, std::collections::BTreeSet<String>> = HashMap::new();
    for (path, kind, id) in files {
        let (parent, name) = match path.rfind('/') {
            Some(i) => (path[..i].to_string(), path[i + 1..].to_string()),
            None => (String::new(), path.clone()),
        };
        dirs.entry(parent.clone())
            .or_default()
            .push(Entry { name, kind, id });
        // register each ancestor directory
        let mut child = parent;
        while !child.is_empty() {
            let (p, n) = match child.rfind('/') {
                Some(i) => (child[..i].to_string(), child[i + 1..].to_string()),
                None => (String::new(), child.clone()),
            };
            let fresh = subdirs.entry(p.clone()).or_default().insert(n);
            dirs.entry(child.clone()).or_default();
            if !fresh {
                break;
            }
            child = p;
        }
    }
    // compute tree ids bottom-up (longest paths first)
    let mut keys: Vec<String> = dirs.keys().cloned().collect();
    keys.sort_by_key(|k| {
        std::cmp::Reverse(if k.is_empty() {
            0
        } else {
            k.matches('/').count() + 1
        })
    });
    let mut ids: HashMap<String, ObjectId> = HashMap::new();
    for k in keys {
        let mut entries = dirs.remove(&k).unwrap_or_default();
        if let Some(subs) = subdirs.get(&k) {
            for s in subs {
                let p = if k.is_empty() {
                    s.clone()
                } else {
                    format!("{k}/{s}")
                };
                let id = ids.get(&p).copied().unwrap_or(ObjectId([0; 20]));
                entries.push(Entry {
                    name: s.clone(),
                    kind: EntryKind::Dir,
                    id,
                });
            }
        }
        entries.sort_by(|a, b| a.name.cmp(&b.name));
        ids.insert(k.clone(), git_tree_id(&entries));
        dirs.insert(k, entries);
    }
    let root = ids.get("").copied().unwrap_or(ObjectId([0; 20]));
    (dirs, root)
}

/// The id git gives a tree object with these entries.
pub(crate) fn git_tree_id(entries: &[Entry]) -> ObjectId {
    let mut sorted: Vec<&Entry> = entries.iter().collect();
    // git sorts tree entries as if directory names ended in '/'
    let key = |e: &Entry| {
        let mut k = e.name.as_bytes().to_vec();
        if e.kind == EntryKind::Dir {
            k.push(b'/');
        }
        k
    };
    sorted.sort_by_key(|e| key(e));
    let mut buf = Vec::new();
    for e in sorted {
        let mode: &[u8] = match e.kind {
            EntryKind::Dir => b"40000",
            EntryKind::Symlink => b"120000",
            EntryKind::Submodule => b"160000",
            EntryKind::File => b"100644",
        };
        buf.extend_from_slice(mode);
        buf.push(b' ');
        buf.extend_from_slice(e.name.as_bytes());
        buf.push(0);
        buf.extend_from_slice(&e.id.0);
    }
    oid_to_id(Oid::hash_object(ObjectType::Tree, &buf).unwrap_or(Oid::ZERO_SHA1))
}

/// The id git gives a blob with these bytes.
pub(crate) fn git_blob_id(bytes: &[u8]) -> ObjectId {
    oid_to_id(Oid::hash_object(ObjectType::Blob, bytes).unwrap_or(Oid::ZERO_SHA1))
}

/// A handle for reading blobs from any thread: git2 repositories are not
/// `Sync`, so one is opened lazily behind a lock and blobs are cached.
#[derive(Clone)]
struct SharedRepo {
    path: PathBuf,
    blobs: Arc<BlobCache>,
    handles: Arc<Mutex<Vec<Repository>>>,
    /// The handle whose in-memory object database holds what a merge
    /// wrote (a merged tree's new blobs and trees): read when the
    /// repository lacks an object.
    overlay: Option<Arc<Mutex<Repository>>>,
}

/// Why a blob was not read from one handle.
enum BlobRead {
    Git(git2::Error),
    TooLarge(u64),
}

/// The bytes of blob `oid` read through `repo`, its size checked before
/// anything is inflated.
fn read_blob(repo: &Repository, oid: Oid) -> Result<Arc<[u8]>, BlobRead> {
    let (size, _) = repo
        .odb()
        .and_then(|odb| odb.read_header(oid))
        .map_err(BlobRead::Git)?;
    if size as u64 > super::MAX_BLOB_BYTES {
        return Err(BlobRead::TooLarge(size as u64));
    }
    repo.find_blob(oid)
        .map(|blob| Arc::<[u8]>::from(blob.content()))
        .map_err(BlobRead::Git)
}

impl SharedRepo {
    /// A git2 handle is used by one thread at a time: each user takes one
    /// from the pool (opening another when all are busy) and gives it back,
    /// so reads run in parallel.
    fn take_handle(&self) -> Result<Repository, SourceError> {
        let taken = self
            .handles
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .pop();
        match taken {
            Some(r) => Ok(r),
            None => Repository::open(&self.path).map_err(|e| io(&e)),
        }
    }

    fn give_back(&self, repo: Repository) {
        self.handles
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(repo);
    }

    fn blob(&self, id: ObjectId, path: &str) -> Result<Arc<[u8]>, SourceError> {
        let slot = self.blobs.slot(&id);
        let mut slot = slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(b) = slot.as_ref() {
            return Ok(Arc::clone(b));
        }
        // A failed read leaves the slot empty: the next reader tries again
        // and reports the error itself. So does a large blob: it is not kept.
        let bytes = self.read(id, path)?;
        if bytes.len() <= super::MAX_CACHED_BLOB_BYTES {
            *slot = Some(Arc::clone(&bytes));
        }
        Ok(bytes)
    }

    fn read(&self, id: ObjectId, path: &str) -> Result<Arc<[u8]>, SourceError> {
        let oid = Oid::from_bytes(&id.0).map_err(|e| io(&e))?;
        let repo = self.take_handle()?;
        let mut read = read_blob(&repo, oid);
        self.give_back(repo);
        if let (Err(BlobRead::Git(e)), Some(overlay)) = (&read, &self.overlay) {
            if e.code() == git2::ErrorCode::NotFound {
                let repo = overlay
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                read = read_blob(&repo, oid);
            }
        }
        let bytes = match read {
            Ok(b) => b,
            Err(BlobRead::TooLarge(size)) => {
                return Err(SourceError::TooLarge(path.to_string(), size))
            }
            Err(BlobRead::Git(e)) => {
                if is_damage(&e) {
                    let _ = self
                        .blobs
                        .damaged
                        .set(format!("object {oid} (`{path}`): {}", e.message()));
                }
                return Err(SourceError::Io(format!("`{path}`: {}", e.message())));
            }
        };
        self.blobs.reads.fetch_add(1, Ordering::Relaxed);
        Ok(bytes)
    }

    /// The listing of tree `oid`, decoded through a handle of the pool,
    /// else (a tree a merge wrote) through the overlay.
    fn decode(&self, listings: &TreeListings, oid: Oid) -> Result<Listing, SourceError> {
        let repo = self.take_handle()?;
        let mut decoded = listings.get_or_decode(&repo, oid, true);
        self.give_back(repo);
        if let (Some(Err(Undecodable::Git(_))), Some(overlay)) = (&decoded, &self.overlay) {
            let repo = overlay
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            decoded = listings.get_or_decode(&repo, oid, true);
        }
        match decoded {
            Some(Ok(l)) => Ok(l),
            Some(Err(Undecodable::Git(m))) => Err(SourceError::Io(m)),
            Some(Err(Undecodable::TwoNamed(n))) => Err(SourceError::Io(format!(
                "two entries are named `{n}` once their names, which are not UTF-8, are read"
            ))),
            None => Err(SourceError::Io("could not be read".to_string())),
        }
    }
}

/// The paths a merge left in conflict, each once, quoted, sorted, at most
/// ten named.
fn conflicting_paths(index: &git2::Index) -> String {
    const SHOWN: usize = 10;
    let mut paths: std::collections::BTreeSet<String> = std::collections::BTreeSet::new();
    if let Ok(conflicts) = index.conflicts() {
        for c in conflicts.flatten() {
            for e in [c.ancestor, c.our, c.their].into_iter().flatten() {
                paths.insert(String::from_utf8_lossy(&e.path).into_owned());
            }
        }
    }
    let mut out: Vec<String> = paths.iter().take(SHOWN).map(|p| format!("`{p}`")).collect();
    if paths.len() > SHOWN {
        out.push(format!("and {} more", paths.len() - SHOWN));
    }
    if out.is_empty() {
        return "paths it does not name".to_string();
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_commits_indexed_side_by_side_decode_each_shared_tree_once() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = |p: &str, b: &str| (p.to_string(), b.as_bytes().to_vec());
        let base = vec![
            file("a/x.yaml", "a: 1\n"),
            file("b/y.yaml", "b: 1\n"),
            file("c/d/z.yaml", "c: 1\n"),
        ];
        let mut head = base.clone();
        head[1] = file("b/y.yaml", "b: 2\n");
        let base =
            write_commit(dir.path(), "main", None, &base, "base").unwrap_or_else(|e| panic!("{e}"));
        let head = write_commit(dir.path(), "head", Some("main"), &head, "head")
            .unwrap_or_else(|e| panic!("{e}"));
        let repo = GitRepo::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let (b, h) = rayon::join(|| repo.commit_tree(&base), || repo.commit_tree(&head));
        let (b, h) = (
            b.unwrap_or_else(|e| panic!("{e}")),
            h.unwrap_or_else(|e| panic!("{e}")),
        );
        // Base: the root, a, b, c and c/d; head adds its root and b only.
        assert_eq!(repo.listings.decoded.load(Ordering::Relaxed), 7);
        let id = |t: &Arc<dyn Tree>, p: &str| t.entry(p).ok().flatten().map(|e| e.id);
        assert_eq!(id(&b, "c/d/z.yaml"), id(&h, "c/d/z.yaml"));
        assert_ne!(id(&b, "b/y.yaml"), id(&h, "b/y.yaml"));
        assert_eq!(id(&h, "b/y.yaml"), Some(git_blob_id(b"b: 2\n")));
        let names = |t: &Arc<dyn Tree>| -> Vec<String> {
            t.list_raw("c/d")
                .unwrap_or_default()
                .into_iter()
                .map(|e| e.name)
                .collect()
        };
        assert_eq!(names(&h), vec!["z.yaml".to_string()]);
        assert_eq!(names(&b), names(&h));
    }
}
