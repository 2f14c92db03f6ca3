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
//! configuration names the `http://` URL, no redirect to another host,
//! bounded time and bytes per request and per run, and credentials only
//! from where Helm keeps them (`repositories.yaml`, the registry
//! `config.json`), never printed. Every archive is verified against the
//! digest its index or manifest gives, before it is kept or used.
//!
//! The cache (`<cache-dir>/charts/`) holds archives by their sha256, a
//! record per (repository, chart, version) naming the digest, and a
//! record per (repository, chart, constraint) naming the version it
//! resolved to. A pinned version is fetched once; a resolved constraint
//! is reused for [`RANGE_FRESH`] (Argo CD keeps a repository's index for
//! its repo cache expiration, 24 hours by default), and for as long as
//! needed offline.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use std::time::{Duration, SystemTime};

use base64::Engine as _;
use serde_json::Value;
use sha2::Digest as _;

use super::chart_cache::MAX_ARCHIVE_BYTES;
use crate::semver::{Constraint, Version};

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
/// The media type of a Helm chart's layer in an OCI manifest.
const HELM_LAYER: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";

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

#[derive(Debug, Default)]
struct Budget {
    requests: usize,
    bytes: u64,
}

/// Credentials as Helm users keep them. Never printed.
#[derive(Clone, Default)]
pub struct Credentials {
    /// Helm repository URL (no trailing `/`) → (username, password).
    repos: BTreeMap<String, (String, String)>,
    /// Registry host → (username, password).
    registries: BTreeMap<String, (String, String)>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("repos", &self.repos.len())
            .field("registries", &self.registries.len())
            .finish()
    }
}

impl Credentials {
    /// Read from Helm's `repositories.yaml` (`HELM_REPOSITORY_CONFIG`,
    /// else `$XDG_CONFIG_HOME/helm/repositories.yaml`, else
    /// `~/.config/helm/repositories.yaml`) and the registry `config.json`
    /// files (`HELM_REGISTRY_CONFIG`, else `~/.config/helm/registry/
    /// config.json`; then `$DOCKER_CONFIG/config.json`, else
    /// `~/.docker/config.json`). Unreadable files give no credentials.
    #[must_use]
    pub fn from_env() -> Credentials {
        let env = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let config_home = env("XDG_CONFIG_HOME").or_else(|| env("HOME").map(|h| h.join(".config")));
        let mut c = Credentials::default();
        let repos = env("HELM_REPOSITORY_CONFIG").or_else(|| {
            config_home
                .as_ref()
                .map(|h| h.join("helm/repositories.yaml"))
        });
        if let Some(text) = repos.and_then(|p| read_small(&p)) {
            c.read_repositories_yaml(&text);
        }
        let registries = [
            env("HELM_REGISTRY_CONFIG").or_else(|| {
                config_home
                    .as_ref()
                    .map(|h| h.join("helm/registry/config.json"))
            }),
            env("DOCKER_CONFIG")
                .map(|d| d.join("config.json"))
                .or_else(|| env("HOME").map(|h| h.join(".docker/config.json"))),
        ];
        for p in registries.into_iter().flatten() {
            if let Some(text) = read_small(&p) {
                c.read_registry_config(&text);
            }
        }
        c
    }

    /// Helm's `repositories.yaml`: `repositories[].{url,username,password}`.
    fn read_repositories_yaml(&mut self, text: &str) {
        let Ok(v) = crate::yaml::parse_first_doc(text) else {
            return;
        };
        for r in v
            .get("repositories")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let (url, user, pass) = (s("url"), s("username"), s("password"));
            let anonymous = user.is_empty() && pass.is_empty();
            if !url.is_empty() && !anonymous {
                self.repos.insert(trim_url(&url).to_string(), (user, pass));
            }
        }
    }

    /// A registry `config.json`: `auths.<host>.auth` (base64 of
    /// `user:password`) or `.username`/`.password`. The first file to name
    /// a host wins.
    fn read_registry_config(&mut self, text: &str) {
        let Ok(v) = serde_json::from_str::<Value>(text) else {
            return;
        };
        let Some(auths) = v.get("auths").and_then(Value::as_object) else {
            return;
        };
        for (host, a) in auths {
            let host = host
                .trim_start_matches("https://")
                .trim_start_matches("http://")
                .trim_end_matches('/')
                .to_string();
            let pair = if let Some(b) = a.get("auth").and_then(Value::as_str) {
                base64::engine::general_purpose::STANDARD
                    .decode(b)
                    .ok()
                    .and_then(|d| String::from_utf8(d).ok())
                    .and_then(|s| {
                        s.split_once(':')
                            .map(|(u, p)| (u.to_string(), p.to_string()))
                    })
            } else {
                let s = |k: &str| a.get(k).and_then(Value::as_str).map(str::to_string);
                s("username").zip(s("password"))
            };
            if let Some(pair) = pair {
                self.registries.entry(host).or_insert(pair);
            }
        }
    }
}

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

/// Whether `repo_url` names an OCI registry, as Argo CD tells: `oci://`,
/// or no scheme at all (`helm.IsHelmOciRepo`: the URL parses with no host).
#[must_use]
pub(crate) fn is_oci(repo_url: &str) -> bool {
    repo_url.starts_with("oci://") || !repo_url.contains("://")
}

/// The host (with port) of an `http(s)://` URL.
fn host_of(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = &rest[..end];
    // Credentials in a URL are not taken.
    (!host.is_empty() && !host.contains('@')).then_some(host)
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&sha2::Sha256::digest(bytes))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `versions.IsVersion`.
fn is_version(rev: &str) -> bool {
    Version::parse(rev).is_ok()
}

/// `versions.MaxVersion` with no tag prefix: the highest version among
/// `tags` that satisfies `revision`, returned as written in the tags.
///
/// # Errors
/// Neither a version nor a constraint, or nothing matches.
pub(crate) fn max_version(revision: &str, tags: &[String]) -> Result<String, String> {
    if let Ok(v) = Version::parse(revision) {
        return Ok(v.original);
    }
    let constraint = match Constraint::parse(revision) {
        Ok(c) => c,
        Err(e) => {
            if tags.iter().any(|t| t == revision) {
                return Ok(revision.to_string());
            }
            return Err(format!("failed to determine semver constraint: {e}"));
        }
    };
    let mut best: Option<Version> = None;
    for tag in tags {
        let Ok(v) = Version::parse(tag) else {
            continue;
        };
        if constraint.check(&v)
            && best
                .as_ref()
                .is_none_or(|b| v.compare(b) == std::cmp::Ordering::Greater)
        {
            best = Some(v);
        }
    }
    best.map(|v| v.original).ok_or_else(|| {
        format!(
            "version matching constraint not found in {} tags",
            tags.len()
        )
    })
}

/// A key's file name in the cache: the sha256 of its parts.
fn key_name(parts: &[&str]) -> String {
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    hex(&h.finalize())
}

/// One response, read whole within its bound.
struct Reply {
    status: u16,
    body: Vec<u8>,
    headers: Vec<(String, String)>,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Authorization to send with a request, for its host only.
#[derive(Clone)]
enum Auth {
    None,
    Basic(String, String),
    Bearer(String),
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
            store: settings.cache_dir.map(|d| d.join("charts")),
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
                let index = self.helm_index(repo)?;
                let entries = index_entries(&index, repo, chart)?;
                let tags: Vec<String> = entries.iter().map(|e| e.version.clone()).collect();
                max_version(revision, &tags)
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

    // ---- the cache ------------------------------------------------------

    fn record_path(&self, kind: &str, parts: &[&str]) -> Option<PathBuf> {
        Some(
            self.store
                .as_ref()?
                .join(kind)
                .join(format!("{}.json", key_name(parts))),
        )
    }

    fn stored_range(&self, repo: &str, chart: &str, constraint: &str) -> Option<String> {
        let p = self.record_path("ranges", &[repo, chart, constraint])?;
        let v: Value = serde_json::from_str(&read_small(&p)?).ok()?;
        let same = |k: &str, want: &str| v.get(k).and_then(Value::as_str) == Some(want);
        if !(same("repoURL", repo) && same("chart", chart) && same("constraint", constraint)) {
            return None;
        }
        let at = v.get("resolvedAt").and_then(Value::as_u64)?;
        let age = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .ok()?
            .as_secs()
            .saturating_sub(at);
        if !self.offline && age > RANGE_FRESH.as_secs() {
            return None;
        }
        v.get("version").and_then(Value::as_str).map(str::to_string)
    }

    fn store_range(&self, repo: &str, chart: &str, constraint: &str, version: &str) {
        let Some(p) = self.record_path("ranges", &[repo, chart, constraint]) else {
            return;
        };
        let now = SystemTime::now()
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let v = serde_json::json!({"repoURL": repo, "chart": chart, "constraint": constraint, "version": version, "resolvedAt": now});
        write_atomic(&p, v.to_string().as_bytes());
    }

    fn archive_path(&self, digest: &str) -> Option<PathBuf> {
        Some(
            self.store
                .as_ref()?
                .join("archives")
                .join(format!("sha256-{digest}.tgz")),
        )
    }

    /// The archive recorded for this version, verified again on read.
    fn stored_version(&self, repo: &str, chart: &str, version: &str) -> Option<Fetched> {
        let p = self.record_path("versions", &[repo, chart, version])?;
        let v: Value = serde_json::from_str(&read_small(&p)?).ok()?;
        let same = |k: &str, want: &str| v.get(k).and_then(Value::as_str) == Some(want);
        if !(same("repoURL", repo) && same("chart", chart) && same("version", version)) {
            return None;
        }
        let digest = v.get("digest").and_then(Value::as_str)?.to_string();
        let a = self.archive_path(&digest)?;
        if std::fs::metadata(&a).ok()?.len() > MAX_ARCHIVE_BYTES {
            return None;
        }
        let bytes = std::fs::read(&a).ok()?;
        (sha256_hex(&bytes) == digest).then(|| Fetched {
            bytes: Arc::from(bytes),
            version: version.to_string(),
            digest,
        })
    }

    fn store_version(&self, repo: &str, chart: &str, version: &str, f: &Fetched) {
        let (Some(a), Some(p)) = (
            self.archive_path(&f.digest),
            self.record_path("versions", &[repo, chart, version]),
        ) else {
            return;
        };
        write_atomic(&a, &f.bytes);
        let v = serde_json::json!({"repoURL": repo, "chart": chart, "version": version, "digest": f.digest});
        write_atomic(&p, v.to_string().as_bytes());
    }

    // ---- HTTP -----------------------------------------------------------

    /// Whether `url` may be requested: HTTPS, or an `http://` URL under
    /// one the configuration names.
    fn scheme_allowed(&self, url: &str) -> bool {
        if url.starts_with("https://") {
            return true;
        }
        if !url.starts_with("http://") {
            return false;
        }
        self.plain_http
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .any(|p| url == p || url.starts_with(&format!("{p}/")))
    }

    /// GETs `url`, following redirects to the same host only, reading at
    /// most `limit` bytes, within the run's budget.
    fn get(
        &self,
        url: &str,
        auth: &Auth,
        accept: Option<&str>,
        limit: u64,
    ) -> Result<Reply, FetchError> {
        let mut url = url.to_string();
        let first_host = host_of(&url)
            .ok_or_else(|| FetchError::Refused(format!("`{url}` is not an http(s) URL")))?
            .to_string();
        for _ in 0..=MAX_REDIRECTS {
            if !self.scheme_allowed(&url) {
                return Err(FetchError::Refused(format!(
                    "`{url}` is not HTTPS: gitops-lint speaks plain HTTP only to a URL the base configuration lists under `chartRepositories:`"
                )));
            }
            {
                let mut b = self
                    .used
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                if b.requests >= MAX_REQUESTS {
                    return Err(FetchError::Failed(format!(
                        "more than {MAX_REQUESTS} requests in one run, gitops-lint's bound: `{url}` was not fetched"
                    )));
                }
                b.requests += 1;
            }
            let mut req = self.agent.get(&url);
            if let Some(a) = accept {
                req = req.header("Accept", a);
            }
            match auth {
                Auth::None => {}
                Auth::Basic(u, p) => {
                    let b = base64::engine::general_purpose::STANDARD.encode(format!("{u}:{p}"));
                    req = req.header("Authorization", format!("Basic {b}"));
                }
                Auth::Bearer(t) => req = req.header("Authorization", format!("Bearer {t}")),
            }
            let resp = req
                .call()
                .map_err(|e| FetchError::Failed(format!("`{url}`: {e}")))?;
            let status = resp.status().as_u16();
            let headers: Vec<(String, String)> = resp
                .headers()
                .iter()
                .filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())))
                .collect();
            if (300..400).contains(&status) {
                let Some(loc) = headers
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case("location"))
                    .map(|(_, v)| v.clone())
                else {
                    return Err(FetchError::Failed(format!(
                        "`{url}` answered {status} without a location"
                    )));
                };
                let next = join_url(&url, &loc);
                if host_of(&next) != Some(first_host.as_str()) {
                    return Err(FetchError::Refused(format!(
                        "`{url}` redirects to another host (`{}`): gitops-lint follows redirects to the same host only",
                        host_of(&next).unwrap_or(&next)
                    )));
                }
                url = next;
                continue;
            }
            let remaining = {
                let b = self
                    .used
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                MAX_RUN_BYTES.saturating_sub(b.bytes)
            };
            let cap = limit.min(remaining);
            if resp.body().content_length().is_some_and(|n| n > cap) {
                return Err(too_big(&url, limit, cap));
            }
            let body = resp.into_body().into_with_config().limit(cap).read_to_vec();
            let body = match body {
                Ok(b) => b,
                Err(ureq::Error::BodyExceedsLimit(_)) => return Err(too_big(&url, limit, cap)),
                Err(e) => return Err(FetchError::Failed(format!("`{url}`: {e}"))),
            };
            self.used
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .bytes += body.len() as u64;
            return Ok(Reply {
                status,
                body,
                headers,
            });
        }
        Err(FetchError::Failed(format!(
            "`{url}` redirects more than {MAX_REDIRECTS} times"
        )))
    }

    // ---- Helm repositories ------------------------------------------------

    /// The basic credentials `repositories.yaml` gives for `repo`, for
    /// requests to its host only.
    fn repo_auth(&self, repo: &str, url: &str) -> Auth {
        match self.credentials.repos.get(repo) {
            Some((u, p)) if host_of(url) == host_of(repo) => Auth::Basic(u.clone(), p.clone()),
            _ => Auth::None,
        }
    }

    /// `getIndexURL` then `GetIndex`.
    fn helm_index(&self, repo: &str) -> Result<Value, FetchError> {
        let url = format!("{repo}/index.yaml");
        let r = self.get(&url, &self.repo_auth(repo, &url), None, MAX_INDEX_BYTES)?;
        check_status(&r, &url, "the repository's index")?;
        let text = String::from_utf8(r.body)
            .map_err(|_| FetchError::Refused(format!("`{url}` is not text")))?;
        let limits = crate::yaml::Limits {
            max_documents: 1,
            ..crate::yaml::Limits::default()
        };
        let docs = crate::yaml::load_all_with(&text, &limits)
            .map_err(|e| FetchError::Refused(format!("`{url}` does not parse: {e}")))?;
        Ok(docs
            .into_iter()
            .next()
            .map_or(Value::Null, |d| d.into_value()))
    }

    fn helm_chart(&self, repo: &str, chart: &str, version: &str) -> Result<Fetched, FetchError> {
        let index = self.helm_index(repo)?;
        let entries = index_entries(&index, repo, chart)?;
        // helm looks the version up as a constraint (`repo.ChartVersion`):
        // the first entry, in index order, equal to it.
        let want = Version::parse(version).ok();
        let entry = entries
            .iter()
            .find(|e| match (&want, Version::parse(&e.version)) {
                (Some(w), Ok(v)) => v.compare(w) == std::cmp::Ordering::Equal,
                _ => e.version == version,
            })
            .ok_or_else(|| {
                FetchError::Failed(format!(
                    "chart `{chart}` {version} is not in the index of `{repo}`"
                ))
            })?;
        let Some(digest) = entry.digest.clone() else {
            return Err(FetchError::Refused(format!(
                "chart `{chart}` {version} in the index of `{repo}` has no `digest`: gitops-lint renders only verified archives"
            )));
        };
        let url = entry
            .urls
            .first()
            .map(|u| join_url(&format!("{repo}/"), u))
            .ok_or_else(|| {
                FetchError::Refused(format!(
                    "chart `{chart}` {version} in the index of `{repo}` has no `urls`"
                ))
            })?;
        let r = self.get(&url, &self.repo_auth(repo, &url), None, MAX_ARCHIVE_BYTES)?;
        check_status(&r, &url, "the chart archive")?;
        let got = sha256_hex(&r.body);
        if got != digest.to_ascii_lowercase() {
            return Err(FetchError::Refused(format!(
                "chart `{chart}` {version} from `{url}` has sha256 {got}, not the digest {digest} its repository's index gives: not rendered"
            )));
        }
        Ok(Fetched {
            bytes: Arc::from(r.body),
            version: version.to_string(),
            digest: got,
        })
    }

    // ---- OCI registries ---------------------------------------------------

    /// `https://host/v2/<path>/<chart>` of an OCI repository URL.
    fn oci_base(&self, repo: &str, chart: &str) -> Result<(String, String, String), FetchError> {
        let rest = repo.trim_start_matches("oci://");
        let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
        if host.is_empty() || host.contains('@') {
            return Err(FetchError::Refused(format!(
                "`{repo}` names no registry host"
            )));
        }
        let name = [path.trim_matches('/'), chart.trim_matches('/')]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("/");
        if name
            .split('/')
            .any(|s| s.is_empty() || s == "." || s == "..")
        {
            return Err(FetchError::Refused(format!(
                "chart `{chart}` of `{repo}` is not a registry repository name"
            )));
        }
        let plain = format!("http://{host}");
        let scheme = if self.scheme_allowed(&plain) {
            "http"
        } else {
            "https"
        };
        Ok((
            format!("{scheme}://{host}/v2/{name}"),
            host.to_string(),
            name,
        ))
    }

    /// A registry GET, answering a `401` with the anonymous or
    /// credentialed token flow (`WWW-Authenticate: Bearer realm=…`, realm
    /// on the same host only) or basic credentials.
    fn oci_get(
        &self,
        url: &str,
        host: &str,
        accept: Option<&str>,
        limit: u64,
    ) -> Result<Reply, FetchError> {
        let cached = self
            .tokens
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(host)
            .cloned();
        let first_auth = cached.map_or(Auth::None, Auth::Bearer);
        let r = self.get(url, &first_auth, accept, limit)?;
        if r.status != 401 {
            return Ok(r);
        }
        let creds = self.credentials.registries.get(host).cloned();
        let challenge = r.header("www-authenticate").unwrap_or("").to_string();
        let auth = if challenge.to_ascii_lowercase().starts_with("bearer") {
            let params = challenge_params(&challenge);
            let realm = params.get("realm").cloned().unwrap_or_default();
            if host_of(&realm) != Some(host) {
                return Err(FetchError::Refused(format!(
                    "registry `{host}` asks for a token from `{}`, another host: gitops-lint asks only the registry's own host",
                    host_of(&realm).unwrap_or(&realm)
                )));
            }
            let mut token_url = realm.clone();
            let mut sep = if realm.contains('?') { '&' } else { '?' };
            for k in ["service", "scope"] {
                if let Some(v) = params.get(k) {
                    token_url.push(sep);
                    token_url.push_str(&format!("{k}={}", query_escape(v)));
                    sep = '&';
                }
            }
            let basic = creds.clone().map_or(Auth::None, |(u, p)| Auth::Basic(u, p));
            let t = self.get(&token_url, &basic, None, 1 << 20)?;
            if t.status != 200 {
                return Err(FetchError::Failed(format!(
                    "registry `{host}` refused a token ({}){}",
                    t.status,
                    creds_hint(creds.is_some(), host)
                )));
            }
            let v: Value = serde_json::from_slice(&t.body).unwrap_or(Value::Null);
            let token = v
                .get("token")
                .or_else(|| v.get("access_token"))
                .and_then(Value::as_str)
                .ok_or_else(|| FetchError::Failed(format!("registry `{host}` gave no token")))?
                .to_string();
            self.tokens
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .insert(host.to_string(), token.clone());
            Auth::Bearer(token)
        } else {
            match creds {
                Some((u, p)) => Auth::Basic(u, p),
                None => {
                    return Err(FetchError::Failed(format!(
                        "registry `{host}` needs credentials{}",
                        creds_hint(false, host)
                    )))
                }
            }
        };
        let again = self.get(url, &auth, accept, limit)?;
        if again.status == 401 || again.status == 403 {
            return Err(FetchError::Failed(format!(
                "registry `{host}` refused access to `{url}` ({}){}",
                again.status,
                creds_hint(self.credentials.registries.contains_key(host), host)
            )));
        }
        Ok(again)
    }

    /// `GetTags`: the repository's tags, `_` read back as `+`.
    fn oci_tags(&self, repo: &str, chart: &str) -> Result<Vec<String>, FetchError> {
        let (base, host, _) = self.oci_base(repo, chart)?;
        let url = format!("{base}/tags/list");
        let r = self.oci_get(&url, &host, Some("application/json"), MAX_INDEX_BYTES)?;
        check_status(&r, &url, "the registry's tags")?;
        let v: Value = serde_json::from_slice(&r.body)
            .map_err(|e| FetchError::Refused(format!("`{url}` is not a tags list: {e}")))?;
        Ok(v.get("tags")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|t| t.replace('_', "+"))
            .collect())
    }

    /// The chart layer of the manifest tagged `version`, verified against
    /// the manifest's digest (the registry's `Docker-Content-Digest`) and
    /// the layer's.
    fn oci_chart(&self, repo: &str, chart: &str, version: &str) -> Result<Fetched, FetchError> {
        let (base, host, name) = self.oci_base(repo, chart)?;
        // By convention a `+` of a version is `_` in a tag.
        let tag = version.replace('+', "_");
        let url = format!("{base}/manifests/{tag}");
        let r = self.oci_get(
            &url,
            &host,
            Some("application/vnd.oci.image.manifest.v1+json"),
            MAX_INDEX_BYTES,
        )?;
        check_status(&r, &url, "the chart's manifest")?;
        let manifest_digest = format!("sha256:{}", sha256_hex(&r.body));
        if let Some(said) = r.header("docker-content-digest") {
            if said.starts_with("sha256:") && said != manifest_digest {
                return Err(FetchError::Refused(format!(
                    "the manifest of `{host}/{name}:{tag}` has digest {manifest_digest}, not the {said} the registry announced: not rendered"
                )));
            }
        }
        let m: Value = serde_json::from_slice(&r.body)
            .map_err(|e| FetchError::Refused(format!("`{url}` is not a manifest: {e}")))?;
        let layer = m
            .get("layers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .find(|l| l.get("mediaType").and_then(Value::as_str) == Some(HELM_LAYER))
            .ok_or_else(|| {
                FetchError::Refused(format!(
                    "`{host}/{name}:{tag}` holds no Helm chart layer ({HELM_LAYER})"
                ))
            })?;
        let digest = layer
            .get("digest")
            .and_then(Value::as_str)
            .and_then(|d| d.strip_prefix("sha256:"))
            .filter(|d| d.len() == 64 && d.bytes().all(|b| b.is_ascii_hexdigit()))
            .ok_or_else(|| {
                FetchError::Refused(format!(
                    "the chart layer of `{host}/{name}:{tag}` has no sha256 digest"
                ))
            })?
            .to_ascii_lowercase();
        let blob = format!("{base}/blobs/sha256:{digest}");
        let r = self.oci_get(&blob, &host, None, MAX_ARCHIVE_BYTES)?;
        check_status(&r, &blob, "the chart layer")?;
        let got = sha256_hex(&r.body);
        if got != digest {
            return Err(FetchError::Refused(format!(
                "the chart layer of `{host}/{name}:{tag}` has sha256 {got}, not the digest {digest} its manifest gives: not rendered"
            )));
        }
        Ok(Fetched {
            bytes: Arc::from(r.body),
            version: version.to_string(),
            digest: got,
        })
    }
}

fn creds_hint(had: bool, host: &str) -> String {
    if had {
        " with the credentials of its registry config.json entry".to_string()
    } else {
        format!(" and none are configured: log in with `helm registry login {host}` (registry config.json)")
    }
}

fn too_big(url: &str, limit: u64, cap: u64) -> FetchError {
    if cap < limit {
        FetchError::Failed(format!(
            "`{url}` would take the run past {} MiB downloaded, gitops-lint's bound",
            MAX_RUN_BYTES >> 20
        ))
    } else {
        FetchError::Refused(format!(
            "`{url}` is larger than {} MiB, more than gitops-lint reads",
            limit >> 20
        ))
    }
}

fn check_status(r: &Reply, url: &str, what: &str) -> Result<(), FetchError> {
    match r.status {
        200 => Ok(()),
        401 | 403 => Err(FetchError::Failed(format!(
            "`{url}` ({what}) answered {}: it needs credentials gitops-lint does not have (Helm's repositories.yaml, or the registry config.json)",
            r.status
        ))),
        s => Err(FetchError::Failed(format!("`{url}` ({what}) answered {s}"))),
    }
}

/// One entry of an index's chart.
struct IndexEntry {
    version: String,
    urls: Vec<String>,
    digest: Option<String>,
}

/// `Index.GetEntries`.
fn index_entries(index: &Value, repo: &str, chart: &str) -> Result<Vec<IndexEntry>, FetchError> {
    let list = index
        .get("entries")
        .and_then(|e| e.get(chart))
        .and_then(Value::as_array)
        .ok_or_else(|| {
            FetchError::Failed(format!(
                "chart '{chart}' not found in the index of `{repo}`"
            ))
        })?;
    Ok(list
        .iter()
        .map(|e| {
            let s = |k: &str| e.get(k).and_then(Value::as_str).map(str::to_string);
            IndexEntry {
                version: s("version").unwrap_or_default(),
                urls: e
                    .get("urls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect(),
                digest: s("digest").filter(|d| !d.is_empty()),
            }
        })
        .collect())
}

/// `reference` resolved against `base` (helm `repo.ResolveReferenceURL`
/// for an index's `urls`; RFC 3986 for a `Location`): absolute URLs as
/// they are, `/path` on the base's host, else relative to its directory.
fn join_url(base: &str, reference: &str) -> String {
    if reference.starts_with("https://") || reference.starts_with("http://") {
        return reference.to_string();
    }
    let Some(scheme_end) = base.find("://").map(|i| i + 3) else {
        return reference.to_string();
    };
    let host_end = base[scheme_end..]
        .find('/')
        .map_or(base.len(), |i| scheme_end + i);
    if let Some(abs) = reference.strip_prefix('/') {
        return format!("{}/{abs}", &base[..host_end]);
    }
    let path = &base[host_end..];
    let path = path.split(['?', '#']).next().unwrap_or("");
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    let dir = if dir.is_empty() { "/" } else { dir };
    format!("{}{dir}{reference}", &base[..host_end])
}

/// The `key="value"` parameters of a `WWW-Authenticate` challenge.
fn challenge_params(header: &str) -> HashMap<String, String> {
    let rest = header.split_once(' ').map_or("", |(_, r)| r);
    let mut out = HashMap::new();
    let mut s = rest;
    while let Some(eq) = s.find('=') {
        let key = s[..eq]
            .trim()
            .trim_start_matches(',')
            .trim()
            .to_ascii_lowercase();
        let after = &s[eq + 1..];
        let (value, next) = if let Some(q) = after.strip_prefix('"') {
            match q.find('"') {
                Some(end) => (&q[..end], &q[end + 1..]),
                None => (q, ""),
            }
        } else {
            let end = after.find(',').unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        out.insert(key, value.to_string());
        s = next.trim_start_matches([',', ' ']);
    }
    out
}

fn query_escape(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Writes `bytes` to `p` through a file beside it, so a reader never sees
/// half a file. Failing to keep something costs the next run a fetch,
/// never its answer.
fn write_atomic(p: &Path, bytes: &[u8]) {
    let Some(dir) = p.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let Ok(mut tmp) = tempfile::NamedTempFile::new_in(dir) else {
        return;
    };
    if tmp.write_all(bytes).is_ok() {
        let _ = tmp.persist(p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(t: &[&str]) -> Vec<String> {
        t.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn ranges_resolve_as_max_version_does() {
        let t = tags(&["1.0.0", "1.2.0", "1.10.1", "2.0.0", "2.1.0-rc.1", "junk"]);
        assert_eq!(max_version("1.x", &t).as_deref(), Ok("1.10.1"));
        assert_eq!(max_version(">=1.0, <2.0", &t).as_deref(), Ok("1.10.1"));
        assert_eq!(max_version("*", &t).as_deref(), Ok("2.0.0"));
        assert_eq!(max_version("~1.2", &t).as_deref(), Ok("1.2.0"));
        // A version is a pin: returned as written, without the tags.
        assert_eq!(max_version("v3.0", &t).as_deref(), Ok("v3.0"));
        assert!(max_version("^3", &t).is_err());
        // Not a constraint: string equality with a tag.
        assert_eq!(max_version("junk", &t).as_deref(), Ok("junk"));
        assert!(max_version("other junk!", &t).is_err());
    }

    #[test]
    fn urls_join_as_helm_joins_index_urls() {
        assert_eq!(
            join_url("https://c.example/charts/", "store-1.0.0.tgz"),
            "https://c.example/charts/store-1.0.0.tgz"
        );
        assert_eq!(
            join_url("https://c.example/charts/index.yaml", "/x/a.tgz"),
            "https://c.example/x/a.tgz"
        );
        assert_eq!(
            join_url("https://c.example/charts/", "https://o.example/a.tgz"),
            "https://o.example/a.tgz"
        );
        assert_eq!(host_of("https://u:p@c.example/x"), None);
        assert_eq!(host_of("http://127.0.0.1:8080/x"), Some("127.0.0.1:8080"));
    }

    #[test]
    fn oci_urls_are_told_as_argo_cd_tells_them() {
        assert!(is_oci("oci://ghcr.io/org/charts"));
        assert!(is_oci("ghcr.io/org/charts"));
        assert!(!is_oci("https://charts.example"));
    }

    #[test]
    fn challenges_and_credentials_are_read() {
        let p = challenge_params(
            r#"Bearer realm="https://r.example/token",service="r.example",scope="repository:a/b:pull""#,
        );
        assert_eq!(
            p.get("realm").map(String::as_str),
            Some("https://r.example/token")
        );
        assert_eq!(
            p.get("scope").map(String::as_str),
            Some("repository:a/b:pull")
        );
        let mut c = Credentials::default();
        c.read_repositories_yaml(
            "repositories:\n- name: a\n  url: https://c.example/charts/\n  username: u\n  password: p\n",
        );
        c.read_registry_config(r#"{"auths":{"https://r.example":{"auth":"dTpw"}}}"#);
        assert_eq!(
            c.repos.get("https://c.example/charts"),
            Some(&("u".to_string(), "p".to_string()))
        );
        assert_eq!(
            c.registries.get("r.example"),
            Some(&("u".to_string(), "p".to_string()))
        );
        // Never printed.
        let shown = format!("{c:?}");
        assert!(
            !shown.contains("\"u\"") && !shown.contains("dTpw"),
            "{shown}"
        );
    }
}
