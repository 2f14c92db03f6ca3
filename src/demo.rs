//! `gitops-lint demo`: a small, realistic GitOps repository in a temporary
//! directory, with a change that deletes a PersistentVolumeClaim manifest and
//! removes a child Application from an app-of-apps.

use crate::source::{add_remote, write_commit, RepoError};

const REPO_URL: &str = "https://git.example.com/platform/gitops.git";

const ROOT_APP: &str = "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: root
  namespace: argocd
spec:
  project: default
  source:
    repoURL: https://git.example.com/platform/gitops.git
    targetRevision: main
    path: apps
  destination:
    server: https://kubernetes.default.svc
    namespace: argocd
  syncPolicy:
    automated:
      prune: true
      selfHeal: true
";

fn child_app(name: &str, path: &str, namespace: &str, prune: bool) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: argocd
  finalizers:
    - resources-finalizer.argocd.argoproj.io
spec:
  project: default
  source:
    repoURL: https://git.example.com/platform/gitops.git
    targetRevision: main
    path: {path}
  destination:
    server: https://kubernetes.default.svc
    namespace: {namespace}
  syncPolicy:
    automated:
      prune: {prune}
"
    )
}

const PAYMENTS_DEPLOYMENT: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  replicas: 2
  selector:
    matchLabels: {app: api}
  template:
    metadata:
      labels: {app: api}
    spec:
      containers:
        - name: api
          image: registry.example.com/payments/api:1.8.2
          volumeMounts:
            - {name: ledger, mountPath: /var/lib/ledger}
      volumes:
        - name: ledger
          persistentVolumeClaim: {claimName: ledger}
";

const PAYMENTS_PVC: &str = "apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ledger
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 50Gi
";

const PAYMENTS_CACHE: &str = "apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: cache
  annotations:
    argocd.argoproj.io/sync-options: Prune=false
spec:
  accessModes: [ReadWriteOnce]
  resources:
    requests:
      storage: 5Gi
";

const PAYMENTS_SERVICE: &str = "apiVersion: v1
kind: Service
metadata:
  name: api
spec:
  selector: {app: api}
  ports:
    - port: 80
      targetPort: 8080
";

const REPORTS: &str = "apiVersion: apps/v1
kind: StatefulSet
metadata:
  name: warehouse
spec:
  serviceName: warehouse
  replicas: 1
  persistentVolumeClaimRetentionPolicy:
    whenDeleted: Delete
  selector:
    matchLabels: {app: warehouse}
  template:
    metadata:
      labels: {app: warehouse}
    spec:
      containers:
        - name: db
          image: postgres:16
  volumeClaimTemplates:
    - metadata: {name: data}
      spec:
        accessModes: [ReadWriteOnce]
        resources: {requests: {storage: 100Gi}}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: warehouse-settings
data:
  retention: 90d
";

fn files(with_ledger: bool, with_reports: bool) -> Vec<(String, Vec<u8>)> {
    let mut f: Vec<(String, String)> = vec![
        ("bootstrap/root.yaml".into(), ROOT_APP.into()),
        (
            "apps/payments.yaml".into(),
            child_app("payments", "workloads/payments", "payments", true),
        ),
        (
            "workloads/payments/deployment.yaml".into(),
            PAYMENTS_DEPLOYMENT.into(),
        ),
        (
            "workloads/payments/service.yaml".into(),
            PAYMENTS_SERVICE.into(),
        ),
        (
            "workloads/payments/cache-pvc.yaml".into(),
            PAYMENTS_CACHE.into(),
        ),
        ("workloads/reports/warehouse.yaml".into(), REPORTS.into()),
    ];
    if with_ledger {
        f.push((
            "workloads/payments/ledger-pvc.yaml".into(),
            PAYMENTS_PVC.into(),
        ));
    }
    if with_reports {
        f.push((
            "apps/reports.yaml".into(),
            child_app("reports", "workloads/reports", "analytics", false),
        ));
    }
    f.into_iter().map(|(p, c)| (p, c.into_bytes())).collect()
}

/// Builds the demo repository: branch `main` (base) and branch `change`,
/// which deletes `ledger-pvc.yaml` and removes the `reports` Application.
///
/// # Errors
/// Temporary directory or git failures.
pub fn build() -> Result<tempfile::TempDir, RepoError> {
    let dir = tempfile::Builder::new()
        .prefix("gitops-lint-demo-")
        .tempdir()
        .map_err(|e| RepoError::Git(format!("cannot create a temporary directory: {e}")))?;
    write_commit(
        dir.path(),
        "main",
        None,
        &files(true, true),
        "Payments and reports apps",
    )?;
    write_commit(
        dir.path(),
        "change",
        Some("main"),
        &files(false, false),
        "Tidy up: drop unused manifests",
    )?;
    add_remote(dir.path(), "origin", REPO_URL)?;
    Ok(dir)
}
