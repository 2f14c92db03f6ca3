//! GL008 wave-dependency-inversion: a resource in an earlier, health-gated
//! (phase, wave) that cannot become healthy until something of a later wave
//! exists, so the sync waits forever (or fails).

use goyaml::json::Pointer as _;
use serde_json::Value;
use std::cell::OnceCell;
use std::collections::HashMap;
use std::sync::Arc;

use super::analysis::generated::{self, GeneratedObject};
use super::analysis::podspec::{self, RefKind};
use super::analysis::sync_steps::{health_wait, HealthWait, Step, SyncSteps};
use super::analysis::{at_field, at_resource, rendered_apps};
use super::{Category, Mode, Rule, RuleContext, RuleMeta};
use crate::argocd::{App, Inventory};
use crate::config::{Checker, Config, RuleSettings, RuleSettingsSpec};
use crate::finding::Suppression;
use crate::finding::{Finding, Severity};
use crate::manifest::{HookType, Manifest, ANN_SYNC_WAVE};

/// See `rules/GL008-wave-dependency-inversion.md`.
pub(crate) struct WaveDependencyInversion;

static META: RuleMeta = RuleMeta {
    code: "GL008",
    name: "wave-dependency-inversion",
    category: Category::Ordering,
    default_severity: Severity::Error,
    severity_note: "",
    mode: Mode::Single,
    doc: include_str!("../../rules/GL008-wave-dependency-inversion.md"),
    suppression: Suppression::OBJECT,
};

/// One "needs" relation: `from` cannot finish until `to` exists and runs.
struct Edge<'a> {
    from: &'a Manifest,
    to: &'a Manifest,
    why: String,
    /// Whether the harm needs `from` to be health-gated (webhooks do not).
    gated: bool,
}

fn find<'a>(app: &'a App, group: &str, kind: &str, ns: &str, name: &str) -> Option<&'a Manifest> {
    app.resources.iter().find(|m| {
        m.id.group == group && m.id.kind == kind && m.id.namespace == ns && m.id.name == name
    })
}

fn image_names(m: &Manifest) -> Vec<String> {
    let Some(spec) = podspec::pod_spec(m) else {
        return Vec::new();
    };
    podspec::containers(spec)
        .filter_map(|c| c.get("image")?.as_str())
        .map(|i| {
            let no_digest = i.split('@').next().unwrap_or(i);
            match no_digest.rsplit_once(':') {
                Some((p, t)) if !t.contains('/') => p.to_string(),
                _ => no_digest.to_string(),
            }
        })
        .collect()
}

fn is_ingress_controller(m: &Manifest) -> bool {
    image_names(m).iter().any(|p| {
        let last = p.rsplit('/').next().unwrap_or(p);
        p.contains("ingress-nginx/controller")
            || matches!(
                last,
                "nginx-ingress-controller"
                    | "nginx-ingress"
                    | "traefik"
                    | "haproxy-ingress"
                    | "kubernetes-ingress"
                    | "kong"
                    | "kong-gateway"
                    | "contour"
                    | "aws-load-balancer-controller"
                    | "skipper"
                    | "emissary"
            )
    })
}

fn is_lb_provider(m: &Manifest) -> bool {
    match (m.id.group.as_str(), m.id.kind.as_str()) {
        ("metallb.io", "IPAddressPool" | "L2Advertisement" | "BGPAdvertisement")
        | ("cilium.io", "CiliumLoadBalancerIPPool") => return true,
        _ => {}
    }
    image_names(m).iter().any(|p| {
        p.contains("metallb/")
            || [
                "kube-vip",
                "kube-vip-cloud-provider",
                "aws-load-balancer-controller",
                "klipper-lb",
                "openelb",
                "purelb",
            ]
            .iter()
            .any(|n| p.rsplit('/').next() == Some(n))
    })
}

/// Workloads whose pods a Service selects.
fn selected<'a>(app: &'a App, svc: &Manifest) -> Vec<&'a Manifest> {
    let Some(sel) = svc.value.at("/spec/selector").and_then(Value::as_object) else {
        return Vec::new();
    };
    if sel.is_empty() {
        return Vec::new();
    }
    app.resources
        .iter()
        .filter(|m| {
            m.id.namespace == svc.id.namespace && m.id.kind != "CronJob" && m.id.kind != "Job"
        })
        .filter(|m| {
            podspec::pod_labels(m).is_some_and(|l| sel.iter().all(|(k, v)| l.get(k) == Some(v)))
        })
        .collect()
}

/// The storage classes rendered at head, as a search of every app in key
/// order meets them. Built once per check: looking every claim's class up
/// in every app's resources made a change to a base 10,000 apps share
/// cost 10,000 claims times 60,000 resources.
struct StorageClasses<'a> {
    /// The first class of each name.
    by_name: HashMap<&'a str, &'a Manifest>,
    /// The first class annotated as the cluster's default.
    default: Option<&'a Manifest>,
}

impl<'a> StorageClasses<'a> {
    fn of(head: &'a Inventory) -> Self {
        let mut by_name = HashMap::new();
        let mut default = None;
        let classes = head
            .apps
            .values()
            .flat_map(|a| a.resources.iter())
            .filter(|m| m.id.group == "storage.k8s.io" && m.id.kind == "StorageClass");
        for c in classes {
            by_name.entry(c.id.name.as_str()).or_insert(c);
            if default.is_none()
                && c.annotation("storageclass.kubernetes.io/is-default-class") == Some("true")
            {
                default = Some(c);
            }
        }
        StorageClasses { by_name, default }
    }
}

/// GL008's keys of `.gitops-lint.yaml`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct WaveSettings {
    /// `defaultStorageClassWaitForFirstConsumer`: the StorageClass assumed
    /// when a PVC names none binds on first consumer.
    default_storage_class_wait_for_first_consumer: bool,
    /// `generatedObjects`: custom resources from which a controller creates
    /// a core object, besides the built-in table.
    generated_objects: Vec<GeneratedObject>,
}

static SETTINGS: RuleSettingsSpec = RuleSettingsSpec {
    keys: &[
        "defaultStorageClassWaitForFirstConsumer",
        "generatedObjects",
    ],
    read: read_settings,
};

/// The kinds a workload can wait for that `generatedObjects` may create.
const GENERATED_KINDS: &[&str] = &[
    "Secret",
    "ConfigMap",
    "Service",
    "PersistentVolumeClaim",
    "ServiceAccount",
];
const GENERATED_KEYS: &[&str] = &["kind", "creates", "nameFrom"];

/// GL008's keys read, each problem reported.
fn read_settings(
    c: &mut Checker<'_>,
    file: &serde_json::Map<String, Value>,
) -> Arc<dyn RuleSettings> {
    let mut out = WaveSettings::default();
    let get = |k: &str| file.get(k).filter(|v| !v.is_null());
    if let Some(w) = c.boolean(
        &["defaultStorageClassWaitForFirstConsumer"],
        get("defaultStorageClassWaitForFirstConsumer"),
    ) {
        out.default_storage_class_wait_for_first_consumer = w;
    }
    match get("generatedObjects") {
        None => {}
        Some(Value::Array(items)) => {
            for item in items {
                c.keys(&["generatedObjects"], item, GENERATED_KEYS);
                let text = |k: &str| item.get(k).and_then(Value::as_str).map(str::to_string);
                let kind = text("kind").and_then(|k| {
                    k.split_once('/')
                        .map(|(g, k)| (g.to_string(), k.to_string()))
                        .filter(|(g, k)| !g.is_empty() && !k.is_empty() && !k.contains('/'))
                });
                let creates = text("creates").filter(|k| GENERATED_KINDS.contains(&k.as_str()));
                match (kind, creates) {
                    (Some((group, kind)), Some(creates)) => {
                        out.generated_objects.push(GeneratedObject {
                            group,
                            kind,
                            creates,
                            name_from: text("nameFrom")
                                .unwrap_or_else(|| "metadata.name".to_string()),
                        });
                    }
                    _ => c.at(
                        &["generatedObjects"],
                        format!(
                            "every entry of generatedObjects needs `kind: group/Kind` and `creates:` one of {}",
                            GENERATED_KINDS.join(", ")
                        ),
                    ),
                }
            }
        }
        Some(_) => c.at(
            &["generatedObjects"],
            "generatedObjects must be a list".to_string(),
        ),
    }
    Arc::new(out)
}

/// Whether a PVC binds only once a pod uses it.
fn waits_for_consumer(pvc: &Manifest, classes: &StorageClasses<'_>, config: &Config) -> bool {
    let v = pvc.value.as_ref();
    if v.at("/spec/volumeName")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
    {
        return false;
    }
    let class = v
        .at("/spec/storageClassName")
        .and_then(Value::as_str)
        .or_else(|| {
            v.at("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
                .and_then(Value::as_str)
        });
    let mode = |m: &Manifest| {
        m.value.at("/volumeBindingMode").and_then(Value::as_str) == Some("WaitForFirstConsumer")
    };
    match class {
        Some("") => false,
        Some(name) => classes.by_name.get(name).is_some_and(|c| mode(c)),
        None => match classes.default {
            Some(c) => mode(c),
            None => {
                config
                    .rule_settings::<WaveSettings>()
                    .default_storage_class_wait_for_first_consumer
            }
        },
    }
}

fn edges<'a, 'c>(
    app: &'a App,
    cx: &RuleContext<'c>,
    classes: &OnceCell<StorageClasses<'c>>,
) -> Vec<Edge<'a>> {
    let mut out = Vec::new();
    for m in app.resources.iter() {
        let ns = m.id.namespace.as_str();
        let hook = m.hook();
        // Scaled to zero, a workload is healthy without any pod.
        let scaled_to_zero = m.value.at("/spec/replicas").and_then(Value::as_i64) == Some(0);
        if let Some(spec) =
            podspec::pod_spec(m).filter(|_| health_wait(m).is_some() && !scaled_to_zero)
        {
            for r in podspec::references(spec) {
                if r.optional {
                    continue;
                }
                let rns = if r.kind.namespaced() { ns } else { "" };
                // Not in git, the object may be made by a controller from a
                // custom resource of the app (a SealedSecret's Secret): the
                // pods then wait for that resource.
                let (dep, maker) = match find(app, r.kind.group(), r.kind.kind(), rns, &r.name) {
                    Some(dep) => (dep, None),
                    None => match app.resources.iter().find(|c| {
                        r.kind.namespaced()
                            && c.id.namespace == ns
                            && generated::creates(
                                c,
                                &cx.config.rule_settings::<WaveSettings>().generated_objects,
                                r.kind.kind(),
                                &r.name,
                            )
                    }) {
                        Some(c) => (c, Some(c)),
                        None => continue,
                    },
                };
                // A PreSync hook waiting on Sync-phase objects is GL007's finding.
                if hook.types.contains(&HookType::PreSync)
                    && !dep.hook().is_hook
                    && r.kind != RefKind::PriorityClass
                {
                    continue;
                }
                let made_by = maker
                    .map(|c| format!(", made by the controller of `{}`", c.id))
                    .unwrap_or_default();
                let why = match r.kind {
                    RefKind::ConfigMap | RefKind::Secret => format!(
                        "its pods cannot start without {} `{}` ({}){made_by}",
                        r.kind.kind(),
                        r.name,
                        r.via
                    ),
                    RefKind::PersistentVolumeClaim => format!(
                        "its pods cannot be scheduled without PersistentVolumeClaim `{}`{made_by}",
                        r.name
                    ),
                    RefKind::ServiceAccount => format!(
                        "its pods are not created without ServiceAccount `{}`{made_by}",
                        r.name
                    ),
                    RefKind::PriorityClass => {
                        format!("its pods are rejected without PriorityClass `{}`", r.name)
                    }
                };
                out.push(Edge {
                    from: m,
                    to: dep,
                    why,
                    gated: true,
                });
            }
        }
        match (m.id.group.as_str(), m.id.kind.as_str()) {
            ("", "PersistentVolumeClaim")
                if waits_for_consumer(
                    m,
                    classes.get_or_init(|| StorageClasses::of(cx.head)),
                    cx.config,
                ) =>
            {
                for c in app
                    .resources
                    .iter()
                    .filter(|c| c.id.namespace == m.id.namespace)
                {
                    let Some(spec) = podspec::pod_spec(c) else {
                        continue;
                    };
                    if podspec::references(spec)
                        .iter()
                        .any(|r| r.kind == RefKind::PersistentVolumeClaim && r.name == m.id.name)
                    {
                        out.push(Edge {
                            from: m,
                            to: c,
                            why: format!("its StorageClass binds on first consumer, so it stays Pending until a pod of `{}` uses it", c.id),
                            gated: true,
                        });
                    }
                }
            }
            ("networking.k8s.io" | "extensions", "Ingress") => {
                for c in app.resources.iter().filter(|c| is_ingress_controller(c)) {
                    out.push(Edge {
                        from: m,
                        to: c,
                        why: format!(
                            "its status address is written by the ingress controller `{}`",
                            c.id
                        ),
                        gated: true,
                    });
                }
            }
            ("", "Service") if health_wait(m) == Some(HealthWait::LoadBalancer) => {
                for c in app.resources.iter().filter(|c| is_lb_provider(c)) {
                    out.push(Edge {
                        from: m,
                        to: c,
                        why: format!("its load-balancer address comes from `{}`", c.id),
                        gated: true,
                    });
                }
            }
            ("apiregistration.k8s.io", "APIService") => {
                let v = m.value.as_ref();
                let sns = v
                    .at("/spec/service/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let sname = v
                    .at("/spec/service/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if let Some(svc) = find(app, "", "Service", sns, sname) {
                    out.push(Edge {
                        from: m,
                        to: svc,
                        why: format!("it is unavailable until its backing `{}` exists", svc.id),
                        gated: true,
                    });
                    for w in selected(app, svc) {
                        out.push(Edge {
                            from: m,
                            to: w,
                            why: format!(
                                "it is unavailable until `{}` behind its Service serves",
                                w.id
                            ),
                            gated: true,
                        });
                    }
                }
            }
            (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration",
            ) => {
                for wh in m
                    .value
                    .get("webhooks")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    // v1 defaults failurePolicy to Fail.
                    if wh
                        .get("failurePolicy")
                        .and_then(Value::as_str)
                        .unwrap_or("Fail")
                        != "Fail"
                    {
                        continue;
                    }
                    let sns = wh
                        .at("/clientConfig/service/namespace")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let sname = wh
                        .at("/clientConfig/service/name")
                        .and_then(Value::as_str)
                        .unwrap_or("");
                    let whn = wh.get("name").and_then(Value::as_str).unwrap_or("?");
                    if let Some(svc) = find(app, "", "Service", sns, sname) {
                        let backends = selected(app, svc);
                        out.push(Edge {
                            from: m,
                            to: svc,
                            why: format!(
                                "its webhook `{whn}` calls `{}` with `failurePolicy: Fail`",
                                svc.id
                            ),
                            gated: false,
                        });
                        for w in backends {
                            out.push(Edge { from: m, to: w, why: format!("its webhook `{whn}` calls `{}` with `failurePolicy: Fail`, served by `{}`", svc.id, w.id), gated: false });
                        }
                    }
                }
            }
            ("autoscaling", "HorizontalPodAutoscaler") => {
                let v = m.value.as_ref();
                let kind = v
                    .at("/spec/scaleTargetRef/kind")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let name = v
                    .at("/spec/scaleTargetRef/name")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let api = v
                    .at("/spec/scaleTargetRef/apiVersion")
                    .and_then(Value::as_str)
                    .unwrap_or("");
                let group = crate::manifest::split_api_version(api).0;
                if let Some(t) = find(app, group, kind, ns, name) {
                    out.push(Edge { from: m, to: t, why: format!("it reports `FailedGetScale` (Degraded, failing the sync) until its target `{}` exists", t.id), gated: true });
                }
            }
            _ => {}
        }
    }
    out
}

impl Rule for WaveDependencyInversion {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn settings(&self) -> Option<&'static RuleSettingsSpec> {
        Some(&SETTINGS)
    }

    fn check(&self, cx: &RuleContext<'_>, out: &mut Vec<Finding>) {
        // Found at the first claim that needs them, once for every app.
        let classes = OnceCell::new();
        // Each edge reported has an end in scope.
        for app in rendered_apps(cx).filter(|a| cx.app_in_scope(&a.key)) {
            let steps = SyncSteps::of(app);
            if !steps.multi_step() {
                continue;
            }
            let mut reported: Vec<(usize, Step)> = Vec::new();
            for e in edges(app, cx, &classes) {
                if !(cx.in_scope(&app.key, &e.from.id) || cx.in_scope(&app.key, &e.to.id)) {
                    continue;
                }
                let (Some(from_step), Some(to_step)) =
                    (steps.first_step(e.from), steps.first_step(e.to))
                else {
                    continue;
                };
                if to_step <= from_step {
                    continue;
                }
                let awaited = steps
                    .tasks_of(e.from)
                    .any(|t| t.step == from_step && steps.awaited(t));
                if e.gated && !awaited {
                    continue;
                }
                let key = (std::ptr::from_ref(e.from) as usize, to_step);
                if reported.contains(&key) {
                    continue;
                }
                reported.push(key);
                let msg = if e.gated {
                    format!(
                        "{from_step} waits for `{}` to become healthy, but {}, which is applied only in {to_step}: the sync never gets there",
                        e.from.id, e.why
                    )
                } else {
                    format!(
                        "`{}` is applied in {from_step}, but {}, which is applied only in {to_step}: until it serves, every apply the webhook matches is rejected",
                        e.from.id, e.why
                    )
                };
                let f = if e.from.annotation(ANN_SYNC_WAVE).is_some() {
                    at_field(
                        Finding::new(&META, msg),
                        app,
                        e.from,
                        &["metadata", "annotations", ANN_SYNC_WAVE],
                    )
                } else {
                    at_resource(Finding::new(&META, msg), app, e.from)
                };
                out.push(
                    f.help(format!(
                        "move `{}` to {to_step} or later, or `{}` to {from_step} or earlier (`argocd.argoproj.io/sync-wave`)",
                        e.from.id, e.to.id
                    )),
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::analysis::testutil::{app, application, check, inventory, messages};
    use serde_json::json;

    fn deploy(wave: &str, pod: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "api", "annotations": {"argocd.argoproj.io/sync-wave": wave}},
            "spec": {"selector": {"matchLabels": {"app": "api"}},
                "template": {"metadata": {"labels": {"app": "api"}}, "spec": pod}}})
    }

    fn cm(wave: &str) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "api-config", "annotations": {"argocd.argoproj.io/sync-wave": wave}}})
    }

    fn pod_with_cm() -> Value {
        json!({"containers": [{"name": "c", "image": "x", "envFrom": [{"configMapRef": {"name": "api-config"}}]}]})
    }

    #[test]
    fn workload_before_its_config_map_hangs() {
        let inv = inventory(vec![app(
            application("a", json!({}), false),
            vec![deploy("0", pod_with_cm()), cm("1")],
        )]);
        let m = messages(&check(&WaveDependencyInversion, &inv, &Config::default()));
        assert_eq!(m, vec!["wave 0 waits for `Deployment ns/api` to become healthy, but its pods cannot start without ConfigMap `api-config` (envFrom), which is applied only in wave 1: the sync never gets there".to_string()]);
    }

    #[test]
    fn right_order_and_single_wave_are_fine() {
        let inv = inventory(vec![app(
            application("a", json!({}), false),
            vec![deploy("1", pod_with_cm()), cm("0")],
        )]);
        assert!(check(&WaveDependencyInversion, &inv, &Config::default()).is_empty());
        let inv = inventory(vec![app(
            application("a", json!({}), false),
            vec![deploy("0", pod_with_cm()), cm("0")],
        )]);
        assert!(check(&WaveDependencyInversion, &inv, &Config::default()).is_empty());
    }

    #[test]
    fn wait_for_first_consumer_claim_before_its_consumer() {
        let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "annotations": {"argocd.argoproj.io/sync-wave": "-1"}},
            "spec": {"accessModes": ["ReadWriteOnce"]}});
        let pod = json!({"containers": [{"name": "c", "image": "x"}],
            "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]});
        let inv = inventory(vec![app(
            application("a", json!({}), false),
            vec![pvc, deploy("0", pod)],
        )]);
        assert!(
            check(&WaveDependencyInversion, &inv, &Config::default()).is_empty(),
            "Immediate binding by default"
        );
        let cfg = Config::parse(
            ".gitops-lint.yaml",
            "defaultStorageClassWaitForFirstConsumer: true\n",
            &crate::rules::catalog(),
        )
        .expect("valid");
        let m = messages(&check(&WaveDependencyInversion, &inv, &cfg));
        assert_eq!(m.len(), 1);
        assert!(m[0].starts_with("wave -1 waits for `PersistentVolumeClaim ns/data` to become healthy, but its StorageClass binds on first consumer"));
    }

    fn class(name: &str, mode: &str, default: bool) -> Value {
        let mut c = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name}, "provisioner": "x", "volumeBindingMode": mode});
        if default {
            c["metadata"]["annotations"] =
                json!({"storageclass.kubernetes.io/is-default-class": "true"});
        }
        c
    }

    /// A claim in wave -1 of class `class_name` (none: the default) with its
    /// consumer in wave 0, in app `c` of an inventory whose apps `a` and
    /// `b` hold the given storage classes: the number of findings.
    fn claim_findings(class_name: Option<&str>, a: Vec<Value>, b: Vec<Value>) -> usize {
        let mut pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data", "annotations": {"argocd.argoproj.io/sync-wave": "-1"}},
            "spec": {"accessModes": ["ReadWriteOnce"]}});
        if let Some(c) = class_name {
            pvc["spec"]["storageClassName"] = json!(c);
        }
        let pod = json!({"containers": [{"name": "c", "image": "x"}],
            "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]});
        let inv = inventory(vec![
            app(application("a", json!({}), false), a),
            app(application("b", json!({}), false), b),
            app(
                application("c", json!({}), false),
                vec![pvc, deploy("0", pod)],
            ),
        ]);
        check(&WaveDependencyInversion, &inv, &Config::default()).len()
    }

    #[test]
    fn a_claim_binds_as_the_first_class_of_its_name_or_the_first_default_says() {
        let wait = "WaitForFirstConsumer";
        // Another app's class decides; of two of one name, the first app's.
        let fast_wait = class("fast", wait, false);
        let fast_now = class("fast", "Immediate", false);
        assert_eq!(
            claim_findings(Some("fast"), vec![fast_wait.clone()], vec![]),
            1
        );
        assert_eq!(
            claim_findings(
                Some("fast"),
                vec![fast_wait.clone()],
                vec![fast_now.clone()]
            ),
            1
        );
        assert_eq!(
            claim_findings(
                Some("fast"),
                vec![fast_now.clone()],
                vec![fast_wait.clone()]
            ),
            0
        );
        // An unknown class, or the empty one (no dynamic provisioning), never waits.
        assert_eq!(
            claim_findings(Some("slow"), vec![fast_wait.clone()], vec![]),
            0
        );
        assert_eq!(claim_findings(Some(""), vec![fast_wait], vec![]), 0);
        // No class named: the first class marked default, whatever its name.
        let default_wait = class("standard", wait, true);
        let default_now = class("other", "Immediate", true);
        assert_eq!(
            claim_findings(None, vec![fast_now.clone(), default_wait.clone()], vec![]),
            1
        );
        assert_eq!(
            claim_findings(None, vec![default_now.clone()], vec![default_wait.clone()]),
            0
        );
        assert_eq!(claim_findings(None, vec![fast_now], vec![default_wait]), 1);
    }
}
