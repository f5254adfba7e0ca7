#!/usr/bin/env bash
# Installs what the tests need (if missing) and runs the whole test suite with warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/packages.sh
source scripts/packages.sh
# Everything the tests use: python3 (the conformance client), etcd (etcd mode), openssl (certificates and
# signed trees), systemd (socket activation), tmux and graphviz (the console's terminal and graph tests),
# iproute2 (`ss`: the simultaneous-dial test counts the connections between two nodes), chromium,
# chromium-driver and python3-selenium (the web console driven in a real browser).
ensure_packages libssl-dev libsystemd0 pkg-config python3 etcd-server etcd-client openssl systemd tmux graphviz iproute2 prometheus chromium chromium-driver python3-selenium
# --release: the same suites built optimized (-c release, with -enable-testing for the tests' imports).
# The optimizer changes what concurrent code does; one isolation bug of the Swift 6.3.1 optimizer showed in
# release builds only.
configuration=()
if [[ "${1:-}" == "--release" ]]; then
  configuration=(-c release -Xswiftc -enable-testing)
  shift
fi
if (($# > 0)); then
  swift test "${configuration[@]}" -Xswiftc -warnings-as-errors "$@"
  exit
fi
swift build "${configuration[@]}" -Xswiftc -warnings-as-errors --build-tests
# Two runs of the one test binary. First the in-process suites (runtime, JSON, macros, wire and transport),
# whose honest wall-clock deadlines (a 5 s handshake, an accept) were missed when hundreds of tests and the
# dozens of real nodes the cluster suites start all began at once on two cores; then every suite that starts
# real processes (node, console, discovery, spec).
in_process='^(CordisTests|CordisIOSTests|CordisJSONTests|CordisMacrosTests|CordisWireTests)\.'
swift test "${configuration[@]}" --skip-build --filter "$in_process"
swift test "${configuration[@]}" --skip-build --skip "$in_process"
