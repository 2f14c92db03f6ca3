#!/usr/bin/env bash
# Puts a gitops-lint binary on the runner's PATH for action.yml, the fastest
# trustworthy way first:
#
#   action-install.sh prepare   the `binary` input; else the release asset of
#                               the `version` input, or of the action's own
#                               release (its tag, or the version of its
#                               source at a SHA pin or a branch) for this
#                               OS and architecture, used only when its
#                               sha256 matches the published `.sha256`;
#                               prints the cache key and directory for the
#                               fallback either way.
#   action-install.sh build     the binary restored by actions/cache into the
#                               cache directory, else `cargo install --locked`
#                               of the action's source into it.
#
# Environment (action.yml sets these from its inputs and contexts):
#   GITOPS_LINT_BINARY             a binary to use as it is (input `binary`)
#   GITOPS_LINT_DOWNLOAD           'false': never download (input `download`)
#   GITOPS_LINT_VERSION            the release to download (input `version`; default:
#                                  the action's ref when it is a `v*` tag, else
#                                  the version of the action's Cargo.toml)
#   GITOPS_LINT_ACTION_REF         the ref the action was used at (v1.2.3, main, a SHA)
#   GITOPS_LINT_ACTION_REPOSITORY  owner/name of the action
#   GITOPS_LINT_RELEASE_BASE_URL   where releases are, default
#                                  $GITHUB_SERVER_URL/OWNER/NAME/releases/download;
#                                  the asset is BASE/vVERSION/gitops-lint-TARGET
#   GITOPS_LINT_SOURCE             the action's source (default: this script's repository)
#   RUNNER_TEMP, RUNNER_OS, RUNNER_ARCH, GITHUB_OUTPUT, GITHUB_PATH as a runner sets them.
#
# Exit status 2 when no binary can be had, and when a downloaded asset does
# not match its checksum: that binary is deleted unrun, and the run stops
# rather than build quietly around an asset that may have been tampered with.
set -euo pipefail

mode="${1:-}"
source_dir="${GITOPS_LINT_SOURCE:-$(cd "$(dirname "$0")/.." && pwd)}"
temp="${RUNNER_TEMP:?RUNNER_TEMP is not set}"
bin_dir="$temp/gitops-lint/bin"
cache_dir="$temp/gitops-lint-cache"
output="${GITHUB_OUTPUT:-/dev/null}"

error() {
  echo "::error title=gitops-lint::$*"
  exit 2
}

# release_target and sha256_of, shared with the install script.
# shellcheck source=install.sh
GITOPS_LINT_INSTALL_FUNCTIONS=1 . "$(dirname "$0")/install.sh"

# Puts $1 into the bin directory, on PATH for the later steps, and shows its version.
install_binary() {
  mkdir -p "$bin_dir"
  cp "$1" "$bin_dir/gitops-lint.tmp"
  chmod +x "$bin_dir/gitops-lint.tmp"
  mv -f "$bin_dir/gitops-lint.tmp" "$bin_dir/gitops-lint"
  echo "$bin_dir" >>"${GITHUB_PATH:-/dev/null}"
  "$bin_dir/gitops-lint" --version
}

# The cache key: what the built binary depends on. The ref names it for
# people; the source digest keeps a moving ref (`main`) from reusing a stale
# build; the toolchain and platform keep builds apart.
cache_key() {
  local toolchain source_digest
  toolchain="$(rustc --version 2>/dev/null || echo no-rustc)"
  source_digest="$(
    cd "$source_dir"
    find Cargo.toml Cargo.lock src -type f | LC_ALL=C sort | while IFS= read -r f; do
      printf '%s %s\n' "$(sha256_of "$f")" "$f"
    done >"$temp/gitops-lint-source.sha256"
    sha256_of "$temp/gitops-lint-source.sha256"
  )"
  rm -f "$temp/gitops-lint-source.sha256"
  local ref="${GITOPS_LINT_ACTION_REF:-local}"
  # Cache keys may not contain commas; refs (branch names) may.
  ref="${ref//,/_}"
  printf 'gitops-lint-%s-%s-%s-%s-%s\n' \
    "${RUNNER_OS:-$(uname -s)}" "${RUNNER_ARCH:-$(uname -m)}" "$ref" \
    "$(printf '%s' "$toolchain" | tr -c 'A-Za-z0-9.\n' '_' | cut -c1-40)" \
    "${source_digest:0:16}"
}

# Tries the release asset of the action's ref; 0 when it is installed, 1
# when there is none to use (the caller builds); exits 2 on a checksum
# mismatch.
try_release() {
  local ref="${GITOPS_LINT_ACTION_REF:-}"
  if [ "${GITOPS_LINT_DOWNLOAD:-true}" = "false" ]; then
    echo "release download switched off (download: false): building from source"
    return 1
  fi
  # The release to download: the `version` input, else the action's ref
  # when it is a release tag, else (a branch, a SHA pin) the version of the
  # action's source, its Cargo.toml: a SHA pin downloads too.
  local version="${GITOPS_LINT_VERSION:-}"
  if [ -z "$version" ]; then
    case "$ref" in
      v[0-9]*) version="$ref" ;;
      *) version="$(sed -n 's/^version = "\([^"]*\)"$/\1/p' "$source_dir/Cargo.toml" | head -n 1)" ;;
    esac
  fi
  version="v${version#v}"
  case "$version" in
    v[0-9]*) ;;
    *)
      echo "no release version for the action's ref \`${ref:-(none)}\`: building from source"
      return 1
      ;;
  esac
  local base="${GITOPS_LINT_RELEASE_BASE_URL:-}"
  if [ -z "$base" ]; then
    if [ -z "${GITOPS_LINT_ACTION_REPOSITORY:-}" ]; then
      echo "the action's repository is unknown: building from source"
      return 1
    fi
    base="${GITHUB_SERVER_URL:-https://github.com}/$GITOPS_LINT_ACTION_REPOSITORY/releases/download"
  fi
  local target
  if ! target="$(release_target)"; then
    echo "$target: building from source"
    return 1
  fi
  if ! command -v curl >/dev/null; then
    echo "curl is not installed: building from source"
    return 1
  fi
  local asset="gitops-lint-$target"
  local url="${base%/}/$version/$asset"
  local dir="$temp/gitops-lint/download"
  rm -rf "$dir"
  mkdir -p "$dir"
  local curl_opts=(--fail --silent --show-error --location --connect-timeout 10 --max-time 300 --retry 2)
  if ! curl "${curl_opts[@]}" -o "$dir/$asset.sha256" "$url.sha256" 2>"$dir/curl.log" ||
    ! curl "${curl_opts[@]}" -o "$dir/$asset" "$url" 2>>"$dir/curl.log"; then
    echo "no release asset $url ($(tr '\n' ' ' <"$dir/curl.log")): building from source"
    rm -rf "$dir"
    return 1
  fi
  local want got
  want="$(cut -d' ' -f1 <"$dir/$asset.sha256" | head -n1 | tr 'A-F' 'a-f')"
  got="$(sha256_of "$dir/$asset")"
  if ! [[ "$want" =~ ^[0-9a-f]{64}$ ]]; then
    rm -rf "$dir"
    error "$url.sha256 holds no sha256; the downloaded binary was deleted without running it. Set \`download: false\` to build from source."
  fi
  if [ "$want" != "$got" ]; then
    rm -rf "$dir"
    error "checksum mismatch for $url: expected sha256 $want (from $asset.sha256), got $got; the downloaded binary was deleted without running it. A corrupted or replaced release asset needs a person to look at it; set \`download: false\` to build from source meanwhile."
  fi
  chmod +x "$dir/$asset"
  # Verified, so safe to run: a binary this machine cannot run (an older
  # glibc than the release was linked against) falls back to a build.
  if ! "$dir/$asset" --version >/dev/null 2>"$dir/run.log"; then
    echo "::warning title=gitops-lint::the release binary $asset does not run here ($(head -c 300 "$dir/run.log")): building from source"
    rm -rf "$dir"
    return 1
  fi
  echo "release binary $url (sha256 $got, verified)"
  install_binary "$dir/$asset"
  rm -rf "$dir"
  return 0
}

case "$mode" in
  prepare)
    echo "cache-dir=$cache_dir" >>"$output"
    echo "cache-key=$(cache_key)" >>"$output"
    if [ -n "${GITOPS_LINT_BINARY:-}" ]; then
      if [ ! -x "$GITOPS_LINT_BINARY" ] || [ -d "$GITOPS_LINT_BINARY" ]; then
        error "binary \`$GITOPS_LINT_BINARY\` does not exist or is not executable"
      fi
      install_binary "$GITOPS_LINT_BINARY"
      echo "installed=binary" >>"$output"
    elif try_release; then
      echo "installed=release" >>"$output"
    else
      echo "installed=" >>"$output"
    fi
    ;;
  build)
    cached="$cache_dir/bin/gitops-lint"
    if [ -x "$cached" ] && "$cached" --version >/dev/null 2>&1; then
      echo "cached build $cached"
    else
      if ! command -v cargo >/dev/null; then
        error "cargo is not installed and no release binary was used; add a Rust toolchain step (e.g. dtolnay/rust-toolchain) or use the action at a release tag"
      fi
      echo "building gitops-lint from $source_dir with cargo install --locked (cached for later runs)"
      rm -rf "$cache_dir"
      cargo install --path "$source_dir" --locked --root "$cache_dir" --quiet
    fi
    install_binary "$cached"
    ;;
  *)
    echo "usage: $0 prepare|build" >&2
    exit 2
    ;;
esac
