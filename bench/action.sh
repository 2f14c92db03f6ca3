#!/usr/bin/env bash
# Times what the GitHub Action's steps do on a runner, locally: its install
# step (scripts/action-install.sh prepare) downloading a release binary from
# a release directory reached by a file:// URL, as tests/it/install.rs lays it
# out, then its lint step's `diff` (SARIF, Markdown summary and annotations
# at once, facts cache on) on each repository named.
#
#   bench/action.sh [RUNS] REPO RANGE [REPO RANGE]...
#
# GITOPS_LINT=path/to/binary is the binary released (default: the release
# build, target/release/gitops-lint). Prints wall, user and system time of
# each run; not measured: the runner starting, actions/checkout, the SARIF
# upload and the summary comment.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
runs=3
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
  runs="$1"
  shift
fi
[ $# -ge 2 ] && [ $(($# % 2)) -eq 0 ] || {
  echo "usage: $0 [RUNS] REPO RANGE [REPO RANGE]..." >&2
  exit 2
}
binary="${GITOPS_LINT:-$root/target/release/gitops-lint}"
[ -x "$binary" ] || {
  echo "$binary is not built: cargo build --release, or set GITOPS_LINT" >&2
  exit 2
}
version="$(sed -n 's/^version = "\([^"]*\)"$/\1/p' "$root/Cargo.toml" | head -n 1)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The release directory: the asset and its checksum under v<version>/.
target="$(GITOPS_LINT_INSTALL_FUNCTIONS=1 . "$root/scripts/install.sh" && release_target)"
bash "$root/scripts/release-asset.sh" "$target" "$binary" "$work/releases/v$version" >/dev/null

timed() {
  local label="$1"
  shift
  /usr/bin/time -f "$label: %e s wall, %U s user, %S s system, %M KiB peak" "$@" \
    >"$work/out" 2>"$work/err" || [ $? -eq 1 ] || {
    cat "$work/err" >&2
    exit 1
  }
  tail -n 1 "$work/err"
}

for i in $(seq "$runs"); do
  runner="$work/runner-$i"
  mkdir -p "$runner"
  timed "install (run $i)" env RUNNER_TEMP="$runner" GITHUB_OUTPUT="$runner/output" \
    GITHUB_PATH="$runner/path" GITOPS_LINT_VERSION="$version" \
    GITOPS_LINT_RELEASE_BASE_URL="file://$work/releases" \
    bash "$root/scripts/action-install.sh" prepare
  installed="$runner/gitops-lint/bin/gitops-lint"
  set -- "$@"
  args=("$@")
  for ((j = 0; j < ${#args[@]}; j += 2)); do
    repo="${args[j]}"
    range="${args[j + 1]}"
    # A fresh facts cache each run, as a runner's first run of a change.
    timed "diff $(basename "$repo") $range (run $i)" "$installed" diff "$range" \
      --repo "$repo" --cache-dir "$runner/facts-$j" \
      --format "sarif=$runner/results-$j.sarif" --format "markdown=$runner/summary-$j.md" \
      --format github
  done
done
