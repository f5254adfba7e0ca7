#!/usr/bin/env bash
# Installs what the build needs (if missing), then builds and runs the core example: the cordis-ios
# product page's Greeter and CounterBadge, unchanged.
set -euo pipefail
cd "$(dirname "$0")/.."
missing=()
for package in libssl-dev pkg-config; do
  dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done
if ((${#missing[@]})); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi
swift run -c release cordis-example
