#!/usr/bin/env bash
# Follows docs/your-own-node.md (or the page given, such as docs/testing.md) literally: in a temporary folder it puts a copy of this checkout under the
# name the page uses (cordis-src), then takes the page's code blocks in order and does what they say:
#   ```sh          runs the commands with bash (a `cd` carries over to the later blocks)
#   ```sh node     starts the command in the background and waits (60 s at most) for `listening on`
#   ```text        lines the node started by the block before must print (checked once it is listening)
#   ```LANG FILE   writes the block to FILE
# Every node it started is stopped at the end. Exit 0 when every step did what the page says.
#
#   scripts/check-own-node.sh [--keep DIR] [PAGE]   DIR: work there and keep it (a second run builds in
#                                                    seconds); PAGE: the page to follow (docs/your-own-node.md)
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

keep=""
if [[ "${1:-}" == "--keep" ]]; then
  keep="${2:?--keep needs a directory}"
  shift 2
fi
page="$repo/${1:-docs/your-own-node.md}"
[[ -f "$page" ]] || { echo "error: no page $page" >&2; exit 64; }
if [[ -n "$keep" ]]; then
  mkdir -p "$keep"
  work="$(cd "$keep" && pwd)"
else
  work="$(mktemp -d /tmp/cordis-own-node.XXXXXX)"
fi
pids=()
cleanup() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  if [[ -z "$keep" ]]; then rm -rf "$work"; fi
}
trap cleanup EXIT

# The clone the page assumes: this checkout's files as they are on disk (tracked and new ones, not
# ignored ones such as .build), with their times, so that a kept folder rebuilds only what changed.
mkdir -p "$work/cordis-src"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf -) | tar -xf - -C "$work/cordis-src"

# The page's blocks as records: kind, argument, body (NUL-separated), in order.
blocks="$work/blocks"
python3 - "$page" >"$blocks" <<'PYTHON'
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
for match in re.finditer(r"^```([^\n]*)\n(.*?)^```$", text, re.S | re.M):
    info = match.group(1).split()
    kind = info[0] if info else ""
    argument = info[1] if len(info) > 1 else ""
    sys.stdout.write(f"{kind}\0{argument}\0{match.group(2)}\0")
PYTHON

cd "$work"
step=0
last_log=""
started=$SECONDS
while IFS= read -r -d '' kind && IFS= read -r -d '' argument && IFS= read -r -d '' body; do
  step=$((step + 1))
  if [[ "$kind" == sh && -z "$argument" ]]; then
    echo "check-own-node: step $step: run" >&2
    printf '%s' "$body" | sed 's/^/  $ /' >&2
    # The commands run in this shell, so that `cd` carries over; each one must succeed.
    eval "$body"
  elif [[ "$kind" == sh && "$argument" == node ]]; then
    last_log="$work/node-$step.log"
    echo "check-own-node: step $step: start a node, wait for \"listening on\"" >&2
    printf '%s' "$body" | sed 's/^/  $ /' >&2
    : >"$last_log"
    bash -c "exec $body" >"$last_log" 2>&1 &
    pids+=("$!")
    deadline=$((SECONDS + 60))
    until grep -q "listening on" "$last_log"; do
      if ! kill -0 "${pids[-1]}" 2>/dev/null || ((SECONDS > deadline)); then
        echo "error: step $step: the node did not print \"listening on\"; its output:" >&2
        cat "$last_log" >&2
        exit 1
      fi
      sleep 0.1
    done
  elif [[ "$kind" == text && -n "$last_log" ]]; then
    echo "check-own-node: step $step: the node's output has the page's lines" >&2
    while IFS= read -r line; do
      [[ -z "$line" ]] && continue
      deadline=$((SECONDS + 30))
      until grep -qxF -- "$line" "$last_log"; do
        if ((SECONDS > deadline)); then
          echo "error: step $step: the node never printed: $line" >&2
          echo "its output:" >&2
          cat "$last_log" >&2
          exit 1
        fi
        sleep 0.1
      done
      echo "  ok: $line" >&2
    done <<<"$body"
  elif [[ -n "$argument" && "$kind" != sh ]]; then
    echo "check-own-node: step $step: write $argument" >&2
    mkdir -p "$(dirname "$argument")"
    printf '%s' "$body" >"$argument"
  fi
done <"$blocks"
echo "check-own-node: $(basename "$page"): the page's $step blocks did what it says ($((SECONDS - started)) s)" >&2
