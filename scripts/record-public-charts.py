#!/usr/bin/env python3
"""Records under testdata/public-charts/ what the Helm repositories of a few
public Argo CD repositories serve for the chart versions their apps install.

Each archive is kept at the path its repository's index.yaml names
(testdata/public-charts/<host>/<path>), and each repository gets an
index.yaml listing those versions as `helm repo index` lists them (the
chart's metadata, `urls`, `digest` = sha256 of the archive).
tests/it/chart_fetch.rs serves this tree on 127.0.0.1 and fills a cache from
it through the fetch code; scripts/public-repo-charts.sh counts what then
renders on a clone.

An archive is the one the chart's repository commits, copied as it is,
or else `helm package` of the chart directory at the release's tag, its
dependencies packaged the same way and placed in charts/ as the
release's archive carries them. Sources and commits go to NOTICE.md.

Usage: scripts/record-public-charts.py MIRRORS_DIR
  MIRRORS_DIR holds bare clones named OWNER+NAME/repo (helm on PATH).
"""
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile

import yaml

# (repository URL, chart, archive URL as its index names it, source, deps)
# source: ("blob", mirror, ref, path) or ("dir", mirror, ref, path)
CHARTS = [
    ("https://raw.githubusercontent.com/kubernetes-csi/csi-driver-nfs/master/charts",
     "https://raw.githubusercontent.com/kubernetes-csi/csi-driver-nfs/master/charts/v4.11.0/csi-driver-nfs-4.11.0.tgz",
     ("blob", "kubernetes-csi+csi-driver-nfs", "v4.11.0", "charts/v4.11.0/csi-driver-nfs-4.11.0.tgz"), []),
    ("https://bitnami-labs.github.io/sealed-secrets",
     "https://github.com/bitnami-labs/sealed-secrets/releases/download/helm-v2.16.2/sealed-secrets-2.16.2.tgz",
     ("dir", "bitnami-labs+sealed-secrets", "helm-v2.16.2", "helm/sealed-secrets"), []),
    ("https://traefik.github.io/charts",
     "https://traefik.github.io/charts/traefik/traefik-32.1.0.tgz",
     ("dir", "traefik+traefik-helm-chart", "v32.1.0", "traefik"), []),
    # charts/ holds the crds subchart and frr-k8s-0.0.11.tgz at the tag.
    ("https://metallb.github.io/metallb",
     "https://github.com/metallb/metallb/releases/download/metallb-chart-0.14.5/metallb-0.14.5.tgz",
     ("dir", "metallb+metallb", "v0.14.5", "charts/metallb"), []),
    ("https://charts.longhorn.io",
     "https://github.com/longhorn/charts/releases/download/longhorn-1.9.1/longhorn-1.9.1.tgz",
     ("dir", "longhorn+longhorn", "v1.9.1", "chart"), []),
    ("https://argoproj.github.io/argo-helm",
     "https://github.com/argoproj/argo-helm/releases/download/argo-cd-7.5.2/argo-cd-7.5.2.tgz",
     ("dir", "argoproj+argo-helm", "argo-cd-7.5.2", "charts/argo-cd"),
     # Chart.lock: redis-ha 4.27.6 from https://dandydeveloper.github.io/charts/
     [("DandyDeveloper+charts", "redis-ha-4.27.6", "charts/redis-ha")]),
    ("https://argoproj.github.io/argo-helm",
     "https://github.com/argoproj/argo-helm/releases/download/argocd-apps-2.0.0/argocd-apps-2.0.0.tgz",
     ("dir", "argoproj+argo-helm", "argocd-apps-2.0.0", "charts/argocd-apps"), []),
    ("https://bjw-s-labs.github.io/helm-charts",
     "https://github.com/bjw-s-labs/helm-charts/releases/download/app-template-2.2.0/app-template-2.2.0.tgz",
     ("dir", "bjw-s-labs+helm-charts", "app-template-2.2.0", "charts/other/app-template"),
     [("bjw-s-labs+helm-charts", "common-2.2.0", "charts/library/common")]),
    ("https://bjw-s-labs.github.io/helm-charts",
     "https://github.com/bjw-s-labs/helm-charts/releases/download/app-template-2.6.0/app-template-2.6.0.tgz",
     ("dir", "bjw-s-labs+helm-charts", "app-template-2.6.0", "charts/other/app-template"),
     [("bjw-s-labs+helm-charts", "common-2.6.0", "charts/library/common")]),
    ("https://bjw-s-labs.github.io/helm-charts",
     "https://github.com/bjw-s-labs/helm-charts/releases/download/app-template-3.1.0/app-template-3.1.0.tgz",
     ("dir", "bjw-s-labs+helm-charts", "app-template-3.1.0", "charts/other/app-template"),
     [("bjw-s-labs+helm-charts", "common-3.1.0", "charts/library/common")]),
    ("https://bjw-s-labs.github.io/helm-charts",
     "https://github.com/bjw-s-labs/helm-charts/releases/download/app-template-3.5.0/app-template-3.5.0.tgz",
     ("dir", "bjw-s-labs+helm-charts", "app-template-3.5.0", "charts/other/app-template"),
     [("bjw-s-labs+helm-charts", "common-3.5.0", "charts/library/common")]),
    # charts/ holds the crds subchart at the tag; the other dependencies
    # are ranges, each here at its highest release before the chart's.
    ("https://prometheus-community.github.io/helm-charts",
     "https://github.com/prometheus-community/helm-charts/releases/download/kube-prometheus-stack-65.7.0/kube-prometheus-stack-65.7.0.tgz",
     ("dir", "prometheus-community+helm-charts", "kube-prometheus-stack-65.7.0", "charts/kube-prometheus-stack"),
     [("prometheus-community+helm-charts", "kube-state-metrics-5.26.0", "charts/kube-state-metrics"),
      ("prometheus-community+helm-charts", "prometheus-node-exporter-4.40.0", "charts/prometheus-node-exporter"),
      ("grafana+helm-charts", "grafana-8.5.12", "charts/grafana"),
      ("prometheus-community+helm-charts", "prometheus-windows-exporter-0.7.1", "charts/prometheus-windows-exporter")]),
]


def git(mirror, *args, **kw):
    return subprocess.run(["git", "-C", mirror, *args], check=True,
                          stdout=subprocess.PIPE, **kw).stdout


def checkout(mirrors, name, ref, path, dest, sources):
    repo = os.path.join(mirrors, name, "repo")
    data = git(repo, "archive", ref, path)
    strip = len(path.split("/"))
    with tarfile.open(fileobj=io.BytesIO(data)) as t:
        for m in t.getmembers():
            parts = m.name.split("/")[strip:]
            if not parts or not parts[0]:
                continue
            m.name = "/".join(parts)
            t.extract(m, dest, filter="data")
    commit = git(repo, "rev-parse", ref + "^{commit}").decode().strip()
    sources.append((name, ref, commit, path))


def package(chart_dir, dest):
    out = subprocess.run(["helm", "package", chart_dir, "-d", dest], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    return out.strip().rsplit(": ", 1)[1]


def chart_yaml(archive):
    with tarfile.open(archive) as t:
        for m in t.getmembers():
            if m.name.count("/") == 1 and m.name.endswith("/Chart.yaml"):
                return yaml.safe_load(t.extractfile(m).read())
    raise SystemExit(f"{archive}: no Chart.yaml")


def main():
    mirrors = sys.argv[1]
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = os.path.join(root, "testdata", "public-charts")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    sources = []
    indexes = {}
    with tempfile.TemporaryDirectory() as work:
        for n, (repo_url, url, src, deps) in enumerate(CHARTS):
            kind, name, ref, path = src
            if kind == "blob":
                archive = os.path.join(work, f"{n}.tgz")
                with open(archive, "wb") as f:
                    f.write(git(os.path.join(mirrors, name, "repo"), "show", f"{ref}:{path}"))
                commit = git(os.path.join(mirrors, name, "repo"), "rev-parse", ref + "^{commit}").decode().strip()
                sources.append((name, ref, commit, path))
            else:
                d = os.path.join(work, str(n), "chart")
                checkout(mirrors, name, ref, path, d, sources)
                for dn, dref, dpath in deps:
                    dd = os.path.join(work, str(n), "dep-" + dref)
                    checkout(mirrors, dn, dref, dpath, dd, sources)
                    os.makedirs(os.path.join(d, "charts"), exist_ok=True)
                    package(dd, os.path.join(d, "charts"))
                archive = package(d, os.path.join(work, str(n)))
            dest = os.path.join(out, url.removeprefix("https://"))
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(archive, dest)
            with open(dest, "rb") as f:
                digest = hashlib.sha256(f.read()).hexdigest()
            meta = chart_yaml(dest)
            entry = dict(meta)
            entry.update({"urls": [url], "digest": digest,
                          "created": "2026-12-07T00:00:00Z"})
            idx = indexes.setdefault(repo_url, {"apiVersion": "v1", "entries": {},
                                                "generated": "2026-12-07T00:00:00Z"})
            idx["entries"].setdefault(meta["name"], []).append(entry)
    for repo_url, idx in indexes.items():
        p = os.path.join(out, repo_url.removeprefix("https://").rstrip("/"), "index.yaml")
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            yaml.safe_dump(idx, f, sort_keys=True)
    with open(os.path.join(out, "NOTICE.md"), "w") as f:
        f.write(NOTICE_HEAD)
        for name, ref, commit, path in sources:
            owner_repo = name.replace("+", "/")
            f.write(f"- `{path}` of https://github.com/{owner_repo} at `{ref}` ({commit})\n")


NOTICE_HEAD = """# Recorded public charts

What the Helm repositories below serve for the chart versions some public
Argo CD repositories install, recorded by `scripts/record-public-charts.py`
for `tests/it/chart_fetch.rs` and `scripts/public-repo-charts.sh`. Each file sits
at the path of the URL its repository's `index.yaml` names; each
`index.yaml` lists only the recorded versions. Except the archive the
repository itself commits (copied as is, so its digest is the real one),
archives are `helm package` of the source below, so their digests are
not those of the published archives.

The charts are their authors' work under the Apache License 2.0 (each
source repository's LICENSE), unchanged. Not recorded: charts whose
source is not public or whose release cannot be rebuilt from its source
at a tag (see docs/charts.md, "On public repositories"). Sources:

"""

if __name__ == "__main__":
    main()
