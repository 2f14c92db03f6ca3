//! A read-only tree held in memory: for fuzz entry points and tests that
//! need a repository without a git or directory behind it.

use std::collections::BTreeMap;
use std::sync::Arc;

use super::{path, Entry, EntryKind, ObjectId, SourceError, Tree};

/// A read-only tree held in memory, for entry points that need a repository.
pub struct MemTree {
    files: BTreeMap<String, Arc<[u8]>>,
}

impl MemTree {
    /// A tree holding exactly `files` (path, bytes); directories are implied.
    #[must_use]
    pub fn new(files: &[(&str, &[u8])]) -> MemTree {
        MemTree {
            files: files
                .iter()
                .map(|(p, b)| ((*p).to_string(), Arc::from(*b)))
                .collect(),
        }
    }

    fn id(bytes: &[u8]) -> ObjectId {
        use sha2::Digest as _;
        let digest = sha2::Sha256::digest(bytes);
        let mut id = [0u8; 20];
        id.copy_from_slice(&digest[..20]);
        ObjectId(id)
    }

    fn is_dir(&self, dir: &str) -> bool {
        dir.is_empty()
            || self
                .files
                .keys()
                .any(|p| p.strip_prefix(dir).is_some_and(|r| r.starts_with('/')))
    }
}

impl Tree for MemTree {
    fn describe(&self) -> String {
        "MEMORY".to_string()
    }

    fn entry(&self, path: &str) -> Result<Option<Entry>, SourceError> {
        let name = path::file_name(path).to_string();
        if let Some(b) = self.files.get(path) {
            return Ok(Some(Entry {
                name,
                kind: EntryKind::File,
                id: Self::id(b),
            }));
        }
        Ok(self.is_dir(path).then(|| Entry {
            name,
            kind: EntryKind::Dir,
            id: Self::id(path.as_bytes()),
        }))
    }

    fn list_raw(&self, dir: &str) -> Result<Vec<Entry>, SourceError> {
        if !self.is_dir(dir) {
            return Err(SourceError::NotFound(dir.to_string()));
        }
        let mut names = std::collections::BTreeSet::new();
        for p in self.files.keys() {
            let rest = if dir.is_empty() {
                Some(p.as_str())
            } else {
                p.strip_prefix(dir).and_then(|r| r.strip_prefix('/'))
            };
            if let Some(rest) = rest {
                names.insert(rest.split('/').next().unwrap_or(rest).to_string());
            }
        }
        let mut out = Vec::new();
        for n in names {
            let full = if dir.is_empty() {
                n.clone()
            } else {
                format!("{dir}/{n}")
            };
            if let Some(e) = self.entry(&full)? {
                out.push(e);
            }
        }
        Ok(out)
    }

    fn read_raw(&self, path: &str) -> Result<Arc<[u8]>, SourceError> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| SourceError::NotFound(path.to_string()))
    }
}
