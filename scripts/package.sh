#!/usr/bin/env bash
# Builds the release binaries of cordis-node and cordis-console with the Swift runtime and Foundation
# linked in (--static-swift-stdlib), checks that neither needs a library of the Swift toolchain, and
# writes dist/cordis-VERSION-linux-ARCH.tar.gz:
#   bin/      cordis-node, cordis-console
#   man/man1/ their manual pages, made from their --help (scripts/make-man-pages.sh)
#   deploy/   the systemd units, install.sh, make-certs.sh, verify-units.sh, examples, bash completion
#   docs/     the documentation, README.md, CHANGELOG.md
# Unpacked on a Debian machine without the toolchain, `deploy/install.sh` installs from its bin/.
#
#   scripts/package.sh              build, check, pack (prints the tarball's path last)
#   scripts/package.sh --no-build   pack the release binaries already built
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=scripts/packages.sh
source scripts/packages.sh

build=1
case "${1:-}" in
  "") ;;
  --no-build) build=0 ;;
  -h|--help) sed -n '2,13s/^# \{0,1\}//p' "$0"; exit 0 ;;
  *) echo "error: unknown option $1" >&2; exit 64 ;;
esac

products=(cordis-node cordis-console)
if ((build)); then
  ensure_packages libssl-dev libsystemd0 pkg-config
  for product in "${products[@]}"; do
    echo "package: building $product (release, the Swift runtime and Foundation linked in)" >&2
    build_release_product "$product" >&2
  done
fi
bin="$(swift build -c release --show-bin-path)"

# What the binaries need at run time must come from the system, never from the toolchain.
# The toolchain's folder: /opt/swift for /opt/swift/usr/bin/swift.
toolchain="$(dirname "$(dirname "$(readlink -f "$(command -v swift)")")")"
if [[ "$(basename "$toolchain")" == usr ]]; then toolchain="$(dirname "$toolchain")"; fi
for product in "${products[@]}"; do
  [[ -x "$bin/$product" ]] || { echo "error: no $bin/$product (build it, or drop --no-build)" >&2; exit 66; }
  libraries="$(ldd "$bin/$product")"
  if grep -E "not found|$toolchain|libswift|libFoundation|libdispatch|libBlocksRuntime" <<<"$libraries" >&2; then
    echo "error: $product needs the libraries above, from the Swift toolchain or missing" >&2
    exit 1
  fi
done

version="$("$bin/cordis-node" --version | awk '{ print $NF }')"
name="cordis-$version-linux-$(uname -m)"
stage="dist/$name"
rm -rf "$stage" "dist/$name.tar.gz"
mkdir -p "$stage/bin" "$stage/deploy"
install -m 0755 "$bin/cordis-node" "$bin/cordis-console" "$stage/bin/"
cp -R deploy/systemd deploy/examples deploy/bash-completion "$stage/deploy/"
scripts/make-man-pages.sh "$bin" "$stage/man/man1"
install -m 0755 deploy/install.sh deploy/make-certs.sh deploy/verify-units.sh "$stage/deploy/"
cp -R docs "$stage/docs"
cp README.md CHANGELOG.md "$stage/"
tar -czf "dist/$name.tar.gz" -C dist --owner=0 --group=0 "$name"
rm -rf "$stage"
echo "package: $(du -h "dist/$name.tar.gz" | cut -f1) dist/$name.tar.gz" >&2
echo "dist/$name.tar.gz"
