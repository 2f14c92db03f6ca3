//! Which paths differ between two revisions' trees, found the way git
//! diffs trees: a directory whose id is the same at both is the same
//! throughout and is not opened, so the work follows the change, not the
//! repository.

use super::{EntryKind, FastMap, Tree};

/// Most differing paths recorded. A change larger than this is answered
/// path by path by the trees themselves ([`Changes::between`] gives none).
const MAX_CHANGED: usize = 200_000;

/// The paths whose entries differ between two content-addressed trees.
#[derive(Debug, Default)]
pub(crate) struct Changes {
    /// Each differing path, with whether it is a directory at both
    /// revisions (its entries were then compared too).
    differs: FastMap<String, bool>,
    /// Whether the root trees differ at all.
    root_differs: bool,
    /// Whether a path is at one revision only, has another kind at the
    /// other, or is a symlink or submodule that differs: the two trees then
    /// do not list the same paths.
    reshaped: bool,
}

impl Changes {
    /// The differences between `a` and `b`; `None` when either tree's ids
    /// are not git's ids of its content ([`Tree::content_addressed`]), a
    /// directory cannot be listed, or the change is over [`MAX_CHANGED`]
    /// paths: each path is then compared by looking it up.
    #[must_use]
    pub(crate) fn between(a: &dyn Tree, b: &dyn Tree) -> Option<Changes> {
        if !a.content_addressed() || !b.content_addressed() {
            return None;
        }
        let root = |t: &dyn Tree| t.entry("").ok().flatten().map(|e| (e.kind, e.id));
        let mut changes = Changes {
            root_differs: root(a)? != root(b)?,
            ..Changes::default()
        };
        if !changes.root_differs {
            return Some(changes);
        }
        let mut pending = vec![String::new()];
        while let Some(dir) = pending.pop() {
            // Each side's listing decoded on its own core: a directory of a
            // large fleet holds thousands of entries, and nothing else runs yet.
            let (here, there) = rayon::join(|| a.list_raw(&dir), || b.list_raw(&dir));
            let (here, there) = (here.ok()?, there.ok()?);
            // The walk below merges the two listings by name.
            let sorted = |l: &[super::Entry]| l.windows(2).all(|w| w[0].name < w[1].name);
            if !sorted(&here) || !sorted(&there) {
                return None;
            }
            let (mut i, mut j) = (0, 0);
            while i < here.len() || j < there.len() {
                let (x, y) = match (here.get(i), there.get(j)) {
                    (None, None) => break,
                    (Some(x), Some(y)) => match x.name.cmp(&y.name) {
                        std::cmp::Ordering::Equal => {
                            i += 1;
                            j += 1;
                            (Some(x), Some(y))
                        }
                        std::cmp::Ordering::Less => {
                            i += 1;
                            (Some(x), None)
                        }
                        std::cmp::Ordering::Greater => {
                            j += 1;
                            (None, Some(y))
                        }
                    },
                    (Some(x), None) => {
                        i += 1;
                        (Some(x), None)
                    }
                    (None, Some(y)) => {
                        j += 1;
                        (None, Some(y))
                    }
                };
                let key = |e: Option<&super::Entry>| e.map(|e| (e.kind, e.id));
                if key(x) == key(y) {
                    continue;
                }
                let name = x.or(y).map_or("", |e| e.name.as_str());
                let path = super::path::child(&dir, name);
                // Only a file's or a directory's content changed: the same
                // paths, of the same kinds, at both revisions.
                let same_shape = match (x, y) {
                    (Some(x), Some(y)) => {
                        x.kind == y.kind && matches!(x.kind, EntryKind::File | EntryKind::Dir)
                    }
                    _ => false,
                };
                changes.reshaped |= !same_shape;
                let is_dir = |e: Option<&super::Entry>| e.is_some_and(|e| e.kind == EntryKind::Dir);
                let both_dirs = is_dir(x) && is_dir(y);
                if both_dirs {
                    pending.push(path.clone());
                }
                changes.differs.insert(path, both_dirs);
                if changes.differs.len() > MAX_CHANGED {
                    return None;
                }
            }
        }
        Some(changes)
    }

    /// Whether the entry at `path` is the same in both trees: `None` when
    /// only looking it up can tell (it lies below a path that is a
    /// directory at one revision only, or the path is not in normal form).
    #[must_use]
    pub(crate) fn same(&self, path: &str) -> Option<bool> {
        if !self.root_differs {
            return Some(true);
        }
        if path.is_empty() {
            return Some(false);
        }
        if path
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..")
        {
            return None;
        }
        let mut end = 0;
        loop {
            let next = path[end..].find('/').map(|i| end + i);
            let prefix = &path[..next.unwrap_or(path.len())];
            // An entry that is the same at both revisions is the same
            // throughout below it.
            match (self.differs.get(prefix), next) {
                (None, _) => return Some(true),
                (Some(_), None) => return Some(false),
                (Some(false), Some(_)) => return None,
                (Some(true), Some(i)) => end = i + 1,
            }
        }
    }

    /// Whether both trees hold the same paths with the same kinds (files,
    /// directories, and symlinks and submodules that are the same at both):
    /// what lists paths alone, such as the ApplicationSet git generators'
    /// index, lists the same at both.
    #[must_use]
    pub(crate) fn same_shape(&self) -> bool {
        !self.reshaped
    }

    /// The paths that differ and are not a directory at both revisions:
    /// when both trees have the same shape ([`Changes::same_shape`]), the
    /// files whose content changed.
    pub(crate) fn changed_files(&self) -> impl Iterator<Item = &str> + '_ {
        self.differs
            .iter()
            .filter(|(_, dir_at_both)| !**dir_at_both)
            .map(|(path, _)| path.as_str())
    }

    /// How many paths differ.
    #[cfg(test)]
    #[must_use]
    pub(crate) fn len(&self) -> usize {
        self.differs.len()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::source::{write_commit, GitRepo};

    /// The trees of two commits holding `base` and `head`.
    fn trees(base: &[(&str, &str)], head: &[(&str, &str)]) -> (Arc<dyn Tree>, Arc<dyn Tree>) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let files = |fs: &[(&str, &str)]| -> Vec<(String, Vec<u8>)> {
            fs.iter()
                .map(|(p, b)| ((*p).to_string(), b.as_bytes().to_vec()))
                .collect()
        };
        let b = write_commit(dir.path(), "main", None, &files(base), "base")
            .unwrap_or_else(|e| panic!("{e}"));
        let h = write_commit(dir.path(), "head", Some("main"), &files(head), "head")
            .unwrap_or_else(|e| panic!("{e}"));
        let repo = GitRepo::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let tree = |c: &str| repo.commit_tree(c).unwrap_or_else(|e| panic!("{e}"));
        (tree(&b), tree(&h))
    }

    fn changes(base: &[(&str, &str)], head: &[(&str, &str)]) -> Changes {
        let (b, h) = trees(base, head);
        Changes::between(b.as_ref(), h.as_ref())
            .unwrap_or_else(|| panic!("commits are content addressed"))
    }

    #[test]
    fn only_the_change_differs() {
        let c = changes(
            &[
                ("apps/a/k.yaml", "a"),
                ("apps/b/k.yaml", "b"),
                ("top.yaml", "t"),
            ],
            &[
                ("apps/a/k.yaml", "a"),
                ("apps/b/k.yaml", "B"),
                ("top.yaml", "t"),
            ],
        );
        assert_eq!(c.same("apps/a/k.yaml"), Some(true));
        assert_eq!(c.same("apps/a"), Some(true));
        assert_eq!(c.same("apps/a/missing"), Some(true));
        assert_eq!(c.same("top.yaml"), Some(true));
        assert_eq!(c.same("apps/b/k.yaml"), Some(false));
        assert_eq!(c.same("apps/b"), Some(false));
        assert_eq!(c.same("apps/b/other"), Some(true));
        assert_eq!(c.same(""), Some(false));
        // apps, apps/b and apps/b/k.yaml: nothing else was opened.
        assert_eq!(c.len(), 3);
        // Only a file's content changed: the same paths at both.
        assert!(c.same_shape());
    }

    #[test]
    fn added_and_removed_paths_differ() {
        let c = changes(
            &[("a/old.yaml", "1"), ("keep.yaml", "k")],
            &[("a/new/x.yaml", "2"), ("keep.yaml", "k")],
        );
        assert_eq!(c.same("a/old.yaml"), Some(false));
        assert_eq!(c.same("a/new"), Some(false));
        assert_eq!(c.same("keep.yaml"), Some(true));
        assert!(!c.same_shape());
    }

    #[test]
    fn below_a_one_sided_directory_only_a_lookup_tells() {
        let c = changes(
            &[("x/y/z.yaml", "1"), ("keep.yaml", "k")],
            &[("x", "now a file"), ("keep.yaml", "k")],
        );
        assert_eq!(c.same("x"), Some(false));
        assert_eq!(c.same("x/y/z.yaml"), None);
        assert_eq!(c.same("keep.yaml"), Some(true));
        assert_eq!(c.same("./keep.yaml"), None);
        // A directory that became a file lists other paths.
        assert!(!c.same_shape());
    }

    #[test]
    fn identical_trees_differ_nowhere() {
        let c = changes(&[("a/b.yaml", "1")], &[("a/b.yaml", "1")]);
        assert_eq!(c.same(""), Some(true));
        assert_eq!(c.same("a/b.yaml"), Some(true));
        assert_eq!(c.len(), 0);
        assert!(c.same_shape());
    }

    #[test]
    fn a_file_added_in_a_directory_changes_the_shape() {
        let c = changes(
            &[("apps/a/k.yaml", "a")],
            &[("apps/a/k.yaml", "a"), ("apps/b/k.yaml", "b")],
        );
        assert!(!c.same_shape());
    }
}
