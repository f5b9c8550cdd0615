#!/usr/bin/env bash
# Installs the Docker Compose v2 CLI plugin, pinned, into the git-ignored .tools/docker, so
# `DOCKER_CONFIG=.tools/docker docker compose config` works on machines with only the docker
# client. No prebuilt compose binary is reachable from this project's registries, so it is
# built from the Go module proxy (a few minutes, once per machine). Safe to run
# concurrently: a lock makes later callers wait for the first build.
set -euo pipefail
VERSION=v2.39.4
root="$(cd "$(dirname "$0")/.." && pwd)"
plugins="$root/.tools/docker/cli-plugins"
dest="$plugins/docker-compose"
stamp="$plugins/.docker-compose-$VERSION"
mkdir -p "$plugins"
exec 9>"$root/.tools/docker/.install.lock"
flock 9
if [ -x "$dest" ] && [ -f "$stamp" ]; then exit 0; fi
command -v go >/dev/null || { echo "install-compose: Go is needed to build docker compose $VERSION" >&2; exit 1; }
echo "install-compose: building docker compose $VERSION from the Go module proxy (first run only)..." >&2
dir="$(go mod download -json "github.com/docker/compose/v2@$VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[ -n "$dir" ] || { echo "install-compose: could not download github.com/docker/compose/v2@$VERSION" >&2; exit 1; }
(cd "$dir" && GOFLAGS=-mod=mod go build -trimpath -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$VERSION" -o "$dest.partial" ./cmd)
mv "$dest.partial" "$dest"
touch "$stamp"
