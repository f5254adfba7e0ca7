#!/usr/bin/env bash
# The web console's page, style sheet and script live in Sources/CordisConsole/Web/WebAssets.swift (compiled
# into cordis-console). This prints one of them (page, style or script) to stdout, e.g. to check the script
# with `node --check`: scripts/web-assets.sh script > /tmp/app.js
set -euo pipefail
cd "$(dirname "$0")/.."
case "${1:-}" in
  page) name=pageText ;;
  style) name=styleText ;;
  script) name=scriptText ;;
  *) echo "usage: scripts/web-assets.sh page|style|script" >&2; exit 64 ;;
esac
awk -v name="$name" '
  $0 ~ "static let " name " = ##\"\"\"" { inside = 1; next }
  inside && /^"""##/ { exit }
  inside { print }
' Sources/CordisConsole/Web/WebAssets.swift
