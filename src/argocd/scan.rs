//! Finding what a revision declares: every manifest file that may hold an
//! Application, ApplicationSet, AppProject, CRD, cluster Secret or Argo CD
//! setting, parsed once and shared with rendering.

use super::*;
use crate::cache::{Facts, Question};
use crate::source::walk::Flow;
use goyaml::json::Pointer as _;
use std::collections::{HashMap, HashSet};
/// A document the scan keeps, with where it is declared and what it is.
type Kept = (Arc<LazyValue>, Origin, Declares);

/// What a document the scan keeps declares, told once while the documents
/// are copied out in parallel: each lookup in one of thousands of values is
/// a walk through memory, and the documents are then taken one by one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Declares {
    Application,
    ApplicationSet,
    AppProject,
    Crd,
    /// A cluster Secret or an Argo CD setting.
    Other,
}

/// What `v` declares, when the scan keeps it. Its kind is read through a
/// view: a fleet's Applications, taken from the records of an earlier
/// run, are not decoded for it.
fn declares(v: &LazyValue) -> Option<Declares> {
    let view = v.view();
    if is_application(view) {
        Some(Declares::Application)
    } else if is_application_set(view) {
        Some(Declares::ApplicationSet)
    } else if is_app_project(view) {
        Some(Declares::AppProject)
    } else if view.get("kind").and_then(View::as_str) == Some("CustomResourceDefinition") {
        Some(Declares::Crd)
    } else if v.with_value(|v| {
        appset::clusters_from_secret(v).is_some()
            || tracking::LearnedTracking::from_object(v, None).is_some()
            || !crate::render::plugin::definitions_in(v, None).is_empty()
    }) {
        Some(Declares::Other)
    } else {
        None
    }
}

/// A file that may declare what the scan keeps: path, blob id and parse.
type Candidate = (String, ObjectId, render::ParsedStream);

/// A raw declaration found by scanning files.
#[derive(Debug, Clone)]
pub(super) struct Declared {
    /// Shared with the parse cache: the other revision's scan of the same
    /// blob holds the same object.
    pub(super) value: Arc<LazyValue>,
    pub(super) origin: Origin,
}

/// What the scan of one revision found: the declarations it hands to
/// [`build`], and what it tells the inventory.
#[derive(Debug, Default)]
pub(crate) struct Scanned {
    apps: Vec<Declared>,
    appsets: Vec<Declared>,
    /// CRDs and cluster Secrets.
    others: Vec<Arc<LazyValue>>,
    /// The CRD scopes: the configured ones, and those of the CRDs found.
    scopes: Scopes,
    projects: BTreeMap<String, Vec<DeclaredProject>>,
    tracking: Option<tracking::LearnedTracking>,
    /// Config-management plugin definitions, in walk order.
    plugin_definitions: Vec<crate::render::plugin::PluginConfig>,
    broken_files: BTreeMap<String, RenderError>,
    broken_file_ids: BTreeMap<String, ObjectId>,
    /// The files parsed: they may declare Applications, ApplicationSets,
    /// CRDs or cluster Secrets.
    candidates: BTreeSet<String>,
    over_limit: Option<String>,
}

/// Scans every manifest file for Applications, ApplicationSets, CRDs and
/// cluster Secrets (the third list holds the last two), or takes the other
/// revision's scan when it holds here too ([`unchanged_scan`]).
pub(super) fn scan(
    input: &InventoryInput<'_>,
    inv: &mut Inventory,
) -> (Vec<Declared>, Vec<Declared>, Vec<Arc<LazyValue>>) {
    let scanned =
        unchanged_scan(input).unwrap_or_else(|| Arc::new(scan_tree(input, inv.scopes.clone())));
    inv.scopes.clone_from(&scanned.scopes);
    inv.projects.clone_from(&scanned.projects);
    inv.tracking.clone_from(&scanned.tracking);
    inv.plugins = Arc::new(
        input
            .config
            .plugins
            .with_definitions(&scanned.plugin_definitions),
    );
    for p in inv.plugins.discovering_by_command() {
        inv.notes.push(format!(
            "the config-management plugin `{}`{} discovers its apps with a command, which cannot run here: apps with no explicit source type are taken not to be its",
            p.name,
            p.declared_in
                .as_deref()
                .map(|f| format!(" (declared in `{f}`)"))
                .unwrap_or_default()
        ));
    }
    inv.broken_files.clone_from(&scanned.broken_files);
    inv.broken_file_ids.clone_from(&scanned.broken_file_ids);
    inv.over_limit.clone_from(&scanned.over_limit);
    let found = if scanned.over_limit.is_some() {
        (Vec::new(), Vec::new(), Vec::new())
    } else {
        (
            scanned.apps.clone(),
            scanned.appsets.clone(),
            scanned.others.clone(),
        )
    };
    inv.scanned = scanned;
    found
}

/// The other revision's scan, when this revision's would find the same:
/// both trees hold the same paths (only contents changed, the usual pull
/// request), and no file whose content changed was parsed there or may
/// declare anything here (the byte test of [`candidate_parse`]). Every
/// file the scan parses is then the same blob at both revisions.
fn unchanged_scan(input: &InventoryInput<'_>) -> Option<Arc<Scanned>> {
    let other = &input.reuse?.scanned;
    let changes = input.defer.as_ref()?.changes.as_deref()?;
    if !changes.same_shape() || other.over_limit.is_some() {
        return None;
    }
    let facts = kept_facts(input);
    let no_candidates = BTreeSet::new();
    // A file that cannot be read may declare anything.
    let may_declare_here = |path: &str| {
        let mut definite = false;
        candidate_parse(input, facts, &no_candidates, path, &mut definite).is_some() || !definite
    };
    changes
        .changed_files()
        .all(|path| !other.candidates.contains(path) && !may_declare_here(path))
        .then(|| Arc::clone(other))
}

/// Answers kept by an earlier run, by content id: only a content-addressed
/// tree's ids name contents.
fn kept_facts<'a>(input: &'a InventoryInput<'_>) -> Option<&'a Facts> {
    input
        .defer
        .as_ref()
        .and_then(|d| d.subtrees.facts())
        .filter(|_| input.tree.content_addressed())
}

/// Scans every manifest file of the revision, starting from `scopes` (the
/// configured CRD scopes). Files that cannot hold a declaration are
/// skipped by a byte test (such an object names `argoproj.io` and its kind
/// or `secret-type` label, or is a CRD), so only those are parsed; parses
/// are shared with rendering and across revisions by blob id, and only the
/// documents kept here are copied out of the cache.
fn scan_tree(input: &InventoryInput<'_>, scopes: Scopes) -> Scanned {
    let mut scanned = Scanned {
        scopes,
        ..Scanned::default()
    };
    let scanned = &mut scanned;
    let mut files = Vec::new();
    // A directory scanned whole before, or at head one identical at base,
    // holds the same candidates: they are taken from that scan instead of
    // reading every file again.
    let mut known = Vec::new();
    let prev = input
        .defer
        .as_ref()
        .zip(input.reuse)
        .map(|(d, r)| PrevScan {
            tree: d.other.as_ref(),
            candidates: &r.scanned.candidates,
        });
    // The byte test depends on the blob alone: a blob that failed it in an
    // earlier run (facts kept by content id) is not read again, and a
    // directory scanned whole before (kept by tree id) is not walked again.
    let facts = kept_facts(input);
    let walked = walk_kept(input.tree.as_ref(), facts, &mut files, &mut known, prev);
    if let Some(why) = walked.unreadable {
        scanned.over_limit = Some(why);
        return std::mem::take(scanned);
    }
    // In walk order (a directory's entries by name, depth first): the first
    // of two declarations of one Application is the one used.
    let known: BTreeSet<String> = known.into_iter().collect();
    files.extend(known.iter().cloned());
    files.sort_by(|a, b| source::path::walk_order(a, b));
    let answers: Vec<(Option<Candidate>, bool)> = files
        .par_iter()
        .map(|f| {
            let mut definite = false;
            let parsed = candidate_parse(input, facts, &known, f, &mut definite);
            (parsed, definite)
        })
        .collect();
    // Only directories walked here are recorded: a scan that took every
    // directory from the store (a warm run) has none.
    if let Some(f) = facts.filter(|_| walked.walked_any()) {
        let found: HashSet<&str> = answers
            .iter()
            .filter_map(|(p, _)| p.as_ref().map(|(f, _, _)| f.as_str()))
            .collect();
        let unknown: HashSet<&str> = files
            .iter()
            .zip(&answers)
            .filter(|(_, (_, definite))| !definite)
            .map(|(f, _)| f.as_str())
            .collect();
        walked.keep(f, &found, &unknown);
    }
    let parsed: Vec<Candidate> = answers.into_iter().filter_map(|(p, _)| p).collect();
    scanned.candidates = parsed.iter().map(|(f, _, _)| f.clone()).collect();

    // Copying the kept documents out of the shared parses is done in
    // parallel; they are then taken in walk order.
    let kept: Vec<Result<Vec<Kept>, RenderError>> = parsed
        .par_iter()
        .map(|(file, id, docs)| {
            let docs = docs
                .as_ref()
                .as_ref()
                .map_err(|e| RenderError::from_yaml(file, e))?;
            let mut out = Vec::new();
            let mut shared = None;
            for (i, d) in docs.iter().enumerate() {
                let mut items = Vec::new();
                // Anything with `items` may be a list (see `expand_lists`).
                if d.value.view().get("items").is_some() {
                    let mut list = Vec::new();
                    render::expand_lists(d.value.with_value(Value::clone), &mut list);
                    items.extend(list.into_iter().filter_map(|v| {
                        let v = LazyValue::from(v);
                        declares(&v).map(|k| (Arc::new(v), k))
                    }));
                } else if let Some(k) = declares(&d.value) {
                    let shared = shared.get_or_insert_with(|| {
                        input.cache.shared_values(*id, Dialect::SigsYaml, docs)
                    });
                    items.push((Arc::clone(&shared[i]), k));
                }
                let origin = Origin {
                    file: Some(file.clone()),
                    line: Some(d.line),
                    doc_index: Some(d.index),
                };
                out.extend(items.into_iter().map(|(v, k)| (v, origin.clone(), k)));
            }
            Ok(out)
        })
        .collect();
    // Room for every file's first declaration at once: a fleet declares
    // thousands, and growing the vector copies them into fresh pages again
    // and again.
    let mut apps = Vec::with_capacity(parsed.len().min(MAX_DECLARED));
    let mut appsets: Vec<Declared> = Vec::new();
    let mut others: Vec<Arc<LazyValue>> = Vec::new();
    for ((file, id, _), items) in parsed.iter().zip(kept) {
        let items = match items {
            Ok(items) => items,
            Err(e) => {
                scanned.broken_files.insert(file.clone(), e);
                scanned.broken_file_ids.insert(file.clone(), *id);
                continue;
            }
        };
        if apps.len() + appsets.len() + others.len() + items.len() > MAX_DECLARED {
            scanned.over_limit = Some(format!(
                "more than {MAX_DECLARED} Applications, ApplicationSets and CRDs are declared, more than gitops-lint reads"
            ));
            return std::mem::take(scanned);
        }
        for (v, origin, declares) in items {
            match declares {
                Declares::Application => apps.push(Declared { value: v, origin }),
                Declares::ApplicationSet => appsets.push(Declared { value: v, origin }),
                Declares::AppProject => {
                    let name = v
                        .at("/metadata/name")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string();
                    scanned
                        .projects
                        .entry(name)
                        .or_default()
                        .push(DeclaredProject { object: v, origin });
                }
                Declares::Crd => {
                    scanned.scopes.learn_crd(&v);
                    others.push(v);
                }
                Declares::Other => {
                    match tracking::LearnedTracking::from_object(&v, origin.file.as_deref()) {
                        // The first one in walk order, as for Applications.
                        Some(t) => {
                            scanned.tracking.get_or_insert(t);
                        }
                        None => {
                            let found = v.with_value(|v| {
                                crate::render::plugin::definitions_in(v, origin.file.as_deref())
                            });
                            if found.is_empty() {
                                others.push(v);
                            } else {
                                scanned.plugin_definitions.extend(found);
                            }
                        }
                    }
                }
            }
        }
    }
    scanned.apps = apps;
    scanned.appsets = appsets;
    scanned.others = others;
    std::mem::take(scanned)
}

/// The parse of manifest file `f` when it may declare what the scan keeps
/// (or is `known` to: the same blob did in a directory scanned before).
/// `definite` is set unless the answer came from a failure to read, which
/// a later run must not take for "declares nothing".
fn candidate_parse(
    input: &InventoryInput<'_>,
    facts: Option<&Facts>,
    known: &BTreeSet<String>,
    f: &str,
    definite: &mut bool,
) -> Option<Candidate> {
    // `walk` lists regular files only, so no symlink needs resolving.
    let id = input.tree.entry(f).ok().flatten()?.id;
    let candidate = known.contains(f);
    if !candidate && facts.and_then(|x| x.get(Question::MayDeclare, id)) == Some(false) {
        *definite = true;
        return None;
    }
    // A parse known without reading (this run's other revision, or
    // kept by an earlier run) carries the byte test's answer.
    let content_addressed = input.tree.content_addressed();
    if let Some((parsed, flags)) = content_addressed
        .then(|| input.cache.known_sigs(id))
        .flatten()
    {
        *definite = true;
        return (candidate || flags.has(render::kept_parse::Flags::MAY_DECLARE))
            .then(|| (f.to_owned(), id, parsed));
    }
    let bytes = input.tree.read_raw(f).ok()?;
    *definite = true;
    let may_declare = render::kept_parse::may_declare(&bytes);
    if !may_declare {
        // Only the answers that spare a read are kept.
        if let Some(x) = facts {
            x.put(Question::MayDeclare, id, false);
        }
        if !candidate {
            return None;
        }
    }
    // Read as Argo CD and kubectl read manifests (sigs.k8s.io/yaml),
    // as the directory renderer does: an Application file rendered
    // by an app-of-apps is then parsed once, not once per dialect.
    Some((
        f.to_owned(),
        id,
        input
            .cache
            .get_or_parse_in(id, &bytes, Dialect::SigsYaml, content_addressed),
    ))
}

/// The other revision's scan, for [`walk_kept`] to skip directories
/// identical there.
pub(super) struct PrevScan<'a> {
    tree: &'a dyn Tree,
    candidates: &'a BTreeSet<String>,
}

/// A directory the scan walked: its id, the manifest files directly in it
/// and its subdirectories, each walked, skipped as kept or identical at the
/// other revision (then `found` tells whether a candidate lies below).
struct WalkedDir {
    path: String,
    id: ObjectId,
    files: Vec<String>,
    /// Name, id and, for a subdirectory not walked, whether it holds a
    /// candidate.
    dirs: Vec<(String, ObjectId, Option<bool>)>,
}

/// What [`walk_kept`] saw, for [`Walked::keep`] to record once the byte
/// tests are done.
pub(super) struct Walked {
    dirs: Vec<WalkedDir>,
    /// Why a directory could not be listed, when one could not: the scan
    /// then cannot know what the revision declares.
    pub(super) unreadable: Option<String>,
}

/// The key of what a scan keeps for tree `id`: the manifest files directly
/// in it that may declare something, and its subdirectories holding any
/// (by name and tree id). Only a tree's content decides both, so the record
/// holds wherever that tree appears.
fn scan_key(id: ObjectId) -> crate::cache::Key {
    crate::cache::record_key("scan", &[&id.0])
}

fn encode_scan(files: &[&str], dirs: &[(&str, ObjectId)]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let len = |n: usize| u32::try_from(n).ok().map(u32::to_le_bytes);
    out.extend_from_slice(&len(files.len())?);
    for f in files {
        out.extend_from_slice(&len(f.len())?);
        out.extend_from_slice(f.as_bytes());
    }
    out.extend_from_slice(&len(dirs.len())?);
    for (d, id) in dirs {
        out.extend_from_slice(&len(d.len())?);
        out.extend_from_slice(d.as_bytes());
        out.extend_from_slice(&id.0);
    }
    Some(out)
}

/// The candidates kept for tree `id` at `dir`, with those of every
/// subdirectory they name, appended to `out`; `false` (and `out` as it
/// was) when a record is missing or damaged.
fn expand_kept(
    facts: &Facts,
    dir: &str,
    id: ObjectId,
    out: &mut Vec<String>,
    depth: usize,
) -> bool {
    let mark = out.len();
    let ok = expand_into(facts, dir, id, out, depth);
    if !ok {
        out.truncate(mark);
    }
    ok
}

fn expand_into(
    facts: &Facts,
    dir: &str,
    id: ObjectId,
    out: &mut Vec<String>,
    depth: usize,
) -> bool {
    if depth >= crate::source::MAX_DEPTH {
        return false;
    }
    let Some(bytes) = facts.record(scan_key(id)) else {
        return false;
    };
    let Some(items) = decode_scan(&bytes) else {
        return false;
    };
    for (name, sub) in items {
        let full = crate::source::path::child(dir, name);
        match sub {
            None => out.push(full),
            Some(id) => {
                if !expand_into(facts, &full, id, out, depth + 1) {
                    return false;
                }
            }
        }
    }
    true
}

/// A record of [`encode_scan`]: its files (no id) and subdirectories, in
/// walk order (by name); `None` when damaged.
fn decode_scan(bytes: &[u8]) -> Option<Vec<(&str, Option<ObjectId>)>> {
    let mut r = bytes;
    let mut take = |n: usize| -> Option<&[u8]> {
        let (head, rest) = r.split_at_checked(n)?;
        r = rest;
        Some(head)
    };
    let mut items = Vec::new();
    for with_id in [false, true] {
        let n = u32::from_le_bytes(take(4)?.try_into().ok()?);
        for _ in 0..n {
            let len = u32::from_le_bytes(take(4)?.try_into().ok()?);
            let name = std::str::from_utf8(take(usize::try_from(len).ok()?)?).ok()?;
            let id = if with_id {
                Some(ObjectId(take(20)?.try_into().ok()?))
            } else {
                None
            };
            items.push((name, id));
        }
    }
    if !take(0).is_some_and(|_| r.is_empty()) {
        return None;
    }
    items.sort();
    Some(items)
}

impl Walked {
    /// Whether any directory was walked (not taken from the store whole).
    fn walked_any(&self) -> bool {
        !self.dirs.is_empty()
    }

    /// Records, for each directory walked whole whose every file got an
    /// answer (`unknown` lists those that did not), the candidates `found`
    /// in it by tree id, for later scans to take instead of walking it.
    pub(super) fn keep(&self, facts: &Facts, found: &HashSet<&str>, unknown: &HashSet<&str>) {
        // Deepest first, so that a directory knows its subdirectories'.
        let mut order: Vec<&WalkedDir> = self.dirs.iter().collect();
        order.sort_by_key(|d| std::cmp::Reverse(crate::source::depth(&d.path)));
        // Per walked path: whether a candidate lies below, or `None` when
        // it is not known whole.
        let mut holds: HashMap<&str, Option<bool>> = HashMap::new();
        for d in order {
            let mut whole = d.files.iter().all(|f| !unknown.contains(f.as_str()));
            let files: Vec<&str> = d
                .files
                .iter()
                .filter(|f| found.contains(f.as_str()))
                .map(|f| f.rsplit('/').next().unwrap_or(f))
                .collect();
            let mut dirs = Vec::new();
            for (name, id, skipped) in &d.dirs {
                let below = match skipped {
                    Some(b) => Some(*b),
                    None => holds
                        .get(crate::source::path::child(&d.path, name).as_str())
                        .copied()
                        .flatten(),
                };
                match below {
                    Some(true) => dirs.push((name.as_str(), *id)),
                    Some(false) => {}
                    None => whole = false,
                }
            }
            let any = !files.is_empty() || !dirs.is_empty();
            holds.insert(d.path.as_str(), whole.then_some(any));
            if whole {
                if let Some(bytes) = encode_scan(&files, &dirs) {
                    facts.put_record(scan_key(d.id), bytes);
                }
            }
        }
    }
}

/// Lists the manifest files below the root into `out`. A directory whose
/// candidates an earlier scan kept (by tree id, in `facts`) is not
/// entered: its candidates go to `known`; so do, with `prev`, those of a
/// directory whose id is the same in the other revision, taken from that
/// revision's scan.
pub(super) fn walk_kept(
    tree: &dyn Tree,
    facts: Option<&Facts>,
    out: &mut Vec<String>,
    known: &mut Vec<String>,
    prev: Option<PrevScan<'_>>,
) -> Walked {
    let root = tree.entry("").ok().flatten().map(|e| e.id);
    let mut scan = ScanWalk {
        out,
        known,
        prev,
        facts,
        charts: HashSet::new(),
        walked: Vec::new(),
        open: Vec::new(),
        pending: root,
        unreadable: None,
    };
    let kept_root = match (facts, root) {
        (Some(f), Some(id)) => expand_kept(f, "", id, scan.known, 0),
        _ => false,
    };
    if !kept_root {
        let _ = source::walk::walk(tree, "", &mut scan);
    }
    Walked {
        dirs: scan.walked,
        unreadable: scan.unreadable,
    }
}

/// The visitor of [`walk_kept`].
struct ScanWalk<'a, 'p> {
    out: &'a mut Vec<String>,
    known: &'a mut Vec<String>,
    prev: Option<PrevScan<'p>>,
    facts: Option<&'p Facts>,
    /// Directories holding a `Chart.yaml`, while they are walked.
    charts: HashSet<String>,
    /// Directories left, with what was seen in them.
    walked: Vec<WalkedDir>,
    /// Directories entered and not yet left.
    open: Vec<WalkedDir>,
    /// The id of the directory about to be entered.
    pending: Option<ObjectId>,
    unreadable: Option<String>,
}

impl source::walk::Visitor for ScanWalk<'_, '_> {
    type Error = std::convert::Infallible;

    fn list(
        &mut self,
        tree: &dyn Tree,
        dir: &str,
    ) -> Result<Option<Vec<source::Entry>>, Self::Error> {
        match tree.list_raw(dir) {
            Ok(entries) => Ok(Some(entries)),
            // What the object database cannot give is not "nothing there".
            Err(e @ source::SourceError::Io(_)) => {
                self.unreadable
                    .get_or_insert_with(|| format!("the directory `{dir}` cannot be read: {e}"));
                Ok(None)
            }
            // Directories at the depth limit are left out.
            Err(_) => Ok(None),
        }
    }

    fn enter(&mut self, dir: &str, entries: &[source::Entry]) -> Result<Flow, Self::Error> {
        // A Helm chart's files are templates and values, not manifests: the
        // Applications a chart declares are found in its render. Only its plain
        // `crds/` are read, for the scopes they declare.
        if entries
            .iter()
            .any(|e| e.kind == EntryKind::File && e.name == "Chart.yaml")
        {
            self.charts.insert(dir.to_string());
        }
        // What a directory holds is recorded only to be kept.
        if self.facts.is_none() {
            return Ok(Flow::Continue);
        }
        self.open.push(WalkedDir {
            path: dir.to_string(),
            id: self.pending.take().unwrap_or(ObjectId([0; 20])),
            files: Vec::new(),
            dirs: Vec::new(),
        });
        Ok(Flow::Continue)
    }

    fn entry(&mut self, dir: &str, full: &str, e: &source::Entry) -> Result<Flow, Self::Error> {
        let flow = self.visit(dir, full, e);
        if let Some(here) = self.open.last_mut() {
            match (e.kind, flow) {
                (EntryKind::Dir, Flow::Continue) => {
                    here.dirs.push((e.name.clone(), e.id, None));
                    self.pending = Some(e.id);
                }
                (EntryKind::File, Flow::Continue) if is_manifest_file(&e.name) => {
                    here.files.push(full.to_string());
                }
                _ => {}
            }
        }
        Ok(flow)
    }

    fn leave(&mut self, dir: &str) -> Result<(), Self::Error> {
        self.charts.remove(dir);
        if self.facts.is_none() {
            return Ok(());
        }
        if let Some(done) = self.open.pop() {
            self.walked.push(done);
        }
        Ok(())
    }
}

impl ScanWalk<'_, '_> {
    fn visit(&mut self, dir: &str, full: &str, e: &source::Entry) -> Flow {
        if self.charts.contains(dir) {
            return if e.kind == EntryKind::Dir && e.name == "crds" {
                Flow::Continue
            } else {
                Flow::Skip
            };
        }
        match e.kind {
            EntryKind::Dir if e.name != ".git" => {
                let mark = self.known.len();
                if let Some(f) = self.facts {
                    if expand_kept(f, full, e.id, self.known, 0) {
                        let any = self.known.len() > mark;
                        self.skipped(e, Some(any));
                        return Flow::Skip;
                    }
                }
                if let Some(p) = self.prev.as_ref() {
                    if p.tree
                        .entry(full)
                        .ok()
                        .flatten()
                        .is_some_and(|o| o.id == e.id)
                    {
                        let below = format!("{full}/");
                        self.known.extend(
                            p.candidates
                                .range(below.clone()..)
                                .take_while(|f| f.starts_with(&below))
                                .cloned(),
                        );
                        // Not known whole: that scan may have failed to read
                        // a file, so no record is made from it.
                        self.skipped(e, None);
                        return Flow::Skip;
                    }
                }
                Flow::Continue
            }
            EntryKind::Dir => Flow::Skip,
            EntryKind::File if is_manifest_file(&e.name) => {
                self.out.push(full.to_string());
                Flow::Continue
            }
            _ => Flow::Continue,
        }
    }

    /// Notes a subdirectory not entered, whose candidates are known.
    fn skipped(&mut self, e: &source::Entry, any: Option<bool>) {
        if let Some(here) = self.open.last_mut() {
            here.dirs.push((e.name.clone(), e.id, any));
        }
    }
}
