#!/usr/bin/env bash
# Measures Erlang/OTP's distributed gen_server:call next to Cordis's node-to-node call in one run, with
# every process pinned to CPU 0 and unpinned: latency p50/p99 one call at a time, and calls per second
# with 64 callers in flight. Installs erlang-base when missing and builds the release binaries.
#
#   scripts/compare-erlang.sh [ROUNDS]     (default 3; each round measures both placements of both)
#
# Prints every round, then the medians side by side and their ratios (Cordis over Erlang).
set -euo pipefail
cd "$(dirname "$0")/.."

# shellcheck source=scripts/packages.sh
source scripts/packages.sh
ensure_packages erlang-base python3

rounds="${1:-3}"
iterations="${CORDIS_COMPARE_ITERATIONS:-5000}"
seconds="${CORDIS_COMPARE_SECONDS:-2}"

build_release_product cordis-bench >&2
build_release_product cordis-node >&2
bench=.build/release/cordis-bench

work="$(mktemp -d /tmp/cordis-compare-XXXXXX)"
echo_pid=""
cleanup() {
  if [[ -n "$echo_pid" ]]; then kill "$echo_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
erlc -o "$work" bench/erlang/cordis_echo.erl bench/erlang/cordis_driver.erl

host="$(hostname -s)"
tag="cmp$$"
cookie="cordis-compare-$$-$RANDOM"

# One Erlang measurement: the echo node and the driver node, both pinned to CPU 0 or neither.
erlang_round() {
  local pinned="$1" prefix=()
  if [[ "$pinned" == 1 ]]; then prefix=(taskset -c 0); fi
  "${prefix[@]}" erl -noshell -sname "echo_$tag" -setcookie "$cookie" -pa "$work" -s cordis_echo start \
    >"$work/echo.out" 2>&1 &
  echo_pid=$!
  for _ in $(seq 1 200); do
    grep -q "echo ready" "$work/echo.out" 2>/dev/null && break
    sleep 0.05
  done
  "${prefix[@]}" erl -noshell -sname "driver_$tag" -setcookie "$cookie" -pa "$work" \
    -run cordis_driver main "echo_$tag@$host" "$iterations" 64 "$seconds"
  kill "$echo_pid" 2>/dev/null || true
  wait "$echo_pid" 2>/dev/null || true
  echo_pid=""
}

results="$work/results.jsonl"
for round in $(seq 1 "$rounds"); do
  for pinned in 1 0; do
    line="$(erlang_round "$pinned")"
    echo "round $round erlang pinned=$pinned $line" >&2
    echo "{\"round\":$round,\"pinned\":$pinned,\"erlang\":$line}" >>"$results"
  done
  line="$("$bench" all --json --rounds 1 --only calls)"
  echo "round $round cordis $line" >&2
  echo "{\"round\":$round,\"cordis\":$line}" >>"$results"
done

python3 - "$results" <<'PY'
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
def median(values):
    return statistics.median(values) if values else float("nan")
def erlang(key, pinned):
    return median([r["erlang"][key] for r in rows if "erlang" in r and r["pinned"] == pinned])
def cordis(key):
    return median([r["cordis"][key] for r in rows if "cordis" in r and key in r["cordis"]])
print(f"{'figure':<34}{'Erlang':>12}{'Cordis':>12}{'Cordis/Erlang':>15}")
for pinned, suffix, label in [(1, "_pinned", "pinned to CPU 0"), (0, "", "unpinned")]:
    for name, ekey, ckey in [("call p50 µs (uds)", "erlang_call_p50_us", "call_uds_p50_us"),
                             ("call p99 µs (uds)", "erlang_call_p99_us", "call_uds_p99_us"),
                             ("calls/s, 64 in flight", "erlang_calls_per_s", "calls_per_s")]:
        e, c = erlang(ekey, pinned), cordis(ckey + suffix)
        print(f"{name + ', ' + label:<34}{e:>12.1f}{c:>12.1f}{c / e:>15.2f}")
    floor = cordis("echo_uds_p50_us" + suffix)
    print(f"{'raw echo p50 µs, ' + label:<34}{'':>12}{floor:>12.1f}")
print(f"({len([r for r in rows if 'cordis' in r])} rounds; medians; the machine may be shared)")
PY
