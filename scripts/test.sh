#!/usr/bin/env bash
# Installs what the tests need (if missing) and runs the whole test suite with warnings as errors.
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
swift test -Xswiftc -warnings-as-errors "$@"
