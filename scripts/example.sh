#!/usr/bin/env bash
# Installs what the build needs (if missing), then builds and runs the core example: the cordis-ios
# product page's Greeter and CounterBadge, unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/packages.sh
source scripts/packages.sh
ensure_packages libssl-dev libsystemd0 pkg-config
swift run -c release cordis-example
