//! Turning one Argo CD source (a path in a tree plus its `directory` /
//! `kustomize` / `helm` options) into resources, the way Argo CD's
//! repo-server would, while recording every input read (path → object id)
//! so an app whose inputs did not change need not be rendered twice.
//!
//! Knows nothing of Applications, prunes or rules.

pub(crate) mod bounded;
pub(crate) mod chart_cache;
pub(crate) mod chart_fetch;
pub use chart_cache::ChartCache;
pub use chart_fetch::{Credentials, FetchSettings, Fetcher};
pub(crate) mod directory;
mod generated;
pub(crate) mod helm;
mod kept_footprint;
pub(crate) mod kept_parse;
pub mod kustomize;
pub(crate) mod materialize;
pub(crate) mod overrides;
pub(crate) mod plugin;
pub(crate) mod plugin_env;

use goyaml::json::LazyValue;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::Value;

use crate::manifest::{resource_id_of, Manifest, Origin, Scopes};
use crate::source::{self, Entry, EntryKind, FastMap, ObjectId, SourceError, Tree};
use gotemplate::Variant;
use goyaml::{Dialect, Doc, YamlError};

/// Most resources one source may render. A few kilobytes of repository can
/// name the same file thousands of times (git stores it once), each holding
/// a `List` that aliases one object thousands of times; without a bound
/// that multiplies into tens of gigabytes.
pub(crate) const MAX_RESOURCES_PER_SOURCE: usize = 100_000;

/// Most objects rendered in one run, every app at both revisions together
/// (renders reused from the other revision are not counted). Apps that
/// render the same directory are rendered once each, so a few Applications
/// can multiply one large directory; past this bound the run stops with an
/// error rather than exhaust memory or time.
pub(crate) const MAX_RENDERED_OBJECTS: usize = 500_000;

/// Why a run stopped at [`MAX_RENDERED_OBJECTS`].
#[must_use]
pub(crate) fn over_budget_message() -> String {
    format!("its apps render more than {MAX_RENDERED_OBJECTS} objects in this run, more than gitops-lint reads")
}

/// The error for a source that renders more than [`MAX_RESOURCES_PER_SOURCE`].
#[must_use]
pub(crate) fn too_many_resources(path: &str) -> RenderError {
    RenderError::content(format!(
        "`{}` renders more than {MAX_RESOURCES_PER_SOURCE} resources, more than gitops-lint reads from one source",
        display_path(path)
    ))
}

/// What went wrong, which decides how loudly it is reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum RenderErrorKind {
    /// The repository content is at fault (broken YAML, missing file, bad reference).
    Content,
    /// A tool that is needed is not installed (for example `helm`).
    ToolMissing,
    /// A feature gitops-lint deliberately does not evaluate (remote bases,
    /// exec plugins, network): the app cannot be analysed offline.
    Unsupported,
    /// Something tried to leave the repository (symlink, `../` past the root).
    OutsideRepo,
    /// A chart repository neither the base revision nor its configuration
    /// names: not contacted, so the source cannot be judged until it is
    /// trusted, whatever else the change does.
    Untrusted,
}

/// Why a source could not be rendered. Never turned into an empty app.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct RenderError {
    /// Category.
    pub kind: RenderErrorKind,
    /// One line, lower-case start, no trailing period.
    pub message: String,
    /// The file at fault, when known.
    pub(crate) file: Option<String>,
    /// 1-based line in `file`, when known.
    pub(crate) line: Option<u32>,
}

impl RenderError {
    /// A source naming a chart repository that is not trusted.
    #[must_use]
    pub(crate) fn untrusted(message: impl Into<String>) -> RenderError {
        RenderError {
            kind: RenderErrorKind::Untrusted,
            message: message.into(),
            file: None,
            line: None,
        }
    }

    /// A content error.
    #[must_use]
    pub(crate) fn content(message: impl Into<String>) -> RenderError {
        RenderError {
            kind: RenderErrorKind::Content,
            message: message.into(),
            file: None,
            line: None,
        }
    }

    /// An unsupported-feature error.
    #[must_use]
    pub(crate) fn unsupported(message: impl Into<String>) -> RenderError {
        RenderError {
            kind: RenderErrorKind::Unsupported,
            message: message.into(),
            file: None,
            line: None,
        }
    }

    /// Attaches a file (and optionally a line).
    #[must_use]
    pub(crate) fn at(mut self, file: impl Into<String>, line: Option<u32>) -> RenderError {
        self.file = Some(file.into());
        self.line = line;
        self
    }

    /// From a source error.
    #[must_use]
    pub(crate) fn from_source(e: &SourceError) -> RenderError {
        let kind = match e {
            SourceError::OutsideRepo(_) | SourceError::SymlinkLoop(_) => {
                RenderErrorKind::OutsideRepo
            }
            SourceError::Submodule(_) => RenderErrorKind::Unsupported,
            _ => RenderErrorKind::Content,
        };
        RenderError {
            kind,
            message: e.to_string(),
            file: None,
            line: None,
        }
    }

    /// From a YAML error in `file`.
    #[must_use]
    pub(crate) fn from_yaml(file: &str, e: &YamlError) -> RenderError {
        RenderError {
            kind: RenderErrorKind::Content,
            message: format!("`{file}`: invalid YAML: {e}"),
            file: Some(file.to_string()),
            line: Some(e.line),
        }
    }
}

/// Parsed YAML streams keyed by blob id (and dialect), shared by every
/// render of a run: a file unchanged between revisions is parsed once, and
/// so is a base read by many overlays. Each entry is filled exactly once
/// even when several threads ask for it together (the others wait).
#[derive(Default)]
pub struct ParseCache {
    map: Mutex<FastMap<(ObjectId, Dialect), Arc<ParseSlot>>>,
    parses: AtomicUsize,
    bytes: AtomicUsize,
    /// Objects rendered so far in this run (see [`MAX_RENDERED_OBJECTS`]).
    rendered: AtomicUsize,
    /// Helm charts' parsed templates by the digest of their names and
    /// sources: a chart 500 apps render is parsed once per run.
    template_sets: Mutex<HashMap<[u8; 32], Arc<gotemplate::TemplateSet>>>,
    /// Where those parses are kept between runs ([`kept_parse`]).
    kept: Option<Arc<crate::source::facts::Facts>>,
    /// Parses taken from `kept` instead of the blob.
    kept_hits: AtomicUsize,
    /// Each document of a parse as one shared value, for readers that
    /// keep documents (the inventory scan): both revisions of a diff then
    /// hold one object for an unchanged file, compared by address.
    shared: Mutex<SharedValues>,
}

type SharedValues = FastMap<(ObjectId, Dialect), Arc<[Arc<LazyValue>]>>;

/// Most distinct template sets a run keeps; past it a chart is parsed for
/// each render (still right, only slower), so memory stays bounded.
const MAX_TEMPLATE_SETS: usize = 64;

/// One parsed file, shared.
pub(crate) type ParsedStream = Arc<Result<Vec<Doc>, YamlError>>;

/// A cache entry: the parse, filled by the first thread that asks for it,
/// and, for a blob parsed as sigs.k8s.io/yaml from a content-addressed
/// tree, what readers test in its bytes, so that a later reader of the
/// parse need not read the blob. One entry holds both: a warm run of a
/// large fleet asks for tens of thousands, each lookup a cache miss.
#[derive(Default)]
struct ParseSlot {
    parsed: OnceLock<ParsedStream>,
    flags: OnceLock<kept_parse::Flags>,
}

impl ParseCache {
    /// A cache that keeps its sigs.k8s.io/yaml parses of content-addressed
    /// blobs in `facts`, and takes them from there ([`kept_parse`]).
    #[must_use]
    pub(crate) fn with_kept(facts: Option<Arc<crate::source::facts::Facts>>) -> ParseCache {
        ParseCache {
            kept: facts,
            ..ParseCache::default()
        }
    }

    /// The sigs.k8s.io/yaml parse of content-addressed blob `id`, with
    /// what readers test in its bytes, when known without reading the
    /// blob: parsed earlier in this run, or kept by an earlier one.
    pub(crate) fn known_sigs(&self, id: ObjectId) -> Option<(ParsedStream, kept_parse::Flags)> {
        let slot = self.slot(id, Dialect::SigsYaml);
        if let Some(parsed) = slot.parsed.get() {
            let flags = *slot.flags.get()?;
            return Some((Arc::clone(parsed), flags));
        }
        let (flags, docs) = kept_parse::kept(self.kept.as_deref()?, id)?;
        // The flags are a function of the bytes: whoever sets them first
        // sets these.
        let _ = slot.flags.set(flags);
        let mut fresh = false;
        let parsed = slot.parsed.get_or_init(|| {
            fresh = true;
            Arc::new(Ok(docs))
        });
        if fresh {
            self.kept_hits.fetch_add(1, Ordering::Relaxed);
        }
        Some((Arc::clone(parsed), flags))
    }

    /// [`ParseCache::get_or_parse_as`] for a blob of a content-addressed
    /// tree (`content_addressed`): a sigs.k8s.io/yaml parse is then known
    /// to [`ParseCache::known_sigs`], and kept between runs.
    pub(crate) fn get_or_parse_in(
        &self,
        id: ObjectId,
        bytes: &[u8],
        dialect: Dialect,
        content_addressed: bool,
    ) -> ParsedStream {
        let slot = self.slot(id, dialect);
        let parsed = self.parse_into(&slot, bytes, dialect);
        if !content_addressed || dialect != Dialect::SigsYaml || id.0 == [0; 20] {
            return parsed;
        }
        let Ok(docs) = parsed.as_ref() else {
            return parsed;
        };
        let flags = kept_parse::Flags::of(bytes);
        let first = slot.flags.set(flags).is_ok();
        // Only blobs the inventory scan parses at every run are worth
        // keeping: those that may declare an Argo CD object (Application
        // files, read again by each app-of-apps rendering them).
        let worth = first && flags.has(kept_parse::Flags::MAY_DECLARE);
        if let Some(facts) = self.kept.as_deref().filter(|_| worth) {
            kept_parse::keep(facts, id, flags, docs);
        }
        parsed
    }

    /// The documents `docs` of blob `id` parsed in `dialect`, each as one
    /// value shared by every caller.
    pub(crate) fn shared_values(
        &self,
        id: ObjectId,
        dialect: Dialect,
        docs: &[Doc],
    ) -> Arc<[Arc<LazyValue>]> {
        let mut shared = self
            .shared
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        Arc::clone(
            shared
                .entry((id, dialect))
                .or_insert_with(|| docs.iter().map(|d| Arc::clone(&d.value)).collect()),
        )
    }

    /// How many parses were taken from those kept between runs.
    #[must_use]
    pub(crate) fn kept_hits(&self) -> usize {
        self.kept_hits.load(Ordering::Relaxed)
    }

    /// The template set parsed from the sources digested as `key`, parsing
    /// it with `parse` the first time. A failed parse is not kept.
    ///
    /// # Errors
    /// What `parse` returns.
    pub(crate) fn template_set<E>(
        &self,
        key: [u8; 32],
        parse: impl FnOnce() -> Result<gotemplate::TemplateSet, E>,
    ) -> Result<Arc<gotemplate::TemplateSet>, E> {
        if let Some(set) = self
            .template_sets
            .lock()
            .ok()
            .and_then(|m| m.get(&key).cloned())
        {
            return Ok(set);
        }
        let set = Arc::new(parse()?);
        if let Ok(mut m) = self.template_sets.lock() {
            if m.len() < MAX_TEMPLATE_SETS {
                m.insert(key, set.clone());
            }
        }
        Ok(set)
    }

    /// Counts `n` rendered objects against the run's budget.
    ///
    /// # Errors
    /// Once the run has rendered more than [`MAX_RENDERED_OBJECTS`].
    pub(crate) fn charge(&self, n: usize) -> Result<(), RenderError> {
        let total = self
            .rendered
            .fetch_add(n, Ordering::Relaxed)
            .saturating_add(n);
        if total > MAX_RENDERED_OBJECTS {
            return Err(RenderError::content(over_budget_message()));
        }
        Ok(())
    }

    /// Whether the run has rendered more than [`MAX_RENDERED_OBJECTS`].
    #[must_use]
    pub(crate) fn over_budget(&self) -> bool {
        self.rendered.load(Ordering::Relaxed) > MAX_RENDERED_OBJECTS
    }

    /// Parses `bytes` in a given dialect, or returns the earlier parse.
    pub(crate) fn get_or_parse_as(
        &self,
        id: ObjectId,
        bytes: &[u8],
        dialect: Dialect,
    ) -> ParsedStream {
        self.parse_into(&self.slot(id, dialect), bytes, dialect)
    }

    /// The entry of blob `id` in `dialect`, made empty if there is none.
    fn slot(&self, id: ObjectId, dialect: Dialect) -> Arc<ParseSlot> {
        Arc::clone(
            self.map
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .entry((id, dialect))
                .or_default(),
        )
    }

    /// The parse `slot` holds, parsing `bytes` into it if it holds none.
    fn parse_into(&self, slot: &ParseSlot, bytes: &[u8], dialect: Dialect) -> ParsedStream {
        Arc::clone(slot.parsed.get_or_init(|| {
            self.parses.fetch_add(1, Ordering::Relaxed);
            self.bytes.fetch_add(bytes.len(), Ordering::Relaxed);
            Arc::new(match std::str::from_utf8(bytes) {
                Ok(text) => goyaml::load_all_as(text, dialect, &goyaml::Limits::default()),
                Err(e) => Err(YamlError {
                    message: format!("file is not valid UTF-8 (byte {})", e.valid_up_to()),
                    line: 1,
                    column: 1,
                    go_yaml: None,
                }),
            })
        }))
    }

    /// How many blobs were parsed (cache misses) so far.
    #[must_use]
    pub(crate) fn parses(&self) -> usize {
        self.parses.load(Ordering::Relaxed)
    }

    /// How many bytes of YAML were parsed so far.
    #[must_use]
    pub(crate) fn parsed_bytes(&self) -> usize {
        self.bytes.load(Ordering::Relaxed)
    }
}

/// Run-wide render settings.
#[derive(Debug, Clone, Default)]
pub struct RenderOptions {
    /// The `helm` binary to use, if one was found.
    pub helm: Option<std::path::PathBuf>,
    /// Render Kustomize with this external binary (`kustomize` or `kubectl`)
    /// instead of natively.
    pub external_kustomize: Option<std::path::PathBuf>,
    /// Where charts from Helm repositories are read from, `helm pull`-ed
    /// (`None`: such sources are external).
    pub chart_cache: Option<Arc<chart_cache::ChartCache>>,
    /// How Helm charts are rendered (`None`: not chosen, the configuration
    /// decides, else natively with the pinned helm as fallback; see
    /// [`RenderOptions::effective_helm_renderer`]).
    pub helm_renderer: Option<HelmRenderer>,
    /// How many times this run has started `helm template` (a count, not a
    /// setting: clones share it).
    pub helm_runs: Arc<std::sync::atomic::AtomicUsize>,
    /// The target Argo CD release (`argocdVersion`), whose helm the native
    /// renderer renders as where helm releases differ
    /// ([`RenderOptions::helm_line`]). `None` (no configuration read):
    /// helm v3.17.1, the corpus reference. The pinned helm binary is
    /// v3.17.1 whatever this says.
    pub argocd_version: Option<(u32, u32)>,
}

impl RenderOptions {
    /// The helm release the native renderer renders as.
    #[must_use]
    pub(crate) fn helm_line(&self) -> helm::native::HelmLine {
        self.argocd_version
            .map_or_else(Default::default, helm::native::HelmLine::for_argocd)
    }

    /// The Helm renderer in force: the one chosen, else the native one.
    /// The pinned helm stays the escape hatch: see
    /// [`RenderOptions::helm_fallback`].
    #[must_use]
    pub fn effective_helm_renderer(&self) -> HelmRenderer {
        self.helm_renderer.unwrap_or(HelmRenderer::Native)
    }

    /// Whether a chart the native renderer does not implement is handed to
    /// the pinned helm: only when no renderer was chosen and helm is on
    /// PATH. A chosen `native` never runs a binary (nothing a chart holds
    /// reaches a child process); a chosen `binary` always does.
    #[must_use]
    pub(crate) fn helm_fallback(&self) -> bool {
        self.helm_renderer.is_none() && self.helm.is_some()
    }
}

/// How Helm charts are rendered (`--helm-renderer`, `helmRenderer:`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HelmRenderer {
    /// `binary`: the pinned `helm template`, as Argo CD runs it.
    Binary,
    /// `native`: in-process; what it does not implement is a render error.
    #[default]
    Native,
}

impl HelmRenderer {
    /// The names the command line and the configuration accept.
    pub(crate) const NAMES: [&'static str; 2] = ["binary", "native"];

    /// The renderer named `name`.
    #[must_use]
    pub(crate) fn parse(name: &str) -> Option<HelmRenderer> {
        match name {
            "binary" => Some(HelmRenderer::Binary),
            "native" => Some(HelmRenderer::Native),
            _ => None,
        }
    }
}

/// Everything one render may read, and the record of what it read.
pub struct RenderContext<'a> {
    /// The tree being rendered.
    pub(crate) tree: &'a dyn Tree,
    /// Shared parse cache.
    pub(crate) cache: &'a ParseCache,
    /// Settings.
    pub(crate) options: &'a RenderOptions,
    inputs: Mutex<BTreeMap<String, ObjectId>>,
    recording: bool,
    /// Nodes Kustomize patches and replacements have been charged in this
    /// render (see `kustomize::charge_nodes`).
    pub(crate) patch_nodes: std::sync::atomic::AtomicUsize,
    /// Which render random values and the clock are drawn for.
    pub(crate) variant: Variant,
    /// Whether the render drew a random value or the clock.
    generated: AtomicBool,
}

impl<'a> RenderContext<'a> {
    /// A fresh context with an empty input record.
    #[must_use]
    pub fn new(
        tree: &'a dyn Tree,
        cache: &'a ParseCache,
        options: &'a RenderOptions,
    ) -> RenderContext<'a> {
        RenderContext {
            tree,
            cache,
            options,
            inputs: Mutex::new(BTreeMap::new()),
            recording: true,
            patch_nodes: std::sync::atomic::AtomicUsize::new(0),
            variant: Variant::First,
            generated: AtomicBool::new(false),
        }
    }

    /// A context that keeps no record of what it reads (for work whose
    /// inputs are accounted for otherwise, e.g. [`footprint`]).
    #[must_use]
    pub(crate) fn unrecorded(
        tree: &'a dyn Tree,
        cache: &'a ParseCache,
        options: &'a RenderOptions,
    ) -> RenderContext<'a> {
        RenderContext {
            recording: false,
            ..RenderContext::new(tree, cache, options)
        }
    }

    fn record(&self, path: &str, id: ObjectId) {
        if !self.recording {
            return;
        }
        self.inputs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(path.to_string(), id);
    }

    fn record_parent(&self, path: &str) {
        if !self.recording {
            return;
        }
        let parent = source::path::parent(path);
        if let Ok(Some(e)) = self.tree.entry(parent) {
            self.record(&format!("{parent}/"), e.id);
        }
    }

    /// A context reading `tree` with this one's cache and options, for
    /// inputs of another source (a multi-source `ref`); pass it to
    /// [`RenderContext::absorb`] afterwards so its reads are recorded here.
    #[must_use]
    pub(crate) fn on_tree<'b>(&self, tree: &'b dyn Tree) -> RenderContext<'b>
    where
        'a: 'b,
    {
        RenderContext {
            tree,
            cache: self.cache,
            options: self.options,
            inputs: Mutex::new(BTreeMap::new()),
            recording: self.recording,
            patch_nodes: std::sync::atomic::AtomicUsize::new(0),
            variant: self.variant,
            generated: AtomicBool::new(false),
        }
    }

    /// Records that the render drew a random value or the clock.
    pub(crate) fn mark_generated(&self) {
        self.generated.store(true, Ordering::Relaxed);
    }

    /// Records everything `other` read as read by this context.
    pub(crate) fn absorb(&self, other: &RenderContext<'_>) {
        if other.generated.load(Ordering::Relaxed) {
            self.mark_generated();
        }
        if !self.recording {
            return;
        }
        let theirs = other.inputs();
        self.inputs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .extend(theirs);
    }

    /// Everything read so far: file path → blob id, `dir/` → tree id.
    #[must_use]
    pub fn inputs(&self) -> BTreeMap<String, ObjectId> {
        self.inputs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// `path` resolved (following in-repository symlinks), with the entry
    /// there: [`source::resolve_found`]'s, else looked up.
    ///
    /// # Errors
    /// Escaping symlinks, missing components; a tree that cannot be read.
    fn resolved(&self, path: &str) -> Result<(String, Option<Entry>), RenderError> {
        let (real, found) = source::resolve_found(self.tree, path)
            .map_err(|e| RenderError::from_source(&e).at(path, None))?;
        let entry = match found {
            Some(e) => Some(e),
            None => self
                .tree
                .entry(&real)
                .map_err(|e| RenderError::from_source(&e))?,
        };
        Ok((real, entry))
    }

    /// Reads a file (following in-repository symlinks) and records it.
    ///
    /// # Errors
    /// Missing files, escaping symlinks.
    pub(crate) fn read(&self, path: &str) -> Result<Arc<[u8]>, RenderError> {
        let (real, entry) = self.resolved(path)?;
        let entry = entry.ok_or_else(|| {
            RenderError::content(format!("`{path}` does not exist")).at(path, None)
        })?;
        if entry.kind != EntryKind::File {
            return Err(RenderError::content(format!("`{path}` is not a file")).at(path, None));
        }
        self.record(path, entry.id);
        self.tree
            .read_raw(&real)
            .map_err(|e| RenderError::from_source(&e).at(path, None))
    }

    /// The sigs.k8s.io/yaml parse of file `path` with what is tested in its
    /// bytes, recorded as read, when known without reading the blob
    /// ([`ParseCache::known_sigs`]); `None` otherwise (nothing is recorded
    /// then: read it with [`RenderContext::read`]).
    ///
    /// # Errors
    /// Missing files, escaping symlinks.
    pub(crate) fn known_sigs(
        &self,
        path: &str,
    ) -> Result<Option<(SharedDocs, kept_parse::Flags)>, RenderError> {
        if !self.tree.content_addressed() {
            return Ok(None);
        }
        let (_, entry) = self.resolved(path)?;
        let Some(entry) = entry.filter(|e| e.kind == EntryKind::File) else {
            return Ok(None);
        };
        let Some((parsed, flags)) = self.cache.known_sigs(entry.id) else {
            return Ok(None);
        };
        if parsed.is_err() {
            return Ok(None);
        }
        self.record(path, entry.id);
        Ok(Some((
            SharedDocs {
                parsed,
                id: entry.id,
                dialect: Dialect::SigsYaml,
            },
            flags,
        )))
    }

    /// Lists a directory (following in-repository symlinks) and records it.
    ///
    /// # Errors
    /// Missing directories, escaping symlinks.
    pub(crate) fn list(&self, dir: &str) -> Result<Vec<Entry>, RenderError> {
        let real = source::resolve(self.tree, dir)
            .map_err(|e| RenderError::from_source(&e).at(dir, None))?;
        if let Ok(Some(e)) = self.tree.entry(&real) {
            self.record(&format!("{dir}/"), e.id);
        }
        self.tree
            .list_raw(&real)
            .map_err(|e| RenderError::from_source(&e).at(dir, None))
    }

    /// What `path` is once symlinks are followed (`None` when absent). The
    /// parent directory is recorded, so a file appearing later is noticed.
    ///
    /// # Errors
    /// Escaping symlinks.
    pub(crate) fn kind_of(&self, path: &str) -> Result<Option<EntryKind>, RenderError> {
        self.record_parent(path);
        source::kind_of(self.tree, path).map_err(|e| RenderError::from_source(&e).at(path, None))
    }

    /// Reads and parses a YAML/JSON file the way Kustomize reads resources
    /// (cached by blob id across revisions).
    ///
    /// # Errors
    /// Unreadable or invalid files.
    pub(crate) fn load_yaml(&self, path: &str) -> Result<Vec<Doc>, RenderError> {
        self.load_yaml_as(path, Dialect::Kyaml)
    }

    /// Reads and parses a YAML/JSON file in a given dialect: Argo CD reads
    /// plain manifests, and Kustomize its kustomization files, with
    /// sigs.k8s.io/yaml ([`Dialect::SigsYaml`]).
    ///
    /// # Errors
    /// Unreadable or invalid files.
    pub(crate) fn load_yaml_as(
        &self,
        path: &str,
        dialect: Dialect,
    ) -> Result<Vec<Doc>, RenderError> {
        Ok(self.load_yaml_shared_as(path, dialect)?.to_vec())
    }

    /// Like [`RenderContext::load_yaml_as`], but shares the cached documents
    /// instead of copying them: for readers that only look (a
    /// kustomization, a values file), nothing is copied.
    ///
    /// # Errors
    /// Unreadable or invalid files.
    pub(crate) fn load_yaml_shared_as(
        &self,
        path: &str,
        dialect: Dialect,
    ) -> Result<SharedDocs, RenderError> {
        let (real, entry) = self.resolved(path)?;
        let entry = entry.ok_or_else(|| {
            RenderError::content(format!("`{path}` does not exist")).at(path, None)
        })?;
        self.record(path, entry.id);
        let content_addressed = self.tree.content_addressed();
        let known = (content_addressed && dialect == Dialect::SigsYaml)
            .then(|| self.cache.known_sigs(entry.id))
            .flatten();
        let parsed = match known {
            Some((parsed, _)) => parsed,
            None => {
                let bytes = self
                    .tree
                    .read_raw(&real)
                    .map_err(|e| RenderError::from_source(&e).at(path, None))?;
                self.cache
                    .get_or_parse_in(entry.id, &bytes, dialect, content_addressed)
            }
        };
        match parsed.as_ref() {
            Ok(_) => Ok(SharedDocs {
                parsed,
                id: entry.id,
                dialect,
            }),
            Err(e) => Err(RenderError::from_yaml(path, e)),
        }
    }
}

/// The documents of one parsed file, shared with the parse cache.
#[derive(Clone)]
pub(crate) struct SharedDocs {
    parsed: ParsedStream,
    id: ObjectId,
    dialect: Dialect,
}

impl SharedDocs {
    /// Each document as the one value the parse cache shares
    /// ([`ParseCache::shared_values`]).
    pub(crate) fn values(&self, cache: &ParseCache) -> Arc<[Arc<LazyValue>]> {
        cache.shared_values(self.id, self.dialect, self)
    }
}

impl std::ops::Deref for SharedDocs {
    type Target = [Doc];

    fn deref(&self) -> &[Doc] {
        // Only built from a successful parse.
        self.parsed.as_ref().as_ref().map_or(&[], Vec::as_slice)
    }
}

/// One object produced by a renderer, before namespace defaulting.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderedObject {
    /// The object.
    pub value: Value,
    /// Where it came from (generated objects have no file).
    pub(crate) origin: Origin,
}

/// How Argo CD will render a source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceType {
    /// Plain YAML/JSON files.
    Directory,
    /// A kustomization.
    Kustomize,
    /// A Helm chart.
    Helm,
    /// A config-management plugin (never run).
    Plugin,
}

/// One source to render: a path in the tree plus the raw option blocks of
/// the Application's `spec.source`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceSpec {
    /// Repository-relative directory.
    pub path: String,
    /// `spec.source.directory`, if given.
    pub directory: Option<Value>,
    /// `spec.source.kustomize`, if given.
    pub kustomize: Option<Value>,
    /// `spec.source.helm`, if given.
    pub helm: Option<Value>,
    /// `spec.source.plugin`, if given.
    pub plugin: Option<Value>,
    /// The Application's name (Helm release name default).
    pub app_name: String,
    /// `spec.destination.namespace`.
    pub namespace: String,
    /// The `ref:` sources of a multi-source Application, which value files
    /// name as `$<ref>/path`.
    pub refs: Vec<RefSource>,
    /// Argo CD's build environment for this source (`ARGOCD_APP_NAME`, …),
    /// substituted into Helm parameters and value file paths (AC
    /// `reposerver/repository/repository.go` `newEnv`).
    pub env: Vec<(String, String)>,
    /// Argo CD's `kustomize.buildOptions` (`argocd-cm`), as written: only
    /// `--enable-helm` changes what gitops-lint renders.
    pub kustomize_build_options: String,
    /// The config-management plugins of the configuration (`plugins:`):
    /// which one renders a plugin source, and as what ([`plugin`]).
    pub plugins: Arc<plugin::Plugins>,
}

/// A multi-source `ref:` source: where `$<name>/…` paths are read.
#[derive(Debug, Clone, PartialEq)]
pub struct RefSource {
    /// The `ref` name, without `$`.
    pub(crate) name: String,
    /// Its repository tree, or why it cannot be read offline.
    pub(crate) target: RefTarget,
}

/// Where a `ref:` source's files come from.
#[derive(Clone)]
pub(crate) enum RefTarget {
    /// The tree being rendered (same repository, same revision).
    Same,
    /// Another revision of this repository.
    Tree(Arc<dyn Tree>),
    /// Not readable offline: the text says what it is (another repository).
    External(String),
}

impl std::fmt::Debug for RefTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RefTarget::Same => f.write_str("Same"),
            RefTarget::Tree(t) => write!(f, "Tree({})", t.describe()),
            RefTarget::External(why) => write!(f, "External({why})"),
        }
    }
}

impl PartialEq for RefTarget {
    fn eq(&self, other: &RefTarget) -> bool {
        match (self, other) {
            (RefTarget::Same, RefTarget::Same) => true,
            (RefTarget::Tree(a), RefTarget::Tree(b)) => Arc::ptr_eq(a, b),
            (RefTarget::External(a), RefTarget::External(b)) => a == b,
            _ => false,
        }
    }
}

/// Kustomization file names Argo CD recognises (AC `util/kustomize`).
pub(crate) const KUSTOMIZATION_NAMES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// Detects the source type as Argo CD does (AC `GetAppSourceType`): explicit
/// blocks win; otherwise a kustomization file at the root means Kustomize
/// (it wins over `Chart.yaml`), a `Chart.yaml` means Helm, else Directory.
///
/// # Errors
/// A path that does not exist or is not a directory.
pub(crate) fn detect(cx: &RenderContext<'_>, spec: &SourceSpec) -> Result<SourceType, RenderError> {
    let explicit = [
        (spec.plugin.is_some(), SourceType::Plugin),
        (spec.helm.is_some(), SourceType::Helm),
        (spec.kustomize.is_some(), SourceType::Kustomize),
        (spec.directory.is_some(), SourceType::Directory),
    ];
    let set: Vec<SourceType> = explicit
        .iter()
        .filter(|(b, _)| *b)
        .map(|(_, t)| *t)
        .collect();
    if set.len() > 1 {
        return Err(RenderError::content(format!(
            "`spec.source` of `{}` sets more than one of helm, kustomize, directory, plugin",
            spec.app_name
        )));
    }
    let entries = cx.list(&spec.path).map_err(|e| {
        if matches!(e.kind, RenderErrorKind::Content) {
            RenderError::content(format!(
                "the app path `{}` does not exist or is not a directory",
                display_path(&spec.path)
            ))
        } else {
            e
        }
    })?;
    if let Some(t) = set.first() {
        return Ok(*t);
    }
    let mut found = SourceType::Directory;
    for e in &entries {
        if KUSTOMIZATION_NAMES.contains(&e.name.as_str()) {
            return Ok(SourceType::Kustomize);
        }
        if e.name.ends_with("Chart.yaml") {
            found = SourceType::Helm;
        }
    }
    Ok(found)
}

/// `"."` for the repository root, else the path.
#[must_use]
pub(crate) fn display_path(p: &str) -> &str {
    if p.is_empty() {
        "."
    } else {
        p
    }
}

/// The result of rendering one source.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// How it was rendered.
    pub source_type: SourceType,
    /// The resources, in render order.
    pub(crate) manifests: Vec<Manifest>,
    /// The config-management plugin that renders the source, when one does.
    pub(crate) plugin: Option<plugin::ChosenPlugin>,
}

/// Renders one source into manifests, namespaces defaulted to the
/// destination namespace for namespaced kinds.
///
/// # Errors
/// Any render failure; never an empty result in place of a failure.
pub fn render(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
    scopes: &Scopes,
) -> Result<Rendered, RenderError> {
    let mut rendered = render_variant(cx, spec, scopes)?;
    if cx.generated.load(Ordering::Relaxed) {
        // Random values or the clock were drawn: render again with values
        // that differ in every generated field, and mark those fields.
        let second = RenderContext {
            variant: Variant::Second,
            ..RenderContext::unrecorded(cx.tree, cx.cache, cx.options)
        };
        let other = render_variant(&second, spec, scopes).map_err(|e| {
            RenderError::unsupported(format!(
                "`{}` fails to render once its random values and clock differ: {}",
                spec.app_name, e.message
            ))
        })?;
        generated::mark(&mut rendered.manifests, &other.manifests)
            .map_err(|why| RenderError::unsupported(format!("`{}`: {why}", spec.app_name)))?;
    }
    Ok(rendered)
}

/// [`render`] once, with `cx`'s random values and clock.
fn render_variant(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
    scopes: &Scopes,
) -> Result<Rendered, RenderError> {
    let spec = overrides::apply(cx, spec)?;
    let spec = spec.as_ref();
    let source_type = detect(cx, spec)?;
    let chosen = match source_type {
        SourceType::Plugin => plugin::choose(cx, spec, &spec.plugins, false)?,
        // With no explicit type, the repo-server asks the plugins first
        // (AC `discovery.Discover`).
        _ if !has_explicit_type(spec) && spec.plugins.any_discovers() => {
            plugin::choose(cx, spec, &spec.plugins, true)?
        }
        _ => None,
    };
    if let Some(chosen) = chosen {
        let Some(renderer) = &chosen.renderer else {
            return Err(RenderError::unsupported(format!(
                "`{}` is rendered by the {}, which gitops-lint never runs; {}",
                spec.app_name,
                chosen.named(),
                plugin::mapping_hint(&chosen.name)
            )));
        };
        let native = plugin::as_native(spec, renderer);
        let source_type = detect(cx, &native)?;
        let mut rendered = render_typed(cx, &native, scopes, source_type)?;
        if let Some(how) = &chosen.envsubst {
            let env = plugin_env::plugin_environment(spec);
            rendered.manifests = plugin_env::apply(rendered.manifests, how, &env, spec, scopes)?;
        }
        rendered.source_type = SourceType::Plugin;
        rendered.plugin = Some(chosen);
        return Ok(rendered);
    }
    render_typed(cx, spec, scopes, source_type)
}

/// Whether `spec` names its source type (a `plugin`, `helm`, `kustomize`
/// or `directory` block).
fn has_explicit_type(spec: &SourceSpec) -> bool {
    spec.plugin.is_some()
        || spec.helm.is_some()
        || spec.kustomize.is_some()
        || spec.directory.is_some()
}

/// Renders `spec`, whose parameter overrides are applied, as `source_type`.
fn render_typed(
    cx: &RenderContext<'_>,
    spec: &SourceSpec,
    scopes: &Scopes,
    source_type: SourceType,
) -> Result<Rendered, RenderError> {
    let owned = |objects: Vec<RenderedObject>| -> Vec<(Arc<LazyValue>, Origin)> {
        objects
            .into_iter()
            .map(|o| (Arc::new(o.value.into()), o.origin))
            .collect()
    };
    // The directory renderer's objects are the parse cache's own, shared.
    let objects = match source_type {
        SourceType::Directory => directory::render(cx, spec)?,
        SourceType::Kustomize => owned(kustomize::render(cx, spec)?),
        SourceType::Helm => owned(helm::render(cx, spec)?),
        SourceType::Plugin => {
            return Err(RenderError::unsupported(format!(
                "`{}` uses a config-management plugin, which gitops-lint never runs",
                spec.app_name
            )))
        }
    };
    if objects.len() > MAX_RESOURCES_PER_SOURCE {
        return Err(too_many_resources(&spec.path));
    }
    if source_type != SourceType::Directory && cx.variant == Variant::First {
        // The directory renderer charges file by file as it reads; a
        // second variant is charged once, with the first.
        cx.cache.charge(objects.len())?;
    }
    Ok(Rendered {
        source_type,
        manifests: manifests_of(objects, &spec.namespace, scopes)?,
        plugin: None,
    })
}

/// Sources with at least this many objects have their manifests built in
/// parallel: an app-of-apps of thousands of Application files is rendered
/// in every diff, and building its manifests one by one kept one core busy
/// while the other waited.
const PARALLEL_MANIFESTS: usize = 256;

/// The manifests of `objects`, in order, or the error of the first object
/// that is not one.
fn manifests_of(
    objects: Vec<(Arc<LazyValue>, Origin)>,
    default_namespace: &str,
    scopes: &Scopes,
) -> Result<Vec<Manifest>, RenderError> {
    use rayon::prelude::*;
    let build = |(value, origin): (Arc<LazyValue>, Origin)| match resource_id_of(
        &value,
        default_namespace,
        scopes,
    ) {
        Ok(id) => Ok(Manifest::shared(id, value, origin)),
        Err(e) => {
            let file = origin.file.unwrap_or_default();
            Err(RenderError::content(format!("`{file}`: {e}")).at(file, origin.line))
        }
    };
    if objects.len() < PARALLEL_MANIFESTS {
        return objects.into_iter().map(build).collect();
    }
    // Every object is built, then the first error in order is the answer,
    // as building them one by one would find it.
    let built: Vec<Result<Manifest, RenderError>> = objects.into_par_iter().map(build).collect();
    built.into_iter().collect()
}

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
    fn extend(&mut self, other: &Footprint) {
        self.subtrees.extend(other.subtrees.iter().cloned());
        self.entries.extend(other.entries.iter().cloned());
    }

    /// Leaves out the entries that lie in one of the subtrees: a subtree
    /// with the same id at both revisions holds the same entries, so they
    /// tell nothing more. (A kustomization names each of its files; at
    /// 10,000 apps they were half of every kept footprint.)
    fn without_entries_in_subtrees(mut self) -> Footprint {
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
    facts: Option<Arc<source::facts::Facts>>,
}

/// Entries of a tree that a kept footprint's check found, by path (a few),
/// so that comparing them with another revision's looks none up again.
pub(crate) type SeenEntries = Vec<SeenEntry>;

/// A path and the entry a kept footprint's check found there.
pub(crate) type SeenEntry = (String, kept_footprint::Seen);

impl FootprintMemo {
    /// A memo that also reads and keeps footprints in `facts`.
    #[must_use]
    pub(crate) fn with_facts(facts: Option<Arc<source::facts::Facts>>) -> FootprintMemo {
        FootprintMemo {
            map: Mutex::default(),
            facts,
        }
    }

    fn get(&self, dir: &str) -> Option<Arc<Footprint>> {
        self.map
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(dir)
            .cloned()
    }

    fn put(&self, dir: String, fp: Footprint) {
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

/// Expands list objects into their items, as Argo CD does for every source
/// type (AC `GenerateManifests`): an object whose `items` is an array is a
/// list whatever its kind (`Unstructured.IsList`), its items are taken one
/// level deep, and a list whose `items` is null (with no `spec` or `status`)
/// yields nothing.
pub fn expand_lists(value: Value, out: &mut Vec<Value>) {
    let Value::Object(mut m) = value else {
        out.push(value);
        return;
    };
    match m.get("items") {
        Some(Value::Array(_)) => {
            if let Some(Value::Array(items)) = m.remove("items") {
                out.extend(items);
            }
        }
        Some(Value::Null) if !m.contains_key("spec") && !m.contains_key("status") => {}
        _ => out.push(Value::Object(m)),
    }
}

/// Trees of many small manifest files, for tests of large sources.
#[cfg(test)]
pub(crate) mod test_files {
    use super::{ParseCache, RenderContext, RenderOptions};

    /// `n` files `apps/f000.yaml`, ..., each holding ConfigMap `cm-000`, ...
    pub(crate) fn configmaps(n: usize) -> Vec<(String, Vec<u8>)> {
        (0..n)
            .map(|i| {
                let body =
                    format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i:03}\n");
                (format!("apps/f{i:03}.yaml"), body.into_bytes())
            })
            .collect()
    }

    /// `f` given a render context over a tree of `files` alone.
    pub(crate) fn in_tree<R>(
        files: &[(String, Vec<u8>)],
        f: impl FnOnce(&RenderContext<'_>) -> R,
    ) -> R {
        let refs: Vec<(&str, &[u8])> = files
            .iter()
            .map(|(p, b)| (p.as_str(), b.as_slice()))
            .collect();
        let tree = crate::source::MemTree::new(&refs);
        let cache = ParseCache::default();
        let options = RenderOptions::default();
        f(&RenderContext::new(&tree, &cache, &options))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{expand_lists, Footprint};

    /// A kustomization names its files, which lie in the directories it
    /// reads below: only the paths outside them are kept as entries.
    #[test]
    fn a_footprint_keeps_only_the_entries_outside_its_subtrees() {
        let strings = |v: &[&str]| v.iter().map(|s| (*s).to_string()).collect::<Vec<_>>();
        let fp = Footprint {
            subtrees: strings(&["apps/a/base", "apps/a/overlays/prod"]),
            entries: strings(&[
                "apps/a/base/deployment.yaml",
                "apps/a/overlays/prod/.argocd-source.yaml",
                "apps/a/base",
                "apps/a/basement.yaml",
                "shared/values.yaml",
            ]),
        }
        .without_entries_in_subtrees();
        assert_eq!(
            fp.entries,
            strings(&["apps/a/basement.yaml", "shared/values.yaml"])
        );
        assert_eq!(fp.subtrees.len(), 2);
        let whole = Footprint {
            subtrees: strings(&[""]),
            entries: strings(&["a.yaml"]),
        }
        .without_entries_in_subtrees();
        assert!(whole.entries.is_empty(), "the root holds every path");
    }

    fn expand(v: serde_json::Value) -> Vec<serde_json::Value> {
        let mut out = Vec::new();
        expand_lists(v, &mut out);
        out
    }

    #[test]
    fn lists_are_recognised_by_items_not_by_kind() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}});
        assert_eq!(
            expand(json!({"apiVersion": "v1", "kind": "List", "items": [cm.clone(), cm.clone()]}))
                .len(),
            2
        );
        assert_eq!(
            expand(json!({"apiVersion": "v1", "kind": "ConfigMapList", "items": [cm.clone()]})),
            vec![cm.clone()]
        );
        // Argo CD uses Unstructured.IsList: any `items` array makes a list.
        assert_eq!(
            expand(json!({"apiVersion": "x/v1", "kind": "Bundle", "items": [cm.clone()]})),
            vec![cm.clone()]
        );
        assert!(
            expand(json!({"apiVersion": "v1", "kind": "ConfigMapList", "items": null})).is_empty(),
            "a null list yields nothing"
        );
        let with_spec = json!({"apiVersion": "x/v1", "kind": "Thing", "items": null, "spec": {}});
        assert_eq!(expand(with_spec.clone()), vec![with_spec]);
        let nested = json!({"kind": "List", "items": [{"kind": "List", "items": [cm]}]});
        assert_eq!(expand(nested).len(), 1, "items are taken one level deep");
    }

    /// A source of more objects than are built one by one gives its
    /// manifests in file order, each with its id and file, and when several
    /// objects are not manifests, the error names the first of them.
    #[test]
    fn many_objects_become_manifests_in_order_and_the_first_bad_one_is_reported() {
        const FILES: usize = super::PARALLEL_MANIFESTS + 44;
        let files = super::test_files::configmaps(FILES);
        let render_files = |files: &[(String, Vec<u8>)]| {
            super::test_files::in_tree(files, |cx| {
                let spec = super::SourceSpec {
                    path: "apps".into(),
                    namespace: "team".into(),
                    ..super::SourceSpec::default()
                };
                super::render(cx, &spec, &crate::manifest::Scopes::default())
            })
        };
        let rendered = render_files(&files).unwrap_or_else(|e| panic!("{}", e.message));
        let seen: Vec<(String, String, String)> = rendered
            .manifests
            .iter()
            .map(|m| {
                (
                    m.id.name.clone(),
                    m.id.namespace.clone(),
                    m.origin.file.clone().unwrap_or_default(),
                )
            })
            .collect();
        let expected: Vec<(String, String, String)> = (0..FILES)
            .map(|i| {
                (
                    format!("cm-{i:03}"),
                    "team".into(),
                    format!("apps/f{i:03}.yaml"),
                )
            })
            .collect();
        assert_eq!(seen, expected);

        // Objects read from the files, but not manifests: no name.
        let mut broken = files;
        let bad = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  labels: {team: a}\n";
        broken[97].1 = bad.as_bytes().to_vec();
        broken[FILES - 3].1 = bad.as_bytes().to_vec();
        let Err(e) = render_files(&broken) else {
            panic!("an object without a name fails the render");
        };
        assert!(
            e.message.contains("f097.yaml") && e.message.contains("metadata.name"),
            "{}",
            e.message
        );
    }
}

#[cfg(test)]
mod cache_tests {
    use super::*;

    #[test]
    fn a_template_set_is_parsed_once_per_content_and_the_cache_stays_bounded() {
        use gotemplate::{FuncSet, MissingKey, TemplateSet};
        let cache = ParseCache::default();
        let parses = AtomicUsize::new(0);
        let parse = || {
            parses.fetch_add(1, Ordering::Relaxed);
            Ok::<_, String>(TemplateSet::new("gotpl", FuncSet::Helm, MissingKey::Zero))
        };
        let first = cache.template_set([1; 32], parse).expect("parses");
        let again = cache.template_set([1; 32], parse).expect("cached");
        assert!(Arc::ptr_eq(&first, &again));
        assert_eq!(parses.load(Ordering::Relaxed), 1);
        // A failed parse is not kept: the next render parses again.
        assert!(cache
            .template_set([2; 32], || Err::<TemplateSet, _>("bad"))
            .is_err());
        cache.template_set([2; 32], parse).expect("parses");
        assert_eq!(parses.load(Ordering::Relaxed), 2);
        for i in 0..=u8::try_from(MAX_TEMPLATE_SETS).expect("small") {
            cache
                .template_set([i.wrapping_add(3); 32], parse)
                .expect("parses");
        }
        let kept = cache
            .template_sets
            .lock()
            .map(|m| m.len())
            .unwrap_or_default();
        assert_eq!(kept, MAX_TEMPLATE_SETS);
    }

    #[test]
    fn a_blob_is_parsed_once_per_dialect_even_when_threads_race() {
        let cache = ParseCache::default();
        let id = ObjectId([7; 20]);
        let text = b"namePrefix: on\n";
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| cache.get_or_parse_as(id, text, Dialect::Kyaml));
            }
        });
        assert_eq!(cache.parses(), 1);
        // sigs.k8s.io/yaml reads `on` as true, go-yaml v3 as a string: a
        // kustomization needs its own parse, cached separately.
        let sigs = cache.get_or_parse_as(id, text, Dialect::SigsYaml);
        let kyaml = cache.get_or_parse_as(id, text, Dialect::Kyaml);
        assert_eq!(cache.parses(), 2);
        let first = |p: &ParsedStream| p.as_ref().as_ref().map(|d| (*d[0].value).clone()).ok();
        assert_eq!(first(&sigs), Some(serde_json::json!({"namePrefix": true})));
        assert_eq!(first(&kyaml), Some(serde_json::json!({"namePrefix": "on"})));
    }
}
