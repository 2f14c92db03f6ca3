//! One diff's inventories: both revisions built with the same render
//! options, chart cache and parse cache, colliding roots split off and
//! built again, unchanged apps settled between the two.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use crate::argocd::unchanged::Deferral;
use crate::argocd::{self, unchanged, AppStatus, Inventory, InventoryInput, RepoIdentity};
use crate::config::{Config, CONFIG_FILE};
use crate::render::{ParseCache, RenderOptions};
use crate::source::{GitRepo, Tree};

use super::{drop_beside, LintError, Options};

pub(super) struct Session<'a> {
    pub(super) repo: &'a GitRepo,
    pub(super) cache: ParseCache,
    pub(super) identity: RepoIdentity,
    pub(super) render: RenderOptions,
    /// Root files built as Argo CD instances of their own (their trees
    /// collide with another root's at either revision).
    pub(super) split: BTreeSet<String>,
}

/// How many times the inventories are built again with more colliding
/// roots split off: each build splits every collision it sees, so a second
/// build settles all but roots that only collide once split.
pub(super) const MAX_SPLIT_BUILDS: usize = 3;

/// Roots of `invs` that collide and are not split yet.
pub(super) fn new_collisions(split: &BTreeSet<String>, invs: &[&Inventory]) -> BTreeSet<String> {
    invs.iter()
        .flat_map(|i| &i.colliding_roots)
        .filter(|f| !split.contains(*f))
        .cloned()
        .collect()
}

/// Says which roots are analysed as instances of their own: those of the
/// split files that are roots at either revision (a file split off before
/// the tree that renders it was analysed is a part of that tree).
pub(super) fn split_note(split: &BTreeSet<String>, invs: &[&Inventory]) -> Option<String> {
    let split: BTreeSet<&String> = invs
        .iter()
        .flat_map(|i| &i.roots)
        .filter(|f| split.contains(*f))
        .collect();
    (!split.is_empty()).then(|| {
        format!(
            "{} root file(s) render Applications or ApplicationSets of the same name differently, so each is analysed as its own Argo CD instance (its apps shown as `name@file`): {}; if one Argo CD applies them, group them with `instances:` in {CONFIG_FILE}",
            split.len(),
            split.iter().map(|f| format!("`{f}`")).collect::<Vec<_>>().join(", ")
        )
    })
}

/// The render settings with any tool that lives inside the repository's
/// working directory dropped: a pull request could have put it there (a
/// `bin/helm` reached through `PATH`), and nothing from the repository runs.
pub(super) fn tools_outside(repo: &GitRepo, render: &RenderOptions) -> RenderOptions {
    let mut out = render.clone();
    let Some(root) = repo.workdir().and_then(|w| w.canonicalize().ok()) else {
        return out;
    };
    let inside = |p: &Path| p.canonicalize().is_ok_and(|c| c.starts_with(&root));
    if out.helm.as_deref().is_some_and(inside) {
        out.helm = None;
    }
    out
}

/// `render` with the configuration's `chartCache` and `helmRenderer` when
/// the command line named none. A relative directory is taken from the repository's root:
/// the configuration's paths are the repository's, and CI fills the cache
/// from the checkout (`helm pull -d DIR`).
pub(super) fn with_chart_cache(
    repo: &GitRepo,
    mut render: RenderOptions,
    config: &Config,
) -> RenderOptions {
    // The command line's `--helm-renderer` wins over `helmRenderer`.
    if render.helm_renderer.is_none() {
        render.helm_renderer = config.helm_renderer;
    }
    // The native Helm renderer renders as the helm of the target Argo CD.
    if render.argocd_version.is_none() {
        render.argocd_version = Some(config.argocd_version);
    }
    // A run's own state (what its base names) over the command line's
    // settings. While the run fetches, `chartCache` is not read: it lies in
    // the checkout, where a pull request could have planted archives, and
    // fetched charts are kept by identity instead.
    if let Some(c) = &render.chart_cache {
        let fresh = c.fresh();
        fresh.configure(&config.chart_repositories);
        render.chart_cache = Some(Arc::new(fresh));
        return render;
    }
    let Some(dir) = &config.chart_cache else {
        return render;
    };
    let path = Path::new(dir);
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        match repo.workdir() {
            Some(root) => root.join(path),
            None => return render,
        }
    };
    let cache = crate::render::chart_cache::ChartCache::new(full, dir);
    cache.configure(&config.chart_repositories);
    render.chart_cache = Some(Arc::new(cache));
    render
}

impl<'a> Session<'a> {
    /// A session over `repo` for one revision (`check`, `render --app`).
    pub(super) fn new(repo: &'a GitRepo, config: &Config, opts: &Options) -> Session<'a> {
        Session {
            repo,
            cache: ParseCache::default(),
            identity: RepoIdentity::new(&repo.remote_urls(), config, repo.head_branch().as_deref()),
            render: with_chart_cache(repo, tools_outside(repo, &opts.render), config),
            split: BTreeSet::new(),
        }
    }
    pub(super) fn inventory(
        &self,
        tree: Arc<dyn Tree>,
        config: &Config,
        reuse: Option<&Inventory>,
        defer: Option<Deferral>,
    ) -> Result<Inventory, LintError> {
        let inv = self.with_input(tree, config, reuse, defer, argocd::build);
        match inv.over_limit {
            // Every app of this revision is unknown: comparing would be a guess.
            Some(why) => Err(LintError::Other(format!(
                "revision {}: {why}",
                inv.revision
            ))),
            None => match argocd::only_foreign_repos(&inv, &self.identity) {
                Some(urls) => Err(self.foreign_repos_error(&inv, &urls, config)),
                None => Ok(inv),
            },
        }
    }

    /// Why a revision whose Applications all name other repositories is
    /// refused: nothing would be rendered, and a report of no findings would
    /// look like a change that deletes nothing.
    pub(super) fn foreign_repos_error(
        &self,
        inv: &Inventory,
        urls: &[String],
        config: &Config,
    ) -> LintError {
        let quote = |v: &[String]| {
            v.iter()
                .map(|u| format!("`{u}`"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let remotes = self.repo.remote_urls();
        let known = match (remotes.is_empty(), config.repo_urls.is_empty()) {
            (true, _) => format!("`repoUrls` {}", quote(&config.repo_urls)),
            (false, true) => format!("the git remotes {}", quote(&remotes)),
            (false, false) => format!(
                "the git remotes {} and `repoUrls` {}",
                quote(&remotes),
                quote(&config.repo_urls)
            ),
        };
        LintError::Usage(format!(
            "revision {}: no Application renders from this repository, so nothing can be linted: \
             they name {} and this repository is known as {known}. If those URLs name this \
             repository (a fork, a mirror, another hostname, a CI checkout), list them in \
             {CONFIG_FILE} at the base revision, e.g. `repoUrls: [{}]`",
            inv.revision,
            quote(urls),
            urls.first().map(String::as_str).unwrap_or_default()
        ))
    }

    /// The inventory of one revision (`check`, `render --app`) that `build`
    /// makes, built again with colliding roots split off until none is left
    /// (bounded); a note says which roots were split.
    pub(super) fn single_inventory(
        &mut self,
        build: impl Fn(&Self) -> Result<Inventory, LintError>,
    ) -> Result<Inventory, LintError> {
        let mut inv = build(self)?;
        for _ in 0..MAX_SPLIT_BUILDS {
            let more = new_collisions(&self.split, &[&inv]);
            if more.is_empty() {
                break;
            }
            self.split.extend(more);
            inv = build(self)?;
        }
        let note = split_note(&self.split, &[&inv]);
        inv.notes.extend(note);
        Ok(inv)
    }

    /// Calls `f` with what building an inventory of `tree` needs.
    pub(super) fn with_input<R>(
        &self,
        tree: Arc<dyn Tree>,
        config: &Config,
        reuse: Option<&Inventory>,
        defer: Option<Deferral>,
        f: impl FnOnce(&InventoryInput<'_>) -> R,
    ) -> R {
        let repo = self.repo;
        // Another branch is its own commit, read as Argo CD reads it: from
        // the remote (`nativeGitClient.lsRemote`), so the remote-tracking
        // branch a local one follows comes first.
        let tree_at = move |rev: &str| -> Option<Arc<dyn Tree>> {
            let c = repo
                .tracked_by(rev)
                .and_then(|r| repo.resolve_commit(&r).ok())
                .map_or_else(
                    || {
                        repo.resolve_commit(rev)
                            .or_else(|_| repo.resolve_commit(&format!("origin/{rev}")))
                    },
                    Ok,
                )
                .ok()?;
            repo.commit_tree(&c).ok()
        };
        let input = InventoryInput {
            tree,
            cache: &self.cache,
            render_options: &self.render,
            config,
            repo: &self.identity,
            tree_at: &tree_at,
            reuse,
            defer,
            split: &self.split,
        };
        let out = f(&input);
        // The footprints of a large fleet's kustomizations take a few
        // milliseconds to free: done beside the rest of the run.
        if let Some(defer) = input.defer {
            drop_beside(defer);
        }
        out
    }

    /// Renders the apps one revision deferred and the other did not confirm
    /// unchanged; returns how many stay unrendered at both.
    pub(super) fn settle(
        &self,
        (base_tree, base_inv): (&Arc<dyn Tree>, &mut Inventory),
        (head_tree, head_inv): (&Arc<dyn Tree>, &mut Inventory),
        config: &Config,
    ) -> usize {
        self.with_input(Arc::clone(base_tree), config, None, None, |bi| {
            self.with_input(Arc::clone(head_tree), config, None, None, |hi| {
                unchanged::settle(base_inv, head_inv, bi, hi)
            })
        })
    }

    /// Renders the apps left unchanged at both revisions, at base, and gives
    /// head the same render: for rules that must see every resource.
    pub(super) fn render_unchanged(
        &self,
        (base_tree, base_inv): (&Arc<dyn Tree>, &mut Inventory),
        head_inv: &mut Inventory,
        config: &Config,
    ) {
        let keys: Vec<String> = base_inv
            .apps
            .values()
            .filter(|a| matches!(a.status, AppStatus::Unchanged))
            .map(|a| a.key.clone())
            .collect();
        self.with_input(Arc::clone(base_tree), config, None, None, |bi| {
            unchanged::render_now(base_inv, bi, &keys);
        });
        for key in keys {
            let (Some(b), Some(h)) = (base_inv.apps.get(&key), head_inv.apps.get_mut(&key)) else {
                continue;
            };
            h.status = b.status.clone();
            h.resources.clone_from(&b.resources);
            h.inputs = b.inputs.clone();
            h.source_types.clone_from(&b.source_types);
            h.plugins.clone_from(&b.plugins);
            head_inv.reused.insert(key);
        }
    }
}
