#!/usr/bin/env bash
# The web console's figures, in headless Chromium against real nodes (release builds):
#   1. how long a fiber change takes from the node's event to the open page's DOM (p50, p99), over
#      ROUNDS enable/disable flips of one entry on a three-node cluster;
#   2. with NODES nodes of ENTRIES entries each (one clock, greeters using it, the rest flaky plugins that
#      run): the Plugins page's first render, the Graph page's SVG (Graphviz) and the console's memory.
# Usage: scripts/web-console-figures.sh [ROUNDS [NODES [ENTRIES]]]   (defaults 200, 8, 1000)
# Needs chromium, chromium-driver, python3-selenium and graphviz (installed if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/packages.sh
source scripts/packages.sh
ensure_packages chromium chromium-driver python3-selenium graphviz
rounds=${1:-200}
nodes=${2:-8}
entries=${3:-1000}
build_release_product cordis-node >&2
build_release_product cordis-console >&2
bin=.build/release
folder=$(mktemp -d /tmp/cordis-web-figures.XXXXXX)
pids=()
stop() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$folder"
}
trap stop EXIT

# Starts node $1 with the entries file $2, linked to node a unless it is a; waits until it listens.
start_node() {
  local name=$1 peers=()
  [[ "$name" != a ]] && peers=(--peer "unix:$folder/a.sock")
  "$bin/cordis-node" --name "$name" --entries "$2" --listen "unix:$folder/$name.sock" "${peers[@]}" \
    >"$folder/$name.log" 2>&1 &
  pids+=($!)
  until grep -q "listening on" "$folder/$name.log"; do
    kill -0 "${pids[-1]}" || { cat "$folder/$name.log" >&2; exit 1; }
    sleep 0.05
  done
}
# Starts the web console on node a; sets url and console_pid.
start_console() {
  "$bin/cordis-console" --node "unix:$folder/a.sock" web >"$folder/console.log" 2>&1 &
  pids+=($!)
  console_pid=$!
  until grep -q "?token=" "$folder/console.log"; do
    kill -0 "$console_pid" || { cat "$folder/console.log" >&2; exit 1; }
    sleep 0.05
  done
  url=$(grep -o 'http://[^ ]*' "$folder/console.log")
}
stop_all() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
  rm -f "$folder"/*.sock
}

echo '{"version":1,"entries":[{"id":"clock","plugin":"clock"},{"id":"spare","plugin":"greeter","disabled":true}]}' >"$folder/a.json"
echo '{"version":1,"entries":[{"id":"greeter","plugin":"greeter"}]}' >"$folder/b.json"
echo '{"version":1,"entries":[{"id":"greeter","plugin":"greeter"}]}' >"$folder/c.json"
for name in a b c; do start_node "$name" "$folder/$name.json"; done
start_console
echo "web console: fiber change to DOM over $rounds flips" >&2
/usr/bin/python3 Tests/Browser/web_console_figures.py latency "$bin/cordis-console" "$folder" a "$url" "$rounds"
stop_all

python3 - "$folder" "$nodes" "$entries" <<'PY'
import json, sys
folder, nodes, entries = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
for index in range(nodes):
    name = chr(ord("a") + index)
    tree = [{"id": "clock", "plugin": "clock"}]
    tree += [{"id": "g%d" % n, "plugin": "greeter"} for n in range(min(99, entries - 1))]
    tree += [{"id": "f%d" % n, "plugin": "flaky"} for n in range(entries - len(tree))]
    json.dump({"version": 1, "entries": tree}, open("%s/%s.json" % (folder, name), "w"))
PY
letters=(a b c d e f g h i j k l m n o p q r s t u v w x y z)
for ((index = 0; index < nodes; index++)); do
  start_node "${letters[index]}" "$folder/${letters[index]}.json"
done
start_console
echo "web console: $nodes nodes x $entries entries (waiting until every fiber is active)" >&2
for ((second = 0; second < 600; second++)); do
  active=$("$bin/cordis-console" --node "unix:$folder/a.sock" --json status |
    python3 -c 'import json, sys; print(sum(e.get("state") == "active" for n in json.load(sys.stdin)["nodes"] for e in n["entries"]))')
  ((active >= nodes * entries)) && break
  sleep 1
done
/usr/bin/python3 Tests/Browser/web_console_figures.py large "$url" "$console_pid" "$nodes" "$entries"
