//! The `helm` options of an Argo CD source (`spec.source.helm`), as
//! `helm template` flags: parameters, release name, value files.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{invalid_release_name, valid_release_name};
use crate::render::{RenderError, SourceSpec};

/// The Helm options of a source, as Argo CD reads them.
#[derive(Debug, Default)]
#[allow(clippy::struct_excessive_bools)] // Argo CD's boolean Helm options
pub(super) struct Options {
    pub(super) release: String,
    pub(super) namespace: String,
    pub(super) kube_version: Option<String>,
    pub(super) api_versions: Vec<String>,
    pub(super) value_files: Vec<String>,
    pub(super) ignore_missing_value_files: bool,
    /// `values` / `valuesObject` as YAML, passed last.
    pub(super) extra_values: Option<String>,
    /// `--set`, by name (a later duplicate wins, as in Argo CD's map).
    pub(super) set: BTreeMap<String, String>,
    pub(super) set_string: BTreeMap<String, String>,
    pub(super) file_parameters: BTreeMap<String, String>,
    pub(super) skip_crds: bool,
    pub(super) skip_schema_validation: bool,
    pub(super) skip_tests: bool,
}

impl Options {
    pub(super) fn parse(spec: &SourceSpec) -> Result<Options, RenderError> {
        let h = spec.helm.clone().unwrap_or(Value::Null);
        let k = spec.kustomize.clone().unwrap_or(Value::Null);
        let s = |v: &Value, key: &str| {
            v.get(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        let b = |key: &str| h.get(key).and_then(Value::as_bool).unwrap_or(false);
        let strings =
            |v: &Value, key: &str| -> Vec<String> { crate::manifest::strings(v.get(key)) };
        // `releaseName`, else the app name (AC `helmTemplate`).
        let release = s(&h, "releaseName").unwrap_or_else(|| spec.app_name.clone());
        if !valid_release_name(&release) {
            return Err(RenderError::content(invalid_release_name(&release)));
        }
        // `helm.namespace`, else `kustomize.namespace`, else the destination
        // (AC `ApplicationSource.GetNamespaceOrDefault`).
        let namespace = s(&h, "namespace")
            .or_else(|| s(&k, "namespace"))
            .unwrap_or_else(|| spec.namespace.clone());
        // `helm.kubeVersion`, else `kustomize.kubeVersion`, else the
        // cluster's, which is not known offline: helm's default then
        // (AC `GetKubeVersionOrDefault`).
        let kube_version = s(&h, "kubeVersion")
            .or_else(|| s(&k, "kubeVersion"))
            .map(|v| v.replace('+', ""));
        let api_versions = match strings(&h, "apiVersions") {
            v if v.is_empty() => strings(&k, "apiVersions"),
            v => v,
        };
        // `valuesObject` wins over `values`, which is a YAML string or an
        // object (AC `ApplicationSourceHelm.ValuesYAML`).
        let extra_values = match (h.get("valuesObject"), h.get("values")) {
            (Some(v @ Value::Object(_)), _) | (_, Some(v @ Value::Object(_))) => {
                Some(v.to_string())
            }
            (_, Some(Value::String(v))) if !v.trim().is_empty() => Some(v.clone()),
            _ => None,
        };
        let mut set = BTreeMap::new();
        let mut set_string = BTreeMap::new();
        for p in h
            .get("parameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = s(p, "name").unwrap_or_default();
            let value = scalar_text(p.get("value"));
            if p.get("forceString").and_then(Value::as_bool) == Some(true) {
                set_string.insert(name, value);
            } else {
                set.insert(name, value);
            }
        }
        let mut file_parameters = BTreeMap::new();
        for p in h
            .get("fileParameters")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            file_parameters.insert(
                s(p, "name").unwrap_or_default(),
                s(p, "path").unwrap_or_default(),
            );
        }
        for name in set
            .keys()
            .chain(set_string.keys())
            .chain(file_parameters.keys())
        {
            // `=` would end the name inside helm's `--set` syntax.
            if name.is_empty() || name.contains('=') {
                return Err(RenderError::content(format!(
                    "Helm parameter name `{name}` is empty or holds `=`"
                )));
            }
        }
        Ok(Options {
            release,
            namespace,
            kube_version,
            api_versions,
            value_files: strings(&h, "valueFiles"),
            ignore_missing_value_files: b("ignoreMissingValueFiles"),
            extra_values,
            set,
            set_string,
            file_parameters,
            skip_crds: b("skipCrds"),
            skip_schema_validation: b("skipSchemaValidation"),
            skip_tests: b("skipTests"),
        })
    }
}

/// A parameter value as the Application's Go struct holds it (a string).
fn scalar_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// `cleanSetParameters` (AC `util/helm/cmd.go`): commas not already escaped
/// are escaped, unless the value is a `{…}` list literal.
pub(super) fn clean_set_parameter(v: &str) -> String {
    if v.starts_with('{') && v.ends_with('}') {
        return v.to_string();
    }
    let mut out = String::with_capacity(v.len());
    let mut prev = '\0';
    for c in v.chars() {
        if c == ',' && prev != '\\' {
            out.push_str("\\,");
        } else {
            out.push(c);
        }
        prev = c;
    }
    out
}

/// Go's `os.Expand` with Argo CD's build environment (AC
/// `pkg/apis/application/v1alpha1` `Env.Envsubst`): `$NAME` and `${NAME}`
/// are replaced, unknown names by "", and `$$` is `$`.
#[must_use]
pub(crate) fn envsubst(s: &str, env: &[(String, String)]) -> String {
    let lookup = |name: &str| -> String {
        if name == "$" {
            return "$".into();
        }
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .unwrap_or_default()
    };
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        if b[i] != b'$' || i + 1 >= b.len() {
            i += 1;
            continue;
        }
        out.push_str(&s[last..i]);
        let rest = &s[i + 1..];
        let (name, width) = shell_name(rest);
        if name.is_empty() && width == 0 {
            // `$` not followed by a name stays.
            out.push('$');
        } else if !name.is_empty() {
            out.push_str(&lookup(name));
        }
        i += 1 + width;
        last = i;
    }
    out.push_str(&s[last..]);
    out
}

/// Go's `getShellName`: the variable name after a `$` and how many bytes it
/// takes (a bad `${…}` takes bytes and names nothing).
fn shell_name(s: &str) -> (&str, usize) {
    let b = s.as_bytes();
    if b.first() == Some(&b'{') {
        if b.len() > 2 && is_shell_special(b[1]) && b[2] == b'}' {
            return (&s[1..2], 3);
        }
        for (i, &c) in b.iter().enumerate().skip(1) {
            if c == b'}' {
                if i == 1 {
                    return ("", 2);
                }
                return (&s[1..i], i + 1);
            }
        }
        return ("", 1);
    }
    if b.first().is_some_and(|&c| is_shell_special(c)) {
        return (&s[0..1], 1);
    }
    let n = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
        .count();
    (&s[..n], n)
}

fn is_shell_special(c: u8) -> bool {
    matches!(c, b'*' | b'#' | b'$' | b'@' | b'!' | b'?' | b'-') || c.is_ascii_digit()
}
