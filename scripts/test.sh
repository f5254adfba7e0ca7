#!/usr/bin/env bash
# Installs what the tests need (if missing) and runs the whole test suite with warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/packages.sh
source scripts/packages.sh
# Everything the tests use: python3 (the conformance client), etcd (etcd mode), openssl (certificates and
# signed trees), systemd (socket activation), tmux and graphviz (the console's terminal and graph tests).
ensure_packages libssl-dev libsystemd-dev pkg-config python3 etcd-server etcd-client openssl systemd tmux graphviz
swift test -Xswiftc -warnings-as-errors "$@"
