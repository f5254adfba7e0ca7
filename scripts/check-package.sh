#!/usr/bin/env bash
# Checks a package of scripts/package.sh on this machine as if the Swift toolchain were not installed:
# in a mount namespace where the toolchain's folder is covered by an empty tmpfs, from the unpacked
# tarball, a node starts and prints `listening on`, `cordis-console status` reads it, both print their
# version, and `deploy/install.sh --root` installs the package into an empty folder. Needs root
# (unshare -m). Exit 0 when all of it worked.
#
#   scripts/check-package.sh [dist/cordis-VERSION-linux-ARCH.tar.gz]   (default: the newest in dist/)
set -euo pipefail
cd "$(dirname "$0")/.."

tarball="${1:-}"
if [[ -z "$tarball" ]]; then
  tarball="$(find dist -maxdepth 1 -name 'cordis-*-linux-*.tar.gz' -printf '%T@ %p\n' 2>/dev/null | sort -rn | head -n 1 | cut -d' ' -f2-)"
fi
[[ -f "$tarball" ]] || { echo "error: no package (run scripts/package.sh first)" >&2; exit 66; }
# The toolchain's folder: /opt/swift for /opt/swift/usr/bin/swift.
toolchain="$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")"
if [[ "$(basename "$toolchain")" == usr ]]; then toolchain="$(dirname "$toolchain")"; fi

work="$(mktemp -d /tmp/cordis-package.XXXXXX)"
trap 'rm -rf "$work"' EXIT
tar -xzf "$tarball" -C "$work"
unpacked="$(find "$work" -mindepth 1 -maxdepth 1 -type d)"
echo "check-package: $tarball, unpacked in $unpacked; $toolchain covered by an empty tmpfs" >&2

# The steps inside the namespace. Only what the package brings and the system has is in reach.
cat >"$work/inside.sh" <<'INSIDE'
set -euo pipefail
toolchain="$1" unpacked="$2" work="$3"
mount -t tmpfs -o size=1m,mode=0755 cordis-no-toolchain "$toolchain"
echo "\$ ls -A $toolchain; command -v swift"
ls -A "$toolchain"
command -v swift || echo "(no swift)"
cd "$unpacked"
echo '$ bin/cordis-node --version; bin/cordis-console --version'
bin/cordis-node --version
bin/cordis-console --version 2>/dev/null || echo "(this cordis-console has no --version)"
printf '{ "version": 1, "entries": [ { "id": "clock", "plugin": "clock" }, { "id": "greeter", "plugin": "greeter" } ] }\n' >"$work/p.json"
echo "\$ bin/cordis-node --name p --entries p.json --listen unix:$work/p.sock &"
bin/cordis-node --name p --entries "$work/p.json" --listen "unix:$work/p.sock" >"$work/p.log" 2>&1 &
node=$!
trap 'kill "$node" 2>/dev/null || true; wait "$node" 2>/dev/null || true' EXIT
for _ in $(seq 600); do
  grep -q "listening on" "$work/p.log" && break
  kill -0 "$node" 2>/dev/null || break
  sleep 0.05
done
grep -m 1 "listening on" "$work/p.log" || true
grep -q "listening on" "$work/p.log" || { echo "error: the node did not start:" >&2; cat "$work/p.log" >&2; exit 1; }
for _ in $(seq 200); do
  bin/cordis-console --node "unix:$work/p.sock" status 2>/dev/null | grep -q "greeter (greeter) active" && break
  sleep 0.05
done
echo "\$ bin/cordis-console --node unix:$work/p.sock status"
bin/cordis-console --node "unix:$work/p.sock" status
echo '$ ls man/man1; (bash completion) cordis-console disable <TAB>'
ls man/man1
bash -c 'source deploy/bash-completion/cordis-console
  export PATH="$PWD/bin:$PATH" CORDIS_CONSOLE_NODE="$1"
  COMP_LINE="cordis-console disable " COMP_POINT=${#COMP_LINE} COMP_WORDS=(cordis-console disable "") COMP_CWORD=2
  _cordis_console
  echo "${COMPREPLY[*]}"
  [[ "${COMPREPLY[*]}" == "p:clock p:greeter" ]]' completion "unix:$work/p.sock" ||
  { echo "error: the completion did not offer the node's entries" >&2; exit 1; }
echo "\$ deploy/install.sh --root $work/root"
mkdir "$work/root"
deploy/install.sh --root "$work/root" >/dev/null
ls "$work/root/usr/local/bin" "$work/root/usr/local/share/man/man1" "$work/root/usr/local/share/bash-completion/completions" "$work/root/etc/systemd/system"
"$work/root/usr/local/bin/cordis-node" --version
INSIDE
unshare -m --propagation private bash "$work/inside.sh" "$toolchain" "$unpacked" "$work"
echo "check-package: the packaged binaries ran without the toolchain" >&2
