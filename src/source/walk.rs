//! The one walker of a [`Tree`]: depth first, each directory's entries in
//! name order, a subdirectory's entries visited before its later siblings
//! (the order of Go's `filepath.Walk`, which Argo CD's repo-server uses).
//!
//! A [`Visitor`] decides how a directory is listed (raw, through symlinks,
//! or recorded by a render), whether a subdirectory is entered, and when
//! the walk stops. The walk keeps its own stack, so depth costs no native
//! stack; listings deeper than [`super::MAX_DEPTH`] fail in the tree.

use super::{path, Entry, EntryKind, Tree};

/// What a visitor wants next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Go on; for a directory entry, enter it.
    Continue,
    /// For a directory entry: do not enter it. For [`Visitor::enter`]:
    /// visit none of the directory's entries.
    Skip,
    /// End the walk now: [`walk`] returns `Ok(false)`.
    Stop,
    /// For a symlink entry the visitor resolved to a directory: enter it as
    /// one (a render that follows links lists it through the link). Elsewhere
    /// the same as [`Flow::Continue`].
    Follow,
}

/// What a walk does at each directory and entry.
pub(crate) trait Visitor {
    /// Why the walk failed.
    type Error;

    /// The entries of `dir`, sorted by name; `Ok(None)` leaves the
    /// directory out (neither entered nor left). The default lists it raw
    /// and leaves out a directory that cannot be listed.
    ///
    /// # Errors
    /// Whatever the visitor makes of a failed listing.
    fn list(&mut self, tree: &dyn Tree, dir: &str) -> Result<Option<Vec<Entry>>, Self::Error> {
        Ok(tree.list_raw(dir).ok())
    }

    /// `dir` was listed, before any of its entries is visited.
    ///
    /// # Errors
    /// Ends the walk with this error.
    fn enter(&mut self, _dir: &str, _entries: &[Entry]) -> Result<Flow, Self::Error> {
        Ok(Flow::Continue)
    }

    /// One entry of `dir`, whose repository-relative path is `path`. A
    /// directory is entered after this returns [`Flow::Continue`].
    ///
    /// # Errors
    /// Ends the walk with this error.
    fn entry(&mut self, dir: &str, path: &str, entry: &Entry) -> Result<Flow, Self::Error>;

    /// Every entry of `dir` (and of what was entered below it) was visited.
    ///
    /// # Errors
    /// Ends the walk with this error.
    fn leave(&mut self, _dir: &str) -> Result<(), Self::Error> {
        Ok(())
    }
}

/// One directory being walked: its path, listing and the next entry.
struct Frame {
    dir: String,
    entries: Vec<Entry>,
    next: usize,
}

/// Walks `tree` below directory `root` (`""` is the whole tree) with `v`.
/// Returns `Ok(false)` when the visitor stopped the walk, `Ok(true)` when
/// it ran to the end.
///
/// # Errors
/// The first error the visitor returns.
pub(crate) fn walk<V: Visitor + ?Sized>(
    tree: &dyn Tree,
    root: &str,
    v: &mut V,
) -> Result<bool, V::Error> {
    let mut stack: Vec<Frame> = Vec::new();
    if !open(tree, root.to_string(), v, &mut stack)? {
        return Ok(false);
    }
    while let Some(frame) = stack.last_mut() {
        let Some(entry) = frame.entries.get(frame.next).cloned() else {
            if let Some(done) = stack.pop() {
                v.leave(&done.dir)?;
            }
            continue;
        };
        frame.next += 1;
        let full = path::child(&frame.dir, &entry.name);
        match v.entry(&frame.dir, &full, &entry)? {
            Flow::Stop => return Ok(false),
            Flow::Follow => {
                if !open(tree, full, v, &mut stack)? {
                    return Ok(false);
                }
            }
            Flow::Continue if entry.kind == EntryKind::Dir => {
                if !open(tree, full, v, &mut stack)? {
                    return Ok(false);
                }
            }
            Flow::Skip | Flow::Continue => {}
        }
    }
    Ok(true)
}

/// Lists and enters `dir`, pushing it when its entries are to be visited.
/// `Ok(false)` when the visitor stopped the walk.
fn open<V: Visitor + ?Sized>(
    tree: &dyn Tree,
    dir: String,
    v: &mut V,
    stack: &mut Vec<Frame>,
) -> Result<bool, V::Error> {
    let Some(entries) = v.list(tree, &dir)? else {
        return Ok(true);
    };
    match v.enter(&dir, &entries)? {
        Flow::Stop => Ok(false),
        Flow::Skip => {
            v.leave(&dir)?;
            Ok(true)
        }
        Flow::Continue | Flow::Follow => {
            stack.push(Frame {
                dir,
                entries,
                next: 0,
            });
            Ok(true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::{write_commit, GitRepo};

    /// Records every event as a line.
    struct Log(Vec<String>, &'static str);

    impl Visitor for Log {
        type Error = ();
        fn enter(&mut self, dir: &str, _: &[Entry]) -> Result<Flow, ()> {
            self.0.push(format!("enter {dir}"));
            Ok(Flow::Continue)
        }
        fn entry(&mut self, _: &str, path: &str, _: &Entry) -> Result<Flow, ()> {
            self.0.push(path.to_string());
            Ok(if path == self.1 {
                Flow::Skip
            } else if path.ends_with("stop") {
                Flow::Stop
            } else {
                Flow::Continue
            })
        }
        fn leave(&mut self, dir: &str) -> Result<(), ()> {
            self.0.push(format!("leave {dir}"));
            Ok(())
        }
    }

    fn tree(files: &[&str]) -> (tempfile::TempDir, std::sync::Arc<dyn Tree>) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let files: Vec<(String, Vec<u8>)> = files
            .iter()
            .map(|f| ((*f).to_string(), b"x".to_vec()))
            .collect();
        let commit =
            write_commit(dir.path(), "main", None, &files, "t").unwrap_or_else(|e| panic!("{e}"));
        let repo = GitRepo::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let t = repo.commit_tree(&commit).unwrap_or_else(|e| panic!("{e}"));
        (dir, t)
    }

    #[test]
    fn a_subdirectory_is_walked_before_its_later_siblings_and_can_be_skipped() {
        let (_d, t) = tree(&["a/b/x", "a/b-c", "a/c/y", "z"]);
        let mut log = Log(Vec::new(), "a/c");
        assert_eq!(walk(t.as_ref(), "", &mut log), Ok(true));
        assert_eq!(
            log.0,
            [
                "enter ",
                "a",
                "enter a",
                "a/b",
                "enter a/b",
                "a/b/x",
                "leave a/b",
                "a/b-c",
                "a/c",
                "leave a",
                "z",
                "leave "
            ]
        );
        let mut log = Log(Vec::new(), "");
        assert_eq!(walk(t.as_ref(), "a/b", &mut log), Ok(true));
        assert_eq!(log.0, ["enter a/b", "a/b/x", "leave a/b"]);
    }

    #[test]
    fn a_stop_ends_the_walk_at_once_and_a_missing_root_walks_nothing() {
        let (_d, t) = tree(&["a/stop", "a/x", "b"]);
        let mut log = Log(Vec::new(), "");
        assert_eq!(walk(t.as_ref(), "", &mut log), Ok(false));
        assert_eq!(log.0, ["enter ", "a", "enter a", "a/stop"]);
        let mut log = Log(Vec::new(), "");
        assert_eq!(walk(t.as_ref(), "nowhere", &mut log), Ok(true));
        assert!(log.0.is_empty());
    }
}
