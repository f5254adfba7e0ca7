#!/usr/bin/env bash
# Sourced by the other scripts: installs the Debian packages given as arguments when they are missing
# (ensure_packages), and builds one executable for running and measuring (build_release_product).
ensure_packages() {
  local missing=() package
  for package in "$@"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
  done
  if ((${#missing[@]})); then
    echo "installing ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
  fi
}

# Builds the release executable named $1 (a node, or the benchmark that starts nodes) with the Swift runtime linked into it (--static-swift-stdlib):
# calls into the runtime are then direct, which made a pinned node-to-node call about a tenth faster and an
# idle node about 2.5 MB smaller (CHANGELOG.md). The toolchain's lld links it, since the default
# linker warns about the static Foundation's use of mktemp at every link. Extra arguments go to swift build.
build_release_product() {
  local product=$1
  shift
  swift build -c release --static-swift-stdlib -Xswiftc -use-ld=lld -Xswiftc -warnings-as-errors --product "$product" "$@"
}
