#!/usr/bin/env bash
# The certificates of the TLS track (wss://), made with the openssl CLI into build/tls/
# (never tracked; the CA never enters any system trust store):
#   ca.pem, ca.key                 the wsbench test CA (ECDSA P-256): the one CA clients trust
#   server.pem, server.key         default server certificate, ECDSA P-256, signed by the CA,
#                                  SANs IP:127.0.0.1, IP:::1, DNS:localhost
#   server-rsa.pem, server-rsa.key the same names with an RSA-2048 key
#   untrusted-ca.pem, .key         a second CA that no client trusts
#   untrusted.pem, .key            right names, signed by the untrusted CA
#   wrong-host.pem, .key           signed by the CA, for DNS:wrong.invalid only
#   expired.pem, .key              signed by the CA, right names, valid 2020-01-01 to 2020-01-02
#   manifest.json                  these files and what each is for (read by the harness)
# Idempotent: a stamp keyed by this script and the openssl version; redone when a file is
# missing or the default certificate expires within 30 days.
set -euo pipefail
STEP_NAME=setup-tls
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

TLS=$ROOT/build/tls
LOG=$LOGS/tls.log
SANS="IP:127.0.0.1,IP:::1,DNS:localhost"
FILES=(ca.pem ca.key server.pem server.key server-rsa.pem server-rsa.key untrusted-ca.pem
       untrusted-ca.key untrusted.pem untrusted.key wrong-host.pem wrong-host.key expired.pem
       expired.key manifest.json)

command -v openssl >/dev/null 2>&1 || {
    echo "setup-tls: missing: openssl (install: apt-get install openssl)" >&2
    exit 1
}

all_there() {
    local f
    for f in "${FILES[@]}"; do [[ -s $TLS/$f ]] || return 1; done
    openssl x509 -in "$TLS/server.pem" -noout -checkend $((30 * 86400)) >/dev/null 2>&1
}

key=$(printf '%s %s' "$(hash_of "${BASH_SOURCE[0]}")" "$(openssl version)")
if stamp_is tls "$key" && all_there; then
    exit 0
fi

ossl() { quietly tls "make the TLS certificates" openssl "$@"; }

# new_key FILE ec|rsa
new_key() {
    if [[ $2 == rsa ]]; then
        ossl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1"
    else
        ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"
    fi
    chmod 600 "$1"
}

# new_ca NAME CN: a self-signed CA certificate NAME.pem with key NAME.key, 10 years.
new_ca() {
    new_key "$WORK/$1.key" ec
    ossl req -x509 -new -key "$WORK/$1.key" -sha256 -days 3650 -subj "/O=wsbench/CN=$2" \
        -addext "basicConstraints=critical,CA:TRUE" \
        -addext "keyUsage=critical,keyCertSign,cRLSign" \
        -addext "subjectKeyIdentifier=hash" -out "$WORK/$1.pem"
    mkdir -p "$WORK/db-$1"
    : >"$WORK/db-$1/index.txt"
    openssl rand -hex 16 >"$WORK/db-$1/serial"
}

# The signing configuration of `openssl ca` (which, unlike `openssl x509 -req` in OpenSSL
# 3.0, takes a start and an end date: the expired certificate needs both in the past).
write_ca_config() {
    cat >"$WORK/ca.cnf" <<'EOF'
[ca]
default_ca = signer
[signer]
database = $ENV::DB/index.txt
serial = $ENV::DB/serial
new_certs_dir = $ENV::DB
default_md = sha256
policy = anything
unique_subject = no
copy_extensions = none
email_in_dn = no
[anything]
commonName = supplied
organizationName = optional
[leaf]
basicConstraints = critical,CA:FALSE
keyUsage = $ENV::KEY_USAGE
extendedKeyUsage = serverAuth
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
subjectAltName = $ENV::LEAF_SANS
EOF
}

# leaf NAME KEYTYPE CA SANS CN [START END]: NAME.pem/NAME.key signed by CA; 825 days from
# now, or from START to END (YYYYMMDDHHMMSSZ).
leaf() {
    local name=$1 type=$2 ca=$3 cn=$5 dates
    export DB=$WORK/db-$ca LEAF_SANS=$4 KEY_USAGE=critical,digitalSignature
    [[ $type != rsa ]] || KEY_USAGE+=",keyEncipherment"
    new_key "$WORK/$name.key" "$type"
    ossl req -new -key "$WORK/$name.key" -subj "/O=wsbench/CN=$cn" -out "$WORK/$name.csr"
    if (($# > 5)); then dates=(-startdate "$6" -enddate "$7"); else dates=(-days 825); fi
    ossl ca -batch -notext -config "$WORK/ca.cnf" -extensions leaf \
        -cert "$WORK/$ca.pem" -keyfile "$WORK/$ca.key" "${dates[@]}" \
        -in "$WORK/$name.csr" -out "$WORK/$name.pem"
    rm -f "$WORK/$name.csr"
}

write_manifest() {
    cat >"$WORK/manifest.json" <<EOF
{
  "comment": "made by scripts/setup-tls.sh; paths are relative to this directory",
  "ca": {"cert": "ca.pem", "key": "ca.key", "key_type": "ECDSA P-256",
         "purpose": "the wsbench test CA: the only CA a client trusts (NODE_EXTRA_CA_CERTS, deno --cert, loadgen --ca)"},
  "server": {"cert": "server.pem", "key": "server.key", "key_type": "ECDSA P-256", "issuer": "ca",
             "names": ["127.0.0.1", "::1", "localhost"], "purpose": "default server certificate"},
  "server-rsa": {"cert": "server-rsa.pem", "key": "server-rsa.key", "key_type": "RSA 2048", "issuer": "ca",
                 "names": ["127.0.0.1", "::1", "localhost"], "purpose": "server certificate with an RSA key (option)"},
  "untrusted-ca": {"cert": "untrusted-ca.pem", "key": "untrusted-ca.key", "key_type": "ECDSA P-256",
                   "purpose": "a second CA that no client trusts"},
  "untrusted": {"cert": "untrusted.pem", "key": "untrusted.key", "key_type": "ECDSA P-256", "issuer": "untrusted-ca",
                "names": ["127.0.0.1", "::1", "localhost"], "purpose": "failure set: a CA the client does not trust"},
  "wrong-host": {"cert": "wrong-host.pem", "key": "wrong-host.key", "key_type": "ECDSA P-256", "issuer": "ca",
                 "names": ["wrong.invalid"], "purpose": "failure set: the wrong host name"},
  "expired": {"cert": "expired.pem", "key": "expired.key", "key_type": "ECDSA P-256", "issuer": "ca",
              "names": ["127.0.0.1", "::1", "localhost"], "not_before": "2020-01-01T00:00:00Z",
              "not_after": "2020-01-02T00:00:00Z", "purpose": "failure set: an expired certificate"}
}
EOF
}

say "making the TLS certificates (build/tls: CA, ECDSA and RSA server certificates, failure set)"
: >"$LOG"
WORK=$(mktemp -d "$ROOT/build/tls-work.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
write_ca_config
new_ca ca "wsbench test CA"
new_ca untrusted-ca "wsbench untrusted CA"
leaf server ec ca "$SANS" localhost
leaf server-rsa rsa ca "$SANS" localhost
leaf untrusted ec untrusted-ca "$SANS" localhost
leaf wrong-host ec ca "DNS:wrong.invalid" wrong.invalid
leaf expired ec ca "$SANS" localhost 20200101000000Z 20200102000000Z
write_manifest
# every leaf chains as intended (the untrusted one to its own CA only)
for name in server server-rsa wrong-host; do
    ossl verify -CAfile "$WORK/ca.pem" "$WORK/$name.pem"
done
ossl verify -CAfile "$WORK/ca.pem" -no_check_time "$WORK/expired.pem"
ossl verify -CAfile "$WORK/untrusted-ca.pem" "$WORK/untrusted.pem"

rm -rf "$TLS"
mkdir -p "$TLS"
for f in "${FILES[@]}"; do cp -p "$WORK/$f" "$TLS/$f"; done
stamp_set tls "$key"
