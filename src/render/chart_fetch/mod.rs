//! Charts fetched from Helm repositories and OCI registries, as Argo CD's
//! repo-server fetches them, into a cache keyed by what they are.
//!
//! What is resolved follows the repo-server: `reposerver/repository/
//! repository.go` `newHelmClientResolveRevision` takes a `targetRevision`
//! that is a version (`util/versions/version.go` `IsVersion`) as is, and
//! resolves any other against the repository's `index.yaml`
//! (`util/helm/client.go` `GetIndex`, `Index.GetEntries`) or, for OCI
//! (`enableOCI` or a `repoURL` without scheme, `helm.IsHelmOciRepo`), the
//! registry's tags (`GetTags`, `_` read back as `+`) to the highest
//! matching version (`util/versions/tags.go` `MaxVersion`).
//!
//! Who is contacted, and with what, is bounded here: only repositories
//! the caller trusts (see [`super::chart_cache`]), over HTTPS unless the
//! configuration names the `http://` URL, no redirect to another host
//! (but for an archive whose digest is pinned, fetched from there without
//! credentials), bounded time and bytes per request and per run, and
//! credentials only from where Helm keeps them (`repositories.yaml`, the
//! registry `config.json`), never printed. Every archive is verified against the
//! digest its index or manifest gives, before it is kept or used.
//!
//! The cache (`<cache-dir>/charts/`) holds archives by their sha256, a
//! record per (repository, chart, version) naming the digest, and a
//! record per (repository, chart, constraint) naming the version it
//! resolved to. A pinned version is fetched once; a resolved constraint
//! is reused for [`RANGE_FRESH`] (Argo CD keeps a repository's index for
//! its repo cache expiration, 24 hours by default), and for as long as
//! needed offline.
//!
//! The concerns live apart: [`http`] speaks to servers within the run's
//! bounds, [`helm_repo`] reads Helm repositories, [`oci`] OCI registries,
//! [`store`] keeps the cache, [`credentials`] reads Helm's credentials
//! files, and [`versions`] resolves a `targetRevision`. Which
//! repositories may be contacted at all is [`super::chart_cache`]'s.

/// Largest archive read, fetched or from the cache (the size limit of any
/// file gitops-lint reads).
pub(crate) const MAX_ARCHIVE_BYTES: u64 = crate::source::MAX_BLOB_BYTES;

mod credentials;
mod helm_repo;
mod http;
mod oci;
mod store;
mod versions;

use std::collections::{BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::Duration;

use sha2::Digest as _;

pub use credentials::Credentials;
use helm_repo::index_entries;
use http::Budget;
use oci::is_oci;
use versions::is_version;
pub(crate) use versions::max_version;

/// Largest `index.yaml`, tags list or manifest read.
pub(crate) const MAX_INDEX_BYTES: u64 = 64 << 20;
/// Most requests one run makes.
pub(crate) const MAX_REQUESTS: usize = 500;
/// Most bytes one run downloads.
pub(crate) const MAX_RUN_BYTES: u64 = 2 << 30;
/// How long one request may take, unless `GITOPS_LINT_CHART_TIMEOUT`
/// (seconds) says otherwise.
pub(crate) const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a constraint resolved against an index is reused online.
pub(crate) const RANGE_FRESH: Duration = Duration::from_secs(24 * 3600);
/// Same-host redirects followed per request.
const MAX_REDIRECTS: usize = 5;

/// Why a chart could not be had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum FetchError {
    /// Not in the cache, and the run may not contact anything: what it
    /// would have fetched.
    Offline(String),
    /// The repository cannot be reached or answered with a failure
    /// (network error, timeout, 5xx, 404, credentials refused, a bound).
    Failed(String),
    /// What came back is not what was asked for (digest mismatch, a
    /// refused redirect, a malformed index): never rendered.
    Refused(String),
}

impl std::fmt::Display for FetchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FetchError::Offline(m) | FetchError::Failed(m) | FetchError::Refused(m) => {
                f.write_str(m)
            }
        }
    }
}

/// A verified chart archive.
#[derive(Debug, Clone)]
pub(crate) struct Fetched {
    /// The archive.
    pub(crate) bytes: Arc<[u8]>,
    /// The version it is (a constraint resolved).
    pub(crate) version: String,
    /// Its sha256, lower-case hex.
    pub(crate) digest: String,
}

/// How a run fetches charts.
#[derive(Debug, Clone, Default)]
pub struct FetchSettings {
    /// `<cache-dir>/charts` is kept here (`None`: nothing is kept between runs).
    pub cache_dir: Option<PathBuf>,
    /// Contact nothing: only what the cache holds is used.
    pub offline: bool,
    /// Credentials files, read from the environment when `None`
    /// ([`Credentials::from_env`]).
    pub credentials: Option<Credentials>,
    /// Per-request timeout (default [`REQUEST_TIMEOUT`]).
    pub timeout: Option<Duration>,
}

/// The fetcher of a run. Shared by both revisions: a constraint resolves
/// once per run, so base and head see the same version unless the change
/// alters the constraint.
pub struct Fetcher {
    store: Option<PathBuf>,
    offline: bool,
    agent: ureq::Agent,
    credentials: Credentials,
    /// `http://` URLs the configuration names: only they are spoken to
    /// without TLS.
    plain_http: RwLock<Vec<String>>,
    used: Mutex<Budget>,
    /// Each chart once per run: a second asker waits for the first.
    memo: Mutex<HashMap<ChartKey, Arc<OnceLock<Outcome>>>>,
    tokens: Mutex<HashMap<String, String>>,
    /// One line per chart fetched (or, offline, that would be).
    log: Mutex<BTreeSet<String>>,
    /// One line per chart found in the cache.
    hits: Mutex<BTreeSet<String>>,
}

impl std::fmt::Debug for Fetcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Credentials are never printed.
        f.debug_struct("Fetcher")
            .field("store", &self.store)
            .field("offline", &self.offline)
            .finish_non_exhaustive()
    }
}

/// (repository URL, chart, revision as written).
type ChartKey = (String, String, String);

/// A chart fetched, or why not.
type Outcome = Result<Fetched, FetchError>;

fn read_small(p: &Path) -> Option<String> {
    let meta = std::fs::metadata(p).ok()?;
    if meta.len() > 1 << 20 {
        return None;
    }
    std::fs::read_to_string(p).ok()
}

/// A URL without its trailing slashes.
pub(crate) fn trim_url(url: &str) -> &str {
    url.trim_end_matches('/')
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&sha2::Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl Fetcher {
    /// A fetcher with these settings.
    #[must_use]
    pub fn new(settings: FetchSettings) -> Fetcher {
        let timeout = settings.timeout.unwrap_or_else(|| {
            std::env::var("GITOPS_LINT_CHART_TIMEOUT")
                .ok()
                .and_then(|s| s.trim().parse::<u64>().ok())
                .filter(|s| *s > 0)
                .map_or(REQUEST_TIMEOUT, Duration::from_secs)
        });
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(timeout))
            .http_status_as_error(false)
            // Redirects are followed here, to the same host only.
            .max_redirects(0)
            .user_agent(concat!("gitops-lint/", env!("CARGO_PKG_VERSION")))
            // No compressed transfer: the bound is on what is read.
            .accept_encoding("identity")
            .build()
            .into();
        Fetcher {
            store: settings.cache_dir.as_deref().map(crate::cache::charts_dir),
            offline: settings.offline,
            agent,
            credentials: settings.credentials.unwrap_or_else(Credentials::from_env),
            plain_http: RwLock::new(Vec::new()),
            used: Mutex::new(Budget::default()),
            memo: Mutex::new(HashMap::new()),
            tokens: Mutex::new(HashMap::new()),
            log: Mutex::new(BTreeSet::new()),
            hits: Mutex::new(BTreeSet::new()),
        }
    }

    /// Whether the run contacts nothing.
    #[must_use]
    pub(crate) fn offline(&self) -> bool {
        self.offline
    }

    /// The URL of the repository Helm's `repositories.yaml` calls `name`
    /// (a dependency's `@name` or `alias:name`).
    #[must_use]
    pub(crate) fn repository_named(&self, name: &str) -> Option<String> {
        self.credentials.named(name).map(str::to_string)
    }

    /// The `http://` URLs that may be spoken to without TLS (from the
    /// base configuration's `chartRepositories`).
    pub(crate) fn allow_plain_http(&self, urls: impl IntoIterator<Item = String>) {
        let mut w = self
            .plain_http
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        w.extend(
            urls.into_iter()
                .filter(|u| u.starts_with("http://"))
                .map(|u| trim_url(&u).to_string()),
        );
    }

    /// What this run fetched (or, offline, would have), one line each.
    #[must_use]
    pub fn fetched(&self) -> Vec<String> {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// What this run found in the cache, one line each.
    #[must_use]
    pub fn cached(&self) -> Vec<String> {
        self.hits
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// What this run could not fetch, and why, one line each (credentials
    /// never appear in a message).
    #[must_use]
    pub fn failures(&self) -> Vec<String> {
        let memo = self
            .memo
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut out: Vec<String> = memo
            .values()
            .filter_map(|r| match r.get() {
                Some(Err(FetchError::Failed(m) | FetchError::Refused(m))) => Some(m.clone()),
                _ => None,
            })
            .collect();
        out.sort();
        out.dedup();
        out
    }

    fn note(&self, line: String) {
        self.log
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(line);
    }

    /// The chart `chart` of `repo_url` at `revision` (a version or a
    /// constraint), from the cache or the repository. The caller decides
    /// whether the repository may be contacted.
    ///
    /// # Errors
    /// See [`FetchError`].
    pub(crate) fn chart(
        &self,
        repo_url: &str,
        chart: &str,
        revision: &str,
    ) -> Result<Fetched, FetchError> {
        let key = (
            trim_url(repo_url).to_string(),
            chart.to_string(),
            revision.to_string(),
        );
        let cell = Arc::clone(
            self.memo
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .entry(key.clone())
                .or_default(),
        );
        cell.get_or_init(|| self.chart_uncached(&key.0, chart, revision))
            .clone()
    }

    fn chart_uncached(
        &self,
        repo: &str,
        chart: &str,
        revision: &str,
    ) -> Result<Fetched, FetchError> {
        let revision = revision.trim();
        let oci = is_oci(repo);
        let version = if is_version(revision) {
            revision.to_string()
        } else if let Some(v) = self.stored_range(repo, chart, revision) {
            v
        } else {
            if self.offline {
                self.note(format!("{repo} {chart} {revision} (resolve)"));
                return Err(FetchError::Offline(format!(
                    "chart `{chart}` `{revision}` from `{repo}` is a constraint never resolved here, and the run is offline: `gitops-lint charts pull` (or a run without --offline) fetches the {} to resolve it",
                    if oci { "registry's tags" } else { "repository's index" }
                )));
            }
            let v = if oci {
                let tags = self.oci_tags(repo, chart)?;
                max_version(revision, &tags)
            } else {
                max_version(revision, &self.index_tags(repo, chart)?)
            }
            .map_err(|e| {
                FetchError::Failed(format!(
                    "chart `{chart}` from `{repo}`: invalid revision `{revision}`: {e}"
                ))
            })?;
            self.store_range(repo, chart, revision, &v);
            v
        };
        if let Some(f) = self.stored_version(repo, chart, &version) {
            self.hits
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(format!("{repo} {chart} {version} sha256:{}", f.digest));
            return Ok(f);
        }
        if self.offline {
            self.note(format!("{repo} {chart} {version}"));
            return Err(FetchError::Offline(format!(
                "chart `{chart}` {version} from `{repo}` is not in the chart cache, and the run is offline: `gitops-lint charts pull` (or a run without --offline) fetches it"
            )));
        }
        let fetched = if oci {
            self.oci_chart(repo, chart, &version)?
        } else {
            self.helm_chart(repo, chart, &version)?
        };
        self.store_version(repo, chart, &version, &fetched);
        self.note(format!(
            "{repo} {chart} {version} sha256:{}",
            fetched.digest
        ));
        Ok(fetched)
    }
}

impl Fetcher {
    /// The versions of `chart` that the Helm repository at `index_url`
    /// lists in its `index.yaml`.
    pub(super) fn index_tags(
        &self,
        index_url: &str,
        chart: &str,
    ) -> Result<Vec<String>, FetchError> {
        let index = self.helm_index(index_url)?;
        let entries = index_entries(&index, index_url, chart)?;
        Ok(entries.iter().map(|e| e.version.clone()).collect())
    }
}
