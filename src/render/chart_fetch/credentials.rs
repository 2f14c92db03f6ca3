//! Credentials as Helm users keep them: `repositories.yaml` for Helm
//! repositories, the registry `config.json` files for OCI registries.

use std::collections::BTreeMap;
use std::path::PathBuf;

use base64::Engine as _;
use serde_json::Value;

use super::{read_small, trim_url};

/// Credentials as Helm users keep them. Never printed.
#[derive(Clone, Default)]
pub struct Credentials {
    /// Helm repository URL (no trailing `/`) → (username, password).
    pub(super) repos: BTreeMap<String, (String, String)>,
    /// Registry host → (username, password).
    pub(super) registries: BTreeMap<String, (String, String)>,
    /// `repositories[].{name,url}` in file order: what a dependency's
    /// `@name` or `alias:name` refers to.
    pub(super) names: Vec<(String, String)>,
    /// Registry hosts a `config.json` leaves to a credential helper
    /// (`credHelpers.<host>`, or every host with `credsStore`): helpers are
    /// not run, and a refusal from such a host says so.
    pub(super) helpers: Vec<String>,
    /// A `config.json` names a `credsStore` for every host.
    pub(super) store_helper: bool,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("repos", &self.repos.len())
            .field("registries", &self.registries.len())
            .field("names", &self.names.len())
            .field("helpers", &self.helpers.len())
            .field("store_helper", &self.store_helper)
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

    /// Whether the registry `config.json` leaves `host` to a credential
    /// helper, which gitops-lint does not run.
    pub(super) fn helper_for(&self, host: &str) -> bool {
        self.store_helper || self.helpers.iter().any(|h| h == host)
    }

    /// The URL of the repository `repositories.yaml` calls `name`: the
    /// first so named, as helm `pkg/downloader/manager.go`
    /// `Manager.resolveRepoNames` takes it.
    pub(super) fn named(&self, name: &str) -> Option<&str> {
        self.names
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, u)| u.as_str())
    }

    /// Helm's `repositories.yaml`: `repositories[].{name,url,username,password}`.
    fn read_repositories_yaml(&mut self, text: &str) {
        let Ok(v) = goyaml::parse_first_doc(text) else {
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
            let name = s("name");
            if !name.is_empty() && !url.is_empty() {
                self.names.push((name, trim_url(&url).to_string()));
            }
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
        if v.get("credsStore")
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
        {
            self.store_helper = true;
        }
        for host in v
            .get("credHelpers")
            .and_then(Value::as_object)
            .into_iter()
            .flat_map(|m| m.keys())
        {
            self.helpers.push(registry_host(host));
        }
        let Some(auths) = v.get("auths").and_then(Value::as_object) else {
            return;
        };
        for (host, a) in auths {
            let host = registry_host(host);
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

/// A registry `config.json` key as a host: no scheme, no trailing `/`.
fn registry_host(key: &str) -> String {
    key.trim_start_matches("https://")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repository_names_are_read_in_file_order() {
        let mut c = Credentials::default();
        c.read_repositories_yaml(
            "repositories:\n- name: a\n  url: https://one.example/charts/\n- name: b\n  url: https://two.example\n- name: a\n  url: https://three.example\n- url: https://nameless.example\n",
        );
        assert_eq!(c.named("a"), Some("https://one.example/charts"));
        assert_eq!(c.named("b"), Some("https://two.example"));
        assert_eq!(c.named("c"), None);
    }

    #[test]
    fn credential_helpers_are_noticed_not_run() {
        let mut c = Credentials::default();
        c.read_registry_config(r#"{"credHelpers":{"https://ecr.example/":"ecr-login"}}"#);
        assert!(c.helper_for("ecr.example"));
        assert!(!c.helper_for("ghcr.io"));
        c.read_registry_config(r#"{"credsStore":"desktop"}"#);
        assert!(c.helper_for("ghcr.io"));
        assert!(c.registries.is_empty());
    }

    #[test]
    fn credentials_are_read_and_never_printed() {
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
