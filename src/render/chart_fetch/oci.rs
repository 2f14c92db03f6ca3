//! OCI registries: tags, manifests and the chart layer, verified against
//! their digests, with the registry token flow.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use super::http::{check_status, host_of, Auth, Reply};
use super::MAX_ARCHIVE_BYTES;
use super::{sha256_hex, FetchError, Fetched, Fetcher, MAX_INDEX_BYTES};

/// The media type of a Helm chart's layer in an OCI manifest.
const HELM_LAYER: &str = "application/vnd.cncf.helm.chart.content.v1.tar+gzip";

/// Whether `repo_url` names an OCI registry, as Argo CD tells: `oci://`,
/// or no scheme at all (`helm.IsHelmOciRepo`: the URL parses with no host).
#[must_use]
pub(crate) fn is_oci(repo_url: &str) -> bool {
    repo_url.starts_with("oci://") || !repo_url.contains("://")
}

impl Fetcher {
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
        pinned: bool,
    ) -> Result<Reply, FetchError> {
        let get = |url: &str, auth: &Auth| {
            if pinned {
                self.get_pinned(url, auth, accept, limit)
            } else {
                self.get(url, auth, accept, limit)
            }
        };
        let cached = self
            .tokens
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(host)
            .cloned();
        let first_auth = cached.map_or(Auth::None, Auth::Bearer);
        let r = get(url, &first_auth)?;
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
                    self.creds_hint(creds.is_some(), host)
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
                        self.creds_hint(false, host)
                    )))
                }
            }
        };
        let again = get(url, &auth)?;
        if again.status == 401 || again.status == 403 {
            return Err(FetchError::Failed(format!(
                "registry `{host}` refused access to `{url}` ({}){}",
                again.status,
                self.creds_hint(self.credentials.registries.contains_key(host), host)
            )));
        }
        Ok(again)
    }

    /// What to do about credentials `host` refused or lacks.
    fn creds_hint(&self, had: bool, host: &str) -> String {
        if had {
            " with the credentials of its registry config.json entry".to_string()
        } else if self.credentials.helper_for(host) {
            format!(" and the registry config.json leaves it to a credential helper (`credsStore`/`credHelpers`), which gitops-lint does not run: write its credentials with `helm registry login {host}` (docs/charts.md)")
        } else {
            format!(" and none are configured: log in with `helm registry login {host}` (registry config.json)")
        }
    }

    /// `GetTags`: the repository's tags, `_` read back as `+`.
    pub(super) fn oci_tags(&self, repo: &str, chart: &str) -> Result<Vec<String>, FetchError> {
        let (base, host, _) = self.oci_base(repo, chart)?;
        let url = format!("{base}/tags/list");
        let r = self.oci_get(
            &url,
            &host,
            Some("application/json"),
            MAX_INDEX_BYTES,
            false,
        )?;
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
    pub(super) fn oci_chart(
        &self,
        repo: &str,
        chart: &str,
        version: &str,
    ) -> Result<Fetched, FetchError> {
        let (base, host, name) = self.oci_base(repo, chart)?;
        // By convention a `+` of a version is `_` in a tag.
        let tag = version.replace('+', "_");
        let url = format!("{base}/manifests/{tag}");
        let r = self.oci_get(
            &url,
            &host,
            Some("application/vnd.oci.image.manifest.v1+json"),
            MAX_INDEX_BYTES,
            false,
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
        // The layer's digest is pinned by the manifest: a registry may
        // serve the blob from its storage on another host.
        let r = self.oci_get(&blob, &host, None, MAX_ARCHIVE_BYTES, true)?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oci_urls_are_told_as_argo_cd_tells_them() {
        assert!(is_oci("oci://ghcr.io/org/charts"));
        assert!(is_oci("ghcr.io/org/charts"));
        assert!(!is_oci("https://charts.example"));
    }

    #[test]
    fn challenges_are_read() {
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
    }
}
