#!/bin/sh
# Makes the certificates of a self-hosted stack's mutual TLS (docs/security-model.md): a CA of
# the stack's own and, signed by it, `server` (the Temporal frontend and internal services,
# for DNS:localhost, DNS:temporal and 127.0.0.1; also their client certificate to each other),
# `system` (Temporal's system worker), `client` (forkflow's workers, clients, CLI) and `ui`
# (the Web UI server). Valid for a year. The CA's key is deleted once they are issued: nothing
# else is ever signed by it. Idempotent: an existing set is kept (delete DIR to renew).
#
# Usage: make-certs.sh DIR            (npm run stack: DIR 0700, keys 0600, the operator's own)
#        make-certs.sh DIR container  (docker-compose.mtls.yml: a volume only the stack's
#                                      containers mount, whose users differ; keys readable there)
set -eu
dir=$1
mode=${2:-host}
names="server system client ui"
complete=yes
for f in ca.pem $(for n in $names; do echo "$n.pem $n.key"; done); do [ -f "$dir/$f" ] || complete=no; done
[ "$complete" = yes ] && exit 0
umask 077
mkdir -p "$dir"
chmod 700 "$dir"
cd "$dir"
ec="-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes"
# shellcheck disable=SC2086
openssl req -x509 $ec -keyout ca.key -out ca.pem -days 365 -subj "/O=forkflow stack/CN=forkflow stack CA" \
  -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign 2>/dev/null
for name in $names; do
  if [ "$name" = server ]; then
    usage="serverAuth,clientAuth"
    san="subjectAltName=DNS:localhost,DNS:temporal,IP:127.0.0.1"
  else
    usage="clientAuth"
    san=""
  fi
  printf 'basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=%s\n%s\n' "$usage" "$san" > "$name.ext"
  # shellcheck disable=SC2086
  openssl req -new $ec -keyout "$name.key" -out "$name.csr" -subj "/O=forkflow stack/CN=forkflow-$name" 2>/dev/null
  openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -out "$name.pem" -days 365 -extfile "$name.ext" 2>/dev/null
  rm -f "$name.csr" "$name.ext"
done
rm -f ca.key ca.srl
if [ "$mode" = container ]; then
  chmod 755 .
  chmod 444 ./*.pem ./*.key
fi
