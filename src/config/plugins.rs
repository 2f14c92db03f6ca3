//! `plugins:` of the configuration: config-management plugins by the name
//! Applications give them, each mapped to the native renderer it stands
//! for (docs/plugins.md).

use serde_json::Value;

use super::check::Checker;

const PLUGIN_KEYS: &[&str] = &["discover", "kustomize", "helm", "directory", "envsubst"];
const PLUGIN_DISCOVER_KEYS: &[&str] = &["fileName", "find"];
const PLUGIN_FIND_KEYS: &[&str] = &["glob", "command", "args"];
const PLUGIN_KUSTOMIZE_KEYS: &[&str] = &["buildOptions"];
/// The `helm` keys of an Application source a plugin mapping may set.
const PLUGIN_HELM_KEYS: &[&str] = &[
    "valueFiles",
    "values",
    "valuesObject",
    "parameters",
    "fileParameters",
    "releaseName",
    "namespace",
    "ignoreMissingValueFiles",
    "passCredentials",
    "skipCrds",
    "skipSchemaValidation",
    "skipTests",
    "kubeVersion",
    "apiVersions",
];
/// The `directory` keys of an Application source a plugin mapping may set.
const PLUGIN_DIRECTORY_KEYS: &[&str] = &["recurse", "include", "exclude"];

/// `plugins:`, every problem reported with its line.
pub(super) fn plugins(c: &mut Checker<'_>, v: &Value) -> crate::render::plugin::Plugins {
    use crate::render::plugin::{Discover, PluginConfig, PluginRenderer, Plugins};
    let Some(map) = v.as_object() else {
        c.at(
            &["plugins"],
            "plugins must be a mapping from plugin name to `{kustomize: ...}`, `{helm: ...}` or `{directory: ...}`".to_string(),
        );
        return Plugins::default();
    };
    let mut out = Vec::new();
    for (name, p) in map {
        let path = ["plugins", name.as_str()];
        if p.is_null() {
            out.push(PluginConfig {
                name: name.clone(),
                discover: None,
                renderer: None,
                declared_in: None,
                envsubst: None,
            });
            continue;
        }
        c.keys(&path, p, PLUGIN_KEYS);
        let Some(p) = p.as_object() else { continue };
        let discover = p.get("discover").filter(|d| !d.is_null()).and_then(|d| {
            let dpath = ["plugins", name.as_str(), "discover"];
            c.keys(&dpath, d, PLUGIN_DISCOVER_KEYS);
            if let Some(f) = d.get("fileName").filter(|f| !f.is_null()) {
                return match f.as_str().filter(|s| !s.is_empty()) {
                    Some(s) => Some(Discover::FileName(s.to_string())),
                    None => {
                        c.at(&dpath, format!("plugins.{name}.discover.fileName must be a glob string"));
                        None
                    }
                };
            }
            let find = d.get("find").filter(|f| !f.is_null())?;
            let fpath = ["plugins", name.as_str(), "discover", "find"];
            c.keys(&fpath, find, PLUGIN_FIND_KEYS);
            if find.get("command").is_some() || find.get("args").is_some() {
                c.at(
                    &fpath,
                    format!("plugins.{name}.discover.find.command runs a command, which gitops-lint cannot do: give `find.glob` or `fileName` with the same effect, or leave `discover` out and name the plugin in the Applications (`plugin.name`)"),
                );
                return None;
            }
            match find.get("glob").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                Some(g) => match gotemplate::go::glob::go::Doublestar::new(g) {
                    Ok(_) => Some(Discover::FindGlob(g.to_string())),
                    Err(e) => {
                        c.at(&fpath, format!("plugins.{name}.discover.find.glob: {e}"));
                        None
                    }
                },
                None => {
                    c.at(&fpath, format!("plugins.{name}.discover.find needs a `glob` string"));
                    None
                }
            }
        });
        let set: Vec<&str> = ["kustomize", "helm", "directory"]
            .into_iter()
            .filter(|k| p.get(*k).is_some_and(|v| !v.is_null()))
            .collect();
        if set.len() > 1 {
            c.at(
                &path,
                format!(
                    "plugins.{name} maps to more than one renderer ({}): give one",
                    set.join(", ")
                ),
            );
        }
        let renderer = match set.first().copied() {
            Some("kustomize") => {
                let k = &p["kustomize"];
                c.keys(
                    &["plugins", name.as_str(), "kustomize"],
                    k,
                    PLUGIN_KUSTOMIZE_KEYS,
                );
                match k.get("buildOptions").filter(|b| !b.is_null()) {
                    None => Some(PluginRenderer::Kustomize {
                        build_options: String::new(),
                    }),
                    Some(Value::String(b)) => Some(PluginRenderer::Kustomize {
                        build_options: b.trim().to_string(),
                    }),
                    Some(_) => {
                        c.at(
                            &["plugins", name.as_str(), "kustomize", "buildOptions"],
                            format!("plugins.{name}.kustomize.buildOptions must be a string, as in argocd-cm (`--enable-helm`)"),
                        );
                        None
                    }
                }
            }
            Some("helm") => {
                let h = &p["helm"];
                c.keys(&["plugins", name.as_str(), "helm"], h, PLUGIN_HELM_KEYS);
                h.is_object().then(|| PluginRenderer::Helm(h.clone()))
            }
            Some("directory") => {
                let d = &p["directory"];
                c.keys(
                    &["plugins", name.as_str(), "directory"],
                    d,
                    PLUGIN_DIRECTORY_KEYS,
                );
                d.is_object().then(|| PluginRenderer::Directory(d.clone()))
            }
            _ => None,
        };
        let envsubst = plugin_envsubst(c, name, p.get("envsubst"), renderer.is_some());
        out.push(PluginConfig {
            name: name.clone(),
            discover,
            renderer,
            declared_in: None,
            envsubst,
        });
    }
    Plugins::new(out)
}

/// `plugins.NAME.envsubst`: `true` for `envsubst` alone, or the names of
/// its SHELL-FORMAT (`[ARGOCD_ENV_SIZE, PARAM_TIER]`, `$` optional).
fn plugin_envsubst(
    c: &mut Checker<'_>,
    name: &str,
    v: Option<&Value>,
    has_renderer: bool,
) -> Option<crate::render::plugin_env::Envsubst> {
    use crate::render::plugin_env::Envsubst;
    let path = ["plugins", name, "envsubst"];
    let how = match v? {
        Value::Null | Value::Bool(false) => return None,
        Value::Bool(true) => Envsubst::All,
        Value::Array(a) => {
            let names: Option<Vec<String>> = a
                .iter()
                .map(|n| {
                    let n = n.as_str()?.trim_start_matches('$');
                    let n = n
                        .strip_prefix('{')
                        .and_then(|x| x.strip_suffix('}'))
                        .unwrap_or(n);
                    let ok = n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                        && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                    ok.then(|| n.to_string())
                })
                .collect();
            match names {
                Some(n) if !n.is_empty() => Envsubst::Only(n),
                _ => {
                    c.at(&path, format!("plugins.{name}.envsubst must be `true` or a list of variable names (`[ARGOCD_ENV_SIZE]`), as `envsubst '$ARGOCD_ENV_SIZE'` takes them"));
                    return None;
                }
            }
        }
        _ => {
            c.at(&path, format!("plugins.{name}.envsubst must be `true` or a list of variable names (`[ARGOCD_ENV_SIZE]`), as `envsubst '$ARGOCD_ENV_SIZE'` takes them"));
            return None;
        }
    };
    if !has_renderer {
        c.at(&path, format!("plugins.{name}.envsubst applies to a renderer's output: give `kustomize`, `helm` or `directory` too"));
        return None;
    }
    Some(how)
}
