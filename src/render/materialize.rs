//! Copies part of a revision's tree to disk, for the external binaries
//! (`helm template`, `kubectl kustomize`) that read a directory: each file
//! is read through the render context (so the copy is recorded as read,
//! symlinks inside the repository are followed and none may leave it),
//! each directory is created, submodules are left out.

use std::path::Path;

use super::{RenderContext, RenderError};
use crate::source::walk::{self, Flow, Visitor};
use crate::source::{Entry, EntryKind, Tree};

/// What a symlink whose target does not exist becomes in the copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dangling {
    /// The copy fails: helm walks a chart with `sympath.Walk` (helm
    /// `internal/sympath/walk.go` `symwalk`), which fails
    /// on a link it cannot resolve ("error evaluating symlink").
    Fail,
    /// The link is left out: Kustomize reads only the files a
    /// kustomization names, so a link nothing names does not matter, and
    /// one that is named is missing from the copy as it is from the tree.
    Skip,
}

/// Copies directory `dir` of the tree into `root` at the same relative
/// path.
///
/// # Errors
/// A file that cannot be read or written; with [`Dangling::Fail`], a
/// symlink to nothing.
pub(crate) fn copy_dir(
    cx: &RenderContext<'_>,
    dir: &str,
    root: &Path,
    dangling: Dangling,
) -> Result<(), RenderError> {
    let mut copy = Copy { cx, root, dangling };
    copy.create(dir)?;
    walk::walk(cx.tree, dir, &mut copy).map(|_| ())
}

struct Copy<'a, 'c> {
    cx: &'a RenderContext<'c>,
    root: &'a Path,
    dangling: Dangling,
}

impl Copy<'_, '_> {
    fn create(&self, dir: &str) -> Result<(), RenderError> {
        let target = self.root.join(dir);
        std::fs::create_dir_all(&target)
            .map_err(|e| RenderError::content(format!("cannot write {}: {e}", target.display())))
    }
}

impl Visitor for Copy<'_, '_> {
    type Error = RenderError;

    fn list(&mut self, _: &dyn Tree, dir: &str) -> Result<Option<Vec<Entry>>, RenderError> {
        self.cx.list(dir).map(Some)
    }

    fn entry(&mut self, _: &str, full: &str, e: &Entry) -> Result<Flow, RenderError> {
        let kind = match e.kind {
            EntryKind::Symlink => match self.cx.kind_of(full)? {
                Some(k) => k,
                None if self.dangling == Dangling::Skip => return Ok(Flow::Skip),
                // Reading it fails with the tree's own words.
                None => EntryKind::File,
            },
            k => k,
        };
        match kind {
            EntryKind::Dir => {
                self.create(full)?;
                Ok(Flow::Follow)
            }
            EntryKind::File => {
                let bytes = self.cx.read(full)?;
                let target = self.root.join(full);
                std::fs::write(&target, &bytes).map_err(|e| {
                    RenderError::content(format!("cannot write {}: {e}", target.display()))
                })?;
                Ok(Flow::Continue)
            }
            EntryKind::Symlink | EntryKind::Submodule => Ok(Flow::Skip),
        }
    }
}
