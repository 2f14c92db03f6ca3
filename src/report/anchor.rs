//! Where findings are shown: the files they point at, read for snippets,
//! and the file of the change a pull-request annotation lands on.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::Arc;

use crate::argocd::{App, Inventory};
use crate::finding::{Finding, Location, Side};
use crate::report::Report;
use crate::source::{self, Tree};

/// How many findings about one field are pointed at its line: each lookup
/// re-parses its file, so past this budget findings keep their document's
/// line.
const FIELD_LOOKUP_BUDGET: usize = 200;

/// Reads the files findings point at, for snippets.
pub(crate) fn attach_files(report: &mut Report, base: Option<&dyn Tree>, head: &dyn Tree) {
    let wanted: Vec<(Side, String)> = report
        .findings
        .iter()
        .filter_map(|f| f.location.as_ref().map(|l| (l.side, l.file.clone())))
        .collect();
    for (side, file) in wanted {
        let tree = match side {
            Side::Base => base,
            Side::Head => Some(head),
        };
        if let Some(Ok(bytes)) = tree.map(|t| source::read(t, &file)) {
            if let Ok(text) = std::str::from_utf8(&bytes) {
                report.files.insert((side, file), Arc::from(text));
            }
        }
    }
    // Findings about one field point at its line, now that the file is read.
    let mut budget = FIELD_LOOKUP_BUDGET;
    for f in &mut report.findings {
        let (Some(field), Some(loc)) = (&f.field, f.location.as_mut()) else {
            continue;
        };
        let Some(text) = report.files.get(&(loc.side, loc.file.clone())) else {
            continue;
        };
        if budget == 0 {
            break;
        }
        budget -= 1;
        let path: Vec<goyaml::PathSeg<'_>> =
            field.path.iter().map(|k| goyaml::PathSeg::Key(k)).collect();
        if let Some(line) = goyaml::line_of(text, field.doc_index, &path) {
            loc.line = Some(line);
        }
    }
}

fn blob_id(tree: &dyn Tree, path: &str) -> Option<source::ObjectId> {
    match tree.entry(path) {
        Ok(Some(e)) if e.kind != source::EntryKind::Dir => Some(e.id),
        _ => None,
    }
}

/// Where findings land for a pull-request tool ([`Anchors::of`]) in a diff
/// of `base` and `head`, whose inventories are `base_inv` and `head_inv`.
pub(crate) struct Anchors<'a> {
    base: &'a dyn Tree,
    head: &'a dyn Tree,
    base_inv: &'a Inventory,
    head_inv: &'a Inventory,
    /// Each revision's apps by the name findings give them, found once at
    /// the first finding that needs them: a search of every app for every
    /// finding took seconds when a change leaves 10,000 apps unjudged.
    base_names: OnceCell<AppsByName<'a>>,
    head_names: OnceCell<AppsByName<'a>>,
}

/// Apps by display name, the first in key order for a name shared.
type AppsByName<'a> = HashMap<String, &'a App>;

fn apps_by_name(inv: &Inventory) -> AppsByName<'_> {
    let mut out = HashMap::with_capacity(inv.apps.len());
    for app in inv.apps.values() {
        out.entry(app.display_name()).or_insert(app);
    }
    out
}

impl<'a> Anchors<'a> {
    pub(crate) fn new(
        base: &'a dyn Tree,
        head: &'a dyn Tree,
        base_inv: &'a Inventory,
        head_inv: &'a Inventory,
    ) -> Self {
        Anchors {
            base,
            head,
            base_inv,
            head_inv,
            base_names: OnceCell::new(),
            head_names: OnceCell::new(),
        }
    }

    /// Where in the head revision a pull-request tool should show `f`, so
    /// it lands on a file of the change: the file itself when it still
    /// exists (its line only when the file is unchanged), else the nearest
    /// changed kustomization above it (the file that stopped including it),
    /// else the Application's own file, else what manages a deleted
    /// Application.
    pub(crate) fn of(&self, f: &Finding) -> Option<Location> {
        let (base, head, base_inv, head_inv) = (self.base, self.head, self.base_inv, self.head_inv);
        let at = |file: &str, line: Option<u32>| {
            Some(Location {
                side: Side::Head,
                file: file.to_string(),
                line,
            })
        };
        if let Some(loc) = &f.location {
            let head_id = blob_id(head, &loc.file);
            match loc.side {
                Side::Head if head_id.is_some() => return Some(loc.clone()),
                Side::Base if head_id.is_some() => {
                    let same = head_id == blob_id(base, &loc.file);
                    return at(&loc.file, loc.line.filter(|_| same));
                }
                _ => {}
            }
            if loc.side == Side::Base {
                let mut dir = source::path::parent(&loc.file);
                loop {
                    for name in ["kustomization.yaml", "kustomization.yml", "Kustomization"] {
                        let k = crate::source::path::child(dir, name);
                        let h = blob_id(head, &k);
                        if h.is_some() && h != blob_id(base, &k) {
                            return at(&k, None);
                        }
                    }
                    if dir.is_empty() {
                        break;
                    }
                    dir = source::path::parent(dir);
                }
            }
        }
        let app_name = f.app.as_deref()?;
        let in_head = |key: &str| {
            head_inv
                .apps
                .get(key)
                .and_then(|a| a.origin.file.as_deref().map(|f| (f, a.origin.line)))
                .or_else(|| {
                    head_inv
                        .appsets
                        .get(key)
                        .and_then(|s| s.origin.file.as_deref().map(|f| (f, s.origin.line)))
                })
                .filter(|(f, _)| blob_id(head, f).is_some())
        };
        let head_names = self.head_names.get_or_init(|| apps_by_name(head_inv));
        if let Some(app) = head_names.get(app_name) {
            if let Some((file, line)) = in_head(&app.key) {
                return at(file, line);
            }
        }
        // A deleted Application: point at what deletes it.
        let base_names = self.base_names.get_or_init(|| apps_by_name(base_inv));
        let app = base_names.get(app_name)?;
        let manager = match app.manager.as_ref()? {
            crate::argocd::Manager::App(k) | crate::argocd::Manager::AppSet(k) => k,
        };
        in_head(manager).and_then(|(file, line)| at(file, line))
    }
}
