#!/bin/sh
# Installs a gitops-lint release binary, verified against the release's
# SHA-256 checksum, without a Rust toolchain.
#
#   scripts/install.sh VERSION [DIR]
#
# VERSION is a release (`0.1.0` or `v0.1.0`); DIR is where the binary goes
# (default: $GITOPS_LINT_INSTALL_DIR, else ~/.local/bin). The asset is
# BASE/vVERSION/gitops-lint-TARGET beside gitops-lint-TARGET.sha256 (the
# layout scripts/release-asset.sh writes), where BASE is
# $GITOPS_LINT_RELEASE_BASE_URL, else
# https://github.com/$GITOPS_LINT_REPOSITORY/releases/download.
# GITOPS_LINT_TARGET overrides the Rust target triple detected here.
#
# A checksum that does not match stops the install with exit status 1: the
# download is deleted without being run or installed.
set -eu

# The platform detection and checksum scripts/action-install.sh uses too:
# it sources this file with GITOPS_LINT_INSTALL_FUNCTIONS=1, which stops
# here, after the functions (this file stays one download on its own).

# Prints the Rust target triple of the release asset for this machine (the
# assets scripts/release-asset.sh makes in .github/workflows/release.yml);
# when no release binary is built for it, prints why and returns 1.
release_target() {
  case "$(uname -m)" in
    x86_64 | amd64) release_target_arch=x86_64 ;;
    aarch64 | arm64) release_target_arch=aarch64 ;;
    *)
      echo "no release binary is built for $(uname -m)"
      return 1
      ;;
  esac
  case "$(uname -s)" in
    Linux)
      # The Linux assets link against glibc. musl's ldd exits 1 after
      # naming itself, hence no pipe into grep.
      case "$(ldd --version 2>&1 || true)" in
        *musl*)
          echo "the Linux release binaries need glibc and this system has musl"
          return 1
          ;;
      esac
      release_target_os=unknown-linux-gnu
      ;;
    Darwin) release_target_os=apple-darwin ;;
    *)
      echo "no release binary is built for $(uname -s)"
      return 1
      ;;
  esac
  echo "$release_target_arch-$release_target_os"
}

# Prints the SHA-256 of file $1 in lowercase hex.
sha256_of() {
  if command -v sha256sum >/dev/null; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

if [ -n "${GITOPS_LINT_INSTALL_FUNCTIONS:-}" ]; then
  return 0
fi

fail() {
  echo "install.sh: $*" >&2
  exit 1
}

[ $# -ge 1 ] && [ $# -le 2 ] || {
  echo "usage: $0 VERSION [DIR]" >&2
  exit 2
}
version="${1#v}"
case "$version" in
  [0-9]*) ;;
  *) fail "\`$1\` is not a release version (e.g. 0.1.0)" ;;
esac
dir="${2:-${GITOPS_LINT_INSTALL_DIR:-$HOME/.local/bin}}"

base="${GITOPS_LINT_RELEASE_BASE_URL:-}"
if [ -z "$base" ]; then
  [ -n "${GITOPS_LINT_REPOSITORY:-}" ] ||
    fail "set GITOPS_LINT_REPOSITORY (owner/name of the gitops-lint repository on GitHub) or GITOPS_LINT_RELEASE_BASE_URL"
  base="https://github.com/$GITOPS_LINT_REPOSITORY/releases/download"
fi

target="${GITOPS_LINT_TARGET:-}"
if [ -z "$target" ]; then
  target="$(release_target)" ||
    fail "$target: build from source (cargo install --locked --git https://github.com/${GITOPS_LINT_REPOSITORY:-gitops-lint/gitops-lint} gitops-lint)"
fi

command -v curl >/dev/null || fail "curl is needed to download the release"
command -v sha256sum >/dev/null || command -v shasum >/dev/null ||
  fail "sha256sum or shasum is needed to verify the download"
asset="gitops-lint-$target"
url="${base%/}/v$version/$asset"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT INT TERM
curl --fail --silent --show-error --location --proto '=https,file' \
  --connect-timeout 10 --max-time 300 --retry 2 \
  -o "$tmp/$asset.sha256" "$url.sha256" || fail "cannot download $url.sha256"
curl --fail --silent --show-error --location --proto '=https,file' \
  --connect-timeout 10 --max-time 300 --retry 2 \
  -o "$tmp/$asset" "$url" || fail "cannot download $url"

want="$(head -n 1 "$tmp/$asset.sha256" | cut -d' ' -f1 | tr 'A-F' 'a-f')"
case "$want" in
  *[!0-9a-f]* | "") fail "$url.sha256 holds no SHA-256 checksum; nothing was installed" ;;
esac
[ "${#want}" -eq 64 ] || fail "$url.sha256 holds no SHA-256 checksum; nothing was installed"
got="$(sha256_of "$tmp/$asset")"
[ "$want" = "$got" ] ||
  fail "checksum mismatch for $url: expected $want (from $asset.sha256), got $got; the download was deleted and nothing was installed"

mkdir -p "$dir"
cp "$tmp/$asset" "$dir/gitops-lint.tmp.$$"
chmod 755 "$dir/gitops-lint.tmp.$$"
mv -f "$dir/gitops-lint.tmp.$$" "$dir/gitops-lint"
echo "installed $dir/gitops-lint (sha256 $got, verified)"
"$dir/gitops-lint" --version
case ":$PATH:" in
  *":$dir:"*) ;;
  *) echo "note: $dir is not on PATH" ;;
esac
