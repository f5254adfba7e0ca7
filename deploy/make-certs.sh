#!/bin/sh
# Creates the certificates of a Cordis cluster with the openssl command line: a cluster CA, node
# certificates (SAN URI:cordis://node/NAME) and operator certificates (SAN URI:cordis://operator/NAME).
#
#   deploy/make-certs.sh DIR ca [CN]        DIR/ca.key, DIR/ca.pem: a new CA (CN default: cordis-ca)
#   deploy/make-certs.sh DIR node NAME      DIR/node-NAME.key, DIR/node-NAME.pem, signed by DIR/ca
#   deploy/make-certs.sh DIR operator NAME  DIR/operator-NAME.key, DIR/operator-NAME.pem, signed by DIR/ca
#
# Environment: DAYS (leaf validity, default 365), CA_DAYS (CA validity, default 3650), CA (the CA to
# sign with, as a path without .key/.pem, default DIR/ca). Keys are EC P-256, written with mode 0600.
# NAME is 1-64 characters of A-Z a-z 0-9 . _ - (a node's or an operator's name); an operator may not be
# named cluster (an operators file gives that name's role to holders of the cluster secret). The CA is
# made with pathlen:0: a CA certificate it signed could otherwise sign member certificates of its own.
set -eu

usage() {
    sed -n '4,6p' "$0" | sed 's/^# *//' >&2
    exit 64
}

[ $# -ge 2 ] || usage
dir=$1
kind=$2
name=${3:-}
days=${DAYS:-365}
ca_days=${CA_DAYS:-3650}
ca=${CA:-$dir/ca}
mkdir -p "$dir"
umask 077

check_name() {
    case $1 in
        '' | *[!A-Za-z0-9._-]*) echo "error: \"$1\" is not a name: 1-64 characters of A-Z a-z 0-9 . _ -" >&2; exit 64 ;;
    esac
    [ ${#1} -le 64 ] || { echo "error: \"$1\" is longer than 64 characters" >&2; exit 64; }
}

case $kind in
    ca)
        cn=${name:-cordis-ca}
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$dir/ca.key"
        openssl req -x509 -new -key "$dir/ca.key" -subj "/CN=$cn" -days "$ca_days" -sha256 \
            -addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" \
            -out "$dir/ca.pem"
        chmod 644 "$dir/ca.pem"
        echo "$dir/ca.pem"
        ;;
    node | operator)
        check_name "$name"
        if [ "$kind" = operator ] && [ "$name" = cluster ]; then
            echo "error: cluster is reserved: an operators file gives its role to holders of the cluster secret" >&2
            exit 64
        fi
        if [ ! -f "$ca.key" ] || [ ! -f "$ca.pem" ]; then
            echo "error: no CA at $ca.key and $ca.pem (run: $0 $dir ca)" >&2
            exit 66
        fi
        base="$dir/$kind-$name"
        if [ "$kind" = node ]; then usage_ext="serverAuth,clientAuth"; else usage_ext="clientAuth"; fi
        ext=$(mktemp)
        trap 'rm -f "$ext" "$base.csr"' EXIT
        printf '%s\n' "basicConstraints=critical,CA:FALSE" "keyUsage=critical,digitalSignature" \
            "extendedKeyUsage=$usage_ext" "subjectAltName=URI:cordis://$kind/$name" > "$ext"
        openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$base.key"
        openssl req -new -key "$base.key" -subj "/CN=$name" -out "$base.csr"
        openssl x509 -req -in "$base.csr" -CA "$ca.pem" -CAkey "$ca.key" -CAcreateserial -days "$days" -sha256 \
            -extfile "$ext" -out "$base.pem" 2>/dev/null
        chmod 644 "$base.pem"
        echo "$base.pem"
        ;;
    *)
        usage
        ;;
esac
