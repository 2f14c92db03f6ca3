//! Recognising, without rendering it, an app that renders identically at
//! both revisions of a diff, so that neither revision renders it.
//!
//! A render of a directory or Kustomize source reads only below a few
//! directories and looks at the kind of a few other paths
//! ([`render::footprint`]). When each of those has the same id at the
//! other revision, no symlink lies in or on the way to them (its target
//! could be anywhere) and the Application object is identical, the render
//! there reads the same bytes and yields the same resources: the app
//! contributes no prune, creation or change. Each revision defers such apps
//! on its own; [`settle`] then renders every deferral the other revision
//! does not confirm, so an app is left unrendered only when both agree.
//!
//! Some apps are always rendered, because other parts of a run read their
//! resources whatever changed: an app whose files mention `Application` may
//! render Applications or ApplicationSets (app-of-apps discovery needs
//! them), one whose files mention `StorageClass` may provide the class
//! another app's PersistentVolumeClaim binds with (GL008 looks across
//! apps), one whose files mention `AppProject` may render the project that
//! permits or refuses other apps (GL015), and one with a CRD or cluster Secret file holds what the
//! inventory scan reads (a broken one is reported unless an app's own
//! failure already says so). A kind is spelt out in some file unless it is
//! assembled: by Kustomize replacements (a `namePrefix` copied into `kind`),
//! JSON patch `copy`/`move`, `varReference` configurations, or YAML escapes
//! and line continuations in double-quoted strings. Files using the
//! Kustomize features count as mentioning anything; a file with a
//! backslash is parsed and its strings are checked as YAML reads them.

use std::sync::{Arc, Mutex};

use rayon::prelude::*;

use super::{
    apps_beside, render_fresh, source_spec_in, source_tree, App, AppStatus, Inventory,
    InventoryInput,
};
use crate::cache::{Facts, Question};
use crate::render::{self, ParseCache, RenderContext};
use crate::source::walk::Flow;
use crate::source::{self, EntryKind, FastMap, ObjectId, Tree};
use goyaml::Dialect;

/// Strings that make a file's app render every time (see the module doc).
const KINDS_READ_ACROSS_APPS: [&str; 5] = [
    "Application",
    "AppProject",
    "StorageClass",
    "CustomResourceDefinition",
    "secret-type",
];

/// Kustomize features that build a string from parts of others.
const STRING_ASSEMBLY: [&str; 5] = ["eplacement", "delimiter", "varReference", "copy", "move"];

/// Whether a file may make its app's resources matter to other apps.
fn may_matter_elsewhere(bytes: &[u8], id: ObjectId, cache: &ParseCache) -> bool {
    static FINDERS: std::sync::OnceLock<Vec<memchr::memmem::Finder<'static>>> =
        std::sync::OnceLock::new();
    let finders = FINDERS.get_or_init(|| {
        KINDS_READ_ACROSS_APPS
            .iter()
            .chain(&STRING_ASSEMBLY)
            .map(|m| memchr::memmem::Finder::new(m.as_bytes()))
            .collect()
    });
    if finders.iter().any(|f| f.find(bytes).is_some()) {
        return true;
    }
    if memchr::memchr(b'\\', bytes).is_none() {
        return false;
    }
    // Escapes can spell any letter: look at the strings YAML reads.
    match cache.get_or_parse_as(id, bytes, Dialect::Kyaml).as_ref() {
        Ok(docs) => docs.iter().any(|d| mentions(&d.value)),
        Err(_) => true,
    }
}

fn mentions(v: &serde_json::Value) -> bool {
    use serde_json::Value;
    let text = |s: &str| KINDS_READ_ACROSS_APPS.iter().any(|m| s.contains(m));
    match v {
        Value::String(s) => text(s),
        Value::Array(a) => a.iter().any(mentions),
        Value::Object(m) => m.iter().any(|(k, v)| text(k) || mentions(v)),
        _ => false,
    }
}

/// What deferring needs: the other revision's tree and a memo of subtree
/// checks shared by both revisions (tree ids are content ids).
pub struct Deferral {
    /// The tree of the other revision of the diff.
    pub(crate) other: Arc<dyn Tree>,
    /// Shared memo.
    pub(crate) subtrees: Arc<SubtreeMemo>,
    /// Footprints of this revision's kustomization directories.
    pub(crate) footprints: render::FootprintMemo,
    /// The paths that differ between the two trees, when a tree diff found
    /// them: most entries are then compared without looking them up.
    pub(crate) changes: Option<Arc<source::changes::Changes>>,
}

/// Per tree id: whether the subtree is free of symlinks, submodules and
/// files that `may_matter_elsewhere`.
///
/// With [`Facts`] kept between runs, the answers for the subtrees of a
/// content-addressed tree ([`Tree::content_addressed`]) are read from and
/// added to them alone (they hold this run's answers too), and so is the
/// inventory scan's byte test of each blob.
///
/// Other answers are kept here, split by the id's first byte (ids are
/// digests): both workers look up every app's directories, and one lock
/// made them wait on each other.
#[derive(Default)]
pub(crate) struct SubtreeMemo {
    plain: [Mutex<PlainAnswers>; MEMO_SHARDS],
    facts: Option<Arc<Facts>>,
}

/// One shard of [`SubtreeMemo`]'s answers.
type PlainAnswers = FastMap<ObjectId, bool>;

/// Shards of [`SubtreeMemo`].
const MEMO_SHARDS: usize = 16;

impl SubtreeMemo {
    /// A memo that also reads and records `facts`.
    #[must_use]
    pub(crate) fn with_facts(facts: Arc<Facts>) -> SubtreeMemo {
        SubtreeMemo {
            plain: Default::default(),
            facts: Some(facts),
        }
    }

    /// The facts kept between runs, if any.
    pub(super) fn facts(&self) -> Option<&Facts> {
        self.facts.as_deref()
    }

    /// The facts kept between runs, if any, to be held by another reader.
    pub(super) fn shared_facts(&self) -> Option<Arc<Facts>> {
        self.facts.clone()
    }

    /// The known answer for subtree `id` of `tree`: this run's, else one
    /// kept between runs (only for content-addressed trees).
    fn known(&self, tree: &dyn Tree, id: ObjectId) -> Option<bool> {
        // The facts hold this run's answers beside the kept ones, and are
        // read without a lock: a warm run of 10,000 apps asks about 20,000
        // subtrees once each, and copying every answer into this memo
        // doubled the cost of asking.
        match self.kept_for(tree) {
            Some(f) => f.get(Question::PlainSubtree, id),
            None => self.lock(id).get(&id).copied(),
        }
    }

    fn record(&self, tree: &dyn Tree, id: ObjectId, plain: bool) {
        match self.kept_for(tree) {
            Some(f) => f.put(Question::PlainSubtree, id, plain),
            None => {
                self.lock(id).insert(id, plain);
            }
        }
    }

    /// The facts that answer for `tree`: kept facts describe content, so
    /// only a content-addressed tree's.
    fn kept_for(&self, tree: &dyn Tree) -> Option<&Facts> {
        self.facts.as_deref().filter(|_| tree.content_addressed())
    }

    fn is_plain(&self, tree: &dyn Tree, cache: &ParseCache, dir: &str, id: ObjectId) -> bool {
        if let Some(known) = self.known(tree, id) {
            return known;
        }
        let mut check = PlainCheck {
            tree,
            memo: self,
            cache,
            open: vec![id],
        };
        let plain = source::walk::walk(tree, dir, &mut check) == Ok(true);
        // A subtree found plain was recorded on leaving it; the ones still
        // open hold what made the walk stop.
        for open in check.open {
            self.record(tree, open, plain);
        }
        plain
    }

    fn lock(&self, id: ObjectId) -> std::sync::MutexGuard<'_, PlainAnswers> {
        self.plain[usize::from(id.0[0]) % MEMO_SHARDS]
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// The walk of [`SubtreeMemo::is_plain`]: stops at the first entry that is
/// not plain (or a directory that cannot be listed), and records each
/// subtree found plain as it is left.
struct PlainCheck<'a> {
    tree: &'a dyn Tree,
    memo: &'a SubtreeMemo,
    cache: &'a ParseCache,
    /// The ids of the directories entered and not yet left.
    open: Vec<ObjectId>,
}

impl source::walk::Visitor for PlainCheck<'_> {
    type Error = ();

    fn list(&mut self, tree: &dyn Tree, dir: &str) -> Result<Option<Vec<source::Entry>>, ()> {
        tree.list_raw(dir).map(Some).map_err(|_| ())
    }

    fn entry(&mut self, _: &str, full: &str, e: &source::Entry) -> Result<Flow, ()> {
        Ok(match e.kind {
            EntryKind::Dir => match self.memo.known(self.tree, e.id) {
                Some(true) => Flow::Skip,
                Some(false) => Flow::Stop,
                None => {
                    self.open.push(e.id);
                    Flow::Continue
                }
            },
            EntryKind::File => {
                let plain = self
                    .tree
                    .read_raw(full)
                    .is_ok_and(|bytes| !may_matter_elsewhere(&bytes, e.id, self.cache));
                if plain {
                    Flow::Continue
                } else {
                    Flow::Stop
                }
            }
            EntryKind::Symlink | EntryKind::Submodule => Flow::Stop,
        })
    }

    fn leave(&mut self, _: &str) -> Result<(), ()> {
        if let Some(id) = self.open.pop() {
            self.memo.record(self.tree, id, true);
        }
        Ok(())
    }
}

/// Whether `app` may be left unrendered at this revision: every source is a
/// directory, kustomization or chart of this very tree whose footprint is
/// the same in the other revision, with no symlink in it or on the way to
/// it, or a chart from the chart cache ([`chart_defers`]).
pub(super) fn defers(
    input: &InventoryInput<'_>,
    app: &App,
    plugins: &Arc<crate::render::plugin::Plugins>,
) -> bool {
    let Some(d) = input.defer.as_ref() else {
        return false;
    };
    if app.implicit || app.spec.sources.is_empty() {
        return false;
    }
    // The other revision deferred the same Application: it compared this
    // revision's copy of everything its render reads and found it identical,
    // so computing the footprint here would find the same.
    if input
        .reuse
        .and_then(|r| r.apps.get(&app.key))
        .is_some_and(|prev| {
            matches!(prev.status, AppStatus::Unchanged) && prev.object == app.object
        })
    {
        return true;
    }
    app.spec.sources.iter().all(|src| {
        if let Some(chart) = &src.chart {
            return chart_defers(input, d, app, src, chart);
        }
        let Some(path) = &src.path else {
            // A `ref:` source renders nothing: the files read from it are in
            // the footprint of the Helm source naming them.
            return src.ref_name.is_some() && src.chart.is_none();
        };
        let Ok(tree) = source_tree(input, src, false) else {
            return false;
        };
        if !Arc::ptr_eq(&tree, &input.tree) {
            return false;
        }
        let cx = RenderContext::unrecorded(tree.as_ref(), input.cache, input.render_options);
        let mut spec = source_spec_in(input, app, src, path);
        spec.plugins = Arc::clone(plugins);
        let Some((fp, seen)) = render::footprint_seen(&cx, &spec, &d.footprints) else {
            return false;
        };
        same_in_both(input, d, &fp, &seen)
    })
}

/// Whether everything `fp` names in this revision's tree is the same in
/// the other one, with no symlink in or on the way to it (`seen`: entries
/// of this tree already found).
fn same_in_both(
    input: &InventoryInput<'_>,
    d: &Deferral,
    fp: &render::Footprint,
    seen: &[render::SeenEntry],
) -> bool {
    let here = input.tree.as_ref();
    let there = d.other.as_ref();
    let same_entry = |p: &str| {
        symlink_free(here, p)
            && symlink_free(there, p)
            && match d.changes.as_deref().and_then(|c| c.same(p)) {
                Some(same) => same,
                None => render::entries_in(here, seen, there, p).is_some_and(|(a, b)| a == b),
            }
    };
    // A path inside a compared subtree is compared with it.
    let inside = |p: &str| {
        fp.subtrees
            .iter()
            .any(|r| source::path::strip_dir(p, r).is_some())
    };
    fp.subtrees.iter().all(|r| {
        same_entry(r)
            && match render::entry_in(here, seen, r) {
                Ok(Some((EntryKind::Dir, id))) => d.subtrees.is_plain(here, input.cache, r, id),
                _ => false,
            }
    }) && fp.entries.iter().all(|p| inside(p) || same_entry(p))
}

/// Whether a source installing `chart` from a Helm repository renders the
/// same at both revisions of an identical Application: with a chart cache,
/// the archive is the same file for both, so only its `$ref` files of this
/// revision can differ (found after the archive's own
/// `.argocd-source*.yaml` overrides). An archive that cannot be read fails
/// both revisions alike when the `$ref` files it names are the same; one
/// whose files may matter to other apps (see the module doc) is rendered. Without a chart cache the source is external
/// and the app is reported as such.
fn chart_defers(
    input: &InventoryInput<'_>,
    d: &Deferral,
    app: &App,
    src: &super::AppSource,
    chart: &str,
) -> bool {
    let Some(charts) = &input.render_options.chart_cache else {
        return false;
    };
    let Ok(cached) = charts.chart(
        chart,
        &src.repo_url,
        &src.target_revision,
        input.tree.as_ref(),
    ) else {
        // The same failure at both revisions, unless a `$ref` file it names
        // changed: then the change touches an app it cannot judge, and the
        // app is rendered to say so.
        let spec = source_spec_in(input, app, src, "");
        return render::helm::ref_footprint(&spec).is_ok_and(|fp| same_in_both(input, d, &fp, &[]));
    };
    // What the chart renders may matter to other apps, as for a chart in git.
    let archive = cached.tree.as_ref();
    let plain = archive
        .entry("")
        .ok()
        .flatten()
        .is_some_and(|root| d.subtrees.is_plain(archive, input.cache, "", root.id));
    if !plain {
        return false;
    }
    let cx = RenderContext::unrecorded(cached.tree.as_ref(), input.cache, input.render_options);
    let spec = source_spec_in(input, app, src, &cached.path);
    let Ok(spec) = render::overrides::apply(&cx, &spec) else {
        return true;
    };
    match render::helm::ref_footprint(spec.as_ref()) {
        Ok(fp) => same_in_both(input, d, &fp, &[]),
        Err(_) => false,
    }
}

/// Whether no existing prefix of `path` (itself included) is a symlink or
/// submodule: what it names then cannot change without its own entry or a
/// parent's changing.
fn symlink_free(tree: &dyn Tree, path: &str) -> bool {
    // A path inside a submodule has no entry in either tree, so comparing
    // entries already tells it apart: only symlinks need the walk.
    if !tree.may_have_symlinks() {
        return true;
    }
    let mut prefix = String::new();
    for seg in path.split('/').filter(|s| !s.is_empty()) {
        if !prefix.is_empty() {
            prefix.push('/');
        }
        prefix.push_str(seg);
        match tree.entry(&prefix) {
            Ok(Some(e)) => match e.kind {
                EntryKind::Dir => {}
                EntryKind::File => return true,
                EntryKind::Symlink | EntryKind::Submodule => return false,
            },
            Ok(None) => return true,
            Err(_) => return false,
        }
    }
    true
}

/// Renders every app that one revision deferred and the other did not
/// confirm (it is absent there, its Application object or what manages it
/// differs, or the other revision rendered it), and every deferred app when the two
/// revisions know different CRD scopes (resource identity depends on
/// them). Returns how many apps are left unrendered at both revisions.
pub(crate) fn settle(
    base: &mut Inventory,
    head: &mut Inventory,
    base_input: &InventoryInput<'_>,
    head_input: &InventoryInput<'_>,
) -> usize {
    // Resource identity depends on the CRD scopes, and Kustomize renders
    // on the build options: deferrals made under different ones are void.
    let same_scopes = base.scopes.crds == head.scopes.crds
        && base.kustomize_build_options == head.kustomize_build_options
        && base.plugins == head.plugins;
    let confirmed = |a: &App, other: Option<&App>| {
        same_scopes
            && other.is_some_and(|o| {
                // Managed alike: an app its parent stops rendering is
                // deleted even though its files are all still there.
                matches!(o.status, AppStatus::Unchanged)
                    && o.object == a.object
                    && o.manager == a.manager
            })
    };
    let pending = |inv: &Inventory, other: &Inventory| -> Vec<String> {
        apps_beside(&inv.apps, &other.apps)
            .filter(|(_, a, same_key)| {
                matches!(a.status, AppStatus::Unchanged) && !confirmed(a, *same_key)
            })
            .map(|(key, _, _)| key.clone())
            .collect()
    };
    let base_pending = pending(base, head);
    let head_pending = pending(head, base);
    render_now(base, base_input, &base_pending);
    render_now(head, head_input, &head_pending);
    head.apps
        .values()
        .filter(|a| matches!(a.status, AppStatus::Unchanged))
        .count()
}

/// Renders the apps `keys` of `inv` (their deferral is withdrawn).
pub(crate) fn render_now(inv: &mut Inventory, input: &InventoryInput<'_>, keys: &[String]) {
    let apps: Vec<App> = keys.iter().filter_map(|k| inv.apps.remove(k)).collect();
    let scopes = &inv.scopes;
    let options = inv.kustomize_build_options.as_str();
    let plugins = &inv.plugins;
    let rendered: Vec<App> = apps
        .into_par_iter()
        // A deferring revision has no out-of-bounds symlink: `build` defers
        // nothing in such a tree. `render_fresh` sets every status itself.
        .map(|app| render_fresh(input, scopes, (options, plugins), None, app))
        .collect();
    inv.renders += rendered.len();
    for app in rendered {
        inv.apps.insert(app.key.clone(), app);
    }
}
