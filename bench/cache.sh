#!/usr/bin/env bash
# A diff without a cache, with a cold one and with a warm one, beside
# `kubectl kustomize` of the changed overlay at both revisions.
#
#   bench/cache.sh FLEET HEAD [RUNS]
#
# FLEET is a repository written by bench/gen.py (Kustomize layout for the
# kubectl side; other layouts time gitops-lint only), HEAD one of its heads
# (one, tenpct, shared, gone). Each figure is the median of RUNS runs (default 5)
# of wall clock, CPU (user + system) and peak resident memory, from GNU
# time. `GITOPS_LINT=path/to/binary` (default: target/release/gitops-lint).
# `PAUSE=SECONDS` (default 2) of idle precede each timed run: runs back to
# back inherit the memory the one before freed, which hides what fresh
# memory costs a run that starts after other work (bench/README.md).
#
#   no cache   --no-cache: every run reads everything it needs
#   cold       --cache-dir of a new, empty directory each run
#   warm       --cache-dir filled by one run of the same diff before
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
bin="${GITOPS_LINT:-$root/target/release/gitops-lint}"
fleet="$(cd "$1" && pwd)"
head="$2"
runs="${3:-5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# One run: "wall cpu peak_kib" on stdout.
measure() {
  sleep "${PAUSE:-2}"
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$@" >/dev/null 2>&1 || true
  awk '{ printf "%.3f %.3f %d\n", $1, $2 + $3, $4 }' "$work/time"
}

# The median of each column of RUNS runs of a command.
median_of() {
  local label="$1" setup="$2"
  shift 2
  : >"$work/rows"
  for _ in $(seq "$runs"); do
    eval "$setup"
    measure "$@" >>"$work/rows"
  done
  python3 - "$label" "$work/rows" <<'EOF'
import statistics, sys
rows = [list(map(float, l.split())) for l in open(sys.argv[2]) if l.strip()]
wall, cpu, peak = (statistics.median(c) for c in zip(*rows))
print(f"| {sys.argv[1]} | {wall:.3f} s | {cpu:.3f} s | {peak / 1024:.0f} MiB |")
EOF
}

diff=("$bin" diff "main..$head" --repo "$fleet" --format json --fail-on never)
echo "$(basename "$fleet") main..$head, $runs runs, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), ${PAUSE:-2} s idle before each"
echo
echo "| run | wall | CPU | peak RSS |"
echo "|---|---:|---:|---:|"
median_of "no cache" ":" "${diff[@]}" --no-cache
median_of "cold cache" 'rm -rf "$work/cache"' "${diff[@]}" --cache-dir "$work/cache"
"${diff[@]}" --cache-dir "$work/warm" >/dev/null
median_of "warm cache" ":" "${diff[@]}" --cache-dir "$work/warm"

stats() {
  GITOPS_LINT_STATS=1 "${diff[@]}" "$@" 2>&1 >/dev/null | grep '^stats:' || true
}
echo
echo "no cache: $(stats --no-cache)"
echo "warm:     $(stats --cache-dir "$work/warm")"

# The changed overlay of the `one` head, wherever the fleet's shape puts
# it (bench/gen.py --shape): the overlay whose kustomization changed.
overlay="$(git -C "$fleet" diff --name-only main "$head" -- 'apps/**/overlays/prod/kustomization.yaml' | head -1)"
overlay="${overlay%/kustomization.yaml}"
if [[ "$head" == one && -n "$overlay" ]] && command -v kubectl >/dev/null; then
  app="${overlay%/overlays/prod}"
  for rev in main "$head"; do
    mkdir -p "$work/$rev"
    git -C "$fleet" archive "$rev" "$app" shared | tar -x -C "$work/$rev"
  done
  echo
  echo "| kubectl kustomize $overlay | wall | CPU | peak RSS |"
  echo "|---|---:|---:|---:|"
  median_of "at main" ":" kubectl kustomize "$work/main/$overlay"
  median_of "at $head" ":" kubectl kustomize "$work/$head/$overlay"
fi
