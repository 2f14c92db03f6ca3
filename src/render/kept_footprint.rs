//! Footprints kept between runs ([`crate::cache`] records), so
//! that a warm run knows what an unchanged kustomization reads without
//! reading or parsing any of its files.
//!
//! A footprint names every path its computation looked at: the
//! directories it read below (the source's own, each kustomization
//! directory reached) and the single paths whose kind it looked at. In a
//! tree without symlinks, a computation that finds the same entry (kind
//! and object id, or nothing) at each of those paths reads the same bytes
//! and finds the same footprint. So the record keeps each path with the
//! entry found there, and is used only when the tree at hand has the same
//! entries at all of them; anything else is computed again. A record holds
//! up to two variants, so that the two revisions of a diff that see
//! different footprints for one spec keep one each.
//!
//! Each variant also keeps the entry at each path's covering directory (its
//! first two segments): where that entry is the same, so is every entry
//! below it, so a spec whose files lie in one unchanged directory is
//! checked by one lookup there, not by decoding every directory on the way
//! to each path.

use super::{Footprint, RenderContext, SourceSpec};
use std::io::Write as _;

use crate::cache::{Facts, RecordKey};
use crate::source::{EntryKind, ObjectId, Tree};

/// The record key of `spec`'s footprint in `cx`, or `None` when the tree
/// or the spec is not one whose footprint is kept: the tree must be
/// content-addressed and free of symlinks (a link's target is not in the
/// entries compared), and the spec must not read other trees (`ref:`
/// sources).
pub(super) fn key(cx: &RenderContext<'_>, spec: &SourceSpec) -> Option<crate::cache::Key> {
    if !cx.tree.content_addressed() || cx.tree.may_have_symlinks() || !spec.refs.is_empty() {
        return None;
    }
    let mut key = RecordKey::new("footprint-3");
    key.part(spec.path.as_bytes());
    // One buffer for the parts that are written out first.
    let mut scratch = Vec::with_capacity(64);
    for v in [&spec.directory, &spec.kustomize, &spec.helm, &spec.plugin] {
        scratch.clear();
        serde_json::to_writer(&mut scratch, v).ok()?;
        key.part(&scratch);
    }
    key.part(spec.app_name.as_bytes());
    key.part(spec.namespace.as_bytes());
    key.part(&(spec.env.len() as u64).to_le_bytes());
    for (k, v) in &spec.env {
        key.part(k.as_bytes());
        key.part(v.as_bytes());
    }
    key.part(spec.kustomize_build_options.as_bytes());
    let o = cx.options;
    scratch.clear();
    write!(
        scratch,
        "{:?} {:?} {:?} {} {:?}",
        o.helm,
        o.external_kustomize,
        o.helm_renderer,
        o.chart_cache.is_some(),
        o.argocd_version
    )
    .ok()?;
    key.part(&scratch);
    Some(key.finish())
}

/// Most variants kept for one spec.
const VARIANTS: usize = 2;

/// An entry as a record keeps it: kind and id, or nothing there.
pub(crate) type Seen = Option<(EntryKind, ObjectId)>;

/// The footprint kept under `key`, when every path one of its variants
/// names has the entry recorded with it in `tree`; with the entry each of
/// those paths (and covering directories) has there.
pub(super) fn kept(
    facts: &Facts,
    tree: &dyn Tree,
    key: crate::cache::Key,
) -> Option<(Footprint, super::SeenEntries)> {
    let bytes = facts.record(key)?;
    variants(&bytes)?.into_iter().find_map(|v| checked(v, tree))
}

/// The directories whose entries stand for `path`'s in a record: its first
/// segment, then its first two (the path itself when it has fewer).
pub(crate) fn covering(path: &str) -> [&str; 2] {
    // One scan for both cuts: every path of every kept footprint is cut.
    let mut slashes = memchr::memchr_iter(b'/', path.as_bytes());
    let first = slashes.next();
    let second = first.and_then(|_| slashes.next());
    let cut = |at: Option<usize>| at.map_or(path, |i| &path[..i]);
    [cut(first), cut(second)]
}

/// The variants of a record, or `None` when it is not as [`keep`] writes it.
fn variants(bytes: &[u8]) -> Option<Vec<&[u8]>> {
    let mut r = Reader(bytes);
    let n = usize::from(r.take(1)?[0]);
    if n > VARIANTS {
        return None;
    }
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let len = usize::try_from(r.u32()?).ok()?;
        out.push(r.take(len)?);
    }
    r.0.is_empty().then_some(out)
}

/// The footprint of one variant, when it holds in `tree`, with the
/// entries it found there.
fn checked(variant: &[u8], tree: &dyn Tree) -> Option<(Footprint, super::SeenEntries)> {
    let mut r = Reader(variant);
    let mut lists: [Vec<(String, Seen)>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for list in &mut lists {
        let n = r.u32()?;
        for _ in 0..n {
            let len = usize::try_from(r.u32()?).ok()?;
            let path = std::str::from_utf8(r.take(len)?).ok()?;
            let seen = match r.take(1)?[0] {
                0 => None,
                k => Some((kind_of_code(k)?, ObjectId(r.take(20)?.try_into().ok()?))),
            };
            list.push((path.to_string(), seen));
        }
    }
    if !r.0.is_empty() {
        return None;
    }
    let [subtrees, entries, covers] = lists;
    let now = |p: &str| tree.entry(p).ok().map(|e| e.map(|e| (e.kind, e.id)));
    // A covering directory with the entry it had holds the same entries
    // below it (a content id, in a tree without symlinks). The shallower
    // one is looked at first: looking a deeper one up lists its parent.
    // Covering directories are kept sorted (one out of order is not found,
    // and the record is then not used); each is looked up once.
    let mut looked: Vec<Option<Seen>> = vec![None; covers.len()];
    let mut found = Vec::with_capacity(covers.len() + subtrees.len() + entries.len());
    for (p, seen) in subtrees.iter().chain(&entries) {
        let mut held = false;
        for c in covering(p) {
            let at = covers.binary_search_by(|(k, _)| k.as_str().cmp(c)).ok()?;
            let then = covers[at].1;
            let here = match looked[at] {
                Some(h) => h,
                None => {
                    let h = now(c)?;
                    looked[at] = Some(h);
                    found.push((c.to_string(), h));
                    h
                }
            };
            if here == then {
                held = true;
                break;
            }
        }
        if !held && now(p)? != *seen {
            return None;
        }
        found.push((p.clone(), *seen));
    }
    let fp = Footprint {
        subtrees: subtrees.into_iter().map(|(p, _)| p).collect(),
        entries: entries.into_iter().map(|(p, _)| p).collect(),
    };
    Some((fp, found))
}

/// Keeps `fp`, found in `tree`, under `key`, with the entry at each path,
/// before the newest variant already kept there.
pub(super) fn keep(facts: &Facts, tree: &dyn Tree, key: crate::cache::Key, fp: &Footprint) {
    let Some(variant) = encode(tree, fp) else {
        return;
    };
    let old = facts.record(key);
    let mut kept = vec![variant.as_slice()];
    if let Some(older) = old.as_deref().and_then(variants) {
        kept.extend(older.into_iter().filter(|v| *v != variant.as_slice()));
    }
    kept.truncate(VARIANTS);
    let mut out = vec![u8::try_from(kept.len()).unwrap_or(0)];
    for v in kept {
        let Ok(len) = u32::try_from(v.len()) else {
            return;
        };
        out.extend_from_slice(&len.to_le_bytes());
        out.extend_from_slice(v);
    }
    facts.put_record(key, out);
}

/// One variant: each path of `fp` with the entry at it in `tree`, then
/// each covering directory of those paths with its entry.
fn encode(tree: &dyn Tree, fp: &Footprint) -> Option<Vec<u8>> {
    let mut covers: Vec<String> = fp
        .subtrees
        .iter()
        .chain(&fp.entries)
        .flat_map(|p| covering(p).map(str::to_string))
        .collect();
    covers.sort();
    covers.dedup();
    let mut out = Vec::new();
    for list in [&fp.subtrees, &fp.entries, &covers] {
        out.extend_from_slice(&u32::try_from(list.len()).ok()?.to_le_bytes());
        for path in list {
            // An entry that cannot be read now could not be checked later.
            let entry = tree.entry(path).ok()?;
            out.extend_from_slice(&u32::try_from(path.len()).ok()?.to_le_bytes());
            out.extend_from_slice(path.as_bytes());
            match entry {
                None => out.push(0),
                Some(e) => {
                    out.push(code_of_kind(e.kind));
                    out.extend_from_slice(&e.id.0);
                }
            }
        }
    }
    Some(out)
}

fn code_of_kind(kind: EntryKind) -> u8 {
    match kind {
        EntryKind::File => 1,
        EntryKind::Dir => 2,
        EntryKind::Symlink => 3,
        EntryKind::Submodule => 4,
    }
}

fn kind_of_code(code: u8) -> Option<EntryKind> {
    match code {
        1 => Some(EntryKind::File),
        2 => Some(EntryKind::Dir),
        3 => Some(EntryKind::Symlink),
        4 => Some(EntryKind::Submodule),
        _ => None,
    }
}

/// Reads a record front to back; every read past its end is `None`.
struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (head, rest) = self.0.split_at_checked(n)?;
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_covered_by_its_first_one_and_two_segments() {
        assert_eq!(covering("apps/a/overlays/prod"), ["apps", "apps/a"]);
        assert_eq!(covering("apps/a"), ["apps", "apps/a"]);
        assert_eq!(covering("apps"), ["apps", "apps"]);
        assert_eq!(covering(""), ["", ""]);
        assert_eq!(covering("a//b"), ["a", "a/"]);
        assert_eq!(covering("/a/b"), ["", "/a"]);
    }

    #[test]
    fn a_kept_footprint_is_used_only_while_every_path_it_names_is_the_same() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let facts = Facts::open(dir.path());
        let repo_dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let base: &[u8] = b"resources: [../b]";
        let branches = std::cell::Cell::new(0);
        // A commit's tree (content ids, as a kept footprint needs) with
        // `b/kustomization.yaml` holding `b`, `o/missing.yaml` when
        // `extra`, and an unrelated file holding `other`.
        let tree_with = |b: &[u8], extra: bool, other: &[u8]| {
            let mut files = vec![
                ("o/kustomization.yaml".to_string(), base.to_vec()),
                ("b/kustomization.yaml".to_string(), b.to_vec()),
                ("z/other.yaml".to_string(), other.to_vec()),
            ];
            if extra {
                files.push(("o/missing.yaml".to_string(), b"x".to_vec()));
            }
            branches.set(branches.get() + 1);
            let branch = format!("b{}", branches.get());
            let commit = crate::source::write_commit(repo_dir.path(), &branch, None, &files, "t")
                .unwrap_or_else(|e| panic!("{e}"));
            crate::source::GitRepo::open(repo_dir.path())
                .and_then(|r| r.commit_tree(&commit))
                .unwrap_or_else(|e| panic!("{e}"))
        };
        let tree = |b: &[u8], extra: bool| tree_with(b, extra, b"1");
        let fp = Footprint {
            subtrees: vec!["o".into()],
            entries: vec!["b/kustomization.yaml".into(), "o/missing.yaml".into()],
        };
        let key = crate::cache::Key([7; 20]);
        keep(&facts, &*tree(b"a", false), key, &fp);
        assert_eq!(
            kept(&facts, &*tree(b"a", false), key).map(|k| k.0),
            Some(fp.clone())
        );
        // A change outside the directories it names leaves it standing.
        assert_eq!(
            kept(&facts, &*tree_with(b"a", false, b"2"), key).map(|k| k.0),
            Some(fp.clone())
        );
        // A file it names differs: the record is stale.
        assert_eq!(kept(&facts, &*tree(b"b", false), key).map(|k| k.0), None);
        // Kept for the other tree too, each tree finds its own, and a
        // third one pushes out the oldest.
        keep(&facts, &*tree(b"b", false), key, &fp);
        assert_eq!(
            kept(&facts, &*tree(b"a", false), key).map(|k| k.0),
            Some(fp.clone())
        );
        assert_eq!(
            kept(&facts, &*tree(b"b", false), key).map(|k| k.0),
            Some(fp.clone())
        );
        keep(&facts, &*tree(b"c", false), key, &fp);
        assert_eq!(kept(&facts, &*tree(b"a", false), key).map(|k| k.0), None);
        assert_eq!(
            kept(&facts, &*tree(b"b", false), key).map(|k| k.0),
            Some(fp.clone())
        );
        keep(&facts, &*tree(b"a", false), key, &fp);
        // So does a path that was absent and is now there.
        assert_eq!(kept(&facts, &*tree(b"a", true), key).map(|k| k.0), None);
        // A damaged record is not used.
        let mut bytes = facts.record(key).map(|b| b.to_vec()).unwrap_or_default();
        bytes.truncate(bytes.len() - 3);
        facts.put_record(key, bytes);
        assert_eq!(kept(&facts, &*tree(b"a", false), key).map(|k| k.0), None);
    }
}
