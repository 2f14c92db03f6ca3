//! Finding what a revision declares: every manifest file that may hold an
//! Application, ApplicationSet, AppProject, CRD, cluster Secret or Argo CD
//! setting, parsed once and shared with rendering.

use super::*;
use crate::source::facts::Question;
use crate::source::walk::Flow;
use std::collections::HashSet;
/// A document the scan keeps, with where it is declared.
type Kept = (Arc<Value>, Origin);

/// A raw declaration found by scanning files.
pub(super) struct Declared {
    /// Shared with the parse cache: the other revision's scan of the same
    /// blob holds the same object.
    pub(super) value: Arc<Value>,
    pub(super) origin: Origin,
}

/// Scans every manifest file for Applications, ApplicationSets, CRDs and
/// cluster Secrets (the third list holds the last two). Files that cannot
/// hold any are skipped by a byte test (such an object names `argoproj.io`
/// and its kind or `secret-type` label, or is a CRD), so only those are
/// parsed; parses are shared with rendering and across revisions by
/// blob id, and only the documents kept here are copied out of the cache.
pub(super) fn scan(
    input: &InventoryInput<'_>,
    inv: &mut Inventory,
) -> (Vec<Declared>, Vec<Declared>, Vec<Arc<Value>>) {
    let mut files = Vec::new();
    // At head, a directory identical at base holds the same candidates:
    // they are taken from base's scan instead of reading every file again.
    let mut known = Vec::new();
    let prev = input
        .defer
        .as_ref()
        .zip(input.reuse)
        .map(|(d, r)| PrevScan {
            tree: d.other.as_ref(),
            candidates: &r.scan_candidates,
            out: &mut known,
        });
    walk(input.tree.as_ref(), "", &mut files, prev);
    // In walk order (a directory's entries by name, depth first): the first
    // of two declarations of one Application is the one used.
    let known: BTreeSet<String> = known.into_iter().collect();
    files.extend(known.iter().cloned());
    files.sort_by(|a, b| a.split('/').cmp(b.split('/')));
    // The byte test depends on the blob alone: a blob that failed it in an
    // earlier run (facts kept by content id) is not read again.
    let facts = input
        .defer
        .as_ref()
        .and_then(|d| d.subtrees.facts())
        .filter(|_| input.tree.content_addressed());
    let parsed: Vec<(String, ObjectId, render::ParsedStream)> = files
        .par_iter()
        .filter_map(|f| {
            // `walk` lists regular files only, so no symlink needs resolving.
            let id = input.tree.entry(f).ok().flatten()?.id;
            let candidate = known.contains(f);
            if !candidate && facts.and_then(|x| x.get(Question::MayDeclare, id)) == Some(false) {
                return None;
            }
            // A parse known without reading (this run's other revision, or
            // kept by an earlier run) carries the byte test's answer.
            let content_addressed = input.tree.content_addressed();
            if let Some((parsed, flags)) = content_addressed
                .then(|| input.cache.known_sigs(id))
                .flatten()
            {
                return (candidate || flags.has(render::kept_parse::Flags::MAY_DECLARE))
                    .then(|| (f.clone(), id, parsed));
            }
            let bytes = input.tree.read_raw(f).ok()?;
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
                f.clone(),
                id,
                input
                    .cache
                    .get_or_parse_in(id, &bytes, Dialect::SigsYaml, content_addressed),
            ))
        })
        .collect();
    inv.scan_candidates = parsed.iter().map(|(f, _, _)| f.clone()).collect();
    // Copying the kept documents out of the shared parses is done in
    // parallel; they are then taken in walk order.
    let wanted = |v: &Value| {
        is_application(v)
            || is_application_set(v)
            || is_app_project(v)
            || v.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
            || appset::clusters_from_secret(v).is_some()
            || tracking::LearnedTracking::from_object(v, None).is_some()
    };
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
                if d.value.get("items").is_some() {
                    let mut list = Vec::new();
                    render::expand_lists((*d.value).clone(), &mut list);
                    items.extend(list.into_iter().filter(|v| wanted(v)).map(Arc::new));
                } else if wanted(&d.value) {
                    let shared = shared.get_or_insert_with(|| {
                        input.cache.shared_values(*id, Dialect::SigsYaml, docs)
                    });
                    items.push(Arc::clone(&shared[i]));
                }
                let origin = Origin {
                    file: Some(file.clone()),
                    line: Some(d.line),
                    doc_index: Some(d.index),
                };
                out.extend(items.into_iter().map(|v| (v, origin.clone())));
            }
            Ok(out)
        })
        .collect();
    let mut apps = Vec::new();
    let mut appsets = Vec::new();
    let mut others = Vec::new();
    for ((file, id, _), items) in parsed.iter().zip(kept) {
        let items = match items {
            Ok(items) => items,
            Err(e) => {
                inv.broken_files.insert(file.clone(), e);
                inv.broken_file_ids.insert(file.clone(), *id);
                continue;
            }
        };
        if apps.len() + appsets.len() + others.len() + items.len() > MAX_DECLARED {
            inv.over_limit = Some(format!(
                "more than {MAX_DECLARED} Applications, ApplicationSets and CRDs are declared, more than gitops-lint reads"
            ));
            return (Vec::new(), Vec::new(), Vec::new());
        }
        for (v, origin) in items {
            if is_application(&v) {
                apps.push(Declared { value: v, origin });
            } else if is_application_set(&v) {
                appsets.push(Declared { value: v, origin });
            } else if is_app_project(&v) {
                let name = v
                    .pointer("/metadata/name")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                inv.projects
                    .entry(name)
                    .or_default()
                    .push(DeclaredProject { object: v, origin });
            } else if v.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition") {
                inv.scopes.learn_crd(&v);
                others.push(v);
            } else if let Some(t) =
                tracking::LearnedTracking::from_object(&v, origin.file.as_deref())
            {
                // The first one in walk order, as for Applications.
                inv.tracking.get_or_insert(t);
            } else {
                others.push(v);
            }
        }
    }
    (apps, appsets, others)
}

/// The other revision's scan, for [`walk`] to skip directories identical there.
pub(super) struct PrevScan<'a> {
    tree: &'a dyn Tree,
    candidates: &'a BTreeSet<String>,
    out: &'a mut Vec<String>,
}

/// Lists the manifest files below `dir`. With `prev`, a directory whose id
/// is the same in the other revision is not entered: the files of it that
/// the other revision's scan kept go to `prev.out` instead.
pub(super) fn walk(tree: &dyn Tree, dir: &str, out: &mut Vec<String>, prev: Option<PrevScan<'_>>) {
    let mut scan = ScanWalk {
        out,
        prev,
        charts: HashSet::new(),
    };
    // Unreadable directories are left out; nothing else fails.
    let _ = source::walk::walk(tree, dir, &mut scan);
}

/// The visitor of [`walk`].
struct ScanWalk<'a, 'p> {
    out: &'a mut Vec<String>,
    prev: Option<PrevScan<'p>>,
    /// Directories holding a `Chart.yaml`, while they are walked.
    charts: HashSet<String>,
}

impl source::walk::Visitor for ScanWalk<'_, '_> {
    type Error = std::convert::Infallible;

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
        Ok(Flow::Continue)
    }

    fn entry(&mut self, dir: &str, full: &str, e: &source::Entry) -> Result<Flow, Self::Error> {
        if self.charts.contains(dir) {
            return Ok(if e.kind == EntryKind::Dir && e.name == "crds" {
                Flow::Continue
            } else {
                Flow::Skip
            });
        }
        match e.kind {
            EntryKind::Dir if e.name != ".git" => {
                if let Some(p) = self.prev.as_mut() {
                    if p.tree
                        .entry(full)
                        .ok()
                        .flatten()
                        .is_some_and(|o| o.id == e.id)
                    {
                        let below = format!("{full}/");
                        p.out.extend(
                            p.candidates
                                .range(below.clone()..)
                                .take_while(|f| f.starts_with(&below))
                                .cloned(),
                        );
                        return Ok(Flow::Skip);
                    }
                }
                Ok(Flow::Continue)
            }
            EntryKind::Dir => Ok(Flow::Skip),
            EntryKind::File if is_manifest_file(&e.name) => {
                self.out.push(full.to_string());
                Ok(Flow::Continue)
            }
            _ => Ok(Flow::Continue),
        }
    }

    fn leave(&mut self, dir: &str) -> Result<(), Self::Error> {
        self.charts.remove(dir);
        Ok(())
    }
}
