//! Requests within the run's bounds: HTTPS unless the configuration names
//! the `http://` URL, redirects to the same host only (an archive with a
//! pinned digest excepted), bounded time, bytes and requests.

use base64::Engine as _;

use super::{FetchError, Fetcher, MAX_REDIRECTS, MAX_REQUESTS, MAX_RUN_BYTES};

#[derive(Debug, Default)]
pub(super) struct Budget {
    pub(super) requests: usize,
    pub(super) bytes: u64,
}

/// The host (with port) of an `http(s)://` URL.
pub(super) fn host_of(url: &str) -> Option<&str> {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = &rest[..end];
    // Credentials in a URL are not taken.
    (!host.is_empty() && !host.contains('@')).then_some(host)
}

/// One response, read whole within its bound.
pub(super) struct Reply {
    pub(super) status: u16,
    pub(super) body: Vec<u8>,
    headers: Vec<(String, String)>,
}

impl Reply {
    pub(super) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Authorization to send with a request, for its host only.
#[derive(Clone)]
pub(super) enum Auth {
    None,
    Basic(String, String),
    Bearer(String),
}

impl Fetcher {
    /// Whether `url` may be requested: HTTPS, or an `http://` URL under
    /// one the configuration names.
    pub(super) fn scheme_allowed(&self, url: &str) -> bool {
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
    pub(super) fn get(
        &self,
        url: &str,
        auth: &Auth,
        accept: Option<&str>,
        limit: u64,
    ) -> Result<Reply, FetchError> {
        self.get_following(url, auth, accept, limit, false)
    }

    /// [`Fetcher::get`] for an archive whose digest a trusted index or
    /// manifest pins (the caller verifies it): a redirect to another host
    /// is followed too, as a Helm repository's index pointing at release
    /// assets or a registry's blob store needs, without credentials from
    /// there on, within the same bounds. What comes back is used only if
    /// its digest is the pinned one, so the other host can serve nothing
    /// else.
    pub(super) fn get_pinned(
        &self,
        url: &str,
        auth: &Auth,
        accept: Option<&str>,
        limit: u64,
    ) -> Result<Reply, FetchError> {
        self.get_following(url, auth, accept, limit, true)
    }

    fn get_following(
        &self,
        url: &str,
        auth: &Auth,
        accept: Option<&str>,
        limit: u64,
        pinned: bool,
    ) -> Result<Reply, FetchError> {
        let mut url = url.to_string();
        // Credentials go to the host they are for, never past a redirect
        // to another.
        let mut send_auth = true;
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
                _ if !send_auth => {}
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
                    if !pinned {
                        return Err(FetchError::Refused(format!(
                            "`{url}` redirects to another host (`{}`): gitops-lint follows redirects to the same host only, except for an archive whose digest a trusted index or manifest pins",
                            host_of(&next).unwrap_or(&next)
                        )));
                    }
                    send_auth = false;
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

pub(super) fn check_status(r: &Reply, url: &str, what: &str) -> Result<(), FetchError> {
    match r.status {
        200 => Ok(()),
        401 | 403 => Err(FetchError::Failed(format!(
            "`{url}` ({what}) answered {}: it needs credentials gitops-lint does not have (Helm's repositories.yaml, or the registry config.json)",
            r.status
        ))),
        s => Err(FetchError::Failed(format!("`{url}` ({what}) answered {s}"))),
    }
}

/// `reference` resolved against `base` (helm `repo.ResolveReferenceURL`
/// for an index's `urls`; RFC 3986 for a `Location`): absolute URLs as
/// they are, `/path` on the base's host, else relative to its directory.
pub(super) fn join_url(base: &str, reference: &str) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
