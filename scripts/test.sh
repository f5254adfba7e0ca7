#!/usr/bin/env bash
# Installs what the tests need (if missing) and runs the whole test suite with warnings as errors.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/packages.sh
source scripts/packages.sh
ensure_packages libssl-dev libsystemd-dev pkg-config python3
swift test -Xswiftc -warnings-as-errors "$@"
