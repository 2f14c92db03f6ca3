//! A read-only view of one tree of the repository: a git commit, the index
//! (staged content) or the working directory.
//!
//! Knows nothing of YAML or Kubernetes. Paths are repository-relative,
//! `/`-separated, with no leading `/`; the root is `""`.

pub(crate) mod changes;
mod dir;
mod git;
mod mem;
pub(crate) mod path;
pub(crate) mod walk;

use std::fmt;
use std::sync::Arc;

pub use dir::DirTree;
pub(crate) use git::Judged;
pub use git::{add_remote, write_commit, GitRepo, RepoError, RevisionRange};
pub use mem::MemTree;

/// A hash map with a fast hasher (foldhash), for maps that are looked up
/// and never walked in order: paths, object ids, resource ids. `SipHash` was
/// a tenth of a one-app diff on a large repository.
pub(crate) type FastMap<K, V> = std::collections::HashMap<K, V, foldhash::fast::RandomState>;
/// A set like [`FastMap`].
pub(crate) type FastSet<K> = std::collections::HashSet<K, foldhash::fast::RandomState>;

/// An empty [`FastMap`] with room for `n` entries.
pub(crate) fn fast_map<K, V>(n: usize) -> FastMap<K, V> {
    FastMap::with_capacity_and_hasher(n, foldhash::fast::RandomState::default())
}

/// An empty [`FastSet`] with room for `n` entries.
pub(crate) fn fast_set<K>(n: usize) -> FastSet<K> {
    FastSet::with_capacity_and_hasher(n, foldhash::fast::RandomState::default())
}

/// Deepest directory nesting read, in path segments. Deeper directories
/// cannot be listed ([`SourceError::TooDeep`]): every walker of a tree stays
/// shallow, and no real repository nests this deep (git cannot check out a
/// path longer than the file system allows).
pub(crate) const MAX_DEPTH: usize = 256;

/// Most entries (files, directories, links) indexed for one revision. A
/// tree whose entries point at the same subtree again and again (a "git
/// bomb") would otherwise expand to billions of paths from a few objects.
pub(crate) const MAX_ENTRIES: usize = 1_000_000;

/// Most bytes of names and directory paths indexed for one revision; long
/// names repeated by a git bomb are bounded by this rather than by
/// [`MAX_ENTRIES`] alone.
pub(crate) const MAX_INDEX_BYTES: usize = 256 * 1024 * 1024;

/// The number of segments of a repository-relative path (`""` has none).
#[must_use]
pub(crate) fn depth(path: &str) -> usize {
    path.split('/').filter(|s| !s.is_empty()).count()
}

/// Identity of file or directory content. For git trees this is the git
/// object id; for the working directory it is the id git would give the
/// same content, so unchanged files compare equal across revisions.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectId(pub [u8; 20]);

/// An object id names its content, so facts about it are kept under it.
impl From<ObjectId> for crate::cache::Key {
    fn from(id: ObjectId) -> Self {
        crate::cache::Key(id.0)
    }
}

impl fmt::Display for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for ObjectId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ObjectId({self})")
    }
}

/// What a directory entry is, as recorded in the tree (symlinks are not resolved).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link; `Tree::read` resolves it inside the repository.
    Symlink,
    /// A git submodule (its content is not in this repository).
    Submodule,
}

/// One entry of a directory listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// File name within its directory.
    pub name: String,
    /// What the entry is.
    pub(crate) kind: EntryKind,
    /// Content identity (for a directory: its tree id).
    pub(crate) id: ObjectId,
}

/// Why something could not be read from a tree.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SourceError {
    /// The path does not exist in this tree.
    #[error("`{0}` does not exist")]
    NotFound(String),
    /// The path, or a symlink on the way, leads outside the repository.
    #[error("`{0}` leads outside the repository")]
    OutsideRepo(String),
    /// Expected a file, found something else.
    #[error("`{0}` is not a file")]
    NotAFile(String),
    /// Expected a directory, found something else.
    #[error("`{0}` is not a directory")]
    NotADir(String),
    /// Too many symlinks in a chain (or a loop).
    #[error("`{0}`: too many levels of symbolic links")]
    SymlinkLoop(String),
    /// A path inside a git submodule, whose content this repository does not hold.
    #[error("`{0}` is inside a git submodule, which is not read")]
    Submodule(String),
    /// A directory nested deeper than [`MAX_DEPTH`].
    #[error("`{0}` is nested more than {max} directories deep, deeper than gitops-lint reads", max = MAX_DEPTH)]
    TooDeep(String),
    /// A file larger than [`MAX_BLOB_BYTES`], refused before it is read.
    #[error("`{0}` is {1} bytes, larger than the {max} bytes gitops-lint reads", max = MAX_BLOB_BYTES)]
    TooLarge(String, u64),
    /// Git or the file system failed.
    #[error("{0}")]
    Io(String),
}

/// The largest file read from a tree: a blob's size is read from its object
/// header first, so a larger one is never inflated.
pub(crate) const MAX_BLOB_BYTES: u64 = 64 << 20;

/// Blobs up to this size stay in the run's blob cache (both revisions share
/// them); larger ones are handed out and not kept, so a few large files
/// cannot pin hundreds of megabytes for the whole run.
pub(crate) const MAX_CACHED_BLOB_BYTES: usize = 1 << 20;

/// A read-only tree of files.
pub trait Tree: Send + Sync {
    /// Short description for output: a commit id, `INDEX` or `WORKTREE`.
    fn describe(&self) -> String;
    /// The entry at `path` without following a final symlink, or `None` when absent.
    /// The root `""` is a directory.
    ///
    /// # Errors
    /// A parent that is not a directory, or an I/O failure.
    fn entry(&self, path: &str) -> Result<Option<Entry>, SourceError>;
    /// The entries of directory `dir`, sorted by name.
    ///
    /// # Errors
    /// A missing path or one that is not a directory.
    fn list_raw(&self, dir: &str) -> Result<Vec<Entry>, SourceError>;
    /// The bytes of the file at `path` (which must not be a symlink; see [`read`]).
    ///
    /// # Errors
    /// A missing path or one that is not a regular file.
    fn read_raw(&self, path: &str) -> Result<Arc<[u8]>, SourceError>;
    /// Whether the tree may hold a symlink; `false` lets [`resolve`] skip
    /// walking a path component by component.
    fn may_have_symlinks(&self) -> bool {
        true
    }
    /// Whether every id is git's object id of exactly the content read
    /// through this tree (a commit or the index): facts about an id then
    /// hold for any tree and run ([`facts`]). Not for the working
    /// directory, whose files may change between listing and reading.
    fn content_addressed(&self) -> bool {
        false
    }
    /// Whether the entries of directory `dir` are at hand: looking one up
    /// decodes no tree object. Only a tree indexed lazily says no.
    fn has_listing(&self, _dir: &str) -> bool {
        true
    }
}

/// Resolves `path` to a path with no symlinks in it, refusing any link that
/// leaves the repository (Argo CD rejects out-of-bounds symlinks).
///
/// # Errors
/// Escaping links, loops, and missing components.
pub(crate) fn resolve(tree: &dyn Tree, path: &str) -> Result<String, SourceError> {
    resolve_found(tree, path).map(|(real, _)| real)
}

/// [`resolve`], with the entry that its lookup found at the resolved path
/// when that lookup is the only one (a tree without symlinks), else `None`
/// (not looked up). A reader that needs both then searches a directory's
/// listing once, not twice: an app-of-apps reads each file of a directory
/// of thousands.
///
/// # Errors
/// Those of [`resolve`].
pub(crate) fn resolve_found(
    tree: &dyn Tree,
    path: &str,
) -> Result<(String, Option<Entry>), SourceError> {
    // With no symlink in the tree, an existing path resolves to its normal
    // form (a missing one takes the walk below, which names what is missing).
    if !tree.may_have_symlinks() {
        if let Some(normal) = path::normalize(path) {
            if let Some(e) = tree.entry(&normal)? {
                return Ok((normal, Some(e)));
            }
        }
    }
    let mut hops = 0;
    let mut done: Vec<String> = Vec::new();
    let mut todo: Vec<String> = path::split(path).into_iter().rev().collect();
    while let Some(seg) = todo.pop() {
        if seg == ".." {
            if done.pop().is_none() {
                return Err(SourceError::OutsideRepo(path.to_string()));
            }
            continue;
        }
        if seg == "." || seg.is_empty() {
            continue;
        }
        done.push(seg);
        let cur = done.join("/");
        match tree.entry(&cur)? {
            None => return Err(SourceError::NotFound(cur)),
            Some(e) if e.kind == EntryKind::Symlink => {
                hops += 1;
                if hops > 40 {
                    return Err(SourceError::SymlinkLoop(path.to_string()));
                }
                let target = tree.read_raw(&cur)?;
                let target = String::from_utf8_lossy(&target).into_owned();
                if target.starts_with('/') {
                    return Err(SourceError::OutsideRepo(path.to_string()));
                }
                done.pop();
                for s in path::split(&target).into_iter().rev() {
                    todo.push(s);
                }
            }
            Some(e) if e.kind == EntryKind::Submodule && !todo.is_empty() => {
                return Err(SourceError::Submodule(cur));
            }
            Some(_) => {}
        }
    }
    Ok((done.join("/"), None))
}

/// Reads a file, following symlinks that stay inside the repository.
///
/// # Errors
/// See [`resolve`] and [`Tree::read_raw`].
pub fn read(tree: &dyn Tree, path: &str) -> Result<Arc<[u8]>, SourceError> {
    let real = resolve(tree, path)?;
    tree.read_raw(&real)
}

/// Lists a directory, following symlinks to it that stay inside the repository.
///
/// # Errors
/// See [`resolve`] and [`Tree::list_raw`].
pub fn list(tree: &dyn Tree, dir: &str) -> Result<Vec<Entry>, SourceError> {
    let real = resolve(tree, dir)?;
    tree.list_raw(&real)
}

/// The kind of what `path` names once symlinks are followed, or `None` if absent.
///
/// # Errors
/// See [`resolve`].
pub(crate) fn kind_of(tree: &dyn Tree, path: &str) -> Result<Option<EntryKind>, SourceError> {
    match resolve(tree, path) {
        Ok(real) => Ok(tree.entry(&real)?.map(|e| e.kind)),
        Err(SourceError::NotFound(_)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// An empty tree: the base of a repository's first commit.
pub(crate) struct EmptyTree;

impl Tree for EmptyTree {
    fn describe(&self) -> String {
        "EMPTY".into()
    }
    fn entry(&self, path: &str) -> Result<Option<Entry>, SourceError> {
        Ok(path.is_empty().then(|| Entry {
            name: String::new(),
            kind: EntryKind::Dir,
            id: ObjectId([0; 20]),
        }))
    }
    fn list_raw(&self, dir: &str) -> Result<Vec<Entry>, SourceError> {
        if dir.is_empty() {
            Ok(Vec::new())
        } else {
            Err(SourceError::NotFound(dir.to_string()))
        }
    }
    fn read_raw(&self, path: &str) -> Result<Arc<[u8]>, SourceError> {
        Err(SourceError::NotFound(path.to_string()))
    }
}
