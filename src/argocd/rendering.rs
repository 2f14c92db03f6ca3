//! Rendering one app at one revision: from the tree, reused from the other
//! revision's inventory, or left unrendered as unchanged.

use super::*;
use crate::source::changes::Changes;
use std::collections::hash_map::Entry;
/// Which tree a source renders from, or why it is external.
pub(super) fn source_tree(
    input: &InventoryInput<'_>,
    src: &AppSource,
    implicit: bool,
) -> Result<Arc<dyn Tree>, String> {
    if implicit {
        return Ok(Arc::clone(&input.tree));
    }
    if let Some(chart) = &src.chart {
        return Err(format!("Helm chart `{chart}` from `{}`", src.repo_url));
    }
    if src.repo_url.is_empty() {
        return Err("a source with no repoURL".to_string());
    }
    if !input.repo.is_this_repo(&src.repo_url) {
        return Err(format!("repository `{}`", src.repo_url));
    }
    if input.repo.branches.contains(&src.target_revision) {
        return Ok(Arc::clone(&input.tree));
    }
    (input.tree_at)(&src.target_revision).ok_or_else(|| {
        format!(
            "revision `{}`, which is not in this repository",
            src.target_revision
        )
    })
}

/// A symlink anywhere in `tree` that leads outside the repository. Argo CD
/// checks the whole checkout before rendering any source of it (AC
/// `CheckOutOfBoundsSymlinks`, absolute targets included), so one such link
/// fails every app of the repository, not only the app whose directory
/// holds it. A loop is not out of bounds: it fails only an app that reads it.
/// Of several such links the first in `filepath.Walk` order is named, as
/// Argo CD names it.
pub(super) fn out_of_bounds_symlink(tree: &dyn Tree) -> Option<RenderError> {
    if !tree.may_have_symlinks() {
        return None;
    }
    let mut found = OutOfBounds { tree, found: None };
    // The visitor never fails; a directory that cannot be listed is left out.
    let _ = source::walk::walk(tree, "", &mut found);
    found.found
}

/// Looks for the first symlink that leads outside the repository.
struct OutOfBounds<'a> {
    tree: &'a dyn Tree,
    found: Option<RenderError>,
}

impl source::walk::Visitor for OutOfBounds<'_> {
    type Error = std::convert::Infallible;

    fn entry(
        &mut self,
        _: &str,
        full: &str,
        e: &source::Entry,
    ) -> Result<source::walk::Flow, Self::Error> {
        use source::walk::Flow;
        if e.kind != EntryKind::Symlink {
            return Ok(Flow::Continue);
        }
        let Err(err @ source::SourceError::OutsideRepo(_)) = source::resolve(self.tree, full)
        else {
            return Ok(Flow::Continue);
        };
        let mut e = RenderError::from_source(&err).at(full.to_string(), None);
        e.message = format!(
            "the repository contains a symlink that leads outside it, `{full}`, and Argo CD refuses to render any app from such a repository"
        );
        self.found = Some(e);
        Ok(Flow::Stop)
    }
}

pub(super) fn render_app(
    input: &InventoryInput<'_>,
    inv: &Inventory,
    oob: Option<&RenderError>,
    mut app: App,
) -> (App, Outcome) {
    let scopes = &inv.scopes;
    // A render that depends on every symlink of the tree is never reused,
    // nor one made under other CRD scopes (they decide resource identity)
    // or other Kustomize build options.
    let reuse = input.reuse.filter(|r| {
        oob.is_none()
            && r.scopes.crds == scopes.crds
            && r.kustomize_build_options == inv.kustomize_build_options
            && r.plugins == inv.plugins
    });
    if let Some(prev) = reuse.and_then(|r| r.apps.get(&app.key)) {
        if reusable(input.tree.as_ref(), &app, prev, || same_paths(input, &app)) {
            app.status = prev.status.clone();
            app.resources.clone_from(&prev.resources);
            app.inputs = prev.inputs.clone();
            app.source_types.clone_from(&prev.source_types);
            app.plugins.clone_from(&prev.plugins);
            return (app, Outcome::Reused);
        }
    }
    if oob.is_none() && unchanged::defers(input, &app, &inv.plugins) {
        app.status = AppStatus::Unchanged;
        return (app, Outcome::Deferred);
    }
    (
        render_fresh(
            input,
            scopes,
            (&inv.kustomize_build_options, &inv.plugins),
            oob,
            app,
        ),
        Outcome::Rendered,
    )
}

/// What the renderer needs of one source of `app` (the source's `path`).
#[must_use]
pub fn source_spec(app: &App, src: &AppSource, path: &str) -> SourceSpec {
    let [directory, kustomize, helm, plugin] = src.options.clone();
    SourceSpec {
        path: path.to_string(),
        directory,
        kustomize,
        helm,
        plugin,
        app_name: app.spec.name.clone(),
        namespace: app.spec.dest_namespace.clone(),
        refs: Vec::new(),
        env: build_env(app, src),
        kustomize_build_options: String::new(),
        plugins: Arc::default(),
    }
}

/// [`source_spec`] with the Application's `ref:` sources, resolved in this
/// repository like any other source (another repository stays external).
#[must_use]
pub fn source_spec_in(
    input: &InventoryInput<'_>,
    app: &App,
    src: &AppSource,
    path: &str,
) -> SourceSpec {
    let mut spec = source_spec(app, src, path);
    spec.refs = app
        .spec
        .sources
        .iter()
        .filter_map(|r| {
            let name = r.ref_name.clone()?;
            let target = match source_tree(input, r, false) {
                Ok(t) if Arc::ptr_eq(&t, &input.tree) => RefTarget::Same,
                Ok(t) => RefTarget::Tree(t),
                Err(why) => RefTarget::External(why),
            };
            Some(RefSource { name, target })
        })
        .collect();
    spec
}

/// Argo CD's build environment of a source (AC
/// `reposerver/repository/repository.go` `newEnv`). The revision
/// variables are left out: they name a commit, which differs at every
/// revision of a diff.
pub(super) fn build_env(app: &App, src: &AppSource) -> Vec<(String, String)> {
    [
        ("ARGOCD_APP_NAME", app.spec.name.as_str()),
        ("ARGOCD_APP_NAMESPACE", app.spec.dest_namespace.as_str()),
        ("ARGOCD_APP_PROJECT_NAME", app.spec.project.as_str()),
        ("ARGOCD_APP_SOURCE_REPO_URL", src.repo_url.as_str()),
        ("ARGOCD_APP_SOURCE_PATH", src.path.as_deref().unwrap_or("")),
        (
            "ARGOCD_APP_SOURCE_TARGET_REVISION",
            src.target_revision.as_str(),
        ),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect()
}

/// Renders every source of `app` from the tree.
pub(super) fn render_fresh(
    input: &InventoryInput<'_>,
    scopes: &Scopes,
    (kustomize_build_options, plugins): (&str, &Arc<crate::render::plugin::Plugins>),
    oob: Option<&RenderError>,
    mut app: App,
) -> App {
    let mut resources: Vec<Manifest> = Vec::new();
    let mut externals: Vec<String> = Vec::new();
    let mut left_out: Vec<LeftOut> = Vec::new();
    let mut local = 0;
    // A chart-cache source this run cannot read (its archive not cached, a
    // version range): the first such error, kept to fail the app with when
    // no other source renders.
    let mut uncached: Option<RenderError> = None;
    // The spec is shared: held apart from `app`, which the loop records into.
    let app_spec = Arc::clone(&app.spec);
    for src in &app_spec.sources {
        if let (Some(chart), Some(charts)) = (&src.chart, &input.render_options.chart_cache) {
            let result = render_cached_chart(
                input,
                scopes,
                kustomize_build_options,
                &app,
                src,
                chart,
                charts,
            );
            match result {
                Ok((r, inputs)) => {
                    local += 1;
                    Arc::make_mut(&mut app.inputs).extend(inputs);
                    app.source_types.push(r.source_type);
                    resources.extend(r.manifests);
                }
                // Argo CD fetches the chart and renders it: what this run
                // lacks is the archive, not a fault of the repository, so
                // the other sources are still rendered.
                Err(e) if e.kind != render::RenderErrorKind::Content => {
                    record_ref_files(&mut app, input, src);
                    left_out.push(LeftOut {
                        source: format!("Helm chart `{chart}` from `{}`", src.repo_url),
                        why: Some(e.message.clone()),
                    });
                    uncached.get_or_insert(e);
                }
                Err(e) => {
                    record_ref_files(&mut app, input, src);
                    app.status = AppStatus::Unrendered(e);
                    return app;
                }
            }
            continue;
        }
        let Some(path) = src.path.clone() else {
            if src.ref_name.is_none() || src.chart.is_some() {
                externals.push(
                    source_tree(input, src, app.implicit)
                        .err()
                        .unwrap_or_else(|| "a source with no path".into()),
                );
            }
            continue;
        };
        let tree = match source_tree(input, src, app.implicit) {
            Ok(t) => t,
            Err(why) => {
                externals.push(why);
                continue;
            }
        };
        local += 1;
        let oob_here = if Arc::ptr_eq(&tree, &input.tree) {
            oob.cloned()
        } else {
            out_of_bounds_symlink(tree.as_ref())
        };
        if let Some(e) = oob_here {
            record_source_dirs(&mut app, tree.as_ref());
            app.status = AppStatus::Unrendered(e);
            return app;
        }
        let cx = RenderContext::new(tree.as_ref(), input.cache, input.render_options);
        let mut spec = source_spec_in(input, &app, src, &path);
        spec.kustomize_build_options = kustomize_build_options.to_string();
        spec.plugins = Arc::clone(plugins);
        let result = render::render(&cx, &spec, scopes);
        Arc::make_mut(&mut app.inputs).extend(cx.inputs());
        match result {
            Ok(r) => {
                app.source_types.push(r.source_type);
                app.plugins.extend(r.plugin.as_ref().map(|p| p.describe()));
                resources.extend(r.manifests);
            }
            Err(e) => {
                record_source_dirs(&mut app, tree.as_ref());
                app.status = AppStatus::Unrendered(e);
                return app;
            }
        }
    }
    if local == 0 {
        app.status = match uncached {
            Some(e) => AppStatus::Unrendered(e),
            None => AppStatus::External(externals.join(", ")),
        };
        return app;
    }
    app.resources = last_of_each_id(resources).into();
    // Argo CD asks the repo-server for every source and appends what each
    // renders to one list of targets (AC `controller/state.go`
    // `GetRepoObjs`; an error in any source fails the whole comparison, so a
    // content error above fails the app): what the sources read here
    // render is a part of the targets, never the whole.
    left_out.extend(
        externals
            .into_iter()
            .map(|source| LeftOut { source, why: None }),
    );
    app.status = if left_out.is_empty() {
        AppStatus::Rendered
    } else {
        AppStatus::Partial(left_out)
    };
    app
}

/// One resource per id, where the first of that id stood, as the last of
/// that id is (Argo CD's `RepeatedResourceWarning`). Ids are hashed, not
/// copied or ordered: an app-of-apps renders thousands.
fn last_of_each_id(resources: Vec<Manifest>) -> Vec<Manifest> {
    let mut last: FastMap<&crate::manifest::ResourceId, usize> = source::fast_map(resources.len());
    let mut firsts: Vec<usize> = Vec::with_capacity(resources.len());
    for (i, m) in resources.iter().enumerate() {
        match last.entry(&m.id) {
            Entry::Occupied(mut e) => *e.get_mut() = i,
            Entry::Vacant(e) => {
                e.insert(i);
                firsts.push(i);
            }
        }
    }
    if firsts.len() == resources.len() {
        return resources;
    }
    let winners: Vec<usize> = firsts.iter().map(|&f| last[&resources[f].id]).collect();
    let mut slots: Vec<Option<Manifest>> = resources.into_iter().map(Some).collect();
    winners
        .into_iter()
        .filter_map(|i| slots[i].take())
        .collect()
}

/// The key under which an app records the chart archive it rendered, by
/// content: no path of a repository starts with a NUL byte.
pub(super) const CHART_CACHE_INPUT: &str = "\0chart-cache/";

/// Renders a source installing `chart` from a Helm repository from the
/// chart cache (see [`crate::render::chart_cache`]). Returns the render and
/// its inputs: the archive under [`CHART_CACHE_INPUT`], keyed by content,
/// and the `$ref` files read from the repository.
pub(super) fn render_cached_chart(
    input: &InventoryInput<'_>,
    scopes: &Scopes,
    kustomize_build_options: &str,
    app: &App,
    src: &AppSource,
    chart: &str,
    charts: &render::chart_cache::ChartCache,
) -> Result<(render::Rendered, BTreeMap<String, ObjectId>), RenderError> {
    let cached = charts.chart(
        chart,
        &src.repo_url,
        &src.target_revision,
        input.tree.as_ref(),
    )?;
    let cx = RenderContext::new(cached.tree.as_ref(), input.cache, input.render_options);
    let mut spec = source_spec_in(input, app, src, &cached.path);
    spec.kustomize_build_options = kustomize_build_options.to_string();
    // `$ref` files of this revision are the repository's, not the archive's.
    for r in &mut spec.refs {
        if r.target == RefTarget::Same {
            r.target = RefTarget::Tree(Arc::clone(&input.tree));
        }
    }
    let mut rendered = render::render(&cx, &spec, scopes)?;
    // The objects come from the archive, not from a file of the repository:
    // findings about them point at the Application.
    for m in &mut rendered.manifests {
        m.origin = app.origin.clone();
    }
    let archive = cached.tree.as_ref();
    let mut inputs = cx.inputs();
    inputs.retain(|key, id| {
        let p = key.strip_suffix('/').unwrap_or(key);
        archive.entry(p).ok().flatten().map(|e| e.id) != Some(*id)
    });
    inputs.insert(format!("{CHART_CACHE_INPUT}{}", cached.file), cached.id);
    Ok((rendered, inputs))
}

/// Records, for a chart-cache source that failed (its archive not cached,
/// a template error), the `$ref` files of this revision it names: a change
/// to them must count as a change to the app's inputs, as for a chart in
/// the repository (GL000 tells a failure the change touches by these).
pub(super) fn record_ref_files(app: &mut App, input: &InventoryInput<'_>, src: &AppSource) {
    let spec = source_spec_in(input, app, src, "");
    let Ok(fp) = render::helm::ref_footprint(&spec) else {
        return;
    };
    let tree = input.tree.as_ref();
    for p in fp.entries {
        if let Ok(Some(e)) = tree.entry(&p) {
            Arc::make_mut(&mut app.inputs).insert(p, e.id);
        }
    }
    for d in fp.subtrees {
        if let Ok(Some(e)) = tree.entry(&d) {
            Arc::make_mut(&mut app.inputs).insert(format!("{d}/"), e.id);
        }
    }
}

/// Records, for an app whose render failed, the id of every local source
/// directory besides what the render read before failing: a failure stops
/// reading early, and a change below the app's own directory must count as
/// a change to its inputs (GL000 tells a failure the change touches from one
/// it does not by these inputs). The repository root is left out: every
/// change is below it.
pub(super) fn record_source_dirs(app: &mut App, tree: &dyn Tree) {
    for src in &app.spec.sources {
        let Some(path) = src.path.as_deref().and_then(source::path::normalize) else {
            continue;
        };
        if path.is_empty() {
            continue;
        }
        if let Ok(Some(e)) = tree.entry(&path) {
            Arc::make_mut(&mut app.inputs).insert(format!("{path}/"), e.id);
        }
    }
}

/// The paths that differ between this revision's tree and the other's,
/// when they alone tell whether an input of `app`'s render at the other
/// revision is the same here: neither tree holds a symlink (an input is
/// recorded with the id of what a link leads to), and every source of the
/// app reads this tree (inputs of another tree, or of a chart archive,
/// are not paths of it).
fn same_paths<'a>(input: &'a InventoryInput<'_>, app: &App) -> Option<&'a Changes> {
    let d = input.defer.as_ref()?;
    if input.tree.may_have_symlinks() || d.other.may_have_symlinks() {
        return None;
    }
    let this_tree_only = app.spec.sources.iter().all(|src| {
        src.chart.is_none()
            && src.ref_name.is_none()
            && src.path.is_some()
            && source_tree(input, src, app.implicit).is_ok_and(|t| Arc::ptr_eq(&t, &input.tree))
    });
    this_tree_only.then_some(d.changes.as_deref()).flatten()
}

/// An app renders identically when its Application object is the same and
/// every input it read has the same id in this tree. Inputs are recorded
/// with the id of what a symlink leads to, so a path whose own entry
/// (or a parent) differs is compared again after resolving it. `changes`
/// ([`same_paths`]) answers for most paths without a lookup: an app-of-apps
/// reads thousands of files, nearly all of them unchanged. It is asked
/// for only past the cheap tests: a fleet's apps are looked at by the
/// thousand, and nearly all of them were not rendered at all.
pub(super) fn reusable<'c>(
    tree: &dyn Tree,
    app: &App,
    prev: &App,
    changes: impl FnOnce() -> Option<&'c Changes>,
) -> bool {
    if app.object != prev.object
        || prev.inputs.is_empty()
        || !matches!(prev.status, AppStatus::Rendered)
    {
        return false;
    }
    let changes = changes();
    let unchanged = |(path, id): (&String, &ObjectId)| {
        let p = path.strip_suffix('/').unwrap_or(path);
        if changes.and_then(|c| c.same(p)) == Some(true) {
            return true;
        }
        let same = |e: Option<source::Entry>| e.is_some_and(|e| e.id == *id);
        same(tree.entry(p).ok().flatten())
            || source::resolve(tree, p)
                .ok()
                .is_some_and(|real| real != p && same(tree.entry(&real).ok().flatten()))
    };
    // An app-of-apps reads thousands of files, and its reuse is often the
    // last work of a round: the other cores, done with their apps, help.
    if prev.inputs.len() >= PARALLEL_INPUTS {
        prev.inputs.par_iter().all(unchanged)
    } else {
        prev.inputs.iter().all(unchanged)
    }
}

/// Inputs from which a render's reuse checks them in parallel.
const PARALLEL_INPUTS: usize = 1024;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::manifest::{manifest_from_value, Scopes};

    #[test]
    fn a_repeated_resource_keeps_its_first_place_and_its_last_content() {
        let m = |name: &str, data: &str| {
            let v = serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name}, "data": {"k": data}});
            manifest_from_value(v, Origin::default(), "ns", &Scopes::default()).expect("object")
        };
        let shown = |ms: &[Manifest]| -> Vec<String> {
            ms.iter()
                .map(|m| format!("{}={}", m.id.name, m.value["data"]["k"]))
                .collect()
        };
        let once = vec![m("a", "1"), m("b", "1")];
        assert_eq!(shown(&last_of_each_id(once)), ["a=\"1\"", "b=\"1\""]);
        let repeated = vec![
            m("a", "1"),
            m("b", "1"),
            m("a", "2"),
            m("c", "1"),
            m("b", "2"),
            m("a", "3"),
        ];
        assert_eq!(
            shown(&last_of_each_id(repeated)),
            ["a=\"3\"", "b=\"2\"", "c=\"1\""]
        );
    }

    /// An app-of-apps' thousands of inputs are checked in parallel, a
    /// small app's one by one: both find the one input a change touched,
    /// and both reuse a render whose inputs are all the same.
    #[test]
    fn a_render_is_reused_only_when_every_input_is_the_same_however_many_it_read() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = |i: usize| format!("apps/app-{i:04}.yaml");
        // 1,100 files; `extra` is appended to the sixth.
        let files = |extra: &str| -> Vec<(String, Vec<u8>)> {
            (0..1100)
                .map(|i| {
                    let tail = if i == 5 { extra } else { "" };
                    (file(i), format!("n: {i}\n{tail}").into_bytes())
                })
                .collect()
        };
        let base = source::write_commit(dir.path(), "main", None, &files(""), "base")
            .unwrap_or_else(|e| panic!("{e}"));
        let head = source::write_commit(dir.path(), "head", Some("main"), &files("x: 1\n"), "head")
            .unwrap_or_else(|e| panic!("{e}"));
        let repo = source::GitRepo::open(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let tree = |c: &str| repo.commit_tree(c).unwrap_or_else(|e| panic!("{e}"));
        let (base, head) = (tree(&base), tree(&head));
        let object = Arc::new(LazyValue::from(serde_json::json!({
            "apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "apps", "namespace": "argocd"},
            "spec": {"source": {"repoURL": "https://example.com/repo.git", "path": "apps"},
                     "destination": {"server": "https://kubernetes.default.svc"}}
        })));
        let spec = Arc::new(AppSpec::parse(&object).unwrap_or_else(|| panic!("an Application")));
        // The app as the base revision rendered it, having read `inputs`.
        let rendered = |inputs: &[usize]| {
            let mut app = new_app(
                "argocd/apps".to_string(),
                Arc::clone(&spec),
                Arc::clone(&object),
                Origin::default(),
                None,
                None,
            );
            app.status = AppStatus::Rendered;
            for &i in inputs {
                let e = base
                    .entry(&file(i))
                    .ok()
                    .flatten()
                    .unwrap_or_else(|| panic!("{i}"));
                Arc::make_mut(&mut app.inputs).insert(file(i), e.id);
            }
            app
        };
        let at_head = rendered(&[]);
        let all: Vec<usize> = (0..1100).collect();
        let few: Vec<usize> = (0..10).collect();
        let all_but_changed: Vec<usize> = all.iter().copied().filter(|i| *i != 5).collect();
        assert!(all_but_changed.len() >= PARALLEL_INPUTS && few.len() < PARALLEL_INPUTS);
        // The same answers from the trees alone and from their diff.
        let diff = Changes::between(base.as_ref(), head.as_ref())
            .unwrap_or_else(|| panic!("two commits' trees are diffed"));
        for changes in [None, Some(&diff)] {
            for inputs in [&all, &few, &all_but_changed] {
                assert!(
                    reusable(base.as_ref(), &at_head, &rendered(inputs), || changes),
                    "{}",
                    inputs.len()
                );
            }
            // The change to `app-0005.yaml` is found among 1,100 inputs and 10.
            assert!(!reusable(head.as_ref(), &at_head, &rendered(&all), || {
                changes
            }));
            assert!(!reusable(head.as_ref(), &at_head, &rendered(&few), || {
                changes
            }));
            assert!(reusable(
                head.as_ref(),
                &at_head,
                &rendered(&all_but_changed),
                || changes
            ));
        }
    }
}
