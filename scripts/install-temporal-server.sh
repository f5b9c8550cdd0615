#!/usr/bin/env bash
# Builds the self-hosted Temporal stack's binaries, pinned, into the git-ignored
# .tools/temporal-server-<version>/ for `npm run stack` (scripts/stack/):
#   temporal-server     go.temporal.io/server/cmd/server
#   temporal-sql-tool   go.temporal.io/server/cmd/tools/sql (creates and updates the schemas)
#   temporal-ui-server  github.com/temporalio/ui-server/v2/cmd/server (the Web UI)
#   schema/postgresql/  the server's versioned PostgreSQL schemas, for the SQL tool
# No prebuilt binary is reachable from this project's registries, so they are built with
# the local Go from the Go module proxy: about 4 minutes the first time on 2 idle cores, seconds
# later (Go's build cache). Pins are the newest releases the local toolchain accepts
# (server v1.32.2 and UI server v2.56+ need a newer Go than 1.26.8).
# Prints progress on stderr; safe to run concurrently: a lock makes later callers wait.
set -euo pipefail
SERVER_VERSION=v1.32.1
UI_VERSION=v2.55.0
root="$(cd "$(dirname "$0")/.." && pwd)"
dir="$root/.tools/temporal-server-$SERVER_VERSION"
mkdir -p "$dir"
exec 9>"$dir/.install.lock"
flock 9
say() { echo "install-temporal-server: $*" >&2; }
# Each binary runs, so a truncated file does not count as installed.
installed() {
  [ -x "$dir/temporal-server" ] && "$dir/temporal-server" --help >/dev/null 2>&1 &&
    [ -x "$dir/temporal-sql-tool" ] && "$dir/temporal-sql-tool" --help >/dev/null 2>&1 &&
    [ -x "$dir/temporal-ui-server" ] && [ -f "$dir/schema/postgresql/v12/temporal/versioned/v1.0/manifest.json" ]
}
installed && exit 0
command -v go >/dev/null || { say "Go is needed to build the Temporal server $SERVER_VERSION"; exit 1; }
export GOTOOLCHAIN=local CGO_ENABLED=0 GOFLAGS=-mod=mod
modDir() { go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p'; }

server_src="$(modDir "go.temporal.io/server@$SERVER_VERSION")"
[ -n "$server_src" ] || { say "could not download go.temporal.io/server@$SERVER_VERSION"; exit 1; }
build() { # <module dir> <package> <output name>
  say "building $3 (first run only; minutes)..."
  (cd "$1" && go build -trimpath -ldflags "-s -w" -o "$dir/$3.partial" "$2")
  mv "$dir/$3.partial" "$dir/$3"
}
[ -x "$dir/temporal-server" ] || build "$server_src" ./cmd/server temporal-server
[ -x "$dir/temporal-sql-tool" ] || build "$server_src" ./cmd/tools/sql temporal-sql-tool
if [ ! -x "$dir/temporal-ui-server" ]; then
  ui_src="$(modDir "github.com/temporalio/ui-server/v2@$UI_VERSION")"
  [ -n "$ui_src" ] || { say "could not download github.com/temporalio/ui-server/v2@$UI_VERSION"; exit 1; }
  build "$ui_src" ./cmd/server temporal-ui-server
fi
rm -rf "$dir/schema.partial" && mkdir -p "$dir/schema.partial"
cp -R "$server_src/schema/postgresql" "$dir/schema.partial/"
chmod -R u+w "$dir/schema.partial"
rm -rf "$dir/schema" && mv "$dir/schema.partial" "$dir/schema"
installed || { say "built, but a binary does not run"; exit 1; }
