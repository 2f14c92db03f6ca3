#!/usr/bin/env bash
# Benchmark gitops-lint against `kubectl kustomize` on synthetic fleets.
#
#   bench/run.sh                       # N = 100 150 500 2000, Kustomize layout
#   bench/run.sh --sizes "150" --layout plain
#   bench/run.sh --help                # every option (see bench/bench.py)
#
# Needs: a Rust toolchain, Python 3, git, hyperfine, kubectl (Kustomize
# v5.5 inside), GNU time at /usr/bin/time. Results go to bench/out/.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
if [[ -z "${GITOPS_LINT:-}" ]]; then
  cargo build --release --quiet --manifest-path "$root/Cargo.toml"
  GITOPS_LINT="$root/target/release/gitops-lint"
fi
exec python3 "$here/bench.py" --bin "$GITOPS_LINT" "$@"
