#!/usr/bin/env bash
# Writes seed inputs for a fuzz target into the folder given. For frame-decoder (the default): one
# frame of each kind, each prefixed with the chunk-size byte the target reads first; for handshake: the
# handshake frames behind each header (side, secret, honest exchange) and index; for entries-file: the
# example entries files and a few edge cases; for http-request: a few requests.
set -euo pipefail

corpus="${1:?usage: seed-corpus.sh FOLDER [TARGET]}"
target="${2:-frame-decoder}"
mkdir -p "$corpus"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

if [[ "$target" == "http-request" ]]; then
    # The chunk byte, the body-limit byte, then a request.
    printf '\x05\x00GET /metrics HTTP/1.1\r\nHost: 127.0.0.1:9100\r\nAccept: text/plain\r\n\r\n' > "$corpus/seed-metrics"
    printf '\x03\x01POST /api/action HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nCookie: cordis_console=ab\r\nOrigin: http://127.0.0.1:8080\r\nContent-Type: application/json\r\nContent-Length: 24\r\n\r\n{"command":"enable"}   ' > "$corpus/seed-action"
    printf '\x10\x01GET /plugins?token=abc%%20d+e HTTP/1.0\n\n' > "$corpus/seed-token"
    exit 0
fi

if [[ "$target" == "entries-file" ]]; then
    index=0
    for file in "$root"/deploy/examples/*/*.entries.json; do
        index=$((index + 1))
        cp "$file" "$corpus/seed-example-$index"
    done
    printf '%s' '{"version": 1, "entries": [{"id": "g", "plugin": "group", "isolate": {"clock": "blue"}, "children": [{"id": "c", "plugin": "counter", "config": {"start": 3}, "disabled": true}]}], "x": 1}' > "$corpus/seed-group"
    printf '%s' '[{"id": "a", "plugin": "clock"}]' > "$corpus/seed-array"
    printf '%s' '{"version": 2, "entries": []}' > "$corpus/seed-version"
    exit 0
fi

# frame-decoder: the chunk byte; handshake: a header byte (bits: initiator, secret, honest) and an index.
prefixes=('\x05')
if [[ "$target" == "handshake" ]]; then prefixes=('\x00\x00' '\x01\x00' '\x06\x01' '\x07\x00' '\x05\x02'); fi

seed() {
    local name="$1" json="$2"
    local length=${#json}
    local index=0
    for prefix in "${prefixes[@]}"; do
        index=$((index + 1))
        {
            printf '%b' "$prefix"
            printf '%08x' "$length" | xxd -r -p
            printf '%s' "$json"
        } > "$corpus/seed-$name-$index"
    done
}

nonce="000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
seed hello '{"type":"hello","version":"1.0","role":"node","name":"a","incarnation":"a-1","addresses":["unix:/run/a.sock"],"capabilities":[],"nonce":"'"$nonce"'","auth":"none"}'
seed challenge '{"type":"challenge","version":"1.0","role":"node","name":"b","incarnation":"b-7","addresses":[],"capabilities":[],"nonce":"'"$nonce"'"}'
seed welcome '{"type":"welcome","proof":"'"$nonce"'"}'
seed reject '{"type":"reject","code":"version-mismatch","reason":"x"}'
seed ping '{"type":"ping","id":17}'
seed members '{"type":"members","members":[{"name":"a","addresses":["tcp:[::1]:7000"],"incarnation":"a-1"}]}'
seed announce '{"type":"announce","service":"clock","realm":"blue","interface":"ClockAPI","interfaceVersion":"3f2a","node":"b","fiber":7}'
seed withdraw '{"type":"withdraw","service":"clock","realm":null,"node":"b","fiber":7}'
seed call '{"type":"call","id":42,"service":"counter","realm":null,"method":"add","args":{"_0":1,"s":"h\u00e9\"\n"}}'
seed result '{"type":"result","id":42,"value":{"node":"b","seconds":12.5,"list":[1,-2e3,true,null]}}'
seed error '{"type":"error","id":42,"code":"withdrawn","message":"provider left"}'
# Calls and results just outside the form the direct decoder reads (repeated member, space, unknown member).
seed call-repeated '{"type":"call","id":42,"service":"clock","realm":null,"method":"now","args":{},"id":43}'
seed call-spaced '{"type":"call", "id":42,"service":"clock","realm":null,"method":"now","args":{}}'
seed result-repeated '{"type":"result","id":1,"value":1,"value":2}'
seed result-unknown '{"type":"result","id":1,"value":{"node":"b"},"realm":"x"}'
# JSON values a document reads and types decode from (the fuzzer compares the document with the parser).
seed reading '{"node":"b","seconds":1.5,"tags":{"a":1,"b":-2}}'
seed readings '[{"node":"b","seconds":2,"tags":null},null,{"seconds":1e3,"node":"c"}]'
seed goodbye '{"type":"goodbye","reason":null}'
seed unknown '{"type":"status","page":2}'
seed sealed '{"seq":0,"mac":"'"$nonce"'","type":"ping","id":1}'
