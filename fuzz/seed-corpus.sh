#!/usr/bin/env bash
# Writes seed inputs for the frame decoder fuzzer into the folder given: one frame of each kind,
# each prefixed with the chunk-size byte the fuzz target reads first.
set -euo pipefail

corpus="${1:?usage: seed-corpus.sh FOLDER}"
mkdir -p "$corpus"

seed() {
    local name="$1" json="$2"
    local length=${#json}
    {
        printf '\x05'
        printf '%08x' "$length" | xxd -r -p
        printf '%s' "$json"
    } > "$corpus/seed-$name"
}

nonce="000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
seed hello '{"type":"hello","version":"1.0","role":"node","name":"a","incarnation":"a-1","addresses":["unix:/run/a.sock"],"capabilities":[],"nonce":"'"$nonce"'","auth":"none"}'
seed challenge '{"type":"challenge","version":"1.0","role":"node","name":"b","incarnation":"b-7","addresses":[],"capabilities":[],"nonce":"'"$nonce"'"}'
seed welcome '{"type":"welcome","proof":"'"$nonce"'"}'
seed reject '{"type":"reject","code":"versionMismatch","reason":"x"}'
seed ping '{"type":"ping","id":17}'
seed members '{"type":"members","members":[{"name":"a","addresses":["tcp:[::1]:7000"],"incarnation":"a-1"}]}'
seed announce '{"type":"announce","service":"clock","realm":"blue","interface":"ClockAPI","interfaceVersion":"3f2a","node":"b","fiber":7}'
seed withdraw '{"type":"withdraw","service":"clock","realm":null,"node":"b","fiber":7}'
seed call '{"type":"call","id":42,"service":"counter","realm":null,"method":"add","args":{"_0":1,"s":"h\u00e9\"\n"}}'
seed result '{"type":"result","id":42,"value":{"node":"b","seconds":12.5,"list":[1,-2e3,true,null]}}'
seed error '{"type":"error","id":42,"code":"withdrawn","message":"provider left"}'
seed goodbye '{"type":"goodbye","reason":null}'
seed unknown '{"type":"status","page":2}'
seed sealed '{"seq":0,"mac":"'"$nonce"'","type":"ping","id":1}'
