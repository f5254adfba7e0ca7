#!/usr/bin/env bash
# Builds one fuzz target with libFuzzer and runs it for SECONDS (default 60).
# Usage: fuzz/run.sh [SECONDS] [extra libFuzzer flags...]
# Environment: FUZZ_TARGET (frame-decoder, the default: frames, messages and the responder's
# handshake; entries-file: the entries-file parser; handshake: both sides of the handshake, with and
# without a secret; http-request: the HTTP request parser of /metrics and the web console), FUZZ_BUILD (build folder, default /tmp/cordis-fuzz), FUZZ_ASAN=0 to build without
# AddressSanitizer, FUZZ_JOBS (parallel fuzzing processes, default 1).
set -euo pipefail

seconds="${1:-60}"
shift || true
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${FUZZ_BUILD:-/tmp/cordis-fuzz}"
mkdir -p "$build/corpus"

sanitizers="fuzzer"
if [[ "${FUZZ_ASAN:-1}" != "0" ]]; then sanitizers="fuzzer,address"; fi

target="${FUZZ_TARGET:-frame-decoder}"
case "$target" in
    frame-decoder) entry="FrameDecoderFuzz.swift" ;;
    entries-file) entry="EntriesFileFuzz.swift" ;;
    handshake) entry="HandshakeFuzz.swift" ;;
    http-request) entry="HTTPRequestFuzz.swift" ;;
    *) echo "fuzz/run.sh: unknown FUZZ_TARGET $target (frame-decoder, entries-file, handshake, http-request)" >&2; exit 64 ;;
esac
corpus="$build/corpus"
if [[ "$target" != "frame-decoder" ]]; then corpus="$build/corpus-$target"; fi
mkdir -p "$corpus"

mapfile -t json_sources < <(find "$root/Sources/CordisJSON" -name '*.swift' | sort)
mapfile -t files_sources < <(find "$root/Sources/CordisFiles" -name '*.swift' | sort)
# The codec, the messages, the handshake and what it names of TLS (not the TLS stream over a connection).
mapfile -t wire_sources < <(find "$root/Sources/CordisWire/Codec" "$root/Sources/CordisWire/Messages" \
    "$root/Sources/CordisWire/Auth" "$root/Sources/CordisWire/TLS" -name '*.swift' ! -name 'TLSStreamFilter.swift' | sort)
# The Loader's file half: entries, trees and the file store (no fibers, no macros).
loader_sources=()
for name in Entry Entry+JSON EntryError EntryTree EntryTree+Edits EntryTree+Limits EntryTreeLimits IsolateValue \
    EntryStore EntryStoreError EntryFileCalls FileEntryStore; do
    loader_sources+=("$root/Sources/Cordis/Loader/$name.swift")
done

# One package name for every module, as SwiftPM builds them, so `package` declarations are visible.
common=(-O -parse-as-library -wmo -sanitize="$sanitizers" -package-name cordis)

# The C shim (system calls, getrandom for nonces) as SwiftPM builds it: a module map over its header,
# and its object file linked into the target.
mkdir -p "$build/shim"
printf 'module CCordisShim {\n    header "%s"\n    export *\n}\n' "$root/Sources/CCordisShim/include/CCordisShim.h" \
    > "$build/shim/module.modulemap"
clang -O2 -fPIC -D_GNU_SOURCE -I "$root/Sources/CCordisShim/include" -c "$root/Sources/CCordisShim/shim.c" -o "$build/shim.o"

swiftc "${common[@]}" -module-name CordisJSON \
    -emit-module -emit-module-path "$build/CordisJSON.swiftmodule" \
    -c "${json_sources[@]}" -o "$build/CordisJSON.o"

swiftc "${common[@]}" -module-name CordisFiles \
    -emit-module -emit-module-path "$build/CordisFiles.swiftmodule" \
    -c "${files_sources[@]}" -o "$build/CordisFiles.o"

if [[ "$target" == "http-request" ]]; then
    swiftc "${common[@]}" -module-name CordisHTTPFuzz \
        -c "$root/Sources/CordisWire/HTTP/HTTPRequest.swift" "$root/fuzz/$entry" -o "$build/$target.o"
    swiftc -sanitize="$sanitizers" "$build/$target.o" -o "$build/$target-fuzz"
elif [[ "$target" == "entries-file" ]]; then
    swiftc "${common[@]}" -module-name CordisEntriesFuzz -I "$build" \
        -c "${loader_sources[@]}" "$root/fuzz/$entry" -o "$build/$target.o"
    swiftc -sanitize="$sanitizers" "$build/CordisJSON.o" "$build/CordisFiles.o" "$build/$target.o" \
        -o "$build/$target-fuzz"
else
    swiftc "${common[@]}" -module-name CordisWireFuzz \
        -I "$build" -I "$root/Sources/COpenSSL" -I "$build/shim" \
        -c "${wire_sources[@]}" "$root/fuzz/$entry" -o "$build/$target.o"
    swiftc -sanitize="$sanitizers" "$build/CordisJSON.o" "$build/CordisFiles.o" "$build/shim.o" "$build/$target.o" \
        -lcrypto -o "$build/$target-fuzz"
fi

# Seed the corpus: golden frames from the docs (one frame per file, chunk byte first), or example files.
"$root/fuzz/seed-corpus.sh" "$corpus" "$target"

# Crash reproducers and worker logs land in the build folder, not the work tree.
cd "$build"
parallel=()
if [[ "${FUZZ_JOBS:-1}" -gt 1 ]]; then parallel=(-jobs="$FUZZ_JOBS" -workers="$FUZZ_JOBS"); fi
# No leak detection: LeakSanitizer reports live Swift strings as leaked on Linux (llvm/llvm-project#56751);
# here it named a decoding error's 96-byte message, and a heap count over 100,000 of the same failed
# handshakes grew by 0 bytes in debug and release builds. The node tests bound memory per hostile
# connection and per restart instead.
ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" "./$target-fuzz" -max_total_time="$seconds" -max_len=4096 \
    -print_final_stats=1 -detect_leaks=0 \
    "${parallel[@]}" "$@" "$corpus"
