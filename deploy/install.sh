#!/usr/bin/env bash
# Installs Cordis on this machine: the binaries in /usr/local/bin, their manual pages and bash completion
# under /usr/local/share, the systemd units in /etc/systemd/system, the system user `cordis`, the group
# `cordis-operators` and /etc/cordis.
# Safe to run again: what is already in place is left as it is (binaries and units are replaced).
#
#   deploy/install.sh                      build release here (from an unpacked package: its bin/), then install
#   deploy/install.sh --bin-dir DIR        install prebuilt binaries from DIR instead of building
#   deploy/install.sh --root /tmp/r        install under a throwaway root (files, users and groups)
#   deploy/install.sh --make-secret        also create /etc/cordis/secret if it does not exist
#   deploy/install.sh --dry-run            print what it would do, change nothing
set -euo pipefail

usage() {
  sed -n '2,12s/^# \{0,1\}//p' "$0"
}

repo="$(cd "$(dirname "$0")/.." && pwd)"
root=""
bin_dir=""
dry_run=0
make_secret=0

while (($#)); do
  case "$1" in
    --root) root="${2:?--root needs a directory}"; shift 2 ;;
    --root=*) root="${1#--root=}"; shift ;;
    --bin-dir) bin_dir="${2:?--bin-dir needs a directory}"; shift 2 ;;
    --bin-dir=*) bin_dir="${1#--bin-dir=}"; shift ;;
    --dry-run) dry_run=1; shift ;;
    --make-secret) make_secret=1; shift ;;
    -h | --help) usage; exit 0 ;;
    *) echo "error: unknown argument $1 (see --help)" >&2; exit 64 ;;
  esac
done

if [[ -n "$root" ]]; then
  root="$(cd "$root" 2>/dev/null && pwd)" || { echo "error: --root: no directory ${root}" >&2; exit 64; }
fi

# Runs a command, or prints it under --dry-run.
run() {
  if ((dry_run)); then
    printf '+'
    printf ' %q' "$@"
    printf '\n'
  else
    "$@"
  fi
}

# Whether account database FILE (passwd or group) under the root has an entry NAME.
has_entry() {
  local file="$root/etc/$1" name="$2"
  [[ -f "$file" ]] && grep -q "^${name}:" "$file"
}

# The number of account NAME in FILE (passwd: the uid, group: the gid) under the root, or NAME itself
# when it does not exist yet (only under --dry-run, which creates nothing).
number_of() {
  local file="$root/etc/$1" name="$2" number=""
  [[ -f "$file" ]] && number="$(awk -F: -v name="$name" '$1 == name { print $3 }' "$file")"
  echo "${number:-$name}"
}

# The options that make useradd/groupadd work on the root's account files.
account_prefix=()
if [[ -n "$root" ]]; then account_prefix=(--prefix "$root"); fi

# 1. Binaries: built here in release mode, or taken from --bin-dir (an unpacked package's bin/ when there
# is no Package.swift to build from).
products=(cordis-node cordis-console)
if [[ -z "$bin_dir" && ! -f "$repo/Package.swift" && -x "$repo/bin/cordis-node" ]]; then
  bin_dir="$repo/bin"
fi
if [[ -z "$bin_dir" ]]; then
  for product in "${products[@]}"; do
    # Both carry the Swift runtime and Foundation inside them, as scripts/package.sh builds them (the
    # node's calls are faster and its resident set smaller; see CHANGELOG.md), linked by the toolchain's
    # lld; built with the same flags, the second reuses the first one's modules.
    run swift build --package-path "$repo" -c release --static-swift-stdlib -Xswiftc -use-ld=lld \
      -Xswiftc -warnings-as-errors --product "$product"
  done
  if ((dry_run)); then
    bin_dir="$repo/.build/release"
  else
    bin_dir="$(swift build --package-path "$repo" -c release --show-bin-path)"
  fi
fi
if ((!dry_run)) && [[ ! -x "$bin_dir/cordis-node" ]]; then
  echo "error: no executable $bin_dir/cordis-node" >&2
  exit 66
fi
run install -d -m 0755 "$root/usr/local/bin"
for product in "${products[@]}"; do
  if [[ -x "$bin_dir/$product" ]] || ((dry_run)); then
    run install -m 0755 "$bin_dir/$product" "$root/usr/local/bin/$product"
  else
    echo "note: $product was not built; skipped" >&2
  fi
done

# Manual pages: an unpacked package has them in man/man1; here they are made from the binaries' --help.
man_dir="$repo/man/man1"
if [[ ! -d "$man_dir" && -x "$repo/scripts/make-man-pages.sh" ]] && command -v python3 >/dev/null; then
  man_dir="$(mktemp -d /tmp/cordis-man.XXXXXX)"
  trap 'rm -rf "$man_dir"' EXIT
  if ((dry_run)); then
    run "$repo/scripts/make-man-pages.sh" "$bin_dir" "$man_dir"
  else
    "$repo/scripts/make-man-pages.sh" "$bin_dir" "$man_dir"
  fi
fi
if [[ -d "$man_dir" ]]; then
  run install -d -m 0755 "$root/usr/local/share/man/man1"
  for page in "$man_dir"/*.1; do
    if [[ -e "$page" ]]; then run install -m 0644 "$page" "$root/usr/local/share/man/man1/${page##*/}"; fi
  done
fi
# Bash completion of both commands (one file; bash-completion loads it by the command's name).
run install -d -m 0755 "$root/usr/local/share/bash-completion/completions"
for product in "${products[@]}"; do
  run install -m 0644 "$repo/deploy/bash-completion/cordis-console" \
    "$root/usr/local/share/bash-completion/completions/$product"
done

# 2. The user the nodes run as, and the group allowed on their Unix sockets. Under an empty --root the
# account files are created empty first: groupadd and useradd lock and edit them in place.
if [[ -n "$root" ]]; then
  run install -d -m 0755 "$root/etc"
  for file in passwd group; do
    [[ -e "$root/etc/$file" ]] || run install -m 0644 /dev/null "$root/etc/$file"
  done
  for file in shadow gshadow; do
    [[ -e "$root/etc/$file" ]] || run install -m 0640 /dev/null "$root/etc/$file"
  done
fi
if has_entry group cordis-operators; then
  echo "group cordis-operators exists"
else
  run groupadd "${account_prefix[@]}" --system cordis-operators
fi
if has_entry passwd cordis; then
  echo "user cordis exists"
else
  run useradd "${account_prefix[@]}" --system --user-group --home-dir /var/lib/cordis --no-create-home \
    --shell /usr/sbin/nologin --comment "Cordis nodes" cordis
fi

# 3. Settings (/etc/cordis: root writes, the nodes read) and state (StateDirectory= makes the rest).
cordis_uid="$(number_of passwd cordis)"
cordis_gid="$(number_of group cordis)"
run install -d -m 0750 -o 0 -g "$cordis_gid" "$root/etc/cordis"
run install -d -m 0755 -o 0 -g 0 "$root/var/lib/cordis"
if ((make_secret)); then
  if [[ -e "$root/etc/cordis/secret" ]]; then
    echo "secret $root/etc/cordis/secret exists; kept"
  elif ((dry_run)); then
    echo "+ (umask 077; head -c 48 /dev/urandom | base64 > $root/etc/cordis/secret)"
    echo "+ chown $cordis_uid:$cordis_gid $root/etc/cordis/secret"
  else
    (umask 077; head -c 48 /dev/urandom | base64 >"$root/etc/cordis/secret")
    chown "$cordis_uid:$cordis_gid" "$root/etc/cordis/secret"
  fi
fi

# 4. The units.
run install -d -m 0755 "$root/etc/systemd/system"
for unit in cordis-node@.service cordis-node@.socket; do
  run install -m 0644 "$repo/deploy/systemd/$unit" "$root/etc/systemd/system/$unit"
done
if [[ -z "$root" ]] && [[ -d /run/systemd/system ]]; then
  run systemctl daemon-reload
fi

cat <<EOF
done. Next, for a node named a:
  write $root/etc/cordis/a.json (see deploy/examples), then
  systemctl enable --now cordis-node@a.socket cordis-node@a.service
Operators join the group: usermod -a -G cordis-operators NAME
EOF
