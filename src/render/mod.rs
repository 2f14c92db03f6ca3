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
mod footprint;
mod generated;
pub(crate) mod helm;
mod kept_footprint;
pub(crate) mod kept_parse;
pub mod kustomize;
pub(crate) mod materialize;
pub(crate) mod overrides;
mod parse_cache;
pub(crate) mod plugin;
pub(crate) mod plugin_env;

pub(crate) use footprint::{entries_in, entry_in, footprint_seen, SeenEntries, SeenEntry};
pub use footprint::{footprint, Footprint, FootprintMemo};
pub use parse_cache::ParseCache;
pub(crate) use parse_cache::ParsedStream;

use goyaml::json::LazyValue;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use crate::manifest::{resource_id_of, Manifest, Origin, Scopes};
use crate::source::{self, Entry, EntryKind, ObjectId, SourceError, Tree};
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
mod tests;
