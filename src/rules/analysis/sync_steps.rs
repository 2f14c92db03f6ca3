//! How one sync operation of an app is ordered and health-gated: every task
//! gets a (phase, wave) step; an operation that spans more than one step is
//! "multi-step" and waits for each step's non-hook tasks to be Healthy before
//! the next, except after the last step. Hooks are always awaited
//! (gitops-engine `sync_context.go`, `sync_tasks.go`; ARGOCD.md §4).

use goyaml::json::Pointer as _;
use std::collections::BTreeSet;
use std::fmt;

use serde_json::Value;

use crate::argocd::App;
use crate::manifest::{HookType, Manifest};

/// A sync phase, in execution order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Phase {
    /// PreSync hooks.
    PreSync,
    /// Normal resources and Sync hooks.
    Sync,
    /// PostSync hooks.
    PostSync,
}

impl Phase {
    /// The Argo CD name.
    #[must_use]
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Phase::PreSync => "PreSync",
            Phase::Sync => "Sync",
            Phase::PostSync => "PostSync",
        }
    }
}

/// A (phase, wave) position; tasks run step by step in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct Step {
    /// The phase.
    pub(crate) phase: Phase,
    /// The sync wave.
    pub(crate) wave: i64,
}

impl fmt::Display for Step {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.phase {
            Phase::Sync => write!(f, "wave {}", self.wave),
            p => write!(f, "{} wave {}", p.as_str(), self.wave),
        }
    }
}

/// One task of a sync: a resource applied at a step.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Task<'a> {
    /// The resource.
    pub(crate) manifest: &'a Manifest,
    /// Its step.
    pub(crate) step: Step,
    /// Whether it is a hook (always awaited).
    pub(crate) hook: bool,
}

/// The ordered tasks of one app's sync.
#[derive(Debug, Clone)]
pub(crate) struct SyncSteps<'a> {
    /// Every task (a hook with several phases appears once per phase).
    pub(crate) tasks: Vec<Task<'a>>,
    /// The distinct steps, ascending.
    pub(crate) steps: BTreeSet<Step>,
}

impl<'a> SyncSteps<'a> {
    /// The tasks of a full (non-selective) sync of `app`. `Skip` and
    /// typeless hooks are never applied; `SyncFail`, `PreDelete` and
    /// `PostDelete` hooks are not part of a successful sync.
    #[must_use]
    pub(crate) fn of(app: &'a App) -> SyncSteps<'a> {
        let mut tasks = Vec::new();
        for m in app.resources.iter() {
            let hook = m.hook();
            let wave = m.sync_wave();
            if !hook.is_hook {
                tasks.push(Task {
                    manifest: m,
                    step: Step {
                        phase: Phase::Sync,
                        wave,
                    },
                    hook: false,
                });
                continue;
            }
            for t in &hook.types {
                let phase = match t {
                    HookType::PreSync => Phase::PreSync,
                    HookType::Sync => Phase::Sync,
                    HookType::PostSync => Phase::PostSync,
                    _ => continue,
                };
                tasks.push(Task {
                    manifest: m,
                    step: Step { phase, wave },
                    hook: true,
                });
            }
        }
        let steps = tasks.iter().map(|t| t.step).collect();
        SyncSteps { tasks, steps }
    }

    /// Whether the operation spans more than one step (so steps are gated).
    #[must_use]
    pub(crate) fn multi_step(&self) -> bool {
        self.steps.len() > 1
    }

    /// The last step.
    #[must_use]
    pub(crate) fn last(&self) -> Option<Step> {
        self.steps.iter().next_back().copied()
    }

    /// Whether the sync waits for `task` to become Healthy before moving on:
    /// hooks always; other tasks only in a multi-step operation and not in
    /// its last step.
    #[must_use]
    pub(crate) fn awaited(&self, task: &Task<'_>) -> bool {
        task.hook || (self.multi_step() && Some(task.step) != self.last())
    }

    /// The tasks of one resource (several for a multi-phase hook).
    pub(crate) fn tasks_of<'s>(
        &'s self,
        m: &'s Manifest,
    ) -> impl Iterator<Item = &'s Task<'a>> + 's {
        self.tasks
            .iter()
            .filter(move |t| std::ptr::eq(t.manifest, m))
    }

    /// The earliest step at which `m` is applied.
    #[must_use]
    pub(crate) fn first_step(&self, m: &Manifest) -> Option<Step> {
        self.tasks_of(m).map(|t| t.step).min()
    }
}

/// What a built-in health check waits for, for kinds whose health can stay
/// Progressing because of another object (gitops-engine `pkg/health`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum HealthWait {
    /// Pods of a workload becoming ready (Deployment, StatefulSet, DaemonSet,
    /// ReplicaSet, Rollout, Pod) or completing (Job).
    Pods,
    /// A PVC being Bound.
    Bound,
    /// `status.loadBalancer.ingress` (LoadBalancer Service, Ingress).
    LoadBalancer,
    /// `Available=True` (APIService).
    Available,
    /// The HPA reading its target's scale.
    ScaleTarget,
}

/// The health an object waits for, or `None` when it has no health check
/// that another object can hold back (ConfigMaps, RBAC, CronJobs, most CRs…).
#[must_use]
pub(crate) fn health_wait(m: &Manifest) -> Option<HealthWait> {
    let v: &Value = m.value.as_ref();
    match (m.id.group.as_str(), m.id.kind.as_str()) {
        ("apps", "Deployment" | "StatefulSet" | "DaemonSet" | "ReplicaSet")
        | ("", "Pod" | "ReplicationController")
        | ("batch", "Job")
        | ("argoproj.io", "Rollout") => Some(HealthWait::Pods),
        ("", "PersistentVolumeClaim") => Some(HealthWait::Bound),
        ("", "Service") if v.at("/spec/type").and_then(Value::as_str) == Some("LoadBalancer") => {
            Some(HealthWait::LoadBalancer)
        }
        ("networking.k8s.io" | "extensions", "Ingress") => Some(HealthWait::LoadBalancer),
        ("apiregistration.k8s.io", "APIService") => Some(HealthWait::Available),
        ("autoscaling", "HorizontalPodAutoscaler") => Some(HealthWait::ScaleTarget),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::argocd::{AppSpec, AppStatus};
    use crate::manifest::{manifest_from_value, Origin, Scopes};
    use serde_json::json;
    use std::sync::Arc;

    pub(crate) fn app_with(resources: Vec<Value>) -> App {
        let obj = json!({"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
            "metadata": {"name": "a", "namespace": "argocd"},
            "spec": {"destination": {"namespace": "ns"}, "source": {"repoURL": "x", "path": "a"}}});
        let spec = AppSpec::parse(&obj).expect("an Application");
        App {
            key: "argocd/a".into(),
            instance: None,
            spec: std::sync::Arc::new(spec),
            object: Arc::new(obj.into()),
            origin: Origin::default(),
            manager: None,
            status: AppStatus::Rendered,
            resources: resources
                .into_iter()
                .map(|v| {
                    manifest_from_value(v, Origin::default(), "ns", &Scopes::default())
                        .expect("valid object")
                })
                .collect(),
            inputs: std::sync::Arc::default(),
            source_types: Vec::new(),
            plugins: Vec::new(),
            implicit: false,
        }
    }

    fn obj(kind: &str, name: &str, ann: Value) -> Value {
        json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "annotations": ann}})
    }

    #[test]
    fn single_wave_without_hooks_is_never_awaited() {
        let app = app_with(vec![
            obj("ConfigMap", "a", json!({})),
            obj("Service", "b", json!({})),
        ]);
        let s = SyncSteps::of(&app);
        assert!(!s.multi_step());
        assert!(s.tasks.iter().all(|t| !s.awaited(t)));
    }

    #[test]
    fn earlier_waves_are_awaited_but_not_the_last() {
        let app = app_with(vec![
            obj(
                "ConfigMap",
                "a",
                json!({"argocd.argoproj.io/sync-wave": "-1"}),
            ),
            obj("Service", "b", json!({})),
            obj(
                "Pod",
                "h",
                json!({"argocd.argoproj.io/hook": "PreSync,PostSync"}),
            ),
            obj("Pod", "skip", json!({"argocd.argoproj.io/hook": "Skip"})),
        ]);
        let s = SyncSteps::of(&app);
        assert_eq!(s.tasks.len(), 4, "two phases of the hook, skip left out");
        let a = s.tasks.iter().find(|t| t.manifest.id.name == "a").unwrap();
        let b = s.tasks.iter().find(|t| t.manifest.id.name == "b").unwrap();
        assert!(s.awaited(a));
        assert!(s.awaited(b), "PostSync hooks follow, so wave 0 is not last");
        assert_eq!(
            s.last(),
            Some(Step {
                phase: Phase::PostSync,
                wave: 0
            })
        );
    }
}
