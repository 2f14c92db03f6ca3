//! The cache (`<cache-dir>/charts/`): archives by their sha256, a record
//! per (repository, chart, version) naming the digest, and a record per
//! (repository, chart, constraint) naming the version it resolved to.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;
use sha2::Digest as _;

use super::MAX_ARCHIVE_BYTES;
use super::{hex, read_small, sha256_hex, trim_url, Fetched, Fetcher, RANGE_FRESH};

/// A key's file name in the cache: the sha256 of its parts.
fn key_name(parts: &[&str]) -> String {
    let mut h = sha2::Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_le_bytes());
        h.update(p.as_bytes());
    }
    hex(&h.finalize())
}

impl Fetcher {
    fn record_path(&self, kind: &str, parts: &[&str]) -> Option<PathBuf> {
        Some(
            self.store
                .as_ref()?
                .join(kind)
                .join(format!("{}.json", key_name(parts))),
        )
    }

    pub(super) fn stored_range(&self, repo: &str, chart: &str, constraint: &str) -> Option<String> {
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

    pub(super) fn store_range(&self, repo: &str, chart: &str, constraint: &str, version: &str) {
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
    pub(super) fn stored_version(&self, repo: &str, chart: &str, version: &str) -> Option<Fetched> {
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

    pub(super) fn store_version(&self, repo: &str, chart: &str, version: &str, f: &Fetched) {
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

impl Fetcher {
    /// Keeps in the cache the chart `chart` of the Helm repository `repo`
    /// at `revision` (a version or a constraint), read from `mirror`, a
    /// copy of `repo` serving the same `index.yaml` and archives: what a
    /// run's fetch from `repo` would keep, resolved and digest-verified as
    /// that fetch does, recorded under `repo`. It fills the cache of an
    /// air-gapped job, or a test's, from a recording of a public
    /// repository. The command line never calls it: what a run renders
    /// comes only from the repositories its base trusts, or from what
    /// whoever owns the cache directory put there.
    ///
    /// Returns the version kept.
    ///
    /// # Errors
    /// What the fetch from `mirror` failed on (unreachable, not in its
    /// index, digest mismatch), or that this fetcher is offline.
    pub fn keep_from_mirror(
        &self,
        repo: &str,
        mirror: &str,
        chart: &str,
        revision: &str,
    ) -> Result<String, String> {
        let (repo, mirror, revision) = (trim_url(repo), trim_url(mirror), revision.trim());
        if self.offline {
            return Err(format!("offline: `{mirror}` is not contacted"));
        }
        if super::oci::is_oci(repo) || super::oci::is_oci(mirror) {
            return Err(format!(
                "`{repo}`: only Helm repositories are read from a mirror"
            ));
        }
        // A mirror serves the archives its index names from its own host,
        // under any path (the path of their URL at the repository).
        if let Some(host) = mirror
            .strip_prefix("http://")
            .and_then(|_| super::http::host_of(mirror))
        {
            self.allow_plain_http([format!("http://{host}")]);
        }
        let version = if super::versions::is_version(revision) {
            revision.to_string()
        } else {
            let tags = self.index_tags(mirror, chart).map_err(|e| e.to_string())?;
            let v = super::max_version(revision, &tags)
                .map_err(|e| format!("chart `{chart}`: invalid revision `{revision}`: {e}"))?;
            self.store_range(repo, chart, revision, &v);
            v
        };
        let fetched = self
            .helm_chart(mirror, chart, &version)
            .map_err(|e| e.to_string())?;
        self.store_version(repo, chart, &version, &fetched);
        Ok(version)
    }
}
