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
# otherwise it builds those two in debug (faster to build than release; the tour does not need speed).
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
    say "  later runs start in seconds"
  fi
  started=$SECONDS
  for product in "${products[@]}"; do
    say "building $product ($((SECONDS - started)) s so far)"
    swift build -Xswiftc -warnings-as-errors --product "$product" >&2
  done
  say "built in $((SECONDS - started)) s"
  bin="$(swift build --show-bin-path)"
fi
bin="$(cd "$bin" && pwd)"
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

# The starting tree of each node (kept as *.start.json: the tour's last step goes back to it).
cat >"$folder/a.json" <<'JSON'
{ "version": 1, "entries": [
  { "id": "greeter", "plugin": "greeter" },
  { "id": "badge", "plugin": "badge" },
  { "id": "lounge", "children": [
      { "id": "lounge-greeter", "plugin": "greeter" },
      { "id": "lounge-badge", "plugin": "badge" } ] },
  { "id": "greeter-blue", "plugin": "greeter", "isolate": { "clock": "blue" } },
  { "id": "flaky", "plugin": "flaky" } ] }
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
for name in a b c; do cp "$folder/$name.json" "$folder/$name.start.json"; done

start_node() { # name [peer]
  local name="$1" peer="${2:-}"
  local arguments=(--name "$name" --entries "$folder/$name.json" --listen "unix:$folder/$name.sock")
  [[ -n "$peer" ]] && arguments+=(--peer "unix:$folder/$peer.sock")
  # A restarted node appends to its log: wait for a "listening on" after the lines already there.
  local before=0
  [[ -f "$folder/$name.log" ]] && before="$(grep -c "listening on" "$folder/$name.log" || true)"
  if ((tour)); then shown cordis-node "${arguments[@]}" "&"; fi
  "$node" "${arguments[@]}" >>"$folder/$name.log" 2>&1 &
  pids+=("$!")
  node_pid[$name]=$!
  local waited=0
  until (("$(grep -c "listening on" "$folder/$name.log" 2>/dev/null || true)" > before)); do
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
# Prints a command as it can be pasted into a shell: words that need it in single quotes.
shown() {
  local word line="\$"
  for word in "$@"; do
    if [[ "$word" =~ ^[A-Za-z0-9_@%+=:,./-]+$ || "$word" == "&" ]]; then
      line+=" $word"
    else
      line+=" '${word//\'/\'\\\'\'}'"
    fi
  done
  printf '%s\n' "$line"
}
run() { # command...: prints it, runs it, shows the exit code
  shown cordis-console "$@"
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
log_lines() { # node pattern count: the last lines of the node's log that match
  grep -- "$2" "$folder/$1.log" | tail -n "$3" | sed "s/^/  ($1) /"
}

# b first, then a: the greeters settle on b's clock; c (a second clock) joins after, and consumers
# stay with the provider they have until it leaves.
start_node b
start_node a b
wait_for "greeter (greeter) active"
wait_for "badge (badge) active"
wait_for "lounge-badge (badge) in lounge active"
start_node c b
wait_for "node c "

if ((tour)); then
  echo "The commands below can be pasted into another terminal after:"
  echo "  export PATH=\"$bin:\$PATH\" CORDIS_CONSOLE_NODE=$CORDIS_CONSOLE_NODE"
  step "1. Three nodes: a runs two greeters, two badges (one pair in the group lounge), a greeter in realm blue and flaky; b provides clock and counter; c a second clock"
  run status
  graph
  pause
  step "2. Withdraw a service: counter on b. Both badges on a drop to pending; their disposers set the counter back first"
  run disable b:counter
  wait_for "badge (badge) pending"
  log_lines a "badge removed" 2
  graph
  pause
  step "3. Provide it again: the counter starts at 5, each badge adds 1"
  run enable b:counter
  wait_for "badge (badge) active"
  wait_for "lounge-badge (badge) in lounge active"
  run call counter value
  pause
  step "4. Change a config: the counter restarts from 10, and its consumers reload"
  run config b:counter '{"start": 10}'
  wait_for "lounge-badge (badge) in lounge active"
  run call counter value
  pause
  step "5. An invalid config is rejected and nothing changes"
  run config b:counter '{"start": "five"}'
  run call counter value
  pause
  step "6. Add a missing service: greeter-blue waits for a clock in realm blue; c gets one"
  run add c --id clock-blue --plugin clock --isolate clock=blue
  wait_for "greeter-blue (greeter) active"
  graph
  pause
  step "7. Withdraw an isolated service: only greeter-blue, the consumer in its realm, drops"
  run disable c:clock-blue
  wait_for "greeter-blue (greeter) pending"
  run status
  pause
  step "8. Disable a whole group: lounge and both its plugins unload"
  run disable a:lounge
  run status
  run call counter value
  pause
  step "9. A plugin fails, and is recovered: flaky told to fail once, then restarted"
  run config a:flaky '{"fail": true, "times": 1}'
  wait_for "flaky (flaky) failed"
  run restart a:flaky
  wait_for "flaky (flaky) active"
  log_lines a "] flaky: " 1
  pause
  step "10. Restart a stateful service: the counter counts from its start again, and the badge reloads"
  run call counter add '{"_0": 5}'
  run restart b:counter
  wait_for "badge (badge) active"
  run call counter value
  pause
  step "11. Kill node b: the greeters on a fail over to c's clock; the badge waits for a counter"
  shown kill -9 "${node_pid[b]}"
  kill -9 "${node_pid[b]}"
  wait "${node_pid[b]}" 2>/dev/null || true
  wait_for "uses clock → c:"
  wait_for "badge (badge) pending"
  run status
  pause
  step "12. Start node b again: the badge is active again, the greeters stay with c's clock"
  start_node b c
  wait_for "badge (badge) active"
  run status
  pause
  step "13. Reconcile back to the starting trees: each node re-reads its entries file on SIGHUP"
  for name in a b c; do
    shown cp "$folder/$name.start.json" "$folder/$name.json"
    cp "$folder/$name.start.json" "$folder/$name.json"
  done
  shown kill -HUP "${node_pid[a]}" "${node_pid[b]}" "${node_pid[c]}"
  kill -HUP "${node_pid[a]}" "${node_pid[b]}" "${node_pid[c]}"
  wait_for "lounge-badge (badge) in lounge active"
  wait_for "greeter-blue (greeter) pending"
  run status
  run call counter value
  step "Tour done."
fi

echo "The cluster runs until Ctrl-C. From another terminal:"
echo "  export PATH=\"$bin:\$PATH\" CORDIS_CONSOLE_NODE=$CORDIS_CONSOLE_NODE"
echo "  cordis-console status        # or graph, watch, events --follow, disable b:counter, ..."
if ((batch)); then
  if ((!tour)); then run status; fi
  exit 0
fi
if ((tour)); then read -r -p "(press Enter for the live view; q leaves it, Ctrl-C stops the cluster) " _ || true; fi
"$console" watch
