//! Helm repositories: `index.yaml` and the archives it names, verified
//! against the index's `digest`.

use std::sync::Arc;

use serde_json::Value;

use super::http::{check_status, host_of, join_url, Auth};
use super::MAX_ARCHIVE_BYTES;
use super::{sha256_hex, FetchError, Fetched, Fetcher, MAX_INDEX_BYTES};
use gotemplate::go::semver::Version;

impl Fetcher {
    /// The basic credentials `repositories.yaml` gives for `repo`, for
    /// requests to its host only.
    fn repo_auth(&self, repo: &str, url: &str) -> Auth {
        match self.credentials.repos.get(repo) {
            Some((u, p)) if host_of(url) == host_of(repo) => Auth::Basic(u.clone(), p.clone()),
            _ => Auth::None,
        }
    }

    /// `getIndexURL` then `GetIndex`.
    pub(super) fn helm_index(&self, repo: &str) -> Result<Value, FetchError> {
        let url = format!("{repo}/index.yaml");
        let r = self.get(&url, &self.repo_auth(repo, &url), None, MAX_INDEX_BYTES)?;
        check_status(&r, &url, "the repository's index")?;
        let text = String::from_utf8(r.body)
            .map_err(|_| FetchError::Refused(format!("`{url}` is not text")))?;
        let limits = goyaml::Limits {
            max_documents: 1,
            ..goyaml::Limits::default()
        };
        let docs = goyaml::load_all_with(&text, &limits)
            .map_err(|e| FetchError::Refused(format!("`{url}` does not parse: {e}")))?;
        Ok(docs
            .into_iter()
            .next()
            .map_or(Value::Null, |d| d.into_value()))
    }

    pub(super) fn helm_chart(
        &self,
        repo: &str,
        chart: &str,
        version: &str,
    ) -> Result<Fetched, FetchError> {
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
        // The digest is pinned: the archive may be served from elsewhere.
        let r = self.get_pinned(&url, &self.repo_auth(repo, &url), None, MAX_ARCHIVE_BYTES)?;
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
}

/// One entry of an index's chart.
pub(super) struct IndexEntry {
    pub(super) version: String,
    urls: Vec<String>,
    digest: Option<String>,
}

/// `Index.GetEntries`.
pub(super) fn index_entries(
    index: &Value,
    repo: &str,
    chart: &str,
) -> Result<Vec<IndexEntry>, FetchError> {
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
