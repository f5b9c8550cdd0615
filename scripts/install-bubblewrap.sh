#!/usr/bin/env bash
# Installs Debian's bubblewrap (0.8 or newer), the OS sandbox every fork runs its Bash
# commands in (src/activities/tools/sandbox/). Used by `npm start`, `npm test` and
# `npm run stack` (scripts/prefetch-tools.mjs starts it early) and by the sandbox tests,
# which wait for it; the Dockerfile installs the same package.
# Idempotent and safe to run concurrently: a machine-wide lock serialises installs.
# Without root, or without apt, it only says what to do: until then the worker refuses
# Bash (or, started with FORKFLOW_ALLOW_UNSANDBOXED=1, runs it without the sandbox).
set -euo pipefail
BWRAP=/usr/bin/bwrap
say() { echo "install-bubblewrap: $*" >&2; }
works() { [ -x "$BWRAP" ] && "$BWRAP" --version >/dev/null 2>&1; }

works && exit 0
if [ "$(id -u)" -ne 0 ]; then
  say "bubblewrap is missing and installing it needs root: sudo apt-get install -y bubblewrap (the sandbox stays off until then)"
  exit 1
fi
# shellcheck source=machine-lock.sh
source "$(dirname "$0")/machine-lock.sh"
machine_lock bubblewrap
works && exit 0
if ! command -v apt-get >/dev/null; then
  say "bubblewrap is missing and apt-get is not available: install it with this system's package manager"
  exit 1
fi
say "installing bubblewrap with apt (first run only)..."
export DEBIAN_FRONTEND=noninteractive
apt_opts=(-q -y -o DPkg::Lock::Timeout=600)
# Install from the current lists first; refresh them only if that fails (stale lists on a
# long-lived machine name versions the mirror no longer has).
if ! apt-get "${apt_opts[@]}" install --no-install-recommends bubblewrap >/dev/null 2>&1; then
  apt-get "${apt_opts[@]}" update >/dev/null || { say "apt-get update failed: Debian's package mirror must be reachable"; exit 1; }
  apt-get "${apt_opts[@]}" install --no-install-recommends bubblewrap >/dev/null || { say "apt-get install bubblewrap failed (see above)"; exit 1; }
fi
works || { say "installed, but $BWRAP --version fails"; exit 1; }
say "installed $("$BWRAP" --version)"
