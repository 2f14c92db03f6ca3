//! `envsubst` over a mapped plugin's output, with the environment Argo CD
//! gives the plugin's command.
//!
//! A common plugin is `kustomize build . | envsubst` (or `helm template`
//! piped the same way): its output is the native renderer's with `$NAME`
//! and `${NAME}` replaced from the command's environment. Argo CD builds
//! that environment (argo-cd `reposerver/repository/repository.go`
//! `runConfigManagementPluginSidecars` → `getPluginEnvs` →
//! `getPluginParamEnvs`) from:
//!
//! - the build environment (`newEnv`): `ARGOCD_APP_NAME`,
//!   `ARGOCD_APP_NAMESPACE`, `ARGOCD_APP_PROJECT_NAME`,
//!   `ARGOCD_APP_REVISION`, `ARGOCD_APP_REVISION_SHORT`,
//!   `ARGOCD_APP_REVISION_SHORT_8`, `ARGOCD_APP_SOURCE_REPO_URL`,
//!   `ARGOCD_APP_SOURCE_PATH`, `ARGOCD_APP_SOURCE_TARGET_REVISION`, then
//!   `KUBE_VERSION` and `KUBE_API_VERSIONS`;
//! - each `plugin.env` entry as `ARGOCD_ENV_<name>`, its value expanded
//!   over that environment (`Env.Envsubst`, Go's `os.Expand`);
//! - the parameters (`pkg/apis/application/v1alpha1`
//!   `ApplicationSourcePluginParameters.Environ`): `ARGOCD_APP_PARAMETERS`
//!   (their JSON), `PARAM_<NAME>` for a string, `PARAM_<NAME>_<KEY>` for
//!   each map entry and `PARAM_<NAME>_<i>` for each array item, names
//!   upper-cased with anything outside `[A-Z0-9_]` made `_` (`escaped`).
//!
//! Nothing else is set here: the sidecar's own environment is not known,
//! and a name Argo CD does not set expands as `envsubst` expands an unset
//! variable, to nothing. The revision variables name the commit rendered,
//! and `KUBE_VERSION`/`KUBE_API_VERSIONS` the cluster: output that uses
//! them is not judged (the app is GL000) rather than rendered with a value
//! Argo CD would not give.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use super::{RenderError, Scopes, SourceSpec};
use crate::manifest::{resource_id_of, Manifest};

/// `envsubst` as a plugin's command runs it over the renderer's output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Envsubst {
    /// `envsubst` alone: every `$NAME` and `${NAME}`.
    All,
    /// `envsubst '$A ${B}'`: only the names of its SHELL-FORMAT.
    Only(Vec<String>),
}

impl Envsubst {
    /// How the report names it.
    #[must_use]
    pub(crate) fn describe(&self) -> String {
        match self {
            Envsubst::All => "`envsubst`".to_string(),
            Envsubst::Only(names) => {
                let list: Vec<String> = names.iter().map(|n| format!("${n}")).collect();
                format!("`envsubst '{}'`", list.join(" "))
            }
        }
    }
}

/// Variables Argo CD sets whose value gitops-lint does not have.
const NOT_KNOWN_HERE: [&str; 5] = [
    "ARGOCD_APP_REVISION",
    "ARGOCD_APP_REVISION_SHORT",
    "ARGOCD_APP_REVISION_SHORT_8",
    "KUBE_VERSION",
    "KUBE_API_VERSIONS",
];

/// The environment of the plugin command of `spec` (the Application's
/// source, its `plugin` block still set), later entries winning as in a
/// process environment.
pub(crate) fn plugin_environment(spec: &SourceSpec) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> = spec.env.iter().cloned().collect();
    let build: Vec<(String, String)> = spec.env.clone();
    let plugin = spec.plugin.as_ref();
    for e in plugin
        .and_then(|p| p.get("env"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let name = e.get("name").and_then(Value::as_str).unwrap_or_default();
        let value = e.get("value").and_then(Value::as_str).unwrap_or_default();
        if name.is_empty() {
            continue;
        }
        env.insert(
            format!("ARGOCD_ENV_{name}"),
            super::helm::envsubst(value, &build),
        );
    }
    let params: Vec<&Value> = plugin
        .and_then(|p| p.get("parameters"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    if plugin.is_some() {
        env.insert(
            "ARGOCD_APP_PARAMETERS".to_string(),
            parameters_json(&params),
        );
    }
    for p in params {
        let base = format!(
            "PARAM_{}",
            escaped(p.get("name").and_then(Value::as_str).unwrap_or_default())
        );
        if let Some(s) = p.get("string").and_then(Value::as_str) {
            env.insert(base.clone(), s.to_string());
        }
        if let Some(m) = p.get("map").and_then(Value::as_object) {
            for (k, v) in m {
                env.insert(
                    format!("{base}_{}", escaped(k)),
                    v.as_str().unwrap_or_default().to_string(),
                );
            }
        }
        if let Some(a) = p.get("array").and_then(Value::as_array) {
            for (i, v) in a.iter().enumerate() {
                env.insert(
                    format!("{base}_{i}"),
                    v.as_str().unwrap_or_default().to_string(),
                );
            }
        }
    }
    env
}

/// `ApplicationSourcePluginParameters` as Go's `json.Marshal` writes them
/// (`MarshalJSON`: `name`, and `string`, `map`, `array` when set; keys
/// sorted).
fn parameters_json(params: &[&Value]) -> String {
    let list: Vec<Value> = params
        .iter()
        .map(|p| {
            let mut out = serde_json::Map::new();
            out.insert(
                "name".to_string(),
                p.get("name")
                    .cloned()
                    .unwrap_or(Value::String(String::new())),
            );
            for k in ["string", "map", "array"] {
                if let Some(v) = p.get(k).filter(|v| !v.is_null()) {
                    out.insert(k.to_string(), v.clone());
                }
            }
            Value::Object(out)
        })
        .collect();
    super::kustomize::gojson::marshal(&Value::Array(list))
}

/// `escaped`: upper-cased, anything outside `[A-Z0-9_]` made `_`.
fn escaped(name: &str) -> String {
    name.to_uppercase()
        .chars()
        .map(|c| {
            if c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// GNU gettext `envsubst` over `text`: `$NAME` and `${NAME}` (a name is
/// `[A-Za-z_][A-Za-z0-9_]*`) are replaced by their value, or by nothing
/// when unset; with a SHELL-FORMAT (`only`) a name outside it stays as
/// written. A `$` not starting a name, and `${NAME` without its `}`, stay.
/// Returns the text and the names replaced.
fn gnu_envsubst<'t>(
    text: &'t str,
    env: &BTreeMap<String, String>,
    only: Option<&[String]>,
) -> (std::borrow::Cow<'t, str>, Vec<String>) {
    if !text.contains('$') {
        return (std::borrow::Cow::Borrowed(text), Vec::new());
    }
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut used = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'$' {
            let next = text[i..].find('$').map_or(b.len(), |n| i + n);
            out.push_str(&text[i..next]);
            i = next;
            continue;
        }
        let brace = b.get(i + 1) == Some(&b'{');
        let start = i + 1 + usize::from(brace);
        let starts_name = b
            .get(start)
            .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_');
        if !starts_name {
            out.push('$');
            i += 1;
            continue;
        }
        let mut end = start;
        while b
            .get(end)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
        {
            end += 1;
        }
        let name = &text[start..end];
        let whole_end = if brace {
            if b.get(end) != Some(&b'}') {
                out.push_str(&text[i..end]);
                i = end;
                continue;
            }
            end + 1
        } else {
            end
        };
        if only.is_some_and(|names| !names.iter().any(|n| n == name)) {
            out.push_str(&text[i..whole_end]);
        } else {
            if let Some(v) = env.get(name) {
                out.push_str(v);
            }
            used.push(name.to_string());
        }
        i = whole_end;
    }
    (std::borrow::Cow::Owned(out), used)
}

/// Every string (and mapping key) of `v` through [`gnu_envsubst`].
fn substitute_value(
    v: &mut Value,
    env: &BTreeMap<String, String>,
    only: Option<&[String]>,
    used: &mut Vec<String>,
) {
    match v {
        Value::String(s) => {
            let (new, names) = gnu_envsubst(s, env, only);
            if let std::borrow::Cow::Owned(n) = new {
                *s = n;
            }
            used.extend(names);
        }
        Value::Array(a) => {
            for x in a {
                substitute_value(x, env, only, used);
            }
        }
        Value::Object(m) => {
            let old = std::mem::take(m);
            for (k, mut x) in old {
                substitute_value(&mut x, env, only, used);
                let (key, names) = gnu_envsubst(&k, env, only);
                used.extend(names);
                m.insert(key.into_owned(), x);
            }
        }
        _ => {}
    }
}

/// The plugin's output: `manifests` (the mapped renderer's) through
/// `envsubst`, each resource's identity taken again (a substituted name is
/// its name).
///
/// # Errors
/// Output using a variable whose value only Argo CD has (module doc), or
/// a resource that is no longer one.
pub(crate) fn apply(
    manifests: Vec<Manifest>,
    how: &Envsubst,
    env: &BTreeMap<String, String>,
    spec: &SourceSpec,
    scopes: &Scopes,
) -> Result<Vec<Manifest>, RenderError> {
    let only = match how {
        Envsubst::All => None,
        Envsubst::Only(names) => Some(names.as_slice()),
    };
    let mut out = Vec::with_capacity(manifests.len());
    for m in manifests {
        let mut value: Value = Value::clone(&m.value);
        let mut used = Vec::new();
        substitute_value(&mut value, env, only, &mut used);
        if let Some(name) = used.iter().find(|n| NOT_KNOWN_HERE.contains(&n.as_str())) {
            return Err(RenderError::unsupported(format!(
                "`{}`: its plugin's `envsubst` fills `${name}` into `{}`, a value Argo CD takes from the commit or the cluster it renders for, which gitops-lint does not judge",
                spec.app_name, m.id
            )));
        }
        let value = Arc::new(super::LazyValue::from(value));
        let id = resource_id_of(&value, &spec.namespace, scopes).map_err(|e| {
            RenderError::content(format!(
                "`{}`: after its plugin's `envsubst`: {e}",
                spec.app_name
            ))
        })?;
        let mut next = Manifest::shared(id, value, m.origin);
        next.generated = m.generated;
        out.push(next);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
            .collect()
    }

    #[test]
    fn envsubst_is_gnu_envsubst() {
        let e = env(&[("A", "x"), ("B_2", "y")]);
        let s = |t: &str| gnu_envsubst(t, &e, None).0.into_owned();
        assert_eq!(s("$A-${B_2}"), "x-y");
        // Unset: nothing. Not a name: as written.
        assert_eq!(s("a$UNSET.b"), "a.b");
        assert_eq!(s("5$ and $1 and $$"), "5$ and $1 and $$");
        // An unclosed brace stays as written.
        assert_eq!(s("${A"), "${A");
        assert_eq!(s("${A:-d}"), "${A:-d}");
        let only = ["A".to_string()];
        assert_eq!(gnu_envsubst("$A $B_2", &e, Some(&only)).0, "x $B_2");
    }

    #[test]
    fn the_plugin_environment_is_argo_cds() {
        let spec = SourceSpec {
            env: vec![("ARGOCD_APP_NAME".into(), "db".into())],
            plugin: Some(serde_json::json!({
                "name": "p",
                "env": [{"name": "SIZE", "value": "for-$ARGOCD_APP_NAME"}],
                "parameters": [
                    {"name": "tier-name", "string": "gold"},
                    {"name": "labels", "map": {"team-a": "x"}},
                    {"name": "zones", "array": ["a", "b"]},
                ],
            })),
            ..SourceSpec::default()
        };
        let e = plugin_environment(&spec);
        let get = |k: &str| e.get(k).map(String::as_str);
        assert_eq!(get("ARGOCD_ENV_SIZE"), Some("for-db"));
        assert_eq!(get("PARAM_TIER_NAME"), Some("gold"));
        assert_eq!(get("PARAM_LABELS_TEAM_A"), Some("x"));
        assert_eq!(get("PARAM_ZONES_1"), Some("b"));
        assert_eq!(
            get("ARGOCD_APP_PARAMETERS"),
            Some(
                r#"[{"name":"tier-name","string":"gold"},{"map":{"team-a":"x"},"name":"labels"},{"array":["a","b"],"name":"zones"}]"#
            )
        );
        // Only what Argo CD sets.
        assert_eq!(get("SIZE"), None);
        assert_eq!(get("HOME"), None);
    }
}
