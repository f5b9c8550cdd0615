#!/usr/bin/env bash
# Installs versitygw, an S3-compatible gateway, pinned, into the git-ignored
# .tools/versitygw-<version>/: the S3 storage test (test/e2e/s3-payloads.test.ts) serves a
# bucket from a temp folder with it, so the S3 driver is tested against a real S3 server
# offline. No prebuilt binary is reachable from this project's registries, so it is built
# from the Go module proxy (a couple of minutes, once per machine), like install-compose.sh.
# Prints nothing on success; safe to run concurrently: a lock makes later callers wait for
# the first build.
set -euo pipefail
VERSION=v1.8.0
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.tools/versitygw-$VERSION"
dest="$dir/versitygw"
mkdir -p "$dir"
exec 9>"$dir/.install.lock"
flock 9
# --version runs the binary, so a truncated file does not count as installed.
if [ -x "$dest" ] && "$dest" --version >/dev/null 2>&1; then exit 0; fi
command -v go >/dev/null || { echo "install-versitygw: Go is needed to build versitygw $VERSION" >&2; exit 1; }
echo "install-versitygw: building versitygw $VERSION from the Go module proxy (first run only)..." >&2
src="$(GOTOOLCHAIN=local go mod download -json "github.com/versity/versitygw@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[ -n "$src" ] || { echo "install-versitygw: could not download github.com/versity/versitygw@$VERSION" >&2; exit 1; }
(cd "$src" && GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w -X main.Version=$VERSION" -o "$dest.partial" ./cmd/versitygw)
mv "$dest.partial" "$dest"
