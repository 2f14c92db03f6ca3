//! Builders for rule unit tests: apps and inventories from JSON values.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::argocd::{App, AppSpec, AppStatus, Inventory};
use crate::config::Config;
use crate::finding::Finding;
use crate::manifest::{manifest_from_value, Origin, Scopes};
use crate::rules::{Rule, RuleContext};

/// An Application named `name` with extra `spec` fields merged in.
pub(crate) fn application(name: &str, extra_spec: Value, finalizer: bool) -> Value {
    let mut spec = json!({"destination": {"namespace": "ns", "server": "https://kubernetes.default.svc"},
        "source": {"repoURL": "https://example.com/repo.git", "path": name}});
    if let (Some(s), Some(e)) = (spec.as_object_mut(), extra_spec.as_object()) {
        for (k, v) in e {
            s.insert(k.clone(), v.clone());
        }
    }
    let mut obj = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
        "metadata": {"name": name, "namespace": "argocd"}, "spec": spec});
    if finalizer {
        obj["metadata"]["finalizers"] = json!(["resources-finalizer.argocd.argoproj.io"]);
    }
    obj
}

/// A rendered app with these resources (namespace defaults to `ns`).
pub(crate) fn app(obj: Value, resources: Vec<Value>) -> App {
    let spec = AppSpec::parse(&obj).expect("an Application");
    App {
        key: format!("argocd/{}", spec.name),
        instance: None,
        spec: std::sync::Arc::new(spec),
        object: Arc::new(obj.into()),
        origin: Origin::default(),
        manager: None,
        status: AppStatus::Rendered,
        resources: resources
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let origin = Origin {
                    file: Some("app.yaml".into()),
                    line: Some(u32::try_from(i).unwrap_or(0) * 10 + 1),
                    doc_index: Some(i),
                };
                manifest_from_value(v, origin, "ns", &Scopes::default()).expect("valid object")
            })
            .collect(),
        inputs: std::sync::Arc::default(),
        source_types: Vec::new(),
        plugins: Vec::new(),
        implicit: false,
    }
}

/// An inventory of these apps.
pub(crate) fn inventory(apps: Vec<App>) -> Inventory {
    let mut inv = Inventory::default();
    for a in apps {
        inv.apps.insert(a.key.clone(), a);
    }
    inv
}

/// Runs one single-revision rule over `inv` as `check` does.
pub(crate) fn check(rule: &dyn Rule, inv: &Inventory, config: &Config) -> Vec<Finding> {
    let cx = RuleContext {
        plan: None,
        base: None,
        head: inv,
        config,
        only_changed: false,
        head_config: None,
    };
    let mut out = Vec::new();
    rule.check(&cx, &mut out);
    out
}

/// The messages of findings.
pub(crate) fn messages(f: &[Finding]) -> Vec<String> {
    f.iter().map(|f| f.message.clone()).collect()
}
