#!/usr/bin/env python3
"""Generates a synthetic Argo CD repository for the gitops-lint benchmark.

The repository holds N apps and one commit per scenario:

  main     the base revision
  one      head: one app's overlay changed (image tag and replicas)
  tenpct   head: 10% of the apps changed the same way
  shared   head: the base shared by every app changed
  gone     head: nine apps in ten removed, Application and files (with
           --appset, their directories: the generator yields fewer)
  added    head: one new app (its files and its Application; with --appset,
           its directory), the commonest pull request of a fleet

Layouts:

  kustomize  apps/<app>/base (Deployment, Service, PVC, HPA, PreSync Job,
             a configMapGenerator, and ../../../shared/base) with an overlay
             apps/<app>/overlays/prod (namespace, image tag, replica patch,
             labels); Applications in argocd/apps/ rendered by the root
             app-of-apps in bootstrap/root.yaml.
  plain      the same resources as plain YAML in apps/<app>/manifests/; the
             "shared base" is a common.yaml file with identical content in
             every app directory (one blob, many paths).

  helm       one local chart, charts/service (Deployment, Service, PVC,
             HPA, ConfigMap), and a value file per app in envs/<app>/;
             each Application renders the chart with its release name and
             value file. The "shared" head changes a chart template; the
             others change value files. With --charts K there are K
             charts, charts/service-<k> (each with its own content), app i
             rendering chart i mod K; "shared" changes every chart.

Shapes of the fleet (--shape, kustomize and plain layouts):

  app-of-apps  (default) the Applications in argocd/apps/, rendered by
               the root app-of-apps in bootstrap/root.yaml.
  flat         the same Application files side by side in argocd/apps/
               and no app-of-apps: every one is a root of its own.
  appset       one ApplicationSet with a git directory generator over
               the overlays instead of the per-app Application files
               (--appset is the same).
  deep         a deep tree: each app's files under
               apps/<region>/<zone>/<team>/<app>/ (seven directories
               down to an overlay), its Application under
               argocd/apps/<region>/<zone>/<team>/, rendered by a root
               app-of-apps with `directory.recurse`.
With --values-ref (helm layout) each Application has two sources: the
chart, and a `ref: values` source its value file is read from
(`$values/envs/<app>/values.yaml`).

The repository is written with `git fast-import`, so 2,000 apps take a
second or two. It has an `origin` remote naming the repoURL the
Applications use, as a real clone does.
"""

import argparse
import os
import subprocess
import sys

REPO_URL = "https://git.example.com/platform/fleet.git"


def app_name(i):
    return f"svc-{i:04d}"


def app_dir(shape, i):
    """The directory holding app i's files (and, under argocd/apps/, the
    directory of its Application file in the deep shape)."""
    if shape != "deep":
        return app_name(i)
    return f"r{i % 4}/z{i // 4 % 5}/t{i // 20 % 10}/{app_name(i)}"


def deployment(name, image_tag, replicas):
    return f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
  labels:
    app.kubernetes.io/name: {name}
spec:
  replicas: {replicas}
  selector:
    matchLabels:
      app.kubernetes.io/name: {name}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {name}
    spec:
      serviceAccountName: default
      containers:
        - name: app
          image: registry.example.com/{name}:{image_tag}
          ports:
            - containerPort: 8080
              name: http
          envFrom:
            - configMapRef:
                name: {name}-config
          resources:
            requests:
              cpu: 100m
              memory: 128Mi
            limits:
              memory: 256Mi
          readinessProbe:
            httpGet:
              path: /healthz
              port: http
          volumeMounts:
            - name: data
              mountPath: /var/lib/{name}
      volumes:
        - name: data
          persistentVolumeClaim:
            claimName: {name}-data
"""


def service(name):
    return f"""apiVersion: v1
kind: Service
metadata:
  name: {name}
spec:
  selector:
    app.kubernetes.io/name: {name}
  ports:
    - name: http
      port: 80
      targetPort: http
"""


def pvc(name):
    return f"""apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: {name}-data
  annotations:
    argocd.argoproj.io/sync-options: Prune=false
spec:
  accessModes: ["ReadWriteOnce"]
  storageClassName: standard
  resources:
    requests:
      storage: 10Gi
"""


def hpa(name):
    return f"""apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {name}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {name}
  minReplicas: 2
  maxReplicas: 10
  metrics:
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: 75
"""


def presync_job(name):
    return f"""apiVersion: batch/v1
kind: Job
metadata:
  name: {name}-migrate
  annotations:
    argocd.argoproj.io/hook: PreSync
    argocd.argoproj.io/hook-delete-policy: BeforeHookCreation
spec:
  activeDeadlineSeconds: 600
  backoffLimit: 1
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: registry.example.com/{name}-migrate:1.0.0
          args: ["migrate", "--to", "latest"]
"""


def config_data(name):
    return f"""LOG_LEVEL=info
HTTP_PORT=8080
SERVICE_NAME={name}
FEATURE_FLAGS=search,export
"""


def shared_files(variant):
    # The base every app includes: a default-deny NetworkPolicy and a
    # ResourceQuota-free LimitRange. The "shared" head changes the limit.
    limit = "512Mi" if variant == "shared" else "256Mi"
    netpol = """apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata:
  name: default-deny
spec:
  podSelector: {}
  policyTypes: ["Ingress"]
"""
    limits = f"""apiVersion: v1
kind: LimitRange
metadata:
  name: defaults
spec:
  limits:
    - type: Container
      default:
        memory: {limit}
      defaultRequest:
        memory: 64Mi
"""
    return netpol, limits


def application(name, path):
    return f"""apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: argocd
  finalizers:
    - resources-finalizer.argocd.argoproj.io
spec:
  project: default
  source:
    repoURL: {REPO_URL}
    targetRevision: main
    path: {path}
  destination:
    server: https://kubernetes.default.svc
    namespace: {name}
  syncPolicy:
    automated:
      prune: true
      selfHeal: true
    syncOptions:
      - CreateNamespace=true
"""


ROOT_APP = f"""apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: root
  namespace: argocd
spec:
  project: default
  source:
    repoURL: {REPO_URL}
    targetRevision: main
    path: argocd/apps
  destination:
    server: https://kubernetes.default.svc
    namespace: argocd
  syncPolicy:
    automated:
      prune: true
"""


ROOT_APP_RECURSE = ROOT_APP.replace(
    "    path: argocd/apps\n", "    path: argocd/apps\n    directory:\n      recurse: true\n"
)


def appset(layout):
    path = "apps/*/overlays/prod" if layout == "kustomize" else "apps/*/manifests"
    return f"""apiVersion: argoproj.io/v1alpha1
kind: ApplicationSet
metadata:
  name: fleet
  namespace: argocd
spec:
  goTemplate: true
  goTemplateOptions: ["missingkey=error"]
  generators:
    - git:
        repoURL: {REPO_URL}
        revision: main
        directories:
          - path: {path}
  template:
    metadata:
      name: '{{{{index .path.segments 1}}}}'
    spec:
      project: default
      source:
        repoURL: {REPO_URL}
        targetRevision: main
        path: '{{{{.path.path}}}}'
      destination:
        server: https://kubernetes.default.svc
        namespace: '{{{{index .path.segments 1}}}}'
      syncPolicy:
        automated:
          prune: true
"""


CHART_YAML = """apiVersion: v2
name: service
version: 1.0.0
"""

CHART_VALUES = """image:
  repository: registry.example.com/service
  tag: "1.0.0"
replicas: 2
storage: 10Gi
logLevel: info
"""


def chart_templates(variant, chart_label=""):
    """The chart's templates; the "shared" head adds a label to every object.
    `chart_label` (one of several charts) makes each chart's content its own."""
    extra = "\n    tier: backend" if variant == "shared" else ""
    extra += f"\n    chart: {chart_label}" if chart_label else ""
    labels = f"""  labels:
    app.kubernetes.io/name: {{{{ .Release.Name }}}}
    app.kubernetes.io/managed-by: {{{{ .Release.Service }}}}{extra}
"""
    return {
        "deployment.yaml": f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{{{ .Release.Name }}}}
{labels}spec:
  replicas: {{{{ .Values.replicas }}}}
  selector:
    matchLabels:
      app.kubernetes.io/name: {{{{ .Release.Name }}}}
  template:
    metadata:
      labels:
        app.kubernetes.io/name: {{{{ .Release.Name }}}}
    spec:
      containers:
        - name: app
          image: "{{{{ .Values.image.repository }}}}:{{{{ .Values.image.tag }}}}"
          envFrom:
            - configMapRef:
                name: {{{{ .Release.Name }}}}-config
          volumeMounts:
            - name: data
              mountPath: /var/lib/app
      volumes:
        - name: data
          persistentVolumeClaim:
            claimName: {{{{ .Release.Name }}}}-data
""",
        "service.yaml": f"""apiVersion: v1
kind: Service
metadata:
  name: {{{{ .Release.Name }}}}
{labels}spec:
  selector:
    app.kubernetes.io/name: {{{{ .Release.Name }}}}
  ports:
    - name: http
      port: 80
      targetPort: 8080
""",
        "pvc.yaml": f"""apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: {{{{ .Release.Name }}}}-data
{labels}  annotations:
    argocd.argoproj.io/sync-options: Prune=false
spec:
  accessModes: ["ReadWriteOnce"]
  resources:
    requests:
      storage: {{{{ .Values.storage }}}}
""",
        "hpa.yaml": f"""apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{{{ .Release.Name }}}}
{labels}spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{{{ .Release.Name }}}}
  minReplicas: {{{{ .Values.replicas }}}}
  maxReplicas: 10
""",
        "configmap.yaml": f"""apiVersion: v1
kind: ConfigMap
metadata:
  name: {{{{ .Release.Name }}}}-config
{labels}data:
  LOG_LEVEL: {{{{ .Values.logLevel | quote }}}}
  SERVICE_NAME: {{{{ .Release.Name | quote }}}}
""",
    }


def chart_dir(i, charts):
    """The chart app i renders."""
    return "charts/service" if charts == 1 else f"charts/service-{i % charts:03d}"


def helm_application(name, values_ref, chart="charts/service"):
    if values_ref:
        sources = f"""  sources:
    - repoURL: {REPO_URL}
      targetRevision: main
      path: {chart}
      helm:
        releaseName: {name}
        valueFiles:
          - $values/envs/{name}/values.yaml
    - repoURL: {REPO_URL}
      targetRevision: main
      ref: values
"""
    else:
        sources = f"""  source:
    repoURL: {REPO_URL}
    targetRevision: main
    path: {chart}
    helm:
      releaseName: {name}
      valueFiles:
        - ../../envs/{name}/values.yaml
"""
    return f"""apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: {name}
  namespace: argocd
spec:
  project: default
{sources}  destination:
    server: https://kubernetes.default.svc
    namespace: {name}
  syncPolicy:
    automated:
      prune: true
"""


def helm_files(n, variant, values_ref, charts=1):
    out = {"bootstrap/root.yaml": ROOT_APP}
    for k in range(min(charts, n)):
        d = chart_dir(k, charts)
        out[f"{d}/Chart.yaml"] = CHART_YAML
        out[f"{d}/values.yaml"] = CHART_VALUES
        label = d.rsplit("/", 1)[1] if charts > 1 else ""
        for f, text in chart_templates(variant, label).items():
            out[f"{d}/templates/{f}"] = text
    for i in range(app_count(variant, n)):
        if removed(variant, i):
            continue
        name = app_name(i)
        bump = changed(variant, i, n)
        out[f"envs/{name}/values.yaml"] = (
            f"image:\n  tag: \"{'1.4.1' if bump else '1.4.0'}\"\nreplicas: {4 if bump else 3}\n"
        )
        out[f"argocd/apps/{name}.yaml"] = helm_application(name, values_ref, chart_dir(i, charts))
    return out


def changed(variant, i, n):
    if variant == "one":
        return i == n // 2
    if variant == "tenpct":
        return i % 10 == 3
    return False


def removed(variant, i):
    return variant == "gone" and i % 10 != 0


def app_count(variant, n):
    """How many apps the scenario's tree holds: `added` has one more."""
    return n + 1 if variant == "added" else n


def files_for(layout, n, variant, shape, values_ref=False, charts=1):
    """Path → bytes of the whole tree for one scenario."""
    if layout == "helm":
        return helm_files(n, variant, values_ref, charts)
    out = {}
    netpol, limits = shared_files(variant)
    use_appset = shape == "appset"
    # The shared base is this many directories above an app's base.
    up = "../" * (app_dir(shape, 0).count("/") + 3)
    if use_appset:
        out["argocd/appsets/fleet.yaml"] = appset(layout)
        out["bootstrap/root.yaml"] = ROOT_APP.replace("argocd/apps", "argocd/appsets")
    elif shape == "deep":
        out["bootstrap/root.yaml"] = ROOT_APP_RECURSE
    elif shape == "app-of-apps":
        out["bootstrap/root.yaml"] = ROOT_APP
    if layout == "kustomize":
        out["shared/base/kustomization.yaml"] = (
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n"
            "resources:\n  - networkpolicy.yaml\n  - limitrange.yaml\n"
        )
        out["shared/base/networkpolicy.yaml"] = netpol
        out["shared/base/limitrange.yaml"] = limits
    for i in range(app_count(variant, n)):
        if removed(variant, i):
            continue
        name = app_name(i)
        bump = changed(variant, i, n)
        tag = "1.4.1" if bump else "1.4.0"
        replicas = 4 if bump else 3
        where = app_dir(shape, i)
        if layout == "kustomize":
            base = f"apps/{where}/base"
            out[f"{base}/deployment.yaml"] = deployment(name, "1.0.0", 2)
            out[f"{base}/service.yaml"] = service(name)
            out[f"{base}/pvc.yaml"] = pvc(name)
            out[f"{base}/hpa.yaml"] = hpa(name)
            out[f"{base}/job-migrate.yaml"] = presync_job(name)
            out[f"{base}/config.env"] = config_data(name)
            out[f"{base}/kustomization.yaml"] = f"""apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - {up}shared/base
  - deployment.yaml
  - service.yaml
  - pvc.yaml
  - hpa.yaml
  - job-migrate.yaml
configMapGenerator:
  - name: {name}-config
    envs:
      - config.env
"""
            ov = f"apps/{where}/overlays/prod"
            out[f"{ov}/replicas.yaml"] = f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: {name}
spec:
  replicas: {replicas}
"""
            out[f"{ov}/kustomization.yaml"] = f"""apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: {name}
resources:
  - ../../base
patches:
  - path: replicas.yaml
images:
  - name: registry.example.com/{name}
    newTag: "{tag}"
labels:
  - pairs:
      team: platform
      env: prod
"""
            path = ov
        else:
            d = f"apps/{where}/manifests"
            out[f"{d}/deployment.yaml"] = deployment(name, tag, replicas)
            out[f"{d}/service.yaml"] = service(name)
            out[f"{d}/pvc.yaml"] = pvc(name)
            out[f"{d}/hpa.yaml"] = hpa(name)
            out[f"{d}/job-migrate.yaml"] = presync_job(name)
            out[f"{d}/configmap.yaml"] = (
                f"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}-config\ndata:\n"
                + "".join(
                    f"  {k}: \"{v}\"\n"
                    for k, v in (l.split("=", 1) for l in config_data(name).splitlines())
                )
            )
            out[f"{d}/common.yaml"] = netpol + "---\n" + limits
            path = d
        if not use_appset:
            out[f"argocd/apps/{where}.yaml"] = application(name, path)
    return out


def fast_import_stream(layout, n, shape, values_ref=False, charts=1):
    """A fast-import stream: `main` (base) and one branch per head scenario."""
    marks = {}
    chunks = []
    next_mark = [1]

    def blob(data):
        b = data.encode()
        if b in marks:
            return marks[b]
        m = next_mark[0]
        next_mark[0] += 1
        marks[b] = m
        chunks.append(b"blob\nmark :%d\ndata %d\n%s\n" % (m, len(b), b))
        return m

    when = 1_700_000_000
    base_files = files_for(layout, n, "base", shape, values_ref, charts)
    base_marks = {p: blob(d) for p, d in base_files.items()}
    commit_mark = next_mark[0]
    next_mark[0] += 1
    msg = b"base"
    head = (
        b"commit refs/heads/main\nmark :%d\n"
        b"committer bench <bench@example.invalid> %d +0000\ndata %d\n%s\n"
        % (commit_mark, when, len(msg), msg)
    )
    chunks.append(head)
    for p, m in sorted(base_marks.items()):
        chunks.append(b"M 100644 :%d %s\n" % (m, p.encode()))
    chunks.append(b"\n")
    for variant in ("one", "tenpct", "shared", "gone", "added"):
        files = files_for(layout, n, variant, shape, values_ref, charts)
        diffs = {p: d for p, d in files.items() if base_files.get(p) != d}
        mark_of = {p: blob(d) for p, d in diffs.items()}
        msg = variant.encode()
        chunks.append(
            b"commit refs/heads/%s\ncommitter bench <bench@example.invalid> %d +0000\n"
            b"data %d\n%s\nfrom :%d\n"
            % (variant.encode(), when + 60, len(msg), msg, commit_mark)
        )
        for p, m in sorted(mark_of.items()):
            chunks.append(b"M 100644 :%d %s\n" % (m, p.encode()))
        for p in sorted(set(base_files) - set(files)):
            chunks.append(b"D %s\n" % p.encode())
        chunks.append(b"\n")
    return b"".join(chunks)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out", help="directory to create (must not exist)")
    ap.add_argument("--apps", type=int, default=100)
    ap.add_argument("--layout", choices=["kustomize", "plain", "helm"], default="kustomize")
    ap.add_argument("--shape", choices=["app-of-apps", "flat", "appset", "deep"], default="app-of-apps",
                    help="how the Applications are declared and the tree is laid out (kustomize and plain layouts)")
    ap.add_argument("--appset", action="store_true", help="the same as --shape appset")
    ap.add_argument("--values-ref", action="store_true",
                    help="helm layout: value files read through a multi-source `ref: values` source")
    ap.add_argument("--charts", type=int, default=1,
                    help="helm layout: this many distinct charts, app i rendering chart i mod K")
    args = ap.parse_args()
    if args.appset:
        args.shape = "appset"
    if args.charts < 1 or (args.charts != 1 and args.layout != "helm"):
        sys.exit("--charts is a positive number, for the helm layout")
    if args.shape != "app-of-apps" and args.layout == "helm":
        sys.exit("--shape and --appset are for the kustomize and plain layouts")
    if args.values_ref and args.layout != "helm":
        sys.exit("--values-ref is for the helm layout")
    if os.path.exists(args.out):
        sys.exit(f"{args.out} already exists")
    os.makedirs(args.out)
    git = ["git", "-C", args.out]
    subprocess.run(git + ["init", "-q", "-b", "main"], check=True)
    subprocess.run(git + ["remote", "add", "origin", REPO_URL], check=True)
    stream = fast_import_stream(args.layout, args.apps, args.shape, args.values_ref, args.charts)
    subprocess.run(git + ["fast-import", "--quiet"], input=stream, check=True)
    subprocess.run(git + ["checkout", "-q", "-f", "main"], check=True)
    # A real clone has packed objects; the benchmark should read those.
    subprocess.run(git + ["gc", "-q"], check=True)


if __name__ == "__main__":
    main()
