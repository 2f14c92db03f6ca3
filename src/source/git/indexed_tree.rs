//! A tree read from git through the index built up front ([`IndexedTree`]).

use crate::source::{Entry, EntryKind, FastMap, ObjectId, SourceError, Tree};
use git2::Oid;
use std::borrow::Cow;
use std::sync::Arc;

use super::{io, Listing, SharedRepo, TreeListings};

pub(super) enum BlobStore {
    Git(SharedRepo),
}

/// A tree whose directory structure was read up front (a commit or the
/// index), except for subtrees an earlier run indexed whole: those are
/// counted from their kept size and decoded when first read.
pub(super) struct IndexedTree {
    pub(super) label: String,
    pub(super) root_id: ObjectId,
    pub(super) dirs: FastMap<String, Listing>,
    pub(super) store: BlobStore,
    pub(super) symlinks: bool,
    /// How the directories not in `dirs` are read, when some are not.
    pub(super) lazy: Option<LazyListings>,
}

/// The directories of an [`IndexedTree`] decoded on first read.
pub(super) struct LazyListings {
    /// Shared with the run's other trees.
    pub(super) listings: Arc<TreeListings>,
    /// By path, as they were read. Read far more often than written: a
    /// warm run's proofs look thousands of paths up from both cores.
    pub(super) decoded: std::sync::RwLock<FastMap<String, Listing>>,
}

impl IndexedTree {
    pub(super) fn new(
        label: String,
        root_id: ObjectId,
        dirs: FastMap<String, Listing>,
        store: BlobStore,
    ) -> IndexedTree {
        let symlinks = dirs
            .values()
            .flat_map(|v| v.iter())
            .any(|e| e.kind == EntryKind::Symlink);
        IndexedTree {
            label,
            root_id,
            dirs,
            store,
            symlinks,
            lazy: None,
        }
    }

    /// The listing of directory `dir`, `None` when no directory is there
    /// (or it lies at the depth limit, whose directories are not read).
    /// An indexed one is borrowed: every worker reads the same few
    /// listings, and cloning their `Arc` makes the threads contend for its
    /// count.
    fn listing(&self, dir: &str) -> Result<Option<Cow<'_, Listing>>, SourceError> {
        if let Some(l) = self.dirs.get(dir) {
            return Ok(Some(Cow::Borrowed(l)));
        }
        let Some(lazy) = &self.lazy else {
            return Ok(None);
        };
        if let Some(l) = lazy
            .decoded
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(dir)
        {
            return Ok(Some(Cow::Owned(Arc::clone(l))));
        }
        if dir.is_empty() || crate::source::depth(dir) >= crate::source::MAX_DEPTH {
            return Ok(None);
        }
        let (parent, name) = match dir.rfind('/') {
            Some(i) => (&dir[..i], &dir[i + 1..]),
            None => ("", dir),
        };
        let Some(up) = self.listing(parent)? else {
            return Ok(None);
        };
        let Ok(i) = up.binary_search_by(|e| e.name.as_str().cmp(name)) else {
            return Ok(None);
        };
        if up[i].kind != EntryKind::Dir {
            return Ok(None);
        }
        let BlobStore::Git(store) = &self.store;
        let oid = Oid::from_bytes(&up[i].id.0).map_err(|e| io(&e))?;
        // The subtree was indexed whole before, under the same id.
        let listing = store
            .decode(&lazy.listings, oid)
            .map_err(|e| SourceError::Io(format!("`{dir}`: {e}")))?;
        lazy.decoded
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(dir.to_string(), Arc::clone(&listing));
        Ok(Some(Cow::Owned(listing)))
    }
}

impl Tree for IndexedTree {
    fn describe(&self) -> String {
        self.label.clone()
    }

    fn may_have_symlinks(&self) -> bool {
        self.symlinks
    }

    fn content_addressed(&self) -> bool {
        true
    }

    fn has_listing(&self, dir: &str) -> bool {
        self.dirs.contains_key(dir)
            || self.lazy.as_ref().is_none_or(|lazy| {
                lazy.decoded
                    .read()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .contains_key(dir)
            })
    }

    fn entry(&self, path: &str) -> Result<Option<Entry>, SourceError> {
        if path.is_empty() {
            return Ok(Some(Entry {
                name: String::new(),
                kind: EntryKind::Dir,
                id: self.root_id,
            }));
        }
        if crate::source::depth(path) > crate::source::MAX_DEPTH {
            return Err(SourceError::TooDeep(path.to_string()));
        }
        let (parent, name) = match path.rfind('/') {
            Some(i) => (&path[..i], &path[i + 1..]),
            None => ("", path),
        };
        let Some(entries) = self.listing(parent)? else {
            return Ok(None);
        };
        Ok(entries
            .binary_search_by(|e| e.name.as_str().cmp(name))
            .ok()
            .map(|i| entries[i].clone()))
    }

    fn list_raw(&self, dir: &str) -> Result<Vec<Entry>, SourceError> {
        if crate::source::depth(dir) >= crate::source::MAX_DEPTH {
            return match self.entry(dir)? {
                Some(e) if e.kind == EntryKind::Dir => Err(SourceError::TooDeep(dir.to_string())),
                Some(_) => Err(SourceError::NotADir(dir.to_string())),
                None => Err(SourceError::NotFound(dir.to_string())),
            };
        }
        match self.listing(dir)? {
            Some(v) => Ok(v.to_vec()),
            None => match self.entry(dir)? {
                Some(_) => Err(SourceError::NotADir(dir.to_string())),
                None => Err(SourceError::NotFound(dir.to_string())),
            },
        }
    }

    fn read_raw(&self, path: &str) -> Result<Arc<[u8]>, SourceError> {
        let e = self
            .entry(path)?
            .ok_or_else(|| SourceError::NotFound(path.to_string()))?;
        match e.kind {
            EntryKind::File | EntryKind::Symlink => {}
            EntryKind::Dir => return Err(SourceError::NotAFile(path.to_string())),
            EntryKind::Submodule => return Err(SourceError::Submodule(path.to_string())),
        }
        match &self.store {
            BlobStore::Git(r) => r.blob(e.id, path),
        }
    }
}
