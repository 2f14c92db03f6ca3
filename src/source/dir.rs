//! The working directory as a [`Tree`]: local files, ids computed the way git
//! computes them so unchanged files match the committed ones.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::git::{git_blob_id, git_tree_id};
use super::{Entry, EntryKind, ObjectId, SourceError, Tree};

/// A directory on disk, read lazily. `.git` and ignored paths are left out.
pub struct DirTree {
    root: PathBuf,
    ignored: Vec<String>,
    listings: Mutex<HashMap<String, Arc<Vec<Entry>>>>,
}

impl DirTree {
    /// A tree rooted at `root`, leaving out the repository-relative `ignored` paths.
    #[must_use]
    pub fn new(root: PathBuf, ignored: Vec<String>) -> DirTree {
        DirTree {
            root,
            ignored,
            listings: Mutex::new(HashMap::new()),
        }
    }

    fn abs(&self, path: &str) -> PathBuf {
        if path.is_empty() {
            self.root.clone()
        } else {
            self.root.join(path)
        }
    }

    fn is_ignored(&self, path: &str) -> bool {
        path == ".git" || self.ignored.iter().any(|i| i == path)
    }

    fn listing(&self, dir: &str) -> Result<Arc<Vec<Entry>>, SourceError> {
        if let Some(l) = self
            .listings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(dir)
        {
            return Ok(Arc::clone(l));
        }
        if super::depth(dir) >= super::MAX_DEPTH {
            return Err(SourceError::TooDeep(dir.to_string()));
        }
        let abs = self.abs(dir);
        let rd = std::fs::read_dir(&abs).map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => SourceError::NotFound(dir.to_string()),
            _ if abs.is_file() => SourceError::NotADir(dir.to_string()),
            _ => SourceError::Io(format!("`{dir}`: {e}")),
        })?;
        let mut out = Vec::new();
        for de in rd {
            let de = de.map_err(|e| SourceError::Io(format!("`{dir}`: {e}")))?;
            // Never dropped: a name that is not UTF-8 makes the directory
            // unreadable, so whatever reads it is reported.
            let name = de.file_name().into_string().map_err(|raw| {
                SourceError::Io(format!(
                    "`{dir}` holds a file whose name is not UTF-8 (`{}`), which gitops-lint cannot read from the working tree; commit it and run on the commit",
                    raw.to_string_lossy()
                ))
            })?;
            let rel = super::path::child(dir, &name);
            if self.is_ignored(&rel) {
                continue;
            }
            let ft = de
                .file_type()
                .map_err(|e| SourceError::Io(format!("`{rel}`: {e}")))?;
            let (kind, id) = if ft.is_symlink() {
                let target = std::fs::read_link(de.path())
                    .map_err(|e| SourceError::Io(format!("`{rel}`: {e}")))?;
                let t = target.to_string_lossy().into_owned();
                (EntryKind::Symlink, git_blob_id(t.as_bytes()))
            } else if ft.is_dir() {
                if de.path().join(".git").exists() {
                    (EntryKind::Submodule, ObjectId([0; 20]))
                } else if super::depth(&rel) >= super::MAX_DEPTH {
                    // Listed, never read: its id is a placeholder.
                    (EntryKind::Dir, ObjectId([0; 20]))
                } else {
                    let sub = self.listing(&rel)?;
                    (EntryKind::Dir, git_tree_id(&sub))
                }
            } else if !ft.is_file() {
                // A FIFO, socket or device: git cannot hold one, and
                // reading a FIFO would block for ever.
                continue;
            } else {
                let len = de
                    .metadata()
                    .map_err(|e| SourceError::Io(format!("`{rel}`: {e}")))?
                    .len();
                if len > super::MAX_BLOB_BYTES {
                    // Never read: an id of its own, and reading it is an error.
                    (
                        EntryKind::File,
                        git_blob_id(format!("{rel}\0{len}\0too large").as_bytes()),
                    )
                } else {
                    let bytes = std::fs::read(de.path())
                        .map_err(|e| SourceError::Io(format!("`{rel}`: {e}")))?;
                    (EntryKind::File, git_blob_id(&bytes))
                }
            };
            out.push(Entry { name, kind, id });
        }
        out.sort_by(|a, b| a.name.cmp(&b.name));
        let out = Arc::new(out);
        self.listings
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(dir.to_string(), Arc::clone(&out));
        Ok(out)
    }
}

impl Tree for DirTree {
    fn describe(&self) -> String {
        "WORKTREE".to_string()
    }

    fn entry(&self, path: &str) -> Result<Option<Entry>, SourceError> {
        if path.is_empty() {
            let l = self.listing("")?;
            return Ok(Some(Entry {
                name: String::new(),
                kind: EntryKind::Dir,
                id: git_tree_id(&l),
            }));
        }
        let (parent, name) = match path.rfind('/') {
            Some(i) => (&path[..i], &path[i + 1..]),
            None => ("", path),
        };
        let l = match self.listing(parent) {
            Ok(l) => l,
            Err(SourceError::NotFound(_)) => return Ok(None),
            Err(e) => return Err(e),
        };
        Ok(l.iter().find(|e| e.name == name).cloned())
    }

    fn list_raw(&self, dir: &str) -> Result<Vec<Entry>, SourceError> {
        Ok(self.listing(dir)?.as_ref().clone())
    }

    fn read_raw(&self, path: &str) -> Result<Arc<[u8]>, SourceError> {
        let e = self
            .entry(path)?
            .ok_or_else(|| SourceError::NotFound(path.to_string()))?;
        let abs = self.abs(path);
        match e.kind {
            EntryKind::Symlink => {
                let t = std::fs::read_link(&abs)
                    .map_err(|e| SourceError::Io(format!("`{path}`: {e}")))?;
                Ok(Arc::from(t.to_string_lossy().as_bytes()))
            }
            EntryKind::File => {
                let len = std::fs::metadata(&abs)
                    .map_err(|e| SourceError::Io(format!("`{path}`: {e}")))?
                    .len();
                if len > super::MAX_BLOB_BYTES {
                    return Err(SourceError::TooLarge(path.to_string(), len));
                }
                std::fs::read(&abs)
                    .map(Arc::from)
                    .map_err(|e| SourceError::Io(format!("`{path}`: {e}")))
            }
            EntryKind::Dir => Err(SourceError::NotAFile(path.to_string())),
            EntryKind::Submodule => Err(SourceError::Submodule(path.to_string())),
        }
    }
}
