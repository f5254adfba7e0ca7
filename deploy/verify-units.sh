#!/usr/bin/env bash
# Checks the systemd units with `systemd-analyze verify` on instance names, in a throwaway root that
# holds the units, the TCP drop-in, systemd's own units, /usr/bin/kill and the given cordis-node
# binary at /usr/local/bin/cordis-node, where ExecStart expects it. Fails on any message.
#
#   deploy/verify-units.sh .build/release/cordis-node
set -euo pipefail

binary="${1:?usage: deploy/verify-units.sh PATH-TO-cordis-node}"
units="$(cd "$(dirname "$0")/systemd" && pwd)"
[[ -x "$binary" ]] || { echo "error: $binary is not an executable" >&2; exit 66; }

root="$(mktemp -d /tmp/cordis-units.XXXXXX)"
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/etc/systemd/system" "$root/usr/local/bin" "$root/usr/bin" "$root/usr/lib/systemd"
ln -s usr/bin "$root/bin"
cp -a "$(systemd-analyze unit-paths | grep -m1 -E '^/(usr/)?lib/systemd/system$')" "$root/usr/lib/systemd/system"
cp "$(type -P kill)" "$root/usr/bin/kill"
cp "$binary" "$root/usr/local/bin/cordis-node"
cp "$units"/cordis-node@.service "$units"/cordis-node@.socket "$root/etc/systemd/system/"
cp -r "$units"/cordis-node@a.socket.d "$root/etc/systemd/system/"

output="$(cd "$root" && systemd-analyze verify --root="$root" --man=no \
  cordis-node@a.service cordis-node@a.socket cordis-node@b.service 2>&1)" || {
  echo "$output" >&2
  echo "error: systemd-analyze verify failed" >&2
  exit 1
}
if [[ -n "$output" ]]; then
  echo "$output" >&2
  echo "error: systemd-analyze verify printed warnings" >&2
  exit 1
fi
echo "units verified: cordis-node@a.service cordis-node@a.socket cordis-node@b.service"
