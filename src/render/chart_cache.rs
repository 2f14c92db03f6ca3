//! Charts from Helm repositories and OCI registries: fetched by
//! identity (see [`super::chart_fetch`]) from the repositories a diff may
//! contact, or read from an explicit directory of `helm pull`-ed archives
//! (`--chart-cache`), by `<chart>-<version>.tgz`, when the run is offline
//! and the identity cache does not hold the chart.
//!
//! Argo CD pulls `<chart>` at the Application's `targetRevision` and
//! untars it (argo-cd `util/helm/client.go` `nativeHelmChart.ExtractChart`
//! → `util/io/files/tar.go` `Untgz`); the chart directory named after the
//! chart (`normalizeChartName`) is then rendered like a chart from git
//! (`reposerver/repository/repository.go` `runManifestGenAsync` →
//! `helmTemplate`). A `targetRevision` that is not a version
//! (`util/versions/version.go` `IsVersion`) is a constraint Argo CD
//! resolves against the repository's index (`newHelmClientResolveRevision`
//! → `versions.MaxVersion`).
//!
//! Who may be contacted: in a diff, a repository named at the base
//! revision (by an Application's source, as rendered or read there) or
//! listed under `chartRepositories:` of the base configuration. A source
//! the head points at any other repository renders nothing: the change
//! cannot be judged until the repository is trusted.
//!
//! An archive is hostile input like any file of the repository: its size,
//! what it unpacks to, each file and the number of entries are bounded,
//! and only plain files and directories inside it are taken.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use sha2::Digest as _;

use super::chart_fetch::{trim_url, FetchError, Fetcher, MAX_ARCHIVE_BYTES};
use super::{RenderError, RenderErrorKind};
use crate::source::{path, Entry, EntryKind, ObjectId, SourceError, Tree};
use gotemplate::go::semver::Version;

/// Most bytes one archive may unpack to (helm's own bound on a chart,
/// `loader.MaxDecompressedChartSize`).
pub(crate) const MAX_UNPACKED_BYTES: u64 = 100 << 20;

/// Largest file inside an archive (helm's `MaxDecompressedFileSize`).
pub(crate) const MAX_FILE_BYTES: u64 = 5 << 20;

/// Most entries one archive may hold.
pub(crate) const MAX_ENTRIES: usize = 10_000;

/// Where a run's charts from Helm repositories come from, and each
/// archive unpacked once per run (or refused once), keyed by its content.
#[derive(Debug)]
pub struct ChartCache {
    /// An explicit directory of `helm pull`-ed archives.
    dir: Option<PathBuf>,
    /// The directory as the user named it, for messages.
    shown: String,
    /// Fetching by identity, when the run fetches.
    fetch: Option<Arc<Fetcher>>,
    /// In a diff, the root id of the base revision's tree: a source read
    /// from it may name any repository.
    base_root: Mutex<Option<ObjectId>>,
    /// Repositories named at the base revision, and those the base
    /// configuration lists.
    trusted: RwLock<BTreeSet<String>>,
    unpacked: Mutex<HashMap<[u8; 32], Unpacked>>,
}

/// An archive unpacked, or why it cannot be.
type Unpacked = Result<Arc<ChartTree>, String>;

/// One chart taken from the cache.
pub(crate) struct CachedChart {
    /// The unpacked archive.
    pub(crate) tree: Arc<ChartTree>,
    /// The chart's directory in it (the app path).
    pub(crate) path: String,
    /// The archive's name (`<chart>-<version>.tgz`).
    pub(crate) file: String,
    /// The archive's content id.
    pub(crate) id: ObjectId,
}

impl ChartCache {
    /// A cache reading archives from `dir`, named `shown` in messages (as
    /// the command line or the configuration gives it).
    #[must_use]
    pub(crate) fn new(dir: PathBuf, shown: &str) -> ChartCache {
        ChartCache::with(Some(dir), shown, None)
    }

    /// A cache fetching with `fetch`, and reading `dir` (if any) when the
    /// run is offline and `fetch` does not hold a chart.
    #[must_use]
    pub fn with(dir: Option<PathBuf>, shown: &str, fetch: Option<Arc<Fetcher>>) -> ChartCache {
        ChartCache {
            dir,
            shown: shown.trim_end_matches('/').to_string(),
            fetch,
            base_root: Mutex::new(None),
            trusted: RwLock::new(BTreeSet::new()),
            unpacked: Mutex::new(HashMap::new()),
        }
    }

    /// The fetcher, when the run fetches.
    #[must_use]
    pub(crate) fn fetcher(&self) -> Option<&Arc<Fetcher>> {
        self.fetch.as_ref()
    }

    /// What the run fetched, or offline would have, as a note.
    #[must_use]
    pub(crate) fn fetch_note(&self) -> Option<String> {
        let f = self.fetch.as_ref()?;
        let lines = f.fetched();
        if lines.is_empty() {
            return None;
        }
        let verb = if f.offline() {
            "offline: would have fetched"
        } else {
            "fetched"
        };
        Some(format!(
            "{verb} {} chart{}: {}",
            lines.len(),
            if lines.len() == 1 { "" } else { "s" },
            lines.join("; ")
        ))
    }

    /// The same sources, with nothing trusted or unpacked yet: one run's.
    #[must_use]
    pub(crate) fn fresh(&self) -> ChartCache {
        ChartCache::with(self.dir.clone(), &self.shown, self.fetch.clone())
    }

    /// The repositories the base configuration lists (`chartRepositories`):
    /// trusted, and the `http://` ones spoken to without TLS.
    pub(crate) fn configure(&self, repositories: &[String]) {
        self.trust(repositories.iter().map(String::as_str));
        if let Some(f) = &self.fetch {
            f.allow_plain_http(repositories.iter().cloned());
        }
    }

    /// Makes a diff: `root` is the base revision's tree, from which any
    /// repository may be named; other trees may name only trusted ones.
    pub(crate) fn set_base(&self, root: Option<ObjectId>) {
        *self
            .base_root
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = root;
    }

    /// Trusts repositories named at the base revision.
    pub(crate) fn trust<'a>(&self, repos: impl IntoIterator<Item = &'a str>) {
        let mut t = self
            .trusted
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        t.extend(repos.into_iter().map(|r| trim_url(r).to_string()));
    }

    /// Whether `repo_url`, named by a source read from `at`, may be
    /// fetched from.
    fn trusted(&self, repo_url: &str, at: &dyn Tree) -> bool {
        let base = *self
            .base_root
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let Some(base) = base else {
            // One revision (`check`, `render`): it is what was asked for.
            return true;
        };
        if at.entry("").ok().flatten().map(|e| e.id) == Some(base) {
            self.trust([repo_url]);
            return true;
        }
        self.trusted
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .contains(trim_url(repo_url))
    }

    /// The chart `chart` of `repo_url` at `target_revision`, for a source
    /// read from `at`: fetched by identity when the run fetches, else from
    /// The chart dependency `chart` of `repo_url` at `version` (a version
    /// or a constraint) that `helm dependency build` would download, for a
    /// chart read from `at`.
    ///
    /// # Errors
    /// As for [`ChartCache::chart`].
    pub(crate) fn dependency(
        &self,
        repo_url: &str,
        chart: &str,
        version: &str,
        at: &dyn Tree,
    ) -> Result<super::chart_fetch::Fetched, RenderError> {
        let Some(fetch) = &self.fetch else {
            return Err(RenderError::unsupported(format!(
                "chart dependency `{chart}` from `{repo_url}` is fetched only when the run fetches charts"
            )));
        };
        if !self.trusted(repo_url, at) {
            return Err(RenderError::untrusted(format!(
                "chart dependency `{chart}` from `{repo_url}` cannot be judged until the repository is trusted: the base revision names no such repository; add `- {}` under `chartRepositories:` of the configuration at the base revision",
                trim_url(repo_url)
            )));
        }
        fetch.chart(repo_url, chart, version).map_err(fetch_error)
    }

    /// `<dir>/<chart>-<version>.tgz`.
    ///
    /// # Errors
    /// A repository not trusted (an [`RenderErrorKind::Untrusted`]
    /// error naming the configuration line that trusts it), a fetch that
    /// failed ([`RenderErrorKind::Unsupported`]), an archive that is not
    /// what was asked for ([`RenderErrorKind::Content`]), a chart not
    /// cached while offline ([`RenderErrorKind::ToolMissing`]), or an
    /// archive that cannot be read within the bounds.
    pub(crate) fn chart(
        &self,
        chart: &str,
        repo_url: &str,
        target_revision: &str,
        at: &dyn Tree,
    ) -> Result<CachedChart, RenderError> {
        let name = chart_dir_name(chart);
        let Some(fetch) = &self.fetch else {
            return self.read_dir_archive(chart, repo_url, target_revision);
        };
        if !self.trusted(repo_url, at) {
            return Err(RenderError::untrusted(format!(
                "chart `{chart}` from `{repo_url}` cannot be judged until the repository is trusted: the base revision names no such repository; add `- {}` under `chartRepositories:` of the configuration at the base revision",
                trim_url(repo_url)
            )));
        }
        let fetched = match fetch.chart(repo_url, chart, target_revision) {
            Ok(f) => f,
            Err(FetchError::Offline(_))
                if self.dir.is_some() && Version::parse(target_revision).is_ok() =>
            {
                return self.read_dir_archive(chart, repo_url, target_revision);
            }
            Err(e) => return Err(fetch_error(e)),
        };
        let file = format!("{name}-{}.tgz", fetched.version);
        let shown = format!("{} {} from `{repo_url}`", chart, fetched.version);
        let digest: [u8; 32] = sha2::Sha256::digest(&fetched.bytes).into();
        self.unpacked_chart(&fetched.bytes, digest, name, file, &shown)
    }

    /// `<dir>/<chart>-<version>.tgz`.
    fn read_dir_archive(
        &self,
        chart: &str,
        repo_url: &str,
        target_revision: &str,
    ) -> Result<CachedChart, RenderError> {
        let name = chart_dir_name(chart);
        let Some(dir) = &self.dir else {
            return Err(RenderError::unsupported(format!(
                "chart `{chart}` from `{repo_url}` is fetched only when the run fetches charts"
            )));
        };
        if Version::parse(target_revision).is_err() {
            return Err(RenderError::unsupported(format!(
                "chart `{chart}` from `{repo_url}` has `targetRevision: {target_revision}`, which Argo CD resolves against the repository's index to its highest matching version: the chart cache directory holds no index, so only an exact version is read from it"
            )));
        }
        let file = format!("{name}-{target_revision}.tgz");
        if !plain_file_name(&file) {
            return Err(RenderError::content(format!(
                "chart `{chart}` at `{target_revision}` does not name a file that can be looked for in the chart cache"
            )));
        }
        let full = dir.join(&file);
        let shown = format!("{}/{file}", self.shown);
        let meta = match std::fs::metadata(&full) {
            Ok(m) if m.is_file() => m,
            _ => {
                return Err(RenderError {
                    kind: RenderErrorKind::ToolMissing,
                    message: format!(
                        "chart `{chart}` {target_revision} from `{repo_url}` is not in the chart cache: expected `{shown}`, made by `{}`",
                        pull_command(chart, repo_url, target_revision, &self.shown)
                    ),
                    file: None,
                    line: None,
                })
            }
        };
        if meta.len() > MAX_ARCHIVE_BYTES {
            return Err(RenderError::content(format!(
                "`{shown}` is larger than {} MiB, more than gitops-lint reads",
                MAX_ARCHIVE_BYTES >> 20
            )));
        }
        let bytes = read_bounded(&full, &shown)?;
        let digest: [u8; 32] = sha2::Sha256::digest(&bytes).into();
        let shown = format!("`{shown}`");
        self.unpacked_chart(&bytes, digest, name, file, &shown)
    }

    fn unpacked_chart(
        &self,
        bytes: &[u8],
        digest: [u8; 32],
        name: &str,
        file: String,
        shown: &str,
    ) -> Result<CachedChart, RenderError> {
        let mut id = [0u8; 20];
        id.copy_from_slice(&digest[..20]);
        let known = self
            .unpacked
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&digest)
            .cloned();
        let unpacked = match known {
            Some(u) => u,
            None => {
                let u = unpack_archive(bytes, &file).map(Arc::new);
                self.unpacked
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .insert(digest, u.clone());
                u
            }
        };
        let tree = unpacked.map_err(|m| RenderError::content(format!("{shown}: {m}")))?;
        if tree.entry(name).ok().flatten().map(|e| e.kind) != Some(EntryKind::Dir) {
            return Err(RenderError::content(format!(
                "{shown} holds no `{name}/` directory, where Argo CD looks for the chart"
            )));
        }
        Ok(CachedChart {
            tree,
            path: name.to_string(),
            file,
            id: ObjectId(id),
        })
    }
}

/// A fetch that failed, as the render error it makes: offline and not
/// cached is a tool missing where gitops-lint runs (a warning), a failure
/// to reach the repository cannot be judged (an error when the change
/// brings it), and an archive that is not what was asked for is content.
fn fetch_error(e: FetchError) -> RenderError {
    match e {
        FetchError::Offline(m) => RenderError {
            kind: RenderErrorKind::ToolMissing,
            message: m,
            file: None,
            line: None,
        },
        FetchError::Failed(m) => RenderError::unsupported(m),
        FetchError::Refused(m) => RenderError::content(m),
    }
}

/// `normalizeChartName`: the last segment of the chart's name.
fn chart_dir_name(chart: &str) -> &str {
    match chart.rsplit('/').next() {
        Some(n) if !n.is_empty() && n != "." && n != ".." => n,
        _ => chart,
    }
}

/// A name that is one file in the cache directory and nothing else.
fn plain_file_name(name: &str) -> bool {
    !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+'))
}

/// The `helm pull` that writes the archive Argo CD would fetch into `dir`:
/// an OCI registry (`oci://` or, as Argo CD writes it, no scheme) takes
/// the chart in the reference, a Helm repository takes `--repo`.
#[must_use]
pub(crate) fn pull_command(chart: &str, repo_url: &str, version: &str, dir: &str) -> String {
    let quote = |s: &str| shlex::try_quote(s).map_or_else(|_| s.to_string(), |q| q.into_owned());
    if repo_url.starts_with("http://") || repo_url.starts_with("https://") {
        format!(
            "helm pull {} --repo {} --version {} -d {}",
            quote(chart),
            quote(repo_url),
            quote(version),
            quote(dir)
        )
    } else {
        let registry = repo_url.trim_start_matches("oci://").trim_end_matches('/');
        format!(
            "helm pull {} --version {} -d {}",
            quote(&format!("oci://{registry}/{chart}")),
            quote(version),
            quote(dir)
        )
    }
}

fn read_bounded(full: &Path, shown: &str) -> Result<Vec<u8>, RenderError> {
    let cannot = |e: std::io::Error| RenderError::content(format!("cannot read `{shown}`: {e}"));
    let f = std::fs::File::open(full).map_err(cannot)?;
    let mut bytes = Vec::new();
    f.take(MAX_ARCHIVE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(cannot)?;
    if bytes.len() as u64 > MAX_ARCHIVE_BYTES {
        return Err(RenderError::content(format!(
            "`{shown}` is larger than {} MiB, more than gitops-lint reads",
            MAX_ARCHIVE_BYTES >> 20
        )));
    }
    Ok(bytes)
}

/// What one archive may unpack to.
#[derive(Debug, Clone, Copy)]
struct Limits {
    unpacked: u64,
    file: u64,
    entries: usize,
}

/// The bounds of every archive.
const LIMITS: Limits = Limits {
    unpacked: MAX_UNPACKED_BYTES,
    file: MAX_FILE_BYTES,
    entries: MAX_ENTRIES,
};

/// Unpacks a gzip-compressed tar archive into memory, within the bounds
/// of every chart archive; the error says why it cannot be.
pub(crate) fn unpack_archive(bytes: &[u8], label: &str) -> Result<ChartTree, String> {
    unpack_within(bytes, label, LIMITS)
}

fn unpack_within(bytes: &[u8], label: &str, limits: Limits) -> Result<ChartTree, String> {
    // One byte past the bound tells "at the bound" from "past it"; the
    // count tells a stream cut there from a broken one.
    let count = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let gz = Counting {
        inner: flate2::read::GzDecoder::new(bytes).take(limits.unpacked + 1),
        count: std::rc::Rc::clone(&count),
    };
    let unpack_error = |e: std::io::Error| {
        if count.get() > limits.unpacked {
            too_large(limits)
        } else {
            e.to_string()
        }
    };
    let mut archive = tar::Archive::new(gz);
    let mut files: BTreeMap<String, Arc<[u8]>> = BTreeMap::new();
    let mut total: u64 = 0;
    let entries = archive
        .entries()
        .map_err(|e| format!("not a gzip-compressed tar archive: {e}"))?;
    for (n, entry) in entries.enumerate() {
        if n >= limits.entries {
            return Err(format!("holds more than {} entries", limits.entries));
        }
        let entry = entry.map_err(unpack_error)?;
        let raw = entry
            .path()
            .map_err(|e| format!("an entry's name cannot be read: {e}"))?
            .to_string_lossy()
            .into_owned();
        let Some(name) = path::normalize(raw.trim_start_matches("./")).filter(|n| !n.is_empty())
        else {
            if raw.trim_start_matches("./").is_empty() {
                continue;
            }
            return Err(format!("entry `{raw}` leads outside the archive"));
        };
        if raw.starts_with('/') {
            return Err(format!("entry `{raw}` leads outside the archive"));
        }
        match entry.header().entry_type() {
            tar::EntryType::Directory => continue,
            tar::EntryType::Regular | tar::EntryType::Continuous => {}
            // `helm package` writes plain files only.
            other => {
                return Err(format!(
                    "entry `{raw}` is a {other:?} entry, which gitops-lint does not unpack"
                ))
            }
        }
        let size = entry.header().size().map_err(|e| e.to_string())?;
        if size > limits.file {
            return Err(format!(
                "`{name}` is larger than {}, more than helm loads from a chart",
                mib(limits.file)
            ));
        }
        let mut data = Vec::new();
        entry
            .take(limits.file + 1)
            .read_to_end(&mut data)
            .map_err(unpack_error)?;
        total += data.len() as u64;
        if total > limits.unpacked {
            return Err(too_large(limits));
        }
        files.insert(name, Arc::from(data));
    }
    Ok(ChartTree::new(label.to_string(), files))
}

fn mib(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

fn too_large(limits: Limits) -> String {
    format!(
        "unpacks to more than {}, more than helm loads from a chart",
        mib(limits.unpacked)
    )
}

/// A reader counting the bytes it hands out.
struct Counting<R> {
    inner: R,
    count: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

/// An unpacked chart archive, read like a repository tree. Ids are
/// derived from content, so the same archive gives the same ids in every
/// run and at both revisions of a diff.
#[derive(Debug)]
pub(crate) struct ChartTree {
    label: String,
    files: BTreeMap<String, Arc<[u8]>>,
    /// Each directory's entries, sorted by name.
    dirs: BTreeMap<String, Vec<Entry>>,
    /// Each directory's id.
    dir_ids: BTreeMap<String, ObjectId>,
}

/// An id from the kind and content of an entry.
fn content_id(parts: &[&[u8]]) -> ObjectId {
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p);
    }
    let digest = h.finalize();
    let mut id = [0u8; 20];
    id.copy_from_slice(&digest[..20]);
    ObjectId(id)
}

fn depth(dir: &str) -> usize {
    if dir.is_empty() {
        0
    } else {
        dir.matches('/').count() + 1
    }
}

impl ChartTree {
    fn new(label: String, files: BTreeMap<String, Arc<[u8]>>) -> ChartTree {
        let mut dirs: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
        dirs.insert(String::new(), Vec::new());
        for (p, bytes) in &files {
            dirs.entry(path::parent(p).to_string())
                .or_default()
                .push(Entry {
                    name: path::file_name(p).to_string(),
                    kind: EntryKind::File,
                    id: content_id(&[b"file", bytes]),
                });
            let mut dir = path::parent(p);
            while !dir.is_empty() {
                dirs.entry(dir.to_string()).or_default();
                dir = path::parent(dir);
            }
        }
        // Deepest first: a directory's id comes from its entries' ids.
        let mut order: Vec<String> = dirs.keys().cloned().collect();
        order.sort_by_key(|d| std::cmp::Reverse(depth(d)));
        let mut dir_ids = BTreeMap::new();
        let mut done: BTreeMap<String, Vec<Entry>> = BTreeMap::new();
        for d in order {
            let mut entries = dirs.remove(&d).unwrap_or_default();
            entries.sort_by(|a, b| a.name.cmp(&b.name));
            let mut parts: Vec<&[u8]> = vec![b"dir"];
            for e in &entries {
                parts.push(e.name.as_bytes());
                parts.push(&e.id.0);
            }
            let id = content_id(&parts);
            if !d.is_empty() {
                let entry = Entry {
                    name: path::file_name(&d).to_string(),
                    kind: EntryKind::Dir,
                    id,
                };
                let parent = path::parent(&d).to_string();
                // The parent is processed later (it is shallower).
                dirs.entry(parent).or_default().push(entry);
            }
            dir_ids.insert(d.clone(), id);
            done.insert(d, entries);
        }
        ChartTree {
            label,
            files,
            dirs: done,
            dir_ids,
        }
    }
}

impl Tree for ChartTree {
    fn describe(&self) -> String {
        self.label.clone()
    }

    fn entry(&self, p: &str) -> Result<Option<Entry>, SourceError> {
        if p.is_empty() {
            return Ok(self.dir_ids.get("").map(|id| Entry {
                name: String::new(),
                kind: EntryKind::Dir,
                id: *id,
            }));
        }
        Ok(self
            .dirs
            .get(path::parent(p))
            .and_then(|l| l.iter().find(|e| e.name == path::file_name(p)))
            .cloned())
    }

    fn list_raw(&self, dir: &str) -> Result<Vec<Entry>, SourceError> {
        self.dirs
            .get(dir)
            .cloned()
            .ok_or_else(|| SourceError::NotFound(dir.to_string()))
    }

    fn read_raw(&self, p: &str) -> Result<Arc<[u8]>, SourceError> {
        self.files
            .get(p)
            .cloned()
            .ok_or_else(|| SourceError::NotFound(p.to_string()))
    }

    fn may_have_symlinks(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An archive of `entries` (path, bytes, type).
    fn archive(entries: &[(&str, &[u8], tar::EntryType)]) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut b = tar::Builder::new(gz);
        for (p, bytes, kind) in entries {
            let mut h = tar::Header::new_gnu();
            h.set_size(bytes.len() as u64);
            h.set_mode(0o644);
            h.set_entry_type(*kind);
            if *kind == tar::EntryType::Symlink {
                h.set_size(0);
                let _ = h.set_link_name("../../etc/passwd");
                let _ = b.append_data(&mut h, p, std::io::empty());
                continue;
            }
            // `append_data` refuses `..`: write the name into the header.
            let name = h.as_old_mut();
            name.name[..p.len()].copy_from_slice(p.as_bytes());
            h.set_cksum();
            let _ = b.append(&h, *bytes);
        }
        b.into_inner()
            .and_then(flate2::write::GzEncoder::finish)
            .unwrap_or_default()
    }

    const SMALL: Limits = Limits {
        unpacked: 64 << 10,
        file: 16 << 10,
        entries: 20,
    };

    fn file(p: &str, b: &[u8]) -> (String, Vec<u8>) {
        (p.to_string(), b.to_vec())
    }

    #[test]
    fn a_chart_archive_reads_as_a_tree_with_content_ids() {
        let reg = tar::EntryType::Regular;
        let a = archive(&[
            ("store/Chart.yaml", b"name: store\n", reg),
            ("store/templates/cm.yaml", b"kind: ConfigMap\n", reg),
        ]);
        let t = unpack_within(&a, "store-1.0.0.tgz", SMALL).unwrap_or_else(|e| panic!("{e}"));
        let names = |d: &str| -> Vec<String> {
            t.list_raw(d)
                .unwrap_or_default()
                .into_iter()
                .map(|e| e.name)
                .collect()
        };
        assert_eq!(names(""), ["store"]);
        assert_eq!(names("store"), ["Chart.yaml", "templates"]);
        assert_eq!(
            t.read_raw("store/templates/cm.yaml").ok().as_deref(),
            Some(&b"kind: ConfigMap\n"[..])
        );
        // The same content gives the same ids, another content others.
        let again = unpack_within(&a, "other-name.tgz", SMALL).unwrap_or_else(|e| panic!("{e}"));
        let id = |t: &ChartTree, p: &str| t.entry(p).ok().flatten().map(|e| e.id);
        assert_eq!(id(&t, "store"), id(&again, "store"));
        assert_eq!(id(&t, ""), id(&again, ""));
        let b = archive(&[
            ("store/Chart.yaml", b"name: store\n", reg),
            ("store/templates/cm.yaml", b"kind: Secret\n", reg),
        ]);
        let other = unpack_within(&b, "x", SMALL).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(id(&t, "store"), id(&other, "store"));
        assert_eq!(id(&t, "store/Chart.yaml"), id(&other, "store/Chart.yaml"));
    }

    #[test]
    fn hostile_archives_are_refused_within_bounds() {
        let reg = tar::EntryType::Regular;
        let zeros = vec![0u8; 12 << 10];
        // A bomb: small compressed, past the unpacked bound.
        let many: Vec<(String, Vec<u8>)> =
            (0..8).map(|i| file(&format!("c/f{i}"), &zeros)).collect();
        let refs: Vec<(&str, &[u8], tar::EntryType)> = many
            .iter()
            .map(|(p, b)| (p.as_str(), b.as_slice(), reg))
            .collect();
        let bomb = archive(&refs);
        assert!(bomb.len() < 4 << 10, "compressed to {} bytes", bomb.len());
        let e = unpack_within(&bomb, "x", SMALL).err().unwrap_or_default();
        assert!(e.contains("unpacks to more than 65536 bytes"), "{e}");
        // One file past the per-file bound.
        let big = vec![b'a'; 17 << 10];
        let e = unpack_within(&archive(&[("c/big", &big, reg)]), "x", SMALL)
            .err()
            .unwrap_or_default();
        assert!(e.contains("`c/big` is larger than"), "{e}");
        // Too many entries.
        let names: Vec<String> = (0..21).map(|i| format!("c/{i}")).collect();
        let refs: Vec<(&str, &[u8], tar::EntryType)> =
            names.iter().map(|n| (n.as_str(), &b""[..], reg)).collect();
        let e = unpack_within(&archive(&refs), "x", SMALL)
            .err()
            .unwrap_or_default();
        assert!(e.contains("more than 20 entries"), "{e}");
        // Leaving the archive.
        let e = unpack_within(&archive(&[("c/../../x", b"x", reg)]), "x", SMALL)
            .err()
            .unwrap_or_default();
        assert!(e.contains("leads outside the archive"), "{e}");
        // A symlink is not unpacked.
        let e = unpack_within(
            &archive(&[("c/link", b"", tar::EntryType::Symlink)]),
            "x",
            SMALL,
        )
        .err()
        .unwrap_or_default();
        assert!(e.contains("Symlink"), "{e}");
        // Not an archive at all.
        assert!(unpack_within(b"not gzip", "x", SMALL).is_err());
    }

    #[test]
    fn only_exact_versions_and_plain_names_are_looked_up() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let cache = ChartCache::new(dir.path().to_path_buf(), "cache");
        let empty = ChartTree::new(String::new(), BTreeMap::new());
        let kind = |chart: &str, rev: &str| {
            cache
                .chart(chart, "https://c.example", rev, &empty)
                .err()
                .map(|e| e.kind)
        };
        assert_eq!(kind("store", "1.*"), Some(RenderErrorKind::Unsupported));
        assert_eq!(kind("store", ">=1.0"), Some(RenderErrorKind::Unsupported));
        assert_eq!(kind("store", "1.0.0"), Some(RenderErrorKind::ToolMissing));
        // `normalizeChartName`: the last segment names the file.
        let e = cache
            .chart("../../etc/store", "oci://r.example/charts", "1.0.0", &empty)
            .err();
        assert!(
            e.is_some_and(|e| e.message.contains("`cache/store-1.0.0.tgz`")
                && e.message.contains(
                    "helm pull oci://r.example/charts/../../etc/store --version 1.0.0 -d cache"
                ))
        );
        assert_eq!(kind("..", "1.0.0"), Some(RenderErrorKind::Content));
    }
}
