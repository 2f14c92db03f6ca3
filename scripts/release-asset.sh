#!/usr/bin/env bash
# Packages a built binary as a release asset, the form scripts/action-install.sh
# downloads: DIR/gitops-lint-TARGET and DIR/gitops-lint-TARGET.sha256 (one
# `sha256sum` line, so `sha256sum -c` checks it).
#   scripts/release-asset.sh TARGET BINARY DIR
set -euo pipefail
[ $# -eq 3 ] || { echo "usage: $0 TARGET BINARY DIR" >&2; exit 2; }
target="$1" binary="$2" dir="$3"
asset="gitops-lint-$target"
mkdir -p "$dir"
cp "$binary" "$dir/$asset"
chmod 755 "$dir/$asset"
cd "$dir"
if command -v sha256sum >/dev/null; then
  sha256sum "$asset" >"$asset.sha256"
else
  shasum -a 256 "$asset" >"$asset.sha256"
fi
cat "$asset.sha256"
