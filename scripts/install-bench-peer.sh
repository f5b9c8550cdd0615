#!/usr/bin/env bash
# Installs what `npm run bench:peer` needs beyond the project's own tree: Node 24
# (install-node24.sh) and the peer's packages (bench/peer/package-lock.json, exactly as
# locked, into the git-ignored bench/peer/node_modules with that Node's npm, so the peer's
# @temporalio/* 1.23.0 and `ai` never enter the project's dependency tree). Prints the node
# path on success; idempotent (a marker holds the installed lock's sha256); a lock makes
# concurrent callers (the test prefetch and the smoke test) wait for the first.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
node="$(bash "$root/scripts/install-node24.sh")"
peer="$root/bench/peer"
exec 9>"$peer/.install.lock"
flock 9
want="$(sha256sum "$peer/package-lock.json" | cut -d' ' -f1)"
marker="$peer/node_modules/.forkflow-lock-sha256"
if [ "$(cat "$marker" 2>/dev/null)" != "$want" ]; then
  echo "install-bench-peer: installing bench/peer's packages as locked..." >&2
  # Node 24's own npm, so the peer's engines (>= 22.12) are met by the Node it runs under.
  # `npm install` against the lock rather than `npm ci`, for the reason scripts/bootstrap.mjs
  # gives (this registry's locks lack other platforms' optional binaries, which `npm ci`
  # rejects); the check after it makes sure nothing was re-resolved.
  (cd "$peer" && PATH="$(dirname "$node"):$PATH" "$node" "$(dirname "$node")/../lib/node_modules/npm/bin/npm-cli.js" install --no-audit --no-fund --loglevel=error >&2)
  if [ "$(sha256sum "$peer/package-lock.json" | cut -d' ' -f1)" != "$want" ]; then
    echo "install-bench-peer: bench/peer/package-lock.json changed during install: its package.json and lock disagree" >&2
    exit 1
  fi
  echo "$want" > "$marker"
fi
echo "$node"
