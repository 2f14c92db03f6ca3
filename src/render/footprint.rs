//! What a render can depend on besides its source spec, so that a source
//! whose footprint is the same at both revisions is known unchanged.

use std::sync::{Arc, Mutex};

use crate::source::{self, FastMap, Tree};

use super::{
    detect, has_explicit_type, helm, kept_footprint, kustomize, overrides, RenderContext,
    SourceSpec, SourceType,
};

/// Everything a render can depend on besides the source spec: the
/// subtrees it may read anything in, and single paths whose kind (file,
/// directory, absent) it looks at.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Footprint {
    /// Directories read below.
    pub subtrees: Vec<String>,
    /// Other paths looked at.
    pub entries: Vec<String>,
}

impl Footprint {
    pub(super) fn extend(&mut self, other: &Footprint) {
        self.subtrees.extend(other.subtrees.iter().cloned());
        self.entries.extend(other.entries.iter().cloned());
    }

    /// Leaves out the entries that lie in one of the subtrees: a subtree
    /// with the same id at both revisions holds the same entries, so they
    /// tell nothing more. (A kustomization names each of its files; at
    /// 10,000 apps they were half of every kept footprint.)
    pub(super) fn without_entries_in_subtrees(mut self) -> Footprint {
        let subtrees = &self.subtrees;
        self.entries.retain(|p| {
            !subtrees
                .iter()
                .any(|r| source::path::strip_dir(p, r).is_some())
        });
        self
    }
}

/// The footprints of the kustomization directories of one tree, by path: a
/// base included by many overlays is followed once. With facts kept
/// between runs, Kustomize sources' footprints are kept there too
/// ([`kept_footprint`]).
#[derive(Default)]
pub struct FootprintMemo {
    map: Mutex<FastMap<String, Arc<Footprint>>>,
    facts: Option<Arc<crate::cache::Facts>>,
}

/// Entries of a tree that a kept footprint's check found, by path (a few),
/// so that comparing them with another revision's looks none up again.
pub(crate) type SeenEntries = Vec<SeenEntry>;

/// A path and the entry a kept footprint's check found there.
pub(crate) type SeenEntry = (String, kept_footprint::Seen);

impl FootprintMemo {
    /// A memo that also reads and keeps footprints in `facts`.
    #[must_use]
    pub(crate) fn with_facts(facts: Option<Arc<crate::cache::Facts>>) -> FootprintMemo {
        FootprintMemo {
            map: Mutex::default(),
            facts,
        }
    }

    pub(super) fn get(&self, dir: &str) -> Option<Arc<Footprint>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(dir)
            .cloned()
    }

    pub(super) fn put(&self, dir: String, fp: Footprint) {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(dir, Arc::new(fp));
    }
}

/// The entry at `path` in `tree`: as a kept footprint's check found it
/// (`seen`), else looked up.
///
/// # Errors
/// The tree's, for a path looked up.
pub(crate) fn entry_in(
    tree: &dyn Tree,
    seen: &[SeenEntry],
    path: &str,
) -> Result<kept_footprint::Seen, source::SourceError> {
    match seen.iter().find(|(p, _)| p == path) {
        Some((_, s)) => Ok(*s),
        None => Ok(tree.entry(path)?.map(|e| (e.kind, e.id))),
    }
}

/// The entries at `path` in `tree` (whose kept footprint's check found
/// `seen`) and in `other`: the same without looking below when the
/// covering directory kept footprints are checked by has the same entry in
/// both.
#[must_use]
pub(crate) fn entries_in(
    tree: &dyn Tree,
    seen: &[SeenEntry],
    other: &dyn Tree,
    path: &str,
) -> Option<(kept_footprint::Seen, kept_footprint::Seen)> {
    let here = entry_in(tree, seen, path).ok()?;
    // Where the other tree's listing is at hand (it was indexed whole),
    // the entry itself costs less than its covering directories do.
    let parent = path.rfind('/').map_or("", |i| &path[..i]);
    if other.has_listing(parent) {
        return Some((here, other.entry(path).ok()?.map(|e| (e.kind, e.id))));
    }
    for cover in kept_footprint::covering(path) {
        let there = other.entry(cover).ok()?.map(|e| (e.kind, e.id));
        if entry_in(tree, seen, cover).ok()? == there {
            return Some((here, here));
        }
    }
    Some((here, other.entry(path).ok()?.map(|e| (e.kind, e.id))))
}

/// What a render of `spec` depends on, or `None` when that cannot be told
/// without rendering: plugins, and sources that fail to load. A directory
/// source reads only below its path; a kustomization only below the
/// kustomization directories it reaches ([`kustomize::footprint`]); a Helm
/// chart its directory, its value and parameter files ([`helm::footprint`]).
/// The parameter override files of the path count for every type.
#[must_use]
pub fn footprint(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
    memo: &FootprintMemo,
) -> Option<Footprint> {
    footprint_seen(cx, spec, memo).map(|(fp, _)| fp)
}

/// [`footprint`], with the entries of the tree found on the way when it
/// was kept between runs (none when it was computed).
pub(crate) fn footprint_seen(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
    memo: &FootprintMemo,
) -> Option<(Footprint, SeenEntries)> {
    // A plugin's discovery may look anywhere (`../` included): a source it
    // may claim is rendered every time, whatever was kept.
    if !has_explicit_type(spec) && spec.plugins.any_discovers() {
        return None;
    }
    let kept = memo
        .facts
        .as_deref()
        .and_then(|f| Some((f, kept_footprint::key(cx, spec)?)));
    if let Some(found) = kept.and_then(|(f, key)| kept_footprint::kept(f, cx.tree, key)) {
        return Some(found);
    }
    let spec = overrides::apply(cx, spec).ok()?;
    let spec = spec.as_ref();
    let source_type = detect(cx, spec).ok()?;
    let mut fp = match source_type {
        SourceType::Directory => Footprint {
            subtrees: vec![spec.path.clone()],
            entries: Vec::new(),
        },
        SourceType::Kustomize => kustomize::footprint(cx, spec, memo).ok()?,
        SourceType::Helm => helm::footprint(cx, spec).ok()?,
        SourceType::Plugin => return None,
    };
    fp.entries.extend(overrides::files(spec));
    let fp = fp.without_entries_in_subtrees();
    // A kustomization's footprint costs reads and parses to find, and a
    // directory's the listing that tells its type; both are kept. (Each
    // names its source directory, so a file added there is seen.)
    if matches!(source_type, SourceType::Kustomize | SourceType::Directory) {
        if let Some((f, key)) = kept {
            kept_footprint::keep(f, cx.tree, key, &fp);
        }
    }
    Some((fp, Vec::new()))
}
