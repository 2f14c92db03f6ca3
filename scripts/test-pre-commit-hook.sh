#!/usr/bin/env bash
# Runs the hook declared in .pre-commit-hooks.yaml through the real
# `pre-commit` tool (`pre-commit try-repo`) against a throwaway repository:
# a staged PVC deletion must fail the hook and name GL001; the same commit
# without it must pass. Installs pre-commit from PyPI into a venv under the
# target directory; fails (never skips) when that is impossible.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
target="${CARGO_TARGET_DIR:-$root/target}"
mkdir -p "$target"
target="$(cd "$target" && pwd)"
venv="$target/pre-commit-venv"

fail() { echo "test-pre-commit-hook: FAIL: $*" >&2; exit 1; }

if [ ! -x "$venv/bin/pre-commit" ]; then
  python3 -m venv "$venv" || fail "python3 -m venv is unavailable"
  "$venv/bin/pip" install --quiet --disable-pip-version-check "pre-commit>=4,<5" \
    || fail "cannot install pre-commit with pip"
fi
"$venv/bin/pre-commit" --version

# pre-commit builds `language: rust` hooks with `cargo install --path`.
# A dedicated, reused target directory and an unoptimised release profile
# keep that build incremental and short; the hook's behaviour is the same.
export PRE_COMMIT_HOME="$target/pre-commit-home"
export CARGO_TARGET_DIR="$target/install-cargo"
export CARGO_PROFILE_RELEASE_OPT_LEVEL=0
export CARGO_PROFILE_RELEASE_DEBUG=false
export CARGO_PROFILE_RELEASE_LTO=false
export CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
export CARGO_PROFILE_RELEASE_INCREMENTAL=true
unset GITHUB_ACTIONS

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
repo="$work/repo"
mkdir -p "$repo/apps" "$repo/payments"
cd "$repo"
git init -q -b main
git config user.name test
git config user.email test@example.invalid
cat > apps/payments.yaml <<'YAML'
apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: payments
  namespace: argocd
spec:
  source:
    repoURL: https://git.example.com/gitops.git
    targetRevision: main
    path: payments
  destination:
    server: https://kubernetes.default.svc
    namespace: payments
  syncPolicy:
    automated:
      prune: true
YAML
cat > payments/pvc.yaml <<'YAML'
apiVersion: v1
kind: PersistentVolumeClaim
metadata:
  name: ledger
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
YAML
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: "1"}\n' > payments/cm.yaml
git add -A
git commit -q -m base

# 1. A staged deletion of the PVC: the hook must fail and say why.
git rm -q payments/pvc.yaml
if "$venv/bin/pre-commit" try-repo "$root" gitops-lint --verbose >"$work/fail.log" 2>&1; then
  cat "$work/fail.log"; fail "the hook passed a staged PVC deletion"
fi
grep -q "GL001 stateful-prune" "$work/fail.log" || { cat "$work/fail.log"; fail "no GL001 in the hook output"; }
grep -q "PersistentVolumeClaim payments/ledger" "$work/fail.log" || { cat "$work/fail.log"; fail "the PVC is not named"; }

# 2. Unstaged deletion only (the index still has the PVC): the hook passes.
git reset -q HEAD -- payments/pvc.yaml
rm -f payments/pvc.yaml
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: "2"}\n' > payments/cm.yaml
git add payments/cm.yaml
if ! "$venv/bin/pre-commit" try-repo "$root" gitops-lint --verbose >"$work/pass.log" 2>&1; then
  cat "$work/pass.log"; fail "the hook failed a change that deletes nothing"
fi
grep -q "Passed" "$work/pass.log" || { cat "$work/pass.log"; fail "pre-commit did not report Passed"; }

echo "test-pre-commit-hook: ok"
