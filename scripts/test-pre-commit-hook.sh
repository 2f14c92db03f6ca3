#!/usr/bin/env bash
# Runs the hooks declared in .pre-commit-hooks.yaml through the real
# `pre-commit` tool (`pre-commit try-repo`) against a throwaway repository:
# a staged PVC deletion must fail each hook and name GL001; the same commit
# without it must pass. `gitops-lint-system` runs the binary at
# $GITOPS_LINT_BIN (put on PATH) and must build nothing; `gitops-lint` is
# built by pre-commit with cargo. pre-commit 3.0.4 (Debian 12's) must say
# that 3.2.0 is required. Installs pre-commit from PyPI into venvs under the
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
old_venv="$target/pre-commit-3.0.4-venv"
if [ ! -x "$old_venv/bin/pre-commit" ]; then
  python3 -m venv "$old_venv" || fail "python3 -m venv is unavailable"
  "$old_venv/bin/pip" install --quiet --disable-pip-version-check "pre-commit==3.0.4" \
    || fail "cannot install pre-commit 3.0.4 with pip"
fi
[ -x "${GITOPS_LINT_BIN:-}" ] || fail "GITOPS_LINT_BIN is not a gitops-lint binary"

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
# The hook keeps facts between runs in the user's cache directory; a test
# keeps its own.
export XDG_CACHE_HOME="$target/pre-commit-xdg-cache"

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

# The installed binary of the system hook, on PATH the way a team installs it.
mkdir -p "$work/bin"
ln -s "$GITOPS_LINT_BIN" "$work/bin/gitops-lint"
system_path="$work/bin:$PATH"

# 0. pre-commit older than 3.2.0 with a config that says what it needs (as
#    in the README): the version is named, not the `pre-commit` stage.
cat > .pre-commit-config.yaml <<YAML
minimum_pre_commit_version: "3.2.0"
repos:
  - repo: $root
    rev: $(git -C "$root" rev-parse HEAD)
    hooks:
      - id: gitops-lint-system
YAML
if PRE_COMMIT_HOME="$target/pre-commit-3.0.4-home" PATH="$system_path" \
  "$old_venv/bin/pre-commit" run >"$work/old.log" 2>&1; then
  cat "$work/old.log"; fail "pre-commit 3.0.4 ran the hook"
fi
grep -q "pre-commit version 3.2.0 is required but version 3.0.4 is installed" "$work/old.log" \
  || { cat "$work/old.log"; fail "pre-commit 3.0.4 does not say that 3.2.0 is required"; }
rm .pre-commit-config.yaml

# 1. A staged deletion of the PVC: each hook must fail and say why.
git rm -q payments/pvc.yaml
if PATH="$system_path" "$venv/bin/pre-commit" try-repo "$root" gitops-lint-system --verbose >"$work/system-fail.log" 2>&1; then
  cat "$work/system-fail.log"; fail "the system hook passed a staged PVC deletion"
fi
grep -q "GL001 stateful-prune" "$work/system-fail.log" || { cat "$work/system-fail.log"; fail "no GL001 in the system hook output"; }
# The point of the system hook: no environment is built for it.
if grep -q "Installing environment" "$work/system-fail.log"; then
  cat "$work/system-fail.log"; fail "pre-commit built an environment for the system hook"
fi
if "$venv/bin/pre-commit" try-repo "$root" gitops-lint --verbose >"$work/fail.log" 2>&1; then
  cat "$work/fail.log"; fail "the hook passed a staged PVC deletion"
fi
grep -q "GL001 stateful-prune" "$work/fail.log" || { cat "$work/fail.log"; fail "no GL001 in the hook output"; }
grep -q "PersistentVolumeClaim payments/ledger" "$work/fail.log" || { cat "$work/fail.log"; fail "the PVC is not named"; }

# 2. Unstaged deletion only (the index still has the PVC): the hooks pass.
git reset -q HEAD -- payments/pvc.yaml
rm -f payments/pvc.yaml
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {a: "2"}\n' > payments/cm.yaml
git add payments/cm.yaml
if ! PATH="$system_path" "$venv/bin/pre-commit" try-repo "$root" gitops-lint-system --verbose >"$work/system-pass.log" 2>&1; then
  cat "$work/system-pass.log"; fail "the system hook failed a change that deletes nothing"
fi
grep -q "Passed" "$work/system-pass.log" || { cat "$work/system-pass.log"; fail "pre-commit did not report Passed for the system hook"; }
if ! "$venv/bin/pre-commit" try-repo "$root" gitops-lint --verbose >"$work/pass.log" 2>&1; then
  cat "$work/pass.log"; fail "the hook failed a change that deletes nothing"
fi
grep -q "Passed" "$work/pass.log" || { cat "$work/pass.log"; fail "pre-commit did not report Passed"; }

echo "test-pre-commit-hook: ok"
