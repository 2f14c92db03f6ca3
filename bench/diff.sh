#!/usr/bin/env bash
# What the rendered diff costs: the same diff with and without it, paced
# and paired by farm-bench (median of N runs, A/B pair by pair).
#
#   bench/diff.sh [N]     (default 7 runs)
#
# Fleets from bench/gen.py in bench/out/diff/ (reused): 2,000 apps, head
# `one` (one app's overlay changed), and 1,000 apps, head `tenpct` (100
# apps changed), the second written as Markdown. GITOPS_LINT=path/to/binary
# skips the release build. The cache directory is warm for both commands.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
runs="${1:-7}"
out="$here/out/diff"
mkdir -p "$out"
bin="${GITOPS_LINT:-}"
if [ -z "$bin" ]; then
  cargo build --release --manifest-path "$here/../Cargo.toml" >&2
  bin="$here/../target/release/gitops-lint"
fi
for n in 2000 1000; do
  if [ ! -d "$out/fleet$n" ]; then
    python3 "$here/gen.py" "$out/fleet$n" --apps "$n" --layout kustomize >&2
  fi
done
cache="$out/cache"
echo "## one app changed of 2,000: json, with the rendered diff (A) and without (B)"
(cd "$out/fleet2000" && farm-bench -n "$runs" --warmup 2 --timeout 600 \
  --vs "$bin diff main..one --format json --cache-dir $cache --no-diff" \
  -- "$bin" diff main..one --format json --cache-dir "$cache")
echo
echo "## 100 apps changed of 1,000: markdown, with the rendered diff (A) and without (B)"
(cd "$out/fleet1000" && farm-bench -n "$runs" --warmup 2 --timeout 600 \
  --vs "$bin diff main..tenpct --format markdown --cache-dir $cache --no-diff" \
  -- "$bin" diff main..tenpct --format markdown --cache-dir "$cache")
echo
(cd "$out/fleet1000" && "$bin" diff main..tenpct --format markdown --cache-dir "$cache" | wc -c | xargs echo "markdown bytes with the rendered diff:")
