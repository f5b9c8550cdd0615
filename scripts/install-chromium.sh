#!/usr/bin/env bash
# Installs Debian's Chromium (and fonts, so screenshots are legible) for the headless Web UI
# test, test/e2e/web-ui.test.ts. Playwright's own browser download cannot reach its CDN from
# this project's machines, so the browser comes from apt and playwright-core drives it.
# Idempotent and safe to run concurrently: a lock makes later callers (the test's beforeAll)
# wait for the first install (started in the background by scripts/prefetch-tools.mjs).
set -euo pipefail
CHROMIUM=/usr/bin/chromium
PACKAGES=(chromium fonts-liberation fonts-dejavu-core)
say() { echo "install-chromium: $*" >&2; }
# --version runs the real binary, so a half-unpacked install does not count as installed.
# (Debian's launcher prints a harmless shell warning on some /dev/shm layouts: discarded.)
works() { [ -x "$CHROMIUM" ] && "$CHROMIUM" --version >/dev/null 2>&1; }

if [ "$(id -u)" -ne 0 ]; then
  # Only root installs, so without root there is nothing to wait for, and no lock to take
  # (root's lock file is not writable by others).
  works && exit 0
  say "$CHROMIUM is missing and installing it needs root. Run once: sudo apt-get update && sudo apt-get install -y --no-install-recommends ${PACKAGES[*]}"
  exit 1
fi

# Chromium is a system package, so the lock is machine-wide, not per checkout.
# shellcheck source=machine-lock.sh
source "$(dirname "$0")/machine-lock.sh"
machine_lock chromium
works && exit 0

if ! command -v apt-get >/dev/null; then
  say "$CHROMIUM is missing and apt-get is not available: install Chromium with this system's package manager so that $CHROMIUM runs it."
  exit 1
fi

say "installing ${PACKAGES[*]} with apt (first run only; about 20 s here)..."
export DEBIAN_FRONTEND=noninteractive
# Wait for (rather than fail on) another apt/dpkg run holding dpkg's own lock.
apt_opts=(-q -y -o DPkg::Lock::Timeout=600)
# The package lists may be stale on a long-lived machine (old versions are gone from the
# mirror), so they are refreshed first; this runs only while Chromium is missing.
apt-get "${apt_opts[@]}" update >/dev/null || { say "apt-get update failed (see above): Debian's package mirror must be reachable."; exit 1; }
# Recommends (upower, udev, notification daemons, printer settings) are for desktops.
apt-get "${apt_opts[@]}" install --no-install-recommends "${PACKAGES[@]}" >/dev/null || { say "apt-get install ${PACKAGES[*]} failed (see above)."; exit 1; }
works || { say "installed, but $CHROMIUM --version fails."; exit 1; }
say "installed $("$CHROMIUM" --version 2>/dev/null)"
