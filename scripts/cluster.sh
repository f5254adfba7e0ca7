#!/usr/bin/env bash
# Runs a local Cordis cluster: three cordis-node processes on Unix sockets in a temporary folder, the
# built-in plugins spread across them so that consumers on one node use services of another, and the
# console's live view on it. Ctrl-C stops every process it started and removes the folder.
#
#   scripts/cluster.sh            build, start the cluster, open `cordis-console watch`
#   scripts/cluster.sh --tour     a guided tour: each step printed with the resulting graph
#   options: --no-build (use the binaries already built), --batch (no pauses, no live view: for tests)
# It builds only cordis-node and cordis-console, and only when no build of them is newer than the sources:
# a release build (.build/release) or a debug one (.build/debug) that is up to date is used as it is;
# otherwise it builds them in debug, with the flags of scripts/test.sh, so each reuses the other's work.
set -euo pipefail
cd "$(dirname "$0")/.."

tour=0
build=1
batch=0
for argument in "$@"; do
  case "$argument" in
    --tour) tour=1 ;;
    --no-build) build=0 ;;
    --batch) batch=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "error: unknown option $argument" >&2; exit 64 ;;
  esac
done

say() { echo "cluster: $*" >&2; }
products=(cordis-node cordis-console)
# Whether folder $1 holds every product, none of them older than a source or the manifest.
current() {
  local product
  for product in "${products[@]}"; do
    [[ -x "$1/$product" ]] || return 1
    [[ -z "$(find Sources Package.swift -newer "$1/$product" -print -quit)" ]] || return 1
  done
}
# Whether folder $1 holds every product.
present() {
  local product
  for product in "${products[@]}"; do [[ -x "$1/$product" ]] || return 1; done
}

if [[ -n "${CORDIS_BIN:-}" ]]; then
  bin="$CORDIS_BIN"
elif current .build/release; then
  bin=.build/release
  say "using the release build in $bin (newer than every source)"
elif current .build/debug; then
  bin=.build/debug
  say "using the debug build in $bin (newer than every source)"
elif ((!build)); then
  if present .build/release; then bin=.build/release; elif present .build/debug; then bin=.build/debug; else
    echo "error: --no-build, but no build of ${products[*]} in .build/release or .build/debug" >&2
    exit 66
  fi
  say "using the build in $bin (--no-build; it may be older than the sources)"
else
  # shellcheck source=scripts/packages.sh
  source scripts/packages.sh
  ensure_packages libssl-dev libsystemd0 pkg-config
  if [[ -d .build/debug ]]; then
    say "building ${products[*]} in debug (only what changed since the last build)"
  else
    say "building ${products[*]} in debug: the first build compiles Cordis (1.5 minutes on 2 busy cores here);"
    say "  later runs take seconds (scripts/test.sh reuses this build, and this script reuses its)"
  fi
  started=$SECONDS
  for product in "${products[@]}"; do
    say "building $product ($((SECONDS - started)) s so far)"
    swift build -Xswiftc -warnings-as-errors --product "$product" >&2
  done
  say "built in $((SECONDS - started)) s"
  bin="$(swift build --show-bin-path)"
fi
node="$bin/cordis-node"
console="$bin/cordis-console"

folder="$(mktemp -d /tmp/cordis-cluster.XXXXXX)"
pids=()
declare -A node_pid=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$folder"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat >"$folder/a.json" <<'JSON'
{ "version": 1, "entries": [
  { "id": "greeter", "plugin": "greeter" },
  { "id": "badge", "plugin": "badge" } ] }
JSON
cat >"$folder/b.json" <<'JSON'
{ "version": 1, "entries": [
  { "id": "clock", "plugin": "clock" },
  { "id": "counter", "plugin": "counter", "config": { "start": 5 } } ] }
JSON
cat >"$folder/c.json" <<'JSON'
{ "version": 1, "entries": [
  { "id": "clock", "plugin": "clock" } ] }
JSON

start_node() { # name [peer]
  local name="$1" peer="${2:-}"
  local arguments=(--name "$name" --entries "$folder/$name.json" --listen "unix:$folder/$name.sock")
  [[ -n "$peer" ]] && arguments+=(--peer "unix:$folder/$peer.sock")
  "$node" "${arguments[@]}" >>"$folder/$name.log" 2>&1 &
  pids+=("$!")
  node_pid[$name]=$!
  local waited=0
  until grep -q "listening on" "$folder/$name.log" 2>/dev/null; do
    waited=$((waited + 1))
    if ((waited > 200)); then echo "error: node $name did not start; see $folder/$name.log" >&2; exit 1; fi
    sleep 0.05
  done
}

export CORDIS_CONSOLE_NODE="unix:$folder/a.sock"

step() { # title, bold on a terminal
  if [[ -t 1 ]]; then printf '\n\033[1m== %s\033[0m\n' "$1"; else printf '\n== %s\n' "$1"; fi
}
pause() {
  if ((batch)); then return; fi
  read -r -p "(press Enter for the next step) " _ || true
}
run() { # command...: prints it, runs it, shows the exit code
  printf '$ cordis-console %s\n' "$*"
  local code=0
  "$console" "$@" || code=$?
  printf '(exit %d)\n' "$code"
}
graph() { "$console" graph || true; }
wait_for() { # pattern: waits (at most 20 s) until `cordis-console status` shows it
  local tries=0
  until { "$console" status 2>/dev/null || true; } | grep -q -- "$1"; do
    tries=$((tries + 1))
    if ((tries > 200)); then echo "error: timed out waiting for \"$1\"" >&2; "$console" status >&2 || true; exit 1; fi
    sleep 0.1
  done
}

# b first, then a: the greeter settles on b's clock; c (a second clock) joins after, and consumers
# stay with the provider they have until it leaves.
start_node b
start_node a b
wait_for "greeter (greeter) active"
wait_for "badge (badge) active"
start_node c b
wait_for "node c "

if ((tour)); then
  step "1. A cluster of three nodes: a runs greeter and badge; b provides clock and counter; c provides clock"
  run status
  graph
  pause
  step "2. Withdraw counter on b: the badge on a drops to pending, and its disposer sets the counter back"
  run disable b:counter
  graph
  grep "badge removed" "$folder/a.log" | tail -n 1
  pause
  step "3. Bring counter back: the badge reloads and adds 1 again"
  run enable b:counter
  wait_for "badge (badge) active"
  run call counter value
  graph
  pause
  step "4. An invalid config is rejected and nothing changes"
  run config b:counter '{"start": "five"}'
  run status
  pause
  step "5. Kill node b: greeter on a fails over to c's clock; badge waits for a counter"
  kill -9 "${node_pid[b]}"
  wait "${node_pid[b]}" 2>/dev/null || true
  wait_for "uses clock → c:"
  wait_for "badge (badge) pending"
  run status
  graph
  pause
  step "6. Restart node b: the badge is active again"
  start_node b c
  wait_for "badge (badge) active"
  run status
  graph
  pause
  step "7. A clock in the shared realm blue on c, and a greeter in that realm on a"
  run add c --id clock-blue --plugin clock --isolate clock=blue
  run add a --id greeter-blue --plugin greeter --isolate clock=blue
  wait_for "greeter-blue (greeter) active"
  graph
  step "Tour done."
  if ((batch)); then exit 0; fi
fi

if ((batch)); then
  run status
  exit 0
fi
"$console" watch
