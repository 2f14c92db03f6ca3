#!/usr/bin/env bash
# Counts the apps of a clone of a public Argo CD repository that render,
# before (empty chart cache) and after (the cache filled with the charts
# recorded in testdata/public-charts, as a fetch from their real
# repositories would fill it), both with --offline: what the recorded
# charts change. The cache is filled by the chart_fetch test that proves it.
#
# Usage: scripts/public-repo-charts.sh CLONE [check|diff RANGE]
#   (PATH must hold helm and kubectl if the repository's apps need them)
set -euo pipefail
clone=$(cd "${1:?usage: $0 CLONE [check|diff RANGE]}" && pwd)
shift
cmd=("${@:-check}")
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/filled"
(cd "$root" && GITOPS_LINT_KEEP_PUBLIC_CHART_CACHE="$work/filled" \
  cargo test -q --test it chart_fetch::charts_recorded_from_public_repositories >&2)
bin=$root/target/debug/gitops-lint
count() {
  python3 -c '
import collections, json, sys
apps = json.load(sys.stdin).get("apps", [])
c = collections.Counter(a.get("status") for a in apps)
print(len(apps), "apps:", ", ".join(k + " " + str(c[k]) for k in ("rendered", "partial", "unrendered", "external")))
for a in apps:
    if a.get("status") != "rendered":
        print("  " + a["name"] + ": " + a["status"])
'
}
for state in empty filled; do
  mkdir -p "$work/$state"
  echo "== $state chart cache"
  (cd "$clone" && "$bin" "${cmd[@]}" --offline --cache-dir "$work/$state" --format json || true) | count
done
