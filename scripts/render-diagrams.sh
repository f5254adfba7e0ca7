#!/usr/bin/env bash
# Renders the diagrams of docs/architecture.md: each Graphviz source docs/diagrams/NAME.dot to
# docs/diagrams/NAME.svg (Debian's graphviz package; installed if missing).
#
#   scripts/render-diagrams.sh           render every diagram
#   scripts/render-diagrams.sh --check   render into a temporary folder and compare: exit 1, naming each
#                                        diagram whose SVG is missing or not what its source renders to
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/packages.sh
source scripts/packages.sh
ensure_packages graphviz

check=0
case "${1:-}" in
  "") ;;
  --check) check=1 ;;
  -h|--help) sed -n '2,7s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "error: unknown option $1" >&2; exit 64 ;;
esac

output=docs/diagrams
if ((check)); then
  output="$(mktemp -d /tmp/cordis-diagrams.XXXXXX)"
  trap 'rm -rf "$output"' EXIT
fi
stale=()
for source in docs/diagrams/*.dot; do
  name="$(basename "$source" .dot)"
  dot -Tsvg "$source" -o "$output/$name.svg"
  if ((check)) && ! cmp -s "$output/$name.svg" "docs/diagrams/$name.svg"; then
    stale+=("docs/diagrams/$name.svg")
  fi
done
if ((${#stale[@]})); then
  echo "error: not rendered from their sources (run scripts/render-diagrams.sh): ${stale[*]}" >&2
  exit 1
fi
if ((check)); then echo "diagrams: every SVG is what its source renders to"; fi
