#!/usr/bin/env bash
# Builds the CordisWire frame/message fuzzer with libFuzzer and runs it for SECONDS (default 60).
# Usage: fuzz/run.sh [SECONDS] [extra libFuzzer flags...]
# Environment: FUZZ_BUILD (build folder, default /tmp/cordis-fuzz), FUZZ_ASAN=0 to build without
# AddressSanitizer, FUZZ_JOBS (parallel fuzzing processes, default 1).
set -euo pipefail

seconds="${1:-60}"
shift || true
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FUZZ_BUILD:-/tmp/cordis-fuzz}"
mkdir -p "$build/corpus"

sanitizers="fuzzer"
if [[ "${FUZZ_ASAN:-1}" != "0" ]]; then sanitizers="fuzzer,address"; fi

mapfile -t json_sources < <(find "$root/Sources/CordisJSON" -name '*.swift' | sort)
mapfile -t files_sources < <(find "$root/Sources/CordisFiles" -name '*.swift' | sort)
mapfile -t wire_sources < <(find "$root/Sources/CordisWire/Codec" "$root/Sources/CordisWire/Messages" \
    "$root/Sources/CordisWire/Auth" -name '*.swift' | sort)

# One package name for every module, as SwiftPM builds them, so `package` declarations are visible.
common=(-O -parse-as-library -wmo -sanitize="$sanitizers" -package-name cordis)

swiftc "${common[@]}" -module-name CordisJSON \
    -emit-module -emit-module-path "$build/CordisJSON.swiftmodule" \
    -c "${json_sources[@]}" -o "$build/CordisJSON.o"

swiftc "${common[@]}" -module-name CordisFiles \
    -emit-module -emit-module-path "$build/CordisFiles.swiftmodule" \
    -c "${files_sources[@]}" -o "$build/CordisFiles.o"

swiftc "${common[@]}" -module-name CordisWireFuzz \
    -I "$build" -I "$root/Sources/COpenSSL" \
    -c "${wire_sources[@]}" "$root/fuzz/FrameDecoderFuzz.swift" -o "$build/CordisWireFuzz.o"

swiftc -sanitize="$sanitizers" "$build/CordisJSON.o" "$build/CordisFiles.o" "$build/CordisWireFuzz.o" -lcrypto \
    -o "$build/frame-decoder-fuzz"

# Seed the corpus with the golden frames from the docs (one frame per file, chunk byte first).
"$root/fuzz/seed-corpus.sh" "$build/corpus"

# Crash reproducers and worker logs land in the build folder, not the work tree.
cd "$build"
parallel=()
if [[ "${FUZZ_JOBS:-1}" -gt 1 ]]; then parallel=(-jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS"); fi
./frame-decoder-fuzz -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
    "${parallel[@]}" "$@" corpus
