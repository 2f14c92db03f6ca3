#!/usr/bin/env bash
# The Action's sticky pull-request comment: the Markdown report posted once
# and updated in place on every later run, found by a hidden marker. Where
# the token cannot write (a pull request from a fork gets a read-only
# token: 403), the report goes to the job summary instead.
#
#   scripts/action-comment.sh REPORT.md
#
# Environment (set by action.yml): GITHUB_API_URL, GITHUB_REPOSITORY,
# GITOPS_LINT_PR (the pull request's number), GITOPS_LINT_TOKEN, and
# GITHUB_STEP_SUMMARY (the fallback; GITOPS_LINT_SUMMARY_WRITTEN=true when
# the report is already there). gitops-lint itself contacts no one: only
# this script speaks to the API, with curl.
set -euo pipefail

report="${1:?usage: action-comment.sh REPORT.md}"
marker='<!-- gitops-lint: sticky comment, updated in place -->'
api="${GITHUB_API_URL:-https://api.github.com}"
api="${api%/}"
repo="${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is not set}"
pr="${GITOPS_LINT_PR:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

fallback() {
  echo "gitops-lint: $1; the report is in the job summary instead"
  if [ "${GITOPS_LINT_SUMMARY_WRITTEN:-false}" != "true" ] && [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    cat "$report" >> "$GITHUB_STEP_SUMMARY"
  fi
  exit 0
}

if ! [[ "$pr" =~ ^[1-9][0-9]*$ ]]; then
  fallback "not a pull request run (no pull request number)"
fi
if [ ! -s "$report" ]; then
  echo "gitops-lint: no report to comment"
  exit 0
fi
if [ -z "${GITOPS_LINT_TOKEN:-}" ]; then
  fallback "no token to comment with"
fi

# One request: its status on stdout, its body in $work/response. The token
# goes in a header file, never on a command line another process can read.
printf 'Authorization: Bearer %s\n' "$GITOPS_LINT_TOKEN" > "$work/auth"
request() {
  local method="$1" url="$2" data="${3:-}"
  local args=(-sS -o "$work/response" -w '%{http_code}' -X "$method"
    --max-time 30 -H @"$work/auth"
    -H 'Accept: application/vnd.github+json'
    -H 'X-GitHub-Api-Version: 2022-11-28')
  if [ -n "$data" ]; then
    args+=(-H 'Content-Type: application/json' --data-binary @"$data")
  fi
  curl "${args[@]}" "$url" || echo 000
}

# The body: the marker, then the report (already under GitHub's limit).
{ printf '%s\n' "$marker"; cat "$report"; } | jq -Rs '{body: .}' > "$work/body.json"

# The comment with the marker, among the pull request's first 1,000.
existing=""
for page in $(seq 1 10); do
  status="$(request GET "$api/repos/$repo/issues/$pr/comments?per_page=100&page=$page")"
  case "$status" in
    200) ;;
    401|403|404) fallback "the token cannot read this pull request's comments (HTTP $status)" ;;
    *) fallback "reading the pull request's comments failed (HTTP $status)" ;;
  esac
  existing="$(jq -r --arg m "$marker" '[.[] | select((.body // "") | startswith($m)) | .id] | first // empty' "$work/response")"
  if [ -n "$existing" ] || [ "$(jq 'length' "$work/response")" -lt 100 ]; then
    break
  fi
done

if [ -n "$existing" ]; then
  if ! [[ "$existing" =~ ^[0-9]+$ ]]; then
    fallback "an unexpected comment id"
  fi
  status="$(request PATCH "$api/repos/$repo/issues/comments/$existing" "$work/body.json")"
  what="updated"
else
  status="$(request POST "$api/repos/$repo/issues/$pr/comments" "$work/body.json")"
  what="posted"
fi
case "$status" in
  200|201) echo "gitops-lint: pull request comment $what" ;;
  401|403|404) fallback "the token cannot write to this pull request (HTTP $status; a pull request from a fork gets a read-only token)" ;;
  *) fallback "commenting failed (HTTP $status)" ;;
esac
