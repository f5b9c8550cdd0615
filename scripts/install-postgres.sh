#!/usr/bin/env bash
# Installs Debian's PostgreSQL server for `npm run stack` (scripts/stack/), which keeps its
# data under .forkflow/stack/ and runs it as the `postgres` system user (PostgreSQL refuses
# to run as root). Prints the server's bin directory on stdout. Idempotent; a machine-wide
# lock serialises installs. Without root or apt it only says what to do.
set -euo pipefail
say() { echo "install-postgres: $*" >&2; }
# `|| true`: with pipefail a missing /usr/lib/postgresql made ls fail and set -e end the
# script silently (exit 2) exactly when PostgreSQL was to be installed.
found() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true; }
# The server's tools, not just a bin folder: postgresql-client alone makes one without initdb.
ready() { bin="$(found)"; [ -n "$bin" ] && [ -x "$bin/initdb" ] && [ -x "$bin/pg_ctl" ]; }
if ready; then echo "$bin"; exit 0; fi
if [ "$(id -u)" -ne 0 ]; then
  say "PostgreSQL is missing and installing it needs root: sudo apt-get install -y postgresql"
  exit 1
fi
command -v apt-get >/dev/null || { say "PostgreSQL is missing and apt-get is not available"; exit 1; }
# shellcheck source=machine-lock.sh
source "$(dirname "$0")/machine-lock.sh"
machine_lock postgres
if ! ready; then
  say "installing PostgreSQL with apt (first run only)..."
  export DEBIAN_FRONTEND=noninteractive
  apt_opts=(-q -y -o DPkg::Lock::Timeout=600)
  # The package starts a cluster of its own through the init system when there is one; the
  # stack does not use it (policy-rc.d stops it from starting where supported).
  if ! apt-get "${apt_opts[@]}" install --no-install-recommends postgresql >/dev/null 2>&1; then
    apt-get "${apt_opts[@]}" update >/dev/null || { say "apt-get update failed: Debian's package mirror must be reachable"; exit 1; }
    apt-get "${apt_opts[@]}" install --no-install-recommends postgresql >/dev/null || { say "apt-get install postgresql failed (see above)"; exit 1; }
  fi
  bin="$(found)"
fi
[ -n "$bin" ] && [ -x "$bin/initdb" ] || { say "installed, but no initdb under /usr/lib/postgresql/*/bin"; exit 1; }
echo "$bin"
